//! rocpd: rocprofv3's SQLite output (its default since ROCm 7.0), one database per process.
//!
//! Read from the tables the file declares, never from its views: every table carries the run's
//! uuid as a suffix (`rocpd_kernel_dispatch_<uuid>`), and the schema changed between releases
//! (times in the rows, `start`/`end`, or in `rocpd_timestamp` through `start_id`/`end_id`; agent
//! and queue in the row or in `rocpd_track`), so each query is built from the columns the file
//! has. What is read, following rocprofiler-sdk's `source/share/rocprofiler-sdk-rocpd/*.sql`:
//!
//! | record | from |
//! |---|---|
//! | kernel | `rocpd_kernel_dispatch`: times, agent (device: the agent's `type_index`), queue (stream), `rocpd_info_kernel_symbol.display_name`, `rocpd_event.correlation_id` |
//! | copy | `rocpd_memory_copy`: times, the GPU agent among destination and source, queue, its name in `rocpd_string` |
//! | API call, marker | `rocpd_region`: times, `rocpd_info_thread.tid`, name in `rocpd_string`; the event's category (`rocpd_event.category_id` → `rocpd_string`) tells markers (`MARKER_*`, spans for `--within`) from HIP calls (graph launches kept) |
//! | device name | `rocpd_info_agent.product_name` of GPU agents |
//! | rank | `RANK` and `WORLD_SIZE` in `rocpd_info_process.environment`, when the process had them |

use rusqlite::types::ValueRef;

use super::sqlite::{quote, Database};
use super::{finish, push, Record};
use crate::error::TraceError;
use crate::event::TimelineBuilder;
use crate::limits::Limits;
use crate::timeline::DistributedInfo;
use crate::Trace;

/// Reads every run (uuid) the database holds into one timeline.
pub fn read(db: &Database, limits: &Limits) -> Result<Trace, TraceError> {
    let suffixes: Vec<String> = db
        .tables
        .iter()
        .filter_map(|t| t.strip_prefix("rocpd_kernel_dispatch"))
        .map(str::to_string)
        .collect();
    let mut b = TimelineBuilder::with_limits(*limits);
    b.meta_mut().profiler = Some("rocpd".into());
    for s in &suffixes {
        let run = Run::new(db, s)?;
        run.meta(&mut b);
        run.kernels(&mut b)?;
        run.copies(&mut b)?;
        run.regions(&mut b)?;
        if b.stopped().is_some() {
            break;
        }
    }
    finish(b, db.source.clone(), limits)
}

/// The tables of one run (one uuid suffix).
struct Run<'a> {
    db: &'a Database,
    suffix: &'a str,
}

/// Where a row's event ran, for [`push_row`].
#[derive(Clone, Copy)]
pub(crate) enum Lane<'a> {
    /// On a GPU: the device and stream (queue) labels are the row's cells 2 and 3.
    Gpu,
    /// On a host thread, labelled as given.
    Thread(Option<&'a str>),
}

/// Pushes the event of a row whose cells 0 and 1 are its start and end (nanoseconds) and whose
/// cell `correlation`, where given, is its correlation id; `false` once the builder stopped.
pub(crate) fn push_row(
    b: &mut TimelineBuilder,
    r: &rusqlite::Row<'_>,
    cat: &str,
    name: &str,
    lane: Lane<'_>,
    correlation: Option<usize>,
) -> bool {
    let (device, stream, thread) = match lane {
        Lane::Gpu => (label(r.get_ref_unwrap(2)), label(r.get_ref_unwrap(3)), None),
        Lane::Thread(t) => (None, None, t),
    };
    push(
        b,
        &Record {
            cat,
            name,
            device: device.as_deref(),
            stream: stream.as_deref(),
            thread,
            start: int(r.get_ref_unwrap(0)),
            end: int(r.get_ref_unwrap(1)),
            correlation: correlation
                .and_then(|i| int(r.get_ref_unwrap(i)))
                .and_then(|c| u64::try_from(c).ok()),
        },
    )
}

/// One GPU activity from a row `(start, end, agent, queue, name, correlation id)`, as the kernel
/// and copy queries select it; `unnamed` where the name is null.
fn push_gpu_row(b: &mut TimelineBuilder, r: &rusqlite::Row<'_>, cat: &str, unnamed: &str) -> bool {
    let name = label(r.get_ref_unwrap(4));
    push_row(b, r, cat, name.as_deref().unwrap_or(unnamed), Lane::Gpu, Some(5))
}

