//! The kernel table: per GPU activity name (kernels, copies, fills) how often it ran and for how
//! long — count, total, mean, p50, p99, max, share of the GPU time — over the whole trace, per
//! device, per stream and per graph (the replays that ran the same kernels). What HTA's kernel
//! breakdown, TraceLens and `nsys stats` show, measured once here for every format.
//!
//! Definitions (the contract; durations are exact integer nanoseconds until the µs of the JSON):
//! - The activities counted are those the device figures count: every GPU activity, or with
//!   `--within` those overlapping the measured windows (whole durations).
//! - **Share** of a row: its total duration over the summed durations of every activity in the
//!   same scope (the trace, a device, a stream, a graph), as `nsys stats` gives it; the shares of
//!   a scope add up to 1. On one stream, where activities never overlap, the summed durations are
//!   the busy time.
//! - **Percentiles**: linear interpolation between the two nearest ranks, as numpy's default and
//!   [`crate::intervals::percentile`].
//! - **Graph**: the graph replays (launches whose correlation id GPU activities share) grouped by
//!   their kernel signature: how many activities the replay ran and which names, as a multiset.
//!   Graphs are numbered from 0 by replays, most first (ties: more activities first).
//! - Scopes that would repeat another are left out: `devices` only with several devices,
//!   `streams` only for a device with several streams.
//!
//! Memory: one 8-byte duration per activity, grouped by a dense index over the name ids (no
//! hashing per activity), freed scope by scope; percentiles by selection, not by sorting.

use std::collections::HashMap;

