//! `launchguard`: guards GPU inference stacks against graph-launch overhead.
//!
//! Exit codes: 0 pass, warn or skip; 1 fail; 2 error or unusable input.

mod cli;
mod cmd;
mod outputs;

use std::process::ExitCode;

use clap::Parser as _;

/// The heap in use is counted, so that reading a trace stops at its memory budget
/// (`--max-memory-mib`) with a one-line error instead of growing until the process is aborted.
#[global_allocator]
static ALLOCATOR: launchguard_trace::memory::Counting = launchguard_trace::memory::Counting;

fn main() -> ExitCode {
    heap_arena_per_core();
    on_sigbus();
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            // clap's own message, as clap writes it: the missing arguments named, "did you mean",
            // the possible values, coloured on a terminal (NO_COLOR honoured). --help and
            // --version go to standard output and exit 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match args.color {
        cli::ColorArg::Auto => {}
        cli::ColorArg::Always => anstream::ColorChoice::Always.write_global(),
        cli::ColorArg::Never => anstream::ColorChoice::Never.write_global(),
    }
    outputs::set_width(args.width);
    let json = args.json_output();
    match cmd::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let line = launchguard_report::escape::one_line(&one_line(&e)).into_owned();
            // A reader of `--format json` parses standard output: the error is an object there
            // too, and the line on standard error is for the person watching.
            if json && !outputs::printed() {
                println!("{}", error_json(&line));
            }
            eprintln!("launchguard: error: {line}");
            ExitCode::from(2)
        }
    }
}

/// One glibc malloc arena per core the process may run on (rayon starts a thread per core), set
/// before any thread starts. With one arena for all threads, the analysis's passes waited on its
/// lock on 16 cores; with glibc's default of eight per core, buffers the gzip reader freed on its
/// threads stay resident while the analysis takes fresh pages on rayon's.
fn heap_arena_per_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: mallopt changes a setting of glibc's allocator; no allocation is in flight on
        // another thread (there is none yet).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores.min(libc::c_int::MAX as usize) as libc::c_int);
        }
    }
}

/// Plain traces are read mapped into memory. One that shrinks while it is read (another process
/// truncating it), or whose pages cannot be read (a network file system, a bad sector), raises
/// SIGBUS where the missing page is touched, which would end the process without a word. It ends
/// as any unreadable input does instead: one line, exit 2. (The handler cannot name the file: it
/// may only call functions that are safe in a signal handler.)
fn on_sigbus() {
    extern "C" fn handler(_: libc::c_int) {
        const MESSAGE: &[u8] =
            b"launchguard: error: an input file shrank or could not be read while it was read (SIGBUS)\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffer is static.
        unsafe {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(2);
        }
    }
    // SAFETY: a zeroed sigaction is valid (no flags, an empty mask once set); the handler calls
    // only async-signal-safe functions and never returns.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// An error and its causes on one line, joined with ": ". A cause whose text the message above it
/// already ends with is left out (an I/O error that its wrapper quotes), and a regular-expression
/// error, which the regex crate draws over several lines with a caret, says its one reason. A
/// line break inside a cause (a file name's) is shown escaped, `\n`, as the reports show it.
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = match cause.downcast_ref::<regex::Error>() {
            Some(re) => regex_reason(re),
            None => cause.to_string(),
        };
        let text = launchguard_report::escape::one_line(text.trim()).into_owned();
        if text.is_empty() || out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The error object `--format json` prints on standard output: `{"schema":
/// "launchguard.error/1", "error": LINE, "exit_code": 2}`.
fn error_json(line: &str) -> String {
    serde_json::json!({ "schema": "launchguard.error/1", "error": line, "exit_code": 2 }).to_string()
}

/// The reason a pattern is refused, without the pattern redrawn: "unclosed group".
fn regex_reason(e: &regex::Error) -> String {
    match e {
        regex::Error::Syntax(text) => {
            let reason =
                text.lines().rev().find_map(|l| l.trim().strip_prefix("error: ")).unwrap_or(text.trim());
            reason.to_string()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_cause_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "/missing.toml: {}", self.0)
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Wrapper(io));
        assert_eq!(one_line(&e), "/missing.toml: No such file or directory (os error 2)");
    }

    #[test]
    fn a_bad_pattern_is_one_clean_line() {
        // Built at run time: clippy refuses an invalid literal pattern.
        let pattern = String::from("(");
        let e = anyhow::Error::new(regex::Regex::new(&pattern).unwrap_err())
            .context("--within is not a valid regular expression");
        assert_eq!(one_line(&e), "--within is not a valid regular expression: unclosed group");
    }

    #[test]
    fn a_line_break_in_a_file_name_is_shown_escaped() {
        let e = anyhow::anyhow!("No such file or directory (os error 2)")
            .context("cannot read a\nverdict: PASS.json");
        assert_eq!(
            one_line(&e),
            "cannot read a\\nverdict: PASS.json: No such file or directory (os error 2)"
        );
    }
}
