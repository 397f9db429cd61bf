//! Traces that lost GPU events get the verdict `inconclusive` (exit 2, the report still printed),
//! naming what was lost and how it was told; no real trace we hold does. The damaged traces are
//! made here from the shared H200 traces, the way profilers lose events: at random, one replay in
//! N kept, tracing stopped early, the profiler's own drop counter.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

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

/// Graph launches whose correlation id no GPU activity of `doc` carries, counted by the test
/// itself from the events.
fn launches_without_gpu_work(doc: &Value) -> usize {
    let with: HashSet<u64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_gpu_activity(e))
        .filter_map(correlation)
        .collect();
    graph_launches(doc).iter().filter(|l| correlation(l).is_none_or(|c| !with.contains(&c))).count()
}

/// `src` with its GPU activities kept where `keep` says.
fn damaged(src: &Path, dir: &Path, name: &str, mut keep: impl FnMut(&Value) -> bool) -> (PathBuf, Value) {
    let mut doc = read_trace(src);
    events_mut(&mut doc).retain(|e| !is_gpu_activity(e) || keep(e));
    (write_trace(dir, name, &doc), doc)
}

/// The three losses the issue measured on the healthy reference trace.
fn three_damages(src: &Path, dir: &Path) -> Vec<(&'static str, PathBuf, Value)> {
    let doc = read_trace(src);
    let mut rng = Seeded(30);
    let (drop90, d1) = damaged(src, dir, "drop90.json.gz", |_| rng.next() >= 0.9);
    let kept: HashSet<u64> = graph_launches(&doc)
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 0)
        .filter_map(|(_, l)| correlation(l))
        .collect();
    let (one_in_ten, d2) =
        damaged(src, dir, "one_in_ten.json.gz", |e| correlation(e).is_some_and(|c| kept.contains(&c)));
    let gpu: Vec<&Value> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)).collect();
    let lo = gpu.iter().map(|e| ts(e)).fold(f64::INFINITY, f64::min);
    let hi = gpu.iter().map(|e| end(e)).fold(f64::NEG_INFINITY, f64::max);
    let cut = lo + (hi - lo) / 3.0;
    let (third, d3) = damaged(src, dir, "first_third.json.gz", |e| ts(e) <= cut);
    vec![
        ("90% dropped at random", drop90, d1),
        ("one replay in ten", one_in_ten, d2),
        ("first third only", third, d3),
    ]
}

#[test]
fn traces_that_lost_gpu_events_are_inconclusive_and_say_how_it_was_told() {
    let Some(src) = shared("h200/healthy_clean.json.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    for (what, path, doc) in three_damages(&src, dir.path()) {
        let (code, v) = analyze_json(&path, &[]);
        assert_eq!(code, 2, "{what}");
        assert_eq!(v["verdict"], "inconclusive", "{what}");
        let reason = v["reason"].as_str().unwrap();
        let damage = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "trace_damage").unwrap();
        assert_eq!(damage["status"], "warn", "{what}");
        let without = launches_without_gpu_work(&doc);
        if without >= 10 {
            // One replay in ten kept: 90 without; the first third: the 66 launched after it.
            assert!(
                reason.contains(&format!("{without} of 100 graph launches ran no GPU activity")),
                "{what}: {reason}"
            );
        } else {
            // At random, 44 kernels a replay lose 4 in 10 on average: few replays lose all, and
            // the rest no longer match one another.
            assert!(reason.contains("match no other replay's"), "{what}: {reason}");
        }
        // The report is still printed, with the figures it was given.
        let (code, text, _) = run(&["analyze", path.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(text.contains("occupancy") && text.contains("verdict: INCONCLUSIVE ("), "{what}: {text}");
    }
}

#[test]
fn a_stream_gone_silent_while_launches_go_on_and_the_profilers_drop_counter_are_told() {
    let Some(src) = shared("h200/delay270_clean.json.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    // With 270 µs before each launch the host does not run ahead: the launches after the cut
    // come after the stream's last kernel.
    let doc = read_trace(&src);
    let gpu: Vec<f64> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)).map(end).collect();
    let lo = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_gpu_activity(e))
        .map(ts)
        .fold(f64::INFINITY, f64::min);
    let hi = gpu.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cut = lo + (hi - lo) / 3.0;
    let (path, cut_doc) = damaged(&src, dir.path(), "silent.json.gz", |e| ts(e) <= cut);
    let last_gpu_end = cut_doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_gpu_activity(e))
        .map(end)
        .fold(f64::NEG_INFINITY, f64::max);
    let after = graph_launches(&cut_doc).iter().filter(|l| ts(l) > last_gpu_end).count();
    assert!(after > 30, "{after}");
    let (code, v) = analyze_json(&path, &[]);
    assert_eq!((code, v["verdict"].as_str()), (2, Some("inconclusive")));
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("went silent at")
            && reason.contains(&format!("while {after} more graph launches went on without GPU work")),
        "{reason}"
    );
    assert!(reason.contains("the GPU's record of the replays spans"), "{reason}");

    // Kineto writes its logger's warnings beside the events; CUPTI's drop counter among them.
    let mut doc = read_trace(&src);
    doc["WARNING"] = serde_json::json!(["Dropped 1234 activity records", "an unrelated warning"]);
    let path = write_trace(dir.path(), "dropped.json.gz", &doc);
    let (code, v) = analyze_json(&path, &[]);
    assert_eq!((code, v["verdict"].as_str()), (2, Some("inconclusive")));
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("the profiler says so: \"Dropped 1234 activity records\""), "{reason}");
    assert!(!reason.contains("unrelated"), "{reason}");
}

