//! Per-flow state: one direction of a QP, keyed by (source, destination, destination QP).

use crate::cc::{CcConfig, CcState};
use crate::psn::LazyPsn;
use crate::runs::{Run, RunState, Runs};
use crate::stats::{Bins, Latency};
use rocescope_decoder::Opcode;
use std::collections::VecDeque;
use std::net::IpAddr;

/// Packets per opcode: the first four distinct opcodes inline (a WRITE stream's First,
/// Middle, Last and Only; an ACK stream's one) with 32-bit counts, the rest in a list
/// allocated when a fifth comes. 32 bytes a flow (issue 39; 56 with 64-bit inline counts,
/// 104 with eight inline and a `Vec`, issue 13). An inline count that would pass
/// `u32::MAX` widens: its 64-bit count moves to the list and its bit in `wide` is set, so
/// the counts read (and saturate) as 64-bit ones.
#[derive(Clone, Debug, Default)]
pub struct OpcodeCounts {
    ops: [u8; 4],
    len: u8,
    /// Bit i: inline slot i's count lives in `more` (it passed `u32::MAX`).
    wide: u8,
    counts: [u32; 4],
    /// Past four, and widened inline counts: a boxed `Vec` (8 bytes inline, where a `Vec`
    /// took 24 and a boxed slice 16), which few flows need.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<(u8, u64)>>>,
}

impl OpcodeCounts {
    /// Count one packet of `op`.
    pub fn add(&mut self, op: Opcode) {
        self.add_n(op, 1);
    }

    /// Count `k` packets of `op` (a sampled packet stands for the rate's worth).
    pub fn add_n(&mut self, op: Opcode, k: u64) {
        let n = usize::from(self.len);
        if let Some(i) = self.ops.iter().take(n).position(|o| *o == op.0) {
            if self.wide & (1 << i) != 0 {
                self.add_more(op.0, k);
            } else if let Some(c) = self.counts.get_mut(i) {
                match u32::try_from(k).ok().and_then(|k| c.checked_add(k)) {
                    Some(v) => *c = v,
                    None => {
                        let total = u64::from(*c).saturating_add(k);
                        *c = 0;
                        self.wide |= 1 << i;
                        self.push_more(op.0, total);
                    }
                }
            }
        } else if n < self.ops.len() {
            if let (Some(o), Some(c)) = (self.ops.get_mut(n), self.counts.get_mut(n)) {
                *o = op.0;
                match u32::try_from(k) {
                    Ok(k) => *c = k,
                    Err(_) => {
                        *c = 0;
                        self.wide |= 1 << n;
                        self.push_more(op.0, k);
                    }
                }
            }
            self.len += 1;
        } else {
            self.add_more(op.0, k);
        }
    }

    /// Add `k` to `op`'s entry in the list, adding the entry when it has none.
    fn add_more(&mut self, op: u8, k: u64) {
        if let Some(slot) = self.more.iter_mut().flat_map(|m| m.iter_mut()).find(|(o, _)| *o == op) {
            slot.1 = slot.1.saturating_add(k);
        } else {
            self.push_more(op, k);
        }
    }

    fn push_more(&mut self, op: u8, k: u64) {
        let v = self.more.get_or_insert_with(|| Box::new(Vec::with_capacity(1)));
        v.push((op, k));
    }

    /// The list's count for `op` (0 when it has none).
    fn more_of(&self, op: u8) -> u64 {
        self.more.iter().flat_map(|m| m.iter()).find(|(o, _)| *o == op).map_or(0, |e| e.1)
    }

    /// (opcode, packets) pairs in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (Opcode, u64)> + '_ {
        let n = usize::from(self.len);
        let inline = self.ops.get(..n).unwrap_or(&[]);
        inline
            .iter()
            .zip(self.counts.iter())
            .enumerate()
            .map(|(i, (o, c))| (*o, if self.wide & (1 << i) != 0 { self.more_of(*o) } else { u64::from(*c) }))
            .chain(self.more.iter().flat_map(|m| m.iter().copied()).filter(move |(o, _)| !inline.contains(o)))
            .map(|(o, n)| (Opcode(o), n))
    }
}

/// The indexes of a flow's widening counts ([`Flow::count`]).
pub mod count {
    /// Packets.
    pub const PACKETS: usize = 0;
    /// Wire bytes (capture record length).
    pub const BYTES: usize = 1;
    /// IB payload bytes.
    pub const PAYLOAD_BYTES: usize = 2;
    /// Messages: packets ending a message (Last/Only), ACKs excluded.
    pub const MESSAGES: usize = 3;
    /// Request and response packets.
    pub const REQUESTS: usize = 4;
    /// Response packets (READ responses, ACKs, atomic ACKs).
    pub const RESPONSES: usize = 5;
    /// Not-ECT packets; ECT(1), ECT(0) and CE follow (`ECN + codepoint`).
    pub const ECN: usize = 6;
    /// Positive ACKs (Acknowledge packets).
    pub const ACKS: usize = 10;
    /// How many.
    pub const N: usize = 11;
}

/// One direction of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    /// Source IP (or GID for RoCEv1).
    pub src: IpAddr,
    /// Destination IP (or GID).
    pub dst: IpAddr,
    /// Destination QP.
    pub dest_qp: u32,
    /// Capture point the flow was seen at (0 for a single source): captures merged from
    /// several hosts keep each point's view of a QP apart.
    pub point: u16,
}

impl FlowKey {
    /// The same flow at another capture point.
    pub fn at(self, point: u16) -> FlowKey {
        FlowKey { point, ..self }
    }
}

impl std::hash::Hash for FlowKey {
    /// One or two words instead of IpAddr's field-by-field hashing: this runs per packet.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                h.write_u64(u64::from(u32::from(s)) << 32 | u64::from(u32::from(d)));
                h.write_u64(u64::from(self.dest_qp) | u64::from(self.point) << 32);
            }
            (s, d) => {
                let wide = |a: IpAddr| match a {
                    IpAddr::V4(v) => u128::from(u32::from(v)) | 1 << 127,
                    IpAddr::V6(v) => u128::from(v),
                };
                h.write_u128(wide(s));
                h.write_u128(wide(d));
                h.write_u64(u64::from(self.dest_qp | 1 << 31) | u64::from(self.point) << 32);
            }
        }
    }
}

