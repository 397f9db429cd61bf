//! rocprofv3's output (issue 36): the real JSON sample against a naive union computed here, and
//! rocpd databases converted from real H200 Kineto traces (tests/cli/convert.rs), which must give
//! the Kineto original's figures exactly, one database per rank in a folder as the ranks.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::convert::{read_kineto, rocpd_copy_name, write_rocpd, RocpdSchema};
use crate::util::{analyze_json, launchguard, shared_dir};

/// The figures a converted fixture must share with its Kineto original: occupancy and gaps per
/// device and stream, the graph-launch statistics, every replay joined to its kernels, the kernel
/// table, the checks and the verdict. Copies are named by each profiler in its own words
/// (`rename` maps Kineto's to the other's); what only names the source (path, size, events,
/// profiler, the launch API's vendor) is left out.
pub fn figures(v: &Value, rename: &dyn Fn(&str) -> String) -> Value {
    let mut out = serde_json::json!({
        "devices": v["devices"],
        "graph_launches": v["graph_launches"],
        "replays": v["replays"],
        "replay_summary": v["replay_summary"],
        "kernels": v["kernels"],
        "limits": v["limits"],
        "verdict": v["verdict"],
        "warnings": v["warnings"],
    });
    out["graph_launches"].as_object_mut().map(|o| o.remove("apis"));
    for k in out["kernels"]["kernels"].as_array_mut().into_iter().flatten() {
        let name = rename(k["name"].as_str().unwrap());
        k["name"] = name.into();
    }
    let checks: Vec<Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            // Its message counts the events read, which differ between formats (a row is not a JSON event).
            if c["id"] == "trace_complete" {
                c.as_object_mut().unwrap().remove("message");
                c.as_object_mut().unwrap().remove("value");
            }
            c
        })
        .collect();
    out["checks"] = checks.into();
    out
}

/// Where two JSON values first differ (a path and both values), if they do.
pub fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (p, q) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                if let Some(d) = first_difference(p, q, &format!("{at}.{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(format!("{at}: {} against {}", short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 300 {
        format!("{}…", t.chars().take(300).collect::<String>())
    } else {
        t
    }
}

/// Asserts two figure documents equal, naming the first place that differs.
pub fn assert_same(want: &Value, got: &Value, what: &str) {
    if let Some(d) = first_difference(want, got, "") {
        panic!("{what}: differs from the Kineto original at {d}");
    }
}

/// `--within` selects by the host ranges (markers, NVTX): these formats hold no copy of a range
/// on the GPU (Kineto's `gpu_user_annotation`), so the GPU work selected is what was launched
/// inside a host range (matched by correlation id); asserted here to read them: some GPU work,
/// and never more than the whole trace's.
pub fn within_reads_the_ranges(path: &Path) {
    let (code, v) = analyze_json(path, &["--within", "probe::replay"]);
    assert!(code == 0 || code == 1, "{}: --within exit {code}", path.display());
    assert_eq!(v["within"], "probe::replay");
    let (_, all) = analyze_json(path, &[]);
    let (inside, every) =
        (v["devices"][0]["activities"].as_u64().unwrap(), all["devices"][0]["activities"].as_u64().unwrap());
    assert!(inside > 0 && inside <= every, "{inside} of {every} activities within the host ranges");
}

/// `v` with HIP's launch API named as CUDA's, for messages that name it.
fn as_cuda(v: &Value) -> Value {
    serde_json::from_str(&v.to_string().replace("hipGraphLaunch", "cudaGraphLaunch")).unwrap()
}

fn rocpd_rename(name: &str) -> String {
    if name.starts_with("Memcpy ") {
        rocpd_copy_name(name)
    } else {
        name.to_string()
    }
}

fn rocpd_case(trace: &str, schema: RocpdSchema) {
    let Some(shared) = shared_dir() else { return };
    let original = shared.join("traces").join(trace);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("4242_results.db");
    write_rocpd(&read_kineto(&original), &db, schema);
    let (code_k, kineto) = analyze_json(&original, &[]);
    let (code_r, rocpd) = analyze_json(&db, &[]);
    assert_eq!(rocpd["trace"]["profiler"], "rocpd");
    assert_eq!(rocpd["graph_launches"]["apis"], serde_json::json!(["hipGraphLaunch"]));
    assert!(kineto["graph_launches"]["count"].as_u64().unwrap() >= 100, "{trace}: its replays are the point");
    // The launch API is HIP's in a ROCm run, and the checks' messages name it.
    let got = as_cuda(&figures(&rocpd, &|n| n.to_string()));
    assert_same(&figures(&kineto, &rocpd_rename), &got, &format!("{trace} as rocpd ({schema:?})"));
    assert_eq!(code_k, code_r);
    within_reads_the_ranges(&db);
}

#[test]
fn rocpd_made_from_h200_traces_gives_the_kineto_figures() {
    rocpd_case("h200/healthy_clean.json.gz", RocpdSchema::Rows);
    // Copies too (a refresh before each replay), and the other schema.
    rocpd_case("h200/delay270_refresh.json.gz", RocpdSchema::Rows);
    rocpd_case("h200/delay270_clean.json.gz", RocpdSchema::Timestamps);
}

