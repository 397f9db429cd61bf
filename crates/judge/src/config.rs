//! Limits and settings: defaults, then a TOML file, then command-line flags, in that order.
//!
//! Defaults are the ATOM guard's (ROCm/ATOM PR #432) where it has one; `check` adds its own.
//! What the user set explicitly is remembered ([`Settings::explicit`]): the judge adapts a
//! default to the trace's context, never a limit the user chose.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Everything a run can be configured with. Unknown keys in a file are an error, so that a typo
/// does not silently leave a default in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Limits of the trace checks.
    pub thresholds: Thresholds,
    /// Linkage policy.
    pub linkage: LinkagePolicy,
    /// The `check` command's workload and limits.
    pub check: CheckConfig,
    /// Baseline comparison limits.
    pub compare: CompareConfig,
    /// Caps on what reading one trace may cost.
    pub input: InputConfig,
}

/// Which statistic of graph-launch durations the launch check judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LaunchStatistic {
    /// The mean for one rank, the median for multi-rank traces (one launch that waits for a peer
    /// must not decide).
    #[default]
    Auto,
    /// The mean, as the ATOM guard.
    Mean,
    /// The median.
    Median,
}

/// Limits of the trace checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Occupancy below this fails (ATOM: 0.80).
    pub occupancy_fail: f64,
    /// Occupancy below this warns (ATOM: 0.90).
    pub occupancy_warn: f64,
    /// A gap longer than this, in µs, counts (ATOM: 100).
    pub gap_us: f64,
    /// More gaps than this fail (ATOM: 5).
    pub max_gaps: u64,
    /// A graph-launch duration statistic at or above this, in µs, fails (ATOM: 150).
    pub launch_fail_us: f64,
    /// Which statistic the launch check uses.
    pub launch_statistic: LaunchStatistic,
    /// The GPU idle before a replay (median over the replays after the first) at or above this,
    /// in µs, fails — unless [`Thresholds::replay_idle_fail_fraction`] of the GPU time per replay
    /// is more. Healthy replays on an H200 wait 4–5 µs for the next launch.
    pub replay_idle_fail_us: f64,
    /// ... or at or above this fraction of the GPU time per replay, when that is more.
    pub replay_idle_fail_fraction: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            occupancy_fail: 0.80,
            occupancy_warn: 0.90,
            gap_us: 100.0,
            max_gaps: 5,
            launch_fail_us: 150.0,
            launch_statistic: LaunchStatistic::Auto,
            replay_idle_fail_us: 20.0,
            replay_idle_fail_fraction: 0.10,
        }
    }
}

/// Which profiler backends fail the guard when linked. Empty by default: linkage explains,
/// measurement decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct LinkagePolicy {
    /// Backends (`roctracer`, `rocprofiler-sdk`, `cupti`) whose presence fails.
    pub forbid: Vec<String>,
}

/// The `check` command's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckConfig {
    /// Workload preset: `reference`, `tiny`, `qwen3-0.6b`.
    pub preset: String,
    /// Python interpreter that has torch.
    pub python: String,
    /// Seconds before a workload is killed.
    pub timeout_s: u64,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Host cost per replay at or above this fraction of the GPU time per replay fails: in serving
    /// the GPU would starve.
    pub headroom_fraction: f64,
    /// Host cost per replay at or above this, in µs, fails whatever the GPU time.
    pub headroom_abs_us: f64,
    /// Host cost after the profiler session over before it, at or above this ratio, warns.
    pub residual_warn_ratio: f64,
}

impl Default for CheckConfig {
    fn default() -> Self {
        Self {
            preset: "reference".into(),
            python: "python3".into(),
            timeout_s: 300,
            tp: 1,
            headroom_fraction: 0.5,
            headroom_abs_us: 150.0,
            residual_warn_ratio: 3.0,
        }
    }
}

