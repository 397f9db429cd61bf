//! Which profiler backend a PyTorch installation links — found by reading ELF files, never by
//! running them.
//!
//! `ldd` runs the dynamic loader on the file; this crate reads what the loader would read
//! (DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME, DF_1_NODEFLIB, PT_INTERP) and resolves each name
//! with glibc's rules over the transitive closure:
//!
//! - RPATH is used only when the requesting object has no RUNPATH, and is inherited down the
//!   chain of loaders; RUNPATH applies only to the object's own DT_NEEDED;
//! - order: RPATH chain, `LD_LIBRARY_PATH`, RUNPATH, `/etc/ld.so.cache` (parsed natively), the
//!   system directories; `$ORIGIN`, `$LIB` and `$PLATFORM` are expanded as glibc does;
//! - in each directory, the hwcap subdirectories first (`glibc-hwcaps/x86-64-v3/`, and before
//!   glibc 2.37 `tls/`, `haswell/`, `x86_64/` and their combinations), and of the ld.so.cache
//!   entries of such subdirectories the ones the loader would take: all as the inspected
//!   system's glibc does (its version read from its loader or libc, never run) on this
//!   machine's CPU or the one [`InspectOptions::cpu`] describes; the report's `loader` says which;
//! - breadth-first loading, names matched against what is already loaded (requested names and
//!   sonames, plus device/inode), the dynamic loader preloaded — so that paths equal `ldd`'s.
//!
//! With a root directory (an unpacked container image) everything, including symlink targets
//! and the image's own ld.so.cache, is read inside it.
//!
//! The closure's profiler libraries decide the backend: `libroctracer64` → `roctracer`,
//! `librocprofiler-sdk` → `rocprofiler-sdk`, `libcupti` → `cupti`; none → `none`; several →
//! `mixed`. [`classify_library_name`] also recognizes the other interception libraries
//! (nvperf, roctx, rocprofiler-register, rocprofiler-sdk's tool/roctx/attach libraries,
//! rocprofiler v1) by name, for use on `/proc/<pid>/maps` paths.
//!
//! Libraries preloaded into every process (`/etc/ld.so.preload`, `LD_PRELOAD`) are not part of
//! the closure; they are named in [`LinkageReport::notes`], with their kind when they are
//! profiler libraries.
//!
//! Linkage explains; it does not judge: whether a backend fails the guard is
//! `linkage.forbid` configuration ([`forbidden`]). Nothing is silently unknown: unresolved names
//! are in [`LinkageReport::unresolved`] and unreadable or suspect files in
//! [`LinkageReport::problems`].
//!
//! Known limits, all documented deviations from glibc that matter only on unusual systems:
//! the system directories and `$LIB` are inferred from the directory layout (multiarch, lib64
//! or plain), since glibc compiles them in; `GLIBC_TUNABLES` and `LD_HWCAP_MASK` are not
//! applied (a note says when they are set); the legacy hwcap subdirectories of glibc before
//! 2.26 on x86-64 and aarch64 are not modelled (tls/ and the platform's are); a musl-based
//! image is resolved with glibc's rules (and says so).
//!
//! ```no_run
//! use launchguard_linkage::{inspect, InspectOptions, Target};
//! let report = inspect(&Target::Python("python3".into()), &InspectOptions::default())?;
//! println!("{}", serde_json::to_string_pretty(&report).unwrap());
//! # Ok::<(), launchguard_linkage::LinkageError>(())
//! ```

#![warn(missing_docs)]

mod classify;
mod cpu;
mod elf;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod glibc;
mod hwcaps;
mod input;
mod ldcache;
mod ldconf;
mod limits;
mod loader;
mod report;
mod resolve;
mod rootfs;
mod search;
mod torch;

use std::path::PathBuf;

pub use classify::{classify_library_name, compare_versions, Backend, LibraryKind, ProfilerLib};
pub use cpu::{CpuLevel, CpuVendor};
pub use elf::build_id;
pub use error::LinkageError;
pub use limits::ClosureCaps;
pub use loader::{CpuChoice, LoaderAssumption};
pub use report::{Dependency, LinkageReport, ProfilerLibrary, Unresolved, ROCPROFILER_SDK_FIXED, SCHEMA};
pub use torch::TORCH_LIBRARIES;

use rootfs::RootFs;
use search::SearchEnv;

