//! The checks of one trace at their limits (ATOM's defaults: occupancy fails below 0.80 and warns
//! below 0.90, more than 5 gaps fail, a launch of 150 µs fails, the GPU waiting max(20 µs, 10%
//! of its replay) before a replay fails), and the adaptations of `Limits::new`, worked out by hand.

use launchguard_analysis::model::{Analysis, CountOf, GraphFigures};
use launchguard_judge::limits::{self, Context, Limits, Scope};
use launchguard_judge::{CheckId, Settings, Status, Verdict};

/// A one-device trace's figures: the steady state's occupancy and gaps (over 100 µs), `launches`
/// graph launches of `kernels` each, their mean and median duration, the GPU span of a replay
/// and the GPU's idle time before each.
#[derive(Clone, Copy)]
pub struct Case {
    pub occupancy: f64,
    pub gaps: u64,
    pub launches: u64,
    pub kernels: u64,
    pub launch_mean_us: f64,
    pub launch_p50_us: f64,
    pub span_us: f64,
    pub idle_us: f64,
    pub world: u64,
}

/// The reference workload, healthy: 100 replays of 44 kernels, 255 µs of GPU time each.
pub const HEALTHY: Case = Case {
    occupancy: 0.95,
    gaps: 0,
    launches: 100,
    kernels: 44,
    launch_mean_us: 60.0,
    launch_p50_us: 55.0,
    span_us: 255.0,
    idle_us: 22.0,
    world: 1,
};

fn device(c: &Case, name: &str, occupancy: f64, gaps: u64) -> serde_json::Value {
    let fig = serde_json::json!({"activities": c.launches * c.kernels, "window_start_us": 0.0, "window_us": 1000.0,
        "busy_us": 1000.0 * occupancy, "idle_us": 1000.0 * (1.0 - occupancy), "occupancy": occupancy,
        "gaps": {"threshold_us": 100.0, "over_threshold": gaps, "count": gaps, "max_us": 150.0, "histogram": []}});
    let mut device = fig.clone();
    device["device"] = name.into();
    device["streams"] = serde_json::json!([]);
    let mut steady = fig;
    for (k, v) in [
        ("before_us", 0.0),
        ("after_us", 0.0),
        ("busy_before_us", 0.0),
        ("busy_after_us", 0.0),
        ("replay_share", 1.0),
    ] {
        steady[k] = v.into();
    }
    device["steady"] = if c.launches > 0 { steady } else { serde_json::Value::Null };
    device
}

/// The analysis of a trace with figures `c`.
pub fn analysis(c: &Case) -> Analysis {
    let v = serde_json::json!({
        "schema": "launchguard.analysis/1",
        "source": {"path": "t", "bytes": 1, "gzip": false, "events": 10, "skipped_events": 0,
                   "skipped": {"missing_ts": 0, "bad_dur": 0, "not_an_object": 0}, "truncated": false, "truncation": null},
        "trace": {"profiler": null, "rank": null, "world_size": c.world, "base_time_ns": null},
        "within": null,
        "devices": [device(c, "0", c.occupancy, c.gaps)],
        "graph_launches": {"count": c.launches, "apis": ["cudaGraphLaunch"], "mean_us": c.launch_mean_us,
                           "p50_us": c.launch_p50_us, "p99_us": c.launch_mean_us, "max_us": c.launch_mean_us,
                           "kernels_per_launch": {"min": c.kernels, "max": c.kernels}},
        "replays": [],
        "replay_summary": {"count": c.launches, "kernels_mode": if c.launches > 0 { Some(c.kernels) } else { None },
                           "inconsistent": 0, "without_kernels": 0, "latency_p50_us": 10.0,
                           "gpu_span_p50_us": if c.launches > 0 { Some(c.span_us) } else { None },
                           "idle_before_p50_us": c.idle_us,
                           "steady_idle_before_p50_us": if c.launches > 1 { Some(c.idle_us) } else { None },
                           "kernel_counts": []},
        "warnings": []
    });
    serde_json::from_value(v).unwrap()
}

/// The judged check `id` of `a` under the default settings.
pub fn check_of(a: Analysis, id: CheckId) -> launchguard_judge::Check {
    check_with(a, id, &Settings::default())
}

fn check_with(a: Analysis, id: CheckId, s: &Settings) -> launchguard_judge::Check {
    let r = launchguard_judge::analysis(a, s);
    r.checks.into_iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no {id}"))
}

fn status(c: Case, id: CheckId) -> Status {
    check_of(analysis(&c), id).status
}

