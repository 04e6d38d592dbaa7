//! Emitting whole frames from `Repr`s: used by tests, the sample generator and library
//! users who need RoCE traffic. The ICRC is computed with the same code the decoder checks.

use crate::bth::BthRepr;
use crate::ext::*;
use crate::grh::{GrhRepr, NXTHDR_IBA};
use crate::icrc::{icrc_v1, icrc_v2};
use crate::ip::Ecn;
use crate::link::{ethertype, EthernetRepr, VlanTag};
use crate::mac_control::{Pause, Pfc, PAUSE_DST};
use crate::opcode::{ExtKind, OpcodeOptions};
use crate::packet::ROCE_V2_PORT;
use core::net::{Ipv4Addr, Ipv6Addr};
use etherparse::{IpDscp, IpEcn, IpNumber, Ipv4Header, Ipv6FlowLabel, Ipv6Header, UdpHeader};

/// An IP header to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpRepr {
    /// IPv4 without options.
    V4 {
        /// Source.
        src: Ipv4Addr,
        /// Destination.
        dst: Ipv4Addr,
        /// DSCP (6 bits).
        dscp: u8,
        /// ECN codepoint.
        ecn: Ecn,
        /// TTL.
        ttl: u8,
        /// Identification.
        id: u16,
    },
    /// IPv6 without extension headers.
    V6 {
        /// Source.
        src: Ipv6Addr,
        /// Destination.
        dst: Ipv6Addr,
        /// DSCP (6 bits).
        dscp: u8,
        /// ECN codepoint.
        ecn: Ecn,
        /// Hop limit.
        hop_limit: u8,
        /// Flow label (20 bits).
        flow_label: u32,
    },
}

impl IpRepr {
    fn ethertype(&self) -> u16 {
        match self {
            IpRepr::V4 { .. } => ethertype::IPV4,
            IpRepr::V6 { .. } => ethertype::IPV6,
        }
    }

    /// Emit the header for a UDP datagram of `udp_len` bytes.
    fn emit(&self, udp_len: usize) -> Vec<u8> {
        self.emit_proto(udp_len, IpNumber::UDP)
    }

    /// Emit the header for a payload of `len` bytes of protocol `proto`.
    fn emit_proto(&self, payload_len: usize, proto: IpNumber) -> Vec<u8> {
        let udp_len = payload_len;
        match *self {
            IpRepr::V4 { src, dst, dscp, ecn, ttl, id } => {
                let len = u16::try_from(udp_len).unwrap_or(u16::MAX);
                let mut h = Ipv4Header::new(len, ttl, proto, src.octets(), dst.octets()).unwrap_or_default();
                h.dscp = IpDscp::try_new(dscp & 0x3F).unwrap_or_default();
                h.ecn = IpEcn::try_new(ecn as u8).unwrap_or_default();
                h.identification = id;
                h.dont_fragment = true;
                h.header_checksum = h.calc_header_checksum();
                h.to_bytes().to_vec()
            }
            IpRepr::V6 { src, dst, dscp, ecn, hop_limit, flow_label } => {
                let h = Ipv6Header {
                    traffic_class: (dscp << 2) | ecn as u8,
                    flow_label: Ipv6FlowLabel::try_new(flow_label & 0xF_FFFF).unwrap_or_default(),
                    payload_length: u16::try_from(udp_len).unwrap_or(u16::MAX),
                    next_header: proto,
                    hop_limit,
                    source: src.octets(),
                    destination: dst.octets(),
                };
                h.to_bytes().to_vec()
            }
        }
    }
}

/// Extended headers to emit. Headers the opcode needs but left `None` are written as zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ExtRepr {
    pub dceth: Option<DcEthRepr>,
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcEthRepr>,
    pub feth: Option<FethRepr>,
    pub reth: Option<RethRepr>,
    pub atomiceth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomicacketh: Option<AtomicAckEthRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
    pub cnp: Option<CnpBodyRepr>,
}

/// How the ICRC of an emitted packet is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IcrcMode {
    /// The correct value.
    #[default]
    Correct,
    /// The correct value with its bits flipped (a guaranteed mismatch).
    Corrupt,
}

/// The IB transport part of a packet: BTH, extended headers and payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IbRepr {
    /// BTH. `pad_count` is overwritten to pad the payload to a multiple of 4.
    pub bth: BthRepr,
    /// Extended headers (emitted in the order the opcode's layout gives).
    pub ext: ExtRepr,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// ICRC handling.
    pub icrc: IcrcMode,
}

