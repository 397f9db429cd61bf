//! The fast parser against the reference parser, on documents made to reach every rule.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;
use crate::timeline::Timeline;

/// Text read slowly from memory, 16 KiB at a time; says when it is dropped, so that a test sees
/// whether a reading thread still holds its input when a read returns.
pub(crate) struct Slow {
    text: io::Cursor<Vec<u8>>,
    dropped: Arc<AtomicBool>,
}

impl Slow {
    pub(crate) fn new(text: Vec<u8>, dropped: &Arc<AtomicBool>) -> Slow {
        Slow { text: io::Cursor::new(text), dropped: Arc::clone(dropped) }
    }
}

impl Read for Slow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let n = buf.len().min(16 << 10);
        self.text.read(&mut buf[..n])
    }
}

impl Drop for Slow {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

/// Everything a timeline holds, as text that two runs can compare.
pub(crate) fn summary(t: &Timeline) -> String {
    t.canonical_text()
}

pub(crate) fn outcome_text(o: &tail::Outcome) -> String {
    match o {
        Ok(saw) => format!("ok {saw}"),
        Err(tail::Stop::Json(e)) => format!("{:?}: {e}", e.classify()),
        Err(other) => format!("{other:?}"),
    }
}

fn simple_run(bytes: &[u8]) -> (String, String) {
    let mut b = TimelineBuilder::new();
    let o = tail::simple_slice(bytes, &mut b);
    (outcome_text(&o), summary(&b.finish()))
}

fn fast_run(bytes: &[u8], min_part: usize) -> (String, String) {
    let mut b = TimelineBuilder::new();
    let o = parse_slice_parts(bytes, min_part, &|_, _| {}, &mut b);
    (outcome_text(&o), summary(&b.finish()))
}

/// Whether the fast parser answered by itself (else the reference parser read it all).
fn answered_fast(bytes: &[u8]) -> bool {
    parse_slice_fast(bytes, usize::MAX, &|_, _| {}, &mut TimelineBuilder::new()).is_some()
}

/// Both parsers, whole and in small parallel parts, must agree.
#[track_caller]
pub(crate) fn agree(bytes: &[u8]) {
    let want = simple_run(bytes);
    for min_part in [usize::MAX, 1, 7, 64] {
        let got = fast_run(bytes, min_part);
        assert_eq!(got, want, "parts of {min_part} on {:?}", String::from_utf8_lossy(bytes));
    }
}

/// Agreement, reached by the fast parser itself (and its replay), not by falling back.
#[track_caller]
fn agree_fast(bytes: &[u8]) {
    agree(bytes);
    assert!(answered_fast(bytes), "fell back on {:?}", String::from_utf8_lossy(bytes));
}

pub(crate) const KINETO: &str = r#"
{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320
    }
  ],
  "cupti_version": 130001,
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 581, "tid": 581,
    "ts": 5118046481480.410, "dur": 82.423,
    "args": {
      "External id": 5,"Record function id": 0, "Sequence number": 0, "Ev Idx": 4
    }
  },
  {
    "ph": "X", "cat": "user_annotation", "name": "probe::replay", "pid": 581, "tid": 581,
    "ts": 5118046481808.411, "dur": 251.169,
    "args": {
      "External id": 6,"Record function id": 0, "Ev Idx": 5
    }
  },
  {
    "ph": "X", "cat": "kernel", "name": "void at::native::{lambda(float)#1}, {lambda()#2}>(at::TensorIteratorBase&)", "pid": 0, "tid": 7,
    "ts": 5118046481399.733, "dur": 1.600,
    "args": {
      "External id": 4,      "queued": 0, "device": 0, "context": 1,      "stream": 7, "correlation": 22,      "grid": [64, 1, 1],      "block": [256, 1, 1],      "est. achieved occupancy %": 6
    }
  },
  {
    "ph": "f", "id": 22, "pid": 0, "tid": 7, "ts": 5118046481399.733,
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 581, "tid": 581,
    "ts": 5118046481859.969, "dur": 139.736,
    "args": {
            "cbid": 311, "correlation": 40
    }
  },
  {
    "ph": "X", "cat": "gpu_user_annotation", "name": "probe::replay", "pid": 0, "tid": 7,
    "ts": 5118046481900.000, "dur": 10,
    "args": { "device": 0 }
  },
  {
    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": "stream 7",
    "ts": "5118046481910.5", "dur": 2e0,
    "args": { "device": 0, "stream": 7, "correlation": "41" }
  },
  {
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": 5118046510255.868
  }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
  "traceName": "/tmp/x.json"
}"#;

