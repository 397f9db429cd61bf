//! Comparing two `check` results, a baseline and a current run (`launchguard compare`,
//! `check --baseline`): what identifies each run, the samples each measured (per rank with
//! several ranks), measured by [`launchguard_analysis::compare`] and judged by
//! [`launchguard_judge::compare`].

use std::path::Path;

use launchguard_analysis::compare::{self as measure, Bootstrap, RunSamples};
use launchguard_judge::compare::{self as judge, Comparison, Difference, RunInfo};
use launchguard_judge::config::CompareConfig;

use crate::model::CheckReport;

/// A check result is tens of KB (its raw samples included; thousands of replays on several
/// ranks stay under a few MB); a larger file is not one (`/dev/zero`, a trace given by mistake)
/// and is refused before it is read.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// Reads a `launchguard.check/1` result that holds measurements. The file is only read, and
/// only a regular file of at most [`MAX_RESULT_BYTES`] (a FIFO would block, a device read
/// without end).
pub fn read_result(path: &Path) -> anyhow::Result<CheckReport> {
    let name = path.display();
    let bytes = launchguard_files::read_capped(path, MAX_RESULT_BYTES).map_err(|e| match e {
        launchguard_files::InputError::TooLarge { .. } => anyhow::anyhow!("{name}: {e} for a check result"),
        e => anyhow::anyhow!("{name}: {e}"),
    })?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{name}: not JSON ({e})"))?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("none");
    anyhow::ensure!(
        schema == crate::model::SCHEMA,
        "{name}: schema '{schema}', expected a {} result (from `launchguard check --format json` or --save-baseline)",
        crate::model::SCHEMA
    );
    // Through a Value: with serde_json's arbitrary_precision, the flattened occupancy figures of
    // the analysis cannot be read straight from the text.
    let report: CheckReport = serde_json::from_value(value)
        .map_err(|e| anyhow::anyhow!("{name}: not a valid {} result ({e})", crate::model::SCHEMA))?;
    if report.phases.is_empty() {
        let why = report.reason.as_deref().unwrap_or("no phase was measured");
        anyhow::bail!("{name}: holds no measurements (verdict {}: {why})", report.verdict.as_str());
    }
    for run in samples(&report) {
        usable_samples(&run).map_err(|why| {
            let rank = run.rank.map_or(String::new(), |r| format!("rank {r}: "));
            anyhow::anyhow!("{name}: {rank}{why}")
        })?;
    }
    Ok(report)
}

/// Samples per phase a result may carry: the presets record 300, `--replays` more; past this a
/// file is not a check result but an attempt to make the comparison run for hours.
pub const MAX_SAMPLES: usize = 1_000_000;

/// Longest believable time, µs (1000 s for one replay).
const MAX_US: f64 = 1e9;

/// Whether a result's samples can be compared: finite times from 0 to [`MAX_US`], an occupancy
/// from 0 to 1, host samples in each measured phase, at most [`MAX_SAMPLES`] of each.
fn usable_samples(r: &RunSamples) -> Result<(), String> {
    let series = [
        ("host samples before", &r.host_before),
        ("host samples after", &r.host_after),
        ("launches", &r.launches),
    ];
    for (what, values) in series {
        if values.len() > MAX_SAMPLES {
            return Err(format!("{} {what}, more than the {MAX_SAMPLES} a result may hold", values.len()));
        }
        if let Some((i, v)) =
            values.iter().enumerate().find(|(_, v)| !(v.is_finite() && (0.0..=MAX_US).contains(*v)))
        {
            return Err(format!("{what}: sample {i} is {v} µs; a time must be from 0 to {MAX_US:e} µs"));
        }
    }
    if r.sync_over_gpu.len() > MAX_SAMPLES {
        return Err(format!(
            "{} step-synchronous steps, more than the {MAX_SAMPLES} a result may hold",
            r.sync_over_gpu.len()
        ));
    }
    if let Some((i, v)) =
        r.sync_over_gpu.iter().enumerate().find(|(_, v)| !(v.is_finite() && v.abs() <= MAX_US))
    {
        return Err(format!(
            "step-synchronous step {i} is {v} µs over the GPU time; a time must be within {MAX_US:e} µs"
        ));
    }
    for (what, values) in [("before", &r.host_before), ("after", &r.host_after)] {
        if values.is_empty() {
            return Err(format!("no host samples {what} the profiler session"));
        }
    }
    for (what, v) in
        [("GPU time per replay before", r.gpu_before), ("GPU time per replay after", r.gpu_after)]
    {
        if let Some(v) = v.filter(|v| !(v.is_finite() && (0.0..=MAX_US).contains(v))) {
            return Err(format!("{what} is {v} µs; a time must be from 0 to {MAX_US:e} µs"));
        }
    }
    if let Some(o) = r.occupancy.filter(|o| !(0.0..=1.0).contains(o)) {
        return Err(format!("occupancy is {o}; it must be from 0 to 1"));
    }
    Ok(())
}

