//! Collective kernels: which they are, how they are matched across ranks, their waiting, and the
//! figures and replay skew built on them.

use std::collections::{BTreeMap, HashMap, HashSet};

use launchguard_trace::{ActivityKind, Trace};

use crate::intervals::{self, Span};
use crate::model_ranks::*;

/// How far (ns) a matched collective's instances may miss overlapping before the clocks are
/// judged unaligned: GPU timestamps converted to the host clock carry sub-µs error.
pub const CLOCK_TOLERANCE_NS: i64 = 1_000;

/// What a communication kernel is, for matching it across ranks.
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

pub(super) fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// One GPU activity of a rank, on the common clock once [`RankData::shift`] placed it there.
pub(super) struct Act {
    pub(super) start: i64,
    pub(super) end: i64,
    /// A collective's name, as an index into [`RankData::names`]; [`NO_NAME`] for compute.
    pub(super) name: u32,
    pub(super) kind: Option<CollectiveKind>,
}

/// The name of an activity whose name does not matter (compute).
pub(super) const NO_NAME: u32 = u32::MAX;

pub(super) struct ReplayData {
    pub(super) launch_start: i64,
    pub(super) first_gpu: Option<i64>,
    /// Indices of its collective kernels (point-to-point left out), by start.
    pub(super) collectives: Vec<usize>,
}

/// What the cross-rank figures need of one rank: owned, so that its trace can be dropped as soon
/// as it is measured (a cluster's ranks never all held at once).
pub(super) struct RankData {
    pub(super) rank: u64,
    pub(super) offset: i64,
    pub(super) acts: Vec<Act>,
    /// The collective kernels' names.
    pub(super) names: Vec<String>,
    pub(super) replays: Vec<ReplayData>,
    /// Collective kernels (point-to-point left out) outside any replay, by start.
    pub(super) outside: Vec<usize>,
    /// First activity start and last activity end.
    pub(super) extent: Option<Span>,
    /// Collective kernels matched across every rank, by index in `acts`.
    pub(super) matched: HashSet<usize>,
    /// Wait of each matched collective kernel, by index in `acts`; empty when the clocks look
    /// unaligned.
    pub(super) waits: HashMap<usize, i64>,
}