/// How two flows were found to be the two directions of one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// CM REQ/REP MADs on QP1 named both QPNs.
    Cm,
    /// Both directions carry the same UDP source port: ConnectX derives the port from a flow
    /// label symmetric in the two QPNs (`rdma_calc_flow_label(lqpn, rqpn)`, a product), so
    /// the two directions of one QP pair share it (the real captures' ConnectX pairs do).
    Port,
    /// Responses' PSNs fell in the reverse flow's request PSN stream.
    Psn,
    /// The only flow in the reverse direction between the two hosts.
    Address,
}

impl Pairing {
    /// Name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Pairing::Cm => "cm",
            Pairing::Port => "port",
            Pairing::Psn => "psn",
            Pairing::Address => "address",
        }
    }
}

/// Outstanding requests remembered for latency (bounded).
pub(crate) const MAX_OUTSTANDING: usize = 1024;

/// An outstanding AckReq: (PSN, wire length or `u32::MAX` for a message's Last packet,
/// time, frame).
pub(crate) type AckReq = (u32, u32, i64, u64);

/// [`Flow`]'s `dscp` byte: a DSCP was seen (its value in the low six bits).
const DSCP_ONE: u8 = 0x40;
/// [`Flow`]'s `dscp` byte: more than one was, the set in [`FlowCold`].
const DSCP_MORE: u8 = 0x80;

/// No AckReq outstanding: what a flow that never asked for an ACK reads.
static NO_ACKREQS: AckQueue = AckQueue::EMPTY;

/// A flow's outstanding AckReqs and its ACK latency, allocated on the first of either: 8
/// bytes in the flow where a `VecDeque` header and a boxed `Latency` took 40, and the flows
/// that never ask for an ACK (the ACK direction of every connection) hold none (issue 39).
/// It reads as the queue: an untouched one as an empty queue; any change allocates it (so
/// clear only a non-empty one).
#[derive(Clone, Debug, Default)]
pub(crate) struct AckReqs(Option<Box<AckState>>);

/// What [`AckReqs`] holds: 40 bytes, a 48-byte allocation, and the latency's own 48 once
/// an ACK answers: a flow whose AckReqs no captured ACK answers (a million one-packet QPs
/// whose ACKs the capture missed) pays 48 bytes where the two in one box took 96, and one
/// with ACKs the same 96 as before (issue 39).
#[derive(Clone, Debug, Default)]
pub(crate) struct AckState {
    outstanding: AckQueue,
    latency: Option<Box<Latency>>,
}

/// A flow's outstanding AckReqs, oldest first: the oldest inline, the later ones in a
/// queue allocated on the second. Most flows have one AckReq outstanding at a time, and
/// then hold no allocation of their own: 32 bytes where a `VecDeque`'s header took 32 and
/// its one-entry buffer a 32-byte allocation more (3.2 MB at 100,000 QPs, issue 39).
#[derive(Clone, Debug)]
pub(crate) struct AckQueue {
    /// The oldest, or [`AckQueue::NONE`]'s frame for none.
    head: AckReq,
    /// The ones after it (kept once allocated, as a `VecDeque` keeps its room): boxed, 8
    /// bytes where a `VecDeque` header took 32 in every queue.
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<AckReq>>>,
}

impl Default for AckQueue {
    fn default() -> Self {
        AckQueue::EMPTY
    }
}

impl AckQueue {
    /// The frame number that marks an empty head: frames are numbered from 1 as they are
    /// read, and no capture holds 2^64 - 1 of them.
    const NONE: u64 = u64::MAX;

    /// No AckReq outstanding.
    pub(crate) const EMPTY: AckQueue = AckQueue { head: (0, 0, 0, Self::NONE), rest: None };

    /// AckReqs outstanding.
    pub(crate) fn len(&self) -> usize {
        if self.head.3 == Self::NONE {
            0
        } else {
            1 + self.rest.as_ref().map_or(0, |r| r.len())
        }
    }

    /// None outstanding.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.3 == Self::NONE
    }

    /// The oldest.
    pub(crate) fn front(&self) -> Option<&AckReq> {
        (self.head.3 != Self::NONE).then_some(&self.head)
    }

    /// Take the oldest.
    pub(crate) fn pop_front(&mut self) -> Option<AckReq> {
        if self.is_empty() {
            return None;
        }
        let next = self.rest.as_mut().and_then(|r| r.pop_front()).unwrap_or(Self::EMPTY.head);
        Some(std::mem::replace(&mut self.head, next))
    }

    /// Add the newest (its frame below [`AckQueue::NONE`], as every frame's is).
    pub(crate) fn push_back(&mut self, a: AckReq) {
        if self.is_empty() {
            self.head = a;
        } else {
            self.rest.get_or_insert_with(Box::default).push_back(a);
        }
    }

    /// Oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &AckReq> {
        self.front().into_iter().chain(self.rest.iter().flat_map(|r| r.iter()))
    }

    /// Forget them all.
    pub(crate) fn clear(&mut self) {
        self.head = Self::EMPTY.head;
        if let Some(r) = self.rest.as_mut() {
            r.clear();
        }
    }
}

impl std::ops::Deref for AckReqs {
    type Target = AckQueue;
    fn deref(&self) -> &AckQueue {
        self.0.as_deref().map_or(&NO_ACKREQS, |a| &a.outstanding)
    }
}

impl std::ops::DerefMut for AckReqs {
    fn deref_mut(&mut self) -> &mut AckQueue {
        &mut self.0.get_or_insert_with(Box::default).outstanding
    }
}

