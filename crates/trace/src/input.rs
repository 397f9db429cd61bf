//! Opening a trace: a regular file (plain: memory-mapped; gzip: streamed) or standard input
//! (`-`, streamed), told apart by magic bytes. Traces come from strangers: anything but a regular
//! file is refused by its type before it is opened (a FIFO would block, a device read without
//! end), and encodings the reader does not read are named instead of failing as bad JSON.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Read};
use std::ops::Deref;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;
use launchguard_files::InputError;
use memmap2::Mmap;

use crate::error::TraceError;
use crate::gunzip;
use crate::limits::Limits;

/// Gzip's two magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Decompressed output may grow to this many times the compressed input read so far before it is
/// called a gzip bomb. Real traces compress 10–35×; deflate cannot exceed about 1032×, which
/// whitespace bombs reach, so the limit must sit well below that to ever fire.
pub const MAX_GZIP_RATIO: u64 = 200;
/// ... plus this much, whatever the ratio (a very compressible header, a small file). Small, so
/// that a bomb is refused after a few MB instead of after gigabytes of parsing.
pub const MIN_GZIP_ALLOWANCE: u64 = 8 << 20;

/// The message of the I/O error that stops a gzip bomb; [`crate::TraceError::GzipBomb`] is made of it.
pub(crate) const GZIP_BOMB: &str = "refusing a gzip bomb";
/// The message of the I/O error that stops a stream at [`Limits::max_inflated_bytes`].
pub(crate) const INFLATED_CAP: &str = "the stream reached the cap on JSON text";

/// The path that names standard input.
pub const STDIN: &str = "-";
/// How standard input is named in messages and reports.
pub const STDIN_NAME: &str = "<stdin>";

/// An opened trace: its bytes mapped, or a reader of its text.
pub enum Input {
    /// An uncompressed file, mapped read-only.
    Plain(Mapped),
    /// Text decoded as it is read: a gzip file (one or several members), or standard input
    /// (plain or gzip).
    Stream(Box<dyn Read + Send>),
}

/// A mapped file and where its JSON text starts (after a UTF-8 byte order mark, which some
/// Windows tools write and which is skipped rather than refused: it says nothing but "UTF-8").
pub struct Mapped {
    map: Mmap,
    start: usize,
}

