//! The fast parser's reading of JSON text: the grammar walked byte by byte between the places
//! that matter, checking what it skips by serde_json's rules without keeping it.
//!
//! An earlier version found those places first, 64 bytes at a time with AVX2 (the simdjson
//! design), and walked only them. Kineto's text is dense with short keys and small numbers, about
//! 200,000 such places per MB, and popping each from a bit mask cost more than reading on (see
//! `docs/benchmarks.md`). Only string contents, where the long kernel names are, are still
//! searched 16 bytes at a time.

use std::borrow::Cow;

use super::lexeme::{self, Bad};

/// How far past a bad scalar's start the run of bytes it spans is looked for.
const SETTLE_MOST: usize = 64 << 10;

/// serde_json refuses the 128th nested array or object.
pub(crate) const MAX_LEVEL: u32 = 128;

/// How strings whose value is not kept are checked: inside events serde_json decodes every string
/// (escapes, surrogates, UTF-8); elsewhere it skips them, checking only the escape letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strings {
    /// Inside an event.
    Decoded,
    /// In the keys around `traceEvents`.
    Ignored,
}

/// A string as found between its quotes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawStr<'a> {
    /// The bytes between the quotes.
    pub raw: &'a [u8],
    /// Whether it holds a backslash escape.
    pub escaped: bool,
}

impl<'a> RawStr<'a> {
    /// The decoded text.
    pub(crate) fn text(&self) -> Result<Cow<'a, str>, Bad> {
        if self.escaped {
            lexeme::unescape(self.raw).map(Cow::Owned)
        } else {
            std::str::from_utf8(self.raw).map(Cow::Borrowed).map_err(|_| Bad::Syntax)
        }
    }
}

/// A position and the byte there.
pub(crate) type Tok = (usize, u8);

/// JSON whitespace: space, tab, line feed, carriage return.
#[inline(always)]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// The bytes that end a run of scalar text (what is neither whitespace, an operator nor a quote).
#[inline(always)]
fn ends_run(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"')
}

/// The grammar over one buffer, reading it byte by byte between the places that matter: runs of
/// whitespace are stepped over, string contents are searched 16 bytes at a time.
pub(crate) struct Cursor<'a> {
    /// The bytes.
    pub buf: &'a [u8],
    /// The next byte to read.
    pub(crate) at: usize,
    /// End of the last string that held a byte ≥ 0x80 (0 if none).
    high_end: usize,
    /// The separators between members read so far, to match the next ones whole.
    pub(crate) separators: super::members::Separators,
}

impl<'a> Cursor<'a> {
    /// Starts at `start`, outside any string.
    pub(crate) fn new(buf: &'a [u8], start: usize) -> Self {
        Cursor { buf, at: start, high_end: 0, separators: Default::default() }
    }

    /// A position at or past every position read: where a failure is reported.
    pub(crate) fn reached(&self) -> usize {
        self.at.min(self.buf.len())
    }

    /// The next position that is not whitespace, and its byte: an operator, the opening quote of
    /// a string (read on with [`Cursor::string`]), or the first byte of a scalar (read on with
    /// [`Cursor::scalar_end`] or [`Cursor::number`], which move past it).
    #[inline(always)]
    pub(crate) fn tok(&mut self) -> Result<Tok, Bad> {
        let p = skip_ws(self.buf, self.at);
        match self.buf.get(p) {
            Some(&c) => {
                self.at = p + 1;
                Ok((p, c))
            }
            None => {
                self.at = p;
                Err(Bad::Eof)
            }
        }
    }

