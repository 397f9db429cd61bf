//! `check` after a successful workload run, where there is no GPU: real H200 runs
//! (tests/data/labeled) replayed through a stand-in interpreter, so the verdict, the exit code,
//! `--json`, `--keep-trace`, baselines and the TP merge are tested on real measurements. And the
//! judge held to the labels: no healthy run fails, every starved run fails, in `check`, in
//! `analyze` of the raw trace, and in `analyze` of the trace `check` kept — which must give
//! `check`'s verdict, check by check.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::*;

/// One labeled run (labels.toml).
#[derive(Debug, Clone)]
struct Run {
    name: String,
    preset: String,
    tp: u32,
    delay_us: f64,
    delay_ranks: Option<Vec<u32>>,
    label: String,
    set: String,
}

fn labeled_dir() -> PathBuf {
    repo_root().join("tests/data/labeled")
}

fn runs() -> Vec<Run> {
    let text = std::fs::read_to_string(labeled_dir().join("labels.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    doc["runs"]
        .as_table()
        .unwrap()
        .iter()
        .map(|(name, r)| Run {
            name: name.clone(),
            preset: r["preset"].as_str().unwrap().to_string(),
            tp: r["tp"].as_integer().unwrap() as u32,
            delay_us: r["inject_delay_us"].as_float().unwrap(),
            delay_ranks: r
                .get("inject_delay_ranks")
                .map(|v| v.as_array().unwrap().iter().map(|x| x.as_integer().unwrap() as u32).collect()),
            label: r["label"].as_str().unwrap().to_string(),
            set: r["set"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// `launchguard check` replaying `run` (recorded in `dir`), with `extra` flags.
fn replay(run: &Run, dir: &Path, extra: &[&str]) -> Output {
    let mut cmd = launchguard();
    cmd.env("LG_REPLAY_DIR", dir)
        .arg("check")
        .arg("--python")
        .arg(labeled_dir().join("replay-python"))
        .args(["--preset", &run.preset, "--tp", &run.tp.to_string()])
        .args(["--inject-delay-us", &run.delay_us.to_string()]);
    if let Some(ranks) = &run.delay_ranks {
        let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
        cmd.args(["--inject-delay-ranks", &list.join(",")]);
    }
    cmd.args(extra).output().unwrap()
}

fn json_of(out: &Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

/// Each check as (id, status, message).
fn checks(v: &Value) -> Vec<(String, String, String)> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn failed(v: &Value) -> Vec<String> {
    checks(v).into_iter().filter(|c| c.1 == "fail").map(|c| c.0).collect()
}

/// The traces of a run: one per rank.
fn rank_files(dir: &Path, stem: &str, tp: u32) -> Vec<PathBuf> {
    (0..tp).map(|r| dir.join(stem.replace("{rank}", &r.to_string()))).collect()
}

fn analyze(paths: &[PathBuf]) -> (i32, Value) {
    let out = launchguard().arg("analyze").args(paths).args(["--format", "json"]).output().unwrap();
    (out.status.code().unwrap_or(-1), json_of(&out, "analyze"))
}

/// Judges every run that `pick` picks and holds each verdict to its label.
fn judge_by_label(pick: impl Fn(&Run) -> bool) {
    let runs: Vec<Run> = runs().into_iter().filter(|r| pick(r)).collect();
    assert!(!runs.is_empty());
    for run in runs {
        let dir = labeled_dir().join(&run.name);
        let tmp = tempfile::tempdir().unwrap();
        let keep = tmp.path().join("kept.json.gz");
        let out = replay(&run, &dir, &["--format", "json", "--keep-trace", keep.to_str().unwrap()]);
        let check = json_of(&out, &run.name);
        let code = out.status.code().unwrap();
        let verdict = check["verdict"].as_str().unwrap();
        assert_eq!(code, if verdict == "fail" { 1 } else { 0 }, "{}: exit {code} for {verdict}", run.name);

        let raw = rank_files(&dir, "trace.rank{rank}.json.gz", run.tp);
        let (raw_code, raw_doc) = analyze(&raw);
        // Several ranks: the folder of kept traces, as a user would give it.
        let kept = if run.tp > 1 { vec![tmp.path().to_path_buf()] } else { vec![keep] };
        let (kept_code, kept_doc) = analyze(&kept);

        // analyze of the trace check kept judges exactly as check did.
        assert_eq!((kept_code, kept_doc["verdict"].as_str()), (code, Some(verdict)), "{}", run.name);
        assert_eq!(checks(&kept_doc), checks(&check), "{}: analyze of the kept trace vs check", run.name);

        let verdicts = [("check", verdict), ("analyze", raw_doc["verdict"].as_str().unwrap())];
        for (what, v) in verdicts {
            match run.label.as_str() {
                "healthy" => {
                    assert_ne!(v, "fail", "{}: a healthy run fails in {what}: {:?}", run.name, failed(&check))
                }
                "starved" => assert_eq!(v, "fail", "{}: a starved GPU passes in {what}", run.name),
                _ => {}
            }
        }
        assert_eq!(raw_code, if raw_doc["verdict"] == "fail" { 1 } else { 0 });
        eprintln!(
            "{} ({}, set {}): check {verdict}, analyze {}",
            run.name, run.label, run.set, raw_doc["verdict"]
        );
    }
}

#[test]
fn reference_runs_are_judged_by_their_labels() {
    judge_by_label(|r| r.preset == "reference" && r.tp == 1);
}

#[test]
fn tiny_runs_are_judged_by_their_labels() {
    judge_by_label(|r| r.preset == "tiny");
}

#[test]
fn qwen3_runs_are_judged_by_their_labels() {
    judge_by_label(|r| r.preset == "qwen3-0.6b");
}

#[test]
fn tp2_runs_are_judged_by_their_labels() {
    judge_by_label(|r| r.tp == 2);
}

fn run(name: &str) -> Run {
    runs().into_iter().find(|r| r.name == name).unwrap()
}

#[test]
fn check_writes_json_keeps_its_trace_and_compares_with_a_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let (json, base) = (tmp.path().join("result.json"), tmp.path().join("baseline.json"));
    let healthy = run("reference-healthy-01");
    let out = replay(
        &healthy,
        &labeled_dir().join(&healthy.name),
        &["--format", "json", "--json", json.to_str().unwrap(), "--save-baseline", base.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = json_of(&out, "check");
    let written: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(written, printed);
    assert_eq!(std::fs::read(&json).unwrap(), std::fs::read(&base).unwrap());
    assert_eq!(printed["schema"], "launchguard.check/1");
    // The recorded samples are the ones judged: the median of the workload's own before-phase.
    let result: Value = serde_json::from_slice(
        &std::fs::read(labeled_dir().join(&healthy.name).join("result.rank0.json")).unwrap(),
    )
    .unwrap();
    let mut host: Vec<f64> = result["phases"]["before"]["host_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    host.sort_by(f64::total_cmp);
    let median = (host[149] + host[150]) / 2.0;
    assert!((printed["phases"]["before"]["host_p50_us"].as_f64().unwrap() - median).abs() < 1e-9);

    // Another healthy process: no regression.
    let other = run("reference-healthy-02");
    let out = replay(
        &other,
        &labeled_dir().join(&other.name),
        &["--format", "json", "--baseline", base.to_str().unwrap()],
    );
    let v = json_of(&out, "healthy vs baseline");
    assert!(failed(&v).iter().all(|id| !id.starts_with("compare.")), "{:?}", failed(&v));
    assert_eq!(v["comparison"]["verdict"], "pass");
    // 25 µs before every launch: host cost per replay 2.7 → 27.9 µs, a regression.
    let slow = run("reference-delay-25");
    let out = replay(
        &slow,
        &labeled_dir().join(&slow.name),
        &["--format", "json", "--baseline", base.to_str().unwrap()],
    );
    let v = json_of(&out, "delay vs baseline");
    assert_eq!(out.status.code(), Some(1));
    assert!(failed(&v).contains(&"compare.host_before".to_string()), "{:?}", failed(&v));
    // The injected delay is noted, not a reason to refuse the comparison.
    assert!(checks(&v)
        .iter()
        .any(|c| c.0 == "compare.baseline" && c.1 == "pass" && c.2.contains("inject_delay_us")));
}

#[test]
fn a_slow_rank_alone_is_caught_against_a_baseline_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("baseline.json");
    let healthy = run("tp2-healthy-1");
    let out = replay(
        &healthy,
        &labeled_dir().join(&healthy.name),
        &["--format", "json", "--save-baseline", base.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // 25 µs before every launch on rank 1 only: hidden by the GPU (no trace check fails), caught
    // by the comparison on rank 1, which is named.
    let slow = run("tp2-rank1-delay-25");
    let out = replay(
        &slow,
        &labeled_dir().join(&slow.name),
        &["--format", "json", "--baseline", base.to_str().unwrap()],
    );
    let v = json_of(&out, "tp2 vs baseline");
    assert_eq!(out.status.code(), Some(1), "{:?}", checks(&v));
    let host = checks(&v).into_iter().find(|c| c.0 == "compare.host_before").unwrap();
    assert_eq!(host.1, "fail");
    assert!(host.2.starts_with("rank 1 (worst of ranks 0, 1):"), "{}", host.2);
    // Every rank was compared: one metric per rank in the comparison.
    let ranks: Vec<u64> = v["comparison"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["id"] == "host_before")
        .map(|m| m["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1]);
    // The text output names the rank too.
    let out = replay(&slow, &labeled_dir().join(&slow.name), &["--baseline", base.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("compare.host_before") && text.contains("rank 1 (worst of ranks 0, 1)"), "{text}");
}

#[test]
fn a_trace_that_lost_kernels_fails_trace_sanity() {
    // The reference run with 10 of its 4400 kernels taken out of the trace, as a profiler that
    // drops events leaves it.
    let src = labeled_dir().join("reference-healthy-01");
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "result.rank0.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let mut doc = crate::oracle::load(&src.join("trace.rank0.json.gz"));
    let events = doc["traceEvents"].as_array_mut().unwrap();
    let mut dropped = 0;
    events.retain(|e| {
        let drop = e["cat"] == "kernel" && dropped < 10;
        dropped += usize::from(drop);
        !drop
    });
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &serde_json::to_vec(&doc).unwrap()).unwrap();
    std::fs::write(tmp.path().join("trace.rank0.json.gz"), gz.finish().unwrap()).unwrap();
    let out = replay(&run("reference-healthy-01"), tmp.path(), &["--format", "json"]);
    let v = json_of(&out, "lost kernels");
    assert_eq!(out.status.code(), Some(1));
    let sanity = checks(&v).into_iter().find(|c| c.0 == "trace_sanity").unwrap();
    assert_eq!(sanity.1, "fail");
    assert!(sanity.2.contains("a kernel count other than 44"), "{}", sanity.2);
    // Damaged both times: the workload ran twice, and the report says it.
    assert!(sanity.2.contains("this is the workload's second run"), "{}", sanity.2);
}

/// Every healthy run of a preset saved as a baseline and compared with every other (each
/// ordered pair) must not fail; every starved run must fail against every healthy baseline. The
/// single-run judge is held to the labels above; this holds `check --baseline` to them.
#[test]
fn baselines_are_compared_by_their_labels() {
    use launchguard_check::compare::{compare, read_result};
    let cfg = launchguard_judge::config::CompareConfig::default();
    let tmp = tempfile::tempdir().unwrap();
    type Pick = fn(&Run) -> bool;
    let groups: [(&str, Pick); 4] = [
        ("reference", |r| r.preset == "reference" && r.tp == 1),
        ("tiny", |r| r.preset == "tiny"),
        ("qwen3-0.6b", |r| r.preset == "qwen3-0.6b"),
        ("tp2", |r| r.tp == 2),
    ];
    let (mut false_alarms, mut missed) = (Vec::new(), Vec::new());
    for (group, pick) in groups {
        let saved: Vec<(Run, launchguard_check::CheckReport)> = runs()
            .into_iter()
            .filter(|r| pick(r) && r.label != "hidden")
            .map(|r| {
                let path = tmp.path().join(format!("{}.json", r.name));
                let out =
                    replay(&r, &labeled_dir().join(&r.name), &["--save-baseline", path.to_str().unwrap()]);
                assert!(
                    out.status.code().is_some_and(|c| c <= 1),
                    "{}: {}",
                    r.name,
                    String::from_utf8_lossy(&out.stderr)
                );
                let result = read_result(&path).unwrap();
                (r, result)
            })
            .collect();
        let healthy: Vec<_> = saved.iter().filter(|(r, _)| r.label == "healthy").collect();
        let starved: Vec<_> = saved.iter().filter(|(r, _)| r.label == "starved").collect();
        assert!(healthy.len() >= 5, "{group}: {} healthy runs", healthy.len());
        let failing = |c: &launchguard_judge::compare::Comparison| -> Vec<String> {
            c.metrics
                .iter()
                .filter(|m| m.status == launchguard_judge::Status::Fail)
                .map(|m| m.message.clone())
                .collect()
        };
        for (a, base) in &healthy {
            for (b, cur) in &healthy {
                if a.name != b.name {
                    let c = compare(base, cur, &cfg, false);
                    if c.verdict == launchguard_judge::Verdict::Fail {
                        false_alarms.push(format!("{} against {}: {:?}", b.name, a.name, failing(&c)));
                    }
                }
            }
            for (s, cur) in &starved {
                if compare(base, cur, &cfg, true).verdict != launchguard_judge::Verdict::Fail {
                    missed.push(format!("{} against {}", s.name, a.name));
                }
            }
        }
        eprintln!("{group}: {} healthy, {} starved compared", healthy.len(), starved.len());
    }
    assert_eq!(false_alarms, Vec::<String>::new(), "healthy pairs that fail");
    assert_eq!(missed, Vec::<String>::new(), "starved runs that pass against a healthy baseline");
}

/// A GPU that waits before each profiled replay only because the profiler makes each launch cost
/// more than the replay (the host kept ahead with the profiler off) warns on `replay_idle`
/// instead of failing. Made from the tiny run with 25 µs injected (trace idle 27 µs p50,
/// profiled launches 51 µs against 36 µs of GPU time) by taking the injected delay out of its
/// samples outside the profiler session, as a cold first process on a fresh machine measures.
#[test]
fn a_gpu_starved_only_by_the_profiler_warns_on_replay_idle() {
    let slow = run("tiny-delay-25");
    let src = labeled_dir().join(&slow.name);
    let out = replay(&slow, &src, &["--format", "json"]);
    let idle = |v: &Value| checks(v).into_iter().find(|c| c.0 == "replay_idle").unwrap();
    let as_recorded = json_of(&out, "tiny-delay-25");
    // As recorded the host cost unprofiled is 86% of the GPU time: the stack's own, and failed.
    assert_eq!(idle(&as_recorded).1, "fail", "{:?}", idle(&as_recorded));
    assert_eq!(as_recorded["verdict"], "fail");

    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "trace.rank0.json.gz"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let mut result: Value =
        serde_json::from_slice(&std::fs::read(src.join("result.rank0.json")).unwrap()).unwrap();
    for (phase, key) in [("before", "host_us"), ("before", "steady_host_us"), ("after", "host_us")] {
        for v in result["phases"][phase][key].as_array_mut().unwrap() {
            *v = Value::from(v.as_f64().unwrap() - 25.0);
        }
    }
    std::fs::write(tmp.path().join("result.rank0.json"), serde_json::to_vec(&result).unwrap()).unwrap();
    let out = replay(&slow, tmp.path(), &["--format", "json"]);
    let v = json_of(&out, "profiler-bound");
    let (_, status, message) = idle(&v);
    assert_eq!(status, "warn", "{message}");
    assert!(
        message.contains("under the profiler a launch cost the host")
            && message.contains("with the profiler off"),
        "{message}"
    );
    assert_eq!(checks(&v).into_iter().find(|c| c.0 == "launch_headroom").unwrap().1, "pass");
    assert_ne!(v["verdict"], "fail", "{:?}", failed(&v));
}

/// A real healthy `tiny` run on a slow fresh host (tests/data/h200-check/tiny-fresh-host): the
/// profiler made each launch cost 60.9 µs against 35.3 µs of GPU time (6.5 µs unprofiled), and
/// the GPU starved under it with 21 gaps over 100 µs. Both starvation checks warn, naming the
/// profiler; nothing fails.
#[test]
fn a_healthy_run_starved_only_by_the_profiler_on_a_slow_host_does_not_fail() {
    let trace = repo_root().join("tests/data/h200-check/tiny-fresh-host/kept-trace-slow-host.json.gz");
    let (code, v) = analyze(&[trace]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("warn")), "{:?}", failed(&v));
    for id in ["gaps", "replay_idle"] {
        let (_, status, message) = checks(&v).into_iter().find(|c| c.0 == id).unwrap();
        assert_eq!(status, "warn", "{message}");
        assert!(message.contains("60.9 µs p50, more than the GPU's 35.3 µs replay"), "{message}");
    }
}

/// A recorded run with step-synchronous steps added to its result, as this version's workload
/// writes them: `steps` µs per step and a GPU time of 250 µs per step replay.
fn with_sync_steps(name: &str, steps: &[f64]) -> tempfile::TempDir {
    let src = labeled_dir().join(name);
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "trace.rank0.json.gz"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let mut result: Value =
        serde_json::from_slice(&std::fs::read(src.join("result.rank0.json")).unwrap()).unwrap();
    result["phases"]["before"]["sync_step_us"] = Value::from(steps.to_vec());
    result["phases"]["before"]["sync_gpu_us"] = Value::from(vec![250.0; steps.len()]);
    std::fs::write(tmp.path().join("result.rank0.json"), serde_json::to_vec(&result).unwrap()).unwrap();
    tmp
}

/// The step-synchronous phase judged whole, through `check` with a stand-in interpreter: the
/// reference run's own GPU time per replay (255.559 µs, CUDA events) against steps as the issue
/// measured them on an H200. Healthy steps pass; steps slowed by 100 µs per launch, and a 2 ms
/// stall every 10th step, FAIL with what the host costs a step stated; `analyze` of the kept
/// trace judges the same.
#[test]
fn a_slow_synchronous_step_fails_with_its_cost_per_step() {
    let healthy = run("reference-healthy-01");
    let sync = |v: &Value| checks(v).into_iter().find(|c| c.0 == "sync_step").unwrap();
    // As recorded (an earlier workload): no steps, so the check is skipped.
    let out = replay(&healthy, &labeled_dir().join(&healthy.name), &["--format", "json"]);
    assert_eq!(sync(&json_of(&out, "recorded")).1, "skip");

    let gpu = 255.55936813354492;
    // (steps, status, cost stated) with the cost = 100 × (mean / gpu − 1), worked out by hand:
    // 272.8 / 255.559 → +7%; 373.1 / 255.559 → +46%; 2 ms every 10th: mean 472.8 → +85%.
    let every10: Vec<f64> = (1..=300).map(|i| if i % 10 == 0 { 2272.8 } else { 272.8 }).collect();
    let cases = [
        (vec![272.8; 300], "pass", "+7% per step when each step is read back"),
        (vec![373.1; 300], "fail", "+46% per step when each step is read back"),
        (every10, "fail", "+85% per step when each step is read back"),
    ];
    for (steps, status, cost) in cases {
        let dir = with_sync_steps(&healthy.name, &steps);
        let keep = dir.path().join("kept.json.gz");
        let out = replay(&healthy, dir.path(), &["--format", "json", "--keep-trace", keep.to_str().unwrap()]);
        let v = json_of(&out, cost);
        let (_, got, message) = sync(&v);
        assert_eq!(got, status, "{message}");
        assert!(message.starts_with(cost), "{message}");
        assert_eq!(out.status.code(), Some(if status == "fail" { 1 } else { 0 }), "{:?}", failed(&v));
        // The summary check reports is the steps' own: mean and median by hand.
        let mean = steps.iter().sum::<f64>() / steps.len() as f64;
        let summary = &v["phases"]["before"]["sync_step"];
        assert!((summary["mean_us"].as_f64().unwrap() - mean).abs() < 1e-9, "{summary}");
        assert!((summary["p50_us"].as_f64().unwrap() - 272.8).abs() < 1e-9 || status == "fail", "{summary}");
        assert!((v["phases"]["before"]["gpu_us_per_replay"].as_f64().unwrap() - gpu).abs() < 1e-9);
        let (code, kept) = analyze(&[keep]);
        assert_eq!((code, sync(&kept)), (out.status.code().unwrap(), sync(&v)), "{cost}");
    }
}

/// `check` of the healthy reference run whose first workload run (every run: `every_run`)
/// answers with its recording damaged by `damage`, every later run with the whole one (a
/// stand-in interpreter); the output and its JSON.
fn first_run_damaged(every_run: bool, damage: impl FnOnce(&mut Vec<Value>)) -> (Output, Value) {
    let healthy = run("reference-healthy-01");
    let src = labeled_dir().join(&healthy.name);
    let tmp = tempfile::tempdir().unwrap();
    let damaged = tmp.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    for f in ["config.json", "result.rank0.json"] {
        std::fs::copy(src.join(f), damaged.join(f)).unwrap();
    }
    let mut doc = crate::oracle::load(&src.join("trace.rank0.json.gz"));
    damage(doc["traceEvents"].as_array_mut().unwrap());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &serde_json::to_vec(&doc).unwrap()).unwrap();
    std::fs::write(damaged.join("trace.rank0.json.gz"), gz.finish().unwrap()).unwrap();
    // The first workload run answers with the damaged recording, every later one with the whole.
    let marker = tmp.path().join("ran-once");
    let python = tmp.path().join("python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -u ]; then\n  if [ -e '{m}' ]; then export LG_REPLAY_DIR='{whole}'; \
             else touch '{m}'; export LG_REPLAY_DIR='{damaged}'; fi\nfi\nexec '{replay}' \"$@\"\n",
            m = marker.display(),
            whole = if every_run { &damaged } else { &src }.display(),
            damaged = damaged.display(),
            replay = labeled_dir().join("replay-python").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = launchguard()
        .args(["check", "--python", python.to_str().unwrap(), "--preset", "reference", "--format", "json"])
        .output()
        .unwrap();
    let v = json_of(&out, "retried");
    (out, v)
}

/// A profiled trace that lost kernels in the first run only: `check` runs the workload once more,
/// judges the second run and says so.
#[test]
fn a_damaged_trace_is_run_again_once_and_said_so() {
    let (out, v) = first_run_damaged(false, |events| {
        let mut dropped = 0;
        events.retain(|e| {
            let drop = e["cat"] == "kernel" && dropped < 10;
            dropped += usize::from(drop);
            !drop
        });
    });
    let sanity = checks(&v).into_iter().find(|c| c.0 == "trace_sanity").unwrap();
    assert_eq!(sanity.1, "pass", "{}", sanity.2);
    assert!(
        sanity.2.contains("this is the workload's second run: the first run's profiled trace was damaged")
            && sanity.2.contains("a kernel count other than 44"),
        "{}",
        sanity.2
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", failed(&v));
}

/// A profiled trace whose kernels start before their launches records every replay (so
/// `trace_sanity` passes) but is damaged all the same: `check` runs the workload once more and
/// says why.
#[test]
fn a_trace_with_impossible_causality_is_run_again_once_and_said_so() {
    let late = |events: &mut Vec<Value>| {
        for e in events.iter_mut().filter(|e| e["name"] == "cudaGraphLaunch") {
            e["ts"] = serde_json::json!(e["ts"].as_f64().unwrap() + 1_000_000.0);
        }
    };
    let (out, v) = first_run_damaged(false, late);
    let sanity = checks(&v).into_iter().find(|c| c.0 == "trace_sanity").unwrap();
    assert_eq!(sanity.1, "pass", "{}", sanity.2);
    assert!(
        sanity.2.contains(
            "this is the workload's second run: the first run's profiled trace was damaged (the trace's causality is impossible"
        ) && sanity.2.contains("replays the first GPU activity starts more than 20 µs before its launch"),
        "{}",
        sanity.2
    );
    // The second run is judged as any healthy run is (its label: healthy, not failed).
    assert_eq!(out.status.code(), Some(0), "{:?}", failed(&v));
    assert!(!checks(&v).iter().any(|c| c.0 == "trace_damage"), "{}", v["checks"]);

    // Damaged again in the second run: inconclusive (exit 2), the reason said with the verdict.
    let (out, v) = first_run_damaged(true, late);
    assert_eq!((out.status.code(), v["verdict"].as_str()), (Some(2), Some("inconclusive")));
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the trace's causality is impossible, so it cannot say whether the GPU starved: in 100 replays"
        ),
        "{reason}"
    );
    let sanity = checks(&v).into_iter().find(|c| c.0 == "trace_sanity").unwrap();
    assert!(sanity.2.contains("this is the workload's second run"), "{}", sanity.2);
}
