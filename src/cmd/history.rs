//! `launchguard history` (record, show, explain, reset, gate) and what `check --history` adds:
//! the run recorded, then the gate. The history itself is `launchguard_history`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use launchguard_history::changepoint::Config;
use launchguard_history::fingerprint::Identity;
use launchguard_history::record::{Document, Labels, Reset};
use launchguard_history::render::{self, Shown};
use launchguard_history::series::{Lane, SeriesKey};
use launchguard_history::store::{self, Location, Mode, Store};

use crate::cli::Format;
use crate::outputs;

/// `launchguard history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The history: an SQLite file, or postgres://user@host/db for a shared server [default:
    /// $LAUNCHGUARD_HISTORY].
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub history: Option<String>,
    #[command(subcommand)]
    pub command: HistoryCommand,
}

/// What `history` does.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Record results a team already has: check results (`check --format json`, baselines),
    /// analyze or compare results, or traces `check --keep-trace` kept; in the order given
    /// (a folder: its *.json and *.json.gz files, by name).
    Record(RecordArgs),
    /// Each series: every metric's runs, change points and gate (terminal, JSON, Markdown or an
    /// HTML page).
    Show(ShowArgs),
    /// What differs in the fingerprints on either side of a change point: RUN is the first run
    /// of the new level (as `show` names it, #N).
    Explain(ExplainArgs),
    /// Accept a change: from RUN on, the series (or one metric) starts anew.
    Reset(ResetArgs),
    /// Exit 1 when a series' newest runs sit past a change for the worse.
    Gate(GateArgs),
}

/// How a run is filed and named: the flags of `history record` and `check --history`.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "History")]
pub struct Filing {
    /// The series' name (instead of the branch): runs are compared within (preset, machine
    /// class, series).
    #[arg(long, value_name = "NAME")]
    pub series: Option<String>,
    /// The branch [default: from CI's variables (GITHUB_REF_NAME, CI_COMMIT_REF_NAME,
    /// BUILDKITE_BRANCH, BRANCH_NAME), else "default"].
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// The machine class [default: the GPU's name, × the ranks].
    #[arg(long, value_name = "NAME")]
    pub machine_class: Option<String>,
    /// The build that ran (a CI build number, a commit, an image tag): names the first bad build.
    #[arg(long, value_name = "ID")]
    pub build_id: Option<String>,
    /// The container image's digest.
    #[arg(long, value_name = "DIGEST")]
    pub image_digest: Option<String>,
    /// An image label, KEY=VALUE (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
}

/// The change-point detector's settings.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "Change points")]
pub struct DetectorArgs {
    /// Significance level of the permutation test [default: 0.01].
    #[arg(long, value_name = "P")]
    pub significance: Option<f64>,
    /// Shuffles per test [default: 199].
    #[arg(long, value_name = "N")]
    pub permutations: Option<usize>,
    /// A change that moves the median by less than this fraction is not one [default: 0.02].
    #[arg(long, value_name = "FRACTION")]
    pub min_change: Option<f64>,
    /// Fewest runs on each side of a change point [default: 3].
    #[arg(long, value_name = "N")]
    pub min_runs: Option<usize>,
    /// Compare the runs' values, not their ranks (the method as MongoDB and Otava run it).
    #[arg(long)]
    pub on_values: bool,
}

impl DetectorArgs {
    fn config(&self) -> anyhow::Result<Config> {
        let d = Config::default();
        let c = Config {
            alpha: self.significance.unwrap_or(d.alpha),
            permutations: self.permutations.unwrap_or(d.permutations),
            min_relative: self.min_change.unwrap_or(d.min_relative),
            min_size: self.min_runs.unwrap_or(d.min_size),
            window: d.window,
            ranks: !self.on_values,
        };
        c.validate().map_err(anyhow::Error::msg)?;
        Ok(c)
    }
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Result files, kept traces, or folders of them.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub filing: Filing,
    /// Read the GNU build id of each library of the linkage closure from the files at their
    /// paths: only for results produced on this machine.
    #[arg(long)]
    pub read_build_ids: bool,
}

/// Which series to show or gate.
#[derive(Debug, Args, Default, Clone)]
pub struct Which {
    /// Only this preset.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Only this machine class.
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Only this series name or branch.
    #[arg(long, value_name = "NAME")]
    pub lane: Option<String>,
}

impl Which {
    fn filter(&self) -> launchguard_history::Filter {
        launchguard_history::Filter {
            preset: self.preset.clone(),
            machine: self.machine.clone(),
            lane: self.lane.clone(),
        }
    }
}

