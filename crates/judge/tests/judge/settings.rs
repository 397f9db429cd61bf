//! Settings (each key's rule, what the user set, flags over the file) and the verdict of a list
//! of checks.

use launchguard_judge::config::{
    CheckConfig, CheckKey, CompareKey, Config, Flags, InputConfig, InputKey, LaunchStatistic, ThresholdKey,
    Thresholds, MAX_CONFIG_BYTES,
};
use launchguard_judge::{Check, CheckId, Settings, Status, Verdict};

fn invalid(toml: &str) -> String {
    let s = Settings::from_toml(toml).unwrap();
    s.validate().unwrap_err().to_string()
}

/// Each rule at its bounds, and the error naming the key, its flag and the rule.
#[test]
fn each_rule_at_its_bounds() {
    let ok = |toml: &str| Settings::from_toml(toml).unwrap().validate().map_err(|e| e.to_string());
    assert_eq!(ok(""), Ok(()));
    // Fraction: 0 and 1 included.
    assert_eq!(ok("[thresholds]\noccupancy_fail = 0.0\noccupancy_warn = 1.0\n"), Ok(()));
    assert_eq!(
        invalid("[thresholds]\noccupancy_warn = 1.01\n"),
        "thresholds.occupancy_warn must be between 0 and 1, got 1.01 (--occupancy-warn)"
    );
    assert!(invalid("[thresholds]\noccupancy_fail = -0.01\n")
        .starts_with("thresholds.occupancy_fail must be between 0 and 1"));
    // OpenUnit: 0 and 1 excluded.
    assert_eq!(
        invalid("[compare]\nalpha = 0.0\n"),
        "compare.alpha must be between 0 and 1 (exclusive), got 0 (--alpha)"
    );
    assert!(invalid("[compare]\nalpha = 1.0\n")
        .starts_with("compare.alpha must be between 0 and 1 (exclusive), got 1"));
    assert_eq!(ok("[compare]\nalpha = 0.999\n"), Ok(()));
    assert_eq!(ok("[compare]\nalpha = 0.0001\nconfidence = 0.5\n"), Ok(()));
    // A key without a flag: no flag in the error.
    assert_eq!(
        invalid("[compare]\nconfidence = 1.5\n"),
        "compare.confidence must be between 0 and 1 (exclusive), got 1.5"
    );
    // NonNegative: 0 allowed, negative and infinite not.
    assert_eq!(ok("[thresholds]\ngap_us = 0.0\n"), Ok(()));
    assert_eq!(
        invalid("[thresholds]\ngap_us = -1.0\n"),
        "thresholds.gap_us must be a non-negative number, got -1 (--gap-us)"
    );
    assert!(invalid("[thresholds]\ngap_us = inf\n")
        .starts_with("thresholds.gap_us must be a non-negative number"));
    // Above(0): 0 refused, anything above allowed, infinity refused.
    assert_eq!(
        invalid("[thresholds]\nlaunch_fail_us = 0.0\n"),
        "thresholds.launch_fail_us must be a number above 0, got 0 (--launch-fail-us)"
    );
    assert_eq!(ok("[thresholds]\nlaunch_fail_us = 0.001\n"), Ok(()));
    assert!(invalid("[thresholds]\nlaunch_fail_us = inf\n").contains("above 0"));
    // Above(1) for a ratio.
    assert!(invalid("[check]\nresidual_warn_ratio = 1.0\n").contains("must be a number above 1, got 1"));
    assert_eq!(ok("[check]\nresidual_warn_ratio = 1.5\n"), Ok(()));
    // AtLeast on integers.
    assert_eq!(invalid("[check]\ntp = 0\n"), "check.tp must be at least 1, got 0 (--tp)");
    assert_eq!(ok("[check]\ntp = 1\n"), Ok(()));
    assert!(invalid("[input]\nmax_name_bytes = 15\n").contains("must be at least 16, got 15"));
    assert_eq!(ok("[input]\nmax_name_bytes = 16\n"), Ok(()));
    // Within on integers, bounds included.
    assert_eq!(ok("[compare]\nresamples = 100\n"), Ok(()));
    assert_eq!(ok("[compare]\nresamples = 100000\n"), Ok(()));
    assert_eq!(
        invalid("[compare]\nresamples = 99\n"),
        "compare.resamples must be between 100 and 100000, got 99"
    );
    assert!(invalid("[compare]\nresamples = 100001\n").contains("between 100 and 100000"));
    // Fraction on a key with a flag, through u64 → f64 for other rules.
    assert_eq!(ok("[thresholds]\nmax_gaps = 0\nadapt = false\n"), Ok(()));
    assert_eq!(ok("[check]\npreset = \"\"\n"), Ok(()));
    // occupancy_warn below occupancy_fail; equal is fine.
    assert!(invalid("[thresholds]\noccupancy_fail = 0.8\noccupancy_warn = 0.7\n")
        .starts_with("thresholds.occupancy_warn (0.7) must not be below thresholds.occupancy_fail (0.8)"));
    assert_eq!(ok("[thresholds]\noccupancy_fail = 0.8\noccupancy_warn = 0.8\n"), Ok(()));
    // A forbidden-library pattern that is no pattern.
    assert!(invalid("[linkage]\nforbid = [\"(\"]\n").starts_with("linkage.forbid"));
}

