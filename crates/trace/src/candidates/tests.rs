//! The candidate readers against the reference parser, on the documents `fast::tests` made to
//! reach every rule: where a crate's rules differ from serde_json's, the difference is listed
//! here, and stays listed in `docs/benchmarks.md`.

use super::*;
use crate::fast::tests::KINETO;

fn outcome_text(o: &Outcome) -> String {
    match o {
        Ok(saw) => format!("ok {saw}"),
        Err(Stop::Json(e)) => format!("{:?}: {e}", e.classify()),
        Err(other) => format!("{other:?}"),
    }
}

fn reference(bytes: &[u8]) -> (String, String) {
    let mut b = TimelineBuilder::new();
    let o = tail::simple_slice(bytes, &mut b);
    (outcome_text(&o), b.finish().canonical_text())
}

fn candidate(krate: Crate, bytes: &[u8], part: usize) -> (String, String) {
    let mut b = TimelineBuilder::new();
    let o = parse_slice(krate, bytes, part, &|_, _| {}, &mut b);
    (outcome_text(&o), b.finish().canonical_text())
}

/// Documents of every shape and rule (from `fast::tests`).
fn documents() -> Vec<(String, Vec<u8>)> {
    let mut docs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |label: &str, d: &[u8]| docs.push((label.to_string(), d.to_vec()));
    add("kineto", KINETO.as_bytes());
    for d in crate::fast::tests::SHAPES {
        add(d, d.as_bytes());
    }
    for d in [
        r#"[{"ph":"X","c\u0061t":"kernel","name":"a\"b\\c\u00e9\ud83d\ude00","ts":1,"dur":2,"args":{"dev\u0069ce":"0"}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"naïve 中文","ts":1,"dur":2}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"ts":3,"dur":2,"args":{"device":1},"args":{"stream":2}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"device":1},"args":5}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"cat":7}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":"1.5","dur":"2","pid":"Spans","tid":null,"args":{"correlation":"12.0"}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1E3,"dur":-0,"pid":[0],"tid":{"a":1}}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1e999,"dur":1}]"#,
        r#"[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"device":5E3,"stream":1e-2}}]"#,
        r#"[{"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","ts":1,"dur":1,"tid":3,"args":{"correlation":7}}]"#,
        r#"[{"ph":"X","cat":"KERNEL","name":"k","ts":1,"dur":1},{"ph":"X","cat":"kernel","ts":2,"dur":-1}]"#,
        r#"[{"ph":"X","cat":"kernel","name":{"nested":[1,{"x":"y"}]},"ts":1,"dur":1}]"#,
        r#"{"x":"\q","traceEvents":[{"ts":1}]}"#,
        r#"{"x" 1,"traceEvents":[{"ts":1}]}"#,
    ] {
        add(d, d.as_bytes());
    }
    for d in crate::fast::tests::INVALID_TEXTS {
        add(d, d.as_bytes());
    }
    for d in [
        &b"[{\"ts\":1},{\"name\":\"\xff\"}]"[..],
        b"[{\"ts\":1},{\"name\":\"ok\",\"x\":\"\xc3\x28\"}]",
        b"{\"x\":\"\xff\",\"traceEvents\":[{\"ts\":1}]}",
        b"[{\"ts\":1},\xff]",
    ] {
        add(&String::from_utf8_lossy(d), d);
    }
    // Every event of the Kineto document with a byte of invalid text in the middle of the array.
    for depth in [126, 127, 128, 129, 200, 300] {
        let inner = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let doc = format!("{{\"traceEvents\":[{{\"ts\":1}},{{\"ts\":2,\"args\":{inner}}},{{\"ts\":3}}]}}");
        add(&format!("nested {depth}"), doc.as_bytes());
    }
    let doc = KINETO.as_bytes();
    for cut in (KINETO.find("traceEvents").unwrap()..doc.len()).step_by(7) {
        add(&format!("kineto cut at {cut}"), &doc[..cut]);
    }
    docs
}

fn mismatches(krate: Crate) -> Vec<String> {
    let mut out = Vec::new();
    for (label, doc) in documents() {
        let want = reference(&doc);
        for part in [PART, 1, 100] {
            let got = candidate(krate, &doc, part);
            if got != want {
                out.push(format!("{label} (parts of {part}): {got:?} against {want:?}"));
                break;
            }
        }
    }
    out
}

/// The labels of the documents where `krate` and the reference differ.
fn differing(krate: Crate) -> Vec<String> {
    let m = mismatches(krate);
    for line in &m {
        eprintln!("{krate:?}: {line}");
    }
    m.iter().map(|l| l.split(" (parts of").next().unwrap_or("").to_string()).collect()
}

/// Nesting inside a skipped value: serde_json refuses the 128th level, neither crate has that
/// limit there (sonic-rs skips containers by counting brackets, simd-json's tape has its own).
/// (`nested N`: N arrays inside an event's `args`, 3 levels down: from 126 on, past 128.)
const DEEPER_THAN_SERDE: [&str; 6] =
    ["nested 126", "nested 127", "nested 128", "nested 129", "nested 200", "nested 300"];

#[test]
fn sonic_agrees_with_the_reference_but_for_nesting_depth() {
    assert_eq!(differing(Crate::Sonic), DEEPER_THAN_SERDE);
}

#[test]
fn simd_json_agrees_with_the_reference_but_for_nesting_depth() {
    // Times through f64 are exact for these documents' few digits.
    assert_eq!(differing(Crate::SimdJson), DEEPER_THAN_SERDE);
}

#[test]
fn deep_nesting_never_overflows_the_stack() {
    // serde recursion over a million levels would abort the process, not fail.
    let deep = format!("[{{\"ts\":1}},{{\"args\":{}}}]", "[".repeat(1 << 20));
    for krate in [Crate::Sonic, Crate::SimdJson] {
        assert_eq!(candidate(krate, deep.as_bytes(), PART), reference(deep.as_bytes()), "{krate:?}");
    }
}

#[test]
fn a_part_must_hold_whole_elements() {
    // A comma inside a string looks like an element start; the part before it is refused.
    let doc = br#"{"traceEvents":[{"ph":"X","name":"a}, {b","ts":1,"dur":1},{"ts":2},{"ts":3}]}"#;
    for krate in [Crate::Sonic, Crate::SimdJson] {
        for part in [1, 5, 20, PART] {
            assert_eq!(candidate(krate, doc, part), reference(doc), "{krate:?} parts of {part}");
        }
    }
}

#[test]
fn trailing_text_after_a_part_is_refused() {
    for doc in [&br#"[{"ts":1}]"#[..], br#"[{"ts":1}], {"ts":2}]"#] {
        let mut context = false;
        let ok = sonic::parse_part(doc, &mut TimelineBuilder::new(), &mut context);
        assert_eq!(ok, doc.len() == 10);
        let mut copy = doc.to_vec();
        let mut buffers = simd_json::Buffers::new(64);
        let ok = simd::parse_part(&mut copy, &mut buffers, &mut TimelineBuilder::new(), &mut context);
        assert_eq!(ok, doc.len() == 10);
    }
}
