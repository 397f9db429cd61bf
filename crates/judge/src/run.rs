//! The checks of what `check` measured besides the trace (its context): the linkage of the
//! PyTorch that ran, the interception layers in the process, whether the profiler recorded what
//! ran, the launch headroom, the step-synchronous step time and run-ahead with the profiler off,
//! and what the profiler left behind. `analyze` of a trace `check` kept judges them alike, from the trace's context event.

use std::collections::BTreeMap;

use launchguard_analysis::context::{Inventory, PhaseReport, WorkloadContext};
use launchguard_analysis::Analysis;
use launchguard_linkage::{forbidden, LinkageReport};

use crate::config::CheckConfig;
use crate::verdict::{Check, CheckId, Status};

/// Host p50 of a phase, if measured.
pub fn host_p50(phases: &BTreeMap<String, PhaseReport>, phase: &str) -> Option<f64> {
    phases.get(phase).and_then(|p| p.host_p50_us)
}

/// GPU µs per replay of a phase, if measured.
pub fn gpu_per_replay(phases: &BTreeMap<String, PhaseReport>, phase: &str) -> Option<f64> {
    phases.get(phase).and_then(|p| p.gpu_us_per_replay)
}

/// The checks of a context, in report order: those before the trace checks (what ran) and those
/// after them (how it ran).
pub(crate) fn checks(
    a: &Analysis,
    ctx: &WorkloadContext,
    forbid: &[String],
    cfg: &CheckConfig,
) -> (Vec<Check>, Vec<Check>) {
    let linkage = match (&ctx.linkage, &ctx.linkage_problem) {
        (None, Some(why)) => {
            Check::new(CheckId::Linkage, Status::Skip, None, None, format!("linkage not inspected: {why}"))
        }
        (report, _) => linkage(report.as_ref(), forbid),
    };
    let before = vec![
        linkage,
        ctx.inventory.as_ref().map_or_else(
            || {
                Check::new(
                    CheckId::InterceptionLayers,
                    Status::Skip,
                    None,
                    None,
                    "no inventory of the process",
                )
            },
            interception_layers,
        ),
    ];
    let mut sanity = trace_sanity(a, ctx.workload.replays);
    if let Some(why) = &ctx.retried {
        sanity.message.push_str(&format!("; this is the workload's second run: {why}"));
    }
    let after = vec![
        sanity,
        launch_headroom(&ctx.phases, cfg, ""),
        sync_step(&ctx.phases, cfg, ""),
        run_ahead(&ctx.phases, ctx.tp, ""),
        residual_overhead(&ctx.phases, cfg, ""),
    ];
    (before, after)
}

/// The linkage check: the profiler backend PyTorch links is always reported; it fails only where
/// `linkage.forbid` says so.
pub fn linkage(report: Option<&serde_json::Value>, forbid: &[String]) -> Check {
    let Some(value) = report else {
        return Check::new(CheckId::Linkage, Status::Skip, None, None, "linkage not inspected");
    };
    let report: LinkageReport = match serde_json::from_value(value.clone()) {
        Ok(r) => r,
        Err(e) => {
            return Check::new(
                CheckId::Linkage,
                Status::Skip,
                None,
                None,
                format!("unreadable linkage report: {e}"),
            )
        }
    };
    let violations = match forbidden(&report, forbid) {
        Ok(v) => v,
        Err(e) => {
            return Check::new(CheckId::Linkage, Status::Fail, None, None, format!("linkage.forbid: {e}"))
        }
    };
    let chain = report
        .profiler_libraries
        .iter()
        // `via` runs from the inspected library down to this one, itself included.
        .map(|l| l.via.join(" → "))
        .collect::<Vec<_>>()
        .join("; ");
    let mut msg = format!("PyTorch links profiler backend {}", report.profiler_backend.as_str());
    if !chain.is_empty() {
        msg.push_str(&format!(" ({chain})"));
    }
    if !report.unresolved.is_empty() {
        msg.push_str(&format!("; {} dependencies unresolved", report.unresolved.len()));
    }
    let (status, msg) = if violations.is_empty() {
        (Status::Pass, msg)
    } else {
        (Status::Fail, format!("{msg}; forbidden by linkage.forbid: {}", violations.join("; ")))
    };
    let mut c = Check::new(CheckId::Linkage, status, None, None, msg);
    c.value = serde_json::json!(report.profiler_backend.as_str());
    if !forbid.is_empty() {
        c.limit = serde_json::json!(forbid);
    }
    c
}

