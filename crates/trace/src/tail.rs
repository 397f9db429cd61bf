//! What may follow the JSON document: whitespace, to the end of the input, and nothing else.
//!
//! A file holding two traces (two documents written one after the other, or two gzip members
//! each holding a trace) or a document followed by garbage was judged on its first trace alone,
//! the rest dropped without a word. Both parsers now read to the end: text after the document is
//! an error naming where it starts, and the input's own failures after the document (a gzip
//! member whose checksum fails, garbage after the last member) are errors too.

use std::io::{self, BufRead, BufReader, Read};

use crate::event::TimelineBuilder;
use crate::simple;

/// Text after the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trailing {
    /// Its first byte, counted from the start of the JSON text.
    pub at: u64,
    /// It opens an object or an array: a second document.
    pub second: bool,
    /// Its first bytes, for the message.
    pub excerpt: String,
}

impl Trailing {
    /// The message; `gzip` when the offset is into decompressed text.
    pub(crate) fn describe(&self, gzip: bool) -> String {
        let of = if gzip { " of the decompressed text" } else { "" };
        if self.second {
            format!(
                "a second JSON document at byte {}{of}: two traces in one file? (one trace per file is read)",
                self.at
            )
        } else {
            format!("unexpected text after the JSON document at byte {}{of}: {:?}", self.at, self.excerpt)
        }
    }
}

/// Why reading stopped short of a usable document.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The reference parser's error (invalid or truncated text, or the input's error inside the
    /// document), as it words it.
    Json(serde_json::Error),
    /// Text after the document.
    Trailing(Trailing),
    /// The input failed after the document was read.
    After(io::Error),
}

/// A document read: `Ok(saw_events)`, or why not.
pub(crate) type Outcome = Result<bool, Stop>;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Bytes of the text after the document quoted in the message.
const EXCERPT: usize = 24;

fn trailing(bytes: &[u8], at: u64) -> Stop {
    let excerpt = String::from_utf8_lossy(&bytes[..bytes.len().min(EXCERPT)]).into_owned();
    Stop::Trailing(Trailing { at, second: matches!(bytes.first(), Some(b'{' | b'[')), excerpt })
}

/// The rest of an in-memory input, from offset `at` of the text.
pub(crate) fn check_tail(tail: &[u8], at: u64) -> Result<(), Stop> {
    match tail.iter().position(|&b| !is_ws(b)) {
        Some(i) => Err(trailing(&tail[i..], at + i as u64)),
        None => Ok(()),
    }
}

/// The rest of a stream: `head` (from offset `at` of the text), then `rest`, read to its end so
/// that the input's own checks (gzip's CRC32 and length) run.
pub(crate) fn check_rest(head: &[u8], at: u64, rest: &mut dyn Read) -> Result<(), Stop> {
    check_chunk(head, at, rest)?;
    let mut at = at + head.len() as u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match rest.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                check_chunk(&buf[..n], at, rest)?;
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Stop::After(e)),
        }
    }
}

/// One chunk of a stream's rest, from offset `at`. Text after the document that starts near the
/// chunk's end is quoted with the bytes that follow it in `rest`, so that the message is the
/// same whatever the size of the chunks a reader happens to hold (the fast reader's blocks, the
/// reference's buffer) and the same as for the text in memory.
fn check_chunk(chunk: &[u8], at: u64, rest: &mut dyn Read) -> Result<(), Stop> {
    let Some(i) = chunk.iter().position(|&b| !is_ws(b)) else {
        return Ok(());
    };
    let mut bytes = chunk[i..chunk.len().min(i + EXCERPT)].to_vec();
    let mut more = [0u8; EXCERPT];
    while bytes.len() < EXCERPT {
        match rest.read(&mut more[..EXCERPT - bytes.len()]) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&more[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // The text after the document is the first thing wrong: it is what is reported.
            Err(_) => break,
        }
    }
    Err(trailing(&bytes, at + i as u64))
}

