//! The GPU timeline as inline SVG: per device the busy time (as the busy fraction of each pixel
//! column, so a multi-second trace with millions of kernels draws in a fixed number of strokes),
//! the gaps over the threshold highlighted, and the graph replays marked. Aggregates whenever
//! there are more things than pixels.

use launchguard_analysis::intervals::{self, Span};
use maud::{html, Markup};

use crate::charts::{axis_us, c, ticks};
use crate::terminal::human_us;
use launchguard_analysis::spans::{Findings, ReplaySpan};

/// Width of the timeline in SVG units.
pub const W: f64 = 1200.0;
/// Room for the row labels.
const LABEL_W: f64 = 130.0;
/// Width of the plotting area: one pixel column per unit.
pub const PLOT_W: f64 = W - LABEL_W - 10.0;
const COLUMNS: usize = PLOT_W as usize;
const AXIS_H: f64 = 22.0;
const BUSY_H: f64 = 40.0;
const STREAM_H: f64 = 13.0;
const MARK_H: f64 = 14.0;
const GAP: f64 = 6.0;
/// Streams drawn per device; the rest are summed up in a note.
pub const MAX_STREAMS: usize = 8;
/// Up to this many items are drawn one by one (each with a tooltip); past it, per column.
const MAX_ITEMS: usize = 1500;