/// What avoids the residual overhead, and what that costs (h200-ground-truth.md).
pub const TEARDOWN_HINT: &str =
    "set TEARDOWN_CUPTI=1 so that CUPTI is detached when a profiler session ends \
     (pytorch#144455); the cost: a later profiler session in the same process records no GPU events. \
     Or profile in a separate process from the one that serves";

/// Launch headroom with the profiler never started: the host cost of a replay against the GPU
/// time of a replay. At half the GPU time or more, a serving loop with any host work per step
/// starves the GPU.
pub fn launch_headroom(phases: &BTreeMap<String, PhaseReport>, cfg: &CheckConfig, label: &str) -> Check {
    let (Some(host), Some(gpu)) = (host_p50(phases, "before"), gpu_per_replay(phases, "before")) else {
        return Check::new(
            CheckId::LaunchHeadroom,
            Status::Skip,
            None,
            None,
            "no unprofiled replays measured",
        );
    };
    let limit = (cfg.headroom_fraction * gpu).min(cfg.headroom_abs_us);
    let status = if host >= limit { Status::Fail } else { Status::Pass };
    let msg = format!(
        "{label}host cost per replay p50 {host:.1} µs against {gpu:.1} µs of GPU time per replay ({:.0}%); \
         fails at {:.0}% or {} µs",
        100.0 * host / gpu,
        100.0 * cfg.headroom_fraction,
        cfg.headroom_abs_us
    );
    let check = Check::new(CheckId::LaunchHeadroom, status, Some(host), Some(limit), msg);
    if status == Status::Fail {
        check.with_hint(
            "each graph launch costs the host too much before any profiler ran: look for interception layers \
             (LD_PRELOAD, CUDA_INJECTION64_PATH, HSA_TOOLS_LIB, rocprofiler-sdk before 1.3.2) in the inventory",
        )
    } else {
        check
    }
}

/// The step-synchronous replays with the profiler off, as a server decodes: each replay's output
/// read back before the next launch, so no queue hides the host's cost. Each step's host time
/// against the GPU time per replay of back-to-back replays (the GPU's own time, which no host
/// cost reaches while the queue is full): the median judges a cost every step pays, the 99th
/// percentile a stall now and then. The message states what the host costs a step on average.
pub fn sync_step(phases: &BTreeMap<String, PhaseReport>, cfg: &CheckConfig, label: &str) -> Check {
    let before = phases.get("before");
    let (Some(step), Some(gpu)) =
        (before.and_then(|p| p.sync_step), before.and_then(|p| p.gpu_us_per_replay).filter(|g| *g > 0.0))
    else {
        return Check::new(
            CheckId::SyncStep,
            Status::Skip,
            None,
            None,
            "no step-synchronous replays measured (a workload of an earlier launchguard)",
        );
    };
    let median_limit = (cfg.sync_step_fail_fraction * gpu).max(cfg.sync_step_fail_us);
    let tail_limit = (cfg.sync_tail_fail_fraction * gpu).max(cfg.sync_tail_fail_us);
    let (over_median, over_tail) = (step.p50_us - gpu, step.p99_us - gpu);
    let median_fails = over_median >= median_limit;
    let tail_fails = over_tail >= tail_limit;
    let cost = 100.0 * (step.mean_us / gpu - 1.0);
    let mut msg = format!(
        "{label}{cost:+.0}% per step when each step is read back: {:.1} µs a step on average against {gpu:.1} µs of \
         GPU time per replay (p50 {:.1}, p90 {:.1}, p99 {:.1} µs over {} steps); fails at {:.1} µs over the GPU \
         time at p50 or {:.1} µs at p99",
        step.mean_us, step.p50_us, step.p90_us, step.p99_us, step.count, median_limit, tail_limit
    );
    let (status, value, limit) = match (median_fails, tail_fails) {
        (true, _) => (Status::Fail, over_median, median_limit),
        (false, true) => (Status::Fail, over_tail, tail_limit),
        (false, false) => (Status::Pass, over_median, median_limit),
    };
    if median_fails {
        msg.push_str(&format!(": every step pays {over_median:.1} µs over the GPU time (p50)"));
    }
    if tail_fails {
        msg.push_str(&format!(
            "{} one step in a hundred pays {over_tail:.1} µs over it (p99): steps stall",
            if median_fails { ", and" } else { ":" }
        ));
    }
    let check = Check::new(CheckId::SyncStep, status, Some(value), Some(limit), msg);
    if status == Status::Fail {
        check.with_hint(
            "a server that reads each decode step's tokens before launching the next pays the host's cost of every \
             launch in full, however far ahead back-to-back replays run: look at what runs before each graph launch \
             (interception layers in the inventory, Python work per step, a stall now and then: a garbage collection, \
             a lock, a log flush)",
        )
    } else {
        check
    }
}