/// Occupancy exactly at ATOM's limits: 0.80 warns (fails below), 0.90 passes (warns below). The
/// GPU waits 22 µs before each replay, so a warning is the host's and stays one.
#[test]
fn occupancy_at_its_limits() {
    let at = |occupancy: f64| status(Case { occupancy, ..HEALTHY }, CheckId::Occupancy);
    assert_eq!(at(0.79), Status::Fail);
    assert_eq!(at(0.80), Status::Warn);
    assert_eq!(at(0.89), Status::Warn);
    assert_eq!(at(0.90), Status::Pass);
    let c = check_of(analysis(&Case { occupancy: 0.85, ..HEALTHY }), CheckId::Occupancy);
    assert_eq!(c.value, serde_json::json!(0.85));
    assert_eq!(c.limit, serde_json::json!(0.8));
    assert!(
        c.message.contains("busy 85.0% of a 1.00 ms window (fail below 80%, warn below 90%)"),
        "{}",
        c.message
    );
    assert_eq!(
        c.hint.as_deref(),
        Some("the GPU waits for the host between launches: look at the host cost of each launch and at the gaps")
    );
    assert_eq!(check_of(analysis(&HEALTHY), CheckId::Occupancy).hint, None);
}

/// A warning where the GPU waited less than 20 µs before each replay is the graph's own idle
/// time: it passes. At 20 µs it is the host's; a failure stays one; `adapt = false` holds it.
#[test]
fn the_graphs_own_idle_time_passes_a_warning() {
    let occ = |occupancy: f64, idle_us: f64| {
        check_of(analysis(&Case { occupancy, idle_us, ..HEALTHY }), CheckId::Occupancy)
    };
    let c = occ(0.85, 19.9);
    assert_eq!((c.status, c.hint.as_deref()), (Status::Pass, None));
    assert!(c.message.ends_with("not launch overhead"), "{}", c.message);
    assert_eq!(occ(0.85, 20.0).status, Status::Warn);
    assert_eq!(occ(0.75, 4.0).status, Status::Fail);
    let exact = Settings::from_toml("[thresholds]\nadapt = false\n").unwrap();
    let a = analysis(&Case { occupancy: 0.85, idle_us: 4.0, ..HEALTHY });
    assert_eq!(check_with(a, CheckId::Occupancy, &exact).status, Status::Warn);
    // Graph replays among other work: occupancy is not judged at all.
    let mut a = analysis(&Case { occupancy: 0.85, idle_us: 4.0, ..HEALTHY });
    a.devices[0].steady.as_mut().unwrap().replay_share = 0.4;
    assert_eq!(check_with(a.clone(), CheckId::Occupancy, &Settings::default()).status, Status::Skip);
    assert_eq!(check_with(a, CheckId::Occupancy, &exact).status, Status::Warn);
}

/// Where the idle time is, in the hint of a failed occupancy: the host ahead of the GPU (a launch
/// waits longer than a replay lasts) with little idle before each replay points at the graph.
#[test]
fn the_occupancy_hint_says_where_the_idle_time_is() {
    let hint = |latency: f64, idle: f64| {
        let mut a = analysis(&Case { occupancy: 0.70, idle_us: idle, ..HEALTHY });
        a.replay_summary.latency_p50_us = Some(latency);
        check_of(a, CheckId::Occupancy).hint.unwrap()
    };
    assert!(
        hint(300.0, 4.0).starts_with("the host runs ahead of the GPU (a launch waits 300"),
        "{}",
        hint(300.0, 4.0)
    );
    assert!(hint(300.0, 19.9).starts_with("the host runs ahead"));
    assert!(hint(300.0, 20.0).starts_with("the GPU waits for the host"));
    assert!(hint(255.0, 4.0).starts_with("the GPU waits for the host"));
    assert!(hint(10.0, 4.0).starts_with("the GPU waits for the host"));
    // The steady idle time first, else the idle time before every replay.
    let mut a = analysis(&Case { occupancy: 0.70, idle_us: 4.0, ..HEALTHY });
    a.replay_summary.latency_p50_us = Some(300.0);
    a.replay_summary.steady_idle_before_p50_us = None;
    assert!(check_of(a.clone(), CheckId::Occupancy).hint.unwrap().starts_with("the host runs ahead"));
    a.replay_summary.idle_before_p50_us = None;
    assert!(check_of(a, CheckId::Occupancy).hint.unwrap().starts_with("the GPU waits for the host"));
}

/// Of several devices the worst decides: the lowest occupancy, the most gaps.
#[test]
fn the_worst_device_decides() {
    let mut a = analysis(&HEALTHY);
    let second = device(&HEALTHY, "1", 0.70, 9);
    a.devices.push(serde_json::from_value(second).unwrap());
    let occ = check_of(a.clone(), CheckId::Occupancy);
    assert_eq!((occ.status, occ.value.clone()), (Status::Fail, serde_json::json!(0.7)));
    assert!(occ.message.starts_with("GPU 1 busy 70.0%"), "{}", occ.message);
    let gaps = check_of(a.clone(), CheckId::Gaps);
    assert_eq!((gaps.status, gaps.value), (Status::Fail, serde_json::json!(9.0)));
    assert!(gaps.message.starts_with("GPU 1: 9 idle gaps over 100 µs"), "{}", gaps.message);
    let act = check_of(a.clone(), CheckId::GpuActivity);
    assert_eq!((act.status, act.value), (Status::Pass, serde_json::json!(8800.0)));
    assert_eq!(act.message, "8800 GPU activities on 2 device(s)");
    // The occupancy judged: the lowest device's steady state.
    let r = launchguard_judge::analysis(a.clone(), &Settings::default());
    assert_eq!(r.judged_occupancy(), Some(0.7));
    let mut whole = a.clone();
    whole.devices[1].steady = None;
    whole.devices[1].figures.occupancy = 0.5;
    assert_eq!(launchguard_judge::analysis(whole, &Settings::default()).judged_occupancy(), Some(0.5));
    // The other way round.
    a.devices.swap(0, 1);
    assert!(check_of(a.clone(), CheckId::Occupancy).message.starts_with("GPU 1 busy 70.0%"));
    assert!(check_of(a, CheckId::Gaps).message.starts_with("GPU 1: 9"));
}

