//! Several traces of one distributed run, one per rank: each rank's own analysis, its GPU time
//! split into compute, collectives and waiting for peers, the skew of replay starts across ranks,
//! the worst rank and a verdict across ranks.
//!
//! Definitions (the contract; times are integer nanoseconds, `|S|` the length of a union of spans):
//! - **Rank**: `distributedInfo.rank`, else the number after `rank` in the file name (`rank0`,
//!   `rank_1`, `tp2_rank1.json.gz`; [`rank_from_file_name`]), else an error. Two traces of one
//!   rank are an error.
//! - **Common clock**: traces recorded on one host share a clock (CUPTI and roctracer convert GPU
//!   timestamps to the host clock). A rank's times are shifted by its `baseTimeNanoseconds` minus
//!   the lowest rank's (0 where either is missing). The assumption is checked, see *clock check*.
//! - **Collective kernel**: a kernel named as [`collective_kind`] says; every other GPU activity
//!   is compute.
//! - **Matching**: replays (graph launches, in the order of [`crate::analyze`]) are matched across
//!   ranks by index, since every rank replays the same graph the same number of times. Inside a
//!   replay, the k-th collective kernel (by start; point-to-point ones left out) on every rank is
//!   one collective. Collectives outside any replay are matched by their order among those. A
//!   replay whose collective count differs between ranks is not matched, nor a position whose
//!   kernel names differ. This assumes one communicator spanning the given ranks.
//! - **Clock check**: a collective cannot finish on one rank before every rank has started it. The
//!   clocks look aligned when every matched collective has `min(end) − max(start) ≥ −1 µs`
//!   ([`CLOCK_TOLERANCE_NS`]); otherwise waiting is not split out (null figures), and the skew is
//!   not reported.
//! - **Wait** of a matched instance on rank r: `clamp(max_s start_s − start_r, 0, dur_r)`, the
//!   time it ran before the last rank's instance started; its waiting span is
//!   `[start_r, start_r + wait)`.
//! - **Figures over a window W** ([`RankFigures`]): busy = `|∪ all ∩ W|`; compute busy =
//!   `|∪ compute ∩ W|`; collective busy = `|∪ collectives ∩ W|`; collective wait =
//!   `|∪ waiting spans ∩ W|`; busy excluding wait = `|(∪ compute ∪ collectives minus their
//!   waiting spans) ∩ W|`; occupancies divide by `|W|`. A rank's *whole* window runs from its first
//!   activity start to its last activity end; the *common* window from the latest first start to
//!   the earliest last end over the ranks: the span in which every rank was recorded. Before it, a
//!   rank may wait for a peer whose profiler has not started (h200x2: rank 0 waited 325 ms).
//! - **Skew** of replay i (over the replays every rank ran on the GPU): the latest minus the
//!   earliest start of its first GPU activity across ranks, and the same of its launch call;
//!   p50, p99, max. The rank that started a replay strictly last is its straggler; the rank most
//!   often last is *the* straggler. `skew_common` keeps the replays whose first GPU activity
//!   starts inside the common window (`start ≤ t < end`) on every rank.
//! - **Checks**: each rank's checks are those of its own analysis, with `occupancy` judged on
//!   occupancy excluding wait over the common window (the whole window without one). With several
//!   ranks the graph-launch check uses the median unless told otherwise. Across ranks: `ranks`,
//!   `clock_alignment`, then each per-rank check at the rank where it is worst. The worst rank has
//!   the worst verdict, among equals the lowest occupancy excluding wait; the verdict is the worst
//!   status of the checks across ranks.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use launchguard_trace::{ActivityKind, Trace};
use regex::Regex;

use crate::analyze::{analyze, Options};
use crate::check::{Check, Status, Verdict};
use crate::config::{LaunchStatistic, Thresholds};
use crate::intervals::{self, Span};
use crate::model::Analysis;
use crate::model_ranks::*;

/// How far (ns) a matched collective's instances may miss overlapping before the clocks are
/// judged unaligned: GPU timestamps converted to the host clock carry sub-µs error.
pub const CLOCK_TOLERANCE_NS: i64 = 1_000;

/// Where a trace's rank came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankSource {
    /// `distributedInfo.rank`.
    DistributedInfo,
    /// The file name.
    FileName,
}