/// A back-to-back replay lasting at least this fraction of the GPU's replay means the launching
/// thread waits for the GPU.
const BLOCKED_FRACTION: f64 = 0.9;

/// CPU run-ahead with the profiler off: back-to-back replays, as a serving loop issues them. When
/// each call lasts as long as the GPU's replay, the launching thread is blocked and the CPU cannot
/// run ahead — with collectives in the graph (TP > 1) that is how the stack behaves, not the
/// profiler, so it is stated and warned about, never failed.
pub fn run_ahead(phases: &BTreeMap<String, PhaseReport>, tp: u32, label: &str) -> Check {
    let before = phases.get("before");
    let (Some(steady), Some(gpu)) =
        (before.and_then(|p| p.steady_host_p50_us), before.and_then(|p| p.gpu_us_per_replay))
    else {
        return Check::new(CheckId::RunAhead, Status::Skip, None, None, "no back-to-back replays measured");
    };
    let fraction = steady / gpu;
    if fraction >= BLOCKED_FRACTION {
        let why = if tp > 1 {
            "the NCCL collectives in the graph block the launching thread: each replay() returns only when the GPU has run the previous one, so the CPU cannot run ahead of the GPU (the stack's behaviour with TP > 1, not the profiler's)"
        } else {
            "replay() blocks until the GPU is done although nothing else runs: something synchronizes on each launch"
        };
        Check::new(
            CheckId::RunAhead,
            Status::Warn,
            Some(fraction),
            Some(BLOCKED_FRACTION),
            format!("{label}back-to-back replays cost the host {steady:.1} µs each against {gpu:.1} µs of GPU time: {why}"),
        )
        .with_hint("any host work per decode step now adds to the step time; launch from a thread that does nothing else")
    } else {
        Check::new(
            CheckId::RunAhead,
            Status::Pass,
            Some(fraction),
            Some(BLOCKED_FRACTION),
            format!(
                "{label}back-to-back replays cost the host {steady:.1} µs each against {gpu:.1} µs of GPU time: the CPU runs ahead of the GPU"
            ),
        )
    }
}

/// Residual overhead: the host cost of a replay after one profiler session ended, against before.
pub fn residual_overhead(phases: &BTreeMap<String, PhaseReport>, cfg: &CheckConfig, label: &str) -> Check {
    let (Some(before), Some(after)) = (host_p50(phases, "before"), host_p50(phases, "after")) else {
        return Check::new(
            CheckId::ResidualOverhead,
            Status::Skip,
            None,
            None,
            "no replays after the profiler session",
        );
    };
    let gpu = gpu_per_replay(phases, "after").or(gpu_per_replay(phases, "before")).unwrap_or(f64::INFINITY);
    let ratio = after / before.max(1e-3);
    // Lost run-ahead means a replay costs the host about what it costs the GPU (the 308-kernel
    // graph: 1142 µs against 1154 µs). Half the GPU time, the headroom limit, would call a 35 µs
    // launch-bound graph lost at 18 µs, which healthy H200s reach after a profiler session.
    let run_ahead_lost = after >= BLOCKED_FRACTION * gpu;
    let status = if run_ahead_lost {
        Status::Fail
    } else if ratio >= cfg.residual_warn_ratio {
        Status::Warn
    } else {
        Status::Pass
    };
    let msg = if run_ahead_lost {
        format!(
            "{label}after one profiler session a replay's host cost is {after:.1} µs (was {before:.1}), {:.0}% of the \
             GPU's {gpu:.1} µs: the CPU can no longer run ahead of the GPU for the rest of the process",
            100.0 * after / gpu
        )
    } else {
        format!(
            "{label}host cost per replay p50 {after:.1} µs after the profiler session against {before:.1} before \
             ({ratio:.1}×; warns at {:.1}×, fails when it reaches {:.0}% of the GPU time)",
            cfg.residual_warn_ratio,
            100.0 * BLOCKED_FRACTION
        )
    };
    let check =
        Check::new(CheckId::ResidualOverhead, status, Some(ratio), Some(cfg.residual_warn_ratio), msg);
    if status >= Status::Warn {
        check.with_hint(TEARDOWN_HINT)
    } else {
        check
    }
}