/// The reader's caps, MiB to bytes; a size that overflows is refused.
#[test]
fn input_caps_in_bytes() {
    let c =
        InputConfig { max_inflated_mib: 3, max_event_mib: 2, max_context_mib: 1, ..InputConfig::default() };
    let l = c.limits().unwrap();
    assert_eq!((l.max_inflated_bytes, l.max_event_bytes, l.max_context_bytes), (3 << 20, 2 << 20, 1 << 20));
    assert_eq!((l.max_events, l.max_name_bytes), (c.max_events, c.max_name_bytes));
    let huge = InputConfig { max_event_mib: u64::MAX / 1024, ..InputConfig::default() };
    assert_eq!(huge.limits().unwrap_err().to_string(), "input.max_event_mib is too large (--max-event-mib)");
    assert_eq!(MAX_CONFIG_BYTES, 1 << 20);
}

/// The keys a file sets, in every section, and only keys it names.
#[test]
fn the_keys_a_file_sets() {
    let s = Settings::from_toml(
        "[thresholds]\nmax_gaps = 7\n[check]\ntp = 2\n[compare]\nalpha = 0.01\n[input]\nmax_events = 5\n[linkage]\nforbid = [\"x\"]\n",
    )
    .unwrap();
    assert!(s.is_set(ThresholdKey::MaxGaps));
    assert!(s.is_set(CheckKey::Tp));
    assert!(s.is_set(CompareKey::Alpha));
    assert!(s.is_set(InputKey::MaxEvents));
    assert!(s.is_set(launchguard_judge::config::Key::LinkageForbid));
    assert!(!s.is_set(ThresholdKey::GapUs) && !s.is_set(CompareKey::Seed) && !s.is_set(InputKey::MaxNames));
    assert_eq!((s.config.thresholds.max_gaps, s.config.check.tp, s.config.compare.alpha), (7, 2, 0.01));
    let empty = Settings::from_toml("[linkage]\n").unwrap();
    assert!(!empty.is_set(launchguard_judge::config::Key::LinkageForbid));
    let mut marked = Settings::default();
    marked.mark_set(ThresholdKey::GapUs);
    assert!(marked.is_set(ThresholdKey::GapUs) && !marked.is_set(ThresholdKey::MaxGaps));
    assert!(Settings::from_toml("[thresholds]\nmax_gaps = \"x\"\n").is_err());
    assert_eq!(Config::from_toml("[check]\ntp = 4\n").unwrap().check.tp, 4);
}

/// A file is read, bounded; a bad one is refused naming the file.
#[test]
fn settings_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("launchguard.toml");
    std::fs::write(&path, "[thresholds]\nlaunch_fail_us = 300\n").unwrap();
    let s = Settings::from_file(&path).unwrap();
    assert_eq!(s.config.thresholds.launch_fail_us, 300.0);
    assert!(s.is_set(ThresholdKey::LaunchFailUs));
    assert_eq!(Config::from_file(&path).unwrap().thresholds.launch_fail_us, 300.0);
    std::fs::write(&path, "[thresholds]\nlaunch_fail = 300\n").unwrap();
    let e = Settings::from_file(&path).unwrap_err().to_string();
    assert!(e.starts_with(&path.display().to_string()) && e.contains("unknown field"), "{e}");
    assert!(Config::from_file(&path).is_err());
}

