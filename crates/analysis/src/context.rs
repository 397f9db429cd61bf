//! What `check` knew about the run that a trace alone does not tell: the workload, the host
//! samples of its three phases, the process's inventory and linkage. `check` writes it into the
//! trace it profiled as one metadata event ([`EVENT_NAME`], schema [`SCHEMA`]), so that `analyze`
//! of a kept trace measures and judges exactly what `check` did.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Schema id of [`WorkloadContext`].
pub const SCHEMA: &str = "launchguard.context/1";

/// Name of the metadata (`"ph": "M"`) event that carries a [`WorkloadContext`] in its `args`.
pub const EVENT_NAME: &str = launchguard_trace::CONTEXT_EVENT;

/// The model the workload captures as one graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Preset name, or `custom` after knobs changed it.
    pub preset: String,
    /// Block architecture: `gpt` (LayerNorm, QKV, SDPA, GELU MLP: the ATOM block) or `qwen3`.
    pub arch: String,
    /// Decoder layers.
    pub layers: u32,
    /// Batch size.
    pub batch: u32,
    /// Sequence length (1: a decode step).
    pub seq: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Attention heads.
    pub heads: u32,
    /// Key/value heads (grouped-query attention); `None` = heads.
    pub kv_heads: Option<u32>,
    /// Head dimension; `None` = hidden / heads.
    pub head_dim: Option<u32>,
    /// MLP width; `None` = 4 × hidden.
    pub ffn: Option<u32>,
    /// `float16`, `bfloat16` or `float32`.
    pub dtype: String,
    /// Eager forward passes before capture.
    pub eager_warmups: u32,
    /// Graph replays before anything is measured.
    pub warmups: u32,
    /// Replays under the profiler.
    pub replays: u32,
    /// Replays timed one by one with the profiler off (before and after the session).
    pub host_replays: u32,
    /// Back-to-back replays timed with device events for the GPU time per replay.
    pub gpu_replays: u32,
    /// GPU index.
    pub device: u32,
}

/// One phase's host samples and their summary.
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
    /// Host time of each step-synchronous replay, µs (raw samples): each replay's output read
    /// back before the next launch, as a server's decode step; the injected delay, the launch,
    /// the GPU's replay and the read-back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_step_us: Vec<f64>,
    /// GPU time of each step-synchronous replay, µs (device events around it; with the stream
    /// idle at each launch, the span includes what of the launch's host time preceded its first
    /// kernel).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_gpu_us: Vec<f64>,
    /// Summary of `sync_step_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_step: Option<StepSummary>,
    /// Median of `sync_gpu_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_gpu_p50_us: Option<f64>,
}

/// The distribution of step times, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// Steps measured.
    pub count: u64,
    /// Mean: what a run of steps costs per step.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
}

impl StepSummary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        use crate::intervals::{mean, percentile};
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Some(Self {
            count: s.len() as u64,
            mean_us: mean(&s)?,
            p50_us: percentile(&s, 50.0)?,
            p90_us: percentile(&s, 90.0)?,
            p99_us: percentile(&s, 99.0)?,
            max_us: *s.last()?,
        })
    }
}

impl PhaseReport {
    /// Summarizes raw samples: the host cost of each replay, the back-to-back ones, and the GPU
    /// time per replay.
    pub fn from_samples(host_us: Vec<f64>, steady_host_us: Vec<f64>, gpu_us_per_replay: Option<f64>) -> Self {
        use crate::intervals::{mean, percentile};
        let sorted = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_by(f64::total_cmp);
            s
        };
        let (host, steady) = (sorted(&host_us), sorted(&steady_host_us));
        Self {
            host_p50_us: percentile(&host, 50.0),
            host_p99_us: percentile(&host, 99.0),
            host_mean_us: mean(&host_us),
            host_us,
            gpu_us_per_replay,
            steady_host_p50_us: percentile(&steady, 50.0),
            steady_host_us,
            ..Self::default()
        }
    }

    /// What each step-synchronous step cost the host over this phase's GPU time per replay, µs
    /// (empty without either).
    pub fn sync_over_gpu(&self) -> Vec<f64> {
        self.gpu_us_per_replay.map_or_else(Vec::new, |g| self.sync_step_us.iter().map(|s| s - g).collect())
    }

    /// Adds the step-synchronous replays: the host time of each step and the GPU time of each
    /// replay, µs.
    pub fn with_sync(mut self, sync_step_us: Vec<f64>, sync_gpu_us: Vec<f64>) -> Self {
        use crate::intervals::percentile;
        let mut gpu = sync_gpu_us.clone();
        gpu.sort_by(f64::total_cmp);
        self.sync_step = StepSummary::of(&sync_step_us);
        self.sync_gpu_p50_us = percentile(&gpu, 50.0);
        self.sync_step_us = sync_step_us;
        self.sync_gpu_us = sync_gpu_us;
        self
    }
}

