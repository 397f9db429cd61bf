//! Reading what a team already has: `check --format json` results (and baselines), `analyze` and
//! `compare` results, and the traces `check --keep-trace` kept (measured and judged as `analyze`
//! would, their context giving check's samples, inventory and linkage).

use std::io::Read;
use std::path::Path;

use crate::record::Document;
use crate::{Error, Result};

/// The largest result document read: a check result is tens of KB, a TP=8 one a few MB.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// What a file holds, told from its first bytes: a launchguard document starts with its
/// `schema` key; anything else is read as a trace.
fn is_document(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let rest = text.trim_start();
    rest.strip_prefix('{').is_some_and(|r| r.trim_start().starts_with("\"schema\""))
}

/// Reads a result document or a kept trace.
pub fn read(path: &Path) -> Result<Document> {
    let name = path.display().to_string();
    let (mut file, _) =
        launchguard_files::open_regular(path).map_err(|e| Error::new(format!("{name}: {e}")))?;
    let mut head = vec![0u8; 256];
    let got = read_up_to(&mut file, &mut head).map_err(|e| Error::new(format!("{name}: {e}")))?;
    head.truncate(got);
    if is_document(&head) {
        let bytes = launchguard_files::read_capped(path, MAX_DOCUMENT_BYTES)
            .map_err(|e| Error::new(format!("{name}: {e}")))?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| Error::new(format!("{name}: not JSON ({e})")))?;
        return Document::from_json(value).map_err(|e| Error::new(format!("{name}: {e}")));
    }
    trace(path)
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A trace, read, measured and judged with the default settings by the one pipeline `analyze`
/// uses.
fn trace(path: &Path) -> Result<Document> {
    let name = path.display().to_string();
    let run = launchguard_pipeline::judge(
        &[path.to_path_buf()],
        &Default::default(),
        &Default::default(),
        &launchguard_judge::Settings::default(),
        launchguard_pipeline::Keep::Document,
    )
    .map_err(|e| Error::new(format!("{name}: {e}")))?;
    match run.judged {
        launchguard_pipeline::Judged::One(report) => Ok(Document::Analysis(report)),
        launchguard_pipeline::Judged::Ranks(_) => {
            Err(Error::new(format!("{name}: several ranks in one file")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_told_from_traces() {
        assert!(is_document(b"{\"schema\":\"launchguard.check/1\""));
        assert!(is_document(b"{\n  \"schema\": \"launchguard.check/1\""));
        assert!(!is_document(b"{\"traceEvents\": ["));
        assert!(!is_document(b"\x1f\x8b\x08"));
        assert!(!is_document(b""));
    }
}
