//! One element of the events array: the keys the analysis reads are located (as byte ranges, so
//! nothing is copied or decoded twice) and turned into a [`RawEvent`] once the element is complete.

use std::borrow::Cow;

use super::cursor::{Cursor, Strings, Tok, MAX_LEVEL};
use super::lexeme::{self, Bad};
use super::members::{Member, Object, Place, Slot};
use crate::event::{RawEvent, Scalar, TimelineBuilder};

/// What a located value is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Missing,
    Num,
    /// A number with an exponent, whose text serde_json rewrites.
    NumExp,
    /// A number in Kineto's form of microseconds, already converted (`ns`).
    Micros,
    Str,
    /// A string with escapes, already checked.
    Escaped,
    Other,
}

/// A value located in the text: a number's text, or a string's bytes between its quotes.
#[derive(Debug, Clone, Copy, Default)]
struct Field {
    kind: Kind,
    start: usize,
    end: usize,
    /// The nanoseconds of a [`Kind::Micros`].
    ns: i64,
}

/// Turning a field into text cannot fail: escaped strings were decoded when read, and the element
/// was checked as UTF-8 before its fields are taken; the empty fallbacks are never reached.
impl Field {
    /// The string's text; `ascii` when the element holds no byte ≥ 0x80.
    #[inline]
    fn str<'a>(&self, buf: &'a [u8], ascii: bool) -> Cow<'a, str> {
        let raw = &buf[self.start..self.end];
        if self.kind == Kind::Escaped {
            Cow::Owned(lexeme::unescape(raw).unwrap_or_default())
        } else if ascii {
            debug_assert!(raw.is_ascii());
            // SAFETY: ASCII is UTF-8. (Checking kernel names of kilobytes again cost 2% of a run.)
            Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) })
        } else {
            Cow::Borrowed(std::str::from_utf8(raw).unwrap_or_default())
        }
    }

    /// `ph`, `cat`, `name`: kept when a string.
    #[inline]
    fn text<'a>(&self, buf: &'a [u8], ascii: bool) -> Option<Cow<'a, str>> {
        match self.kind {
            Kind::Str => Some(match known(&buf[self.start..self.end]) {
                Some(k) => Cow::Borrowed(k),
                None => self.str(buf, ascii),
            }),
            Kind::Escaped => Some(self.str(buf, ascii)),
            _ => None,
        }
    }

    #[inline]
    fn scalar<'a>(&self, buf: &'a [u8], ascii: bool) -> Scalar<'a> {
        let number = || number_str(&buf[self.start..self.end]);
        match self.kind {
            Kind::Missing => Scalar::Missing,
            Kind::Num => Scalar::Num(Cow::Borrowed(number())),
            Kind::NumExp => Scalar::Num(lexeme::number_text(number())),
            Kind::Micros => Scalar::Micros(Cow::Borrowed(number()), self.ns),
            Kind::Str | Kind::Escaped => Scalar::Str(self.str(buf, ascii)),
            Kind::Other => Scalar::Other,
        }
    }
}

/// The text of a number field.
#[inline]
fn number_str(raw: &[u8]) -> &str {
    debug_assert!(raw.is_ascii());
    // SAFETY: number fields are only made from text that `lexeme::number` accepted, which is ASCII
    // digits, signs, `.`, `e` and `E`; ASCII is UTF-8. (`str::from_utf8` here cost 5% of a run.)
    unsafe { std::str::from_utf8_unchecked(raw) }
}

/// The located values of one event.
#[derive(Debug, Default)]
struct Fields {
    ph: Field,
    cat: Field,
    name: Field,
    pid: Field,
    tid: Field,
    ts: Field,
    dur: Field,
    device: Field,
    stream: Field,
    correlation: Field,
}

/// Common values of `ph` and `cat`, which need no UTF-8 check.
fn known(raw: &[u8]) -> Option<&'static str> {
    Some(match raw {
        b"X" => "X",
        b"f" => "f",
        b"s" => "s",
        b"i" => "i",
        b"M" => "M",
        b"kernel" => "kernel",
        b"cpu_op" => "cpu_op",
        b"ac2g" => "ac2g",
        b"cuda_runtime" => "cuda_runtime",
        b"cuda_driver" => "cuda_driver",
        b"gpu_memcpy" => "gpu_memcpy",
        b"gpu_memset" => "gpu_memset",
        b"user_annotation" => "user_annotation",
        b"gpu_user_annotation" => "gpu_user_annotation",
        b"python_function" => "python_function",
        _ => return None,
    })
}

impl<'a> Cursor<'a> {
    /// `ts` or `dur`: in Kineto's form (digits, up to three decimals) read and converted in one
    /// pass; otherwise located like any value.
    #[inline(always)]
    fn time(&mut self, v: Tok, level: u32) -> Result<Field, Bad> {
        let (p, c) = v;
        // A leading zero before another digit is not JSON; the general path words that.
        if c.is_ascii_digit() && !(c == b'0' && self.buf.get(p + 1).is_some_and(u8::is_ascii_digit)) {
            if let Some((len, ns)) = crate::time::kineto_micros_prefix(&self.buf[p..]) {
                if self.buf.get(p + len).is_some_and(|&b| lexeme::ends_scalar(b)) {
                    self.settle(Ok(p + len))?;
                    return Ok(Field { kind: Kind::Micros, start: p, end: p + len, ns });
                }
            }
        }
        self.field(v, level)
    }

