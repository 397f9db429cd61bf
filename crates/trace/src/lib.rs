//! Reads Kineto / Chrome traces exported by `torch.profiler` (CUDA and ROCm) into a compact
//! [`Timeline`]: GPU activities, graph launches and `record_function` spans, with times as exact
//! integer nanoseconds.
//!
//! - Plain or gzip input, told apart by magic bytes; multi-member gzip; gzip bombs refused.
//! - An object with `traceEvents` (other keys before or after it) or a bare array of events.
//! - Streaming: no DOM of the file is ever built; only the records the analysis needs are kept.
//! - A truncated file (a crashed process) yields the complete events read, marked truncated.
//!
//! ```no_run
//! let trace = launchguard_trace::read(std::path::Path::new("trace.json.gz")).unwrap();
//! println!("{} GPU activities", trace.timeline.activities.len());
//! ```

mod candidates;
pub mod error;
pub mod event;
mod fast;
pub mod input;
mod simple;
pub mod splice;
pub mod time;
pub mod timeline;

use std::io::BufReader;
use std::path::Path;

pub use error::TraceError;
pub use input::SourceInfo;
pub use timeline::*;

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
    /// Candidate (issue 19): sonic-rs's serde deserializer over parts of the events array, raw
    /// number text kept; measured against `Fast` in docs/benchmarks.md.
    Sonic,
    /// Candidate (issue 19): simd-json's serde deserializer (tape) over parts of the events array;
    /// numbers through `f64`, so timestamps past 15–17 digits are not exact.
    SimdJson,
}

/// Reads a trace with the default parser.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    read_with(path, Parser::default())
}

/// Reads a trace with a chosen parser.
pub fn read_with(path: &Path, parser: Parser) -> Result<Trace, TraceError> {
    let (input, source) = input::open(path)?;
    let mut builder = event::TimelineBuilder::new();
    let result = match (parser, input) {
        (Parser::Simple, input::Input::Plain(map)) => {
            let mut de = serde_json::Deserializer::from_slice(&map);
            simple::parse(&mut de, &mut builder)
        }
        (Parser::Simple, input::Input::Gzip(reader)) => {
            let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, reader));
            simple::parse(&mut de, &mut builder)
        }
        (Parser::Fast, input::Input::Plain(map)) => fast::parse_mapped(&map, &mut builder),
        (Parser::Fast, input::Input::Gzip(reader)) => fast::parse_gzip(reader, path, &mut builder),
        (Parser::Sonic | Parser::SimdJson, input) => {
            let krate = match parser {
                Parser::Sonic => candidates::Crate::Sonic,
                _ => candidates::Crate::SimdJson,
            };
            match input {
                input::Input::Plain(map) => candidates::parse_mapped(krate, &map, &mut builder),
                input::Input::Gzip(reader) => candidates::parse_gzip(krate, reader, path, &mut builder),
            }
        }
    };
    finish(builder, source, result)
}

fn finish(
    builder: event::TimelineBuilder,
    source: SourceInfo,
    result: Result<bool, serde_json::Error>,
) -> Result<Trace, TraceError> {
    let path = source.path.clone();
    let truncated = match result {
        Ok(true) => None,
        Ok(false) => {
            return Err(TraceError::NotATrace { path, detail: "a JSON object without traceEvents".into() })
        }
        Err(e) if builder.events() == 0 => return Err(classify_fatal(path, &source, e)),
        Err(e) => Some(describe_stop(path.clone(), &source, &e, builder.events())?),
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
    Ok(Trace { timeline, source, truncated })
}

/// Why reading stopped after some events: a file cut short is a truncation (its complete events are
/// analyzed); damage in the middle is an error, since the events after it would be lost unseen.
fn describe_stop(
    path: std::path::PathBuf,
    source: &SourceInfo,
    e: &serde_json::Error,
    events: u64,
) -> Result<String, TraceError> {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => Ok(format!("the file ends in the middle of the JSON ({e})")),
        Category::Io if e.io_error_kind() == Some(std::io::ErrorKind::UnexpectedEof) => {
            Ok(format!("the gzip stream ends early ({e})"))
        }
        Category::Io => Err(io_error(path, source, e)),
        Category::Syntax | Category::Data => {
            Err(TraceError::InvalidJson { path, events, detail: e.to_string() })
        }
    }
}

/// A read error of the decompressor: a gzip bomb, or corrupt data.
fn io_error(path: std::path::PathBuf, source: &SourceInfo, e: &serde_json::Error) -> TraceError {
    let detail = e.to_string();
    if detail.starts_with(input::GZIP_BOMB) {
        TraceError::GzipBomb(path)
    } else if source.gzip {
        TraceError::Gzip { path, detail }
    } else {
        TraceError::NotJson { path, detail }
    }
}

fn classify_fatal(path: std::path::PathBuf, source: &SourceInfo, e: serde_json::Error) -> TraceError {
    use serde_json::error::Category;
    let detail = e.to_string();
    match e.classify() {
        Category::Io => io_error(path, source, &e),
        Category::Data => TraceError::NotATrace { path, detail: shape_detail(&detail) },
        _ => TraceError::NotJson { path, detail },
    }
}

fn shape_detail(detail: &str) -> String {
    if detail.starts_with("invalid type") {
        format!("expected an object with traceEvents or an array of events; {detail}")
    } else {
        detail.to_string()
    }
}
