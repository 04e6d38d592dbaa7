//! The capture's own findings: frames that did not decode, frames cut short, tunnels not
//! decoded, no RoCE at all.

use super::*;

/// The findings about the capture as a whole, from its totals `t`.
pub(super) fn capture_findings(t: &crate::Totals, findings: &mut FindingSink) {
    if t.malformed > 0 {
        findings.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::Malformed,
            title: format!(
                "{} to the RoCE port did not decode as RoCE",
                plural(t.malformed, "frame", "frames")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: t
                .malformed_frames
                .iter()
                .map(|(n, w)| EvidenceRef { frame: *n, ts_ns: 0, what: w.clone() })
                .collect(),
            weight: t.malformed,
            folded: None,
        });
    }
    if t.icrc_truncated > 0 {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::Truncated,
            title: format!(
                "{} cut short by the capture (snap length): headers analysed, ICRC not checked",
                plural(t.icrc_truncated, "RoCE frame", "RoCE frames")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
    if t.tunnel_undecoded > 0 {
        let why: Vec<String> = t.tunnel_undecoded_reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        findings.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::TunnelNotDecoded,
            title: format!(
                "{} in tunnels not decoded ({}): RoCE inside them, if any, was not analysed",
                plural(t.tunnel_undecoded, "frame", "frames"),
                why.join(", ")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: t.tunnel_undecoded,
            folded: None,
        });
    }
    // Frames in tunnels not decoded may hold the RoCE: then the capture point is not to blame.
    if t.packets > 0 && t.roce == 0 && t.pfc_frames + t.pause_frames == 0 && t.tunnel_undecoded == 0 {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::NoRoce,
            title: "no RoCE in this capture: NIC-offloaded RoCE never reaches the host interface; capture on the RDMA device, in sniffer mode, or from a switch mirror".into(),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
}
