//! ECMP entropy, predicted and measured path loads, and the elephants (the report's `ecmp` and `elephants`).

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::net::IpAddr;

/// The ECMP section of the report (`ecmp` in the JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EcmpReport {
    /// `ecmp::BUSY_MIN_BYTES` (analyzer): the bytes that make a data QP busy.
    pub busy_min_bytes: u64,
    /// Host pairs with two or more RoCEv2 data QPs, the most bytes first (at most
    /// `ecmp::LISTED`).
    pub host_pairs: Vec<PairEntropy>,
    /// Host pairs with RoCEv2 data (listed or not).
    pub host_pairs_total: u64,
    /// Source hosts with two or more RoCEv2 data QPs, the most bytes first (at most
    /// `ecmp::LISTED`).
    pub hosts: Vec<HostEntropy>,
    /// Source hosts with RoCEv2 data (listed or not).
    pub hosts_total: u64,
    /// Where the modelled hash puts the data flows (`--ecmp-paths`). Absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PathPrediction>,
    /// The load measured at the uplinks (`--uplinks`). Absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplinks: Option<UplinkReport>,
}

/// One host pair's entropy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairEntropy {
    /// Capture point.
    pub point: u16,
    /// Source.
    pub src: IpAddr,
    /// Destination.
    pub dst: IpAddr,
    /// RoCEv2 data QPs (flows with payload; QP1's management datagrams left out).
    pub qps: u32,
    /// Of those, busy (`ecmp::BUSY_MIN_BYTES` (analyzer) or more).
    pub busy_qps: u32,
    /// Distinct UDP source ports (each QP's first).
    pub ports: u32,
    /// Wire bytes of the data QPs.
    pub bytes: u64,
    /// Entropy of the bytes over the source ports, bits.
    pub entropy_bits: f64,
    /// Entropy of the bytes over the QPs, bits: the most the ports could give.
    pub qp_entropy_bits: f64,
    /// The port the most busy QPs share (else the most QPs).
    pub top_port: u16,
    /// Data QPs on it.
    pub top_port_qps: u32,
    /// Busy QPs on it.
    pub top_port_busy_qps: u32,
    /// QPs whose port changed during the capture (counted at their first port).
    pub ports_changed: u32,
    /// It makes `ecmp_low_entropy` (`ecmp::LOW_ENTROPY_MIN_QPS` busy QPs whose port never
    /// changed share one): for the views that mark it, not in the JSON (the finding is), so
    /// false in a report read back from it.
    #[serde(skip)]
    pub low_entropy: bool,
}

impl PairEntropy {
    /// `10.0.0.1 → 10.0.0.2: 8 QPs (8 busy) on 1 port(s), 8 on port 49152: 0.00 bits of
    /// 3.00`, as the text report and the TUI write it.
    pub fn summary(&self) -> String {
        format!(
            "{} → {}: {} QPs ({} busy) on {} port(s), {} on port {}: {:.2} bits of {:.2}",
            self.src,
            self.dst,
            self.qps,
            self.busy_qps,
            self.ports,
            self.top_port_qps,
            self.top_port,
            self.entropy_bits,
            self.qp_entropy_bits
        )
    }
}

/// One source host's entropy over all its destinations.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostEntropy {
    /// Capture point.
    pub point: u16,
    /// The source host.
    pub src: IpAddr,
    /// RoCEv2 data QPs.
    pub qps: u32,
    /// Of those, busy.
    pub busy_qps: u32,
    /// Destinations.
    pub destinations: u32,
    /// Distinct UDP source ports.
    pub ports: u32,
    /// Wire bytes.
    pub bytes: u64,
    /// Entropy of the bytes over the source ports, bits.
    pub entropy_bits: f64,
    /// Entropy of the bytes over the QPs, bits.
    pub qp_entropy_bits: f64,
}

/// Where the modelled hash puts the data flows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PathPrediction {
    /// Paths.
    pub paths: u16,
    /// The hash (`--ecmp-hash` form).
    pub hash: String,
    /// The fields hashed: `5-tuple` or `5-tuple+qp`.
    pub key: Cow<'static, str>,
    /// The capture points whose flows were placed (all, or the uplinks).
    pub points: Vec<u16>,
    /// RoCEv2 data flows placed.
    pub flows: u64,
    /// Of those, busy.
    pub busy_flows: u64,
    /// Their wire bytes.
    pub bytes: u64,
    /// Every path's load.
    pub loads: Vec<PathLoad>,
    /// The busiest path's bytes over the mean path's (0 without bytes).
    pub max_over_mean: f64,
    /// The busiest path.
    pub busiest: u16,
    /// Paths no flow was put on.
    pub idle_paths: u32,
    /// Paths that two or more busy flows share, the most bytes first.
    pub collisions: Vec<Collision>,
    /// Each placed flow's path, by flow index (ascending): for the Parquet flow table, not
    /// in the JSON (which gives each path's load and its colliding elephants), so empty in a
    /// report read back from it.
    #[serde(skip)]
    pub placed: Vec<(usize, u16)>,
}

