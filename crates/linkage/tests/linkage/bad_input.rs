//! Bad input: a clear report or a one-line error, never a panic.

use std::path::Path;

use launchguard_linkage::{inspect, Backend, InspectOptions, LinkageError, Target};

use crate::common::{have, inspect_with, Fixture, Search};

const EM_386: u16 = 3;
const EM_AARCH64: u16 = 183;

/// A minimal little-endian ET_DYN ELF, written byte by byte from the ELF specification: one
/// PT_LOAD over the whole file, and (unless `needed` is `None`) a PT_DYNAMIC with DT_NEEDED
/// entries, DT_STRTAB and DT_STRSZ.
pub fn elf(is_64: bool, machine: u16, needed: Option<&[&str]>) -> Vec<u8> {
    let (ehsize, phentsize, dynsize) = if is_64 { (64, 56, 16) } else { (52, 32, 8) };
    let phnum = if needed.is_some() { 2 } else { 1 };
    let strtab_off = ehsize + phentsize * phnum;
    let mut strtab = vec![0u8];
    let mut offsets = Vec::new();
    for n in needed.unwrap_or(&[]) {
        offsets.push(strtab.len());
        strtab.extend_from_slice(n.as_bytes());
        strtab.push(0);
    }
    let dyn_off = strtab_off + strtab.len();
    let mut dynamic: Vec<(u64, u64)> = offsets.iter().map(|&o| (1, o as u64)).collect();
    dynamic.extend([(5, strtab_off as u64), (10, strtab.len() as u64), (0, 0)]);
    let total = if needed.is_some() { dyn_off + dynamic.len() * dynsize } else { dyn_off };

    let mut b = Vec::new();
    let word = |b: &mut Vec<u8>, v: u64| {
        if is_64 {
            b.extend_from_slice(&v.to_le_bytes())
        } else {
            b.extend_from_slice(&(v as u32).to_le_bytes())
        }
    };
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', if is_64 { 2 } else { 1 }, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    b.extend_from_slice(&machine.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    word(&mut b, 0); // e_entry
    word(&mut b, ehsize as u64); // e_phoff
    word(&mut b, 0); // e_shoff
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [ehsize, phentsize, phnum, 0, 0, 0] {
        b.extend_from_slice(&(v as u16).to_le_bytes());
    }
    let phdr = |b: &mut Vec<u8>, p_type: u32, off: usize, size: usize| {
        if is_64 {
            b.extend_from_slice(&p_type.to_le_bytes());
            b.extend_from_slice(&4u32.to_le_bytes());
            for v in [off, off, off, size, size, 8] {
                b.extend_from_slice(&(v as u64).to_le_bytes());
            }
        } else {
            for v in [p_type as usize, off, off, off, size, size, 4, 4] {
                b.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
    };
    phdr(&mut b, 1, 0, total);
    if needed.is_some() {
        phdr(&mut b, 2, dyn_off, dynamic.len() * dynsize);
    }
    b.extend_from_slice(&strtab);
    if needed.is_some() {
        for (tag, val) in dynamic {
            word(&mut b, tag);
            word(&mut b, val);
        }
    }
    assert_eq!(b.len(), total);
    b
}

/// An ELF of the given class and machine that needs `needed`.
pub fn elf_bytes(is_64: bool, machine: u16, needed: &[&str]) -> Vec<u8> {
    elf(is_64, machine, Some(needed))
}

fn one_line(e: &LinkageError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s:?}");
    s
}

fn inspect_path(p: &Path) -> Result<launchguard_linkage::LinkageReport, LinkageError> {
    let opts = InspectOptions { root: None, ld_library_path: Some(String::new()), ..Default::default() };
    inspect(&Target::Path(p.to_path_buf()), &opts)
}

#[test]
fn not_an_elf_missing_and_not_torch() {
    let f = Fixture::new();
    let text = f.path("libtorch_cpu.so");
    std::fs::write(&text, "/* GNU ld script */\nINPUT(libtorch_cpu.so.2)\n").unwrap();
    let e = inspect_path(&text).unwrap_err();
    assert!(matches!(e, LinkageError::NotElf { .. }));
    assert!(one_line(&e).contains("libtorch_cpu.so: not an ELF file"));

    let e = inspect_path(&f.path("nope.so")).unwrap_err();
    assert!(matches!(e, LinkageError::NotFound { .. }));
    one_line(&e);

    std::fs::create_dir_all(f.path("empty")).unwrap();
    let e = inspect_path(&f.path("empty")).unwrap_err();
    assert!(matches!(e, LinkageError::NoTorchLibraries { .. }));
    one_line(&e);

    let opts = InspectOptions { root: Some(text.clone()), ld_library_path: None, ..Default::default() };
    let e = inspect(&Target::Path(text.clone()), &opts).unwrap_err();
    assert!(matches!(e, LinkageError::BadRoot { .. }));
    one_line(&e);
}

#[test]
fn truncated_elf_at_every_length_never_panics() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    let real = f.lib("libreal.so", None, &[], Search::None, false);
    let bytes = std::fs::read(&real).unwrap();
    let cut = f.path("libcut.so");
    for len in (0..bytes.len()).step_by(61).chain([3, 16, 40, 63, 64, bytes.len() / 2]) {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let result = inspect_path(&cut);
        // A cut copy is never taken for a whole library.
        let e = result.expect_err(&format!("a file cut at {len} bytes passed"));
        let msg = one_line(&e);
        if len >= 16 {
            assert!(matches!(e, LinkageError::BadElf { .. }), "{len}: {msg}");
        }
    }
    // The half file says it is truncated.
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(one_line(&inspect_path(&cut).unwrap_err()).contains("truncated"));
}

