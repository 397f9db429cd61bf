//! Candidate readers (issue 19): the events read by a general SIMD JSON crate instead of the
//! hand-written grammar of [`crate::fast`], behind the same interface, to measure one against the
//! other (`docs/benchmarks.md`).
//!
//! What the crates do: every element of the events array, through the crate's serde deserializer
//! and one visitor shared by both ([`visit`]), which takes the same fields as the reference
//! parser and hands the same `RawEvent` to the same `TimelineBuilder`. What stays of this crate:
//! the keys around the events (`fast::top`, small), and where the text is cut. Neither crate reads
//! from the middle of an array, so the events array is cut into parts at guessed element starts
//! (`}` `,` `{`, as `fast::chunks` guesses), and each part is handed to the crate as an array of
//! its own (`[` + the part's text + `]`), on all cores. A part is trusted only when the part before
//! it was read whole: the first starts at the real `[`, so every accepted part holds complete
//! elements. The last element, the `]` and the keys after the array are read by the reference
//! parser (a few hundred bytes), which also words the end of the document.
//!
//! Bad or truncated text: where a crate refuses a part, the reference parser reads from that
//! part's start to the end (the events before it kept, its error worded by `fast::replay` with
//! the file's lines and columns), so the outcome is the reference's, at the reference's speed from
//! that part on. A gzip stream that fails (cut short, corrupt, a bomb, a cap on text), or whose
//! text holds no element start within the cap on one event, is read again whole by the
//! reference parser; standard input, which cannot be read again, is read by the reference parser
//! alone. The caps of [`crate::Limits`] hold as in the reference: each part within them on its
//! own (a part stopped at one is read by the reference, which stops there), the parts joined
//! checked again; text after the document is refused as [`crate::tail`] words it.

mod simd;
mod sonic;
mod visit;

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rayon::prelude::*;

use crate::event::{Scalar, TimelineBuilder};
use crate::fast::{
    array::Release,
    chunks::{guess_last, guess_start},
    exact_error, merge, top, Reopen,
};
use crate::limits::Limits;
use crate::simple;
use crate::tail::{self, Stop};
use crate::timeline::Timeline;

/// A document's outcome: `Ok(saw_events)`, or why not (`tail`'s).
type Outcome = tail::Outcome;

/// Which crate reads the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crate {
    /// sonic-rs.
    Sonic,
    /// simd-json.
    SimdJson,
}

/// Bytes of text per part.
const PART: usize = 4 << 20;

