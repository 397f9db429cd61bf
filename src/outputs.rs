//! Standard output and report files, the same for every command.

use std::io::Write;
use std::path::{Path, PathBuf};

use launchguard_pipeline::{Drawing, Judged, JudgedRun};
use launchguard_report::{
    render, render_fitted, Doc, Document, Kind, PhaseSamples, RanksDrawn, Rendered, View,
};

use crate::cli::{Format, ReportArgs, ReportFiles};

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
pub fn emit_run(run: &mut JudgedRun, format: Format, reports: &ReportArgs) -> anyhow::Result<()> {
    let document = match &mut run.judged {
        Judged::One(a) => {
            // The replays, most of a serving trace's document, rendered on all cores.
            let replays = std::mem::take(&mut a.figures.replays);
            let document = Document::of_spliced(a.as_ref(), "replays", &replays);
            a.figures.replays = replays;
            document?
        }
        Judged::Ranks(r) => Document::of(r.as_ref())?,
    };
    let run = &*run;
    match &run.judged {
        Judged::One(a) => {
            // A trace `check` kept carries its host samples: shown as `check` shows them.
            let phases = phases_of(&a.figures);
            let findings = findings_of(run.drawing.as_ref(), 0);
            let view = View {
                phases: &phases,
                ..View::of_analysis(&a.figures, findings, &a.checks, a.verdict, &document)
            }
            .with_reason(a.reason.as_deref());
            emit(&view, format, reports, &run.inputs, &inputs_of(run), &[])
        }
        Judged::Ranks(r) => {
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
            emit(&view, format, reports, &run.inputs, &inputs_of(run), &[])
        }
    }
}

fn inputs_of(run: &JudgedRun) -> Vec<&Path> {
    run.inputs.iter().map(|(_, p)| p.as_path()).collect()
}

/// Prints the result in `format` and writes every report file asked for, and `also` (the
/// command's own files, with their flags). `copies` are the traces an annotated copy copies, per
/// rank; `inputs` the files read, which no output may overwrite.
pub fn emit(
    view: &View<'_>,
    format: Format,
    reports: &ReportArgs,
    copies: &[(Option<u64>, PathBuf)],
    inputs: &[&Path],
    also: &[(&str, &Path, &[u8])],
) -> anyhow::Result<()> {
    // Render the files first: a report that cannot be written is an error (exit 2) before
    // anything is printed as if all went well.
    write_reports(view, reports, copies, inputs, also)?;
    print_doc(&Doc::Run(view), format)
}

/// The columns the readable report is fitted to, set once from the command line.
static WIDTH: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Sets the readable report's width: `--width`, else `$COLUMNS`, else the terminal's, else
/// [`launchguard_report::fit::DEFAULT_WIDTH`] (a pipe, a file, a CI log).
pub fn set_width(flag: Option<u16>) {
    let columns = || std::env::var("COLUMNS").ok()?.trim().parse::<usize>().ok().filter(|&c| c > 0);
    let terminal = || terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)).filter(|&c| c > 0);
    let width = flag.map(usize::from).or_else(columns).or_else(terminal);
    let _ = WIDTH.set(width.unwrap_or(launchguard_report::fit::DEFAULT_WIDTH));
}

/// Renders `doc` in `format` to standard output.
pub fn print_doc(doc: &Doc<'_>, format: Format) -> anyhow::Result<()> {
    let kind = match format {
        Format::Text => Kind::Text,
        Format::Json => Kind::Json,
    };
    let cols = WIDTH.get().copied().unwrap_or(launchguard_report::fit::DEFAULT_WIDTH);
    print(&render_fitted(doc, kind, cols)?.into_bytes(), format)
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
    PRINTED.store(true, std::sync::atomic::Ordering::Relaxed);
    // Only the readable report has colour codes to strip; a JSON document (megabytes on a serving
    // trace) goes out as it is, not through anstream's byte-by-byte scan.
    let mut out: Box<dyn Write> = match format {
        Format::Text => Box::new(anstream::stdout().lock()),
        Format::Json => Box::new(std::io::stdout().lock()),
    };
    // A closed pipe (`| head`) is not an error worth a message.
    if let Err(e) = out.write_all(bytes).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Whether [`print()`] wrote the command's result: an error after it (the history gate's) is not
