//! Interval arithmetic on integer nanoseconds: union, intersection, complement, histograms and
//! percentiles. Every figure of the analysis goes through here; nothing else re-implements it.

/// A half-open interval `[start, end)` in nanoseconds.
pub type Span = (i64, i64);

/// Sorts `spans` and merges those that overlap or touch. Empty spans are dropped: they cover
/// nothing (a zero-length kernel still counts for the window, which the caller takes separately).
pub fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|(s, e)| e > s);
    spans.sort_unstable();
    // Merged in place: the list written never overtakes the list read.
    let mut kept = 0;
    for i in 0..spans.len() {
        let (s, e) = spans[i];
        if kept > 0 && s <= spans[kept - 1].1 {
            spans[kept - 1].1 = spans[kept - 1].1.max(e);
        } else {
            spans[kept] = (s, e);
            kept += 1;
        }
    }
    spans.truncate(kept);
    spans
}

/// Whether spans come sorted by start (ends in any order), as [`sweep`] needs them.
pub fn sorted_by_start(spans: impl IntoIterator<Item = Span>) -> bool {
    let mut last = i64::MIN;
    spans.into_iter().all(|(s, _)| std::mem::replace(&mut last, s) <= s)
}

/// What [`sweep`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// The window the spans bound: first start to last end (`(0, 0)` for none).
    pub window: Span,
    /// Total length of their union.
    pub busy_ns: i64,
}

