//! Stage two of the fast parser: walks stage one's positions with the JSON grammar, checking
//! what it skips by serde_json's rules without keeping it.

use std::borrow::Cow;

use super::lexeme::{self, Bad};
use super::scan::Tokens;

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

/// The grammar over one buffer.
pub(crate) struct Cursor<'a> {
    /// The bytes.
    pub buf: &'a [u8],
    tokens: Tokens<'a>,
}

impl<'a> Cursor<'a> {
    /// Starts at `start`, outside any string.
    pub(crate) fn new(buf: &'a [u8], start: usize) -> Self {
        Cursor { buf, tokens: Tokens::new(buf, start) }
    }

    /// A position at or past every position read: where a failure is reported.
    pub(crate) fn reached(&self) -> usize {
        self.tokens.reached()
    }

    /// The next position and its byte.
    #[inline(always)]
    pub(crate) fn tok(&mut self) -> Result<Tok, Bad> {
        match self.tokens.next() {
            Some(p) => Ok((p, self.buf[p])),
            None => Err(Bad::Eof),
        }
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

    /// The string whose opening quote is at `open`.
    #[inline(always)]
    pub(crate) fn string(&mut self, open: usize) -> Result<RawStr<'a>, Bad> {
        let (p, c) = self.tok()?;
        if c == b'"' {
            return Ok(RawStr { raw: &self.buf[open + 1..p], escaped: false });
        }
        self.string_from(open, (p, c))
    }

    /// The string whose opening quote is at `open` and whose next position, `next`, was read.
    #[inline(never)]
    pub(crate) fn string_from(&mut self, open: usize, next: Tok) -> Result<RawStr<'a>, Bad> {
        let mut escaped = false;
        let (mut p, mut c) = next;
        loop {
            match c {
                b'"' => return Ok(RawStr { raw: &self.buf[open + 1..p], escaped }),
                b'\\' => escaped = true,
                // A control character.
                _ => return Err(Bad::Syntax),
            }
            (p, c) = self.tok()?;
        }
    }

    /// A scalar (number or literal) at `p`: the end of its text.
    #[inline(always)]
    pub(crate) fn scalar_end(&self, p: usize, c: u8) -> Result<usize, Bad> {
        match c {
            b'-' | b'0'..=b'9' => lexeme::number_end(self.buf, p),
            _ => lexeme::literal_end(self.buf, p),
        }
    }

    /// Checks the value whose first position is `first` and discards it; returns its end
    /// (exclusive). `level` is the nesting level it would have as an array or object.
    pub(crate) fn skip(&mut self, first: Tok, level: u32, strings: Strings) -> Result<usize, Bad> {
        let (p, c) = first;
        match c {
            b'"' => {
                let s = self.string(p)?;
                if s.escaped {
                    match strings {
                        Strings::Decoded => drop(lexeme::unescape(s.raw)?),
                        Strings::Ignored => lexeme::check_escapes(s.raw)?,
                    }
                }
                Ok(p + s.raw.len() + 2)
            }
            b'{' => {
                if level >= MAX_LEVEL {
                    return Err(Bad::Syntax);
                }
                let (mut q, mut c) = self.tok()?;
                if c == b'}' {
                    return Ok(q + 1);
                }
                loop {
                    if c != b'"' {
                        return Err(Bad::Syntax);
                    }
                    let key = self.string(q)?;
                    if strings == Strings::Decoded && key.escaped {
                        drop(lexeme::unescape(key.raw)?);
                    } else if key.escaped {
                        lexeme::check_escapes(key.raw)?;
                    }
                    self.expect(b':')?;
                    let v = self.tok()?;
                    self.skip(v, level + 1, strings)?;
                    match self.tok()? {
                        (_, b',') => (q, c) = self.tok()?,
                        (e, b'}') => return Ok(e + 1),
                        _ => return Err(Bad::Syntax),
                    }
                }
            }
            b'[' => {
                if level >= MAX_LEVEL {
                    return Err(Bad::Syntax);
                }
                let mut v = self.tok()?;
                if v.1 == b']' {
                    return Ok(v.0 + 1);
                }
                loop {
                    self.skip(v, level + 1, strings)?;
                    match self.tok()? {
                        (_, b',') => v = self.tok()?,
                        (e, b']') => return Ok(e + 1),
                        _ => return Err(Bad::Syntax),
                    }
                }
            }
            _ => self.scalar_end(p, c),
        }
    }

    /// serde_json decodes every string of an event, so invalid UTF-8 in one fails the event; only
    /// events that share a block with a byte ≥ 0x80 need the check.
    #[inline]
    pub(crate) fn check_utf8(&self, start: usize, end: usize) -> Result<(), Bad> {
        if self.tokens.high_end() > start && std::str::from_utf8(&self.buf[start..end]).is_err() {
            return Err(Bad::Syntax);
        }
        Ok(())
    }
}
