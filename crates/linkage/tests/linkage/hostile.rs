//! Hostile input, as found in strangers' images: named pipes and devices where files are
//! expected, chains thousands deep, include fan-out, ld.so.cache bombs, an interpreter that
//! floods its pipes.
//!
//! Each case builds its input at test time in a tempdir, runs the inspection in a child
//! process (this test binary, re-run on the ignored test `hostile::child`, which does what
//! `launchguard linkage` does: prints the report, or one line and exit 2) and asserts the exit
//! code and the message or result, a time bound, a memory bound, and that the input is
//! unchanged. A regression that hangs is killed at the time bound and fails the case.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use launchguard_linkage::{inspect, Limits, Options, Target};
use serde_json::{json, Value};

use crate::common::in_ci;

/// Generous for two slow CI cores; every case takes well under a second or two when healthy.
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// Peak RSS of the child, KiB.
const RSS_LIMIT_KIB: i64 = 1 << 20;
const CHILD_ENV: &str = "LAUNCHGUARD_HOSTILE_CHILD";

/// The child side: one inspection as the CLI does it.
#[test]
#[ignore = "run by the other hostile tests, in a child process"]
fn child() {
    // Only meaningful with a spec; `cargo test -- --ignored` alone has nothing to run.
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let target = match spec["target"].as_str() {
        Some(p) => Target::Path(p.into()),
        None => Target::Python(spec["python"].as_str().unwrap_or("python3").into()),
    };
    let mut limits = Limits::DEFAULT;
    let l = &spec["limits"];
    let or = |k: &str, d: u64| l[k].as_u64().unwrap_or(d);
    limits.max_libraries = or("max_libraries", limits.max_libraries as u64) as usize;
    limits.max_depth = or("max_depth", limits.max_depth as u64) as usize;
    limits.max_needed = or("max_needed", limits.max_needed as u64) as usize;
    limits.max_lookups = or("max_lookups", limits.max_lookups);
    limits.max_cache_mib = or("max_cache_mib", limits.max_cache_mib);
    limits.max_dir_entries = or("max_dir_entries", limits.max_dir_entries as u64) as usize;
    let opts = Options {
        root: spec["root"].as_str().map(PathBuf::from),
        ld_library_path: Some(String::new()),
        limits,
        ..Default::default()
    };
    let result = inspect(&target, &opts);
    // This process's own peak (see `run`).
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap().trim();
    println!("VMHWM {}", hwm.trim_end_matches(" kB"));
    match result {
        Ok(report) => {
            println!("REPORT {}", serde_json::to_string(&report).unwrap());
            std::io::stdout().flush().unwrap();
            std::process::exit(0);
        }
        Err(e) => {
            // As the CLI prints it: the error and its sources, joined (anyhow's `{:#}`).
            let mut msg = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                msg.push_str(&format!(": {s}"));
                source = s.source();
            }
            eprintln!("launchguard: error: {msg}");
            std::process::exit(2);
        }
    }
}

/// What one child run did.
struct Run {
    code: i32,
    report: Option<Value>,
    stderr: String,
    secs: f64,
}

impl Run {
    /// The one-line error of an exit 2.
    fn error(&self) -> &str {
        assert_eq!(self.code, 2, "expected an error, got exit {}; stderr: {}", self.code, self.stderr);
        let line = self.stderr.trim_end();
        assert!(!line.contains('\n'), "more than one line: {line:?}");
        assert!(line.starts_with("launchguard: error: "), "{line:?}");
        line
    }

    /// The report of an exit 0.
    fn report(&self) -> &Value {
        assert_eq!(self.code, 0, "expected a report; stderr: {}", self.stderr);
        self.report.as_ref().expect("a report")
    }
}

