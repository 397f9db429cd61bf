//! Merging configuration: defaults, then the TOML file, then flags.

use launchguard_analysis::config::LaunchStatistic;
use launchguard_analysis::Config;

use crate::cli::{LaunchStatisticArg, ThresholdArgs};

/// Loads the config file (if any) and applies the flags over it.
pub fn load(args: &ThresholdArgs) -> anyhow::Result<Config> {
    let mut config = match &args.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    let t = &mut config.thresholds;
    if let Some(v) = args.occupancy_fail {
        t.occupancy_fail = v;
    }
    if let Some(v) = args.occupancy_warn {
        t.occupancy_warn = v;
    }
    if let Some(v) = args.gap_us {
        t.gap_us = v;
    }
    if let Some(v) = args.max_gaps {
        t.max_gaps = v;
    }
    if let Some(v) = args.launch_fail_us {
        t.launch_fail_us = v;
    }
    if let Some(v) = args.launch_statistic {
        t.launch_statistic = match v {
            LaunchStatisticArg::Auto => LaunchStatistic::Auto,
            LaunchStatisticArg::Mean => LaunchStatistic::Mean,
            LaunchStatisticArg::Median => LaunchStatistic::Median,
        };
    }
    validate(&config)?;
    Ok(config)
}

fn validate(c: &Config) -> anyhow::Result<()> {
    let t = &c.thresholds;
    let fraction = |name: &str, v: f64| {
        anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1, got {v}");
        Ok(())
    };
    fraction("occupancy_fail", t.occupancy_fail)?;
    fraction("occupancy_warn", t.occupancy_warn)?;
    anyhow::ensure!(
        t.gap_us.is_finite() && t.gap_us >= 0.0,
        "gap_us must be a non-negative number, got {}",
        t.gap_us
    );
    anyhow::ensure!(
        t.launch_fail_us.is_finite() && t.launch_fail_us > 0.0,
        "launch_fail_us must be a positive number, got {}",
        t.launch_fail_us
    );
    Ok(())
}
