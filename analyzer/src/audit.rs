//! QoS audit: the DSCP, PCP and ECN that RoCE data, ACK/NAKs and CNPs carry, and the
//! priority they map to, against what the fabric is configured for (reference §1.7, §1.9;
//! field notes "Typical configuration" and "Mismatched QoS").
//!
//! The model:
//! - **Priority of a frame** ([`AuditConfig::priority`]): the trust mode picks the field a
//!   switch or NIC classifies on (§1.9: mlx5 switches its trust state between `pcp` and
//!   `dscp`). [`Trust::Pcp`] (the default, and rocescope's behaviour before trust modes
//!   existed): the VLAN PCP of a tagged frame, else the DSCP through the map. [`Trust::Dscp`]:
//!   the DSCP through the map, tagged or not. The map ([`DscpMap`]) is DSCP >> 3 (the class
//!   selector, a common switch default) until one is given; a given map sends every DSCP it
//!   does not list to priority 0, as mlx5 does ("By default, all the dscps are mapped to
//!   priority zero", §1.9), so a map states the device's whole table.
//! - **Classes** ([`Class`]): CNPs (opcode 0x81, §1.7); ACK/NAKs, the AETH-carrying responses
//!   without payload (Acknowledge 0x11 and Atomic Acknowledge 0x12 of RC, RD and XRC: the
//!   responder's acknowledgements, §1.3/§1.5; READ responses carry data and are data); and
//!   data (everything else). CNPs and ACK/NAKs have classes of their own in some fabrics (a
//!   SONiC RoCEv2 test: CNP DSCP 46, ACK/NAK DSCP 44, §1.7).
//! - **Checks**, each off until its expectation is given: data DSCP in `roce_dscp`, PCP of
//!   tagged data equal to `roce_pcp` (untagged data under a PCP expectation: `pcp_untagged`),
//!   ECN-capable data, and data on a `lossless_priorities` priority (`not_lossless`, only
//!   when its DSCP and PCP passed: one cause per packet); ACK/NAK DSCP in `ack_dscp` (ACK/NAKs
//!   are data for every check until `ack_dscp` is given; once it is, only their DSCP is
//!   checked); CNP DSCP in `cnp_dscp`.

use rocescope_decoder::{Ecn, Opcode, VlanTag};
pub use rocescope_model::audit::{AuditConfig, DscpMap, FlowRef, PcpTag, Trust, Violation, VIOLATION_KINDS};

/// What a RoCE packet is to the audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Requests and READ responses: everything that is neither an ACK/NAK nor a CNP.
    Data,
    /// Acknowledge (0x11) and Atomic Acknowledge (0x12) of RC, RD and XRC: AETH-carrying
    /// responses without payload (reference §1.3, §1.5).
    Ack,
    /// Congestion notification packets (0x81, and the IB CNP 0x80; reference §1.7).
    Cnp,
}

impl Class {
    /// The class of an opcode.
    ///
    /// ```
    /// use rocescope_analyzer::audit::Class;
    /// use rocescope_decoder::Opcode;
    ///
    /// assert_eq!(Class::of(Opcode::RC_ACKNOWLEDGE), Class::Ack);
    /// assert_eq!(Class::of(Opcode::XRC_ATOMIC_ACKNOWLEDGE), Class::Ack);
    /// assert_eq!(Class::of(Opcode::RC_READ_RESPONSE_ONLY), Class::Data);
    /// assert_eq!(Class::of(Opcode::CNP), Class::Cnp);
    /// ```
    pub fn of(op: Opcode) -> Class {
        if op.is_cnp() {
            Class::Cnp
        } else if op.is_response() && matches!(op.operation(), 0x11 | 0x12) {
            Class::Ack
        } else {
            Class::Data
        }
    }
}

/// The PCP of a frame by the tag the audit reads ([`PcpTag`]): the model says which tag,
/// the decoder gives the tags.
pub trait ReadPcp {
    /// The PCP of a frame with these tags (outermost first), `None` when untagged.
    fn pcp(self, tags: &[VlanTag]) -> Option<u8>;
}

impl ReadPcp for PcpTag {
    fn pcp(self, tags: &[VlanTag]) -> Option<u8> {
        match self {
            PcpTag::Outer => tags.first(),
            PcpTag::Inner => tags.last(),
        }
        .map(|t| t.pcp)
    }
}

