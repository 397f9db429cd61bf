//! `/etc/ld.so.conf` and its `include`s: the directories ldconfig indexes into ld.so.cache.
//!
//! ld.so itself never reads this file, so resolution does not use it. It explains a miss: a
//! library sitting in a configured directory that the cache does not list means ldconfig has not
//! run since it was installed (common in hand-built images).
//!
//! Because only explanations depend on it, what goes past a cap here (a file too large or not
//! a regular file, too many files, too deep includes, too long a directory listing) is skipped
//! with a note, as ldconfig warns about an unreadable file and goes on; the closure stays right.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::input::{read_capped, InputError};
use crate::limits::Budget;
use crate::rootfs::RootFs;

/// Size of one configuration file (real ones: a few hundred bytes).
const MAX_CONF_BYTES: u64 = 1 << 20;
/// Configuration files read in all (real: tens).
const MAX_CONF_FILES: usize = 1000;
/// Nesting of `include`s, which bounds the recursion (real: 1; ldconfig has no limit, and the
/// visited set already stops loops).
const MAX_INCLUDE_DEPTH: usize = 16;
/// Directories kept (real: tens).
const MAX_DIRS: usize = 10_000;

/// What the configuration lists, and what was skipped on the way.
#[derive(Debug, Default)]
pub struct Conf {
    /// The directories, includes expanded in glob order, each once.
    pub dirs: Vec<String>,
    /// One line per thing skipped (a cap reached, a FIFO, …).
    pub notes: Vec<String>,
}

struct Reader<'a> {
    fs: &'a RootFs,
    budget: &'a Budget,
    /// Host paths of the files read: loops and diamonds are read once, so `include` fan-out
    /// costs the number of files, not the number of paths to them.
    visited: HashSet<PathBuf>,
    /// Directory entries that may still be listed for globs.
    entries_left: usize,
    seen_dirs: HashSet<String>,
    /// Files not read for their depth: a shallower include may still read them.
    too_deep: Vec<(String, PathBuf)>,
    conf: Conf,
}

/// The directories listed by `conf` (a path inside the inspected system); unreadable files are
/// skipped, as ldconfig warns and goes on. Globs list at most `max_dir_entries` entries in all;
/// lookups are paid from `budget`, not the inspection's: running out only stops explanations.
pub fn directories(fs: &RootFs, conf: &str, max_dir_entries: usize, budget: &Budget) -> Conf {
    let mut r = Reader {
        fs,
        budget,
        visited: HashSet::new(),
        entries_left: max_dir_entries,
        seen_dirs: HashSet::new(),
        too_deep: Vec::new(),
        conf: Conf::default(),
    };
    r.read_conf(conf, 0);
    let unread: Vec<String> =
        r.too_deep.iter().filter(|(_, host)| !r.visited.contains(host)).map(|(c, _)| c.clone()).collect();
    if let Some(first) = unread.first() {
        r.note(format!(
            "ld.so.conf: {} included file(s) nested deeper than {MAX_INCLUDE_DEPTH} were not read ({first}, …)",
            unread.len()
        ));
    }
    if budget.spent() {
        r.note(format!("ld.so.conf: reading stopped after {} file-system lookups", budget.limit()));
    }
    r.conf
}