/// A scalar from its raw JSON text, as the reference parser (serde_json with
/// `arbitrary_precision`) gives it: numbers as their text (exponents in serde_json's spelling),
/// strings unescaped, anything else `Other`.
pub(crate) fn raw_scalar(raw: Cow<'_, str>) -> Scalar<'_> {
    let b = raw.as_bytes();
    match b.first() {
        Some(b'"') => match raw {
            Cow::Borrowed(r) if !r.contains('\\') => Scalar::Str(Cow::Borrowed(&r[1..r.len() - 1])),
            r => Scalar::Str(Cow::Owned(serde_json::from_str::<String>(&r).unwrap_or_default())),
        },
        Some(b'-' | b'0'..=b'9') if b.iter().any(|&c| c == b'e' || c == b'E') => {
            let n = serde_json::from_str::<serde_json::Number>(&raw).map(|n| n.to_string());
            Scalar::Num(Cow::Owned(n.unwrap_or_default()))
        }
        Some(b'-' | b'0'..=b'9') => Scalar::Num(raw),
        _ => Scalar::Other,
    }
}

thread_local! {
    /// Each thread's copy of the part it reads, and simd-json's buffers, kept between parts: fresh
    /// memory is faulted in page by page.
    static SCRATCH: RefCell<(Vec<u8>, Option<simd_json::Buffers>)> = const { RefCell::new((Vec::new(), None)) };
}

/// Reads the elements `text` (whole elements with the commas between them) into a timeline of
/// their own; `None` when the crate refuses them.
/// Each part is read within `limits` on its own; one stopped at a cap is refused, so that the
/// reference reads it and stops where it would.
fn part(krate: Crate, text: &[u8], limits: &Limits) -> Option<Timeline> {
    SCRATCH.with(|s| {
        let (doc, buffers) = &mut *s.borrow_mut();
        let fill = |doc: &mut Vec<u8>| {
            doc.clear();
            doc.reserve(text.len() + 2);
            doc.push(b'[');
            doc.extend_from_slice(text);
            doc.push(b']');
        };
        fill(doc);
        let mut b = TimelineBuilder::with_limits(*limits);
        let mut context = false;
        let ok = match krate {
            Crate::Sonic => sonic::parse_part(doc, &mut b, &mut context),
            Crate::SimdJson => {
                let buffers = buffers.get_or_insert_with(|| simd_json::Buffers::new(PART));
                simd::parse_part(doc, buffers, &mut b, &mut context)
            }
        };
        // No element at all: `[ , {` in the file; the reference words it.
        if !ok || b.events() == 0 {
            return None;
        }
        if context {
            // launchguard's context event keeps its `args` whole: the reference reads this part.
            fill(doc);
            b = TimelineBuilder::with_limits(*limits);
            simple::parse(&mut serde_json::Deserializer::from_slice(doc), &mut b).ok()?;
        }
        if b.stopped().is_some() {
            return None;
        }
        Some(b.finish())
    })
}

/// The comma before the element start `g` (a guess: only whitespace lies between).
fn comma_before(buf: &[u8], g: usize) -> usize {
    buf[..g].iter().rposition(|&b| b == b',').expect("a guessed start follows a comma")
}

/// The reference parser from `start` (an element start, or just after `[`) to the end of the
/// document, pushing into `builder`, then only whitespace to the end of `buf` (which holds the
/// rest of the text; `buf[0]` is at offset `at` of the text); an error is worded with the file's
/// lines and columns.
fn reference_from(buf: &[u8], start: usize, bare: bool, at: u64, builder: &mut TimelineBuilder) -> Outcome {
    match tail::simple_prefixed(exact_error::prefix(bare), &buf[start..], builder) {
        Ok((saw, end)) => {
            tail::check_tail(&buf[start + end..], at + (start + end) as u64)?;
            Ok(saw)
        }
        // A cap: the builder says which.
        Err(_) if builder.stopped().is_some() => Ok(true),
        Err(e) => {
            let place = exact_error::Place::default().advance(buf, 0, start);
            let e = exact_error::stream(&buf[start..], place, bare, io::empty()).map_or(e, |r| r.error);
            Err(Stop::Json(e))
        }
    }
}

/// Reads a mapped file, letting the pages already parsed leave memory.
pub(crate) fn parse_mapped(
    krate: Crate,
    mapped: &crate::input::Mapped,
    builder: &mut TimelineBuilder,
) -> Outcome {
    let release = |start: usize, end: usize| mapped.release(start, end);
    parse_slice(krate, mapped, PART, &release, builder)
}

/// Reads an in-memory document.
pub(crate) fn parse_slice(
    krate: Crate,
    buf: &[u8],
    part_size: usize,
    release: Release,
    builder: &mut TimelineBuilder,
) -> Outcome {
    match top::walk(buf, 0, top::From::Start, builder) {
        top::Walk::Done(end) => {
            tail::check_tail(&buf[end..], end as u64)?;
            Ok(false)
        }
        top::Walk::Events { content, bare } => events(krate, buf, content, bare, part_size, release, builder),
        top::Walk::Failed { .. } => {
            *builder = TimelineBuilder::with_limits(*builder.limits());
            tail::simple_slice(buf, builder)
        }
    }
}

/// The events array from `content` (just after `[`) to the end of the document.
fn events(
    krate: Crate,
    buf: &[u8],
    content: usize,
    bare: bool,
    part_size: usize,
    release: Release,
    builder: &mut TimelineBuilder,
) -> Outcome {
    let Some(last) = guess_last(buf, content) else {
        return reference_from(buf, content, bare, 0, builder);
    };
    let limits = *builder.limits();
    let n = ((last - content) / part_size.max(1)).max(1);
    let mut starts = vec![content];
    for k in 1..n {
        let nominal = content + (last - content) / n * k;
        match guess_start(buf, nominal.max(starts[starts.len() - 1] + 1)) {
            Some(s) if s < last => starts.push(s),
            _ => break,
        }
    }
    let end = |k: usize| comma_before(buf, starts.get(k + 1).copied().unwrap_or(last));
    let parts: Vec<Option<Timeline>> = (0..starts.len())
        .into_par_iter()
        .map(|k| {
            let t = part(krate, &buf[starts[k]..end(k)], &limits);
            release(starts[k], end(k));
            t
        })
        .collect();
    let mut joined = std::mem::take(builder).finish();
    let failed = parts.iter().position(Option::is_none);
    merge::join(&mut joined, parts.into_iter().map_while(|p| p).collect());
    *builder = TimelineBuilder::resume(joined, limits);
    if builder.stopped().is_some() {
        return Ok(true);
    }
    match failed {
        Some(k) => reference_from(buf, starts[k], bare, 0, builder),
        None => reference_from(buf, last, bare, 0, builder),
    }
}

/// Bytes decompressed per block.
const BLOCK: usize = 1 << 20;
/// Blocks in flight between the threads.
const IN_FLIGHT: usize = 4;

type Block = io::Result<Vec<u8>>;

/// Reads a stream: one thread decompresses, this one hands parts to the crate as they complete.
/// Any failure (bad text, a stream cut short or damaged, a bomb, a cap) reads the file again
/// whole with the reference parser; standard input (no `reopen`) is read by the reference alone.
pub(crate) fn parse_stream(
    krate: Crate,
    reader: Box<dyn Read + Send>,
    reopen: Reopen,
    builder: &mut TimelineBuilder,
) -> Outcome {
    let Some(reopen) = reopen else {
        return tail::simple_stream(reader, builder);
    };
    let fast = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Block>(IN_FLIGHT);
        s.spawn(move || decompress(reader, tx));
        drive(krate, rx, builder)
    });
    match fast {
        Some(outcome) => outcome,
        None => {
            *builder = TimelineBuilder::with_limits(*builder.limits());
            let reader = reopen.text().map_err(|e| Stop::Json(serde_json::Error::io(e)))?;
            tail::simple_stream(reader, builder)
        }
    }
}

