//! The judgement of a comparison (`launchguard_judge::compare`), each rule at its limits: the
//! figures are written by hand and every expected outcome is worked out from the defaults of
//! `[compare]` (alpha 0.001; floors of 5 µs host, 20 µs launch, 10 µs idle, each at least 100% of
//! the baseline median; GPU time +20%; occupancy −15 points; gaps +5).

use launchguard_analysis::compare::{Method, MetricFigures, Side, Worse};
use launchguard_analysis::stats::Interval;
use launchguard_judge::compare::{self, Comparison, Difference, Outcome, RunInfo};
use launchguard_judge::config::CompareConfig;
use launchguard_judge::{CheckId, Status, Verdict};

fn run(verdict: Verdict) -> RunInfo {
    RunInfo {
        path: None,
        verdict,
        preset: "reference".into(),
        gpu_name: Some("NVIDIA H200".into()),
        torch: Some("2.11.0".into()),
        launchguard_version: "0.1.0".into(),
        warnings: Vec::new(),
        reason: None,
        culprit: None,
        waiting: Vec::new(),
    }
}

/// Per-replay samples of `id`: baseline median `mb`, a shift of `shift`, p-value `p` and the
/// bootstrap interval `low`..`high`.
fn samples(id: &str, mb: f64, shift: f64, p: f64, low: f64, high: f64) -> MetricFigures {
    MetricFigures {
        id: id.into(),
        rank: None,
        graph: None,
        label: id.into(),
        unit: "µs".into(),
        worse: Worse::Higher,
        method: Method::MannWhitneyBootstrap,
        baseline: Side { n: 300, median: Some(mb) },
        current: Side { n: 300, median: Some(mb + shift) },
        shift: Some(shift),
        relative_shift: Some(shift / mb),
        interval: Some(Interval { low, high, confidence: 0.95 }),
        p_value: Some(p),
        u: Some(0.0),
    }
}

/// One figure per run: `unit` empty for occupancy (lower is worse).
fn single(id: &str, unit: &str, b: f64, shift: f64) -> MetricFigures {
    MetricFigures {
        id: id.into(),
        rank: None,
        graph: None,
        label: id.into(),
        unit: unit.into(),
        worse: if unit.is_empty() { Worse::Lower } else { Worse::Higher },
        method: Method::SingleValue,
        baseline: Side { n: 1, median: Some(b) },
        current: Side { n: 1, median: Some(b + shift) },
        shift: Some(shift),
        relative_shift: Some(shift / b),
        interval: None,
        p_value: None,
        u: None,
    }
}

fn judge(figures: Vec<MetricFigures>) -> Comparison {
    compare::judge(
        run(Verdict::Pass),
        run(Verdict::Pass),
        Vec::new(),
        figures,
        &CompareConfig::default(),
        false,
    )
}

fn outcome(f: MetricFigures) -> (Outcome, Status, Option<f64>) {
    let c = judge(vec![f]);
    let m = &c.metrics[0];
    (m.outcome, m.status, m.limit)
}

