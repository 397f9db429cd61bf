//! Profiler and interception libraries, recognized by file name.
//!
//! Names are the stable thing: sonames (`libcupti.so.13`), versioned files
//! (`librocprofiler-sdk.so.1.3.2`), auditwheel-mangled copies (`libcupti-1a2b3c4d.so.12`) and
//! `/proc/<pid>/maps` paths all carry them. Only three libraries decide the profiler *backend*
//! Kineto uses; the others intercept or register (rocprofiler-register is linked by every HIP
//! runtime since ROCm 6.2) and are reported by kind without deciding the backend.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The profiler backend a PyTorch build links, as `launchguard.linkage/1` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// ROCm's older tracer, `libroctracer64` (Kineto's ROCm backend until 2026).
    Roctracer,
    /// ROCm's `librocprofiler-sdk` (current Kineto on ROCm).
    RocprofilerSdk,
    /// NVIDIA's `libcupti`.
    Cupti,
    /// No profiler library in the closure.
    None,
    /// More than one backend library in the closure.
    Mixed,
}

impl Backend {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Roctracer => "roctracer",
            Backend::RocprofilerSdk => "rocprofiler-sdk",
            Backend::Cupti => "cupti",
            Backend::None => "none",
            Backend::Mixed => "mixed",
        }
    }

    /// Parses the JSON spelling (as used in `linkage.forbid`).
    pub fn from_name(name: &str) -> Option<Backend> {
        [Backend::Roctracer, Backend::RocprofilerSdk, Backend::Cupti, Backend::None, Backend::Mixed]
            .into_iter()
            .find(|b| b.as_str() == name)
    }

    /// The overall backend for the set of backends found.
    pub fn overall(found: &[Backend]) -> Backend {
        match found {
            [] => Backend::None,
            [one] => *one,
            _ => Backend::Mixed,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which profiling or interception library a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LibraryKind {
    /// `libcupti`: the CUDA profiling interface; backend `cupti`.
    Cupti,
    /// `libnvperf_host`: CUPTI's performance-counter host side.
    NvperfHost,
    /// `libnvperf_target`: CUPTI's performance-counter target side.
    NvperfTarget,
    /// `libroctracer64`: backend `roctracer`.
    Roctracer,
    /// `libroctx64`: roctracer's marker API.
    Roctx,
    /// `librocprofiler-register`: lets ROCm runtimes find a rocprofiler-sdk tool.
    RocprofilerRegister,
    /// `librocprofiler-sdk`: backend `rocprofiler-sdk`.
    RocprofilerSdk,
    /// `librocprofiler-sdk-tool`: the rocprofv3 tool library.
    RocprofilerSdkTool,
    /// `librocprofiler-sdk-roctx`: rocprofiler-sdk's marker API.
    RocprofilerSdkRoctx,
    /// `librocprofiler-sdk-attach`: attach to a running process.
    RocprofilerSdkAttach,
    /// `librocprofiler-sdk-rocattach`: attach support.
    RocprofilerSdkRocattach,
    /// `librocprofiler64`: the legacy rocprofiler (v1).
    Rocprofiler,
}

/// File-name stems, longest first so `librocprofiler-sdk-roctx` wins over `librocprofiler-sdk`.
const STEMS: &[(&str, LibraryKind)] = &[
    ("librocprofiler-sdk-rocattach", LibraryKind::RocprofilerSdkRocattach),
    ("librocprofiler-register", LibraryKind::RocprofilerRegister),
    ("librocprofiler-sdk-attach", LibraryKind::RocprofilerSdkAttach),
    ("librocprofiler-sdk-roctx", LibraryKind::RocprofilerSdkRoctx),
    ("librocprofiler-sdk-tool", LibraryKind::RocprofilerSdkTool),
    ("librocprofiler-sdk", LibraryKind::RocprofilerSdk),
    ("librocprofiler64", LibraryKind::Rocprofiler),
    ("libnvperf_target", LibraryKind::NvperfTarget),
    ("libroctracer64", LibraryKind::Roctracer),
    ("libnvperf_host", LibraryKind::NvperfHost),
    ("libroctx64", LibraryKind::Roctx),
    ("libcupti", LibraryKind::Cupti),
];

impl LibraryKind {
    /// The backend this library decides, if it is one of the three backend libraries.
    pub fn backend(self) -> Option<Backend> {
        match self {
            LibraryKind::Cupti => Some(Backend::Cupti),
            LibraryKind::Roctracer => Some(Backend::Roctracer),
            LibraryKind::RocprofilerSdk => Some(Backend::RocprofilerSdk),
            _ => None,
        }
    }

    /// The file-name stem (`libcupti`, `librocprofiler-sdk`, …).
    pub fn stem(self) -> &'static str {
        STEMS.iter().find(|(_, k)| *k == self).map(|(s, _)| *s).unwrap_or("")
    }

    /// The JSON spelling (`cupti`, `rocprofiler-sdk-roctx`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LibraryKind::Cupti => "cupti",
            LibraryKind::NvperfHost => "nvperf-host",
            LibraryKind::NvperfTarget => "nvperf-target",
            LibraryKind::Roctracer => "roctracer",
            LibraryKind::Roctx => "roctx",
            LibraryKind::RocprofilerRegister => "rocprofiler-register",
            LibraryKind::RocprofilerSdk => "rocprofiler-sdk",
            LibraryKind::RocprofilerSdkTool => "rocprofiler-sdk-tool",
            LibraryKind::RocprofilerSdkRoctx => "rocprofiler-sdk-roctx",
            LibraryKind::RocprofilerSdkAttach => "rocprofiler-sdk-attach",
            LibraryKind::RocprofilerSdkRocattach => "rocprofiler-sdk-rocattach",
            LibraryKind::Rocprofiler => "rocprofiler",
        }
    }
}

