//! `launchguard analyze TRACE...`: one trace, or the ranks of one distributed run (several traces,
//! or a folder of them).

use std::path::{Path, PathBuf};

use anyhow::Context;
use launchguard_analysis::analyze::{analyze, Options};
use launchguard_analysis::model_ranks::RanksAnalysis;
use launchguard_analysis::ranks::{combine, measure_rank, rank_of, RankPart};
use launchguard_analysis::Analysis;
use launchguard_report::escape::one_line;
use launchguard_trace::{Parser, Trace};

use crate::cli::{AnalyzeArgs, Format, ParserArg};
use crate::outputs;

pub fn run(args: AnalyzeArgs) -> anyhow::Result<u8> {
    let settings = super::settings::thresholds(&args.thresholds)?;
    let within = args
        .within
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .context("--within is not a valid regular expression")?;
    let parser = match args.parser {
        ParserArg::Fast => Parser::Fast,
        ParserArg::Simple => Parser::Simple,
        #[cfg(feature = "candidate-parsers")]
        ParserArg::Sonic => Parser::Sonic,
        #[cfg(feature = "candidate-parsers")]
        ParserArg::SimdJson => Parser::SimdJson,
    };
    let limits = super::settings::input(&settings, &args.input)?;
    let paths = expand(&args.traces)?;
    let stdin = paths.iter().filter(|p| is_stdin(p)).count();
    anyhow::ensure!(stdin <= 1, "standard input (-) can be read once only");
    anyhow::ensure!(
        stdin == 0 || args.reports.annotate_trace.is_none(),
        "--annotate-trace copies the trace, and standard input cannot be read again: save the trace to a file first"
    );
    let opts = Options {
        within,
        within_interiors: args.within_interiors,
        gap_us: settings.config.thresholds.gap_us,
        kernel_positions: false,
    };
    if paths.len() > 1 {
        return several(&args, &paths, parser, &limits, &opts, &settings);
    }
    let trace = read(&paths[0], parser, &limits)?;
    let figures = analyze(&trace, &opts)?;
    usable(&figures, &trace.source.path)?;
    let judged = launchguard_judge::analysis(figures, &settings);
    let document = launchguard_report::Document::of(&judged)?;
    // A trace `check` kept carries its host samples: shown as `check` shows them.
    let phases: Vec<launchguard_report::PhaseSamples<'_>> = judged
        .figures
        .workload
        .iter()
        .flat_map(|w| {
            ["before", "profiled", "after"].into_iter().filter_map(|label| {
                w.phases.get(label).map(|report| launchguard_report::PhaseSamples { label, report })
            })
        })
        .collect();
    let view = launchguard_report::View {
        phases: &phases,
        ..launchguard_report::View::of_analysis(
            &judged.figures,
            &trace.timeline,
            &judged.checks,
            judged.verdict,
            &document,
        )
    }
    .with_reason(judged.reason.as_deref());
    outputs::emit(&view, args.format, &args.reports, Some(&paths[0]), &outputs::read_from)?;
    Ok(judged.verdict.exit_code() as u8)
}

/// A trace without GPU activity cannot show a starved GPU: it is unusable input, not 0% occupancy.
fn usable(a: &Analysis, path: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        !a.devices.is_empty(),
        "{}: no GPU activity in the trace ({} events read): the profiler recorded no kernels, copies or fills; \
         profile with GPU activities (torch.profiler activities=[CPU, CUDA])",
        path.display(),
        a.source.events
    );
    Ok(())
}

/// Whether the path stands for standard input.
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == launchguard_trace::input::STDIN
}

/// Whether a file name looks like a trace: `*.json` or `*.json.gz` (so `*.pt.trace.json(.gz)`),
/// not the status files `check` under a launcher leaves beside its traces.
fn is_trace_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    (name.ends_with(".json") || name.ends_with(".json.gz")) && !name.ends_with(".status.json")
}

