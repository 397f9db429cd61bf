//! The kernel diff of a comparison of traces: which GPU activities changed between a baseline
//! and a current trace, how much time and how many instances, and which appeared or vanished.
//! What HTA's TraceDiff and TraceLens show, here per graph as well as over the trace.
//!
//! Definitions (the contract):
//! - **Trace rows** match names over the whole trace: counts and total durations as measured,
//!   so a trace with more replays has more of everything; `time_shift_us` is the change of the
//!   total.
//! - **Graph rows** match the graphs as the metrics do (by their kernels' names, else by their
//!   kernel count), then kernels by name, and by position where a replay runs a name more than
//!   once (the `k`-th instance in each replay, [`crate::kernels::GraphKernels::positions`]).
//!   Figures are per replay, so runs with different replay counts compare: `time_shift_us` is
//!   the change of the name's time per replay, `count_shift` of its instances per replay.
//! - Rows are ordered by the size of `time_shift_us`, largest first (ties by name, position).
//!
//! Informational: the judge decides on the metrics (GPU time per replay among them), never on a
//! single kernel.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kernels::{GraphKernels, KernelRow, Kernels};
use crate::model::GraphFigures;

/// The kernel diff of one rank (or of a trace of one process).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct KernelDiff {
    /// The rank, in runs of several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// Per matched graph, the main graph (most replayed in the baseline) first.
    pub graphs: Vec<GraphDiff>,
    /// Over the whole trace, by name.
    pub trace: Vec<KernelChange>,
}

/// The kernel diff of one graph matched in both traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphDiff {
    /// The graph, as the metrics name it (`44 kernels`).
    pub graph: String,
    /// Replays of it in the baseline.
    pub baseline_replays: u64,
    /// Replays of it in the current trace.
    pub current_replays: u64,
    /// Summed GPU time per replay, baseline, µs.
    pub baseline_gpu_per_replay_us: f64,
    /// Summed GPU time per replay, current, µs.
    pub current_gpu_per_replay_us: f64,
    /// One row per name (and position), largest change first.
    pub changes: Vec<KernelChange>,
}

/// Whether a row exists on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// In both traces.
    Matched,
    /// Only in the current trace.
    Appeared,
    /// Only in the baseline.
    Vanished,
}

/// One side of a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelSide {
    /// Instances (per replay for graph rows).
    pub count: f64,
    /// Time (per replay for graph rows), µs.
    pub time_us: f64,
    /// Mean duration of one instance, µs.
    pub mean_us: f64,
    /// Median duration of one instance, µs.
    pub p50_us: f64,
}

/// One name's (or one position's) change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelChange {
    /// The name as in the traces.
    pub name: String,
    /// `kernel`, `memcpy` or `memset`.
    pub kind: String,
    /// For a name a replay runs several times: which instance (1 = first in each replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<u32>,
    /// Matched, appeared or vanished.
    pub change: ChangeKind,
    /// The baseline's figures.
    pub baseline: Option<KernelSide>,
    /// The current trace's figures.
    pub current: Option<KernelSide>,
    /// current − baseline time (per replay for graph rows; a missing side counts 0), µs.
    pub time_shift_us: f64,
    /// current − baseline instances (per replay for graph rows).
    pub count_shift: f64,
    /// current − baseline mean duration of one instance (matched rows), µs.
    pub mean_shift_us: Option<f64>,
}

/// What identifies a graph across traces.
pub trait GraphKey {
    /// GPU activities per replay.
    fn kernels(&self) -> u64;
    /// Hash of its kernels' names.
    fn signature(&self) -> &str;
}

impl GraphKey for GraphFigures {
    fn kernels(&self) -> u64 {
        self.kernels
    }
    fn signature(&self) -> &str {
        &self.signature
    }
}

impl GraphKey for (u64, &str) {
    fn kernels(&self) -> u64 {
        self.0
    }
    fn signature(&self) -> &str {
        self.1
    }
}

/// Graph pairs `(baseline index, current index)` of two traces' graphs: first by their kernels'
/// names, then the rest by kernel count (another process may pick other GEMM kernels for the
/// same graph); each graph at most once, in the baseline's order.
pub fn match_graphs<B: GraphKey, C: GraphKey>(baseline: &[B], current: &[C]) -> Vec<(usize, usize)> {
    let mut used = vec![false; current.len()];
    let mut pair: Vec<Option<usize>> = vec![None; baseline.len()];
    for (bi, b) in baseline.iter().enumerate() {
        if let Some(ci) = (0..current.len()).find(|&i| !used[i] && current[i].signature() == b.signature()) {
            used[ci] = true;
            pair[bi] = Some(ci);
        }
    }
    for (bi, b) in baseline.iter().enumerate() {
        if pair[bi].is_none() {
            if let Some(ci) = (0..current.len()).find(|&i| !used[i] && current[i].kernels() == b.kernels()) {
                used[ci] = true;
                pair[bi] = Some(ci);
            }
        }
    }
    pair.into_iter().enumerate().filter_map(|(bi, c)| Some((bi, c?))).collect()
}

/// One trace's side of the diff: its kernel table and its graphs (`replay_summary.graphs`).
#[derive(Debug, Clone, Copy)]
pub struct KernelSource<'a> {
    /// The kernel table (measured with positions for graph rows by position).
    pub kernels: &'a Kernels,
    /// The graphs, as the replays number them.
    pub graphs: &'a [GraphFigures],
}

