//! The readable report printed by default.

use std::fmt::Write as _;

use launchguard_analysis::model::{Analysis, Figures};
use launchguard_judge::{Check, Status};

use crate::escape::one_line;
use crate::View;

/// The same report with the check statuses and the verdict coloured (ANSI): green pass, yellow
/// warn, red fail, dim skip. The caller writes it through a stream that strips the codes where
/// colour is off (a pipe, `NO_COLOR`), as clap's own messages are.
pub fn paint(text: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let style = |word: &str| match word.to_ascii_lowercase().as_str() {
        "pass" => Some(AnsiColor::Green.on_default()),
        "warn" => Some(AnsiColor::Yellow.on_default().bold()),
        "fail" => Some(AnsiColor::Red.on_default().bold()),
        "skip" => Some(Style::new().dimmed()),
        "inconclusive" => Some(AnsiColor::Magenta.on_default().bold()),
        _ => None,
    };
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        // "  pass  id  message": a check line; "verdict: FAIL": the verdict.
        let painted = if let Some(rest) = line.strip_prefix("  ").filter(|r| r.get(4..6) == Some("  ")) {
            style(&rest[..4]).map(|s| format!("  {s}{}{s:#}{}", &rest[..4], &rest[4..]))
        } else if let Some(v) = line.strip_prefix("verdict: ") {
            let word: String = v.chars().take_while(char::is_ascii_alphabetic).collect();
            style(&word).map(|s| format!("verdict: {s}{word}{s:#}{}", &v[word.len()..]))
        } else {
            None
        };
        out.push_str(painted.as_deref().unwrap_or(line));
    }
    out
}

/// The plain-text report of one trace's run for a terminal (no colour codes: CI logs stay clean;
/// [`paint`] adds them where the output is a terminal).
pub(crate) fn run(view: &View<'_>) -> String {
    let mut out = String::new();
    if let Some(a) = view.analysis {
        analysis_section(&mut out, a);
    }
    if !view.phases.is_empty() {
        phases_section(&mut out, view);
    }
    checks_section_titled(&mut out, "checks", view.checks);
    if let Some(a) = view.analysis {
        for w in &a.warnings {
            let _ = writeln!(out, "warning: {}", one_line(w));
        }
    }
    let _ = write!(out, "verdict: {}", view.verdict.as_str().to_uppercase());
    if let Some(r) = view.reason {
        let _ = write!(out, " ({})", one_line(r));
    }
    out.push('\n');
    out
}

pub use launchguard_analysis::units::{human_bytes, human_us};

fn opt_us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), human_us)
}

fn analysis_section(out: &mut String, a: &Analysis) {
    let s = &a.source;
    let _ = writeln!(
        out,
        "trace  {}  ({}{}, {} events{}{})",
        one_line(&s.path),
        human_bytes(s.bytes),
        if s.gzip { " gzip" } else { "" },
        s.events,
        a.trace.profiler.as_ref().map_or(String::new(), |p| format!(", {}", one_line(p))),
        match (a.trace.rank, a.trace.world_size) {
            (Some(r), Some(w)) => format!(", rank {r} of {w}"),
            _ => String::new(),
        }
    );
    if let Some(w) = &a.within {
        let _ = writeln!(out, "within annotation spans matching '{}'", one_line(w));
        if let Some(rule) = &a.within_rule {
            let _ = writeln!(out, "  measured over {}", one_line(rule));
        }
    }
    out.push('\n');
    for d in &a.devices {
        let name = d.name.as_ref().map_or(String::new(), |n| format!(" ({})", one_line(n)));
        let _ = writeln!(out, "GPU {}{name}", one_line(&d.device));
        figures_lines(out, &d.figures, "  ");
        if let Some(s) = d.steady.as_ref().filter(|s| s.before_us > 0.0 || s.after_us > 0.0) {
            let _ = writeln!(
                out,
                "  steady state of graph replays: occupancy {:.1}%   busy {} of {}   ({} before, {} after it)",
                s.figures.occupancy * 100.0,
                human_us(s.figures.busy_us),
                human_us(s.figures.window_us),
                human_us(s.before_us),
                human_us(s.after_us)
            );
        }
        if d.streams.len() > 1 {
            for st in &d.streams {
                let f = &st.figures;
                let _ = writeln!(
                    out,
                    "  stream {:<6} {:>7} activities  busy {:>10} of {:>10}  occupancy {:5.1}%  gaps > {} µs: {}",
                    one_line(&st.stream),
                    f.activities,
                    human_us(f.busy_us),
                    human_us(f.window_us),
                    f.occupancy * 100.0,
                    f.gaps.threshold_us,
                    f.gaps.over_threshold
                );
            }
        }
        out.push('\n');
    }
    let g = &a.graph_launches;
    if g.count > 0 {
        let _ = writeln!(
            out,
            "graph launches  {} × {}  mean {}  p50 {}  p99 {}  max {}",
            g.count,
            g.apis.join("/"),
            opt_us(g.mean_us),
            opt_us(g.p50_us),
            opt_us(g.p99_us),
            opt_us(g.max_us)
        );
        let r = &a.replay_summary;
        let kernels = match (g.kernels_per_launch.min, g.kernels_per_launch.max) {
            (Some(lo), Some(hi)) if lo == hi => format!("{lo} GPU activities each"),
            (Some(lo), Some(hi)) => {
                format!("{lo}–{hi} GPU activities (usually {})", r.kernels_mode.unwrap_or(0))
            }
            _ => "no GPU activities".to_string(),
        };
        let _ = writeln!(
            out,
            "replays         {kernels}; launch→first kernel p50 {}; GPU span p50 {}; idle before p50 {}",
            opt_us(r.latency_p50_us),
            opt_us(r.gpu_span_p50_us),
            opt_us(r.idle_before_p50_us)
        );
    } else {
        let _ = writeln!(out, "graph launches  none");
    }
    out.push('\n');
    kernels_section(out, &a.kernels, TOP_KERNELS);
}

