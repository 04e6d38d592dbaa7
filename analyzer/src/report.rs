//! The report: whole-capture summary, findings worst first, per-flow figures, connections,
//! PFC/PAUSE timelines and the QoS audit. Serialises to the JSON documented in
//! `docs/report-json.md`.

use crate::audit::serde_json_value::Value;
use crate::audit::{AuditConfig, FlowRef, Violation};
use crate::findings::FindingSink;
use crate::flow::{EvidenceKind, Flow};
use crate::pfc::{Interval, PauseKind, PfcConfig, Storm, Timeline, IGNORED_CRITICAL_FRAMES};
use crate::stats::{rates, LatencySummary, Rate, Series};
use crate::Analyzer;
use rocescope_decoder::link::mac_string;
use serde::Serialize;

/// The version of the report's JSON schema (`docs/report.schema.json`). It changes only when
/// a field is removed or renamed or changes its type or meaning; fields are added without a
/// change, so consumers must ignore fields they do not know (docs/report-json.md).
pub const SCHEMA_VERSION: u32 = 1;

/// Everything the analyzer found.
#[derive(Clone, Debug, Serialize)]
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
    pub timeline: crate::fabric::FabricReport,
    /// The receivers with the most senders at once (fan-in), busiest first (crate::incast).
    pub incast: Vec<crate::incast::IncastReport>,
    /// VXLAN/Geneve VTEP pairs carrying the fabric's traffic (crate::overlay). Absent when
    /// there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlay: Vec<crate::overlay::VtepPairReport>,
    /// The QoS audit.
    pub audit: AuditReport,
    /// Settings the analysis used.
    pub config: ConfigReport,
    /// Capture counters of a live run (set by the caller; absent for files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureCounters>,
    /// The capture points (one per merged capture; one for a single source). Flows and
    /// pause timelines name theirs by index.
    pub points: Vec<PointReport>,
    /// Packets of a flow seen at one capture point and never at another that was capturing
    /// the flow at the time (several merged captures only).
    pub between: Vec<PointLoss>,
    /// Inputs that failed part-way or could not be read (set by the caller; the report
    /// covers what was read before). Absent when there were none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_errors: Vec<String>,
    /// A signal (Ctrl-C) stopped the reading of files before their end: the report is
    /// partial (set by the caller). Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// How far the reading got when it was interrupted. Absent when not interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_at: Option<Interruption>,
    /// The capture is sampled (`--sample-rate`, or sFlow): how, and what that changes.
    /// Absent when every packet was captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SampledReport>,
    /// The sFlow datagrams read (absent when there were none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sflow: Option<SflowReport>,
    /// The NIC's counters beside the capture's figures (`--counters`; set by the caller,
    /// absent without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::nic_counters::CountersReport>,
}

/// How far an interrupted report read its files.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Interruption {
    /// The signal: `SIGINT` or `SIGTERM`.
    pub signal: &'static str,
    /// Frames read.
    pub frames_read: u64,
    /// Bytes of the files read, about (record headers and data), when their sizes are known
    /// (uncompressed files; not standard input).
    pub bytes_read: Option<u64>,
    /// Their sizes together.
    pub bytes_total: Option<u64>,
}

/// What the sFlow datagrams of a capture held.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SflowReport {
    /// sFlow v5 datagrams read.
    pub datagrams: u64,
    /// Flow samples (formats 1 and 3) in them.
    pub flow_samples: u64,
    /// Raw Ethernet packet headers analysed.
    pub headers: u64,
    /// Counter samples and samples of other formats, skipped.
    pub skipped_samples: u64,
    /// Flow records other than Ethernet raw headers (extended records, other protocols),
    /// skipped.
    pub skipped_records: u64,
    /// Datagrams to the sFlow port that could not be read (analysed as ordinary frames).
    pub bad_datagrams: u64,
    /// Why the first of those could not be read, with its frame number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Each data source (agent and interface) in the order first seen.
    pub sources: Vec<SflowSource>,
}

/// One sFlow data source: an agent's interface, a capture point of the analysis.
#[derive(Clone, Debug, Serialize)]
pub struct SflowSource {
    /// The agent address the datagrams give.
    pub agent: String,
    /// Sub-agent id.
    pub sub_agent: u32,
    /// Data source type (0: ifIndex).
    pub source_type: u32,
    /// Data source index (the ifIndex for type 0).
    pub if_index: u32,
    /// Capture point (index into `points`).
    pub point: u16,
    /// Flow samples received.
    pub samples: u64,
    /// Sampling rate of its latest sample (one in N).
    pub sampling_rate: u32,
    /// Samples the agent says it dropped (its latest count).
    pub drops: u32,
    /// Samples missing by the sample sequence numbers (datagrams lost on the way to the
    /// collector, or dropped by the agent).
    pub sequence_gaps: u64,
}

/// A sampled capture (docs/verdicts.md "Sampled captures"): packet and byte counters are
/// estimates (each sampled packet counted as many times as its sampling rate), and the
/// verdicts that need every packet are off.
#[derive(Clone, Debug, Serialize)]
pub struct SampledReport {
    /// `flag` (`--sample-rate N`) or `sflow` (the rates sFlow agents sent).
    pub source: crate::SamplingSource,
    /// The sampling rate (one packet in N) when one rate applies to every packet; `null`
    /// when sFlow agents used several (see `rate_min`, `rate_max`).
    pub rate: Option<u32>,
    /// Smallest rate met (the configured one before any packet).
    pub rate_min: u32,
    /// Largest rate met.
    pub rate_max: u32,
    /// Packets actually seen (samples), unscaled; `summary.packets` is the estimate.
    pub samples: u64,
    /// Always false: PSN-gap loss, resend causes, reordering, one-way connections, CE
    /// without CNP, PFC storms and deadlock hints, matching across capture points and
    /// pauses on priorities no RoCE uses are not judged on a sampled capture.
    pub loss_verdicts: bool,
    /// Findings of those kinds the analysis would have made, not made.
    pub suppressed_findings: u64,
    /// Latencies (ACK, READ, NAK to resend, CE to CNP) are measured between sampled
    /// packets only, so each is an upper bound of the real one: true.
    pub latency_upper_bound: bool,
}

/// One capture point.
#[derive(Clone, Debug, Serialize)]
pub struct PointReport {
    /// Its name (capture file name, or interface).
    pub name: String,
    /// Frames.
    pub packets: u64,
    /// RoCE frames.
    pub roce: u64,
    /// Mirror duplicates at this point (crate::dedup). Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// First frame time.
    pub start_ns: Option<i64>,
    /// Latest frame time.
    pub end_ns: Option<i64>,
    /// The mirror session this point stands for (`ERSPAN session 7`, `VXLAN VNI 10007`),
    /// when a tunnel named one (crate::mirror).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The switch clock that timed this point's frames (ERSPAN III), when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<PointClock>,
    /// RoCE packets whose PCP came from their ERSPAN header's COS (the frame was untagged).
    #[serde(skip_serializing_if = "is_zero")]
    pub pcp_from_erspan: u64,
    /// Frames whose ERSPAN III timestamp could not be used (zero, the user-defined
    /// granularity, nanoseconds past a second): they kept their capture time.
    #[serde(skip_serializing_if = "is_zero")]
    pub switch_stamps_unused: u64,
    /// Its packets were matched against the other points' (merged captures; not points
    /// found while reading: mirror sessions, sFlow sources). Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub matched: bool,
    /// The capture's own counters at this point, as its pcapng file recorded them (its
    /// Interface Statistics Blocks): what the capture received and dropped. Absent when the
    /// file holds none. The caller fills it in (the analyzer sees frames, not blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_counters: Option<PointCaptureCounters>,
}

/// The capture counters a capture point's pcapng file recorded: its interfaces' last usable
/// Interface Statistics Blocks added up (docs/report-json.md). Each count is the sum over the
/// interfaces that gave it, null when none did: an absent option is unknown, not zero.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PointCaptureCounters {
    /// Where they come from: `pcapng` (Interface Statistics Blocks).
    pub source: &'static str,
    /// The interfaces whose counters these are (`if_name`, or `interface N`).
    pub interfaces: Vec<String>,
    /// `isb_ifrecv`: packets received from the interfaces.
    pub received: Option<u64>,
    /// `isb_ifdrop`: packets dropped by the interface (dumpcap writes the kernel's and its
    /// own drops here too).
    pub if_dropped: Option<u64>,
    /// `isb_osdrop`: packets dropped by the operating system.
    pub os_dropped: Option<u64>,
    /// The drops known: `if_dropped` + `os_dropped`; null when neither is.
    pub dropped: Option<u64>,
    /// Interface Statistics Blocks set aside (damaged, or naming an interface not
    /// described). Absent when none.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub damaged_blocks: u32,
    /// An interface's later block counted less than an earlier one (the last was kept).
    /// Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub went_backwards: bool,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A switch clock that timed a capture point's frames (crate::mirror: the ERSPAN III
/// timestamps, anchored to the capture clock).
#[derive(Clone, Debug, Serialize)]
pub struct PointClock {
    /// Where the times come from: `erspan3`.
    pub source: String,
    /// The timestamps' unit: `100us`, `100ns` or `IEEE 1588`.
    pub granularity: String,
    /// The platform subheader carried the upper bits (else the field was unwrapped).
    pub upper_bits: bool,
    /// Frames timed by it.
    pub frames: u64,
    /// Times it was anchored again (the switch clock departed from the capture clock by
    /// more than a collector queue and clock drift explain: crate::mirror).
    pub steps: u64,
    /// Largest difference between the capture clock's and the switch clock's advance (ns):
    /// how much the mirror's path and the collector moved frames in time.
    pub max_departure_ns: i64,
    /// The session fell back to the capture clock: its switch clock needed anchoring again
    /// more than [`crate::mirror::MAX_CLOCK_STEPS`] times. Absent when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<ClockFallback>,
}

/// Where a session's switch clock was given up for the capture clock (crate::mirror).
#[derive(Clone, Debug, Serialize)]
pub struct ClockFallback {
    /// Why: `steps` (re-anchored more than [`crate::mirror::MAX_CLOCK_STEPS`] times).
    pub reason: &'static str,
    /// The frame from which on the session's frames keep their capture time (the one that
    /// would have re-anchored the clock once more).
    pub frame: u64,
    /// Its capture time.
    pub ts_ns: i64,
    /// How far the switch clock had departed from the capture clock at that frame (ns,
    /// signed: positive when the capture clock had advanced more).
    pub departure_ns: i64,
    /// Frames that kept their capture time from then on (that frame included).
    pub frames: u64,
}

/// Packets of one flow lost between two capture points.
#[derive(Clone, Debug, Serialize)]
pub struct PointLoss {
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
    /// The point that saw them (index into `points`).
    pub from: u16,
    /// The point that did not.
    pub to: u16,
    /// Packets.
    pub packets: u64,
    /// First such packet (frame number, at `from`).
    pub first_frame: u64,
    /// Its time.
    pub first_ns: i64,
    /// The flow at `from` (index into `flows`).
    pub flow: Option<usize>,
}

/// libpcap's counters for a live capture.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureCounters {
    /// Interface.
    pub interface: String,
    /// Packets the filter accepted.
    pub received: u64,
    /// Dropped by the kernel (buffer full).
    pub kernel_dropped: u64,
    /// Dropped by the interface or driver.
    pub if_dropped: u64,
}

/// Whole-capture counters.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Frames.
    pub packets: u64,
    /// RoCE frames that decoded completely (v1 and v2).
    pub roce: u64,
    /// Of those, RoCEv1.
    pub roce_v1: u64,
    /// Frames that are neither RoCE nor MAC Control.
    pub non_roce: u64,
    /// Frames to the RoCE port that did not decode as RoCE.
    pub malformed: u64,
    /// Frames in a tunnel the decoder recognised but did not unwrap (also in `non_roce`).
    pub tunnel_undecoded: u64,
    /// Invalid ICRCs.
    pub icrc_bad: u64,
    /// ICRCs not checkable because the capture cut the frame.
    pub icrc_truncated: u64,
    /// PFC frames.
    pub pfc_frames: u64,
    /// 802.3x PAUSE frames.
    pub pause_frames: u64,
    /// CNPs.
    pub cnps: u64,
    /// First frame time (ns since the epoch).
    pub start_ns: Option<i64>,
    /// Last frame time.
    pub end_ns: Option<i64>,
    /// Flows.
    pub flows: u64,
    /// Connections (paired or not).
    pub connections: u64,
    /// Wire bytes of RoCE frames.
    pub roce_bytes: u64,
    /// Path MTU used for READ reservations (configured or inferred; 0 unknown).
    pub pmtu: u32,
    /// RoCE frames that were a mirror's second copy of a packet (crate::dedup): left out
    /// of `roce` and every other figure unless `config.keep_duplicates`.
    pub duplicates: u64,
    /// Capture records with no captured byte, passed over by the reader (nothing to analyse,
    /// not in `packets`; set by the caller). Frame numbers count them, as tshark's do.
    pub empty_records: u64,
    /// Flows no longer tracked (idle, or past `--max-flows`): not in `flows`; their packets
    /// and wire bytes are `evicted_packets` and `evicted_bytes`.
    pub flows_evicted: u64,
    /// See `flows_evicted`.
    pub evicted_packets: u64,
    /// See `flows_evicted`.
    pub evicted_bytes: u64,
    /// Findings by severity.
    pub findings: SeverityCounts,
}

/// Findings per severity.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SeverityCounts {
    /// Critical.
    pub critical: u64,
    /// Warning.
    pub warning: u64,
    /// Info.
    pub info: u64,
}

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Hurts training now (loss, timeouts, storms, wrong class).
    Critical,
    /// Worth a look.
    Warning,
    /// Context.
    Info,
}

