//! Where a history lives: one SQLite file ([`sqlite`]), or a PostgreSQL server a team's CI
//! runners share ([`postgres`]), behind one trait. Both run the same statements ([`sql`]) on the
//! same schema ([`crate::schema`]), upgraded when opened.

pub mod postgres;
mod rows;
pub mod sql;
pub mod sqlite;

use std::collections::BTreeMap;

use crate::fingerprint::Fingerprint;
use crate::record::{NewRun, Reset, RunRow};
use crate::series::SeriesKey;
use crate::Result;

/// What a history store does; the same on both engines.
pub trait Store {
    /// Where it is, for messages: `history.db (SQLite)`, `PostgreSQL at host:port/db`.
    fn describe(&self) -> String;
    /// The schema version it is at.
    fn schema_version(&mut self) -> Result<i64>;
    /// Records runs with their figures, documents and fingerprints (stored once per distinct
    /// one), in order, in one transaction: all or nothing. Returns their ids.
    fn insert_all(&mut self, runs: &[NewRun]) -> Result<Vec<i64>>;
    /// Records one run; returns its id.
    fn insert(&mut self, run: &NewRun) -> Result<i64> {
        Ok(self.insert_all(std::slice::from_ref(run))?[0])
    }
    /// Every series, with its number of runs.
    fn series(&mut self) -> Result<Vec<(SeriesKey, i64)>>;
    /// The runs of a series in the order they were recorded, with their figures.
    fn runs(&mut self, key: &SeriesKey) -> Result<Vec<RunRow>>;
    /// One run, with its figures.
    fn run(&mut self, id: i64) -> Result<Option<RunRow>>;
    /// The fingerprints of these hashes.
    fn fingerprints(&mut self, hashes: &[String]) -> Result<BTreeMap<String, Fingerprint>>;
    /// A run's recorded document: its schema and its gzip-compressed JSON.
    fn document(&mut self, id: i64) -> Result<Option<(String, Vec<u8>)>>;
    /// Adds a reset marker; returns its id.
    fn add_reset(&mut self, reset: &Reset) -> Result<i64>;
    /// The reset markers of a series, by run.
    fn resets(&mut self, key: &SeriesKey) -> Result<Vec<Reset>>;
}

/// Where a history is: `postgres://…` (or `postgresql://…`) is a server, anything else a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    File(std::path::PathBuf),
    /// A PostgreSQL connection string.
    Postgres(String),
}

impl Location {
    /// Reads a `--history` value.
    pub fn parse(s: &str) -> Location {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Location::Postgres(s.to_string())
        } else {
            Location::File(s.into())
        }
    }
}

/// Whether opening may create the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Recording: a missing file is created.
    Create,
    /// Reading: a missing file is an error.
    Existing,
}

/// Opens the history at `location`, upgrading its schema.
pub fn open(location: &Location, mode: Mode) -> Result<Box<dyn Store>> {
    Ok(match location {
        Location::File(path) => Box::new(sqlite::SqliteStore::open(path, mode)?),
        Location::Postgres(url) => Box::new(postgres::PostgresStore::connect(url)?),
    })
}

/// Now, as RFC 3339 UTC to the second.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
