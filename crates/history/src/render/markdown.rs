//! The history as Markdown, for `$GITHUB_STEP_SUMMARY` or a pull-request comment.

use std::fmt::Write;

use super::{percent, run_name, value, Shown};
use crate::explain::Explanation;

/// Text in a table cell: pipes, backticks and line breaks of strangers' names made harmless.
pub fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('`', "'")
        .replace(['\n', '\r'], " ")
        .replace('<', "&lt;")
}

/// `show` as Markdown.
pub fn show(s: &Shown) -> String {
    let mut out = String::from("# launchguard history\n\n");
    let _ = writeln!(out, "{} (schema {})\n", cell(&s.store), s.schema_version);
    for series in &s.series {
        let a = &series.analysis;
        let _ = writeln!(out, "## {}\n", cell(&a.key.to_string()));
        let verdict = if series.gate.is_empty() { "✅ pass" } else { "❌ **fail**" };
        let _ = writeln!(out, "{} runs, gate: {verdict}\n", a.runs.len());
        for f in &series.gate {
            let _ = writeln!(out, "- **{}**", cell(&super::terminal::failure_line(f)));
        }
        if !series.gate.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "| metric | latest | change points (newest last) |\n|---|---:|---|");
        for m in &a.metrics {
            let latest = m.points.last().map_or("-".into(), |p| value(p.1, m.metric.unit));
            let changes: Vec<String> = m
                .changes
                .iter()
                .rev()
                .take(5)
                .rev()
                .map(|c| {
                    format!(
                        "{}: {} → {} ({}{})",
                        cell(&run_name(c.run_id, c.build.as_deref())),
                        value(c.before, m.metric.unit),
                        value(c.after, m.metric.unit),
                        percent(c.relative),
                        if c.worse { ", worse" } else { "" }
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                m.metric.name,
                latest,
                if changes.is_empty() { "none".into() } else { changes.join("<br>") }
            );
        }
        out.push('\n');
    }
    out
}

/// `explain` as Markdown.
pub fn explanation(e: &Explanation) -> String {
    let mut out = format!(
        "### What changed between {} and {}\n\n",
        cell(&run_name(e.previous_run_id, e.previous_build.as_deref())),
        cell(&run_name(e.run_id, e.build.as_deref()))
    );
    for c in &e.changes {
        let _ = writeln!(out, "- `{}`: {}", c.metric, super::change_text(c));
    }
    let _ = writeln!(out, "\n| # | what | before | after | lines up |\n|---:|---|---|---|---:|");
    for (i, d) in e.differences.iter().take(super::terminal::DIFFERENCES_SHOWN).enumerate() {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {:.0}% |",
            i + 1,
            cell(&d.key),
            cell(&d.before),
            cell(&d.after),
            100.0 * d.share_before * d.share_after
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(super::cell("a|b`c\nd<e"), "a\\|b'c d&lt;e");
    }
}
