//! The history on a terminal: per series its metrics, their latest values and change points, the
//! last runs, and the gate. Bounded however long the history: the newest change points and runs.

use std::fmt::Write;

use super::{change_text, percent, run_name, value, Shown};
use crate::explain::Explanation;
use crate::gate::Failure;
use crate::metrics;

/// Change points listed per metric, newest last.
const CHANGES_SHOWN: usize = 5;

/// `show` for a terminal; `last_runs` runs listed per series.
pub fn show(s: &Shown, last_runs: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "history  {}  (schema {})", s.store, s.schema_version);
    if s.series.is_empty() {
        let _ = writeln!(out, "\nno runs recorded");
    }
    for series in &s.series {
        let a = &series.analysis;
        let left_out = a.runs.iter().filter(|r| !r.status.is_ok()).count();
        let _ = writeln!(
            out,
            "\nseries {}  {} runs ({} inconclusive, left out), {} reset marker(s)",
            a.key,
            a.runs.len(),
            left_out,
            a.resets.len()
        );
        for m in &a.metrics {
            let latest = m.points.last().map_or("-".into(), |p| value(p.1, m.metric.unit));
            let _ = writeln!(out, "  {:<18} latest {:>12}  {}", m.metric.name, latest, m.metric.label);
            let skipped = m.changes.len().saturating_sub(CHANGES_SHOWN);
            if skipped > 0 {
                let _ = writeln!(out, "      … {skipped} earlier change point(s)");
            }
            for c in &m.changes[skipped..] {
                let _ = writeln!(
                    out,
                    "      change at {}: {}",
                    run_name(c.run_id, c.build.as_deref()),
                    change_text(c)
                );
            }
        }
        for r in &a.resets {
            let what = r.metric.as_deref().unwrap_or("every metric");
            let _ = writeln!(out, "  reset at #{} ({what}): {}", r.run_id, r.note);
        }
        if last_runs > 0 {
            let _ = writeln!(out, "  last runs");
            let first = a.runs.len().saturating_sub(last_runs);
            for r in &a.runs[first..] {
                let host = r.figures.get("host_before_us").map_or("-".into(), |v| value(*v, "µs"));
                let status = match &r.status {
                    crate::record::RunStatus::Ok => String::new(),
                    crate::record::RunStatus::Inconclusive(why) => format!("  inconclusive: {why}"),
                };
                let _ = writeln!(
                    out,
                    "    #{:<6} {}  {:<5} host before {:>10}  build {}{}",
                    r.id,
                    r.recorded_at,
                    r.verdict,
                    host,
                    r.build.as_deref().unwrap_or("-"),
                    status
                );
            }
        }
        if series.gate.is_empty() {
            let _ = writeln!(out, "  gate: pass (no metric sits past a change for the worse)");
        }
        for f in &series.gate {
            let _ = writeln!(out, "  gate: FAIL {}", failure_line(f));
        }
    }
    out
}

/// One failing metric in a line.
pub fn failure_line(f: &Failure) -> String {
    let m = metrics::metric(f.metric);
    let unit = m.map_or("", |m| m.unit);
    format!(
        "{} {} → {} ({}) since {}, the first bad build{}",
        f.metric,
        value(f.before, unit),
        value(f.now, unit),
        percent(f.relative()),
        run_name(f.first_bad.run_id, f.first_bad.build.as_deref()),
        if f.latest.run_id != f.first_bad.run_id {
            format!(", worse again at {}", run_name(f.latest.run_id, f.latest.build.as_deref()))
        } else {
            String::new()
        }
    )
}

/// Differences listed by `explain` (the rest counted).
pub const DIFFERENCES_SHOWN: usize = 15;

/// `explain` for a terminal.
pub fn explanation(e: &Explanation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "between {} and {}  ({} runs before, {} after compared)",
        run_name(e.previous_run_id, e.previous_build.as_deref()),
        run_name(e.run_id, e.build.as_deref()),
        e.runs_before,
        e.runs_after
    );
    if e.changes.is_empty() {
        let _ = writeln!(out, "no change point of any metric at #{}", e.run_id);
    }
    for c in &e.changes {
        let _ = writeln!(out, "  {} {}", c.metric, change_text(c));
    }
    if e.differences.is_empty() {
        let _ = writeln!(out, "the fingerprints do not differ: the same stack on both sides (noise, the machine, or something not recorded)");
        return out;
    }
    let _ = writeln!(out, "what differs, most likely first");
    for (i, d) in e.differences.iter().take(DIFFERENCES_SHOWN).enumerate() {
        let _ = writeln!(
            out,
            "  {:>2}. {}: {} → {}  ({:.0}% of runs before, {:.0}% after{}; {})",
            i + 1,
            d.key,
            d.before,
            d.after,
            100.0 * d.share_before,
            100.0 * d.share_after,
            if d.at_the_change { ", switched at this run" } else { "" },
            d.kind
        );
    }
    if e.differences.len() > DIFFERENCES_SHOWN {
        let _ = writeln!(out, "  … {} more", e.differences.len() - DIFFERENCES_SHOWN);
    }
    out
}
