//! The CPU as the dynamic loader sees it: what glibc reads from CPUID on x86-64, and the kernel's
//! AT_HWCAP, AT_HWCAP2 and AT_PLATFORM elsewhere. Only these facts decide which hwcap
//! subdirectories a search tries and what `$PLATFORM` is ([`crate::hwcaps`] derives that).
//!
//! This machine's facts are read here ([`this_machine`]); another CPU is described by a level
//! and a maker (`--cpu-level`, `--cpu-vendor`), as [`CpuFacts::of_level`] builds it.

use std::fmt;
use std::str::FromStr;

use object::elf;
use serde::{Deserialize, Serialize};

use crate::elf::Arch;

/// The architectures whose loader rules differ, as glibc's sysdeps tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// 64-bit x86: CPUID decides (sysdeps/x86).
    X86_64,
    /// 64-bit Arm: AT_HWCAP.
    Aarch64,
    /// 64-bit little-endian POWER: AT_HWCAP and AT_HWCAP2.
    Ppc64le,
    /// 64-bit IBM Z: AT_HWCAP.
    S390x,
    /// Any other: no hwcap subdirectories are modelled.
    Other,
}

impl Family {
    /// The family of an ELF architecture.
    pub fn of(arch: Arch) -> Family {
        match (arch.machine, arch.is_64, arch.little_endian) {
            (elf::EM_X86_64, true, true) => Family::X86_64,
            (elf::EM_AARCH64, true, true) => Family::Aarch64,
            (elf::EM_PPC64, true, true) => Family::Ppc64le,
            (elf::EM_S390, true, false) => Family::S390x,
            _ => Family::Other,
        }
    }
}

/// A CPU's maker, as glibc tells them apart (`cpu_features->basic.kind`); only Intel changes
/// the loader's answer (the `haswell`/`xeon_phi` platforms and the `avx512_1` hwcap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuVendor {
    /// GenuineIntel.
    Intel,
    /// AuthenticAMD or HygonGenuine.
    Amd,
    /// Anything else (Zhaoxin, a hypervisor's own string).
    Other,
}

impl fmt::Display for CpuVendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuVendor::Intel => "intel",
            CpuVendor::Amd => "amd",
            CpuVendor::Other => "other",
        })
    }
}

impl FromStr for CpuVendor {
    type Err = String;
    fn from_str(s: &str) -> Result<CpuVendor, String> {
        match s.to_ascii_lowercase().as_str() {
            "intel" => Ok(CpuVendor::Intel),
            "amd" => Ok(CpuVendor::Amd),
            "other" => Ok(CpuVendor::Other),
            _ => Err(format!("{s:?} is not a CPU vendor (intel, amd, other)")),
        }
    }
}

/// One x86-64 feature glibc's loader looks at, named as glibc's cpu-features.h names it
/// (`LAHF64_SAHF64` is `Lahf64`), except `Baseline`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum X86 {
    /// The x86-64 baseline (get_isa_level's first test), one bit for all of it: CMOV, CX8, FPU,
    /// FXSR, MMX, SSE, SSE2.
    Baseline,
    Cmpxchg16b,
    Lahf64,
    Popcnt,
    Sse3,
    Ssse3,
    Sse41,
    Sse42,
    Avx,
    Avx2,
    Bmi1,
    Bmi2,
    F16c,
    Fma,
    Lzcnt,
    Movbe,
    Avx512f,
    Avx512bw,
    Avx512cd,
    Avx512dq,
    Avx512vl,
    /// Xeon Phi only.
    Avx512er,
    /// Xeon Phi only.
    Avx512pf,
}

/// The features of each x86-64 level beyond the one before (sysdeps/x86/get-isa-level.h).
const X86_LEVELS: [&[X86]; 4] = [
    &[X86::Baseline],
    &[X86::Cmpxchg16b, X86::Lahf64, X86::Popcnt, X86::Sse3, X86::Ssse3, X86::Sse41, X86::Sse42],
    &[X86::Avx, X86::Avx2, X86::Bmi1, X86::Bmi2, X86::F16c, X86::Fma, X86::Lzcnt, X86::Movbe],
    &[X86::Avx512f, X86::Avx512bw, X86::Avx512cd, X86::Avx512dq, X86::Avx512vl],
];