/// The profiler recorded the replays that ran, each with the same number of GPU activities.
pub fn trace_sanity(analysis: &Analysis, expected_replays: u32) -> Check {
    let s = &analysis.replay_summary;
    let gpu: u64 = analysis.devices.iter().map(|d| d.figures.activities).sum();
    let fail = |msg: String| {
        Check::new(CheckId::TraceSanity, Status::Fail, Some(s.count as f64), Some(expected_replays as f64), msg).with_hint(
            "the profiler lost events: its figures cannot be trusted; check TEARDOWN_CUPTI / KINETO_* settings and \
             whether another profiler holds the GPU",
        )
    };
    if gpu == 0 {
        return fail(
            "the profiler recorded no GPU activity at all (a trace without GPU events is not 0% occupancy)"
                .into(),
        );
    }
    if s.count != expected_replays as u64 {
        return fail(format!("the trace holds {} graph launches; {expected_replays} replays ran", s.count));
    }
    if s.without_kernels > 0 || s.inconsistent > 0 {
        return fail(format!(
            "{} of {} replays have no GPU activity and {} a kernel count other than {}: the profiler lost events",
            s.without_kernels,
            s.count,
            s.inconsistent,
            s.kernels_mode.unwrap_or(0)
        ));
    }
    Check::new(
        CheckId::TraceSanity,
        Status::Pass,
        Some(s.count as f64),
        Some(expected_replays as f64),
        format!("{} replays recorded, {} GPU activities each", s.count, s.kernels_mode.unwrap_or(0)),
    )
}

