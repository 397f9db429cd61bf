//! One event as a parser sees it, and the rules that turn it into records.
//!
//! Both parsers (the serde reference path and the fast scanner) fill a [`RawEvent`] and hand it to
//! [`TimelineBuilder::push`], so the classification rules live here once.

use std::borrow::Cow;

use crate::time::parse_micros_to_ns;
use crate::timeline::{ActivityKind, Annotation, GpuActivity, GraphApi, GraphLaunch, Timeline};

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

/// Fills a [`Timeline`] one event at a time.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    timeline: Timeline,
    /// The last device and stream labels interned: consecutive activities nearly always share
    /// them, and a comparison is cheaper than a lookup.
    last_device: Option<u32>,
    last_stream: Option<u32>,
}

/// `s`'s id, trying the id in `last` first.
#[inline]
fn intern_again(strings: &mut crate::timeline::Interner, last: &mut Option<u32>, s: &str) -> u32 {
    if let Some(id) = *last {
        if strings.get(id) == s {
            return id;
        }
    }
    let id = strings.intern(s);
    *last = Some(id);
    id
}

impl TimelineBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts an array element that is not an object.
    pub fn push_non_object(&mut self) {
        self.timeline.events += 1;
        self.timeline.skipped.not_an_object += 1;
    }

    /// Classifies one event and keeps a compact record of it when the analysis needs it.
    pub fn push(&mut self, ev: &RawEvent<'_>) {
        if ev.ph.as_deref() != Some("X") {
            return self.push_not_complete(&ev.ts);
        }
        let t = &mut self.timeline;
        t.events += 1;
        let Some(start) = ev.ts.micros_ns() else {
            t.skipped.missing_ts += 1;
            return;
        };
        let dur = ev.dur.micros_ns().filter(|d| *d >= 0);
        let Some(dur) = dur else {
            t.skipped.bad_dur += 1;
            return;
        };
        let Some(end) = start.checked_add(dur) else {
            t.skipped.bad_dur += 1;
            return;
        };
        let role = ev.cat.as_deref().map_or(Role::Other, role_of);
        let name = ev.name.as_deref().unwrap_or("");
        match role {
            Role::Gpu(kind) => {
                let device = ev.device.label().or(ev.pid.label()).unwrap_or("?");
                let stream = ev.stream.label().or(ev.tid.label()).unwrap_or("?");
                let rec = GpuActivity {
                    device: intern_again(&mut t.strings, &mut self.last_device, device),
                    stream: intern_again(&mut t.strings, &mut self.last_stream, stream),
                    name: t.strings.intern(name),
                    start,
                    end,
                    correlation: ev.correlation.as_u64(),
                    kind,
                };
                t.activities.push(rec);
            }
            Role::HostAnnotation | Role::GpuAnnotation => {
                let device = (role == Role::GpuAnnotation)
                    .then(|| ev.device.label().or(ev.pid.label()).unwrap_or("?"))
                    .map(|d| t.strings.intern(d));
                let name = t.strings.intern(name);
                t.annotations.push(Annotation { name, device, start, end });
            }
            Role::Other => {
                if let Some(api) = graph_launch_api(name) {
                    let thread = t.strings.intern(ev.tid.label().unwrap_or("?"));
                    t.launches.push(GraphLaunch {
                        api,
                        thread,
                        start,
                        end,
                        correlation: ev.correlation.as_u64(),
                    });
                }
            }
        }
    }

    /// Counts an event whose `ph` is not `X` (flows, instants, metadata): of those only the
    /// timestamp matters, so a parser that knows the phase need not gather the other fields.
    pub fn push_not_complete(&mut self, ts: &Scalar<'_>) {
        let t = &mut self.timeline;
        t.events += 1;
        if ts.micros_ns().is_none() {
            t.skipped.missing_ts += 1;
        }
    }

    /// Keeps the `args` of a launchguard context event whose whole element text is `element`
    /// (the fast parser hands the bytes; metadata events are few, so parsing them again is cheap).
    pub fn push_context_element(&mut self, element: &[u8]) {
        let args = (element.len() <= crate::timeline::MAX_CONTEXT_BYTES)
            .then(|| serde_json::from_slice::<serde_json::Value>(element).ok())
            .flatten();
        self.push_context(args.as_ref().and_then(|v| v.get("args")));
    }

    /// Keeps `args` of a launchguard context event (the first one only); counts every one.
    pub fn push_context(&mut self, args: Option<&serde_json::Value>) {
        let t = &mut self.timeline;
        t.context_events += 1;
        if t.context.is_none() {
            t.context = args
                .and_then(|a| serde_json::to_string(a).ok())
                .filter(|text| text.len() <= crate::timeline::MAX_CONTEXT_BYTES);
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
    pub fn finish(self) -> Timeline {
        self.timeline
    }
}

impl From<Timeline> for TimelineBuilder {
    /// Goes on filling a timeline: the fast parser joins the parts it read in parallel this way.
    fn from(timeline: Timeline) -> Self {
        Self { timeline, ..Self::default() }
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
