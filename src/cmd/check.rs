//! `launchguard check`.

use std::io::IsTerminal;

use launchguard_check::{CheckReport, CheckRun, Options, Workload};

use crate::cli::{CheckArgs, CheckLimitArgs, Format, ThresholdArgs, WorkloadArgs};
use crate::outputs;

/// Builds the workload from the preset and the knobs.
pub fn workload(args: &WorkloadArgs, preset_default: &str) -> anyhow::Result<Workload> {
    let name = args.preset.as_deref().unwrap_or(preset_default);
    let mut w = Workload::preset(name).ok_or_else(|| {
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
/// `selftest`): defaults, then the config file, then flags; then the linkage of the PyTorch that
/// will run.
pub fn options(
    workload_args: &WorkloadArgs,
    thresholds: &ThresholdArgs,
    limits: &CheckLimitArgs,
    progress: bool,
) -> anyhow::Result<Options> {
    let mut config = super::config::load(thresholds)?;
    let c = &mut config.check;
    if let Some(p) = &workload_args.python {
        c.python = p.clone();
    }
    if let Some(t) = workload_args.tp {
        c.tp = t;
    }
    if let Some(t) = workload_args.timeout {
        c.timeout_s = t;
    }
    if let Some(v) = limits.headroom_fraction {
        c.headroom_fraction = v;
    }
    if let Some(v) = limits.headroom_abs_us {
        c.headroom_abs_us = v;
    }
    if let Some(v) = limits.residual_warn_ratio {
        c.residual_warn_ratio = v;
    }
    anyhow::ensure!(c.tp >= 1, "--tp must be at least 1");
    anyhow::ensure!(c.timeout_s >= 1, "--timeout must be at least 1 s");
    anyhow::ensure!(workload_args.inject_delay_us >= 0.0, "--inject-delay-us must not be negative");
    if let Some(bad) = workload_args.inject_delay_ranks.iter().flatten().find(|&&r| r >= c.tp) {
        anyhow::bail!("--inject-delay-ranks names rank {bad}, but --tp {} has ranks 0 to {}", c.tp, c.tp - 1);
    }
    let preset_default = config.check.preset.clone();
    let python_explicit = workload_args.python.is_some() || config.check.python != "python3";
    let user_set_occupancy = thresholds.occupancy_fail.is_some()
        || thresholds.occupancy_warn.is_some()
        || thresholds.config.is_some();
    // Linkage of the PyTorch about to run: explains the measurement, fails only where configured.
    launchguard_linkage::validate_forbid(&config.linkage.forbid)?;
    let (linkage, extra_checks) = match launchguard_linkage::inspect(
        &launchguard_linkage::Target::Python(config.check.python.clone()),
        &launchguard_linkage::Options::default(),
    ) {
        Ok(report) => {
            let check = super::linkage::linkage_check(&report, &config.linkage.forbid)?;
            (Some(serde_json::to_value(&report)?), vec![check])
        }
        // No interpreter or no torch: the workload says so and the check skips.
        Err(e) => {
            let c = launchguard_analysis::Check::new(
                "linkage",
                launchguard_analysis::Status::Skip,
                None,
                None,
                format!("linkage not inspected: {e}"),
            );
            (None, vec![c])
        }
    };
    Ok(Options {
        workload: workload(workload_args, &preset_default)?,
        config,
        python_explicit,
        inject_delay_us: workload_args.inject_delay_us,
        inject_delay_ranks: workload_args.inject_delay_ranks.clone(),
        keep_trace: None,
        progress,
        user_set_occupancy,
        linkage,
        extra_checks,
    })
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let progress = args.format == Format::Text || std::io::stderr().is_terminal();
    let mut opts = options(&args.workload, &args.thresholds, &args.limits, progress)?;
    opts.keep_trace = args.keep_trace.clone();
    // Read the baseline first: a bad file should not cost a GPU run.
    let baseline = match &args.baseline {
        Some(path) => {
            launchguard_check::compare::validate_config(&opts.config.compare)?;
            Some(launchguard_check::compare::read_result(path)?)
        }
        None => None,
    };
    let mut run = launchguard_check::run(&opts)?;
    if run.report.verdict == launchguard_analysis::Verdict::Skip {
        let reason = run.report.reason.as_deref().unwrap_or("cannot run here");
        anyhow::ensure!(!args.require_gpu, "--require-gpu: {reason}");
        eprintln!("launchguard: skip: {reason}");
    } else if let Some(baseline) = &baseline {
        let comparison =
            launchguard_check::compare::compare(baseline, &run.report, &opts.config.compare, false);
        run.report.checks.extend(comparison.checks());
        run.report.verdict = launchguard_analysis::Verdict::of(&run.report.checks);
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
            report.phases.get(*label).map(|p| launchguard_report::PhaseSamples {
                label,
                host_us: &p.host_us,
                gpu_us_per_replay: p.gpu_us_per_replay,
            })
        })
        .collect();
    let view = launchguard_report::View {
        command: "check",
        verdict: report.verdict,
        reason: report.reason.as_deref(),
        checks: &report.checks,
        analysis: report.analysis.as_ref(),
        timeline: run.timeline.as_ref(),
        phases: &phases,
        document: &document,
        ranks: None,
    };
    // With several ranks, the trace part of the report is rank 0's (the first rank run).
    let view = match (&report.across, report.ranks.first()) {
        (Some(across), Some(first)) => view.with_ranks(across, u64::from(first.rank)),
        _ => view,
    };
    let bytes = document.to_file_bytes();
    for path in [&args.json, &args.save_baseline].into_iter().flatten() {
        launchguard_report::write_atomic(path, &bytes)?;
    }
    if let (Format::Text, Some(across)) = (args.format, &report.across) {
        // The ranks side by side first; the report below is rank 0's trace and every check.
        let text = launchguard_report::ranks_terminal::render(across);
        std::io::Write::write_all(&mut std::io::stdout().lock(), format!("{text}\n").as_bytes())?;
    }
    let trace = args.keep_trace.as_deref();
    outputs::emit(&view, args.format, &args.reports, trace)
}
