//! `launchguard analyze` on several traces, the ranks of one distributed run (the two TP=2 traces
//! of `../shared/traces/h200x2`), checked against an independent computation written from the
//! definitions in `crates/analysis/src/ranks.rs`, not from its code.
//!
//! Differences of method, on purpose: the raw files are loaded whole as `serde_json::Value`;
//! times are integer nanoseconds cut from the number's text with string operations; covered time is
//! measured by a sweep over +1/−1 marks clipped to the window, not by merging sorted intervals;
//! collectives are told by the two NCCL prefixes the h200x2 traces use.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::oracle;
use crate::util::*;

/// Durations: 2 ns.
const US_TOL: f64 = 0.002;
/// Ratios.
const RATIO_TOL: f64 = 1e-9;

type Span = (i64, i64);

/// Integer ns from a µs number as written (`5118996178905.674`): whole part × 1000 + the
/// decimals padded to three digits.
fn ns(v: &Value) -> i64 {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => panic!("not a time: {other}"),
    };
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    assert!(frac.len() <= 3 && !text.contains(['e', 'E']), "unexpected time text {text}");
    let frac = format!("{frac:0<3}");
    whole.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

struct Kernel {
    start: i64,
    end: i64,
    collective: bool,
    correlation: Option<u64>,
}

struct Rank {
    rank: u64,
    kernels: Vec<Kernel>,
    /// cudaGraphLaunch calls: (start, end, correlation), sorted by (start, end).
    launches: Vec<(i64, i64, u64)>,
}

fn load_rank(path: &Path, rank: u64) -> Rank {
    let doc = oracle::load(path);
    let mut kernels = Vec::new();
    let mut launches = Vec::new();
    for e in oracle::events(&doc) {
        if e["ph"] != "X" {
            continue;
        }
        let start = ns(&e["ts"]);
        let end = start + ns(&e["dur"]);
        let correlation = e["args"]["correlation"].as_u64();
        match e["cat"].as_str() {
            Some("kernel" | "gpu_memcpy" | "gpu_memset") => {
                let name = e["name"].as_str().unwrap();
                let collective = name.starts_with("ncclDevKernel_") || name.starts_with("ncclKernel_");
                kernels.push(Kernel { start, end, collective, correlation });
            }
            Some("cuda_runtime") if e["name"] == "cudaGraphLaunch" => {
                launches.push((start, end, correlation.unwrap()));
            }
            _ => {}
        }
    }
    launches.sort();
    Rank { rank, kernels, launches }
}

/// Covered length of `spans` inside `w`: a sweep over +1 at each start and −1 at each end.
fn covered(spans: &[Span], w: Span) -> i64 {
    let mut marks: Vec<(i64, i32)> = Vec::new();
    for &(s, e) in spans {
        let (s, e) = (s.max(w.0), e.min(w.1));
        if s < e {
            marks.push((s, 1));
            marks.push((e, -1));
        }
    }
    marks.sort();
    let (mut depth, mut last, mut total) = (0, 0, 0);
    for (t, d) in marks {
        if depth > 0 {
            total += t - last;
        }
        depth += d;
        last = t;
    }
    total
}

fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    oracle::percentile(&v, q).unwrap()
}

struct Expected {
    /// Per rank: the wait of each kernel (0 for non-collectives), by index.
    waits: Vec<Vec<i64>>,
    min_overlap: i64,
    matched: usize,
    common: Span,
}