/// Runs the inspection `spec` in a child, with the bounds asserted and the input (`input`, a
/// directory) checked unchanged.
// The child is reaped by wait4 below, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run(case: &str, input: &Path, spec: Value) -> Run {
    let before = snapshot(input);
    let out = tempfile::tempdir().unwrap();
    let (stdout_path, stderr_path) = (out.path().join("stdout"), out.path().join("stderr"));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["hostile::child", "--exact", "--ignored", "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD_ENV, spec.to_string())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Peak RSS, two ways. wait4's rusage is this child's alone (getrusage(RUSAGE_CHILDREN) would
    // be the peak over every child this multi-threaded test process has waited for, compilers
    // included), but Linux counts into it the memory of the process image the child was forked
    // from, that is this test process, up to its exec: an upper bound. The child's own VmHWM
    // (its address space's peak, fresh at exec) is the exact figure, reported and bounded too.
    let pid = child.id() as libc::pid_t;
    let (status, usage) = loop {
        let mut status = 0;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: plain out-parameters; the pid is our child's.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert_ne!(r, -1, "wait4: {}", std::io::Error::last_os_error());
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            panic!("{case}: still running after {} s (killed)", TIME_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let secs = started.elapsed().as_secs_f64();
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) };
    let stdout = std::fs::read_to_string(&stdout_path).unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    let hwm_kib: i64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("VMHWM "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(i64::MAX);
    eprintln!(
        "hostile {case}: exit {code}, {secs:.2} s, peak RSS {:.1} MiB (rusage bound {:.0} MiB): {}",
        hwm_kib as f64 / 1024.0,
        usage.ru_maxrss as f64 / 1024.0,
        stderr.lines().last().unwrap_or("(report)")
    );
    assert!(code >= 0, "{case}: killed by signal {}; stderr: {stderr}", -code);
    assert!(usage.ru_maxrss < RSS_LIMIT_KIB, "{case}: rusage peak RSS {} KiB", usage.ru_maxrss);
    assert!(hwm_kib < RSS_LIMIT_KIB, "{case}: peak RSS {hwm_kib} KiB");
    assert!(started.elapsed() <= TIME_LIMIT, "{case}: {secs:.1} s");
    assert_eq!(snapshot(input), before, "{case}: the input changed");
    let report =
        stdout.lines().find_map(|l| l.strip_prefix("REPORT ")).map(|j| serde_json::from_str(j).unwrap());
    Run { code, report, stderr, secs }
}

/// Every entry under `dir`, without following links or opening anything but regular files:
/// type, size, mode, mtime, link target, and the bytes of files up to 4 MiB.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let ft = meta.file_type();
        let mut what = format!("{:o} {} {} {}", meta.mode(), meta.len(), meta.mtime(), meta.mtime_nsec());
        if ft.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                todo.push(e.unwrap().path());
            }
        } else if ft.is_symlink() {
            what.push_str(&format!(" -> {}", std::fs::read_link(&p).unwrap().display()));
        } else if ft.is_file() && meta.len() <= 4 << 20 {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(&p).unwrap().hash(&mut h);
            what.push_str(&format!(" #{:x}", h.finish()));
        } else if ft.is_fifo() {
            what.push_str(" fifo");
        }
        out.insert(p, what);
    }
    out
}

