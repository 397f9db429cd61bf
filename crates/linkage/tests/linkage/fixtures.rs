//! Fake PyTorch libraries built with `cc`, linking libraries named like each profiler backend
//! through RPATH, RUNPATH and transitively; classification from what was linked, paths from ldd.

use launchguard_linkage::{Backend, LibraryKind, LinkageReport};

use crate::common::{assert_same_as_ldd, have, inspect_with, Fixture, Search};

fn backend_libs(r: &LinkageReport) -> Vec<(LibraryKind, Option<String>, Vec<String>)> {
    r.profiler_libraries.iter().map(|l| (l.kind, l.version.clone(), l.via.clone())).collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// ROCm's layout: the versioned file and its soname symlink, as the packages ship them.
fn rocprofiler_sdk(f: &Fixture, dir: &str) {
    f.lib(
        &format!("{dir}/librocprofiler-sdk.so.1.3.2"),
        Some("librocprofiler-sdk.so.1"),
        &[],
        Search::None,
        false,
    );
    f.symlink(&format!("{dir}/librocprofiler-sdk.so.1"), "librocprofiler-sdk.so.1.3.2");
}

#[test]
fn rocprofiler_sdk_direct() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    rocprofiler_sdk(&f, "opt/rocm/lib");
    let rocm = f.path("opt/rocm/lib");
    let torch = f.lib(
        "site-packages/torch/lib/libtorch_cpu.so",
        None,
        &["opt/rocm/lib/librocprofiler-sdk.so.1"],
        Search::Runpath(rocm.to_str().unwrap()),
        false,
    );
    let r = inspect_with(&torch, None);
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);
    assert_eq!(r.profiler_backends, [Backend::RocprofilerSdk]);
    assert_eq!(
        backend_libs(&r),
        [(
            LibraryKind::RocprofilerSdk,
            Some("1.3.2".to_string()),
            strings(&["libtorch_cpu.so", "librocprofiler-sdk.so.1"])
        )]
    );
    assert!(r.profiler_libraries[0].note.as_deref().unwrap().contains("includes"));
    assert!(r.complete(), "{:?}", r.problems);
    // The public JSON shape of the issue.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["schema"], "launchguard.linkage/1");
    assert_eq!(v["target"], torch.to_str().unwrap());
    assert_eq!(v["profiler_backend"], "rocprofiler-sdk");
    let lib = &v["profiler_libraries"][0];
    assert_eq!(lib["name"], "librocprofiler-sdk.so.1");
    assert_eq!(lib["path"], format!("{}/librocprofiler-sdk.so.1", rocm.display()));
    assert_eq!(lib["via"], serde_json::json!(["libtorch_cpu.so", "librocprofiler-sdk.so.1"]));
    let dep = v["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "librocprofiler-sdk.so.1")
        .unwrap();
    assert_eq!(dep["path"], lib["path"]);
    assert_eq!(dep["needed_by"], serde_json::json!([torch.to_str().unwrap()]));
    assert_same_as_ldd(&torch, None);
}

#[test]
fn rocprofiler_sdk_transitive_through_kineto() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("rocm/lib/librocprofiler-sdk.so.1.2.0", Some("librocprofiler-sdk.so.1"), &[], Search::None, false);
    f.symlink("rocm/lib/librocprofiler-sdk.so.1", "librocprofiler-sdk.so.1.2.0");
    // libkineto finds the SDK through its own RUNPATH; libtorch_cpu finds libkineto beside it.
    f.lib(
        "torch/lib/libkineto.so",
        None,
        &["rocm/lib/librocprofiler-sdk.so.1"],
        Search::Runpath("$ORIGIN/../../rocm/lib"),
        false,
    );
    let torch = f.lib(
        "torch/lib/libtorch_cpu.so",
        None,
        &["torch/lib/libkineto.so"],
        Search::Rpath("$ORIGIN"),
        false,
    );
    let r = inspect_with(&torch, None);
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);
    assert_eq!(
        backend_libs(&r),
        [(
            LibraryKind::RocprofilerSdk,
            Some("1.2.0".to_string()),
            strings(&["libtorch_cpu.so", "libkineto.so", "librocprofiler-sdk.so.1"])
        )]
    );
    assert!(r.profiler_libraries[0].note.as_deref().unwrap().contains("predates"));
    assert_same_as_ldd(&torch, None);
}

