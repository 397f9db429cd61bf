//! The spans the analysis measured, in exact nanoseconds, for the formats that draw or mark them
//! (the HTML timeline, the annotated trace): per device its window, busy time and gaps; per replay
//! its launch call and its GPU work. Computed from the timeline with the analysis's own interval
//! functions, so a gap drawn is a gap counted.

use std::collections::HashMap;

use launchguard_trace::{GpuActivity, GraphLaunch, Timeline};

use crate::analyze::{device_windows, within_windows};
use crate::intervals::{self, Span};
use crate::model::Analysis;

/// One device's measured spans.
#[derive(Debug, Clone)]
pub struct DeviceSpans {
    /// Device label, as in the analysis.
    pub label: String,
    /// The measured windows: first activity start to last end, or the `--within` spans.
    pub windows: Vec<Span>,
    /// Union of the device's activity inside the windows.
    pub busy: Vec<Span>,
    /// Every idle interval inside the windows.
    pub gaps: Vec<Span>,
    /// Busy time per stream (label, union), in the analysis's stream order.
    pub streams: Vec<(String, Vec<Span>)>,
    /// Each activity, for naming on hover, when the trace has at most [`MAX_NAMED`] of them.
    pub named: Option<Named>,
}

/// The activities of one device with their names: `(start, end, index into names)` by start.
#[derive(Debug, Clone, Default)]
pub struct Named {
    /// `(start, end, name index)` per activity, ordered by start then end.
    pub items: Vec<(i64, i64, u32)>,
    /// The distinct names in full, in order of first appearance.
    pub names: Vec<String>,
}

/// Traces of at most this many GPU activities keep each one's name for the timelines' hover:
/// their drawing embeds three numbers per activity (30,000: under 1 MB of page).
pub const MAX_NAMED: usize = 30_000;

impl DeviceSpans {
    /// Gaps longer than `threshold_ns`, the ones the gaps check counts.
    pub fn long_gaps(&self, threshold_ns: i64) -> impl Iterator<Item = Span> + '_ {
        self.gaps.iter().copied().filter(move |(s, e)| e - s > threshold_ns)
    }
}

/// One graph replay.
#[derive(Debug, Clone, Copy)]
pub struct ReplaySpan {
    /// Position among the analysis's replays.
    pub index: u64,
    /// The host launch call.
    pub launch: Span,
    /// First activity start to last activity end of the work it started, when any.
    pub gpu: Option<Span>,
}

impl ReplaySpan {
    /// Launch start to the end of its last activity (or of the call when it started none).
    pub fn whole(&self) -> Span {
        (self.launch.0, self.gpu.map_or(self.launch.1, |g| g.1.max(self.launch.1)))
    }
}

/// Everything measured, ready to draw.
#[derive(Debug, Clone)]
pub struct Findings {
    /// Devices in the analysis's order.
    pub devices: Vec<DeviceSpans>,
    /// Replays in the analysis's order.
    pub replays: Vec<ReplaySpan>,
    /// Gaps longer than this count, ns (the analysis's threshold).
    pub threshold_ns: i64,
    /// The threshold as configured, µs.
    pub threshold_us: f64,
}

impl Findings {
    /// The spans behind `analysis`, recomputed from its `timeline`.
    pub fn new(t: &Timeline, analysis: &Analysis) -> Result<Self, regex::Error> {
        let interiors = analysis.within_mode.as_deref() == Some("span interiors");
        let windows = match &analysis.within {
            Some(w) => Some(within_windows(t, &regex::Regex::new(w)?, interiors)),
            None => None,
        };
        let threshold_us = analysis.devices.first().map_or(100.0, |d| d.figures.gaps.threshold_us);
        let mut devices = Vec::with_capacity(analysis.devices.len());
        for d in &analysis.devices {
            let Some(id) = t.strings.lookup(&d.device) else { continue };
            let acts: Vec<_> = t.activities.iter().filter(|a| a.device == id).collect();
            let windows: Vec<Span> = match &windows {
                Some(w) => device_windows(w, id).to_vec(),
                None => {
                    let lo = acts.iter().map(|a| a.start).min().unwrap_or(0);
                    let hi = acts.iter().map(|a| a.end).max().unwrap_or(0);
                    vec![(lo, hi)]
                }
            };
            let clip = |spans: Vec<Span>| intervals::intersect(&intervals::union(spans), &windows);
            let busy = clip(acts.iter().map(|a| (a.start, a.end)).collect());
            let gaps = intervals::gaps(&busy, &windows);
            let streams = d
                .streams
                .iter()
                .filter_map(|s| {
                    let sid = t.strings.lookup(&s.stream)?;
                    let spans = acts.iter().filter(|a| a.stream == sid).map(|a| (a.start, a.end)).collect();
                    Some((s.stream.clone(), clip(spans)))
                })
                .collect();
            let named = (t.activities.len() <= MAX_NAMED).then(|| named(t, &acts));
            devices.push(DeviceSpans { label: d.device.clone(), windows, busy, gaps, streams, named });
        }
        Ok(Self {
            devices,
            replays: replays(t, analysis),
            threshold_ns: (threshold_us * 1000.0).round() as i64,
            threshold_us,
        })
    }

