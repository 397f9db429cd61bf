//! Reads what the dynamic loader reads from an ELF file — the header, the program headers, the
//! dynamic segment and its strings — and nothing else.
//!
//! The dynamic segment is found through `PT_DYNAMIC` and its string table through `DT_STRTAB`
//! mapped by the `PT_LOAD` segments, as ld.so does, so stripped files (no section headers) read
//! the same. Only a few KB are read, through `Read + Seek`: libtorch_cpu.so is hundreds of MB.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use object::elf;
use object::read::elf::{Dyn, FileHeader, ProgramHeader};
use object::read::{ReadCache, ReadRef};
use object::Endianness;

/// Index of the class byte in `e_ident`.
const EI_CLASS: usize = 4;

/// The parts of the ELF identity that decide whether the loader accepts a file as a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arch {
    /// ELFCLASS64 rather than ELFCLASS32.
    pub is_64: bool,
    /// ELFDATA2LSB rather than ELFDATA2MSB.
    pub little_endian: bool,
    /// `e_machine`.
    pub machine: u16,
}

impl Arch {
    /// The architecture this program was built for, the one whose loader runs here.
    pub fn host() -> Option<Arch> {
        let machine = match std::env::consts::ARCH {
            "x86_64" => elf::EM_X86_64,
            "x86" => elf::EM_386,
            "aarch64" => elf::EM_AARCH64,
            "arm" => elf::EM_ARM,
            "powerpc64" => elf::EM_PPC64,
            "s390x" => elf::EM_S390,
            "riscv64" => elf::EM_RISCV,
            _ => return None,
        };
        Some(Arch {
            is_64: cfg!(target_pointer_width = "64"),
            little_endian: cfg!(target_endian = "little"),
            machine,
        })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.machine, self.is_64) {
            (elf::EM_X86_64, true) => "x86_64",
            (elf::EM_X86_64, false) => "x32",
            (elf::EM_386, _) => "i386",
            (elf::EM_AARCH64, _) => "aarch64",
            (elf::EM_ARM, _) => "arm",
            (elf::EM_PPC64, _) if self.little_endian => "ppc64le",
            (elf::EM_PPC64, _) => "ppc64",
            (elf::EM_PPC, _) => "ppc",
            (elf::EM_S390, true) => "s390x",
            (elf::EM_S390, false) => "s390",
            (elf::EM_RISCV, true) => "riscv64",
            (elf::EM_RISCV, false) => "riscv32",
            (elf::EM_MIPS, _) => "mips",
            (elf::EM_LOONGARCH, _) => "loongarch",
            (m, _) => return write!(f, "{}-bit machine {m}", if self.is_64 { 64 } else { 32 }),
        };
        write!(f, "{}-bit {name}", if self.is_64 { 64 } else { 32 })
    }
}

/// What the loader uses from one ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    /// Class, byte order and machine.
    pub arch: Arch,
    /// `e_type` (ET_DYN for libraries and PIE executables, ET_EXEC for fixed-address ones).
    pub e_type: u16,
    /// `EI_OSABI`; glibc refuses anything but SYSV and GNU.
    pub osabi: u8,
    /// `PT_INTERP`: the program interpreter, for executables.
    pub interpreter: Option<String>,
    /// Whether there is a `PT_DYNAMIC` segment; a static file has no dependencies.
    pub dynamic: bool,
    /// `DT_SONAME`.
    pub soname: Option<String>,
    /// `DT_NEEDED`, in file order (the loader's order).
    pub needed: Vec<String>,
    /// `DT_RPATH` as written (glibc ignores it when `DT_RUNPATH` is present).
    pub rpath: Option<String>,
    /// `DT_RUNPATH` as written.
    pub runpath: Option<String>,
    /// `DF_1_NODEFLIB`: skip ld.so.cache entries in system directories and the defaults.
    pub nodeflib: bool,
}

impl ElfInfo {
    /// The RPATH the loader honours: none when there is a RUNPATH.
    pub fn effective_rpath(&self) -> Option<&str> {
        if self.runpath.is_some() {
            None
        } else {
            self.rpath.as_deref()
        }
    }
}

