//! Standard output and report files, the same for every command.

use std::io::Write;
use std::path::{Path, PathBuf};

use launchguard_pipeline::{Drawing, Judged, JudgedRun};
use launchguard_report::annotate::AnnotatedTrace;
use launchguard_report::html::Html;
use launchguard_report::junit::Junit;
use launchguard_report::markdown::Markdown;
use launchguard_report::{
    json::Json, terminal::Terminal, write_atomic_with, Document, Export, PhaseSamples, RanksDrawn, View,
};

use crate::cli::{Format, ReportArgs};

/// Says on standard error what the reader noticed (a trace cut short), escaped: file names and
/// reasons come from the input.
pub fn notices(notices: &[String]) {
    for n in notices {
        eprintln!("launchguard: warning: {}", launchguard_report::escape::one_line(n));
    }
}

/// The phases of `check`'s host samples a trace it kept carries, in order.
fn phases_of(a: &launchguard_analysis::Analysis) -> Vec<PhaseSamples<'_>> {
    a.workload
        .iter()
        .flat_map(|w| {
            ["before", "profiled", "after"]
                .into_iter()
                .filter_map(|label| w.phases.get(label).map(|report| PhaseSamples { label, report }))
        })
        .collect()
}

/// The spans of every rank, when measured.
pub fn ranks_drawn(drawing: Option<&Drawing>) -> Option<RanksDrawn<'_>> {
    match drawing? {
        Drawing::Ranks { ranks, across } => Some(RanksDrawn { ranks, across }),
        Drawing::One(_) => None,
    }
}

/// The spans of one trace: the trace's own, or `rank`'s.
pub fn findings_of(drawing: Option<&Drawing>, rank: u64) -> Option<&launchguard_analysis::spans::Findings> {
    match drawing? {
        Drawing::One(f) => Some(f),
        Drawing::Ranks { ranks, .. } => ranks.iter().find(|(r, _)| *r == rank).map(|(_, f)| f),
    }
}

/// Prints a judged run (`analyze`) in `format` and writes every report file asked for.
pub fn emit_run(run: &JudgedRun, format: Format, reports: &ReportArgs) -> anyhow::Result<()> {
    match &run.judged {
        Judged::One(a) => {
            let document = Document::of(a.as_ref())?;
            // A trace `check` kept carries its host samples: shown as `check` shows them.
            let phases = phases_of(&a.figures);
            let findings = findings_of(run.drawing.as_ref(), 0);
            let view = View {
                phases: &phases,
                ..View::of_analysis(&a.figures, findings, &a.checks, a.verdict, &document)
            }
            .with_reason(a.reason.as_deref());
            emit(&view, format, reports, &run.inputs, &inputs_of(run))
        }
        Judged::Ranks(r) => {
            let document = Document::of(r.as_ref())?;
            let worst = r
                .ranks
                .iter()
                .find(|k| k.rank == r.across.worst_rank)
                .ok_or_else(|| anyhow::anyhow!("the worst rank is not among the ranks"))?;
            let findings = findings_of(run.drawing.as_ref(), worst.rank);
            let view = View::of_analysis(&worst.analysis.figures, findings, &r.checks, r.verdict, &document)
                .with_reason(r.reason.as_deref())
                .with_ranks(r, worst.rank)
                .with_rank_spans(ranks_drawn(run.drawing.as_ref()));
            write_reports(&view, reports, &run.inputs, &inputs_of(run))?;
            let bytes = match format {
                Format::Text => launchguard_report::ranks_terminal::render(r).into_bytes(),
                Format::Json => document.to_file_bytes(),
            };
            print(&bytes, format)
        }
    }
}

fn inputs_of(run: &JudgedRun) -> Vec<&Path> {
    run.inputs.iter().map(|(_, p)| p.as_path()).collect()
}

/// Prints the result in `format` and writes every report file asked for. `copies` are the traces
/// an annotated copy copies, per rank; `inputs` the files read, which no report may overwrite.
pub fn emit(
    view: &View<'_>,
    format: Format,
    reports: &ReportArgs,
    copies: &[(Option<u64>, PathBuf)],
    inputs: &[&Path],
) -> anyhow::Result<()> {
    // Render the files first: a report that cannot be written is an error (exit 2) before
    // anything is printed as if all went well.
    write_reports(view, reports, copies, inputs)?;
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

/// Writes every report file asked for. `copies` are the traces to copy for `--annotate-trace`
/// (one per rank; several ranks: `.rankN` before the extension, or `{rank}` in the path
/// replaced); `inputs` the traces read: no report may overwrite one. The other formats show every
/// rank in one file.
pub(crate) fn write_reports(
    view: &View<'_>,
    reports: &ReportArgs,
    copies: &[(Option<u64>, PathBuf)],
    inputs: &[&Path],
) -> anyhow::Result<()> {
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
        match (view.ranks, copies) {
            (Some(r), _) => {
                let n = r.analysis.ranks.len() as u32;
                for k in &r.analysis.ranks {
                    let input = copies.iter().find(|(rank, _)| *rank == Some(k.rank)).ok_or_else(|| {
                        anyhow::anyhow!(
                            "--annotate-trace: the trace of rank {} is not at hand to copy",
                            k.rank
                        )
                    })?;
                    let out = launchguard_check::kept_path(path, k.rank as u32, n);
                    jobs.push((out, "--annotate-trace", Job::Rank(k.rank, input.1.clone())));
                }
            }
            (None, [(_, input)]) => {
                jobs.push((path.clone(), "--annotate-trace", Job::Annotate(input.clone())))
            }
            (None, _) => anyhow::bail!("--annotate-trace needs a trace; this command has none"),
        }
    }
    let outputs: Vec<(&str, &Path)> = jobs.iter().map(|(p, flag, _)| (*flag, p.as_path())).collect();
    refuse_clashes(&outputs, inputs)?;
    for (path, _, job) in &jobs {
        let gzip = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        match job {
            Job::Whole(export) => write_atomic_with(path, |w| export.write_to(view, w))?,
            Job::Annotate(input) => write_atomic_with(path, |w| {
                AnnotatedTrace { input: input.as_path(), gzip }.write_to(view, w)
            })?,
            Job::Rank(rank, input) => {
                let r = view.ranks.expect("rank jobs come with ranks");
                let k = r.analysis.ranks.iter().find(|k| k.rank == *rank).expect("a rank of the view");
                let one = View::of_analysis(
                    &k.analysis.figures,
                    r.findings_of(*rank),
                    &k.analysis.checks,
                    k.analysis.verdict,
                    view.document,
                );
                write_atomic_with(path, |w| {
                    AnnotatedTrace { input: input.as_path(), gzip }.write_to(&one, w)
                })?
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
    Annotate(PathBuf),
    /// The annotated copy of one rank's trace, read from the file given.
    Rank(u64, PathBuf),
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
