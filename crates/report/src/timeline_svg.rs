//! Timelines as inline SVG that a reader can explore: rows of busy time (as the busy fraction of
//! each pixel column, so a multi-second trace with millions of kernels draws in a fixed number of
//! strokes) and rows of marks (long gaps, launches, replays), over a time axis. The page's script
//! redraws the same rows from the data embedded beside each SVG when the reader zooms or pans
//! (wheel, drag, keys, buttons) and at the page's real width, so that text keeps its size; the
//! SVG drawn here is what a page without script shows, at the reference width [`W`].
//!
//! The data is bounded whatever the trace: a row keeps its exact spans up to [`MAX_SPANS`], else
//! its busy fraction over [`FINE_COLUMNS`] columns; marks are listed one by one up to
//! [`MAX_ITEMS`], else drawn as coverage; kernel names for hovering are kept up to
//! [`launchguard_analysis::spans::MAX_NAMED`] activities per trace.

use launchguard_analysis::intervals::Span;
use maud::{html, Markup, PreEscaped};
use serde::Serialize;

use crate::charts::{axis_us, c, ticks};
use crate::terminal::human_us;

/// Width of a timeline in SVG units when drawn without script.
pub const W: f64 = 1200.0;
/// Room for the row labels.
const LABEL_W: f64 = 150.0;
/// Width of the plotting area at [`W`]: one pixel column per unit.
pub const PLOT_W: f64 = W - LABEL_W - 10.0;
const AXIS_H: f64 = 22.0;
/// Streams drawn per device; the rest are summed up in a note.
pub const MAX_STREAMS: usize = 8;
/// Marks listed one by one (each with a tooltip) up to this many per row; past it, coverage.
pub const MAX_ITEMS: usize = 1500;
/// Exact spans kept per row up to this many; past it, the busy fraction per fine column.
pub const MAX_SPANS: usize = 40_000;
/// Columns of a row's busy fraction when its spans are too many to keep (zooming past
/// `FINE_COLUMNS / PLOT_W` times shows columns, not kernels).
pub const FINE_COLUMNS: usize = 8192;

/// How a row is drawn.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// The busy fraction of each pixel column, as strokes.
    Cov,
    /// One rectangle per item (or coverage when there are many).
    Marks,
}

/// One row of a timeline. Times are ns after the timeline's origin.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Label left of the row.
    pub label: String,
    /// A secondary row (smaller label, thinner).
    pub small: bool,
    /// CSS class of what is drawn.
    pub class: &'static str,
    /// Height, SVG units.
    pub h: f64,
    /// Vertical space after it.
    pub gap: f64,
    /// How it is drawn.
    pub kind: RowKind,
    /// Exact spans, flattened `[s0, e0, s1, e1, …]`, when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spans: Option<Vec<i64>>,
    /// Busy fraction per fine column over the domain (thousandths), when the spans are not kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fine: Option<Vec<u16>>,
    /// Tooltip kind of each mark: `gap`, `launch`, `replay`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tip: Option<&'static str>,
    /// The number shown in each mark's tooltip (the replay index), in span order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<u64>>,
    /// Spans shaded behind this row (long gaps, time outside the measured windows), with classes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shade: Vec<(&'static str, Vec<i64>)>,
    /// Spans drawn over what this row draws (waiting for a peer, inside busy time), with classes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlay: Vec<(&'static str, Vec<i64>)>,
    /// Kernel names under the cursor on this row: `[s, e, name index, …]` and the names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<(Vec<i64>, Vec<String>)>,
    /// The spans in trace ns, for the drawing without script.
    #[serde(skip)]
    pub all_spans: Vec<Span>,
}

impl Row {
    /// A coverage row of `spans` (trace ns, sorted, disjoint) over `domain` (ns after `origin`):
    /// drawn as the busy fraction of `columns` columns (bounded data for each of many ranks), or,
    /// without, kept exactly unless there are more than [`MAX_SPANS`] (then in fine columns, the
    /// spans kept for the tooltips' figures).
    pub fn coverage(
        label: String,
        class: &'static str,
        h: f64,
        spans: &[Span],
        origin: i64,
        domain: Span,
        columns: Option<usize>,
    ) -> Self {
        let (columns, kept) = match columns {
            Some(c) => (c, &[][..]),
            None if spans.len() > MAX_SPANS => (FINE_COLUMNS, spans),
            None => {
                return Row {
                    spans: Some(flatten(spans, origin)),
                    ..Row::plain(label, class, h, RowKind::Cov, spans)
                }
            }
        };
        let cols = coverage(spans, domain.0 + origin, domain.1 + origin, columns);
        Row {
            fine: Some(cols.iter().map(|v| (v.min(1.0) * 1000.0).round() as u16).collect()),
            ..Row::plain(label, class, h, RowKind::Cov, kept)
        }
    }

