//! `launchguard check`.

use std::io::IsTerminal;

use launchguard_check::{CheckReport, CheckRun, Options, Workload};
use launchguard_judge::Verdict;

use crate::cli::{CheckArgs, CheckLimitArgs, Format, ThresholdArgs, WorkloadArgs};
use crate::outputs;

/// Builds the workload from the preset and the knobs.
pub fn workload(args: &WorkloadArgs, preset_default: &str) -> anyhow::Result<Workload> {
    let name = args.preset.as_deref().unwrap_or(preset_default);
    let mut w = launchguard_check::preset::preset(name).ok_or_else(|| {
        anyhow::anyhow!(
            "unknown preset '{name}' (presets: {})",
            launchguard_check::preset::PRESETS.join(", ")
        )
    })?;
    let knob = |v: Option<u32>, field: &mut u32| {
        if let Some(v) = v {
            *field = v;
        }
    };
    knob(args.layers, &mut w.layers);
    knob(args.batch, &mut w.batch);
    knob(args.hidden, &mut w.hidden);
    knob(args.heads, &mut w.heads);
    knob(args.replays, &mut w.replays);
    knob(args.device, &mut w.device);
    if let Some(d) = &args.dtype {
        anyhow::ensure!(
            ["float16", "bfloat16", "float32"].contains(&d.as_str()),
            "--dtype must be float16, bfloat16 or float32, got '{d}'"
        );
        w.dtype = d.clone();
    }
    anyhow::ensure!(
        w.layers > 0 && w.batch > 0 && w.replays > 0,
        "layers, batch and replays must be positive"
    );
    anyhow::ensure!(
        w.heads > 0 && w.hidden % w.heads == 0,
        "--hidden ({}) must divide by --heads ({})",
        w.hidden,
        w.heads
    );
    Ok(w)
}

/// Builds `check`'s options from the workload flags, thresholds and limits (shared with
/// `selftest`): the settings, then the linkage of the PyTorch that will run.
pub fn options(
    workload_args: &WorkloadArgs,
    thresholds: &ThresholdArgs,
    limits: &CheckLimitArgs,
    progress: bool,
) -> anyhow::Result<Options> {
    let settings = super::settings::check(workload_args, thresholds, limits)?;
    let c = &settings.config.check;
    anyhow::ensure!(workload_args.inject_delay_us >= 0.0, "--inject-delay-us must not be negative");
    if let Some(bad) = workload_args.inject_delay_ranks.iter().flatten().find(|&&r| r >= c.tp) {
        anyhow::bail!("--inject-delay-ranks names rank {bad}, but --tp {} has ranks 0 to {}", c.tp, c.tp - 1);
    }
    let python_explicit = settings.is_explicit("check.python");
    // Linkage of the PyTorch about to run: explains the measurement, fails only where configured.
    let linkage = launchguard_linkage::inspect(
        &launchguard_linkage::Target::Python(c.python.clone()),
        &launchguard_linkage::Options::default(),
    )
    .map_err(|e| e.to_string())
    .and_then(|report| serde_json::to_value(&report).map_err(|e| e.to_string()));
    Ok(Options {
        workload: workload(workload_args, &c.preset)?,
        python_explicit,
        inject_delay_us: workload_args.inject_delay_us,
        inject_delay_ranks: workload_args.inject_delay_ranks.clone(),
        keep_trace: None,
        progress,
        linkage,
        baseline: None,
        settings,
    })
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let progress = args.format == Format::Text || std::io::stderr().is_terminal();
    let mut opts = options(&args.workload, &args.thresholds, &args.limits, progress)?;
    opts.keep_trace = args.keep_trace.clone();
    // Read the baseline first: a bad file should not cost a GPU run.
    opts.baseline = args.baseline.as_deref().map(launchguard_check::compare::read_result).transpose()?;
    let run = launchguard_check::run(&opts)?;
    if run.report.verdict == Verdict::Skip {
        let reason = run.report.reason.as_deref().unwrap_or("cannot run here");
        anyhow::ensure!(!args.require_gpu, "--require-gpu: {reason}");
        eprintln!("launchguard: skip: {reason}");
    }
    emit(&run, &args)?;
    Ok(run.report.verdict.exit_code() as u8)
}

fn emit(run: &CheckRun, args: &CheckArgs) -> anyhow::Result<()> {
    let report: &CheckReport = &run.report;
    let document = launchguard_report::Document::of(report)?;
    let phases: Vec<launchguard_report::PhaseSamples<'_>> = ["before", "profiled", "after"]
        .iter()
        .filter_map(|label| {
            report.phases.get(*label).map(|p| launchguard_report::PhaseSamples { label, report: p })
        })
        .collect();
    // With several ranks, the trace part of the report is rank 0's (the first rank run).
    let analysis = match (&report.analysis, &report.across) {
        (Some(a), _) => Some(&a.figures),
        (None, Some(across)) => across.ranks.first().map(|r| &r.analysis.figures),
        (None, None) => None,
    };
    let view = launchguard_report::View {
        command: "check",
        verdict: report.verdict,
        reason: report.reason.as_deref(),
        checks: &report.checks,
        analysis,
        timeline: run.timeline(),
        phases: &phases,
        document: &document,
        ranks: None,
    };
    // Every rank's trace, for the timelines of each rank.
    let every: Vec<&launchguard_trace::Trace> = run.traces.iter().collect();
    let view = match (&report.across, report.ranks.first()) {
        (Some(across), Some(first)) => {
            view.with_ranks(across, u64::from(first.rank)).with_rank_traces(&every)
        }
        _ => view,
    };
    let bytes = document.to_file_bytes();
    for path in [&args.json, &args.save_baseline].into_iter().flatten() {
        launchguard_report::write_atomic(path, &bytes)?;
        outputs::wrote(path);
    }
    if let (Format::Text, Some(across)) = (args.format, &report.across) {
        // The ranks side by side first; the report below is rank 0's trace and every check.
        let text = launchguard_report::ranks_terminal::render(across);
        outputs::print(format!("{text}\n").as_bytes(), Format::Text)?;
    }
    let trace = args.keep_trace.as_deref();
    // The traces check measured lie in a temporary folder: an annotated copy per rank copies the
    // kept ones.
    let tp = report.ranks.len() as u32;
    let kept = |rank: u64, _: &launchguard_trace::Trace| match trace {
        Some(keep) => Ok(launchguard_check::kept_path(keep, rank as u32, tp)),
        None => anyhow::bail!(
            "--annotate-trace with several ranks copies the traces check kept: add --keep-trace PATH"
        ),
    };
    outputs::emit(&view, args.format, &args.reports, trace.filter(|_| tp <= 1), &kept)
}
