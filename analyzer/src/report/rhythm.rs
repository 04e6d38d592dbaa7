//! The report's `rhythm` section and its `straggler` finding (crate::rhythm holds the
//! analysis; docs/verdicts.md "Iteration rhythm and stragglers").

use super::{points::at_point, EvidenceRef, Finding, FindingKind, PauseReport, Severity};
use crate::findings::FindingSink;
use crate::rhythm::{self, RhythmReport, Straggler};
use crate::{fabric::FabricReport, Analyzer};

/// Evidence listed per straggler finding: the frames that ended its first iterations.
const EVIDENCE: usize = 3;

/// Every point's rhythm, with a `straggler` finding for each host the rule names.
pub(super) fn rhythm(
    a: &Analyzer,
    pfc: &[PauseReport],
    fabric: &FabricReport,
    findings: &mut FindingSink,
) -> Vec<RhythmReport> {
    let out = rhythm::report(a, pfc, fabric);
    for r in &out {
        for s in r.stragglers.iter().filter(|s| s.verdict) {
            findings.push(straggler_finding(a, r, s));
        }
    }
    out
}

fn straggler_finding(a: &Analyzer, r: &RhythmReport, s: &Straggler) -> Finding {
    let qp = a
        .flows()
        .get(s.flow)
        .map_or_else(String::new, |f| format!(" (QP 0x{:06x} most often)", f.key.dest_qp));
    let title = format!(
        "host {}{qp} finished its data last in {} of {} training iterations{}, by {:.1} ms at the \
         median ({:.0}% of an iteration's busy part): every collective waits for it at its \
         barrier. Look at that host: its NIC's counters and link speed, its PCIe and GPU, its \
         uplink's load",
        s.host,
        s.last_in,
        s.of,
        at_point(a, r.point),
        s.median_margin_ns as f64 / 1e6,
        s.margin_share * 100.0,
    );
    let evidence = r
        .iteration_list
        .iter()
        .enumerate()
        .filter(|(_, i)| i.last_host == s.host)
        .take(EVIDENCE)
        .map(|(k, i)| EvidenceRef {
            frame: i.last_frame,
            ts_ns: i.busy_end_ns,
            what: format!(
                "iteration {}: its last data frame (QP 0x{:06x}), {:.1} ms after the next host's",
                k + 1,
                i.last_qp,
                i.margin_ns as f64 / 1e6
            ),
        })
        .collect();
    Finding {
        severity: Severity::Warning,
        kind: FindingKind::Straggler,
        title,
        flow: Some(s.flow),
        src_mac: None,
        priority: None,
        evidence,
        weight: s.last_in,
        folded: None,
    }
}
