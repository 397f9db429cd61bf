//! glibc's `/etc/ld.so.cache`, the binary index ldconfig writes and ld.so consults after the
//! RUNPATH and before the default directories.
//!
//! Formats: the current one (`glibc-ld.so.cache1.1`, glibc ≥ 2.32 writes only this) and the
//! compat one (`ld.so-1.7.0` entries followed by the new table, written before 2.32). String
//! offsets of the new table count from the new table's header.

/// `FLAG_ELF_LIBC6` in the low byte: a glibc ELF library.
const FLAG_ELF_LIBC6: i32 = 0x0003;
/// `FLAG_ELF` (libc5 era): still accepted by some architectures' checks.
const FLAG_ELF: i32 = 0x0001;
const FLAG_TYPE_MASK: i32 = 0x00ff;

const MAGIC_OLD: &[u8] = b"ld.so-1.7.0";
const MAGIC_NEW: &[u8] = b"glibc-ld.so.cache1.1";
const NEW_HEADER: usize = 48;
const NEW_ENTRY: usize = 24;
const OLD_HEADER: usize = 16;
const OLD_ENTRY: usize = 12;

/// One cache entry: `key` is the name looked up (the soname), `value` the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// Library type and architecture (`FLAG_*`).
    pub flags: i32,
    /// The soname the entry answers for.
    pub key: String,
    /// The path ld.so opens.
    pub value: String,
    /// Non-zero for glibc-hwcaps and legacy hwcap subdirectory entries.
    pub hwcap: u64,
}

/// A parsed cache, entries in file order (sorted by ldconfig; equal keys keep its preference).
#[derive(Debug, Clone, Default)]
pub struct LdCache {
    /// All entries.
    pub entries: Vec<CacheEntry>,
}

impl LdCache {
    /// Parses the cache file's bytes; the error is one line naming what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<LdCache, String> {
        if bytes.starts_with(MAGIC_NEW) {
            return parse_new(bytes, 0);
        }
        if bytes.starts_with(MAGIC_OLD) {
            let nlibs = u32_at(bytes, 12, true).ok_or("truncated header")? as usize;
            let new_at = align8(OLD_HEADER + nlibs.saturating_mul(OLD_ENTRY));
            if bytes.len() > new_at && bytes[new_at..].starts_with(MAGIC_NEW) {
                return parse_new(bytes, new_at);
            }
            return parse_old(bytes, nlibs);
        }
        Err("not an ld.so.cache (unknown magic)".into())
    }

    /// What ld.so's `_dl_load_cache_lookup` returns for `name`: the first entry whose key equals
    /// it (compared as glibc does, numbers by value), whose flags suit `want_flags` (`None`: any
    /// ELF entry) and that is not an hwcap-subdirectory variant (those need the CPU's feature
    /// level, which this program does not ask the CPU for; see the crate docs).
    pub fn lookup(&self, name: &str, want_flags: Option<i32>) -> Option<&CacheEntry> {
        self.entries.iter().find(|e| {
            e.hwcap == 0
                && libcmp_eq(&e.key, name)
                && match want_flags {
                    Some(f) => e.flags == f || (f == FLAG_ELF_LIBC6 && e.flags == FLAG_ELF),
                    None => matches!(e.flags & FLAG_TYPE_MASK, FLAG_ELF | FLAG_ELF_LIBC6),
                }
        })
    }
}

fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

fn u32_at(b: &[u8], at: usize, little: bool) -> Option<u32> {
    let raw: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if little { u32::from_le_bytes(raw) } else { u32::from_be_bytes(raw) })
}

fn u64_at(b: &[u8], at: usize, little: bool) -> Option<u64> {
    let raw: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if little { u64::from_le_bytes(raw) } else { u64::from_be_bytes(raw) })
}

fn cstr_at(b: &[u8], at: usize) -> Option<String> {
    let rest = b.get(at..)?;
    let len = rest.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&rest[..len]).into_owned())
}

fn parse_new(bytes: &[u8], base: usize) -> Result<LdCache, String> {
    let new = &bytes[base..];
    // Byte order is recorded in the header's flags (2 little, 3 big); 0 means "this machine's".
    let little = match new.get(28).map(|f| f & 3) {
        Some(2) => true,
        Some(3) => false,
        Some(0) => cfg!(target_endian = "little"),
        _ => return Err("invalid byte-order flag".into()),
    };
    let nlibs = u32_at(new, 20, little).ok_or("truncated header")? as usize;
    let end = nlibs
        .checked_mul(NEW_ENTRY)
        .and_then(|n| n.checked_add(NEW_HEADER))
        .filter(|&e| e <= new.len())
        .ok_or("truncated: fewer entries than the header counts")?;
    let mut entries = Vec::with_capacity(nlibs);
    for at in (NEW_HEADER..end).step_by(NEW_ENTRY) {
        let flags = u32_at(new, at, little).ok_or("truncated entry")? as i32;
        let key = u32_at(new, at + 4, little).ok_or("truncated entry")? as usize;
        let value = u32_at(new, at + 8, little).ok_or("truncated entry")? as usize;
        let hwcap = u64_at(new, at + 16, little).ok_or("truncated entry")?;
        entries.push(CacheEntry {
            flags,
            key: cstr_at(new, key).ok_or("string offset outside the file")?,
            value: cstr_at(new, value).ok_or("string offset outside the file")?,
            hwcap,
        });
    }
    Ok(LdCache { entries })
}

