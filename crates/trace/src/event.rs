//! One event as a parser sees it, and the rules that turn it into records.
//!
//! Both parsers (the serde reference path and the fast scanner) fill a [`RawEvent`] and hand it to
//! [`TimelineBuilder::push`], so the classification rules live here once.

use std::borrow::Cow;

use crate::limits::{Cap, Limits};
use crate::time::parse_micros_to_ns;
use crate::timeline::{
    room, ActivityKind, Annotation, GpuActivity, GraphApi, GraphLaunch, HostCall, Timeline,
};

/// A scalar field as found in the JSON text.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Scalar<'a> {
    /// Absent.
    #[default]
    Missing,
    /// A JSON number, as its literal text.
    Num(Cow<'a, str>),
    /// A JSON string, unescaped.
    Str(Cow<'a, str>),
    /// A JSON number in Kineto's form of microseconds (`5118046481399.733`), as its text and
    /// already converted to nanoseconds by the parser that read it.
    Micros(Cow<'a, str>, i64),
    /// Something else (object, array, bool, null).
    Other,
}

impl Scalar<'_> {
    /// The text of a number or string, as a label (`0`, `"Spans"`).
    pub fn label(&self) -> Option<&str> {
        match self {
            Scalar::Num(s) | Scalar::Str(s) | Scalar::Micros(s, _) => Some(s),
            _ => None,
        }
    }

    /// Microseconds as exact nanoseconds, from a number or a numeric string.
    pub fn micros_ns(&self) -> Option<i64> {
        if let Scalar::Micros(_, ns) = self {
            return Some(*ns);
        }
        self.label().and_then(parse_micros_to_ns)
    }

    /// A non-negative integer (correlation ids), from a number or a numeric string.
    pub fn as_u64(&self) -> Option<u64> {
        let text = self.label()?;
        // Plain digits, as Kineto writes ids: up to 19 always fit.
        if (1..=19).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
            return Some(text.bytes().fold(0, |n, b| n * 10 + (b - b'0') as u64));
        }
        let text = text.trim();
        text.parse::<u64>().ok().or_else(|| {
            // "1234.0" written by tools that go through floats.
            let ns = parse_micros_to_ns(text)?;
            (ns >= 0 && ns % 1000 == 0).then_some((ns / 1000) as u64)
        })
    }
}

/// The fields of one trace event that the analysis reads; everything else is skipped unread.
#[derive(Debug, Clone, Default)]
pub struct RawEvent<'a> {
    /// `ph`.
    pub ph: Option<Cow<'a, str>>,
    /// `cat`.
    pub cat: Option<Cow<'a, str>>,
    /// `name`.
    pub name: Option<Cow<'a, str>>,
    /// `pid`.
    pub pid: Scalar<'a>,
    /// `tid`.
    pub tid: Scalar<'a>,
    /// `ts`.
    pub ts: Scalar<'a>,
    /// `dur`.
    pub dur: Scalar<'a>,
    /// `args.device`.
    pub device: Scalar<'a>,
    /// `args.stream`.
    pub stream: Scalar<'a>,
    /// `args.correlation`.
    pub correlation: Scalar<'a>,
}

/// What an event's category makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Gpu(ActivityKind),
    HostAnnotation,
    GpuAnnotation,
    Other,
}

fn role_of(cat: &str) -> Role {
    // Categories are short; compare case-insensitively without allocating.
    let eq = |s: &str| cat.eq_ignore_ascii_case(s);
    // Most events are runtime calls and CPU ops: their lengths rule out every category here.
    if !matches!(cat.len(), 6 | 10 | 15 | 19) {
        return Role::Other;
    }
    if eq("kernel") {
        Role::Gpu(ActivityKind::Kernel)
    } else if eq("gpu_memcpy") || eq("memcpy") {
        Role::Gpu(ActivityKind::Memcpy)
    } else if eq("gpu_memset") || eq("memset") {
        Role::Gpu(ActivityKind::Memset)
    } else if cat == "user_annotation" {
        Role::HostAnnotation
    } else if cat == "gpu_user_annotation" {
        Role::GpuAnnotation
    } else {
        Role::Other
    }
}

