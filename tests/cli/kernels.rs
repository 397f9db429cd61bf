//! The kernel table (`kernels` of `launchguard.analysis/1`) against the oracle's naive
//! computation, on real traces: one graph replayed on one stream (H200), a TP=2 rank with its
//! all-reduces, and an eager trace on several streams (A100).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::oracle::{self, KernelRow};
use crate::util::*;

/// Asserts that the JSON rows are the oracle's: same names, exact counts, times within 2 ns per
/// activity summed (the oracle adds f64 µs), shares within 1e-9.
fn assert_rows(what: &str, got: &Value, want: &BTreeMap<String, KernelRow>) {
    let rows = got.as_array().unwrap_or_else(|| panic!("{what}: rows"));
    assert_eq!(rows.len(), want.len(), "{what}: one row per name");
    let mut last_total = f64::INFINITY;
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let w = want.get(name).unwrap_or_else(|| panic!("{what}: {name} not in the oracle"));
        let f = |k: &str| r[k].as_f64().unwrap();
        assert_eq!(r["count"].as_u64(), Some(w.count), "{what} {name}");
        let tol = 0.002 * w.count as f64;
        assert!(
            (f("total_us") - w.total_us).abs() <= tol,
            "{what} {name} total: {} vs {}",
            f("total_us"),
            w.total_us
        );
        for (key, want) in
            [("mean_us", w.mean_us), ("p50_us", w.p50_us), ("p99_us", w.p99_us), ("max_us", w.max_us)]
        {
            assert!((f(key) - want).abs() <= 0.002, "{what} {name} {key}: {} vs {want}", f(key));
        }
        assert!((f("share") - w.share).abs() <= 1e-9, "{what} {name} share: {} vs {}", f("share"), w.share);
        // Longest total first.
        assert!(f("total_us") <= last_total, "{what}: sorted by total");
        last_total = f("total_us");
    }
    let shares: f64 = rows.iter().map(|r| r["share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{what}: the shares of a scope add up to 1 ({shares})");
}

/// The table of `trace` matches the oracle's over the trace, per stream and per graph.
fn assert_kernel_table(trace: &Path) -> Value {
    let (_, doc) = analyze_json(trace, &[]);
    let doc = if doc["schema"] == "launchguard.analysis-ranks/1" {
        doc["ranks"][0]["analysis"].clone()
    } else {
        doc
    };
    let k = &doc["kernels"];
    let want = oracle::kernel_table(&oracle::load(trace));
    assert_rows("trace", &k["kernels"], &want.all);
    assert_eq!(k["activities"].as_u64().unwrap(), want.all.values().map(|r| r.count).sum::<u64>());
    // Streams: listed for a device with several; one stream has the trace's own table.
    let streams = k["streams"].as_array().unwrap();
    if want.streams.len() > 1 {
        assert_eq!(streams.len(), want.streams.len(), "one table per stream");
        for s in streams {
            let key = (s["device"].as_str().unwrap().to_string(), s["stream"].as_str().unwrap().to_string());
            assert_rows(&format!("stream {key:?}"), &s["kernels"], &want.streams[&key]);
        }
    } else {
        assert!(streams.is_empty());
    }
    let graphs = k["graphs"].as_array().unwrap();
    assert_eq!(graphs.len(), want.graphs.len(), "graphs");
    for (i, (g, (replays, per_replay, rows))) in graphs.iter().zip(&want.graphs).enumerate() {
        assert_eq!(
            (g["replays"].as_u64(), g["kernels_per_replay"].as_u64()),
            (Some(*replays), Some(*per_replay))
        );
        assert_rows(&format!("graph {}", g["graph"]), &g["kernels"], rows);
        // The analysis's own graphs, numbered alike.
        let same = &doc["replay_summary"]["graphs"][i];
        assert_eq!(
            (g["graph"].as_u64(), same["replays"].as_u64(), same["kernels"].as_u64()),
            (Some(i as u64), Some(*replays), Some(*per_replay))
        );
    }
    doc
}