impl RankSource {
    /// As in JSON: `distributedInfo` or `file name`.
    pub fn as_str(self) -> &'static str {
        match self {
            RankSource::DistributedInfo => "distributedInfo",
            RankSource::FileName => "file name",
        }
    }
}

/// Why several traces cannot be analyzed as ranks.
#[derive(Debug, thiserror::Error)]
pub enum RanksError {
    /// No `distributedInfo.rank` and no rank in the file name.
    #[error("cannot tell the rank of {0}: it has no distributedInfo and its file name has no rank number (rank0, rank_1, ...)")]
    UnknownRank(String),
    /// Two traces claim one rank.
    #[error("{first} and {second} are both rank {rank}")]
    DuplicateRank {
        /// The rank.
        rank: u64,
        /// One trace.
        first: String,
        /// The other.
        second: String,
    },
}

/// A trace's rank and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankId {
    /// The rank.
    pub rank: u64,
    /// Its source.
    pub from: RankSource,
    /// A disagreement worth a warning (the file name says another rank).
    pub note: Option<String>,
}

/// A trace with its rank.
#[derive(Debug, Clone, Copy)]
pub struct RankTrace<'a> {
    /// Rank of the trace.
    pub id: &'a RankId,
    /// The trace.
    pub trace: &'a Trace,
}

/// The rank in a file name: the number after `rank` (any case, optionally followed by `_`, `-` or
/// `.`), when the name holds exactly one such number (`tp2_rank1.json.gz` → 1).
pub fn rank_from_file_name(path: &Path) -> Option<u64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"(?i)rank[_.-]?(\d+)").expect("valid regex"));
    let name = path.file_name()?.to_str()?;
    let mut found: Vec<u64> = re.captures_iter(name).filter_map(|c| c[1].parse().ok()).collect();
    found.dedup();
    match found.as_slice() {
        [r] => Some(*r),
        _ => None,
    }
}

/// The rank of a trace: `distributedInfo.rank`, else the file name.
pub fn rank_of(trace: &Trace) -> Result<RankId, RanksError> {
    let path = &trace.source.path;
    let from_name = rank_from_file_name(path);
    match trace.timeline.meta.distributed.as_ref().and_then(|d| d.rank) {
        Some(rank) => Ok(RankId {
            rank,
            from: RankSource::DistributedInfo,
            note: from_name.filter(|&n| n != rank).map(|n| {
                format!(
                    "{}: distributedInfo says rank {rank}, the file name rank {n}; using distributedInfo",
                    path.display()
                )
            }),
        }),
        None => from_name
            .map(|rank| RankId { rank, from: RankSource::FileName, note: None })
            .ok_or_else(|| RanksError::UnknownRank(path.display().to_string())),
    }
}

/// The ranks of several traces, in rank order; two traces of one rank are an error.
pub fn identify(traces: &[Trace]) -> Result<Vec<(RankId, usize)>, RanksError> {
    let mut ids = Vec::with_capacity(traces.len());
    for (i, t) in traces.iter().enumerate() {
        ids.push((rank_of(t)?, i));
    }
    ids.sort_by_key(|(id, i)| (id.rank, *i));
    for pair in ids.windows(2) {
        if pair[0].0.rank == pair[1].0.rank {
            return Err(RanksError::DuplicateRank {
                rank: pair[0].0.rank,
                first: traces[pair[0].1].source.path.display().to_string(),
                second: traces[pair[1].1].source.path.display().to_string(),
            });
        }
    }
    Ok(ids)
}

/// What a collective kernel does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveKind {
    /// Every rank of the communicator takes part (all_reduce, all_gather, reduce_scatter,
    /// broadcast, reduce, all_to_all, or a kernel whose operation the name does not tell).
    Collective,
    /// Send / receive between two ranks: never matched across ranks.
    PointToPoint,
}

