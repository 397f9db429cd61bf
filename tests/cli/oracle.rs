//! An independent, deliberately naive implementation of the `analyze` definitions (issue 2),
//! written from the contract and not from `crates/analysis`, so that the tests compare the program
//! with a second method rather than with itself.
//!
//! Differences of method, on purpose: the whole file is loaded as a `serde_json::Value` (no
//! streaming), times are `f64` microseconds (not exact integer nanoseconds; hence the 2 ns
//! tolerance), and busy time is measured on elementary segments — every start and end splits the
//! time axis, a prefix sum over +1/−1 marks says whether each segment is covered — instead of
//! merging sorted intervals.
//!
//! Where the contract leaves a choice open, the choices are: a stream is `args.stream`, else
//! `tid`; `--within` uses a device's matching `gpu_user_annotation` spans, else the GPU work the
//! calls inside the matching host spans launched (by correlation id; without ids, the host spans
//! cut to the device's record), and drops devices and streams with no activity inside them; graph launches are not
//! filtered by `--within` (the tests use it only where every launch lies inside the spans).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use regex::Regex;
use serde_json::Value;

/// Loads a whole trace file (plain, or gzip with any number of members) into memory.
pub fn load(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out).expect("gzip");
        out
    } else {
        bytes
    };
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The events of a trace document: `traceEvents` of an object, or a bare array.
pub fn events(doc: &Value) -> &[Value] {
    match doc {
        Value::Array(a) => a,
        Value::Object(o) => o.get("traceEvents").and_then(Value::as_array).map_or(&[], Vec::as_slice),
        _ => &[],
    }
}

/// What to compute.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Gaps longer than this are counted, µs.
    pub gap_threshold_us: f64,
    /// `--within`: measure from the first annotation span whose name matches to the last.
    pub within: Option<Regex>,
    /// `--within-interiors`: inside the matching spans only.
    pub within_interiors: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Opts { gap_threshold_us: 100.0, within: None, within_interiors: false }
    }
}

/// Occupancy figures of one device or stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub activities: u64,
    pub window_us: f64,
    pub busy_us: f64,
    pub occupancy: f64,
    /// Idle intervals of positive length inside the window.
    pub gaps: Vec<f64>,
    pub over_threshold: u64,
    pub max_gap_us: f64,
}

/// Graph-launch duration statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Launches {
    pub count: u64,
    pub mean_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Per launch (file order): its correlation id and how many GPU activities share it.
    pub kernels: Vec<(Option<u64>, u64)>,
}

/// One replay, joined to its GPU work by correlation id.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub correlation: u64,
    pub kernels: u64,
    pub launch_to_first_kernel_us: Option<f64>,
    pub gpu_span_us: Option<f64>,
    pub idle_before_us: Option<f64>,
}

/// Everything the oracle computes for one trace.
#[derive(Debug, Clone)]
pub struct Expected {
    pub events: u64,
    pub skipped: u64,
    pub devices: BTreeMap<String, Figures>,
    /// Per device with graph replays: the figures from the first replay's first activity on it
    /// to the last replay's last (without `--within`).
    pub steady: BTreeMap<String, Figures>,
    /// Median idle time before a replay, the first replay on each device left out.
    pub steady_idle_before_p50: Option<f64>,
    /// Keyed by (device, stream).
    pub streams: BTreeMap<(String, String), Figures>,
    pub launches: Launches,
    pub replays: Vec<Replay>,
}

#[derive(Debug, Clone)]
struct Activity {
    device: String,
    stream: String,
    start: f64,
    end: f64,
    correlation: Option<u64>,
}

/// A number or a numeric string of microseconds, split into whole µs and a fraction, so that
/// absolute timestamps (1.7e15 µs, where an f64 steps by 0.25 µs) keep their nanoseconds once an
/// origin is subtracted from the whole part.
fn micros_parts(v: Option<&Value>) -> Option<(i64, f64)> {
    let text = match v? {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        _ => return None,
    };
    let x: f64 = text.parse().ok().filter(|x: &f64| x.is_finite())?;
    match text.split_once('.') {
        Some((whole, frac)) if !text.contains(['e', 'E']) && frac.bytes().all(|b| b.is_ascii_digit()) => {
            let negative = whole.starts_with('-');
            let w: i64 = match whole.trim_start_matches(['-', '+']) {
                "" => 0,
                digits => digits.parse().ok()?,
            };
            let fr: f64 = format!("0.{frac}0").parse().ok()?;
            Some(if negative { (-w, -fr) } else { (w, fr) })
        }
        _ => Some((x.trunc() as i64, x - x.trunc())),
    }
}

