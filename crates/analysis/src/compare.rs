//! The figures of a comparison between a baseline run and a current one: per metric, the two
//! sides, the shift, and for per-replay samples a bootstrap interval of the shift of medians and
//! a Mann–Whitney test. Whether a shift is a regression is the judge's to say.
//!
//! Metrics (per rank when the runs have several):
//! - host cost per replay with the profiler off, before and after the profiler session: the raw
//!   per-replay samples (300 each in the presets);
//! - graph-launch duration: the per-replay `launch_us` of the profiled trace. Medians, not the
//!   mean the trace check reports: a few slow launches move the mean by 20% between healthy runs;
//! - GPU time per replay, before and after: one figure per run (device events over back-to-back
//!   replays), so no interval;
//! - occupancy of the profiled replays: one figure per run.

use serde::{Deserialize, Serialize};

use crate::stats::{self, Interval};

/// Which direction of a metric is a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Worse {
    /// A cost: higher is worse.
    Higher,
    /// A share of busy time: lower is worse.
    Lower,
}

/// How a metric was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Per-replay samples: Mann–Whitney U and a bootstrap interval of the difference of medians.
    MannWhitneyBootstrap,
    /// One figure per run.
    SingleValue,
}

/// One run's side of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Samples (1 for a single figure, 0 when not measured).
    pub n: usize,
    /// Median of the samples, or the single figure.
    pub median: Option<f64>,
}

/// The measured comparison of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricFigures {
    /// Stable identifier (`host_before`, `host_after`, `gpu_before`, `gpu_after`, `occupancy`,
    /// `graph_launch`).
    pub id: String,
    /// The rank it belongs to, in runs of several ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// What it is, in words.
    pub label: String,
    /// Unit of the values (`µs`, or empty for a fraction).
    pub unit: String,
    /// Which direction is a regression.
    pub worse: Worse,
    /// How it was compared.
    pub method: Method,
    /// The baseline.
    pub baseline: Side,
    /// The current run.
    pub current: Side,
    /// current − baseline (of the medians, for samples).
    pub shift: Option<f64>,
    /// shift / baseline.
    pub relative_shift: Option<f64>,
    /// Bootstrap interval of the shift (samples only).
    pub interval: Option<Interval>,
    /// Two-sided Mann–Whitney p-value (samples only).
    pub p_value: Option<f64>,
    /// Mann–Whitney U of the baseline sample (samples only).
    pub u: Option<f64>,
}

/// What one rank of a run measured, for a comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSamples {
    /// The rank (`None` for a run of one process).
    pub rank: Option<u64>,
    /// Host cost per replay, profiler never started.
    pub host_before: Vec<f64>,
    /// Host cost per replay after the profiler session.
    pub host_after: Vec<f64>,
    /// GPU time per replay before the profiler session.
    pub gpu_before: Option<f64>,
    /// GPU time per replay after it.
    pub gpu_after: Option<f64>,
    /// Occupancy of the profiled replays (the figure the judge judges).
    pub occupancy: Option<f64>,
    /// Graph-launch call durations of the profiled replays.
    pub launches: Vec<f64>,
}

/// How the bootstrap runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Resamples per metric.
    pub resamples: u32,
    /// Seed: the same inputs always give the same interval.
    pub seed: u64,
}

/// The metrics of `current` against `baseline`, rank by rank (ranks matched by number; a rank
/// missing on one side is compared against nothing and shows as not measured).
pub fn metrics(baseline: &[RunSamples], current: &[RunSamples], b: Bootstrap) -> Vec<MetricFigures> {
    let mut ranks: Vec<Option<u64>> = baseline.iter().chain(current).map(|r| r.rank).collect();
    ranks.sort();
    ranks.dedup();
    let empty = RunSamples::default();
    let mut out = Vec::new();
    for rank in ranks {
        let pick = |side: &[RunSamples]| {
            side.iter().find(|r| r.rank == rank).cloned().unwrap_or_else(|| empty.clone())
        };
        let (base, cur) = (pick(baseline), pick(current));
        let mut add = |m: MetricFigures| out.push(MetricFigures { rank, ..m });
        add(samples(
            "host_before",
            "host cost per replay, profiler never started",
            &base.host_before,
            &cur.host_before,
            b,
        ));
        add(samples(
            "host_after",
            "host cost per replay, after the profiler session",
            &base.host_after,
            &cur.host_after,
            b,
        ));
        add(single(
            "gpu_before",
            "GPU time per replay, before the profiler session",
            "µs",
            base.gpu_before,
            cur.gpu_before,
        ));
        add(single(
            "gpu_after",
            "GPU time per replay, after the profiler session",
            "µs",
            base.gpu_after,
            cur.gpu_after,
        ));
        add(single("occupancy", "occupancy of the profiled replays", "", base.occupancy, cur.occupancy));
        add(samples(
            "graph_launch",
            "graph-launch duration, profiled replays",
            &base.launches,
            &cur.launches,
            b,
        ));
    }
    out
}

/// Per-replay samples (costs: higher is worse).
fn samples(id: &str, label: &str, base: &[f64], cur: &[f64], b: Bootstrap) -> MetricFigures {
    let (bs, cs) = (
        Side { n: base.len(), median: stats::median(base) },
        Side { n: cur.len(), median: stats::median(cur) },
    );
    let mw = stats::mann_whitney_u(base, cur);
    let interval = stats::bootstrap_median_shift(base, cur, b.resamples, b.confidence, b.seed);
    let shift = bs.median.zip(cs.median).map(|(mb, mc)| mc - mb);
    MetricFigures {
        id: id.into(),
        rank: None,
        label: label.into(),
        unit: "µs".into(),
        worse: Worse::Higher,
        method: Method::MannWhitneyBootstrap,
        baseline: bs,
        current: cs,
        shift,
        relative_shift: shift.zip(bs.median).filter(|(_, mb)| *mb != 0.0).map(|(s, mb)| s / mb),
        interval,
        p_value: mw.map(|m| m.p_value),
        u: mw.map(|m| m.u),
    }
}

/// One figure per run: GPU time per replay (µs, higher is worse) or occupancy (a fraction, lower
/// is worse).
fn single(id: &str, label: &str, unit: &str, b: Option<f64>, c: Option<f64>) -> MetricFigures {
    let side = |v: Option<f64>| Side { n: usize::from(v.is_some()), median: v };
    let shift = b.zip(c).map(|(bv, cv)| cv - bv);
    MetricFigures {
        id: id.into(),
        rank: None,
        label: label.into(),
        unit: unit.into(),
        worse: if unit.is_empty() { Worse::Lower } else { Worse::Higher },
        method: Method::SingleValue,
        baseline: side(b),
        current: side(c),
        shift,
        relative_shift: shift.zip(b).filter(|(_, bv)| *bv != 0.0).map(|(s, bv)| s / bv),
        interval: None,
        p_value: None,
        u: None,
    }
}
