//! Renderers of a comparison with a baseline (`launchguard.compare/1`), one small module per
//! format as for the reports of one run. They read the judged [`Comparison`] and compute
//! nothing: the metric rows and the kernel rows below are its figures put into words, once, for
//! every format.

pub mod csv;
pub mod html;
pub mod junit;
pub mod markdown;
mod terminal;

pub use terminal::render_terminal;

use launchguard_analysis::kernel_diff::{ChangeKind, KernelChange, KernelDiff};
use launchguard_judge::compare::{format_p, signed, Comparison, Metric, Outcome, RunInfo};
use launchguard_judge::Status;

use crate::names;

/// Kernel rows shown per graph in the terminal, Markdown and HTML (JSON and CSV have all).
pub const TOP_KERNELS: usize = 10;

/// The headers of [`metric_rows`]; the interval's header names its confidence.
pub fn metric_header(c: &Comparison) -> [String; 8] {
    let ci = format!("{:.0}% CI", 100.0 * c.limits.confidence);
    ["metric", "baseline", "current", "shift", &ci, "p", "limit", "status"].map(str::to_string)
}

/// One row of text per metric: name (with its unit), baseline and current medians, shift,
/// interval, p-value, limit, status and outcome.
pub fn metric_rows(c: &Comparison) -> Vec<[String; 8]> {
    c.metrics
        .iter()
        .map(|m| {
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
            [
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
            ]
        })
        .collect()
}

/// The metric's name in a table (the message has the full label), with its rank and graph in
/// runs of several.
pub fn short_name(m: &Metric) -> String {
    let name = match m.figures.id.as_str() {
        "host_before" => "host per replay, before",
        "host_after" => "host per replay, after",
        "gpu_before" => "GPU per replay, before",
        "gpu_after" => "GPU per replay, after",
        "occupancy" if m.figures.label.contains("profiled") => "occupancy, profiled",
        "occupancy" => "occupancy, steady state",
        "graph_launch" if m.figures.label.contains("profiled") => "graph launch, profiled",
        "graph_launch" => "graph launch",
        "launch_interval" => "launch to next launch",
        "gpu_span" => "GPU span per replay",
        "idle_before" => "GPU idle before replay",
        "gaps" => "gaps, steady state",
        _ => m.figures.label.as_str(),
    };
    let mut out = String::new();
    if let Some(r) = m.figures.rank {
        out.push_str(&format!("rank {r}: "));
    }
    if let Some(g) = &m.figures.graph {
        out.push_str(&format!("graph of {g}: "));
    }
    out + name
}

/// The outcome in words.
pub fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Regression => "regression",
        Outcome::Improvement => "improvement",
        Outcome::NotSignificant => "not significant",
        Outcome::BelowFloor => "below limit",
        Outcome::WithinLimit => "within limit",
        Outcome::NotMeasured => "not measured",
    }
}

/// A run's line: path, preset, GPU, torch, launchguard, its own verdict.
pub fn run_line(r: &RunInfo) -> String {
    let line = format!(
        "{}  {}, {}, torch {}, launchguard {}, verdict {}",
        r.path.as_deref().unwrap_or("-"),
        r.preset,
        r.gpu_name.as_deref().unwrap_or("unknown GPU"),
        r.torch.as_deref().unwrap_or("unknown"),
        r.launchguard_version,
        r.verdict.as_str()
    );
    // Read from the files compared: anyone's text.
    crate::escape::one_line(&line).into_owned()
}

/// The failing checks of a comparison, `id: message`.
pub fn failures(c: &Comparison) -> Vec<String> {
    c.checks()
        .into_iter()
        .filter(|k| k.status == Status::Fail)
        .map(|k| format!("{}: {}", k.id, k.message))
        .collect()
}

/// The headers of the rows of a [`KernelTable`].
pub const KERNEL_HEADER: [&str; 7] =
    ["kernel", "baseline", "current", "shift", "count", "mean per call", "change"];

/// One scope of a kernel diff, as shown: its title and its rows (at most `top`).
pub struct KernelTable {
    /// `rank 1, graph of 44 kernels (µs per replay)`.
    pub title: String,
    /// Rows of [`KERNEL_HEADER`].
    pub rows: Vec<[String; 7]>,
    /// Rows left out.
    pub more: usize,
}

/// The kernel diff of every rank as tables: each matched graph (times per replay), or the whole
/// trace's rows when no graph matched; largest change first, `top` rows each.
pub fn kernel_tables(diffs: &[KernelDiff], top: usize) -> Vec<KernelTable> {
    let mut out = Vec::new();
    for d in diffs {
        let rank = d.rank.map_or(String::new(), |r| format!("rank {r}, "));
        if d.graphs.is_empty() {
            out.push(table(format!("{rank}whole trace (µs in all)"), &d.trace, top));
        }
        for g in &d.graphs {
            let title = format!(
                "{rank}graph of {} (µs per replay; {} → {} replays, GPU time {:.1} → {:.1} µs per replay)",
                g.graph,
                g.baseline_replays,
                g.current_replays,
                g.baseline_gpu_per_replay_us,
                g.current_gpu_per_replay_us
            );
            out.push(table(title, &g.changes, top));
        }
    }
    out
}

fn table(title: String, changes: &[KernelChange], top: usize) -> KernelTable {
    let shown = &changes[..changes.len().min(top)];
    // One display name per full name: the positions of one kernel share it.
    let mut full: Vec<&str> = shown.iter().map(|c| c.name.as_str()).collect();
    full.sort_unstable();
    full.dedup();
    let display = names::distinct(&full);
    let short = shown.iter().map(|c| display[full.binary_search(&c.name.as_str()).unwrap_or(0)].clone());
    let rows = shown
        .iter()
        .zip(short)
        .map(|(c, name)| {
            let name = match c.occurrence {
                Some(k) => format!("{name} #{k}"),
                None => name,
            };
            let time = |s: Option<launchguard_analysis::kernel_diff::KernelSide>| {
                s.map_or("–".to_string(), |s| format!("{:.1}", s.time_us))
            };
            let count = |v: f64| if v.fract() == 0.0 { format!("{v:.0}") } else { format!("{v:.2}") };
            let counts = match (c.baseline, c.current) {
                (Some(b), Some(k)) if b.count == k.count => count(b.count),
                (b, k) => format!(
                    "{} → {}",
                    b.map_or("0".into(), |s| count(s.count)),
                    k.map_or("0".into(), |s| count(s.count))
                ),
            };
            let mean = match (c.baseline, c.current) {
                (Some(b), Some(k)) => format!("{:.2} → {:.2}", b.mean_us, k.mean_us),
                (Some(b), None) => format!("{:.2}", b.mean_us),
                (None, Some(k)) => format!("{:.2}", k.mean_us),
                (None, None) => "–".into(),
            };
            let change = match c.change {
                ChangeKind::Matched => "",
                ChangeKind::Appeared => "appeared",
                ChangeKind::Vanished => "vanished",
            };
            [
                name,
                time(c.baseline),
                time(c.current),
                signed(c.time_shift_us, 1),
                counts,
                mean,
                change.to_string(),
            ]
        })
        .collect();
    KernelTable { title, rows, more: changes.len().saturating_sub(top) }
}