#[test]
fn roctracer_through_inherited_old_style_rpath() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("rocm/lib/libroctracer64.so.4", None, &[], Search::None, false);
    // libkineto has no search path of its own: only libtorch_cpu's RPATH, which glibc lets
    // dependencies inherit, finds libroctracer64.
    f.lib("torch/lib/libkineto.so", None, &["rocm/lib/libroctracer64.so.4"], Search::None, false);
    let torch = f.lib(
        "torch/lib/libtorch_cpu.so",
        None,
        &["torch/lib/libkineto.so"],
        Search::Rpath("$ORIGIN:$ORIGIN/../../rocm/lib"),
        false,
    );
    let r = inspect_with(&torch, None);
    assert_eq!(r.profiler_backend, Backend::Roctracer);
    assert_eq!(
        backend_libs(&r),
        [(
            LibraryKind::Roctracer,
            Some("4".to_string()),
            strings(&["libtorch_cpu.so", "libkineto.so", "libroctracer64.so.4"])
        )]
    );
    assert!(r.complete());
    assert_same_as_ldd(&torch, None);
}

#[test]
fn cupti_through_pip_style_runpath() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    // pip's nvidia-* wheels: real files named by soname, no symlinks.
    f.lib("site-packages/nvidia/cuda_cupti/lib/libcupti.so.13", None, &[], Search::None, false);
    f.lib("site-packages/nvidia/cuda_runtime/lib/libcudart.so.13", None, &[], Search::None, false);
    let torch = f.lib(
        "site-packages/torch/lib/libtorch_cpu.so",
        None,
        &[
            "site-packages/nvidia/cuda_cupti/lib/libcupti.so.13",
            "site-packages/nvidia/cuda_runtime/lib/libcudart.so.13",
        ],
        Search::Runpath("$ORIGIN/../../nvidia/cuda_cupti/lib:$ORIGIN/../../nvidia/cuda_runtime/lib"),
        false,
    );
    let r = inspect_with(&torch, None);
    assert_eq!(r.profiler_backend, Backend::Cupti);
    assert_eq!(
        backend_libs(&r),
        [(LibraryKind::Cupti, Some("13".to_string()), strings(&["libtorch_cpu.so", "libcupti.so.13"]))]
    );
    // The loader's own spelling, `..` and all.
    let expected = format!(
        "{}/site-packages/torch/lib/../../nvidia/cuda_cupti/lib/libcupti.so.13",
        f.dir.path().display()
    );
    assert_eq!(r.profiler_libraries[0].path.as_deref(), Some(expected.as_str()));
    assert_same_as_ldd(&torch, None);
}

#[test]
fn no_profiler_and_mixed() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("lib/libc10.so", None, &[], Search::None, false);
    let plain = f.lib("lib/libtorch_cpu.so", None, &["lib/libc10.so"], Search::Rpath("$ORIGIN"), false);
    let r = inspect_with(&plain, None);
    assert_eq!(r.profiler_backend, Backend::None);
    assert!(r.profiler_backends.is_empty() && r.profiler_libraries.is_empty());
    assert!(r.dependencies.iter().any(|d| d.name == "libc10.so"));
    assert_same_as_ldd(&plain, None);

    f.lib("lib/libcupti.so.12", None, &[], Search::None, false);
    f.lib("lib/libroctracer64.so.4", None, &[], Search::None, false);
    f.lib("lib/libroctx64.so.4", None, &[], Search::None, false);
    let mixed = f.lib(
        "lib/libtorch_mixed.so",
        None,
        &["lib/libcupti.so.12", "lib/libroctracer64.so.4", "lib/libroctx64.so.4"],
        Search::Runpath("$ORIGIN"),
        false,
    );
    let r = inspect_with(&mixed, None);
    assert_eq!(r.profiler_backend, Backend::Mixed);
    assert_eq!(r.profiler_backends, [Backend::Roctracer, Backend::Cupti]);
    // roctx is listed as an interception library without deciding the backend.
    let roctx = r.profiler_libraries.iter().find(|l| l.kind == LibraryKind::Roctx).unwrap();
    assert_eq!(roctx.backend, None);
    assert_same_as_ldd(&mixed, None);
}

