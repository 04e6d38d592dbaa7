//! The QoS pass: the priority a switch gives a frame (trust mode, DSCP map, PCP tag, an
//! overlay's outer headers) and the audit's verdicts per packet (reference §1.7, §1.9).

use crate::audit::{Check as _, ReadPcp as _};
use crate::{audit, mirror, overlay, Analyzer};
use rocescope_decoder::{Ecn, Packet};

impl Analyzer {
    /// The priority a switch gives frame `p` with `dscp`: its PCP (a QinQ frame's from the
    /// tag `--pcp-tag` names, the outer one by default: IEEE 802.1ad; or the COS of an
    /// ERSPAN header that says the mirror stripped its tag) or its DSCP through the map, by
    /// the trust mode (reference §1.9; [`AuditConfig::priority`]); an overlay frame's from its
    /// `outer` headers. Pause timelines, the lossless check and deadlock hints all compare
    /// this one. Returns (the stripped tag's PCP, the PCP, the priority).
    pub(crate) fn frame_priority(
        &self,
        p: &Packet<'_>,
        dscp: u8,
        outer: Option<&overlay::Outer>,
    ) -> (Option<u8>, Option<u8>, u8) {
        // An overlay frame is classified by the underlay on its outer headers.
        if let Some(o) = outer {
            return (None, o.pcp, self.cfg.audit.priority(o.dscp, o.pcp));
        }
        let stripped_pcp =
            (self.cfg.erspan_cos && !p.tunnels.is_empty()).then(|| mirror::erspan_pcp(p)).flatten();
        let pcp = self.cfg.audit.pcp_tag.pcp(p.vlans.as_slice()).or(stripped_pcp);
        (stripped_pcp, pcp, self.cfg.audit.priority(dscp, pcp))
    }

    /// The audit of an overlay packet's outer DSCP (`--expect-outer-dscp`): its data must
    /// carry one of the expected values, which the underlay classifies on (overlay module).
    pub(crate) fn check_outer_dscp(&mut self, id: usize, frame: u64, class: audit::Class, dscp: u8) {
        let Some(allowed) = &self.cfg.audit.outer_dscp else { return };
        if class != audit::Class::Data || allowed.contains(&dscp) {
            return;
        }
        let e = self.audit.entry((Some(id), "outer_dscp", dscp)).or_insert((0, frame));
        e.0 = e.0.saturating_add(self.weight);
    }

    /// The audit's verdicts on one packet of flow `id` (reference §1.7, §1.9; the rules are
    /// in [`AuditConfig::check`]): `marks` is its (DSCP, PCP when tagged, priority); `ecn` is
    /// `None` for RoCEv1, which has no IP ECN field.
    pub(crate) fn check_audit(
        &mut self,
        id: usize,
        frame: u64,
        class: audit::Class,
        marks: (u8, Option<u8>, u8),
        ecn: Option<Ecn>,
    ) {
        if !self.audit_active {
            return;
        }
        let (dscp, pcp, prio) = marks;
        let hits = self.cfg.audit.check(class, dscp, pcp, prio, ecn);
        for (what, seen) in hits.into_iter().flatten() {
            let e = self.audit.entry((Some(id), what, seen)).or_insert((0, frame));
            e.0 = e.0.saturating_add(self.weight);
        }
    }
}
