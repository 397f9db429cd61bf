//! The checks of a multi-rank analysis: occupancy excluding wait, the rank set, the clocks, and
//! each per-rank check at its worst rank.

use crate::check::{Check, Status, Verdict};
use crate::config::Thresholds;
use crate::model_ranks::*;

pub(super) fn occupancy_status(occ: f64, th: &Thresholds) -> Status {
    if occ < th.occupancy_fail {
        Status::Fail
    } else if occ < th.occupancy_warn {
        Status::Warn
    } else {
        Status::Pass
    }
}

/// The occupancy check of a rank, on occupancy excluding collective wait.
pub(super) fn occupancy_check(f: &RankFigures, c: &Collectives, common: bool, th: &Thresholds) -> Check {
    let value = f.occupancy_excluding_wait.unwrap_or(f.occupancy);
    let status = occupancy_status(value, th);
    let scope = if common { "the common window (every rank recorded)" } else { "its window" };
    let limits = format!(
        "(fail below {:.0}%, warn below {:.0}%)",
        th.occupancy_fail * 100.0,
        th.occupancy_warn * 100.0
    );
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
    let check = Check::new("occupancy", status, Some(value), Some(th.occupancy_fail), msg);
    if status == Status::Pass {
        check
    } else {
        check.with_hint("the GPU waits for the host between launches, or for a peer: look at the host cost of each launch, the gaps and the replay skew")
    }
}

pub(super) fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Skip => 0,
        Verdict::Pass => 1,
        Verdict::Warn => 2,
        Verdict::Fail => 3,
    }
}

pub(super) fn ranks_check(ranks: &[u64], world_size: Option<u64>) -> Check {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let n = ranks.len() as u64;
    match world_size {
        Some(w) => {
            let missing: Vec<u64> = (0..w).filter(|r| !ranks.contains(r)).collect();
            let beyond: Vec<u64> = ranks.iter().copied().filter(|&r| r >= w).collect();
            if missing.is_empty() && beyond.is_empty() {
                Check::new(
                    "ranks",
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
                    "ranks",
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
                "ranks",
                status,
                Some(n as f64),
                None,
                format!("ranks {}, world size unknown{tail}", list(ranks)),
            )
        }
    }
}

pub(super) fn clock_check_result(c: &Clocks) -> Check {
    match c.aligned {
        None => Check::new(
            "clock_alignment",
            Status::Skip,
            None,
            None,
            "no collective matched across ranks: one clock assumed (traces from one host share it)",
        ),
        Some(true) => Check::new(
            "clock_alignment",
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
            "clock_alignment",
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
/// occupancy and the highest for the others, then the lowest rank.
pub(super) fn worst_check(ranks: &[RankAnalysis], id: &str) -> Option<Check> {
    let value = |c: &Check| c.value.as_f64().unwrap_or(f64::NAN);
    let mut best: Option<(&RankAnalysis, &Check)> = None;
    for r in ranks {
        let Some(c) = r.checks.iter().find(|c| c.id == id) else { continue };
        let worse = match best {
            None => true,
            Some((_, b)) if c.status != b.status => c.status > b.status,
            Some((_, b)) if id == "occupancy" => value(c) < value(b),
            Some((_, b)) => value(c) > value(b),
        };
        if worse {
            best = Some((r, c));
        }
    }
    best.map(|(r, c)| {
        let mut c = c.clone();
        c.message = format!("rank {}: {}", r.rank, c.message);
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
    }
}