/// Matches the k-th collective of replay i on every rank and computes the waits.
fn expected(ranks: &[Rank]) -> Expected {
    let mut waits: Vec<Vec<i64>> = ranks.iter().map(|r| vec![0; r.kernels.len()]).collect();
    let mut min_overlap = i64::MAX;
    let mut matched = 0;
    let replays = ranks.iter().map(|r| r.launches.len()).min().unwrap();
    for i in 0..replays {
        let lists: Vec<Vec<usize>> = ranks
            .iter()
            .map(|r| {
                let c = r.launches[i].2;
                let mut idx: Vec<usize> = (0..r.kernels.len())
                    .filter(|&k| r.kernels[k].collective && r.kernels[k].correlation == Some(c))
                    .collect();
                idx.sort_by_key(|&k| (r.kernels[k].start, r.kernels[k].end));
                idx
            })
            .collect();
        assert!(lists.iter().all(|l| l.len() == lists[0].len()), "replay {i}: collective counts differ");
        for k in 0..lists[0].len() {
            let mut latest = i64::MIN;
            let mut earliest_end = i64::MAX;
            for (r, l) in ranks.iter().zip(&lists) {
                latest = latest.max(r.kernels[l[k]].start);
                earliest_end = earliest_end.min(r.kernels[l[k]].end);
            }
            min_overlap = min_overlap.min(earliest_end - latest);
            matched += 1;
            for (ri, (r, l)) in ranks.iter().zip(&lists).enumerate() {
                let kern = &r.kernels[l[k]];
                waits[ri][l[k]] = (latest - kern.start).max(0).min(kern.end - kern.start);
            }
        }
    }
    let first = ranks.iter().map(|r| r.kernels.iter().map(|k| k.start).min().unwrap()).max().unwrap();
    let last = ranks.iter().map(|r| r.kernels.iter().map(|k| k.end).max().unwrap()).min().unwrap();
    Expected { waits, min_overlap, matched, common: (first, last) }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// Compares one rank's figures over window `w` with the definitions.
fn compare_figures(what: &str, got: &Value, r: &Rank, waits: &[i64], w: Span, bad: &mut Vec<String>) {
    let all: Vec<Span> = r.kernels.iter().map(|k| (k.start, k.end)).collect();
    let compute: Vec<Span> = r.kernels.iter().filter(|k| !k.collective).map(|k| (k.start, k.end)).collect();
    let coll: Vec<Span> = r.kernels.iter().filter(|k| k.collective).map(|k| (k.start, k.end)).collect();
    let waiting: Vec<Span> = r.kernels.iter().zip(waits).map(|(k, &x)| (k.start, k.start + x)).collect();
    let working: Vec<Span> = r.kernels.iter().zip(waits).map(|(k, &x)| (k.start + x, k.end)).collect();
    let len = w.1 - w.0;
    let want = [
        ("window_start_us", us(w.0), US_TOL),
        ("window_us", us(len), US_TOL),
        ("busy_us", us(covered(&all, w)), US_TOL),
        ("compute_busy_us", us(covered(&compute, w)), US_TOL),
        ("collective_busy_us", us(covered(&coll, w)), US_TOL),
        ("collective_wait_us", us(covered(&waiting, w)), US_TOL),
        ("busy_excluding_wait_us", us(covered(&working, w)), US_TOL),
        ("occupancy", covered(&all, w) as f64 / len as f64, RATIO_TOL),
        ("occupancy_excluding_wait", covered(&working, w) as f64 / len as f64, RATIO_TOL),
    ];
    for (key, value, tol) in want {
        let g = f(&got[key]);
        if (g - value).abs() > tol {
            bad.push(format!("{what} {key}: {g} vs {value}"));
        }
    }
}

fn h200x2() -> Option<PathBuf> {
    shared_dir().map(|d| d.join("traces/h200x2"))
}

fn run_json(args: &[&Path], extra: &[&str]) -> (i32, Value, String) {
    let out =
        launchguard().arg("analyze").args(args).args(["--format", "json"]).args(extra).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {stderr}"));
    (out.status.code().unwrap_or(-1), v, stderr)
}

/// Every figure of a multi-rank document against the independent computation.
fn check_document(doc: &Value, ranks: &[Rank]) {
    let e = expected(ranks);
    let mut bad = Vec::new();
    assert_eq!(doc["schema"], "launchguard.analysis-ranks/1");
    let got_ranks = doc["ranks"].as_array().unwrap();
    assert_eq!(got_ranks.len(), ranks.len());
    for (ri, (g, r)) in got_ranks.iter().zip(ranks).enumerate() {
        assert_eq!(g["rank"], r.rank);
        let whole = (
            r.kernels.iter().map(|k| k.start).min().unwrap(),
            r.kernels.iter().map(|k| k.end).max().unwrap(),
        );
        compare_figures(&format!("rank {} whole", r.rank), &g["whole"], r, &e.waits[ri], whole, &mut bad);
        compare_figures(
            &format!("rank {} common", r.rank),
            &g["common"],
            r,
            &e.waits[ri],
            e.common,
            &mut bad,
        );
        let collectives = r.kernels.iter().filter(|k| k.collective).count();
        assert_eq!(g["collectives"]["kernels"], collectives);
        assert_eq!(g["collectives"]["matched"], e.matched);
        // The single-trace analysis rides along, unchanged in shape.
        assert_eq!(g["analysis"]["schema"], "launchguard.analysis/1");
    }
    let across = &doc["across"];
    assert_eq!(across["clocks"]["aligned"], true);
    assert_eq!(across["clocks"]["matched_collectives"], e.matched);
    assert!((f(&across["clocks"]["min_overlap_us"]) - us(e.min_overlap)).abs() <= US_TOL);
    assert!((f(&across["common_window"]["start_us"]) - us(e.common.0)).abs() <= US_TOL);
    assert!((f(&across["common_window"]["length_us"]) - us(e.common.1 - e.common.0)).abs() <= US_TOL);

    // Replay skew: the first GPU activity of each replay, and its launch call, across ranks.
    for (key, common_only) in [("skew", false), ("skew_common", true)] {
        let mut gpu = Vec::new();
        let mut launch = Vec::new();
        let mut last = vec![0u64; ranks.len()];
        for i in 0..ranks[0].launches.len() {
            let firsts: Vec<i64> = ranks
                .iter()
                .map(|r| {
                    let c = r.launches[i].2;
                    r.kernels.iter().filter(|k| k.correlation == Some(c)).map(|k| k.start).min().unwrap()
                })
                .collect();
            if common_only && !firsts.iter().all(|&t| e.common.0 <= t && t < e.common.1) {
                continue;
            }
            let hi = *firsts.iter().max().unwrap();
            gpu.push(us(hi - firsts.iter().min().unwrap()));
            if firsts.iter().filter(|&&t| t == hi).count() == 1 {
                last[firsts.iter().position(|&t| t == hi).unwrap()] += 1;
            }
            let starts: Vec<i64> = ranks.iter().map(|r| r.launches[i].0).collect();
            launch.push(us(starts.iter().max().unwrap() - starts.iter().min().unwrap()));
        }
        let s = &across[key];
        assert_eq!(s["replays"], gpu.len(), "{key}");
        for (what, values) in [("gpu_start", &gpu), ("launch_start", &launch)] {
            for (p, name) in [(50.0, "p50_us"), (99.0, "p99_us"), (100.0, "max_us")] {
                let want = percentile(values.clone(), p);
                let got = f(&s[what][name]);
                if (got - want).abs() > US_TOL {
                    bad.push(format!("{key} {what} {name}: {got} vs {want}"));
                }
            }
        }
        for (ri, r) in ranks.iter().enumerate() {
            let entry = &s["last_to_start"][ri];
            assert_eq!(entry["rank"], r.rank);
            assert_eq!(entry["replays"], last[ri], "{key} last to start, rank {}", r.rank);
        }
        let most = *last.iter().max().unwrap();
        // A rank last by under 20 µs at the median makes nobody wait: no straggler.
        let mut sorted = gpu.clone();
        sorted.sort_by(f64::total_cmp);
        let skew_p50 = crate::oracle::percentile(&sorted, 50.0).unwrap_or(0.0);
        let straggler = (last.iter().filter(|&&n| n == most).count() == 1 && skew_p50 >= 20.0)
            .then(|| ranks[last.iter().position(|&n| n == most).unwrap()].rank);
        assert_eq!(s["straggler"].as_u64(), straggler, "{key} straggler");
    }
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad.join("\n"));
}

