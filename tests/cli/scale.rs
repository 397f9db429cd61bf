//! Reports at a terminal's width and at many ranks: the terminal report at 80 and 120 columns
//! for one trace, the TP=2 run and 64 ranks, and a 1,000-rank folder — both made at test time by
//! repeating the shared TP=2 traces — whose report stays short, whose page stays small and opens
//! fast in a browser.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::*;

/// A folder of `n` ranks: the shared TP=2 pair repeated (even ranks rank 0's trace, odd ranks
/// rank 1's), each naming its own rank and world size `n` in `distributedInfo`. Each file is
/// three gzip members — the text before the rank, the rank, the rest — so that the two large
/// members are compressed once for every copy.
pub fn repeated_ranks(n: u64) -> Option<tempfile::TempDir> {
    let shared = shared_dir()?;
    let dir = tempfile::tempdir().unwrap();
    let gz = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let parts: Vec<(Vec<u8>, Vec<u8>)> = (0..2)
        .map(|r| {
            let mut text = String::new();
            let file =
                std::fs::File::open(shared.join(format!("traces/h200x2/tp2_rank{r}.json.gz"))).unwrap();
            flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
            let key = format!("\"rank\": {r}, \"world_size\": 2");
            assert_eq!(text.matches(&key).count(), 1, "one distributedInfo in rank {r}'s trace");
            let at = text.find(&key).unwrap();
            (gz(&text.as_bytes()[..at]), gz(&text.as_bytes()[at + key.len()..]))
        })
        .collect();
    for rank in 0..n {
        let (head, tail) = &parts[(rank % 2) as usize];
        let mut bytes = head.clone();
        bytes.extend(gz(format!("\"rank\": {rank}, \"world_size\": {n}").as_bytes()));
        bytes.extend_from_slice(tail);
        std::fs::write(dir.path().join(format!("rank{rank}.json.gz")), bytes).unwrap();
    }
    Some(dir)
}

/// `analyze ARGS` with `COLUMNS=cols` (no terminal: the width comes from the environment);
/// returns standard output with the folder `tmp` written as `[ranks]`.
fn terminal_at(args: &[&Path], cols: usize, tmp: Option<&Path>) -> String {
    let out = launchguard()
        .current_dir(repo_root())
        .arg("analyze")
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", cols.to_string())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let text = match tmp {
        Some(t) => text.replace(t.to_str().unwrap(), "[ranks]"),
        None => text,
    };
    for line in text.lines() {
        assert!(line.chars().count() <= cols, "{cols} columns, a line of {}:\n{line}", line.chars().count());
    }
    text
}

#[test]
fn one_trace_fits_80_and_120_columns() {
    let trace = Path::new("examples/delay270_clean.json.gz");
    for cols in [80, 120] {
        let text = terminal_at(&[trace], cols, None);
        insta::assert_snapshot!(format!("one_trace_{cols}_columns"), text);
    }
    // The same words as without a limit: only where the lines break moved.
    let wide = terminal_at(&[trace], 1000, None);
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let narrow = terminal_at(&[trace], 80, None);
    let checks = |t: &str| words(&t[t.find("\nchecks\n").unwrap()..]);
    assert_eq!(checks(&narrow), checks(&wide));
}

#[test]
fn two_ranks_fit_80_and_120_columns() {
    let Some(shared) = shared_dir() else { return };
    // A copy in a temporary folder, whose path has the same length on every machine: where the
    // lines break depends on it.
    let dir = tempfile::tempdir().unwrap();
    for rank in ["tp2_rank0.json.gz", "tp2_rank1.json.gz"] {
        std::fs::copy(shared.join("traces/h200x2").join(rank), dir.path().join(rank)).unwrap();
    }
    for cols in [80, 120] {
        let text = terminal_at(&[dir.path()], cols, None).replace(dir.path().to_str().unwrap(), "[tmp]");
        insta::assert_snapshot!(format!("tp2_{cols}_columns"), text);
    }
}