/// Whether a kernel name is a collective's: NCCL and RCCL kernels (`ncclDevKernel_*`,
/// `ncclKernel_*`), MSCCL's (`mscclKernel_*`), the custom all-reduce of vLLM and SGLang
/// (`cross_device_reduce_*`) and PyTorch's symmetric-memory all-reduces (`one_shot_all_reduce`,
/// `two_shot_all_reduce`, `multimem_all_reduce`). A leading `void ` and namespaces are allowed
/// before the custom ones. NCCL names with `SendRecv`, `_Send` or `_Recv` are point-to-point.
pub fn collective_kind(name: &str) -> Option<CollectiveKind> {
    let n = name.strip_prefix("void ").unwrap_or(name);
    if ["ncclDevKernel_", "ncclKernel_", "mscclKernel_"].iter().any(|p| n.starts_with(p)) {
        let p2p = ["SendRecv", "_Send", "_Recv"].iter().any(|s| n.contains(s));
        return Some(if p2p { CollectiveKind::PointToPoint } else { CollectiveKind::Collective });
    }
    ["cross_device_reduce_", "one_shot_all_reduce", "two_shot_all_reduce", "multimem_all_reduce"]
        .iter()
        .any(|s| n.contains(s))
        .then_some(CollectiveKind::Collective)
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// One GPU activity of a rank, on the common clock.
struct Act<'a> {
    start: i64,
    end: i64,
    name: &'a str,
    kind: Option<CollectiveKind>,
}

struct ReplayData {
    launch_start: i64,
    first_gpu: Option<i64>,
    /// Indices of its collective kernels (point-to-point left out), by start.
    collectives: Vec<usize>,
}

/// What the cross-rank figures need of one rank.
struct RankData<'a> {
    rank: u64,
    offset: i64,
    acts: Vec<Act<'a>>,
    replays: Vec<ReplayData>,
    /// Collective kernels (point-to-point left out) outside any replay, by start.
    outside: Vec<usize>,
    /// First activity start and last activity end.
    extent: Option<Span>,
    /// Collective kernels matched across every rank, by index in `acts`.
    matched: HashSet<usize>,
    /// Wait of each matched collective kernel, by index in `acts`; empty when the clocks look
    /// unaligned.
    waits: HashMap<usize, i64>,
}

fn rank_data<'a>(trace: &'a Trace, rank: u64, offset: i64) -> RankData<'a> {
    let t = &trace.timeline;
    let acts: Vec<Act> = t
        .activities
        .iter()
        .map(|a| {
            let name = t.strings.get(a.name);
            Act {
                start: a.start + offset,
                end: a.end + offset,
                name,
                kind: if a.kind == ActivityKind::Kernel { collective_kind(name) } else { None },
            }
        })
        .collect();
    // Replays in the order of the single-trace analysis: launches by (start, end).
    let mut launches: Vec<_> = t.launches.iter().collect();
    launches.sort_by_key(|l| (l.start, l.end));
    let mut by_correlation: HashMap<u64, usize> = HashMap::new();
    let mut replays: Vec<ReplayData> = Vec::with_capacity(launches.len());
    for (i, l) in launches.iter().enumerate() {
        if let Some(c) = l.correlation {
            by_correlation.entry(c).or_insert(i);
        }
        replays.push(ReplayData { launch_start: l.start + offset, first_gpu: None, collectives: Vec::new() });
    }
    let mut outside = Vec::new();
    for (i, (a, act)) in t.activities.iter().zip(&acts).enumerate() {
        let replay = a.correlation.and_then(|c| by_correlation.get(&c)).map(|&r| &mut replays[r]);
        let collective = act.kind == Some(CollectiveKind::Collective);
        match replay {
            Some(r) => {
                r.first_gpu = Some(r.first_gpu.map_or(act.start, |f| f.min(act.start)));
                if collective {
                    r.collectives.push(i);
                }
            }
            None if collective => outside.push(i),
            None => {}
        }
    }
    let order = |v: &mut Vec<usize>| v.sort_by_key(|&i| (acts[i].start, acts[i].end, i));
    for r in &mut replays {
        order(&mut r.collectives);
    }
    order(&mut outside);
    let extent = acts.iter().map(|a| (a.start, a.end)).reduce(|x, y| (x.0.min(y.0), x.1.max(y.1)));
    RankData { rank, offset, acts, replays, outside, extent, matched: HashSet::new(), waits: HashMap::new() }
}

/// One matched collective: an activity index per rank, in rank order.
type Group = Vec<usize>;

