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
    let (g, l) = (&s.gpu_start, &s.launch_start);
    let g = crate::terminal::human_us_alike(&[Some(g.p50_us), Some(g.p99_us), Some(g.max_us)]);
    let l = crate::terminal::human_us_alike(&[Some(l.p50_us), Some(l.p99_us), Some(l.max_us)]);
    format!(
        "{} replays: GPU start p50 {}, p99 {}, max {}; launch call p50 {}, p99 {}, max {}",
        s.replays, g[0], g[1], g[2], l[0], l[1], l[2]
    )
}

/// The whole traces' skew beside the common window's: only the figures that differ, or `None`.
fn whole_beside(whole: &Skew, common: &Skew) -> Option<String> {
    let differ: Vec<String> = [
        ("GPU start max", whole.gpu_start.max_us, common.gpu_start.max_us),
        ("launch call max", whole.launch_start.max_us, common.launch_start.max_us),
    ]
    .into_iter()
    .filter(|(_, w, c)| human_us(*w) != human_us(*c))
    .map(|(what, w, _)| format!("{what} {}", human_us(w)))
    .collect();
    (!differ.is_empty()).then(|| format!("{} replays: {}", whole.replays, differ.join(", ")))
}

/// "rank 0 (last to start on the GPU in 62 of 100 replays; rank 1 in 38)"; past three ranks,
/// the others summed.
fn straggler(s: &Skew) -> String {
    let last = |rank: u64| s.last_to_start.iter().find(|c| c.rank == rank).map_or(0, |c| c.replays);
    let mut by_count: Vec<(u64, u64)> =
        s.last_to_start.iter().filter(|c| c.replays > 0).map(|c| (c.rank, c.replays)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let listed = |skip: Option<u64>| -> Vec<String> {
        let rest: Vec<&(u64, u64)> = by_count.iter().filter(|c| Some(c.0) != skip).collect();
        let mut out: Vec<String> = rest.iter().take(3).map(|c| format!("rank {} in {}", c.0, c.1)).collect();
        if rest.len() > 3 {
            let n: u64 = rest[3..].iter().map(|c| c.1).sum();
            out.push(format!("{} other ranks in {n}", rest.len() - 3));
        }
        out
    };
    match s.straggler {
        Some(r) => {
            let others = listed(Some(r));
            format!(
                "rank {r} (last to start on the GPU in {} of {} replays{})",
                last(r),
                s.replays,
                if others.is_empty() { String::new() } else { format!("; {}", others.join(", ")) }
            )
        }
        None => {
            format!("none (last to start on the GPU: {} of {} replays)", listed(None).join(", "), s.replays)
        }
    }
}

/// The figures that compare the ranks, as (label, text) lines.
pub(crate) fn across(r: &RanksReport) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Over the common window when there is one (where the verdicts are judged), then of the
    // whole traces only what differs, as the terminal report says it.
    match (&r.across.figures.skew, &r.across.figures.skew_common) {
        (whole, Some(s)) => {
            out.push(("replay skew, common window", format!("{}; straggler {}", spreads(s), straggler(s))));
            if let Some(text) = whole.as_ref().and_then(|w| whole_beside(w, s)) {
                out.push(("replay skew, whole traces", text));
            }
        }
        (Some(s), None) => {
            out.push(("replay skew", spreads(s)));
            out.push(("straggler", straggler(s)));
        }
        (None, None) => out.push(("replay skew", "not measured".to_string())),
    }
    let clocks = clocks(r);
    out.push(("clocks", clocks));
    out.push(("collectives", collectives_grouped(r).join("; ")));
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

/// Ranks up to which the reports show each rank's own column and kernel table; past it, the
/// distribution across ranks, the worst ranks named and the ranks grouped.
pub(crate) const RANKS_SIDE_BY_SIDE: usize = 4;

/// What a figure measures, for its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantity {
    /// A fraction, shown as a percentage.
    Share,
    /// A time in µs, shown in one unit per figure.
    Time,
    /// A count.
    Count,
}