/// No GPU activity fails; occupancy and gaps are then not measured.
#[test]
fn a_trace_without_gpu_activity() {
    let mut a = analysis(&HEALTHY);
    a.devices.clear();
    let r = launchguard_judge::analysis(a, &Settings::default());
    let find = |id: CheckId| r.checks.iter().find(|c| c.id == id).unwrap();
    assert_eq!(find(CheckId::GpuActivity).status, Status::Fail);
    assert_eq!(find(CheckId::GpuActivity).value, serde_json::json!(0.0));
    assert!(find(CheckId::GpuActivity).hint.is_some());
    for id in [CheckId::Occupancy, CheckId::Gaps] {
        assert_eq!(
            (find(id.clone()).status, find(id).message.as_str()),
            (Status::Skip, "no GPU activity to measure")
        );
    }
    assert_eq!(r.verdict, Verdict::Fail);
    let mut a = analysis(&HEALTHY);
    a.devices[0].figures.activities = 0;
    assert_eq!(check_of(a, CheckId::GpuActivity).status, Status::Fail);
}

/// Gaps exactly at the limit pass; one more fails. 150 replays allow ⌊5 × 150/100⌋ = 7.
#[test]
fn gaps_at_the_limit() {
    let at = |gaps: u64, launches: u64| status(Case { gaps, launches, ..HEALTHY }, CheckId::Gaps);
    assert_eq!(at(5, 100), Status::Pass);
    assert_eq!(at(6, 100), Status::Fail);
    assert_eq!(at(7, 150), Status::Pass);
    assert_eq!(at(8, 150), Status::Fail);
    let c = check_of(analysis(&Case { gaps: 8, launches: 150, ..HEALTHY }), CheckId::Gaps);
    assert_eq!(c.limit, serde_json::json!(7.0));
    assert!(
        c.message.ends_with("fail above 7: 150 replays: ATOM allows 5 gaps in 100 replays)"),
        "{}",
        c.message
    );
    let c = check_of(analysis(&Case { gaps: 6, ..HEALTHY }), CheckId::Gaps);
    assert!(c.message.ends_with("(longest 150.0 µs; fail above 5)"), "{}", c.message);
}

/// The launch limit: the mean (one rank) at 150 µs fails; several ranks judge the median.
#[test]
fn graph_launch_at_the_limit() {
    let at = |mean: f64, p50: f64, world: u64| {
        check_of(
            analysis(&Case { launch_mean_us: mean, launch_p50_us: p50, world, ..HEALTHY }),
            CheckId::GraphLaunch,
        )
    };
    let c = at(150.0, 10.0, 1);
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Fail, serde_json::json!(150.0), serde_json::json!(150.0))
    );
    assert!(c.hint.is_some());
    assert!(
        c.message.starts_with(
            "100 cudaGraphLaunch launches: mean 150.0 µs, p50 10.0, p99 150.0, max 150.0 (fail at 150 µs)"
        ),
        "{}",
        c.message
    );
    let c = at(149.9, 10.0, 1);
    assert_eq!((c.status, c.hint), (Status::Pass, None));
    // Two ranks: the median against 150 + 255 µs of GPU time per replay.
    let c = at(5000.0, 404.9, 2);
    assert_eq!(c.status, Status::Pass);
    assert!(c.message.contains("median 404.9 µs, mean 5000.0"), "{}", c.message);
    assert!(c
        .message
        .ends_with("; the median: with several ranks one launch that waits for a peer must not decide)"));
    assert_eq!(at(10.0, 405.0, 2).status, Status::Fail);
    // The statistic as stated.
    let median = Settings::from_toml("[thresholds]\nlaunch_statistic = \"median\"\n").unwrap();
    let a = analysis(&Case { launch_mean_us: 200.0, launch_p50_us: 100.0, ..HEALTHY });
    let c = check_with(a.clone(), CheckId::GraphLaunch, &median);
    assert_eq!(c.status, Status::Pass);
    assert!(!c.message.contains("must not decide"));
    let mean = Settings::from_toml("[thresholds]\nlaunch_statistic = \"mean\"\n").unwrap();
    assert_eq!(check_with(a, CheckId::GraphLaunch, &mean).status, Status::Fail);
    // No launch: skipped.
    let mut a = analysis(&HEALTHY);
    a.graph_launches.count = 0;
    let c = check_of(a, CheckId::GraphLaunch);
    assert_eq!((c.status, c.message.as_str()), (Status::Skip, "no graph launch in the trace"));
    let mut a = analysis(&HEALTHY);
    a.graph_launches.count = 0;
    a.within = Some("ProfilerStep".into());
    let c = check_of(a, CheckId::GraphLaunch);
    assert_eq!(c.message, "no graph launch inside spans matching 'ProfilerStep'");
}

