//! `launchguard check`: runs a graph-replay workload with the user's own Python and PyTorch
//! (profiler off, on, and off again), measures, and has the judge judge the whole once.
//!
//! The flow, one way: the workload runs ([`runner`]); what it measured besides the trace (the
//! host samples, the inventory, the linkage) is written into each rank's trace as one context
//! event; each trace is read and measured exactly as `analyze` measures it; a baseline, if given,
//! is compared sample by sample; then `launchguard-judge` judges everything at once. So `analyze`
//! of a kept trace gives `check`'s verdict. The Python side ([`protocol::SCRIPT`]) only measures.

pub mod compare;
pub mod model;
pub mod preset;
pub mod progress;
pub mod protocol;
pub mod runner;
pub mod selftest;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launchguard_analysis::context::{PhaseReport, WorkloadContext, SCHEMA as CONTEXT_SCHEMA};
use launchguard_analysis::ranks::{analyze_ranks, rank_of, RankTrace};
use launchguard_analysis::{analyze, Options as MeasureOptions};
use launchguard_judge::{Settings, Verdict};
use launchguard_trace::{Timeline, Trace};

pub use model::{CheckReport, RankReport};
pub use preset::Workload;

/// The `record_function` name around each profiled replay.
pub const ANNOTATION: &str = "launchguard::replay";

/// What to run and how to judge it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workload.
    pub workload: Workload,
    /// Limits and settings (python, timeout, tp, thresholds), and which the user set.
    pub settings: Settings,
    /// Whether the interpreter was named by the user: then a missing one is an error, not a skip.
    pub python_explicit: bool,
    /// µs busy-waited before each replay, to test the guard.
    pub inject_delay_us: f64,
    /// The ranks that busy-wait (`None`: every rank).
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Copy each rank's profiled trace, with its context, here (several ranks: see [`kept_path`];
    /// gzip-compressed when it ends in `.gz`).
    pub keep_trace: Option<PathBuf>,
    /// Show phase progress on stderr.
    pub progress: bool,
    /// `launchguard.linkage/1` of the PyTorch about to run, computed by the caller, or why there
    /// is none.
    pub linkage: Result<serde_json::Value, String>,
    /// A baseline to compare this run with (`--baseline`).
    pub baseline: Option<CheckReport>,
}

/// A finished check: the report, and each rank's trace for the reports that draw them.
pub struct CheckRun {
    /// The result document.
    pub report: CheckReport,
    /// Each rank's trace (with its context event), in rank order; empty for a skip.
    pub traces: Vec<Trace>,
}

impl CheckRun {
    /// Rank 0's trace records.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.traces.first().map(|t| &t.timeline)
    }
}