/// The traces named on the command line, a folder standing for every trace file directly in it
/// (sorted by name).
pub(crate) fn expand(args: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for arg in args {
        if !arg.is_dir() {
            out.push(arg.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in
            std::fs::read_dir(arg).with_context(|| format!("{}: cannot list the folder", arg.display()))?
        {
            let path = entry.with_context(|| format!("{}: cannot list the folder", arg.display()))?.path();
            if path.is_file() && is_trace_name(&path) {
                found.push(path);
            }
        }
        anyhow::ensure!(!found.is_empty(), "{}: no trace (*.json, *.json.gz) in this folder", arg.display());
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

fn read(path: &Path, parser: Parser, limits: &launchguard_trace::Limits) -> anyhow::Result<Trace> {
    let trace = launchguard_trace::read_limited(path, parser, limits)?;
    if let Some(why) = &trace.truncated {
        // A folder's file names are whoever filled it's: escaped, as errors are.
        let (path, why) = (trace.source.path.display().to_string(), why.to_string());
        eprintln!(
            "launchguard: warning: {} is truncated ({}); analyzing the {} complete events read",
            one_line(&path),
            one_line(&why),
            trace.timeline.events
        );
    }
    Ok(trace)
}

/// The one of `paths` that a figure's source names (`shown`, a path made text): figures keep
/// paths as text, and a name that is not UTF-8 is changed by that, so it is never opened as is.
pub(crate) fn path_of<'a>(paths: &'a [PathBuf], shown: &str) -> anyhow::Result<&'a PathBuf> {
    let mut found = paths.iter().filter(|p| p.display().to_string() == shown);
    match (found.next(), found.next()) {
        (Some(p), None) => Ok(p),
        (Some(_), Some(_)) => anyhow::bail!("two traces' names read the same as text ({shown}): rename one"),
        (None, _) => anyhow::bail!("{shown}: not among the traces read"),
    }
}

/// Measures the ranks' traces on all cores, each trace dropped once measured: memory holds as many
/// traces as there are cores reading, never every rank's at once.
fn measure_ranks(
    paths: &[PathBuf],
    parser: Parser,
    limits: &launchguard_trace::Limits,
    opts: &Options,
) -> anyhow::Result<RanksAnalysis> {
    use rayon::prelude::*;
    let parts = paths
        .par_iter()
        .map(|p| -> anyhow::Result<RankPart> {
            let trace = read(p, parser, limits)?;
            let id = rank_of(&trace)?;
            let part = measure_rank(&trace, id, opts)?;
            usable(&part.analysis, p).with_context(|| format!("rank {}", part.id.rank))?;
            Ok(part)
        })
        .collect::<Vec<anyhow::Result<RankPart>>>();
    // The first failing trace in the order given, whichever thread failed first.
    let parts = parts.into_iter().collect::<anyhow::Result<Vec<RankPart>>>()?;
    Ok(combine(parts)?)
}

/// Several traces: the ranks of one run. Report files (`--junit`, `--html`, …) show every rank,
/// with the checks across ranks; `--annotate-trace` writes an annotated copy per rank.
fn several(
    args: &AnalyzeArgs,
    paths: &[PathBuf],
    parser: Parser,
    limits: &launchguard_trace::Limits,
    opts: &Options,
    settings: &launchguard_judge::Settings,
) -> anyhow::Result<u8> {
    anyhow::ensure!(
        opts.within.is_none(),
        "--within works on one trace only for now: the cross-rank figures cover whole traces"
    );
    // Each rank's trace is read again for the reports: standard input cannot be.
    anyhow::ensure!(
        !paths.iter().any(|p| is_stdin(p)),
        "standard input (-) can be one trace only: name the ranks' files or their folder"
    );
    let figures = measure_ranks(paths, parser, limits, opts)?;
    let result = launchguard_judge::ranks(figures, settings);
    let document = launchguard_report::Document::of(&result)?;
    let worst = result
        .ranks
        .iter()
        .find(|r| r.rank == result.across.worst_rank)
        .context("the worst rank is not among the ranks")?;
    // Every rank's trace was dropped once measured: read again for the reports that draw or
    // copy every rank (the HTML, the annotated copies, the gaps CSV), else the worst rank's alone
    // for the single-trace part of the view.
    let r = &args.reports;
    let again: Vec<Trace> = if r.files.html.is_some() || r.annotate_trace.is_some() || r.csv.is_some() {
        paths.iter().map(|p| read(p, parser, limits)).collect::<anyhow::Result<_>>()?
    } else {
        Vec::new()
    };
    let worst_alone;
    let worst_path = path_of(paths, &worst.analysis.figures.source.path)?;
    let worst_trace: &Trace = match paths.iter().position(|p| p == worst_path).and_then(|i| again.get(i)) {
        Some(t) => t,
        None => {
            worst_alone = read(worst_path, parser, limits)?;
            &worst_alone
        }
    };
    let every: Vec<&Trace> = again.iter().collect();
    let view = launchguard_report::View::of_analysis(
        &worst.analysis.figures,
        &worst_trace.timeline,
        &result.checks,
        result.verdict,
        &document,
    )
    .with_reason(result.reason.as_deref())
    .with_ranks(&result, worst.rank)
    .with_rank_traces(&every);
    // No report may overwrite any of the inputs, not only the worst rank's.
    let inputs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    outputs::write_reports(&view, &args.reports, &inputs, &outputs::read_from)?;
    let bytes = match args.format {
        Format::Text => launchguard_report::ranks_terminal::render(&result).into_bytes(),
        Format::Json => document.to_file_bytes(),
    };
    outputs::print(&bytes, args.format)?;
    Ok(result.verdict.exit_code() as u8)
}