/// Which end of a figure is the worse one, for naming the worst ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Worse {
    /// The lowest values (occupancy).
    Low,
    /// The highest values (waiting, launch durations).
    High,
    /// Neither: no rank is named.
    Neither,
}

/// One figure of every rank that has it.
pub(crate) struct Figure {
    /// Its name.
    pub name: &'static str,
    /// What it measures.
    pub quantity: Quantity,
    /// Which end is worse.
    pub worse: Worse,
    /// `(rank, value)` in rank order.
    pub values: Vec<(u64, f64)>,
}

/// Min, median, p90 and max of a figure across ranks (nearest rank: each is one rank's value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Distribution {
    /// The smallest.
    pub min: f64,
    /// The median (the lower one of an even count).
    pub median: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The largest.
    pub max: f64,
}

/// The distribution of `values`; `None` when empty.
pub(crate) fn distribution(values: impl IntoIterator<Item = f64>) -> Option<Distribution> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    // Nearest rank: the value at ⌈q·n⌉ in 1-based order.
    let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Some(Distribution { min: v[0], median: at(0.5), p90: at(0.9), max: v[v.len() - 1] })
}

impl Figure {
    /// The distribution of its values.
    pub fn distribution(&self) -> Option<Distribution> {
        distribution(self.values.iter().map(|v| v.1))
    }

    /// The unit its times are shown in (one per figure).
    pub fn unit(&self) -> (&'static str, f64) {
        match self.quantity {
            Quantity::Time => crate::fit::column_unit(self.values.iter().map(|v| v.1)),
            Quantity::Share => ("%", 0.01),
            Quantity::Count => ("", 1.0),
        }
    }

    /// The name with its unit: "busy, ms".
    pub fn label(&self) -> String {
        match self.quantity {
            Quantity::Time | Quantity::Share => format!("{}, {}", self.name, self.unit().0),
            Quantity::Count => self.name.to_string(),
        }
    }

    /// A value in the figure's unit, without the unit.
    pub fn cell(&self, v: f64) -> String {
        match self.quantity {
            Quantity::Time => crate::fit::in_unit(v, self.unit()),
            Quantity::Share => format!("{:.1}", v * 100.0),
            Quantity::Count => format!("{v:.0}"),
        }
    }

    /// The ranks at the worse end, up to `n`, and how many more share the worst shown value.
    pub fn worst(&self, n: usize) -> (Vec<u64>, usize) {
        let mut v = self.values.clone();
        match self.worse {
            Worse::Neither => return (Vec::new(), 0),
            Worse::Low => v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))),
            Worse::High => v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))),
        }
        let shown: Vec<u64> = v.iter().take(n).map(|x| x.0).collect();
        let more = match v.get(n.saturating_sub(1)) {
            Some(last) if v.len() > n => {
                let at = self.cell(last.1);
                v[n..].iter().take_while(|x| self.cell(x.1) == at).count()
            }
            _ => 0,
        };
        (shown, more)
    }
}

