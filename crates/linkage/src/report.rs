//! The `launchguard.linkage/1` report: its serde model, how closures become one, and the
//! terminal rendering.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::classify::{classify_library_name, compare_versions, Backend, LibraryKind};
use crate::loader::LoaderAssumption;
use crate::resolve::Closure;

/// The schema name in every report.
pub const SCHEMA: &str = "launchguard.linkage/1";

/// The rocprofiler-sdk release that fixed its kernel-launch overhead.
pub const ROCPROFILER_SDK_FIXED: &str = "1.3.2";

/// What `launchguard linkage` found. Serialized, this is the public `launchguard.linkage/1`
/// JSON; keys are only ever added within the version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkageReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What was asked for: a path, or the Python interpreter asked.
    pub target: String,
    /// The image directory inspected as `/`, if any; every other path is inside it.
    pub root: Option<String>,
    /// The torch package directory, when the target was a torch installation.
    pub torch_dir: Option<String>,
    /// The libraries whose closures were inspected (main objects).
    pub inspected: Vec<String>,
    /// The one backend found, `none`, or `mixed`.
    pub profiler_backend: Backend,
    /// Each backend found, sorted; more than one makes `profiler_backend` `mixed`.
    pub profiler_backends: Vec<Backend>,
    /// Profiler and interception libraries in the closures, with the chain that brings each in.
    pub profiler_libraries: Vec<ProfilerLibrary>,
    /// The transitive closure: each DT_NEEDED name and the file it resolved to.
    pub dependencies: Vec<Dependency>,
    /// The names that resolved to nothing, and why.
    pub unresolved: Vec<Unresolved>,
    /// What else makes the report incomplete: unreadable or invalid files, foreign
    /// architectures, inspected libraries that could not be read (unresolved names are in
    /// `unresolved`, not repeated here).
    pub problems: Vec<String>,
    /// Facts that change nothing but explain (dependency cycles, LD_LIBRARY_PATH applied).
    pub notes: Vec<String>,
    /// What the resolution assumed about the loader that would run — glibc version, CPU,
    /// `$PLATFORM`, `$LIB`, hwcap subdirectories — and where each came from (`null` in
    /// reports written before it existed, or when no library could be read).
    #[serde(default)]
    pub loader: Option<LoaderAssumption>,
}

/// One profiler or interception library found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfilerLibrary {
    /// The DT_NEEDED name it was requested under.
    pub name: String,
    /// The file it resolved to; `null` when it was not found (still linked, so still counted).
    pub path: Option<String>,
    /// The chain that brings it in: the inspected library's file name, then each DT_NEEDED name
    /// down to this one (`["libtorch_cpu.so", "libkineto.so", "librocprofiler-sdk.so.1"]`).
    pub via: Vec<String>,
    /// Which library it is.
    pub kind: LibraryKind,
    /// The backend it decides, if it is a backend library.
    pub backend: Option<Backend>,
    /// The version its file name carries, from the most specific of the resolved file's real
    /// name, the path and the DT_NEEDED name.
    pub version: Option<String>,
    /// A one-line explanation, when there is one (rocprofiler-sdk's launch-overhead fix).
    pub note: Option<String>,
}

/// One DT_NEEDED name and what it resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dependency {
    /// The DT_NEEDED name.
    pub name: String,
    /// The path the loader opens, as it names it (what `ldd` prints); `null` when not found.
    pub path: Option<String>,
    /// The objects whose DT_NEEDED lists this name and got this resolution.
    pub needed_by: Vec<String>,
}

/// A DT_NEEDED name that resolved to nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unresolved {
    /// The DT_NEEDED name.
    pub name: String,
    /// The objects that need it.
    pub needed_by: Vec<String>,
    /// Where the loader looked, in one line.
    pub reason: String,
}