#[test]
fn one_graph_on_one_stream() {
    let doc = assert_kernel_table(&repo_root().join("examples/healthy_clean.json.gz"));
    // 100 replays of one 44-kernel graph (the README's example), 8 distinct kernels.
    let k = &doc["kernels"];
    assert_eq!(k["graphs"].as_array().unwrap().len(), 1);
    assert_eq!(
        (k["graphs"][0]["replays"].as_u64(), k["graphs"][0]["kernels_per_replay"].as_u64()),
        (Some(100), Some(44))
    );
    assert_eq!(k["kernels"].as_array().unwrap().len(), 8);
}

#[test]
fn a_tensor_parallel_rank_with_its_all_reduces() {
    let Some(shared) = shared_dir() else { return };
    let doc = assert_kernel_table(&shared.join("traces/h200x2/tp2_rank0.json.gz"));
    let names: Vec<&str> =
        doc["kernels"]["kernels"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.starts_with("ncclDevKernel_AllReduce")), "{names:?}");
}

#[test]
fn fourteen_graphs_each_with_its_kernels() {
    let Some(shared) = shared_dir() else { return };
    let doc = assert_kernel_table(&shared.join("traces/public/cuda/a100_graph_launches_rank0.json.gz"));
    assert_eq!(doc["kernels"]["graphs"].as_array().unwrap().len(), 14);
}

#[test]
fn an_eager_trace_on_several_streams() {
    let Some(shared) = shared_dir() else { return };
    let doc = assert_kernel_table(&shared.join("traces/public/cuda/a100_trace_diff_control.json.gz"));
    assert!(doc["kernels"]["graphs"].as_array().unwrap().is_empty(), "no graph replay");
}

/// The rows of a CSV file, each a map from the header's names.
fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(str::to_string)).collect())
        .collect()
}

#[test]
fn the_csv_files_hold_the_json_rows() {
    let Some(shared) = shared_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = launchguard()
        .arg("analyze")
        .arg(shared.join("traces/h200x2"))
        .args(["--format", "json", "--csv"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every rank's kernel rows over its trace and per graph, with full names and exact figures.
    let kernels = csv_rows(&dir.path().join("kernels.csv"));
    let mut want = 0;
    for rank in doc["ranks"].as_array().unwrap() {
        let k = &rank["analysis"]["kernels"];
        let number = rank["rank"].to_string();
        for (scope, rows) in [("trace", &k["kernels"]), ("graph", &k["graphs"][0]["kernels"])] {
            for row in rows.as_array().unwrap() {
                want += 1;
                let found = kernels
                    .iter()
                    .find(|c| {
                        c["rank"] == number
                            && c["scope"] == scope
                            && c["name"] == row["name"].as_str().unwrap()
                    })
                    .unwrap_or_else(|| panic!("{scope} {} in kernels.csv", row["name"]));
                assert_eq!(found["count"], row["count"].to_string());
                assert_eq!(found["total_us"].parse::<f64>().unwrap(), row["total_us"].as_f64().unwrap());
                assert_eq!(found["p99_us"].parse::<f64>().unwrap(), row["p99_us"].as_f64().unwrap());
            }
        }
    }
    assert_eq!(kernels.len(), want, "one CSV row per JSON row");
    // A row per replay of each rank; two rows per rank (own and common window).
    let replays = csv_rows(&dir.path().join("replays.csv"));
    assert_eq!(replays.len(), 200);
    assert!(replays.iter().all(|r| r["graph"] == "0"), "one graph per rank");
    assert_eq!(
        replays[0]["launch_us"].parse::<f64>().unwrap(),
        doc["ranks"][0]["analysis"]["replays"][0]["launch_us"].as_f64().unwrap()
    );
    let ranks = csv_rows(&dir.path().join("ranks.csv"));
    assert_eq!(ranks.len(), 4);
    let worst = doc["across"]["worst_rank"].to_string();
    assert!(ranks.iter().all(|r| (r["worst"] == "true") == (r["rank"] == worst)));
    // Every gap of each rank: as many as the JSON counts.
    let gaps = csv_rows(&dir.path().join("gaps.csv"));
    let counted: u64 = doc["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["analysis"]["devices"][0]["gaps"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(gaps.len() as u64, counted);
}
