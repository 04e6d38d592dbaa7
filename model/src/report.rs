//! The report: the whole document of `rocescope report --json`, its sections in their order.

use crate::audit::AuditReport;
use crate::connections::Connection;
use crate::counters::CountersReport;
use crate::ecmp::{EcmpReport, ElephantsReport};
use crate::fabric::FabricReport;
use crate::findings::Finding;
use crate::flows::FlowReport;
use crate::incast::IncastReport;
use crate::latency_samples::SampleSet;
use crate::nccl::NcclCheck;
use crate::overlay::VtepPairReport;
use crate::pauses::PauseReport;
use crate::points::{PointLoss, PointReport};
use crate::rhythm::RhythmReport;
use crate::summary::{CaptureCounters, ConfigReport, Interruption, SampledReport, SflowReport, Summary};
#[cfg(doc)]
use crate::SCHEMA_VERSION;
use serde::{Deserialize, Serialize};

/// Everything the analyzer found: the document `rocescope report --json` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`]: the first key of the JSON document.
    pub schema_version: u32,
    /// Whole-capture counters.
    pub summary: Summary,
    /// What is wrong, worst first.
    pub findings: Vec<Finding>,
    /// Per-flow figures: one entry per direction of a QP, keyed by (capture point, source,
    /// destination, destination QP). A requester's flow carries its requests (SENDs,
    /// WRITEs, READ requests) and its PSN analysis; the other direction's flow carries the
    /// responses, ACKs and NAKs (and CNPs sent back). `summary.flows` counts these.
    pub flows: Vec<FlowReport>,
    /// One entry per QP pair: the two flows of a connection paired (by CM exchange, else by
    /// PSN matching), or one flow alone when the other direction was not seen.
    /// `summary.connections` counts these.
    pub connections: Vec<Connection>,
    /// PFC and PAUSE per (source MAC, kind, priority).
    pub pfc: Vec<PauseReport>,
    /// Per capture point and priority: throughput, CE marks, CNPs and paused time on one
    /// time axis, with the busiest bins at the `--bin` resolution.
    pub timeline: FabricReport,
    /// The receivers with the most senders at once (fan-in), busiest first (crate::incast).
    pub incast: Vec<IncastReport>,
    /// The training iteration's rhythm and its stragglers, per capture point that has one
    /// (crate::rhythm; absent when none has).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rhythm: Vec<RhythmReport>,
    /// ECMP entropy per host pair and source host, and where ECMP puts the data flows
    /// (predicted with `--ecmp-paths`, measured with `--uplinks`; crate::ecmp).
    pub ecmp: EcmpReport,
    /// The data flows with the most bytes (crate::ecmp).
    pub elephants: ElephantsReport,
    /// VXLAN/Geneve VTEP pairs carrying the fabric's traffic (crate::overlay). Absent when
    /// there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlay: Vec<VtepPairReport>,
    /// The QoS audit.
    pub audit: AuditReport,
    /// Settings the analysis used.
    pub config: ConfigReport,
    /// Capture counters of a live run (set by the caller; absent for files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureCounters>,
    /// The capture points (one per merged capture; one for a single source). Flows and
    /// pause timelines name theirs by index.
    pub points: Vec<PointReport>,
    /// Packets of a flow seen at one capture point and never at another that was capturing
    /// the flow at the time (several merged captures only).
    pub between: Vec<PointLoss>,
    /// ACK and READ latency samples per capture point and priority, pooled over the
    /// request flows (crate::latency_samples): what `compare` tests a latency change on.
    /// Always written (empty without samples), so a document without it is an older one
    /// (read as empty).
    #[serde(default)]
    pub latency_samples: Vec<SampleSet>,
    /// Inputs that failed part-way or could not be read (set by the caller; the report
    /// covers what was read before). Absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_errors: Vec<String>,
    /// A signal (Ctrl-C) stopped the reading of files before their end: the report is
    /// partial (set by the caller). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// How far the reading got when it was interrupted. Absent when not interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_at: Option<Interruption>,
    /// The capture is sampled (`--sample-rate`, or sFlow): how, and what that changes.
    /// Absent when every packet was captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SampledReport>,
    /// The sFlow datagrams read (absent when there were none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sflow: Option<SflowReport>,
    /// The NIC's counters beside the capture's figures (`--counters`; set by the caller,
    /// absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<CountersReport>,
    /// The job's NCCL settings against the wire (`--nccl-env`; set by the caller through
    /// the analyzer's `nccl::attach`, absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<NcclCheck>,
}

impl Report {
    /// Packets the capture itself dropped, as far as it recorded them: a live run's libpcap
    /// counters (`capture`) and every point's pcapng statistics (`points[].capture_counters`).
    /// Findings may reflect capture loss when it is not zero.
    pub fn capture_dropped(&self) -> u64 {
        let live = self.capture.as_ref().map_or(0, |c| c.kernel_dropped.saturating_add(c.if_dropped));
        self.points
            .iter()
            .filter_map(|p| p.capture_counters.as_ref().and_then(|c| c.dropped))
            .fold(live, u64::saturating_add)
    }
}
