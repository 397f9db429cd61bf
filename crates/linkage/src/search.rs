//! glibc's library search order (`_dl_map_object` in elf/dl-load.c), for one DT_NEEDED name:
//!
//! 1. a name containing `/` is a path (after `$ORIGIN`-style expansion), opened as is;
//! 2. only when the requesting object has no RUNPATH: the RPATH of the requester, then of the
//!    object that loaded it, and so on up to the main object (RPATH is inherited; an object
//!    with a RUNPATH has its RPATH ignored altogether);
//! 3. `LD_LIBRARY_PATH` (`:` or `;` separated, DSTs expanded for the main object);
//! 4. the requester's own RUNPATH (never inherited);
//! 5. `/etc/ld.so.cache`, then the system directories — both skipped, except cache entries
//!    outside the system directories, when the requester has `DF_1_NODEFLIB`.
//!
//! In every directory of 2–5 the loader first tries the hwcap subdirectories its glibc and the
//! CPU give ([`Platform::subdirs`], from [`crate::hwcaps`]), then the directory itself.
//!
//! A candidate of another class or machine is skipped silently; one that exists but is not a
//! valid ELF file stops the loader ("invalid ELF header"), so it stops the search here too.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::PathBuf;
use std::rc::Rc;

use object::elf;

use crate::cpu::{this_machine, ThisMachine};
use crate::elf::{Arch, ElfError, ElfInfo};
use crate::error::LinkageError;
use crate::hwcaps::{CacheRules, Derived};
use crate::input::{read_capped, InputError};
use crate::ldcache::LdCache;
use crate::ldconf::{self, Conf};
use crate::limits::{Budget, Limits};
use crate::loader::{self, CpuChoice, Setup};
use crate::rootfs::{RootFs, PATH_MAX};

/// Lookups spent on explaining misses (ld.so.conf and its directories): apart from the
/// inspection's budget, since running out only leaves an explanation shorter.
const HINT_LOOKUPS: u64 = 100_000;

/// Directories of one search source named in an explanation; the rest are counted.
const TRIED_SHOWN: usize = 8;

/// Hwcap subdirectories whose existence is remembered (glibc's `r_search_path_elem.status`);
/// past this many, each candidate is opened directly, as costly but as right.
const DIRS_REMEMBERED: usize = 100_000;

/// The per-architecture facts glibc compiles in, which the inspected system does not record.
#[derive(Debug, Clone)]
pub struct Platform {
    /// Class, byte order and machine every dependency must match.
    pub arch: Arch,
    /// The system directories, each with its trailing `/`, in search order.
    pub system_dirs: Vec<String>,
    /// The expansion of `$LIB`.
    pub lib: String,
    /// Where `$LIB` and the system directories come from.
    pub lib_source: &'static str,
    /// The expansion of `$PLATFORM` (glibc's `dl_platform`); `None` drops such elements.
    pub platform: Option<String>,
    /// The subdirectories tried in every search directory, each ending in `/`, the directory
    /// itself (`""`) last.
    pub subdirs: Vec<String>,
    /// Which ld.so.cache entries of hwcap subdirectories count.
    pub cache_rules: CacheRules,
    /// The ld.so.cache flags this architecture's loader accepts; `None`: any ELF entry.
    pub cache_flags: Option<i32>,
    /// Where this architecture's dynamic loader lives when the main object names none.
    pub default_interpreter: Option<&'static str>,
}

struct ArchFacts {
    triplet: &'static str,
    platform: Option<&'static str>,
    cache_flags: i32,
    interpreter: &'static str,
}

fn facts(arch: Arch) -> Option<ArchFacts> {
    let f = |triplet, platform, cache_flags, interpreter| {
        Some(ArchFacts { triplet, platform, cache_flags, interpreter })
    };
    match (arch.machine, arch.is_64, arch.little_endian) {
        (elf::EM_X86_64, true, true) => {
            f("x86_64-linux-gnu", Some("x86_64"), 0x0303, "/lib64/ld-linux-x86-64.so.2")
        }
        (elf::EM_386, false, true) => f("i386-linux-gnu", Some("i686"), 0x0003, "/lib/ld-linux.so.2"),
        (elf::EM_AARCH64, true, true) => {
            f("aarch64-linux-gnu", Some("aarch64"), 0x0a03, "/lib/ld-linux-aarch64.so.1")
        }
        (elf::EM_PPC64, true, true) => f("powerpc64le-linux-gnu", None, 0x0503, "/lib64/ld64.so.2"),
        (elf::EM_S390, true, false) => f("s390x-linux-gnu", None, 0x0403, "/lib/ld64.so.1"),
        (elf::EM_RISCV, true, true) => {
            f("riscv64-linux-gnu", None, 0x1003, "/lib/ld-linux-riscv64-lp64d.so.1")
        }
        (elf::EM_ARM, false, true) => f("arm-linux-gnueabihf", None, 0x0903, "/lib/ld-linux-armhf.so.3"),
        _ => None,
    }
}

