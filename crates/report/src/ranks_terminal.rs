//! The readable report of a multi-rank analysis (`launchguard.analysis-ranks/1`): a per-rank
//! table over each rank's own window and over the common window, the cross-rank figures, the
//! checks and the verdict.

use std::fmt::Write as _;

use launchguard_analysis::model_ranks::{RankFigures, Skew};
use launchguard_judge::RanksReport;

use crate::ranks_table::{self, opt_us, pct};

/// Kernel rows per rank in the terminal report.
const TOP_KERNELS: usize = 5;
use crate::terminal::{human_bytes, human_us};

const HEADER: [&str; 9] =
    ["", "window", "busy", "occupancy", "compute", "collectives", "waiting", "excl. waiting", "verdict"];

fn row(out: &mut String, cells: [String; 9]) {
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>10} {:>9} {:>10} {:>11} {:>10} {:>13} {:>7}",
        cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8]
    );
}

fn figures_row(out: &mut String, rank: u64, f: &RankFigures, verdict: &str) {
    row(
        out,
        [
            format!("rank {rank}"),
            human_us(f.window_us),
            human_us(f.busy_us),
            pct(Some(f.occupancy)),
            human_us(f.compute_busy_us),
            human_us(f.collective_busy_us),
            opt_us(f.collective_wait_us),
            pct(f.occupancy_excluding_wait),
            verdict.to_string(),
        ],
    );
}

fn skew_line(out: &mut String, label: &str, s: &Skew) {
    let _ = writeln!(
        out,
        "{label:<13}{} replays: GPU start p50 {}  p99 {}  max {};  launch call p50 {}  p99 {}  max {}",
        s.replays,
        human_us(s.gpu_start.p50_us),
        human_us(s.gpu_start.p99_us),
        human_us(s.gpu_start.max_us),
        human_us(s.launch_start.p50_us),
        human_us(s.launch_start.p99_us),
        human_us(s.launch_start.max_us)
    );
    let last: Vec<String> =
        s.last_to_start.iter().map(|c| format!("rank {} {}", c.rank, c.replays)).collect();
    let straggler = s.straggler.map_or("no single straggler".to_string(), |r| format!("straggler rank {r}"));
    let _ = writeln!(out, "{:<13}last to start on the GPU: {}; {straggler}", "", last.join(", "));
}

/// Renders a multi-rank analysis for a terminal (no colour codes).
pub fn render(r: &RanksReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", ranks_table::headline(r));
    for rank in &r.ranks {
        let s = &rank.analysis.figures.source;
        let _ = writeln!(
            out,
            "  rank {:<3} {}  ({}{}, {} events; rank from {})",
            rank.rank,
            crate::escape::one_line(&s.path),
            human_bytes(s.bytes),
            if s.gzip { " gzip" } else { "" },
            s.events,
            crate::escape::one_line(&rank.rank_from)
        );
    }
    out.push('\n');

    let _ = writeln!(out, "each rank over its own window (first to last GPU activity)");
    row(&mut out, HEADER.map(str::to_string));
    // The verdict sits on the rows it was judged on: the common window, when there is one.
    let judged_whole = r.across.figures.common_window.is_none();
    for rank in &r.ranks {
        let verdict = if judged_whole { rank.verdict.as_str().to_uppercase() } else { String::new() };
        figures_row(&mut out, rank.rank, &rank.whole, &verdict);
    }
    match &r.across.figures.common_window {
        Some(w) => {
            let _ = writeln!(
                out,
                "over the common window, {}, in which every rank was recorded",
                human_us(w.length_us)
            );
            for rank in &r.ranks {
                if let Some(f) = &rank.common {
                    figures_row(&mut out, rank.rank, f, &rank.verdict.as_str().to_uppercase());
                }
            }
        }
        None => {
            let _ = writeln!(
                out,
                "no common window (see the warnings): verdicts judged on each rank's own window"
            );
        }
    }
    let _ = writeln!(
        out,
        "  (waiting: collectives running before the last rank reached them; excl. waiting: occupancy without it)"
    );
    out.push('\n');

    let _ = writeln!(out, "{:<13}{}", "launches", {
        let v: Vec<String> = r
            .ranks
            .iter()
            .map(|k| {
                let g = &k.analysis.figures.graph_launches;
                format!(
                    "rank {} p50 {} mean {} max {}",
                    k.rank,
                    opt_us(g.p50_us),
                    opt_us(g.mean_us),
                    opt_us(g.max_us)
                )
            })
            .collect();
        v.join("; ")
    });
    for rank in &r.ranks {
        let label = if rank.rank == r.ranks[0].rank { "collectives" } else { "" };
        let _ = writeln!(out, "{label:<13}{}", ranks_table::collectives(rank));
    }
    let clocks = ranks_table::clocks(r);
    let _ = writeln!(out, "{:<13}{clocks}", "clocks");
    match &r.across.figures.skew {
        Some(s) => skew_line(&mut out, "replay skew", s),
        None => {
            let _ = writeln!(out, "{:<13}not measured", "replay skew");
        }
    }
    if let Some(s) = &r.across.figures.skew_common {
        skew_line(&mut out, "  common", s);
    }
    let _ = writeln!(out, "{:<13}rank {}", "worst rank", r.across.worst_rank);
    for (i, n) in ranks_table::nodes(r).iter().enumerate() {
        let _ = writeln!(out, "{:<13}{n}", if i == 0 { "nodes" } else { "" });
    }
    out.push('\n');

    for rank in &r.ranks {
        let mut section = String::new();
        crate::terminal::kernels_section(&mut section, &rank.analysis.figures.kernels, TOP_KERNELS);
        if !section.is_empty() {
            let _ = write!(out, "rank {} {section}", rank.rank);
        }
    }

    crate::terminal::checks_section_titled(&mut out, "checks across ranks", &r.checks);
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "verdict: {}", r.verdict.as_str().to_uppercase());
    out
}
