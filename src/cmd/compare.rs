//! `launchguard compare BASELINE CURRENT`: two `check` results, or two traces (plain or gzip, or a
//! folder of rank traces each). Both are only read. Measured, then judged once.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use launchguard_analysis::compare::{self as measure, Bootstrap, RunSamples, TraceSamples};
use launchguard_analysis::kernel_diff::{kernel_diff, KernelSource};
use launchguard_analysis::kernels::Kernels;
use launchguard_analysis::model::GraphFigures;
use launchguard_analysis::ranks::{analyze_ranks, identify, RankTrace};
use launchguard_analysis::{analyze, Analysis, Options};
use launchguard_check::compare as check_compare;
use launchguard_judge::compare::{self as judge, Comparison, RunInfo};
use launchguard_judge::{Settings, Verdict};
use launchguard_trace::Trace;

use crate::cli::{CompareArgs, CompareReportArgs, Format};
use crate::outputs;
use launchguard_report::compare as report;

pub fn run(args: CompareArgs) -> anyhow::Result<u8> {
    let settings = super::settings::compare(args.config.as_deref(), &args.limits)?;
    let cfg = &settings.config.compare;
    let (baseline, current) = (side(&args.baseline, &settings)?, side(&args.current, &settings)?);
    let mut c = match (&baseline, &current) {
        (Side::Check(b, _), Side::Check(c, _)) => check_compare::compare(b, c, cfg, args.force),
        (Side::Traces(b), Side::Traces(c)) => compare_traces(b, c, &settings, args.force),
        _ => anyhow::bail!(
            "{} and {} are not of one kind: compare two check results, or two traces (or folders of rank traces)",
            args.baseline.display(),
            args.current.display()
        ),
    };
    c.baseline.path = Some(args.baseline.display().to_string());
    c.current.path = Some(args.current.display().to_string());
    // Report files first: one that cannot be written is an error (exit 2) before anything is
    // printed as if all went well.
    write_reports(&c, &args.reports, [&baseline, &current], &settings)?;
    let text = match args.format {
        Format::Text => launchguard_report::compare::render_terminal(&c),
        Format::Json => serde_json::to_string_pretty(&c)? + "\n",
    };
    outputs::print(text.as_bytes(), args.format)?;
    Ok(c.verdict.exit_code() as u8)
}

/// Writes every report file asked for; none may overwrite an input.
fn write_reports(
    c: &Comparison,
    reports: &CompareReportArgs,
    sides: [&Side; 2],
    settings: &Settings,
) -> anyhow::Result<()> {
    let inputs: Vec<&Path> = sides.iter().flat_map(|s| s.paths()).collect();
    let files = reports.files.asked();
    let outputs: Vec<(&str, &Path)> = files.iter().map(|(flag, p)| (*flag, p.as_path())).collect();
    outputs::refuse_clashes(&outputs, &inputs)?;
    for (flag, path) in files {
        let bytes = match flag {
            "--junit" => report::junit::render(c)?,
            "--markdown" => report::markdown::render(c).into_bytes(),
            _ => html(c, sides, settings)?,
        };
        launchguard_report::write_atomic(path, &bytes)?;
        outputs::wrote(path);
    }
    if let Some(dir) = &reports.csv {
        for path in report::csv::write_dir(c, dir)? {
            outputs::wrote(&path);
        }
    }
    Ok(())
}

/// The HTML page; for traces, with the two timelines of one rank: the rank of the first
/// regression, else the lowest rank.
fn html(c: &Comparison, sides: [&Side; 2], settings: &Settings) -> anyhow::Result<Vec<u8>> {
    let (Side::Traces(b), Side::Traces(k)) = (sides[0], sides[1]) else {
        return report::html::render(c, None);
    };
    let failing =
        c.metrics.iter().find(|m| m.status == launchguard_judge::Status::Fail).and_then(|m| m.figures.rank);
    let rank = failing.or_else(|| b.paths.iter().filter_map(|p| p.0).min());
    let reread = |t: &TraceSide| -> anyhow::Result<(Trace, Analysis)> {
        let path = t.paths.iter().find(|p| p.0 == rank).or(t.paths.first()).context("no trace")?;
        let trace = launchguard_trace::read(&path.1)?;
        let a = analyze(&trace, &options(settings))?;
        Ok((trace, a))
    };
    let ((bt, ba), (kt, ka)) = (reread(b)?, reread(k)?);
    let sides = [
        report::html::TraceSide { timeline: &bt.timeline, analysis: &ba, rank },
        report::html::TraceSide { timeline: &kt.timeline, analysis: &ka, rank },
    ];
    report::html::render(c, Some(sides))
}