/// given a second JSON object on standard output.
static PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the command's result was printed on standard output.
pub fn printed() -> bool {
    PRINTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Says on standard error that a file was written: report files are never written silently. The
/// path is escaped as every name is.
pub fn wrote(path: &Path) {
    eprintln!("launchguard: wrote {}", launchguard_report::escape::one_line(&path.display().to_string()));
}

/// Writes every report file asked for, and `also` (the command's own files: `check --json`,
/// `--save-baseline`). `copies` are the traces to copy for `--annotate-trace` (one per rank;
/// several ranks: `.rankN` before the extension, or `{rank}` in the path replaced); `inputs` the
/// traces read: no output may overwrite one. The other formats show every rank in one file.
/// Every path is checked before any file is written.
pub(crate) fn write_reports(
    view: &View<'_>,
    reports: &ReportArgs,
    copies: &[(Option<u64>, PathBuf)],
    inputs: &[&Path],
    also: &[(&str, &Path, &[u8])],
) -> anyhow::Result<()> {
    // The annotated copies, each with its rank's own view: (output, rank, input).
    let mut annotated: Vec<(PathBuf, Option<u64>, &Path)> = Vec::new();
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
                    annotated.push((
                        launchguard_check::kept_path(path, k.rank as u32, n),
                        Some(k.rank),
                        &input.1,
                    ));
                }
            }
            (None, [(_, input)]) => annotated.push((path.clone(), None, input)),
            (None, _) => anyhow::bail!("--annotate-trace needs a trace; this command has none"),
        }
    }
    let doc = Doc::Run(view);
    let csv = csv_tables(&doc, reports.csv.as_deref())?;
    let mut outputs: Vec<(String, PathBuf)> =
        also.iter().map(|(flag, p, _)| (flag.to_string(), p.to_path_buf())).collect();
    outputs.extend(planned(&reports.files, csv.as_ref()));
    outputs.extend(annotated.iter().map(|(p, _, _)| ("--annotate-trace".to_string(), p.clone())));
    preflight(&outputs, inputs)?;
    for (_, path, bytes) in also {
        write_atomic(path, bytes)?;
        wrote(path);
    }
    write_files(&doc, &reports.files)?;
    for (path, rank, input) in &annotated {
        let gzip = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        let one;
        let v = match (rank, view.ranks) {
            (Some(rank), Some(r)) => {
                let k = r.analysis.ranks.iter().find(|k| k.rank == *rank).expect("a rank of the view");
                one = View::of_analysis(
                    &k.analysis.figures,
                    r.findings_of(*rank),
                    &k.analysis.checks,
                    k.analysis.verdict,
                    view.document,
                );
                &one
            }
            _ => view,
        };
        write_atomic_with(path, |w| Ok(launchguard_report::annotate::write(v, input, gzip, w)?))?;
        wrote(path);
    }
    write_csv(csv)
}

/// The CSV tables of `--csv DIR`, rendered: the folder, then each file's path and bytes.
pub(crate) struct CsvTables {
    dir: PathBuf,
    files: Vec<(PathBuf, Vec<u8>)>,
}

/// Renders the CSV tables for `--csv DIR`; refuses a DIR that is there but is not a folder (a
/// link to one is the folder the user named).
pub(crate) fn csv_tables(doc: &Doc<'_>, csv: Option<&Path>) -> anyhow::Result<Option<CsvTables>> {
    let Some(dir) = csv else { return Ok(None) };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            let what = launchguard_files::not_regular(m.file_type()).unwrap_or("a regular file");
            anyhow::bail!(
                "--csv {} is {what}, not a folder: --csv names the folder the tables are written into",
                dir.display()
            );
        }
        _ => {}
    }
    let files = match render(doc, Kind::Csv)? {
        Rendered::Tables(tables) => tables.into_iter().map(|(name, bytes)| (dir.join(name), bytes)).collect(),
        _ => Vec::new(),
    };
    Ok(Some(CsvTables { dir: dir.to_path_buf(), files }))
}

