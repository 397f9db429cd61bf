//! Runs over the elements of the events array.

use super::cursor::Cursor;
use super::lexeme::Bad;
use crate::event::TimelineBuilder;

/// What the last position read before a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// The array's `[`.
    Open,
    /// A complete element.
    Element,
    /// A `,`.
    Comma,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The next element starts at this position, at or past the run's stop.
    Landed(usize),
    /// The array's `]` is at this position.
    Closed(usize),
    /// The builder stopped at a cap (or out of memory) after the last element pushed.
    Stopped,
    /// The text is invalid (`eof` false), or ended (`eof` true), around position `at`.
    Failed {
        /// Whether the buffer ended.
        eof: bool,
        /// Where the failure was found.
        at: usize,
    },
}

/// A run's result.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    /// How it ended.
    pub end: End,
    /// Start and end (exclusive) of the last element pushed.
    pub last_done: Option<(usize, usize)>,
}

/// Tells the operating system that `start..end` of a mapped file will not be read again soon, so
/// that the pages already parsed leave the resident set.
pub(crate) type Release<'r> = &'r (dyn Fn(usize, usize) + Sync);

/// Bytes parsed between two releases.
const RELEASE_EVERY: usize = 4 << 20;

/// Parses and pushes elements from `pos` (just after what `after` says), until the array closes,
/// the text fails, or an element would start at or past `stop`. `level` is the nesting level of
/// an element as an object.
pub(crate) fn run(
    buf: &[u8],
    pos: usize,
    after: After,
    stop: usize,
    level: u32,
    release: Option<Release>,
    builder: &mut TimelineBuilder,
) -> Run {
    let mut cur = Cursor::new(buf, pos);
    let mut last_done = None;
    let mut state = after;
    let mut released = pos;
    let fail = |cur: &Cursor, e: Bad, last_done| Run {
        end: End::Failed { eof: e == Bad::Eof, at: cur.reached() },
        last_done,
    };
    loop {
        let t = match cur.tok() {
            Ok(t) => t,
            Err(e) => return fail(&cur, e, last_done),
        };
        match (state, t.1) {
            (After::Open | After::Element, b']') => return Run { end: End::Closed(t.0), last_done },
            (After::Element, b',') => {
                state = After::Comma;
                continue;
            }
            (After::Element, _) | (After::Comma, b']') => return fail(&cur, Bad::Syntax, last_done),
            (After::Comma, _) if t.0 >= stop => {
                // The part's last stretch too: parts end short of a release, and the text of
                // every part's tail would otherwise stay resident until the whole file is read.
                if let Some(release) = release {
                    release(released, t.0);
                }
                return Run { end: End::Landed(t.0), last_done };
            }
            _ => {}
        }
        match cur.element(t, level, builder) {
            Ok(end) => {
                last_done = Some((t.0, end));
                state = After::Element;
                if builder.stopped().is_some() {
                    return Run { end: End::Stopped, last_done };
                }
                if let Some(release) = release {
                    if end - released >= RELEASE_EVERY {
                        release(released, end);
                        released = end;
                    }
                }
            }
            Err(e) => return fail(&cur, e, last_done),
        }
    }
}
