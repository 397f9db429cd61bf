//! The one integration-test binary: drives the `launchguard` CLI on real traces.
//! One module per subcommand; shared helpers in `util`.

mod util;

mod analyze;
mod check;
mod compare;
mod convert;
mod damage;
mod formats;
mod formats_nsys;
mod formats_rocprof;
mod history;
mod hostile;
mod kernels;
mod labeled;
mod launcher;
mod oracle;
mod outputs;
mod parsers;
mod ranks;
mod reports;
mod scale;
mod usage;
mod verdicts;
