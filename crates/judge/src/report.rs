//! The judged documents: figures, the limits in force, the checks and the verdict, as the JSON
//! interfaces `launchguard.analysis/1` and `launchguard.analysis-ranks/1` promise them.

use launchguard_analysis::model::Analysis;
use launchguard_analysis::model_ranks::{Across, RankFacts};
use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::verdict::{Check, Verdict};

/// `launchguard.analysis/1`: one trace judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    /// What was measured.
    #[serde(flatten)]
    pub figures: Analysis,
    /// The limits in force, adapted to what the trace holds, and why.
    #[serde(default)]
    pub limits: Limits,
    /// The checks, in report order.
    pub checks: Vec<Check>,
    /// The worst status of the checks; `skip` when nothing here is for the guard to judge.
    pub verdict: Verdict,
    /// Why the verdict is `skip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `launchguard.analysis-ranks/1`: the ranks of one distributed run judged together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanksReport {
    /// Always `launchguard.analysis-ranks/1`.
    pub schema: String,
    /// `distributedInfo.world_size` when the traces agree on one.
    pub world_size: Option<u64>,
    /// One entry per rank, in rank order.
    pub ranks: Vec<RankReport>,
    /// Figures that compare the ranks, and the worst rank.
    pub across: AcrossReport,
    /// The checks across ranks: `ranks`, `clock_alignment`, then each per-rank check at the rank
    /// where it is worst, its message naming that rank and the ranks it covers.
    pub checks: Vec<Check>,
    /// Worst status of the checks.
    pub verdict: Verdict,
    /// Why the verdict is `skip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Things the reader should know (missing ranks, unmatched collectives, unaligned clocks).
    pub warnings: Vec<String>,
}

/// One rank judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    /// Who the rank is and its figures among the ranks, as measured; its fields read through.
    #[serde(flatten)]
    pub facts: RankFacts,
    /// This rank's checks: those of its trace, with `occupancy` judged on occupancy excluding
    /// collective wait over the common window.
    pub checks: Vec<Check>,
    /// Worst status of this rank's checks.
    pub verdict: Verdict,
    /// This rank's trace judged alone (`launchguard.analysis/1`).
    pub analysis: AnalysisReport,
}

// Read as the analysis' ranks are: `k.rank`, `k.whole` (see `RankAnalysis`).
impl std::ops::Deref for RankReport {
    type Target = RankFacts;
    fn deref(&self) -> &RankFacts {
        &self.facts
    }
}

impl std::ops::DerefMut for RankReport {
    fn deref_mut(&mut self) -> &mut RankFacts {
        &mut self.facts
    }
}

/// The cross-rank figures and the rank that decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossReport {
    /// The rank that makes the others wait ([`AcrossReport::culprit`]) when there is one; else
    /// the rank with the worst verdict, among equals the lowest occupancy excluding wait, then
    /// the lowest rank.
    pub worst_rank: u64,
    /// The rank whose late launches make the others wait: its GPU idles before each replay while
    /// theirs wait inside collectives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<u64>,
    /// The ranks that wait for the culprit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<u64>,
    /// The figures.
    #[serde(flatten)]
    pub figures: Across,
}

impl RanksReport {
    /// The occupancy the guard judges: the lowest rank's occupancy excluding waiting for peers
    /// over the window every rank was recorded in (else its own window).
    pub fn judged_occupancy(&self) -> Option<f64> {
        self.ranks
            .iter()
            .map(|r| {
                let f = r.common.as_ref().unwrap_or(&r.whole);
                f.occupancy_excluding_wait.unwrap_or(f.occupancy)
            })
            .reduce(f64::min)
    }
}

impl AnalysisReport {
    /// The occupancy the guard judges: the lowest device's, over its steady state of graph
    /// replays where it has one.
    pub fn judged_occupancy(&self) -> Option<f64> {
        self.figures.devices.iter().map(|d| crate::trace::judged_figures(d).occupancy).reduce(f64::min)
    }
}
