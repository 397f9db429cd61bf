//! A compact Markdown summary — verdict, checks table, key figures — for `$GITHUB_STEP_SUMMARY`
//! and pull-request comments. With several ranks, the ranks side by side come first and the key
//! figures say which rank's trace they are.

use std::fmt::Write as _;

use launchguard_judge::{Status, Verdict};

use crate::terminal::{human_us, launch_times, opt_us};
use crate::{ranks_table, value_text, RanksView, View};

/// The Markdown summary of a run.
pub(crate) fn run(view: &View<'_>) -> String {
    let mut out = String::new();
    let _ = write!(out, "### launchguard {}: {}", view.command, verdict_badge(view.verdict));
    if let Some(r) = view.reason {
        let _ = write!(out, " ({})", cell(r));
    }
    out.push_str("\n\n");
    match &view.ranks {
        Some(r) => ranks_section(&mut out, r),
        None => trace_line(&mut out, view),
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
                c.id.as_str().replace('`', "'"),
                cell(&value_text(&c.value)),
                cell(&value_text(&c.limit)),
                cell(&c.message)
            );
        }
        out.push('\n');
    }
    match (&view.ranks, view.analysis) {
        // Every rank in turn, the rank of the single-trace detail included.
        (Some(r), Some(_)) => {
            for k in &r.analysis.ranks {
                let a = &k.analysis.figures;
                let which = if k.rank == r.analysis.across.worst_rank { " (the worst rank)" } else { "" };
                let _ = writeln!(out, "#### Rank {}{which}: {}\n", k.rank, verdict_badge(k.verdict));
                trace_line_of(&mut out, a);
                key_figures(&mut out, a);
                kernels(&mut out, a, TOP_KERNELS_PER_RANK);
            }
        }
        _ => {
            if let Some(a) = view.analysis {
                key_figures(&mut out, a);
                kernels(&mut out, a, TOP_KERNELS);
            }
        }
    }
    phases(&mut out, view);
    if let (Some(a), None) = (view.analysis, &view.ranks) {
        for w in &a.warnings {
            let _ = writeln!(out, "> **warning:** {}", cell(w));
        }
    }
    out
}

/// Kernel rows in the Markdown summary (all of them are in the JSON and the CSV).
const TOP_KERNELS: usize = 10;
/// The same per rank, with several ranks.
const TOP_KERNELS_PER_RANK: usize = 5;

/// The trace the single-trace figures come from.
fn trace_line(out: &mut String, view: &View<'_>) {
    if let Some(a) = view.analysis {
        trace_line_of(out, a);
    }
}

/// The trace `a` was measured on.
fn trace_line_of(out: &mut String, a: &launchguard_analysis::Analysis) {
    let name = a.source.path.rsplit('/').next().unwrap_or(&a.source.path);
    let _ = writeln!(
        out,
        "Trace `{}`: {} events{}{}\n",
        crate::escape::one_line(name).replace('`', "'"),
        a.source.events,
        match &a.trace.profiler {
            Some(p) => format!(", {}", cell(p)),
            None => String::new(),
        },
        match &a.within {
            Some(w) => format!(
                "; within annotation spans matching `{}`{}",
                crate::escape::one_line(w).replace('`', "'"),
                crate::terminal::within_mode(a)
            ),
            None => String::new(),
        }
    );
}

/// The ranks side by side (one table row per rank), then the figures that compare them.
fn ranks_section(out: &mut String, r: &RanksView<'_>) {
    let ranks = r.analysis;
    let t = ranks_table::table(ranks);
    let _ = writeln!(out, "#### Ranks\n\n{}. {}\n", ranks_table::headline(ranks), cell(&t.note));
    out.push_str("| rank | verdict |");
    for c in &t.columns {
        let _ = write!(out, " {} |", c.name);
    }
    out.push_str("\n|---|---|");
    for c in &t.columns {
        out.push_str(if c.num { "---:|" } else { "---|" });
    }
    out.push('\n');
    for row in &t.rows {
        let _ = write!(out, "| rank {} | {} |", row.rank, verdict_badge(row.verdict));
        for v in &row.cells {
            let _ = write!(out, " {} |", cell(v));
        }
        out.push('\n');
    }
    out.push('\n');
    for (label, text) in ranks_table::across(ranks) {
        let _ = writeln!(out, "- **{label}**: {}", cell(&text));
    }
    out.push('\n');
    for w in &ranks.warnings {
        let _ = writeln!(out, "> **warning:** {}", cell(w));
    }
    if !ranks.warnings.is_empty() {
        out.push('\n');
    }
}

