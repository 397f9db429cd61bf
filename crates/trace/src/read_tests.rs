//! Reading whole inputs: files (plain, gzip), what may follow the document, encodings, caps,
//! timestamps and labels, with both parsers. Inputs are made here, byte by byte.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{fuzzing, read_limited, Cap, Limits, Parser, Trace, TraceError};

const KERNEL: &str = r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"device":0,"stream":7}}"#;

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

struct Files(tempfile::TempDir);

impl Files {
    fn new() -> Self {
        Files(tempfile::tempdir().unwrap())
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

/// Both parsers; they must agree on the timeline or the message.
fn read2(path: &Path, limits: &Limits) -> Result<Trace, String> {
    let fast = read_limited(path, Parser::Fast, limits);
    let simple = read_limited(path, Parser::Simple, limits);
    match (&fast, &simple) {
        (Ok(f), Ok(s)) => {
            assert_eq!(f.timeline.canonical_text(), s.timeline.canonical_text(), "{}", path.display());
            assert_eq!(f.truncated, s.truncated, "{}", path.display());
        }
        (Err(f), Err(s)) => assert_eq!(f.to_string(), s.to_string(), "{}", path.display()),
        _ => panic!("{}: fast {:?}, simple {:?}", path.display(), fast.is_ok(), simple.is_ok()),
    }
    fast.map_err(|e| e.to_string())
}

fn read(path: &Path) -> Result<Trace, String> {
    read2(path, &Limits::DEFAULT)
}

fn doc(events: &[&str]) -> String {
    format!("{{\"traceEvents\":[{}]}}", events.join(","))
}

#[test]
fn one_document_split_across_gzip_members_is_one_trace() {
    let f = Files::new();
    let text = doc(&[KERNEL, &KERNEL.replace("10.5", "20")]);
    let plain = read(&f.write("t.json", &text)).unwrap();
    for cut in [1, 17, text.len() / 2, text.len() - 1] {
        let two = [gz(&text.as_bytes()[..cut]), gz(&text.as_bytes()[cut..])].concat();
        let t = read(&f.write(&format!("t{cut}.json.gz"), two)).unwrap();
        assert_eq!(t.timeline.canonical_text(), plain.timeline.canonical_text(), "cut at {cut}");
        assert_eq!(t.timeline.activities.len(), 2);
    }
}

#[test]
fn a_second_document_or_garbage_after_the_first_is_an_error() {
    let f = Files::new();
    let one = doc(&[KERNEL]);
    let n = one.len();
    for (name, bytes, want) in [
        ("two.json", format!("{one}\n{one}\n"), format!("a second JSON document at byte {}", n + 1)),
        (
            "arrays.json",
            format!("[{KERNEL}][{KERNEL}]"),
            format!("a second JSON document at byte {}", KERNEL.len() + 2),
        ),
        (
            "garbage.json",
            format!("{one}garbage"),
            format!("unexpected text after the JSON document at byte {n}: \"garbage\""),
        ),
        (
            "comma.json",
            format!("{one} ,"),
            format!("unexpected text after the JSON document at byte {}: \",\"", n + 1),
        ),
    ] {
        let e = read(&f.write(name, &bytes)).no();
        assert!(e.contains(&want), "{name}: {e}");
    }
    // Two gzip members, each a whole trace.
    let e = read(&f.write("two.json.gz", [gz(one.as_bytes()), gz(one.as_bytes())].concat())).no();
    assert!(e.ends_with(&format!("a second JSON document at byte {n} of the decompressed text: two traces in one file? (one trace per file is read)")), "{e}");
    // Whitespace after the document is fine, in either form.
    assert!(read(&f.write("ws.json", format!("{one}\n \t\r\n"))).is_ok());
    assert!(read(&f.write("ws.json.gz", [gz(one.as_bytes()), gz(b"\n\n")].concat())).is_ok());
}

#[test]
fn damaged_gzip_is_an_error() {
    let f = Files::new();
    let good = gz(doc(&[KERNEL]).as_bytes());
    let n = good.len();
    // RFC 1952: a member ends with the CRC32 and then ISIZE of its data, 4 bytes each. flate2
    // checks both; a flipped bit in either is refused.
    for (name, at) in [("crc", n - 8), ("isize", n - 1)] {
        let mut bad = good.clone();
        bad[at] ^= 1;
        let e = read(&f.write(&format!("{name}.json.gz"), bad)).no();
        assert!(
            e.ends_with(
                "corrupt gzip data: a gzip member's CRC32 or length check fails: the file is damaged"
            ),
            "{name}: {e}"
        );
    }
    // Bytes after the last member that are not a gzip member.
    let e = err(read(&f.write("tail.json.gz", [&good[..], b"garbage after the trace"].concat())));
    assert!(e.ends_with("bytes after the last gzip member are not gzip (trailing garbage)"), "{e}");
    // Fewer than a gzip header's ten, or a cut trailer: the last CRC32 could not be checked.
    let cut = "the gzip data ends inside a member's header or trailer (a cut file, or stray bytes after the last member): its CRC32 could not be checked";
    let e = err(read(&f.write("stray.json.gz", [&good[..], b"\n\n"].concat())));
    assert!(e.ends_with(cut), "{e}");
    let e = err(read(&f.write("cut.json.gz", &good[..n - 3])));
    assert!(e.ends_with(cut), "{e}");
    // Cut inside the JSON: the complete events are read, the trace said truncated.
    let half = gz(&doc(&[KERNEL, KERNEL]).as_bytes()[..KERNEL.len() + 20]);
    let t = read(&f.write("half.json.gz", half)).unwrap();
    assert!(t.truncated.is_some() && t.timeline.activities.len() == 1);
}

/// The error of a read that must fail (without printing a whole trace when it does not).
fn err(r: Result<Trace, String>) -> String {
    r.no()
}

trait No {
    fn no(self) -> String;
}

impl No for Result<Trace, String> {
    fn no(self) -> String {
        match self {
            Ok(t) => panic!("read, {} events", t.timeline.events),
            Err(e) => e,
        }
    }
}

#[test]
fn encodings_are_named_and_a_utf8_bom_is_read() {
    let f = Files::new();
    let text = doc(&[KERNEL]);
    let want = read(&f.write("t.json", &text)).unwrap().timeline.canonical_text();
    let bom = [&b"\xef\xbb\xbf"[..], text.as_bytes()].concat();
    assert_eq!(read(&f.write("bom.json", &bom)).unwrap().timeline.canonical_text(), want);
    assert_eq!(read(&f.write("bom.json.gz", gz(&bom))).unwrap().timeline.canonical_text(), want);
    // A byte order mark moves byte offsets by three: they count from the file's start.
    let e = read(&f.write("bom2.json", [&bom[..], b"x"].concat())).no();
    assert!(e.contains(&format!("at byte {}", bom.len())), "{e}");
    let utf16: Vec<u8> = format!("\u{feff}{text}").encode_utf16().flat_map(u16::to_le_bytes).collect();
    let e = read(&f.write("utf16.json", &utf16)).no();
    assert!(e.contains("UTF-16 text (little-endian, with a byte order mark)"), "{e}");
    let e = read(&f.write("utf16.json.gz", gz(&utf16))).no();
    assert!(e.contains("UTF-16 text") && e.ends_with("(inside gzip)"), "{e}");
    let zstd = [0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0x00, 0x00, b'[', b']'];
    let e = read(&f.write("t.json.zst", zstd)).no();
    assert!(
        e.ends_with(
            "zstd-compressed data: launchguard reads JSON, plain or gzip; decompress it first (zstd -d)"
        ),
        "{e}"
    );
    let e = read(&f.write("gz.json.gz", gz(&gz(text.as_bytes())))).no();
    assert!(e.contains("gzip data inside gzip"), "{e}");
}

#[test]
fn fifos_and_devices_are_refused_without_being_opened() {
    let f = Files::new();
    let fifo = f.0.path().join("p");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let e = read(&fifo).no();
    assert_eq!(
        e,
        format!(
            "{}: is a FIFO, not a regular file (a trace on a pipe is read from standard input: -)",
            fifo.display()
        )
    );
    let e = read(Path::new("/dev/zero")).no();
    assert_eq!(e, "/dev/zero: is a device, not a regular file");
    assert!(read(f.0.path()).no().ends_with("is a directory, not a trace file"));
}

#[test]
fn out_of_range_times_are_skipped_and_counted() {
    let f = Files::new();
    let far =
        |ts: &str, dur: &str| KERNEL.replace("10.5", ts).replace("\"dur\":2", &format!("\"dur\":{dur}"));
    let events = [
        KERNEL.to_string(),
        far("9000000000000000", "1"),
        far("-9000000000000000", "1"),
        // 2^61 ns is 2305843009213693.952 µs: the last usable start, and one past it.
        far("2305843009213693.952", "0"),
        far("2305843009213693.953", "0"),
        // An end past the range.
        far("2305843009213693", "1000"),
        far("1", "9000000000000000"),
        r#"{"ph":"i","name":"far instant","ts":-9000000000000000}"#.to_string(),
    ];
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let t = read(&f.write("far.json", doc(&events))).unwrap().timeline;
    assert_eq!((t.skipped.missing_ts, t.skipped.bad_dur), (4, 2));
    assert_eq!(t.activities.len(), 2);
    let (lo, hi) = (t.activities.iter().map(|a| a.start).min(), t.activities.iter().map(|a| a.end).max());
    assert_eq!((lo, hi), (Some(10_500), Some(1 << 61)));
}

#[test]
fn numeric_labels_are_one_label() {
    let f = Files::new();
    let on = |pid: &str, tid: &str| {
        format!(r#"{{"ph":"X","cat":"kernel","name":"k","pid":{pid},"tid":{tid},"ts":1,"dur":1}}"#)
    };
    let events = [on("0", "7"), on("\"0\"", "\"7\""), on("0.0", "7.0"), on("-0", "7e0"), on("0e5", "70e-1")];
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let t = read(&f.write("labels.json", doc(&events))).unwrap().timeline;
    let labels: std::collections::BTreeSet<(&str, &str)> =
        t.activities.iter().map(|a| (t.strings.get(a.device), t.strings.get(a.stream))).collect();
    assert_eq!(labels.into_iter().collect::<Vec<_>>(), [("0", "7")]);
    // Text that is not a JSON number stays as it is.
    let events = [on("\"00\"", "\"stream 7\""), on("\" 0\"", "\"+7\""), on("\"0x10\"", "\"1.50\"")];
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let t = read(&f.write("text.json", doc(&events))).unwrap().timeline;
    let labels: Vec<(&str, &str)> =
        t.activities.iter().map(|a| (t.strings.get(a.device), t.strings.get(a.stream))).collect();
    assert_eq!(labels, [("00", "stream 7"), (" 0", "+7"), ("0x10", "1.5")]);
}

/// A trace of `n` kernels, the k-th on device `dev(k)` and stream `stream(k)`.
fn spread(n: usize, dev: impl Fn(usize) -> usize, stream: impl Fn(usize) -> usize) -> String {
    let events: Vec<String> = (0..n)
        .map(|k| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"k{k}","pid":0,"tid":0,"ts":{k},"dur":1,"args":{{"device":{},"stream":{}}}}}"#,
                dev(k),
                stream(k)
            )
        })
        .collect();
    format!("[{}]", events.join(",\n"))
}

