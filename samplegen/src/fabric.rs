//! A tiny model of a RoCE fabric that emits frames with the decoder's emitters and records,
//! by construction, what an analyzer must find in them (the expected answers).

use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::{AethRepr, NakCode, RethRepr};
use rocescope_decoder::mac_control::{Pause, Pfc};
use rocescope_decoder::{BthRepr, Ecn, Opcode, OpcodeOptions, VlanTag};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// 2026-01-01T00:00:00Z: every sample starts here.
pub const EPOCH_NS: i64 = 1_767_225_600_000_000_000;

/// One end of a connection.
#[derive(Clone, Copy, Debug)]
pub struct Host {
    pub mac: [u8; 6],
    pub ip: IpAddr,
}

impl Host {
    pub fn v4(n: u8) -> Host {
        Host { mac: [0x02, 0, 0, 0, 0, n], ip: IpAddr::from([10, 0, 0, n]) }
    }
    pub fn v6(n: u8) -> Host {
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[15] = n;
        Host { mac: [0x02, 0, 0, 0, 0x66, n], ip: IpAddr::from(a) }
    }
}

/// An RC connection: `a` is the requester, `b` the responder.
#[derive(Clone, Debug)]
pub struct Conn {
    pub a: Host,
    pub b: Host,
    pub a_qpn: u32,
    pub b_qpn: u32,
    /// Next request PSN.
    pub psn: u32,
    /// Responder's message sequence number.
    pub msn: u32,
    pub dscp: u8,
    pub ecn: Ecn,
    /// VLAN (id, pcp) of this connection's frames.
    pub vlan: Option<(u16, u8)>,
    pub sport: u16,
    pub pmtu: usize,
}

impl Conn {
    pub fn new(a: Host, b: Host, a_qpn: u32, b_qpn: u32, psn: u32) -> Conn {
        Conn {
            a,
            b,
            a_qpn,
            b_qpn,
            psn: psn & 0xFF_FFFF,
            msn: 0,
            dscp: 26,
            ecn: Ecn::Ect0,
            vlan: None,
            sport: 49152 + (a_qpn & 0x3FFF) as u16,
            pmtu: 1024,
        }
    }
}

/// Expected per-flow figures (one direction of a QP: src, dst, destination QP).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowExpect {
    pub src: String,
    pub dst: String,
    pub dest_qp: u32,
    pub packets: u64,
    pub payload_bytes: u64,
    pub ecn_ce: u64,
    pub acks: u64,
    pub naks_psn_seq_err: u64,
    pub naks_other: u64,
    pub rnr_naks: u64,
    pub cnps: u64,
    /// Request packets sent again (PSN at or behind the highest seen).
    pub retransmits: u64,
    /// Of those, sent again because a NAK (sequence error or RNR) asked for it.
    pub retransmits_nak: u64,
    /// Of those, sent again with no NAK pending: the requester's ACK timeout fired.
    pub retransmits_timeout: u64,
    /// PSN gaps in the request stream, and the PSNs missing in them.
    pub gaps: u64,
    pub missing_psns: u64,
    /// Gaps never followed by a NAK or a retransmission: lost by the capture, not the network.
    pub capture_loss_gaps: u64,
    /// Of the resends, those a NAK for a late packet provoked (needless).
    #[serde(skip_serializing_if = "is_zero")]
    pub retransmits_spurious: u64,
    /// READ requests re-issued after out-of-sequence responses (implied NAK).
    #[serde(skip_serializing_if = "is_zero")]
    pub retransmits_implied: u64,
    /// Resends with no NAK in the capture and too soon for a timeout.
    #[serde(skip_serializing_if = "is_zero")]
    pub retransmits_unknown: u64,
    /// Packets that arrived after later PSNs and were not resent.
    #[serde(skip_serializing_if = "is_zero")]
    pub out_of_order: u64,
    /// NAKs for packets that arrived late after all.
    #[serde(skip_serializing_if = "is_zero")]
    pub spurious_naks: u64,
    pub dscp: Vec<u8>,
    pub pcp: Vec<u8>,
}

/// A finding the report must give (transport samples list all of theirs).
#[derive(Clone, Debug, Serialize)]
pub struct FindingExpect {
    pub kind: &'static str,
    pub severity: &'static str,
    /// The destination QP of the flow it is about (none for capture-wide findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_qp: Option<u32>,
}

/// Something in the capture a reader should find, by frame number (1-based).
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub frame: usize,
    pub what: &'static str,
    pub detail: String,
}