/// Which graph-launch API a runtime call's name belongs to, if any: `cudaGraphLaunch`,
/// `cuGraphLaunch`, `hipGraphLaunch`, their per-thread-stream variants (`_ptsz`, `_spt`) and
/// CUPTI's versioned names (`_v10000`).
pub fn graph_launch_api(name: &str) -> Option<GraphApi> {
    let (api, rest) = if let Some(rest) = name.strip_prefix("cudaGraphLaunch") {
        (GraphApi::CudaRuntime, rest)
    } else if let Some(rest) = name.strip_prefix("cuGraphLaunch") {
        (GraphApi::CudaDriver, rest)
    } else if let Some(rest) = name.strip_prefix("hipGraphLaunch") {
        (GraphApi::Hip, rest)
    } else {
        return None;
    };
    let rest = rest.strip_prefix("_ptsz").or_else(|| rest.strip_prefix("_spt")).unwrap_or(rest);
    let versioned =
        rest.strip_prefix("_v").is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    (rest.is_empty() || versioned).then_some(api)
}

/// Whether a category or name could matter; lets a scanner skip the rest of an event early.
pub fn is_interesting_x(cat: Option<&str>, name: Option<&str>) -> bool {
    cat.is_some_and(|c| role_of(c) != Role::Other) || name.is_some_and(|n| graph_launch_api(n).is_some())
}

/// Times (`ts`, and `ts + dur`) beyond ±2^61 ns (±73 years around the epoch of the clock; Kineto's
/// `ts` is µs since the Unix epoch, 2^60.6 ns in 2026) are unusable: the event is skipped and
/// counted. Bounded so, every start, end and difference the analysis forms from them fits an i64
/// with room to spare: windows and gaps (at most 2^62), sums of disjoint spans (bounded by their
/// window), and the ranks' times shifted by the difference of their `baseTimeNanoseconds`
/// (bounded the same way, so shifted times stay within 3·2^61 < 2^63).
pub const MAX_TIME_NS: i64 = 1 << 61;

/// A time of the usable range, from a `ts` or `dur` field.
#[inline]
fn time_ns(s: &Scalar<'_>) -> Option<i64> {
    s.micros_ns().filter(|t| t.unsigned_abs() <= MAX_TIME_NS as u64)
}

/// A label as the analysis groups by it: a number, or a string holding one (Kineto writes `pid`
/// as `0` in one event and `"0"` in another), in one form, so that `0`, `"0"`, `0.0` and `-0`
/// are one device; any other text as it is (`"stream 7"`, `"Spans"`).
#[inline]
pub fn canonical_label(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    match b {
        // Kineto's own form: digits without a leading zero.
        [b'1'..=b'9', rest @ ..] if rest.iter().all(u8::is_ascii_digit) => return Cow::Borrowed(text),
        [b'0'] => return Cow::Borrowed(text),
        [b'-' | b'0'..=b'9', ..] => {}
        _ => return Cow::Borrowed(text),
    }
    canonical_number(b).map_or(Cow::Borrowed(text), Cow::Owned)
}

/// The shortest plain decimal of a JSON number (`-0` and `0.0` are `0`, `1.50` is `1.5`, `5e3` is
/// `5000`); `None` for text that is not a JSON number, or whose exponent is beyond ±40.
fn canonical_number(b: &[u8]) -> Option<String> {
    let digits_from = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let negative = b.first() == Some(&b'-');
    let i = negative as usize;
    let int_end = match b.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits_from(i),
        _ => return None,
    };
    let (frac, mut j) = match b.get(int_end) {
        Some(b'.') => {
            let end = digits_from(int_end + 1);
            if end == int_end + 1 {
                return None;
            }
            (&b[int_end + 1..end], end)
        }
        _ => (&b[int_end..int_end], int_end),
    };
    let mut exponent: i64 = 0;
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        let sign = match b.get(j) {
            Some(b'-') => -1,
            Some(b'+') => 1,
            _ => 1,
        };
        j += matches!(b.get(j), Some(b'+' | b'-')) as usize;
        let end = digits_from(j);
        if end == j || end - j > 4 {
            return None;
        }
        exponent = sign * std::str::from_utf8(&b[j..end]).ok()?.parse::<i64>().ok()?;
        j = end;
    }
    if j != b.len() || exponent.abs() > 40 {
        return None;
    }
    // value = 0.<digits> × 10^point
    let mut digits: Vec<u8> = b[i..int_end].iter().chain(frac).copied().collect();
    let mut point = (int_end - i) as i64 + exponent;
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    point -= lead as i64;
    while digits.last() == Some(&b'0') && digits.len() as i64 > point.max(0) {
        digits.pop();
    }
    if digits.is_empty() {
        return Some("0".into());
    }
    let mut out = String::with_capacity(digits.len() + 4);
    if negative {
        out.push('-');
    }
    let text = |d: &[u8]| std::str::from_utf8(d).expect("ASCII digits").to_string();
    if point <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-point) as usize));
        out.push_str(&text(&digits));
    } else if point as usize >= digits.len() {
        out.push_str(&text(&digits));
        out.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        let (a, f) = digits.split_at(point as usize);
        out.push_str(&text(a));
        out.push('.');
        out.push_str(&text(f));
    }
    Some(out)
}

