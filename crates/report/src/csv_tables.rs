//! The tables as CSV files with a header row, for pandas or a spreadsheet (`--csv DIR`):
//! `kernels.csv` (every row of the kernel table, each scope), `replays.csv`, `gaps.csv` (every idle
//! gap, from the spans the analysis measured) and, with several ranks, `ranks.csv`. Each file is
//! written atomically; times are µs as in the JSON, names in full but escaped and never a formula
//! ([`crate::escape::csv_cell`]).

use launchguard_analysis::kernels::KernelRow;
use launchguard_analysis::model::Analysis;
use launchguard_analysis::spans::Findings;

use crate::error::Result;
use crate::{names, View};

/// One trace's part of the tables: its rank (with several), its figures, its spans.
struct Part<'a> {
    rank: Option<u64>,
    analysis: &'a Analysis,
    findings: Option<&'a Findings>,
}

/// The traces of the view: each rank's with several ranks, else the one trace.
fn parts<'a>(view: &View<'a>) -> Vec<Part<'a>> {
    match &view.ranks {
        Some(r) => r
            .analysis
            .ranks
            .iter()
            .map(|k| Part {
                rank: Some(k.rank),
                analysis: &k.analysis.figures,
                findings: r
                    .findings_of(k.rank)
                    .or_else(|| (k.rank == r.detail_rank).then_some(view.findings).flatten()),
            })
            .collect(),
        None => view
            .analysis
            .map(|a| Part { rank: None, analysis: a, findings: view.findings })
            .into_iter()
            .collect(),
    }
}

/// A CSV table being written: every cell through [`crate::escape::csv_cell`] (escaped, formulas
/// neutralized), the same for every table launchguard writes.
pub(crate) struct Table(csv::Writer<Vec<u8>>);

impl Table {
    pub(crate) fn new() -> Self {
        Table(csv::Writer::from_writer(Vec::new()))
    }

    /// Writes one row.
    pub(crate) fn row<I, S>(&mut self, cells: I) -> csv::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.0.write_record(cells.into_iter().map(|c| crate::escape::csv_cell(c.as_ref()).into_owned()))
    }

    /// The table's bytes.
    pub(crate) fn finish(self) -> Result<Vec<u8>> {
        Ok(self.0.into_inner()?)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn rank(p: &Part<'_>) -> String {
    p.rank.map_or_else(String::new, |r| r.to_string())
}

/// The tables, `(file name, bytes)`, in order.
pub(crate) fn tables(view: &View<'_>) -> Result<Vec<(&'static str, Vec<u8>)>> {
    let parts = parts(view);
    let mut out = vec![
        ("kernels.csv", kernels(&parts)?),
        ("replays.csv", replays(&parts)?),
        ("gaps.csv", gaps(&parts)?),
    ];
    if let Some(r) = &view.ranks {
        out.push(("ranks.csv", ranks(r.analysis)?));
    }
    Ok(out)
}

fn kernels(parts: &[Part<'_>]) -> Result<Vec<u8>> {
    let mut w = Table::new();
    w.row([
        "rank",
        "scope",
        "device",
        "stream",
        "graph",
        "name",
        "short_name",
        "kind",
        "count",
        "total_us",
        "mean_us",
        "p50_us",
        "p99_us",
        "max_us",
        "share",
    ])?;
    let mut rows =
        |p: &Part<'_>, scope: &str, device: &str, stream: &str, graph: &str, kernels: &[KernelRow]| {
            let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
            for (k, short) in kernels.iter().zip(names::distinct(&names)) {
                w.row([
                    rank(p),
                    scope.to_string(),
                    device.to_string(),
                    stream.to_string(),
                    graph.to_string(),
                    k.name.clone(),
                    short,
                    k.kind.clone(),
                    k.count.to_string(),
                    k.total_us.to_string(),
                    k.mean_us.to_string(),
                    k.p50_us.to_string(),
                    k.p99_us.to_string(),
                    k.max_us.to_string(),
                    k.share.to_string(),
                ])?;
            }
            Ok::<_, csv::Error>(())
        };
    for p in parts {
        let k = &p.analysis.kernels;
        rows(p, "trace", "", "", "", &k.kernels)?;
        for d in &k.devices {
            rows(p, "device", &d.device, "", "", &d.kernels)?;
        }
        for s in &k.streams {
            rows(p, "stream", &s.device, s.stream.as_deref().unwrap_or(""), "", &s.kernels)?;
        }
        for g in &k.graphs {
            rows(p, "graph", "", "", &g.graph.to_string(), &g.kernels)?;
        }
    }
    w.finish()
}

fn replays(parts: &[Part<'_>]) -> Result<Vec<u8>> {
    let mut w = Table::new();
    w.row([
        "rank",
        "index",
        "correlation",
        "device",
        "launch_start_us",
        "launch_us",
        "kernels",
        "launch_to_first_kernel_us",
        "gpu_span_us",
        "idle_before_us",
        "graph",
    ])?;
    for p in parts {
        for r in &p.analysis.replays {
            w.row([
                rank(p),
                r.index.to_string(),
                r.correlation.map_or_else(String::new, |c| c.to_string()),
                r.device.clone().unwrap_or_default(),
                r.launch_start_us.to_string(),
                r.launch_us.to_string(),
                r.kernels.to_string(),
                opt(r.launch_to_first_kernel_us),
                opt(r.gpu_span_us),
                opt(r.idle_before_us),
                r.graph.map_or_else(String::new, |g| g.to_string()),
            ])?;
        }
    }
    w.finish()
}

fn gaps(parts: &[Part<'_>]) -> Result<Vec<u8>> {
    let mut w = Table::new();
    w.row(["rank", "device", "start_us", "end_us", "length_us", "over_threshold"])?;
    let micros = |ns: i64| launchguard_trace::time::format_ns_as_micros(ns);
    for p in parts {
        let Some(f) = p.findings else { continue };
        for d in &f.devices {
            for &(s, e) in &d.gaps {
                w.row([
                    rank(p),
                    d.label.clone(),
                    micros(s),
                    micros(e),
                    micros(e - s),
                    (e - s > f.threshold_ns).to_string(),
                ])?;
            }
        }
    }
    w.finish()
}

fn ranks(r: &launchguard_judge::RanksReport) -> Result<Vec<u8>> {
    let mut w = Table::new();
    w.row([
        "rank",
        "verdict",
        "window",
        "window_start_us",
        "window_us",
        "busy_us",
        "occupancy",
        "compute_busy_us",
        "collective_busy_us",
        "collective_wait_us",
        "busy_excluding_wait_us",
        "occupancy_excluding_wait",
        "worst",
    ])?;
    for k in &r.ranks {
        for (window, f) in [("own", Some(&k.whole)), ("common", k.common.as_ref())] {
            let Some(f) = f else { continue };
            w.row([
                k.rank.to_string(),
                k.verdict.as_str().to_string(),
                window.to_string(),
                f.window_start_us.to_string(),
                f.window_us.to_string(),
                f.busy_us.to_string(),
                f.occupancy.to_string(),
                f.compute_busy_us.to_string(),
                f.collective_busy_us.to_string(),
                opt(f.collective_wait_us),
                opt(f.busy_excluding_wait_us),
                opt(f.occupancy_excluding_wait),
                (k.rank == r.across.worst_rank).to_string(),
            ])?;
        }
    }
    w.finish()
}
