//! Per-device and per-stream occupancy and gaps, graph launches, and replays joined by
//! correlation id. Pure functions of a [`Timeline`].

use std::collections::{BTreeMap, HashMap};

/// Maps keyed by correlation ids and label ids, looked up once per activity: SipHash was most of
/// the replay join on traces of hundreds of thousands of kernels.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

use launchguard_trace::{GpuActivity, Timeline, Trace};
use regex::Regex;

use crate::checks;
use crate::config::Thresholds;
use crate::intervals::{self, Span, GAP_BUCKETS_US};
use crate::model::*;

/// What to analyze and how to judge it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep only GPU activity inside `gpu_user_annotation` / `user_annotation` spans whose name
    /// matches.
    pub within: Option<Regex>,
    /// Limits of the checks.
    pub thresholds: Thresholds,
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// Sorts labels numerically where they are numbers ("2" before "10"), else by text.
fn label_key(label: &str) -> (i64, String) {
    match label.parse::<i64>() {
        Ok(n) => (n, String::new()),
        Err(_) => (i64::MAX, label.to_string()),
    }
}

/// Analyzes a trace read from a file.
pub fn analyze(trace: &Trace, opts: &Options) -> Analysis {
    let t = &trace.timeline;
    let mut warnings = Vec::new();
    if let Some(why) = &trace.truncated {
        warnings
            .push(format!("the trace was truncated: {why}; analyzed the {} complete events read", t.events));
    }
    if t.skipped.total() > 0 {
        warnings.push(format!(
            "skipped {} events: {} without a usable ts, {} with a missing or negative dur, {} not objects",
            t.skipped.total(),
            t.skipped.missing_ts,
            t.skipped.bad_dur,
            t.skipped.not_an_object
        ));
    }
    let source = Source {
        path: trace.source.path.display().to_string(),
        bytes: trace.source.bytes,
        gzip: trace.source.gzip,
        events: t.events,
        skipped_events: t.skipped.total(),
        skipped: Skipped {
            missing_ts: t.skipped.missing_ts,
            bad_dur: t.skipped.bad_dur,
            not_an_object: t.skipped.not_an_object,
        },
        truncated: trace.truncated.is_some(),
        truncation: trace.truncated.clone(),
    };
    analyze_timeline(t, source, opts, warnings)
}

