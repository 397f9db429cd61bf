//! What a glibc derives from its version and the CPU before it searches anything: `$PLATFORM`,
//! the subdirectories it tries in every search directory, and which ld.so.cache entries of
//! hwcap subdirectories count. Each rule follows the glibc source named beside it.
//!
//! - glibc ≥ 2.33 tries `glibc-hwcaps/<level>/` for each level the CPU supports, best first
//!   (elf/dl-hwcaps.c; the levels in sysdeps/*/dl-hwcaps-subdirs.c: `x86-64-v4:v3:v2`,
//!   `power10:power9`, `z16:z15:z14:z13` — z16 since 2.36 —, none on aarch64).
//! - glibc < 2.37 then tries the legacy subdirectories: every combination of the CPU's
//!   "important" hwcap names, the platform and `tls`, as `_dl_important_hwcaps` builds them
//!   (the power set, largest first, `tls` outermost).
//! - Then the directory itself.
//!
//! `$PLATFORM` is the kernel's AT_PLATFORM, except that glibc ≥ 2.26 on an Intel CPU sets
//! `haswell` (AVX2, FMA, BMI1, BMI2, LZCNT, MOVBE, POPCNT usable) or `xeon_phi` (AVX512ER and
//! AVX512PF), and sets the `avx512_1` hwcap on Intel CPUs with AVX512CD, BW, DQ and VL but not
//! ER (sysdeps/x86/cpu-features.c, `init_cpu_features`). glibc 2.37 dropped the legacy
//! subdirectories, not that platform: `$PLATFORM` is still `haswell` there.

use crate::cpu::{bits, CpuFacts, CpuVendor, Family, X86Features, X86, X86_LEVEL_NAMES};
use crate::glibc::GlibcVersion;

/// What the loader's search depends on, for one architecture and glibc.
pub struct Inputs<'a> {
    /// Which sysdeps rules apply.
    pub family: Family,
    /// The glibc release; `None`: unknown, the rules of 2.37 and later apply.
    pub glibc: Option<GlibcVersion>,
    /// The CPU.
    pub cpu: &'a CpuFacts,
    /// The kernel's AT_PLATFORM for that CPU, and where that came from.
    pub at_platform: Option<(&'a str, &'a str)>,
    /// `--platform`: `$PLATFORM` as given, whatever glibc would set.
    pub platform_flag: Option<&'a str>,
}

/// What the loader derives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    /// `$PLATFORM` (glibc's `dl_platform`); `None` drops search elements that use it.
    pub platform: Option<String>,
    /// Why `$PLATFORM` is what it is.
    pub platform_source: String,
    /// The subdirectories tried in every search directory, in order, each ending in `/`; the
    /// last is `""`, the directory itself.
    pub subdirs: Vec<String>,
    /// The CPU's legacy hwcap names that glibc counts (`x86_64`, `avx512_1`, `atomics`, …).
    pub hwcaps: Vec<&'static str>,
    /// The CPU's level, as glibc-hwcaps names it (`x86-64-v3`, `power9`), where the
    /// architecture has levels.
    pub cpu_level: Option<String>,
    /// Which ld.so.cache entries of hwcap subdirectories count.
    pub cache: CacheRules,
    /// Where the rules are known to be approximate.
    pub notes: Vec<String>,
}

/// How `_dl_load_cache_lookup` judges entries whose hwcap field is set.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CacheRules {
    /// glibc ≥ 2.33: glibc-hwcaps entries (`DL_CACHE_HWCAP_EXTENSION`) count; the active
    /// subdirectory names, best first. `None`: such entries are skipped.
    pub named: Option<Vec<String>>,
    /// x86-64: the CPU's level (1 baseline … 4), against which ISA-level-marked glibc-hwcaps
    /// entries are checked (sysdeps/x86/dl-isa-level.h); `None`: all are compatible.
    pub isa_level: Option<u32>,
    /// glibc < 2.37: legacy hwcap and platform entries count when these allow them; `None`
    /// (glibc ≥ 2.37): every entry with hwcap bits that is not a glibc-hwcaps one is skipped.
    pub legacy: Option<LegacyRules>,
}

/// The legacy checks of `search_cache` (`HWCAP_CHECK` before 2.33).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LegacyRules {
    /// An entry with any of these bits is skipped: `~(dl_hwcap & mask | platform bits | tls)`.
    pub exclude: u64,
    /// The platform bits of this architecture (`_DL_HWCAP_PLATFORM`).
    pub platform_mask: u64,
    /// The bit of `$PLATFORM` among them; `None` when glibc does not know the platform, so
    /// that every entry with a platform bit is skipped.
    pub platform_bit: Option<u64>,
}