#[test]
fn runpath_is_not_inherited() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("b/librocprofiler-sdk.so.1", None, &[], Search::None, false);
    f.lib("a/libkineto.so", None, &["b/librocprofiler-sdk.so.1"], Search::None, false);
    let torch = f.lib(
        "torch/libtorch_cpu.so",
        None,
        &["a/libkineto.so"],
        Search::Runpath("$ORIGIN/../a:$ORIGIN/../b"),
        false,
    );
    let r = inspect_with(&torch, None);
    // Linked, so the backend is still reported; the file is not found, and that is said.
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);
    assert_eq!(r.profiler_libraries[0].path, None);
    assert_eq!(r.unresolved.len(), 1);
    assert_eq!(r.unresolved[0].name, "librocprofiler-sdk.so.1");
    assert!(r.unresolved[0].needed_by[0].ends_with("/a/libkineto.so"));
    assert!(!r.complete());
    // ldd agrees that it is not found.
    assert_same_as_ldd(&torch, None);
}

#[test]
fn rpath_is_ignored_when_runpath_is_present() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("rpath/libcupti.so.12", None, &[], Search::None, false);
    f.lib("runpath/libcupti.so.12", None, &[], Search::None, false);
    // The linker writes one of the two tags; write DT_RPATH=rpath and turn the DT_SONAME entry,
    // whose string is the runpath directory, into DT_RUNPATH.
    let runpath_dir = f.path("runpath");
    let torch = f.lib(
        "libtorch_cpu.so",
        Some(runpath_dir.to_str().unwrap()),
        &["rpath/libcupti.so.12"],
        Search::Rpath(f.path("rpath").to_str().unwrap()),
        false,
    );
    retag_soname_as_runpath(&torch);
    let r = inspect_with(&torch, None);
    assert_eq!(
        r.profiler_libraries[0].path.as_deref(),
        Some(format!("{}/libcupti.so.12", runpath_dir.display()).as_str())
    );
    assert_same_as_ldd(&torch, None);
}

/// Rewrites the d_tag of the DT_SONAME entry to DT_RUNPATH, located with the `object` crate's
/// section table (independent of this crate's program-header reader).
fn retag_soname_as_runpath(path: &std::path::Path) {
    use object::{Object, ObjectSection};
    let mut bytes = std::fs::read(path).unwrap();
    let (offset, size) = {
        let file = object::File::parse(&*bytes).unwrap();
        let dynamic = file.section_by_name(".dynamic").unwrap();
        dynamic.file_range().unwrap()
    };
    let mut at = offset as usize;
    let mut patched = false;
    while at < (offset + size) as usize {
        let tag = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        if tag == u64::from(object::elf::DT_SONAME) {
            bytes[at..at + 8].copy_from_slice(&u64::from(object::elf::DT_RUNPATH).to_le_bytes());
            patched = true;
        }
        at += 16;
    }
    assert!(patched);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn ld_library_path_order() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    for d in ["r", "l"] {
        f.lib(&format!("{d}/libcupti.so.12"), None, &[], Search::None, false);
    }
    let llp = f.path("l");
    let llp = llp.to_str().unwrap();
    // RPATH comes before LD_LIBRARY_PATH; RUNPATH after it.
    let with_rpath =
        f.lib("x/librpath.so", None, &["r/libcupti.so.12"], Search::Rpath("$ORIGIN/../r"), false);
    let with_runpath =
        f.lib("x/librunpath.so", None, &["r/libcupti.so.12"], Search::Runpath("$ORIGIN/../r"), false);
    let r = inspect_with(&with_rpath, Some(llp));
    assert!(r.profiler_libraries[0].path.as_deref().unwrap().contains("/x/../r/"));
    let r = inspect_with(&with_runpath, Some(llp));
    assert!(r.profiler_libraries[0].path.as_deref().unwrap().starts_with(llp));
    assert_same_as_ldd(&with_rpath, Some(llp));
    assert_same_as_ldd(&with_runpath, Some(llp));
    // Empty elements, `;` separators and trailing slashes.
    assert_same_as_ldd(&with_runpath, Some(&format!(":{llp}//;/nonexistent")));
}