/// How to look.
#[derive(Debug, Clone, Default)]
pub struct InspectOptions {
    /// Inspect this directory (an unpacked container image) as if it were `/`.
    pub root: Option<PathBuf>,
    /// The `LD_LIBRARY_PATH` to assume. `None`: this process's, when inspecting this machine,
    /// and none inside an image (the host's has no meaning there). `Some("")`: none.
    pub ld_library_path: Option<String>,
    /// Caps on what the inspection may cost.
    pub limits: ClosureCaps,
    /// The CPU whose loader is assumed, where not this machine's.
    pub cpu: CpuChoice,
}

/// What to inspect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A library or executable, or a torch installation directory (the `torch` package, its
    /// `lib` directory or the site-packages holding it). Under a root, an absolute path is
    /// inside the image (a host path into the image directory is translated).
    Path(PathBuf),
    /// Ask this Python interpreter where torch is installed (without importing it). Under a
    /// root no interpreter runs: the image's usual site-packages locations are searched.
    Python(String),
}

/// Inspects `target`: the closure of each library and the profiler backend it links.
///
/// Errors only when nothing usable remains (missing, unreadable, non-ELF or truncated target,
/// no torch); a torch installation with one unreadable library of several still reports, with
/// the failure in `problems`.
pub fn inspect(target: &Target, opts: &InspectOptions) -> Result<LinkageReport, LinkageError> {
    if let Some(p) = opts.cpu.platform.as_ref().filter(|p| p.is_empty() || p.contains(['/', '\0'])) {
        return Err(LinkageError::BadPlatform { platform: p.clone() });
    }
    if let Some(root) = &opts.root {
        if !root.is_dir() {
            return Err(LinkageError::BadRoot { path: root.display().to_string() });
        }
    }
    let limits = opts.limits;
    let fs = RootFs::new(opts.root.clone(), limits.max_lookups);
    let spent = |fs: &RootFs, what: &str| LinkageError::Limit {
        what: format!("{what} took more than {} file-system lookups", fs.budget().limit()),
        flag: "--max-lookups N",
    };
    // A lookup that failed for want of budget is no finding: say which cap it was.
    let over = |fs: &RootFs, e: LinkageError| match fs.budget().spent() {
        true => spent(fs, &format!("finding the libraries of {}", target_label(target))),
        false => e,
    };
    let mut notes = Vec::new();
    let (label, torch_dir, libraries) = match target {
        Target::Path(p) => {
            let image = fs.image_path(p);
            if fs.is_dir(&image) {
                let (_, libs) = torch::libraries(&fs, &image).map_err(|e| over(&fs, e))?;
                (p.display().to_string(), Some(image), libs)
            } else {
                (p.display().to_string(), None, vec![image])
            }
        }
        Target::Python(python) => {
            let dir = match &opts.root {
                Some(root) => {
                    let found = torch::find_in_root(&fs, limits.max_dir_entries)?;
                    if fs.budget().spent() {
                        return Err(spent(&fs, &format!("searching --root {} for torch", root.display())));
                    }
                    let Some(first) = found.first().cloned() else {
                        return Err(LinkageError::NoTorch {
                            place: format!("--root {}", root.display()),
                            hint: String::new(),
                        });
                    };
                    if found.len() > 1 {
                        notes.push(format!(
                            "several torch installations in the image; inspected {first}, not {}",
                            found[1..].join(", ")
                        ));
                    }
                    first
                }
                None => torch::ask_python(python)?,
            };
            let (_, libs) = torch::libraries(&fs, &dir).map_err(|e| over(&fs, e))?;
            (python.clone(), Some(dir), libs)
        }
    };
    if fs.budget().spent() {
        return Err(spent(&fs, &format!("finding the libraries of {label}")));
    }

    let ld_library_path = opts.ld_library_path.clone().or_else(|| match opts.root {
        None => std::env::var("LD_LIBRARY_PATH").ok(),
        Some(_) => None,
    });
    if let Some(llp) = ld_library_path.as_deref().filter(|l| !l.is_empty()) {
        notes.push(format!(
            "LD_LIBRARY_PATH={llp} is applied (after RPATH, before RUNPATH), as the loader would"
        ));
    }
    notes.extend(preload_notes(&fs, opts.root.is_none()));
    let env = SearchEnv::new(fs, ld_library_path, limits, opts.cpu.clone())?;

    let mut closures = Vec::new();
    let mut problems = Vec::new();
    let mut first_error = None;
    for lib in &libraries {
        match resolve::closure(&env, lib) {
            Ok(c) => closures.push(c),
            // A cap reached says nothing about this library alone: the whole answer is in doubt.
            Err(e @ LinkageError::Limit { .. }) => return Err(e),
            Err(e) => {
                problems.push(e.to_string());
                first_error.get_or_insert(e);
            }
        }
    }
    if closures.is_empty() {
        if let Some(e) = first_error {
            return Err(e);
        }
    }
    Ok(LinkageReport::build(
        label,
        opts.root.as_ref().map(|r| r.display().to_string()),
        torch_dir,
        &closures,
        problems,
        notes,
    ))
}

