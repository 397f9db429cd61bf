//! The limits in force for one trace: the configured ones, adapted to what the trace holds.
//!
//! ATOM's limits (occupancy < 0.80 fails, > 5 gaps over 100 µs fail, a launch ≥ 150 µs fails)
//! were set for one workload: 100 replays of a ~44-kernel graph of ~255 µs of GPU time, on one
//! GPU. Held unchanged against other traces they cry wolf or pass vacuously, so each default is
//! adapted to the context, and every adaptation is stated ([`Adjustment`]). A limit states ATOM's
//! context's value whether the user wrote it or not, so a file that states the defaults judges as
//! no file does; `thresholds.adapt = false` holds every trace to the limits exactly as stated.

use launchguard_analysis::model::Analysis;
use serde::{Deserialize, Serialize};

use crate::config::{LaunchStatistic, Settings, Thresholds};

/// Kernels per replay of the ATOM reference graph on an H200 (h200-ground-truth.md); the launch
/// limit of 150 µs was set for a graph of this size.
pub const REFERENCE_KERNELS: f64 = 44.0;

/// Replays in ATOM's profiled session: its limit of 5 gaps is per this many replays.
pub const REFERENCE_REPLAYS: f64 = 100.0;

/// Below this GPU time per replay a graph is launch-bound under the profiler: a traced launch and
/// its `record_function` cost the host nearly as much as the GPU's replay, so profiled occupancy
/// measures the profiler. The ground truth's size sweep: healthy graphs of 28–84 µs sit at
/// 0.80–0.83 profiled occupancy, on ATOM's limit; the 35 µs `tiny` preset at 0.54–0.84 on healthy
/// H200s, and 0.39 in the first process on a fresh host (tests/data/h200-check/tiny-fresh-host). Such graphs are judged by the idle time before each replay instead, and by the launch
/// headroom when `check` measured it.
pub const SMALL_GRAPH_US: f64 = 100.0;

/// Occupancy of a small graph below this warns; it never fails on occupancy.
pub const SMALL_GRAPH_OCCUPANCY_WARN: f64 = 0.60;

/// Occupancy below which a run of several ranks fails. With collectives in the graph every launch
/// blocks until the GPU has run the previous replay, so the GPU idles for each launch's latency:
/// healthy H200 runs sit at 80.6–88% (TP=2) and 81–83% (TP=4) excluding waiting for peers, right
/// at ATOM's 80%, while 200 µs injected per launch takes them to 60% (docs/evidence/
/// 2026-11-29-tp-h200.md). The warning stays at 90%.
pub const TP_OCCUPANCY_FAIL: f64 = 0.70;

/// Graph replays must launch at least this share of the GPU activities between the first replay
/// and the last for occupancy and gaps there to say anything about graph launches.
pub const MIN_REPLAY_SHARE: f64 = 0.5;

/// A trace lost GPU events when at least this share of its graph launches (and at least
/// [`DAMAGE_MIN_REPLAYS`]) ran no GPU activity in it, ran kernels that match no other replay's, or
/// came after a stream that ran replays went silent. Every healthy and public trace we hold has
/// none of each (docs/verdicts.md); a lost last replay or two at the profiler's stop stays below.
pub const DAMAGE_SHARE: f64 = 0.10;

/// The fewest damaged replays that make a trace inconclusive.
pub const DAMAGE_MIN_REPLAYS: u64 = 2;

/// A trace lost GPU events when the GPU's record of the replays spans less than this share of
/// the host's span of launches (the GPU runs each replay after its launch, so its span is at
/// least the host's less one replay).
pub const DAMAGE_GPU_WINDOW_SHARE: f64 = 0.5;

/// What a trace holds, and so what its limits judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Graph replays make up the GPU work of their steady state: every check applies.
    #[default]
    GraphReplays,
    /// Graph replays run among other GPU work (eager kernels, training steps): their launches are
    /// judged, occupancy and gaps are not (they would measure the other work).
    MixedWork,
    /// No graph replay: the graph-replay limits do not apply.
    NoGraphReplays,
}