/// Adds the `(id, name)` pairs that `sql` selects to the device names; a failing query adds none,
/// since names are decoration and no reason to refuse the trace.
pub(crate) fn add_device_names(db: &Database, b: &mut TimelineBuilder, sql: &str) {
    let mut names = Vec::new();
    let _ = db.rows(sql, |r| {
        if let (Some(id), Some(name)) = (label(r.get_ref_unwrap(0)), label(r.get_ref_unwrap(1))) {
            names.push((id, name));
        }
        true
    });
    b.meta_mut().device_names.extend(names);
}

/// An integer from a cell of any type (SQLite's columns are not typed): `None` otherwise.
pub(crate) fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    }
}

/// A label from a cell: integers as decimal text, text as it is (invalid UTF-8 replaced).
pub(crate) fn label(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    }
}

impl<'a> Run<'a> {
    fn new(db: &'a Database, suffix: &'a str) -> Result<Self, TraceError> {
        Ok(Run { db, suffix })
    }

    /// The table `rocpd_{name}{uuid}`, if the file declares it as a table.
    fn table(&self, name: &str) -> Option<String> {
        let t = format!("rocpd_{name}{}", self.suffix);
        self.db.has_table(&t).then_some(t)
    }

    fn cols(&self, table: &Option<String>) -> Result<Vec<String>, TraceError> {
        table.as_deref().map_or(Ok(Vec::new()), |t| self.db.columns(t))
    }

    /// `alias."col"` for the first of `names` the table has, else `NULL`.
    fn pick(alias: &str, cols: &[String], names: &[&str]) -> String {
        let have: Vec<String> = names
            .iter()
            .filter(|n| cols.iter().any(|c| c == *n))
            .map(|n| format!("{alias}.{}", quote(n)))
            .collect();
        match have.len() {
            0 => "NULL".into(),
            1 => have[0].clone(),
            _ => format!("COALESCE({})", have.join(", ")),
        }
    }

    /// The start and end expressions and the joins they need, for a table aliased `X` with
    /// columns `cols`: in the row, or in `rocpd_timestamp`.
    fn times(&self, cols: &[String]) -> Result<(String, String, String), TraceError> {
        let has = |c: &str| cols.iter().any(|x| x == c);
        if has("start") && has("end") {
            return Ok(("X.\"start\"".into(), "X.\"end\"".into(), String::new()));
        }
        let ts = self.table("timestamp");
        if let (true, true, Some(ts)) = (has("start_id"), has("end_id"), ts) {
            let q = quote(&ts);
            let joins = format!(
                " LEFT JOIN {q} T0 ON T0.\"id\" = X.\"start_id\" LEFT JOIN {q} T1 ON T1.\"id\" = X.\"end_id\""
            );
            return Ok(("T0.\"value\"".into(), "T1.\"value\"".into(), joins));
        }
        Err(self.db.unusable("a rocpd table without start/end times (neither start and end, nor start_id and end_id with rocpd_timestamp)"))
    }

    /// An expression of the row's `col` (agent_id, queue_id, tid), from the row or its track.
    fn via_track(&self, cols: &[String], track_cols: &[String], col: &str) -> String {
        if cols.iter().any(|c| c == col) {
            format!("X.{}", quote(col))
        } else if track_cols.iter().any(|c| c == col) && cols.iter().any(|c| c == "track_id") {
            format!("TR.{}", quote(col))
        } else {
            "NULL".into()
        }
    }

    fn track_join(&self, cols: &[String]) -> (Vec<String>, String) {
        let track = self.table("track");
        match (&track, cols.iter().any(|c| c == "track_id")) {
            (Some(t), true) => (
                self.db.columns(t).unwrap_or_default(),
                format!(" LEFT JOIN {} TR ON TR.\"id\" = X.\"track_id\"", quote(t)),
            ),
            _ => (Vec::new(), String::new()),
        }
    }