impl IbRepr {
    /// Emit BTH, headers, payload and pad (no ICRC).
    pub fn emit_without_icrc(&self, opts: OpcodeOptions) -> Vec<u8> {
        let pad = (4 - self.payload.len() % 4) % 4;
        let mut bth = self.bth;
        bth.pad_count = pad as u8;
        let mut out = Vec::with_capacity(12 + 64 + self.payload.len() + pad);
        out.extend_from_slice(&bth.emit());
        let e = &self.ext;
        for kind in bth.opcode.layout(opts).headers.iter() {
            match kind {
                ExtKind::DcEth => out.extend_from_slice(&e.dceth.unwrap_or_default().emit()),
                ExtKind::Rdeth => out.extend_from_slice(&e.rdeth.unwrap_or_default().emit()),
                ExtKind::Deth => out.extend_from_slice(&e.deth.unwrap_or_default().emit()),
                ExtKind::XrcEth => out.extend_from_slice(&e.xrceth.unwrap_or_default().emit()),
                ExtKind::Feth => out.extend_from_slice(&e.feth.unwrap_or_default().emit()),
                ExtKind::Reth => out.extend_from_slice(&e.reth.unwrap_or_default().emit()),
                ExtKind::AtomicEth => out.extend_from_slice(&e.atomiceth.unwrap_or_default().emit()),
                ExtKind::Aeth => out.extend_from_slice(&e.aeth.unwrap_or_default().emit()),
                ExtKind::AtomicAckEth => out.extend_from_slice(&e.atomicacketh.unwrap_or_default().emit()),
                ExtKind::ImmDt => out.extend_from_slice(&e.immdt.unwrap_or_default().emit()),
                ExtKind::Ieth => out.extend_from_slice(&e.ieth.unwrap_or_default().emit()),
                ExtKind::CnpBody => out.extend_from_slice(&e.cnp.unwrap_or_default().emit()),
            }
        }
        out.extend_from_slice(&self.payload);
        out.resize(out.len() + pad, 0);
        out
    }