impl LinkageReport {
    /// True when every dependency resolved and nothing was unreadable: only then does the
    /// report speak for the whole closure.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty() && self.problems.is_empty()
    }

    /// Assembles a report from the closures of the inspected libraries.
    pub(crate) fn build(
        target: String,
        root: Option<String>,
        torch_dir: Option<String>,
        closures: &[Closure],
        mut problems: Vec<String>,
        mut notes: Vec<String>,
    ) -> LinkageReport {
        // Indexes into the lists, so that a closure of thousands of edges is not quadratic.
        let mut dependencies: Vec<Dependency> = Vec::new();
        let mut dep_at: HashMap<(String, Option<String>), usize> = HashMap::new();
        let mut unresolved: Vec<Unresolved> = Vec::new();
        let mut unresolved_at: HashMap<String, usize> = HashMap::new();
        let mut libs: Vec<ProfilerLibrary> = Vec::new();
        let mut lib_seen: HashSet<(String, Option<String>)> = HashSet::new();
        let mut seen_problems: HashSet<String> = problems.iter().cloned().collect();
        let mut seen_notes: HashSet<String> = notes.iter().cloned().collect();
        for c in closures {
            for edge in &c.edges {
                let by = &c.objects[edge.from].path;
                let path = edge.to.as_ref().ok().map(|&i| c.objects[i].path.clone());
                let key = (edge.name.clone(), path.clone());
                match dep_at.get(&key) {
                    Some(&i) => {
                        let d = &mut dependencies[i];
                        if !d.needed_by.contains(by) {
                            d.needed_by.push(by.clone());
                        }
                    }
                    None => {
                        dep_at.insert(key.clone(), dependencies.len());
                        dependencies.push(Dependency {
                            name: edge.name.clone(),
                            path: path.clone(),
                            needed_by: vec![by.clone()],
                        });
                    }
                }
                if let Err(reason) = &edge.to {
                    match unresolved_at.get(&edge.name) {
                        Some(&i) => {
                            let u = &mut unresolved[i];
                            if !u.needed_by.contains(by) {
                                u.needed_by.push(by.clone());
                            }
                        }
                        None => {
                            unresolved_at.insert(edge.name.clone(), unresolved.len());
                            unresolved.push(Unresolved {
                                name: edge.name.clone(),
                                needed_by: vec![by.clone()],
                                reason: reason.clone(),
                            });
                        }
                    }
                }
                if lib_seen.contains(&key) {
                    continue;
                }
                if let Some(lib) = profiler_library(c, edge.from, &edge.name, edge.to.as_ref().ok().copied())
                {
                    lib_seen.insert(key);
                    libs.push(lib);
                }
            }
            // The inspected library itself may be one (someone points at libcupti.so.13).
            if let Some(main) = c.objects.first() {
                if let Some(lib) = classify_library_name(&main.path) {
                    if !libs.iter().any(|l| l.path.as_deref() == Some(main.path.as_str())) {
                        lib_seen.insert((main.file_name().into(), Some(main.path.clone())));
                        libs.push(library(
                            main.file_name().into(),
                            Some(main.path.clone()),
                            vec![main.file_name().into()],
                            lib.kind,
                            best_version(&[main.host.to_string_lossy().as_ref(), &main.path]),
                        ));
                    }
                }
            }
            for p in &c.problems {
                if seen_problems.insert(p.clone()) {
                    problems.push(p.clone());
                }
            }
            for n in &c.notes {
                if seen_notes.insert(n.clone()) {
                    notes.push(n.clone());
                }
            }
        }
        let mut backends: Vec<Backend> = libs.iter().filter_map(|l| l.backend).collect();
        backends.sort();
        backends.dedup();
        LinkageReport {
            schema: SCHEMA.to_string(),
            target,
            root,
            torch_dir,
            inspected: closures.iter().filter_map(|c| c.objects.first().map(|o| o.path.clone())).collect(),
            profiler_backend: Backend::overall(&backends),
            profiler_backends: backends,
            profiler_libraries: libs,
            dependencies,
            unresolved,
            problems,
            notes,
            loader: closures.iter().find_map(|c| c.loader.clone()),
        }
    }
}

