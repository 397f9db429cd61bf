//! `launchguard analyze TRACE`.

use anyhow::Context;
use launchguard_analysis::analyze::{analyze, Options};
use launchguard_trace::Parser;

use crate::cli::{AnalyzeArgs, ParserArg};
use crate::outputs;

pub fn run(args: AnalyzeArgs) -> anyhow::Result<u8> {
    let config = super::config::load(&args.thresholds)?;
    let within = args
        .within
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .context("--within is not a valid regular expression")?;
    let parser = match args.parser {
        ParserArg::Simple => Parser::Simple,
    };
    let trace = launchguard_trace::read_with(&args.traces[0], parser)?;
    if let Some(why) = &trace.truncated {
        eprintln!(
            "launchguard: warning: {} is truncated ({why}); analyzing the {} complete events read",
            args.traces[0].display(),
            trace.timeline.events
        );
    }
    let opts = Options { within, thresholds: config.thresholds.clone() };
    let analysis = analyze(&trace, &opts);
    let document = serde_json::to_value(&analysis)?;
    let view = launchguard_report::View {
        command: "analyze",
        verdict: analysis.verdict,
        reason: None,
        checks: &analysis.checks,
        analysis: Some(&analysis),
        timeline: Some(&trace.timeline),
        phases: &[],
        document: &document,
    };
    outputs::emit(&view, args.format, &args.reports, Some(&args.traces[0]))?;
    Ok(analysis.verdict.exit_code() as u8)
}
