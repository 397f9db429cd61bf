//! The checks of what `check` measured besides the trace, each at its limit (defaults of
//! `[check]`: headroom min(50% of the GPU time, 150 µs), run-ahead lost at 90%, residual overhead
//! warning at 3×), and a trace carrying `check`'s context.

use std::collections::BTreeMap;

use launchguard_analysis::context::{Inventory, PhaseReport, WorkloadContext};
use launchguard_judge::config::CheckConfig;
use launchguard_judge::run;
use launchguard_judge::{CheckId, Settings, Status, Verdict};

use crate::trace::{analysis, Case, HEALTHY};

/// `before` and `after` phases: host cost per replay p50, back-to-back host cost, GPU time.
fn phases(before: f64, after: Option<f64>, steady: f64, gpu: Option<f64>) -> BTreeMap<String, PhaseReport> {
    let mut m = BTreeMap::new();
    m.insert("before".to_string(), PhaseReport::from_samples(vec![before; 5], vec![steady; 5], gpu));
    if let Some(a) = after {
        m.insert("after".to_string(), PhaseReport::from_samples(vec![a; 5], Vec::new(), gpu));
    }
    m
}

#[test]
fn launch_headroom_at_its_limit() {
    let cfg = CheckConfig::default();
    let at = |host: f64, gpu: f64| run::launch_headroom(&phases(host, None, 3.0, Some(gpu)), &cfg, "tp0: ");
    // 50% of 200 µs = 100 µs.
    let c = at(100.0, 200.0);
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Fail, serde_json::json!(100.0), serde_json::json!(100.0))
    );
    assert!(c.hint.is_some());
    assert_eq!(
        c.message,
        "tp0: host cost per replay p50 100.0 µs against 200.0 µs of GPU time per replay (50%); fails at 50% or 150 µs"
    );
    let c = at(99.9, 200.0);
    assert_eq!((c.status, c.hint), (Status::Pass, None));
    // 150 µs caps it for a long replay.
    assert_eq!(at(150.0, 1000.0).status, Status::Fail);
    assert_eq!(at(149.9, 1000.0).status, Status::Pass);
    assert_eq!(at(149.9, 1000.0).limit, serde_json::json!(150.0));
    assert_eq!(run::launch_headroom(&BTreeMap::new(), &cfg, "").status, Status::Skip);
    assert_eq!(run::launch_headroom(&phases(3.0, None, 3.0, None), &cfg, "").status, Status::Skip);
}

#[test]
fn run_ahead_at_its_limit() {
    let at = |steady: f64, tp: u32| run::run_ahead(&phases(3.0, None, steady, Some(100.0)), tp, "");
    let c = at(90.0, 1);
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Warn, serde_json::json!(0.9), serde_json::json!(0.9))
    );
    assert!(c.message.ends_with("something synchronizes on each launch"), "{}", c.message);
    assert!(c.hint.is_some());
    assert!(at(90.0, 2).message.contains("NCCL collectives"));
    let c = at(89.9, 1);
    assert_eq!(c.status, Status::Pass);
    assert!(c.message.ends_with("the CPU runs ahead of the GPU"), "{}", c.message);
    let mut no_steady = BTreeMap::new();
    no_steady.insert("before".to_string(), PhaseReport::from_samples(vec![3.0; 5], Vec::new(), Some(100.0)));
    assert_eq!(run::run_ahead(&no_steady, 1, "").status, Status::Skip);
}

