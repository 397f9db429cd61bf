//! Command-line interface.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use launchguard_judge::config::{CheckConfig, CompareConfig, Flags, InputConfig, Thresholds};
use launchguard_report::Kind;

const EXIT_CODES: &str = "Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.";

/// What each subcommand's help ends with: two or three real commands, then its exit codes.
mod help {
    pub const ANALYZE: &str = "Examples:
  launchguard analyze examples/delay270_clean.json.gz
  launchguard analyze run/ --html report.html --junit junit.xml     (a folder: the ranks of one run)
  launchguard analyze trace.json.gz --within 'probe::replay' --format json

Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.";
    pub const CHECK: &str = "Examples:
  launchguard check                                   (this Python's torch; skips without a GPU)
  launchguard check --python .venv/bin/python --preset tiny --junit junit.xml
  launchguard check --save-baseline base.json && launchguard check --baseline base.json

Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.";
    pub const LINKAGE: &str = "Examples:
  launchguard linkage                                 (asks python3 where torch is)
  launchguard linkage --python .venv/bin/python --format json
  launchguard linkage --root /path/to/unpacked/image

Exit codes: 0 reported; 1 a backend forbidden by linkage.forbid is linked; 2 error or nothing usable.";
    pub const SELFTEST: &str = "Examples:
  launchguard selftest --preset tiny
  launchguard selftest --delays 5,10,25,50 --healthy 3 --format json

Exit codes: 0 the ladder ran (the table says what was caught); 1 a false alarm at zero delay; 2 error.";
    pub const COMPARE: &str = "Examples:
  launchguard compare examples/healthy_clean.json.gz examples/delay270_clean.json.gz
  launchguard compare base.json current.json --markdown summary.md   (two check results)
  launchguard compare baseline-run/ current-run/ --html compare.html   (folders of rank traces)

Exit codes: 0 no significant regression (settings that differ are said first); 1 a shift past the limits; 2 error, or
inconclusive: runs on different GPUs (--force compares anyway) or a run whose own verdict is inconclusive.";
    pub const HISTORY: &str = "Examples:
  launchguard check --history results.sqlite
  launchguard history --history results.sqlite show --html history.html
  launchguard history --history results.sqlite record old-results/

Exit codes: 0 done (gate: no series past a change for the worse); 1 the gate fails; 2 error.";
}

/// Guards GPU inference stacks against graph-launch overhead.
#[derive(Debug, Parser)]
// Bare `launchguard` prints the help (the command list), not a one-line complaint.
#[command(name = "launchguard", version, about, after_help = EXIT_CODES, arg_required_else_help = true)]
pub struct Cli {
    /// Colour on standard output and standard error: auto (on a terminal, unless NO_COLOR is
    /// set), always, never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorArg::Auto, global = true)]
    pub color: ColorArg,
    /// Columns the readable report is fitted to (messages wrap under their check, names are cut
    /// in the middle): by default $COLUMNS, else the terminal's width, else 100. JSON and report
    /// files do not depend on it.
    #[arg(long, value_name = "COLUMNS", global = true, value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Whether standard output is one JSON object (`--format json`): then an error is one too.
    pub fn json_output(&self) -> bool {
        use crate::cmd::history::{HistoryCommand, ShowFormat};
        match &self.command {
            Command::Analyze(a) => a.format == Format::Json,
            Command::Check(a) => a.format == Format::Json,
            Command::Linkage(a) => a.format == Format::Json,
            Command::Selftest(a) => a.format == Format::Json,
            Command::Compare(a) => a.format == Format::Json,
            Command::History(h) => match &h.command {
                HistoryCommand::Show(a) => a.format == ShowFormat::Json,
                HistoryCommand::Explain(a) => a.format == ShowFormat::Json,
                _ => false,
            },
        }
    }
}

/// `--color` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum ColorArg {
    /// On a terminal, unless NO_COLOR is set (CLICOLOR_FORCE forces it).
    #[default]
    Auto,
    /// Always, even into a pipe or a file.
    Always,
    /// Never.
    Never,
}

