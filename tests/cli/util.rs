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

/// A trace as JSON (plain or gzip), to damage or reshape in a test.
pub fn read_trace(path: &Path) -> serde_json::Value {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut text).unwrap();
    } else {
        text = bytes;
    }
    serde_json::from_slice(&text).unwrap()
}

/// Writes `doc` as a gzip trace at `dir/name`; returns its path.
pub fn write_trace(dir: &Path, name: &str, doc: &serde_json::Value) -> PathBuf {
    use std::io::Write;
    let path = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&serde_json::to_vec(doc).unwrap()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    path
}

/// The events of a trace, to change.
pub fn events_mut(doc: &mut serde_json::Value) -> &mut Vec<serde_json::Value> {
    doc["traceEvents"].as_array_mut().expect("traceEvents")
}

/// Whether an event is a GPU activity (kernel, copy, fill), as Kineto writes them.
pub fn is_gpu_activity(e: &serde_json::Value) -> bool {
    matches!(e["cat"].as_str(), Some("kernel" | "gpu_memcpy" | "gpu_memset"))
}

/// Whether an event is a graph launch call.
pub fn is_graph_launch(e: &serde_json::Value) -> bool {
    matches!(e["name"].as_str(), Some("cudaGraphLaunch" | "cuGraphLaunch" | "hipGraphLaunch"))
        && e["ph"].as_str() == Some("X")
}

/// An event's correlation id.
pub fn correlation(e: &serde_json::Value) -> Option<u64> {
    e["args"]["correlation"].as_u64()
}

/// An event's `ts` (µs), and its end.
pub fn ts(e: &serde_json::Value) -> f64 {
    e["ts"].as_f64().unwrap_or(0.0)
}

/// An event's end, µs.
pub fn end(e: &serde_json::Value) -> f64 {
    ts(e) + e["dur"].as_f64().unwrap_or(0.0)
}

/// The graph launches of a trace in time order.
pub fn graph_launches(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_graph_launch(e)).cloned().collect();
    out.sort_by(|a, b| ts(a).total_cmp(&ts(b)));
    out
}

/// A seeded generator (SplitMix64) of numbers in [0, 1): the same damage on every run.
pub struct Seeded(pub u64);

impl Seeded {
    /// The next number in [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A shared trace by its path under `../shared/traces`, or `None` (skipped with a note).
pub fn shared(rel: &str) -> Option<PathBuf> {
    shared_dir().map(|d| d.join("traces").join(rel))
}
