//! Judging a comparison with a baseline: `launchguard.compare/1`.
//!
//! Only regressions fail; improvements are reported. A metric measured per replay fails only when
//! its shift is both significant (Mann–Whitney U, p < `alpha`) and large: the bound of its
//! bootstrap interval nearest to zero must clear a floor, the larger of an absolute floor and
//! `min_relative_shift` × the baseline median. Per-replay samples are autocorrelated and each
//! process has its own offset, so significance alone would alarm on noise. One figure per run
//! (GPU time, occupancy) fails past a fixed relative or absolute change. With several ranks every
//! rank is compared and the worst rank decides each metric's check, named in its message.
//!
//! Runs of different GPUs, workloads, software versions, TP degrees are incomparable: they are
//! compared only when forced, and what differs is said either way.

use launchguard_analysis::compare::{Method, MetricFigures, Worse};
use serde::{Deserialize, Serialize};

use crate::config::CompareConfig;
use crate::limits::SMALL_GRAPH_US;
use crate::verdict::{Check, CheckId, Status, Verdict};

/// Schema id of [`Comparison`].
pub const SCHEMA: &str = "launchguard.compare/1";

/// The comparison of a current run with a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// launchguard's version.
    pub launchguard_version: String,
    /// Worst status of [`Comparison::checks`]: `fail` for a regression past the limits;
    /// `inconclusive` when the comparison cannot be used ([`Comparison::reason`]).
    pub verdict: Verdict,
    /// Why the verdict is `inconclusive`; or, with several ranks, the regression of the rank
    /// that makes the others wait, and what changed on the ranks that wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    /// One entry per metric (and per rank with several ranks); empty when not comparable.
    pub metrics: Vec<Metric>,
    /// Comparisons of traces: which kernels changed, per rank (figures only, never judged;
    /// given even when the runs are not comparable, as what differs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<launchguard_analysis::kernel_diff::KernelDiff>,
}

/// What identifies one of the two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The file it was read from, when read from one.
    pub path: Option<String>,
    /// Its own verdict.
    pub verdict: Verdict,
    /// Why its own verdict is `skip` or `inconclusive` (what damaged its trace, where and how
    /// much); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Workload preset.
    pub preset: String,
    /// GPU name.
    pub gpu_name: Option<String>,
    /// `torch.__version__`.
    pub torch: Option<String>,
    /// launchguard version that produced it.
    pub launchguard_version: String,
    /// What reading its traces noticed (a trace cut short, impossible causality), as the
    /// analysis says it (`rank N: ` before it with several ranks); absent when nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// With several ranks, the rank that makes the others wait (its host launches late), as the
    /// run's own judgement names it (`across.culprit`); absent when none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<u64>,
    /// The ranks that wait for [`RunInfo::culprit`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<u64>,
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

/// The judged comparison of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// What was measured.
    #[serde(flatten)]
    pub figures: MetricFigures,
    /// The signed limit a regression must pass: +floor for costs, −drop for occupancy.
    pub limit: Option<f64>,
    /// `fail` for a regression, `skip` when not measured, else `pass`.
    pub status: Status,
    /// What was found.
    pub outcome: Outcome,
    /// One line: the figures, the interval and the finding.
    pub message: String,
}

/// Settings that never make two runs incomparable: an injected delay is what a comparison of the
/// guard itself must catch; another GPU of the same model measures the same thing; a renamed or
/// added kernel (a torch or cuBLAS upgrade picks other GEMMs) is a change to report, since
/// launches, host intervals, occupancy and gaps compare across it (graphs are then matched by
/// their kernel count); another profiler of one vendor (roctracer, rocprofiler-sdk) is what an
/// upgrade changes.
const NOTED_ONLY: [&str; 9] = [
    "inject_delay_us",
    "inject_every",
    "inject_delay_ranks",
    "launchguard_version",
    "python_version",
    "workload.device",
    "graph.kernels",
    "graph.kernel_names",
    "profiler",
];

/// Differences that make a comparison unusable: launch costs on two GPU models or vendors are not
/// one stack's regression or improvement. The comparison says why and exits 2 (`inconclusive`),
/// never 0, unless forced.
const UNUSABLE: [&str; 2] = ["gpu_name", "vendor"];

