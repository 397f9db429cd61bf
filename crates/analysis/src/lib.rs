//! The analysis at the heart of launchguard: from a [`launchguard_trace::Timeline`] to per-device
//! occupancy (union of activity intervals over the window), idle gaps, graph-launch statistics,
//! replays joined to their kernels by correlation id, and the checks that judge them.
//!
//! The definitions are the contract (see the README): busy time is the length of the UNION of
//! activity intervals, never their sum; the window runs from the first activity start to the last
//! activity end; gaps are the idle intervals inside the window.

pub mod analyze;
pub mod check;
pub mod checks;
pub mod config;
pub mod intervals;
pub mod model;
pub mod model_ranks;
pub mod ranks;
pub mod units;

pub use analyze::{analyze, analyze_timeline, Options};
pub use check::{Check, Status, Verdict};
pub use config::Config;
pub use model::Analysis;
