//! `launchguard check`.

use std::io::IsTerminal;

use launchguard_check::{CheckOptions, CheckReport, CheckRun, Workload};
use launchguard_judge::Verdict;

use launchguard_pipeline::{Keep, ReadOptions};

use crate::cli::{
    CheckArgs, CheckLimitArgs, Format, InputLimitArgs, LauncherArg, ThresholdArgs, WorkloadArgs,
};
use crate::outputs;
use launchguard_check::launcher;

/// Builds the workload from the preset and the knobs.
pub fn workload(args: &WorkloadArgs, name: &str) -> anyhow::Result<Workload> {
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
    input: &InputLimitArgs,
    progress: bool,
) -> anyhow::Result<CheckOptions> {
    let settings = super::settings::check(thresholds, limits)?;
    let read = ReadOptions { parser: Default::default(), limits: super::settings::input(&settings, input)? };
    let c = &settings.config.check;
    anyhow::ensure!(workload_args.inject_delay_us >= 0.0, "--inject-delay-us must not be negative");
    if let Some(bad) = workload_args.inject_delay_ranks.iter().flatten().find(|&&r| r >= c.tp) {
        anyhow::bail!("--inject-delay-ranks names rank {bad}, but --tp {} has ranks 0 to {}", c.tp, c.tp - 1);
    }
    let python_explicit = settings.is_set(launchguard_judge::config::CheckKey::Python);
    // Linkage of the PyTorch about to run: explains the measurement, fails only where configured.
    let linkage = launchguard_linkage::inspect(
        &launchguard_linkage::Target::Python(c.python.clone()),
        &launchguard_linkage::InspectOptions::default(),
    )
    .map_err(|e| e.to_string())
    .and_then(|report| serde_json::to_value(&report).map_err(|e| e.to_string()));
    Ok(CheckOptions {
        workload: workload(workload_args, &c.preset)?,
        python_explicit,
        inject_delay_us: workload_args.inject_delay_us,
        inject_every: workload_args.inject_every,
        inject_delay_ranks: workload_args.inject_delay_ranks.clone(),
        keep_trace: None,
        progress,
        linkage,
        baseline: None,
        launched: None,
        settings,
        read,
        keep: Keep::Document,
    })
}