/// `show`'s formats on standard output.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum ShowFormat {
    /// A readable report.
    #[default]
    Text,
    /// One JSON object (launchguard.history/1).
    Json,
    /// Markdown (for $GITHUB_STEP_SUMMARY).
    Markdown,
    /// One self-contained HTML page.
    Html,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub which: Which,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub format: ShowFormat,
    /// Runs listed per series (text).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub runs: usize,
    /// Also write the JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Also write the Markdown to PATH.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Also write the HTML page to PATH.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub detector: DetectorArgs,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The first run of the new level: N or #N.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub format: ShowFormat,
    #[command(flatten)]
    pub detector: DetectorArgs,
}

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// The first run of the accepted level: N or #N.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// Why the change is accepted.
    #[arg(long, value_name = "TEXT")]
    pub note: String,
    /// Only this metric (default: every metric).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub which: Which,
    #[command(flatten)]
    pub detector: DetectorArgs,
}

/// What `check` takes for its history: where, how the run is filed, the detector.
#[derive(Debug, Args, Default, Clone)]
pub struct CheckHistoryArgs {
    /// Record this run into a history (an SQLite file, or postgres://… for a shared server), then
    /// fail (exit 1) when its series' newest runs sit past a change for the worse, naming the
    /// first bad build and what changed in it [default: $LAUNCHGUARD_HISTORY, when set].
    #[arg(long, value_name = "PATH|URL")]
    pub history: Option<String>,
    #[command(flatten)]
    pub filing: Filing,
    #[command(flatten)]
    pub detector: DetectorArgs,
}

/// `--history`, else `$LAUNCHGUARD_HISTORY` (how a CI runner or a container names it once).
fn named(history: Option<&str>) -> Option<String> {
    history
        .map(str::to_string)
        .or_else(|| std::env::var("LAUNCHGUARD_HISTORY").ok().filter(|v| !v.is_empty()))
}

fn location(history: Option<&str>) -> anyhow::Result<Location> {
    let h = named(history).ok_or_else(|| {
        anyhow::anyhow!("no history named: give --history PATH|URL (or set LAUNCHGUARD_HISTORY)")
    })?;
    anyhow::ensure!(!h.is_empty(), "--history is empty");
    Ok(Location::parse(&h))
}

fn run_id(text: &str) -> anyhow::Result<i64> {
    text.trim_start_matches('#').parse::<i64>().ok().filter(|&n| n > 0).ok_or_else(|| {
        anyhow::anyhow!("'{text}' is not a run: give its number as `history show` names it (#12 or 12)")
    })
}

impl Filing {
    fn labels(&self, build_ids: bool, source: Option<String>) -> anyhow::Result<Labels> {
        let env = |k: &str| std::env::var(k).ok();
        let mut labels = std::collections::BTreeMap::new();
        for l in &self.label {
            let (k, v) =
                l.split_once('=').ok_or_else(|| anyhow::anyhow!("--label '{l}': expected KEY=VALUE"))?;
            anyhow::ensure!(!k.is_empty(), "--label '{l}': the key is empty");
            labels.insert(k.to_string(), v.to_string());
        }
        Ok(Labels {
            lane: Lane::from_flags(self.series.as_deref(), self.branch.as_deref(), &env),
            machine: self.machine_class.clone(),
            identity: Identity {
                build_id: self.build_id.clone(),
                image_digest: self.image_digest.clone(),
                labels,
            },
            build_ids,
            source,
        })
    }
}

pub fn run(args: HistoryArgs) -> anyhow::Result<u8> {
    let loc = location(args.history.as_deref())?;
    match args.command {
        HistoryCommand::Record(a) => record(&loc, a),
        HistoryCommand::Show(a) => show(&loc, a),
        HistoryCommand::Explain(a) => explain(&loc, a),
        HistoryCommand::Reset(a) => reset(&loc, a),
        HistoryCommand::Gate(a) => gate(&loc, a),
    }
}

