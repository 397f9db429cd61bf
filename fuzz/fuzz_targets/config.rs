//! The TOML settings reader (`--config`) on arbitrary bytes, through the file as the CLI reads
//! it: settings or an error, never a panic, an abort, a hang or a memory blow-up.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One file, rewritten for each input (a directory per input would cost more than the parse).
fn file() -> &'static PathBuf {
    static FILE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("config.toml");
        (dir, path)
    });
    path
}

fuzz_target!(|data: &[u8]| {
    std::fs::write(file(), data).expect("the temporary file is writable");
    if let Ok(settings) = launchguard_judge::Settings::from_file(file()) {
        // What it read is what the text says.
        let text = std::str::from_utf8(data).expect("read as UTF-8");
        assert_eq!(launchguard_judge::Settings::from_toml(text).ok(), Some(settings));
    }
});
