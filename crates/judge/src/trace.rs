//! The checks of one trace's figures: one function per check, limits from [`Limits`].

use launchguard_analysis::model::{Analysis, Device, Figures, ReplaySummary};
use launchguard_analysis::units::human_us;

use crate::config::LaunchStatistic;
use crate::limits::{Limits, Scope};
use crate::verdict::{Check, Status};

/// The trace checks of an analysis, in report order. With `check`'s context the strict
/// `trace_sanity` replaces `replay_consistency` (see [`crate::run`]).
pub(crate) fn checks(
    a: &Analysis,
    l: &Limits,
    rank_occupancy: Option<&dyn Fn(&Limits) -> Check>,
) -> Vec<Check> {
    let mut out = vec![gpu_activity(a)];
    if a.devices.is_empty() {
        for id in ["occupancy", "gaps"] {
            out.push(Check::new(id, Status::Skip, None, None, "no GPU activity to measure"));
        }
    } else {
        let worst = worst_device(&a.devices, |f| f.occupancy);
        let device = occupancy(worst.0, worst.1, &a.replay_summary, l);
        out.push(match rank_occupancy {
            Some(of_rank) if device.status != Status::Skip => of_rank(l),
            _ => device,
        });
        let most_gaps = worst_device(&a.devices, |f| -(f.gaps.over_threshold as f64));
        out.push(gaps(most_gaps.0, most_gaps.1, l));
    }
    out.push(graph_launch(a, l));
    out.push(replay_idle(a, l));
    if a.workload.is_none() {
        out.push(replay_consistency(a));
    }
    out.push(trace_complete(a));
    out
}

/// The figures a device is judged on: its steady state of graph replays when it has one.
pub(crate) fn judged_figures(d: &Device) -> &Figures {
    d.steady.as_ref().map_or(&d.figures, |s| &s.figures)
}

/// The device whose judged figures give the lowest `key`; the worst decides.
fn worst_device(devices: &[Device], key: impl Fn(&Figures) -> f64) -> (&Device, &Figures) {
    devices
        .iter()
        .map(|d| (d, judged_figures(d)))
        .min_by(|x, y| key(x.1).total_cmp(&key(y.1)))
        .expect("at least one device")
}

fn gpu_activity(a: &Analysis) -> Check {
    let n: u64 = a.devices.iter().map(|d| d.figures.activities).sum();
    if n == 0 {
        return Check::new(
            "gpu_activity",
            Status::Fail,
            Some(0.0),
            None,
            "no GPU activity in the trace: the profiler recorded no kernels, copies or fills",
        )
        .with_hint(
            "profile with GPU activities enabled (torch.profiler activities=[CPU, CUDA]); a trace with CPU events \
             only cannot show GPU starvation",
        );
    }
    Check::new(
        "gpu_activity",
        Status::Pass,
        Some(n as f64),
        None,
        format!("{n} GPU activities on {} device(s)", a.devices.len()),
    )
}

/// Why a graph-replay check does not apply to a trace of this scope, if it does not.
fn out_of_scope(l: &Limits, what: &str) -> Option<String> {
    match l.context.scope {
        Scope::GraphReplays => None,
        Scope::NoGraphReplays => Some(format!(
            "no graph replay in the trace: {what} is judged on graph replays only (set its limit to judge this trace anyway)"
        )),
        Scope::MixedWork => Some(format!(
            "graph replays launch {:.0}% of the GPU activities between the first replay and the last: {what} there measures \
             the other work, not graph launches (set its limit to judge it anyway)",
            100.0 * l.context.replay_share.unwrap_or(0.0)
        )),
    }
}

/// The occupancy status of `occ` against the limits in force.
pub(crate) fn occupancy_status(occ: f64, l: &Limits) -> Status {
    let th = &l.thresholds;
    if occ < th.occupancy_fail {
        Status::Fail
    } else if occ < th.occupancy_warn {
        Status::Warn
    } else {
        Status::Pass
    }
}

/// The limits of the occupancy check in words, with why they were adapted.
pub(crate) fn occupancy_limits_text(l: &Limits) -> String {
    let th = &l.thresholds;
    let limits = if th.occupancy_fail > 0.0 {
        format!("fail below {:.0}%, warn below {:.0}%", th.occupancy_fail * 100.0, th.occupancy_warn * 100.0)
    } else {
        format!("never fails; warns below {:.0}%", th.occupancy_warn * 100.0)
    };
    match l.why("occupancy_fail").or(l.why("occupancy_warn")) {
        Some(why) => format!("{limits}: {why}"),
        None => limits,
    }
}

