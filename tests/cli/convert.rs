//! Fixtures in other formats made from real Kineto traces at test time: a Kineto trace's events,
//! read here with serde_json on their own (not through launchguard's reader), written as the
//! rocpd database rocprofv3 would have written for the same run, or as the Nsight Systems SQLite
//! export. Each table and column follows its public source, named where it is written:
//!
//! - rocpd: rocprofiler-sdk's `source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql` (tables with
//!   the run's uuid as a suffix; [`RocpdSchema::Rows`] is its current form, times in the rows;
//!   [`RocpdSchema::Timestamps`] its earlier form, times in `rocpd_timestamp`, agent, queue and
//!   thread in `rocpd_track`) and `rocpd_views.sql` (the views without the suffix).
//! - nsys: the "SQLite Schema Reference" of NVIDIA's Nsight Systems user guide, and the tables
//!   and columns of the real exports in `../shared/formats/nsys` (schema 3.25, nsys 2026.2).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::Value;

/// What a Kineto GPU activity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Kernel,
    Memcpy,
    Memset,
}

/// A GPU activity of the Kineto trace.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub kind: Kind,
    pub name: String,
    pub device: i64,
    pub stream: i64,
    pub start: i64,
    pub end: i64,
    pub correlation: Option<i64>,
}

/// A runtime or driver call (`cuda_runtime`, `cuda_driver`).
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub pid: i64,
    pub tid: i64,
    pub start: i64,
    pub end: i64,
    pub correlation: Option<i64>,
}

/// A host `record_function` span (`user_annotation`).
#[derive(Debug, Clone)]
pub struct Range {
    pub name: String,
    pub pid: i64,
    pub tid: i64,
    pub start: i64,
    pub end: i64,
}

/// The events of a Kineto trace that the other formats also record.
#[derive(Debug, Clone, Default)]
pub struct Kineto {
    pub gpu: Vec<Gpu>,
    pub calls: Vec<Call>,
    pub ranges: Vec<Range>,
    /// `deviceProperties`: id → name.
    pub device_names: BTreeMap<i64, String>,
    /// `distributedInfo`.
    pub rank: Option<u64>,
    pub world_size: Option<u64>,
}

/// Kineto's microseconds (`5118046709746.493`) as exact nanoseconds: at most three decimals.
pub fn micros_to_ns(text: &str) -> i64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(frac.len() <= 3 && frac.bytes().all(|b| b.is_ascii_digit()), "µs with more than ns: {text}");
    let frac = format!("{frac:0<3}");
    int.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

fn num_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    num_text(v?)?.parse().ok()
}

/// Reads a Kineto trace (gzip) with serde_json.
pub fn read_kineto(path: &Path) -> Kineto {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut k = Kineto::default();
    for d in doc["deviceProperties"].as_array().into_iter().flatten() {
        k.device_names.insert(int(d.get("id")).unwrap(), d["name"].as_str().unwrap().to_string());
    }
    k.rank = doc["distributedInfo"]["rank"].as_u64();
    k.world_size = doc["distributedInfo"]["world_size"].as_u64();
    for e in doc["traceEvents"].as_array().unwrap() {
        if e["ph"] != "X" {
            continue;
        }
        let start = micros_to_ns(&num_text(&e["ts"]).unwrap());
        let end = start + micros_to_ns(&num_text(&e["dur"]).unwrap());
        let name = e["name"].as_str().unwrap_or("").to_string();
        let args = &e["args"];
        let kind = match e["cat"].as_str().unwrap_or("") {
            "kernel" => Some(Kind::Kernel),
            "gpu_memcpy" => Some(Kind::Memcpy),
            "gpu_memset" => Some(Kind::Memset),
            "cuda_runtime" | "cuda_driver" => {
                k.calls.push(Call {
                    name: name.clone(),
                    pid: int(e.get("pid")).unwrap(),
                    tid: int(e.get("tid")).unwrap(),
                    start,
                    end,
                    correlation: int(args.get("correlation")),
                });
                None
            }
            "user_annotation" => {
                k.ranges.push(Range {
                    name: name.clone(),
                    pid: int(e.get("pid")).unwrap(),
                    tid: int(e.get("tid")).unwrap(),
                    start,
                    end,
                });
                None
            }
            _ => None,
        };
        if let Some(kind) = kind {
            k.gpu.push(Gpu {
                kind,
                name,
                device: int(args.get("device")).or(int(e.get("pid"))).unwrap(),
                stream: int(args.get("stream")).or(int(e.get("tid"))).unwrap(),
                start,
                end,
                correlation: int(args.get("correlation")),
            });
        }
    }
    k
}

