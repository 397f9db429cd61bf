//! The one integration-test binary: drives the `launchguard` CLI on real traces.
//! One module per subcommand; shared helpers in `util`.

mod util;

mod analyze;
mod check;
mod compare;
mod damage;
mod formats;
mod history;
mod hostile;
mod kernels;
mod labeled;
mod launcher;
mod oracle;
mod parsers;
mod ranks;
mod reports;
mod usage;
mod verdicts;
