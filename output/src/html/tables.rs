//! The findings with their evidence, the pause timelines and the QoS audit, as lists and
//! tables (the text report's sections, from the same figures).

use super::page::rel;
use rocescope_analyzer::report::{Finding, Report, Severity, StreamedReport};
use rocescope_analyzer::PauseKind;
use rocescope_capture::text::escape;

/// Evidence items shown per finding (the JSON has them all; the rest are counted).
const EVIDENCE_SHOWN: usize = 8;

/// A finding as the page lists it.
pub(super) struct FindingView {
    pub severity: &'static str,
    pub kind: &'static str,
    pub title: String,
    /// The flow it is about (`data-flow`), when one.
    pub flow: Option<usize>,
    pub evidence: Vec<Evidence>,
    /// Evidence items not shown.
    pub more: usize,
}

/// A frame that shows a finding.
pub(super) struct Evidence {
    pub frame: u64,
    /// Seconds from the capture start (none for a frame without a time).
    pub at: Option<String>,
    pub what: String,
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// The evidence of `f`, at most `n` items, times from `start`.
pub(super) fn evidence(f: &Finding, start: i64, n: usize) -> Vec<Evidence> {
    f.evidence
        .iter()
        .take(n)
        .map(|e| Evidence {
            frame: e.frame,
            at: (e.ts_ns > 0).then(|| rel(e.ts_ns, start)),
            what: escape(&e.what).to_string(),
        })
        .collect()
}

/// The findings, worst first (the report's order).
pub(super) fn findings(r: &Report, start: i64) -> Vec<FindingView> {
    r.findings
        .iter()
        .map(|f| FindingView {
            severity: severity(f.severity),
            kind: f.kind.as_str(),
            title: escape(&f.title).to_string(),
            flow: f.flow,
            evidence: evidence(f, start, EVIDENCE_SHOWN),
            more: f.evidence.len().saturating_sub(EVIDENCE_SHOWN),
        })
        .collect()
}

/// One PFC or PAUSE timeline.
pub(super) struct PauseRow {
    pub point: String,
    pub mac: String,
    pub what: String,
    pub pause_frames: u64,
    pub xon_frames: u64,
    pub paused_ms: String,
    pub us_per_s: String,
    pub storms: usize,
    pub flags: String,
}

/// The pause timelines, as the text report's PFC / PAUSE section lists them.
pub(super) fn pauses(sr: &StreamedReport<'_>) -> Vec<PauseRow> {
    sr.report
        .pfc
        .iter()
        .map(|p| {
            let mut flags = Vec::new();
            if p.deadlock_hint.is_some() {
                flags.push("deadlock hint".to_string());
            }
            if p.kind == PauseKind::Pfc && p.roce_packets_on_priority == 0 {
                flags.push("no RoCE on this priority".to_string());
            }
            if p.ignored_frames > 0 {
                flags.push(format!("{} RoCE frame(s) ignored the pause", p.ignored_frames));
            }
            PauseRow {
                point: super::page::point_name(sr, p.point).unwrap_or_default(),
                mac: escape(&p.src_mac).to_string(),
                what: match p.kind {
                    PauseKind::Pfc => format!("PFC priority {}", p.priority),
                    PauseKind::Pause => "802.3x PAUSE".into(),
                },
                pause_frames: p.pause_frames,
                xon_frames: p.xon_frames,
                paused_ms: format!("{:.3}", p.paused_ns as f64 / 1e6),
                us_per_s: format!("{:.0} (peak {:.0})", p.pause_us_per_s, p.max_pause_us_per_s),
                storms: p.storms.len(),
                flags: flags.join("; "),
            }
        })
        .collect()
}

/// The QoS audit: what was expected, and each violation.
pub(super) struct AuditView {
    /// `expected ...`, or that nothing was.
    pub expected: String,
    /// One line: clean, not audited, nothing to audit, or the violations' count.
    pub status: String,
    pub violations: Vec<ViolationRow>,
}

/// One violation.
pub(super) struct ViolationRow {
    pub who: String,
    pub what: String,
    pub expected: String,
    pub seen: String,
    pub packets: u64,
    pub first_frame: u64,
}

fn values(v: &[u8]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
    }
}

/// The audit section, worded as the text report's QOS AUDIT.
pub(super) fn audit(r: &Report) -> AuditView {
    let e = &r.audit.expected;
    let mut exp = Vec::new();
    if let Some(d) = &e.roce_dscp {
        exp.push(format!("RoCE DSCP {}", values(d)));
    }
    if let Some(d) = &e.ack_dscp {
        exp.push(format!("ACK/NAK DSCP {}", values(d)));
    }
    if let Some(d) = &e.cnp_dscp {
        exp.push(format!("CNP DSCP {}", values(d)));
    }
    if let Some(d) = &e.outer_dscp {
        exp.push(format!("overlay outer DSCP {}", values(d)));
    }
    if let Some(p) = e.roce_pcp {
        exp.push(format!("PCP {p}"));
    }
    if let Some(l) = &e.lossless_priorities {
        exp.push(format!("lossless {}", values(l)));
    }
    if e.ecn_capable {
        exp.push("ECN-capable data".into());
    }
    let expected = if exp.is_empty() {
        "no expectations given (--expect-dscp, --expect-pcp, --lossless, --expect-ecn, --baseline ...)"
            .to_string()
    } else {
        format!("expected {}; priority from {}", exp.join(", "), e.priority_rule())
    };
    let status = if r.audit.violations.is_empty() && r.summary.roce == 0 {
        "no RoCE seen: nothing to audit".to_string()
    } else if r.audit.violations.is_empty() && !r.audit.audited {
        "not audited: nothing expected, so no DSCP, PCP or ECN was checked against a baseline".to_string()
    } else if r.audit.violations.is_empty() {
        "clean".to_string()
    } else {
        format!("{} violation(s)", r.audit.violations.len())
    };
    let violations = r
        .audit
        .violations
        .iter()
        .map(|v| ViolationRow {
            who: match (&v.flow, &v.src_mac) {
                (Some(f), _) => format!("QP 0x{:06x} {} → {}", f.dest_qp, f.src, f.dst),
                (None, Some(m)) => format!("pause frames from {}", escape(m)),
                (None, None) => match v.what.as_ref() {
                    "pcp_untagged" => "untagged RoCE".into(),
                    "no_roce" => "the capture".into(),
                    _ => "flows no longer tracked".into(),
                },
            },
            what: v.what.to_string(),
            expected: serde_json::to_string(&v.expected).unwrap_or_default(),
            seen: serde_json::to_string(&v.seen).unwrap_or_default(),
            packets: v.packets,
            first_frame: v.first_frame,
        })
        .collect();
    AuditView { expected, status, violations }
}
