//! One module per subcommand; each returns the process exit code or an error (exit 2).

mod analyze;
mod check;
pub mod config;
mod linkage;

use crate::cli::{Cli, Command};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Check(args) => check::run(args),
        Command::Linkage(args) => linkage::run(args),
    }
}