/// One pass over spans sorted by start ([`sorted_by_start`]): the window they bound, the length of
/// their union, and the length of every idle gap inside the window, handed to `gap` in order. The
/// same figures as [`union`], [`total`] and [`gaps`] over that window, without building a list:
/// on hundreds of thousands of kernels the lists cost more than the arithmetic.
pub fn sweep(spans: impl IntoIterator<Item = Span>, mut gap: impl FnMut(i64)) -> Sweep {
    let mut spans = spans.into_iter();
    let Some(first) = spans.next() else {
        return Sweep { window: (0, 0), busy_ns: 0 };
    };
    let (lo, mut hi) = first;
    // The end of the busy time already closed, and the busy span being merged.
    let mut cursor = lo;
    let mut busy_ns = 0;
    let mut open: Option<Span> = None;
    let mut close = |(bs, be): Span, cursor: &mut i64, busy_ns: &mut i64| {
        if bs > *cursor {
            gap(bs - *cursor);
        }
        *cursor = (*cursor).max(be);
        *busy_ns += be - bs;
    };
    for (s, e) in std::iter::once(first).chain(spans) {
        hi = hi.max(e);
        if e <= s {
            continue;
        }
        open = match open {
            Some((os, oe)) if s <= oe => Some((os, oe.max(e))),
            Some(done) => {
                close(done, &mut cursor, &mut busy_ns);
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some(done) = open {
        close(done, &mut cursor, &mut busy_ns);
    }
    if cursor < hi {
        gap(hi - cursor);
    }
    Sweep { window: (lo, hi), busy_ns }
}

/// [`sweep`] inside one window `[ws, we)`: spans sorted by start, clipped to the window, the gaps
/// measured from the window's start and to its end. Returns the busy time. One pass and no
/// lists, where the union, its intersection with the window and their gaps took three lists.
pub fn sweep_within(spans: impl IntoIterator<Item = Span>, (ws, we): Span, gap: impl FnMut(i64)) -> i64 {
    // Clipping keeps the order of starts; the empty spans at the window's edges set its ends and
    // cover nothing.
    let clipped = spans.into_iter().map(|(s, e)| (s.clamp(ws, we), e.clamp(ws, we)));
    let edges = std::iter::once((ws, ws)).chain(clipped).chain(std::iter::once((we, we)));
    sweep(edges, gap).busy_ns
}

/// Items per part of the passes that run on all cores: enough work in a part to outweigh handing
/// it to another core, and parts enough on the hundreds of thousands of kernels of a large trace.
pub const PART: usize = 1 << 15;

/// Where one part of [`sweep_parts`] starts and what it hands on.
struct Scan {
    sorted: bool,
    first: i64,
    last: i64,
    /// The largest end of any span, and of any non-empty one (`i64::MIN`: none).
    end: i64,
    busy_end: i64,
}

/// [`sweep`], or with `window` [`sweep_within`] that window, over a slice in parts of `part`
/// items on all cores: the same window, busy time and gaps, in the same order, each part's gaps
/// handed to its own accumulator made by `new` (the last one also gets the gap after the last
/// span). `None` when the spans are not sorted by start.
///
/// Over spans sorted by start, a gap opens wherever a span starts after every end before it, and
/// a span adds to the busy time what it reaches past them; so each part needs only the largest
/// end of the parts before it, which a first pass finds.
pub fn sweep_parts<T: Sync, G: Send>(
    items: &[T],
    span: impl Fn(&T) -> Span + Sync,
    window: Option<Span>,
    part: usize,
    new: impl Fn() -> G + Sync,
    gap: impl Fn(&mut G, i64) + Sync,
) -> Option<(Sweep, Vec<G>)> {
    use rayon::prelude::*;
    let span = |x: &T| {
        let (s, e) = span(x);
        match window {
            Some((ws, we)) => (s.clamp(ws, we), e.clamp(ws, we)),
            None => (s, e),
        }
    };
    let part = part.max(1);
    let scans: Vec<Scan> = items
        .par_chunks(part)
        .map(|c| {
            let mut scan = Scan {
                sorted: true,
                first: span(&c[0]).0,
                last: i64::MIN,
                end: i64::MIN,
                busy_end: i64::MIN,
            };
            for x in c {
                let (s, e) = span(x);
                scan.sorted &= scan.last <= s;
                scan.last = s;
                scan.end = scan.end.max(e);
                if e > s {
                    scan.busy_end = scan.busy_end.max(e);
                }
            }
            scan
        })
        .collect();
    if !scans.iter().all(|s| s.sorted) || scans.windows(2).any(|w| w[0].last > w[1].first) {
        return None;
    }
    let (lo, hi) = match (window, items.first()) {
        (Some(w), _) => w,
        (None, None) => return Some((Sweep { window: (0, 0), busy_ns: 0 }, Vec::new())),
        (None, Some(first)) => (span(first).0, scans.iter().map(|s| s.end).max().unwrap_or(i64::MIN)),
    };
    let mut reached = Vec::with_capacity(scans.len());
    let mut last_end = lo;
    for scan in &scans {
        reached.push(last_end);
        last_end = last_end.max(scan.busy_end);
    }
    let mut parts: Vec<(i64, G)> = items
        .par_chunks(part)
        .zip(reached)
        .map(|(c, mut reached)| {
            let (mut busy, mut g) = (0, new());
            for x in c {
                let (s, e) = span(x);
                if e <= s {
                    continue;
                }
                if s > reached {
                    gap(&mut g, s - reached);
                }
                busy += (e - s.max(reached)).max(0);
                reached = reached.max(e);
            }
            (busy, g)
        })
        .collect();
    if last_end < hi {
        if parts.is_empty() {
            parts.push((0, new()));
        }
        let (_, g) = parts.last_mut().expect("a part");
        gap(g, hi - last_end);
    }
    let busy_ns = parts.iter().map(|p| p.0).sum();
    Some((Sweep { window: (lo, hi), busy_ns }, parts.into_iter().map(|p| p.1).collect()))
}

/// Total length of disjoint spans.
pub fn total(spans: &[Span]) -> i64 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// Intersection of two sorted lists of disjoint spans.
pub fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if s < e {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The parts of `windows` not covered by `busy` (both sorted and disjoint): the idle gaps.
pub fn gaps(busy: &[Span], windows: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(ws, we) in windows {
        let mut cursor = ws;
        while j < busy.len() && busy[j].1 <= ws {
            j += 1;
        }
        let mut k = j;
        while k < busy.len() && busy[k].0 < we {
            let (bs, be) = busy[k];
            if bs > cursor {
                out.push((cursor, bs.min(we)));
            }
            cursor = cursor.max(be);
            k += 1;
        }
        if cursor < we {
            out.push((cursor, we));
        }
    }
    out
}

/// Bucket edges of the gap histogram, in µs: `[0,10) [10,50) [50,100) [100,500) [500,1000)
/// [1000,10000) [10000,∞)`. Chosen around the 100 µs gap threshold and the 0.1–10 ms range where
/// launch stalls show.
pub const GAP_BUCKETS_US: [f64; 7] = [0.0, 10.0, 50.0, 100.0, 500.0, 1000.0, 10000.0];

/// [`GAP_BUCKETS_US`] in nanoseconds. Whole microseconds: a length in ns is at or past an edge
/// exactly when its value in µs (as [`bucket`] computes it, a correctly rounded quotient) is.
const GAP_BUCKETS_NS: [i64; GAP_BUCKETS_US.len()] = {
    let mut ns = [0; GAP_BUCKETS_US.len()];
    let mut i = 0;
    while i < ns.len() {
        ns[i] = GAP_BUCKETS_US[i] as i64 * 1000;
        i += 1;
    }
    ns
};

/// [`bucket`] of a gap length over [`GAP_BUCKETS_US`], counted in integers without a branch:
/// every idle gap of a trace goes through it (hundreds of thousands on a large one).
#[inline]
pub fn gap_bucket(len_ns: i64) -> usize {
    GAP_BUCKETS_NS[1..].iter().map(|&edge| (len_ns >= edge) as usize).sum()
}

/// Counts lengths (ns) into buckets whose lower edges (µs) are `edges`; the last bucket is open.
pub fn histogram(lengths_ns: impl IntoIterator<Item = i64>, edges_us: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; edges_us.len()];
    for len in lengths_ns {
        counts[bucket(len, edges_us)] += 1;
    }
    counts
}

/// The bucket of [`histogram`] that a length (ns) falls in.
pub fn bucket(len_ns: i64, edges_us: &[f64]) -> usize {
    let us = len_ns as f64 / 1000.0;
    edges_us.iter().rposition(|&lo| us >= lo).unwrap_or(0)
}

/// The `p`-th percentile (0–100) of sorted values, interpolating linearly between closest ranks
/// (numpy's default). `None` for no values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    match sorted.len() {
        0 => None,
        1 => Some(sorted[0]),
        n => {
            let pos = (p / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            let frac = pos - lo as f64;
            Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
        }
    }
}

/// The mean of values. `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlaps_and_touches() {
        let u = union(vec![(5, 10), (0, 3), (2, 4), (10, 12), (20, 20), (15, 18)]);
        assert_eq!(u, vec![(0, 4), (5, 12), (15, 18)]);
        assert_eq!(total(&u), 4 + 7 + 3);
    }

    #[test]
    fn overlapping_rocm_kernels_are_not_double_counted() {
        // A kernel whose dur runs past the next one's start (TraceLens #669): sum = 20, union = 15.
        let u = union(vec![(0, 10), (5, 15)]);
        assert_eq!(total(&u), 15);
    }

    #[test]
    fn gaps_are_the_complement_inside_windows() {
        let busy = vec![(0, 4), (5, 12), (15, 18)];
        assert_eq!(gaps(&busy, &[(0, 18)]), vec![(4, 5), (12, 15)]);
        assert_eq!(gaps(&busy, &[(-2, 20)]), vec![(-2, 0), (4, 5), (12, 15), (18, 20)]);
        assert_eq!(gaps(&busy, &[(1, 6), (11, 16)]), vec![(4, 5), (12, 15)]);
        assert_eq!(gaps(&[], &[(0, 5)]), vec![(0, 5)]);
    }

    #[test]
    fn intersect_clips() {
        assert_eq!(intersect(&[(0, 10), (20, 30)], &[(5, 25)]), vec![(5, 10), (20, 25)]);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        // numpy.percentile([1,2,3,4], [50, 99]) = [2.5, 3.97]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert!((percentile(&v, 99.0).unwrap() - 3.97).abs() < 1e-12);
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn the_integer_gap_bucket_is_the_microsecond_one() {
        assert!(GAP_BUCKETS_US.iter().all(|&e| e.fract() == 0.0 && e >= 0.0), "whole µs edges");
        for &edge in &GAP_BUCKETS_NS {
            for len in [edge - 1, edge, edge + 1, edge.max(1) * 3 / 2] {
                assert_eq!(gap_bucket(len), bucket(len, &GAP_BUCKETS_US), "{len} ns");
            }
        }
        for len in (0..20_000_000).step_by(997) {
            assert_eq!(gap_bucket(len), bucket(len, &GAP_BUCKETS_US), "{len} ns");
        }
    }

    #[test]
    fn histogram_buckets() {
        let h = histogram([5_000, 10_000, 99_999, 100_000, 150_000, 20_000_000], &GAP_BUCKETS_US);
        assert_eq!(h, vec![1, 1, 1, 2, 0, 0, 1]);
    }

    /// The oracle of the sweeps, point by point over `[lo, hi)`: the busy points, and the lengths
    /// of the runs of idle points in order.
    fn point_by_point(spans: &[Span], lo: i64, hi: i64) -> (i64, Vec<i64>) {
        let busy = |t: i64| spans.iter().any(|&(s, e)| s <= t && t < e);
        let mut gaps = Vec::new();
        let mut run = 0;
        for t in lo..hi {
            if busy(t) {
                if run > 0 {
                    gaps.push(run);
                }
                run = 0;
            } else {
                run += 1;
            }
        }
        if run > 0 {
            gaps.push(run);
        }
        ((lo..hi).filter(|&t| busy(t)).count() as i64, gaps)
    }

    proptest::proptest! {
        #[test]
        fn the_sweep_within_a_window_is_the_union_cut_to_it_and_its_gaps(
            spans in proptest::collection::vec((0i64..300, 0i64..40), 0..40),
            window in (0i64..340, 0i64..200),
        ) {
            let mut spans: Vec<Span> = spans.into_iter().map(|(s, d)| (s, s + d)).collect();
            spans.sort_unstable();
            let (ws, we) = (window.0, window.0 + window.1);
            let mut lengths = Vec::new();
            let busy_ns = sweep_within(spans.iter().copied(), (ws, we), |len| lengths.push(len));
            let (want_busy, want_gaps) = point_by_point(&spans, ws, we);
            proptest::prop_assert_eq!(busy_ns, want_busy);
            proptest::prop_assert_eq!(lengths, want_gaps);
        }

        #[test]
        fn the_sweep_in_parts_is_the_sweep(
            spans in proptest::collection::vec((0i64..300, 0i64..40), 0..40),
            window in proptest::option::of((0i64..340, 0i64..200)),
            part in 1usize..6,
        ) {
            let mut spans: Vec<Span> = spans.into_iter().map(|(s, d)| (s, s + d)).collect();
            spans.sort_unstable_by_key(|s| s.0);
            let window = window.map(|(s, d)| (s, s + d));
            let mut want = Vec::new();
            let want_sweep = match window {
                Some(w) => Sweep { window: w, busy_ns: sweep_within(spans.iter().copied(), w, |g| want.push(g)) },
                None => sweep(spans.iter().copied(), |g| want.push(g)),
            };
            let (got_sweep, parts) =
                sweep_parts(&spans, |&s| s, window, part, Vec::new, |v: &mut Vec<i64>, g| v.push(g)).expect("sorted");
            proptest::prop_assert_eq!(got_sweep, want_sweep);
            proptest::prop_assert_eq!(parts.concat(), want);
        }

        #[test]
        fn the_sweep_in_parts_refuses_spans_out_of_order(
            spans in proptest::collection::vec((0i64..300, 0i64..40), 2..40),
            part in 1usize..6,
        ) {
            let spans: Vec<Span> = spans.into_iter().map(|(s, d)| (s, s + d)).collect();
            let sorted = spans.windows(2).all(|w| w[0].0 <= w[1].0);
            let got = sweep_parts(&spans, |&s| s, None, part, || (), |_, _| ());
            proptest::prop_assert_eq!(got.is_some(), sorted);
        }

        #[test]
        fn busy_plus_idle_is_window(spans in proptest::collection::vec((0i64..1000, 0i64..100), 1..50)) {
            let spans: Vec<Span> = spans.into_iter().map(|(s, d)| (s, s + d)).collect();
            let lo = spans.iter().map(|s| s.0).min().unwrap();
            let hi = spans.iter().map(|s| s.1).max().unwrap();
            let u = union(spans.clone());
            let g = gaps(&u, &[(lo, hi)]);
            proptest::prop_assert_eq!(total(&u) + total(&g), hi - lo);
            // Naive check: a point is busy iff some span covers it.
            for t in lo..hi {
                let covered = spans.iter().any(|&(s, e)| s <= t && t < e);
                let in_union = u.iter().any(|&(s, e)| s <= t && t < e);
                proptest::prop_assert_eq!(covered, in_union);
            }
        }

        #[test]
        fn sweep_is_the_union_and_its_gaps(
            spans in proptest::collection::vec((0i64..300, 0i64..40), 0..40),
            shuffle_ties in proptest::bool::ANY,
        ) {
            let mut spans: Vec<Span> = spans.into_iter().map(|(s, d)| (s, s + d)).collect();
            // Sorted by start only; equal starts in either order of their ends.
            spans.sort_by_key(|&(s, e)| (s, if shuffle_ties { -e } else { e }));
            proptest::prop_assert!(sorted_by_start(spans.iter().copied()));
            let mut lengths = Vec::new();
            let sw = sweep(spans.iter().copied(), |len| lengths.push(len));
            // Naive, point by point: busy points, and the runs of idle points inside the window.
            let (lo, hi) = match (spans.iter().map(|s| s.0).min(), spans.iter().map(|s| s.1).max()) {
                (Some(lo), Some(hi)) => (lo, hi),
                _ => (0, 0),
            };
            let (want_busy, want_gaps) = point_by_point(&spans, lo, hi);
            proptest::prop_assert_eq!(sw.window, (lo, hi));
            proptest::prop_assert_eq!(sw.busy_ns, want_busy);
            proptest::prop_assert_eq!(lengths, want_gaps);
        }
    }
}