/// Each metric's floor: the larger of its absolute floor and 100% of the baseline median, GPU
/// span 20% of it; an interval must clear it strictly.
#[test]
fn the_floor_of_each_metric() {
    use Outcome::*;
    // (what, figures, outcome, floor)
    let cases = [
        // graph_launch: max(20, 1.0 × 50) = 50.
        (
            "launch, interval on the floor",
            samples("graph_launch", 50.0, 60.0, 1e-9, 50.0, 70.0),
            BelowFloor,
            50.0,
        ),
        ("launch, just past it", samples("graph_launch", 50.0, 60.0, 1e-9, 50.1, 70.0), Regression, 50.0),
        ("launch, well under it", samples("graph_launch", 50.0, 40.0, 1e-9, 30.0, 45.0), BelowFloor, 50.0),
        // A small baseline: the absolute floor of 20 µs decides, not the host's 5 µs.
        ("launch, absolute floor", samples("graph_launch", 10.0, 16.0, 1e-9, 15.0, 17.0), BelowFloor, 20.0),
        (
            "launch, past the absolute floor",
            samples("graph_launch", 10.0, 22.0, 1e-9, 21.0, 23.0),
            Regression,
            20.0,
        ),
        // idle_before: max(10, 1.0 × 4) = 10.
        ("idle, absolute floor", samples("idle_before", 4.0, 9.0, 1e-9, 8.0, 10.0), BelowFloor, 10.0),
        ("idle, past it", samples("idle_before", 4.0, 12.0, 1e-9, 10.5, 13.0), Regression, 10.0),
        // gpu_span: 0.20 × 100 = 20, no absolute floor.
        ("GPU span, past 20%", samples("gpu_span", 100.0, 30.0, 1e-9, 25.0, 35.0), Regression, 20.0),
        ("GPU span, on 20%", samples("gpu_span", 100.0, 25.0, 1e-9, 20.0, 30.0), BelowFloor, 20.0),
        ("GPU span of 10 µs, 30% up", samples("gpu_span", 10.0, 3.0, 1e-9, 2.5, 3.5), Regression, 2.0),
        // Host cost: max(5, 1.0 × 3) = 5; max(5, 1.0 × 30) = 30.
        ("host, past 5 µs", samples("host_before", 3.0, 6.0, 1e-9, 5.5, 7.0), Regression, 5.0),
        ("host, under 5 µs", samples("host_after", 3.0, 5.0, 1e-9, 4.9, 6.0), BelowFloor, 5.0),
        ("host, under 100%", samples("sync_step", 30.0, 35.0, 1e-9, 29.0, 40.0), BelowFloor, 30.0),
        ("host, past 100%", samples("launch_interval", 30.0, 35.0, 1e-9, 31.0, 40.0), Regression, 30.0),
        // Improvements: the upper bound below −floor.
        ("launch, improved", samples("graph_launch", 50.0, -60.0, 1e-9, -70.0, -50.1), Improvement, 50.0),
        (
            "launch, improved on the floor",
            samples("graph_launch", 50.0, -60.0, 1e-9, -70.0, -50.0),
            BelowFloor,
            50.0,
        ),
        (
            "launch, a little better",
            samples("graph_launch", 50.0, -20.0, 1e-9, -30.0, -10.0),
            BelowFloor,
            50.0,
        ),
    ];
    for (what, f, want, floor) in cases {
        let (got, status, limit) = outcome(f);
        assert_eq!(got, want, "{what}");
        assert_eq!(status, if want == Regression { Status::Fail } else { Status::Pass }, "{what}");
        assert!((limit.unwrap() - floor).abs() < 1e-12, "{what}: floor {limit:?}, want {floor}");
    }
}

/// Significance: p below alpha (0.001 by default), strictly.
#[test]
fn significance_at_the_default_alpha() {
    assert_eq!(CompareConfig::default().alpha, 0.001);
    let at = |p: f64| outcome(samples("graph_launch", 50.0, 100.0, p, 80.0, 120.0)).0;
    assert_eq!(at(0.0009), Outcome::Regression);
    assert_eq!(at(0.001), Outcome::NotSignificant);
    // Significant at 0.01, not at the default.
    assert_eq!(at(0.005), Outcome::NotSignificant);
    let (_, status, _) = outcome(samples("graph_launch", 50.0, 100.0, 0.005, 80.0, 120.0));
    assert_eq!(status, Status::Pass);
}