/// A 64-bit x86_64 ET_DYN library, written byte by byte from the ELF specification: one
/// PT_LOAD over the file, PT_DYNAMIC (8-aligned, as linkers place it) with DT_NEEDED,
/// DT_SONAME and DT_RPATH entries.
fn lib(needed: &[&str], rpath: Option<&str>, soname: Option<&str>) -> Vec<u8> {
    let strtab_off = 64 + 2 * 56;
    let mut strtab = vec![0u8];
    let mut add = |s: &str| {
        let at = strtab.len() as u64;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let mut dynamic: Vec<(u64, u64)> = needed.iter().map(|n| (1, add(n))).collect();
    if let Some(s) = soname {
        dynamic.push((14, add(s)));
    }
    if let Some(r) = rpath {
        dynamic.push((15, add(r)));
    }
    strtab.resize((strtab_off + strtab.len()).next_multiple_of(8) - strtab_off, 0);
    let dyn_off = strtab_off + strtab.len();
    dynamic.extend([(5, strtab_off as u64), (10, strtab.len() as u64), (0, 0)]);
    let total = dyn_off + dynamic.len() * 16;
    let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    b.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    b.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    b.extend_from_slice(&1u32.to_le_bytes());
    for v in [0u64, 64, 0] {
        b.extend_from_slice(&v.to_le_bytes()); // e_entry, e_phoff, e_shoff
    }
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [64u16, 56, 2, 0, 0, 0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for (p_type, off, size) in [(1u32, 0, total), (2, dyn_off, dynamic.len() * 16)] {
        b.extend_from_slice(&p_type.to_le_bytes());
        b.extend_from_slice(&4u32.to_le_bytes());
        for v in [off, off, off, size, size, 8] {
            b.extend_from_slice(&(v as u64).to_le_bytes());
        }
    }
    b.extend_from_slice(&strtab);
    for (tag, val) in dynamic {
        b.extend_from_slice(&tag.to_le_bytes());
        b.extend_from_slice(&val.to_le_bytes());
    }
    assert_eq!(b.len(), total);
    b
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{}", std::io::Error::last_os_error());
}

/// `/dev/zero`'s device node at `path`; false (skip) where this user may not make one.
fn mknod_zero(path: &Path) -> bool {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; major 1 minor 5 is /dev/zero on Linux.
    let ok = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) } == 0;
    if !ok {
        assert!(!in_ci(), "mknod must work under CI=true (it runs as root)");
        eprintln!("note: skipping, mknod failed: {}", std::io::Error::last_os_error());
    }
    ok
}

fn texts(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn has(list: &Value, needle: &str) -> bool {
    texts(list).iter().any(|s| s.contains(needle))
}

/// An image whose torch library needs `needs`, with RPATH `$ORIGIN`.
fn image_with_torch(root: &Path, needs: &[&str]) -> &'static str {
    write(&root.join("usr/lib/libtorch_cpu.so"), lib(needs, Some("$ORIGIN"), None));
    "/usr/lib/libtorch_cpu.so"
}

#[test]
fn a_fifo_as_a_dependency_is_refused_unopened() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libfifo.so.1", "libcupti.so.12"]);
    mkfifo(&root.join("usr/lib/libfifo.so.1"));
    // The name found through the ld.so.cache-free search as a FIFO too.
    mkfifo(&root.join("usr/lib/libcupti.so.12"));
    let r = run("fifo as DT_NEEDED", root, json!({"target": target, "root": root}));
    let report = r.report();
    assert!(has(&report["problems"], "/usr/lib/libfifo.so.1: is a FIFO, not a regular file"), "{report}");
    let unresolved: Vec<&str> =
        report["unresolved"].as_array().unwrap().iter().map(|u| u["name"].as_str().unwrap()).collect();
    assert_eq!(unresolved, ["libfifo.so.1", "libcupti.so.12"]);
    // Linked all the same: the backend is still read from the name.
    assert_eq!(report["profiler_backend"], "cupti");
}

#[test]
fn a_fifo_as_ld_so_cache_is_unusable_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    mkfifo(&root.join("etc/ld.so.cache"));
    let r = run("fifo as ld.so.cache", root, json!({"target": target, "root": root}));
    let report = r.report();
    assert!(
        has(&report["problems"], "/etc/ld.so.cache is unusable (is a FIFO, not a regular file)"),
        "{report}"
    );
}

