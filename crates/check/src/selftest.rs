//! `selftest`: runs the check at a ladder of injected per-launch delays, each in a fresh process
//! (a profiler session changes the process it ran in), and tells which delays were caught.

use serde::{Deserialize, Serialize};

use launchguard_judge::{CheckId, Status, Verdict};

use crate::{CheckOptions, CheckReport};

/// Schema id of [`SelftestReport`].
pub const SCHEMA: &str = "launchguard.selftest/1";

/// One rung of the ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rung {
    /// Injected delay before each replay, µs (0 = a healthy run).
    pub delay_us: f64,
    /// The check's verdict; `error` when the run itself failed.
    pub verdict: String,
    /// Checks that failed.
    pub failed: Vec<CheckId>,
    /// Checks that warned.
    pub warned: Vec<CheckId>,
    /// Host cost per replay before any profiler, p50, µs (rank 0).
    pub host_p50_us: Option<f64>,
    /// GPU time per replay, µs (rank 0).
    pub gpu_us_per_replay: Option<f64>,
    /// Profiled occupancy the guard judges ([`CheckReport::judged_occupancy`]).
    pub occupancy: Option<f64>,
    /// Wall time of the run, s.
    pub wall_s: f64,
    /// Why the run failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Compared with the first healthy run as a baseline: the metrics that regressed past the
    /// `[compare]` limits (`None` for the baseline itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_failed: Option<Vec<String>>,
}

/// The whole ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelftestReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Workload preset.
    pub preset: String,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// GPU name, torch version.
    pub machine: Option<String>,
    /// Every run, in order: the healthy ones first.
    pub rungs: Vec<Rung>,
    /// Healthy runs.
    pub healthy_runs: u32,
    /// Healthy runs whose verdict was `fail`.
    pub false_alarms: u32,
    /// Smallest injected delay whose run failed.
    pub smallest_detected_us: Option<f64>,
    /// Whether every delay at or above the smallest detected one failed too; absent when no
    /// delay was injected or none was detected (nothing to be monotone about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monotone: Option<bool>,
    /// `skip` (the ladder could not run here), `fail` (a false alarm at zero delay: exit 1), else
    /// `pass`; what the exit code says.
    #[serde(default)]
    pub verdict: String,
    /// Healthy runs after the first that regressed against it (baseline false alarms).
    pub baseline_false_alarms: u32,
    /// Smallest injected delay that regressed against the first healthy run.
    pub baseline_smallest_detected_us: Option<f64>,
    /// Why the ladder could not run here (no GPU, no torch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn rung(delay_us: f64, report: &CheckReport) -> Rung {
    let ids =
        |s: Status| report.checks.iter().filter(|c| c.status == s).map(|c| c.id.clone()).collect::<Vec<_>>();
    let before = report.phases.get("before");
    Rung {
        delay_us,
        verdict: report.verdict.as_str().to_string(),
        failed: ids(Status::Fail),
        warned: ids(Status::Warn),
        host_p50_us: before.and_then(|p| p.host_p50_us),
        gpu_us_per_replay: before.and_then(|p| p.gpu_us_per_replay),
        occupancy: report.judged_occupancy(),
        wall_s: report.timings.get("wall_s").copied().unwrap_or(0.0),
        error: None,
        baseline_failed: None,
    }
}

