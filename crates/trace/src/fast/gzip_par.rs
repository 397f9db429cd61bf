//! A gzip file on several cores. One thread decompresses and cuts the text into parts at guessed
//! element starts (`}` `,` `{`, as [`super::chunks`] guesses) as it arrives; the parts are parsed
//! on all cores while decompression goes on. With a single parsing thread beside the decompressor
//! ([`super::stream`]), the parse was the slower of the two: on one core zlib-rs inflates a
//! Kineto trace two to three times as fast as the grammar reads it (4.8 against 1.7 GB/s of text on
//! the development machine's EPYC).
//!
//! Only a file takes this path: it reads the text a second time whenever it is not sure of the
//! outcome, so standard input, which cannot be read again, keeps the sequential reader. A part is
//! trusted only when the part before it, itself trusted, ends exactly where it starts (the first
//! starts at the real `[`), as in `chunks`; it is parsed within the caps of [`crate::Limits`]
//! on its own, and the parts are joined in file order a few at a time, the caps checked again on
//! what is joined. Anything else leaves the file to [`super::stream`], which reads it again from
//! its start and words the outcome exactly as it does for standard input: a guess that was not an
//! element start, invalid or truncated text, a decoder error (a damaged member, trailing garbage,
//! a gzip bomb, the cap on text), any cap reached, text after the document, a second events
//! array. A damaged or hostile file costs two reads; an intact one is read at the speed of
//! decompression.
//!
//! Memory stays bounded, though not to the sequential reader's figure. Text is held from a part's
//! start without a cut (one huge value, a bare array of numbers) up to [`HOLD`] or half the cap
//! on one event, whichever is less, before the file is left to the sequential reader; since every
//! element lies inside its part or the part before it, no element this path reads is larger than
//! the cap on one event, which the sequential reader would not have refused. Up to about six
//! parts per thread are alive at once (being parsed, waiting, and kept for reuse), each as long as
//! the text between two cuts: a few MiB for a real trace (t300.json.gz peaks at 48–62 MB on 16
//! cores), but up to the hold for elements tens of MiB long. A review measured 1.0–1.1 GB on 8
//! to 128 threads for a file of 60 MiB elements, against 255 MB read sequentially: the single
//! decompressing thread, not the count of threads, limits the parts in flight.

use std::io::{self, Read};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;

use rayon::prelude::*;

use super::array::{self, After, End};
use super::chunks::guess_last;
use super::stream::{self, Again};
use super::{element_level, merge, top};
use crate::event::TimelineBuilder;
use crate::gunzip::{self, Pending};
use crate::limits::Limits;
use crate::tail::{self, Stop};
use crate::timeline::Timeline;

/// The most text held from a part's start while no element start is found in it.
pub(crate) const HOLD: usize = 64 << 20;

/// Reads a stream of JSON text decompressed from a file, in blocks of `block` bytes; `again`
/// opens the file again from its start.
pub(crate) fn parse(
    reader: Box<dyn Read + Send>,
    block: usize,
    again: Again,
    builder: &mut TimelineBuilder,
) -> tail::Outcome {
    let limits = *builder.limits();
    let hold = usize::try_from(limits.max_event_bytes / 2).unwrap_or(usize::MAX).min(HOLD);
    // Parts that cannot be cut small enough for the cap on one event to hold in them.
    if hold < 2 * part_size(block, 1) {
        return stream::parse_stream(reader, block, Some(again), false, builder);
    }
    // On many cores the first member's CRC-32 is summed by the parsing threads rather than by
    // the decompressing one, which sets the pace there: the sum is 18 of the 57 ms it takes to
    // inflate a 300 MB trace on the development machine's EPYC ([`crate::gunzip`]). On few, the
    // parse sets it, and summing parts already read from memory once made it slower (t300.json.gz
    // on 2 cores: 128 against 118 ms, the median of 10 paired runs).
    let unchecked = if rayon::current_num_threads() >= PACED_BY_INFLATE { (again.unchecked)() } else { None };
    let (reader, first) = match unchecked {
        Some(u) => (u.text, Some(u.first)),
        None => (reader, None),
    };
    if let Some(outcome) = parallel(reader, block, None, hold, first, builder) {
        return outcome;
    }
    *builder = TimelineBuilder::with_limits(limits);
    let reader = again.text().map_err(|e| Stop::Json(serde_json::Error::io(e)))?;
    stream::parse_stream(reader, block, Some(again), false, builder)
}

/// Threads from which the decompressing thread, not the parse, sets the pace: parts are one
/// block long rather than two ([`part_size`]), and the first gzip member's CRC-32 is summed by
/// the parsing threads rather than by the decompressing one ([`parse`]).
pub(crate) const PACED_BY_INFLATE: usize = 8;

/// How much text a part holds, for blocks of `block` bytes read on `threads` threads. On few
/// cores the parse sets the pace, and parts of two blocks (2 MiB for a file's blocks of 1 MiB)
/// cost less for each byte. On many the decompressing thread sets it, and the read ends with the
/// parse of the parts still in flight when decompression is done: parts of one block halve that
/// tail (5.3–5.9 to 2.7 ms on 16 cores of H200 hosts, 2–4% of a 300 MB read).
fn part_size(block: usize, threads: usize) -> usize {
    let blocks = if threads >= PACED_BY_INFLATE { 1 } else { 2 };
    block.saturating_mul(blocks).max(2)
}

/// Text at the start of a buffer that may be longer: the buffers go round between the cutting
/// thread and the parsers and keep what was written in them, so that decompressing into one again
/// needs no zeroing first.
struct Text {
    buf: Vec<u8>,
    len: usize,
    /// The bytes of the text that are the reader's to sum for the first gzip member's CRC-32: its
    /// own (not the byte it shares with the part before it), up to the member's end; none when
    /// the decoder checks the member itself.
    sum: Range<usize>,
}

