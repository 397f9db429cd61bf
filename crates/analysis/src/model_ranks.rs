//! The figures of a multi-rank analysis (several traces of one distributed run): the measured part
//! of `launchguard.analysis-ranks/1` (the judge adds the checks, verdicts and worst rank). A
//! public interface: keys are added, never renamed, within a version. The definitions behind each
//! figure are in [`crate::ranks`].

use serde::{Deserialize, Serialize};

use crate::model::Analysis;

/// Schema id of [`RanksAnalysis`].
pub const RANKS_SCHEMA: &str = "launchguard.analysis-ranks/1";

/// The analysis of the ranks of one distributed run, one trace per rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanksAnalysis {
    /// Always [`RANKS_SCHEMA`].
    pub schema: String,
    /// `distributedInfo.world_size` when the traces agree on one.
    pub world_size: Option<u64>,
    /// One entry per rank, in rank order.
    pub ranks: Vec<RankAnalysis>,
    /// Figures that compare the ranks.
    pub across: Across,
    /// Things the reader should know (missing ranks, unmatched collectives, unaligned clocks).
    pub warnings: Vec<String>,
}

/// One rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAnalysis {
    /// Who the rank is and what was measured of it across ranks; its fields read through.
    #[serde(flatten)]
    pub facts: RankFacts,
    /// The single-trace figures of this rank's trace.
    pub analysis: Analysis,
}

/// Who a rank is and its figures among the ranks: the leading keys of a rank in
/// `launchguard.analysis-ranks/1`, measured here and carried as they are into the judged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFacts {
    /// The rank.
    pub rank: u64,
    /// Where the rank came from: `distributedInfo` or `file name`.
    pub rank_from: String,
    /// The node (host) it ran on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The collective kernels of this rank.
    pub collectives: Collectives,
    /// Figures over this rank's own window (first to last GPU activity).
    pub whole: RankFigures,
    /// Figures over the common window, in which every rank was recorded; null when the ranks'
    /// windows do not overlap.
    pub common: Option<RankFigures>,
}

// A rank's facts are read as its own fields (`k.rank`, `k.whole`) in the analysis and in the
// judged report alike; the struct exists so that both carry one definition of them.
impl std::ops::Deref for RankAnalysis {
    type Target = RankFacts;
    fn deref(&self) -> &RankFacts {
        &self.facts
    }
}

/// Counts of collective kernels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Collectives {
    /// Collective kernels (point-to-point ones included).
    pub kernels: u64,
    /// Of which point-to-point (send/receive): never matched across ranks.
    pub point_to_point: u64,
    /// Kernels matched with an instance on every other rank; only these have a wait.
    pub matched: u64,
    /// Distinct collective kernel names with their counts, most frequent first.
    pub names: Vec<NameCount>,
}

/// A kernel name and how often it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameCount {
    /// Kernel name as in the trace.
    pub name: String,
    /// Instances.
    pub count: u64,
}

/// One rank's busy time split into compute, collectives and waiting for peers, over a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    /// Start of the window, µs on the common clock (this rank's `ts` shifted by its
    /// `baseTimeNanoseconds` minus the lowest rank's).
    pub window_start_us: f64,
    /// Length of the window.
    pub window_us: f64,
    /// Union of all GPU activity inside the window.
    pub busy_us: f64,
    /// busy / window.
    pub occupancy: f64,
    /// Union of non-collective GPU activity inside the window.
    pub compute_busy_us: f64,
    /// Union of collective kernels inside the window.
    pub collective_busy_us: f64,
    /// Union of the waiting parts of matched collective kernels inside the window; null when the
    /// clocks look unaligned (waiting cannot be told apart then).
    pub collective_wait_us: Option<f64>,
    /// Union of compute and of collective kernels minus their waiting parts, inside the window:
    /// the time the GPU did something other than wait for a peer.
    pub busy_excluding_wait_us: Option<f64>,
    /// busy_excluding_wait / window: occupancy where waiting does not pass for busy.
    pub occupancy_excluding_wait: Option<f64>,
}

/// Figures that compare the ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Across {
    /// Whether the traces look like one clock, judged on the matched collectives.
    pub clocks: Clocks,
    /// The span in which every rank's GPU activity was recorded; null when there is none.
    pub common_window: Option<Window>,
    /// Replays matched across ranks (by index) that every rank ran on the GPU.
    pub replays_matched: u64,
    /// Spread of replay starts across ranks over every matched replay; null when the clocks look
    /// unaligned.
    pub skew: Option<Skew>,
    /// The same over the replays that started inside the common window on every rank: without
    /// the warm-up, where one rank waits for a peer whose profiler has not started.
    pub skew_common: Option<Skew>,
    /// Per node, when the ranks ran on several known nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeFigures>,
}

/// The ranks of one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFigures {
    /// The node's host name.
    pub node: String,
    /// Its ranks.
    pub ranks: Vec<u64>,
    /// The lowest occupancy of its ranks (excluding waiting for peers, over the common window).
    pub occupancy_min: f64,
    /// Their median occupancy.
    pub occupancy_median: f64,
    /// Replays one of its ranks started last (on the GPU) across all ranks, counted as
    /// `skew_common` counts them (else `skew`): a slow node collects them.
    pub last_to_start: u64,
    /// The median shift of its ranks' clocks onto the common clock, µs.
    pub clock_offset_us: f64,
}

/// The clock check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    /// True when every matched collective's instances overlap in time (within the tolerance),
    /// false when some do not, null when no collective was matched (then one clock is assumed).
    pub aligned: Option<bool>,
    /// Collectives matched across every rank.
    pub matched_collectives: u64,
    /// Of which whose instances do not overlap: one ends before another rank's starts.
    pub violations: u64,
    /// Smallest overlap of a matched collective's instances (negative: the worst violation).
    pub min_overlap_us: Option<f64>,
    /// Overlap below minus this counts as a violation.
    pub tolerance_us: f64,
    /// Each rank's shift onto the common clock (`baseTimeNanoseconds` minus the lowest rank's).
    pub offsets_us: Vec<RankValue>,
}

/// A window on the common clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Start, µs.
    pub start_us: f64,
    /// End, µs.
    pub end_us: f64,
    /// Length, µs.
    pub length_us: f64,
}

/// Spread of replay starts across ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// Replays measured.
    pub replays: u64,
    /// Per replay, latest minus earliest start of its first GPU activity across ranks.
    pub gpu_start: Spread,
    /// Per replay, latest minus earliest start of its graph-launch call across ranks.
    pub launch_start: Spread,
    /// Per rank, the replays whose GPU work it started strictly last.
    pub last_to_start: Vec<RankCount>,
    /// The rank that started last most often (null on a tie or when none did).
    pub straggler: Option<u64>,
}

/// Percentiles of a spread (linear interpolation, as numpy).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest.
    pub max_us: f64,
}

/// A number per rank.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankValue {
    /// The rank.
    pub rank: u64,
    /// Its value.
    pub value: f64,
}

/// A count per rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankCount {
    /// The rank.
    pub rank: u64,
    /// Replays.
    pub replays: u64,
}