    /// An agent's device label (its index among GPUs), joined as `alias` on `agent_expr`.
    fn agent(&self, alias: &str, agent_expr: &str) -> Result<(String, String, String), TraceError> {
        let agents = self.table("info_agent");
        let cols = self.cols(&agents)?;
        match agents {
            Some(t) if agent_expr != "NULL" => {
                let label = Self::pick(alias, &cols, &["type_index", "logical_index", "id"]);
                let is_gpu = if cols.iter().any(|c| c == "type") {
                    format!("{alias}.\"type\" = 'GPU'")
                } else {
                    "1".into()
                };
                Ok((
                    label,
                    format!(" LEFT JOIN {} {alias} ON {alias}.\"id\" = {agent_expr}", quote(&t)),
                    is_gpu,
                ))
            }
            _ => Ok((agent_expr.to_string(), String::new(), "1".into())),
        }
    }

    /// `(expression, join)` of a column through `rocpd_event` (correlation id, category).
    fn event(&self, cols: &[String]) -> Result<(Vec<String>, String), TraceError> {
        let ev = self.table("event");
        match (&ev, cols.iter().any(|c| c == "event_id")) {
            (Some(t), true) => {
                Ok((self.db.columns(t)?, format!(" LEFT JOIN {} E ON E.\"id\" = X.\"event_id\"", quote(t))))
            }
            _ => Ok((Vec::new(), String::new())),
        }
    }

