//! Report files (`--junit`, `--markdown`, `--html`, `--annotate-trace`) on real traces: every file
//! is written and valid, the HTML loads in a real headless browser without errors or network, and
//! the annotated trace holds the gaps an independent method finds.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::oracle::{self, Opts};
use crate::util::*;

/// The four report files of one run, in a temporary directory.
struct Reports {
    dir: tempfile::TempDir,
}

impl Reports {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Runs `analyze TRACE --format json` with every report flag; returns the exit code, the JSON
/// document and the files. The annotated copy is `annotated.json.gz`, or `annotated.json` when
/// `plain` (gzip in a debug build is slow on a large trace).
fn analyze_with_reports(trace: &Path, plain: bool) -> (i32, Value, Reports) {
    let r = Reports { dir: tempfile::tempdir().unwrap() };
    let out = launchguard()
        .arg("analyze")
        .arg(trace)
        .args(["--format", "json", "--junit"])
        .arg(r.path("junit.xml"))
        .arg("--markdown")
        .arg(r.path("summary.md"))
        .arg("--html")
        .arg(r.path("report.html"))
        .arg("--annotate-trace")
        .arg(r.path(if plain { "annotated.json" } else { "annotated.json.gz" }))
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), doc, r)
}

fn checks(doc: &Value) -> Vec<(String, String)> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
        .collect()
}

/// The JUnit file parses and has one testcase per check: failures for failed checks, skipped
/// for skipped ones, nothing for the rest.
fn assert_junit(path: &Path, doc: &Value) {
    let xml = std::fs::read_to_string(path).unwrap();
    let xml = roxmltree::Document::parse(&xml).expect("JUnit is well-formed XML");
    let root = xml.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 1);
    let cases: Vec<_> = suites[0].children().filter(|n| n.has_tag_name("testcase")).collect();
    let want = checks(doc);
    assert_eq!(cases.len(), want.len(), "one testcase per check");
    for (case, (id, status)) in cases.iter().zip(&want) {
        assert_eq!(case.attribute("name"), Some(id.as_str()));
        let has = |tag: &str| case.children().any(|n| n.has_tag_name(tag));
        assert_eq!(has("failure"), status == "fail", "{id}: failure iff failed");
        assert_eq!(has("skipped"), status == "skip", "{id}: skipped iff skipped");
        if status == "fail" {
            let f = case.children().find(|n| n.has_tag_name("failure")).unwrap();
            assert!(!f.attribute("message").unwrap_or("").is_empty(), "{id}: the failure says why");
            assert!(f.text().unwrap_or("").contains("value: "), "{id}: the failure gives the value");
        }
    }
    let fails = want.iter().filter(|(_, s)| s == "fail").count().to_string();
    assert_eq!(root.attribute("failures"), Some(fails.as_str()));
}

/// The Markdown has the verdict and a checks table with a row per check.
fn assert_markdown(path: &Path, doc: &Value) {
    let md = std::fs::read_to_string(path).unwrap();
    let verdict = doc["verdict"].as_str().unwrap().to_uppercase();
    assert!(md.lines().next().unwrap().contains(&verdict), "verdict in the first line: {md}");
    assert!(md.contains("| | check | value | limit | result |\n|---|---|---:|---:|---|\n"), "{md}");
    for (id, status) in checks(doc) {
        let row =
            md.lines().find(|l| l.contains(&format!("| `{id}` |"))).unwrap_or_else(|| panic!("row for {id}"));
        assert!(row.contains(&status), "{row}");
    }
}

/// What the page may not contain: anything that would fetch from elsewhere.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for bad in ["http://", "https://", "src=", "href=", "url(", "@import", "<link", "@font-face"] {
        assert!(!lower.contains(bad), "the HTML contains {bad:?}");
    }
    assert!(lower.contains("<svg"), "inline SVG");
}

/// A headless Chromium, when there is one: `LAUNCHGUARD_CHROMIUM`, else `chromium` or
/// `chromium-browser` on the PATH. Missing: a failure under CI=true (.ci/run installs it), a
/// skip with a note elsewhere.
pub(crate) fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LAUNCHGUARD_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            if dir.join(name).is_file() {
                return Some(dir.join(name));
            }
        }
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is missing under CI=true: .ci/run installs Debian's chromium for the HTML test");
    }
    eprintln!("note: chromium not found; skipping the headless-browser check of the HTML report");
    None
}