    /// A row of `kind` over `spans` (trace ns) with nothing drawn yet: no spans or columns kept,
    /// no tooltips, nothing shaded or laid over.
    fn plain(label: String, class: &'static str, h: f64, kind: RowKind, spans: &[Span]) -> Self {
        Row {
            label,
            small: false,
            class,
            h,
            gap: 2.0,
            kind,
            spans: None,
            fine: None,
            tip: None,
            ids: None,
            shade: Vec::new(),
            overlay: Vec::new(),
            names: None,
            all_spans: spans.to_vec(),
        }
    }

    /// A row of marks: one rectangle per span, with a tooltip of kind `tip` (`gap`, `launch`,
    /// `replay`) numbered by `ids` (by position without), or coverage when there are more than
    /// [`MAX_ITEMS`].
    pub fn marks(
        label: String,
        class: &'static str,
        spans: &[Span],
        tip: (&'static str, Option<Vec<u64>>),
        origin: i64,
        domain: Span,
    ) -> Self {
        const H: f64 = 14.0;
        if spans.len() > MAX_ITEMS {
            let merged = launchguard_analysis::intervals::union(spans.to_vec());
            return Row::coverage(label, class, H, &merged, origin, domain, None);
        }
        Row {
            spans: Some(flatten(spans, origin)),
            tip: Some(tip.0),
            ids: tip.1,
            ..Row::plain(label, class, H, RowKind::Marks, spans)
        }
    }
}

fn flatten(spans: &[Span], origin: i64) -> Vec<i64> {
    spans.iter().flat_map(|&(s, e)| [s - origin, e - origin]).collect()
}

/// A preset range, offered as a button.
#[derive(Debug, Clone, Serialize)]
pub struct Preset {
    /// Button text.
    pub label: String,
    /// The range, ns after the origin.
    pub range: (i64, i64),
}

/// Everything a timeline draws.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// Axis labels count from here (trace ns; not serialized: the data is relative to it).
    #[serde(skip)]
    pub origin: i64,
    /// The whole range one can zoom out to, ns after the origin.
    pub domain: (i64, i64),
    /// The range shown first, ns after the origin.
    pub view: (i64, i64),
    /// The rows, top to bottom.
    pub rows: Vec<Row>,
    /// Preset ranges.
    pub presets: Vec<Preset>,
    /// A vertical line (the limit of a check, the common window's edges): (at, label).
    pub lines: Vec<(i64, String)>,
    /// Sets of rows shown one at a time, chosen in a picker: `(label, row indexes)`; empty: every
    /// row. Only the chosen set is drawn.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<(String, Vec<usize>)>,
    /// Drawn by the page's script only (the SVG here has the axis): many rows of data the
    /// script draws anyway.
    #[serde(skip)]
    pub lazy: bool,
}

/// Draws `t` with its data for the page's script; `caption` names it for screen readers.
pub fn render(t: &Timeline, caption: &str) -> Markup {
    let data = crate::escape::json(&serde_json::to_string(t).unwrap_or_default()).replace("</", "<\\/");
    html! {
        div.tl {
            div.tlbar {
                @for p in &t.presets {
                    button type="button" data-lo=(p.range.0) data-hi=(p.range.1) { (p.label) }
                }
                button type="button" data-lo=(t.domain.0) data-hi=(t.domain.1) { "whole" }
                @if !t.pages.is_empty() {
                    label.tlpick {
                        "show "
                        select.tlpage aria-label="which ranks to show" {
                            @for (i, (label, _)) in t.pages.iter().enumerate() { option value=(i) { (label) } }
                        }
                    }
                }
                span.tlhelp { "wheel or +/− zoom · drag or ←/→ pan · double-click or 0 resets" }
            }
            (svg(t, caption))
            script type="application/json" class="tldata" { (PreEscaped(data)) }
        }
    }
}

