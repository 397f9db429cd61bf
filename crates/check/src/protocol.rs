//! The versioned JSON protocol between launchguard and its Python workload.
//!
//! Rust writes a [`WorkloadConfig`]; the script prints [`Progress`] lines on stdout and writes a
//! [`WorkloadResult`]. The script measures; it never decides pass or fail.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use launchguard_analysis::context::{Inventory, Workload};

/// Schema of the config file.
pub const CONFIG_SCHEMA: &str = "launchguard.workload-config/1";
/// Schema of the result file.
pub const RESULT_SCHEMA: &str = "launchguard.workload/1";
/// The workload script, embedded in the binary.
pub const SCRIPT: &str = include_str!("../workload/launchguard_workload.py");

/// What the script is asked to do.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadConfig {
    /// Always [`CONFIG_SCHEMA`].
    pub schema: &'static str,
    /// The model and replay counts.
    #[serde(flatten)]
    pub workload: Workload,
    /// µs busy-waited before each replay, to test the guard itself.
    pub inject_delay_us: f64,
    /// The delay is busy-waited before every this-many-th launch of each phase (1: every launch).
    pub inject_every: u32,
    /// The ranks that busy-wait (`None`: every rank), to test that one slow rank is caught.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Where the profiled session's trace goes (`{rank}` is replaced per rank).
    pub trace_path: String,
    /// Where the result goes (`{rank}` is replaced per rank).
    pub result_path: String,
    /// `record_function` name around each profiled replay.
    pub annotation: String,
}

/// One progress line.
#[derive(Debug, Clone, Deserialize)]
pub struct Progress {
    /// `phase`.
    pub event: String,
    /// Phase name.
    #[serde(default)]
    pub phase: String,
    /// `start` or `done`.
    #[serde(default)]
    pub state: String,
    /// Seconds, when done.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// The rank that reports it.
    #[serde(default)]
    pub rank: u32,
}

/// What the script measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Always [`RESULT_SCHEMA`].
    pub schema: String,
    /// `ok`, or `skip` when this machine cannot run it.
    pub status: String,
    /// Why it skipped.
    #[serde(default)]
    pub reason: Option<String>,
    /// This process's rank.
    #[serde(default)]
    pub rank: u32,
    /// Ranks in all.
    #[serde(default = "one")]
    pub world_size: u32,
    /// The software and hardware it ran on.
    #[serde(default)]
    pub inventory: Inventory,
    /// Samples per phase: `before`, `profiled`, `after`.
    #[serde(default)]
    pub phases: BTreeMap<String, PhaseResult>,
    /// Wall time per phase, seconds (`import_s`, `capture_s`, …).
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
    /// A token rank 0 drew and broadcast to every rank once they met: the same in every rank's
    /// result of one run, another in the next run.
    #[serde(default)]
    pub session: Option<String>,
}

fn one() -> u32 {
    1
}

/// One phase's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PhaseResult {
    /// Host cost of each replay, µs (monotonic clock around the replay call).
    #[serde(default)]
    pub host_us: Vec<f64>,
    /// Host cost of each of many back-to-back replays with no synchronize in between, µs: shows
    /// whether the CPU can run ahead of the GPU.
    #[serde(default)]
    pub steady_host_us: Vec<f64>,
    /// GPU time per replay over back-to-back replays, µs (device events).
    #[serde(default)]
    pub gpu_us_per_replay: Option<f64>,
    /// Host time of each step-synchronous replay, µs: the injected delay, the launch, the GPU's
    /// replay and the read-back of a few values of its output, as a server's decode step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_step_us: Vec<f64>,
    /// GPU time of each step-synchronous replay, µs (device events around it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_gpu_us: Vec<f64>,
    /// The trace of the profiled phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_path: Option<String>,
}