    /// The decoded text of the key whose opening quote is at `open` (the last position read).
    #[inline(always)]
    pub(crate) fn key_text(&mut self, open: usize) -> Result<Cow<'a, [u8]>, Bad> {
        let s = self.string(open)?;
        if s.escaped {
            return lexeme::unescape(s.raw).map(|k| Cow::Owned(k.into_bytes()));
        }
        Ok(Cow::Borrowed(s.raw))
    }

    /// The next position, which must hold `want`.
    #[inline(always)]
    pub(crate) fn expect(&mut self, want: u8) -> Result<usize, Bad> {
        let (p, c) = self.tok()?;
        if c == want {
            Ok(p)
        } else {
            Err(Bad::Syntax)
        }
    }

    /// The string whose opening quote is at `open` (the last position read).
    #[inline(always)]
    pub(crate) fn string(&mut self, open: usize) -> Result<RawStr<'a>, Bad> {
        let buf = self.buf;
        let mut i = open + 1;
        let mut escaped = false;
        loop {
            let (stop, high) = special(buf, i);
            if high {
                // Any end past the high byte will do: an element is checked whole.
                self.high_end = self.high_end.max(stop.unwrap_or(buf.len()) + 1);
            }
            let Some(q) = stop else {
                self.at = buf.len();
                return Err(Bad::Eof);
            };
            match buf[q] {
                b'"' => {
                    self.at = q + 1;
                    return Ok(RawStr { raw: &buf[open + 1..q], escaped });
                }
                b'\\' => {
                    escaped = true;
                    // The escaped byte is never the end of the string; the escape is checked
                    // when the string is decoded or skipped.
                    i = q + 2;
                    if i > buf.len() {
                        self.at = buf.len();
                        return Err(Bad::Eof);
                    }
                }
                // A control character.
                _ => {
                    self.at = q + 1;
                    return Err(Bad::Syntax);
                }
            }
        }
    }

    /// A scalar (number or literal) whose first byte `c` is at `p` (the last position read): the
    /// end of its text, which the cursor moves to.
    #[inline(always)]
    pub(crate) fn scalar_end(&mut self, p: usize, c: u8) -> Result<usize, Bad> {
        let end = match c {
            b'-' | b'0'..=b'9' => lexeme::number_end(self.buf, p),
            _ => lexeme::literal_end(self.buf, p),
        };
        self.settle(end)
    }

    /// A number at `p` (the last position read): its end and whether it has an exponent.
    #[inline(always)]
    pub(crate) fn number(&mut self, p: usize) -> Result<(usize, bool), Bad> {
        let read = lexeme::number_with_exponent(self.buf, p);
        self.settle(read.map(|(end, _)| end))?;
        read
    }

    /// Moves past a scalar that was read, or past the run of bytes a bad one spans (so that
    /// failures are reported no earlier than the stage that finds them).
    #[inline(always)]
    pub(crate) fn settle(&mut self, end: Result<usize, Bad>) -> Result<usize, Bad> {
        match end {
            Ok(end) => self.at = end,
            Err(_) => {
                // At most this far: a run of gigabytes (a sparse file of NULs) is not walked,
                // nor copied for the replay that words the failure.
                let from = self.at.min(self.buf.len());
                let rest = &self.buf[from..self.buf.len().min(from.saturating_add(SETTLE_MOST))];
                self.at += rest.iter().position(|&b| ends_run(b)).unwrap_or(rest.len());
            }
        }
        end
    }

    /// Checks the value whose first position is `first` and discards it; returns its end
    /// (exclusive). `level` is the nesting level it would have as an array or object.
    #[inline]
    pub(crate) fn skip(&mut self, first: Tok, level: u32, strings: Strings) -> Result<usize, Bad> {
        let (p, c) = first;
        match c {
            b'"' => self.skip_string(p, strings),
            b'{' | b'[' => self.skip_nested(first, level, strings),
            _ => self.scalar_end(p, c),
        }
    }

    /// A string whose opening quote is at `p`, checked as `strings` says; returns its end.
    #[inline(always)]
    fn skip_string(&mut self, p: usize, strings: Strings) -> Result<usize, Bad> {
        let s = self.string(p)?;
        if s.escaped {
            match strings {
                Strings::Decoded => drop(lexeme::unescape(s.raw)?),
                Strings::Ignored => lexeme::check_escapes(s.raw)?,
            }
        }
        Ok(p + s.raw.len() + 2)
    }

    /// A member of an object being skipped, from its key's first position `(q, c)`: the key is
    /// checked, and its value's first position returned.
    #[inline(always)]
    fn skip_key(&mut self, (q, c): Tok, strings: Strings) -> Result<Tok, Bad> {
        if c != b'"' {
            return Err(Bad::Syntax);
        }
        self.skip_string(q, strings)?;
        self.expect(b':')?;
        self.tok()
    }

    /// [`Cursor::skip`] of an array or object, in one loop rather than a call per value (the
    /// arrays of arrays in `args`, `"Input Dims": [[8, 2048], []]`, are most of what is skipped).
    /// `objects` holds, a bit per container still open, whether it is an object, the innermost
    /// lowest: 128 bits cover the nesting limit.
    fn skip_nested(&mut self, first: Tok, level: u32, strings: Strings) -> Result<usize, Bad> {
        let mut objects: u128 = 0;
        let mut depth: u32 = 0;
        let (mut p, mut c) = first;
        loop {
            // A value starts at `p`; `end` is where it ends, unless it opens a container that
            // holds something.
            let mut end = match c {
                b'{' | b'[' => {
                    if level + depth >= MAX_LEVEL {
                        return Err(Bad::Syntax);
                    }
                    let object = c == b'{';
                    let next = self.tok()?;
                    if next.1 == if object { b'}' } else { b']' } {
                        next.0 + 1
                    } else {
                        objects = (objects << 1) | object as u128;
                        depth += 1;
                        (p, c) = if object { self.skip_key(next, strings)? } else { next };
                        continue;
                    }
                }
                b'"' => self.skip_string(p, strings)?,
                _ => self.scalar_end(p, c)?,
            };
            // After a value: the next in its container, or the container's end.
            loop {
                if depth == 0 {
                    return Ok(end);
                }
                let object = objects & 1 == 1;
                match self.tok()? {
                    (_, b',') => {
                        let next = self.tok()?;
                        (p, c) = if object { self.skip_key(next, strings)? } else { next };
                        break;
                    }
                    (e, b'}') if object => end = e + 1,
                    (e, b']') if !object => end = e + 1,
                    _ => return Err(Bad::Syntax),
                }
                objects >>= 1;
                depth -= 1;
            }
        }
    }

    /// serde_json decodes every string of an event, so invalid UTF-8 in one fails the event; only
    /// events with a string that holds a byte ≥ 0x80 need the check. Whether the element
    /// `start..end` is all ASCII.
    #[inline]
    pub(crate) fn check_utf8(&self, start: usize, end: usize) -> Result<bool, Bad> {
        if self.high_end <= start {
            return Ok(true);
        }
        match std::str::from_utf8(&self.buf[start..end]) {
            Ok(_) => Ok(false),
            Err(_) => Err(Bad::Syntax),
        }
    }
}

