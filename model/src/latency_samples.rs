//! The ACK and READ latency samples per capture point and priority (the report's `latency_samples`), what `compare` tests a latency change on.

use serde::{Deserialize, Serialize};

/// Which latency a pool holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// AckReq request to the ACK that covers it.
    #[default]
    Ack,
    /// READ request to its last response.
    Read,
}

/// `latency_samples[]` of a report (docs/report-json.md): one capture point's, priority's
/// and kind's samples, exactly (`exact`) or in time blocks (`blocks`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleSet {
    /// The capture point (index into `points`).
    pub point: u16,
    /// The priority of the request flows (as `flows[].priority`).
    pub priority: u8,
    /// `ack` or `read`.
    pub kind: Kind,
    /// Samples.
    pub count: u64,
    /// Every sample, ns, in the order they were taken (the time of the response that ended
    /// each; ties by value); absent past `latency_samples::EXACT_CAP` (analyzer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<Vec<u64>>,
    /// Past `latency_samples::EXACT_CAP` (analyzer): every sample counted per time block and bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<BlockSet>,
}

/// `latency_samples[].blocks`: block `i` holds the samples taken in
/// `[start + i × width_ns, start + (i + 1) × width_ns)` from the capture's first frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockSet {
    /// Each block's width, ns.
    pub width_ns: u64,
    /// The bucket layout: `latency_samples::SUB_BITS` bits below a value's leading one (the analyzer's `latency_samples::bucket`).
    pub sub_bits: u32,
    /// `[block, bucket, samples]`, the non-empty ones, by block then bucket.
    pub counts: Vec<(u32, u32, u64)>,
}
