//! Small inline-SVG charts for the HTML report: histograms, per-replay line charts (aggregated per
//! pixel column when there are more points than columns) and box plots. Plain SVG, no script.

use launchguard_analysis::intervals::percentile;
use maud::{html, Markup};

use crate::terminal::human_us;

/// Width of a chart in SVG units (the page scales it).
pub const CHART_W: f64 = 560.0;
const CHART_H: f64 = 200.0;
/// Margins: left for the y labels, bottom for the x labels.
const ML: f64 = 52.0;
const MR: f64 = 12.0;
const MT: f64 = 30.0;
const MB: f64 = 34.0;

/// A coordinate with one decimal: enough for a screen, small in the file.
pub fn c(x: f64) -> String {
    format!("{:.1}", x)
}

/// Round tick values covering `[lo, hi]`, about `n` of them.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    // Multiples of the step, each computed afresh (adding steps up drifts: 0.6000000000000001),
    // then rounded to the step's own precision.
    let digits = (-step.log10().floor()).max(0.0) as i32 + 1;
    let round = |v: f64| {
        let p = 10f64.powi(digits);
        (v * p).round() / p
    };
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| round(k as f64 * step)).collect()
}

/// Round ticks from 0 whose last one is at or above `top`, so that no point is drawn above the
/// highest label.
pub fn ticks_covering(top: f64, n: usize) -> Vec<f64> {
    let mut t = ticks(0.0, top, n);
    if let (Some(&last), true) = (t.last(), t.len() >= 2) {
        if last < top {
            let step = t[1] - t[0];
            t.push(((last + step) / step).round() * step);
        }
    }
    t
}

/// A short label for a µs value on an axis.
pub fn axis_us(us: f64) -> String {
    if us.abs() >= 1000.0 {
        let ms = us / 1000.0;
        if ms.fract().abs() < 1e-9 {
            format!("{ms:.0} ms")
        } else {
            format!("{ms} ms")
        }
    } else if us.fract().abs() < 1e-9 {
        format!("{us:.0} µs")
    } else {
        format!("{us} µs")
    }
}

/// One histogram bar.
pub struct Bin {
    /// Lower edge, µs.
    pub lo: f64,
    /// Upper edge, µs (`None`: open, "≥ lo").
    pub hi: Option<f64>,
    /// Count.
    pub count: u64,
    /// Drawn in the alarm colour (gaps over the threshold).
    pub hot: bool,
}

/// A vertical marker on a histogram (mean, p99, threshold).
pub struct Marker<'a> {
    /// Where, µs.
    pub at: f64,
    /// Label.
    pub label: &'a str,
    /// CSS class.
    pub class: &'a str,
}

