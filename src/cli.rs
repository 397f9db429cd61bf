//! Command-line interface.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.";

/// Guards GPU inference stacks against graph-launch overhead.
#[derive(Debug, Parser)]
#[command(name = "launchguard", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyze a Kineto / Chrome trace (CUDA or ROCm): occupancy, gaps, graph launches, replays.
    #[command(after_help = EXIT_CODES)]
    Analyze(AnalyzeArgs),
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

/// Thresholds shared by `analyze` and `check`; each overrides the config file.
#[derive(Debug, Args, Default, Clone)]
pub struct ThresholdArgs {
    /// TOML configuration file (thresholds, linkage policy, check settings).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Occupancy below this fails [default: 0.80].
    #[arg(long, value_name = "FRACTION")]
    pub occupancy_fail: Option<f64>,
    /// Occupancy below this warns [default: 0.90].
    #[arg(long, value_name = "FRACTION")]
    pub occupancy_warn: Option<f64>,
    /// Gaps longer than this count [default: 100].
    #[arg(long, value_name = "US")]
    pub gap_us: Option<f64>,
    /// More gaps over the threshold than this fail [default: 5].
    #[arg(long, value_name = "N")]
    pub max_gaps: Option<u64>,
    /// A graph-launch duration statistic at or above this fails [default: 150].
    #[arg(long, value_name = "US")]
    pub launch_fail_us: Option<f64>,
    /// Statistic of graph-launch durations the launch check judges [default: auto: mean for one
    /// rank, median for multi-rank traces].
    #[arg(long, value_name = "STAT")]
    pub launch_statistic: Option<LaunchStatisticArg>,
}

/// `--launch-statistic` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LaunchStatisticArg {
    Auto,
    Mean,
    Median,
}

/// Report files, written in addition to standard output; same flags on every command.
#[derive(Debug, Args, Default, Clone)]
pub struct ReportArgs {
    /// Write JUnit XML (one testcase per check).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary (for $GITHUB_STEP_SUMMARY or a pull-request comment).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with a GPU timeline.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write a copy of the trace with the findings added as events, for Perfetto.
    #[arg(long, value_name = "PATH")]
    pub annotate_trace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The trace: JSON or gzip (detected by content), an object with traceEvents or an array.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Keep only GPU activity inside user_annotation / gpu_user_annotation spans whose name
    /// matches this regular expression (serving traces mark decode steps this way).
    #[arg(long, value_name = "REGEX")]
    pub within: Option<String>,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    #[command(flatten)]
    pub reports: ReportArgs,
    /// Event parser: the fast scanner, or the serde reference parser.
    #[arg(long, value_enum, default_value_t = ParserArg::default(), hide = true)]
    pub parser: ParserArg,
}

/// `--parser` values.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum ParserArg {
    #[default]
    Simple,
}
