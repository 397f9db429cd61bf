//! A compact Markdown summary — verdict, checks table, key figures — for `$GITHUB_STEP_SUMMARY`
//! and pull-request comments.

use std::fmt::Write as _;

use launchguard_analysis::intervals::percentile;
use launchguard_analysis::{Status, Verdict};

use crate::terminal::human_us;
use crate::{value_text, Export, View};

/// Markdown summary.
pub struct Markdown;

impl Export for Markdown {
    fn render(&self, view: &View<'_>) -> anyhow::Result<Vec<u8>> {
        let mut out = String::new();
        let _ = write!(out, "### launchguard {}: {}", view.command, verdict_badge(view.verdict));
        if let Some(r) = view.reason {
            let _ = write!(out, " ({})", cell(r));
        }
        out.push_str("\n\n");
        if let Some(a) = view.analysis {
            let name = a.source.path.rsplit('/').next().unwrap_or(&a.source.path);
            let _ = writeln!(
                out,
                "Trace `{}`: {} events{}\n",
                name.replace('`', "'"),
                a.source.events,
                match &a.trace.profiler {
                    Some(p) => format!(", {}", cell(p)),
                    None => String::new(),
                }
            );
        }
        if !view.checks.is_empty() {
            out.push_str("| | check | value | limit | result |\n|---|---|---:|---:|---|\n");
            for c in view.checks {
                let hint = match (&c.hint, c.status >= Status::Warn) {
                    (Some(h), true) => format!("<br>hint: {}", cell(h)),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {} | {} | {}{hint} |",
                    status_badge(c.status),
                    c.id.replace('`', "'"),
                    cell(&value_text(&c.value)),
                    cell(&value_text(&c.limit)),
                    cell(&c.message)
                );
            }
            out.push('\n');
        }
        key_figures(&mut out, view);
        phases(&mut out, view);
        if let Some(a) = view.analysis {
            for w in &a.warnings {
                let _ = writeln!(out, "> **warning:** {}", cell(w));
            }
        }
        Ok(out.into_bytes())
    }
}

fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ PASS",
        Verdict::Warn => "⚠️ WARN",
        Verdict::Fail => "❌ FAIL",
        Verdict::Skip => "⏭️ SKIP",
    }
}

fn status_badge(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅ pass",
        Status::Warn => "⚠️ warn",
        Status::Fail => "❌ fail",
        Status::Skip => "⏭️ skip",
    }
}

/// Text safe inside a table cell: no line breaks, no table or HTML syntax, no emphasis.
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\n' | '\r' => out.push(' '),
            '|' | '\\' | '<' | '>' | '*' | '_' | '`' | '[' | ']' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

fn opt_us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), human_us)
}

fn key_figures(out: &mut String, view: &View<'_>) {
    let Some(a) = view.analysis else { return };
    let mut rows: Vec<(String, String)> = Vec::new();
    for d in &a.devices {
        let f = &d.figures;
        let name = d.name.as_ref().map_or(String::new(), |n| format!(" ({})", cell(n)));
        rows.push((
            format!("GPU {}{name} occupancy", cell(&d.device)),
            format!(
                "**{:.1}%** — busy {} of a {} window",
                f.occupancy * 100.0,
                human_us(f.busy_us),
                human_us(f.window_us)
            ),
        ));
        rows.push((
            format!("gaps > {} µs", value_text(&serde_json::json!(f.gaps.threshold_us))),
            format!(
                "**{}** of {} (longest {})",
                f.gaps.over_threshold,
                f.gaps.count,
                human_us(f.gaps.max_us)
            ),
        ));
    }
    let g = &a.graph_launches;
    if g.count > 0 {
        rows.push((
            "graph launches".into(),
            format!(
                "{} × {}: mean **{}**, p50 {}, p99 {}, max {}",
                g.count,
                g.apis.join("/"),
                opt_us(g.mean_us),
                opt_us(g.p50_us),
                opt_us(g.p99_us),
                opt_us(g.max_us)
            ),
        ));
        let r = &a.replay_summary;
        rows.push((
            "replays".into(),
            format!(
                "{}{}: launch→first kernel p50 {}, GPU span p50 {}, idle before p50 {}",
                r.count,
                r.kernels_mode.map_or(String::new(), |k| format!(" × {k} GPU activities")),
                opt_us(r.latency_p50_us),
                opt_us(r.gpu_span_p50_us),
                opt_us(r.idle_before_p50_us)
            ),
        ));
    } else {
        rows.push(("graph launches".into(), "none".into()));
    }
    out.push_str("| figure | value |\n|---|---|\n");
    for (k, v) in rows {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    out.push('\n');
}

fn phases(out: &mut String, view: &View<'_>) {
    if view.phases.is_empty() {
        return;
    }
    out.push_str("| phase | replays | host p50 | host p99 | GPU per replay |\n|---|---:|---:|---:|---:|\n");
    for p in view.phases {
        let mut v = p.host_us.to_vec();
        v.sort_by(f64::total_cmp);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(p.label),
            v.len(),
            opt_us(percentile(&v, 50.0)),
            opt_us(percentile(&v, 99.0)),
            opt_us(p.gpu_us_per_replay)
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::view_with_checks;
    use crate::PhaseSamples;
    use launchguard_analysis::Check;

    #[test]
    fn verdict_and_one_table_row_per_check() {
        let checks = vec![
            Check::new("occupancy", Status::Fail, Some(0.706), Some(0.8), "busy | 70.6%")
                .with_hint("look at gaps"),
            Check::new("graph_launch", Status::Skip, None, None, "no graph launch"),
        ];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let md = String::from_utf8(Markdown.render(&view_with_checks(&checks, &doc)).unwrap()).unwrap();
        assert!(md.starts_with("### launchguard analyze: ❌ FAIL\n"));
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ❌") || l.starts_with("| ⏭️")).collect();
        assert_eq!(rows.len(), 2);
        // The pipe inside the message is escaped, so the row keeps its six separators.
        assert_eq!(rows[0].matches(" | ").count(), 4, "{}", rows[0]);
        assert!(
            rows[0].contains("| 0.706 | 0.8 |") && rows[0].contains("busy \\| 70.6%<br>hint: look at gaps")
        );
        assert!(rows[1].contains("| – | – | no graph launch |"));
    }

    #[test]
    fn phases_table_has_percentiles() {
        let checks = vec![Check::new("overhead", Status::Pass, Some(1.0), Some(2.0), "ok")];
        let before = [10.0, 20.0, 30.0, 40.0, 50.0];
        let phases = [
            PhaseSamples { label: "before", host_us: &before, gpu_us_per_replay: Some(250.0) },
            PhaseSamples { label: "profiled", host_us: &[100.0], gpu_us_per_replay: None },
        ];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let mut view = view_with_checks(&checks, &doc);
        view.command = "check";
        view.phases = &phases;
        let md = String::from_utf8(Markdown.render(&view).unwrap()).unwrap();
        // p50 of 10..50 is 30; p99 = 40 + 0.96 × 10 = 49.6 (linear interpolation).
        assert!(md.contains("| before | 5 | 30.0 µs | 49.6 µs | 250.0 µs |"), "{md}");
        assert!(md.contains("| profiled | 1 | 100.0 µs | 100.0 µs | – |"), "{md}");
    }
}
