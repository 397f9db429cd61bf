//! Inputs the fuzz targets (`fuzz/`, docs/fuzzing.md) had trouble with, and hand-made hostile
//! ones in their formats, replayed through the same entry points: the parsers must agree (the
//! entry points panic when they do not), quickly, and the hand-made ones must end as their
//! names say. A crash the fuzzer finds is added under `tests/regressions/<target>/` and so
//! replayed here from then on.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launchguard_trace::fuzzing;

/// Far more than any of these takes (milliseconds), little enough to catch a hang.
const EACH: Duration = Duration::from_secs(10);

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    files
}

fn name(p: &Path) -> &str {
    p.file_name().unwrap().to_str().unwrap()
}

/// What each hand-made input must come to: text its outcome holds.
fn expected(name: &str) -> Option<Result<&'static str, &'static str>> {
    Some(match name {
        // The fast parser missed a context event whose phase was escaped.
        "escaped-phase-context" => Ok("C 1 Some(\"{\\\"a\\\":1}\")"),
        // Found by trace_fast: the fast parser did not count the `8` before the NUL.
        "scalar-element-then-nul" => {
            Err("invalid JSON after 6 complete event(s): expected `,` or `]` at line 56 column 3")
        }
        "two-documents" => Err("a second JSON document at byte 69"),
        "garbage-after" => Err("unexpected text after the JSON document at byte 56: \"x\""),
        "far-times" => Ok("skipped SkipCounts { missing_ts: 2, bad_dur: 1, not_an_object: 0 }"),
        "labels" => Ok("strings [\"0\", \"?\", \"k\"]"),
        // Under the default cap; the small caps are checked for agreement only.
        "context-over-the-small-cap" => Ok("C 1 Some"),
        "names-alike-where-sampled" => Ok("events 300 "),
        "crc" => Err("CRC32 or length check fails"),
        // Found by trace_gzip: damaged deflate data read in blocks of different sizes.
        "damaged-deflate-read-in-blocks" => Err("corrupt gzip data: corrupt deflate stream"),
        "two-members-two-traces" => Err("a second JSON document at byte 85 of the decompressed text"),
        "garbage-after-the-last-member" => Err("bytes after the last gzip member are not gzip"),
        "one-trace-in-members" => Ok("events 1 "),
        // Found by trace_gzip: the fast reader quoted only what its block of 256 bytes held. The
        // text (inflated by hand, `zlib.decompressobj(-15)`) has these 24 bytes at 496.
        "excerpt-cut-at-a-block-end" => Err(
            "unexpected text after the JSON document at byte 496 of the decompressed text: \"F94D,048,\\n117B2ACCBD1626\"",
        ),
        // Found by trace_gzip: a member of no text; every stream says the file is empty (checked
        // by the target), the text in memory that it holds no value.
        "no-text-in-a-member" => Err("EOF while parsing a value"),
        // Found by trace_gzip: a top-level number; the `[` after its 38 digits starts a second
        // document (the stream placed it one byte late and called it other text).
        "number-then-a-second-document" => Err("a second JSON document at byte 38"),
        _ => return None,
    })
}

fn replay(target: &str, entry: fn(&[u8]) -> Result<String, String>) {
    for file in inputs(target) {
        let bytes = std::fs::read(&file).unwrap();
        let started = Instant::now();
        let outcome = entry(&bytes);
        assert!(started.elapsed() < EACH, "{}: {:?}", file.display(), started.elapsed());
        match (expected(name(&file)), &outcome) {
            (Some(Ok(want)), Ok(got)) | (Some(Err(want)), Err(got)) => {
                assert!(got.contains(want), "{}: {got}", file.display())
            }
            (Some(want), got) => panic!("{}: want {want:?}, got {got:?}", file.display()),
            (None, _) => {}
        }
    }
}

#[test]
fn trace_fast_inputs() {
    replay("trace_fast", fuzzing::trace_fast);
}

#[test]
fn trace_gzip_inputs() {
    replay("trace_gzip", fuzzing::trace_gzip);
}