    /// Locates the value whose first position is `v`; `level` is its nesting level as a container.
    #[inline(always)]
    fn field(&mut self, v: Tok, level: u32) -> Result<Field, Bad> {
        let (p, c) = v;
        match c {
            b'"' => {
                let s = self.string(p)?;
                let kind = if s.escaped {
                    // Checked now: a later duplicate key may replace it, but serde decodes it.
                    lexeme::unescape(s.raw)?;
                    Kind::Escaped
                } else {
                    Kind::Str
                };
                Ok(Field { kind, start: p + 1, end: p + 1 + s.raw.len(), ns: 0 })
            }
            b'-' | b'0'..=b'9' => {
                let (end, exponent) = self.number(p)?;
                Ok(Field { kind: if exponent { Kind::NumExp } else { Kind::Num }, start: p, end, ns: 0 })
            }
            _ => self.skip(v, level, Strings::Decoded).map(|_| Field {
                kind: Kind::Other,
                start: p,
                end: p,
                ns: 0,
            }),
        }
    }

    /// One element of the events array, whose first position is `first`, pushed to `builder`;
    /// returns the end of its text (exclusive). `level` is its nesting level as an object.
    pub(crate) fn element(
        &mut self,
        first: Tok,
        level: u32,
        builder: &mut TimelineBuilder,
    ) -> Result<usize, Bad> {
        let (start, c) = first;
        if c != b'{' {
            let end = self.skip(first, level, Strings::Decoded)?;
            self.check_utf8(start, end)?;
            builder.push_non_object();
            return Ok(end);
        }
        if level >= MAX_LEVEL {
            return Err(Bad::Syntax);
        }
        let mut f = Fields::default();
        let mut place = Place::start(Object::Event);
        let inner = level + 1;
        let close = loop {
            let (slot, v) = match self.member(Object::Event, &mut place)? {
                Member::Close(p) => break p,
                Member::Value(slot, v) => (slot, v),
            };
            match slot {
                Slot::Ph => f.ph = self.field(v, inner)?,
                Slot::Cat => f.cat = self.field(v, inner)?,
                Slot::Name => f.name = self.field(v, inner)?,
                Slot::Pid => f.pid = self.field(v, inner)?,
                Slot::Tid => f.tid = self.field(v, inner)?,
                Slot::Ts => f.ts = self.time(v, inner)?,
                Slot::Dur => f.dur = self.time(v, inner)?,
                Slot::Args => self.args(v, inner, &mut f)?,
                _ => drop(self.skip(v, inner, Strings::Decoded)?),
            }
        };
        let ascii = self.check_utf8(start, close + 1)?;
        let buf = self.buf;
        let ph = f.ph.text(buf, ascii);
        if ph.as_deref() != Some("X") {
            // A metadata event may be launchguard's context: rare, so read again whole. (`ph`
            // decoded: `"\u004d"` is `M` to the reference parser too.)
            if ph.as_deref() == Some("M") && f.name.text(buf, ascii).as_deref() == Some(crate::CONTEXT_EVENT)
            {
                builder.push_context_element(&buf[start..close + 1]);
            }
            // Flows and other phases, half the events of a trace: only the time is looked at.
            builder.push_not_complete(&f.ts.scalar(buf, ascii));
            return Ok(close + 1);
        }
        builder.push(&RawEvent {
            ph,
            cat: f.cat.text(buf, ascii),
            name: f.name.text(buf, ascii),
            pid: f.pid.scalar(buf, ascii),
            tid: f.tid.scalar(buf, ascii),
            ts: f.ts.scalar(buf, ascii),
            dur: f.dur.scalar(buf, ascii),
            device: f.device.scalar(buf, ascii),
            stream: f.stream.scalar(buf, ascii),
            correlation: f.correlation.scalar(buf, ascii),
        });
        Ok(close + 1)
    }

    /// `args`: only `device`, `stream` and `correlation` are kept; a later `args` replaces an
    /// earlier one, as in a JSON map.
    fn args(&mut self, v: Tok, level: u32, f: &mut Fields) -> Result<(), Bad> {
        f.device = Field::default();
        f.stream = Field::default();
        f.correlation = Field::default();
        if v.1 != b'{' {
            return self.skip(v, level, Strings::Decoded).map(drop);
        }
        if level >= MAX_LEVEL {
            return Err(Bad::Syntax);
        }
        let mut place = Place::start(Object::Args);
        let inner = level + 1;
        loop {
            let (slot, v) = match self.member(Object::Args, &mut place)? {
                Member::Close(_) => return Ok(()),
                Member::Value(slot, v) => (slot, v),
            };
            match slot {
                Slot::Device => f.device = self.field(v, inner)?,
                Slot::Stream => f.stream = self.field(v, inner)?,
                Slot::Correlation => f.correlation = self.field(v, inner)?,
                _ => drop(self.skip(v, inner, Strings::Decoded)?),
            }
        }
    }
}
