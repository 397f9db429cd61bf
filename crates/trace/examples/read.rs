//! The reader alone, without the analysis and reports of `launchguard analyze`, for
//! `bench/run.sh` to set beside the floors (`cat`, `zcat`, the inflaters) that issue 19's goals
//! are stated against (`cargo build --release -p launchguard-trace --example read`).
//!
//!     read FILE                 # the default reader (fast), plain or gzip
//!     read FILE simple          # another: fast, simple (and sonic, simd-json with --features candidates)
//!
//! Prints the events read; exits 2 on a trace it cannot read.

use launchguard_trace::{read_with, Parser};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parser = match args.get(2).map(String::as_str) {
        None | Some("fast") => Some(Parser::Fast),
        #[cfg(feature = "candidates")]
        Some("sonic") => Some(Parser::Sonic),
        #[cfg(feature = "candidates")]
        Some("simd-json") => Some(Parser::SimdJson),
        Some("simple") => Some(Parser::Simple),
        Some(_) => None,
    };
    let (Some(path), Some(parser)) = (args.get(1), parser) else {
        eprintln!("usage: read FILE [fast|sonic|simd-json|simple]");
        std::process::exit(2);
    };
    match read_with(std::path::Path::new(path), parser) {
        Ok(trace) => println!("{}", trace.timeline.events),
        Err(e) => {
            eprintln!("read: {e}");
            std::process::exit(2);
        }
    }
}