/// What the browser saw.
pub(crate) struct Loaded {
    /// The DOM after the page's script ran.
    pub dom: String,
    /// Console errors (uncaught exceptions, failed loads).
    pub console_errors: Vec<String>,
    /// URLs the page asked the network for (the browser's own background requests excluded).
    pub page_requests: Vec<String>,
    /// How long the browser took, from its start to the DOM printed.
    pub took: std::time::Duration,
}

/// One browser at a time: the tests run in parallel on a 2-core machine, and several Chromiums
/// at once only make each one slow enough to hit its timeout.
static BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Headless Chromium, bounded to two minutes, with nothing in the background and every host name
/// unresolvable: a report that reached for the network would fail to load it.
fn headless(browser: &Path) -> Command {
    let mut c = Command::new("timeout");
    c.arg("120").arg(browser).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]);
    c
}

/// Loads `html` in headless Chromium with every host name unresolvable and a network log on.
pub(crate) fn load_in_chromium(browser: &Path, html: &Path) -> Loaded {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let profile = tempfile::tempdir().unwrap();
    let netlog = profile.path().join("netlog.json");
    let start = std::time::Instant::now();
    let out = headless(browser)
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.canonicalize().unwrap().display()))
        .output()
        .expect("chromium runs");
    let took = start.elapsed();
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console_errors = stderr
        .lines()
        .filter(|l| {
            l.contains(":CONSOLE") && (l.contains("Uncaught") || l.contains("Error") || l.contains("Failed"))
        })
        .map(str::to_string)
        .collect();
    // The network log: requests whose isolation key is the file page are the page's own; the
    // browser's background requests (update checks) have other keys and go nowhere anyway.
    let log: Value =
        serde_json::from_slice(&std::fs::read(&netlog).expect("net log written")).expect("net log JSON");
    let page_requests = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let p = &e["params"];
            let url = p["url"].as_str()?;
            let key = p["network_isolation_key"].as_str()?;
            (key.starts_with("file://") && !url.starts_with("file:")).then(|| url.to_string())
        })
        .collect();
    Loaded { dom: String::from_utf8_lossy(&out.stdout).into_owned(), console_errors, page_requests, took }
}

/// The page loads without errors or network, its script ran to the end and every SVG has a size.
pub(crate) fn assert_renders(html: &Path) {
    let Some(browser) = chromium() else { return };
    let page = load_in_chromium(&browser, html);
    assert!(page.console_errors.is_empty(), "console errors: {:?}", page.console_errors);
    assert!(page.page_requests.is_empty(), "the page asked the network for {:?}", page.page_requests);
    let svgs = page.dom.matches("<svg").count();
    assert!(svgs >= 2, "the page has its charts ({svgs} svg)");
    let ok = page.dom.split("data-ok=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("unset");
    assert_eq!(ok, svgs.to_string(), "the script ran and found every SVG drawn");
}

/// What scripts/html-check.js found in a page at one width.
pub(crate) fn check_in_chromium(browser: &Path, html: &Path, width: u32) -> Value {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(html).unwrap();
    let check = std::fs::read_to_string(repo_root().join("scripts/html-check.js")).unwrap();
    let at = page.rfind("</body>").expect("a body");
    let checked = dir.path().join("checked.html");
    std::fs::write(&checked, format!("{}<script>{check}</script>{}", &page[..at], &page[at..])).unwrap();
    let out = headless(browser)
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={width},2600"))
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", checked.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let attr = dom.split("data-check=\"").nth(1).and_then(|s| s.split('"').next()).expect("the check ran");
    let json = attr.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&json).expect("the check's JSON")
}

/// At 1400 and 800 px: nothing wider than the page, no SVG label clipped, overlapping or under
/// 9 px, and the first timeline zooms on a wheel step, pans on a key and resets.
pub(crate) fn assert_laid_out(html: &Path) {
    let Some(browser) = chromium() else { return };
    for width in [1400, 800] {
        let c = check_in_chromium(&browser, html, width);
        for key in ["overflow", "clipped", "overlaps", "small"] {
            assert_eq!(c[key], serde_json::json!([]), "{width} px, {key}: {}", c[key]);
        }
        let range = |k: &str| -> (i64, i64) {
            (c["zoom"][k][0].as_i64().unwrap(), c["zoom"][k][1].as_i64().unwrap())
        };
        let (before, wheel, pan, reset) = (range("before"), range("wheel"), range("pan"), range("reset"));
        assert!(
            wheel.1 - wheel.0 < before.1 - before.0,
            "{width} px: the wheel zooms in: {before:?} → {wheel:?}"
        );
        assert!(wheel.0 >= before.0 && wheel.1 <= before.1, "{width} px: inside what was shown");
        assert!(
            pan.0 > wheel.0 && pan.1 - pan.0 == wheel.1 - wheel.0 || pan.1 == before.1,
            "{width} px: → pans right: {wheel:?} → {pan:?}"
        );
        assert_eq!(reset, before, "{width} px: 0 resets");
    }
}

