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
    /// Reading failed. (The cause is in the message, not a `source`: the CLI prints an error's
    /// chain, and the operating system's words would come twice.)
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// Not a regular file (a FIFO would block, a device read without end), or not opened.
    #[error("{path}: {error}{hint}", hint = if matches!(error, launchguard_files::InputError::NotRegular("a FIFO")) { " (a trace on a pipe is read from standard input: -)" } else { "" })]
    Input {
        /// The file.
        path: PathBuf,
        /// What it is instead, or the operating system's error.
        error: launchguard_files::InputError,
    },
    /// Standard input is a terminal: nothing would come.
    #[error("standard input is a terminal: pipe a trace into `-` (launchguard analyze - < trace.json)")]
    Terminal,
    /// Compressed or encoded in a way the reader does not read (zstd, UTF-16, ...).
    #[error("{path}: {what}")]
    Encoding {
        /// The file.
        path: PathBuf,
        /// What it is, and how to make it readable.
        what: String,
    },
    /// One of the caps on what one trace may cost was reached.
    #[error("{path}: {what} ({flag} or [input] {key} raises the cap)", flag = cap.flag(), key = cap.key())]
    Cap {
        /// The file.
        path: PathBuf,
        /// Which cap.
        cap: crate::limits::Cap,
        /// What went past it.
        what: String,
    },
    /// Memory for the records ran out before any cap was reached.
    #[error("{path}: out of memory after {events} events: the trace is larger than this machine can hold ({flag} bounds what is read)", flag = crate::limits::Cap::Events.flag())]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// Events read.
        events: u64,
    },
    /// Something after the JSON document: a second trace, or garbage.
    #[error("{path}: {detail}")]
    Trailing {
        /// The file.
        path: PathBuf,
        /// What and where.
        detail: String,
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
    #[error("writing a copy of {path}: {error}")]
    Write {
        /// The trace being copied.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// An SQLite database (rocpd, Nsight Systems) that cannot be read, or lacks what its format
    /// needs.
    #[error("{path}: {detail}")]
    Database {
        /// The file.
        path: PathBuf,
        /// What SQLite said, or what is missing.
        detail: String,
    },
    /// A rocprofv3 JSON file that cannot be read.
    #[error("{path}: not a readable rocprofv3 JSON file: {detail}")]
    Rocprofv3 {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// The gzip data expands far more than any trace does.
    #[error("{0}: gzip data expands more than {ratio}× its compressed size: refusing a gzip bomb", ratio = crate::input::MAX_GZIP_RATIO)]
    GzipBomb(PathBuf),
}
