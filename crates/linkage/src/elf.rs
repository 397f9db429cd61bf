//! Reads what the dynamic loader reads from an ELF file — the header, the program headers, the
//! dynamic segment and its strings — and nothing else.
//!
//! The dynamic segment is found through `PT_DYNAMIC` and its string table through `DT_STRTAB`
//! mapped by the `PT_LOAD` segments, as ld.so does, so stripped files (no section headers) read
//! the same. Only a few KB are read, through `Read + Seek`: libtorch_cpu.so is hundreds of MB.
//! Each piece read is capped (program headers, dynamic segment, strings), so a crafted file
//! costs no more than a real one.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::input::InputError;

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
    /// Not a regular file: what it is ("a FIFO", "a device", "a socket", …). Never opened.
    NotRegular(&'static str),
    /// No ELF magic: a text file, a linker script, an archive, …
    NotElf,
    /// ELF magic, but the structure is cut short or inconsistent, or larger than any real
    /// library's (the reason says which).
    Malformed(String),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::Io(e) => write!(f, "{e}"),
            ElfError::NotRegular(what) => write!(f, "is {what}, not a regular file"),
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

impl From<InputError> for ElfError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Io(e) => ElfError::Io(e),
            InputError::NotRegular(what) => ElfError::NotRegular(what),
            // open_regular has no size cap: what is read is capped piece by piece below.
            InputError::TooLarge { .. } => ElfError::Malformed(e.to_string()),
        }
    }
}

// What one file may make us read. The loader has none of these caps, but nothing real comes
// near them, and without them a few crafted headers make one small file cost gigabytes.
/// The program header table: the kernel refuses executables with more than 64 KiB of it.
const MAX_PHDRS_BYTES: u64 = 64 << 10;
/// The dynamic segment: real ones are a few hundred entries at most (64 Ki entries here).
const MAX_DYNAMIC_BYTES: u64 = 1 << 20;
/// All DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH strings together (real: a few KB; long
/// Spack or Nix RPATHs: tens of KB).
const MAX_STRINGS_BYTES: u64 = 256 << 10;
/// PT_INTERP: the kernel refuses one longer than PATH_MAX.
const MAX_INTERP_BYTES: u64 = 4096;

/// Reads the loader-relevant parts of the ELF file at `path` (a host path). A file of another
/// architecture than `want` is only read as far as its header (the loader passes over it
/// there), so its other fields are empty.
pub fn read(path: &Path, want: Option<Arch>) -> Result<ElfInfo, ElfError> {
    let (file, _) = crate::input::open_regular(path)?;
    let mut ident = [0u8; 16];
    let got = read_up_to(&file, 0, &mut ident)?;
    check_ident(&ident[..got])?;
    let data = ReadCache::new(file);
    parse_any(&data, ident[EI_CLASS], want)
}

/// [`read`] on bytes in memory (for the fuzz target), through the same cached reader as a
/// file: a plain slice would add alignment checks that the file reader does not have.
pub fn read_bytes(bytes: &[u8], want: Option<Arch>) -> Result<ElfInfo, ElfError> {
    check_ident(&bytes[..bytes.len().min(16)])?;
    let data = ReadCache::new(io::Cursor::new(bytes));
    parse_any(&data, bytes[EI_CLASS], want)
}

fn check_ident(ident: &[u8]) -> Result<(), ElfError> {
    if ident.len() < 4 || ident[..4] != elf::ELFMAG {
        return Err(ElfError::NotElf);
    }
    if ident.len() < 16 {
        return Err(ElfError::Malformed(format!(
            "truncated: the file is {} bytes, shorter than an ELF header",
            ident.len()
        )));
    }
    Ok(())
}

