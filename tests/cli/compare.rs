//! `launchguard compare`: real H200 results (tests/data/compare/README.md), and synthetic runs
//! drawn from the healthy figures measured on the H200, to show that noise between healthy runs
//! does not alarm and +10 µs per launch does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::oracle;
use crate::util::{launchguard, repo_root};

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/data/compare").join(name)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs `launchguard compare`; returns exit code, stdout, stderr.
fn compare(baseline: &Path, current: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = launchguard().arg("compare").arg(baseline).arg(current).args(extra).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn compare_json(baseline: &Path, current: &Path, extra: &[&str]) -> (i32, Value) {
    let (code, out, err) = compare(baseline, current, &[&["--format", "json"], extra].concat());
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("no JSON ({e}): {err}"));
    (code, v)
}

fn metric<'a>(c: &'a Value, id: &str) -> &'a Value {
    c["metrics"].as_array().unwrap().iter().find(|m| m["id"] == id).unwrap()
}

/// SplitMix64 (Steele, Lea & Flood 2014): a specified 64-bit generator, so that the synthetic
/// runs below are the same on every machine. Test data only.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1 = self.uniform(f64::EPSILON, 1.0);
        let u2 = self.uniform(0.0, 1.0);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Per-replay host costs of one phase in one process: a process level, a multiplicative jitter
/// with lag-1 autocorrelation 0.6 (replays one after another are alike), and every tenth replay
/// a spike, as in the real H200 samples (tests/data/compare/h200-reference.json: before p25/p50/p75
/// 5.17/5.52/6.41 µs with spikes of 10–57 µs at replays 0, 10, 20, 30, …), the first one colder.
fn host_samples(rng: &mut SplitMix, n: usize, level: f64, spike: (f64, f64)) -> Vec<f64> {
    let phi: f64 = 0.6;
    let mut a = rng.normal();
    (0..n)
        .map(|i| {
            a = phi * a + (1.0 - phi * phi).sqrt() * rng.normal();
            let mut v = level * (0.06 * a).exp();
            if i % 10 == 0 {
                v += rng.uniform(spike.0, spike.1);
            }
            if i == 0 {
                v += rng.uniform(20.0, 60.0);
            }
            v
        })
        .collect()
}

/// Graph-launch durations of the profiled replays: a level with episodes of slow launches (the
/// real run: p50 43.5, p75 56, p90 77 µs, lag-1 autocorrelation 0.5).
fn launch_samples(rng: &mut SplitMix, n: usize, level: f64) -> Vec<f64> {
    let mut slow = false;
    (0..n)
        .map(|_| {
            slow = rng.uniform(0.0, 1.0) < if slow { 0.6 } else { 0.12 };
            level * (0.03 * rng.normal()).exp() + if slow { rng.uniform(10.0, 45.0) } else { 0.0 }
        })
        .collect()
}

/// numpy's default percentile (linear interpolation).
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = p / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

fn set_phase(doc: &mut Value, phase: &str, host: Vec<f64>, gpu: Option<f64>) {
    let p = &mut doc["phases"][phase];
    p["host_p50_us"] = json!(percentile(&host, 50.0));
    p["host_p99_us"] = json!(percentile(&host, 99.0));
    p["host_mean_us"] = json!(host.iter().sum::<f64>() / host.len() as f64);
    p["host_us"] = json!(host);
    if let Some(g) = gpu {
        p["gpu_us_per_replay"] = json!(g);
    }
}