/// Every file the report flags write, with the flag that names it.
pub(crate) fn planned(files: &ReportFiles, csv: Option<&CsvTables>) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> =
        files.asked().into_iter().map(|(flag, p)| (flag.to_string(), p.to_path_buf())).collect();
    if let Some(t) = csv {
        let flag = format!("--csv {}", t.dir.display());
        out.extend(t.files.iter().map(|(p, _)| (flag.clone(), p.clone())));
    }
    out
}

/// Refuses, before anything is written, outputs that would overwrite an input or each other, and
/// paths that `launchguard_files` would refuse (a link, a folder, a socket).
pub(crate) fn preflight(outputs: &[(String, PathBuf)], inputs: &[&Path]) -> anyhow::Result<()> {
    let named: Vec<(&str, &Path)> = outputs.iter().map(|(f, p)| (f.as_str(), p.as_path())).collect();
    refuse_clashes(&named, inputs)?;
    for (flag, path) in outputs {
        launchguard_files::output::check(path).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    }
    Ok(())
}

/// Writes the one-file reports asked for (`--junit`, `--markdown`, `--html`), each named on
/// standard error.
pub(crate) fn write_files(doc: &Doc<'_>, files: &ReportFiles) -> anyhow::Result<()> {
    for (_, path, kind) in files.kinds() {
        write_atomic(path, &render(doc, kind)?.into_bytes())?;
        wrote(path);
    }
    Ok(())
}

/// Writes the CSV tables into their folder (created when missing), each named on standard error.
pub(crate) fn write_csv(csv: Option<CsvTables>) -> anyhow::Result<()> {
    if let Some(t) = csv {
        std::fs::create_dir_all(&t.dir).map_err(|e| anyhow::anyhow!("--csv {}: {e}", t.dir.display()))?;
        for (path, bytes) in t.files {
            write_atomic(&path, &bytes)?;
            wrote(&path);
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` by `launchguard_files`' rules (a regular file replaced atomically, a
/// FIFO or `/dev/stdout` written into, nothing else), the path named in the error.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |w| Ok(w.write_all(bytes)?))
}

/// Streams `fill`'s output to `path`, for outputs too large to hold (an annotated copy of a large
/// trace). When `fill` fails, its error is returned and `path` is left as it was.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    // The renderer's own error, kept whole rather than flattened into an I/O error.
    let mut failed = None;
    let written = launchguard_files::write_atomic_with(path, |w| {
        fill(w).map_err(|e| {
            let io = std::io::Error::other(e.to_string());
            failed = Some(e);
            io
        })
    });
    match (written, failed) {
        (_, Some(e)) => Err(e.context(format!("cannot write {}", path.display()))),
        (Err(e), None) => Err(anyhow::Error::new(e).context(format!("cannot write {}", path.display()))),
        (Ok(()), None) => Ok(()),
    }
}

/// Refuses outputs `(flag, path)` that would overwrite an input, or each other.
pub(crate) fn refuse_clashes(outputs: &[(&str, &Path)], inputs: &[&Path]) -> anyhow::Result<()> {
    for (i, (flag, path)) in outputs.iter().enumerate() {
        // The inputs are never modified, not even by a report written over them.
        if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
            anyhow::bail!(
                "{flag} writes {}, which is the input {}; refusing to overwrite it",
                path.display(),
                input.display()
            );
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same_file(p, path)) {
            anyhow::bail!("{other} and {flag} both write {}: two outputs on one path", path.display());
        }
    }
    Ok(())
}

/// Whether two paths name the same file (a link to it included), or would: paths of files not
/// yet there that lead to one place (`d/x` and `./d/x`).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    a == b || resolved(a) == resolved(b)
}

/// Where a path leads: its longest existing ancestor made canonical, then the rest as written.
fn resolved(p: &Path) -> PathBuf {
    let abs = match std::env::current_dir() {
        Ok(cwd) => cwd.join(p),
        Err(_) => p.to_path_buf(),
    };
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return abs,
        }
    }
}
