//! The readable report of a multi-rank analysis (`launchguard.analysis-ranks/1`): the ranks'
//! figures over the window the verdicts are judged on and over each rank's own window — a column
//! per rank for a few ranks, else the distribution across ranks (min, median, p90, max) with the
//! worst ranks named and the ranks grouped when alike — then the figures that compare the ranks,
//! the kernels, the checks and the verdict. Every rank's own figures stay in the JSON, the CSV and
//! the HTML page.

use std::fmt::Write as _;

use launchguard_analysis::model_ranks::Skew;
use launchguard_judge::RanksReport;

use crate::escape::one_line;
use crate::fit::{self, wrap_into};
use crate::ranks_table::{self, rank_list, Figure, RANKS_SIDE_BY_SIDE};
use crate::terminal::{human_bytes, human_us, human_us_alike};

/// Kernel rows per rank in the terminal report.
const TOP_KERNELS: usize = 5;
/// Kernel rows of the worst rank when there are many ranks.
const TOP_KERNELS_MANY: usize = 3;
/// Groups of alike ranks listed; the rest are counted.
const GROUPS: usize = 5;
/// Nodes listed one per line; past it, the worst few.
const NODES: usize = 4;
/// Warnings listed; the rest are counted (all are in the JSON).
const WARNINGS: usize = 5;
/// Width of a figure's label.
const LABEL: usize = 26;
/// Width of a value column.
const CELL: usize = 9;

/// The figures as a table: a column per rank, or the distribution with the worst ranks.
fn table(out: &mut String, figures: &[Figure], r: &RanksReport, verdicts: bool) {
    let side_by_side = r.ranks.len() <= RANKS_SIDE_BY_SIDE;
    let mut head = fit::left("", LABEL);
    if side_by_side {
        for k in &r.ranks {
            head.push_str(&fit::right(&format!("rank {}", k.rank), CELL));
        }
    } else {
        for name in ["min", "median", "p90", "max"] {
            head.push_str(&fit::right(name, CELL));
        }
        head.push_str("  worst ranks");
    }
    let _ = writeln!(out, "  {}", head.trim_end());
    for f in figures.iter().filter(|f| !f.values.is_empty()) {
        let mut line = fit::left(&f.label(), LABEL);
        if side_by_side {
            for k in &r.ranks {
                let cell = f.values.iter().find(|v| v.0 == k.rank).map_or("–".to_string(), |v| f.cell(v.1));
                line.push_str(&fit::right(&cell, CELL));
            }
        } else if let Some(d) = f.distribution() {
            for v in [d.min, d.median, d.p90, d.max] {
                line.push_str(&fit::right(&f.cell(v), CELL));
            }
            let (worst, more) = f.worst(3);
            if !worst.is_empty() && d.min != d.max {
                let ranks: Vec<String> = worst.iter().map(u64::to_string).collect();
                let more = if more > 0 { format!(" +{more}") } else { String::new() };
                let _ = write!(line, "  {}{more}", ranks.join(", "));
            }
        }
        let _ = writeln!(out, "  {}", line.trim_end());
    }
    if verdicts && side_by_side {
        let mut line = fit::left("verdict", LABEL);
        for k in &r.ranks {
            line.push_str(&fit::right(&k.verdict.as_str().to_uppercase(), CELL));
        }
        let _ = writeln!(out, "  {}", line.trim_end());
    }
}

/// The replay skew: over the common window when there is one (where the verdicts are judged),
/// the whole traces' only where they differ.
fn skew_lines(out: &mut String, r: &RanksReport, cols: usize) {
    let across = &r.across.figures;
    let Some(main) = across.skew_common.as_ref().or(across.skew.as_ref()) else {
        wrap_into(out, &fit::left("replay skew", 13), "not measured", 13, cols);
        return;
    };
    let over = if across.skew_common.is_some() { "in the common window" } else { "" };
    let (g, l) = (&main.gpu_start, &main.launch_start);
    let (g, l) = (
        human_us_alike(&[Some(g.p50_us), Some(g.p99_us), Some(g.max_us)]),
        human_us_alike(&[Some(l.p50_us), Some(l.p99_us), Some(l.max_us)]),
    );
    let text = format!(
        "{} replays{}: GPU start p50 {}  p99 {}  max {};  launch call p50 {}  p99 {}  max {}",
        main.replays,
        if over.is_empty() { String::new() } else { format!(" {over}") },
        g[0],
        g[1],
        g[2],
        l[0],
        l[1],
        l[2]
    );
    wrap_into(out, &fit::left("replay skew", 13), &text, 13, cols);
    wrap_into(out, &" ".repeat(13), &last_to_start(main), 13, cols);
    // The whole traces' figures, those that differ from the common window's (a maximum
    // said twice reads as two findings).
    if let Some(whole) = across.skew.as_ref().filter(|_| across.skew_common.is_some()) {
        let differ = [
            ("GPU start max", whole.gpu_start.max_us, main.gpu_start.max_us),
            ("launch call max", whole.launch_start.max_us, main.launch_start.max_us),
        ]
        .into_iter()
        .filter(|(_, w, m)| human_us(*w) != human_us(*m))
        .map(|(what, w, _)| format!("{what} {}", human_us(w)))
        .collect::<Vec<_>>();
        if !differ.is_empty() {
            let text = format!("the whole traces ({} replays): {}", whole.replays, differ.join(", "));
            wrap_into(out, &" ".repeat(13), &text, 13, cols);
        }
    }
}

