//! Why a trace could not be read.

use std::path::PathBuf;

/// A trace that cannot be used at all. Partial damage (a truncated file) is not an error: it is
/// reported in [`crate::ReadOutcome`].
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
}
