//! Several traces of one distributed run, one per rank: each rank's own analysis, its GPU time
//! split into compute, collectives and waiting for peers, and the skew of replay starts across
//! ranks. Figures only: the judge decides which rank is worst and what passes.
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
//! - **Matching**: replays (graph launches, in the order of [`crate::analyze()`]) are matched across
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
pub mod collectives;
mod identify;

use launchguard_trace::Trace;

use crate::analyze::{analyze, AnalyzeError, Options};
use crate::intervals::Span;
use crate::model::Analysis;
use crate::model_ranks::*;
use crate::spans::RanksSpans;

use collectives::*;
pub use collectives::{collective_kind, CollectiveKind, CLOCK_TOLERANCE_NS};
pub use identify::{identify, rank_from_file_name, rank_of, RankId, RankSource, RankTrace, RanksError};

/// One rank measured on its own: what the cross-rank figures need of it, owned, so that its trace
/// can be dropped before the next rank is read.
pub struct RankPart {
    /// Which rank, and where that came from.
    pub id: RankId,
    /// Its trace's figures.
    pub analysis: Analysis,
    /// The node it ran on, when known ([`node_of`]).
    pub node: Option<String>,
    world_size: Option<u64>,
    base_time_ns: Option<i64>,
    data: RankData,
}

/// The host a rank ran on: the one `check` recorded in the trace's context, else the one in
/// torch.profiler's file name (`HOST_PID.TIMESTAMP.pt.trace.json`).
pub fn node_of(trace: &Trace, analysis: &Analysis) -> Option<String> {
    if let Some(host) =
        analysis.workload.as_ref().and_then(|w| w.inventory.as_ref()).and_then(|i| i.host.clone())
    {
        return Some(host);
    }
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"^(.+)_\d+\.\d+\.pt\.trace\.json").expect("valid regex"));
    let name = trace.source.path.file_name()?.to_str()?;
    re.captures(name).map(|c| c[1].to_string())
}

/// Measures one rank's trace.
pub fn measure_rank(trace: &Trace, id: RankId, opts: &Options) -> Result<RankPart, AnalyzeError> {
    let analysis = analyze(trace, opts)?;
    let meta = &trace.timeline.meta;
    Ok(RankPart {
        node: node_of(trace, &analysis),
        world_size: meta.distributed.as_ref().and_then(|d| d.world_size),
        base_time_ns: meta.base_time_ns,
        data: rank_data(trace, id.rank),
        id,
        analysis,
    })
}

/// Measures the traces of several ranks of one run. `ranks` comes from [`identify`] (rank order,
/// no duplicates); `opts.within` applies to each rank's own analysis only, the cross-rank figures
/// cover whole traces (so the command refuses it with several traces).
pub fn analyze_ranks(ranks: &[RankTrace], opts: &Options) -> Result<RanksAnalysis, AnalyzeError> {
    let parts = ranks.iter().map(|r| measure_rank(r.trace, r.id.clone(), opts)).collect::<Result<_, _>>()?;
    Ok(combine(parts).expect("identify refused duplicate ranks").0)
}

