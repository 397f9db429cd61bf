//! Streamed input (gzip, standard input): one thread reads (and decompresses) into large blocks
//! while this one scans them, so the cost is that of decompression alone. Parsing works on a window that holds the element being read and
//! the blocks after it; an element cut by the end of the window is parsed again once more bytes
//! have arrived.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::array::{self, After, End};
use super::exact_error::{self, Place};
use super::{element_level, top};
use crate::event::{Stopped, TimelineBuilder};
use crate::limits::Cap;
use crate::tail::{self, Stop};

/// Bytes decompressed per block.
pub(crate) const BLOCK: usize = 1 << 20;
/// Blocks in flight between the threads.
const IN_FLIGHT: usize = 4;

type Block = io::Result<Vec<u8>>;

/// Opens the input again from its start (a file can be; standard input cannot).
pub(crate) type Reopen<'a> = Option<Again<'a>>;

/// Opens a file again from its start.
#[derive(Clone, Copy)]
pub(crate) struct Again<'a> {
    /// Its text, every gzip member checked as it is read: for the reference parser to read whole.
    pub(crate) checked: &'a dyn Fn() -> io::Result<Box<dyn Read + Send>>,
    /// Its text with the first gzip member's CRC-32 left to the reader, where the start of the
    /// stream allows it ([`crate::input::gzip_unchecked`]).
    pub(crate) unchecked: &'a dyn Fn() -> Option<crate::input::Unchecked>,
}

impl Again<'_> {
    /// The text, checked as it is read.
    pub(crate) fn text(&self) -> io::Result<Box<dyn Read + Send>> {
        (self.checked)()
    }
}

/// Reads a stream of JSON text (decompressed gzip, standard input) in blocks of `block` bytes,
/// then the rest of it, which must be whitespace. `stdin`: the stream is standard input, whose
/// reading thread is left to end on its own.
pub(crate) fn parse_stream(
    reader: Box<dyn Read + Send>,
    block: usize,
    reopen: Reopen,
    stdin: bool,
    builder: &mut TimelineBuilder,
) -> tail::Outcome {
    let (tx, rx) = sync_channel::<Block>(IN_FLIGHT);
    let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
    let thread = std::thread::spawn(move || decompress(reader, block, tx, recycle_rx));
    let mut w = Window {
        buf: Vec::new(),
        held: Default::default(),
        place: Place::default(),
        drained: 0,
        rx,
        recycle: recycle_tx,
        done: false,
        error: None,
        block,
        max_event: builder.limits().max_event_bytes,
    };
    let outcome = drive(&mut w, builder);
    // Dropping the window drops the receiver, which stops the reader at its next block. A file
    // or bytes in memory reach that point soon, and the thread is waited for: it holds the input
    // and its buffers, which must not outlive the read. Standard input is not: its read can block
    // on a writer that never closes it, after this side has all it needs (a cap, an error).
    drop(w);
    if !stdin {
        let _ = thread.join();
    }
    match outcome {
        Some(outcome) => outcome,
        None => match reopen {
            Some(reopen) => {
                *builder = TimelineBuilder::with_limits(*builder.limits());
                let reader = reopen.text().map_err(|e| Stop::Json(serde_json::Error::io(e)))?;
                tail::simple_stream(reader, builder)
            }
            None => Err(Stop::Json(serde_json::Error::io(io::Error::other(
                "the fast parser stopped where the reference parser reads on; read it with --parser simple",
            )))),
        },
    }
}

