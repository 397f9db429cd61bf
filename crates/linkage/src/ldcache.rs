//! glibc's `/etc/ld.so.cache`, the binary index ldconfig writes and ld.so consults after the
//! RUNPATH and before the default directories.
//!
//! Formats: the current one (`glibc-ld.so.cache1.1`, glibc ≥ 2.32 writes only this) and the
//! compat one (`ld.so-1.7.0` entries followed by the new table, written before 2.32). String
//! offsets of the new table count from the new table's header; those of the extension
//! directory (glibc ≥ 2.33: the glibc-hwcaps subdirectory names) from the file's start.
//!
//! Entries of libraries in hwcap subdirectories carry bits in their `hwcap` field; which of them
//! count depends on the glibc and the CPU ([`CacheRules`], from [`crate::hwcaps`]).

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
/// `cache_extension_magic`, `(uint32_t) -358342284`.
const EXTENSION_MAGIC: u32 = 0xeaa4_2174;
/// `cache_extension_tag_glibc_hwcaps`.
const TAG_GLIBC_HWCAPS: u32 = 1;
/// `DL_CACHE_HWCAP_EXTENSION`: the low 32 bits index the glibc-hwcaps names.
const HWCAP_EXTENSION: u64 = 1 << 62;
/// `DL_CACHE_HWCAP_ISA_LEVEL_MASK`, in the upper 32 bits.
const ISA_LEVEL_MASK: u64 = (1 << 10) - 1;

use std::cell::RefCell;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

use crate::hwcaps::CacheRules;

/// NAME_MAX: a key longer than this names no file, so it can never be what a DT_NEEDED name
/// finds (the loader would still compare it; it could not open the result under that name).
/// Keys are hashed up to this length, which bounds the cost of indexing a crafted cache.
const MAX_KEY: usize = 255;

/// One cache entry, as a lookup returns it: `key` is the name looked up (the soname), `value`
/// the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// Library type and architecture (`FLAG_*`).
    pub flags: i32,
    /// The soname the entry answers for.
    pub key: String,
    /// The path ld.so opens (cut at PATH_MAX, which no path that opens exceeds).
    pub value: String,
    /// Non-zero for glibc-hwcaps and legacy hwcap subdirectory entries.
    pub hwcap: u64,
}

/// An entry as stored: offsets into the file's bytes. Strings are read only for a hit: a cache
/// whose million entries all name one megabyte-long string must not become a terabyte.
#[derive(Debug, Clone, Copy)]
struct RawEntry {
    flags: i32,
    /// Offsets from the start of the file; `None` when they overflow.
    key: Option<usize>,
    value: Option<usize>,
    hwcap: u64,
}

/// A normalized name, the flags wanted and the hash of the hwcap rules.
type MemoKey = (Vec<u8>, Option<i32>, u64);

/// A parsed cache, entries in file order (sorted by ldconfig; equal keys keep its preference).
#[derive(Debug, Default)]
pub struct LdCache {
    bytes: Vec<u8>,
    entries: Vec<RawEntry>,
    /// The entries are the new format's, with hwcap fields.
    new_format: bool,
    /// The glibc-hwcaps section: file offsets of the subdirectory names, sorted by name.
    hwcaps_names: Vec<u32>,
    /// Per hash of the hwcap rules: the priority of each glibc-hwcaps name (0: not usable).
    priorities: RefCell<HashMap<u64, Rc<Vec<u32>>>>,
    /// `(hash of the normalized key, entry index)`, sorted: equal keys are neighbours, in file
    /// order. The hasher's keys are random, so a crafted cache cannot make its keys collide.
    index: Vec<(u64, u32)>,
    hasher: RandomState,
    /// Lookups already answered, by normalized name and flags: the names `libfoo.so.1`,
    /// `libfoo.so.01`, … are one bucket, scanned once.
    memo: RefCell<HashMap<MemoKey, Option<u32>>>,
}