#[test]
fn corrupt_bytes_never_panic() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    let real = f.lib("libreal.so", Some("libreal.so"), &[], Search::Rpath("$ORIGIN"), false);
    let bytes = std::fs::read(&real).unwrap();
    let bad = f.path("libbad.so");
    // Flip bytes across the headers and the dynamic segment; any outcome but a panic is fine.
    for at in (0..bytes.len().min(16384)).step_by(7) {
        let mut b = bytes.clone();
        b[at] ^= 0xa5;
        std::fs::write(&bad, &b).unwrap();
        let _ = inspect_path(&bad);
    }
}

#[test]
fn thirty_two_bit_elf_is_reported_as_such() {
    let f = Fixture::new();
    // A real one when the compiler can make it, else one written from the specification.
    let p = f.path("libtorch_cpu32.so");
    let built = have_m32(&f, &p);
    if !built {
        std::fs::write(&p, elf_bytes(false, EM_386, &["libc.so.6"])).unwrap();
    }
    let r = inspect_path(&p).unwrap();
    assert!(
        r.problems.iter().any(|m| m.contains("32-bit i386") && m.contains("not for this")),
        "{:?}",
        r.problems
    );
    assert_eq!(r.profiler_backend, Backend::None);
    if !built {
        // No 32-bit libc on this machine: not found, and the 64-bit one is not taken for it.
        assert_eq!(r.dependencies[0].path, None);
    }
}

fn have_m32(f: &Fixture, out: &Path) -> bool {
    let src = f.path("m32.c");
    std::fs::write(&src, "int f(void) { return 0; }\n").unwrap();
    std::process::Command::new("cc")
        .args(["-m32", "-shared", "-fPIC", "-nostdlib", "-o"])
        .arg(out)
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn foreign_architecture_is_reported() {
    let f = Fixture::new();
    let p = f.path("libtorch_cpu.so");
    std::fs::write(&p, elf_bytes(true, EM_AARCH64, &["libc.so.6", "libcupti.so.12"])).unwrap();
    let r = inspect_path(&p).unwrap();
    assert!(r.problems.iter().any(|m| m.contains("aarch64")), "{:?}", r.problems);
    // This machine's x86_64 libc is no answer for an aarch64 library.
    let libc = r.dependencies.iter().find(|d| d.name == "libc.so.6").unwrap();
    if std::env::consts::ARCH == "x86_64" {
        assert_eq!(libc.path, None);
    }
    // The backend is still read from the names it links.
    assert_eq!(r.profiler_backend, Backend::Cupti);
    assert_eq!(r.profiler_libraries[0].path, None);
}

#[test]
fn static_and_relocatable_files() {
    let f = Fixture::new();
    let p = f.path("static");
    std::fs::write(&p, elf(true, 62, None)).unwrap();
    let r = inspect_path(&p).unwrap();
    assert!(r.dependencies.is_empty());
    assert!(r.notes.iter().any(|n| n.contains("statically linked")));
    assert_eq!(r.profiler_backend, Backend::None);

    if !have("cc") {
        return;
    }
    let src = f.path("o.c");
    std::fs::write(&src, "int f(void) { return 0; }\n").unwrap();
    let obj = f.path("o.o");
    assert!(std::process::Command::new("cc")
        .arg("-c")
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .status()
        .unwrap()
        .success());
    let e = inspect_path(&obj).unwrap_err();
    assert!(one_line(&e).contains("not a shared library or executable"));
}

#[test]
fn one_bad_library_in_a_torch_installation_is_a_problem_not_an_error() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    f.lib("torch/lib/libcupti.so.12", None, &[], Search::None, false);
    f.lib("torch/lib/libtorch_cpu.so", None, &["torch/lib/libcupti.so.12"], Search::Rpath("$ORIGIN"), false);
    std::fs::write(f.path("torch/lib/libtorch_cuda.so"), b"\x7fELF\x02\x01\x01").unwrap();
    let r = inspect_with(&f.path("torch"), None);
    assert_eq!(r.torch_dir.as_deref(), Some(f.path("torch").to_str().unwrap()));
    assert_eq!(r.inspected.len(), 1);
    assert_eq!(r.profiler_backend, Backend::Cupti);
    assert!(r.problems.iter().any(|p| p.contains("libtorch_cuda.so")), "{:?}", r.problems);
    assert!(!r.complete());
    // Every library unreadable: nothing usable, an error.
    std::fs::write(f.path("torch/lib/libtorch_cpu.so"), b"junk").unwrap();
    let opts = InspectOptions { root: None, ld_library_path: Some(String::new()), ..Default::default() };
    assert!(inspect(&Target::Path(f.path("torch")), &opts).is_err());
}
