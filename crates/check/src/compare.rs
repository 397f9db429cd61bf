//! Comparing two `check` results, a baseline and a current run: `launchguard.compare/1`.
//!
//! Metrics and how each is judged (only regressions fail; improvements are reported):
//! - host cost per replay with the profiler off, before and after the profiler session: the raw
//!   per-replay samples (300 each in the presets), Mann–Whitney U and a bootstrap interval of the
//!   difference of medians; fails when p < alpha AND the interval's lower bound clears the floor
//!   max(`min_host_shift_us`, `min_relative_shift` × baseline median);
//! - graph-launch duration: the per-replay `launch_us` of the profiled trace (`analysis.replays`),
//!   judged the same way with `min_launch_shift_us`. Medians, not the mean the trace check
//!   reports: a few slow launches move the mean by 20% between healthy runs (41 vs 50 µs);
//! - GPU time per replay, before and after: one figure per run (device events over back-to-back
//!   replays), so no interval; fails when up by more than `max_gpu_increase`;
//! - occupancy of the profiled window, lowest device: one figure per run; fails when down by more
//!   than `max_occupancy_drop`.
//!
//! Results of different GPUs, workloads, software versions, TP degrees or injected delays are
//! incomparable: [`compare`] compares them only when forced, and says what differs either way.
//! With several ranks, rank 0's figures are compared.

use std::fmt::Write as _;
use std::path::Path;

use launchguard_analysis::config::CompareConfig;
use launchguard_analysis::{Check, Status, Verdict};
use serde::{Deserialize, Serialize};

use crate::model::CheckReport;
use crate::stats::{self, Interval};

/// Schema id of [`Comparison`].
pub const SCHEMA: &str = "launchguard.compare/1";

/// The comparison of a current result with a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// launchguard's version.
    pub launchguard_version: String,
    /// Worst status of [`Comparison::checks`]: `fail` for a regression past the limits.
    pub verdict: Verdict,
    /// The baseline run.
    pub baseline: RunInfo,
    /// The current run.
    pub current: RunInfo,
    /// Whether the metrics were compared: the runs are alike, or the comparison was forced.
    pub comparable: bool,
    /// Whether the comparison was forced past blocking differences.
    pub forced: bool,
    /// What differs between the runs' settings (blocking or only noted).
    pub differences: Vec<Difference>,
    /// The limits in force.
    pub limits: CompareConfig,
    /// One entry per metric (empty when not comparable).
    pub metrics: Vec<Metric>,
}

/// What identifies one of the two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The file it was read from, when read from one.
    pub path: Option<String>,
    /// Its own verdict.
    pub verdict: Verdict,
    /// Workload preset.
    pub preset: String,
    /// GPU name.
    pub gpu_name: Option<String>,
    /// `torch.__version__`.
    pub torch: Option<String>,
    /// launchguard version that produced it.
    pub launchguard_version: String,
}

/// A setting that differs between the two runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// What differs (`gpu_name`, `workload.layers`, `torch`, …).
    pub field: String,
    /// The baseline's value.
    pub baseline: String,
    /// The current run's value.
    pub current: String,
    /// Whether it makes the runs incomparable (else it is only noted).
    pub blocking: bool,
}

/// Which direction of a metric is a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Worse {
    /// A cost: higher is worse.
    Higher,
    /// A share of busy time: lower is worse.
    Lower,
}

/// How a metric was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Per-replay samples: Mann–Whitney U and a bootstrap interval of the difference of medians.
    MannWhitneyBootstrap,
    /// One figure per run, against a limit.
    SingleValue,
}

/// What the comparison of a metric found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Worse past the limit (for samples: significant, and the interval clears the floor).
    Regression,
    /// Better past the limit.
    Improvement,
    /// Samples: the test finds no significant shift.
    NotSignificant,
    /// Samples: significant, but the interval does not clear the floor (noise between processes).
    BelowFloor,
    /// Single value: the change is within the limit.
    WithinLimit,
    /// Missing from one of the runs.
    NotMeasured,
}

/// One run's side of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Samples (1 for a single figure, 0 when not measured).
    pub n: usize,
    /// Median of the samples, or the single figure.
    pub median: Option<f64>,
}

