//! Hwcap subdirectories, `$PLATFORM` and the glibc version: what the loader derives from its
//! glibc and the CPU.
//!
//! On this machine the expectations come from its own loader, which knows its CPU: `ldd`, the
//! search path `LD_DEBUG=libs` prints, `ld.so --list-diagnostics` (glibc ≥ 2.33), and the real
//! ld.so run in a `chroot` of an image. For another CPU or glibc (an Intel Xeon with AVX-512
//! under 2.36 and 2.37, whatever this machine is), the expectations are worked out by hand from
//! glibc's sources, cited beside each.

use std::path::{Path, PathBuf};
use std::process::Command;

use launchguard_linkage::{inspect, CpuChoice, CpuLevel, CpuVendor, LinkageReport, Options, Target};

use crate::common::{assert_same_as_ldd, have, in_ci, inspect_with, Fixture, Search};

/// This machine's dynamic loader, where the tests know its path.
const RTLD: &str = "/lib64/ld-linux-x86-64.so.2";

fn x86_64_host() -> bool {
    let ok = std::env::consts::ARCH == "x86_64" && Path::new(RTLD).exists();
    if !ok {
        eprintln!("note: skipping, the expectations here are for an x86-64 glibc host");
    }
    ok
}

/// `key=value` lines of `ld.so --list-diagnostics`, or `None` before glibc 2.33.
fn diagnostics() -> Option<Vec<(String, String)>> {
    let out = Command::new(RTLD).arg("--list-diagnostics").output().ok()?;
    if !out.status.success() {
        eprintln!("note: skipping, this ld.so has no --list-diagnostics (glibc before 2.33)");
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
            .collect(),
    )
}

fn lookup<'a>(d: &'a [(String, String)], key: &str) -> &'a str {
    d.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {key}"))
}

/// The glibc version, `$PLATFORM`, `$LIB` and the glibc-hwcaps subdirectories assumed for this
/// machine are the ones its loader reports about itself.
#[test]
fn the_assumption_is_what_this_machines_loader_reports() {
    if !have("cc") || !x86_64_host() {
        return;
    }
    let Some(d) = diagnostics() else { return };
    let f = Fixture::new();
    let lib = f.lib("libx.so", None, &[], Search::None, false);
    let r = inspect_with(&lib, None);
    let loader = r.loader.as_ref().expect("the report says what it assumed");
    assert_eq!(loader.glibc.as_deref(), Some(lookup(&d, "version.version")));
    assert!(loader.glibc_source.contains("ld-linux-x86-64.so.2"), "{}", loader.glibc_source);
    assert_eq!(loader.platform.as_deref(), Some(lookup(&d, "dl_platform")));
    assert_eq!(loader.lib, lookup(&d, "dl_dst_lib"));
    // dl_hwcaps_subdirs lists every level, dl_hwcaps_subdirs_active says which are searched
    // (bit i for the i-th).
    let active =
        u32::from_str_radix(lookup(&d, "dl_hwcaps_subdirs_active").trim_start_matches("0x"), 16).unwrap();
    let expected: Vec<String> = lookup(&d, "dl_hwcaps_subdirs")
        .split(':')
        .enumerate()
        .filter(|(i, _)| active >> i & 1 == 1)
        .map(|(_, s)| format!("glibc-hwcaps/{s}/"))
        .collect();
    let ours: Vec<String> =
        loader.subdirectories.iter().filter(|s| s.starts_with("glibc-hwcaps/")).cloned().collect();
    assert_eq!(ours, expected);
    assert!(loader.cpu_level.as_deref().is_some_and(|l| l.starts_with("x86-64")));
    assert!(loader.cpu_source.contains("this machine"), "{}", loader.cpu_source);
}

/// The subdirectories tried in each directory are the ones this machine's loader tries: the
/// search path `LD_DEBUG=libs` prints for a RUNPATH directory, each with the directory before it.
#[test]
fn the_subdirectories_are_the_ones_ld_debug_prints() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    f.lib("elsewhere/libmissing.so.1", None, &[], Search::None, false);
    let top = f.lib("libtop.so", None, &["elsewhere/libmissing.so.1"], Search::Runpath("$ORIGIN/d"), false);
    let out =
        Command::new("ldd").arg(&top).env("LD_DEBUG", "libs").env_remove("LD_LIBRARY_PATH").output().unwrap();
    // Under ldd (tracing) the loader writes its debug lines to standard output.
    let debug = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    let line = debug
        .lines()
        .find(|l| l.contains("search path=") && l.contains("RUNPATH from file"))
        .unwrap_or_else(|| panic!("no RUNPATH search in:\n{debug}"));
    let dir = format!("{}/d", f.dir.path().display());
    let listed = line.split("search path=").nth(1).unwrap().split('\t').next().unwrap().trim();
    let theirs: Vec<String> = listed
        .split(':')
        .map(|p| {
            let sub = p.strip_prefix(&dir).unwrap_or_else(|| panic!("{p} is not under {dir}"));
            match sub.strip_prefix('/') {
                Some(s) => format!("{s}/"),
                None => String::new(),
            }
        })
        .collect();
    let r = inspect_with(&top, None);
    assert_eq!(r.loader.unwrap().subdirectories, theirs);
}