impl Text {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// What the cutting thread hands over.
enum Cut {
    /// Text from an element start (or the file's start) up to and with the `{` of the next
    /// guessed element start, with which the next part starts.
    Part(Text),
    /// The rest of the text, to the end of the stream.
    Last(Text),
    /// The stream failed (a decoder error, a cap on text, a bomb), or no element start was found
    /// in the text it may hold.
    Failed,
}

/// Reads up to `block` more bytes onto `window`: `Ok(false)` once the stream has ended. Only
/// bytes of the buffer never written before are zeroed: on all cores the cutting thread sets the
/// pace, and zeroing every block before inflating into it had been a fifth of its time.
fn read_block(reader: &mut dyn Read, window: &mut Text, block: usize) -> io::Result<bool> {
    let end = window.len + block;
    if window.buf.len() < end {
        let more = end - window.buf.len();
        window.buf.try_reserve(more).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        window.buf.resize(end, 0);
    }
    loop {
        if window.len == end {
            return Ok(true);
        }
        match reader.read(&mut window.buf[window.len..end]) {
            Ok(0) => return Ok(false),
            Ok(n) => window.len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What the cutting thread is told once the reader knows how many threads parse.
struct Setup {
    /// How long its parts are.
    part: usize,
    /// Where they go.
    tx: SyncSender<Cut>,
    /// Where parsed parts' buffers come back.
    recycle: Receiver<Vec<u8>>,
}

/// The cutting thread: decompresses, and cuts parts of about `part` bytes (from its [`Setup`])
/// at guessed element starts, none longer than `hold`. It decompresses the first block before
/// it is set up: starting the thread pool took 1.2 ms on 16 cores, time decompression need not
/// wait for.
fn cut(
    mut reader: Box<dyn Read + Send>,
    block: usize,
    hold: usize,
    first: Option<Pending>,
    setup: Receiver<Setup>,
    abandoned: Arc<AtomicBool>,
) {
    // Room for parts of two blocks, the longest.
    let mut window = Text { buf: Vec::with_capacity(4 * block), len: 0, sum: 0..0 };
    // Where the window starts in the text, and where its own bytes start in it.
    let (mut base, mut own) = (0u64, 0);
    // The bytes of the window to sum: up to the first member's end, once the decoder has read
    // its trailer (on this thread, so before it inflated a byte past it).
    let sum = |window: &Text, base: u64, own: usize| match &first {
        None => 0..0,
        Some(first) => {
            let end = first.get().map_or(u64::MAX, |f| f.len).saturating_sub(base);
            own..usize::try_from(end).unwrap_or(usize::MAX).clamp(own, window.len)
        }
    };
    let first = read_block(&mut reader, &mut window, block);
    let Ok(Setup { part, tx, recycle }) = setup.recv() else { return };
    let fresh = || Text { buf: Vec::with_capacity(part + 2 * block), len: 0, sum: 0..0 };
    let mut ended = match first {
        Ok(more) => !more,
        Err(_) => {
            let _ = tx.send(Cut::Failed);
            return;
        }
    };
    // Bytes of the window already searched for a cut without one: only what arrives after them
    // (and a little before, for a cut across the joint) is searched again, so that text without
    // element starts (a bare array of numbers) is not searched over and over.
    let mut searched: usize = 0;
    let mut want = part;
    loop {
        while window.len < want && !ended {
            if abandoned.load(Ordering::Relaxed) {
                return;
            }
            match read_block(&mut reader, &mut window, block) {
                Ok(more) => ended = !more,
                Err(_) => {
                    let _ = tx.send(Cut::Failed);
                    return;
                }
            }
            if window.len > hold {
                let _ = tx.send(Cut::Failed);
                return;
            }
        }
        if ended {
            window.sum = sum(&window, base, own);
            let _ = tx.send(Cut::Last(window));
            return;
        }
        match guess_last(window.bytes(), (part / 2).max(searched.saturating_sub(4096))) {
            Some(g) => {
                // The part holds the `{` at `g`, so that its run lands there.
                let mut rest =
                    recycle.try_recv().map(|buf| Text { buf, len: 0, sum: 0..0 }).unwrap_or_else(|_| fresh());
                let tail = &window.bytes()[g..];
                if rest.buf.len() < tail.len() {
                    rest.buf.resize(tail.len(), 0);
                }
                rest.buf[..tail.len()].copy_from_slice(tail);
                rest.len = tail.len();
                let mut done = std::mem::replace(&mut window, rest);
                done.len = g + 1;
                done.sum = sum(&done, base, own);
                (base, own) = (base + g as u64, 1);
                if tx.send(Cut::Part(done)).is_err() {
                    return;
                }
                searched = 0;
                want = part;
            }
            None => {
                searched = window.len;
                want = window.len + 1;
            }
        }
    }
}

/// The cutting thread, seen from the reader: its parts, and the thread itself. When the reader
/// leaves (with the answer, or to read again), the thread is told to stop, its channels closed,
/// and the thread joined: it stops at its next block (a blocked send fails at once, and so does
/// the wait for its setup), so the wait is at most one block, and no thread outlives the read
/// (nor holds the file open past it).
struct Cutter {
    setup: Option<SyncSender<Setup>>,
    rx: Option<Receiver<Cut>>,
    abandoned: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Cutter {
    /// The next cut; a thread that ended without one failed.
    fn recv(&self) -> Cut {
        self.rx.as_ref().and_then(|rx| rx.recv().ok()).unwrap_or(Cut::Failed)
    }

    /// A cut already made, if any.
    fn try_recv(&self) -> Option<Cut> {
        match self.rx.as_ref()?.try_recv() {
            Ok(c) => Some(c),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Cut::Failed),
        }
    }
}

impl Drop for Cutter {
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
        drop(self.setup.take());
        drop(self.rx.take());
        if let Some(thread) = self.thread.take() {
            // A panic there has already been reported; the reader's answer stands.
            let _ = thread.join();
        }
    }
}

/// A part to parse: its text, where its elements start, and whether it is the last.
struct Part {
    text: Text,
    start: usize,
    after: After,
    last: bool,
}

/// The caps checked again on the parts joined so far (each part was read within them alone).
fn past_caps(t: &Timeline, limits: &Limits) -> bool {
    t.events > limits.max_events || t.strings.len() as u64 > limits.max_names
}

/// The CRC-32 of the text summed so far, in order.
#[derive(Default)]
struct Sum {
    crc: u32,
    len: u64,
}

impl Sum {
    /// Adds `bytes`'s CRC-32, `crc`, after what was summed.
    fn add(&mut self, crc: u32, bytes: usize) {
        self.crc = gunzip::combine(self.crc, crc, bytes as u64);
        self.len += bytes as u64;
    }

    /// Sums `text`'s bytes to sum.
    fn text(&mut self, text: &Text) {
        let bytes = &text.bytes()[text.sum.clone()];
        self.add(gunzip::crc32(0, bytes), bytes.len());
    }
}

/// `None` when the sequential reader should read the file again. Parts of `part` bytes, else
/// as [`part_size`] gives for the threads of the pool. `first`: where the decoder leaves the
/// first gzip member's check, when it leaves it to this reader.
fn parallel(
    reader: Box<dyn Read + Send>,
    block: usize,
    part: Option<usize>,
    hold: usize,
    first: Option<Pending>,
    builder: &mut TimelineBuilder,
) -> Option<tail::Outcome> {
    let limits = *builder.limits();
    let (setup_tx, setup_rx) = sync_channel::<Setup>(1);
    let abandoned = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&abandoned);
    // Not one of rayon's, so waiting on it cannot starve the pool (traces of several ranks are
    // read on the pool's threads).
    let pending = first.clone();
    let thread = std::thread::spawn(move || cut(reader, block, hold, pending, setup_rx, flag));
    let mut cutter = Cutter { setup: Some(setup_tx), rx: None, abandoned, thread: Some(thread) };
    let threads = rayon::current_num_threads();
    // One thread parses no faster than the sequential reader, which reads the file again.
    if threads < 2 {
        return None;
    }
    let part = part.unwrap_or_else(|| part_size(block, threads));
    let (tx, rx) = sync_channel::<Cut>(2 * threads);
    let (recycle_tx, recycle) = sync_channel::<Vec<u8>>(2 * threads);
    cutter.rx = Some(rx);
    cutter.setup.as_ref().and_then(|s| s.send(Setup { part, tx, recycle }).ok())?;
    let recv = || cutter.recv();

    // The keys before the events: the first parts, put together until they hold the `[`.
    let mut head: Vec<u8> = Vec::new();
    let mut sum = Sum::default();
    let (content, bare, last) = loop {
        let (p, last) = match recv() {
            Cut::Part(p) => (p, false),
            Cut::Last(p) => (p, true),
            Cut::Failed => return None,
        };
        // The parts overlap by the `{` that ends one and starts the next.
        head.pop();
        head.extend_from_slice(p.bytes());
        sum.text(&p);
        if head.len() > hold {
            return None;
        }
        match top::walk(&head, 0, top::From::Start, builder) {
            top::Walk::Events { content, bare } => break (content, bare, last),
            top::Walk::Failed { eof: true, .. } if !last => {}
            _ => return None,
        }
    };
    let level = element_level(bare);
    let mut joined = std::mem::take(builder).finish();
    let len = head.len();
    // Summed above.
    let text = Text { buf: head, len, sum: 0..0 };
    let mut batch = vec![Part { text, start: content, after: After::Open, last }];
    loop {
        // As many parts as are ready, up to two per thread; at least one.
        while !batch.last().is_some_and(|p| p.last) && batch.len() < 2 * threads {
            let cut = if batch.is_empty() {
                recv()
            } else {
                match cutter.try_recv() {
                    Some(c) => c,
                    None => break,
                }
            };
            let (text, last) = match cut {
                Cut::Part(p) => (p, false),
                Cut::Last(p) => (p, true),
                Cut::Failed => return None,
            };
            batch.push(Part { text, start: 0, after: After::Comma, last });
        }
        // The last batch: each buffer but the last part's (read again after the array) is freed
        // by the thread that parsed it, beside the parse of the others, rather than all of them
        // by this thread once they are done (0.7–2.5 ms on 16 cores of H200 hosts).
        let last_batch = batch.last().is_some_and(|p| p.last);
        let runs: Vec<_> = batch
            .par_iter_mut()
            .map(|p| {
                let mut b = TimelineBuilder::with_limits(limits);
                let stop = if p.last { usize::MAX } else { p.text.len - 1 };
                let run = array::run(p.text.bytes(), p.start, p.after, stop, level, None, &mut b);
                let sum = &p.text.bytes()[p.text.sum.clone()];
                let crc = (gunzip::crc32(0, sum), sum.len());
                if last_batch && !p.last {
                    drop(std::mem::take(&mut p.text.buf));
                }
                (run, b.stopped(), b.finish(), crc)
            })
            .collect();
        let mut parts = Vec::with_capacity(runs.len());
        let mut close = None;
        for (p, (run, stopped, t, (crc, bytes))) in batch.iter().zip(runs) {
            sum.add(crc, bytes);
            // A part stopped at a cap, or out of memory: the sequential reader says which, where.
            if stopped.is_some() {
                return None;
            }
            match run.end {
                // Trusted only when it ends exactly at the next part's first element.
                End::Landed(q) if !p.last && q == p.text.len - 1 => {}
                End::Closed(c) if p.last => close = Some(c),
                _ => return None,
            }
            parts.push(t);
        }
        merge::join(&mut joined, parts);
        if past_caps(&joined, &limits) {
            return None;
        }
        // A first member whose text is summed whole is checked at once: on a damaged file of
        // several members, the rest need not be read before the sequential reader words it.
        if let Some(f) = first.as_ref().and_then(|first| first.get()) {
            if sum.len >= f.len && (sum.crc, sum.len) != (f.crc, f.len) {
                return None;
            }
        }
        if let Some(close) = close {
            // The stream has ended, so the decoder has read the first member's trailer. A check
            // that fails (or a first member the sums do not cover) is worded by the sequential
            // reader.
            if let Some(first) = &first {
                let f = first.get()?;
                if (sum.crc, sum.len) != (f.crc, f.len) {
                    return None;
                }
            }
            let text = batch.pop().expect("the last part").text;
            *builder = TimelineBuilder::resume(joined, limits);
            if builder.stopped().is_some() {
                return None;
            }
            return finish(text.bytes(), close, bare, builder);
        }
        for p in batch.drain(..) {
            let _ = recycle_tx.try_send(p.text.buf);
        }
    }
}

/// The end of the document after the events array closed at `close` of the last part (which
/// holds the rest of the stream): the keys after it, then nothing but whitespace.
fn finish(text: &[u8], close: usize, bare: bool, builder: &mut TimelineBuilder) -> Option<tail::Outcome> {
    let end = if bare {
        close + 1
    } else {
        match top::walk(text, close + 1, top::From::AfterEvents, builder) {
            top::Walk::Done(end) => end,
            // A second events array, bad or cut text after the array.
            _ => return None,
        }
    };
    // Text after the document: the sequential reader words it, with its offset.
    tail::check_tail(&text[end..], 0).ok()?;
    Some(Ok(true))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::atomic::AtomicUsize;

    use std::path::Path;

    use super::*;
    use crate::fast::tests::Slow;
    use crate::input::{self, Input};
    use crate::{Cap, Parser, SourceInfo};

    /// Blocks of 64 KiB: parts of 128 KiB, so that a few MB of text make dozens of parts.
    const BLOCK: usize = 64 << 10;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn pool() -> rayon::ThreadPool {
        pool_of(2)
    }

    fn pool_of(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    /// A kernel on device `device` named `name`.
    fn kernel(k: usize, name: &str, device: usize) -> String {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{device},"tid":7,"ts":{},"dur":1.5,"args":{{"device":{device},"stream":7,"correlation":{k}}}}}"#,
            1000 + 2 * k
        )
    }

