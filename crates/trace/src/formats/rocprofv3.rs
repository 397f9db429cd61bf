//! rocprofv3's JSON output (`rocprofv3 --output-format json`: `*_results.json`, plain or gzip).
//!
//! `{"rocprofiler-sdk-tool": [{metadata, agents, strings, kernel_symbols, buffer_records, …}]}`,
//! one element per process. What is read:
//!
//! | record | from |
//! |---|---|
//! | kernel | `buffer_records.kernel_dispatch`: `start_timestamp`, `end_timestamp` (ns), `dispatch_info.agent_id` (device: the agent's `logical_node_type_id`, its index among GPUs), `dispatch_info.queue_id` (stream), `dispatch_info.kernel_id` → `kernel_symbols[].formatted_kernel_name`, `correlation_id.internal` |
//! | copy | `buffer_records.memory_copy`: the GPU agent among `dst_agent_id` and `src_agent_id`; named by its operation |
//! | API call | `buffer_records.hip_api`: named by `strings.buffer_records[kind].operations[operation]` (by name: the numbers change between releases); graph launches kept |
//! | marker | `buffer_records.marker_api`: ranges for `--within` |
//!
//! Parsed with serde into compact records, each list counted against the cap on events as it is
//! read, then resolved: the tables that name things may come anywhere in the object.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use super::{finish, push, Record};
use crate::error::TraceError;
use crate::event::TimelineBuilder;
use crate::input::{self, Input};
use crate::limits::{Cap, Limits};
use crate::Trace;

/// The key that makes a JSON file rocprofv3's.
pub const TOOL_KEY: &str = "rocprofiler-sdk-tool";

/// Whether the text starts an object whose first key is [`TOOL_KEY`] (after a byte order mark
/// and whitespace).
pub fn is_rocprofv3(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let rest = trim(head);
    let Some(rest) = rest.strip_prefix(b"{") else { return false };
    trim(rest).starts_with(format!("\"{TOOL_KEY}\"").as_bytes())
}

fn trim(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

thread_local! {
    /// Records still allowed in this thread's read (the cap on events).
    static BUDGET: Cell<u64> = const { Cell::new(0) };
}

/// What a capped list's error says, to tell a cap from bad JSON.
const CAP_MARK: &str = "launchguard: the cap on events";

/// A list element counted against [`BUDGET`] before it is parsed.
struct Counted<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Counted<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let left = BUDGET.with(Cell::get);
        if left == 0 {
            return Err(D::Error::custom(CAP_MARK));
        }
        BUDGET.with(|b| b.set(left - 1));
        T::deserialize(d).map(Counted)
    }
}