impl Mapped {
    /// Lets the whole pages of text bytes `start..end` (offsets into the text) leave memory:
    /// a reader calls it on what it has parsed, so that a large file's pages do not pile up.
    pub(crate) fn release(&self, start: usize, end: usize) {
        const PAGE: usize = 4096;
        let (from, to) = ((self.start + start).next_multiple_of(PAGE), (self.start + end) / PAGE * PAGE);
        if to > from {
            // SAFETY: the map is read-only and private and nothing ever writes to it, so dropped
            // pages hold the file's bytes again when read (the bytes do not change under a
            // borrow). Only whole pages already parsed are dropped; a failure is harmless.
            let _ = unsafe {
                self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }

    /// Where the text starts in the file.
    pub fn start(&self) -> usize {
        self.start
    }
}

impl Deref for Mapped {
    type Target = [u8];

    /// The JSON text.
    fn deref(&self) -> &[u8] {
        &self.map[self.start..]
    }
}

/// What is known about the file before parsing.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The path as given ([`STDIN_NAME`] for standard input).
    pub path: PathBuf,
    /// Size on disk (for standard input: the bytes read from it, known once it is read).
    pub bytes: u64,
    /// Whether it was gzip.
    pub gzip: bool,
}

/// A trace opened for reading.
pub(crate) struct Opened {
    /// The text.
    pub input: Input,
    /// What is known of it.
    pub source: SourceInfo,
    /// Bytes read from standard input so far (`None` for a file, whose size is known).
    pub stdin_bytes: Option<Arc<AtomicU64>>,
}

/// Opens `path` read-only with the default caps. The file is never written.
pub fn open(path: &Path) -> Result<(Input, SourceInfo), TraceError> {
    open_with(path, &Limits::DEFAULT).map(|o| (o.input, o.source))
}

/// Opens `path` (`-`: standard input) read-only. The file is never written.
pub(crate) fn open_with(path: &Path, limits: &Limits) -> Result<Opened, TraceError> {
    if path.as_os_str() == STDIN {
        return open_stdin(limits);
    }
    let (file, size) = launchguard_files::open_regular(path).map_err(|e| match e {
        InputError::Io(e) if e.kind() == io::ErrorKind::NotFound => TraceError::NotFound(path.to_path_buf()),
        InputError::NotRegular("a directory") => TraceError::IsDirectory(path.to_path_buf()),
        error => TraceError::Input { path: path.to_path_buf(), error },
    })?;
    let io_err = |error| TraceError::Io { path: path.to_path_buf(), error };
    let mut head = [0u8; 8];
    let got = read_at_up_to(&file, &mut head).map_err(io_err)?;
    if got == 0 {
        return Err(TraceError::Empty(path.to_path_buf()));
    }
    let head = &head[..got];
    let gzip = head.starts_with(&GZIP_MAGIC);
    let source = SourceInfo { path: path.to_path_buf(), bytes: size, gzip };
    let input = if gzip {
        // `read_at` left the file at its start.
        gzip_stream(file, Arc::new(AtomicU64::new(0)), path, limits)?
    } else {
        let start = match sniff(head) {
            Sniff::Text { bom } => bom,
            Sniff::Gzip => unreachable!("gzip was handled above"),
            Sniff::Refuse(what) => return Err(TraceError::Encoding { path: path.to_path_buf(), what }),
        };
        // SAFETY: the map is read-only and private to this process. A file truncated under us by
        // another process raises SIGBUS where a missing page is touched; the `launchguard`
        // binary turns that into its one-line error (src/main.rs), a library user must too.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        Input::Plain(Mapped { map, start })
    };
    Ok(Opened { input, source, stdin_bytes: None })
}

/// Standard input, streamed (it may be a pipe: nothing is mapped or read twice).
fn open_stdin(limits: &Limits) -> Result<Opened, TraceError> {
    let path = Path::new(STDIN_NAME);
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(TraceError::Terminal);
    }
    let count = Arc::new(AtomicU64::new(0));
    let mut stdin = stdin;
    let mut head = [0u8; 8];
    let got =
        read_up_to(&mut stdin, &mut head).map_err(|error| TraceError::Io { path: path.into(), error })?;
    if got == 0 {
        return Err(TraceError::Empty(path.into()));
    }
    let head = head[..got].to_vec();
    let sniffed = sniff(&head);
    let gzip = sniffed == Sniff::Gzip;
    // The head goes back in front of the rest.
    let whole = io::Cursor::new(head).chain(stdin);
    let input = match sniffed {
        Sniff::Gzip => gzip_stream(whole, Arc::clone(&count), path, limits)?,
        Sniff::Refuse(what) => return Err(TraceError::Encoding { path: path.into(), what }),
        Sniff::Text { bom } => {
            let counted = Counted { inner: whole, count: Arc::clone(&count) };
            let mut text = Limited::text(counted, limits.max_inflated_bytes);
            io::copy(&mut (&mut text).take(bom as u64), &mut io::sink())
                .map_err(|error| TraceError::Io { path: path.into(), error })?;
            Input::Stream(Box::new(text))
        }
    };
    let source = SourceInfo { path: path.into(), bytes: 0, gzip };
    Ok(Opened { input, source, stdin_bytes: Some(count) })
}