/// "last to start on the GPU: rank 0 62, rank 1 37; straggler rank 0", the first three.
fn last_to_start(s: &Skew) -> String {
    let mut last: Vec<(u64, u64)> =
        s.last_to_start.iter().filter(|c| c.replays > 0).map(|c| (c.rank, c.replays)).collect();
    last.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut shown: Vec<String> = last.iter().take(3).map(|(r, n)| format!("rank {r} {n}")).collect();
    if last.len() > 3 {
        let rest: u64 = last[3..].iter().map(|x| x.1).sum();
        shown.push(format!("{} other ranks {rest}", last.len() - 3));
    }
    let straggler = s.straggler.map_or("no single straggler".to_string(), |r| format!("straggler rank {r}"));
    if shown.is_empty() {
        return format!("no rank started last on the GPU (ties); {straggler}");
    }
    format!("last to start on the GPU: {}; {straggler}", shown.join(", "))
}

/// Renders a multi-rank analysis for a terminal `cols` columns wide (no colour codes).
pub fn render(r: &RanksReport, cols: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", ranks_table::headline(r));
    sources(&mut out, r, cols);
    out.push('\n');

    let many = r.ranks.len() > RANKS_SIDE_BY_SIDE;
    match &r.across.figures.common_window {
        Some(w) => wrap_into(
            &mut out,
            "",
            &format!(
                "common window: {}, every rank recorded; the verdicts are judged there",
                human_us(w.length_us),
            ),
            0,
            cols,
        ),
        None => wrap_into(
            &mut out,
            "",
            "no common window (see the warnings): each rank over its own window, where its verdict is judged",
            0,
            cols,
        ),
    }
    let mut figures = ranks_table::judged_figures(r);
    if r.across.figures.common_window.is_some() {
        // Each rank's own window, first to last GPU activity: its length and what the rank did
        // in it (for many ranks, the two figures that tell a rank apart).
        let own = ranks_table::own_figures(r);
        let keep = if many { 2 } else { own.len() };
        figures.extend(own.into_iter().take(keep));
    }
    table(&mut out, &figures, r, true);
    wrap_into(&mut out, "  ", "(waiting: collectives running before the last rank reached them)", 3, cols);
    out.push('\n');
    if many {
        groups(&mut out, r, cols);
    }

    for (i, line) in ranks_table::collectives_grouped(r).iter().enumerate() {
        wrap_into(&mut out, &fit::left(if i == 0 { "collectives" } else { "" }, 13), line, 13, cols);
    }
    wrap_into(&mut out, &fit::left("clocks", 13), &ranks_table::clocks(r), 13, cols);
    skew_lines(&mut out, r, cols);
    let _ = writeln!(out, "{:<13}rank {}", "worst rank", r.across.worst_rank);
    nodes(&mut out, r, cols);
    out.push('\n');

    // A kernel table per rank for a few ranks; else the worst rank's.
    let worst = r.across.worst_rank;
    for rank in r.ranks.iter().filter(|k| !many || k.rank == worst) {
        let who = if many {
            format!("rank {} (the worst) kernels", rank.rank)
        } else {
            format!("rank {} kernels", rank.rank)
        };
        let top = if many { TOP_KERNELS_MANY } else { TOP_KERNELS };
        crate::terminal::kernels_section(&mut out, &who, &rank.analysis.figures.kernels, top, cols);
    }

    let title = if many {
        "checks across ranks (passing ones cut to a line: --format json)"
    } else {
        "checks across ranks"
    };
    crate::terminal::checks_section_cut(&mut out, title, &r.checks, cols, many);
    for w in r.warnings.iter().take(WARNINGS) {
        wrap_into(&mut out, "warning: ", &one_line(w), 9, cols);
    }
    if r.warnings.len() > WARNINGS {
        let _ = writeln!(out, "warning: {} more (--format json lists them)", r.warnings.len() - WARNINGS);
    }
    crate::terminal::verdict_line(&mut out, r.verdict.as_str(), r.reason.as_deref(), cols);
    out
}

