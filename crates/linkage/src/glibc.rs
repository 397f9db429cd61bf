//! Which glibc the inspected system has, read from its files and never by running them: the
//! dynamic loader's version string (`ld.so (…) stable release version 2.36.`, in every ld.so
//! since 2.33), its file name before 2.34 (`ld-2.31.so`), else libc.so.6's banner
//! (`GNU C Library (…) release version 2.31.`) or file name (`libc-2.31.so`).

use std::fmt;
use std::path::Path;

use crate::input::read_capped;
use crate::rootfs::RootFs;

/// Largest loader or libc read for its version string (real ones: 0.2 MB and 2 MB).
const MAX_BYTES: u64 = 32 << 20;

/// A glibc release, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlibcVersion {
    /// 2, for every glibc there is.
    pub major: u32,
    /// The release.
    pub minor: u32,
}

impl GlibcVersion {
    /// `2.minor`.
    pub const fn new(major: u32, minor: u32) -> GlibcVersion {
        GlibcVersion { major, minor }
    }

    /// Whether this release is `2.minor` or later.
    pub fn at_least(self, minor: u32) -> bool {
        self >= GlibcVersion::new(2, minor)
    }

    /// Parses `2.36` at the start of `s` (what follows the minor number is ignored).
    pub fn parse_prefix(s: &[u8]) -> Option<GlibcVersion> {
        let digits = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
        let n = digits(s);
        let (major, rest) = s.split_at(n);
        let rest = rest.strip_prefix(b".")?;
        let m = digits(rest);
        if n == 0 || n > 3 || m == 0 || m > 3 {
            return None;
        }
        let num = |d: &[u8]| std::str::from_utf8(d).ok()?.parse().ok();
        Some(GlibcVersion::new(num(major)?, num(&rest[..m])?))
    }
}

impl fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The version and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The release.
    pub version: GlibcVersion,
    /// The file and what in it.
    pub source: String,
}

/// The glibc of the inspected system: from its loader `rtld` (inside the system), else from the
/// first `libc.so.6` in `libc_dirs` (each ending in `/`). `None` when neither tells.
pub fn read(fs: &RootFs, rtld: &str, libc_dirs: &[String]) -> Option<Found> {
    let candidates =
        std::iter::once(rtld.to_string()).chain(libc_dirs.iter().map(|d| format!("{d}libc.so.6")));
    for path in candidates {
        let Ok(host) = fs.resolve(&path) else { continue };
        if let Some(found) = from_file(&path, &host) {
            return Some(found);
        }
    }
    None
}

/// The version a loader or libc at `path` (its file on this machine: `host`) says it is.
fn from_file(path: &str, host: &Path) -> Option<Found> {
    let real = host.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Ok(bytes) = read_capped(host, MAX_BYTES) {
        if let Some(version) = banner_version(&bytes) {
            return Some(Found { version, source: format!("the version string in {path}") });
        }
    }
    // Before 2.34 the files are named by version, the sonames being links to them.
    let version = ["ld-", "libc-"]
        .iter()
        .filter_map(|p| real.strip_prefix(p))
        .find_map(|rest| rest.strip_suffix(".so").and_then(|v| GlibcVersion::parse_prefix(v.as_bytes())))?;
    Some(Found { version, source: format!("the file name of {path}: {real}") })
}

/// The version in glibc's banner, `… release version 2.36.` (ld.so's since 2.33, libc's always).
fn banner_version(bytes: &[u8]) -> Option<GlibcVersion> {
    const MARK: &[u8] = b" release version ";
    bytes
        .windows(MARK.len())
        .enumerate()
        .filter(|(_, w)| *w == MARK)
        .find_map(|(at, _)| GlibcVersion::parse_prefix(&bytes[at + MARK.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(GlibcVersion::parse_prefix(b"2.36."), Some(GlibcVersion::new(2, 36)));
        assert_eq!(GlibcVersion::parse_prefix(b"2.9000"), None);
        assert_eq!(GlibcVersion::parse_prefix(b"2.."), None);
        assert_eq!(GlibcVersion::parse_prefix(b"x2.36"), None);
        assert!(GlibcVersion::new(2, 37).at_least(37) && !GlibcVersion::new(2, 36).at_least(37));
        assert_eq!(
            banner_version(b"\0ld.so (Debian GLIBC 2.36-9+deb12u4) stable release version 2.36.\n\0"),
            Some(GlibcVersion::new(2, 36))
        );
        assert_eq!(banner_version(b"no release version here"), None);
    }

    #[test]
    fn from_files_of_an_image() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("lib64")).unwrap();
        std::fs::create_dir_all(root.join("lib/x86_64-linux-gnu")).unwrap();
        // An old layout: the loader named by version, with no version string inside.
        std::fs::write(root.join("lib/x86_64-linux-gnu/ld-2.31.so"), b"\x7fELF").unwrap();
        std::os::unix::fs::symlink(
            "/lib/x86_64-linux-gnu/ld-2.31.so",
            root.join("lib64/ld-linux-x86-64.so.2"),
        )
        .unwrap();
        let fs = RootFs::new(Some(root.to_path_buf()), 1000);
        let found = read(&fs, "/lib64/ld-linux-x86-64.so.2", &[]).unwrap();
        assert_eq!(found.version, GlibcVersion::new(2, 31));
        assert_eq!(found.source, "the file name of /lib64/ld-linux-x86-64.so.2: ld-2.31.so");

        // No loader: libc.so.6's banner.
        let fs = RootFs::new(Some(root.to_path_buf()), 1000);
        std::fs::write(
            root.join("lib/x86_64-linux-gnu/libc.so.6"),
            b"...GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3) stable release version 2.35.\n",
        )
        .unwrap();
        let found = read(&fs, "/lib/ld-missing.so", &["/lib/x86_64-linux-gnu/".into()]).unwrap();
        assert_eq!(found.version, GlibcVersion::new(2, 35));
        assert!(read(&fs, "/nothing", &["/usr/lib/".into()]).is_none());
    }
}
