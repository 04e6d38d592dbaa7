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
        match *self {
            IpRepr::V4 { src, dst, dscp, ecn, ttl, id } => {
                let len = u16::try_from(udp_len).unwrap_or(u16::MAX);
                let mut h =
                    Ipv4Header::new(len, ttl, IpNumber::UDP, src.octets(), dst.octets()).unwrap_or_default();
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
                    next_header: IpNumber::UDP,
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
