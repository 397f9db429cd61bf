//! Why a report could not be rendered.

/// Why a report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Writing the output.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Serializing a document.
    #[error("cannot serialize the document: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing a CSV table.
    #[error("cannot write a CSV table: {0}")]
    Csv(#[from] csv::Error),
    /// Writing JUnit XML.
    #[error("cannot write JUnit XML: {0}")]
    Junit(#[from] quick_junit::SerializeError),
    /// Copying a trace for the annotated copy.
    #[error(transparent)]
    Trace(#[from] launchguard_trace::TraceError),
    /// A format asked of a document that has no such rendering (`linkage --html`).
    #[error("{doc} has no {kind} report")]
    Unsupported {
        /// The format.
        kind: &'static str,
        /// The document.
        doc: &'static str,
    },
    /// What the rendering needs is not at hand (a trace's spans for its annotated copy).
    #[error("{0}")]
    Missing(&'static str),
}

impl<W> From<csv::IntoInnerError<W>> for ReportError {
    fn from(e: csv::IntoInnerError<W>) -> Self {
        ReportError::Io(std::io::Error::other(e.error().to_string()))
    }
}

/// A rendering's result.
pub type Result<T> = std::result::Result<T, ReportError>;
