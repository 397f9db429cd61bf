//! Bad input: a clear report or a one-line error, never a panic.

use std::path::Path;

use launchguard_linkage::{inspect, Backend, InspectOptions, LinkageError, Target};

use crate::common::{have, inspect_with, Fixture, Search};

const EM_386: u16 = 3;
const EM_AARCH64: u16 = 183;

/// An ELF library of the given class and machine that needs `needed`, or with `needed` `None`
/// one without PT_DYNAMIC (as a static executable), from the fuzz targets' ELF writer.
pub fn elf(is_64: bool, machine: u16, needed: Option<&[&str]>) -> Vec<u8> {
    let mut spec = format!("machine {machine}\n");
    if !is_64 {
        spec.push_str("class32\n");
    }
    match needed {
        Some(names) => names.iter().for_each(|n| spec.push_str(&format!("needed {n}\n"))),
        None => spec.push_str("static\n"),
    }
    launchguard_linkage::fuzzing::elf_from_spec(&spec)
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
