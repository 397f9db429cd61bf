//! Paths as the loader of the inspected system sees them.
//!
//! Without `--root` that is this machine. With `--root DIR` (an unpacked container image) every
//! path the loader would open is looked up under DIR, and symbolic links are followed inside DIR:
//! an image's `/usr/lib/libfoo.so.1 -> /opt/foo/libfoo.so.1` must land on `DIR/opt/foo`, never on
//! this machine's `/opt/foo`.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Symlink hops before giving up, as Linux's MAXSYMLINKS.
const MAX_LINKS: usize = 40;

/// The filesystem the loader would search.
#[derive(Debug, Clone)]
pub struct RootFs {
    root: Option<PathBuf>,
}

impl RootFs {
    /// `root` is the image directory, or `None` for this machine.
    pub fn new(root: Option<PathBuf>) -> RootFs {
        RootFs { root }
    }

    /// The image directory, when inspecting one.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The host path of `path` (a path inside the inspected system) with every symlink resolved,
    /// or the error the loader's `open` would meet (NotFound for a missing file).
    pub fn resolve(&self, path: &str) -> io::Result<PathBuf> {
        match &self.root {
            None => fs::canonicalize(path),
            Some(root) => resolve_in_root(root, Path::new(path)),
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
/// targets and for `..` at the top, so nothing escapes the image.
fn resolve_in_root(root: &Path, path: &Path) -> io::Result<PathBuf> {
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, path);
    let mut done: Vec<OsString> = Vec::new();
    let mut links = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            done.pop();
            continue;
        }
        let mut host = root.to_path_buf();
        host.extend(&done);
        host.push(&part);
        let meta = fs::symlink_metadata(&host)?;
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(io::Error::other("too many levels of symbolic links"));
            }
            let target = fs::read_link(&host)?;
            if target.is_absolute() {
                done.clear();
            }
            push_components(&mut todo, &target);
        } else {
            done.push(part);
        }
    }
    let mut host = root.to_path_buf();
    host.extend(&done);
    Ok(host)
}

/// Pushes the components of `path` so that the first one is popped first.
fn push_components(todo: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    todo.extend(parts.into_iter().rev());
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
        let fs = RootFs::new(Some(root.to_path_buf()));
        assert_eq!(fs.resolve("/lib/libfoo.so.1").unwrap(), root.join("opt/foo/libfoo.so.1.2"));
        assert_eq!(
            fs.resolve("/usr/lib/../../../opt/foo/libfoo.so.1.2").unwrap(),
            root.join("opt/foo/libfoo.so.1.2")
        );
        assert_eq!(fs.resolve("/lib/missing").unwrap_err().kind(), io::ErrorKind::NotFound);
        symlink("loop", root.join("loop")).unwrap();
        assert!(fs.resolve("/loop").is_err());
    }

    #[test]
    fn image_paths() {
        let fs = RootFs::new(Some(PathBuf::from("/img")));
        assert_eq!(fs.image_path(Path::new("/img/usr/lib/x.so")), "/usr/lib/x.so");
        assert_eq!(fs.image_path(Path::new("/usr/lib/x.so")), "/usr/lib/x.so");
        let host = RootFs::new(None);
        assert_eq!(host.image_path(Path::new("/a/./b")), "/a/./b");
    }
}
