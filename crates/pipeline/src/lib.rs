//! The judged run: the one way from trace files to a judged document, for every command.
//!
//! `analyze`, `check` (once its workload has written its traces) and each side of `compare` call
//! [`judge`]: it reads one trace or the ranks of one run with one set of [`ReadOptions`], measures
//! them (the figures, and the spans the drawing formats need when asked), has the judge judge
//! them once, and returns a [`JudgedRun`]. Nothing else reads, measures or judges a trace, so a
//! fix or a cap lands in every command at once.

mod error;
pub mod inputs;

use std::path::{Path, PathBuf};

use launchguard_analysis::model_ranks::RanksAnalysis;
use launchguard_analysis::ranks::{combine, measure_rank, rank_of, RankPart};
use launchguard_analysis::spans::{Findings, RanksSpans};
use launchguard_analysis::{analyze, Analysis, Options};
use launchguard_judge::{AnalysisReport, RanksReport, Settings, Verdict};
use launchguard_trace::{Parser, Trace};

pub use error::PipelineError;

/// How traces are read: the parser and the caps on what one trace may cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// The event parser.
    pub parser: Parser,
    /// The caps.
    pub limits: launchguard_trace::Limits,
}

/// What to keep besides the judged document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// The document alone.
    #[default]
    Document,
    /// The spans the drawing formats need (HTML timelines, CSV gaps, annotated copies), for every
    /// rank: measured while each trace is at hand, so that no trace is read twice.
    Spans,
}

/// One trace judged, or the ranks of one run judged together.
#[derive(Debug, Clone)]
pub enum Judged {
    /// One trace (`launchguard.analysis/1`).
    One(Box<AnalysisReport>),
    /// Several ranks (`launchguard.analysis-ranks/1`).
    Ranks(Box<RanksReport>),
}

impl Judged {
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        match self {
            Judged::One(r) => r.verdict,
            Judged::Ranks(r) => r.verdict,
        }
    }

    /// Why the verdict is `skip` or `inconclusive`, when it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Judged::One(r) => r.reason.as_deref(),
            Judged::Ranks(r) => r.reason.as_deref(),
        }
    }
}

/// The spans measured for drawing ([`Keep::Spans`]).
#[derive(Debug, Clone)]
pub enum Drawing {
    /// One trace's spans.
    One(Findings),
    /// Each rank's own spans (rank, spans), in rank order, and every rank on one clock.
    Ranks {
        /// Each rank's spans on its own trace's clock.
        ranks: Vec<(u64, Findings)>,
        /// The ranks on the common clock: compute, collectives, waiting.
        across: RanksSpans,
    },
}

/// A judged run: the document, what was read, what the reader noticed.
#[derive(Debug, Clone)]
pub struct JudgedRun {
    /// The judged figures.
    pub judged: Judged,
    /// The spans, when asked for ([`Keep::Spans`]).
    pub drawing: Option<Drawing>,
    /// The files read, in rank order (the rank, with several), for the reports that copy them.
    pub inputs: Vec<(Option<u64>, PathBuf)>,
    /// What the reader noticed and the user should know (a trace cut short), one line each, as
    /// text from the input: escape it before a terminal sees it.
    pub notices: Vec<String>,
}

/// Reads, measures and judges `paths`: one trace, or the ranks of one run (several traces, read
/// on all cores, each dropped once measured).
pub fn judge(
    paths: &[PathBuf],
    read: &ReadOptions,
    measure: &Options,
    settings: &Settings,
    keep: Keep,
) -> Result<JudgedRun, PipelineError> {
    let job = Job { read, measure, settings, keep };
    match paths {
        [] => Err(PipelineError::NoInput),
        [one] => judge_one(one, &job),
        several => judge_ranks(several, &job),
    }
}

/// What [`judge`] was asked, handed on whole.
#[derive(Clone, Copy)]
struct Job<'a> {
    read: &'a ReadOptions,
    measure: &'a Options,
    settings: &'a Settings,
    keep: Keep,
}

