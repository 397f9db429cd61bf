//! The judgement of several ranks: each rank's occupancy excluding waiting for peers (failing
//! below 70% with several ranks), each check at its worst rank, the ranks and clock checks, and
//! one rank of several analyzed alone.

use launchguard_analysis::model::Analysis;
use launchguard_analysis::model_ranks::RanksAnalysis;
use launchguard_judge::{CheckId, RanksReport, Settings, Status, Verdict};

use crate::trace::{analysis, check_of, Case, HEALTHY};

/// One rank: its trace's figures `c`, its occupancy counting collectives as busy and excluding
/// waiting for peers, with `wait_us` of waiting (None: clocks unaligned) and `matched`
/// collectives matched across ranks.
struct Rank {
    case: Case,
    occupancy: f64,
    excluding_wait: Option<f64>,
    wait_us: Option<f64>,
    kernels: u64,
    matched: u64,
}

const RANK: Rank = Rank {
    case: Case { world: 2, ..HEALTHY },
    occupancy: 0.95,
    excluding_wait: Some(0.85),
    wait_us: Some(100.0),
    kernels: 800,
    matched: 800,
};

fn rank_json(rank: u64, r: &Rank, a: &Analysis) -> serde_json::Value {
    serde_json::json!({
        "rank": rank, "rank_from": "file name", "node": null,
        "collectives": {"kernels": r.kernels, "point_to_point": 0, "matched": r.matched, "names": []},
        "whole": {"window_start_us": 0.0, "window_us": 10_000.0, "busy_us": 10_000.0 * r.occupancy,
                  "occupancy": r.occupancy, "compute_busy_us": 0.0, "collective_busy_us": 0.0,
                  "collective_wait_us": r.wait_us, "busy_excluding_wait_us": null,
                  "occupancy_excluding_wait": r.excluding_wait},
        "common": null,
        "analysis": a,
    })
}

fn ranks_with(ranks: &[(u64, Rank, Analysis)], world: Option<u64>, aligned: Option<bool>) -> RanksReport {
    launchguard_judge::ranks(ranks_analysis(ranks, world, aligned), &Settings::default())
}

fn ranks_analysis(
    ranks: &[(u64, Rank, Analysis)],
    world: Option<u64>,
    aligned: Option<bool>,
) -> RanksAnalysis {
    let v = serde_json::json!({
        "schema": "launchguard.ranks/1",
        "world_size": world,
        "ranks": ranks.iter().map(|(k, r, a)| rank_json(*k, r, a)).collect::<Vec<_>>(),
        "across": {
            "clocks": {"aligned": aligned, "matched_collectives": 800, "violations": 3, "min_overlap_us": -12.5,
                       "tolerance_us": 1.0, "offsets_us": []},
            "common_window": null, "replays_matched": 100, "skew": null, "skew_common": null
        },
        "warnings": []
    });
    serde_json::from_value(v).unwrap()
}

fn ranks(list: Vec<(u64, Rank)>) -> RanksReport {
    let with: Vec<(u64, Rank, Analysis)> =
        list.into_iter().map(|(k, r)| (k, Rank { ..r }, analysis(&r.case))).collect();
    ranks_with(&with, Some(2), Some(true))
}

fn check(r: &RanksReport, id: CheckId) -> &launchguard_judge::Check {
    r.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no {id}"))
}

fn rank_check(r: &RanksReport, rank: u64, id: CheckId) -> &launchguard_judge::Check {
    r.ranks.iter().find(|k| k.rank == rank).unwrap().checks.iter().find(|c| c.id == id).unwrap()
}