/// Each rank's trace for a few ranks; else the files counted, with their folder when they share
/// one.
fn sources(out: &mut String, r: &RanksReport, cols: usize) {
    fn s(k: &launchguard_judge::RankReport) -> &launchguard_analysis::model::Source {
        &k.analysis.figures.source
    }
    if r.ranks.len() <= RANKS_SIDE_BY_SIDE {
        for k in &r.ranks {
            let text = format!(
                "{}  ({}{}, {} events; rank from {})",
                one_line(&s(k).path),
                human_bytes(s(k).bytes),
                if s(k).gzip { " gzip" } else { "" },
                s(k).events,
                one_line(&k.rank_from)
            );
            wrap_into(out, &format!("  rank {:<3} ", k.rank), &text, 11, cols);
        }
        return;
    }
    let bytes: u64 = r.ranks.iter().map(|k| s(k).bytes).sum();
    let events: u64 = r.ranks.iter().map(|k| s(k).events).sum();
    let folder = |p: &str| std::path::Path::new(p).parent().map(|d| d.to_string_lossy().into_owned());
    let first = r.ranks.first().and_then(|k| folder(&s(k).path));
    let shared = first.filter(|f| r.ranks.iter().all(|k| folder(&s(k).path).as_ref() == Some(f)));
    let mut from: Vec<&str> = r.ranks.iter().map(|k| k.rank_from.as_str()).collect();
    from.sort_unstable();
    from.dedup();
    let text = format!(
        "{} traces{} ({}, {} events; rank from {}; each one: --format json, --csv, --html)",
        r.ranks.len(),
        shared.map_or(String::new(), |f| format!(" in {}", one_line(if f.is_empty() { "." } else { &f }))),
        human_bytes(bytes),
        events,
        one_line(&from.join(", "))
    );
    wrap_into(out, "  ", &text, 4, cols);
}

/// The ranks grouped when alike: verdict, how many, their occupancy, which.
fn groups(out: &mut String, r: &RanksReport, cols: usize) {
    let groups = ranks_table::groups(r);
    let _ = writeln!(out, "ranks alike (one verdict, alike figures): {} group(s)", groups.len());
    for g in groups.iter().take(GROUPS) {
        let occ = if g.occupancy.0.is_nan() {
            "–".to_string()
        } else if (g.occupancy.1 - g.occupancy.0) * 1000.0 < 0.5 {
            format!("{:.1}%", g.occupancy.0 * 100.0)
        } else {
            format!("{:.1}–{:.1}%", g.occupancy.0 * 100.0, g.occupancy.1 * 100.0)
        };
        let lead = format!(
            "  {:<4} {:>5} rank{} {:>11}  ",
            g.verdict.as_str().to_uppercase(),
            g.ranks.len(),
            if g.ranks.len() == 1 { " " } else { "s" },
            occ
        );
        wrap_into(out, &lead, &rank_list(&g.ranks, 8), fit::width(&lead), cols);
    }
    if groups.len() > GROUPS {
        let rest: usize = groups[GROUPS..].iter().map(|g| g.ranks.len()).sum();
        let _ =
            writeln!(out, "  {} more group(s) of {rest} ranks (--format json, --csv)", groups.len() - GROUPS);
    }
    out.push('\n');
}

/// One line per node for a few nodes; else the nodes with the lowest occupancy.
fn nodes(out: &mut String, r: &RanksReport, cols: usize) {
    let lines = ranks_table::nodes(r);
    let n = r.across.figures.nodes.len();
    if n <= NODES {
        for (i, line) in lines.iter().enumerate() {
            wrap_into(out, &fit::left(if i == 0 { "nodes" } else { "" }, 13), line, 13, cols);
        }
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let f = &r.across.figures.nodes;
        f[a].occupancy_min.total_cmp(&f[b].occupancy_min)
    });
    wrap_into(
        out,
        &fit::left("nodes", 13),
        &format!("{n}; the {} with the lowest occupancy:", NODES - 1),
        13,
        cols,
    );
    for &i in order.iter().take(NODES - 1) {
        wrap_into(out, &" ".repeat(13), &lines[i], 15, cols);
    }
}
