//! The judgement of several ranks of one run: each rank judged with its own figures and the
//! context of a multi-rank run, its occupancy on the time it did something other than wait for a
//! peer over the window every rank was recorded in; then each check at the rank where it is
//! worst, naming that rank and the ranks it covers.

use launchguard_analysis::model_ranks::{Clocks, Collectives, RankAnalysis, RankFigures, RanksAnalysis};

use crate::config::Settings;
use crate::limits::Limits;
use crate::report::{AcrossReport, RankReport, RanksReport};
use crate::trace::{occupancy_limits_text, occupancy_status, IDLE_BEFORE_SMALL_US};
use crate::verdict::{Check, CheckId, Status, Verdict};

/// Judges the ranks of one run.
pub fn judge(r: RanksAnalysis, settings: &Settings) -> RanksReport {
    let n = r.ranks.len() as u64;
    let common = r.across.common_window.is_some();
    let mut ranks: Vec<RankReport> =
        r.ranks.into_iter().map(|rank| judge_rank(rank, n, common, settings)).collect();
    ranks.sort_by_key(|k| k.rank);
    let culprit = culprit(&ranks);
    let worst = culprit.as_ref().map_or_else(|| worst_rank(&ranks), |c| c.rank);
    let ids: Vec<u64> = ranks.iter().map(|k| k.rank).collect();
    let mut ranks_check = ranks_check(&ids, r.world_size);
    if let Some(c) = &culprit {
        ranks_check.message = format!("{}; {}", ranks_check.message, c.message);
    }
    let mut checks = vec![ranks_check, clock_check(&r.across.clocks)];
    if let Some(first) = ranks.first() {
        let order: Vec<CheckId> = first.checks.iter().map(|c| c.id.clone()).collect();
        checks.extend(order.iter().filter_map(|id| worst_check(&ranks, id)));
    }
    let every_rank_skips = ranks.iter().all(|k| k.verdict == Verdict::Skip);
    let damaged = ranks.iter().find(|k| k.verdict == Verdict::Inconclusive);
    let (verdict, reason) = if let Some(k) = damaged {
        let why = k.analysis.reason.clone().unwrap_or_default();
        (Verdict::Inconclusive, Some(format!("rank {}: {why}", k.rank)))
    } else if every_rank_skips {
        (Verdict::Skip, ranks.first().and_then(|k| k.analysis.reason.clone()))
    } else {
        (Verdict::of(&checks), None)
    };
    RanksReport {
        schema: r.schema,
        world_size: r.world_size,
        ranks,
        across: AcrossReport {
            worst_rank: worst,
            culprit: culprit.as_ref().map(|c| c.rank),
            waiting: culprit.map(|c| c.waiting).unwrap_or_default(),
            figures: r.across,
        },
        checks,
        verdict,
        reason,
        warnings: r.warnings,
    }
}

fn judge_rank(rank: RankAnalysis, ranks: u64, common: bool, settings: &Settings) -> RankReport {
    let judged = rank.common.as_ref().unwrap_or(&rank.whole);
    // The rank's checks are its trace's, with occupancy measured on the rank's time not spent
    // waiting for peers (a collective that waits counts as busy in the trace's own figures).
    let replays = &rank.analysis.replay_summary;
    let occupancy = |l: &Limits| {
        crate::trace::graph_own_idle(rank_occupancy(judged, &rank.collectives, common, l), replays, l)
    };
    let crate::Judged { checks, verdict, .. } =
        crate::judge_trace(&rank.analysis, ranks, settings, Some(&occupancy));
    let analysis = crate::judge_analysis(rank.analysis, ranks, settings);
    RankReport { facts: rank.facts, checks, verdict, analysis }
}

/// The occupancy check of a rank, on occupancy excluding collective wait.
fn rank_occupancy(f: &RankFigures, c: &Collectives, common: bool, l: &Limits) -> Check {
    let value = f.occupancy_excluding_wait.unwrap_or(f.occupancy);
    let status = occupancy_status(value, l);
    let scope = if common { "the common window (every rank recorded)" } else { "its window" };
    let limits = format!("({})", occupancy_limits_text(l));
    let head = format!("GPU busy {:.1}% of {scope}, {:.1} ms", value * 100.0, f.window_us / 1000.0);
    let msg = match f.collective_wait_us {
        _ if c.kernels == 0 => format!("{head}; no collective kernels {limits}"),
        None => format!(
            "{head}, collectives counted as busy: the clocks look unaligned, so waiting for peers cannot be told apart {limits}"
        ),
        Some(_) if c.matched == 0 => format!(
            "{head}, collectives counted as busy: none was matched across ranks, so waiting for peers cannot be told apart {limits}"
        ),
        Some(wait) => format!(
            "{head}, not counting {:.3} ms of collectives waiting for peers ({:.1}% counting them) {limits}",
            wait / 1000.0,
            f.occupancy * 100.0
        ),
    };
    let check = Check::new(CheckId::Occupancy, status, Some(value), Some(l.thresholds.occupancy_fail), msg);
    if status == Status::Pass {
        check
    } else {
        check.with_hint("the GPU waits for the host between launches, or for a peer: look at the host cost of each launch, the gaps and the replay skew")
    }
}

fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Skip => 0,
        Verdict::Pass => 1,
        Verdict::Warn => 2,
        Verdict::Fail => 3,
        Verdict::Inconclusive => 4,
    }
}

/// The rank with the worst verdict; among equals, the lowest occupancy excluding wait, then the
/// lowest rank.
fn worst_rank(ranks: &[RankReport]) -> u64 {
    let occupancy_of = |r: &RankReport| {
        let f = r.common.as_ref().unwrap_or(&r.whole);
        f.occupancy_excluding_wait.unwrap_or(f.occupancy)
    };
    ranks
        .iter()
        .max_by(|a, b| {
            severity(a.verdict)
                .cmp(&severity(b.verdict))
                .then_with(|| occupancy_of(b).total_cmp(&occupancy_of(a)))
                .then_with(|| b.rank.cmp(&a.rank))
        })
        .map_or(0, |r| r.rank)
}

/// The rank that makes the others wait, and the ranks that wait for it.
struct Culprit {
    rank: u64,
    waiting: Vec<u64>,
    message: String,
}

/// The rank that makes the others wait: its host launches late, so its GPU idles before each
/// replay (at the median, at least [`IDLE_BEFORE_SMALL_US`] and twice any other rank's) while
/// the others, launched in time, wait inside their collectives. The rank that waits longest in
/// its collectives is the victim, not the cause.
fn culprit(ranks: &[RankReport]) -> Option<Culprit> {
    let idle = |k: &RankReport| k.analysis.figures.replay_summary.steady_idle_before_p50_us;
    let (top, top_idle) =
        ranks.iter().filter_map(|k| Some((k, idle(k)?))).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let others: Vec<&RankReport> = ranks.iter().filter(|k| k.rank != top.rank).collect();
    let others_idle = others.iter().filter_map(|k| idle(k)).fold(0.0, f64::max);
    if others.is_empty() || top_idle < IDLE_BEFORE_SMALL_US || top_idle < 2.0 * others_idle {
        return None;
    }
    let waiting: Vec<u64> = others.iter().map(|k| k.rank).collect();
    let in_collectives: Vec<String> = others
        .iter()
        .filter_map(|k| {
            let c = k.analysis.figures.replay_summary.collectives_p50_us?;
            Some(format!("rank {} {}", k.rank, launchguard_analysis::units::human_us(c)))
        })
        .collect();
    let collectives = if in_collectives.is_empty() {
        String::new()
    } else {
        format!(" (collectives per replay p50: {})", in_collectives.join(", "))
    };
    let message = format!(
        "rank {} makes the others wait: its GPU idles {} p50 before each replay (the others {} at most), its host \
         launches late; {} for it in their collectives{collectives}",
        top.rank,
        launchguard_analysis::units::human_us(top_idle),
        launchguard_analysis::units::human_us(others_idle),
        if waiting.len() == 1 { format!("rank {} waits", waiting[0]) } else { format!("ranks {} wait", list(&waiting)) }
    );
    Some(Culprit { rank: top.rank, waiting, message })
}

/// A replay whose collectives take at least this share of its GPU span waited for a peer: healthy
/// TP=2 ranks on H200s spend 53 µs of a 276 µs replay (19%) in their eight all-reduces.
pub const COLLECTIVE_WAIT_SHARE: f64 = 0.5;

/// The `ranks` check of one rank of a multi-rank run analyzed alone: which rank of how many, what
/// one rank cannot see, and a warning where its collectives waited far longer than healthy ones.
pub(crate) fn alone(a: &launchguard_analysis::model::Analysis) -> Option<Check> {
    let world = a.trace.world_size.filter(|&w| w > 1)?;
    let rank = a.trace.rank.map_or("a rank".to_string(), |r| format!("rank {r}"));
    let head = format!(
        "{rank} of {world} analyzed alone: one rank cannot see which rank made the others wait, nor tell its \
         collectives' waiting for a peer from their work"
    );
    let s = &a.replay_summary;
    let check = match (s.collectives_p50_us, s.gpu_span_p50_us) {
        (Some(c), Some(span)) if c >= COLLECTIVE_WAIT_SHARE * span => Check::new(
            CheckId::Ranks,
            Status::Warn,
            Some(c / span),
            Some(COLLECTIVE_WAIT_SHARE),
            format!(
                "{head}; its collectives take {} of each {} replay at the median (warn at {:.0}%): it waited for a peer",
                launchguard_analysis::units::human_us(c),
                launchguard_analysis::units::human_us(span),
                100.0 * COLLECTIVE_WAIT_SHARE
            ),
        )
        .with_hint("analyze every rank's trace together (a folder, or several files) to name the rank that launches late"),
        (c, span) => Check::new(
            CheckId::Ranks,
            Status::Pass,
            c.zip(span).map(|(c, s)| c / s),
            Some(COLLECTIVE_WAIT_SHARE),
            format!("{head}; analyze every rank's trace together for that"),
        ),
    };
    Some(check)
}