/// Why a file could not be read as ELF.
#[derive(Debug)]
pub enum ElfError {
    /// Opening or reading failed.
    Io(io::Error),
    /// No ELF magic: a text file, a linker script, an archive, …
    NotElf,
    /// ELF magic, but the structure is cut short or inconsistent.
    Malformed(String),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::Io(e) => write!(f, "{e}"),
            ElfError::NotElf => write!(f, "not an ELF file"),
            ElfError::Malformed(reason) => write!(f, "malformed ELF: {reason}"),
        }
    }
}

impl From<io::Error> for ElfError {
    fn from(e: io::Error) -> Self {
        ElfError::Io(e)
    }
}

/// Reads the loader-relevant parts of the ELF file at `path` (a host path).
pub fn read(path: &Path) -> Result<ElfInfo, ElfError> {
    let file = File::open(path)?;
    let mut ident = [0u8; 16];
    let got = read_up_to(&file, 0, &mut ident)?;
    if got < 4 || ident[..4] != elf::ELFMAG {
        return Err(ElfError::NotElf);
    }
    if got < ident.len() {
        return Err(ElfError::Malformed(format!(
            "truncated: the file is {got} bytes, shorter than an ELF header"
        )));
    }
    let data = ReadCache::new(&file);
    match ident[EI_CLASS] {
        elf::ELFCLASS64 => parse::<elf::FileHeader64<Endianness>>(&data, &file),
        elf::ELFCLASS32 => parse::<elf::FileHeader32<Endianness>>(&data, &file),
        c => Err(ElfError::Malformed(format!("unknown ELF class {c}"))),
    }
}