/// What the judge knows about a trace beyond its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Context {
    /// What the trace holds.
    pub scope: Scope,
    /// Ranks in the run: the world size, the traces analyzed together, or `check`'s `--tp`.
    pub ranks: u64,
    /// The workload preset, when `check` ran it (its context event).
    pub preset: Option<String>,
    /// GPU time per replay, µs.
    pub gpu_us_per_replay: Option<f64>,
    /// Where [`Context::gpu_us_per_replay`] comes from: `device events` (measured by `check` with
    /// the profiler off) or `trace` (the median GPU span of a replay).
    pub gpu_time_from: Option<String>,
    /// The usual GPU activities per replay.
    pub kernels_per_replay: Option<u64>,
    /// Graph launches.
    pub replays: u64,
    /// Of the GPU activities in the steady window, the share replays launched (the lowest device).
    pub replay_share: Option<f64>,
}

impl Context {
    /// The context of one trace, analyzed as one of `ranks` ranks (1 when alone; the trace's
    /// world size or check's `--tp` raise it).
    pub fn of(a: &Analysis, ranks: u64) -> Self {
        let s = &a.replay_summary;
        let replay_share =
            a.devices.iter().filter_map(|d| d.steady.as_ref()).map(|st| st.replay_share).reduce(f64::min);
        let scope = if s.count == 0 {
            Scope::NoGraphReplays
        } else if replay_share.is_some_and(|r| r < MIN_REPLAY_SHARE) {
            Scope::MixedWork
        } else {
            Scope::GraphReplays
        };
        let measured = a.workload.as_ref().and_then(|w| w.gpu_us_per_replay());
        let (gpu_us_per_replay, gpu_time_from) = match (measured, s.gpu_span_p50_us) {
            (Some(g), _) => (Some(g), Some("device events".to_string())),
            (None, Some(g)) => (Some(g), Some("trace".to_string())),
            (None, None) => (None, None),
        };
        let world = a.trace.world_size.unwrap_or(1);
        let tp = a.workload.as_ref().map_or(1, |w| u64::from(w.tp));
        Context {
            scope,
            ranks: ranks.max(world).max(tp).max(1),
            preset: a.workload.as_ref().map(|w| w.workload.preset.clone()),
            gpu_us_per_replay,
            gpu_time_from,
            kernels_per_replay: s.kernels_mode,
            replays: s.count,
            replay_share,
        }
    }

    /// Whether the GPU time per replay marks a launch-bound graph ([`SMALL_GRAPH_US`]).
    pub fn small_graph(&self) -> bool {
        self.gpu_us_per_replay.is_some_and(|g| g < SMALL_GRAPH_US)
    }
}

/// A limit whose value in force differs from the configured one, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adjustment {
    /// The key, as in `[thresholds]`.
    pub key: String,
    /// The configured (default) value.
    pub configured: f64,
    /// The value in force.
    pub effective: f64,
    /// Why, in one sentence.
    pub why: String,
}

/// The limits in force for one trace, with the context they were adapted to. Documents written
/// before limits were reported read as the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Limits {
    /// What the judge knew.
    pub context: Context,
    /// The limits in force.
    pub thresholds: Thresholds,
    /// Each limit adapted to the context, and why.
    pub adjustments: Vec<Adjustment>,
    /// `thresholds.adapt` is false: every check is judged whatever the scope.
    #[serde(skip)]
    pub exact: bool,
    /// `check.headroom_fraction`: the share of the GPU's replay a launch may cost with the
    /// profiler off, which also decides whether a GPU starved under the profiler is the profiler's
    /// doing (`replay_idle`).
    #[serde(skip)]
    pub headroom_fraction: f64,
}