/// Kernel (`cat` kernel/gpu_memcpy/gpu_memset) and `cudaGraphLaunch` counts of a trace, read naively.
fn count_events(doc: &Value) -> (usize, usize) {
    let events = oracle::events(doc);
    let launches = events
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("cudaGraphLaunch")))
        .count();
    (events.len(), launches)
}

/// The annotated copy: the input's events first, unchanged; then gap events matching the gaps the
/// oracle finds over the threshold, and a launch and a replay event per graph launch.
fn assert_annotated(input: &Path, annotated: &Path, threshold_us: f64) {
    assert_annotated_with(input, annotated, &Opts { gap_threshold_us: threshold_us, ..Default::default() });
}

fn assert_annotated_with(input: &Path, annotated: &Path, opts: &Opts) {
    let threshold_us = opts.gap_threshold_us;
    let original = oracle::load(input);
    let copy = oracle::load(annotated);
    let (n, launches) = count_events(&original);
    let events = oracle::events(&copy);
    assert!(events.len() > n, "the annotated trace has more events ({} vs {n})", events.len());
    assert!(events[..n] == *oracle::events(&original), "the input's events are kept as they were");
    let added = &events[n..];
    assert!(added.iter().all(|e| e["pid"] == 4194304), "the additions are on their own process");
    let mut got: Vec<f64> = added
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"].as_str().unwrap().starts_with("gap "))
        .map(|e| e["dur"].as_f64().unwrap())
        .collect();
    got.sort_by(f64::total_cmp);
    let expected = oracle::compute(&original, opts);
    let mut want: Vec<f64> = expected
        .devices
        .values()
        .flat_map(|f| f.gaps.iter().copied().filter(|g| *g > threshold_us))
        .collect();
    want.sort_by(f64::total_cmp);
    assert_eq!(got.len(), want.len(), "gap events {got:?} vs oracle {want:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 0.002, "gap {g} vs oracle {w}");
    }
    let named = |prefix: &str| {
        added.iter().filter(|e| e["ph"] == "X" && e["name"].as_str().unwrap().starts_with(prefix)).count()
    };
    assert_eq!(named("launch "), launches);
    assert_eq!(named("replay "), expected.replays.iter().filter(|r| r.gpu_span_us.is_some()).count());
}

#[test]
fn delay270_clean_writes_every_report() {
    let Some(shared) = shared_dir() else { return };
    let trace = shared.join("traces/h200/delay270_clean.json.gz");
    let before = std::fs::read(&trace).unwrap();
    let (code, doc, r) = analyze_with_reports(&trace, false);
    assert_eq!(code, 1);
    // Its injected 270 µs host delay starves the GPU: occupancy fails (SOURCES.md).
    assert!(checks(&doc).contains(&("occupancy".to_string(), "fail".to_string())));
    assert_junit(&r.path("junit.xml"), &doc);
    assert_markdown(&r.path("summary.md"), &doc);
    let html = std::fs::read_to_string(r.path("report.html")).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("class=\"timeline\""), "the GPU timeline");
    assert!(html.contains("class=\"gap\""), "the long gaps are marked");
    assert!(html.contains("<rect class=\"replay\""), "the replays are marked");
    assert_renders(&r.path("report.html"));
    assert_laid_out(&r.path("report.html"));
    assert_annotated(&trace, &r.path("annotated.json.gz"), 100.0);
    assert_eq!(std::fs::read(&trace).unwrap(), before, "the input is never modified");
}

