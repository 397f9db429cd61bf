//! A copy of the trace with the findings added as events — each gap over the threshold, each graph
//! launch call and each replay's GPU work as a complete (`X`) event on tracks of their own — so the user opens it in Perfetto
//! or chrome://tracing and jumps to them.
//!
//! The input is streamed, never modified, and never held whole: serde_json walks it value by value
//! and each value's exact text (`RawValue`) is copied out, so every number and string of the
//! original survives byte for byte; only whitespace between values changes. The new events are
//! spliced in before the end of `traceEvents` (or of a bare array). A truncated input (a crashed
//! profiler) yields a valid file holding the complete events before the cut.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;
use launchguard_analysis::intervals::Span;
use launchguard_analysis::model::Replay;
use launchguard_trace::time::format_ns_as_micros;

use crate::error::{ReportError, Result};
use crate::terminal::human_us;
use crate::View;

/// Process id of the added tracks. Linux pids stay below 2^22, so no process of the trace has it
/// and the tracks never merge with the trace's own. A number, not a name: Perfetto's JSON importer
/// drops events whose pid is not an integer.
pub const PID: u64 = 1 << 22;

/// Streams the annotated copy of the trace at `input` (the trace `view` was measured from) into
/// `out`, gzip-compressed when `gzip`. Nothing trace-sized is held: the copy is as large as the
/// trace.
pub fn write(view: &View<'_>, input: &Path, gzip: bool, out: &mut dyn Write) -> Result<()> {
    let extra = events(view)?;
    if gzip {
        let mut gz = GzEncoder::new(out, Compression::default());
        launchguard_trace::splice::append_events(input, &extra, &mut gz)?;
        gz.finish()?;
    } else {
        launchguard_trace::splice::append_events(input, &extra, out)?;
    }
    Ok(())
}