/// A frame that supports a finding.
#[derive(Clone, Debug, Serialize)]
pub struct EvidenceRef {
    /// Frame number.
    pub frame: u64,
    /// Its time.
    pub ts_ns: i64,
    /// What it shows.
    pub what: String,
}

/// What a finding is about: its machine-readable `kind` in the JSON report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Packets of a flow lost in the network: PSN gaps answered by NAK or resends.
    NetworkLoss,
    /// Resends with no NAK pending: the requester waited out its ACK timeout.
    TimeoutRetransmit,
    /// PSN gaps never NAKed or resent: probably lost by the capture, not the network.
    CaptureLoss,
    /// Packets that arrived late but within the reorder window.
    OutOfOrder,
    /// NAKs other than PSN sequence errors (access, operational, invalid request).
    NakError,
    /// Mellanox DC NAK-like syndromes (part of the DCT handshake).
    DcNak,
    /// Receiver-not-ready NAKs and the retries after them.
    Rnr,
    /// ECN-CE marked packets that no CNP answered.
    CeWithoutCnp,
    /// ECN-CE marks answered by CNPs: congestion control at work.
    Congestion,
    /// CNPs to one QP closer together than the configured NP pacing (`--cnp-pacing-us`).
    CnpTooFast,
    /// The sender's rate did not fall after most of the CNPs it received.
    CcNotReacting,
    /// Many senders to one receiver at once (fan-in) with CE marks or pauses during it.
    Incast,
    /// Frames whose ICRC does not match.
    IcrcBad,
    /// A MAC paused a priority for most of its storm windows.
    PfcStorm,
    /// A long continuous pause while the priority's RoCE towards the pausing side stopped.
    PfcDeadlock,
    /// RoCE kept arriving at a MAC on the priority it was pausing, beyond the response
    /// allowance: the peer ignores the pause (PFC off for that priority on the peer, or a
    /// priority mapping mismatch).
    PauseIgnored,
    /// 802.3x PAUSE frames (the whole link).
    LinkPause,
    /// Pauses on a priority no RoCE uses, or not a lossless one.
    PauseUnusedPriority,
    /// RoCE, CNPs or ACKs on a DSCP/PCP/ECN the expectations do not allow, or RoCE data on a
    /// priority that is not lossless.
    QosViolation,
    /// RoCE without a VLAN tag (so no PCP) while a PCP is expected.
    PcpUntagged,
    /// Audit expectations given, but no RoCE in the capture to check them on.
    AuditNoRoce,
    /// Frames to the RoCE port that did not decode as RoCE.
    Malformed,
    /// Frames the capture cut before their ICRC.
    Truncated,
    /// A capture with no RoCE in it.
    NoRoce,
    /// Capture points whose clocks never tied, or beyond the compared ones.
    PointsUnmatched,
    /// Packets one capture point saw and another, capturing the flow, never did.
    LostBetweenPoints,
    /// Resends with no NAK in the capture, sooner than an ACK timeout: cause not visible.
    ResendUnexplained,
    /// READs re-issued after their responses came out of sequence: READ responses lost.
    ImpliedNak,
    /// NAKs for packets that arrived late: go-back-N provoked by reordering.
    SpuriousNak,
    /// PSN gaps on UC QPs, which never resend: lost messages.
    UcLoss,
    /// Connections whose other direction (ACKs, NAKs, responses) is not in the capture.
    OneDirection,
    /// Frames in a tunnel the decoder recognised but did not unwrap: RoCE inside, if any,
    /// was not analysed.
    TunnelNotDecoded,
    /// The NIC's counters (`--counters`) and the capture disagree beyond what capture loss
    /// explains: the NIC counted pauses, CNPs or NAKs the capture never saw, or fewer than
    /// the capture shows for it.
    CountersDisagree,
    /// The NIC's PFC counters (`--counters`) moved on a priority no RoCE of the host travels
    /// on, and on none that it does: one side pauses one priority, RoCE travels on another.
    PfcPriorityMismatch,
}

impl FindingKind {
    /// Every kind, in the order the JSON schema lists them.
    pub const ALL: &'static [FindingKind] = &[
        FindingKind::NetworkLoss,
        FindingKind::TimeoutRetransmit,
        FindingKind::CaptureLoss,
        FindingKind::OutOfOrder,
        FindingKind::NakError,
        FindingKind::DcNak,
        FindingKind::Rnr,
        FindingKind::CeWithoutCnp,
        FindingKind::Congestion,
        FindingKind::IcrcBad,
        FindingKind::PfcStorm,
        FindingKind::PfcDeadlock,
        FindingKind::PauseIgnored,
        FindingKind::LinkPause,
        FindingKind::PauseUnusedPriority,
        FindingKind::QosViolation,
        FindingKind::PcpUntagged,
        FindingKind::AuditNoRoce,
        FindingKind::Malformed,
        FindingKind::Truncated,
        FindingKind::NoRoce,
        FindingKind::PointsUnmatched,
        FindingKind::LostBetweenPoints,
        FindingKind::ResendUnexplained,
        FindingKind::ImpliedNak,
        FindingKind::SpuriousNak,
        FindingKind::UcLoss,
        FindingKind::OneDirection,
        FindingKind::TunnelNotDecoded,
        FindingKind::CountersDisagree,
        FindingKind::PfcPriorityMismatch,
        FindingKind::CnpTooFast,
        FindingKind::CcNotReacting,
        FindingKind::Incast,
    ];

    /// The JSON name (`network_loss`, `pfc_storm`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::NetworkLoss => "network_loss",
            FindingKind::TimeoutRetransmit => "timeout_retransmit",
            FindingKind::CaptureLoss => "capture_loss",
            FindingKind::OutOfOrder => "out_of_order",
            FindingKind::NakError => "nak_error",
            FindingKind::DcNak => "dc_nak",
            FindingKind::Rnr => "rnr",
            FindingKind::CeWithoutCnp => "ce_without_cnp",
            FindingKind::Congestion => "congestion",
            FindingKind::IcrcBad => "icrc_bad",
            FindingKind::PfcStorm => "pfc_storm",
            FindingKind::PfcDeadlock => "pfc_deadlock",
            FindingKind::PauseIgnored => "pause_ignored",
            FindingKind::LinkPause => "link_pause",
            FindingKind::PauseUnusedPriority => "pause_unused_priority",
            FindingKind::QosViolation => "qos_violation",
            FindingKind::PcpUntagged => "pcp_untagged",
            FindingKind::AuditNoRoce => "audit_no_roce",
            FindingKind::Malformed => "malformed",
            FindingKind::Truncated => "truncated",
            FindingKind::NoRoce => "no_roce",
            FindingKind::PointsUnmatched => "points_unmatched",
            FindingKind::LostBetweenPoints => "lost_between_points",
            FindingKind::ResendUnexplained => "resend_unexplained",
            FindingKind::ImpliedNak => "implied_nak",
            FindingKind::SpuriousNak => "spurious_nak",
            FindingKind::UcLoss => "uc_loss",
            FindingKind::OneDirection => "one_direction",
            FindingKind::TunnelNotDecoded => "tunnel_not_decoded",
            FindingKind::CountersDisagree => "counters_disagree",
            FindingKind::PfcPriorityMismatch => "pfc_priority_mismatch",
            FindingKind::CnpTooFast => "cnp_too_fast",
            FindingKind::CcNotReacting => "cc_not_reacting",
            FindingKind::Incast => "incast",
        }
    }

    /// Whether the verdict needs every packet of the capture: it rests on a packet being
    /// absent (a PSN gap, no CNP, no reverse direction, no RoCE on a priority) or on the
    /// order of consecutive packets (resend causes, reordering, continuous pauses). Such
    /// findings are not made on a sampled capture (docs/verdicts.md "Sampled captures").
    pub fn needs_every_packet(self) -> bool {
        matches!(
            self,
            FindingKind::NetworkLoss
                | FindingKind::TimeoutRetransmit
                | FindingKind::CaptureLoss
                | FindingKind::OutOfOrder
                | FindingKind::CeWithoutCnp
                | FindingKind::PfcStorm
                | FindingKind::PfcDeadlock
                | FindingKind::PointsUnmatched
                | FindingKind::LostBetweenPoints
                | FindingKind::ResendUnexplained
                | FindingKind::ImpliedNak
                | FindingKind::SpuriousNak
                | FindingKind::UcLoss
                | FindingKind::OneDirection
                | FindingKind::CnpTooFast
                | FindingKind::CcNotReacting
        )
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for FindingKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// Machine-readable kind (e.g. `network_loss`, `pfc_storm`).
    pub kind: FindingKind,
    /// What is wrong and where, in a sentence.
    pub title: String,
    /// The flow (index into `flows`), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<usize>,
    /// The source MAC and priority, for pause findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_mac: Option<String>,
    /// Priority, for pause findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// Frames that show it.
    pub evidence: Vec<EvidenceRef>,
    /// How much it weighs (packets or frames affected), for ordering.
    pub weight: u64,
    /// A summary of this many findings of its kind that are not listed one by one (more
    /// than `Config::findings_per_kind` of them): its weight is theirs summed, its severity
    /// the worst of theirs, its evidence the heaviest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded: Option<u64>,
}

/// Opcode count.
#[derive(Clone, Debug, Serialize)]
pub struct OpcodeCount {
    /// Opcode value.
    pub opcode: u8,
    /// Its name.
    pub name: &'static str,
    /// Packets.
    pub packets: u64,
}

/// ECN codepoint counts.
#[derive(Clone, Debug, Serialize)]
pub struct EcnCounts {
    /// Not-ECT.
    pub not_ect: u64,
    /// ECT(0).
    pub ect0: u64,
    /// ECT(1).
    pub ect1: u64,
    /// CE.
    pub ce: u64,
    /// CE / packets.
    pub ce_fraction: f64,
}

/// Request PSN stream analysis.
#[derive(Clone, Debug, Serialize)]
pub struct PsnReport {
    /// Whether the flow carries RC/UC/XRC requests (PSN analysis applies).
    pub tracked: bool,
    /// PSN gaps: times this flow's next packet skipped ahead of the expected PSN (24-bit,
    /// modular), one per jump, however many PSNs it skipped. A gap is not yet a loss: it
    /// is settled as network loss (`network_loss_gaps`: NAKed or resent), capture loss
    /// (`capture_loss_gaps`: never NAKed nor resent) or reordering (filled late,
    /// `out_of_order`).
    pub gaps: u64,
    /// PSNs missing in those gaps, summed (a gap of 3 PSNs counts 3 here, 1 in `gaps`).
    pub missing: u64,
    /// Packets sent again.
    pub retransmits: u64,
    /// Of those, after a NAK or RNR NAK (spurious NAKs included).
    pub retransmits_nak: u64,
    /// Of those, with no NAK pending and at least the ACK timeout after the original.
    pub retransmits_timeout: u64,
    /// Of the NAK-triggered ones, retries after an RNR NAK.
    pub retransmits_rnr: u64,
    /// Of the NAK-triggered ones, after a NAK for a packet that arrived late (needless).
    pub retransmits_spurious: u64,
    /// READ requests re-issued after their responses came out of sequence (implied NAK).
    pub retransmits_implied: u64,
    /// Resends with no NAK in the capture, sooner than the ACK timeout: cause not visible.
    pub retransmits_unknown: u64,
    /// Packets seen twice.
    pub duplicates: u64,
    /// Packets that arrived after later PSNs and were not resent (reordering).
    pub out_of_order: u64,
    /// Of those, later than the reorder window.
    pub late_beyond_window: u64,
    /// How late the latest of them was (after the gap it filled was seen), ns.
    pub max_late_ns: i64,
    /// Sequence-error NAKs for packets that then arrived late (reordering, not loss).
    pub spurious_naks: u64,
    /// Gaps in this flow's READ responses.
    pub read_response_gaps: u64,
    /// READs re-issued after the ACK timeout with no response gap in sight: their last
    /// response was lost (counted in `retransmits_timeout` too).
    pub read_tail_timeouts: u64,
    /// The longest the requester sent nothing new before a timeout resend: the stall its
    /// ACK timeout cost (0 without timeouts).
    pub timeout_stall_ns: i64,
    /// Gaps explained by a NAK or a retransmission.
    pub network_loss_gaps: u64,
    /// Gaps never NAKed or resent: probable capture loss.
    pub capture_loss_gaps: u64,
    /// Restarts at an unrelated PSN (new connection on the same QP number, CM exchange).
    pub resyncs: u64,
    /// Packets lost in the network, counted per packet: the PSNs missing in the gaps here
    /// that were NAKed or resent, plus one per go-back-N after a sequence-error NAK for a
    /// PSN this point had seen (`lost_beyond_point`; a lower bound: a NAK names the first
    /// of the packets lost).
    pub network_loss_packets: u64,
    /// Of those, lost beyond this capture point (one per such NAK).
    pub lost_beyond_point: u64,
    /// Packets go-back-N resent after a sequence-error NAK that this point had seen before
    /// (all of a burst but its first): they reached the responder out of sequence.
    pub resent_out_of_sequence: u64,
    /// ACK timer expirations: resend bursts after the ACK timeout (`retransmits_timeout`
    /// counts their packets).
    pub timeout_events: u64,
    /// Implied NAKs: READ re-issue bursts (`retransmits_implied` counts the READs).
    pub implied_nak_events: u64,
}

