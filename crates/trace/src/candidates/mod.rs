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
//! that part on. A gzip stream that fails (cut short, corrupt, a bomb) is read again whole by the
//! reference parser.

mod simd;
mod sonic;
mod visit;

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rayon::prelude::*;

use crate::event::{Scalar, TimelineBuilder};
use crate::fast::{array::Release, chunks::guess_start, merge, replay, top, Outcome};
use crate::simple;
use crate::timeline::Timeline;

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
fn part(krate: Crate, text: &[u8]) -> Option<Timeline> {
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
        let mut b = TimelineBuilder::new();
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
            b = TimelineBuilder::new();
            simple::parse(&mut serde_json::Deserializer::from_slice(doc), &mut b).ok()?;
        }
        Some(b.finish())
    })
}

/// The comma before the element start `g` (a guess: only whitespace lies between).
fn comma_before(buf: &[u8], g: usize) -> usize {
    buf[..g].iter().rposition(|&b| b == b',').expect("a guessed start follows a comma")
}

/// The last guessed element start after `from`.
fn guess_last(buf: &[u8], from: usize) -> Option<usize> {
    let ws = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let mut end = buf.len();
    while let Some(off) = memchr::memrchr(b',', &buf[from..end]) {
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

/// The reference parser from `start` (an element start, or just after `[`) to the end of the
/// document, pushing into `builder`; an error is worded with the file's lines and columns.
fn reference_from(buf: &[u8], start: usize, bare: bool, builder: &mut TimelineBuilder) -> Outcome {
    let head = io::Cursor::new(replay::prefix(bare)).chain(&buf[start..]);
    let mut de = serde_json::Deserializer::from_reader(io::BufReader::with_capacity(1 << 16, head));
    match simple::parse(&mut de, builder) {
        Ok(saw) => Ok(saw),
        Err(e) => {
            let place = replay::Place::default().advance(buf, 0, start);
            Err(replay::stream(&buf[start..], place, bare, io::empty()).unwrap_or(e))
        }
    }
}

/// Reads a mapped file, letting the pages already parsed leave memory.
pub(crate) fn parse_mapped(krate: Crate, map: &memmap2::Mmap, builder: &mut TimelineBuilder) -> Outcome {
    const PAGE: usize = 4096;
    let release = |start: usize, end: usize| {
        let (from, to) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if to > from {
            // SAFETY: as in `fast::parse_mapped`: the map is read-only and private, dropped pages
            // read back the file's bytes.
            let _ =
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from) };
        }
    };
    parse_slice(krate, map, PART, &release, builder)
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
        top::Walk::Done => Ok(false),
        top::Walk::Events { content, bare } => events(krate, buf, content, bare, part_size, release, builder),
        top::Walk::Failed { .. } => {
            *builder = TimelineBuilder::new();
            simple::parse(&mut serde_json::Deserializer::from_slice(buf), builder)
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
        return reference_from(buf, content, bare, builder);
    };
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
            let t = part(krate, &buf[starts[k]..end(k)]);
            release(starts[k], end(k));
            t
        })
        .collect();
    let mut joined = std::mem::take(builder).finish();
    let failed = parts.iter().position(Option::is_none);
    merge::join(&mut joined, parts.into_iter().map_while(|p| p).collect());
    *builder = TimelineBuilder::from(joined);
    match failed {
        Some(k) => reference_from(buf, starts[k], bare, builder),
        None => reference_from(buf, last, bare, builder),
    }
}

/// Bytes decompressed per block.
const BLOCK: usize = 1 << 20;
/// Blocks in flight between the threads.
const IN_FLIGHT: usize = 4;

type Block = io::Result<Vec<u8>>;

/// Reads a gzip stream: one thread decompresses, this one hands parts to the crate as they
/// complete. Any failure (bad text, a stream cut short, a bomb) reads the file again whole with
/// the reference parser.
pub(crate) fn parse_gzip(
    krate: Crate,
    reader: Box<dyn Read + Send>,
    path: &Path,
    builder: &mut TimelineBuilder,
) -> Outcome {
    let fast = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Block>(IN_FLIGHT);
        s.spawn(move || decompress(reader, tx));
        drive(krate, rx, builder)
    });
    match fast {
        Some(outcome) => outcome,
        None => {
            *builder = TimelineBuilder::new();
            let reader = match crate::input::open(path) {
                Ok((crate::input::Input::Gzip(r), _)) => r,
                Ok(_) => {
                    return Err(serde_json::Error::io(io::Error::other("the file changed while it was read")))
                }
                Err(e) => return Err(serde_json::Error::io(io::Error::other(e.to_string()))),
            };
            let mut de = serde_json::Deserializer::from_reader(io::BufReader::with_capacity(1 << 16, reader));
            simple::parse(&mut de, builder)
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
            top::Walk::Failed { .. } => return None,
            top::Walk::Done => return Some(Ok(false)),
        }
    };
    let mut parts = Vec::new();
    let mut pos = content;
    // Lines and column of `buf[0]`.
    let mut place = replay::Place::default();
    // Bytes already searched for a cut without one (see `fast::gzip_par`).
    let mut searched: usize = 0;
    loop {
        while buf.len() < pos + PART && more(&mut buf)? {}
        if buf.len() < pos + PART {
            break; // the end of the stream: the rest is the tail
        }
        let Some(g) = guess_last(&buf, pos.max(searched.saturating_sub(4096))).filter(|&g| g > pos) else {
            searched = buf.len();
            if !more(&mut buf)? {
                break;
            }
            continue;
        };
        parts.push(part(krate, &buf[pos..comma_before(&buf, g)])?);
        place = place.advance(&buf, 0, g);
        buf.drain(..g);
        pos = 0;
        searched = 0;
    }
    let mut joined = std::mem::take(builder).finish();
    merge::join(&mut joined, parts);
    *builder = TimelineBuilder::from(joined);
    // The tail: the last elements, the `]` and the keys after it.
    let head = io::Cursor::new(replay::prefix(bare)).chain(&buf[pos..]);
    let mut de = serde_json::Deserializer::from_reader(io::BufReader::with_capacity(1 << 16, head));
    match simple::parse(&mut de, builder) {
        Ok(saw) => Some(Ok(saw)),
        Err(e) => {
            let place = place.advance(&buf, 0, pos);
            Some(Err(replay::stream(&buf[pos..], place, bare, io::empty()).unwrap_or(e)))
        }
    }
}

#[cfg(test)]
mod tests;
