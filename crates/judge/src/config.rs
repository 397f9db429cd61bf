//! Limits and settings: defaults, then a TOML file, then command-line flags, in that order.
//!
//! Each key is declared once, in its section below (`section!` in `section.rs`): its doc, type,
//! default, flag and rule. The TOML reader, clap (the flags, their help and defaults), the
//! validation and the judge all read that one declaration. What the user set is a [`Key`] in
//! [`Settings`]. A limit means the same stated or not: the judge adapts it to the trace's context
//! unless `thresholds.adapt` is false.

use std::collections::BTreeSet;
use std::path::Path;

use launchguard_trace::Limits;
use serde::{Deserialize, Serialize};

pub use crate::section::SettingsError;
use crate::section::{section, Rule, Section};

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
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
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

impl crate::section::Ruled for LaunchStatistic {
    fn broken(&self, _: Rule) -> Option<String> {
        None
    }
}

impl std::fmt::Display for LaunchStatistic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LaunchStatistic::Auto => "auto",
            LaunchStatistic::Mean => "mean",
            LaunchStatistic::Median => "median",
        })
    }
}

section! {
    /// Limits of the trace checks (`[thresholds]`). The defaults are the ATOM guard's (ROCm/ATOM
    /// PR #432) where it has one.
    pub struct Thresholds, keys ThresholdKey, in "thresholds" {
        /// Occupancy below this fails (ATOM: 0.80).
        OccupancyFail occupancy_fail: f64 = 0.80, flag "occupancy-fail" "FRACTION", Rule::Fraction;
        /// Occupancy below this warns (ATOM: 0.90).
        OccupancyWarn occupancy_warn: f64 = 0.90, flag "occupancy-warn" "FRACTION", Rule::Fraction;
        /// Idle gaps longer than this, in µs, count (ATOM: 100).
        GapUs gap_us: f64 = 100.0, flag "gap-us" "US", Rule::NonNegative;
        /// More gaps over the gap threshold than this fail (ATOM: 5).
        MaxGaps max_gaps: u64 = 5, flag "max-gaps" "N", Rule::Any;
        /// A graph-launch duration statistic at or above this, in µs, fails (ATOM: 150).
        LaunchFailUs launch_fail_us: f64 = 150.0, flag "launch-fail-us" "US", Rule::Above(0.0);
        /// The statistic of graph-launch durations the launch check judges: auto (the mean for one
        /// rank, the median for several, where one launch that waits for a peer must not decide),
        /// mean (as ATOM), median.
        LaunchStatistic launch_statistic: LaunchStatistic = LaunchStatistic::Auto, flag "launch-statistic" "STAT", Rule::Any;
        /// The GPU idle before each replay (median over the replays after the first) at or above
        /// this, in µs, fails, unless the fraction below of the GPU time per replay is more.
        ///
        /// Healthy replays on an H200 wait 4–5 µs for the next launch.
        ReplayIdleFailUs replay_idle_fail_us: f64 = 20.0, flag "replay-idle-fail-us" "US", Rule::NonNegative;
        /// ... or at or above this fraction of the GPU time per replay, when that is more.
        ReplayIdleFailFraction replay_idle_fail_fraction: f64 = 0.10, flag "replay-idle-fail-fraction" "FRACTION", Rule::Fraction;
        /// Adapt the limits above to what a trace holds (kernels and GPU time per replay, ranks,
        /// replays; traces without graph replays skipped), each adaptation stated in the report.
        ///
        /// Each limit above is ATOM's context's (one rank, a 44-kernel graph of ~255 µs, 100
        /// replays): stating it, even at its default, keeps the adaptation. false judges every
        /// trace, graph replays or not, on the limits exactly as stated.
        Adapt adapt: bool = true, flag "adapt-limits" "BOOL", Rule::Any;
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

section! {
    /// The `check` command's settings (`[check]`).
    pub struct CheckConfig, keys CheckKey, in "check" {
        /// Workload preset: reference (the ATOM test's), tiny (launch-bound), qwen3-0.6b (28 layers).
        Preset preset: String = "reference".into(), flag "preset" "NAME", Rule::Any;
        /// Python interpreter with torch.
        Python python: String = "python3".into(), flag "python" "PATH", Rule::Any;
        /// Seconds before the workload is killed.
        TimeoutS timeout_s: u64 = 300, flag "timeout" "SECONDS", Rule::AtLeast(1);
        /// Tensor-parallel degree: N processes under torch.distributed (NCCL).
        Tp tp: u32 = 1, flag "tp" "N", Rule::AtLeast(1);
        /// Host cost per replay at or above this fraction of the GPU time per replay fails: in
        /// serving the GPU would starve.
        HeadroomFraction headroom_fraction: f64 = 0.5, flag "headroom-fraction" "FRACTION", Rule::Above(0.0);
        /// Host cost per replay at or above this, in µs, fails whatever the GPU time.
        HeadroomAbsUs headroom_abs_us: f64 = 150.0, flag "headroom-abs-us" "US", Rule::Above(0.0);
        /// Host cost after the profiler session over before it, at or above this ratio, warns.
        ResidualWarnRatio residual_warn_ratio: f64 = 3.0, flag "residual-warn-ratio" "RATIO", Rule::Above(1.0);
        /// A step-synchronous replay (its output read back before the next launch, as a server's
        /// decode step) whose median host time exceeds the GPU time per replay by at least this
        /// fraction of it fails, unless `sync_step_fail_us` is more (docs/step-sync.md).
        ///
        /// An H200, the reference preset: healthy steps 10–11% over the GPU time, +100 µs per
        /// launch 49%.
        SyncStepFailFraction sync_step_fail_fraction: f64 = 0.35, flag "sync-step-fail-fraction" "FRACTION", Rule::NonNegative;
        /// ... or by at least this, in µs, when that is more: reading a step back costs a fixed
        /// few tens of µs, which a graph of little GPU time cannot hide.
        SyncStepFailUs sync_step_fail_us: f64 = 50.0, flag "sync-step-fail-us" "US", Rule::NonNegative;
        /// A step-synchronous replay whose 99th-percentile host time exceeds the GPU time per
        /// replay by at least this fraction of it fails, unless `sync_tail_fail_us` is more: steps
        /// that stall now and then.
        SyncTailFailFraction sync_tail_fail_fraction: f64 = 0.5, flag "sync-tail-fail-fraction" "FRACTION", Rule::NonNegative;
        /// ... or by at least this, in µs, when that is more.
        SyncTailFailUs sync_tail_fail_us: f64 = 500.0, flag "sync-tail-fail-us" "US", Rule::NonNegative;
    }
}

section! {
    /// Limits of a baseline comparison (`compare`, `check --baseline`; `[compare]`).
    ///
    /// A metric measured per replay fails only when the shift is both significant (Mann–Whitney U,
    /// p < `alpha`) and large: the bound of its bootstrap interval nearest to zero must clear a
    /// floor, the larger of an absolute floor and `min_relative_shift` × the baseline median.
    /// Per-replay samples are autocorrelated and each process has its own offset, so significance
    /// alone would alarm on noise. How each default was chosen: docs/compare.md.
    pub struct CompareConfig, keys CompareKey, in "compare" {
        /// Significance level of the test on per-replay samples.
        Alpha alpha: f64 = 0.001, flag "alpha" "P", Rule::OpenUnit;
        /// A host cost per replay up by less than this, in µs, never fails.
        ///
        /// Healthy processes differ by up to ~3 µs before the profiler session on an H200.
        MinHostShiftUs min_host_shift_us: f64 = 5.0, flag "min-host-shift-us" "US", Rule::NonNegative;
        /// ... nor one up by less than this fraction of the baseline median.
        ///
        /// Above a 5 µs baseline noise grows with the cost (healthy processes: 13.8–24.0 µs after the
        /// profiler session on an H200), so a cost must double to count.
        MinRelativeShift min_relative_shift: f64 = 1.0, flag "min-relative-shift" "FRACTION", Rule::NonNegative;
        /// A graph-launch duration (profiled replays) up by less than this, in µs, never fails (nor
        /// one under `min_relative_shift` of the baseline).
        ///
        /// Healthy medians lie 36–56 µs apart.
        MinLaunchShiftUs min_launch_shift_us: f64 = 20.0, flag "min-launch-shift-us" "US", Rule::NonNegative;
        /// GPU time per replay up by more than this fraction fails.
        ///
        /// Healthy processes differ by up to 14.7%: each process picks its own GEMM kernels.
        MaxGpuIncrease max_gpu_increase: f64 = 0.20, flag "max-gpu-increase" "FRACTION", Rule::NonNegative;
        /// Occupancy of the profiled steady state down by more than this (0.15 = 15 points) fails.
        ///
        /// Healthy processes sit up to 11.4 points apart with two kernel choices; a delay that starves
        /// the GPU takes 15–35 points. For a graph of less than 100 µs of GPU time per replay a drop
        /// only warns: its profiled occupancy measures the profiler.
        MaxOccupancyDrop max_occupancy_drop: f64 = 0.15, flag "max-occupancy-drop" "FRACTION", Rule::NonNegative;
        /// In a comparison of traces, the GPU idle before each replay up by less than this, in µs,
        /// never fails (nor by less than `min_relative_shift` of the baseline).
        ///
        /// Healthy replays wait 3.9–5.2 µs on an H200.
        MinIdleShiftUs min_idle_shift_us: f64 = 10.0, flag "min-idle-shift-us" "US", Rule::NonNegative;
        /// In a comparison of traces, more idle gaps over the gap threshold in the steady state than
        /// the baseline's plus this fail (ATOM's count of 5).
        MaxGapsIncrease max_gaps_increase: f64 = 5.0, flag "max-gaps-increase" "N", Rule::NonNegative;
        /// Confidence level of the bootstrap intervals.
        Confidence confidence: f64 = 0.95, flag none "", Rule::OpenUnit;
        /// Bootstrap resamples per metric.
        Resamples resamples: u32 = 2000, flag none "", Rule::Within(crate::compare::MIN_RESAMPLES as u64, crate::compare::MAX_RESAMPLES as u64);
        /// Seed of the bootstrap: the same inputs always give the same interval.
        Seed seed: u64 = 20261129, flag none "", Rule::Any;
    }
}

section! {
    /// Caps on what reading one trace may cost (`[input]`); each default is explained at
    /// `launchguard_trace::Limits::DEFAULT`. Past one, reading ends in an error that names it.
    pub struct InputConfig, keys InputKey, in "input" {
        /// Most JSON text read from a gzip file or standard input, in MiB.
        MaxInflatedMib max_inflated_mib: u64 = Limits::DEFAULT.max_inflated_bytes >> 20, flag "max-inflated-mib" "MIB", Rule::AtLeast(1);
        /// Largest single event held while streaming gzip or standard input, in MiB.
        MaxEventMib max_event_mib: u64 = Limits::DEFAULT.max_event_bytes >> 20, flag "max-event-mib" "MIB", Rule::AtLeast(1);
        /// Most events.
        MaxEvents max_events: u64 = Limits::DEFAULT.max_events, flag "max-events" "N", Rule::AtLeast(1);
        /// Most devices with GPU activity.
        MaxDevices max_devices: u64 = Limits::DEFAULT.max_devices, flag "max-devices" "N", Rule::AtLeast(1);
        /// Most streams with GPU activity, over all devices.
        MaxStreams max_streams: u64 = Limits::DEFAULT.max_streams, flag "max-streams" "N", Rule::AtLeast(1);
        /// Most distinct names and labels (kernels, spans, devices, streams, threads).
        MaxNames max_names: u64 = Limits::DEFAULT.max_names, flag "max-names" "N", Rule::Within(1, Limits::MOST_NAMES);
        /// Largest launchguard context event (the args check writes), in MiB.
        MaxContextMib max_context_mib: u64 = Limits::DEFAULT.max_context_bytes >> 20, flag "max-context-mib" "MIB", Rule::AtLeast(1);
        /// Longest name or label kept, in bytes; a longer one is cut to its first bytes, and said so.
        MaxNameBytes max_name_bytes: u64 = Limits::DEFAULT.max_name_bytes, flag "max-name-bytes" "BYTES", Rule::AtLeast(16);
        /// Memory for one trace's records and analysis, in MiB (the records take half).
        MaxMemoryMib max_memory_mib: u64 = Limits::DEFAULT.max_memory_bytes >> 20, flag "max-memory-mib" "MIB", Rule::AtLeast(16);
    }
}

impl InputConfig {
    /// The reader's caps, sizes from MiB to bytes.
    pub fn limits(&self) -> Result<Limits, SettingsError> {
        let bytes = |mib: u64, key: InputKey| {
            mib.checked_mul(1 << 20).ok_or_else(|| SettingsError::Invalid {
                key: format!("input.{}", key.name()),
                why: format!("is too large (--{})", key.flag().unwrap_or_default()),
            })
        };
        Ok(Limits {
            max_inflated_bytes: bytes(self.max_inflated_mib, InputKey::MaxInflatedMib)?,
            max_event_bytes: bytes(self.max_event_mib, InputKey::MaxEventMib)?,
            max_events: self.max_events,
            max_devices: self.max_devices,
            max_streams: self.max_streams,
            max_names: self.max_names,
            max_context_bytes: bytes(self.max_context_mib, InputKey::MaxContextMib)?,
            max_name_bytes: self.max_name_bytes,
            max_memory_bytes: bytes(self.max_memory_mib, InputKey::MaxMemoryMib)?,
        })
    }
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
    pub fn from_toml(text: &str) -> Result<Self, SettingsError> {
        toml::from_str(text).map_err(|e| SettingsError::Toml(e.message().replace('\n', " ")))
    }
}

/// A key of the settings: section and name. A set of them says what the user set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// `[thresholds]`.
    Thresholds(ThresholdKey),
    /// `[check]`.
    Check(CheckKey),
    /// `[compare]`.
    Compare(CompareKey),
    /// `[input]`.
    Input(InputKey),
    /// `[linkage] forbid`.
    LinkageForbid,
}

macro_rules! key_from {
    ($($k:ident => $v:ident),*) => {$(
        impl From<$k> for Key {
            fn from(k: $k) -> Key {
                Key::$v(k)
            }
        }
    )*};
}
key_from!(ThresholdKey => Thresholds, CheckKey => Check, CompareKey => Compare, InputKey => Input);

impl Key {
    /// The key of `name` in `[section]` of the file.
    fn of(section: &str, name: &str) -> Option<Key> {
        match section {
            Thresholds::NAME => Thresholds::key(name).map(Key::from),
            CheckConfig::NAME => CheckConfig::key(name).map(Key::from),
            CompareConfig::NAME => CompareConfig::key(name).map(Key::from),
            InputConfig::NAME => InputConfig::key(name).map(Key::from),
            "linkage" if name == "forbid" => Some(Key::LinkageForbid),
            _ => None,
        }
    }
}

/// The configuration in force and which of its keys the user set (in the file or by a flag).
/// Everything is merged here once; every command reads its settings from one value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// Defaults, then the file, then flags.
    pub config: Config,
    /// Keys the user set.
    set: BTreeSet<Key>,
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
        Self::from_toml(&text).map_err(|e| unread(e.to_string()))
    }

    /// Parses TOML text over the defaults, remembering the keys it sets.
    pub fn from_toml(text: &str) -> Result<Self, SettingsError> {
        let config = Config::from_toml(text)?;
        let table: toml::Table =
            toml::from_str(text).map_err(|e| SettingsError::Toml(e.message().replace('\n', " ")))?;
        let set = table
            .iter()
            .flat_map(|(section, v)| {
                v.as_table().into_iter().flat_map(move |t| t.keys().filter_map(move |k| Key::of(section, k)))
            })
            .collect();
        Ok(Self { config, set })
    }

    /// Whether the user set `key`.
    pub fn is_set(&self, key: impl Into<Key>) -> bool {
        self.set.contains(&key.into())
    }

    /// Records that the user set `key` (a flag did).
    pub fn mark_set(&mut self, key: impl Into<Key>) {
        self.set.insert(key.into());
    }

    /// The flags given on the command line, over the file and the defaults.
    pub fn apply<S: Section>(&mut self, flags: &Flags<S>)
    where
        Key: From<S::Key>,
        Config: SectionOf<S>,
    {
        let section = self.config.section_mut();
        for &key in &flags.set {
            section.take(&flags.values, key);
        }
        for &key in &flags.set {
            self.set.insert(key.into());
        }
    }

    /// Refuses settings that cannot mean what they say, naming the key.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let c = &self.config;
        c.thresholds.check_rules()?;
        c.check.check_rules()?;
        c.compare.check_rules()?;
        c.input.check_rules()?;
        let t = &c.thresholds;
        if t.occupancy_warn < t.occupancy_fail {
            return Err(SettingsError::Invalid {
                key: "thresholds.occupancy_warn".into(),
                why: format!(
                    "({}) must not be below thresholds.occupancy_fail ({}): a value between them would fail without a warning first",
                    t.occupancy_warn, t.occupancy_fail
                ),
            });
        }
        c.input.limits()?;
        launchguard_linkage::validate_forbid(&c.linkage.forbid)
            .map_err(|e| SettingsError::Invalid { key: "linkage.forbid".into(), why: e.to_string() })
    }
}

