//! The comparison with a baseline (`launchguard.compare/1`) as a terminal table: metric, baseline
//! and current medians, shift, interval, p-value, status. It reads the judged comparison and
//! computes nothing.

use std::fmt::Write as _;

use launchguard_judge::compare::{format_p, signed, Comparison, Metric, Outcome, RunInfo};
use launchguard_judge::Status;

/// The comparison as a terminal table: metric, baseline and current medians, shift, interval,
/// p-value, status.
pub fn render_terminal(c: &Comparison) -> String {
    let mut s = String::new();
    let run = |label: &str, r: &RunInfo| {
        format!(
            "{label:<9}{}  {}, {}, torch {}, launchguard {}, verdict {}\n",
            r.path.as_deref().unwrap_or("-"),
            r.preset,
            r.gpu_name.as_deref().unwrap_or("unknown GPU"),
            r.torch.as_deref().unwrap_or("unknown"),
            r.launchguard_version,
            r.verdict.as_str()
        )
    };
    s.push_str(&run("baseline", &c.baseline));
    s.push_str(&run("current", &c.current));
    for d in &c.differences {
        let kind = if d.blocking { "differs" } else { "note" };
        let _ = writeln!(s, "  {kind}: {} {} (baseline) vs {} (current)", d.field, d.baseline, d.current);
    }
    if !c.comparable {
        let _ = writeln!(s, "\nnot compared: the runs differ (--force compares anyway)");
    } else {
        let header = ["metric", "baseline", "current", "shift", "CI", "p", "limit", "status"];
        let mut rows: Vec<[String; 8]> = Vec::new();
        for m in &c.metrics {
            let pct = m.figures.unit.is_empty();
            let num = |v: Option<f64>| match v {
                Some(v) if pct => format!("{:.1}%", 100.0 * v),
                Some(v) => format!("{v:.1}"),
                None => "–".into(),
            };
            let sgn = |v: Option<f64>| match v {
                Some(v) if pct => format!("{} pt", signed(100.0 * v, 1)),
                Some(v) => signed(v, 1),
                None => "–".into(),
            };
            let status = match m.status {
                Status::Fail => "FAIL",
                s => s.as_str(),
            };
            rows.push([
                if pct { short_name(m) } else { format!("{} ({})", short_name(m), m.figures.unit) },
                num(m.figures.baseline.median),
                num(m.figures.current.median),
                sgn(m.figures.shift),
                m.figures
                    .interval
                    .map_or("–".into(), |i| format!("[{}, {}]", signed(i.low, 1), signed(i.high, 1))),
                m.figures.p_value.map_or("–".into(), format_p),
                sgn(m.limit),
                format!("{status} {}", outcome_word(m.outcome)),
            ]);
        }
        let ci_header = format!("{:.0}% CI", 100.0 * c.limits.confidence);
        let mut widths = header.map(|h| h.chars().count());
        widths[4] = widths[4].max(ci_header.chars().count());
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: [&str; 8]| {
            let mut l = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                let pad = w - cell.chars().count();
                // Text left-aligned, figures right-aligned.
                if i == 0 || i == 7 {
                    let _ = write!(l, "{cell}{}", " ".repeat(pad));
                } else {
                    let _ = write!(l, "{}{cell}", " ".repeat(pad));
                }
                l.push_str(if i == 7 { "" } else { "  " });
            }
            l.trim_end().to_string() + "\n"
        };
        s.push('\n');
        let mut h = header;
        h[4] = &ci_header;
        s.push_str(&line(h));
        for r in &rows {
            s.push_str(&line(std::array::from_fn(|i| r[i].as_str())));
        }
        let _ = writeln!(
            s,
            "\nsamples: Mann–Whitney U (two-sided, alpha {}) and a bootstrap interval of the shift of medians \
             ({} resamples); a regression needs both, with the interval past the limit",
            c.limits.alpha, c.limits.resamples
        );
    }
    let decided: Vec<String> = c
        .checks()
        .into_iter()
        .filter(|k| k.status == Status::Fail)
        .map(|k| format!("{}: {}", k.id, k.message))
        .collect();
    for line in decided {
        let _ = writeln!(s, "\nFAIL {line}");
    }
    let _ = writeln!(s, "\nverdict: {}", c.verdict.as_str().to_uppercase());
    s
}

/// The metric's name in the table (the message has the full label), with its rank in runs of
/// several ranks.
fn short_name(m: &Metric) -> String {
    let name = match m.figures.id.as_str() {
        "host_before" => "host per replay, before",
        "host_after" => "host per replay, after",
        "gpu_before" => "GPU per replay, before",
        "gpu_after" => "GPU per replay, after",
        "occupancy" => "occupancy, profiled",
        "graph_launch" => "graph launch, profiled",
        _ => m.figures.label.as_str(),
    };
    match m.figures.rank {
        Some(r) => format!("rank {r}: {name}"),
        None => name.to_string(),
    }
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Regression => "regression",
        Outcome::Improvement => "improvement",
        Outcome::NotSignificant => "not significant",
        Outcome::BelowFloor => "below limit",
        Outcome::WithinLimit => "within limit",
        Outcome::NotMeasured => "not measured",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real `check --preset reference` result from an H200 (tests/data/compare/README.md).
    fn reference() -> launchguard_check::CheckReport {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/compare/h200-reference.json")).unwrap();
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
