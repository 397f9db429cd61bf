//! Reports at a terminal's width and at many ranks: the terminal report at 80 and 120 columns
//! for one trace, the TP=2 run and 64 ranks, and a 1,000-rank folder — both made at test time by
//! repeating the shared TP=2 traces — whose report stays short, whose page stays small and opens
//! fast in a browser.

use std::io::{Read, Write};
use std::path::Path;

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
    let dir = shared.join("traces/h200x2");
    for cols in [80, 120] {
        let text = terminal_at(&[&dir], cols, None).replace(shared.to_str().unwrap(), "[shared]");
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
        let most = if cols == 80 { 70 } else { 60 };
        assert!(text.lines().count() < most, "{} lines at {cols} columns", text.lines().count());
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