/// One healthy `check --preset reference` process, drawn from the spread measured on the H200:
/// host p50 before the profiler session 2.6–5.5 µs, after it 14–17.5 µs, profiled 43–49 µs; GPU
/// time per replay 255.5–257 µs; occupancy 89.5–90.6%; graph-launch p50 39–44 µs. The real
/// result's other figures (inventory, workload, trace analysis) are kept as they are.
fn healthy_run(seed: u64, before_level: Option<f64>) -> Value {
    let mut rng = SplitMix(seed);
    let mut doc = read(&fixture("h200-reference.json"));
    let before_level = before_level.unwrap_or_else(|| rng.uniform(2.6, 5.5));
    let before = host_samples(&mut rng, 300, before_level, (5.0, 40.0));
    let after_level = rng.uniform(14.0, 17.5);
    let after = host_samples(&mut rng, 300, after_level, (2.0, 15.0));
    let profiled_level = rng.uniform(43.0, 49.0);
    let profiled = host_samples(&mut rng, 100, profiled_level, (20.0, 60.0));
    let gpu = rng.uniform(255.5, 257.0);
    let gpu_after = gpu + rng.uniform(0.0, 1.2);
    set_phase(&mut doc, "before", before, Some(gpu));
    set_phase(&mut doc, "after", after, Some(gpu_after));
    set_phase(&mut doc, "profiled", profiled, None);
    let analysis = &mut doc["analysis"];
    analysis["devices"][0]["occupancy"] = json!(rng.uniform(0.895, 0.906));
    let launch_level = rng.uniform(39.0, 44.0);
    let launches = launch_samples(&mut rng, 100, launch_level);
    for (replay, l) in analysis["replays"].as_array_mut().unwrap().iter_mut().zip(&launches) {
        replay["launch_us"] = json!(l);
    }
    let g = &mut analysis["graph_launches"];
    g["mean_us"] = json!(launches.iter().sum::<f64>() / launches.len() as f64);
    g["p50_us"] = json!(percentile(&launches, 50.0));
    g["p99_us"] = json!(percentile(&launches, 99.0));
    g["max_us"] = json!(percentile(&launches, 100.0));
    doc
}

/// A regressed process: healthy in every way, plus `delay` µs on every host sample with the
/// profiler off (a layer that adds work to each launch; `inject_delay_us` stays 0, as in a real
/// regression). On the H200 an injected 10 µs moved a 2.7 µs p50 to 12.6 µs.
fn regressed_run(seed: u64, delay: f64) -> Value {
    let mut doc = healthy_run(seed, None);
    for phase in ["before", "after"] {
        let host: Vec<f64> = doc["phases"][phase]["host_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() + delay)
            .collect();
        set_phase(&mut doc, phase, host, None);
    }
    doc
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(doc).unwrap()).unwrap();
    p
}