#[test]
fn fifos_as_ld_so_conf_are_skipped_with_a_note() {
    // The top file a FIFO.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    mkfifo(&root.join("etc/ld.so.conf"));
    let r = run("fifo as ld.so.conf", root, json!({"target": target, "root": root}));
    assert!(has(&r.report()["notes"], "ld.so.conf: /etc/ld.so.conf is a FIFO, not a regular file; skipped"));

    // An included file a FIFO: the next one is still read (its directory explains the miss).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    write(&root.join("etc/ld.so.conf"), "include /etc/ld.so.conf.d/*.conf\n");
    mkfifo(&root.join("etc/ld.so.conf.d/a.conf"));
    write(&root.join("etc/ld.so.conf.d/b.conf"), "/opt/lib\n");
    write(&root.join("opt/lib/libmissing.so.1"), lib(&[], None, None));
    let r = run("fifo as an included conf", root, json!({"target": target, "root": root}));
    let report = r.report();
    assert!(has(&report["notes"], "/etc/ld.so.conf.d/a.conf is a FIFO"), "{report}");
    let reason = report["unresolved"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("/opt/lib/libmissing.so.1 exists in an ld.so.conf directory"), "{reason}");
}

#[test]
fn a_fifo_device_or_socket_as_target_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("libtorch_cpu.so");
    mkfifo(&fifo);
    let r = run("fifo as TARGET", dir.path(), json!({"target": fifo}));
    assert!(r.error().ends_with("libtorch_cpu.so: is a FIFO, not a regular file"), "{}", r.stderr);

    let r = run("/dev/zero as TARGET", dir.path(), json!({"target": "/dev/zero"}));
    assert_eq!(r.error(), "launchguard: error: /dev/zero: is a device, not a regular file");

    let sock = dir.path().join("libsock.so");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let r = run("socket as TARGET", dir.path(), json!({"target": sock}));
    assert!(r.error().ends_with("libsock.so: is a socket, not a regular file"), "{}", r.stderr);
}

/// `n` libraries `/d{i}/libl{i}.so`, each with an RPATH to the next one's directory and needing
/// it (and, with `misses`, a library nowhere to be found, searched through every RPATH above).
fn chain(root: &Path, n: usize, misses: bool) -> String {
    for i in 0..n {
        let next = format!("libl{}.so", i + 1);
        let missing = format!("libmissing{i}.so");
        let mut needs: Vec<&str> = Vec::new();
        if i + 1 < n {
            needs.push(&next);
        }
        if misses {
            needs.push(&missing);
        }
        let rpath = format!("$ORIGIN/../d{}", i + 1);
        write(&root.join(format!("d{i}/libl{i}.so")), lib(&needs, Some(&rpath), None));
    }
    "/d0/libl0.so".to_string()
}

#[test]
fn a_deep_rpath_chain_hits_the_depth_cap() {
    let dir = tempfile::tempdir().unwrap();
    let target = chain(dir.path(), 300, true);
    let r = run("RPATH chain 300 deep", dir.path(), json!({"target": target, "root": dir.path()}));
    let e = r.error();
    assert!(e.contains("a chain of libraries each loading the next is deeper than 64"), "{e}");
    assert!(e.contains("libl0.so → libl1.so → libl2.so → … → "), "{e}");
    assert!(e.ends_with("(--max-depth N raises the cap)"), "{e}");
}

#[test]
fn a_deep_rpath_chain_under_a_raised_cap_resolves() {
    // Each of 100 libraries misses one name, searched through all the RPATHs above it: the
    // quadratic search that took minutes; now bounded and correct.
    let dir = tempfile::tempdir().unwrap();
    // The paths grow with the depth too ($ORIGIN/../d1/../d2/…, as the loader names them), so
    // the lookups grow with its cube: this needs a raised lookup budget as well.
    let n = 100;
    let target = chain(dir.path(), n, true);
    let spec =
        json!({"target": target, "root": dir.path(), "limits": {"max_depth": 128, "max_lookups": 5_000_000}});
    let r = run("RPATH chain 100 deep, --max-depth 128 --max-lookups 5000000", dir.path(), spec);
    let report = r.report();
    let deps = report["dependencies"].as_array().unwrap();
    let found = deps.iter().filter(|d| d["name"].as_str().unwrap().starts_with("libl")).count();
    assert_eq!(found, n - 1);
    assert!(deps
        .iter()
        .filter(|d| d["name"].as_str().unwrap().starts_with("libl"))
        .all(|d| d["path"].is_string()));
    assert_eq!(report["unresolved"].as_array().unwrap().len(), n);
    // The deepest miss was searched through every RPATH above it.
    let last = &report["unresolved"][n - 1]["reason"];
    assert!(last.as_str().unwrap().contains("RPATH of libl0.so"), "{last}");
}