/// The flags of one section given on the command line: their values over the defaults, and
/// which were given. Parsed by clap (feature `cli`) from the section's declaration.
#[derive(Debug, Clone)]
pub struct Flags<S: Section> {
    /// The section's defaults with the flags given applied.
    pub values: S,
    /// The keys whose flag was given.
    pub set: Vec<S::Key>,
}

impl<S: Section> Default for Flags<S> {
    fn default() -> Self {
        Flags { values: S::default(), set: Vec::new() }
    }
}

/// The section `S` of a [`Config`].
pub trait SectionOf<S> {
    /// The section, to change.
    fn section_mut(&mut self) -> &mut S;
}

macro_rules! section_of {
    ($($t:ty => $field:ident),*) => {$(
        impl SectionOf<$t> for Config {
            fn section_mut(&mut self) -> &mut $t {
                &mut self.$field
            }
        }
    )*};
}
section_of!(Thresholds => thresholds, CheckConfig => check, CompareConfig => compare, InputConfig => input);

#[cfg(feature = "cli")]
mod cli {
    use super::{Flags, Section};

    impl<S: Section> clap::FromArgMatches for Flags<S> {
        fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
            let (values, set) = S::from_matches(m);
            Ok(Flags { values, set })
        }

        fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
            *self = Self::from_arg_matches(m)?;
            Ok(())
        }
    }

    impl<S: Section> clap::Args for Flags<S> {
        fn augment_args(cmd: clap::Command) -> clap::Command {
            cmd.args(S::args())
        }

        fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
            Self::augment_args(cmd)
        }
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
            .to_string()
            .contains("unknown field"));
    }

    #[test]
    fn settings_remember_the_keys_a_file_sets() {
        let s =
            Settings::from_toml("[thresholds]\noccupancy_fail = 0.7\n[check]\npreset = \"tiny\"\n").unwrap();
        assert!(s.is_set(ThresholdKey::OccupancyFail) && s.is_set(CheckKey::Preset));
        assert!(!s.is_set(ThresholdKey::OccupancyWarn));
        assert_eq!(s.config.thresholds.occupancy_warn, 0.90);
    }
}