/// Bars of equal width, one per bin, edges labelled under them; counts on top of each bar.
/// `log_y` scales heights by log(1 + count) so a handful of long gaps stays visible beside
/// thousands of short ones.
pub fn histogram(title: &str, bins: &[Bin], markers: &[Marker<'_>], log_y: bool, y_label: &str) -> Markup {
    let pw = CHART_W - ML - MR;
    let ph = CHART_H - MT - MB;
    let n = bins.len().max(1) as f64;
    let bw = pw / n;
    let max = bins.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
    let scale = |v: f64| if log_y { (1.0 + v).ln() / (1.0 + max).ln() } else { v / max };
    // Position of a value in bin space: the bin it falls in, linearly inside it; `None` in the
    // open last bin, where a value has no place on the axis.
    let pos = |v: f64| -> Option<f64> {
        for (i, b) in bins.iter().enumerate() {
            match b.hi {
                Some(hi) if v < hi => return Some(i as f64 + ((v - b.lo) / (hi - b.lo)).clamp(0.0, 1.0)),
                None => return None,
                _ => {}
            }
        }
        Some(n)
    };
    let open = bins.last().filter(|b| b.hi.is_none());
    // Edge labels at least 48 units apart: every k-th edge, the closing one when it falls on k;
    // the open bin says "≥" under itself instead.
    let closed = bins.len() - usize::from(open.is_some());
    let mut labelled: Vec<usize> = (0..=closed).step_by((48.0 / bw).ceil().max(1.0) as usize).collect();
    // The closing edge's label ends at the plot's end: the one before it must leave it room.
    if open.is_none() && labelled.last() == Some(&closed) && labelled.len() >= 2 {
        let before = labelled[labelled.len() - 2];
        if (closed - before) as f64 * bw < 60.0 {
            labelled.remove(labelled.len() - 2);
        }
    }
    // The markers' labels as a legend above the plot, never over a bar or a count; a marker in
    // the open bin is named there, not drawn at a place that would say a wrong value.
    let legend: Vec<(String, &str, bool)> = markers
        .iter()
        .map(|m| match pos(m.at) {
            Some(_) => (m.label.to_string(), m.class, true),
            None => (format!("{} (in the last bin)", m.label), m.class, false),
        })
        .collect();
    // Laid out left to right, on as many lines as they need.
    let mut place: Vec<(f64, f64)> = Vec::with_capacity(legend.len());
    let (mut lx, mut row) = (ML, 0.0);
    for (label, _, _) in &legend {
        let w = 24.0 + 6.2 * label.chars().count() as f64;
        if lx + w > CHART_W - MR && lx > ML {
            lx = ML;
            row += 1.0;
        }
        place.push((lx, row));
        lx += w;
    }
    let legend_h = 6.0 + 12.0 * (place.last().map_or(0.0, |p| p.1) + 1.0);
    html! {
        svg.chart viewBox=(format!("0 0 {CHART_W} {}", c(CHART_H + legend_h))) role="img" aria-label=(title) {
            text.ctitle x=(c(ML)) y="14" { (title) }
            @for ((label, class, _), &(x, row)) in legend.iter().zip(&place) {
                line class=(format!("marker {class}")) x1=(c(x)) y1=(c(26.0 + 12.0 * row)) x2=(c(x + 12.0)) y2=(c(26.0 + 12.0 * row)) {}
                text class=(format!("mlabel {class}")) x=(c(x + 15.0)) y=(c(29.5 + 12.0 * row)) { (label) }
            }
            g transform=(format!("translate(0 {})", c(legend_h))) {
                text.axis x="12" y=(c(MT + ph / 2.0)) transform=(format!("rotate(-90 12 {})", c(MT + ph / 2.0))) text-anchor="middle" { (y_label) }
                line.axisline x1=(c(ML)) y1=(c(MT + ph)) x2=(c(ML + pw)) y2=(c(MT + ph)) {}
                @for (i, b) in bins.iter().enumerate() {
                    @let h = if b.count > 0 { (scale(b.count as f64) * ph).max(1.0) } else { 0.0 };
                    @let x = ML + i as f64 * bw;
                    @if b.count > 0 {
                        rect.bar.hot[b.hot].open[b.hi.is_none()] x=(c(x + 1.0)) y=(c(MT + ph - h)) width=(c((bw - 2.0).max(0.5))) height=(c(h)) {
                            title { (bin_label(b)) ": " (b.count) }
                        }
                        @if bw >= 14.0 {
                            text.count x=(c(x + bw / 2.0)) y=(c(MT + ph - h - 3.0)) text-anchor="middle" { (b.count) }
                        }
                    }
                    @if b.hi.is_none() {
                        text.axis x=(c(ML + pw)) y=(c(MT + ph + 26.0)) text-anchor="end" { "last bin: ≥ " (axis_us(b.lo)) }
                    }
                    @if labelled.contains(&i) {
                        // The edge at the plot's right end ends there, not half past it.
                        text.axis x=(c(x)) y=(c(MT + ph + 14.0)) text-anchor=(if i == bins.len() - 1 && b.hi.is_none() && bw < 40.0 { "end" } else { "middle" }) { (axis_us(b.lo)) }
                    }
                }
                @if let Some(last) = bins.last().filter(|_| open.is_none() && labelled.contains(&closed)) {
                    @if let Some(hi) = last.hi {
                        text.axis x=(c(ML + pw)) y=(c(MT + ph + 14.0)) text-anchor="end" { (axis_us(hi)) }
                    }
                }
                @for m in markers {
                    @if let Some(p) = pos(m.at) {
                        @let x = ML + p * bw;
                        line class=(format!("marker {}", m.class)) x1=(c(x)) y1=(c(MT)) x2=(c(x)) y2=(c(MT + ph)) { title { (m.label) } }
                    }
                }
            }
        }
    }
}

fn bin_label(b: &Bin) -> String {
    match b.hi {
        Some(hi) => format!("{} – {}", axis_us(b.lo), axis_us(hi)),
        None => format!("≥ {}", axis_us(b.lo)),
    }
}

/// Bins on a 1-2-5 log scale (`[0,1) [1,2) [2,5) [5,10) …`) up to the first edge above the
/// largest value and above `at_least` (so a threshold marker falls inside the chart).
pub fn log_bins(values_us: &[f64], at_least: f64) -> Vec<(f64, Option<f64>)> {
    let max = values_us.iter().copied().fold(at_least, f64::max);
    let mut edges = vec![0.0, 1.0];
    let mut mag = 1.0;
    while *edges.last().unwrap_or(&0.0) <= max {
        for m in [2.0, 5.0, 10.0] {
            edges.push(mag * m);
            if mag * m > max {
                break;
            }
        }
        mag *= 10.0;
    }
    edges.windows(2).map(|w| (w[0], Some(w[1]))).collect()
}

/// Counts `values` into `bins` (`[lo, hi)`; `hi` None is open).
pub fn count_into(values: &[f64], bins: &[(f64, Option<f64>)]) -> Vec<u64> {
    let mut counts = vec![0u64; bins.len()];
    for &v in values {
        let i = bins.iter().position(|&(_, hi)| hi.is_none_or(|hi| v < hi)).unwrap_or(bins.len() - 1);
        counts[i] += 1;
    }
    counts
}

/// One line of a per-replay chart.
pub struct Series<'a> {
    /// Legend label.
    pub name: &'a str,
    /// CSS class giving its colour.
    pub class: &'a str,
    /// (x, y) points, x ascending.
    pub points: Vec<(f64, f64)>,
}