/// NAKs by code.
#[derive(Clone, Debug, Serialize)]
pub struct NakCounts {
    /// PSN sequence error.
    pub psn_seq_err: u64,
    /// Invalid request.
    pub invalid_request: u64,
    /// Remote access error.
    pub remote_access: u64,
    /// Remote operational error.
    pub remote_operational: u64,
    /// Invalid RD request.
    pub invalid_rd: u64,
    /// Reserved codes.
    pub other: u64,
    /// RNR NAKs.
    pub rnr: u64,
    /// RNR timers asked for, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rnr_timer_us_min: Option<u32>,
    /// Largest RNR timer asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rnr_timer_us_max: Option<u32>,
}

/// Throughput over time.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Bin width.
    pub bin_ns: u64,
    /// Wire bytes per bin, from the capture start.
    pub bins: Vec<u64>,
    /// Packets per bin (same bins).
    pub packets: Vec<u64>,
    /// ECN-CE marked packets per bin (same bins): the CE rate over time.
    pub ce: Vec<u64>,
    /// Retransmitted request packets per bin (same bins): when the flow was recovering.
    pub resent: Vec<u64>,
    /// CNPs this (data) flow's sender received per bin (same bins): the CNP rate over time.
    pub cnps: Vec<u64>,
    /// The busiest bins at the `--bin` width, however wide `bin_ns` grew.
    pub burst: crate::stats::Burst,
    /// The busiest window (a bin; the capture's last, partial bin joins the one before it).
    pub peak_gbps: f64,
    /// Over the windows from the flow's first to its last: the same basis as `peak_gbps`,
    /// which is never below it (see [`crate::stats::rates`]).
    pub mean_gbps: f64,
}

/// Latency figures. Each summary is boxed: most flows have none, and a report over half a
/// million flows keeps 200 bytes a flow less than with the summaries inline.
#[derive(Clone, Debug, Serialize)]
pub struct Latencies {
    /// AckReq request to the ACK covering it (on the requester's flow).
    pub ack: Option<Box<LatencySummary>>,
    /// READ request to its last response.
    pub read: Option<Box<LatencySummary>>,
    /// NAK to the retransmission it triggered.
    pub nak_to_retransmit: Option<Box<LatencySummary>>,
    /// CE mark to the next CNP for this flow.
    pub ce_to_cnp: Option<Box<LatencySummary>>,
}

/// A data sender's congestion control, seen from the CNPs it received and its rate around
/// them (docs/verdicts.md "Congestion control").
#[derive(Clone, Debug, Serialize)]
pub struct CcReport {
    /// Time between consecutive CNPs received.
    pub cnp_interval: Option<LatencySummary>,
    /// The pacing they are compared with (`--cnp-pacing-us`), ns.
    pub cnp_pacing_ns: i64,
    /// Intervals shorter than the pacing.
    pub cnp_too_fast: u64,
    /// Runs of CE-marked packets with no CNP back (at least 10 over two pacing intervals).
    pub ce_runs_without_cnp: u64,
    /// The longest of them.
    pub longest_ce_run_without_cnp: Option<CeRunReport>,
    /// The sender's rate before and after each CNP.
    pub reaction: CcReaction,
}

/// A run of CE-marked packets with no CNP back.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CeRunReport {
    /// Its first CE-marked frame.
    pub first_frame: u64,
    /// Its first CE mark's time.
    pub first_ns: i64,
    /// Its last CE mark's time.
    pub last_ns: i64,
    /// CE-marked packets in it.
    pub packets: u64,
}

/// The sender's rate over a window before each CNP and over one after it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CcReaction {
    /// Window length (`--cc-window-us`), ns.
    pub window_ns: i64,
    /// Delay from the CNP to the window after it (`--cc-delay-us`), ns.
    pub delay_ns: i64,
    /// CNPs whose rate before and after were compared.
    pub evaluated: u64,
    /// Of those, followed by a fall (after below 0.9 × before).
    pub fell: u64,
    /// CNPs not compared: fewer than 4 packets in the window before, the flow not seen for a
    /// whole window before, more than 4 windows open at once, or the window after not over.
    pub not_evaluated: u64,
    /// Mean of the rate after over the rate before, over the evaluated CNPs.
    pub mean_ratio: Option<f64>,
    /// Why no verdict on the reaction is given for this flow although its figures would
    /// make one (`incast`: it is one of many senders to a receiver, seen past the queue
    /// they share, where its rate is its share of the drain rate). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<&'static str>,
}

/// One flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// Index in `flows`.
    pub id: usize,
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
    /// First frame.
    pub first_frame: u64,
    /// First packet time.
    pub first_ns: i64,
    /// Last packet time.
    pub last_ns: i64,
    /// Priority (PCP, else DSCP >> 3).
    pub priority: Option<u8>,
    /// Packets.
    pub packets: u64,
    /// Wire bytes.
    pub bytes: u64,
    /// IB payload bytes.
    pub payload_bytes: u64,
    /// Messages (Last/Only packets, ACKs excluded).
    pub messages: u64,
    /// Request packets.
    pub requests: u64,
    /// Response packets.
    pub responses: u64,
    /// Packets per opcode.
    pub opcodes: Vec<OpcodeCount>,
    /// ECN codepoints.
    pub ecn: EcnCounts,
    /// PSN analysis.
    pub psn: PsnReport,
    /// NAKs this flow carries.
    pub naks: NakCounts,
    /// Positive ACKs (Acknowledge packets) this flow carries.
    pub acks: u64,
    /// CNPs this flow carries (its destination QP is a data sender's).
    pub cnps: u64,
    /// CNPs answering this flow's data, through the pairing.
    pub cnps_received: u64,
    /// Invalid ICRCs.
    pub icrc_bad: u64,
    /// DSCP values seen.
    pub dscp: Vec<u8>,
    /// PCP values seen on tagged packets.
    pub pcp: Vec<u8>,
    /// Throughput.
    pub throughput: Throughput,
    /// Latencies.
    pub latency: Latencies,
    /// Congestion control (flows with CE marks or CNPs received; null otherwise).
    pub cc: Option<Box<CcReport>>,
    /// The other direction of the connection (index in `flows`).
    pub partner: Option<usize>,
    /// How it was paired: `cm`, `psn`, `address`.
    pub pairing: Option<&'static str>,
    /// Starting PSN from the CM exchange, when captured.
    pub cm_start_psn: Option<u32>,
    /// The connection's ACK timeout from its CM REQ (local ACK timeout), when captured, ns.
    pub ack_timeout_ns: Option<i64>,
    /// Path MTU implied by this flow's full-size packets (0 unknown).
    pub pmtu: u32,
    /// The UDP source port of its first RoCEv2 packet: the ECMP entropy its NIC set for the
    /// QP (`None` for RoCEv1).
    pub udp_src_port: Option<u16>,
    /// How many times the port changed from one packet to the next (a NIC moving the QP to
    /// another path).
    pub udp_src_port_changes: u16,
    /// The port of its latest packet, when it changed.
    pub udp_src_port_last: Option<u16>,
    /// Its worst finding (folded ones included): critical, warning, info or ok.
    pub health: &'static str,
}

/// One of a few fixed words of the report (a connection's health and pairing), held in one
/// byte: reads and prints as its text, is written as a JSON string. Two `&'static str`
/// took 32 bytes of every connection (issue 13).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Word(u8);

#[cfg(test)]
mod word_tests {
    use super::Word;

    #[test]
    fn words_read_print_and_serialise_as_their_text() {
        for w in ["ok", "info", "warning", "critical", "none", "cm", "psn", "address"] {
            assert_eq!(Word::new(w).as_str(), w);
            assert_eq!(Word::new(w), w);
            assert_eq!(serde_json::to_string(&Word::new(w)).unwrap(), format!("\"{w}\""));
        }
        assert_eq!(Word::new("other"), "none");
        assert_eq!(format!("[{:<8}]", Word::new("cm")), "[cm      ]");
    }
}