/// The comparison of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Stable identifier (`host_before`, `host_after`, `gpu_before`, `gpu_after`, `occupancy`,
    /// `graph_launch`); the check is `compare.<id>`.
    pub id: String,
    /// What it is, in words.
    pub label: String,
    /// Unit of the values (`µs`, or empty for a fraction).
    pub unit: String,
    /// Which direction is a regression.
    pub worse: Worse,
    /// How it was compared.
    pub method: Method,
    /// The baseline.
    pub baseline: Side,
    /// The current run.
    pub current: Side,
    /// current − baseline (of the medians, for samples).
    pub shift: Option<f64>,
    /// shift / baseline.
    pub relative_shift: Option<f64>,
    /// Bootstrap interval of the shift (samples only).
    pub interval: Option<Interval>,
    /// Two-sided Mann–Whitney p-value (samples only).
    pub p_value: Option<f64>,
    /// Mann–Whitney U of the baseline sample (samples only).
    pub u: Option<f64>,
    /// The signed limit a regression must pass: +floor for costs, −drop for occupancy.
    pub limit: Option<f64>,
    /// `fail` for a regression, `skip` when not measured, else `pass`.
    pub status: Status,
    /// What was found.
    pub outcome: Outcome,
    /// One line: the figures, the interval and the finding.
    pub message: String,
}

/// Reads a `launchguard.check/1` result that holds measurements. The file is only read.
pub fn read_result(path: &Path) -> anyhow::Result<CheckReport> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
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
    Ok(report)
}

/// Checks a configuration's `[compare]` limits.
pub fn validate_config(c: &CompareConfig) -> anyhow::Result<()> {
    let open_unit = |name: &str, v: f64| {
        anyhow::ensure!(v > 0.0 && v < 1.0, "compare.{name} must be between 0 and 1 (exclusive), got {v}");
        Ok(())
    };
    open_unit("alpha", c.alpha)?;
    open_unit("confidence", c.confidence)?;
    for (name, v) in [
        ("min_host_shift_us", c.min_host_shift_us),
        ("min_relative_shift", c.min_relative_shift),
        ("min_launch_shift_us", c.min_launch_shift_us),
        ("max_gpu_increase", c.max_gpu_increase),
        ("max_occupancy_drop", c.max_occupancy_drop),
    ] {
        anyhow::ensure!(v.is_finite() && v >= 0.0, "compare.{name} must be a non-negative number, got {v}");
    }
    anyhow::ensure!(c.resamples >= 100, "compare.resamples must be at least 100, got {}", c.resamples);
    Ok(())
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "unknown".into())
}

/// What differs between two results' settings. Blocking: GPU, workload shape, torch / CUDA / HIP
/// / driver versions, TP degree, injected delay, schema. Noted only: launchguard and Python
/// versions, GPU index.
pub fn differences(baseline: &CheckReport, current: &CheckReport) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut add = |field: &str, b: String, c: String, blocking: bool| {
        if b != c {
            out.push(Difference { field: field.into(), baseline: b, current: c, blocking });
        }
    };
    add("schema", baseline.schema.clone(), current.schema.clone(), true);
    let (bi, ci) =
        (baseline.inventory.clone().unwrap_or_default(), current.inventory.clone().unwrap_or_default());
    add("gpu_name", text(&bi.gpu_name), text(&ci.gpu_name), true);
    // The workload, field by field, so the message names what changed.
    let (bw, cw) = (serde_json::to_value(&baseline.workload), serde_json::to_value(&current.workload));
    if let (Ok(serde_json::Value::Object(bw)), Ok(serde_json::Value::Object(cw))) = (bw, cw) {
        for (key, bv) in &bw {
            let cv = cw.get(key).cloned().unwrap_or(serde_json::Value::Null);
            let field = if key == "preset" { "preset".to_string() } else { format!("workload.{key}") };
            let show = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
            // Another GPU of the same model measures the same thing.
            add(&field, show(bv), show(&cv), key != "device");
        }
    }
    add("torch", text(&bi.torch), text(&ci.torch), true);
    add("cuda", text(&bi.cuda), text(&ci.cuda), true);
    add("hip", text(&bi.hip), text(&ci.hip), true);
    add("driver", text(&bi.driver), text(&ci.driver), true);
    add("tp", baseline.tp.to_string(), current.tp.to_string(), true);
    // Noted, not blocking: an injected delay is what a comparison of the guard itself must catch.
    add("inject_delay_us", baseline.inject_delay_us.to_string(), current.inject_delay_us.to_string(), false);
    add(
        "launchguard_version",
        baseline.launchguard_version.clone(),
        current.launchguard_version.clone(),
        false,
    );
    add("python_version", text(&bi.python_version), text(&ci.python_version), false);
    out
}

