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

/// How many line feeds and spaces follow the prefix to bring serde_json to `place`.
fn padding(bare: bool, place: Place) -> (u64, u64) {
    if place.lines > 0 {
        (place.lines, place.column)
    } else {
        // The prefix sits on the same line; the restart point is never nearer the line start
        // than the prefix is long, since the real opening precedes it there.
        (0, place.column.saturating_sub(prefix(bare).len() as u64))
    }
}

/// The synthetic opening, the prefix then line feeds and spaces up to `place`, made as it is
/// read: its padding is as long as the text before the restart point (a whole one-line file,
/// when a minified trace is cut), which is held in memory only below [`COPY_MOST`].
fn opening_reader(bare: bool, place: Place) -> impl Read {
    let (lines, spaces) = padding(bare, place);
    prefix(bare).chain(io::repeat(b'\n').take(lines)).chain(io::repeat(b' ').take(spaces))
}

/// Most bytes of padding and text replayed from one in-memory copy; past it the replay reads
/// them as a stream (slower, in constant memory).
const COPY_MOST: u64 = 64 << 20;

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
    slice_copying(buf, restart, place, limit, bare, COPY_MOST)
}

/// [`slice`], from one copy when padding and text come to at most `copy_most` bytes.
fn slice_copying(
    buf: &[u8],
    restart: usize,
    place: Place,
    limit: usize,
    bare: bool,
    copy_most: u64,
) -> Option<Replayed> {
    let text = &buf[restart..limit];
    let (lines, spaces) = padding(bare, place);
    let mut scratch = TimelineBuilder::new();
    let parsed = if lines.saturating_add(spaces).saturating_add(text.len() as u64) <= copy_most {
        let mut doc = Vec::new();
        opening_reader(bare, place).chain(text).read_to_end(&mut doc).ok()?;
        simple::parse(&mut serde_json::Deserializer::from_slice(&doc), &mut scratch)
    } else {
        let doc = io::BufReader::with_capacity(1 << 16, opening_reader(bare, place).chain(text));
        simple::parse(&mut serde_json::Deserializer::from_reader(doc), &mut scratch)
    };
    match parsed {
        Ok(_) => None,
        // An end of text that is only the end of the copy is no answer.
        Err(e) if e.classify() == serde_json::error::Category::Eof && limit < buf.len() => None,
        Err(error) => Some(Replayed { error, read: scratch.events() }),
    }
}

/// Replays a stream: `window` holds the bytes from `place` on, `rest` the stream after them.
pub(crate) fn stream(window: &[u8], place: Place, bare: bool, rest: impl Read) -> Option<Replayed> {
    let head = opening_reader(bare, place).chain(window).chain(rest);
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

    #[test]
    fn a_replay_read_as_a_stream_says_what_one_from_a_copy_says() {
        // Documents failing on the restart point's line and on a later one, cut or invalid,
        // restarting after text on one line (a minified trace) and after several lines.
        let one_line = r#"{"traceEvents":[{"ph":"X","ts":1},{"ph":"X","ts":2},{"ph":"X","ts":3"#;
        let lines = "{\"traceEvents\":[\n  {\"ph\": \"X\"},\n  {\"ph\": \"X\"},\n  {\"ph\":\n  nul }]}";
        let cases = [
            one_line.to_string(),
            one_line.replace(r#""ts":3"#, r#""ts":3x"#),
            format!("{one_line}}},\n  {{\"ph\": tru}}]}}"),
            lines.to_string(),
            lines.replace("nul", "\"\\q\""),
        ];
        let mut checked = 0;
        for doc in &cases {
            let buf = doc.as_bytes();
            // What the reference parser says over the whole document.
            let mut de = serde_json::Deserializer::from_slice(buf);
            let whole = simple::parse(&mut de, &mut TimelineBuilder::new()).expect_err("invalid").to_string();
            // Restart at the start of each element, as the readers do after a complete one.
            let starts = buf.iter().enumerate().filter(|&(i, &b)| b == b'{' && i > 0).map(|(i, _)| i);
            for restart in starts {
                let place = Place::default().advance(buf, 0, restart);
                let copied = slice_copying(buf, restart, place, buf.len(), false, u64::MAX);
                let streamed = slice_copying(buf, restart, place, buf.len(), false, 0);
                let (c, s) = (copied.expect("an error"), streamed.expect("an error"));
                assert_eq!(c.error.to_string(), whole, "{doc} from {restart}");
                assert_eq!(s.error.to_string(), whole, "{doc} from {restart}");
                assert_eq!(c.error.classify(), s.error.classify(), "{doc} from {restart}");
                assert_eq!(c.read, s.read, "{doc} from {restart}");
                checked += 1;
            }
        }
        assert!(checked > 10, "{checked}");
    }
}
