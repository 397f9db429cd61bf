//! Opening a trace file: plain (memory-mapped) or gzip (streamed), told apart by magic bytes.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use memmap2::Mmap;

use crate::error::TraceError;

/// Gzip's two magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A decompressed stream may grow to this many times the compressed size before it is called a
/// gzip bomb. Real traces compress 20–50×; whitespace bombs reach 1000× and more.
pub const MAX_GZIP_RATIO: u64 = 2000;
/// ... but small files may always expand to this much.
pub const MIN_GZIP_ALLOWANCE: u64 = 1 << 30;

/// An opened trace: its bytes mapped, or a decoder over them.
pub enum Input {
    /// An uncompressed file, mapped read-only.
    Plain(Mmap),
    /// A gzip file (one or several members), decoded as it is read.
    Gzip(Box<dyn Read + Send>),
}

/// What is known about the file before parsing.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The path as given.
    pub path: PathBuf,
    /// Size on disk.
    pub bytes: u64,
    /// Whether it was gzip.
    pub gzip: bool,
}

/// Opens `path` read-only. The file is never written.
pub fn open(path: &Path) -> Result<(Input, SourceInfo), TraceError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => TraceError::NotFound(path.to_path_buf()),
        _ => TraceError::Io { path: path.to_path_buf(), source: e },
    })?;
    if meta.is_dir() {
        return Err(TraceError::IsDirectory(path.to_path_buf()));
    }
    let io_err = |e| TraceError::Io { path: path.to_path_buf(), source: e };
    let mut file = File::open(path).map_err(io_err)?;
    let mut magic = [0u8; 2];
    let got = read_up_to(&mut file, &mut magic).map_err(io_err)?;
    if got == 0 {
        return Err(TraceError::Empty(path.to_path_buf()));
    }
    let gzip = got == 2 && magic == GZIP_MAGIC;
    let bytes = meta.len();
    let info = SourceInfo { path: path.to_path_buf(), bytes, gzip };
    let file = File::open(path).map_err(io_err)?;
    let input = if gzip {
        let limit = MIN_GZIP_ALLOWANCE.max(bytes.saturating_mul(MAX_GZIP_RATIO));
        let decoder = MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file));
        Input::Gzip(Box::new(Limited { inner: decoder, left: limit }))
    } else {
        // SAFETY: the map is read-only and private to this process; a file truncated under us
        // by another process is outside what a trace reader can defend against.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        Input::Plain(map)
    };
    Ok((input, info))
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

/// Stops a decompression bomb: fails once more than `left` bytes came out.
struct Limited<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("gzip data expands more than {MAX_GZIP_RATIO}× its size: refusing a gzip bomb"),
            )
        })?;
        Ok(n)
    }
}