/// One line naming the blocking differences, or `None` when the runs are comparable.
pub fn incompatibility(diffs: &[Difference]) -> Option<String> {
    let blocking: Vec<String> = diffs
        .iter()
        .filter(|d| d.blocking)
        .map(|d| format!("{} {} (baseline) vs {} (current)", d.field, d.baseline, d.current))
        .collect();
    (!blocking.is_empty()).then(|| blocking.join("; "))
}

fn run_info(r: &CheckReport) -> RunInfo {
    let inv = r.inventory.as_ref();
    RunInfo {
        path: None,
        verdict: r.verdict,
        preset: r.workload.preset.clone(),
        gpu_name: inv.and_then(|i| i.gpu_name.clone()),
        torch: inv.and_then(|i| i.torch.clone()),
        launchguard_version: r.launchguard_version.clone(),
    }
}

/// Compares `current` with `baseline`. Incomparable runs (see [`differences`]) are compared only
/// when `force` is set; otherwise the result has no metrics and `comparable` is false.
pub fn compare(
    baseline: &CheckReport,
    current: &CheckReport,
    cfg: &CompareConfig,
    force: bool,
) -> Comparison {
    let diffs = differences(baseline, current);
    let comparable = force || incompatibility(&diffs).is_none();
    let mut c = Comparison {
        schema: SCHEMA.to_string(),
        launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
        verdict: Verdict::Skip,
        baseline: run_info(baseline),
        current: run_info(current),
        comparable,
        forced: force && incompatibility(&diffs).is_some(),
        differences: diffs,
        limits: cfg.clone(),
        metrics: if comparable { metrics(baseline, current, cfg) } else { Vec::new() },
    };
    c.verdict = Verdict::of(&c.checks());
    c
}

fn metrics(b: &CheckReport, c: &CheckReport, cfg: &CompareConfig) -> Vec<Metric> {
    let host =
        |r: &CheckReport, phase: &str| r.phases.get(phase).map(|p| p.host_us.clone()).unwrap_or_default();
    let gpu = |r: &CheckReport, phase: &str| r.phases.get(phase).and_then(|p| p.gpu_us_per_replay);
    let launches = |r: &CheckReport| -> Vec<f64> {
        r.analysis.as_ref().map(|a| a.replays.iter().map(|x| x.launch_us).collect()).unwrap_or_default()
    };
    let occupancy = |r: &CheckReport| r.judged_occupancy();
    vec![
        samples(
            "host_before",
            "host cost per replay, profiler never started",
            &host(b, "before"),
            &host(c, "before"),
            cfg.min_host_shift_us,
            cfg,
        ),
        samples(
            "host_after",
            "host cost per replay, after the profiler session",
            &host(b, "after"),
            &host(c, "after"),
            cfg.min_host_shift_us,
            cfg,
        ),
        single(
            "gpu_before",
            "GPU time per replay, before the profiler session",
            "µs",
            gpu(b, "before"),
            gpu(c, "before"),
            cfg,
        ),
        single(
            "gpu_after",
            "GPU time per replay, after the profiler session",
            "µs",
            gpu(b, "after"),
            gpu(c, "after"),
            cfg,
        ),
        single("occupancy", "occupancy of the profiled replays", "", occupancy(b), occupancy(c), cfg),
        samples(
            "graph_launch",
            "graph-launch duration, profiled replays",
            &launches(b),
            &launches(c),
            cfg.min_launch_shift_us,
            cfg,
        ),
    ]
}

/// A number with its sign, to `digits` decimals.
fn signed(v: f64, digits: usize) -> String {
    format!("{}{:.*}", if v >= 0.0 { "+" } else { "−" }, digits, v.abs())
}