/// Which form of rocpd_tables.sql to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RocpdSchema {
    /// Times, agent, queue and thread in each row (the current form).
    Rows,
    /// Times in `rocpd_timestamp`; agent, queue and thread in `rocpd_track` (the earlier form).
    Timestamps,
}

/// The uuid suffix rocprofv3 gives every table of a run.
pub const UUID: &str = "_6f1c0a2e_3b7d_4e8a_9c61_0d2f4b6a8e13";

/// rocprofiler's name of a CUDA call of the same meaning (`cudaGraphLaunch` → `hipGraphLaunch`).
pub fn hip_name(cuda: &str) -> String {
    cuda.strip_prefix("cuda").map_or(cuda.to_string(), |rest| format!("hip{rest}"))
}

/// rocprofiler-sdk's name of a copy's direction (`MEMORY_COPY_DEVICE_TO_DEVICE`), from Kineto's
/// `Memcpy DtoD (Device -> Device)`.
pub fn rocpd_copy_name(kineto: &str) -> String {
    let dir = kineto.strip_prefix("Memcpy ").and_then(|r| r.split(' ').next()).unwrap();
    let side = |c: &str| match c {
        "H" => "HOST",
        "D" => "DEVICE",
        other => panic!("no rocprofiler name for {other}"),
    };
    let (a, b) = dir.split_once("to").unwrap();
    format!("MEMORY_COPY_{}_TO_{}", side(a), side(b))
}

