//! The command line as a new user meets it: clap's own messages (the missing argument named,
//! "did you mean", the possible values), the help on a bare `launchguard`, errors said once and
//! on one line, and a line on standard error for every report file written.

use crate::util::*;

/// Runs launchguard with `args` and no colour; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = launchguard().current_dir(repo_root()).args(args).env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bare_launchguard_prints_the_command_list() {
    let (code, _, err) = run(&[]);
    assert_eq!(code, 2);
    for command in ["analyze", "check", "linkage", "selftest", "compare"] {
        assert!(err.contains(&format!("\n  {command} ")), "{command} listed: {err}");
    }
    assert!(err.contains("Usage: launchguard"), "{err}");
}

#[test]
fn usage_errors_are_claps_own_and_exit_2() {
    for (args, wants) in [
        (&["analyze"][..], &["required arguments were not provided", "<TRACE>"][..]),
        (
            &["analyse", "t.json"],
            &["unrecognized subcommand 'analyse'", "similar subcommand exists: 'analyze'"],
        ),
        (&["analyze", "t.json", "--fromat", "json"], &["'--fromat'", "similar argument exists: '--format'"]),
        (
            &["analyze", "t.json", "--format", "jsn"],
            &["invalid value 'jsn'", "[possible values: text, json]"],
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        for want in wants {
            assert!(err.contains(want), "{args:?}: {want:?} in {err}");
        }
        // No colour codes where NO_COLOR is set.
        assert!(!err.contains('\x1b'), "{err:?}");
    }
}

#[test]
fn help_goes_to_standard_output_and_exits_0() {
    let (code, out, _) = run(&["analyze", "--help"]);
    assert_eq!(code, 0);
    for flag in ["--csv <DIR>", "--html <PATH>", "--within <REGEX>", "--color <WHEN>"] {
        assert!(out.contains(flag), "{flag}: {out}");
    }
}

#[test]
fn a_missing_config_file_is_said_once() {
    let (code, _, err) = run(&["analyze", "examples/healthy_clean.json.gz", "--config", "/no/such/lg.toml"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.starts_with("launchguard: error: /no/such/lg.toml"), "{err}");
}

#[test]
fn a_bad_within_pattern_is_one_clean_line() {
    let (code, _, err) = run(&["analyze", "examples/healthy_clean.json.gz", "--within", "step(["]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "launchguard: error: --within is not a valid regular expression: unclosed character class\n"
    );
}

#[test]
fn every_report_file_written_is_named_on_standard_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (code, out, err) = run(&[
        "analyze",
        "examples/healthy_clean.json.gz",
        "--junit",
        &p("j.xml"),
        "--markdown",
        &p("s.md"),
        "--html",
        &p("r.html"),
        "--csv",
        &p("csv"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("verdict: PASS"), "{out}");
    let mut wrote: Vec<&str> = err.lines().filter_map(|l| l.strip_prefix("launchguard: wrote ")).collect();
    wrote.sort();
    let mut want = vec![p("j.xml"), p("s.md"), p("r.html")];
    for table in ["gaps", "kernels", "replays"] {
        want.push(p(&format!("csv/{table}.csv")));
    }
    want.sort();
    assert_eq!(wrote, want, "{err}");
    for path in want {
        assert!(std::path::Path::new(&path).is_file(), "{path}");
    }
}

#[test]
fn colour_is_forced_or_refused_on_request() {
    let trace = "examples/delay270_clean.json.gz";
    let (_, always, _) = run(&["analyze", trace, "--color", "always"]);
    assert!(always.contains("verdict: \x1b[1m\x1b[31mFAIL\x1b[0m"), "{always:?}");
    let (_, never, _) = run(&["analyze", trace, "--color", "never"]);
    let (_, piped, _) = run(&["analyze", trace]);
    assert!(!never.contains('\x1b') && !piped.contains('\x1b'));
    assert_eq!(never, piped);
}

/// The README's sample configuration, the TOML block under "How `check` judges".
fn readme_config() -> toml::Table {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme.find("```toml\n[thresholds]").expect("the README's sample config") + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    toml::from_str(&readme[start..end]).expect("the README's sample config is TOML")
}

/// Each limit is declared once (crates/judge/src/config.rs): the README states its default, and
/// every command's help shows the same default after its flag. The README is the independent
/// copy a user reads; the help is generated.
#[test]
fn the_readme_and_the_help_state_the_declared_defaults() {
    let config = readme_config();
    let mut helps = String::new();
    for command in ["analyze", "check", "compare", "selftest"] {
        let (code, out, _) = run(&[command, "--help"]);
        assert_eq!(code, 0);
        helps.push_str(&out.replace('\n', " ").split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let mut flags_seen = 0;
    for (section, keys) in &config {
        if section == "linkage" {
            continue;
        }
        for (key, value) in keys.as_table().unwrap() {
            let shown = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Float(f) => f.to_string(),
                other => other.to_string(),
            };
            let flag = match (section.as_str(), key.as_str()) {
                ("check", "timeout_s") => "timeout".to_string(),
                ("thresholds", "adapt") => "adapt-limits".to_string(),
                (_, k) => k.replace('_', "-"),
            };
            // Keys of the file only (the bootstrap's) have no flag.
            let Some(at) = helps.find(&format!("--{flag} <")) else { continue };
            let rest = &helps[at..];
            let default = rest.find("[default: ").map(|i| &rest[i + 10..]).unwrap();
            let default = &default[..default.find(']').unwrap()];
            assert_eq!(default, shown, "--{flag}: the help's default against the README's {section}.{key}");
            flags_seen += 1;
        }
    }
    assert!(flags_seen >= 20, "{flags_seen} flags compared");
}

/// What a run judged: its verdict and each check's id and status (every rank's, for a folder).
fn judged(args: &[&str]) -> (i32, Vec<(String, String)>) {
    let (code, out, err) = run(args);
    if code == 2 {
        // Unusable input (a trace without GPU activity): the same error either way.
        return (code, vec![("error".to_string(), err)]);
    }
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"));
    let mut got = vec![("verdict".to_string(), v["verdict"].to_string())];
    let ranks = v["ranks"].as_array().cloned().unwrap_or_default();
    for checks in std::iter::once(&v["checks"]).chain(ranks.iter().map(|r| &r["checks"])) {
        for c in checks.as_array().unwrap() {
            got.push((c["id"].to_string(), c["status"].to_string()));
        }
    }
    (code, got)
}

/// Stating the defaults changes nothing: the README's sample configuration and a file stating
/// every declared default judge every shared trace (and the TP=2 pair together) as no file does.
#[test]
fn stated_defaults_give_the_verdicts_of_no_config() {
    let Some(shared) = shared_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("readme.toml");
    let mut text = toml::to_string(&readme_config()).unwrap();
    // The README's forbid list is an example of a policy, not a default: leave it out here.
    text = text.replace("[linkage]\nforbid = [\"rocprofiler-sdk<1.3.2\"]\n", "");
    std::fs::write(&readme, text).unwrap();
    let every = dir.path().join("every.toml");
    let defaults = toml::to_string(&launchguard_judge::Config::default()).unwrap();
    for key in ["occupancy_fail", "launch_fail_us", "max_gaps", "adapt", "alpha", "preset", "max_events"] {
        assert!(defaults.contains(&format!("\n{key} = ")), "{key} stated in {defaults}");
    }
    std::fs::write(&every, defaults).unwrap();
    let mut inputs: Vec<String> = shared_traces().iter().map(|p| p.display().to_string()).collect();
    inputs.push(shared.join("traces/h200x2").display().to_string());
    inputs.extend([
        "examples/healthy_clean.json.gz".to_string(),
        "examples/delay270_clean.json.gz".to_string(),
    ]);
    assert!(inputs.len() >= 18, "{inputs:?}");
    for input in &inputs {
        let plain = judged(&["analyze", input, "--format", "json"]);
        for config in [&readme, &every] {
            let with = judged(&["analyze", input, "--format", "json", "--config", config.to_str().unwrap()]);
            assert_eq!(plain, with, "{input} with {}", config.display());
        }
    }
}
