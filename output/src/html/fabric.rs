//! The fabric's shape: the iteration rhythm with its stragglers, and where ECMP put the
//! data (predicted paths, measured uplinks).

use super::charts::{self, Bar, GREY, RED};
use super::page::{attr, point_name, Chart, Legend, Section, Series};
use rocescope_analyzer::report::StreamedReport;
use rocescope_capture::text::escape;

/// The iteration strip: each listed iteration's busy part (ms), red when the host that
/// ended it is a straggler.
pub(super) fn rhythm(sr: &StreamedReport<'_>) -> Section {
    let r = &sr.report;
    let mut charts = Vec::new();
    for rh in &r.rhythm {
        let stragglers: Vec<_> = rh.stragglers.iter().filter(|s| s.verdict).map(|s| s.host).collect();
        let bars: Vec<Bar> = rh
            .iteration_list
            .iter()
            .enumerate()
            .map(|(i, it)| Bar {
                label: (i + 1).to_string(),
                value: it.busy_ns() as f64 / 1e6,
                color: if stragglers.contains(&it.last_host) { RED } else { charts::priority_color(0) },
            })
            .collect();
        let at = point_name(sr, rh.point).map(|n| format!(" at {n}")).unwrap_or_default();
        let mut notes: Vec<String> = rh
            .stragglers
            .iter()
            .map(|s| {
                format!(
                    "{} finished last in {} of {} iterations, by {:.3} ms median ({:.0}% of the busy part){}",
                    s.host,
                    s.last_in,
                    s.of,
                    s.median_margin_ns as f64 / 1e6,
                    s.margin_share * 100.0,
                    if s.verdict { ": a straggler" } else { "" }
                )
            })
            .collect();
        if rh.iterations > rh.iteration_list.len() as u64 {
            notes.push(format!(
                "the first {} of {} iterations shown",
                rh.iteration_list.len(),
                rh.iterations
            ));
        }
        charts.push(Chart {
            id: format!("rhythm-p{}", rh.point),
            kind: "rhythm",
            title: format!(
                "Iterations{at}: period {:.3} ms, {} iterations, {} hosts (busy part of each, ms)",
                rh.period_ns as f64 / 1e6,
                rh.iterations,
                rh.hosts
            ),
            attrs: vec![
                attr("point", rh.point),
                attr("period-ns", rh.period_ns),
                attr("iterations", rh.iterations),
            ],
            svg: charts::bars(&bars, "busy ms"),
            legend: vec![
                Legend {
                    color: charts::css(charts::priority_color(0)),
                    label: "iteration".into(),
                    dashed: false,
                },
                Legend { color: charts::css(RED), label: "ended by a straggler".into(), dashed: false },
            ],
            series: rh
                .iteration_list
                .iter()
                .map(|it| Series {
                    class: "iteration",
                    attrs: vec![
                        attr("start-ns", it.start_ns),
                        attr("busy-ns", it.busy_ns()),
                        attr("last-host", it.last_host),
                        attr("last-frame", it.last_frame),
                        attr("straggler", stragglers.contains(&it.last_host)),
                    ],
                })
                .collect(),
            notes,
        });
    }
    if charts.is_empty() {
        return Section::empty("no iteration rhythm: the data does not come in periodic bursts");
    }
    Section { note: None, charts }
}

/// A label that fits under a bar.
fn short(name: &str) -> String {
    let name = escape(name).to_string();
    if name.chars().count() > 14 {
        format!("{}…", name.chars().take(13).collect::<String>())
    } else {
        name
    }
}

/// ECMP: the predicted load per path (`--ecmp-paths`) and the measured load per uplink
/// (`--uplinks`), as bars of bytes, the busiest red.
pub(super) fn ecmp(sr: &StreamedReport<'_>) -> Section {
    let e = &sr.report.ecmp;
    let mut charts = Vec::new();
    if let Some(p) = &e.prediction {
        let bars: Vec<Bar> = p
            .loads
            .iter()
            .map(|l| Bar {
                label: l.path.to_string(),
                value: l.bytes as f64,
                color: if l.path == p.busiest && l.bytes > 0 { RED } else { GREY },
            })
            .collect();
        charts.push(Chart {
            id: "ecmp-paths".into(),
            kind: "ecmp-paths",
            title: format!(
                "Predicted ECMP paths ({} paths, hash {}, {}): {} data flows, busiest path {:.2}× the mean",
                p.paths,
                escape(&p.hash),
                p.key,
                p.flows,
                p.max_over_mean
            ),
            attrs: vec![attr("paths", p.paths)],
            svg: charts::bars(&bars, "bytes"),
            legend: vec![Legend { color: charts::css(RED), label: "busiest".into(), dashed: false }],
            series: p
                .loads
                .iter()
                .map(|l| Series {
                    class: "bar",
                    attrs: vec![attr("path", l.path), attr("bytes", l.bytes), attr("flows", l.flows)],
                })
                .collect(),
            notes: p
                .collisions
                .iter()
                .map(|c| format!("path {}: {} busy flows collide ({} bytes)", c.path, c.busy_flows, c.bytes))
                .collect(),
        });
    }
    if let Some(u) = &e.uplinks {
        let bars: Vec<Bar> = u
            .uplinks
            .iter()
            .map(|l| Bar {
                label: short(&l.name),
                value: l.bytes as f64,
                color: if u.busiest == Some(l.point) && l.bytes > 0 { RED } else { GREY },
            })
            .collect();
        let mut notes = Vec::new();
        if !u.unmatched.is_empty() {
            notes.push(format!(
                "no capture point is named {}",
                u.unmatched.iter().map(|n| escape(n).to_string()).collect::<Vec<_>>().join(", ")
            ));
        }
        if u.hash_fit.decided {
            notes.push(if u.hash_fit.fitting.is_empty() {
                "no modelled hash explains where the flows went".to_string()
            } else {
                format!("hashes that explain where the flows went: {}", u.hash_fit.fitting.join(", "))
            });
        }
        charts.push(Chart {
            id: "ecmp-uplinks".into(),
            kind: "ecmp-uplinks",
            title: format!(
                "Measured load per uplink ({} uplinks): busiest {:.2}× the mean",
                u.uplinks.len(),
                u.max_over_mean
            ),
            attrs: vec![attr("uplinks", u.uplinks.len())],
            svg: charts::bars(&bars, "bytes"),
            legend: vec![Legend { color: charts::css(RED), label: "busiest".into(), dashed: false }],
            series: u
                .uplinks
                .iter()
                .map(|l| Series {
                    class: "bar",
                    attrs: vec![
                        attr("point", l.point),
                        attr("name", escape(&l.name)),
                        attr("bytes", l.bytes),
                        attr("busy-flows", l.busy_flows),
                    ],
                })
                .collect(),
            notes,
        });
    }
    if charts.is_empty() {
        let pairs = e.host_pairs.len();
        return Section::empty(format!(
            "no ECMP paths or uplinks to draw (give --ecmp-paths N, or --uplinks with one capture per uplink); {pairs} host pair(s) with several data QPs{}",
            e.host_pairs
                .first()
                .map(|p| format!(", the busiest: {}", p.summary()))
                .unwrap_or_default()
        ));
    }
    Section { note: None, charts }
}