/// One figure per run: GPU time fails past +20% of the baseline, occupancy past −15 points, gaps
/// past +5; each limit strictly.
#[test]
fn single_figures_at_their_limits() {
    use Outcome::*;
    // (what, figures, outcome, signed limit)
    let cases = [
        ("GPU +20.5%", single("gpu_before", "µs", 100.0, 20.5), Regression, 20.0),
        ("GPU +20%", single("gpu_before", "µs", 100.0, 20.0), WithinLimit, 20.0),
        ("GPU +10%", single("gpu_after", "µs", 100.0, 10.0), WithinLimit, 20.0),
        ("GPU of 300 µs +25%", single("gpu_after", "µs", 300.0, 75.0), Regression, 60.0),
        ("GPU −20%", single("gpu_before", "µs", 100.0, -20.0), WithinLimit, 20.0),
        ("GPU −20.5%", single("gpu_before", "µs", 100.0, -20.5), Improvement, 20.0),
        ("occupancy −16 points", single("occupancy", "", 0.90, -0.16), Regression, -0.15),
        ("occupancy −15 points", single("occupancy", "", 0.90, -0.15), WithinLimit, -0.15),
        ("occupancy −5 points", single("occupancy", "", 0.90, -0.05), WithinLimit, -0.15),
        ("occupancy +15 points", single("occupancy", "", 0.60, 0.15), WithinLimit, -0.15),
        ("occupancy +16 points", single("occupancy", "", 0.60, 0.16), Improvement, -0.15),
        ("gaps +6", single("gaps", "µs", 2.0, 6.0), Regression, 5.0),
        ("gaps +5", single("gaps", "µs", 2.0, 5.0), WithinLimit, 5.0),
        ("gaps −100", single("gaps", "µs", 200.0, -100.0), WithinLimit, 5.0),
    ];
    for (what, f, want, limit) in cases {
        let (got, status, l) = outcome(f);
        assert_eq!(got, want, "{what}");
        assert_eq!(status, if want == Regression { Status::Fail } else { Status::Pass }, "{what}");
        assert!((l.unwrap() - limit).abs() < 1e-12, "{what}: limit {l:?}, want {limit}");
    }
}

/// A metric missing on one side is not measured: skipped, never a regression.
#[test]
fn a_metric_missing_on_one_side_is_skipped() {
    let mut f = samples("host_before", 10.0, 30.0, 1e-9, 25.0, 35.0);
    f.current = Side { n: 0, median: None };
    f.shift = None;
    let c = judge(vec![f]);
    assert_eq!((c.metrics[0].outcome, c.metrics[0].status), (Outcome::NotMeasured, Status::Skip));
    assert!(c.metrics[0].message.ends_with("not measured in the current run"), "{}", c.metrics[0].message);
    let mut g = single("gpu_before", "µs", 100.0, 50.0);
    g.baseline = Side { n: 0, median: None };
    g.shift = None;
    let c = judge(vec![g]);
    assert_eq!((c.metrics[0].outcome, c.metrics[0].status), (Outcome::NotMeasured, Status::Skip));
    assert!(c.metrics[0].message.ends_with("not measured in the baseline"), "{}", c.metrics[0].message);
    let mut h = single("occupancy", "", 0.9, -0.5);
    h.baseline = Side { n: 0, median: None };
    h.current = Side { n: 0, median: None };
    h.shift = None;
    assert!(judge(vec![h]).metrics[0].message.ends_with("not measured in either run"));
}

/// The occupancy of a launch-bound graph (below 100 µs of GPU time per replay on the baseline)
/// measures the profiler: a drop past the limit warns. The GPU time comes from `gpu_before`, else
/// from the trace's `gpu_span`, of the same rank.
#[test]
fn an_occupancy_drop_of_a_launch_bound_graph_warns() {
    let drop = || single("occupancy", "", 0.80, -0.30);
    let status = |figures: Vec<MetricFigures>| {
        let c = judge(figures);
        c.metrics.iter().find(|m| m.figures.id == "occupancy").unwrap().status
    };
    assert_eq!(status(vec![drop()]), Status::Fail);
    assert_eq!(status(vec![single("gpu_before", "µs", 35.0, 0.0), drop()]), Status::Warn);
    assert_eq!(status(vec![single("gpu_before", "µs", 100.0, 0.0), drop()]), Status::Fail);
    assert_eq!(status(vec![single("gpu_before", "µs", 99.9, 0.0), drop()]), Status::Warn);
    assert_eq!(status(vec![samples("gpu_span", 35.0, 0.0, 0.5, -1.0, 1.0), drop()]), Status::Warn);
    // `gpu_before` first: a check result's device events, not the profiled span.
    assert_eq!(
        status(vec![
            samples("gpu_span", 35.0, 0.0, 0.5, -1.0, 1.0),
            single("gpu_before", "µs", 255.0, 0.0),
            drop()
        ]),
        Status::Fail
    );
    // Another rank's GPU time says nothing about this rank.
    let mut gpu = single("gpu_before", "µs", 35.0, 0.0);
    gpu.rank = Some(1);
    let mut occ = drop();
    occ.rank = Some(0);
    assert_eq!(status(vec![gpu.clone(), occ.clone()]), Status::Fail);
    occ.rank = Some(1);
    assert_eq!(status(vec![gpu, occ]), Status::Warn);
    // Each rank's own GPU time: rank 0's graph is large, rank 1's small.
    let c = judge(vec![
        ranked(single("gpu_before", "µs", 255.0, 0.0), 0),
        ranked(single("gpu_before", "µs", 35.0, 0.0), 1),
        ranked(drop(), 0),
        ranked(drop(), 1),
    ]);
    let occ: Vec<(Option<u64>, Status)> = c
        .metrics
        .iter()
        .filter(|m| m.figures.id == "occupancy")
        .map(|m| (m.figures.rank, m.status))
        .collect();
    assert_eq!(occ, [(Some(0), Status::Fail), (Some(1), Status::Warn)]);
    // A rise in GPU time of a small graph still fails: only occupancy warns.
    assert_eq!(judge(vec![single("gpu_before", "µs", 35.0, 10.0)]).metrics[0].status, Status::Fail);
    let c = judge(vec![single("gpu_before", "µs", 35.0, 0.0), drop()]);
    assert!(c.metrics[1].message.contains("warns only: a replay of 35.0 µs"), "{}", c.metrics[1].message);
}

