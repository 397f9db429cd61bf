//! `launchguard check`: runs a graph-replay workload with the user's own Python and PyTorch
//! (profiler off, on, and off again), measures, and has the judge judge the whole once.
//!
//! The flow, one way: the workload runs ([`runner`]); what it measured besides the trace (the
//! host samples, the inventory, the linkage) is written into each rank's trace as one context
//! event; each trace is read and measured exactly as `analyze` measures it; a baseline, if given,
//! is compared sample by sample; then `launchguard-judge` judges everything at once. So `analyze`
//! of a kept trace gives `check`'s verdict. The Python side ([`protocol::SCRIPT`]) only measures.

pub mod compare;
pub mod launcher;
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
use launchguard_analysis::Options as MeasureOptions;
use launchguard_judge::{CheckId, Settings, Verdict};
use launchguard_pipeline::{Drawing, Judged, Keep, ReadOptions};

pub use model::{CheckReport, RankReport};
pub use preset::Workload;

/// The `record_function` name around each profiled replay.
pub const ANNOTATION: &str = "launchguard::replay";

/// What to run and how to judge it.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The workload.
    pub workload: Workload,
    /// Limits and settings (python, timeout, tp, thresholds), and which the user set.
    pub settings: Settings,
    /// Whether the interpreter was named by the user: then a missing one is an error, not a skip.
    pub python_explicit: bool,
    /// µs busy-waited before each replay, to test the guard.
    pub inject_delay_us: f64,
    /// The delay is busy-waited before every this-many-th launch of each phase (1: every one).
    pub inject_every: u32,
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
    /// This process is one rank of a run a launcher started.
    pub launched: Option<Launched>,
    /// How the traces the workload wrote are read (the `[input]` caps).
    pub read: ReadOptions,
    /// Measure the spans the drawing reports need (`--html`, `--csv`, `--annotate-trace`).
    pub keep: Keep,
}

