//! The assumptions every search rests on — the inspected system's glibc, the CPU, `$PLATFORM`,
//! `$LIB` — made once per architecture, applied to the search ([`crate::hwcaps`]) and stated in
//! the report with where each came from ([`LoaderAssumption`]).

use serde::{Deserialize, Serialize};

use crate::cpu::{CpuFacts, CpuLevel, CpuVendor, Family, ThisMachine};
use crate::glibc;
use crate::hwcaps::{self, Derived, Inputs};
use crate::rootfs::RootFs;
use crate::search::Platform;

/// The CPU to assume instead of this machine's (`--cpu-level`, `--cpu-vendor`, `--platform`);
/// each fact not given is this machine's where the inspected files are of its architecture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuChoice {
    /// The CPU's level.
    pub level: Option<CpuLevel>,
    /// The CPU's maker (x86-64).
    pub vendor: Option<CpuVendor>,
    /// `$PLATFORM`, whatever glibc would set.
    pub platform: Option<String>,
}

/// What the resolution assumed about the loader that would run, and where each fact came
/// from. Part of `launchguard.linkage/1` as `loader`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoaderAssumption {
    /// The glibc release whose rules were applied (`"2.36"`); `null` when none could be read.
    pub glibc: Option<String>,
    /// Where the version came from, or why there is none.
    pub glibc_source: String,
    /// The CPU's level as glibc-hwcaps names it (`"x86-64-v3"`, `"power9"`), where the
    /// architecture has levels.
    pub cpu_level: Option<String>,
    /// The CPU's maker, on x86-64 (`"intel"`, `"amd"`, `"other"`): glibc treats Intel apart.
    pub cpu_vendor: Option<CpuVendor>,
    /// The CPU's legacy hwcap names that glibc counts (`"x86_64"`, `"avx512_1"`, `"atomics"`).
    pub hwcaps: Vec<String>,
    /// Where the CPU facts came from.
    pub cpu_source: String,
    /// `$PLATFORM`; `null` when unknown (search elements using it are dropped).
    pub platform: Option<String>,
    /// Why `$PLATFORM` is what it is.
    pub platform_source: String,
    /// `$LIB`.
    pub lib: String,
    /// Where `$LIB` (and the system directories) came from.
    pub lib_source: String,
    /// The subdirectories tried in every search directory, in the loader's order; `""` is the
    /// directory itself.
    pub subdirectories: Vec<String>,
}

impl LoaderAssumption {
    /// A few lines for a terminal report.
    pub fn describe(&self) -> Vec<String> {
        let glibc = match &self.glibc {
            Some(v) => format!("glibc {v} ({})", self.glibc_source),
            None => format!("glibc unknown ({})", self.glibc_source),
        };
        let mut cpu: Vec<String> = self.cpu_level.iter().cloned().collect();
        cpu.extend(self.cpu_vendor.map(|v| v.to_string()));
        let cpu = if cpu.is_empty() { "CPU".to_string() } else { format!("CPU {}", cpu.join(", ")) };
        let subdirs = self.subdirectories.iter().filter(|s| !s.is_empty()).count();
        let first: Vec<&str> = self
            .subdirectories
            .iter()
            .filter(|s| !s.is_empty())
            .take(4)
            .map(|s| s.trim_end_matches('/'))
            .collect();
        let more = if subdirs > first.len() { ", …" } else { "" };
        vec![
            glibc,
            format!("{cpu} ({})", self.cpu_source),
            format!(
                "$PLATFORM {} ({}); $LIB {} ({})",
                self.platform.as_deref().unwrap_or("unknown"),
                self.platform_source,
                self.lib,
                self.lib_source
            ),
            match subdirs {
                0 => "no hwcap subdirectories searched".to_string(),
                n => format!(
                    "{n} hwcap subdirectories searched in each directory first: {}{more}",
                    first.join(", ")
                ),
            },
        ]
    }
}

/// What one architecture's search assumes.
pub struct Setup {
    /// What the loader derives.
    pub derived: Derived,
    /// The same, for the report.
    pub assumption: LoaderAssumption,
    /// Facts worth saying.
    pub notes: Vec<String>,
    /// Flags that could not apply.
    pub problems: Vec<String>,
}