/// Each rank's occupancy excluding waiting over the common window, from a JSON document.
fn occupancies(doc: &Value) -> Vec<(u64, f64)> {
    doc["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), r["common"]["occupancy_excluding_wait"].as_f64().unwrap()))
        .collect()
}

#[test]
fn sixty_four_ranks_are_summarized_and_fit_80_and_120_columns() {
    let Some(shared) = shared_dir() else { return };
    let Some(tmp) = repeated_ranks(64) else { return };
    // Each copy measures as the rank of the TP=2 run it copies: the same clock, the same waits.
    let (_, tp2) = analyze_json(&shared.join("traces/h200x2"), &[]);
    let (_, many) = analyze_json(tmp.path(), &[]);
    let pair = occupancies(&tp2);
    let all = occupancies(&many);
    assert_eq!(all.len(), 64);
    for (rank, occ) in &all {
        assert!((occ - pair[(rank % 2) as usize].1).abs() < 1e-9, "rank {rank}: {occ} vs {:?}", pair);
    }
    // Worked out by hand from the two values: 32 of each, so by nearest rank the median is the
    // 32nd of 64 (the lower value) and the p90 the 58th (the higher).
    let (lo, hi) = (pair[0].1.min(pair[1].1), pair[0].1.max(pair[1].1));
    let lower_rank = if pair[0].1 < pair[1].1 { 0 } else { 1 };
    for cols in [80, 120] {
        let text = terminal_at(&[tmp.path()], cols, Some(tmp.path()));
        let row = text.lines().find(|l| l.trim_start().starts_with("occupancy excl. waiting, %")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        let want = [lo, lo, hi, hi].map(|v| format!("{:.1}", v * 100.0));
        assert_eq!(cells[4..8], want, "{row}");
        // The worst ranks are the copies of the lower rank, 29 more alike.
        let worst: Vec<String> = (0..3).map(|i| (lower_rank + 2 * i).to_string()).collect();
        assert!(row.ends_with(&format!("{} +29", worst.join(", "))), "{row}");
        // Two groups of alike ranks, the even and the odd ones.
        assert!(text.contains("2 group(s)"), "{text}");
        assert!(text.contains("   32 ranks"), "{text}");
        assert!(text.lines().count() < 60, "{} lines at {cols} columns", text.lines().count());
        assert!(!text.contains("rank 2 kernels"), "one kernel table, the worst rank's");
        insta::assert_snapshot!(format!("ranks64_{cols}_columns"), text);
    }
}

#[test]
fn the_readme_example_is_what_80_columns_print() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let command = "$ cargo run --release -- analyze examples/delay270_clean.json.gz\n";
    let start = readme.find(command).expect("the README's example") + command.len();
    let end = start + readme[start..].find("```").unwrap();
    let text = terminal_at(&[Path::new("examples/delay270_clean.json.gz")], 80, None);
    assert_eq!(text, readme[start..end]);
}

/// `launchguard ARGS --html PAGE`; returns the page's path (in `dir`) and standard output.
fn html_of(args: &[&std::ffi::OsStr], dir: &Path) -> (std::path::PathBuf, String) {
    let page = dir.join("report.html");
    let out = launchguard()
        .current_dir(repo_root())
        .args(args)
        .arg("--html")
        .arg(&page)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    (page, String::from_utf8(out.stdout).unwrap())
}

/// At 1400 and 800 px: laid out (nothing clipped, overflowing or overlapping; the timeline
/// zooms), and hovering each timeline that has kernel names names the kernel under the cursor.
/// Returns how many timelines named one (at 1400 px), and the DOM after the page's script.
fn assert_page(page: &Path) -> Option<(usize, String)> {
    let browser = crate::reports::chromium()?;
    crate::reports::assert_laid_out(page);
    crate::reports::assert_renders(page);
    let mut named = 0;
    for width in [1400, 800] {
        let c = crate::reports::check_in_chromium(&browser, page, width);
        let hover = c["hover"].as_array().unwrap();
        for h in hover {
            let readout = h["readout"].as_str().unwrap();
            // "12.5 ms · kernel_name (5.8 µs)": the time, then the kernel and its length.
            assert!(readout.contains(" · ") && readout.ends_with("s)"), "{width} px, {h}");
        }
        named = hover.len();
    }
    let dom = crate::reports::load_in_chromium(&browser, page).dom;
    Some((named, dom))
}

#[test]
fn pages_of_one_trace_two_ranks_64_ranks_and_a_tp2_comparison_lay_out() {
    let Some(shared) = shared_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tp2 = shared.join("traces/h200x2");
    // One trace: its timeline names kernels.
    let (page, _) = html_of(&["analyze".as_ref(), "examples/delay270_clean.json.gz".as_ref()], dir.path());
    if let Some((named, _)) = assert_page(&page) {
        assert!(named >= 1, "one trace: hover names the kernel");
    }
    // Two ranks: both drawn in the ranks timeline (with kernel names) and in their own sections.
    let (page, _) = html_of(&["analyze".as_ref(), tp2.as_os_str()], dir.path());
    if let Some((named, dom)) = assert_page(&page) {
        assert!(named >= 3, "the ranks timeline and each rank's own: {named}");
        for r in 0..2 {
            assert!(dom.contains(&format!(">rank {r} compute</text>")), "rank {r} in the ranks timeline");
            assert!(dom.contains(&format!("<section class=\"rank\" id=\"rank-{r}\">")), "rank {r}'s section");
        }
    }
    // 64 ranks: every rank a row of the ranks timeline; the worst rank and one of each group of
    // alike ranks drawn in detail, with kernel names.
    let Some(many) = repeated_ranks(64) else { return };
    let (page, _) = html_of(&["analyze".as_ref(), many.path().as_os_str()], dir.path());
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 10_000_000, "64 ranks: {size} bytes");
    if let Some((named, dom)) = assert_page(&page) {
        assert!(named >= 2, "the detailed ranks name their kernels: {named}");
        for r in 0..64 {
            assert!(dom.contains(&format!("text-anchor=\"end\">rank {r}</text>")), "rank {r} drawn");
        }
    }
    // A comparison of two TP=2 folders: every rank's pair of timelines, kernels named on hover.
    let (page, _) = html_of(&["compare".as_ref(), tp2.as_os_str(), tp2.as_os_str()], dir.path());
    if let Some((named, dom)) = assert_page(&page) {
        assert_eq!(named, 2, "each rank's timelines name kernels");
        for r in 0..2 {
            assert!(dom.contains(&format!("GPU timelines, rank {r}</h2>")), "rank {r} drawn");
        }
    }
}

