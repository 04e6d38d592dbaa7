//! The capture points' section of the report: names, and what went missing between them.

use super::*;

/// The name of capture point `i`.
pub(super) fn point_name(a: &Analyzer, i: u16) -> String {
    a.cfg.points.get(usize::from(i)).cloned().unwrap_or_else(|| format!("point {i}"))
}

/// ` (at NAME)` for titles when several captures are merged, else nothing.
pub(super) fn at_point(a: &Analyzer, i: u16) -> String {
    if a.cfg.points.len() > 1 {
        format!(" (at {})", point_name(a, i))
    } else {
        String::new()
    }
}

/// Losses between capture points, each with a finding.
pub(super) fn point_losses(a: &Analyzer, findings: &mut FindingSink) -> Vec<PointLoss> {
    let Some(m) = a.matcher() else { return Vec::new() };
    let mut out = Vec::new();
    for (x, y) in m.untied_pairs() {
        findings.push(Finding::about_capture(
            Severity::Info,
            FindingKind::PointsUnmatched,
            format!(
                "{} and {} captured the same flows, but no packet was seen at both within --match-window-ms ({} ms): their clocks are further apart than that, so losses between them are not counted (raise the window)",
                point_name(a, x),
                point_name(a, y),
                a.cfg.match_window_ns / 1_000_000
            ),
            Vec::new(),
            0,
        ));
    }
    if a.cfg.points.len() > m.points() {
        findings.push(Finding::about_capture(
            Severity::Info,
            FindingKind::PointsUnmatched,
            format!(
                "{} capture points: only the first {} are compared for packets lost between them; from {} on, each keeps its own view (matching takes the first {} points of merged captures, and none found while reading)",
                a.cfg.points.len(),
                m.points(),
                point_name(a, u16::try_from(m.points()).unwrap_or(u16::MAX)),
                crate::crosspoint::MAX_POINTS,
            ),
            Vec::new(),
            0,
        ));
    }
    for (key, from, to, lost) in m.losses() {
        let flow = a.flows.find(&key.at(from));
        let (from_name, to_name) = (point_name(a, from), point_name(a, to));
        findings.push(Finding {
            severity: Severity::Critical,
            kind: FindingKind::LostBetweenPoints,
            title: format!(
                "QP 0x{:06x} {} → {}: {} seen at {from_name} never seen at {to_name} (lost between the two capture points, or missed by the capture at {to_name})",
                key.dest_qp,
                key.src,
                key.dst,
                plural(lost.packets, "packet", "packets"),
            ),
            flow,
            src_mac: None,
            priority: None,
            evidence: vec![EvidenceRef {
                frame: lost.first_frame,
                ts_ns: lost.first_ns,
                what: format!("first packet missing at {to_name}"),
            }],
            weight: lost.packets * 100,
            folded: None,
        });
        out.push(PointLoss {
            src: key.src.to_string(),
            dst: key.dst.to_string(),
            dest_qp: key.dest_qp,
            from,
            to,
            packets: lost.packets,
            first_frame: lost.first_frame,
            first_ns: lost.first_ns,
            flow,
        });
    }
    out
}

/// One entry per capture point: its counts, mirror session, clock and name.
pub(super) fn point_reports(a: &Analyzer, points: Vec<crate::PointTotals>) -> Vec<PointReport> {
    points
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let i = u16::try_from(i).unwrap_or(u16::MAX);
            let (session, clock, pcp_from_erspan, switch_stamps_unused) = a.mirror.point(i);
            PointReport {
                name: point_name(a, i),
                packets: p.packets,
                roce: p.roce,
                duplicates: p.duplicates,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                session,
                clock,
                pcp_from_erspan,
                switch_stamps_unused,
                matched: a.matcher.as_ref().is_some_and(|m| usize::from(i) < m.points()),
                capture_counters: None,
                marks: a.marks_report(i),
            }
        })
        .collect()
}
