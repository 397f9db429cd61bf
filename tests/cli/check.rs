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
    // Said once, in the report: not again on standard error.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("verdict: SKIP (torch is not installed"), "{stdout}");
    assert_eq!(stdout.matches("torch is not installed").count(), 1, "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("torch is not installed"), "{stderr}");
}

#[test]
fn a_launched_rank_without_torch_skips_whatever_its_rendezvous() {
    // torchrun's rank variables without MASTER_ADDR and MASTER_PORT: the rank cannot run here
    // anyway, so it skips as a lone run does (exit 0), saying so once.
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    for format in ["text", "json"] {
        let out = launchguard()
            .current_dir(dir.path())
            .args(["check", "--python", &py, "--format", format])
            .env("RANK", "0")
            .env("WORLD_SIZE", "2")
            .env("LOCAL_RANK", "0")
            .env_remove("MASTER_ADDR")
            .env_remove("MASTER_PORT")
            .env_remove("SLURM_PROCID")
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
        if format == "json" {
            // The document for a program; the line on standard error for the person watching.
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["verdict"], "skip");
            assert!(v["reason"].as_str().unwrap().starts_with("torch is not installed"), "{v}");
            assert_eq!(stderr.matches("torch is not installed").count(), 1, "{stderr}");
            assert!(stderr.contains("launchguard: skip: torch is not installed"), "{stderr}");
        } else {
            let both = format!("{stdout}{stderr}");
            assert_eq!(both.matches("torch is not installed").count(), 1, "{both}");
        }
    }
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
    assert!(String::from_utf8_lossy(&out.stdout).contains("SKIP (no Python interpreter 'python3'"));
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

#[test]
fn linkage_without_torch_names_the_interpreter_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let py = python_without_torch(dir.path());
    // The stand-in runs the machine's python3: its own path is what a user needs to see.
    let real =
        std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
    let Ok(real) = real else { return };
    let real = String::from_utf8(real.stdout).unwrap().trim().to_string();
    let out = launchguard().args(["linkage", "--python", &py]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("launchguard: error: {py} ({real}) has no torch package; name an interpreter that has torch with --python")
    );
    assert!(out.stdout.is_empty());
    // With --format json, standard output is a JSON error object too; the line stays on stderr.
    let out = launchguard().args(["linkage", "--python", &py, "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "launchguard.error/1");
    assert_eq!(v["exit_code"], 2);
    let line = String::from_utf8_lossy(&out.stderr);
    assert_eq!(format!("launchguard: error: {}\n", v["error"].as_str().unwrap()), line);
}

#[test]
fn every_command_in_json_gives_an_error_object() {
    // Each command's --format json error path: one object on stdout, the line on stderr, exit 2.
    let missing = "/nonexistent/trace.json";
    for args in [
        vec!["analyze", missing, "--format", "json"],
        vec!["compare", missing, missing, "--format", "json"],
        vec!["check", "--python", "/nonexistent/python3", "--format", "json"],
        vec!["selftest", "--config", "/nonexistent/launchguard.toml", "--format", "json"],
        vec!["linkage", "/nonexistent/libtorch.so", "--format", "json"],
        vec!["history", "--history", "/nonexistent/dir/h.db", "show", "--format", "json"],
    ] {
        let out = launchguard().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stderr}"));
        let error = v["error"].as_str().unwrap();
        assert!(stderr.ends_with(&format!("launchguard: error: {error}\n")), "{args:?}: {stderr}");
        // And without --format json, nothing on standard output.
        let text: Vec<&str> = args.iter().copied().filter(|a| *a != "--format" && *a != "json").collect();
        let out = launchguard().args(&text).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        assert!(out.stdout.is_empty(), "{text:?}");
    }
}
