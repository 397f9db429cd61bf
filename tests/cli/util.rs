//! Shared helpers of the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `launchguard` binary under test.
pub fn launchguard() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("launchguard").expect("binary built")
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the repository, where the real trace corpus lives. Under `CI=true` its
/// absence is a failure (CI always has it); elsewhere the calling test is skipped with a note.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = repo_root().join("../shared");
    if dir.join("traces").is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("../shared/traces is missing under CI=true: the trace corpus must sit beside the clone");
    }
    eprintln!("note: ../shared/traces not found; skipping a test that needs the trace corpus");
    None
}

/// Every trace file under `../shared/traces`, sorted.
pub fn shared_traces() -> Vec<PathBuf> {
    let Some(dir) = shared_dir() else { return Vec::new() };
    let mut out = Vec::new();
    collect(&dir.join("traces"), &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.to_string_lossy().ends_with(".json.gz") || path.to_string_lossy().ends_with(".json") {
            out.push(path);
        }
    }
}

/// Runs `launchguard analyze --format json` and parses the output.
pub fn analyze_json(path: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = launchguard().arg("analyze").arg(path).args(["--format", "json"]).args(extra).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("analyze {} gave no JSON ({e}): {}", path.display(), String::from_utf8_lossy(&out.stderr))
    });
    (code, v)
}