#[test]
fn a_real_run_against_itself_passes_with_a_table() {
    let r = fixture("h200-reference.json");
    let (code, out, err) = compare(&r, &r, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let header = out.lines().find(|l| l.starts_with("metric")).unwrap();
    for col in ["baseline", "current", "shift", "95% CI", "p", "limit", "status"] {
        assert!(header.contains(col), "{header}");
    }
    // The real baseline's host p50 before the profiler session: 5.5215 µs.
    let row = out.lines().find(|l| l.starts_with("host per replay, before")).unwrap();
    assert!(row.contains("5.5") && row.contains("pass not significant"), "{row}");
    assert!(out.ends_with("verdict: PASS\n"), "{out}");
}

#[test]
fn healthy_runs_two_microseconds_apart_do_not_fail_and_ten_more_do() {
    let dir = tempfile::tempdir().unwrap();
    // The two healthy processes on the H200: host p50 2.6 and 4.7 µs.
    let base = write(dir.path(), "base.json", &healthy_run(1, Some(2.6)));
    let other = write(dir.path(), "other.json", &healthy_run(2, Some(4.7)));
    let (code, c) = compare_json(&base, &other, &[]);
    assert_eq!(code, 0, "{c:#}");
    let host = metric(&c, "host_before");
    assert_eq!(host["status"], "pass", "{host:#}");
    let shift = host["shift"].as_f64().unwrap();
    assert!((1.5..2.5).contains(&shift), "the synthetic offset is about 2.1 µs: {shift}");

    let mut regressed = healthy_run(2, Some(2.6));
    for phase in ["before", "after"] {
        for v in regressed["phases"][phase]["host_us"].as_array_mut().unwrap() {
            *v = json!(v.as_f64().unwrap() + 10.0);
        }
    }
    let regressed = write(dir.path(), "regressed.json", &regressed);
    let (code, c) = compare_json(&base, &regressed, &[]);
    assert_eq!(code, 1, "{c:#}");
    let host = metric(&c, "host_before");
    assert_eq!((host["status"].as_str(), host["outcome"].as_str()), (Some("fail"), Some("regression")));
    let ci = &host["interval"];
    assert!(ci["low"].as_f64().unwrap() > 5.0 && ci["high"].as_f64().unwrap() < 11.0, "{ci}");
    assert_eq!(host["limit"].as_f64(), Some(5.0));
    let (_, text, _) = compare(&base, &regressed, &[]);
    assert!(
        text.lines().any(|l| l.starts_with("host per replay, before") && l.contains("FAIL regression")),
        "{text}"
    );
}

/// The false-alarm rate over 10 healthy processes compared pairwise (45 pairs), and the detection
/// of +10 µs per launch against each of them as a baseline.
#[test]
fn no_false_alarm_over_45_healthy_pairs_and_ten_microseconds_caught_against_every_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let healthy: Vec<PathBuf> = (0..10)
        .map(|i| write(dir.path(), &format!("healthy{i}.json"), &healthy_run(100 + i, None)))
        .collect();
    let regressed: Vec<PathBuf> = (0..10)
        .map(|i| write(dir.path(), &format!("regressed{i}.json"), &regressed_run(200 + i, 10.0)))
        .collect();
    let mut jobs: Vec<(usize, usize, bool)> = Vec::new();
    for i in 0..10 {
        for j in i + 1..10 {
            jobs.push((i, j, false));
        }
        jobs.push((i, i, true));
    }
    // Two at a time: each compare is a process.
    let results: Vec<(usize, usize, bool, i32, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|chunk| {
                let (healthy, regressed) = (&healthy, &regressed);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(i, j, reg)| {
                            let current = if reg { &regressed[j] } else { &healthy[j] };
                            let (code, c) = compare_json(&healthy[i], current, &[]);
                            (i, j, reg, code, c)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|r| !r.2).count(), 45);
    let alarms: Vec<String> = results
        .iter()
        .filter(|r| !r.2 && r.3 != 0)
        .map(|(i, j, _, code, c)| format!("healthy{i} vs healthy{j}: exit {code}, verdict {}", c["verdict"]))
        .collect();
    assert!(alarms.is_empty(), "false alarms: {alarms:#?}");
    // The floor, not the test, keeps healthy pairs quiet: with 300 vs 300 samples and a process
    // offset of a few µs, most healthy pairs differ "significantly" (40 of these 45).
    let significant = results
        .iter()
        .filter(|r| !r.2 && metric(&r.4, "host_before")["p_value"].as_f64().unwrap() < 1e-3)
        .count();
    assert!(significant >= 30, "{significant} of 45 healthy pairs significant");
    let missed: Vec<String> = results
        .iter()
        .filter(|r| r.2 && (r.3 != 1 || metric(&r.4, "host_before")["status"] != "fail"))
        .map(|(i, _, _, code, c)| {
            format!("healthy{i} vs +10 µs: exit {code}, {}", metric(c, "host_before")["message"])
        })
        .collect();
    assert!(missed.is_empty(), "regressions not caught: {missed:#?}");
}

#[test]
fn a_different_gpu_is_incomparable_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture("h200-reference.json");
    let mut other = read(&base);
    other["inventory"]["gpu_name"] = json!("NVIDIA H100 80GB HBM3");
    let other = write(dir.path(), "h100.json", &other);
    // An unusable comparison: said first, with the reason, and exit 2, never a green 0.
    let (code, out, err) = compare(&base, &other, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        out.contains("differs: gpu_name NVIDIA H200 (baseline) vs NVIDIA H100 80GB HBM3 (current)")
            && out.contains("not compared: the runs differ (--force compares anyway)"),
        "{out}"
    );
    assert!(
        out.ends_with(
            "verdict: INCONCLUSIVE (the runs ran on different GPUs: gpu_name NVIDIA H200 (baseline) vs NVIDIA H100 80GB HBM3 \
             (current); launch costs of two GPUs are not one stack's change (--force compares anyway))\n"
        ),
        "{out}"
    );
    let (code, out, _) = compare(&base, &other, &["--force"]);
    assert_eq!(code, 0, "same samples, forced: the differences are reported, nothing regressed\n{out}");
    assert!(
        out.contains("differs: gpu_name NVIDIA H200 (baseline) vs NVIDIA H100 80GB HBM3 (current)"),
        "{out}"
    );
    assert!(out.ends_with("verdict: WARN\n"), "{out}");
}

