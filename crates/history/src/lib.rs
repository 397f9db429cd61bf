//! launchguard's history across builds: which container or PyTorch build made graph launches
//! slower, and what changed in it.
//!
//! Every `check` result (and, on request, an `analyze` or `compare` result, or a trace `check`
//! kept) is recorded with its figures, its raw per-replay samples and its [`fingerprint`] — the
//! GPU, driver, torch/CUDA/ROCm versions, the libraries torch would load, the profiler backend,
//! the interception layers, the variables that matter, the image — into a [`store`]: one SQLite
//! file, or a PostgreSQL server a team's CI runners share, both under the one [`schema`].
//!
//! Runs form [`series`] keyed by (workload preset, machine class, branch or series name). Each
//! metric's series is searched for [`changepoint`]s (E-divisive means with a permutation test),
//! leaving out inconclusive runs and starting anew at each reset marker (an accepted change).
//! [`explain`] ranks what differs in the fingerprints on either side of a change; [`gate()`] fails
//! a run whose series now sits past a change for the worse, naming the first bad build;
//! [`render`] draws a history for a terminal, as JSON, Markdown or one HTML page.

pub mod changepoint;
pub mod explain;
pub mod fingerprint;
pub mod gate;
pub mod import;
pub mod metrics;
pub mod record;
pub mod render;
pub mod schema;
pub mod series;
pub mod store;

/// An error of the history: one line that names the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

impl Error {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        Error(msg.into())
    }
}

/// A result of the history.
pub type Result<T> = std::result::Result<T, Error>;

use std::collections::BTreeMap;

use changepoint::Config;
use explain::Explanation;
use fingerprint::Fingerprint;
use gate::Failure;
use record::{Document, Labels};
use render::{Shown, ShownSeries};
use series::{SeriesAnalysis, SeriesKey};
use store::Store;

/// Records a document; returns the run's id and its series.
pub fn record(store: &mut dyn Store, doc: &Document, labels: &Labels) -> Result<(i64, SeriesKey)> {
    let run = record::new_run(doc, labels)?;
    let id = store.insert(&run)?;
    Ok((id, run.key))
}

/// Records documents in order, all or none; returns each run's id and series.
pub fn record_all(store: &mut dyn Store, docs: &[(Document, Labels)]) -> Result<Vec<(i64, SeriesKey)>> {
    let runs = docs.iter().map(|(d, l)| record::new_run(d, l)).collect::<Result<Vec<_>>>()?;
    let ids = store.insert_all(&runs)?;
    Ok(ids.into_iter().zip(runs.into_iter().map(|r| r.key)).collect())
}

/// A series read from the store and analysed.
pub fn analyse(store: &mut dyn Store, key: &SeriesKey, cfg: &Config) -> Result<SeriesAnalysis> {
    let runs = store.runs(key)?;
    let resets = store.resets(key)?;
    Ok(series::analyse(key.clone(), runs, resets, cfg))
}

/// Which series `show` shows: those whose preset, machine and lane match the parts given.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Preset.
    pub preset: Option<String>,
    /// Machine class.
    pub machine: Option<String>,
    /// Lane (`--series` name or branch).
    pub lane: Option<String>,
}

impl Filter {
    /// Whether a series is one of those asked for.
    pub fn matches(&self, k: &SeriesKey) -> bool {
        self.preset.as_ref().is_none_or(|p| *p == k.preset)
            && self.machine.as_ref().is_none_or(|m| *m == k.machine)
            && self.lane.as_ref().is_none_or(|l| *l == k.lane)
    }
}

/// Every series that matches, analysed, with its gate.
pub fn show(store: &mut dyn Store, filter: &Filter, cfg: &Config) -> Result<Shown> {
    let keys: Vec<SeriesKey> =
        store.series()?.into_iter().map(|(k, _)| k).filter(|k| filter.matches(k)).collect();
    let mut series = Vec::new();
    for key in keys {
        let analysis = analyse(store, &key, cfg)?;
        series.push(ShownSeries { gate: gate::judge(&analysis), analysis });
    }
    Ok(Shown { store: store.describe(), schema_version: store.schema_version()?, series })
}

/// The fingerprints of a series' runs.
pub fn fingerprints_of(store: &mut dyn Store, a: &SeriesAnalysis) -> Result<BTreeMap<String, Fingerprint>> {
    let mut hashes: Vec<String> = a.runs.iter().map(|r| r.fingerprint.clone()).collect();
    hashes.sort();
    hashes.dedup();
    store.fingerprints(&hashes)
}

/// Runs compared on each side by `explain` (at most).
pub const EXPLAIN_WINDOW: usize = 10;

/// What differs on either side of run `run_id` (the first run of a new level).
pub fn explain_run(store: &mut dyn Store, run_id: i64, cfg: &Config) -> Result<Explanation> {
    let run =
        store.run(run_id)?.ok_or_else(|| Error::new(format!("no run #{run_id} in {}", store.describe())))?;
    let a = analyse(store, &run.key, cfg)?;
    let fps = fingerprints_of(store, &a)?;
    explain::explain(&a, &fps, run_id, EXPLAIN_WINDOW)
}

/// The gate of a series: each failing metric with what changed at its first bad build.
pub fn gate(store: &mut dyn Store, key: &SeriesKey, cfg: &Config) -> Result<Vec<(Failure, Explanation)>> {
    let a = analyse(store, key, cfg)?;
    let failures = gate::judge(&a);
    if failures.is_empty() {
        return Ok(Vec::new());
    }
    let fps = fingerprints_of(store, &a)?;
    failures
        .into_iter()
        .map(|f| {
            let e = explain::explain(&a, &fps, f.first_bad.run_id, EXPLAIN_WINDOW)?;
            Ok((f, e))
        })
        .collect()
}