/// Analyzes a timeline; `source` describes where it came from.
pub fn analyze_timeline(t: &Timeline, source: Source, opts: &Options, mut warnings: Vec<String>) -> Analysis {
    let windows = opts.within.as_ref().map(|re| within_windows(t, re));
    if let (Some(re), Some(w)) = (&opts.within, &windows) {
        if w.is_empty() {
            warnings.push(format!("no annotation span matches --within '{re}'"));
        }
    }
    // Independent halves, on two cores: on traces of hundreds of MB each takes tens of ms.
    let (devices, (launches, replays, replay_summary)) = std::thread::scope(|s| {
        let replays = s.spawn(|| launches_and_replays(t, windows.as_ref()));
        let devices = device_figures(t, windows.as_ref(), &opts.thresholds);
        (devices, replays.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    if replay_summary.inconsistent > 0 {
        warnings.push(format!(
            "{} of {} replays have a kernel count other than {}: the profiler lost events, or several graphs are replayed",
            replay_summary.inconsistent,
            replay_summary.count,
            replay_summary.kernels_mode.unwrap_or(0)
        ));
    }
    let trace = TraceInfo {
        profiler: t.meta.profiler.clone(),
        rank: t.meta.distributed.as_ref().and_then(|d| d.rank),
        world_size: t.meta.distributed.as_ref().and_then(|d| d.world_size),
        base_time_ns: t.meta.base_time_ns,
    };
    let mut analysis = Analysis {
        schema: SCHEMA.to_string(),
        source,
        trace,
        within: opts.within.as_ref().map(|r| r.as_str().to_string()),
        devices,
        graph_launches: launches,
        replays,
        replay_summary,
        checks: Vec::new(),
        verdict: crate::Verdict::Skip,
        warnings,
    };
    analysis.checks = checks::trace_checks(&analysis, &opts.thresholds);
    analysis.verdict = crate::Verdict::of(&analysis.checks);
    analysis
}

/// Matching spans per device label id; `None` key = host spans, which apply to every device.
pub type Windows = HashMap<Option<u32>, Vec<Span>>;

/// The `--within` spans: annotation spans whose name matches, merged per device (public so that
/// renderers draw exactly the windows the analysis measured).
pub fn within_windows(t: &Timeline, re: &Regex) -> Windows {
    let mut by_device: HashMap<Option<u32>, Vec<Span>> = HashMap::new();
    let matching: HashMap<u32, bool> = t
        .annotations
        .iter()
        .map(|a| a.name)
        .collect::<std::collections::HashSet<_>>()
        .into_iter()
        .map(|id| (id, re.is_match(t.strings.get(id))))
        .collect();
    for a in &t.annotations {
        if matching[&a.name] {
            by_device.entry(a.device).or_default().push((a.start, a.end));
        }
    }
    by_device.into_iter().map(|(k, v)| (k, intervals::union(v))).collect()
}

/// The spans that bound a device's activity under `--within`: its GPU spans where it has any,
/// else the host spans (same clock in Kineto traces).
pub fn device_windows(windows: &Windows, device: u32) -> &[Span] {
    windows.get(&Some(device)).or_else(|| windows.get(&None)).map_or(&[], Vec::as_slice)
}

fn figures(acts: &[&GpuActivity], windows: Option<&[Span]>, th: &Thresholds) -> Figures {
    let spans = || acts.iter().map(|a| (a.start, a.end));
    let mut gaps = GapStats::new(th);
    let (window_start, window, busy_ns) = match windows {
        // Kineto writes a stream's activities in order: one pass, no lists.
        None if intervals::sorted_by_start(spans()) => {
            let sweep = intervals::sweep(spans(), |len| gaps.add(len));
            (sweep.window.0, sweep.window.1 - sweep.window.0, sweep.busy_ns)
        }
        None => {
            let lo = spans().map(|s| s.0).min().unwrap_or(0);
            let hi = spans().map(|s| s.1).max().unwrap_or(0);
            let busy = intervals::union(spans().collect());
            intervals::gaps(&busy, &[(lo, hi)]).iter().for_each(|(s, e)| gaps.add(e - s));
            (lo, hi - lo, intervals::total(&busy))
        }
        Some(w) => {
            let busy = intervals::intersect(&intervals::union(spans().collect()), w);
            intervals::gaps(&busy, w).iter().for_each(|(s, e)| gaps.add(e - s));
            (w.first().map_or(0, |s| s.0), intervals::total(w), intervals::total(&busy))
        }
    };
    Figures {
        activities: acts.len() as u64,
        window_start_us: us(window_start),
        window_us: us(window),
        busy_us: us(busy_ns),
        idle_us: us(window - busy_ns),
        occupancy: if window > 0 { busy_ns as f64 / window as f64 } else { 0.0 },
        gaps: gaps.finish(),
    }
}

/// Idle gaps counted as they are found.
struct GapStats {
    threshold_us: f64,
    threshold_ns: i64,
    over_threshold: u64,
    count: u64,
    max_ns: i64,
    buckets: [u64; GAP_BUCKETS_US.len()],
}

impl GapStats {
    fn new(th: &Thresholds) -> Self {
        GapStats {
            threshold_us: th.gap_us,
            threshold_ns: (th.gap_us * 1000.0).round() as i64,
            over_threshold: 0,
            count: 0,
            max_ns: 0,
            buckets: [0; GAP_BUCKETS_US.len()],
        }
    }

    fn add(&mut self, len_ns: i64) {
        self.count += 1;
        self.over_threshold += (len_ns > self.threshold_ns) as u64;
        self.max_ns = self.max_ns.max(len_ns);
        self.buckets[intervals::bucket(len_ns, &GAP_BUCKETS_US)] += 1;
    }

    fn finish(self) -> Gaps {
        let histogram = GAP_BUCKETS_US
            .iter()
            .enumerate()
            .map(|(i, &lo)| Bucket {
                lo_us: lo,
                hi_us: GAP_BUCKETS_US.get(i + 1).copied(),
                count: self.buckets[i],
            })
            .collect();
        Gaps {
            threshold_us: self.threshold_us,
            over_threshold: self.over_threshold,
            count: self.count,
            max_us: us(self.max_ns),
            histogram,
        }
    }
}

/// Groups activities by the label that `label` picks, in label order (numeric labels by value),
/// keeping file order inside a group. Labels are compared once per distinct string, not once per
/// activity: on traces of hundreds of thousands of kernels that comparison dominated the analysis.
fn group_by_label<'t>(
    t: &Timeline,
    acts: impl IntoIterator<Item = &'t GpuActivity>,
    label: impl Fn(&GpuActivity) -> u32,
) -> Vec<(u32, Vec<&'t GpuActivity>)> {
    let acts: Vec<&GpuActivity> = acts.into_iter().collect();
    // One label for all (one GPU, one stream: the usual graph replay) needs no grouping.
    if let Some(first) = acts.first().map(|a| label(a)) {
        if acts.iter().all(|a| label(a) == first) {
            return vec![(first, acts)];
        }
    }
    let mut keys: BTreeMap<(i64, String), usize> = BTreeMap::new();
    let mut group_of_id: Vec<Option<usize>> = vec![None; t.strings.len()];
    let mut groups: Vec<(u32, Vec<&GpuActivity>)> = Vec::new();
    for a in acts {
        let id = label(a);
        let g = *group_of_id[id as usize].get_or_insert_with(|| {
            let next = groups.len();
            let g = *keys.entry(label_key(t.strings.get(id))).or_insert(next);
            if g == next {
                groups.push((id, Vec::new()));
            }
            g
        });
        groups[g].1.push(a);
    }
    let mut groups: Vec<Option<_>> = groups.into_iter().map(Some).collect();
    keys.into_values().map(|g| groups[g].take().expect("each group once")).collect()
}

fn device_figures(t: &Timeline, windows: Option<&Windows>, th: &Thresholds) -> Vec<Device> {
    group_by_label(t, &t.activities, |a| a.device)
        .into_iter()
        .filter_map(|(device, acts)| {
            let w = windows.map(|w| device_windows(w, device));
            let acts: Vec<&GpuActivity> = match w {
                Some(w) => acts.into_iter().filter(|a| overlaps(w, a.start, a.end)).collect(),
                None => acts,
            };
            if acts.is_empty() {
                return None;
            }
            let device_figures = figures(&acts, w, th);
            let one_stream = acts.iter().all(|a| a.stream == acts[0].stream);
            let streams = if one_stream {
                // A device with one stream (the usual graph replay) has that stream's figures.
                vec![Stream {
                    stream: t.strings.get(acts[0].stream).to_string(),
                    figures: device_figures.clone(),
                }]
            } else {
                group_by_label(t, acts.iter().copied(), |a| a.stream)
                    .into_iter()
                    .map(|(id, s)| Stream {
                        stream: t.strings.get(id).to_string(),
                        figures: figures(&s, w, th),
                    })
                    .collect()
            };
            let label = t.strings.get(device).to_string();
            let name = t.meta.device_names.iter().find(|(id, _)| *id == label).map(|(_, n)| n.clone());
            Some(Device {
                device: label,
                name: name.filter(|n| !n.is_empty()),
                figures: device_figures,
                streams,
            })
        })
        .collect()
}

/// Whether `[start, end]` meets any of the sorted spans (a zero-length activity on a boundary
/// counts as inside).
fn overlaps(spans: &[Span], start: i64, end: i64) -> bool {
    let i = spans.partition_point(|s| s.1 < start);
    i < spans.len() && spans[i].0 <= end
}

struct CorrelatedWork {
    kernels: u64,
    first: i64,
    last: i64,
    device: u32,
}

fn launches_and_replays(
    t: &Timeline,
    windows: Option<&Windows>,
) -> (GraphLaunches, Vec<Replay>, ReplaySummary) {
    let mut work: FastMap<u64, CorrelatedWork> = FastMap::default();
    // The kernels of one replay share its launch's correlation id and come one after another:
    // the entry of the last id is kept at hand instead of looked up again.
    let mut last: Option<(u64, CorrelatedWork)> = None;
    for a in &t.activities {
        if let Some(c) = a.correlation {
            let w = match &mut last {
                Some((lc, w)) if *lc == c => w,
                _ => {
                    if let Some((lc, w)) = last.take() {
                        work.insert(lc, w);
                    }
                    let w = work.remove(&c).unwrap_or(CorrelatedWork {
                        kernels: 0,
                        first: a.start,
                        last: a.end,
                        device: a.device,
                    });
                    &mut last.insert((c, w)).1
                }
            };
            w.kernels += 1;
            if a.start < w.first {
                w.first = a.start;
                w.device = a.device;
            }
            w.last = w.last.max(a.end);
        }
    }
    if let Some((lc, w)) = last {
        work.insert(lc, w);
    }
    // Busy time per device over the whole trace, for the idle time before each replay.
    // Indexed by the device's string id, each list sized first: no hashing, no regrowth.
    let mut counts = vec![0usize; t.strings.len()];
    t.activities.iter().for_each(|a| counts[a.device as usize] += 1);
    let mut busy_by_device: Vec<Vec<Span>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
    t.activities.iter().for_each(|a| busy_by_device[a.device as usize].push((a.start, a.end)));
    let busy_by_device: Vec<Vec<Span>> = busy_by_device.into_iter().map(intervals::union).collect();

    let mut launches: Vec<_> = t.launches.iter().collect();
    launches.sort_by_key(|l| (l.start, l.end));
    if let Some(w) = windows {
        launches.retain(|l| {
            let host = w.get(&None).is_some_and(|s| overlaps(s, l.start, l.end));
            let gpu = l
                .correlation
                .and_then(|c| work.get(&c))
                .is_some_and(|cw| w.get(&Some(cw.device)).is_some_and(|s| overlaps(s, cw.first, cw.first)));
            host || gpu
        });
    }
    let mut apis: Vec<String> = Vec::new();
    let mut durations: Vec<f64> = Vec::with_capacity(launches.len());
    let mut replays = Vec::with_capacity(launches.len());
    for (i, l) in launches.iter().enumerate() {
        let api = launch_api_name(l.api);
        if !apis.iter().any(|a| a == api) {
            apis.push(api.to_string());
        }
        durations.push(us(l.end - l.start));
        let w = l.correlation.and_then(|c| work.get(&c));
        let idle_before = w.and_then(|w| idle_before(&busy_by_device[w.device as usize], w.first));
        replays.push(Replay {
            index: i as u64,
            correlation: l.correlation,
            device: w.map(|w| t.strings.get(w.device).to_string()),
            launch_start_us: us(l.start),
            launch_us: us(l.end - l.start),
            kernels: w.map_or(0, |w| w.kernels),
            launch_to_first_kernel_us: w.map(|w| us(w.first - l.start)),
            gpu_span_us: w.map(|w| us(w.last - w.first)),
            idle_before_us: idle_before.map(us),
        });
    }
    let mut sorted = durations.clone();
    sorted.sort_by(f64::total_cmp);
    let kernel_counts: Vec<u64> = replays.iter().map(|r| r.kernels).collect();
    let launches = GraphLaunches {
        count: launches.len() as u64,
        apis,
        mean_us: intervals::mean(&durations),
        p50_us: intervals::percentile(&sorted, 50.0),
        p99_us: intervals::percentile(&sorted, 99.0),
        max_us: sorted.last().copied(),
        kernels_per_launch: MinMax {
            min: kernel_counts.iter().copied().min(),
            max: kernel_counts.iter().copied().max(),
        },
    };
    let summary = summarize(&replays);
    (launches, replays, summary)
}

fn launch_api_name(api: launchguard_trace::GraphApi) -> &'static str {
    match api {
        launchguard_trace::GraphApi::CudaRuntime => "cudaGraphLaunch",
        launchguard_trace::GraphApi::CudaDriver => "cuGraphLaunch",
        launchguard_trace::GraphApi::Hip => "hipGraphLaunch",
    }
}

/// Idle time just before `t` on a device whose busy time is `busy`: 0 if `t` falls inside busy
/// time that started earlier, `None` if nothing ran before `t`.
fn idle_before(busy: &[Span], t: i64) -> Option<i64> {
    let i = busy.partition_point(|s| s.0 < t);
    // busy[i-1] starts before t.
    if i > 0 && busy[i - 1].1 >= t {
        return Some(0);
    }
    (i > 0).then(|| t - busy[i - 1].1)
}

fn summarize(replays: &[Replay]) -> ReplaySummary {
    let mut freq: BTreeMap<u64, u64> = BTreeMap::new();
    for r in replays.iter().filter(|r| r.kernels > 0) {
        *freq.entry(r.kernels).or_default() += 1;
    }
    // Most common count; ties go to the larger count (a lost event makes a count smaller).
    let mode = freq.iter().max_by_key(|(k, n)| (**n, **k)).map(|(k, _)| *k);
    let sorted = |f: &dyn Fn(&Replay) -> Option<f64>| {
        let mut v: Vec<f64> = replays.iter().filter_map(f).collect();
        v.sort_by(f64::total_cmp);
        intervals::percentile(&v, 50.0)
    };
    ReplaySummary {
        count: replays.len() as u64,
        kernels_mode: mode,
        inconsistent: mode
            .map_or(0, |m| replays.iter().filter(|r| r.kernels > 0 && r.kernels != m).count() as u64),
        without_kernels: replays.iter().filter(|r| r.kernels == 0).count() as u64,
        latency_p50_us: sorted(&|r| r.launch_to_first_kernel_us),
        gpu_span_p50_us: sorted(&|r| r.gpu_span_us),
        idle_before_p50_us: sorted(&|r| r.idle_before_us),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_before_uses_the_union() {
        let busy = vec![(0, 10), (20, 30)];
        assert_eq!(idle_before(&busy, 0), None);
        assert_eq!(idle_before(&busy, 20), Some(10));
        assert_eq!(idle_before(&busy, 25), Some(0));
        assert_eq!(idle_before(&busy, 35), Some(5));
    }

    #[test]
    fn overlap_is_inclusive_at_the_edges() {
        let spans = vec![(10, 20), (30, 40)];
        assert!(overlaps(&spans, 20, 20));
        assert!(overlaps(&spans, 5, 10));
        assert!(!overlaps(&spans, 21, 29));
        assert!(overlaps(&spans, 0, 100));
    }
}