#[test]
fn real_results_of_another_preset_are_incomparable_and_300_us_injected_fails() {
    let base = fixture("h200-reference.json");
    let (code, c) = compare_json(&base, &fixture("h200-tiny.json"), &[]);
    assert_eq!((code, c["verdict"].as_str(), c["comparable"].as_bool()), (0, Some("warn"), Some(false)));
    let blocking: Vec<&str> = c["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["blocking"] == true)
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(blocking.contains(&"preset") && blocking.contains(&"workload.layers"), "{blocking:?}");

    // An injected delay is noted, not blocking: testing the guard against a baseline is the point.
    let injected = fixture("h200-reference-inject300.json");
    let (code, c) = compare_json(&base, &injected, &[]);
    assert_eq!(code, 1);
    assert_eq!((c["schema"].as_str(), c["forced"].as_bool()), (Some("launchguard.compare/1"), Some(false)));
    let noted = c["differences"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["field"] == "inject_delay_us" && d["blocking"] == false);
    assert!(noted, "{c:#}");
    // Real figures: host p50 5.52 → 305.54 µs before the profiler session; occupancy 90.1% → 57.7%.
    let host = metric(&c, "host_before");
    assert_eq!(host["status"], "fail");
    assert!((host["shift"].as_f64().unwrap() - (305.542 - 5.5215)).abs() < 1e-9, "{host:#}");
    assert_eq!(metric(&c, "occupancy")["status"], "fail");
    assert_eq!(metric(&c, "gpu_before")["status"], "pass");
}

#[test]
fn bad_inputs_get_one_line_and_exit_2_and_files_are_never_modified() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture("h200-reference.json");
    let before = std::fs::read(&base).unwrap();
    let one_line = |code: i32, err: &str, needle: &str| {
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("launchguard: error: ") && err.contains(needle), "{err}");
    };
    let missing = dir.path().join("missing.json");
    let (code, _, err) = compare(&base, &missing, &[]);
    one_line(code, &err, "missing.json");
    let analysis = write(dir.path(), "analysis.json", &json!({"schema": "launchguard.analysis/1"}));
    let (code, _, err) = compare(&analysis, &base, &[]);
    one_line(code, &err, "schema 'launchguard.analysis/1', expected a launchguard.check/1 result");
    let mut skipped = read(&base);
    skipped["phases"] = json!({});
    skipped["verdict"] = json!("skip");
    skipped["reason"] = json!("no CUDA device");
    let skipped = write(dir.path(), "skipped.json", &skipped);
    let (code, _, err) = compare(&base, &skipped, &[]);
    one_line(code, &err, "holds no measurements (verdict skip: no CUDA device)");
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[compare]\nalpha = 2\n").unwrap();
    let (code, _, err) = compare(&base, &base, &["--config", config.to_str().unwrap()]);
    one_line(code, &err, "compare.alpha must be between 0 and 1");
    std::fs::write(&config, "[compare]\nmin_host_shift = 3\n").unwrap();
    let (code, _, err) = compare(&base, &base, &["--config", config.to_str().unwrap()]);
    one_line(code, &err, "unknown field");
    assert_eq!(std::fs::read(&base).unwrap(), before);
}