/// Decode-level expectations.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub frames: u64,
    pub roce_v2: u64,
    pub roce_v1: u64,
    pub cnp: u64,
    pub pfc: u64,
    pub pause: u64,
    pub icrc_valid: u64,
    pub icrc_invalid: u64,
    pub icrc_truncated: u64,
    pub malformed: u64,
    pub opcodes: BTreeMap<String, u64>,
    /// Second copies of packets a mirror put in the capture twice: a report leaves them
    /// out (`summary.duplicates`).
    #[serde(skip_serializing_if = "is_zero")]
    pub mirror_duplicates: u64,
    /// Of those, CNPs.
    #[serde(skip_serializing_if = "is_zero")]
    pub mirror_duplicate_cnps: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A frame as written to the capture.
#[derive(Clone, Debug)]
pub struct Frame {
    pub ts_ns: i64,
    pub data: Vec<u8>,
    /// Length on the wire (the record's original length).
    pub len: u32,
    /// Bytes kept in the capture (snap length).
    pub snap: usize,
}

/// Builds one sample capture.
#[derive(Debug, Default)]
pub struct Gen {
    pub t: i64,
    pub frames: Vec<Frame>,
    pub events: Vec<Event>,
    pub counts: Counts,
    pub flows: BTreeMap<(String, String, u32), FlowExpect>,
    /// PFC/PAUSE expectations: (src MAC, kind, priority) -> (pause frames, XON frames, quanta).
    pub pauses: BTreeMap<(String, &'static str, u8), (u64, u64, u64)>,
    /// Findings the report must give, when the sample states them all.
    pub findings: Vec<FindingExpect>,
    /// An 802.1ad S-tag (VLAN, PCP) put outside every RoCE frame's own tags while set: the
    /// capture is on a QinQ trunk.
    pub s_tag: Option<(u16, u8)>,
    /// While set, each IPv4 sender numbers its packets (the IP identification, from 1), as
    /// RoCE NICs do; otherwise it is 0.
    pub ip_ids: Option<BTreeMap<IpAddr, u16>>,
    /// IPv4 senders that put one constant in every packet's identification (RFC 6864
    /// allows any value in a DF datagram's), whatever `ip_ids` says.
    pub ip_id_fixed: BTreeMap<IpAddr, u16>,
    /// How far the clock moves after each frame (default 800 ns).
    pub frame_gap_ns: Option<i64>,
    /// While set, RoCE frames are kept to this many bytes, as a capture with a snap length
    /// keeps them (a frame's own snap, when given, wins).
    pub snap: Option<usize>,
}

pub const OPTS: OpcodeOptions = OpcodeOptions { dc: true };

fn vlans(v: Option<(u16, u8)>) -> Vec<VlanTag> {
    v.map(|(vid, pcp)| vec![VlanTag { tpid: 0x8100, pcp, dei: false, vid }]).unwrap_or_default()
}

fn ip(src: Host, dst: Host, dscp: u8, ecn: Ecn) -> IpRepr {
    match (src.ip, dst.ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => IpRepr::V4 { src: s, dst: d, dscp, ecn, ttl: 64, id: 0 },
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            IpRepr::V6 { src: s, dst: d, dscp, ecn, hop_limit: 64, flow_label: 0 }
        }
        _ => panic!("mixed address families"),
    }
}

/// How a request packet is labelled in the expectations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Req {
    /// First transmission.
    New,
    /// Sent again after a NAK (go-back-N, or the retry after an RNR NAK).
    RetransmitNak,
    /// Sent again after the ACK timeout, with no NAK pending.
    RetransmitTimeout,
}

impl Gen {
    pub fn new() -> Gen {
        Gen { t: EPOCH_NS, ..Default::default() }
    }

    /// Advance the clock.
    pub fn wait_us(&mut self, us: i64) {
        self.t += us * 1000;
    }
    pub fn wait_ns(&mut self, ns: i64) {
        self.t += ns;
    }

    pub fn event(&mut self, what: &'static str, detail: String) {
        let frame = self.frames.len();
        self.events.push(Event { frame, what, detail });
    }

    pub fn flow(&mut self, src: Host, dst: Host, dqpn: u32) -> &mut FlowExpect {
        let key = (src.ip.to_string(), dst.ip.to_string(), dqpn);
        self.flows.entry(key.clone()).or_insert_with(|| FlowExpect {
            src: key.0,
            dst: key.1,
            dest_qp: dqpn,
            ..Default::default()
        })
    }