/// Matches the k-th entries of the ranks' lists; returns false when the lists cannot be matched
/// (different lengths).
fn match_lists(
    data: &[RankData],
    lists: &[&[usize]],
    groups: &mut Vec<Group>,
    name_mismatch: &mut u64,
) -> bool {
    let n = lists[0].len();
    if lists.iter().any(|l| l.len() != n) {
        return false;
    }
    for k in 0..n {
        let name = data[0].acts[lists[0][k]].name;
        if data.iter().zip(lists).all(|(d, l)| d.acts[l[k]].name == name) {
            groups.push(lists.iter().map(|l| l[k]).collect());
        } else {
            *name_mismatch += 1;
        }
    }
    true
}

struct Matching {
    groups: Vec<Group>,
    replays: usize,
    unmatched_replays: u64,
    name_mismatch: u64,
    outside_unmatched: bool,
}

fn match_collectives(data: &[RankData]) -> Matching {
    let replays = data.iter().map(|d| d.replays.len()).min().unwrap_or(0);
    let mut m = Matching {
        groups: Vec::new(),
        replays,
        unmatched_replays: 0,
        name_mismatch: 0,
        outside_unmatched: false,
    };
    for i in 0..replays {
        let lists: Vec<&[usize]> = data.iter().map(|d| d.replays[i].collectives.as_slice()).collect();
        if !match_lists(data, &lists, &mut m.groups, &mut m.name_mismatch) {
            m.unmatched_replays += 1;
        }
    }
    let lists: Vec<&[usize]> = data.iter().map(|d| d.outside.as_slice()).collect();
    m.outside_unmatched = !match_lists(data, &lists, &mut m.groups, &mut m.name_mismatch);
    m
}

fn clock_check(data: &[RankData], groups: &[Group]) -> Clocks {
    let mut violations = 0;
    let mut min_overlap: Option<i64> = None;
    for g in groups {
        let latest_start = data.iter().zip(g).map(|(d, &i)| d.acts[i].start).max().unwrap_or(0);
        let earliest_end = data.iter().zip(g).map(|(d, &i)| d.acts[i].end).min().unwrap_or(0);
        let overlap = earliest_end - latest_start;
        if overlap < -CLOCK_TOLERANCE_NS {
            violations += 1;
        }
        min_overlap = Some(min_overlap.map_or(overlap, |m| m.min(overlap)));
    }
    Clocks {
        aligned: (!groups.is_empty()).then_some(violations == 0),
        matched_collectives: groups.len() as u64,
        violations,
        min_overlap_us: min_overlap.map(us),
        tolerance_us: us(CLOCK_TOLERANCE_NS),
        offsets_us: data.iter().map(|d| RankValue { rank: d.rank, value: us(d.offset) }).collect(),
    }
}

fn assign_waits(data: &mut [RankData], groups: &[Group]) {
    for g in groups {
        let latest = data.iter().zip(g).map(|(d, &i)| d.acts[i].start).max().unwrap_or(0);
        for (d, &i) in data.iter_mut().zip(g) {
            let a = &d.acts[i];
            d.waits.insert(i, (latest - a.start).clamp(0, a.end - a.start));
        }
    }
}

fn figures(d: &RankData, window: Span, split: bool) -> RankFigures {
    let w = [window];
    let measure = |spans: Vec<Span>| intervals::total(&intervals::intersect(&intervals::union(spans), &w));
    let spans = |keep: &dyn Fn(&Act) -> bool| -> Vec<Span> {
        d.acts.iter().filter(|a| keep(a)).map(|a| (a.start, a.end)).collect()
    };
    let busy = measure(spans(&|_| true));
    let compute = measure(spans(&|a| a.kind.is_none()));
    let collective = measure(spans(&|a| a.kind.is_some()));
    let length = window.1 - window.0;
    let ratio = |x: i64| if length > 0 { x as f64 / length as f64 } else { 0.0 };
    let (wait, working) = if split {
        let mut waiting = Vec::new();
        let mut working = Vec::new();
        for (i, a) in d.acts.iter().enumerate() {
            match d.waits.get(&i) {
                Some(&w) => {
                    waiting.push((a.start, a.start + w));
                    working.push((a.start + w, a.end));
                }
                None => working.push((a.start, a.end)),
            }
        }
        (Some(measure(waiting)), Some(measure(working)))
    } else {
        (None, None)
    };
    RankFigures {
        window_start_us: us(window.0),
        window_us: us(length),
        busy_us: us(busy),
        occupancy: ratio(busy),
        compute_busy_us: us(compute),
        collective_busy_us: us(collective),
        collective_wait_us: wait.map(us),
        busy_excluding_wait_us: working.map(us),
        occupancy_excluding_wait: working.map(ratio),
    }
}