/// A finished check: the report, and the spans of each rank's trace for the reports that draw
/// them.
pub struct CheckRun {
    /// The result document.
    pub report: CheckReport,
    /// The spans measured in the traces, when [`CheckOptions::keep`] asked for them; `None` for a skip.
    pub drawing: Option<Drawing>,
    /// This process is a rank other than 0 of a launched run: its results are handed over, rank 0
    /// judges the run (`report.reason` says where).
    pub delegated: bool,
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

fn base_report(opts: &CheckOptions) -> CheckReport {
    CheckReport {
        schema: model::SCHEMA.to_string(),
        launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
        verdict: Verdict::Skip,
        reason: None,
        workload: opts.workload.clone(),
        inject_delay_us: opts.inject_delay_us,
        inject_every: opts.inject_every,
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
pub fn skipped(opts: &CheckOptions, reason: impl Into<String>) -> CheckReport {
    let mut r = base_report(opts);
    r.reason = Some(reason.into());
    r
}

/// Runs the check: every rank here (`--tp N` on this host), or this process's rank of a run a
/// launcher started ([`CheckOptions::launched`]). When the judge finds the profiled trace damaged
/// (`trace_sanity`: the profiler lost replays or kernels; `trace_damage`: lost events, impossible
/// causality), the workload runs once more in a fresh process and that run is judged, its report
/// saying why.
pub fn run(opts: &CheckOptions) -> Result<CheckRun, CheckError> {
    if let Some(l) = &opts.launched {
        return run_launched(opts, l);
    }
    let started = Instant::now();
    let first = run_here(opts, started, None)?;
    match damaged(&first.report) {
        Some(why) => run_here(opts, started, Some(why)),
        None => Ok(first),
    }
}

/// Why a judged run's profiled trace cannot be trusted, in words for the report, or `None`: it
/// did not record the replays that ran (`trace_sanity` fails), or the judge found it damaged
/// (`trace_damage`: lost events, impossible causality; the verdict is `inconclusive`).
fn damaged(report: &CheckReport) -> Option<String> {
    if report.verdict == Verdict::Skip {
        return None;
    }
    let sanity = report
        .checks
        .iter()
        .find(|c| c.id == CheckId::TraceSanity && c.status == launchguard_judge::Status::Fail)
        .map(|c| c.message.as_str());
    let damage = (report.verdict == Verdict::Inconclusive).then_some(report.reason.as_deref()).flatten();
    Some(format!(
        "the first run's profiled trace was damaged ({}), so the workload ran again in a fresh process",
        sanity.or(damage)?
    ))
}

/// Every rank here, once; `retried` says why this is a second run.
fn run_here(opts: &CheckOptions, started: Instant, retried: Option<String>) -> Result<CheckRun, CheckError> {
    let tp = opts.settings.config.check.tp.max(1);
    let workdir = workdir()?;
    let outcome = match runner::run(request(opts, workdir.path(), None, None)) {
        Ok(o) => o,
        Err(e) => return skip_or_fail(opts, e),
    };
    if let Some(skip) = skip_of(opts, &outcome) {
        return Ok(skip);
    }
    // What each rank measured besides its trace goes into the trace, which is then read and
    // measured as `analyze` would.
    let mut paths = Vec::with_capacity(outcome.results.len());
    for (result, raw) in outcome.results.iter().zip(&outcome.traces) {
        let with_context = workdir.path().join(format!("trace.context.rank{}.json", result.rank));
        let mut context = context_of(opts, result, tp);
        context.retried.clone_from(&retried);
        write_with_context(raw, &with_context, &context)?;
        if let Some(keep) = &opts.keep_trace {
            keep_trace(&with_context, keep, result.rank, tp)?;
        }
        paths.push(with_context);
    }
    judge_traces(&paths, opts, started)
}

/// This process's rank of a run a launcher started: its workload runs here, its trace (with its
/// context) goes to the run's folder, and rank 0 waits for every rank's, then judges them all as
/// `--tp N` would. The other ranks return [`CheckRun::delegated`].
fn run_launched(opts: &CheckOptions, l: &Launched) -> Result<CheckRun, CheckError> {
    let started = Instant::now();
    let me = l.rank;
    let rendezvous = launcher::Rendezvous::new(&l.out, &l.run_id, me).map_err(anyhow::Error::from)?;
    rendezvous.claim().map_err(anyhow::Error::from)?;
    let fail = |why: String| {
        rendezvous.failed(&why);
        CheckError::Other(anyhow::anyhow!(why))
    };
    // While the workload runs: a heartbeat for the other ranks, and a stop when one of them
    // failed or stopped answering (a collective would wait for it forever), or the launcher
    // asked this process to end.
    let last_beat = std::cell::Cell::new(Instant::now());
    let stop = || -> Option<String> {
        if let Some(signal) = l.terminated.as_ref().and_then(|t| t()) {
            return Some(format!("{signal}; {}", rendezvous.others()));
        }
        if last_beat.get().elapsed() < launcher::HEARTBEAT_EVERY {
            return None;
        }
        last_beat.set(Instant::now());
        let _ = rendezvous.heartbeat();
        rendezvous.broken()
    };
    let workdir = workdir()?;
    let outcome = match runner::run(request(opts, workdir.path(), Some(me), Some(&stop))) {
        Ok(o) => o,
        Err(e) => {
            let who = format!("rank {}", me.rank);
            return match skip_or_fail(opts, e) {
                Ok(skip) => {
                    rendezvous
                        .failed(&format!("{who} skipped: {}", skip.report.reason.as_deref().unwrap_or("")));
                    Ok(skip)
                }
                // torch's own complaint about the missing variable says less than ours.
                Err(e) => Err(fail(l.unset.clone().unwrap_or_else(|| format!("{e:#}")))),
            };
        }
    };
    if let Some(skip) = skip_of(opts, &outcome) {
        rendezvous.failed(&format!(
            "rank {} skipped: {}",
            me.rank,
            skip.report.reason.as_deref().unwrap_or("")
        ));
        return Ok(skip);
    }
    if let Some(unset) = &l.unset {
        return Err(fail(unset.clone()));
    }
    let (result, raw) = (&outcome.results[0], &outcome.traces[0]);
    let with_context = workdir.path().join("trace.context.json");
    write_with_context(raw, &with_context, &context_of(opts, result, me.world))
        .map_err(|e| fail(format!("{e:#}")))?;
    if let Some(keep) = &opts.keep_trace {
        keep_trace(&with_context, keep, me.rank, me.world)?;
    }
    keep_trace(&with_context, &rendezvous.trace_path(me.rank), me.rank, 1)
        .map_err(|e| fail(format!("{e:#}")))?;
    rendezvous.done(result.session.clone()).map_err(anyhow::Error::from)?;
    if me.rank != 0 {
        let mut report = base_report(opts);
        report.reason = Some(format!(
            "rank {} of {}: its trace is in {}; rank 0 judges the run",
            me.rank,
            me.world,
            rendezvous.dir().display()
        ));
        return Ok(CheckRun { report, drawing: None, delegated: true });
    }
    let traces = rendezvous
        .wait_all(result.session.as_deref(), l.wait, Duration::from_millis(200))
        .map_err(|e| CheckError::Other(anyhow::anyhow!("{e}")))?;
    judge_traces(&traces, opts, started)
}

/// A rank of a run started by a launcher, and where the ranks meet.
#[derive(Clone)]
pub struct Launched {
    /// This process's rank.
    pub rank: runner::LaunchedRank,
    /// The folder every rank can reach.
    pub out: PathBuf,
    /// The run's id ([`launcher::run_id`]).
    pub run_id: String,
    /// How long rank 0 waits for the other ranks once its own rank is done.
    pub wait: Duration,
    /// The launcher's rendezvous that is missing (MASTER_ADDR, MASTER_PORT), said as the error
    /// the run ends with once this rank could run here: a rank without torch or a GPU skips
    /// whatever its rendezvous.
    pub unset: Option<String>,
    /// Whether the launcher asked this process to end (SIGTERM), with what to say.
    pub terminated: Option<std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>>,
}

impl std::fmt::Debug for Launched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launched")
            .field("rank", &self.rank)
            .field("out", &self.out)
            .field("run_id", &self.run_id)
            .finish()
    }
}

fn workdir() -> Result<tempfile::TempDir, CheckError> {
    Ok(tempfile::Builder::new().prefix("launchguard-check-").tempdir().map_err(runner::RunError::Setup)?)
}

/// The workload run to make here.
fn request<'a>(
    opts: &'a CheckOptions,
    workdir: &'a Path,
    launched: Option<runner::LaunchedRank>,
    stop: Option<&'a dyn Fn() -> Option<String>>,
) -> runner::Request<'a> {
    let cfg = &opts.settings.config;
    runner::Request {
        python: &cfg.check.python,
        config: protocol::WorkloadConfig {
            schema: protocol::CONFIG_SCHEMA,
            workload: opts.workload.clone(),
            inject_delay_us: opts.inject_delay_us,
            inject_every: opts.inject_every,
            inject_delay_ranks: opts.inject_delay_ranks.clone(),
            trace_path: String::new(),
            result_path: String::new(),
            annotation: ANNOTATION.to_string(),
        },
        tp: launched.map_or(cfg.check.tp.max(1), |l| l.world),
        timeout: Duration::from_secs(cfg.check.timeout_s),
        progress: opts.progress,
        workdir,
        launched,
        stop,
    }
}