    fn finish(&self, crc: u32, out: &mut Vec<u8>) {
        let v = match self.icrc {
            IcrcMode::Correct => crc,
            IcrcMode::Corrupt => !crc,
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A complete RoCEv2 frame: Ethernet, optional VLAN tags, IPv4/IPv6, UDP, IB transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoceV2Frame {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// VLAN tags, outermost first.
    pub vlans: Vec<VlanTag>,
    /// IP header.
    pub ip: IpRepr,
    /// UDP source port (entropy for ECMP).
    pub sport: u16,
    /// UDP destination port (4791).
    pub dport: u16,
    /// IB transport.
    pub ib: IbRepr,
}

impl RoceV2Frame {
    /// A frame with default ports between two IPv4 hosts.
    pub fn new(src_mac: [u8; 6], dst_mac: [u8; 6], ip: IpRepr, ib: IbRepr) -> Self {
        RoceV2Frame { src_mac, dst_mac, vlans: Vec::new(), ip, sport: 49152, dport: ROCE_V2_PORT, ib }
    }

    /// Emit the frame (no Ethernet FCS).
    pub fn build(&self, opts: OpcodeOptions) -> Vec<u8> {
        let ib = self.ib.emit_without_icrc(opts);
        let udp_len = 8 + ib.len() + 4;
        let ip = self.ip.emit(udp_len);
        let udp = UdpHeader {
            source_port: self.sport,
            destination_port: self.dport,
            length: u16::try_from(udp_len).unwrap_or(u16::MAX),
            checksum: 0,
        }
        .to_bytes();
        let crc = icrc_v2(&ip, &udp, &ib);
        let mut out = l2(self.src_mac, self.dst_mac, &self.vlans, self.ip.ethertype());
        out.extend_from_slice(&ip);
        out.extend_from_slice(&udp);
        out.extend_from_slice(&ib);
        self.ib.finish(crc, &mut out);
        out
    }
}

/// A complete RoCEv1 frame: Ethernet (EtherType 0x8915), GRH, IB transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoceV1Frame {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// VLAN tags.
    pub vlans: Vec<VlanTag>,
    /// Source GID.
    pub sgid: Ipv6Addr,
    /// Destination GID.
    pub dgid: Ipv6Addr,
    /// Traffic class.
    pub tclass: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// IB transport.
    pub ib: IbRepr,
}

impl RoceV1Frame {
    /// Emit the frame.
    pub fn build(&self, opts: OpcodeOptions) -> Vec<u8> {
        let ib = self.ib.emit_without_icrc(opts);
        let grh = GrhRepr {
            tclass: self.tclass,
            flow_label: 0,
            paylen: u16::try_from(ib.len() + 4).unwrap_or(u16::MAX),
            nxthdr: NXTHDR_IBA,
            hoplmt: self.hop_limit,
            sgid: self.sgid,
            dgid: self.dgid,
        }
        .emit();
        let crc = icrc_v1(&grh, &ib);
        let mut out = l2(self.src_mac, self.dst_mac, &self.vlans, ethertype::ROCE_V1);
        out.extend_from_slice(&grh);
        out.extend_from_slice(&ib);
        self.ib.finish(crc, &mut out);
        out
    }
}

fn l2(src: [u8; 6], dst: [u8; 6], vlans: &[VlanTag], inner: u16) -> Vec<u8> {
    let first = vlans.first().map(|t| t.tpid).unwrap_or(inner);
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(&EthernetRepr { dst, src, ethertype: first }.emit());
    for (i, t) in vlans.iter().enumerate() {
        out.extend_from_slice(&t.emit_tci());
        let next = vlans.get(i + 1).map(|n| n.tpid).unwrap_or(inner);
        out.extend_from_slice(&next.to_be_bytes());
    }
    out
}

/// A PFC frame (to 01:80:c2:00:00:01 unless `dst` says otherwise), 60 bytes without FCS
/// plus 4 per VLAN tag.
pub fn pfc_frame(src: [u8; 6], dst: Option<[u8; 6]>, vlans: &[VlanTag], pfc: &Pfc) -> Vec<u8> {
    let mut out = l2(src, dst.unwrap_or(PAUSE_DST), vlans, ethertype::MAC_CONTROL);
    out.extend_from_slice(&pfc.emit_payload());
    out
}

/// An 802.3x PAUSE frame.
pub fn pause_frame(src: [u8; 6], dst: Option<[u8; 6]>, pause: &Pause) -> Vec<u8> {
    let mut out = l2(src, dst.unwrap_or(PAUSE_DST), &[], ethertype::MAC_CONTROL);
    out.extend_from_slice(&pause.emit_payload());
    out
}

/// The outer headers of an encapsulation: Ethernet, VLAN tags and (except for MPLS, which
/// sits on Ethernet) an IP header whose protocol and length are filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outer {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// VLAN tags of the outer frame.
    pub vlans: Vec<VlanTag>,
    /// The outer IP header (ignored by MPLS).
    pub ip: IpRepr,
}

/// One MPLS label stack entry to emit (RFC 3032 §2.1); the S bit is set on the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MplsLabelRepr {
    /// Label (20 bits).
    pub label: u32,
    /// Traffic class (3 bits).
    pub tc: u8,
    /// Time to live.
    pub ttl: u8,
}