#[test]
fn every_format_says_inconclusive_and_ranks_and_comparisons_inherit_it() {
    let (Some(src), Some(pair)) = (shared("h200/healthy_clean.json.gz"), shared("h200x2")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_, path, _) = three_damages(&src, dir.path()).swap_remove(1);
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (code, _, err) = run(&[
        "analyze",
        path.to_str().unwrap(),
        "--junit",
        &p("j.xml"),
        "--markdown",
        &p("s.md"),
        "--html",
        &p("r.html"),
    ]);
    assert_eq!(code, 2, "{err}");
    let junit = std::fs::read_to_string(p("j.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let verdict_case = xml
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("verdict"))
        .unwrap();
    let error = verdict_case.children().find(|n| n.has_tag_name("error")).expect("an error testcase");
    assert!(error.attribute("message").unwrap().contains("90 of 100 graph launches"), "{junit}");
    assert!(std::fs::read_to_string(p("s.md")).unwrap().contains("INCONCLUSIVE"));
    assert!(std::fs::read_to_string(p("r.html")).unwrap().contains("v-inconclusive"));

    // One damaged rank makes the run inconclusive, naming the rank.
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    std::fs::copy(pair.join("tp2_rank0.json.gz"), ranks.join("tp2_rank0.json.gz")).unwrap();
    let rank1 = pair.join("tp2_rank1.json.gz");
    let kept: HashSet<u64> = graph_launches(&read_trace(&rank1))
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 0)
        .filter_map(|(_, l)| correlation(l))
        .collect();
    damaged(&rank1, &ranks, "tp2_rank1.json.gz", |e| correlation(e).is_some_and(|c| kept.contains(&c)));
    let (code, v) = analyze_json(&ranks, &[]);
    assert_eq!((code, v["verdict"].as_str()), (2, Some("inconclusive")));
    assert!(v["reason"].as_str().unwrap().starts_with("rank 1: "), "{}", v["reason"]);

    // A comparison with a damaged side cannot be used.
    let (code, out, _) = run(&["compare", src.to_str().unwrap(), path.to_str().unwrap(), "--format", "json"]);
    let c: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, c["verdict"].as_str()), (2, Some("inconclusive")));
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the current run's own verdict is inconclusive (the trace lost GPU events")
            && reason.contains("90 of 100 graph launches ran no GPU activity"),
        "{reason}"
    );
}