/// Why `check` could not produce a verdict.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The workload failed.
    #[error(transparent)]
    Run(#[from] runner::RunError),
    /// The trace it wrote could not be read.
    #[error("the profiled trace is unusable: {0}")]
    Trace(#[from] launchguard_trace::TraceError),
    /// Anything else.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

fn base_report(opts: &Options) -> CheckReport {
    CheckReport {
        schema: model::SCHEMA.to_string(),
        launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
        verdict: Verdict::Skip,
        reason: None,
        workload: opts.workload.clone(),
        inject_delay_us: opts.inject_delay_us,
        inject_delay_ranks: opts.inject_delay_ranks.clone(),
        tp: opts.settings.config.check.tp,
        thresholds: opts.settings.config.thresholds.clone(),
        linkage: opts.linkage.as_ref().ok().cloned(),
        inventory: None,
        phases: BTreeMap::new(),
        analysis: None,
        ranks: Vec::new(),
        across: None,
        comparison: None,
        checks: Vec::new(),
        timings: BTreeMap::new(),
    }
}

/// A report whose verdict is `skip`, with the reason.
pub fn skipped(opts: &Options, reason: impl Into<String>) -> CheckReport {
    let mut r = base_report(opts);
    r.reason = Some(reason.into());
    r
}

/// Runs the check.
pub fn run(opts: &Options) -> Result<CheckRun, CheckError> {
    let started = Instant::now();
    let cfg = &opts.settings.config;
    let tp = cfg.check.tp.max(1);
    let workdir =
        tempfile::Builder::new().prefix("launchguard-check-").tempdir().map_err(runner::RunError::Setup)?;
    let request = runner::Request {
        python: &cfg.check.python,
        config: protocol::WorkloadConfig {
            schema: protocol::CONFIG_SCHEMA,
            workload: opts.workload.clone(),
            inject_delay_us: opts.inject_delay_us,
            inject_delay_ranks: opts.inject_delay_ranks.clone(),
            trace_path: String::new(),
            result_path: String::new(),
            annotation: ANNOTATION.to_string(),
        },
        tp,
        timeout: Duration::from_secs(cfg.check.timeout_s),
        progress: opts.progress,
        workdir: workdir.path(),
    };
    let outcome = match runner::run(request) {
        Ok(o) => o,
        Err(runner::RunError::Python { python, cause })
            if !opts.python_explicit && cause.kind() == std::io::ErrorKind::NotFound =>
        {
            let report = skipped(opts, format!("no Python interpreter '{python}' on this machine"));
            return Ok(CheckRun { report, traces: Vec::new() });
        }
        Err(e) => return Err(e.into()),
    };
    let mut report = base_report(opts);
    if let Some(skip) = outcome.results.iter().find(|r| r.status != "ok") {
        report.reason = Some(skip.reason.clone().unwrap_or_else(|| "the workload could not run here".into()));
        report.inventory = Some(skip.inventory.clone());
        return Ok(CheckRun { report, traces: Vec::new() });
    }

    // What each rank measured besides its trace goes into the trace, which is then read and
    // measured as `analyze` would.
    let mut traces = Vec::with_capacity(outcome.results.len());
    let mut ranks = Vec::with_capacity(outcome.results.len());
    for (result, raw) in outcome.results.iter().zip(&outcome.traces) {
        let phases: BTreeMap<String, PhaseReport> = result
            .phases
            .iter()
            .map(|(k, p)| {
                (
                    k.clone(),
                    PhaseReport::from_samples(
                        p.host_us.clone(),
                        p.steady_host_us.clone(),
                        p.gpu_us_per_replay,
                    ),
                )
            })
            .collect();
        let context = WorkloadContext {
            schema: CONTEXT_SCHEMA.to_string(),
            launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: opts.workload.clone(),
            tp,
            rank: result.rank,
            inject_delay_us: opts.inject_delay_us,
            inject_delay_ranks: opts.inject_delay_ranks.clone(),
            phases: phases.clone(),
            inventory: Some(result.inventory.clone()),
            linkage: opts.linkage.as_ref().ok().cloned(),
            linkage_problem: opts.linkage.as_ref().err().cloned(),
        };
        let with_context = workdir.path().join(format!("trace.context.rank{}.json", result.rank));
        write_with_context(raw, &with_context, &context)?;
        if let Some(keep) = &opts.keep_trace {
            keep_trace(&with_context, keep, result.rank, tp)?;
        }
        traces.push(launchguard_trace::read(&with_context)?);
        ranks.push(RankReport { rank: result.rank, device_index: result.inventory.device_index, phases });
    }
    let measure = MeasureOptions { gap_us: cfg.thresholds.gap_us, ..MeasureOptions::default() };
    let rank0 = &outcome.results[0];
    report.inventory = Some(rank0.inventory.clone());
    report.timings = rank0.timings.clone();
    report.phases = ranks[0].phases.clone();
    if tp > 1 {
        // The ranks together: waiting for peers kept apart from busy time, occupancy over the
        // window every rank was recorded in, the worst rank decides.
        let ids = traces.iter().map(rank_of).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::from)?;
        let rank_traces: Vec<RankTrace> =
            ids.iter().zip(&traces).map(|(id, trace)| RankTrace { id, trace }).collect();
        let figures = analyze_ranks(&rank_traces, &measure).map_err(anyhow::Error::from)?;
        let judged = launchguard_judge::ranks(figures, &opts.settings);
        report.thresholds = judged.ranks[0].analysis.limits.thresholds.clone();
        report.ranks = ranks;
        report.across = Some(judged);
    } else {
        let figures = analyze(&traces[0], &measure).map_err(anyhow::Error::from)?;
        let judged = launchguard_judge::analysis(figures, &opts.settings);
        report.thresholds = judged.limits.thresholds.clone();
        report.analysis = Some(judged);
    }
    report.comparison = opts.baseline.as_ref().map(|b| compare::compare(b, &report, &cfg.compare, false));
    let (checks, verdict) = match (&report.across, &report.analysis) {
        (Some(r), _) => (&r.checks, r.verdict),
        (None, Some(a)) => (&a.checks, a.verdict),
        (None, None) => unreachable!("one of them was just set"),
    };
    let (checks, verdict) =
        launchguard_judge::with_comparison(checks.clone(), verdict, report.comparison.as_ref());
    report.checks = checks;
    report.verdict = verdict;
    report.timings.insert("wall_s".into(), started.elapsed().as_secs_f64());
    Ok(CheckRun { report, traces })
}

/// Writes `raw` with `context` as a metadata event to `to`.
fn write_with_context(raw: &Path, to: &Path, context: &WorkloadContext) -> anyhow::Result<()> {
    let event = context.to_event()?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(to)?);
    launchguard_trace::splice::append_events(raw, &[event], &mut out)?;
    out.flush()?;
    Ok(())
}