#[test]
fn config_limits_change_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &healthy_run(1, Some(2.6)));
    let current = write(dir.path(), "cur.json", &regressed_run(3, 10.0));
    let (code, _) = compare_json(&base, &current, &[]);
    assert_eq!(code, 1);
    // With a 20 µs floor, +10 µs is noise by definition.
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[compare]\nmin_host_shift_us = 20.0\n").unwrap();
    let (code, c) = compare_json(&base, &current, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{c:#}");
    assert_eq!(metric(&c, "host_before")["outcome"], "below_floor");
    assert_eq!(c["limits"]["min_host_shift_us"].as_f64(), Some(20.0));
}

/// Real noise: ten healthy `check --preset reference` processes on one H200
/// (tests/data/h200-check/reference, written by `selftest --keep-results`), compared in every
/// ordered pair with the default limits, must give no regression; a run with 10 µs injected per
/// launch must regress against every one of them.
#[test]
fn real_h200_runs_no_false_alarm_and_ten_microseconds_detected() {
    use launchguard_check::compare::{compare, read_result};
    let dir = repo_root().join("tests/data/h200-check/reference");
    let load = |name: &str| read_result(&dir.join(name)).expect("a real check result");
    let healthy: Vec<_> = (0..10).map(|i| load(&format!("run{i:02}-delay0.json"))).collect();
    let cfg = launchguard_judge::config::CompareConfig::default();
    let mut false_alarms = Vec::new();
    for (i, a) in healthy.iter().enumerate() {
        for (j, b) in healthy.iter().enumerate() {
            if i != j && compare(a, b, &cfg, false).verdict == launchguard_judge::Verdict::Fail {
                false_alarms.push((i, j));
            }
        }
    }
    assert_eq!(false_alarms, Vec::<(usize, usize)>::new(), "healthy pairs that regressed");
    let delayed = load("run11-delay10.json");
    for (i, base) in healthy.iter().enumerate() {
        let c = compare(base, &delayed, &cfg, true);
        let host = c.metrics.iter().find(|m| m.figures.id == "host_before").expect("host metric");
        assert_eq!(host.status, launchguard_judge::Status::Fail, "+10 µs not caught against healthy run {i}");
    }
}

/// A launch-bound graph's profiled occupancy measures the profiler: healthy `tiny` processes on
/// H200s (tests/data/h200-check/tiny and tiny-fresh-host) lie 39–84% apart, so between them the
/// occupancy comparison warns at most, never fails; a starved one still fails against each.
#[test]
fn a_launch_bound_graphs_occupancy_drop_warns_and_starved_runs_still_fail() {
    use launchguard_check::compare::{compare, read_result};
    use launchguard_judge::Status;
    let root = repo_root().join("tests/data/h200-check");
    let healthy: Vec<_> = ["tiny/run00-delay0.json", "tiny/run01-delay0.json", "tiny/run02-delay0.json"]
        .into_iter()
        .chain([
            "tiny-fresh-host/run00-delay0.json",
            "tiny-fresh-host/run03-delay0.json",
            "tiny-fresh-host/run06-delay0.json",
        ])
        .map(|name| (name, read_result(&root.join(name)).expect("a real check result")))
        .collect();
    let cfg = launchguard_judge::config::CompareConfig::default();
    let mut warned = 0;
    for (a, base) in &healthy {
        for (b, cur) in &healthy {
            if a == b {
                continue;
            }
            let c = compare(base, cur, &cfg, false);
            let occ = c.metrics.iter().find(|m| m.figures.id == "occupancy").expect("occupancy compared");
            assert_ne!(occ.status, Status::Fail, "{b} against {a}: {}", occ.message);
            let drop = occ.figures.shift.unwrap();
            // Past the 15-point limit: a warning that says why; within it: a pass.
            if drop < -cfg.max_occupancy_drop {
                assert_eq!(occ.status, Status::Warn, "{b} against {a}: {}", occ.message);
                assert!(occ.message.contains("launch-bound under the profiler"), "{}", occ.message);
                warned += 1;
            } else {
                assert_eq!(occ.status, Status::Pass, "{b} against {a}: {}", occ.message);
            }
        }
    }
    // By hand from the files' occupancies (0.784, 0.791, 0.835; 0.393, 0.784, 0.621): every pair
    // whose current run is the fresh host's first (5) or its 62% run against the four at 78–84% (4).
    assert_eq!(warned, 9);
    for delay in ["tiny/run06-delay50.json", "tiny/run07-delay100.json"] {
        let starved = read_result(&root.join(delay)).unwrap();
        for (a, base) in &healthy {
            let c = compare(base, &starved, &cfg, true);
            assert_eq!(c.verdict, launchguard_judge::Verdict::Fail, "{delay} against {a}");
        }
    }
}

/// Compares two traces (or folders of rank traces) and returns the exit code and the JSON.
fn compare_traces(baseline: &Path, current: &Path, extra: &[&str]) -> (i32, Value) {
    compare_json(baseline, current, extra)
}

fn status_of<'a>(c: &'a Value, id: &str) -> Vec<&'a str> {
    c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["id"] == id)
        .map(|m| m["status"].as_str().unwrap())
        .collect()
}

