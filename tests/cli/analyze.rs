//! `launchguard analyze` on real traces, checked against the independent oracle.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::oracle::{self, Expected, Figures, Opts};
use crate::util::*;

/// Longest gap, launch statistics and other single durations: 2 ns.
const US_TOL: f64 = 0.002;
/// Occupancy.
const OCC_TOL: f64 = 1e-5;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Collects every disagreement between the program's figures and the oracle's for one group.
fn compare_figures(what: &str, got: &Value, want: &Figures, threshold: f64, bad: &mut Vec<String>) {
    let mut check = |ok: bool, msg: String| {
        if !ok {
            bad.push(format!("{what}: {msg}"));
        }
    };
    let window = f(&got["window_us"]);
    let busy = f(&got["busy_us"]);
    let idle = f(&got["idle_us"]);
    let occ = f(&got["occupancy"]);
    let gaps = &got["gaps"];
    check(
        got["activities"] == want.activities,
        format!("activities {} vs {}", got["activities"], want.activities),
    );
    check(close(window, want.window_us, US_TOL), format!("window {window} vs {}", want.window_us));
    check(close(occ, want.occupancy, OCC_TOL), format!("occupancy {occ} vs {}", want.occupancy));
    check(
        close(busy, want.busy_us, OCC_TOL * want.window_us.max(1.0)),
        format!("busy {busy} vs {}", want.busy_us),
    );
    check(gaps["threshold_us"] == threshold, format!("threshold {}", gaps["threshold_us"]));
    check(
        gaps["over_threshold"] == want.over_threshold,
        format!("gaps over threshold {} vs {}", gaps["over_threshold"], want.over_threshold),
    );
    check(gaps["count"] == want.gaps.len(), format!("gap count {} vs {}", gaps["count"], want.gaps.len()));
    check(
        close(f(&gaps["max_us"]), want.max_gap_us, US_TOL),
        format!("longest gap {} vs {}", gaps["max_us"], want.max_gap_us),
    );
    // The histogram: buckets [lo, hi) over the oracle's gaps.
    let buckets = gaps["histogram"].as_array().expect("histogram");
    let mut total = 0;
    for b in buckets {
        let lo = f(&b["lo_us"]);
        let hi = b["hi_us"].as_f64().unwrap_or(f64::INFINITY);
        let n = want.gaps.iter().filter(|g| **g >= lo && **g < hi).count();
        total += b["count"].as_u64().unwrap();
        check(b["count"] == n, format!("histogram [{lo}, {hi}) {} vs {n}", b["count"]));
    }
    check(total == want.gaps.len() as u64, format!("histogram holds {total} gaps of {}", want.gaps.len()));
    // Invariants.
    check((0.0..=1.0).contains(&occ), format!("occupancy {occ} outside [0, 1]"));
    check(busy <= window + 1e-9, format!("busy {busy} > window {window}"));
    check(close(busy + idle, window, 1e-6), format!("busy {busy} + idle {idle} != window {window}"));
    check(
        close(occ, if window > 0.0 { busy / window } else { 0.0 }, 1e-12),
        "occupancy != busy / window".into(),
    );
}