/// What differs between two runs' settings, given as `(field, value)` lists in report order.
pub fn differences(baseline: &[(String, String)], current: &[(String, String)]) -> Vec<Difference> {
    let value = |list: &[(String, String)], field: &str| {
        list.iter().find(|(f, _)| f == field).map_or_else(|| "unknown".to_string(), |(_, v)| v.clone())
    };
    let mut fields: Vec<&String> = baseline.iter().map(|(f, _)| f).collect();
    for (f, _) in current {
        if !fields.contains(&f) {
            fields.push(f);
        }
    }
    fields
        .into_iter()
        .filter_map(|f| {
            let (b, c) = (value(baseline, f), value(current, f));
            (b != c).then(|| Difference {
                field: f.clone(),
                baseline: b,
                current: c,
                blocking: !NOTED_ONLY.contains(&f.as_str()),
            })
        })
        .collect()
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

/// Judges measured metrics. Incomparable runs (see [`differences`]) are judged only when `force`
/// is set; otherwise the result has no metrics and `comparable` is false.
pub fn judge(
    baseline: RunInfo,
    current: RunInfo,
    differences: Vec<Difference>,
    figures: Vec<MetricFigures>,
    cfg: &CompareConfig,
    force: bool,
) -> Comparison {
    let blocked = incompatibility(&differences).is_some();
    let comparable = force || !blocked;
    let mut c = Comparison {
        schema: SCHEMA.to_string(),
        launchguard_version: env!("CARGO_PKG_VERSION").to_string(),
        verdict: Verdict::Skip,
        reason: None,
        baseline,
        current,
        comparable,
        forced: force && blocked,
        differences,
        limits: cfg.clone(),
        metrics: if comparable {
            let gpu = baseline_gpu_per_replay(&figures);
            figures
                .into_iter()
                .map(|f| {
                    let g = gpu.iter().find(|(rank, _)| *rank == f.rank).map(|(_, g)| *g);
                    metric(f, g, cfg)
                })
                .collect()
        } else {
            Vec::new()
        },
        kernels: Vec::new(),
    };
    c.verdict = Verdict::of(&c.checks());
    let unusable: Vec<String> = c
        .differences
        .iter()
        .filter(|d| d.blocking && UNUSABLE.contains(&d.field.as_str()))
        .map(|d| format!("{} {} (baseline) vs {} (current)", d.field, d.baseline, d.current))
        .collect();
    if !unusable.is_empty() && !force {
        c.verdict = Verdict::Inconclusive;
        c.reason = Some(format!(
            "the runs ran on different GPUs: {}; launch costs of two GPUs are not one stack's change (--force compares anyway)",
            unusable.join("; ")
        ));
    }
    let damaged = [("baseline", &c.baseline), ("current run", &c.current)]
        .into_iter()
        .filter(|(_, r)| r.verdict == Verdict::Inconclusive)
        .map(|(which, r)| match &r.reason {
            Some(why) => format!("the {which}'s own verdict is inconclusive ({why})"),
            None => format!("the {which}'s own verdict is inconclusive"),
        })
        .collect::<Vec<_>>();
    if !damaged.is_empty() {
        c.verdict = Verdict::Inconclusive;
        c.reason =
            Some(format!("{}: what is left cannot show whether launches got slower", damaged.join("; ")));
    }
    c.lead_with_culprit();
    if c.verdict == Verdict::Fail {
        c.reason = c.culprit_change();
    }
    c
}

/// The baseline's GPU time per replay of each rank: `gpu_before` of a check result (device events,
/// profiler off), else the median `gpu_span` of a trace's replays (the first graph listed).
fn baseline_gpu_per_replay(figures: &[MetricFigures]) -> Vec<(Option<u64>, f64)> {
    let mut out: Vec<(Option<u64>, f64)> = Vec::new();
    for id in ["gpu_before", "gpu_span"] {
        for f in figures.iter().filter(|f| f.id == id) {
            if let Some(g) = f.baseline.median {
                if !out.iter().any(|(rank, _)| *rank == f.rank) {
                    out.push((f.rank, g));
                }
            }
        }
    }
    out
}

/// `gpu_us_per_replay`: the baseline's GPU time per replay on the metric's rank, if known.
fn metric(f: MetricFigures, gpu_us_per_replay: Option<f64>, cfg: &CompareConfig) -> Metric {
    match f.method {
        Method::MannWhitneyBootstrap => samples(f, cfg),
        Method::SingleValue => single(f, gpu_us_per_replay, cfg),
    }
}

/// A number with its sign, to `digits` decimals.
pub fn signed(v: f64, digits: usize) -> String {
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

fn not_measured(f: MetricFigures) -> Metric {
    let (b, c) = (f.baseline.n, f.current.n);
    let which = if b == 0 && c == 0 {
        "either run"
    } else if b == 0 {
        "the baseline"
    } else {
        "the current run"
    };
    let message = format!("{}: not measured in {which}", f.label);
    Metric { figures: f, limit: None, status: Status::Skip, outcome: Outcome::NotMeasured, message }
}

/// The floor a per-replay metric's shift must clear: an absolute one and a fraction of the
/// baseline's median, the larger. GPU time is judged by its relative limit alone.
fn floor(id: &str, baseline_median: f64, cfg: &CompareConfig) -> f64 {
    let (absolute, relative) = match id {
        "graph_launch" => (cfg.min_launch_shift_us, cfg.min_relative_shift),
        "idle_before" => (cfg.min_idle_shift_us, cfg.min_relative_shift),
        "gpu_span" => (0.0, cfg.max_gpu_increase),
        // Host cost per replay: check's host_before / host_after, a trace's launch_interval; a
        // step-synchronous step over the GPU time (sync_step).
        _ => (cfg.min_host_shift_us, cfg.min_relative_shift),
    };
    absolute.max(relative * baseline_median.abs())
}

/// Per-replay samples (costs: higher is worse).
fn samples(f: MetricFigures, cfg: &CompareConfig) -> Metric {
    let (Some(mb), Some(mc), Some(p), Some(ci), Some(shift)) =
        (f.baseline.median, f.current.median, f.p_value, f.interval, f.shift)
    else {
        return not_measured(f);
    };
    let floor = floor(&f.id, mb, cfg);
    let outcome = if p >= cfg.alpha {
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
        "{}: median {mb:.1} → {mc:.1} µs, {} µs ({:.0}% CI {} to {}, p {}, n {}/{}): {finding}",
        f.label,
        signed(shift, 1),
        100.0 * ci.confidence,
        signed(ci.low, 1),
        signed(ci.high, 1),
        format_p(p),
        f.baseline.n,
        f.current.n,
    );
    let status = if outcome == Outcome::Regression { Status::Fail } else { Status::Pass };
    Metric { figures: f, limit: Some(floor), status, outcome, message }
}

/// One figure per run: GPU time per replay (relative limit) or occupancy (absolute limit). The
/// profiled occupancy of a launch-bound graph (below [`SMALL_GRAPH_US`] of GPU time per replay)
/// measures the profiler, as the single-run judge says: healthy processes of the 35 µs `tiny`
/// graph on H200s sat at 39–84%, so a drop past the limit only warns there; the host cost and the
/// idle time before replays judge such a graph.
fn single(f: MetricFigures, gpu_us_per_replay: Option<f64>, cfg: &CompareConfig) -> Metric {
    let (Some(bv), Some(cv), Some(shift)) = (f.baseline.median, f.current.median, f.shift) else {
        return not_measured(f);
    };
    let (limit, regression, improvement) = match (f.worse, f.id.as_str()) {
        (Worse::Higher, "gaps") => (cfg.max_gaps_increase, shift > cfg.max_gaps_increase, false),
        (Worse::Higher, _) => {
            let l = cfg.max_gpu_increase * bv.abs();
            (l, shift > l, shift < -l)
        }
        (Worse::Lower, _) => {
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
    let message = match f.worse {
        Worse::Higher if f.id == "gaps" => format!(
            "{}: {bv:.0} → {cv:.0} ({}; fails above {} more): {finding}",
            f.label,
            signed(shift, 0),
            cfg.max_gaps_increase
        ),
        Worse::Higher => format!(
            "{}: {bv:.1} → {cv:.1} µs, {} µs ({}%; one figure per run, no interval; fails above {}%): {finding}",
            f.label,
            signed(shift, 1),
            signed(100.0 * shift / bv, 1),
            100.0 * cfg.max_gpu_increase
        ),
        Worse::Lower => format!(
            "{}: {:.1}% → {:.1}%, {} points (one figure per run, no interval; fails below {} points): {finding}",
            f.label,
            100.0 * bv,
            100.0 * cv,
            signed(100.0 * shift, 1),
            signed(100.0 * limit, 1)
        ),
    };
    let launch_bound = f.worse == Worse::Lower && gpu_us_per_replay.is_some_and(|g| g < SMALL_GRAPH_US);
    let (status, message) = match (regression, launch_bound) {
        (true, true) => (
            Status::Warn,
            format!(
                "{message}; warns only: a replay of {:.1} µs of GPU time is launch-bound under the profiler (below {SMALL_GRAPH_US:.0} µs), \
                 so its profiled occupancy measures the profiler",
                gpu_us_per_replay.unwrap_or_default()
            ),
        ),
        (true, false) => (Status::Fail, message),
        (false, _) => (Status::Pass, message),
    };
    Metric { figures: f, limit: Some(limit), status, outcome, message }
}

impl Comparison {
    /// Puts the rank that makes the others wait in the current run first: its metrics and its
    /// kernels (the others only wait for it, whatever their own figures say).
    pub fn lead_with_culprit(&mut self) {
        let Some(culprit) = self.current.culprit else { return };
        self.metrics.sort_by_key(|m| m.figures.rank != Some(culprit));
        self.kernels.sort_by_key(|k| k.rank != Some(culprit));
    }

    /// With several ranks, the regression of the rank that makes the others wait in the current
    /// run, and what changed on the ranks that wait for it, in one line; `None` when no such rank
    /// regressed.
    fn culprit_change(&self) -> Option<String> {
        let culprit = self.current.culprit?;
        let failed = |rank: u64| -> Vec<String> {
            self.metrics
                .iter()
                .filter(|m| m.figures.rank == Some(rank) && m.status == Status::Fail)
                .map(|m| format!("{} {}", m.figures.label, shift_text(m)))
                .collect()
        };
        let own = failed(culprit);
        if own.is_empty() {
            return None;
        }
        let waiting: Vec<String> = self
            .current
            .waiting
            .iter()
            .map(|&r| match failed(r).as_slice() {
                [] => format!("rank {r} waits for it"),
                what => format!("rank {r} waits for it ({})", what.join(", ")),
            })
            .collect();
        let mut line = format!("rank {culprit} makes the others wait: {}", own.join(", "));
        if !waiting.is_empty() {
            line.push_str(&format!("; {}", waiting.join("; ")));
        }
        Some(line)
    }

    /// One line naming the blocking differences between the runs, if any.
    pub fn incompatibility(&self) -> Option<String> {
        incompatibility(&self.differences)
    }

    /// The comparison as checks: `compare.baseline` (whether the runs are alike: a warning when
    /// they differ), then `compare.<metric id>` for each metric, with value = the shift and
    /// limit = the signed limit. With several ranks each metric's check is the worst rank's, its
    /// message naming that rank and the ranks compared.
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
                CheckId::CompareBaseline,
                Status::Warn,
                None,
                None,
                format!("compared although the runs differ: {why}{noted}"),
            )
            .with_hint(
                "shifts may come from the difference, not from a regression: record a baseline on this setup",
            ),
            Some(why) => Check::new(
                CheckId::CompareBaseline,
                Status::Warn,
                None,
                None,
                format!("baseline not compared, the runs differ: {why}{noted}"),
            )
            .with_hint(
                "record a baseline on this setup (check --save-baseline), or compare anyway with --force",
            ),
            None => Check::new(
                CheckId::CompareBaseline,
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
        let mut ids: Vec<&str> = Vec::new();
        for m in &self.metrics {
            if !ids.contains(&m.figures.id.as_str()) {
                ids.push(&m.figures.id);
            }
        }
        let culprit = self.current.culprit;
        // The culprit's checks lead, in metric order; then those of the ranks that wait.
        let mut by_culprit = Vec::new();
        let mut others = Vec::new();
        for id in ids {
            let of_id: Vec<&Metric> = self.metrics.iter().filter(|m| m.figures.id == id).collect();
            let worst = worst_rank(&of_id, culprit);
            let mut message = worst.message.clone();
            if of_id.len() > 1 {
                let mut ranks: Vec<u64> = of_id.iter().filter_map(|m| m.figures.rank).collect();
                ranks.sort_unstable();
                let ranks: Vec<String> = ranks.iter().map(u64::to_string).collect();
                let rank = match (worst.figures.rank, culprit) {
                    (Some(r), Some(c)) if r == c => format!("{r}, which makes the others wait"),
                    (Some(r), Some(c)) if self.current.waiting.contains(&r) => {
                        format!("{r}, waiting for rank {c}")
                    }
                    (r, _) => r.map_or("?".to_string(), |r| r.to_string()),
                };
                message = match &worst.figures.graph {
                    // Several graphs (of one rank or more): the graph that decided is named.
                    Some(graph) if worst.figures.rank.is_some() => {
                        format!(
                            "rank {rank}, graph of {graph} (worst of {} comparisons): {message}",
                            of_id.len()
                        )
                    }
                    Some(graph) => format!("graph of {graph} (worst of {} graphs): {message}", of_id.len()),
                    None => format!("rank {rank} (worst of ranks {}): {message}", ranks.join(", ")),
                };
            }
            let c = Check::new(
                CheckId::Compare(id.to_string()),
                worst.status,
                worst.figures.shift,
                worst.limit,
                message,
            );
            let list = if culprit.is_some() && worst.figures.rank == culprit {
                &mut by_culprit
            } else {
                &mut others
            };
            list.push(if worst.status == Status::Fail {
                c.with_hint(
                    "compare the inventories of the two results: a new interception layer, library or driver \
                     setting adds to every launch",
                )
            } else {
                c
            });
        }
        out.extend(by_culprit);
        out.extend(others);
        out
    }
}

/// A metric's shift as said in a line: µs, points of occupancy, or gaps.
fn shift_text(m: &Metric) -> String {
    let shift = m.figures.shift.unwrap_or_default();
    match (m.figures.worse, m.figures.id.as_str()) {
        (Worse::Lower, _) => format!("{} points", signed(100.0 * shift, 1)),
        (_, "gaps") => signed(shift, 0),
        _ => format!("{} µs", signed(shift, 1)),
    }
}

/// The rank whose comparison of a metric is worst: a regression first, then the rank that makes
/// the others wait (`culprit`: what it changed is the cause, the others' the effect), then the
/// largest shift in the worse direction (relative, so ranks of different costs compare), then the
/// lowest rank.
fn worst_rank<'m>(metrics: &[&'m Metric], culprit: Option<u64>) -> &'m Metric {
    let badness = |m: &Metric| {
        let rel = m.figures.relative_shift.or(m.figures.shift).unwrap_or(f64::NEG_INFINITY);
        match m.figures.worse {
            Worse::Higher => rel,
            Worse::Lower => -rel,
        }
    };
    metrics
        .iter()
        .copied()
        .max_by(|a, b| {
            a.status
                .cmp(&b.status)
                .then_with(|| {
                    let is = |m: &Metric| culprit.is_some() && m.figures.rank == culprit;
                    is(a).cmp(&is(b))
                })
                .then_with(|| badness(a).total_cmp(&badness(b)))
                .then_with(|| b.figures.rank.cmp(&a.figures.rank))
        })
        .expect("one metric at least")
}

/// Fewer bootstrap resamples make the interval's bounds noise.
pub const MIN_RESAMPLES: u32 = 100;
/// More cost seconds per metric and add nothing (the interval settles within a few thousand);
/// without a cap a stranger's config could ask for 4·10⁹ (34 GB).
pub const MAX_RESAMPLES: u32 = 100_000;
