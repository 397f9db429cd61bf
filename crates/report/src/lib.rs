//! Renderers of launchguard results. Each format is one small module behind [`Export`], fed the
//! same [`View`], as hyperfine does for its exports.

pub mod annotate;
pub mod atomic;
mod charts;
pub mod compare;
pub mod csv_tables;
pub mod document;
pub mod escape;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod names;
mod ranks_table;
pub mod ranks_terminal;
pub mod terminal;
mod timeline_svg;

use launchguard_analysis::Analysis;
use launchguard_judge::RanksReport;
use launchguard_judge::{Check, Verdict};
use launchguard_trace::{Timeline, Trace};

pub use atomic::{write_atomic, write_atomic_with};
pub use document::Document;

/// One phase of a `check` run (profiler off before, on, off after): its samples and summary.
#[derive(Debug, Clone, Copy)]
pub struct PhaseSamples<'a> {
    /// Phase label ("before", "profiled", "after").
    pub label: &'a str,
    /// The samples and their summary, as measured.
    pub report: &'a launchguard_analysis::context::PhaseReport,
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
    pub document: &'a Document,
    /// The ranks of a distributed run analysed together (`analyze` on several traces, `check
    /// --tp N`); `None` for one trace. Set with [`View::with_ranks`].
    pub ranks: Option<RanksView<'a>>,
}

/// The cross-rank part of a view: the ranks analysed together, and which rank the single-trace
/// part of the view (`analysis`, `timeline`) belongs to, so that reports can say so.
#[derive(Debug, Clone, Copy)]
pub struct RanksView<'a> {
    /// The multi-rank analysis (`launchguard.analysis-ranks/1`).
    pub analysis: &'a RanksReport,
    /// The rank whose trace `View::analysis` and `View::timeline` are: the worst rank for
    /// `analyze`, rank 0 for `check`.
    pub detail_rank: u64,
    /// Every rank's trace, in any order (each found by its path), for the formats that draw or
    /// copy every rank (the HTML timelines, the annotated copies, the gaps CSV); empty when the
    /// caller has none. Set with [`View::with_rank_traces`].
    pub traces: &'a [&'a Trace],
}

impl<'a> RanksView<'a> {
    /// The trace of `rank`, when the view has it.
    pub fn trace_of(&self, rank: u64) -> Option<&'a Trace> {
        let path = &self.analysis.ranks.iter().find(|k| k.rank == rank)?.analysis.figures.source.path;
        self.traces.iter().copied().find(|t| t.source.path.display().to_string() == *path)
    }

    /// The records of `rank`'s trace, when the view has them.
    pub fn timeline_of(&self, rank: u64) -> Option<&'a Timeline> {
        self.trace_of(rank).map(|t| &t.timeline)
    }
}

impl<'a> View<'a> {
    /// The view of a trace analysis (`analyze`), judged by `checks` with `verdict`: one rank's
    /// own checks, or those across ranks.
    pub fn of_analysis(
        analysis: &'a Analysis,
        timeline: &'a Timeline,
        checks: &'a [Check],
        verdict: Verdict,
        document: &'a Document,
    ) -> Self {
        View {
            command: "analyze",
            verdict,
            reason: None,
            checks,
            analysis: Some(analysis),
            timeline: Some(timeline),
            phases: &[],
            document,
            ranks: None,
        }
    }

    /// The same view with the reason its verdict is `skip`.
    pub fn with_reason(self, reason: Option<&'a str>) -> Self {
        View { reason, ..self }
    }

    /// The same view with the cross-rank analysis `ranks`; `detail_rank` is the rank whose trace
    /// the view's single-trace analysis and timeline are.
    pub fn with_ranks(self, ranks: &'a RanksReport, detail_rank: u64) -> Self {
        View { ranks: Some(RanksView { analysis: ranks, detail_rank, traces: &[] }), ..self }
    }

    /// The same view with every rank's trace (after [`View::with_ranks`]; no effect before).
    pub fn with_rank_traces(self, traces: &'a [&'a Trace]) -> Self {
        View { ranks: self.ranks.map(|r| RanksView { traces, ..r }), ..self }
    }
}

/// One output format.
pub trait Export {
    /// Renders the view into the bytes of a file (or of standard output).
    fn render(&self, view: &View<'_>) -> anyhow::Result<Vec<u8>>;

    /// Streams the rendering into `out`. Formats whose output can be as large as the trace (the
    /// annotated copy) override this so that nothing trace-sized is held in memory.
    fn write_to(&self, view: &View<'_>, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
        out.write_all(&self.render(view)?)?;
        Ok(())
    }
}

/// A check's value or limit as short text: numbers with at most three decimals (integers
/// without), strings as they are, "–" for none.
pub fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "–".to_string(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
            Some(x) => {
                let s = format!("{x:.3}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
            None => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::value_text;
    use serde_json::json;

    #[test]
    fn values_read_short() {
        assert_eq!(value_text(&json!(4400.0)), "4400");
        assert_eq!(value_text(&json!(0.7059312777765716)), "0.706");
        assert_eq!(value_text(&json!(43.436040000000006)), "43.436");
        assert_eq!(value_text(&json!(0.8)), "0.8");
        assert_eq!(value_text(&json!(null)), "–");
        assert_eq!(value_text(&json!("cupti")), "cupti");
    }
}