/// A rank's occupancy is its time not spent waiting for peers, against 70% (fail) and 90%.
#[test]
fn a_ranks_occupancy_excludes_waiting() {
    let at = |x: f64| {
        let r = ranks(vec![(0, Rank { excluding_wait: Some(x), ..RANK }), (1, RANK)]);
        rank_check(&r, 0, CheckId::Occupancy).clone()
    };
    assert_eq!(at(0.69).status, Status::Fail);
    assert_eq!(at(0.70).status, Status::Warn);
    assert_eq!(at(0.90).status, Status::Pass);
    let c = at(0.85);
    assert_eq!(c.value, serde_json::json!(0.85));
    assert_eq!(c.limit, serde_json::json!(0.7));
    assert!(c.hint.is_some());
    assert!(
        c.message.starts_with("GPU busy 85.0% of its window, 10.0 ms, not counting 0.100 ms of collectives waiting for peers (95.0% counting them)"),
        "{}",
        c.message
    );
    assert_eq!(at(0.95).hint, None);
    // Without a figure excluding waiting, occupancy counting collectives as busy.
    let r = ranks(vec![(0, Rank { excluding_wait: None, occupancy: 0.65, ..RANK }), (1, RANK)]);
    assert_eq!(rank_check(&r, 0, CheckId::Occupancy).status, Status::Fail);
    // How the collectives were counted.
    let msg = |r: Rank| {
        ranks(vec![(0, r), (1, RANK)]).ranks[0]
            .checks
            .iter()
            .find(|c| c.id == CheckId::Occupancy)
            .unwrap()
            .message
            .clone()
    };
    assert!(msg(Rank { kernels: 0, ..RANK }).contains("; no collective kernels ("));
    assert!(msg(Rank { wait_us: None, ..RANK })
        .contains("collectives counted as busy: the clocks look unaligned"));
    assert!(msg(Rank { matched: 0, ..RANK })
        .contains("collectives counted as busy: none was matched across ranks"));
    // The overall occupancy check is the worst rank's.
    let r = ranks(vec![(0, RANK), (1, Rank { excluding_wait: Some(0.6), ..RANK })]);
    let c = check(&r, CheckId::Occupancy);
    assert_eq!(c.status, Status::Fail);
    assert!(c.message.starts_with("rank 1 (worst of ranks 0, 1): GPU busy 60.0%"), "{}", c.message);
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.judged_occupancy(), Some(0.6));
    // Over the window every rank was recorded in, when there is one.
    let both = [(0, RANK, analysis(&RANK.case)), (1, RANK, analysis(&RANK.case))];
    let mut x = ranks_analysis(&both, Some(2), Some(true));
    let mut common = x.ranks[1].whole.clone();
    common.occupancy_excluding_wait = Some(0.5);
    x.ranks[1].facts.common = Some(common);
    x.across.common_window =
        Some(launchguard_analysis::model_ranks::Window { start_us: 0.0, end_us: 5000.0, length_us: 5000.0 });
    let r = launchguard_judge::ranks(x, &Settings::default());
    assert_eq!(r.judged_occupancy(), Some(0.5));
    let c = rank_check(&r, 1, CheckId::Occupancy);
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.message.starts_with("GPU busy 50.0% of the common window (every rank recorded)"),
        "{}",
        c.message
    );
}

/// A rank with no graph replay skips occupancy as its trace does: the rank's own figure does not
/// replace a check that does not apply.
#[test]
fn a_rank_without_graph_replays_skips_occupancy() {
    let none = Rank { case: Case { launches: 0, world: 2, ..HEALTHY }, excluding_wait: Some(0.1), ..RANK };
    let r = ranks(vec![(0, none), (1, Rank { case: Case { launches: 0, world: 2, ..HEALTHY }, ..RANK })]);
    assert_eq!(rank_check(&r, 0, CheckId::Occupancy).status, Status::Skip);
    assert_eq!(r.verdict, Verdict::Skip);
    assert!(r.reason.as_deref().unwrap().starts_with("no graph replay in the trace"));
}

