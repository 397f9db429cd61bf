//! Every command's settings, merged in one place: defaults, then the TOML file, then flags (each
//! section's flags come from its declaration in `launchguard_judge::config`). What the user set is
//! remembered in the settings, so the judge never adapts a limit the user chose. Settings that
//! cannot mean what they say are refused here, before anything runs.

use std::path::Path;

use launchguard_judge::config::CheckKey;
use launchguard_judge::Settings;

use crate::cli::{CheckLimitArgs, CompareLimitArgs, InputLimitArgs, ThresholdArgs};

/// The file (if any) with the threshold flags over it.
pub fn thresholds(args: &ThresholdArgs) -> anyhow::Result<Settings> {
    let mut s = file(args.config.as_deref())?;
    s.apply(&args.flags);
    validate(&s)?;
    Ok(s)
}

/// `check`'s and `selftest`'s settings: the thresholds, then `check`'s flags.
pub fn check(thresholds_args: &ThresholdArgs, flags: &CheckLimitArgs) -> anyhow::Result<Settings> {
    let mut s = file(thresholds_args.config.as_deref())?;
    s.apply(&thresholds_args.flags);
    s.apply(flags);
    if !s.is_set(CheckKey::Python) {
        // `python -m launchguard` names the interpreter it runs in (a default, not the user's
        // choice: a missing one is still a skip).
        if let Some(p) = std::env::var("LAUNCHGUARD_PYTHON").ok().filter(|p| !p.is_empty()) {
            s.config.check.python = p;
        }
    }
    validate(&s)?;
    Ok(s)
}

/// The caps of the trace reader: each flag, else its key in the file's `[input]` section, else
/// the reader's default.
pub fn input(settings: &Settings, args: &InputLimitArgs) -> anyhow::Result<launchguard_trace::Limits> {
    let mut s = settings.clone();
    s.apply(args);
    validate(&s)?;
    s.config.input.limits().map_err(anyhow::Error::msg)
}

/// `compare`'s settings: the file's `[compare]` limits, then the limit flags.
pub fn compare(config: Option<&Path>, flags: &CompareLimitArgs) -> anyhow::Result<Settings> {
    let mut s = file(config)?;
    s.apply(flags);
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

fn validate(s: &Settings) -> anyhow::Result<()> {
    s.validate().map_err(anyhow::Error::msg)
}