/// Compares `current` with `baseline`: measured, then judged once. Incomparable runs (see
/// [`differences`]) are compared only when `force` is set.
pub fn compare(
    baseline: &CheckReport,
    current: &CheckReport,
    cfg: &CompareConfig,
    force: bool,
) -> Comparison {
    let bootstrap = Bootstrap { confidence: cfg.confidence, resamples: cfg.resamples, seed: cfg.seed };
    let figures = measure::metrics(&samples(baseline), &samples(current), bootstrap);
    judge::judge(run_info(baseline), run_info(current), differences(baseline, current), figures, cfg, force)
}

/// What each rank of a run measured: rank 0's (the only one) for one process, every rank's with
/// several.
pub fn samples(r: &CheckReport) -> Vec<RunSamples> {
    let host = |p: &std::collections::BTreeMap<String, launchguard_analysis::context::PhaseReport>,
                phase: &str| { p.get(phase).map(|p| p.host_us.clone()).unwrap_or_default() };
    let gpu = |p: &std::collections::BTreeMap<String, launchguard_analysis::context::PhaseReport>,
               phase: &str| { p.get(phase).and_then(|p| p.gpu_us_per_replay) };
    let sync_over_gpu = |p: &std::collections::BTreeMap<
        String,
        launchguard_analysis::context::PhaseReport,
    >| { p.get("before").map(|b| b.sync_over_gpu()).unwrap_or_default() };
    match &r.across {
        Some(across) => r
            .ranks
            .iter()
            .map(|rank| {
                let judged = across.ranks.iter().find(|k| k.rank == u64::from(rank.rank));
                RunSamples {
                    rank: Some(u64::from(rank.rank)),
                    host_before: host(&rank.phases, "before"),
                    host_after: host(&rank.phases, "after"),
                    gpu_before: gpu(&rank.phases, "before"),
                    gpu_after: gpu(&rank.phases, "after"),
                    occupancy: judged.map(|k| {
                        let f = k.common.as_ref().unwrap_or(&k.whole);
                        f.occupancy_excluding_wait.unwrap_or(f.occupancy)
                    }),
                    launches: judged
                        .map(|k| k.analysis.figures.replays.iter().map(|x| x.launch_us).collect())
                        .unwrap_or_default(),
                    sync_over_gpu: sync_over_gpu(&rank.phases),
                }
            })
            .collect(),
        None => vec![RunSamples {
            rank: None,
            host_before: host(&r.phases, "before"),
            host_after: host(&r.phases, "after"),
            gpu_before: gpu(&r.phases, "before"),
            gpu_after: gpu(&r.phases, "after"),
            occupancy: r.judged_occupancy(),
            launches: r
                .analysis
                .as_ref()
                .map(|a| a.figures.replays.iter().map(|x| x.launch_us).collect())
                .unwrap_or_default(),
            sync_over_gpu: sync_over_gpu(&r.phases),
        }],
    }
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "unknown".into())
}

