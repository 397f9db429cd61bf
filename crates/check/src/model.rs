//! `launchguard.check/1`: the result of `check`, also the baseline format. A public interface:
//! keys are added, never renamed, within a version.

use std::collections::BTreeMap;

use launchguard_analysis::config::Thresholds;
use launchguard_analysis::{Analysis, Check, Verdict};
use serde::{Deserialize, Serialize};

use crate::preset::Workload;
use crate::protocol::Inventory;

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
    /// The ranks that busy-waited (absent: every rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Trace limits in force, after the per-graph adjustments.
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
    /// Rank 0's profiled trace, analyzed.
    #[serde(default)]
    pub analysis: Option<Analysis>,
    /// Every rank's samples (TP > 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankReport>,
    /// The ranks' traces analyzed together (TP > 1): per-rank figures with waiting for peers kept
    /// apart from busy time, the skew of replay starts, the worst rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across: Option<launchguard_analysis::model_ranks::RanksAnalysis>,
    /// All checks, in report order.
    pub checks: Vec<Check>,
    /// Wall seconds: each workload phase, and `wall_s` for the whole check.
    pub timings: BTreeMap<String, f64>,
}

/// One phase's samples and summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PhaseReport {
    /// Host cost of each replay, µs: the raw samples, kept for comparisons.
    pub host_us: Vec<f64>,
    /// Median host cost.
    pub host_p50_us: Option<f64>,
    /// 99th percentile.
    pub host_p99_us: Option<f64>,
    /// Mean.
    pub host_mean_us: Option<f64>,
    /// GPU time per replay (device events over back-to-back replays).
    pub gpu_us_per_replay: Option<f64>,
    /// Host cost of each back-to-back replay with no synchronize between them, µs (raw samples).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steady_host_us: Vec<f64>,
    /// Their median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_host_p50_us: Option<f64>,
}

impl PhaseReport {
    /// Summarizes raw samples.
    pub fn from_samples(host_us: Vec<f64>, gpu_us_per_replay: Option<f64>) -> Self {
        let mut sorted = host_us.clone();
        sorted.sort_by(f64::total_cmp);
        use launchguard_analysis::intervals::{mean, percentile};
        Self {
            host_p50_us: percentile(&sorted, 50.0),
            host_p99_us: percentile(&sorted, 99.0),
            host_mean_us: mean(&host_us),
            host_us,
            gpu_us_per_replay,
            steady_host_us: Vec::new(),
            steady_host_p50_us: None,
        }
    }

    /// Adds the back-to-back samples.
    pub fn with_steady(mut self, steady_host_us: Vec<f64>) -> Self {
        let mut sorted = steady_host_us.clone();
        sorted.sort_by(f64::total_cmp);
        self.steady_host_p50_us = launchguard_analysis::intervals::percentile(&sorted, 50.0);
        self.steady_host_us = steady_host_us;
        self
    }
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
    /// Its trace, analyzed.
    pub analysis: Option<Analysis>,
}

impl CheckReport {
    /// The occupancy the guard judges: the lowest device's profiled occupancy; with several ranks,
    /// the lowest rank's occupancy excluding waiting for peers over the window every rank was
    /// recorded in (rank 0's whole-window figure swings from 83% to 98% between healthy TP runs
    /// with how long it waited for its peers when profiling began).
    pub fn judged_occupancy(&self) -> Option<f64> {
        if let Some(across) = &self.across {
            return across
                .ranks
                .iter()
                .filter_map(|r| {
                    let f = r.common.as_ref().unwrap_or(&r.whole);
                    f.occupancy_excluding_wait.or(Some(f.occupancy))
                })
                .reduce(f64::min);
        }
        self.analysis.as_ref().and_then(|a| {
            a.devices
                .iter()
                .filter(|d| d.figures.activities > 0)
                .map(|d| d.figures.occupancy)
                .reduce(f64::min)
        })
    }
}

/// Host p50 of a phase, if measured.
pub fn host_p50(phases: &BTreeMap<String, PhaseReport>, phase: &str) -> Option<f64> {
    phases.get(phase).and_then(|p| p.host_p50_us)
}

/// GPU µs per replay of a phase, if measured.
pub fn gpu_per_replay(phases: &BTreeMap<String, PhaseReport>, phase: &str) -> Option<f64> {
    phases.get(phase).and_then(|p| p.gpu_us_per_replay)
}
