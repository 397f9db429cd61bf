//! The reference parser: serde_json, one event at a time.
//!
//! Each element of `traceEvents` is parsed into a small [`serde_json::Value`] and dropped after its
//! record is taken, so memory stays bounded by the largest event, never the file. It is the
//! obviously-correct path that the fast scanner is checked against.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::event::{RawEvent, Scalar, TimelineBuilder};
use crate::timeline::{DistributedInfo, TraceMeta};

/// Parses a whole document from `de` into `builder`. On error, the events read before it stay in
/// the builder.
pub(crate) fn parse<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    builder: &mut TimelineBuilder,
) -> Result<bool, serde_json::Error> {
    let mut saw_events = false;
    serde::Deserializer::deserialize_any(&mut *de, Top { builder, saw_events: &mut saw_events })?;
    Ok(saw_events)
}

struct Top<'b> {
    builder: &'b mut TimelineBuilder,
    saw_events: &'b mut bool,
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with traceEvents, or an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        *self.saw_events = true;
        Events { builder: self.builder }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "traceEvents" => {
                    *self.saw_events = true;
                    map.next_value_seed(Events { builder: self.builder })?;
                }
                "baseTimeNanoseconds" | "distributedInfo" | "deviceProperties" | "WARNING" | "ERROR" => {
                    let v: Value = map.next_value()?;
                    apply_header_value(self.builder.meta_mut(), &key, &v);
                }
                key => {
                    if let Some(profiler) = profiler_of_key(key) {
                        note_profiler(self.builder.meta_mut(), profiler);
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Fills the metadata from a header key's value (`baseTimeNanoseconds`, `distributedInfo`,
/// `deviceProperties`); both parsers call it.
pub(crate) fn apply_header_value(meta: &mut TraceMeta, key: &str, v: &Value) {
    match key {
        // Out of range, it is unusable: the ranks' times are shifted by differences of it, which
        // stay within i64 only for bases in 0..=2^61 (see `event::MAX_TIME_NS`).
        "baseTimeNanoseconds" => {
            meta.base_time_ns = value_text(v)
                .and_then(|t| t.parse().ok())
                .filter(|b| (0..=crate::event::MAX_TIME_NS).contains(b))
        }
        "distributedInfo" => meta.distributed = Some(distributed_info(v)),
        "deviceProperties" => meta.device_names = device_names(v),
        "WARNING" | "ERROR" => note_lost_records(meta, v),
        _ => {}
    }
}

/// Keeps the lines of Kineto's logger metadata (`"WARNING": ["…", …]`) that say records were
/// lost: CUPTI's drop counter ("Dropped N activity records") and the buffer cap that ends tracing
/// ("Exceeded max GPU buffer count … terminating tracing").
fn note_lost_records(meta: &mut TraceMeta, v: &Value) {
    const SAYS_LOST: [&str; 4] = ["dropped", "terminating tracing", "stopped early", "buffer overflow"];
    let Some(lines) = v.as_array() else { return };
    for line in lines.iter().filter_map(Value::as_str) {
        if meta.lost_records.len() >= crate::timeline::MAX_PROFILER_MESSAGES {
            return;
        }
        let lower = line.to_ascii_lowercase();
        if SAYS_LOST.iter().any(|w| lower.contains(w)) {
            meta.lost_records.push(line.chars().take(crate::timeline::MAX_PROFILER_MESSAGE_CHARS).collect());
        }
    }
}

/// The profiler backend that a header key names.
pub(crate) fn profiler_of_key(key: &str) -> Option<&'static str> {
    match key {
        "cupti_version" => Some("cupti"),
        "roctracer_version" => Some("roctracer"),
        "rocprofiler-sdk_version" | "rocprofiler_sdk_version" => Some("rocprofiler-sdk"),
        _ => None,
    }
}

pub(crate) fn note_profiler(meta: &mut TraceMeta, profiler: &str) {
    if meta.profiler.is_none() {
        meta.profiler = Some(profiler.to_string());
    }
}

struct Events<'b> {
    builder: &'b mut TimelineBuilder,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            match &v {
                Value::Object(obj) if is_context_event(obj) => {
                    self.builder.push_context(obj.get("args"));
                    self.builder.push(&raw_event(obj));
                }
                Value::Object(obj) => self.builder.push(&raw_event(obj)),
                _ => self.builder.push_non_object(),
            }
            if self.builder.stopped().is_some() {
                // A cap: the reader reports it from the builder, whatever serde makes of this.
                return Err(serde::de::Error::custom("stopped at a cap"));
            }
        }
        Ok(())
    }
}

/// A launchguard context event: metadata (`"ph": "M"`) named [`crate::CONTEXT_EVENT`].
fn is_context_event(obj: &Map<String, Value>) -> bool {
    obj.get("ph").and_then(Value::as_str) == Some("M")
        && obj.get("name").and_then(Value::as_str) == Some(crate::CONTEXT_EVENT)
}

fn scalar(v: Option<&Value>) -> Scalar<'_> {
    match v {
        None => Scalar::Missing,
        Some(Value::Number(n)) => Scalar::Num(Cow::Owned(n.to_string())),
        Some(Value::String(s)) => Scalar::Str(Cow::Borrowed(s)),
        Some(_) => Scalar::Other,
    }
}

fn text(v: Option<&Value>) -> Option<Cow<'_, str>> {
    v.and_then(Value::as_str).map(Cow::Borrowed)
}

fn raw_event(obj: &Map<String, Value>) -> RawEvent<'_> {
    let args = obj.get("args").and_then(Value::as_object);
    let arg = |k: &str| scalar(args.and_then(|a| a.get(k)));
    RawEvent {
        ph: text(obj.get("ph")),
        cat: text(obj.get("cat")),
        name: text(obj.get("name")),
        pid: scalar(obj.get("pid")),
        tid: scalar(obj.get("tid")),
        ts: scalar(obj.get("ts")),
        dur: scalar(obj.get("dur")),
        device: arg("device"),
        stream: arg("stream"),
        correlation: arg("correlation"),
    }
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

pub(crate) fn distributed_info(v: &Value) -> DistributedInfo {
    let num = |k: &str| v.get(k).and_then(value_text).and_then(|t| t.trim().parse().ok());
    DistributedInfo {
        rank: num("rank"),
        world_size: num("world_size"),
        backend: v.get("backend").and_then(Value::as_str).map(str::to_string),
    }
}

pub(crate) fn device_names(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            // Canonical as device labels are, so that `"0"` names device `0`.
            let id = crate::event::canonical_label(&d.get("id").and_then(value_text)?).into_owned();
            let name = d.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            Some((id, name))
        })
        .collect()
}
