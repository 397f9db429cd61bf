//! Entry points for the fuzz targets (`fuzz/`, `linkage_*`) and for the replay of what they
//! found (`tests/regressions/`). Not a stable interface: hidden from the docs.
//!
//! `linkage_resolve` input: sections separated by `\n==\n`:
//!
//! 0. the bytes of `/etc/ld.so.cache` (empty: none);
//! 1. the text of `/etc/ld.so.conf` (empty: none);
//! 2. and after: one file each, a header line `PATH [MODE]` then the content. PATH is absolute,
//!    at most 6 components of `[A-Za-z0-9._+-]` (another is skipped). MODE: none, the content
//!    as is; `spec`, an ELF library generated from lines `needed NAME`, `rpath LIST`, `runpath
//!    LIST`, `soname NAME`, `interp PATH`, `nodeflib`, `class32`, `machine N`, `type N`,
//!    `static` (no PT_DYNAMIC); `link`, a symbolic link to the content; `fifo`, a named pipe.
//!
//! The first file is the inspected target; with none, the image is searched for torch.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{inspect, ClosureCaps, InspectOptions, Target};

/// Reads `bytes` as an ELF file, as any architecture and as this machine's; a one-line
/// description of the outcome.
pub fn elf(bytes: &[u8]) -> String {
    // As a candidate for this machine: a foreign file is passed over after its header.
    let _ = crate::elf::read_bytes(bytes, crate::elf::Arch::host());
    match crate::elf::read_bytes(bytes, None) {
        Ok(info) => format!("{} ELF, {} needed", info.arch, info.needed.len()),
        Err(e) => e.to_string(),
    }
}

/// Caps for fuzzing: small, so that each run is quick, and hit often, so that they are tested.
pub const LIMITS: ClosureCaps = ClosureCaps {
    max_libraries: 32,
    max_depth: 8,
    max_needed: 256,
    max_lookups: 20_000,
    max_cache_mib: 1,
    max_dir_entries: 256,
};