/// A line chart of per-replay values. Up to one point per pixel column each point is drawn; past
/// that each column shows the min–max range of its points and a line through their medians.
pub fn line_chart(title: &str, series: &[Series<'_>], x_label: &str, median_line: bool) -> Markup {
    let pw = CHART_W - ML - MR;
    let ph = CHART_H - MT - MB;
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, _) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
    }
    if !x0.is_finite() {
        return html! { p.note { (title) ": no values" } };
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let ys = sorted(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let y1 = robust_top(&ys);
    let above: Vec<f64> = ys.iter().copied().filter(|y| *y > y1).collect();
    let y = YAxis::covering(y1);
    let px = |x: f64| ML + (x - x0) / (x1 - x0) * pw;
    let py = |v: f64| y.at(v);
    let columns = pw as usize;
    html! {
        svg.chart viewBox=(format!("0 0 {CHART_W} {CHART_H}")) role="img" aria-label=(title) {
            text.ctitle x=(c(ML)) y="14" { (title) }
            (y.grid())
            // x is a replay's position: whole numbers only.
            @for t in ticks(x0, x1, 6).into_iter().filter(|t| t.fract() == 0.0) {
                text.axis x=(c(px(t))) y=(c(MT + ph + 14.0)) text-anchor="middle" { (t) }
            }
            @if let Some(max) = above.last() {
                text.count x=(c(ML + pw)) y=(c(MT - 4.0)) text-anchor="end" {
                    "▲ " (above.len()) " above the scale, up to " (human_us(*max))
                }
            }
            text.axis x=(c(ML + pw / 2.0)) y=(c(CHART_H - 4.0)) text-anchor="middle" { (x_label) }
            @for s in series {
                @if s.points.len() <= columns {
                    polyline class=(format!("series {}", s.class)) points=(s.points.iter().map(|&(x, y)| format!("{},{}", c(px(x)), c(py(y)))).collect::<Vec<_>>().join(" ")) {}
                    @if s.points.len() <= columns / 3 {
                        @for &(x, y) in &s.points {
                            circle class=(format!("dot {}", s.class)) cx=(c(px(x))) cy=(c(py(y))) r="2" { title { (x) ": " (human_us(y)) } }
                        }
                    }
                } @else {
                    @let cols = per_column(&s.points, x0, x1, columns);
                    path class=(format!("band {}", s.class)) d=(cols.iter().map(|(col, lo, hi, _)| format!("M{} {}V{}", c(ML + *col as f64 + 0.5), c(py(*lo)), c(py(*hi)))).collect::<String>()) {}
                    polyline class=(format!("series {}", s.class)) points=(cols.iter().map(|(col, _, _, med)| format!("{},{}", c(ML + *col as f64 + 0.5), c(py(*med)))).collect::<Vec<_>>().join(" ")) {}
                }
                @if median_line {
                    @if let Some(m) = percentile(&sorted(s.points.iter().map(|p| p.1)), 50.0) {
                        line class=(format!("median {}", s.class)) x1=(c(ML)) y1=(c(py(m))) x2=(c(ML + pw)) y2=(c(py(m))) { title { "median " (human_us(m)) } }
                    }
                }
            }
            @if series.len() > 1 {
                @for (k, s) in series.iter().enumerate() {
                    rect class=(format!("swatch {}", s.class)) x=(c(ML + pw - 150.0)) y=(c(MT + 2.0 + 13.0 * k as f64)) width="10" height="10" {}
                    text.axis x=(c(ML + pw - 136.0)) y=(c(MT + 11.0 + 13.0 * k as f64)) { (s.name) }
                }
            }
        }
    }
}

/// The y axis of a line chart or box plots: µs from 0 to round ticks covering a top value.
struct YAxis {
    ticks: Vec<f64>,
    max: f64,
}

impl YAxis {
    /// Four or so round ticks up to at least `top` (up to 1 µs when `top` is not above 0).
    fn covering(top: f64) -> Self {
        let ticks = ticks_covering(if top > 0.0 { top } else { 1.0 }, 4);
        let max = ticks.last().copied().unwrap_or(1.0);
        YAxis { ticks, max }
    }

    /// The SVG y of value `v`, held inside the plot.
    fn at(&self, v: f64) -> f64 {
        let ph = CHART_H - MT - MB;
        MT + ph - (v / self.max).clamp(0.0, 1.0) * ph
    }

    /// A gridline across the plot at each tick, labelled left of it.
    fn grid(&self) -> Markup {
        let pw = CHART_W - ML - MR;
        html! {
            @for t in &self.ticks {
                line.gridline x1=(c(ML)) y1=(c(self.at(*t))) x2=(c(ML + pw)) y2=(c(self.at(*t))) {}
                text.axis x=(c(ML - 4.0)) y=(c(self.at(*t) + 4.0)) text-anchor="end" { (axis_us(*t)) }
            }
        }
    }
}

/// The top of a y axis: the largest value, unless a few outliers dwarf the rest (a first replay
/// that waited 300 ms for a peer beside 200 µs ones), in which case they are drawn at the top
/// edge and the axis fits the others.
fn robust_top(sorted: &[f64]) -> f64 {
    let max = sorted.last().copied().unwrap_or(0.0);
    match percentile(sorted, 95.0) {
        Some(p95) if p95 > 0.0 && max > 4.0 * p95 => p95 * 1.5,
        _ => max,
    }
}

/// The values, sorted.
pub fn sorted(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Per pixel column: (column, min, max, median) of the points falling in it.
fn per_column(points: &[(f64, f64)], x0: f64, x1: f64, columns: usize) -> Vec<(usize, f64, f64, f64)> {
    let mut buckets: Vec<Vec<f64>> = vec![Vec::new(); columns];
    for &(x, y) in points {
        let col = (((x - x0) / (x1 - x0)) * columns as f64) as usize;
        buckets[col.min(columns - 1)].push(y);
    }
    buckets
        .into_iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, mut b)| {
            b.sort_by(f64::total_cmp);
            (i, b[0], b[b.len() - 1], percentile(&b, 50.0).unwrap_or(b[0]))
        })
        .collect()
}

