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
    assert!(out.contains("verdict: WARN"), "{out}");
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
    let trace = "examples/healthy_clean.json.gz";
    let (_, always, _) = run(&["analyze", trace, "--color", "always"]);
    assert!(always.contains("verdict: \x1b[1m\x1b[33mWARN\x1b[0m"), "{always:?}");
    let (_, never, _) = run(&["analyze", trace, "--color", "never"]);
    let (_, piped, _) = run(&["analyze", trace]);
    assert!(!never.contains('\x1b') && !piped.contains('\x1b'));
    assert_eq!(never, piped);
}