fn spread(mut v: Vec<f64>) -> Spread {
    v.sort_by(f64::total_cmp);
    Spread {
        p50_us: intervals::percentile(&v, 50.0).unwrap_or(0.0),
        p99_us: intervals::percentile(&v, 99.0).unwrap_or(0.0),
        max_us: v.last().copied().unwrap_or(0.0),
    }
}

fn skew(data: &[RankData], replays: usize, keep: &dyn Fn(&[i64]) -> bool) -> Option<Skew> {
    let mut gpu = Vec::new();
    let mut launch = Vec::new();
    let mut last = vec![0u64; data.len()];
    for i in 0..replays {
        let Some(firsts) = data.iter().map(|d| d.replays[i].first_gpu).collect::<Option<Vec<i64>>>() else {
            continue;
        };
        if !keep(&firsts) {
            continue;
        }
        let hi = *firsts.iter().max().expect("ranks");
        let lo = *firsts.iter().min().expect("ranks");
        gpu.push(us(hi - lo));
        if firsts.iter().filter(|&&f| f == hi).count() == 1 {
            last[firsts.iter().position(|&f| f == hi).expect("max")] += 1;
        }
        let starts: Vec<i64> = data.iter().map(|d| d.replays[i].launch_start).collect();
        launch.push(us(starts.iter().max().expect("ranks") - starts.iter().min().expect("ranks")));
    }
    if gpu.is_empty() {
        return None;
    }
    let most = *last.iter().max().expect("ranks");
    let straggler = (most > 0 && last.iter().filter(|&&n| n == most).count() == 1)
        .then(|| data[last.iter().position(|&n| n == most).expect("max")].rank);
    Some(Skew {
        replays: gpu.len() as u64,
        gpu_start: spread(gpu),
        launch_start: spread(launch),
        last_to_start: data.iter().zip(&last).map(|(d, &n)| RankCount { rank: d.rank, replays: n }).collect(),
        straggler,
    })
}

fn occupancy_status(occ: f64, th: &Thresholds) -> Status {
    if occ < th.occupancy_fail {
        Status::Fail
    } else if occ < th.occupancy_warn {
        Status::Warn
    } else {
        Status::Pass
    }
}

/// The occupancy check of a rank, on occupancy excluding collective wait.
fn occupancy_check(f: &RankFigures, c: &Collectives, common: bool, th: &Thresholds) -> Check {
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

fn collectives_of(d: &RankData) -> Collectives {
    let mut c = Collectives::default();
    let mut names: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, a) in d.acts.iter().enumerate() {
        if let Some(kind) = a.kind {
            c.kernels += 1;
            c.point_to_point += u64::from(kind == CollectiveKind::PointToPoint);
            c.matched += u64::from(d.matched.contains(&i));
            *names.entry(a.name).or_default() += 1;
        }
    }
    c.names = names.into_iter().map(|(name, count)| NameCount { name: name.to_string(), count }).collect();
    c.names.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    c
}

fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Skip => 0,
        Verdict::Pass => 1,
        Verdict::Warn => 2,
        Verdict::Fail => 3,
    }
}