fn record(loc: &Location, args: RecordArgs) -> anyhow::Result<u8> {
    // Every file read first: one unreadable file records nothing.
    let paths = launchguard_pipeline::inputs::expand(&args.files)?;
    let mut docs = Vec::new();
    for p in &paths {
        let doc = launchguard_history::import::read(p)?;
        docs.push((p.display().to_string(), doc));
    }
    let mut store = store::open(loc, Mode::Create)?;
    let docs = docs
        .into_iter()
        .map(|(source, doc)| Ok((doc, args.filing.labels(args.read_build_ids, Some(source))?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // One transaction: all of them recorded, or none.
    for ((id, key), (_, labels)) in launchguard_history::record_all(store.as_mut(), &docs)?.iter().zip(&docs)
    {
        eprintln!("launchguard: recorded {} as #{id} in {key}", labels.source.as_deref().unwrap_or("-"));
    }
    Ok(0)
}

fn show(loc: &Location, args: ShowArgs) -> anyhow::Result<u8> {
    let cfg = args.detector.config()?;
    let mut store = store::open(loc, Mode::Existing)?;
    let shown = launchguard_history::show(store.as_mut(), &args.which.filter(), &cfg)?;
    for (path, format) in [
        (&args.json, ShowFormat::Json),
        (&args.markdown, ShowFormat::Markdown),
        (&args.html, ShowFormat::Html),
    ] {
        if let Some(p) = path {
            outputs::write_atomic(p, &rendered(&shown, format, args.runs))?;
            outputs::wrote(p);
        }
    }
    print(&rendered(&shown, args.format, args.runs), args.format)?;
    Ok(0)
}

fn rendered(s: &Shown, format: ShowFormat, runs: usize) -> Vec<u8> {
    match format {
        ShowFormat::Text => render::terminal::show(s, runs).into_bytes(),
        ShowFormat::Json => json_bytes(&render::json::show(s)),
        ShowFormat::Markdown => render::markdown::show(s).into_bytes(),
        ShowFormat::Html => render::html::show(s).into_bytes(),
    }
}

fn json_bytes(v: &serde_json::Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).unwrap_or_default();
    b.push(b'\n');
    b
}

fn print(bytes: &[u8], format: ShowFormat) -> anyhow::Result<()> {
    // Only the readable report is painted and escaped as text; the others are printed as they are.
    outputs::print(bytes, if format == ShowFormat::Text { Format::Text } else { Format::Json })
}

fn explain(loc: &Location, args: ExplainArgs) -> anyhow::Result<u8> {
    let cfg = args.detector.config()?;
    let id = run_id(&args.run)?;
    let mut store = store::open(loc, Mode::Existing)?;
    let e = launchguard_history::explain_run(store.as_mut(), id, &cfg)?;
    let bytes = match args.format {
        ShowFormat::Json => json_bytes(&render::json::explanation(&e)),
        ShowFormat::Markdown | ShowFormat::Html => render::markdown::explanation(&e).into_bytes(),
        ShowFormat::Text => render::terminal::explanation(&e).into_bytes(),
    };
    print(&bytes, args.format)?;
    Ok(0)
}

fn reset(loc: &Location, args: ResetArgs) -> anyhow::Result<u8> {
    let id = run_id(&args.run)?;
    if let Some(m) = &args.metric {
        anyhow::ensure!(
            launchguard_history::metrics::metric(m).is_some(),
            "--metric '{m}': not a metric (metrics: {})",
            launchguard_history::metrics::METRICS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
        );
    }
    let mut store = store::open(loc, Mode::Existing)?;
    let run = store.run(id)?.ok_or_else(|| anyhow::anyhow!("no run #{id} in {}", store.describe()))?;
    let reset = Reset {
        id: None,
        key: run.key.clone(),
        run_id: id,
        metric: args.metric.clone(),
        note: args.note.clone(),
        created_at: store::now(),
    };
    let rid = store.add_reset(&reset)?;
    eprintln!(
        "launchguard: reset {rid}: {} starts anew at #{id} in {}",
        args.metric.as_deref().unwrap_or("every metric"),
        run.key
    );
    Ok(0)
}

fn gate(loc: &Location, args: GateArgs) -> anyhow::Result<u8> {
    let cfg = args.detector.config()?;
    let mut store = store::open(loc, Mode::Existing)?;
    let keys: Vec<SeriesKey> = store.series()?.into_iter().map(|(k, _)| k).collect();
    let filter = args.which.filter();
    let mut failed = false;
    for key in keys.iter().filter(|k| filter.matches(k)) {
        failed |= say_gate(store.as_mut(), key, &cfg)?;
    }
    Ok(u8::from(failed))
}

/// Judges a series' gate and says what fails, with what changed at the first bad build; true
/// when it fails.
fn say_gate(store: &mut dyn Store, key: &SeriesKey, cfg: &Config) -> anyhow::Result<bool> {
    let failures = launchguard_history::gate(store, key, cfg)?;
    if failures.is_empty() {
        eprintln!("launchguard: history: {key}: pass (no metric sits past a change for the worse)");
        return Ok(false);
    }
    for (f, e) in &failures {
        let what: Vec<String> =
            e.differences.iter().take(3).map(|d| format!("{}: {} → {}", d.key, d.before, d.after)).collect();
        let line = format!(
            "history: {key}: FAIL {}; what changed: {}",
            render::terminal::failure_line(f),
            if what.is_empty() { "nothing in the fingerprints".to_string() } else { what.join("; ") }
        );
        eprintln!("launchguard: {}", launchguard_report::escape::one_line(&line));
    }
    Ok(true)
}

/// `check --history`: records the run, then judges its series. Returns the exit code the gate
/// adds (1 when it fails).
pub fn after_check(report: &launchguard_check::CheckReport, args: &CheckHistoryArgs) -> anyhow::Result<u8> {
    let Some(h) = named(args.history.as_deref()) else { return Ok(0) };
    let cfg = args.detector.config()?;
    let loc = location(Some(&h))?;
    let mut store = store::open(&loc, Mode::Create)?;
    // The run just ran here: the libraries at the closure's paths are the ones it loaded.
    let labels = args.filing.labels(true, None)?;
    let doc = Document::Check(Box::new(report.clone()));
    let (id, key) = launchguard_history::record(store.as_mut(), &doc, &labels)?;
    eprintln!("launchguard: recorded this run as #{id} in {key} ({})", store.describe());
    Ok(u8::from(say_gate(store.as_mut(), &key, &cfg)?))
}