// Parsed once per process: boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyze a Kineto / Chrome trace (CUDA or ROCm): occupancy, gaps, graph launches, replays.
    #[command(after_help = help::ANALYZE)]
    Analyze(AnalyzeArgs),
    /// The guard: run a graph-replay workload with your PyTorch (profiler off, on, off again),
    /// analyze its trace and give a verdict. Skips (exit 0) where there is no GPU or torch.
    #[command(after_help = help::CHECK)]
    Check(CheckArgs),
    /// Which profiler backends PyTorch links (roctracer, rocprofiler-sdk, CUPTI), read from its ELF
    /// files without loading them (without TARGET, the interpreter is asked where torch is
    /// installed, without importing torch).
    #[command(after_help = help::LINKAGE)]
    Linkage(LinkageArgs),
    /// Prove on this machine how small a per-launch overhead the guard catches: `check` at a
    /// ladder of injected delays, each in a fresh process.
    #[command(after_help = help::SELFTEST)]
    Selftest(SelftestArgs),
    /// Compare a baseline and a current run — two check results, or two traces (or folders of
    /// rank traces) — replay by replay, with a statistical test on the per-replay samples.
    #[command(after_help = help::COMPARE)]
    Compare(CompareArgs),
    /// Results across builds: record check results (or import existing ones), show each metric's
    /// series with its change points, explain what changed at one, reset, gate.
    #[command(after_help = help::HISTORY)]
    History(crate::cmd::history::HistoryArgs),
}

/// Output format on standard output.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum Format {
    /// A readable report.
    #[default]
    Text,
    /// One JSON object (a versioned public interface).
    Json,
}

/// The configuration file and the threshold flags shared by `analyze`, `check` and `selftest`;
/// each flag overrides its key in the file.
#[derive(Debug, Args, Default, Clone)]
pub struct ThresholdArgs {
    /// TOML configuration file (thresholds, linkage policy, check settings, input caps).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub flags: Flags<Thresholds>,
}

/// Report files, written in addition to standard output; the same flags on `analyze` and `check`.
#[derive(Debug, Args, Default, Clone)]
pub struct ReportArgs {
    #[command(flatten)]
    pub files: ReportFiles,
    /// Write a copy of the trace with the findings added as events, for Perfetto. Several ranks:
    /// one file per rank, .rankN before the extension ({rank} in PATH is replaced instead).
    #[arg(long, value_name = "PATH")]
    pub annotate_trace: Option<PathBuf>,
    /// Write the tables as CSV files with a header row into DIR (created if missing):
    /// kernels.csv, replays.csv, gaps.csv, and ranks.csv with several ranks.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
}

/// The report files every command with a verdict writes.
#[derive(Debug, Args, Default, Clone)]
pub struct ReportFiles {
    /// Write JUnit XML (one testcase per check).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary (for $GITHUB_STEP_SUMMARY or a pull-request comment).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with the GPU timelines.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

impl ReportArgs {
    /// Whether a report that draws or lists spans (HTML timelines, the gaps CSV, annotated
    /// copies) was asked for: then the spans are measured while each trace is at hand.
    pub fn draws(&self) -> bool {
        self.files.html.is_some() || self.annotate_trace.is_some() || self.csv.is_some()
    }
}

impl ReportFiles {
    /// The files asked for, with their flags.
    pub fn asked(&self) -> Vec<(&'static str, &std::path::Path)> {
        self.kinds().into_iter().map(|(flag, p, _)| (flag, p)).collect()
    }

