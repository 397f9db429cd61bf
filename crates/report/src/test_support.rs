//! Hand-built views for the renderers' unit tests.

use launchguard_analysis::{Check, Verdict};

use crate::View;

/// A view of `checks` alone: no trace, no phases.
pub fn view_with_checks<'a>(checks: &'a [Check], document: &'a crate::Document) -> View<'a> {
    View {
        command: "analyze",
        verdict: Verdict::of(checks),
        reason: None,
        checks,
        analysis: None,
        timeline: None,
        phases: &[],
        document,
    }
}