#[test]
fn each_cap_stops_with_its_flag_and_key() {
    let f = Files::new();
    let small = Limits {
        max_inflated_bytes: 64 << 10,
        max_event_bytes: 16 << 10,
        max_events: 100,
        max_devices: 4,
        max_streams: 8,
        max_names: 50,
        max_context_bytes: 100,
        max_name_bytes: 64 << 10,
        max_memory_bytes: Limits::DEFAULT.max_memory_bytes,
    };
    let cap = |e: &str, cap: Cap| {
        assert!(e.contains(&format!("({} or [input] {} raises the cap)", cap.flag(), cap.key())), "{e}");
    };
    let within = spread(40, |k| k % 4, |k| k % 2);
    assert!(read2(&f.write("within.json", &within), &small).is_ok());
    let e =
        read2(&f.write("events.json", spread(101, |_| 0, |_| 0)), &Limits { max_names: 1000, ..small }).no();
    assert!(e.contains("more than 100 events"), "{e}");
    cap(&e, Cap::Events);
    let e = read2(&f.write("names.json", spread(60, |_| 0, |_| 0)), &small).no();
    assert!(e.contains("more than 50 distinct names and labels"), "{e}");
    cap(&e, Cap::Names);
    let e = read2(&f.write("devices.json", spread(40, |k| k % 5, |_| 0)), &small).no();
    assert!(e.contains("GPU activity on more than 4 devices"), "{e}");
    cap(&e, Cap::Devices);
    let e = read2(&f.write("streams.json", spread(40, |k| k % 2, |k| k % 5)), &small).no();
    assert!(e.contains("GPU activity on more than 8 streams"), "{e}");
    cap(&e, Cap::Streams);
    let context = |size: usize| {
        format!(
            r#"[{KERNEL},{{"ph":"M","name":"launchguard_context","args":{{"x":"{}"}}}}]"#,
            "a".repeat(size)
        )
    };
    // {"x":"…"} is 8 bytes around the text.
    assert!(read2(&f.write("context-ok.json", context(92)), &small).is_ok());
    let e = read2(&f.write("context.json", context(93)), &small).no();
    assert!(e.contains("a launchguard context event larger than 100 bytes"), "{e}");
    cap(&e, Cap::Context);
    // Streams: the text read, and one event held whole.
    let e = read2(
        &f.write("inflated.json.gz", gz(spread(2000, |_| 0, |_| 0).as_bytes())),
        &Limits { max_names: 10_000, max_events: 10_000, ..small },
    )
    .no();
    assert!(e.contains("more than 64 KiB of JSON text"), "{e}");
    cap(&e, Cap::Inflated);
    // Larger than a block of the stream (1 MiB), which the window holds anyway.
    let big = format!("[{KERNEL},{}]", KERNEL.replace("\"k\"", &format!("\"{}\"", "k".repeat(2 << 20))));
    let fast = read_limited(
        &f.write("event.json.gz", gz(big.as_bytes())),
        Parser::Fast,
        &Limits { max_inflated_bytes: 4 << 20, ..small },
    );
    let e = fast.map_err(|e| e.to_string()).no();
    assert!(e.contains("an event larger than 16 KiB"), "{e}");
    cap(&e, Cap::Event);
}

