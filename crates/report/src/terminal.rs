//! The readable report printed by default.

use std::fmt::Write as _;

use launchguard_analysis::model::{Analysis, Figures, GraphLaunches};
use launchguard_judge::{Check, Status};

use crate::escape::one_line;
use crate::fit::{self, wrap_into};
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

/// The plain-text report of one trace's run for a terminal `cols` columns wide (no colour codes:
/// CI logs stay clean; [`paint`] adds them where the output is a terminal).
pub(crate) fn run(view: &View<'_>, cols: usize) -> String {
    let mut out = String::new();
    if let Some(a) = view.analysis {
        analysis_section(&mut out, a, cols);
    }
    if !view.phases.is_empty() {
        phases_section(&mut out, view);
    }
    checks_section_titled(&mut out, "checks", view.checks, cols);
    if let Some(a) = view.analysis {
        for w in &a.warnings {
            wrap_into(&mut out, "warning: ", &one_line(w), 9, cols);
        }
    }
    verdict_line(&mut out, view.verdict.as_str(), view.reason, cols);
    out
}

/// "verdict: FAIL (why)", wrapped.
pub(crate) fn verdict_line(out: &mut String, verdict: &str, reason: Option<&str>, cols: usize) {
    let text = match reason {
        Some(r) => format!("{} ({})", verdict.to_uppercase(), one_line(r)),
        None => verdict.to_uppercase(),
    };
    wrap_into(out, "verdict: ", &text, 9, cols);
}

pub use launchguard_analysis::units::{human_bytes, human_us, human_us_alike};

/// The graph launches' mean, p50, p99 and max, in one unit.
pub(crate) fn launch_figures(g: &GraphLaunches) -> [String; 4] {
    // Four figures in, four out.
    human_us_alike(&[g.mean_us, g.p50_us, g.p99_us, g.max_us]).try_into().unwrap_or_default()
}

/// A steady state's busy time, window, and the time before and after it.
pub(crate) fn steady_times(s: &launchguard_analysis::model::Steady) -> [String; 4] {
    [s.figures.busy_us, s.figures.window_us, s.before_us, s.after_us].map(human_us)
}

/// A time, or "–" where there is none.
pub(crate) fn opt_us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), human_us)
}

fn analysis_section(out: &mut String, a: &Analysis, cols: usize) {
    let s = &a.source;
    let head = format!(
        "{}  ({}{}, {} events{}{})",
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
    wrap_into(out, "trace  ", &head, 7, cols);
    if let Some(w) = &a.within {
        let mode = within_mode(a);
        let pattern = launchguard_analysis::analyze::quoted(&one_line(w));
        wrap_into(out, "within ", &format!("annotation spans matching {pattern}{mode}"), 7, cols);
        if let Some(rule) = &a.within_rule {
            wrap_into(out, "  ", &format!("measured over {}", one_line(rule)), 7, cols);
        }
    }
    out.push('\n');
    for d in &a.devices {
        let name = d.name.as_ref().map_or(String::new(), |n| format!(" ({})", one_line(n)));
        let _ = writeln!(out, "GPU {}{name}", one_line(&d.device));
        figures_lines(out, &d.figures, "  ", cols);
        if let Some(s) = d.steady.as_ref().filter(|s| s.before_us > 0.0 || s.after_us > 0.0) {
            let [busy, window, before, after] = steady_times(s);
            let (occupancy, gaps) = (s.figures.occupancy * 100.0, &s.figures.gaps);
            let text = format!(
                "occupancy {occupancy:.1}%   busy {busy} of {window}   ({before} before, {after} after it); gaps over {} µs: {}",
                gaps.threshold_us, gaps.over_threshold
            );
            wrap_into(out, "  steady state of graph replays (what the checks judge): ", &text, 12, cols);
        }
        if d.streams.len() > 1 {
            let _ = writeln!(
                out,
                "  {:<8} {:>10} {:>10} {:>10} {:>9} {:>12}",
                "stream", "activities", "busy", "window", "occupancy", "gaps > limit"
            );
            for st in &d.streams {
                let f = &st.figures;
                let _ = writeln!(
                    out,
                    "  {} {:>10} {:>10} {:>10} {:>8.1}% {:>12}",
                    fit::left(&fit::cut_middle(&one_line(&st.stream), 8), 8),
                    f.activities,
                    human_us(f.busy_us),
                    human_us(f.window_us),
                    f.occupancy * 100.0,
                    f.gaps.over_threshold
                );
            }
        }
        out.push('\n');
    }
    let g = &a.graph_launches;
    if g.count > 0 {
        wrap_into(out, "graph launches  ", &launch_times(g, "  ", "  ", |m| m), 16, cols);
        let r = &a.replay_summary;
        let kernels = replay_kernels(a);
        let text = format!(
            "{kernels}; launch→first kernel p50 {}; GPU span p50 {}; idle before p50 {}",
            opt_us(r.latency_p50_us),
            opt_us(r.gpu_span_p50_us),
            opt_us(r.idle_before_p50_us)
        );
        wrap_into(out, "replays         ", &text, 16, cols);
    } else {
        let _ = writeln!(out, "graph launches  none");
    }
    out.push('\n');
    kernels_section(out, "kernels", &a.kernels, TOP_KERNELS, cols);
}

/// How `--within` bounded the activity, as words after the pattern (every format says it).
pub(crate) fn within_mode(a: &Analysis) -> &'static str {
    match a.within_mode.as_deref() {
        Some("span interiors") => ", inside them only (--within-interiors)",
        Some(_) => ", from the first to the last, what lies between included",
        None => "",
    }
}