fn options(settings: &Settings) -> Options {
    Options { gap_us: settings.config.thresholds.gap_us, kernel_positions: true, ..Options::default() }
}

/// One side of a comparison.
enum Side {
    /// A `launchguard.check/1` result, and the file it was read from.
    Check(Box<launchguard_check::CheckReport>, PathBuf),
    /// The traces of one run, measured: one rank, or several.
    Traces(Box<TraceSide>),
}

impl Side {
    /// The files read.
    fn paths(&self) -> Vec<&Path> {
        match self {
            Side::Check(_, p) => vec![p.as_path()],
            Side::Traces(t) => t.paths.iter().map(|p| p.1.as_path()).collect(),
        }
    }
}

/// A run's traces, measured and judged on their own.
struct TraceSide {
    /// What each rank measured.
    samples: Vec<TraceSamples>,
    /// What `check` measured besides the traces, per rank, when they carry its context.
    check_samples: Vec<RunSamples>,
    /// Rank 0's figures (the setup's facts).
    first: Analysis,
    /// Per rank, the file it was read from.
    paths: Vec<(Option<u64>, PathBuf)>,
    /// Per rank, the kernel table and the graphs it numbers.
    kernels: Vec<(Option<u64>, Kernels, Vec<GraphFigures>)>,
    /// The run's own verdict.
    verdict: Verdict,
}

/// Reads one side: a folder of traces, a trace, or a check result (told apart by content).
fn side(path: &Path, settings: &Settings) -> anyhow::Result<Side> {
    if path.is_dir() {
        let paths = super::analyze::expand(&[path.to_path_buf()])?;
        return traces(&paths, settings).map(|t| Side::Traces(Box::new(t)));
    }
    if is_check_result(path)? {
        return Ok(Side::Check(Box::new(check_compare::read_result(path)?), path.to_path_buf()));
    }
    traces(&[path.to_path_buf()], settings).map(|t| Side::Traces(Box::new(t)))
}

/// Whether a file is one of launchguard's results: JSON whose first key is a `launchguard.*`
/// schema (check results, the baselines, are read as such and refused with the reason when of
/// another schema). A trace is gzip, or JSON that starts with Kineto's header keys or events.
fn is_check_result(path: &Path) -> anyhow::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 256];
    // Opened as a regular file or refused: a FIFO or a device would block or never end.
    let (mut file, _) =
        launchguard_files::open_regular(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let n = file.read(&mut head).with_context(|| path.display().to_string())?;
    let text = String::from_utf8_lossy(&head[..n]);
    Ok(text.contains("\"launchguard."))
}