#[derive(Deserialize)]
struct Doc {
    #[serde(rename = "rocprofiler-sdk-tool")]
    tool: Vec<Tool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tool {
    agents: Vec<Counted<Agent>>,
    strings: Strings,
    kernel_symbols: Vec<Counted<Symbol>>,
    buffer_records: Buffers,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Handle {
    handle: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Agent {
    id: Handle,
    #[serde(rename = "type")]
    kind: Option<i64>,
    logical_node_type_id: Option<i64>,
    name: Option<String>,
    product_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Strings {
    buffer_records: Vec<Counted<KindNames>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KindNames {
    kind: String,
    operations: Vec<Counted<String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Symbol {
    kernel_id: u64,
    formatted_kernel_name: Option<String>,
    demangled_kernel_name: Option<String>,
    kernel_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Buffers {
    kernel_dispatch: Vec<Counted<Dispatch>>,
    memory_copy: Vec<Counted<Copy>>,
    hip_api: Vec<Counted<Api>>,
    marker_api: Vec<Counted<Api>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Correlation {
    internal: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct DispatchInfo {
    agent_id: Handle,
    queue_id: Handle,
    kernel_id: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Dispatch {
    correlation_id: Correlation,
    start_timestamp: Option<u64>,
    end_timestamp: Option<u64>,
    dispatch_info: DispatchInfo,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Copy {
    kind: Option<u64>,
    operation: Option<u64>,
    correlation_id: Correlation,
    start_timestamp: Option<u64>,
    end_timestamp: Option<u64>,
    dst_agent_id: Handle,
    src_agent_id: Handle,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Api {
    kind: Option<u64>,
    operation: Option<u64>,
    correlation_id: Correlation,
    start_timestamp: Option<u64>,
    end_timestamp: Option<u64>,
    thread_id: Option<u64>,
}

/// Reads a rocprofv3 JSON file (plain or gzip; the caps of the Kineto reader on inflated text).
pub fn read(path: &Path, limits: &Limits) -> Result<Trace, TraceError> {
    let opened = input::open_with(path, limits)?;
    let source = opened.source;
    BUDGET.with(|b| b.set(limits.max_events));
    let parsed: Result<Doc, serde_json::Error> = match opened.input {
        Input::Plain(map) => serde_json::from_slice(&map),
        Input::Stream(reader) => serde_json::from_reader(BufReader::with_capacity(1 << 16, reader)),
    };
    let doc = parsed.map_err(|e| {
        if e.to_string().contains(CAP_MARK) {
            TraceError::Cap { path: path.to_path_buf(), cap: Cap::Events, what: Cap::Events.what(limits) }
        } else if e.is_io() {
            input::stream_error(path, std::io::Error::from(e), source.gzip, limits)
        } else {
            TraceError::Rocprofv3 { path: path.to_path_buf(), detail: e.to_string() }
        }
    })?;
    let mut b = TimelineBuilder::with_limits(*limits);
    b.meta_mut().profiler = Some("rocprofv3 json".into());
    for tool in &doc.tool {
        fill(tool, &mut b);
        if b.stopped().is_some() {
            break;
        }
    }
    finish(b, source, limits)
}

/// A time in ns as the event rules take it; beyond i64 it is out of range (and skipped).
fn ns(t: Option<u64>) -> Option<i64> {
    t.and_then(|t| i64::try_from(t).ok())
}

fn fill(tool: &Tool, b: &mut TimelineBuilder) {
    // Device labels: a GPU agent's index among GPUs, as HIP numbers devices.
    let mut devices: HashMap<u64, String> = HashMap::new();
    for Counted(a) in &tool.agents {
        let label =
            a.logical_node_type_id.map_or_else(|| format!("agent {}", a.id.handle), |i| i.to_string());
        if a.kind == Some(2) {
            let name = a.product_name.clone().filter(|n| !n.is_empty()).or_else(|| a.name.clone());
            if let Some(name) = name {
                b.meta_mut().device_names.push((label.clone(), name));
            }
        }
        devices.insert(a.id.handle, label);
    }
    let gpu: HashMap<u64, bool> =
        tool.agents.iter().map(|Counted(a)| (a.id.handle, a.kind == Some(2))).collect();
    let device = |h: u64| devices.get(&h).cloned().unwrap_or_else(|| format!("agent {h}"));
    let kernels: HashMap<u64, &str> = tool
        .kernel_symbols
        .iter()
        .map(|Counted(s)| {
            let name = [&s.formatted_kernel_name, &s.demangled_kernel_name, &s.kernel_name]
                .into_iter()
                .flatten()
                .find(|n| !n.is_empty())
                .map_or("", String::as_str);
            (s.kernel_id, name)
        })
        .collect();
    // Operation names by kind, resolved through the names the file gives.
    let op_name = |kind: Option<u64>, op: Option<u64>| -> Option<&str> {
        let k = &tool.strings.buffer_records.get(usize::try_from(kind?).ok()?)?.0;
        Some(k.operations.get(usize::try_from(op?).ok()?)?.0.as_str())
    };
    let br = &tool.buffer_records;
    for Counted(d) in &br.kernel_dispatch {
        let (dev, queue) =
            (device(d.dispatch_info.agent_id.handle), d.dispatch_info.queue_id.handle.to_string());
        let ok = push(
            b,
            &Record {
                cat: "kernel",
                name: kernels.get(&d.dispatch_info.kernel_id).copied().unwrap_or(""),
                device: Some(&dev),
                stream: Some(&queue),
                thread: None,
                start: ns(d.start_timestamp),
                end: ns(d.end_timestamp),
                correlation: d.correlation_id.internal,
            },
        );
        if !ok {
            return;
        }
    }
    for Counted(c) in &br.memory_copy {
        let on = if gpu.get(&c.dst_agent_id.handle) == Some(&true) {
            c.dst_agent_id.handle
        } else {
            c.src_agent_id.handle
        };
        let dev = device(on);
        let ok = push(
            b,
            &Record {
                cat: "gpu_memcpy",
                name: op_name(c.kind, c.operation).unwrap_or("MEMORY_COPY"),
                device: Some(&dev),
                stream: Some("copies"),
                thread: None,
                start: ns(c.start_timestamp),
                end: ns(c.end_timestamp),
                correlation: c.correlation_id.internal,
            },
        );
        if !ok {
            return;
        }
    }
    for (list, cat) in [(&br.hip_api, "hip_runtime"), (&br.marker_api, "user_annotation")] {
        for Counted(a) in list {
            let thread = a.thread_id.map(|t| t.to_string());
            let ok = push(
                b,
                &Record {
                    cat,
                    name: op_name(a.kind, a.operation).unwrap_or(""),
                    device: None,
                    stream: None,
                    thread: thread.as_deref(),
                    start: ns(a.start_timestamp),
                    end: ns(a.end_timestamp),
                    correlation: a.correlation_id.internal,
                },
            );
            if !ok {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_rocprofv3;

    #[test]
    fn told_apart_by_the_first_key() {
        assert!(is_rocprofv3(b"{\"rocprofiler-sdk-tool\": ["));
        assert!(is_rocprofv3(b"\xEF\xBB\xBF \n{\n  \"rocprofiler-sdk-tool\":["));
        assert!(!is_rocprofv3(b"{\"traceEvents\": [], \"rocprofiler-sdk-tool\": []}"));
        assert!(!is_rocprofv3(b"[{\"ph\": \"X\"}]"));
        assert!(!is_rocprofv3(b""));
    }
}
