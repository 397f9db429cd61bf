//! `/etc/ld.so.conf` and its `include`s: the directories ldconfig indexes into ld.so.cache.
//!
//! ld.so itself never reads this file, so resolution does not use it. It explains a miss: a
//! library sitting in a configured directory that the cache does not list means ldconfig has not
//! run since it was installed (common in hand-built images).

use crate::rootfs::RootFs;

/// Include depth before giving up, against `include` loops.
const MAX_DEPTH: usize = 8;

/// The directories listed by `conf` (a path inside the inspected system), includes expanded in
/// glob order; unreadable files are skipped, as ldconfig warns and goes on.
pub fn directories(fs: &RootFs, conf: &str) -> Vec<String> {
    let mut out = Vec::new();
    read_conf(fs, conf, 0, &mut out);
    out
}

fn read_conf(fs: &RootFs, conf: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(host) = fs.resolve(conf) else { return };
    let Ok(text) = std::fs::read_to_string(host) else {
        return;
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
                    for file in glob(fs, &pattern) {
                        read_conf(fs, &file, depth + 1, out);
                    }
                }
                continue;
            }
        }
        // "dir=TYPE" (libc5 era) names a directory too; several may share a line.
        for dir in line.split([' ', '\t', ',', ':']).filter(|d| !d.is_empty()) {
            let dir = dir.split('=').next().unwrap_or(dir).trim_end_matches('/');
            let dir = if dir.is_empty() { "/" } else { dir };
            if !out.iter().any(|d| d == dir) {
                out.push(dir.to_string());
            }
        }
    }
}

/// Expands `*` and `?` in the last component of `pattern`, sorted like glob(3).
fn glob(fs: &RootFs, pattern: &str) -> Vec<String> {
    let (dir, name) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    if !name.contains(['*', '?']) {
        return vec![pattern.to_string()];
    }
    let Ok(host) = fs.resolve(if dir.is_empty() { "/" } else { dir }) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(host) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && wildcard(name.as_bytes(), n.as_bytes()))
        .collect();
    names.sort();
    names.into_iter().map(|n| format!("{dir}/{n}")).collect()
}

fn wildcard(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => wildcard(&p[1..], s) || (!s.is_empty() && wildcard(p, &s[1..])),
        (Some(b'?'), Some(_)) => wildcard(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => wildcard(&p[1..], &s[1..]),
        _ => false,
    }
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
        let fs = RootFs::new(Some(root.to_path_buf()));
        assert_eq!(directories(&fs, "/etc/ld.so.conf"), ["/opt/a/lib", "/usr/local/lib", "/opt/b", "/opt/c"]);
    }

    #[test]
    fn wildcards() {
        assert!(wildcard(b"*.conf", b"x86_64-linux-gnu.conf"));
        assert!(!wildcard(b"*.conf", b"x.conf.bak"));
        assert!(wildcard(b"a?c", b"abc"));
    }
}
