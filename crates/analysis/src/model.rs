//! The figures of an analysis: the measured part of `launchguard.analysis/1` (the judge adds the
//! limits, checks and verdict). A public interface: keys are added, never renamed, within a
//! version.

use serde::{Deserialize, Serialize};

use crate::context::WorkloadContext;

/// Schema id of [`Analysis`].
pub const SCHEMA: &str = "launchguard.analysis/1";

/// The figures of one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The file and how much of it was usable.
    pub source: Source,
    /// Facts from the trace's header.
    pub trace: TraceInfo,
    /// The `--within` pattern, when activity was restricted to matching annotation spans.
    pub within: Option<String>,
    /// How `--within` bounds the activity: `span range` (from the first matching span's start to
    /// the last one's end, what lies between included) or `span interiors` (inside the spans
    /// only); absent without `--within`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_mode: Option<String>,
    /// What `--within` measured on each device: the GPU spans on it, or for host spans the GPU
    /// work launched inside them (by correlation), or the host spans in time cut to the GPU's
    /// record; absent without `--within`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_rule: Option<String>,
    /// Per-device figures, in device order.
    pub devices: Vec<Device>,
    /// Graph-launch call durations.
    pub graph_launches: GraphLaunches,
    /// Per-replay figures, one per graph launch, in launch order.
    pub replays: Vec<Replay>,
    /// Summary of the replays.
    pub replay_summary: ReplaySummary,
    /// Per GPU activity name: count, total, mean, p50, p99, share; over the trace, per device,
    /// stream and graph ([`crate::kernels`]).
    #[serde(default)]
    pub kernels: crate::kernels::Kernels,
    /// What tells whether the profiler lost GPU events ([`Damage`]).
    #[serde(default)]
    pub damage: Damage,
    /// What `check` measured besides this trace, when it wrote the trace (its context event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadContext>,
    /// Things the reader should know (truncation, lost events).
    pub warnings: Vec<String>,
    /// What the trace says that cannot have happened (a damaged or forged trace), each said in
    /// `warnings` too; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anomalies: Vec<Anomaly>,
}

/// Causality that cannot hold, counted: the figures it touches are not to be judged as if the
/// trace were sound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    /// Which.
    pub kind: AnomalyKind,
    /// Replays (for `kernel_before_launch`) or correlation ids (for `correlation_reused`) that
    /// show it.
    pub count: u64,
    /// Where it is first seen, in words (launch index, correlation id, trace time).
    pub first: String,
}

/// The kinds of [`Anomaly`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    /// A replay's first GPU activity starts before the launch call that started it.
    KernelBeforeLaunch,
    /// One correlation id joins several launches: their kernels cannot be told apart, and each
    /// launch is credited with all of them.
    CorrelationReused,
}

impl Anomaly {
    /// What cannot have happened, how often and where it is first seen.
    pub fn what(&self) -> String {
        match self.kind {
            AnomalyKind::KernelBeforeLaunch => format!(
                "in {} the first GPU activity starts more than {} µs before its launch (first: {})",
                if self.count == 1 { "1 replay".to_string() } else { format!("{} replays", self.count) },
                crate::analyze::CLOCK_SKEW_US,
                self.first
            ),
            AnomalyKind::CorrelationReused => format!(
                "{} shared by several graph launches (first: {})",
                if self.count == 1 {
                    "1 correlation id is".to_string()
                } else {
                    format!("{} correlation ids are each", self.count)
                },
                self.first
            ),
        }
    }

    /// The anomaly in one sentence, for the warnings.
    pub fn message(&self) -> String {
        let consequence = match self.kind {
            AnomalyKind::KernelBeforeLaunch => {
                "the trace is damaged and its replay figures cannot be trusted"
            }
            AnomalyKind::CorrelationReused => {
                "kernels cannot be told apart by launch and the replay figures cannot be trusted"
            }
        };
        format!("impossible causality: {}; {consequence}", self.what())
    }
}

