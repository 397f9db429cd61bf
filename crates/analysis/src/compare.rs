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
    /// The graph it belongs to, in traces of several graphs (`44 kernels`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<String>,
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
    /// What each step-synchronous step cost the host over the GPU time per replay (the step's
    /// host time less the process's own back-to-back GPU time per replay): each process picks its
    /// own GEMMs, so its GPU time is taken out before runs are compared.
    pub sync_over_gpu: Vec<f64>,
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
pub fn metrics<'a>(
    baseline: &'a [RunSamples],
    current: &'a [RunSamples],
    b: Bootstrap,
) -> Vec<MetricFigures> {
    let mut ranks: Vec<Option<u64>> = baseline.iter().chain(current).map(|r| r.rank).collect();
    ranks.sort();
    ranks.dedup();
    let empty = RunSamples::default();
    let mut out = Vec::new();
    for rank in ranks {
        let pick = |side: &'a [RunSamples]| side.iter().find(|r| r.rank == rank).unwrap_or(&empty);
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
        // Results of a workload without step-synchronous steps have nothing to say about them.
        if !(base.sync_over_gpu.is_empty() && cur.sync_over_gpu.is_empty()) {
            add(samples(
                "sync_step",
                "step-synchronous step over the GPU time per replay, profiler never started",
                &base.sync_over_gpu,
                &cur.sync_over_gpu,
                b,
            ));
        }
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
        graph: None,
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

/// One figure per run: GPU time per replay (µs, higher is worse), a count of gaps (higher is
/// worse) or occupancy (a fraction, unit empty, lower is worse).
fn single(id: &str, label: &str, unit: &str, b: Option<f64>, c: Option<f64>) -> MetricFigures {
    let side = |v: Option<f64>| Side { n: usize::from(v.is_some()), median: v };
    let shift = b.zip(c).map(|(bv, cv)| cv - bv);
    MetricFigures {
        id: id.into(),
        rank: None,
        graph: None,
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

/// What one trace (one rank) measured, for a comparison of traces: per graph its per-replay
/// samples, and its steady state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceSamples {
    /// The rank (`None` for a trace of one process).
    pub rank: Option<u64>,
    /// Per graph, in order of first replay.
    pub graphs: Vec<GraphSamples>,
    /// The occupancy the judge judges: the lowest device's over its steady state (with several
    /// ranks: the rank's, excluding waiting for peers, over the common window).
    pub occupancy: Option<f64>,
    /// Idle gaps over the gap threshold in the steady state (the device with the most).
    pub gaps: Option<f64>,
}

/// The per-replay samples of one graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphSamples {
    /// GPU activities per replay.
    pub kernels: u64,
    /// Hash of its kernels' names ([`crate::model::GraphFigures::signature`]).
    pub signature: String,
    /// Graph-launch call durations.
    pub launch_us: Vec<f64>,
    /// Host time from this replay's launch to the next launch: the host's cost per step.
    pub interval_us: Vec<f64>,
    /// First GPU activity start to last end, per replay.
    pub gpu_span_us: Vec<f64>,
    /// GPU idle before each replay, the first one on each device left out.
    pub idle_before_us: Vec<f64>,
}

impl crate::kernel_diff::GraphKey for GraphSamples {
    fn kernels(&self) -> u64 {
        self.kernels
    }
    fn signature(&self) -> &str {
        &self.signature
    }
}

impl TraceSamples {
    /// The samples of one trace's figures; `occupancy` overrides the trace's own (a rank's
    /// occupancy excluding waiting for peers).
    pub fn of(a: &crate::model::Analysis, rank: Option<u64>, occupancy: Option<f64>) -> Self {
        let mut graphs: Vec<GraphSamples> = a
            .replay_summary
            .graphs
            .iter()
            .map(|g| GraphSamples {
                kernels: g.kernels,
                signature: g.signature.clone(),
                ..GraphSamples::default()
            })
            .collect();
        let mut seen_devices: Vec<&str> = Vec::new();
        for (i, r) in a.replays.iter().enumerate() {
            let Some(g) = r.graph.and_then(|g| graphs.get_mut(g as usize)) else { continue };
            g.launch_us.push(r.launch_us);
            if let Some(next) = a.replays.get(i + 1) {
                g.interval_us.push(next.launch_start_us - r.launch_start_us);
            }
            if let Some(span) = r.gpu_span_us {
                g.gpu_span_us.push(span);
            }
            let first_on_device = r.device.as_deref().is_some_and(|d| {
                let first = !seen_devices.contains(&d);
                if first {
                    seen_devices.push(d);
                }
                first
            });
            if let (false, Some(idle)) = (first_on_device, r.idle_before_us) {
                g.idle_before_us.push(idle);
            }
        }
        let steady =
            |d: &crate::model::Device| d.steady.as_ref().map_or(d.figures.clone(), |s| s.figures.clone());
        TraceSamples {
            rank,
            graphs,
            occupancy: occupancy.or_else(|| a.devices.iter().map(|d| steady(d).occupancy).reduce(f64::min)),
            gaps: a.devices.iter().map(|d| steady(d).gaps.over_threshold as f64).reduce(f64::max),
        }
    }
}

/// The metrics of traces `current` against `baseline`, rank by rank and graph by graph. Graphs
/// are matched by [`crate::kernel_diff::match_graphs`].
pub fn trace_metrics(
    baseline: &[TraceSamples],
    current: &[TraceSamples],
    b: Bootstrap,
) -> Vec<MetricFigures> {
    let mut ranks: Vec<Option<u64>> = baseline.iter().chain(current).map(|r| r.rank).collect();
    ranks.sort();
    ranks.dedup();
    let empty = TraceSamples::default();
    let mut out = Vec::new();
    for rank in ranks {
        let base = baseline.iter().find(|r| r.rank == rank).unwrap_or(&empty);
        let cur = current.iter().find(|r| r.rank == rank).unwrap_or(&empty);
        let several = base.graphs.len() > 1 || cur.graphs.len() > 1;
        for (bi, ci) in crate::kernel_diff::match_graphs(&base.graphs, &cur.graphs) {
            let bg = &base.graphs[bi];
            let cg = &cur.graphs[ci];
            let graph = several.then(|| format!("{} kernels", bg.kernels));
            let mut add = |m: MetricFigures| out.push(MetricFigures { rank, graph: graph.clone(), ..m });
            add(samples("graph_launch", "graph-launch duration", &bg.launch_us, &cg.launch_us, b));
            add(samples(
                "launch_interval",
                "host time from one launch to the next",
                &bg.interval_us,
                &cg.interval_us,
                b,
            ));
            add(samples(
                "gpu_span",
                "GPU time per replay (first kernel to last)",
                &bg.gpu_span_us,
                &cg.gpu_span_us,
                b,
            ));
            add(samples(
                "idle_before",
                "GPU idle before each replay",
                &bg.idle_before_us,
                &cg.idle_before_us,
                b,
            ));
        }
        let mut add = |m: MetricFigures| out.push(MetricFigures { rank, ..m });
        add(single("occupancy", "occupancy of the steady state", "", base.occupancy, cur.occupancy));
        add(single("gaps", "idle gaps over the threshold in the steady state", "gaps", base.gaps, cur.gaps));
    }
    out
}

/// The GPU vendor a profiler backend records.
fn vendor(profiler: Option<&str>) -> Option<&'static str> {
    match profiler? {
        "cupti" => Some("NVIDIA"),
        "roctracer" | "rocprofiler-sdk" => Some("AMD"),
        _ => None,
    }
}

/// What identifies a trace's setup, field by field: the GPU and its vendor, the profiler, the
/// number of ranks, the main graph (the most replayed: its kernel count, and whether its kernels
/// are the same), and from `check`'s context, when the trace has one, the software versions and
/// the workload. The judge decides which differences block a comparison.
pub fn trace_facts(a: &crate::model::Analysis) -> Vec<(String, String)> {
    let unknown = || "unknown".to_string();
    let mut gpus: Vec<&str> = a.devices.iter().filter_map(|d| d.name.as_deref()).collect();
    gpus.dedup();
    let mut out = vec![
        ("gpu_name".to_string(), if gpus.is_empty() { unknown() } else { gpus.join(", ") }),
        ("vendor".to_string(), vendor(a.trace.profiler.as_deref()).unwrap_or("unknown").to_string()),
        ("profiler".to_string(), a.trace.profiler.clone().unwrap_or_else(unknown)),
        ("world_size".to_string(), a.trace.world_size.unwrap_or(1).to_string()),
    ];
    let main = a.replay_summary.graphs.iter().max_by_key(|g| g.replays);
    out.push(("graph.kernels".to_string(), main.map_or_else(unknown, |g| g.kernels.to_string())));
    out.push(("graph.kernel_names".to_string(), main.map_or_else(unknown, |g| g.signature.clone())));
    if let Some(w) = &a.workload {
        let inv = w.inventory.clone().unwrap_or_default();
        let text = |v: Option<String>| v.unwrap_or_else(unknown);
        out.push(("torch".to_string(), text(inv.torch)));
        out.push(("cuda".to_string(), text(inv.cuda)));
        out.push(("hip".to_string(), text(inv.hip)));
        out.push(("driver".to_string(), text(inv.driver)));
        out.push(("preset".to_string(), w.workload.preset.clone()));
        out.push(("inject_delay_us".to_string(), w.inject_delay_us.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples that differ by rank, graph and metric: `n` values from a seeded formula.
    fn values(n: usize, salt: u64) -> Vec<f64> {
        (0..n as u64).map(|i| ((i * 37 + salt * 11) % 101) as f64 / 10.0 + salt as f64).collect()
    }

    fn trace(rank: u64, salt: u64) -> TraceSamples {
        let graph = |kernels: u64, k: u64| GraphSamples {
            kernels,
            signature: format!("g{kernels}"),
            launch_us: values(300, salt + k),
            interval_us: values(299, salt + k + 1),
            gpu_span_us: values(300, salt + k + 2),
            idle_before_us: values(299, salt + k + 3),
        };
        TraceSamples {
            rank: Some(rank),
            graphs: vec![graph(11, 0), graph(4, 10)],
            occupancy: Some(0.9 - salt as f64 / 1000.0),
            gaps: Some(salt as f64),
        }
    }

    #[test]
    fn the_figures_keep_their_order_and_do_not_depend_on_the_threads() {
        let b = Bootstrap { confidence: 0.95, resamples: 300, seed: 7 };
        let (base, cur) = ([trace(0, 1), trace(1, 2)], [trace(0, 3), trace(1, 4)]);
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| trace_metrics(&base, &cur, b))
        };
        let one = on(1);
        assert_eq!(one, on(4));
        // Rank by rank, graph by graph, the four sampled metrics, then the two figures per rank.
        let sampled = ["graph_launch", "launch_interval", "gpu_span", "idle_before"];
        let mut want = Vec::new();
        for rank in [0, 1] {
            for graph in ["11 kernels", "4 kernels"] {
                want.extend(sampled.map(|id| (Some(rank), Some(graph.to_string()), id.to_string())));
            }
            want.extend(["occupancy", "gaps"].map(|id| (Some(rank), None, id.to_string())));
        }
        let got: Vec<_> = one.iter().map(|m| (m.rank, m.graph.clone(), m.id.clone())).collect();
        assert_eq!(got, want);
        // Each bootstrap is the one a direct call gives (same seed, whatever ran before it).
        let direct =
            samples("gpu_span", "", &base[1].graphs[1].gpu_span_us, &cur[1].graphs[1].gpu_span_us, b);
        let m = one
            .iter()
            .find(|m| m.rank == Some(1) && m.graph.as_deref() == Some("4 kernels") && m.id == "gpu_span");
        assert_eq!(m.unwrap().interval, direct.interval);
        assert!(direct.interval.is_some());
    }
}