/// The assumptions for objects of `platform.arch` whose loader is `rtld` (inside the inspected
/// system), with `choice` over `machine`.
pub fn setup(
    fs: &RootFs,
    platform: &Platform,
    rtld: Option<&str>,
    choice: &CpuChoice,
    machine: &ThisMachine,
) -> Setup {
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    let arch = platform.arch;
    let family = Family::of(arch);
    let found = glibc::read(fs, rtld.unwrap_or(""), &platform.system_dirs);
    let (glibc, glibc_source) = match &found {
        Some(f) => (Some(f.version), f.source.clone()),
        None => (
            None,
            format!(
                "read from neither {} nor a libc.so.6 in the system directories",
                rtld.unwrap_or("a dynamic loader")
            ),
        ),
    };
    let same_arch = machine.arch == Some(arch);

    // The CPU: a level given, else this machine's (of the same architecture), else the baseline.
    let host_vendor = machine.cpu.vendor();
    let vendor = choice.vendor.or(if same_arch { host_vendor } else { None });
    let by_level = choice.level.and_then(|level| {
        let cpu = CpuFacts::of_level(family, level, vendor.unwrap_or(CpuVendor::Other));
        if cpu.is_none() {
            problems.push(format!("--cpu-level {level} is not a level of {arch} files: it was not applied"));
        }
        cpu.map(|cpu| (cpu, level))
    });
    let (cpu, cpu_source, at_platform) = match by_level {
        Some((cpu, level)) => {
            let vendor_note = match (cpu.vendor(), choice.vendor) {
                (Some(_), Some(_)) => ", --cpu-vendor".to_string(),
                (Some(v), None) if same_arch => format!(", vendor {v} of this machine"),
                (Some(_), None) => ", vendor assumed other than Intel".to_string(),
                (None, _) => String::new(),
            };
            (cpu, format!("--cpu-level{vendor_note}"), kernel_platform(platform, Some(level)))
        }
        None if same_arch => {
            let cpu = machine.cpu.clone().with_vendor(choice.vendor);
            let source = match choice.vendor {
                Some(_) => format!("{}, with --cpu-vendor", machine.how),
                None => machine.how.to_string(),
            };
            let at = machine.at_platform.clone().map(|p| (p, "this machine's AT_PLATFORM".to_string()));
            (cpu, source, at)
        }
        None => {
            let cpu = CpuFacts::baseline(family).with_vendor(vendor);
            let source = format!(
                "assumed: the baseline of {arch}, not this machine's architecture ({}); --cpu-level names another",
                if choice.vendor.is_some() { "--cpu-vendor" } else { "vendor unknown" }
            );
            (cpu, source, kernel_platform(platform, None))
        }
    };
    let derived = hwcaps::derive(&Inputs {
        family,
        glibc,
        cpu: &cpu,
        at_platform: at_platform.as_ref().map(|(p, s)| (p.as_str(), s.as_str())),
        platform_flag: choice.platform.as_deref(),
    });
    notes.extend(derived.notes.iter().cloned());
    if fs.root().is_none() {
        for var in ["GLIBC_TUNABLES", "LD_HWCAP_MASK"] {
            if std::env::var_os(var).is_some() {
                notes.push(format!(
                    "{var} is set: its effect on the loader's hwcaps and CPU features is not modelled"
                ));
            }
        }
    }
    let assumption = LoaderAssumption {
        glibc: glibc.map(|v| v.to_string()),
        glibc_source,
        cpu_level: derived.cpu_level.clone(),
        cpu_vendor: cpu.vendor(),
        hwcaps: derived.hwcaps.iter().map(|h| h.to_string()).collect(),
        cpu_source,
        platform: derived.platform.clone(),
        platform_source: derived.platform_source.clone(),
        lib: platform.lib.clone(),
        lib_source: platform.lib_source.to_string(),
        subdirectories: derived.subdirs.clone(),
    };
    Setup { derived, assumption, notes, problems }
}

/// The kernel's AT_PLATFORM on a CPU of `platform.arch` (at `level`), with where that comes
/// from: the level's name on POWER and Z, whose kernels name the CPU generation.
fn kernel_platform(platform: &Platform, level: Option<CpuLevel>) -> Option<(String, String)> {
    let source = format!("the kernel's AT_PLATFORM for {}", platform.arch);
    match (Family::of(platform.arch), level) {
        (Family::Ppc64le, Some(l @ CpuLevel::Power(_))) | (Family::S390x, Some(l @ CpuLevel::Z(_))) => {
            Some((l.to_string(), format!("{source} at {l}")))
        }
        _ => platform.platform.clone().map(|p| (p, source)),
    }
}