/// Builds the image that `input` describes in a fresh temporary directory and inspects it;
/// the report as JSON, or the error. Removes the directory, whatever happens.
pub fn resolve(input: &[u8]) -> Result<String, String> {
    let dir = TempDir::new().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let target = build_image(&dir.0, input).map_err(|e| format!("cannot build the image: {e}"))?;
    let target = match target {
        Some(path) => Target::Path(PathBuf::from(path)),
        None => Target::Python("python3".into()),
    };
    let opts = InspectOptions {
        root: Some(dir.0.clone()),
        ld_library_path: Some(String::new()),
        limits: LIMITS,
        ..Default::default()
    };
    match inspect(&target, &opts) {
        Ok(report) => serde_json::to_string(&report).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A directory removed when dropped (the library has no tempfile dependency to spare).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("launchguard-fuzz-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes the image; returns the first file's path inside it.
fn build_image(root: &Path, input: &[u8]) -> std::io::Result<Option<String>> {
    let mut sections = split(input, b"\n==\n");
    let cache = sections.next().unwrap_or_default();
    let conf = sections.next().unwrap_or_default();
    std::fs::create_dir_all(root.join("etc"))?;
    if !cache.is_empty() {
        std::fs::write(root.join("etc/ld.so.cache"), cache)?;
    }
    if !conf.is_empty() {
        std::fs::write(root.join("etc/ld.so.conf"), conf)?;
    }
    let mut first = None;
    for section in sections.take(16) {
        let (header, content) = match section.iter().position(|&b| b == b'\n') {
            Some(at) => (&section[..at], &section[at + 1..]),
            None => (section, &[][..]),
        };
        let header = String::from_utf8_lossy(header);
        let mut words = header.split(' ');
        let Some(path) = words.next().filter(|p| valid_path(p)) else { continue };
        let host = root.join(&path[1..]);
        if host.exists() || std::fs::symlink_metadata(&host).is_ok() {
            continue;
        }
        if let Some(parent) = host.parent() {
            // A file where a directory is wanted: skip this one.
            if std::fs::create_dir_all(parent).is_err() {
                continue;
            }
        }
        match words.next() {
            Some("spec") => std::fs::write(&host, elf_from_spec(&String::from_utf8_lossy(content)))?,
            Some("link") => {
                let target = String::from_utf8_lossy(&content[..content.len().min(256)]).replace('\0', "");
                std::os::unix::fs::symlink(target, &host)?;
            }
            Some("fifo") => {
                let c = std::ffi::CString::new(host.as_os_str().as_encoded_bytes())
                    .map_err(std::io::Error::other)?;
                // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
                if unsafe { libc::mkfifo(c.as_ptr(), 0o644) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            _ => std::fs::write(&host, content)?,
        }
        first.get_or_insert_with(|| path.to_string());
    }
    Ok(first)
}

fn split<'a>(input: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = Some(input);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(sep.len()).position(|w| w == sep) {
            Some(at) => {
                rest = Some(&r[at + sep.len()..]);
                Some(&r[..at])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

fn valid_path(p: &str) -> bool {
    let Some(rel) = p.strip_prefix('/') else { return false };
    let parts: Vec<&str> = rel.split('/').collect();
    parts.len() <= 6
        && parts.iter().all(|c| {
            !c.is_empty()
                && *c != "."
                && *c != ".."
                && c.len() <= 64
                && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
        })
}

/// An ELF shared library for the spec's lines: one PT_LOAD over the whole file, PT_DYNAMIC
/// (unless `static`) and optionally PT_INTERP; little-endian.
pub fn elf_from_spec(spec: &str) -> Vec<u8> {
    let (mut needed, mut rpath, mut runpath, mut soname, mut interp) = (vec![], None, None, None, None);
    let (mut is_64, mut machine, mut e_type, mut nodeflib, mut linked) = (true, 62u16, 3u16, false, true);
    for line in spec.lines().take(512) {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "needed" => needed.push(value.to_string()),
            "rpath" => rpath = Some(value.to_string()),
            "runpath" => runpath = Some(value.to_string()),
            "soname" => soname = Some(value.to_string()),
            "interp" => interp = Some(value.to_string()),
            "nodeflib" => nodeflib = true,
            "class32" => is_64 = false,
            "machine" => machine = value.parse().unwrap_or(machine),
            "type" => e_type = value.parse().unwrap_or(e_type),
            "static" => linked = false,
            _ => {}
        }
    }
    let (ehsize, phentsize, dynsize) = if is_64 { (64usize, 56usize, 16usize) } else { (52, 32, 8) };
    let phnum = 1 + usize::from(linked) + usize::from(interp.is_some());
    let strtab_off = ehsize + phentsize * phnum;
    let mut strtab = vec![0u8];
    let mut add = |s: &str| {
        let at = strtab.len() as u64;
        strtab.extend(s.bytes().filter(|&b| b != 0));
        strtab.push(0);
        at
    };
    let mut dynamic: Vec<(u64, u64)> = needed.iter().map(|n| (1, add(n))).collect();
    if let Some(s) = &soname {
        dynamic.push((14, add(s)));
    }
    if let Some(r) = &rpath {
        dynamic.push((15, add(r)));
    }
    if let Some(r) = &runpath {
        dynamic.push((29, add(r)));
    }
    if nodeflib {
        dynamic.push((0x6fff_fffb, 0x800));
    }
    let interp_off = strtab_off + strtab.len();
    let mut interp_bytes: Vec<u8> = interp.map(|i| [i.as_bytes(), &[0]].concat()).unwrap_or_default();
    let interp_len = interp_bytes.len();
    // The dynamic segment aligned, as linkers lay it out.
    interp_bytes.resize((interp_off + interp_len).next_multiple_of(8) - interp_off, 0);
    let dyn_off = interp_off + interp_bytes.len();
    dynamic.extend([(5, strtab_off as u64), (10, strtab.len() as u64), (0, 0)]);
    let dyn_size = if linked { dynamic.len() * dynsize } else { 0 };
    let total = dyn_off + dyn_size;

    let mut b = Vec::with_capacity(total);
    let word = |b: &mut Vec<u8>, v: u64| {
        if is_64 {
            b.extend_from_slice(&v.to_le_bytes())
        } else {
            b.extend_from_slice(&(v as u32).to_le_bytes())
        }
    };
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', if is_64 { 2 } else { 1 }, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&e_type.to_le_bytes());
    b.extend_from_slice(&machine.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    word(&mut b, 0); // e_entry
    word(&mut b, ehsize as u64); // e_phoff
    word(&mut b, 0); // e_shoff
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [ehsize, phentsize, phnum, 0, 0, 0] {
        b.extend_from_slice(&(v as u16).to_le_bytes());
    }
    let phdr = |b: &mut Vec<u8>, p_type: u32, off: usize, size: usize| {
        if is_64 {
            b.extend_from_slice(&p_type.to_le_bytes());
            b.extend_from_slice(&4u32.to_le_bytes());
            for v in [off, off, off, size, size, 8] {
                b.extend_from_slice(&(v as u64).to_le_bytes());
            }
        } else {
            for v in [p_type as usize, off, off, off, size, size, 4, 4] {
                b.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
    };
    phdr(&mut b, 1, 0, total);
    if linked {
        phdr(&mut b, 2, dyn_off, dyn_size);
    }
    if interp_len > 0 {
        phdr(&mut b, 3, interp_off, interp_len);
    }
    b.extend_from_slice(&strtab);
    b.extend_from_slice(&interp_bytes);
    for (tag, val) in dynamic.into_iter().filter(|_| linked) {
        word(&mut b, tag);
        word(&mut b, val);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_image_resolves() {
        let input = b"\n==\n\n==\n/lib/libtorch_cpu.so spec\nneeded libcupti.so.12\nrpath $ORIGIN/../cupti\n==\n/cupti/libcupti.so.12 spec\nsoname libcupti.so.12\n";
        let json = resolve(input).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["profiler_backend"], "cupti");
        assert_eq!(v["profiler_libraries"][0]["path"], "/lib/../cupti/libcupti.so.12");
        // The same library read from memory.
        let bytes = elf_from_spec("needed a\nneeded b\n");
        assert_eq!(elf(&bytes), "64-bit x86_64 ELF, 2 needed");
        assert_eq!(
            elf(b"\x7fELF"),
            "malformed ELF: truncated: the file is 4 bytes, shorter than an ELF header"
        );
    }

    #[test]
    fn paths_stay_inside() {
        assert!(valid_path("/usr/lib/libz.so.1"));
        for bad in ["usr/lib", "/a/../b", "/a//b", "/a/./b", "/a b", "/1/2/3/4/5/6/7"] {
            assert!(!valid_path(bad), "{bad}");
        }
    }
}
