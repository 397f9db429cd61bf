//! The workload runner with stand-in interpreters: a rank that hangs or dies ends the run with an
//! error naming it, and no process is left behind.

use std::path::Path;
use std::time::Duration;

use launchguard_check::protocol::{WorkloadConfig, CONFIG_SCHEMA};
use launchguard_check::runner::{run, Request, RunError};

/// Writes an executable shell script that stands in for `python3 -u SCRIPT CONFIG`.
fn fake_python(dir: &Path, body: &str) -> String {
    let path = dir.join("fake-python");
    std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn request<'a>(python: &'a str, workdir: &'a Path, tp: u32, timeout_ms: u64) -> Request<'a> {
    Request {
        python,
        config: WorkloadConfig {
            schema: CONFIG_SCHEMA,
            workload: launchguard_check::preset::preset("tiny").unwrap(),
            inject_delay_us: 0.0,
            inject_every: 1,
            inject_delay_ranks: None,
            trace_path: String::new(),
            result_path: String::new(),
            annotation: "launchguard::replay".into(),
        },
        tp,
        timeout: Duration::from_millis(timeout_ms),
        progress: false,
        workdir,
        launched: None,
        stop: None,
    }
}

/// Processes whose command line holds `marker` (read from /proc, as `pgrep -f` would).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) && !cmd.contains("cargo") {
                found.push(format!("{name}: {cmd}"));
            }
        }
    }
    found
}

fn wait_until_gone(marker: &str) -> Vec<String> {
    for _ in 0..50 {
        let left = processes_with(marker);
        if left.is_empty() {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    processes_with(marker)
}

#[test]
fn a_hung_workload_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("lg-hang-{}", std::process::id());
    // The stand-in starts a grandchild and hangs, as a wedged NCCL rank would.
    let py = fake_python(
        dir.path(),
        &format!("echo '{{\"event\":\"phase\",\"phase\":\"capture\",\"state\":\"start\"}}'\nbash -c 'sleep 300; : {marker}' &\nsleep 300"),
    );
    let err = run(request(&py, dir.path(), 1, 700)).err().expect("a timeout");
    match &err {
        RunError::TimedOut { who, .. } => assert!(who.contains("process in capture"), "{err}"),
        other => panic!("expected a timeout, got {other}"),
    }
    assert_eq!(wait_until_gone(&marker), Vec::<String>::new(), "processes left behind");
}

#[test]
fn a_dead_rank_is_named_and_the_other_ranks_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("lg-rank-{}", std::process::id());
    let py = fake_python(
        dir.path(),
        &format!(
            "if [ \"$RANK\" = 1 ]; then sleep 0.2; echo 'RuntimeError: NCCL error on rank 1' >&2; exit 3; fi\n\
             bash -c 'sleep 300; : {marker}' &\nsleep 300"
        ),
    );
    let err = run(request(&py, dir.path(), 3, 20_000)).err().expect("a crash");
    let msg = err.to_string();
    assert!(msg.contains("rank 1") && msg.contains("exited with code 3"), "{msg}");
    assert!(msg.contains("NCCL error on rank 1"), "stderr tail missing: {msg}");
    assert_eq!(wait_until_gone(&marker), Vec::<String>::new(), "processes left behind");
}

#[test]
fn every_rank_gets_a_torchrun_environment_and_the_machine_environment_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    // Each rank writes the variables it saw as its result; the runner reads them back.
    let py = fake_python(
        dir.path(),
        r#"cfg="$3"
out=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['result_path'])" "$cfg")
out=${out//\{rank\}/$RANK}
python3 - "$out" <<'PY'
import json, os, sys
env = {k: os.environ.get(k) for k in ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "NCCL_NVLS_ENABLE"]}
json.dump({"schema": "launchguard.workload/1", "status": "ok", "rank": int(env["RANK"]), "world_size": int(env["WORLD_SIZE"]),
           "inventory": {"layer_env": {k: v for k, v in env.items() if v is not None}}}, open(sys.argv[1], "w"))
PY"#,
    );
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    let out = run(request(&py, dir.path(), 2, 20_000)).expect("both ranks succeed");
    assert_eq!(out.results.len(), 2);
    let port = out.results[0].inventory.layer_env["MASTER_PORT"].clone();
    for (rank, r) in out.results.iter().enumerate() {
        let env = &r.inventory.layer_env;
        assert_eq!(r.rank as usize, rank);
        assert_eq!(env["RANK"], rank.to_string());
        assert_eq!(env["LOCAL_RANK"], rank.to_string());
        assert_eq!(env["WORLD_SIZE"], "2");
        assert_eq!(env["MASTER_ADDR"], "127.0.0.1");
        assert_eq!(env["MASTER_PORT"], port, "one rendezvous port for all ranks");
        assert_eq!(env["NCCL_NVLS_ENABLE"], "0", "the machine's NVLS setting reaches every rank");
    }
}

#[test]
fn a_missing_result_is_an_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), "exit 0");
    let err = run(request(&py, dir.path(), 1, 5_000)).err().expect("no result");
    assert!(matches!(err, RunError::BadResult { .. }), "{err}");
}
