//! Paths as the loader of the inspected system sees them.
//!
//! Without `--root` that is this machine. With `--root DIR` (an unpacked container image) every
//! path the loader would open is looked up under DIR, and symbolic links are followed inside DIR:
//! an image's `/usr/lib/libfoo.so.1 -> /opt/foo/libfoo.so.1` must land on `DIR/opt/foo`, never on
//! this machine's `/opt/foo`.
//!
//! Every lookup is paid from the inspection's [`Budget`]: one per path component walked.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::limits::Budget;

/// Symlink hops before giving up, as Linux's MAXSYMLINKS.
const MAX_LINKS: usize = 40;

/// Linux's PATH_MAX: `open` refuses longer paths with ENAMETOOLONG, and so does this.
pub const PATH_MAX: usize = 4096;

/// The filesystem the loader would search.
#[derive(Debug)]
pub struct RootFs {
    root: Option<PathBuf>,
    budget: Budget,
}

impl RootFs {
    /// `root` is the image directory, or `None` for this machine; at most `max_lookups` path
    /// components are walked in all.
    pub fn new(root: Option<PathBuf>, max_lookups: u64) -> RootFs {
        RootFs { root, budget: Budget::new(max_lookups) }
    }

    /// The image directory, when inspecting one.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The inspection's lookup budget.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// The host path of `path` (a path inside the inspected system) with every symlink resolved,
    /// or the error the loader's `open` would meet (NotFound for a missing file).
    pub fn resolve(&self, path: &str) -> io::Result<PathBuf> {
        self.resolve_with(path, &self.budget)
    }

    /// [`RootFs::resolve`], paid from `budget`.
    pub fn resolve_with(&self, path: &str, budget: &Budget) -> io::Result<PathBuf> {
        if path.len() >= PATH_MAX {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        match &self.root {
            None => {
                // realpath(3) walks each component; pay for them up front.
                budget.take(1 + path.matches('/').count() as u64)?;
                fs::canonicalize(path)
            }
            Some(root) => resolve_in_root(root, Path::new(path), budget),
        }
    }

    /// Whether `path` (inside the inspected system) is a directory.
    pub fn is_dir(&self, path: &str) -> bool {
        self.resolve(path).is_ok_and(|p| p.is_dir())
    }

    /// The path inside the inspected system for a path the user gave: relative paths are taken
    /// from the working directory, and a host path under the image directory is translated.
    pub fn image_path(&self, user_path: &Path) -> String {
        let absolute = if user_path.is_absolute() {
            user_path.to_path_buf()
        } else {
            // Joined, not canonicalized: the loader derives $ORIGIN from the path as given.
            std::env::current_dir().map(|cwd| cwd.join(user_path)).unwrap_or_else(|_| user_path.to_path_buf())
        };
        if let Some(root) = &self.root {
            let root_abs = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            for r in [root.as_path(), root_abs.as_path()] {
                if let Ok(inside) = absolute.strip_prefix(r) {
                    return format!("/{}", inside.display());
                }
            }
            if !user_path.is_absolute() {
                return format!("/{}", user_path.display());
            }
        }
        absolute.display().to_string()
    }
}

/// Follows `path` component by component under `root`, treating `root` as `/` for absolute link
/// targets and for `..` at the top, so nothing escapes the image. The host path is built
/// incrementally: rebuilding it per component is quadratic in the depth of a hostile path.
fn resolve_in_root(root: &Path, path: &Path, budget: &Budget) -> io::Result<PathBuf> {
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, path);
    let mut host = root.to_path_buf();
    let mut depth = 0usize;
    let mut links = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            if depth > 0 {
                host.pop();
                depth -= 1;
            }
            continue;
        }
        budget.take(1)?;
        host.push(&part);
        let meta = fs::symlink_metadata(&host)?;
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            let target = fs::read_link(&host)?;
            host.pop();
            if target.is_absolute() {
                host = root.to_path_buf();
                depth = 0;
            }
            push_components(&mut todo, &target);
        } else {
            depth += 1;
        }
    }
    Ok(host)
}

/// Pushes the components of `path` so that the first one is popped first.
fn push_components(todo: &mut Vec<OsString>, path: &Path) {
    let start = todo.len();
    todo.extend(path.components().filter_map(|c| match c {
        Component::Normal(s) => Some(s.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    }));
    todo[start..].reverse();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn symlinks_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("opt/foo")).unwrap();
        fs::create_dir_all(root.join("usr/lib")).unwrap();
        fs::write(root.join("opt/foo/libfoo.so.1.2"), b"x").unwrap();
        symlink("/opt/foo/libfoo.so.1.2", root.join("usr/lib/libfoo.so.1")).unwrap();
        symlink("usr/lib", root.join("lib")).unwrap();
        let fs = RootFs::new(Some(root.to_path_buf()), 1000);
        assert_eq!(fs.resolve("/lib/libfoo.so.1").unwrap(), root.join("opt/foo/libfoo.so.1.2"));
        assert_eq!(
            fs.resolve("/usr/lib/../../../opt/foo/libfoo.so.1.2").unwrap(),
            root.join("opt/foo/libfoo.so.1.2")
        );
        assert_eq!(fs.resolve("/lib/missing").unwrap_err().kind(), io::ErrorKind::NotFound);
        symlink("loop", root.join("loop")).unwrap();
        assert_eq!(fs.resolve("/loop").unwrap_err().raw_os_error(), Some(libc::ELOOP));
        assert_eq!(fs.resolve(&"/a".repeat(2048)).unwrap_err().raw_os_error(), Some(libc::ENAMETOOLONG));
    }

    #[test]
    fn lookups_are_paid_per_component() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        let fs = RootFs::new(Some(dir.path().to_path_buf()), 5);
        assert!(fs.resolve("/a/b/c").is_ok());
        assert!(!fs.budget().spent());
        assert!(fs.resolve("/a/b/c").is_err());
        assert!(fs.budget().spent());
        // Spent is spent: even a one-component path fails now.
        assert!(fs.resolve("/a").is_err());
    }

    #[test]
    fn image_paths() {
        let fs = RootFs::new(Some(PathBuf::from("/img")), 1000);
        assert_eq!(fs.image_path(Path::new("/img/usr/lib/x.so")), "/usr/lib/x.so");
        assert_eq!(fs.image_path(Path::new("/usr/lib/x.so")), "/usr/lib/x.so");
        let host = RootFs::new(None, 1000);
        assert_eq!(host.image_path(Path::new("/a/./b")), "/a/./b");
    }
}
