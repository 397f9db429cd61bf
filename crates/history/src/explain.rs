//! What differs in the fingerprints on either side of a change point, ranked.
//!
//! The runs on each side are those of the levels the change point separates (at most `window`
//! runs each way, stopping at the neighbouring change points and reset markers). A key differs
//! when its most common value before is not its most common value after. It ranks by how well
//! its change lines up with the change point — the share of runs before that hold the old value
//! times the share after that hold the new one (1 when it switched exactly there and nowhere
//! else) — times a prior for the kind of key ([`crate::fingerprint::prior`]: interception layers
//! and the profiler first, then versions, libraries, variables, identity). A key that changes
//! with every run (a build number) lines up poorly and sinks.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::fingerprint::{prior, Fingerprint};
use crate::series::{Change, SeriesAnalysis};
use crate::{Error, Result};

/// The value shown for a key a fingerprint lacks.
pub const ABSENT: &str = "(absent)";

/// One key that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The fingerprint key (`torch`, `layer/libdelay.so`, `env/LD_PRELOAD`, …).
    pub key: String,
    /// Its most common value before.
    pub before: String,
    /// Its most common value after.
    pub after: String,
    /// Share of runs before that hold `before`.
    pub share_before: f64,
    /// Share of runs after that hold `after`.
    pub share_after: f64,
    /// Whether the run before the change holds `before` and the first run after holds `after`.
    pub at_the_change: bool,
    /// The kind of key.
    pub kind: &'static str,
    /// The rank's score: share before × share after × the kind's prior.
    pub score: f64,
}

/// What changed at a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The first run on the new side.
    pub run_id: i64,
    /// Its build.
    pub build: Option<String>,
    /// The last run before.
    pub previous_run_id: i64,
    /// Its build.
    pub previous_build: Option<String>,
    /// Runs compared before and after.
    pub runs_before: usize,
    /// Runs compared after.
    pub runs_after: usize,
    /// The metrics' change points at this run.
    pub changes: Vec<Change>,
    /// What differs, most likely cause first.
    pub differences: Vec<Difference>,
}

/// Explains the boundary before run `run_id` of the series (a change point or any run).
pub fn explain(
    a: &SeriesAnalysis,
    fingerprints: &BTreeMap<String, Fingerprint>,
    run_id: i64,
    window: usize,
) -> Result<Explanation> {
    let pos = a
        .runs
        .iter()
        .position(|r| r.id == run_id)
        .ok_or_else(|| Error::new(format!("run #{run_id} is not in the series {}", a.key)))?;
    if pos == 0 {
        return Err(Error::new(format!(
            "run #{run_id} is the first of its series: nothing before it to compare"
        )));
    }
    // Neighbouring change points (of any metric) and resets bound the sides.
    let mut bounds: BTreeSet<i64> = a.changes().iter().map(|c| c.run_id).collect();
    bounds.extend(a.resets.iter().map(|r| r.run_id));
    let start_id = bounds.range(..run_id).next_back().copied();
    let end_id = bounds.range(run_id + 1..).next().copied();
    let start =
        start_id.map_or(0, |id| a.runs.partition_point(|r| r.id < id)).max(pos.saturating_sub(window));
    let end = end_id.map_or(a.runs.len(), |id| a.runs.partition_point(|r| r.id < id)).min(pos + window);
    // Each run's stack, with its build and image added.
    let fp_of = |i: usize| -> Option<Fingerprint> {
        let mut f = fingerprints.get(&a.runs[i].fingerprint)?.clone();
        f.add_identity(&a.runs[i].identity);
        Some(f)
    };
    let left: Vec<Option<Fingerprint>> = (start..pos).map(fp_of).collect();
    let right: Vec<Option<Fingerprint>> = (pos..end).map(fp_of).collect();
    let keys: BTreeSet<&str> =
        left.iter().chain(&right).flatten().flat_map(|f| f.0.keys().map(String::as_str)).collect();
    let value = |f: &Option<Fingerprint>, k: &str| -> String {
        f.as_ref().and_then(|f| f.get(k)).unwrap_or(ABSENT).to_string()
    };
    let mut differences = Vec::new();
    for key in keys {
        let (before, share_before) = mode(left.iter().rev().map(|f| value(f, key)));
        let (after, share_after) = mode(right.iter().map(|f| value(f, key)));
        if before == after {
            continue;
        }
        let at_the_change = value(&left[left.len() - 1], key) == before && value(&right[0], key) == after;
        let (weight, kind) = prior(key);
        differences.push(Difference {
            key: key.to_string(),
            score: share_before * share_after * weight,
            before,
            after,
            share_before,
            share_after,
            at_the_change,
            kind,
        });
    }
    differences.sort_by(|x, y| y.score.total_cmp(&x.score).then_with(|| x.key.cmp(&y.key)));
    let changes = a.changes().into_iter().filter(|c| c.run_id == run_id).cloned().collect();
    Ok(Explanation {
        run_id,
        build: a.runs[pos].build.clone(),
        previous_run_id: a.runs[pos - 1].id,
        previous_build: a.runs[pos - 1].build.clone(),
        runs_before: left.len(),
        runs_after: right.len(),
        changes,
        differences,
    })
}

