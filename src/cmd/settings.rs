//! Every command's settings, merged in one place: defaults, then the TOML file, then flags. What
//! the user set is remembered ([`Settings::explicit`]), so the judge never adapts a limit the user
//! chose. Inconsistent settings are refused here, before anything runs.

use std::path::Path;

use launchguard_judge::config::LaunchStatistic;
use launchguard_judge::Settings;

use crate::cli::{
    CheckLimitArgs, CompareLimitArgs, InputLimitArgs, LaunchStatisticArg, ThresholdArgs, WorkloadArgs,
};

/// The file (if any) with the threshold flags over it.
pub fn thresholds(args: &ThresholdArgs) -> anyhow::Result<Settings> {
    let mut s = file(args.config.as_deref())?;
    let set = |key: &str, s: &mut Settings| s.set_by_flag(&format!("thresholds.{key}"));
    let t = &mut s.config.thresholds;
    let mut flagged = Vec::new();
    if let Some(v) = args.occupancy_fail {
        t.occupancy_fail = v;
        flagged.push("occupancy_fail");
    }
    if let Some(v) = args.occupancy_warn {
        t.occupancy_warn = v;
        flagged.push("occupancy_warn");
    }
    if let Some(v) = args.gap_us {
        t.gap_us = v;
        flagged.push("gap_us");
    }
    if let Some(v) = args.max_gaps {
        t.max_gaps = v;
        flagged.push("max_gaps");
    }
    if let Some(v) = args.launch_fail_us {
        t.launch_fail_us = v;
        flagged.push("launch_fail_us");
    }
    if let Some(v) = args.launch_statistic {
        t.launch_statistic = match v {
            LaunchStatisticArg::Auto => LaunchStatistic::Auto,
            LaunchStatisticArg::Mean => LaunchStatistic::Mean,
            LaunchStatisticArg::Median => LaunchStatistic::Median,
        };
        flagged.push("launch_statistic");
    }
    if let Some(v) = args.replay_idle_fail_us {
        t.replay_idle_fail_us = v;
        flagged.push("replay_idle_fail_us");
    }
    if let Some(v) = args.replay_idle_fail_fraction {
        t.replay_idle_fail_fraction = v;
        flagged.push("replay_idle_fail_fraction");
    }
    for key in flagged {
        set(key, &mut s);
    }
    validate(&s)?;
    Ok(s)
}

/// `check`'s and `selftest`'s settings: the thresholds, then the workload and limit flags.
pub fn check(
    workload: &WorkloadArgs,
    thresholds_args: &ThresholdArgs,
    limits: &CheckLimitArgs,
) -> anyhow::Result<Settings> {
    let mut s = thresholds(thresholds_args)?;
    let c = &mut s.config.check;
    let mut flagged = Vec::new();
    if let Some(p) = &workload.python {
        c.python = p.clone();
        flagged.push("python");
    } else if let Some(p) = std::env::var("LAUNCHGUARD_PYTHON").ok().filter(|p| !p.is_empty()) {
        // `python -m launchguard` names the interpreter it runs in (a default, not the user's
        // choice: a missing one is still a skip).
        if !s.explicit.contains("check.python") {
            c.python = p;
        }
    }
    if let Some(t) = workload.tp {
        c.tp = t;
        flagged.push("tp");
    }
    if let Some(t) = workload.timeout {
        c.timeout_s = t;
        flagged.push("timeout_s");
    }
    if let Some(p) = &workload.preset {
        c.preset = p.clone();
        flagged.push("preset");
    }
    if let Some(v) = limits.headroom_fraction {
        c.headroom_fraction = v;
        flagged.push("headroom_fraction");
    }
    if let Some(v) = limits.headroom_abs_us {
        c.headroom_abs_us = v;
        flagged.push("headroom_abs_us");
    }
    if let Some(v) = limits.residual_warn_ratio {
        c.residual_warn_ratio = v;
        flagged.push("residual_warn_ratio");
    }
    for key in flagged {
        s.set_by_flag(&format!("check.{key}"));
    }
    validate(&s)?;
    Ok(s)
}