pub(crate) fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ PASS",
        Verdict::Warn => "⚠️ WARN",
        Verdict::Fail => "❌ FAIL",
        Verdict::Skip => "⏭️ SKIP",
        Verdict::Inconclusive => "❔ INCONCLUSIVE",
    }
}

pub(crate) fn status_badge(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅ pass",
        Status::Warn => "⚠️ warn",
        Status::Fail => "❌ fail",
        Status::Skip => "⏭️ skip",
    }
}

/// Text safe inside a table cell: no line breaks, no table or HTML syntax, no emphasis.
pub(crate) fn cell(s: &str) -> String {
    let s = crate::escape::one_line(s);
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' | '\\' | '<' | '>' | '*' | '_' | '`' | '[' | ']' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

/// The kernel table's first `top` rows over the whole trace.
fn kernels(out: &mut String, a: &launchguard_analysis::Analysis, top: usize) {
    let k = &a.kernels;
    if k.kernels.is_empty() {
        return;
    }
    let shown = k.kernels.len().min(top);
    let _ = writeln!(
        out,
        "Kernels: {} names, {} GPU activities, {} of GPU time{}.\n",
        k.kernels.len(),
        k.activities,
        human_us(k.gpu_time_us),
        if shown < k.kernels.len() { format!("; the top {shown} by total time") } else { String::new() }
    );
    out.push_str(
        "| kernel | share | total | count | mean | p50 | p99 |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let names: Vec<&str> = k.kernels.iter().map(|r| r.name.as_str()).collect();
    for (r, name) in k.kernels.iter().zip(crate::names::distinct(&names)).take(top) {
        let _ = writeln!(
            out,
            "| `{}` | {:.1}% | {} | {} | {} | {} | {} |",
            name.replace('`', "'").replace('|', "\\|"),
            r.share * 100.0,
            human_us(r.total_us),
            r.count,
            human_us(r.mean_us),
            human_us(r.p50_us),
            human_us(r.p99_us)
        );
    }
    out.push('\n');
}