/// Ranks as text, runs of three or more as ranges: "0–63", "1, 3, 5".
fn list(v: &[u64]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        match j - i {
            0 => items.push(v[i].to_string()),
            1 => items.extend([v[i].to_string(), v[j].to_string()]),
            _ => items.push(format!("{}–{}", v[i], v[j])),
        }
        i = j + 1;
    }
    items.join(", ")
}

fn ranks_check(ranks: &[u64], world_size: Option<u64>) -> Check {
    let n = ranks.len() as u64;
    match world_size {
        Some(w) => {
            let missing: Vec<u64> = (0..w).filter(|r| !ranks.contains(r)).collect();
            let beyond: Vec<u64> = ranks.iter().copied().filter(|&r| r >= w).collect();
            if missing.is_empty() && beyond.is_empty() {
                Check::new(
                    CheckId::Ranks,
                    Status::Pass,
                    Some(n as f64),
                    Some(w as f64),
                    format!("ranks {} of world size {w}", list(ranks)),
                )
            } else {
                let mut why = Vec::new();
                if !missing.is_empty() {
                    why.push(format!("rank {} missing", list(&missing)));
                }
                if !beyond.is_empty() {
                    why.push(format!("rank {} beyond the world size", list(&beyond)));
                }
                Check::new(
                    CheckId::Ranks,
                    Status::Warn,
                    Some(n as f64),
                    Some(w as f64),
                    format!(
                        "{n} traces of world size {w}: {}; waiting is measured among the given ranks only",
                        why.join(", ")
                    ),
                )
            }
        }
        None => {
            let contiguous = ranks.iter().enumerate().all(|(i, &r)| r == i as u64);
            let status = if contiguous { Status::Pass } else { Status::Warn };
            let tail = if contiguous { "" } else { ": a rank in between is missing" };
            Check::new(
                CheckId::Ranks,
                status,
                Some(n as f64),
                None,
                format!("ranks {}, world size unknown{tail}", list(ranks)),
            )
        }
    }
}

fn clock_check(c: &Clocks) -> Check {
    match c.aligned {
        None => Check::new(
            CheckId::ClockAlignment,
            Status::Skip,
            None,
            None,
            "no collective matched across ranks: one clock assumed (traces from one host share it)",
        ),
        Some(true) => Check::new(
            CheckId::ClockAlignment,
            Status::Pass,
            c.min_overlap_us,
            Some(-c.tolerance_us),
            format!(
                "{} collectives matched across ranks overlap on every rank (smallest overlap {:.3} µs): one clock",
                c.matched_collectives,
                c.min_overlap_us.unwrap_or(0.0)
            ),
        ),
        Some(false) => Check::new(
            CheckId::ClockAlignment,
            Status::Warn,
            c.min_overlap_us,
            Some(-c.tolerance_us),
            format!(
                "{} of {} matched collectives end on one rank before another rank starts them (by up to {:.1} µs): the clocks look unaligned, or the traces do not hold the same replays; waiting for peers is not split out",
                c.violations,
                c.matched_collectives,
                -c.min_overlap_us.unwrap_or(0.0)
            ),
        )
        .with_hint("analyze the traces of one run recorded on one host; ranks on several hosts need synchronized clocks"),
    }
}

/// The check `id` at the rank where it is worst: worst status, then the lowest value for
/// occupancy and the highest for the others, then the lowest rank. Its message names the rank
/// that decided and the ranks the check covers.
fn worst_check(ranks: &[RankReport], id: &CheckId) -> Option<Check> {
    let value = |c: &Check| c.value.as_f64().unwrap_or(f64::NAN);
    let mut best: Option<(&RankReport, &Check)> = None;
    let mut covered = Vec::new();
    for r in ranks {
        let Some(c) = r.checks.iter().find(|c| c.id == *id) else { continue };
        covered.push(r.rank);
        let worse = match best {
            None => true,
            Some((_, b)) if c.status != b.status => c.status > b.status,
            Some((_, b)) if *id == CheckId::Occupancy => value(c) < value(b),
            Some((_, b)) => value(c) > value(b),
        };
        if worse {
            best = Some((r, c));
        }
    }
    best.map(|(r, c)| {
        let mut c = c.clone();
        c.message = if covered.len() > 1 {
            format!("rank {} (worst of ranks {}): {}", r.rank, list(&covered), c.message)
        } else {
            format!("rank {}: {}", r.rank, c.message)
        };
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_check_names_missing_ranks() {
        assert_eq!(ranks_check(&[0, 1], Some(2)).status, Status::Pass);
        let c = ranks_check(&[0, 2], Some(4));
        assert_eq!(c.status, Status::Warn);
        assert!(c.message.contains("rank 1, 3 missing"), "{}", c.message);
        assert_eq!(ranks_check(&[0, 1, 2], None).status, Status::Pass);
        assert_eq!(ranks_check(&[0, 2], None).status, Status::Warn);
        let many: Vec<u64> = (0..64).collect();
        assert_eq!(ranks_check(&many, Some(64)).message, "ranks 0–63 of world size 64");
        assert_eq!(list(&[0, 1, 3, 5, 6, 7, 9]), "0, 1, 3, 5–7, 9");
    }
}