fn diff(field: &str, blocking: bool) -> Difference {
    Difference { field: field.into(), baseline: "a".into(), current: "b".into(), blocking }
}

#[test]
fn differences_list_every_field_once_and_block_unless_noted_only() {
    let pairs =
        |v: &[(&str, &str)]| v.iter().map(|(f, x)| (f.to_string(), x.to_string())).collect::<Vec<_>>();
    let base = pairs(&[("gpu_name", "H200"), ("torch", "2.11"), ("graph.kernel_names", "x"), ("same", "1")]);
    let cur = pairs(&[
        ("torch", "2.12"),
        ("gpu_name", "H200"),
        ("graph.kernel_names", "y"),
        ("same", "1"),
        ("tp", "2"),
    ]);
    let d = compare::differences(&base, &cur);
    let got: Vec<(&str, &str, &str, bool)> =
        d.iter().map(|d| (d.field.as_str(), d.baseline.as_str(), d.current.as_str(), d.blocking)).collect();
    assert_eq!(
        got,
        [
            ("torch", "2.11", "2.12", true),
            ("graph.kernel_names", "x", "y", false),
            ("tp", "unknown", "2", true)
        ]
    );
    assert_eq!(
        compare::incompatibility(&d).as_deref(),
        Some("torch 2.11 (baseline) vs 2.12 (current); tp unknown (baseline) vs 2 (current)")
    );
    assert_eq!(compare::incompatibility(&[diff("profiler", false)]), None);
    assert_eq!(compare::incompatibility(&[]), None);
    // Each setting that is only noted.
    for f in [
        "inject_delay_us",
        "inject_every",
        "inject_delay_ranks",
        "launchguard_version",
        "python_version",
        "workload.device",
        "graph.kernels",
        "graph.kernel_names",
        "profiler",
    ] {
        let d = compare::differences(&pairs(&[(f, "1")]), &pairs(&[(f, "2")]));
        assert!(!d[0].blocking, "{f}");
    }
}

fn judge_with(diffs: Vec<Difference>, force: bool, base: Verdict, cur: Verdict) -> Comparison {
    let figures = vec![samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0)];
    compare::judge(run(base), run(cur), diffs, figures, &CompareConfig::default(), force)
}