fn target_label(target: &Target) -> String {
    match target {
        Target::Path(p) => p.display().to_string(),
        Target::Python(python) => python.clone(),
    }
}

/// Size of `/etc/ld.so.preload` read (real: a line or two).
const MAX_PRELOAD_BYTES: u64 = 1 << 20;
/// Preloaded libraries named one by one; the rest are counted.
const PRELOAD_SHOWN: usize = 32;

/// Libraries the loader puts into every process before any DT_NEEDED (`/etc/ld.so.preload`,
/// and `LD_PRELOAD` on this machine): not part of what torch links, but in the process all the
/// same, so they are named, profiler libraries first among equals.
fn preload_notes(fs: &RootFs, use_env: bool) -> Vec<String> {
    let mut sources: Vec<(&str, String)> = Vec::new();
    let mut notes = Vec::new();
    if let Ok(host) = fs.resolve("/etc/ld.so.preload") {
        match input::read_capped(&host, MAX_PRELOAD_BYTES) {
            Ok(bytes) => sources.push(("/etc/ld.so.preload", String::from_utf8_lossy(&bytes).into_owned())),
            Err(input::InputError::Io(_)) => {}
            // Not read, so not known: said, since whatever it names is in every process.
            Err(e) => notes.push(format!("/etc/ld.so.preload {e}; not read")),
        }
    }
    if use_env {
        if let Ok(text) = std::env::var("LD_PRELOAD") {
            sources.push(("LD_PRELOAD", text));
        }
    }
    for (source, text) in sources {
        let mut entries: Vec<(&str, Option<ProfilerLib>)> = text
            .split([' ', '\t', '\n', ':'])
            .filter(|e| !e.is_empty() && !e.starts_with('#'))
            .map(|e| (e, classify_library_name(e)))
            .collect();
        // Profiler libraries first, should there be more than are named.
        entries.sort_by_key(|(_, lib)| lib.is_none());
        for (entry, lib) in entries.iter().take(PRELOAD_SHOWN) {
            let what = match lib {
                Some(lib) => format!(" — a {} library, in every process whatever torch links", lib.kind),
                None => String::new(),
            };
            notes.push(format!("{source} preloads {entry}{what}"));
        }
        if entries.len() > PRELOAD_SHOWN {
            notes.push(format!("{source} preloads {} more libraries", entries.len() - PRELOAD_SHOWN));
        }
    }
    notes
}

/// Checks `linkage.forbid` entries: a backend name (`roctracer`, `rocprofiler-sdk`, `cupti`,
/// `none`, `mixed`), optionally with an upper version bound (`rocprofiler-sdk<1.3.2`).
pub fn validate_forbid(forbid: &[String]) -> Result<(), LinkageError> {
    forbid.iter().try_for_each(|e| parse_forbid(e).map(|_| ()))
}

fn parse_forbid(entry: &str) -> Result<(Backend, Option<&str>), LinkageError> {
    let bad = |reason: &str| LinkageError::BadForbid { entry: entry.to_string(), reason: reason.to_string() };
    let (name, below) = match entry.split_once('<') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (entry.trim(), None),
    };
    let backend = Backend::from_name(name)
        .ok_or_else(|| bad("not a backend (roctracer, rocprofiler-sdk, cupti, none, mixed)"))?;
    if let Some(v) = below {
        if matches!(backend, Backend::None | Backend::Mixed) {
            return Err(bad("only a backend library has a version"));
        }
        if v.is_empty() || !v.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            return Err(bad("the version must be numbers and dots, as in rocprofiler-sdk<1.3.2"));
        }
    }
    Ok((backend, below))
}

