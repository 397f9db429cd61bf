//! The cross-rank part of a multi-rank result as plain text cells, shared by the Markdown and the
//! HTML reports (each escapes and lays them out its own way). The figures and their wording follow
//! [`crate::ranks_terminal`]: per rank over the common window (where the verdicts are judged) and
//! over its own window, then the figures that compare the ranks.

use launchguard_analysis::model_ranks::{RankFigures, Skew};
use launchguard_judge::Verdict;
use launchguard_judge::{RankReport, RanksReport};

use crate::terminal::human_us;
use crate::RanksView;

/// An occupancy as a percentage with one decimal, "–" for none.
pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{:.1}%", x * 100.0))
}

/// Microseconds as short text, "–" for none.
pub(crate) fn opt_us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), human_us)
}

/// One column of the per-rank table.
pub(crate) struct Column {
    /// Header text.
    pub name: &'static str,
    /// Right-aligned (a number).
    pub num: bool,
}

/// One row of the per-rank table.
pub(crate) struct Row {
    /// The rank.
    pub rank: u64,
    /// Its verdict.
    pub verdict: Verdict,
    /// The cells after the rank and verdict columns, one per [`Table::columns`].
    pub cells: Vec<String>,
}

/// The per-rank table: one row per rank, in rank order.
pub(crate) struct Table {
    /// What the figures are measured over, one sentence or two.
    pub note: String,
    /// The columns after "rank" and "verdict".
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Row>,
}

const fn col(name: &'static str) -> Column {
    Column { name, num: true }
}

/// The per-rank table. With a common window, the main figures are over it (the verdicts are
/// judged there) and each rank's own window follows; without one, only each rank's own window.
pub(crate) fn table(r: &RanksReport) -> Table {
    let common = r.across.figures.common_window.is_some();
    let mut columns = vec![col("occupancy"), col("excl. waiting"), col("busy"), col("waiting")];
    if common {
        columns.extend([col("own window"), col("occupancy, own window"), col("excl. waiting, own window")]);
    }
    columns.extend([col("graph launch p50"), col("graph launch max"), col("GPU activities per replay")]);
    let note = match &r.across.figures.common_window {
        Some(w) => format!(
            "Figures over the common window, {}, in which every rank was recorded (the verdicts are judged there); own window: each rank's first to last GPU activity. Waiting: collectives running before the last rank reached them; excl. waiting: occupancy without it.",
            human_us(w.length_us)
        ),
        None => "No common window (see the warnings): figures over each rank's own window (first to last GPU activity), where the verdicts are judged. Waiting: collectives running before the last rank reached them; excl. waiting: occupancy without it.".to_string(),
    };
    let rows = r
        .ranks
        .iter()
        .map(|k| {
            let main: &RankFigures = k.common.as_ref().filter(|_| common).unwrap_or(&k.whole);
            let mut cells = vec![
                pct(Some(main.occupancy)),
                pct(main.occupancy_excluding_wait),
                human_us(main.busy_us),
                opt_us(main.collective_wait_us),
            ];
            if common {
                cells.extend([
                    human_us(k.whole.window_us),
                    pct(Some(k.whole.occupancy)),
                    pct(k.whole.occupancy_excluding_wait),
                ]);
            }
            let g = &k.analysis.figures.graph_launches;
            cells.extend([
                opt_us(g.p50_us),
                opt_us(g.max_us),
                k.analysis.figures.replay_summary.kernels_mode.map_or("–".to_string(), |n| n.to_string()),
            ]);
            Row { rank: k.rank, verdict: k.verdict, cells }
        })
        .collect();
    Table { note, columns, rows }
}

/// "2 ranks, world size 2".
pub(crate) fn headline(r: &RanksReport) -> String {
    let world = r.world_size.map_or("world size unknown".to_string(), |w| format!("world size {w}"));
    format!("{} ranks, {world}", r.ranks.len())
}

fn spreads(s: &Skew) -> String {
    format!(
        "{} replays: GPU start p50 {}, p99 {}, max {}; launch call p50 {}, p99 {}, max {}",
        s.replays,
        human_us(s.gpu_start.p50_us),
        human_us(s.gpu_start.p99_us),
        human_us(s.gpu_start.max_us),
        human_us(s.launch_start.p50_us),
        human_us(s.launch_start.p99_us),
        human_us(s.launch_start.max_us),
    )
}

