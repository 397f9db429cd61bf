//! The result document (`launchguard.analysis/1`, `launchguard.check/1`) as pretty-printed JSON
//! text, serialized once from the result and shared by the formats that write or embed it.

use rayon::prelude::*;
use serde::Serialize;

/// Elements of a spliced array rendered per task.
const ITEMS_PER_TASK: usize = 256;

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

    /// [`Document::of`] of a result whose top-level array `key` is long (a serving trace's
    /// thousands of replays): `head` is the result with that array empty, `items` its elements.
    /// The elements are rendered on all cores and set in place; the text is byte for byte what
    /// [`Document::of`] gives for the whole result (pretty JSON writes no raw line feed inside a
    /// string, so an element's text moves two levels in by indenting every line).
    pub fn of_spliced<T: Serialize + ?Sized, E: Serialize + Sync>(
        head: &T,
        key: &str,
        items: &[E],
    ) -> serde_json::Result<Self> {
        let head = Document::of(head)?.0;
        // A top-level member is the only one indented by two spaces.
        let empty = format!("\n  {}: []", serde_json::to_string(key)?);
        let at = match head.match_indices(&empty).map(|(i, _)| i).collect::<Vec<_>>()[..] {
            [at] => at,
            _ => return Err(serde::ser::Error::custom(format!("no empty top-level array {key:?} to fill"))),
        };
        if items.is_empty() {
            return Ok(Document(head));
        }
        let parts = items
            .par_chunks(ITEMS_PER_TASK)
            .map(|chunk| {
                let mut text = Vec::with_capacity(chunk.len() * 512);
                let mut one = Vec::new();
                for item in chunk {
                    one.clear();
                    serde_json::to_writer_pretty(&mut one, item)?;
                    // Two levels in: four spaces after every line feed.
                    for (i, line) in one.split(|&b| b == b'\n').enumerate() {
                        text.extend_from_slice(if i == 0 { b",\n    " } else { b"\n    " });
                        text.extend_from_slice(line);
                    }
                }
                let text = String::from_utf8(text).map_err(serde::ser::Error::custom)?;
                Ok(match crate::escape::json(&text) {
                    std::borrow::Cow::Borrowed(_) => text,
                    std::borrow::Cow::Owned(escaped) => escaped,
                })
            })
            .collect::<serde_json::Result<Vec<String>>>()?;
        let open = at + empty.len() - 1;
        let mut out = String::with_capacity(head.len() + parts.iter().map(String::len).sum::<usize>() + 8);
        out.push_str(&head[..open]);
        // The first element follows `[` without a comma.
        out.push('\n');
        for (i, part) in parts.iter().enumerate() {
            out.push_str(if i == 0 { &part[2..] } else { part });
        }
        out.push_str("\n  ");
        out.push_str(&head[open..]);
        Ok(Document(out))
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

    #[test]
    fn a_spliced_array_reads_as_the_whole_document() {
        // Elements with nested objects, arrays, escapes, a terminal's control character and text
        // that looks like the array's own member; more than one task's worth.
        let items: Vec<serde_json::Value> = (0..700)
            .map(|i| {
                serde_json::json!({
                    "index": i, "name": format!("k\"{i}\"\n\u{1b}[31m \"replays\": []"),
                    "nested": {"a": [1, [2, {}], []], "b": null}, "f": i as f64 / 3.0,
                })
            })
            .collect();
        let whole = |items: &[serde_json::Value]| serde_json::json!({"schema": "s", "nested": {"replays": []}, "replays": items, "z": [1]});
        for n in [0, 1, 2, 255, 256, 257, 700] {
            let spliced = Document::of_spliced(&whole(&[]), "replays", &items[..n]).unwrap();
            assert_eq!(spliced, Document::of(&whole(&items[..n])).unwrap(), "{n} elements");
        }
        // The key must name an empty top-level array.
        assert!(Document::of_spliced(&whole(&[]), "z", &items[..1]).is_err());
        assert!(Document::of_spliced(&whole(&[]), "other", &items[..1]).is_err());
    }
}
