//! The one judge of launchguard. The analysis measures; this crate alone turns figures into
//! pass / warn / fail, for `analyze`, `check` and `compare` alike:
//!
//! 1. [`limits`]: the limits in force for a trace — the configured ones ([`config::Settings`])
//!    adapted to what the trace holds ([`limits::Context`]: graph replays or not, kernels and GPU
//!    time per replay, ranks, `check`'s workload), each adaptation stated;
//! 2. the checks: of a trace's figures ([`trace`]), of what `check` measured besides the trace
//!    ([`run`], from the trace's context event or from `check` itself), across ranks ([`ranks()`]),
//!    and of a comparison with a baseline ([`compare`]);
//! 3. the verdict: the worst status, `skip` with the reason when nothing is for the guard to
//!    judge, or `inconclusive` with the reason when the trace lost GPU events or its causality
//!    is impossible (docs/verdicts.md).
//!
//! Renderers read the judged documents ([`report`]) and recompute nothing.

pub mod compare;
pub mod config;
pub mod limits;
pub mod ranks;
pub mod report;
pub mod run;
pub mod section;
pub mod trace;
pub mod verdict;

use launchguard_analysis::model::Analysis;
use launchguard_analysis::model_ranks::RanksAnalysis;

pub use config::{Config, Settings};
pub use limits::{Context, Limits, Scope};
pub use report::{AnalysisReport, RankReport, RanksReport};
pub use verdict::{Check, CheckId, Status, Verdict};

/// Judges one trace's figures.
pub fn analysis(a: Analysis, settings: &Settings) -> AnalysisReport {
    judge_analysis(a, 1, settings)
}

/// Judges the ranks of one distributed run.
pub fn ranks(r: RanksAnalysis, settings: &Settings) -> RanksReport {
    ranks::judge(r, settings)
}

/// A run's checks and verdict with its comparison against a baseline added: the comparison's
/// checks follow, and a regression fails the run. A run with nothing to judge stays `skip`, one
/// whose trace lost events `inconclusive`.
pub fn with_comparison(
    mut checks: Vec<Check>,
    verdict: Verdict,
    comparison: Option<&compare::Comparison>,
) -> (Vec<Check>, Verdict) {
    let Some(c) = comparison else { return (checks, verdict) };
    checks.extend(c.checks());
    let verdict = match verdict {
        Verdict::Skip | Verdict::Inconclusive => verdict,
        _ => Verdict::of(&checks),
    };
    (checks, verdict)
}

/// One trace judged as one of `ranks` ranks.
pub(crate) fn judge_analysis(a: Analysis, ranks: u64, settings: &Settings) -> AnalysisReport {
    let Judged { limits, checks, verdict, reason } = judge_trace(&a, ranks, settings, None);
    AnalysisReport { figures: a, limits, checks, verdict, reason }
}

/// A trace's judgement.
pub(crate) struct Judged {
    limits: Limits,
    checks: Vec<Check>,
    verdict: Verdict,
    reason: Option<String>,
}

/// The checks and verdict of one trace; `occupancy` measures occupancy instead of the trace's
/// devices (a rank's time not spent waiting for peers).
pub(crate) fn judge_trace(
    a: &Analysis,
    ranks: u64,
    settings: &Settings,
    occupancy: Option<&dyn Fn(&Limits) -> Check>,
) -> Judged {
    let limits = Limits::new(&Context::of(a, ranks), settings);
    let mut checks = Vec::new();
    let (before, after) = match &a.workload {
        Some(ctx) => run::checks(a, ctx, &settings.config.linkage.forbid, &settings.config.check),
        None => (Vec::new(), Vec::new()),
    };
    checks.extend(before);
    checks.extend(trace::checks(a, &limits, occupancy));
    checks.extend(after);
    if ranks == 1 {
        checks.extend(ranks::alone(a));
    }
    let damage = trace::damage(a);
    if let Some(d) = &damage {
        checks.push(d.clone());
    }
    let nothing_judged =
        limits.context.scope == Scope::NoGraphReplays && a.workload.is_none() && !limits.exact;
    if let Some(d) = damage {
        return Judged { limits, checks, verdict: Verdict::Inconclusive, reason: Some(d.message) };
    }
    if nothing_judged {
        let reason = "no graph replay in the trace: launchguard judges graph replays (occupancy, gaps, launches and \
                      idle time of replayed CUDA/HIP graphs); the figures are shown; `thresholds.adapt = false` judges them anyway";
        return Judged { limits, checks, verdict: Verdict::Skip, reason: Some(reason.to_string()) };
    }
    let verdict = Verdict::of(&checks);
    Judged { limits, checks, verdict, reason: None }
}