/// The audit's checks of one packet against what was expected ([`AuditConfig`]).
pub trait Check {
    /// The audit's verdicts on one RoCE packet of class `class` with this DSCP, PCP (when
    /// tagged), priority (from [`AuditConfig::priority`]) and ECN (`None` for RoCEv1, which
    /// has no IP ECN field): up to three `(what, seen)` pairs, `what` being `dscp`,
    /// `ack_dscp`, `cnp_dscp`, `pcp`, `pcp_untagged`, `not_lossless` or `ecn` (`seen` is 0
    /// for `pcp_untagged` and `ecn`, the priority for `not_lossless`).
    fn check(
        &self,
        class: Class,
        dscp: u8,
        pcp: Option<u8>,
        prio: u8,
        ecn: Option<Ecn>,
    ) -> [Option<(&'static str, u8)>; 3];
}

impl Check for AuditConfig {
    fn check(
        &self,
        class: Class,
        dscp: u8,
        pcp: Option<u8>,
        prio: u8,
        ecn: Option<Ecn>,
    ) -> [Option<(&'static str, u8)>; 3] {
        let mut hits: [Option<(&'static str, u8)>; 3] = [None; 3];
        let outside = |l: &Option<Vec<u8>>, v: u8| l.as_ref().is_some_and(|l| !l.contains(&v));
        match class {
            Class::Cnp => {
                if outside(&self.cnp_dscp, dscp) {
                    hits[0] = Some(("cnp_dscp", dscp));
                }
                return hits;
            }
            Class::Ack if self.ack_dscp.is_some() => {
                if outside(&self.ack_dscp, dscp) {
                    hits[0] = Some(("ack_dscp", dscp));
                }
                return hits;
            }
            Class::Ack | Class::Data => {}
        }
        if outside(&self.roce_dscp, dscp) {
            hits[0] = Some(("dscp", dscp));
        }
        match (self.roce_pcp, pcp) {
            (Some(want), Some(seen)) if want != seen => hits[1] = Some(("pcp", seen)),
            (Some(_), None) => hits[1] = Some(("pcp_untagged", 0)),
            _ => {}
        }
        // One cause per packet: a wrong marking explains a wrong priority.
        if hits[0].is_none() && hits[1].is_none() && outside(&self.lossless_priorities, prio) {
            hits[1] = Some(("not_lossless", prio));
        }
        if self.ecn_capable && ecn == Some(Ecn::NotEct) {
            hits[2] = Some(("ecn", 0));
        }
        hits
    }
}

/// The values of a violation ([`Violation::expected`], [`Violation::seen`]), at the path
/// they had.
pub mod serde_json_value {
    pub use rocescope_model::audit::Value;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(toml_like: &[(&str, Option<Vec<u8>>)]) -> AuditConfig {
        let mut a = AuditConfig::default();
        for (k, v) in toml_like {
            match *k {
                "roce" => a.roce_dscp = v.clone(),
                "ack" => a.ack_dscp = v.clone(),
                "cnp" => a.cnp_dscp = v.clone(),
                "lossless" => a.lossless_priorities = v.clone(),
                _ => unreachable!(),
            }
        }
        a
    }

    #[test]
    fn classes_and_checks() {
        let a = cfg(&[
            ("roce", Some(vec![3, 4])),
            ("ack", Some(vec![44])),
            ("cnp", Some(vec![46, 48])),
            ("lossless", Some(vec![3, 4])),
        ]);
        let none = [None; 3];
        assert_eq!(a.check(Class::Data, 3, None, 3, Some(Ecn::Ect0)), none);
        assert_eq!(a.check(Class::Data, 26, None, 3, None), [Some(("dscp", 26)), None, None]);
        // Right DSCP, wrong priority (no map): the lossless check speaks.
        assert_eq!(a.check(Class::Data, 3, None, 0, None), [None, Some(("not_lossless", 0)), None]);
        assert_eq!(a.check(Class::Ack, 44, None, 0, None), none, "ACK/NAKs need no lossless priority");
        assert_eq!(a.check(Class::Ack, 3, None, 3, None), [Some(("ack_dscp", 3)), None, None]);
        assert_eq!(a.check(Class::Cnp, 48, None, 6, None), none);
        assert_eq!(a.check(Class::Cnp, 26, None, 3, None), [Some(("cnp_dscp", 26)), None, None]);
        // Without an ACK class, ACK/NAKs are data.
        let b = cfg(&[("roce", Some(vec![26]))]);
        assert_eq!(b.check(Class::Ack, 44, None, 5, None), [Some(("dscp", 44)), None, None]);
        // PCP: tagged and wrong, or untagged.
        let c = AuditConfig { roce_pcp: Some(3), ecn_capable: true, ..AuditConfig::default() };
        assert_eq!(c.check(Class::Data, 26, Some(0), 0, Some(Ecn::Ce)), [None, Some(("pcp", 0)), None]);
        assert_eq!(
            c.check(Class::Data, 26, None, 3, Some(Ecn::NotEct)),
            [None, Some(("pcp_untagged", 0)), Some(("ecn", 0))]
        );
        assert_eq!(c.check(Class::Data, 26, None, 3, None), [None, Some(("pcp_untagged", 0)), None]);
    }
}