/// The software, hardware and loaded layers of the workload process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Inventory {
    /// The host the process ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Interpreter path.
    #[serde(default)]
    pub python: Option<String>,
    /// Interpreter version.
    #[serde(default)]
    pub python_version: Option<String>,
    /// `torch.__version__`.
    #[serde(default)]
    pub torch: Option<String>,
    /// `torch.version.cuda`.
    #[serde(default)]
    pub cuda: Option<String>,
    /// `torch.version.hip`.
    #[serde(default)]
    pub hip: Option<String>,
    /// GPU driver version.
    #[serde(default)]
    pub driver: Option<String>,
    /// GPU name.
    #[serde(default)]
    pub gpu_name: Option<String>,
    /// GPUs visible.
    #[serde(default)]
    pub gpu_count: Option<u32>,
    /// GPU used.
    #[serde(default)]
    pub device_index: Option<u32>,
    /// NCCL version (TP > 1).
    #[serde(default)]
    pub nccl: Option<String>,
    /// Variables that load or configure profiling and interception layers.
    #[serde(default)]
    pub layer_env: BTreeMap<String, String>,
    /// Shared objects mapped before any profiler ran.
    #[serde(default)]
    pub mapped_libraries: Vec<String>,
    /// Shared objects the profiler session mapped in addition.
    #[serde(default)]
    pub mapped_libraries_after_profiler: Vec<String>,
}

/// What `check` measured besides the trace, for one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadContext {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// launchguard's version that ran the workload.
    pub launchguard_version: String,
    /// The workload that ran.
    pub workload: Workload,
    /// Ranks in the run (the tensor-parallel degree).
    pub tp: u32,
    /// This trace's rank.
    pub rank: u32,
    /// µs busy-waited before each replay (0 in real use).
    pub inject_delay_us: f64,
    /// The delay was busy-waited before every this-many-th launch of each phase (1: every one).
    #[serde(default = "every_launch", skip_serializing_if = "is_every_launch")]
    pub inject_every: u32,
    /// Why the workload ran a second time, when the first run's trace was damaged: this trace is
    /// the second run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<String>,
    /// The ranks that busy-waited (absent: every rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_delay_ranks: Option<Vec<u32>>,
    /// Host samples per phase: `before` (no profiler yet), `profiled`, `after`.
    pub phases: BTreeMap<String, PhaseReport>,
    /// Software, hardware and loaded layers of the process.
    #[serde(default)]
    pub inventory: Option<Inventory>,
    /// `launchguard.linkage/1` of the PyTorch that ran, when it was inspected.
    #[serde(default)]
    pub linkage: Option<serde_json::Value>,
    /// Why the linkage was not inspected, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linkage_problem: Option<String>,
    /// Wall seconds of each workload phase.
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
}

/// The default of `inject_every`: the delay before every launch.
pub fn every_launch() -> u32 {
    1
}

/// Whether `every` is the default, every launch (left out of documents).
pub fn is_every_launch(every: &u32) -> bool {
    *every == 1
}

impl WorkloadContext {
    /// GPU µs per replay measured with device events before the profiler session.
    pub fn gpu_us_per_replay(&self) -> Option<f64> {
        self.phases.get("before").and_then(|p| p.gpu_us_per_replay)
    }

    /// Reads the `args` text of a context event, or says why it is not one.
    pub fn from_event_args(text: &str) -> Result<Self, ContextError> {
        let ctx: Self = serde_json::from_str(text).map_err(ContextError::Unreadable)?;
        if ctx.schema != SCHEMA {
            return Err(ContextError::Schema(ctx.schema));
        }
        Ok(ctx)
    }

    /// The metadata event that carries this context, one line of JSON.
    pub fn to_event(&self) -> serde_json::Result<String> {
        Ok(format!(
            r#"{{"ph":"M","name":"{EVENT_NAME}","pid":{PID},"tid":0,"ts":0,"args":{}}}"#,
            serde_json::to_string(self)?
        ))
    }
}

/// Why a trace's launchguard context event cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// Not the JSON of a context.
    #[error("unreadable launchguard context: {0}")]
    Unreadable(serde_json::Error),
    /// A context of another schema.
    #[error("launchguard context of schema '{0}', expected {SCHEMA}")]
    Schema(String),
}

/// Process id of the events launchguard adds to a trace. Linux pids stay below 2^22, so no process
/// of the trace has it. A number: Perfetto drops events whose pid is not an integer.
pub const PID: u64 = 1 << 22;
