//! Standard output and report files, the same for every command.

use std::io::Write;
use std::path::{Path, PathBuf};

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
    rank_input: &RankInput<'_>,
) -> anyhow::Result<()> {
    // Render the files first: a report that cannot be written is an error (exit 2) before
    // anything is printed as if all went well.
    write_reports(view, reports, trace.as_slice(), rank_input)?;
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
            painted = launchguard_report::terminal::paint(&launchguard_report::escape::printable(text));
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

/// Writes every report file asked for. `inputs` are the traces read (none for a command without
/// one): no report may overwrite one. With several ranks whose traces the view holds,
/// `--annotate-trace` writes one copy per rank (`.rankN` before the extension, or `{rank}` in the
/// path replaced); the other formats show every rank in one file.
pub(crate) fn write_reports(
    view: &View<'_>,
    reports: &ReportArgs,
    inputs: &[&Path],
    rank_input: &RankInput<'_>,
) -> anyhow::Result<()> {
    let ranks = view.ranks.filter(|r| !r.traces.is_empty());
    // (output, flag, what): the annotated copies per rank need their rank's own view.
    let mut jobs: Vec<(PathBuf, &str, Job)> = Vec::new();
    for (flag, p) in reports.files.asked() {
        let export: &dyn Export = match flag {
            "--junit" => &Junit,
            "--markdown" => &Markdown,
            _ => &Html,
        };
        jobs.push((p.clone(), flag, Job::Whole(export)));
    }
    if let Some(path) = &reports.annotate_trace {
        match (ranks, inputs.first()) {
            (Some(r), _) => {
                let n = r.analysis.ranks.len() as u32;
                for k in &r.analysis.ranks {
                    let trace = r.trace_of(k.rank).ok_or_else(|| {
                        anyhow::anyhow!(
                            "--annotate-trace: the trace of rank {} is not at hand to copy",
                            k.rank
                        )
                    })?;
                    let input = rank_input(k.rank, trace)?;
                    let out = launchguard_check::kept_path(path, k.rank as u32, n);
                    jobs.push((out, "--annotate-trace", Job::Rank(k.rank, trace, input)));
                }
            }
            (None, Some(input)) => jobs.push((path.clone(), "--annotate-trace", Job::Annotate(input))),
            (None, None) => anyhow::bail!("--annotate-trace needs a trace; this command has none"),
        }
    }
    let outputs: Vec<(&str, &Path)> = jobs.iter().map(|(p, flag, _)| (*flag, p.as_path())).collect();
    refuse_clashes(&outputs, inputs)?;
    for (path, _, job) in &jobs {
        let gzip = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        match job {
            Job::Whole(export) => write_atomic_with(path, |w| export.write_to(view, w))?,
            Job::Annotate(input) => {
                write_atomic_with(path, |w| AnnotatedTrace { input, gzip }.write_to(view, w))?
            }
            Job::Rank(rank, trace, input) => {
                let r = ranks.expect("rank jobs come with ranks");
                let k = r.analysis.ranks.iter().find(|k| k.rank == *rank).expect("a rank of the view");
                let one = View::of_analysis(
                    &k.analysis.figures,
                    &trace.timeline,
                    &k.analysis.checks,
                    k.analysis.verdict,
                    view.document,
                );
                let input = input.as_path();
                write_atomic_with(path, |w| AnnotatedTrace { input, gzip }.write_to(&one, w))?
            }
        }
        wrote(path);
    }
    if let Some(dir) = &reports.csv {
        for path in launchguard_report::csv_tables::write_dir(view, dir)? {
            wrote(&path);
        }
    }
    Ok(())
}

/// Refuses outputs `(flag, path)` that would overwrite an input, or each other.
pub(crate) fn refuse_clashes(outputs: &[(&str, &Path)], inputs: &[&Path]) -> anyhow::Result<()> {
    for (i, (flag, path)) in outputs.iter().enumerate() {
        // The inputs are never modified, not even by a report written over them.
        if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
            anyhow::bail!(
                "{flag} {} is the input {}; refusing to overwrite it",
                path.display(),
                input.display()
            );
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same_file(p, path)) {
            anyhow::bail!("{other} and {flag} both write {}", path.display());
        }
    }
    Ok(())
}

/// What one report file is.
enum Job<'a> {
    /// A rendering of the whole view.
    Whole(&'a dyn Export),
    /// The annotated copy of the one trace.
    Annotate(&'a Path),
    /// The annotated copy of one rank's trace, read from the file given.
    Rank(u64, &'a launchguard_trace::Trace, PathBuf),
}

/// The file to copy for rank N's annotated trace: the file it was read from (`analyze`), or
/// the copy `check` kept; an error saying why when there is none.
pub type RankInput<'a> = dyn Fn(u64, &launchguard_trace::Trace) -> anyhow::Result<PathBuf> + 'a;

/// The file each rank's trace was read from.
pub fn read_from(_: u64, trace: &launchguard_trace::Trace) -> anyhow::Result<PathBuf> {
    Ok(trace.source.path.clone())
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