#[test]
fn errors_name_the_os_error_once() {
    let f = Files::new();
    let path = f.write("locked.json", "[]");
    let e = TraceError::Io { path: path.clone(), error: std::io::Error::from_raw_os_error(13) };
    assert!(std::error::Error::source(&e).is_none());
    assert_eq!(e.to_string(), format!("{}: Permission denied (os error 13)", path.display()));
}

#[test]
fn the_gzip_path_reads_as_the_text_in_memory() {
    // Every way of cutting a document into members and blocks, through the fuzz target's
    // checks; and the same as a raw gzip file.
    let text = format!(
        "{{\"traceEvents\":[{KERNEL},\n{},{{\"ph\":\"M\",\"name\":\"launchguard_context\",\"args\":{{\"a\":1}}}}],\"x\":1}}",
        KERNEL.replace("10.5", "30")
    );
    for variant in
        [text.clone(), format!("{text}  "), format!("{text}[]"), text[..text.len() - 9].to_string()]
    {
        for mode in (1..=255u8).step_by(2) {
            let _ = fuzzing::trace_gzip(&[&[mode][..], variant.as_bytes()].concat());
        }
        let _ = fuzzing::trace_gzip(&[&[0][..], &gz(variant.as_bytes())].concat());
        let _ = fuzzing::trace_fast(variant.as_bytes());
    }
}