/// What identifies a run's setup, field by field, in report order: schema, GPU, each workload
/// field, torch / CUDA / HIP / driver versions, TP degree, injected delay, launchguard and Python
/// versions. The judge decides which differences block ([`judge::differences`]).
pub fn facts(r: &CheckReport) -> Vec<(String, String)> {
    let mut out = vec![("schema".to_string(), r.schema.clone())];
    let inv = r.inventory.clone().unwrap_or_default();
    out.push(("gpu_name".into(), text(&inv.gpu_name)));
    if let Ok(serde_json::Value::Object(w)) = serde_json::to_value(&r.workload) {
        for (key, v) in w {
            let field = if key == "preset" { "preset".to_string() } else { format!("workload.{key}") };
            out.push((field, v.as_str().map_or_else(|| v.to_string(), str::to_string)));
        }
    }
    out.push(("torch".into(), text(&inv.torch)));
    out.push(("cuda".into(), text(&inv.cuda)));
    out.push(("hip".into(), text(&inv.hip)));
    out.push(("driver".into(), text(&inv.driver)));
    out.push(("tp".into(), r.tp.to_string()));
    out.push(("inject_delay_us".into(), r.inject_delay_us.to_string()));
    if r.inject_every != 1 {
        out.push(("inject_every".into(), r.inject_every.to_string()));
    }
    if let Some(ranks) = &r.inject_delay_ranks {
        out.push(("inject_delay_ranks".into(), format!("{ranks:?}")));
    }
    out.push(("launchguard_version".into(), r.launchguard_version.clone()));
    out.push(("python_version".into(), text(&inv.python_version)));
    out
}

/// What differs between two results' settings, and whether it blocks a comparison.
pub fn differences(baseline: &CheckReport, current: &CheckReport) -> Vec<Difference> {
    judge::differences(&facts(baseline), &facts(current))
}