/// The SVG at the reference width, as the script would first draw it.
fn svg(t: &Timeline, caption: &str) -> Markup {
    let (t0, t1) = (t.view.0, t.view.1.max(t.view.0 + 1));
    let dt = (t1 - t0) as f64;
    let x = |ns: i64| LABEL_W + ((ns - t0) as f64 / dt * PLOT_W).clamp(0.0, PLOT_W);
    let mut y = AXIS_H;
    let mut rows = Vec::new();
    let shown: Vec<&Row> = match t.pages.first() {
        _ if t.lazy => Vec::new(),
        Some((_, page)) => page.iter().filter_map(|&i| t.rows.get(i)).collect(),
        None => t.rows.iter().collect(),
    };
    for r in shown {
        let rel: Vec<Span> = r.all_spans.iter().map(|&(s, e)| (s - t.origin, e - t.origin)).collect();
        rows.push(html! {
            text.rowlabel.small[r.small] x=(c(LABEL_W - 6.0)) y=(c(y + r.h / 2.0 + 4.0)) text-anchor="end" { (crate::escape::one_line(&r.label)) }
            rect.lane x=(c(LABEL_W)) y=(c(y)) width=(c(PLOT_W)) height=(c(r.h)) {}
            @for (class, spans) in &r.shade {
                @for w in spans.chunks(2).filter(|w| w[1] > t0 && w[0] < t1) {
                    rect class=(*class) x=(c(x(w[0]))) y=(c(y)) width=(c((x(w[1]) - x(w[0])).max(1.5))) height=(c(r.h)) {}
                }
            }
            @match r.kind {
                RowKind::Cov => {
                    path class=(r.class) d=(strokes(&coverage(&rel, t0, t1, PLOT_W as usize), y + r.h, r.h)) {}
                }
                RowKind::Marks => {
                    @for (i, (s, e)) in rel.iter().enumerate().filter(|(_, (s, e))| *e > t0 && *s < t1) {
                        rect class=(r.class) x=(c(x(*s))) y=(c(y)) width=(c((x(*e) - x(*s)).max(1.5))) height=(c(r.h)) {
                            title { (mark_title(r, i, *s, *e)) }
                        }
                    }
                }
            }
            @for (class, spans) in &r.overlay {
                @for w in runs_flat(spans, t1 - t0).chunks(2).filter(|w| w[1] > t0 && w[0] < t1) {
                    rect class=(*class) x=(c(x(w[0]))) y=(c(y)) width=(c((x(w[1]) - x(w[0])).max(1.0))) height=(c(r.h)) {}
                }
            }
        });
        y += r.h + r.gap;
    }
    let height = y + 4.0;
    let tick_us = ticks(t0 as f64 / 1000.0, t1 as f64 / 1000.0, 10);
    html! {
        svg.timeline viewBox=(format!("0 0 {W} {}", c(height))) role="img" aria-label=(caption) tabindex="0" {
            g.axis {
                @for tk in &tick_us {
                    @let tx = LABEL_W + (tk * 1000.0 - t0 as f64) / dt * PLOT_W;
                    line.tick x1=(c(tx)) y1=(c(AXIS_H - 4.0)) x2=(c(tx)) y2=(c(height - 4.0)) {}
                    text.axis x=(c(tx)) y=(c(AXIS_H - 8.0)) text-anchor="middle" { (axis_us(*tk)) }
                }
            }
            g.rows { @for r in rows { (r) } }
            g.lines {
                @for (at, label) in t.lines.iter().filter(|(at, _)| *at >= t0 && *at <= t1) {
                    line.vline x1=(c(x(*at))) y1=(c(AXIS_H - 4.0)) x2=(c(x(*at))) y2=(c(height - 4.0)) { title { (crate::escape::one_line(label)) } }
                }
            }
            line.cursor visibility="hidden" x1="0" y1=(c(AXIS_H - 4.0)) x2="0" y2=(c(height - 4.0)) {}
            text.readout x=(c(LABEL_W)) y="10" {}
        }
    }
}