    /// Expect a finding.
    pub fn expect_finding(&mut self, kind: &'static str, severity: &'static str, dest_qp: Option<u32>) {
        self.findings.push(FindingExpect { kind, severity, dest_qp });
    }

    fn push_raw(&mut self, data: Vec<u8>, snap: usize) {
        let len = data.len() as u32;
        self.frames.push(Frame { ts_ns: self.t, data, len, snap });
        self.counts.frames += 1;
        self.wait_ns(self.frame_gap_ns.unwrap_or(800));
    }

    /// Emit a RoCEv2 packet from `src` to `dst` and account for it.
    #[allow(clippy::too_many_arguments)]
    pub fn roce(
        &mut self,
        src: Host,
        dst: Host,
        vlan: Option<(u16, u8)>,
        dscp: u8,
        ecn: Ecn,
        sport: u16,
        bth: BthRepr,
        ext: ExtRepr,
        payload_len: usize,
        icrc: IcrcMode,
        snap: Option<usize>,
    ) {
        let payload: Vec<u8> = (0..payload_len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(7)).collect();
        let mut f =
            RoceV2Frame::new(src.mac, dst.mac, ip(src, dst, dscp, ecn), IbRepr { bth, ext, payload, icrc });
        f.vlans = vlans(vlan);
        if let (Some(ids), IpRepr::V4 { id, .. }) = (&mut self.ip_ids, &mut f.ip) {
            let next = ids.entry(src.ip).or_insert(0);
            *next = next.wrapping_add(1);
            *id = *next;
        }
        if let (Some(&fixed), IpRepr::V4 { id, .. }) = (self.ip_id_fixed.get(&src.ip), &mut f.ip) {
            *id = fixed;
        }
        if let Some((vid, pcp)) = self.s_tag {
            f.vlans.insert(0, VlanTag { tpid: 0x88A8, pcp, dei: false, vid });
        }
        f.sport = sport;
        self.roce_frame(&f, snap.or(self.snap));
    }

    /// Emit a built RoCEv2 frame and account for it (flows keyed by its IP header).
    pub fn roce_frame(&mut self, f: &RoceV2Frame, snap: Option<usize>) {
        let data = f.build(OPTS);
        let snap = snap.unwrap_or(data.len()).min(data.len());
        let bth = f.ib.bth;
        let (src, dst, dscp, ecn) = match f.ip {
            IpRepr::V4 { src, dst, dscp, ecn, .. } => (IpAddr::V4(src), IpAddr::V4(dst), dscp, ecn),
            IpRepr::V6 { src, dst, dscp, ecn, .. } => (IpAddr::V6(src), IpAddr::V6(dst), dscp, ecn),
        };
        self.counts.roce_v2 += 1;
        *self.counts.opcodes.entry(bth.opcode.name(OPTS).to_string()).or_default() += 1;
        if bth.opcode == Opcode::CNP {
            self.counts.cnp += 1;
        }
        match (snap < data.len(), f.ib.icrc) {
            (true, _) => self.counts.icrc_truncated += 1,
            (false, IcrcMode::Correct) => self.counts.icrc_valid += 1,
            (false, IcrcMode::Corrupt) => self.counts.icrc_invalid += 1,
        }
        let key = (src.to_string(), dst.to_string(), bth.dest_qp);
        let fl = self.flows.entry(key.clone()).or_insert_with(|| FlowExpect {
            src: key.0,
            dst: key.1,
            dest_qp: bth.dest_qp,
            ..Default::default()
        });
        fl.packets += 1;
        fl.payload_bytes += f.ib.payload.len() as u64;
        if ecn == Ecn::Ce {
            fl.ecn_ce += 1;
        }
        if !fl.dscp.contains(&dscp) {
            fl.dscp.push(dscp);
        }
        // A QinQ frame's PCP is its outer tag's: the S-tag a switch on a QinQ trunk
        // classifies on (IEEE 802.1ad), as the analyzer reads it by default (--pcp-tag).
        if let Some(pcp) = f.vlans.first().map(|t| t.pcp) {
            if !fl.pcp.contains(&pcp) {
                fl.pcp.push(pcp);
            }
        }
        if bth.opcode == Opcode::CNP {
            fl.cnps += 1;
        }
        self.push_raw(data, snap);
    }