/// A duration (or any small value) in µs.
fn micros(v: Option<&Value>) -> Option<f64> {
    micros_parts(v).map(|(w, fr)| w as f64 + fr)
}

/// A timestamp in µs after `origin` (whole µs).
fn micros_after(v: Option<&Value>, origin: i64) -> Option<f64> {
    micros_parts(v).map(|(w, fr)| (w - origin) as f64 + fr)
}

/// A label (`pid`, `tid`, `args.device`, `args.stream`) as text.
fn label(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(n.as_i64().map_or_else(|| n.to_string(), |i| i.to_string())),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn correlation(e: &Value) -> Option<u64> {
    match e.get("args")?.get("correlation")? {
        Value::Number(n) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64))
        }
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn arg<'a>(e: &'a Value, key: &str) -> Option<&'a Value> {
    e.get("args").and_then(|a| a.get(key))
}

/// Start (after `origin`) and duration of a complete event, or `None` when either is unusable.
fn complete(e: &Value, origin: i64) -> Option<(f64, f64)> {
    if e.get("ph").and_then(Value::as_str) != Some("X") {
        return None;
    }
    let ts = micros_after(e.get("ts"), origin)?;
    let dur = micros(e.get("dur")).filter(|d| *d >= 0.0)?;
    Some((ts, dur))
}

fn is_gpu_category(cat: &str) -> bool {
    ["kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"].iter().any(|c| cat.eq_ignore_ascii_case(c))
}

fn graph_launch_name() -> Regex {
    Regex::new(r"^(cudaGraphLaunch|cuGraphLaunch|hipGraphLaunch)(_ptsz|_spt)?(_v[0-9]+)?$").unwrap()
}

/// numpy's default percentile: linear interpolation between the closest ranks.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q / 100.0 * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

/// Busy time and gaps of `acts` (start, end) inside the window set `window` (disjoint, sorted).
fn figures(acts: &[(f64, f64)], window: &[(f64, f64)], threshold: f64) -> Figures {
    // Every boundary splits the axis into elementary segments.
    let mut xs: Vec<f64> = acts.iter().flat_map(|&(s, e)| [s, e]).collect();
    xs.extend(window.iter().flat_map(|&(s, e)| [s, e]));
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let at = |x: f64| xs.binary_search_by(|p| p.total_cmp(&x)).unwrap();
    // Coverage of segment i = [xs[i], xs[i+1]] by a prefix sum of +1 at starts, −1 at ends.
    let mut marks = vec![0i64; xs.len() + 1];
    for &(s, e) in acts {
        marks[at(s)] += 1;
        marks[at(e)] -= 1;
    }
    let mut win_marks = vec![0i64; xs.len() + 1];
    for &(s, e) in window {
        win_marks[at(s)] += 1;
        win_marks[at(e)] -= 1;
    }
    let (mut cover, mut inside) = (0i64, 0i64);
    let mut busy = 0.0;
    let mut gaps = Vec::new();
    let mut current_gap: Option<f64> = None;
    for i in 0..xs.len().saturating_sub(1) {
        cover += marks[i];
        inside += win_marks[i];
        let len = xs[i + 1] - xs[i];
        if inside > 0 && cover > 0 {
            busy += len;
        }
        if inside > 0 && cover == 0 {
            *current_gap.get_or_insert(0.0) += len;
        } else if let Some(g) = current_gap.take() {
            gaps.push(g);
        }
    }
    if let Some(g) = current_gap {
        gaps.push(g);
    }
    let window_us: f64 = window.iter().map(|(s, e)| e - s).sum();
    let activities = acts
        .iter()
        .filter(|&&(s, e)| window.iter().any(|&(ws, we)| s < we && e > ws || (s == e && s >= ws && s <= we)))
        .count();
    Figures {
        activities: activities as u64,
        window_us,
        busy_us: busy,
        occupancy: if window_us > 0.0 { busy / window_us } else { 0.0 },
        over_threshold: gaps.iter().filter(|g| **g > threshold).count() as u64,
        max_gap_us: gaps.iter().copied().fold(0.0, f64::max),
        gaps,
    }
}