    /// The files asked for, with their flags and formats.
    pub fn kinds(&self) -> Vec<(&'static str, &std::path::Path, Kind)> {
        [
            ("--junit", &self.junit, Kind::Junit),
            ("--markdown", &self.markdown, Kind::Markdown),
            ("--html", &self.html, Kind::Html),
        ]
        .into_iter()
        .filter_map(|(flag, p, kind)| Some((flag, p.as_deref()?, kind)))
        .collect()
    }
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The trace: JSON or gzip (detected by content), an object with traceEvents or an array;
    /// `-` reads it from standard input. Several traces, or a folder of them, are analyzed as
    /// the ranks of one distributed run.
    #[arg(value_name = "TRACE", required = true)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Measure only from the first user_annotation / gpu_user_annotation span whose name matches
    /// this regular expression to the last one (serving traces mark decode steps this way); the
    /// time between matching spans stays in.
    #[arg(long, value_name = "REGEX")]
    pub within: Option<String>,
    /// With --within, measure inside the matching spans only, leaving out the time between
    /// them (which hides overhead spent between steps; the report says so).
    #[arg(long, requires = "within")]
    pub within_interiors: bool,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    #[command(flatten)]
    pub reports: ReportArgs,
    #[command(flatten)]
    pub input: InputLimitArgs,
    /// Event parser: the fast scanner, or the serde reference parser.
    #[arg(long, value_enum, default_value_t = ParserArg::default(), hide = true)]
    pub parser: ParserArg,
}

/// Caps on what reading one trace may cost: traces come from strangers (a gzip bomb of valid
/// events, a million devices). Reaching one is an error (exit 2) that names its flag; the
/// defaults read every real trace. Each flag overrides its key in the `[input]` section of
/// `--config`.
pub type InputLimitArgs = Flags<InputConfig>;

/// `--parser` values.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum ParserArg {
    /// The byte scanner (parallel on plain files, beside the decompressor on gzip).
    #[default]
    Fast,
    /// serde_json, event by event: the reference the fast parser is tested against.
    Simple,
    /// Candidate reader on sonic-rs (measured in docs/benchmarks.md; feature `candidate-parsers`).
    #[cfg(feature = "candidate-parsers")]
    Sonic,
    /// Candidate reader on simd-json (timestamps through f64; feature `candidate-parsers`).
    #[cfg(feature = "candidate-parsers")]
    SimdJson,
}

/// The workload and how `check` runs it.
#[derive(Debug, Args, Clone)]
pub struct WorkloadArgs {
    /// Decoder layers (overrides the preset).
    #[arg(long)]
    pub layers: Option<u32>,
    /// Batch size (overrides the preset).
    #[arg(long)]
    pub batch: Option<u32>,
    /// Hidden size (overrides the preset).
    #[arg(long)]
    pub hidden: Option<u32>,
    /// Attention heads (overrides the preset).
    #[arg(long)]
    pub heads: Option<u32>,
    /// float16, bfloat16 or float32 (overrides the preset).
    #[arg(long)]
    pub dtype: Option<String>,
    /// Profiled replays (overrides the preset).
    #[arg(long)]
    pub replays: Option<u32>,
    /// GPU index.
    #[arg(long)]
    pub device: Option<u32>,
    /// Busy-wait this many µs before each replay, to test the guard itself.
    // A negative number is read as a value, so that it is refused with its own reason.
    #[arg(long, value_name = "US", default_value_t = 0.0, allow_negative_numbers = true)]
    pub inject_delay_us: f64,
    /// Busy-wait the delay of --inject-delay-us before every N-th launch of each phase only (the
    /// N-th, 2N-th, …), as a stall now and then: `--inject-delay-us 2000 --inject-every 10`.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub inject_every: u32,
    /// Only these ranks busy-wait (comma-separated; default every rank): a slow rank alone must
    /// be caught too.
    #[arg(long, value_name = "RANKS", value_delimiter = ',')]
    pub inject_delay_ranks: Option<Vec<u32>>,
}

/// `--launcher` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LauncherArg {
    /// A rank when the launcher's variables are set, else every rank here.
    Auto,
    /// One rank of a launched run: the variables must be set.
    Env,
    /// Every rank here (`--tp N`), whatever the environment says.
    None,
}