impl LdCache {
    /// Parses the cache file's bytes; the error is one line naming what is wrong.
    pub fn parse(bytes: Vec<u8>) -> Result<LdCache, String> {
        let ((raw, hwcaps_names), new_format) = if bytes.starts_with(MAGIC_NEW) {
            (parse_new(&bytes, 0)?, true)
        } else if bytes.starts_with(MAGIC_OLD) {
            let nlibs = u32_at(&bytes, 12, true).ok_or("truncated header")? as usize;
            let new_at = align8(OLD_HEADER.saturating_add(nlibs.saturating_mul(OLD_ENTRY)));
            if bytes.len() > new_at && bytes[new_at..].starts_with(MAGIC_NEW) {
                (parse_new(&bytes, new_at)?, true)
            } else {
                ((parse_old(&bytes, nlibs)?, Vec::new()), false)
            }
        } else {
            return Err("not an ld.so.cache (unknown magic)".into());
        };
        let hasher = RandomState::new();
        let mut index: Vec<(u64, u32)> = Vec::new();
        index.try_reserve_exact(raw.len()).map_err(|_| "too many entries to index")?;
        for (i, e) in raw.iter().enumerate() {
            if let Some(key) = e.key.and_then(|k| cstr_at(&bytes, k, MAX_KEY)) {
                index.push((hash_normalized(&hasher, key), i as u32));
            }
        }
        index.sort_unstable();
        Ok(LdCache {
            bytes,
            entries: raw,
            new_format,
            hwcaps_names,
            priorities: RefCell::default(),
            index,
            hasher,
            memo: RefCell::default(),
        })
    }

    /// How many entries the cache has.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Entry `i` with its strings, if they read.
    pub fn entry(&self, i: usize) -> Option<CacheEntry> {
        let e = self.entries.get(i)?;
        let key = cstr_at(&self.bytes, e.key?, MAX_KEY)?;
        // A value without a NUL within PATH_MAX is cut there: opening it fails with
        // ENAMETOOLONG, as the loader's open of the whole string would.
        let v = e.value?;
        let value = cstr_at(&self.bytes, v, crate::rootfs::PATH_MAX).unwrap_or_else(|| {
            let rest = self.bytes.get(v..).unwrap_or(&[]);
            &rest[..rest.len().min(crate::rootfs::PATH_MAX)]
        });
        Some(CacheEntry {
            flags: e.flags,
            key: String::from_utf8_lossy(key).into_owned(),
            value: String::from_utf8_lossy(value).into_owned(),
            hwcap: e.hwcap,
        })
    }

    /// What ld.so's `_dl_load_cache_lookup` returns for `name`: among the entries whose key
    /// equals it (compared as glibc does, numbers by value) and whose flags suit `want_flags`
    /// (`None`: any ELF entry), in file order, glibc's `search_cache` choice under `rules`:
    /// the usable glibc-hwcaps entry of the best priority (ldconfig lists them first), else the
    /// first other entry whose legacy hwcap bits the CPU and glibc allow.
    pub fn lookup(&self, name: &str, want_flags: Option<i32>, rules: &CacheRules) -> Option<CacheEntry> {
        let name = name.as_bytes();
        if name.len() > MAX_KEY {
            return None;
        }
        let rules_hash = self.hasher.hash_one(rules);
        let memo_key = (normalized(name).collect::<Vec<u8>>(), want_flags, rules_hash);
        if let Some(hit) = self.memo.borrow().get(&memo_key) {
            return hit.and_then(|i| self.entry(i as usize));
        }
        let h = hash_normalized(&self.hasher, name);
        let first = self.index.partition_point(|&(eh, _)| eh < h);
        let candidates =
            self.index[first..].iter().take_while(|&&(eh, _)| eh == h).map(|&(_, i)| i).filter(|&i| {
                let e = &self.entries[i as usize];
                e.key.and_then(|k| cstr_at(&self.bytes, k, MAX_KEY)).is_some_and(|k| libcmp_eq(k, name))
                    && match want_flags {
                        Some(f) => e.flags == f || (f == FLAG_ELF_LIBC6 && e.flags == FLAG_ELF),
                        None => matches!(e.flags & FLAG_TYPE_MASK, FLAG_ELF | FLAG_ELF_LIBC6),
                    }
            });
        let hit = self.choose(candidates, rules, rules_hash);
        self.memo.borrow_mut().insert(memo_key, hit);
        hit.and_then(|i| self.entry(i as usize))
    }