/// Limits of a baseline comparison (`compare`, `check --baseline`).
///
/// A metric measured per replay fails only when the shift is both significant (Mann–Whitney U,
/// p < `alpha`) and large: the bound of its bootstrap interval nearest to zero must clear a floor,
/// the larger of an absolute floor and `min_relative_shift` × the baseline median. Per-replay
/// samples are autocorrelated and each process has its own offset (healthy host p50 2.6 and 4.7 µs
/// in two processes on one H200), so significance alone would alarm on noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompareConfig {
    /// Significance level of the test on raw samples.
    pub alpha: f64,
    /// A shift of the median host cost per replay smaller than this, in µs, never fails. Healthy
    /// processes differ by up to ~3 µs (p50 2.7–5.5 µs before the profiler session on an H200).
    pub min_host_shift_us: f64,
    /// ... nor one smaller than this fraction of the baseline median. Below a 5 µs baseline the
    /// absolute floor decides; above it, noise grows with the cost: ten healthy processes on an
    /// H200 gave 13.8–24.0 µs after the profiler session (+74%; tests/data/h200-check), so a cost
    /// must double to count.
    pub min_relative_shift: f64,
    /// A shift of the median graph-launch duration (profiled replays) smaller than this, in µs,
    /// never fails (nor one under `min_relative_shift` of the baseline). Healthy p50 36–56 µs.
    pub min_launch_shift_us: f64,
    /// GPU time per replay up by more than this fraction fails. Healthy processes differ by up to
    /// 14.7%: each process picks its own GEMM kernels (qwen3-0.6b on one H200: 2124.5 vs
    /// 2437.9 µs, tests/data/labeled set A; the reference graph 244 vs 260 µs).
    pub max_gpu_increase: f64,
    /// Occupancy of the profiled steady state (one figure per run) down by more than this fails.
    /// Healthy processes sit 11.4 points apart with two kernel choices (qwen3-0.6b on one H200:
    /// 95.6% vs 84.2%, set A; the reference graph 89.9% vs 95.8%); a delay that starves the GPU
    /// takes 15–35 points, and the idle time before replays sees it first. For a graph of less than
    /// 100 µs of GPU time per replay a drop past it only warns: healthy `tiny` processes (35 µs)
    /// lay 39–84% apart on H200s, their profiled occupancy measuring the profiler.
    pub max_occupancy_drop: f64,
    /// In a comparison of traces, the GPU idle before each replay up by less than this, in µs,
    /// never fails (nor by less than `min_relative_shift` of the baseline). Healthy replays wait
    /// 3.9–5.2 µs on an H200.
    pub min_idle_shift_us: f64,
    /// In a comparison of traces, more idle gaps over the gap threshold in the steady state than
    /// the baseline's plus this fail (ATOM's count of 5).
    pub max_gaps_increase: f64,
    /// Confidence level of the bootstrap intervals.
    pub confidence: f64,
    /// Bootstrap resamples per metric.
    pub resamples: u32,
    /// Seed of the bootstrap: the same inputs always give the same interval.
    pub seed: u64,
}

impl Default for CompareConfig {
    fn default() -> Self {
        Self {
            alpha: 0.001,
            min_host_shift_us: 5.0,
            min_relative_shift: 1.0,
            min_launch_shift_us: 20.0,
            max_gpu_increase: 0.20,
            max_occupancy_drop: 0.15,
            min_idle_shift_us: 10.0,
            max_gaps_increase: 5.0,
            confidence: 0.95,
            resamples: 2000,
            seed: 20261129,
        }
    }
}

/// Caps on what reading one trace may cost (the `[input]` section): a key left out keeps the
/// reader's default (`launchguard_trace::Limits::DEFAULT`, where each default is explained); a
/// flag overrides the key. Byte sizes are in MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct InputConfig {
    /// JSON text read from a stream (gzip, standard input), MiB (`--max-inflated-mib`).
    pub max_inflated_mib: Option<u64>,
    /// One event held whole while streaming, MiB (`--max-event-mib`).
    pub max_event_mib: Option<u64>,
    /// Events (`--max-events`).
    pub max_events: Option<u64>,
    /// Devices with GPU activity (`--max-devices`).
    pub max_devices: Option<u64>,
    /// Streams with GPU activity, (device, stream) pairs (`--max-streams`).
    pub max_streams: Option<u64>,
    /// Distinct names and labels (`--max-names`).
    pub max_names: Option<u64>,
    /// The `args` of launchguard's context event, MiB (`--max-context-mib`).
    pub max_context_mib: Option<u64>,
}