/// Writes `k` as rocprofv3's rocpd database of one process (`pid`), with `RANK` and `WORLD_SIZE`
/// in its environment when the trace has a rank, as torchrun sets them.
pub fn write_rocpd(k: &Kineto, path: &Path, schema: RocpdSchema) {
    assert!(k.gpu.iter().all(|g| g.kind != Kind::Memset), "rocprofv3 records fills as kernels");
    let mut db = Connection::open(path).unwrap();
    let u = UUID;
    let times = match schema {
        RocpdSchema::Rows => r#""start" BIGINT NOT NULL, "end" BIGINT NOT NULL,"#,
        RocpdSchema::Timestamps => r#""start_id" INTEGER NOT NULL, "end_id" INTEGER NOT NULL,"#,
    };
    // rocpd_tables.sql: the tables read, with their columns (JSONB columns as TEXT JSON).
    let where_rows = |rows: &str, track: &str| {
        if schema == RocpdSchema::Rows {
            rows.to_string()
        } else {
            track.to_string()
        }
    };
    let ddl = format!(
        r#"
        CREATE TABLE "rocpd_metadata{u}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "tag" TEXT NOT NULL, "value" TEXT NOT NULL);
        CREATE TABLE `rocpd_string{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
        CREATE TABLE `rocpd_info_node{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "hash" BIGINT NOT NULL UNIQUE, "machine_id" TEXT NOT NULL UNIQUE, "name" TEXT, "system_name" TEXT, "hostname" TEXT, "release" TEXT, "version" TEXT, "hardware_name" TEXT, "domain_name" TEXT);
        CREATE TABLE `rocpd_info_process{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "name" TEXT, "init" BIGINT, "fini" BIGINT, "start" BIGINT, "end" BIGINT, "command" TEXT, "environment" JSONB DEFAULT "{{}}" NOT NULL, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_thread{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL, "name" TEXT, "start" BIGINT, "end" BIGINT, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_agent{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "type" TEXT CHECK ("type" IN ('CPU', 'GPU')), "absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER, "name" TEXT, "generic_name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_queue{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_stream{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_code_object{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "uri" TEXT, "load_base" BIGINT, "load_size" BIGINT, "load_delta" BIGINT, "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')), "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_info_kernel_symbol{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL, "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER, "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER, "group_segment_size" INTEGER, "private_segment_size" INTEGER, "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_track{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER, "tid" INTEGER, "agent_id" INTEGER, "queue_id" INTEGER, "stream_id" INTEGER, "name_id" INTEGER, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_timestamp{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "value" BIGINT NOT NULL, "phase" INTEGER CHECK ("phase" IN (0, 1, 2)), "track_id" INTEGER);
        CREATE TABLE `rocpd_event{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER, "correlation_id" INTEGER, "call_stack" JSONB DEFAULT "{{}}" NOT NULL, "line_info" JSONB DEFAULT "{{}}" NOT NULL, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_region{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, {region_where} {times} "name_id" INTEGER NOT NULL, "event_id" INTEGER, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_kernel_dispatch{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, {kernel_where} "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL, {times} "private_segment_size" INTEGER, "group_segment_size" INTEGER, "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL, "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL, "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, "region_name_id" INTEGER, "event_id" INTEGER, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        CREATE TABLE `rocpd_memory_copy{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT "g" NOT NULL, {copy_where} {times} "name_id" INTEGER NOT NULL, "dst_agent_id" INTEGER, "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER, "size" INTEGER NOT NULL, {copy_queue} "region_name_id" INTEGER, "event_id" INTEGER, "extdata" JSONB DEFAULT "{{}}" NOT NULL);
        INSERT INTO "rocpd_metadata{u}" ("tag", "value") VALUES ('schema_version', '3'), ('uuid', '{u}');
        CREATE VIEW `rocpd_kernel_dispatch` AS SELECT * FROM `rocpd_kernel_dispatch{u}`;
        CREATE VIEW `rocpd_region` AS SELECT * FROM `rocpd_region{u}`;
        CREATE VIEW `rocpd_string` AS SELECT * FROM `rocpd_string{u}`;
        "#,
        region_where = where_rows(
            r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,"#,
            r#""track_id" INTEGER NOT NULL,"#
        ),
        kernel_where = where_rows(
            r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER NOT NULL, "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL,"#,
            r#""track_id" INTEGER NOT NULL,"#
        ),
        copy_where = where_rows(
            r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,"#,
            r#""track_id" INTEGER NOT NULL,"#
        ),
        copy_queue = where_rows(r#""queue_id" INTEGER, "stream_id" INTEGER,"#, ""),
    );
    db.execute_batch(&ddl).unwrap();
    let tx = db.transaction().unwrap();
    let pid = k.calls.first().map_or(1, |c| c.pid);
    tx.execute(
        &format!("INSERT INTO `rocpd_info_node{u}` (id, hash, machine_id, hostname) VALUES (1, 7, 'm', 'h')"),
        [],
    )
    .unwrap();
    let env = match (k.rank, k.world_size) {
        (Some(r), Some(w)) => format!("{{\"RANK\": \"{r}\", \"WORLD_SIZE\": \"{w}\"}}"),
        _ => "{}".into(),
    };
    tx.execute(
        &format!("INSERT INTO `rocpd_info_process{u}` (id, nid, pid, environment) VALUES (1, 1, ?1, ?2)"),
        params![pid, env],
    )
    .unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_code_object{u}` (id, nid, pid) VALUES (1, 1, 1)"), [])
        .unwrap();
    // Strings, interned as rocprofv3 does (UNIQUE).
    let mut strings: BTreeMap<String, i64> = BTreeMap::new();
    let mut string = |tx: &rusqlite::Transaction, s: &str| -> i64 {
        if let Some(&id) = strings.get(s) {
            return id;
        }
        tx.execute(&format!("INSERT INTO `rocpd_string{u}` (string) VALUES (?1)"), [s]).unwrap();
        let id = tx.last_insert_rowid();
        strings.insert(s.to_string(), id);
        id
    };
    // A CPU agent first, as rocprofv3 lists them; then the GPUs, type_index = the device index.
    tx.execute(&format!("INSERT INTO `rocpd_info_agent{u}` (nid, pid, type, absolute_index, logical_index, type_index, name) VALUES (1, 1, 'CPU', 0, 0, 0, 'cpu')"), []).unwrap();
    let mut agents = BTreeMap::new();
    let devices: std::collections::BTreeSet<i64> = k.gpu.iter().map(|g| g.device).collect();
    for d in devices {
        let name = k.device_names.get(&d).cloned();
        tx.execute(
            &format!("INSERT INTO `rocpd_info_agent{u}` (nid, pid, type, absolute_index, logical_index, type_index, name, product_name) VALUES (1, 1, 'GPU', ?1, ?1, ?2, 'gfx942', ?3)"),
            params![d + 1, d, name],
        )
        .unwrap();
        agents.insert(d, tx.last_insert_rowid());
    }
    // Queues: the row id is the Kineto stream number, which labels the stream in both.
    let queues: std::collections::BTreeSet<i64> = k.gpu.iter().map(|g| g.stream).collect();
    for q in &queues {
        tx.execute(
            &format!("INSERT INTO `rocpd_info_queue{u}` (id, nid, pid, name) VALUES (?1, 1, 1, 'queue')"),
            [q],
        )
        .unwrap();
        tx.execute(
            &format!("INSERT INTO `rocpd_info_stream{u}` (id, nid, pid, name) VALUES (?1, 1, 1, 'stream')"),
            [q],
        )
        .unwrap();
    }
    let mut threads = BTreeMap::new();
    for t in k.calls.iter().map(|c| c.tid).chain(k.ranges.iter().map(|r| r.tid)) {
        if let std::collections::btree_map::Entry::Vacant(e) = threads.entry(t) {
            tx.execute(&format!("INSERT INTO `rocpd_info_thread{u}` (nid, pid, tid) VALUES (1, 1, ?1)"), [t])
                .unwrap();
            e.insert(tx.last_insert_rowid());
        }
    }
    let mut symbols = BTreeMap::new();
    // (thread, agent, queue) → track id.
    let mut tracks: BTreeMap<[Option<i64>; 3], i64> = BTreeMap::new();
    let mut track = |tx: &rusqlite::Transaction,
                     tid: Option<i64>,
                     agent: Option<i64>,
                     queue: Option<i64>|
     -> i64 {
        *tracks.entry([tid, agent, queue]).or_insert_with(|| {
            tx.execute(
                &format!("INSERT INTO `rocpd_track{u}` (nid, pid, tid, agent_id, queue_id, stream_id) VALUES (1, 1, ?1, ?2, ?3, ?3)"),
                params![tid, agent, queue],
            )
            .unwrap();
            tx.last_insert_rowid()
        })
    };
    let timestamp = |tx: &rusqlite::Transaction, value: i64, phase: i64, track: i64| -> i64 {
        tx.execute(
            &format!("INSERT INTO `rocpd_timestamp{u}` (value, phase, track_id) VALUES (?1, ?2, ?3)"),
            params![value, phase, track],
        )
        .unwrap();
        tx.last_insert_rowid()
    };
    let event = |tx: &rusqlite::Transaction, category: i64, correlation: Option<i64>| -> i64 {
        tx.execute(
            &format!("INSERT INTO `rocpd_event{u}` (category_id, correlation_id) VALUES (?1, ?2)"),
            params![category, correlation],
        )
        .unwrap();
        tx.last_insert_rowid()
    };
    let (cat_kernel, cat_copy, cat_hip, cat_marker) = (
        string(&tx, "KERNEL_DISPATCH"),
        string(&tx, "MEMORY_COPY"),
        string(&tx, "HIP_RUNTIME_API"),
        string(&tx, "MARKER_CORE_RANGE_API"),
    );
    for (i, g) in k.gpu.iter().enumerate() {
        let agent = agents[&g.device];
        match g.kind {
            Kind::Kernel => {
                let next = symbols.len() as i64 + 1;
                let sym = *symbols.entry(g.name.clone()).or_insert_with(|| {
                    tx.execute(
                        &format!("INSERT INTO `rocpd_info_kernel_symbol{u}` (id, nid, pid, code_object_id, kernel_name, display_name) VALUES (?1, 1, 1, 1, ?2, ?3)"),
                        params![next, format!("{}.kd", g.name), g.name],
                    )
                    .unwrap();
                    next
                });
                let ev = event(&tx, cat_kernel, g.correlation);
                match schema {
                    RocpdSchema::Rows => tx.execute(
                        &format!("INSERT INTO `rocpd_kernel_dispatch{u}` (nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id) VALUES (1, 1, NULL, ?1, ?2, ?3, ?4, ?4, ?5, ?6, 1, 1, 1, 1, 1, 1, ?7)"),
                        params![agent, sym, i as i64 + 1, g.stream, g.start, g.end, ev],
                    ),
                    RocpdSchema::Timestamps => {
                        let tr = track(&tx, None, Some(agent), Some(g.stream));
                        let (s, e) = (timestamp(&tx, g.start, 1, tr), timestamp(&tx, g.end, 2, tr));
                        tx.execute(
                            &format!("INSERT INTO `rocpd_kernel_dispatch{u}` (track_id, kernel_id, dispatch_id, start_id, end_id, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id) VALUES (?1, ?2, ?3, ?4, ?5, 1, 1, 1, 1, 1, 1, ?6)"),
                            params![tr, sym, i as i64 + 1, s, e, ev],
                        )
                    }
                }
                .unwrap();
            }
            Kind::Memcpy => {
                let name = string(&tx, &rocpd_copy_name(&g.name));
                let ev = event(&tx, cat_copy, g.correlation);
                match schema {
                    RocpdSchema::Rows => tx.execute(
                        &format!("INSERT INTO `rocpd_memory_copy{u}` (nid, pid, tid, start, end, name_id, dst_agent_id, src_agent_id, size, queue_id, stream_id, event_id) VALUES (1, 1, NULL, ?1, ?2, ?3, ?4, ?4, 0, ?5, ?5, ?6)"),
                        params![g.start, g.end, name, agent, g.stream, ev],
                    ),
                    RocpdSchema::Timestamps => {
                        let tr = track(&tx, None, Some(agent), Some(g.stream));
                        let (s, e) = (timestamp(&tx, g.start, 1, tr), timestamp(&tx, g.end, 2, tr));
                        tx.execute(
                            &format!("INSERT INTO `rocpd_memory_copy{u}` (track_id, start_id, end_id, name_id, dst_agent_id, src_agent_id, size, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0, ?6)"),
                            params![tr, s, e, name, agent, ev],
                        )
                    }
                }
                .unwrap();
            }
            Kind::Memset => unreachable!(),
        }
    }
    let regions = k
        .calls
        .iter()
        .map(|c| (hip_name(&c.name), c.tid, c.start, c.end, c.correlation, cat_hip))
        .chain(k.ranges.iter().map(|r| (r.name.clone(), r.tid, r.start, r.end, None, cat_marker)));
    for (name, tid, start, end, correlation, category) in regions.collect::<Vec<_>>() {
        let name = string(&tx, &name);
        let ev = event(&tx, category, correlation);
        let thread = threads[&tid];
        match schema {
            RocpdSchema::Rows => tx.execute(
                &format!("INSERT INTO `rocpd_region{u}` (nid, pid, tid, start, end, name_id, event_id) VALUES (1, 1, ?1, ?2, ?3, ?4, ?5)"),
                params![thread, start, end, name, ev],
            ),
            RocpdSchema::Timestamps => {
                let tr = track(&tx, Some(thread), None, None);
                let (s, e) = (timestamp(&tx, start, 1, tr), timestamp(&tx, end, 2, tr));
                tx.execute(
                    &format!("INSERT INTO `rocpd_region{u}` (track_id, name_id, start_id, end_id, event_id) VALUES (?1, ?2, ?3, ?4, ?5)"),
                    params![tr, name, s, e, ev],
                )
            }
        }
        .unwrap();
    }
    tx.commit().unwrap();
}

/// nsys' versioned name of a runtime call, as CUPTI reports it (`cudaGraphLaunch_v10000`).
pub fn nsys_call_name(kineto: &str) -> String {
    let version = match kineto {
        "cudaGraphLaunch" => "v10000",
        "cudaLaunchKernel" => "v7000",
        "cudaStreamIsCapturing" => "v10000",
        _ => "v3020",
    };
    format!("{kineto}_{version}")
}

/// Writes `k` as `nsys export --type sqlite` would: the tables and columns of the real exports
/// (the columns read, and the NOT NULL ones around them); copies by their enum ids, named back
/// through `ENUM_CUDA_MEMCPY_OPER` and `ENUM_CUDA_MEM_KIND` (rows as in the real exports).
pub fn write_nsys(k: &Kineto, path: &Path) {
    let mut db = Connection::open(path).unwrap();
    db.execute_batch(
        r#"
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
        INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer');
        CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
        INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');
        CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
        INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34,'NvtxMark','NvtxMark'),(59,'NvtxPushPopRange','NvtxPushPopRange'),(60,'NvtxStartEndRange','NvtxStartEndRange');
        CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, graphId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
        "#,
    )
    .unwrap();
    let tx = db.transaction().unwrap();
    let mut strings: BTreeMap<String, i64> = BTreeMap::new();
    let mut string = |tx: &rusqlite::Transaction, s: &str| -> i64 {
        let next = strings.len() as i64 + 1;
        *strings.entry(s.to_string()).or_insert_with(|| {
            tx.execute("INSERT INTO StringIds (id, value) VALUES (?1, ?2)", params![next, s]).unwrap();
            next
        })
    };
    for (id, name) in &k.device_names {
        tx.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, ?1, ?2)", params![id, name])
            .unwrap();
    }
    // globalTid / globalPid: nsys' serialized ids, the process in bits 24.., the thread below.
    let global = |pid: i64, tid: i64| (pid << 24) | (tid & 0xFF_FFFF);
    let mem_kind = |label: &str| match label {
        "Pageable" => 0,
        "Pinned" => 1,
        "Device" => 2,
        other => panic!("no memory kind {other}"),
    };
    for g in &k.gpu {
        match g.kind {
            Kind::Kernel => {
                let name = string(&tx, &g.name);
                tx.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?6, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)",
                    params![g.start, g.end, g.device, g.stream, g.correlation, name],
                )
                .unwrap();
            }
            Kind::Memcpy => {
                // Kineto's `Memcpy DtoD (Device -> Device)`.
                let rest = g.name.strip_prefix("Memcpy ").unwrap();
                let (dir, sides) = rest.split_once(' ').unwrap();
                let (src, dst) = sides.trim_matches(|c| c == '(' || c == ')').split_once(" -> ").unwrap();
                let copy_kind = match dir {
                    "HtoD" => 1,
                    "DtoH" => 2,
                    "DtoD" => 8,
                    "PtoP" => 10,
                    other => panic!("no copy kind {other}"),
                };
                tx.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind, dstKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, 0, ?6, ?7, ?8)",
                    params![g.start, g.end, g.device, g.stream, g.correlation, copy_kind, mem_kind(src), mem_kind(dst)],
                )
                .unwrap();
            }
            Kind::Memset => {
                let kind = g.name.strip_prefix("Memset (").and_then(|r| r.strip_suffix(')')).unwrap();
                tx.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, value, bytes, memKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, 0, 0, ?6)",
                    params![g.start, g.end, g.device, g.stream, g.correlation, mem_kind(kind)],
                )
                .unwrap();
            }
        }
    }
    for c in &k.calls {
        let name = string(&tx, &nsys_call_name(&c.name));
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?1, ?2, 0, ?3, ?4, ?5, 0)",
            params![c.start, c.end, global(c.pid, c.tid), c.correlation, name],
        )
        .unwrap();
    }
    for r in &k.ranges {
        tx.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?1, ?2, 59, ?3, ?4)",
            params![r.start, r.end, r.name, global(r.pid, r.tid)],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}