/// Compares a whole `analyze --format json` document with the oracle; returns the disagreements.
fn compare(got: &Value, want: &Expected, threshold: f64) -> Vec<String> {
    let mut bad = Vec::new();
    let source = &got["source"];
    if source["events"] != want.events {
        bad.push(format!("events {} vs {}", source["events"], want.events));
    }
    if source["skipped_events"] != want.skipped {
        bad.push(format!("skipped {} vs {}", source["skipped_events"], want.skipped));
    }
    let devices = got["devices"].as_array().expect("devices");
    let labels: Vec<&str> =
        devices.iter().map(|d| d["device"].as_str().expect("device is a string")).collect();
    let want_labels: Vec<&str> = want.devices.keys().map(String::as_str).collect();
    let mut sorted = labels.clone();
    sorted.sort();
    if sorted != want_labels {
        bad.push(format!("devices {labels:?} vs {want_labels:?}"));
    }
    for dev in devices {
        let label = dev["device"].as_str().unwrap();
        let Some(w) = want.devices.get(label) else { continue };
        compare_figures(&format!("device {label}"), dev, w, threshold, &mut bad);
        match (dev["steady"].is_null(), want.steady.get(label)) {
            (true, None) => {}
            (false, Some(w)) => {
                compare_figures(&format!("device {label} steady"), &dev["steady"], w, threshold, &mut bad)
            }
            (got, want) => bad.push(format!("device {label}: steady state {} vs {}", !got, want.is_some())),
        }
        let streams = dev["streams"].as_array().expect("streams");
        let want_streams: Vec<_> = want.streams.keys().filter(|k| k.0 == label).collect();
        if streams.len() != want_streams.len() {
            bad.push(format!("device {label}: {} streams vs {}", streams.len(), want_streams.len()));
        }
        for s in streams {
            let key = (label.to_string(), s["stream"].as_str().expect("stream is a string").to_string());
            match want.streams.get(&key) {
                Some(w) => {
                    compare_figures(&format!("device {} stream {}", key.0, key.1), s, w, threshold, &mut bad)
                }
                None => bad.push(format!("unexpected stream {key:?}")),
            }
        }
    }

    let gl = &got["graph_launches"];
    let wl = &want.launches;
    if gl["count"] != wl.count {
        bad.push(format!("graph launches {} vs {}", gl["count"], wl.count));
    }
    for (key, w) in
        [("mean_us", wl.mean_us), ("p50_us", wl.p50_us), ("p99_us", wl.p99_us), ("max_us", wl.max_us)]
    {
        let ok = match (gl[key].as_f64(), w) {
            (Some(a), Some(b)) => close(a, b, US_TOL),
            (None, None) => gl[key].is_null(),
            _ => false,
        };
        if !ok {
            bad.push(format!("graph launch {key} {} vs {w:?}", gl[key]));
        }
    }
    let counts: Vec<u64> = wl.kernels.iter().map(|k| k.1).collect();
    let (min, max) = (counts.iter().min(), counts.iter().max());
    let kpl = &gl["kernels_per_launch"];
    if kpl["min"].as_u64().as_ref() != min || kpl["max"].as_u64().as_ref() != max {
        bad.push(format!("kernels per launch {kpl} vs {min:?}..{max:?}"));
    }

    let idle = &got["replay_summary"]["steady_idle_before_p50_us"];
    let idle_ok = match (idle.as_f64(), want.steady_idle_before_p50) {
        (Some(a), Some(b)) => close(a, b, US_TOL),
        (None, None) => true,
        _ => false,
    };
    if !idle_ok {
        bad.push(format!("steady idle before p50 {idle} vs {:?}", want.steady_idle_before_p50));
    }
    let replays = got["replays"].as_array().expect("replays");
    if replays.len() as u64 != wl.count {
        bad.push(format!("{} replays for {} launches", replays.len(), wl.count));
    }
    for w in &want.replays {
        let Some(r) = replays.iter().find(|r| r["correlation"] == w.correlation) else {
            bad.push(format!("no replay with correlation {}", w.correlation));
            continue;
        };
        let opt_close = |v: &Value, w: Option<f64>| match (v.as_f64(), w) {
            (Some(a), Some(b)) => close(a, b, US_TOL),
            (None, None) => true,
            _ => false,
        };
        if r["kernels"] != w.kernels
            || !opt_close(&r["launch_to_first_kernel_us"], w.launch_to_first_kernel_us)
            || !opt_close(&r["gpu_span_us"], w.gpu_span_us)
            || !opt_close(&r["idle_before_us"], w.idle_before_us)
        {
            bad.push(format!("replay {r} vs {w:?}"));
        }
    }
    bad
}

/// Runs the program and the oracle on one trace file and asserts that they agree.
fn agree(path: &Path, extra: &[&str], opts: &Opts) -> (i32, Value, Expected) {
    let (code, got) = analyze_json(path, extra);
    let want = oracle::compute(&oracle::load(path), opts);
    let bad = compare(&got, &want, opts.gap_threshold_us);
    assert!(
        bad.is_empty(),
        "{}: {} disagreements with the oracle:\n{}",
        path.display(),
        bad.len(),
        bad.join("\n")
    );
    (code, got, want)
}

fn status<'a>(v: &'a Value, id: &str) -> &'a str {
    v["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"))
        ["status"]
        .as_str()
        .unwrap()
}

fn shared_trace(rel: &str) -> Option<PathBuf> {
    shared_dir().map(|d| d.join("traces").join(rel))
}

#[test]
fn every_shared_trace_agrees_with_the_oracle() {
    // Except the one without GPU activity, which is unusable input (tested below).
    let traces: Vec<PathBuf> =
        shared_traces().into_iter().filter(|p| !p.ends_with("cpu_only_rank34.json.gz")).collect();
    for path in &traces {
        let (code, got, want) = agree(path, &[], &Opts::default());
        // Exit code follows the verdict.
        let verdict = got["verdict"].as_str().unwrap();
        assert_eq!(
            code,
            if verdict == "fail" { 1 } else { 0 },
            "{}: exit {code} for {verdict}",
            path.display()
        );
        assert_eq!(got["schema"], "launchguard.analysis/1");
        assert_eq!(got["source"]["truncated"], false, "{}", path.display());
        assert_eq!(got["source"]["gzip"], true);
        // Every check carries its value, limit and a one-line reason.
        for c in got["checks"].as_array().unwrap() {
            let msg = c["message"].as_str().unwrap();
            assert!(!msg.is_empty() && !msg.contains('\n'), "{}: {c}", path.display());
            assert!(c.get("value").is_some() && c.get("limit").is_some(), "{c}");
        }
        assert!(!want.devices.is_empty(), "{}", path.display());
        eprintln!(
            "{}: {} devices, occupancy {:?}, {} launches",
            path.display(),
            want.devices.len(),
            want.devices.values().map(|d| d.occupancy).collect::<Vec<_>>(),
            want.launches.count
        );
    }
}