fn both_ranks(dir: &Path) -> Vec<Rank> {
    vec![load_rank(&dir.join("tp2_rank0.json.gz"), 0), load_rank(&dir.join("tp2_rank1.json.gz"), 1)]
}

#[test]
fn h200x2_folder_matches_the_definitions() {
    let Some(dir) = h200x2() else { return };
    let (code, doc, _) = run_json(&[&dir], &[]);
    let ranks = both_ranks(&dir);
    check_document(&doc, &ranks);
    // Facts from ../shared/traces/SOURCES.md and the ground truth (TP=2): rank 0's window is
    // 353 ms at occupancy 0.988 because its first all_reduce waited ~320 ms for rank 1; rank 1's
    // window is 28 ms at 0.845.
    let r0 = &doc["ranks"][0]["whole"];
    assert!((f(&r0["window_us"]) / 1000.0 - 353.0).abs() < 0.5, "{}", r0["window_us"]);
    assert!((f(&r0["occupancy"]) - 0.988).abs() < 0.0005);
    assert!(
        f(&r0["collective_wait_us"]) > 320_000.0,
        "the 320 ms wait is told apart: {}",
        r0["collective_wait_us"]
    );
    assert!(f(&r0["occupancy_excluding_wait"]) < 0.1);
    let r1 = &doc["ranks"][1]["whole"];
    assert!((f(&r1["window_us"]) / 1000.0 - 28.0).abs() < 0.5);
    assert!((f(&r1["occupancy"]) - 0.845).abs() < 0.0005);
    // Over the common window the two ranks look alike: the warm-up wait is outside it.
    for r in doc["ranks"].as_array().unwrap() {
        let c = &r["common"];
        assert!(f(&c["collective_wait_us"]) < 1000.0, "{c}");
        assert!((f(&c["occupancy_excluding_wait"]) - 0.84).abs() < 0.02, "{c}");
    }
    // The mean of rank 0's launches (3407 µs) must not decide: the graph-launch check uses the median.
    let launch = doc["checks"].as_array().unwrap().iter().find(|c| c["id"] == "graph_launch").unwrap();
    assert!(launch["message"].as_str().unwrap().contains("median"), "{launch}");
    assert!(f(&launch["value"]) < 1000.0, "{launch}");
    // The verdict is the worst status across ranks, and the exit code follows it.
    let worst = doc["checks"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap()).fold(
        "skip",
        |a, s| {
            let order = ["skip", "pass", "warn", "fail"];
            if order.iter().position(|x| *x == s) > order.iter().position(|x| *x == a) {
                s
            } else {
                a
            }
        },
    );
    assert_eq!(doc["verdict"], worst);
    assert_eq!(code, if worst == "fail" { 1 } else { 0 });
    let worst_rank = doc["across"]["worst_rank"].as_u64().unwrap();
    let rank_verdict = doc["ranks"][worst_rank as usize]["verdict"].as_str().unwrap();
    for r in doc["ranks"].as_array().unwrap() {
        let order = ["skip", "pass", "warn", "fail"];
        let pos = |s: &str| order.iter().position(|x| *x == s).unwrap();
        assert!(
            pos(r["verdict"].as_str().unwrap()) <= pos(rank_verdict),
            "worst rank {worst_rank} is not the worst"
        );
    }
}