/// Why a builder stopped taking events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// A cap was reached.
    Cap(Cap),
    /// Memory for the records ran out.
    Memory,
}

/// Fills a [`Timeline`] one event at a time, within the caps of a [`Limits`]: once one is reached
/// (or memory runs out) it keeps nothing more, and [`TimelineBuilder::stopped`] says why, so that
/// the parsers stop and no record is kept past a cap.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    timeline: Timeline,
    limits: Limits,
    stopped: Option<Stopped>,
    /// The last device and stream labels interned: consecutive activities nearly always share
    /// them, and a comparison is cheaper than a lookup.
    last_device: Option<u32>,
    last_stream: Option<u32>,
}

/// `s`'s id, trying the id in `last` first; `None` when memory for a new string ran out.
#[inline]
fn intern_again(strings: &mut crate::timeline::Interner, last: &mut Option<u32>, s: &str) -> Option<u32> {
    if let Some(id) = *last {
        if strings.get(id) == s {
            return Some(id);
        }
    }
    let id = strings.try_intern(s)?;
    *last = Some(id);
    Some(id)
}

/// `s`, or its first bytes up to `max` on a character's boundary when it is longer (then
/// counted in `cut`): a name is a label, and one field must not cost what the trace's size allows.
#[inline]
fn first_bytes<'s>(s: &'s str, max: usize, cut: &mut u64) -> &'s str {
    if s.len() <= max {
        return s;
    }
    *cut += 1;
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Adds a record, failing instead of aborting when memory for it runs out, and stopping at the
/// memory budget before the list grows past the records' share of it.
#[inline]
fn keep<T>(list: &mut Vec<T>, record: T, budget: u64) -> Result<(), Stopped> {
    if list.len() == list.capacity() {
        let more = list.capacity().max(64) * std::mem::size_of::<T>();
        if crate::memory::would_pass(budget, more) {
            return Err(Stopped::Cap(Cap::Memory));
        }
        room(list).ok_or(Stopped::Memory)?;
    }
    list.push(record);
    Ok(())
}

impl TimelineBuilder {
    /// An empty builder with the default caps.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder with these caps.
    pub fn with_limits(limits: Limits) -> Self {
        Self { limits, ..Self::default() }
    }

    /// Goes on filling `timeline` (read from the text before) within `limits`: the fast parser
    /// joins the parts it read in parallel this way. The caps are checked again on the whole.
    pub fn resume(timeline: Timeline, limits: Limits) -> Self {
        let mut b = Self { timeline, limits, ..Self::default() };
        if b.timeline.events > limits.max_events {
            b.stop(Stopped::Cap(Cap::Events));
        } else if crate::memory::would_pass(limits.max_memory_bytes, 0) {
            b.stop(Stopped::Cap(Cap::Memory));
        } else if b.timeline.strings.len() as u64 > limits.max_names {
            b.stop(Stopped::Cap(Cap::Names));
        }
        b
    }

    /// The caps in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Why the builder stopped taking events, once it has.
    #[inline]
    pub fn stopped(&self) -> Option<Stopped> {
        self.stopped
    }

    /// Stops for good (the first reason stays).
    pub fn stop(&mut self, why: Stopped) {
        self.stopped.get_or_insert(why);
    }

