//! Per-device and per-stream occupancy and gaps (over the whole window and over the steady state
//! of graph replays), graph launches, and replays joined by correlation id. Pure functions of a
//! [`Timeline`]: figures only; the judge turns them into checks.

use std::collections::{BTreeMap, HashMap, HashSet};

/// Maps keyed by correlation ids and label ids, looked up once per activity: SipHash was most of
/// the replay join on traces of hundreds of thousands of kernels.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
/// Sets of the same keys, for the same reason.
type FastSet<K> = HashSet<K, foldhash::fast::RandomState>;

use launchguard_trace::{GpuActivity, Timeline, Trace};
use rayon::prelude::*;
use regex::Regex;

use crate::context::WorkloadContext;
use crate::intervals::{self, Span, GAP_BUCKETS_US};
use crate::model::*;

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// Keep only GPU activity inside the range of `gpu_user_annotation` / `user_annotation`
    /// spans whose name matches: from the first matching span's start to the last one's end.
    pub within: Option<Regex>,
    /// With `within`, keep only the spans' interiors: the time between spans is dropped.
    pub within_interiors: bool,
    /// Idle gaps longer than this, µs, are counted apart.
    pub gap_us: f64,
    /// Also measure each graph's repeated kernels by their position in the replay
    /// ([`crate::kernels::GraphKernels::positions`]), which `compare` matches by.
    pub kernel_positions: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { within: None, within_interiors: false, gap_us: DEFAULT_GAP_US, kernel_positions: false }
    }
}

/// The gap length ATOM's guard counts (ROCm/ATOM PR #432).
pub const DEFAULT_GAP_US: f64 = 100.0;

/// Why a trace cannot be measured as asked.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// `--within` matches no annotation span.
    #[error("--within {} matches no annotation span; {}", quoted(.pattern), names_hint(.names))]
    WithinMatchesNothing {
        /// The pattern.
        pattern: String,
        /// The most frequent span names the trace has.
        names: Vec<String>,
    },
}

/// A pattern in quotes, cut past 80 characters with its length said: an error stays one
/// readable line whatever was passed.
pub fn quoted(pattern: &str) -> String {
    const MAX: usize = 80;
    let n = pattern.chars().count();
    if n <= MAX {
        format!("'{pattern}'")
    } else {
        format!("'{}…' ({n} characters)", pattern.chars().take(MAX).collect::<String>())
    }
}

