//! `launchguard check`, `selftest` and `linkage` where there is no GPU (CI, this machine): they
//! skip with a reason, or fail cleanly on bad input. Their GPU behaviour is exercised on a GPU
//! machine by scripts/gpu-evidence.sh and recorded in docs/evidence/.

use std::path::Path;

use crate::util::*;

/// A stand-in `python3` that has no torch: the workload must report "cannot run here".
fn python_without_torch(dir: &Path) -> String {
    let path = dir.join("python3");
    std::fs::write(&path, "#!/bin/sh\nexec python3 -I -S \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn check_without_torch_skips_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    let out = launchguard().args(["check", "--python", &py]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("skip: torch is not installed"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("verdict: SKIP"));
}

#[test]
fn check_json_says_skip_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    let out = launchguard().args(["check", "--format", "json", "--python", &py]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "launchguard.check/1");
    assert_eq!(v["verdict"], "skip");
    assert!(v["reason"].as_str().unwrap().contains("torch is not installed"), "{v}");
}

#[test]
fn require_gpu_makes_a_skip_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    let out = launchguard().args(["check", "--require-gpu", "--python", &py]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr
        .lines()
        .last()
        .unwrap()
        .starts_with("launchguard: error: --require-gpu: torch is not installed"));
}

#[test]
fn a_named_interpreter_that_does_not_exist_is_an_error() {
    let out = launchguard().args(["check", "--python", "/nonexistent/python3"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("/nonexistent/python3"), "{stderr}");
}

#[test]
fn no_interpreter_on_the_path_skips() {
    let out = launchguard().args(["check"]).env("PATH", "/nonexistent").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("skip: no Python interpreter 'python3'"));
}

#[test]
fn bad_workload_settings_are_usage_errors() {
    for args in [
        vec!["check", "--preset", "huge"],
        vec!["check", "--tp", "0"],
        vec!["check", "--hidden", "1000", "--heads", "16"],
        vec!["check", "--dtype", "int8"],
        vec!["check", "--inject-delay-us", "-5"],
        vec!["selftest", "--delays", "10,-1"],
    ] {
        let out = launchguard().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim().lines().count(), 1, "{args:?}");
    }
}

#[test]
fn a_baseline_that_is_not_a_check_result_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("baseline.json");
    std::fs::write(&bad, b"{\"schema\": \"something else\"}").unwrap();
    let out = launchguard().args(["check", "--baseline"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("baseline.json"));
}

#[test]
fn selftest_without_torch_skips() {
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    let out = launchguard()
        .args(["selftest", "--python", &py, "--healthy", "1", "--delays", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("skipped: torch is not installed"));
}

#[test]
fn the_workload_script_is_valid_python() {
    // The embedded script is only run on GPU machines; at least it must compile everywhere.
    let script = repo_root().join("crates/check/workload/launchguard_workload.py");
    let out = std::process::Command::new("python3")
        .args(["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(&script)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