impl Word {
    const WORDS: [&'static str; 8] = ["ok", "info", "warning", "critical", "none", "cm", "psn", "address"];

    /// The word for `text` when it is one of the report's fixed words ("ok", "info",
    /// "warning", "critical", "none", "cm", "psn", "address"); else "none".
    pub fn new(text: &str) -> Word {
        Word(Self::WORDS.iter().position(|w| *w == text).map_or(4, |i| i as u8))
    }

    /// Its text.
    pub fn as_str(self) -> &'static str {
        Self::WORDS.get(usize::from(self.0)).copied().unwrap_or("none")
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Word {
    /// Padded as a `str` is (`{:<8}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl PartialEq<&str> for Word {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Word {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A connection's flow indices, one or two, held inline (a `Vec` per connection was one
/// allocation each: 3 MB at 100k connections, issue 13). Reads as a slice; written as a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnFlows {
    ids: [usize; 2],
    len: u8,
}

impl ConnFlows {
    /// A flow whose other direction was not seen.
    pub fn one(a: usize) -> Self {
        ConnFlows { ids: [a, a], len: 1 }
    }

    /// Both directions: `a` to `b`'s flow, then its reverse.
    pub fn two(a: usize, b: usize) -> Self {
        ConnFlows { ids: [a, b], len: 2 }
    }
}

impl std::ops::Deref for ConnFlows {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        self.ids.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl<'a> IntoIterator for &'a ConnFlows {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for ConnFlows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Two directions of one QP connection (or one direction whose partner was not seen).
#[derive(Clone, Debug, Serialize)]
pub struct Connection {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// One end (written as text, "10.0.0.1"; held as an address, with no allocation: a
    /// report of 100k connections held 6 MB of address strings).
    pub a: std::net::IpAddr,
    /// The other.
    pub b: std::net::IpAddr,
    /// QP of `a` (the destination QP of the b-to-a flow), when known.
    pub a_qpn: Option<u32>,
    /// QP of `b`.
    pub b_qpn: u32,
    /// Flow indices: a-to-b, then b-to-a when paired.
    pub flows: ConnFlows,
    /// `cm`, `psn`, `address` or `none`.
    pub pairing: Word,
    /// Packets both ways.
    pub packets: u64,
    /// Wire bytes both ways.
    pub bytes: u64,
    /// Worst finding on its flows: `critical`, `warning`, `info` or `ok`.
    pub health: Word,
}

/// A connection's figures summed over its directions: what a one-line view of it (the text
/// report's table, the UI's QPs row) shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectionTotals {
    /// Packets.
    pub packets: u64,
    /// Wire bytes.
    pub bytes: u64,
    /// First and last packet, ns since the epoch.
    pub first_ns: i64,
    /// Last packet.
    pub last_ns: i64,
    /// Messages.
    pub messages: u64,
    /// PSN gaps.
    pub gaps: u64,
    /// Retransmissions of any cause.
    pub retransmits: u64,
    /// NAK-driven retransmissions.
    pub retransmits_nak: u64,
    /// Timeout retransmissions.
    pub retransmits_timeout: u64,
    /// NAKs of every code but RNR.
    pub naks: u64,
    /// RNR NAKs.
    pub rnr: u64,
    /// CE-marked packets.
    pub ce: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// The busiest window of both directions together (see [`crate::stats::rates`]).
    pub peak_gbps: f64,
    /// Both directions over the windows from the connection's first to its last: the same
    /// basis as `peak_gbps`, never above it. Read it with [`ConnectionTotals::mean_gbps`].
    pub mean_gbps_windows: f64,
    /// Sum of the directions' last-bin rates.
    pub now_gbps: f64,
    /// DSCP values seen, sorted.
    pub dscp: Vec<u8>,
    /// PCP values seen, sorted.
    pub pcp: Vec<u8>,
    /// The UDP source port (ECMP entropy) of each direction: (sender, port of its first
    /// RoCEv2 packet), RoCEv1 directions left out.
    pub udp_src_ports: Vec<(String, u16)>,
}

impl ConnectionTotals {
    /// CE-marked share of the packets, in percent.
    pub fn ce_percent(&self) -> f64 {
        if self.packets > 0 {
            self.ce as f64 * 100.0 / self.packets as f64
        } else {
            0.0
        }
    }

    /// Mean Gb/s over the windows the connection spans, on the same basis as `peak_gbps`
    /// (so never above it).
    pub fn mean_gbps(&self) -> f64 {
        self.mean_gbps_windows
    }
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

    /// Sum `c`'s directions.
    pub fn connection_totals(&self, c: &Connection) -> ConnectionTotals {
        let flows: Vec<&FlowReport> = c.flows.iter().filter_map(|i| self.flows.get(*i)).collect();
        self.totals_of(&flows)
    }

    /// The totals of a connection whose flows are `flows`.
    fn totals_of(&self, flows: &[&FlowReport]) -> ConnectionTotals {
        let sum = |g: &dyn Fn(&FlowReport) -> u64| flows.iter().map(|f| g(f)).sum::<u64>();
        let sorted = |g: &dyn Fn(&FlowReport) -> &[u8]| {
            let mut v: Vec<u8> = flows.iter().flat_map(|f| g(f).iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        // Both directions' bins together, over the capture's span; a report without the
        // series (`Analyzer::report_counters`) gives the busier direction's figures.
        let capture_ns =
            self.summary.end_ns.zip(self.summary.start_ns).map_or(0, |(e, s)| (e - s).max(0) as u64);
        let series: Vec<Series<'_>> = flows
            .iter()
            .map(|f| Series {
                width_ns: f.throughput.bin_ns,
                bytes: &f.throughput.bins,
                packets: &f.throughput.packets,
            })
            .collect();
        let rate = if flows.iter().any(|f| f.bytes > 0 && f.throughput.bins.is_empty()) {
            flows
                .iter()
                .max_by_key(|f| f.bytes)
                .map(|f| Rate { mean_gbps: f.throughput.mean_gbps, peak_gbps: f.throughput.peak_gbps })
                .unwrap_or_default()
        } else {
            rates(&series, capture_ns)
        };
        ConnectionTotals {
            packets: sum(&|f| f.packets),
            bytes: sum(&|f| f.bytes),
            first_ns: flows.iter().map(|f| f.first_ns).min().unwrap_or(0),
            last_ns: flows.iter().map(|f| f.last_ns).max().unwrap_or(0),
            messages: sum(&|f| f.messages),
            gaps: sum(&|f| f.psn.gaps),
            retransmits: sum(&|f| f.psn.retransmits),
            retransmits_nak: sum(&|f| f.psn.retransmits_nak),
            retransmits_timeout: sum(&|f| f.psn.retransmits_timeout),
            naks: sum(&|f| {
                f.naks.psn_seq_err
                    + f.naks.invalid_request
                    + f.naks.remote_access
                    + f.naks.remote_operational
                    + f.naks.invalid_rd
                    + f.naks.other
            }),
            rnr: sum(&|f| f.naks.rnr),
            ce: sum(&|f| f.ecn.ce),
            cnps: sum(&|f| f.cnps),
            peak_gbps: rate.peak_gbps,
            mean_gbps_windows: rate.mean_gbps,
            now_gbps: flows
                .iter()
                .map(|f| {
                    f.throughput.bins.last().copied().unwrap_or(0) as f64 * 8.0
                        / f.throughput.bin_ns.max(1) as f64
                })
                .sum(),
            dscp: sorted(&|f| &f.dscp),
            pcp: sorted(&|f| &f.pcp),
            udp_src_ports: flows.iter().filter_map(|f| Some((f.src.clone(), f.udp_src_port?))).collect(),
        }
    }
}

/// Which RoCE frames a pausing MAC's pauses stop, as judged at its capture point (PFC is hop
/// by hop: a pause stops the pausing MAC's link peer; `crate::link`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseDirection {
    /// The pausing MAC sends RoCE here (a host, or a switch's routed port whose MAC is
    /// every frame's next hop): the frames sent to it.
    ToPausingMac,
    /// It sends none (a switch port in an L2 fabric): the frames its link peer, the
    /// capture point's station, sends to anyone (and any sent to it).
    FromLinkPeer,
    /// It sends none and the link peer cannot be told (one conversation, or a capture point
    /// on several links): only frames sent to it, of which there may be none.
    Unknown,
}

/// One PFC or PAUSE timeline.
#[derive(Clone, Debug, Serialize)]
pub struct PauseReport {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// Source MAC.
    pub src_mac: String,
    /// `pfc` or `pause`.
    pub kind: PauseKind,
    /// Priority (0 for 802.3x PAUSE, which stops the whole link).
    pub priority: u8,
    /// Frames with non-zero quanta.
    pub pause_frames: u64,
    /// XON frames (quanta 0).
    pub xon_frames: u64,
    /// Sum of quanta.
    pub quanta_total: u64,
    /// Paused time.
    pub paused_ns: i64,
    /// Paused microseconds per second of capture (the unit of mlx5 and switch counters).
    pub pause_us_per_s: f64,
    /// Most paused microseconds in any one second.
    pub max_pause_us_per_s: f64,
    /// Link speed used for quanta.
    pub link_bps: u64,
    /// Paused intervals (the first 512).
    pub intervals: Vec<Interval>,
    /// Intervals not listed.
    pub intervals_dropped: u64,
    /// Storm runs.
    pub storms: Vec<Storm>,
    /// The longest pause during which the RoCE traffic towards the pausing side stopped
    /// (all RoCE on the priority when none was ever sent to `src_mac`).
    pub deadlock_hint: Option<Interval>,
    /// RoCE packets on this priority in the capture.
    pub roce_packets_on_priority: u64,
    /// First frame.
    pub first_frame: u64,
    /// RoCE packets to `src_mac` on this priority at this capture point (802.3x PAUSE: on
    /// any priority), in the whole capture. Zero: the pausing MAC receives no RoCE here (a
    /// switch port in an L2 fabric, or a one-way capture), so which traffic its pauses
    /// stop cannot be told.
    pub roce_to_mac: u64,
    /// Which frames the pauses were judged on (docs/verdicts.md "PFC and PAUSE").
    pub direction: PauseDirection,
    /// The station at the other end of the link, whose frames the pauses stop, when
    /// `src_mac` sends no RoCE at this point (a switch port in an L2 fabric): the one MAC in
    /// nearly every RoCE frame here. `None` otherwise, or when it cannot be told.
    pub link_peer: Option<String>,
    /// RoCE packets the pauses stop (to `src_mac`, or from `link_peer`) on the paused
    /// priority that arrived while it was paused, more than `config.pause_allowance_ns`
    /// after the pause took effect.
    pub ignored_frames: u64,
    /// Of those, the ones `link_peer` sent.
    pub ignored_from_peer: u64,
    /// How long after its pause took effect the latest of them arrived (0 when none).
    pub ignored_max_delay_ns: i64,
}

/// The `pause_ignored` finding of a timeline, when RoCE to the pausing MAC went on beyond
/// the allowance. Critical with at least [`IGNORED_CRITICAL_FRAMES`] such frames, the latest
/// at least twice the allowance after its pause took effect; else a warning (a few frames
/// just past the allowance can be timing: a far capture point, coarse timestamps, a slow
/// link).
fn pause_ignored(r: &PauseReport, tl: &Timeline, label: &str, cfg: &PfcConfig) -> Option<Finding> {
    if tl.ignored == 0 {
        return None;
    }
    let allowance = cfg.pause_allowance_ns;
    let clear = tl.ignored >= IGNORED_CRITICAL_FRAMES && tl.ignored_max_delay_ns >= 2 * allowance;
    let what = match r.kind {
        PauseKind::Pfc => format!("PFC on priority {}", r.priority),
        PauseKind::Pause => "802.3x PAUSE".to_string(),
    };
    // Frames the link peer sent (the pausing MAC, a switch port, takes part in no RoCE
    // here) or frames sent to the pausing MAC.
    let by_peer = r.link_peer.as_deref().filter(|_| tl.ignored_from_peer > 0);
    let sent = match by_peer {
        Some(peer) => format!("RoCE from {peer}"),
        None => format!("RoCE to {}", r.src_mac),
    };
    let mut evidence = Vec::new();
    if let Some(first) = tl.ignored_evidence.first() {
        evidence.push(EvidenceRef {
            frame: first.pause_frame,
            ts_ns: first.pause_ts_ns,
            what: format!("{what} from {} took effect", r.src_mac),
        });
    }
    evidence.extend(tl.ignored_evidence.iter().map(|e| EvidenceRef {
        frame: e.frame,
        ts_ns: e.ts_ns,
        what: format!("{sent} {} after the pause took effect", us_text(e.delay_ns)),
    }));
    let head = match by_peer {
        Some(peer) => format!(
            "{peer} kept sending RoCE while its link peer {} (a switch port: it sends no RoCE here) paused {label}: {} more than {} after the pause took effect (the latest {} after)",
            r.src_mac,
            plural(tl.ignored, "frame", "frames"),
            us_text(allowance),
            us_text(tl.ignored_max_delay_ns),
        ),
        None => format!(
            "RoCE kept arriving at {} while it paused {label}: {} sent to it more than {} after the pause took effect (the latest {} after)",
            r.src_mac,
            plural(tl.ignored, "frame", "frames"),
            us_text(allowance),
            us_text(tl.ignored_max_delay_ns),
        ),
    };
    let why = if !clear {
        ": few, and close to the allowance; a capture point far from the link or coarse timestamps can do this (--pause-allowance-us)"
    } else if by_peer.is_some() {
        ": the sender on this link ignores the pause (the host, or the switch port that forwards its frames: PFC not enabled for this priority there, or its traffic on another priority than the one paused)"
    } else {
        ": the sender ignores the pause (PFC not enabled for this priority on the peer, or a priority mapping mismatch)"
    };
    Some(Finding {
        severity: if clear { Severity::Critical } else { Severity::Warning },
        kind: FindingKind::PauseIgnored,
        title: format!("{head}{why}"),
        flow: None,
        src_mac: Some(r.src_mac.clone()),
        priority: Some(r.priority),
        evidence,
        weight: tl.ignored,
        folded: None,
    })
}

/// A duration in µs with one decimal (below 10 ms), else ms.
fn us_text(ns: i64) -> String {
    if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}

/// The QoS audit.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    /// Expectations given.
    pub expected: AuditConfig,
    /// Differences found.
    pub violations: Vec<Violation>,
}

/// Settings used.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigReport {
    /// Link speed for pause quanta when the capture gives none.
    pub link_speed_bps: u64,
    /// Storm window.
    pub storm_window_ns: i64,
    /// Storm threshold (paused fraction).
    pub storm_threshold: f64,
    /// Deadlock hint threshold.
    pub deadlock_ns: i64,
    /// How long after a pause took effect RoCE to the pausing MAC may still arrive
    /// (`--pause-allowance-us`); later frames ignored the pause.
    pub pause_allowance_ns: i64,
    /// Mirror duplicates analysed as packets of their own (`--keep-duplicates`).
    pub keep_duplicates: bool,
}

fn bits(mask: u64) -> Vec<u8> {
    (0..64u8).filter(|b| mask & (1 << b) != 0).collect()
}

fn flow_ref(f: &Flow) -> FlowRef {
    FlowRef { src: f.key.src.to_string(), dst: f.key.dst.to_string(), dest_qp: f.key.dest_qp }
}

pub(crate) fn flow_report(id: usize, f: &Flow, a: &Analyzer, detail: bool) -> FlowReport {
    let opts = a.cfg.opcode;
    let rate = f.bins.rate(capture_ns(a));
    FlowReport {
        point: f.key.point,
        id,
        src: f.key.src.to_string(),
        dst: f.key.dst.to_string(),
        dest_qp: f.key.dest_qp,
        first_frame: f.first_frame,
        first_ns: f.first_ts,
        last_ns: f.last_ts,
        priority: f.priority,
        packets: f.packets,
        bytes: f.bytes,
        payload_bytes: f.payload_bytes,
        messages: f.messages,
        requests: f.requests,
        responses: f.responses,
        opcodes: f
            .opcodes
            .iter()
            .map(|(o, n)| OpcodeCount { opcode: o.0, name: o.name(opts), packets: n })
            .collect(),
        ecn: EcnCounts {
            not_ect: f.ecn[0],
            ect1: f.ecn[1],
            ect0: f.ecn[2],
            ce: f.ecn[3],
            ce_fraction: f.ce_fraction(),
        },
        psn: PsnReport {
            tracked: f.tracked,
            gaps: f.psn.stats().gaps,
            missing: f.psn.stats().missing,
            retransmits: f.psn.stats().retransmits,
            retransmits_nak: f.psn.stats().retransmits_nak,
            retransmits_timeout: f.psn.stats().retransmits_timeout,
            retransmits_rnr: f.psn.stats().retransmits_rnr,
            retransmits_spurious: f.psn.stats().retransmits_spurious,
            retransmits_implied: f.psn.stats().retransmits_implied,
            retransmits_unknown: f.psn.stats().retransmits_unknown,
            duplicates: f.psn.stats().duplicates,
            out_of_order: f.psn.stats().out_of_order,
            late_beyond_window: f.psn.stats().late_beyond_window,
            max_late_ns: f.psn.stats().max_late_ns,
            spurious_naks: f.psn.stats().spurious_naks,
            read_response_gaps: f.reads().read_response_gaps,
            read_tail_timeouts: f.reads().tail_timeouts,
            timeout_stall_ns: f.psn.stats().timeout_stall_ns,
            network_loss_gaps: f.psn.stats().network_loss_gaps,
            capture_loss_gaps: f.psn.capture_loss_gaps(),
            resyncs: f.psn.stats().resyncs,
            network_loss_packets: f.psn.stats().lost_here + f.psn.stats().lost_beyond,
            lost_beyond_point: f.psn.stats().lost_beyond,
            resent_out_of_sequence: f.psn.stats().resent_out_of_sequence,
            timeout_events: f.psn.stats().timeout_bursts,
            implied_nak_events: f.psn.stats().implied_bursts,
        },
        naks: NakCounts {
            psn_seq_err: f.cold().naks[0],
            invalid_request: f.cold().naks[1],
            remote_access: f.cold().naks[2],
            remote_operational: f.cold().naks[3],
            invalid_rd: f.cold().naks[4],
            other: f.cold().naks[5],
            rnr: f.cold().rnr,
            rnr_timer_us_min: f.cold().rnr_timer_us.map(|t| t.0),
            rnr_timer_us_max: f.cold().rnr_timer_us.map(|t| t.1),
        },
        acks: f.acks,
        cnps: f.cold().cnps,
        cnps_received: f.cold().cnps_received,
        icrc_bad: f.cold().icrc_bad,
        dscp: bits(f.dscp_seen),
        pcp: bits(u64::from(f.pcp_seen)),
        throughput: Throughput {
            bin_ns: f.bins.width_ns(),
            bins: if detail { f.bins.bins() } else { Vec::new() },
            packets: if detail { f.bins.packets() } else { Vec::new() },
            ce: if detail { f.bins.ce() } else { Vec::new() },
            resent: if detail { f.bins.resent() } else { Vec::new() },
            cnps: if detail { f.bins.cnps() } else { Vec::new() },
            burst: f.bins.burst(),
            peak_gbps: rate.peak_gbps,
            mean_gbps: rate.mean_gbps,
        },
        latency: Latencies {
            ack: f.ack_latency().summary().map(Box::new),
            read: f.latency().read.summary().map(Box::new),
            nak_to_retransmit: f.latency().nak_to_retransmit.summary().map(Box::new),
            ce_to_cnp: f.latency().ce_to_cnp.summary().map(Box::new),
        },
        cc: f.cc().map(|c| {
            let mut r = cc_report(c, &a.cfg.cc);
            if c.not_reacting() && cc_shares_bottleneck(f, a) {
                r.reaction.not_judged = Some("incast");
            }
            Box::new(r)
        }),
        partner: f.partner(),
        pairing: f.pairing.map(|p| p.name()),
        cm_start_psn: f.cold().cm_start_psn,
        ack_timeout_ns: f.cold().cm_ack_timeout_ns,
        pmtu: f.pmtu,
        udp_src_port: f.udp_sport_last.map(|_| f.udp_sport),
        udp_src_port_changes: f.udp_sport_changes,
        udp_src_port_last: f.udp_sport_last.filter(|_| f.udp_sport_changes > 0),
        health: "ok",
    }
}

/// A flow's congestion-control figures.
fn cc_report(c: &crate::cc::CcState, cfg: &crate::cc::CcConfig) -> CcReport {
    let (runs, worst) = c.unanswered(cfg.cnp_pacing_ns);
    CcReport {
        cnp_interval: c.intervals.summary(),
        cnp_pacing_ns: cfg.cnp_pacing_ns,
        cnp_too_fast: c.too_fast,
        ce_runs_without_cnp: runs,
        longest_ce_run_without_cnp: worst.map(|r| CeRunReport {
            first_frame: r.first_frame,
            first_ns: r.first_ns,
            last_ns: r.last_ns,
            packets: r.packets,
        }),
        reaction: CcReaction {
            window_ns: cfg.window_ns,
            delay_ns: cfg.delay_ns,
            evaluated: c.evaluated,
            fell: c.fell,
            not_evaluated: c.not_evaluated_total(),
            mean_ratio: c.mean_ratio(),
            not_judged: None,
        },
    }
}

/// Flow `f` sends to a receiver that took an incast seen past the queue its senders share
/// (or where the position could not be told): its rate there is its share of the drain rate,
/// so its reaction to CNPs is not judged from it (crate::incast).
pub(crate) fn cc_shares_bottleneck(f: &Flow, a: &Analyzer) -> bool {
    a.fan_in.shares_bottleneck(f.key.point, f.key.dst, a.cfg.bin_ns, a.cfg.link_speed_bps)
}

/// The name of a worst severity (`ok` for none).
fn health_name(s: Option<Severity>) -> &'static str {
    match s {
        Some(Severity::Critical) => "critical",
        Some(Severity::Warning) => "warning",
        Some(Severity::Info) => "info",
        None => "ok",
    }
}

/// How long the capture has lasted: the span the throughput bins cover.
fn capture_ns(a: &Analyzer) -> u64 {
    let t = &a.totals;
    t.end_ns.zip(t.start_ns).map_or(0, |(e, s)| (e - s).max(0) as u64)
}

fn ev(f: &Flow, kinds: &[EvidenceKind]) -> Vec<EvidenceRef> {
    let mut v: Vec<EvidenceRef> = kinds
        .iter()
        .flat_map(|k| f.evidence_of(*k))
        .map(|e| EvidenceRef { frame: e.frame, ts_ns: e.ts_ns, what: e.what.clone() })
        .collect();
    v.sort_by_key(|e| e.frame);
    v.dedup_by_key(|e| e.frame);
    v
}

fn qp_name(f: &Flow, a: &Analyzer) -> String {
    format!("QP 0x{:06x} {} → {}{}", f.key.dest_qp, f.key.src, f.key.dst, at_point(a, f.key.point))
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// A duration as µs (below 10 ms) or ms.
fn us(ns: i64) -> String {
    if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}

/// An RC/XRC requester flow whose ACKs, NAKs and READ responses are nowhere in the capture
/// (neither its partner nor any flow back between the two hosts at its capture point carries
/// a response), though it asked for them at least 1 ms before the capture ended.
pub(crate) fn responses_missing(f: &Flow, a: &Analyzer) -> bool {
    if !f.tracked || f.uc || f.psn.requests == 0 {
        return false;
    }
    let end = a.totals().end_ns.unwrap_or(i64::MIN);
    let asked = f
        .outstanding_ackreq
        .front()
        .map(|x| x.1)
        .into_iter()
        .chain(f.reads().outstanding.front().map(|x| x.2));
    if !asked.into_iter().any(|t| t < end - 1_000_000) {
        return false;
    }
    !a.flows.pair(f.key.point, f.key.dst, f.key.src).filter_map(|i| a.flows.get(i)).any(|b| b.responses > 0)
}

/// Said once for the whole capture: connections whose other direction is absent, so their
/// resends cannot be tied to NAKs (reference §1.10 relies on seeing both directions).
fn one_direction_finding(a: &Analyzer, out: &mut FindingSink) {
    let one_way: Vec<(usize, &Flow)> =
        a.flows.iter().enumerate().filter(|(_, f)| responses_missing(f, a)).collect();
    let Some(&(first, _)) = one_way.first() else { return };
    let tracked = a.flows.iter().filter(|f| f.tracked && !f.uc && f.psn.requests > 0).count();
    let names: Vec<String> = one_way.iter().take(3).map(|(_, f)| qp_name(f, a)).collect();
    let more = if one_way.len() > 3 { format!(" and {} more", one_way.len() - 3) } else { String::new() };
    out.push(Finding {
        severity: Severity::Warning,
        kind: FindingKind::OneDirection,
        title: format!(
            "only one direction captured for {} of {} requesting QPs ({}{more}): no ACK, NAK or READ response comes back (a one-way mirror, or a sniffer on one side); their resends cannot be tied to NAKs or timeouts, so no loss on them is blamed on a cause the capture does not show",
            one_way.len(),
            tracked,
            names.join(", ")
        ),
        flow: Some(first),
        src_mac: None,
        priority: None,
        evidence: one_way
            .iter()
            .take(5)
            .map(|(_, f)| EvidenceRef {
                frame: f.first_frame,
                ts_ns: f.first_ts,
                what: format!("first request of QP 0x{:06x}; nothing comes back", f.key.dest_qp),
            })
            .collect(),
        weight: u64::MAX / 2,
        folded: None,
    });
}

fn flow_findings(id: usize, f: &Flow, a: &Analyzer, out: &mut FindingSink) {
    let partner = f.partner().and_then(|p| a.flows.get(p));
    let mut push = |severity, kind, title: String, evidence: Vec<EvidenceRef>, weight: u64| {
        out.push(Finding {
            severity,
            kind,
            title,
            flow: Some(id),
            src_mac: None,
            priority: None,
            evidence,
            weight,
            folded: None,
        });
    };
    let p = &f.psn;
    let st = p.stats();
    let one_way = responses_missing(f, a);
    let timeout_ms = ms(f.cold().cm_ack_timeout_ns.unwrap_or(a.cfg.min_ack_timeout_ns).max(0) as u64);
    let nak_resends = st.retransmits_nak - st.retransmits_rnr - st.retransmits_spurious;
    let loss_gaps = st.network_loss_gaps;
    let not_visible = if one_way {
        "the ACKs and NAKs are not in the capture"
    } else {
        "no NAK for them is in the capture, or the capture holds the same packet twice (a mirror of both link directions)"
    };
    // Loss: a gap here that was resent or NAKed (and not filled by a late packet), or a
    // go-back-N after a NAK that a late packet did not provoke (the loss then happened
    // beyond this capture point).
    if !f.uc && (loss_gaps > 0 || nak_resends > 0) {
        let mut e = ev(
            f,
            &[
                EvidenceKind::Gap,
                EvidenceKind::RetransmitNak,
                EvidenceKind::RetransmitTimeout,
                EvidenceKind::RetransmitUnknown,
            ],
        );
        if let Some(pf) = partner {
            e.extend(ev(pf, &[EvidenceKind::Nak]));
            e.sort_by_key(|x| x.frame);
        }
        let lat = f
            .latency()
            .nak_to_retransmit
            .summary()
            .map(|l| format!("; NAK to resend {}", ms(l.p50_ns)))
            .unwrap_or_default();
        let mut how = Vec::new();
        if nak_resends > 0 {
            how.push(format!("{} after NAK", plural(nak_resends, "go-back-N resend", "go-back-N resends")));
        }
        if st.retransmits_timeout > 0 {
            how.push(format!(
                "{} after the ACK timeout",
                plural(st.retransmits_timeout, "resend", "resends")
            ));
        }
        if st.retransmits_unknown > 0 {
            how.push(format!(
                "{} whose cause is not visible ({not_visible})",
                plural(st.retransmits_unknown, "resend", "resends")
            ));
        }
        // Per packet: the PSNs missing in the gaps here, and one per NAK for a PSN seen here.
        let beyond = plural(st.lost_beyond, "NAKed PSN", "NAKed PSNs");
        let where_ = match (loss_gaps, st.lost_beyond) {
            (0, _) => format!("beyond this capture point: no gap here; {beyond} it saw pass"),
            (g, 0) => format!("{} at this capture point", plural(g, "gap", "gaps")),
            (g, _) => format!(
                "{} at this capture point; {beyond} it saw pass, lost beyond it",
                plural(g, "gap", "gaps")
            ),
        };
        let lost = (st.lost_here + st.lost_beyond).max(1);
        let what = format!(
            "{}: {} lost in the network ({where_}), recovered by {}{lat}",
            qp_name(f, a),
            plural(lost, "packet", "packets"),
            if how.is_empty() { "resends".to_string() } else { how.join(", ") },
        );
        push(
            Severity::Critical,
            FindingKind::NetworkLoss,
            what,
            e,
            nak_resends.max(st.missing).max(loss_gaps).max(lost),
        );
    }
    if st.retransmits_timeout > 0 && loss_gaps == 0 {
        let tails = f.reads().tail_timeouts;
        let why = if tails > 0 {
            format!(
                "the last response of {} was lost and no later response showed the gap, so only the ACK timer could: the requester stalled",
                plural(tails, "READ", "READs")
            )
        } else {
            "the requester waited out its ACK timeout (lost packets or ACKs), stalled".to_string()
        };
        push(
            Severity::Critical,
            FindingKind::TimeoutRetransmit,
            format!(
                "{}: {} with no NAK pending, at least the ACK timeout ({timeout_ms}) after the original: {why} {} (local_ack_timeout_err){}",
                qp_name(f, a),
                plural(st.retransmits_timeout, "timeout retransmission", "timeout retransmissions"),
                ms(st.timeout_stall_ns.max(0) as u64),
                if one_way { "; the ACKs are not in the capture" } else { "" }
            ),
            ev(f, &[EvidenceKind::RetransmitTimeout]),
            st.retransmits_timeout * 10,
        );
    }
    if st.retransmits_unknown > 0 && loss_gaps == 0 {
        let after = st
            .last_resend_after_ns
            .map(|n| format!(" {} after the flow's last new packet,", us(n)))
            .unwrap_or_default();
        push(
            Severity::Warning,
            FindingKind::ResendUnexplained,
            format!(
                "{}: {} with no NAK pending,{after} sooner than an ACK timeout ({timeout_ms}): cause not visible, {not_visible}",
                qp_name(f, a),
                plural(st.retransmits_unknown, "packet resent", "packets resent"),
            ),
            ev(f, &[EvidenceKind::RetransmitUnknown]),
            st.retransmits_unknown,
        );
    }
    if st.retransmits_implied > 0 {
        let gaps = if f.reads().read_response_gaps > 0 {
            format!(
                "; {} in its READ responses seen here",
                plural(f.reads().read_response_gaps, "gap", "gaps")
            )
        } else {
            "; the missing responses were lost beyond this capture point".to_string()
        };
        push(
            Severity::Critical,
            FindingKind::ImpliedNak,
            format!(
                "{}: {} after responses came out of sequence (implied NAK): READ responses lost in the network{gaps}",
                qp_name(f, a),
                plural(st.retransmits_implied, "READ re-issued", "READs re-issued"),
            ),
            ev(f, &[EvidenceKind::ReadResponseGap, EvidenceKind::RetransmitImplied]),
            st.retransmits_implied * 10,
        );
    }
    if st.spurious_naks > 0 {
        let mut e = ev(f, &[EvidenceKind::OutOfOrder, EvidenceKind::RetransmitSpurious]);
        if let Some(pf) = partner {
            e.extend(ev(pf, &[EvidenceKind::Nak]));
            e.sort_by_key(|x| x.frame);
        }
        push(
            Severity::Warning,
            FindingKind::SpuriousNak,
            format!(
                "{}: {} for packets that then arrived late (reordering, not loss): {} needlessly by go-back-N",
                qp_name(f, a),
                plural(st.spurious_naks, "NAK", "NAKs"),
                plural(st.retransmits_spurious, "packet resent", "packets resent"),
            ),
            e,
            st.retransmits_spurious.max(st.spurious_naks),
        );
    }
    let cl = p.capture_loss_gaps();
    if cl > 0 {
        let gaps: Vec<EvidenceRef> = p
            .unexplained_gaps()
            .take(5)
            .map(|g| EvidenceRef {
                frame: g.frame,
                ts_ns: g.ts_ns,
                what: format!(
                    "PSN {}..{} missing, never {}",
                    g.start,
                    crate::psn::psn_add(g.start, g.count - 1),
                    if f.uc { "seen" } else { "NAKed or resent" }
                ),
            })
            .collect();
        if f.uc {
            // UC never resends (reference §1.10): a gap is a lost message either way.
            push(
                Severity::Warning,
                FindingKind::UcLoss,
                format!(
                    "{}: {} missing on a UC QP ({}): UC does not resend, so these were lost, in the network or by the capture",
                    qp_name(f, a),
                    plural(st.missing, "PSN", "PSNs"),
                    plural(cl, "gap", "gaps")
                ),
                gaps,
                st.missing,
            );
        } else {
            push(
                Severity::Info,
                FindingKind::CaptureLoss,
                format!(
                    "{}: {} in the request PSNs never {}, nor filled by a late packet: probably lost by the capture, not the network",
                    qp_name(f, a),
                    plural(cl, "gap", "gaps"),
                    if one_way { "resent" } else { "NAKed or resent" }
                ),
                gaps,
                cl,
            );
        }
    }
    if st.out_of_order > 0 {
        let beyond = if st.late_beyond_window > 0 {
            format!(
                "; {} later than the reorder window ({})",
                plural(st.late_beyond_window, "was", "were"),
                us(a.cfg.reorder_ns)
            )
        } else {
            String::new()
        };
        push(
            if st.late_beyond_window > 0 { Severity::Warning } else { Severity::Info },
            FindingKind::OutOfOrder,
            format!(
                "{}: {} arrived after later PSNs, up to {} late, and {} not resent: reordering on the path (adaptive routing, packet spraying), not loss{beyond}",
                qp_name(f, a),
                plural(st.out_of_order, "packet", "packets"),
                us(st.max_late_ns),
                if st.out_of_order == 1 { "was" } else { "were" }
            ),
            ev(f, &[EvidenceKind::OutOfOrder]),
            st.out_of_order,
        );
    }
    // On Mellanox DC, NAK code 4 ("invalid RD request" in IBTA RD terms) answers DC
    // connection setup (dc-small2.pcap frame 1 precedes the DC connect); report, not alarm.
    let dc_setup = if f.dc { f.cold().naks[4] } else { 0 };
    if dc_setup > 0 {
        push(
            Severity::Info,
            FindingKind::DcNak,
            format!(
                "{}: {} with code 4 on Mellanox DC (part of DC connection setup, not an RD error)",
                qp_name(f, a),
                plural(dc_setup, "NAK", "NAKs")
            ),
            ev(f, &[EvidenceKind::Nak]),
            dc_setup,
        );
    }
    let bad_naks: u64 = f.cold().naks[1..].iter().sum::<u64>() - dc_setup;
    if bad_naks > 0 {
        let names = [
            "invalid request",
            "remote access error",
            "remote operational error",
            "invalid RD request",
            "reserved code",
        ];
        let list: Vec<String> = f.cold().naks[1..]
            .iter()
            .zip(names)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| format!("{n} {name}"))
            .collect();
        push(
            Severity::Critical,
            FindingKind::NakError,
            format!("{}: NAKs that end the connection's work: {}", qp_name(f, a), list.join(", ")),
            ev(f, &[EvidenceKind::Nak]),
            bad_naks * 10,
        );
    }
    if f.cold().rnr > 0 {
        let (lo, hi) = f.cold().rnr_timer_us.unwrap_or((0, 0));
        let retries = partner.map_or(0, |pf| pf.psn.stats().retransmits_rnr);
        push(
            Severity::Warning,
            FindingKind::Rnr,
            format!(
                "{}: {} (receiver not ready: no receive posted), timer {}-{} us, {} by the sender; not loss",
                qp_name(f, a),
                plural(f.cold().rnr, "RNR NAK", "RNR NAKs"),
                lo,
                hi,
                plural(retries, "retry", "retries")
            ),
            {
                let mut e = ev(f, &[EvidenceKind::Rnr]);
                if let Some(pf) = partner {
                    e.extend(ev(pf, &[EvidenceKind::RetransmitNak]));
                    e.sort_by_key(|x| x.frame);
                }
                e
            },
            f.cold().rnr,
        );
    }
    let ce = f.ecn[3];
    if ce > 0 {
        let delay = f
            .latency()
            .ce_to_cnp
            .summary()
            .map(|l| format!(", CE to CNP {} median", ms(l.p50_ns)))
            .unwrap_or_default();
        if f.cold().cnps_received == 0 {
            push(
                Severity::Warning,
                FindingKind::CeWithoutCnp,
                format!(
                    "{}: {} CE-marked ({:.1}%) but no CNP came back to the sender (notification point off, or CNPs not in the capture)",
                    qp_name(f, a),
                    plural(ce, "packet", "packets"),
                    f.ce_fraction() * 100.0
                ),
                ev(f, &[EvidenceKind::Ce]),
                ce,
            );
        } else {
            let mut e = ev(f, &[EvidenceKind::Ce]);
            if let Some(pf) = partner {
                e.extend(ev(pf, &[EvidenceKind::Cnp]));
                e.sort_by_key(|x| x.frame);
            }
            push(
                Severity::Info,
                FindingKind::Congestion,
                format!(
                    "{}: congestion: {} CE-marked ({:.1}%), {} back to the sender{delay}",
                    qp_name(f, a),
                    plural(ce, "packet", "packets"),
                    f.ce_fraction() * 100.0,
                    plural(f.cold().cnps_received, "CNP", "CNPs")
                ),
                e,
                ce,
            );
        }
    }
    if let Some(cc) = f.cc() {
        cc_findings(f, cc, partner, a, &mut push);
    }
    if f.cold().icrc_bad > 0 {
        push(
            Severity::Warning,
            FindingKind::IcrcBad,
            format!(
                "{}: {} with an invalid ICRC (corruption, a rewriting middlebox, or a capture device writing into frames)",
                qp_name(f, a),
                plural(f.cold().icrc_bad, "packet", "packets")
            ),
            ev(f, &[EvidenceKind::IcrcBad]),
            f.cold().icrc_bad,
        );
    }
}

/// The congestion-control findings of a data sender's flow (docs/verdicts.md "Congestion
/// control"): CE marks that kept coming with no CNP back while CNPs came at other times,
/// CNPs faster than the NP's pacing, and a rate that did not fall after the CNPs.
fn cc_findings(
    f: &Flow,
    cc: &crate::cc::CcState,
    partner: Option<&Flow>,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    let cfg = &a.cfg.cc;
    let pacing = us(cfg.cnp_pacing_ns);
    let cnp_ev = || partner.map(|pf| ev(pf, &[EvidenceKind::Cnp])).unwrap_or_default();
    let (runs, worst) = cc.unanswered(cfg.cnp_pacing_ns);
    // With no CNP at all the flow's `ce_without_cnp` is already said.
    if let (Some(w), true) = (worst, f.cold().cnps_received > 0) {
        let mut e = vec![EvidenceRef {
            frame: w.first_frame,
            ts_ns: w.first_ns,
            what: format!("first CE mark of {} with no CNP back", plural(w.packets, "packet", "packets")),
        }];
        e.extend(cnp_ev());
        e.sort_by_key(|x| x.frame);
        e.dedup_by_key(|x| x.frame);
        push(
            Severity::Warning,
            FindingKind::CeWithoutCnp,
            format!(
                "{}: CE marks kept coming with no CNP back: {} over {} from frame {} ({} of at least {} CE marks over 2 x the {pacing} CNP pacing), though {} came at other times (the NP stopped answering, or those CNPs are not in the capture)",
                qp_name(f, a),
                plural(w.packets, "CE-marked packet", "CE-marked packets"),
                us(w.last_ns - w.first_ns),
                w.first_frame,
                plural(runs, "run", "runs"),
                crate::cc::CE_RUN_MIN_PACKETS,
                plural(f.cold().cnps_received, "CNP", "CNPs"),
            ),
            e,
            w.packets,
        );
    }
    let intervals = cc.intervals.count();
    if cc.too_fast >= 3 {
        let most = cc.too_fast * 2 > intervals;
        let l = cc.intervals.summary();
        let mut e = cnp_ev();
        if let Some((frame, ts_ns, gap)) = cc.first_too_fast {
            e.push(EvidenceRef { frame, ts_ns, what: format!("CNP {} after the one before", us(gap)) });
            e.sort_by_key(|x| x.frame);
            e.dedup_by_key(|x| x.frame);
        }
        push(
            if most { Severity::Warning } else { Severity::Info },
            FindingKind::CnpTooFast,
            format!(
                "{}: CNPs closer together than the {pacing} pacing (--cnp-pacing-us): {} of {} intervals, shortest {}, median {} (the NP paces faster than that, or per port or priority rather than per QP)",
                qp_name(f, a),
                cc.too_fast,
                intervals,
                us(l.map_or(0, |l| l.min_ns) as i64),
                us(l.map_or(0, |l| l.p50_ns) as i64),
            ),
            e,
            cc.too_fast,
        );
    }
    // Past the queue an incast's senders share, a sender's rate is its share of the drain
    // rate: the incast finding says so instead (crate::incast).
    if cc.not_reacting() && !cc_shares_bottleneck(f, a) {
        push(
            Severity::Warning,
            FindingKind::CcNotReacting,
            format!(
                "{}: the sending rate did not fall after the CNPs: {} of {} evaluated CNPs followed by a fall, rate after/before {:.2} on average ({} windows, {} after the CNP); the sender's congestion control may be off, or its rate is set by its application or its ACKs, not by the CNPs",
                qp_name(f, a),
                cc.fell,
                cc.evaluated,
                cc.mean_ratio().unwrap_or(1.0),
                us(cfg.window_ns),
                us(cfg.delay_ns),
            ),
            cnp_ev(),
            cc.evaluated,
        );
    }
}

/// Priorities as `3,4` (`-` for none).
fn prio_list(v: impl IntoIterator<Item = u64>) -> String {
    let items: Vec<String> = v.into_iter().map(|p| p.to_string()).collect();
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

/// The priorities RoCE used at a capture point.
fn roce_priorities(a: &Analyzer, point: u16) -> Vec<u64> {
    a.priorities(point).iter().enumerate().filter(|(_, u)| u.packets > 0).map(|(p, _)| p as u64).collect()
}

/// The findings of the QoS audit's violations (docs/verdicts.md "QoS audit"; reference §1.7,
/// §1.9): marking and priority violations are critical `qos_violation`s, pauses on a priority
/// RoCE does not use or that is not lossless are `pause_unused_priority` warnings, untagged
/// RoCE under a PCP expectation is a `pcp_untagged` warning, and an audit that saw no RoCE is
/// an `audit_no_roce` warning (each still fails the audit: exit status 3).
fn qos_findings(violations: &[Violation], out: &mut FindingSink, a: &Analyzer) {
    let au = &a.cfg.audit;
    for v in violations {
        let at = at_point(a, v.point);
        let num = |x: &Value| match x {
            Value::Num(n) => *n,
            _ => 0,
        };
        let where_ = match &v.flow {
            Some(f) => format!("QP 0x{:06x} {} → {}{at}", f.dest_qp, f.src, f.dst),
            None if v.what != "pause_priority" => String::from("flows no longer tracked (idle)"),
            None => format!("{} priority {}{at}", v.src_mac.clone().unwrap_or_default(), num(&v.seen)),
        };
        let show = |x: &Value| match x {
            Value::Num(n) => n.to_string(),
            Value::Text(t) => (*t).to_string(),
            Value::List(l) => l.iter().map(u64::to_string).collect::<Vec<_>>().join(" or "),
        };
        let mut evidence = vec![EvidenceRef {
            frame: v.first_frame,
            ts_ns: 0,
            what: format!("first of {}", plural(v.packets, "frame", "frames")),
        }];
        let (severity, kind) = match v.what {
            "pause_priority" => (Severity::Warning, FindingKind::PauseUnusedPriority),
            "pcp_untagged" => (Severity::Warning, FindingKind::PcpUntagged),
            "no_roce" => (Severity::Warning, FindingKind::AuditNoRoce),
            _ => (Severity::Critical, FindingKind::QosViolation),
        };
        let title = match v.what {
            "pause_priority" => {
                let prio = num(&v.seen) as u8;
                let lossless = au.lossless_priorities.as_deref().filter(|l| !l.contains(&prio));
                let on = roce_priorities(a, v.point);
                let uses = if on.is_empty() {
                    format!("no RoCE at all{at}")
                } else {
                    format!("RoCE is on priorities {}: {}", prio_list(on), au.priority_rule())
                };
                match lossless {
                    Some(l) => format!(
                        "pause frames on {where_}, which is not a lossless priority (lossless: {}; {uses}) ({} frames)",
                        prio_list(l.iter().map(|p| u64::from(*p))),
                        v.packets
                    ),
                    None => format!(
                        "pause frames on {where_}, which no RoCE traffic uses ({uses}; see --trust, --dscp-map) ({} frames)",
                        v.packets
                    ),
                }
            }
            "ecn" => format!(
                "{where_}: {} of RoCE data not ECN-capable (Not-ECT)",
                plural(v.packets, "packet", "packets")
            ),
            "not_lossless" => format!(
                "{where_}: {} of RoCE data on priority {}, which is not lossless ({}); priority from {}",
                plural(v.packets, "packet", "packets"),
                num(&v.seen),
                prio_list(au.lossless_priorities.iter().flatten().map(|p| u64::from(*p))),
                au.priority_rule()
            ),
            "pcp_untagged" => {
                // The flows behind it, their first untagged frames and DSCPs.
                let mut flows: Vec<(Option<usize>, u64, u64)> = a
                    .audit_hits()
                    .iter()
                    .filter(|((id, what, _), _)| {
                        *what == "pcp_untagged"
                            && id.and_then(|i| a.flows.get(i)).map_or(0, |f| f.key.point) == v.point
                    })
                    .map(|((id, _, _), (n, first))| (*id, *n, *first))
                    .collect();
                flows.sort_by_key(|f| f.2);
                let mut dscps = 0u64;
                evidence = flows
                    .iter()
                    .take(3)
                    .map(|(id, n, first)| EvidenceRef {
                        frame: *first,
                        ts_ns: 0,
                        what: match id.and_then(|i| a.flows.get(i)) {
                            Some(f) => format!(
                                "QP 0x{:06x} {} → {}: first of {} untagged",
                                f.key.dest_qp,
                                f.key.src,
                                f.key.dst,
                                plural(*n, "packet", "packets")
                            ),
                            None => format!("flows no longer tracked: first of {n} untagged"),
                        },
                    })
                    .collect();
                for f in flows.iter().filter_map(|(id, _, _)| id.and_then(|i| a.flows.get(i))) {
                    dscps |= f.dscp_seen;
                }
                let marks: Vec<String> = (0..64u8)
                    .filter(|d| dscps & (1 << d) != 0)
                    .take(4)
                    .map(|d| format!("DSCP {d} → priority {}", au.dscp_priority(d)))
                    .collect();
                format!(
                    "{} in {} carry no VLAN tag, so no PCP{at}: with PCP {} expected, a switch port trusting PCP gives them its default priority and one trusting DSCP the priority of their DSCP ({}); if the capture strips tags (VLAN offload, a capture on the VLAN interface), capture on the parent interface to see them",
                    plural(v.packets, "RoCE packet", "RoCE packets"),
                    plural(flows.len() as u64, "flow", "flows"),
                    show(&v.expected),
                    if marks.is_empty() { "-".to_string() } else { marks.join(", ") }
                )
            }
            "no_roce" => {
                evidence.clear();
                let what = if v.packets == 0 {
                    "the capture holds no frame".to_string()
                } else {
                    format!(
                        "no RoCE frame among the {} of this capture",
                        plural(v.packets, "frame", "frames")
                    )
                };
                format!(
                    "the QoS audit checked nothing: {what}, so none of its expectations could be verified (a failed audit: exit status 3)"
                )
            }
            what => format!(
                "{where_}: {} with {} {} (expected {})",
                plural(v.packets, "packet", "packets"),
                what.replace('_', " ").to_uppercase(),
                show(&v.seen),
                show(&v.expected)
            ),
        };
        out.push(Finding {
            severity,
            kind,
            title,
            flow: v.flow_index,
            src_mac: v.src_mac.clone(),
            priority: None,
            evidence,
            weight: v.packets,
            folded: None,
        });
    }
}

pub(crate) fn build(a: &Analyzer, detail: bool) -> Report {
    build_with(a, detail, true).0
}

/// The report, with its per-flow entries or without them (`flows` left empty: they are
/// built one at a time by [`StreamedReport`]), and every flow's worst finding.
pub(crate) fn build_with(a: &Analyzer, detail: bool, with_flows: bool) -> (Report, Vec<Option<Severity>>) {
    let t = &a.totals;
    let end = t.end_ns.unwrap_or(0);
    let mut flows: Vec<FlowReport> = if with_flows {
        // Sized once: a FlowReport is over a kilobyte, and growing by doubling would leave up
        // to half of the largest allocation unused (300 MB at half a million flows).
        let mut v = Vec::with_capacity(a.flows.len());
        v.extend(a.flows.iter().enumerate().map(|(i, f)| flow_report(i, f, a, detail)));
        v
    } else {
        Vec::new()
    };

    // PFC/PAUSE timelines.
    let mut keys: Vec<_> = a.timelines().keys().copied().collect();
    keys.sort();
    let mut pfc = Vec::new();
    let mut findings = FindingSink::new(a.flows.len(), a.cfg.findings_per_kind);
    let sampled = a.cfg.sampling.is_some();
    findings.set_sampled(sampled);
    let mut violations = Vec::new();
    let points = a.points();
    for key in keys {
        let Some(tl) = a.timelines().get(&key) else { continue };
        let (point, mac, kind, prio) = key;
        let use_ = a.priorities(point).get(usize::from(prio)).copied().unwrap_or_default();
        let point_end = points.get(usize::from(point)).and_then(|p| p.end_ns).unwrap_or(end);
        // Per second of this point's own capture (merged captures span more): the timeline's
        // windows start at the point's first frame and end at its latest.
        let tl = tl.finish(point_end, &a.cfg.pfc);
        let to_mac = a.macs.to(point, mac);
        // The pausing MAC's RoCE is in the MAC table whether or not it was paused.
        let pauser_sends = tl.pauser_sends || a.macs.sends(point, mac);
        let peer = if pauser_sends { None } else { tl.peer.or_else(|| a.macs.station(point, mac)) };
        let direction = match (pauser_sends, peer) {
            (true, _) => PauseDirection::ToPausingMac,
            (false, Some(_)) => PauseDirection::FromLinkPeer,
            (false, None) => PauseDirection::Unknown,
        };
        let r = PauseReport {
            point,
            src_mac: mac_string(&mac),
            kind,
            priority: prio,
            pause_frames: tl.pause_frames,
            xon_frames: tl.xon_frames,
            quanta_total: tl.quanta_total,
            paused_ns: tl.paused_ns,
            pause_us_per_s: tl.pause_us_per_s,
            max_pause_us_per_s: tl.max_pause_us_per_s,
            link_bps: tl.link_bps,
            intervals: tl.intervals.clone(),
            intervals_dropped: tl.intervals_dropped,
            storms: tl.storms().to_vec(),
            deadlock_hint: tl.deadlock,
            roce_packets_on_priority: use_.packets,
            first_frame: tl.first_frame,
            roce_to_mac: match kind {
                PauseKind::Pfc => to_mac.get(usize::from(prio & 7)).copied().unwrap_or(0),
                PauseKind::Pause => to_mac.iter().sum(),
            },
            direction,
            link_peer: peer.map(|m| mac_string(&m)),
            ignored_frames: tl.ignored,
            ignored_from_peer: tl.ignored_from_peer,
            ignored_max_delay_ns: tl.ignored_max_delay_ns,
        };
        // Merged captures: say at which capture point the pauses were seen.
        let at = at_point(a, point);
        let label = match kind {
            PauseKind::Pfc => format!("priority {prio}{at}"),
            PauseKind::Pause => format!("the whole link (802.3x PAUSE){at}"),
        };
        if !r.storms.is_empty() {
            let longest = r.storms.iter().map(|s| s.end_ns - s.start_ns).max().unwrap_or(0);
            findings.push(Finding {
                severity: Severity::Critical,
                kind: FindingKind::PfcStorm,
                title: format!(
                    "PFC storm from {} on {label}: paused {:.0}% of its windows for up to {} ({} pause frames, {:.0} µs paused per second at peak)",
                    r.src_mac,
                    r.storms.iter().map(|s| s.max_fraction).fold(0.0, f64::max) * 100.0,
                    ms(longest as u64),
                    r.pause_frames,
                    r.max_pause_us_per_s
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: Some(prio),
                evidence: r
                    .intervals
                    .iter()
                    .take(3)
                    .map(|i| EvidenceRef {
                        frame: i.first_frame,
                        ts_ns: i.start_ns,
                        what: format!("paused {} by {} frames{}", ms((i.end_ns - i.start_ns) as u64), i.frames, if i.xon { ", ended by XON" } else { "" }),
                    })
                    .collect(),
                weight: r.pause_frames * 10,
                folded: None,
            });
        }
        if let Some(d) = r.deadlock_hint {
            findings.push(Finding {
                severity: Severity::Critical,
                kind: FindingKind::PfcDeadlock,
                title: format!(
                    "possible PFC deadlock on {label}: paused continuously for {} by {} while the RoCE traffic towards it stopped",
                    ms((d.end_ns - d.start_ns) as u64),
                    r.src_mac
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: Some(prio),
                evidence: vec![EvidenceRef { frame: d.first_frame, ts_ns: d.start_ns, what: "pause began".into() }],
                weight: u64::MAX / 4,
                folded: None,
            });
        }
        if let Some(f) = pause_ignored(&r, &tl, &label, &a.cfg.pfc) {
            findings.push(f);
        }
        if kind == PauseKind::Pause && r.pause_frames > 0 {
            findings.push(Finding {
                severity: Severity::Warning,
                kind: FindingKind::LinkPause,
                title: format!(
                    "802.3x PAUSE from {}{at}: {} stopping every priority for {} in all",
                    r.src_mac,
                    plural(r.pause_frames, "frame", "frames"),
                    ms(r.paused_ns as u64)
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: None,
                evidence: vec![EvidenceRef {
                    frame: r.first_frame,
                    ts_ns: 0,
                    what: "first PAUSE frame".into(),
                }],
                weight: r.pause_frames,
                folded: None,
            });
        }
        // No RoCE seen on a priority proves nothing when packets are sampled.
        let unused = kind == PauseKind::Pfc && use_.packets == 0 && !sampled;
        let not_lossless = kind == PauseKind::Pfc
            && a.cfg.audit.lossless_priorities.as_ref().is_some_and(|l| !l.contains(&prio));
        if (unused || not_lossless) && r.pause_frames > 0 {
            // A priority that is not lossless is held to the lossless ones; a lossless (or
            // unconfigured) one no RoCE uses, to the priorities RoCE does use (priorities by
            // trust mode and DSCP map, reference §1.9).
            let expected = match &a.cfg.audit.lossless_priorities {
                Some(l) if not_lossless => Value::List(l.iter().map(|p| u64::from(*p)).collect()),
                _ => Value::List(roce_priorities(a, point)),
            };
            violations.push(Violation {
                point,
                flow: None,
                what: "pause_priority",
                expected,
                seen: Value::Num(u64::from(prio)),
                packets: r.pause_frames,
                first_frame: r.first_frame,
                src_mac: Some(r.src_mac.clone()),
                flow_index: None,
            });
        }
        pfc.push(r);
    }

    let incast = crate::incast::report(a, &pfc, &mut findings);

    // Audit violations on flows (rules in audit::AuditConfig::check). Untagged packets under
    // a PCP expectation are one violation per capture point (its finding names the flows).
    let au = &a.cfg.audit;
    let mut hits: Vec<_> = a.audit_hits().iter().collect();
    hits.sort_by_key(|((id, what, seen), (_, first))| (*first, *id, *what, *seen));
    let mut untagged: Vec<(u16, u64, u64)> = Vec::new();
    for ((id, what, seen), (packets, first)) in hits {
        // A flow no longer tracked (evicted when idle) keeps its hits under no flow.
        let f = id.and_then(|i| a.flows.get(i));
        let point = f.map_or(0, |f| f.key.point);
        if *what == "pcp_untagged" {
            match untagged.iter_mut().find(|u| u.0 == point) {
                Some(u) => {
                    u.1 += packets;
                    u.2 = u.2.min(*first);
                }
                None => untagged.push((point, *packets, *first)),
            }
            continue;
        }
        let allowed = |l: &Option<Vec<u8>>| Value::of(l.as_deref().unwrap_or(&[]));
        let expected = match *what {
            "dscp" => allowed(&au.roce_dscp),
            "ack_dscp" => allowed(&au.ack_dscp),
            "cnp_dscp" => allowed(&au.cnp_dscp),
            "outer_dscp" => allowed(&au.outer_dscp),
            "pcp" => Value::Num(u64::from(au.roce_pcp.unwrap_or(0))),
            "not_lossless" => {
                Value::List(au.lossless_priorities.iter().flatten().map(|p| u64::from(*p)).collect())
            }
            _ => Value::Text("ECN-capable"),
        };
        let seen_v = if *what == "ecn" { Value::Text("Not-ECT") } else { Value::Num(u64::from(*seen)) };
        violations.push(Violation {
            point,
            flow: f.map(flow_ref),
            what,
            expected,
            seen: seen_v,
            packets: *packets,
            first_frame: *first,
            src_mac: None,
            flow_index: f.and(*id),
        });
    }
    for (point, packets, first) in untagged {
        violations.push(Violation {
            point,
            flow: None,
            what: "pcp_untagged",
            expected: Value::Num(u64::from(au.roce_pcp.unwrap_or(0))),
            seen: Value::Text("untagged"),
            packets,
            first_frame: first,
            src_mac: None,
            flow_index: None,
        });
    }
    // An audit that saw no RoCE checked nothing: that is not a pass.
    if au.is_set() && t.roce == 0 {
        violations.push(Violation {
            point: 0,
            flow: None,
            what: "no_roce",
            expected: Value::Text("RoCE"),
            seen: Value::Num(0),
            packets: t.packets,
            first_frame: u64::from(t.packets > 0),
            src_mac: None,
            flow_index: None,
        });
    }

    for (i, f) in a.flows.iter().enumerate() {
        flow_findings(i, f, a, &mut findings);
    }
    one_direction_finding(a, &mut findings);
    qos_findings(&violations, &mut findings, a);
    if t.malformed > 0 {
        findings.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::Malformed,
            title: format!(
                "{} to the RoCE port did not decode as RoCE",
                plural(t.malformed, "frame", "frames")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: t
                .malformed_frames
                .iter()
                .map(|(n, w)| EvidenceRef { frame: *n, ts_ns: 0, what: w.clone() })
                .collect(),
            weight: t.malformed,
            folded: None,
        });
    }
    if t.icrc_truncated > 0 {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::Truncated,
            title: format!(
                "{} cut short by the capture (snap length): headers analysed, ICRC not checked",
                plural(t.icrc_truncated, "RoCE frame", "RoCE frames")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
    if t.tunnel_undecoded > 0 {
        let why: Vec<String> = t.tunnel_undecoded_reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        findings.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::TunnelNotDecoded,
            title: format!(
                "{} in tunnels not decoded ({}): RoCE inside them, if any, was not analysed",
                plural(t.tunnel_undecoded, "frame", "frames"),
                why.join(", ")
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: t.tunnel_undecoded,
            folded: None,
        });
    }
    // Frames in tunnels not decoded may hold the RoCE: then the capture point is not to blame.
    if t.packets > 0 && t.roce == 0 && t.pfc_frames + t.pause_frames == 0 && t.tunnel_undecoded == 0 {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::NoRoce,
            title: "no RoCE in this capture: NIC-offloaded RoCE never reaches the host interface; capture on the RDMA device, in sniffer mode, or from a switch mirror".into(),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
    let between = point_losses(a, &mut findings);
    // Every flow's worst finding and the severity counts include the folded findings.
    let counts = findings.counts();
    let suppressed = findings.suppressed();
    let flow_worst = findings.flow_worst().to_vec();
    let findings = findings.finish(|i| a.flows.get(i).map_or_else(|| format!("flow {i}"), |f| qp_name(f, a)));

    // Connections: each pair once, then unpaired flows.
    for (f, w) in flows.iter_mut().zip(&flow_worst) {
        f.health = health_name(*w);
    }
    let worst = |ids: &[usize]| -> &'static str {
        health_name(ids.iter().filter_map(|i| flow_worst.get(*i).copied().flatten()).min())
    };
    // Counted first: a growing `Vec` of 100k connections left a quarter of its room empty.
    let count = a.flows.iter().enumerate().filter(|(i, f)| f.partner().is_none_or(|p| p > *i)).count();
    let mut connections = Vec::with_capacity(count);
    for (i, f) in a.flows.iter().enumerate() {
        match f.partner() {
            Some(p) if p < i => continue,
            Some(p) => {
                let g = a.flows.get(p);
                let ids = [i, p];
                connections.push(Connection {
                    point: f.key.point,
                    a: f.key.src,
                    b: f.key.dst,
                    a_qpn: g.map(|g| g.key.dest_qp),
                    b_qpn: f.key.dest_qp,
                    flows: ConnFlows::two(i, p),
                    pairing: Word::new(f.pairing.map_or("none", |p| p.name())),
                    packets: f.packets + g.map_or(0, |g| g.packets),
                    bytes: f.bytes + g.map_or(0, |g| g.bytes),
                    health: Word::new(worst(&ids)),
                });
            }
            None => connections.push(Connection {
                point: f.key.point,
                a: f.key.src,
                b: f.key.dst,
                a_qpn: None,
                b_qpn: f.key.dest_qp,
                flows: ConnFlows::one(i),
                pairing: Word::new("none"),
                packets: f.packets,
                bytes: f.bytes,
                health: Word::new(worst(&[i])),
            }),
        }
    }

    let sampled = a.cfg.sampling.map(|cfg| {
        let seen = a.sampling_seen();
        let (lo, hi) = if seen.samples == 0 { (cfg.rate, cfg.rate) } else { (seen.rate_min, seen.rate_max) };
        SampledReport {
            source: cfg.source,
            rate: (lo == hi).then_some(lo),
            rate_min: lo,
            rate_max: hi,
            samples: seen.samples,
            loss_verdicts: false,
            suppressed_findings: suppressed,
            latency_upper_bound: true,
        }
    });
    let report = Report {
        sflow: a.sflow_summary(),
        sampled,
        counters: None,
        input_errors: Vec::new(),
        interrupted: false,
        interrupted_at: None,
        schema_version: SCHEMA_VERSION,
        summary: Summary {
            packets: t.packets,
            roce: t.roce,
            roce_v1: t.roce_v1,
            non_roce: t.non_roce,
            malformed: t.malformed,
            tunnel_undecoded: t.tunnel_undecoded,
            icrc_bad: t.icrc_bad,
            icrc_truncated: t.icrc_truncated,
            pfc_frames: t.pfc_frames,
            pause_frames: t.pause_frames,
            cnps: t.cnps,
            start_ns: t.start_ns,
            end_ns: t.end_ns,
            flows: a.flows.len() as u64,
            connections: connections.len() as u64,
            roce_bytes: t.roce_bytes,
            pmtu: a.pmtu(),
            duplicates: t.duplicates,
            empty_records: 0,
            flows_evicted: t.flows_evicted,
            evicted_packets: t.evicted_packets,
            evicted_bytes: t.evicted_bytes,
            findings: counts,
        },
        findings,
        flows,
        connections,
        pfc,
        timeline: a.fabric_report(),
        incast,
        overlay: a.overlay.report(),
        audit: AuditReport { expected: a.cfg.audit.clone(), violations },
        config: ConfigReport {
            link_speed_bps: a.cfg.link_speed_bps,
            storm_window_ns: a.cfg.pfc.storm_window_ns,
            storm_threshold: a.cfg.pfc.storm_threshold,
            deadlock_ns: a.cfg.pfc.deadlock_ns,
            pause_allowance_ns: a.cfg.pfc.pause_allowance_ns,
            keep_duplicates: a.cfg.keep_duplicates,
        },
        capture: None,
        points: points
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let i = u16::try_from(i).unwrap_or(u16::MAX);
                let (session, clock, pcp_from_erspan, switch_stamps_unused) = a.mirror.point(i);
                PointReport {
                    name: point_name(a, i),
                    packets: p.packets,
                    roce: p.roce,
                    duplicates: p.duplicates,
                    start_ns: p.start_ns,
                    end_ns: p.end_ns,
                    session,
                    clock,
                    pcp_from_erspan,
                    switch_stamps_unused,
                    matched: a.matcher.as_ref().is_some_and(|m| usize::from(i) < m.points()),
                    capture_counters: None,
                }
            })
            .collect(),
        between,
    };
    (report, flow_worst)
}

/// A report whose per-flow entries are built one at a time, as they are written
/// ([`Analyzer::report_streamed`]): a million flows' entries never sit in memory together.
/// It serialises to the same JSON as the [`Report`] [`Analyzer::report`] gives.
pub struct StreamedReport<'a> {
    /// Everything but the per-flow entries (`flows` is empty).
    pub report: Report,
    analyzer: &'a Analyzer,
    worst: Vec<Option<Severity>>,
}

impl<'a> StreamedReport<'a> {
    pub(crate) fn new(analyzer: &'a Analyzer) -> Self {
        let (report, worst) = build_with(analyzer, true, false);
        StreamedReport { report, analyzer, worst }
    }

    /// Number of flows.
    pub fn flow_count(&self) -> usize {
        self.analyzer.flows.len()
    }

    /// The entry of flow `id`, as `Report::flows[id]` would hold it.
    pub fn flow(&self, id: usize) -> Option<FlowReport> {
        let f = self.analyzer.flows.get(id)?;
        let mut r = flow_report(id, f, self.analyzer, true);
        r.health = health_name(self.worst.get(id).copied().flatten());
        Some(r)
    }

    /// The entry of flow `id` without its throughput series, as
    /// [`Analyzer::report_counters`] gives it (what an exporter needs).
    pub fn flow_counters(&self, id: usize) -> Option<FlowReport> {
        let f = self.analyzer.flows.get(id)?;
        let mut r = flow_report(id, f, self.analyzer, false);
        r.health = health_name(self.worst.get(id).copied().flatten());
        Some(r)
    }

    /// The flows that received CNPs (their `cc` is set), in flow order.
    pub fn cnp_receivers(&self) -> impl Iterator<Item = usize> + '_ {
        self.analyzer
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.cc().is_some() && f.cold().cnps_received > 0)
            .map(|(i, _)| i)
    }

