//! Nsight Systems SQLite exports (`nsys export --type sqlite`).
//!
//! Tables and columns as NVIDIA's exporter documents them (the "SQLite Schema Reference" of the
//! Nsight Systems user guide), read from the columns the file declares:
//!
//! | record | from |
//! |---|---|
//! | kernel | `CUPTI_ACTIVITY_KIND_KERNEL`: `start`, `end`, `deviceId`, `streamId`, `correlationId`, `demangledName` → `StringIds.value` |
//! | copy, fill | `CUPTI_ACTIVITY_KIND_MEMCPY` / `_MEMSET`; named as Kineto names them (`Memcpy DtoD (Device -> Device)`, `Memset (Device)`) through `ENUM_CUDA_MEMCPY_OPER.name` and `ENUM_CUDA_MEM_KIND.label` |
//! | API call | `CUPTI_ACTIVITY_KIND_RUNTIME` (runtime and driver): `nameId` → `StringIds`, `globalTid` (thread: its low 24 bits), `correlationId`; graph launches kept |
//! | range | `NVTX_EVENTS` of the types named `NvtxPushPopRange`, `NvtxStartEndRange` (and their `Nvtxt` forms) in `ENUM_NSYS_EVENT_TYPE`: `text`, else `textId` → `StringIds` |
//! | graph, recorded whole | `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` (`--cuda-graph-trace=graph`): one activity per replay, and a note |
//! | device name | `TARGET_INFO_GPU.name` by `id` |

use std::collections::HashMap;

use super::finish;
use super::rocpd::{add_device_names, int, label, push_row, Lane};
use super::sqlite::{quote, Database};
use crate::error::TraceError;
use crate::event::TimelineBuilder;
use crate::limits::Limits;
use crate::Trace;

/// What a graph recorded whole is named: the kernels in it are not in the export.
pub const GRAPH_LEVEL_NAME: &str = "CUDA graph (recorded at graph level)";

/// The note for a recording made at graph level.
pub const GRAPH_LEVEL_NOTE: &str = "recorded with --cuda-graph-trace=graph (nsys' default): each graph replay is one GPU span, without the kernels in it, so the per-kernel figures of the replays are missing; record with `nsys profile --cuda-graph-trace=node -t cuda` to see them";

/// Reads an export.
pub fn read(db: &Database, limits: &Limits) -> Result<Trace, TraceError> {
    let mut b = TimelineBuilder::with_limits(*limits);
    b.meta_mut().profiler = Some("nsys".into());
    let x = Export { db };
    x.devices(&mut b);
    x.activities(&mut b, "CUPTI_ACTIVITY_KIND_KERNEL", Activity::Kernel)?;
    x.activities(&mut b, "CUPTI_ACTIVITY_KIND_MEMCPY", Activity::Memcpy)?;
    x.activities(&mut b, "CUPTI_ACTIVITY_KIND_MEMSET", Activity::Memset)?;
    let before = b.events();
    x.activities(&mut b, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", Activity::Graph)?;
    if b.events() > before {
        b.meta_mut().notes.push(GRAPH_LEVEL_NOTE.into());
    }
    x.runtime(&mut b)?;
    x.ranges(&mut b)?;
    finish(b, db.source.clone(), limits)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    Kernel,
    Memcpy,
    Memset,
    Graph,
}

struct Export<'a> {
    db: &'a Database,
}

