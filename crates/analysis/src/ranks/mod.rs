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
mod collectives;
mod identify;

use crate::analyze::{analyze, AnalyzeError, Options};
use crate::model::Analysis;
use crate::model_ranks::*;

use collectives::*;
pub use collectives::{collective_kind, CollectiveKind, CLOCK_TOLERANCE_NS};
pub use identify::{identify, rank_from_file_name, rank_of, RankId, RankSource, RankTrace, RanksError};

/// Measures the traces of several ranks of one run. `ranks` comes from [`identify`] (rank order,
/// no duplicates); `opts.within` applies to each rank's own analysis only, the cross-rank figures
/// cover whole traces (so the command refuses it with several traces).
pub fn analyze_ranks(ranks: &[RankTrace], opts: &Options) -> Result<RanksAnalysis, AnalyzeError> {
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

    // Each rank alone.
    let analyses: Vec<Analysis> = ranks.iter().map(|r| analyze(r.trace, opts)).collect::<Result<_, _>>()?;

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
        for w in &analysis.warnings {
            warnings.push(format!("rank {}: {w}", d.rank));
        }
        out_ranks.push(RankAnalysis {
            rank: r.id.rank,
            rank_from: r.id.from.as_str().to_string(),
            collectives: collectives_of(d),
            whole,
            common: common_fig,
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

    Ok(RanksAnalysis {
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
        },
        warnings,
    })
}

/// The spans behind each rank's [`RankFigures`], on the common clock, for the formats that draw
/// them ([`crate::spans::RanksSpans`]): compute, collectives without their waiting, waiting for
/// peers, and the common window. Built with the same steps as [`analyze_ranks`]: the same
/// offsets, matching, clock check and waits.
pub(crate) fn split_spans(ranks: &[RankTrace]) -> crate::spans::RanksSpans {
    use crate::intervals::union;
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
    let matching = match_collectives(&data);
    let split = clock_check(&data, &matching.groups).aligned != Some(false);
    if split {
        assign_waits(&mut data, &matching.groups);
    }
    let common = {
        let start = data.iter().filter_map(|d| d.extent).map(|e| e.0).max();
        let end = data.iter().filter_map(|d| d.extent).map(|e| e.1).min();
        match (start, end) {
            (Some(s), Some(e)) if s < e && data.iter().all(|d| d.extent.is_some()) => Some((s, e)),
            _ => None,
        }
    };
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
    crate::spans::RanksSpans { ranks, common, waits_split: split }
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
        let a = analyze_ranks(&ranks, &Options::default()).unwrap();
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
        let spans = crate::spans::RanksSpans::new(&ranks);
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
