//! Series: the runs of one (workload preset, machine class, lane), where the lane is a `--series`
//! name or the branch. Each metric's series is searched for change points over its conclusive
//! runs, in recording order, anew from each reset marker.

use std::fmt;

use serde::Serialize;

use crate::changepoint::{self, median, Config};
use crate::metrics::{Metric, Worse, METRICS};
use crate::record::{Reset, RunRow};

/// What names a series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    /// Workload preset (`reference`, `tiny`, …).
    pub preset: String,
    /// Machine class: the GPU, × the ranks.
    pub machine: String,
    /// A `--series` name, or the branch.
    pub lane: String,
}

impl fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} · {} · {}", self.preset, self.machine, self.lane)
    }
}

/// The third part of a series key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// A name given with `--series`.
    Named(String),
    /// A branch.
    Branch(String),
}

impl Default for Lane {
    fn default() -> Self {
        Lane::Branch("default".into())
    }
}

impl Lane {
    /// The lane's name as stored.
    pub fn name(&self) -> &str {
        match self {
            Lane::Named(s) | Lane::Branch(s) => s,
        }
    }

    /// `--series`, else `--branch`, else the branch CI names (GitHub Actions, GitLab,
    /// Buildkite, Jenkins), else `default`.
    pub fn from_flags(
        series: Option<&str>,
        branch: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Lane {
        if let Some(s) = series {
            return Lane::Named(s.to_string());
        }
        if let Some(b) = branch {
            return Lane::Branch(b.to_string());
        }
        for var in
            ["GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH", "BRANCH_NAME"]
        {
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                return Lane::Branch(v);
            }
        }
        Lane::default()
    }
}

/// A change point of a metric, in run terms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The metric.
    pub metric: &'static str,
    /// The first run of the new level.
    pub run_id: i64,
    /// The last run before it.
    pub previous_run_id: i64,
    /// The build of the first run of the new level.
    pub build: Option<String>,
    /// Median before (since the previous change point or reset).
    pub before: f64,
    /// Median after (until the next one).
    pub after: f64,
    /// (after − before) / before.
    pub relative: f64,
    /// Whether it went the worse way.
    pub worse: bool,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// Runs in the level before and after, counted.
    pub runs_before: usize,
    /// Runs in the level after.
    pub runs_after: usize,
}

/// One metric's series, analysed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSeries {
    /// The metric.
    pub metric: Metric,
    /// (run id, value) of every run that has it; conclusive or not.
    pub points: Vec<(i64, f64)>,
    /// Its change points, in order.
    pub changes: Vec<Change>,
}

/// A series analysed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesAnalysis {
    /// Which series.
    pub key: SeriesKey,
    /// Its runs, in order.
    pub runs: Vec<RunRow>,
    /// Its reset markers.
    pub resets: Vec<Reset>,
    /// One entry per metric measured in it.
    pub metrics: Vec<MetricSeries>,
    /// The detector's settings.
    pub config: Config,
}

impl SeriesAnalysis {
    /// A run of the series.
    pub fn run(&self, id: i64) -> Option<&RunRow> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// Every change point, in run order, then metric order.
    pub fn changes(&self) -> Vec<&Change> {
        let mut all: Vec<&Change> = self.metrics.iter().flat_map(|m| &m.changes).collect();
        all.sort_by_key(|c| c.run_id);
        all
    }
}