/// Box plots side by side, one per group: box p25–p75, line at the median, whiskers p1–p99, and
/// the samples themselves as a thin strip when there are few enough to see.
pub fn box_plots(title: &str, groups: &[(&str, &str, &[f64])]) -> Markup {
    let pw = CHART_W - ML - MR;
    let ph = CHART_H - MT - MB;
    let sorted: Vec<Vec<f64>> = groups
        .iter()
        .map(|(_, _, v)| {
            let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let top = sorted.iter().filter_map(|v| percentile(v, 99.0)).fold(0.0f64, f64::max);
    let y = YAxis::covering(top);
    let py = |v: f64| y.at(v);
    let gw = pw / groups.len().max(1) as f64;
    html! {
        svg.chart viewBox=(format!("0 0 {CHART_W} {CHART_H}")) role="img" aria-label=(title) {
            text.ctitle x=(c(ML)) y="14" { (title) }
            (y.grid())
            @for (i, ((label, class, _), v)) in groups.iter().zip(&sorted).enumerate() {
                @let cx = ML + gw * (i as f64 + 0.5);
                @let q = |p: f64| percentile(v, p).unwrap_or(0.0);
                text.axis x=(c(cx)) y=(c(MT + ph + 14.0)) text-anchor="middle" { (label) " (" (v.len()) ")" }
                @if !v.is_empty() {
                    @if v.len() <= 2000 {
                        @for (k, y) in v.iter().enumerate() {
                            // A fixed spread by rank, not random: the same input draws the same page.
                            circle class=(format!("sample {class}")) cx=(c(cx + gw * 0.3 + ((k * 7919) % 100) as f64 * gw * 0.0015)) cy=(c(py(*y))) r="1.5" {}
                        }
                    }
                    line class=(format!("whisker {class}")) x1=(c(cx)) y1=(c(py(q(1.0)))) x2=(c(cx)) y2=(c(py(q(99.0)))) {}
                    rect class=(format!("box {class}")) x=(c(cx - gw * 0.18)) y=(c(py(q(75.0)))) width=(c(gw * 0.36)) height=(c((py(q(25.0)) - py(q(75.0))).max(1.0))) {
                        title { (label) ": p25 " (human_us(q(25.0))) ", p50 " (human_us(q(50.0))) ", p75 " (human_us(q(75.0))) ", p99 " (human_us(q(99.0))) }
                    }
                    line class=(format!("bmedian {class}")) x1=(c(cx - gw * 0.18)) y1=(c(py(q(50.0)))) x2=(c(cx + gw * 0.18)) y2=(c(py(q(50.0)))) {}
                    text.count x=(c(cx - gw * 0.2)) y=(c(py(q(50.0)) + 4.0)) text-anchor="end" { (human_us(q(50.0))) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 33.0, 5), vec![0.0, 10.0, 20.0, 30.0]);
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        // Not 0.6000000000000001.
        assert_eq!(ticks(0.0, 1.0, 6), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(ticks(3.0, 4.2, 3), vec![3.0, 3.5, 4.0]);
    }

    #[test]
    fn the_axis_reaches_past_the_highest_point() {
        // GPU spans of ~257 µs: the axis must not end at 200.
        assert_eq!(ticks_covering(257.0, 4), vec![0.0, 100.0, 200.0, 300.0]);
        assert_eq!(ticks_covering(200.0, 4), vec![0.0, 50.0, 100.0, 150.0, 200.0]);
        assert_eq!(*ticks_covering(0.7, 4).last().unwrap(), 0.8);
    }

    #[test]
    fn one_far_outlier_does_not_set_the_scale() {
        let mut v: Vec<f64> = (0..99).map(|i| 200.0 + i as f64).collect();
        v.push(321_536.0);
        // p95 of 200..298 and the outlier: 200 + 94.05 = 294.05; the top is 1.5 × that.
        assert!((robust_top(&v) - 294.05 * 1.5).abs() < 1e-9);
        assert_eq!(robust_top(&[1.0, 2.0, 3.0]), 3.0);
    }

    #[test]
    fn log_bins_cover_every_value() {
        let values = [0.3, 4.0, 73.0, 199.133];
        let bins = log_bins(&values, 0.0);
        assert_eq!(bins.first().unwrap().0, 0.0);
        assert!(bins.last().unwrap().1.unwrap() > 199.133);
        // Edges 0,1,2,5,10,20,50,100,200: 0.3 → [0,1), 4 → [2,5), 73 → [50,100), 199 → [100,200).
        assert_eq!(bins.len(), 8);
        assert_eq!(count_into(&values, &bins), vec![1, 0, 1, 0, 0, 0, 1, 1]);
        assert_eq!(log_bins(&[3.0], 100.0).last().unwrap().1, Some(200.0));
    }
}