/// The part of a flow touched only on events, kept out of line so the per-packet state of
/// thousands of flows stays in cache, and allocated on a flow's first event: most flows of
/// a large capture never have one ([`Flow::cold`]).
#[derive(Clone, Debug, Default)]
pub struct FlowCold {
    /// First CE mark not yet answered by a CNP.
    pub ce_pending: Option<i64>,
    /// CE-marked data packets (CE on ACKs, NAKs and CNPs left out: no CNP answers them).
    pub data_ce: u64,
    /// CNPs in this flow (this flow's destination QP is the data sender's).
    pub cnps: u64,
    /// CNPs answering this flow's data (through the pairing).
    pub cnps_received: u64,
    /// Packets with an invalid ICRC.
    pub icrc_bad: u64,
    /// NAKs and RNR NAKs ([`Flow::naks`]), allocated on the first: most flows with an
    /// event (a CE mark, a CNP, a bad ICRC) have none (80 bytes off each of them).
    naks: Option<Box<Naks>>,
    /// Starting PSN from CM, when captured.
    pub cm_start_psn: Option<u32>,
    /// The connection's ACK timeout from its CM REQ (local ACK timeout), when captured.
    pub cm_ack_timeout_ns: Option<i64>,
    /// When a CM DREQ began tearing the connection down, when captured.
    pub cm_closed_ns: Option<i64>,
    /// The first few frames of each kind of event.
    pub evidence: Vec<(EvidenceKind, Evidence)>,
    /// Congestion-control state, allocated on the flow's first CE mark or first CNP
    /// received ([`Flow::cc`]).
    cc: Option<Box<CcState>>,
    /// READ, NAK and CNP latency figures ([`Flow::latency`]).
    latency: Option<Box<FlowLatency>>,
    /// READ state ([`Flow::reads`]).
    reads: Option<Box<Reads>>,
    /// Its closed bursts of data ([`Flow::runs`]).
    runs: Option<Box<Runs>>,
    /// Every DSCP value seen (bit n = DSCP n), once a flow carried two ([`Flow::dscp_seen`]).
    dscp_seen: u64,
    /// The high halves of its counts past `u32::MAX` (`Flow::counts`), allocated on the
    /// first: only a flow of more than 4 GB (or 4 G packets) has one.
    counts_hi: Option<Box<[u32; count::N]>>,
}

/// A flow's NAKs and RNR NAKs (allocated on its first: [`Flow::naks`]).
#[derive(Clone, Debug, Default)]
pub struct Naks {
    /// NAKs by code: PSN sequence error, invalid request, remote access, remote
    /// operational, invalid RD request, other.
    pub by_code: [u64; 6],
    /// RNR NAKs.
    pub rnr: u64,
    /// RNR timers asked for, microseconds (min, max).
    pub rnr_timer_us: Option<(u32, u32)>,
    /// When the last NAK for this flow's requests arrived (for NAK-to-resend latency).
    pub(crate) last_nak_ts: Option<i64>,
}

/// What a flow without NAKs reads as its NAKs.
static NO_NAKS: Naks = Naks { by_code: [0; 6], rnr: 0, rnr_timer_us: None, last_nak_ts: None };

/// A flow's READ requests and responses (allocated on its first READ: [`Flow::reads`]).
#[derive(Clone, Debug, Default)]
pub struct Reads {
    /// READs awaiting their last response: (first PSN, last PSN, time).
    pub(crate) outstanding: VecDeque<(u32, u32, i64)>,
    /// The READ response PSN due next (from the READs outstanding).
    pub(crate) resp_next: Option<u32>,
    /// Gaps in the READ responses seen (for this flow's READs).
    pub read_response_gaps: u64,
    /// The PSN range the responder must send again after a response gap (an implied NAK's
    /// re-issued READ falls in it).
    pub(crate) gap: Option<(u32, u32)>,
    /// READs re-issued after their ACK timeout with no response gap in sight: the tail of a
    /// READ (its Last or Only response) was lost, and only the timer could tell.
    pub tail_timeouts: u64,
}

/// What a flow without READs reads as its READ state.
static NO_READS: Reads = Reads {
    outstanding: VecDeque::new(),
    resp_next: None,
    read_response_gaps: 0,
    gap: None,
    tail_timeouts: 0,
};

/// What a flow without events reads as its cold part.
static NO_EVENTS: FlowCold = FlowCold {
    ce_pending: None,
    data_ce: 0,
    cnps: 0,
    cnps_received: 0,
    icrc_bad: 0,
    naks: None,
    cm_start_psn: None,
    cm_ack_timeout_ns: None,
    cm_closed_ns: None,
    evidence: Vec::new(),
    cc: None,
    latency: None,
    reads: None,
    runs: None,
    dscp_seen: 0,
    counts_hi: None,
};

/// What a flow without latency samples reads as its figures.
static NO_LATENCY: FlowLatency =
    FlowLatency { read: Latency::EMPTY, nak_to_retransmit: Latency::EMPTY, ce_to_cnp: Latency::EMPTY };

/// What a flow without ACK latency samples reads as its figures.
static NO_ACK_LATENCY: Latency = Latency::EMPTY;

/// A flow's latency figures but the ACK latency ([`Flow::ack_latency`]): READs, NAKs and
/// CNPs, which most flows never see.
#[derive(Clone, Debug, Default)]
pub struct FlowLatency {
    /// READ request to its last response.
    pub read: Latency,
    /// NAK to the first retransmission it triggers.
    pub nak_to_retransmit: Latency,
    /// CE mark to the next CNP for this flow.
    pub ce_to_cnp: Latency,
}

/// Evidence: a frame and what it showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// Frame number.
    pub frame: u64,
    /// Time.
    pub ts_ns: i64,
    /// What it is.
    pub what: String,
}

