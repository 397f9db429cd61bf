//! Opening files that come from strangers (a library of an inspected image, a trace, a
//! configuration, a baseline): regular files only, and the size known before anything is read.
//!
//! A FIFO blocks `open` for reading until a writer comes (forever, in an image), and a device
//! such as `/dev/zero` reads without end; both are refused by their type before opening. The
//! type is checked again on the opened descriptor, opened with `O_NONBLOCK` so that a FIFO
//! swapped in between the two never blocks.

use std::fmt;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum InputError {
    /// The operating system's error.
    Io(io::Error),
    /// Not a regular file: what it is instead ("a FIFO", "a device", …).
    NotRegular(&'static str),
    /// Larger than the cap, in bytes.
    TooLarge {
        /// The file's size (or at least this much, when it grew while read).
        size: u64,
        /// The cap.
        cap: u64,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io(e) => write!(f, "{e}"),
            InputError::NotRegular(what) => write!(f, "is {what}, not a regular file"),
            InputError::TooLarge { size, cap } => {
                write!(f, "is {size} bytes, over the cap of {}", human_bytes(*cap))
            }
        }
    }
}

impl From<io::Error> for InputError {
    fn from(e: io::Error) -> Self {
        InputError::Io(e)
    }
}

/// `64 MiB` for round sizes, else the byte count.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// What a file of this type is, when it is not a regular file.
pub fn not_regular(ft: FileType) -> Option<&'static str> {
    if ft.is_file() {
        None
    } else if ft.is_dir() {
        Some("a directory")
    } else if ft.is_fifo() {
        Some("a FIFO")
    } else if ft.is_char_device() || ft.is_block_device() {
        Some("a device")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_symlink() {
        Some("a symbolic link")
    } else {
        Some("not a file")
    }
}

fn check(meta: &Metadata) -> Result<(), InputError> {
    match not_regular(meta.file_type()) {
        Some(what) => Err(InputError::NotRegular(what)),
        None => Ok(()),
    }
}

/// Opens `path` (a host path, symlinks allowed) for reading if it is a regular file; returns it
/// with its size.
pub fn open_regular(path: &Path) -> Result<(File, u64), InputError> {
    check(&std::fs::metadata(path)?)?;
    // O_NONBLOCK: should a FIFO replace the file after the check, open returns at once (the
    // flag changes nothing for a regular file); O_NOCTTY: a terminal never becomes ours.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    let meta = file.metadata()?;
    check(&meta)?;
    Ok((file, meta.len()))
}

/// Reads the whole regular file at `path`, refusing one larger than `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_regular(path)?;
    if size > cap {
        return Err(InputError::TooLarge { size, cap });
    }
    // The size is a hint only (the file may change while read); `take` is the bound.
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size as usize).map_err(|e| InputError::Io(io::Error::other(e)))?;
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(InputError::TooLarge { size: bytes.len() as u64, cap });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_capped(&file, 5).unwrap(), b"12345");
        let e = read_capped(&file, 4).unwrap_err();
        assert_eq!(e.to_string(), "is 5 bytes, over the cap of 4 bytes");
        let e = read_capped(dir.path(), 100).unwrap_err();
        assert_eq!(e.to_string(), "is a directory, not a regular file");
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // Would block forever if it were opened.
        assert_eq!(read_capped(&fifo, 100).unwrap_err().to_string(), "is a FIFO, not a regular file");
        let e = open_regular(Path::new("/dev/null")).unwrap_err();
        assert_eq!(e.to_string(), "is a device, not a regular file");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(256 << 10), "256 KiB");
    }
}
