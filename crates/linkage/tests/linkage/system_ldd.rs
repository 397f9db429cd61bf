//! The resolved closure of real system libraries equals the system `ldd`'s.
//!
//! Needs Debian's libcurl4, libxml2, libssh2-1 and git; missing ones skip with a note, or fail
//! under CI=true.

use std::path::PathBuf;

use crate::common::{assert_same_as_ldd, have, in_ci};

/// Where the distribution puts a library: the usual directories, multiarch first.
fn system_library(name: &str) -> Option<PathBuf> {
    let arch = std::env::consts::ARCH;
    let dirs = [
        format!("/usr/lib/{arch}-linux-gnu"),
        format!("/lib/{arch}-linux-gnu"),
        "/usr/lib64".to_string(),
        "/usr/lib".to_string(),
    ];
    let found = dirs.iter().map(|d| PathBuf::from(d).join(name)).find(|p| p.exists());
    if found.is_none() {
        assert!(
            !in_ci(),
            "{name} is required under CI=true (apt-get install libcurl4 libxml2 libssh2-1 git)"
        );
        eprintln!("note: skipping, {name} is not installed");
    }
    found
}

fn compare(path: Option<PathBuf>) {
    let Some(path) = path else { return };
    if !have("ldd") {
        return;
    }
    let matched = assert_same_as_ldd(&path, None);
    eprintln!("{}: {matched} ldd entries matched", path.display());
    assert!(matched >= 2);
}

#[test]
fn libcurl_matches_ldd() {
    compare(system_library("libcurl.so.4"));
}

#[test]
fn libxml2_matches_ldd() {
    compare(system_library("libxml2.so.2"));
}

#[test]
fn libssh2_matches_ldd() {
    compare(system_library("libssh2.so.1"));
}

#[test]
fn git_matches_ldd() {
    // Debian's git, or a locally built one: either is a real dynamically linked executable.
    let Some(git) = ["/usr/bin/git", "/usr/local/bin/git"].iter().map(PathBuf::from).find(|p| p.exists())
    else {
        assert!(!in_ci(), "git is required under CI=true (apt-get install git)");
        eprintln!("note: skipping, git is not installed");
        return;
    };
    compare(Some(git));
}

#[test]
fn ld_library_path_on_a_system_library() {
    // An LD_LIBRARY_PATH with a directory that holds a copy of one dependency wins over the cache,
    // for ldd and for us alike.
    let Some(curl) = system_library("libcurl.so.4") else { return };
    let Some(zlib) = system_library("libz.so.1") else { return };
    if !have("ldd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&zlib, dir.path().join("libz.so.1")).unwrap();
    let llp = dir.path().to_str().unwrap();
    assert_same_as_ldd(&curl, Some(llp));
    let report = crate::common::inspect_with(&curl, Some(llp));
    let z = report.dependencies.iter().find(|d| d.name == "libz.so.1").unwrap();
    assert_eq!(z.path.as_deref(), Some(format!("{llp}/libz.so.1").as_str()));
}