/// The reference parser over an in-memory document, then what follows it.
pub(crate) fn simple_slice(buf: &[u8], builder: &mut TimelineBuilder) -> Outcome {
    let mut de = serde_json::Deserializer::from_slice(buf);
    let saw = simple::parse(&mut de, builder).map_err(Stop::Json)?;
    match de.end() {
        Ok(()) => Ok(saw),
        // serde_json reports the first byte after the document that is not whitespace, by line
        // and 1-based column.
        Err(e) => {
            let at = offset_of(buf, e.line(), e.column());
            Err(trailing(&buf[at.min(buf.len())..], at as u64))
        }
    }
}

/// The offset of line `line` (1-based), column `column` (1-based) in `buf`.
fn offset_of(buf: &[u8], line: usize, column: usize) -> usize {
    let line_start = match line {
        0 | 1 => 0,
        n => memchr::memchr_iter(b'\n', buf).nth(n - 2).map_or(buf.len(), |i| i + 1),
    };
    line_start + column.saturating_sub(1)
}

/// The reference parser over `prefix` (a synthetic opening, `fast::replay::prefix`) then `text`:
/// whether it saw events, and where in `text` the document ends. What follows is the caller's.
#[cfg(feature = "candidates")]
pub(crate) fn simple_prefixed(
    prefix: &[u8],
    text: &[u8],
    builder: &mut TimelineBuilder,
) -> Result<(bool, usize), serde_json::Error> {
    let whole = io::Cursor::new(prefix).chain(text);
    let mut br = BufReader::with_capacity(1 << 16, Tally { inner: whole, read: 0 });
    let saw = {
        let mut de = serde_json::Deserializer::from_reader(&mut br);
        simple::parse(&mut de, builder)?
    };
    // As in `simple_stream`: serde_json reads nothing past a document's closing bracket.
    let end = br.get_ref().read - br.buffer().len() as u64 - prefix.len() as u64;
    Ok((saw, end as usize))
}

/// Counts the bytes read through it.
struct Tally<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Tally<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// What the reference parser takes from a stream (one byte at a time): the first byte that is
/// not whitespace, the last byte, and whether it met the end.
struct Watch<R> {
    inner: R,
    first: Option<u8>,
    last: Option<u8>,
    ended: bool,
}

impl<R: Read> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.ended = true;
        }
        if self.first.is_none() {
            self.first = buf[..n].iter().copied().find(|&b| !is_ws(b));
        }
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }
}