/// A gzip stream over `raw`, whose bytes `consumed` counts; the decompressed text is checked for
/// what it holds.
pub(crate) fn gzip_stream(
    raw: impl Read + Send + 'static,
    consumed: Arc<AtomicU64>,
    path: &Path,
    limits: &Limits,
) -> Result<Input, TraceError> {
    // The ratio is checked as the stream is read, against the compressed bytes consumed so far,
    // so that a bomb stops early rather than after its whole expansion.
    let counted = Counted { inner: raw, count: Arc::clone(&consumed) };
    let decoder = MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counted));
    let (mut text, bom) = sniffed(decoder, consumed, path, limits)?;
    text.get_mut().0.set_position(bom as u64);
    Ok(Input::Stream(Box::new(text)))
}

/// The text of a gzip file, with the first member's CRC-32 left to its reader.
pub(crate) struct Unchecked {
    /// The text.
    pub(crate) text: Box<dyn Read + Send>,
    /// Where the first member's check is left once its trailer is read.
    pub(crate) first: gunzip::Pending,
}

/// The gzip bytes of `raw` as [`gzip_stream`] reads them (the same caps, the same checks of what
/// the text holds), except that the first member's CRC-32 is left to the reader
/// ([`crate::gunzip`]): `None` when the text starts with a byte order mark (which the reader
/// would not see, and so could not sum) or when the start of the stream fails, for the checked
/// reader to word.
pub(crate) fn gzip_unchecked(
    raw: impl Read + Send + 'static,
    path: &Path,
    limits: &Limits,
) -> Option<Unchecked> {
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = Counted { inner: raw, count: Arc::clone(&consumed) };
    let (decoder, first) = gunzip::Members::new(BufReader::with_capacity(1 << 16, counted));
    match sniffed(decoder, consumed, path, limits) {
        Ok((text, 0)) => Some(Unchecked { text: Box::new(text), first }),
        _ => None,
    }
}

/// The gzip file at `path` as [`gzip_unchecked`] reads it.
pub(crate) fn file_unchecked(path: &Path, limits: &Limits) -> Option<Unchecked> {
    let (file, _) = launchguard_files::open_regular(path).ok()?;
    gzip_unchecked(file, path, limits)
}

/// The decompressed text of `decoder`, within the caps, and the length of the byte order mark it
/// starts with; an error when its first bytes are not text.
fn sniffed(
    decoder: impl Read + Send + 'static,
    consumed: Arc<AtomicU64>,
    path: &Path,
    limits: &Limits,
) -> Result<(Sniffed, usize), TraceError> {
    let mut text =
        Limited { inner: decoder, produced: 0, consumed: Some(consumed), max: limits.max_inflated_bytes };
    let mut head = [0u8; 8];
    let got = read_up_to(&mut text, &mut head).map_err(|e| stream_error(path, e, true, limits))?;
    if got == 0 {
        return Err(TraceError::Empty(path.to_path_buf()));
    }
    let bom = match sniff(&head[..got]) {
        Sniff::Text { bom } => bom,
        Sniff::Gzip => {
            return Err(TraceError::Encoding {
                path: path.to_path_buf(),
                what: "gzip data inside gzip: decompress the outer layer first (gunzip)".into(),
            })
        }
        Sniff::Refuse(what) => {
            return Err(TraceError::Encoding {
                path: path.to_path_buf(),
                what: format!("{what} (inside gzip)"),
            })
        }
    };
    let text: Box<dyn Read + Send> = Box::new(text);
    Ok((io::Cursor::new(head[..got].to_vec()).chain(text), bom))
}

/// The text read for [`sniff`], put back in front of the rest.
type Sniffed = io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read + Send>>;

/// The error of a stream read that failed, before or after the JSON: the caps, a gzip bomb, a
/// damaged gzip file, or the operating system's error.
pub(crate) fn stream_error(path: &Path, e: io::Error, gzip: bool, limits: &Limits) -> TraceError {
    let path = path.to_path_buf();
    let detail = e.to_string();
    if !gzip && detail != INFLATED_CAP {
        TraceError::Io { path, error: e }
    } else if detail == GZIP_BOMB {
        TraceError::GzipBomb(path)
    } else if detail == INFLATED_CAP {
        let cap = crate::limits::Cap::Inflated;
        TraceError::Cap { path, cap, what: cap.what(limits) }
    } else if e.kind() == io::ErrorKind::UnexpectedEof {
        TraceError::Gzip { path, detail: format!("the gzip stream ends early ({detail})") }
    } else if e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::InvalidData {
        TraceError::Gzip { path, detail: gzip_detail(&detail) }
    } else {
        TraceError::Io { path, error: e }
    }
}