    /// The loop of glibc's `search_cache` over the suitable entries of one name.
    fn choose(
        &self,
        candidates: impl Iterator<Item = u32>,
        rules: &CacheRules,
        rules_hash: u64,
    ) -> Option<u32> {
        let mut best = None;
        let mut best_priority = 0;
        for i in candidates {
            if !self.new_format {
                return Some(i);
            }
            let hwcap = self.entries[i as usize].hwcap;
            let named = (hwcap >> 32) & !ISA_LEVEL_MASK == HWCAP_EXTENSION >> 32;
            if named {
                // Older loaders do not know the bit: it is outside every hwcap they allow.
                if rules.named.is_none() {
                    continue;
                }
                let level = (hwcap >> 32) & ISA_LEVEL_MASK;
                if rules.isa_level.is_some_and(|cpu| level >= u64::from(cpu)) {
                    continue;
                }
            }
            // The glibc-hwcaps entries come first; the first other one ends the search once
            // one of them was chosen.
            if !named && best.is_some() {
                break;
            }
            match &rules.legacy {
                Some(legacy) => {
                    if !named && hwcap & legacy.exclude != 0 {
                        continue;
                    }
                    let platform = hwcap & legacy.platform_mask;
                    if platform != 0 && Some(platform) != legacy.platform_bit {
                        continue;
                    }
                }
                None if !named && hwcap != 0 => continue,
                None => {}
            }
            if named {
                let priority =
                    self.priorities(rules, rules_hash).get(hwcap as u32 as usize).copied().unwrap_or(0);
                if priority == 0 || (best.is_some() && priority >= best_priority) {
                    continue;
                }
                best_priority = priority;
            }
            best = Some(i);
            if !named {
                break;
            }
        }
        best
    }

    /// `glibc_hwcaps_priorities_init`: the cache's names (sorted) merged with the active
    /// subdirectories sorted by name, each matching name getting its place in the active list.
    fn priorities(&self, rules: &CacheRules, rules_hash: u64) -> Rc<Vec<u32>> {
        if let Some(p) = self.priorities.borrow().get(&rules_hash) {
            return p.clone();
        }
        let mut active: Vec<(&[u8], u32)> =
            rules.named.iter().flatten().enumerate().map(|(i, n)| (n.as_bytes(), i as u32 + 1)).collect();
        active.sort();
        let mut result = Vec::with_capacity(self.hwcaps_names.len());
        let mut right = active.iter().peekable();
        for &offset in &self.hwcaps_names {
            let Some(left) = cstr_at(&self.bytes, offset as usize, crate::rootfs::PATH_MAX) else {
                result.push(0);
                continue;
            };
            let mut priority = 0;
            while let Some((name, p)) = right.peek() {
                match left.cmp(name) {
                    std::cmp::Ordering::Equal => {
                        priority = *p;
                        right.next();
                        break;
                    }
                    std::cmp::Ordering::Less => break,
                    std::cmp::Ordering::Greater => {
                        right.next();
                    }
                }
            }
            result.push(priority);
        }
        let result = Rc::new(result);
        self.priorities.borrow_mut().insert(rules_hash, result.clone());
        result
    }
}

fn align8(n: usize) -> usize {
    n.div_ceil(8).saturating_mul(8)
}

fn u32_at(b: &[u8], at: usize, little: bool) -> Option<u32> {
    let raw: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if little { u32::from_le_bytes(raw) } else { u32::from_be_bytes(raw) })
}

fn u64_at(b: &[u8], at: usize, little: bool) -> Option<u64> {
    let raw: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if little { u64::from_le_bytes(raw) } else { u64::from_be_bytes(raw) })
}

/// The bytes of the NUL-terminated string at `at`, if its NUL comes within `max` bytes.
fn cstr_at(b: &[u8], at: usize, max: usize) -> Option<&[u8]> {
    let rest = b.get(at..)?;
    let rest = &rest[..rest.len().min(max.saturating_add(1))];
    let len = rest.iter().position(|&c| c == 0)?;
    Some(&rest[..len])
}

