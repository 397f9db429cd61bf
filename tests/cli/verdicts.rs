//! Verdicts on traces and runs the tests were not tuned on, made here from the shared traces:
//! a renamed kernel in a regressed run, runs on another GPU or vendor, healthy traces that must
//! not warn, one rank of a run analyzed alone, `--within` a host span.

use serde_json::{json, Value};

use crate::util::*;

/// Runs `launchguard args…`; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = launchguard().args(args).env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn compare_json(baseline: &str, current: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["compare", baseline, current, "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}")))
}

#[test]
fn a_renamed_kernel_in_a_regressed_run_is_a_change_reported_and_the_regression_fails() {
    let (Some(healthy), Some(delayed)) =
        (shared("h200/healthy_clean.json.gz"), shared("h200/delay270_clean.json.gz"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A torch upgrade picks another cuBLAS kernel: one GEMM's name changes in every replay.
    let old = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_TNT";
    let new = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_TNN";
    let mut doc = read_trace(&delayed);
    let mut renamed = 0;
    for e in events_mut(&mut doc).iter_mut().filter(|e| is_gpu_activity(e) && e["name"] == old) {
        e["name"] = json!(new);
        renamed += 1;
    }
    assert_eq!(renamed, 400, "one kernel of each of the 100 replays, 4 per replay");
    let current = write_trace(dir.path(), "delayed_renamed.json.gz", &doc);
    let junit = dir.path().join("c.xml");
    let (code, c) = compare_json(
        healthy.to_str().unwrap(),
        current.to_str().unwrap(),
        &["--junit", junit.to_str().unwrap()],
    );
    assert_eq!(
        (code, c["verdict"].as_str(), c["comparable"].as_bool()),
        (1, Some("fail"), Some(true)),
        "{c:#}"
    );
    let names =
        c["differences"].as_array().unwrap().iter().find(|d| d["field"] == "graph.kernel_names").unwrap();
    assert_eq!(names["blocking"], false, "{names}");
    // The delay before each launch is what regressed: the GPU waits before every replay.
    let idle = c["metrics"].as_array().unwrap().iter().find(|m| m["id"] == "idle_before").unwrap();
    assert_eq!(idle["status"], "fail", "{idle:#}");
    // The renamed kernel is named as it is: vanished from the baseline's, appeared in the current.
    let text = serde_json::to_string(&c["kernels"]).unwrap();
    assert!(text.contains(old) && text.contains(new), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failures = doc.descendants().filter(|n| n.has_tag_name("failure")).count();
    assert!(failures >= 1, "{xml}");
}

#[test]
fn runs_on_another_gpu_or_vendor_are_an_unusable_comparison_exit_2() {
    let Some(healthy) = shared("h200/healthy_clean.json.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    // The same trace as if ROCm had written it: another vendor.
    let mut doc = read_trace(&healthy);
    let obj = doc.as_object_mut().unwrap();
    obj.remove("cupti_version");
    obj.insert("roctracer_version".into(), json!(4.1));
    let amd = write_trace(dir.path(), "amd.json.gz", &doc);
    let (code, c) = compare_json(healthy.to_str().unwrap(), amd.to_str().unwrap(), &[]);
    assert_eq!((code, c["verdict"].as_str()), (2, Some("inconclusive")), "{c:#}");
    let reason = c["reason"].as_str().unwrap();
    assert!(reason.contains("vendor NVIDIA (baseline) vs AMD (current)"), "{reason}");
    let (code, out, _) = run(&["compare", healthy.to_str().unwrap(), amd.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.contains("verdict: INCONCLUSIVE (the runs ran on different GPUs: vendor NVIDIA"), "{out}");
    // Forced, the same samples compare and nothing regressed.
    let (code, c) = compare_json(healthy.to_str().unwrap(), amd.to_str().unwrap(), &["--force"]);
    assert_eq!((code, c["verdict"].as_str()), (0, Some("warn")), "{c:#}");
}

/// A warning is a finding someone should act on. The healthy traces' idle time lies between
/// kernels inside each replay (the GPU waits 4–5 µs before each, counted here from the events),
/// so they pass; the starved ones still fail.
#[test]
fn healthy_traces_pass_without_a_warning_and_starved_ones_fail() {
    let Some(dir) = shared_dir() else { return };
    let t = dir.join("traces");
    for (input, want) in [
        (t.join("h200/healthy_clean.json.gz"), "pass"),
        (t.join("h200/healthy_refresh.json.gz"), "pass"),
        (repo_root().join("examples/healthy_clean.json.gz"), "pass"),
        (t.join("h200x2"), "pass"),
        (t.join("h200/delay270_clean.json.gz"), "fail"),
        (t.join("h200/delay270_refresh.json.gz"), "fail"),
        (repo_root().join("examples/delay270_clean.json.gz"), "fail"),
    ] {
        let (code, v) = analyze_json(&input, &[]);
        assert_eq!(v["verdict"], want, "{}: {:#}", input.display(), v["checks"]);
        assert_eq!(code, if want == "fail" { 1 } else { 0 });
        if want == "pass" && v["ranks"].is_null() {
            // The GPU's wait before each replay after the first, from the events by hand: the
            // gap between a replay's first kernel and the end of all GPU work before it.
            let doc = read_trace(&input);
            let mut gpu: Vec<(f64, f64)> = doc["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| is_gpu_activity(e))
                .map(|e| (ts(e), end(e)))
                .collect();
            gpu.sort_by(|a, b| a.0.total_cmp(&b.0));
            let first_of: std::collections::HashMap<u64, f64> = {
                let mut m = std::collections::HashMap::new();
                for e in doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)) {
                    if let Some(c) = correlation(e) {
                        let s = m.entry(c).or_insert(f64::INFINITY);
                        *s = f64::min(*s, ts(e));
                    }
                }
                m
            };
            let mut waits: Vec<f64> = graph_launches(&doc)
                .iter()
                .skip(1)
                .filter_map(|l| first_of.get(&correlation(l)?).copied())
                .map(|start| {
                    let before =
                        gpu.iter().filter(|g| g.0 < start).map(|g| g.1).fold(f64::NEG_INFINITY, f64::max);
                    (start - before).max(0.0)
                })
                .collect();
            waits.sort_by(f64::total_cmp);
            let median = waits[waits.len() / 2];
            assert!(median < 20.0, "{}: {median}", input.display());
            let occ = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "occupancy").unwrap();
            let msg = occ["message"].as_str().unwrap();
            assert!(msg.contains("passes") || occ["value"].as_f64().unwrap() >= 0.9, "{msg}");
        }
    }
}

/// The GPU record of a trace by hand: activities, and the span from the first start to the last
/// end, µs.
fn gpu_record(doc: &Value) -> (usize, f64) {
    let gpu: Vec<&Value> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)).collect();
    let lo = gpu.iter().map(|e| ts(e)).fold(f64::INFINITY, f64::min);
    let hi = gpu.iter().map(|e| end(e)).fold(f64::NEG_INFINITY, f64::max);
    (gpu.len(), hi - lo)
}

#[test]
fn within_a_host_span_measures_the_gpu_work_launched_inside_it_and_never_past_the_trace() {
    let Some(src) = shared("h200/healthy_clean.json.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    // Host spans only (vLLM annotates its steps on the CPU): each `probe::replay` span ends long
    // before its kernels run (the host is ms ahead).
    let mut doc = read_trace(&src);
    events_mut(&mut doc).retain(|e| e["cat"] != "gpu_user_annotation");
    let (activities, record_us) = gpu_record(&doc);
    let host_only = write_trace(dir.path(), "host_spans.json.gz", &doc);
    let (code, v) = analyze_json(&host_only, &["--within", "probe::replay"]);
    assert_eq!(code, 0, "{v:#}");
    let d = &v["devices"][0];
    assert_eq!(d["activities"].as_u64(), Some(activities as u64));
    assert!((d["window_us"].as_f64().unwrap() - record_us).abs() < 0.01, "{} vs {record_us}", d["window_us"]);
    assert!(
        v["within_rule"].as_str().unwrap().contains("launched inside them (by correlation)"),
        "{}",
        v["within_rule"]
    );

    // A step span longer than the GPU record (xDiT's ProfilerStep) must not widen the window.
    let first = graph_launches(&doc)[0].clone();
    let mut long = doc.clone();
    events_mut(&mut long).push(json!({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0",
        "pid": first["pid"], "tid": first["tid"], "ts": ts(&first) - 10_000.0, "dur": record_us + 40_000.0}));
    let path = write_trace(dir.path(), "long_step.json.gz", &long);
    let (_, v) = analyze_json(&path, &["--within", "ProfilerStep"]);
    assert!(
        v["devices"][0]["window_us"].as_f64().unwrap() <= record_us + 0.01,
        "{}",
        v["devices"][0]["window_us"]
    );
    // The same without correlation ids on the host calls: the span in time, cut to the record.
    for e in events_mut(&mut long).iter_mut().filter(|e| e["cat"] == "cuda_runtime") {
        e["args"].as_object_mut().map(|a| a.remove("correlation"));
    }
    let path = write_trace(dir.path(), "long_step_uncorrelated.json.gz", &long);
    let (_, v) = analyze_json(&path, &["--within", "ProfilerStep"]);
    assert!(
        v["within_rule"].as_str().unwrap().contains("in time, within the GPU's record"),
        "{}",
        v["within_rule"]
    );
    let w = v["devices"][0]["window_us"].as_f64().unwrap();
    assert!((w - record_us).abs() < 0.01, "{w} vs {record_us}");
}

/// The healthy TP=2 pair with rank 1's host 400 µs late before every launch after the first: its
/// GPU work from each replay on starts 400 µs later, and rank 0's first all-reduce of each replay
/// waits those 400 µs for it (everything after on rank 0 shifts with it).
fn slow_rank1_pair(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    const DELAY: f64 = 400.0;
    let pair = shared("h200x2")?;
    let out = dir.join("slow");
    std::fs::create_dir(&out).unwrap();
    let first_kernel = |doc: &Value, c: u64, collective: bool| -> Value {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| is_gpu_activity(e) && correlation(e) == Some(c))
            .filter(|e| !collective || e["name"].as_str().unwrap().starts_with("ncclDevKernel"))
            .min_by(|a, b| ts(a).total_cmp(&ts(b)))
            .cloned()
            .unwrap()
    };
    let count_le = |v: &[f64], t: f64| v.iter().filter(|&&b| b <= t).count() as f64;
    // Rank 1: host events from each launch on, GPU events from each replay's first kernel on.
    let mut r1 = read_trace(&pair.join("tp2_rank1.json.gz"));
    let launches = graph_launches(&r1);
    let host: Vec<f64> = launches[1..].iter().map(ts).collect();
    let gpu: Vec<f64> =
        launches[1..].iter().map(|l| ts(&first_kernel(&r1, correlation(l).unwrap(), false))).collect();
    for e in events_mut(&mut r1).iter_mut().filter(|e| e.get("ts").is_some()) {
        let t = ts(e);
        let k = count_le(if is_gpu_activity(e) { &gpu } else { &host }, t);
        e["ts"] = json!(t + DELAY * k);
    }
    write_trace(&out, "tp2_rank1.json.gz", &r1);
    // Rank 0: each replay's first all-reduce lasts 400 µs longer; what starts after it shifts.
    let mut r0 = read_trace(&pair.join("tp2_rank0.json.gz"));
    let waits: Vec<f64> = graph_launches(&r0)[1..]
        .iter()
        .map(|l| ts(&first_kernel(&r0, correlation(l).unwrap(), true)))
        .collect();
    for e in events_mut(&mut r0).iter_mut().filter(|e| e.get("ts").is_some()) {
        let t = ts(e);
        let before = waits.iter().filter(|&&b| b < t).count() as f64;
        if is_gpu_activity(e) && waits.contains(&t) {
            e["dur"] = json!(e["dur"].as_f64().unwrap() + DELAY);
        }
        e["ts"] = json!(t + DELAY * before);
    }
    write_trace(&out, "tp2_rank0.json.gz", &r0);
    Some(out)
}

#[test]
fn the_rank_that_makes_the_others_wait_is_named_and_a_lone_rank_says_what_it_cannot_see() {
    let Some(healthy) = shared("h200x2") else { return };
    let dir = tempfile::tempdir().unwrap();
    let slow = slow_rank1_pair(dir.path()).unwrap();
    let (code, v) = analyze_json(&slow, &[]);
    assert_eq!(code, 1);
    let across = &v["across"];
    assert_eq!((across["culprit"].as_u64(), across["worst_rank"].as_u64()), (Some(1), Some(1)), "{across:#}");
    assert_eq!(across["waiting"], json!([0]));
    let ranks = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "ranks").unwrap();
    assert!(ranks["message"].as_str().unwrap().contains("rank 1 makes the others wait"), "{ranks}");
    assert!(ranks["message"].as_str().unwrap().contains("rank 0 waits for it"), "{ranks}");
    // The healthy pair: nobody waits, and a rank last by under a µs is no straggler.
    let (code, v) = analyze_json(&healthy, &[]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("pass")));
    assert!(v["across"]["culprit"].is_null(), "{:#}", v["across"]);
    assert!(v["across"]["skew"]["gpu_start"]["p50_us"].as_f64().unwrap() < 20.0);
    assert!(v["across"]["skew"]["straggler"].is_null(), "{:#}", v["across"]["skew"]);
    // One rank alone: says which of how many; the waiting rank of the slow pair does not pass.
    for (path, want) in
        [(healthy.join("tp2_rank0.json.gz"), "pass"), (slow.join("tp2_rank0.json.gz"), "warn")]
    {
        let (_, v) = analyze_json(&path, &[]);
        let c = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "ranks").unwrap();
        assert!(c["message"].as_str().unwrap().starts_with("rank 0 of 2 analyzed alone"), "{c}");
        assert_eq!(c["status"], want, "{}: {c}", path.display());
        assert_eq!(v["verdict"], want, "{}", path.display());
    }
}