    /// The `n` flows with the busiest bin at the `--bin` width, busiest first (ties in flow
    /// order), with their entries: what a microburst list shows. Ranked from each flow's
    /// [`crate::stats::Burst`] alone, so only the `n` entries are built.
    pub fn top_bursts(&self, n: usize) -> Vec<FlowReport> {
        let mut ranked: Vec<(u64, usize)> = self
            .analyzer
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.bins.burst().peak_gbps.to_bits(), i))
            .filter(|(g, _)| f64::from_bits(*g) > 0.0)
            .collect();
        // Non-negative floats order as their bits do.
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().take(n).filter_map(|(_, i)| self.flow(i)).collect()
    }

    /// Totals of a connection, as [`Report::connection_totals`] gives them.
    pub fn connection_totals(&self, c: &Connection) -> ConnectionTotals {
        let flows: Vec<FlowReport> = c.flows.iter().filter_map(|i| self.flow(*i)).collect();
        let refs: Vec<&FlowReport> = flows.iter().collect();
        self.report.totals_of(&refs)
    }
}

/// The flows of a [`StreamedReport`], serialised one by one.
struct LazyFlows<'r, 'a>(&'r StreamedReport<'a>);

impl Serialize for LazyFlows<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.flow_count()))?;
        for id in 0..self.0.flow_count() {
            if let Some(f) = self.0.flow(id) {
                seq.serialize_element(&f)?;
            }
        }
        seq.end()
    }
}