/// A configuration file is a few KB; one larger than this is not one (`/dev/zero`, a trace
/// given by mistake) and is refused before it is read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Why a configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Unreadable file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Invalid TOML or unknown key.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// One line from the TOML parser.
        message: String,
    },
}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        Settings::from_file(path).map(|s| s.config)
    }

    /// Parses TOML text over the defaults.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.message().replace('\n', " "))
    }
}

/// The configuration in force and which of its keys the user set (`section.key`, from the file
/// or a flag). Everything is merged here once; every command reads its settings from one value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// Defaults, then the file, then flags.
    pub config: Config,
    /// Keys set by the user, as `thresholds.occupancy_fail`.
    pub explicit: BTreeSet<String>,
}

impl Settings {
    /// Reads a TOML file over the defaults, remembering the keys it sets. The file may be a
    /// stranger's: only a regular file of at most [`MAX_CONFIG_BYTES`] is read (a FIFO would
    /// block, a device read without end).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let name = path.display().to_string();
        // Every failure is worded in one message: `ConfigError::Io` would also hand its
        // `io::Error` on as its source, and the CLI, printing the chain, would say it twice.
        let unread = |message: String| ConfigError::Parse { path: name.clone(), message };
        let bytes = launchguard_files::read_capped(path, MAX_CONFIG_BYTES).map_err(|e| match e {
            launchguard_files::InputError::TooLarge { .. } => unread(format!("{e} for a configuration file")),
            e => unread(e.to_string()),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| unread(format!("not UTF-8 text ({e})")))?;
        Self::from_toml(&text).map_err(unread)
    }

    /// Parses TOML text over the defaults, remembering the keys it sets.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let config = Config::from_toml(text)?;
        let table: toml::Table = toml::from_str(text).map_err(|e| e.message().replace('\n', " "))?;
        let explicit = table
            .iter()
            .flat_map(|(section, v)| {
                v.as_table().into_iter().flat_map(move |t| t.keys().map(move |k| format!("{section}.{k}")))
            })
            .collect();
        Ok(Self { config, explicit })
    }

    /// Whether the user set `key` (`section.key`).
    pub fn is_explicit(&self, key: &str) -> bool {
        self.explicit.contains(key)
    }

    /// Records that a flag set `key`.
    pub fn set_by_flag(&mut self, key: &str) {
        self.explicit.insert(key.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_overrides_defaults_and_rejects_typos() {
        let c =
            Config::from_toml("[thresholds]\noccupancy_fail = 0.7\n[linkage]\nforbid = [\"roctracer\"]\n")
                .unwrap();
        assert_eq!(c.thresholds.occupancy_fail, 0.7);
        assert_eq!(c.thresholds.occupancy_warn, 0.90);
        assert_eq!(c.linkage.forbid, vec!["roctracer"]);
        assert!(Config::from_toml("[thresholds]\noccupancy_fial = 0.7\n")
            .unwrap_err()
            .contains("unknown field"));
    }

    #[test]
    fn settings_remember_the_keys_a_file_sets() {
        let s =
            Settings::from_toml("[thresholds]\noccupancy_fail = 0.7\n[check]\npreset = \"tiny\"\n").unwrap();
        assert!(s.is_explicit("thresholds.occupancy_fail") && s.is_explicit("check.preset"));
        assert!(!s.is_explicit("thresholds.occupancy_warn"));
        assert_eq!(s.config.thresholds.occupancy_warn, 0.90);
    }
}