/// `compare` of the healthy pair with the pair whose rank 1 is 400 µs late before each launch
/// leads with rank 1, the rank that makes the other wait: its figures and kernels first, its
/// regression in the verdict's reason and in the first failing check; rank 0, whose all-reduces
/// wait for it, is called waiting, in every format.
#[test]
fn compare_leads_with_the_rank_that_makes_the_others_wait_and_calls_the_others_waiting() {
    let Some(healthy) = shared("h200x2") else { return };
    let dir = tempfile::tempdir().unwrap();
    let slow = slow_rank1_pair(dir.path()).unwrap();
    let (b, c) = (healthy.to_str().unwrap(), slow.to_str().unwrap());
    let (code, v) = compare_json(b, c, &[]);
    assert_eq!((code, v["verdict"].as_str()), (1, Some("fail")));
    assert_eq!((v["current"]["culprit"].as_u64(), &v["current"]["waiting"]), (Some(1), &json!([0])));
    assert!(v["baseline"]["culprit"].is_null(), "{}", v["baseline"]);
    // By construction rank 1's GPU idles 400 µs longer before each replay after the first, and
    // its host takes 400 µs longer from one launch to the next.
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("rank 1 makes the others wait: ")
            && reason.contains("GPU idle before each replay +400.0 µs")
            && reason.contains("; rank 0 waits for it ("),
        "{reason}"
    );
    let ranks_of = |key: &str| -> Vec<u64> {
        v[key].as_array().unwrap().iter().map(|m| m["rank"].as_u64().unwrap()).collect()
    };
    let metrics = ranks_of("metrics");
    assert_eq!(metrics.iter().position(|&r| r == 0), Some(metrics.iter().filter(|&&r| r == 1).count()));
    assert_eq!(ranks_of("kernels"), [1, 0]);
    // The checks: rank 1's first, each naming it; rank 0's GPU time per replay (which grew only
    // by its wait) called waiting.
    let (_, text, _) = run(&["compare", b, c, "--color", "never", "--width", "400"]);
    let failed: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(failed[0].contains(": rank 1, which makes the others wait (worst of ranks 0, 1): "), "{text}");
    let span = failed.iter().find(|l| l.starts_with("FAIL compare.gpu_span: ")).unwrap();
    assert!(span.contains("rank 0, waiting for rank 1 (worst of ranks 0, 1)"), "{span}");
    let by_rank1 = failed.iter().take_while(|l| l.contains("rank 1, which makes")).count();
    assert_eq!(by_rank1, failed.iter().filter(|l| l.contains("rank 1, which makes")).count());
    let first_row = text.lines().find(|l| l.starts_with("rank ")).unwrap();
    assert!(first_row.starts_with("rank 1: "), "{text}");
    assert!(text.contains(&format!("verdict: FAIL ({reason})")), "{text}");
    let md = dir.path().join("c.md");
    let (code, _, _) = run(&["compare", b, c, "--markdown", md.to_str().unwrap()]);
    assert_eq!(code, 1);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("rank 1 makes the others wait: "), "{md}");
    // The healthy pair against itself: nobody makes the others wait, nothing to lead with.
    let (code, v) = compare_json(b, b, &[]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("pass")));
    assert!(v["reason"].is_null() && v["current"]["culprit"].is_null(), "{v}");
}
