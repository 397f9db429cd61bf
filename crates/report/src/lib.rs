//! Renderers of launchguard results. Every document kind ([`Doc`]) meets every format ([`Kind`])
//! in [`render()`], one exhaustive match; each format is one small module. A run (`analyze`,
//! `check`) is rendered from one [`View`]; text from an input is escaped for a terminal in one
//! place ([`escape`]).

pub mod annotate;
mod charts;
pub mod compare;
mod csv_tables;
pub mod document;
pub mod error;
pub mod escape;
pub mod fit;
mod html;
mod junit;
mod linkage_terminal;
mod markdown;
pub mod names;
mod ranks_table;
mod ranks_terminal;
mod render;
mod selftest_terminal;
pub mod terminal;
mod timeline_svg;

use launchguard_analysis::spans::{Findings, RanksSpans};
use launchguard_analysis::Analysis;
use launchguard_judge::RanksReport;
use launchguard_judge::{Check, Verdict};

pub use document::Document;
pub use error::ReportError;
pub use render::{render, render_fitted, Doc, Kind, Rendered};

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
    /// The spans the analysis measured, for timelines, the gaps table and annotated copies;
    /// `None` when no drawing format was asked for.
    pub findings: Option<&'a Findings>,
    /// Host samples per phase (check only).
    pub phases: &'a [PhaseSamples<'a>],
    /// The JSON document of the result (analysis/1 or check/1), for formats that embed it.
    pub document: &'a Document,
    /// The ranks of a distributed run analysed together (`analyze` on several traces, `check
    /// --tp N`); `None` for one trace. Set with [`View::with_ranks`].
    pub ranks: Option<RanksView<'a>>,
}

/// The cross-rank part of a view: the ranks analysed together, and which rank the single-trace
/// part of the view (`analysis`, `findings`) belongs to, so that reports can say so.
#[derive(Debug, Clone, Copy)]
pub struct RanksView<'a> {
    /// The multi-rank analysis (`launchguard.analysis-ranks/1`).
    pub analysis: &'a RanksReport,
    /// The rank whose trace `View::analysis` and `View::findings` are: the worst rank for
    /// `analyze`, rank 0 for `check`.
    pub detail_rank: u64,
    /// Every rank's spans, for the formats that draw every rank (the HTML timelines, the
    /// annotated copies, the gaps CSV); `None` when none was asked for. Set with
    /// [`View::with_rank_spans`].
    pub drawn: Option<RanksDrawn<'a>>,
}

/// Every rank's measured spans.
#[derive(Debug, Clone, Copy)]
pub struct RanksDrawn<'a> {
    /// Each rank's own spans, `(rank, spans)`.
    pub ranks: &'a [(u64, Findings)],
    /// The ranks on one clock.
    pub across: &'a RanksSpans,
}

impl<'a> RanksView<'a> {
    /// The spans of `rank`, when the view has them.
    pub fn findings_of(&self, rank: u64) -> Option<&'a Findings> {
        self.drawn?.ranks.iter().find(|(r, _)| *r == rank).map(|(_, f)| f)
    }
}

impl<'a> View<'a> {
    /// The view of a trace analysis (`analyze`), judged by `checks` with `verdict`: one rank's
    /// own checks, or those across ranks.
    pub fn of_analysis(
        analysis: &'a Analysis,
        findings: Option<&'a Findings>,
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
            findings,
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
        View { ranks: Some(RanksView { analysis: ranks, detail_rank, drawn: None }), ..self }
    }

    /// The same view with every rank's spans (after [`View::with_ranks`]; no effect before).
    pub fn with_rank_spans(self, drawn: Option<RanksDrawn<'a>>) -> Self {
        View { ranks: self.ranks.map(|r| RanksView { drawn, ..r }), ..self }
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