impl Platform {
    /// The facts for `arch` on the inspected system. The directory layout decides between the
    /// Debian/Ubuntu multiarch build of glibc (`/lib/<triplet>`, `/usr/lib/<triplet>`, then
    /// `/lib`, `/usr/lib`; `$LIB` = `lib/<triplet>`), the lib64 one (Fedora, RHEL, SUSE) and the
    /// plain one (`/lib`, `/usr/lib`).
    pub fn detect(arch: Arch, fs: &RootFs) -> Platform {
        let facts = facts(arch);
        let triplet = facts.as_ref().map(|f| f.triplet);
        let multiarch =
            triplet.is_some_and(|t| fs.is_dir(&format!("/lib/{t}")) || fs.is_dir(&format!("/usr/lib/{t}")));
        let (system_dirs, lib, lib_source) = match triplet {
            Some(t) if multiarch => (
                vec![format!("/lib/{t}/"), format!("/usr/lib/{t}/"), "/lib/".into(), "/usr/lib/".into()],
                format!("lib/{t}"),
                "the directory layout: multiarch, as Debian and Ubuntu build glibc",
            ),
            _ if arch.is_64 && is_real_dir(fs, "/usr/lib64") => (
                vec!["/lib64/".into(), "/usr/lib64/".into()],
                "lib64".into(),
                "the directory layout: lib64, as Fedora, RHEL and SUSE build glibc",
            ),
            _ => (vec!["/lib/".into(), "/usr/lib/".into()], "lib".into(), "the directory layout: plain lib"),
        };
        Platform {
            arch,
            system_dirs,
            lib,
            lib_source,
            platform: facts.as_ref().and_then(|f| f.platform).map(String::from),
            subdirs: vec![String::new()],
            cache_rules: CacheRules::default(),
            cache_flags: facts.as_ref().map(|f| f.cache_flags),
            default_interpreter: facts.map(|f| f.interpreter),
        }
    }
}

impl Platform {
    /// Applies what the loader derives from its glibc and the CPU.
    pub fn apply(&mut self, derived: &Derived) {
        self.platform = derived.platform.clone();
        self.subdirs = derived.subdirs.clone();
        self.cache_rules = derived.cache.clone();
    }
}

/// A directory that is not a symlink to another (Arch Linux's /usr/lib64 points at /usr/lib).
fn is_real_dir(fs: &RootFs, path: &str) -> bool {
    let naive = match fs.root() {
        Some(root) => root.join(path.trim_start_matches('/')),
        None => PathBuf::from(path),
    };
    fs.resolve(path).is_ok_and(|p| p == naive && p.is_dir())
}

/// Values for `$ORIGIN`, `$LIB` and `$PLATFORM`.
pub struct Dst<'a> {
    /// Directory of the object whose string is expanded.
    pub origin: &'a str,
    /// Platform facts.
    pub platform: &'a Platform,
}

