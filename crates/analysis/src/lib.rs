//! The measuring half of launchguard: from a [`launchguard_trace::Timeline`] to per-device
//! occupancy (union of activity intervals over the window), idle gaps, graph-launch statistics,
//! replays joined to their kernels by correlation id, the steady state of graph replays, the ranks
//! of a distributed run, and the context `check` leaves in a trace. Figures only: what passes is
//! decided by `launchguard-judge`, once.
//!
//! The definitions are the contract (see the README): busy time is the length of the UNION of
//! activity intervals, never their sum; the window runs from the first activity start to the last
//! activity end; gaps are the idle intervals inside the window; the steady window runs from the
//! first graph replay's first GPU activity to the last replay's last.

pub mod analyze;
pub mod compare;
pub mod context;
pub mod intervals;
pub mod kernel_diff;
pub mod kernels;
pub mod model;
pub mod model_ranks;
pub mod ranks;
pub mod spans;
pub mod stats;
pub mod units;

pub use analyze::{analyze, analyze_timeline, AnalyzeError, Options};
pub use model::Analysis;

#[cfg(test)]
mod test_support {
    /// The bundled H200 trace (examples/): real replays, their kernels sharing each launch's
    /// correlation id.
    pub(crate) fn bundled() -> launchguard_trace::Timeline {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/healthy_clean.json.gz");
        launchguard_trace::read(&path).expect("the bundled trace reads").timeline
    }
}