    /// Runs `sql` and hands each row to `each` until it says stop.
    fn rows(&self, sql: &str, each: impl FnMut(&rusqlite::Row<'_>) -> bool) -> Result<(), TraceError> {
        self.db.rows(sql, each)
    }

    fn kernels(&self, b: &mut TimelineBuilder) -> Result<(), TraceError> {
        let Some(kd) = self.table("kernel_dispatch") else { return Ok(()) };
        let cols = self.db.columns(&kd)?;
        let (start, end, time_joins) = self.times(&cols)?;
        let (track_cols, track_join) = self.track_join(&cols);
        let (device, agent_join, _) = self.agent("A", &self.via_track(&cols, &track_cols, "agent_id"))?;
        let queue = self.via_track(&cols, &track_cols, "queue_id");
        let (ev_cols, ev_join) = self.event(&cols)?;
        let corr = Self::pick("E", &ev_cols, &["correlation_id"]);
        let (name, sym_join) = match self.table("info_kernel_symbol") {
            Some(t) if cols.iter().any(|c| c == "kernel_id") => (
                Self::pick("KS", &self.db.columns(&t)?, &["display_name", "kernel_name"]),
                format!(" LEFT JOIN {} KS ON KS.\"id\" = X.\"kernel_id\"", quote(&t)),
            ),
            _ => ("NULL".into(), String::new()),
        };
        let sql = format!(
            "SELECT {start}, {end}, {device}, {queue}, {name}, {corr} FROM {} X{time_joins}{track_join}{agent_join}{ev_join}{sym_join}",
            quote(&kd)
        );
        self.rows(&sql, |r| push_gpu_row(b, r, "kernel", ""))
    }

    fn copies(&self, b: &mut TimelineBuilder) -> Result<(), TraceError> {
        let Some(mc) = self.table("memory_copy") else { return Ok(()) };
        let cols = self.db.columns(&mc)?;
        let (start, end, time_joins) = self.times(&cols)?;
        let (track_cols, track_join) = self.track_join(&cols);
        let (dst, dst_join, dst_gpu) = self.agent("DA", &Self::pick("X", &cols, &["dst_agent_id"]))?;
        let (src, src_join, _) = self.agent("SA", &Self::pick("X", &cols, &["src_agent_id"]))?;
        let device = format!("CASE WHEN {dst_gpu} THEN {dst} ELSE {src} END");
        let queue = self.via_track(&cols, &track_cols, "queue_id");
        let (ev_cols, ev_join) = self.event(&cols)?;
        let corr = Self::pick("E", &ev_cols, &["correlation_id"]);
        let (name, name_join) = self.string_join(&cols, "name_id", "S")?;
        let sql = format!(
            "SELECT {start}, {end}, {device}, {queue}, {name}, {corr} FROM {} X{time_joins}{track_join}{dst_join}{src_join}{ev_join}{name_join}",
            quote(&mc)
        );
        self.rows(&sql, |r| push_gpu_row(b, r, "gpu_memcpy", "memory copy"))
    }

    /// `(S.string, join)` of a `rocpd_string` id column of the row.
    fn string_join(&self, cols: &[String], col: &str, alias: &str) -> Result<(String, String), TraceError> {
        match self.table("string") {
            Some(t) if cols.iter().any(|c| c == col) => Ok((
                Self::pick(alias, &self.db.columns(&t)?, &["string"]),
                format!(" LEFT JOIN {} {alias} ON {alias}.\"id\" = X.{}", quote(&t), quote(col)),
            )),
            _ => Ok(("NULL".into(), String::new())),
        }
    }

    fn regions(&self, b: &mut TimelineBuilder) -> Result<(), TraceError> {
        let Some(rg) = self.table("region") else { return Ok(()) };
        let cols = self.db.columns(&rg)?;
        let (start, end, time_joins) = self.times(&cols)?;
        let (track_cols, track_join) = self.track_join(&cols);
        let tid_ref = self.via_track(&cols, &track_cols, "tid");
        let (tid, thread_join) = match self.table("info_thread") {
            Some(t) if tid_ref != "NULL" => (
                Self::pick("TH", &self.db.columns(&t)?, &["tid"]),
                format!(" LEFT JOIN {} TH ON TH.\"id\" = {tid_ref}", quote(&t)),
            ),
            _ => (tid_ref, String::new()),
        };
        let (ev_cols, ev_join) = self.event(&cols)?;
        let corr = Self::pick("E", &ev_cols, &["correlation_id"]);
        let (name, name_join) = self.string_join(&cols, "name_id", "S")?;
        let (category, cat_join) = match self.table("string") {
            Some(t) if ev_cols.iter().any(|c| c == "category_id") => (
                "C.\"string\"".to_string(),
                format!(" LEFT JOIN {} C ON C.\"id\" = E.\"category_id\"", quote(&t)),
            ),
            _ => ("NULL".into(), String::new()),
        };
        let sql = format!(
            "SELECT {start}, {end}, {tid}, {name}, {corr}, {category} FROM {} X{time_joins}{track_join}{thread_join}{ev_join}{name_join}{cat_join}",
            quote(&rg)
        );
        self.rows(&sql, |r| {
            let (thread, name, category) =
                (label(r.get_ref_unwrap(2)), label(r.get_ref_unwrap(3)), label(r.get_ref_unwrap(5)));
            let marker = category.as_deref().is_some_and(|c| c.starts_with("MARKER_"));
            let cat = if marker { "user_annotation" } else { "hip_runtime" };
            push_row(b, r, cat, name.as_deref().unwrap_or(""), Lane::Thread(thread.as_deref()), Some(4))
        })
    }

    /// Device names and the rank, where the run has them.
    fn meta(&self, b: &mut TimelineBuilder) {
        if let Some(t) = self.table("info_agent") {
            let cols = self.db.columns(&t).unwrap_or_default();
            let id = Self::pick("X", &cols, &["type_index", "logical_index", "id"]);
            let name = Self::pick("X", &cols, &["product_name", "model_name", "name"]);
            let gpu = if cols.iter().any(|c| c == "type") { "WHERE X.\"type\" = 'GPU'" } else { "" };
            let sql = format!("SELECT {id}, {name} FROM {} X {gpu} LIMIT 4096", quote(&t));
            add_device_names(self.db, b, &sql);
        }
        if let Some(t) = self.table("info_process") {
            if self.db.columns(&t).unwrap_or_default().iter().any(|c| c == "environment") {
                let sql = format!(
                    "SELECT json_extract(X.\"environment\", '$.RANK'), json_extract(X.\"environment\", '$.WORLD_SIZE') FROM {} X LIMIT 1",
                    quote(&t)
                );
                let mut found = None;
                // A malformed environment is no reason to refuse the kernels: the rank stays unknown.
                let _ = self.rows(&sql, |r| {
                    let num = |v: Option<String>| v.and_then(|s| s.trim().parse::<u64>().ok());
                    found = Some((num(label(r.get_ref_unwrap(0))), num(label(r.get_ref_unwrap(1)))));
                    false
                });
                if let Some((Some(rank), world_size)) = found {
                    b.meta_mut().distributed =
                        Some(DistributedInfo { rank: Some(rank), world_size, backend: None });
                }
            }
        }
    }
}