/// The GPU activities of each replay: "44 GPU activities each", or where replays ran different
/// numbers, "4–15 GPU activities (usually 15)". Every format says it so.
pub(crate) fn replay_kernels(a: &Analysis) -> String {
    let g = &a.graph_launches;
    match (g.kernels_per_launch.min, g.kernels_per_launch.max) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} GPU activities each"),
        (Some(lo), Some(hi)) => {
            format!("{lo}–{hi} GPU activities (usually {})", a.replay_summary.kernels_mode.unwrap_or(0))
        }
        _ => "no GPU activities".to_string(),
    }
}

/// The graph launches in a line: "120 × cudaGraphLaunch", `after`, then their mean, p50, p99 and
/// max, each after its name and `sep` between them, the mean dressed by `mean` (Markdown makes it
/// bold). Every format says them so.
pub(crate) fn launch_times(
    g: &GraphLaunches,
    after: &str,
    sep: &str,
    mean: impl Fn(String) -> String,
) -> String {
    let [m, p50, p99, max] = launch_figures(g);
    let times =
        [format!("mean {}", mean(m)), format!("p50 {p50}"), format!("p99 {p99}"), format!("max {max}")];
    format!("{} × {}{after}{}", g.count, g.apis.join("/"), times.join(sep))
}

/// Rows of the kernel table a terminal report shows.
pub const TOP_KERNELS: usize = 10;

/// The kernel table's first `top` rows over the whole trace, and the graphs; one unit per column
/// of times, the names cut in the middle to fit `cols`.
pub(crate) fn kernels_section(
    out: &mut String,
    title: &str,
    k: &launchguard_analysis::kernels::Kernels,
    top: usize,
    cols: usize,
) {
    if k.kernels.is_empty() {
        return;
    }
    let shown = k.kernels.len().min(top);
    let head = format!(
        "{} names, {} GPU activities, {} of GPU time; {}",
        k.kernels.len(),
        k.activities,
        human_us(k.gpu_time_us),
        if shown < k.kernels.len() {
            format!("the top {shown} by total time (all: --format json, --csv, --html)")
        } else {
            "by total time".to_string()
        }
    );
    wrap_into(out, &format!("{title}  "), &head, 9, cols);
    let rows = &k.kernels[..shown];
    let unit = |f: fn(&launchguard_analysis::kernels::KernelRow) -> f64| fit::column_unit(rows.iter().map(f));
    let units = [unit(|r| r.total_us), unit(|r| r.mean_us), unit(|r| r.p50_us), unit(|r| r.p99_us)];
    let _ = write!(out, "  {:>6} {:>6}", "share", "count");
    for (name, u) in ["total", "mean", "p50", "p99"].iter().zip(&units) {
        let _ = write!(out, " {}", fit::right(&format!("{name} {}", u.0), 8));
    }
    out.push_str("  name\n");
    // The name gets what the numbers leave, at least 20 columns.
    let room = cols.max(fit::MIN_WIDTH).saturating_sub(2 + 6 + 1 + 6 + 4 * 9 + 2).max(20);
    let names: Vec<&str> = k.kernels.iter().map(|r| r.name.as_str()).collect();
    for (r, name) in rows.iter().zip(crate::names::distinct(&names)) {
        let _ = write!(out, "  {:>5.1}% {:>6}", r.share * 100.0, r.count);
        for (v, u) in [r.total_us, r.mean_us, r.p50_us, r.p99_us].iter().zip(&units) {
            let _ = write!(out, " {:>8}", fit::in_unit(*v, *u));
        }
        let _ = writeln!(out, "  {}", fit::cut_middle(&name, room));
    }
    if k.graphs.len() > 1 {
        let graphs: Vec<String> = k
            .graphs
            .iter()
            .take(5)
            .map(|g| format!("{} × {} activities", g.replays, g.kernels_per_replay))
            .collect();
        let more = if k.graphs.len() > 5 { format!(", {} more", k.graphs.len() - 5) } else { String::new() };
        wrap_into(
            out,
            "  ",
            &format!("{} graphs replayed: {}{more}", k.graphs.len(), graphs.join(", ")),
            4,
            cols,
        );
    }
    out.push('\n');
}

