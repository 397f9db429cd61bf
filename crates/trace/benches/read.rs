//! Reading throughput of every reader (the hand-written `fast`, the serde reference, and with
//! `--features candidates` the readers on sonic-rs and simd-json):
//! `cargo bench -p launchguard-trace --bench read --features candidates`.
//! `LG_BENCH_READERS` picks some of them (`fast sonic simd-json simple`).
//!
//! Reads the traces named in `LG_BENCH_TRACES` (space-separated paths, e.g. those bench/gen_trace.py
//! makes); without it, a trace made here by repeating the events of
//! `../shared/traces/h200/healthy_refresh.json.gz` 20 times (about 85 MB), plain and gzip.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use criterion::{criterion_main, Criterion, Throughput};
use launchguard_trace::{read_with, Parser};

/// The events of a Kineto trace repeated `copies` times (times and ids are left as they are: the
/// parsers do not care).
fn repeated(text: &[u8], copies: usize) -> Vec<u8> {
    let find = |needle: &[u8]| text.windows(needle.len()).position(|w| w == needle).expect("a Kineto trace");
    let open = find(b"\"traceEvents\": [") + 16;
    let close = text.iter().rposition(|&b| b == b']').expect("a closing bracket");
    let body = text[open..close].trim_ascii_end();
    let mut out = text[..open].to_vec();
    for i in 0..copies {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(body);
    }
    out.extend_from_slice(b"\n  ");
    out.extend_from_slice(&text[close..]);
    out
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("LG_BENCH_TRACES") {
        return list.split_whitespace().map(PathBuf::from).collect();
    }
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/h200/healthy_refresh.json.gz");
    let Ok(gz) = std::fs::read(&source) else {
        eprintln!("note: {} not found and LG_BENCH_TRACES unset: nothing to measure", source.display());
        return Vec::new();
    };
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut text).expect("a gzip trace");
    let big = repeated(&text, 20);
    let plain = dir.join("repeated.json");
    std::fs::write(&plain, &big).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&big).unwrap();
    let gzip = dir.join("repeated.json.gz");
    std::fs::write(&gzip, e.finish().unwrap()).unwrap();
    vec![plain, gzip]
}

/// Reads each trace with each reader.
pub fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    for path in inputs(dir.path()) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Throughput in bytes of JSON text, whether the file is compressed or not.
        let events = read_with(&path, Parser::Fast).expect("a readable trace");
        let text_bytes = match std::fs::read(&path).unwrap() {
            b if b.starts_with(&[0x1f, 0x8b]) => {
                let mut text = Vec::new();
                flate2::read::MultiGzDecoder::new(&b[..]).read_to_end(&mut text).unwrap();
                text.len()
            }
            b => b.len(),
        };
        let mut group = c.benchmark_group(format!("read {name} ({} events)", events.timeline.events));
        group.throughput(Throughput::Bytes(text_bytes as u64)).sample_size(10);
        let readers = [
            ("fast", Parser::Fast),
            ("simple", Parser::Simple),
            // `--features candidates` adds the readers on sonic-rs and simd-json.
            #[cfg(feature = "candidates")]
            ("sonic", Parser::Sonic),
            #[cfg(feature = "candidates")]
            ("simd-json", Parser::SimdJson),
        ];
        let wanted =
            std::env::var("LG_BENCH_READERS").unwrap_or_else(|_| "fast sonic simd-json simple".into());
        for (label, parser) in readers {
            if !wanted.split_whitespace().any(|w| w == label) {
                continue;
            }
            group.bench_function(label, |b| b.iter(|| read_with(&path, parser).unwrap().timeline.events));
        }
        group.finish();
    }
}

// criterion's macro defines an undocumented function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