#[test]
fn a_folder_of_rocpd_databases_is_analyzed_as_ranks() {
    let Some(shared) = shared_dir() else { return };
    let kineto_dir = shared.join("traces/h200x2");
    let dir = tempfile::tempdir().unwrap();
    // One database per process, named as rocprofv3 names them (pid_results.db): the rank comes
    // from the RANK torchrun set in each process's environment.
    for (rank, pid) in [(0, 1001), (1, 1002)] {
        let k = read_kineto(&kineto_dir.join(format!("tp2_rank{rank}.json.gz")));
        assert_eq!(k.rank, Some(rank));
        write_rocpd(&k, &dir.path().join(format!("{pid}_results.db")), RocpdSchema::Rows);
    }
    let (code_k, kineto) = analyze_json(&kineto_dir, &[]);
    let (code_r, rocpd) = analyze_json(dir.path(), &[]);
    assert_eq!(kineto["schema"], "launchguard.analysis-ranks/1");
    assert_eq!(rocpd["schema"], kineto["schema"]);
    assert_eq!(code_k, code_r);
    for key in ["world_size", "ranks", "across", "checks", "verdict", "warnings"] {
        if kineto.get(key).is_none() {
            continue;
        }
        let strip = |v: &Value| {
            let mut v = as_cuda(v);
            strip_sources(&mut v);
            v
        };
        assert_same(&strip(&kineto[key]), &strip(&rocpd[key]), &format!("ranks: `{key}`"));
    }
}

/// Removes what only names the files (paths, sizes, event counts, profiler, launch API names).
fn strip_sources(v: &mut Value) {
    match v {
        Value::Object(o) => {
            // Its value counts the events read: a row is not a JSON event.
            if o.get("id").is_some_and(|id| id == "trace_complete") {
                o.remove("value");
            }
            for k in
                ["source", "path", "bytes", "events", "profiler", "apis", "base_time_ns", "message", "file"]
            {
                o.remove(k);
            }
            for (_, x) in o.iter_mut() {
                strip_sources(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_sources),
        _ => {}
    }
}

/// The real sample's dispatches, read here with serde_json: (start, end) in ns on its GPU agent.
fn sample_dispatches(path: &Path) -> Vec<(i64, i64)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let tool = &doc["rocprofiler-sdk-tool"][0];
    let gpus: Vec<&Value> = tool["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == 2)
        .map(|a| &a["id"]["handle"])
        .collect();
    let dispatches = tool["buffer_records"]["kernel_dispatch"].as_array().unwrap();
    let on_gpu = |d: &&Value| gpus.contains(&&d["dispatch_info"]["agent_id"]["handle"]);
    dispatches
        .iter()
        .filter(on_gpu)
        .map(|d| (d["start_timestamp"].as_i64().unwrap(), d["end_timestamp"].as_i64().unwrap()))
        .collect()
}

#[test]
fn the_real_rocprofv3_sample_against_a_naive_union() {
    let Some(shared) = shared_dir() else { return };
    let path = shared.join("formats/rocprofv3/gfx950_908_results.json.gz");
    let mut spans = sample_dispatches(&path);
    assert_eq!(spans.len(), 43_915, "SOURCES.md: 43,915 kernel dispatches");
    // The naive union: sort by start, merge what overlaps or touches, sum; gaps between merged spans.
    spans.sort();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let busy: i64 = merged.iter().map(|(s, e)| e - s).sum();
    let window = merged.last().unwrap().1 - merged[0].0;
    let gaps: Vec<i64> = merged.windows(2).map(|w| w[1].0 - w[0].1).filter(|g| *g > 0).collect();
    let over_100us = gaps.iter().filter(|g| **g > 100_000).count();

    let (code, v) = analyze_json(&path, &[]);
    assert_eq!(code, 0, "no graph replay: skip, exit 0");
    assert_eq!(v["trace"]["profiler"], "rocprofv3 json");
    let devices = v["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1, "one gfx950 agent");
    let d = &devices[0];
    assert_eq!(d["activities"], 43_915);
    let us = |ns: i64| ns as f64 / 1000.0;
    assert!(
        (d["busy_us"].as_f64().unwrap() - us(busy)).abs() < 1e-6,
        "busy {} against {}",
        d["busy_us"],
        us(busy)
    );
    assert!((d["window_us"].as_f64().unwrap() - us(window)).abs() < 1e-6);
    let fraction = busy as f64 / window as f64;
    assert!(
        (d["occupancy"].as_f64().unwrap() - fraction).abs() < 1e-12,
        "{} against {fraction}",
        d["occupancy"]
    );
    assert_eq!(d["gaps"]["count"], gaps.len() as u64);
    assert_eq!(d["gaps"]["over_threshold"], over_100us as u64);
    // No HIP API records in the sample: no launches, and the verdict says so instead of judging.
    assert_eq!(v["graph_launches"]["count"], 0);
    assert_eq!(v["verdict"], "skip");
}

#[test]
fn a_rocprofv3_sample_is_read_from_standard_input_as_kineto_only() {
    // Standard input cannot be read twice: it is read as Kineto, and a rocprofv3 file there is
    // refused in one line naming what was expected.
    let Some(shared) = shared_dir() else { return };
    let path = shared.join("formats/rocprofv3/gfx950_908_results.json.gz");
    let out = launchguard().args(["analyze", "-"]).pipe_stdin(&path).unwrap().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
