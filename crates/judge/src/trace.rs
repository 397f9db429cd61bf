//! The checks of one trace's figures: one function per check, limits from [`Limits`].

use launchguard_analysis::model::{Analysis, Device, Figures, ReplaySummary};
use launchguard_analysis::units::human_us;

use crate::config::LaunchStatistic;
use crate::limits::{Limits, Scope};
use crate::verdict::{Check, CheckId, Status};

/// The trace checks of an analysis, in report order. With `check`'s context the strict
/// `trace_sanity` replaces `replay_consistency` (see [`crate::run`]).
pub(crate) fn checks(
    a: &Analysis,
    l: &Limits,
    rank_occupancy: Option<&dyn Fn(&Limits) -> Check>,
) -> Vec<Check> {
    let mut out = vec![gpu_activity(a)];
    if a.devices.is_empty() {
        for id in [CheckId::Occupancy, CheckId::Gaps] {
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
        out.push(gaps(most_gaps.0, most_gaps.1, l, profiler_bound(a, l)));
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
            CheckId::GpuActivity,
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
        CheckId::GpuActivity,
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
            "no graph replay in the trace: {what} is judged on graph replays only (`thresholds.adapt = false` judges it anyway)"
        )),
        Scope::MixedWork => Some(format!(
            "graph replays launch {:.0}% of the GPU activities between the first replay and the last: {what} there measures \
             the other work, not graph launches (`thresholds.adapt = false` judges it anyway)",
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
        if !l.exact {
            return Check::new(CheckId::Occupancy, Status::Skip, Some(f.occupancy), None, why);
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
    let check = graph_own_idle(
        Check::new(CheckId::Occupancy, status, Some(occ), Some(l.thresholds.occupancy_fail), msg),
        replays,
        l,
    );
    if check.status == Status::Pass {
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
pub(crate) const IDLE_BEFORE_SMALL_US: f64 = 20.0;

/// An occupancy warning is a finding only where the GPU waited for the host. Where it waits less
/// than [`IDLE_BEFORE_SMALL_US`] before each replay at the median, the idle time of the window
/// lies between kernels inside replays, the graph's own, which nothing on the launch side
/// changes: the warning passes, saying why (healthy H200 traces sit at 88–90% busy with 4–5 µs
/// before each replay; TP=2 ranks at 81–85%). A failure stays a failure, and with
/// `thresholds.adapt = false` the limits hold as stated.
pub(crate) fn graph_own_idle(mut check: Check, r: &ReplaySummary, l: &Limits) -> Check {
    let Some(idle) = r.steady_idle_before_p50_us.filter(|&i| i < IDLE_BEFORE_SMALL_US) else { return check };
    if check.status != Status::Warn || l.exact || l.context.scope != Scope::GraphReplays {
        return check;
    }
    check.status = Status::Pass;
    check.hint = None;
    check.message = format!(
        "{}; passes: the GPU waits only {} p50 before each replay, so the idle time is the graph's own gaps between \
         kernels, not launch overhead",
        check.message,
        human_us(idle)
    );
    check
}

/// `by_profiler`: [`profiler_bound`]'s finding, which turns a failure into a warning.
fn gaps(d: &Device, f: &Figures, l: &Limits, by_profiler: Option<ProfilerBound>) -> Check {
    let th = &l.thresholds;
    let g = &f.gaps;
    if let Some(why) = out_of_scope(l, "the gap count") {
        if !l.exact {
            return Check::new(CheckId::Gaps, Status::Skip, Some(g.over_threshold as f64), None, why);
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
    let check =
        Check::new(CheckId::Gaps, status, Some(g.over_threshold as f64), Some(th.max_gaps as f64), msg);
    match by_profiler {
        Some(p) if status == Status::Fail => p.soften(check),
        _ => check,
    }
}

fn graph_launch(a: &Analysis, l: &Limits) -> Check {
    let th = &l.thresholds;
    let gl = &a.graph_launches;
    if gl.count == 0 {
        return Check::new(CheckId::GraphLaunch, Status::Skip, None, Some(th.launch_fail_us), no_launch(a));
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
    let check = Check::new(CheckId::GraphLaunch, status, Some(value), Some(th.launch_fail_us), msg);
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
        if !l.exact {
            return Check::new(CheckId::ReplayIdle, Status::Skip, r.steady_idle_before_p50_us, None, why);
        }
    }
    let Some(idle) = r.steady_idle_before_p50_us else {
        return Check::new(
            CheckId::ReplayIdle,
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
    if status == Status::Fail {
        if let Some(p) = profiler_bound(a, l) {
            return p.soften(Check::new(CheckId::ReplayIdle, status, Some(idle), Some(limit), msg));
        }
    }
    let check = Check::new(CheckId::ReplayIdle, status, Some(idle), Some(limit), msg);
    if status == Status::Fail {
        check.with_hint(
            "the host launches each replay after the GPU ran dry: per-launch overhead (an interception layer, a \
             delay before the launch, Python work per step) exceeds what the GPU's replay hides",
        )
    } else {
        check
    }
}

/// A launch-bound graph in a trace `check` recorded, starved by the profiler alone: the host cost
/// per replay p50 with the profiler off and under it, and the GPU time per replay.
#[derive(Debug, Clone, Copy)]
struct ProfilerBound {
    before: f64,
    profiled: f64,
    gpu: f64,
}

impl ProfilerBound {
    /// A failed check of the GPU's starvation under the profiler, as a warning that says why.
    fn soften(self, mut check: Check) -> Check {
        check.message = format!(
            "{}; warns only: under the profiler a launch cost the host {} p50, more than the GPU's {} replay, \
             against {} with the profiler off",
            check.message,
            human_us(self.profiled),
            human_us(self.gpu),
            human_us(self.before)
        );
        check.status = Status::Warn;
        check.with_hint(
            "the profiler's own cost per launch starves this graph while it records (a cold first process costs \
             the most); launch_headroom judges the stack with the profiler off",
        )
    }
}

/// For a launch-bound graph (below 100 µs of GPU time per replay) in a trace `check` recorded:
/// whether the profiler alone made a launch cost the host more than the GPU's replay, while with
/// the profiler off the host kept within `check.headroom_fraction` of it (so `launch_headroom`
/// passes). A 35 µs graph on an H200 cost the host 16–21 µs per launch under the profiler in warm
/// processes, and 43–61 µs in the first processes on fresh machines, whose GPU then waited 41–98
/// µs per replay, with up to 41 gaps over 100 µs, although launches cost 2.9–6.5 µs unprofiled.
/// A run the labels call starved (host cost ≥ GPU time unprofiled) never qualifies; a larger graph
/// never does either, since under the profiler its host waits for the GPU whatever it costs.
fn profiler_bound(a: &Analysis, l: &Limits) -> Option<ProfilerBound> {
    if !l.context.small_graph() {
        return None;
    }
    let phases = &a.workload.as_ref()?.phases;
    let phase = |name: &str| phases.get(name).and_then(|p| p.host_p50_us);
    let (before, profiled) = (phase("before")?, phase("profiled")?);
    let gpu = phases.get("before")?.gpu_us_per_replay?;
    (before < l.headroom_fraction * gpu && profiled >= gpu).then_some(ProfilerBound { before, profiled, gpu })
}

/// Why there is no launch to judge: `--within` keeps only the launches inside its range.
fn no_launch(a: &Analysis) -> String {
    match &a.within {
        Some(w) => format!("no graph launch inside spans matching '{w}'"),
        None => "no graph launch in the trace".to_string(),
    }
}

/// Whether the trace is damaged, and how that was told: a `trace_damage` check (warn) when it is,
/// which makes the verdict `inconclusive`; `None` when nothing says so. A trace that lost GPU
/// events cannot say whether the GPU starved: what is left would be judged as if the GPU had idled
/// where the record is empty. Nor can one whose causality is impossible (kernels before their
/// launch beyond the clocks' skew, one correlation id for several launches): its replays are not
/// what ran.
pub(crate) fn damage(a: &Analysis) -> Option<Check> {
    use crate::limits::{DAMAGE_GPU_WINDOW_SHARE, DAMAGE_MIN_REPLAYS, DAMAGE_SHARE};
    let d = &a.damage;
    let n = a.replay_summary.count;
    let many = |k: u64| k >= DAMAGE_MIN_REPLAYS && k as f64 >= DAMAGE_SHARE * n as f64;
    let mut lost = Vec::new();
    if many(d.replays_without_kernels) {
        lost.push(format!(
            "{} of {n} graph launches ran no GPU activity in the trace (replays without any kernel)",
            d.replays_without_kernels
        ));
    }
    if many(d.replays_unmatched) {
        lost.push(format!(
            "{} of {n} replays ran kernels that match no other replay's (kernels lost inside replays)",
            d.replays_unmatched
        ));
    }
    if let Some(s) = d.silent.as_ref().filter(|s| many(s.launches_after)) {
        lost.push(format!(
            "GPU {} stream {} went silent at {} while {} more graph launches went on without GPU work",
            s.device,
            s.stream,
            human_us(s.silent_from_us),
            s.launches_after
        ));
    }
    if n >= DAMAGE_MIN_REPLAYS
        && d.host_window_us > 0.0
        && d.gpu_window_us < DAMAGE_GPU_WINDOW_SHARE * d.host_window_us
    {
        lost.push(format!(
            "the GPU's record of the replays spans {} of the host's {} of launches",
            human_us(d.gpu_window_us),
            human_us(d.host_window_us)
        ));
    }
    if !d.profiler_messages.is_empty() {
        lost.push(format!("the profiler says so: \"{}\"", d.profiler_messages.join("\"; \"")));
    }
    let impossible: Vec<String> = a.anomalies.iter().map(|x| x.what()).collect();
    let what = match (lost.is_empty(), impossible.is_empty()) {
        (true, true) => return None,
        (false, true) => "the trace lost GPU events",
        (true, false) => "the trace's causality is impossible",
        (false, false) => "the trace lost GPU events and its causality is impossible",
    };
    let mut hints = Vec::new();
    if !lost.is_empty() {
        hints.push(
            "record again: a shorter profiled window or fewer replays in it, a larger activity buffer \
             (Kineto: ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB), no other profiler attached",
        );
    }
    if !impossible.is_empty() {
        hints.push(
            "kernels before their launch or launches sharing a correlation id come from a trace edited, joined \
             from several processes or recorded with clocks that disagree: analyze the profiler's own file, one \
             process per trace",
        );
    }
    hints.push("docs/verdicts.md says how each damage is told");
    let anomalous: u64 = a.anomalies.iter().map(|x| x.count).sum();
    let value = d.replays_without_kernels + d.replays_unmatched + anomalous;
    // The lost-event rules fire at a share of the launches, impossible causality at its first case.
    let limit = if lost.is_empty() { 1.0 } else { DAMAGE_SHARE * n as f64 };
    Some(
        Check::new(
            CheckId::TraceDamage,
            Status::Warn,
            Some(value as f64),
            Some(limit),
            format!(
                "{what}, so it cannot say whether the GPU starved: {}",
                lost.into_iter().chain(impossible).collect::<Vec<_>>().join("; ")
            ),
        )
        .with_hint(hints.join("; ")),
    )
}

fn replay_consistency(a: &Analysis) -> Check {
    let s = &a.replay_summary;
    if s.count == 0 {
        return Check::new(CheckId::ReplayConsistency, Status::Skip, None, None, no_launch(a));
    }
    if s.without_kernels == s.count {
        return Check::new(
            CheckId::ReplayConsistency,
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
        return Check::new(CheckId::ReplayConsistency, Status::Pass, Some(mode as f64), None, msg);
    }
    // Several graphs (serving stacks capture one per batch size) each recur; a graph seen once
    // is more likely a replay that lost events. Graphs are told apart by their kernels' names
    // where the analysis found them, else by their kernel counts.
    let graphs: Vec<(u64, u64)> = if s.graphs.is_empty() {
        s.kernel_counts.iter().map(|c| (c.kernels, c.replays)).collect()
    } else {
        s.graphs.iter().map(|g| (g.kernels, g.replays)).collect()
    };
    if s.without_kernels == 0 && graphs.len() > 1 && graphs.iter().all(|&(_, n)| n >= 2) {
        let mut list: Vec<String> = graphs.iter().map(|(k, n)| format!("{k} kernels ×{n}")).collect();
        if list.len() > 8 {
            let more = list.len() - 8;
            list.truncate(8);
            list.push(format!("{more} more"));
        }
        return Check::new(
            CheckId::ReplayConsistency,
            Status::Pass,
            Some(graphs.len() as f64),
            None,
            format!(
                "{} replays of {} graphs, each replayed alike: {}",
                s.count,
                graphs.len(),
                list.join(", ")
            ),
        );
    }
    Check::new(
        CheckId::ReplayConsistency,
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
            CheckId::TraceComplete,
            Status::Warn,
            Some(a.source.events as f64),
            None,
            format!("truncated trace: {} complete events analyzed; {why}", a.source.events),
        ),
        None => Check::new(
            CheckId::TraceComplete,
            Status::Pass,
            Some(a.source.events as f64),
            None,
            format!("{} events read", a.source.events),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::limits::Context;

    /// The figures of a one-device trace, written by hand: `occupancy` and `gaps` (over 100 µs)
    /// of its steady state, `launches` graph launches of `kernels` each (mean and median
    /// duration), the GPU span of a replay and the idle time before each after the first.
    struct Case {
        occupancy: f64,
        gaps: u64,
        launches: u64,
        kernels: u64,
        launch_mean_us: f64,
        launch_p50_us: f64,
        span_us: f64,
        idle_us: f64,
        world: u64,
    }

    fn figures(c: &Case) -> Analysis {
        let fig = |occ: f64, gaps: u64| {
            serde_json::json!({"activities": c.launches * c.kernels, "window_start_us": 0.0, "window_us": 1000.0,
                "busy_us": 1000.0 * occ, "idle_us": 1000.0 * (1.0 - occ), "occupancy": occ,
                "gaps": {"threshold_us": 100.0, "over_threshold": gaps, "count": gaps, "max_us": 150.0, "histogram": []}})
        };
        let mut device = fig(c.occupancy, c.gaps);
        device["device"] = "0".into();
        device["streams"] = serde_json::json!([]);
        let mut steady = fig(c.occupancy, c.gaps);
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
        let v = serde_json::json!({
            "schema": "launchguard.analysis/1",
            "source": {"path": "t", "bytes": 1, "gzip": false, "events": 10, "skipped_events": 0,
                       "skipped": {"missing_ts": 0, "bad_dur": 0, "not_an_object": 0}, "truncated": false, "truncation": null},
            "trace": {"profiler": null, "rank": null, "world_size": c.world, "base_time_ns": null},
            "within": null,
            "devices": [device],
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

    fn statuses(c: &Case) -> Vec<(String, Status)> {
        let a = figures(c);
        let l = Limits::new(&Context::of(&a, 1), &Settings::default());
        checks(&a, &l, None).into_iter().map(|k| (k.id.to_string(), k.status)).collect()
    }

    fn status_of(list: &[(String, Status)], id: &str) -> Status {
        list.iter().find(|(k, _)| k == id).map(|(_, s)| *s).unwrap()
    }

    /// Table-driven: each trace's figures and the statuses the judge must give, worked out by
    /// hand from the limits (ATOM's, adapted to the context as `limits` says).
    #[test]
    fn the_trace_checks_follow_the_limits_in_force() {
        use Status::*;
        let base = Case {
            occupancy: 0.95,
            gaps: 0,
            launches: 100,
            kernels: 44,
            launch_mean_us: 60.0,
            launch_p50_us: 55.0,
            span_us: 255.0,
            idle_us: 4.5,
            world: 1,
        };
        // (what, case, occupancy, gaps, graph_launch, replay_idle)
        let cases = [
            ("healthy reference graph", Case { ..base }, Pass, Pass, Pass, Pass),
            // ATOM's warning band warns where the GPU waited for the host before replays (22 µs,
            // under the 25.5 µs that fails replay_idle); at 4.5 µs the idle time is the graph's
            // own gaps between kernels, and it passes.
            ("ATOM's warning band", Case { occupancy: 0.85, idle_us: 22.0, ..base }, Warn, Pass, Pass, Pass),
            ("the graph's own idle time", Case { occupancy: 0.85, ..base }, Pass, Pass, Pass, Pass),
            (
                "a starved GPU",
                Case { occupancy: 0.70, gaps: 99, idle_us: 130.0, ..base },
                Fail,
                Fail,
                Pass,
                Fail,
            ),
            ("idle at 10% of the replay fails", Case { idle_us: 25.5, ..base }, Pass, Pass, Pass, Fail),
            ("just below it passes", Case { idle_us: 25.4, ..base }, Pass, Pass, Pass, Pass),
            (
                "a slow launch",
                Case { launch_mean_us: 316.0, launch_p50_us: 310.0, ..base },
                Pass,
                Pass,
                Fail,
                Pass,
            ),
            // 421 kernels: the launch limit is 150 × 421/44 = 1435 µs.
            (
                "a large graph's launch",
                Case {
                    kernels: 421,
                    launches: 1,
                    launch_mean_us: 506.8,
                    launch_p50_us: 506.8,
                    span_us: 10_389.0,
                    ..base
                },
                Pass,
                Pass,
                Pass,
                Skip,
            ),
            (
                "a large graph's slow launch",
                Case {
                    kernels: 421,
                    launch_mean_us: 1436.0,
                    launch_p50_us: 1436.0,
                    span_us: 10_389.0,
                    ..base
                },
                Pass,
                Pass,
                Fail,
                Pass,
            ),
            // A 35 µs graph: occupancy never fails (warns below 60%); the idle time judges it,
            // at 20 µs (10% of 35 µs is less).
            (
                "a small graph under the profiler",
                Case { occupancy: 0.76, kernels: 11, span_us: 35.0, idle_us: 4.0, ..base },
                Pass,
                Pass,
                Pass,
                Pass,
            ),
            (
                "a small graph starved",
                Case { occupancy: 0.42, kernels: 11, span_us: 35.0, idle_us: 41.5, ..base },
                Warn,
                Pass,
                Pass,
                Fail,
            ),
            // Two ranks: the median launch against 150 × 52/44 + 274 µs; occupancy fails below 70%.
            (
                "a TP=2 rank",
                Case {
                    occupancy: 0.75,
                    kernels: 52,
                    span_us: 274.0,
                    launch_mean_us: 3400.0,
                    launch_p50_us: 245.0,
                    world: 2,
                    idle_us: 22.0,
                    ..base
                },
                Warn,
                Pass,
                Pass,
                Pass,
            ),
            (
                "a TP=2 rank starved",
                Case { occupancy: 0.60, kernels: 52, span_us: 274.0, launch_p50_us: 245.0, world: 2, ..base },
                Fail,
                Pass,
                Pass,
                Pass,
            ),
            // 2000 replays: 5 gaps per 100 replays are allowed.
            ("a long serving trace", Case { launches: 2000, gaps: 100, ..base }, Pass, Pass, Pass, Pass),
            (
                "a long serving trace with many gaps",
                Case { launches: 2000, gaps: 101, ..base },
                Pass,
                Fail,
                Pass,
                Pass,
            ),
            (
                "no graph replay",
                Case { launches: 0, occupancy: 0.13, gaps: 250, ..base },
                Skip,
                Skip,
                Skip,
                Skip,
            ),
        ];
        for (what, case, occ, gaps, launch, idle) in cases {
            let got = statuses(&case);
            let want = [("occupancy", occ), ("gaps", gaps), ("graph_launch", launch), ("replay_idle", idle)];
            for (id, status) in want {
                assert_eq!(status_of(&got, id), status, "{what}: {id} in {got:?}");
            }
        }
    }

    #[test]
    fn a_trace_without_graph_replays_is_skipped_with_the_reason_unless_adapt_is_off() {
        let case = Case {
            occupancy: 0.13,
            gaps: 250,
            launches: 0,
            kernels: 0,
            launch_mean_us: 0.0,
            launch_p50_us: 0.0,
            span_us: 0.0,
            idle_us: 0.0,
            world: 1,
        };
        let report = crate::analysis(figures(&case), &Settings::default());
        assert_eq!(report.verdict, crate::Verdict::Skip);
        assert!(report.reason.unwrap().starts_with("no graph replay in the trace"));
        // Stating a limit does not make it judge what it is not for; `adapt = false` does.
        let s = Settings::from_toml("[thresholds]\noccupancy_fail = 0.8\n").unwrap();
        assert_eq!(crate::analysis(figures(&case), &s).verdict, crate::Verdict::Skip);
        let s = Settings::from_toml("[thresholds]\nadapt = false\n").unwrap();
        let report = crate::analysis(figures(&case), &s);
        assert_eq!(report.verdict, crate::Verdict::Fail);
        assert_eq!(
            status_of(
                &report.checks.iter().map(|c| (c.id.to_string(), c.status)).collect::<Vec<_>>(),
                "occupancy"
            ),
            Status::Fail
        );
    }

    /// Impossible causality is damage: the verdict is `inconclusive` whatever the checks say,
    /// naming what, where and how many; a trace without it is judged on its checks.
    #[test]
    fn impossible_causality_makes_the_verdict_inconclusive() {
        use launchguard_analysis::model::{Anomaly, AnomalyKind};
        let case = Case {
            occupancy: 0.95,
            gaps: 0,
            launches: 100,
            kernels: 44,
            launch_mean_us: 5.0,
            launch_p50_us: 5.0,
            span_us: 250.0,
            idle_us: 1.0,
            world: 1,
        };
        let sound = crate::analysis(figures(&case), &Settings::default());
        assert_eq!((sound.verdict, sound.reason), (crate::Verdict::Pass, None));
        let early = Anomaly {
            kind: AnomalyKind::KernelBeforeLaunch,
            count: 100,
            first: "launch 0 at 10 µs, correlation 7, its first GPU activity 500 µs earlier".into(),
        };
        let reused = Anomaly {
            kind: AnomalyKind::CorrelationReused,
            count: 50,
            first: "correlation 7 joins launches 0 at 10 µs and 1 at 300 µs".into(),
        };
        for (anomalies, value, said) in [
            (vec![early.clone()], 100.0, vec!["in 100 replays the first GPU activity starts more than 20 µs before its launch (first: launch 0 at 10 µs, correlation 7, its first GPU activity 500 µs earlier)"]),
            (vec![reused.clone()], 50.0, vec!["50 correlation ids are each shared by several graph launches (first: correlation 7 joins launches 0 at 10 µs and 1 at 300 µs)"]),
            (vec![early, reused], 150.0, vec!["in 100 replays", "; 50 correlation ids"]),
        ] {
            let mut a = figures(&case);
            a.anomalies = anomalies;
            let r = crate::analysis(a, &Settings::default());
            assert_eq!(r.verdict, crate::Verdict::Inconclusive);
            let reason = r.reason.unwrap();
            assert!(
                reason.starts_with("the trace's causality is impossible, so it cannot say whether the GPU starved: "),
                "{reason}"
            );
            said.iter().for_each(|s| assert!(reason.contains(s), "{reason}"));
            let d = r.checks.iter().find(|c| c.id == CheckId::TraceDamage).unwrap();
            assert_eq!((d.status, d.value.as_f64(), d.limit.as_f64()), (Status::Warn, Some(value), Some(1.0)));
            assert_eq!(d.message, reason);
        }
    }
}