/// `check`'s settings as flags (the interpreter, the preset, --tp, --timeout, and the limits of
/// the checks `check` adds), over `[check]` in the configuration file.
pub type CheckLimitArgs = Flags<CheckConfig>;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Treat "cannot run here" (no torch, no GPU) as an error (exit 2) instead of a skip.
    #[arg(long)]
    pub require_gpu: bool,
    /// Keep the profiled trace, with what check measured besides it, at PATH (gzip when it ends
    /// in .gz); `analyze PATH` then gives check's verdict. Several ranks: {rank} in PATH, else
    /// .rankN before the extension.
    #[arg(long, value_name = "PATH")]
    pub keep_trace: Option<PathBuf>,
    /// Also write the result (launchguard.check/1, with the raw samples) to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the result, with its raw samples, as a baseline for later runs (`--baseline`).
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Compare this run with a baseline from `--save-baseline` (same machine, preset and
    /// versions): regressions past the `[compare]` limits fail.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// How the ranks start: `auto` (this process is one rank when a launcher's variables are
    /// set: torchrun's RANK/WORLD_SIZE/LOCAL_RANK or Slurm's SLURM_PROCID/SLURM_NTASKS/
    /// SLURM_LOCALID), `env` (it must be), or `none` (every rank runs here, --tp N).
    #[arg(long, value_enum, default_value_t = LauncherArg::Auto)]
    pub launcher: LauncherArg,
    /// Under a launcher: the folder every rank can reach, where each rank leaves its trace and
    /// rank 0 gathers them (a subfolder per run).
    #[arg(long, value_name = "DIR", default_value = "launchguard-ranks")]
    pub out: PathBuf,
    /// Under a launcher: how long rank 0 waits for the other ranks once its own is done
    /// [default: the --timeout].
    #[arg(long, value_name = "SECONDS")]
    pub wait: Option<u64>,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    #[command(flatten)]
    pub limits: CheckLimitArgs,
    #[command(flatten)]
    pub reports: ReportArgs,
    #[command(flatten)]
    pub input: InputLimitArgs,
    #[command(flatten)]
    pub history: crate::cmd::history::CheckHistoryArgs,
}

