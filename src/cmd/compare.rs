//! `launchguard compare BASELINE CURRENT`: two `check` results, or two traces (plain or gzip, or a
//! folder of rank traces each). Both are only read. Measured, then judged once.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use launchguard_analysis::compare::{self as measure, Bootstrap, RunSamples, TraceSamples};
use launchguard_analysis::kernel_diff::{kernel_diff, KernelSource};
use launchguard_analysis::kernels::Kernels;
use launchguard_analysis::model::GraphFigures;
use launchguard_analysis::{Analysis, Options};
use launchguard_check::compare as check_compare;
use launchguard_judge::compare::{self as judge, Comparison, RunInfo};
use launchguard_judge::Settings;
use launchguard_pipeline::{inputs, Judged, JudgedRun, Keep, ReadOptions};

use crate::cli::CompareArgs;
use crate::outputs;
use launchguard_report::compare as report;
use launchguard_report::Doc;

pub fn run(args: CompareArgs) -> anyhow::Result<u8> {
    let settings = super::settings::compare(args.config.as_deref(), &args.limits)?;
    let cfg = &settings.config.compare;
    let read =
        ReadOptions { parser: Default::default(), limits: super::settings::input(&settings, &args.input)? };
    let keep = if args.reports.files.html.is_some() { Keep::Spans } else { Keep::Document };
    let side = |path: &Path| side(path, &read, &settings, keep);
    let (baseline, current) = (side(&args.baseline)?, side(&args.current)?);
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
    for s in [&baseline, &current] {
        if let Side::Traces(t) = s {
            outputs::notices(&t.run.notices);
        }
    }
    // Report files first: one that cannot be written is an error (exit 2) before anything is
    // printed as if all went well.
    let inputs: Vec<&Path> = [&baseline, &current].iter().flat_map(|s| s.paths()).collect();
    let drawn = traces(&c, [&baseline, &current]);
    let doc = Doc::Compare(&c, drawn.as_deref());
    let csv = outputs::csv_tables(&doc, args.reports.csv.as_deref())?;
    outputs::preflight(&outputs::planned(&args.reports.files, csv.as_ref()), &inputs)?;
    outputs::write_files(&doc, &args.reports.files)?;
    outputs::write_csv(csv)?;
    outputs::print_doc(&doc, args.format)?;
    Ok(c.verdict.exit_code() as u8)
}

/// For traces, the pairs of timelines the HTML page draws, one per rank the two runs share (the
/// page picks which to draw when there are many): the rank that makes the others wait first, then
/// the ranks of a regression.
fn traces<'a>(c: &Comparison, sides: [&'a Side; 2]) -> Option<Vec<[report::html::TraceSide<'a>; 2]>> {
    let (Side::Traces(b), Side::Traces(k)) = (sides[0], sides[1]) else { return None };
    let failing: Vec<u64> = c
        .metrics
        .iter()
        .filter(|m| m.status == launchguard_judge::Status::Fail)
        .filter_map(|m| m.figures.rank)
        .collect();
    let mut ranks: Vec<Option<u64>> = b.run.inputs.iter().map(|p| p.0).collect();
    ranks.sort_by_key(|r| {
        (c.current.culprit.is_none() || *r != c.current.culprit, !r.is_some_and(|r| failing.contains(&r)), *r)
    });
    ranks.dedup();
    let pairs: Vec<_> =
        ranks.into_iter().filter_map(|rank| Some([drawn_side(b, rank)?, drawn_side(k, rank)?])).collect();
    (!pairs.is_empty()).then_some(pairs)
}

/// What one side draws: `rank`'s trace, else its first.
fn drawn_side(t: &TraceSide, rank: Option<u64>) -> Option<report::html::TraceSide<'_>> {
    let i = t.run.inputs.iter().position(|p| p.0 == rank).unwrap_or(0);
    let r = t.run.inputs.get(i)?.0.unwrap_or(0);
    let findings = outputs::findings_of(t.run.drawing.as_ref(), r)?;
    let analysis = match &t.run.judged {
        Judged::One(a) => &a.figures,
        Judged::Ranks(k) => &k.ranks.iter().find(|x| x.rank == r)?.analysis.figures,
    };
    Some(report::html::TraceSide { findings, analysis, rank })
}