fn parse_any<'d, R: ReadRef<'d>>(data: R, class: u8, want: Option<Arch>) -> Result<ElfInfo, ElfError> {
    match class {
        elf::ELFCLASS64 => parse::<elf::FileHeader64<Endianness>, R>(data, want),
        elf::ELFCLASS32 => parse::<elf::FileHeader32<Endianness>, R>(data, want),
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

fn too_large(what: &str, size: u64, cap: u64) -> ElfError {
    ElfError::Malformed(format!(
        "{what} is {size} bytes, over the reader's cap of {} (no real library comes near it)",
        crate::input::human_bytes(cap)
    ))
}

fn parse<'d, E: FileHeader<Endian = Endianness>, R: ReadRef<'d>>(
    data: R,
    want: Option<Arch>,
) -> Result<ElfInfo, ElfError> {
    let header = E::parse(data).map_err(|_| malformed("truncated or invalid ELF header"))?;
    let endian = header.endian().map_err(|_| malformed("invalid byte order in the ELF header"))?;
    let ident = header.e_ident();
    let mut info = ElfInfo {
        arch: Arch {
            is_64: header.is_class_64(),
            little_endian: header.is_little_endian(),
            machine: header.e_machine(endian),
        },
        e_type: header.e_type(endian),
        osabi: ident.os_abi,
        interpreter: None,
        dynamic: false,
        soname: None,
        needed: Vec::new(),
        rpath: None,
        runpath: None,
        nodeflib: false,
    };
    // The loader checks class and machine from the header alone and passes over a foreign file
    // there; so does this, without reading (or judging) the rest.
    if want.is_some_and(|w| w != info.arch) {
        return Ok(info);
    }
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
    // PN_XNUM moves the count into section 0 (up to 2³² entries); glibc's loader does not read
    // it there, and no shared library needs 65535 program headers.
    let phnum = header.e_phnum(endian);
    if phnum == elf::PN_XNUM {
        return Err(malformed(
            "e_phnum is PN_XNUM (an extended program header count the loader does not read)",
        ));
    }
    let phdrs_bytes = u64::from(phnum) * u64::from(header.e_phentsize(endian));
    if phdrs_bytes > MAX_PHDRS_BYTES {
        return Err(too_large("the program header table", phdrs_bytes, MAX_PHDRS_BYTES));
    }
    let phdrs = header
        .program_headers(endian, data)
        .map_err(|_| malformed("program headers lie outside the file (truncated?)"))?;

    let mut loads: Vec<(u64, u64, u64)> = Vec::new(); // (vaddr, offset, filesz)
                                                      // The last of each, as the loader's loop keeps overwriting; read once, after the loop, so
                                                      // that thousands of repeated headers cost nothing.
    let mut dynamic_ph = None;
    let mut interp_ph = None;
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
            elf::PT_DYNAMIC => dynamic_ph = Some(ph),
            elf::PT_INTERP => interp_ph = Some(ph),
            _ => {}
        }
    }
    if let Some(ph) = interp_ph {
        let size: u64 = ph.p_filesz(endian).into();
        if size > MAX_INTERP_BYTES {
            return Err(too_large("PT_INTERP", size, MAX_INTERP_BYTES));
        }
        let interp = ph.interpreter(endian, data).map_err(|_| malformed("invalid PT_INTERP segment"))?;
        info.interpreter = interp.map(|b| String::from_utf8_lossy(b).into_owned());
    }
    let dynamic = match dynamic_ph {
        Some(ph) => {
            let size: u64 = ph.p_filesz(endian).into();
            if size > MAX_DYNAMIC_BYTES {
                return Err(too_large("the dynamic segment", size, MAX_DYNAMIC_BYTES));
            }
            ph.dynamic(endian, data)
                .map_err(|_| malformed("the dynamic segment lies outside the file (truncated?)"))?
        }
        None => None,
    };
    info.dynamic = dynamic.is_some();
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
    let mut budget = MAX_STRINGS_BYTES;
    for (tag, off) in strings {
        let s = read_cstr(data, table_off, table_len, off, &mut budget)?;
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

/// The NUL-terminated string at `off` in the string table, paid from `budget` (bytes this file
/// may still read for strings). Every byte read is paid, not only the string's: the reader
/// keeps what it read until the file is done, and a hundred thousand DT_NEEDED entries naming
/// one long string would otherwise multiply it. Chunks start small and double, so short
/// names cost little.
fn read_cstr<'d, R: ReadRef<'d>>(
    data: R,
    table_off: u64,
    table_len: u64,
    off: u64,
    budget: &mut u64,
) -> Result<String, ElfError> {
    if off >= table_len {
        return Err(malformed("a dynamic string offset lies outside DT_STRTAB"));
    }
    let mut out = Vec::new();
    let mut pos = table_off + off;
    let end = table_off + table_len;
    let mut chunk_len = 64;
    while pos < end {
        let want = (end - pos).min(chunk_len);
        if want > *budget {
            return Err(ElfError::Malformed(format!(
                "the dynamic strings (DT_NEEDED, DT_RPATH, …) take more than {}, the reader's cap (no real library comes near it)",
                crate::input::human_bytes(MAX_STRINGS_BYTES)
            )));
        }
        *budget -= want;
        let chunk = data
            .read_bytes_at(pos, want)
            .map_err(|_| malformed("unterminated dynamic string (truncated?)"))?;
        if let Some(nul) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(chunk);
        pos += want;
        chunk_len = chunk_len.saturating_mul(2);
    }
    Err(malformed("unterminated dynamic string (truncated?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_running_test_binary() {
        // The test binary is a dynamic executable with libc in DT_NEEDED; the compiler setup says so.
        let info = read(&std::env::current_exe().unwrap(), None).unwrap();
        assert_eq!(Some(info.arch), Arch::host());
        assert!(info.dynamic);
        assert!(info.needed.iter().any(|n| n.starts_with("libc.so")));
    }

    #[test]
    fn short_and_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"\x7fEL").unwrap();
        assert!(matches!(read(&p, None), Err(ElfError::NotElf)));
        std::fs::write(&p, b"\x7fELF\x02\x01").unwrap();
        assert!(matches!(read(&p, None), Err(ElfError::Malformed(_))));
        std::fs::write(&p, b"INPUT(-lfoo)\n").unwrap();
        assert!(matches!(read(&p, None), Err(ElfError::NotElf)));
        assert!(matches!(read(&dir.path().join("missing"), None), Err(ElfError::Io(_))));
        assert!(matches!(read(Path::new("/dev/zero"), None), Err(ElfError::NotRegular("a device"))));
        assert!(matches!(read(dir.path(), None), Err(ElfError::NotRegular("a directory"))));
    }

    #[test]
    fn vaddr_mapping() {
        let loads = [(0, 0, 0x1000), (0x2000, 0x1000, 0x500)];
        assert_eq!(map_vaddr(&loads, 0x100, Some(0x10)), Some((0x100, 0x10)));
        assert_eq!(map_vaddr(&loads, 0x2010, None), Some((0x1010, 0x4f0)));
        assert_eq!(map_vaddr(&loads, 0x1800, None), None);
    }
}

/// The most bytes of `PT_NOTE` segments read for a build id: real libraries carry a few notes of
/// tens of bytes.
const MAX_NOTES_BYTES: u64 = 64 << 10;

/// The GNU build id (`NT_GNU_BUILD_ID`, in a `PT_NOTE` segment) of the ELF file at `path`, in
/// lower-case hex as `readelf -n` prints it; `None` when the file cannot be read as ELF or carries
/// none. Names the exact build of a library whose path stayed the same.
pub fn build_id(path: &Path) -> Option<String> {
    let (file, _) = crate::input::open_regular(path).ok()?;
    let mut ident = [0u8; 16];
    let got = read_up_to(&file, 0, &mut ident).ok()?;
    check_ident(&ident[..got]).ok()?;
    let data = ReadCache::new(file);
    match ident[EI_CLASS] {
        elf::ELFCLASS64 => note_build_id::<elf::FileHeader64<Endianness>, _>(&data),
        elf::ELFCLASS32 => note_build_id::<elf::FileHeader32<Endianness>, _>(&data),
        _ => None,
    }
}

fn note_build_id<'d, E: FileHeader<Endian = Endianness>, R: ReadRef<'d>>(data: R) -> Option<String> {
    let header = E::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let phdrs_bytes = u64::from(header.e_phnum(endian)) * u64::from(header.e_phentsize(endian));
    if phdrs_bytes > MAX_PHDRS_BYTES {
        return None;
    }
    for ph in header.program_headers(endian, data).ok()? {
        if ph.p_type(endian) != elf::PT_NOTE || ph.p_filesz(endian).into() > MAX_NOTES_BYTES {
            continue;
        }
        let Ok(Some(mut notes)) = ph.notes(endian, data) else { continue };
        while let Ok(Some(note)) = notes.next() {
            if note.n_type(endian) == elf::NT_GNU_BUILD_ID && note.name() == elf::ELF_NOTE_GNU {
                return Some(note.desc().iter().map(|b| format!("{b:02x}")).collect());
            }
        }
    }
    None
}

#[cfg(test)]
mod build_id_tests {
    use super::*;

    #[test]
    fn a_system_library_gives_what_readelf_prints() {
        let lib = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
        let Ok(out) = std::process::Command::new("readelf").arg("-n").arg(lib).output() else {
            eprintln!("readelf not found: skipped");
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(expected) = text.lines().find_map(|l| l.trim().strip_prefix("Build ID: ")) else {
            eprintln!("{}: no build id per readelf: skipped", lib.display());
            return;
        };
        assert_eq!(build_id(lib).as_deref(), Some(expected.trim()));
    }

    #[test]
    fn not_elf_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.so");
        std::fs::write(&p, b"INPUT(libfoo.so)").unwrap();
        assert_eq!(build_id(&p), None);
        assert_eq!(build_id(dir.path()), None);
    }
}
