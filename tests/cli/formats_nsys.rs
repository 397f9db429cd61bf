//! Nsight Systems SQLite exports (issue 36): fixtures converted from real H200 Kineto traces
//! (tests/cli/convert.rs) give the Kineto original's figures exactly; the three real exports in
//! `../shared/formats/nsys` against counts and a naive union computed here with SQL; a recording
//! made at graph level is said to be one, and not judged as an idle GPU.

use rusqlite::Connection;

use crate::convert::{read_kineto, write_nsys};
use crate::formats_rocprof::{assert_same, figures, within_reads_the_ranges};
use crate::util::{analyze_json, launchguard, shared_dir};

#[test]
fn nsys_made_from_h200_traces_gives_the_kineto_figures() {
    let Some(shared) = shared_dir() else { return };
    for trace in ["h200/healthy_clean.json.gz", "h200/healthy_refresh.json.gz", "h200/delay270_clean.json.gz"]
    {
        let original = shared.join("traces").join(trace);
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("report.sqlite");
        write_nsys(&read_kineto(&original), &db);
        let (code_k, kineto) = analyze_json(&original, &[]);
        let (code_n, nsys) = analyze_json(&db, &[]);
        assert_eq!(nsys["trace"]["profiler"], "nsys");
        assert_eq!(nsys["graph_launches"]["apis"], kineto["graph_launches"]["apis"]);
        let same = |n: &str| n.to_string();
        assert_same(&figures(&kineto, &same), &figures(&nsys, &same), &format!("{trace} as nsys"));
        assert_eq!(code_k, code_n);
        within_reads_the_ranges(&db);
    }
}

/// Per device: (GPU activities, busy ns, window ns, gaps) from the export's own tables, by a
/// naive union in Rust over the rows SQL returns.
fn naive(path: &std::path::Path) -> Vec<(i64, usize, i64, i64, usize)> {
    let db = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY 1, 2",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    let mut out = Vec::new();
    for device in rows.iter().map(|r| r.0).collect::<std::collections::BTreeSet<_>>() {
        let spans: Vec<(i64, i64)> = rows.iter().filter(|r| r.0 == device).map(|r| (r.1, r.2)).collect();
        let mut merged: Vec<(i64, i64)> = Vec::new();
        for &(s, e) in &spans {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let busy = merged.iter().map(|(s, e)| e - s).sum();
        let window = merged.last().unwrap().1 - merged[0].0;
        let gaps = merged.windows(2).filter(|w| w[1].0 > w[0].1).count();
        out.push((device, spans.len(), busy, window, gaps));
    }
    out
}

#[test]
fn the_real_nsys_exports_against_their_own_tables() {
    let Some(shared) = shared_dir() else { return };
    for name in ["h100_2gpu_1s.sqlite", "mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite"] {
        let path = shared.join("formats/nsys").join(name);
        let want = naive(&path);
        assert_eq!(want.len(), 2, "{name}: SOURCES.md says 2 GPUs");
        let (code, v) = analyze_json(&path, &[]);
        assert_eq!(code, 0, "{name}: eager launches, no graph replay: skip");
        assert_eq!(v["verdict"], "skip");
        let devices = v["devices"].as_array().unwrap();
        assert_eq!(devices.len(), want.len(), "{name}");
        for (d, (id, n, busy, window, gaps)) in devices.iter().zip(&want) {
            assert_eq!(d["device"], id.to_string(), "{name}");
            assert_eq!(d["activities"], *n as u64, "{name} GPU {id}");
            assert!((d["busy_us"].as_f64().unwrap() - *busy as f64 / 1000.0).abs() < 1e-6, "{name} GPU {id}");
            assert!(
                (d["window_us"].as_f64().unwrap() - *window as f64 / 1000.0).abs() < 1e-6,
                "{name} GPU {id}"
            );
            assert_eq!(d["gaps"]["count"], *gaps as u64, "{name} GPU {id}");
        }
        // Kernels named through StringIds, copies as Kineto names them through the enum tables.
        let names: Vec<&str> =
            v["kernels"]["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
        assert!(names.iter().any(|n| n.starts_with("Memcpy ") && n.contains(" -> ")), "{name}: {names:?}");
        assert!(!names.iter().any(|n| n.is_empty()), "{name}: an unnamed kernel");
    }
}

#[test]
fn the_real_before_and_after_exports_compare() {
    let Some(shared) = shared_dir() else { return };
    let dir = shared.join("formats/nsys");
    let out = launchguard()
        .args(["compare", "--format", "json", "--force"])
        .arg(dir.join("mfu_2gpu_before.sqlite"))
        .arg(dir.join("mfu_2gpu_after.sqlite"))
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "exit {code}: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "launchguard.compare/1");
}

#[test]
fn a_graph_level_recording_is_said_and_not_judged_idle() {
    let Some(shared) = shared_dir() else { return };
    let original = shared.join("traces/h200/healthy_clean.json.gz");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("graph_level.sqlite");
    write_nsys(&read_kineto(&original), &db);
    // What nsys writes under --cuda-graph-trace=graph: no kernel rows for the kernels a graph
    // launch ran, one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per launch, from its first kernel's start
    // to its last kernel's end (the Nsight Systems schema reference's GRAPH_TRACE table).
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, graphExecId INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, streamId, correlationId, graphId)
           SELECT MIN(K.start), MAX(K.end), K.deviceId, 1, K.streamId, K.correlationId, 1
           FROM CUPTI_ACTIVITY_KIND_KERNEL K JOIN CUPTI_ACTIVITY_KIND_RUNTIME R ON R.correlationId = K.correlationId
           JOIN StringIds S ON S.id = R.nameId WHERE S.value LIKE 'cudaGraphLaunch%' GROUP BY K.correlationId;
         DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE);",
    )
    .unwrap();
    let replays: i64 =
        conn.query_row("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE", [], |r| r.get(0)).unwrap();
    assert_eq!(replays, 100);
    drop(conn);
    let out = launchguard().args(["analyze", "--format", "json"]).arg(&db).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cuda-graph-trace=graph") && err.contains("--cuda-graph-trace=node"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // One GPU span per replay: the GPU is busy while the graph runs, not idle.
    assert_eq!(v["replay_summary"]["kernels_mode"], 1);
    let occupancy = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "occupancy").unwrap();
    assert_ne!(occupancy["status"], "fail", "{occupancy}");
    assert!(v["devices"][0]["occupancy"].as_f64().unwrap() >= 0.898, "{}", v["devices"][0]["occupancy"]);
}