fn decompress(
    mut reader: Box<dyn Read + Send>,
    size: usize,
    tx: SyncSender<Block>,
    recycle: Receiver<Vec<u8>>,
) {
    loop {
        let mut block = recycle.try_recv().unwrap_or_else(|_| Vec::with_capacity(size));
        block.resize(size, 0);
        let mut filled = 0;
        let mut failed = None;
        while filled < size {
            match reader.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        block.truncate(filled);
        let end = filled < size;
        if filled > 0 && tx.send(Ok(block)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = tx.send(Err(e));
            return;
        }
        if end {
            return;
        }
    }
}

/// The bytes from the element being read on.
struct Window {
    buf: Vec<u8>,
    /// `buf`'s bytes, told to the memory budget as text, not records.
    held: crate::memory::TextHeld,
    /// Lines and column at `buf[0]`.
    place: Place,
    /// Bytes of text before `buf[0]`.
    drained: u64,
    rx: Receiver<Block>,
    recycle: SyncSender<Vec<u8>>,
    /// No more blocks will come.
    done: bool,
    /// The decompressor's error, after the last block.
    error: Option<io::Error>,
    /// Bytes per block.
    block: usize,
    /// [`crate::Limits::max_event_bytes`].
    max_event: u64,
}

impl Window {
    /// Receives blocks until the window holds at least `want` bytes or the stream ended.
    fn fill(&mut self, want: usize) -> Result<(), Stopped> {
        while !self.done && self.buf.len() < want {
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    self.buf.try_reserve(block.len()).map_err(|_| Stopped::Memory)?;
                    self.buf.extend_from_slice(&block);
                    self.held.set(self.buf.capacity());
                    let _ = self.recycle.try_send(block);
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    self.done = true;
                }
                Err(_) => self.done = true,
            }
        }
        Ok(())
    }

    /// Receives at least one more block, more when `from` has been waiting long (so that an
    /// element larger than a block is not scanned once per block). The element from `from` on
    /// must be held whole: past the cap on one event, it is refused.
    fn more(&mut self, from: usize) -> Result<(), Stopped> {
        if (self.buf.len() - from) as u64 > self.max_event {
            return Err(Stopped::Cap(Cap::Event));
        }
        let want = self.buf.len() + (self.buf.len() - from).max(1);
        self.fill(want)
    }

    /// Forgets the bytes before `upto`.
    fn drain(&mut self, upto: usize) {
        self.place = self.place.advance(&self.buf, 0, upto);
        self.drained += upto as u64;
        self.buf.drain(..upto);
    }

    /// The rest of the stream after the window.
    fn rest(&mut self) -> Rest<'_> {
        Rest { rx: &self.rx, block: Vec::new(), at: 0, error: self.error.take(), done: self.done }
    }

    /// The document ended at `end`: the rest of the stream must be whitespace.
    fn finish(&mut self, end: usize, saw_events: bool) -> tail::Outcome {
        let head = self.buf.split_off(end);
        self.held.set(self.buf.capacity() + head.capacity());
        let at = self.drained + end as u64;
        tail::check_rest(&head, at, &mut self.rest())?;
        Ok(saw_events)
    }

    /// The reference parser over the whole stream, which the window holds from its start.
    fn reference(&mut self, builder: &mut TimelineBuilder) -> tail::Outcome {
        debug_assert_eq!(self.drained, 0);
        *builder = TimelineBuilder::with_limits(*builder.limits());
        let head = std::mem::take(&mut self.buf);
        let rest = self.rest();
        tail::simple_stream(io::Cursor::new(head).chain(rest), builder)
    }

    /// The reference parser's error from `anchor` on, reading the rest of the stream as needed.
    fn replay(&mut self, anchor: usize, bare: bool) -> Option<exact_error::Replayed> {
        let place = self.place.advance(&self.buf, 0, anchor);
        let rest = Rest { rx: &self.rx, block: Vec::new(), at: 0, error: self.error.take(), done: self.done };
        exact_error::stream(&self.buf[anchor..], place, bare, rest)
    }
}

/// The stream after the window, as the reference parser reads it: the blocks still to come, then
/// the decompressor's error if it had one.
struct Rest<'a> {
    rx: &'a Receiver<Block>,
    block: Vec<u8>,
    at: usize,
    error: Option<io::Error>,
    done: bool,
}