#[derive(Debug, Args)]
pub struct LinkageArgs {
    /// A library file, a torch package directory (or its lib/), or a site-packages directory.
    /// Without it, the interpreter is asked where torch is installed, without importing torch.
    #[arg(value_name = "TARGET")]
    pub target: Option<PathBuf>,
    /// Python interpreter to ask where torch is installed.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: String,
    /// Inspect an unpacked container filesystem as if it were /.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Resolve as on a CPU of this level instead of this machine's (x86-64, x86-64-v2,
    /// x86-64-v3, x86-64-v4, power8, power9, power10, z196, z13 … z16).
    #[arg(long, value_name = "LEVEL")]
    pub cpu_level: Option<launchguard_linkage::CpuLevel>,
    /// Resolve as on a CPU of this maker (intel, amd, other): glibc sets $PLATFORM to haswell
    /// on Intel CPUs with AVX2.
    #[arg(long, value_name = "VENDOR")]
    pub cpu_vendor: Option<launchguard_linkage::CpuVendor>,
    /// The value of $PLATFORM, whatever glibc would set.
    #[arg(long, value_name = "NAME")]
    pub platform: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// TOML configuration file (linkage.forbid).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Fail (exit 1) when this backend is linked; repeatable (roctracer, rocprofiler-sdk,
    /// 'rocprofiler-sdk<1.3.2', cupti, mixed, none).
    #[arg(long, value_name = "BACKEND")]
    pub forbid: Vec<String>,
    // Caps against hostile images (a chain thousands deep, a 4 GB ld.so.cache): reaching one
    // is an error (exit 2) that names its flag. The defaults are far above any real system.
    /// Most libraries in one closure.
    #[arg(long, value_name = "N", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_libraries)]
    pub max_libraries: usize,
    /// Longest chain of libraries each loading the next.
    #[arg(long, value_name = "N", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_depth)]
    pub max_depth: usize,
    /// Most DT_NEEDED entries in one closure.
    #[arg(long, value_name = "N", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_needed)]
    pub max_needed: usize,
    /// Most file-system lookups (path components walked, search-path entries) in all.
    #[arg(long, value_name = "N", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_lookups)]
    pub max_lookups: u64,
    /// Largest /etc/ld.so.cache read, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_cache_mib)]
    pub max_cache_mib: u64,
    /// Most entries read from one directory listing.
    #[arg(long, value_name = "N", default_value_t = launchguard_linkage::ClosureCaps::DEFAULT.max_dir_entries)]
    pub max_dir_entries: usize,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Healthy runs (no injected delay) before the ladder.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub healthy: u32,
    /// Injected per-launch delays, µs, comma-separated.
    #[arg(long, value_name = "US,US,...", value_delimiter = ',', default_value = "5,10,25,50,100,200,400")]
    pub delays: Vec<f64>,
    /// Keep every run's result (launchguard.check/1) in this directory.
    #[arg(long, value_name = "DIR")]
    pub keep_results: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    #[command(flatten)]
    pub limits: CheckLimitArgs,
    #[command(flatten)]
    pub input: InputLimitArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a check result (launchguard.check/1, e.g. from `check --save-baseline`), a
    /// trace (JSON or gzip; one kept by `check --keep-trace` also compares its host samples), or
    /// a folder of the rank traces of one run.
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,
    /// The current run, of the same kind.
    #[arg(value_name = "CURRENT")]
    pub current: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// TOML configuration file (`[compare]` limits).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Compare even when GPU, preset or versions differ (the differences are still reported).
    #[arg(long)]
    pub force: bool,
    #[command(flatten, next_help_heading = "Limits (over [compare] in --config)")]
    pub limits: CompareLimitArgs,
    #[command(flatten, next_help_heading = "Report files")]
    pub reports: CompareReportArgs,
    #[command(flatten, next_help_heading = "Input limits")]
    pub input: InputLimitArgs,
}

/// `compare`'s limits as flags, over `[compare]` in the configuration file.
pub type CompareLimitArgs = Flags<CompareConfig>;

/// `compare`'s report files.
#[derive(Debug, Args, Default)]
pub struct CompareReportArgs {
    #[command(flatten)]
    pub files: ReportFiles,
    /// Write the kernel diff and the metrics as CSV files with a header row into DIR (created if
    /// missing): kernel_diff.csv, metrics.csv.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
}

impl SelftestArgs {
    /// Whether `--inject-delay-us` was left alone (selftest sets the delay per run).
    pub fn inject_delay_us_unset(&self) -> bool {
        self.workload.inject_delay_us == 0.0 && self.workload.inject_every == 1
    }
}

#[cfg(test)]
mod tests {
    use super::help;
    use clap::Parser as _;

    /// Every example a help shows is a command line this parser takes.
    #[test]
    fn the_help_examples_parse() {
        for text in [help::ANALYZE, help::CHECK, help::LINKAGE, help::SELFTEST, help::COMPARE, help::HISTORY]
        {
            let examples = text.split("\n\n").next().unwrap();
            assert!(examples.starts_with("Examples:\n"), "{text}");
            let lines: Vec<&str> = examples.lines().skip(1).collect();
            assert!((2..=3).contains(&lines.len()), "{text}");
            for line in lines {
                // A note in parentheses after the command; `&&` joins two commands.
                let command = line.split("  (").next().unwrap();
                for one in command.split("&&") {
                    let words: Vec<&str> = one.split_whitespace().map(|w| w.trim_matches('\'')).collect();
                    assert_eq!(words[0], "launchguard", "{line}");
                    if let Err(e) = super::Cli::try_parse_from(&words) {
                        panic!("{line}: {e}");
                    }
                }
            }
        }
    }
}