/// The names glibc-hwcaps gives the x86-64 levels, baseline first.
pub const X86_LEVEL_NAMES: [&str; 4] = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"];

/// A set of [`X86`] features, usable in glibc's sense: the CPU has them and the kernel enabled
/// the register state they need (XCR0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct X86Features(u32);

impl X86Features {
    /// The set of `features`.
    pub fn of(features: &[X86]) -> X86Features {
        X86Features(features.iter().fold(0, |acc, f| acc | 1 << *f as u8))
    }

    /// Whether every one of `features` is usable.
    pub fn all(&self, features: &[X86]) -> bool {
        let want = X86Features::of(features).0;
        self.0 & want == want
    }

    /// get_isa_level: 0 below the baseline, 1 for x86-64, up to 4 for x86-64-v4.
    pub fn level(&self) -> usize {
        X86_LEVELS.iter().take_while(|features| self.all(features)).count()
    }
}

/// What the loader knows of a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuFacts {
    /// x86-64: glibc reads CPUID (and XCR0) itself.
    X86 {
        /// The maker.
        vendor: CpuVendor,
        /// The usable features.
        features: X86Features,
    },
    /// Other architectures: the kernel's AT_HWCAP and AT_HWCAP2.
    Aux {
        /// AT_HWCAP.
        hwcap: u64,
        /// AT_HWCAP2.
        hwcap2: u64,
    },
}

/// A CPU level as `--cpu-level` names it: a glibc-hwcaps subdirectory name, or the
/// architecture's baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLevel {
    /// `x86-64` (1) to `x86-64-v4` (4).
    X86(u8),
    /// `power8` (the ppc64le baseline) to `power10`.
    Power(u8),
    /// `z13` to `z16` (`z196`, the s390x baseline, is `Z(12)`).
    Z(u8),
}

impl FromStr for CpuLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<CpuLevel, String> {
        if let Some(i) = X86_LEVEL_NAMES.iter().position(|n| *n == s) {
            return Ok(CpuLevel::X86(i as u8 + 1));
        }
        let level = match s {
            "power8" => CpuLevel::Power(8),
            "power9" => CpuLevel::Power(9),
            "power10" => CpuLevel::Power(10),
            "z196" => CpuLevel::Z(12),
            "z13" => CpuLevel::Z(13),
            "z14" => CpuLevel::Z(14),
            "z15" => CpuLevel::Z(15),
            "z16" => CpuLevel::Z(16),
            _ => {
                return Err(format!(
                    "{s:?} is not a CPU level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4, power8, power9, power10, z196, z13, z14, z15, z16)"
                ))
            }
        };
        Ok(level)
    }
}

impl fmt::Display for CpuLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuLevel::X86(n) => f.write_str(X86_LEVEL_NAMES[usize::from(*n).clamp(1, 4) - 1]),
            CpuLevel::Power(n) => write!(f, "power{n}"),
            CpuLevel::Z(12) => f.write_str("z196"),
            CpuLevel::Z(n) => write!(f, "z{n}"),
        }
    }
}

