//! Gzip members inflated with the first member's CRC-32 left to the reader of the text.
//!
//! flate2's `MultiGzDecoder` checks each member's CRC-32 on the thread that inflates, after each
//! read: on the development machine's EPYC that is 18 ms of the 57 ms it takes to decompress a
//! 300 MB trace (zlib-rs's CRC-32, 16.6 GB/s). The parallel gzip reader
//! ([`crate::fast`]'s `gzip_par`) has one thread inflating while all the others parse, so that
//! thread sets the pace; the CRC-32 can be summed by the parsing threads instead, a part each,
//! and the sums joined in order ([`combine`]).
//!
//! Only the first member's check is left out: later members (rare: `cat a.gz b.gz`, BGZF) are
//! checked here, as flate2 does, so that the reader has one range of text to sum. Its length
//! (ISIZE) is checked here too. Everything else this decoder does not expect (a header CRC, bytes
//! after the last member that are not a gzip header, a cut member) is an error: the reader then
//! reads the file again with flate2, whose words name the damage. So this decoder only ever adds a
//! second read; it never accepts what flate2 refuses, and a file it reads to the end gives the
//! same bytes as flate2.

use std::io::{self, BufRead, Read};
use std::sync::{Arc, OnceLock};

use flate2::{Decompress, FlushDecompress, Status};

/// The first member's check, for the reader to make: the CRC-32 its trailer holds, and how many
/// bytes of text the member inflated to (its ISIZE, already checked, is this modulo 2³²).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FirstMember {
    /// The CRC-32 of the member's text, from its trailer.
    pub(crate) crc: u32,
    /// The member's text, in bytes.
    pub(crate) len: u64,
}

/// The longest file name or comment in a gzip header that flate2 reads (its `MAX_HEADER_BUF`).
const MAX_HEADER_FIELD: usize = 65_535;

/// The flag bits of a gzip header that RFC 1952 reserves (they must be zero).
const RESERVED: u8 = 0xe0;

/// Bytes after a whole member that do not start another.
const TRAILING_GARBAGE: &str = "bytes after the last gzip member are not gzip (trailing garbage)";

/// A header whose first bytes are not gzip's, or whose compression method is not deflate.
const NOT_GZIP: &str = "a gzip member's header is not gzip (its magic number or method)";

/// What a header with a reserved flag bit set is said to do.
const RESERVED_FLAG: &str = "sets a reserved header flag bit";

/// A header this decoder leaves to flate2 (a header CRC-16).
const LEFT_TO_FLATE2: &str = "a gzip header flag this decoder leaves to flate2";

/// What is wrong with the gzip bytes of `raw` that flate2 calls an invalid header, found by
/// reading them again with this decoder: a reserved flag bit (and in which member), bytes after
/// the last member that are not gzip, a member that is not gzip. `None` when this decoder finds
/// nothing to say (a header CRC-16, which only flate2 checks). Reads at most `max_text` bytes of
/// text, as the read that failed did.
pub(crate) fn header_fault(raw: impl Read, max_text: u64) -> Option<String> {
    let (members, _) = Members::new(io::BufReader::with_capacity(1 << 16, raw));
    match io::copy(&mut members.take(max_text), &mut io::sink()) {
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            let e = e.to_string();
            let header = e == TRAILING_GARBAGE || e == NOT_GZIP || e.contains(RESERVED_FLAG);
            header.then_some(e)
        }
        _ => None,
    }
}

/// Where the decoder leaves the first member's check once its trailer is read.
pub(crate) type Pending = Arc<OnceLock<FirstMember>>;

/// The CRC-32 of `bytes` following `crc` (of the bytes before them; 0 for none).
pub(crate) fn crc32(crc: u32, bytes: &[u8]) -> u32 {
    zlib_rs::crc32::crc32(crc, bytes)
}

