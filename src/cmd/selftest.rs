//! `launchguard selftest`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use launchguard_check::selftest;

use crate::cli::SelftestArgs;

pub fn run(args: SelftestArgs) -> anyhow::Result<u8> {
    anyhow::ensure!(
        args.inject_delay_us_unset(),
        "selftest sets the injected delay itself: use --delays, not --inject-delay-us or --inject-every"
    );
    anyhow::ensure!(
        args.delays.iter().all(|d| d.is_finite() && *d > 0.0),
        "--delays must be positive numbers of µs"
    );
    anyhow::ensure!(
        args.healthy + args.delays.len() as u32 > 0,
        "nothing to run: no healthy runs and no delays"
    );
    let opts = super::check::options(&args.workload, &args.thresholds, &args.limits, &args.input, false)?;
    if let Some(dir) = &args.keep_results {
        std::fs::create_dir_all(dir)?;
    }
    let total = args.healthy as u64 + args.delays.len() as u64;
    // Progress across the whole ladder, with the time left.
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {msg}  eta {eta}")
                .expect("valid template"),
        );
        b.set_message("starting");
        b
    } else {
        ProgressBar::hidden()
    };
    let plain = !std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut keep_error = None;
    let report = selftest::run(&opts, args.healthy, &args.delays, |i, n, rung, result| {
        bar.inc(1);
        let what =
            if rung.delay_us == 0.0 { "healthy".to_string() } else { format!("+{} µs", rung.delay_us) };
        bar.set_message(format!("{what}: {}", rung.verdict));
        if plain {
            let left = started.elapsed().as_secs_f64() / (i + 1) as f64 * (n - i - 1) as f64;
            eprintln!(
                "launchguard: selftest {}/{n} {what}: {} (about {left:.0} s left)",
                i + 1,
                rung.verdict
            );
        }
        if let (Some(dir), Some(result)) = (&args.keep_results, result) {
            let name = format!("run{:02}-delay{}.json", i, rung.delay_us);
            let bytes = serde_json::to_vec_pretty(result).map_err(anyhow::Error::from);
            if let Err(e) = bytes.and_then(|b| crate::outputs::write_atomic(&dir.join(name), &b)) {
                keep_error.get_or_insert(e);
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = keep_error {
        return Err(e.context("cannot keep a selftest result"));
    }
    crate::outputs::print_doc(&launchguard_report::Doc::Selftest(&report), args.format)?;
    if let Some(reason) = &report.reason {
        if args.format == crate::cli::Format::Json {
            eprintln!("launchguard: skip: {reason}");
        }
        return Ok(0);
    }
    Ok(if report.false_alarms > 0 { 1 } else { 0 })
}