/// [`Report`]'s fields in its order, with the flows built as they are written.
#[derive(Serialize)]
struct ReportView<'r, 'a> {
    schema_version: u32,
    summary: &'r Summary,
    findings: &'r [Finding],
    flows: LazyFlows<'r, 'a>,
    connections: &'r [Connection],
    pfc: &'r [PauseReport],
    timeline: &'r crate::fabric::FabricReport,
    incast: &'r [crate::incast::IncastReport],
    #[serde(skip_serializing_if = "<[crate::overlay::VtepPairReport]>::is_empty")]
    overlay: &'r [crate::overlay::VtepPairReport],
    audit: &'r AuditReport,
    config: &'r ConfigReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<&'r CaptureCounters>,
    points: &'r [PointReport],
    between: &'r [PointLoss],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    input_errors: &'r [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    interrupted_at: Option<&'r Interruption>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampled: Option<&'r SampledReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sflow: Option<&'r SflowReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    counters: Option<&'r crate::nic_counters::CountersReport>,
}

impl Serialize for StreamedReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = &self.report;
        ReportView {
            schema_version: r.schema_version,
            summary: &r.summary,
            findings: &r.findings,
            flows: LazyFlows(self),
            connections: &r.connections,
            pfc: &r.pfc,
            timeline: &r.timeline,
            incast: &r.incast,
            overlay: &r.overlay,
            audit: &r.audit,
            config: &r.config,
            capture: r.capture.as_ref(),
            points: &r.points,
            between: &r.between,
            input_errors: &r.input_errors,
            interrupted: r.interrupted,
            interrupted_at: r.interrupted_at.as_ref(),
            sampled: r.sampled.as_ref(),
            sflow: r.sflow.as_ref(),
            counters: r.counters.as_ref(),
        }
        .serialize(s)
    }
}

