//! The result document (`launchguard.analysis/1`, `launchguard.check/1`) as pretty-printed JSON
//! text, serialized once from the result and shared by the formats that write or embed it.

use serde::Serialize;

/// The pretty-printed JSON of a result. Serializing straight to text, without an intermediate
/// `serde_json::Value`, took a third of the time the whole output took on traces with thousands
/// of replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document(String);

impl Document {
    /// Serializes `result`, every character that could drive a terminal as a `\u` escape.
    pub fn of<T: Serialize + ?Sized>(result: &T) -> serde_json::Result<Self> {
        serde_json::to_string_pretty(result).map(|text| Document(crate::escape::json(&text).into_owned()))
    }

    /// The pretty-printed text, without a final line feed.
    pub fn pretty(&self) -> &str {
        &self.0
    }

    /// The same document on one line, for embedding.
    pub fn compact(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.0)
            .and_then(|v| serde_json::to_string(&v))
            .unwrap_or_default()
    }

    /// The pretty-printed text with a final line feed: the bytes of a `.json` file.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        out.extend_from_slice(self.0.as_bytes());
        out.push(b'\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Document;

    #[test]
    fn pretty_and_compact_hold_the_same_value() {
        let value =
            serde_json::json!({"schema": "launchguard.analysis/1", "occupancy": 0.7059313, "gaps": [1, 2]});
        let doc = Document::of(&value).unwrap();
        assert_eq!(doc.pretty(), serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(
            doc.compact(),
            r#"{"schema":"launchguard.analysis/1","occupancy":0.7059313,"gaps":[1,2]}"#
        );
        assert_eq!(doc.to_file_bytes().last(), Some(&b'\n'));
    }
}