/// The input file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Path as given.
    pub path: String,
    /// Size on disk.
    pub bytes: u64,
    /// Gzip-compressed.
    pub gzip: bool,
    /// Events read.
    pub events: u64,
    /// Events skipped (no usable `ts`, bad `dur`, not an object).
    pub skipped_events: u64,
    /// Skips by reason.
    pub skipped: Skipped,
    /// The file ended early; the complete events before that point were analyzed.
    pub truncated: bool,
    /// Why it ended early.
    pub truncation: Option<String>,
    /// Names and labels longer than the cap (`[input] max_name_bytes`), kept cut to their first
    /// bytes; absent when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub names_cut: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Skipped events by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Skipped {
    /// No usable `ts`.
    pub missing_ts: u64,
    /// Complete events with a missing, negative or unreadable `dur`.
    pub bad_dur: u64,
    /// Array elements that are not objects.
    pub not_an_object: u64,
}

/// Header facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TraceInfo {
    /// Profiler backend named by the header (`cupti`, `roctracer`, `rocprofiler-sdk`).
    pub profiler: Option<String>,
    /// `distributedInfo.rank`.
    pub rank: Option<u64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u64>,
    /// `baseTimeNanoseconds`: add `ts × 1000` for absolute nanoseconds.
    pub base_time_ns: Option<i64>,
}

/// Figures of one device (or, inside it, one stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Device label (`args.device`, else `pid`), always a string.
    pub device: String,
    /// Name from `deviceProperties`, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// Occupancy and gaps of the device as a whole.
    #[serde(flatten)]
    pub figures: Figures,
    /// The same per stream.
    pub streams: Vec<Stream>,
    /// The same over the steady state of graph replays, from the first replay's first GPU
    /// activity on this device to the last replay's last; null when no replay ran on it.
    #[serde(default)]
    pub steady: Option<Steady>,
}

/// A device's figures over its steady state of graph replays, and what lies outside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// Occupancy and gaps inside the steady window.
    #[serde(flatten)]
    pub figures: Figures,
    /// Length of the device's window before the steady window (an idle prefix, or work before
    /// the first replay), µs.
    pub before_us: f64,
    /// Length of the device's window after it, µs.
    pub after_us: f64,
    /// Busy time of the device before the steady window, µs.
    pub busy_before_us: f64,
    /// Busy time of the device after it, µs.
    pub busy_after_us: f64,
    /// GPU activities inside the steady window that graph replays launched (their correlation
    /// id is a graph launch's), over all GPU activities inside it.
    pub replay_share: f64,
}

/// Figures of one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stream {
    /// Stream label (`args.stream`, else `tid`).
    pub stream: String,
    /// Its figures.
    #[serde(flatten)]
    pub figures: Figures,
}

/// Occupancy and gaps over a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// GPU activities counted.
    pub activities: u64,
    /// Start of the window, trace µs.
    pub window_start_us: f64,
    /// Length of the window: first activity start to last activity end (with `--within`, the
    /// total length of the matching spans).
    pub window_us: f64,
    /// Length of the union of activity intervals inside the window.
    pub busy_us: f64,
    /// window − busy.
    pub idle_us: f64,
    /// busy / window (0 for an empty window).
    pub occupancy: f64,
    /// The idle intervals inside the window.
    pub gaps: Gaps,
}

/// Idle intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gaps {
    /// Gaps longer than this count.
    pub threshold_us: f64,
    /// Gaps longer than the threshold.
    pub over_threshold: u64,
    /// All gaps.
    pub count: u64,
    /// Longest gap (0 when none).
    pub max_us: f64,
    /// Counts by length.
    pub histogram: Vec<Bucket>,
}

/// One histogram bucket: `[lo_us, hi_us)`; `hi_us` null for the open last bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Lower edge, µs.
    pub lo_us: f64,
    /// Upper edge, µs.
    pub hi_us: Option<f64>,
    /// Count.
    pub count: u64,
}

/// Durations of the graph-launch calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphLaunches {
    /// Calls found.
    pub count: u64,
    /// API names seen (`cudaGraphLaunch`, `hipGraphLaunch`, …).
    pub apis: Vec<String>,
    /// Mean duration.
    pub mean_us: Option<f64>,
    /// Median.
    pub p50_us: Option<f64>,
    /// 99th percentile (linear interpolation).
    pub p99_us: Option<f64>,
    /// Longest.
    pub max_us: Option<f64>,
    /// Kernels sharing each launch's correlation id.
    pub kernels_per_launch: MinMax,
}

/// A range of counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MinMax {
    /// Smallest.
    pub min: Option<u64>,
    /// Largest.
    pub max: Option<u64>,
}

