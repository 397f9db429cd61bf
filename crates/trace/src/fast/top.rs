//! The document around the events: an array of events, or an object whose `traceEvents` holds
//! them, with header and footer keys read the way the reference parser reads them.

use super::cursor::{Cursor, Strings};
use super::lexeme::Bad;
use crate::event::TimelineBuilder;
use crate::simple;

/// Where the walk over the top level starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    /// The start of the document.
    Start,
    /// Inside the top-level object, after a `traceEvents` array whose `]` was just read.
    AfterEvents,
}

/// Where the walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// An events array whose first byte after `[` is at `content`; `bare` when the document is
    /// the array itself.
    Events {
        /// Just after the `[`.
        content: usize,
        /// The document is a bare array.
        bare: bool,
    },
    /// The top-level object closed; the document ends before this position.
    Done(usize),
    /// The text is invalid (`eof` false) or ended (`eof` true) at `at`, or holds something this
    /// parser leaves to the reference parser.
    Failed {
        /// Whether the buffer ended.
        eof: bool,
        /// Where.
        at: usize,
    },
}

/// Walks the top level from `pos`, filling the metadata, until an events array or the end.
pub(crate) fn walk(buf: &[u8], pos: usize, from: From, builder: &mut TimelineBuilder) -> Walk {
    let mut cur = Cursor::new(buf, pos);
    match walk_inner(&mut cur, from, builder) {
        Ok(w) => w,
        Err(e) => Walk::Failed { eof: e == Bad::Eof, at: cur.reached() },
    }
}

fn walk_inner(cur: &mut Cursor, from: From, builder: &mut TimelineBuilder) -> Result<Walk, Bad> {
    if from == From::Start {
        let (p, c) = cur.tok()?;
        match c {
            b'[' => return Ok(Walk::Events { content: p + 1, bare: true }),
            b'{' => {
                let (q, c) = cur.tok()?;
                if c == b'}' {
                    return Ok(Walk::Done(q + 1));
                }
                return members(cur, (q, c), builder);
            }
            _ => return Err(Bad::Syntax),
        }
    }
    match cur.tok()? {
        (_, b',') => {
            let t = cur.tok()?;
            members(cur, t, builder)
        }
        (p, b'}') => Ok(Walk::Done(p + 1)),
        _ => Err(Bad::Syntax),
    }
}

/// The members of the top-level object from the key at `first`.
fn members(cur: &mut Cursor, first: (usize, u8), builder: &mut TimelineBuilder) -> Result<Walk, Bad> {
    let (mut q, mut c) = first;
    loop {
        if c != b'"' {
            return Err(Bad::Syntax);
        }
        let key = cur.string(q)?.text()?;
        cur.expect(b':')?;
        let v = cur.tok()?;
        match &*key {
            "traceEvents" if v.1 == b'[' => return Ok(Walk::Events { content: v.0 + 1, bare: false }),
            // Anything else is an error the reference parser words.
            "traceEvents" => return Err(Bad::Syntax),
            "baseTimeNanoseconds" | "distributedInfo" | "deviceProperties" | "WARNING" | "ERROR" => {
                let end = cur.skip(v, 2, Strings::Decoded)?;
                let value: serde_json::Value =
                    serde_json::from_slice(&cur.buf[v.0..end]).map_err(|_| Bad::Syntax)?;
                simple::apply_header_value(builder.meta_mut(), &key, &value);
            }
            key => {
                if let Some(profiler) = simple::profiler_of_key(key) {
                    simple::note_profiler(builder.meta_mut(), profiler);
                }
                cur.skip(v, 2, Strings::Ignored)?;
            }
        }
        match cur.tok()? {
            (_, b',') => (q, c) = cur.tok()?,
            (p, b'}') => return Ok(Walk::Done(p + 1)),
            _ => return Err(Bad::Syntax),
        }
    }
}
