//! One module per subcommand; each returns the process exit code or an error (exit 2).

mod analyze;
mod check;
mod compare;
pub(crate) mod history;
mod linkage;
mod selftest;
mod settings;

use crate::cli::{Cli, Command};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Check(args) => check::run(args),
        Command::Linkage(args) => linkage::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Compare(args) => compare::run(args),
        Command::History(args) => history::run(args),
    }
}