/// The caps of the trace reader: each flag, else its key in the file's `[input]` section, else
/// the reader's default. Sizes are given in MiB.
pub fn input(settings: &Settings, args: &InputLimitArgs) -> anyhow::Result<launchguard_trace::Limits> {
    let d = launchguard_trace::Limits::DEFAULT;
    let f = &settings.config.input;
    // The flag, the key, or the default; at least 1 (a cap of 0 reads nothing).
    let pick = |flag: Option<u64>, key: Option<u64>, name: &str, default: u64| -> anyhow::Result<u64> {
        let v = flag.or(key).unwrap_or(default);
        anyhow::ensure!(v >= 1, "--{} (input.{name}) must be at least 1", name.replace('_', "-"));
        Ok(v)
    };
    let mib = |flag: Option<u64>, key: Option<u64>, name: &str, default_bytes: u64| -> anyhow::Result<u64> {
        let v = pick(flag, key, name, default_bytes >> 20)?;
        v.checked_mul(1 << 20)
            .ok_or_else(|| anyhow::anyhow!("--{} (input.{name}) is too large", name.replace('_', "-")))
    };
    let max_names = pick(args.max_names, f.max_names, "max_names", d.max_names)?;
    anyhow::ensure!(
        max_names <= launchguard_trace::Limits::MOST_NAMES,
        "--max-names (input.max_names) can be at most {}",
        launchguard_trace::Limits::MOST_NAMES
    );
    Ok(launchguard_trace::Limits {
        max_inflated_bytes: mib(
            args.max_inflated_mib,
            f.max_inflated_mib,
            "max_inflated_mib",
            d.max_inflated_bytes,
        )?,
        max_event_bytes: mib(args.max_event_mib, f.max_event_mib, "max_event_mib", d.max_event_bytes)?,
        max_events: pick(args.max_events, f.max_events, "max_events", d.max_events)?,
        max_devices: pick(args.max_devices, f.max_devices, "max_devices", d.max_devices)?,
        max_streams: pick(args.max_streams, f.max_streams, "max_streams", d.max_streams)?,
        max_names,
        max_context_bytes: mib(
            args.max_context_mib,
            f.max_context_mib,
            "max_context_mib",
            d.max_context_bytes,
        )?,
    })
}

/// `compare`'s settings: the file's `[compare]` limits, then the limit flags.
pub fn compare(config: Option<&Path>, flags: &CompareLimitArgs) -> anyhow::Result<Settings> {
    let mut s = file(config)?;
    let c = &mut s.config.compare;
    let mut flagged = Vec::new();
    let mut set = |key: &'static str, flag: Option<f64>, field: &mut f64| {
        if let Some(v) = flag {
            *field = v;
            flagged.push(key);
        }
    };
    set("alpha", flags.alpha, &mut c.alpha);
    set("min_host_shift_us", flags.min_host_shift_us, &mut c.min_host_shift_us);
    set("min_relative_shift", flags.min_relative_shift, &mut c.min_relative_shift);
    set("min_launch_shift_us", flags.min_launch_shift_us, &mut c.min_launch_shift_us);
    set("max_gpu_increase", flags.max_gpu_increase, &mut c.max_gpu_increase);
    set("max_occupancy_drop", flags.max_occupancy_drop, &mut c.max_occupancy_drop);
    set("min_idle_shift_us", flags.min_idle_shift_us, &mut c.min_idle_shift_us);
    set("max_gaps_increase", flags.max_gaps_increase, &mut c.max_gaps_increase);
    for key in flagged {
        s.set_by_flag(&format!("compare.{key}"));
    }
    validate(&s)?;
    Ok(s)
}

/// The configuration file over the defaults, or the defaults.
fn file(path: Option<&Path>) -> anyhow::Result<Settings> {
    Ok(match path {
        Some(path) => Settings::from_file(path)?,
        None => Settings::default(),
    })
}

/// Refuses settings that cannot mean what they say, naming the key.
fn validate(s: &Settings) -> anyhow::Result<()> {
    let t = &s.config.thresholds;
    let fraction = |name: &str, v: f64| {
        anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1, got {v}");
        Ok(())
    };
    fraction("occupancy_fail", t.occupancy_fail)?;
    fraction("occupancy_warn", t.occupancy_warn)?;
    fraction("replay_idle_fail_fraction", t.replay_idle_fail_fraction)?;
    anyhow::ensure!(
        t.occupancy_warn >= t.occupancy_fail,
        "occupancy_warn ({}) must not be below occupancy_fail ({}): a value between them would fail without a warning first",
        t.occupancy_warn,
        t.occupancy_fail
    );
    for (name, v) in [("gap_us", t.gap_us), ("replay_idle_fail_us", t.replay_idle_fail_us)] {
        anyhow::ensure!(v.is_finite() && v >= 0.0, "{name} must be a non-negative number, got {v}");
    }
    anyhow::ensure!(
        t.launch_fail_us.is_finite() && t.launch_fail_us > 0.0,
        "launch_fail_us must be a positive number, got {}",
        t.launch_fail_us
    );
    let c = &s.config.check;
    anyhow::ensure!(c.tp >= 1, "--tp must be at least 1");
    anyhow::ensure!(c.timeout_s >= 1, "--timeout must be at least 1 s");
    for (name, v, lo) in [
        ("headroom_fraction", c.headroom_fraction, 0.0),
        ("headroom_abs_us", c.headroom_abs_us, 0.0),
        ("residual_warn_ratio", c.residual_warn_ratio, 1.0),
    ] {
        anyhow::ensure!(v.is_finite() && v > lo, "check.{name} must be a number above {lo}, got {v}");
    }
    launchguard_judge::compare::validate_config(&s.config.compare).map_err(anyhow::Error::msg)?;
    launchguard_linkage::validate_forbid(&s.config.linkage.forbid)?;
    Ok(())
}