/// Flags over the file: the values given, and only their keys marked set.
#[cfg(feature = "cli")]
#[test]
fn flags_over_the_file() {
    use clap::{Args, FromArgMatches};
    let cmd = Flags::<Thresholds>::augment_args(clap::Command::new("t"));
    let m =
        cmd.try_get_matches_from(["t", "--occupancy-fail", "0.6", "--launch-statistic", "median"]).unwrap();
    let flags = Flags::<Thresholds>::from_arg_matches(&m).unwrap();
    assert_eq!(flags.set, vec![ThresholdKey::OccupancyFail, ThresholdKey::LaunchStatistic]);
    let mut s = Settings::from_toml("[thresholds]\noccupancy_fail = 0.7\ngap_us = 50\n").unwrap();
    s.apply(&flags);
    let t = &s.config.thresholds;
    assert_eq!((t.occupancy_fail, t.gap_us, t.launch_statistic), (0.6, 50.0, LaunchStatistic::Median));
    assert!(s.is_set(ThresholdKey::OccupancyFail) && s.is_set(ThresholdKey::LaunchStatistic));
    assert!(s.is_set(ThresholdKey::GapUs) && !s.is_set(ThresholdKey::MaxGaps));
    // Updating from matches reads them again.
    let mut again = Flags::<Thresholds>::default();
    assert!(again.set.is_empty());
    again.update_from_arg_matches(&m).unwrap();
    assert_eq!(again.set.len(), 2);
    assert_eq!(again.values.occupancy_fail, 0.6);
    let cmd = Flags::<CheckConfig>::augment_args_for_update(clap::Command::new("t"));
    let help = cmd.clone().render_help().to_string();
    assert!(help.contains("--tp <N>") && help.contains("[default: 1]"), "{help}");
    let m = cmd.try_get_matches_from(["t", "--tp", "4"]).unwrap();
    assert_eq!(Flags::<CheckConfig>::from_arg_matches(&m).unwrap().values.tp, 4);
    assert_eq!(LaunchStatistic::Auto.to_string(), "auto");
    assert_eq!(LaunchStatistic::Mean.to_string(), "mean");
    assert_eq!(LaunchStatistic::Median.to_string(), "median");
    // Any statistic is valid.
    assert_eq!(
        Settings::from_toml("[thresholds]\nlaunch_statistic = \"mean\"\n").unwrap().validate(),
        Ok(())
    );
}

fn check(status: Status) -> Check {
    Check::new(CheckId::Gaps, status, Some(1.0), Some(f64::NAN), "m")
}

#[test]
fn the_verdict_of_checks() {
    use Status::*;
    assert_eq!(Verdict::of(&[]), Verdict::Skip);
    assert_eq!(Verdict::of(&[check(Skip)]), Verdict::Skip);
    assert_eq!(Verdict::of(&[check(Skip), check(Pass)]), Verdict::Pass);
    assert_eq!(Verdict::of(&[check(Warn), check(Pass)]), Verdict::Warn);
    assert_eq!(Verdict::of(&[check(Warn), check(Fail), check(Pass)]), Verdict::Fail);
    let codes: Vec<(&str, i32)> =
        [Verdict::Pass, Verdict::Warn, Verdict::Skip, Verdict::Fail, Verdict::Inconclusive]
            .into_iter()
            .map(|v| (v.as_str(), v.exit_code()))
            .collect();
    assert_eq!(codes, [("pass", 0), ("warn", 0), ("skip", 0), ("fail", 1), ("inconclusive", 2)]);
    let names: Vec<&str> = [Skip, Pass, Warn, Fail].into_iter().map(Status::as_str).collect();
    assert_eq!(names, ["skip", "pass", "warn", "fail"]);
    // A check: a non-finite limit is none; a hint is kept.
    let c = check(Warn).with_hint("h");
    assert_eq!(
        (c.value, c.limit, c.hint.as_deref()),
        (serde_json::json!(1.0), serde_json::Value::Null, Some("h"))
    );
    assert_eq!(CheckId::Occupancy.to_string(), "occupancy");
    assert_eq!(CheckId::Compare("gpu_after".into()).as_str(), "compare.gpu_after");
    assert_eq!(CheckId::Other("later".into()).as_str(), "later");
    assert_eq!(CheckId::parse("trace_damage"), CheckId::TraceDamage);
    assert_eq!(CheckId::parse("compare.baseline"), CheckId::CompareBaseline);
    assert_eq!(CheckId::parse("later"), CheckId::Other("later".into()));
}

/// A rule means the same for a number with a fraction as for a whole number: no key of this
/// version pairs `AtLeast` or `Within` with an f64, but the rules are public and a later key may.
#[test]
fn whole_number_rules_hold_for_fractions_too() {
    use launchguard_judge::section::{Rule, Ruled};
    // At least 1: 1 itself passes, just below it does not.
    assert_eq!(1.0f64.broken(Rule::AtLeast(1)), None);
    assert_eq!(7.5f64.broken(Rule::AtLeast(1)), None);
    assert_eq!(0.5f64.broken(Rule::AtLeast(1)), Some("must be at least 1, got 0.5".to_string()));
    // Within 2..=4, both ends included.
    assert_eq!(2.0f64.broken(Rule::Within(2, 4)), None);
    assert_eq!(4.0f64.broken(Rule::Within(2, 4)), None);
    assert_eq!(4.5f64.broken(Rule::Within(2, 4)), Some("must be between 2 and 4, got 4.5".to_string()));
    // The same rules on whole numbers.
    assert_eq!(1u64.broken(Rule::AtLeast(1)), None);
    assert_eq!(0u32.broken(Rule::AtLeast(1)), Some("must be at least 1, got 0".to_string()));
}