#[test]
fn a_thousand_ranks_stay_short_small_and_quick_to_open() {
    let Some(many) = repeated_ranks(1000) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (page, text) = html_of(
        &["analyze".as_ref(), many.path().as_os_str(), "--width".as_ref(), "80".as_ref()],
        dir.path(),
    );
    // The report at 80 columns: the distribution, not a line per rank.
    assert!(text.starts_with("1000 ranks, world size 1000\n"), "{text}");
    assert!(text.lines().count() < 60, "{} lines:\n{text}", text.lines().count());
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("ranks 0–999 of world size 1000"), "{text}");
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 10_000_000, "{size} bytes");
    let html = std::fs::read_to_string(&page).unwrap();
    // Every rank in the ranks table and the ranks timeline's data; the picker offers the 64
    // ranks with the lowest occupancy, then each 64 ranks in turn (16 pages for 1,000).
    for r in [0, 1, 500, 998, 999] {
        assert!(html.contains(&format!("<td class=\"nowrap\">rank {r}</td>")), "rank {r} in the table");
        assert!(html.contains(&format!("\"label\":\"rank {r}\"")), "rank {r} in the timeline");
    }
    assert_eq!(html.matches("<option value=").count(), 17);
    let Some(browser) = crate::reports::chromium() else { return };
    let loaded = crate::reports::load_in_chromium(&browser, &page);
    // From the browser's start to the page drawn and its DOM printed.
    assert!(loaded.took.as_secs_f64() < 5.0, "opened in {:?}", loaded.took);
    assert!(loaded.console_errors.is_empty(), "{:?}", loaded.console_errors);
    let svgs = loaded.dom.matches("<svg").count();
    assert!(loaded.dom.contains(&format!("data-ok=\"{svgs}\"")), "every SVG drawn");
    // One page of the picker drawn: 64 rank rows.
    assert_eq!(loaded.dom.matches("text-anchor=\"end\">rank ").count(), 64);
}

