//! The training iteration's rhythm and its stragglers (the report's `rhythm`).

use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// One iteration (one period) at one capture point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    /// Window start, ns since the epoch.
    pub start_ns: i64,
    /// Its first burst's start.
    pub busy_start_ns: i64,
    /// Its last burst's end.
    pub busy_end_ns: i64,
    /// Wire bytes of data in it.
    pub bytes: u64,
    /// Its busiest stretch of series bins as wide as the timeline's `--bin` bins (or
    /// wider), Gb/s; never above the timeline's busiest `--bin` bin at the point.
    pub peak_gbps: f64,
    /// Hosts that sent data in it.
    pub hosts: u64,
    /// The host whose data ended last.
    pub last_host: IpAddr,
    /// Its flow whose burst ended last (index into the report's flows).
    pub last_flow: usize,
    /// That flow's destination QP.
    pub last_qp: u32,
    /// The frame that ended it.
    pub last_frame: u64,
    /// How long after the next host to finish (0 with one host).
    pub margin_ns: i64,
}

impl Iteration {
    /// Its busy part: first burst start to last burst end, ns.
    pub fn busy_ns(&self) -> i64 {
        self.busy_end_ns - self.busy_start_ns
    }
}

impl RhythmReport {
    /// An iteration's busy part over the period (0 to 1).
    pub fn busy_share(&self, it: &Iteration) -> f64 {
        it.busy_ns() as f64 / self.period_ns.max(1) as f64
    }
}

/// A host that finished last in at least two iterations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    /// The host.
    pub host: IpAddr,
    /// Iterations it finished last in, by more than the margin.
    pub last_in: u64,
    /// Iterations with at least `rhythm::MIN_HOSTS` (analyzer) hosts sending.
    pub of: u64,
    /// The median margin over those iterations, ns.
    pub median_margin_ns: i64,
    /// That margin as a share of the median busy part.
    pub margin_share: f64,
    /// Its flow that ended last most often (index into the report's flows).
    pub flow: usize,
    /// It meets the straggler rule (module docs).
    pub verdict: bool,
}

/// The rhythm at one capture point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RhythmReport {
    /// Capture point.
    pub point: u16,
    /// The iteration period, ns.
    pub period_ns: i64,
    /// The autocorrelation peak at that period (0 to 1).
    pub strength: f64,
    /// Bin width of the series it was read from, ns.
    pub series_bin_ns: i64,
    /// Whole iterations in the capture.
    pub iterations: u64,
    /// Hosts that sent bursts.
    pub hosts: u64,
    /// Mean busy share of an iteration (busy part over the period).
    pub busy_share_mean: f64,
    /// Median busy part, ns.
    pub busy_ns_median: i64,
    /// Longest busy part, ns.
    pub busy_ns_max: i64,
    /// The iterations' highest peak ([`Iteration::peak_gbps`]), Gb/s.
    pub peak_gbps: f64,
    /// Share of the iterations' CE marks in the first quarter of their busy parts (`None`
    /// without CE marks, or with fabric bins too coarse to tell).
    pub ce_at_start: Option<f64>,
    /// Share of the iterations' paused time in the first quarter of their busy parts
    /// (`None` without pauses).
    pub pause_at_start: Option<f64>,
    /// CE marks or pauses cluster at the bursts' starts (at least twice an even share).
    pub herd: bool,
    /// The first `rhythm::ITERATIONS_LISTED` (analyzer) iterations.
    pub iteration_list: Vec<Iteration>,
    /// Hosts last in two or more iterations, most often first.
    pub stragglers: Vec<Straggler>,
    /// Every flow whose burst ended an iteration, with how many (all iterations, not only
    /// the listed ones), by flow index.
    pub last_flows: Vec<LastFlow>,
}

/// A flow whose burst ended one or more iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastFlow {
    /// Index into the report's flows.
    pub flow: usize,
    /// Iterations it ended.
    pub iterations: u64,
}
