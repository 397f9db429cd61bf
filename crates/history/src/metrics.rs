//! The metrics a history follows: one figure per run each, named for good (the names are stored),
//! with the direction that is worse. Read from a `check` result, an `analyze` result (a kept trace
//! carries check's samples) or a `compare` result (its current run).

use std::collections::BTreeMap;

use launchguard_analysis::context::PhaseReport;
use launchguard_check::CheckReport;
use launchguard_judge::compare::Comparison;
use launchguard_judge::AnalysisReport;

/// Which way a metric gets worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Worse {
    /// A cost: higher is worse.
    Higher,
    /// A share of time busy: lower is worse.
    Lower,
}

/// One metric of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Metric {
    /// Stable name, as stored.
    pub name: &'static str,
    /// What it is, in words.
    pub label: &'static str,
    /// `µs`, or empty for a fraction.
    pub unit: &'static str,
    /// Which way is worse.
    pub worse: Worse,
}

/// Every metric, in report order. The first is what graph-launch overhead moves first: the host
/// cost of a replay before any profiler touched the process.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "host_before_us",
        label: "host cost per replay, profiler never started (p50)",
        unit: "µs",
        worse: Worse::Higher,
    },
    Metric {
        name: "host_after_us",
        label: "host cost per replay after one profiler session (p50)",
        unit: "µs",
        worse: Worse::Higher,
    },
    Metric {
        name: "host_profiled_us",
        label: "host cost per replay under the profiler (p50)",
        unit: "µs",
        worse: Worse::Higher,
    },
    Metric {
        name: "back_to_back_us",
        label: "host cost per back-to-back replay (p50)",
        unit: "µs",
        worse: Worse::Higher,
    },
    Metric { name: "gpu_per_replay_us", label: "GPU time per replay", unit: "µs", worse: Worse::Higher },
    Metric { name: "occupancy", label: "profiled occupancy (judged)", unit: "", worse: Worse::Lower },
    Metric {
        name: "graph_launch_us",
        label: "graph launch, mean (profiled)",
        unit: "µs",
        worse: Worse::Higher,
    },
    Metric {
        name: "replay_idle_us",
        label: "GPU idle before each replay (p50)",
        unit: "µs",
        worse: Worse::Higher,
    },
];

/// The metric of this name.
pub fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// A run's figures by metric name; only finite values are kept.
pub type Figures = BTreeMap<String, f64>;

fn put(out: &mut Figures, name: &str, value: Option<f64>) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        out.insert(name.to_string(), v);
    }
}

/// The largest of the values that are there (the worst rank of a cost).
fn worst_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.flatten().filter(|v| v.is_finite()).reduce(f64::max)
}

fn phase_figures(out: &mut Figures, phases: &[&BTreeMap<String, PhaseReport>]) {
    let p50 = |phase: &str| worst_of(phases.iter().map(|p| p.get(phase).and_then(|r| r.host_p50_us)));
    put(out, "host_before_us", p50("before"));
    put(out, "host_after_us", p50("after"));
    put(out, "host_profiled_us", p50("profiled"));
    put(
        out,
        "back_to_back_us",
        worst_of(phases.iter().map(|p| p.get("before").and_then(|r| r.steady_host_p50_us))),
    );
    put(
        out,
        "gpu_per_replay_us",
        worst_of(phases.iter().map(|p| p.get("before").and_then(|r| r.gpu_us_per_replay))),
    );
}

fn trace_figures(out: &mut Figures, analyses: &[&AnalysisReport]) {
    put(out, "graph_launch_us", worst_of(analyses.iter().map(|a| a.figures.graph_launches.mean_us)));
    put(
        out,
        "replay_idle_us",
        worst_of(analyses.iter().map(|a| a.figures.replay_summary.idle_before_p50_us)),
    );
}

/// The figures of a `check` result; with several ranks, each cost at its worst rank.
pub fn of_check(report: &CheckReport) -> Figures {
    let mut out = Figures::new();
    let mut phases = vec![&report.phases];
    phases.extend(report.ranks.iter().map(|r| &r.phases));
    phase_figures(&mut out, &phases);
    put(&mut out, "occupancy", report.judged_occupancy());
    let analyses: Vec<&AnalysisReport> = match (&report.analysis, &report.across) {
        (Some(a), _) => vec![a],
        (None, Some(across)) => across.ranks.iter().map(|r| &r.analysis).collect(),
        (None, None) => Vec::new(),
    };
    trace_figures(&mut out, &analyses);
    out
}

/// The figures of an `analyze` result: the trace's, and check's samples when the trace is one
/// that `check` kept.
pub fn of_analysis(report: &AnalysisReport) -> Figures {
    let mut out = Figures::new();
    if let Some(w) = &report.figures.workload {
        phase_figures(&mut out, &[&w.phases]);
    }
    put(&mut out, "occupancy", report.judged_occupancy());
    trace_figures(&mut out, &[report]);
    out
}

/// The figures of a `compare` result's current run (each metric at its worst rank).
pub fn of_compare(c: &Comparison) -> Figures {
    let mut out = Figures::new();
    for (id, name) in [
        ("host_before", "host_before_us"),
        ("host_after", "host_after_us"),
        ("gpu_before", "gpu_per_replay_us"),
        ("graph_launch", "graph_launch_us"),
        ("idle_before", "replay_idle_us"),
    ] {
        let v = worst_of(c.metrics.iter().filter(|m| m.figures.id == id).map(|m| m.figures.current.median));
        put(&mut out, name, v);
    }
    let occupancy = c
        .metrics
        .iter()
        .filter(|m| m.figures.id == "occupancy")
        .filter_map(|m| m.figures.current.median)
        .filter(|v| v.is_finite())
        .reduce(f64::min);
    put(&mut out, "occupancy", occupancy);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> CheckReport {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
        launchguard_check::compare::read_result(&p).unwrap()
    }

    #[test]
    fn names_are_unique_and_found() {
        for (i, m) in METRICS.iter().enumerate() {
            assert_eq!(metric(m.name), Some(m));
            assert!(METRICS[i + 1..].iter().all(|o| o.name != m.name));
        }
        assert_eq!(metric("nope"), None);
    }

    #[test]
    fn a_real_check_result_gives_every_metric() {
        // Values read off the file with a JSON viewer: phases.before.host_p50_us and friends.
        let f = of_check(&check("tests/data/h200-check/reference/run00-delay0.json"));
        assert_eq!(f["host_before_us"], 5.427);
        assert_eq!(f["host_after_us"], 23.3525);
        assert_eq!(f["host_profiled_us"], 62.189);
        assert_eq!(f["gpu_per_replay_us"], 254.63071823120117);
        assert_eq!(f["graph_launch_us"], 58.40916000000002);
        assert_eq!(f["replay_idle_us"], 4.64);
        let occ = f["occupancy"];
        assert!((0.89..=0.91).contains(&occ), "{occ}");
        // This older run measured no back-to-back replays.
        assert!(!f.contains_key("back_to_back_us"));
        for name in f.keys() {
            assert!(metric(name).is_some(), "{name}");
        }
    }
}
