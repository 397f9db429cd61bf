//! The cap on devices and streams, checked once a trace is read (its strings are capped while it
//! is read): the analysis keeps figures for each device and stream, and a million of them took
//! gigabytes.
//!
//! The check reads every GPU activity. One pass on one core took 2 ms of a 300 MB trace, after
//! a read that takes 50–130 ms on 16 cores: a serial tail worth taking off. So the pass runs on
//! all cores, each chunk collecting its distinct pairs up to the cap; the order-exact scan is run
//! only where a chunk or the union goes past a cap (hostile or strange traces), since which cap
//! is named then depends on which was passed first.

use rayon::prelude::*;

use crate::limits::{Cap, Limits};
use crate::timeline::{GpuActivity, Timeline};

type Set<T> = hashbrown::HashSet<T, foldhash::fast::RandomState>;

/// Activities a chunk of the parallel pass holds: large enough that one chunk's set, from which
/// almost every activity is skipped (they come in runs on one stream), costs little.
const CHUNK: usize = 1 << 15;

/// The cap on devices or streams that the GPU activities go past, if any: the first passed, in
/// the order of the activities.
pub(crate) fn check(t: &Timeline, limits: &Limits) -> Option<Cap> {
    let within = t.activities.par_chunks(CHUNK).map(|c| pairs(c, limits)).try_reduce(Set::default, |a, b| {
        let (small, mut large) = if a.len() < b.len() { (a, b) } else { (b, a) };
        large.extend(small);
        within_streams(&large, limits).then_some(large)
    });
    match within {
        Some(streams) => {
            let devices: Set<u32> = streams.iter().map(|&(d, _)| d).collect();
            (devices.len() as u64 > limits.max_devices).then_some(Cap::Devices)
        }
        // Past the cap on streams, and maybe the one on devices first: the scan says which.
        None => scan(&t.activities, limits),
    }
}

fn within_streams(s: &Set<(u32, u32)>, limits: &Limits) -> bool {
    s.len() as u64 <= limits.max_streams
}

/// Each (device, stream) pair of `activities` the first time it comes, in order, added to `seen`.
fn first_seen<'a>(
    activities: &'a [GpuActivity],
    seen: &'a mut Set<(u32, u32)>,
) -> impl Iterator<Item = (u32, u32)> + 'a {
    let mut last = None;
    activities.iter().filter_map(move |a| {
        let pair = (a.device, a.stream);
        // Activities come in runs on one stream.
        if last == Some(pair) {
            return None;
        }
        last = Some(pair);
        seen.insert(pair).then_some(pair)
    })
}

/// The distinct (device, stream) pairs of `chunk`; `None` once they are past the cap on streams.
fn pairs(chunk: &[GpuActivity], limits: &Limits) -> Option<Set<(u32, u32)>> {
    let mut set = Set::default();
    let mut streams: u64 = 0;
    for _ in first_seen(chunk, &mut set) {
        streams += 1;
        if streams > limits.max_streams {
            return None;
        }
    }
    Some(set)
}

/// The same answer, in one pass in order: the cap passed first.
fn scan(activities: &[GpuActivity], limits: &Limits) -> Option<Cap> {
    let mut seen = Set::default();
    let mut devices = Set::default();
    let mut streams: u64 = 0;
    for (device, _) in first_seen(activities, &mut seen) {
        streams += 1;
        if devices.insert(device) && devices.len() as u64 > limits.max_devices {
            return Some(Cap::Devices);
        }
        if streams > limits.max_streams {
            return Some(Cap::Streams);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::timeline::ActivityKind;

    fn activity(device: u32, stream: u32) -> GpuActivity {
        GpuActivity::new(device, stream, 0, 0, 1, None, ActivityKind::Kernel)
    }

    /// The answer counted by hand from the whole list, in order: the first activity at which the
    /// distinct devices, or the distinct pairs, go past their cap.
    fn naive(pairs: &[(u32, u32)], limits: &Limits) -> Option<Cap> {
        // A repeat of the pair just before adds nothing: counted once, the loop stays short.
        let mut pairs = pairs.to_vec();
        pairs.dedup();
        for end in 1..=pairs.len() {
            let seen = &pairs[..end];
            let mut devices: Vec<u32> = seen.iter().map(|p| p.0).collect();
            devices.sort();
            devices.dedup();
            let mut streams = seen.to_vec();
            streams.sort();
            streams.dedup();
            if devices.len() as u64 > limits.max_devices {
                return Some(Cap::Devices);
            }
            if streams.len() as u64 > limits.max_streams {
                return Some(Cap::Streams);
            }
        }
        None
    }

    fn timeline(pairs: &[(u32, u32)]) -> Timeline {
        Timeline { activities: pairs.iter().map(|&(d, s)| activity(d, s)).collect(), ..Default::default() }
    }

    #[test]
    fn which_cap_is_named_depends_on_which_is_passed_first() {
        let limits = Limits { max_devices: 2, max_streams: 3, ..Limits::DEFAULT };
        // Four streams on one device: streams first. Three devices of one stream each: devices
        // first, although both caps are passed by the end.
        let streams_first = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (2, 0)];
        let devices_first = [(0, 0), (1, 0), (2, 0), (0, 1), (0, 2)];
        for (pairs, cap) in [(&streams_first[..], Cap::Streams), (&devices_first[..], Cap::Devices)] {
            assert_eq!(check(&timeline(pairs), &limits), Some(cap));
            assert_eq!(naive(pairs, &limits), Some(cap));
        }
    }

    #[test]
    fn long_runs_across_chunks_are_counted_once() {
        // Runs of each pair longer than a chunk, so that every chunk sees a pair another saw.
        let limits = Limits { max_devices: 3, max_streams: 5, ..Limits::DEFAULT };
        let pairs: Vec<(u32, u32)> =
            (0..5u32).flat_map(|k| std::iter::repeat_n((k % 3, k), CHUNK + 7)).collect();
        assert_eq!(check(&timeline(&pairs), &limits), None);
        let one_more: Vec<(u32, u32)> = pairs.iter().copied().chain([(0, 9)]).collect();
        assert_eq!(check(&timeline(&one_more), &limits), Some(Cap::Streams));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn agrees_with_counting_by_hand(
            runs in proptest::collection::vec((0u32..6, 0u32..6, 1usize..20_000), 1..40),
            max_devices in 1u64..6,
            max_streams in 1u64..12,
        ) {
            let pairs: Vec<(u32, u32)> =
                runs.iter().flat_map(|&(d, s, n)| std::iter::repeat_n((d, s), n)).collect();
            let limits = Limits { max_devices, max_streams, ..Limits::DEFAULT };
            prop_assert_eq!(check(&timeline(&pairs), &limits), naive(&pairs, &limits));
        }
    }
}