/// Expands dynamic string tokens as glibc's `_dl_dst_substitute`: `$NAME` or `${NAME}`; an
/// unknown name stays literal; a known one without a value discards the element (`None`).
///
/// Expansion stops once the result reaches PATH_MAX: no such path opens (ENAMETOOLONG, which
/// the caller then meets), and `$ORIGIN` repeated thousands of times must not take gigabytes.
pub fn expand_dst(s: &str, dst: &Dst) -> Option<String> {
    let mut out = String::with_capacity(s.len().min(PATH_MAX));
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        if out.len() >= PATH_MAX {
            return Some(out);
        }
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let mut matched = None;
        for (name, value) in [
            ("ORIGIN", Some(dst.origin)),
            ("PLATFORM", dst.platform.platform.as_deref()),
            ("LIB", Some(dst.platform.lib.as_str())),
        ] {
            let len = dst_len(after, name);
            if len > 0 {
                matched = Some((len, value));
                break;
            }
        }
        match matched {
            Some((len, Some(value))) => {
                out.push_str(value);
                rest = &after[len..];
            }
            Some((_, None)) => return None,
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// glibc's `is_dst`: how many bytes after the `$` form the token `name`, or 0.
fn dst_len(input: &str, name: &str) -> usize {
    if let Some(inner) = input.strip_prefix('{') {
        if inner.starts_with(name) && inner[name.len()..].starts_with('}') {
            return name.len() + 2;
        }
        return 0;
    }
    if !input.starts_with(name) {
        return 0;
    }
    match input.as_bytes().get(name.len()) {
        Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => 0,
        _ => name.len(),
    }
}

/// Splits a search list into directories the way `fillin_rpath` does: DSTs expanded, trailing
/// slashes trimmed and one added, an empty element meaning the working directory (`""`).
pub fn search_dirs(list: &str, seps: &[char], dst: &Dst) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for element in list.split(seps) {
        let dir = if element.is_empty() {
            String::new()
        } else {
            let Some(expanded) = expand_dst(element, dst) else {
                continue;
            };
            if expanded.is_empty() {
                continue;
            }
            let trimmed = expanded.trim_end_matches('/');
            if trimmed.is_empty() {
                "/".to_string()
            } else {
                format!("{trimmed}/")
            }
        };
        if seen.insert(dir.clone()) {
            out.push(dir);
        }
    }
    out
}

/// What opening one candidate path found.
pub enum Probe {
    /// No such file (or a directory on the way is missing).
    Missing,
    /// A loadable ELF of the right architecture.
    Found(PathBuf, ElfInfo),
    /// An ELF of another class or machine: the loader skips it.
    WrongArch(Arch),
    /// Exists but cannot be read (permissions): the loader goes on searching.
    Unreadable(String),
    /// Exists but is not a loadable ELF: the loader stops with an error.
    Invalid(String),
}

/// The state of ld.so.cache on the inspected system.
#[derive(Debug)]
pub enum CacheState {
    /// Parsed.
    Loaded(Box<LdCache>),
    /// Absent: the loader goes straight to the system directories.
    Missing,
    /// Present but unusable; the message says why.
    Broken(String),
}

/// Everything fixed for one inspection: the filesystem, the cache, LD_LIBRARY_PATH, the caps.
pub struct SearchEnv {
    /// The inspected filesystem.
    pub fs: RootFs,
    /// `/etc/ld.so.cache`.
    pub cache: CacheState,
    /// `LD_LIBRARY_PATH` as the loader would see it.
    pub ld_library_path: Option<String>,
    /// The caps.
    pub limits: Limits,
    conf: OnceCell<Conf>,
    hint_budget: Budget,
    /// Whether each hwcap subdirectory tried so far exists.
    dirs: RefCell<HashMap<String, bool>>,
    /// The CPU to assume instead of this machine's.
    cpu: CpuChoice,
    /// This machine's CPU.
    machine: ThisMachine,
    /// The assumptions made per architecture and loader.
    setups: RefCell<HashMap<(Arch, String), Rc<Setup>>>,
}

/// One search location tried, for the "not found" explanation.
pub struct Tried {
    /// What the directories came from ("RUNPATH of libfoo.so", "ld.so.cache", …).
    pub source: String,
    /// The first directories, when the source is a list of them.
    pub dirs: Vec<String>,
    /// How many more directories there were.
    pub more: usize,
}

impl Tried {
    fn new(source: String, mut dirs: Vec<String>) -> Tried {
        let more = dirs.len().saturating_sub(TRIED_SHOWN);
        dirs.truncate(TRIED_SHOWN);
        Tried { source, dirs, more }
    }
}

/// The outcome of searching one name.
pub struct SearchResult {
    /// The path as the loader names it, its host file and its ELF facts.
    pub found: Option<(String, PathBuf, ElfInfo)>,
    /// Sources tried, in order.
    pub tried: Vec<Tried>,
    /// Candidates passed over (wrong architecture, unreadable), for the explanation; the first
    /// few only, the rest counted.
    pub skipped: Vec<String>,
    /// How many more were passed over.
    pub skipped_more: usize,
    /// A candidate that stops the loader (not an ELF, malformed).
    pub fatal: Option<String>,
}

impl SearchResult {
    fn skip(&mut self, what: String) {
        if self.skipped.len() < TRIED_SHOWN {
            self.skipped.push(what);
        } else {
            self.skipped_more += 1;
        }
    }
}

/// An object that requests libraries, as the search sees it.
pub struct Requester<'a> {
    /// File name for labels.
    pub label: &'a str,
    /// `$ORIGIN`.
    pub origin: &'a str,
    /// The RPATH it contributes (none when it has a RUNPATH).
    pub rpath: Option<&'a str>,
    /// Its RUNPATH.
    pub runpath: Option<&'a str>,
    /// `DF_1_NODEFLIB`.
    pub nodeflib: bool,
}

