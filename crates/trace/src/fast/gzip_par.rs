//! Gzip input on several cores. One thread decompresses; this one cuts the text into parts at
//! guessed element starts (`}` `,` `{`, as [`super::chunks`] guesses) as it arrives, and the parts
//! are parsed on all cores while decompression goes on. With a single parsing thread beside the
//! decompressor ([`super::stream`]), the parse was the slower of the two: zlib-rs inflates a
//! Kineto trace at about 2.8 GB/s of text on one core, the grammar reads about 1.7.
//!
//! A part is trusted only when the part before it, itself trusted, ends exactly where it starts
//! (the first starts at the real `[`), as in `chunks`. Anything else — a guess that was not an
//! element start, invalid or truncated text, a decoder error, a second events array — leaves the
//! file to [`super::stream`], which reads it again from the start and words the outcome exactly:
//! a damaged gzip file costs two reads, an intact one is read at the speed of decompression.

use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};

use super::array::{self, After, End, Run};
use super::stream::{self, Block, IN_FLIGHT};
use super::{element_level, merge, top, Outcome};
use crate::event::TimelineBuilder;
use crate::timeline::Timeline;

/// Bytes of text per part, about.
const PART: usize = 2 << 20;

/// Reads a gzip stream; `path` is opened again when the sequential reader has to read it.
pub(crate) fn parse_gzip(
    reader: Box<dyn Read + Send>,
    path: &Path,
    builder: &mut TimelineBuilder,
) -> Outcome {
    if rayon::current_num_threads() < 2 {
        return stream::parse_gzip(reader, path, builder);
    }
    if let Some(outcome) = parallel(reader, builder) {
        return outcome;
    }
    *builder = TimelineBuilder::new();
    match crate::input::open(path) {
        Ok((crate::input::Input::Gzip(r), _)) => stream::parse_gzip(r, path, builder),
        Ok(_) => Err(serde_json::Error::io(io::Error::other("the file changed while it was read"))),
        Err(e) => Err(serde_json::Error::io(io::Error::other(e.to_string()))),
    }
}

