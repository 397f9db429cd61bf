//! Writing report files: [`launchguard_files::output`]'s rules (a regular file replaced
//! atomically, a FIFO or `/dev/stdout` written into, nothing else), with the path named in the
//! error.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |w| Ok(w.write_all(bytes)?))
}

/// Streams `fill`'s output to `path`, for outputs too large to hold in memory (an annotated copy
/// of a large trace). When `fill` fails, its error is returned and `path` is left as it was.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    // The renderer's own error, kept whole rather than flattened into an I/O error.
    let mut failed = None;
    let written = launchguard_files::write_atomic_with(path, |w| {
        fill(w).map_err(|e| {
            let io = std::io::Error::other(e.to_string());
            failed = Some(e);
            io
        })
    });
    match (written, failed) {
        (_, Some(e)) => Err(e.context(format!("cannot write {}", path.display()))),
        (Err(e), None) => Err(anyhow::Error::new(e).context(format!("cannot write {}", path.display()))),
        (Ok(()), None) => Ok(()),
    }
}