/// AT_HWCAP bits the loader looks at (the kernel's values, as glibc's sysdeps name them).
pub mod bits {
    /// aarch64 HWCAP_ATOMICS.
    pub const AARCH64_ATOMICS: u64 = 1 << 8;
    /// powerpc PPC_FEATURE_HAS_DFP.
    pub const PPC_DFP: u64 = 1 << 10;
    /// powerpc PPC_FEATURE_HAS_ALTIVEC.
    pub const PPC_ALTIVEC: u64 = 1 << 28;
    /// powerpc AT_HWCAP2 PPC_FEATURE2_MMA.
    pub const PPC2_MMA: u64 = 1 << 17;
    /// powerpc AT_HWCAP2 PPC_FEATURE2_ARCH_3_1.
    pub const PPC2_ARCH_3_1: u64 = 1 << 18;
    /// powerpc AT_HWCAP2 PPC_FEATURE2_HAS_IEEE128.
    pub const PPC2_IEEE128: u64 = 1 << 22;
    /// powerpc AT_HWCAP2 PPC_FEATURE2_ARCH_3_00.
    pub const PPC2_ARCH_3_00: u64 = 1 << 23;
    /// s390 HWCAP_S390_ZARCH.
    pub const S390_ZARCH: u64 = 1 << 1;
    /// s390 HWCAP_S390_LDISP.
    pub const S390_LDISP: u64 = 1 << 4;
    /// s390 HWCAP_S390_EIMM.
    pub const S390_EIMM: u64 = 1 << 5;
    /// s390 HWCAP_S390_DFP.
    pub const S390_DFP: u64 = 1 << 6;
    /// s390 HWCAP_S390_VX.
    pub const S390_VX: u64 = 1 << 11;
    /// s390 HWCAP_S390_VXD.
    pub const S390_VXD: u64 = 1 << 12;
    /// s390 HWCAP_S390_VXE.
    pub const S390_VXE: u64 = 1 << 13;
    /// s390 HWCAP_S390_GS.
    pub const S390_GS: u64 = 1 << 14;
    /// s390 HWCAP_S390_VXRS_EXT2.
    pub const S390_VXRS_EXT2: u64 = 1 << 15;
    /// s390 HWCAP_S390_VXRS_PDE.
    pub const S390_VXRS_PDE: u64 = 1 << 16;
    /// s390 HWCAP_S390_VXRS_PDE2.
    pub const S390_VXRS_PDE2: u64 = 1 << 19;
}

impl CpuFacts {
    /// A CPU of `level` (and, on x86-64, of `vendor`) with no feature beyond the level's, or
    /// `None` when the level is not one of `family`'s.
    pub fn of_level(family: Family, level: CpuLevel, vendor: CpuVendor) -> Option<CpuFacts> {
        use bits::*;
        match (family, level) {
            (Family::X86_64, CpuLevel::X86(n)) => {
                let features: Vec<X86> =
                    X86_LEVELS.iter().take(usize::from(n)).flat_map(|l| l.iter().copied()).collect();
                Some(CpuFacts::X86 { vendor, features: X86Features::of(&features) })
            }
            (Family::Ppc64le, CpuLevel::Power(n)) => {
                let mut hwcap2 = 0;
                if n >= 9 {
                    hwcap2 |= PPC2_ARCH_3_00 | PPC2_IEEE128;
                }
                if n >= 10 {
                    hwcap2 |= PPC2_ARCH_3_1 | PPC2_MMA;
                }
                Some(CpuFacts::Aux { hwcap: PPC_ALTIVEC | PPC_DFP, hwcap2 })
            }
            (Family::S390x, CpuLevel::Z(n)) => {
                let mut hwcap = S390_ZARCH | S390_LDISP | S390_EIMM | S390_DFP;
                for (from, more) in [
                    (13, S390_VX),
                    (14, S390_VXD | S390_VXE | S390_GS),
                    (15, S390_VXRS_EXT2 | S390_VXRS_PDE),
                    (16, S390_VXRS_PDE2),
                ] {
                    if n >= from {
                        hwcap |= more;
                    }
                }
                Some(CpuFacts::Aux { hwcap, hwcap2: 0 })
            }
            _ => None,
        }
    }

    /// The CPU of an unknown machine of `family`: the baseline, nothing more.
    pub fn baseline(family: Family) -> CpuFacts {
        match family {
            Family::X86_64 => {
                CpuFacts::X86 { vendor: CpuVendor::Other, features: X86Features::of(X86_LEVELS[0]) }
            }
            _ => CpuFacts::Aux { hwcap: 0, hwcap2: 0 },
        }
    }

    /// The same CPU made by `vendor`, where the maker matters (x86-64) and one is given.
    pub fn with_vendor(self, vendor: Option<CpuVendor>) -> CpuFacts {
        match (self, vendor) {
            (CpuFacts::X86 { features, .. }, Some(vendor)) => CpuFacts::X86 { vendor, features },
            (cpu, _) => cpu,
        }
    }

