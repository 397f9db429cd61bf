//! The check type shared by every command: id, status, value, limit, one-line reason, hint.

use serde::{Deserialize, Serialize};

/// Outcome of one check. Ordered from best to worst, so the verdict is the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not applicable here (no graph launch, no GPU).
    Skip,
    /// Within limits.
    Pass,
    /// Past a warning limit.
    Warn,
    /// Past a failing limit.
    Fail,
}

impl Status {
    /// Lowercase name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Skip => "skip",
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// Which check: the stable identifier a check keeps in every document (`occupancy`, `gaps`,
/// `graph_launch`, …; `compare.<metric>` for a comparison's). Matched by value, never by text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CheckId {
    /// Whether the trace has GPU activity to measure.
    GpuActivity,
    /// Busy fraction of the GPU.
    Occupancy,
    /// Idle gaps over the threshold.
    Gaps,
    /// Graph-launch duration.
    GraphLaunch,
    /// GPU idle before each replay.
    ReplayIdle,
    /// Whether every replay ran the same GPU work.
    ReplayConsistency,
    /// Whether the trace was read whole.
    TraceComplete,
    /// Whether `check`'s own trace recorded what it ran.
    TraceSanity,
    /// Whether the trace is damaged: the profiler lost GPU events, or its causality is
    /// impossible (any trace).
    TraceDamage,
    /// The profiler backend PyTorch links.
    Linkage,
    /// Libraries that intercept launches.
    InterceptionLayers,
    /// Host cost of a replay before any profiler, against the GPU's time.
    LaunchHeadroom,
    /// Whether the host can queue replays ahead of the GPU.
    RunAhead,
    /// Host cost left behind by a profiler session.
    ResidualOverhead,
    /// What the host costs a step-synchronous replay (a server's decode step) over the GPU's time.
    SyncStep,
    /// Which ranks a multi-rank run holds.
    Ranks,
    /// Whether the ranks' clocks agree.
    ClockAlignment,
    /// Whether a comparison's runs are comparable.
    CompareBaseline,
    /// One metric of a comparison (`compare.<metric>`).
    Compare(String),
    /// An id this version does not know (a document written by a later one).
    Other(String),
}

impl CheckId {
    const NAMED: [(CheckId, &'static str); 18] = [
        (CheckId::GpuActivity, "gpu_activity"),
        (CheckId::Occupancy, "occupancy"),
        (CheckId::Gaps, "gaps"),
        (CheckId::GraphLaunch, "graph_launch"),
        (CheckId::ReplayIdle, "replay_idle"),
        (CheckId::ReplayConsistency, "replay_consistency"),
        (CheckId::TraceComplete, "trace_complete"),
        (CheckId::TraceSanity, "trace_sanity"),
        (CheckId::TraceDamage, "trace_damage"),
        (CheckId::Linkage, "linkage"),
        (CheckId::InterceptionLayers, "interception_layers"),
        (CheckId::LaunchHeadroom, "launch_headroom"),
        (CheckId::RunAhead, "run_ahead"),
        (CheckId::ResidualOverhead, "residual_overhead"),
        (CheckId::SyncStep, "sync_step"),
        (CheckId::Ranks, "ranks"),
        (CheckId::ClockAlignment, "clock_alignment"),
        (CheckId::CompareBaseline, "compare.baseline"),
    ];

    /// The id as documents write it.
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        match self {
            CheckId::Compare(metric) => format!("compare.{metric}").into(),
            CheckId::Other(id) => id.as_str().into(),
            named => Self::NAMED.iter().find(|(id, _)| id == named).map_or("", |(_, s)| s).into(),
        }
    }

    /// The id of `text`.
    pub fn parse(text: &str) -> CheckId {
        if let Some((id, _)) = Self::NAMED.iter().find(|(_, s)| *s == text) {
            return id.clone();
        }
        match text.strip_prefix("compare.") {
            Some(metric) => CheckId::Compare(metric.to_string()),
            None => CheckId::Other(text.to_string()),
        }
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for CheckId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| CheckId::parse(&s))
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable identifier.
    pub id: CheckId,
    /// Outcome.
    pub status: Status,
    /// The measured value (a number, or a string such as a backend name; null when none).
    pub value: serde_json::Value,
    /// The limit it was judged against (null when none).
    pub limit: serde_json::Value,
    /// One line: what was measured and why it has this status.
    pub message: String,
    /// What to do about it, when there is something to do.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hint: Option<String>,
}

impl Check {
    /// A check with a numeric value and limit.
    pub fn new(
        id: CheckId,
        status: Status,
        value: Option<f64>,
        limit: Option<f64>,
        message: impl Into<String>,
    ) -> Self {
        let num = |v: Option<f64>| {
            v.filter(|x| x.is_finite()).map_or(serde_json::Value::Null, |x| serde_json::json!(x))
        };
        Self { id, status, value: num(value), limit: num(limit), message: message.into(), hint: None }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The overall outcome: the worst status among the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every check passed or was skipped.
    Pass,
    /// At least one warning, no failure.
    Warn,
    /// At least one failure.
    Fail,
    /// Nothing could be measured here (no GPU, no torch): not a pass, not a failure.
    Skip,
    /// The trace is damaged (it lost GPU events, or its causality is impossible): what is left
    /// cannot say whether the GPU starved. The checks are still reported; the reason names what
    /// was lost or impossible, where, and how it was told.
    Inconclusive,
}

impl Verdict {
    /// The verdict of a list of checks: the worst status; skipped checks do not count.
    pub fn of(checks: &[Check]) -> Self {
        match checks.iter().map(|c| c.status).max() {
            Some(Status::Fail) => Verdict::Fail,
            Some(Status::Warn) => Verdict::Warn,
            Some(Status::Pass) => Verdict::Pass,
            Some(Status::Skip) | None => Verdict::Skip,
        }
    }

    /// The process exit code: 0 pass, warn and skip; 1 fail; 2 inconclusive (unusable input).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass | Verdict::Warn | Verdict::Skip => 0,
            Verdict::Fail => 1,
            Verdict::Inconclusive => 2,
        }
    }

    /// Lowercase name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ids_read_back_as_written() {
        // The ids of launchguard.analysis/1 and launchguard.check/1 as documents hold them.
        let written = [
            "gpu_activity",
            "occupancy",
            "gaps",
            "graph_launch",
            "replay_idle",
            "replay_consistency",
            "trace_complete",
            "trace_sanity",
            "trace_damage",
            "linkage",
            "interception_layers",
            "launch_headroom",
            "run_ahead",
            "residual_overhead",
            "sync_step",
            "ranks",
            "clock_alignment",
            "compare.baseline",
            "compare.host_before",
            "a_check_of_a_later_version",
        ];
        for text in written {
            let id: CheckId = serde_json::from_value(serde_json::json!(text)).unwrap();
            assert_eq!(serde_json::to_value(&id).unwrap(), serde_json::json!(text));
            assert!(!matches!(id, CheckId::Other(_)) || text == "a_check_of_a_later_version", "{text}");
        }
        assert_eq!(CheckId::parse("compare.gpu_after"), CheckId::Compare("gpu_after".into()));
    }
}