/// Each check at its worst rank: the worse status, then the lowest occupancy or the highest
/// value of the others, then the lowest rank.
#[test]
fn each_check_at_its_worst_rank() {
    let launches = |a: f64, b: f64| {
        let r = ranks(vec![
            (0, Rank { case: Case { launch_p50_us: a, world: 2, ..HEALTHY }, ..RANK }),
            (1, Rank { case: Case { launch_p50_us: b, world: 2, ..HEALTHY }, ..RANK }),
        ]);
        check(&r, CheckId::GraphLaunch).message.clone()
    };
    assert!(launches(60.0, 80.0).starts_with("rank 1 (worst of ranks 0, 1): "));
    assert!(launches(80.0, 60.0).starts_with("rank 0 (worst of ranks 0, 1): "));
    assert!(launches(70.0, 70.0).starts_with("rank 0 (worst of ranks 0, 1): "));
    // A failure beats a larger value that passes? Both values are the launch's: the failing rank
    // is the one over the limit.
    assert!(launches(500.0, 60.0).starts_with("rank 0 (worst of ranks 0, 1): "));
    // The status first, even against a larger value: rank 0's 500 µs launch of 44 kernels fails
    // its limit of 150 + 255 µs; rank 1's 1000 µs launch of 421 kernels passes its limit of
    // 150 × 421 / 44 + 255 ≈ 1690 µs.
    let mixed = |first: u64| {
        let small = Rank { case: Case { launch_p50_us: 500.0, world: 2, ..HEALTHY }, ..RANK };
        let large = Rank { case: Case { launch_p50_us: 1000.0, kernels: 421, world: 2, ..HEALTHY }, ..RANK };
        let r = if first == 0 {
            ranks(vec![(0, small), (1, large)])
        } else {
            ranks(vec![(0, large), (1, small)])
        };
        check(&r, CheckId::GraphLaunch).clone()
    };
    let c = mixed(0);
    assert_eq!((c.status, c.value.clone()), (Status::Fail, serde_json::json!(500.0)));
    assert!(c.message.starts_with("rank 0 (worst of ranks 0, 1): "), "{}", c.message);
    let c = mixed(1);
    assert_eq!((c.status, c.value.clone()), (Status::Fail, serde_json::json!(500.0)));
    assert!(c.message.starts_with("rank 1 (worst of ranks 0, 1): "), "{}", c.message);
    // Occupancy: the lowest.
    let occ = |a: f64, b: f64| {
        let r = ranks(vec![
            (0, Rank { excluding_wait: Some(a), ..RANK }),
            (1, Rank { excluding_wait: Some(b), ..RANK }),
        ]);
        check(&r, CheckId::Occupancy).message.clone()
    };
    assert!(occ(0.93, 0.95).starts_with("rank 0 "), "{}", occ(0.93, 0.95));
    assert!(occ(0.95, 0.93).starts_with("rank 1 "), "{}", occ(0.95, 0.93));
    // A tie: the lowest rank.
    assert!(occ(0.93, 0.93).starts_with("rank 0 "), "{}", occ(0.93, 0.93));
    // A worse status wins over a value: rank 1's occupancy warns, rank 0's fails.
    assert!(occ(0.65, 0.75).starts_with("rank 0 "));
    assert!(occ(0.75, 0.65).starts_with("rank 1 "));
    // Gaps: the most.
    let gaps = |a: u64, b: u64| {
        let r = ranks(vec![
            (0, Rank { case: Case { gaps: a, world: 2, ..HEALTHY }, ..RANK }),
            (1, Rank { case: Case { gaps: b, world: 2, ..HEALTHY }, ..RANK }),
        ]);
        check(&r, CheckId::Gaps).clone()
    };
    assert!(gaps(1, 3).message.starts_with("rank 1 "));
    assert!(gaps(3, 1).message.starts_with("rank 0 "));
    assert_eq!(gaps(9, 1).status, Status::Fail);
    assert_eq!(gaps(1, 9).status, Status::Fail);
}