/// Runs that differ are compared only when forced; runs on different GPUs are an unusable
/// comparison (inconclusive) unless forced; a run whose trace lost events makes it inconclusive.
#[test]
fn comparable_forced_unusable_and_damaged() {
    use Verdict::*;
    let c = judge_with(Vec::new(), false, Pass, Pass);
    assert!(c.comparable && !c.forced && c.reason.is_none());
    assert_eq!((c.metrics.len(), c.verdict), (1, Fail));
    assert_eq!(c.checks()[0].status, Status::Pass);
    assert!(c.checks()[0]
        .message
        .starts_with("baseline comparable: same GPU (NVIDIA H200), workload (reference)"));

    // A difference only noted: compared, said, passes the baseline check.
    let c = judge_with(vec![diff("profiler", false)], false, Pass, Pass);
    assert!(c.comparable && !c.forced);
    assert_eq!(c.checks()[0].status, Status::Pass);
    assert!(c.checks()[0].message.ends_with(" (noted: profiler a vs b)"), "{}", c.checks()[0].message);

    // A blocking difference: not compared (a warning), unless forced (compared, a warning).
    let c = judge_with(vec![diff("torch", true)], false, Pass, Pass);
    assert!(!c.comparable && !c.forced && c.metrics.is_empty());
    assert_eq!(c.verdict, Warn);
    assert_eq!(c.checks().len(), 1);
    assert!(c.checks()[0]
        .message
        .starts_with("baseline not compared, the runs differ: torch a (baseline) vs b"));
    let c = judge_with(vec![diff("torch", true)], true, Pass, Pass);
    assert!(c.comparable && c.forced);
    assert_eq!((c.checks()[0].status, c.verdict), (Status::Warn, Fail));
    assert!(c.checks()[0].message.starts_with("compared although the runs differ"));
    // Forced without a blocking difference is not "forced".
    let c = judge_with(vec![diff("profiler", false)], true, Pass, Pass);
    assert!(c.comparable && !c.forced);

    // Another GPU: inconclusive with the reason, unless forced.
    let c = judge_with(vec![diff("gpu_name", true)], false, Pass, Pass);
    assert_eq!(c.verdict, Inconclusive);
    assert!(c
        .reason
        .as_deref()
        .unwrap()
        .starts_with("the runs ran on different GPUs: gpu_name a (baseline) vs b"));
    let c = judge_with(vec![diff("vendor", true)], false, Pass, Pass);
    assert_eq!(c.verdict, Inconclusive);
    let c = judge_with(vec![diff("gpu_name", true)], true, Pass, Pass);
    assert_eq!((c.verdict, c.reason.as_deref()), (Fail, None));
    // Only noted (a profile's `gpu_name` never is, but the rule reads `blocking`).
    let c = judge_with(vec![diff("gpu_name", false)], false, Pass, Pass);
    assert_eq!(c.verdict, Fail);

    // A damaged run on either side.
    // Each side whose own verdict is inconclusive is named (the runs here carry no reason).
    let base = "the baseline's own verdict is inconclusive";
    let cur = "the current run's own verdict is inconclusive";
    for (b, c_verdict, which) in [
        (Inconclusive, Pass, base.to_string()),
        (Pass, Inconclusive, cur.to_string()),
        (Inconclusive, Inconclusive, format!("{base}; {cur}")),
    ] {
        let c = judge_with(Vec::new(), false, b, c_verdict);
        assert_eq!(c.verdict, Inconclusive, "{which}");
        assert_eq!(
            c.reason.as_deref(),
            Some(format!("{which}: what is left cannot show whether launches got slower").as_str())
        );
    }
    let c = judge_with(Vec::new(), false, Fail, Warn);
    assert_eq!((c.verdict, c.reason), (Fail, None));
}

fn ranked(mut f: MetricFigures, rank: u64) -> MetricFigures {
    f.rank = Some(rank);
    f
}