/// The most common value and its share; of values as common, the one seen first (the values
/// come nearest the change first).
fn mode(values: impl Iterator<Item = String>) -> (String, f64) {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut n = 0;
    for (i, v) in values.enumerate() {
        counts.entry(v).or_insert((0, i)).0 += 1;
        n += 1;
    }
    let best = counts.into_iter().max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1)));
    match best {
        Some((v, (c, _))) => (v, c as f64 / n.max(1) as f64),
        None => (ABSENT.to_string(), 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changepoint::Config;
    use crate::record::{RunRow, RunStatus};
    use crate::series::{analyse, SeriesKey};

    fn key() -> SeriesKey {
        SeriesKey { preset: "reference".into(), machine: "NVIDIA H200".into(), lane: "main".into() }
    }

    /// 10 runs at 2.7 µs, then 10 at 27.7 µs; at run 11 LD_PRELOAD appears and the delay layer
    /// is mapped; torch changed earlier (run 4) and the build changes every run.
    fn history() -> (SeriesAnalysis, BTreeMap<String, Fingerprint>) {
        let mut fps = BTreeMap::new();
        let runs = (1..=20)
            .map(|i| {
                let mut f = Fingerprint::default();
                f.set("gpu", "NVIDIA H200");
                f.set("torch", if i < 4 { "2.10.0" } else { "2.11.0" });
                if i > 10 {
                    f.set("env/LD_PRELOAD", "/opt/libdelay.so");
                    f.set("layer/libdelay.so", "/opt/libdelay.so");
                }
                let hash = f.hash();
                fps.insert(hash.clone(), f);
                let v = if i <= 10 { 2.7 } else { 27.7 } + [0.0, 0.1, -0.1][i as usize % 3];
                RunRow {
                    id: i,
                    key: key(),
                    recorded_at: String::new(),
                    kind: "check".into(),
                    source: None,
                    verdict: "pass".into(),
                    status: RunStatus::Ok,
                    build: Some(format!("build-{i}")),
                    identity: crate::fingerprint::Identity {
                        build_id: Some(format!("build-{i}")),
                        ..Default::default()
                    },
                    fingerprint: hash,
                    figures: [("host_before_us".to_string(), v)].into(),
                }
            })
            .collect();
        (analyse(key(), runs, vec![], &Config::default()), fps)
    }

    #[test]
    fn the_layer_that_appeared_ranks_first() {
        let (a, fps) = history();
        assert_eq!(a.changes().len(), 1);
        let e = explain(&a, &fps, 11, 10).unwrap();
        assert_eq!((e.previous_run_id, e.build.as_deref()), (10, Some("build-11")));
        assert_eq!(e.changes.len(), 1);
        let keys: Vec<&str> = e.differences.iter().map(|d| d.key.as_str()).collect();
        // Both switched exactly at run 11 (score 1 × 1 × 1.0); the build changes every run
        // (1/10 × 1/10 × 0.5); torch is the same on both sides' majority: not a difference.
        assert_eq!(keys[..2], ["env/LD_PRELOAD", "layer/libdelay.so"]);
        assert_eq!(e.differences[0].before, ABSENT);
        assert_eq!(e.differences[0].after, "/opt/libdelay.so");
        assert!(e.differences[0].at_the_change);
        assert!((e.differences[0].score - 1.0).abs() < 1e-12);
        assert_eq!(keys[2], "build");
        assert!((e.differences[2].score - 0.1 * 0.1 * 0.5).abs() < 1e-12);
        assert!(!keys.contains(&"torch"));
    }

    #[test]
    fn any_run_can_be_explained_but_not_the_first_or_a_stranger() {
        let (a, fps) = history();
        let e = explain(&a, &fps, 4, 10).unwrap();
        assert_eq!(e.differences[0].key, "torch");
        assert_eq!((e.differences[0].before.as_str(), e.differences[0].after.as_str()), ("2.10.0", "2.11.0"));
        assert!(e.changes.is_empty());
        assert!(explain(&a, &fps, 1, 10).is_err());
        assert!(explain(&a, &fps, 99, 10).is_err());
    }

    #[test]
    fn mode_counts_shares() {
        let (v, s) = mode(["a", "b", "a"].iter().map(|s| s.to_string()));
        assert_eq!((v.as_str(), s), ("a", 2.0 / 3.0));
    }
}