/// Runs `healthy` runs without delay, then one per delay. `on_rung` is told of each finished run
/// (index from 0, total, the rung) and receives each run's full result to keep it if wanted.
pub fn run(
    base: &CheckOptions,
    healthy: u32,
    delays: &[f64],
    mut on_rung: impl FnMut(usize, usize, &Rung, Option<&CheckReport>),
) -> SelftestReport {
    let ladder: Vec<f64> = std::iter::repeat_n(0.0, healthy as usize).chain(delays.iter().copied()).collect();
    let mut report = SelftestReport {
        schema: SCHEMA.to_string(),
        preset: base.workload.preset.clone(),
        tp: base.settings.config.check.tp,
        machine: None,
        rungs: Vec::new(),
        healthy_runs: healthy,
        false_alarms: 0,
        smallest_detected_us: None,
        monotone: None,
        verdict: "skip".to_string(),
        baseline_false_alarms: 0,
        baseline_smallest_detected_us: None,
        reason: None,
    };
    // The first successful run is the baseline every later run is compared with.
    let mut baseline: Option<CheckReport> = None;
    for (i, &delay) in ladder.iter().enumerate() {
        let mut opts = base.clone();
        opts.inject_delay_us = delay;
        opts.progress = false;
        let started = std::time::Instant::now();
        let r = match crate::run(&opts) {
            Ok(run) if run.report.verdict == Verdict::Skip => {
                report.reason = run.report.reason.clone();
                summarize(&mut report);
                return report;
            }
            Ok(run) => {
                if report.machine.is_none() {
                    report.machine = run.report.inventory.as_ref().map(|inv| {
                        format!(
                            "{} × {}, torch {}",
                            report.tp,
                            inv.gpu_name.as_deref().unwrap_or("?"),
                            inv.torch.as_deref().unwrap_or("?")
                        )
                    });
                }
                let mut r = rung(delay, &run.report);
                match &baseline {
                    // Forced: the injected delay is the one difference, and the point.
                    Some(b) => {
                        let c = crate::compare::compare(b, &run.report, &base.settings.config.compare, true);
                        let failed = c
                            .checks()
                            .into_iter()
                            .filter(|c| c.status == Status::Fail)
                            .map(|c| match c.id {
                                CheckId::Compare(metric) => metric,
                                other => other.to_string(),
                            })
                            .collect();
                        r.baseline_failed = Some(failed);
                    }
                    None if delay == 0.0 => baseline = Some(run.report.clone()),
                    None => {}
                }
                on_rung(i, ladder.len(), &r, Some(&run.report));
                r
            }
            Err(e) => {
                let r = Rung {
                    delay_us: delay,
                    verdict: "error".into(),
                    failed: Vec::new(),
                    warned: Vec::new(),
                    host_p50_us: None,
                    gpu_us_per_replay: None,
                    occupancy: None,
                    wall_s: started.elapsed().as_secs_f64(),
                    error: Some(format!("{e:#}")),
                    baseline_failed: None,
                };
                on_rung(i, ladder.len(), &r, None);
                r
            }
        };
        report.rungs.push(r);
    }
    summarize(&mut report);
    report
}

/// Fills the false-alarm count, the smallest delay detected and whether detection is monotone.
pub fn summarize(report: &mut SelftestReport) {
    report.false_alarms =
        report.rungs.iter().filter(|r| r.delay_us == 0.0 && r.verdict == "fail").count() as u32;
    let injected: Vec<&Rung> = report.rungs.iter().filter(|r| r.delay_us > 0.0).collect();
    report.smallest_detected_us =
        injected.iter().filter(|r| r.verdict == "fail").map(|r| r.delay_us).min_by(f64::total_cmp);
    report.monotone = report
        .smallest_detected_us
        .map(|d| injected.iter().filter(|r| r.delay_us >= d).all(|r| r.verdict == "fail"));
    report.verdict = if report.reason.is_some() || report.rungs.is_empty() {
        "skip"
    } else if report.false_alarms > 0 {
        "fail"
    } else {
        "pass"
    }
    .to_string();
    let regressed = |r: &Rung| r.baseline_failed.as_ref().is_some_and(|f| !f.is_empty());
    report.baseline_false_alarms =
        report.rungs.iter().filter(|r| r.delay_us == 0.0 && regressed(r)).count() as u32;
    report.baseline_smallest_detected_us =
        injected.iter().filter(|r| regressed(r)).map(|r| r.delay_us).min_by(f64::total_cmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(delay: f64, verdict: &str) -> Rung {
        Rung {
            delay_us: delay,
            verdict: verdict.into(),
            failed: Vec::new(),
            warned: Vec::new(),
            host_p50_us: None,
            gpu_us_per_replay: None,
            occupancy: None,
            wall_s: 0.0,
            error: None,
            baseline_failed: None,
        }
    }

    #[test]
    fn summary_counts_false_alarms_and_the_smallest_detection() {
        let mut r = SelftestReport {
            schema: SCHEMA.into(),
            preset: "tiny".into(),
            tp: 1,
            machine: None,
            rungs: vec![
                rung(0.0, "warn"),
                rung(0.0, "fail"),
                rung(5.0, "pass"),
                rung(10.0, "warn"),
                rung(25.0, "fail"),
                rung(50.0, "fail"),
            ],
            healthy_runs: 2,
            false_alarms: 0,
            smallest_detected_us: None,
            monotone: None,
            verdict: String::new(),
            baseline_false_alarms: 0,
            baseline_smallest_detected_us: None,
            reason: None,
        };
        summarize(&mut r);
        assert_eq!(r.false_alarms, 1);
        assert_eq!(r.verdict, "fail", "a false alarm at zero delay");
        assert_eq!(r.smallest_detected_us, Some(25.0));
        assert_eq!(r.monotone, Some(true));
        r.rungs.push(rung(100.0, "pass"));
        summarize(&mut r);
        assert_eq!(r.monotone, Some(false));
        // No rung (skipped here): no verdict but skip, nothing said about monotony.
        r.rungs.clear();
        r.reason = Some("no GPU".into());
        summarize(&mut r);
        assert_eq!((r.verdict.as_str(), r.monotone, r.smallest_detected_us), ("skip", None, None));
        let json = serde_json::to_value(&r).unwrap();
        assert!(json.get("monotone").is_none() && json["verdict"] == "skip", "{json}");
    }
}