/// Copies of one library in hwcap subdirectories of a RUNPATH, an RPATH and LD_LIBRARY_PATH:
/// which copy this machine's loader takes depends on its glibc and CPU; ours is the same.
#[test]
fn libraries_in_hwcap_subdirectories_resolve_as_ldd_says() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    // Each name is in a different set of subdirectories, the plain directory always last.
    let placements: [(&str, &[&str]); 6] = [
        ("libone.so.1", &["glibc-hwcaps/x86-64-v2", "glibc-hwcaps/x86-64-v4", "tls", "x86_64"]),
        ("libtwo.so.1", &["tls/x86_64", "x86_64/x86_64", "haswell"]),
        ("libthree.so.1", &["haswell/x86_64", "haswell/avx512_1/x86_64", "avx512_1"]),
        ("libfour.so.1", &["tls/haswell/avx512_1/x86_64", "xeon_phi", "atomics", "aarch64"]),
        ("libfive.so.1", &["glibc-hwcaps/x86-64-v3", "tls/haswell"]),
        ("libsix.so.1", &[]),
    ];
    let mut needs = Vec::new();
    for base in ["run", "rp", "llp"] {
        for (name, subs) in placements {
            let renamed = format!("{base}{name}");
            for sub in subs.iter().chain([&""]) {
                let rel = format!("{base}/{sub}/{renamed}").replace("//", "/");
                f.lib(&rel, Some(&renamed), &[], Search::None, false);
            }
            needs.push(format!("{base}/{renamed}"));
        }
    }
    let needs: Vec<&str> = needs.iter().map(String::as_str).collect();
    let (run, rp): (Vec<&str>, Vec<&str>) =
        needs.iter().filter(|n| !n.starts_with("llp")).partition(|n| n.starts_with("run"));
    let llp: Vec<&str> = needs.iter().copied().filter(|n| n.starts_with("llp")).collect();
    let with_runpath = f.lib("a/librunpath.so", None, &run, Search::Runpath("$ORIGIN/../run"), false);
    let with_rpath =
        f.lib("b/librpath.so", None, &[&rp[..], &llp[..]].concat(), Search::Rpath("$ORIGIN/../rp"), false);
    let llp_dir = f.path("llp");
    let llp_dir = llp_dir.to_str().unwrap();
    for (lib, count) in [(&with_runpath, run.len()), (&with_rpath, rp.len() + llp.len())] {
        // Every needed name, libc and the loader.
        assert!(assert_same_as_ldd(lib, Some(llp_dir)) >= count + 2);
    }
}

/// The issue's case: `${ORIGIN}/${PLATFORM}` with a directory for each platform glibc may set
/// on x86-64 (`haswell` on Intel CPUs with AVX2, `xeon_phi`, the kernel's `x86_64`) and hwcap
/// subdirectories under each.
#[test]
fn platform_directories_resolve_as_ldd_says() {
    if !have("cc") || !have("ldd") {
        return;
    }
    let f = Fixture::new();
    for d in [
        "x86_64",
        "haswell",
        "xeon_phi",
        "haswell/tls",
        "x86_64/tls/x86_64",
        "haswell/glibc-hwcaps/x86-64-v3",
    ] {
        f.lib(&format!("t/{d}/libcupti.so.12"), None, &[], Search::None, false);
    }
    let lib = f.lib(
        "t/libplatform.so",
        None,
        &["t/x86_64/libcupti.so.12"],
        Search::Runpath("${ORIGIN}/${PLATFORM}"),
        false,
    );
    assert_same_as_ldd(&lib, None);
}

