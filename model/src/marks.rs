//! The DSCP and PCP of a capture point's data, ACK/NAKs and CNPs (`points[].marks`).

use serde::{Deserialize, Serialize};

/// A capture point's marks per class.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MarksReport {
    /// Requests and READ responses.
    pub data: ClassMarksReport,
    /// Acknowledges (ACK/NAK).
    pub ack: ClassMarksReport,
    /// CNPs.
    pub cnp: ClassMarksReport,
}

/// One class's DSCP and PCP values with their packets (values with none left out).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClassMarksReport {
    /// DSCP values.
    pub dscp: Vec<ValueCount>,
    /// PCP values (`value` null: untagged).
    pub pcp: Vec<ValueCount>,
}

/// A value and its packets.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ValueCount {
    /// The value (null: untagged, for PCP).
    pub value: Option<u8>,
    /// Packets that carried it.
    pub packets: u64,
}