/// "rank 0 (last to start on the GPU in 62 of 100 replays; rank 1 in 38)".
fn straggler(s: &Skew) -> String {
    let last = |rank: u64| s.last_to_start.iter().find(|c| c.rank == rank).map_or(0, |c| c.replays);
    match s.straggler {
        Some(r) => {
            let others: Vec<String> = s
                .last_to_start
                .iter()
                .filter(|c| c.rank != r)
                .map(|c| format!("rank {} in {}", c.rank, c.replays))
                .collect();
            format!(
                "rank {r} (last to start on the GPU in {} of {} replays{})",
                last(r),
                s.replays,
                if others.is_empty() { String::new() } else { format!("; {}", others.join(", ")) }
            )
        }
        None => {
            let all: Vec<String> =
                s.last_to_start.iter().map(|c| format!("rank {} in {}", c.rank, c.replays)).collect();
            format!("none (last to start on the GPU: {} of {} replays)", all.join(", "), s.replays)
        }
    }
}

/// The figures that compare the ranks, as (label, text) lines.
pub(crate) fn across(r: &RanksReport) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    match &r.across.figures.skew {
        Some(s) => {
            out.push(("replay skew", spreads(s)));
            out.push(("straggler", straggler(s)));
        }
        None => out.push(("replay skew", "not measured".to_string())),
    }
    if let Some(s) = &r.across.figures.skew_common {
        out.push(("replay skew, common window", format!("{}; straggler {}", spreads(s), straggler(s))));
    }
    let clocks = clocks(r);
    out.push(("clocks", clocks));
    let collectives: Vec<String> = r.ranks.iter().map(collectives).collect();
    out.push(("collectives", collectives.join("; ")));
    out.push(("worst rank", format!("rank {}", r.across.worst_rank)));
    for n in nodes(r) {
        out.push(("node", n));
    }
    out
}

/// One line per node, when the ranks ran on several: its ranks, their occupancy (excluding
/// waiting for peers), how many replays they started last, their clock offset.
pub(crate) fn nodes(r: &RanksReport) -> Vec<String> {
    r.across
        .figures
        .nodes
        .iter()
        .map(|n| {
            let ranks: Vec<String> = n.ranks.iter().map(u64::to_string).collect();
            format!(
                "{}: rank{} {}; occupancy min {}, median {}; last to start {} replay(s); clock offset {}",
                n.node,
                if n.ranks.len() == 1 { "" } else { "s" },
                ranks.join(", "),
                pct(Some(n.occupancy_min)),
                pct(Some(n.occupancy_median)),
                n.last_to_start,
                crate::terminal::human_us(n.clock_offset_us)
            )
        })
        .collect()
}

/// Which rank the single-trace detail of the report belongs to, as a sentence.
pub(crate) fn detail_line(ranks: &RanksView<'_>) -> String {
    let worst = ranks.analysis.across.worst_rank;
    let which = if ranks.detail_rank == worst {
        "the worst rank".to_string()
    } else {
        format!("the worst rank is rank {worst}")
    };
    format!("The detail below is rank {} ({which}): its trace alone, over its own window.", ranks.detail_rank)
}

/// Whether the ranks' clocks agree, as a sentence (the matched collectives must overlap).
pub(crate) fn clocks(r: &RanksReport) -> String {
    let c = &r.across.figures.clocks;
    match c.aligned {
        Some(true) => format!(
            "one clock: {} matched collectives overlap on every rank (smallest overlap {})",
            c.matched_collectives,
            opt_us(c.min_overlap_us)
        ),
        Some(false) => format!(
            "look unaligned: {} of {} matched collectives miss each other (by up to {})",
            c.violations,
            c.matched_collectives,
            opt_us(c.min_overlap_us.map(|x| -x))
        ),
        None => "assumed one (no collective matched)".to_string(),
    }
}

/// One rank's collective kernels: "rank 0: 800 kernels, 800 matched across ranks (name ×800)".
pub(crate) fn collectives(k: &RankReport) -> String {
    let c = &k.collectives;
    let names: Vec<String> =
        c.names.iter().take(3).map(|n| format!("{} ×{}", short(&n.name), n.count)).collect();
    format!(
        "rank {}: {} kernels, {} matched across ranks{}{}",
        k.rank,
        c.kernels,
        c.matched,
        if c.point_to_point > 0 { format!(", {} point-to-point", c.point_to_point) } else { String::new() },
        if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
    )
}

/// A kernel name without its argument list.
fn short(name: &str) -> &str {
    name.split('(').next().unwrap_or(name)
}