/// flate2's words for a damaged gzip file, said plainly.
pub(crate) fn gzip_detail(detail: &str) -> String {
    if detail.contains("checksum") {
        // flate2 compares each member's CRC32 and ISIZE with what it inflated.
        "a gzip member's CRC32 or length check fails: the file is damaged".into()
    } else if detail.contains("invalid gzip header") {
        "bytes after the last gzip member are not gzip (trailing garbage)".into()
    } else {
        detail.to_string()
    }
}

/// What the first bytes of a file (or of the text inside a gzip file) say it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniff {
    /// Gzip.
    Gzip,
    /// Text, perhaps JSON, whose first `bom` bytes are a UTF-8 byte order mark.
    Text { bom: usize },
    /// Something the reader does not read, in words, with how to make it readable.
    Refuse(String),
}

/// Tells apart by their first bytes the encodings that would otherwise fail as bad JSON at line 1,
/// column 1: other compressors (by their magic numbers), UTF-16 and UTF-32 (by their byte order
/// marks, or by the NULs that ASCII text takes in them).
pub(crate) fn sniff(head: &[u8]) -> Sniff {
    let compressed = |name: &str, tool: &str| {
        Sniff::Refuse(format!(
            "{name}-compressed data: launchguard reads JSON, plain or gzip; decompress it first ({tool})"
        ))
    };
    let wide = |name: &str, how: &str| {
        Sniff::Refuse(format!(
            "{name} text ({how}): launchguard reads JSON in UTF-8; convert it first (iconv -f {name} -t UTF-8)"
        ))
    };
    // An ASCII character JSON text may start with.
    let opening = |b: u8| matches!(b, b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n');
    match head {
        [0x1f, 0x8b, ..] => Sniff::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => compressed("zstd", "zstd -d"),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => compressed("bzip2", "bunzip2"),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => compressed("xz", "unxz"),
        [0x04, 0x22, 0x4d, 0x18, ..] => compressed("lz4", "lz4 -d"),
        [b'P', b'K', 3, 4, ..] => {
            Sniff::Refuse("a zip archive: launchguard reads JSON, plain or gzip; unzip it first".into())
        }
        [0xef, 0xbb, 0xbf, ..] => Sniff::Text { bom: 3 },
        [0xff, 0xfe, 0, 0, ..] => wide("UTF-32", "little-endian, with a byte order mark"),
        [0, 0, 0xfe, 0xff, ..] => wide("UTF-32", "big-endian, with a byte order mark"),
        [0xff, 0xfe, ..] => wide("UTF-16", "little-endian, with a byte order mark"),
        [0xfe, 0xff, ..] => wide("UTF-16", "big-endian, with a byte order mark"),
        [b, 0, 0, 0, ..] if opening(*b) => wide("UTF-32", "little-endian"),
        [0, 0, 0, b, ..] if opening(*b) => wide("UTF-32", "big-endian"),
        [b, 0, ..] if opening(*b) => wide("UTF-16", "little-endian"),
        [0, b, ..] if opening(*b) => wide("UTF-16", "big-endian"),
        _ => Sniff::Text { bom: 0 },
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The first bytes of a file, leaving its position where it was.
fn read_at_up_to(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Counts the bytes read from the compressed file.
struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Stops a stream at the cap on its text, and a decompression bomb once its output outgrows the
/// compressed input consumed.
struct Limited<R> {
    inner: R,
    produced: u64,
    /// The compressed bytes read so far, for a gzip stream.
    consumed: Option<Arc<AtomicU64>>,
    /// [`Limits::max_inflated_bytes`].
    max: u64,
}

impl<R: Read> Limited<R> {
    /// Plain text: only the cap.
    fn text(inner: R, max: u64) -> Self {
        Limited { inner, produced: 0, consumed: None, max }
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.produced += n as u64;
        if self.produced > self.max {
            return Err(io::Error::new(io::ErrorKind::InvalidData, INFLATED_CAP));
        }
        if let Some(consumed) = &self.consumed {
            let allowed = MIN_GZIP_ALLOWANCE
                .saturating_add(consumed.load(Ordering::Relaxed).saturating_mul(MAX_GZIP_RATIO));
            if self.produced > allowed {
                return Err(io::Error::new(io::ErrorKind::InvalidData, GZIP_BOMB));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn drain(path: &Path) -> io::Result<u64> {
        let Ok((Input::Stream(mut r), _)) = open(path) else { panic!("not gzip") };
        io::copy(&mut r, &mut io::sink())
    }

    #[test]
    fn a_whitespace_bomb_is_refused_after_a_few_megabytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.gz");
        // 1 GiB of spaces in 1024 members: about 1 MB of gzip.
        let member = gz(&vec![b' '; 1 << 20]);
        assert!(member.len() < 2000, "{}", member.len());
        std::fs::write(&path, member.repeat(1024)).unwrap();
        let err = drain(&path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(err.to_string(), GZIP_BOMB);
    }

    #[test]
    fn real_traces_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ok.gz");
        // A real trace (32×) four times over, as four members: past the fixed allowance.
        let trace =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/healthy_clean.json.gz"));
        let trace = trace.unwrap();
        std::fs::write(&path, trace.repeat(4)).unwrap();
        assert!(drain(&path).unwrap() > MIN_GZIP_ALLOWANCE);
    }

    #[test]
    fn encodings_are_named_by_their_first_bytes() {
        let refused = |head: &[u8]| match sniff(head) {
            Sniff::Refuse(what) => what,
            other => panic!("{head:?}: {other:?}"),
        };
        // Magic numbers from the formats' specifications (RFC 8878, bzip2, xz, LZ4 frame, zip).
        assert!(refused(&[0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58]).starts_with("zstd-compressed"));
        assert!(refused(b"BZh91AY&").starts_with("bzip2-compressed"));
        assert!(refused(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0, 4]).starts_with("xz-compressed"));
        assert!(refused(&[0x04, 0x22, 0x4d, 0x18, 0x64]).starts_with("lz4-compressed"));
        assert!(refused(b"PK\x03\x04").starts_with("a zip archive"));
        // `{"` in UTF-16 and UTF-32, both byte orders, with and without a byte order mark, as
        // Rust's own encoder writes them.
        let utf16le: Vec<u8> = "\u{feff}{\"".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16be: Vec<u8> = "{\"".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let utf32le: Vec<u8> = "{\"".chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
        let utf32be: Vec<u8> = "\u{feff}[".chars().flat_map(|c| (c as u32).to_be_bytes()).collect();
        assert_eq!(refused(&utf16le), "UTF-16 text (little-endian, with a byte order mark): launchguard reads JSON in UTF-8; convert it first (iconv -f UTF-16 -t UTF-8)");
        assert!(refused(&utf16be).starts_with("UTF-16 text (big-endian)"));
        assert!(refused(&utf32le).starts_with("UTF-32 text (little-endian)"));
        assert!(refused(&utf32be).starts_with("UTF-32 text (big-endian, with a byte order mark)"));
        assert_eq!(sniff("\u{feff}{}".as_bytes()), Sniff::Text { bom: 3 });
        assert_eq!(sniff(b"{\"traceEvents\""), Sniff::Text { bom: 0 });
        assert_eq!(sniff(b"["), Sniff::Text { bom: 0 });
        assert_eq!(sniff(&[0x1f, 0x8b, 8]), Sniff::Gzip);
    }
}