/// `analyze TRACE --markdown DIR/s.md --html DIR/r.html`: its output and the two pages' paths.
fn markdown_and_html(trace: &Path, dir: &Path) -> (std::process::Output, PathBuf, PathBuf) {
    let (md, html) = (dir.join("s.md"), dir.join("r.html"));
    let out = launchguard()
        .arg("analyze")
        .arg(trace)
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    (out, md, html)
}

#[test]
fn replays_of_varying_length_and_within_interiors_are_said_in_every_format() {
    let Some(shared) = shared_dir() else { return };
    // Its graph replays ran different numbers of GPU activities: every format says the range as
    // the terminal report does (the Markdown and the HTML once said "× 1", as if all were alike).
    let dir = tempfile::tempdir().unwrap();
    let trace = shared.join("traces/public/cuda/a100_graph_launches_rank0.json.gz");
    let (out, md, html) = markdown_and_html(&trace, dir.path());
    let text = String::from_utf8(out.stdout).unwrap();
    let said = "1–20 GPU activities (usually 1)";
    assert!(text.contains(said), "{text}");
    for page in [&md, &html] {
        assert!(std::fs::read_to_string(page).unwrap().contains(said), "{}", page.display());
    }
    // --within-interiors: said in the terminal report, the Markdown and the HTML, as in JSON.
    let trace = shared.join("traces/h200/delay270_refresh.json.gz");
    let out = launchguard()
        .arg("analyze")
        .arg(&trace)
        .args(["--within", "probe::replay", "--within-interiors", "--markdown"])
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for doc in [text, std::fs::read_to_string(&md).unwrap(), std::fs::read_to_string(&html).unwrap()] {
        assert!(doc.contains("inside them only (--within-interiors)"), "{doc}");
    }
}

#[test]
fn a_summary_card_and_its_check_count_the_same_window_or_say_which() {
    let Some(shared) = shared_dir() else { return };
    // 603 µs of setup before the first replay hold the trace's 2 gaps over 100 µs; the checks
    // judge the steady state of replays, which has none.
    let trace = shared.join("traces/h200/healthy_refresh.json.gz");
    let (_, v) = analyze_json(&trace, &[]);
    let d = &v["devices"][0];
    let (whole, steady) = (
        d["gaps"]["over_threshold"].as_u64().unwrap(),
        d["steady"]["gaps"]["over_threshold"].as_u64().unwrap(),
    );
    assert!(whole > steady, "{whole} vs {steady}");
    let check = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "gaps").unwrap();
    assert_eq!(check["value"].as_f64(), Some(steady as f64));
    let dir = tempfile::tempdir().unwrap();
    let (out, md, html) = markdown_and_html(&trace, dir.path());
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(&html).unwrap();
    let card =
        format!("<div class=\"k\">gaps &gt; 100 µs, steady state</div><div class=\"v\">{steady}</div>");
    assert!(page.contains(&card), "the card shows what the check judged");
    assert!(page.contains(&format!("whole trace {whole} of ")), "and names the whole trace's count");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains(&format!("| gaps > 100 µs, whole trace | **{whole}** of ")), "{md}");
    assert!(
        md.contains("(what the checks judge) | occupancy ")
            && md.contains(&format!("**{steady}** gaps > 100 µs |")),
        "{md}"
    );
}