/// `_DL_HWCAP_TLS_MASK`: the bit ldconfig gives entries in `tls/`.
const TLS_BIT: u64 = 1 << 63;

/// One architecture's legacy tables: the important hwcap bits with their names, the platform
/// bits of the cache and the platform names they stand for.
struct LegacyTable {
    important: &'static [(u64, &'static str)],
    first_platform: u32,
    platforms: &'static [&'static str],
}

const X86_64_LEGACY: LegacyTable = LegacyTable {
    // HWCAP_X86_64 and HWCAP_X86_AVX512_1 (sysdeps/x86/dl-hwcap.h); bits glibc sets itself.
    important: &[(1 << 1, "x86_64"), (1 << 2, "avx512_1")],
    // _DL_FIRST_PLATFORM 48 over "i586", "i686", "haswell", "xeon_phi"; x86-64 knows the last two.
    first_platform: 48,
    platforms: &["", "", "haswell", "xeon_phi"],
};

const AARCH64_LEGACY: LegacyTable = LegacyTable {
    // HWCAP_IMPORTANT HWCAP_ATOMICS (sysdeps/unix/sysv/linux/aarch64/dl-procinfo.h); no platforms.
    important: &[(bits::AARCH64_ATOMICS, "atomics")],
    first_platform: 0,
    platforms: &[],
};

const PPC64_LEGACY: LegacyTable = LegacyTable {
    // HWCAP_IMPORTANT PPC_FEATURE_HAS_ALTIVEC + PPC_FEATURE_HAS_DFP (sysdeps/powerpc/dl-procinfo.h).
    important: &[(bits::PPC_DFP, "dfp"), (bits::PPC_ALTIVEC, "altivec")],
    first_platform: 32,
    platforms: &[
        "power4",
        "ppc970",
        "power5",
        "power5+",
        "power6",
        "ppc-cell-be",
        "power6x",
        "power7",
        "ppca2",
        "ppc405",
        "ppc440",
        "ppc464",
        "ppc476",
        "power8",
        "power9",
    ],
};

const S390X_LEGACY: LegacyTable = LegacyTable {
    // HWCAP_IMPORTANT: zarch, ldisp, eimm, dfp; vx and vxe too since 2.30 (sysdeps/s390/dl-procinfo.h).
    important: &[
        (bits::S390_ZARCH, "zarch"),
        (bits::S390_LDISP, "ldisp"),
        (bits::S390_EIMM, "eimm"),
        (bits::S390_DFP, "dfp"),
        (bits::S390_VX, "vx"),
        (bits::S390_VXE, "vxe"),
    ],
    first_platform: 32,
    platforms: &["g5", "z900", "z990", "z9-109", "z10", "z196", "zEC12", "z13", "z14", "z15", "z16"],
};