/// An encapsulation to wrap a frame in, with its header fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encapsulation {
    /// ERSPAN type I: GRE 0x88BE without sequence number, no ERSPAN header.
    ErspanI,
    /// ERSPAN type II: GRE 0x88BE with sequence number, 8-byte header
    /// (draft-foschiano-erspan-03 §4.2).
    ErspanII {
        /// GRE sequence number.
        seq: u32,
        /// VLAN (12 bits).
        vlan: u16,
        /// COS (3 bits).
        cos: u8,
        /// En (2 bits).
        encap: u8,
        /// T: truncated.
        truncated: bool,
        /// Session ID (10 bits).
        session_id: u16,
        /// Index (20 bits).
        index: u32,
    },
    /// ERSPAN type III: GRE 0x22EB with sequence number, 12-byte header, and the 8-byte
    /// platform-specific subheader when `platform` is set (draft-foschiano-erspan-03 §4.3).
    ErspanIII {
        /// GRE sequence number.
        seq: u32,
        /// VLAN (12 bits).
        vlan: u16,
        /// COS (3 bits).
        cos: u8,
        /// BSO (2 bits).
        bso: u8,
        /// T: truncated.
        truncated: bool,
        /// Session ID (10 bits).
        session_id: u16,
        /// Timestamp (low 32 bits).
        timestamp: u32,
        /// Security group tag.
        sgt: u16,
        /// P bit.
        p: bool,
        /// Hardware ID (6 bits).
        hw_id: u8,
        /// D: egress (true) or ingress.
        direction: bool,
        /// Gra: timestamp granularity (2 bits).
        granularity: u8,
        /// Platform subheader: platform ID (6 bits) and the 58 bits after it.
        platform: Option<(u8, u64)>,
    },
    /// GRE transparent Ethernet bridging (0x6558).
    Gretap {
        /// GRE key (K bit).
        key: Option<u32>,
        /// GRE sequence number (S bit).
        seq: Option<u32>,
    },
    /// L3 GRE: the frame's IP packet (its Ethernet header and tags dropped) in GRE 0x0800 or
    /// 0x86DD.
    Gre {
        /// GRE key (K bit).
        key: Option<u32>,
        /// GRE sequence number (S bit).
        seq: Option<u32>,
    },
    /// VXLAN (RFC 7348) in UDP.
    Vxlan {
        /// UDP source port.
        sport: u16,
        /// UDP destination port (4789).
        dport: u16,
        /// VNI (24 bits).
        vni: u32,
    },
    /// Geneve (RFC 8926) in UDP, carrying Ethernet (0x6558).
    Geneve {
        /// UDP source port.
        sport: u16,
        /// UDP destination port (6081).
        dport: u16,
        /// VNI (24 bits).
        vni: u32,
        /// Options: a multiple of 4 bytes, at most 252.
        options: Vec<u8>,
    },
    /// An Ethernet pseudowire over MPLS (RFC 4448) on the outer Ethernet, with or without the
    /// RFC 4385 control word.
    MplsEthernet {
        /// Labels, outermost first.
        labels: Vec<MplsLabelRepr>,
        /// Emit a control word (sequence number 0).
        control_word: bool,
    },
    /// The frame's IP packet under an MPLS label stack on the outer Ethernet.
    MplsIp {
        /// Labels, outermost first.
        labels: Vec<MplsLabelRepr>,
    },
}

/// A frame wrapped in an encapsulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunnelRepr {
    /// The outer headers.
    pub outer: Outer,
    /// The encapsulation.
    pub encap: Encapsulation,
}

/// The IP packet of an Ethernet frame (after its VLAN tags) and its EtherType.
fn ip_of_frame(frame: &[u8]) -> Option<(u16, &[u8])> {
    let mut off = 12;
    loop {
        let t = u16::from_be_bytes(*frame.get(off..)?.first_chunk::<2>()?);
        if ethertype::is_vlan(t) {
            off += 4;
            continue;
        }
        if matches!(t, ethertype::IPV4 | ethertype::IPV6) {
            return frame.get(off + 2..).map(|b| (t, b));
        }
        return None;
    }
}

fn gre(flags: u16, proto: u16, key: Option<u32>, seq: Option<u32>) -> Vec<u8> {
    let flags = flags
        | if key.is_some() { crate::tunnel::gre_field::KEY } else { 0 }
        | if seq.is_some() { crate::tunnel::gre_field::SEQ } else { 0 };
    let mut out = Vec::with_capacity(12);
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&proto.to_be_bytes());
    for v in [key, seq].into_iter().flatten() {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out
}

fn labels(l: &[MplsLabelRepr]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * l.len());
    for (i, e) in l.iter().enumerate() {
        let bottom = u32::from(i + 1 == l.len());
        let w = ((e.label & 0xF_FFFF) << 12) | (u32::from(e.tc & 7) << 9) | (bottom << 8) | u32::from(e.ttl);
        out.extend_from_slice(&w.to_be_bytes());
    }
    out
}