#[test]
fn files_in_any_order_give_the_folder_result() {
    let Some(dir) = h200x2() else { return };
    let (_, folder, _) = run_json(&[&dir], &[]);
    let (_, files, _) = run_json(&[&dir.join("tp2_rank1.json.gz"), &dir.join("tp2_rank0.json.gz")], &[]);
    assert_eq!(folder, files);
}

/// Writes a copy of a trace as plain JSON after `edit`.
fn copy_with(src: &Path, dst: &Path, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) {
    let mut doc = oracle::load(src);
    edit(doc.as_object_mut().unwrap());
    std::fs::write(dst, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn rank_from_the_file_name_without_distributed_info() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for r in 0..2 {
        copy_with(
            &dir.join(format!("tp2_rank{r}.json.gz")),
            &tmp.path().join(format!("run-rank_{r}.pt.trace.json")),
            |o| {
                o.remove("distributedInfo");
            },
        );
    }
    let (_, doc, _) = run_json(&[tmp.path()], &[]);
    for r in doc["ranks"].as_array().unwrap() {
        assert_eq!(r["rank_from"], "file name");
        assert_eq!(r["analysis"]["trace"]["world_size"], Value::Null);
    }
    assert_eq!(doc["world_size"], Value::Null);
    check_document(&doc, &both_ranks(&dir));
    // Not told it is one of several ranks, each trace alone would judge the launch mean; analyzed
    // together, the median decides, with the reason given.
    let launch = doc["checks"].as_array().unwrap().iter().find(|c| c["id"] == "graph_launch").unwrap();
    assert!(launch["message"].as_str().unwrap().contains("several ranks"), "{launch}");
}

#[test]
fn a_trace_without_a_rank_is_an_error() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (r, name) in [(0, "a.json"), (1, "b.json")] {
        copy_with(&dir.join(format!("tp2_rank{r}.json.gz")), &tmp.path().join(name), |o| {
            o.remove("distributedInfo");
        });
    }
    let out = launchguard().arg("analyze").arg(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot tell the rank of") && err.contains("a.json"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn duplicate_ranks_are_an_error() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy_rank7.json");
    copy_with(&dir.join("tp2_rank0.json.gz"), &copy, |_| {});
    let out = launchguard().arg("analyze").arg(dir.join("tp2_rank0.json.gz")).arg(&copy).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("both rank 0"), "{err}");
}