/// The idle time before replays against max(20 µs, 10% of the GPU time per replay).
#[test]
fn replay_idle_at_the_limit() {
    let at = |idle_us: f64, span_us: f64| {
        check_of(analysis(&Case { idle_us, span_us, ..HEALTHY }), CheckId::ReplayIdle)
    };
    assert_eq!(at(25.5, 255.0).status, Status::Fail);
    assert_eq!(at(25.4, 255.0).status, Status::Pass);
    assert_eq!(at(20.0, 150.0).status, Status::Fail);
    assert_eq!(at(19.9, 150.0).status, Status::Pass);
    let c = at(30.0, 255.0);
    assert_eq!((c.value.clone(), c.limit.clone()), (serde_json::json!(30.0), serde_json::json!(25.5)));
    assert!(c.hint.is_some());
    assert!(
        c.message.contains(", against 255.0 µs of GPU time per replay (fail at 25.5 µs = max(20 µs, 10% of"),
        "{}",
        c.message
    );
    assert_eq!(at(4.0, 255.0).hint, None);
    // One replay: nothing between replays to measure.
    let c = check_of(analysis(&Case { launches: 1, ..HEALTHY }), CheckId::ReplayIdle);
    assert_eq!(c.status, Status::Skip);
}

/// Graph replays must launch at least half the GPU activities for occupancy, gaps and the idle
/// time before replays to be judged: at 0.5 they are, below it (0.49, and 0.3) they are not.
#[test]
fn replays_among_other_work() {
    let share = |s: f64| {
        let mut a = analysis(&Case { occupancy: 0.5, gaps: 50, idle_us: 100.0, ..HEALTHY });
        a.devices[0].steady.as_mut().unwrap().replay_share = s;
        a
    };
    assert_eq!(limits::MIN_REPLAY_SHARE, 0.5);
    for (s, scope) in [(0.5, Scope::GraphReplays), (0.49, Scope::MixedWork), (0.3, Scope::MixedWork)] {
        assert_eq!(Context::of(&share(s), 1).scope, scope, "{s}");
        let r = launchguard_judge::analysis(share(s), &Settings::default());
        let st = |id: CheckId| r.checks.iter().find(|c| c.id == id).unwrap().status;
        let want = if scope == Scope::GraphReplays { Status::Fail } else { Status::Skip };
        assert_eq!(
            (st(CheckId::Occupancy), st(CheckId::Gaps), st(CheckId::ReplayIdle)),
            (want, want, want),
            "{s}"
        );
        // Launches are judged either way.
        assert_eq!(st(CheckId::GraphLaunch), Status::Pass);
        if scope == Scope::MixedWork {
            let c = r.checks.iter().find(|c| c.id == CheckId::Occupancy).unwrap();
            assert!(
                c.message
                    .starts_with(&format!("graph replays launch {:.0}% of the GPU activities", 100.0 * s)),
                "{}",
                c.message
            );
        }
    }
    // The lowest device's share decides.
    let mut a = share(0.9);
    let mut second: launchguard_analysis::model::Device =
        serde_json::from_value(device(&HEALTHY, "1", 0.9, 0)).unwrap();
    second.steady.as_mut().unwrap().replay_share = 0.2;
    a.devices.push(second);
    assert_eq!(Context::of(&a, 1).scope, Scope::MixedWork);
    assert_eq!(Context::of(&a, 1).replay_share, Some(0.2));
}

/// A trace cut short warns.
#[test]
fn a_truncated_trace_warns() {
    let mut a = analysis(&HEALTHY);
    let c = check_of(a.clone(), CheckId::TraceComplete);
    assert_eq!(
        (c.status, c.message.as_str(), c.value),
        (Status::Pass, "10 events read", serde_json::json!(10.0))
    );
    a.source.truncation = Some("gzip stream ends early".into());
    let c = check_of(a, CheckId::TraceComplete);
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.message, "truncated trace: 10 complete events analyzed; gzip stream ends early");
}

fn graph(kernels: u64, replays: u64) -> GraphFigures {
    GraphFigures {
        kernels,
        replays,
        signature: format!("{kernels}"),
        first_kernel: "a".into(),
        last_kernel: "b".into(),
    }
}