impl SearchEnv {
    /// Reads the inspected system's ld.so.cache; LD_LIBRARY_PATH is given by the caller.
    ///
    /// A cache that is not a regular file (a FIFO would block, `/dev/zero` never ends) or does
    /// not parse is unusable, and the loader searches on without one, as this does (with a
    /// problem in the report). A cache over `limits.max_cache_mib` is an error instead: the
    /// loader would use it whatever its size, so going on without it could change the answer.
    pub fn new(
        fs: RootFs,
        ld_library_path: Option<String>,
        limits: Limits,
        cpu: CpuChoice,
    ) -> Result<SearchEnv, LinkageError> {
        let cache = match fs.resolve("/etc/ld.so.cache") {
            Err(e) if e.kind() == io::ErrorKind::NotFound => CacheState::Missing,
            Err(e) => CacheState::Broken(e.to_string()),
            Ok(host) => match read_capped(&host, limits.max_cache_bytes()) {
                Ok(bytes) => match LdCache::parse(bytes) {
                    Ok(c) => CacheState::Loaded(Box::new(c)),
                    Err(e) => CacheState::Broken(e),
                },
                Err(InputError::TooLarge { size, .. }) => {
                    return Err(LinkageError::Limit {
                        what: format!(
                            "/etc/ld.so.cache is {size} bytes, over the cap of {} MiB",
                            limits.max_cache_mib
                        ),
                        flag: "--max-cache-mib N",
                    })
                }
                Err(e) => CacheState::Broken(e.to_string()),
            },
        };
        Ok(SearchEnv {
            fs,
            cache,
            ld_library_path,
            limits,
            conf: OnceCell::new(),
            hint_budget: Budget::new(HINT_LOOKUPS),
            dirs: RefCell::default(),
            cpu,
            machine: this_machine(),
            setups: RefCell::default(),
        })
    }

    /// The assumptions for objects of `platform.arch` loaded by `rtld` (made once for each).
    pub fn loader_setup(&self, platform: &Platform, rtld: Option<&str>) -> Rc<Setup> {
        let key = (platform.arch, rtld.unwrap_or_default().to_string());
        if let Some(s) = self.setups.borrow().get(&key) {
            return s.clone();
        }
        let setup = Rc::new(loader::setup(&self.fs, platform, rtld, &self.cpu, &self.machine));
        self.setups.borrow_mut().insert(key, setup.clone());
        setup
    }

    /// The ld.so.conf directories (read once, only to explain misses).
    pub fn conf(&self) -> &Conf {
        self.conf.get_or_init(|| {
            ldconf::directories(&self.fs, "/etc/ld.so.conf", self.limits.max_dir_entries, &self.hint_budget)
        })
    }

    /// The ld.so.conf reading, if a miss needed it.
    pub fn conf_if_read(&self) -> Option<&Conf> {
        self.conf.get()
    }

    /// Whether `name` is in the ld.so.conf directory `dir` (for explanations; false once the
    /// explanation budget is spent).
    pub fn in_conf_dir(&self, dir: &str, name: &str) -> bool {
        self.fs.resolve_with(&format!("{dir}/{name}"), &self.hint_budget).is_ok()
    }

    /// Whether explanations were cut short for lack of lookups.
    pub fn hints_cut_short(&self) -> bool {
        self.hint_budget.spent()
    }