    /// The first window start and last window end over all devices, when there is activity.
    pub fn extent(&self) -> Option<Span> {
        let lo = self.devices.iter().filter_map(|d| d.windows.first()).map(|w| w.0).min()?;
        let hi = self.devices.iter().filter_map(|d| d.windows.last()).map(|w| w.1).max()?;
        Some((lo, hi))
    }
}

/// A device's activities by start, each with the index of its name.
fn named(t: &Timeline, acts: &[&GpuActivity]) -> Named {
    let mut acts = acts.to_vec();
    acts.sort_by_key(|a| (a.start, a.end));
    let mut index: HashMap<u32, u32> = HashMap::new();
    let mut names = Vec::new();
    let items = acts
        .iter()
        .map(|a| {
            let i = *index.entry(a.name).or_insert_with(|| {
                names.push(t.strings.get(a.name).to_string());
                names.len() as u32 - 1
            });
            (a.start, a.end, i)
        })
        .collect();
    Named { items, names }
}

/// Joins the analysis's replays back to the exact launch and kernel times.
fn replays(t: &Timeline, analysis: &Analysis) -> Vec<ReplaySpan> {
    let mut work: HashMap<u64, Span> = HashMap::new();
    for a in &t.activities {
        if let Some(c) = a.correlation() {
            let w = work.entry(c).or_insert((a.start, a.end));
            w.0 = w.0.min(a.start);
            w.1 = w.1.max(a.end);
        }
    }
    let mut launches: Vec<&GraphLaunch> = t.launches.iter().collect();
    launches.sort_by_key(|l| (l.start, l.end));
    let by_corr: HashMap<u64, &GraphLaunch> =
        launches.iter().filter_map(|l| l.correlation.map(|c| (c, *l))).collect();
    analysis
        .replays
        .iter()
        .filter_map(|r| {
            let l = match r.correlation.and_then(|c| by_corr.get(&c)) {
                Some(l) => *l,
                // No correlation id: the launch whose start is nearest the reported one.
                None => {
                    let ns = (r.launch_start_us * 1000.0).round() as i64;
                    let i = launches.partition_point(|l| l.start < ns);
                    let near = |j: usize| launches.get(j).map(|l| (l.start - ns).abs());
                    let j = match (i.checked_sub(1).and_then(near), near(i)) {
                        (Some(a), Some(b)) if a <= b => i - 1,
                        (Some(_), None) => i - 1,
                        _ => i,
                    };
                    launches.get(j)?
                }
            };
            let gpu = l.correlation.and_then(|c| work.get(&c)).copied();
            Some(ReplaySpan { index: r.index, launch: (l.start, l.end), gpu })
        })
        .collect()
}

/// One rank's GPU time on the common clock, split as its [`crate::model_ranks::RankFigures`] are:
/// the union of compute activity, of collective kernels without their waiting parts, and of the
/// waiting parts (a collective running before the last rank reached it).
#[derive(Debug, Clone)]
pub struct RankSpans {
    /// The rank.
    pub rank: u64,
    /// The shift of its trace times onto the common clock, ns (add it to a trace time).
    pub offset_ns: i64,
    /// First activity start to last activity end, on the common clock.
    pub extent: Option<Span>,
    /// Union of the non-collective activity.
    pub compute: Vec<Span>,
    /// Union of the collective kernels minus their waiting parts.
    pub collectives: Vec<Span>,
    /// Union of the waiting parts (empty when the clocks look unaligned).
    pub waiting: Vec<Span>,
}

/// Every rank's spans, and the common window in which every rank was recorded.
#[derive(Debug, Clone)]
pub struct RanksSpans {
    /// In the order of the ranks given.
    pub ranks: Vec<RankSpans>,
    /// The common window, when the ranks overlap.
    pub common: Option<Span>,
    /// Whether waiting was split out (false when the clocks look unaligned).
    pub waits_split: bool,
}

impl RanksSpans {
    /// The first start and last end over every rank.
    pub fn extent(&self) -> Option<Span> {
        let lo = self.ranks.iter().filter_map(|r| r.extent).map(|e| e.0).min()?;
        let hi = self.ranks.iter().filter_map(|r| r.extent).map(|e| e.1).max()?;
        Some((lo, hi))
    }
}