/// A stand-in dynamic loader for an image: an x86-64 shared object carrying glibc's version
/// string, as ld.so does since 2.33.
fn fake_loader(f: &Fixture, root: &str, version: &str) {
    let out = f.path(&format!("{root}/lib64/ld-linux-x86-64.so.2"));
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let src = f.path(&format!("{root}-ld.c"));
    std::fs::write(
        &src,
        format!("__attribute__((used)) const char v[] = \"ld.so (GNU libc) stable release version {version}.\\n\";\n"),
    )
    .unwrap();
    let ok = Command::new("cc")
        .args(["-shared", "-fPIC", "-nostdlib", "-Wl,-soname,ld-linux-x86-64.so.2", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success());
}

/// An image whose torch library finds `libcupti.so.12` through `$ORIGIN/../rt` (a copy in
/// several hwcap subdirectories) and `libnvperf.so` through `$ORIGIN/../p/$PLATFORM`.
fn image(f: &Fixture, root: &str, version: &str) -> PathBuf {
    fake_loader(f, root, version);
    for d in ["rt", "rt/tls/haswell/avx512_1", "rt/haswell", "rt/tls/x86_64", "rt/x86_64"] {
        f.lib(&format!("{root}/{d}/libcupti.so.12"), None, &[], Search::None, true);
    }
    for d in ["p/haswell", "p/x86_64"] {
        f.lib(&format!("{root}/{d}/libnvperf.so"), None, &[], Search::None, true);
    }
    f.lib(
        &format!("{root}/torch/lib/libtorch_cpu.so"),
        None,
        &[&format!("{root}/rt/libcupti.so.12"), &format!("{root}/p/haswell/libnvperf.so")],
        Search::Runpath("$ORIGIN/../../rt:$ORIGIN/../../p/$PLATFORM"),
        true,
    );
    f.path(root)
}

fn inspect_image(root: &Path, cpu: CpuChoice) -> LinkageReport {
    let opts = Options { root: Some(root.to_path_buf()), ld_library_path: None, cpu, ..Default::default() };
    inspect(&Target::Path(PathBuf::from("/torch/lib/libtorch_cpu.so")), &opts).unwrap()
}

fn path_of<'a>(r: &'a LinkageReport, name: &str) -> &'a str {
    r.dependencies.iter().find(|d| d.name == name).and_then(|d| d.path.as_deref()).unwrap_or("not found")
}

fn xeon() -> CpuChoice {
    CpuChoice { level: Some(CpuLevel::X86(4)), vendor: Some(CpuVendor::Intel), platform: None }
}

/// A Xeon with AVX-512 under glibc 2.36 (Debian 12), whatever this machine is. By hand, from
/// sysdeps/x86/cpu-features.c and elf/dl-hwcaps.c of 2.36: `$PLATFORM` is `haswell`; dl_hwcap
/// has x86_64 and avx512_1; the legacy subdirectories begin `tls/haswell/avx512_1/x86_64`,
/// `tls/haswell/avx512_1`, so `rt/tls/haswell/avx512_1` is the first copy that exists.
#[test]
fn an_intel_xeon_under_glibc_2_36() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    let root = image(&f, "img", "2.36");
    let r = inspect_image(&root, xeon());
    assert_eq!(path_of(&r, "libcupti.so.12"), "/torch/lib/../../rt/tls/haswell/avx512_1/libcupti.so.12");
    assert_eq!(path_of(&r, "libnvperf.so"), "/torch/lib/../../p/haswell/libnvperf.so");
    let loader = r.loader.as_ref().unwrap();
    assert_eq!(loader.glibc.as_deref(), Some("2.36"));
    assert_eq!(loader.glibc_source, "the version string in /lib64/ld-linux-x86-64.so.2");
    assert_eq!(loader.cpu_level.as_deref(), Some("x86-64-v4"));
    assert_eq!(loader.cpu_vendor, Some(CpuVendor::Intel));
    assert_eq!(loader.cpu_source, "--cpu-level, --cpu-vendor");
    assert_eq!(loader.platform.as_deref(), Some("haswell"));
    assert_eq!(loader.subdirectories.len(), 3 + 16);
    // The same image on an AMD CPU of the same level: no haswell, no avx512_1 (both are
    // Intel-only in cpu-features.c); `tls/x86_64` comes first.
    let amd = CpuChoice { vendor: Some(CpuVendor::Amd), ..xeon() };
    let r = inspect_image(&root, amd);
    assert_eq!(path_of(&r, "libcupti.so.12"), "/torch/lib/../../rt/tls/x86_64/libcupti.so.12");
    assert_eq!(path_of(&r, "libnvperf.so"), "/torch/lib/../../p/x86_64/libnvperf.so");

    // The JSON says the same, under the public schema.
    let v = serde_json::to_value(inspect_image(&root, xeon())).unwrap();
    assert_eq!(v["schema"], "launchguard.linkage/1");
    assert_eq!(v["loader"]["glibc"], "2.36");
    assert_eq!(v["loader"]["cpu_level"], "x86-64-v4");
    assert_eq!(v["loader"]["cpu_vendor"], "intel");
    assert_eq!(v["loader"]["platform"], "haswell");
    assert_eq!(v["loader"]["subdirectories"][3], "tls/haswell/avx512_1/x86_64/");
    // The lines the text report prints under `loader`.
    let lines = inspect_image(&root, xeon()).loader.expect("an assumption stated").describe();
    let text = lines.join("\n");
    assert!(text.contains("glibc 2.36 (the version string in /lib64/ld-linux-x86-64.so.2)"), "{text}");
    assert!(text.contains("$PLATFORM haswell (glibc 2.36 sets it on an Intel CPU"), "{text}");
}