#[test]
fn a_delay_before_each_launch_is_a_regression_between_two_traces() {
    let Some(shared) = crate::util::shared_dir() else { return };
    let h200 = shared.join("traces/h200");
    let (code, c) =
        compare_traces(&h200.join("healthy_clean.json.gz"), &h200.join("delay270_clean.json.gz"), &[]);
    assert_eq!((code, c["verdict"].as_str()), (1, Some("fail")));
    // The launch-to-launch time and the GPU's idle before each replay name the delay; the
    // launch call itself is no slower (the delay sits outside the span CUPTI records).
    assert_eq!(status_of(&c, "launch_interval"), ["fail"]);
    assert_eq!(status_of(&c, "idle_before"), ["fail"]);
    assert_eq!(status_of(&c, "graph_launch"), ["pass"]);
    // The figures, from the traces independently: the median launch-to-launch time of each.
    let interval = |path: &Path| {
        let doc = crate::oracle::load(path);
        let mut starts: Vec<f64> = crate::oracle::events(&doc)
            .iter()
            .filter(|e| e["name"] == "cudaGraphLaunch")
            .map(|e| e["ts"].as_f64().unwrap())
            .collect();
        starts.sort_by(f64::total_cmp);
        let mut gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_by(f64::total_cmp);
        let n = gaps.len();
        if n % 2 == 1 {
            gaps[n / 2]
        } else {
            (gaps[n / 2 - 1] + gaps[n / 2]) / 2.0
        }
    };
    let m = metric(&c, "launch_interval");
    let (b, cur) =
        (interval(&h200.join("healthy_clean.json.gz")), interval(&h200.join("delay270_clean.json.gz")));
    assert!((m["baseline"]["median"].as_f64().unwrap() - b).abs() < 0.002, "{m} vs {b}");
    assert!((m["current"]["median"].as_f64().unwrap() - cur).abs() < 0.002, "{m} vs {cur}");
    // Healthy against healthy (the refreshed input adds host work per step, within the limits).
    let (code, c) =
        compare_traces(&h200.join("healthy_clean.json.gz"), &h200.join("healthy_refresh.json.gz"), &[]);
    assert_eq!((code, c["verdict"].as_str()), (0, Some("pass")), "{c:#}");
    // The two ranks of a TP=2 run against themselves: per rank, nothing moved.
    let pair = shared.join("traces/h200x2");
    let (code, c) = compare_traces(&pair, &pair, &[]);
    assert_eq!((code, c["verdict"].as_str()), (0, Some("pass")));
    let ranks: Vec<u64> = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["id"] == "idle_before")
        .map(|m| m["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1]);
}

#[test]
fn traces_of_another_gpu_are_not_compared_and_a_trace_is_not_a_check_result() {
    let Some(shared) = crate::util::shared_dir() else { return };
    let clean = shared.join("traces/h200/healthy_clean.json.gz");
    let dir = tempfile::tempdir().unwrap();
    let mut doc = crate::oracle::load(&clean);
    doc["deviceProperties"][0]["name"] = json!("NVIDIA H100 80GB HBM3");
    let other = write(dir.path(), "h100.json", &doc);
    let (code, c) = compare_traces(&clean, &other, &[]);
    assert_eq!(
        (code, c["verdict"].as_str(), c["comparable"].as_bool()),
        (2, Some("inconclusive"), Some(false))
    );
    assert!(
        c["reason"].as_str().unwrap().starts_with("the runs ran on different GPUs: gpu_name NVIDIA H200"),
        "{c:#}"
    );
    assert!(c["differences"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["field"] == "gpu_name" && d["blocking"] == true));
    let (code, _, err) = compare(&clean, &fixture("h200-reference.json"), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("not of one kind"), "{err}");
}

/// The main graph's kernel diff against the oracle: every (name, position) of both traces, the
/// time per replay of each side and the shift, largest change first.
fn assert_kernel_diff(baseline: &Path, current: &Path) -> Value {
    let (_, c) = compare_traces(baseline, current, &["--force"]);
    let (bn, b) = oracle::main_graph_positions(&oracle::load(baseline));
    let (cn, k) = oracle::main_graph_positions(&oracle::load(current));
    let g = &c["kernels"][0]["graphs"][0];
    assert_eq!((g["baseline_replays"].as_u64(), g["current_replays"].as_u64()), (Some(bn), Some(cn)));
    let rows = g["changes"].as_array().unwrap();
    let mut keys: Vec<&(String, Option<u32>)> = b.keys().chain(k.keys()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(rows.len(), keys.len(), "one row per name and position of either side");
    let mut last = f64::INFINITY;
    for r in rows {
        let key = (r["name"].as_str().unwrap().to_string(), r["occurrence"].as_u64().map(|o| o as u32));
        let per =
            |m: &BTreeMap<(String, Option<u32>), f64>, n: u64| m.get(&key).map_or(0.0, |t| t / n as f64);
        let (want_b, want_c) = (per(&b, bn), per(&k, cn));
        let side = |s: &Value| if s.is_null() { 0.0 } else { s["time_us"].as_f64().unwrap() };
        // The oracle adds f64 µs: within 2 ns per activity.
        assert!(
            (side(&r["baseline"]) - want_b).abs() < 0.002,
            "{key:?} baseline {} vs {want_b}",
            r["baseline"]
        );
        assert!((side(&r["current"]) - want_c).abs() < 0.002, "{key:?} current {} vs {want_c}", r["current"]);
        let shift = r["time_shift_us"].as_f64().unwrap();
        assert!((shift - (want_c - want_b)).abs() < 0.004, "{key:?} shift");
        assert!(shift.abs() <= last + 1e-9, "largest change first");
        last = shift.abs();
        let change = match (b.contains_key(&key), k.contains_key(&key)) {
            (true, true) => "matched",
            (false, true) => "appeared",
            _ => "vanished",
        };
        assert_eq!(r["change"], change, "{key:?}");
    }
    c
}

#[test]
fn kernels_are_matched_by_name_and_position_as_a_naive_second_method_matches_them() {
    let dir = repo_root().join("tests/data/labeled");
    // The reference graph runs each GEMM and layer norm once per layer: 44 kernels, 8 names.
    let c = assert_kernel_diff(
        &dir.join("reference-healthy-01/trace.rank0.json.gz"),
        &dir.join("reference-delay-100/trace.rank0.json.gz"),
    );
    let rows = c["kernels"][0]["graphs"][0]["changes"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["occurrence"].as_u64() == Some(4)), "four layers: a fourth instance");
    // 28 layers of Qwen3-0.6B: 812 kernels per replay, a dozen names.
    assert_kernel_diff(
        &dir.join("qwen3-0.6b-healthy-01/trace.rank0.json.gz"),
        &dir.join("qwen3-0.6b-healthy-02/trace.rank0.json.gz"),
    );
}

#[test]
fn kernels_that_appear_or_vanish_are_named_with_their_counts() {
    // One H200 against a TP=2 rank (forced: the world sizes differ): the rank runs all-reduces
    // the single GPU never does, and no graph of equal kernel count matches, so the trace's rows.
    let dir = repo_root().join("tests/data/labeled");
    let (base, cur) =
        (dir.join("reference-healthy-01/trace.rank0.json.gz"), dir.join("tp2-healthy-1/trace.rank0.json.gz"));
    let (_, c) = compare_traces(&base, &cur, &["--force"]);
    let want_b = oracle::kernel_table(&oracle::load(&base)).all;
    let want_c = oracle::kernel_table(&oracle::load(&cur)).all;
    let rows = c["kernels"][0]["trace"].as_array().unwrap();
    let mut names: Vec<&String> = want_b.keys().chain(want_c.keys()).collect();
    names.sort();
    names.dedup();
    assert_eq!(rows.len(), names.len());
    let mut appeared = 0;
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let (b, k) = (want_b.get(name), want_c.get(name));
        let count = |s: &Value| if s.is_null() { 0 } else { s["count"].as_f64().unwrap() as u64 };
        assert_eq!(count(&r["baseline"]), b.map_or(0, |w| w.count), "{name}");
        assert_eq!(count(&r["current"]), k.map_or(0, |w| w.count), "{name}");
        match (b, k) {
            (None, Some(_)) => {
                appeared += 1;
                assert_eq!(r["change"], "appeared");
            }
            (Some(_), None) => assert_eq!(r["change"], "vanished"),
            _ => assert_eq!(r["change"], "matched"),
        }
    }
    assert!(
        rows.iter().any(|r| r["change"] == "appeared" && r["name"].as_str().unwrap().contains("nccl")),
        "the all-reduce"
    );
    assert!(appeared >= 1);
    // The terminal names it too.
    let (_, out, _) = compare(&base, &cur, &["--force"]);
    assert!(out.lines().any(|l| l.contains("nccl") && l.ends_with("appeared")), "{out}");
}

