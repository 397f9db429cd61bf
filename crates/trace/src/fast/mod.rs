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
//! full reference run would (see [`replay`]); where it meets something it leaves alone (a document
//! that fails before any event), the reference parser reads the whole file.

pub(crate) mod array;
pub(crate) mod chunks;
mod cursor;
mod fields;
mod gzip_par;
mod lexeme;
mod members;
pub(crate) mod merge;
pub(crate) mod replay;
mod stream;
pub(crate) mod top;

use crate::event::TimelineBuilder;
use crate::simple;

pub(crate) use gzip_par::parse_gzip;

/// A trace's outcome as the reference parser words it: `Ok(saw_events)`, or the error that stopped
/// it (the events before it stay in the builder).
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
pub(crate) fn parse_mapped(map: &memmap2::Mmap, builder: &mut TimelineBuilder) -> Outcome {
    const PAGE: usize = 4096;
    let release = |start: usize, end: usize| {
        let (from, to) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if to > from {
            // SAFETY: the map is read-only and private and nothing ever writes to it, so dropped
            // pages hold the file's bytes again when read (the bytes do not change under a
            // borrow). Only whole pages already parsed are dropped; a failure is harmless.
            let _ =
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from) };
        }
    };
    parse_slice(map, &release, builder)
}

/// Parses an in-memory document. `release` is told which ranges were parsed, so that a mapped
/// file's pages can leave memory.
pub(crate) fn parse_slice(buf: &[u8], release: array::Release, builder: &mut TimelineBuilder) -> Outcome {
    parse_slice_parts(buf, chunks::MIN_PART, release, builder)
}

/// [`parse_slice`] with parts of at least `min_part` bytes.
fn parse_slice_parts(
    buf: &[u8],
    min_part: usize,
    release: array::Release,
    builder: &mut TimelineBuilder,
) -> Outcome {
    match parse_slice_fast(buf, min_part, release, builder) {
        Some(outcome) => outcome,
        None => {
            *builder = TimelineBuilder::new();
            let mut de = serde_json::Deserializer::from_slice(buf);
            simple::parse(&mut de, builder)
        }
    }
}

/// `None` when the reference parser should read the whole document.
fn parse_slice_fast(
    buf: &[u8],
    min_part: usize,
    release: array::Release,
    builder: &mut TimelineBuilder,
) -> Option<Outcome> {
    let mut pos = 0;
    let mut from = top::From::Start;
    // The `]` of the last events array, once there is one.
    let mut last_close: Option<(usize, bool)> = None;
    loop {
        match top::walk(buf, pos, from, builder) {
            top::Walk::Done => return Some(Ok(last_close.is_some())),
            top::Walk::Failed { at, .. } => {
                let (close, bare) = last_close?;
                return replay_slice(buf, close, at, bare).map(Err);
            }
            top::Walk::Events { content, bare } => {
                match chunks::parse(buf, content, element_level(bare), min_part, release, builder) {
                    chunks::Events::Closed(p) => {
                        if bare {
                            return Some(Ok(true));
                        }
                        last_close = Some((p, bare));
                        pos = p + 1;
                        from = top::From::AfterEvents;
                    }
                    chunks::Events::Failed { at, anchor } => {
                        return replay_slice(buf, anchor, at, bare).map(Err)
                    }
                }
            }
        }
    }
}

/// The reference parser's error for a failure found at `at`, restarting at `anchor`.
fn replay_slice(buf: &[u8], anchor: usize, at: usize, bare: bool) -> Option<serde_json::Error> {
    let place = replay::Place::default().advance(buf, 0, anchor);
    let limit = buf.len().min(at.saturating_add(1 << 16));
    replay::slice(buf, anchor, place, limit, bare)
}

#[cfg(test)]
pub(crate) mod tests;
