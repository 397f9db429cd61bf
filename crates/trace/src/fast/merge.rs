//! Joins the timelines of consecutive parts of one file.

use rayon::prelude::*;

use crate::timeline::{Annotation, GpuActivity, GraphLaunch, Timeline};

/// Joins `parts`, read from consecutive stretches of text, onto `into`, read from the text just
/// before them. Strings are re-interned in order of first use, so the ids come out as a single
/// pass assigns them. GPU activities, the bulk, are rewritten on all cores straight into place
/// after those already joined (copying them on one core took a twentieth of reading a large
/// trace), one part at a time, each part's list freed once copied: the join holds the records once
/// and one part besides, not twice. The activities already in `into` are not copied again, so
/// that a reader joining its parts a few at a time as they are read (`gzip_par`) stays linear.
pub(crate) fn join(into: &mut Timeline, mut parts: Vec<Timeline>) {
    let ids: Vec<Vec<u32>> = parts
        .iter()
        .map(|part| {
            (0..part.strings.len() as u32).map(|id| into.strings.intern(part.strings.get(id))).collect()
        })
        .collect();
    for (part, ids) in parts.iter_mut().zip(&ids) {
        let id = |old: u32| ids[old as usize];
        let acts = std::mem::take(&mut part.activities);
        // Grown part by part, not to the sum at once: room for every part while the parts still
        // hold theirs would be the records twice. Growth is amortized (`gzip_par` joins a few parts
        // at a time), and a list this large is its own mapping, which grows without a copy.
        into.activities.reserve(acts.len());
        into.activities.par_extend(acts.par_iter().map(|a| GpuActivity {
            device: id(a.device),
            stream: id(a.stream),
            name: id(a.name),
            ..*a
        }));
    }
    for (part, ids) in parts.into_iter().zip(&ids) {
        let id = |old: u32| ids[old as usize];
        into.launches.extend(part.launches.into_iter().map(|l| GraphLaunch { thread: id(l.thread), ..l }));
        into.host_calls.extend(part.host_calls);
        into.annotations.extend(part.annotations.into_iter().map(|a| Annotation {
            name: id(a.name),
            device: a.device.map(id),
            ..a
        }));
        into.events += part.events;
        into.context_events += part.context_events;
        if into.context.is_none() {
            into.context = part.context;
        }
        into.skipped.missing_ts += part.skipped.missing_ts;
        into.skipped.bad_dur += part.skipped.bad_dur;
        into.skipped.not_an_object += part.skipped.not_an_object;
        into.names_cut += part.names_cut;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RawEvent, Scalar, TimelineBuilder};

    fn kernel<'a>(device: &'a str, name: &'a str, ts: &'a str) -> RawEvent<'a> {
        RawEvent {
            ph: Some("X".into()),
            cat: Some("kernel".into()),
            name: Some(name.into()),
            ts: Scalar::Num(ts.into()),
            dur: Scalar::Num("1".into()),
            device: Scalar::Num(device.into()),
            stream: Scalar::Num("7".into()),
            ..Default::default()
        }
    }

    #[test]
    fn split_and_merged_equals_one_pass() {
        let events =
            [kernel("0", "a", "1"), kernel("1", "b", "2"), kernel("0", "c", "3"), kernel("1", "a", "4")];
        let mut whole = TimelineBuilder::new();
        events.iter().for_each(|e| whole.push(e));
        let whole = whole.finish();
        for cut in 0..=events.len() {
            let (mut a, mut b) = (TimelineBuilder::new(), TimelineBuilder::new());
            events[..cut].iter().for_each(|e| a.push(e));
            events[cut..].iter().for_each(|e| b.push(e));
            let mut merged = TimelineBuilder::new().finish();
            join(&mut merged, vec![a.finish(), b.finish()]);
            assert_eq!(merged.activities, whole.activities, "cut at {cut}");
            assert_eq!(merged.strings.len(), whole.strings.len());
            assert_eq!(merged.events, whole.events);
        }
    }
}