/// What one architecture's rules make of a CPU.
struct CpuRules {
    /// The legacy tables, where modelled.
    table: Option<&'static LegacyTable>,
    /// glibc's `dl_hwcap`.
    dl_hwcap: u64,
    /// The platform glibc sets itself, and why.
    own_platform: Option<(&'static str, String)>,
    /// The glibc-hwcaps levels the CPU supports, best first.
    levels: Vec<&'static str>,
    /// The CPU's level, where the architecture has levels.
    cpu_level: Option<String>,
}

/// Derives what the loader of `inputs.glibc` does on `inputs.cpu`.
pub fn derive(inputs: &Inputs) -> Derived {
    let mut notes = Vec::new();
    let v = inputs.glibc.unwrap_or(GlibcVersion::new(2, 37));
    let at_platform = inputs.at_platform.map(|(p, source)| (p.to_string(), source.to_string()));

    // The important hwcap bits the CPU has, glibc's own platform, the levels.
    let CpuRules { table, dl_hwcap, own_platform, levels, cpu_level } = match (inputs.family, inputs.cpu) {
        (Family::X86_64, CpuFacts::X86 { vendor, features }) => {
            let (hwcap, platform) = x86_64_hwcap_and_platform(*vendor, features, v);
            let level = features.level();
            let levels: Vec<&str> = (2..=level).rev().map(|l| X86_LEVEL_NAMES[l - 1]).collect();
            let name = match level {
                0 => "below x86-64".to_string(),
                l => X86_LEVEL_NAMES[l - 1].to_string(),
            };
            CpuRules {
                table: Some(&X86_64_LEGACY),
                dl_hwcap: hwcap,
                own_platform: platform,
                levels,
                cpu_level: Some(name),
            }
        }
        (Family::Aarch64, CpuFacts::Aux { hwcap, .. }) => CpuRules {
            table: Some(&AARCH64_LEGACY),
            dl_hwcap: *hwcap,
            own_platform: None,
            levels: vec![],
            cpu_level: None,
        },
        (Family::Ppc64le, CpuFacts::Aux { hwcap, hwcap2 }) => {
            let power9 = hwcap2 & (bits::PPC2_ARCH_3_00 | bits::PPC2_IEEE128)
                == bits::PPC2_ARCH_3_00 | bits::PPC2_IEEE128;
            let power10 = power9
                && hwcap2 & (bits::PPC2_ARCH_3_1 | bits::PPC2_MMA) == bits::PPC2_ARCH_3_1 | bits::PPC2_MMA;
            let levels: Vec<&str> = [("power10", power10), ("power9", power9)]
                .iter()
                .filter(|(_, on)| *on)
                .map(|(n, _)| *n)
                .collect();
            let name = levels.first().copied().unwrap_or("power8").to_string();
            CpuRules {
                table: Some(&PPC64_LEGACY),
                dl_hwcap: *hwcap,
                own_platform: None,
                levels,
                cpu_level: Some(name),
            }
        }
        (Family::S390x, CpuFacts::Aux { hwcap, .. }) => {
            let has = |b: u64| hwcap & b == b;
            let z13 = has(bits::S390_VX);
            let z14 = z13 && has(bits::S390_VXD | bits::S390_VXE | bits::S390_GS);
            let z15 = z14 && has(bits::S390_VXRS_EXT2 | bits::S390_VXRS_PDE);
            let z16 = z15 && has(bits::S390_VXRS_PDE2);
            let all = [("z16", z16), ("z15", z15), ("z14", z14), ("z13", z13)];
            let name = all.iter().find(|(_, on)| *on).map_or("z196", |(n, _)| n).to_string();
            // z16 is a glibc-hwcaps subdirectory since 2.36.
            let levels: Vec<&str> = all
                .iter()
                .filter(|(n, on)| *on && (*n != "z16" || v.at_least(36)))
                .map(|(n, _)| *n)
                .collect();
            CpuRules {
                table: Some(&S390X_LEGACY),
                dl_hwcap: *hwcap,
                own_platform: None,
                levels,
                cpu_level: Some(name),
            }
        }
        _ => CpuRules { table: None, dl_hwcap: 0, own_platform: None, levels: vec![], cpu_level: None },
    };

    let (platform, platform_source) = match (inputs.platform_flag, own_platform, at_platform) {
        (Some(p), _, _) => (Some(p.to_string()), "--platform".to_string()),
        (None, Some((p, why)), _) => (Some(p.to_string()), why),
        (None, None, Some((p, source))) => (Some(p), source),
        (None, None, None) => {
            (None, "unknown: the kernel's AT_PLATFORM for this CPU is not known here".into())
        }
    };

    // The important hwcaps by bit, lowest first, as _dl_important_hwcaps takes them.
    let mut important: Vec<(u64, &'static str)> = match table {
        Some(_) if pre_legacy_tables(inputs.family, v) => {
            notes.push(format!(
                "glibc {v} predates 2.26: its legacy hwcap subdirectories (other than tls/ and $PLATFORM/) are not modelled"
            ));
            vec![]
        }
        Some(t) => t
            .important
            .iter()
            .filter(|(bit, name)| {
                dl_hwcap & bit != 0
                    && !(inputs.family == Family::S390x && !v.at_least(30) && matches!(*name, "vx" | "vxe"))
            })
            .copied()
            .collect(),
        None => vec![],
    };
    important.sort_by_key(|(bit, _)| *bit);
    if table.is_none() {
        notes.push(
            "no hwcap subdirectories are modelled for this architecture beyond tls/ and $PLATFORM/".into(),
        );
    }
    if inputs.glibc.is_none() {
        notes.push("the glibc version is unknown: the search follows glibc 2.37 and later".into());
    }

    let named: Vec<String> =
        if v.at_least(33) { levels.iter().map(|l| l.to_string()).collect() } else { vec![] };
    let mut subdirs: Vec<String> = named.iter().map(|l| format!("glibc-hwcaps/{l}/")).collect();
    let legacy = if v.at_least(37) {
        subdirs.push(String::new());
        None
    } else {
        let mut components: Vec<&str> = important.iter().map(|(_, n)| *n).collect();
        if let Some(p) = &platform {
            components.push(p);
        }
        components.push("tls");
        subdirs.extend(power_set(&components));
        let hwcap_bits = important.iter().fold(0, |acc, (bit, _)| acc | bit);
        let (platform_mask, platform_bit) = match table {
            Some(t) if !t.platforms.is_empty() => {
                let mask = ((1u64 << t.platforms.len()) - 1) << t.first_platform;
                let bit = platform.as_deref().and_then(|p| {
                    t.platforms
                        .iter()
                        .position(|n| !n.is_empty() && *n == p)
                        .map(|i| 1u64 << (t.first_platform as usize + i))
                });
                (mask, bit)
            }
            _ => (0, None),
        };
        Some(LegacyRules { exclude: !(hwcap_bits | platform_mask | TLS_BIT), platform_mask, platform_bit })
    };
    let isa_level = match inputs.cpu {
        CpuFacts::X86 { features, .. } if inputs.family == Family::X86_64 => Some(features.level() as u32),
        _ => None,
    };
    Derived {
        platform,
        platform_source,
        subdirs,
        hwcaps: important.iter().map(|(_, n)| *n).collect(),
        cpu_level,
        cache: CacheRules { named: v.at_least(33).then_some(named), isa_level, legacy },
        notes,
    }
}

/// Whether glibc `v` predates the legacy tables modelled here (2.26 on x86-64, where the
/// `haswell` platform and `avx512_1` came, and on aarch64, where `atomics` did).
fn pre_legacy_tables(family: Family, v: GlibcVersion) -> bool {
    matches!(family, Family::X86_64 | Family::Aarch64) && !v.at_least(26)
}

/// `init_cpu_features` on x86-64: `dl_hwcap` and, on Intel, the platform glibc sets itself.
fn x86_64_hwcap_and_platform(
    vendor: CpuVendor,
    f: &X86Features,
    v: GlibcVersion,
) -> (u64, Option<(&'static str, String)>) {
    let mut hwcap = 1 << 1;
    if !v.at_least(26) || vendor != CpuVendor::Intel {
        return (hwcap, None);
    }
    let mut platform = None;
    if f.all(&[X86::Avx512cd]) {
        if f.all(&[X86::Avx512er]) {
            if f.all(&[X86::Avx512pf]) {
                platform = Some((
                    "xeon_phi",
                    format!("glibc {v} sets it on an Intel CPU with AVX512ER and AVX512PF (sysdeps/x86/cpu-features.c)"),
                ));
            }
        } else if f.all(&[X86::Avx512bw, X86::Avx512dq, X86::Avx512vl]) {
            hwcap |= 1 << 2;
        }
    }
    let haswell = [X86::Avx2, X86::Fma, X86::Bmi1, X86::Bmi2, X86::Lzcnt, X86::Movbe, X86::Popcnt];
    if platform.is_none() && f.all(&haswell) {
        platform = Some((
            "haswell",
            format!(
                "glibc {v} sets it on an Intel CPU with AVX2, FMA, BMI1, BMI2, LZCNT, MOVBE and POPCNT (sysdeps/x86/cpu-features.c)"
            ),
        ));
    }
    (hwcap, platform)
}

/// `_dl_important_hwcaps`' legacy list: every subset of `components` (hwcap names by bit, the
/// platform, `tls`), the largest first as the bits of a counter running down, each written
/// from the last component to the first; the empty subset, the directory itself, last.
pub fn power_set(components: &[&str]) -> Vec<String> {
    let n = components.len();
    (0..1u32 << n)
        .rev()
        .map(|mask| {
            let parts: Vec<&str> =
                (0..n).rev().filter(|i| mask >> i & 1 == 1).map(|i| components[i]).collect();
            if parts.is_empty() {
                String::new()
            } else {
                format!("{}/", parts.join("/"))
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// One `key=value` line of this machine's `ld.so --list-diagnostics` (glibc ≥ 2.33), the
    /// value unquoted; `None` when the loader has no such option or line.
    pub fn host_diagnostic(key: &str) -> Option<String> {
        let out = std::process::Command::new("/lib64/ld-linux-x86-64.so.2")
            .arg("--list-diagnostics")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('=').map(|v| v.trim_matches('"').to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuLevel;

    fn x86(vendor: CpuVendor, level: u8) -> CpuFacts {
        CpuFacts::of_level(Family::X86_64, CpuLevel::X86(level), vendor).unwrap()
    }

    fn derive_x86(cpu: &CpuFacts, glibc: u32) -> Derived {
        derive(&Inputs {
            family: Family::X86_64,
            glibc: Some(GlibcVersion::new(2, glibc)),
            cpu,
            at_platform: Some(("x86_64", "the kernel's AT_PLATFORM")),
            platform_flag: None,
        })
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// What an x86-64-v4 CPU searches first (the glibc-hwcaps levels v4, v3, v2), then `rest`.
    fn v4_then(rest: &[&str]) -> Vec<String> {
        strings(&["glibc-hwcaps/x86-64-v4/", "glibc-hwcaps/x86-64-v3/", "glibc-hwcaps/x86-64-v2/"])
            .into_iter()
            .chain(strings(rest))
            .collect()
    }

    /// A Xeon with AVX-512 under Debian 12's glibc 2.36, worked out by hand from
    /// `_dl_important_hwcaps` (2.33–2.36): the glibc-hwcaps levels v4, v3, v2; then the power
    /// set of [x86_64 (bit 1), avx512_1 (bit 2), haswell (the platform), tls], masks 1111 down
    /// to 0000, each written tls first. The issue's `LD_DEBUG=libs` shows the same start:
    /// `…/haswell/glibc-hwcaps/x86-64-v4:…:…/haswell/tls/haswell/avx512_1/x86_64:…`.
    #[test]
    fn intel_avx512_under_glibc_2_36() {
        let d = derive_x86(&x86(CpuVendor::Intel, 4), 36);
        assert_eq!(d.platform.as_deref(), Some("haswell"));
        assert!(d.platform_source.contains("Intel"), "{}", d.platform_source);
        assert_eq!(d.hwcaps, ["x86_64", "avx512_1"]);
        assert_eq!(d.cpu_level.as_deref(), Some("x86-64-v4"));
        assert_eq!(
            d.subdirs,
            v4_then(&[
                "tls/haswell/avx512_1/x86_64/",
                "tls/haswell/avx512_1/",
                "tls/haswell/x86_64/",
                "tls/haswell/",
                "tls/avx512_1/x86_64/",
                "tls/avx512_1/",
                "tls/x86_64/",
                "tls/",
                "haswell/avx512_1/x86_64/",
                "haswell/avx512_1/",
                "haswell/x86_64/",
                "haswell/",
                "avx512_1/x86_64/",
                "avx512_1/",
                "x86_64/",
                "",
            ])
        );
        // ld.so.cache: x86_64 and avx512_1 entries count, haswell ones (bit 50) too.
        let legacy = d.cache.legacy.unwrap();
        assert_eq!(legacy.platform_bit, Some(1 << 50));
        assert_eq!(legacy.platform_mask, 0xf << 48);
        assert_eq!(legacy.exclude, !(0b110 | 0xf << 48 | 1 << 63));
        assert_eq!(d.cache.named, Some(strings(&["x86-64-v4", "x86-64-v3", "x86-64-v2"])));
    }

    /// The same Xeon under glibc 2.37 or later: no legacy subdirectories, but glibc still sets
    /// the `haswell` platform (cpu-features.c kept it; only elf/dl-hwcaps.c dropped the
    /// legacy search), so `$PLATFORM` is `haswell`.
    #[test]
    fn intel_avx512_under_glibc_2_37_and_later() {
        for glibc in [37, 39, 41] {
            let d = derive_x86(&x86(CpuVendor::Intel, 4), glibc);
            assert_eq!(d.platform.as_deref(), Some("haswell"));
            assert_eq!(d.subdirs, v4_then(&[""]));
            assert_eq!(d.cache.legacy, None);
        }
    }

    /// This machine's kind (an AMD EPYC with AVX-512) under 2.36: no haswell, no avx512_1; the
    /// list `ld.so --help` and `LD_DEBUG=libs` print on Debian 12 there.
    #[test]
    fn amd_avx512_under_glibc_2_36() {
        let d = derive_x86(&x86(CpuVendor::Amd, 4), 36);
        assert_eq!(d.platform.as_deref(), Some("x86_64"));
        assert_eq!(d.platform_source, "the kernel's AT_PLATFORM");
        assert_eq!(
            d.subdirs,
            v4_then(&[
                "tls/x86_64/x86_64/",
                "tls/x86_64/",
                "tls/x86_64/",
                "tls/",
                "x86_64/x86_64/",
                "x86_64/",
                "x86_64/",
                "",
            ])
        );
        assert_eq!(d.cache.legacy.unwrap().platform_bit, None);
    }

    /// Ubuntu 20.04's glibc 2.31 on an Intel x86-64-v3 (Haswell) CPU: no glibc-hwcaps; haswell
    /// and x86_64, no avx512_1.
    #[test]
    fn intel_v3_under_glibc_2_31() {
        let d = derive_x86(&x86(CpuVendor::Intel, 3), 31);
        assert_eq!(d.platform.as_deref(), Some("haswell"));
        assert_eq!(
            d.subdirs,
            strings(&[
                "tls/haswell/x86_64/",
                "tls/haswell/",
                "tls/x86_64/",
                "tls/",
                "haswell/x86_64/",
                "haswell/",
                "x86_64/",
                ""
            ])
        );
        assert_eq!(d.cache.named, None);
        // An Intel v2 CPU (no AVX2) keeps the kernel's platform.
        let d = derive_x86(&x86(CpuVendor::Intel, 2), 31);
        assert_eq!(d.platform.as_deref(), Some("x86_64"));
        assert_eq!(d.cpu_level.as_deref(), Some("x86-64-v2"));
    }

    #[test]
    fn flags_and_other_architectures() {
        let cpu = x86(CpuVendor::Intel, 4);
        let d = derive(&Inputs {
            family: Family::X86_64,
            glibc: None,
            cpu: &cpu,
            at_platform: Some(("x86_64", "k")),
            platform_flag: Some("xeon_phi"),
        });
        assert_eq!(d.platform.as_deref(), Some("xeon_phi"));
        assert_eq!(d.platform_source, "--platform");
        assert!(d.notes.iter().any(|n| n.contains("version is unknown")));
        assert_eq!(d.subdirs.last().map(String::as_str), Some(""));

        // Grace (aarch64 with LSE atomics) under Ubuntu 22.04's 2.35: no glibc-hwcaps levels,
        // legacy [atomics, aarch64, tls].
        let grace = CpuFacts::Aux { hwcap: bits::AARCH64_ATOMICS | 0b11, hwcap2: 0 };
        let d = derive(&Inputs {
            family: Family::Aarch64,
            glibc: Some(GlibcVersion::new(2, 35)),
            cpu: &grace,
            at_platform: Some(("aarch64", "k")),
            platform_flag: None,
        });
        assert_eq!(
            d.subdirs,
            strings(&[
                "tls/aarch64/atomics/",
                "tls/aarch64/",
                "tls/atomics/",
                "tls/",
                "aarch64/atomics/",
                "aarch64/",
                "atomics/",
                ""
            ])
        );
        assert_eq!(d.cache.legacy.unwrap().platform_mask, 0);

        // POWER10 under 2.39: power10, power9.
        let p10 = CpuFacts::of_level(Family::Ppc64le, CpuLevel::Power(10), CpuVendor::Other).unwrap();
        let d = derive(&Inputs {
            family: Family::Ppc64le,
            glibc: Some(GlibcVersion::new(2, 39)),
            cpu: &p10,
            at_platform: Some(("power10", "k")),
            platform_flag: None,
        });
        assert_eq!(d.subdirs, strings(&["glibc-hwcaps/power10/", "glibc-hwcaps/power9/", ""]));
        assert_eq!(d.cpu_level.as_deref(), Some("power10"));

        // z16 under 2.35 (before z16 was a subdirectory) and 2.36.
        let z16 = CpuFacts::of_level(Family::S390x, CpuLevel::Z(16), CpuVendor::Other).unwrap();
        for (glibc, top) in [(35, "glibc-hwcaps/z15/"), (36, "glibc-hwcaps/z16/")] {
            let d = derive(&Inputs {
                family: Family::S390x,
                glibc: Some(GlibcVersion::new(2, glibc)),
                cpu: &z16,
                at_platform: Some(("z16", "k")),
                platform_flag: None,
            });
            assert_eq!(d.subdirs[0], top);
            // 6 important hwcaps, the platform and tls: 256 legacy subdirectories.
            assert_eq!(d.subdirs.len(), if glibc == 35 { 3 } else { 4 } + 256);
        }
    }

    #[test]
    fn power_set_order() {
        assert_eq!(power_set(&["tls"]), strings(&["tls/", ""]));
        assert_eq!(
            power_set(&["a", "p", "tls"]),
            strings(&["tls/p/a/", "tls/p/", "tls/a/", "tls/", "p/a/", "p/", "a/", ""])
        );
    }
}
