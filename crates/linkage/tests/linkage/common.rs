//! Shared helpers: building real ELF files with the system C compiler, running the system `ldd`,
//! and comparing our resolution with it.
//!
//! Expected values come from the compiler setup (which library we linked, where we put it) or
//! from `ldd`, never from this crate's own output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use launchguard_linkage::{inspect, InspectOptions, LinkageReport, Target};

/// Whether a missing tool must fail the test (CI) rather than skip it with a note.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// True when `tool --version` (or `tool` for ldd) runs; otherwise skips (or fails under CI).
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!in_ci(), "{tool} is required under CI=true");
        eprintln!("note: skipping, {tool} is not available");
    }
    ok
}

/// A tempdir of compiled fixtures.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

/// How a fixture library finds its dependencies.
pub enum Search<'a> {
    None,
    /// DT_RPATH (`--disable-new-dtags`).
    Rpath(&'a str),
    /// DT_RUNPATH (`--enable-new-dtags`).
    Runpath(&'a str),
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Compiles a shared library at `rel` with soname `soname` (default: its file name),
    /// linking each of `needs` (fixture paths) with `--no-as-needed` so every one becomes a
    /// DT_NEEDED entry under its soname. `nostdlib` leaves libc out (for images without one).
    pub fn lib(
        &self,
        rel: &str,
        soname: Option<&str>,
        needs: &[&str],
        search: Search,
        nostdlib: bool,
    ) -> PathBuf {
        self.lib_with(rel, soname, needs, search, nostdlib, &[])
    }

    pub fn lib_with(
        &self,
        rel: &str,
        soname: Option<&str>,
        needs: &[&str],
        search: Search,
        nostdlib: bool,
        extra: &[&str],
    ) -> PathBuf {
        let out = self.path(rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let file_name = out.file_name().unwrap().to_str().unwrap().to_string();
        let src = self.path(&format!("{}.c", rel.replace('/', "_")));
        let symbol = file_name.replace(['.', '-'], "_");
        std::fs::write(&src, format!("int f_{symbol}(void) {{ return 0; }}\n")).unwrap();
        let mut cmd = Command::new("cc");
        cmd.args(["-shared", "-fPIC", "-o"]).arg(&out).arg(&src);
        cmd.arg(format!("-Wl,-soname,{}", soname.unwrap_or(&file_name)));
        if nostdlib {
            cmd.arg("-nostdlib");
        }
        match search {
            Search::None => {}
            Search::Rpath(p) => {
                cmd.arg(format!("-Wl,--disable-new-dtags,-rpath,{p}"));
            }
            Search::Runpath(p) => {
                cmd.arg(format!("-Wl,--enable-new-dtags,-rpath,{p}"));
            }
        }
        cmd.arg("-Wl,--no-as-needed");
        for need in needs {
            // Linking the file by path records its soname as DT_NEEDED.
            cmd.arg(self.path(need));
        }
        cmd.args(extra);
        let status = cmd.output().unwrap();
        assert!(status.status.success(), "cc failed for {rel}: {}", String::from_utf8_lossy(&status.stderr));
        out
    }

    /// A symlink at `rel` pointing to `target` (as written).
    pub fn symlink(&self, rel: &str, target: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }
}

/// One line of `ldd` output: the name, and the path or `None` for "not found".
pub type LddLine = (String, Option<String>);

/// Runs the system `ldd` with exactly `llp` as LD_LIBRARY_PATH (none when `None`).
///
/// Skipped lines: `linux-vdso.so.1` (and any other name without a slash that has no `=>`): the
/// kernel maps the vDSO into every process; it is no file and no DT_NEEDED names it, so a
/// static reader has nothing to compare. Lines without `=>` whose name is a path are objects
/// named by path — the dynamic loader itself, which ldd prints under its PT_INTERP path because
/// it is loaded before anything asks for it by soname — and are returned as `(path, path)`.
pub fn ldd(path: &Path, llp: Option<&str>) -> Vec<LddLine> {
    let mut cmd = Command::new("ldd");
    cmd.arg(path).env_remove("LD_LIBRARY_PATH");
    if let Some(llp) = llp {
        cmd.env("LD_LIBRARY_PATH", llp);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some((name, rest)) = line.split_once(" => ") {
            let rest = rest.trim();
            if rest.starts_with("not found") {
                lines.push((name.to_string(), None));
            } else {
                let path = rest.split(" (0x").next().unwrap().trim().to_string();
                lines.push((name.to_string(), Some(path)));
            }
        } else if let Some((name, _)) = line.split_once(" (0x") {
            if name.contains('/') {
                lines.push((name.to_string(), Some(name.to_string())));
            }
        }
    }
    lines
}

/// Inspects `path` as the loader would with exactly `llp`.
pub fn inspect_with(path: &Path, llp: Option<&str>) -> LinkageReport {
    let opts = InspectOptions {
        root: None,
        ld_library_path: Some(llp.unwrap_or("").to_string()),
        ..Default::default()
    };
    inspect(&Target::Path(path.to_path_buf()), &opts).unwrap()
}

/// Asserts that our closure of `path` is ldd's: every name ldd resolves maps to ldd's path,
/// every "not found" is unresolved here, the loader line's path is ours, and everything we list
/// beyond is an object ldd lists (a second name for a loaded file). Returns how many of ldd's
/// entries matched.
pub fn assert_same_as_ldd(path: &Path, llp: Option<&str>) -> usize {
    let theirs = ldd(path, llp);
    assert!(!theirs.is_empty(), "ldd printed nothing for {}", path.display());
    let report = inspect_with(path, llp);
    let mut ours: BTreeMap<String, Option<String>> = BTreeMap::new();
    for d in &report.dependencies {
        if let Some(prev) = ours.insert(d.name.clone(), d.path.clone()) {
            assert_eq!(prev, d.path, "{} resolved two ways in one closure", d.name);
        }
    }
    let ldd_paths: Vec<&String> = theirs.iter().filter_map(|(_, p)| p.as_ref()).collect();
    let mut matched = 0;
    for (name, path_) in &theirs {
        if name.contains('/') {
            assert!(
                report.dependencies.iter().any(|d| d.path.as_ref() == Some(name)),
                "ldd loads {name}, we do not ({})",
                path.display()
            );
        } else {
            assert_eq!(
                ours.get(name),
                Some(path_),
                "{name} in the closure of {}: ldd says {path_:?}",
                path.display()
            );
        }
        matched += 1;
    }
    for (name, p) in &ours {
        match p {
            Some(p) => assert!(
                ldd_paths.contains(&p),
                "we resolve {name} to {p}, which ldd does not load ({})",
                path.display()
            ),
            None => assert!(
                theirs.contains(&(name.clone(), None)),
                "we find no {name}, ldd does ({})",
                path.display()
            ),
        }
    }
    matched
}