/// The same Xeon under glibc 2.37 and later (Ubuntu 24.04 has 2.39): no legacy subdirectory is
/// searched (elf/dl-hwcaps.c of 2.37), but cpu-features.c still sets `haswell`, so
/// `$PLATFORM` is `haswell` while the plain `rt` copy is the one found.
#[test]
fn an_intel_xeon_under_glibc_2_39() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    let root = image(&f, "img", "2.39");
    let r = inspect_image(&root, xeon());
    assert_eq!(path_of(&r, "libcupti.so.12"), "/torch/lib/../../rt/libcupti.so.12");
    assert_eq!(path_of(&r, "libnvperf.so"), "/torch/lib/../../p/haswell/libnvperf.so");
    assert_eq!(
        r.loader.unwrap().subdirectories,
        ["glibc-hwcaps/x86-64-v4/", "glibc-hwcaps/x86-64-v3/", "glibc-hwcaps/x86-64-v2/", ""]
    );
    // A glibc-hwcaps copy for v3 is taken by a v3 or v4 CPU, not by a v2 one.
    f.lib("img/rt/glibc-hwcaps/x86-64-v3/libcupti.so.12", None, &[], Search::None, true);
    let r = inspect_image(&root, xeon());
    assert_eq!(path_of(&r, "libcupti.so.12"), "/torch/lib/../../rt/glibc-hwcaps/x86-64-v3/libcupti.so.12");
    let v2 = CpuChoice { level: Some(CpuLevel::X86(2)), ..xeon() };
    let r = inspect_image(&root, v2);
    assert_eq!(path_of(&r, "libcupti.so.12"), "/torch/lib/../../rt/libcupti.so.12");
    // An Intel CPU without AVX2 keeps the kernel's platform.
    assert_eq!(path_of(&r, "libnvperf.so"), "/torch/lib/../../p/x86_64/libnvperf.so");
    // --platform overrides what glibc would set.
    let r = inspect_image(&root, CpuChoice { platform: Some("x86_64".into()), ..xeon() });
    assert_eq!(path_of(&r, "libnvperf.so"), "/torch/lib/../../p/x86_64/libnvperf.so");
    assert_eq!(r.loader.unwrap().platform_source, "--platform");
}

/// A level of another architecture is said, not silently dropped; an image without a
/// readable loader or libc says the version is unknown.
#[test]
fn unusable_choices_and_unknown_versions_are_said() {
    if !have("cc") {
        return;
    }
    let f = Fixture::new();
    let root = image(&f, "img", "2.36");
    let r = inspect_image(&root, CpuChoice { level: Some(CpuLevel::Power(9)), ..Default::default() });
    assert!(
        r.problems.iter().any(|p| p.contains("--cpu-level power9 is not a level of 64-bit x86_64")),
        "{:?}",
        r.problems
    );
    std::fs::remove_file(root.join("lib64/ld-linux-x86-64.so.2")).unwrap();
    let r = inspect_image(&root, xeon());
    let loader = r.loader.unwrap();
    assert_eq!(loader.glibc, None);
    assert!(r.notes.iter().any(|n| n.contains("glibc version is unknown")), "{:?}", r.notes);
    // Unknown: glibc 2.37's rules.
    assert_eq!(loader.subdirectories.last().map(String::as_str), Some(""));
    assert_eq!(loader.subdirectories.len(), 4);
}

