//! Opening a trace file: plain (memory-mapped) or gzip (streamed), told apart by magic bytes.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;
use memmap2::Mmap;

use crate::error::TraceError;

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
        // The ratio is checked as the stream is read, against the compressed bytes consumed so
        // far, so that a bomb stops early rather than after its whole expansion.
        let consumed = Arc::new(AtomicU64::new(0));
        let counted = Counted { inner: file, count: Arc::clone(&consumed) };
        let decoder = MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counted));
        Input::Gzip(Box::new(Limited { inner: decoder, produced: 0, consumed }))
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

/// Stops a decompression bomb: fails once the output outgrows the compressed input consumed.
struct Limited<R> {
    inner: R,
    produced: u64,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.produced += n as u64;
        let allowed = MIN_GZIP_ALLOWANCE
            .saturating_add(self.consumed.load(Ordering::Relaxed).saturating_mul(MAX_GZIP_RATIO));
        if self.produced > allowed {
            return Err(io::Error::new(io::ErrorKind::InvalidData, GZIP_BOMB));
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
        let Ok((Input::Gzip(mut r), _)) = open(path) else { panic!("not gzip") };
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
}
