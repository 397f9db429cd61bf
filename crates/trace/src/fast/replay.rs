//! Exact errors: where the fast parser stops on bad or truncated text, the reference parser is run
//! over the few bytes from the last complete element on, in the state it would have been in there,
//! so that the reason and the line and column it reports are the ones a full reference run reports.
//!
//! The state is rebuilt with a synthetic prefix (`{"traceEvents":[` or `[`) followed by as many
//! line feeds and spaces as there were lines and columns before the restart point: serde_json counts
//! positions from the bytes it reads, so they come out the same as in the file.

use std::io::{self, Read};

use crate::event::TimelineBuilder;
use crate::simple;

/// The opening that puts serde_json inside the events array.
pub(crate) fn prefix(bare: bool) -> &'static [u8] {
    if bare {
        b"["
    } else {
        b"{\"traceEvents\":["
    }
}

/// Lines and column of a position: line feeds before it and bytes since the last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// Line feeds before the position.
    pub lines: u64,
    /// Bytes between the last line feed (or the start) and the position.
    pub column: u64,
}

impl Place {
    /// The place of position `pos` in `buf`, counting from `start` (whose place is `self`).
    pub(crate) fn advance(self, buf: &[u8], start: usize, pos: usize) -> Place {
        let part = &buf[start..pos];
        let lines = count_lines(part);
        match part.iter().rposition(|&b| b == b'\n') {
            Some(i) => Place { lines: self.lines + lines, column: (part.len() - i - 1) as u64 },
            None => Place { lines: self.lines, column: self.column + part.len() as u64 },
        }
    }
}

/// Line feeds in `bytes`.
pub(crate) fn count_lines(bytes: &[u8]) -> u64 {
    // Written so that the compiler vectorizes it.
    bytes.chunks(255).map(|c| c.iter().map(|&b| (b == b'\n') as u8).sum::<u8>() as u64).sum()
}

/// The synthetic opening: the prefix, then line feeds and spaces up to `place`.
fn opening(bare: bool, place: Place) -> Vec<u8> {
    let p = prefix(bare);
    let mut out = p.to_vec();
    if place.lines > 0 {
        out.resize(out.len() + place.lines as usize, b'\n');
        out.resize(out.len() + place.column as usize, b' ');
    } else {
        // The prefix sits on the same line; the restart point is never nearer the line start
        // than the prefix is long, since the real opening precedes it there.
        out.resize(place.column.max(p.len() as u64) as usize, b' ');
    }
    out
}

/// The reference parser's error, and how many elements of the events array it read from the
/// restart point on before it (the fast parser refuses a scalar element together with a byte
/// that cannot follow it, `8` then a NUL; the reference parser takes the `8` before it sees the
/// NUL: see [`Replayed::extra`]).
pub(crate) struct Replayed {
    /// The error, worded and placed as a full reference run words it.
    pub error: serde_json::Error,
    /// Elements read from the restart point on.
    pub read: u64,
}

impl Replayed {
    /// The elements the reference parser read beyond those the fast parser pushed: the restart
    /// point is the last complete element (read again) when `at_element`, else the array's start.
    pub(crate) fn extra(&self, at_element: bool) -> u64 {
        self.read.saturating_sub(at_element as u64)
    }

    /// Counts the extra elements as the reference parser did: only a scalar can be taken before
    /// the byte that fails the text (an object fails in both, inside its braces).
    pub(crate) fn count_into(&self, at_element: bool, builder: &mut TimelineBuilder) {
        for _ in 0..self.extra(at_element) {
            builder.push_non_object();
        }
    }
}

/// Replays an in-memory document from `restart` (at `place`), reading at most to `limit`. Returns
/// the reference parser's error, or `None` when it found none before `limit` (then the fast
/// parser was wrong to stop, and the caller falls back to a full reference run).
pub(crate) fn slice(buf: &[u8], restart: usize, place: Place, limit: usize, bare: bool) -> Option<Replayed> {
    let mut doc = opening(bare, place);
    doc.extend_from_slice(&buf[restart..limit]);
    let mut de = serde_json::Deserializer::from_slice(&doc);
    let mut scratch = TimelineBuilder::new();
    match simple::parse(&mut de, &mut scratch) {
        Ok(_) => None,
        // An end of text that is only the end of the copy is no answer.
        Err(e) if e.classify() == serde_json::error::Category::Eof && limit < buf.len() => None,
        Err(error) => Some(Replayed { error, read: scratch.events() }),
    }
}

/// Replays a stream: `window` holds the bytes from `place` on, `rest` the stream after them.
pub(crate) fn stream(window: &[u8], place: Place, bare: bool, rest: impl Read) -> Option<Replayed> {
    let head = io::Cursor::new(opening(bare, place)).chain(window).chain(rest);
    let mut de = serde_json::Deserializer::from_reader(io::BufReader::with_capacity(1 << 16, head));
    let mut scratch = TimelineBuilder::new();
    let error = simple::parse(&mut de, &mut scratch).err()?;
    Some(Replayed { error, read: scratch.events() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_count_lines_and_columns() {
        let text = b"ab\ncd\n  ef";
        let p = Place::default().advance(text, 0, 8);
        assert_eq!(p, Place { lines: 2, column: 2 });
        assert_eq!(Place::default().advance(text, 0, 2), Place { lines: 0, column: 2 });
        let q = Place::default().advance(text, 0, 4);
        assert_eq!(q.advance(text, 4, 8), p);
        assert_eq!(count_lines(&[b'\n'; 1000]), 1000);
    }
}
