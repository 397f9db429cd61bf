//! `check` under a launcher, where there is no GPU: each rank is a `launchguard check` process
//! started with torchrun's or Slurm's variables, its workload a recorded TP=2 H200 run replayed
//! (tests/data/labeled); rank 0 gathers the ranks' traces and judges the run. Fake ranks cover the
//! hand-off: a missing rank, a failed rank, a rank run twice, a rank that hangs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

fn labeled(name: &str) -> PathBuf {
    repo_root().join("tests/data/labeled").join(name)
}

/// A fake interpreter that hangs when asked to run the workload (a rank stuck in a collective).
fn hanging_python(dir: &Path) -> PathBuf {
    let path = dir.join("hang-python");
    std::fs::write(&path, "#!/bin/sh\n[ \"$1\" = -c ] && { echo null; exit 0; }\nexec sleep 300\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `launchguard check` as rank `rank` of `world`, in `dir`, with the variables `vars` names
/// (torchrun's or Slurm's), replaying `recorded` through `python`.
fn rank_cmd(
    dir: &Path,
    rank: u32,
    world: u32,
    slurm: bool,
    recorded: &Path,
    python: &Path,
    extra: &[&str],
) -> Command {
    let bin = assert_cmd::cargo::cargo_bin("launchguard");
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir)
        .env_remove("RANK")
        .env_remove("WORLD_SIZE")
        .env("LG_REPLAY_DIR", recorded)
        .env("MASTER_ADDR", "127.0.0.1")
        .env("MASTER_PORT", "29555")
        .args(["check", "--python"])
        .arg(python)
        .args(["--format", "json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if slurm {
        cmd.env("SLURM_PROCID", rank.to_string())
            .env("SLURM_NTASKS", world.to_string())
            .env("SLURM_LOCALID", rank.to_string())
            .env("SLURM_JOB_ID", "4242");
    } else {
        cmd.env("RANK", rank.to_string())
            .env("WORLD_SIZE", world.to_string())
            .env("LOCAL_RANK", rank.to_string());
    }
    cmd
}

fn replay() -> PathBuf {
    repo_root().join("tests/data/labeled/replay-python")
}

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn checks(v: &Value) -> Vec<(String, String, String)> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].to_string(), c["status"].to_string(), c["message"].to_string()))
        .collect()
}

#[test]
fn two_launched_ranks_give_the_verdict_of_tp_2() {
    for slurm in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let recorded = labeled("tp2-healthy-1");
        let ranks: Vec<Child> = (0..2)
            .map(|r| rank_cmd(dir.path(), r, 2, slurm, &recorded, &replay(), &[]).spawn().unwrap())
            .collect();
        let outs: Vec<Output> = ranks.into_iter().map(finish).collect();
        assert_eq!(outs[1].status.code(), Some(0), "{}", String::from_utf8_lossy(&outs[1].stderr));
        assert!(outs[1].stdout.is_empty());
        assert!(String::from_utf8_lossy(&outs[1].stderr).contains("rank 1 of 2: its trace is in"));
        let launched: Value = serde_json::from_slice(&outs[0].stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&outs[0].stderr)));
        // The same run judged by check --tp 2 on one host.
        let out = launchguard()
            .env("LG_REPLAY_DIR", &recorded)
            .args(["check", "--tp", "2", "--launcher", "none", "--format", "json", "--python"])
            .arg(replay())
            .output()
            .unwrap();
        let local: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(launched["verdict"], local["verdict"]);
        assert_eq!(checks(&launched), checks(&local), "slurm {slurm}");
        assert_eq!(launched["tp"], 2);
        assert_eq!(launched["ranks"].as_array().unwrap().len(), 2);
        let run_dir = if slurm { "run-slurm-4242.0" } else { "run-127.0.0.1-29555" };
        assert!(dir.path().join("launchguard-ranks").join(run_dir).join("rank1.trace.json.gz").is_file());
    }
}

#[test]
fn a_rank_that_never_comes_is_named_after_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let out = rank_cmd(dir.path(), 0, 3, false, &labeled("tp2-healthy-1"), &replay(), &["--wait", "2"])
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no result from every rank within 2 s: rank 1 never wrote")
            && err.contains("rank 2 never wrote"),
        "{err}"
    );
}

#[test]
fn a_failed_rank_ends_the_run_with_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    // Rank 1's workload fails: its recording is missing.
    let r1 = rank_cmd(dir.path(), 1, 2, false, empty.path(), &replay(), &[]).output().unwrap();
    assert_eq!(r1.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r1.stderr).contains("the workload rank 1 exited with code"));
    let t0 = Instant::now();
    let r0 = rank_cmd(dir.path(), 0, 2, false, &labeled("tp2-healthy-1"), &replay(), &["--wait", "60"])
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "did not wait for the timeout");
    assert_eq!(r0.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r0.stderr);
    assert!(err.contains("rank 1 failed on host") && err.contains("exited with code"), "{err}");
    // No verdict: the JSON on standard output is the error's.
    let v: serde_json::Value = serde_json::from_slice(&r0.stdout).unwrap();
    assert_eq!(v["schema"], "launchguard.error/1", "no verdict: {v}");
}

#[test]
fn a_rank_run_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hang = hanging_python(dir.path());
    let mut first = rank_cmd(dir.path(), 1, 2, false, &labeled("tp2-healthy-1"), &hang, &["--timeout", "30"])
        .spawn()
        .unwrap();
    // Wait for its claim.
    let status = dir.path().join("launchguard-ranks/run-127.0.0.1-29555/rank1.status.json");
    let t0 = Instant::now();
    while !status.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let second =
        rank_cmd(dir.path(), 1, 2, false, &labeled("tp2-healthy-1"), &replay(), &[]).output().unwrap();
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(second.status.code(), Some(2));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("rank 1 is run twice:") && err.contains(&format!("pid {}", first.id())), "{err}");
}

#[test]
fn a_rank_that_hangs_is_named_when_rank_0_gives_up() {
    let dir = tempfile::tempdir().unwrap();
    let hang = hanging_python(dir.path());
    let mut r1 = rank_cmd(dir.path(), 1, 2, false, &labeled("tp2-healthy-1"), &hang, &["--timeout", "60"])
        .spawn()
        .unwrap();
    let r0 = rank_cmd(dir.path(), 0, 2, false, &labeled("tp2-healthy-1"), &replay(), &["--wait", "3"])
        .output()
        .unwrap();
    let _ = r1.kill();
    let _ = r1.wait();
    assert_eq!(r0.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r0.stderr);
    assert!(err.contains("within 3 s: rank 1 still running on host"), "{err}");
}

#[test]
fn bad_launcher_settings_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, err) =
        run(rank_cmd(dir.path(), 0, 2, false, &labeled("tp2-healthy-1"), &replay(), &["--tp", "4"])
            .env("RANK", "0"));
    assert_eq!(code, Some(2));
    assert!(err.contains("--tp 4 but the launcher started 2 ranks"), "{err}");
    let (code, err) = run(rank_cmd(dir.path(), 0, 2, false, &labeled("tp2-healthy-1"), &replay(), &[])
        .env_remove("MASTER_PORT"));
    assert_eq!(code, Some(2));
    assert!(err.contains("MASTER_PORT is not set"), "{err}");
    let out = launchguard()
        .current_dir(dir.path())
        .env_remove("RANK")
        .env_remove("WORLD_SIZE")
        .args(["check", "--launcher", "env"])
        .output()
        .unwrap();
    let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string());
    assert_eq!(code, Some(2));
    assert!(err.contains("--launcher env: neither RANK and WORLD_SIZE"), "{err}");
}