/// Where rank `rank`'s kept trace goes: `{rank}` in the path replaced, else with several ranks
/// `.rankN` before the `.json` / `.json.gz` extension (so that `analyze DIR` finds the ranks), or
/// at the end when there is none.
pub fn kept_path(to: &Path, rank: u32, tp: u32) -> PathBuf {
    let text = to.display().to_string();
    if text.contains("{rank}") {
        return PathBuf::from(text.replace("{rank}", &rank.to_string()));
    }
    if tp <= 1 {
        return to.to_path_buf();
    }
    for ext in [".json.gz", ".json"] {
        if let Some(stem) = text.strip_suffix(ext) {
            return PathBuf::from(format!("{stem}.rank{rank}{ext}"));
        }
    }
    PathBuf::from(format!("{text}.rank{rank}"))
}

/// Copies a trace (with its context) to where the user asked, atomically; gzip-compressed when
/// the path ends in `.gz`.
fn keep_trace(from: &Path, to: &Path, rank: u32, tp: u32) -> anyhow::Result<()> {
    let dest = kept_path(to, rank, tp);
    let dir = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    // tempfile creates 0600 files; a kept trace is for others to read too (CI artifacts).
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir)?;
    let mut input = std::fs::File::open(from)?;
    if dest.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz")) {
        let mut gz = flate2::write::GzEncoder::new(tmp.as_file_mut(), flate2::Compression::default());
        std::io::copy(&mut input, &mut gz)?;
        gz.finish()?;
    } else {
        std::io::copy(&mut input, tmp.as_file_mut())?;
    }
    tmp.persist(&dest).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_ranks_are_named_so_that_a_folder_holds_them() {
        let p = |s: &str, rank, tp| kept_path(Path::new(s), rank, tp).display().to_string();
        assert_eq!(p("out/t.json.gz", 0, 1), "out/t.json.gz");
        assert_eq!(p("out/t.json.gz", 1, 2), "out/t.rank1.json.gz");
        assert_eq!(p("out/t.json", 0, 2), "out/t.rank0.json");
        assert_eq!(p("out/trace", 3, 4), "out/trace.rank3");
        assert_eq!(p("out/r{rank}/t.json", 1, 2), "out/r1/t.json");
    }
}