#[test]
fn residual_overhead_at_its_limits() {
    let cfg = CheckConfig::default();
    let at = |before: f64, after: f64, gpu: Option<f64>| {
        run::residual_overhead(&phases(before, Some(after), 3.0, gpu), &cfg, "")
    };
    // Run-ahead lost at 90% of the GPU time.
    let c = at(2.0, 90.0, Some(100.0));
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.message.starts_with(
            "after one profiler session a replay's host cost is 90.0 µs (was 2.0), 90% of the GPU's 100.0 µs"
        ),
        "{}",
        c.message
    );
    assert_eq!(c.hint.as_deref(), Some(run::TEARDOWN_HINT));
    assert_eq!(at(2.0, 89.9, Some(100.0)).status, Status::Warn);
    // 3× warns, exactly; below passes.
    let c = at(10.0, 30.0, Some(1000.0));
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Warn, serde_json::json!(3.0), serde_json::json!(3.0))
    );
    assert!(
        c.message.contains("(3.0×; warns at 3.0×, fails when it reaches 90% of the GPU time)"),
        "{}",
        c.message
    );
    let c = at(10.0, 29.9, Some(1000.0));
    assert_eq!((c.status, c.hint), (Status::Pass, None));
    // No GPU time: never lost; a zero host cost before is taken as 1 ns.
    assert_eq!(at(10.0, 5000.0, None).status, Status::Warn);
    assert_eq!(at(0.0, 0.002, None).value, serde_json::json!(2.0));
    // The GPU time after the session first.
    let mut m = phases(2.0, Some(95.0), 3.0, Some(200.0));
    m.get_mut("after").unwrap().gpu_us_per_replay = Some(100.0);
    assert_eq!(run::residual_overhead(&m, &cfg, "").status, Status::Fail);
    m.get_mut("after").unwrap().gpu_us_per_replay = None;
    assert_eq!(run::residual_overhead(&m, &cfg, "").status, Status::Warn);
    assert_eq!(run::residual_overhead(&phases(2.0, None, 3.0, Some(100.0)), &cfg, "").status, Status::Skip);
    assert_eq!(run::host_p50(&m, "before"), Some(2.0));
    assert_eq!(run::gpu_per_replay(&m, "before"), Some(200.0));
    assert_eq!(run::gpu_per_replay(&m, "nothing"), None);
}

#[test]
fn trace_sanity_of_what_the_profiler_recorded() {
    let a = analysis(&HEALTHY);
    let c = run::trace_sanity(&a, 100);
    assert_eq!(
        (c.status, c.message.as_str()),
        (Status::Pass, "100 replays recorded, 44 GPU activities each")
    );
    let c = run::trace_sanity(&a, 99);
    assert_eq!(c.status, Status::Fail);
    assert_eq!(c.message, "the trace holds 100 graph launches; 99 replays ran");
    assert!(c.hint.is_some());
    let mut lost = a.clone();
    lost.replay_summary.without_kernels = 1;
    assert_eq!(run::trace_sanity(&lost, 100).status, Status::Fail);
    let mut lost = a.clone();
    lost.replay_summary.inconsistent = 1;
    let c = run::trace_sanity(&lost, 100);
    assert_eq!(
        c.message,
        "0 of 100 replays have no GPU activity and 1 a kernel count other than 44: the profiler lost events"
    );
    let mut none = a;
    none.devices[0].figures.activities = 0;
    assert!(run::trace_sanity(&none, 100)
        .message
        .starts_with("the profiler recorded no GPU activity at all"));
}

#[test]
fn interception_layers_say_what_is_mapped_and_injected() {
    let mut inv = Inventory {
        mapped_libraries: vec!["/usr/lib/libc.so.6".into()],
        mapped_libraries_after_profiler: vec!["/venv/nvidia/cuda_cupti/lib/libcupti.so.13".into()],
        ..Default::default()
    };
    let c = run::interception_layers(&inv);
    assert_eq!(c.status, Status::Pass);
    assert_eq!(
        c.message,
        "no profiler library mapped at start; mapped by the profiler session: libcupti.so.13 (cupti)"
    );
    assert_eq!(c.value, serde_json::json!(1));
    inv.layer_env.insert("LD_PRELOAD".into(), String::new());
    assert_eq!(run::interception_layers(&inv).status, Status::Pass);
    inv.layer_env.insert("HSA_TOOLS_LIB".into(), "/opt/x.so".into());
    let c = run::interception_layers(&inv);
    assert_eq!(c.status, Status::Warn);
    assert!(c.message.ends_with("; injected by the environment: HSA_TOOLS_LIB=/opt/x.so"), "{}", c.message);
    assert_eq!(c.value, serde_json::json!(2));
    assert!(c.hint.is_some());
}