impl fmt::Display for LibraryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A recognized library: its kind and the version its file name carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfilerLib {
    /// Which library.
    pub kind: LibraryKind,
    /// The digits after `.so.` (`13` for `libcupti.so.13`, `1.3.2` for
    /// `librocprofiler-sdk.so.1.3.2`); `None` for a bare `.so`.
    pub version: Option<String>,
}

/// Recognizes a profiling or interception library from a file name or a path (a
/// `/proc/<pid>/maps` line's path works; a trailing ` (deleted)` is ignored).
///
/// ```
/// use launchguard_linkage::{classify_library_name, Backend, LibraryKind};
/// let lib = classify_library_name("/opt/rocm/lib/librocprofiler-sdk.so.1.3.2").unwrap();
/// assert_eq!(lib.kind, LibraryKind::RocprofilerSdk);
/// assert_eq!(lib.kind.backend(), Some(Backend::RocprofilerSdk));
/// assert_eq!(lib.version.as_deref(), Some("1.3.2"));
/// assert!(classify_library_name("libcuptiX.so").is_none());
/// ```
pub fn classify_library_name(name: &str) -> Option<ProfilerLib> {
    let name = name.trim_end().trim_end_matches(" (deleted)");
    let base = name.rsplit('/').next().unwrap_or(name);
    STEMS.iter().find_map(|&(stem, kind)| {
        let rest = base.strip_prefix(stem)?;
        let rest = strip_wheel_hash(rest);
        let version = match rest.strip_prefix(".so")? {
            "" => None,
            v => {
                let v = v.strip_prefix('.')?;
                let is_version = !v.is_empty()
                    && v.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
                is_version.then(|| v.to_string())
            }
        };
        Some(ProfilerLib { kind, version })
    })
}

/// auditwheel renames vendored libraries `libfoo-<8 hex>.so.N`.
fn strip_wheel_hash(rest: &str) -> &str {
    match rest.strip_prefix('-') {
        Some(h) if h.len() >= 8 && h.as_bytes()[..8].iter().all(u8::is_ascii_hexdigit) => &h[8..],
        _ => rest,
    }
}

