//! Copying a trace with events added: the input is streamed, never modified, and never held
//! whole. serde_json walks it value by value and each value's exact text (`RawValue`) is copied
//! out, so every number and string of the original survives byte for byte; only whitespace between
//! values changes. A mapped file's values are copied from the map itself, so that one huge event
//! (a 500 MB name) costs no copy of its own; a stream's are held one value at a time. The new events go at the end of `traceEvents` (or of a bare array). A truncated
//! input (a crashed profiler) yields a valid file holding the complete events before the cut.
//!
//! `check` adds its workload context this way; the annotated trace adds its findings.

use std::io::{BufReader, Write};
use std::path::Path;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::TraceError;
use crate::input::{self, Input};

/// Copies the trace at `path` into `out` with `extra` (each one JSON object) appended to its
/// events array.
pub fn append_events(path: &Path, extra: &[String], out: &mut dyn Write) -> Result<(), TraceError> {
    let (input, _) = input::open(path)?;
    let borrowed = matches!(input, Input::Plain(_));
    let mut state = Splicer { out, extra, spliced: false, closed: false, io: None, borrowed };
    let result = match input {
        Input::Plain(map) => {
            let mut de = serde_json::Deserializer::from_slice(&map);
            Top(&mut state).deserialize(&mut de)
        }
        Input::Stream(reader) => {
            let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, reader));
            Top(&mut state).deserialize(&mut de)
        }
    };
    if let Some(source) = state.io.take() {
        return Err(TraceError::Write { path: path.to_path_buf(), error: source });
    }
    match result {
        Ok(()) if state.spliced => Ok(()),
        Ok(()) => {
            Err(TraceError::NotATrace { path: path.to_path_buf(), detail: "no traceEvents array".into() })
        }
        // Cut short after the events were copied: the copy was closed and is valid. Only an end
        // of input is a cut; anything else (invalid text, damaged gzip, a cap) is an error, not a
        // shorter copy.
        Err(e) if state.closed && is_cut(&e) => Ok(()),
        Err(e) => Err(TraceError::NotJson { path: path.to_path_buf(), detail: e.to_string() }),
    }
}

/// Whether the input ended early: the text (serde's end of input) or the gzip stream.
fn is_cut(e: &serde_json::Error) -> bool {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => true,
        Category::Io => e.io_error_kind() == Some(std::io::ErrorKind::UnexpectedEof),
        _ => false,
    }
}

struct Splicer<'a> {
    out: &'a mut dyn Write,
    extra: &'a [String],
    /// The new events are in.
    spliced: bool,
    /// The input ended early and the copy was closed by us.
    closed: bool,
    /// The first write error (serde's error type cannot carry it).
    io: Option<std::io::Error>,
    /// The input is a slice (a mapped file) that values can be borrowed from.
    borrowed: bool,
}

impl Splicer<'_> {
    fn put<E: de::Error>(&mut self, bytes: &[u8]) -> Result<(), E> {
        self.out.write_all(bytes).map_err(|e| {
            let msg = e.to_string();
            self.io.get_or_insert(e);
            E::custom(msg)
        })
    }

    /// Writes the new events after `n` copied ones.
    fn put_extra<E: de::Error>(&mut self, n: u64) -> Result<(), E> {
        for (i, ev) in self.extra.iter().enumerate() {
            self.put(if n + i as u64 == 0 { b"\n" } else { b",\n" })?;
            self.put(ev.as_bytes())?;
        }
        self.spliced = true;
        Ok(())
    }
}

/// One value copied out as its exact text after `sep`, both written once the value is whole (a
/// value cut short writes nothing).
struct CopyRaw<'s, 'a> {
    s: &'s mut Splicer<'a>,
    sep: &'static [u8],
}

impl<'de> DeserializeSeed<'de> for CopyRaw<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        use serde::Deserialize as _;
        let (s, sep) = (self.s, self.sep);
        if s.borrowed {
            let v = <&RawValue>::deserialize(d)?;
            s.put(sep)?;
            s.put(v.get().as_bytes())
        } else {
            let v = Box::<RawValue>::deserialize(d)?;
            s.put(sep)?;
            s.put(v.get().as_bytes())
        }
    }
}

/// The document: an object holding `traceEvents`, or a bare array of events.
struct Top<'s, 'a>(&'s mut Splicer<'a>);

