//! The one switch from a document and a format to bytes. Every document kind launchguard writes
//! ([`Doc`]) meets every format ([`Kind`]) in [`render`]'s one exhaustive match: a new format or
//! a new document is a compile error here until each pairing is decided.

use launchguard_check::selftest::SelftestReport;
use launchguard_judge::compare::Comparison;
use launchguard_linkage::LinkageReport;

use crate::error::{ReportError, Result};
use crate::{
    compare, csv_tables, html, junit, linkage_terminal, markdown, ranks_terminal, selftest_terminal,
};
use crate::{terminal, View};

/// A document to render.
#[derive(Clone, Copy)]
pub enum Doc<'a> {
    /// `analyze` or `check`: one trace or the ranks of a run, judged
    /// (`launchguard.analysis/1`, `launchguard.analysis-ranks/1`, `launchguard.check/1`).
    Run(&'a View<'a>),
    /// `compare` (`launchguard.compare/1`), with the traces to draw when it compared traces: one
    /// baseline–current pair per rank, the ranks of a regression first.
    Compare(&'a Comparison, Option<&'a [[compare::html::TraceSide<'a>; 2]]>),
    /// `linkage` (`launchguard.linkage/1`), with what its policy forbids.
    Linkage(&'a LinkageReport, &'a [String]),
    /// `selftest` (`launchguard.selftest/1`).
    Selftest(&'a SelftestReport),
}

impl Doc<'_> {
    fn name(&self) -> &'static str {
        match self {
            Doc::Run(_) => "this command",
            Doc::Compare(..) => "compare",
            Doc::Linkage(..) => "linkage",
            Doc::Selftest(_) => "selftest",
        }
    }
}

/// Every output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The readable report (no colour codes: the caller paints it for a terminal).
    Text,
    /// The JSON document, pretty-printed.
    Json,
    /// JUnit XML, one testcase per check.
    Junit,
    /// A Markdown summary.
    Markdown,
    /// One self-contained HTML page.
    Html,
    /// CSV tables with a header row, for a folder.
    Csv,
}

impl Kind {
    /// The format's name, as its flag says it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Json => "JSON",
            Kind::Junit => "JUnit",
            Kind::Markdown => "Markdown",
            Kind::Html => "HTML",
            Kind::Csv => "CSV",
        }
    }
}

/// A rendering: one file's bytes, or named tables for a folder.
#[derive(Debug)]
pub enum Rendered {
    /// The bytes of one file (or of standard output).
    Bytes(Vec<u8>),
    /// `(file name, bytes)` of each table.
    Tables(Vec<(&'static str, Vec<u8>)>),
}

impl Rendered {
    /// The bytes of a one-file rendering.
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Rendered::Bytes(b) => b,
            Rendered::Tables(t) => t.into_iter().flat_map(|(_, b)| b).collect(),
        }
    }
}

/// Renders `doc` as `kind`; the readable report [`crate::fit::DEFAULT_WIDTH`] columns wide.
pub fn render(doc: &Doc<'_>, kind: Kind) -> Result<Rendered> {
    render_fitted(doc, kind, crate::fit::DEFAULT_WIDTH)
}

/// Renders `doc` as `kind`, the readable report fitted to `cols` columns (the other formats do not
/// depend on it). Every readable format passes, last, through [`crate::escape::printable`]:
/// whatever a renderer forgot to escape reaches no terminal raw.
pub fn render_fitted(doc: &Doc<'_>, kind: Kind, cols: usize) -> Result<Rendered> {
    let bytes = match (kind, doc) {
        (Kind::Text, Doc::Run(v)) => run_text(v, cols).into_bytes(),
        (Kind::Text, Doc::Compare(c, _)) => compare::render_terminal(c).into_bytes(),
        (Kind::Text, Doc::Linkage(r, forbidden)) => linkage_terminal::render(r, forbidden).into_bytes(),
        (Kind::Text, Doc::Selftest(r)) => selftest_terminal::render(r).into_bytes(),
        (Kind::Json, Doc::Run(v)) => v.document.to_file_bytes(),
        (Kind::Json, Doc::Compare(c, _)) => pretty(c)?,
        (Kind::Json, Doc::Linkage(r, _)) => pretty(r)?,
        (Kind::Json, Doc::Selftest(r)) => pretty(r)?,
        (Kind::Junit, Doc::Run(v)) => junit::run(v)?,
        (Kind::Junit, Doc::Compare(c, _)) => compare::junit::render(c)?,
        (Kind::Markdown, Doc::Run(v)) => markdown::run(v).into_bytes(),
        (Kind::Markdown, Doc::Compare(c, _)) => compare::markdown::render(c).into_bytes(),
        (Kind::Html, Doc::Run(v)) => html::run(v).into_bytes(),
        (Kind::Html, Doc::Compare(c, traces)) => compare::html::render(c, *traces)?,
        (Kind::Csv, Doc::Run(v)) => return Ok(Rendered::Tables(csv_tables::tables(v)?)),
        (Kind::Csv, Doc::Compare(c, _)) => return Ok(Rendered::Tables(compare::csv::tables(c)?)),
        (Kind::Junit | Kind::Markdown | Kind::Html | Kind::Csv, Doc::Linkage(..) | Doc::Selftest(_)) => {
            return Err(ReportError::Unsupported { kind: kind.name(), doc: doc.name() })
        }
    };
    let bytes = match (kind, String::from_utf8(bytes)) {
        (Kind::Json, Ok(text)) => text.into_bytes(),
        (_, Ok(text)) => match crate::escape::printable(&text) {
            std::borrow::Cow::Borrowed(_) => text.into_bytes(),
            std::borrow::Cow::Owned(safe) => safe.into_bytes(),
        },
        (_, Err(e)) => e.into_bytes(),
    };
    Ok(Rendered::Bytes(bytes))
}

/// The readable report of a run: one trace's report; with several ranks, the ranks side by side
/// (for `check`, followed by rank 0's trace and every check).
fn run_text(v: &View<'_>, cols: usize) -> String {
    match (&v.ranks, v.command) {
        (Some(r), "analyze") => ranks_terminal::render(r.analysis, cols),
        (Some(r), _) => format!("{}\n{}", ranks_terminal::render(r.analysis, cols), terminal::run(v, cols)),
        (None, _) => terminal::run(v, cols),
    }
}

fn pretty<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    let text = serde_json::to_string_pretty(value)?;
    let mut bytes = crate::escape::json(&text).into_owned().into_bytes();
    bytes.push(b'\n');
    Ok(bytes)
}