/// Kinds of evidence kept per flow (the first few of each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EvidenceKind {
    /// A PSN gap.
    Gap,
    /// A NAK sent.
    Nak,
    /// An RNR NAK sent.
    Rnr,
    /// A retransmission after a NAK.
    RetransmitNak,
    /// A retransmission after a timeout.
    RetransmitTimeout,
    /// A retransmission after a NAK for a packet that arrived late.
    RetransmitSpurious,
    /// A READ re-issued after its responses came out of sequence (implied NAK).
    RetransmitImplied,
    /// A retransmission with no NAK in the capture, too soon for a timeout.
    RetransmitUnknown,
    /// A gap in a READ's responses.
    ReadResponseGap,
    /// A CE mark.
    Ce,
    /// A CNP.
    Cnp,
    /// A bad ICRC.
    IcrcBad,
    /// A reordered packet.
    OutOfOrder,
    /// The first request of a new life of the QP.
    NewLife,
    /// A request or an ACK that broke the PSN rules.
    PsnViolation,
}

/// Evidence kept per kind.
pub(crate) const EVIDENCE_PER_KIND: usize = 5;

/// The bits of [`Flow`]'s flag byte.
mod bits {
    /// PSN tracking applies (RC, UC, XRC requests).
    pub(super) const TRACKED: u8 = 1;
    /// Carries UC requests.
    pub(super) const UC: u8 = 1 << 1;
    /// Carries Mellanox DC packets.
    pub(super) const DC: u8 = 1 << 2;
    /// A RoCEv2 packet set the latest UDP port.
    pub(super) const UDP: u8 = 1 << 3;
    /// The pairing: 0 none, else [`super::Pairing`]'s place plus one, in bits 4-6.
    pub(super) const PAIRING_SHIFT: u8 = 4;
    pub(super) const PAIRING: u8 = 7 << PAIRING_SHIFT;
    /// The pairings in their places.
    pub(super) const PAIRINGS: [super::Pairing; 4] =
        [super::Pairing::Cm, super::Pairing::Port, super::Pairing::Psn, super::Pairing::Address];
}

/// Everything known about one flow. Laid out in declaration order with the fields every
/// packet touches first, so a packet touches few cache lines.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Flow {
    /// Last packet time.
    pub last_ts: i64,
    /// Its packets, wire bytes, payload bytes, messages, requests, responses, ECN
    /// codepoints and ACKs as 32-bit counts ([`count`]: read them through [`Flow::packets`]
    /// and the others). A count that passes `u32::MAX` widens: its bit in `wide` is set and
    /// its high half lives in the cold part, so each reads (and saturates) as a `u64` (44
    /// bytes where eleven `u64`s took 88, issue 39).
    counts: [u32; count::N],
    /// Bit i: count i has a high half in the cold part.
    wide: u16,
    /// PCP values seen on tagged packets (bit n = PCP n).
    pub pcp_seen: u8,
    /// What is true of it ([`bits`]): PSN tracking applies, it carries UC or DC, a RoCEv2
    /// packet set its latest UDP port, and how it was paired ([`Flow::tracked`],
    /// [`Flow::uc`], [`Flow::dc`], [`Flow::udp_sport_last`], [`Flow::pairing`]). One byte
    /// where three `bool`s, an `Option<Pairing>` and the port's `Option` took six: the
    /// flow's first 72 bytes hold every per-packet figure (88 before, issue 39).
    bits: u8,
    /// The DSCP values seen ([`Flow::dscp_seen`]): bits 0-5 the first, bit 6 set once
    /// one was seen, bit 7 once another was, the whole set then in the cold part. One byte
    /// where the 64-bit set took eight: a flow carries one DSCP (issue 39).
    dscp: u8,
    /// Priority of its packets (PCP, or DSCP >> 3 untagged): last seen, a CNP's only when
    /// it is the flow's first packet (CNPs ride a class of their own).
    pub priority: Option<u8>,
    /// How many times its UDP source port changed from one packet to the next (a NIC that
    /// re-hashes a QP onto another path on a retransmission or a path change; saturating).
    pub udp_sport_changes: u16,
    /// Path MTU implied by this flow's full-size First/Middle packets (0 unknown; one of
    /// 256, 512, 1024, 2048 and 4096 otherwise, so 16 bits).
    pub pmtu: u16,
    /// The other direction of the connection.
    /// (`partner()`: 4 bytes, not `Option<usize>`'s 16; `u32::MAX` for none.)
    partner: u32,
    /// The UDP source port of its first RoCEv2 packet: the ECMP entropy its NIC set for the
    /// QP (meaningful once [`Flow::udp_sport_last`] is set; RoCEv1 has no UDP).
    pub udp_sport: u16,
    /// The port of its latest RoCEv2 packet ([`Flow::udp_sport_last`]: valid with its bit).
    udp_port_last: u16,
    /// Throughput bins.
    pub bins: Bins,
    /// The burst of data under way (`crate::runs`; its bytes 0 before the first).
    pub(crate) run: RunState,
    /// Packets per opcode.
    pub opcodes: OpcodeCounts,
    /// The request PSN stream.
    pub psn: LazyPsn,
    /// Its key.
    pub key: FlowKey,
    /// Requests that asked for an ACK, not yet acknowledged: (PSN, wire length or
    /// `u32::MAX` for a message's Last packet, time, frame); with the AckReq to ACK latency
    /// behind the same pointer ([`Flow::ack_latency`]), apart from the other figures: every
    /// request flow has ACKs, few have READs, NAKs or CNPs.
    pub(crate) outstanding_ackreq: AckReqs,
    /// What is touched only on events (ACKs, NAKs, CNPs, AckReq, evidence).
    cold: Option<Box<FlowCold>>,
    /// First frame number.
    pub first_frame: u64,
    /// First packet time.
    pub first_ts: i64,
    /// Its share of the capture-wide figures in the bin being filled (crate::fold).
    pub(crate) fold: FlowFold,
}

/// A flow's share of the bin being filled at its point: its frames that agree in class,
/// DSCP, PCP and priority. 32 bytes (40 with 64-bit bytes, issue 39). Per-flow state, kept
/// here with the flow; the folds that fill it and hand it over at bin close are
/// crate::fold's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowFold {
    /// Bin (top 40 bits), class (bits 20-21), PCP slot (16-19: 8 untagged), DSCP (8-13),
    /// priority (0-7); [`FlowFold::EMPTY`] for none.
    pub(crate) key: u64,
    /// The first frame's number.
    pub(crate) first: u64,
    /// Wire bytes, packets and CE-marked packets (at most `u32::MAX`: a share that full is
    /// folded).
    pub(crate) bytes: u32,
    pub(crate) packets: u32,
    pub(crate) ce: u32,
    /// The flow's fan-in receiver (crate::incast), resolved on its first data frame;
    /// [`FlowFold::NO_RX`] until then.
    pub(crate) rx: u32,
}