/// One graph replay, joined to its GPU work through the correlation id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Position among the launches, from 0.
    pub index: u64,
    /// Correlation id shared by the launch and its kernels.
    pub correlation: Option<u64>,
    /// Device of its first GPU activity.
    pub device: Option<String>,
    /// Launch call start, trace µs.
    pub launch_start_us: f64,
    /// Launch call duration.
    pub launch_us: f64,
    /// GPU activities it started.
    pub kernels: u64,
    /// Launch call start to first activity start.
    pub launch_to_first_kernel_us: Option<f64>,
    /// First activity start to last activity end.
    pub gpu_span_us: Option<f64>,
    /// Idle time of the device just before the first activity (0 when the device was busy).
    pub idle_before_us: Option<f64>,
    /// Which of [`ReplaySummary::graphs`] it replayed (none when it started no GPU work).
    #[serde(default)]
    pub graph: Option<u32>,
}

/// Summary over the replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReplaySummary {
    /// Replays (graph launches).
    pub count: u64,
    /// Most common kernel count.
    pub kernels_mode: Option<u64>,
    /// Replays whose kernel count differs from the most common one.
    pub inconsistent: u64,
    /// Replays whose launch started no GPU activity in the trace.
    pub without_kernels: u64,
    /// Median launch-to-first-kernel latency.
    pub latency_p50_us: Option<f64>,
    /// Median GPU span.
    pub gpu_span_p50_us: Option<f64>,
    /// Median idle time before a replay.
    pub idle_before_p50_us: Option<f64>,
    /// Median idle time before a replay, the first one on each device left out: the GPU waiting
    /// for the host between replays, without the idle prefix before the first.
    #[serde(default)]
    pub steady_idle_before_p50_us: Option<f64>,
    /// The distinct kernel counts of replays with GPU work, with how many replays had each,
    /// most frequent first: several counts that each recur are several graphs.
    #[serde(default)]
    pub kernel_counts: Vec<CountOf>,
    /// Median over the replays that ran collective kernels (NCCL, RCCL, …) of their time in
    /// them: with several ranks, what a replay spent in collectives, waiting for peers included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collectives_p50_us: Option<f64>,
    /// The graphs replayed: replays with the same number of kernels of the same names, in order
    /// of first replay.
    #[serde(default)]
    pub graphs: Vec<GraphFigures>,
}

/// One graph, as its replays show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphFigures {
    /// GPU activities per replay.
    pub kernels: u64,
    /// Replays of it.
    pub replays: u64,
    /// Hash of its kernels' names, the same for the same kernels in any trace (hex).
    pub signature: String,
    /// The kernel that starts a replay.
    pub first_kernel: String,
    /// The kernel that ends it.
    pub last_kernel: String,
}

/// How many replays ran a given number of GPU activities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountOf {
    /// GPU activities per replay.
    pub kernels: u64,
    /// Replays that ran that many.
    pub replays: u64,
}

/// The figures that tell a trace that lost GPU events from one that recorded them all. Profilers
/// lose events silently (CUPTI and roctracer buffers fill, a continuous replay records one replay
/// in N, tracing stops early): the launches are still there, their GPU work is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Damage {
    /// Graph launches whose replay has no GPU activity in the trace
    /// ([`ReplaySummary::without_kernels`]).
    pub replays_without_kernels: u64,
    /// Replays with GPU activity whose kernels (count and names) match no other replay's:
    /// kernels lost here and there inside replays. Counted from [`MIN_REPLAYS_TO_MATCH`] replays
    /// on (a graph replayed once has nothing to match).
    pub replays_unmatched: u64,
    /// The stream that ran replays and went silent while the most graph launches without any GPU
    /// work went on after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silent: Option<Silence>,
    /// The host's span of graph launches, first start to last end, µs.
    pub host_window_us: f64,
    /// The GPU's span of the replays' activities, first start to last end, µs.
    pub gpu_window_us: f64,
    /// What the profiler itself wrote of records it lost (Kineto's `WARNING`/`ERROR` metadata).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiler_messages: Vec<String>,
}

/// Replays a trace must hold before a replay that matches no other counts as damaged.
pub const MIN_REPLAYS_TO_MATCH: u64 = 10;

/// A stream that stopped recording while the host went on launching.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Silence {
    /// Its device.
    pub device: String,
    /// The stream.
    pub stream: String,
    /// When its last activity ended, trace µs.
    pub silent_from_us: f64,
    /// Graph launches without any GPU work in the trace that started after that.
    pub launches_after: u64,
}