fn figures_lines(out: &mut String, f: &Figures, indent: &str, cols: usize) {
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
        .map(|b| gap_bucket(b.lo_us, b.hi_us, b.count))
        .collect();
    if !hist.is_empty() {
        let lead = format!("{indent}          ");
        let n = lead.len();
        wrap_into(out, &lead, &hist.join("  "), n, cols);
    }
}

/// A gap bucket in the unit of its bounds: "0–10 µs: 4300", "1–10 ms: 3", "≥1 s: 1".
pub(crate) fn gap_bucket(lo: f64, hi: Option<f64>, count: u64) -> String {
    let whole = |v: f64| v.fract() == 0.0 && (0.0..1e15).contains(&v);
    if !whole(lo) || !hi.is_none_or(whole) {
        return match hi {
            Some(hi) => format!("{lo}–{hi} µs: {count}"),
            None => format!("≥{lo} µs: {count}"),
        };
    }
    let (lo_us, hi_us) = (lo as u64, hi.map(|h| h as u64));
    let unit = |us: u64| -> (&'static str, u64) {
        if us >= 1_000_000 && us.is_multiple_of(1_000_000) {
            ("s", 1_000_000)
        } else if us >= 1000 && us.is_multiple_of(1000) {
            ("ms", 1000)
        } else {
            ("µs", 1)
        }
    };
    match hi_us {
        // Both bounds in the upper bound's unit when the lower one divides into it.
        Some(hi) => {
            let (name, size) = unit(hi);
            if lo_us.is_multiple_of(size) {
                format!("{}–{} {name}: {count}", lo_us / size, hi / size)
            } else {
                format!("{lo_us}–{hi} µs: {count}")
            }
        }
        None => {
            let (name, size) = unit(lo_us);
            format!("≥{} {name}: {count}", lo_us / size)
        }
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

/// Where a check's message starts: "  pass  " and the id's column.
pub(crate) const MESSAGE_AT: usize = 29;

/// The checks as lines under `title`, hints under the checks that warn or fail; each message
/// wrapped under itself to fit `cols`.
pub(crate) fn checks_section_titled(out: &mut String, title: &str, checks: &[Check], cols: usize) {
    checks_section_cut(out, title, checks, cols, false);
}

/// The checks as [`checks_section_titled`] writes them; with `cut_passing`, the message of a
/// check that passed or skipped is cut to its one line (where hundreds of ranks make the report
/// long, what failed gets the room).
pub(crate) fn checks_section_cut(
    out: &mut String,
    title: &str,
    checks: &[Check],
    cols: usize,
    cut_passing: bool,
) {
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
        let lead = format!("  {tag}  {:<20} ", c.id);
        if cut_passing && c.status <= Status::Pass {
            let room = cols.max(fit::MIN_WIDTH).saturating_sub(fit::width(&lead));
            let message = one_line(&c.message);
            let cut = if fit::width(&message) > room {
                let mut kept = String::new();
                for ch in message.chars() {
                    if fit::width(&kept) + 2 > room {
                        break;
                    }
                    kept.push(ch);
                }
                format!("{}…", kept.trim_end())
            } else {
                message.to_string()
            };
            let _ = writeln!(out, "{lead}{cut}");
            continue;
        }
        wrap_into(out, &lead, &one_line(&c.message), MESSAGE_AT, cols);
        if let Some(h) = &c.hint {
            if c.status >= Status::Warn {
                let lead = " ".repeat(MESSAGE_AT);
                wrap_into(out, &lead, &format!("hint: {}", one_line(h)), MESSAGE_AT + 6, cols);
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