fn occupancy(d: &Device, f: &Figures, replays: &ReplaySummary, l: &Limits) -> Check {
    if let Some(why) = out_of_scope(l, "occupancy") {
        if !l.explicit_occupancy {
            return Check::new("occupancy", Status::Skip, Some(f.occupancy), None, why);
        }
    }
    let occ = f.occupancy;
    let status = occupancy_status(occ, l);
    let window = match &d.steady {
        Some(s) if s.before_us > 0.0 || s.after_us > 0.0 => format!(
            "the {} steady state of graph replays ({} before it and {} after it not counted)",
            human_us(f.window_us),
            human_us(s.before_us),
            human_us(s.after_us)
        ),
        _ => format!("a {} window", human_us(f.window_us)),
    };
    let msg = format!("GPU {} busy {:.1}% of {window} ({})", d.device, occ * 100.0, occupancy_limits_text(l));
    let check = Check::new("occupancy", status, Some(occ), Some(l.thresholds.occupancy_fail), msg);
    if status == Status::Pass {
        check
    } else {
        check.with_hint(occupancy_hint(replays, f))
    }
}

/// Where the idle time is: between replays (the GPU waits for the host) or inside them while the
/// host is ahead (the graph's own gaps between kernels, which no launch fix removes).
fn occupancy_hint(r: &ReplaySummary, f: &Figures) -> String {
    let host_ahead = matches!((r.latency_p50_us, r.gpu_span_p50_us), (Some(lat), Some(span)) if lat > span);
    let idle_before = r.steady_idle_before_p50_us.or(r.idle_before_p50_us).unwrap_or(f64::INFINITY);
    if host_ahead && idle_before < IDLE_BEFORE_SMALL_US {
        format!(
            "the host runs ahead of the GPU (a launch waits {} p50 before its first kernel) and a replay starts {} after \
             the previous work: the idle time lies in short gaps between kernels inside each replay (longest {}), the \
             graph's own, not launch overhead",
            human_us(r.latency_p50_us.unwrap_or(0.0)),
            human_us(idle_before),
            human_us(f.gaps.max_us)
        )
    } else {
        "the GPU waits for the host between launches: look at the host cost of each launch and at the gaps"
            .to_string()
    }
}

/// Idle time before a replay below which the device did not wait for a launch (kernels of one
/// replay are 2–6 µs apart on an H200).
const IDLE_BEFORE_SMALL_US: f64 = 20.0;

fn gaps(d: &Device, f: &Figures, l: &Limits) -> Check {
    let th = &l.thresholds;
    let g = &f.gaps;
    if let Some(why) = out_of_scope(l, "the gap count") {
        if !l.explicit_gaps {
            return Check::new("gaps", Status::Skip, Some(g.over_threshold as f64), None, why);
        }
    }
    let status = if g.over_threshold > th.max_gaps { Status::Fail } else { Status::Pass };
    let why = l.why("max_gaps").map_or(String::new(), |w| format!(": {w}"));
    let msg = format!(
        "GPU {}: {} idle gaps over {} µs (longest {}; fail above {}{why})",
        d.device,
        g.over_threshold,
        th.gap_us,
        human_us(g.max_us),
        th.max_gaps
    );
    Check::new("gaps", status, Some(g.over_threshold as f64), Some(th.max_gaps as f64), msg)
}

fn graph_launch(a: &Analysis, l: &Limits) -> Check {
    let th = &l.thresholds;
    let gl = &a.graph_launches;
    if gl.count == 0 {
        return Check::new("graph_launch", Status::Skip, None, Some(th.launch_fail_us), no_launch(a));
    }
    let (name, value) = match th.launch_statistic {
        LaunchStatistic::Median => ("median", gl.p50_us),
        LaunchStatistic::Mean | LaunchStatistic::Auto => ("mean", gl.mean_us),
    };
    let value = value.unwrap_or(0.0);
    let status = if value >= th.launch_fail_us { Status::Fail } else { Status::Pass };
    let why = match (th.launch_statistic, l.context.ranks > 1) {
        (LaunchStatistic::Median, true) => {
            "; the median: with several ranks one launch that waits for a peer must not decide"
        }
        _ => "",
    };
    let limit_why = l.why("launch_fail_us").map_or(String::new(), |w| format!(": {w}"));
    let msg = format!(
        "{} {} launches: {name} {:.1} µs, {} {:.1}, p99 {:.1}, max {:.1} (fail at {:.0} µs{limit_why}{why})",
        gl.count,
        gl.apis.join("/"),
        value,
        // The other of mean and median, beside the one judged.
        if name == "mean" { "p50" } else { "mean" },
        if name == "mean" { gl.p50_us.unwrap_or(0.0) } else { gl.mean_us.unwrap_or(0.0) },
        gl.p99_us.unwrap_or(0.0),
        gl.max_us.unwrap_or(0.0),
        th.launch_fail_us
    );
    let check = Check::new("graph_launch", status, Some(value), Some(th.launch_fail_us), msg);
    if status == Status::Fail {
        check.with_hint(
            "every graph launch costs the host too much inside the launch call: look for an interception layer \
             (rocprofiler-sdk before 1.3.2, CUDA_INJECTION64_PATH, LD_PRELOAD) with `launchguard linkage` and the inventory",
        )
    } else {
        check
    }
}

