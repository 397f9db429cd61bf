//! A run as the history records it — its series, verdict, whether it is conclusive, its figures,
//! its fingerprint and its whole document (raw samples included, so that a later launchguard can
//! judge it again) — built from a `check`, `analyze` or `compare` result.

use std::io::{Read, Write};

use launchguard_check::CheckReport;
use launchguard_judge::compare::Comparison;
use launchguard_judge::{AnalysisReport, Status};
use serde::Serialize;

use crate::fingerprint::{Fingerprint, Identity};
use crate::metrics::{self, Figures};
use crate::series::{Lane, SeriesKey};
use crate::{Error, Result};

/// Whether a run's figures can be trusted for change points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum RunStatus {
    /// Its figures count.
    Ok,
    /// Left out of change points, for this reason (a skip, a profiler that lost events, runs
    /// that could not be compared).
    Inconclusive(String),
}

impl RunStatus {
    /// As stored: the status word and the reason.
    pub fn parts(&self) -> (&'static str, Option<&str>) {
        match self {
            RunStatus::Ok => ("ok", None),
            RunStatus::Inconclusive(why) => ("inconclusive", Some(why)),
        }
    }

    /// From the stored parts.
    pub fn from_parts(status: &str, reason: Option<String>) -> Self {
        match status {
            "ok" => RunStatus::Ok,
            _ => RunStatus::Inconclusive(reason.unwrap_or_else(|| status.to_string())),
        }
    }

    /// Whether its figures count.
    pub fn is_ok(&self) -> bool {
        matches!(self, RunStatus::Ok)
    }
}

/// A run about to be recorded.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// Its series.
    pub key: SeriesKey,
    /// `check`, `analyze` or `compare`.
    pub kind: String,
    /// The file it was imported from.
    pub source: Option<String>,
    /// Its own verdict.
    pub verdict: String,
    /// Whether it counts.
    pub status: RunStatus,
    /// The build that ran (`--build-id`, else the image digest).
    pub build: Option<String>,
    /// What the caller said of the build and image; kept with the run, not in the fingerprint,
    /// which many runs of one stack share.
    pub identity: Identity,
    /// Its fingerprint: the stack it ran on.
    pub fingerprint: Fingerprint,
    /// Its figures.
    pub figures: Figures,
    /// The document's schema (`launchguard.check/1`, …).
    pub document_schema: String,
    /// The document, gzip-compressed JSON.
    pub document: Vec<u8>,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
}

/// A recorded run, without its document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    /// Its id: runs are numbered in the order they were recorded.
    pub id: i64,
    /// Its series.
    pub key: SeriesKey,
    /// When it was recorded.
    pub recorded_at: String,
    /// `check`, `analyze` or `compare`.
    pub kind: String,
    /// The file it was imported from.
    pub source: Option<String>,
    /// Its own verdict.
    pub verdict: String,
    /// Whether it counts.
    #[serde(flatten)]
    pub status: RunStatus,
    /// The build that ran.
    pub build: Option<String>,
    /// Its fingerprint's hash.
    pub fingerprint: String,
    /// The build and image, as the caller said.
    pub identity: Identity,
    /// Its figures.
    pub figures: Figures,
}

/// A reset marker: from `run_id` on, the series (or one metric of it) starts anew — the change
/// there was accepted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reset {
    /// Its id, once stored.
    pub id: Option<i64>,
    /// The series.
    pub key: SeriesKey,
    /// The first run of the new level.
    pub run_id: i64,
    /// The metric it is for; `None`: every metric.
    pub metric: Option<String>,
    /// Why the change is accepted.
    pub note: String,
    /// When it was set.
    pub created_at: String,
}

/// What the caller says of a run being recorded.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// The series' lane: a `--series` name or a branch.
    pub lane: Lane,
    /// The machine class; by default the GPU (× count with several ranks).
    pub machine: Option<String>,
    /// The build and image.
    pub identity: Identity,
    /// Read the build ids of the linkage closure from the files (only for a run on this machine).
    pub build_ids: bool,
    /// The file it came from.
    pub source: Option<String>,
}

/// A result document that can be recorded.
#[derive(Debug, Clone)]
pub enum Document {
    /// `launchguard.check/1`.
    Check(Box<CheckReport>),
    /// `launchguard.analysis/1` (a kept trace carries check's samples in it).
    Analysis(Box<AnalysisReport>),
    /// `launchguard.compare/1`: its current run.
    Compare(Box<Comparison>),
}

impl Document {
    /// Reads a document from its JSON, by its `schema`.
    pub fn from_json(value: serde_json::Value) -> Result<Self> {
        let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("none").to_string();
        let bad = |e: serde_json::Error| Error::new(format!("not a valid {schema} document ({e})"));
        Ok(match schema.as_str() {
            launchguard_check::model::SCHEMA => Document::Check(Box::new(serde_json::from_value(value).map_err(bad)?)),
            "launchguard.analysis/1" => Document::Analysis(Box::new(serde_json::from_value(value).map_err(bad)?)),
            launchguard_judge::compare::SCHEMA => {
                Document::Compare(Box::new(serde_json::from_value(value).map_err(bad)?))
            }
            other => {
                return Err(Error::new(format!(
                    "schema '{other}': a history records launchguard.check/1, launchguard.analysis/1 or launchguard.compare/1 results"
                )))
            }
        })
    }

