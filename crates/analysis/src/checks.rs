//! The trace checks: one function per check, limits from [`Thresholds`].

use crate::check::{Check, Status};
use crate::config::{LaunchStatistic, Thresholds};
use crate::model::{Analysis, Device, ReplaySummary};
use crate::units::human_us;

/// All trace checks of an analysis, in report order.
pub fn trace_checks(a: &Analysis, th: &Thresholds) -> Vec<Check> {
    let mut checks = vec![gpu_activity(a)];
    if a.devices.is_empty() {
        for id in ["occupancy", "gaps"] {
            checks.push(Check::new(id, Status::Skip, None, None, "no GPU activity to measure"));
        }
    } else {
        checks.push(occupancy(&a.devices, &a.replay_summary, th));
        checks.push(gaps(&a.devices, th));
    }
    checks.push(graph_launch(a, th));
    checks.push(replay_consistency(a));
    checks.push(trace_complete(a));
    checks
}

fn gpu_activity(a: &Analysis) -> Check {
    let n: u64 = a.devices.iter().map(|d| d.figures.activities).sum();
    if n == 0 {
        let why = match &a.within {
            Some(w) => format!("no GPU activity inside spans matching '{w}'"),
            None => {
                "no GPU activity in the trace: the profiler recorded no kernels, copies or fills".to_string()
            }
        };
        Check::new("gpu_activity", Status::Fail, Some(0.0), None, why).with_hint(
            "profile with GPU activities enabled (torch.profiler activities=[CPU, CUDA]); \
             a trace with CPU events only cannot show GPU starvation",
        )
    } else {
        Check::new(
            "gpu_activity",
            Status::Pass,
            Some(n as f64),
            None,
            format!("{n} GPU activities on {} device(s)", a.devices.len()),
        )
    }
}

/// The device with the lowest value of `key`; the worst decides.
fn worst(devices: &[Device], key: impl Fn(&Device) -> f64) -> &Device {
    devices.iter().min_by(|x, y| key(x).total_cmp(&key(y))).expect("at least one device")
}

fn occupancy(devices: &[Device], replays: &ReplaySummary, th: &Thresholds) -> Check {
    let d = worst(devices, |d| d.figures.occupancy);
    let occ = d.figures.occupancy;
    let status = if occ < th.occupancy_fail {
        Status::Fail
    } else if occ < th.occupancy_warn {
        Status::Warn
    } else {
        Status::Pass
    };
    let limits = if th.occupancy_fail > 0.0 {
        format!("fail below {:.0}%, warn below {:.0}%", th.occupancy_fail * 100.0, th.occupancy_warn * 100.0)
    } else {
        format!("never fails; warns below {:.0}%", th.occupancy_warn * 100.0)
    };
    let msg = format!(
        "GPU {} busy {:.1}% of a {:.1} ms window ({limits})",
        d.device,
        occ * 100.0,
        d.figures.window_us / 1000.0,
    );
    let check = Check::new("occupancy", status, Some(occ), Some(th.occupancy_fail), msg);
    if status == Status::Pass {
        check
    } else {
        check.with_hint(occupancy_hint(replays, d))
    }
}

/// Where the idle time is: between replays (the GPU waits for the host) or inside them while the
/// host is ahead (the graph's own gaps between kernels, which no launch fix removes).
fn occupancy_hint(r: &ReplaySummary, d: &Device) -> String {
    let host_ahead = matches!((r.latency_p50_us, r.gpu_span_p50_us), (Some(lat), Some(span)) if lat > span);
    let idle_before = r.idle_before_p50_us.unwrap_or(f64::INFINITY);
    if host_ahead && idle_before < IDLE_BEFORE_SMALL_US {
        format!(
            "the host runs ahead of the GPU (a launch waits {} p50 before its first kernel) and a replay starts {} after \
             the previous work: the idle time lies in short gaps between kernels inside each replay (longest {}), the \
             graph's own, not launch overhead",
            human_us(r.latency_p50_us.unwrap_or(0.0)),
            human_us(idle_before),
            human_us(d.figures.gaps.max_us)
        )
    } else {
        "the GPU waits for the host between launches: look at the host cost of each launch and at the gaps"
            .to_string()
    }
}

/// Idle time before a replay below which the device did not wait for a launch (kernels of one
/// replay are 2–6 µs apart on an H200).
const IDLE_BEFORE_SMALL_US: f64 = 20.0;

fn gaps(devices: &[Device], th: &Thresholds) -> Check {
    let d = worst(devices, |d| -(d.figures.gaps.over_threshold as f64));
    let g = &d.figures.gaps;
    let status = if g.over_threshold > th.max_gaps { Status::Fail } else { Status::Pass };
    let msg = format!(
        "GPU {}: {} idle gaps over {} µs (longest {}; fail above {})",
        d.device,
        g.over_threshold,
        th.gap_us,
        human_us(g.max_us),
        th.max_gaps
    );
    Check::new("gaps", status, Some(g.over_threshold as f64), Some(th.max_gaps as f64), msg)
}

fn graph_launch(a: &Analysis, th: &Thresholds) -> Check {
    let gl = &a.graph_launches;
    if gl.count == 0 {
        return Check::new("graph_launch", Status::Skip, None, Some(th.launch_fail_us), no_launch(a));
    }
    let multi_rank = a.trace.world_size.is_some_and(|w| w > 1);
    let (name, value, why) = match th.launch_statistic {
        LaunchStatistic::Mean => ("mean", gl.mean_us, ""),
        LaunchStatistic::Median => ("median", gl.p50_us, ""),
        LaunchStatistic::Auto if multi_rank => (
            "median",
            gl.p50_us,
            " (median: in a multi-rank trace one launch that waits for a peer must not decide)",
        ),
        LaunchStatistic::Auto => ("mean", gl.mean_us, ""),
    };
    let value = value.unwrap_or(0.0);
    let status = if value >= th.launch_fail_us { Status::Fail } else { Status::Pass };
    let msg = format!(
        "{} {} launches: {name} {:.1} µs, {} {:.1}, p99 {:.1}, max {:.1} (fail at {:.0} µs){why}",
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
    Check::new("graph_launch", status, Some(value), Some(th.launch_fail_us), msg)
}

/// Why there is no launch to judge: `--within` keeps only the launches inside its spans.
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
        Check::new(
            "replay_consistency",
            Status::Pass,
            Some(mode as f64),
            None,
            format!("all {} replays ran {mode} GPU activities", s.count),
        )
    } else {
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