fn parse_old(bytes: &[u8], nlibs: usize) -> Result<LdCache, String> {
    let strings = nlibs
        .checked_mul(OLD_ENTRY)
        .and_then(|n| n.checked_add(OLD_HEADER))
        .filter(|&e| e <= bytes.len())
        .ok_or("truncated: fewer entries than the header counts")?;
    let little = cfg!(target_endian = "little");
    let mut entries = Vec::with_capacity(nlibs);
    for at in (OLD_HEADER..strings).step_by(OLD_ENTRY) {
        let flags = u32_at(bytes, at, little).ok_or("truncated entry")? as i32;
        let key = u32_at(bytes, at + 4, little).ok_or("truncated entry")? as usize;
        let value = u32_at(bytes, at + 8, little).ok_or("truncated entry")? as usize;
        let s = |off: usize| {
            strings.checked_add(off).and_then(|p| cstr_at(bytes, p)).ok_or("string offset outside the file")
        };
        entries.push(CacheEntry { flags, key: s(key)?, value: s(value)?, hwcap: 0 });
    }
    Ok(LdCache { entries })
}

/// Equality under glibc's `_dl_cache_libcmp`, which compares digit runs by numeric value
/// (`libfoo.so.01` finds the entry `libfoo.so.1`).
fn libcmp_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (mut va, mut vb) = (0u128, 0u128);
            while i < a.len() && a[i].is_ascii_digit() {
                va = va.saturating_mul(10).saturating_add(u128::from(a[i] - b'0'));
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                vb = vb.saturating_mul(10).saturating_add(u128::from(b[j] - b'0'));
                j += 1;
            }
            if va != vb {
                return false;
            }
        } else if a[i] != b[j] {
            return false;
        } else {
            i += 1;
            j += 1;
        }
    }
    i == a.len() && j == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a new-format cache the way ldconfig lays it out.
    pub(crate) fn build(entries: &[(i32, &str, &str, u64)]) -> Vec<u8> {
        let mut strings = Vec::new();
        let strings_at = NEW_HEADER + entries.len() * NEW_ENTRY;
        let mut table = Vec::new();
        for (flags, key, value, hwcap) in entries {
            let k = strings_at + strings.len();
            strings.extend_from_slice(key.as_bytes());
            strings.push(0);
            let v = strings_at + strings.len();
            strings.extend_from_slice(value.as_bytes());
            strings.push(0);
            table.extend_from_slice(&flags.to_le_bytes());
            table.extend_from_slice(&(k as u32).to_le_bytes());
            table.extend_from_slice(&(v as u32).to_le_bytes());
            table.extend_from_slice(&0u32.to_le_bytes());
            table.extend_from_slice(&hwcap.to_le_bytes());
        }
        let mut out = MAGIC_NEW.to_vec();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        out.push(2);
        out.extend_from_slice(&[0; 3]);
        out.extend_from_slice(&[0; 16]);
        out.extend(table);
        out.extend(strings);
        out
    }

    #[test]
    fn lookup_prefers_the_first_plain_matching_entry() {
        let bytes = build(&[
            (0x0303, "libz.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libz.so.1", 1 << 62),
            (0x0003, "libz.so.1", "/usr/lib32/libz.so.1", 0),
            (0x0303, "libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", 0),
            (0x0303, "libz.so.1", "/usr/local/lib/libz.so.1", 0),
        ]);
        let cache = LdCache::parse(&bytes).unwrap();
        assert_eq!(cache.entries.len(), 4);
        let hit = cache.lookup("libz.so.1", Some(0x0303)).unwrap();
        assert_eq!(hit.value, "/lib/x86_64-linux-gnu/libz.so.1");
        assert_eq!(cache.lookup("libz.so.01", Some(0x0303)).unwrap().value, hit.value);
        assert_eq!(cache.lookup("libz.so.1", Some(0x0003)).unwrap().value, "/usr/lib32/libz.so.1");
        assert!(cache.lookup("libz.so.10", Some(0x0303)).is_none());
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(LdCache::parse(b"").is_err());
        assert!(LdCache::parse(b"hello").is_err());
        let mut bytes = build(&[(0x0303, "a", "b", 0)]);
        bytes.truncate(60);
        assert!(LdCache::parse(&bytes).is_err());
        let mut bytes = build(&[(0x0303, "a", "b", 0)]);
        bytes[20] = 0xff; // absurd entry count
        assert!(LdCache::parse(&bytes).is_err());
    }

    #[test]
    fn this_machines_cache_parses() {
        // glibc's own ldconfig wrote it; every entry must read and libc must be there.
        let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
            return;
        };
        let cache = LdCache::parse(&bytes).unwrap();
        assert!(cache.entries.iter().any(|e| e.key == "libc.so.6"));
    }

    #[test]
    fn numeric_comparison() {
        assert!(libcmp_eq("libfoo.so.1", "libfoo.so.001"));
        assert!(!libcmp_eq("libfoo.so.1", "libfoo.so.1.2"));
        assert!(!libcmp_eq("libfoo.so", "libfoo.so.1"));
        assert!(libcmp_eq("", ""));
    }
}