impl FlowFold {
    /// No share (the key of none).
    pub(crate) const EMPTY: u64 = u64::MAX;
    /// No fan-in receiver resolved.
    pub(crate) const NO_RX: u32 = u32::MAX;
}

impl Default for FlowFold {
    fn default() -> Self {
        FlowFold { key: Self::EMPTY, bytes: 0, first: 0, packets: 0, ce: 0, rx: Self::NO_RX }
    }
}

impl Flow {
    pub(crate) fn new(key: FlowKey, frame: u64, ts: i64, bin_ns: u64) -> Self {
        Flow {
            key,
            last_ts: ts,
            counts: [0; count::N],
            wide: 0,
            opcodes: OpcodeCounts::default(),
            dscp: 0,
            pcp_seen: 0,
            psn: LazyPsn::default(),
            bins: Bins::new(bin_ns),
            run: RunState::default(),
            partner: u32::MAX,
            priority: None,
            bits: 0,
            pmtu: 0,
            udp_sport: 0,
            udp_port_last: 0,
            udp_sport_changes: 0,
            outstanding_ackreq: AckReqs::default(),
            cold: None,
            first_frame: frame,
            first_ts: ts,
            fold: FlowFold::default(),
        }
    }

    /// PSN tracking applies (RC, UC, XRC requests).
    #[inline]
    pub fn tracked(&self) -> bool {
        self.bits & bits::TRACKED != 0
    }

    /// Carries UC requests: UC never resends, so its gaps are loss.
    #[inline]
    pub fn uc(&self) -> bool {
        self.bits & bits::UC != 0
    }

    /// Carries Mellanox DC packets (opcodes 0x40-0x5F read as DC).
    #[inline]
    pub fn dc(&self) -> bool {
        self.bits & bits::DC != 0
    }

    /// Set a flag bit ([`bits`]) when `on`.
    #[inline]
    fn set_bit(&mut self, bit: u8, on: bool) {
        if on {
            self.bits |= bit;
        }
    }

    /// PSN tracking applies from now on.
    #[inline]
    pub(crate) fn set_tracked(&mut self) {
        self.set_bit(bits::TRACKED, true);
    }

    /// It carries UC requests, when `uc`.
    #[inline]
    pub(crate) fn mark_uc(&mut self, uc: bool) {
        self.set_bit(bits::UC, uc);
    }

    /// It carries DC packets, when `dc`.
    #[inline]
    pub(crate) fn mark_dc(&mut self, dc: bool) {
        self.set_bit(bits::DC, dc);
    }

    /// The UDP source port of its latest packet: `None` before a RoCEv2 one.
    #[inline]
    pub fn udp_sport_last(&self) -> Option<u16> {
        (self.bits & bits::UDP != 0).then_some(self.udp_port_last)
    }

    /// A RoCEv2 packet from UDP source port `port`.
    #[inline]
    pub(crate) fn set_udp_sport_last(&mut self, port: u16) {
        self.bits |= bits::UDP;
        self.udp_port_last = port;
    }

    /// How it was paired with the reverse flow.
    #[inline]
    pub fn pairing(&self) -> Option<Pairing> {
        let i = usize::from((self.bits & bits::PAIRING) >> bits::PAIRING_SHIFT);
        i.checked_sub(1).and_then(|i| bits::PAIRINGS.get(i)).copied()
    }

    /// Paired with the reverse flow by `how` (`None`: not paired).
    pub(crate) fn set_pairing(&mut self, how: Option<Pairing>) {
        let code = how.and_then(|h| bits::PAIRINGS.iter().position(|p| *p == h)).map_or(0, |i| i as u8 + 1);
        self.bits = (self.bits & !bits::PAIRING) | code << bits::PAIRING_SHIFT;
    }

    /// Count `c` ([`count`]) as a `u64`: its 32 bits, and the high half kept apart once it
    /// passed `u32::MAX`.
    #[inline]
    pub fn count(&self, c: usize) -> u64 {
        let lo = self.counts.get(c).map_or(0, |v| u64::from(*v));
        if self.wide & (1 << c) == 0 {
            lo
        } else {
            let hi = self.cold().counts_hi.as_deref().and_then(|h| h.get(c)).map_or(0, |v| u64::from(*v));
            lo | hi << 32
        }
    }

    /// Add `x` to count `c`, saturating at `u64::MAX` (widening past `u32::MAX`). A wide
    /// count's low half takes an add that does not carry as a narrow one does (its high half
    /// unchanged): only a carry, or an `x` past 32 bits, takes the slow path.
    #[inline(always)]
    pub(crate) fn add_count(&mut self, c: usize, x: u64) {
        if let Some(v) = self.counts.get_mut(c) {
            if let Some(n) = u32::try_from(x).ok().and_then(|x| v.checked_add(x)) {
                *v = n;
                return;
            }
        }
        self.set_count(c, self.count(c).saturating_add(x));
    }

    /// One frame's counts: `w` packets of codepoint `ecn` (0-3), `bytes` wire and `payload`
    /// payload bytes in all. One test for the four while none carries past 32 bits (the
    /// per-frame path: about as cheap as the four 64-bit adds it replaces; see
    /// [`Flow::add_count`] for wide counts).
    #[inline(always)]
    pub(crate) fn count_frame(&mut self, w: u64, bytes: u64, payload: u64, ecn: usize) {
        if (w | bytes | payload) >> 32 == 0 && ecn < 4 {
            let c = &mut self.counts;
            let (p, o1) = c[count::PACKETS].overflowing_add(w as u32);
            let (b, o2) = c[count::BYTES].overflowing_add(bytes as u32);
            let (y, o3) = c[count::PAYLOAD_BYTES].overflowing_add(payload as u32);
            let (e, o4) = c[count::ECN + ecn].overflowing_add(w as u32);
            if !(o1 | o2 | o3 | o4) {
                (c[count::PACKETS], c[count::BYTES], c[count::PAYLOAD_BYTES], c[count::ECN + ecn]) =
                    (p, b, y, e);
                return;
            }
        }
        self.add_count(count::PACKETS, w);
        self.add_count(count::BYTES, bytes);
        self.add_count(count::PAYLOAD_BYTES, payload);
        self.add_count(count::ECN + ecn, w);
    }