/// Where each metric's series starts anew: the runs that reset markers name.
fn reset_starts(resets: &[Reset], metric: &str) -> Vec<i64> {
    let mut v: Vec<i64> =
        resets.iter().filter(|r| r.metric.as_deref().is_none_or(|m| m == metric)).map(|r| r.run_id).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Analyses a series: each metric's change points over its conclusive runs, each part between
/// reset markers on its own.
pub fn analyse(key: SeriesKey, runs: Vec<RunRow>, resets: Vec<Reset>, cfg: &Config) -> SeriesAnalysis {
    let metrics = METRICS
        .iter()
        .filter_map(|m| {
            let points: Vec<(i64, f64)> =
                runs.iter().filter_map(|r| r.figures.get(m.name).map(|&v| (r.id, v))).collect();
            if points.is_empty() {
                return None;
            }
            let counted: Vec<(i64, f64)> = runs
                .iter()
                .filter(|r| r.status.is_ok())
                .filter_map(|r| r.figures.get(m.name).map(|&v| (r.id, v)))
                .collect();
            let starts = reset_starts(&resets, m.name);
            let mut changes = Vec::new();
            // Split at each reset: a part is the runs from one reset to the next.
            let mut parts: Vec<&[(i64, f64)]> = Vec::new();
            let mut rest: &[(i64, f64)] = &counted;
            for s in &starts {
                let at = rest.partition_point(|p| p.0 < *s);
                let (head, tail) = rest.split_at(at);
                parts.push(head);
                rest = tail;
            }
            parts.push(rest);
            for part in parts {
                changes.extend(changes_of(m, part, &runs, cfg));
            }
            Some(MetricSeries { metric: *m, points, changes })
        })
        .collect();
    SeriesAnalysis { key, runs, resets, metrics, config: *cfg }
}

/// The change points of one part of one metric's series.
fn changes_of(m: &Metric, part: &[(i64, f64)], runs: &[RunRow], cfg: &Config) -> Vec<Change> {
    let values: Vec<f64> = part.iter().map(|p| p.1).collect();
    let cps = changepoint::detect(&values, cfg);
    let bounds: Vec<usize> =
        std::iter::once(0).chain(cps.iter().map(|c| c.index)).chain(std::iter::once(values.len())).collect();
    cps.iter()
        .enumerate()
        .map(|(i, cp)| {
            let (before, after) = (&values[bounds[i]..cp.index], &values[cp.index..bounds[i + 2]]);
            let (b, a) = (median(before), median(after));
            let relative = if b == 0.0 { 0.0 } else { (a - b) / b.abs() };
            let worse = match m.worse {
                Worse::Higher => a > b,
                Worse::Lower => a < b,
            };
            let run_id = part[cp.index].0;
            Change {
                metric: m.name,
                run_id,
                previous_run_id: part[cp.index - 1].0,
                build: runs.iter().find(|r| r.id == run_id).and_then(|r| r.build.clone()),
                before: b,
                after: a,
                relative,
                worse,
                p_value: cp.p_value,
                runs_before: before.len(),
                runs_after: after.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunStatus;

    fn run(id: i64, v: f64, ok: bool) -> RunRow {
        RunRow {
            id,
            key: key(),
            recorded_at: String::new(),
            kind: "check".into(),
            source: None,
            verdict: "pass".into(),
            status: if ok { RunStatus::Ok } else { RunStatus::Inconclusive("test".into()) },
            build: Some(format!("b{id}")),
            fingerprint: String::new(),
            identity: Default::default(),
            figures: [("host_before_us".to_string(), v), ("occupancy".to_string(), 1.0 / v)].into(),
        }
    }

    fn key() -> SeriesKey {
        SeriesKey { preset: "tiny".into(), machine: "H200".into(), lane: "main".into() }
    }

    fn step_runs() -> Vec<RunRow> {
        // 12 runs near 3 µs, then 12 near 28 µs; run 5 is inconclusive and wildly off.
        (1..=24)
            .map(|i| {
                let wobble = [0.0, 0.1, -0.1, 0.05][i as usize % 4];
                if i == 5 {
                    run(i, 500.0, false)
                } else {
                    run(i, if i <= 12 { 3.0 } else { 28.0 } + wobble, true)
                }
            })
            .collect()
    }

    #[test]
    fn a_step_is_a_change_for_the_worse_in_both_directions() {
        let a = analyse(key(), step_runs(), vec![], &Config::default());
        let host = a.metrics.iter().find(|m| m.metric.name == "host_before_us").unwrap();
        assert_eq!(host.points.len(), 24, "every run is drawn");
        assert_eq!(host.changes.len(), 1, "{:?}", host.changes);
        let c = &host.changes[0];
        assert_eq!((c.run_id, c.previous_run_id, c.build.as_deref()), (13, 12, Some("b13")));
        assert!(c.worse && c.relative > 8.0);
        assert_eq!((c.runs_before, c.runs_after), (11, 12), "the inconclusive run is left out");
        // Occupancy is 1/v here: it drops, which is worse for it.
        let occ = a.metrics.iter().find(|m| m.metric.name == "occupancy").unwrap();
        assert!(occ.changes[0].worse && occ.changes[0].relative < 0.0);
    }

    #[test]
    fn a_reset_at_the_change_accepts_it() {
        let reset = Reset {
            id: Some(1),
            key: key(),
            run_id: 13,
            metric: Some("host_before_us".into()),
            note: "expected".into(),
            created_at: String::new(),
        };
        let a = analyse(key(), step_runs(), vec![reset], &Config::default());
        let host = a.metrics.iter().find(|m| m.metric.name == "host_before_us").unwrap();
        assert!(host.changes.is_empty(), "{:?}", host.changes);
        // Only that metric was reset.
        let occ = a.metrics.iter().find(|m| m.metric.name == "occupancy").unwrap();
        assert_eq!(occ.changes.len(), 1);
    }

    #[test]
    fn lanes_come_from_flags_then_ci() {
        let none = |_: &str| None;
        assert_eq!(Lane::from_flags(Some("nightly"), Some("main"), &none), Lane::Named("nightly".into()));
        assert_eq!(Lane::from_flags(None, Some("main"), &none), Lane::Branch("main".into()));
        let gh = |k: &str| (k == "GITHUB_REF_NAME").then(|| "release".to_string());
        assert_eq!(Lane::from_flags(None, None, &gh), Lane::Branch("release".into()));
        assert_eq!(Lane::from_flags(None, None, &none).name(), "default");
    }
}