    /// The maker, where it matters (x86-64).
    pub fn vendor(&self) -> Option<CpuVendor> {
        match self {
            CpuFacts::X86 { vendor, .. } => Some(*vendor),
            CpuFacts::Aux { .. } => None,
        }
    }
}

/// This machine: its architecture, its CPU as the loader sees it, and the kernel's AT_PLATFORM.
pub struct ThisMachine {
    /// The architecture this program runs as.
    pub arch: Option<Arch>,
    /// Its CPU.
    pub cpu: CpuFacts,
    /// How the CPU facts were read.
    pub how: &'static str,
    /// AT_PLATFORM, as the kernel passes it to every program.
    pub at_platform: Option<String>,
}

/// Reads this machine's CPU as its loader would.
pub fn this_machine() -> ThisMachine {
    ThisMachine { arch: Arch::host(), cpu: host_cpu(), how: HOW, at_platform: at_platform() }
}

fn at_platform() -> Option<String> {
    // SAFETY: getauxval has no preconditions; a non-zero AT_PLATFORM is the address of a
    // NUL-terminated string the kernel put on this process's stack, alive for its lifetime.
    unsafe {
        let p = libc::getauxval(libc::AT_PLATFORM) as *const libc::c_char;
        (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

#[cfg(target_arch = "x86_64")]
const HOW: &str = "this machine's CPU, read from CPUID and XCR0 as glibc reads them";
#[cfg(not(target_arch = "x86_64"))]
const HOW: &str = "this machine's CPU, from the kernel's AT_HWCAP and AT_HWCAP2";

#[cfg(not(target_arch = "x86_64"))]
fn host_cpu() -> CpuFacts {
    // SAFETY: getauxval has no preconditions.
    let (hwcap, hwcap2) = unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) };
    CpuFacts::Aux { hwcap: hwcap as u64, hwcap2: hwcap2 as u64 }
}

/// glibc's `init_cpu_features` and `update_active`, for the features [`X86`] lists: CPUID bits,
/// with the AVX and AVX-512 ones usable only when XCR0 has their register state enabled.
#[cfg(target_arch = "x86_64")]
fn host_cpu() -> CpuFacts {
    use std::arch::x86_64::{__cpuid_count, CpuidResult};

    // cpuid is safe to execute on every x86-64 CPU; it is an `unsafe fn` in older toolchains.
    #[allow(unused_unsafe)]
    let cpuid = |leaf: u32, sub: u32| -> CpuidResult { unsafe { __cpuid_count(leaf, sub) } };
    let bit = |reg: u32, n: u32| reg >> n & 1 == 1;

    let leaf0 = cpuid(0, 0);
    let mut maker = [0u8; 12];
    maker[..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
    maker[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
    maker[8..].copy_from_slice(&leaf0.ecx.to_le_bytes());
    let vendor = match &maker {
        b"GenuineIntel" => CpuVendor::Intel,
        b"AuthenticAMD" | b"HygonGenuine" => CpuVendor::Amd,
        _ => CpuVendor::Other,
    };
    let max = leaf0.eax;
    let l1 = cpuid(1, 0);
    let l7 = if max >= 7 { cpuid(7, 0) } else { CpuidResult { eax: 0, ebx: 0, ecx: 0, edx: 0 } };
    let ext_max = cpuid(0x8000_0000, 0).eax;
    let e1 = if ext_max >= 0x8000_0001 { cpuid(0x8000_0001, 0).ecx } else { 0 };

    let xcr0 = if bit(l1.ecx, 27) { xgetbv0() } else { 0 };
    // XMM|YMM state, then opmask|ZMM_Hi256|Hi16_ZMM (glibc's bit_*_state).
    let ymm = xcr0 & 0b110 == 0b110;
    let zmm = ymm && xcr0 & 0b1110_0000 == 0b1110_0000;
    let avx = ymm && bit(l1.ecx, 28);
    let avx512f = zmm && bit(l7.ebx, 16);

    let mut have = Vec::new();
    let mut add = |f: X86, on: bool| {
        if on {
            have.push(f)
        }
    };
    // CMOV, CX8, FPU, FXSR, MMX, SSE, SSE2.
    add(X86::Baseline, [15, 8, 0, 24, 23, 25, 26].iter().all(|&n| bit(l1.edx, n)));
    add(X86::Cmpxchg16b, bit(l1.ecx, 13));
    add(X86::Lahf64, bit(e1, 0));
    add(X86::Popcnt, bit(l1.ecx, 23));
    add(X86::Sse3, bit(l1.ecx, 0));
    add(X86::Ssse3, bit(l1.ecx, 9));
    add(X86::Sse41, bit(l1.ecx, 19));
    add(X86::Sse42, bit(l1.ecx, 20));
    add(X86::Movbe, bit(l1.ecx, 22));
    add(X86::Lzcnt, bit(e1, 5));
    add(X86::Bmi1, bit(l7.ebx, 3));
    add(X86::Bmi2, bit(l7.ebx, 8));
    add(X86::Avx, avx);
    add(X86::Avx2, avx && bit(l7.ebx, 5));
    add(X86::Fma, avx && bit(l1.ecx, 12));
    add(X86::F16c, avx && bit(l1.ecx, 29));
    add(X86::Avx512f, avx512f);
    add(X86::Avx512dq, avx512f && bit(l7.ebx, 17));
    add(X86::Avx512pf, avx512f && bit(l7.ebx, 26));
    add(X86::Avx512er, avx512f && bit(l7.ebx, 27));
    add(X86::Avx512cd, avx512f && bit(l7.ebx, 28));
    add(X86::Avx512bw, avx512f && bit(l7.ebx, 30));
    add(X86::Avx512vl, avx512f && bit(l7.ebx, 31));
    CpuFacts::X86 { vendor, features: X86Features::of(&have) }
}

#[cfg(target_arch = "x86_64")]
fn xgetbv0() -> u64 {
    #[target_feature(enable = "xsave")]
    unsafe fn read() -> u64 {
        std::arch::x86_64::_xgetbv(0)
    }
    // SAFETY: only called when CPUID says OSXSAVE, i.e. the OS enabled XGETBV.
    unsafe { read() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_build_cpus() {
        assert_eq!("x86-64-v3".parse::<CpuLevel>().unwrap(), CpuLevel::X86(3));
        assert_eq!("x86-64".parse::<CpuLevel>().unwrap(), CpuLevel::X86(1));
        assert_eq!("z16".parse::<CpuLevel>().unwrap().to_string(), "z16");
        assert!("x86-64-v5".parse::<CpuLevel>().unwrap_err().contains("not a CPU level"));
        assert_eq!("INTEL".parse::<CpuVendor>().unwrap(), CpuVendor::Intel);

        let v3 = CpuFacts::of_level(Family::X86_64, CpuLevel::X86(3), CpuVendor::Intel).unwrap();
        let CpuFacts::X86 { features, .. } = v3 else { panic!() };
        assert_eq!(features.level(), 3);
        assert!(!features.all(&[X86::Avx512f]));
        assert!(CpuFacts::of_level(Family::Aarch64, CpuLevel::X86(3), CpuVendor::Intel).is_none());
        assert!(CpuFacts::of_level(Family::X86_64, CpuLevel::Power(9), CpuVendor::Intel).is_none());
    }

    /// The level read from CPUID is the one glibc's own loader reports on this machine
    /// (`ld.so --list-diagnostics`, glibc ≥ 2.33: `x86.cpu_features.isa_1`).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn this_machine_level_is_the_loaders() {
        let Some(isa_1) = crate::hwcaps::tests_support::host_diagnostic("x86.cpu_features.isa_1") else {
            eprintln!("note: skipping, this glibc's ld.so has no --list-diagnostics");
            return;
        };
        let isa_1 = u32::from_str_radix(isa_1.trim_start_matches("0x"), 16).unwrap();
        let CpuFacts::X86 { features, .. } = this_machine().cpu else { panic!() };
        assert_eq!(features.level(), (isa_1 + 1).trailing_zeros() as usize, "isa_1={isa_1:#x}");
    }
}