/// A p-value in a line of text.
pub fn format_p(p: f64) -> String {
    if p < 1e-300 {
        "< 1e-300".into()
    } else if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn not_measured(id: &str, label: &str, unit: &str, worse: Worse, method: Method, b: Side, c: Side) -> Metric {
    let which = if b.n == 0 && c.n == 0 {
        "either run"
    } else if b.n == 0 {
        "the baseline"
    } else {
        "the current run"
    };
    Metric {
        id: id.into(),
        label: label.into(),
        unit: unit.into(),
        worse,
        method,
        baseline: b,
        current: c,
        shift: None,
        relative_shift: None,
        interval: None,
        p_value: None,
        u: None,
        limit: None,
        status: Status::Skip,
        outcome: Outcome::NotMeasured,
        message: format!("{label}: not measured in {which}"),
    }
}

/// Per-replay samples (costs: higher is worse).
fn samples(id: &str, label: &str, base: &[f64], cur: &[f64], abs_floor: f64, cfg: &CompareConfig) -> Metric {
    let (bs, cs) = (
        Side { n: base.len(), median: stats::median(base) },
        Side { n: cur.len(), median: stats::median(cur) },
    );
    let method = Method::MannWhitneyBootstrap;
    let (Some(mb), Some(mc), Some(mw), Some(ci)) = (
        bs.median,
        cs.median,
        stats::mann_whitney_u(base, cur),
        stats::bootstrap_median_shift(base, cur, cfg.resamples, cfg.confidence, cfg.seed),
    ) else {
        return not_measured(id, label, "µs", Worse::Higher, method, bs, cs);
    };
    let shift = mc - mb;
    let floor = abs_floor.max(cfg.min_relative_shift * mb.abs());
    let significant = mw.p_value < cfg.alpha;
    let outcome = if !significant {
        Outcome::NotSignificant
    } else if ci.low > floor {
        Outcome::Regression
    } else if ci.high < -floor {
        Outcome::Improvement
    } else {
        Outcome::BelowFloor
    };
    let finding = match outcome {
        Outcome::Regression => format!("a regression: the interval clears the {floor:.1} µs floor"),
        Outcome::Improvement => format!("an improvement: the interval clears the {floor:.1} µs floor"),
        Outcome::NotSignificant => format!("no significant shift (alpha {})", cfg.alpha),
        _ => format!("significant, but the interval does not clear the {floor:.1} µs floor"),
    };
    let message = format!(
        "{label}: median {mb:.1} → {mc:.1} µs, {} µs ({:.0}% CI {} to {}, p {}, n {}/{}): {finding}",
        signed(shift, 1),
        100.0 * ci.confidence,
        signed(ci.low, 1),
        signed(ci.high, 1),
        format_p(mw.p_value),
        base.len(),
        cur.len(),
    );
    Metric {
        id: id.into(),
        label: label.into(),
        unit: "µs".into(),
        worse: Worse::Higher,
        method,
        baseline: bs,
        current: cs,
        shift: Some(shift),
        relative_shift: (mb != 0.0).then(|| shift / mb),
        interval: Some(ci),
        p_value: Some(mw.p_value),
        u: Some(mw.u),
        limit: Some(floor),
        status: if outcome == Outcome::Regression { Status::Fail } else { Status::Pass },
        outcome,
        message,
    }
}

/// One figure per run: GPU time per replay (µs, higher is worse, relative limit) or occupancy
/// (fraction, lower is worse, absolute limit).
fn single(id: &str, label: &str, unit: &str, b: Option<f64>, c: Option<f64>, cfg: &CompareConfig) -> Metric {
    let side = |v: Option<f64>| Side { n: usize::from(v.is_some()), median: v };
    let worse = if unit.is_empty() { Worse::Lower } else { Worse::Higher };
    let (Some(bv), Some(cv)) = (b, c) else {
        return not_measured(id, label, unit, worse, Method::SingleValue, side(b), side(c));
    };
    let shift = cv - bv;
    let (limit, regression, improvement) = match worse {
        Worse::Higher => {
            let l = cfg.max_gpu_increase * bv.abs();
            (l, shift > l, shift < -l)
        }
        Worse::Lower => {
            let l = -cfg.max_occupancy_drop;
            (l, shift < l, shift > -l)
        }
    };
    let outcome = if regression {
        Outcome::Regression
    } else if improvement {
        Outcome::Improvement
    } else {
        Outcome::WithinLimit
    };
    let finding = match outcome {
        Outcome::Regression => "a regression past the limit",
        Outcome::Improvement => "an improvement past the limit",
        _ => "within the limit",
    };
    let message = match worse {
        Worse::Higher => format!(
            "{label}: {bv:.1} → {cv:.1} µs, {} µs ({}%; one figure per run, no interval; fails above {}%): {finding}",
            signed(shift, 1),
            signed(100.0 * shift / bv, 1),
            100.0 * cfg.max_gpu_increase
        ),
        Worse::Lower => format!(
            "{label}: {:.1}% → {:.1}%, {} points (one figure per run, no interval; fails below {} points): {finding}",
            100.0 * bv,
            100.0 * cv,
            signed(100.0 * shift, 1),
            signed(100.0 * limit, 1)
        ),
    };
    Metric {
        id: id.into(),
        label: label.into(),
        unit: unit.into(),
        worse,
        method: Method::SingleValue,
        baseline: side(b),
        current: side(c),
        shift: Some(shift),
        relative_shift: (bv != 0.0).then(|| shift / bv),
        interval: None,
        p_value: None,
        u: None,
        limit: Some(limit),
        status: if regression { Status::Fail } else { Status::Pass },
        outcome,
        message,
    }
}

impl Comparison {
    /// One line naming the blocking differences between the runs, if any.
    pub fn incompatibility(&self) -> Option<String> {
        incompatibility(&self.differences)
    }

    /// The comparison as checks, for `check --baseline` to append to its own: `compare.baseline`
    /// (whether the runs are alike: a warning when they differ), then `compare.<metric id>` for
    /// each metric, with value = the shift and limit = the signed limit.
    pub fn checks(&self) -> Vec<Check> {
        let mut out = Vec::new();
        let noted: Vec<String> = self
            .differences
            .iter()
            .filter(|d| !d.blocking)
            .map(|d| format!("{} {} vs {}", d.field, d.baseline, d.current))
            .collect();
        let noted = if noted.is_empty() { String::new() } else { format!(" (noted: {})", noted.join(", ")) };
        out.push(match self.incompatibility() {
            Some(why) if self.comparable => Check::new(
                "compare.baseline",
                Status::Warn,
                None,
                None,
                format!("compared although the runs differ: {why}{noted}"),
            )
            .with_hint(
                "shifts may come from the difference, not from a regression: record a baseline on this setup",
            ),
            Some(why) => Check::new(
                "compare.baseline",
                Status::Warn,
                None,
                None,
                format!("baseline not compared, the runs differ: {why}{noted}"),
            )
            .with_hint(
                "record a baseline on this setup (check --save-baseline), or compare anyway with --force",
            ),
            None => Check::new(
                "compare.baseline",
                Status::Pass,
                None,
                None,
                format!(
                    "baseline comparable: same GPU ({}), workload ({}), software versions{noted}",
                    self.baseline.gpu_name.as_deref().unwrap_or("unknown"),
                    self.baseline.preset
                ),
            ),
        });
        for m in &self.metrics {
            let c = Check::new(&format!("compare.{}", m.id), m.status, m.shift, m.limit, m.message.clone());
            out.push(if m.status == Status::Fail {
                c.with_hint(
                    "compare the inventories of the two results: a new interception layer, library or driver \
                     setting adds to every launch",
                )
            } else {
                c
            });
        }
        out
    }
}

/// The comparison as a terminal table: metric, baseline and current medians, shift, interval,
/// p-value, status.
pub fn render_terminal(c: &Comparison) -> String {
    let mut s = String::new();
    let run = |label: &str, r: &RunInfo| {
        format!(
            "{label:<9}{}  {}, {}, torch {}, launchguard {}, verdict {}\n",
            r.path.as_deref().unwrap_or("-"),
            r.preset,
            r.gpu_name.as_deref().unwrap_or("unknown GPU"),
            r.torch.as_deref().unwrap_or("unknown"),
            r.launchguard_version,
            r.verdict.as_str()
        )
    };
    s.push_str(&run("baseline", &c.baseline));
    s.push_str(&run("current", &c.current));
    for d in &c.differences {
        let kind = if d.blocking { "differs" } else { "note" };
        let _ = writeln!(s, "  {kind}: {} {} (baseline) vs {} (current)", d.field, d.baseline, d.current);
    }
    if !c.comparable {
        let _ = writeln!(s, "\nnot compared: the runs differ (--force compares anyway)");
    } else {
        let header = ["metric", "baseline", "current", "shift", "CI", "p", "limit", "status"];
        let mut rows: Vec<[String; 8]> = Vec::new();
        for m in &c.metrics {
            let pct = m.unit.is_empty();
            let num = |v: Option<f64>| match v {
                Some(v) if pct => format!("{:.1}%", 100.0 * v),
                Some(v) => format!("{v:.1}"),
                None => "–".into(),
            };
            let sgn = |v: Option<f64>| match v {
                Some(v) if pct => format!("{} pt", signed(100.0 * v, 1)),
                Some(v) => signed(v, 1),
                None => "–".into(),
            };
            let status = match m.status {
                Status::Fail => "FAIL",
                s => s.as_str(),
            };
            rows.push([
                if pct { short_name(m) } else { format!("{} ({})", short_name(m), m.unit) },
                num(m.baseline.median),
                num(m.current.median),
                sgn(m.shift),
                m.interval.map_or("–".into(), |i| format!("[{}, {}]", signed(i.low, 1), signed(i.high, 1))),
                m.p_value.map_or("–".into(), format_p),
                sgn(m.limit),
                format!("{status} {}", outcome_word(m.outcome)),
            ]);
        }
        let ci_header = format!("{:.0}% CI", 100.0 * c.limits.confidence);
        let mut widths = header.map(|h| h.chars().count());
        widths[4] = widths[4].max(ci_header.chars().count());
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: [&str; 8]| {
            let mut l = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                let pad = w - cell.chars().count();
                // Text left-aligned, figures right-aligned.
                if i == 0 || i == 7 {
                    let _ = write!(l, "{cell}{}", " ".repeat(pad));
                } else {
                    let _ = write!(l, "{}{cell}", " ".repeat(pad));
                }
                l.push_str(if i == 7 { "" } else { "  " });
            }
            l.trim_end().to_string() + "\n"
        };
        s.push('\n');
        let mut h = header;
        h[4] = &ci_header;
        s.push_str(&line(h));
        for r in &rows {
            s.push_str(&line(std::array::from_fn(|i| r[i].as_str())));
        }
        let _ = writeln!(
            s,
            "\nsamples: Mann–Whitney U (two-sided, alpha {}) and a bootstrap interval of the shift of medians \
             ({} resamples); a regression needs both, with the interval past the limit",
            c.limits.alpha, c.limits.resamples
        );
    }
    let _ = writeln!(s, "\nverdict: {}", c.verdict.as_str().to_uppercase());
    s
}

