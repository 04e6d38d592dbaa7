//! The receivers with the most senders at once (the report's `incast`).

use serde::{Deserialize, Serialize};

/// Where the capture point sits relative to the queue the senders share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    /// Upstream of the queue: the data to the receiver arrived faster than one link.
    Before,
    /// Downstream of it: the data carried CE marks.
    Past,
    /// Neither could be told.
    Unknown,
}

/// A receiver's busiest bin in the report (`incast[]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IncastReport {
    /// Capture point.
    pub point: u16,
    /// The receiver.
    pub receiver: String,
    /// Distinct senders of data to it in its busiest `--bin` bin.
    pub fan_in: u32,
    /// The bin width (`--bin`), ns.
    pub bin_ns: u64,
    /// When the bin began, ns since the epoch.
    pub start_ns: i64,
    /// Wire bytes of data to the receiver in the bin.
    pub bytes: u64,
    /// Data packets.
    pub packets: u64,
    /// Of those, CE-marked.
    pub ce: u64,
    /// CE-marked share of the packets.
    pub ce_fraction: f64,
    /// The data's rate over the bin, Gb/s.
    pub gbps: f64,
    /// That rate over the link speed (`--link-speed`).
    pub link_share: f64,
    /// PFC paused time during the bin at this point, on the priorities of the data to the
    /// receiver (802.3x PAUSE on any), summed over the pausing MACs.
    pub paused_ns: i64,
    /// Where the capture point sits relative to the queue the senders share.
    pub position: Position,
    /// The first senders (up to eight).
    pub senders: Vec<String>,
    /// The first data frame of the bin.
    pub first_frame: u64,
    /// Flows to the receiver whose `cc_not_reacting` verdict is withheld: past the queue
    /// (or where the position is unknown), a sender's rate is its share of the drain rate.
    pub cc_not_judged: u64,
}