#[test]
fn the_ranks_and_clock_checks() {
    let list = |ids: &[u64], world: Option<u64>| {
        let with: Vec<(u64, Rank, Analysis)> = ids.iter().map(|&k| (k, RANK, analysis(&RANK.case))).collect();
        let r = ranks_with(&with, world, Some(true));
        check(&r, CheckId::Ranks).clone()
    };
    let c = list(&[0, 1], Some(2));
    assert_eq!((c.status, c.message.as_str()), (Status::Pass, "ranks 0, 1 of world size 2"));
    assert_eq!((c.value, c.limit), (serde_json::json!(2.0), serde_json::json!(2.0)));
    let c = list(&[0, 1, 2, 3, 5], Some(4));
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.message, "5 traces of world size 4: rank 5 beyond the world size; waiting is measured among the given ranks only");
    let c = list(&[1, 2], Some(4));
    assert_eq!(
        c.message,
        "2 traces of world size 4: rank 0, 3 missing; waiting is measured among the given ranks only"
    );
    let c = list(&[0, 1, 2], None);
    assert_eq!((c.status, c.message.as_str()), (Status::Pass, "ranks 0–2, world size unknown"));
    let c = list(&[0, 2], None);
    assert_eq!(
        (c.status, c.message.as_str()),
        (Status::Warn, "ranks 0, 2, world size unknown: a rank in between is missing")
    );
    let c = list(&[1, 2], None);
    assert_eq!(c.status, Status::Warn);

    let clock = |aligned: Option<bool>| {
        let with: Vec<(u64, Rank, Analysis)> =
            [0, 1].iter().map(|&k| (k, RANK, analysis(&RANK.case))).collect();
        let r = ranks_with(&with, Some(2), aligned);
        check(&r, CheckId::ClockAlignment).clone()
    };
    let c = clock(None);
    assert_eq!(c.status, Status::Skip);
    let c = clock(Some(true));
    assert_eq!((c.status, c.limit.clone()), (Status::Pass, serde_json::json!(-1.0)));
    assert!(
        c.message.starts_with(
            "800 collectives matched across ranks overlap on every rank (smallest overlap -12.500 µs)"
        ),
        "{}",
        c.message
    );
    let c = clock(Some(false));
    // The limit is the tolerance below zero (1 µs) in either case.
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Warn, serde_json::json!(-12.5), serde_json::json!(-1.0))
    );
    assert!(
        c.message.starts_with(
            "3 of 800 matched collectives end on one rank before another rank starts them (by up to 12.5 µs)"
        ),
        "{}",
        c.message
    );
    assert!(c.hint.is_some());
}

/// A rank whose trace lost events makes the run inconclusive, naming the rank.
#[test]
fn a_damaged_rank_makes_the_run_inconclusive() {
    let mut damaged = analysis(&RANK.case);
    damaged.replay_summary.without_kernels = 50;
    damaged.damage.replays_without_kernels = 50;
    let r = ranks_with(&[(0, RANK, analysis(&RANK.case)), (1, RANK, damaged)], Some(2), Some(true));
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(r.reason.as_deref().unwrap().starts_with("rank 1: the trace lost GPU events"), "{:?}", r.reason);
    let healthy = ranks(vec![(0, RANK), (1, RANK)]);
    // Healthy ranks: judged, occupancy 85% excluding waiting warns.
    assert_eq!((healthy.verdict, healthy.reason), (Verdict::Warn, None));
}

/// The worst rank without a culprit: the worst verdict, then the lowest occupancy, then the
/// lowest rank.
#[test]
fn the_worst_rank() {
    let worst = |a: Rank, b: Rank| ranks(vec![(0, a), (1, b)]).across.worst_rank;
    assert_eq!(worst(RANK, RANK), 0);
    assert_eq!(worst(RANK, Rank { excluding_wait: Some(0.6), ..RANK }), 1);
    assert_eq!(
        worst(Rank { excluding_wait: Some(0.91), ..RANK }, Rank { excluding_wait: Some(0.92), ..RANK }),
        0
    );
    assert_eq!(
        worst(Rank { excluding_wait: Some(0.92), ..RANK }, Rank { excluding_wait: Some(0.91), ..RANK }),
        1
    );
    // A failing launch on rank 0 beats a lower passing occupancy on rank 1.
    let slow =
        Rank { case: Case { launch_p50_us: 5000.0, launch_mean_us: 5000.0, world: 2, ..HEALTHY }, ..RANK };
    assert_eq!(worst(slow, Rank { excluding_wait: Some(0.91), ..RANK }), 0);
    // The verdict first, even against the occupancy: a failing rank 0 at 95% beats a passing
    // rank 1 at 91%, either way round.
    let slow_busy = || Rank {
        case: Case { launch_p50_us: 5000.0, launch_mean_us: 5000.0, world: 2, ..HEALTHY },
        excluding_wait: Some(0.95),
        ..RANK
    };
    let busy_less = || Rank { excluding_wait: Some(0.91), ..RANK };
    let r = ranks(vec![(0, slow_busy()), (1, busy_less())]);
    assert_eq!((r.ranks[0].verdict, r.ranks[1].verdict), (Verdict::Fail, Verdict::Pass));
    assert_eq!(r.across.worst_rank, 0);
    assert_eq!(worst(busy_less(), slow_busy()), 1);
}

