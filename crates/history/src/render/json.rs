//! `launchguard.history/1`: the history as one JSON document. A public interface: keys are
//! added, never renamed, within a version.

use super::{Shown, SCHEMA};
use crate::explain::Explanation;

/// `show` as JSON.
pub fn show(s: &Shown) -> serde_json::Value {
    let mut v = serde_json::json!({ "schema": SCHEMA, "launchguard_version": env!("CARGO_PKG_VERSION") });
    if let (Some(obj), Ok(serde_json::Value::Object(rest))) = (v.as_object_mut(), serde_json::to_value(s)) {
        obj.extend(rest);
    }
    v
}

/// `explain` as JSON.
pub fn explanation(e: &Explanation) -> serde_json::Value {
    let mut v = serde_json::json!({ "schema": "launchguard.history-explain/1" });
    if let (Some(obj), Ok(serde_json::Value::Object(rest))) = (v.as_object_mut(), serde_json::to_value(e)) {
        obj.extend(rest);
    }
    v
}