/// Rows of the kernel table a terminal report shows.
pub const TOP_KERNELS: usize = 10;

/// The kernel table's first `top` rows over the whole trace, and the graphs.
pub(crate) fn kernels_section(out: &mut String, k: &launchguard_analysis::kernels::Kernels, top: usize) {
    if k.kernels.is_empty() {
        return;
    }
    let shown = k.kernels.len().min(top);
    let _ = writeln!(
        out,
        "kernels  {} names, {} GPU activities, {} of GPU time; {}",
        k.kernels.len(),
        k.activities,
        human_us(k.gpu_time_us),
        if shown < k.kernels.len() {
            format!("the top {shown} by total time (all: --format json, --csv, --html)")
        } else {
            "by total time".to_string()
        }
    );
    let _ = writeln!(
        out,
        "  {:>6} {:>10} {:>7} {:>9} {:>9} {:>9}  name",
        "share", "total", "count", "mean", "p50", "p99"
    );
    let names: Vec<&str> = k.kernels.iter().map(|r| r.name.as_str()).collect();
    for (r, name) in k.kernels.iter().zip(crate::names::distinct(&names)).take(top) {
        let _ = writeln!(
            out,
            "  {:>5.1}% {:>10} {:>7} {:>9} {:>9} {:>9}  {name}",
            r.share * 100.0,
            human_us(r.total_us),
            r.count,
            human_us(r.mean_us),
            human_us(r.p50_us),
            human_us(r.p99_us),
        );
    }
    if k.graphs.len() > 1 {
        let graphs: Vec<String> = k
            .graphs
            .iter()
            .take(5)
            .map(|g| format!("{} × {} activities", g.replays, g.kernels_per_replay))
            .collect();
        let more = if k.graphs.len() > 5 { format!(", {} more", k.graphs.len() - 5) } else { String::new() };
        let _ = writeln!(out, "  {} graphs replayed: {}{more}", k.graphs.len(), graphs.join(", "));
    }
    out.push('\n');
}

fn figures_lines(out: &mut String, f: &Figures, indent: &str) {
    let _ = writeln!(
        out,
        "{indent}occupancy {:.1}%   busy {} of a {} window   {} activities",
        f.occupancy * 100.0,
        human_us(f.busy_us),
        human_us(f.window_us),
        f.activities
    );
    let _ = writeln!(
        out,
        "{indent}gaps      {} over {} µs, {} in all, longest {}",
        f.gaps.over_threshold,
        f.gaps.threshold_us,
        f.gaps.count,
        human_us(f.gaps.max_us)
    );
    let hist: Vec<String> = f
        .gaps
        .histogram
        .iter()
        .filter(|b| b.count > 0)
        .map(|b| match b.hi_us {
            Some(hi) => format!("{}–{} µs: {}", b.lo_us, hi, b.count),
            None => format!("≥{} µs: {}", b.lo_us, b.count),
        })
        .collect();
    if !hist.is_empty() {
        let _ = writeln!(out, "{indent}          {}", hist.join("  "));
    }
}

fn phases_section(out: &mut String, view: &View<'_>) {
    let _ = writeln!(
        out,
        "{:<10} {:>10} {:>10} {:>10} {:>14}",
        "phase", "host p50", "host p99", "replays", "GPU per replay"
    );
    for p in view.phases {
        let r = p.report;
        let _ = writeln!(
            out,
            "{:<10} {:>10} {:>10} {:>10} {:>14}",
            p.label,
            opt_us(r.host_p50_us),
            opt_us(r.host_p99_us),
            r.host_us.len(),
            opt_us(r.gpu_us_per_replay)
        );
    }
    out.push('\n');
}

/// The checks as lines under `title`, hints under the checks that warn or fail.
pub(crate) fn checks_section_titled(out: &mut String, title: &str, checks: &[Check]) {
    if checks.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}");
    for c in checks {
        let tag = match c.status {
            Status::Pass => "pass",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        };
        let _ = writeln!(out, "  {tag}  {:<20} {}", c.id, one_line(&c.message));
        if let Some(h) = &c.hint {
            if c.status >= Status::Warn {
                let _ = writeln!(out, "        {:<20} hint: {}", "", one_line(h));
            }
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod paint_tests {
    #[test]
    fn statuses_and_the_verdict_are_coloured_and_nothing_else() {
        let text = "trace  t.json\n  pass  gaps                 0 gaps\n  FAIL  occupancy            70%\n        hint: look\nverdict: FAIL (why)\n";
        let painted = super::paint(text);
        assert!(painted.contains("  \x1b[32mpass\x1b[0m  gaps"), "{painted:?}");
        assert!(painted.contains("  \x1b[1m\x1b[31mFAIL\x1b[0m  occupancy"), "{painted:?}");
        assert!(painted.contains("verdict: \x1b[1m\x1b[31mFAIL\x1b[0m (why)\n"), "{painted:?}");
        assert!(painted.starts_with("trace  t.json\n") && painted.contains("\n        hint: look\n"));
        // Without the codes, the text is the same.
        let plain = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap().replace_all(&painted, "");
        assert_eq!(plain, text);
    }
}