/// The reference parser over a stream, then the rest of the stream.
pub(crate) fn simple_stream(reader: impl Read, builder: &mut TimelineBuilder) -> Outcome {
    let mut br = BufReader::with_capacity(1 << 16, Tally { inner: reader, read: 0 });
    let mut watch = Watch { inner: &mut br, first: None, last: None, ended: false };
    let saw = {
        let mut de = serde_json::Deserializer::from_reader(&mut watch);
        simple::parse(&mut de, builder).map_err(Stop::Json)?
    };
    let (first, last, ended) = (watch.first, watch.last, watch.ended);
    // serde_json reads nothing past a document's closing bracket or quote, so what it took from
    // the buffer is the document; except after a number, which ends only at a byte that cannot
    // continue it. serde_json took that byte and keeps it: it belongs to what follows.
    let mut at = br.get_ref().read - br.buffer().len() as u64;
    let mut head = br.buffer().to_vec();
    br.consume(head.len());
    if matches!(first, Some(b'-' | b'0'..=b'9')) && !ended {
        if let Some(b) = last {
            head.insert(0, b);
            at -= 1;
        }
    }
    check_rest(&head, at, &mut br)?;
    Ok(saw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str) -> Result<bool, String> {
        simple_slice(text.as_bytes(), &mut TimelineBuilder::new()).map_err(|e| format!("{e:?}"))
    }

    fn stream(text: &str) -> Result<bool, String> {
        simple_stream(text.as_bytes(), &mut TimelineBuilder::new()).map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn the_rest_must_be_whitespace() {
        for (text, want) in [
            ("[]", Ok(true)),
            ("{\"traceEvents\":[]}\n\n \t\r\n", Ok(true)),
            ("{\"a\":1}", Ok(false)),
            ("[]x", Err((2, false, "x"))),
            ("[] \n  {\"traceEvents\":[]}", Err((6, true, "{\"traceEvents\":[]}"))),
            ("{\"traceEvents\":[]}\n\n[1]", Err((20, true, "[1]"))),
            ("[{\"ts\":1}]\n  \n garbage", Err((15, false, "garbage"))),
            ("[]5", Err((2, false, "5"))),
        ] {
            let want = read_alike(text, want);
            if let Err(e) = &want {
                // The offset is the byte's in the text.
                let at: usize = e.split("at: ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
                assert!(!is_ws(text.as_bytes()[at]), "{text:?}");
                assert!(text[..at].trim_end().ends_with([']', '}']), "{text:?}");
            }
        }
    }

    /// `text` in memory, as a stream, and as a stream that hands out one byte at a time must
    /// all come to `want`: `Ok(saw_events)`, or text after the document at (offset, a second
    /// document, quote). Returns `want` as the readers word it.
    #[track_caller]
    fn read_alike(text: &str, want: Result<bool, (u64, bool, &str)>) -> Result<bool, String> {
        let want = want.map_err(|(at, second, excerpt)| {
            format!("{:?}", Stop::Trailing(Trailing { at, second, excerpt: excerpt.into() }))
        });
        assert_eq!(slice(text), want, "slice {text:?}");
        assert_eq!(stream(text), want, "stream {text:?}");
        let dribbled = simple_stream(Dribble(text.as_bytes()), &mut TimelineBuilder::new());
        assert_eq!(dribbled.map_err(|e| format!("{e:?}")), want, "dribbled {text:?}");
        want
    }

    /// Bytes one at a time.
    struct Dribble<'a>(&'a [u8]);
    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn the_quoted_text_does_not_depend_on_where_a_chunk_ends() {
        // Found by fuzzing (trace_gzip/excerpt-cut-at-a-block-end): the fast reader's block ended
        // within the quoted text, and its message quoted less than the reference's.
        let text = b"[] \n garbage after the document, and more";
        let want = Trailing { at: 5, second: false, excerpt: "garbage after the docume".into() };
        for cut in 2..text.len() {
            let got = check_rest(&text[2..cut], 2, &mut Dribble(&text[cut..]));
            assert!(matches!(&got, Err(Stop::Trailing(t)) if *t == want), "cut at {cut}: {got:?}");
        }
        assert!(
            matches!(simple_slice(text, &mut TimelineBuilder::new()), Err(Stop::Trailing(t)) if t == want)
        );
    }

    #[test]
    fn a_number_s_end_is_where_the_next_value_starts() {
        // Found by fuzzing (trace_gzip/number-then-a-second-document): serde_json takes the byte
        // after a top-level number from the stream to see the number end; the stream read it as
        // part of the document and placed what follows one byte late. (The reference accepts a
        // float at the top level as a document without events; an integer is a type error.)
        for (text, want) in [
            ("6.5[1]", Err((3, true, "[1]"))),
            ("-5.25 x", Err((6, false, "x"))),
            ("12.0\n", Ok(false)),
            ("12.0", Ok(false)),
            ("1.5e3{}", Err((5, true, "{}"))),
            ("666666666666666666666666[", Err((24, true, "["))),
        ] {
            let _ = read_alike(text, want);
        }
    }

    #[test]
    fn an_error_after_the_document_is_the_input_s() {
        let failing = io::Cursor::new(b"[]  ".to_vec()).chain(Failing);
        let got = simple_stream(failing, &mut TimelineBuilder::new());
        assert!(matches!(got, Err(Stop::After(e)) if e.to_string() == "broken"));
    }

    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("broken"))
        }
    }
}
