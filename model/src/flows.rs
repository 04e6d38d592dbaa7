//! One direction of a QP: the report's `flows` entries and their parts.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Opcode count.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpcodeCount {
    /// Opcode value.
    pub opcode: u8,
    /// Its name.
    pub name: Cow<'static, str>,
    /// Packets.
    pub packets: u64,
}

/// ECN codepoint counts.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Passes of resends with no NAK before them (timeouts, and resends of unknown cause):
    /// a resend burst, or the part of one that goes back to a PSN it already resent (a
    /// timer that fired again). What the NCCL_IB_TIMEOUT check reads (crate::nccl).
    pub resend_gaps: u64,
    /// The shortest time such a pass waited since the flow last sent anything new or began
    /// its previous pass, ns (null without one).
    pub resend_gap_min_ns: Option<i64>,
    /// The longest (null without one).
    pub resend_gap_max_ns: Option<i64>,
    /// The frame that began the pass after the longest gap (null without one).
    pub resend_gap_max_frame: Option<u64>,
    /// The most passes of resends from one PSN with no new packet in between (RNR retries
    /// left out): the retries of the QP's retry count one PSN took. 0 without resends.
    pub retries_max: u32,
    /// From the flow's last new packet before those passes to the last of them, ns (0
    /// without).
    pub retries_span_ns: i64,
    /// The frame of the last of those passes (null without resends).
    pub retries_frame: Option<u64>,
    /// Lives of the QP in the capture: 1, plus one for each restart of its PSNs (a new
    /// random starting PSN, or back behind PSNs the responder had acknowledged: an NCCL
    /// job restarted at PSN 0 on reused QP numbers). 0 on untracked flows.
    pub lives: u64,
    /// Resends after a sequence-error NAK of the NAKed PSN alone, the flow going on with
    /// new PSNs (selective repeat).
    pub selective_resends: u64,
    /// PSN rule violations: requests on PSNs a READ reserved, ACK or NAK PSNs outside the
    /// outstanding window.
    pub psn_violations: u64,
    /// The QP retried one PSN `RETRY_CNT` (7) times with nothing new sent and no ACK after:
    /// its retry count is used up (the QP goes to error).
    pub retries_exhausted: bool,
    /// A request still unacknowledged when the QP fell silent for longer than its ACK
    /// timeout allows, with no resend: {`psn`, `frame`, `request_ns` (that request), `silent_ns`
    /// (from the QP's last packet to the end of the capture, or to a CM DREQ), `firm`, `closed`}; null otherwise.
    pub stall: Option<StallReport>,
}

/// A stuck QP ([`PsnReport::stall`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StallReport {
    /// The unacknowledged request's PSN.
    pub psn: u32,
    /// Its frame.
    pub frame: u64,
    /// Its time (ns since the epoch).
    pub request_ns: i64,
    /// How long the QP (both directions) was silent before the capture ended.
    pub silent_ns: i64,
    /// The silence outlasts the whole retry budget ((RETRY_CNT + 1) x the ACK timeout): the
    /// QP is hung, not merely the capture ending.
    pub firm: bool,
    /// The silence ended with a CM DREQ tearing the connection down (else with the capture).
    pub closed: bool,
}

/// NAKs by code.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rnr_timer_us_min: Option<u32>,
    /// Largest RNR timer asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rnr_timer_us_max: Option<u32>,
}

/// Throughput over time.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    pub burst: Burst,
    /// The busiest window (a bin; the capture's last, partial bin joins the one before it).
    pub peak_gbps: f64,
    /// Over the windows from the flow's first to its last: the same basis as `peak_gbps`,
    /// which is never below it.
    pub mean_gbps: f64,
}

/// Latency figures. Each summary is boxed: most flows have none, and a report over half a
/// million flows keeps 200 bytes a flow less than with the summaries inline.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Why the reaction of this flow, with at least one evaluated CNP, is not judged
    /// whichever way its figures lean (`incast`: it is one of many senders to a receiver,
    /// seen past the queue they share, where its rate is its share of the drain rate;
    /// `past_queue`: its data arrives CE-marked, past a marking queue, at that queue's
    /// drain rate; `below_cut`: its rate did not fall, but it sent under half the link
    /// speed before its CNPs, below what a DCQCN cut from line rate binds, and its verdict
    /// is an INFO). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<Cow<'static, str>>,
}

/// One flow.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    pub pairing: Option<Cow<'static, str>>,
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
    /// Its bursts of data: runs of data packets with no gap over 1 ms, of 16 KiB or more
    /// (crate::runs; what the iteration rhythm is read from).
    pub bursts: u64,
    /// Its worst finding (folded ones included): critical, warning, info or ok.
    pub health: Cow<'static, str>,
}

/// A latency summary in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: u64,
    /// Median (quarter-octave resolution).
    pub p50_ns: u64,
    /// 99th percentile (quarter-octave resolution).
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}
/// The busiest bins of a series at the `--bin` width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// The bin width these figures are at (`--bin`).
    pub bin_ns: u64,
    /// The busiest bin's rate over its full width, Gb/s.
    pub peak_gbps: f64,
    /// Its start, ns after the capture start.
    pub peak_offset_ns: u64,
    /// Most CE-marked packets in one bin.
    pub ce_peak: u32,
    /// Packets in that bin (its CE fraction is `ce_peak / ce_peak_packets`).
    pub ce_peak_packets: u32,
    /// Its start, ns after the capture start (0 when no packet was marked).
    pub ce_peak_offset_ns: u64,
}