use launchguard_trace::{ActivityKind, GpuActivity, Timeline};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::intervals::PART;
use crate::model::Replay;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The kernel table of one trace (`kernels` in `launchguard.analysis/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Kernels {
    /// GPU activities counted.
    pub activities: u64,
    /// Their summed durations, µs: what the shares of [`Kernels::kernels`] divide.
    pub gpu_time_us: f64,
    /// One row per name over the whole trace, longest total first.
    pub kernels: Vec<KernelRow>,
    /// Per device, when there are several.
    pub devices: Vec<ScopeKernels>,
    /// Per stream, for the devices with several streams.
    pub streams: Vec<ScopeKernels>,
    /// Per graph of `replay_summary.graphs`, in its order.
    pub graphs: Vec<GraphKernels>,
}

/// One name's figures in a scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    /// The name as in the trace (renderers shorten it for display).
    pub name: String,
    /// `kernel`, `memcpy` or `memset`.
    pub kind: String,
    /// Instances.
    pub count: u64,
    /// Summed duration, µs.
    pub total_us: f64,
    /// total / count.
    pub mean_us: f64,
    /// Median duration.
    pub p50_us: f64,
    /// 99th percentile of the durations.
    pub p99_us: f64,
    /// Longest.
    pub max_us: f64,
    /// total over the scope's summed GPU time (the shares of a scope add up to 1).
    pub share: f64,
}

/// The rows of one device or one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeKernels {
    /// Device label, as in `devices`.
    pub device: String,
    /// Stream label, as in the device's `streams`; absent for a device's own table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// GPU activities counted.
    pub activities: u64,
    /// Their summed durations, µs.
    pub gpu_time_us: f64,
    /// One row per name, longest total first.
    pub kernels: Vec<KernelRow>,
}

/// The rows of one graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphKernels {
    /// Its index in `replay_summary.graphs` (and the replays' `graph`).
    pub graph: u64,
    /// Replays that ran it.
    pub replays: u64,
    /// The replay index (in `replays`) of the first of them.
    pub first_replay: u64,
    /// GPU activities per replay.
    pub kernels_per_replay: u64,
    /// Summed durations of its activities per replay (mean over its replays), µs.
    pub gpu_time_per_replay_us: f64,
    /// One row per name over all its replays, longest total first.
    pub kernels: Vec<KernelRow>,
    /// For the names a replay runs more than once (one GEMM per layer), one row per name and
    /// position: the `occurrence`-th instance of the name in each replay, in start order. Only
    /// when asked ([`crate::Options::kernel_positions`]): a comparison matches kernels by these,
    /// so that one layer's kernel getting slower is not averaged away among the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positions: Vec<PositionRow>,
}

/// The figures of one name's `occurrence`-th instance per replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionRow {
    /// 1 for the first instance of the name in each replay.
    pub occurrence: u32,
    /// The figures of those instances (share: of the graph's summed GPU time).
    #[serde(flatten)]
    pub row: KernelRow,
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// Durations grouped by name id, through a dense index over the ids: a group's slot is looked up
/// in an array, not hashed.
struct ByName {
    slot: Vec<u32>,
    groups: Vec<(u32, ActivityKind, Vec<i64>)>,
}

const NONE: u32 = u32::MAX;

impl ByName {
    fn new(names: usize) -> Self {
        ByName { slot: vec![NONE; names], groups: Vec::new() }
    }

    fn add(&mut self, a: &GpuActivity) {
        let s = &mut self.slot[a.name as usize];
        if *s == NONE {
            *s = self.groups.len() as u32;
            self.groups.push((a.name, a.kind, Vec::new()));
        }
        self.groups[*s as usize].2.push(a.end - a.start);
    }

    /// Adds every activity of `acts`: in parts on all cores when there are many and the names
    /// are few enough for each part to index them densely, the parts' durations then joined.
    fn add_all(&mut self, acts: &[&GpuActivity], part: usize) {
        let names = self.slot.len();
        if acts.len() <= part || names > PART {
            acts.iter().for_each(|a| self.add(a));
            return;
        }
        let parts: Vec<ByName> = acts
            .par_chunks(part)
            .map(|part| {
                let mut by = ByName::new(names);
                part.iter().for_each(|a| by.add(a));
                by
            })
            .collect();
        // Each name's list sized once for all its parts: grown part by part, a list is copied
        // as it doubles, and the copies are memory the analysis holds at its peak.
        let mut sizes = vec![0usize; names];
        parts.iter().flat_map(|p| &p.groups).for_each(|(name, _, d)| sizes[*name as usize] += d.len());
        for (name, kind, durations) in parts.into_iter().flat_map(|p| p.groups) {
            let s = &mut self.slot[name as usize];
            if *s == NONE {
                *s = self.groups.len() as u32;
                let mut all = Vec::with_capacity(sizes[name as usize]);
                all.extend_from_slice(&durations);
                self.groups.push((name, kind, all));
            } else {
                self.groups[*s as usize].2.extend_from_slice(&durations);
            }
        }
    }

    /// The rows, longest total first (ties by name), and the scope's activities and summed time;
    /// the index is left empty for the next scope.
    fn finish(&mut self, t: &Timeline) -> (Vec<KernelRow>, u64, i64) {
        for (name, _, _) in &self.groups {
            self.slot[*name as usize] = NONE;
        }
        let groups = std::mem::take(&mut self.groups);
        let total: i64 = groups.iter().map(|g| g.2.iter().sum::<i64>()).sum();
        let count: u64 = groups.iter().map(|g| g.2.len() as u64).sum();
        let mut rows: Vec<(i64, KernelRow)> =
            groups.into_par_iter().map(|(name, kind, d)| row(t, name, kind, d, total)).collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        (rows.into_iter().map(|(_, r)| r).collect(), count, total)
    }
}

/// One name's row from its durations `d` (ns) in a scope whose summed durations are `total`;
/// with the row's own sum, for ordering.
fn row(t: &Timeline, name: u32, kind: ActivityKind, mut d: Vec<i64>, total: i64) -> (i64, KernelRow) {
    let sum: i64 = d.iter().sum();
    let n = d.len() as u64;
    let max = d.iter().copied().max().unwrap_or(0);
    let (p50, p99) = two_percentiles_ns(&mut d, 50.0, 99.0);
    let row = KernelRow {
        name: t.strings.get(name).to_string(),
        kind: kind_name(kind).to_string(),
        count: n,
        total_us: us(sum),
        mean_us: sum as f64 / n as f64 / 1000.0,
        p50_us: p50 / 1000.0,
        p99_us: p99 / 1000.0,
        max_us: us(max),
        share: if total > 0 { sum as f64 / total as f64 } else { 0.0 },
    };
    (sum, row)
}

fn kind_name(kind: ActivityKind) -> &'static str {
    match kind {
        ActivityKind::Kernel => "kernel",
        ActivityKind::Memcpy => "memcpy",
        ActivityKind::Memset => "memset",
    }
}

/// The `p`-th percentile of `values` (ns), interpolated linearly between the two nearest ranks;
/// reorders `values` (selection, not a sort).
fn percentile_ns(values: &mut [i64], p: f64) -> f64 {
    let (lo, frac) = rank(values.len(), p);
    at_rank(values, lo, frac)
}

/// Where the `p`-th percentile of `n` values lies: the lower rank and the fraction of the way to
/// the next.
fn rank(n: usize, p: f64) -> (usize, f64) {
    let pos = (p / 100.0).clamp(0.0, 1.0) * n.saturating_sub(1) as f64;
    (pos.floor() as usize, pos - pos.floor())
}

/// The value at rank `lo` of `values`, `frac` of the way to the next one (0 when empty); sets
/// the values ranked above `lo` apart after it.
fn at_rank(values: &mut [i64], lo: usize, frac: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let (_, &mut at_lo, right) = values.select_nth_unstable(lo);
    if frac == 0.0 || right.is_empty() {
        return at_lo as f64;
    }
    let at_hi = *right.iter().min().expect("not empty");
    at_lo as f64 + (at_hi - at_lo) as f64 * frac
}

/// The `p`-th and `q`-th percentiles (`p` ≤ `q`) of `values`, each as [`percentile_ns`] gives
/// it; the second is selected among the values ranked above the first's rank only, which the
/// first selection has set apart.
fn two_percentiles_ns(values: &mut [i64], p: f64, q: f64) -> (f64, f64) {
    let ((lo_p, _), (lo_q, frac_q)) = (rank(values.len(), p), rank(values.len(), q));
    let first = percentile_ns(values, p);
    if lo_q <= lo_p {
        return (first, at_rank(values, lo_q, frac_q));
    }
    (first, at_rank(&mut values[lo_p + 1..], lo_q - lo_p - 1, frac_q))
}

/// One device's counted activities, grouped by stream label id (in the analysis's stream order).
pub(crate) struct DeviceInput<'a, 't> {
    /// Device label.
    pub device: &'a str,
    /// Its activities, as the device figures count them.
    pub acts: &'a [&'t GpuActivity],
    /// Stream labels in the analysis's order.
    pub streams: Vec<(u32, &'a str)>,
}

/// The kernel table of `devices`, with `replays` (the analysis's) grouped into graphs; with
/// `positions`, each graph's repeated names also by position.
pub(crate) fn kernels(
    t: &Timeline,
    devices: &[DeviceInput<'_, '_>],
    replays: &[Replay],
    positions: bool,
) -> Kernels {
    let mut by = ByName::new(t.strings.len());
    let mut out = Kernels::default();
    // Whole trace.
    for d in devices {
        by.add_all(d.acts, PART);
    }
    let (rows, n, total) = by.finish(t);
    (out.kernels, out.activities, out.gpu_time_us) = (rows, n, us(total));
    // Per device and per stream, where that says more than the level above.
    for d in devices {
        if devices.len() > 1 {
            by.add_all(d.acts, PART);
            let (kernels, activities, total) = by.finish(t);
            out.devices.push(ScopeKernels {
                device: d.device.to_string(),
                stream: None,
                activities,
                gpu_time_us: us(total),
                kernels,
            });
        }
        if d.streams.len() > 1 {
            for &(id, label) in &d.streams {
                d.acts.iter().filter(|a| a.stream == id).for_each(|a| by.add(a));
                let (kernels, activities, total) = by.finish(t);
                out.streams.push(ScopeKernels {
                    device: d.device.to_string(),
                    stream: Some(label.to_string()),
                    activities,
                    gpu_time_us: us(total),
                    kernels,
                });
            }
        }
    }
    out.graphs = graphs(t, devices, replays, &mut by, (&out.kernels, out.activities, total), positions);
    out
}

/// The graphs' rows, one per graph of `replay_summary.graphs` (the replays' `graph`), in its
/// order; `whole` is the trace's rows, activity count and summed durations (ns), which a graph
/// that ran every activity has too (the usual profiled decode loop: neither measured twice nor
/// its activities gathered).
fn graphs(
    t: &Timeline,
    devices: &[DeviceInput<'_, '_>],
    replays: &[Replay],
    by: &mut ByName,
    whole: (&[KernelRow], u64, i64),
    positions: bool,
) -> Vec<GraphKernels> {
    let count = replays.iter().filter_map(|r| r.graph).max().map_or(0, |g| g as usize + 1);
    if count == 0 {
        return Vec::new();
    }
    let graph_of: FastMap<u64, u32> =
        replays.iter().filter_map(|r| Some((r.correlation?, r.graph?))).collect();
    // Only the graphs measured on their own are gathered.
    let ran_all = member_counts(devices, &graph_of, count).iter().map(|&n| n == whole.1).collect::<Vec<_>>();
    let gathered: FastMap<u64, u32> = if positions {
        graph_of
    } else {
        graph_of.into_iter().filter(|&(_, g)| !ran_all[g as usize]).collect()
    };
    let members = members(devices, &gathered, count, PART);
    let mut out = Vec::with_capacity(count);
    for (g, acts) in members.into_iter().enumerate() {
        let of_graph = || replays.iter().filter(|r| r.graph == Some(g as u32));
        let (n, first) = (of_graph().count() as u64, of_graph().next());
        let (kernels, total) = if ran_all[g] {
            (whole.0.to_vec(), whole.2)
        } else {
            by.add_all(&acts, PART);
            let (kernels, _, total) = by.finish(t);
            (kernels, total)
        };
        let positions = if positions { position_rows(t, &acts, total) } else { Vec::new() };
        out.push(GraphKernels {
            graph: g as u64,
            replays: n,
            first_replay: first.map_or(0, |r| r.index),
            kernels_per_replay: first.map_or(0, |r| r.kernels),
            gpu_time_per_replay_us: if n > 0 { total as f64 / n as f64 / 1000.0 } else { 0.0 },
            kernels,
            positions,
        });
    }
    out
}

/// Calls `f` with the graph (`graph_of`: a replay's correlation id to its graph) of each activity
/// of `acts` that a replay ran, in file order. A replay's kernels come one after another, so the
/// last correlation id's answer is kept at hand.
fn each_member<'t>(
    acts: &[&'t GpuActivity],
    graph_of: &FastMap<u64, u32>,
    mut f: impl FnMut(u32, &'t GpuActivity),
) {
    let mut last: Option<(u64, Option<u32>)> = None;
    for a in acts {
        let Some(c) = a.correlation() else { continue };
        let g = match last {
            Some((lc, g)) if lc == c => g,
            _ => {
                let g = graph_of.get(&c).copied();
                last = Some((c, g));
                g
            }
        };
        if let Some(g) = g {
            f(g, a);
        }
    }
}

/// How many activities each of `count` graphs ran, on all cores, without gathering them.
fn member_counts(devices: &[DeviceInput<'_, '_>], graph_of: &FastMap<u64, u32>, count: usize) -> Vec<u64> {
    let add = |mut x: Vec<u64>, y: Vec<u64>| {
        x.iter_mut().zip(y).for_each(|(x, y)| *x += y);
        x
    };
    let of_part = |part: &[&GpuActivity]| {
        let mut counts = vec![0u64; count];
        each_member(part, graph_of, |g, _| counts[g as usize] += 1);
        counts
    };
    devices
        .iter()
        .map(|d| d.acts.par_chunks(PART).map(of_part).reduce(|| vec![0u64; count], add))
        .fold(vec![0u64; count], add)
}

/// Each of `count` graphs' activities (`graph_of`: a replay's correlation id to its graph), in
/// file order, gathered in parts of `part` on all cores.
fn members<'t>(
    devices: &[DeviceInput<'_, 't>],
    graph_of: &FastMap<u64, u32>,
    count: usize,
    part: usize,
) -> Vec<Vec<&'t GpuActivity>> {
    let mut parts: Vec<Vec<Vec<&GpuActivity>>> = Vec::new();
    for d in devices {
        let of_device: Vec<Vec<Vec<&GpuActivity>>> = d
            .acts
            .par_chunks(part)
            .map(|part| {
                let mut members: Vec<Vec<&GpuActivity>> = vec![Vec::new(); count];
                each_member(part, graph_of, |g, a| members[g as usize].push(a));
                members
            })
            .collect();
        parts.extend(of_device);
    }
    // Each graph's list sized once for all parts (grown part by part, it would be copied as it
    // doubles).
    let mut members: Vec<Vec<&GpuActivity>> =
        (0..count).map(|g| Vec::with_capacity(parts.iter().map(|p| p[g].len()).sum())).collect();
    for part in parts {
        members.iter_mut().zip(part).for_each(|(all, of_part)| all.extend(of_part));
    }
    members
}

/// The rows by position of one graph's activities (`total`: their summed durations, ns): each
/// activity's occurrence is its rank among its replay's activities of the same name, by start.
fn position_rows(t: &Timeline, acts: &[&GpuActivity], total: i64) -> Vec<PositionRow> {
    // Start order within a replay, whatever stream each activity ran on.
    let mut order: Vec<&GpuActivity> = acts.to_vec();
    order.sort_by_key(|a| (a.correlation(), a.start, a.end));
    let mut groups: FastMap<(u32, u32), (ActivityKind, Vec<i64>)> = FastMap::default();
    let mut repeated = vec![false; t.strings.len()];
    let mut i = 0;
    while i < order.len() {
        let c = order[i].correlation();
        let end = i + order[i..].iter().take_while(|a| a.correlation() == c).count();
        let mut seen: FastMap<u32, u32> = FastMap::default();
        for a in &order[i..end] {
            let k = seen.entry(a.name).or_insert(0);
            *k += 1;
            if *k > 1 {
                repeated[a.name as usize] = true;
            }
            groups.entry((a.name, *k)).or_insert_with(|| (a.kind, Vec::new())).1.push(a.end - a.start);
        }
        i = end;
    }
    let mut rows: Vec<PositionRow> = groups
        .into_iter()
        .filter(|((name, _), _)| repeated[*name as usize])
        .map(|((name, occurrence), (kind, d))| PositionRow {
            occurrence,
            row: row(t, name, kind, d, total).1,
        })
        .collect();
    rows.sort_by(|a, b| a.row.name.cmp(&b.row.name).then(a.occurrence.cmp(&b.occurrence)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::bundled;

    #[test]
    fn names_added_in_parts_give_the_rows_added_one_by_one() {
        let t = bundled();
        let acts: Vec<&GpuActivity> = t.activities.iter().collect();
        let mut by = ByName::new(t.strings.len());
        acts.iter().for_each(|a| by.add(a));
        let want = by.finish(&t);
        assert!(want.0.len() > 3 && want.1 == acts.len() as u64, "{} rows", want.0.len());
        for part in [1, 5, 100, 4096] {
            by.add_all(&acts, part);
            assert_eq!(by.finish(&t), want, "parts of {part}");
        }
    }

    #[test]
    fn graph_members_gathered_in_parts_keep_file_order() {
        let t = bundled();
        let acts: Vec<&GpuActivity> = t.activities.iter().collect();
        // Two graphs by the parity of the correlation id: each graph's list is its activities in
        // file order, the others left out.
        let graph_of: FastMap<u64, u32> =
            acts.iter().filter_map(|a| a.correlation()).map(|c| (c, (c % 2) as u32)).collect();
        let devices = [DeviceInput { device: "0", acts: &acts, streams: Vec::new() }];
        for part in [1, 3, 64, usize::MAX] {
            let got = members(&devices, &graph_of, 2, part);
            for g in 0..2u32 {
                let want: Vec<&GpuActivity> = acts
                    .iter()
                    .copied()
                    .filter(|a| a.correlation().is_some_and(|c| (c % 2) as u32 == g))
                    .collect();
                assert!(!want.is_empty());
                assert!(
                    got[g as usize].iter().zip(&want).all(|(x, y)| std::ptr::eq(*x, *y)),
                    "parts of {part}"
                );
                assert_eq!(got[g as usize].len(), want.len());
                assert_eq!(member_counts(&devices, &graph_of, 2)[g as usize], want.len() as u64);
            }
        }
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        // 10..=50 step 10: p50 = 30; p99 at rank 3.96: 40 + 0.96 × 10 = 49.6.
        let mut v = vec![50, 10, 40, 20, 30];
        assert_eq!(percentile_ns(&mut v, 50.0), 30.0);
        assert!((percentile_ns(&mut v, 99.0) - 49.6).abs() < 1e-9);
        assert_eq!(percentile_ns(&mut [7], 99.0), 7.0);
        assert_eq!(percentile_ns(&mut [], 50.0), 0.0);
        // Even count: the median halfway between the middle two.
        assert_eq!(percentile_ns(&mut [4, 1, 3, 2], 50.0), 2.5);
    }

    /// Percentile by the definition, on a sorted copy: rank p·(n−1), interpolated.
    fn sorted_percentile(values: &[i64], p: f64) -> f64 {
        let mut v = values.to_vec();
        v.sort_unstable();
        if v.is_empty() {
            return 0.0;
        }
        let pos = p / 100.0 * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = (lo + 1).min(v.len() - 1);
        v[lo] as f64 + (v[hi] - v[lo]) as f64 * (pos - lo as f64)
    }

    proptest::proptest! {
        /// Two percentiles from one array, the second selected above the first, equal each
        /// percentile of a sorted copy (ties and short arrays included).
        #[test]
        fn two_percentiles_equal_sorted_ones(
            values in proptest::collection::vec(-50i64..50, 0..300),
            p in 0.0f64..=100.0,
            q in 0.0f64..=100.0,
        ) {
            let (p, q) = if p <= q { (p, q) } else { (q, p) };
            let mut v = values.clone();
            let (a, b) = two_percentiles_ns(&mut v, p, q);
            proptest::prop_assert_eq!(a, sorted_percentile(&values, p));
            proptest::prop_assert_eq!(b, sorted_percentile(&values, q));
        }
    }
}