#[test]
fn h200_verdicts() {
    for path in shared_traces() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("healthy_") {
            let (code, v, _) = agree(&path, &[], &Opts::default());
            assert_ne!(v["verdict"], "fail", "{name}");
            assert_eq!(code, 0, "{name}");
        } else if name.starts_with("delay270_") {
            let (code, v, want) = agree(&path, &[], &Opts::default());
            assert_eq!((code, v["verdict"].as_str()), (1, Some("fail")), "{name}");
            assert_eq!(status(&v, "occupancy"), "fail", "{name}");
            if name.starts_with("delay270_clean") {
                // The oracle's figure, and the one the ground truth measured (0.706).
                assert!(
                    (want.devices["0"].occupancy - 0.7059).abs() < 5e-5,
                    "{}",
                    want.devices["0"].occupancy
                );
                assert!((f(&v["devices"][0]["occupancy"]) - 0.7059).abs() < 5e-5);
            }
        }
    }
}

#[test]
fn bundled_example_fails_on_occupancy() {
    let (code, v, _) = agree(&repo_root().join("examples/delay270_clean.json.gz"), &[], &Opts::default());
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "fail");
}

#[test]
fn a_trace_without_gpu_activity_is_unusable_input() {
    let Some(path) = shared_trace("public/cuda/cpu_only_rank34.json.gz") else { return };
    // Not "0% occupancy", not a failing stack: there is nothing to measure (exit 2, one line).
    let out = launchguard().arg("analyze").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cpu_only_rank34") && err.contains("no GPU activity"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn within_measures_from_the_first_matching_span_to_the_last() {
    let within = || Opts { within: Some(regex::Regex::new("probe::replay").unwrap()), ..Opts::default() };
    let interiors = || Opts { within_interiors: true, ..within() };
    for path in shared_traces().iter().filter(|p| p.to_string_lossy().contains("/h200/")) {
        let (_, got, want) = agree(path, &["--within", "probe::replay"], &within());
        assert_eq!(
            (got["within"].as_str(), got["within_mode"].as_str()),
            (Some("probe::replay"), Some("span range"))
        );
        // The window runs from the first GPU-side `probe::replay` span to the last, what lies
        // between them included: the whole trace's window, less what ran before the first span
        // (the refresh traces copy their input first).
        let (label, d) = want.devices.first_key_value().expect("a device");
        let whole = oracle::compute(&oracle::load(path), &Opts::default()).devices[label].clone();
        assert!((d.window_us / whole.window_us - 1.0).abs() < 0.05, "{} vs {}", d.window_us, whole.window_us);
        // Inside the spans only, the time between them is dropped and occupancy rises: only
        // when asked for, and said.
        let (_, got, want_in) =
            agree(path, &["--within", "probe::replay", "--within-interiors"], &interiors());
        assert_eq!(got["within_mode"], "span interiors");
        let inside = &want_in.devices[label];
        assert!(inside.window_us < d.window_us && inside.occupancy >= d.occupancy, "{inside:?} vs {d:?}");
    }
    // The delay the guard exists to find lies between the spans: the range keeps it.
    let path = repo_root().join("examples/delay270_clean.json.gz");
    let (code, v, _) = agree(&path, &["--within", "probe::replay"], &within());
    assert_eq!((code, status(&v, "occupancy")), (1, "fail"));
    let (_, v, _) = agree(&path, &["--within", "probe::replay", "--within-interiors"], &interiors());
    assert_eq!(status(&v, "occupancy"), "pass");
    // A serving trace marks its decode step only on the host.
    if let Some(path) = shared_trace("public/rocm/mi300x_sglang_qwen3_8b_decode.json.gz") {
        let opts = Opts { within: Some(regex::Regex::new("DECODE").unwrap()), ..Opts::default() };
        agree(&path, &["--within", "DECODE"], &opts);
    }
}