/// Draws `[t0, t1)` (trace ns); axis labels count from `origin`.
pub fn timeline(f: &Findings, range: Span, origin: i64, caption: &str) -> Markup {
    let (t0, t1) = (range.0, range.1.max(range.0 + 1));
    let dt = (t1 - t0) as f64;
    let x = |t: i64| LABEL_W + ((t - t0) as f64 / dt * PLOT_W).clamp(0.0, PLOT_W);
    let mut rows: Vec<Markup> = Vec::new();
    let mut y = AXIS_H;
    for d in &f.devices {
        // Outside the measured windows (--within): shaded, not part of any figure.
        let outside = intervals::gaps(&d.windows, &[(t0, t1)]);
        let long: Vec<Span> = d.long_gaps(f.threshold_ns).filter(|g| g.1 > t0 && g.0 < t1).collect();
        let busy_label = format!("GPU {} busy", d.label);
        rows.push(html! {
            text.rowlabel x=(c(LABEL_W - 6.0)) y=(c(y + BUSY_H / 2.0 + 4.0)) text-anchor="end" { (busy_label) }
            rect.lane x=(c(LABEL_W)) y=(c(y)) width=(c(PLOT_W)) height=(c(BUSY_H)) {}
            @for (s, e) in &outside {
                rect.outside x=(c(x(*s))) y=(c(y)) width=(c((x(*e) - x(*s)).max(0.5))) height=(c(BUSY_H)) { title { "outside the --within spans" } }
            }
            @for (s, e) in runs(&long, t0, t1) {
                rect.gaphl x=(c(x(s))) y=(c(y)) width=(c((x(e) - x(s)).max(1.5))) height=(c(BUSY_H)) {}
            }
            path.busy d=(strokes(&coverage(&d.busy, t0, t1), y + BUSY_H, BUSY_H)) {}
        });
        y += BUSY_H + 2.0;
        if d.streams.len() > 1 {
            for (label, spans) in d.streams.iter().take(MAX_STREAMS) {
                rows.push(html! {
                    text.rowlabel.small x=(c(LABEL_W - 6.0)) y=(c(y + STREAM_H - 3.0)) text-anchor="end" { "stream " (label) }
                    rect.lane x=(c(LABEL_W)) y=(c(y)) width=(c(PLOT_W)) height=(c(STREAM_H - 1.0)) {}
                    path.stream d=(strokes(&coverage(spans, t0, t1), y + STREAM_H - 1.0, STREAM_H - 1.0)) {}
                });
                y += STREAM_H;
            }
            if d.streams.len() > MAX_STREAMS {
                let more = d.streams.len() - MAX_STREAMS;
                rows.push(html! {
                    text.rowlabel.small x=(c(LABEL_W - 6.0)) y=(c(y + STREAM_H - 3.0)) text-anchor="end" { "+" (more) " streams" }
                });
                y += STREAM_H;
            }
        }
        let gap_label = format!("gaps > {}", axis_us(f.threshold_us));
        rows.push(html! {
            text.rowlabel x=(c(LABEL_W - 6.0)) y=(c(y + MARK_H - 3.0)) text-anchor="end" { (gap_label) }
            rect.lane x=(c(LABEL_W)) y=(c(y)) width=(c(PLOT_W)) height=(c(MARK_H)) {}
            @if long.len() <= MAX_ITEMS {
                @for (s, e) in &long {
                    rect.gap x=(c(x(*s))) y=(c(y)) width=(c((x(*e) - x(*s)).max(1.5))) height=(c(MARK_H)) {
                        title { "gap " (human_us((e - s) as f64 / 1000.0)) " at " (axis_us((s - origin) as f64 / 1000.0)) }
                    }
                }
            } @else {
                @for (s, e) in runs(&long, t0, t1) {
                    rect.gap x=(c(x(s))) y=(c(y)) width=(c((x(e) - x(s)).max(1.5))) height=(c(MARK_H)) {}
                }
            }
        });
        y += MARK_H + GAP;
    }
    let replays: Vec<&ReplaySpan> =
        f.replays.iter().filter(|r| r.whole().1 > t0 && r.whole().0 < t1).collect();
    if !f.replays.is_empty() {
        let one_by_one = replays.len() <= MAX_ITEMS && replays.len() as f64 <= PLOT_W / 3.0;
        rows.push(html! {
            text.rowlabel x=(c(LABEL_W - 6.0)) y=(c(y + MARK_H - 3.0)) text-anchor="end" { "graph launches" }
            rect.lane x=(c(LABEL_W)) y=(c(y)) width=(c(PLOT_W)) height=(c(MARK_H)) {}
            text.rowlabel x=(c(LABEL_W - 6.0)) y=(c(y + 2.0 * MARK_H + 2.0 - 3.0)) text-anchor="end" { "replays on GPU" }
            rect.lane x=(c(LABEL_W)) y=(c(y + MARK_H + 2.0)) width=(c(PLOT_W)) height=(c(MARK_H)) {}
            @if one_by_one {
                @for r in &replays {
                    rect.launch x=(c(x(r.launch.0))) y=(c(y + 2.0)) width=(c((x(r.launch.1) - x(r.launch.0)).max(1.0))) height=(c(MARK_H - 4.0)) {
                        title { "launch " (r.index) ": " (human_us((r.launch.1 - r.launch.0) as f64 / 1000.0)) }
                    }
                    @if let Some((s, e)) = r.gpu {
                        rect class=(if r.index % 2 == 0 { "replay r0" } else { "replay r1" }) x=(c(x(s))) y=(c(y + MARK_H + 2.0)) width=(c((x(e) - x(s)).max(1.0))) height=(c(MARK_H)) {
                            title { "replay " (r.index) ": GPU span " (human_us((e - s) as f64 / 1000.0)) ", " (human_us((s - r.launch.0) as f64 / 1000.0)) " after its launch started" }
                        }
                    }
                }
            } @else {
                path.launchdensity d=(strokes(&density(replays.iter().map(|r| r.launch.0), t0, t1), y + MARK_H, MARK_H)) {}
                path.replaydensity d=(strokes(&coverage(&intervals::union(replays.iter().filter_map(|r| r.gpu).collect()), t0, t1), y + 2.0 * MARK_H + 2.0, MARK_H)) {}
            }
        });
        y += 2.0 * MARK_H + 2.0 + GAP;
    }
    let height = y + 4.0;
    let tick_us = ticks((t0 - origin) as f64 / 1000.0, (t1 - origin) as f64 / 1000.0, 10);
    html! {
        svg.timeline viewBox=(format!("0 0 {W} {}", c(height))) role="img" aria-label=(caption)
            data-t0-us=((t0 - origin) as f64 / 1000.0) data-t1-us=((t1 - origin) as f64 / 1000.0)
            data-x0=(LABEL_W) data-pw=(PLOT_W) {
            @for t in &tick_us {
                @let tx = LABEL_W + (t * 1000.0 - (t0 - origin) as f64) / dt * PLOT_W;
                line.tick x1=(c(tx)) y1=(c(AXIS_H - 4.0)) x2=(c(tx)) y2=(c(height - 4.0)) {}
                text.axis x=(c(tx)) y=(c(AXIS_H - 8.0)) text-anchor="middle" { (axis_us(*t)) }
            }
            @for r in rows { (r) }
            line.cursor visibility="hidden" x1="0" y1=(c(AXIS_H - 4.0)) x2="0" y2=(c(height - 4.0)) {}
            text.readout x=(c(LABEL_W - 6.0)) y="12" text-anchor="end" {}
        }
    }
}

