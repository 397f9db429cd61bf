//! `launchguard analyze TRACE...`: one trace, or the ranks of one distributed run (several traces,
//! or a folder of them).

use anyhow::Context;
use launchguard_analysis::analyze::Options;
use launchguard_pipeline::{inputs, Keep, ReadOptions};
use launchguard_trace::Parser;

use crate::cli::{AnalyzeArgs, ParserArg};
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
    let read = ReadOptions { parser, limits: super::settings::input(&settings, &args.input)? };
    let paths = inputs::expand(&args.traces)?;
    let stdin = paths.iter().filter(|p| inputs::is_stdin(p)).count();
    anyhow::ensure!(stdin <= 1, "standard input (-) can be read once only");
    anyhow::ensure!(
        stdin == 0 || args.reports.annotate_trace.is_none(),
        "--annotate-trace copies the trace, and standard input cannot be read again: save the trace to a file first"
    );
    let measure = Options {
        within,
        within_interiors: args.within_interiors,
        gap_us: settings.config.thresholds.gap_us,
        kernel_positions: false,
    };
    let keep = if args.reports.draws() { Keep::Spans } else { Keep::Document };
    let mut run = launchguard_pipeline::judge(&paths, &read, &measure, &settings, keep)?;
    outputs::notices(&run.notices);
    outputs::emit_run(&mut run, args.format, &args.reports)?;
    Ok(run.judged.verdict().exit_code() as u8)
}
