//! The fast parser: a byte scanner that reads only the keys the analysis needs, in parallel on
//! mapped files and beside the decompressor on gzip files.
//!
//! It fills the same [`RawEvent`](crate::event::RawEvent)s as the reference parser and hands them
//! to the same [`TimelineBuilder`], so the two agree by construction on what an event becomes. It
//! checks the text with serde_json's rules (numbers, literals, escapes, surrogates, control
//! characters, UTF-8 inside events, nesting depth) without building values; the text between an
//! event's members, which Kineto repeats event after event, is matched whole against what was read
//! last in the same place (see [`members`]). Where it stops (bad or
//! truncated text), the reference parser replays the last few bytes to word the reason exactly as a
//! full reference run would (see [`exact_error`]); where it meets something it leaves alone (a document
//! that fails before any event), the reference parser reads the whole file.

pub(crate) mod array;
pub(crate) mod chunks;
mod cursor;
pub(crate) mod exact_error;
mod fields;
mod gzip_par;
mod lexeme;
pub(crate) mod members;
pub(crate) mod merge;
mod stream;
pub(crate) mod top;

use crate::event::TimelineBuilder;
use crate::tail;

pub(crate) use gzip_par::PACED_BY_INFLATE;
pub(crate) use stream::{Again, Reopen, BLOCK};

/// Reads a stream of JSON text (decompressed gzip, standard input) in blocks of `block` bytes,
/// then the rest of it, which must be whitespace. A file, which `reopen` reads again from its
/// start, is parsed on all cores while it is decompressed ([`gzip_par`]); standard input, which
/// cannot be read twice, beside its reader on one core ([`stream`]); so are bytes in memory
/// (`stdin` false), whose reading thread is waited for.
pub(crate) fn parse_stream(
    reader: Box<dyn std::io::Read + Send>,
    block: usize,
    reopen: Reopen,
    stdin: bool,
    builder: &mut TimelineBuilder,
) -> tail::Outcome {
    match reopen {
        Some(reopen) => gzip_par::parse(reader, block, reopen, builder),
        None => stream::parse_stream(reader, block, None, stdin, builder),
    }
}

/// A document's outcome as the reference parser words it: `Ok(saw_events)`, or the error that
/// stopped it (the events before it stay in the builder).
pub(crate) type Outcome = Result<bool, serde_json::Error>;

/// Nesting level of an element (as an object) in a bare array and in `{"traceEvents": [...]}`.
fn element_level(bare: bool) -> u32 {
    if bare {
        2
    } else {
        3
    }
}

/// Parses a mapped file, letting the pages already parsed leave memory as it goes.
pub(crate) fn parse_mapped(mapped: &crate::input::Mapped, builder: &mut TimelineBuilder) -> tail::Outcome {
    let release = |start: usize, end: usize| mapped.release(start, end);
    parse_slice(mapped, &release, builder)
}

/// Parses an in-memory document, then checks that only whitespace follows it. `release` is told
/// which ranges were parsed, so that a mapped file's pages can leave memory.
pub(crate) fn parse_slice(
    buf: &[u8],
    release: array::Release,
    builder: &mut TimelineBuilder,
) -> tail::Outcome {
    parse_slice_parts(buf, chunks::MIN_PART, release, builder)
}

/// [`parse_slice`] with parts of at least `min_part` bytes.
pub(crate) fn parse_slice_parts(
    buf: &[u8],
    min_part: usize,
    release: array::Release,
    builder: &mut TimelineBuilder,
) -> tail::Outcome {
    match parse_slice_fast(buf, min_part, release, builder) {
        Some((Ok(saw), Some(end))) => {
            tail::check_tail(&buf[end..], end as u64)?;
            Ok(saw)
        }
        Some((outcome, _)) => outcome.map_err(tail::Stop::Json),
        None => {
            *builder = TimelineBuilder::with_limits(*builder.limits());
            tail::simple_slice(buf, builder)
        }
    }
}

/// `None` when the reference parser should read the whole document; else the outcome and, when
/// the document was read to its end, where it ends (`None` when the builder stopped at a cap).
fn parse_slice_fast(
    buf: &[u8],
    min_part: usize,
    release: array::Release,
    builder: &mut TimelineBuilder,
) -> Option<(Outcome, Option<usize>)> {
    let mut pos = 0;
    let mut from = top::From::Start;
    // The `]` of the last events array, once there is one.
    let mut last_close: Option<(usize, bool)> = None;
    loop {
        match top::walk(buf, pos, from, builder) {
            top::Walk::Done(end) => return Some((Ok(last_close.is_some()), Some(end))),
            top::Walk::Failed { at, .. } => {
                let (close, bare) = last_close?;
                let r = replay_slice(buf, close, at, bare)?;
                return Some((Err(r.error), None));
            }
            top::Walk::Events { content, bare } => {
                match chunks::parse(buf, content, element_level(bare), min_part, release, builder) {
                    chunks::Events::Closed(p) => {
                        if bare {
                            return Some((Ok(true), Some(p + 1)));
                        }
                        last_close = Some((p, bare));
                        pos = p + 1;
                        from = top::From::AfterEvents;
                    }
                    // The reader reports the cap from the builder.
                    chunks::Events::Stopped => return Some((Ok(true), None)),
                    chunks::Events::Failed { at, anchor, at_element } => {
                        let r = replay_slice(buf, anchor, at, bare)?;
                        r.count_into(at_element, builder);
                        return Some((Err(r.error), None));
                    }
                }
            }
        }
    }
}

/// The reference parser's error for a failure found at `at`, restarting at `anchor`.
fn replay_slice(buf: &[u8], anchor: usize, at: usize, bare: bool) -> Option<exact_error::Replayed> {
    let place = exact_error::Place::default().advance(buf, 0, anchor);
    let limit = buf.len().min(at.saturating_add(1 << 16));
    exact_error::slice(buf, anchor, place, limit, bare)
}

#[cfg(test)]
pub(crate) mod tests;