/// This process's rank when a launcher started it (see `--launcher`).
fn launched(
    args: &CheckArgs,
    timeout_s: u64,
    tp_flag: Option<u32>,
) -> anyhow::Result<Option<launchguard_check::Launched>> {
    let env = |k: &str| std::env::var(k).ok();
    let rank = match args.launcher {
        LauncherArg::None => return Ok(None),
        LauncherArg::Auto => launcher::detect(&env)?,
        LauncherArg::Env => Some(launcher::detect(&env)?.ok_or_else(|| {
            anyhow::anyhow!(
                "--launcher env: neither RANK and WORLD_SIZE (torchrun) nor SLURM_PROCID and SLURM_NTASKS (srun) are set"
            )
        })?),
    };
    let Some(rank) = rank else { return Ok(None) };
    if let Some(tp) = tp_flag.filter(|&tp| tp != rank.world) {
        anyhow::bail!(
            "--tp {tp} but the launcher started {} ranks (WORLD_SIZE): leave --tp out under a launcher",
            rank.world
        );
    }
    // Said once the workload has found it can run here: a rank without torch or a GPU skips.
    let unset = ["MASTER_ADDR", "MASTER_PORT"]
        .into_iter()
        .filter(|var| rank.world > 1 && env(var).is_none_or(|v| v.is_empty()))
        .collect::<Vec<_>>();
    let unset = (!unset.is_empty()).then(|| {
        format!(
            "rank {} of {}: {} not set; the ranks meet at MASTER_ADDR:MASTER_PORT (torchrun sets them; with srun, set them to the first node and a free port)",
            rank.rank,
            rank.world,
            match unset.as_slice() {
                [one] => format!("{one} is"),
                _ => "MASTER_ADDR and MASTER_PORT are".to_string(),
            }
        )
    });
    // The launcher ends a run with SIGTERM: the workload is stopped and the run said to have
    // failed, naming what is known, rather than dying mid-write.
    let term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, std::sync::Arc::clone(&term))?;
    let terminated = move || {
        term.load(std::sync::atomic::Ordering::Relaxed)
            .then(|| "the launcher ended the run (SIGTERM)".to_string())
    };
    Ok(Some(launchguard_check::Launched {
        rank,
        out: args.out.clone(),
        run_id: launcher::run_id(&env),
        wait: std::time::Duration::from_secs(args.wait.unwrap_or(timeout_s)),
        unset,
        terminated: Some(std::sync::Arc::new(terminated)),
    }))
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let progress = args.format == Format::Text || std::io::stderr().is_terminal();
    let mut opts = options(&args.workload, &args.thresholds, &args.limits, &args.input, progress)?;
    opts.keep_trace = args.keep_trace.clone();
    opts.keep = if args.reports.draws() { Keep::Spans } else { Keep::Document };
    let tp_flag =
        args.limits.set.contains(&launchguard_judge::config::CheckKey::Tp).then_some(args.limits.values.tp);
    opts.launched = launched(&args, opts.settings.config.check.timeout_s, tp_flag)?;
    if let Some(l) = &opts.launched {
        opts.settings.config.check.tp = l.rank.world;
    }
    // Read the baseline first: a bad file should not cost a GPU run.
    opts.baseline = args.baseline.as_deref().map(launchguard_check::compare::read_result).transpose()?;
    let run = launchguard_check::run(&opts)?;
    if run.delegated {
        // Rank 0 gives the verdict; this rank's part is done.
        eprintln!("launchguard: {}", run.report.reason.as_deref().unwrap_or("rank 0 judges the run"));
        return Ok(0);
    }
    if run.report.verdict == Verdict::Skip {
        let reason = run.report.reason.as_deref().unwrap_or("cannot run here");
        anyhow::ensure!(!args.require_gpu, "--require-gpu: {reason}");
        // The readable report says it on standard output; JSON is for a program, so a person
        // watching reads it here.
        if args.format == Format::Json {
            eprintln!("launchguard: skip: {reason}");
        }
    }
    emit(&run, &args)?;
    let gate = super::history::after_check(&run.report, &args.history)?;
    Ok((run.report.verdict.exit_code() as u8).max(gate))
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
    let (analysis, detail_rank) = match (&report.analysis, &report.across) {
        (Some(a), _) => (Some(&a.figures), 0),
        (None, Some(across)) => {
            (across.ranks.first().map(|r| &r.analysis.figures), across.ranks.first().map_or(0, |r| r.rank))
        }
        (None, None) => (None, 0),
    };
    let view = launchguard_report::View {
        command: "check",
        verdict: report.verdict,
        reason: report.reason.as_deref(),
        checks: &report.checks,
        analysis,
        findings: outputs::findings_of(run.drawing.as_ref(), detail_rank),
        phases: &phases,
        document: &document,
        ranks: None,
    };
    let view = match (&report.across, report.ranks.first()) {
        (Some(across), Some(first)) => view
            .with_ranks(across, u64::from(first.rank))
            .with_rank_spans(outputs::ranks_drawn(run.drawing.as_ref())),
        _ => view,
    };
    let bytes = document.to_file_bytes();
    let also: Vec<(&str, &std::path::Path, &[u8])> =
        [("--json", &args.json), ("--save-baseline", &args.save_baseline)]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag, p.as_deref()?, bytes.as_slice())))
            .collect();
    // The traces check measured lie in a temporary folder: an annotated copy copies the kept ones.
    let tp = report.ranks.len().max(1) as u32;
    let copies: Vec<(Option<u64>, std::path::PathBuf)> = match &args.keep_trace {
        Some(keep) if tp <= 1 => vec![(None, keep.clone())],
        Some(keep) => {
            (0..tp).map(|r| (Some(u64::from(r)), launchguard_check::kept_path(keep, r, tp))).collect()
        }
        None if tp > 1 && args.reports.annotate_trace.is_some() => anyhow::bail!(
            "--annotate-trace with several ranks copies the traces check kept: add --keep-trace PATH"
        ),
        None => Vec::new(),
    };
    let inputs: Vec<&std::path::Path> = copies.iter().map(|(_, p)| p.as_path()).collect();
    outputs::emit(&view, args.format, &args.reports, &copies, &inputs, &also)
}