impl Export<'_> {
    fn col(cols: &[String], alias: &str, name: &str) -> String {
        if cols.iter().any(|c| c == name) {
            format!("{alias}.{}", quote(name))
        } else {
            "NULL".into()
        }
    }

    fn rows(&self, sql: &str, each: impl FnMut(&rusqlite::Row<'_>) -> bool) -> Result<(), TraceError> {
        self.db.rows(sql, each)
    }

    /// An enum table's column by id (`ENUM_CUDA_MEM_KIND.label`), empty when absent.
    fn enum_map(&self, table: &str, column: &str) -> Result<HashMap<i64, String>, TraceError> {
        let cols = self.db.columns(table)?;
        let mut out = HashMap::new();
        if cols.iter().any(|c| c == "id") && cols.iter().any(|c| c == column) {
            let sql = format!("SELECT \"id\", {} FROM {} LIMIT 65536", quote(column), quote(table));
            self.rows(&sql, |r| {
                if let (Some(id), Some(v)) = (int(r.get_ref_unwrap(0)), label(r.get_ref_unwrap(1))) {
                    out.insert(id, v);
                }
                true
            })?;
        }
        Ok(out)
    }

    /// `(value, join)` of a `StringIds` reference; `NULL` when the column is missing.
    fn strings_join(&self, expr: &str, alias: &str) -> (String, String) {
        if expr == "NULL" {
            return ("NULL".into(), String::new());
        }
        (format!("{alias}.\"value\""), format!(" LEFT JOIN \"StringIds\" {alias} ON {alias}.\"id\" = {expr}"))
    }

    fn activities(&self, b: &mut TimelineBuilder, table: &str, what: Activity) -> Result<(), TraceError> {
        let cols = self.db.columns(table)?;
        if cols.is_empty() || b.stopped().is_some() {
            return Ok(());
        }
        let c = |n: &str| Self::col(&cols, "X", n);
        let (extra, join) = match what {
            Activity::Kernel => {
                let id = if cols.iter().any(|x| x == "demangledName") {
                    c("demangledName")
                } else {
                    c("shortName")
                };
                let (value, join) = self.strings_join(&id, "S");
                (format!("{value}, NULL, NULL"), join)
            }
            Activity::Memcpy => {
                (format!("{}, {}, {}", c("copyKind"), c("srcKind"), c("dstKind")), String::new())
            }
            Activity::Memset => (format!("{}, NULL, NULL", c("memKind")), String::new()),
            Activity::Graph => (format!("{}, NULL, NULL", c("graphId")), String::new()),
        };
        let sql = format!(
            "SELECT {}, {}, {}, {}, {}, {extra} FROM {} X{join}",
            c("start"),
            c("end"),
            c("deviceId"),
            c("streamId"),
            c("correlationId"),
            quote(table)
        );
        let (opers, kinds) = match what {
            Activity::Memcpy | Activity::Memset => (
                self.enum_map("ENUM_CUDA_MEMCPY_OPER", "name")?,
                self.enum_map("ENUM_CUDA_MEM_KIND", "label")?,
            ),
            _ => (HashMap::new(), HashMap::new()),
        };
        let kind =
            |v: Option<i64>| v.and_then(|k| kinds.get(&k)).map_or("Unknown", String::as_str).to_string();
        self.rows(&sql, |r| {
            let (name, cat) = match what {
                Activity::Kernel => (label(r.get_ref_unwrap(5)).unwrap_or_default(), "kernel"),
                Activity::Memcpy => {
                    let op = int(r.get_ref_unwrap(5))
                        .and_then(|k| opers.get(&k))
                        .map_or("Unknown".into(), |n| copy_kind(n));
                    let name = format!(
                        "Memcpy {op} ({} -> {})",
                        kind(int(r.get_ref_unwrap(6))),
                        kind(int(r.get_ref_unwrap(7)))
                    );
                    (name, "gpu_memcpy")
                }
                Activity::Memset => (format!("Memset ({})", kind(int(r.get_ref_unwrap(5)))), "gpu_memset"),
                Activity::Graph => {
                    let graph = label(r.get_ref_unwrap(5)).map_or(String::new(), |g| format!(" {g}"));
                    (format!("CUDA graph{graph} (recorded at graph level)"), "kernel")
                }
            };
            push_row(b, r, cat, &name, Lane::Gpu, Some(4))
        })
    }

    fn runtime(&self, b: &mut TimelineBuilder) -> Result<(), TraceError> {
        let table = "CUPTI_ACTIVITY_KIND_RUNTIME";
        let cols = self.db.columns(table)?;
        if cols.is_empty() || b.stopped().is_some() {
            return Ok(());
        }
        let c = |n: &str| Self::col(&cols, "X", n);
        let (name, join) = self.strings_join(&c("nameId"), "S");
        let sql = format!(
            "SELECT {}, {}, {}, {name}, {} FROM {} X{join}",
            c("start"),
            c("end"),
            c("globalTid"),
            c("correlationId"),
            quote(table),
        );
        self.host_rows(b, &sql, "cuda_runtime", Some(4))
    }

    /// Pushes the rows `(start, end, globalTid, name, …)` of `sql` as host events of category
    /// `cat`, with the correlation id in cell `correlation` where given.
    fn host_rows(
        &self,
        b: &mut TimelineBuilder,
        sql: &str,
        cat: &str,
        correlation: Option<usize>,
    ) -> Result<(), TraceError> {
        self.rows(sql, |r| {
            let name = label(r.get_ref_unwrap(3)).unwrap_or_default();
            // The thread id is the low 24 bits of nsys' serialized global id.
            let thread = int(r.get_ref_unwrap(2)).map(|g| (g & 0xFF_FFFF).to_string());
            push_row(b, r, cat, &name, Lane::Thread(thread.as_deref()), correlation)
        })
    }

    fn ranges(&self, b: &mut TimelineBuilder) -> Result<(), TraceError> {
        let table = "NVTX_EVENTS";
        let cols = self.db.columns(table)?;
        if cols.is_empty() || b.stopped().is_some() {
            return Ok(());
        }
        let types = self.enum_map("ENUM_NSYS_EVENT_TYPE", "name")?;
        let ranges: Vec<i64> = types
            .iter()
            .filter(|(_, n)| {
                matches!(
                    n.as_str(),
                    "NvtxPushPopRange" | "NvtxStartEndRange" | "NvtxtPushPopRange" | "NvtxtStartEndRange"
                )
            })
            .map(|(id, _)| *id)
            .collect();
        if ranges.is_empty() {
            return Ok(());
        }
        let c = |n: &str| Self::col(&cols, "X", n);
        let list = ranges.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let (registered, join) = self.strings_join(&c("textId"), "S");
        let sql = format!(
            "SELECT {}, {}, {}, COALESCE({}, {registered}) FROM {} X{join} WHERE {} IN ({list})",
            c("start"),
            c("end"),
            c("globalTid"),
            c("text"),
            quote(table),
            c("eventType"),
        );
        self.host_rows(b, &sql, "user_annotation", None)
    }

    fn devices(&self, b: &mut TimelineBuilder) {
        let cols = self.db.columns("TARGET_INFO_GPU").unwrap_or_default();
        if !(cols.iter().any(|c| c == "id") && cols.iter().any(|c| c == "name")) {
            return;
        }
        add_device_names(self.db, b, "SELECT X.\"id\", X.\"name\" FROM \"TARGET_INFO_GPU\" X LIMIT 4096");
    }
}

/// CUPTI's short form of a copy kind from its enum name, as Kineto writes it:
/// `CUDA_MEMCPY_KIND_DTOD` → `DtoD`.
fn copy_kind(name: &str) -> String {
    let short = name.strip_prefix("CUDA_MEMCPY_KIND_").unwrap_or(name);
    match short.split_once("TO") {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => format!("{a}to{b}"),
        _ => short.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn copy_kinds_as_kineto_writes_them() {
        assert_eq!(super::copy_kind("CUDA_MEMCPY_KIND_DTOD"), "DtoD");
        assert_eq!(super::copy_kind("CUDA_MEMCPY_KIND_HTOD"), "HtoD");
        assert_eq!(super::copy_kind("CUDA_MEMCPY_KIND_PTOP"), "PtoP");
        assert_eq!(super::copy_kind("CUDA_MEMCPY_KIND_UNKNOWN"), "UNKNOWN");
    }
}