/// The union of intervals, as disjoint sorted intervals (the spans of `--within`).
fn union(mut v: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Computes every figure of the contract for one trace document.
pub fn compute(doc: &Value, opts: &Opts) -> Expected {
    let evs = events(doc);
    // Times are kept relative to the first timestamp's whole microseconds.
    let origin = evs.iter().find_map(|e| micros_parts(e.get("ts"))).map_or(0, |p| p.0);
    let launch_re = graph_launch_name();
    let mut skipped = 0u64;
    let mut acts = Vec::new();
    let mut launches: Vec<(f64, f64, Option<u64>)> = Vec::new();
    // Host calls with a correlation id: (start, id).
    let mut host_calls: Vec<(f64, u64)> = Vec::new();
    // Matching annotation spans: GPU spans by device, host spans.
    let mut gpu_spans: HashMap<String, Vec<(f64, f64)>> = HashMap::new();
    let mut host_spans: Vec<(f64, f64)> = Vec::new();
    for e in evs {
        if !e.is_object() || micros(e.get("ts")).is_none() {
            skipped += 1;
            continue;
        }
        let is_x = e.get("ph").and_then(Value::as_str) == Some("X");
        let Some((ts, dur)) = complete(e, origin) else {
            if is_x {
                skipped += 1;
            }
            continue;
        };
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        if is_gpu_category(cat) {
            acts.push(Activity {
                device: label(arg(e, "device")).or_else(|| label(e.get("pid"))).unwrap_or_default(),
                stream: label(arg(e, "stream")).or_else(|| label(e.get("tid"))).unwrap_or_default(),
                start: ts,
                end: ts + dur,
                correlation: correlation(e),
            });
        } else if cat == "gpu_user_annotation" || cat == "user_annotation" {
            if opts.within.as_ref().is_some_and(|re| re.is_match(name)) {
                if cat == "gpu_user_annotation" {
                    let dev = label(arg(e, "device")).or_else(|| label(e.get("pid"))).unwrap_or_default();
                    gpu_spans.entry(dev).or_default().push((ts, ts + dur));
                } else {
                    host_spans.push((ts, ts + dur));
                }
            }
        } else {
            if let Some(c) = correlation(e) {
                host_calls.push((ts, c));
            }
            if launch_re.is_match(name) {
                launches.push((ts, dur, correlation(e)));
            }
        }
    }

    // Group by device and by stream.
    let mut by_device: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut by_stream: BTreeMap<(String, String), Vec<(f64, f64)>> = BTreeMap::new();
    for a in &acts {
        by_device.entry(a.device.clone()).or_default().push((a.start, a.end));
        by_stream.entry((a.device.clone(), a.stream.clone())).or_default().push((a.start, a.end));
    }
    // The window: first start to last end of the group, or the matching spans of the device
    // (GPU spans when the device has some, else the host spans).
    // Host spans end before the GPU runs what they launched: a device without spans of its own
    // is measured over the GPU work whose call started inside a host span (one extent per span),
    // or without correlation ids over the host spans cut to the device's own record.
    let host_windows = |device: &str| -> Vec<(f64, f64)> {
        let mine: Vec<&Activity> = acts.iter().filter(|a| a.device == device).collect();
        let lo = mine.iter().map(|a| a.start).fold(f64::INFINITY, f64::min);
        let hi = mine.iter().map(|a| a.end).fold(f64::NEG_INFINITY, f64::max);
        let mut extents = Vec::new();
        let host_spans = union(host_spans.clone());
        for &(s0, s1) in &host_spans {
            let calls: Vec<u64> =
                host_calls.iter().filter(|(t, _)| *t >= s0 && *t <= s1).map(|(_, c)| *c).collect();
            let launched: Vec<&&Activity> =
                mine.iter().filter(|a| a.correlation.is_some_and(|c| calls.contains(&c))).collect();
            if !launched.is_empty() {
                let a = launched.iter().map(|a| a.start).fold(f64::INFINITY, f64::min);
                let b = launched.iter().map(|a| a.end).fold(f64::NEG_INFINITY, f64::max);
                extents.push((a, b));
            }
        }
        if extents.is_empty() {
            host_spans.iter().map(|&(a, b)| (a.max(lo), b.min(hi))).filter(|(a, b)| b > a).collect()
        } else {
            extents
        }
    };
    let window_of = |device: &str, group: &[(f64, f64)]| -> Vec<(f64, f64)> {
        if opts.within.is_some() {
            let spans = union(gpu_spans.get(device).cloned().unwrap_or_else(|| host_windows(device)));
            if opts.within_interiors || spans.is_empty() {
                spans
            } else {
                vec![(spans[0].0, spans[spans.len() - 1].1)]
            }
        } else {
            let lo = group.iter().map(|a| a.0).fold(f64::INFINITY, f64::min);
            let hi = group.iter().map(|a| a.1).fold(f64::NEG_INFINITY, f64::max);
            vec![(lo, hi)]
        }
    };
    let thr = opts.gap_threshold_us;
    // A device or stream with no activity inside the spans has nothing to report.
    let devices: BTreeMap<String, Figures> = by_device
        .iter()
        .map(|(d, g)| (d.clone(), figures(g, &window_of(d, g), thr)))
        .filter(|(_, f)| f.activities > 0)
        .collect();
    let streams = by_stream
        .iter()
        .map(|(k, g)| (k.clone(), figures(g, &window_of(&k.0, g), thr)))
        .filter(|(_, f)| f.activities > 0)
        .collect();

    // Graph launches.
    let mut durs: Vec<f64> = launches.iter().map(|l| l.1).collect();
    durs.sort_by(f64::total_cmp);
    let n = durs.len();
    let kernels = launches
        .iter()
        .map(|&(_, _, c)| {
            (c, c.map_or(0, |c| acts.iter().filter(|a| a.correlation == Some(c)).count() as u64))
        })
        .collect();
    let stats = Launches {
        count: n as u64,
        mean_us: (n > 0).then(|| durs.iter().sum::<f64>() / n as f64),
        p50_us: percentile(&durs, 50.0),
        p99_us: percentile(&durs, 99.0),
        max_us: durs.last().copied(),
        kernels,
    };

    // Replays: the launch's activities, found by correlation id.
    let replays = launches
        .iter()
        .filter_map(|&(ts, _, c)| {
            let c = c?;
            let mine: Vec<&Activity> = acts.iter().filter(|a| a.correlation == Some(c)).collect();
            let first = mine.iter().min_by(|a, b| a.start.total_cmp(&b.start));
            let last_end = mine.iter().map(|a| a.end).fold(f64::NEG_INFINITY, f64::max);
            let idle_before = first.and_then(|f| {
                let prev_end = acts
                    .iter()
                    .filter(|a| a.device == f.device && a.start < f.start)
                    .map(|a| a.end)
                    .fold(f64::NEG_INFINITY, f64::max);
                prev_end.is_finite().then(|| (f.start - prev_end).max(0.0))
            });
            Some(Replay {
                correlation: c,
                kernels: mine.len() as u64,
                launch_to_first_kernel_us: first.map(|f| f.start - ts),
                gpu_span_us: first.map(|f| last_end - f.start),
                idle_before_us: idle_before,
            })
        })
        .collect();

    // The steady state: on each device, the activities that graph launches started (their
    // correlation is a launch's) bound a window; every activity inside it counts.
    let launched: Vec<u64> = launches.iter().filter_map(|l| l.2).collect();
    // Under --within the steady window is cut to the measured windows.
    let steady = by_device
        .iter()
        .filter_map(|(d, g)| {
            let windows = window_of(d, g);
            let mine: Vec<&Activity> = acts
                .iter()
                .filter(|a| &a.device == d && a.correlation.is_some_and(|c| launched.contains(&c)))
                .collect();
            let lo = mine.iter().map(|a| a.start).fold(f64::INFINITY, f64::min);
            let hi = mine.iter().map(|a| a.end).fold(f64::NEG_INFINITY, f64::max);
            let cut: Vec<(f64, f64)> =
                windows.iter().map(|&(ws, we)| (ws.max(lo), we.min(hi))).filter(|(s, e)| s < e).collect();
            (!cut.is_empty()).then(|| (d.clone(), figures(g, &cut, thr)))
        })
        .collect();
    // Idle before each replay after the first on its device, in launch order.
    let mut seen_devices: Vec<String> = Vec::new();
    let mut steady_idle: Vec<f64> = Vec::new();
    let mut by_start: Vec<&(f64, f64, Option<u64>)> = launches.iter().collect();
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    for &&(_, _, c) in &by_start {
        let Some(c) = c else { continue };
        let Some(first) =
            acts.iter().filter(|a| a.correlation == Some(c)).min_by(|a, b| a.start.total_cmp(&b.start))
        else {
            continue;
        };
        if !seen_devices.contains(&first.device) {
            seen_devices.push(first.device.clone());
            continue;
        }
        let prev_end = acts
            .iter()
            .filter(|a| a.device == first.device && a.start < first.start)
            .map(|a| a.end)
            .fold(f64::NEG_INFINITY, f64::max);
        if prev_end.is_finite() {
            steady_idle.push((first.start - prev_end).max(0.0));
        }
    }
    steady_idle.sort_by(f64::total_cmp);
    let steady_idle_before_p50 = percentile(&steady_idle, 50.0);

    Expected {
        events: evs.len() as u64,
        skipped,
        devices,
        steady,
        steady_idle_before_p50,
        streams,
        launches: stats,
        replays,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(cat: &str, name: &str, tid: u64, ts: f64, dur: f64, corr: u64) -> Value {
        serde_json::json!({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": tid, "ts": ts, "dur": dur,
                           "args": {"correlation": corr}})
    }

    #[test]
    fn oracle_on_a_hand_made_trace() {
        // Stream 7: [0,10] [5,20] (overlapping: union 20) then [150,160]; stream 8: [30,40].
        // Device union: [0,20] [30,40] [150,160] → busy 40 of a 160 window; gaps 10 and 110.
        let doc = serde_json::json!({"traceEvents": [
            ev("kernel", "a", 7, 0.0, 10.0, 1),
            ev("Kernel", "b", 7, 5.0, 15.0, 1),
            ev("gpu_memcpy", "c", 8, 30.0, 10.0, 2),
            ev("kernel", "d", 7, 150.0, 10.0, 2),
            ev("cuda_runtime", "cudaGraphLaunch", 1, -3.0, 2.0, 1),
            ev("cuda_runtime", "hipGraphLaunch_spt", 1, 20.0, 4.0, 2),
            ev("cuda_runtime", "cudaGraphLaunchX", 1, 20.0, 4.0, 3),
            {"ph": "X", "cat": "kernel", "name": "nots", "pid": 0, "tid": 7, "dur": 1},
            {"ph": "X", "cat": "kernel", "name": "neg", "pid": 0, "tid": 7, "ts": 1, "dur": -1},
            {"ph": "M", "name": "process_name", "pid": 0, "ts": 0},
            7
        ]});
        let x = compute(&doc, &Opts::default());
        assert_eq!(x.events, 11);
        assert_eq!(x.skipped, 3);
        let d = &x.devices["0"];
        assert_eq!((d.activities, d.window_us, d.busy_us), (4, 160.0, 40.0));
        assert_eq!(d.occupancy, 0.25);
        assert_eq!(d.gaps, vec![10.0, 110.0]);
        assert_eq!((d.over_threshold, d.max_gap_us), (1, 110.0));
        let s7 = &x.streams[&("0".to_string(), "7".to_string())];
        assert_eq!((s7.window_us, s7.busy_us, s7.gaps.clone()), (160.0, 30.0, vec![130.0]));
        assert_eq!(x.launches.count, 2);
        assert_eq!(x.launches.mean_us, Some(3.0));
        assert_eq!(x.launches.kernels, vec![(Some(1), 2), (Some(2), 2)]);
        assert_eq!(x.replays[0].launch_to_first_kernel_us, Some(3.0));
        assert_eq!(x.replays[1].gpu_span_us, Some(130.0));
        assert_eq!(x.replays[1].idle_before_us, Some(10.0));
        assert_eq!(x.replays[0].idle_before_us, None);
    }

    #[test]
    fn oracle_within_spans() {
        let doc = serde_json::json!([
            ev("kernel", "a", 7, 0.0, 10.0, 1),
            ev("kernel", "b", 7, 20.0, 10.0, 1),
            ev("kernel", "c", 7, 100.0, 10.0, 1),
            {"ph": "X", "cat": "gpu_user_annotation", "name": "step#1", "pid": 0, "tid": 7, "ts": 5, "dur": 30},
            {"ph": "X", "cat": "gpu_user_annotation", "name": "other", "pid": 0, "tid": 7, "ts": 90, "dur": 30},
        ]);
        let x = compute(&doc, &Opts { within: Some(Regex::new("step").unwrap()), ..Opts::default() });
        let d = &x.devices["0"];
        // Span [5,35]: busy [5,10] + [20,30] = 15 of 30; gaps [10,20] and [30,35].
        assert_eq!((d.activities, d.window_us, d.busy_us, d.gaps.clone()), (2, 30.0, 15.0, vec![10.0, 5.0]));
    }

    #[test]
    fn numpy_percentiles() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert!((percentile(&v, 99.0).unwrap() - 3.97).abs() < 1e-12);
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
    }
}

/// One name's row of the kernel table, computed naively: durations as f64 µs in a list, sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    pub count: u64,
    pub total_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub share: f64,
}

