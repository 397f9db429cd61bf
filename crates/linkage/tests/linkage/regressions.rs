//! Inputs the fuzz targets (`fuzz/`, see docs/fuzzing.md) had trouble with, and hand-made
//! hostile ones in their formats, replayed through the same entry points: each must end in
//! a report or an error, quickly. A crash the fuzzer finds is added under
//! `tests/regressions/<target>/` and so replayed here from then on.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launchguard_linkage::fuzzing;

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

#[test]
fn linkage_elf_inputs() {
    for file in inputs("linkage_elf") {
        let bytes = std::fs::read(&file).unwrap();
        let started = Instant::now();
        let outcome = fuzzing::elf(&bytes);
        assert!(started.elapsed() < EACH, "{}: {:?}", file.display(), started.elapsed());
        // The hand-made ones say what they are; each must be refused for that reason.
        let expected = match name(&file) {
            "pn-xnum" => Some("PN_XNUM"),
            "dynamic-4gib" => Some("the dynamic segment is 4294967295 bytes, over the reader's cap of 1 MiB"),
            "interp-1tib" => Some("PT_INTERP is 1099511627776 bytes, over the reader's cap of 4 KiB"),
            "phdrs-over-64kib" => {
                Some("the program header table is 67200 bytes, over the reader's cap of 64 KiB")
            }
            "unterminated-string" => Some("unterminated dynamic string"),
            _ => None,
        };
        if let Some(expected) = expected {
            assert!(outcome.contains(expected), "{}: {outcome}", file.display());
        }
    }
}

#[test]
fn linkage_resolve_inputs() {
    for file in inputs("linkage_resolve") {
        let bytes = std::fs::read(&file).unwrap();
        let started = Instant::now();
        let outcome = fuzzing::resolve(&bytes);
        assert!(started.elapsed() < EACH, "{}: {:?}", file.display(), started.elapsed());
        let json = |o: &Result<String, String>| -> serde_json::Value {
            serde_json::from_str(o.as_ref().unwrap_or_else(|e| panic!("{}: {e}", file.display()))).unwrap()
        };
        match name(&file) {
            "fifos-as-library-cache-and-conf" => {
                let r = json(&outcome);
                let problems = r["problems"].to_string();
                assert!(problems.contains("/usr/lib/libfifo.so: is a FIFO"), "{problems}");
                assert!(problems.contains("/etc/ld.so.cache is unusable (is a FIFO"), "{problems}");
                assert!(r["notes"].to_string().contains("/etc/ld.so.conf is a FIFO"), "{}", r["notes"]);
            }
            "include-loop-and-fan-out" => {
                let r = json(&outcome);
                let reason = r["unresolved"][0]["reason"].to_string();
                assert!(reason.contains("/opt/b/libx.so exists in an ld.so.conf directory"), "{reason}");
            }
            "rpath-chain-past-the-depth-cap" => {
                let e = outcome.unwrap_err();
                assert!(e.contains("deeper than 8") && e.ends_with("(--max-depth N raises the cap)"), "{e}");
            }
            "symlink-loop-and-escape" => {
                // Neither the loop nor the escape resolves (the escape stays inside the image).
                let r = json(&outcome);
                let names: Vec<&str> =
                    r["unresolved"].as_array().unwrap().iter().map(|u| u["name"].as_str().unwrap()).collect();
                assert_eq!(names, ["libloop.so", "libout.so"]);
            }
            "stars-include" => {
                let reason = json(&outcome)["unresolved"][0]["reason"].to_string();
                assert!(reason.contains("/opt/a/libx.so exists in an ld.so.conf directory"), "{reason}");
            }
            _ => {}
        }
    }
}
