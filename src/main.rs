//! `launchguard`: guards GPU inference stacks against graph-launch overhead.
//!
//! Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.

mod cli;
mod cmd;
mod outputs;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // Usage errors in one line too, like every other error.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("launchguard: {} (see --help)", first.trim());
            return ExitCode::from(2);
        }
    };
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
