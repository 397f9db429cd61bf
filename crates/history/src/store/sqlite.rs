//! The history as one SQLite file (SQLite compiled in). Each write is one transaction: a run
//! recorded while another process reads is either all there or not at all; a second writer
//! waits for the first (up to 10 s).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::rows::{self, Row};
use super::sql;
use super::{Mode, Store};
use crate::fingerprint::Fingerprint;
use crate::record::{NewRun, Reset, RunRow};
use crate::schema::{self, Dialect};
use crate::series::SeriesKey;
use crate::{Error, Result};

/// A history in an SQLite file.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

fn err(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        let why = match &e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
                "not a launchguard history (not an SQLite file)".to_string()
            }
            e => e.to_string(),
        };
        Error::new(format!("{}: {why}", path.display()))
    }
}

impl SqliteStore {
    /// Opens (with [`Mode::Create`], creates) the history file at `path` and upgrades its schema.
    /// Anything but a regular file there is refused, as is a file that is not a history.
    pub fn open(path: &Path, mode: Mode) -> Result<Self> {
        match std::fs::metadata(path) {
            Ok(meta) => {
                if let Some(what) = launchguard_files::not_regular(meta.file_type()) {
                    return Err(Error::new(format!("{}: is {what}, not a history file", path.display())));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == Mode::Create => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::new(format!("{}: no history here (record a run first)", path.display())))
            }
            Err(e) => return Err(Error::new(format!("{}: {e}", path.display()))),
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if mode == Mode::Create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(err(path))?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(err(path))?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(err(path))?;
        let mut store = SqliteStore { conn, path: path.to_path_buf() };
        store.migrate()?;
        Ok(store)
    }

    /// Applies the migrations this file lacks, up to `upto` (all of them in real use).
    pub fn migrate_to(&mut self, upto: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err(&path))?;
        tx.execute(schema::SCHEMA_TABLE, []).map_err(err(&path))?;
        let found: i64 = tx.query_row(sql::SCHEMA_VERSION, [], |r| r.get(0)).map_err(err(&path))?;
        schema::check_version(found)?;
        for m in schema::MIGRATIONS.iter().filter(|m| m.version > found && m.version <= upto) {
            for statement in schema::statements(m, Dialect::Sqlite) {
                tx.execute(&statement, []).map_err(err(&path))?;
            }
            tx.execute(&Dialect::Sqlite.sql(sql::RECORD_MIGRATION), params![m.version, m.name, super::now()])
                .map_err(err(&path))?;
        }
        tx.commit().map_err(err(&path))
    }

    fn migrate(&mut self) -> Result<()> {
        self.migrate_to(schema::latest())
    }

    fn q(s: &str) -> String {
        Dialect::Sqlite.sql(s)
    }
}

impl Row for rusqlite::Row<'_> {
    fn int(&self, i: usize) -> Result<i64> {
        self.get(i).map_err(|e| Error::new(e.to_string()))
    }
    fn text(&self, i: usize) -> Result<String> {
        self.get(i).map_err(|e| Error::new(e.to_string()))
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        self.get(i).map_err(|e| Error::new(e.to_string()))
    }
    fn opt_float(&self, i: usize) -> Result<Option<f64>> {
        self.get(i).map_err(|e| Error::new(e.to_string()))
    }
}

impl Store for SqliteStore {
    fn describe(&self) -> String {
        format!("{} (SQLite)", self.path.display())
    }

    fn schema_version(&mut self) -> Result<i64> {
        self.conn.query_row(sql::SCHEMA_VERSION, [], |r| r.get(0)).map_err(err(&self.path))
    }