    /// Counts an event, unless that takes the count past its cap (then stops).
    #[inline]
    fn count(&mut self) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        self.timeline.events += 1;
        if self.timeline.events > self.limits.max_events {
            self.stop(Stopped::Cap(Cap::Events));
            return false;
        }
        true
    }

    /// Counts an array element that is not an object.
    pub fn push_non_object(&mut self) {
        if self.count() {
            self.timeline.skipped.not_an_object += 1;
        }
    }

    /// Classifies one event and keeps a compact record of it when the analysis needs it.
    pub fn push(&mut self, ev: &RawEvent<'_>) {
        if ev.ph.as_deref() != Some("X") {
            return self.push_not_complete(&ev.ts);
        }
        if !self.count() {
            return;
        }
        if let Err(why) = self.push_complete(ev) {
            self.stop(why);
        }
        if self.timeline.strings.len() as u64 > self.limits.max_names {
            self.stop(Stopped::Cap(Cap::Names));
        }
    }

    /// [`TimelineBuilder::push`] of a counted complete event; an error when memory ran out or
    /// the budget would be passed.
    #[inline]
    fn push_complete(&mut self, ev: &RawEvent<'_>) -> Result<(), Stopped> {
        let budget = self.limits.max_memory_bytes;
        let max = usize::try_from(self.limits.max_name_bytes).unwrap_or(usize::MAX);
        let t = &mut self.timeline;
        let Some(start) = time_ns(&ev.ts) else {
            t.skipped.missing_ts += 1;
            return Ok(());
        };
        // Both within ±2^61, so the sum cannot overflow; an end beyond the range is unusable too.
        let end = time_ns(&ev.dur).filter(|d| *d >= 0).map(|d| start + d).filter(|e| *e <= MAX_TIME_NS);
        let Some(end) = end else {
            t.skipped.bad_dur += 1;
            return Ok(());
        };
        let role = ev.cat.as_deref().map_or(Role::Other, role_of);
        let name = first_bytes(ev.name.as_deref().unwrap_or(""), max, &mut t.names_cut);
        let device_label = |cut: &mut u64| {
            canonical_label(first_bytes(ev.device.label().or(ev.pid.label()).unwrap_or("?"), max, cut))
        };
        match role {
            Role::Gpu(kind) => {
                let device = device_label(&mut t.names_cut);
                let stream = ev.stream.label().or(ev.tid.label()).unwrap_or("?");
                let stream = canonical_label(first_bytes(stream, max, &mut t.names_cut));
                let rec = GpuActivity::new(
                    intern_again(&mut t.strings, &mut self.last_device, &device).ok_or(Stopped::Memory)?,
                    intern_again(&mut t.strings, &mut self.last_stream, &stream).ok_or(Stopped::Memory)?,
                    t.strings.try_intern(name).ok_or(Stopped::Memory)?,
                    start,
                    end,
                    ev.correlation.as_u64(),
                    kind,
                );
                keep(&mut t.activities, rec, budget)?;
            }
            Role::HostAnnotation | Role::GpuAnnotation => {
                let device = match role {
                    Role::GpuAnnotation => {
                        Some(t.strings.try_intern(&device_label(&mut t.names_cut)).ok_or(Stopped::Memory)?)
                    }
                    _ => None,
                };
                let name = t.strings.try_intern(name).ok_or(Stopped::Memory)?;
                keep(&mut t.annotations, Annotation { name, device, start, end }, budget)?;
            }
            Role::Other => {
                if let Some(correlation) = ev.correlation.as_u64() {
                    keep(&mut t.host_calls, HostCall { start, end, correlation }, budget)?;
                }
                if let Some(api) = graph_launch_api(name) {
                    let thread = first_bytes(ev.tid.label().unwrap_or("?"), max, &mut t.names_cut);
                    let thread = t.strings.try_intern(&canonical_label(thread)).ok_or(Stopped::Memory)?;
                    let launch =
                        GraphLaunch { api, thread, start, end, correlation: ev.correlation.as_u64() };
                    keep(&mut t.launches, launch, budget)?;
                }
            }
        }
        Ok(())
    }

    /// Counts an event whose `ph` is not `X` (flows, instants, metadata): of those only the
    /// timestamp matters, so a parser that knows the phase need not gather the other fields.
    pub fn push_not_complete(&mut self, ts: &Scalar<'_>) {
        if self.count() && time_ns(ts).is_none() {
            self.timeline.skipped.missing_ts += 1;
        }
    }

    /// Keeps the `args` of a launchguard context event whose whole element text is `element`
    /// (the fast parser hands the bytes; metadata events are few, so parsing them again is cheap).
    /// Only `args` is parsed: the other members are skipped unread.
    pub fn push_context_element(&mut self, element: &[u8]) {
        if self.stopped.is_some() || self.timeline.context.is_some() {
            // Only the first one is kept (and measured); the others are counted.
            self.timeline.context_events += 1;
            return;
        }
        let args = last_args(element);
        // Compact JSON is never much larger than its text (an exponent gains a `+`), so args of
        // more than four times the cap (and more than 16 MiB) would be parsed into memory only
        // to be refused. (Only whitespace could bring such text under the cap; check writes
        // compact JSON. The reference parser, which holds every event whole, measures exactly.)
        let gate = self.limits.max_context_bytes.saturating_mul(4).max(16 << 20);
        if args.is_some_and(|a| a.get().len() as u64 > gate) {
            self.timeline.context_events += 1;
            self.stop(Stopped::Cap(Cap::Context));
            return;
        }
        let args = args.and_then(|a| serde_json::from_str::<serde_json::Value>(a.get()).ok());
        self.push_context(args.as_ref());
    }

    /// Keeps `args` of a launchguard context event (the first one only); counts every one. Args
    /// larger than the cap (as compact JSON) stop the builder.
    pub fn push_context(&mut self, args: Option<&serde_json::Value>) {
        let t = &mut self.timeline;
        t.context_events += 1;
        if t.context.is_none() && self.stopped.is_none() {
            let text = args.and_then(|a| serde_json::to_string(a).ok());
            if text.as_ref().is_some_and(|text| text.len() as u64 > self.limits.max_context_bytes) {
                self.stop(Stopped::Cap(Cap::Context));
            } else {
                t.context = text;
            }
        }
    }

    /// The metadata to fill from the keys around the events.
    pub fn meta_mut(&mut self) -> &mut crate::timeline::TraceMeta {
        &mut self.timeline.meta
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.timeline.events
    }

    /// The finished timeline.
    pub fn finish(mut self) -> Timeline {
        self.timeline.name_cap = self.limits.max_name_bytes;
        self.timeline
    }
}