#[test]
fn healthy_clean_writes_every_report() {
    let Some(shared) = shared_dir() else { return };
    let trace = shared.join("traces/h200/healthy_clean.json.gz");
    let (code, doc, r) = analyze_with_reports(&trace, false);
    assert_eq!(code, 0);
    assert_junit(&r.path("junit.xml"), &doc);
    assert_markdown(&r.path("summary.md"), &doc);
    assert_self_contained(&std::fs::read_to_string(r.path("report.html")).unwrap());
    assert_renders(&r.path("report.html"));
    assert_laid_out(&r.path("report.html"));
    assert_annotated(&trace, &r.path("annotated.json.gz"), 100.0);
}

#[test]
fn two_ranks_write_every_report() {
    let Some(shared) = shared_dir() else { return };
    // The two ranks of a TP=2 run: the reports show the ranks side by side and the worst rank's
    // trace in detail (the figures themselves are tested in ranks.rs).
    let (code, doc, r) = analyze_with_reports(&shared.join("traces/h200x2"), true);
    assert_eq!(doc["schema"], "launchguard.analysis-ranks/1");
    assert_eq!(code, if doc["verdict"] == "fail" { 1 } else { 0 });
    assert_junit(&r.path("junit.xml"), &doc);
    assert_markdown(&r.path("summary.md"), &doc);
    let html = std::fs::read_to_string(r.path("report.html")).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<section id=\"ranks\">") && html.contains("class=\"timeline\""));
    // Every rank's own section, and the ranks one above the other on one clock.
    for rank in doc["ranks"].as_array().unwrap() {
        assert!(
            html.contains(&format!("<section class=\"rank\" id=\"rank-{}\">", rank["rank"])),
            "rank {}",
            rank["rank"]
        );
    }
    assert!(html.contains("<section id=\"ranks-timeline\">") && html.contains("class=\"wait\""));
    assert_renders(&r.path("report.html"));
    assert_laid_out(&r.path("report.html"));
    // One annotated copy per rank, .rankN before the extension, each with its own rank's gaps.
    assert!(!r.path("annotated.json").exists());
    for rank in doc["ranks"].as_array().unwrap() {
        let input = PathBuf::from(rank["analysis"]["source"]["path"].as_str().unwrap());
        let copy = r.path(&format!("annotated.rank{}.json", rank["rank"]));
        assert_annotated(&input, &copy, 100.0);
    }
}

#[test]
fn a_large_public_trace_is_aggregated_per_pixel() {
    let Some(shared) = shared_dir() else { return };
    let trace = shared.join("traces/public/cuda/a100_trace_diff_control.json.gz");
    let (code, doc, r) = analyze_with_reports(&trace, true);
    // An eager trace: no graph replay to judge.
    assert_eq!((code, doc["verdict"].as_str()), (0, Some("skip")));
    assert_junit(&r.path("junit.xml"), &doc);
    let html = std::fs::read_to_string(r.path("report.html")).unwrap();
    assert_self_contained(&html);
    // 9450 activities, drawn as at most one stroke per pixel column (1060 per timeline row).
    let busy = html.split("class=\"busy\" d=\"").nth(1).unwrap().split('"').next().unwrap();
    let strokes = busy.matches('M').count();
    assert!((100..=1060).contains(&strokes), "{strokes} strokes");
    assert!(html.len() < 2_000_000, "the page stays small: {} bytes", html.len());
    assert_renders(&r.path("report.html"));
    assert_laid_out(&r.path("report.html"));
    assert_annotated(&trace, &r.path("annotated.json"), 100.0);
}