fn measure(settings: &Settings) -> Options {
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
            Side::Traces(t) => t.run.inputs.iter().map(|p| p.1.as_path()).collect(),
        }
    }
}

/// A run's traces, measured and judged on their own.
struct TraceSide {
    /// The judged run.
    run: JudgedRun,
    /// What each rank measured.
    samples: Vec<TraceSamples>,
    /// What `check` measured besides the traces, per rank, when they carry its context.
    check_samples: Vec<RunSamples>,
    /// Per rank, the kernel table and the graphs it numbers.
    kernels: Vec<(Option<u64>, Kernels, Vec<GraphFigures>)>,
}

impl TraceSide {
    /// Rank 0's figures (the setup's facts).
    fn first(&self) -> &Analysis {
        match &self.run.judged {
            Judged::One(a) => &a.figures,
            Judged::Ranks(r) => &r.ranks[0].analysis.figures,
        }
    }
}

/// Reads one side: a folder of traces, a trace, or a check result (told apart by content).
fn side(path: &Path, read: &ReadOptions, settings: &Settings, keep: Keep) -> anyhow::Result<Side> {
    let paths = if path.is_dir() {
        inputs::expand(&[path.to_path_buf()])?
    } else if is_check_result(path)? {
        return Ok(Side::Check(Box::new(check_compare::read_result(path)?), path.to_path_buf()));
    } else {
        vec![path.to_path_buf()]
    };
    let run = launchguard_pipeline::judge(&paths, read, &measure(settings), settings, keep)?;
    let kernels_of =
        |a: &Analysis, rank: Option<u64>| (rank, a.kernels.clone(), a.replay_summary.graphs.clone());
    let (mut samples, mut check_samples, mut kernels) = (Vec::new(), Vec::new(), Vec::new());
    match &run.judged {
        Judged::One(a) => {
            samples.push(TraceSamples::of(&a.figures, None, None));
            kernels.push(kernels_of(&a.figures, None));
            check_samples.extend(context_samples(&a.figures, None));
        }
        Judged::Ranks(r) => {
            for k in &r.ranks {
                kernels.push(kernels_of(&k.analysis.figures, Some(k.rank)));
                let f = k.common.as_ref().unwrap_or(&k.whole);
                let occupancy = f.occupancy_excluding_wait.unwrap_or(f.occupancy);
                samples.push(TraceSamples::of(&k.analysis.figures, Some(k.rank), Some(occupancy)));
                check_samples.extend(context_samples(&k.analysis.figures, Some(k.rank)));
            }
        }
    }
    Ok(Side::Traces(Box::new(TraceSide { run, samples, check_samples, kernels })))
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
        sync_over_gpu: w.phases.get("before").map(|p| p.sync_over_gpu()).unwrap_or_default(),
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
    let differences = judge::differences(&measure::trace_facts(b.first()), &measure::trace_facts(c.first()));
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
    judged.lead_with_culprit();
    judged
}

fn info(side: &TraceSide) -> RunInfo {
    let a = side.first();
    let w = a.workload.as_ref();
    RunInfo {
        path: None,
        verdict: side.run.judged.verdict(),
        reason: side.run.judged.reason().map(str::to_string),
        preset: w.map_or_else(|| "trace".to_string(), |w| w.workload.preset.clone()),
        gpu_name: a.devices.iter().find_map(|d| d.name.clone()),
        torch: w.and_then(|w| w.inventory.as_ref()).and_then(|i| i.torch.clone()),
        launchguard_version: w.map_or_else(|| "–".to_string(), |w| w.launchguard_version.clone()),
        warnings: match &side.run.judged {
            Judged::One(a) => a.figures.warnings.clone(),
            Judged::Ranks(r) => r
                .ranks
                .iter()
                .flat_map(|k| {
                    k.analysis.figures.warnings.iter().map(move |w| format!("rank {}: {w}", k.rank))
                })
                .collect(),
        },
        culprit: match &side.run.judged {
            Judged::Ranks(r) => r.across.culprit,
            Judged::One(_) => None,
        },
        waiting: match &side.run.judged {
            Judged::Ranks(r) => r.across.waiting.clone(),
            Judged::One(_) => Vec::new(),
        },
    }
}