fn traces(paths: &[PathBuf], settings: &Settings) -> anyhow::Result<TraceSide> {
    let read = |p: &PathBuf| launchguard_trace::read(p).map_err(anyhow::Error::from);
    let traces: Vec<Trace> = paths.iter().map(read).collect::<anyhow::Result<_>>()?;
    let opts = options(settings);
    let kernels_of =
        |a: &Analysis, rank: Option<u64>| (rank, a.kernels.clone(), a.replay_summary.graphs.clone());
    if traces.len() == 1 {
        let a = analyze(&traces[0], &opts)?;
        anyhow::ensure!(!a.devices.is_empty(), "{}: no GPU activity in the trace", paths[0].display());
        let judged = launchguard_judge::analysis(a, settings);
        let a = judged.figures;
        return Ok(TraceSide {
            samples: vec![TraceSamples::of(&a, None, None)],
            kernels: vec![kernels_of(&a, None)],
            paths: vec![(None, paths[0].clone())],
            check_samples: context_samples(&a, None).into_iter().collect(),
            verdict: judged.verdict,
            first: a,
        });
    }
    let ids = identify(&traces)?;
    let ranks: Vec<RankTrace> = ids.iter().map(|(id, i)| RankTrace { id, trace: &traces[*i] }).collect();
    let figures = analyze_ranks(&ranks, &opts)?;
    let judged = launchguard_judge::ranks(figures, settings);
    let mut samples = Vec::new();
    let mut check_samples = Vec::new();
    let mut kernels = Vec::new();
    let mut rank_paths = Vec::new();
    for r in &judged.ranks {
        rank_paths
            .push((Some(r.rank), super::analyze::path_of(paths, &r.analysis.figures.source.path)?.clone()));
        kernels.push(kernels_of(&r.analysis.figures, Some(r.rank)));
        let f = r.common.as_ref().unwrap_or(&r.whole);
        let occupancy = f.occupancy_excluding_wait.unwrap_or(f.occupancy);
        samples.push(TraceSamples::of(&r.analysis.figures, Some(r.rank), Some(occupancy)));
        check_samples.extend(context_samples(&r.analysis.figures, Some(r.rank)));
    }
    let first = judged.ranks.first().map(|r| r.analysis.figures.clone()).context("no rank")?;
    Ok(TraceSide { samples, check_samples, verdict: judged.verdict, first, kernels, paths: rank_paths })
}

/// The host samples `check` left in a kept trace (its context event): the same phases a
/// comparison of check results compares, far more sensitive than anything a trace shows.
fn context_samples(a: &Analysis, rank: Option<u64>) -> Option<RunSamples> {
    let w = a.workload.as_ref()?;
    let host = |phase: &str| w.phases.get(phase).map(|p| p.host_us.clone()).unwrap_or_default();
    let gpu = |phase: &str| w.phases.get(phase).and_then(|p| p.gpu_us_per_replay);
    Some(RunSamples {
        rank,
        host_before: host("before"),
        host_after: host("after"),
        gpu_before: gpu("before"),
        gpu_after: gpu("after"),
        occupancy: None,
        launches: Vec::new(),
    })
}

fn compare_traces(b: &TraceSide, c: &TraceSide, settings: &Settings, force: bool) -> Comparison {
    let cfg = &settings.config.compare;
    let bootstrap = Bootstrap { confidence: cfg.confidence, resamples: cfg.resamples, seed: cfg.seed };
    let mut figures = measure::trace_metrics(&b.samples, &c.samples, bootstrap);
    if !b.check_samples.is_empty() && !c.check_samples.is_empty() {
        // Only the host and GPU phases: occupancy and launches come from the traces themselves.
        let keep = ["host_before", "host_after", "gpu_before", "gpu_after"];
        figures.extend(
            measure::metrics(&b.check_samples, &c.check_samples, bootstrap)
                .into_iter()
                .filter(|m| keep.contains(&m.id.as_str())),
        );
    }
    let differences = judge::differences(&measure::trace_facts(&b.first), &measure::trace_facts(&c.first));
    let mut judged = judge::judge(info(b), info(c), differences, figures, cfg, force);
    judged.kernels = b
        .kernels
        .iter()
        .filter_map(|(rank, bk, bg)| {
            let (_, ck, cg) = c.kernels.iter().find(|k| k.0 == *rank)?;
            let side = |kernels, graphs| KernelSource { kernels, graphs };
            Some(kernel_diff(side(bk, bg), side(ck, cg), *rank))
        })
        .collect();
    judged
}

fn info(side: &TraceSide) -> RunInfo {
    let a = &side.first;
    let w = a.workload.as_ref();
    RunInfo {
        path: None,
        verdict: side.verdict,
        preset: w.map_or_else(|| "trace".to_string(), |w| w.workload.preset.clone()),
        gpu_name: a.devices.iter().find_map(|d| d.name.clone()),
        torch: w.and_then(|w| w.inventory.as_ref()).and_then(|i| i.torch.clone()),
        launchguard_version: w.map_or_else(|| "–".to_string(), |w| w.launchguard_version.clone()),
    }
}