#[test]
fn kineto_document() {
    agree_fast(KINETO.as_bytes());
    let (outcome, summary) = fast_run(KINETO.as_bytes(), usize::MAX);
    assert_eq!(outcome, "ok true");
    assert!(
        summary.contains("A 0 7 void at::native::{lambda(float)#1}, {lambda()#2}>(at::TensorIteratorBase&)")
    );
    assert!(summary.contains("L CudaRuntime 581 5118046481859969 5118046481999705 Some(40)"));
    assert!(summary.contains("rank: Some(1)"));
}

/// Documents of every top-level shape (arrays, objects, scalars, empty, repeated and odd
/// `traceEvents`): every reader must read each as the reference parser does (shared with the
/// candidate readers' tests).
pub(crate) const SHAPES: &[&str] = &[
    r#"[]"#,
    r#"{}"#,
    r#"{"a": 1}"#,
    r#"  [ {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2} ]  trailing"#,
    r#"[1, "two", [3], {"ts": 4}, null, true, false, -0.5e-3]"#,
    r#"{"traceEvents": []}"#,
    r#"{"traceEvents": [{}], "traceEvents": [{"ts": 1}]}"#,
    r#"{"traceEvents": 5}"#,
    r#"{"traceEvents": {}}"#,
    r#"{"traceEvents": [], "baseTimeNanoseconds": "12"}"#,
    r#"{"baseTimeNanoseconds": [1], "traceEvents": [{"ts": 1}]}"#,
    r#"{"roctracer_version": 4, "rocprofiler-sdk_version": 1, "traceEvents": [{"ts": 1}]}"#,
    r#"{"deviceProperties": [{"id": "0", "name": "MI300X"}, {"name": "no id"}], "traceEvents": [{"ts": 1}]}"#,
    r#"5"#,
    r#""text""#,
    "",
    "   ",
    "\u{feff}[]",
];

#[test]
fn shapes_of_documents() {
    for doc in SHAPES {
        agree(doc.as_bytes());
    }
}

#[test]
fn values_decode_as_serde_does() {
    for doc in [
        // Escapes in keys and values, surrogate pairs, non-ASCII text.
        r#"[{"ph":"X","c\u0061t":"kernel","name":"a\"b\\c\u00e9\ud83d\ude00","ts":1,"dur":2,"args":{"dev\u0069ce":"0"}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"naïve 中文","ts":1,"dur":2}]"#,
        // Duplicate keys: the last one wins, `args` too.
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"ts":3,"dur":2,"args":{"device":1},"args":{"stream":2}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"device":1},"args":5}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"cat":7}]"#,
        // Numbers as text, exponents, odd scalars.
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":"1.5","dur":"2","pid":"Spans","tid":null,"args":{"correlation":"12.0"}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1E3,"dur":-0,"pid":[0],"tid":{"a":1}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1e999,"dur":1}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"device":5E3,"stream":1e-2}}]"#,
        r#"[{"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","ts":1,"dur":1,"tid":3,"args":{"correlation":7}}]"#,
        r#"[{"ph":"X","cat":"KERNEL","name":"k","ts":1,"dur":1},{"ph":"X","cat":"kernel","ts":2,"dur":-1}]"#,
        r#"[{"ph":"X","cat":"kernel","name":{"nested":[1,{"x":"y"}]},"ts":1,"dur":1}]"#,
        // Context events, however their phase and name are written.
        r#"[{"ph":"\u004d","name":"launchguard_context","args":{"a":1}},{"ph":"M","name":"launchguard_\u0063ontext","args":[2]}]"#,
        r#"[{"ph":"M","name":"launchguard_context","args":{"a":1},"args":{"b":2E3}},{"ph":"M","name":"launchguard_context"}]"#,
        r#"[{"ph":"\u0058","cat":"kernel","name":"k","ts":1,"dur":1}]"#,
    ] {
        agree_fast(doc.as_bytes());
    }
}