impl Limits {
    /// The limits for a trace with context `ctx` under `settings`.
    pub fn new(ctx: &Context, settings: &Settings) -> Self {
        let configured = &settings.config.thresholds;
        let mut th = configured.clone();
        let mut adjustments = Vec::new();
        let adapt = configured.adapt;
        let mut adjust = |key: &str, value: &mut f64, to: f64, why: String| {
            if *value != to {
                adjustments.push(Adjustment { key: key.into(), configured: *value, effective: to, why });
                *value = to;
            }
        };
        if let Some(k) = ctx.kernels_per_replay.filter(|&k| k as f64 > REFERENCE_KERNELS) {
            if adapt {
                let to = th.launch_fail_us * k as f64 / REFERENCE_KERNELS;
                adjust(
                    "launch_fail_us",
                    &mut th.launch_fail_us,
                    to,
                    format!(
                        "scaled for {k} kernels per replay: {} µs was set for ATOM's {REFERENCE_KERNELS:.0}-kernel graph, \
                         and a traced launch costs time per node (a healthy 308-kernel launch lasts ~740–830 µs on an H200)",
                        configured.launch_fail_us
                    ),
                );
            }
        }
        if ctx.ranks > 1 {
            if let (Some(gpu), true) = (ctx.gpu_us_per_replay, adapt) {
                let to = th.launch_fail_us + gpu;
                adjust(
                    "launch_fail_us",
                    &mut th.launch_fail_us,
                    to,
                    format!(
                        "{} ranks: a traced launch blocks until the GPU has run the previous replay ({gpu:.1} µs, from the {})",
                        ctx.ranks,
                        ctx.gpu_time_from.as_deref().unwrap_or("trace")
                    ),
                );
            }
            if adapt {
                let to = TP_OCCUPANCY_FAIL.min(th.occupancy_fail);
                adjust(
                    "occupancy_fail",
                    &mut th.occupancy_fail,
                    to,
                    format!(
                        "{} ranks: each launch waits for the previous replay, so the GPU idles for a launch's latency \
                         (healthy TP runs sit at 81–88% excluding waiting for peers)",
                        ctx.ranks
                    ),
                );
            }
        } else if ctx.small_graph() {
            let gpu = ctx.gpu_us_per_replay.unwrap_or(0.0);
            let why = format!(
                "a replay of {gpu:.1} µs of GPU time is launch-bound under the profiler (below {SMALL_GRAPH_US:.0} µs): \
                 its profiled occupancy measures the profiler (healthy: 54–84%); the idle time before each replay judges it"
            );
            if adapt {
                adjust("occupancy_fail", &mut th.occupancy_fail, 0.0, why.clone());
            }
            if adapt {
                adjust("occupancy_warn", &mut th.occupancy_warn, SMALL_GRAPH_OCCUPANCY_WARN, why);
            }
        }
        if ctx.replays as f64 > REFERENCE_REPLAYS && adapt {
            let to = (th.max_gaps as f64 * ctx.replays as f64 / REFERENCE_REPLAYS).floor();
            let mut v = th.max_gaps as f64;
            adjust(
                "max_gaps",
                &mut v,
                to,
                format!(
                    "{} replays: ATOM allows {} gaps in {REFERENCE_REPLAYS:.0} replays",
                    ctx.replays, configured.max_gaps
                ),
            );
            th.max_gaps = v as u64;
        }
        if th.launch_statistic == LaunchStatistic::Auto {
            th.launch_statistic = if ctx.ranks > 1 { LaunchStatistic::Median } else { LaunchStatistic::Mean };
        }
        Limits {
            context: ctx.clone(),
            thresholds: th,
            adjustments,
            exact: !adapt,
            headroom_fraction: settings.config.check.headroom_fraction,
        }
    }

    /// Why `key` has the value in force, when it was adapted.
    pub fn why(&self, key: &str) -> Option<&str> {
        self.adjustments.iter().rev().find(|a| a.key == key).map(|a| a.why.as_str())
    }