impl Reader<'_> {
    fn note(&mut self, note: String) {
        if !self.conf.notes.contains(&note) {
            self.conf.notes.push(note);
        }
    }

    fn read_conf(&mut self, conf: &str, depth: usize) {
        let Ok(host) = self.fs.resolve_with(conf, self.budget) else { return };
        if self.visited.contains(&host) {
            return;
        }
        if depth > MAX_INCLUDE_DEPTH {
            self.too_deep.push((conf.to_string(), host));
            return;
        }
        self.visited.insert(host.clone());
        if self.visited.len() > MAX_CONF_FILES {
            self.note(format!("ld.so.conf: only the first {MAX_CONF_FILES} configuration files were read"));
            return;
        }
        let text = match read_capped(&host, MAX_CONF_BYTES) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(InputError::Io(_)) => return,
            Err(e) => {
                self.note(format!("ld.so.conf: {conf} {e}; skipped"));
                return;
            }
        };
        let conf_dir = conf.rsplit_once('/').map_or("", |(d, _)| d);
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with("hwcap ") {
                continue;
            }
            if let Some(rest) = line.strip_prefix("include") {
                if rest.starts_with(char::is_whitespace) {
                    for pattern in rest.split_whitespace() {
                        let pattern = if pattern.starts_with('/') {
                            pattern.to_string()
                        } else {
                            format!("{conf_dir}/{pattern}")
                        };
                        for file in self.glob(&pattern) {
                            self.read_conf(&file, depth + 1);
                        }
                    }
                    continue;
                }
            }
            // "dir=TYPE" (libc5 era) names a directory too; several may share a line.
            for dir in line.split([' ', '\t', ',', ':']).filter(|d| !d.is_empty()) {
                let dir = dir.split('=').next().unwrap_or(dir).trim_end_matches('/');
                let dir = if dir.is_empty() { "/" } else { dir };
                if self.seen_dirs.len() >= MAX_DIRS {
                    self.note(format!("ld.so.conf: only the first {MAX_DIRS} directories were kept"));
                    return;
                }
                if self.seen_dirs.insert(dir.to_string()) {
                    self.conf.dirs.push(dir.to_string());
                }
            }
        }
    }

    /// Expands `*` and `?` in the last component of `pattern`, sorted like glob(3).
    fn glob(&mut self, pattern: &str) -> Vec<String> {
        let (dir, name) = pattern.rsplit_once('/').unwrap_or(("", pattern));
        if !name.contains(['*', '?']) {
            return vec![pattern.to_string()];
        }
        let Ok(host) = self.fs.resolve_with(if dir.is_empty() { "/" } else { dir }, self.budget) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(host) else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for entry in entries {
            if self.entries_left == 0 {
                self.note(format!(
                    "ld.so.conf: directory listings for include globs stopped at the cap on entries listed (--max-dir-entries) ({pattern})"
                ));
                break;
            }
            self.entries_left -= 1;
            let Some(n) = entry.ok().and_then(|e| e.file_name().into_string().ok()) else { continue };
            if !n.starts_with('.') && wildcard(name.as_bytes(), n.as_bytes()) {
                names.push(n);
            }
        }
        names.sort();
        names.into_iter().map(|n| format!("{dir}/{n}")).collect()
    }
}

/// glob(3)'s `*` and `?` over one file name, without recursion: a pattern of a million `*`
/// must neither overflow the stack nor backtrack exponentially. Runs of `*` act as one, and the
/// classic single-backtrack-point algorithm is linear in the name per pattern position. (The
/// `glob` crate's matcher recurses once per `*`; this is the whole of what is needed here.)
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    let literal = pattern.iter().filter(|&&c| c != b'*').count();
    if literal > name.len() {
        return false;
    }
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it has been tried up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                while pattern.get(p) == Some(&b'*') {
                    p += 1;
                }
                star = Some((p, n));
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("etc/ld.so.conf.d")).unwrap();
        std::fs::write(
            root.join("etc/ld.so.conf"),
            "# top\n/opt/a/lib/\ninclude /etc/ld.so.conf.d/*.conf\ninclude loop.conf\n",
        )
        .unwrap();
        std::fs::write(root.join("etc/ld.so.conf.d/b.conf"), "/opt/b # b\n").unwrap();
        std::fs::write(root.join("etc/ld.so.conf.d/a.conf"), "/opt/a/lib\n/usr/local/lib\n").unwrap();
        std::fs::write(root.join("etc/ld.so.conf.d/skip.txt"), "/nope\n").unwrap();
        std::fs::write(root.join("etc/loop.conf"), "include loop.conf\n/opt/c\n").unwrap();
        let fs = RootFs::new(Some(root.to_path_buf()), 1000);
        let conf = directories(&fs, "/etc/ld.so.conf", 1000, &Budget::new(1000));
        assert_eq!(conf.dirs, ["/opt/a/lib", "/usr/local/lib", "/opt/b", "/opt/c"]);
        assert!(conf.notes.is_empty(), "{:?}", conf.notes);
    }

    #[test]
    fn wildcards() {
        assert!(wildcard(b"*.conf", b"x86_64-linux-gnu.conf"));
        assert!(!wildcard(b"*.conf", b"x.conf.bak"));
        assert!(wildcard(b"a?c", b"abc"));
        assert!(wildcard(b"*", b""));
        assert!(wildcard(b"**a**b*", b"xxaybz"));
        assert!(!wildcard(b"*a*b", b"xxaybz"));
        assert!(wildcard(b"a*b*c", b"aXbYbZc"));
        assert!(!wildcard(b"a?", b"a"));
        assert!(!wildcard(b"", b"a"));
        // A million stars: no recursion, no backtracking blow-up.
        let stars = vec![b'*'; 1_000_000];
        assert!(wildcard(&stars, b"x86_64-linux-gnu.conf"));
        let mut p = b"*a".repeat(100_000);
        p.push(b'b');
        assert!(!wildcard(&p, &b"a".repeat(200)));
    }
}
