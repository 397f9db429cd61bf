//! A comparison as Markdown, for `$GITHUB_STEP_SUMMARY` and pull-request comments: the verdict,
//! the two runs and what differs between them, the metrics table, the failures, and the kernels
//! that changed most.

use std::fmt::Write as _;

use launchguard_judge::compare::Comparison;

use super::{failures, kernel_tables, metric_header, metric_rows, run_line, KERNEL_HEADER, TOP_KERNELS};
use crate::markdown::{cell, verdict_badge};

/// The comparison as Markdown.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### launchguard compare: {}\n", verdict_badge(c.verdict));
    if let Some(r) = &c.reason {
        let _ = writeln!(out, "{}\n", cell(r));
    }
    let _ = writeln!(out, "- baseline: {}", cell(&run_line(&c.baseline)));
    let _ = writeln!(out, "- current: {}", cell(&run_line(&c.current)));
    for d in &c.differences {
        let kind = if d.blocking { "**differs**" } else { "note" };
        let _ = writeln!(
            out,
            "- {kind}: `{}` {} (baseline) vs {} (current)",
            d.field.replace('`', "'"),
            cell(&d.baseline),
            cell(&d.current)
        );
    }
    for (side, run) in [("baseline", &c.baseline), ("current", &c.current)] {
        for w in &run.warnings {
            let _ = writeln!(out, "- ⚠️ warning ({side}): {}", cell(w));
        }
    }
    out.push('\n');
    for f in failures(c) {
        let _ = writeln!(out, "❌ {}\n", cell(&f));
    }
    if c.comparable {
        table(
            &mut out,
            &metric_header(c),
            &metric_rows(c),
            &[false, true, true, true, true, true, true, false],
        );
        let _ = writeln!(
            out,
            "\nSamples: Mann–Whitney U (two-sided, alpha {}) and a bootstrap interval of the shift of medians \
             ({} resamples); a regression needs both, with the interval past the limit.\n",
            c.limits.alpha, c.limits.resamples
        );
    } else {
        out.push_str("Not compared: the runs differ (`--force` compares anyway).\n\n");
    }
    for t in kernel_tables(&c.kernels, TOP_KERNELS) {
        let _ = writeln!(out, "#### Kernels, {}\n", cell(&t.title));
        let header = KERNEL_HEADER.map(str::to_string);
        table(&mut out, &header, &t.rows, &[false, true, true, true, true, true, false]);
        if t.more > 0 {
            let _ = writeln!(out, "\n… and {} more (all in the JSON and `--csv`).", t.more);
        }
        out.push('\n');
    }
    out
}

/// A Markdown table; `right[i]` aligns column i right.
fn table<const N: usize>(out: &mut String, header: &[String; N], rows: &[[String; N]], right: &[bool; N]) {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&line(header.iter().map(|h| cell(h)).collect()));
    out.push_str(&line(right.iter().map(|r| if *r { "---:" } else { "---" }.to_string()).collect()));
    for r in rows {
        out.push_str(&line(r.iter().map(|v| cell(v)).collect()));
    }
}
