//! The gate: a series fails when its newest runs sit past a change for the worse — the last
//! change point of a metric went the worse way. The first bad build is where that slide began:
//! the earliest of the change points for the worse that lead, one after the other, to the newest
//! level. A change for the better after it (a fix) passes; a reset marker at it (an accepted
//! change) passes.

use serde::Serialize;

use crate::series::{Change, SeriesAnalysis};

/// One metric that fails the gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// The metric.
    pub metric: &'static str,
    /// Where the slide to the newest level began: the first bad build.
    pub first_bad: Change,
    /// The newest change point (the same as `first_bad` for one step).
    pub latest: Change,
    /// Median of the level before the slide.
    pub before: f64,
    /// Median of the newest level.
    pub now: f64,
}

impl Failure {
    /// (now − before) / before.
    pub fn relative(&self) -> f64 {
        if self.before == 0.0 {
            0.0
        } else {
            (self.now - self.before) / self.before.abs()
        }
    }
}

/// The metrics whose newest level sits past a change for the worse, in catalogue order.
pub fn judge(a: &SeriesAnalysis) -> Vec<Failure> {
    a.metrics
        .iter()
        .filter_map(|m| {
            let latest = m.changes.last().filter(|c| c.worse)?;
            // Walk back over adjacent changes for the worse (no improvement between).
            let mut first = latest;
            for c in m.changes.iter().rev().skip(1) {
                if !c.worse {
                    break;
                }
                first = c;
            }
            Some(Failure {
                metric: m.metric.name,
                first_bad: first.clone(),
                latest: latest.clone(),
                before: first.before,
                now: latest.after,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changepoint::Config;
    use crate::record::{RunRow, RunStatus};
    use crate::series::{analyse, SeriesKey};

    fn series(levels: &[(usize, f64)]) -> SeriesAnalysis {
        let key = SeriesKey { preset: "tiny".into(), machine: "H200".into(), lane: "main".into() };
        let mut runs = Vec::new();
        for &(n, level) in levels {
            for k in 0..n {
                let id = runs.len() as i64 + 1;
                runs.push(RunRow {
                    id,
                    key: key.clone(),
                    recorded_at: String::new(),
                    kind: "check".into(),
                    source: None,
                    verdict: "pass".into(),
                    status: RunStatus::Ok,
                    build: Some(format!("b{id}")),
                    fingerprint: String::new(),
                    identity: Default::default(),
                    figures: [("host_before_us".to_string(), level * (1.0 + [0.0, 0.01, -0.01][k % 3]))]
                        .into(),
                });
            }
        }
        analyse(key, runs, vec![], &Config::default())
    }

    #[test]
    fn a_slowdown_fails_at_its_first_build() {
        let f = judge(&series(&[(10, 3.0), (10, 28.0)]));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].metric, f[0].first_bad.run_id, f[0].first_bad.build.as_deref()),
            ("host_before_us", 11, Some("b11"))
        );
        assert!((f[0].relative() - 25.0 / 3.0).abs() < 0.2, "{}", f[0].relative());
    }

    #[test]
    fn two_slides_name_the_first_and_a_fix_passes() {
        let f = judge(&series(&[(10, 3.0), (10, 6.0), (10, 12.0)]));
        assert_eq!((f[0].first_bad.run_id, f[0].latest.run_id), (11, 21));
        assert!(judge(&series(&[(10, 3.0), (10, 28.0), (10, 3.0)])).is_empty());
        assert!(judge(&series(&[(30, 3.0)])).is_empty());
    }

    #[test]
    fn an_improvement_passes() {
        assert!(judge(&series(&[(10, 28.0), (10, 3.0)])).is_empty());
    }
}