/// A missing default interpreter is a skip (no Python here), anything else an error.
fn skip_or_fail(opts: &CheckOptions, e: runner::RunError) -> Result<CheckRun, CheckError> {
    match e {
        runner::RunError::Python { python, cause }
            if !opts.python_explicit && cause.kind() == std::io::ErrorKind::NotFound =>
        {
            let report = skipped(opts, format!("no Python interpreter '{python}' on this machine"));
            Ok(CheckRun { report, drawing: None, delegated: false })
        }
        e => Err(e.into()),
    }
}

/// The skip report when a rank could not run the workload here (no torch, no GPU).
fn skip_of(opts: &CheckOptions, outcome: &runner::Finished) -> Option<CheckRun> {
    let skip = outcome.results.iter().find(|r| r.status != "ok")?;
    let mut report = base_report(opts);
    report.reason = Some(skip.reason.clone().unwrap_or_else(|| "the workload could not run here".into()));
    report.inventory = Some(skip.inventory.clone());
    Some(CheckRun { report, drawing: None, delegated: false })
}

/// What a rank measured besides its trace.
fn context_of(opts: &CheckOptions, result: &protocol::WorkloadResult, tp: u32) -> WorkloadContext {
    let phases: BTreeMap<String, PhaseReport> = result
        .phases
        .iter()
        .map(|(k, p)| {
            (
                k.clone(),
                PhaseReport::from_samples(p.host_us.clone(), p.steady_host_us.clone(), p.gpu_us_per_replay)
                    .with_sync(p.sync_step_us.clone(), p.sync_gpu_us.clone()),
            )
        })
        .collect();
    WorkloadContext {
        schema: CONTEXT_SCHEMA.to_string(),
        launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: opts.workload.clone(),
        tp,
        rank: result.rank,
        inject_delay_us: opts.inject_delay_us,
        inject_every: opts.inject_every,
        retried: None,
        inject_delay_ranks: opts.inject_delay_ranks.clone(),
        phases,
        inventory: Some(result.inventory.clone()),
        linkage: opts.linkage.as_ref().ok().cloned(),
        linkage_problem: opts.linkage.as_ref().err().cloned(),
        timings: result.timings.clone(),
    }
}

