//! `launchguard.check/1`: the result of `check`, also the baseline format. A public interface:
//! keys are added, never renamed, within a version.

use std::collections::BTreeMap;

use launchguard_analysis::context::{Inventory, PhaseReport, Workload};
use launchguard_judge::compare::Comparison;
use launchguard_judge::config::Thresholds;
use launchguard_judge::{AnalysisReport, Check, RanksReport, Verdict};
use serde::{Deserialize, Serialize};

/// Schema id of [`CheckReport`].
pub const SCHEMA: &str = "launchguard.check/1";

/// The result of one `check` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// launchguard's version.
    pub launchguard_version: String,
    /// Worst status of the checks, or `skip` when nothing could run here.
    pub verdict: Verdict,
    /// Why the verdict is `skip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The workload that ran.
    pub workload: Workload,
    /// µs injected before each replay (0 in real use).
    pub inject_delay_us: f64,
    /// The delay was injected before every this-many-th launch of each phase (absent: every one).
    #[serde(
        default = "launchguard_analysis::context::every_launch",
        skip_serializing_if = "launchguard_analysis::context::is_every_launch"
    )]
    pub inject_every: u32,
    /// The ranks that busy-waited (absent: every rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Trace limits in force (rank 0's), after the judge adapted them to the graph and the ranks.
    pub thresholds: Thresholds,
    /// `launchguard.linkage/1` of the PyTorch that ran.
    #[serde(default)]
    pub linkage: Option<serde_json::Value>,
    /// Rank 0's software, hardware and loaded layers.
    #[serde(default)]
    pub inventory: Option<Inventory>,
    /// Rank 0's samples per phase: `before`, `profiled`, `after`.
    #[serde(default)]
    pub phases: BTreeMap<String, PhaseReport>,
    /// Rank 0's profiled trace, judged (one rank).
    #[serde(default)]
    pub analysis: Option<AnalysisReport>,
    /// Every rank's samples (TP > 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankReport>,
    /// The ranks' traces judged together (TP > 1): per-rank figures with waiting for peers kept
    /// apart from busy time, the skew of replay starts, the worst rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across: Option<RanksReport>,
    /// The comparison with `--baseline`, judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// All checks, in report order.
    pub checks: Vec<Check>,
    /// Wall seconds: each workload phase, and `wall_s` for the whole check.
    pub timings: BTreeMap<String, f64>,
}

/// One rank of a tensor-parallel run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    /// Rank.
    pub rank: u32,
    /// GPU it ran on.
    pub device_index: Option<u32>,
    /// Its samples.
    pub phases: BTreeMap<String, PhaseReport>,
}

impl CheckReport {
    /// The occupancy the guard judges: the lowest device's profiled occupancy over its steady
    /// state; with several ranks, the lowest rank's occupancy excluding waiting for peers over
    /// the window every rank was recorded in (rank 0's whole-window figure swings from 83% to 98%
    /// between healthy TP runs with how long it waited for its peers when profiling began).
    pub fn judged_occupancy(&self) -> Option<f64> {
        match (&self.across, &self.analysis) {
            (Some(across), _) => across.judged_occupancy(),
            (None, Some(a)) => a.judged_occupancy(),
            (None, None) => None,
        }
    }
}