fn parse_new(bytes: &[u8], base: usize) -> Result<(Vec<RawEntry>, Vec<u32>), String> {
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
    // The count was checked against the file's length, so this is at most the file's size.
    let mut entries = Vec::new();
    entries.try_reserve_exact(nlibs).map_err(|_| "too many entries")?;
    for at in (NEW_HEADER..end).step_by(NEW_ENTRY) {
        let flags = u32_at(new, at, little).ok_or("truncated entry")? as i32;
        let key = u32_at(new, at + 4, little).ok_or("truncated entry")? as usize;
        let value = u32_at(new, at + 8, little).ok_or("truncated entry")? as usize;
        let hwcap = u64_at(new, at + 16, little).ok_or("truncated entry")?;
        entries.push(RawEntry { flags, key: base.checked_add(key), value: base.checked_add(value), hwcap });
    }
    let extension = u32_at(new, 32, little).unwrap_or(0) as usize;
    Ok((entries, hwcaps_section(bytes, extension, little)))
}

/// The glibc-hwcaps section of the extension directory at file offset `at` (0: none), as
/// `cache_extension_load` reads it. A section out of bounds or misaligned leaves it empty: its
/// entries then match no subdirectory, as when ld.so drops the section (a corrupt directory
/// makes ld.so drop the whole cache; such a cache is not ldconfig's).
fn hwcaps_section(bytes: &[u8], at: usize, little: bool) -> Vec<u32> {
    if at == 0 || at & 3 != 0 || u32_at(bytes, at, little) != Some(EXTENSION_MAGIC) {
        return Vec::new();
    }
    let count = u32_at(bytes, at + 4, little).unwrap_or(0) as usize;
    // Each section header is 16 bytes; a count beyond the file is cut to what is there.
    let count = count.min(bytes.len().saturating_sub(at + 8) / 16);
    let mut names = Vec::new();
    for s in 0..count {
        let h = at + 8 + s * 16;
        let (Some(tag), Some(offset), Some(size)) =
            (u32_at(bytes, h, little), u32_at(bytes, h + 8, little), u32_at(bytes, h + 12, little))
        else {
            break;
        };
        let (offset, size) = (offset as usize, size as usize);
        if tag != TAG_GLIBC_HWCAPS || size == 0 || (offset | size) & 3 != 0 {
            continue;
        }
        match offset.checked_add(size) {
            Some(end) if end <= bytes.len() => {}
            _ => return Vec::new(),
        }
        names = (offset..offset + size).step_by(4).filter_map(|at| u32_at(bytes, at, little)).collect();
    }
    names
}

fn parse_old(bytes: &[u8], nlibs: usize) -> Result<Vec<RawEntry>, String> {
    let strings = nlibs
        .checked_mul(OLD_ENTRY)
        .and_then(|n| n.checked_add(OLD_HEADER))
        .filter(|&e| e <= bytes.len())
        .ok_or("truncated: fewer entries than the header counts")?;
    let little = cfg!(target_endian = "little");
    let mut entries = Vec::new();
    entries.try_reserve_exact(nlibs).map_err(|_| "too many entries")?;
    for at in (OLD_HEADER..strings).step_by(OLD_ENTRY) {
        let flags = u32_at(bytes, at, little).ok_or("truncated entry")? as i32;
        let key = u32_at(bytes, at + 4, little).ok_or("truncated entry")? as usize;
        let value = u32_at(bytes, at + 8, little).ok_or("truncated entry")? as usize;
        entries.push(RawEntry {
            flags,
            key: strings.checked_add(key),
            value: strings.checked_add(value),
            hwcap: 0,
        });
    }
    Ok(entries)
}

/// The bytes of `s` with leading zeros dropped from each run of digits (one kept for an
/// all-zero run): two names are equal under glibc's `_dl_cache_libcmp`, which compares digit
/// runs by value, exactly when these are equal.
fn normalized(s: &[u8]) -> impl Iterator<Item = u8> + '_ {
    // Outside a digit run, or still in its leading zeros.
    let mut leading = true;
    s.iter().enumerate().filter_map(move |(i, &c)| {
        if !c.is_ascii_digit() {
            leading = true;
            return Some(c);
        }
        if leading && c == b'0' && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        leading = false;
        Some(c)
    })
}

fn hash_normalized(hasher: &RandomState, s: &[u8]) -> u64 {
    let mut h = hasher.build_hasher();
    for c in normalized(s) {
        h.write_u8(c);
    }
    h.finish()
}

