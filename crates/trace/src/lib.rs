//! Reads Kineto / Chrome traces exported by `torch.profiler` (CUDA and ROCm) into a compact
//! [`Timeline`]: GPU activities, graph launches and `record_function` spans, with times as exact
//! integer nanoseconds.
//!
//! - Plain or gzip input, told apart by magic bytes; multi-member gzip; gzip bombs refused;
//!   standard input (`-`) streamed; other encodings (zstd, UTF-16, ...) named and refused.
//! - An object with `traceEvents` (other keys before or after it) or a bare array of events,
//!   and nothing after it (a second trace in the same file is an error, not dropped).
//! - Caps on what one trace may cost ([`Limits`]), each with its flag in the error.
//! - Streaming: no DOM of the file is ever built; only the records the analysis needs are kept.
//! - A truncated file (a crashed process) yields the complete events read, marked truncated.
//!
//! ```no_run
//! let trace = launchguard_trace::read(std::path::Path::new("trace.json.gz")).unwrap();
//! println!("{} GPU activities", trace.timeline.activities.len());
//! ```

#[cfg(feature = "candidates")]
mod candidates;
pub mod error;
pub mod event;
mod fast;
pub mod formats;
#[doc(hidden)]
pub mod fuzzing;

/// The text of the gzip bytes of `raw` as the parallel reader's decompressing thread reads it on 8
/// threads or more: each member inflated and its length checked, the first member's CRC-32 left
/// out (the parsing threads sum it). For `examples/inflate.rs`, the floor that thread works
/// against.
#[doc(hidden)]
pub fn gzip_first_crc_unchecked(raw: impl std::io::BufRead) -> impl std::io::Read {
    gunzip::Members::new(raw).0
}
mod gunzip;
pub mod input;
pub mod limits;
pub mod memory;
mod simple;
pub mod splice;
mod spread;
mod tail;
pub mod time;
pub mod timeline;

#[cfg(test)]
mod read_tests;

use std::io::{self, Read};
use std::path::Path;

pub use error::TraceError;
pub use input::SourceInfo;
pub use limits::{Cap, Limits};
pub use timeline::*;

use event::{Stopped, TimelineBuilder};
use tail::Stop;

/// A trace read from a file.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The records.
    pub timeline: Timeline,
    /// The file.
    pub source: SourceInfo,
    /// Why the file ended early, when it did; the events before that point were kept.
    pub truncated: Option<String>,
}

/// Which parser reads the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parser {
    /// serde_json, event by event: the reference.
    Simple,
    /// A byte scanner that reads only the keys the analysis needs, on all cores; agrees with
    /// `Simple` on every trace (tests/cli/parsers.rs), about ten times faster.
    #[default]
    Fast,
    /// Candidate (feature `candidates`): sonic-rs's serde deserializer over parts of the events
    /// array, raw number text kept; measured against `Fast` in docs/benchmarks.md.
    #[cfg(feature = "candidates")]
    Sonic,
    /// Candidate (feature `candidates`): simd-json's serde deserializer (tape) over parts of the
    /// events array; numbers through `f64`, so timestamps past 15–17 digits are not exact.
    #[cfg(feature = "candidates")]
    SimdJson,
}

/// Reads a trace with the default parser and caps.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    read_with(path, Parser::default())
}

/// Reads a trace with a chosen parser and the default caps.
pub fn read_with(path: &Path, parser: Parser) -> Result<Trace, TraceError> {
    read_limited(path, parser, &Limits::DEFAULT)
}