/// Flattened spans merged where closer than a 2000th of `width`: a bounded number of overlay
/// rectangles at any zoom of the reference drawing.
fn runs_flat(spans: &[i64], width: i64) -> Vec<i64> {
    let px = (width / 2000).max(1);
    let mut out: Vec<i64> = Vec::new();
    for w in spans.chunks(2) {
        match out.len() {
            n if n >= 2 && w[0] - out[n - 1] <= px => out[n - 1] = out[n - 1].max(w[1]),
            _ => out.extend_from_slice(w),
        }
    }
    out
}

fn mark_title(r: &Row, i: usize, s: i64, e: i64) -> String {
    let len = human_us((e - s) as f64 / 1000.0);
    let id = r.ids.as_ref().and_then(|v| v.get(i)).copied().unwrap_or(i as u64);
    match r.tip {
        Some("gap") => format!("gap {len} at {}", axis_us(s as f64 / 1000.0)),
        Some("launch") => format!("launch {id}: {len}"),
        Some("replay") => format!("replay {id}: GPU span {len}"),
        _ => len,
    }
}

/// Busy fraction of each of `columns` columns of `[t0, t1)`, from sorted disjoint spans.
pub fn coverage(spans: &[Span], t0: i64, t1: i64, columns: usize) -> Vec<f64> {
    let mut frac = vec![0.0; columns];
    let dt = (t1 - t0).max(1) as f64 / columns as f64;
    let first = spans.partition_point(|s| s.1 <= t0);
    for &(s, e) in &spans[first..] {
        if s >= t1 {
            break;
        }
        let a = (s.max(t0) - t0) as f64 / dt;
        let b = (e.min(t1) - t0) as f64 / dt;
        let mut i = a.floor() as usize;
        while (i as f64) < b && i < columns {
            frac[i] += b.min(i as f64 + 1.0) - a.max(i as f64);
            i += 1;
        }
    }
    frac
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_is_the_busy_fraction_per_column() {
        // n columns over [0, n × 10): column i is [10 i, 10 i + 10).
        let n = 1000usize;
        let cov =
            coverage(&[(5, 25), (40, 41), (10 * n as i64 - 3, 10 * n as i64 + 50)], 0, 10 * n as i64, n);
        assert_eq!(cov.len(), n);
        // (5,25): half of column 0, all of 1, half of 2.
        assert!((cov[0] - 0.5).abs() < 1e-9 && (cov[1] - 1.0).abs() < 1e-9 && (cov[2] - 0.5).abs() < 1e-9);
        assert!((cov[4] - 0.1).abs() < 1e-9);
        assert!((cov[n - 1] - 0.3).abs() < 1e-9, "clipped at the range end");
        let total: f64 = cov.iter().sum::<f64>() * 10.0;
        assert!((total - (20.0 + 1.0 + 3.0)).abs() < 1e-6);
    }

    #[test]
    fn rows_past_their_budget_keep_a_bounded_summary() {
        // Spans in trace ns far from 0, as a real trace has them; the domain is after the origin.
        let origin = 1_700_000_000_000_000;
        let spans: Vec<Span> =
            (0..(MAX_SPANS as i64 + 10)).map(|i| (origin + i * 10, origin + i * 10 + 5)).collect();
        let domain = (0, spans.last().unwrap().1 - origin);
        let r = Row::coverage("GPU 0".into(), "busy", 40.0, &spans, origin, domain, None);
        assert!(r.spans.is_none());
        let fine = r.fine.unwrap();
        assert_eq!(fine.len(), FINE_COLUMNS);
        // Half of the time is busy: each column within a period's rounding of half, 0.5 overall.
        assert!(fine.iter().all(|&v| (480..=520).contains(&v)), "{:?}", &fine[..5]);
        let mean = fine.iter().map(|&v| f64::from(v)).sum::<f64>() / fine.len() as f64;
        assert!((mean - 500.0).abs() < 1.0, "{mean}");
        let few: Vec<Span> = (0..10).map(|i| (i * 10, i * 10 + 5)).collect();
        let m = Row::marks("gaps".into(), "gap", &few, ("gap", None), 0, (0, 100));
        assert_eq!(m.spans.as_ref().unwrap().len(), 20);
        let many: Vec<Span> = (0..(MAX_ITEMS as i64 + 1)).map(|i| (i * 10, i * 10 + 5)).collect();
        let m = Row::marks("gaps".into(), "gap", &many, ("gap", None), 0, (0, 100_000));
        assert!(matches!(m.kind, RowKind::Cov), "many marks become coverage");
    }
}
