//! The fabric's time series per capture point and priority (the report's `timeline`).

use serde::{Deserialize, Serialize};

/// The fabric-wide series in the report (`timeline` in the JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FabricReport {
    /// The `--bin` width: the resolution of the peaks, and the series' starting width.
    pub base_ns: u64,
    /// Per capture point.
    pub points: Vec<PointSeriesReport>,
    /// Frames and paused intervals at capture points past the first 64, not charted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub points_uncharted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One capture point's series.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointSeriesReport {
    /// Index into the report's `points`.
    pub point: u16,
    /// The series' bin width: `base_ns`, doubled as often as the capture's length needed
    /// to fit 256 bins.
    pub bin_ns: u64,
    /// The priorities that carried RoCE or were paused.
    pub priorities: Vec<PrioritySeries>,
    /// 802.3x PAUSE paused ns per bin, summed over the pausing MACs (empty without PAUSE).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_pause_ns: Vec<u64>,
}

/// One priority's series at a capture point, bins from the capture start.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioritySeries {
    /// The priority (PCP, or DSCP through the map).
    pub priority: u8,
    /// RoCE wire bytes per bin.
    pub bytes: Vec<u64>,
    /// RoCE packets per bin.
    pub packets: Vec<u64>,
    /// ECN-CE marked packets per bin.
    pub ce: Vec<u64>,
    /// CNPs per bin (at the CNPs' own priority).
    pub cnps: Vec<u64>,
    /// PFC paused ns per bin, summed over the MACs that paused this priority (above the
    /// bin width when several paused at once).
    pub pause_ns: Vec<u64>,
    /// Packets of the data class per bin (RDMA requests and READ responses: not ACKs,
    /// NAKs or CNPs).
    #[serde(default)]
    pub data_packets: Vec<u64>,
    /// Of those, ECN-CE marked: `data_ce / data_packets` is the priority's CE fraction of
    /// data, packet by packet, where a flow's own ECN counts mix the data with the ACKs and
    /// CNPs it carries back.
    #[serde(default)]
    pub data_ce: Vec<u64>,
    /// The busiest bins at the `--bin` width.
    pub peak: FabricPeak,
}

/// A priority's busiest bins at the `--bin` width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FabricPeak {
    /// The busiest bin's RoCE rate over its full width, Gb/s.
    pub gbps: f64,
    /// Its start, ns after the capture start.
    pub offset_ns: u64,
    /// Most CE marks in one bin.
    pub ce: u64,
    /// Packets in that bin.
    pub ce_packets: u64,
    /// Its start.
    pub ce_offset_ns: u64,
    /// Most CNPs in one bin.
    pub cnps: u64,
    /// Its start.
    pub cnps_offset_ns: u64,
}