/// Replays that differ from the usual: several graphs that each recur pass; a graph seen once,
/// or replays without kernels, warn.
#[test]
fn replay_consistency_and_several_graphs() {
    let consistency = |f: &dyn Fn(&mut Analysis)| {
        let mut a = analysis(&HEALTHY);
        f(&mut a);
        check_of(a, CheckId::ReplayConsistency)
    };
    let c = consistency(&|_| {});
    assert_eq!((c.status, c.message.as_str()), (Status::Pass, "all 100 replays ran 44 GPU activities"));
    let c = consistency(&|a| {
        a.replay_summary.count = 1;
    });
    assert_eq!(c.message, "the one replay ran 44 GPU activities");
    // Two graphs, each replayed at least twice: told apart by names, else by kernel counts.
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 40;
        a.replay_summary.graphs = vec![graph(44, 60), graph(52, 40)];
    });
    assert_eq!(c.status, Status::Pass);
    assert_eq!(c.value, serde_json::json!(2.0));
    assert_eq!(c.message, "100 replays of 2 graphs, each replayed alike: 44 kernels ×60, 52 kernels ×40");
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 2;
        a.replay_summary.kernel_counts =
            vec![CountOf { kernels: 44, replays: 98 }, CountOf { kernels: 52, replays: 2 }];
    });
    assert_eq!(c.status, Status::Pass);
    // A graph seen once: a replay that lost events.
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 1;
        a.replay_summary.graphs = vec![graph(44, 99), graph(43, 1)];
    });
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.value, serde_json::json!(1.0));
    assert_eq!(c.message, "1 of 100 replays differ from the usual 44 GPU activities (0 without any): lost events, or several graphs");
    // Replays without kernels warn, even when the rest are several recurring graphs.
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 40;
        a.replay_summary.without_kernels = 1;
        a.replay_summary.graphs = vec![graph(44, 59), graph(52, 40)];
    });
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.value, serde_json::json!(41.0));
    // One graph listed, with inconsistent replays: not several graphs.
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 3;
        a.replay_summary.graphs = vec![graph(44, 97)];
    });
    assert_eq!(c.status, Status::Warn);
    // Every launch without GPU activity.
    let c = consistency(&|a| {
        a.replay_summary.without_kernels = 100;
    });
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.value, serde_json::json!(0.0));
    assert!(c.message.starts_with("none of the 100 graph launches has GPU activity"));
    // More than 8 graphs: 8 listed, and how many more.
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 80;
        a.replay_summary.graphs = (1..=10).map(|k| graph(k, 10)).collect();
    });
    assert_eq!(c.status, Status::Pass);
    assert!(c.message.ends_with("8 kernels ×10, 2 more"), "{}", c.message);
    // Exactly 8: all of them, nothing "more".
    let c = consistency(&|a| {
        a.replay_summary.inconsistent = 80;
        a.replay_summary.graphs = (1..=8).map(|k| graph(k, 10)).collect();
    });
    assert!(c.message.ends_with("7 kernels ×10, 8 kernels ×10"), "{}", c.message);
    // No launch.
    let c = consistency(&|a| {
        a.replay_summary.count = 0;
    });
    assert_eq!(c.status, Status::Skip);
}

/// A trace of no graph replay is skipped with the reason; `adapt = false` judges it.
#[test]
fn the_verdict_of_a_trace() {
    let healthy = launchguard_judge::analysis(analysis(&HEALTHY), &Settings::default());
    assert_eq!((healthy.verdict, healthy.reason), (Verdict::Pass, None));
    let warned =
        launchguard_judge::analysis(analysis(&Case { occupancy: 0.85, ..HEALTHY }), &Settings::default());
    assert_eq!(warned.verdict, Verdict::Warn);
    // One trace alone is judged as one rank: its checks include what one rank cannot see only
    // when it is one of several.
    assert_eq!(healthy.limits.context.ranks, 1);
}

fn ctx(ranks: u64, gpu: Option<f64>, kernels: Option<u64>, replays: u64) -> Context {
    Context {
        scope: Scope::GraphReplays,
        ranks,
        preset: None,
        gpu_us_per_replay: gpu,
        gpu_time_from: gpu.map(|_| "trace".to_string()),
        kernels_per_replay: kernels,
        replays,
        replay_share: Some(1.0),
    }
}