fn key_figures(out: &mut String, a: &launchguard_analysis::Analysis) {
    let mut rows: Vec<(String, String)> = Vec::new();
    for d in &a.devices {
        let f = &d.figures;
        let name = d.name.as_ref().map_or(String::new(), |n| format!(" ({})", cell(n)));
        // Which window each figure is of, where the checks judge the steady state.
        let steady = crate::html::steady_of(d);
        let whole = if steady.is_some() { ", whole trace" } else { "" };
        rows.push((
            format!("GPU {}{name} occupancy{whole}", cell(&d.device)),
            format!(
                "**{:.1}%** — busy {} of a {} window",
                f.occupancy * 100.0,
                human_us(f.busy_us),
                human_us(f.window_us)
            ),
        ));
        rows.push((
            format!("gaps > {} µs{whole}", value_text(&serde_json::json!(f.gaps.threshold_us))),
            format!(
                "**{}** of {} (longest {})",
                f.gaps.over_threshold,
                f.gaps.count,
                human_us(f.gaps.max_us)
            ),
        ));
        if let Some(s) = steady {
            let [busy, window, before, after] = crate::terminal::steady_times(s);
            rows.push((
                format!("GPU {} steady state of graph replays (what the checks judge)", cell(&d.device)),
                format!(
                    "occupancy **{:.1}%** — busy {busy} of {window} ({before} before it, {after} after it); **{}** gaps > {} µs",
                    s.figures.occupancy * 100.0,
                    s.figures.gaps.over_threshold,
                    value_text(&serde_json::json!(f.gaps.threshold_us))
                ),
            ));
        }
    }
    let g = &a.graph_launches;
    if g.count > 0 {
        rows.push(("graph launches".into(), launch_times(g, ": ", ", ", |m| format!("**{m}**"))));
        let r = &a.replay_summary;
        rows.push((
            "replays".into(),
            format!(
                "{}, {}: launch→first kernel p50 {}, GPU span p50 {}, idle before p50 {}",
                r.count,
                crate::terminal::replay_kernels(a),
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
        let r = p.report;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(p.label),
            r.host_us.len(),
            opt_us(r.host_p50_us),
            opt_us(r.host_p99_us),
            opt_us(r.gpu_us_per_replay)
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::view_with_checks;
    use crate::PhaseSamples;
    use crate::View;
    use launchguard_judge::Check;
    use launchguard_judge::CheckId;

    #[test]
    fn verdict_and_one_table_row_per_check() {
        let checks = vec![
            Check::new(CheckId::Occupancy, Status::Fail, Some(0.706), Some(0.8), "busy | 70.6%")
                .with_hint("look at gaps"),
            Check::new(CheckId::GraphLaunch, Status::Skip, None, None, "no graph launch"),
        ];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let md = run(&view_with_checks(&checks, &doc));
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

    fn rank_rows(md: &str) -> Vec<&str> {
        md.lines().filter(|l| l.starts_with("| rank ") && !l.starts_with("| rank |")).collect()
    }

    /// The synthetic TP=2 run of `test_support::two_ranks`, figures worked out by hand from its
    /// definition: rank 0 runs each replay at 1000 and 1100 µs (gemm 20 µs, then an all-reduce to
    /// +50), rank 1 the same 5 µs later, so rank 0's two all-reduces each wait 5 µs for it. Own
    /// windows: rank 0 1000–1150 (busy 100), rank 1 1005–1150 (busy 90); common window 1005–1150,
    /// 145 µs, where rank 0 is busy 95 of which 10 waiting: 65.5% and 85/145 = 58.6%; rank 1 90/145
    /// = 62.1% with no wait. Rank 1 starts both replays last: the straggler.
    #[test]
    fn ranks_section_has_a_row_per_rank_and_the_cross_rank_figures() {
        let r = crate::test_support::two_ranks();
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let view = view_with_checks(&r.checks, &doc).with_ranks(&r, 0);
        let md = run(&view);
        assert!(md.starts_with("### launchguard analyze: ❌ FAIL\n\n#### Ranks\n\n2 ranks, world size 2. Figures over the common window, 145.0 µs,"), "{md}");
        assert_eq!(
            rank_rows(&md),
            [
                "| rank 0 | ❌ FAIL | 65.5% | 58.6% | 95.0 µs | 10.0 µs | 150.0 µs | 66.7% | 60.0% | 4.0 µs | 4.0 µs | 2 |",
                "| rank 1 | ❌ FAIL | 62.1% | 62.1% | 90.0 µs | 0.0 µs | 145.0 µs | 62.1% | 62.1% | 4.0 µs | 4.0 µs | 2 |",
            ],
            "{md}"
        );
        // Over the common window (1 replay); the whole traces' (2 replays) differ in no figure.
        assert!(md.contains("\n- **replay skew, common window**: 1 replays: GPU start p50 5.0 µs, p99 5.0 µs, max 5.0 µs; launch call p50 5.0 µs,"), "{md}");
        assert!(!md.contains("whole traces"), "{md}");
        assert!(
            md.contains(
                // Rank 1 starts the replay last, but 5 µs apart: no rank waits for it.
                "; straggler none (last to start on the GPU: rank 1 in 1 of 1 replays)\n"
            ),
            "{md}"
        );
        assert!(md.contains("\n- **clocks**: one clock: 2 matched collectives overlap on every rank (smallest overlap 25.0 µs)\n"), "{md}");
        assert!(md.contains("\n- **worst rank**: rank 0\n"), "{md}");
        // Kernel names are escaped like every other cell.
        assert!(md.contains("ncclDevKernel\\_AllReduce"), "{md}");
        // No single-trace analysis in this view: no detail section.
        assert!(!md.contains("#### Detail"), "{md}");
    }

    #[test]
    fn ranks_without_a_common_window_or_aligned_clocks() {
        let mut r = crate::test_support::two_ranks();
        r.across.figures.common_window = None;
        r.across.figures.clocks.aligned = Some(false);
        r.across.figures.clocks.violations = 2;
        r.across.figures.clocks.min_overlap_us = Some(-40.0);
        r.across.figures.skew = None;
        r.across.figures.skew_common = None;
        for k in &mut r.ranks {
            k.common = None;
            k.whole.collective_wait_us = None;
            k.whole.busy_excluding_wait_us = None;
            k.whole.occupancy_excluding_wait = None;
        }
        r.warnings = vec!["rank 1 | <late>".to_string()];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let view = view_with_checks(&r.checks, &doc).with_ranks(&r, 0);
        let md = run(&view);
        assert!(
            md.contains("No common window (see the warnings): figures over each rank's own window"),
            "{md}"
        );
        // Own windows only (no second set of columns); no waiting figures without one clock.
        assert!(
            md.contains("| rank | verdict | occupancy | excl. waiting | busy | waiting | graph launch p50 |"),
            "{md}"
        );
        assert_eq!(
            rank_rows(&md),
            [
                "| rank 0 | ❌ FAIL | 66.7% | – | 100.0 µs | – | 4.0 µs | 4.0 µs | 2 |",
                "| rank 1 | ❌ FAIL | 62.1% | – | 90.0 µs | – | 4.0 µs | 4.0 µs | 2 |",
            ],
            "{md}"
        );
        assert!(md.contains("- **replay skew**: not measured\n") && !md.contains("straggler"), "{md}");
        assert!(
            md.contains(
                "- **clocks**: look unaligned: 2 of 2 matched collectives miss each other (by up to 40.0 µs)"
            ),
            "{md}"
        );
        assert!(md.contains("> **warning:** rank 1 \\| \\<late\\>\n"), "{md}");
    }

    #[test]
    fn every_rank_has_its_own_figures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7}}]}"#).unwrap();
        let trace = launchguard_trace::read(&path).unwrap();
        let analysis = launchguard_judge::analysis(
            launchguard_analysis::analyze(&trace, &Default::default()).unwrap(),
            &Default::default(),
        );
        let doc = crate::Document::of(&analysis).unwrap();
        let one = View::of_analysis(&analysis.figures, None, &analysis.checks, analysis.verdict, &doc);
        let md = run(&one);
        assert!(!md.contains("#### Ranks") && !md.contains("#### Rank ") && !md.contains("| rank "), "{md}");
        // One trace: its kernel table (one kernel `k`, 2 µs, all of the GPU time).
        assert!(md.contains("| `k` | 100.0% | 2.0 µs | 1 | 2.0 µs | 2.0 µs | 2.0 µs |"), "{md}");
        let r = crate::test_support::two_ranks();
        for detail in [0, 1] {
            let md = run(&one.with_ranks(&r, detail));
            // Each rank in turn, after the ranks and the checks, with its own trace and figures.
            let at0 =
                md.find("#### Rank 0 (the worst rank): ❌ FAIL\n\nTrace `").unwrap_or_else(|| panic!("{md}"));
            let at1 = md.find("#### Rank 1: ❌ FAIL\n\nTrace `").unwrap_or_else(|| panic!("{md}"));
            assert!(md.find("#### Ranks").unwrap() < at0 && md.find("| | check |").unwrap() < at0, "{md}");
            assert!(
                at0 < at1
                    && md[at0..at1].contains("| figure | value |")
                    && md[at1..].contains("| figure | value |"),
                "{md}"
            );
            // Both ranks ran the all-reduce (test_support::two_ranks).
            assert_eq!(
                md.matches("| `ncclDevKernel\\_AllReduce").count()
                    + md.matches("| `ncclDevKernel_AllReduce").count(),
                2,
                "{md}"
            );
        }
    }

    #[test]
    fn phases_table_has_percentiles() {
        let checks =
            vec![Check::new(CheckId::Other("overhead".into()), Status::Pass, Some(1.0), Some(2.0), "ok")];
        use launchguard_analysis::context::PhaseReport;
        let before = PhaseReport::from_samples(vec![10.0, 20.0, 30.0, 40.0, 50.0], Vec::new(), Some(250.0));
        let profiled = PhaseReport::from_samples(vec![100.0], Vec::new(), None);
        let phases = [
            PhaseSamples { label: "before", report: &before },
            PhaseSamples { label: "profiled", report: &profiled },
        ];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let mut view = view_with_checks(&checks, &doc);
        view.command = "check";
        view.phases = &phases;
        let md = run(&view);
        // p50 of 10..50 is 30; p99 = 40 + 0.96 × 10 = 49.6 (linear interpolation).
        assert!(md.contains("| before | 5 | 30.0 µs | 49.6 µs | 250.0 µs |"), "{md}");
        assert!(md.contains("| profiled | 1 | 100.0 µs | 100.0 µs | – |"), "{md}");
    }
}