/// Compares dotted numeric versions (`1.3.2` < `1.10`); missing components count as 0.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let parts = |s: &str| -> Vec<u64> { s.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    let (a, b) = (parts(a), parts(b));
    for i in 0..a.len().max(b.len()) {
        match a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0)) {
            Ordering::Equal => {}
            other => return other,
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> Option<(LibraryKind, Option<String>)> {
        classify_library_name(name).map(|l| (l.kind, l.version))
    }

    #[test]
    fn names_and_versions() {
        use LibraryKind::*;
        assert_eq!(kind("libcupti.so.13"), Some((Cupti, Some("13".into()))));
        assert_eq!(kind("libcupti.so.2025.1.0"), Some((Cupti, Some("2025.1.0".into()))));
        assert_eq!(kind("libcupti-1a2b3c4d.so.12"), Some((Cupti, Some("12".into()))));
        assert_eq!(kind("libcupti.so"), Some((Cupti, None)));
        assert_eq!(kind("librocprofiler-sdk.so.1"), Some((RocprofilerSdk, Some("1".into()))));
        assert_eq!(
            kind("/opt/rocm-7.0/lib/librocprofiler-sdk-roctx.so.1.0.0 (deleted)"),
            Some((RocprofilerSdkRoctx, Some("1.0.0".into())))
        );
        assert_eq!(kind("librocprofiler-sdk-tool.so"), Some((RocprofilerSdkTool, None)));
        assert_eq!(kind("librocprofiler-sdk-attach.so.1"), Some((RocprofilerSdkAttach, Some("1".into()))));
        assert_eq!(
            kind("librocprofiler-sdk-rocattach.so.1"),
            Some((RocprofilerSdkRocattach, Some("1".into())))
        );
        assert_eq!(
            kind("librocprofiler-register.so.0.4.0"),
            Some((RocprofilerRegister, Some("0.4.0".into())))
        );
        assert_eq!(kind("libroctracer64.so.4"), Some((Roctracer, Some("4".into()))));
        assert_eq!(kind("libroctx64.so.4"), Some((Roctx, Some("4".into()))));
        assert_eq!(kind("librocprofiler64.so.1"), Some((Rocprofiler, Some("1".into()))));
        assert_eq!(kind("libnvperf_host.so"), Some((NvperfHost, None)));
        assert_eq!(kind("libnvperf_target.so"), Some((NvperfTarget, None)));
        // Near misses.
        assert_eq!(kind("libcuptix.so"), None);
        assert_eq!(kind("librocprofiler-sdk-codeobj.so.1"), None);
        assert_eq!(kind("libcupti.a"), None);
        assert_eq!(kind("libkineto.so"), None);
        assert_eq!(kind("libcupti.so.13.bak").map(|k| k.1), Some(None));
    }

    #[test]
    fn spellings() {
        assert_eq!(LibraryKind::RocprofilerSdk.as_str(), "rocprofiler-sdk");
        assert_eq!(LibraryKind::Roctracer.as_str(), "roctracer");
        assert_eq!(LibraryKind::Roctx.as_str(), "roctx");
        assert_eq!(LibraryKind::Rocprofiler.as_str(), "rocprofiler");
        for (_, k) in STEMS {
            assert_eq!(serde_json::to_string(k).unwrap(), format!("\"{}\"", k.as_str()));
        }
        assert_eq!(serde_json::to_string(&Backend::RocprofilerSdk).unwrap(), "\"rocprofiler-sdk\"");
        for b in ["roctracer", "rocprofiler-sdk", "cupti", "none", "mixed"] {
            assert_eq!(Backend::from_name(b).unwrap().as_str(), b);
            assert_eq!(serde_json::to_string(&Backend::from_name(b)).unwrap(), format!("\"{b}\""));
        }
    }

    #[test]
    fn versions() {
        assert_eq!(compare_versions("1.3.2", "1.3.2"), Ordering::Equal);
        assert_eq!(compare_versions("1.3", "1.3.2"), Ordering::Less);
        assert_eq!(compare_versions("1.10.0", "1.3.2"), Ordering::Greater);
    }
}