    /// A Kineto-like document of `events` (keys before and after the array).
    fn doc(events: &[String]) -> Vec<u8> {
        format!(
            "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0}}, {{\"id\": 1}}],\n\"traceEvents\": [\n{}\n], \"traceName\": \"t\", \"baseTimeNanoseconds\": 1700000000000000000}}\n",
            events.join(",\n")
        )
        .into_bytes()
    }

    /// `n` kernels of one name on device 0.
    fn kernels(n: usize) -> Vec<String> {
        (0..n).map(|k| kernel(k, "void gemm<128>(float const*)", 0)).collect()
    }

    fn stream(gz: &[u8], limits: &Limits) -> Result<Box<dyn Read + Send>, String> {
        let path = std::path::Path::new("t.json.gz");
        match input::gzip_stream(io::Cursor::new(gz.to_vec()), Default::default(), path, limits) {
            Ok(Input::Stream(r)) => Ok(r),
            Ok(Input::Plain(_)) => unreachable!("gzip is streamed"),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The text of `gz` as this path reads it: the first member's CRC-32 left to it.
    fn unchecked(gz: &[u8], limits: &Limits) -> (Box<dyn Read + Send>, Option<Pending>) {
        let u = input::gzip_unchecked(io::Cursor::new(gz.to_vec()), Path::new("t.json.gz"), limits).unwrap();
        (u.text, Some(u.first))
    }

    /// How a read of `gz` ended: the timeline and truncation, or the error. `file`: as a file is
    /// read (this path, on two threads, able to read it again); else as standard input is (the
    /// sequential reader alone), in blocks of `block` bytes (parts of two blocks).
    fn read_in(
        gz: &[u8],
        parser: Parser,
        file: bool,
        limits: &Limits,
        block: usize,
    ) -> Result<String, String> {
        read_on(gz, parser, file, limits, block, 2)
    }

    /// [`read_in`] on `threads` threads.
    fn read_on(
        gz: &[u8],
        parser: Parser,
        file: bool,
        limits: &Limits,
        block: usize,
        threads: usize,
    ) -> Result<String, String> {
        let reader = stream(gz, limits)?;
        let (b, result, _) = pool_of(threads).install(|| {
            let reopen = || stream(gz, limits).map_err(io::Error::other);
            let first_unchecked =
                || input::gzip_unchecked(io::Cursor::new(gz.to_vec()), Path::new("t.json.gz"), limits);
            let reopen =
                if file { Some(Again { checked: &reopen, unchecked: &first_unchecked }) } else { None };
            crate::read_input(Input::Stream(reader), parser, limits, block, reopen, false)
        });
        let source = SourceInfo { path: "t.json.gz".into(), bytes: 0, gzip: true };
        match crate::finish(b, source, result, 0, limits) {
            Ok(t) => Ok(format!("{}truncated {:?}", t.timeline.canonical_text(), t.truncated)),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn the_cutting_thread_has_ended_when_the_read_returns() {
        // A cap met in the first part: this path gives up at once while the cutting thread is
        // still reading (slowly). The thread must be joined, not left running with the file:
        // a detached one outlived the read, and LeakSanitizer (fuzz target trace_gzip) saw its
        // buffers as leaked (crates/trace/tests/regressions/trace_gzip/cutter-outlived-the-read).
        let limits = Limits { max_events: 10, ..Limits::DEFAULT };
        let dropped = Arc::new(AtomicBool::new(false));
        let reader = Slow::new(doc(&kernels(20_000)), &dropped);
        let mut b = TimelineBuilder::with_limits(limits);
        let answer =
            pool().install(|| parallel(Box::new(reader), BLOCK, Some(2 * BLOCK), HOLD, None, &mut b));
        assert!(answer.is_none(), "a cap met is left to the sequential reader");
        assert!(dropped.load(Ordering::SeqCst), "the cutting thread still held the file");
    }

    /// Whether this path answers on its own (else it leaves the file to the sequential reader).
    fn answers(gz: &[u8], limits: &Limits) -> bool {
        answers_in(gz, limits, BLOCK)
    }

    /// [`answers`] in blocks of `block` bytes.
    fn answers_in(gz: &[u8], limits: &Limits, block: usize) -> bool {
        let part = 2 * block;
        let hold = usize::try_from(limits.max_event_bytes / 2).unwrap().min(HOLD);
        let mut b = TimelineBuilder::with_limits(*limits);
        pool()
            .install(|| {
                let (r, first) = unchecked(gz, limits);
                parallel(r, block, Some(part), hold, first, &mut b)
            })
            .is_some()
    }

    /// The file read as standard input is, and as the reference parser reads it (unless
    /// `reference_too` is false: the cap on one event holds only where the text is streamed, and
    /// how much text damaged deflate data yields depends on how much is asked for at once).
    #[track_caller]
    fn same(gz: &[u8], limits: &Limits, reference_too: bool) -> Result<String, String> {
        same_in(gz, limits, reference_too, BLOCK)
    }

    /// [`same`] in blocks of `block` bytes.
    #[track_caller]
    fn same_in(gz: &[u8], limits: &Limits, reference_too: bool, block: usize) -> Result<String, String> {
        // Outcomes are long: a failure shows where they part.
        #[track_caller]
        fn equal(a: &Result<String, String>, b: &Result<String, String>, what: &str) {
            if a != b {
                let (a, b) = (format!("{a:?}"), format!("{b:?}"));
                let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                let around = |s: &str| s[at.saturating_sub(200)..(at + 200).min(s.len())].to_string();
                panic!("{what}: they part at {at}:\n{}\n----\n{}", around(&a), around(&b));
            }
        }
        let file = read_in(gz, Parser::Fast, true, limits, block);
        equal(&file, &read_in(gz, Parser::Fast, false, limits, block), "file against standard input");
        if reference_too {
            equal(&file, &read_in(gz, Parser::Simple, false, limits, block), "against the reference");
        }
        file
    }

    /// The error of an outcome that must be one.
    #[track_caller]
    fn err(o: Result<String, String>) -> String {
        o.as_ref().err().cloned().unwrap_or_else(|| panic!("not an error: {}", short(&o)))
    }

    /// A short view of an outcome, for messages.
    fn short(o: &Result<String, String>) -> String {
        let s = format!("{o:?}");
        let tail = &s[s.len().saturating_sub(300)..];
        format!("{}...{tail}", &s[..s.len().min(200)])
    }

    #[test]
    fn an_intact_stream_is_read_in_parallel_parts() {
        let text = doc(&kernels(60_000));
        assert!(text.len() > 40 * BLOCK, "{}", text.len());
        let gz = gzip(&text);
        assert!(answers(&gz, &Limits::DEFAULT));
        let got = same(&gz, &Limits::DEFAULT, true).unwrap();
        assert!(got.contains("truncated None"));
        // A bare array too, with whitespace after it.
        let bare = format!("[{}]\n\n", kernels(60_000).join(","));
        assert!(answers(&gzip(bare.as_bytes()), &Limits::DEFAULT));
        same(&gzip(bare.as_bytes()), &Limits::DEFAULT, true).unwrap();
    }

    #[test]
    fn text_without_element_starts_is_searched_once() {
        // 40 MB of numbers: no `}, {` anywhere; searching the whole window again for each block
        // would take minutes.
        let mut text = b"[".to_vec();
        text.extend(b"1, ".repeat(40 << 20 >> 2));
        text.extend(b"1]");
        let gz = gzip(&text);
        let start = std::time::Instant::now();
        let mut b = TimelineBuilder::new();
        let outcome = pool().install(|| {
            let (r, first) = unchecked(&gz, &Limits::DEFAULT);
            parallel(r, BLOCK, Some(2 * BLOCK), HOLD, first, &mut b)
        });
        assert!(matches!(outcome, Some(Ok(true))), "{outcome:?}");
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        assert_eq!(b.events(), (40 << 20 >> 2) + 1);
    }

    #[test]
    fn parts_of_one_block_on_many_threads_and_one_thread_read_as_parts_of_two() {
        assert_eq!(
            (part_size(BLOCK, PACED_BY_INFLATE - 1), part_size(BLOCK, PACED_BY_INFLATE)),
            (2 * BLOCK, BLOCK)
        );
        // Kernels of several names on two devices, and a file whose every guess is inside a
        // string (each part fails, and the sequential reader reads it).
        let varied: Vec<String> = (0..60_000).map(|k| kernel(k, &format!("k{}", k % 13), k % 2)).collect();
        let guessy: Vec<String> =
            (0..30_000).map(|k| kernel(k, &format!("a}}, {{\\\"b{}", k % 7), k % 2)).collect();
        for events in [varied, guessy] {
            let gz = gzip(&doc(&events));
            let short = read_on(&gz, Parser::Fast, true, &Limits::DEFAULT, BLOCK, PACED_BY_INFLATE);
            assert_eq!(short, read_in(&gz, Parser::Fast, true, &Limits::DEFAULT, BLOCK));
            // One thread: the sequential reader reads the file again.
            assert_eq!(short, read_on(&gz, Parser::Fast, true, &Limits::DEFAULT, BLOCK, 1));
            assert_eq!(short, read_in(&gz, Parser::Simple, false, &Limits::DEFAULT, BLOCK));
            assert!(short.unwrap().contains("truncated None"));
        }
        // One-block parts are the parallel path's own: it answers on its own.
        let limits = Limits::DEFAULT;
        let hold = usize::try_from(limits.max_event_bytes / 2).unwrap().min(HOLD);
        let gz = gzip(&doc(&kernels(60_000)));
        let mut b = TimelineBuilder::new();
        let answer = pool_of(PACED_BY_INFLATE).install(|| {
            let (r, first) = unchecked(&gz, &limits);
            parallel(r, BLOCK, Some(BLOCK), hold, first, &mut b)
        });
        assert!(matches!(answer, Some(Ok(true))), "{answer:?}");
        assert_eq!(b.events(), 60_000);
    }

    #[test]
    fn the_first_members_crc_is_summed_by_the_parsers() {
        let text = doc(&kernels(60_000));
        let one = gzip(&text);
        // Two members, the first ending inside a part (not at a block's or a part's end).
        let at = text.len() / 3 + 17;
        let two = [gzip(&text[..at]), gzip(&text[at..])].concat();
        let want = same(&one, &Limits::DEFAULT, true).unwrap();
        let many = |gz: &[u8]| read_on(gz, Parser::Fast, true, &Limits::DEFAULT, BLOCK, PACED_BY_INFLATE);
        for gz in [&one, &two] {
            assert!(answers(gz, &Limits::DEFAULT), "the sums match the trailer: this path answers");
            assert_eq!(same(gz, &Limits::DEFAULT, true).unwrap(), want);
            assert_eq!(many(gz).unwrap(), want);
        }
        // A first member's CRC-32 that does not match its text: only the sums can tell, since
        // the decoder leaves that check to this path.
        let flip = |gz: &[u8], at: usize| {
            let mut g = gz.to_vec();
            g[at] ^= 0x55;
            g
        };
        let first_len = gzip(&text[..at]).len();
        for bad in [flip(&one, one.len() - 8), flip(&two, first_len - 8)] {
            assert!(!answers(&bad, &Limits::DEFAULT), "a failed check is left to the sequential reader");
            assert!(err(same(&bad, &Limits::DEFAULT, false)).contains("CRC32 or length check fails"));
            assert_eq!(many(&bad), same(&bad, &Limits::DEFAULT, false));
        }
    }

    #[test]
    fn a_file_reads_the_same_on_few_threads_and_many() {
        // A second member whose file name is longer than flate2 reads: the decoder of many
        // threads once accepted it, so the file passed on 16 cores and failed on 2.
        let text = doc(&kernels(20_000));
        let at = text.len() / 2 + 17;
        let named = |len: usize| {
            let b = flate2::GzBuilder::new().filename(vec![b'a'; len]);
            let mut e = b.write(Vec::new(), flate2::Compression::fast());
            e.write_all(&text[at..]).unwrap();
            [gzip(&text[..at]), e.finish().unwrap()].concat()
        };
        for (len, sound) in [(65_535, true), (65_536, false)] {
            let gz = named(len);
            let few = same(&gz, &Limits::DEFAULT, true);
            assert_eq!(few.is_ok(), sound, "a name of {len} bytes: {}", short(&few));
            let many = read_on(&gz, Parser::Fast, true, &Limits::DEFAULT, BLOCK, PACED_BY_INFLATE);
            assert_eq!(many, few, "a name of {len} bytes");
        }
    }

    /// Counts the bytes read through it.
    struct Counted<R>(R, Arc<AtomicUsize>);

    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1.fetch_add(n, Ordering::SeqCst);
            Ok(n)
        }
    }

    #[test]
    fn a_damaged_first_member_is_found_before_the_rest_is_read() {
        // The first of two members ends a tenth into the text, with its CRC-32 flipped.
        let text = doc(&kernels(200_000));
        let at = text.len() / 10 + 17;
        let first = gzip(&text[..at]);
        let mut bad = [first.clone(), gzip(&text[at..])].concat();
        bad[first.len() - 8] ^= 0x55;
        let read = Arc::new(AtomicUsize::new(0));
        let mut b = TimelineBuilder::with_limits(Limits::DEFAULT);
        let answer = pool().install(|| {
            let (r, first) = unchecked(&bad, &Limits::DEFAULT);
            parallel(Box::new(Counted(r, read.clone())), BLOCK, Some(2 * BLOCK), HOLD, first, &mut b)
        });
        assert!(answer.is_none(), "a failed check is left to the sequential reader");
        // Read on past the first member: at most the parts in flight (2 per thread) and the
        // window being cut; without the early check, the whole text.
        let read = read.load(Ordering::SeqCst);
        assert!(
            read < at + 16 * 2 * BLOCK,
            "read {read} of {} bytes; the first member ends at {at}",
            text.len()
        );
    }

    #[test]
    fn guesses_inside_strings_are_not_trusted() {
        // Every element's name holds `}, {`: each such guess fails its part, and the sequential
        // reader reads the file.
        let events: Vec<String> =
            (0..30_000).map(|k| kernel(k, &format!("a}}, {{\\\"b{}", k % 7), k % 2)).collect();
        let gz = gzip(&doc(&events));
        same(&gz, &Limits::DEFAULT, true).unwrap();
    }

    #[test]
    fn every_cap_is_met_where_the_sequential_reader_meets_it() {
        let n = 30_000;
        let small = |f: &dyn Fn(&mut Limits)| {
            let mut l = Limits { max_event_bytes: 1 << 20, ..Limits::DEFAULT };
            f(&mut l);
            l
        };
        let plain = gzip(&doc(&kernels(n)));
        // Events: met in the last part, in a middle one, and not met one event short of it.
        for (max, met) in [(n as u64 - 1, true), (n as u64 / 3, true), (n as u64, false)] {
            let limits = small(&|l| l.max_events = max);
            assert_eq!(answers(&plain, &limits), !met, "max_events {max}");
            let got = same(&plain, &limits, true);
            assert_eq!(got.is_err(), met, "max_events {max}: {}", short(&got));
        }
        // Names: the same name for the first half, a new one for each kernel after it.
        let names: Vec<String> =
            (0..n).map(|k| kernel(k, &format!("k{}", k.saturating_sub(n / 2)), 0)).collect();
        let names = gzip(&doc(&names));
        let limits = small(&|l| l.max_names = n as u64 / 2 - 10);
        assert!(!answers(&names, &limits));
        let e = err(same(&names, &limits, true));
        assert!(e.contains("distinct names and labels"), "{e}");
        // Devices and streams: a new device per kernel in the last thousand.
        let devices: Vec<String> = (0..n).map(|k| kernel(k, "k", k.saturating_sub(n - 1000))).collect();
        let devices = gzip(&doc(&devices));
        for (limits, what) in
            [(small(&|l| l.max_devices = 500), "devices"), (small(&|l| l.max_streams = 500), "streams")]
        {
            let e = err(same(&devices, &limits, true));
            assert!(e.contains(&format!("on more than 500 {what}")), "{e}");
        }
        // Context: a second context event may be any size; the first, in a late part, may not.
        let context = |first: usize| {
            let mut events = kernels(n);
            let c = |size: usize| {
                format!(r#"{{"ph":"M","name":"launchguard_context","args":{{"x":"{}"}}}}"#, "c".repeat(size))
            };
            events.insert(n - 100, c(first));
            events.insert(n - 10, c(1000));
            gzip(&doc(&events))
        };
        let limits = small(&|l| l.max_context_bytes = 100);
        assert!(same(&context(10), &limits, true).is_ok());
        let e = err(same(&context(200), &limits, true));
        assert!(e.contains("a launchguard context event larger than 100 bytes"), "{e}");
        // Text: the stream's cap, met in a later part.
        let limits = small(&|l| l.max_inflated_bytes = 3 << 20);
        assert!(!answers(&plain, &limits));
        let e = err(same(&plain, &limits, true));
        assert!(e.contains("more than 3 MiB of JSON text"), "{e}");
    }

    #[test]
    fn the_cap_on_one_event_is_met_as_when_streamed() {
        let limits = Limits { max_event_bytes: 1 << 20, ..Limits::DEFAULT };
        let with = |size: usize| {
            let mut events = kernels(20_000);
            events.insert(15_000, kernel(0, &"n".repeat(size), 0));
            gzip(&doc(&events))
        };
        // Larger than the cap, in a late part: refused, as standard input refuses it.
        let big = with(3 << 20);
        assert!(!answers(&big, &limits));
        let e = err(same(&big, &limits, false));
        assert!(e.contains("an event larger than 1 MiB"), "{e}");
        // Under half the cap: read here.
        let fits = with(300 << 10);
        assert!(answers(&fits, &limits));
        same(&fits, &limits, true).unwrap();
        // Between the two: whatever the sequential reader says.
        same(&with(700 << 10), &limits, false).unwrap();
    }

    #[test]
    fn damaged_gzip_is_reported_as_the_sequential_reader_reports_it() {
        let good = gzip(&doc(&kernels(30_000)));
        let n = good.len();
        let flip = |at: usize, bit: u8| {
            let mut g = good.clone();
            g[at] ^= bit;
            g
        };
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("crc", flip(n - 8, 0x55), "CRC32 or length check fails"),
            ("isize", flip(n - 4, 1), "CRC32 or length check fails"),
            ("garbage", [&good[..], b"not gzip at all, but long enough"].concat(), "trailing garbage"),
            ("cut trailer", good[..n - 3].to_vec(), "its CRC32 could not be checked"),
            ("cut deflate", good[..n / 2].to_vec(), ""),
            ("damaged deflate", flip(n / 2, 0xff), ""),
        ];
        for (name, gz, want) in cases {
            assert!(!answers(&gz, &Limits::DEFAULT), "{name}");
            let got = same(&gz, &Limits::DEFAULT, false);
            assert!(format!("{got:?}").contains(want), "{name}: {}", short(&got));
        }
    }

    #[test]
    fn cut_and_trailing_text_are_worded_as_the_sequential_reader_words_them() {
        let text = doc(&kernels(30_000));
        // Cut inside the events: a truncation, the same events kept.
        for cut in [text.len() / 2, text.len() - 200, text.len() - 40] {
            let gz = gzip(&text[..cut]);
            assert!(!answers(&gz, &Limits::DEFAULT));
            let got = same(&gz, &Limits::DEFAULT, true).unwrap();
            assert!(
                got.contains("truncated Some(\"the file ends in the middle of the JSON"),
                "{cut}: {}",
                short(&Ok(got.clone()))
            );
        }
        // A second document and garbage after the first: errors at the same offset; a second
        // events array: read on by the sequential reader, as it reads it.
        let two = [&text[..], &text[..]].concat();
        let garbage = [&text[..], b"garbage"].concat();
        let again = String::from_utf8(text.clone()).unwrap().replacen(
            "\"traceName\"",
            "\"traceEvents\": [{}], \"x\"",
            1,
        );
        for (name, t, error) in
            [("two", two, true), ("garbage", garbage, true), ("two arrays", again.into_bytes(), false)]
        {
            let gz = gzip(&t);
            assert!(!answers(&gz, &Limits::DEFAULT), "{name}");
            let got = same(&gz, &Limits::DEFAULT, true);
            assert_eq!(got.is_err(), error, "{name}: {}", short(&got));
        }
    }

    #[test]
    fn a_whitespace_bomb_after_events_is_refused_without_being_held() {
        let mut gz = gzip(format!("[{},", kernels(20_000).join(",")).as_bytes());
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b' '; 1 << 20]).unwrap();
        let member = e.finish().unwrap();
        for _ in 0..1024 {
            gz.extend(&member);
        }
        gz.extend(gzip(b"{}]"));
        assert!(!answers(&gz, &Limits::DEFAULT));
        let e = err(same(&gz, &Limits::DEFAULT, true));
        assert!(e.contains("refusing a gzip bomb"), "{e}");
    }

