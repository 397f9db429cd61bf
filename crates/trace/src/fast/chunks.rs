//! Parallel parsing of an in-memory events array.
//!
//! The array is cut at guessed element starts (a `{` after `}` `,`, whitespace aside); each part is
//! parsed on its own core into its own timeline. A guess is only trusted when the part before it,
//! itself trusted, ends exactly there: the first part starts at the real `[`, so by induction every
//! accepted part starts on a real element. A wrong guess (inside a string, say) is re-parsed in
//! order from where the previous part really ended. The parts are then joined in file order.

use rayon::prelude::*;

use super::array::{self, After, End, Release, Run};
use super::merge;
use crate::event::{Stopped, TimelineBuilder};
use crate::timeline::Timeline;

/// Parts smaller than this are not worth a thread.
pub(crate) const MIN_PART: usize = 8 << 20;

/// How the events array ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Events {
    /// Its `]` is at this position.
    Closed(usize),
    /// The builder stopped at a cap (or out of memory).
    Stopped,
    /// It failed at `at`; the reference parser can restart at `anchor`, the start of the last
    /// complete element (`at_element`), or just after `[` when there is none.
    Failed {
        /// Where the failure was found.
        at: usize,
        /// Where to restart.
        anchor: usize,
        /// Whether `anchor` is an element's start.
        at_element: bool,
    },
}

/// How far past a part's nominal start its element start is looked for: far beyond any element
/// a profiler writes (Kineto's are under a few KiB), and little to touch on many cores (256
/// parts on 64 threads: 256 MiB of a file without a start, 4 GiB at 16 MiB each).
const GUESS_MOST: usize = 1 << 20;

/// The first guessed element start at or after `from`.
pub(crate) fn guess_start(buf: &[u8], from: usize) -> Option<usize> {
    let ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let mut i = from;
    while let Some(off) = memchr::memchr(b',', &buf[i.min(buf.len())..]) {
        let comma = i + off;
        i = comma + 1;
        let before = buf[..comma].iter().rposition(|&b| !ws(b));
        let after = buf[comma + 1..].iter().position(|&b| !ws(b)).map(|p| comma + 1 + p);
        if let (Some(b), Some(a)) = (before, after) {
            if buf[b] == b'}' && buf[a] == b'{' && a >= from {
                return Some(a);
            }
        }
    }
    None
}

/// Parses the elements from `content` (just after `[`) in parts of at least `min_part` bytes, as
/// many as the cores pay for. `level` is an element's nesting level as an object.
pub(crate) fn parse(
    buf: &[u8],
    content: usize,
    level: u32,
    min_part: usize,
    release: Release,
    builder: &mut TimelineBuilder,
) -> Events {
    let threads = rayon::current_num_threads();
    let len = buf.len().saturating_sub(content);
    let parts = (len / min_part.max(1)).clamp(1, 4 * threads);
    let mut starts = vec![content];
    for k in 1..parts {
        let nominal = content + len / parts * k;
        // Within a window: text of gigabytes without an element start (a sparse file of NULs)
        // is not searched whole before the first part finds it invalid. A part without a start
        // is read by the part before it.
        let from = nominal.max(*starts.last().expect("one start") + 1);
        if let Some(s) = guess_start(&buf[..buf.len().min(from.saturating_add(GUESS_MOST))], from) {
            starts.push(s);
        }
    }
    let stop = |k: usize| starts.get(k + 1).copied().unwrap_or(usize::MAX);
    // Each part within the caps on its own; the whole is checked again once joined.
    let limits = *builder.limits();
    let part_run = |start: usize, after: After, stop: usize| {
        let mut b = TimelineBuilder::with_limits(limits);
        let run = array::run(buf, start, after, stop, level, Some(release), &mut b);
        (run, b.stopped(), b.finish())
    };
    let runs: Vec<(Run, Option<Stopped>, Timeline)> = (0..starts.len())
        .into_par_iter()
        .map(|k| part_run(starts[k], if k == 0 { After::Open } else { After::Comma }, stop(k)))
        .collect();

    let mut joined = std::mem::take(builder).finish();
    let mut runs = runs.into_iter().map(Some).collect::<Vec<_>>();
    let (mut run, mut stopped, part) = runs[0].take().expect("the first part");
    let mut parts = vec![part];
    let mut anchor = content;
    let mut at_element = false;
    let mut next = 1;
    let end = loop {
        if let Some((start, _)) = run.last_done {
            anchor = start;
            at_element = true;
        }
        match run.end {
            End::Closed(p) => break Events::Closed(p),
            End::Stopped => break Events::Stopped,
            End::Failed { at, .. } => break Events::Failed { at, anchor, at_element },
            End::Landed(q) => {
                // Guesses before q were not element starts.
                while next < starts.len() && starts[next] < q {
                    next += 1;
                }
                let (r, s, part) = if next < starts.len() && starts[next] == q {
                    next += 1;
                    runs[next - 1].take().expect("each part is taken once")
                } else {
                    part_run(q, After::Comma, starts.get(next).copied().unwrap_or(usize::MAX))
                };
                parts.push(part);
                run = r;
                stopped = s;
            }
        }
    };
    merge::join(&mut joined, parts);
    // A part stopped at a cap has the whole past it too; memory that ran out is said as such.
    *builder = TimelineBuilder::resume(joined, limits);
    if let Some(why) = stopped {
        builder.stop(why);
    }
    end
}

/// The last guessed element start at or after `from`.
pub(crate) fn guess_last(buf: &[u8], from: usize) -> Option<usize> {
    let ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let mut end = buf.len();
    while let Some(off) = memchr::memrchr(b',', &buf[from.min(end)..end]) {
        let comma = from + off;
        end = comma;
        let before = buf[..comma].iter().rposition(|&b| !ws(b));
        let after = buf[comma + 1..].iter().position(|&b| !ws(b)).map(|p| comma + 1 + p);
        if let (Some(b), Some(a)) = (before, after) {
            if buf[b] == b'}' && buf[a] == b'{' {
                return Some(a);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_need_close_comma_open() {
        let text = br#"[{"a": "}, {"}, {"b": [{}, {}]},
  {"c": 1}]"#;
        // Guesses inside a string (11) and inside a nested array (27), which the parse order
        // then rejects, and the real element starts (16, 35).
        assert_eq!(guess_start(text, 0), Some(11));
        assert_eq!(guess_start(text, 12), Some(16));
        assert_eq!(guess_start(text, 17), Some(27));
        assert_eq!(guess_start(text, 28), Some(35));
        assert_eq!(guess_start(text, 36), None);
    }
}
