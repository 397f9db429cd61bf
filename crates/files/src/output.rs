//! Writing launchguard's own files (reports, kept traces, the ranks' hand-off files) so that a
//! reader never sees half of one, nothing but a regular file is ever replaced, and nothing is
//! written through a link that someone else may have planted.
//!
//! What a path names decides how it is written:
//! - nothing yet, or a regular file: the bytes go to a temporary file in the same folder, which is
//!   flushed to disk and renamed over the path (an existing file keeps its permissions; a new one
//!   is 0644, for CI artifacts and other ranks). A failed write leaves the old file as it was.
//!   The rename replaces the directory entry itself: should a link appear there after the checks,
//!   the link is replaced, never the file it points to.
//! - a symbolic link: refused, whatever it points to (a link in a shared or unpacked folder may
//!   lead to `~/.ssh/authorized_keys`), except a link to a FIFO or a character device
//!   (`/dev/stdout` when it is a pipe or a terminal, a link to `/dev/null`), which is written
//!   into, and the standard streams themselves (below).
//! - `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: written into the process's
//!   own descriptor, as a shell's `>&N` would, whatever it is open on (a file, a pipe, a terminal).
//! - a FIFO or a character device (`/dev/null`, a terminal): the bytes are written into it, as a
//!   shell redirection would. Renaming over it would replace the device node itself
//!   (`--junit /dev/null` as root would swap `/dev/null` for a file). A FIFO without a reader is
//!   an error, not a wait.
//! - a folder, a block device, a socket: refused, with what it is.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the bytes go.
enum Target {
    /// A regular file (existing with its mode, or new) replaced through a rename.
    Replace(PathBuf, Option<u32>),
    /// A FIFO, a character device or a standard stream, written into.
    Stream(File),
}

fn refused(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}; launchguard writes regular files, FIFOs and character devices only",
            path.display()
        ),
    )
}

/// The descriptor a path names that is one of the process's own streams: `/dev/stdout` (1),
/// `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N`.
fn own_descriptor(path: &Path) -> Option<i32> {
    let s = path.to_str()?;
    match s {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = s.strip_prefix("/dev/fd/").or_else(|| s.strip_prefix("/proc/self/fd/"))?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// A duplicate of descriptor `fd` of this process, to write into.
fn duplicate(path: &Path, fd: i32) -> io::Result<File> {
    // SAFETY: dup of a descriptor number; a closed one fails with EBADF.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
    }
    // SAFETY: `new` is a descriptor this process just opened and owns alone.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// What a path is to a writer, before anything is opened.
enum Plan {
    /// One of the process's own descriptors.
    Own(i32),
    /// A regular file, or nothing yet: replaced, its mode kept.
    Replace(Option<u32>),
    /// A FIFO or a character device, to open and write into.
    Open,
}

/// Whether `path` can be written by these rules, without opening or changing anything: the error
/// [`write_atomic`] would give for a link, a folder, a block device or a socket. For a command
/// that writes several files, to refuse before the first is written.
pub fn check(path: &Path) -> io::Result<()> {
    plan(path).map(drop)
}

fn target(path: &Path) -> io::Result<Target> {
    match plan(path)? {
        Plan::Own(fd) => duplicate(path, fd).map(Target::Stream),
        Plan::Replace(mode) => Ok(Target::Replace(path.to_path_buf(), mode)),
        Plan::Open => open_stream(path).map(Target::Stream),
    }
}

fn plan(path: &Path) -> io::Result<Plan> {
    if let Some(fd) = own_descriptor(path) {
        return Ok(Plan::Own(fd));
    }
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Plan::Replace(None)),
        Err(e) => return Err(e),
    };
    let is_link = link.file_type().is_symlink();
    let meta = if is_link {
        let to = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        let through = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link to {what} {to}; launchguard does not write through links: remove the link, or name the file itself",
                    path.display()
                ),
            )
        };
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_fifo() || m.file_type().is_char_device() => m,
            Ok(m) if m.is_dir() => return Err(through("the folder")),
            Ok(_) => return Err(through("the file")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(through("nothing at")),
            Err(e) => return Err(e),
        }
    } else {
        link
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(Plan::Replace(Some(meta.permissions().mode() & 0o7777)));
    }
    if ft.is_dir() {
        return Err(refused(path, "a folder"));
    }
    if ft.is_block_device() {
        return Err(refused(path, "a block device"));
    }
    if ft.is_socket() {
        return Err(refused(path, "a socket"));
    }
    Ok(Plan::Open)
}