/// The CRC-32 of two texts one after the other, from the CRC-32 of each and the second's length.
pub(crate) fn combine(first: u32, second: u32, second_len: u64) -> u32 {
    zlib_rs::crc32::crc32_combine(first, second, second_len)
}

/// What the decoder reads next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// A member's header (at the start, or after a member's trailer when more bytes follow).
    Header,
    /// A member's deflate data.
    Body,
    /// Nothing: the last member's trailer has been read.
    End,
}

/// Gzip members read from `inner`, inflated; see the module's documentation.
pub(crate) struct Members<R> {
    inner: R,
    inflate: Decompress,
    next: Next,
    /// Members whose trailer has been read.
    members: u64,
    /// Text of the member being inflated so far.
    len: u64,
    /// Its CRC-32 so far (members after the first).
    crc: u32,
    first: Pending,
}

fn bad(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn cut() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the gzip stream ends early")
}

impl<R: BufRead> Members<R> {
    /// A decoder of the gzip bytes of `inner`, and where it leaves the first member's check.
    pub(crate) fn new(inner: R) -> (Self, Pending) {
        let first = Pending::default();
        let members = Members {
            inner,
            inflate: Decompress::new(false),
            next: Next::Header,
            members: 0,
            len: 0,
            crc: 0,
            first: Arc::clone(&first),
        };
        (members, first)
    }