/// One path's predicted load.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PathLoad {
    /// The path.
    pub path: u16,
    /// Wire bytes.
    pub bytes: u64,
    /// Data flows.
    pub flows: u64,
    /// Of those, busy.
    pub busy_flows: u64,
    /// Share of the bytes placed.
    pub share: f64,
}

/// Busy flows the hash puts on one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Collision {
    /// The path.
    pub path: u16,
    /// Busy flows on it.
    pub busy_flows: u64,
    /// Its bytes.
    pub bytes: u64,
    /// The busy flows (indices into `flows`), the most bytes first (at most `ecmp::NAMED`).
    pub elephants: Vec<usize>,
}

/// The load measured at the uplinks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UplinkReport {
    /// Each uplink found among the capture points.
    pub uplinks: Vec<UplinkLoad>,
    /// `--uplinks` names that no capture point has.
    pub unmatched: Vec<String>,
    /// The busiest uplink's bytes over the mean uplink's (0 with fewer than two uplinks or
    /// no bytes).
    pub max_over_mean: f64,
    /// The busiest uplink (a capture point).
    pub busiest: Option<u16>,
    /// The width of the bins below (the widest of the uplinks' series).
    pub bin_ns: u64,
    /// Per bin from the capture start, the busiest uplink's bytes over the mean (0 where
    /// no uplink carried anything).
    pub max_over_mean_bins: Vec<f64>,
    /// Which modelled hashes (seed 0) put the uplinks' data flows where they were measured
    /// (the analyzer's `ecmp::fitting_hashes`).
    pub hash_fit: HashFit,
}

/// The modelled hashes that explain a measured placement: for each, the path it picks for
/// every data flow seen at an uplink, and whether one path per uplink (a one-to-one map
/// of paths to uplinks) reproduces where every flow was seen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HashFit {
    /// RoCEv2 data flows placed (each QP once, at the uplink that saw most of it).
    pub flows: u64,
    /// Hashes tested: each function of `ecmp::HashFn::ALL` over the 5-tuple and over the
    /// 5-tuple and the QP, seed 0.
    pub tested: u32,
    /// Whether there are enough flows to tell (`ecmp::FIT_MIN_FLOWS_OVER_UPLINKS` more than
    /// the uplinks, on two uplinks or more): with fewer, a wrong hash fits by chance.
    pub decided: bool,
    /// The hashes that fit (`--ecmp-hash` form), when decided.
    pub fitting: Vec<String>,
}

/// One uplink's measured load.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UplinkLoad {
    /// The capture point.
    pub point: u16,
    /// Its name.
    pub name: String,
    /// RoCE wire bytes of its flows.
    pub bytes: u64,
    /// Share of the uplinks' bytes.
    pub share: f64,
    /// Busy data flows seen on it.
    pub busy_flows: u64,
    /// They (indices into `flows`), the most bytes first (at most `ecmp::NAMED`).
    pub elephants: Vec<usize>,
    /// RoCE wire bytes per bin (`bin_ns` wide) from the capture start (the fabric series;
    /// empty past its 64 points).
    pub bins: Vec<u64>,
}

/// The elephants section of the report (`elephants` in the JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ElephantsReport {
    /// Data flows (with payload; RoCEv1 included). A QP seen at several capture points is
    /// a flow at each, as in `flows`.
    pub data_flows: u64,
    /// Their wire bytes.
    pub data_bytes: u64,
    /// Of them, busy (`ecmp::BUSY_MIN_BYTES` (analyzer) or more).
    pub busy_flows: u64,
    /// The `ecmp::TOP_ELEPHANTS` with the most bytes.
    pub top: Vec<Elephant>,
    /// Their share of `data_bytes`.
    pub top_share: f64,
    /// `ecmp::ELEPHANT_SHARE`.
    pub share: f64,
    /// The fewest flows that carry `share` of the data bytes.
    pub flows_for_share: u64,
}

/// One elephant.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Elephant {
    /// The flow (index into `flows`).
    pub flow: usize,
    /// Capture point.
    pub point: u16,
    /// Source.
    pub src: IpAddr,
    /// Destination.
    pub dst: IpAddr,
    /// Destination QP.
    pub dest_qp: u32,
    /// Its UDP source port (null for RoCEv1).
    pub udp_src_port: Option<u16>,
    /// Wire bytes.
    pub bytes: u64,
    /// Share of the data bytes.
    pub share: f64,
    /// At least `ecmp::BUSY_MIN_BYTES` (analyzer).
    pub busy: bool,
}