/// A trace `check` recorded: its context's checks around the trace's, `trace_sanity` instead of
/// `replay_consistency`, the retry said.
#[test]
fn a_trace_with_checks_context() {
    let mut a = analysis(&Case { span_us: 255.0, ..HEALTHY });
    let ctx = serde_json::json!({
        "schema": "launchguard.context/1", "launchguard_version": "0.1.0",
        "workload": {"preset": "reference", "arch": "llama", "layers": 2, "batch": 8, "seq": 1, "hidden": 1024,
                     "heads": 8, "kv_heads": null, "head_dim": null, "ffn": null, "dtype": "bf16",
                     "eager_warmups": 1, "warmups": 1, "replays": 100, "host_replays": 300, "gpu_replays": 100, "device": 0},
        "tp": 1, "rank": 0, "inject_delay_us": 0.0,
        "retried": "the first run's trace lost events",
        "phases": {}, "inventory": null, "linkage": null, "linkage_problem": "no torch library found"
    });
    let mut w: WorkloadContext = serde_json::from_value(ctx).unwrap();
    w.phases = phases(4.5, Some(5.0), 3.0, Some(255.0));
    a.workload = Some(w);
    let r = launchguard_judge::analysis(a, &Settings::default());
    let ids: Vec<String> = r.checks.iter().map(|c| c.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "linkage",
            "interception_layers",
            "gpu_activity",
            "occupancy",
            "gaps",
            "graph_launch",
            "replay_idle",
            "trace_complete",
            "trace_sanity",
            "launch_headroom",
            "sync_step",
            "run_ahead",
            "residual_overhead"
        ]
    );
    let find = |id: CheckId| r.checks.iter().find(|c| c.id == id).unwrap();
    assert_eq!(find(CheckId::Linkage).message, "linkage not inspected: no torch library found");
    assert_eq!(find(CheckId::Linkage).status, Status::Skip);
    assert_eq!(find(CheckId::InterceptionLayers).status, Status::Skip);
    assert!(find(CheckId::TraceSanity)
        .message
        .ends_with("; this is the workload's second run: the first run's trace lost events"));
    assert_eq!(find(CheckId::LaunchHeadroom).status, Status::Pass);
    assert_eq!(r.verdict, Verdict::Pass);
    // Measured with the profiler off: the GPU time per replay comes from the device events.
    assert_eq!(r.limits.context.gpu_time_from.as_deref(), Some("device events"));
    assert_eq!(r.limits.context.preset.as_deref(), Some("reference"));
}

#[test]
fn linkage_without_a_report() {
    let c = run::linkage(None, &[]);
    assert_eq!((c.status, c.message.as_str()), (Status::Skip, "linkage not inspected"));
    let c = run::linkage(Some(&serde_json::json!({"nonsense": 1})), &[]);
    assert_eq!(c.status, Status::Skip);
    assert!(c.message.starts_with("unreadable linkage report: "));
}

/// A trace `check` recorded of `c`, with the host cost per replay p50 `before` the profiler and
/// under it (`profiled`), and `gpu` µs of GPU time per replay from the device events.
fn recorded(c: Case, before: f64, profiled: f64, gpu: f64) -> launchguard_judge::AnalysisReport {
    let mut a = analysis(&c);
    let ctx = serde_json::json!({
        "schema": "launchguard.context/1", "launchguard_version": "0.1.0",
        "workload": {"preset": "tiny", "arch": "llama", "layers": 1, "batch": 1, "seq": 1, "hidden": 256,
                     "heads": 4, "kv_heads": null, "head_dim": null, "ffn": null, "dtype": "bf16",
                     "eager_warmups": 1, "warmups": 1, "replays": 100, "host_replays": 300, "gpu_replays": 100, "device": 0},
        "tp": 1, "rank": 0, "inject_delay_us": 0.0, "retried": null,
        "phases": {}, "inventory": null, "linkage": null, "linkage_problem": "no torch library found"
    });
    let mut w: WorkloadContext = serde_json::from_value(ctx).unwrap();
    w.phases = phases(before, None, 3.0, Some(gpu));
    w.phases.insert("profiled".to_string(), PhaseReport::from_samples(vec![profiled; 5], Vec::new(), None));
    a.workload = Some(w);
    launchguard_judge::analysis(a, &Settings::default())
}