    /// Opens `path` (inside the inspected system) as the loader would for a dependency.
    pub fn probe(&self, path: &str, want: Arch) -> Probe {
        let host = match self.fs.resolve(path) {
            Ok(h) => h,
            Err(e) => {
                return match e.kind() {
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Probe::Missing,
                    _ => Probe::Unreadable(format!("{path}: {e}")),
                }
            }
        };
        match crate::elf::read(&host, Some(want)) {
            Ok(info) if info.arch != want => Probe::WrongArch(info.arch),
            Ok(info) if !matches!(info.osabi, elf::ELFOSABI_SYSV | elf::ELFOSABI_GNU) => {
                Probe::Invalid(format!("{path}: ELF OS ABI {} is not Linux's", info.osabi))
            }
            Ok(info) if info.e_type != elf::ET_DYN => Probe::Invalid(format!(
                "{path}: not a shared object (ELF type {}): the loader cannot load it as a dependency",
                info.e_type
            )),
            Ok(info) => Probe::Found(host, info),
            // The loader's read of a directory fails and it searches on.
            Err(ElfError::NotRegular("a directory")) => Probe::Missing,
            // Opening a socket fails (ENXIO) and the loader searches on; a FIFO would block it
            // for good and a device feeds it an invalid header: both stop it.
            Err(e @ ElfError::NotRegular("a socket")) | Err(e @ ElfError::Io(_)) => {
                Probe::Unreadable(format!("{path}: {e}"))
            }
            Err(ElfError::NotElf) => {
                Probe::Invalid(format!("{path}: not an ELF file (the loader stops: invalid ELF header)"))
            }
            Err(e @ ElfError::NotRegular(_)) => Probe::Invalid(format!("{path}: {e}")),
            Err(ElfError::Malformed(r)) => Probe::Invalid(format!("{path}: {r}")),
        }
    }

    /// Searches `name` for `chain[0]`, whose loaders up to the main object follow in `chain`.
    /// Stops early, with nothing found, when the lookup budget is spent (the caller checks).
    pub fn search(&self, name: &str, chain: &[Requester], platform: &Platform) -> SearchResult {
        let mut result = SearchResult {
            found: None,
            tried: Vec::new(),
            skipped: Vec::new(),
            skipped_more: 0,
            fatal: None,
        };
        let Some(requester) = chain.first() else {
            return result;
        };
        let main = chain.last().unwrap_or(requester);
        fn dst<'a>(r: &Requester<'a>, platform: &'a Platform) -> Dst<'a> {
            Dst { origin: r.origin, platform }
        }

        if name.contains('/') {
            let Some(path) = expand_dst(name, &dst(requester, platform)) else {
                result.tried.push(Tried::new(format!("{name} (a token in it has no value here)"), vec![]));
                return result;
            };
            result.tried.push(Tried::new(path.clone(), vec![]));
            self.try_path(&path, platform, &mut result);
            return result;
        }

        // Each list is expanded only when its turn comes (the usual search ends in the first),
        // and each element is paid for: an RPATH of a hundred thousand `/` collapses to one
        // directory, but inherited down a deep chain it is still work.
        let mut steps: Vec<(String, &str, &[char], &Requester)> = Vec::new();
        if requester.runpath.is_none() {
            for r in chain {
                if let Some(rpath) = r.rpath {
                    steps.push((format!("RPATH of {}", r.label), rpath, &[':'], r));
                }
            }
        }
        if let Some(llp) = self.ld_library_path.as_deref().filter(|l| !l.is_empty()) {
            steps.push(("LD_LIBRARY_PATH".into(), llp, &[':', ';'], main));
        }
        if let Some(runpath) = requester.runpath {
            steps.push((format!("RUNPATH of {}", requester.label), runpath, &[':'], requester));
        }
        for (source, list, seps, owner) in steps {
            if self.fs.budget().take(list.split(seps).count() as u64).is_err() {
                return result;
            }
            let dirs = search_dirs(list, seps, &dst(owner, platform));
            for dir in &dirs {
                if self.try_dir(dir, name, platform, &mut result) {
                    return result;
                }
            }
            result.tried.push(Tried::new(source, dirs));
        }

        if let CacheState::Loaded(cache) = &self.cache {
            result.tried.push(Tried::new("ld.so.cache".into(), vec![]));
            if let Some(entry) = cache.lookup(name, platform.cache_flags, &platform.cache_rules) {
                let in_system = platform.system_dirs.iter().any(|d| entry.value.starts_with(d.as_str()));
                if !(requester.nodeflib && in_system) && self.try_path(&entry.value, platform, &mut result) {
                    return result;
                }
            }
        }
        if !requester.nodeflib {
            for dir in &platform.system_dirs {
                if self.try_dir(dir, name, platform, &mut result) {
                    return result;
                }
            }
            result.tried.push(Tried::new("system directories".into(), platform.system_dirs.clone()));
        }
        result
    }

