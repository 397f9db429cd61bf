//! The fast parser against the serde reference parser: identical timelines (records, order,
//! strings, counts, metadata, truncation) on every trace of the corpus and on variants made from
//! each (decompressed, cut short at several places, a bare array of events), through the library
//! and through `launchguard analyze --parser fast|simple --format json`. The candidate readers of
//! issue 19 (sonic-rs, simd-json) are held to the same files.

use std::io::Write as _;
use std::path::Path;

use launchguard_trace::{read_with, Parser, Trace};

use crate::util::*;

/// Everything a read gives, with string ids resolved, as text to compare.
fn summary(result: &Result<Trace, launchguard_trace::TraceError>) -> String {
    let trace = match result {
        Ok(t) => t,
        Err(e) => return format!("error: {e}"),
    };
    format!("truncated: {:?}\n{}", trace.truncated, trace.timeline.canonical_text())
}

/// Both parsers on one file; returns the reference's summary.
#[track_caller]
fn agree(path: &Path) -> String {
    let simple = summary(&read_with(path, Parser::Simple));
    let fast = summary(&read_with(path, Parser::Fast));
    if simple != fast {
        let line = simple.lines().zip(fast.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{}: the parsers disagree at line {line}:\n  simple: {}\n  fast:   {}",
            path.display(),
            simple.lines().nth(line).unwrap_or("<end>"),
            fast.lines().nth(line).unwrap_or("<end>"),
        );
    }
    simple
}

fn decompress(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out).unwrap();
        out
    } else {
        bytes
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn every_corpus_trace_reads_the_same() {
    let traces = shared_traces();
    for path in &traces {
        let s = agree(path);
        assert!(s.contains("events "), "{}", path.display());
    }
    if !traces.is_empty() {
        assert!(traces.len() >= 17, "the corpus shrank: {} traces", traces.len());
    }
}

/// Variants are made of the traces up to this size (decompressed), which keeps the test to seconds
/// in a debug build; every trace of the corpus is compared whole above.
const VARIANT_MAX_BYTES: usize = 12 << 20;

/// The variants of every trace up to [`VARIANT_MAX_BYTES`], written into `dir`: decompressed,
/// cut at four places (plain), cut then gzipped, the gzip stream cut, a bare array (plain, gzip).
fn variant_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for path in shared_traces() {
        let text = decompress(&path);
        if text.len() > VARIANT_MAX_BYTES {
            continue;
        }
        let stem = path.file_name().unwrap().to_string_lossy().replace(".json.gz", "");
        let mut write = |name: &str, bytes: &[u8]| {
            let p = dir.join(format!("{stem}.{name}"));
            std::fs::write(&p, bytes).unwrap();
            out.push(p);
        };
        // Plain, mapped and read in parallel parts.
        write("json", &text);
        // Cut short inside the events, near the end, and inside the footer; plain and gzip.
        for cut in [text.len() / 10, text.len() / 2, text.len() - 40, text.len() - 1] {
            write(&format!("cut{cut}.json"), &text[..cut]);
        }
        write("cut.json.gz", &gzip(&text[..text.len() * 9 / 10]));
        // The gzip stream itself cut short.
        let gz = std::fs::read(&path).unwrap();
        write("gzcut.json.gz", &gz[..gz.len() * 2 / 3]);
        // A bare array of the same events.
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        if let Some(events) = v.get("traceEvents") {
            let bare = serde_json::to_vec_pretty(events).unwrap();
            write("bare.json", &bare);
            write("bare.json.gz", &gzip(&bare));
        }
    }
    out
}

#[test]
fn variants_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let mut truncated = 0;
    for path in variant_files(dir.path()) {
        let s = agree(&path);
        truncated += s.starts_with("truncated: Some") as u32;
    }
    if shared_dir().is_some() {
        assert!(truncated > 10, "only {truncated} cut files were read as truncated");
    }
}

#[test]
fn analyze_output_is_the_same_with_either_parser() {
    for path in shared_traces() {
        if path.ends_with("cpu_only_rank34.json.gz") {
            // No GPU activity: both refuse it alike.
            let run = |parser: &str| {
                launchguard().arg("analyze").arg(&path).args(["--parser", parser]).output().unwrap()
            };
            let (fast, simple) = (run("fast"), run("simple"));
            assert_eq!((fast.status.code(), &fast.stderr), (Some(2), &simple.stderr));
            continue;
        }
        let (code_fast, fast) = analyze_json(&path, &["--parser", "fast"]);
        let (code_simple, simple) = analyze_json(&path, &["--parser", "simple"]);
        assert_eq!(code_fast, code_simple, "{}", path.display());
        assert_eq!(fast, simple, "{}", path.display());
        assert_eq!(fast["schema"], "launchguard.analysis/1");
    }
}

/// Forty copies of a real trace, each with a few random bytes inserted, removed or replaced.
fn edited_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Some(shared) = shared_dir() else { return Vec::new() };
    let text = decompress(&shared.join("traces/h200/healthy_refresh.json.gz"));
    // A fixed linear congruential sequence: the same edits on every run.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    };
    let bytes = b"{}[]:,\"\\ \n0123456789.-eEtrufalsn\x01\xff\xc3";
    let mut out = Vec::new();
    for i in 0..40 {
        let mut doc = text.clone();
        for _ in 0..1 + next(3) {
            let at = next(doc.len());
            let b = bytes[next(bytes.len())];
            match next(3) {
                0 => doc.insert(at, b),
                1 => drop(doc.remove(at)),
                _ => doc[at] = b,
            }
        }
        let path = dir.join(format!("edit{i}.json"));
        std::fs::write(&path, &doc).unwrap();
        out.push(path);
    }
    out
}

#[test]
fn random_edits_of_a_real_trace_read_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    for path in edited_files(tmp.path()) {
        agree(&path);
    }
}

/// The candidate readers, built with `--features candidate-parsers` only.
#[cfg(feature = "candidate-parsers")]
mod candidates {
    use super::*;

    /// Where a candidate reader (`crates/trace/src/candidates`) first differs from the
    /// reference on `path`: the two lines, or `None` when the whole summaries are equal.
    fn differs(path: &Path, parser: Parser) -> Option<String> {
        let simple = summary(&read_with(path, Parser::Simple));
        let other = summary(&read_with(path, parser));
        if simple == other {
            return None;
        }
        let (a, b): (Vec<&str>, Vec<&str>) = (simple.lines().collect(), other.lines().collect());
        let line = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        Some(format!(
            "{}: line {line}:\n  simple: {}\n  {parser:?}: {}",
            path.display(),
            a.get(line).unwrap_or(&"<end>"),
            b.get(line).unwrap_or(&"<end>")
        ))
    }

    /// Every file the fast parser is held to: the corpus, its variants, the random edits.
    fn all_files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files = shared_traces();
        files.extend(variant_files(dir));
        files.extend(edited_files(dir));
        files
    }

    #[test]
    fn sonic_candidate_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let diffs: Vec<String> =
            all_files(dir.path()).iter().filter_map(|p| differs(p, Parser::Sonic)).collect();
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }

    #[test]
    fn simd_json_candidate_reads_the_same_but_for_float_times() {
        // simd-json has no raw numbers: 1712195495505582.988 µs comes back 12 ns off through f64.
        let dir = tempfile::tempdir().unwrap();
        for path in all_files(dir.path()) {
            if let Some(d) = differs(&path, Parser::SimdJson) {
                assert!(path.to_string_lossy().contains("ns_resolution"), "{d}");
            }
        }
    }
}