/// Opens a FIFO or a character device to write into.
fn open_stream(path: &Path) -> io::Result<File> {
    // A FIFO or a character device: opened without blocking (a FIFO without a reader fails at
    // once with ENXIO), then written to as it is.
    let file =
        OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).map_err(
            |e| match e.raw_os_error() {
                Some(libc::ENXIO) => io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    format!("{} is a FIFO that nobody reads", path.display()),
                ),
                _ => e,
            },
        )?;
    let opened = file.metadata()?.file_type();
    if !(opened.is_fifo() || opened.is_char_device()) {
        return Err(refused(path, "something else than a moment ago"));
    }
    set_blocking(&file)?;
    Ok(file)
}

/// Clears `O_NONBLOCK`, so that a full pipe waits for its reader instead of failing.
fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns, with integer flags only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `bytes` to `path` (see the module's rules).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Streams `fill`'s output to `path` (see the module's rules), for outputs too large to hold in
/// memory. When `fill` fails, a replaced file is left as it was and no temporary file remains.
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    match target(path)? {
        Target::Stream(file) => {
            let mut out = BufWriter::with_capacity(1 << 16, file);
            fill(&mut out)?;
            out.flush()
        }
        Target::Replace(real, mode) => {
            let dir = match real.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let mut builder = tempfile::Builder::new();
            builder.prefix(".launchguard-");
            builder.permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o644)));
            let tmp = builder.tempfile_in(dir)?;
            let mut out = BufWriter::with_capacity(1 << 16, tmp);
            fill(&mut out)?;
            let tmp = out.into_inner().map_err(|e| e.into_error())?;
            tmp.as_file().sync_all()?;
            tmp.persist(&real).map_err(|e| e.error)?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.txt");
        write_atomic(&path, b"old").unwrap();
        let err = write_atomic_with(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("renderer failed"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["report.txt"]);
    }

    #[test]
    fn a_new_file_is_0644_and_a_replaced_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"one").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_link_is_refused_and_neither_it_nor_its_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.xml");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        for (name, to, what) in [
            ("link.xml", real.clone(), "a symbolic link to the file"),
            ("dangling.xml", dir.path().join("nowhere"), "a symbolic link to nothing at"),
            ("folder.xml", sub.clone(), "a symbolic link to the folder"),
        ] {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(&to, &link).unwrap();
            let err = write_atomic(&link, b"new").unwrap_err().to_string();
            assert!(err.contains(what) && err.contains("does not write through links"), "{err}");
            assert_eq!(std::fs::read_link(&link).unwrap(), to);
        }
        assert_eq!(std::fs::read(&real).unwrap(), b"old");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(names(&sub), Vec::<String>::new());
        // A link to a character device is written into, and stays a link.
        let null = dir.path().join("null.xml");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        write_atomic(&null, b"x").unwrap();
        assert!(std::fs::symlink_metadata(&null).unwrap().file_type().is_symlink());
    }

    #[test]
    fn the_standard_streams_are_the_process_s_own_descriptors() {
        assert_eq!(own_descriptor(Path::new("/dev/stdout")), Some(1));
        assert_eq!(own_descriptor(Path::new("/dev/stderr")), Some(2));
        assert_eq!(own_descriptor(Path::new("/dev/fd/7")), Some(7));
        assert_eq!(own_descriptor(Path::new("/proc/self/fd/12")), Some(12));
        for other in ["/dev/fd/", "/dev/fd/1x", "/proc/1/fd/1", "/dev/null", "out/stdout"] {
            assert_eq!(own_descriptor(Path::new(other)), None, "{other}");
        }
        // A descriptor opened on a regular file: written into it, at its offset, not replaced.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut file = File::create(&path).unwrap();
        file.write_all(b"before ").unwrap();
        let name = format!("/dev/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        write_atomic(Path::new(&name), b"report").unwrap();
        file.write_all(b" after").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"before report after");
    }

    #[test]
    fn a_fifo_is_written_into_and_stays_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Nobody reads it: an error at once, not a wait.
        let err = write_atomic(&fifo, b"x").unwrap_err().to_string();
        assert!(err.contains("nobody reads"), "{err}");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut s = Vec::new();
                File::open(&fifo).unwrap().read_to_end(&mut s).unwrap();
                s
            })
        };
        // More than a pipe's buffer: the writer must wait for the reader, not fail.
        let big = vec![b'x'; 1 << 20];
        let mut tries = 0;
        loop {
            match write_atomic(&fifo, &big) {
                Ok(()) => break,
                // The reader may not have opened its end yet.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe && tries < 500 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(reader.join().unwrap().len(), 1 << 20);
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(names(dir.path()), ["pipe"]);
    }

    #[test]
    fn dev_null_is_written_into_and_stays_a_device() {
        write_atomic(Path::new("/dev/null"), b"report").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn folders_are_refused_with_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x").unwrap_err().to_string();
        assert!(err.contains("is a folder"), "{err}");
    }
}