#[test]
fn lib_and_platform_tokens() {
    if !have("cc") || !have("ldd") {
        return;
    }
    // Several plausible expansions exist on disk; ldd tells which one this system's glibc uses.
    let f = Fixture::new();
    for d in ["lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "x86_64", "aarch64"] {
        f.lib(&format!("t/{d}/libcupti.so.12"), None, &[], Search::None, false);
    }
    let lib = f.lib("t/liblib.so", None, &["t/lib/libcupti.so.12"], Search::Rpath("$ORIGIN/$LIB"), false);
    let platform = f.lib(
        "t/libplatform.so",
        None,
        &["t/lib/libcupti.so.12"],
        Search::Runpath("${ORIGIN}/${PLATFORM}"),
        false,
    );
    assert_same_as_ldd(&lib, None);
    assert_same_as_ldd(&platform, None);
}

#[test]
fn cycles_are_noted_and_harmless() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("libb.so", None, &[], Search::None, false);
    f.lib("liba.so", None, &["libb.so"], Search::Runpath("$ORIGIN"), false);
    // Rebuild libb needing liba: a two-object cycle.
    f.lib("libb.so", None, &["liba.so"], Search::Runpath("$ORIGIN"), false);
    let top = f.lib("libtorch_cpu.so", None, &["liba.so"], Search::Runpath("$ORIGIN"), false);
    let r = inspect_with(&top, None);
    assert!(r.notes.iter().any(|n| n.contains("dependency cycle") && n.contains("liba.so")));
    assert!(r.complete());
    assert_same_as_ldd(&top, None);
}

#[test]
fn wrong_class_candidates_are_skipped() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    // A 32-bit libcupti first in the RPATH: glibc passes over it to the 64-bit one.
    let first = f.path("first");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::write(first.join("libcupti.so.12"), crate::bad_input::elf_bytes(false, 3, &[])).unwrap();
    f.lib("second/libcupti.so.12", None, &[], Search::None, false);
    let top = f.lib(
        "libtorch_cpu.so",
        None,
        &["second/libcupti.so.12"],
        Search::Rpath("$ORIGIN/first:$ORIGIN/second"),
        false,
    );
    let r = inspect_with(&top, None);
    assert!(r.profiler_libraries[0].path.as_deref().unwrap().ends_with("/second/libcupti.so.12"));
    assert_same_as_ldd(&top, None);
}

#[test]
fn a_non_elf_candidate_stops_the_search() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    let first = f.path("first");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::write(first.join("libcupti.so.12"), "INPUT(-lcupti)\n").unwrap();
    f.lib("second/libcupti.so.12", None, &[], Search::None, false);
    let top = f.lib(
        "libtorch_cpu.so",
        None,
        &["second/libcupti.so.12"],
        Search::Rpath("$ORIGIN/first:$ORIGIN/second"),
        false,
    );
    let r = inspect_with(&top, None);
    // The loader refuses with "invalid ELF header" rather than going on to `second`.
    assert_eq!(r.unresolved.len(), 1);
    assert!(r.unresolved[0].reason.contains("not an ELF file"));
    assert!(r.problems.iter().any(|p| p.contains("/first/libcupti.so.12")));
    assert_eq!(r.profiler_backend, Backend::Cupti);
}
