//! Entry points for the fuzz targets (`fuzz/`, docs/fuzzing.md) and their replayed regressions;
//! not a stable interface. Each panics when the two parsers disagree, so that the fuzzer
//! records the input.

use std::io::{self, Write};

use crate::event::TimelineBuilder;
use crate::input::{self, Input, SourceInfo};
use crate::{fast, finish, read_input, tail, Limits, Parser};

/// Caps small enough for fuzzed inputs (a few KB) to reach them.
pub const LIMITS: Limits = Limits {
    max_inflated_bytes: 1 << 20,
    // Only the fast parser holds events to a size while streaming (the reference parser holds
    // each event whole): above what any fuzzed input inflates to, so that the two agree.
    max_event_bytes: 1 << 30,
    max_events: 200,
    max_devices: 3,
    max_streams: 6,
    max_names: 100,
    max_context_bytes: 64,
    max_name_bytes: 40,
    // The fuzzers do not count the heap: the budget never applies.
    max_memory_bytes: u64::MAX,
};

/// How a read ended, as text two reads are compared on: the timeline (and truncation), or the
/// error; with `class`, only the error's kind.
fn outcome(
    builder: TimelineBuilder,
    result: tail::Outcome,
    gzip: bool,
    limits: &Limits,
) -> Result<String, String> {
    let source = SourceInfo { path: "fuzzed".into(), bytes: 0, gzip };
    match finish(builder, source, result, 0, limits) {
        Ok(t) => Ok(format!("{}truncated {:?}\n", t.timeline.canonical_text(), t.truncated)),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether a JSON string in `text` holds serde_json's private marker. With `arbitrary_precision`
/// (which the reference parser needs to keep a number's digits) serde_json hands each number to
/// a visitor as an object of one key, `$serde_json::private::Number`; `raw_value` does the same
/// with `$serde_json::private::RawValue`. An object written with that key in the text is then
/// taken for a number in disguise: the reference parser reads such valid JSON wrongly (a value
/// from `{"$serde_json::private::Number": "5"}`, an error from one with a number after the key),
/// while the fast parser reads the object it is. Strings are decoded, escapes and all (the key may
/// be written `\u0024serde_json…`), from the first byte, as the reference parser reads them as
/// far as the text is valid. The fuzzer found it (`regressions/trace_fast/serde-private-number`).
fn serde_private(text: &[u8]) -> bool {
    const MARK: &[u8] = b"$serde_json::private::";
    let mut i = 0;
    while let Some(open) = memchr::memchr(b'"', &text[i.min(text.len())..]) {
        let mut decoded = Vec::new();
        let mut j = i + open + 1;
        while j < text.len() && text[j] != b'"' {
            if text[j] == b'\\' && j + 1 < text.len() {
                let c = text[j + 1];
                j += 2;
                // Only ASCII matters to the marker: `\u00XX` is its byte; anything else, a byte
                // the marker lacks.
                if c == b'u' {
                    let hex = text.get(j..j + 4).and_then(|h| std::str::from_utf8(h).ok());
                    let code = hex.and_then(|h| u32::from_str_radix(h, 16).ok());
                    decoded.push(code.and_then(|c| u8::try_from(c).ok()).filter(u8::is_ascii).unwrap_or(0));
                    j += 4;
                } else {
                    decoded.push(c);
                }
            } else {
                decoded.push(text[j]);
                j += 1;
            }
        }
        if memchr::memmem::find(&decoded, MARK).is_some() {
            return true;
        }
        i = j + 1;
    }
    false
}

/// The kind of an error message: the words before the first detail that may differ between
/// readers (a position, a count).
fn kind(message: &str) -> &str {
    let m = message.strip_prefix("fuzzed: ").unwrap_or(message);
    m.split([' ', ':', '(']).next().unwrap_or(m)
}

/// `trace_fast`: the fast parser on `data` in memory, whole and in parallel parts of a few
/// sizes, against the reference parser, with the default caps and with small ones. The same
/// timeline or the same error; only which cap is met first may differ between parts read in
/// parallel (each part meets its own first). Returns the outcome with the default caps: the
/// timeline as text, or the error.
pub fn trace_fast(data: &[u8]) -> Result<String, String> {
    // Where the reference parser is known to read wrongly, the fast parser in parts is held to
    // itself read whole.
    let reference = !serde_private(data);
    let mut agreed = None;
    for limits in [Limits::DEFAULT, LIMITS] {
        let mut b = TimelineBuilder::with_limits(limits);
        let r = if reference {
            tail::simple_slice(data, &mut b)
        } else {
            fast::parse_slice_parts(data, usize::MAX, &|_, _| {}, &mut b)
        };
        let want = outcome(b, r, false, &limits);
        for min_part in [usize::MAX, 1, 16] {
            let mut b = TimelineBuilder::with_limits(limits);
            let r = fast::parse_slice_parts(data, min_part, &|_, _| {}, &mut b);
            let got = outcome(b, r, false, &limits);
            let caps = |o: &Result<String, String>| o.as_ref().is_err_and(|e| e.contains("raises the cap"));
            if got != want && !(min_part != usize::MAX && caps(&got) && caps(&want)) {
                panic!(
                    "the parsers disagree (parts of {min_part}, {limits:?}):\nreference: {want:?}\nfast: {got:?}\non {:?}",
                    String::from_utf8_lossy(data)
                );
            }
        }
        agreed.get_or_insert(want);
    }
    agreed.expect("read with the default caps")
}

/// `trace_gzip`: the gzip path. The first byte chooses: even, the rest is a gzip file (headers,
/// members, checksums, trailing bytes, bombs) read by both parsers, which must agree, and by the
/// fast parser both as a file (on all cores) and as standard input, which must read alike; odd, the
/// rest is JSON text, compressed into gzip members cut where the first byte says and streamed
/// in blocks of the size it says, which must read as the same text does in memory (the same
/// timeline, or an error of the same kind). Returns the outcome (of the gzip file, or of the text
/// in memory).
pub fn trace_gzip(data: &[u8]) -> Result<String, String> {
    let Some((&mode, rest)) = data.split_first() else { return Err("no input".into()) };
    // Blocks of 1 byte to 64 KiB: small ones cut every element, large ones keep a bomb quick.
    let block = 1 << ((mode as usize >> 1) % 17);
    if mode % 2 == 0 {
        let simple = stream(rest.to_vec(), Parser::Simple, block, false);
        let fast = stream(rest.to_vec(), Parser::Fast, block, false);
        // A file, which can be read again, on all cores (`fast::gzip_par`): exactly as standard
        // input is read, since whatever it is unsure of it leaves to the same sequential reader.
        let file = stream(rest.to_vec(), Parser::Fast, block, true);
        assert!(file == fast, "the gzip file and the same bytes on standard input read apart (blocks of {block}):\nfile: {file:?}\nstandard input: {fast:?}");
        // Where the deflate data itself is damaged, how much text comes out before the damage is
        // found depends on how much was asked for at once (flate2 drops what a failing read had
        // inflated): the two readers, which read in blocks of different sizes, may then stop at
        // different points. Both must fail, one of them on the gzip data.
        let damaged = |o: &Result<String, String>| o.as_ref().is_err_and(|e| e.contains("corrupt gzip data"));
        let both_failed = simple.is_err() && fast.is_err() && (damaged(&simple) || damaged(&fast));
        assert!(fast == simple || both_failed || serde_private(&inflated(rest)), "the parsers disagree on a gzip stream (blocks of {block}):\nreference: {simple:?}\nfast: {fast:?}");
        // What flate2 calls an invalid header, told apart by reading the bytes again
        // (`gunzip::header_fault`, as a file's reader does): a fault is only ever found in bytes
        // that flate2 refuses too.
        if let Some(fault) = crate::gunzip::header_fault(rest, LIMITS.max_inflated_bytes) {
            use std::io::Read;
            let mut d = flate2::read::MultiGzDecoder::new(rest).take(LIMITS.max_inflated_bytes);
            assert!(
                d.read_to_end(&mut Vec::new()).is_err(),
                "a header fault ({fault}) in gzip bytes flate2 reads whole"
            );
        }
        return simple;
    }
    let mut b = TimelineBuilder::with_limits(LIMITS);
    let r = tail::simple_slice(rest, &mut b);
    let want = outcome(b, r, true, &LIMITS);
    // Where the reference parser is known to read wrongly, each parser is held to itself in memory.
    let fast_want = serde_private(rest).then(|| {
        let mut b = TimelineBuilder::with_limits(LIMITS);
        let r = fast::parse_slice_parts(rest, usize::MAX, &|_, _| {}, &mut b);
        outcome(b, r, true, &LIMITS)
    });
    // A file's first bytes are looked at before any parser reads it (`input::sniff`: UTF-16,
    // UTF-32, other compressors); text in memory is not. What that refuses, every stream must
    // refuse, as such, whatever the parser would have said of the bytes.
    let head = &rest[..rest.len().min(8)];
    let refused = !head.is_empty() && !matches!(input::sniff(head), input::Sniff::Text { .. });
    // No text at all is refused as an empty file, as a file of no bytes is, before any parser.
    let empty = rest.is_empty();
    let gz = members(rest, mode);
    for (parser, file) in [(Parser::Simple, false), (Parser::Fast, false), (Parser::Fast, true)] {
        let got = stream(gz.clone(), parser, block, file);
        let want = match (&fast_want, parser) {
            (Some(w), Parser::Fast) => w,
            _ => &want,
        };
        let same = match (&got, want) {
            _ if refused => got.as_ref().is_err_and(|e| e.contains("inside gzip")),
            _ if empty => got.as_ref().is_err_and(|e| e.ends_with(": empty file")),
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => kind(a) == kind(b),
            _ => false,
        };
        assert!(
            same,
            "{parser:?} on gzip (blocks of {block}, as a file: {file}) and the reference parser in memory disagree:\nin memory: {want:?}\ngzip: {got:?}\non {:?}",
            String::from_utf8_lossy(rest)
        );
    }
    want
}

/// A read of gzip bytes with `parser`, in blocks of `block` bytes; `file`: as a file is read
/// (able to read it again: on all cores), else as standard input is.
fn stream(gz: Vec<u8>, parser: Parser, block: usize, file: bool) -> Result<String, String> {
    let path = std::path::Path::new("fuzzed");
    let open = || match input::gzip_stream(io::Cursor::new(gz.clone()), Default::default(), path, &LIMITS) {
        Ok(Input::Stream(r)) => Ok(r),
        Ok(Input::Plain(_)) => unreachable!("gzip is streamed"),
        Err(e) => Err(e),
    };
    let reader = match open() {
        Ok(r) => r,
        Err(e) => return Err(e.to_string()),
    };
    let read = || {
        let reopen = || open().map_err(|e| io::Error::other(e.to_string()));
        let unchecked = || input::gzip_unchecked(io::Cursor::new(gz.clone()), path, &LIMITS);
        let reopen: fast::Reopen =
            if file { Some(fast::Again { checked: &reopen, unchecked: &unchecked }) } else { None };
        read_input(Input::Stream(reader), parser, &LIMITS, block, reopen, false)
    };
    // A file on as many threads as leave the first gzip member's CRC-32 to the parsing threads
    // (`crate::gunzip`), whatever cores the fuzzer has.
    let (builder, result, _) = if file { many_threads().install(read) } else { read() };
    outcome(builder, result, true, &LIMITS)
}

/// A pool of [`fast::PACED_BY_INFLATE`] threads.
fn many_threads() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new().num_threads(fast::PACED_BY_INFLATE).build().expect("a thread pool")
    })
}