    /// Set count `c` to `v` (its high half, when it has one, to the cold part).
    #[cold]
    pub(crate) fn set_count(&mut self, c: usize, v: u64) {
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        if let Some(x) = self.counts.get_mut(c) {
            *x = lo;
        }
        if hi != 0 || self.wide & (1 << c) != 0 {
            self.wide |= 1 << c;
            if let Some(h) = self.cold_mut().counts_hi.get_or_insert_with(Box::default).get_mut(c) {
                *h = hi;
            }
        }
    }

    /// Packets.
    #[inline]
    pub fn packets(&self) -> u64 {
        self.count(count::PACKETS)
    }

    /// Wire bytes (capture record length).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.count(count::BYTES)
    }

    /// IB payload bytes.
    pub fn payload_bytes(&self) -> u64 {
        self.count(count::PAYLOAD_BYTES)
    }

    /// Messages: packets ending a message (Last/Only), ACKs excluded.
    pub fn messages(&self) -> u64 {
        self.count(count::MESSAGES)
    }

    /// Request and response packets.
    pub fn requests(&self) -> u64 {
        self.count(count::REQUESTS)
    }

    /// Response packets (READ responses, ACKs, atomic ACKs).
    pub fn responses(&self) -> u64 {
        self.count(count::RESPONSES)
    }

    /// Not-ECT, ECT(1), ECT(0), CE counts (indexed by codepoint).
    pub fn ecn(&self) -> [u64; 4] {
        std::array::from_fn(|i| self.count(count::ECN + i))
    }

    /// CE-marked packets.
    #[inline]
    pub fn ce(&self) -> u64 {
        self.count(count::ECN + rocescope_decoder::Ecn::Ce as usize)
    }

    /// Positive ACKs (Acknowledge packets) in this flow.
    pub fn acks(&self) -> u64 {
        self.count(count::ACKS)
    }

    /// Its event counters and evidence (all zero, and no allocation, until its first event).
    pub fn cold(&self) -> &FlowCold {
        self.cold.as_deref().unwrap_or(&NO_EVENTS)
    }

    /// Its event counters and evidence, to change: allocated on the first event.
    pub(crate) fn cold_mut(&mut self) -> &mut FlowCold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// Its congestion-control state: `None` until its first CE mark or CNP received.
    pub fn cc(&self) -> Option<&CcState> {
        self.cold.as_deref().and_then(|c| c.cc.as_deref())
    }

    /// Its congestion-control state, to change: allocated (with the cold part) on the
    /// first CE mark or CNP received.
    pub(crate) fn cc_mut(&mut self, cfg: &CcConfig) -> &mut CcState {
        self.cold_mut().cc.get_or_insert_with(|| Box::new(CcState::new(cfg)))
    }

    /// Its congestion-control state when it has one (no allocation otherwise).
    pub(crate) fn cc_if_any(&mut self) -> Option<&mut CcState> {
        self.cold.as_deref_mut().and_then(|c| c.cc.as_deref_mut())
    }

    /// The DSCP values seen (bit n = DSCP n).
    pub fn dscp_seen(&self) -> u64 {
        match self.dscp {
            d if d & DSCP_MORE != 0 => self.cold().dscp_seen,
            d if d & DSCP_ONE != 0 => 1 << (d & 63),
            _ => 0,
        }
    }

    /// A packet with DSCP `dscp` (its low six bits).
    #[inline]
    pub(crate) fn add_dscp(&mut self, dscp: u8) {
        let one = DSCP_ONE | (dscp & 63);
        if self.dscp == one || self.dscp & DSCP_MORE != 0 && self.cold().dscp_seen & (1 << (dscp & 63)) != 0 {
            return;
        }
        if self.dscp == 0 {
            self.dscp = one;
        } else {
            self.add_another_dscp(dscp);
        }
    }

    /// A DSCP other than the flow's first: the set moves to the cold part.
    #[cold]
    fn add_another_dscp(&mut self, dscp: u8) {
        let seen = self.dscp_seen() | 1 << (dscp & 63);
        self.cold_mut().dscp_seen = seen;
        self.dscp |= DSCP_MORE;
    }

    /// The other direction of the connection, when paired.
    pub fn partner(&self) -> Option<usize> {
        (self.partner != u32::MAX).then_some(self.partner as usize)
    }

    /// Pair it with flow `p` (or unpair it). Flow ids past 4 G, which memory cannot hold,
    /// leave it unpaired.
    pub(crate) fn set_partner(&mut self, p: Option<usize>) {
        self.partner = p.and_then(|p| u32::try_from(p).ok()).unwrap_or(u32::MAX);
    }

    /// Its latency figures (empty, and no allocation, until its first sample).
    pub fn latency(&self) -> &FlowLatency {
        self.cold.as_deref().and_then(|c| c.latency.as_deref()).unwrap_or(&NO_LATENCY)
    }

    /// Its latency figures, to add to: allocated on the first sample.
    pub(crate) fn latency_mut(&mut self) -> &mut FlowLatency {
        self.cold_mut().latency.get_or_insert_with(Box::default)
    }

    /// AckReq request to the ACK that covers it (empty, and no allocation, until its first
    /// sample).
    pub fn ack_latency(&self) -> &Latency {
        self.outstanding_ackreq.0.as_deref().and_then(|a| a.latency.as_deref()).unwrap_or(&NO_ACK_LATENCY)
    }

    /// The ACK latency, to add to: allocated on the first sample.
    pub(crate) fn ack_latency_mut(&mut self) -> &mut Latency {
        self.outstanding_ackreq.0.get_or_insert_with(Box::default).latency.get_or_insert_with(Box::default)
    }

    /// The time of the NAK a resend answers, taken (no allocation when there is none).
    pub(crate) fn take_nak_ts(&mut self) -> Option<i64> {
        self.cold.as_mut().and_then(|c| c.naks.as_mut()).and_then(|n| n.last_nak_ts.take())
    }

    /// Its NAKs and RNR NAKs (all zero, and no allocation, until its first).
    pub fn naks(&self) -> &Naks {
        self.cold.as_deref().and_then(|c| c.naks.as_deref()).unwrap_or(&NO_NAKS)
    }

    /// Its NAKs, to count one: allocated (with the cold part) on the first.
    pub(crate) fn naks_mut(&mut self) -> &mut Naks {
        self.cold_mut().naks.get_or_insert_with(Box::default)
    }

    /// Its bursts of data, in time order: the closed ones kept, then the one under way when
    /// it is large enough to keep (`crate::runs`).
    pub fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        let closed = self.cold.as_deref().and_then(|c| c.runs.as_deref()).map_or(&[][..], Runs::list);
        closed.iter().copied().chain(self.run.kept().then_some(self.run))
    }

    /// Its bursts merged because it had too many to keep (0 for most flows).
    pub fn runs_merged(&self) -> u32 {
        self.cold.as_deref().and_then(|c| c.runs.as_deref()).map_or(0, |r| r.merged)
    }

    /// A data packet (a request or a READ response) at `ts_ns`: the burst under way grows,
    /// or closes and is kept (allocating the cold part) when it was large enough.
    #[inline]
    pub(crate) fn data_packet(&mut self, ts_ns: i64, frame: u64, bytes: u64) {
        if let Some(closed) = self.run.extend(ts_ns, frame, bytes) {
            self.cold_mut().runs.get_or_insert_with(Box::default).push(closed);
        }
    }

    /// Its READ state (empty, and no allocation, until its first READ).
    pub fn reads(&self) -> &Reads {
        self.cold.as_deref().and_then(|c| c.reads.as_deref()).unwrap_or(&NO_READS)
    }

    /// Its READ state, to change: allocated on the first READ.
    pub(crate) fn reads_mut(&mut self) -> &mut Reads {
        self.cold_mut().reads.get_or_insert_with(Box::default)
    }

    pub(crate) fn note(&mut self, kind: EvidenceKind, frame: u64, ts_ns: i64, what: impl FnOnce() -> String) {
        if self.cold().evidence.iter().filter(|(k, _)| *k == kind).count() < EVIDENCE_PER_KIND {
            let evidence = &mut self.cold_mut().evidence;
            if evidence.capacity() == 0 {
                // Room for one to start: most flows with evidence have one piece (a `Vec`
                // starts at four, 144 bytes more for each of a million flows).
                evidence.reserve_exact(1);
            }
            evidence.push((kind, Evidence { frame, ts_ns, what: what() }));
        }
    }

    /// Evidence of one kind.
    pub fn evidence_of(&self, kind: EvidenceKind) -> impl Iterator<Item = &Evidence> {
        self.cold().evidence.iter().filter(move |(k, _)| *k == kind).map(|(_, e)| e)
    }

    /// Total NAKs (all codes, RNR included).
    pub fn nak_total(&self) -> u64 {
        let n = self.naks();
        n.by_code.iter().fold(n.rnr, |a, b| a.saturating_add(*b))
    }

    /// Packets that are neither ACK/NAKs nor CNPs: requests and READ/atomic responses (as
    /// the report document's reader counts them: `compare::FlowFacts::data_packets`).
    pub fn data_packets(&self) -> u64 {
        self.packets()
            .saturating_sub(self.acks())
            .saturating_sub(self.nak_total())
            .saturating_sub(self.cold().cnps)
    }

    /// CE fraction of the flow's packets.
    pub fn ce_fraction(&self) -> f64 {
        if self.packets() == 0 {
            0.0
        } else {
            self.ce() as f64 / self.packets() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound on `size_of::<Flow>()`.
    const FLOW_BYTES: usize = 320;

    #[test]
    fn opcode_counts_keep_every_opcode_in_first_seen_order() {
        let mut c = OpcodeCounts::default();
        // Four inline, then the list: a sixth opcode and repeats of listed and inline ones.
        let ops = [6u8, 7, 8, 10, 0x11, 4, 7, 0x11, 4, 6, 0x81];
        for (i, op) in ops.iter().enumerate() {
            c.add_n(Opcode(*op), i as u64 + 1);
        }
        let got: Vec<(u8, u64)> = c.iter().map(|(o, n)| (o.0, n)).collect();
        assert_eq!(got, [(6, 1 + 10), (7, 2 + 7), (8, 3), (10, 4), (0x11, 5 + 8), (4, 6 + 9), (0x81, 11)]);
        let mut big = OpcodeCounts::default();
        big.add_n(Opcode(1), u64::MAX);
        big.add_n(Opcode(1), 5);
        assert_eq!(big.iter().next().map(|(_, n)| n), Some(u64::MAX), "saturates");
    }

    #[test]
    fn opcode_counts_widen_past_u32_in_place() {
        let mut c = OpcodeCounts::default();
        let max = u64::from(u32::MAX);
        c.add_n(Opcode(6), max - 1);
        c.add_n(Opcode(7), 3);
        c.add_n(Opcode(6), 5); // passes u32::MAX: widens, keeps its place
        c.add_n(Opcode(8), max + 10); // born wide
        c.add_n(Opcode(10), 1);
        c.add_n(Opcode(0x11), 2); // fifth: the list
        c.add_n(Opcode(6), 1);
        c.add_n(Opcode(8), 1);
        let got: Vec<(u8, u64)> = c.iter().map(|(o, n)| (o.0, n)).collect();
        assert_eq!(got, [(6, max + 5), (7, 3), (8, max + 11), (10, 1), (0x11, 2)]);
        c.add_n(Opcode(6), u64::MAX);
        assert_eq!(c.iter().next().map(|(_, n)| n), Some(u64::MAX), "a widened count saturates");
    }

    #[test]
    fn counts_widen_past_u32_and_saturate_as_u64() {
        let key = FlowKey { src: [10, 0, 0, 1].into(), dst: [10, 0, 0, 2].into(), dest_qp: 7, point: 0 };
        let mut f = Flow::new(key, 1, 0, 1000);
        let max = u64::from(u32::MAX);
        f.add_count(count::BYTES, max);
        assert_eq!((f.bytes(), f.wide), (max, 0), "u32::MAX fits");
        assert!(f.cold.is_none());
        f.add_count(count::BYTES, 2);
        assert_eq!(f.bytes(), max + 2, "widened");
        f.add_count(count::BYTES, 3);
        f.add_count(count::PACKETS, 5);
        assert_eq!((f.bytes(), f.packets()), (max + 5, 5));
        f.add_count(count::ECN + 3, 5 * max);
        assert_eq!(f.ecn(), [0, 0, 0, 5 * max]);
        f.set_count(count::ECN + 3, 1);
        assert_eq!(f.ecn()[3], 1, "a widened count set low reads low");
        f.add_count(count::BYTES, u64::MAX);
        assert_eq!(f.bytes(), u64::MAX, "saturates");
        f.add_count(count::ACKS, u64::MAX);
        f.add_count(count::ACKS, 1);
        assert_eq!(f.acks(), u64::MAX);
        assert_eq!(f.packets(), 5);
    }

    #[test]
    fn ackreqs_allocate_on_the_first_only() {
        let mut q = AckReqs::default();
        assert!(q.is_empty() && q.0.is_none());
        q.push_back((1, 2, 3, 4));
        assert_eq!(q.front(), Some(&(1, 2, 3, 4)));
        assert!(q.0.is_some());
        let key = FlowKey { src: [10, 0, 0, 1].into(), dst: [10, 0, 0, 2].into(), dest_qp: 7, point: 0 };
        let mut f = Flow::new(key, 1, 0, 1000);
        assert_eq!(f.ack_latency().summary(), None);
        f.ack_latency_mut().add(500);
        assert!(f.outstanding_ackreq.is_empty(), "the latency shares the box, not the queue");
        assert!(f.outstanding_ackreq.0.as_ref().is_some_and(|a| a.latency.is_some()));
        assert_eq!(f.ack_latency().summary().map(|s| s.count), Some(1));
    }

    #[test]
    fn the_flag_byte_keeps_each_flag_apart() {
        let key = FlowKey { src: [10, 0, 0, 1].into(), dst: [10, 0, 0, 2].into(), dest_qp: 7, point: 0 };
        let mut f = Flow::new(key, 1, 0, 1000);
        assert_eq!(
            (f.tracked(), f.uc(), f.dc(), f.udp_sport_last(), f.pairing()),
            (false, false, false, None, None)
        );
        f.mark_uc(false);
        f.mark_dc(true);
        f.set_udp_sport_last(0);
        assert_eq!((f.uc(), f.dc(), f.udp_sport_last()), (false, true, Some(0)), "port 0 is a port");
        for how in [Some(Pairing::Cm), Some(Pairing::Port), Some(Pairing::Psn), Some(Pairing::Address), None]
        {
            f.set_pairing(how);
            assert_eq!(f.pairing(), how);
        }
        f.set_tracked();
        f.mark_uc(true);
        f.set_pairing(Some(Pairing::Address));
        f.set_udp_sport_last(4791);
        assert_eq!(
            (f.tracked(), f.uc(), f.dc(), f.udp_sport_last(), f.pairing()),
            (true, true, true, Some(4791), Some(Pairing::Address))
        );
    }

    proptest::proptest! {
        /// The AckReq queue (head inline, the rest boxed) reads as the `VecDeque` it
        /// replaced, whatever the pushes, pops and clears.
        #[test]
        fn the_ackreq_queue_reads_as_a_deque(ops in proptest::collection::vec(0u8..4, 0..64)) {
            let (mut q, mut d) = (AckQueue::EMPTY, VecDeque::new());
            for (i, op) in ops.into_iter().enumerate() {
                let a = (i as u32, 2 * i as u32, i as i64, i as u64 + 1);
                match op {
                    0 | 1 => { q.push_back(a); d.push_back(a); }
                    2 => proptest::prop_assert_eq!(q.pop_front(), d.pop_front()),
                    _ => if i % 5 == 0 { q.clear(); d.clear(); },
                }
                proptest::prop_assert_eq!(q.len(), d.len());
                proptest::prop_assert_eq!(q.is_empty(), d.is_empty());
                proptest::prop_assert_eq!(q.front(), d.front());
                proptest::prop_assert!(q.iter().eq(d.iter()));
            }
        }
    }

    #[test]
    fn the_flow_record_stays_small() {
        // What every flow of a capture holds (issue 39: 480 bytes before, 384 on 2026-12-06,
        // 320 on 2026-12-07): a field added here costs 200 kB at 100,000 QPs, so growing it
        // should be a decision.
        assert_eq!(std::mem::size_of::<Bins>(), 72);
        assert_eq!(std::mem::size_of::<FlowFold>(), 32);
        assert!(std::mem::size_of::<Flow>() <= FLOW_BYTES, "{} bytes", std::mem::size_of::<Flow>());
        assert_eq!(std::mem::size_of::<OpcodeCounts>(), 32);
        assert_eq!(std::mem::size_of::<AckReqs>(), 8);
        assert_eq!(std::mem::size_of::<AckQueue>(), 32);
        // The queue and the latency's box: 40 bytes, a 48-byte allocation; the latency 40
        // more, a 48-byte one (one box of 88 bytes took 96).
        assert_eq!(std::mem::size_of::<AckState>(), 40);
        assert_eq!(std::mem::size_of::<Latency>(), 40);
    }
}
