//! The history as one self-contained HTML page (no network): per series, each metric's runs, the
//! median of each level, its change points and reset markers, drawn as SVG by the inline script
//! (`history.js`) from the data embedded beside it; a run's details on hover.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::{run_name, Shown};

const SCRIPT: &str = include_str!("history.js");

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2430; max-width: 1000px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 32px; } h3 { font-size: 14px; margin: 16px 0 4px; }
.meta, .label { color: #5a6473; }
.fail { color: #b3261e; font-weight: 600; } .pass { color: #1e7d32; font-weight: 600; }
svg { width: 100%; height: auto; display: block; background: #fafbfc; border: 1px solid #e3e6ea; }
.grid { stroke: #e3e6ea; } .axis { font-size: 11px; fill: #5a6473; }
.dots { stroke: #2563eb; stroke-width: 5; stroke-linecap: round; fill: none; }
.dots.out { stroke: #9aa4b2; stroke-width: 3; }
.level { stroke: #111827; stroke-width: 1.5; }
.cp { stroke-width: 1.5; stroke-dasharray: 4 3; } .cp.worse { stroke: #b3261e; } .cp.better { stroke: #1e7d32; }
.reset { stroke: #16a34a; stroke-width: 2; }
.cursor { stroke: #9aa4b2; }
#lg-tip { position: absolute; display: none; background: #111827; color: #fff; padding: 6px 8px; border-radius: 4px;
  font-size: 12px; max-width: 360px; pointer-events: none; }
ul { margin: 4px 0; }
";

/// `show` as one HTML page.
pub fn show(s: &Shown) -> String {
    // The data for the script; `<` escaped so that no name from a run can end the script element.
    let data =
        serde_json::to_string(&super::json::show(s)).unwrap_or_else(|_| "{}".into()).replace('<', "\\u003c");
    let page: Markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "launchguard history" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "launchguard history" }
                p.meta { (s.store) " · schema " (s.schema_version) }
                @if s.series.is_empty() { p { "No runs recorded." } }
                @for (si, series) in s.series.iter().enumerate() {
                    @let a = &series.analysis;
                    h2 { (a.key.to_string()) }
                    p {
                        (a.runs.len()) " runs, "
                        (a.runs.iter().filter(|r| !r.status.is_ok()).count()) " inconclusive (hollow, left out). Gate: "
                        @if series.gate.is_empty() { span.pass { "pass" } } @else { span.fail { "fail" } }
                    }
                    @if !series.gate.is_empty() {
                        ul { @for f in &series.gate { li.fail { (super::terminal::failure_line(f)) } } }
                    }
                    @for (mi, m) in a.metrics.iter().enumerate() {
                        h3 { (m.metric.name) " " span.label { "— " (m.metric.label) } }
                        svg id=(format!("lg-chart-{si}-{mi}")) role="img" aria-label=(m.metric.label) {}
                        @if !m.changes.is_empty() {
                            ul {
                                @for c in &m.changes {
                                    li { (run_name(c.run_id, c.build.as_deref())) ": " (super::change_text(c)) }
                                }
                            }
                        }
                    }
                }
                div id="lg-tip" {}
                script id="lg-data" type="application/json" { (PreEscaped(data)) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    page.into_string()
}