/// The metric's name in the table (the message has the full label).
fn short_name(m: &Metric) -> String {
    match m.id.as_str() {
        "host_before" => "host per replay, before",
        "host_after" => "host per replay, after",
        "gpu_before" => "GPU per replay, before",
        "gpu_after" => "GPU per replay, after",
        "occupancy" => "occupancy, profiled",
        "graph_launch" => "graph launch, profiled",
        _ => m.label.as_str(),
    }
    .to_string()
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Regression => "regression",
        Outcome::Improvement => "improvement",
        Outcome::NotSignificant => "not significant",
        Outcome::BelowFloor => "below limit",
        Outcome::WithinLimit => "within limit",
        Outcome::NotMeasured => "not measured",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        c.metrics.iter().find(|m| m.id == id).unwrap()
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
            assert_eq!(m.shift, Some(0.0), "{}", m.id);
            assert_eq!(m.status, Status::Pass, "{}", m.id);
        }
        let host = metric(&c, "host_before");
        // Identical samples: U = n1·n2/2 exactly, and p = 1.
        assert_eq!(host.u, Some(300.0 * 300.0 / 2.0));
        assert_eq!(host.p_value, Some(1.0));
        assert_eq!(host.outcome, Outcome::NotSignificant);
    }

    #[test]
    fn host_shift_fails_only_when_its_interval_clears_the_floor() {
        let base = reference();
        // Baseline median 5.5215 µs: the floor is max(5, 1.0 × 5.5215) = 5.5215 µs.
        let mut cur = base.clone();
        shift_host(&mut cur, "before", 2.0);
        let m = metric(&compare(&base, &cur, &cfg(), false), "host_before").clone();
        assert!(m.p_value.unwrap() < 1e-3, "a uniform +2 µs is significant: {m:?}");
        assert_eq!((m.outcome, m.status), (Outcome::BelowFloor, Status::Pass), "{}", m.message);
        assert_eq!(m.limit, Some(5.5215));

        shift_host(&mut cur, "before", 8.0);
        let c = compare(&base, &cur, &cfg(), false);
        let m = metric(&c, "host_before");
        assert_eq!((m.outcome, m.status), (Outcome::Regression, Status::Fail), "{}", m.message);
        // Every sample moved by 10 µs, so the medians did (up to rounding).
        assert!((m.shift.unwrap() - 10.0).abs() < 1e-9);
        assert!(m.interval.unwrap().low > 5.5215 && m.interval.unwrap().contains(10.0), "{:?}", m.interval);
        assert_eq!(c.verdict, Verdict::Fail);

        // The other way round, a drop of 10 µs from a 15.5 µs baseline: never a failure, and not
        // an improvement past the floor either (the floor is the baseline median itself).
        let m = metric(&compare(&cur, &base, &cfg(), false), "host_before").clone();
        assert_eq!((m.outcome, m.status), (Outcome::BelowFloor, Status::Pass), "{}", m.message);
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
        let occ = base.analysis.as_ref().unwrap().devices[0].figures.occupancy;
        let with = |gpu_factor: f64, occ_delta: f64| {
            let mut cur = base.clone();
            cur.phases.get_mut("before").unwrap().gpu_us_per_replay = Some(gpu * gpu_factor);
            cur.analysis.as_mut().unwrap().devices[0].figures.occupancy = occ + occ_delta;
            let c = compare(&base, &cur, &cfg(), false);
            (metric(&c, "gpu_before").outcome, metric(&c, "occupancy").outcome)
        };
        assert_eq!(with(1.09, -0.09), (Outcome::WithinLimit, Outcome::WithinLimit));
        assert_eq!(with(1.11, -0.11), (Outcome::Regression, Outcome::Regression));
        assert_eq!(with(0.85, 0.12), (Outcome::Improvement, Outcome::Improvement));
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
        assert_eq!((checks[0].id.as_str(), checks[0].status), ("compare.baseline", Status::Warn));
        assert!(checks[0].message.contains("not compared") && checks[0].message.contains("H100"));
        assert_eq!(c.verdict, Verdict::Warn);

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
        let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
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
        assert_eq!(checks[5].limit.as_f64(), Some(-0.10));
    }

    #[test]
    fn terminal_table_and_json_round_trip() {
        let base = reference();
        let mut cur = base.clone();
        shift_host(&mut cur, "before", 10.0);
        let c = compare(&base, &cur, &cfg(), false);
        let text = render_terminal(&c);
        assert!(text.contains("95% CI"), "{text}");
        let row = text.lines().find(|l| l.starts_with("host per replay, before")).unwrap();
        assert!(
            row.contains("5.5")
                && row.contains("15.5")
                && row.contains("+10.0")
                && row.contains("FAIL regression")
        );
        assert!(text.ends_with("verdict: FAIL\n"));
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"schema\":\"launchguard.compare/1\""));
        // Compared field by field: serde_json's default float parsing may differ from the
        // printed value in the last bit.
        let back: Comparison = serde_json::from_str(&json).unwrap();
        assert_eq!((back.verdict, &back.differences, &back.limits), (c.verdict, &c.differences, &c.limits));
        let summary = |c: &Comparison| -> Vec<(String, Status, Outcome)> {
            c.metrics.iter().map(|m| (m.id.clone(), m.status, m.outcome)).collect()
        };
        assert_eq!(summary(&back), summary(&c));
    }

    #[test]
    fn config_limits_are_validated() {
        assert!(validate_config(&cfg()).is_ok());
        let bad = |f: fn(&mut CompareConfig)| {
            let mut c = cfg();
            f(&mut c);
            validate_config(&c).unwrap_err().to_string()
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
        let good = write("e.json", include_str!("../../../tests/data/compare/h200-reference.json"));
        assert_eq!(read_result(&good).unwrap(), reference());
    }
}