#[test]
fn include_fan_out_reads_each_file_once() {
    // 40 files, each including all 40: 40⁸ paths at the old include depth of 8.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    write(&root.join("etc/ld.so.conf"), "include ld.so.conf.d/*.conf\n");
    for i in 0..40 {
        write(&root.join(format!("etc/ld.so.conf.d/{i:02}.conf")), format!("include *.conf\n/opt/l{i}\n"));
    }
    write(&root.join("opt/l39/libmissing.so.1"), lib(&[], None, None));
    let r = run("include fan-out 40×40", root, json!({"target": target, "root": root}));
    let report = r.report();
    let reason = report["unresolved"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("/opt/l39/libmissing.so.1 exists in an ld.so.conf directory"), "{reason}");
    assert!(report["notes"].as_array().unwrap().iter().all(|n| !n.as_str().unwrap().contains("ld.so.conf:")));
}

#[test]
fn a_million_stars_in_an_include_neither_overflow_nor_stall() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    write(&root.join("etc/ld.so.conf"), format!("include /etc/conf.d/{}\n", "*".repeat(1_000_000)));
    write(&root.join("etc/conf.d/a.conf"), "/opt/lib\n");
    write(&root.join("opt/lib/libmissing.so.1"), lib(&[], None, None));
    let r = run("include with 10^6 stars", root, json!({"target": target, "root": root}));
    let reason = r.report()["unresolved"][0]["reason"].as_str().unwrap().to_string();
    // The stars matched a.conf, whose directory explains the miss.
    assert!(reason.contains("/opt/lib/libmissing.so.1 exists in an ld.so.conf directory"), "{reason}");
}

/// A new-format ld.so.cache (glibc ≥ 2.32's layout, from its elf/cache.c) of `entries`
/// `(flags, key offset, value offset)` followed by `strings`; offsets count from the file start.
fn cache_bytes(entries: &[(u32, u32, u32)], strings: &[u8]) -> Vec<u8> {
    let mut b = b"glibc-ld.so.cache1.1".to_vec();
    b.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    b.extend_from_slice(&(strings.len() as u32).to_le_bytes());
    b.push(2); // little-endian
    b.extend_from_slice(&[0; 3 + 16]);
    for &(flags, key, value) in entries {
        for v in [flags, key, value, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&0u64.to_le_bytes());
    }
    b.extend_from_slice(strings);
    b
}

#[test]
fn an_ld_so_cache_bomb_is_read_in_place() {
    // Two million entries, all naming one 1 MiB string (without a NUL for 1 MiB): copying the
    // strings per entry, as the parser did, is 4 TB. One real entry at the end must still work.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libreal.so.1"]);
    write(&root.join("opt/real/libreal.so.1"), lib(&[], None, Some("libreal.so.1")));
    let n = 2_000_000u32;
    let strings_at = 48 + (n + 1) * 24;
    let mut strings = vec![b'x'; 1 << 20];
    strings.push(0);
    let real_key = strings_at + strings.len() as u32;
    strings.extend_from_slice(b"libreal.so.1\0");
    let real_value = strings_at + strings.len() as u32;
    strings.extend_from_slice(b"/opt/real/libreal.so.1\0");
    let mut entries = vec![(0x0303, strings_at, strings_at); n as usize];
    entries.push((0x0303, real_key, real_value));
    write(&root.join("etc/ld.so.cache"), cache_bytes(&entries, &strings));
    let r = run(
        "ld.so.cache bomb (2M entries → one 1 MiB string)",
        root,
        json!({"target": target, "root": root}),
    );
    let report = r.report();
    assert_eq!(report["dependencies"][0]["path"], "/opt/real/libreal.so.1", "{report}");
}