fn decompress(mut reader: Box<dyn Read + Send>, tx: SyncSender<Block>) {
    loop {
        let mut block = vec![0; BLOCK];
        let mut filled = 0;
        while filled < BLOCK {
            match reader.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        block.truncate(filled);
        let end = filled < BLOCK;
        if filled > 0 && tx.send(Ok(block)).is_err() {
            return;
        }
        if end {
            return;
        }
    }
}

/// `None` when the reference parser should read the whole stream.
fn drive(krate: Crate, rx: Receiver<Block>, builder: &mut TimelineBuilder) -> Option<Outcome> {
    let limits = *builder.limits();
    // Text held without a cut: past the cap on one event, the reference reads the file.
    let max_event = limits.max_event_bytes;
    let mut buf = Vec::new();
    let mut done = false;
    // Receives one more block; false at the end (or a failure: then `None` is the answer).
    let mut more = |buf: &mut Vec<u8>| -> Option<bool> {
        if done {
            return Some(false);
        }
        match rx.recv() {
            Ok(Ok(block)) => {
                buf.extend_from_slice(&block);
                Some(true)
            }
            Ok(Err(_)) => None,
            Err(_) => {
                done = true;
                Some(false)
            }
        }
    };
    more(&mut buf)?;
    let (content, bare) = loop {
        match top::walk(&buf, 0, top::From::Start, builder) {
            top::Walk::Events { content, bare } => break (content, bare),
            top::Walk::Failed { eof: true, .. } if more(&mut buf)? => {}
            _ => return None,
        }
        if buf.len() as u64 > max_event {
            return None;
        }
    };
    // The parts joined as they are read, the caps checked on what is joined.
    let mut joined = std::mem::take(builder).finish();
    let mut pos = content;
    // Lines and column of `buf[0]`, and its offset in the text.
    let mut place = exact_error::Place::default();
    let mut drained: u64 = 0;
    // Bytes already searched for a cut without one (see `fast::gzip_par`).
    let mut searched: usize = 0;
    loop {
        while buf.len() < pos + PART && more(&mut buf)? {}
        if buf.len() < pos + PART {
            break; // the end of the stream: the rest is the tail
        }
        let Some(g) = guess_last(&buf, pos.max(searched.saturating_sub(4096))).filter(|&g| g > pos) else {
            if (buf.len() - pos) as u64 > max_event {
                return None;
            }
            searched = buf.len();
            if !more(&mut buf)? {
                break;
            }
            continue;
        };
        let t = part(krate, &buf[pos..comma_before(&buf, g)], &limits)?;
        merge::join(&mut joined, vec![t]);
        if joined.events > limits.max_events || joined.strings.len() as u64 > limits.max_names {
            return None;
        }
        place = place.advance(&buf, 0, g);
        drained += g as u64;
        buf.drain(..g);
        pos = 0;
        searched = 0;
    }
    *builder = TimelineBuilder::resume(joined, limits);
    if builder.stopped().is_some() {
        return None;
    }
    // The tail: the last elements, the `]`, the keys after it and the rest of the stream.
    if (buf.len() - pos) as u64 > max_event {
        return None;
    }
    match tail::simple_prefixed(exact_error::prefix(bare), &buf[pos..], builder) {
        Ok((saw, end)) => {
            Some(tail::check_tail(&buf[pos + end..], drained + (pos + end) as u64).map(|()| saw))
        }
        Err(_) if builder.stopped().is_some() => None,
        Err(e) => {
            let place = place.advance(&buf, 0, pos);
            let e = exact_error::stream(&buf[pos..], place, bare, io::empty()).map_or(e, |r| r.error);
            Some(Err(Stop::Json(e)))
        }
    }
}

#[cfg(test)]
mod tests;