/// The events to add, each one JSON object.
pub fn events(view: &View<'_>) -> Result<Vec<String>> {
    let (Some(f), Some(a)) = (view.findings, view.analysis) else {
        return Err(ReportError::Missing("an annotated trace needs a trace's spans"));
    };
    let mut out = vec![
        meta("process_name", 0, r#"{"name":"launchguard findings"}"#),
        meta("process_sort_index", 0, r#"{"sort_index":-1}"#),
    ];
    let threshold = crate::value_text(&serde_json::json!(f.threshold_us));
    // Thread ids in display order: a gap track per device, then the launch and replay tracks.
    let mut tid = 0u64;
    for d in &f.devices {
        tid += 1;
        let name = format!("GPU {}: gaps > {threshold} µs", d.label);
        out.push(meta("thread_name", tid, &format!(r#"{{"name":{}}}"#, json_str(&name))));
        out.push(meta("thread_sort_index", tid, &format!(r#"{{"sort_index":{tid}}}"#)));
        for (s, e) in d.long_gaps(f.threshold_ns) {
            let args = format!(
                r#"{{"device":{},"gap_us":{},"threshold_us":{threshold}}}"#,
                json_str(&d.label),
                format_ns_as_micros(e - s)
            );
            out.push(complete(&format!("gap {}", human_us((e - s) as f64 / 1000.0)), tid, s, e, &args));
        }
    }
    // Two tracks per replay: its launch call on the host, its work on the GPU (first kernel start to
    // last kernel end). Launch-to-end spans would overlap whenever the host runs ahead of the GPU,
    // and Perfetto wants the slices of a track nested; the two halves rarely overlap, and when
    // they do the overlapping ones go to extra lanes.
    let by_index: std::collections::HashMap<u64, &Replay> = a.replays.iter().map(|r| (r.index, r)).collect();
    let args = |i: u64| by_index.get(&i).map_or_else(|| "{}".to_string(), |r| replay_args(r));
    let mut slices = Vec::with_capacity(2 * f.replays.len());
    let launches: Vec<(u64, Span)> = f.replays.iter().map(|r| (r.index, r.launch)).collect();
    let gpu: Vec<(u64, Span)> = f.replays.iter().filter_map(|r| r.gpu.map(|g| (r.index, g))).collect();
    for (track, items, what) in
        [("graph launches (host call)", &launches, "launch"), ("graph replays on GPU", &gpu, "replay")]
    {
        if items.is_empty() {
            continue;
        }
        tid += 1;
        let lanes = lanes(items.iter().map(|(_, s)| *s));
        let count = lanes.iter().copied().max().map_or(0, |m| m + 1);
        for lane in 0..count {
            let name = if lane == 0 { track.to_string() } else { format!("{track} ({})", lane + 1) };
            out.push(meta("thread_name", tid + lane as u64, &format!(r#"{{"name":{}}}"#, json_str(&name))));
            out.push(meta(
                "thread_sort_index",
                tid + lane as u64,
                &format!(r#"{{"sort_index":{}}}"#, tid + lane as u64),
            ));
        }
        for ((i, (s, e)), lane) in items.iter().zip(&lanes) {
            slices.push(complete(&format!("{what} {i}"), tid + *lane as u64, *s, *e, &args(*i)));
        }
        tid += count as u64 - 1;
    }
    out.extend(slices);
    Ok(out)
}

/// The lane of each span: the first whose previous span ended by its start (greedy interval
/// partitioning, which uses as few lanes as the deepest overlap).
fn lanes(spans: impl Iterator<Item = Span>) -> Vec<usize> {
    let mut ends: Vec<i64> = Vec::new();
    spans
        .map(|(s, e)| match ends.iter().position(|&end| end <= s) {
            Some(l) => {
                ends[l] = e;
                l
            }
            None => {
                ends.push(e);
                ends.len() - 1
            }
        })
        .collect()
}

fn json_str(s: &str) -> String {
    crate::escape::json(&serde_json::to_string(s).expect("strings serialize")).into_owned()
}

fn meta(name: &str, tid: u64, args: &str) -> String {
    format!(r#"{{"name":"{name}","ph":"M","pid":{PID},"tid":{tid},"args":{args}}}"#)
}

/// A complete event; times in the trace's own unit, µs with three decimals.
fn complete(name: &str, tid: u64, start: i64, end: i64, args: &str) -> String {
    format!(
        r#"{{"name":{},"cat":"launchguard","ph":"X","pid":{PID},"tid":{tid},"ts":{},"dur":{},"args":{args}}}"#,
        json_str(name),
        format_ns_as_micros(start),
        format_ns_as_micros(end - start)
    )
}

fn replay_args(r: &Replay) -> String {
    let mut s = format!(r#"{{"index":{},"kernels":{},"launch_us":{}"#, r.index, r.kernels, r.launch_us);
    if let Some(c) = r.correlation {
        let _ = write!(s, r#","correlation":{c}"#);
    }
    for (k, v) in [
        ("launch_to_first_kernel_us", r.launch_to_first_kernel_us),
        ("gpu_span_us", r.gpu_span_us),
        ("idle_before_us", r.idle_before_us),
    ] {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            let _ = write!(s, r#","{k}":{v}"#);
        }
    }
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use launchguard_analysis::analyze::{analyze, Options};
    use launchguard_analysis::spans::Findings;
    use serde_json::Value;

    /// Two replays of a two-kernel graph with one long gap between them, followed by a key the
    /// copy must keep. Times in µs; the gap runs from 1015.5 (end of the second kernel) to 1200.25.
    const TRACE: &str = r#"{"schemaVersion": 1, "traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 2, "ts": 990, "dur": 5, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1000.000, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1010.5, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 2, "ts": 1100, "dur": 7.125, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1200.250, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 2}},
      {"ph": "i", "name": "note \"quoted\"", "pid": 1, "tid": 2, "ts": 1234567890123.456}
    ], "traceName": "t.json", "big": 123456789012345678901234567890}"#;

    fn annotate(text: &str, gzip: bool) -> (Vec<u8>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, text).unwrap();
        let trace = launchguard_trace::read(&path).unwrap();
        let analysis =
            launchguard_judge::analysis(analyze(&trace, &Options::default()).unwrap(), &Default::default());
        let doc = crate::Document::of(&analysis).unwrap();
        let f = Findings::new(&trace.timeline, &analysis.figures).unwrap();
        let view = View::of_analysis(&analysis.figures, Some(&f), &analysis.checks, analysis.verdict, &doc);
        let mut out = Vec::new();
        write(&view, &path, gzip, &mut out).unwrap();
        (out, std::fs::read(&path).unwrap())
    }

    fn added(doc: &Value, n_input: usize) -> Vec<Value> {
        doc["traceEvents"].as_array().unwrap()[n_input..].to_vec()
    }

    #[test]
    fn gaps_and_replays_are_added_and_the_rest_is_kept_exactly() {
        let (out, input_after) = annotate(TRACE, false);
        assert_eq!(input_after, TRACE.as_bytes(), "the input is never modified");
        let text = String::from_utf8(out).unwrap();
        // Every original value survives as written, numbers included.
        for kept in [
            "1234567890123.456",
            "123456789012345678901234567890",
            r#""note \"quoted\"""#,
            "1010.5",
            "1000.000",
        ] {
            assert!(text.contains(kept), "{kept}");
        }
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let input: Value = serde_json::from_str(TRACE).unwrap();
        let n = input["traceEvents"].as_array().unwrap().len();
        assert_eq!(doc["traceEvents"].as_array().unwrap()[..n], input["traceEvents"].as_array().unwrap()[..]);
        assert_eq!(doc["traceName"], "t.json");
        let new = added(&doc, n);
        let x: Vec<&Value> = new.iter().filter(|e| e["ph"] == "X").collect();
        let names: Vec<&str> = x.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["gap 184.8 µs", "launch 0", "launch 1", "replay 0", "replay 1"]);
        // Hand-computed: the gap is [1015.5, 1200.25); replay 1's GPU span is [1200.25, 1220.25).
        assert_eq!(x[0]["ts"].to_string(), "1015.500");
        assert_eq!(x[0]["dur"].to_string(), "184.750");
        assert_eq!(x[2]["ts"].to_string(), "1100.000");
        assert_eq!(x[2]["dur"].to_string(), "7.125");
        assert_eq!(x[4]["ts"].to_string(), "1200.250");
        assert_eq!(x[4]["dur"].to_string(), "20.000");
        assert_eq!(x[3]["args"]["kernels"], 2);
        for e in &new {
            assert_eq!(e["pid"], PID);
        }
        // Each track is named.
        let named: Vec<&str> = new
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(named, ["GPU 0: gaps > 100 µs", "graph launches (host call)", "graph replays on GPU"]);
    }

    #[test]
    fn gzip_output_and_a_bare_array() {
        let input: Value = serde_json::from_str(TRACE).unwrap();
        let bare = serde_json::to_string(&input["traceEvents"]).unwrap();
        let (out, _) = annotate(&bare, true);
        assert_eq!(&out[..2], &[0x1f, 0x8b], "gzip magic");
        let doc: Value = serde_json::from_reader(flate2::read::GzDecoder::new(&out[..])).unwrap();
        let events = doc.as_array().expect("still a bare array");
        assert!(events.len() > 6);
        assert_eq!(events[..6], input["traceEvents"].as_array().unwrap()[..]);
    }

    #[test]
    fn a_truncated_trace_gives_a_valid_copy_of_its_complete_events() {
        // Cut inside the fifth event, as a crashed profiler leaves it.
        let cut = &TRACE[..TRACE.find(r#""ts": 1200.250"#).unwrap()];
        let (out, _) = annotate(cut, false);
        let doc: Value = serde_json::from_slice(&out).expect("the copy is closed and valid");
        let events = doc["traceEvents"].as_array().unwrap();
        let input: Value = serde_json::from_str(TRACE).unwrap();
        assert_eq!(events[..4], input["traceEvents"].as_array().unwrap()[..4]);
        assert!(events[4..].iter().all(|e| e["pid"] == PID));
    }

    #[test]
    fn lanes_never_overlap() {
        let spans = [(0, 10), (5, 15), (10, 20), (12, 14), (20, 30)];
        assert_eq!(lanes(spans.into_iter()), vec![0, 1, 0, 2, 0]);
    }
}