/// The kernel table of a trace (no `--within`): per name over the trace, per (device, stream),
/// and per graph, a graph being the replays whose GPU activities have the same sorted list of
/// names. Graphs are listed in the order of their first replay's launch, as (replays, activities
/// per replay, rows).
#[derive(Debug, Clone)]
pub struct KernelTable {
    pub all: BTreeMap<String, KernelRow>,
    pub streams: BTreeMap<(String, String), BTreeMap<String, KernelRow>>,
    pub graphs: Vec<(u64, u64, BTreeMap<String, KernelRow>)>,
}

fn kernel_rows(items: &[(String, f64)]) -> BTreeMap<String, KernelRow> {
    let mut by_name: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (name, dur) in items {
        by_name.entry(name.clone()).or_default().push(*dur);
    }
    let all: f64 = items.iter().map(|(_, d)| d).sum();
    by_name
        .into_iter()
        .map(|(name, mut d)| {
            d.sort_by(f64::total_cmp);
            let total: f64 = d.iter().sum();
            let row = KernelRow {
                count: d.len() as u64,
                total_us: total,
                mean_us: total / d.len() as f64,
                p50_us: percentile(&d, 50.0).unwrap(),
                p99_us: percentile(&d, 99.0).unwrap(),
                max_us: *d.last().unwrap(),
                share: total / all,
            };
            (name, row)
        })
        .collect()
}