impl Read for Rest<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.block.len() {
            if self.done {
                return match self.error.take() {
                    Some(e) => Err(e),
                    None => Ok(0),
                };
            }
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    self.block = block;
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    self.done = true;
                }
                Err(_) => self.done = true,
            }
        }
        let n = out.len().min(self.block.len() - self.at);
        out[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// How an events array ended.
enum Ev {
    /// Its `]` is at this position.
    Closed(usize),
    /// The builder stopped (a cap, or memory).
    Stopped,
    /// The reference parser should replay from `anchor`: the last complete element when
    /// `at_element`, else the array's content.
    Failed { anchor: usize, at_element: bool },
}

/// The outcome; `None` when the reference parser should read the whole input again.
fn drive(w: &mut Window, builder: &mut TimelineBuilder) -> Option<tail::Outcome> {
    // A stop (a cap, memory) is reported from the builder; the outcome is then moot.
    let stopped = |builder: &mut TimelineBuilder, why| {
        builder.stop(why);
        Some(Ok(true))
    };
    if let Err(why) = w.fill(w.block) {
        return stopped(builder, why);
    }
    let mut pos = 0;
    let mut from = top::From::Start;
    let mut saw_events = false;
    loop {
        let walk = top::walk(&w.buf, pos, from, builder);
        match walk {
            top::Walk::Failed { eof: true, .. } if !w.done => {
                if let Err(why) = w.more(pos) {
                    return stopped(builder, why);
                }
            }
            top::Walk::Failed { .. } if !saw_events => return Some(w.reference(builder)),
            // After an events array, `pos` is just past its `]`.
            top::Walk::Failed { .. } => return w.replay(pos - 1, false).map(|r| Err(Stop::Json(r.error))),
            top::Walk::Done(end) => return Some(w.finish(end, saw_events)),
            top::Walk::Events { content, bare } => {
                saw_events = true;
                match events(w, content, bare, builder) {
                    Ev::Closed(close) if bare => return Some(w.finish(close + 1, true)),
                    Ev::Closed(close) => {
                        w.drain(close);
                        pos = 1;
                        from = top::From::AfterEvents;
                    }
                    Ev::Stopped => return Some(Ok(true)),
                    Ev::Failed { anchor, at_element } => {
                        let r = w.replay(anchor, bare)?;
                        r.count_into(at_element, builder);
                        return Some(Err(Stop::Json(r.error)));
                    }
                }
            }
        }
    }
}

/// Streams the elements of an events array whose content starts at `content`.
fn events(w: &mut Window, content: usize, bare: bool, builder: &mut TimelineBuilder) -> Ev {
    let level = element_level(bare);
    let mut pos = content;
    let mut after = After::Open;
    // The start of the last complete element, or the array's content.
    let mut anchor = content;
    let mut at_element = false;
    loop {
        let run = array::run(&w.buf, pos, after, usize::MAX, level, None, builder);
        if let Some((start, end)) = run.last_done {
            anchor = start;
            at_element = true;
            pos = end;
            after = After::Element;
        }
        match run.end {
            End::Closed(p) => return Ev::Closed(p),
            End::Stopped => return Ev::Stopped,
            End::Failed { eof: true, .. } if !w.done => {
                w.drain(anchor);
                pos -= anchor;
                anchor = 0;
                if let Err(why) = w.more(pos) {
                    builder.stop(why);
                    return Ev::Stopped;
                }
            }
            End::Failed { .. } | End::Landed(_) => return Ev::Failed { anchor, at_element },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::fast::tests::Slow;
    use crate::limits::Limits;

    /// A document of `n` kernels.
    fn kernels(n: usize) -> Vec<u8> {
        let events: Vec<String> = (0..n)
            .map(|k| format!(r#"{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":{},"dur":1,"args":{{"stream":7}}}}"#, 1000 + 2 * k))
            .collect();
        format!("{{\"traceEvents\": [\n{}\n]}}\n", events.join(",\n")).into_bytes()
    }

    /// Reads `n` kernels slowly with a cap of ten events, in blocks of 64 KiB: whether the input
    /// was dropped when the read returned.
    fn dropped_on_return(stdin: bool) -> bool {
        let dropped = Arc::new(AtomicBool::new(false));
        let mut b = TimelineBuilder::with_limits(Limits { max_events: 10, ..Limits::DEFAULT });
        let outcome =
            parse_stream(Box::new(Slow::new(kernels(20_000), &dropped)), 64 << 10, None, stdin, &mut b);
        assert!(b.stopped().is_some(), "the cap on events stops the read: {outcome:?}");
        dropped.load(Ordering::SeqCst)
    }

    #[test]
    fn the_reading_thread_of_a_finite_stream_has_ended_when_the_read_returns() {
        // A cap met in the first block, while the reading thread is still reading (slowly). It
        // must be joined: detached, it outlived the read, and LeakSanitizer (fuzz target
        // trace_gzip) saw its buffers as leaked (tests/regressions/trace_gzip/reader-outlived-*).
        assert!(dropped_on_return(false), "the reading thread still held the input");
    }

    #[test]
    fn standard_input_is_not_waited_for() {
        // Its read may block on a writer that never closes the pipe: the answer must not wait.
        assert!(!dropped_on_return(true), "the read waited for the reading thread");
    }
}