    fn insert_all(&mut self, runs: &[NewRun]) -> Result<Vec<i64>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err(&path))?;
        let mut ids = Vec::with_capacity(runs.len());
        for run in runs {
            let hash = run.fingerprint.hash();
            tx.execute(&Self::q(sql::INSERT_FINGERPRINT), params![hash, run.fingerprint.to_json()])
                .map_err(err(&path))?;
            let (status, reason) = run.status.parts();
            let identity = serde_json::to_string(&run.identity).expect("strings serialize");
            let id: i64 = tx
                .query_row(
                    &Self::q(sql::INSERT_RUN),
                    params![
                        run.key.preset,
                        run.key.machine,
                        run.key.lane,
                        run.recorded_at,
                        run.kind,
                        run.source,
                        run.verdict,
                        status,
                        reason,
                        run.build,
                        hash,
                        run.document_schema,
                        run.document,
                        identity,
                    ],
                    |r| r.get(0),
                )
                .map_err(err(&path))?;
            {
                let mut st = tx.prepare(&Self::q(sql::INSERT_METRIC)).map_err(err(&path))?;
                for (name, value) in &run.figures {
                    st.execute(params![id, name, value]).map_err(err(&path))?;
                }
            }
            ids.push(id);
        }
        tx.commit().map_err(err(&path))?;
        Ok(ids)
    }

    fn series(&mut self) -> Result<Vec<(SeriesKey, i64)>> {
        let path = self.path.clone();
        let mut st = self.conn.prepare(sql::SERIES).map_err(err(&path))?;
        let rows = st
            .query_map([], |r| {
                Ok((SeriesKey { preset: r.get(0)?, machine: r.get(1)?, lane: r.get(2)? }, r.get(3)?))
            })
            .map_err(err(&path))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err(&path))
    }

    fn runs(&mut self, key: &SeriesKey) -> Result<Vec<RunRow>> {
        let path = self.path.clone();
        let mut st = self.conn.prepare(&Self::q(&sql::runs_of_series())).map_err(err(&path))?;
        let mut rows = st.query(params![key.preset, key.machine, key.lane]).map_err(err(&path))?;
        let mut all = Vec::new();
        while let Some(row) = rows.next().map_err(err(&path))? {
            all.push(Ok(RowCopy::of(row)?));
        }
        rows::fold_runs(all)
    }

    fn run(&mut self, id: i64) -> Result<Option<RunRow>> {
        let path = self.path.clone();
        let mut st = self.conn.prepare(&Self::q(&sql::run_by_id())).map_err(err(&path))?;
        let mut rows = st.query(params![id]).map_err(err(&path))?;
        let mut all = Vec::new();
        while let Some(row) = rows.next().map_err(err(&path))? {
            all.push(Ok(RowCopy::of(row)?));
        }
        Ok(rows::fold_runs(all)?.pop())
    }

    fn fingerprints(&mut self, hashes: &[String]) -> Result<BTreeMap<String, Fingerprint>> {
        let path = self.path.clone();
        let mut st = self.conn.prepare(&Self::q(sql::FINGERPRINT)).map_err(err(&path))?;
        let mut out = BTreeMap::new();
        for h in hashes {
            let body: Option<String> =
                st.query_row(params![h], |r| r.get(0)).optional().map_err(err(&path))?;
            if let Some(body) = body {
                let fp: Fingerprint = serde_json::from_str(&body).map_err(|e| {
                    Error::new(format!("{}: fingerprint {h} unreadable: {e}", path.display()))
                })?;
                out.insert(h.clone(), fp);
            }
        }
        Ok(out)
    }

    fn document(&mut self, id: i64) -> Result<Option<(String, Vec<u8>)>> {
        self.conn
            .query_row(&Self::q(sql::DOCUMENT), params![id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(err(&self.path))
    }

    fn add_reset(&mut self, r: &Reset) -> Result<i64> {
        self.conn
            .query_row(
                &Self::q(sql::INSERT_RESET),
                params![r.key.preset, r.key.machine, r.key.lane, r.run_id, r.metric, r.note, r.created_at],
                |row| row.get(0),
            )
            .map_err(err(&self.path))
    }

    fn resets(&mut self, key: &SeriesKey) -> Result<Vec<Reset>> {
        let path = self.path.clone();
        let mut st = self.conn.prepare(&Self::q(sql::RESETS)).map_err(err(&path))?;
        let mut rows = st.query(params![key.preset, key.machine, key.lane]).map_err(err(&path))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(err(&path))? {
            out.push(rows::reset(row)?);
        }
        Ok(out)
    }
}

/// A run row copied out of SQLite's cursor (whose rows borrow the statement).
struct RowCopy(Vec<rusqlite::types::Value>);

impl RowCopy {
    fn of(row: &rusqlite::Row<'_>) -> Result<Self> {
        let n = row.as_ref().column_count();
        (0..n)
            .map(|i| row.get::<_, rusqlite::types::Value>(i).map_err(|e| Error::new(e.to_string())))
            .collect::<Result<Vec<_>>>()
            .map(RowCopy)
    }
}

impl Row for RowCopy {
    fn int(&self, i: usize) -> Result<i64> {
        match &self.0[i] {
            rusqlite::types::Value::Integer(v) => Ok(*v),
            v => Err(Error::new(format!("column {i}: expected an integer, found {v:?}"))),
        }
    }
    fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?.ok_or_else(|| Error::new(format!("column {i}: unexpected NULL")))
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match &self.0[i] {
            rusqlite::types::Value::Text(s) => Ok(Some(s.clone())),
            rusqlite::types::Value::Null => Ok(None),
            v => Err(Error::new(format!("column {i}: expected text, found {v:?}"))),
        }
    }
    fn opt_float(&self, i: usize) -> Result<Option<f64>> {
        match &self.0[i] {
            rusqlite::types::Value::Real(v) => Ok(Some(*v)),
            rusqlite::types::Value::Integer(v) => Ok(Some(*v as f64)),
            rusqlite::types::Value::Null => Ok(None),
            v => Err(Error::new(format!("column {i}: expected a number, found {v:?}"))),
        }
    }
}