/// Computes the kernel table of a trace document.
pub fn kernel_table(doc: &Value) -> KernelTable {
    let launch_re = graph_launch_name();
    let origin = events(doc).iter().find_map(|e| micros_parts(e.get("ts"))).map_or(0, |p| p.0);
    // (device, stream, name, duration, correlation) of every GPU activity; launched correlations.
    let mut acts = Vec::new();
    // Launched correlation ids, with their launch's start.
    let mut launched: Vec<(u64, f64)> = Vec::new();
    for e in events(doc) {
        let Some((_, dur)) = complete(e, origin) else { continue };
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        let name = e.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        if is_gpu_category(cat) {
            let device = label(arg(e, "device")).or_else(|| label(e.get("pid"))).unwrap_or_default();
            let stream = label(arg(e, "stream")).or_else(|| label(e.get("tid"))).unwrap_or_default();
            acts.push((device, stream, name, dur, correlation(e)));
        } else if launch_re.is_match(&name) {
            let start = complete(e, origin).map_or(0.0, |(ts, _)| ts);
            launched.extend(correlation(e).map(|c| (c, start)));
        }
    }
    let all: Vec<(String, f64)> = acts.iter().map(|a| (a.2.clone(), a.3)).collect();
    let mut per_stream: BTreeMap<(String, String), Vec<(String, f64)>> = BTreeMap::new();
    for a in &acts {
        per_stream.entry((a.0.clone(), a.1.clone())).or_default().push((a.2.clone(), a.3));
    }
    // Each replay's names, sorted: its signature.
    let mut per_replay: BTreeMap<u64, Vec<(String, f64)>> = BTreeMap::new();
    for a in &acts {
        if let Some(c) = a.4.filter(|c| launched.iter().any(|l| l.0 == *c)) {
            per_replay.entry(c).or_default().push((a.2.clone(), a.3));
        }
    }
    let start_of = |c: u64| launched.iter().find(|l| l.0 == c).map_or(f64::INFINITY, |l| l.1);
    // Keyed by the sorted names: (first launch, replays, every activity's name and duration).
    type Graphs = BTreeMap<Vec<String>, (f64, u64, Vec<(String, f64)>)>;
    let mut graphs: Graphs = BTreeMap::new();
    for (c, items) in per_replay {
        let mut names: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
        names.sort();
        let g = graphs.entry(names).or_insert((f64::INFINITY, 0, Vec::new()));
        g.0 = g.0.min(start_of(c));
        g.1 += 1;
        g.2.extend(items);
    }
    let mut graphs: Vec<(f64, u64, u64, BTreeMap<String, KernelRow>)> = graphs
        .into_iter()
        .map(|(names, (first, n, items))| (first, n, names.len() as u64, kernel_rows(&items)))
        .collect();
    graphs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let graphs = graphs.into_iter().map(|(_, n, k, rows)| (n, k, rows)).collect();
    KernelTable {
        all: kernel_rows(&all),
        streams: per_stream.into_iter().map(|(k, v)| (k, kernel_rows(&v))).collect(),
        graphs,
    }
}