#[test]
fn unaligned_clocks_are_told_and_waiting_is_not_split() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("tp2_rank0.json.gz"), tmp.path().join("tp2_rank0.json.gz")).unwrap();
    // Rank 1 claims a clock 50 ms later: its collectives now end before rank 0's start.
    copy_with(&dir.join("tp2_rank1.json.gz"), &tmp.path().join("tp2_rank1.json"), |o| {
        let base = o["baseTimeNanoseconds"].as_i64().unwrap();
        o.insert("baseTimeNanoseconds".into(), Value::from(base + 50_000_000));
    });
    let (_, doc, _) = run_json(&[tmp.path()], &[]);
    assert_eq!(doc["across"]["clocks"]["aligned"], false);
    assert_eq!(doc["across"]["skew"], Value::Null);
    let clock = doc["checks"].as_array().unwrap().iter().find(|c| c["id"] == "clock_alignment").unwrap();
    assert_eq!(clock["status"], "warn");
    for r in doc["ranks"].as_array().unwrap() {
        assert_eq!(r["whole"]["collective_wait_us"], Value::Null);
        assert!(f(&r["whole"]["collective_busy_us"]) > 0.0);
    }
    assert!(doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("unaligned")));
}

#[test]
fn one_trace_keeps_the_single_trace_shape() {
    let Some(dir) = h200x2() else { return };
    let (_, doc) = analyze_json(&dir.join("tp2_rank1.json.gz"), &[]);
    assert_eq!(doc["schema"], "launchguard.analysis/1");
    // A folder holding one trace is one trace.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("tp2_rank1.json.gz"), tmp.path().join("tp2_rank1.json.gz")).unwrap();
    let (_, from_folder) = analyze_json(tmp.path(), &[]);
    assert_eq!(from_folder["schema"], "launchguard.analysis/1");
    assert_eq!(from_folder["devices"], doc["devices"]);
}

