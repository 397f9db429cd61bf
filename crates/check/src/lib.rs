//! `launchguard check`: runs a graph-replay workload with the user's own Python and PyTorch
//! (profiler off, on, and off again), analyzes the profiled trace, and judges the whole.
//!
//! The Python side ([`protocol::SCRIPT`]) only measures; every decision is made here.

pub mod checks;
pub mod compare;
pub mod model;
pub mod preset;
pub mod progress;
pub mod protocol;
pub mod runner;
pub mod selftest;
pub mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launchguard_analysis::config::Config;
use launchguard_analysis::{analyze, Analysis, Check, Options as AnalysisOptions, Verdict};
use launchguard_trace::Timeline;

pub use model::{CheckReport, PhaseReport, RankReport};
pub use preset::Workload;

/// The `record_function` name around each profiled replay.
pub const ANNOTATION: &str = "launchguard::replay";

/// What to run and how to judge it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workload.
    pub workload: Workload,
    /// Limits and settings (python, timeout, tp, thresholds).
    pub config: Config,
    /// Whether the interpreter was named by the user: then a missing one is an error, not a skip.
    pub python_explicit: bool,
    /// µs busy-waited before each replay, to test the guard.
    pub inject_delay_us: f64,
    /// The ranks that busy-wait (`None`: every rank).
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Copy the profiled trace here (`{rank}` or `.rankN` for several ranks).
    pub keep_trace: Option<PathBuf>,
    /// Show phase progress on stderr.
    pub progress: bool,
    /// Whether the user set occupancy limits (then no preset adjusts them).
    pub user_set_occupancy: bool,
    /// `launchguard.linkage/1` of the PyTorch about to run, computed by the caller.
    pub linkage: Option<serde_json::Value>,
    /// Checks computed by the caller (linkage policy), placed first.
    pub extra_checks: Vec<Check>,
}

/// A finished check: the report, and rank 0's timeline for the reports that draw it.
pub struct CheckRun {
    /// The result document.
    pub report: CheckReport,
    /// Rank 0's trace records.
    pub timeline: Option<Timeline>,
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
        tp: opts.config.check.tp,
        thresholds: opts.config.thresholds.clone(),
        linkage: opts.linkage.clone(),
        inventory: None,
        phases: BTreeMap::new(),
        analysis: None,
        ranks: Vec::new(),
        across: None,
        checks: opts.extra_checks.clone(),
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
    let tp = opts.config.check.tp.max(1);
    let workdir =
        tempfile::Builder::new().prefix("launchguard-check-").tempdir().map_err(runner::RunError::Setup)?;
    let request = runner::Request {
        python: &opts.config.check.python,
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
        timeout: Duration::from_secs(opts.config.check.timeout_s),
        progress: opts.progress,
        workdir: workdir.path(),
    };
    let outcome = match runner::run(request) {
        Ok(o) => o,
        Err(runner::RunError::Python { python, cause })
            if !opts.python_explicit && cause.kind() == std::io::ErrorKind::NotFound =>
        {
            let report = skipped(opts, format!("no Python interpreter '{python}' on this machine"));
            return Ok(CheckRun { report, timeline: None });
        }
        Err(e) => return Err(e.into()),
    };
    let mut report = base_report(opts);
    if let Some(skip) = outcome.results.iter().find(|r| r.status != "ok") {
        report.reason = Some(skip.reason.clone().unwrap_or_else(|| "the workload could not run here".into()));
        report.inventory = Some(skip.inventory.clone());
        return Ok(CheckRun { report, timeline: None });
    }

