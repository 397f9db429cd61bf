//! Formats besides Kineto, told apart by content (never by file name), each read into the one
//! [`Timeline`](crate::Timeline) through the event rules of [`crate::event`]:
//!
//! | format | recognised by | reader |
//! |---|---|---|
//! | rocprofv3 JSON (`*_results.json`, plain or gzip) | a top-level object whose first key is `rocprofiler-sdk-tool` | [`rocprofv3`] |
//! | rocpd (rocprofv3's default since ROCm 7.0, `*.db`) | SQLite holding a `rocpd_kernel_dispatch*` table | [`rocpd`] |
//! | Nsight Systems SQLite (`nsys export --type sqlite`) | SQLite holding `CUPTI_ACTIVITY_KIND_*` tables and `StringIds` | [`nsys`] |
//!
//! Every other file is read as Kineto.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use crate::error::TraceError;
use crate::event::{RawEvent, Scalar, TimelineBuilder};
use crate::input::{self, SourceInfo};
use crate::limits::Limits;
use crate::Trace;

pub mod nsys;
pub mod rocpd;
pub mod rocprofv3;
pub mod sqlite;

/// What a file holds, judged by its first bytes (and, for SQLite, its table names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Kineto / Chrome trace, or anything else (the Kineto reader names what is wrong with it).
    Kineto,
    /// rocprofv3's JSON output.
    Rocprofv3Json,
    /// An SQLite database: rocpd or Nsight Systems, told apart once it is open.
    Sqlite,
}

/// SQLite's 16-byte file header.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The format of the file at `path` (standard input is always Kineto: it cannot be read twice).
pub fn detect(path: &Path, limits: &Limits) -> Result<Format, TraceError> {
    if path.as_os_str() == input::STDIN {
        return Ok(Format::Kineto);
    }
    let Ok((file, _)) = launchguard_files::open_regular(path) else {
        // The Kineto reader opens it again and names the problem.
        return Ok(Format::Kineto);
    };
    let mut head = [0u8; 16];
    let mut got = 0;
    let mut file = file;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return Ok(Format::Kineto),
        }
    }
    if &head[..got] == SQLITE_MAGIC {
        return Ok(Format::Sqlite);
    }
    // The text's first bytes (inflated when gzip) decide between the two JSON formats.
    let opened = input::open_with(path, limits)?;
    let text: Vec<u8> = match opened.input {
        input::Input::Plain(map) => map[..map.len().min(4096)].to_vec(),
        input::Input::Stream(reader) => {
            let mut buf = Vec::with_capacity(4096);
            // An error here (a damaged gzip stream) is the Kineto reader's to report.
            let _ = reader.take(4096).read_to_end(&mut buf);
            buf
        }
    };
    Ok(if rocprofv3::is_rocprofv3(&text) { Format::Rocprofv3Json } else { Format::Kineto })
}

/// Reads a file of a format other than Kineto (`Format::Kineto` is read by [`crate::read_limited`]).
pub fn read(path: &Path, format: Format, limits: &Limits) -> Result<Trace, TraceError> {
    match format {
        Format::Kineto => unreachable!("Kineto traces are read by the JSON readers"),
        Format::Rocprofv3Json => rocprofv3::read(path, limits),
        Format::Sqlite => {
            let db = sqlite::Database::open(path)?;
            match sqlite::kind(&db)? {
                sqlite::Kind::Rocpd => rocpd::read(&db, limits),
                sqlite::Kind::Nsys => nsys::read(&db, limits),
            }
        }
    }
}

/// One record of another format, as the shared event rules take it: times in nanoseconds, labels
/// as text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    /// Kineto's category for it: `kernel`, `gpu_memcpy`, `gpu_memset`, `user_annotation`, or a
    /// runtime's (`cuda_runtime`), whose graph launches are kept.
    pub cat: &'a str,
    /// Kernel, copy, call or range name.
    pub name: &'a str,
    /// Device label (GPU activities).
    pub device: Option<&'a str>,
    /// Stream (or queue) label (GPU activities).
    pub stream: Option<&'a str>,
    /// Host thread label (calls, ranges).
    pub thread: Option<&'a str>,
    /// Start, nanoseconds.
    pub start: Option<i64>,
    /// End, nanoseconds.
    pub end: Option<i64>,
    /// Correlation id joining a launch to its GPU work.
    pub correlation: Option<u64>,
}

/// Hands `r` to the builder as the complete event Kineto would have written for it; `false` once
/// the builder stopped (a cap).
pub(crate) fn push(builder: &mut TimelineBuilder, r: &Record<'_>) -> bool {
    let micros = |ns: Option<i64>| ns.map_or(Scalar::Missing, |ns| Scalar::Micros(Cow::Borrowed(""), ns));
    let dur = match (r.start, r.end) {
        (Some(s), Some(e)) => Some(e.saturating_sub(s)),
        _ => None,
    };
    fn label(s: Option<&str>) -> Scalar<'_> {
        s.map_or(Scalar::Missing, |s| Scalar::Str(Cow::Borrowed(s)))
    }
    let corr = r.correlation.map(|c| c.to_string());
    let ev = RawEvent {
        ph: Some(Cow::Borrowed("X")),
        cat: Some(Cow::Borrowed(r.cat)),
        name: Some(Cow::Borrowed(r.name)),
        pid: label(r.device),
        tid: label(r.thread.or(r.stream)),
        ts: micros(r.start),
        dur: micros(dur),
        device: label(r.device),
        stream: label(r.stream),
        correlation: corr.as_deref().map_or(Scalar::Missing, |c| Scalar::Num(Cow::Borrowed(c))),
    };
    builder.push(&ev);
    builder.stopped().is_none()
}

/// The trace from a builder another format's reader filled: caps and emptiness as for Kineto.
pub(crate) fn finish(
    builder: TimelineBuilder,
    source: SourceInfo,
    limits: &Limits,
) -> Result<Trace, TraceError> {
    crate::refuse_stopped(&builder, &source, limits)?;
    let path = source.path.clone();
    let timeline = builder.finish();
    if timeline.events == 0 {
        return Err(TraceError::NoEvents(path));
    }
    if let Some(cap) = crate::spread::check(&timeline, limits) {
        return Err(TraceError::Cap { path, cap, what: cap.what(limits) });
    }
    Ok(Trace { timeline, source, truncated: None })
}