/// The kernel diff of `current` against `baseline`, for `rank`.
pub fn kernel_diff(baseline: KernelSource<'_>, current: KernelSource<'_>, rank: Option<u64>) -> KernelDiff {
    let trace = changes(&by_name(&baseline.kernels.kernels, 1.0), &by_name(&current.kernels.kernels, 1.0));
    let mut pairs = match_graphs(baseline.graphs, current.graphs);
    // The main graph first: the one the baseline replayed most.
    pairs.sort_by_key(|&(bi, _)| std::cmp::Reverse(baseline.graphs[bi].replays));
    fn table<'k>(s: KernelSource<'k>, i: usize) -> Option<&'k GraphKernels> {
        s.kernels.graphs.iter().find(|g| g.graph == i as u64)
    }
    let mut graphs = Vec::new();
    for (bi, ci) in pairs {
        let (Some(b), Some(c)) = (table(baseline, bi), table(current, ci)) else { continue };
        if b.replays == 0 || c.replays == 0 {
            continue;
        }
        let (bk, ck) = graph_rows(b, c);
        graphs.push(GraphDiff {
            graph: format!("{} kernels", baseline.graphs[bi].kernels),
            baseline_replays: b.replays,
            current_replays: c.replays,
            baseline_gpu_per_replay_us: b.gpu_time_per_replay_us,
            current_gpu_per_replay_us: c.gpu_time_per_replay_us,
            changes: changes(&bk, &ck),
        });
    }
    KernelDiff { rank, graphs, trace }
}

/// A row's key: name, and position for a repeated name.
type Key = (String, Option<u32>);

/// Rows by key, with their kind.
type Rows = BTreeMap<Key, (String, KernelSide)>;

/// Rows keyed by name, their counts and times divided by `per` (replays, or 1).
fn by_name(rows: &[KernelRow], per: f64) -> Rows {
    rows.iter().map(|r| ((r.name.clone(), None), (r.kind.clone(), side(r, per)))).collect()
}

fn side(r: &KernelRow, per: f64) -> KernelSide {
    KernelSide {
        count: r.count as f64 / per,
        time_us: r.total_us / per,
        mean_us: r.mean_us,
        p50_us: r.p50_us,
    }
}

/// Both graphs' rows, keyed alike: a name repeated within a replay on either side is keyed by
/// position on both (a side that runs it once has it at position 1).
fn graph_rows(b: &GraphKernels, c: &GraphKernels) -> (Rows, Rows) {
    let repeated: std::collections::BTreeSet<&str> =
        b.positions.iter().chain(&c.positions).map(|p| p.row.name.as_str()).collect();
    let rows = |g: &GraphKernels| {
        let per = g.replays as f64;
        let mut m = BTreeMap::new();
        for r in &g.kernels {
            let occurrence = repeated.contains(r.name.as_str()).then_some(1);
            if occurrence.is_none() || !g.positions.iter().any(|p| p.row.name == r.name) {
                m.insert((r.name.clone(), occurrence), (r.kind.clone(), side(r, per)));
            }
        }
        for p in &g.positions {
            m.insert((p.row.name.clone(), Some(p.occurrence)), (p.row.kind.clone(), side(&p.row, per)));
        }
        m
    };
    (rows(b), rows(c))
}

/// The rows of two keyed tables, largest time change first.
fn changes(b: &Rows, c: &Rows) -> Vec<KernelChange> {
    let mut keys: Vec<&Key> = b.keys().chain(c.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<KernelChange> = keys
        .into_iter()
        .map(|k| {
            let (bs, cs) = (b.get(k), c.get(k));
            let kind = bs.or(cs).map(|s| s.0.clone()).unwrap_or_default();
            let (bs, cs) = (bs.map(|s| s.1), cs.map(|s| s.1));
            let time = |s: Option<KernelSide>| s.map_or(0.0, |s| s.time_us);
            let count = |s: Option<KernelSide>| s.map_or(0.0, |s| s.count);
            KernelChange {
                name: k.0.clone(),
                kind,
                occurrence: k.1,
                change: match (bs, cs) {
                    (Some(_), Some(_)) => ChangeKind::Matched,
                    (None, _) => ChangeKind::Appeared,
                    (_, None) => ChangeKind::Vanished,
                },
                baseline: bs,
                current: cs,
                time_shift_us: time(cs) - time(bs),
                count_shift: count(cs) - count(bs),
                mean_shift_us: bs.zip(cs).map(|(b, c)| c.mean_us - b.mean_us),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.time_shift_us
            .abs()
            .total_cmp(&a.time_shift_us.abs())
            .then_with(|| a.name.cmp(&b.name))
            .then(a.occurrence.cmp(&b.occurrence))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_match_by_names_then_count_each_once() {
        let base = [(44, "a"), (44, "b"), (10, "c")];
        let cur = [(44, "b"), (44, "x"), (12, "c")];
        // "a" has no same-named graph: it takes the free 44-kernel graph; "b" its namesake;
        // "c" keeps its names though its count changed.
        assert_eq!(match_graphs(&base, &cur), vec![(0, 1), (1, 0), (2, 2)]);
        assert_eq!(match_graphs(&[(5, "z")], &[(6, "y")]), vec![]);
    }
}