    /// A request packet on `c` (requester to responder) with the next PSN. Returns it.
    pub fn request(
        &mut self,
        c: &mut Conn,
        op: Opcode,
        ext: ExtRepr,
        len: usize,
        ackreq: bool,
        kind: Req,
    ) -> u32 {
        let psn = c.psn;
        c.psn = (c.psn + 1) & 0xFF_FFFF;
        let bth = BthRepr { opcode: op, dest_qp: c.b_qpn, psn, ack_req: ackreq, ..Default::default() };
        self.roce(c.a, c.b, c.vlan, c.dscp, c.ecn, c.sport, bth, ext, len, IcrcMode::Correct, None);
        let f = self.flow(c.a, c.b, c.b_qpn);
        match kind {
            Req::New => {}
            Req::RetransmitNak => {
                f.retransmits += 1;
                f.retransmits_nak += 1;
            }
            Req::RetransmitTimeout => {
                f.retransmits += 1;
                f.retransmits_timeout += 1;
            }
        }
        psn
    }

    /// A packet the network loses: it takes a PSN but never reaches the capture.
    pub fn lose(&mut self, c: &mut Conn) -> u32 {
        let psn = c.psn;
        c.psn = (c.psn + 1) & 0xFF_FFFF;
        psn
    }

    /// Record a gap of `missing` PSNs in `c`'s request stream.
    pub fn expect_gap(&mut self, c: &Conn, missing: u64, capture_loss: bool) {
        let f = self.flow(c.a, c.b, c.b_qpn);
        f.gaps += 1;
        f.missing_psns += missing;
        if capture_loss {
            f.capture_loss_gaps += 1;
        }
    }

    /// A response packet on `c` (responder to requester) with the given AETH.
    pub fn respond(&mut self, c: &mut Conn, op: Opcode, psn: u32, aeth: Option<AethRepr>, len: usize) {
        let bth = BthRepr { opcode: op, dest_qp: c.a_qpn, psn, ..Default::default() };
        let ext = ExtRepr { aeth, ..Default::default() };
        // Responses use the connection's class too; responders mark ECT like requesters.
        self.roce(c.b, c.a, c.vlan, c.dscp, c.ecn, c.sport ^ 1, bth, ext, len, IcrcMode::Correct, None);
        if let Some(a) = aeth {
            let f = self.flow(c.b, c.a, c.a_qpn);
            match a.kind() {
                rocescope_decoder::ext::AethKind::Ack => {
                    if op == Opcode::RC_ACKNOWLEDGE {
                        f.acks += 1
                    }
                }
                rocescope_decoder::ext::AethKind::RnrNak => f.rnr_naks += 1,
                rocescope_decoder::ext::AethKind::Nak => {
                    if a.nak_code() == Some(NakCode::PSN_SEQUENCE_ERROR) {
                        f.naks_psn_seq_err += 1
                    } else {
                        f.naks_other += 1
                    }
                }
                rocescope_decoder::ext::AethKind::Reserved => {}
            }
        }
    }

    /// ACK covering `psn`.
    pub fn ack(&mut self, c: &mut Conn, psn: u32) {
        let msn = c.msn;
        self.respond(c, Opcode::RC_ACKNOWLEDGE, psn, Some(AethRepr::ack(msn)), 0);
    }