/// Invalid JSON text after a first event: every reader must stop where the reference parser
/// stops, with the events before the fault kept (shared with the candidate readers' tests).
pub(crate) const INVALID_TEXTS: &[&str] = &[
    r#"[{"ts":1},{"ts":2},]"#,
    r#"[{"ts":1},,{"ts":2}]"#,
    r#"[{"ts":1} {"ts":2}]"#,
    r#"[{"ts":1},{"ts":01}]"#,
    r#"[{"ts":1},{"ts":NaN}]"#,
    r#"[{"ts":1},{"ts":Infinity}]"#,
    r#"[{"ts":1},{"ts":1.}]"#,
    r#"[{"ts":1},{"name":"\ud800"}]"#,
    r#"[{"ts":1},{"name":"\udc00x"}]"#,
    r#"[{"ts":1},{"args":{"x":"\ud83d\u0041"}}]"#,
    r#"[{"ts":1},{"name":"\q"}]"#,
    "[{\"ts\":1},{\"name\":\"tab\there\"}]",
    "[{\"ts\":1},{\"name\":\"a\u{1}b\"}]",
    r#"[{"ts":1},{"ts":2,}]"#,
    r#"[{"ts":1},{"ts" 2}]"#,
    r#"[{"ts":1},{"ts":2}"#,
    r#"[{"ts":1},{"ts":tru}]"#,
    r#"[{"ts":1},{"ts":truex}]"#,
    r#"[{"ts":1},{ts:1}]"#,
    r#"{"traceEvents":[{"ts":1}],"x":[1,]}"#,
    r#"{"traceEvents":[{"ts":1}] "x":1}"#,
    r#"{"traceEvents":[{"ts":1}],"x":"\ud800"}"#,
    r#"{"traceEvents":[{"ts":1}],"distributedInfo":{"rank":1}"#,
    r#"[{"ts":1}]]"#,
];

#[test]
fn invalid_text_stops_both_at_the_same_place() {
    for doc in INVALID_TEXTS {
        agree_fast(doc.as_bytes());
    }
    for doc in [
        // A scalar element then a byte that cannot follow it: the reference parser takes the
        // scalar (an event) before it fails on the byte. (Found by the trace_fast fuzz target.)
        "[{\"ts\":1},8\u{0}]",
        "[{\"ts\":1},true\u{0}]",
        r#"[{"ts":1},0x]"#,
        r#"[{"ts":1},-1.5e3x,{"ts":2}]"#,
        r#"[8x]"#,
        r#"{"traceEvents":[{"ts":1},"s"x]}"#,
        // ... and at the end of the text, where the reference parser takes it too.
        r#"[{"ts":1}, 8"#,
        r#"[1, 2"#,
        r#"{"traceEvents":[null"#,
    ] {
        agree_fast(doc.as_bytes());
    }
    // Before the first event, the reference parser reads the file itself.
    for doc in [r#"{"x":"\q","traceEvents":[{"ts":1}]}"#, r#"{"x" 1,"traceEvents":[{"ts":1}]}"#] {
        agree(doc.as_bytes());
    }
    // Invalid UTF-8 inside an event, and outside events where serde skips it unread.
    agree(b"[{\"ts\":1},{\"name\":\"\xff\"}]");
    agree(b"[{\"ts\":1},{\"name\":\"ok\",\"x\":\"\xc3\x28\"}]");
    agree(b"{\"x\":\"\xff\",\"traceEvents\":[{\"ts\":1}]}");
    agree(b"[{\"ts\":1},\xff]");
}

