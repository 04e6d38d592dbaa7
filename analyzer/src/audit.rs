//! QoS audit: the DSCP, PCP and ECN that RoCE data and CNPs carry, against what the fabric is
//! configured for (reference §1.9; field notes "Typical configuration").

use serde::{Deserialize, Serialize};

/// What the fabric expects. Every check is off until its value is given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// DSCP of RoCE packets other than CNPs (e.g. 26).
    pub roce_dscp: Option<u8>,
    /// DSCP of CNPs (e.g. 48; deployments differ).
    pub cnp_dscp: Option<u8>,
    /// 802.1p PCP of VLAN-tagged RoCE packets other than CNPs (e.g. 3).
    pub roce_pcp: Option<u8>,
    /// Priorities with PFC enabled (lossless); pauses elsewhere are flagged.
    pub lossless_priorities: Option<Vec<u8>>,
    /// RoCE data (requests and responses) must be ECN-capable (ECT(0), ECT(1) or CE).
    #[serde(default)]
    pub ecn_capable: bool,
}

impl AuditConfig {
    /// True when any check is configured.
    pub fn is_set(&self) -> bool {
        self.roce_dscp.is_some()
            || self.cnp_dscp.is_some()
            || self.roce_pcp.is_some()
            || self.lossless_priorities.is_some()
            || self.ecn_capable
    }
}

/// The flow a violation is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct FlowRef {
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
}

/// One audit violation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// The flow (absent for pause-frame violations, which belong to a MAC and priority).
    pub flow: Option<FlowRef>,
    /// `dscp`, `pcp`, `ecn`, `cnp_dscp`, or `pause_priority`.
    pub what: &'static str,
    /// What was expected (a number; for `ecn`, the text "ECN-capable"; for
    /// `pause_priority`, the priorities RoCE uses or the lossless ones).
    pub expected: serde_json_value::Value,
    /// What was seen.
    pub seen: serde_json_value::Value,
    /// Packets (or pause frames) that differ.
    pub packets: u64,
    /// First such frame.
    pub first_frame: u64,
    /// Source MAC, for pause-frame violations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_mac: Option<String>,
    /// Index of the flow in `Report::flows` (not in the JSON, which names the flow).
    #[serde(skip)]
    pub flow_index: Option<usize>,
}

/// A tiny JSON-ish value so the analyzer needs no JSON crate: numbers, text or lists.
pub mod serde_json_value {
    use serde::Serialize;

    /// A value in a violation.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
    #[serde(untagged)]
    pub enum Value {
        /// A number.
        Num(u64),
        /// Text.
        Text(&'static str),
        /// A list of numbers.
        List(Vec<u64>),
    }
}