pub(super) fn rank_data(trace: &Trace, rank: u64) -> RankData {
    let t = &trace.timeline;
    // Each distinct kernel name classified once.
    let mut kind_of: HashMap<u32, (Option<CollectiveKind>, u32)> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let acts: Vec<Act> = t
        .activities
        .iter()
        .map(|a| {
            let (kind, name) = if a.kind == ActivityKind::Kernel {
                *kind_of.entry(a.name).or_insert_with(|| {
                    let text = t.strings.get(a.name);
                    match collective_kind(text) {
                        Some(k) => {
                            names.push(text.to_string());
                            (Some(k), names.len() as u32 - 1)
                        }
                        None => (None, NO_NAME),
                    }
                })
            } else {
                (None, NO_NAME)
            };
            Act { start: a.start, end: a.end, name, kind }
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
        replays.push(ReplayData { launch_start: l.start, first_gpu: None, collectives: Vec::new() });
    }
    let mut outside = Vec::new();
    for (i, (a, act)) in t.activities.iter().zip(&acts).enumerate() {
        let replay = a.correlation().and_then(|c| by_correlation.get(&c)).map(|&r| &mut replays[r]);
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
    RankData {
        rank,
        offset: 0,
        acts,
        names,
        replays,
        outside,
        extent,
        matched: HashSet::new(),
        waits: HashMap::new(),
    }
}

impl RankData {
    /// Moves the rank's times onto the common clock: `offset` ns later.
    pub(super) fn shift(&mut self, offset: i64) {
        self.offset = offset;
        for a in &mut self.acts {
            a.start += offset;
            a.end += offset;
        }
        for r in &mut self.replays {
            r.launch_start += offset;
            r.first_gpu = r.first_gpu.map(|f| f + offset);
        }
        self.extent = self.extent.map(|(s, e)| (s + offset, e + offset));
    }

    /// The name of activity `i` (collectives only).
    fn name(&self, i: usize) -> &str {
        self.names.get(self.acts[i].name as usize).map_or("", String::as_str)
    }
}

/// One matched collective: an activity index per rank, in rank order.
pub(super) type Group = Vec<usize>;

/// Matches the k-th entries of the ranks' lists; returns false when the lists cannot be matched
/// (different lengths).
pub(super) fn match_lists(
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
        let name = data[0].name(lists[0][k]);
        if data.iter().zip(lists).all(|(d, l)| d.name(l[k]) == name) {
            groups.push(lists.iter().map(|l| l[k]).collect());
        } else {
            *name_mismatch += 1;
        }
    }
    true
}

pub(super) struct Matching {
    pub(super) groups: Vec<Group>,
    pub(super) replays: usize,
    pub(super) unmatched_replays: u64,
    pub(super) name_mismatch: u64,
    pub(super) outside_unmatched: bool,
}

pub(super) fn match_collectives(data: &[RankData]) -> Matching {
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

pub(super) fn clock_check(data: &[RankData], groups: &[Group]) -> Clocks {
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

pub(super) fn assign_waits(data: &mut [RankData], groups: &[Group]) {
    for g in groups {
        let latest = data.iter().zip(g).map(|(d, &i)| d.acts[i].start).max().unwrap_or(0);
        for (d, &i) in data.iter_mut().zip(g) {
            let a = &d.acts[i];
            d.waits.insert(i, (latest - a.start).clamp(0, a.end - a.start));
        }
    }
}

pub(super) fn figures(d: &RankData, window: Span, split: bool) -> RankFigures {
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

pub(super) fn spread(mut v: Vec<f64>) -> Spread {
    v.sort_by(f64::total_cmp);
    Spread {
        p50_us: intervals::percentile(&v, 50.0).unwrap_or(0.0),
        p99_us: intervals::percentile(&v, 99.0).unwrap_or(0.0),
        max_us: v.last().copied().unwrap_or(0.0),
    }
}

/// The median spread of replay starts across ranks below which no rank is named a straggler: the
/// idle time before a replay under which a GPU did not wait for a launch.
pub const STRAGGLER_MIN_SKEW_US: f64 = 20.0;

pub(super) fn skew(data: &[RankData], replays: usize, keep: &dyn Fn(&[i64]) -> bool) -> Option<Skew> {
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
    let gpu_start = spread(gpu.clone());
    // A rank last by a few µs makes nobody wait: the healthy TP=2 pair starts its replays 0.6 µs
    // apart at the median.
    let straggler = (most > 0
        && last.iter().filter(|&&n| n == most).count() == 1
        && gpu_start.p50_us >= STRAGGLER_MIN_SKEW_US)
        .then(|| data[last.iter().position(|&n| n == most).expect("max")].rank);
    Some(Skew {
        replays: gpu.len() as u64,
        gpu_start,
        launch_start: spread(launch),
        last_to_start: data.iter().zip(&last).map(|(d, &n)| RankCount { rank: d.rank, replays: n }).collect(),
        straggler,
    })
}

pub(super) fn collectives_of(d: &RankData) -> Collectives {
    let mut c = Collectives::default();
    let mut names: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, a) in d.acts.iter().enumerate() {
        if let Some(kind) = a.kind {
            c.kernels += 1;
            c.point_to_point += u64::from(kind == CollectiveKind::PointToPoint);
            c.matched += u64::from(d.matched.contains(&i));
            *names.entry(d.name(i)).or_default() += 1;
        }
    }
    c.names = names.into_iter().map(|(name, count)| NameCount { name: name.to_string(), count }).collect();
    c.names.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