fn judge_one(path: &Path, job: &Job) -> Result<JudgedRun, PipelineError> {
    let Job { read, measure, settings, keep } = *job;
    let (trace, notice) = read_trace(path, read)?;
    let figures = analyze(&trace, measure)?;
    usable(&figures, path)?;
    let drawing = match keep {
        Keep::Spans => Some(Drawing::One(Findings::new(&trace.timeline, &figures)?)),
        Keep::Document => None,
    };
    Ok(JudgedRun {
        judged: Judged::One(Box::new(launchguard_judge::analysis(figures, settings))),
        drawing,
        inputs: vec![(None, path.to_path_buf())],
        notices: notice,
    })
}

/// One rank measured, with its spans when kept, its trace dropped.
struct Measured {
    part: RankPart,
    findings: Option<Findings>,
    path: PathBuf,
    notice: Vec<String>,
}

fn judge_ranks(paths: &[PathBuf], job: &Job) -> Result<JudgedRun, PipelineError> {
    let Job { read, measure, settings, keep } = *job;
    if measure.within.is_some() {
        return Err(PipelineError::WithinRanks);
    }
    if paths.iter().any(|p| inputs::is_stdin(p)) {
        return Err(PipelineError::StdinRanks);
    }
    use rayon::prelude::*;
    let measured = paths
        .par_iter()
        .map(|p| -> Result<Measured, PipelineError> {
            let (trace, notice) = read_trace(p, read)?;
            let id = rank_of(&trace)?;
            let rank = id.rank;
            let part = measure_rank(&trace, id, measure)?;
            usable(&part.analysis, p).map_err(|e| PipelineError::Rank { rank, source: Box::new(e) })?;
            let findings = match keep {
                Keep::Spans => Some(Findings::new(&trace.timeline, &part.analysis)?),
                Keep::Document => None,
            };
            Ok(Measured { part, findings, path: p.clone(), notice })
        })
        .collect::<Vec<_>>();
    // The first failing trace in the order given, whichever thread failed first.
    let measured = measured.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut notices = Vec::new();
    let mut inputs = Vec::with_capacity(measured.len());
    let mut findings = Vec::new();
    let mut parts = Vec::with_capacity(measured.len());
    for m in measured {
        let rank = m.part.id.rank;
        notices.extend(m.notice);
        inputs.push((Some(rank), m.path));
        findings.extend(m.findings.map(|f| (rank, f)));
        parts.push(m.part);
    }
    inputs.sort_by_key(|(rank, _)| *rank);
    findings.sort_by_key(|(rank, _)| *rank);
    let (figures, across): (RanksAnalysis, RanksSpans) = combine(parts)?;
    let drawing = (keep == Keep::Spans).then_some(Drawing::Ranks { ranks: findings, across });
    Ok(JudgedRun {
        judged: Judged::Ranks(Box::new(launchguard_judge::ranks(figures, settings))),
        drawing,
        inputs,
        notices,
    })
}

/// Reads one trace; a trace cut short is read up to the cut, and said so, as is what the reader of
/// another format noticed (a recording that cannot show something).
fn read_trace(path: &Path, read: &ReadOptions) -> Result<(Trace, Vec<String>), PipelineError> {
    let trace = launchguard_trace::read_limited(path, read.parser, &read.limits)?;
    let mut notices: Vec<String> = trace
        .truncated
        .as_ref()
        .map(|why| {
            format!(
                "{} is truncated ({why}); analyzing the {} complete events read",
                trace.source.path.display(),
                trace.timeline.events
            )
        })
        .into_iter()
        .collect();
    let shown = trace.source.path.display();
    notices.extend(trace.timeline.meta.notes.iter().map(|n| format!("{shown}: {n}")));
    Ok((trace, notices))
}

/// A trace without GPU activity cannot show a starved GPU: it is unusable input, not 0% occupancy.
fn usable(a: &Analysis, path: &Path) -> Result<(), PipelineError> {
    if a.devices.is_empty() {
        return Err(PipelineError::NoGpuActivity {
            path: path.display().to_string(),
            events: a.source.events,
        });
    }
    Ok(())
}