/// `Limits::new` by hand: each adaptation at its threshold, and what it says.
#[test]
fn limits_new_at_each_threshold() {
    let s = Settings::default();
    let l = |c: Context| Limits::new(&c, &s);
    // 44 kernels: ATOM's graph, no scaling; 45 scale by 45/44.
    assert_eq!(l(ctx(1, Some(255.0), Some(44), 100)).thresholds.launch_fail_us, 150.0);
    assert!(l(ctx(1, Some(255.0), Some(44), 100)).adjustments.is_empty());
    let x = l(ctx(1, Some(255.0), Some(88), 100));
    assert_eq!(x.thresholds.launch_fail_us, 300.0);
    assert_eq!(x.adjustments.len(), 1);
    assert_eq!((x.adjustments[0].configured, x.adjustments[0].effective), (150.0, 300.0));
    assert!(x.why("launch_fail_us").unwrap().starts_with("scaled for 88 kernels per replay: 150 µs"));
    assert_eq!(x.why("occupancy_fail"), None);
    // 100 GPU µs per replay is not a small graph; 99.9 is.
    assert!(!ctx(1, Some(100.0), None, 100).small_graph());
    assert!(ctx(1, Some(99.9), None, 100).small_graph());
    assert!(!ctx(1, None, None, 100).small_graph());
    let small = l(ctx(1, Some(99.9), Some(11), 100));
    assert_eq!((small.thresholds.occupancy_fail, small.thresholds.occupancy_warn), (0.0, 0.60));
    assert!(small
        .why("occupancy_warn")
        .unwrap()
        .starts_with("a replay of 99.9 µs of GPU time is launch-bound"));
    let big = l(ctx(1, Some(100.0), Some(11), 100));
    assert_eq!((big.thresholds.occupancy_fail, big.thresholds.occupancy_warn), (0.80, 0.90));
    // Several ranks: the launch limit gains a replay's GPU time, occupancy fails below 70%, the
    // median judges; a small graph of several ranks keeps the occupancy limits of several ranks.
    let tp = l(ctx(2, Some(50.0), Some(44), 100));
    assert_eq!(tp.thresholds.launch_fail_us, 200.0);
    assert_eq!((tp.thresholds.occupancy_fail, tp.thresholds.occupancy_warn), (0.70, 0.90));
    assert!(tp.why("launch_fail_us").unwrap().starts_with(
        "2 ranks: a traced launch blocks until the GPU has run the previous replay (50.0 µs, from the trace)"
    ));
    assert!(tp.why("occupancy_fail").unwrap().starts_with("2 ranks: each launch waits"));
    assert_eq!(tp.thresholds.launch_statistic, launchguard_judge::config::LaunchStatistic::Median);
    assert_eq!(
        l(ctx(1, Some(255.0), Some(44), 100)).thresholds.launch_statistic,
        launchguard_judge::config::LaunchStatistic::Mean
    );
    let no_gpu = l(ctx(4, None, Some(44), 100));
    assert_eq!((no_gpu.thresholds.launch_fail_us, no_gpu.thresholds.occupancy_fail), (150.0, 0.70));
    // A stricter occupancy limit of the user's own is kept with several ranks.
    let strict = Settings::from_toml("[thresholds]\noccupancy_fail = 0.6\n").unwrap();
    assert_eq!(Limits::new(&ctx(2, Some(255.0), Some(44), 100), &strict).thresholds.occupancy_fail, 0.6);
    // Gaps: 100 replays allow 5; 101 allow ⌊5.05⌋ = 5; 120 allow 6; 139 allow ⌊6.95⌋ = 6.
    for (replays, gaps) in [(100, 5), (101, 5), (120, 6), (139, 6), (1000, 50)] {
        assert_eq!(l(ctx(1, Some(255.0), Some(44), replays)).thresholds.max_gaps, gaps, "{replays}");
    }
    assert!(l(ctx(1, Some(255.0), Some(44), 101)).adjustments.is_empty());
    let g = l(ctx(1, Some(255.0), Some(44), 120));
    assert_eq!(
        (g.adjustments[0].key.as_str(), g.adjustments[0].configured, g.adjustments[0].effective),
        ("max_gaps", 5.0, 6.0)
    );
    assert_eq!(g.why("max_gaps"), Some("120 replays: ATOM allows 5 gaps in 100 replays"));
    // `adapt = false`: nothing adapts, and the statistic still resolves.
    let exact = Settings::from_toml("[thresholds]\nadapt = false\n").unwrap();
    let e = Limits::new(&ctx(2, Some(50.0), Some(88), 1000), &exact);
    assert!(e.exact && e.adjustments.is_empty());
    assert_eq!(
        (e.thresholds.launch_fail_us, e.thresholds.occupancy_fail, e.thresholds.max_gaps),
        (150.0, 0.80, 5)
    );
    let e = Limits::new(&ctx(1, Some(35.0), Some(11), 100), &exact);
    assert_eq!((e.thresholds.occupancy_fail, e.thresholds.occupancy_warn), (0.80, 0.90));
    assert!(!l(ctx(1, Some(255.0), Some(44), 100)).exact);
    assert_eq!(l(ctx(1, Some(255.0), Some(44), 100)).headroom_fraction, 0.5);
}