/// Each rank's figures over the window its verdict is judged on (the common window, when there
/// is one), with its launches.
pub(crate) fn judged_figures(r: &RanksReport) -> Vec<Figure> {
    let common = r.across.figures.common_window.is_some();
    fn judged(k: &RankReport, common: bool) -> &RankFigures {
        k.common.as_ref().filter(|_| common).unwrap_or(&k.whole)
    }
    let fig = |name, quantity, worse, get: &dyn Fn(&RankReport) -> Option<f64>| Figure {
        name,
        quantity,
        worse,
        values: r.ranks.iter().filter_map(|k| get(k).map(|v| (k.rank, v))).collect(),
    };
    vec![
        fig("occupancy excl. waiting", Quantity::Share, Worse::Low, &|k| {
            judged(k, common).occupancy_excluding_wait
        }),
        fig("occupancy", Quantity::Share, Worse::Low, &|k| Some(judged(k, common).occupancy)),
        fig("busy", Quantity::Time, Worse::Neither, &|k| Some(judged(k, common).busy_us)),
        fig("compute", Quantity::Time, Worse::Neither, &|k| Some(judged(k, common).compute_busy_us)),
        fig("collectives", Quantity::Time, Worse::Neither, &|k| Some(judged(k, common).collective_busy_us)),
        fig("waiting for peers", Quantity::Time, Worse::High, &|k| judged(k, common).collective_wait_us),
        fig("graph launch p50", Quantity::Time, Worse::High, &|k| k.analysis.figures.graph_launches.p50_us),
        fig("graph launch max", Quantity::Time, Worse::High, &|k| k.analysis.figures.graph_launches.max_us),
        fig("GPU activities per replay", Quantity::Count, Worse::Neither, &|k| {
            k.analysis.figures.replay_summary.kernels_mode.map(|n| n as f64)
        }),
    ]
}

/// Each rank's figures over its own window (first to last GPU activity).
pub(crate) fn own_figures(r: &RanksReport) -> Vec<Figure> {
    let fig = |name, quantity, worse, get: &dyn Fn(&RankFigures) -> Option<f64>| Figure {
        name,
        quantity,
        worse,
        values: r.ranks.iter().filter_map(|k| get(&k.whole).map(|v| (k.rank, v))).collect(),
    };
    vec![
        fig("own window", Quantity::Time, Worse::Neither, &|f| Some(f.window_us)),
        fig("own window excl. waiting", Quantity::Share, Worse::Low, &|f| f.occupancy_excluding_wait),
        fig("own window occupancy", Quantity::Share, Worse::Low, &|f| Some(f.occupancy)),
        fig("own window waiting", Quantity::Time, Worse::High, &|f| f.collective_wait_us),
    ]
}

/// Ranks that behave alike: the same verdict, an occupancy excluding waiting (on the window the
/// verdict is judged on) within [`ALIKE_POINTS`] percentage points of the group's first rank, and
/// its waiting for peers and graph-launch median within [`ALIKE_RATIO`] of the first's.
pub(crate) struct Group {
    /// Their verdict.
    pub verdict: Verdict,
    /// The ranks, in rank order.
    pub ranks: Vec<u64>,
    /// The lowest and highest occupancy excluding waiting among them.
    pub occupancy: (f64, f64),
}

/// How close two ranks' occupancies must be to be grouped, in percentage points.
pub(crate) const ALIKE_POINTS: f64 = 0.5;
/// How close two ranks' waiting and launch medians must be to be grouped, as a ratio (with 1 µs
/// of slack for the small ones).
pub(crate) const ALIKE_RATIO: f64 = 1.25;

/// The ranks grouped when alike, worst verdict first, then lowest occupancy.
pub(crate) fn groups(r: &RanksReport) -> Vec<Group> {
    let figures = judged_figures(r);
    let of = |i: usize, rank: u64| figures[i].values.iter().find(|x| x.0 == rank).map_or(f64::NAN, |x| x.1);
    // (verdict, occupancy excl. waiting, waiting, launch p50, rank)
    let mut items: Vec<(Verdict, f64, f64, f64, u64)> =
        r.ranks.iter().map(|k| (k.verdict, of(0, k.rank), of(5, k.rank), of(6, k.rank), k.rank)).collect();
    let severity = |v: Verdict| match v {
        Verdict::Inconclusive => -1,
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Pass => 2,
        Verdict::Skip => 3,
    };
    items.sort_by(|a, b| severity(a.0).cmp(&severity(b.0)).then(a.1.total_cmp(&b.1)).then(a.4.cmp(&b.4)));
    let near =
        |a: f64, b: f64| a.is_nan() && b.is_nan() || (a.max(b) + 1.0) <= (a.min(b) + 1.0) * ALIKE_RATIO;
    // Each rank joins the first group whose first rank it is alike, else starts one.
    let mut out: Vec<(Group, (f64, f64, f64))> = Vec::new();
    for (verdict, occ, wait, launch, rank) in items {
        let alike = out.iter_mut().find(|(g, first)| {
            g.verdict == verdict
                && (occ - first.0).abs() <= ALIKE_POINTS / 100.0 + 1e-12
                && near(wait, first.1)
                && near(launch, first.2)
        });
        match alike {
            Some((g, _)) => {
                g.ranks.push(rank);
                g.occupancy = (g.occupancy.0.min(occ), g.occupancy.1.max(occ));
            }
            None => {
                out.push((Group { verdict, ranks: vec![rank], occupancy: (occ, occ) }, (occ, wait, launch)))
            }
        }
    }
    out.into_iter()
        .map(|(mut g, _)| {
            g.ranks.sort_unstable();
            g
        })
        .collect()
}