/// The text of gzip bytes, as much as inflates before an error or the cap on text.
fn inflated(gz: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut text = Vec::new();
    let mut d = flate2::read::MultiGzDecoder::new(gz).take(LIMITS.max_inflated_bytes);
    let mut buf = [0u8; 1 << 14];
    while let Ok(n @ 1..) = d.read(&mut buf) {
        text.extend_from_slice(&buf[..n]);
    }
    text
}

/// `text` as gzip members, cut every 1 byte to 16 KiB as `seed` picks (one member when it picks
/// none).
fn members(text: &[u8], seed: u8) -> Vec<u8> {
    let mut cuts = vec![0];
    let mut at = 0usize;
    let step = 1 << ((seed as usize >> 3) % 15);
    while seed & 0b110 != 0 && at + step < text.len() {
        at += step;
        cuts.push(at);
    }
    cuts.push(text.len());
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&text[w[0]..w[1]]).expect("in memory");
        out.extend(e.finish().expect("in memory"));
    }
    out
}

/// `data` written to a fresh file of this process (the readers of other formats read files),
/// read by `read`, the file removed; the outcome as text, or the error. Panics when the read
/// changed the file or left anything beside it (a journal, a WAL), or kept more than the caps
/// allow.
fn read_file(
    data: &[u8],
    read: impl Fn(&std::path::Path) -> Result<crate::Trace, crate::TraceError>,
) -> Result<String, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "launchguard-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join("input");
    std::fs::write(&path, data).expect("the input written");
    let got = read(&path);
    let after = std::fs::read(&path).expect("the input read back");
    let beside = std::fs::read_dir(&dir).expect("the folder listed").count();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(after == data, "reading changed the input");
    assert_eq!(beside, 1, "reading left files beside the input");
    match got {
        Ok(t) => {
            let tl = &t.timeline;
            assert!(tl.events <= LIMITS.max_events, "{} events kept past the cap", tl.events);
            assert!(
                tl.strings.len() as u64 <= LIMITS.max_names + 4,
                "{} names kept past the cap",
                tl.strings.len()
            );
            Ok(tl.canonical_text())
        }
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains('\n'), "an error of more than one line: {e}");
            Err(e)
        }
    }
}