#[test]
fn the_annotated_copy_analyzes_like_the_original() {
    let Some(shared) = shared_dir() else { return };
    let trace = shared.join("traces/h200/delay270_clean.json.gz");
    let (_, original, r) = analyze_with_reports(&trace, false);
    let plain = r.path("annotated.json");
    launchguard().arg("analyze").arg(&trace).arg("--annotate-trace").arg(&plain).assert().code(1);
    assert_ne!(std::fs::read(&plain).unwrap()[..2], [0x1f, 0x8b], "plain JSON without .gz");
    for copy in [plain, r.path("annotated.json.gz")] {
        let (code, again) = analyze_json(&copy, &[]);
        assert_eq!(code, 1);
        for key in ["devices", "graph_launches", "replays"] {
            assert_eq!(again[key], original[key], "{key} of {}", copy.display());
        }
        // Every check judges the same, but trace_complete counts the added events too.
        let judged = |doc: &Value| -> Vec<Value> {
            doc["checks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["id"] != "trace_complete")
                .cloned()
                .collect()
        };
        assert_eq!(judged(&again), judged(&original));
    }
}

#[test]
fn within_spans_mark_only_the_gaps_measured() {
    let Some(shared) = shared_dir() else { return };
    // 101 gaps over 100 µs in the whole trace (the injected delay) but none inside the replay
    // spans; with a 1 µs threshold the short gaps between kernels inside them are marked instead.
    // Inside the spans only (--within-interiors): the time between them is not measured.
    let trace = shared.join("traces/h200/delay270_refresh.json.gz");
    let dir = tempfile::tempdir().unwrap();
    let (html, annotated) = (dir.path().join("r.html"), dir.path().join("a.json"));
    launchguard()
        .arg("analyze")
        .arg(&trace)
        .args(["--within", "probe::replay", "--within-interiors", "--gap-us", "1"])
        .arg("--html")
        .arg(&html)
        .arg("--annotate-trace")
        .arg(&annotated)
        .assert()
        // Dozens of 1–2 µs gaps between kernels inside the spans: over the limit of 5.
        .code(1);
    let within = regex::Regex::new("probe::replay").unwrap();
    assert_annotated_with(
        &trace,
        &annotated,
        &Opts { gap_threshold_us: 1.0, within: Some(within), within_interiors: true },
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("class=\"outside\""), "time outside the spans is shaded");
}

#[test]
fn the_browser_check_catches_errors_and_network() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        r#"<!doctype html><body><img src="https://example.invalid/x.png"><script>nosuchfn();</script>"#,
    )
    .unwrap();
    let page = load_in_chromium(&browser, &bad);
    assert_eq!(page.console_errors.len(), 1, "{:?}", page.console_errors);
    assert_eq!(page.page_requests, ["https://example.invalid/x.png"]);
    assert!(!page.dom.contains("data-ok"));
}

#[test]
fn a_report_over_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json.gz");
    std::fs::copy(repo_root().join("examples/delay270_clean.json.gz"), &trace).unwrap();
    let before = std::fs::read(&trace).unwrap();
    let link = dir.path().join("link.json.gz");
    std::fs::hard_link(&trace, &link).unwrap();
    for (flag, target) in [("--html", &trace), ("--annotate-trace", &link), ("--junit", &trace)] {
        let out = launchguard().arg("analyze").arg(&trace).arg(flag).arg(target).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("is the input") && err.contains("refusing to overwrite"), "{err}");
        assert!(out.stdout.is_empty(), "nothing printed as if all went well");
    }
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}

#[test]
fn an_unwritable_report_is_one_line_and_exit_2() {
    let out = launchguard()
        .arg("analyze")
        .arg(repo_root().join("examples/delay270_clean.json.gz"))
        .args(["--markdown", "/nonexistent-dir/summary.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent-dir/summary.md"), "{err}");
}

#[test]
fn the_layout_check_catches_overflow_clipping_and_overlaps() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        r#"<!doctype html><body style="margin:0"><div id="wide" style="width:1200px">x</div>
        <svg viewBox="0 0 200 50" style="width:200px"><text x="10" y="20">one label</text><text x="14" y="22">two</text>
        <text x="190" y="40">cut off at the edge</text><text x="10" y="45" style="font-size:5px">tiny</text></svg></body>"#,
    )
    .unwrap();
    let c = check_in_chromium(&browser, &bad, 800);
    assert!(c["overflow"].to_string().contains("div#wide"), "{c}");
    assert!(c["overlaps"].to_string().contains("one label"), "{c}");
    assert!(c["clipped"].to_string().contains("cut off at the edge"), "{c}");
    assert!(c["small"].to_string().contains("tiny"), "{c}");
    assert!(c["zoom"].is_null(), "no timeline, no zoom");
}

#[test]
fn public_traces_lay_out_at_both_widths() {
    let Some(shared) = shared_dir() else { return };
    // A histogram whose four markers need two legend lines (A100), and gap bins up to 500 ms whose
    // last labels once overlapped (MI300X, SGLang decode).
    for name in ["cuda/a100_graph_launches_rank0.json.gz", "rocm/mi300x_sglang_qwen3_8b_decode.json.gz"] {
        let dir = tempfile::tempdir().unwrap();
        let html = dir.path().join("r.html");
        let out = launchguard()
            .arg("analyze")
            .arg(shared.join("traces/public").join(name))
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert_laid_out(&html);
    }
}
