//! Renderers of launchguard results. Each format is one small module behind [`Export`], fed the
//! same [`View`], as hyperfine does for its exports.

pub mod atomic;
pub mod json;
pub mod terminal;

use launchguard_analysis::{Analysis, Check, Verdict};
use launchguard_trace::Timeline;

pub use atomic::write_atomic;

/// Per-replay host samples of one phase of a `check` run (profiler off before, on, off after).
#[derive(Debug, Clone, Copy)]
pub struct PhaseSamples<'a> {
    /// Phase label ("before", "profiled", "after").
    pub label: &'a str,
    /// Host cost of each replay, µs.
    pub host_us: &'a [f64],
    /// GPU time per replay, µs, when measured.
    pub gpu_us_per_replay: Option<f64>,
}

/// Everything a renderer may show. `analyze` fills the analysis; `check` adds its phases.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// "analyze" or "check".
    pub command: &'a str,
    /// The overall outcome.
    pub verdict: Verdict,
    /// Why the verdict is `skip`, when it is.
    pub reason: Option<&'a str>,
    /// All checks, in report order.
    pub checks: &'a [Check],
    /// The trace analysis, when there is a trace.
    pub analysis: Option<&'a Analysis>,
    /// The trace's records, for timelines and annotated copies.
    pub timeline: Option<&'a Timeline>,
    /// Host samples per phase (check only).
    pub phases: &'a [PhaseSamples<'a>],
    /// The JSON document of the result (analysis/1 or check/1), for formats that embed it.
    pub document: &'a serde_json::Value,
}

/// One output format.
pub trait Export {
    /// Renders the view into the bytes of a file (or of standard output).
    fn render(&self, view: &View<'_>) -> anyhow::Result<Vec<u8>>;
}