/// Busy fraction of each pixel column of `[t0, t1)`, from sorted disjoint spans.
pub fn coverage(spans: &[Span], t0: i64, t1: i64) -> Vec<f64> {
    let mut frac = vec![0.0; COLUMNS];
    let dt = (t1 - t0) as f64 / COLUMNS as f64;
    let first = spans.partition_point(|s| s.1 <= t0);
    for &(s, e) in &spans[first..] {
        if s >= t1 {
            break;
        }
        let a = (s.max(t0) - t0) as f64 / dt;
        let b = (e.min(t1) - t0) as f64 / dt;
        let mut i = a.floor() as usize;
        while (i as f64) < b && i < COLUMNS {
            frac[i] += b.min(i as f64 + 1.0) - a.max(i as f64);
            i += 1;
        }
    }
    frac
}

/// Events per column, scaled so the fullest column is 1.
fn density(starts: impl Iterator<Item = i64>, t0: i64, t1: i64) -> Vec<f64> {
    let mut n = vec![0.0; COLUMNS];
    let dt = (t1 - t0) as f64 / COLUMNS as f64;
    for s in starts.filter(|s| (t0..t1).contains(s)) {
        n[(((s - t0) as f64 / dt) as usize).min(COLUMNS - 1)] += 1.0;
    }
    let max = n.iter().copied().fold(0.0, f64::max);
    if max > 0.0 {
        n.iter_mut().for_each(|v| *v /= max);
    }
    n
}

/// One vertical stroke per column, as tall as its value (0–1) times `h`, standing on `base`.
fn strokes(values: &[f64], base: f64, h: f64) -> String {
    let mut d = String::new();
    for (i, v) in values.iter().enumerate() {
        if *v > 0.0 {
            // A sliver of activity still shows as one pixel.
            let len = (v.min(1.0) * h).max(1.0);
            d.push_str(&format!("M{} {}v-{}", c(LABEL_W + i as f64 + 0.5), c(base), c(len)));
        }
    }
    d
}

/// Spans merged when they fall in the same or adjacent pixel columns: at most one rectangle per
/// column, however many gaps a serving trace has.
fn runs(spans: &[Span], t0: i64, t1: i64) -> Vec<Span> {
    let px = ((t1 - t0) / COLUMNS as i64).max(1);
    let mut out: Vec<Span> = Vec::new();
    for &(s, e) in spans {
        match out.last_mut() {
            Some(last) if s - last.1 <= px => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_is_the_busy_fraction_per_column() {
        // COLUMNS columns over [0, COLUMNS × 10): column i is [10 i, 10 i + 10).
        let n = COLUMNS as i64;
        let cov = coverage(&[(5, 25), (40, 41), (10 * n - 3, 10 * n + 50)], 0, 10 * n);
        assert_eq!(cov.len(), COLUMNS);
        // (5,25): half of column 0, all of 1, half of 2.
        assert!((cov[0] - 0.5).abs() < 1e-9 && (cov[1] - 1.0).abs() < 1e-9 && (cov[2] - 0.5).abs() < 1e-9);
        assert!((cov[4] - 0.1).abs() < 1e-9);
        assert!((cov[COLUMNS - 1] - 0.3).abs() < 1e-9, "clipped at the range end");
        let total: f64 = cov.iter().sum::<f64>() * 10.0;
        assert!((total - (20.0 + 1.0 + 3.0)).abs() < 1e-6);
    }

    #[test]
    fn runs_merge_within_a_pixel() {
        let px = 10;
        let n = COLUMNS as i64;
        let r = runs(&[(0, 5), (12, 15), (40, 50)], 0, px * n);
        assert_eq!(r, vec![(0, 15), (40, 50)]);
    }
}
