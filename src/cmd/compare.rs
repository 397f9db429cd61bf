//! `launchguard compare BASELINE CURRENT`: both files are only read.

use std::io::Write;

use launchguard_check::compare;

use crate::cli::{CompareArgs, Format};

pub fn run(args: CompareArgs) -> anyhow::Result<u8> {
    let cfg = super::settings::compare(args.config.as_deref())?.config.compare;
    let baseline = compare::read_result(&args.baseline)?;
    let current = compare::read_result(&args.current)?;
    let mut c = compare::compare(&baseline, &current, &cfg, args.force);
    if !c.comparable {
        let why = c.incompatibility().unwrap_or_default();
        anyhow::bail!("incomparable results: {why} (--force compares anyway)");
    }
    c.baseline.path = Some(args.baseline.display().to_string());
    c.current.path = Some(args.current.display().to_string());
    let text = match args.format {
        Format::Text => launchguard_report::compare::render_terminal(&c),
        Format::Json => serde_json::to_string_pretty(&c)? + "\n",
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(c.verdict.exit_code() as u8)
}