/// The context of a trace: its scope, ranks and GPU time per replay.
#[test]
fn the_context_of_a_trace() {
    let c = Context::of(&analysis(&HEALTHY), 1);
    assert_eq!((c.scope, c.ranks, c.replays, c.kernels_per_replay), (Scope::GraphReplays, 1, 100, Some(44)));
    assert_eq!((c.gpu_us_per_replay, c.gpu_time_from.as_deref()), (Some(255.0), Some("trace")));
    assert_eq!(Context::of(&analysis(&HEALTHY), 3).ranks, 3);
    assert_eq!(Context::of(&analysis(&Case { world: 4, ..HEALTHY }), 2).ranks, 4);
    assert_eq!(Context::of(&analysis(&HEALTHY), 0).ranks, 1);
    let none = Context::of(&analysis(&Case { launches: 0, ..HEALTHY }), 1);
    assert_eq!((none.scope, none.gpu_us_per_replay, none.gpu_time_from), (Scope::NoGraphReplays, None, None));
}

/// Idle-before limit: max(20 µs, 10% of the GPU time per replay), 20 µs without it.
#[test]
fn the_replay_idle_limit() {
    let s = Settings::default();
    assert_eq!(Limits::new(&ctx(1, Some(300.0), Some(44), 100), &s).replay_idle_fail_us(), 30.0);
    assert_eq!(Limits::new(&ctx(1, Some(100.0), Some(44), 100), &s).replay_idle_fail_us(), 20.0);
    assert_eq!(Limits::new(&ctx(1, None, Some(44), 100), &s).replay_idle_fail_us(), 20.0);
}

/// A trace that lost GPU events is inconclusive, each loss told at its threshold: at least
/// `DAMAGE_MIN_REPLAYS` and `DAMAGE_SHARE` of the launches, a GPU record shorter than
/// `DAMAGE_GPU_WINDOW_SHARE` of the host's, or the profiler saying so.
#[test]
fn damage_at_its_thresholds() {
    use launchguard_judge::limits::{DAMAGE_GPU_WINDOW_SHARE, DAMAGE_MIN_REPLAYS, DAMAGE_SHARE};
    let judged = |launches: u64, f: &dyn Fn(&mut Analysis)| {
        let mut a = analysis(&Case { launches, ..HEALTHY });
        f(&mut a);
        launchguard_judge::analysis(a, &Settings::default())
    };
    let share = (DAMAGE_SHARE * 100.0).ceil() as u64;
    let r = judged(100, &|a| a.damage.replays_without_kernels = share);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let c = r.checks.iter().find(|c| c.id == CheckId::TraceDamage).unwrap();
    assert_eq!((c.status, c.value.clone()), (Status::Warn, serde_json::json!(share as f64)));
    assert_eq!(c.limit, serde_json::json!(DAMAGE_SHARE * 100.0));
    assert!(c.hint.is_some());
    assert_eq!(
        r.reason.as_deref(),
        Some(
            format!(
                "the trace lost GPU events, so it cannot say whether the GPU starved: {share} of 100 graph launches ran \
                 no GPU activity in the trace (replays without any kernel)"
            )
            .as_str()
        )
    );
    assert_eq!(judged(100, &|a| a.damage.replays_without_kernels = share - 1).verdict, Verdict::Pass);
    // Few launches: at least DAMAGE_MIN_REPLAYS of them.
    assert_eq!(
        judged(10, &|a| a.damage.replays_without_kernels = DAMAGE_MIN_REPLAYS).verdict,
        Verdict::Inconclusive
    );
    assert_eq!(
        judged(10, &|a| a.damage.replays_without_kernels = DAMAGE_MIN_REPLAYS - 1).verdict,
        Verdict::Pass
    );
    let r = judged(100, &|a| a.damage.replays_unmatched = share);
    assert!(r
        .reason
        .unwrap()
        .contains(&format!("{share} of 100 replays ran kernels that match no other replay's")));
    assert_eq!(judged(100, &|a| a.damage.replays_unmatched = share - 1).verdict, Verdict::Pass);
    // Both counted in the value.
    let r = judged(100, &|a| {
        a.damage.replays_unmatched = share;
        a.damage.replays_without_kernels = 1;
    });
    let c = r.checks.iter().find(|c| c.id == CheckId::TraceDamage).unwrap();
    assert_eq!(c.value, serde_json::json!((share + 1) as f64));
    // A stream gone silent while launches go on.
    let silent = |after: u64| {
        move |a: &mut Analysis| {
            a.damage.silent = Some(launchguard_analysis::model::Silence {
                device: "0".into(),
                stream: "7".into(),
                silent_from_us: 1500.0,
                launches_after: after,
            })
        }
    };
    let r = judged(100, &silent(share));
    assert!(r
        .reason
        .unwrap()
        .contains(&format!("GPU 0 stream 7 went silent at 1.50 ms while {share} more graph launches")));
    assert_eq!(judged(100, &silent(share - 1)).verdict, Verdict::Pass);
    // The GPU's record far shorter than the host's.
    let window = |gpu: f64| {
        move |a: &mut Analysis| {
            a.damage.host_window_us = 1000.0;
            a.damage.gpu_window_us = gpu;
        }
    };
    let short = DAMAGE_GPU_WINDOW_SHARE * 1000.0;
    assert_eq!(judged(100, &window(short - 1.0)).verdict, Verdict::Inconclusive);
    assert_eq!(judged(100, &window(short)).verdict, Verdict::Pass);
    assert_eq!(judged(1, &window(short - 1.0)).verdict, Verdict::Pass);
    assert_eq!(judged(DAMAGE_MIN_REPLAYS, &window(short - 1.0)).verdict, Verdict::Inconclusive);
    assert_eq!(
        judged(100, &|a| {
            a.damage.host_window_us = 0.0;
            a.damage.gpu_window_us = -1.0;
        })
        .verdict,
        Verdict::Pass
    );
    // The profiler's own word.
    let r = judged(100, &|a| a.damage.profiler_messages = vec!["buffer full".into(), "dropped 12".into()]);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(r.reason.unwrap().ends_with("the profiler says so: \"buffer full\"; \"dropped 12\""));
    // A damaged trace stays inconclusive whatever else fails.
    let r = judged(100, &|a| {
        a.damage.replays_without_kernels = 50;
        a.graph_launches.mean_us = Some(5000.0);
    });
    assert_eq!(r.verdict, Verdict::Inconclusive);
}

