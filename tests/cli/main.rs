//! The one integration-test binary: drives the `launchguard` CLI on real traces.
//! One module per subcommand; shared helpers in `util`.

mod util;

mod analyze;
mod check;
mod compare;
mod hostile;
mod labeled;
mod oracle;
mod parsers;
mod ranks;
mod reports;
