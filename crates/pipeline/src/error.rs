//! Why a run could not be judged.

/// Why a run could not be read, measured or judged. Each says what to do in one line.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// No trace named.
    #[error("no trace to read")]
    NoInput,
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] launchguard_trace::TraceError),
    /// A trace could not be measured as asked.
    #[error(transparent)]
    Analyze(#[from] launchguard_analysis::analyze::AnalyzeError),
    /// The ranks could not be told apart or put together.
    #[error(transparent)]
    Ranks(#[from] launchguard_analysis::ranks::RanksError),
    /// The `--within` pattern.
    #[error("--within is not a valid regular expression")]
    Pattern(#[from] regex::Error),
    /// A trace without GPU activity.
    #[error(
        "{path}: no GPU activity in the trace ({events} events read): the profiler recorded no kernels, copies or fills; \
         profile with GPU activities (torch.profiler activities=[CPU, CUDA])"
    )]
    NoGpuActivity {
        /// The trace.
        path: String,
        /// Events read.
        events: u64,
    },
    /// One rank's trace is unusable.
    #[error("rank {rank}")]
    Rank {
        /// The rank.
        rank: u64,
        /// Why.
        #[source]
        source: Box<PipelineError>,
    },
    /// `--within` with several ranks.
    #[error("--within works on one trace only for now: the cross-rank figures cover whole traces")]
    WithinRanks,
    /// Standard input among several ranks.
    #[error("standard input (-) can be one trace only: name the ranks' files or their folder")]
    StdinRanks,
    /// A folder could not be listed, or holds no trace.
    #[error("{path}: {why}")]
    Folder {
        /// The folder.
        path: String,
        /// Why.
        why: String,
    },
}
