//! `launchguard history` and `check --history`, end to end on real H200 runs: the GPU series of
//! `scripts/gpu-history.sh` (10 healthy `check` runs, then 10 with `--inject-delay-us 25`, each
//! recorded as it runs) replayed without a GPU through the stand-in interpreter of
//! tests/data/labeled; imports of real check results and a kept trace; every format; bad input.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::*;

fn labeled(name: &str) -> PathBuf {
    repo_root().join("tests/data/labeled").join(name)
}

/// `check` of the recorded run `name` (preset reference), recorded into `history` as `build`.
fn check_into(history: &Path, name: &str, delay: &str, build: &str) -> Output {
    launchguard()
        .env("LG_REPLAY_DIR", labeled(name))
        .env_remove("LAUNCHGUARD_HISTORY")
        .arg("check")
        .arg("--python")
        .arg(labeled("replay-python"))
        .args(["--preset", "reference", "--inject-delay-us", delay, "--format", "json"])
        .arg("--history")
        .arg(history)
        .args(["--series", "gpu-history", "--build-id", build])
        .output()
        .unwrap()
}

fn history(h: &Path, args: &[&str]) -> Output {
    launchguard().arg("history").arg("--history").arg(h).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The GPU series, replayed: runs 1–10 healthy (reference-healthy-01…10), 11–20 the run recorded
/// with 25 µs busy-waited before each replay (reference-delay-25), each with its build id.
fn gpu_series(h: &Path) -> Vec<Output> {
    let mut outs = Vec::new();
    for i in 1..=20 {
        let (name, delay) = if i <= 10 {
            (format!("reference-healthy-{i:02}"), "0")
        } else {
            ("reference-delay-25".to_string(), "25")
        };
        outs.push(check_into(h, &name, delay, &format!("build-{i}")));
    }
    outs
}

#[test]
fn the_gpu_series_finds_the_change_at_run_11_and_names_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("history.db");
    let outs = gpu_series(&h);
    let mut first_fail = None;
    for (i, o) in outs.iter().enumerate() {
        let run = i + 1;
        let e = stderr(o);
        let doc: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|err| panic!("run {run}: {err}: {e}"));
        assert!(
            e.contains(&format!("recorded this run as #{run} in reference · NVIDIA H200 · gpu-history")),
            "{e}"
        );
        let verdict_code = if doc["verdict"] == "fail" { 1 } else { 0 };
        let gate_fails = e.contains(": FAIL ");
        assert_eq!(o.status.code(), Some(if gate_fails { 1 } else { verdict_code }), "run {run}: {e}");
        if gate_fails {
            first_fail.get_or_insert(run);
            // Every failure names run 11, its build, and the delay that appeared there.
            for line in e.lines().filter(|l| l.contains(": FAIL ")) {
                assert!(line.contains("since #11 (build build-11)"), "run {run}: {line}");
                assert!(line.contains("what changed: run/inject_delay_us: 0 → 25"), "run {run}: {line}");
            }
        } else {
            assert!(first_fail.is_none(), "run {run} passes after run {first_fail:?} failed: {e}");
        }
        if run == 20 {
            assert!(e.contains("FAIL host_before_us"), "{e}");
        }
    }
    // A level needs 3 runs; with 10 runs before and 3 after, the permutation test can just reach
    // p ≤ 0.01 (2 of the 286 ways to place 3 runs among 13 are as extreme), so the change is
    // found at run 13 or 14.
    let first_fail = first_fail.expect("the gate fails");
    assert!((13..=14).contains(&first_fail), "first failing run {first_fail}");

    // show, as JSON: the change of the host cost per replay at run 11, for the worse, and the
    // medians either side are those of the recorded runs (computed here from their files).
    let o = history(&h, &["show", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "launchguard.history/1");
    let series = &v["series"][0];
    assert_eq!(series["runs"].as_array().unwrap().len(), 20);
    let host = series["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "host_before_us")
        .unwrap();
    let change = &host["changes"][0];
    assert_eq!((change["run_id"].as_i64(), change["worse"].as_bool()), (Some(11), Some(true)));
    assert_eq!(change["build"], "build-11");
    let p50 = |name: &str| -> f64 {
        let r: Value =
            serde_json::from_slice(&std::fs::read(labeled(name).join("result.rank0.json")).unwrap()).unwrap();
        let mut s: Vec<f64> = r["phases"]["before"]["host_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        s.sort_by(f64::total_cmp);
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    let mut healthy: Vec<f64> = (1..=10).map(|i| p50(&format!("reference-healthy-{i:02}"))).collect();
    healthy.sort_by(f64::total_cmp);
    let before = (healthy[4] + healthy[5]) / 2.0;
    assert!((change["before"].as_f64().unwrap() - before).abs() < 1e-9, "{change} vs {before}");
    assert!((change["after"].as_f64().unwrap() - p50("reference-delay-25")).abs() < 1e-9);
    assert_eq!(series["gate"][0]["first_bad"]["run_id"], 11);

    // explain: the injected delay first.
    let o = history(&h, &["explain", "#11", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    let top = &e["differences"][0];
    assert_eq!(
        (top["key"].as_str(), top["before"].as_str(), top["after"].as_str()),
        (Some("run/inject_delay_us"), Some("0"), Some("25"))
    );
    assert_eq!(top["at_the_change"], true);
    let text = String::from_utf8(history(&h, &["explain", "11"]).stdout).unwrap();
    assert!(text.contains("between #10 (build build-10) and #11 (build build-11)"), "{text}");
    assert!(text.contains("1. run/inject_delay_us: 0 → 25"), "{text}");

    // Every format of show; the page and the Markdown written as files too.
    let (html, md) = (dir.path().join("h.html"), dir.path().join("h.md"));
    let o = history(&h, &["show", "--html", html.to_str().unwrap(), "--markdown", md.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("change at #11 (build build-11)") && text.contains("gate: FAIL host_before_us"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("lg-chart-0-0") && page.contains("\"build-11\"")
    );
    assert!(
        !page.contains("http://")
            || page.matches("http://").all(|_| page.contains("http://www.w3.org/2000/svg"))
    );
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        markdown.contains("| `host_before_us` |") && markdown.contains("#11 (build build-11)"),
        "{markdown}"
    );

    // The gate fails until the change is accepted; then it passes.
    assert_eq!(history(&h, &["gate"]).status.code(), Some(1));
    let o = history(&h, &["reset", "11", "--note", "the delay is the test"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = history(&h, &["gate"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn existing_results_and_a_kept_trace_are_imported() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.db");
    let tiny = repo_root().join("tests/data/h200-check/tiny");
    let o = history(&h, &["record", tiny.to_str().unwrap(), "--branch", "main", "--build-id", "imported"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("recorded ").count(), 10);
    let kept = repo_root().join("tests/data/h200-check/tiny-fresh-host/kept-trace-slow-host.json.gz");
    let o = history(&h, &["record", kept.to_str().unwrap(), "--branch", "main"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("as #11 in tiny · NVIDIA H200 · main"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&history(&h, &["show", "--format", "json"]).stdout).unwrap();
    let runs = v["series"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 11);
    assert_eq!(runs[10]["kind"], "analyze");
    // The kept trace's context carries check's samples: 6.5 µs per launch unprofiled (its README).
    let host = runs[10]["figures"]["host_before_us"].as_f64().unwrap();
    assert!((6.0..7.0).contains(&host), "{host}");
    assert_eq!(runs[0]["build"], "imported");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "just text, long enough to be read as a file header by SQLite ".repeat(10))
        .unwrap();
    let before = std::fs::read(&notes).unwrap();
    let h = dir.path().join("h.db");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--history", notes.to_str().unwrap(), "show"], "not a launchguard history"),
        (vec!["--history", h.to_str().unwrap(), "show"], "no history here"),
        (vec!["--history", h.to_str().unwrap(), "record", notes.to_str().unwrap()], "notes.txt"),
        (vec!["--history", h.to_str().unwrap(), "explain", "abc"], "is not a run"),
        (vec!["--history", h.to_str().unwrap(), "show", "--significance", "2"], "significance level"),
        (vec!["--history", h.to_str().unwrap(), "show", "--permutations", "10"], "cannot reach"),
        (vec!["--history", "postgresql://nobody@%2Fnonexistent-dir/db", "show"], "cannot connect"),
    ];
    for (args, needle) in cases {
        let o = launchguard().arg("history").args(&args).env_remove("LAUNCHGUARD_HISTORY").output().unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(needle) && e.trim().lines().count() == 1, "{args:?}: {e}");
    }
    let o = launchguard().args(["history", "show"]).env_remove("LAUNCHGUARD_HISTORY").output().unwrap();
    assert!(stderr(&o).contains("no history named"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&notes).unwrap(), before, "inputs are never modified");
    assert!(!h.exists(), "reading or a failed import creates no history");
    // An unknown run of a real history.
    let one = repo_root().join("tests/data/h200-check/tiny/run00-delay0.json");
    assert_eq!(history(&h, &["record", one.to_str().unwrap()]).status.code(), Some(0));
    let o = history(&h, &["explain", "7"]);
    assert!(o.status.code() == Some(2) && stderr(&o).contains("no run #7"), "{}", stderr(&o));
    let o = history(&h, &["explain", "1"]);
    assert!(o.status.code() == Some(2) && stderr(&o).contains("first of its series"), "{}", stderr(&o));
}