/// With several ranks each metric's check is the worst rank's: a regression first, then the
/// largest relative shift in the worse direction, then the lowest rank.
#[test]
fn the_worst_rank_decides_each_check() {
    let check = |figures: Vec<MetricFigures>, id: &str| {
        judge(figures).checks().into_iter().find(|c| c.id == CheckId::Compare(id.into())).unwrap()
    };
    // Rank 1 regressed, rank 0 shifted further in relative terms but not significantly.
    let c = check(
        vec![
            ranked(samples("graph_launch", 10.0, 500.0, 0.5, -10.0, 900.0), 0),
            ranked(samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0), 1),
        ],
        "graph_launch",
    );
    assert_eq!(c.status, Status::Fail);
    assert!(c.message.starts_with("rank 1 (worst of ranks 0, 1): "), "{}", c.message);
    assert!(c.hint.is_some());
    assert_eq!(c.value, serde_json::json!(100.0));
    assert_eq!(c.limit, serde_json::json!(50.0));
    // Both pass: the larger relative shift (rank 0: +40%, rank 1: +20%).
    let c = check(
        vec![
            ranked(samples("host_before", 10.0, 4.0, 0.5, -1.0, 9.0), 0),
            ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 1),
        ],
        "host_before",
    );
    assert!(c.message.starts_with("rank 0 (worst of ranks 0, 1)"), "{}", c.message);
    assert_eq!(c.hint, None);
    let c = check(
        vec![
            ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 0),
            ranked(samples("host_before", 10.0, 4.0, 0.5, -1.0, 9.0), 1),
        ],
        "host_before",
    );
    assert!(c.message.starts_with("rank 1 (worst of ranks 0, 1)"), "{}", c.message);
    // Occupancy: lower is worse.
    let c = check(
        vec![ranked(single("occupancy", "", 0.9, -0.02), 0), ranked(single("occupancy", "", 0.9, -0.10), 1)],
        "occupancy",
    );
    assert!(c.message.starts_with("rank 1 (worst of ranks 0, 1)"), "{}", c.message);
    let c = check(
        vec![ranked(single("occupancy", "", 0.9, -0.10), 0), ranked(single("occupancy", "", 0.9, -0.02), 1)],
        "occupancy",
    );
    assert!(c.message.starts_with("rank 0 (worst of ranks 0, 1)"), "{}", c.message);
    // Ties: the lowest rank.
    let c = check(
        vec![
            ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 2),
            ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 1),
        ],
        "host_before",
    );
    // The ranks are listed in order, whatever order the figures came in.
    assert!(c.message.starts_with("rank 1 (worst of ranks 1, 2)"), "{}", c.message);
    // Graphs of one rank, and of a trace of one process.
    let mut g1 = ranked(samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0), 0);
    g1.graph = Some("44 kernels".into());
    let mut g2 = ranked(samples("graph_launch", 50.0, 1.0, 0.5, -1.0, 2.0), 0);
    g2.graph = Some("52 kernels".into());
    let c = check(vec![g2.clone(), g1.clone()], "graph_launch");
    assert!(c.message.starts_with("rank 0, graph of 44 kernels (worst of 2 comparisons): "), "{}", c.message);
    g1.rank = None;
    g2.rank = None;
    let c = check(vec![g1, g2], "graph_launch");
    assert!(c.message.starts_with("graph of 44 kernels (worst of 2 graphs): "), "{}", c.message);
    // One comparison: its message as it is.
    let c = check(vec![samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0)], "graph_launch");
    assert!(c.message.starts_with("graph_launch: median 50.0 → 150.0 µs, +100.0 µs (95% CI +80.0 to +120.0"));
}

/// A run's verdict with its comparison: a regression fails a passing run; a skipped or damaged
/// run keeps its verdict.
#[test]
fn a_comparison_joins_the_runs_verdict() {
    let c = judge(vec![samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0)]);
    let (checks, v) = launchguard_judge::with_comparison(Vec::new(), Verdict::Pass, Some(&c));
    assert_eq!((checks.len(), v), (2, Verdict::Fail));
    for kept in [Verdict::Skip, Verdict::Inconclusive] {
        assert_eq!(launchguard_judge::with_comparison(Vec::new(), kept, Some(&c)).1, kept);
    }
    let (checks, v) = launchguard_judge::with_comparison(Vec::new(), Verdict::Warn, None);
    assert_eq!((checks.len(), v), (0, Verdict::Warn));
    let fine = judge(vec![samples("graph_launch", 50.0, 1.0, 0.5, -1.0, 2.0)]);
    let warned = vec![launchguard_judge::Check::new(CheckId::Gaps, Status::Warn, None, None, "w")];
    let (checks, v) = launchguard_judge::with_comparison(warned.clone(), Verdict::Warn, Some(&fine));
    assert_eq!((checks.len(), v), (3, Verdict::Warn));
    assert_eq!(launchguard_judge::with_comparison(warned, Verdict::Warn, Some(&c)).1, Verdict::Fail);
}

#[test]
fn numbers_in_messages() {
    assert_eq!(compare::signed(1.25, 1), "+1.2");
    assert_eq!(compare::signed(0.0, 0), "+0");
    assert_eq!(compare::signed(-3.0, 1), "−3.0");
    assert_eq!(compare::format_p(0.0), "< 1e-300");
    assert_eq!(compare::format_p(1e-300), "1.0e-300");
    assert_eq!(compare::format_p(0.000_25), "2.5e-4");
    assert_eq!(compare::format_p(0.001), "0.001");
    assert_eq!(compare::format_p(0.5), "0.500");
}

