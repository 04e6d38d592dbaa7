//! The capture's own findings: frames that did not decode, frames cut short, tunnels not
//! decoded, no RoCE at all.

use super::*;

/// The findings about the capture as a whole, from its totals `t`.
pub(super) fn capture_findings(t: &crate::Totals, findings: &mut FindingSink) {
    if t.malformed > 0 {
        let title =
            format!("{} to the RoCE port did not decode as RoCE", plural(t.malformed, "frame", "frames"));
        let evidence = t
            .malformed_frames
            .iter()
            .map(|(n, w)| EvidenceRef { frame: *n, ts_ns: 0, what: w.clone() })
            .collect();
        findings.push(Finding::about_capture(
            Severity::Warning,
            FindingKind::Malformed,
            title,
            evidence,
            t.malformed,
        ));
    }
    if t.icrc_truncated > 0 {
        let title = format!(
            "{} cut short by the capture (snap length): headers analysed, ICRC not checked",
            plural(t.icrc_truncated, "RoCE frame", "RoCE frames")
        );
        findings.push(Finding::about_capture(Severity::Info, FindingKind::Truncated, title, Vec::new(), 0));
    }
    if t.tunnel_undecoded > 0 {
        let why: Vec<String> = t.tunnel_undecoded_reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        let title = format!(
            "{} in tunnels not decoded ({}): RoCE inside them, if any, was not analysed",
            plural(t.tunnel_undecoded, "frame", "frames"),
            why.join(", ")
        );
        let kind = FindingKind::TunnelNotDecoded;
        findings.push(Finding::about_capture(Severity::Warning, kind, title, Vec::new(), t.tunnel_undecoded));
    }
    // Frames in tunnels not decoded may hold the RoCE: then the capture point is not to blame.
    if t.packets > 0 && t.roce == 0 && t.pfc_frames + t.pause_frames == 0 && t.tunnel_undecoded == 0 {
        let title = "no RoCE in this capture: NIC-offloaded RoCE never reaches the host interface; capture on the RDMA device, in sniffer mode, or from a switch mirror".into();
        findings.push(Finding::about_capture(Severity::Info, FindingKind::NoRoce, title, Vec::new(), 0));
    }
}