    /// Tries `name` in each hwcap subdirectory of `dir` that exists, then in `dir` itself, as
    /// glibc's `open_path` does; true when the search is over.
    fn try_dir(&self, dir: &str, name: &str, platform: &Platform, result: &mut SearchResult) -> bool {
        for sub in &platform.subdirs {
            let here = format!("{dir}{sub}");
            if !sub.is_empty() && !self.dir_exists(&here) {
                continue;
            }
            if self.try_path(&format!("{here}{name}"), platform, result) {
                return true;
            }
        }
        false
    }

    /// Whether the directory `path` exists, remembered: most hwcap subdirectories do not, and
    /// each is tried for every name searched.
    fn dir_exists(&self, path: &str) -> bool {
        if let Some(&known) = self.dirs.borrow().get(path) {
            return known;
        }
        let exists = self.fs.is_dir(path);
        let mut dirs = self.dirs.borrow_mut();
        if dirs.len() < DIRS_REMEMBERED {
            dirs.insert(path.to_string(), exists);
        }
        exists
    }

    /// Tries one candidate; true when the search is over (found, or a fatal candidate).
    /// A spent lookup budget ends the search too, found nothing; the caller reports it.
    fn try_path(&self, path: &str, platform: &Platform, result: &mut SearchResult) -> bool {
        let probe = self.probe(path, platform.arch);
        if self.fs.budget().spent() {
            return true;
        }
        match probe {
            Probe::Missing => false,
            Probe::Found(host, info) => {
                result.found = Some((path.to_string(), host, info));
                true
            }
            Probe::WrongArch(arch) => {
                result.skip(format!("{path} ({arch}, skipped)"));
                false
            }
            Probe::Unreadable(why) => {
                result.skip(format!("{why} (skipped)"));
                false
            }
            Probe::Invalid(why) => {
                result.fatal = Some(why);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x86_64() -> Platform {
        Platform {
            arch: Arch { is_64: true, little_endian: true, machine: elf::EM_X86_64 },
            system_dirs: vec!["/lib/x86_64-linux-gnu/".into(), "/usr/lib/x86_64-linux-gnu/".into()],
            lib: "lib/x86_64-linux-gnu".into(),
            lib_source: "a multiarch layout",
            platform: Some("x86_64".into()),
            subdirs: vec![String::new()],
            cache_rules: CacheRules::default(),
            cache_flags: Some(0x0303),
            default_interpreter: None,
        }
    }

    #[test]
    fn dst_expansion_follows_glibc() {
        let p = x86_64();
        let d = Dst { origin: "/opt/t/lib", platform: &p };
        assert_eq!(expand_dst("$ORIGIN/../x", &d).unwrap(), "/opt/t/lib/../x");
        assert_eq!(expand_dst("${ORIGIN}x", &d).unwrap(), "/opt/t/libx");
        assert_eq!(expand_dst("/a/$LIB/$PLATFORM", &d).unwrap(), "/a/lib/x86_64-linux-gnu/x86_64");
        // Not tokens: a longer name, an unknown name, a lone dollar.
        assert_eq!(expand_dst("$ORIGINAL/$FOO/$", &d).unwrap(), "$ORIGINAL/$FOO/$");
        let mut no_platform = x86_64();
        no_platform.platform = None;
        let d = Dst { origin: "/o", platform: &no_platform };
        assert_eq!(expand_dst("/a/$PLATFORM", &d), None);
    }

    #[test]
    fn search_lists_like_fillin_rpath() {
        let p = x86_64();
        let d = Dst { origin: "/o", platform: &p };
        assert_eq!(search_dirs("/a//:$ORIGIN:/a/::/", &[':'], &d), ["/a/", "/o/", "", "/"]);
        assert_eq!(search_dirs("/a;/b", &[':', ';'], &d), ["/a/", "/b/"]);
    }
}