/// A name longer than the cap is kept cut to its first bytes, on a character's boundary, the same
/// by both parsers, plain, escaped or gzip; each cut is counted; names within it are kept whole.
#[test]
fn a_name_longer_than_its_cap_keeps_its_first_bytes() {
    let f = Files::new();
    let limits = Limits { max_name_bytes: 100, ..Limits::DEFAULT };
    // 99 ASCII bytes then `é` (2 bytes) straddling the cap: the cut falls before it.
    let long = format!("{}é{}", "k".repeat(99), "x".repeat(5000));
    let escaped = format!("{}\\u00e9{}", "k".repeat(99), "x".repeat(5000));
    let exact = "e".repeat(100);
    for (i, name) in [long.as_str(), escaped.as_str()].into_iter().enumerate() {
        let text = doc(&[
            &KERNEL.replace("\"k\"", &format!("\"{name}\"")),
            &KERNEL
                .replace("\"k\"", &format!("\"{exact}\""))
                .replace("\"stream\":7", &format!("\"stream\":\"{long}\"")),
        ]);
        for (file, bytes) in
            [(format!("n{i}.json"), text.as_bytes().to_vec()), (format!("n{i}.json.gz"), gz(text.as_bytes()))]
        {
            let t = read2(&f.write(&file, bytes), &limits).unwrap().timeline;
            let names: Vec<&str> = t.activities.iter().map(|a| t.strings.get(a.name)).collect();
            assert_eq!(names, [&"k".repeat(99), &exact], "{file}");
            assert_eq!(t.strings.get(t.activities[1].stream), "k".repeat(99), "{file}");
            assert_eq!(t.names_cut, 2, "{file}");
        }
    }
    let t = read2(&f.write("whole.json", doc(&[KERNEL])), &limits).unwrap().timeline;
    assert_eq!((t.names_cut, t.strings.get(t.activities[0].name)), (0, "k"));
}