#[test]
fn text_report_has_the_ranks_and_the_cross_rank_figures() {
    let Some(dir) = h200x2() else { return };
    let out = launchguard().arg("analyze").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "2 ranks, world size 2",
        "rank 0",
        "rank 1",
        "common window",
        "replay skew",
        "worst rank",
        "checks across ranks",
        "verdict:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn several_traces_refuse_within_and_empty_folders() {
    let Some(dir) = h200x2() else { return };
    let out = launchguard().arg("analyze").arg(&dir).args(["--within", "probe"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--within"));
    let empty = tempfile::tempdir().unwrap();
    let out = launchguard().arg("analyze").arg(empty.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no trace"));
}

#[test]
fn report_files_show_the_checks_across_ranks_and_never_overwrite_an_input() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let junit = tmp.path().join("ranks.xml");
    let (_, doc, _) = run_json(&[&dir], &["--junit", junit.to_str().unwrap()]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    for c in doc["checks"].as_array().unwrap() {
        assert!(xml.contains(c["id"].as_str().unwrap()), "{} not in the JUnit report", c["id"]);
    }
    // A report aimed at a rank that is not the worst is refused too; the input stays as it was.
    let inputs = tempfile::tempdir().unwrap();
    for r in 0..2 {
        std::fs::copy(
            dir.join(format!("tp2_rank{r}.json.gz")),
            inputs.path().join(format!("tp2_rank{r}.json.gz")),
        )
        .unwrap();
    }
    let worst = doc["across"]["worst_rank"].as_u64().unwrap();
    let other = inputs.path().join(format!("tp2_rank{}.json.gz", 1 - worst));
    let before = std::fs::read(&other).unwrap();
    let out = launchguard().arg("analyze").arg(inputs.path()).arg("--markdown").arg(&other).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite"));
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

/// The cells of the Markdown table row that starts with `| first |`, keyed by the header's names.
fn markdown_row(md: &str, first: &str) -> std::collections::HashMap<String, String> {
    let split = |line: &str| -> Vec<String> {
        line.trim().trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect()
    };
    let header = split(md.lines().find(|l| l.starts_with("| rank | verdict |")).expect("the ranks table"));
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row {first}"));
    let cells = split(row);
    assert_eq!(cells.len(), header.len(), "{row}");
    header.into_iter().zip(cells).collect()
}

/// Each row of the HTML ranks tables (`<section id="ranks">`: the figures the verdicts are judged
/// on, then the rank's own window), keyed by the headers' names, the tables of a rank joined.
fn html_rows(html: &str) -> Vec<std::collections::HashMap<String, String>> {
    let start = html.find("<section id=\"ranks\">").expect("a ranks section");
    let end = start + html[start..].find("</section>").unwrap() + "</section>".len();
    let doc = roxmltree::Document::parse(&html[start..end]).expect("the section is well-formed");
    let text = |n: roxmltree::Node| {
        n.descendants().filter(|d| d.is_text()).filter_map(|d| d.text()).collect::<String>()
    };
    let mut rows: Vec<std::collections::HashMap<String, String>> = Vec::new();
    for table in
        doc.descendants().filter(|n| n.has_tag_name("table") && n.children().any(|c| c.has_tag_name("thead")))
    {
        let header: Vec<String> = table
            .descendants()
            .filter(|n| n.has_tag_name("thead"))
            .flat_map(|h| h.descendants())
            .filter(|n| n.has_tag_name("th"))
            .map(text)
            .collect();
        let body = table.children().find(|n| n.has_tag_name("tbody")).unwrap();
        for (i, tr) in body.children().filter(|n| n.has_tag_name("tr")).enumerate() {
            let cells: Vec<String> = tr.children().filter(|n| n.has_tag_name("td")).map(text).collect();
            assert_eq!(cells.len(), header.len());
            if rows.len() <= i {
                rows.push(Default::default());
            }
            rows[i].extend(header.iter().cloned().zip(cells));
        }
    }
    rows
}

/// An occupancy as the reports write it: a percentage with one decimal.
fn percent(v: &Value) -> String {
    format!("{:.1}%", f(v) * 100.0)
}

#[test]
fn markdown_and_html_show_every_rank_as_the_json_says() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (md_path, html_path) = (tmp.path().join("summary.md"), tmp.path().join("report.html"));
    let (_, doc, _) =
        run_json(&[&dir], &["--markdown", md_path.to_str().unwrap(), "--html", html_path.to_str().unwrap()]);
    let md = std::fs::read_to_string(&md_path).unwrap();
    let html = std::fs::read_to_string(&html_path).unwrap();
    let ranks = doc["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);

    // One row per rank in each report, no more.
    let md_rows = md.lines().filter(|l| l.starts_with("| rank ") && !l.starts_with("| rank |")).count();
    assert_eq!(md_rows, ranks.len(), "{md}");
    let html_rows = html_rows(&html);
    assert_eq!(html_rows.len(), ranks.len());

    for (r, hrow) in ranks.iter().zip(&html_rows) {
        let rank = r["rank"].as_u64().unwrap();
        let mrow = markdown_row(&md, &format!("rank {rank}"));
        // The common window, where the verdicts are judged, then the rank's own window.
        let want = [
            ("occupancy", percent(&r["common"]["occupancy"])),
            ("excl. waiting", percent(&r["common"]["occupancy_excluding_wait"])),
            ("occupancy, own window", percent(&r["whole"]["occupancy"])),
            ("excl. waiting, own window", percent(&r["whole"]["occupancy_excluding_wait"])),
        ];
        for (column, value) in &want {
            assert_eq!(mrow[*column], *value, "Markdown rank {rank} {column}");
            assert_eq!(hrow[*column], *value, "HTML rank {rank} {column}");
        }
        assert_eq!(hrow["rank"], format!("rank {rank}"));
        let verdict = r["verdict"].as_str().unwrap();
        assert!(mrow["verdict"].ends_with(&verdict.to_uppercase()), "{:?}", mrow["verdict"]);
        assert_eq!(hrow["verdict"], verdict);
    }

    // The straggler and the rank the single-trace detail belongs to, as the JSON says: the
    // healthy pair starts its replays under a µs apart, so nobody is named.
    // (Said over the common window, where the verdicts are judged.)
    for skew in ["skew", "skew_common"] {
        assert!(doc["across"][skew]["straggler"].is_null(), "{:#}", doc["across"][skew]);
    }
    assert!(md.contains("\n- **replay skew, common window**: "), "{md}");
    assert!(md.contains("; straggler none (last to start on the GPU: "), "{md}");
    assert!(html.contains("; straggler none (last to start on the GPU: "));
    // Every rank has its own detail, with its own trace; the worst rank is named.
    let worst = doc["across"]["worst_rank"].as_u64().unwrap();
    let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle} in {md}"));
    for r in ranks {
        let rank = r["rank"].as_u64().unwrap();
        let file = Path::new(r["analysis"]["source"]["path"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let which = if rank == worst { " (the worst rank)" } else { "" };
        let heading = format!("#### Rank {rank}{which}: ");
        assert!(md[at(&heading)..].contains(&format!("Trace `{file}`")), "{md}");
        // The ranks come first, each rank's detail after the checks.
        assert!(at("#### Ranks") < at("| | check |") && at("| | check |") < at(&heading));
        assert!(
            html.contains(&format!("<section class=\"rank\" id=\"rank-{rank}\"><h2>Rank {rank}{which}</h2>")),
            "rank {rank}"
        );
    }
}

#[test]
fn one_trace_has_no_ranks_section() {
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (md_path, html_path) = (tmp.path().join("summary.md"), tmp.path().join("report.html"));
    let out = launchguard()
        .arg("analyze")
        .arg(dir.join("tp2_rank1.json.gz"))
        .arg("--markdown")
        .arg(&md_path)
        .arg("--html")
        .arg(&html_path)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        !md.contains("#### Ranks") && !md.contains("#### Rank ") && !md.contains("| rank | verdict"),
        "{md}"
    );
    assert!(md.contains("Trace `tp2_rank1.json.gz`"), "{md}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(!html.contains("id=\"ranks\"") && !html.contains("id=\"rank-"));
}

#[test]
fn ranks_on_two_nodes_get_a_line_per_node() {
    // torch.profiler's default file names carry the host: `{host}_{pid}.{ms}.pt.trace.json`.
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (rank, host) in [(0, "node-a"), (1, "node-b")] {
        let name = format!("{host}_{}.1764500000000.pt.trace.json.gz", 100 + rank);
        std::fs::copy(dir.join(format!("tp2_rank{rank}.json.gz")), tmp.path().join(name)).unwrap();
    }
    let (_, doc, _) = run_json(&[tmp.path()], &[]);
    let nodes = doc["across"]["nodes"].as_array().expect("per-node figures");
    assert_eq!(nodes.len(), 2);
    // Counted over the replays of the common window (without the warm-up), as the skew there.
    let skew = match &doc["across"]["skew_common"] {
        Value::Null => &doc["across"]["skew"],
        s => s,
    };
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["node"], ["node-a", "node-b"][i]);
        assert_eq!(n["ranks"], serde_json::json!([i]));
        // One rank per node: its figures are the rank's own.
        let rank = doc["ranks"].as_array().unwrap().iter().find(|r| r["rank"] == i).unwrap();
        let f = if rank["common"].is_null() { &rank["whole"] } else { &rank["common"] };
        let occ = f["occupancy_excluding_wait"].as_f64().or(f["occupancy"].as_f64()).unwrap();
        assert!((n["occupancy_min"].as_f64().unwrap() - occ).abs() < 1e-12);
        assert_eq!(n["occupancy_min"], n["occupancy_median"]);
        let last: u64 = skew["last_to_start"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["rank"] == i)
            .map(|c| c["replays"].as_u64().unwrap())
            .sum();
        assert_eq!(n["last_to_start"].as_u64(), Some(last));
    }
    let out = launchguard().arg("analyze").arg(tmp.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.starts_with("nodes") && l.contains("node-a: rank 0;")), "{text}");
    assert!(text.contains("node-b: rank 1;"), "{text}");
}