/// The text of the last `args` member of an event (a JSON map keeps the last of equal keys), or
/// `None`; borrowed from the element, the other members skipped unread.
fn last_args(element: &[u8]) -> Option<&serde_json::value::RawValue> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
    struct Args;
    impl<'de> Visitor<'de> for Args {
        type Value = Option<&'de serde_json::value::RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an event")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut args = None;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == "args" {
                    args = Some(map.next_value()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(args)
        }
    }
    serde_json::Deserializer::from_slice(element).deserialize_map(Args).ok().flatten()
}

impl From<Timeline> for TimelineBuilder {
    /// Goes on filling a timeline, with the default caps.
    fn from(timeline: Timeline) -> Self {
        Self::resume(timeline, Limits::DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_launch_names_of_both_vendors() {
        assert_eq!(graph_launch_api("cudaGraphLaunch"), Some(GraphApi::CudaRuntime));
        assert_eq!(graph_launch_api("cudaGraphLaunch_ptsz"), Some(GraphApi::CudaRuntime));
        assert_eq!(graph_launch_api("cudaGraphLaunch_v10000"), Some(GraphApi::CudaRuntime));
        assert_eq!(graph_launch_api("cuGraphLaunch"), Some(GraphApi::CudaDriver));
        assert_eq!(graph_launch_api("hipGraphLaunch"), Some(GraphApi::Hip));
        assert_eq!(graph_launch_api("hipGraphLaunch_spt"), Some(GraphApi::Hip));
        assert_eq!(graph_launch_api("cudaGraphLaunchFoo"), None);
        assert_eq!(graph_launch_api("cudaLaunchKernel"), None);
        assert_eq!(graph_launch_api("hipGraphLaunch_v"), None);
    }

    fn ev<'a>(ph: &'a str, cat: &'a str, name: &'a str, ts: &'a str, dur: &'a str) -> RawEvent<'a> {
        RawEvent {
            ph: Some(ph.into()),
            cat: Some(cat.into()),
            name: Some(name.into()),
            pid: Scalar::Num("0".into()),
            tid: Scalar::Num("7".into()),
            ts: Scalar::Num(ts.into()),
            dur: Scalar::Str(dur.into()),
            ..Default::default()
        }
    }

