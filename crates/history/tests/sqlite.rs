//! The SQLite store: real results recorded and read back, schema upgrades, hostile files.

mod common;

use launchguard_history::schema;
use launchguard_history::store::sqlite::SqliteStore;
use launchguard_history::store::{Mode, Store};

#[test]
fn real_results_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("h.db"), Mode::Create).unwrap();
    common::exercise(&mut store);
}

#[test]
fn an_older_file_is_upgraded_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let doc = launchguard_history::import::read(&common::reference_runs()[0]).unwrap();
    {
        // A file as the first version of the schema left it, with a run in it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(schema::SCHEMA_TABLE, []).unwrap();
        for st in schema::statements(&schema::MIGRATIONS[0], schema::Dialect::Sqlite) {
            conn.execute(&st, []).unwrap();
        }
        conn.execute("INSERT INTO lg_schema VALUES (1, 'runs', '2026-01-01T00:00:00Z')", []).unwrap();
        let run = launchguard_history::record::new_run(&doc, &Default::default()).unwrap();
        conn.execute(
            "INSERT INTO lg_fingerprints VALUES (?1, ?2)",
            rusqlite::params![run.fingerprint.hash(), run.fingerprint.to_json()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO lg_runs (preset, machine, lane, recorded_at, kind, verdict, status, fingerprint, document_schema, document, identity) VALUES ('reference', 'NVIDIA H200', 'default', 'then', 'check', 'warn', 'ok', ?1, 'launchguard.check/1', ?2, '{}')",
            rusqlite::params![run.fingerprint.hash(), run.document],
        )
        .unwrap();
    }
    let mut store = SqliteStore::open(&path, Mode::Existing).unwrap();
    assert_eq!(store.schema_version().unwrap(), schema::latest());
    let series = store.series().unwrap();
    assert_eq!(series[0].1, 1, "the old run is kept");
    // The table the second migration adds works.
    assert!(store.resets(&series[0].0).unwrap().is_empty());
    let names: Vec<String> = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut st = conn.prepare("SELECT name FROM lg_schema ORDER BY version").unwrap();
        st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(names.len(), schema::MIGRATIONS.len());
}

#[test]
fn a_newer_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(SqliteStore::open(&path, Mode::Create).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO lg_schema VALUES (99, 'from the future', 'later')", []).unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let e = SqliteStore::open(&path, Mode::Existing).err().unwrap().to_string();
    assert!(e.contains("schema version 99") && e.contains("newer launchguard"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn what_is_not_a_history_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some text that is long enough to be read".repeat(20))
        .unwrap();
    let e = SqliteStore::open(&text, Mode::Existing).err().unwrap().to_string();
    assert!(e.contains("not a launchguard history"), "{e}");
    assert!(!e.contains('\n'));
    let e = SqliteStore::open(dir.path(), Mode::Create).err().unwrap().to_string();
    assert!(e.contains("not a history file"), "{e}");
    let e = SqliteStore::open(&dir.path().join("missing.db"), Mode::Existing).err().unwrap().to_string();
    assert!(e.contains("no history here"), "{e}");
    assert!(!dir.path().join("missing.db").exists(), "reading never creates");
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = SqliteStore::open(&fifo, Mode::Create).err().unwrap().to_string();
    assert!(e.contains("FIFO"), "{e}");
}

extern "C" {
    #[link_name = "mkfifo"]
    fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}