#[test]
fn every_format_of_a_trace_comparison_says_the_same_regression() {
    let dir = tempfile::tempdir().unwrap();
    let labeled = repo_root().join("tests/data/labeled");
    let (base, cur) = (
        labeled.join("reference-healthy-01/trace.rank0.json.gz"),
        labeled.join("reference-delay-300/trace.rank0.json.gz"),
    );
    let p = |name: &str| dir.path().join(name);
    let (code, out, err) = compare(
        &base,
        &cur,
        &[
            "--junit",
            p("c.xml").to_str().unwrap(),
            "--markdown",
            p("c.md").to_str().unwrap(),
            "--html",
            p("c.html").to_str().unwrap(),
            "--csv",
            p("csv").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    for f in ["c.xml", "c.md", "c.html", "csv/kernel_diff.csv", "csv/metrics.csv"] {
        assert!(err.contains(&format!("wrote {}", p(f).display())), "{err}");
    }
    let (_, json) = compare_traces(&base, &cur, &[]);
    let failing: Vec<String> = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"] == "fail")
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert!(failing.contains(&"idle_before".to_string()), "{failing:?}");
    // JUnit: one failure per failing metric, named compare.<id>.
    let xml = std::fs::read_to_string(p("c.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase") && n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    let want: Vec<String> = failing.iter().map(|id| format!("compare.{id}")).collect();
    assert_eq!(failed, want);
    // Markdown and HTML carry the verdict and each failing metric's sentence.
    let md = std::fs::read_to_string(p("c.md")).unwrap();
    let html = std::fs::read_to_string(p("c.html")).unwrap();
    assert!(md.starts_with("### launchguard compare: ❌ FAIL"));
    assert!(html.contains("verdict v-fail") && html.contains("GPU timelines"));
    for id in &failing {
        assert!(md.contains(&format!("compare.{}", id.replace('_', "\\_"))), "{id} in markdown");
        assert!(html.contains(&format!("compare.{id}")), "{id} in html");
    }
    // The embedded document is the JSON comparison.
    let at = html.find("id=\"launchguard-document\">").unwrap();
    let rest = &html[at + "id=\"launchguard-document\">".len()..];
    let embedded: Value =
        serde_json::from_str(&rest[..rest.find("</script>").unwrap()].replace("<\\/", "</")).unwrap();
    assert_eq!(embedded["verdict"], "fail");
    // CSV: the metrics' rows, and the kernel diff's rows equal to the JSON's.
    let metrics = std::fs::read_to_string(p("csv/metrics.csv")).unwrap();
    assert_eq!(metrics.lines().count(), 1 + json["metrics"].as_array().unwrap().len());
    let mut rd = csv::Reader::from_path(p("csv/kernel_diff.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let k = &json["kernels"][0];
    let want =
        k["graphs"].as_array().unwrap().iter().map(|g| g["changes"].as_array().unwrap().len()).sum::<usize>()
            + k["trace"].as_array().unwrap().len();
    assert_eq!(rows.len(), want);
}

#[test]
fn a_report_never_overwrites_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let labeled = repo_root().join("tests/data/labeled");
    let base = labeled.join("reference-healthy-01/trace.rank0.json.gz");
    let copy = dir.path().join("cur.json.gz");
    std::fs::copy(labeled.join("reference-healthy-02/trace.rank0.json.gz"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let (code, _, err) = compare(&base, &copy, &["--html", copy.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

#[test]
fn limit_flags_override_the_configuration_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("lg.toml");
    std::fs::write(&config, "[compare]\nmin_idle_shift_us = 1.0\n").unwrap();
    let labeled = repo_root().join("tests/data/labeled");
    let (base, cur) = (
        labeled.join("reference-healthy-01/trace.rank0.json.gz"),
        labeled.join("reference-delay-300/trace.rank0.json.gz"),
    );
    let cfg = ["--config", config.to_str().unwrap()];
    let (_, by_file) = compare_traces(&base, &cur, &cfg);
    assert_eq!(by_file["limits"]["min_idle_shift_us"], 1.0);
    assert_eq!(status_of(&by_file, "idle_before"), ["fail"]);
    // The idle before each replay rose by about 127 µs here: a floor of 1000 µs lets it pass.
    let (_, by_flag) = compare_traces(&base, &cur, &[&cfg[..], &["--min-idle-shift-us", "1000"]].concat());
    assert_eq!(by_flag["limits"]["min_idle_shift_us"], 1000.0);
    assert_eq!(status_of(&by_flag, "idle_before"), ["pass"]);
    let (code, _, err) = compare(&base, &cur, &["--alpha", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("alpha") && err.lines().count() == 1, "{err}");
}

#[test]
fn results_with_impossible_samples_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture("h200-reference.json");
    let with = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut doc = read(&base);
        edit(&mut doc);
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
        p
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (with("neg.json", &|d| d["phases"]["before"]["host_us"][3] = json!(-5.0)), "sample 3 is -5 µs"),
        (with("huge.json", &|d| d["phases"]["after"]["host_us"][0] = json!(1e300)), "sample 0 is"),
        (with("empty.json", &|d| d["phases"]["before"]["host_us"] = json!([])), "no host samples before"),
        (
            with("many.json", &|d| d["phases"]["before"]["host_us"] = json!(vec![5.0; 1_000_001])),
            "more than the 1000000",
        ),
        (
            with("gpu.json", &|d| d["phases"]["before"]["gpu_us_per_replay"] = json!(-1.0)),
            "GPU time per replay before",
        ),
    ];
    for (path, want) in cases {
        let before = std::fs::read(&path).unwrap();
        let (code, out, err) = compare(&base, &path, &[]);
        assert_eq!(code, 2, "{want}: {out}{err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{want}: {err}");
        assert!(out.is_empty());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
