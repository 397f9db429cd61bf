//! A comparison as JUnit XML: one testcase per check of the comparison (`compare.baseline`, then
//! one per metric, the worst rank's), as for the checks of one run.

use launchguard_judge::compare::Comparison;

/// The comparison as JUnit XML.
pub fn render(c: &Comparison) -> crate::error::Result<Vec<u8>> {
    let mut properties = vec![("verdict", c.verdict.as_str().to_string())];
    for (name, run) in [("baseline", &c.baseline), ("current", &c.current)] {
        if let Some(p) = &run.path {
            properties.push((name, p.clone()));
        }
    }
    let inconclusive = (c.verdict == launchguard_judge::Verdict::Inconclusive)
        .then(|| c.reason.as_deref().unwrap_or_default());
    crate::junit::xml("compare", &properties, &c.checks(), inconclusive)
}