    /// A whole RDMA WRITE of `len` bytes (First/Middle/Last or Only), AckReq on the last
    /// packet, then the responder's ACK. Returns the PSN of the last packet.
    pub fn write(&mut self, c: &mut Conn, len: usize, ack: bool) -> u32 {
        let n = len.div_ceil(c.pmtu).max(1);
        let reth =
            RethRepr { va: 0x7f00_0000_0000 + u64::from(c.psn) * 4096, rkey: 0x1234, dma_len: len as u32 };
        let mut last = 0;
        for i in 0..n {
            let chunk = if i + 1 == n { len - i * c.pmtu } else { c.pmtu };
            let (op, ext) = match (n, i) {
                (1, _) => (Opcode::RC_WRITE_ONLY, ExtRepr { reth: Some(reth), ..Default::default() }),
                (_, 0) => (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() }),
                (_, i) if i + 1 == n => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
                _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
            };
            last = self.request(c, op, ext, chunk, i + 1 == n, Req::New);
            self.wait_ns(300);
        }
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        if ack {
            self.wait_us(3);
            self.ack(c, last);
        }
        last
    }

    /// A SEND of `len` bytes, then the ACK.
    pub fn send(&mut self, c: &mut Conn, len: usize) -> u32 {
        let n = len.div_ceil(c.pmtu).max(1);
        let mut last = 0;
        for i in 0..n {
            let chunk = if i + 1 == n { len - i * c.pmtu } else { c.pmtu };
            let op = match (n, i) {
                (1, _) => Opcode::RC_SEND_ONLY,
                (_, 0) => Opcode::RC_SEND_FIRST,
                (_, i) if i + 1 == n => Opcode::RC_SEND_LAST,
                _ => Opcode::RC_SEND_MIDDLE,
            };
            last = self.request(c, op, ExtRepr::default(), chunk, i + 1 == n, Req::New);
            self.wait_ns(300);
        }
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        self.wait_us(3);
        self.ack(c, last);
        last
    }

    /// A READ request on `c` with PSN `psn` (the connection's next PSN untouched).
    pub fn read_request(&mut self, c: &Conn, psn: u32, reth: RethRepr) {
        let bth = BthRepr {
            opcode: Opcode::RC_READ_REQUEST,
            dest_qp: c.b_qpn,
            psn,
            ack_req: true,
            ..Default::default()
        };
        let ext = ExtRepr { reth: Some(reth), ..Default::default() };
        self.roce(c.a, c.b, c.vlan, c.dscp, c.ecn, c.sport, bth, ext, 0, IcrcMode::Correct, None);
    }

    /// An RDMA READ of `len` bytes: the request reserves ceil(len / PMTU) PSNs and the
    /// responder answers with READ Response First/Middle/Last (or Only) on those PSNs.
    pub fn read(&mut self, c: &mut Conn, len: usize) {
        let n = len.div_ceil(c.pmtu).max(1);
        let psn = c.psn;
        let reth =
            RethRepr { va: 0x7e00_0000_0000 + u64::from(psn) * 4096, rkey: 0x5678, dma_len: len as u32 };
        self.read_request(c, psn, reth);
        c.psn = (c.psn + n as u32) & 0xFF_FFFF;
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        self.wait_us(4);
        for i in 0..n {
            let chunk = if i + 1 == n { len - i * c.pmtu } else { c.pmtu };
            let (op, aeth) = match (n, i) {
                (1, _) => (Opcode::RC_READ_RESPONSE_ONLY, Some(AethRepr::ack(c.msn))),
                (_, 0) => (Opcode::RC_READ_RESPONSE_FIRST, Some(AethRepr::ack(c.msn))),
                (_, i) if i + 1 == n => (Opcode::RC_READ_RESPONSE_LAST, Some(AethRepr::ack(c.msn))),
                _ => (Opcode::RC_READ_RESPONSE_MIDDLE, None),
            };
            self.respond(c, op, (psn + i as u32) & 0xFF_FFFF, aeth, chunk);
            self.wait_ns(300);
        }
    }

    /// A CNP from `np` (the notification point, receiver of CE-marked data) to the data
    /// sender's QP `sender_qpn` on host `rp`.
    pub fn cnp(&mut self, np: Host, rp: Host, sender_qpn: u32, dscp: u8, vlan: Option<(u16, u8)>) {
        let bth =
            BthRepr { opcode: Opcode::CNP, becn: true, dest_qp: sender_qpn, psn: 0, ..Default::default() };
        self.roce(np, rp, vlan, dscp, Ecn::NotEct, 0, bth, ExtRepr::default(), 0, IcrcMode::Correct, None);
    }

    /// A PFC frame from `src` with per-priority quanta for the enabled priorities.
    pub fn pfc(&mut self, src: [u8; 6], enable: u8, quanta: [u16; 8], vlan: Option<(u16, u8)>) {
        let pfc = Pfc { enable_vector: u16::from(enable), quanta, bad_dst: false };
        let data = rocescope_decoder::build::pfc_frame(src, None, &vlans(vlan), &pfc);
        self.counts.pfc += 1;
        let mac = rocescope_decoder::link::mac_string(&src);
        for p in 0..8u8 {
            if enable & (1 << p) != 0 {
                let q = quanta[usize::from(p)];
                let e = self.pauses.entry((mac.clone(), "pfc", p)).or_default();
                if q == 0 {
                    e.1 += 1;
                } else {
                    e.0 += 1;
                    e.2 += u64::from(q);
                }
            }
        }
        self.push_raw(data, usize::MAX);
    }

    /// An 802.3x PAUSE frame.
    pub fn pause(&mut self, src: [u8; 6], quanta: u16) {
        let data = rocescope_decoder::build::pause_frame(src, None, &Pause { quanta, bad_dst: false });
        self.counts.pause += 1;
        let mac = rocescope_decoder::link::mac_string(&src);
        let e = self.pauses.entry((mac, "pause", 0)).or_default();
        if quanta == 0 {
            e.1 += 1;
        } else {
            e.0 += 1;
            e.2 += u64::from(quanta);
        }
        self.push_raw(data, usize::MAX);
    }

    /// A frame the decoder must report as malformed (e.g. cut inside a header that the
    /// IP/UDP lengths say is complete).
    pub fn raw_malformed(&mut self, data: Vec<u8>) {
        self.counts.malformed += 1;
        self.push_raw(data, usize::MAX);
    }

    /// A RoCEv1 frame.
    pub fn v1(&mut self, f: &rocescope_decoder::build::RoceV1Frame) {
        self.counts.roce_v1 += 1;
        self.counts.icrc_valid += 1;
        *self.counts.opcodes.entry(f.ib.bth.opcode.name(OPTS).to_string()).or_default() += 1;
        let data = f.build(OPTS);
        self.push_raw(data, usize::MAX);
    }
}

