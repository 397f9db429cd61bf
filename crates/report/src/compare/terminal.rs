//! The comparison with a baseline (`launchguard.compare/1`) as a terminal table: metric, baseline
//! and current medians, shift, interval, p-value, status. It reads the judged comparison and
//! computes nothing.

use std::fmt::Write as _;

use launchguard_judge::compare::Comparison;

use super::{failures, kernel_tables, metric_header, metric_rows, run_line, KERNEL_HEADER, TOP_KERNELS};

/// The comparison as a terminal table: metric, baseline and current medians, shift, interval,
/// p-value, status; then the kernels that changed most.
pub fn render_terminal(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "baseline {}", run_line(&c.baseline));
    let _ = writeln!(s, "current  {}", run_line(&c.current));
    for d in &c.differences {
        let kind = if d.blocking { "differs" } else { "note" };
        let text = format!("{kind}: {} {} (baseline) vs {} (current)", d.field, d.baseline, d.current);
        let _ = writeln!(s, "  {}", crate::escape::one_line(&text));
    }
    for (side, run) in [("baseline", &c.baseline), ("current", &c.current)] {
        for w in &run.warnings {
            let _ = writeln!(s, "  warning ({side}): {}", crate::escape::one_line(w));
        }
    }
    if !c.comparable {
        let _ = writeln!(s, "\nnot compared: the runs differ (--force compares anyway)");
    } else {
        s.push('\n');
        s.push_str(&aligned(&metric_header(c), &metric_rows(c), &[0, 7]));
        let _ = writeln!(
            s,
            "\nsamples: Mann–Whitney U (two-sided, alpha {}) and a bootstrap interval of the shift of medians \
             ({} resamples); a regression needs both, with the interval past the limit",
            c.limits.alpha, c.limits.resamples
        );
    }
    for t in kernel_tables(&c.kernels, TOP_KERNELS) {
        let _ = writeln!(s, "\nkernels, {}:", t.title);
        let header = KERNEL_HEADER.map(str::to_string);
        s.push_str(&aligned(&header, &t.rows, &[0, 6]));
        if t.more > 0 {
            let _ = writeln!(s, "… and {} more (all in --format json and --csv)", t.more);
        }
    }
    for line in failures(c) {
        let _ = writeln!(s, "\nFAIL {line}");
    }
    let _ = write!(s, "\nverdict: {}", c.verdict.as_str().to_uppercase());
    if let Some(r) = &c.reason {
        let _ = write!(s, " ({})", crate::escape::one_line(r));
    }
    s.push('\n');
    s
}

/// Rows under a header, in columns: the columns in `left` left-aligned, the figures right-aligned.
fn aligned<const N: usize>(header: &[String; N], rows: &[[String; N]], left: &[usize]) -> String {
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if left.contains(&i) {
                let _ = write!(l, "{cell}{pad}  ");
            } else {
                let _ = write!(l, "{pad}{cell}  ");
            }
        }
        l.trim_end().to_string() + "\n"
    };
    let mut s = line(header);
    for r in rows {
        s.push_str(&line(r));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real `check --preset reference` result from an H200 (tests/data/compare/README.md).
    fn reference() -> launchguard_check::CheckReport {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../../../tests/data/compare/h200-reference.json")).unwrap();
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn terminal_table_names_the_shift_interval_and_regression() {
        let base = reference();
        let mut cur = base.clone();
        for v in &mut cur.phases.get_mut("before").unwrap().host_us {
            *v += 10.0;
        }
        let c = launchguard_check::compare::compare(&base, &cur, &Default::default(), false);
        let text = render_terminal(&c);
        assert!(text.contains("95% CI"), "{text}");
        let row = text.lines().find(|l| l.starts_with("host per replay, before")).unwrap();
        // Every sample moved by 10 µs: the medians 5.5 → 15.5 µs.
        assert!(
            row.contains("5.5")
                && row.contains("15.5")
                && row.contains("+10.0")
                && row.contains("FAIL regression"),
            "{row}"
        );
        assert!(text.ends_with("verdict: FAIL\n"));
    }
}