/// Equality under glibc's `_dl_cache_libcmp`, which compares digit runs by numeric value
/// (`libfoo.so.01` finds the entry `libfoo.so.1`).
fn libcmp_eq(a: &[u8], b: &[u8]) -> bool {
    normalized(a).eq(normalized(b))
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
        let cache = LdCache::parse(bytes).unwrap();
        let none = CacheRules::default();
        assert_eq!(cache.len(), 4);
        let hit = cache.lookup("libz.so.1", Some(0x0303), &none).unwrap();
        assert_eq!(hit.value, "/lib/x86_64-linux-gnu/libz.so.1");
        assert_eq!(cache.lookup("libz.so.01", Some(0x0303), &none).unwrap().value, hit.value);
        assert_eq!(cache.lookup("libz.so.1", Some(0x0003), &none).unwrap().value, "/usr/lib32/libz.so.1");
        assert!(cache.lookup("libz.so.10", Some(0x0303), &none).is_none());
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(LdCache::parse(b"".to_vec()).is_err());
        assert!(LdCache::parse(b"hello".to_vec()).is_err());
        let mut bytes = build(&[(0x0303, "a", "b", 0)]);
        bytes.truncate(60);
        assert!(LdCache::parse(bytes).is_err());
        let mut bytes = build(&[(0x0303, "a", "b", 0)]);
        bytes[20] = 0xff; // absurd entry count
        assert!(LdCache::parse(bytes).is_err());
    }

    #[test]
    fn this_machines_cache_parses() {
        // glibc's own ldconfig wrote it; every entry must read and libc must be there.
        let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
            return;
        };
        let cache = LdCache::parse(bytes).unwrap();
        assert!((0..cache.len()).any(|i| cache.entry(i).is_some_and(|e| e.key == "libc.so.6")));
        assert!(cache.lookup("libc.so.6", None, &CacheRules::default()).is_some());
    }

    #[test]
    fn numeric_comparison() {
        let eq = |a: &str, b: &str| libcmp_eq(a.as_bytes(), b.as_bytes());
        assert!(eq("libfoo.so.1", "libfoo.so.001"));
        assert!(eq("libfoo.so.0", "libfoo.so.000"));
        assert!(eq("lib01x10.so", "lib1x010.so"));
        assert!(!eq("libfoo.so.1", "libfoo.so.1.2"));
        assert!(!eq("libfoo.so", "libfoo.so.1"));
        assert!(!eq("libfoo.so.10", "libfoo.so.1"));
        assert!(!eq("libfoo.so.0", "libfoo.so."));
        assert!(eq("", ""));
    }

    #[test]
    fn strings_are_not_copied_per_entry() {
        // Two hundred thousand entries naming one 64 KiB string: reading each would copy
        // 25 GB; only the hit is read.
        let long = "x".repeat(64 << 10);
        let mut entries: Vec<(i32, &str, &str, u64)> = vec![(0x0303, &long, &long, 0); 1];
        entries.push((0x0303, "libz.so.1", "/usr/lib/libz.so.1", 0));
        let mut bytes = build(&entries);
        // Point 200 000 more entries at the long string by repeating the first entry.
        let first: Vec<u8> = bytes[NEW_HEADER..NEW_HEADER + NEW_ENTRY].to_vec();
        let n = 200_000usize;
        let strings = bytes.split_off(NEW_HEADER + 2 * NEW_ENTRY);
        let shift = (n * NEW_ENTRY) as u32;
        let fix = |e: &[u8]| {
            let mut e = e.to_vec();
            for at in [4, 8] {
                let v = u32::from_le_bytes(e[at..at + 4].try_into().unwrap()) + shift;
                e[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            e
        };
        let (e0, e1) = (fix(&first), fix(&bytes[NEW_HEADER + NEW_ENTRY..]));
        bytes.truncate(NEW_HEADER);
        bytes[20..24].copy_from_slice(&((n + 2) as u32).to_le_bytes());
        for _ in 0..=n {
            bytes.extend_from_slice(&e0);
        }
        bytes.extend_from_slice(&e1);
        bytes.extend_from_slice(&strings);
        let cache = LdCache::parse(bytes).unwrap();
        let none = CacheRules::default();
        assert_eq!(cache.len(), n + 2);
        assert_eq!(cache.lookup("libz.so.1", Some(0x0303), &none).unwrap().value, "/usr/lib/libz.so.1");
        assert!(
            cache.lookup(&long, Some(0x0303), &none).is_none(),
            "a key longer than NAME_MAX names no file"
        );
    }
}
