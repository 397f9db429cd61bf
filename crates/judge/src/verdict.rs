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

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable identifier (`occupancy`, `gaps`, `graph_launch`, …).
    pub id: String,
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
        id: &str,
        status: Status,
        value: Option<f64>,
        limit: Option<f64>,
        message: impl Into<String>,
    ) -> Self {
        let num = |v: Option<f64>| {
            v.filter(|x| x.is_finite()).map_or(serde_json::Value::Null, |x| serde_json::json!(x))
        };
        Self {
            id: id.to_string(),
            status,
            value: num(value),
            limit: num(limit),
            message: message.into(),
            hint: None,
        }
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

    /// The process exit code: 0 pass, warn and skip; 1 fail.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Fail => 1,
            _ => 0,
        }
    }

    /// Lowercase name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
        }
    }
}