    /// The next byte, `None` at the end of the input.
    fn byte(&mut self) -> io::Result<Option<u8>> {
        let b = loop {
            match self.inner.fill_buf() {
                Ok(buf) => break buf.first().copied(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        if b.is_some() {
            self.inner.consume(1);
        }
        Ok(b)
    }

    fn need(&mut self) -> io::Result<u8> {
        self.byte()?.ok_or_else(cut)
    }

    /// Reads a member's header (RFC 1952, 2.3.1), or finds the end of the input after a member.
    fn header(&mut self) -> io::Result<()> {
        let Some(id1) = self.byte()? else {
            if self.members == 0 {
                return Err(cut());
            }
            self.next = Next::End;
            return Ok(());
        };
        if id1 != 0x1f && self.members > 0 {
            return Err(bad(TRAILING_GARBAGE));
        }
        let id2 = self.need()?;
        if id2 != 0x8b && self.members > 0 {
            return Err(bad(TRAILING_GARBAGE));
        }
        let (cm, flags) = (self.need()?, self.need()?);
        if (id1, id2, cm) != (0x1f, 0x8b, 8) {
            return Err(bad(NOT_GZIP));
        }
        if flags & RESERVED != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "gzip member {} {RESERVED_FLAG} (FLG 0x{flags:02x}; RFC 1952 reserves 0x{RESERVED:02x}): the file is damaged",
                    self.members + 1
                ),
            ));
        }
        // FHCRC (a CRC-16 of the header, which flate2 checks): left to flate2, whose read words
        // it.
        if flags & 0b10 != 0 {
            return Err(bad(LEFT_TO_FLATE2));
        }
        for _ in 0..6 {
            self.need()?; // MTIME, XFL, OS
        }
        if flags & 0b100 != 0 {
            let xlen = u16::from_le_bytes([self.need()?, self.need()?]);
            for _ in 0..xlen {
                self.need()?;
            }
        }
        // FNAME, then FCOMMENT: each up to its NUL, and no longer than flate2 allows, so that a
        // member it refuses is refused here too (the first member's header is flate2's to read;
        // this one reads the later members' on many cores).
        for flag in [0b1000, 0b1_0000] {
            if flags & flag != 0 {
                let mut field = 0;
                while self.need()? != 0 {
                    field += 1;
                    if field > MAX_HEADER_FIELD {
                        return Err(bad("a gzip header field too long"));
                    }
                }
            }
        }
        self.inflate.reset(false);
        self.len = 0;
        self.crc = 0;
        self.next = Next::Body;
        Ok(())
    }

    /// Reads a member's trailer and checks it: its length here, its CRC-32 here except for the
    /// first member's, which is left for the reader.
    fn trailer(&mut self) -> io::Result<()> {
        let mut t = [0u8; 8];
        for b in &mut t {
            *b = self.need()?;
        }
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let isize = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if isize != self.len as u32 {
            return Err(bad("a gzip member's length check fails"));
        }
        if self.members == 0 {
            let _ = self.first.set(FirstMember { crc, len: self.len });
        } else if crc != self.crc {
            return Err(bad("a gzip member's CRC-32 check fails"));
        }
        self.members += 1;
        self.next = Next::Header;
        Ok(())
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.next {
                Next::End => return Ok(0),
                Next::Header => self.header()?,
                Next::Body => {
                    let input = loop {
                        match self.inner.fill_buf() {
                            Ok(input) => break input,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e),
                        }
                    };
                    let at_end = input.is_empty();
                    let (before_in, before_out) = (self.inflate.total_in(), self.inflate.total_out());
                    let status = self
                        .inflate
                        .decompress(input, buf, FlushDecompress::None)
                        .map_err(|_| bad("corrupt deflate stream"))?;
                    let used = (self.inflate.total_in() - before_in) as usize;
                    let made = (self.inflate.total_out() - before_out) as usize;
                    self.inner.consume(used);
                    self.len += made as u64;
                    if self.members > 0 {
                        self.crc = crc32(self.crc, &buf[..made]);
                    }
                    if status == Status::StreamEnd {
                        self.trailer()?;
                    } else if made == 0 && used == 0 {
                        // With room to write and input to read, inflating always gets on.
                        return Err(if at_end { cut() } else { bad("inflating makes no progress") });
                    }
                    if made > 0 {
                        return Ok(made);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::{Compression, GzBuilder};

    use super::*;

    /// A member of `text`, with a name and a comment when `named`.
    fn member(text: &[u8], named: bool) -> Vec<u8> {
        let b = if named {
            GzBuilder::new().filename("t.json").comment("c").extra(vec![7; 300])
        } else {
            GzBuilder::new()
        };
        let mut e = b.write(Vec::new(), Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    /// All of the text, read in reads of `chunk` bytes over input read `input` bytes at a time.
    fn read_all(gz: &[u8], input: usize, chunk: usize) -> (io::Result<Vec<u8>>, Option<FirstMember>) {
        let (mut m, first) = Members::new(io::BufReader::with_capacity(input, gz));
        let mut out = Vec::new();
        let mut buf = vec![0u8; chunk];
        let r = loop {
            match m.read(&mut buf) {
                Ok(0) => break Ok(out),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => break Err(e),
            }
        };
        (r, first.get().copied())
    }

    fn flate2(gz: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(gz).read_to_end(&mut out).map(|_| out)
    }

    fn text(n: usize, seed: u8) -> Vec<u8> {
        (0..n).map(|i| b"{\"ph\":\"X\",\"ts\":12},"[(i * 7 + seed as usize) % 19]).collect()
    }

    #[test]
    fn members_inflate_as_flate2_inflates_them_and_the_first_is_left_to_check() {
        let (a, b, c) = (text(300_000, 1), text(5_000, 2), text(0, 3));
        let gz = [member(&a, true), member(&b, false), member(&c, true)].concat();
        for (input, chunk) in [(1, 1), (3, 7), (64, 1 << 10), (1 << 16, 1 << 20)] {
            let (out, first) = read_all(&gz, input, chunk);
            assert_eq!(out.unwrap(), flate2(&gz).unwrap(), "input {input}, reads {chunk}");
            // The first member's sum, from flate2's own CRC-32 of its text.
            let mut want = flate2::Crc::new();
            want.update(&a);
            assert_eq!(first, Some(FirstMember { crc: want.sum(), len: a.len() as u64 }));
        }
    }

    #[test]
    fn the_crc_of_parts_joined_is_the_crc_of_the_whole() {
        let t = text(100_000, 5);
        let mut whole = flate2::Crc::new();
        whole.update(&t);
        for cut in [0, 1, 4096, 99_999, 100_000] {
            let (x, y) = t.split_at(cut);
            assert_eq!(combine(crc32(0, x), crc32(0, y), y.len() as u64), whole.sum(), "cut at {cut}");
        }
    }

    #[test]
    fn what_flate2_refuses_is_refused_and_the_first_crc_is_not_trusted() {
        let a = text(50_000, 1);
        let one = member(&a, false);
        let two = [one.clone(), member(&text(2_000, 9), false)].concat();
        let n = two.len();
        let flip = |gz: &[u8], at: usize| {
            let mut g = gz.to_vec();
            g[at] ^= 0x55;
            g
        };
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("cut in the body", one[..one.len() / 2].to_vec()),
            ("cut in the trailer", one[..one.len() - 3].to_vec()),
            ("cut in the header", one[..5].to_vec()),
            ("second member's CRC-32", flip(&two, n - 8)),
            ("second member's length", flip(&two, n - 2)),
            ("first member's length", flip(&one, one.len() - 2)),
            ("trailing garbage", [one.clone(), b"garbage".to_vec()].concat()),
            ("header CRC flag", {
                let mut g = one.clone();
                g[3] |= 2;
                g
            }),
            ("empty", vec![]),
        ];
        for (what, gz) in cases {
            assert!(flate2(&gz).is_err(), "{what}: flate2 refuses it too");
            assert!(read_all(&gz, 64, 1 << 10).0.is_err(), "{what}");
        }
        // A later member's file name or comment: as long as flate2 reads (65,535 bytes), and one
        // byte more, which flate2 refuses. (A first member's header is read by flate2 itself.)
        for (field, len) in [(0, MAX_HEADER_FIELD), (0, MAX_HEADER_FIELD + 1), (1, MAX_HEADER_FIELD + 1)] {
            let long = vec![b'a'; len];
            let b = GzBuilder::new();
            let b = if field == 0 { b.filename(long) } else { b.comment(long) };
            let mut e = b.write(Vec::new(), Compression::fast());
            e.write_all(&a).unwrap();
            let gz = [one.clone(), e.finish().unwrap()].concat();
            let ours = read_all(&gz, 64, 1 << 10).0;
            assert_eq!(ours.is_ok(), flate2(&gz).is_ok(), "field {field} of {len} bytes");
            assert_eq!(ours.is_ok(), len <= MAX_HEADER_FIELD, "field {field} of {len} bytes");
        }
        // What flate2 calls an invalid header, told apart.
        let reserved = |gz: &[u8], at: usize| {
            let mut g = gz.to_vec();
            g[at + 3] |= 0x20;
            g
        };
        for (gz, want) in [
            (reserved(&one, 0), Some("gzip member 1 sets a reserved header flag bit (FLG 0x20")),
            (reserved(&two, one.len()), Some("gzip member 2 sets a reserved header flag bit (FLG 0x20")),
            ([one.clone(), b"garbage".to_vec()].concat(), Some(TRAILING_GARBAGE)),
            ([one.clone(), b"x".to_vec()].concat(), Some(TRAILING_GARBAGE)),
            (two.clone(), None),
        ] {
            assert!(flate2(&gz).is_err() == want.is_some());
            let fault = header_fault(&gz[..], u64::MAX);
            match want {
                Some(w) => assert!(fault.as_deref().is_some_and(|f| f.starts_with(w)), "{fault:?}"),
                None => assert_eq!(fault, None),
            }
        }
        // The first member's CRC-32 is the reader's to check: its trailer's value is handed over.
        let bad_crc = flip(&one, one.len() - 8);
        assert!(flate2(&bad_crc).is_err());
        let (out, first) = read_all(&bad_crc, 64, 1 << 10);
        assert_eq!(out.unwrap(), a);
        assert_ne!(first.unwrap().crc, crc32(0, &a));
    }
}