impl<'de> DeserializeSeed<'de> for Top<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a trace: an object with traceEvents or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.0;
        s.put(b"{")?;
        let mut first = true;
        loop {
            let key = match map.next_key::<String>() {
                Ok(Some(k)) => k,
                Ok(None) => break,
                Err(e) => {
                    if s.spliced {
                        s.put(b"\n}\n")?;
                        s.closed = true;
                    }
                    return Err(e);
                }
            };
            if !first {
                s.put(b",\n")?;
            }
            first = false;
            s.put(json_str(&key).as_bytes())?;
            s.put(b": ")?;
            if key == "traceEvents" && !s.spliced {
                map.next_value_seed(Events { s: &mut *s, close: b"]\n}\n" })?;
            } else {
                match map.next_value_seed(CopyRaw { s: &mut *s, sep: b"" }) {
                    Ok(()) => {}
                    Err(e) => {
                        // A later key cut short: drop it, keep what came before.
                        if s.spliced {
                            s.put(b"null\n}\n")?;
                            s.closed = true;
                        }
                        return Err(e);
                    }
                }
            }
        }
        s.put(b"\n}\n")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events { s: self.0, close: b"]\n" }.visit_seq(seq)
    }
}

/// The events array: copied element by element, the new events added at its end.
struct Events<'s, 'a> {
    s: &'s mut Splicer<'a>,
    /// What closes the document when the input is cut short inside the array.
    close: &'static [u8],
}

impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let s = self.s;
        s.put(b"[")?;
        let mut n = 0u64;
        loop {
            let sep: &'static [u8] = if n == 0 { b"\n" } else { b",\n" };
            match seq.next_element_seed(CopyRaw { s: &mut *s, sep }) {
                Ok(Some(())) => n += 1,
                Ok(None) => break,
                Err(e) => {
                    // Cut short inside the events: keep the complete ones, close the document.
                    s.put_extra(n)?;
                    s.put(b"\n")?;
                    s.put(self.close)?;
                    s.closed = true;
                    return Err(e);
                }
            }
        }
        s.put_extra(n)?;
        s.put(b"\n]")
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy of `text` with one event added, or the error.
    fn copy(text: &[u8]) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, text).unwrap();
        let mut out = Vec::new();
        match append_events(&path, &["{\"added\":1}".to_string()], &mut out) {
            Ok(()) => Ok(String::from_utf8(out).unwrap()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn only_an_input_cut_short_gives_a_shorter_copy() {
        let whole = br#"{"traceEvents":[{"a":1},{"b":2},{"c":3}],"x":1}"#;
        let got = copy(whole).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 4);
        // Cut inside the third event: the first two and the added one, closed.
        let cut = copy(&whole[..whole.len() - 14]).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&cut).unwrap();
        assert_eq!(doc["traceEvents"], serde_json::json!([{"a": 1}, {"b": 2}, {"added": 1}]));
        // Invalid text in the same place is not a cut: it was copied as one, and said nothing.
        let invalid = br#"{"traceEvents":[{"a":1},{"b":2},{"c":3x}],"x":1}"#;
        let err = copy(invalid).unwrap_err();
        assert!(err.contains("expected"), "{err}");
    }

    /// A mapped file's values are borrowed, a stream's held: the copies are the same bytes,
    /// cut short or whole.
    #[test]
    fn a_mapped_file_and_a_stream_give_the_same_copy() {
        use std::io::Write as _;
        let whole: &[u8] = br#"{"x":{"a":[1,2.50,"\u00e9"]},"traceEvents":[{"a":1},{"name":"k\n"}],"y":"z"}"#;
        for text in [whole, &whole[..whole.len() - 12]] {
            let dir = tempfile::tempdir().unwrap();
            let gz = dir.path().join("t.json.gz");
            let mut e = flate2::write::GzEncoder::new(
                std::fs::File::create(&gz).unwrap(),
                flate2::Compression::fast(),
            );
            e.write_all(text).unwrap();
            e.finish().unwrap();
            let mut streamed = Vec::new();
            append_events(&gz, &["{\"added\":1}".to_string()], &mut streamed).unwrap();
            assert_eq!(copy(text).unwrap().into_bytes(), streamed);
        }
    }
}