impl TunnelRepr {
    /// Wrap an Ethernet frame (without FCS). `None` for the L3 encapsulations (L3 GRE,
    /// MPLS with IP) when the frame does not carry IP.
    pub fn wrap(&self, frame: &[u8]) -> Option<Vec<u8>> {
        let o = &self.outer;
        let (payload, ip_proto): (Vec<u8>, Option<u8>) = match &self.encap {
            Encapsulation::ErspanI => ([gre(0, 0x88BE, None, None), frame.to_vec()].concat(), Some(47)),
            Encapsulation::ErspanII { seq, vlan, cos, encap, truncated, session_id, index } => {
                let mut h = gre(0, 0x88BE, None, Some(*seq));
                h.extend_from_slice(&((1u16 << 12) | (vlan & 0x0FFF)).to_be_bytes());
                let w = (u16::from(cos & 7) << 13)
                    | (u16::from(encap & 3) << 11)
                    | (u16::from(*truncated) << 10)
                    | (session_id & 0x3FF);
                h.extend_from_slice(&w.to_be_bytes());
                h.extend_from_slice(&(index & 0xF_FFFF).to_be_bytes());
                h.extend_from_slice(frame);
                (h, Some(47))
            }
            Encapsulation::ErspanIII {
                seq,
                vlan,
                cos,
                bso,
                truncated,
                session_id,
                timestamp,
                sgt,
                p,
                hw_id,
                direction,
                granularity,
                platform,
            } => {
                let mut h = gre(0, 0x22EB, None, Some(*seq));
                h.extend_from_slice(&((2u16 << 12) | (vlan & 0x0FFF)).to_be_bytes());
                let w = (u16::from(cos & 7) << 13)
                    | (u16::from(bso & 3) << 11)
                    | (u16::from(*truncated) << 10)
                    | (session_id & 0x3FF);
                h.extend_from_slice(&w.to_be_bytes());
                h.extend_from_slice(&timestamp.to_be_bytes());
                h.extend_from_slice(&sgt.to_be_bytes());
                let f = (u16::from(*p) << 15)
                    | (u16::from(hw_id & 0x3F) << 4)
                    | (u16::from(*direction) << 3)
                    | (u16::from(granularity & 3) << 1)
                    | u16::from(platform.is_some());
                h.extend_from_slice(&f.to_be_bytes());
                if let Some((id, info)) = platform {
                    let v = (u64::from(id & 0x3F) << 58) | (info & 0x03FF_FFFF_FFFF_FFFF);
                    h.extend_from_slice(&v.to_be_bytes());
                }
                h.extend_from_slice(frame);
                (h, Some(47))
            }
            Encapsulation::Gretap { key, seq } => {
                ([gre(0, 0x6558, *key, *seq), frame.to_vec()].concat(), Some(47))
            }
            Encapsulation::Gre { key, seq } => {
                let (t, ip) = ip_of_frame(frame)?;
                ([gre(0, t, *key, *seq), ip.to_vec()].concat(), Some(47))
            }
            Encapsulation::Vxlan { sport, dport, vni } => {
                let mut v = vec![0x08, 0, 0, 0];
                v.extend_from_slice(&((vni & 0xFF_FFFF) << 8).to_be_bytes());
                v.extend_from_slice(frame);
                (udp(*sport, *dport, &v), Some(17))
            }
            Encapsulation::Geneve { sport, dport, vni, options } => {
                let words = (options.len() / 4).min(63);
                let mut g = vec![words as u8, 0];
                g.extend_from_slice(&0x6558u16.to_be_bytes());
                g.extend_from_slice(&((vni & 0xFF_FFFF) << 8).to_be_bytes());
                g.extend_from_slice(options.get(..words * 4).unwrap_or(&[]));
                g.extend_from_slice(frame);
                (udp(*sport, *dport, &g), Some(17))
            }
            Encapsulation::MplsEthernet { labels: l, control_word } => {
                let mut m = labels(l);
                if *control_word {
                    m.extend_from_slice(&[0, 0, 0, 0]);
                }
                m.extend_from_slice(frame);
                (m, None)
            }
            Encapsulation::MplsIp { labels: l } => {
                let (_, ip) = ip_of_frame(frame)?;
                ([labels(l), ip.to_vec()].concat(), None)
            }
        };
        let mut out = match ip_proto {
            Some(proto) => {
                let mut out = l2(o.src_mac, o.dst_mac, &o.vlans, o.ip.ethertype());
                out.extend_from_slice(&o.ip.emit_proto(payload.len(), IpNumber(proto)));
                out
            }
            None => l2(o.src_mac, o.dst_mac, &o.vlans, ethertype::MPLS),
        };
        out.extend_from_slice(&payload);
        Some(out)
    }
}

/// A UDP header (checksum 0, allowed over IPv4 and for tunnels over IPv6, RFC 6935) and its
/// payload.
fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(8 + payload.len()).unwrap_or(u16::MAX);
    let mut out = UdpHeader { source_port: sport, destination_port: dport, length: len, checksum: 0 }
        .to_bytes()
        .to_vec();
    out.extend_from_slice(payload);
    out
}
