//! Standard output and report files, the same for every command.

use std::io::Write;
use std::path::Path;

use launchguard_report::annotate::AnnotatedTrace;
use launchguard_report::html::Html;
use launchguard_report::junit::Junit;
use launchguard_report::markdown::Markdown;
use launchguard_report::{json::Json, terminal::Terminal, write_atomic_with, Export, View};

use crate::cli::{Format, ReportArgs};

/// Prints the result in `format` and writes every report file asked for.
pub fn emit(
    view: &View<'_>,
    format: Format,
    reports: &ReportArgs,
    trace: Option<&Path>,
) -> anyhow::Result<()> {
    // Render the files first: a report that cannot be written is an error (exit 2) before
    // anything is printed as if all went well.
    write_reports(view, reports, trace)?;
    let bytes = match format {
        Format::Text => Terminal.render(view)?,
        Format::Json => Json.render(view)?,
    };
    print(&bytes, format)
}

/// Writes a rendering to standard output: the readable report coloured where the output is a
/// terminal (anstream strips the codes in a pipe, a file, or under `NO_COLOR`).
pub fn print(bytes: &[u8], format: Format) -> anyhow::Result<()> {
    let painted;
    let bytes = match (format, std::str::from_utf8(bytes)) {
        (Format::Text, Ok(text)) => {
            painted = launchguard_report::terminal::paint(text);
            painted.as_bytes()
        }
        _ => bytes,
    };
    let mut out = anstream::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    if let Err(e) = out.write_all(bytes).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Says on standard error that a file was written: report files are never written silently.
pub fn wrote(path: &Path) {
    eprintln!("launchguard: wrote {}", path.display());
}

pub(crate) fn write_reports(
    view: &View<'_>,
    reports: &ReportArgs,
    trace: Option<&Path>,
) -> anyhow::Result<()> {
    let annotate = match (&reports.annotate_trace, trace) {
        (Some(path), Some(input)) => Some((
            path,
            AnnotatedTrace { input, gzip: path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz")) },
        )),
        (Some(_), None) => anyhow::bail!("--annotate-trace needs a trace; this command has none"),
        (None, _) => None,
    };
    let mut jobs: Vec<(&Path, &dyn Export, &str)> = Vec::new();
    if let Some(p) = &reports.junit {
        jobs.push((p, &Junit, "--junit"));
    }
    if let Some(p) = &reports.markdown {
        jobs.push((p, &Markdown, "--markdown"));
    }
    if let Some(p) = &reports.html {
        jobs.push((p, &Html, "--html"));
    }
    if let Some((p, a)) = &annotate {
        jobs.push((p, a, "--annotate-trace"));
    }
    for (i, (path, _, flag)) in jobs.iter().enumerate() {
        if let Some(input) = trace {
            // The input is never modified, not even by a report written over it.
            anyhow::ensure!(
                !same_file(path, input),
                "{flag} {} is the input trace; refusing to overwrite it",
                path.display()
            );
        }
        if let Some((_, _, other)) = jobs[..i].iter().find(|(p, _, _)| same_file(p, path)) {
            anyhow::bail!("{other} and {flag} both write {}", path.display());
        }
    }
    for (path, export, _) in jobs {
        write_atomic_with(path, |w| export.write_to(view, w))?;
        wrote(path);
    }
    Ok(())
}

/// Whether two paths name the same file (a link to it included), or would: equal paths of files
/// not yet there.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