/// Which `forbid` entries the report violates, one line each naming the library and its chain.
/// A version bound that the file name cannot decide (`librocprofiler-sdk.so.1` against
/// `<1.3.2`) counts as violated: an unknown must not pass.
pub fn forbidden(report: &LinkageReport, forbid: &[String]) -> Result<Vec<String>, LinkageError> {
    validate_forbid(forbid)?;
    let mut hits = Vec::new();
    for entry in forbid {
        let (backend, below) = parse_forbid(entry)?;
        match backend {
            Backend::None | Backend::Mixed => {
                if report.profiler_backend == backend {
                    hits.push(format!("the profiler backend is {backend}, which linkage.forbid lists"));
                }
            }
            _ => {
                for lib in report.profiler_libraries.iter().filter(|l| l.backend == Some(backend)) {
                    let chain = lib.via.join(" → ");
                    let why = match below {
                        None => Some(String::new()),
                        Some(bound) => version_below(lib.version.as_deref(), bound),
                    };
                    if let Some(why) = why {
                        hits.push(format!(
                            "{backend}{why} is linked via {chain}, which linkage.forbid lists ({entry})"
                        ));
                    }
                }
            }
        }
    }
    Ok(hits)
}

/// `Some(explanation)` when `version` is below `bound` or cannot be told apart from it.
fn version_below(version: Option<&str>, bound: &str) -> Option<String> {
    let Some(v) = version else {
        return Some(" (version unknown from the file name)".into());
    };
    let have = v.split('.').count();
    let bound_prefix: Vec<&str> = bound.split('.').take(have).collect();
    match compare_versions(v, &bound_prefix.join(".")) {
        std::cmp::Ordering::Less => Some(format!(" {v}")),
        std::cmp::Ordering::Greater => None,
        std::cmp::Ordering::Equal if have >= bound.split('.').count() => None,
        std::cmp::Ordering::Equal => Some(format!(" {v} (the file name cannot tell it from {bound})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_with(libs: &[(Backend, Option<&str>)]) -> LinkageReport {
        let mut backends: Vec<Backend> = libs.iter().map(|l| l.0).collect();
        backends.sort();
        backends.dedup();
        LinkageReport {
            schema: SCHEMA.into(),
            target: "t".into(),
            root: None,
            torch_dir: None,
            inspected: vec![],
            profiler_backend: Backend::overall(&backends),
            profiler_backends: backends,
            profiler_libraries: libs
                .iter()
                .map(|(b, v)| ProfilerLibrary {
                    name: "x".into(),
                    path: None,
                    via: vec!["libtorch_cpu.so".into(), "x".into()],
                    kind: match b {
                        Backend::Cupti => LibraryKind::Cupti,
                        Backend::Roctracer => LibraryKind::Roctracer,
                        _ => LibraryKind::RocprofilerSdk,
                    },
                    backend: Some(*b),
                    version: v.map(String::from),
                    note: None,
                })
                .collect(),
            dependencies: vec![],
            unresolved: vec![],
            problems: vec![],
            notes: vec![],
            loader: None,
        }
    }

    #[test]
    fn forbid_rules() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = report_with(&[(Backend::RocprofilerSdk, Some("1.3.1"))]);
        assert_eq!(forbidden(&r, &s(&["roctracer"])).unwrap().len(), 0);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk"])).unwrap().len(), 1);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1.3.2"])).unwrap().len(), 1);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1.3.1"])).unwrap().len(), 0);
        let r = report_with(&[(Backend::RocprofilerSdk, Some("1"))]);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1.3.2"])).unwrap().len(), 1);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1"])).unwrap().len(), 0);
        let r = report_with(&[(Backend::RocprofilerSdk, Some("2"))]);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1.3.2"])).unwrap().len(), 0);
        let r = report_with(&[(Backend::RocprofilerSdk, None)]);
        assert_eq!(forbidden(&r, &s(&["rocprofiler-sdk<1.3.2"])).unwrap().len(), 1);
        let r = report_with(&[(Backend::Cupti, Some("13")), (Backend::Roctracer, None)]);
        assert_eq!(r.profiler_backend, Backend::Mixed);
        assert_eq!(forbidden(&r, &s(&["mixed", "none"])).unwrap().len(), 1);
        let r = report_with(&[]);
        assert_eq!(forbidden(&r, &s(&["none"])).unwrap().len(), 1);
        assert_eq!(forbidden(&r, &[]).unwrap().len(), 0);
        for bad in ["rocprof", "none<1", "cupti<", "cupti<1.x", ""] {
            let err = forbidden(&r, &s(&[bad])).unwrap_err();
            assert!(matches!(err, LinkageError::BadForbid { .. }), "{bad}");
            assert!(!err.to_string().contains('\n'));
        }
    }
}