/// The rank whose GPU idles before each replay (at least 20 µs, twice any other's) makes the
/// others wait.
#[test]
fn the_rank_that_makes_the_others_wait() {
    let idle = |us: f64| Rank { case: Case { idle_us: us, world: 2, ..HEALTHY }, ..RANK };
    let r = ranks(vec![(0, idle(10.0)), (1, idle(400.0))]);
    assert_eq!((r.across.culprit, r.across.waiting.clone(), r.across.worst_rank), (Some(1), vec![0], 1));
    let c = check(&r, CheckId::Ranks);
    assert!(c.message.contains("rank 1 makes the others wait: its GPU idles 400.0 µs p50 before each replay (the others 10.0 µs at most)"), "{}", c.message);
    assert!(c.message.contains("rank 0 waits for it in their collectives"), "{}", c.message);
    // Under 20 µs, or under twice the others': nobody to blame.
    assert_eq!(ranks(vec![(0, idle(5.0)), (1, idle(19.9))]).across.culprit, None);
    assert_eq!(ranks(vec![(0, idle(5.0)), (1, idle(20.0))]).across.culprit, Some(1));
    assert_eq!(ranks(vec![(0, idle(30.0)), (1, idle(59.9))]).across.culprit, None);
    assert_eq!(ranks(vec![(0, idle(30.0)), (1, idle(60.0))]).across.culprit, Some(1));
    assert_eq!(ranks(vec![(0, idle(400.0)), (1, idle(10.0))]).across.culprit, Some(0));
}

/// One rank of several analyzed alone says so, and warns where its collectives took at least
/// half of each replay (it waited for a peer).
#[test]
fn one_rank_alone() {
    let alone = |collectives: Option<f64>, world: u64| {
        let mut a = analysis(&Case { world, ..HEALTHY });
        a.trace.rank = Some(1);
        a.replay_summary.collectives_p50_us = collectives;
        a
    };
    let c = check_of(alone(Some(127.5), 2), CheckId::Ranks);
    assert_eq!(
        (c.status, c.value.clone(), c.limit.clone()),
        (Status::Warn, serde_json::json!(0.5), serde_json::json!(0.5))
    );
    assert!(c.message.starts_with("rank 1 of 2 analyzed alone: one rank cannot see"), "{}", c.message);
    assert!(
        c.message
            .contains("its collectives take 127.5 µs of each 255.0 µs replay at the median (warn at 50%)"),
        "{}",
        c.message
    );
    let c = check_of(alone(Some(127.0), 2), CheckId::Ranks);
    assert_eq!(c.status, Status::Pass);
    // Its value is still the collectives' share of the replay: 127 of 255 µs.
    assert!((c.value.as_f64().unwrap() - 127.0 / 255.0).abs() < 1e-12, "{}", c.value);
    assert!(c.message.ends_with("; analyze every rank's trace together for that"));
    assert_eq!(check_of(alone(None, 2), CheckId::Ranks).status, Status::Pass);
    let r = launchguard_judge::analysis(alone(Some(200.0), 1), &Settings::default());
    assert!(r.checks.iter().all(|c| c.id != CheckId::Ranks));
    let mut a = alone(None, 4);
    a.trace.rank = None;
    assert!(check_of(a, CheckId::Ranks).message.starts_with("a rank of 4 analyzed alone"));
}

/// A check only one rank has names that rank alone, with no "worst of".
#[test]
fn a_check_of_one_rank_names_it_alone() {
    let r = ranks(vec![(1, RANK)]);
    let c = check(&r, CheckId::Occupancy);
    assert!(c.message.starts_with("rank 1: GPU busy 85.0%"), "{}", c.message);
}
