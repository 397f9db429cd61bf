//! The history on a PostgreSQL server, for a team whose CI runners share one. The schema is
//! upgraded under an advisory lock, so runners that start together migrate it once.

use std::collections::BTreeMap;

use postgres::{Client, NoTls};

use super::rows::{self, Row};
use super::sql;
use super::Store;
use crate::fingerprint::Fingerprint;
use crate::record::{NewRun, Reset, RunRow};
use crate::schema::{self, Dialect};
use crate::series::SeriesKey;
use crate::{Error, Result};

/// The advisory lock key held while migrating ("lg-hist" in ASCII).
const MIGRATION_LOCK: i64 = 0x006c_672d_6869_7374;

/// A history on a PostgreSQL server.
pub struct PostgresStore {
    client: Client,
    shown: String,
}

fn err(e: postgres::Error) -> Error {
    // The server's own message where there is one ("relation … does not exist"), else the client's.
    match e.as_db_error() {
        Some(db) => Error::new(format!("PostgreSQL: {}", db.message())),
        None => Error::new(format!("PostgreSQL: {e}")),
    }
}

impl PostgresStore {
    /// Connects (`postgres://user@host:port/db`, or the key=value form) and upgrades the schema.
    pub fn connect(url: &str) -> Result<Self> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| Error::new(format!("--history: not a PostgreSQL connection string: {e}")))?;
        // Where, without the password, for messages.
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let shown = format!(
            "PostgreSQL at {}/{}",
            hosts.join(","),
            config.get_dbname().unwrap_or(config.get_user().unwrap_or(""))
        );
        let client =
            config.connect(NoTls).map_err(|e| Error::new(format!("{shown}: cannot connect: {e}")))?;
        let mut store = PostgresStore { client, shown };
        store.migrate_to(schema::latest())?;
        Ok(store)
    }

    /// Applies the migrations the database lacks, up to `upto` (all of them in real use).
    pub fn migrate_to(&mut self, upto: i64) -> Result<()> {
        let mut tx = self.client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(err)?;
        tx.batch_execute(schema::SCHEMA_TABLE).map_err(err)?;
        let found: i64 = tx.query_one(sql::SCHEMA_VERSION, &[]).map_err(err)?.get(0);
        schema::check_version(found)?;
        for m in schema::MIGRATIONS.iter().filter(|m| m.version > found && m.version <= upto) {
            for statement in schema::statements(m, Dialect::Postgres) {
                tx.batch_execute(&statement).map_err(err)?;
            }
            tx.execute(sql::RECORD_MIGRATION, &[&m.version, &m.name, &super::now()]).map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}

impl Row for postgres::Row {
    fn int(&self, i: usize) -> Result<i64> {
        self.try_get(i).map_err(err)
    }
    fn text(&self, i: usize) -> Result<String> {
        self.try_get(i).map_err(err)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        self.try_get(i).map_err(err)
    }
    fn opt_float(&self, i: usize) -> Result<Option<f64>> {
        self.try_get(i).map_err(err)
    }
}

impl Store for PostgresStore {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn schema_version(&mut self) -> Result<i64> {
        Ok(self.client.query_one(sql::SCHEMA_VERSION, &[]).map_err(err)?.get(0))
    }

    fn insert_all(&mut self, runs: &[NewRun]) -> Result<Vec<i64>> {
        let mut tx = self.client.transaction().map_err(err)?;
        let st = tx.prepare(sql::INSERT_METRIC).map_err(err)?;
        let mut ids = Vec::with_capacity(runs.len());
        for run in runs {
            let hash = run.fingerprint.hash();
            tx.execute(sql::INSERT_FINGERPRINT, &[&hash, &run.fingerprint.to_json()]).map_err(err)?;
            let (status, reason) = run.status.parts();
            let identity = serde_json::to_string(&run.identity).expect("strings serialize");
            let id: i64 = tx
                .query_one(
                    sql::INSERT_RUN,
                    &[
                        &run.key.preset,
                        &run.key.machine,
                        &run.key.lane,
                        &run.recorded_at,
                        &run.kind,
                        &run.source,
                        &run.verdict,
                        &status,
                        &reason,
                        &run.build,
                        &hash,
                        &run.document_schema,
                        &run.document,
                        &identity,
                    ],
                )
                .map_err(err)?
                .get(0);
            for (name, value) in &run.figures {
                tx.execute(&st, &[&id, name, value]).map_err(err)?;
            }
            ids.push(id);
        }
        tx.commit().map_err(err)?;
        Ok(ids)
    }

    fn series(&mut self) -> Result<Vec<(SeriesKey, i64)>> {
        let rows = self.client.query(sql::SERIES, &[]).map_err(err)?;
        rows.iter()
            .map(|r| {
                Ok((
                    SeriesKey {
                        preset: r.try_get(0).map_err(err)?,
                        machine: r.try_get(1).map_err(err)?,
                        lane: r.try_get(2).map_err(err)?,
                    },
                    r.try_get(3).map_err(err)?,
                ))
            })
            .collect()
    }

    fn runs(&mut self, key: &SeriesKey) -> Result<Vec<RunRow>> {
        let rows = self
            .client
            .query(&sql::runs_of_series(), &[&key.preset, &key.machine, &key.lane])
            .map_err(err)?;
        rows::fold_runs(rows.into_iter().map(Ok))
    }

    fn run(&mut self, id: i64) -> Result<Option<RunRow>> {
        let rows = self.client.query(&sql::run_by_id(), &[&id]).map_err(err)?;
        Ok(rows::fold_runs(rows.into_iter().map(Ok))?.pop())
    }

    fn fingerprints(&mut self, hashes: &[String]) -> Result<BTreeMap<String, Fingerprint>> {
        let st = self.client.prepare(sql::FINGERPRINT).map_err(err)?;
        let mut out = BTreeMap::new();
        for h in hashes {
            if let Some(row) = self.client.query_opt(&st, &[h]).map_err(err)? {
                let body: String = row.try_get(0).map_err(err)?;
                let fp: Fingerprint = serde_json::from_str(&body)
                    .map_err(|e| Error::new(format!("{}: fingerprint {h} unreadable: {e}", self.shown)))?;
                out.insert(h.clone(), fp);
            }
        }
        Ok(out)
    }

    fn document(&mut self, id: i64) -> Result<Option<(String, Vec<u8>)>> {
        let row = self.client.query_opt(sql::DOCUMENT, &[&id]).map_err(err)?;
        row.map(|r| Ok((r.try_get(0).map_err(err)?, r.try_get(1).map_err(err)?))).transpose()
    }

    fn add_reset(&mut self, r: &Reset) -> Result<i64> {
        let row = self
            .client
            .query_one(
                sql::INSERT_RESET,
                &[&r.key.preset, &r.key.machine, &r.key.lane, &r.run_id, &r.metric, &r.note, &r.created_at],
            )
            .map_err(err)?;
        row.try_get(0).map_err(err)
    }

    fn resets(&mut self, key: &SeriesKey) -> Result<Vec<Reset>> {
        let rows = self.client.query(sql::RESETS, &[&key.preset, &key.machine, &key.lane]).map_err(err)?;
        rows.iter().map(rows::reset).collect()
    }
}
