//! A comparison as one self-contained HTML page: the verdict, the two runs and what differs, the
//! metrics table, and for traces the two GPU timelines one above the other on one time axis
//! (each from its first graph launch, so replay lines up with replay; zoom and pan move both),
//! then the kernels that changed most. The comparison's JSON document is embedded.

use crate::escape::one_line;
use launchguard_analysis::intervals::Span;
use launchguard_analysis::model::Analysis;
use launchguard_analysis::spans::Findings;
use launchguard_judge::compare::Comparison;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::{failures, kernel_tables, metric_header, metric_rows, run_line, KERNEL_HEADER, TOP_KERNELS};
use crate::charts;
use crate::html::{CSS, SCRIPT};
use crate::terminal::human_us;
use crate::timeline_svg::{self as tl, Preset, Row};

/// One side's trace, to draw.
#[derive(Debug, Clone, Copy)]
pub struct TraceSide<'a> {
    /// The spans measured in the trace.
    pub findings: &'a Findings,
    /// Its figures.
    pub analysis: &'a Analysis,
    /// The rank drawn, in runs of several.
    pub rank: Option<u64>,
}

/// Rank pairs drawn; past it, the first ones (the ranks of a regression come first) and a note.
const DRAWN_RANKS: usize = 8;

/// The comparison as an HTML page; `traces` are the pairs of baseline and current traces to
/// draw, one per rank (none for check results).
pub fn render(c: &Comparison, traces: Option<&[[TraceSide<'_>; 2]]>) -> crate::error::Result<Vec<u8>> {
    let timeline = traces.map(|pairs| {
        html! {
            @for pair in pairs.iter().take(DRAWN_RANKS) { (timeline(*pair)) }
            @if pairs.len() > DRAWN_RANKS {
                p.note { (pairs.len() - DRAWN_RANKS) " more ranks are not drawn (the metrics table and the JSON have every rank): the page draws the ranks of a regression first, then the lowest ranks." }
            }
        }
    });
    let verdict = c.verdict.as_str();
    let document = crate::escape::json(&serde_json::to_string(c)?).replace("</", "<\\/");
    let header = metric_header(c);
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "launchguard compare: " (verdict.to_uppercase()) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { "launchguard compare " span class=(format!("verdict v-{verdict}")) { (verdict.to_uppercase()) } }
                    @if let Some(r) = &c.reason { p.reason { (one_line(r)) } }
                    p.source { "baseline: " (one_line(&run_line(&c.baseline))) }
                    p.source { "current: " (one_line(&run_line(&c.current))) }
                    @for d in &c.differences {
                        p.reason { @if d.blocking { "differs: " } @else { "note: " } code { (one_line(&d.field)) } " " (one_line(&d.baseline)) " (baseline) vs " (one_line(&d.current)) " (current)" }
                    }
                }
                @let warned: Vec<String> = [("baseline", &c.baseline), ("current", &c.current)]
                    .iter()
                    .flat_map(|(side, run)| run.warnings.iter().map(move |w| format!("{side}: {w}")))
                    .collect();
                @if !warned.is_empty() {
                    section { h2 { "Warnings" } ul.warnings { @for w in &warned { li { (one_line(w)) } } } }
                }
                @let failed = failures(c);
                @if !failed.is_empty() {
                    section { h2 { "Regressions" } ul.warnings { @for f in &failed { li { (one_line(f)) } } } }
                }
                section {
                    h2 { "Metrics" }
                    @if c.comparable {
                        div.scroll { table.checks {
                            thead { tr { @for (i, h) in header.iter().enumerate() { @if i == 0 || i == 7 { th { (h) } } @else { th.num { (h) } } } } }
                            tbody {
                                @for (m, row) in c.metrics.iter().zip(metric_rows(c)) {
                                    tr class=(format!("s-{}", m.status.as_str())) {
                                        @for (i, cell) in row.iter().enumerate() {
                                            @if i == 0 { td title=(m.message) { (cell) } } @else if i == 7 { td { (cell) } } @else { td.num { (cell) } }
                                        }
                                    }
                                }
                            }
                        } }
                        p.note { "Samples: Mann–Whitney U (two-sided, alpha " (c.limits.alpha) ") and a bootstrap interval of the shift of medians (" (c.limits.resamples) " resamples); a regression needs both, with the interval past the limit. Hover a metric for the judge's sentence." }
                    } @else {
                        p.reason { "Not compared: the runs differ (--force compares anyway)." }
                    }
                }
                @if let Some(t) = &timeline { (t) }
                @let tables = kernel_tables(&c.kernels, TOP_KERNELS);
                @if !tables.is_empty() {
                    section.kernels {
                        h2 { "Kernels that changed most" }
                        @for t in &tables {
                            h3 { (t.title) }
                            div.scroll { table.checks {
                                thead { tr { @for (i, h) in KERNEL_HEADER.iter().enumerate() { @if i == 0 || i == 6 { th { (h) } } @else { th.num { (h) } } } } }
                                tbody { @for row in &t.rows { tr { @for (i, cell) in row.iter().enumerate() {
                                    @if i == 0 { td.kname { code { (cell) } } } @else if i == 6 { td { (cell) } } @else { td.num { (cell) } }
                                } } } }
                            } }
                            @if t.more > 0 { p.note { "… and " (t.more) " more; all are in the JSON document and --csv." } }
                        }
                    }
                }
                footer { "launchguard " (env!("CARGO_PKG_VERSION")) " · the comparison behind this page is in the JSON document embedded in it (#launchguard-document)" }
                script type="application/json" id="launchguard-document" { (PreEscaped(document)) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    Ok(page.into_string().into_bytes())
}

/// Where a side's time axis starts: its first graph launch (else its first GPU activity), so the
/// two runs' replays line up.
fn anchor(f: &Findings) -> Option<i64> {
    let first_launch = f.replays.iter().map(|r| r.launch.0).min();
    first_launch.or_else(|| f.extent().map(|e| e.0))
}

/// Spans moved to start from `anchor`, cut at it.
fn shifted(spans: &[Span], anchor: i64) -> Vec<Span> {
    spans.iter().filter(|s| s.1 > anchor).map(|&(s, e)| (s.max(anchor) - anchor, e - anchor)).collect()
}

/// The two traces' rows on one axis: baseline above, current below.
fn timeline(sides: [TraceSide<'_>; 2]) -> Markup {
    let findings = [sides[0].findings, sides[1].findings];
    let anchors = [anchor(findings[0]), anchor(findings[1])];
    let end = |f: &Findings, a: Option<i64>| Some(f.extent()?.1 - a?);
    let extent = end(findings[0], anchors[0]).max(end(findings[1], anchors[1])).unwrap_or(0);
    if extent <= 0 {
        return html! {};
    }
    let domain = (0, extent);
    let mut rows = Vec::new();
    for ((_, f), (which, a)) in
        sides.iter().zip(&findings).zip(["baseline", "current"].into_iter().zip(anchors))
    {
        let Some(a) = a else { continue };
        for d in &f.devices {
            let busy = shifted(&d.busy, a);
            // The rank is in the section's title: the label stays short enough not to be cut.
            let mut row =
                Row::coverage(format!("{which} GPU {}", d.label), "busy", 34.0, &busy, 0, domain, None);
            // Kernel names on hover, on the same shifted axis.
            row.names = d.named.as_ref().map(|n| crate::html::kernel_names(n, a));
            rows.push(row);
            let long: Vec<Span> = shifted(&d.long_gaps(f.threshold_ns).collect::<Vec<_>>(), a);
            rows.push(Row::marks(
                format!("gaps > {}", charts::axis_us(f.threshold_us)),
                "gap",
                &long,
                ("gap", None),
                0,
                domain,
            ));
        }
        if !f.replays.is_empty() {
            let ids: Vec<u64> = f.replays.iter().map(|r| r.index).collect();
            let launches = shifted(&f.replays.iter().map(|r| r.launch).collect::<Vec<_>>(), a);
            rows.push(Row::marks(
                "graph launches".into(),
                "launch",
                &launches,
                ("launch", Some(ids)),
                0,
                domain,
            ));
            let gpu: Vec<(u64, Span)> =
                f.replays.iter().filter_map(|r| r.gpu.map(|g| (r.index, g))).collect();
            let ids: Vec<u64> = gpu.iter().map(|g| g.0).collect();
            let spans = shifted(&gpu.iter().map(|g| g.1).collect::<Vec<_>>(), a);
            rows.push(Row::marks(
                "replays on GPU".into(),
                "replay",
                &spans,
                ("replay", Some(ids)),
                0,
                domain,
            ));
        }
        if let Some(last) = rows.last_mut() {
            last.gap = 14.0;
        }
    }
    // The first few replays of the baseline, which the current run's line up under.
    const FIRST: usize = 5;
    let mut presets = Vec::new();
    let nth = FIRST.min(findings[0].replays.len()).checked_sub(1);
    if let (Some(a), Some(r)) = (anchors[0], nth.and_then(|i| findings[0].replays.get(i))) {
        let hi = r.gpu.map_or(r.launch.1, |g| g.1) - a;
        if hi > 0 && hi * 4 <= extent {
            presets.push(Preset { label: format!("first {FIRST} replays"), range: (0, hi + hi / 10) });
        }
    }
    let t = tl::Timeline {
        origin: 0,
        domain,
        view: domain,
        rows,
        presets,
        lines: Vec::new(),
        pages: Vec::new(),
        lazy: false,
    };
    let rank = sides[0].rank.map_or(String::new(), |r| format!(", rank {r}"));
    let caption = format!("GPU timelines{rank}, baseline above current");
    html! {
        section {
            h2 { "GPU timelines" (rank) }
            p.note {
                "The baseline above, the current run below, on one axis of " (human_us(extent as f64 / 1000.0))
                " from each run's first graph launch, so that replay lines up with replay; zoom and pan move both. Each pixel column shows the busy fraction of its time; hover for the time and the kernel."
            }
            (tl::render(&t, &caption))
        }
    }
}
