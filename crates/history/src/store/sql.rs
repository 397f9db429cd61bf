//! The statements both engines run, written once (see [`crate::schema::Dialect::sql`]).

/// Columns of a run, in the order the row reader reads them.
pub const RUN_COLUMNS: &str =
    "r.id, r.preset, r.machine, r.lane, r.recorded_at, r.kind, r.source, r.verdict, \
     r.status, r.status_reason, r.build, r.fingerprint, r.identity, m.name, m.value";

/// The highest migration applied.
pub const SCHEMA_VERSION: &str = "SELECT COALESCE(MAX(version), 0) FROM lg_schema";

/// Records a migration.
pub const RECORD_MIGRATION: &str = "INSERT INTO lg_schema (version, name, applied_at) VALUES ($1, $2, $3)";

/// Stores a fingerprint unless it is there.
pub const INSERT_FINGERPRINT: &str =
    "INSERT INTO lg_fingerprints (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING";

/// Stores a run; returns its id.
pub const INSERT_RUN: &str =
    "INSERT INTO lg_runs (preset, machine, lane, recorded_at, kind, source, verdict, \
     status, status_reason, build, fingerprint, document_schema, document, identity) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id";

/// Stores one figure of a run.
pub const INSERT_METRIC: &str = "INSERT INTO lg_metrics (run_id, name, value) VALUES ($1, $2, $3)";

/// Every series and its number of runs.
pub const SERIES: &str =
    "SELECT preset, machine, lane, COUNT(*) FROM lg_runs GROUP BY preset, machine, lane ORDER BY preset, machine, lane";

/// The runs of a series with their figures, one row per figure (a run without any: one row).
pub fn runs_of_series() -> String {
    format!(
        "SELECT {RUN_COLUMNS} FROM lg_runs r LEFT JOIN lg_metrics m ON m.run_id = r.id \
         WHERE r.preset = $1 AND r.machine = $2 AND r.lane = $3 ORDER BY r.id, m.name"
    )
}

/// One run with its figures.
pub fn run_by_id() -> String {
    format!("SELECT {RUN_COLUMNS} FROM lg_runs r LEFT JOIN lg_metrics m ON m.run_id = r.id WHERE r.id = $1 ORDER BY m.name")
}

/// One fingerprint.
pub const FINGERPRINT: &str = "SELECT body FROM lg_fingerprints WHERE hash = $1";

/// A run's document.
pub const DOCUMENT: &str = "SELECT document_schema, document FROM lg_runs WHERE id = $1";

/// Stores a reset marker; returns its id.
pub const INSERT_RESET: &str =
    "INSERT INTO lg_resets (preset, machine, lane, run_id, metric, note, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";

/// The reset markers of a series.
pub const RESETS: &str = "SELECT id, preset, machine, lane, run_id, metric, note, created_at FROM lg_resets \
     WHERE preset = $1 AND machine = $2 AND lane = $3 ORDER BY run_id, id";