/// The first position at or after `i` that holds `"`, `\` or a control character (`None` when the
/// buffer ends first), and whether a byte ≥ 0x80 lies before it.
#[inline(always)]
fn special(buf: &[u8], mut i: usize) -> (Option<usize>, bool) {
    let mut high = false;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; every load reads 16 bytes inside `buf`.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let space = _mm_set1_epi8(0x20);
            while i + 16 <= buf.len() {
                let x = _mm_loadu_si128(buf.as_ptr().add(i) as *const __m128i);
                // As signed bytes, control characters (0x00..0x1f) and bytes ≥ 0x80 are the ones
                // below 0x20: one comparison finds both.
                let hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                    _mm_cmplt_epi8(x, space),
                );
                let mask = _mm_movemask_epi8(hit) as u32;
                if mask == 0 {
                    i += 16;
                    continue;
                }
                let q = i + mask.trailing_zeros() as usize;
                if buf[q] < 0x80 {
                    return (Some(q), high);
                }
                high = true;
                i = q + 1;
            }
        }
    }
    while let Some(&b) = buf.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return (Some(i), high);
        }
        high |= b >= 0x80;
        i += 1;
    }
    (None, high)
}

/// The first position at or after `p` that is not JSON whitespace (the buffer's length if none).
/// Byte by byte: Kineto's runs are short (one space, or a line feed and a few), and a 16-byte
/// search for their end made the whole read a sixth slower.
#[inline(always)]
fn skip_ws(buf: &[u8], mut p: usize) -> usize {
    while buf.get(p).is_some_and(|&c| is_ws(c)) {
        p += 1;
    }
    p
}