    /// The replay-idle limit in µs for this context.
    pub fn replay_idle_fail_us(&self) -> f64 {
        let th = &self.thresholds;
        let relative = self.context.gpu_us_per_replay.map_or(0.0, |g| th.replay_idle_fail_fraction * g);
        th.replay_idle_fail_us.max(relative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ThresholdKey;

    fn ctx(ranks: u64, gpu: Option<f64>, kernels: Option<u64>, replays: u64) -> Context {
        Context {
            scope: Scope::GraphReplays,
            ranks,
            preset: None,
            gpu_us_per_replay: gpu,
            gpu_time_from: gpu.map(|_| "trace".to_string()),
            kernels_per_replay: kernels,
            replays,
            replay_share: Some(1.0),
        }
    }

    /// Table-driven: each context and the limits it must get, computed by hand.
    #[test]
    fn limits_follow_the_context() {
        let s = Settings::default();
        // (context, occupancy_fail, occupancy_warn, launch_fail_us, max_gaps, statistic)
        let cases = [
            // ATOM's own workload: ATOM's limits.
            (ctx(1, Some(255.0), Some(44), 100), 0.80, 0.90, 150.0, 5, LaunchStatistic::Mean),
            // A 421-kernel graph (vLLM's full decode graph): 150 × 421 / 44.
            (
                ctx(1, Some(10_389.0), Some(421), 1),
                0.80,
                0.90,
                150.0 * 421.0 / 44.0,
                5,
                LaunchStatistic::Mean,
            ),
            // The tiny preset's 35 µs graph: never fails on occupancy.
            (ctx(1, Some(35.4), Some(11), 100), 0.0, 0.60, 150.0, 5, LaunchStatistic::Mean),
            // TP=2 on H200s: 52 kernels, 274 µs of GPU time per replay.
            (
                ctx(2, Some(274.0), Some(52), 100),
                0.70,
                0.90,
                150.0 * 52.0 / 44.0 + 274.0,
                5,
                LaunchStatistic::Median,
            ),
            // A serving trace of 2000 replays: 5 gaps per 100 replays.
            (ctx(1, Some(300.0), Some(40), 2000), 0.80, 0.90, 150.0, 100, LaunchStatistic::Mean),
        ];
        for (c, occ_fail, occ_warn, launch, gaps, stat) in cases {
            let l = Limits::new(&c, &s);
            let t = &l.thresholds;
            assert_eq!(
                (t.occupancy_fail, t.occupancy_warn, t.max_gaps, t.launch_statistic),
                (occ_fail, occ_warn, gaps, stat),
                "{c:?}"
            );
            assert!((t.launch_fail_us - launch).abs() < 1e-9, "{c:?}: {}", t.launch_fail_us);
            for a in &l.adjustments {
                assert!(!a.why.is_empty() && a.configured != a.effective, "{a:?}");
            }
        }
    }

    #[test]
    fn a_stated_limit_adapts_as_the_default_does_unless_adapt_is_off() {
        let c = ctx(2, Some(274.0), Some(421), 100);
        let stated =
            Settings::from_toml("[thresholds]\nlaunch_fail_us = 150\noccupancy_fail = 0.8\n").unwrap();
        assert!(stated.is_set(ThresholdKey::LaunchFailUs));
        assert_eq!(Limits::new(&c, &stated), Limits::new(&c, &Settings::default()));
        // A value of the user's own is the base of the same rule: 100 × 421/44 + 274.
        let own = Settings::from_toml("[thresholds]\nlaunch_fail_us = 100\n").unwrap();
        let l = Limits::new(&c, &own);
        assert!((l.thresholds.launch_fail_us - (100.0 * 421.0 / 44.0 + 274.0)).abs() < 1e-9);
        let exact = Settings::from_toml("[thresholds]\nadapt = false\nlaunch_fail_us = 150\n").unwrap();
        let l = Limits::new(&c, &exact);
        assert_eq!((l.thresholds.launch_fail_us, l.thresholds.occupancy_fail), (150.0, 0.80));
        assert!(l.adjustments.is_empty() && l.exact);
    }

    #[test]
    fn replay_idle_limit_is_absolute_or_relative() {
        let s = Settings::default();
        // 10% of 255 µs is more than 20 µs; for a 35 µs graph the 20 µs floor decides.
        assert!(
            (Limits::new(&ctx(1, Some(255.0), Some(44), 100), &s).replay_idle_fail_us() - 25.5).abs() < 1e-9
        );
        assert_eq!(Limits::new(&ctx(1, Some(35.0), Some(11), 100), &s).replay_idle_fail_us(), 20.0);
    }
}
