//! One module per subcommand; each returns the process exit code or an error (exit 2).

mod analyze;
pub mod config;

use crate::cli::{Cli, Command};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Analyze(args) => analyze::run(args),
    }
}
