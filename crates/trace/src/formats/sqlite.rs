//! Opening a stranger's SQLite database: a file from anyone is hostile input, as a trace is.
//!
//! - SQLite compiled in (rusqlite's `bundled`), so the rules below do not depend on the system's
//!   library; no extension can be loaded (rusqlite's `load_extension` is not built).
//! - Read-only and `immutable=1`: no lock is taken, no journal or WAL file is read, created or
//!   replayed, so the file and its directory stay exactly as they were.
//! - Defensive mode; triggers and views off, and the schema untrusted: reading runs nothing the
//!   file declares. Tables are found in `sqlite_schema` by type `table` and exact name, so a view
//!   or a trigger named like a table is never read.
//! - Strings and blobs over [`MAX_VALUE_BYTES`] stop the read (SQLite's own length limit), and the
//!   records kept are capped by the builder ([`crate::Limits`]).

use std::path::{Path, PathBuf};

use rusqlite::config::DbConfig;
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};

use crate::error::TraceError;
use crate::input::SourceInfo;

/// The longest string or blob read from a database: kernel names are a few KB at most.
pub const MAX_VALUE_BYTES: i32 = 1 << 20;

/// Which profiler's database it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// rocprofiler-sdk's rocpd.
    Rocpd,
    /// An Nsight Systems export.
    Nsys,
}

/// An opened database, with the tables it declares.
pub struct Database {
    /// The connection (read-only).
    pub conn: Connection,
    /// The file.
    pub source: SourceInfo,
    /// Names of the tables (type `table` only), as declared.
    pub tables: Vec<String>,
}

/// `path` as an SQLite URI (`file:` + the path, each byte outside a safe set percent-encoded).
fn uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str("?immutable=1");
    out
}

impl Database {
    /// Opens `path` (a regular file, checked first) under the rules above.
    pub fn open(path: &Path) -> Result<Database, TraceError> {
        let (_, bytes) = launchguard_files::open_regular(path)
            .map_err(|error| TraceError::Input { path: path.to_path_buf(), error })?;
        let source = SourceInfo { path: path.to_path_buf(), bytes, gzip: false };
        let err = |e: rusqlite::Error| error(path, e);
        let flags =
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(uri(path), flags).map_err(err)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true).map_err(err)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false).map_err(err)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false).map_err(err)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false).map_err(err)?;
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES).map_err(err)?;
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0).map_err(err)?;
        let tables = {
            let mut stmt = conn
                .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
                .map_err(err)?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(err)?
        };
        Ok(Database { conn, source, tables })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.source.path
    }

    /// Whether a table of this exact name exists.
    pub fn has_table(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
    }

    /// The columns a table declares (empty when it does not exist).
    pub fn columns(&self, table: &str) -> Result<Vec<String>, TraceError> {
        if !self.has_table(table) {
            return Ok(Vec::new());
        }
        let err = |e| error(self.path(), e);
        let mut stmt = self.conn.prepare("SELECT name FROM pragma_table_info(?1)").map_err(err)?;
        let rows = stmt.query_map([table], |r| r.get::<_, String>(0)).map_err(err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err)
    }

    /// Runs `sql` and hands each row to `each` until it says stop.
    pub fn rows(
        &self,
        sql: &str,
        mut each: impl FnMut(&rusqlite::Row<'_>) -> bool,
    ) -> Result<(), TraceError> {
        let err = |e| self.error(e);
        let mut stmt = self.conn.prepare(sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            if !each(row) {
                break;
            }
        }
        Ok(())
    }

    /// The error for this database.
    pub fn error(&self, e: rusqlite::Error) -> TraceError {
        error(self.path(), e)
    }

    /// A database that lacks what its format needs.
    pub fn unusable(&self, detail: impl Into<String>) -> TraceError {
        TraceError::Database { path: self.path().to_path_buf(), detail: detail.into() }
    }
}

/// An SQLite error, in one line.
fn error(path: &Path, e: rusqlite::Error) -> TraceError {
    let detail = match &e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::TooBig => {
            format!("a string or blob longer than {} bytes", MAX_VALUE_BYTES)
        }
        rusqlite::Error::SqliteFailure(f, Some(msg)) => format!("{msg} ({:?})", f.code),
        other => other.to_string(),
    };
    TraceError::Database { path: PathBuf::from(path), detail: detail.replace('\n', " ") }
}

/// Which profiler wrote it, from the tables it declares.
pub fn kind(db: &Database) -> Result<Kind, TraceError> {
    if db.tables.iter().any(|t| t.starts_with("rocpd_kernel_dispatch")) {
        return Ok(Kind::Rocpd);
    }
    if db.has_table("StringIds") && db.tables.iter().any(|t| t.starts_with("CUPTI_ACTIVITY_KIND_")) {
        return Ok(Kind::Nsys);
    }
    Err(db.unusable(
        "an SQLite database that is neither a rocpd database (no rocpd_kernel_dispatch table) nor an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* and StringIds tables)",
    ))
}

/// An identifier quoted for SQL (`"name"`, inner quotes doubled).
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
