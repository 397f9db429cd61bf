//! A comparison as CSV files with a header row (`--csv DIR`): `kernel_diff.csv`, every row of the
//! kernel diff (each rank, each matched graph and the whole trace), and `metrics.csv`, every
//! metric. Written atomically; times in µs as in the JSON, names in full.

use launchguard_analysis::kernel_diff::{ChangeKind, KernelChange, KernelSide};
use launchguard_judge::compare::Comparison;

use crate::error::Result;

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

/// The tables, `(file name, bytes)`, in order.
pub(crate) fn tables(c: &Comparison) -> Result<Vec<(&'static str, Vec<u8>)>> {
    Ok(vec![("kernel_diff.csv", kernel_diff(c)?), ("metrics.csv", metrics(c)?)])
}

/// Every kernel row: scope (`graph` per replay, or `trace` in all), rank, graph, name, position,
/// change, both sides and the shifts.
pub fn kernel_diff(c: &Comparison) -> Result<Vec<u8>> {
    let mut w = crate::csv_tables::Table::new();
    w.row([
        "rank",
        "scope",
        "graph",
        "name",
        "kind",
        "occurrence",
        "change",
        "baseline_count",
        "current_count",
        "baseline_time_us",
        "current_time_us",
        "baseline_mean_us",
        "current_mean_us",
        "baseline_p50_us",
        "current_p50_us",
        "time_shift_us",
        "count_shift",
        "mean_shift_us",
    ])?;
    for d in &c.kernels {
        let rank = d.rank.map_or_else(String::new, |r| r.to_string());
        let scopes = d
            .graphs
            .iter()
            .map(|g| ("graph", g.graph.as_str(), &g.changes))
            .chain(std::iter::once(("trace", "", &d.trace)));
        for (scope, graph, changes) in scopes {
            for k in changes.iter() {
                w.row(record(&rank, scope, graph, k))?;
            }
        }
    }
    w.finish()
}

fn record(rank: &str, scope: &str, graph: &str, k: &KernelChange) -> Vec<String> {
    let side = |s: Option<KernelSide>, f: fn(&KernelSide) -> f64| opt(s.as_ref().map(f));
    vec![
        rank.to_string(),
        scope.to_string(),
        graph.to_string(),
        k.name.clone(),
        k.kind.clone(),
        k.occurrence.map_or_else(String::new, |o| o.to_string()),
        match k.change {
            ChangeKind::Matched => "matched",
            ChangeKind::Appeared => "appeared",
            ChangeKind::Vanished => "vanished",
        }
        .to_string(),
        side(k.baseline, |s| s.count),
        side(k.current, |s| s.count),
        side(k.baseline, |s| s.time_us),
        side(k.current, |s| s.time_us),
        side(k.baseline, |s| s.mean_us),
        side(k.current, |s| s.mean_us),
        side(k.baseline, |s| s.p50_us),
        side(k.current, |s| s.p50_us),
        k.time_shift_us.to_string(),
        k.count_shift.to_string(),
        opt(k.mean_shift_us),
    ]
}

/// Every metric: rank, graph, id, both medians, the shift, its interval, p, limit, status.
pub fn metrics(c: &Comparison) -> Result<Vec<u8>> {
    let mut w = crate::csv_tables::Table::new();
    w.row([
        "rank",
        "graph",
        "metric",
        "unit",
        "baseline_n",
        "current_n",
        "baseline_median",
        "current_median",
        "shift",
        "interval_low",
        "interval_high",
        "p_value",
        "limit",
        "status",
        "outcome",
    ])?;
    for m in &c.metrics {
        let f = &m.figures;
        w.row([
            f.rank.map_or_else(String::new, |r| r.to_string()),
            f.graph.clone().unwrap_or_default(),
            f.id.clone(),
            f.unit.clone(),
            f.baseline.n.to_string(),
            f.current.n.to_string(),
            opt(f.baseline.median),
            opt(f.current.median),
            opt(f.shift),
            opt(f.interval.map(|i| i.low)),
            opt(f.interval.map(|i| i.high)),
            opt(f.p_value),
            opt(m.limit),
            m.status.as_str().to_string(),
            super::outcome_word(m.outcome).to_string(),
        ])?;
    }
    w.finish()
}