fn profiler_library(c: &Closure, from: usize, name: &str, to: Option<usize>) -> Option<ProfilerLibrary> {
    let (path, host) = match to {
        Some(i) => (Some(c.objects[i].path.clone()), Some(c.objects[i].host.to_string_lossy().into_owned())),
        None => (None, None),
    };
    // The real file name first: a soname symlink rarely carries the full version.
    let candidates: Vec<&str> =
        [host.as_deref(), path.as_deref(), Some(name)].into_iter().flatten().collect();
    let kind = candidates.iter().find_map(|n| classify_library_name(n))?.kind;
    let via = match to {
        Some(i) if c.objects[i].loader.is_some() => c.chain(i),
        _ => {
            let mut chain = c.chain(from);
            chain.push(name.to_string());
            chain
        }
    };
    let version = best_version(&candidates);
    Some(library(name.to_string(), path.clone(), via, kind, version))
}

/// The version with the most components among the names that classify as a library.
fn best_version(names: &[&str]) -> Option<String> {
    names.iter().filter_map(|n| classify_library_name(n)?.version).max_by_key(|v| v.split('.').count())
}

fn library(
    name: String,
    path: Option<String>,
    via: Vec<String>,
    kind: LibraryKind,
    version: Option<String>,
) -> ProfilerLibrary {
    let note = match kind {
        LibraryKind::RocprofilerSdk => Some(match version.as_deref() {
            Some(v) if v.split('.').count() >= 3 => {
                if compare_versions(v, ROCPROFILER_SDK_FIXED).is_lt() {
                    format!("rocprofiler-sdk {v} predates {ROCPROFILER_SDK_FIXED}, which fixed its kernel-launch overhead")
                } else {
                    format!("rocprofiler-sdk {v} includes the kernel-launch overhead fix of {ROCPROFILER_SDK_FIXED}")
                }
            }
            Some(v) => format!("the file name says only version {v}: whether it has the launch-overhead fix of {ROCPROFILER_SDK_FIXED} is for measurement to show"),
            None => format!("no version in the file name: whether it has the launch-overhead fix of {ROCPROFILER_SDK_FIXED} is for measurement to show"),
        }),
        _ => None,
    };
    ProfilerLibrary { name, path, via, kind, backend: kind.backend(), version, note }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LinkageReport {
        LinkageReport {
            schema: SCHEMA.into(),
            target: "python3".into(),
            root: None,
            torch_dir: Some("/site/torch".into()),
            inspected: vec!["/site/torch/lib/libtorch_cpu.so".into()],
            profiler_backend: Backend::Mixed,
            profiler_backends: vec![Backend::RocprofilerSdk, Backend::Cupti],
            profiler_libraries: vec![
                library(
                    "librocprofiler-sdk.so.1".into(),
                    Some("/opt/rocm/lib/librocprofiler-sdk.so.1".into()),
                    vec!["libtorch_cpu.so".into(), "libkineto.so".into(), "librocprofiler-sdk.so.1".into()],
                    LibraryKind::RocprofilerSdk,
                    Some("1".into()),
                ),
                library(
                    "libroctx64.so.4".into(),
                    None,
                    vec!["libtorch_cpu.so".into(), "libroctx64.so.4".into()],
                    LibraryKind::Roctx,
                    Some("4".into()),
                ),
            ],
            dependencies: vec![],
            unresolved: vec![Unresolved {
                name: "libroctx64.so.4".into(),
                needed_by: vec!["/site/torch/lib/libtorch_cpu.so".into()],
                reason: "not found in ld.so.cache".into(),
            }],
            problems: vec!["something unreadable".into()],
            notes: vec!["dependency cycle: a → b → a".into()],
            loader: None,
        }
    }

    #[test]
    fn json_round_trips_with_the_public_keys() {
        let r = sample();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["schema"], "launchguard.linkage/1");
        assert_eq!(v["profiler_backend"], "mixed");
        assert_eq!(v["profiler_libraries"][1]["path"], serde_json::Value::Null);
        assert_eq!(v["profiler_libraries"][0]["kind"], "rocprofiler-sdk");
        let back: LinkageReport = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