fn ranks_check(ranks: &[u64], world_size: Option<u64>) -> Check {
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

fn clock_check_result(c: &Clocks) -> Check {
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
fn worst_check(ranks: &[RankAnalysis], id: &str) -> Option<Check> {
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

/// Analyzes the traces of several ranks of one run. `ranks` comes from [`identify`] (rank order,
/// no duplicates); `opts.within` applies to each rank's own analysis only, the cross-rank figures
/// cover whole traces (so the command refuses it with several traces).
pub fn analyze_ranks(ranks: &[RankTrace], opts: &Options) -> RanksAnalysis {
    let mut warnings: Vec<String> = ranks.iter().filter_map(|r| r.id.note.clone()).collect();
    let world_sizes: Vec<Option<u64>> =
        ranks.iter().map(|r| r.trace.timeline.meta.distributed.as_ref().and_then(|d| d.world_size)).collect();
    let world_size = match world_sizes.first() {
        Some(Some(w)) if world_sizes.iter().all(|x| *x == Some(*w)) => Some(*w),
        _ => {
            if world_sizes.iter().flatten().next().is_some() {
                warnings.push(format!(
                    "the traces disagree on the world size ({})",
                    world_sizes
                        .iter()
                        .map(|w| w.map_or("none".to_string(), |w| w.to_string()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            None
        }
    };

    // Each rank alone. With several ranks one launch that waits for a peer must not decide, even
    // where the trace does not say it is one of several.
    let analyses: Vec<Analysis> = ranks
        .iter()
        .map(|r| {
            let world = r.trace.timeline.meta.distributed.as_ref().and_then(|d| d.world_size);
            let single_rank = !matches!(world, Some(w) if w > 1);
            let forced = opts.thresholds.launch_statistic == LaunchStatistic::Auto && single_rank && ranks.len() > 1;
            let mut o = opts.clone();
            if forced {
                o.thresholds.launch_statistic = LaunchStatistic::Median;
            }
            let mut a = analyze(r.trace, &o);
            if forced {
                for c in a.checks.iter_mut().filter(|c| c.id == "graph_launch" && c.status != Status::Skip) {
                    c.message.push_str(" (median: several ranks analyzed together; one launch that waits for a peer must not decide)");
                }
            }
            a
        })
        .collect();

    let base = ranks.iter().filter_map(|r| r.trace.timeline.meta.base_time_ns).min();
    let mut data: Vec<RankData> = ranks
        .iter()
        .map(|r| {
            let offset = match (r.trace.timeline.meta.base_time_ns, base) {
                (Some(b), Some(lowest)) => b - lowest,
                _ => 0,
            };
            rank_data(r.trace, r.id.rank, offset)
        })
        .collect();
    for (d, a) in data.iter().zip(&analyses) {
        if a.devices.len() > 1 {
            warnings.push(format!(
                "rank {}: GPU activity on {} devices; its cross-rank figures merge them",
                d.rank,
                a.devices.len()
            ));
        }
    }

    let counts: Vec<usize> = data.iter().map(|d| d.replays.len()).collect();
    if counts.iter().any(|&c| c != counts[0]) {
        warnings.push(format!(
            "the ranks have different replay counts ({}): replays are matched by index over the first {}, which assumes every trace starts at the same replay",
            counts.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
            counts.iter().min().unwrap_or(&0)
        ));
    }
    let matching = match_collectives(&data);
    if matching.unmatched_replays > 0 {
        warnings.push(format!(
            "{} replays have different collective counts on different ranks (lost events?): their collectives are not matched, their waiting not split out",
            matching.unmatched_replays
        ));
    }
    if matching.outside_unmatched {
        warnings.push(
            "the collectives outside graph replays differ in number between ranks: they are not matched"
                .to_string(),
        );
    }
    if matching.name_mismatch > 0 {
        warnings.push(format!(
            "{} collectives differ in kernel name between ranks at the same position: not matched",
            matching.name_mismatch
        ));
    }
    for g in &matching.groups {
        for (d, &i) in data.iter_mut().zip(g) {
            d.matched.insert(i);
        }
    }
    let clocks = clock_check(&data, &matching.groups);
    let split = clocks.aligned != Some(false);
    if split {
        assign_waits(&mut data, &matching.groups);
    } else {
        warnings.push("the clocks look unaligned: collective time is reported without splitting out the waiting, and the replay skew is not reported".to_string());
    }

    let common = if data.iter().all(|d| d.extent.is_some()) {
        let start = data.iter().filter_map(|d| d.extent).map(|e| e.0).max();
        let end = data.iter().filter_map(|d| d.extent).map(|e| e.1).min();
        match (start, end) {
            (Some(s), Some(e)) if s < e => Some((s, e)),
            _ => None,
        }
    } else {
        None
    };
    let idle: Vec<String> = data.iter().filter(|d| d.extent.is_none()).map(|d| d.rank.to_string()).collect();
    if !idle.is_empty() {
        warnings.push(format!("rank {} has no GPU activity: no common window", idle.join(", ")));
    } else if common.is_none() {
        warnings.push("the ranks' GPU activity does not overlap in time: no common window (not one run, or unaligned clocks)".to_string());
    }

    let mut out_ranks = Vec::with_capacity(ranks.len());
    for ((r, d), analysis) in ranks.iter().zip(&data).zip(analyses) {
        let whole = figures(d, d.extent.unwrap_or((0, 0)), split);
        let common_fig = common.map(|w| figures(d, w, split));
        let judged = common_fig.as_ref().unwrap_or(&whole);
        let collectives = collectives_of(d);
        let occupancy = occupancy_check(judged, &collectives, common.is_some(), &opts.thresholds);
        let checks: Vec<Check> =
            analysis
                .checks
                .iter()
                .map(|c| {
                    if c.id == "occupancy" && c.status != Status::Skip {
                        occupancy.clone()
                    } else {
                        c.clone()
                    }
                })
                .collect();
        let verdict = Verdict::of(&checks);
        for w in &analysis.warnings {
            warnings.push(format!("rank {}: {w}", d.rank));
        }
        out_ranks.push(RankAnalysis {
            rank: r.id.rank,
            rank_from: r.id.from.as_str().to_string(),
            collectives,
            whole,
            common: common_fig,
            checks,
            verdict,
            analysis,
        });
    }

    let occupancy_of = |r: &RankAnalysis| {
        let f = r.common.as_ref().unwrap_or(&r.whole);
        f.occupancy_excluding_wait.unwrap_or(f.occupancy)
    };
    let worst = out_ranks
        .iter()
        .max_by(|a, b| {
            severity(a.verdict)
                .cmp(&severity(b.verdict))
                .then_with(|| occupancy_of(b).total_cmp(&occupancy_of(a)))
                .then_with(|| b.rank.cmp(&a.rank))
        })
        .map_or(0, |r| r.rank);

    let rank_ids: Vec<u64> = out_ranks.iter().map(|r| r.rank).collect();
    let mut checks = vec![ranks_check(&rank_ids, world_size), clock_check_result(&clocks)];
    if let Some(first) = out_ranks.first() {
        let ids: Vec<String> = first.checks.iter().map(|c| c.id.clone()).collect();
        checks.extend(ids.iter().filter_map(|id| worst_check(&out_ranks, id)));
    }
    let verdict = Verdict::of(&checks);

    let (skew_all, skew_common) = if split {
        let all = skew(&data, matching.replays, &|_| true);
        let inside =
            common.and_then(|(s, e)| skew(&data, matching.replays, &|f| f.iter().all(|&t| s <= t && t < e)));
        (all, inside)
    } else {
        (None, None)
    };
    let replays_matched = (0..matching.replays)
        .filter(|&i| data.iter().all(|d| d.replays[i].first_gpu.is_some()))
        .count() as u64;

    RanksAnalysis {
        schema: RANKS_SCHEMA.to_string(),
        world_size,
        ranks: out_ranks,
        across: Across {
            worst_rank: worst,
            clocks,
            common_window: common.map(|(s, e)| Window {
                start_us: us(s),
                end_us: us(e),
                length_us: us(e - s),
            }),
            replays_matched,
            skew: skew_all,
            skew_common,
        },
        checks,
        verdict,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_from_names() {
        for (name, want) in [
            ("rank0.json", Some(0)),
            ("rank_1.json.gz", Some(1)),
            ("tp2_rank1.json.gz", Some(1)),
            ("host.RANK-12.pt.trace.json", Some(12)),
            ("trace.json", None),
            ("rank0_rank1.json", None),
            ("rank3_again_rank3.json", Some(3)),
        ] {
            assert_eq!(rank_from_file_name(Path::new(name)), want, "{name}");
        }
        // The folder does not count.
        assert_eq!(rank_from_file_name(Path::new("rank4/trace.json")), None);
    }

    #[test]
    fn collective_names() {
        use CollectiveKind::*;
        for (name, want) in [
            ("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Some(Collective)),
            ("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", Some(Collective)),
            ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", Some(PointToPoint)),
            ("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", Some(Collective)),
            ("void vllm::cross_device_reduce_1stage<__half, 8>(vllm::RankData*, ...)", Some(Collective)),
            (
                "void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 2>(...)",
                Some(Collective),
            ),
            ("void at::native::reduce_kernel<512, 1>(...)", None),
            ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", None),
            ("void cub::DeviceReduceKernel<...>", None),
        ] {
            assert_eq!(collective_kind(name), want, "{name}");
        }
    }

    /// A two-rank run made by hand: `(name, stream, start, end)` per kernel, all in the replay
    /// launched at 0 with correlation `corr`.
    fn trace(rank: u64, corr: u64, kernels: &[(&str, &str, i64, i64)]) -> Trace {
        use launchguard_trace::{DistributedInfo, GpuActivity, GraphApi, GraphLaunch, Timeline};
        let mut t = Timeline::default();
        let device = t.strings.intern(&rank.to_string());
        for &(name, stream, start, end) in kernels {
            let (name, stream) = (t.strings.intern(name), t.strings.intern(stream));
            let kind = ActivityKind::Kernel;
            t.activities.push(GpuActivity {
                device,
                stream,
                name,
                start,
                end,
                correlation: Some(corr),
                kind,
            });
        }
        let thread = t.strings.intern("1");
        t.launches.push(GraphLaunch {
            api: GraphApi::CudaRuntime,
            thread,
            start: 0,
            end: 5,
            correlation: Some(corr),
        });
        t.meta.distributed = Some(DistributedInfo { rank: Some(rank), world_size: Some(2), backend: None });
        t.events = kernels.len() as u64 + 1;
        let source = launchguard_trace::SourceInfo { path: format!("r{rank}").into(), bytes: 0, gzip: false };
        Trace { timeline: t, source, truncated: None }
    }

    #[test]
    fn waiting_is_split_from_compute_by_hand() {
        const AR: &str = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(x)";
        // Rank 0 reaches the first all_reduce at 100, rank 1 at 300: rank 0 waits 200 ns, while a
        // compute kernel on another stream runs [150, 250). The second all_reduce on rank 0 is
        // shorter than the 100 ns by which rank 1 is later: its wait is clipped to its 20 ns. A
        // send/receive on rank 0 only is collective time but never matched.
        let t0 = trace(
            0,
            1,
            &[
                ("gemm", "7", 10, 100),
                (AR, "7", 100, 400),
                ("gemm", "8", 150, 250),
                ("ncclDevKernel_SendRecv(x)", "9", 450, 460),
                (AR, "7", 500, 520),
            ],
        );
        let t1 = trace(1, 5, &[("gemm", "7", 10, 300), (AR, "7", 300, 410), (AR, "7", 600, 640)]);
        let ids: Vec<RankId> =
            (0..2).map(|rank| RankId { rank, from: RankSource::DistributedInfo, note: None }).collect();
        let ranks = [RankTrace { id: &ids[0], trace: &t0 }, RankTrace { id: &ids[1], trace: &t1 }];
        let a = analyze_ranks(&ranks, &Options::default());
        let w = &a.ranks[0].whole;
        assert_eq!(w.window_us, 0.510);
        assert_eq!(w.busy_us, 0.420); // [10, 400) ∪ [450, 460) ∪ [500, 520)
        assert_eq!(w.compute_busy_us, 0.190); // [10, 100) ∪ [150, 250)
        assert_eq!(w.collective_busy_us, 0.330);
        assert_eq!(w.collective_wait_us, Some(0.220)); // [100, 300) ∪ [500, 520)
        assert_eq!(w.busy_excluding_wait_us, Some(0.300)); // [10, 100) ∪ [150, 250) ∪ [300, 400) ∪ [450, 460)
        assert_eq!(w.occupancy_excluding_wait, Some(300.0 / 510.0));
        assert_eq!(a.ranks[0].collectives.matched, 2);
        assert_eq!(a.ranks[0].collectives.point_to_point, 1);
        let w1 = &a.ranks[1].whole;
        assert_eq!((w1.collective_wait_us, w1.busy_excluding_wait_us), (Some(0.0), Some(0.440)));
        // The second all_reduce misses by 80 ns, inside the tolerance.
        assert_eq!(a.across.clocks.aligned, Some(true));
        assert_eq!(a.across.clocks.min_overlap_us, Some(-0.080));
        let common = a.across.common_window.unwrap();
        assert_eq!((common.start_us, common.end_us), (0.010, 0.520));
        let skew = a.across.skew.unwrap();
        assert_eq!(skew.gpu_start.max_us, 0.0);
        assert_eq!(skew.straggler, None);
        assert_eq!(a.across.worst_rank, 0);
    }

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