#[test]
fn within_matching_nothing_is_an_error_naming_the_spans_there_are() {
    let Some(path) = shared_trace("public/rocm/mi300x_sglang_qwen3_8b_decode.json.gz") else { return };
    let out = launchguard().arg("analyze").arg(&path).args(["--within", "no-such-span"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The trace's two span names, read from it independently.
    let doc = oracle::load(&path);
    let names: std::collections::BTreeSet<&str> = oracle::events(&doc)
        .iter()
        .filter(|e| e["cat"] == "user_annotation" || e["cat"] == "gpu_user_annotation")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(!names.is_empty());
    assert!(err.contains("no-such-span") && names.iter().all(|n| err.contains(n)), "{err} vs {names:?}");
    // An invalid pattern is a usage error.
    let out = launchguard().arg("analyze").arg(&path).args(["--within", "("]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--within"));
}

/// The bundled delay270_clean trace: occupancy 0.706, 5 gaps over 100 µs, launch mean 43.4 µs.
fn delay270() -> PathBuf {
    repo_root().join("examples/delay270_clean.json.gz")
}

#[test]
fn thresholds_from_flags_change_the_statuses() {
    let path = delay270();
    let want = oracle::compute(&oracle::load(&path), &Opts::default());
    let occ = want.devices["0"].occupancy;
    let mean = want.launches.mean_us.unwrap();
    assert!(occ > 0.70 && occ < 0.71 && mean > 40.0 && mean < 50.0, "{occ} {mean}");
    assert_eq!(want.devices["0"].over_threshold, 5);

    // Defaults: occupancy fails, 5 gaps do not (more than 5 fail), the launch mean passes.
    let (code, v) = analyze_json(&path, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        (status(&v, "occupancy"), status(&v, "gaps"), status(&v, "graph_launch")),
        ("fail", "pass", "pass")
    );

    // The GPU waits 72 µs before each replay: the replay_idle check fails too.
    assert_eq!(status(&v, "replay_idle"), "fail");

    // Occupancy between the limits warns; a warning exits 0 (the idle limit raised out of the way).
    let idle = ["--replay-idle-fail-us", "1000"];
    let (code, v) = analyze_json(&path, &[&["--occupancy-fail", "0.70"][..], &idle].concat());
    assert_eq!((code, status(&v, "occupancy"), v["verdict"].as_str().unwrap()), (0, "warn", "warn"));
    let (code, v) =
        analyze_json(&path, &[&["--occupancy-fail", "0.6", "--occupancy-warn", "0.7"][..], &idle].concat());
    assert_eq!((code, status(&v, "occupancy"), v["verdict"].as_str().unwrap()), (0, "pass", "pass"));

    // A lower gap threshold counts more gaps, as the oracle does.
    let opts = Opts { gap_threshold_us: 50.0, ..Opts::default() };
    let (code, v, want50) = agree(&path, &["--gap-us", "50", "--occupancy-fail", "0.5"], &opts);
    assert!(want50.devices["0"].over_threshold > 5);
    assert_eq!((code, status(&v, "gaps")), (1, "fail"));
    let (_, v) = analyze_json(&path, &["--max-gaps", "4"]);
    assert_eq!(status(&v, "gaps"), "fail");
    let gaps = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "gaps").unwrap();
    assert_eq!((gaps["value"].as_f64(), gaps["limit"].as_f64()), (Some(5.0), Some(4.0)));

    // The launch limit: at or above it fails.
    let (_, v) = analyze_json(&path, &["--launch-fail-us", &format!("{}", mean - 0.5)]);
    assert_eq!(status(&v, "graph_launch"), "fail");
    let gl = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "graph_launch").unwrap();
    assert!(close(f(&gl["value"]), mean, US_TOL), "{gl}");

    // Nonsense limits are usage errors.
    for bad in [&["--occupancy-fail", "1.5"][..], &["--gap-us", "-1"], &["--max-gaps", "x"]] {
        let out = launchguard().arg("analyze").arg(&path).args(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.trim().is_empty(), "{bad:?}");
    }
}

#[test]
fn thresholds_from_a_config_file_and_flags_over_it() {
    let path = delay270();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("launchguard.toml");
    std::fs::write(
        &config,
        "[thresholds]\noccupancy_fail = 0.6\noccupancy_warn = 0.7\nmax_gaps = 4\nreplay_idle_fail_us = 1000\n",
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let (code, v) = analyze_json(&path, &["--config", cfg]);
    assert_eq!((status(&v, "occupancy"), status(&v, "gaps")), ("pass", "fail"));
    assert_eq!(code, 1);
    // A flag wins over the file.
    let (code, v) = analyze_json(&path, &["--config", cfg, "--max-gaps", "5"]);
    assert_eq!((code, status(&v, "gaps"), v["verdict"].as_str().unwrap()), (0, "pass", "pass"));
    let (_, v) = analyze_json(&path, &["--config", cfg, "--occupancy-warn", "0.9"]);
    assert_eq!(status(&v, "occupancy"), "warn");
    // A typo or a bad value in the file is an error naming it, not a silent default.
    std::fs::write(&config, "[thresholds]\noccupancy_fial = 0.6\n").unwrap();
    let out = launchguard().arg("analyze").arg(&path).args(["--config", cfg]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("occupancy_fial") && err.trim().lines().count() == 1, "{err}");
    let out = launchguard()
        .arg("analyze")
        .arg(&path)
        .args(["--config", "/no/such/launchguard.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn decompressed(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut out).unwrap();
    out
}

/// `ts`, `dur`, `pid` and `tid` of every event written as strings, as some exporters do.
fn stringify_numbers(doc: &mut Value) {
    let evs = match doc {
        Value::Object(o) => o.get_mut("traceEvents").unwrap(),
        other => other,
    };
    for e in evs.as_array_mut().unwrap() {
        for key in ["ts", "dur", "pid", "tid"] {
            if let Some(v) = e.get_mut(key) {
                if let Value::Number(n) = v {
                    *v = Value::String(n.to_string());
                }
            }
        }
    }
}

/// Checks the program's figures on `derived` against the oracle's on the original document.
fn same_as_original(derived: &Path, original: &Expected, gzip: bool) {
    let (_, got) = analyze_json(derived, &[]);
    let bad = compare(&got, original, 100.0);
    assert!(bad.is_empty(), "{}:\n{}", derived.display(), bad.join("\n"));
    assert_eq!(got["source"]["gzip"], gzip, "{}", derived.display());
    assert_eq!(got["source"]["truncated"], false);
}

#[test]
fn other_forms_of_a_real_trace_give_the_same_figures() {
    let original = repo_root().join("examples/healthy_clean.json.gz");
    let want = oracle::compute(&oracle::load(&original), &Opts::default());
    let text = decompressed(&original);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    // Uncompressed, under its own name and under a gzip name: detected by content.
    same_as_original(&write("plain.json", &text), &want, false);
    same_as_original(&write("plain-named.json.gz", &text), &want, false);
    same_as_original(&write("gzip-named.json", &gzip(&text)), &want, true);
    // Multi-member gzip: the text cut in two (mid-token), each half its own member.
    let mid = text.len() / 2;
    let mut members = gzip(&text[..mid]);
    members.extend(gzip(&text[mid..]));
    same_as_original(&write("members.json.gz", &members), &want, true);

    let doc: Value = serde_json::from_slice(&text).unwrap();
    // A bare array of the events.
    same_as_original(&write("array.json", &serde_json::to_vec(&doc["traceEvents"]).unwrap()), &want, false);
    // traceEvents first, every other key after it.
    let mut reordered = serde_json::Map::new();
    reordered.insert("traceEvents".into(), doc["traceEvents"].clone());
    for (k, v) in doc.as_object().unwrap() {
        if k != "traceEvents" {
            reordered.insert(k.clone(), v.clone());
        }
    }
    let keys_after = serde_json::to_vec(&Value::Object(reordered)).unwrap();
    same_as_original(&write("keys-after.json.gz", &gzip(&keys_after)), &want, true);
    // Fractional timestamps, pids and tids as strings.
    let mut strings = doc.clone();
    stringify_numbers(&mut strings);
    same_as_original(&write("strings.json", &serde_json::to_vec(&strings).unwrap()), &want, false);
}

#[test]
fn integer_microsecond_trace_with_string_numbers_gives_the_same_figures() {
    let Some(original) = shared_trace("public/cuda/a100_graph_launches_rank0.json.gz") else { return };
    let doc = oracle::load(&original);
    let want = oracle::compute(&doc, &Opts::default());
    assert_eq!(want.launches.count, 70);
    let mut strings = doc;
    stringify_numbers(&mut strings);
    assert!(strings["traceEvents"][5]["ts"].is_string());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("strings.json.gz");
    std::fs::write(&p, gzip(&serde_json::to_vec(&strings).unwrap())).unwrap();
    same_as_original(&p, &want, true);
}

/// Runs `analyze` on a file in a temporary directory and returns (exit code, stdout, stderr),
/// asserting that the file is unchanged afterwards.
fn run_on(path: &Path, extra: &[&str]) -> (i32, String, String) {
    let before = std::fs::read(path).ok();
    let out = launchguard().arg("analyze").arg(path).args(extra).output().unwrap();
    assert_eq!(std::fs::read(path).ok(), before, "{} was modified", path.display());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Both event parsers: the default fast scanner and the serde reference.
const PARSERS: [&str; 2] = ["fast", "simple"];

/// Asserts exit 2 with one line on stderr that names the file and contains `needle`, with either
/// parser.
fn refused(path: &Path, needle: &str) {
    for parser in PARSERS {
        refused_by(path, needle, parser);
    }
}

fn refused_by(path: &Path, needle: &str, parser: &str) {
    let (code, stdout, stderr) = run_on(path, &["--format", "json", "--parser", parser]);
    assert_eq!(code, 2, "{} (--parser {parser}): exit {code}, stderr {stderr}", path.display());
    let line = stderr.trim_end();
    // --format json: standard output is the error as an object, the same line.
    let v: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{}: {e}: {stdout}", path.display()));
    assert_eq!(v["schema"], "launchguard.error/1");
    assert_eq!(Some(line), v["error"].as_str().map(|e| format!("launchguard: error: {e}")).as_deref());
    assert_eq!(line.lines().count(), 1, "{}: not one line: {stderr}", path.display());
    assert!(line.starts_with("launchguard: error: "), "{line}");
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(line.contains(&*name), "{line} does not name {name}");
    assert!(line.contains(needle), "{line} does not say {needle:?} (--parser {parser})");
}

const KERNEL: &str =
    r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"correlation":1}}"#;

#[test]
fn unusable_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    refused(&write("not-json.json", b"hello, world"), "not a JSON trace");
    refused(&write("object.json", br#"{"schemaVersion": 1, "events": []}"#), "without traceEvents");
    refused(&write("string.json", br#""traceEvents""#), "not a Kineto/Chrome trace");
    refused(&write("number.json", b"42"), "not a Kineto/Chrome trace");
    refused(&write("events-not-array.json", br#"{"traceEvents": {"a": 1}}"#), "not a Kineto/Chrome trace");
    refused(&write("empty.json", b""), "empty file");
    refused(&write("no-events.json", br#"{"traceEvents": []}"#), "no events");
    refused(
        &write("corrupt.json.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage, not deflate data"),
        "gzip",
    );
    // Nesting: 100k brackets, bare and inside traceEvents.
    refused(&write("deep.json", &b"[".repeat(100_000)), "recursion limit");
    let mut deep = br#"{"traceEvents": "#.to_vec();
    deep.extend(b"[".repeat(100_000));
    refused(&write("deep-events.json", &deep), "recursion limit");
    // Invalid UTF-8, NaN and Infinity: before any event, and after one (damage in the middle is
    // an error, not a truncation: the events after it would be lost unseen).
    let bad_utf8 =
        [&br#"{"ph":"X","cat":"kernel","name":""#[..], b"\xff\xfe", br#"","pid":0,"tid":7,"ts":5,"dur":1}"#]
            .concat();
    for (name, ev) in [
        ("utf8", bad_utf8.clone()),
        ("nan", KERNEL.replace("10.5", "NaN").into_bytes()),
        ("infinity", KERNEL.replace("\"dur\":2", "\"dur\":Infinity").into_bytes()),
    ] {
        let mut first = b"{\"traceEvents\":[".to_vec();
        first.extend(&ev);
        first.extend(format!(",{KERNEL}]}}").as_bytes());
        refused(&write(&format!("{name}-first.json"), &first), "not a JSON trace");
        let mut middle = format!("{{\"traceEvents\":[{KERNEL},").into_bytes();
        middle.extend(&ev);
        middle.extend(format!(",{KERNEL}]}}").as_bytes());
        refused(&write(&format!("{name}-middle.json"), &middle), "invalid JSON after 1 complete event");
    }
    // Every event skipped: nothing usable.
    let skipped =
        format!("[{}, {}, 7]", KERNEL.replace("\"dur\":2", "\"dur\":-2"), KERNEL.replace("\"ts\":10.5,", ""));
    refused(&write("all-skipped.json", skipped.as_bytes()), "no usable event");
    refused(&write("numbers-cut.json", b"[1, 2"), "no usable event");
    // Not traces: a folder stands for the traces in it (the ranks of one run), and one without
    // any is refused; a missing path.
    let empty = tempfile::tempdir().unwrap();
    refused(empty.path(), "no trace");
    refused(&dir.path().join("missing.json"), "no such file");
}

#[test]
fn a_gzip_bomb_is_refused_quickly() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // 4 GiB of whitespace (then `[`s) in 4096 members of 1 MiB: about 4 MB of gzip.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b' '; 1 << 20]).unwrap();
    let member = enc.finish().unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b'['; 1 << 20]).unwrap();
    let brackets = enc.finish().unwrap();
    for (name, m) in [("spaces.json.gz", &member), ("brackets.json.gz", &brackets)] {
        let path = dir.path().join(name);
        std::fs::write(&path, m.repeat(4096)).unwrap();
        let start = std::time::Instant::now();
        refused(&path, if name.starts_with("spaces") { "gzip bomb" } else { "recursion limit" });
        assert!(start.elapsed().as_secs() < 60, "{name}: {:?}", start.elapsed());
    }
}

#[test]
fn bad_events_are_counted_skips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skips.json");
    let events = [
        KERNEL.to_string(),
        KERNEL.replace("\"dur\":2", "\"dur\":-2"),  // negative dur
        KERNEL.replace(",\"dur\":2", ""),           // missing dur
        KERNEL.replace("\"ts\":10.5,", ""),         // missing ts
        KERNEL.replace("10.5", "\"soon\""),         // unusable ts
        KERNEL.replace("10.5", "\"20.25\""),        // a numeric string is fine
        r#"{"ph":"M","name":"process_name","pid":0,"ts":0,"args":{"name":"GPU 0"}}"#.to_string(),
        r#"{"ph":"i","name":"instant","pid":0,"tid":1}"#.to_string(), // no ts
        "null".to_string(),
        r#"{"ph":"X","cat":"Some new kind","name":"x","pid":"host","tid":"main","ts":1,"dur":1,"extra":[1,{"a":null}]}"#
            .to_string(),
    ];
    std::fs::write(&path, format!("{{\"traceEvents\":[{}],\"traceName\":\"t\"}}", events.join(","))).unwrap();
    let (code, got) = analyze_json(&path, &[]);
    let want = oracle::compute(&oracle::load(&path), &Opts::default());
    let bad = compare(&got, &want, 100.0);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(got["source"]["events"], 10);
    let s = &got["source"]["skipped"];
    assert_eq!(
        (s["bad_dur"].as_u64(), s["missing_ts"].as_u64(), s["not_an_object"].as_u64()),
        (Some(2), Some(3), Some(1))
    );
    assert_eq!(got["source"]["skipped_events"], 6);
    assert_eq!(want.skipped, 6);
    assert_eq!(got["devices"][0]["activities"], 2);
    // The skips are said, not silent.
    assert!(got["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("skipped 6 events")));
    // Two kernels far apart and no graph replay: nothing for the guard's limits, said so.
    assert_eq!((code, got["verdict"].as_str()), (0, Some("skip")));
    assert!(got["reason"].as_str().unwrap().contains("no graph replay"), "{}", got["reason"]);
    // Stating a limit does not make it judge what it is not for; limits held as stated do.
    let (code, got) = analyze_json(&path, &["--occupancy-fail", "0.8"]);
    assert_eq!((code, got["verdict"].as_str()), (0, Some("skip")));
    let (code, got) = analyze_json(&path, &["--adapt-limits", "false"]);
    assert_eq!((code, status(&got, "occupancy")), (1, "fail"));
}

/// The compact text of an object trace with `events`, and where each event ends in it.
fn trace_text(events: &[Value]) -> (Vec<u8>, Vec<usize>) {
    let mut text = b"{\"schemaVersion\":1,\"traceEvents\":[".to_vec();
    let mut ends = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        text.extend(serde_json::to_vec(e).unwrap());
        ends.push(text.len());
    }
    text.extend(b"],\"traceName\":\"x\"}");
    (text, ends)
}

/// Asserts a truncated analysis: warning on stderr, `truncated` set, `kept` events counted, and
/// the figures of the oracle over those events.
fn truncated_agrees(path: &Path, all: &[Value], kept: usize) {
    for parser in PARSERS {
        truncated_agrees_by(path, all, kept, parser);
    }
}

fn truncated_agrees_by(path: &Path, all: &[Value], kept: usize, parser: &str) {
    let (code, stdout, stderr) = run_on(path, &["--format", "json", "--parser", parser]);
    assert!(code == 0 || code == 1, "{} (--parser {parser}): exit {code}: {stderr}", path.display());
    let got: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(got["source"]["truncated"], true);
    assert_eq!(got["source"]["events"], kept as u64, "{}", path.display());
    assert!(stderr.contains("warning") && stderr.contains("truncated"), "{stderr}");
    assert!(stderr.contains(&format!("{kept} complete events")), "{stderr}");
    assert_eq!(status(&got, "trace_complete"), "warn");
    let want = oracle::compute(&Value::Array(all[..kept].to_vec()), &Opts::default());
    let bad = compare(&got, &want, 100.0);
    assert!(bad.is_empty(), "{} (--parser {parser}):\n{}", path.display(), bad.join("\n"));
}

#[test]
fn truncated_traces_keep_their_complete_events() {
    let doc = oracle::load(&repo_root().join("examples/healthy_clean.json.gz"));
    let all = oracle::events(&doc).to_vec();
    let (text, ends) = trace_text(&all);
    let dir = tempfile::tempdir().unwrap();
    let n = all.len() * 3 / 5;

    // An object cut in the middle of event n (0-based): events 0..n are complete.
    let mid = (ends[n - 1] + ends[n]) / 2;
    let p = dir.path().join("cut-object.json");
    std::fs::write(&p, &text[..mid]).unwrap();
    truncated_agrees(&p, &all, n);

    // A bare array without its closing bracket (what a crashed writer leaves).
    let mut array = serde_json::to_vec(&all[..n]).unwrap();
    array.pop();
    array.extend(b",\n");
    let p = dir.path().join("open-array.json");
    std::fs::write(&p, &array).unwrap();
    truncated_agrees(&p, &all, n);

    // A gzip stream cut short: the events complete in what decompresses are kept.
    let gz = gzip(&text);
    let p = dir.path().join("cut.json.gz");
    std::fs::write(&p, &gz[..gz.len() * 3 / 5]).unwrap();
    let mut prefix: Vec<u8> = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(&gz[..gz.len() * 3 / 5]);
    let mut buf = [0u8; 1 << 16];
    loop {
        match std::io::Read::read(&mut dec, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => prefix.extend(&buf[..k]),
        }
    }
    let kept = ends.iter().filter(|&&e| e <= prefix.len()).count();
    assert!(kept > 0 && kept < all.len());
    truncated_agrees(&p, &all, kept);
}

#[test]
fn terminal_report_of_the_healthy_example() {
    let out = launchguard()
        .current_dir(repo_root())
        .args(["analyze", "examples/healthy_clean.json.gz"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    // Occupancy 0.898 sits just under the 0.90 warning limit: a warning, exit 0.
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

#[test]
fn with_several_devices_each_is_checked_and_the_worst_decides() {
    // The healthy example moved to device 1 (its correlation ids shifted so that they stay its
    // own), beside the delayed one on device 0.
    let mut healthy = oracle::load(&repo_root().join("examples/healthy_clean.json.gz"));
    let delayed = oracle::load(&delay270());
    for e in healthy["traceEvents"].as_array_mut().unwrap() {
        let gpu = e.get("args").and_then(|a| a.get("device")).is_some();
        if gpu {
            e["pid"] = 1.into();
            e["args"]["device"] = 1.into();
        }
        if let Some(c) = e.get("args").and_then(|a| a.get("correlation")).and_then(Value::as_u64) {
            e["args"]["correlation"] = (c + 1_000_000).into();
        }
    }
    let mut events = delayed["traceEvents"].as_array().unwrap().clone();
    events.extend(healthy["traceEvents"].as_array().unwrap().iter().cloned());
    let doc = serde_json::json!({ "traceEvents": events });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two-devices.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();

    let (code, got, want) = agree(&path, &[], &Opts::default());
    assert_eq!(want.devices.len(), 2);
    let (d0, d1) = (&want.devices["0"], &want.devices["1"]);
    assert!(d0.occupancy < 0.8 && d1.occupancy > 0.8);
    assert_eq!(code, 1);
    let occ = got["checks"].as_array().unwrap().iter().find(|c| c["id"] == "occupancy").unwrap();
    assert_eq!(occ["status"], "fail");
    assert!(close(f(&occ["value"]), d0.occupancy, OCC_TOL), "{occ}");
    assert!(occ["message"].as_str().unwrap().contains("GPU 0"), "{occ}");
    let gaps = got["checks"].as_array().unwrap().iter().find(|c| c["id"] == "gaps").unwrap();
    assert_eq!(f(&gaps["value"]) as u64, d0.over_threshold.max(d1.over_threshold));
    assert_eq!(want.launches.count, 200);

    // The healthy device alone passes its occupancy floor when the limit is lowered below the
    // delayed one's: the verdict follows the worst device, whichever it is.
    let (_, got) = analyze_json(&path, &["--occupancy-fail", "0.7", "--occupancy-warn", "0.7"]);
    assert_eq!(status(&got, "occupancy"), "pass");
}

#[test]
fn kernels_that_run_past_the_next_start_count_once() {
    // The ROCm pattern (TraceLens #669): a kernel's dur runs past the next kernel's start on the
    // same stream. Made from a real ROCm graph replay by stretching every 10th kernel 5 µs past
    // its successor's start.
    let Some(original) = shared_trace("public/rocm/gfx942_vllm_decode_full_graph.json.gz") else { return };
    let mut doc = oracle::load(&original);
    let evs = doc["traceEvents"].as_array_mut().unwrap();
    let mut kernels: Vec<usize> =
        (0..evs.len()).filter(|&i| evs[i]["cat"] == "kernel" && evs[i]["ph"] == "X").collect();
    kernels.sort_by(|&a, &b| f(&evs[a]["ts"]).total_cmp(&f(&evs[b]["ts"])));
    let mut stretched = 0;
    for pair in kernels.windows(2).step_by(10) {
        let (k, next) = (pair[0], pair[1]);
        let dur = f(&evs[next]["ts"]) - f(&evs[k]["ts"]) + 5.0;
        evs[k]["dur"] = serde_json::json!((dur * 1000.0).round() / 1000.0);
        stretched += 1;
    }
    assert!(stretched > 30);
    let sum: f64 = kernels.iter().map(|&i| f(&evs[i]["dur"])).sum();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("overrun.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (_, got, want) = agree(&path, &[], &Opts::default());
    let busy = f(&got["devices"][0]["busy_us"]);
    // Summing durations (as the ATOM guard does) counts each overlap twice.
    assert!(sum - busy > 2.0 * stretched as f64, "sum {sum} busy {busy}");
    assert!(close(busy, want.devices.values().next().unwrap().busy_us, 0.01));
    assert!(f(&got["devices"][0]["occupancy"]) <= 1.0);
}