/// The occupancy message names its window: the steady state of graph replays when time before
/// or after it was left out (either alone is enough), else the whole window.
#[test]
fn the_occupancy_message_names_its_window() {
    let with = |before_us: f64, after_us: f64| {
        let mut a = analysis(&HEALTHY);
        let s = a.devices[0].steady.as_mut().unwrap();
        (s.before_us, s.after_us) = (before_us, after_us);
        check_of(a, CheckId::Occupancy).message
    };
    // The steady window is 1 ms long (the helper's); 2.5 ms before it, 0.4 ms after it.
    assert_eq!(
        with(2500.0, 0.0),
        "GPU 0 busy 95.0% of the 1.00 ms steady state of graph replays (2.50 ms before it and 0.0 µs after it \
         not counted) (fail below 80%, warn below 90%)"
    );
    assert!(with(0.0, 400.0).contains(
        "of the 1.00 ms steady state of graph replays (0.0 µs before it and 400.0 µs after it not counted)"
    ));
    assert!(with(0.0, 0.0).contains("busy 95.0% of a 1.00 ms window ("), "{}", with(0.0, 0.0));
}

/// A launch-bound graph (below 100 µs of GPU time per replay) never fails on occupancy, and the
/// message says so rather than "fail below 0%".
#[test]
fn a_small_graphs_occupancy_never_fails_and_says_so() {
    let c = check_of(analysis(&Case { occupancy: 0.50, span_us: 35.0, ..HEALTHY }), CheckId::Occupancy);
    assert_eq!((c.status, c.limit.clone()), (Status::Warn, serde_json::json!(0.0)));
    assert!(
        c.message
            .contains("busy 50.0% of a 1.00 ms window (never fails; warns below 60%: a replay of 35.0 µs"),
        "{}",
        c.message
    );
}

/// What a damaged trace's hint says: record again when events were lost, look at how the trace
/// was made when its causality is impossible, both when both; each with where to read more.
#[test]
fn the_damage_hint_follows_the_damage() {
    use launchguard_analysis::model::{Anomaly, AnomalyKind};
    let damage = |lost: bool, impossible: bool| {
        let mut a = analysis(&HEALTHY);
        if lost {
            a.damage.replays_without_kernels = 50;
        }
        if impossible {
            a.anomalies =
                vec![Anomaly { kind: AnomalyKind::KernelBeforeLaunch, count: 3, first: "launch 7".into() }];
        }
        let r = launchguard_judge::analysis(a, &Settings::default());
        assert_eq!(r.verdict, Verdict::Inconclusive);
        r.checks.into_iter().find(|c| c.id == CheckId::TraceDamage).unwrap()
    };
    let c = damage(true, false);
    let hint = c.hint.unwrap();
    assert!(hint.starts_with("record again: "), "{hint}");
    assert!(!hint.contains("correlation id"), "{hint}");
    assert!(hint.ends_with("; docs/verdicts.md says how each damage is told"), "{hint}");
    // 50 replays lost against 10% of 100 launches.
    assert_eq!((c.value, c.limit), (serde_json::json!(50.0), serde_json::json!(10.0)));
    let c = damage(false, true);
    let hint = c.hint.unwrap();
    assert!(hint.starts_with("kernels before their launch or launches sharing a correlation id"), "{hint}");
    assert!(!hint.contains("record again"), "{hint}");
    // Impossible causality counts from its first case.
    assert_eq!((c.value, c.limit), (serde_json::json!(3.0), serde_json::json!(1.0)));
    assert!(c.message.starts_with(
        "the trace's causality is impossible, so it cannot say whether the GPU starved: in 3 replays"
    ));
    let c = damage(true, true);
    let hint = c.hint.unwrap();
    assert!(hint.starts_with("record again: ") && hint.contains("; kernels before their launch"), "{hint}");
    assert!(c.message.starts_with("the trace lost GPU events and its causality is impossible"));
}