/// The damage rule on every real trace we hold: none lost events and none shows impossible
/// causality, so none is inconclusive.
#[test]
fn no_real_trace_is_inconclusive() {
    let Some(shared) = shared_dir() else { return };
    let mut inputs: Vec<PathBuf> =
        shared_traces().into_iter().filter(|p| !p.ends_with("cpu_only_rank34.json.gz")).collect();
    inputs.push(shared.join("traces/h200x2"));
    inputs.extend(
        ["examples/healthy_clean.json.gz", "examples/delay270_clean.json.gz"].map(|p| repo_root().join(p)),
    );
    for format in ["nsys", "rocprofv3"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("formats").join(format))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        inputs.extend(files);
    }
    assert!(inputs.len() >= 22);
    for input in inputs {
        let (code, v) = analyze_json(&input, &[]);
        assert_ne!(code, 2, "{}", input.display());
        assert_ne!(v["verdict"], "inconclusive", "{}: {}", input.display(), v["reason"]);
        let ranks = v["ranks"].as_array().cloned().unwrap_or_default();
        for checks in std::iter::once(&v["checks"]).chain(ranks.iter().map(|r| &r["checks"])) {
            assert!(
                !checks.as_array().unwrap().iter().any(|c| c["id"] == "trace_damage"),
                "{}",
                input.display()
            );
        }
        for figures in std::iter::once(&v).chain(ranks.iter().map(|r| &r["analysis"])) {
            assert_eq!(figures.get("anomalies"), None, "{}", input.display());
        }
    }
}

/// `src` with each graph launch's GPU activities moved so that the first starts `lead_us` before
/// the launch itself (the case: "launch → first kernel p50 −500.0 µs").
fn kernels_before_launches(src: &Path, dir: &Path, name: &str, lead_us: f64) -> PathBuf {
    let mut doc = read_trace(src);
    let launched: HashMap<u64, f64> =
        graph_launches(&doc).iter().filter_map(|l| Some((correlation(l)?, ts(l)))).collect();
    let mut first: HashMap<u64, f64> = HashMap::new();
    for e in doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)) {
        if let Some(c) = correlation(e).filter(|c| launched.contains_key(c)) {
            let t = first.entry(c).or_insert(f64::INFINITY);
            *t = t.min(ts(e));
        }
    }
    for e in events_mut(&mut doc).iter_mut().filter(|e| is_gpu_activity(e)) {
        if let Some(c) = correlation(e).filter(|c| launched.contains_key(c)) {
            e["ts"] = serde_json::json!(ts(e) + (launched[&c] - lead_us - first[&c]));
        }
    }
    write_trace(dir, name, &doc)
}

/// `src` with each odd graph launch (in id order) and its GPU activities given the id of the
/// launch before it: every second id joins two launches.
fn correlation_ids_reused(src: &Path, dir: &Path, name: &str) -> PathBuf {
    let mut doc = read_trace(src);
    let mut ids: Vec<u64> = graph_launches(&doc).iter().filter_map(correlation).collect();
    ids.sort_unstable();
    let to: HashMap<u64, u64> = ids.chunks(2).filter(|c| c.len() == 2).map(|c| (c[1], c[0])).collect();
    for e in events_mut(&mut doc).iter_mut() {
        if let Some(&id) = correlation(e).and_then(|c| to.get(&c)) {
            e["args"]["correlation"] = serde_json::json!(id);
        }
    }
    write_trace(dir, name, &doc)
}

/// Launches whose first GPU activity starts more than `by` µs before them, and correlation ids
/// that several launches carry, counted by the test from the events.
fn impossible(path: &Path, by: f64) -> (usize, usize) {
    let doc = read_trace(path);
    let launches = graph_launches(&doc);
    let gpu: Vec<&Value> =
        doc["traceEvents"].as_array().unwrap().iter().filter(|e| is_gpu_activity(e)).collect();
    let early = launches
        .iter()
        .filter(|l| {
            let c = correlation(l);
            let first =
                gpu.iter().filter(|e| correlation(e) == c).map(|e| ts(e)).fold(f64::INFINITY, f64::min);
            first < ts(l) - by
        })
        .count();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    launches.iter().filter_map(correlation).for_each(|c| *seen.entry(c).or_default() += 1);
    (early, seen.values().filter(|&&n| n > 1).count())
}

