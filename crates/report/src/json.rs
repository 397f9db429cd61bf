//! The JSON document, pretty-printed: `launchguard.analysis/1` or `launchguard.check/1`.

use crate::{Export, View};

/// Pretty-printed JSON of the result document.
pub struct Json;

impl Export for Json {
    fn render(&self, view: &View<'_>) -> anyhow::Result<Vec<u8>> {
        Ok(view.document.to_file_bytes())
    }
}