    /// The trace corpus beside the clone (`../shared/traces`, as the CLI tests find it): every
    /// `.json.gz`, sorted; empty (with a note) where it is missing, except under `CI=true`.
    fn corpus() -> Vec<std::path::PathBuf> {
        fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    collect(&path, out);
                } else if path.to_string_lossy().ends_with(".json.gz") {
                    out.push(path);
                }
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        if !dir.is_dir() {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(!ci, "{} is missing under CI=true: the corpus must sit beside the clone", dir.display());
            eprintln!("note: {} not found; the corpus is not read", dir.display());
            return Vec::new();
        }
        let mut out = Vec::new();
        collect(&dir, &mut out);
        out.sort();
        out
    }

    /// Real traces as written by `torch.profiler`, read as a file (this path) and as standard input
    /// (the sequential reader), in parts of 128 KiB and of 8 KiB: whole, then (those of at most
    /// 12 MB of text) cut short, damaged, followed by garbage, and read under caps each met part
    /// way through. The same timeline and truncation, or the same error, every time; where the
    /// outcome does not hang on how the damaged deflate data is asked for, the reference parser's.
    #[test]
    fn real_traces_read_as_a_file_as_on_standard_input() {
        let traces = corpus();
        let mut answered = Vec::new();
        for path in &traces {
            let name = path.strip_prefix(path.ancestors().nth(2).unwrap()).unwrap().display().to_string();
            let gz = std::fs::read(path).unwrap();
            let text = {
                let mut t = Vec::new();
                flate2::read::MultiGzDecoder::new(&gz[..]).read_to_end(&mut t).unwrap();
                t
            };
            let whole = {
                let mut b = TimelineBuilder::new();
                tail::simple_slice(&text, &mut b).unwrap();
                b.finish()
            };
            for block in [BLOCK, 4 << 10] {
                let got = same_in(&gz, &Limits::DEFAULT, true, block);
                assert!(got.is_ok(), "{name}: {}", short(&got));
                if answers_in(&gz, &Limits::DEFAULT, block) {
                    answered.push(format!("{name} in blocks of {block}"));
                }
            }
            if text.len() > 12 << 20 {
                continue;
            }
            let n = gz.len();
            let flip = |at: usize, bit: u8| {
                let mut g = gz.clone();
                g[at] ^= bit;
                g
            };
            // Cut text: a truncation, the events before the cut kept (or an error, where the cut
            // falls before the first event or in the keys after the array).
            let end = text.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap();
            let cuts = [text.len() / 3, text.len() * 2 / 3, end - 40, end];
            let mut variants: Vec<(String, Vec<u8>, bool)> =
                cuts.iter().map(|&c| (format!("text cut at {c}"), gzip(&text[..c]), true)).collect();
            variants.extend([
                ("gzip cut at 2/3".into(), gz[..n * 2 / 3].to_vec(), false),
                ("gzip trailer cut".into(), gz[..n - 3].to_vec(), true),
                ("a CRC32 flipped".into(), flip(n - 8, 0x55), true),
                ("a deflate byte flipped".into(), flip(n / 2, 0xff), false),
                ("garbage after".into(), [&gz[..], b"not gzip at all, but long enough"].concat(), true),
                ("a second document".into(), [&gz[..], &gzip(&text)[..]].concat(), true),
            ]);
            for (what, v, reference_too) in &variants {
                for block in [BLOCK, 4 << 10] {
                    let _ = same_in(v, &Limits::DEFAULT, *reference_too, block);
                    assert!(!answers_in(v, &Limits::DEFAULT, block), "{name}, {what}: answered in parallel");
                }
            }
            // Caps met part way through the file: each worded as the sequential reader words it.
            // (With the cap it must meet, if any.)
            let gpu = !whole.activities.is_empty();
            let caps = [
                (Limits { max_events: whole.events / 2, ..Limits::DEFAULT }, Some(Cap::Events)),
                (Limits { max_names: whole.strings.len() as u64 / 2, ..Limits::DEFAULT }, Some(Cap::Names)),
                (
                    Limits { max_inflated_bytes: text.len() as u64 / 2, ..Limits::DEFAULT },
                    Some(Cap::Inflated),
                ),
                (Limits { max_event_bytes: 512 << 10, ..Limits::DEFAULT }, None),
                (Limits { max_devices: 0, ..Limits::DEFAULT }, gpu.then_some(Cap::Devices)),
                (Limits { max_context_bytes: 0, ..Limits::DEFAULT }, None),
            ];
            for (limits, cap) in &caps {
                for block in [BLOCK, 4 << 10] {
                    let reference_too = limits.max_event_bytes == Limits::DEFAULT.max_event_bytes;
                    let got = same_in(&gz, limits, reference_too, block);
                    if let Some(cap) = cap {
                        let e = err(got);
                        assert!(e.contains(&cap.what(limits)), "{name}, {cap:?}: {e}");
                    }
                }
            }
        }
        eprintln!("read in parallel parts: {}", answered.join(", "));
        // Every trace of more than a few parts is read on this path whole, not left to the other.
        for path in &traces {
            let name = path.file_name().unwrap().to_string_lossy();
            if name.starts_with("healthy") || name.starts_with("delay270") || name.starts_with("tp2_") {
                assert!(answered.iter().any(|a| a.contains(&*name)), "{name} was not read in parts");
            }
        }
    }
}
