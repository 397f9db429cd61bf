//! One self-contained HTML page (inline CSS, inline SVG, one small inline script; nothing loaded
//! from anywhere): the verdict and checks, the GPU timeline with the long gaps and the replays,
//! histograms of launch durations and gap lengths, per-replay figures, and for `check` the host
//! cost per phase side by side. With several ranks, a table of the ranks and the figures that
//! compare them come first, and the trace sections below say which rank they show.

use crate::escape::one_line;
use launchguard_analysis::intervals::{self, Span};
use launchguard_analysis::kernels::{KernelRow, Kernels};
use launchguard_analysis::model::{Analysis, Device, Steady};
use launchguard_analysis::spans::{Findings, RankSpans, RanksSpans};
use launchguard_judge::{Check, CheckId, RanksReport, Status};
use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::charts::{self, box_plots, count_into, histogram, line_chart, log_bins, Bin, Marker, Series};
use crate::terminal::{human_bytes, human_us, opt_us};
use crate::timeline_svg::{self as tl, Preset, Row};
use crate::{value_text, View};

/// The HTML page of a run.
pub(crate) fn run(view: &View<'_>) -> String {
    // Every rank's spans, when the view has them: the ranks are drawn on one clock, and each rank
    // gets its own detail — past [`DETAIL_RANKS`], the worst rank and one rank of each group of
    // alike ranks (every rank stays in the tables and the ranks timeline).
    let spans = view.ranks.as_ref().and_then(|r| r.drawn);
    let mut details = Vec::new();
    if let Some(r) = &view.ranks {
        let detailed = detailed_ranks(r.analysis);
        for k in r.analysis.ranks.iter().filter(|k| detailed.contains(&k.rank)) {
            if let Some(findings) = r.findings_of(k.rank) {
                details.push(RankDetail {
                    rank: k.rank,
                    analysis: &k.analysis.figures,
                    checks: &k.analysis.checks,
                    findings,
                });
            }
        }
    }
    page(view, view.findings, &details, spans).into_string()
}

/// Ranks whose every section the page holds, up to this many ranks; past it, the worst rank and
/// one rank of each of the first [`GROUPS_DETAILED`] groups of alike ranks.
const DETAIL_RANKS: usize = 8;
/// Groups of alike ranks one rank of which is drawn in detail.
const GROUPS_DETAILED: usize = 4;
/// The embedded result document is left out past this size (the JSON output has it).
const MAX_DOCUMENT: usize = 4 << 20;

/// The ranks drawn in detail.
fn detailed_ranks(r: &RanksReport) -> Vec<u64> {
    if r.ranks.len() <= DETAIL_RANKS {
        return r.ranks.iter().map(|k| k.rank).collect();
    }
    let mut out = vec![r.across.worst_rank];
    for g in crate::ranks_table::groups(r).iter().take(GROUPS_DETAILED) {
        if let Some(&first) = g.ranks.first() {
            if !g.ranks.contains(&r.across.worst_rank) {
                out.push(first);
            }
        }
    }
    out.sort_unstable();
    out
}

/// One rank's trace, ready to draw.
struct RankDetail<'a> {
    rank: u64,
    analysis: &'a Analysis,
    checks: &'a [Check],
    findings: &'a Findings,
}

pub(crate) const CSS: &str = include_str!("html.css");
pub(crate) const SCRIPT: &str = include_str!("html.js");

fn page(
    view: &View<'_>,
    f: Option<&Findings>,
    details: &[RankDetail<'_>],
    drawn: Option<crate::RanksDrawn<'_>>,
) -> Markup {
    let spans = drawn.map(|d| d.across);
    let verdict = view.verdict.as_str();
    let title = match (&view.ranks, view.analysis) {
        (Some(r), _) => format!(
            "launchguard {}: {} — {}",
            view.command,
            verdict.to_uppercase(),
            crate::ranks_table::headline(r.analysis)
        ),
        (None, Some(a)) => format!(
            "launchguard {}: {} — {}",
            view.command,
            verdict.to_uppercase(),
            one_line(file_name(&a.source.path))
        ),
        (None, None) => format!("launchguard {}: {}", view.command, verdict.to_uppercase()),
    };
    // The result document, for whoever wants the numbers; `</` escaped so it cannot end the script.
    let document = crate::escape::json(&view.document.compact()).replace("</", "<\\/");
    let embedded = document.len() <= MAX_DOCUMENT;
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { "launchguard " (view.command) " " span class=(format!("verdict v-{verdict}")) { (verdict.to_uppercase()) } }
                    @if let Some(r) = view.reason { p.reason { (r) } }
                    @if let Some(r) = &view.ranks {
                        (ranks_source_line(r.analysis))
                    } @else if let Some(a) = view.analysis {
                        (source_line(a))
                    }
                }
                @if let Some(r) = &view.ranks {
                    (ranks(r.analysis))
                    @if let Some(d) = drawn { (ranks_timeline(d.across, d.ranks, r.analysis)) }
                    (checks(view))
                    @if details.len() < r.analysis.ranks.len() && !details.is_empty() {
                        p.note {
                            "Drawn in detail below: the worst rank and one rank of each group of alike ranks ("
                            (details.iter().map(|d| format!("rank {}", d.rank)).collect::<Vec<_>>().join(", "))
                            "); every rank is in the tables and the ranks timeline above, and in the JSON and CSV."
                        }
                    }
                    @if !details.is_empty() {
                        @for d in details {
                            section.rank id=(format!("rank-{}", d.rank)) {
                                h2 { "Rank " (d.rank) @if d.rank == r.analysis.across.worst_rank { " (the worst rank)" } }
                                p.note { "Rank " (d.rank) "'s trace alone, over its own window." }
                                (source_line(d.analysis))
                            }
                            @let own = spans.and_then(|s| Some((s.ranks.iter().find(|k| k.rank == d.rank)?, s.common)));
                            (trace_sections(d.analysis, d.checks, d.findings, &format!("rank {}", d.rank), own))
                        }
                    } @else if let (Some(a), Some(f)) = (view.analysis, f) {
                        section #detail {
                            h2 { "Detail: rank " (r.detail_rank) }
                            p.note { (crate::ranks_table::detail_line(r)) }
                            (source_line(a))
                        }
                        (trace_sections(a, view.checks, f, "", None))
                    }
                } @else {
                    @if let Some(a) = view.analysis { (figures(a)) }
                    (checks(view))
                    @if let (Some(a), Some(f)) = (view.analysis, f) {
                        (timelines(a, f, "", None))
                        (kernels_section(&a.kernels, ""))
                        (histograms(view.checks, a, f, ""))
                        (replays(a))
                    }
                }
                @if !view.phases.is_empty() { (phases(view)) }
                @if let (Some(a), None) = (view.analysis, &view.ranks) {
                    @if !a.warnings.is_empty() {
                        section { h2 { "Warnings" } ul.warnings { @for w in &a.warnings { li { (one_line(w)) } } } }
                    }
                }
                @if embedded {
                    footer { "launchguard " (env!("CARGO_PKG_VERSION")) " · the numbers behind this page are in the JSON document embedded in it (#launchguard-document)" }
                    script type="application/json" id="launchguard-document" { (PreEscaped(document)) }
                } @else {
                    footer { "launchguard " (env!("CARGO_PKG_VERSION")) " · the numbers behind this page (" (human_bytes(document.len() as u64)) " of JSON, too large to embed) are in --format json" }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
}

