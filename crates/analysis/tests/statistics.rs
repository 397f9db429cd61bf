//! The statistics of `compare` on samples whose answers are worked out by hand: the normal tail,
//! an interval's bounds, the bootstrap's quantiles on a sample whose resampled medians take three
//! values, and each metric's shift and relative shift.

use launchguard_analysis::compare::{self, Bootstrap, GraphSamples, Method, RunSamples, TraceSamples, Worse};
use launchguard_analysis::stats::{self, Interval};

#[test]
fn the_normal_tail() {
    assert_eq!(stats::normal_sf(0.0), 0.5);
    // Φ(−1) and 1 − Φ(−1), to the last digits (scipy.stats.norm.sf).
    assert!((stats::normal_sf(1.0) - 0.158_655_253_931_457_05).abs() < 1e-15);
    assert!((stats::normal_sf(-1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
    assert!((stats::normal_sf(1.959_963_984_540_054) - 0.025).abs() < 1e-15);
}

#[test]
fn an_interval_holds_its_bounds() {
    let i = Interval { low: 1.0, high: 2.0, confidence: 0.95 };
    assert!(i.contains(1.0) && i.contains(1.5) && i.contains(2.0));
    assert!(!i.contains(0.999) && !i.contains(2.001));
}

#[test]
fn mann_whitney_needs_both_samples() {
    assert!(stats::mann_whitney_u(&[1.0], &[]).is_none());
    assert!(stats::mann_whitney_u(&[], &[]).is_none());
    assert!(stats::mann_whitney_u(&[1.0], &[2.0]).is_some());
}

/// The median of a resample of [1, 11] (two values, drawn with replacement) is 1 with
/// probability 1/4, 6 with 1/2 and 11 with 1/4; against a baseline of [1] the shift is 0, 5 or
/// 10. So the 95% interval runs from 0 to 10, a 60% one (20th to 80th percentile) too, and a 10%
/// one (45th to 55th) is 5 to 5. With 2000 resamples each claim fails with a probability below
/// 1e-20.
#[test]
fn bootstrap_quantiles_by_hand() {
    let at = |confidence: f64| {
        let i = stats::bootstrap_median_shift(&[1.0], &[1.0, 11.0], 2000, confidence, 7).unwrap();
        assert_eq!(i.confidence, confidence);
        (i.low, i.high)
    };
    assert_eq!(at(0.95), (0.0, 10.0));
    assert_eq!(at(0.6), (0.0, 10.0));
    assert_eq!(at(0.1), (5.0, 5.0));
    // Current below the baseline: the shift is negative.
    let i = stats::bootstrap_median_shift(&[1.0, 11.0], &[1.0], 2000, 0.1, 7).unwrap();
    assert_eq!((i.low, i.high), (-5.0, -5.0));
    assert!(stats::bootstrap_median_shift(&[1.0], &[2.0], 0, 0.95, 7).is_none());
    assert!(stats::bootstrap_median_shift(&[], &[2.0], 100, 0.95, 7).is_none());
    assert!(stats::bootstrap_median_shift(&[1.0], &[], 100, 0.95, 7).is_none());
    assert_eq!(
        stats::bootstrap_median_shift(&[1.0], &[2.0], 1, 0.95, 7),
        Some(Interval { low: 1.0, high: 1.0, confidence: 0.95 })
    );
}

const B: Bootstrap = Bootstrap { confidence: 0.95, resamples: 200, seed: 1 };

/// Each metric's shift (current − baseline), relative shift (over the baseline, none from 0),
/// direction and method.
#[test]
fn the_shift_of_each_metric() {
    let base = RunSamples {
        rank: Some(3),
        host_before: vec![10.0; 5],
        host_after: vec![0.0; 5],
        gpu_before: Some(200.0),
        gpu_after: Some(0.0),
        occupancy: Some(0.8),
        launches: vec![40.0; 5],
        sync_over_gpu: Vec::new(),
    };
    let cur = RunSamples {
        rank: Some(3),
        host_before: vec![15.0; 4],
        host_after: vec![2.0; 5],
        gpu_before: Some(250.0),
        gpu_after: Some(5.0),
        occupancy: Some(0.6),
        launches: vec![30.0; 5],
        sync_over_gpu: Vec::new(),
    };
    let m = compare::metrics(std::slice::from_ref(&base), std::slice::from_ref(&cur), B);
    let ids: Vec<&str> = m.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["host_before", "host_after", "gpu_before", "gpu_after", "occupancy", "graph_launch"]);
    assert!(m.iter().all(|f| f.rank == Some(3)));
    let get = |id: &str| m.iter().find(|f| f.id == id).unwrap();
    let h = get("host_before");
    assert_eq!((h.shift, h.relative_shift), (Some(5.0), Some(0.5)));
    assert_eq!(
        (h.baseline.n, h.current.n, h.baseline.median, h.current.median),
        (5, 4, Some(10.0), Some(15.0))
    );
    assert_eq!((h.method, h.worse, h.unit.as_str()), (Method::MannWhitneyBootstrap, Worse::Higher, "µs"));
    assert_eq!(h.interval.map(|i| (i.low, i.high)), Some((5.0, 5.0)));
    assert!(h.p_value.unwrap() < 0.05);
    assert_eq!(h.u, Some(0.0));
    let a = get("host_after");
    assert_eq!((a.shift, a.relative_shift), (Some(2.0), None));
    let l = get("graph_launch");
    assert_eq!((l.shift, l.relative_shift), (Some(-10.0), Some(-0.25)));
    let g = get("gpu_before");
    assert_eq!((g.shift, g.relative_shift), (Some(50.0), Some(0.25)));
    assert_eq!((g.method, g.worse, g.baseline.n, g.interval), (Method::SingleValue, Worse::Higher, 1, None));
    assert_eq!((g.p_value, g.u), (None, None));
    assert_eq!((get("gpu_after").shift, get("gpu_after").relative_shift), (Some(5.0), None));
    let o = get("occupancy");
    assert_eq!((o.worse, o.unit.as_str()), (Worse::Lower, ""));
    assert!((o.shift.unwrap() + 0.2).abs() < 1e-12 && (o.relative_shift.unwrap() + 0.25).abs() < 1e-12);
    // One side missing: counted as not measured.
    let m = compare::metrics(&[RunSamples { gpu_before: None, ..base }], &[], B);
    let g = m.iter().find(|f| f.id == "gpu_before").unwrap();
    assert_eq!((g.baseline.n, g.current.n, g.shift), (0, 0, None));
    let h = m.iter().find(|f| f.id == "host_before").unwrap();
    assert_eq!((h.baseline.n, h.current.n, h.shift, h.p_value), (5, 0, None, None));
}

/// A comparison of traces: per rank and graph (named when there are several), then occupancy
/// and gaps of the steady state.
#[test]
fn the_metrics_of_traces() {
    let graph = |kernels: u64, launch: f64| GraphSamples {
        kernels,
        signature: format!("k{kernels}"),
        launch_us: vec![launch; 5],
        interval_us: vec![300.0; 5],
        gpu_span_us: vec![255.0; 5],
        idle_before_us: vec![4.0; 5],
    };
    let run = |launch: f64| TraceSamples {
        rank: Some(1),
        graphs: vec![graph(44, launch), graph(52, launch)],
        occupancy: Some(0.9),
        gaps: Some(2.0),
    };
    let m = compare::trace_metrics(&[run(50.0)], &[run(80.0)], B);
    assert!(m.iter().all(|f| f.rank == Some(1)));
    let launches: Vec<(Option<&str>, Option<f64>)> =
        m.iter().filter(|f| f.id == "graph_launch").map(|f| (f.graph.as_deref(), f.shift)).collect();
    assert_eq!(launches, [(Some("44 kernels"), Some(30.0)), (Some("52 kernels"), Some(30.0))]);
    let gaps = m.iter().find(|f| f.id == "gaps").unwrap();
    assert_eq!((gaps.shift, gaps.worse, gaps.graph.as_deref()), (Some(0.0), Worse::Higher, None));
}

/// The samples of a real trace (examples/healthy_clean.json.gz, the reference preset on an H200)
/// carry each graph's identity as the analysis names it, its kernel count and the hash of its
/// kernels' names, which is how `compare` pairs a graph with the same graph of the other run.
#[test]
fn a_traces_samples_name_their_graphs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/healthy_clean.json.gz");
    let trace = launchguard_trace::read(std::path::Path::new(path)).unwrap();
    let a = launchguard_analysis::analyze(&trace, &launchguard_analysis::Options::default()).unwrap();
    let s = TraceSamples::of(&a, Some(3), None);
    assert_eq!(s.rank, Some(3));
    assert!(!a.replay_summary.graphs.is_empty());
    assert_eq!(s.graphs.len(), a.replay_summary.graphs.len());
    for (g, f) in s.graphs.iter().zip(&a.replay_summary.graphs) {
        assert!(f.kernels > 0 && !f.signature.is_empty(), "{f:?}");
        assert_eq!((g.kernels, g.signature.as_str()), (f.kernels, f.signature.as_str()));
        assert_eq!(g.launch_us.len() as u64, f.replays);
    }
}