    let mut timeline = None;
    let mut ranks = Vec::new();
    let mut traces = Vec::new();
    for (result, trace_path) in outcome.results.iter().zip(&outcome.traces) {
        if let Some(keep) = &opts.keep_trace {
            keep_trace(trace_path, keep, result.rank, tp)?;
        }
        let trace = launchguard_trace::read(trace_path)?;
        let gpu_us = result.phases.get("before").and_then(|p| p.gpu_us_per_replay);
        let analysis = analyze_rank(&trace, opts, gpu_us)?;
        let phases: BTreeMap<String, PhaseReport> = result
            .phases
            .iter()
            .map(|(k, p)| {
                let report = PhaseReport::from_samples(p.host_us.clone(), p.gpu_us_per_replay);
                (k.clone(), report.with_steady(p.steady_host_us.clone()))
            })
            .collect();
        if tp > 1 {
            traces.push(trace);
        } else {
            timeline = Some(trace.timeline);
        }
        ranks.push(RankReport {
            rank: result.rank,
            device_index: result.inventory.device_index,
            phases,
            analysis: Some(analysis),
        });
    }
    let rank0 = &outcome.results[0];
    report.checks.push(checks::interception_layers(&rank0.inventory));
    report.inventory = Some(rank0.inventory.clone());
    report.timings = rank0.timings.clone();
    report.phases = ranks[0].phases.clone();
    report.analysis = ranks[0].analysis.clone();
    report.thresholds = ranks[0]
        .analysis
        .as_ref()
        .map(|a| effective_thresholds(a, opts, model::gpu_per_replay(&ranks[0].phases, "before")))
        .unwrap_or_else(|| opts.config.thresholds.clone());
    if tp > 1 {
        // The ranks together: waiting for peers kept apart from busy time, occupancy over the
        // window every rank was recorded in, the worst rank decides.
        let across = analyze_across(&traces, &report.thresholds)?;
        report.checks.extend(across.checks.iter().filter(|c| c.id != "replay_consistency").cloned());
        timeline = traces.into_iter().next().map(|t| t.timeline);
        report.across = Some(across);
    }
    for r in &ranks {
        let label = if tp > 1 { format!("rank {}: ", r.rank) } else { String::new() };
        let analysis = r.analysis.as_ref().expect("analyzed");
        if tp == 1 {
            // Trace checks, minus replay_consistency, which trace_sanity makes strict here.
            report.checks.extend(analysis.checks.iter().filter(|c| c.id != "replay_consistency").cloned());
        }
        let mut own = vec![
            checks::trace_sanity(analysis, opts.workload.replays),
            checks::launch_headroom(&r.phases, &opts.config.check, &label),
            checks::run_ahead(&r.phases, tp, &label),
            checks::residual_overhead(&r.phases, &opts.config.check, &label),
        ];
        if tp > 1 {
            for c in &mut own {
                c.id = format!("rank{}.{}", r.rank, c.id);
            }
        }
        report.checks.extend(own);
    }
    if tp > 1 {
        // Each rank's analysis is in `across`; keep its samples here.
        report.ranks = ranks.into_iter().map(|r| RankReport { analysis: None, ..r }).collect();
    }
    report.verdict = Verdict::of(&report.checks);
    report.timings.insert("wall_s".into(), started.elapsed().as_secs_f64());
    Ok(CheckRun { report, timeline })
}

fn analyze_across(
    traces: &[launchguard_trace::Trace],
    th: &launchguard_analysis::config::Thresholds,
) -> anyhow::Result<launchguard_analysis::model_ranks::RanksAnalysis> {
    use launchguard_analysis::ranks::{analyze_ranks, rank_of, RankTrace};
    let ids = traces.iter().map(rank_of).collect::<Result<Vec<_>, _>>()?;
    let ranks: Vec<RankTrace> = ids.iter().zip(traces).map(|(id, trace)| RankTrace { id, trace }).collect();
    Ok(analyze_ranks(&ranks, &AnalysisOptions { within: None, thresholds: th.clone() }))
}

fn effective_thresholds(
    a: &Analysis,
    opts: &Options,
    gpu_us: Option<f64>,
) -> launchguard_analysis::config::Thresholds {
    let th = preset::adjust_thresholds(
        &opts.workload.preset,
        a.replay_summary.kernels_mode,
        &opts.config.thresholds,
        opts.user_set_occupancy,
    );
    preset::adjust_for_tp(th, opts.config.check.tp, gpu_us, opts.user_set_occupancy)
}

fn analyze_rank(
    trace: &launchguard_trace::Trace,
    opts: &Options,
    gpu_us: Option<f64>,
) -> anyhow::Result<Analysis> {
    // First pass finds the graph's size; the limits that depend on it are then applied.
    let base = AnalysisOptions { within: None, thresholds: opts.config.thresholds.clone() };
    let mut analysis = analyze(trace, &base);
    let th = effective_thresholds(&analysis, opts, gpu_us);
    analysis.checks = launchguard_analysis::checks::trace_checks(&analysis, &th);
    analysis.verdict = Verdict::of(&analysis.checks);
    Ok(analysis)
}

fn keep_trace(from: &Path, to: &Path, rank: u32, tp: u32) -> anyhow::Result<()> {
    let text = to.display().to_string();
    let dest = if text.contains("{rank}") {
        PathBuf::from(text.replace("{rank}", &rank.to_string()))
    } else if tp > 1 {
        PathBuf::from(format!("{text}.rank{rank}"))
    } else {
        to.to_path_buf()
    };
    let dir = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::fs::copy(from, tmp.path())?;
    tmp.persist(&dest).map_err(|e| e.error)?;
    Ok(())
}