fn run_info(r: &CheckReport) -> RunInfo {
    let inv = r.inventory.as_ref();
    RunInfo {
        path: None,
        verdict: r.verdict,
        reason: r.reason.clone(),
        preset: r.workload.preset.clone(),
        gpu_name: inv.and_then(|i| i.gpu_name.clone()),
        torch: inv.and_then(|i| i.torch.clone()),
        launchguard_version: r.launchguard_version.clone(),
        warnings: Vec::new(),
        culprit: r.across.as_ref().and_then(|a| a.across.culprit),
        waiting: r.across.as_ref().map(|a| a.across.waiting.clone()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use launchguard_judge::compare::{incompatibility, Metric, Outcome};
    use launchguard_judge::section::Section as _;
    use launchguard_judge::{Status, Verdict};

    /// A real `check --preset reference` result from an H200 (tests/data/compare/README.md).
    fn reference() -> CheckReport {
        // Through a Value, as read_result does: with serde_json's arbitrary_precision, a flattened
        // struct (analysis.devices[].figures) cannot take its numbers straight from the text.
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/compare/h200-reference.json")).unwrap();
        serde_json::from_value(v).unwrap()
    }

    fn shift_host(r: &mut CheckReport, phase: &str, by: f64) {
        for v in &mut r.phases.get_mut(phase).unwrap().host_us {
            *v += by;
        }
    }

    fn metric<'a>(c: &'a Comparison, id: &str) -> &'a Metric {
        c.metrics.iter().find(|m| m.figures.id == id).unwrap()
    }

    fn cfg() -> CompareConfig {
        CompareConfig::default()
    }

    #[test]
    fn a_run_against_itself_shows_no_shift() {
        let r = reference();
        let c = compare(&r, &r, &cfg(), false);
        assert!(c.comparable && !c.forced && c.differences.is_empty());
        assert_eq!(c.verdict, Verdict::Pass);
        assert_eq!(c.metrics.len(), 6);
        for m in &c.metrics {
            assert_eq!(m.figures.shift, Some(0.0), "{}", m.figures.id);
            assert_eq!(m.status, Status::Pass, "{}", m.figures.id);
        }
        let host = metric(&c, "host_before");
        // Identical samples: U = n1·n2/2 exactly, and p = 1.
        assert_eq!(host.figures.u, Some(300.0 * 300.0 / 2.0));
        assert_eq!(host.figures.p_value, Some(1.0));
        assert_eq!(host.outcome, Outcome::NotSignificant);
    }

    #[test]
    fn host_shift_fails_only_when_its_interval_clears_the_floor() {
        let base = reference();
        // Baseline median 5.5215 µs: the floor is max(5, 1.0 × 5.5215) = 5.5215 µs.
        let mut cur = base.clone();
        shift_host(&mut cur, "before", 2.0);
        let m = metric(&compare(&base, &cur, &cfg(), false), "host_before").clone();
        assert!(m.figures.p_value.unwrap() < 1e-3, "a uniform +2 µs is significant: {m:?}");
        assert_eq!((m.outcome, m.status), (Outcome::BelowFloor, Status::Pass), "{}", m.message);
        assert_eq!(m.limit, Some(5.5215));

        shift_host(&mut cur, "before", 8.0);
        let c = compare(&base, &cur, &cfg(), false);
        let m = metric(&c, "host_before");
        assert_eq!((m.outcome, m.status), (Outcome::Regression, Status::Fail), "{}", m.message);
        // Every sample moved by 10 µs, so the medians did (up to rounding).
        assert!((m.figures.shift.unwrap() - 10.0).abs() < 1e-9);
        assert!(
            m.figures.interval.unwrap().low > 5.5215 && m.figures.interval.unwrap().contains(10.0),
            "{:?}",
            m.figures.interval
        );
        assert_eq!(c.verdict, Verdict::Fail);

        // The other way round, a drop of 10 µs from a 15.5 µs baseline: never a failure, and not
        // an improvement past the floor either (the floor is the baseline median itself).
        let m = metric(&compare(&cur, &base, &cfg(), false), "host_before").clone();
        assert_eq!((m.outcome, m.status), (Outcome::BelowFloor, Status::Pass), "{}", m.message);
    }

    /// The reference result with 300 step-synchronous steps `over` µs over its GPU time per
    /// replay (plus a repeating 0–1.8 µs), that GPU time moved by `gpu_shift`.
    fn with_steps(over: f64, gpu_shift: f64) -> CheckReport {
        let mut r = reference();
        let before = r.phases.get_mut("before").unwrap();
        let g = before.gpu_us_per_replay.unwrap() + gpu_shift;
        before.gpu_us_per_replay = Some(g);
        let steps = (0..300).map(|i| g + over + f64::from(i % 7) * 0.3).collect();
        *before = before.clone().with_sync(steps, Vec::new());
        r
    }

    #[test]
    fn a_step_synchronous_regression_is_judged_over_each_processs_gpu_time() {
        // Healthy: 17.9 µs over (the issue's H200 figure); the median over is 17.9 + 0.9 = 18.8
        // (residues 0–3 of i mod 7 hold 43 steps each, so steps 150 and 151 have residue 3): the
        // floor is max(5, 1.0 × 18.8) = 18.8 µs.
        let base = with_steps(17.9, 0.0);
        let verdict = |cur: &CheckReport| {
            let c = compare(&base, cur, &cfg(), false);
            let m = metric(&c, "sync_step").clone();
            (m.status, m.limit, m.figures.shift)
        };
        // +25 µs per launch: 25 µs more per step clears the floor.
        let (status, limit, shift) = verdict(&with_steps(42.9, 0.0));
        assert_eq!(status, Status::Fail);
        assert!((limit.unwrap() - 18.8).abs() < 1e-9 && (shift.unwrap() - 25.0).abs() < 1e-9);
        // +10 µs: significant, under the floor.
        assert_eq!(verdict(&with_steps(27.9, 0.0)).0, Status::Pass);
        // Another process whose GEMMs take 30 µs more per replay, steps 30 µs longer with it: the
        // host costs each step what it did.
        let (status, _, shift) = verdict(&with_steps(17.9, 30.0));
        assert_eq!(status, Status::Pass);
        assert!(shift.unwrap().abs() < 1e-9);
        // A baseline of an earlier workload (no steps) against one with steps: not measured there.
        let c = compare(&reference(), &with_steps(42.9, 0.0), &cfg(), false);
        assert_eq!(metric(&c, "sync_step").status, Status::Skip);
        // Neither has steps: no such metric at all.
        assert!(compare(&reference(), &reference(), &cfg(), false)
            .metrics
            .iter()
            .all(|m| m.figures.id != "sync_step"));
    }

    #[test]
    fn the_relative_floor_governs_larger_baselines() {
        let base = reference();
        // After the profiler session the median is 17.442 µs: the floor is 1.0 × 17.442 µs.
        let mut cur = base.clone();
        shift_host(&mut cur, "after", 15.0);
        let m = metric(&compare(&base, &cur, &cfg(), false), "host_after").clone();
        assert!((m.limit.unwrap() - 17.442).abs() < 1e-9);
        assert_eq!(m.outcome, Outcome::BelowFloor, "{}", m.message);
        shift_host(&mut cur, "after", 5.0);
        let m = metric(&compare(&base, &cur, &cfg(), false), "host_after").clone();
        assert_eq!(m.outcome, Outcome::Regression, "{}", m.message);
    }

    #[test]
    fn single_figures_are_judged_against_their_limits() {
        let base = reference();
        let gpu = base.phases["before"].gpu_us_per_replay.unwrap();
        let occ = base.analysis.as_ref().unwrap().figures.devices[0].figures.occupancy;
        let with = |gpu_factor: f64, occ_delta: f64| {
            let mut cur = base.clone();
            cur.phases.get_mut("before").unwrap().gpu_us_per_replay = Some(gpu * gpu_factor);
            cur.analysis.as_mut().unwrap().figures.devices[0].figures.occupancy = occ + occ_delta;
            let c = compare(&base, &cur, &cfg(), false);
            (metric(&c, "gpu_before").outcome, metric(&c, "occupancy").outcome)
        };
        // The limits: GPU time up by 20%, occupancy down by 15 points.
        assert_eq!(with(1.19, -0.14), (Outcome::WithinLimit, Outcome::WithinLimit));
        assert_eq!(with(1.21, -0.16), (Outcome::Regression, Outcome::Regression));
        assert_eq!(with(0.75, 0.16), (Outcome::Improvement, Outcome::Improvement));
    }

    #[test]
    fn a_missing_phase_is_not_measured_not_a_pass() {
        let base = reference();
        let mut cur = base.clone();
        cur.phases.remove("after");
        let c = compare(&base, &cur, &cfg(), false);
        for id in ["host_after", "gpu_after"] {
            let m = metric(&c, id);
            assert_eq!((m.status, m.outcome), (Status::Skip, Outcome::NotMeasured));
            assert!(m.message.ends_with("not measured in the current run"), "{}", m.message);
        }
        assert_eq!(c.verdict, Verdict::Pass);
    }

    #[test]
    fn incomparable_runs_are_named_and_compared_only_when_forced() {
        let base = reference();
        let mut cur = base.clone();
        cur.inventory.as_mut().unwrap().gpu_name = Some("NVIDIA H100 80GB HBM3".into());
        cur.workload.device = 3;
        cur.launchguard_version = "0.2.0".into();
        let diffs = differences(&base, &cur);
        let blocking: Vec<&str> = diffs.iter().filter(|d| d.blocking).map(|d| d.field.as_str()).collect();
        let noted: Vec<&str> = diffs.iter().filter(|d| !d.blocking).map(|d| d.field.as_str()).collect();
        assert_eq!(blocking, ["gpu_name"]);
        assert_eq!(noted, ["workload.device", "launchguard_version"]);
        assert_eq!(
            incompatibility(&diffs).unwrap(),
            "gpu_name NVIDIA H200 (baseline) vs NVIDIA H100 80GB HBM3 (current)"
        );

        let c = compare(&base, &cur, &cfg(), false);
        assert!(!c.comparable && c.metrics.is_empty());
        let checks = c.checks();
        assert_eq!(checks.len(), 1);
        assert_eq!(
            (checks[0].id.to_string(), checks[0].status),
            ("compare.baseline".to_string(), Status::Warn)
        );
        assert!(checks[0].message.contains("not compared") && checks[0].message.contains("H100"));
        // Launch costs on another GPU model are no regression of this stack: unusable, exit 2.
        assert_eq!(c.verdict, Verdict::Inconclusive);

        let c = compare(&base, &cur, &cfg(), true);
        assert!(c.comparable && c.forced);
        assert_eq!(c.metrics.len(), 6);
        assert_eq!(c.checks()[0].status, Status::Warn);
        assert!(c.checks()[0].message.starts_with("compared although the runs differ: gpu_name"));
    }

    #[test]
    fn workload_and_version_differences_block() {
        let base = reference();
        let mut cur = base.clone();
        cur.workload.layers = 2;
        cur.inject_delay_us = 10.0;
        cur.inventory.as_mut().unwrap().torch = Some("2.12.0+cu130".into());
        let fields: Vec<String> =
            differences(&base, &cur).into_iter().filter(|d| d.blocking).map(|d| d.field).collect();
        assert_eq!(fields, ["workload.layers", "torch"]);
        let noted: Vec<String> =
            differences(&base, &cur).into_iter().filter(|d| !d.blocking).map(|d| d.field).collect();
        assert!(noted.contains(&"inject_delay_us".to_string()), "{noted:?}");
    }

    #[test]
    fn checks_carry_shift_limit_and_interval() {
        let base = reference();
        let mut cur = base.clone();
        shift_host(&mut cur, "before", 10.0);
        let c = compare(&base, &cur, &cfg(), false);
        let checks = c.checks();
        let ids: Vec<String> = checks.iter().map(|c| c.id.to_string()).collect();
        assert_eq!(
            ids,
            [
                "compare.baseline",
                "compare.host_before",
                "compare.host_after",
                "compare.gpu_before",
                "compare.gpu_after",
                "compare.occupancy",
                "compare.graph_launch"
            ]
        );
        let host = &checks[1];
        assert_eq!(host.status, Status::Fail);
        assert!((host.value.as_f64().unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(host.limit.as_f64(), Some(5.5215));
        assert!(host.message.contains("95% CI +"), "{}", host.message);
        assert!(host.hint.is_some());
        assert_eq!(checks[5].limit.as_f64(), Some(-0.15));
    }

    #[test]
    fn json_round_trip() {
        let base = reference();
        let mut cur = base.clone();
        shift_host(&mut cur, "before", 10.0);
        let c = compare(&base, &cur, &cfg(), false);
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"schema\":\"launchguard.compare/1\""));
        // Compared field by field: serde_json's default float parsing may differ from the
        // printed value in the last bit. Through a Value, as read_result reads: with
        // arbitrary_precision a flattened struct cannot take its numbers straight from the text.
        let back: Comparison = serde_json::from_value(serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!((back.verdict, &back.differences, &back.limits), (c.verdict, &c.differences, &c.limits));
        let summary = |c: &Comparison| -> Vec<(String, Status, Outcome)> {
            c.metrics.iter().map(|m| (m.figures.id.clone(), m.status, m.outcome)).collect()
        };
        assert_eq!(summary(&back), summary(&c));
    }

    #[test]
    fn config_limits_are_validated() {
        assert!(cfg().check_rules().is_ok());
        let bad = |f: fn(&mut CompareConfig)| {
            let mut c = cfg();
            f(&mut c);
            c.check_rules().unwrap_err().to_string()
        };
        assert!(bad(|c| c.alpha = 0.0).starts_with("compare.alpha"));
        assert!(bad(|c| c.confidence = 1.0).starts_with("compare.confidence"));
        assert!(bad(|c| c.min_host_shift_us = -1.0).starts_with("compare.min_host_shift_us"));
        assert!(bad(|c| c.resamples = 10).starts_with("compare.resamples"));
    }

    #[test]
    fn read_result_names_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let err = |p: &Path| read_result(p).unwrap_err().to_string();
        assert!(err(&write("a.json", "{")).contains("a.json: not JSON"));
        assert!(err(&write("b.json", r#"{"schema":"launchguard.analysis/1"}"#))
            .contains("schema 'launchguard.analysis/1', expected a launchguard.check/1 result"));
        assert!(err(&write("c.json", r#"{"schema":"launchguard.check/1"}"#)).contains("not a valid"));
        let mut skipped = reference();
        skipped.phases.clear();
        skipped.reason = Some("no GPU".into());
        let p = write("d.json", &serde_json::to_string(&skipped).unwrap());
        assert!(err(&p).ends_with("holds no measurements (verdict warn: no GPU)"), "{}", err(&p));
        assert!(err(&dir.path().join("missing.json")).contains("missing.json"));
        assert_eq!(err(Path::new("/dev/zero")), "/dev/zero: is a device, not a regular file");
        let good = write("e.json", include_str!("../../../tests/data/compare/h200-reference.json"));
        assert_eq!(read_result(&good).unwrap(), reference());
    }
}
