//! `--root`: an unpacked image inspected as if it were `/`, with its own ld.so.cache.

use std::path::Path;
use std::process::Command;

use launchguard_linkage::{inspect, Backend, InspectOptions, Target};

use crate::common::{have, in_ci, Fixture, Search};

/// An image with torch in dist-packages, linking rocprofiler-sdk found only through the image's
/// ld.so.conf (no RPATH), behind an absolute symlink that exists only inside the image.
fn image(f: &Fixture) {
    std::fs::create_dir_all(f.path("img/etc")).unwrap();
    std::fs::write(f.path("img/etc/ld.so.conf"), "/opt/rocm/lib\n").unwrap();
    f.lib(
        "img/opt/rocm/lib/librocprofiler-sdk.so.1.3.2",
        Some("librocprofiler-sdk.so.1"),
        &[],
        Search::None,
        true,
    );
    f.symlink("img/opt/rocm/lib/librocprofiler-sdk.so.1", "/opt/rocm/lib/librocprofiler-sdk.so.1.3.2");
    f.lib(
        "img/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so",
        None,
        &["img/opt/rocm/lib/librocprofiler-sdk.so.1.3.2"],
        Search::None,
        true,
    );
}

/// What the image's cache says, read by glibc's own `ldconfig -p`.
fn ldconfig_lookup(root: &Path, name: &str) -> Option<String> {
    let out = Command::new("ldconfig").arg("-r").arg(root).arg("-p").output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let (left, path) = l.trim().split_once(" => ")?;
        (left.split_whitespace().next()? == name).then(|| path.trim().to_string())
    })
}

#[test]
fn image_with_its_own_cache() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    image(&f);
    let root = f.path("img");
    let ok = Command::new("ldconfig").arg("-r").arg(&root).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!in_ci(), "ldconfig -r must work under CI=true (it needs root)");
        eprintln!("note: skipping, ldconfig -r did not run (not root?)");
        return;
    }
    let expected = ldconfig_lookup(&root, "librocprofiler-sdk.so.1").expect("ldconfig lists the library");
    let opts = InspectOptions { root: Some(root.clone()), ld_library_path: None, ..Default::default() };
    let r = inspect(&Target::Python("python3".into()), &opts).unwrap();
    assert_eq!(r.root.as_deref(), Some(root.to_str().unwrap()));
    assert_eq!(r.torch_dir.as_deref(), Some("/usr/local/lib/python3.12/dist-packages/torch"));
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);
    let lib = &r.profiler_libraries[0];
    assert_eq!(lib.path.as_deref(), Some(expected.as_str()));
    // The absolute symlink was followed inside the image (this machine has no /opt/rocm file).
    assert_eq!(lib.version.as_deref(), Some("1.3.2"));
    assert!(r.complete(), "{:?} {:?}", r.problems, r.unresolved);

    // A host path into the image names the same library.
    let host_path = root.join("usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so");
    let r2 = inspect(&Target::Path(host_path), &opts).unwrap();
    assert_eq!(r2.inspected, ["/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so"]);
    assert_eq!(r2.profiler_libraries, r.profiler_libraries);
}

#[test]
fn image_without_cache_explains_the_miss() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    image(&f);
    let opts = InspectOptions { root: Some(f.path("img")), ld_library_path: None, ..Default::default() };
    let r = inspect(&Target::Python("python3".into()), &opts).unwrap();
    // Linked, so reported; not found, and why: ldconfig never indexed /opt/rocm/lib.
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);
    assert_eq!(r.unresolved.len(), 1);
    let reason = &r.unresolved[0].reason;
    assert!(
        reason.contains("/opt/rocm/lib/librocprofiler-sdk.so.1 exists in an ld.so.conf directory"),
        "{reason}"
    );
    assert!(reason.contains("run ldconfig"), "{reason}");
    assert!(r.notes.iter().any(|n| n.contains("no /etc/ld.so.cache")));

    // A preloaded profiler library is in every process of the image: named, not hidden.
    std::fs::write(f.path("img/etc/ld.so.preload"), "/opt/nvidia/libcupti.so.12\n").unwrap();
    let r = inspect(&Target::Python("python3".into()), &opts).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("/etc/ld.so.preload preloads /opt/nvidia/libcupti.so.12 — a cupti")),
        "{:?}",
        r.notes
    );
}

#[test]
fn image_without_torch() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.path("img/usr/lib")).unwrap();
    let opts = InspectOptions { root: Some(f.path("img")), ld_library_path: None, ..Default::default() };
    let e = inspect(&Target::Python("python3".into()), &opts).unwrap_err();
    assert!(e.to_string().contains("has no torch package"), "{e}");
}