/// `formats_rocprofv3`: arbitrary bytes as a rocprofv3 JSON file (plain or gzip), read with small
/// caps: a timeline or a one-line error, the input unchanged.
pub fn formats_rocprofv3(data: &[u8]) -> Result<String, String> {
    read_file(data, |p| crate::formats::rocprofv3::read(p, &LIMITS))
}

/// `formats_sqlite`: arbitrary bytes as an SQLite database (rocpd or Nsight Systems), read with
/// small caps: a timeline or a one-line error, the input unchanged and nothing written beside it.
pub fn formats_sqlite(data: &[u8]) -> Result<String, String> {
    read_file(data, |p| crate::formats::read(p, crate::formats::Format::Sqlite, &LIMITS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_json_s_private_marker_is_found_however_written() {
        assert!(serde_private(br#"[{"$serde_json::private::Number": 65536}]"#));
        // Escaped, and as a value rather than a key: serde_json compares the decoded text.
        assert!(serde_private(br#"[{"\u0024serde_json::private::Number": "5"}]"#));
        assert!(serde_private(br#"{"a": "x$serde_json::private::RawValue"}"#));
        // Not inside a string, split by an escaped quote, or absent.
        assert!(!serde_private(br#"[1, 2] $serde_json::private::Number"#));
        assert!(!serde_private(br#"["$serde_json::\"private::Number"]"#));
        assert!(!serde_private(br#"[{"ph": "X", "name": "serde_json::private", "ts": 1}]"#));
        // Cut inside a string or an escape.
        assert!(!serde_private(br#"["$serde_json::priv"#));
        assert!(!serde_private(br#"["\u00"#));
    }

    #[test]
    fn an_object_the_reference_takes_for_a_number_is_left_out_of_the_comparison() {
        // The reference parser reads `ts` as 5 here, the fast parser as an object (no usable ts):
        // the fast parser is right, and the harness must not call it a disagreement.
        let doc = br#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {"$serde_json::private::Number": "5"}, "dur": 1},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9, "dur": 1}
        ]}"#;
        let mut b = TimelineBuilder::new();
        let r = tail::simple_slice(doc, &mut b);
        let reference = outcome(b, r, false, &Limits::DEFAULT);
        let fast = trace_fast(doc);
        assert_ne!(reference, fast, "the reference parser no longer misreads the marker: drop the rule");
        assert!(fast.as_ref().is_ok_and(|t| t.contains("truncated None")), "{fast:?}");
    }
}