/// The name of capture point `i`.
fn point_name(a: &Analyzer, i: u16) -> String {
    a.cfg.points.get(usize::from(i)).cloned().unwrap_or_else(|| format!("point {i}"))
}

/// ` (at NAME)` for titles when several captures are merged, else nothing.
fn at_point(a: &Analyzer, i: u16) -> String {
    if a.cfg.points.len() > 1 {
        format!(" (at {})", point_name(a, i))
    } else {
        String::new()
    }
}

/// Losses between capture points, each with a finding.
fn point_losses(a: &Analyzer, findings: &mut FindingSink) -> Vec<PointLoss> {
    let Some(m) = a.matcher() else { return Vec::new() };
    let mut out = Vec::new();
    for (x, y) in m.untied_pairs() {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::PointsUnmatched,
            title: format!(
                "{} and {} captured the same flows, but no packet was seen at both within --match-window-ms ({} ms): their clocks are further apart than that, so losses between them are not counted (raise the window)",
                point_name(a, x),
                point_name(a, y),
                a.cfg.match_window_ns / 1_000_000
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
    if a.cfg.points.len() > m.points() {
        findings.push(Finding {
            severity: Severity::Info,
            kind: FindingKind::PointsUnmatched,
            title: format!(
                "{} capture points: only the first {} are compared for packets lost between them; from {} on, each keeps its own view (matching takes the first {} points of merged captures, and none found while reading)",
                a.cfg.points.len(),
                m.points(),
                point_name(a, u16::try_from(m.points()).unwrap_or(u16::MAX)),
                crate::crosspoint::MAX_POINTS,
            ),
            flow: None,
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 0,
            folded: None,
        });
    }
    for (key, from, to, lost) in m.losses() {
        let flow = a.flows.find(&key.at(from));
        let (from_name, to_name) = (point_name(a, from), point_name(a, to));
        findings.push(Finding {
            severity: Severity::Critical,
            kind: FindingKind::LostBetweenPoints,
            title: format!(
                "QP 0x{:06x} {} → {}: {} seen at {from_name} never seen at {to_name} (lost between the two capture points, or missed by the capture at {to_name})",
                key.dest_qp,
                key.src,
                key.dst,
                plural(lost.packets, "packet", "packets"),
            ),
            flow,
            src_mac: None,
            priority: None,
            evidence: vec![EvidenceRef {
                frame: lost.first_frame,
                ts_ns: lost.first_ns,
                what: format!("first packet missing at {to_name}"),
            }],
            weight: lost.packets * 100,
            folded: None,
        });
        out.push(PointLoss {
            src: key.src.to_string(),
            dst: key.dst.to_string(),
            dest_qp: key.dest_qp,
            from,
            to,
            packets: lost.packets,
            first_frame: lost.first_frame,
            first_ns: lost.first_ns,
            flow,
        });
    }
    out
}