/// The sections of one trace (one rank's, with several): figures, timeline, kernels,
/// distributions, per-replay charts.
fn trace_sections(
    a: &Analysis,
    checks: &[Check],
    f: &Findings,
    whose: &str,
    rank: Option<(&RankSpans, Option<Span>)>,
) -> Markup {
    html! {
        (figures(a))
        (timelines(a, f, whose, rank))
        (kernels_section(&a.kernels, whose))
        (histograms(checks, a, f, whose))
        (replays(a))
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn source_line(a: &Analysis) -> Markup {
    let s = &a.source;
    let devices: Vec<String> = a
        .devices
        .iter()
        .map(|d| match &d.name {
            Some(n) => format!("GPU {} ({})", one_line(&d.device), one_line(n)),
            None => format!("GPU {}", one_line(&d.device)),
        })
        .collect();
    html! {
        p.source {
            code { (one_line(&s.path)) } " · " (human_bytes(s.bytes)) @if s.gzip { " gzip" } " · " (s.events) " events"
            @if let Some(p) = &a.trace.profiler { " · " (one_line(p)) }
            @if let (Some(r), Some(w)) = (a.trace.rank, a.trace.world_size) { " · rank " (r) " of " (w) }
            @if !devices.is_empty() { " · " (devices.join(", ")) }
            @if let Some(w) = &a.within { " · within spans matching " code { (one_line(w)) } (crate::terminal::within_mode(a)) }
        }
    }
}

/// The ranks' traces, for the header of a multi-rank page.
fn ranks_source_line(r: &RanksReport) -> Markup {
    let bytes: u64 = r.ranks.iter().map(|k| k.analysis.figures.source.bytes).sum();
    let events: u64 = r.ranks.iter().map(|k| k.analysis.figures.source.events).sum();
    html! {
        p.source {
            (crate::ranks_table::headline(r))
            @if r.ranks.len() > DETAIL_RANKS {
                " · " (r.ranks.len()) " traces, " (human_bytes(bytes)) ", " (events) " events (each rank's file: the JSON, the CSV)"
            }
            @for k in r.ranks.iter().filter(|_| r.ranks.len() <= DETAIL_RANKS) {
                @let s = &k.analysis.figures.source;
                " · rank " (k.rank) " " code { (one_line(file_name(&s.path))) } " (" (human_bytes(s.bytes)) @if s.gzip { " gzip" } ", " (s.events) " events)"
            }
        }
    }
}

/// Columns of the ranks' first table (the figures the verdicts are judged on).
const FIRST: usize = 4;

/// The ranks side by side, one table row per rank, then the figures that compare them.
fn ranks(r: &RanksReport) -> Markup {
    let t = crate::ranks_table::table(r);
    html! {
        section #ranks {
            h2 { "Ranks" }
            @if r.ranks.len() > crate::ranks_table::RANKS_SIDE_BY_SIDE { (distribution(r)) }
            p.note { (t.note) }
            // Many ranks: folded under the distribution (every rank stays one click away).
            @if r.ranks.len() > crate::ranks_table::RANKS_SIDE_BY_SIDE {
                details.ranks { summary { "Each rank (" (r.ranks.len()) " rows)" } (rank_tables(&t)) }
            } @else {
                (rank_tables(&t))
            }
            p.note { "Across ranks:" }
            table.checks {
                tbody {
                    @for (label, text) in crate::ranks_table::across(r) {
                        tr { th { (label) } td { (text) } }
                    }
                }
            }
            @if !r.warnings.is_empty() {
                ul.warnings {
                    @for w in r.warnings.iter().take(MAX_WARNINGS) { li { (one_line(w)) } }
                    @if r.warnings.len() > MAX_WARNINGS { li { (r.warnings.len() - MAX_WARNINGS) " more (the JSON lists them)" } }
                }
            }
        }
    }
}

/// The per-rank tables: the figures the verdicts are judged on, then each rank's own window and
/// launches; each fits an 800 px page.
fn rank_tables(t: &crate::ranks_table::Table) -> Markup {
    html! {
            @for (part, cols) in [(0, 0..FIRST.min(t.columns.len())), (1, FIRST.min(t.columns.len())..t.columns.len())] {
                div.scroll { table.checks.ranks {
                    thead { tr {
                        th { "rank" } @if part == 0 { th { "verdict" } }
                        @for c in &t.columns[cols.clone()] { th class=[c.num.then_some("num")] { (c.name) } }
                    } }
                    tbody {
                        @for row in &t.rows {
                            @let v = row.verdict.as_str();
                            tr class=(format!("s-{v}")) {
                                td.nowrap { "rank " (row.rank) }
                                @if part == 0 { td { span class=(format!("pill p-{v}")) { (v) } } }
                                @for (c, text) in t.columns[cols.clone()].iter().zip(&row.cells[cols.clone()]) {
                                    td class=[c.num.then_some("num")] { (text) }
                                }
                            }
                        }
                    }
                } }
            }
    }
}

/// Warnings listed on the page; the rest are counted.
const MAX_WARNINGS: usize = 20;

/// Many ranks at a glance: each figure's distribution across ranks with the worst ranks, and the
/// groups of alike ranks.
fn distribution(r: &RanksReport) -> Markup {
    use crate::ranks_table::{self as rt, rank_list};
    let groups = rt::groups(r);
    html! {
        p.note { "Across the " (r.ranks.len()) " ranks (each rank's own row follows): min, median, p90 and max of each figure (nearest rank), and the ranks at its worse end." }
        div.scroll { table.checks {
            thead { tr { th { "figure" } th.num { "min" } th.num { "median" } th.num { "p90" } th.num { "max" } th { "worst ranks" } } }
            tbody {
                @for f in rt::judged_figures(r).iter().chain(&rt::own_figures(r)).filter(|f| !f.values.is_empty()) {
                    @if let Some(d) = f.distribution() {
                        @let (worst, more) = f.worst(3);
                        tr {
                            td { (f.label()) }
                            @for v in [d.min, d.median, d.p90, d.max] { td.num { (f.cell(v)) } }
                            td {
                                @if d.min != d.max && !worst.is_empty() {
                                    (worst.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
                                    @if more > 0 { " and " (more) " more alike" }
                                }
                            }
                        }
                    }
                }
            }
        } }
        p.note { "Ranks alike (one verdict; occupancy excluding waiting within " (rt::ALIKE_POINTS) " point; waiting and launch median within " (rt::ALIKE_RATIO) "×): " (groups.len()) " group(s)." }
        div.scroll { table.checks {
            thead { tr { th { "verdict" } th.num { "ranks" } th.num { "occupancy excl. waiting" } th { "which" } } }
            tbody {
                @for g in groups.iter().take(20) {
                    @let v = g.verdict.as_str();
                    tr class=(format!("s-{v}")) {
                        td { span class=(format!("pill p-{v}")) { (v) } }
                        td.num { (g.ranks.len()) }
                        td.num { (format!("{:.1}–{:.1}%", g.occupancy.0 * 100.0, g.occupancy.1 * 100.0)) }
                        td { (rank_list(&g.ranks, 12)) }
                    }
                }
            }
        } }
    }
}

/// A device's steady state of graph replays when it is not its whole window: then the checks
/// judge it, and a figure of the whole trace must say which window it is of.
pub(crate) fn steady_of(d: &Device) -> Option<&Steady> {
    d.steady.as_ref().filter(|s| s.before_us > 0.0 || s.after_us > 0.0)
}

fn figures(a: &Analysis) -> Markup {
    let g = &a.graph_launches;
    let r = &a.replay_summary;
    html! {
        section.cards {
            @for d in &a.devices {
                @let f = &d.figures;
                // Where the checks judge the steady state of graph replays, the cards show its
                // figures, as the checks say them, and the whole trace's under them.
                @if let Some(st) = steady_of(d) {
                    div.card {
                        div.k { "GPU " (d.device) " occupancy, steady state" }
                        div.v { (format!("{:.1}%", st.figures.occupancy * 100.0)) }
                        div.s { "busy " (human_us(st.figures.busy_us)) " of " (human_us(st.figures.window_us)) "; whole trace " (format!("{:.1}%", f.occupancy * 100.0)) " of " (human_us(f.window_us)) }
                    }
                    div.card {
                        div.k { "gaps > " (charts::axis_us(f.gaps.threshold_us)) ", steady state" }
                        div.v { (st.figures.gaps.over_threshold) }
                        div.s { "of " (st.figures.gaps.count) "; whole trace " (f.gaps.over_threshold) " of " (f.gaps.count) ", longest " (human_us(f.gaps.max_us)) }
                    }
                } @else {
                    div.card {
                        div.k { "GPU " (d.device) " occupancy" }
                        div.v { (format!("{:.1}%", f.occupancy * 100.0)) }
                        div.s { "busy " (human_us(f.busy_us)) " of " (human_us(f.window_us)) }
                    }
                    div.card {
                        div.k { "gaps > " (charts::axis_us(f.gaps.threshold_us)) }
                        div.v { (f.gaps.over_threshold) }
                        div.s { "of " (f.gaps.count) " gaps; longest " (human_us(f.gaps.max_us)) }
                    }
                }
            }
            div.card {
                div.k { "graph launch (host call)" }
                @if g.count > 0 {
                    @let [mean, p50, p99, _] = crate::terminal::launch_figures(g);
                    div.v { (mean) }
                    div.s { "mean of " (g.count) " × " (g.apis.join("/")) "; p50 " (p50) ", p99 " (p99) }
                } @else {
                    div.v { "none" }
                    div.s { "no graph launch in the trace" }
                }
            }
            @if r.count > 0 {
                div.card {
                    div.k { "replays" }
                    div.v { (r.count) }
                    div.s { (crate::terminal::replay_kernels(a)) "; launch→first kernel p50 " (opt_us(r.latency_p50_us)) ", GPU span p50 " (opt_us(r.gpu_span_p50_us)) }
                }
            }
        }
    }
}

fn checks(view: &View<'_>) -> Markup {
    html! {
        section {
            h2 { "Checks" }
            table.checks {
                thead { tr { th { "" } th { "check" } th.num { "value" } th.num { "limit" } th { "result" } } }
                tbody {
                    @for c in view.checks {
                        tr class=(format!("s-{}", c.status.as_str())) {
                            td { span class=(format!("pill p-{}", c.status.as_str())) { (c.status.as_str()) } }
                            td { code { (c.id) } }
                            td.num { (value_text(&c.value)) }
                            td.num { (value_text(&c.limit)) }
                            td {
                                (c.message)
                                @if let Some(h) = &c.hint {
                                    @if c.status >= Status::Warn { div.hint { "hint: " (h) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The GPU timeline of one trace: per device its busy time (kernel names on hover), streams, the
/// gaps over the threshold, the launches and the replays on the GPU; zoom presets on the longest
/// gap and on the last replays.
/// With several ranks, `rank` is this rank's spans on the common clock and the common window: its
/// waiting for peers is shaded on its busy row, and the timeline opens on the common window.
fn timelines(a: &Analysis, f: &Findings, whose: &str, rank: Option<(&RankSpans, Option<Span>)>) -> Markup {
    let Some((t0, t1)) = f.extent() else { return html! {} };
    let extent = t1 - t0;
    let domain = (0, extent);
    // Kernel names for hovering, when the trace is small enough to carry them.
    let hover = f.devices.iter().all(|d| d.named.is_some());
    let mut rows = Vec::new();
    for d in &f.devices {
        let mut busy =
            Row::coverage(format!("GPU {} busy", d.label), "busy", 40.0, &d.busy, t0, domain, None);
        let outside = intervals::gaps(&d.windows, &[(t0, t1)]);
        let long: Vec<Span> = d.long_gaps(f.threshold_ns).collect();
        let flat = |v: &[Span]| v.iter().flat_map(|&(s, e)| [s - t0, e - t0]).collect::<Vec<i64>>();
        busy.shade = vec![("outside", flat(&outside)), ("gaphl", flat(&runs(&long, extent)))];
        if let Some((k, _)) = rank {
            // Back on this trace's clock.
            let waiting: Vec<Span> =
                k.waiting.iter().map(|&(s, e)| (s - k.offset_ns, e - k.offset_ns)).collect();
            // Merged within a 4000th of the window: bounded however many collectives ran.
            busy.overlay.push(("waitshade", flat(&runs(&waiting, extent))));
        }
        busy.names = d.named.as_ref().map(|n| kernel_names(n, t0));
        rows.push(busy);
        if d.streams.len() > 1 {
            for (label, spans) in d.streams.iter().take(tl::MAX_STREAMS) {
                let mut r = Row::coverage(format!("stream {label}"), "stream", 12.0, spans, t0, domain, None);
                r.small = true;
                rows.push(r);
            }
        }
        let mut gaps = Row::marks(
            format!("gaps > {}", charts::axis_us(f.threshold_us)),
            "gap",
            &long,
            ("gap", None),
            t0,
            domain,
        );
        gaps.gap = 8.0;
        rows.push(gaps);
    }
    if !f.replays.is_empty() {
        let ids: Vec<u64> = f.replays.iter().map(|r| r.index).collect();
        let launches: Vec<Span> = f.replays.iter().map(|r| r.launch).collect();
        rows.push(Row::marks(
            "graph launches".into(),
            "launch",
            &launches,
            ("launch", Some(ids)),
            t0,
            domain,
        ));
        let gpu: Vec<(u64, Span)> = f.replays.iter().filter_map(|r| r.gpu.map(|g| (r.index, g))).collect();
        let ids: Vec<u64> = gpu.iter().map(|g| g.0).collect();
        let spans: Vec<Span> = gpu.iter().map(|g| g.1).collect();
        rows.push(Row::marks("replays on GPU".into(), "replay", &spans, ("replay", Some(ids)), t0, domain));
    }
    let mut presets = Vec::new();
    // The longest gap over the threshold, wide enough to show the replays around it.
    if let Some((s, e)) =
        f.devices.iter().flat_map(|d| d.long_gaps(f.threshold_ns)).max_by_key(|(s, e)| (e - s, -s))
    {
        let width = ((e - s) * 12).max(1_000_000).min(extent);
        let lo = (s + (e - s) / 2 - width / 2).clamp(t0, t1 - width);
        presets.push(Preset {
            label: format!("longest gap ({})", human_us((e - s) as f64 / 1000.0)),
            range: (lo - t0, lo - t0 + width),
        });
    }
    // The last few replays' GPU work: the host may run many replays ahead of the GPU, so their
    // launches are not where their work is.
    const LAST: usize = 5;
    let gpu: Vec<Span> = f.replays.iter().filter_map(|r| r.gpu).collect();
    if let Some(last) = gpu.get(gpu.len().saturating_sub(LAST)..).filter(|l| !l.is_empty()) {
        let lo = last.iter().map(|g| g.0).min().unwrap_or(t0);
        let hi = last.iter().map(|g| g.1).max().unwrap_or(t1);
        let pad = (hi - lo) / 20;
        if hi > lo && (hi - lo) * 4 <= extent {
            presets.push(Preset {
                label: format!("last {} replays", last.len()),
                range: ((lo - pad).max(t0) - t0, (hi + pad).min(t1) - t0),
            });
        }
    }
    // With several ranks: first the window every rank was recorded in, on this trace's clock.
    let common = rank.and_then(|(k, c)| c.map(|(s, e)| (s - k.offset_ns - t0, e - k.offset_ns - t0)));
    let view = match common {
        Some((s, e)) if s.max(0) < e.min(extent) => {
            let range = (s.max(0), e.min(extent));
            if range != domain {
                presets.insert(0, Preset { label: "common window".into(), range });
            }
            range
        }
        _ => domain,
    };
    let timeline = tl::Timeline {
        origin: t0,
        domain,
        view,
        rows,
        presets,
        lines: Vec::new(),
        pages: Vec::new(),
        lazy: false,
    };
    let over: u64 = a.devices.iter().map(|d| d.figures.gaps.over_threshold).sum();
    let title = if whose.is_empty() { "GPU timeline".to_string() } else { format!("GPU timeline, {whose}") };
    html! {
        section {
            h2 { (title) }
            p.note {
                @if a.within.is_some() {
                    (human_us(extent as f64 / 1000.0)) " from the first matching span to the last (grey: outside them, not measured)"
                } @else {
                    (human_us(extent as f64 / 1000.0)) " from the first GPU activity to the last"
                }
                "; each pixel column shows the busy fraction of its time. " span.key.gapkey { } " " (over) " gap(s) over " (charts::axis_us(f.threshold_us))
                @if !f.replays.is_empty() { ", " span.key.replaykey { } " " (f.replays.len()) " graph replay(s)" }
                "."
                @if rank.is_some() { " " span.key.waitkey {} " waiting for a peer; shown first over the window every rank was recorded in (“whole” for all of it)." }
                @if hover { " Hover for the time and the kernel." } @else { " Hover for the time (kernel names are kept for traces of up to " (launchguard_analysis::spans::MAX_NAMED) " activities; the kernel table has them all)." }
            }
            (tl::render(&timeline, &title))
        }
    }
}

/// Each activity of a device as `[start, end, name index]` after `origin`, with the names
/// shortened for display.
pub(crate) fn kernel_names(
    named: &launchguard_analysis::spans::Named,
    origin: i64,
) -> (Vec<i64>, Vec<String>) {
    let items = named.items.iter().flat_map(|&(s, e, i)| [s - origin, e - origin, i64::from(i)]).collect();
    let full: Vec<&str> = named.names.iter().map(String::as_str).collect();
    (items, crate::names::distinct(&full))
}

/// Spans merged when closer than a 4000th of `extent`: a bounded number of shaded bands however
/// many gaps a serving trace has.
fn runs(spans: &[Span], extent: i64) -> Vec<Span> {
    let px = (extent / 4000).max(1);
    let mut out: Vec<Span> = Vec::new();
    for &(s, e) in spans {
        match out.last_mut() {
            Some(last) if s - last.1 <= px => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Ranks drawn in the ranks timeline with their three rows and kernel names; past it, one row of
/// each rank's busy time and one of its waiting, as the busy fraction of fixed columns.
const FULL_RANK_ROWS: usize = 8;
/// Ranks shown at once in the ranks timeline; more are picked page by page.
const RANKS_PER_PAGE: usize = 64;

/// Every rank one above the other on the common clock: compute, collectives without their
/// waiting, and waiting for peers, first over the common window (where the verdicts are judged);
/// kernel names on hover. Many ranks: each rank's busy time and waiting as the busy fraction of
/// fixed columns, 64 ranks at a time, chosen in a picker (the worst first, then by rank).
fn ranks_timeline(spans: &RanksSpans, own: &[(u64, Findings)], r: &RanksReport) -> Markup {
    let Some((lo, hi)) = spans.extent() else { return html! {} };
    let origin = spans.common.map_or(lo, |c| c.0);
    let domain = (lo - origin, hi - origin);
    let view = spans.common.map_or(domain, |(s, e)| (s - origin, e - origin));
    let many = spans.ranks.len() > FULL_RANK_ROWS;
    let mut rows = Vec::new();
    for k in &spans.ranks {
        if many {
            // Fewer columns for more ranks: the page stays under a few MB at 1,000 ranks.
            let columns = if spans.ranks.len() > RANKS_PER_PAGE { 512 } else { 2048 };
            let mut busy: Vec<Span> =
                intervals::union(k.compute.iter().chain(&k.collectives).copied().collect());
            busy = intervals::gaps(&k.waiting, &busy);
            let mut b = tl::Row::coverage(
                format!("rank {}", k.rank),
                "busy",
                10.0,
                &busy,
                origin,
                domain,
                Some(columns),
            );
            b.gap = 0.0;
            rows.push(b);
            let mut w =
                tl::Row::coverage(String::new(), "wait", 4.0, &k.waiting, origin, domain, Some(columns));
            w.small = true;
            w.gap = 3.0;
            rows.push(w);
            continue;
        }
        let mut compute =
            Row::coverage(format!("rank {} compute", k.rank), "busy", 24.0, &k.compute, origin, domain, None);
        // Kernel names on hover, from the rank's own trace moved onto the common clock.
        if let Some((_, f)) = own.iter().find(|(rank, _)| *rank == k.rank) {
            compute.names = f
                .devices
                .iter()
                .find_map(|d| d.named.as_ref())
                .map(|n| kernel_names(n, origin - k.offset_ns));
        }
        rows.push(compute);
        let mut c = Row::coverage("collectives".into(), "coll", 12.0, &k.collectives, origin, domain, None);
        c.small = true;
        rows.push(c);
        let mut w = Row::coverage("waiting for peers".into(), "wait", 12.0, &k.waiting, origin, domain, None);
        w.small = true;
        w.gap = 10.0;
        rows.push(w);
    }
    let mut pages = Vec::new();
    if many && spans.ranks.len() > RANKS_PER_PAGE {
        let index: Vec<u64> = spans.ranks.iter().map(|k| k.rank).collect();
        let rows_of = |ranks: &[u64]| -> Vec<usize> {
            ranks
                .iter()
                .filter_map(|r| index.iter().position(|x| x == r))
                .flat_map(|i| [2 * i, 2 * i + 1])
                .collect()
        };
        let occ = &crate::ranks_table::judged_figures(r)[0];
        let mut worst: Vec<(u64, f64)> = occ.values.clone();
        worst.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let mut worst: Vec<u64> = worst.iter().take(RANKS_PER_PAGE).map(|x| x.0).collect();
        worst.sort_unstable();
        pages.push((format!("the {} ranks with the lowest occupancy", worst.len()), rows_of(&worst)));
        for chunk in index.chunks(RANKS_PER_PAGE) {
            let label = format!("ranks {}–{}", chunk[0], chunk[chunk.len() - 1]);
            pages.push((label, rows_of(chunk)));
        }
    }
    let mut presets = Vec::new();
    let mut lines = Vec::new();
    if let Some((s, e)) = spans.common {
        presets.push(Preset { label: "common window".into(), range: (s - origin, e - origin) });
        lines.push((0, "common window starts".to_string()));
        lines.push((e - origin, "common window ends".to_string()));
    }
    let timeline = tl::Timeline { origin, domain, view, rows, presets, lines, pages, lazy: many };
    html! {
        section #ranks-timeline {
            h2 { "Ranks timeline" }
            p.note {
                "Every rank on one clock, "
                @if spans.common.is_some() { "shown over the common window (0 is its start; zoom out with “whole” to see what came before)" } @else { "over all the ranks' activity" }
                ". "
                @if many {
                    span.key.busykey {} " busy (compute and collectives, waiting left out), " span.key.waitkey {} " collectives waiting for a peer, as the busy fraction of each column; each rank's kernels are in its detail below and in the JSON"
                    @if spans.ranks.len() > RANKS_PER_PAGE { "; " (RANKS_PER_PAGE) " ranks at a time (“show”)" }
                } @else {
                    span.key.busykey {} " compute (hover for the kernel), " span.key.collkey {} " collectives, " span.key.waitkey {} " collectives waiting for a peer (not counted as busy where the verdict is judged)"
                }
                @if !spans.waits_split { "; the clocks look unaligned, so no waiting is split out" }
                "."
            }
            (tl::render(&timeline, "ranks timeline"))
        }
    }
}

/// Rows of a kernel table shown in the page (every row is in the JSON and the CSV).
const KERNEL_ROWS: usize = 100;

fn kernel_table(rows: &[KernelRow]) -> Markup {
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let short = crate::names::distinct(&names);
    html! {
        div.scroll { table.checks.sortable {
            thead { tr {
                th data-sort="text" { "kernel" } th.num data-sort="num" { "share" } th.num data-sort="num" { "total" }
                th.num data-sort="num" { "count" } th.num data-sort="num" { "mean" } th.num data-sort="num" { "p50" }
                th.num data-sort="num" { "p99" } th.num data-sort="num" { "max" }
            } }
            tbody {
                @for (r, name) in rows.iter().zip(&short).take(KERNEL_ROWS) {
                    tr {
                        td.kname title=(one_line(&r.name)) { code { (name) } }
                        td.num data-v=(r.share) { (format!("{:.1}%", r.share * 100.0)) }
                        td.num data-v=(r.total_us) { (human_us(r.total_us)) }
                        td.num data-v=(r.count) { (r.count) }
                        td.num data-v=(r.mean_us) { (human_us(r.mean_us)) }
                        td.num data-v=(r.p50_us) { (human_us(r.p50_us)) }
                        td.num data-v=(r.p99_us) { (human_us(r.p99_us)) }
                        td.num data-v=(r.max_us) { (human_us(r.max_us)) }
                    }
                }
            }
        } }
        @if rows.len() > KERNEL_ROWS { p.note { "The first " (KERNEL_ROWS) " of " (rows.len()) " rows by total time; all are in the JSON document and --csv." } }
    }
}

/// The kernel table: over the whole trace, then per graph and per stream (folded).
fn kernels_section(k: &Kernels, whose: &str) -> Markup {
    if k.kernels.is_empty() {
        return html! {};
    }
    html! {
        section.kernels {
            h2 { "Kernels" @if !whose.is_empty() { ", " (whose) } }
            p.note {
                (k.kernels.len()) " names, " (k.activities) " GPU activities, " (human_us(k.gpu_time_us)) " of GPU time (summed durations; share: of that). Click a column to sort; hover a name for the full one."
            }
            (kernel_table(&k.kernels))
            @for g in &k.graphs {
                details {
                    summary { "Graph " (g.graph) ": " (g.replays) " replay(s) × " (g.kernels_per_replay) " GPU activities, " (human_us(g.gpu_time_per_replay_us)) " of GPU time per replay (first: replay " (g.first_replay) ")" }
                    (kernel_table(&g.kernels))
                }
            }
            @for sc in k.devices.iter().chain(&k.streams) {
                details {
                    summary { "GPU " (sc.device) @if let Some(s) = &sc.stream { ", stream " (s) } ": " (sc.activities) " activities, " (human_us(sc.gpu_time_us)) }
                    (kernel_table(&sc.kernels))
                }
            }
        }
    }
}

fn histograms(checks: &[Check], a: &Analysis, f: &Findings, whose: &str) -> Markup {
    let launches: Vec<f64> = a.replays.iter().map(|r| r.launch_us).filter(|v| v.is_finite()).collect();
    let gaps: Vec<f64> =
        f.devices.iter().flat_map(|d| d.gaps.iter().map(|(s, e)| (e - s) as f64 / 1000.0)).collect();
    let limit = checks.iter().find(|c| c.id == CheckId::GraphLaunch).and_then(|c| c.limit.as_f64());
    // No launch and no gap: no heading over nothing.
    if launches.is_empty() && gaps.is_empty() {
        return html! {};
    }
    html! {
        section {
            h2 { "Distributions" @if !whose.is_empty() { ", " (whose) } }
            div.grid {
                @if !launches.is_empty() { (launch_histogram(&launches, &a.graph_launches, limit)) }
                @if !gaps.is_empty() {
                    @let bins = log_bins(&gaps, f.threshold_us);
                    @let counts = count_into(&gaps, &bins);
                    @let bars: Vec<Bin> = bins.iter().zip(counts).map(|(&(lo, hi), count)| Bin { lo, hi, count, hot: lo >= f.threshold_us }).collect();
                    @let label = format!("threshold {}", charts::axis_us(f.threshold_us));
                    @let marker = [Marker { at: f.threshold_us, label: &label, class: "m-limit" }];
                    (histogram(&format!("GPU idle gaps ({}), log scale", gaps.len()), &bars, &marker, true, "gaps"))
                }
            }
        }
    }
}

/// The launch durations in bins; the mean, median and p99 marked are the analysis's.
fn launch_histogram(
    values: &[f64],
    g: &launchguard_analysis::model::GraphLaunches,
    limit: Option<f64>,
) -> Markup {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Quartiles only place the bins; the figures marked come from the analysis.
    let p75 = intervals::percentile(&sorted, 75.0).unwrap_or(0.0);
    let p25 = intervals::percentile(&sorted, 25.0).unwrap_or(0.0);
    let p99 = g.p99_us.unwrap_or(0.0);
    let max = g.max_us.unwrap_or(0.0);
    // Linear bins over the body of the distribution, up to p99 unless the tail is far out, then
    // to an outlier fence; what lies beyond goes to one open last bin instead of squashing every
    // other bar. The limit is kept in view when some launch reaches it.
    let fence = p75 + 3.0 * (p75 - p25);
    let body = if p99 > 4.0 * p75 { fence.max(p75 * 1.5) } else { p99.max(fence.min(max)) * 1.1 };
    let top_wanted = body.min(max).max(limit.filter(|l| *l <= max).map_or(0.0, |l| l * 1.05));
    let ticks = charts::ticks(0.0, top_wanted.max(1.0), 30);
    let step = if ticks.len() > 1 { ticks[1] - ticks[0] } else { 1.0 };
    let n = ((top_wanted / step).floor() as usize + 1).max(1);
    let mut bins: Vec<(f64, Option<f64>)> =
        (0..n).map(|i| (i as f64 * step, Some((i + 1) as f64 * step))).collect();
    if max >= n as f64 * step {
        bins.push((n as f64 * step, None));
    }
    let counts = count_into(values, &bins);
    let bars: Vec<Bin> = bins
        .iter()
        .zip(counts)
        .map(|(&(lo, hi), count)| Bin { lo, hi, count, hot: limit.is_some_and(|l| lo >= l) })
        .collect();
    let m = g.mean_us.unwrap_or(0.0);
    let p50 = g.p50_us.unwrap_or(0.0);
    let (lm, l50, l99) =
        (format!("mean {}", human_us(m)), format!("p50 {}", human_us(p50)), format!("p99 {}", human_us(p99)));
    let mut markers = vec![
        Marker { at: m, label: &lm, class: "m-mean" },
        Marker { at: p50, label: &l50, class: "m-p50" },
        Marker { at: p99, label: &l99, class: "m-p99" },
    ];
    let ll = limit.map(|l| format!("limit {}", human_us(l)));
    if let (Some(l), Some(label)) = (limit, &ll) {
        markers.push(Marker { at: l, label, class: "m-limit" });
    }
    histogram(&format!("graph-launch call durations ({})", values.len()), &bars, &markers, false, "launches")
}

fn replays(a: &Analysis) -> Markup {
    if a.replays.is_empty() {
        return html! {};
    }
    let series = |get: &dyn Fn(&launchguard_analysis::model::Replay) -> Option<f64>| -> Vec<(f64, f64)> {
        a.replays
            .iter()
            .filter_map(|r| get(r).filter(|v| v.is_finite()).map(|v| (r.index as f64, v)))
            .collect()
    };
    let chart = |title: &str, class: &str, points: Vec<(f64, f64)>| {
        line_chart(title, &[Series { name: title, class, points }], "replay", true)
    };
    let t0 = a.replays.iter().map(|r| r.launch_start_us).fold(f64::INFINITY, f64::min);
    const ROWS: usize = 2000;
    // A chart of one or two points says less than the table; then the table is open.
    let charts = a.replays.len() >= 3;
    html! {
        section {
            h2 { "Per replay" }
            @if charts { div.grid {
                (chart("graph-launch call (host)", "c-launch", series(&|r| Some(r.launch_us))))
                (chart("launch start → first kernel", "c-latency", series(&|r| r.launch_to_first_kernel_us)))
                (chart("GPU span (first kernel → last)", "c-span", series(&|r| r.gpu_span_us)))
                (chart("GPU idle just before the replay", "c-idle", series(&|r| r.idle_before_us)))
            } }
            details open[!charts] {
                summary { "All " (a.replays.len()) " replays as a table" @if a.replays.len() > ROWS { " (first " (ROWS) ")" } }
                table.replays {
                    thead { tr { th.num { "#" } th.num { "correlation" } th.num { "launch at" } th.num { "launch call" } th.num { "kernels" } th.num { "→ first kernel" } th.num { "GPU span" } th.num { "idle before" } } }
                    tbody {
                        @for r in a.replays.iter().take(ROWS) {
                            tr {
                                td.num { (r.index) }
                                td.num { (r.correlation.map_or("–".to_string(), |c| c.to_string())) }
                                td.num { (human_us(r.launch_start_us - t0)) }
                                td.num { (human_us(r.launch_us)) }
                                td.num { (r.kernels) }
                                td.num { (opt_us(r.launch_to_first_kernel_us)) }
                                td.num { (opt_us(r.gpu_span_us)) }
                                td.num { (opt_us(r.idle_before_us)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn phases(view: &View<'_>) -> Markup {
    let groups: Vec<(&str, String, &[f64])> = view
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| (p.label, format!("ph{}", i % 4), &p.report.host_us[..]))
        .collect();
    let boxes: Vec<(&str, &str, &[f64])> = groups.iter().map(|(l, c, v)| (*l, c.as_str(), *v)).collect();
    let series: Vec<Series> = groups
        .iter()
        .map(|(l, c, v)| Series {
            name: l,
            class: c,
            points: v.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect(),
        })
        .collect();
    html! {
        section {
            h2 { "Host cost per replay, by phase" }
            table.checks {
                thead { tr { th { "phase" } th.num { "replays" } th.num { "host p50" } th.num { "host p99" } th.num { "mean" } th.num { "GPU per replay" } } }
                tbody {
                    @for p in view.phases {
                        @let r = p.report;
                        tr {
                            td { (p.label) }
                            td.num { (r.host_us.len()) }
                            td.num { (opt_us(r.host_p50_us)) }
                            td.num { (opt_us(r.host_p99_us)) }
                            td.num { (opt_us(r.host_mean_us)) }
                            td.num { (opt_us(r.gpu_us_per_replay)) }
                        }
                    }
                }
            }
            div.grid {
                (box_plots("host µs per replay (box p25–p75, whiskers p1–p99)", &boxes))
                (line_chart("host µs per replay, in order", &series, "replay", false))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::view_with_checks;
    use crate::PhaseSamples;
    use launchguard_judge::CheckId;
    use launchguard_judge::{Check, Verdict};

    #[test]
    fn check_view_renders_its_phases_side_by_side() {
        let checks = vec![Check::new(
            CheckId::Other("overhead".into()),
            Status::Fail,
            Some(3.1),
            Some(2.0),
            "profiler adds 3.1× <host> cost",
        )];
        let before: Vec<f64> = (0..100).map(|i| 20.0 + (i % 7) as f64).collect();
        let on: Vec<f64> = (0..100).map(|i| 60.0 + (i % 5) as f64).collect();
        let after: Vec<f64> = (0..100).map(|i| 21.0 + (i % 3) as f64).collect();
        use launchguard_analysis::context::PhaseReport;
        let reports = [
            PhaseReport::from_samples(before, Vec::new(), Some(250.0)),
            PhaseReport::from_samples(on, Vec::new(), Some(251.0)),
            PhaseReport::from_samples(after, Vec::new(), None),
        ];
        let phases = [
            PhaseSamples { label: "before", report: &reports[0] },
            PhaseSamples { label: "profiled", report: &reports[1] },
            PhaseSamples { label: "after", report: &reports[2] },
        ];
        let doc = crate::Document::of(
            &serde_json::json!({"schema": "launchguard.check/1", "note": "</script><b>"}),
        )
        .unwrap();
        let mut view = view_with_checks(&checks, &doc);
        view.command = "check";
        view.phases = &phases;
        let html = run(&view);
        assert!(html.contains("Host cost per replay, by phase"));
        for label in ["before (100)", "profiled (100)", "after (100)"] {
            assert!(html.contains(label), "box plot labelled {label}");
        }
        // Three boxes and three lines, one per phase.
        assert_eq!(html.matches("class=\"box ph").count(), 3);
        assert_eq!(html.matches("class=\"series ph").count(), 3);
        // before: values 20..26 cycling, p50 = 23 (sorted, the 50th and 51st are both 23).
        assert!(html.contains("<td class=\"num\">23.0 µs</td>"), "before p50");
        // Text is escaped; the embedded document cannot close its script early.
        assert!(html.contains("profiler adds 3.1× &lt;host&gt; cost"));
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    /// The `<section id="…">` of a page, whole.
    fn section<'h>(html: &'h str, id: &str) -> Option<&'h str> {
        let start = html.find(&format!("<section id=\"{id}\">"))?;
        let len = html[start..].find("</section>").expect("closed") + "</section>".len();
        Some(&html[start..start + len])
    }

    /// The synthetic TP=2 run of `test_support::two_ranks`; its figures are worked out by hand in
    /// the Markdown tests (rank 0: 65.5% and 58.6% excluding waiting over the 145 µs common window;
    /// rank 1: 62.1%; rank 1 the straggler, rank 0 the worst).
    #[test]
    fn ranks_section_has_a_row_per_rank() {
        let mut r = crate::test_support::two_ranks();
        r.warnings = vec!["rank 1 <b>late</b>".to_string()];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let view = view_with_checks(&r.checks, &doc).with_ranks(&r, 0);
        let html = run(&view);
        let ranks = section(&html, "ranks").expect("a ranks section");
        // Two tables of a row per rank: the common window (with the verdict), then the own one.
        let rows: Vec<&str> = ranks.split("<tr class=\"s-").skip(1).collect();
        assert_eq!(rows.len(), 4, "{ranks}");
        for (i, (row, (rank, cells))) in rows
            .iter()
            .zip([
                (0, &["65.5%", "58.6%", "95.0 µs", "10.0 µs"][..]),
                (1, &["62.1%", "62.1%", "90.0 µs", "0.0 µs"]),
                (0, &["150.0 µs", "66.7%", "60.0%"]),
                (1, &["145.0 µs", "62.1%", "62.1%"]),
            ])
            .enumerate()
        {
            assert!(
                row.starts_with("fail\"><td class=\"nowrap\">rank ")
                    && row.contains(&format!("<td class=\"nowrap\">rank {rank}</td>")),
                "{row}"
            );
            assert_eq!(row.contains("<span class=\"pill p-fail\">fail</span>"), i < 2, "{row}");
            let want: String = cells.iter().map(|c| format!("<td class=\"num\">{c}</td>")).collect();
            assert!(row.contains(&want), "{row}");
        }
        assert!(
            ranks.contains("; straggler none (last to start on the GPU: rank 1 in 1 of 1 replays)</td>"),
            "{ranks}"
        );
        assert!(ranks.contains("<th>worst rank</th><td>rank 0</td>"), "{ranks}");
        // Text goes through maud's escaping.
        assert!(ranks.contains("<li>rank 1 &lt;b&gt;late&lt;/b&gt;</li>"), "{ranks}");
        assert!(html.contains("<title>launchguard analyze: FAIL — 2 ranks, world size 2</title>"));
        // The ranks come before the checks; no trace, no detail.
        assert!(html.find("<section id=\"ranks\">").unwrap() < html.find("<h2>Checks</h2>").unwrap());
        assert!(section(&html, "detail").is_none());
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    #[test]
    fn no_trace_no_timeline() {
        let checks = vec![Check::new(CheckId::Other("torch".into()), Status::Skip, None, None, "no GPU")];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let mut view = view_with_checks(&checks, &doc);
        view.verdict = Verdict::Skip;
        view.reason = Some("no GPU on this machine");
        let html = run(&view);
        assert!(html.contains("no GPU on this machine") && !html.contains("GPU timeline"));
        assert!(html.contains("class=\"verdict v-skip\""));
        assert!(section(&html, "ranks").is_none(), "one result, no ranks section");
    }
}