/// Reads a trace (`-`: standard input, streamed) with a chosen parser, within `limits`.
pub fn read_limited(path: &Path, parser: Parser, limits: &Limits) -> Result<Trace, TraceError> {
    // The memory budget is for what this read adds to the heap.
    let _side = memory::Side::start();
    match formats::detect(path, limits)? {
        formats::Format::Kineto => {}
        other => return formats::read(path, other, limits),
    }
    let opened = input::open_with(path, limits)?;
    let mut source = opened.source;
    let reopen = || -> io::Result<Box<dyn Read + Send>> {
        match input::open_with(path, limits) {
            Ok(input::Opened { input: input::Input::Stream(r), .. }) => Ok(r),
            Ok(_) => Err(io::Error::other("the file changed while it was read")),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    };
    let unchecked = || input::file_unchecked(path, limits);
    // Standard input cannot be read again.
    let reopen: fast::Reopen = match opened.stdin_bytes {
        Some(_) => None,
        None => Some(fast::Again { checked: &reopen, unchecked: &unchecked }),
    };
    let stdin = opened.stdin_bytes.is_some();
    let (builder, result, offset) = read_input(opened.input, parser, limits, fast::BLOCK, reopen, stdin);
    if let Some(read) = &opened.stdin_bytes {
        source.bytes = read.load(std::sync::atomic::Ordering::Relaxed);
    }
    finish(builder, source, result, offset, limits)
}

/// Parses an opened input with `parser`: what the builder holds, how the parse ended, and where
/// the JSON text starts in a mapped file (after a byte order mark). `stdin`: the input is
/// standard input, whose reading thread may never end.
fn read_input(
    input: input::Input,
    parser: Parser,
    limits: &Limits,
    block: usize,
    reopen: fast::Reopen,
    stdin: bool,
) -> (TimelineBuilder, tail::Outcome, u64) {
    let mut builder = TimelineBuilder::with_limits(*limits);
    let mut offset = 0;
    let result = match (parser, input) {
        (Parser::Simple, input::Input::Plain(text)) => {
            offset = text.start() as u64;
            tail::simple_slice(&text, &mut builder)
        }
        (Parser::Simple, input::Input::Stream(reader)) => tail::simple_stream(reader, &mut builder),
        (Parser::Fast, input::Input::Plain(text)) => {
            offset = text.start() as u64;
            fast::parse_mapped(&text, &mut builder)
        }
        (Parser::Fast, input::Input::Stream(reader)) => {
            fast::parse_stream(reader, block, reopen, stdin, &mut builder)
        }
        #[cfg(feature = "candidates")]
        (Parser::Sonic | Parser::SimdJson, input) => {
            let krate = match parser {
                Parser::Sonic => candidates::Crate::Sonic,
                _ => candidates::Crate::SimdJson,
            };
            match input {
                input::Input::Plain(text) => {
                    offset = text.start() as u64;
                    candidates::parse_mapped(krate, &text, &mut builder)
                }
                input::Input::Stream(reader) => candidates::parse_stream(krate, reader, reopen, &mut builder),
            }
        }
    };
    (builder, result, offset)
}

/// The error of a reader stopped at a cap or out of memory: what it read is not the trace.
pub(crate) fn refuse_stopped(
    builder: &TimelineBuilder,
    source: &SourceInfo,
    limits: &Limits,
) -> Result<(), TraceError> {
    let path = source.path.clone();
    match builder.stopped() {
        Some(Stopped::Cap(cap)) => Err(TraceError::Cap { path, cap, what: cap.what(limits) }),
        Some(Stopped::Memory) => Err(TraceError::OutOfMemory { path, events: builder.events() }),
        None => Ok(()),
    }
}

/// The trace from what the parser left in `builder` and how it ended.
fn finish(
    builder: TimelineBuilder,
    source: SourceInfo,
    result: tail::Outcome,
    offset: u64,
    limits: &Limits,
) -> Result<Trace, TraceError> {
    // First: a parser stopped at a cap may have ended in any state.
    refuse_stopped(&builder, &source, limits)?;
    let path = source.path.clone();
    let truncated = match result {
        Ok(true) => None,
        Ok(false) => {
            return Err(TraceError::NotATrace { path, detail: "a JSON object without traceEvents".into() })
        }
        Err(Stop::Trailing(mut t)) => {
            t.at += offset;
            return Err(TraceError::Trailing { path, detail: t.describe(source.gzip) });
        }
        // The document is whole, but the gzip data after it is cut or followed by a few stray
        // bytes (flate2 cannot tell which): the last member's CRC32 was not checked, so what was
        // read is not known to be what was written. An error, as a failed check is.
        Err(Stop::After(e)) if source.gzip && e.kind() == io::ErrorKind::UnexpectedEof => {
            return Err(TraceError::Gzip {
                path,
                detail: "the gzip data ends inside a member's header or trailer (a cut file, or stray bytes after the last member): its CRC32 could not be checked".into(),
            })
        }
        // A failed check (CRC32, length), garbage after the last member, a cap: errors too,
        // since a trace whose bytes are not known to be right cannot be judged.
        Err(Stop::After(e)) => return Err(input::stream_error(&path, e, source.gzip, limits)),
        Err(Stop::Json(e)) if builder.events() == 0 => return Err(classify_fatal(path, &source, e, limits)),
        Err(Stop::Json(e)) => Some(describe_stop(path.clone(), &source, e, builder.events(), limits)?),
    };
    let timeline = builder.finish();
    if timeline.events == 0 {
        return Err(TraceError::NoEvents(path));
    }
    let s = timeline.skipped;
    if s.total() == timeline.events {
        let detail = format!(
            "{} without a usable ts, {} with a missing or negative dur, {} not objects",
            s.missing_ts, s.bad_dur, s.not_an_object
        );
        return Err(TraceError::NothingUsable { path, events: timeline.events, detail });
    }
    if let Some(cap) = spread::check(&timeline, limits) {
        return Err(TraceError::Cap { path, cap, what: cap.what(limits) });
    }
    Ok(Trace { timeline, source, truncated })
}

/// Why reading stopped after some events: a file cut short is a truncation (its complete events are
/// analyzed); damage in the middle is an error, since the events after it would be lost unseen.
fn describe_stop(
    path: std::path::PathBuf,
    source: &SourceInfo,
    e: serde_json::Error,
    events: u64,
    limits: &Limits,
) -> Result<String, TraceError> {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => Ok(format!("the file ends in the middle of the JSON ({e})")),
        Category::Io if e.io_error_kind() == Some(io::ErrorKind::UnexpectedEof) => {
            Ok(format!("the gzip stream ends early ({e})"))
        }
        Category::Io => Err(input::stream_error(&path, io::Error::from(e), source.gzip, limits)),
        Category::Syntax | Category::Data => {
            Err(TraceError::InvalidJson { path, events, detail: e.to_string() })
        }
    }
}

fn classify_fatal(
    path: std::path::PathBuf,
    source: &SourceInfo,
    e: serde_json::Error,
    limits: &Limits,
) -> TraceError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Io => input::stream_error(&path, io::Error::from(e), source.gzip, limits),
        Category::Data => TraceError::NotATrace { path, detail: shape_detail(&e.to_string()) },
        _ => TraceError::NotJson { path, detail: e.to_string() },
    }
}

fn shape_detail(detail: &str) -> String {
    if detail.starts_with("invalid type") {
        format!("expected an object with traceEvents or an array of events; {detail}")
    } else {
        detail.to_string()
    }
}