fn read_up_to(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn malformed(what: &str) -> ElfError {
    ElfError::Malformed(what.to_string())
}

fn parse<E: FileHeader<Endian = Endianness>>(
    data: &ReadCache<&File>,
    file: &File,
) -> Result<ElfInfo, ElfError> {
    let header = E::parse(data).map_err(|_| malformed("truncated or invalid ELF header"))?;
    let endian = header.endian().map_err(|_| malformed("invalid byte order in the ELF header"))?;
    let file_len = data.len().map_err(|_| ElfError::Io(io::Error::other("cannot tell the file's size")))?;
    // The loader never reads section headers, but a table cut off by the end of the file means
    // the file was cut (an interrupted copy or download): say so rather than trust the rest.
    let shoff: u64 = header.e_shoff(endian).into();
    let shend = u64::from(header.e_shnum(endian)) * u64::from(header.e_shentsize(endian));
    if shoff != 0 && shoff.checked_add(shend).is_none_or(|end| end > file_len) {
        return Err(ElfError::Malformed(format!(
            "truncated: the section header table ends past the end of the file ({file_len} bytes)"
        )));
    }
    let phdrs = header
        .program_headers(endian, data)
        .map_err(|_| malformed("program headers lie outside the file (truncated?)"))?;

    let mut loads: Vec<(u64, u64, u64)> = Vec::new(); // (vaddr, offset, filesz)
    let mut dynamic = None;
    let mut interpreter = None;
    for ph in phdrs {
        let (offset, filesz) = (ph.p_offset(endian).into(), ph.p_filesz(endian).into());
        match ph.p_type(endian) {
            elf::PT_LOAD => {
                // The loader maps every PT_LOAD; one past the end of the file means a cut copy.
                if offset.checked_add(filesz).is_none_or(|end| end > file_len) {
                    return Err(ElfError::Malformed(format!(
                        "truncated: a loadable segment ends past the end of the file ({file_len} bytes)"
                    )));
                }
                loads.push((ph.p_vaddr(endian).into(), offset, filesz));
            }
            elf::PT_DYNAMIC => {
                let dyns = ph
                    .dynamic(endian, data)
                    .map_err(|_| malformed("the dynamic segment lies outside the file (truncated?)"))?;
                dynamic = dyns;
            }
            elf::PT_INTERP => {
                let interp =
                    ph.interpreter(endian, data).map_err(|_| malformed("invalid PT_INTERP segment"))?;
                interpreter = interp.map(|b| String::from_utf8_lossy(b).into_owned());
            }
            _ => {}
        }
    }

    let ident = header.e_ident();
    let mut info = ElfInfo {
        arch: Arch {
            is_64: header.is_class_64(),
            little_endian: header.is_little_endian(),
            machine: header.e_machine(endian),
        },
        e_type: header.e_type(endian),
        osabi: ident.os_abi,
        interpreter,
        dynamic: dynamic.is_some(),
        soname: None,
        needed: Vec::new(),
        rpath: None,
        runpath: None,
        nodeflib: false,
    };
    let Some(dyns) = dynamic else {
        return Ok(info);
    };

    let (mut strtab, mut strsz) = (None, None);
    let mut strings: Vec<(u32, u64)> = Vec::new();
    for d in dyns {
        let tag: u64 = d.d_tag(endian).into();
        let val: u64 = d.d_val(endian).into();
        let Ok(tag) = u32::try_from(tag) else { continue };
        match tag {
            elf::DT_NULL => break,
            elf::DT_STRTAB => strtab = Some(val),
            elf::DT_STRSZ => strsz = Some(val),
            elf::DT_FLAGS_1 => info.nodeflib = val & u64::from(elf::DF_1_NODEFLIB) != 0,
            elf::DT_NEEDED | elf::DT_SONAME | elf::DT_RPATH | elf::DT_RUNPATH => strings.push((tag, val)),
            _ => {}
        }
    }
    if strings.is_empty() {
        return Ok(info);
    }
    let strtab = strtab.ok_or_else(|| malformed("dynamic strings without DT_STRTAB"))?;
    let (table_off, table_len) = map_vaddr(&loads, strtab, strsz)
        .ok_or_else(|| malformed("DT_STRTAB lies outside the loaded segments"))?;
    for (tag, off) in strings {
        let s = read_cstr(file, table_off, table_len, off)?;
        match tag {
            elf::DT_NEEDED => info.needed.push(s),
            elf::DT_SONAME => info.soname = Some(s),
            elf::DT_RPATH => info.rpath = Some(s),
            elf::DT_RUNPATH => info.runpath = Some(s),
            _ => {}
        }
    }
    Ok(info)
}

/// File offset and length of the string table at `vaddr`, through the PT_LOAD mapping.
fn map_vaddr(loads: &[(u64, u64, u64)], vaddr: u64, size: Option<u64>) -> Option<(u64, u64)> {
    loads.iter().find_map(|&(seg_vaddr, offset, filesz)| {
        let within = vaddr.checked_sub(seg_vaddr).filter(|d| *d < filesz)?;
        let room = filesz - within;
        Some((offset + within, size.map_or(room, |s| s.min(room))))
    })
}

/// The NUL-terminated string at `off` in the string table; no length cap but the table's.
fn read_cstr(file: &File, table_off: u64, table_len: u64, off: u64) -> Result<String, ElfError> {
    if off >= table_len {
        return Err(malformed("a dynamic string offset lies outside DT_STRTAB"));
    }
    let mut out = Vec::new();
    let mut pos = table_off + off;
    let end = table_off + table_len;
    let mut buf = [0u8; 256];
    while pos < end {
        let want = ((end - pos) as usize).min(buf.len());
        let got = read_up_to(file, pos, &mut buf[..want])?;
        if got == 0 {
            break;
        }
        if let Some(nul) = buf[..got].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..nul]);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&buf[..got]);
        pos += got as u64;
    }
    Err(malformed("unterminated dynamic string (truncated?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_running_test_binary() {
        // The test binary is a dynamic executable with libc in DT_NEEDED; the compiler setup says so.
        let info = read(&std::env::current_exe().unwrap()).unwrap();
        assert_eq!(Some(info.arch), Arch::host());
        assert!(info.dynamic);
        assert!(info.needed.iter().any(|n| n.starts_with("libc.so")));
    }

    #[test]
    fn short_and_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"\x7fEL").unwrap();
        assert!(matches!(read(&p), Err(ElfError::NotElf)));
        std::fs::write(&p, b"\x7fELF\x02\x01").unwrap();
        assert!(matches!(read(&p), Err(ElfError::Malformed(_))));
        std::fs::write(&p, b"INPUT(-lfoo)\n").unwrap();
        assert!(matches!(read(&p), Err(ElfError::NotElf)));
        assert!(matches!(read(&dir.path().join("missing")), Err(ElfError::Io(_))));
    }

    #[test]
    fn vaddr_mapping() {
        let loads = [(0, 0, 0x1000), (0x2000, 0x1000, 0x500)];
        assert_eq!(map_vaddr(&loads, 0x100, Some(0x10)), Some((0x100, 0x10)));
        assert_eq!(map_vaddr(&loads, 0x2010, None), Some((0x1010, 0x4f0)));
        assert_eq!(map_vaddr(&loads, 0x1800, None), None);
    }
}
