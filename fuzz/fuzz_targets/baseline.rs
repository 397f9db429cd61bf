//! The check-result reader (`compare BASELINE CURRENT`, `check --baseline`) on arbitrary bytes,
//! through the file as the CLI reads it: a result or an error, never a panic, an abort, a hang or
//! a memory blow-up.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One file, rewritten for each input.
fn file() -> &'static PathBuf {
    static FILE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("result.json");
        (dir, path)
    });
    path
}

fuzz_target!(|data: &[u8]| {
    std::fs::write(file(), data).expect("the temporary file is writable");
    let _ = launchguard_check::compare::read_result(file());
});