fn names_hint(names: &[String]) -> String {
    if names.is_empty() {
        "the trace has no annotation spans (record_function)".to_string()
    } else {
        format!(
            "the trace's spans include {}",
            names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
        )
    }
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

/// Measures a trace read from a file.
pub fn analyze(trace: &Trace, opts: &Options) -> Result<Analysis, AnalyzeError> {
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
    if t.names_cut > 0 {
        warnings.push(format!(
            "{} names or labels longer than {} bytes were cut to their first {} bytes (--max-name-bytes)",
            t.names_cut, t.name_cap, t.name_cap
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
        names_cut: t.names_cut,
    };
    analyze_timeline(t, source, opts, warnings)
}

/// Measures a timeline; `source` describes where it came from.
pub fn analyze_timeline(
    t: &Timeline,
    source: Source,
    opts: &Options,
    mut warnings: Vec<String>,
) -> Result<Analysis, AnalyzeError> {
    let mut within_rule = None;
    let windows = match &opts.within {
        Some(re) => {
            let (w, rules) = within(t, re, opts.within_interiors);
            let mut distinct: Vec<&str> = rules.iter().map(|&(_, r)| r).collect();
            distinct.sort_unstable();
            distinct.dedup();
            within_rule = (!distinct.is_empty()).then(|| distinct.join("; "));
            if w.is_empty() {
                return Err(AnalyzeError::WithinMatchesNothing {
                    pattern: re.as_str().to_string(),
                    names: frequent_span_names(t, 5),
                });
            }
            Some(w)
        }
        None => None,
    };
    // Independent halves, side by side; each spreads its passes over all cores.
    let launched = launched_ids(t);
    let (mut devices, (launches, replays, replay_summary, work, damage)) = rayon::join(
        || device_figures(t, windows.as_ref(), opts.gap_us),
        || launches_and_replays(t, &launched, windows.as_ref()),
    );
    // Independent again: the steady state per device beside the kernel table.
    let (steady, kernels) = rayon::join(
        || steady_figures(&devices, &launched, &work, opts.gap_us),
        || kernel_table(t, &devices, &replays, opts.kernel_positions),
    );
    for ((d, _), steady) in devices.iter_mut().zip(steady) {
        d.steady = steady;
    }
    let devices: Vec<Device> = devices.into_iter().map(|(d, _)| d).collect();
    let workload = match &t.context {
        Some(text) => match WorkloadContext::from_event_args(text) {
            Ok(ctx) => Some(ctx),
            Err(why) => {
                warnings.push(format!("{why}: judged as a trace without check's context"));
                None
            }
        },
        None => None,
    };
    if t.context_events > 1 {
        warnings.push(format!(
            "{} launchguard context events in one trace (traces joined?): the first is used",
            t.context_events
        ));
    }
    let anomalies = anomalies(&replays);
    warnings.extend(anomalies.iter().map(Anomaly::message));
    let trace = TraceInfo {
        profiler: t.meta.profiler.clone(),
        rank: t.meta.distributed.as_ref().and_then(|d| d.rank),
        world_size: t.meta.distributed.as_ref().and_then(|d| d.world_size),
        base_time_ns: t.meta.base_time_ns,
    };
    Ok(Analysis {
        schema: SCHEMA.to_string(),
        source,
        trace,
        within: opts.within.as_ref().map(|r| r.as_str().to_string()),
        within_mode: opts
            .within
            .as_ref()
            .map(|_| if opts.within_interiors { "span interiors" } else { "span range" }.to_string()),
        within_rule,
        devices,
        graph_launches: launches,
        replays,
        replay_summary,
        kernels,
        damage,
        workload,
        warnings,
        anomalies,
    })
}

/// How far a replay's first GPU activity may start before its launch call and still be put down
/// to the host's and the GPU's clocks disagreeing, µs. Profilers map GPU timestamps onto the
/// host's clock with an offset that is off by a few µs (more where it drifts over a long trace);
/// a real launch reaches its first kernel 4 µs or more after it starts on every trace we hold.
pub const CLOCK_SKEW_US: f64 = 20.0;

/// What the replays say that cannot have happened: a first kernel before its launch (by more
/// than [`CLOCK_SKEW_US`]), one correlation id for several launches.
fn anomalies(replays: &[Replay]) -> Vec<Anomaly> {
    let mut out = Vec::new();
    let early: Vec<&Replay> =
        replays.iter().filter(|r| r.launch_to_first_kernel_us.is_some_and(|d| d < -CLOCK_SKEW_US)).collect();
    if let Some(r) = early.first() {
        out.push(Anomaly {
            kind: AnomalyKind::KernelBeforeLaunch,
            count: early.len() as u64,
            first: format!(
                "launch {} at {} µs, correlation {}, its first GPU activity {} µs earlier",
                r.index,
                r.launch_start_us,
                r.correlation.map_or("none".into(), |c| c.to_string()),
                -r.launch_to_first_kernel_us.unwrap_or_default()
            ),
        });
    }
    let mut launches_of: BTreeMap<u64, Vec<&Replay>> = BTreeMap::new();
    for r in replays {
        if let Some(c) = r.correlation {
            launches_of.entry(c).or_default().push(r);
        }
    }
    let mut shared: Vec<&Vec<&Replay>> = launches_of.values().filter(|l| l.len() > 1).collect();
    // The first in launch order.
    shared.sort_by_key(|l| l[0].index);
    if let Some(l) = shared.first() {
        out.push(Anomaly {
            kind: AnomalyKind::CorrelationReused,
            count: shared.len() as u64,
            first: format!(
                "correlation {} joins launches {} at {} µs and {} at {} µs",
                l[0].correlation.unwrap_or_default(),
                l[0].index,
                l[0].launch_start_us,
                l[1].index,
                l[1].launch_start_us
            ),
        });
    }
    out
}

/// The kernel table over the activities the device figures counted.
fn kernel_table(
    t: &Timeline,
    devices: &[(Device, DeviceActs<'_>)],
    replays: &[Replay],
    positions: bool,
) -> crate::kernels::Kernels {
    let inputs: Vec<crate::kernels::DeviceInput<'_, '_>> = devices
        .iter()
        .map(|(d, da)| crate::kernels::DeviceInput {
            device: &d.device,
            acts: &da.acts,
            streams: d
                .streams
                .iter()
                .filter_map(|s| Some((t.strings.lookup(&s.stream)?, s.stream.as_str())))
                .collect(),
        })
        .collect();
    crate::kernels::kernels(t, &inputs, replays, positions)
}

/// The `n` most frequent annotation span names, for a message that helps choose a `--within`.
fn frequent_span_names(t: &Timeline, n: usize) -> Vec<String> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for a in &t.annotations {
        *counts.entry(a.name).or_default() += 1;
    }
    let mut by_count: Vec<(u32, u64)> = counts.into_iter().collect();
    by_count.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| t.strings.get(x.0).cmp(t.strings.get(y.0))));
    by_count.into_iter().take(n).map(|(id, _)| t.strings.get(id).to_string()).collect()
}

/// Matching spans per device label id; `None` key = host spans, which apply to every device.
pub type Windows = HashMap<Option<u32>, Vec<Span>>;

/// The `--within` windows: per device (and for the host), the range from the first matching
/// annotation span's start to the last one's end, or with `interiors` the union of the spans
/// themselves. Public so that renderers draw exactly the windows the analysis measured.
pub fn within_windows(t: &Timeline, re: &Regex, interiors: bool) -> Windows {
    within(t, re, interiors).0
}

/// How `--within` bounded a device measured by host spans: by the GPU work their calls launched.
pub const WITHIN_BY_CORRELATION: &str =
    "host spans: the GPU work launched inside them (by correlation), from its first activity to its last";

/// How `--within` bounded a device measured by host spans whose calls carry no correlation ids.
pub const WITHIN_BY_TIME: &str = "host spans: the GPU activity inside them in time, within the GPU's record";

/// How `--within` bounded a device with spans of its own.
pub const WITHIN_GPU_SPANS: &str = "GPU spans (gpu_user_annotation) on the device";

/// The `--within` windows, and the rule each device was measured by. A device with matching GPU
/// spans (`gpu_user_annotation`) is measured inside them. Host spans (`user_annotation`) end
/// before the GPU runs what they launched, often long before: a device without spans of its own
/// is measured over the GPU work whose launch calls (matched by correlation id) started inside a
/// host span, or, where the calls carry no correlation ids, over the host spans in time cut to the
/// device's own record, never past it.
fn within(t: &Timeline, re: &Regex, interiors: bool) -> (Windows, Vec<(u32, &'static str)>) {
    let matching: HashMap<u32, bool> = t
        .annotations
        .iter()
        .map(|a| a.name)
        .collect::<HashSet<_>>()
        .into_iter()
        .map(|id| (id, re.is_match(t.strings.get(id))))
        .collect();
    let mut by_device: HashMap<Option<u32>, Vec<Span>> = HashMap::new();
    for a in &t.annotations {
        if matching[&a.name] {
            by_device.entry(a.device).or_default().push((a.start, a.end));
        }
    }
    let mut unioned: HashMap<Option<u32>, Vec<Span>> =
        by_device.into_iter().map(|(k, v)| (k, intervals::union(v))).filter(|(_, v)| !v.is_empty()).collect();
    let mut rules: Vec<(u32, &'static str)> = Vec::new();
    for d in unioned.keys().flatten() {
        rules.push((*d, WITHIN_GPU_SPANS));
    }
    if let Some(host) = unioned.get(&None).cloned() {
        let span_of = |at: i64| {
            let i = host.partition_point(|s| s.1 < at);
            (i < host.len() && host[i].0 <= at).then_some(i)
        };
        let launched: FastMap<u64, usize> =
            t.host_calls.iter().filter_map(|h| Some((h.correlation, span_of(h.start)?))).collect();
        // Per device: its record, and per host span the extent of the GPU work launched in it.
        let mut record: FastMap<u32, Span> = FastMap::default();
        let mut work: FastMap<(u32, usize), Span> = FastMap::default();
        for a in &t.activities {
            let r = record.entry(a.device).or_insert((a.start, a.end));
            *r = (r.0.min(a.start), r.1.max(a.end));
            if let Some(&i) = a.correlation().and_then(|c| launched.get(&c)) {
                let w = work.entry((a.device, i)).or_insert((a.start, a.end));
                *w = (w.0.min(a.start), w.1.max(a.end));
            }
        }
        for (&device, &extent) in &record {
            if unioned.contains_key(&Some(device)) {
                continue;
            }
            let mine: Vec<Span> = work.iter().filter(|((d, _), _)| *d == device).map(|(_, &s)| s).collect();
            let (spans, rule) = if mine.is_empty() {
                (intervals::intersect(&host, &[extent]), WITHIN_BY_TIME)
            } else {
                (intervals::union(mine), WITHIN_BY_CORRELATION)
            };
            if !spans.is_empty() {
                unioned.insert(Some(device), spans);
                rules.push((device, rule));
            }
        }
    }
    let windows = unioned
        .into_iter()
        .map(|(k, spans)| {
            let spans = match (interiors, spans.first(), spans.last()) {
                (false, Some(first), Some(last)) => vec![(first.0, last.1)],
                _ => spans,
            };
            (k, spans)
        })
        .collect();
    rules.sort_by_key(|&(d, _)| label_key(t.strings.get(d)));
    (windows, rules)
}

/// The spans that bound a device's activity under `--within`: its GPU spans where it has any,
/// else the host spans (same clock in Kineto traces).
pub fn device_windows(windows: &Windows, device: u32) -> &[Span] {
    windows.get(&Some(device)).or_else(|| windows.get(&None)).map_or(&[], Vec::as_slice)
}

fn figures(acts: &[&GpuActivity], windows: Option<&[Span]>, gap_us: f64) -> Figures {
    // Kineto writes a stream's activities in order: one pass over them on all cores, no lists,
    // over the whole extent or one window (the steady state, a --within range).
    let in_order = |window| {
        let swept = intervals::sweep_parts(
            acts,
            |a| (a.start, a.end),
            window,
            intervals::PART,
            || GapStats::new(gap_us),
            GapStats::add,
        );
        swept.map(|(sweep, parts)| (sweep, parts.into_iter().fold(GapStats::new(gap_us), GapStats::merged)))
    };
    let spans = || acts.iter().map(|a| (a.start, a.end));
    let (window_start, window, busy_ns, gaps) = match windows {
        None => match in_order(None) {
            Some((sweep, gaps)) => (sweep.window.0, sweep.window.1 - sweep.window.0, sweep.busy_ns, gaps),
            None => {
                let mut gaps = GapStats::new(gap_us);
                let lo = spans().map(|s| s.0).min().unwrap_or(0);
                let hi = spans().map(|s| s.1).max().unwrap_or(0);
                let busy = intervals::union(spans().collect());
                intervals::gaps(&busy, &[(lo, hi)]).iter().for_each(|(s, e)| gaps.add(e - s));
                (lo, hi - lo, intervals::total(&busy), gaps)
            }
        },
        Some(w) => match (w.len() == 1).then(|| in_order(Some(w[0]))).flatten() {
            Some((sweep, gaps)) => (w[0].0, w[0].1 - w[0].0, sweep.busy_ns, gaps),
            None => {
                let mut gaps = GapStats::new(gap_us);
                let busy = intervals::intersect(&intervals::union(spans().collect()), w);
                intervals::gaps(&busy, w).iter().for_each(|(s, e)| gaps.add(e - s));
                (w.first().map_or(0, |s| s.0), intervals::total(w), intervals::total(&busy), gaps)
            }
        },
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
    fn new(gap_us: f64) -> Self {
        GapStats {
            threshold_us: gap_us,
            threshold_ns: (gap_us * 1000.0).round() as i64,
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
        self.buckets[intervals::gap_bucket(len_ns)] += 1;
    }

    /// Both counts together: the gaps of two parts of one sweep.
    fn merged(mut self, other: GapStats) -> GapStats {
        self.count += other.count;
        self.over_threshold += other.over_threshold;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.buckets.iter_mut().zip(other.buckets).for_each(|(b, o)| *b += o);
        self
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
    acts: Vec<&'t GpuActivity>,
    label: impl Fn(&GpuActivity) -> u32 + Sync,
) -> Vec<(u32, Vec<&'t GpuActivity>)> {
    // One label for all (one GPU, one stream: the usual graph replay) needs no grouping.
    if let Some(first) = acts.first().map(|a| label(a)) {
        if acts.par_iter().all(|a| label(a) == first) {
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

/// A device's measured activity, kept with its figures for the steady-state pass.
struct DeviceActs<'t> {
    id: u32,
    acts: Vec<&'t GpuActivity>,
    /// The measured windows: first activity start to last end, or the `--within` windows.
    windows: Vec<Span>,
}

fn device_figures<'t>(
    t: &'t Timeline,
    windows: Option<&Windows>,
    gap_us: f64,
) -> Vec<(Device, DeviceActs<'t>)> {
    group_by_label(t, t.activities.par_iter().collect(), |a| a.device)
        .into_iter()
        .filter_map(|(device, acts)| {
            let w = windows.map(|w| device_windows(w, device));
            let acts: Vec<&GpuActivity> = match w {
                Some(w) => acts.into_par_iter().filter(|a| overlaps(w, a.start, a.end)).collect(),
                None => acts,
            };
            if acts.is_empty() {
                return None;
            }
            let device_figures = figures(&acts, w, gap_us);
            let windows = match w {
                Some(w) => w.to_vec(),
                None => {
                    let lo = acts.par_iter().map(|a| a.start).min().unwrap_or(0);
                    let hi = acts.par_iter().map(|a| a.end).max().unwrap_or(0);
                    vec![(lo, hi)]
                }
            };
            let streams = stream_figures(t, &acts, w, gap_us, &device_figures);
            let label = t.strings.get(device).to_string();
            let name = t.meta.device_names.iter().find(|(id, _)| *id == label).map(|(_, n)| n.clone());
            let d = Device {
                device: label,
                name: name.filter(|n| !n.is_empty()),
                figures: device_figures,
                streams,
                steady: None,
            };
            Some((d, DeviceActs { id: device, acts, windows }))
        })
        .collect()
}

fn stream_figures(
    t: &Timeline,
    acts: &[&GpuActivity],
    w: Option<&[Span]>,
    gap_us: f64,
    device: &Figures,
) -> Vec<Stream> {
    if acts.par_iter().all(|a| a.stream == acts[0].stream) {
        // A device with one stream (the usual graph replay) has that stream's figures.
        return vec![Stream { stream: t.strings.get(acts[0].stream).to_string(), figures: device.clone() }];
    }
    group_by_label(t, acts.to_vec(), |a| a.stream)
        .into_iter()
        .map(|(id, s)| Stream { stream: t.strings.get(id).to_string(), figures: figures(&s, w, gap_us) })
        .collect()
}

/// Each device's steady-state figures (in the order of `devices`): over the span from the first
/// replay's first GPU activity on it to the last replay's last one. What lies before (an idle
/// prefix while the server waited for requests, warm-up work) is reported beside, not measured
/// as occupancy.
fn steady_figures(
    devices: &[(Device, DeviceActs<'_>)],
    launched: &FastSet<u64>,
    work: &FastMap<u64, CorrelatedWork>,
    gap_us: f64,
) -> Vec<Option<Steady>> {
    // `work` holds the launched ids only.
    let mut extent: FastMap<u32, Span> = FastMap::default();
    for w in work.values() {
        let e = extent.entry(w.device).or_insert((w.first, w.last));
        e.0 = e.0.min(w.first);
        e.1 = e.1.max(w.last);
    }
    let mut out = vec![None; devices.len()];
    for (k, (d, da)) in devices.iter().enumerate() {
        let Some(&(s, e)) = extent.get(&da.id) else { continue };
        let (Some(&(whole_start, _)), Some(&(_, whole_end))) = (da.windows.first(), da.windows.last()) else {
            continue;
        };
        // Inside the measured windows (the --within range when there is one).
        let (s, e) = (s.max(whole_start), e.min(whole_end));
        if e <= s {
            continue;
        }
        let steady: Vec<Span> = intervals::intersect(&da.windows, &[(s, e)]);
        // Inside: overlapping the window, or of zero length within it (an activity that ends
        // where the steady state starts is not part of it).
        let within = |a: &GpuActivity| {
            steady.iter().any(|&(ws, we)| {
                (a.start < we && a.end > ws) || (a.start == a.end && a.start >= ws && a.start <= we)
            })
        };
        // The activities inside, and those of them that graph launches ran, counted in one pass
        // without a list. A replay's activities come one after another: the last id's answer is
        // kept at hand.
        let (inside, from_replays) = da
            .acts
            .par_chunks(intervals::PART)
            .map(|part| {
                let mut last: Option<(u64, bool)> = None;
                let mut launched_by = |c: u64| match last {
                    Some((lc, was)) if lc == c => was,
                    _ => {
                        let was = launched.contains(&c);
                        last = Some((c, was));
                        was
                    }
                };
                let (mut inside, mut from_replays) = (0usize, 0usize);
                for a in part.iter().filter(|a| within(a)) {
                    inside += 1;
                    from_replays += a.correlation().is_some_and(&mut launched_by) as usize;
                }
                (inside, from_replays)
            })
            .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
        let figures = if steady == da.windows {
            // The usual profiled decode loop: nothing but replays in the trace.
            d.figures.clone()
        } else if let [window] = steady[..] {
            // Clamped to the window, the activities outside it have no length and leave the sweep
            // as they would leave a list of those inside: no list is made.
            Figures { activities: inside as u64, ..figures(&da.acts, Some(&[window]), gap_us) }
        } else {
            let inside: Vec<&GpuActivity> = da.acts.par_iter().copied().filter(|a| within(a)).collect();
            figures(&inside, Some(&steady), gap_us)
        };
        let busy = |lo: i64, hi: i64| {
            let span = |a: &&GpuActivity| (a.start, a.end);
            match intervals::sweep_parts(&da.acts, span, Some((lo, hi)), intervals::PART, || (), |_, _| ()) {
                Some((sweep, _)) => us(sweep.busy_ns),
                None => {
                    let spans: Vec<Span> = da
                        .acts
                        .iter()
                        .map(|a| (a.start.max(lo), a.end.min(hi)))
                        .filter(|(a, b)| b > a)
                        .collect();
                    us(intervals::total(&intervals::union(spans)))
                }
            }
        };
        out[k] = Some(Steady {
            figures,
            before_us: us(s - whole_start),
            after_us: us(whole_end - e),
            busy_before_us: if s > whole_start { busy(whole_start, s) } else { 0.0 },
            busy_after_us: if whole_end > e { busy(e, whole_end) } else { 0.0 },
            replay_share: if inside == 0 { 0.0 } else { from_replays as f64 / inside as f64 },
        });
    }
    out
}

/// Whether `[start, end]` meets any of the sorted spans (a zero-length activity on a boundary
/// counts as inside).
fn overlaps(spans: &[Span], start: i64, end: i64) -> bool {
    let i = spans.partition_point(|s| s.1 < start);
    i < spans.len() && spans[i].0 <= end
}

/// The GPU work that shares one correlation id.
#[derive(Debug, Clone, PartialEq)]
struct CorrelatedWork {
    kernels: u64,
    first: i64,
    last: i64,
    device: u32,
    /// Name of the activity that starts first, and of the one that ends last.
    first_name: u32,
    last_name: u32,
    /// Sum of the name hashes of its activities: the same kernels give the same sum in any order,
    /// in any trace.
    names: u64,
    /// Time of its collective kernels (NCCL, RCCL, …), summed.
    collective_ns: i64,
}

impl CorrelatedWork {
    /// Nothing yet, placed where activity `a` is.
    fn first(a: &GpuActivity) -> CorrelatedWork {
        CorrelatedWork {
            kernels: 0,
            first: a.start,
            last: a.end,
            device: a.device,
            first_name: a.name,
            last_name: a.name,
            names: 0,
            collective_ns: 0,
        }
    }

    /// Adds `later`, work read after this (an activity, or a later part's): the first and the
    /// last activities change only for one strictly earlier or later.
    fn add(&mut self, later: &CorrelatedWork) {
        self.kernels += later.kernels;
        self.names = self.names.wrapping_add(later.names);
        self.collective_ns += later.collective_ns;
        if later.first < self.first {
            self.first = later.first;
            self.device = later.device;
            self.first_name = later.first_name;
        }
        if later.last > self.last {
            self.last = later.last;
            self.last_name = later.last_name;
        }
    }
}

/// A hash of a name that is the same in every trace and every process (a fixed seed), so that
/// graphs of two traces can be matched by their kernels.
fn stable_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x6c61_756e_6368_6775).hash_one(s)
}

type Replays = (GraphLaunches, Vec<Replay>, ReplaySummary, FastMap<u64, CorrelatedWork>, Damage);

/// The correlation ids of the graph launches: the only ids whose GPU work the analysis reads.
fn launched_ids(t: &Timeline) -> FastSet<u64> {
    t.launches.iter().filter_map(|l| l.correlation).collect()
}

/// The GPU work of each graph launch's correlation id (`launched`), on all cores: each part of
/// the activities gathered alone, the parts then joined in order (so that ties go to the activity
/// first in the file). Only launched ids are gathered: the other activities, most of a trace
/// outside the replays, each with an id of its own, would fill a map nothing reads.
fn correlated_work(t: &Timeline, launched: &FastSet<u64>, part: usize) -> FastMap<u64, CorrelatedWork> {
    // Each string's hash, and whether it names a collective kernel, once per string (the strings
    // are the few distinct names and labels, not the activities).
    let names: Vec<(u64, bool)> = (0..t.strings.len() as u32)
        .into_par_iter()
        .map(|id| {
            let name = t.strings.get(id);
            // At least 1, as in the signatures of runs saved by earlier builds (which kept 0 for
            // "not hashed yet"): `compare` matches graphs by these sums.
            (stable_hash(name).max(1), crate::ranks::collectives::collective_kind(name).is_some())
        })
        .collect();
    t.activities
        .par_chunks(part)
        .map(|part| {
            let mut work: FastMap<u64, CorrelatedWork> = FastMap::default();
            // The kernels of one replay share its launch's correlation id and come one after
            // another: the last id, and its entry when launched, are kept at hand instead of
            // looked up again.
            let mut last: Option<(u64, Option<CorrelatedWork>)> = None;
            for a in part {
                let Some(c) = a.correlation() else { continue };
                let w = match &mut last {
                    Some((lc, w)) if *lc == c => w,
                    _ => {
                        if let Some((lc, Some(w))) = last.take() {
                            work.insert(lc, w);
                        }
                        let w = launched
                            .contains(&c)
                            .then(|| work.remove(&c).unwrap_or_else(|| CorrelatedWork::first(a)));
                        &mut last.insert((c, w)).1
                    }
                };
                let Some(w) = w else { continue };
                let (hash, collective) = names[a.name as usize];
                w.add(&CorrelatedWork {
                    kernels: 1,
                    names: hash,
                    collective_ns: if collective { a.end - a.start } else { 0 },
                    ..CorrelatedWork::first(a)
                });
            }
            if let Some((lc, Some(w))) = last {
                work.insert(lc, w);
            }
            work
        })
        .reduce_with(|mut before, after| {
            for (c, w) in after {
                match before.entry(c) {
                    std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().add(&w),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(w);
                    }
                }
            }
            before
        })
        .unwrap_or_default()
}

/// Busy time per device over the whole trace (the union of its activities), indexed by the
/// device's string id. Activities in order of start (Kineto's) are merged as they come, in parts
/// on all cores, the parts' spans then joined; otherwise each device's are sorted first.
fn busy_by_device(t: &Timeline, part: usize) -> Vec<Vec<Span>> {
    let mut busy: Vec<Vec<Span>> = vec![Vec::new(); t.strings.len()];
    // Per part, each device's merged spans; `None` when a device's starts go back in the part.
    type DeviceSpans = Vec<(u32, Vec<Span>)>;
    let parts: Option<Vec<DeviceSpans>> = t
        .activities
        .par_chunks(part)
        .map(|part| {
            let mut devices: Vec<(u32, Vec<Span>)> = Vec::new();
            let mut at = 0;
            for a in part.iter().filter(|a| a.end > a.start) {
                // Consecutive activities nearly always share their device.
                if devices.get(at).is_none_or(|d| d.0 != a.device) {
                    at = match devices.iter().position(|d| d.0 == a.device) {
                        Some(i) => i,
                        None => {
                            devices.push((a.device, Vec::new()));
                            devices.len() - 1
                        }
                    };
                }
                let spans = &mut devices[at].1;
                match spans.last_mut() {
                    Some(last) if a.start < last.0 => return None,
                    Some(last) if a.start <= last.1 => last.1 = last.1.max(a.end),
                    _ => spans.push((a.start, a.end)),
                }
            }
            Some(devices)
        })
        .collect();
    if let Some(parts) = parts {
        let mut sizes = vec![0usize; busy.len()];
        parts.iter().flatten().for_each(|(d, spans)| sizes[*d as usize] += spans.len());
        let mut in_order = true;
        for (device, spans) in parts.into_iter().flatten() {
            let all = &mut busy[device as usize];
            if all.capacity() == 0 {
                all.reserve_exact(sizes[device as usize]);
            }
            // A part's first spans may still meet the last one joined; the rest cannot.
            let mut rest = spans.as_slice();
            while let (Some(last), Some(&(start, end))) = (all.last_mut(), rest.first()) {
                if start < last.0 {
                    in_order = false;
                } else if start <= last.1 {
                    last.1 = last.1.max(end);
                } else {
                    break;
                }
                rest = &rest[1..];
            }
            all.extend_from_slice(rest);
        }
        if in_order {
            return busy;
        }
    }
    let mut counts = vec![0usize; t.strings.len()];
    t.activities.iter().for_each(|a| counts[a.device as usize] += 1);
    let mut spans: Vec<Vec<Span>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
    t.activities.iter().for_each(|a| spans[a.device as usize].push((a.start, a.end)));
    spans.into_par_iter().map(intervals::union).collect()
}

fn launches_and_replays(t: &Timeline, launched: &FastSet<u64>, windows: Option<&Windows>) -> Replays {
    let work = correlated_work(t, launched, intervals::PART);
    let busy_by_device = busy_by_device(t, intervals::PART);
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
    let launches_kept = launches.clone();
    let mut apis: Vec<String> = Vec::new();
    let mut durations: Vec<f64> = Vec::with_capacity(launches.len());
    let mut replays = Vec::with_capacity(launches.len());
    let mut graphs: Vec<GraphFigures> = Vec::new();
    let mut graph_of: FastMap<(u64, u64), u32> = FastMap::default();
    // Each launch's idle time before its GPU work, on all cores. Launches come in time order: in
    // a stretch of them, each search in the busy time starts where the last one ended.
    let idle: Vec<Option<i64>> = launches
        .par_chunks(IDLE_SEARCHES_PER_TASK)
        .flat_map_iter(|stretch| {
            let mut hints: Vec<(u32, usize)> = Vec::new();
            stretch
                .iter()
                .map(|l| {
                    let w = l.correlation.and_then(|c| work.get(&c))?;
                    let k = hints.iter().position(|h| h.0 == w.device).unwrap_or_else(|| {
                        hints.push((w.device, 0));
                        hints.len() - 1
                    });
                    idle_before(&busy_by_device[w.device as usize], w.first, &mut hints[k].1)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for (i, (l, idle_before)) in launches.iter().zip(idle).enumerate() {
        let api = launch_api_name(l.api);
        if !apis.iter().any(|a| a == api) {
            apis.push(api.to_string());
        }
        durations.push(us(l.end - l.start));
        let w = l.correlation.and_then(|c| work.get(&c));
        // Replays of one graph: the same number of kernels with the same names.
        let graph = w.map(|w| {
            *graph_of.entry((w.kernels, w.names)).or_insert_with(|| {
                graphs.push(GraphFigures {
                    kernels: w.kernels,
                    replays: 0,
                    signature: format!("{:016x}", w.names),
                    first_kernel: t.strings.get(w.first_name).to_string(),
                    last_kernel: t.strings.get(w.last_name).to_string(),
                });
                graphs.len() as u32 - 1
            })
        });
        if let Some(g) = graph {
            graphs[g as usize].replays += 1;
        }
        replays.push(Replay {
            graph,
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
    let mut summary = summarize(&replays);
    let mut collective_us: Vec<f64> = launches_kept
        .iter()
        .filter_map(|l| l.correlation.and_then(|c| work.get(&c)))
        .filter(|w| w.collective_ns > 0)
        .map(|w| us(w.collective_ns))
        .collect();
    collective_us.sort_by(f64::total_cmp);
    summary.collectives_p50_us = intervals::percentile(&collective_us, 50.0);
    let damage = damage(t, &launches_kept, &work, &summary, &graphs);
    summary.graphs = graphs;
    (launches, replays, summary, work, damage)
}

/// The figures that tell lost GPU events ([`Damage`]), over the launches kept.
fn damage(
    t: &Timeline,
    launches: &[&launchguard_trace::GraphLaunch],
    work: &FastMap<u64, CorrelatedWork>,
    summary: &ReplaySummary,
    graphs: &[GraphFigures],
) -> Damage {
    let replays_unmatched = if summary.count >= MIN_REPLAYS_TO_MATCH {
        graphs.iter().filter(|g| g.replays == 1).count() as u64
    } else {
        0
    };
    let host_window_us = match (launches.iter().map(|l| l.start).min(), launches.iter().map(|l| l.end).max())
    {
        (Some(lo), Some(hi)) => us(hi - lo),
        _ => 0.0,
    };
    let replayed: Vec<&CorrelatedWork> =
        launches.iter().filter_map(|l| l.correlation.and_then(|c| work.get(&c))).collect();
    let gpu_window_us = match (replayed.iter().map(|w| w.first).min(), replayed.iter().map(|w| w.last).max())
    {
        (Some(lo), Some(hi)) => us(hi - lo),
        _ => 0.0,
    };
    // Each stream that ran replay work, and when its last activity (of any kind) ended.
    let launched: FastSet<u64> = launches.iter().filter_map(|l| l.correlation).collect();
    // Per stream: its last end, and whether it ran replay work; in parts on all cores, joined.
    // Consecutive activities nearly always share their stream and their correlation id, so the
    // last entry and the last id's answer are kept at hand instead of looked up again.
    let streams = t
        .activities
        .par_chunks(intervals::PART)
        .map(|part| {
            let mut streams: FastMap<(u32, u32), (i64, bool)> = FastMap::default();
            let mut current: Option<((u32, u32), (i64, bool))> = None;
            let mut last_corr: Option<(u64, bool)> = None;
            for a in part {
                let replay = match (a.correlation(), last_corr) {
                    (None, _) => false,
                    (Some(c), Some((lc, was))) if lc == c => was,
                    (Some(c), _) => {
                        let was = launched.contains(&c);
                        last_corr = Some((c, was));
                        was
                    }
                };
                let key = (a.device, a.stream);
                let entry = match &mut current {
                    Some((k, e)) if *k == key => e,
                    _ => {
                        if let Some((k, e)) = current.take() {
                            streams.insert(k, e);
                        }
                        let e = streams.remove(&key).unwrap_or((a.end, false));
                        &mut current.insert((key, e)).1
                    }
                };
                entry.0 = entry.0.max(a.end);
                entry.1 |= replay;
            }
            if let Some((k, e)) = current {
                streams.insert(k, e);
            }
            streams
        })
        .reduce(FastMap::default, |mut all, part| {
            for (k, (end, ran)) in part {
                let e = all.entry(k).or_insert((end, false));
                e.0 = e.0.max(end);
                e.1 |= ran;
            }
            all
        });
    // Only launches whose GPU work is missing count: a launch whose replay ran on another stream
    // or device says nothing of this one.
    let mut starts: Vec<i64> = launches
        .iter()
        .filter(|l| l.correlation.is_none_or(|c| !work.contains_key(&c)))
        .map(|l| l.start)
        .collect();
    starts.sort_unstable();
    let silent = streams
        .iter()
        .filter(|(_, &(_, ran))| ran)
        .map(|(&(device, stream), &(end, _))| {
            let after = (starts.len() - starts.partition_point(|&s| s <= end)) as u64;
            (after, end, device, stream)
        })
        .filter(|&(after, ..)| after > 0)
        .max_by_key(|&(after, end, device, stream)| (after, std::cmp::Reverse(end), device, stream))
        .map(|(launches_after, end, device, stream)| Silence {
            device: t.strings.get(device).to_string(),
            stream: t.strings.get(stream).to_string(),
            silent_from_us: us(end),
            launches_after,
        });
    Damage {
        replays_without_kernels: summary.without_kernels,
        replays_unmatched,
        silent,
        host_window_us,
        gpu_window_us,
        profiler_messages: t.meta.lost_records.clone(),
    }
}

fn launch_api_name(api: launchguard_trace::GraphApi) -> &'static str {
    match api {
        launchguard_trace::GraphApi::CudaRuntime => "cudaGraphLaunch",
        launchguard_trace::GraphApi::CudaDriver => "cuGraphLaunch",
        launchguard_trace::GraphApi::Hip => "hipGraphLaunch",
    }
}

/// Launches whose idle time before is searched per task, each search starting from the last.
const IDLE_SEARCHES_PER_TASK: usize = 512;

/// Idle time just before `t` on a device whose busy time is `busy`: 0 if `t` falls inside busy
/// time that started earlier, `None` if nothing ran before `t`. `hint` is where the search for a
/// nearby time ended, and is moved to where this one ends.
fn idle_before(busy: &[Span], t: i64, hint: &mut usize) -> Option<i64> {
    let i = partition_from(busy, |s| s.0 < t, *hint);
    *hint = i;
    // busy[i-1] starts before t.
    if i > 0 && busy[i - 1].1 >= t {
        return Some(0);
    }
    (i > 0).then(|| t - busy[i - 1].1)
}

/// `items.partition_point(before)`, searched outward from `hint` in steps that double: near
/// the hint (the usual case, times in order) a few probes, where a binary search over a busy
/// time of hundreds of thousands of spans would miss the cache at every step.
fn partition_from<T>(items: &[T], before: impl Fn(&T) -> bool, hint: usize) -> usize {
    let n = items.len();
    let hint = hint.min(n);
    let mut step = 1;
    if hint < n && before(&items[hint]) {
        // Past the hint: every item below `lo` is before.
        let mut lo = hint + 1;
        loop {
            let probe = lo + step - 1;
            if probe >= n || !before(&items[probe]) {
                return lo + items[lo..probe.min(n)].partition_point(&before);
            }
            lo = probe + 1;
            step *= 2;
        }
    }
    // At or below the hint: no item from `hi` on is before.
    let mut hi = hint;
    loop {
        if hi == 0 {
            return 0;
        }
        let probe = hi.saturating_sub(step);
        if before(&items[probe]) {
            return probe + 1 + items[probe + 1..hi].partition_point(&before);
        }
        hi = probe;
        step *= 2;
    }
}

fn summarize(replays: &[Replay]) -> ReplaySummary {
    let mut freq: BTreeMap<u64, u64> = BTreeMap::new();
    for r in replays.iter().filter(|r| r.kernels > 0) {
        *freq.entry(r.kernels).or_default() += 1;
    }
    // Most common count; ties go to the larger count (a lost event makes a count smaller).
    let mode = freq.iter().max_by_key(|(k, n)| (**n, **k)).map(|(k, _)| *k);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        intervals::percentile(v, 50.0)
    };
    let sorted = |f: &dyn Fn(&Replay) -> Option<f64>| median(&mut replays.iter().filter_map(f).collect());
    // The first replay on each device follows whatever came before the replays (an idle prefix).
    let mut seen: FastSet<&str> = FastSet::default();
    let mut steady_idle: Vec<f64> = replays
        .iter()
        .filter(|r| r.device.as_deref().is_some_and(|d| !seen.insert(d)))
        .filter_map(|r| r.idle_before_us)
        .collect();
    let mut kernel_counts: Vec<CountOf> =
        freq.iter().map(|(&kernels, &replays)| CountOf { kernels, replays }).collect();
    kernel_counts.sort_by(|a, b| b.replays.cmp(&a.replays).then(b.kernels.cmp(&a.kernels)));
    ReplaySummary {
        count: replays.len() as u64,
        kernels_mode: mode,
        inconsistent: mode
            .map_or(0, |m| replays.iter().filter(|r| r.kernels > 0 && r.kernels != m).count() as u64),
        without_kernels: replays.iter().filter(|r| r.kernels == 0).count() as u64,
        latency_p50_us: sorted(&|r| r.launch_to_first_kernel_us),
        gpu_span_p50_us: sorted(&|r| r.gpu_span_us),
        idle_before_p50_us: sorted(&|r| r.idle_before_us),
        steady_idle_before_p50_us: median(&mut steady_idle),
        kernel_counts,
        collectives_p50_us: None,
        graphs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::bundled;

    #[test]
    fn correlated_work_in_parts_is_the_work_read_in_one() {
        let t = bundled();
        let launched = launched_ids(&t);
        let whole = correlated_work(&t, &launched, usize::MAX);
        assert!(whole.len() >= 100, "{} correlation ids", whole.len());
        // Exactly the launched ids that ran activities: not the others (kernels launched alone).
        let ran: FastSet<u64> = t.activities.iter().filter_map(|a| a.correlation()).collect();
        let expected: FastSet<u64> = launched.intersection(&ran).copied().collect();
        assert_eq!(whole.keys().copied().collect::<FastSet<u64>>(), expected);
        // Ids left out of the launched set (every other one) are not gathered, in any parts.
        let half: FastSet<u64> = launched.iter().copied().filter(|c| c % 2 == 0).collect();
        let some = correlated_work(&t, &half, usize::MAX);
        assert_eq!(
            some.keys().copied().collect::<FastSet<u64>>(),
            half.intersection(&ran).copied().collect()
        );
        assert!(!some.is_empty() && some.len() < whole.len());
        for part in [1, 3, 64] {
            assert_eq!(correlated_work(&t, &half, part), some, "parts of {part}");
        }
        // Naive, straight from the definition: per id, the activities' count and extremes.
        for (c, w) in &whole {
            let acts: Vec<&GpuActivity> =
                t.activities.iter().filter(|a| a.correlation() == Some(*c)).collect();
            assert_eq!(w.kernels, acts.len() as u64);
            let first = acts.iter().min_by_key(|a| a.start).expect("one");
            assert_eq!((w.first, w.first_name), (first.start, first.name));
            assert_eq!(w.last, acts.iter().map(|a| a.end).max().expect("one"));
        }
        // Parts that split replays anywhere, even every activity alone.
        for part in [1, 2, 3, 7, 64, 1000] {
            assert_eq!(correlated_work(&t, &launched, part), whole, "parts of {part}");
        }
    }

    #[test]
    fn busy_time_per_device_is_the_union_of_its_activities() {
        let mut t = bundled();
        let union_of = |t: &Timeline, device: u32| {
            intervals::union(
                t.activities.iter().filter(|a| a.device == device).map(|a| (a.start, a.end)).collect(),
            )
        };
        let devices: FastSet<u32> = t.activities.iter().map(|a| a.device).collect();
        // In order, in parts of every size down to one activity: each part's spans joined to the
        // last.
        for part in [1, 2, 3, 17, 4096, usize::MAX] {
            let in_order = busy_by_device(&t, part);
            for &d in &devices {
                assert_eq!(in_order[d as usize], union_of(&t, d), "parts of {part}");
            }
        }
        // Two devices interleaved activity by activity (another string stands for the second).
        let mut two = t.clone();
        let other = two.activities[0].stream;
        two.activities.iter_mut().skip(1).step_by(2).for_each(|a| a.device = other);
        let both: FastSet<u32> = two.activities.iter().map(|a| a.device).collect();
        assert_eq!(both.len(), devices.len() + 1);
        for part in [1, 2, 3, 17, 4096, usize::MAX] {
            let busy = busy_by_device(&two, part);
            for &d in &both {
                assert_eq!(busy[d as usize], union_of(&two, d), "parts of {part}");
            }
        }
        // Out of order (the sorted path taken), whether a part or the join finds it.
        t.activities.reverse();
        for part in [1, 5, usize::MAX] {
            let shuffled = busy_by_device(&t, part);
            for &d in &devices {
                assert_eq!(shuffled[d as usize], union_of(&t, d), "parts of {part}");
                assert!(!shuffled[d as usize].is_empty());
            }
        }
    }

    #[test]
    fn a_long_pattern_is_cut_and_its_length_said() {
        assert_eq!(quoted("probe::replay"), "'probe::replay'");
        let long = "x".repeat(129_000);
        let q = quoted(&long);
        assert_eq!(q, format!("'{}…' (129000 characters)", "x".repeat(80)));
        let e = AnalyzeError::WithinMatchesNothing { pattern: long, names: vec![] };
        assert!(e.to_string().len() < 200, "{e}");
    }

    #[test]
    fn idle_before_uses_the_union() {
        let busy = vec![(0, 10), (20, 30)];
        for hint in 0..4 {
            assert_eq!(idle_before(&busy, 0, &mut { hint }), None);
            assert_eq!(idle_before(&busy, 20, &mut { hint }), Some(10));
            assert_eq!(idle_before(&busy, 25, &mut { hint }), Some(0));
            assert_eq!(idle_before(&busy, 35, &mut { hint }), Some(5));
        }
    }

    #[test]
    fn a_search_from_any_hint_finds_the_partition_point() {
        // Sorted starts with repeats; every time in and around them, from every hint (past the
        // end too): the same answer as the binary search over the whole list.
        let starts: Vec<i64> = vec![1, 3, 3, 3, 7, 8, 8, 15, 20, 21, 22, 40, 41, 41, 60, 61, 62, 63, 99];
        for n in 0..=starts.len() {
            let items = &starts[..n];
            for t in -1..=101 {
                let want = items.partition_point(|&s| s < t);
                for hint in 0..=n + 2 {
                    assert_eq!(partition_from(items, |&s| s < t, hint), want, "n {n} t {t} hint {hint}");
                }
            }
        }
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

#[cfg(test)]
mod anomaly_tests {
    use super::*;

    fn replay(index: u64, correlation: u64, start_us: f64, to_first_us: f64) -> Replay {
        Replay {
            index,
            correlation: Some(correlation),
            device: Some("0".into()),
            launch_start_us: start_us,
            launch_us: 5.0,
            kernels: 4,
            launch_to_first_kernel_us: Some(to_first_us),
            gpu_span_us: Some(10.0),
            idle_before_us: Some(0.0),
            graph: Some(0),
        }
    }

    #[test]
    fn impossible_causality_is_counted_with_where_it_is_first_seen() {
        let sound = [replay(0, 10, 100.0, 40.0), replay(1, 11, 200.0, 0.0)];
        assert_eq!(anomalies(&sound), []);
        // A first kernel up to CLOCK_SKEW_US before its launch is the clocks' disagreement.
        let skewed = [replay(0, 10, 100.0, -1.5), replay(1, 11, 200.0, -20.0)];
        assert_eq!(anomalies(&skewed), []);
        let damaged = [
            replay(0, 10, 100.0, 40.0),
            replay(1, 11, 200.0, -500.0),
            replay(2, 10, 300.0, 40.0),
            replay(3, 12, 400.0, -1.5),
            replay(4, 11, 500.0, 40.0),
            replay(5, 13, 600.0, -20.5),
        ];
        let got = anomalies(&damaged);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].kind, got[0].count), (AnomalyKind::KernelBeforeLaunch, 2));
        assert!(got[0].message().starts_with(
            "impossible causality: in 2 replays the first GPU activity starts more than 20 µs before its launch (first: launch 1 "
        ));
        assert_eq!(got[0].first, "launch 1 at 200 µs, correlation 11, its first GPU activity 500 µs earlier");
        assert_eq!((got[1].kind, got[1].count), (AnomalyKind::CorrelationReused, 2));
        assert_eq!(got[1].first, "correlation 10 joins launches 0 at 100 µs and 2 at 300 µs");
        assert!(got[1].message().starts_with("impossible causality: 2 correlation ids"));
    }
}