    #[test]
    fn numbers_as_labels_have_one_form() {
        for (text, want) in [
            ("0", "0"),
            ("-0", "0"),
            ("0.0", "0"),
            ("-0.000e5", "0"),
            ("7", "7"),
            ("7.0", "7"),
            ("70e-1", "7"),
            ("0.7e1", "7"),
            ("1.50", "1.5"),
            ("-12.340", "-12.34"),
            ("5E3", "5000"),
            ("0.001", "0.001"),
            ("1e-3", "0.001"),
            ("123456789012345678901234567890", "123456789012345678901234567890"),
            // Not JSON numbers, or too far: as they are.
            ("00", "00"),
            ("+1", "+1"),
            (" 0", " 0"),
            ("1.", "1."),
            (".5", ".5"),
            ("1e999", "1e999"),
            ("0x10", "0x10"),
            ("stream 7", "stream 7"),
            ("", ""),
            ("-", "-"),
        ] {
            assert_eq!(canonical_label(text), want, "{text}");
        }
        // The value, checked independently: every canonical form parses back to the same f64.
        for text in ["0.0", "-0", "70e-1", "1.50", "-12.340", "5E3", "1e-3", "0.7e1"] {
            let got: f64 = canonical_label(text).parse().unwrap();
            assert_eq!(got, text.parse::<f64>().unwrap().abs().copysign(if got == 0.0 { 1.0 } else { got }));
        }
    }

    #[test]
    fn caps_stop_the_builder() {
        let limits = Limits { max_events: 3, max_names: 4, ..Limits::DEFAULT };
        let mut b = TimelineBuilder::with_limits(limits);
        b.push(&ev("X", "kernel", "a", "1", "1"));
        b.push(&ev("M", "", "meta", "1", ""));
        b.push_non_object();
        assert_eq!(b.stopped(), None);
        b.push(&ev("X", "kernel", "b", "2", "1"));
        assert_eq!(b.stopped(), Some(Stopped::Cap(Cap::Events)));
        // Nothing more is kept.
        b.push(&ev("X", "kernel", "c", "3", "1"));
        assert_eq!(b.finish().activities.len(), 1);
        let mut b = TimelineBuilder::with_limits(limits);
        // "0", "7" and "a", then "b": four strings; "c" is the fifth.
        b.push(&ev("X", "kernel", "a", "1", "1"));
        b.push(&ev("X", "kernel", "b", "1", "1"));
        assert_eq!(b.stopped(), None);
        b.push(&ev("X", "kernel", "c", "1", "1"));
        assert_eq!(b.stopped(), Some(Stopped::Cap(Cap::Names)));
    }

    #[test]
    fn classification_and_skips() {
        let mut b = TimelineBuilder::new();
        b.push(&ev("X", "Kernel", "k", "10.5", "2"));
        b.push(&ev("X", "gpu_memcpy", "m", "20", "1.25"));
        b.push(&ev("X", "cuda_runtime", "hipGraphLaunch", "5", "3"));
        b.push(&ev("X", "kernel", "neg", "30", "-1"));
        b.push(&ev("X", "kernel", "nots", "", "1"));
        b.push(&ev("M", "", "meta", "1", ""));
        b.push_non_object();
        let t = b.finish();
        assert_eq!(t.events, 7);
        assert_eq!(t.activities.len(), 2);
        assert_eq!(t.activities[0].start, 10_500);
        assert_eq!(t.activities[0].end, 12_500);
        assert_eq!(t.activities[1].kind, ActivityKind::Memcpy);
        assert_eq!(t.launches.len(), 1);
        assert_eq!(t.skipped, crate::SkipCounts { missing_ts: 1, bad_dur: 1, not_an_object: 1 });
    }
}