#[test]
fn ranks_whose_file_names_are_not_utf8_are_read_from_their_own_files() {
    // The worst rank's trace is read again for the report. It was opened by a path rebuilt from
    // its name as text, which changes a byte that is not UTF-8 (to U+FFFD): no such file.
    use std::os::unix::ffi::OsStrExt;
    let Some(dir) = h200x2() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut real = Vec::new();
    for r in 0..2 {
        let mut name = format!("tp2_rank{r}-").into_bytes();
        name.push(0xff);
        name.extend(b".json.gz");
        let path = tmp.path().join(std::ffi::OsStr::from_bytes(&name));
        std::fs::copy(dir.join(format!("tp2_rank{r}.json.gz")), &path).unwrap();
        real.push(path);
    }
    let (code, doc, stderr) = run_json(&[&real[0], &real[1]], &[]);
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    let (_, want, _) = run_json(&[&dir], &[]);
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 2);
    for (got, want) in doc["ranks"].as_array().unwrap().iter().zip(want["ranks"].as_array().unwrap()) {
        assert_eq!(got["rank"], want["rank"]);
        assert_eq!(got["analysis"]["devices"], want["analysis"]["devices"], "rank {}", got["rank"]);
    }
    assert_eq!(doc["checks"], want["checks"]);
    // The text report, which draws the worst rank from its trace, too.
    let out = launchguard().arg("analyze").args(&real).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
}