#[test]
fn an_oversized_ld_so_cache_is_an_error_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libz.so.1"]);
    // Sparse: 100 MiB on paper, nothing on disk.
    write(&root.join("etc/ld.so.cache"), b"glibc-ld.so.cache1.1");
    let f = std::fs::OpenOptions::new().write(true).open(root.join("etc/ld.so.cache")).unwrap();
    f.set_len(100 << 20).unwrap();
    drop(f);
    let r = run("100 MiB ld.so.cache", root, json!({"target": target, "root": root}));
    assert_eq!(
        r.error(),
        "launchguard: error: /etc/ld.so.cache is 104857600 bytes, over the cap of 64 MiB (--max-cache-mib N raises the cap)"
    );
    // Raised, it is read: a header counting no entries (zeros past the magic), as glibc would
    // take it too.
    let spec = json!({"target": target, "root": root, "limits": {"max_cache_mib": 128}});
    let r = run("100 MiB ld.so.cache, --max-cache-mib 128", root, spec);
    let reason = r.report()["unresolved"][0]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("ld.so.cache"), "{reason}");
}

#[test]
fn dev_zero_as_ld_so_cache_or_conf_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let target = image_with_torch(root, &["libmissing.so.1"]);
    if !mknod_zero(&root.join("dev/zero")) {
        return;
    }
    std::fs::create_dir_all(root.join("etc")).unwrap();
    // Absolute links resolve inside the image, to its own /dev/zero.
    std::os::unix::fs::symlink("/dev/zero", root.join("etc/ld.so.cache")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("etc/ld.so.conf")).unwrap();
    let r = run("/dev/zero as ld.so.cache and ld.so.conf", root, json!({"target": target, "root": root}));
    let report = r.report();
    assert!(
        has(&report["problems"], "/etc/ld.so.cache is unusable (is a device, not a regular file)"),
        "{report}"
    );
    assert!(has(&report["notes"], "ld.so.conf: /etc/ld.so.conf is a device, not a regular file; skipped"));
}

#[test]
fn an_interpreter_that_floods_its_pipes_answers_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let torch = dir.path().join("site/torch");
    write(&torch.join("lib/libtorch_cpu.so"), lib(&[], None, None));
    // 100 MB on stdout and 10 MB on stderr before the answer: a pipe holds 64 KiB, so an
    // unread pipe stalls the interpreter until the 60 s timeout.
    let python = dir.path().join("python");
    write(
        &python,
        format!(
            "#!/bin/sh\nhead -c 10000000 /dev/zero | tr '\\0' e >&2\nhead -c 100000000 /dev/zero | tr '\\0' o\necho\necho '{{\"origin\": \"{0}/__init__.py\", \"locations\": [\"{0}\"]}}'\n",
            torch.display()
        ),
    );
    let mut perms = std::fs::metadata(&python).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&python, perms).unwrap();
    let r = run("python printing 110 MB", dir.path(), json!({"python": python}));
    assert_eq!(r.report()["torch_dir"], torch.to_str().unwrap());
    assert!(r.secs < 20.0);
}

#[test]
fn the_os_error_is_said_once() {
    // A real OS error (ELOOP) on the target: the message names it once, not once per layer.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("libloop.so");
    std::os::unix::fs::symlink("libloop.so", &target).unwrap();
    let r = run("symlink loop as TARGET", dir.path(), json!({"target": target}));
    let e = r.error();
    assert!(e.ends_with("libloop.so: Too many levels of symbolic links (os error 40)"), "{e}");
    assert_eq!(e.matches("os error").count(), 1, "{e}");
}