/// The most replayed graph's GPU time per replay by kernel, the way a comparison keys it: a name
/// a replay runs more than once is keyed by its position (`Some(k)`: the k-th instance by start
/// within the replay), any other by name alone. Returns (replays, key → summed µs).
pub fn main_graph_positions(doc: &Value) -> (u64, BTreeMap<(String, Option<u32>), f64>) {
    let launch_re = graph_launch_name();
    let origin = events(doc).iter().find_map(|e| micros_parts(e.get("ts"))).map_or(0, |p| p.0);
    let mut launched = std::collections::BTreeSet::new();
    let mut acts: Vec<(u64, f64, String, f64)> = Vec::new();
    for e in events(doc) {
        let Some((ts, dur)) = complete(e, origin) else { continue };
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        let name = e.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        if is_gpu_category(cat) {
            if let Some(c) = correlation(e) {
                acts.push((c, ts, name, dur));
            }
        } else if launch_re.is_match(&name) {
            launched.extend(correlation(e));
        }
    }
    // Each replay's activities in start order.
    let mut replays: BTreeMap<u64, Vec<(f64, String, f64)>> = BTreeMap::new();
    for (c, ts, name, dur) in acts.into_iter().filter(|a| launched.contains(&a.0)) {
        replays.entry(c).or_default().push((ts, name, dur));
    }
    // Keyed by the sorted names; each replay's (start, name, duration) in start order.
    type Replays = Vec<Vec<(f64, String, f64)>>;
    let mut graphs: BTreeMap<Vec<String>, Replays> = BTreeMap::new();
    for (_, mut items) in replays {
        items.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut names: Vec<String> = items.iter().map(|i| i.1.clone()).collect();
        names.sort();
        graphs.entry(names).or_default().push(items);
    }
    let Some(main) = graphs.into_values().max_by_key(|g| g.len()) else { return (0, BTreeMap::new()) };
    let repeated: std::collections::BTreeSet<String> = main
        .iter()
        .flat_map(|items| {
            let mut names: Vec<&String> = items.iter().map(|i| &i.1).collect();
            names.sort();
            names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0].clone()).collect::<Vec<_>>()
        })
        .collect();
    let mut out: BTreeMap<(String, Option<u32>), f64> = BTreeMap::new();
    for items in &main {
        let mut seen: BTreeMap<&String, u32> = BTreeMap::new();
        for (_, name, dur) in items {
            let k = seen.entry(name).or_insert(0);
            *k += 1;
            let key = (name.clone(), repeated.contains(name).then_some(*k));
            *out.entry(key).or_insert(0.0) += dur;
        }
    }
    (main.len() as u64, out)
}
