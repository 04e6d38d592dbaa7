//! The NIC's counters beside the capture's figures (the report's `counters`, `--counters`).

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A canonical figure the vendors' counters map to (docs/counters.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// CNPs the NIC sent as notification point (it received CE-marked RoCE).
    CnpSent,
    /// CNPs the NIC received and acted on as reaction point (it was told to slow down).
    CnpHandled,
    /// CNPs the NIC received and ignored.
    CnpIgnored,
    /// CE-marked RoCE packets the NIC received.
    EcnMarkedReceived,
    /// NAKs with PSN sequence error the NIC received (as requester).
    SeqErrNakReceived,
    /// Packets the NIC received out of sequence (as responder; it NAKs once per gap).
    OutOfSequence,
    /// Requests re-sent after an implied NAK (READ responses out of sequence).
    ImpliedNak,
    /// ACK timeouts: the NIC waited out its local ACK timeout and re-sent.
    LocalAckTimeout,
    /// Duplicate requests the NIC received (as responder).
    DuplicateRequest,
    /// RNR NAKs the NIC received (and retried).
    RnrNakReceived,
    /// PFC pause frames received on a priority (the NIC was paused).
    PauseRx,
    /// PFC pause frames sent on a priority (the NIC was congested and paused its peer).
    PauseTx,
    /// PFC frames received whose enable vector names the priority, XON (zero quanta) ones
    /// too (bnxt_en's `rx_pfc_ena_frames_priN`).
    PfcFramesRx,
    /// PFC frames sent whose enable vector names the priority, XON (zero quanta) ones too.
    PfcFramesTx,
    /// Time paused by received PFC pauses, µs.
    PauseRxDurationUs,
    /// Time the NIC's sent PFC pauses held, µs.
    PauseTxDurationUs,
    /// 802.3x PAUSE frames received.
    LinkPauseRx,
    /// 802.3x PAUSE frames sent.
    LinkPauseTx,
    /// Received packets dropped for lack of buffers at the physical port.
    RxDiscards,
    /// Received packets dropped for lack of buffers on a priority.
    RxPrioDiscards,
    /// Received packets dropped for lack of a receive WQE.
    OutOfBuffer,
    /// Received packets dropped for lack of a buffer in the driver's receive queue (mlx5
    /// `rx_out_of_buffer`: the Ethernet queues; RoCE reaches them only when not offloaded,
    /// as soft-RoCE's does).
    RxOutOfBuffer,
    /// RoCE packets the RDMA engine discarded on receive (bnxt_re `rx_roce_discards`, irdma
    /// `ip4InDiscards` / `ip6InDiscards`).
    RoceRxDiscards,
}

impl Figure {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Figure::CnpSent => "cnp_sent",
            Figure::CnpHandled => "cnp_handled",
            Figure::CnpIgnored => "cnp_ignored",
            Figure::EcnMarkedReceived => "ecn_marked_received",
            Figure::SeqErrNakReceived => "seq_err_nak_received",
            Figure::OutOfSequence => "out_of_sequence",
            Figure::ImpliedNak => "implied_nak",
            Figure::LocalAckTimeout => "local_ack_timeout",
            Figure::DuplicateRequest => "duplicate_request",
            Figure::RnrNakReceived => "rnr_nak_received",
            Figure::PauseRx => "pause_rx",
            Figure::PauseTx => "pause_tx",
            Figure::PfcFramesRx => "pfc_frames_rx",
            Figure::PfcFramesTx => "pfc_frames_tx",
            Figure::PauseRxDurationUs => "pause_rx_duration_us",
            Figure::PauseTxDurationUs => "pause_tx_duration_us",
            Figure::LinkPauseRx => "link_pause_rx",
            Figure::LinkPauseTx => "link_pause_tx",
            Figure::RxDiscards => "rx_discards",
            Figure::RxPrioDiscards => "rx_prio_discards",
            Figure::OutOfBuffer => "out_of_buffer",
            Figure::RxOutOfBuffer => "rx_out_of_buffer",
            Figure::RoceRxDiscards => "roce_rx_discards",
        }
    }

    /// How the text report names it.
    pub fn label(self) -> &'static str {
        match self {
            Figure::CnpSent => "CNPs sent",
            Figure::CnpHandled => "CNPs handled",
            Figure::CnpIgnored => "CNPs ignored",
            Figure::EcnMarkedReceived => "CE-marked received",
            Figure::SeqErrNakReceived => "seq-error NAKs received",
            Figure::OutOfSequence => "out of sequence",
            Figure::ImpliedNak => "implied NAKs",
            Figure::LocalAckTimeout => "ACK timeouts",
            Figure::DuplicateRequest => "duplicate requests",
            Figure::RnrNakReceived => "RNR NAKs received",
            Figure::PauseRx => "PFC pauses received",
            Figure::PauseTx => "PFC pauses sent",
            Figure::PfcFramesRx => "PFC frames received +XON",
            Figure::PfcFramesTx => "PFC frames sent +XON",
            Figure::PauseRxDurationUs => "µs paused by pauses received",
            Figure::PauseTxDurationUs => "µs of pauses sent",
            Figure::LinkPauseRx => "PAUSE received",
            Figure::LinkPauseTx => "PAUSE sent",
            Figure::RxDiscards => "rx discards",
            Figure::RxPrioDiscards => "rx discards",
            Figure::OutOfBuffer => "out of buffer",
            Figure::RxOutOfBuffer => "rx queue out of buffer",
            Figure::RoceRxDiscards => "RoCE rx discards",
        }
    }
}