/// Variables that load a tool into every launch path: set, they are the first suspects.
const INJECTION_VARS: [&str; 5] =
    ["LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "HSA_TOOLS_LIB", "ROCP_TOOL_LIBRARIES"];

/// The profiling and interception layers actually in the workload process: mapped libraries
/// (before and after the profiler session) and the variables that load them. Reported always;
/// a warning when a variable injects a tool into every launch.
pub fn interception_layers(inv: &Inventory) -> Check {
    let describe = |paths: &[String]| -> Vec<String> {
        paths
            .iter()
            .filter_map(|p| {
                let lib = launchguard_linkage::classify_library_name(p)?;
                let name = p.rsplit('/').next().unwrap_or(p);
                Some(format!("{name} ({})", lib.kind.as_str()))
            })
            .collect()
    };
    let before = describe(&inv.mapped_libraries);
    let after = describe(&inv.mapped_libraries_after_profiler);
    let injected: Vec<String> = INJECTION_VARS
        .iter()
        .filter_map(|k| inv.layer_env.get(*k).filter(|v| !v.is_empty()).map(|v| format!("{k}={v}")))
        .collect();
    let mut parts = vec![if before.is_empty() {
        "no profiler library mapped at start".to_string()
    } else {
        format!("mapped at start: {}", before.join(", "))
    }];
    if !after.is_empty() {
        parts.push(format!("mapped by the profiler session: {}", after.join(", ")));
    }
    if !injected.is_empty() {
        parts.push(format!("injected by the environment: {}", injected.join(", ")));
    }
    let status = if injected.is_empty() { Status::Pass } else { Status::Warn };
    let mut c = Check::new(CheckId::InterceptionLayers, status, None, None, parts.join("; "));
    c.value = serde_json::json!(before.len() + after.len() + injected.len());
    if status == Status::Warn {
        c.with_hint("a tool injected into every process adds to each launch; compare with a run without it")
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(before: f64, after: f64, gpu: f64) -> BTreeMap<String, PhaseReport> {
        let mut m = BTreeMap::new();
        m.insert("before".into(), PhaseReport::from_samples(vec![before; 5], Vec::new(), Some(gpu)));
        m.insert("after".into(), PhaseReport::from_samples(vec![after; 5], Vec::new(), Some(gpu)));
        m
    }

    #[test]
    fn headroom_against_ground_truth_figures() {
        let cfg = CheckConfig::default();
        // Reference graph on the H200: 4.5 µs host, 255 µs GPU → pass.
        assert_eq!(launch_headroom(&phases(4.5, 25.3, 255.2), &cfg, "").status, Status::Pass);
        // 300 µs injected per launch → fail.
        assert_eq!(launch_headroom(&phases(303.0, 303.0, 255.2), &cfg, "").status, Status::Fail);
        // Tiny graph (35 µs GPU) with 25 µs injected → 27.7 ≥ 17.6 → fail.
        assert_eq!(launch_headroom(&phases(27.7, 27.7, 35.3), &cfg, "").status, Status::Fail);
        // Absolute limit: a slow GPU replay does not excuse a 200 µs launch.
        assert_eq!(launch_headroom(&phases(200.0, 200.0, 5000.0), &cfg, "").status, Status::Fail);
    }

    #[test]
    fn run_ahead_against_ground_truth_figures() {
        let with_steady = |steady: f64, gpu: f64| {
            let mut m = BTreeMap::new();
            m.insert(
                "before".to_string(),
                PhaseReport::from_samples(vec![3.0; 5], vec![steady; 5], Some(gpu)),
            );
            m
        };
        // TP=1 on the H200: 2.6–4.7 µs per back-to-back replay against 255 µs of GPU time.
        assert_eq!(run_ahead(&with_steady(4.7, 255.2), 1, "").status, Status::Pass);
        // TP=2: 267–269 µs against 273 µs: the launching thread is blocked.
        let c = run_ahead(&with_steady(268.0, 273.0), 2, "");
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.message.contains("NCCL collectives in the graph block the launching thread"),
            "{}",
            c.message
        );
    }

    #[test]
    fn residual_overhead_against_ground_truth_figures() {
        let cfg = CheckConfig::default();
        // Reference graph: 4.5 → 25.3 µs (5.6×) warns; the CPU still runs ahead.
        assert_eq!(residual_overhead(&phases(4.5, 25.3, 255.2), &cfg, "").status, Status::Warn);
        // 308-kernel graph: 2.9 → 1142 µs against 1154 µs of GPU time → fail.
        assert_eq!(residual_overhead(&phases(2.9, 1142.3, 1153.7), &cfg, "").status, Status::Fail);
        // The tiny graph on a healthy H200: 3.1 → 18.5 µs against 36.1 µs of GPU time (51%): the
        // CPU still runs ahead; a 6× ratio warns.
        assert_eq!(residual_overhead(&phases(3.1, 18.5, 36.1), &cfg, "").status, Status::Warn);
        // No change → pass.
        assert_eq!(residual_overhead(&phases(3.0, 3.5, 255.0), &cfg, "").status, Status::Pass);
    }

    /// A before-phase with step-synchronous steps and the GPU time per replay.
    fn synced(steps: Vec<f64>, gpu: f64) -> BTreeMap<String, PhaseReport> {
        let mut m = BTreeMap::new();
        m.insert(
            "before".to_string(),
            PhaseReport::from_samples(vec![3.0; 5], Vec::new(), Some(gpu)).with_sync(steps, Vec::new()),
        );
        m
    }

    #[test]
    fn sync_step_against_the_issues_figures() {
        let cfg = CheckConfig::default();
        // 270 steps of 272.8 µs and 30 of 2272.8 (2 ms before every 10th launch), in launch order.
        let every10: Vec<f64> = (1..=300).map(|i| if i % 10 == 0 { 2272.8 } else { 272.8 }).collect();
        // (steps, GPU µs per replay, status, value, limit, per-step cost stated)
        type Case = (Vec<f64>, f64, Status, f64, f64, &'static str);
        let cases: Vec<Case> = vec![
            // Healthy reference on an H200: 272.8 against 254.9 → 17.9 µs over; the limit is
            // max(50, 0.35 × 254.9 = 89.215); 272.8 / 254.9 = 1.0702.
            (vec![272.8; 300], 254.9, Status::Pass, 17.9, 89.215, "+7% per step"),
            // +100 µs per launch: 373.1 → 118.2 over ≥ 89.215; 373.1 / 254.9 = 1.4637.
            (vec![373.1; 300], 254.9, Status::Fail, 118.2, 89.215, "+46% per step"),
            // +25 µs per launch: 302.7 → 47.8 over, below the limit.
            (vec![302.7; 300], 254.9, Status::Pass, 47.8, 89.215, "+19% per step"),
            // 2 ms every 10th: the median is healthy (17.9 over), p99 (between the 297th and
            // 298th of 300 sorted steps, both stalled) is 2272.8 → 2017.9 over ≥ max(500,
            // 0.5 × 254.9); the mean 272.8 + 30 × 2000 / 300 = 472.8, 472.8 / 254.9 = 1.8549.
            (every10.clone(), 254.9, Status::Fail, 2017.9, 500.0, "+85% per step"),
            // tiny (35.3 µs of GPU time): reading back costs a fixed ~20 µs, under the 50 µs floor;
            // 55.3 / 35.3 = 1.5666.
            (vec![55.3; 300], 35.3, Status::Pass, 20.0, 50.0, "+57% per step"),
            // tiny with +50 µs per launch: 70 over ≥ 50; 105.3 / 35.3 = 2.983.
            (vec![105.3; 300], 35.3, Status::Fail, 70.0, 50.0, "+198% per step"),
            // At the limit exactly: 200 µs of GPU time, max(50, 70) = 70 over fails; just below passes.
            (vec![270.0; 300], 200.0, Status::Fail, 70.0, 70.0, "+35% per step"),
            (vec![269.5; 300], 200.0, Status::Pass, 69.5, 70.0, "+35% per step"),
            // qwen3-0.6b (2124.5 µs): 2 ms every 10th is over the tail limit max(500, 1062.25).
            (
                (1..=300).map(|i| if i % 10 == 0 { 4154.5 } else { 2154.5 }).collect(),
                2124.5,
                Status::Fail,
                2030.0,
                1062.25,
                "+11% per step",
            ),
        ];
        for (steps, gpu, status, value, limit, cost) in cases {
            let c = sync_step(&synced(steps, gpu), &cfg, "");
            assert_eq!(c.status, status, "{}", c.message);
            assert!(
                (c.value.as_f64().unwrap() - value).abs() < 1e-6,
                "{} vs {value}: {}",
                c.value,
                c.message
            );
            assert!(
                (c.limit.as_f64().unwrap() - limit).abs() < 1e-6,
                "{} vs {limit}: {}",
                c.limit,
                c.message
            );
            assert!(c.message.starts_with(cost), "{cost}: {}", c.message);
            assert_eq!(c.hint.is_some(), status == Status::Fail, "{}", c.message);
        }
        // What the every-10th stall fails on is said: the tail, not the median.
        let c = sync_step(&synced(every10, 254.9), &cfg, "");
        assert!(
            c.message.contains("one step in a hundred pays 2017.9 µs over it (p99): steps stall"),
            "{}",
            c.message
        );
        assert!(!c.message.contains("every step pays"), "{}", c.message);
        // The limits are the settings' (a user's, stated): 10% and 10 µs fail the healthy run.
        let strict =
            CheckConfig { sync_step_fail_fraction: 0.05, sync_step_fail_us: 10.0, ..CheckConfig::default() };
        assert_eq!(sync_step(&synced(vec![272.8; 300], 254.9), &strict, "").status, Status::Fail);
    }

    #[test]
    fn sync_step_skips_without_steps_or_gpu_time() {
        let cfg = CheckConfig::default();
        // A workload of an earlier version: no step-synchronous samples.
        assert_eq!(sync_step(&phases(4.5, 25.3, 255.2), &cfg, "").status, Status::Skip);
        assert_eq!(sync_step(&synced(vec![272.8; 10], 0.0), &cfg, "").status, Status::Skip);
        assert_eq!(sync_step(&BTreeMap::new(), &cfg, "").status, Status::Skip);
    }

    #[test]
    fn interception_layers_warn_only_on_injection() {
        let mut inv = Inventory {
            mapped_libraries: vec![
                "/venv/nvidia/cuda_cupti/lib/libcupti.so.13".into(),
                "/usr/lib/libc.so.6".into(),
            ],
            ..Default::default()
        };
        let c = interception_layers(&inv);
        assert_eq!(c.status, Status::Pass);
        assert!(c.message.contains("libcupti.so.13 (cupti)"), "{}", c.message);
        inv.layer_env.insert("CUDA_INJECTION64_PATH".into(), "/opt/tool.so".into());
        assert_eq!(interception_layers(&inv).status, Status::Warn);
    }
}