/// A trace whose causality is impossible is damaged: kernels that start before their launch
/// (beyond the clocks' skew), one correlation id for several launches. Its verdict is
/// `inconclusive` (exit 2, the report still printed) naming what, where and how many; a lead
/// within the skew is not damage.
#[test]
fn impossible_causality_is_inconclusive_and_says_what_where_and_how_many() {
    let Some(src) = shared("h200/healthy_clean.json.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    let early = kernels_before_launches(&src, dir.path(), "early.json.gz", 500.0);
    let reused = correlation_ids_reused(&src, dir.path(), "reused.json.gz");
    assert_eq!(impossible(&early, 20.0), (100, 0));
    assert_eq!(impossible(&reused, 20.0).1, 50);
    for (path, said) in [
        (&early, "in 100 replays the first GPU activity starts more than 20 µs before its launch (first: launch 0 at "),
        (&reused, "50 correlation ids are each shared by several graph launches (first: correlation "),
    ] {
        let (code, v) = analyze_json(path, &[]);
        assert_eq!((code, v["verdict"].as_str()), (2, Some("inconclusive")), "{said}");
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("the trace's causality is impossible, so it cannot say whether the GPU starved: ")
                && reason.contains(said),
            "{reason}"
        );
        let damage = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "trace_damage").unwrap();
        assert_eq!(damage["status"], "warn");
        let (code, text, err) = run(&["analyze", path.to_str().unwrap(), "--width", "400"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            text.contains("occupancy") && text.contains("verdict: INCONCLUSIVE (the trace's causality"),
            "{text}"
        );
    }
    // The figures are still shown as measured: the p50 of -500 µs from launch to kernel.
    let (_, v) = analyze_json(&early, &[]);
    let p50 = v["replay_summary"]["latency_p50_us"].as_f64().unwrap();
    assert!((p50 + 500.0).abs() < 0.01, "{p50}");
    // The host's and the GPU's clocks disagree by a few µs: a first kernel 5 µs before its
    // launch is no damage.
    let skewed = kernels_before_launches(&src, dir.path(), "skewed.json.gz", 5.0);
    assert_eq!(impossible(&skewed, 0.0).0, 100);
    let (code, v) = analyze_json(&skewed, &[]);
    assert_ne!((code, v["verdict"].as_str()), (2, Some("inconclusive")), "{}", v["reason"]);
    assert_eq!(v.get("anomalies"), None);
}

/// One rank whose causality is impossible makes the run of ranks inconclusive, naming the rank,
/// and a comparison with that run cannot be used (exit 2), whichever side it is.
#[test]
fn a_rank_with_impossible_causality_makes_the_run_and_its_comparison_inconclusive() {
    let Some(pair) = shared("h200x2") else { return };
    let dir = tempfile::tempdir().unwrap();
    let rank1 = pair.join("tp2_rank1.json.gz");
    for (damage, said) in [
        ("early", "in 100 replays the first GPU activity starts more than 20 µs before its launch"),
        ("reused", "50 correlation ids are each shared by several graph launches"),
    ] {
        let ranks = dir.path().join(damage);
        std::fs::create_dir(&ranks).unwrap();
        std::fs::copy(pair.join("tp2_rank0.json.gz"), ranks.join("tp2_rank0.json.gz")).unwrap();
        let damaged = match damage {
            "early" => kernels_before_launches(&rank1, &ranks, "tp2_rank1.json.gz", 500.0),
            _ => correlation_ids_reused(&rank1, &ranks, "tp2_rank1.json.gz"),
        };
        let (early, shared_ids) = impossible(&damaged, 20.0);
        assert_eq!(
            if damage == "early" { early } else { shared_ids },
            if damage == "early" { 100 } else { 50 }
        );
        let (code, v) = analyze_json(&ranks, &[]);
        assert_eq!((code, v["verdict"].as_str()), (2, Some("inconclusive")), "{damage}");
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("rank 1: the trace's causality is impossible") && reason.contains(said),
            "{reason}"
        );
        let (code, text, _) = run(&["analyze", ranks.to_str().unwrap(), "--width", "400"]);
        assert_eq!(code, 2);
        assert!(
            text.contains("verdict: INCONCLUSIVE (rank 1: the trace's causality is impossible"),
            "{text}"
        );
        for (baseline, current, side) in [(&pair, &ranks, "current run"), (&ranks, &pair, "baseline")] {
            let (code, out, err) =
                run(&["compare", baseline.to_str().unwrap(), current.to_str().unwrap(), "--format", "json"]);
            let c: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
            assert_eq!((code, c["verdict"].as_str()), (2, Some("inconclusive")), "{damage} as the {side}");
            let reason = c["reason"].as_str().unwrap();
            assert!(
                reason.starts_with(&format!(
                    "the {side}'s own verdict is inconclusive (rank 1: the trace's causality is impossible"
                )) && reason.contains(said),
                "{reason}"
            );
        }
    }
}
