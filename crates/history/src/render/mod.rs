//! A history drawn for people: the terminal, JSON (`launchguard.history/1`), Markdown, and one
//! self-contained HTML page. Each renders the same [`Shown`]: the series analysed, with what the
//! gate says of each; nothing is computed here.

pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

use crate::gate::Failure;
use crate::series::SeriesAnalysis;

/// Schema id of the JSON document.
pub const SCHEMA: &str = "launchguard.history/1";

/// What `history show` shows.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Shown {
    /// Where the history is.
    pub store: String,
    /// Its schema version.
    pub schema_version: i64,
    /// Each series, analysed, with its gate.
    pub series: Vec<ShownSeries>,
}

/// One series, analysed, with what the gate says.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShownSeries {
    /// The analysis.
    #[serde(flatten)]
    pub analysis: SeriesAnalysis,
    /// The metrics that fail the gate.
    pub gate: Vec<Failure>,
}

/// A value with its unit, as the reports write it: µs to 2 decimals, fractions as percent.
pub fn value(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        format!("{:.1}%", 100.0 * v)
    } else if v.abs() >= 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A relative change as a signed percent.
pub fn percent(r: f64) -> String {
    format!("{:+.1}%", 100.0 * r)
}

/// A change point's figures in words: `2.77 µs → 27.93 µs (+906.7%, worse), p=0.005`.
pub fn change_text(c: &crate::series::Change) -> String {
    let unit = crate::metrics::metric(c.metric).map_or("", |m| m.unit);
    format!(
        "{} → {} ({}, {}), p={:.3}",
        value(c.before, unit),
        value(c.after, unit),
        percent(c.relative),
        if c.worse { "worse" } else { "better" },
        c.p_value
    )
}

/// A run as reports name it: `#12 (build abc)`.
pub fn run_name(id: i64, build: Option<&str>) -> String {
    match build {
        Some(b) => format!("#{id} (build {b})"),
        None => format!("#{id}"),
    }
}