/// A launch-bound graph (below 100 µs of GPU time) starved by the profiler alone: its idle time
/// before each replay and its gaps warn instead of failing, with why, when a launch cost the host
/// less than half the GPU's replay with the profiler off (`check.headroom_fraction` 0.5) and at
/// least the whole replay under it. Anything else still fails.
#[test]
fn a_small_graph_starved_by_the_profiler_alone_warns() {
    // The GPU waits 60 µs before each replay: past max(20 µs, 10% of 40 µs) = 20 µs. 9 gaps > 5.
    let starved = Case { span_us: 40.0, idle_us: 60.0, gaps: 9, ..HEALTHY };
    let find = |r: &launchguard_judge::AnalysisReport, id: CheckId| {
        r.checks.iter().find(|c| c.id == id).unwrap().clone()
    };
    let r = recorded(starved, 5.0, 50.0, 40.0);
    let why =
        "; warns only: under the profiler a launch cost the host 50.0 µs p50, more than the GPU's 40.0 µs \
               replay, against 5.0 µs with the profiler off";
    for id in [CheckId::ReplayIdle, CheckId::Gaps] {
        let c = find(&r, id.clone());
        assert_eq!(c.status, Status::Warn, "{id}: {}", c.message);
        assert!(c.message.ends_with(why), "{id}: {}", c.message);
        assert!(c.hint.unwrap().starts_with("the profiler's own cost per launch starves this graph"));
    }
    // Gaps within their limit are not touched.
    let r = recorded(Case { gaps: 0, ..starved }, 5.0, 50.0, 40.0);
    assert_eq!(find(&r, CheckId::Gaps).status, Status::Pass);
    assert!(!find(&r, CheckId::Gaps).message.contains("warns only"));
    // A launch under the profiler costing exactly the replay is enough.
    assert_eq!(find(&recorded(starved, 5.0, 40.0, 40.0), CheckId::ReplayIdle).status, Status::Warn);
    // Not the profiler alone: a launch cost half the replay (20 of 40 µs) or more unprofiled, or
    // less than the replay under the profiler.
    for (before, profiled) in [(20.0, 50.0), (30.0, 50.0), (5.0, 39.9)] {
        let r = recorded(starved, before, profiled, 40.0);
        for id in [CheckId::ReplayIdle, CheckId::Gaps] {
            let c = find(&r, id.clone());
            assert_eq!(c.status, Status::Fail, "{before} {profiled} {id}");
            assert!(!c.message.contains("warns only"), "{}", c.message);
        }
    }
    // A graph of 255 µs is not launch-bound: its host waits for the GPU under the profiler.
    let r = recorded(Case { span_us: 255.0, ..starved }, 5.0, 300.0, 255.0);
    assert_eq!(find(&r, CheckId::ReplayIdle).status, Status::Fail);
    assert_eq!(find(&r, CheckId::Gaps).status, Status::Fail);
}

/// The linkage check of a report `check` wrote on an H200 (tests/data/h200-check/tiny): the
/// backend and the chain that links it, unresolved dependencies counted, a limit only where
/// `linkage.forbid` lists something.
#[test]
fn linkage_of_a_real_report() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/h200-check/tiny/run00-delay0.json");
    let result: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let report = result["linkage"].clone();
    // libtorch_cpu.so needs libcupti.so.13 directly; every dependency resolved.
    let c = run::linkage(Some(&report), &[]);
    assert_eq!(c.status, Status::Pass);
    assert_eq!(c.message, "PyTorch links profiler backend cupti (libtorch_cpu.so → libcupti.so.13)");
    assert_eq!((c.value, c.limit), (serde_json::json!("cupti"), serde_json::Value::Null));
    // Forbidden: fails, and the limit is the list.
    let c = run::linkage(Some(&report), &["cupti".to_string()]);
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.message.starts_with(
            "PyTorch links profiler backend cupti (libtorch_cpu.so → libcupti.so.13); forbidden by linkage.forbid: "
        ),
        "{}",
        c.message
    );
    assert_eq!(c.limit, serde_json::json!(["cupti"]));
    // No profiler library found, two dependencies unresolved.
    let mut other = report.clone();
    other["profiler_libraries"] = serde_json::json!([]);
    other["unresolved"] = serde_json::json!([
        {"name": "libfoo.so", "needed_by": ["libtorch_cpu.so"], "reason": "not found"},
        {"name": "libbar.so", "needed_by": ["libtorch_cpu.so"], "reason": "not found"}
    ]);
    let c = run::linkage(Some(&other), &[]);
    assert_eq!(c.message, "PyTorch links profiler backend cupti; 2 dependencies unresolved");
}
