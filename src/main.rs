//! `launchguard`: guards GPU inference stacks against graph-launch overhead.
//!
//! Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.

mod cli;
mod cmd;
mod outputs;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cmd::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One line, naming the problem; details joined with ": ".
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("launchguard: error: {msg}");
            ExitCode::from(2)
        }
    }
}