/// ld.so.cache entries of hwcap subdirectories, and search directories with them, resolved in
/// an image holding this machine's own ld.so and libc: the real loader, run in a chroot of the
/// image, is the expectation.
#[test]
fn an_image_with_this_machines_glibc_resolves_as_its_loader_in_a_chroot() {
    if !have("cc") || !x86_64_host() {
        return;
    }
    let f = Fixture::new();
    let img = f.path("img");
    let multiarch = "usr/lib/x86_64-linux-gnu";
    for dir in ["etc", "lib64", multiarch] {
        std::fs::create_dir_all(img.join(dir)).unwrap();
    }
    std::fs::copy(RTLD, img.join("lib64/ld-linux-x86-64.so.2")).unwrap();
    let libc = Command::new(RTLD).arg("--list").arg("/bin/true").output().unwrap();
    let libc = String::from_utf8_lossy(&libc.stdout)
        .lines()
        .find_map(|l| {
            l.trim().strip_prefix("libc.so.6 => ").map(|r| r.split(" (").next().unwrap().to_string())
        })
        .expect("this machine's libc");
    std::fs::copy(&libc, img.join(multiarch).join("libc.so.6")).unwrap();
    // In the cache: one library in each kind of hwcap subdirectory, another without tls/.
    for (name, subs) in [
        (
            "libfoo.so.1",
            &["glibc-hwcaps/x86-64-v2", "glibc-hwcaps/x86-64-v3", "tls", "haswell", "x86_64", ""][..],
        ),
        ("libbar.so.1", &["haswell", "x86_64", ""]),
        ("libbaz.so.1", &["tls", ""]),
    ] {
        for sub in subs {
            f.lib(
                &format!("img/{multiarch}/{sub}/{name}").replace("//", "/"),
                Some(name),
                &[],
                Search::None,
                true,
            );
        }
    }
    // Through a RUNPATH: copies in hwcap subdirectories of a directory.
    for sub in ["glibc-hwcaps/x86-64-v2", "tls/x86_64", "x86_64", "haswell", ""] {
        f.lib(&format!("img/opt/lib/{sub}/libqux.so.1").replace("//", "/"), None, &[], Search::None, true);
    }
    // Outside the cache (put in after ldconfig ran): found in the system directories' hwcap
    // subdirectories.
    let stage = f.lib("stage/libnc.so.1", None, &[], Search::None, true);
    let top = f.lib(
        &format!("img/{multiarch}/libtop.so"),
        None,
        &[
            &format!("img/{multiarch}/libfoo.so.1"),
            &format!("img/{multiarch}/libbar.so.1"),
            &format!("img/{multiarch}/libbaz.so.1"),
            "img/opt/lib/libqux.so.1",
            "stage/libnc.so.1",
        ],
        Search::Runpath("/opt/lib"),
        false,
    );
    assert!(top.exists());
    let ldconfig = Command::new("ldconfig").arg("-r").arg(&img).output().is_ok_and(|o| o.status.success());
    for sub in ["x86_64", "tls/x86_64", ""] {
        let dir = img.join(multiarch).join(sub);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&stage, dir.join("libnc.so.1")).unwrap();
    }
    let chroot = ldconfig
        .then(|| {
            Command::new("chroot")
                .arg(&img)
                .args(["/lib64/ld-linux-x86-64.so.2", "--list", &format!("/{multiarch}/libtop.so")])
                .output()
                .ok()
                .filter(|o| o.status.success())
        })
        .flatten();
    let Some(chroot) = chroot else {
        assert!(!in_ci(), "ldconfig -r and chroot must work under CI=true (they need root)");
        eprintln!("note: skipping, ldconfig -r or chroot did not run here (not root?)");
        return;
    };
    let theirs = String::from_utf8_lossy(&chroot.stdout).into_owned();
    let opts = Options { root: Some(img.clone()), ld_library_path: None, ..Default::default() };
    let r = inspect(&Target::Path(PathBuf::from(format!("/{multiarch}/libtop.so"))), &opts).unwrap();
    for name in ["libfoo.so.1", "libbar.so.1", "libbaz.so.1", "libqux.so.1", "libnc.so.1", "libc.so.6"] {
        let expected = theirs
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("{name} => "))
                    .map(|r| r.split(" (").next().unwrap().to_string())
            })
            .unwrap_or_else(|| panic!("{name} not in:\n{theirs}"));
        assert_eq!(path_of(&r, name), expected, "{name}; the loader in a chroot printed:\n{theirs}");
    }
}
