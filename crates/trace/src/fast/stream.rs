//! Gzip input: one thread decompresses into large blocks while this one scans them, so the cost is
//! that of decompression alone. Parsing works on a window that holds the element being read and
//! the blocks after it; an element cut by the end of the window is parsed again once more bytes
//! have arrived.

use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::array::{self, After, End};
use super::replay::{self, Place};
use super::{element_level, top, Outcome};
use crate::event::TimelineBuilder;
use crate::simple;

/// Bytes decompressed per block.
const BLOCK: usize = 1 << 20;
/// Blocks in flight between the threads.
pub(crate) const IN_FLIGHT: usize = 4;

pub(crate) type Block = io::Result<Vec<u8>>;

/// Reads a gzip stream; `path` is opened again when the reference parser has to read it all.
pub(crate) fn parse_gzip(
    reader: Box<dyn Read + Send>,
    path: &Path,
    builder: &mut TimelineBuilder,
) -> Outcome {
    let fast = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Block>(IN_FLIGHT);
        let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
        s.spawn(move || decompress(reader, tx, recycle_rx));
        let mut w = Window {
            buf: Vec::new(),
            place: Place::default(),
            rx,
            recycle: recycle_tx,
            done: false,
            error: None,
        };
        drive(&mut w, builder)
        // Dropping the window drops the receiver, which stops the decompressor.
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

pub(crate) fn decompress(
    mut reader: Box<dyn Read + Send>,
    tx: SyncSender<Block>,
    recycle: Receiver<Vec<u8>>,
) {
    loop {
        let mut block = recycle.try_recv().unwrap_or_else(|_| Vec::with_capacity(BLOCK));
        block.resize(BLOCK, 0);
        let mut filled = 0;
        let mut failed = None;
        while filled < BLOCK {
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
        let end = filled < BLOCK;
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
    /// Lines and column at `buf[0]`.
    place: Place,
    rx: Receiver<Block>,
    recycle: SyncSender<Vec<u8>>,
    /// No more blocks will come.
    done: bool,
    /// The decompressor's error, after the last block.
    error: Option<io::Error>,
}

impl Window {
    /// Receives blocks until the window holds at least `want` bytes or the stream ended.
    fn fill(&mut self, want: usize) {
        while !self.done && self.buf.len() < want {
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    self.buf.extend_from_slice(&block);
                    let _ = self.recycle.try_send(block);
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    self.done = true;
                }
                Err(_) => self.done = true,
            }
        }
    }

    /// Receives at least one more block, more when `from` has been waiting long (so that an
    /// element larger than a block is not scanned once per block).
    fn more(&mut self, from: usize) {
        let want = self.buf.len() + (self.buf.len() - from).max(1);
        self.fill(want);
    }

    /// Forgets the bytes before `upto`.
    fn drain(&mut self, upto: usize) {
        self.place = self.place.advance(&self.buf, 0, upto);
        self.buf.drain(..upto);
    }

    /// The reference parser's error from `anchor` on, reading the rest of the stream as needed.
    fn replay(&mut self, anchor: usize, bare: bool) -> Option<serde_json::Error> {
        let place = self.place.advance(&self.buf, 0, anchor);
        let rest = Rest { rx: &self.rx, block: Vec::new(), at: 0, error: self.error.take(), done: self.done };
        replay::stream(&self.buf[anchor..], place, bare, rest)
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

/// `None` when the reference parser should read the whole stream.
fn drive(w: &mut Window, builder: &mut TimelineBuilder) -> Option<Outcome> {
    w.fill(BLOCK);
    let mut pos = 0;
    let mut from = top::From::Start;
    let mut saw_events = false;
    loop {
        let walk = top::walk(&w.buf, pos, from, builder);
        match walk {
            top::Walk::Failed { eof: true, .. } if !w.done => w.more(pos),
            top::Walk::Failed { .. } if !saw_events => return None,
            // After an events array, `pos` is just past its `]`.
            top::Walk::Failed { .. } => return w.replay(pos - 1, false).map(Err),
            top::Walk::Done => return Some(Ok(saw_events)),
            top::Walk::Events { content, bare } => {
                saw_events = true;
                match events(w, content, bare, builder) {
                    Ok(close) if bare => {
                        let _ = close;
                        return Some(Ok(true));
                    }
                    Ok(close) => {
                        w.drain(close);
                        pos = 1;
                        from = top::From::AfterEvents;
                    }
                    Err(anchor) => return w.replay(anchor, bare).map(Err),
                }
            }
        }
    }
}

/// Streams the elements of an events array whose content starts at `content`; returns the
/// position of its `]`, or the position the reference parser should replay from.
fn events(w: &mut Window, content: usize, bare: bool, builder: &mut TimelineBuilder) -> Result<usize, usize> {
    let level = element_level(bare);
    let mut pos = content;
    let mut after = After::Open;
    // The start of the last complete element, or the array's content.
    let mut anchor = content;
    loop {
        let run = array::run(&w.buf, pos, after, usize::MAX, level, None, builder);
        if let Some((start, end)) = run.last_done {
            anchor = start;
            pos = end;
            after = After::Element;
        }
        match run.end {
            End::Closed(p) => return Ok(p),
            End::Failed { eof: true, .. } if !w.done => {
                w.drain(anchor);
                pos -= anchor;
                anchor = 0;
                w.more(pos);
            }
            End::Failed { .. } | End::Landed(_) => return Err(anchor),
        }
    }
}