impl Gen {
    /// The capture as a mirror of both ports of a routed path shows it: every IPv4 RoCE
    /// frame twice, the second copy (taken on the way out) `delay_ns` later with its TTL one
    /// lower, its IP checksum fixed and, where `mark` says so, CE set by the switch. The ICRC
    /// masks both fields (reference §1.6), so it stays valid. Frames are put back in time
    /// order and every event's frame number follows its frame. Returns the copies made.
    pub fn mirror_both_ports(&mut self, delay_ns: i64, mark: impl Fn(usize) -> bool) -> u64 {
        let mut all: Vec<(i64, usize, bool, Frame)> = Vec::new();
        let mut copies = 0;
        for (i, f) in std::mem::take(&mut self.frames).into_iter().enumerate() {
            let d = rocescope_decoder::decode(
                rocescope_decoder::LinkType::ETHERNET,
                &f.data,
                &Default::default(),
            );
            let copy = match (&d.ip, d.roce_ok()) {
                (Some(rocescope_decoder::Ip::V4(h)), Some(r)) => {
                    let at = h.slice().as_ptr() as usize - f.data.as_ptr() as usize;
                    let mut data = f.data.clone();
                    if let Some(ttl) = data.get_mut(at + 8) {
                        *ttl -= 1;
                    }
                    if mark(i) {
                        if let Some(tos) = data.get_mut(at + 1) {
                            *tos |= 3;
                        }
                    }
                    ipv4_checksum(&mut data, at);
                    let name = r.bth.opcode().name(OPTS).to_string();
                    *self.counts.opcodes.entry(name).or_default() += 1;
                    if r.bth.opcode() == Opcode::CNP {
                        self.counts.cnp += 1;
                        self.counts.mirror_duplicate_cnps += 1;
                    }
                    Some(Frame { ts_ns: f.ts_ns + delay_ns, data, ..f.clone() })
                }
                _ => None,
            };
            all.push((f.ts_ns, i, false, f));
            if let Some(c) = copy {
                copies += 1;
                all.push((c.ts_ns, i, true, c));
            }
        }
        all.sort_by_key(|(ts, i, copy, _)| (*ts, *i, *copy));
        let mut new_number = vec![0usize; all.len()];
        for (n, (_, i, copy, _)) in all.iter().enumerate() {
            if !copy {
                if let Some(slot) = new_number.get_mut(*i) {
                    *slot = n + 1;
                }
            }
        }
        for e in &mut self.events {
            e.frame = new_number.get(e.frame.wrapping_sub(1)).copied().unwrap_or(e.frame);
        }
        self.frames = all.into_iter().map(|(_, _, _, f)| f).collect();
        self.counts.frames += copies;
        self.counts.roce_v2 += copies;
        self.counts.icrc_valid += copies;
        self.counts.mirror_duplicates += copies;
        copies
    }
}

/// Recompute the IPv4 header checksum of the header at `at` in `data`.
fn ipv4_checksum(data: &mut [u8], at: usize) {
    let Some(&vihl) = data.get(at) else { return };
    let len = usize::from(vihl & 0x0F) * 4;
    if let Some(h) = data.get_mut(at + 10..at + 12) {
        h.copy_from_slice(&[0, 0]);
    }
    let Some(h) = data.get(at..at + len) else { return };
    let mut sum: u32 =
        h.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    if let Some(c) = data.get_mut(at + 10..at + 12) {
        c.copy_from_slice(&(!(sum as u16)).to_be_bytes());
    }
}