/// What each metric's line says: the figures, the limit and the finding.
#[test]
fn the_line_of_each_metric() {
    let line = |f: MetricFigures| judge(vec![f]).metrics[0].message.clone();
    assert_eq!(
        line(samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0)),
        "graph_launch: median 50.0 → 150.0 µs, +100.0 µs (95% CI +80.0 to +120.0, p 1.0e-9, n 300/300): a regression: \
         the interval clears the 50.0 µs floor"
    );
    assert!(line(samples("graph_launch", 50.0, -60.0, 1e-9, -70.0, -50.1)).ends_with(
        "(95% CI −70.0 to −50.1, p 1.0e-9, n 300/300): an improvement: the interval clears the 50.0 µs floor"
    ));
    assert!(line(samples("graph_launch", 50.0, 60.0, 0.5, 50.0, 70.0))
        .ends_with(": no significant shift (alpha 0.001)"));
    assert!(line(samples("graph_launch", 50.0, 60.0, 1e-9, 50.0, 70.0))
        .ends_with(": significant, but the interval does not clear the 50.0 µs floor"));
    assert_eq!(
        line(single("gpu_before", "µs", 200.0, 50.0)),
        "gpu_before: 200.0 → 250.0 µs, +50.0 µs (+25.0%; one figure per run, no interval; fails above 20%): a regression \
         past the limit"
    );
    assert!(line(single("gpu_before", "µs", 200.0, -50.0)).ends_with(
        "(−25.0%; one figure per run, no interval; fails above 20%): an improvement past the limit"
    ));
    assert!(line(single("gpu_before", "µs", 200.0, 10.0)).ends_with(": within the limit"));
    assert_eq!(
        line(single("gaps", "µs", 2.0, 6.0)),
        "gaps: 2 → 8 (+6; fails above 5 more): a regression past the limit"
    );
    assert_eq!(
        line(single("occupancy", "", 0.90, -0.16)),
        "occupancy: 90.0% → 74.0%, −16.0 points (one figure per run, no interval; fails below −15.0 points): a \
         regression past the limit"
    );
}

