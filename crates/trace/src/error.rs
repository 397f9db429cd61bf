//! Why a trace could not be read.

use std::path::PathBuf;

/// A trace that cannot be used at all. A truncated file is not an error: its complete events are
/// analyzed and [`crate::Trace::truncated`] says why it ended.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The path does not exist.
    #[error("{0}: no such file")]
    NotFound(PathBuf),
    /// The path is a directory.
    #[error("{0}: is a directory, not a trace file")]
    IsDirectory(PathBuf),
    /// The file is empty.
    #[error("{0}: empty file")]
    Empty(PathBuf),
    /// Reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The gzip stream is damaged before any event could be read.
    #[error("{path}: corrupt gzip data: {detail}")]
    Gzip {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        detail: String,
    },
    /// Not JSON, or JSON that fails before the first event.
    #[error("{path}: not a JSON trace: {detail}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// Valid JSON that is neither an object with `traceEvents` nor an array of events.
    #[error("{path}: not a Kineto/Chrome trace: {detail}")]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// A trace with no events at all.
    #[error("{0}: the trace holds no events")]
    NoEvents(PathBuf),
    /// Events were read, but every one of them was skipped.
    #[error("{path}: no usable event: all {events} event(s) were skipped ({detail})")]
    NothingUsable {
        /// The file.
        path: PathBuf,
        /// Events read.
        events: u64,
        /// Skips by reason.
        detail: String,
    },
    /// The JSON is broken in the middle (not cut short): what follows cannot be read, so an
    /// analysis of the events before it would silently drop the rest.
    #[error("{path}: invalid JSON after {events} complete event(s): {detail}")]
    InvalidJson {
        /// The file.
        path: PathBuf,
        /// Events read before the damage.
        events: u64,
        /// What the parser said, with the line and column.
        detail: String,
    },
    /// Writing a copy of the trace failed.
    #[error("writing a copy of {path}: {source}")]
    Write {
        /// The trace being copied.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The gzip data expands far more than any trace does.
    #[error("{0}: gzip data expands more than {ratio}× its compressed size: refusing a gzip bomb", ratio = crate::input::MAX_GZIP_RATIO)]
    GzipBomb(PathBuf),
}