    /// The document's schema id.
    pub fn schema(&self) -> &'static str {
        match self {
            Document::Check(_) => launchguard_check::model::SCHEMA,
            Document::Analysis(_) => "launchguard.analysis/1",
            Document::Compare(_) => launchguard_judge::compare::SCHEMA,
        }
    }

    fn to_json(&self) -> Result<Vec<u8>> {
        let r = match self {
            Document::Check(d) => serde_json::to_vec(d),
            Document::Analysis(d) => serde_json::to_vec(d),
            Document::Compare(d) => serde_json::to_vec(d),
        };
        r.map_err(|e| Error::new(format!("cannot write the document: {e}")))
    }
}

/// The checks whose failure means the profiler's figures cannot be trusted.
const TRUST: [launchguard_judge::verdict::CheckId; 2] =
    [launchguard_judge::verdict::CheckId::TraceSanity, launchguard_judge::verdict::CheckId::TraceComplete];

/// Why a run's figures should not count, if they should not.
fn inconclusive(
    verdict: launchguard_judge::Verdict,
    reason: Option<&str>,
    checks: &[launchguard_judge::Check],
) -> RunStatus {
    if verdict == launchguard_judge::Verdict::Skip {
        return RunStatus::Inconclusive(format!("skip: {}", reason.unwrap_or("nothing measured")));
    }
    if let Some(c) = checks.iter().find(|c| TRUST.contains(&c.id) && c.status == Status::Fail) {
        return RunStatus::Inconclusive(format!("{}: {}", c.id, c.message));
    }
    RunStatus::Ok
}

/// The machine class by default: the GPU's name, × the ranks when more than one.
fn machine_of(fp: &Fingerprint, tp: u32) -> String {
    let gpu = fp.get("gpu").unwrap_or("unknown GPU");
    if tp > 1 {
        format!("{gpu} ×{tp}")
    } else {
        gpu.to_string()
    }
}

/// Builds the run to record from a document.
pub fn new_run(doc: &Document, labels: &Labels) -> Result<NewRun> {
    let mut fp = Fingerprint::default();
    let (preset, tp, verdict, status, figures) = match doc {
        Document::Check(r) => {
            if let Some(inv) = &r.inventory {
                fp.add_inventory(inv);
            }
            if let Some(l) = &r.linkage {
                fp.add_linkage(l);
            }
            fp.add_run(&r.workload, r.tp, r.inject_delay_us, r.inject_delay_ranks.as_deref());
            fp.set("launchguard_version", r.launchguard_version.clone());
            let status = inconclusive(r.verdict, r.reason.as_deref(), &r.checks);
            (r.workload.preset.clone(), r.tp, r.verdict, status, metrics::of_check(r))
        }
        Document::Analysis(r) => {
            let w = r.figures.workload.as_ref();
            if let Some(ctx) = w {
                if let Some(inv) = &ctx.inventory {
                    fp.add_inventory(inv);
                }
                if let Some(l) = &ctx.linkage {
                    fp.add_linkage(l);
                }
                fp.add_run(&ctx.workload, ctx.tp, ctx.inject_delay_us, ctx.inject_delay_ranks.as_deref());
                fp.set("launchguard_version", ctx.launchguard_version.clone());
            } else {
                if let Some(p) = &r.figures.trace.profiler {
                    fp.set("profiler_backend", p.clone());
                }
                if let Some(name) = r.figures.devices.iter().find_map(|d| d.name.clone()) {
                    fp.set("gpu", name);
                }
            }
            let preset = w.map_or_else(|| "trace".to_string(), |c| c.workload.preset.clone());
            let status = inconclusive(r.verdict, r.reason.as_deref(), &r.checks);
            (preset, w.map_or(1, |c| c.tp), r.verdict, status, metrics::of_analysis(r))
        }
        Document::Compare(c) => {
            fp.set("gpu", c.current.gpu_name.clone().unwrap_or_default());
            if let Some(t) = &c.current.torch {
                fp.set("torch", t.clone());
            }
            fp.set("launchguard_version", c.current.launchguard_version.clone());
            let status = if c.comparable {
                RunStatus::Ok
            } else {
                RunStatus::Inconclusive("the runs compared are not comparable".into())
            };
            (c.current.preset.clone(), 1, c.current.verdict, status, metrics::of_compare(c))
        }
    };
    if labels.build_ids {
        fp.add_build_ids();
    }
    let status = match status {
        RunStatus::Ok if figures.is_empty() => RunStatus::Inconclusive("no figure measured".into()),
        s => s,
    };
    let machine = labels.machine.clone().unwrap_or_else(|| machine_of(&fp, tp));
    Ok(NewRun {
        key: SeriesKey { preset, machine, lane: labels.lane.name().to_string() },
        kind: match doc {
            Document::Check(_) => "check",
            Document::Analysis(_) => "analyze",
            Document::Compare(_) => "compare",
        }
        .to_string(),
        source: labels.source.clone(),
        verdict: verdict.as_str().to_string(),
        status,
        build: labels.identity.build().map(str::to_string),
        identity: labels.identity.clone(),
        fingerprint: fp,
        figures,
        document_schema: doc.schema().to_string(),
        document: gzip(&doc.to_json()?)?,
        recorded_at: crate::store::now(),
    })
}

/// gzip of `bytes`.
pub fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).and_then(|_| enc.finish()).map_err(|e| Error::new(format!("gzip: {e}")))
}

/// The most a stored document may inflate to: a check result is tens of KB.
const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// A stored document, inflated (bounded: the store may be a stranger's).
pub fn gunzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::new(format!("a stored document is not valid gzip: {e}")))?;
    if out.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(Error::new("a stored document inflates past 256 MiB"));
    }
    Ok(out)
}