/// The last guessed element start at or after `from`.
fn guess_last(buf: &[u8], from: usize) -> Option<usize> {
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

/// `None` when the sequential reader should read the stream again.
fn parallel(reader: Box<dyn Read + Send>, builder: &mut TimelineBuilder) -> Option<Outcome> {
    std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Block>(IN_FLIGHT);
        let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
        s.spawn(move || stream::decompress(reader, tx, recycle_rx));
        let mut done = false;
        // Receives one more block: false at the end of the stream, `None` on a decoder error.
        let mut more = |window: &mut Vec<u8>| -> Option<bool> {
            if done {
                return Some(false);
            }
            match rx.recv() {
                Ok(Ok(block)) => {
                    window.extend_from_slice(&block);
                    let _ = recycle_tx.try_send(block);
                    Some(true)
                }
                Ok(Err(_)) => None,
                Err(_) => {
                    done = true;
                    Some(false)
                }
            }
        };
        let mut window = Vec::new();
        more(&mut window)?;
        let (content, bare) = loop {
            match top::walk(&window, 0, top::From::Start, builder) {
                top::Walk::Events { content, bare } => break (content, bare),
                top::Walk::Failed { eof: true, .. } if more(&mut window)? => {}
                _ => return None,
            }
        };
        let level = element_level(bare);
        let threads = rayon::current_num_threads();
        let (res_tx, res_rx) = channel::<(usize, Run, usize, Timeline)>();
        let mut results: Vec<Option<(Run, usize, Timeline)>> = Vec::new();
        let mut pos = content;
        let mut after = After::Open;
        let mut in_flight = 0;
        // Bytes of the window already searched for a cut without one: only what arrives after
        // them (and a little before, for a cut across the joint) is searched again, so that text
        // without element starts (a bare array of numbers) is not searched over and over.
        let mut searched: usize = 0;
        // Whether the stream ended normally (else a decoder error was met).
        let ended = rayon::in_place_scope(|scope| loop {
            while window.len() < pos + PART {
                match more(&mut window) {
                    Some(true) => {}
                    Some(false) => return true,
                    None => return false,
                }
            }
            let Some(g) = guess_last(&window, (pos + PART / 2).max(searched.saturating_sub(4096))) else {
                searched = window.len();
                match more(&mut window) {
                    Some(true) => continue,
                    Some(false) => return true,
                    None => return false,
                }
            };
            // The part holds the `{` at `g`, so that its run lands there.
            let rest = window[g..].to_vec();
            let mut part = std::mem::replace(&mut window, rest);
            part.truncate(g + 1);
            let (k, first, from) = (results.len(), pos, after);
            results.push(None);
            let res_tx = res_tx.clone();
            scope.spawn(move |_| {
                let mut b = TimelineBuilder::new();
                let run = array::run(&part, first, from, g, level, None, &mut b);
                let _ = res_tx.send((k, run, g, b.finish()));
            });
            in_flight += 1;
            while in_flight >= 2 * threads {
                let (k, run, stop, t) = res_rx.recv().expect("a part's result");
                results[k] = Some((run, stop, t));
                in_flight -= 1;
            }
            pos = 0;
            after = After::Comma;
            searched = 0;
        });
        drop(res_tx);
        for (k, run, stop, t) in res_rx.iter() {
            results[k] = Some((run, stop, t));
        }
        if !ended {
            return None;
        }
        let mut parts = Vec::with_capacity(results.len() + 1);
        for (run, stop, t) in results.into_iter().map(|r| r.expect("every part answered")) {
            // Trusted only when it ends exactly at the next part's first element.
            if run.end != End::Landed(stop) {
                return None;
            }
            parts.push(t);
        }
        // The last part, the `]` and the keys after the array.
        let mut b = TimelineBuilder::new();
        let run = array::run(&window, pos, after, usize::MAX, level, None, &mut b);
        let End::Closed(close) = run.end else { return None };
        parts.push(b.finish());
        let mut joined = std::mem::take(builder).finish();
        merge::join(&mut joined, parts);
        *builder = TimelineBuilder::from(joined);
        if bare {
            return Some(Ok(true));
        }
        match top::walk(&window, close + 1, top::From::AfterEvents, builder) {
            top::Walk::Done => Some(Ok(true)),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::fast::tests::KINETO;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// The Kineto document with its events repeated until it spans several parts.
    fn large() -> Vec<u8> {
        let open = KINETO.find("\"traceEvents\": [").unwrap() + 16;
        let close = KINETO.rfind("\n  ],").unwrap();
        let events = &KINETO[open..close];
        let copies = 3 * PART / events.len() + 1;
        let mut doc = KINETO[..open].to_string();
        doc.push_str(&vec![events; copies].join(","));
        doc.push_str(&KINETO[close..]);
        doc.into_bytes()
    }

    fn reference(doc: &[u8]) -> String {
        let mut b = TimelineBuilder::new();
        crate::simple::parse(&mut serde_json::Deserializer::from_slice(doc), &mut b).unwrap();
        b.finish().canonical_text()
    }

    #[test]
    fn an_intact_stream_is_read_in_parallel_parts() {
        let doc = large();
        let reader = Box::new(flate2::read::MultiGzDecoder::new(io::Cursor::new(gzip(&doc))));
        let mut b = TimelineBuilder::new();
        let outcome = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| parallel(reader, &mut b));
        assert!(matches!(outcome, Some(Ok(true))), "{outcome:?}");
        assert_eq!(b.finish().canonical_text(), reference(&doc));
    }

    #[test]
    fn text_without_element_starts_is_searched_once() {
        // 40 MB of numbers: no `}, {` anywhere; searching the whole window again for each block
        // would take minutes.
        let mut doc = b"[".to_vec();
        doc.extend(b"1, ".repeat(40 << 20 >> 2));
        doc.extend(b"1]");
        let reader = Box::new(flate2::read::MultiGzDecoder::new(io::Cursor::new(gzip(&doc))));
        let start = std::time::Instant::now();
        let mut b = TimelineBuilder::new();
        assert!(matches!(parallel(reader, &mut b), Some(Ok(true))));
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        assert_eq!(b.events(), (40 << 20 >> 2) + 1);
    }

    #[test]
    fn a_cut_stream_is_left_to_the_sequential_reader() {
        let doc = large();
        let gz = gzip(&doc[..doc.len() - 100]);
        let reader = Box::new(flate2::read::MultiGzDecoder::new(io::Cursor::new(gz)));
        assert!(parallel(reader, &mut TimelineBuilder::new()).is_none());
    }
}