/// Ranks as short text: runs as ranges ("0–63"), at most `max` items, then "…" and the last.
pub(crate) fn rank_list(ranks: &[u64], max: usize) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        items.push(match j - i {
            0 => ranks[i].to_string(),
            1 => format!("{}, {}", ranks[i], ranks[j]),
            _ => format!("{}–{}", ranks[i], ranks[j]),
        });
        i = j + 1;
    }
    if items.len() > max.max(2) {
        let last = items.pop().unwrap_or_default();
        items.truncate(max.max(2) - 1);
        items.push(format!("… {last}"));
    }
    items.join(", ")
}

/// The collective kernels of the ranks, ranks with the same ones on one line: "ranks 0–63: 800
/// kernels, 800 matched across ranks (name ×800)".
pub(crate) fn collectives_grouped(r: &RanksReport) -> Vec<String> {
    let mut lines: Vec<(String, Vec<u64>)> = Vec::new();
    for k in &r.ranks {
        let text = collectives(k);
        let text = text.split_once(": ").map_or(text.clone(), |(_, t)| t.to_string());
        match lines.iter_mut().find(|(t, _)| *t == text) {
            Some((_, ranks)) => ranks.push(k.rank),
            None => lines.push((text, vec![k.rank])),
        }
    }
    lines
        .into_iter()
        .map(|(text, ranks)| {
            let which = if ranks.len() == 1 { "rank" } else { "ranks" };
            format!("{which} {}: {text}", rank_list(&ranks, 6))
        })
        .collect()
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    #[test]
    fn the_distribution_is_read_by_nearest_rank() {
        // Ten values 1..=10: median the 5th, p90 the 9th.
        let d = distribution((1..=10).rev().map(f64::from)).unwrap();
        assert_eq!(d, Distribution { min: 1.0, median: 5.0, p90: 9.0, max: 10.0 });
        let one = distribution([3.0]).unwrap();
        assert_eq!((one.min, one.median, one.p90, one.max), (3.0, 3.0, 3.0, 3.0));
        assert!(distribution([]).is_none());
    }

    #[test]
    fn rank_lists_are_short() {
        assert_eq!(rank_list(&(0..64).collect::<Vec<_>>(), 6), "0–63");
        assert_eq!(rank_list(&[0, 1, 3], 6), "0, 1, 3");
        let odd: Vec<u64> = (0..64).filter(|r| r % 2 == 1).collect();
        assert_eq!(rank_list(&odd, 4), "1, 3, 5, … 63");
    }

    #[test]
    fn the_worst_ranks_and_those_alike_are_named() {
        let f = Figure {
            name: "occupancy",
            quantity: Quantity::Share,
            worse: Worse::Low,
            values: vec![(0, 0.84), (1, 0.83), (2, 0.84), (3, 0.83), (4, 0.83), (5, 0.83)],
        };
        assert_eq!(f.worst(3), (vec![1, 3, 4], 1));
        let high = Figure { worse: Worse::High, ..f };
        assert_eq!(high.worst(1), (vec![0], 1));
    }
}