/// With the rank that makes the others wait named in the current run (rank 1, rank 0 waiting for
/// it), that rank's metrics lead, and a failed comparison's reason is its regression first, then
/// what changed on the ranks that wait.
#[test]
fn the_rank_that_makes_the_others_wait_leads() {
    let current = RunInfo { culprit: Some(1), waiting: vec![0], ..run(Verdict::Pass) };
    let judged = |figures: Vec<MetricFigures>| {
        compare::judge(
            run(Verdict::Pass),
            current.clone(),
            Vec::new(),
            figures,
            &CompareConfig::default(),
            false,
        )
    };
    // Floors: launch max(20 µs, 100% of 50 µs) = 50 µs, host max(5 µs, 100% of 10 µs) = 10 µs.
    let launch0 = ranked(samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0), 0);
    let host0 = ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 0);
    let launch1 = ranked(samples("graph_launch", 50.0, 60.0, 1e-9, 55.0, 65.0), 1);
    let host1 = ranked(samples("host_before", 10.0, 30.0, 1e-9, 20.0, 40.0), 1);
    let c = judged(vec![launch0.clone(), host0.clone(), launch1.clone(), host1.clone()]);
    assert_eq!(c.verdict, Verdict::Fail);
    let order: Vec<(Option<u64>, &str)> =
        c.metrics.iter().map(|m| (m.figures.rank, m.figures.id.as_str())).collect();
    assert_eq!(
        order,
        [
            (Some(1), "graph_launch"),
            (Some(1), "host_before"),
            (Some(0), "graph_launch"),
            (Some(0), "host_before")
        ]
    );
    assert_eq!(
        c.reason.as_deref(),
        Some("rank 1 makes the others wait: graph_launch +60.0 µs, host_before +30.0 µs; rank 0 waits for it (graph_launch +100.0 µs)")
    );
    // Each check names its worst rank's part: the culprit, a rank that waits for it.
    let check = |c: &Comparison, id: &str| {
        c.checks().into_iter().find(|k| k.id == CheckId::Compare(id.into())).unwrap().message
    };
    assert!(
        check(&c, "graph_launch").starts_with("rank 1, which makes the others wait (worst of ranks 0, 1): "),
        "{}",
        check(&c, "graph_launch")
    );
    let launch1_ok = ranked(samples("graph_launch", 50.0, 2.0, 0.5, -1.0, 5.0), 1);
    let c2 = judged(vec![launch0.clone(), launch1_ok.clone()]);
    assert!(
        check(&c2, "graph_launch").starts_with("rank 0, waiting for rank 1 (worst of ranks 0, 1): "),
        "{}",
        check(&c2, "graph_launch")
    );
    // A rank neither named nor waiting (rank 2, not in `waiting`) is only its number.
    let c3 =
        judged(vec![launch1_ok.clone(), ranked(samples("graph_launch", 50.0, 100.0, 1e-9, 80.0, 120.0), 2)]);
    assert!(
        check(&c3, "graph_launch").starts_with("rank 2 (worst of ranks 1, 2): "),
        "{}",
        check(&c3, "graph_launch")
    );
    // The rank that waits changed nothing past its limits.
    let launch0_ok = ranked(samples("graph_launch", 50.0, 2.0, 0.5, -1.0, 5.0), 0);
    let c = judged(vec![launch0_ok.clone(), host0.clone(), launch1.clone(), host1.clone()]);
    assert_eq!(
        c.reason.as_deref(),
        Some(
            "rank 1 makes the others wait: graph_launch +60.0 µs, host_before +30.0 µs; rank 0 waits for it"
        )
    );
    // The culprit did not regress: no line about it, whatever the others did.
    let host1_ok = ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 1);
    let c = judged(vec![launch0.clone(), host0.clone(), launch1_ok, host1_ok]);
    assert_eq!((c.verdict, c.reason.as_deref()), (Verdict::Fail, None));
    // No rank waiting: the culprit's own change alone.
    let alone = RunInfo { culprit: Some(1), waiting: Vec::new(), ..run(Verdict::Pass) };
    let c = compare::judge(
        run(Verdict::Pass),
        alone,
        Vec::new(),
        vec![launch1.clone(), host1.clone()],
        &CompareConfig::default(),
        false,
    );
    assert_eq!(
        c.reason.as_deref(),
        Some("rank 1 makes the others wait: graph_launch +60.0 µs, host_before +30.0 µs")
    );
    // The culprit's checks lead: rank 1's launch decides `graph_launch`, rank 0's host cost
    // `host_before`, listed after it although rank 1 lists host_before first.
    let c4 = judged(vec![
        ranked(samples("host_before", 10.0, 2.0, 0.5, -1.0, 9.0), 1),
        launch1.clone(),
        ranked(samples("host_before", 10.0, 30.0, 1e-9, 20.0, 40.0), 0),
        launch0_ok.clone(),
    ]);
    let ids: Vec<String> = c4.checks().iter().map(|k| k.id.to_string()).collect();
    assert_eq!(ids, ["compare.baseline", "compare.graph_launch", "compare.host_before"]);
    // Occupancy in points, gaps as a count: 0.9 → 0.7 is 20 points lost (limit 15), 2 → 10 gaps
    // is 8 more (limit 5).
    let c5 = compare::judge(
        run(Verdict::Pass),
        RunInfo { culprit: Some(1), waiting: Vec::new(), ..run(Verdict::Pass) },
        Vec::new(),
        vec![ranked(single("occupancy", "", 0.9, -0.2), 1), ranked(single("gaps", "gaps", 2.0, 8.0), 1)],
        &CompareConfig::default(),
        false,
    );
    assert_eq!(c5.reason.as_deref(), Some("rank 1 makes the others wait: occupancy −20.0 points, gaps +8"));
    // Its kernel diffs lead as well.
    let mut c = judged(vec![launch0, host0, launch1, host1]);
    c.kernels = [Some(0), None, Some(1)]
        .into_iter()
        .map(|rank| launchguard_analysis::kernel_diff::KernelDiff { rank, ..Default::default() })
        .collect();
    c.lead_with_culprit();
    let ranks: Vec<Option<u64>> = c.kernels.iter().map(|k| k.rank).collect();
    assert_eq!(ranks, [Some(1), Some(0), None]);
}