/// One figure side by side.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CounterRow {
    /// The canonical figure (`cnp_sent`, `pause_rx`, ...).
    pub figure: Figure,
    /// The priority, for per-priority figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The NIC's figure: the delta between the snapshots, or the absolute value of a single
    /// snapshot; null when no snapshot holds it or it went backwards.
    pub nic: Option<u64>,
    /// The vendor counters summed into it (`PORT NAME`).
    pub counters: Vec<String>,
    /// What the capture shows for it; null when a capture cannot show it.
    pub capture: Option<u64>,
    /// Which capture figure that is.
    pub capture_figure: String,
    /// `agree`, `nic_more` (the NIC counted more: expected when the snapshots bracket the
    /// capture), `capture_misses` (the NIC counted some, the capture none), `capture_more`,
    /// `loss_explains` (the capture's own drops explain the difference), `not_compared`
    /// (one snapshot, a sampled capture, or no capture figure).
    pub status: Cow<'static, str>,
}

impl CounterRow {
    /// How the text report and the UI name it (`PFC pauses sent prio 3`).
    pub fn label(&self) -> String {
        match self.priority {
            Some(p) => format!("{} prio {p}", self.figure.label()),
            None => self.figure.label().to_string(),
        }
    }
}

/// A counter no canonical figure takes: kept and listed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Unmapped {
    /// Port (`mlx5_0/1`, `ethtool -S`).
    pub port: String,
    /// Counter name.
    pub name: String,
    /// Its delta (or absolute value with one snapshot); null when it went backwards or is in
    /// one snapshot only.
    pub value: Option<u64>,
}

/// The `counters` object of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CountersReport {
    /// The counter files read.
    pub files: Vec<String>,
    /// `delta` (two snapshots) or `absolute` (one: values since the NIC's counters were last
    /// reset, not the capture's span; nothing is compared).
    pub mode: Cow<'static, str>,
    /// Ports the counters come from.
    pub ports: Vec<String>,
    /// The host the capture figures are taken for (`--counters-host`); empty: the whole
    /// capture.
    pub host: Vec<String>,
    /// Figures side by side.
    pub figures: Vec<CounterRow>,
    /// Counters not mapped to a figure.
    pub unmapped: Vec<Unmapped>,
    /// Counters whose value went down between the snapshots (reset or wrapped): no delta.
    pub went_backwards: Vec<String>,
    /// Counters in only one of the two snapshots.
    pub in_one_snapshot: Vec<String>,
    /// What to keep in mind reading them.
    pub notes: Vec<String>,
    /// Losses beyond the capture point to the host beside the receive drops its NIC
    /// counted (two snapshots and `--counters-host` with an IP; absent when either is
    /// zero): the `network_loss` findings of those flows say where the packets were dropped
    /// (the analyzer's `nic_counters::place_drops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_drops: Option<NicDrops>,
}

/// Losses beyond the capture point on their way to the host, beside the receive drops its
/// NIC counted between the snapshots (JSON `counters.nic_drops`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NicDrops {
    /// Packets to the host lost beyond the capture point (one per sequence-error NAK for a
    /// PSN the capture saw pass, answered by go-back-N).
    pub lost_beyond: u64,
    /// Receive drops the NIC counted: the largest of the counters below (not their sum:
    /// one packet may count at the port and at its priority).
    pub nic_dropped: u64,
    /// The drop counters that moved (`PORT NAME`).
    pub counters: Vec<String>,
    /// The flows (indices into `flows`) whose losses these are, with their packets lost
    /// beyond the capture point.
    pub flows: Vec<NicDropFlow>,
}

/// One flow's losses beyond the capture point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NicDropFlow {
    /// Index into `flows`.
    pub flow: usize,
    /// Packets lost beyond the capture point.
    pub packets: u64,
    /// The flow also lost packets before the capture point (gaps there). Not in the JSON
    /// (false in a report read back from it): it says how `network_loss` findings are worded.
    #[serde(skip)]
    pub gaps_here: bool,
}