#[test]
fn nesting_limit_is_serde_s() {
    for bare in [true, false] {
        for depth in 120..=130 {
            let inner = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let events = format!("[{{\"ts\":1}},{{\"ts\":2,\"args\":{inner}}}]");
            let doc = if bare { events } else { format!("{{\"traceEvents\":{events}}}") };
            agree(doc.as_bytes());
            let header = format!("{{\"x\":{inner},\"traceEvents\":[{{\"ts\":1}}]}}");
            agree(header.as_bytes());
            // Past the limit, an event is replayed; a skipped header value (serde has no limit
            // there) is left to the reference parser.
            assert!(answered_fast(doc.as_bytes()));
        }
    }
    // Objects and arrays in turn, with values beside each: a closer that does not match its
    // opener, at any depth, is invalid.
    for depth in 118..=130 {
        let (mut open, mut close) = (String::new(), String::new());
        for d in 0..depth {
            if d % 2 == 0 {
                open.push_str(&format!("{{\"k\\u00e9{d}\": 1, \"v\": "));
                close.insert_str(0, ", \"w\": null}");
            } else {
                open.push_str(&format!("[-1.5e3, \"s{d}\", "));
                close.insert_str(0, ", true]");
            }
        }
        let inner = format!("{open}[]{close}");
        agree(format!("[{{\"ts\":1}},{{\"ts\":2,\"args\":{inner}}}]").as_bytes());
        for at in [0, depth / 2, depth - 1] {
            // The closer of container `at` (counted from the innermost) swapped for the other.
            let mut bad = close.clone().into_bytes();
            let pos = bad.iter().enumerate().filter(|(_, &b)| b == b']' || b == b'}').nth(at).unwrap().0;
            bad[pos] = if bad[pos] == b']' { b'}' } else { b']' };
            let bad = String::from_utf8(bad).unwrap();
            agree(format!("[{{\"ts\":1}},{{\"ts\":2,\"args\":{open}[]{bad}}}]").as_bytes());
        }
    }
    // Far deeper than any stack would allow recursion.
    let deep = format!("[{{\"ts\":1}},{{\"args\":{}}}]", "[".repeat(1 << 20));
    agree(deep.as_bytes());
    let deep_header = format!("{{\"x\":{}", "[".repeat(1 << 20));
    agree(deep_header.as_bytes());
}

#[test]
fn every_truncation_of_a_kineto_document() {
    let doc = KINETO.as_bytes();
    let events = KINETO.find("traceEvents").unwrap();
    for cut in 0..doc.len() {
        let want = simple_run(&doc[..cut]);
        for min_part in [usize::MAX, 64] {
            assert_eq!(fast_run(&doc[..cut], min_part), want, "cut at {cut}, parts of {min_part}");
        }
        // Only a cut inside the header leaves the file to the reference parser.
        assert_eq!(answered_fast(&doc[..cut]), cut > events + 14, "cut at {cut}");
    }
}

/// Applies edits `(position, byte, kind)`: kind 0 inserts the byte, 1 removes the byte there, 2
/// replaces it; positions wrap around the document's length.
fn apply_edits(doc: &mut Vec<u8>, edits: &[(usize, u8, usize)]) {
    for &(at, byte, kind) in edits {
        let at = at % (doc.len() + 1);
        match kind {
            0 => doc.insert(at, byte),
            1 if at < doc.len() => {
                doc.remove(at);
            }
            _ if at < doc.len() => doc[at] = byte,
            _ => {}
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// Random edits of a real-looking document: the fast parser never panics, and agrees.
    #[test]
    fn mutations_agree(
        edits in proptest::collection::vec((0usize..4000, proptest::sample::select(
            b"{}[]:,\"\\ \n0123456789.-eEtrufalsn\x01\xff\xc3".to_vec()), 0usize..3), 1..6),
        min_part in proptest::sample::select(vec![usize::MAX, 1, 40, 200]),
    ) {
        let mut doc = KINETO.as_bytes().to_vec();
        apply_edits(&mut doc, &edits);
        proptest::prop_assert_eq!(fast_run(&doc, min_part), simple_run(&doc));
    }

    /// The events three times over, edits only in the last copy: the separators recorded from the
    /// first copies are matched against text that differs from them in one byte or a few.
    #[test]
    fn edits_after_repeated_events_agree(
        edits in proptest::collection::vec((0usize..2000, proptest::sample::select(
            b"{}[]:,\"\\ \n0123456789.-eEtrufalsnxyz\x01\xff".to_vec()), 0usize..3), 1..4),
        min_part in proptest::sample::select(vec![usize::MAX, 1, 300]),
    ) {
        let open = KINETO.find("\"traceEvents\": [").unwrap() + 16;
        let close = KINETO.rfind("\n  ],").unwrap();
        let events = &KINETO[open..close];
        let mut last = events.as_bytes().to_vec();
        apply_edits(&mut last, &edits);
        let mut doc = KINETO.as_bytes()[..open].to_vec();
        for copy in [events.as_bytes(), b",", events.as_bytes(), b",", &last] {
            doc.extend_from_slice(copy);
        }
        doc.extend_from_slice(&KINETO.as_bytes()[close..]);
        proptest::prop_assert_eq!(fast_run(&doc, min_part), simple_run(&doc));
    }

    /// Arbitrary bytes: never a panic.
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
        let mut b = TimelineBuilder::new();
        let _ = parse_slice_parts(&bytes, 16, &|_, _| {}, &mut b);
    }
}