/// The GPU waiting for the host before each replay: the median idle time between a replay and the
/// work before it, the first replay on each device left out. What occupancy measures, without the
/// graph's own gaps between kernels, so it sees starvation of small graphs too.
fn replay_idle(a: &Analysis, l: &Limits) -> Check {
    let r = &a.replay_summary;
    if let Some(why) = out_of_scope(l, "the idle time before replays") {
        if !l.explicit_replay_idle {
            return Check::new("replay_idle", Status::Skip, r.steady_idle_before_p50_us, None, why);
        }
    }
    let Some(idle) = r.steady_idle_before_p50_us else {
        return Check::new(
            "replay_idle",
            Status::Skip,
            None,
            None,
            "fewer than two replays with GPU work on a device: no idle time between replays to measure",
        );
    };
    let limit = l.replay_idle_fail_us();
    let status = if idle >= limit { Status::Fail } else { Status::Pass };
    let gpu = l.context.gpu_us_per_replay;
    let msg = format!(
        "the GPU waits {} p50 for each replay after the first{} (fail at {} = max({} µs, {:.0}% of the GPU time per replay))",
        human_us(idle),
        gpu.map_or(String::new(), |g| format!(", against {} of GPU time per replay", human_us(g))),
        human_us(limit),
        l.thresholds.replay_idle_fail_us,
        100.0 * l.thresholds.replay_idle_fail_fraction
    );
    let check = Check::new("replay_idle", status, Some(idle), Some(limit), msg);
    if status == Status::Fail {
        check.with_hint(
            "the host launches each replay after the GPU ran dry: per-launch overhead (an interception layer, a \
             delay before the launch, Python work per step) exceeds what the GPU's replay hides",
        )
    } else {
        check
    }
}

/// Why there is no launch to judge: `--within` keeps only the launches inside its range.
fn no_launch(a: &Analysis) -> String {
    match &a.within {
        Some(w) => format!("no graph launch inside spans matching '{w}'"),
        None => "no graph launch in the trace".to_string(),
    }
}

fn replay_consistency(a: &Analysis) -> Check {
    let s = &a.replay_summary;
    if s.count == 0 {
        return Check::new("replay_consistency", Status::Skip, None, None, no_launch(a));
    }
    if s.without_kernels == s.count {
        return Check::new(
            "replay_consistency",
            Status::Warn,
            Some(0.0),
            None,
            format!("none of the {} graph launches has GPU activity in the trace: the profiler lost the GPU events", s.count),
        );
    }
    let bad = s.inconsistent + s.without_kernels;
    let mode = s.kernels_mode.unwrap_or(0);
    if bad == 0 {
        let msg = if s.count == 1 {
            format!("the one replay ran {mode} GPU activities")
        } else {
            format!("all {} replays ran {mode} GPU activities", s.count)
        };
        return Check::new("replay_consistency", Status::Pass, Some(mode as f64), None, msg);
    }
    // Several graphs (serving stacks capture one per batch size) each recur; a count seen once
    // is more likely a replay that lost events.
    if s.without_kernels == 0 && s.kernel_counts.len() > 1 && s.kernel_counts.iter().all(|c| c.replays >= 2) {
        let list: Vec<String> =
            s.kernel_counts.iter().map(|c| format!("{} (×{})", c.kernels, c.replays)).collect();
        return Check::new(
            "replay_consistency",
            Status::Pass,
            Some(s.kernel_counts.len() as f64),
            None,
            format!(
                "{} replays of {} graphs by GPU activities per replay: {}",
                s.count,
                s.kernel_counts.len(),
                list.join(", ")
            ),
        );
    }
    Check::new(
        "replay_consistency",
        Status::Warn,
        Some(bad as f64),
        Some(0.0),
        format!(
            "{bad} of {} replays differ from the usual {mode} GPU activities ({} without any): lost events, or several graphs",
            s.count, s.without_kernels
        ),
    )
}

fn trace_complete(a: &Analysis) -> Check {
    match &a.source.truncation {
        Some(why) => Check::new(
            "trace_complete",
            Status::Warn,
            Some(a.source.events as f64),
            None,
            format!("truncated trace: {} complete events analyzed; {why}", a.source.events),
        ),
        None => Check::new(
            "trace_complete",
            Status::Pass,
            Some(a.source.events as f64),
            None,
            format!("{} events read", a.source.events),
        ),
    }
}
