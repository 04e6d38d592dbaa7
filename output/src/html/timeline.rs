//! The fabric's time series (the report's `timeline`), a chart per capture point: RoCE
//! throughput per priority, paused time per priority, CE marks and CNPs per second.

use super::charts::{self, Line, GREY};
use super::page::{attr, list, point_name, Chart, Legend, Section, Series};
use rocescope_analyzer::report::StreamedReport;
use rocescope_model::fabric::PointSeriesReport;

/// A title, with the capture point's name when there are several.
fn titled(what: &str, sr: &StreamedReport<'_>, p: &PointSeriesReport) -> String {
    match point_name(sr, p.point) {
        Some(name) => format!("{what} at {name}"),
        None => what.to_string(),
    }
}

/// A line under a chart when some capture points were not charted.
fn uncharted(sr: &StreamedReport<'_>) -> Vec<String> {
    match sr.report.timeline.points_uncharted {
        0 => Vec::new(),
        n => vec![format!(
            "{n} frames and paused intervals at capture points past the first 64 are not charted"
        )],
    }
}

/// RoCE throughput per priority (Gb/s per bin: the bin's wire bytes over its width).
pub(super) fn throughput(sr: &StreamedReport<'_>) -> Section {
    let t = &sr.report.timeline;
    let mut charts = Vec::new();
    for p in &t.points {
        let prios: Vec<_> = p.priorities.iter().filter(|q| q.bytes.iter().any(|b| *b > 0)).collect();
        if prios.is_empty() {
            continue;
        }
        let bin = p.bin_ns.max(1) as f64;
        let lines: Vec<Line> = prios
            .iter()
            .map(|q| Line {
                color: charts::priority_color(q.priority),
                values: q.bytes.iter().map(|b| *b as f64 * 8.0 / bin).collect(),
                dashed: false,
            })
            .collect();
        charts.push(Chart {
            id: format!("throughput-p{}", p.point),
            kind: "throughput",
            title: titled("RoCE throughput per priority", sr, p),
            attrs: vec![attr("point", p.point), attr("bin-ns", p.bin_ns)],
            svg: charts::steps(&lines, p.bin_ns, "Gb/s"),
            legend: prios.iter().map(|q| legend_priority(q.priority, false)).collect(),
            series: prios
                .iter()
                .map(|q| Series {
                    class: "series",
                    attrs: vec![attr("priority", q.priority), attr("bytes", list(&q.bytes))],
                })
                .collect(),
            notes: prios
                .iter()
                .filter(|q| q.peak.gbps > 0.0)
                .map(|q| {
                    format!(
                        "priority {}: busiest {} µs bin {:.2} Gb/s at {:.6} s",
                        q.priority,
                        t.base_ns / 1000,
                        q.peak.gbps,
                        q.peak.offset_ns as f64 / 1e9
                    )
                })
                .collect(),
        });
    }
    if charts.is_empty() {
        return Section::empty("no RoCE data in the capture: no throughput to draw");
    }
    if let Some(last) = charts.last_mut() {
        last.notes.extend(uncharted(sr));
    }
    Section { note: None, charts }
}

/// Paused time per priority: each bin's paused ns over its width, % (above 100 when
/// several MACs paused the priority at once); 802.3x PAUSE dashed.
pub(super) fn paused(sr: &StreamedReport<'_>) -> Section {
    let t = &sr.report.timeline;
    let mut charts = Vec::new();
    for p in &t.points {
        let prios: Vec<_> = p.priorities.iter().filter(|q| q.pause_ns.iter().any(|b| *b > 0)).collect();
        let link = p.link_pause_ns.iter().any(|b| *b > 0);
        if prios.is_empty() && !link {
            continue;
        }
        let bin = p.bin_ns.max(1) as f64;
        let share = |v: &[u64]| v.iter().map(|n| *n as f64 * 100.0 / bin).collect::<Vec<_>>();
        let mut lines: Vec<Line> = prios
            .iter()
            .map(|q| Line {
                color: charts::priority_color(q.priority),
                values: share(&q.pause_ns),
                dashed: false,
            })
            .collect();
        let mut legend: Vec<Legend> = prios.iter().map(|q| legend_priority(q.priority, false)).collect();
        let mut series: Vec<Series> = prios
            .iter()
            .map(|q| Series {
                class: "series",
                attrs: vec![attr("priority", q.priority), attr("pause-ns", list(&q.pause_ns))],
            })
            .collect();
        if link {
            lines.push(Line { color: GREY, values: share(&p.link_pause_ns), dashed: true });
            legend.push(Legend {
                color: charts::css(GREY),
                label: "802.3x PAUSE (every priority)".into(),
                dashed: true,
            });
            series.push(Series {
                class: "series",
                attrs: vec![attr("kind", "pause"), attr("pause-ns", list(&p.link_pause_ns))],
            });
        }
        charts.push(Chart {
            id: format!("paused-p{}", p.point),
            kind: "paused",
            title: titled("Paused time per priority (% of each bin)", sr, p),
            attrs: vec![attr("point", p.point), attr("bin-ns", p.bin_ns)],
            svg: charts::steps(&lines, p.bin_ns, "% paused"),
            legend,
            series,
            notes: Vec::new(),
        });
    }
    if charts.is_empty() {
        return Section::empty(
            "no pause frames (hosts consume them; capture from a TAP or a mirror to see them)",
        );
    }
    Section { note: None, charts }
}

/// CE marks and CNPs per second, summed over the priorities (CNPs at their own priority).
pub(super) fn congestion(sr: &StreamedReport<'_>) -> Section {
    let t = &sr.report.timeline;
    let mut charts = Vec::new();
    for p in &t.points {
        let bins = p.priorities.iter().map(|q| q.ce.len().max(q.cnps.len())).max().unwrap_or(0);
        let mut ce = vec![0u64; bins];
        let mut cnps = vec![0u64; bins];
        for q in &p.priorities {
            for (i, v) in q.ce.iter().enumerate() {
                ce[i] += v;
            }
            for (i, v) in q.cnps.iter().enumerate() {
                cnps[i] += v;
            }
        }
        if ce.iter().chain(&cnps).all(|v| *v == 0) {
            continue;
        }
        let per_s = 1e9 / p.bin_ns.max(1) as f64;
        let rate = |v: &[u64]| v.iter().map(|n| *n as f64 * per_s).collect::<Vec<_>>();
        let (ce_color, cnp_color) = (charts::priority_color(5), charts::priority_color(0));
        charts.push(Chart {
            id: format!("congestion-p{}", p.point),
            kind: "ce-cnp",
            title: titled("CE marks and CNPs per second", sr, p),
            attrs: vec![
                attr("point", p.point),
                attr("bin-ns", p.bin_ns),
                attr("ce", list(&ce)),
                attr("cnps", list(&cnps)),
            ],
            svg: charts::steps(
                &[
                    Line { color: ce_color, values: rate(&ce), dashed: false },
                    Line { color: cnp_color, values: rate(&cnps), dashed: true },
                ],
                p.bin_ns,
                "per second",
            ),
            legend: vec![
                Legend { color: charts::css(ce_color), label: "CE-marked packets".into(), dashed: false },
                Legend { color: charts::css(cnp_color), label: "CNPs".into(), dashed: true },
            ],
            series: Vec::new(),
            notes: Vec::new(),
        });
    }
    if charts.is_empty() {
        return Section::empty("no CE marks and no CNPs in the capture");
    }
    Section { note: None, charts }
}

fn legend_priority(p: u8, dashed: bool) -> Legend {
    Legend { color: charts::css(charts::priority_color(p)), label: format!("priority {p}"), dashed }
}