/// Reads the ranks' traces (each with its context), measures and judges them as `analyze` does
/// (one judged run), then adds the baseline comparison: the check's report.
pub fn judge_traces(
    paths: &[PathBuf],
    opts: &CheckOptions,
    started: Instant,
) -> Result<CheckRun, CheckError> {
    let cfg = &opts.settings.config;
    let measure = MeasureOptions { gap_us: cfg.thresholds.gap_us, ..MeasureOptions::default() };
    let run = launchguard_pipeline::judge(paths, &opts.read, &measure, &opts.settings, opts.keep)
        .map_err(anyhow::Error::from)?;
    let mut report = base_report(opts);
    report.tp = paths.len() as u32;
    // Each rank's figures, holding the context it left in its trace.
    let figures: Vec<&launchguard_analysis::Analysis> = match &run.judged {
        Judged::Ranks(r) => {
            report.thresholds = r.ranks[0].analysis.limits.thresholds.clone();
            r.ranks.iter().map(|k| &k.analysis.figures).collect()
        }
        Judged::One(a) => {
            report.thresholds = a.limits.thresholds.clone();
            vec![&a.figures]
        }
    };
    // Each rank's samples and inventory, from the context it left in its trace.
    let mut ranks = Vec::new();
    for a in figures {
        let w = a
            .workload
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("{}: no launchguard context in the trace", a.source.path))?;
        ranks.push(RankReport {
            rank: w.rank,
            device_index: w.inventory.as_ref().and_then(|i| i.device_index),
            phases: w.phases.clone(),
        });
        if w.rank == 0 || report.inventory.is_none() {
            report.inventory = w.inventory.clone();
            report.timings = w.timings.clone();
            report.phases = w.phases.clone();
        }
    }
    // Why the judge found the run's traces damaged (a rank named), for the verdict line.
    let damage =
        (run.judged.verdict() == Verdict::Inconclusive).then(|| run.judged.reason().map(str::to_string));
    let (checks, verdict) = match run.judged {
        Judged::Ranks(r) => {
            report.ranks = ranks;
            let judged = (r.checks.clone(), r.verdict);
            report.across = Some(*r);
            judged
        }
        Judged::One(a) => {
            let judged = (a.checks.clone(), a.verdict);
            report.analysis = Some(*a);
            judged
        }
    };
    report.comparison = opts.baseline.as_ref().map(|b| compare::compare(b, &report, &cfg.compare, false));
    let (checks, verdict) = launchguard_judge::with_comparison(checks, verdict, report.comparison.as_ref());
    report.checks = checks;
    report.verdict = verdict;
    if verdict == Verdict::Inconclusive {
        report.reason = damage.flatten();
    }
    report.timings.insert("wall_s".into(), started.elapsed().as_secs_f64());
    Ok(CheckRun { report, drawing: run.drawing, delegated: false })
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
    let mut input = std::fs::File::open(from)?;
    let gzip = dest.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    launchguard_files::write_atomic_with(&dest, |w| {
        if gzip {
            let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::default());
            std::io::copy(&mut input, &mut gz)?;
            gz.finish()?;
        } else {
            std::io::copy(&mut input, w)?;
        }
        Ok(())
    })?;
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