#[test]
fn each_cap_names_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // 20 libraries beside the torch one.
    let names: Vec<String> = (0..20).map(|i| format!("libw{i}.so")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let target = image_with_torch(root, &refs);
    for n in &names {
        write(&root.join("usr/lib").join(n), lib(&[], None, None));
    }
    let base = json!({"target": target, "root": root});
    let with = |limits: Value| {
        let mut s = base.clone();
        s["limits"] = limits;
        s
    };
    let r = run("--max-libraries 10", root, with(json!({"max_libraries": 10})));
    assert!(r.error().ends_with("more than 10 libraries (--max-libraries N raises the cap)"), "{}", r.stderr);
    let r = run("--max-needed 10", root, with(json!({"max_needed": 10})));
    assert!(
        r.error().ends_with("more than 10 DT_NEEDED entries (--max-needed N raises the cap)"),
        "{}",
        r.stderr
    );
    let r = run("--max-lookups 30", root, with(json!({"max_lookups": 30})));
    assert!(
        r.error().ends_with("more than 30 file-system lookups (--max-lookups N raises the cap)"),
        "{}",
        r.stderr
    );
    // The defaults take it all.
    let r = run("20 libraries, default caps", root, base.clone());
    assert_eq!(r.report()["dependencies"].as_array().unwrap().len(), 20);

    // Torch searched in an image whose /opt lists more entries than the cap.
    for i in 0..20 {
        std::fs::create_dir_all(root.join(format!("opt/v{i}"))).unwrap();
    }
    let spec = json!({"root": root, "limits": {"max_dir_entries": 10}});
    let r = run("--max-dir-entries 10", root, spec);
    assert_eq!(
        r.error(),
        "launchguard: error: /opt has more than 10 entries (--max-dir-entries N raises the cap)"
    );
}

#[test]
fn a_huge_rpath_spends_the_lookup_budget_not_minutes() {
    // 200 000 empty RPATH elements (the working directory, each), one string of 200 KB: one
    // directory after deduplication, but 200 000 elements to examine per search, and three
    // names found nowhere: 600 000 lookups, over the default budget.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let rpath = format!("/opt/lib{}", ":".repeat(200_000));
    write(&root.join("usr/lib/libtorch_cpu.so"), lib(&["liba.so", "libb.so", "libc.so"], Some(&rpath), None));
    let r =
        run("RPATH of 200 000 elements", root, json!({"target": "/usr/lib/libtorch_cpu.so", "root": root}));
    assert!(
        r.error().ends_with("more than 500000 file-system lookups (--max-lookups N raises the cap)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_string_bomb_in_an_elf_file_is_capped() {
    // 30 000 DT_NEEDED entries all naming one 200 KB string: 6 GB of copies.
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(200_000);
    let needs: Vec<&str> = vec![&long];
    let mut bytes = lib(&needs, None, None);
    // Repeat the one DT_NEEDED entry: rebuild with the dynamic table grown by hand.
    let dyn_at = bytes.len() - 4 * 16; // NEEDED, STRTAB, STRSZ, NULL
    let needed_entry = bytes[dyn_at..dyn_at + 16].to_vec();
    let tail = bytes.split_off(dyn_at + 16);
    for _ in 0..30_000 {
        bytes.extend_from_slice(&needed_entry);
    }
    bytes.extend_from_slice(&tail);
    // Both program headers grow with the file.
    let total = bytes.len() as u64;
    let dyn_size = total - dyn_at as u64;
    bytes[64 + 32..64 + 40].copy_from_slice(&total.to_le_bytes());
    bytes[64 + 40..64 + 48].copy_from_slice(&total.to_le_bytes());
    bytes[64 + 56 + 32..64 + 56 + 40].copy_from_slice(&dyn_size.to_le_bytes());
    bytes[64 + 56 + 40..64 + 56 + 48].copy_from_slice(&dyn_size.to_le_bytes());
    let target = dir.path().join("libtorch_cpu.so");
    write(&target, &bytes);
    let r = run("30 000 DT_NEEDED → one 200 KB string", dir.path(), json!({"target": target}));
    assert!(r.error().contains("take more than 256 KiB, the reader's cap"), "{}", r.stderr);
}
