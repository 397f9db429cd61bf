//! Joins the timelines of consecutive parts of one file.

use crate::timeline::{Annotation, GpuActivity, GraphLaunch, Timeline};

/// Appends `part`, read from the text right after what `into` was read from. Strings are
/// re-interned in `part`'s order of first use, so the ids come out as a single pass assigns them.
pub(crate) fn append(into: &mut Timeline, part: Timeline) {
    let ids: Vec<u32> =
        (0..part.strings.len() as u32).map(|id| into.strings.intern(part.strings.get(id))).collect();
    let id = |old: u32| ids[old as usize];
    into.activities.extend(part.activities.into_iter().map(|a| GpuActivity {
        device: id(a.device),
        stream: id(a.stream),
        name: id(a.name),
        ..a
    }));
    into.launches.extend(part.launches.into_iter().map(|l| GraphLaunch { thread: id(l.thread), ..l }));
    into.annotations.extend(part.annotations.into_iter().map(|a| Annotation {
        name: id(a.name),
        device: a.device.map(id),
        ..a
    }));
    into.events += part.events;
    into.skipped.missing_ts += part.skipped.missing_ts;
    into.skipped.bad_dur += part.skipped.bad_dur;
    into.skipped.not_an_object += part.skipped.not_an_object;
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
            let mut merged = a.finish();
            append(&mut merged, b.finish());
            assert_eq!(merged.activities, whole.activities, "cut at {cut}");
            assert_eq!(merged.strings.len(), whole.strings.len());
            assert_eq!(merged.events, whole.events);
        }
    }
}