/// The ranks of one run together, from each rank measured on its own ([`measure_rank`], in any
/// order), with the spans behind the cross-rank figures for the formats that draw them: two parts
/// of one rank are an error.
pub fn combine(mut parts: Vec<RankPart>) -> Result<(RanksAnalysis, RanksSpans), RanksError> {
    parts.sort_by_key(|p| p.id.rank);
    for pair in parts.windows(2) {
        if pair[0].id.rank == pair[1].id.rank {
            return Err(RanksError::DuplicateRank {
                rank: pair[0].id.rank,
                first: pair[0].analysis.source.path.clone(),
                second: pair[1].analysis.source.path.clone(),
            });
        }
    }
    let mut warnings: Vec<String> = parts.iter().filter_map(|p| p.id.note.clone()).collect();
    let world_sizes: Vec<Option<u64>> = parts.iter().map(|p| p.world_size).collect();
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
    let base = parts.iter().filter_map(|p| p.base_time_ns).min();
    let mut data = Vec::with_capacity(parts.len());
    let mut analyses = Vec::with_capacity(parts.len());
    let mut ids = Vec::with_capacity(parts.len());
    let mut nodes = Vec::with_capacity(parts.len());
    for p in parts {
        let mut d = p.data;
        d.shift(match (p.base_time_ns, base) {
            (Some(b), Some(lowest)) => b - lowest,
            _ => 0,
        });
        if p.analysis.devices.len() > 1 {
            warnings.push(format!(
                "rank {}: GPU activity on {} devices; its cross-rank figures merge them",
                d.rank,
                p.analysis.devices.len()
            ));
        }
        data.push(d);
        analyses.push(p.analysis);
        ids.push(p.id);
        nodes.push(p.node);
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

    let mut out_ranks = Vec::with_capacity(data.len());
    for (((id, d), analysis), node) in ids.iter().zip(&data).zip(analyses).zip(&nodes) {
        let whole = figures(d, d.extent.unwrap_or((0, 0)), split);
        let common_fig = common.map(|w| figures(d, w, split));
        for w in &analysis.warnings {
            warnings.push(format!("rank {}: {w}", d.rank));
        }
        out_ranks.push(RankAnalysis {
            facts: RankFacts {
                rank: id.rank,
                rank_from: id.from.as_str().to_string(),
                node: node.clone(),
                collectives: collectives_of(d),
                whole,
                common: common_fig,
            },
            analysis,
        });
    }

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

    let node_figures = node_figures(&out_ranks, &data, skew_common.as_ref().or(skew_all.as_ref()));
    let spans = spans_of(&data, common, split);
    let analysis = RanksAnalysis {
        schema: RANKS_SCHEMA.to_string(),
        world_size,
        ranks: out_ranks,
        across: Across {
            clocks,
            common_window: common.map(|(s, e)| Window {
                start_us: us(s),
                end_us: us(e),
                length_us: us(e - s),
            }),
            replays_matched,
            skew: skew_all,
            skew_common,
            nodes: node_figures,
        },
        warnings,
    };
    Ok((analysis, spans))
}

/// Per node (the ranks' hosts), when the ranks ran on more than one known node: its ranks, their
/// occupancy over the common window (excluding waiting for peers), how often one of its ranks
/// started a replay last, and its clock's shift onto the common clock.
fn node_figures(ranks: &[RankAnalysis], data: &[RankData], skew: Option<&Skew>) -> Vec<NodeFigures> {
    let mut by_node: std::collections::BTreeMap<&str, Vec<usize>> = std::collections::BTreeMap::new();
    for (i, r) in ranks.iter().enumerate() {
        if let Some(node) = &r.node {
            by_node.entry(node.as_str()).or_default().push(i);
        }
    }
    if by_node.len() < 2 {
        return Vec::new();
    }
    by_node
        .into_iter()
        .map(|(node, members)| {
            let mut occ: Vec<f64> = members
                .iter()
                .map(|&i| {
                    let f = ranks[i].common.as_ref().unwrap_or(&ranks[i].whole);
                    f.occupancy_excluding_wait.unwrap_or(f.occupancy)
                })
                .collect();
            occ.sort_by(f64::total_cmp);
            let last = skew.map_or(0, |s| {
                s.last_to_start
                    .iter()
                    .filter(|c| members.iter().any(|&i| ranks[i].rank == c.rank))
                    .map(|c| c.replays)
                    .sum()
            });
            let mut offsets: Vec<f64> = members.iter().map(|&i| us(data[i].offset)).collect();
            offsets.sort_by(f64::total_cmp);
            NodeFigures {
                node: node.to_string(),
                ranks: members.iter().map(|&i| ranks[i].rank).collect(),
                occupancy_min: occ.first().copied().unwrap_or(0.0),
                occupancy_median: crate::intervals::percentile(&occ, 50.0).unwrap_or(0.0),
                last_to_start: last,
                clock_offset_us: crate::intervals::percentile(&offsets, 50.0).unwrap_or(0.0),
            }
        })
        .collect()
}

/// The spans behind each rank's [`RankFigures`], on the common clock, for the formats that draw
/// them ([`crate::spans::RanksSpans`]): compute, collectives without their waiting, waiting for
/// peers, from the data [`combine`] measured (its waits assigned when `split`).
fn spans_of(data: &[RankData], common: Option<Span>, split: bool) -> RanksSpans {
    use crate::intervals::union;
    let ranks = data
        .iter()
        .map(|d| {
            let (mut compute, mut collectives, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
            for (i, a) in d.acts.iter().enumerate() {
                match (a.kind, d.waits.get(&i)) {
                    (None, _) => compute.push((a.start, a.end)),
                    (Some(_), Some(&w)) => {
                        waiting.push((a.start, a.start + w));
                        collectives.push((a.start + w, a.end));
                    }
                    (Some(_), None) => collectives.push((a.start, a.end)),
                }
            }
            crate::spans::RankSpans {
                rank: d.rank,
                offset_ns: d.offset,
                extent: d.extent,
                compute: union(compute),
                collectives: union(collectives.into_iter().filter(|(s, e)| e > s).collect()),
                waiting: union(waiting.into_iter().filter(|(s, e)| e > s).collect()),
            }
        })
        .collect();
    RanksSpans { ranks, common, waits_split: split }
}

#[cfg(test)]
mod tests {
    use super::*;
    use launchguard_trace::{ActivityKind, Trace};

    /// A two-rank run made by hand: `(name, stream, start, end)` per kernel, all in the replay
    /// launched at 0 with correlation `corr`.
    fn trace(rank: u64, corr: u64, kernels: &[(&str, &str, i64, i64)]) -> Trace {
        use launchguard_trace::{DistributedInfo, GpuActivity, GraphApi, GraphLaunch, Timeline};
        let mut t = Timeline::default();
        let device = t.strings.intern(&rank.to_string());
        for &(name, stream, start, end) in kernels {
            let (name, stream) = (t.strings.intern(name), t.strings.intern(stream));
            let kind = ActivityKind::Kernel;
            t.activities.push(GpuActivity::new(device, stream, name, start, end, Some(corr), kind));
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
    fn ranks_of_several_nodes_are_summed_up_per_node() {
        const AR: &str = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(x)";
        // Four ranks on two hosts (named as torch.profiler names its files); the ranks of node-b
        // reach the all_reduce 100 ns later, so they start the replay last.
        let traces: Vec<Trace> = (0..4u64)
            .map(|r| {
                let late = if r >= 2 { 100 } else { 0 };
                let mut t = trace(r, 1, &[("gemm", "7", 10, 100 + late), (AR, "7", 100 + late, 400)]);
                t.timeline.meta.distributed = Some(launchguard_trace::DistributedInfo {
                    rank: Some(r),
                    world_size: Some(4),
                    backend: None,
                });
                let node = if r < 2 { "node-a" } else { "node-b" };
                t.source.path = format!("{node}_{}.1733000000.pt.trace.json", 100 + r).into();
                t
            })
            .collect();
        let parts: Vec<RankPart> = traces
            .iter()
            .map(|t| measure_rank(t, rank_of(t).unwrap(), &Options::default()).unwrap())
            .collect();
        let (a, _) = combine(parts).unwrap();
        let nodes: Vec<(&str, &[u64])> =
            a.across.nodes.iter().map(|n| (n.node.as_str(), n.ranks.as_slice())).collect();
        assert_eq!(nodes, [("node-a", &[0, 1][..]), ("node-b", &[2, 3][..])]);
        // node-a's ranks wait 100 ns in their all_reduce of a 390 ns window: busy without waiting
        // is 290 of 390 ns; node-b's wait nothing.
        assert!((a.across.nodes[0].occupancy_min - 290.0 / 390.0).abs() < 1e-12, "{:?}", a.across.nodes[0]);
        assert!((a.across.nodes[1].occupancy_min - 1.0).abs() < 1e-12);
        assert_eq!((a.across.nodes[0].last_to_start, a.across.nodes[1].last_to_start), (0, 0));
        // A rank's keys stand in the schema's order (its facts, flattened, before its analysis),
        // and the document reads back through a `Value`, as results are read, to the same text.
        let text = serde_json::to_string(&a).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = v["ranks"][0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["rank", "rank_from", "node", "collectives", "whole", "common", "analysis"]);
        let back: RanksAnalysis = serde_json::from_value(v).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        // Parts of one rank twice are refused.
        let twice: Vec<RankPart> = [&traces[0], &traces[0]]
            .iter()
            .map(|t| measure_rank(t, rank_of(t).unwrap(), &Options::default()).unwrap())
            .collect();
        assert!(matches!(combine(twice), Err(RanksError::DuplicateRank { rank: 0, .. })));
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
        let parts = ranks.iter().map(|r| measure_rank(r.trace, r.id.clone(), &Options::default()).unwrap());
        let (a, spans) = combine(parts.collect()).unwrap();
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
        // The spans drawn are the ones measured: rank 0 waits [100, 300) and [500, 520).
        let r0 = &spans.ranks[0];
        assert_eq!(r0.waiting, vec![(100, 300), (500, 520)]);
        assert_eq!(r0.compute, vec![(10, 100), (150, 250)]);
        assert_eq!(r0.collectives, vec![(300, 400), (450, 460)]);
        assert_eq!(spans.common, Some((10, 520)));
        assert!(spans.waits_split);
        let total = |v: &[(i64, i64)]| v.iter().map(|(s, e)| e - s).sum::<i64>();
        assert_eq!(total(&r0.waiting) as f64 / 1000.0, w.collective_wait_us.unwrap());
    }
}
