//! The fast path's classifier (issue 28; `reference/perf-design.md`): the common RoCEv2
//! frame read at fixed offsets into a small [`Common`] value, without building a
//! [`Packet`].
//!
//! The common frame: Ethernet, at most one VLAN tag, an IPv4 header without options (not a
//! fragment) or an IPv6 header whose next header is UDP, UDP to the RoCE port, an RC, UC or
//! RoCEv2 CNP opcode whose extended headers are at most a RETH, an AETH and an ImmDt (the
//! SENDs, WRITEs, READs, ACKs and CNPs of collective traffic), and every header whole in the
//! record (the payload may be cut by a snap length). Anything else gets `None`, and the
//! caller decodes the frame in full.
//!
//! The promise, property-tested against the decoder (`tests/never_panics.rs`) and asserted
//! by the decoder's fuzz target: for any bytes, [`classify`] returns exactly what
//! [`Common::of`] makes of [`crate::decode`]'s packet, `None` included.

use crate::ext::AethRepr;
use crate::icrc::{icrc_v2, Icrc, IcrcStatus};
use crate::link::{ethertype, LinkType};
use crate::opcode::{ExtKind, Opcode, OpcodeOptions, Transport};
use crate::packet::{DecodeOptions, Link, Packet, RoceVersion};
use crate::Ip;
use std::net::{IpAddr, Ipv4Addr};

/// What the analysis needs of a common RoCEv2 frame: the fields a full decode would give,
/// copied out (the value borrows nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Common {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// Ethernet destination.
    pub dst_mac: [u8; 6],
    /// The PCP of the frame's one VLAN tag; `None` untagged.
    pub pcp: Option<u8>,
    /// IP source.
    pub src: IpAddr,
    /// IP destination.
    pub dst: IpAddr,
    /// The TOS or traffic-class byte (DSCP and ECN).
    pub tos: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// IPv4 identification or IPv6 flow label ([`Ip::ident`]).
    pub ident: u32,
    /// IPv4 total length or IPv6 payload length, as the header states it.
    pub ip_len_field: u16,
    /// The frame's length by its headers: Ethernet and tag, plus the IP packet's declared
    /// length (reference §1.1: lengths from the IP/UDP fields, never from the record).
    pub declared_len: u32,
    /// UDP source port (the ECMP entropy).
    pub sport: u16,
    /// BTH opcode.
    pub opcode: Opcode,
    /// BTH destination QP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH AckReq.
    pub ack_req: bool,
    /// The RETH's DMA length, for opcodes with a RETH.
    pub reth_dma_len: Option<u32>,
    /// The AETH, for opcodes with one.
    pub aeth: Option<AethRepr>,
    /// Payload bytes by the UDP length (captured or not).
    pub payload_len: u32,
    /// The ICRC verdict, as the decoder gives it.
    pub icrc: Icrc,
}

/// Where the common opcodes' headers sit: one entry per opcode byte.
#[derive(Clone, Copy, Debug, Default)]
struct Shape {
    /// A common opcode.
    common: bool,
    /// Bytes of extended headers after the BTH.
    ext_len: u8,
    /// Offset of the RETH after the BTH.
    reth_at: Option<u8>,
    /// Offset of the AETH after the BTH.
    aeth_at: Option<u8>,
}

/// The 256 opcodes' shapes for `opts`, worked out once from the opcode table
/// ([`Opcode::layout`]).
fn shapes(opts: OpcodeOptions) -> &'static [Shape; 256] {
    static TABLES: std::sync::OnceLock<[[Shape; 256]; 2]> = std::sync::OnceLock::new();
    let [plain, dc] = TABLES.get_or_init(|| {
        let mut t = [[Shape::default(); 256]; 2];
        for (dc, table) in t.iter_mut().enumerate() {
            for (op, slot) in table.iter_mut().enumerate() {
                *slot = shape_of(Opcode(op as u8), OpcodeOptions { dc: dc == 1 });
            }
        }
        t
    });
    if opts.dc {
        dc
    } else {
        plain
    }
}

fn shape_of(op: Opcode, opts: OpcodeOptions) -> Shape {
    let layout = op.layout(opts);
    let transport_ok = matches!(op.transport(), Transport::Rc | Transport::Uc) || op == Opcode::CNP;
    let mut s = Shape { common: layout.known && transport_ok, ..Shape::default() };
    let mut at = 0u8;
    for kind in layout.headers.iter() {
        match kind {
            ExtKind::Reth => s.reth_at = Some(at),
            ExtKind::Aeth => s.aeth_at = Some(at),
            ExtKind::ImmDt | ExtKind::CnpBody => {}
            _ => s.common = false,
        }
        at += kind.size() as u8;
    }
    s.ext_len = at;
    s
}

/// The common frame's fields at fixed offsets, or `None` when the frame is not a common one
/// (see the module's documentation). Never panics. Inlined where it is called: no call per
/// frame (issue 39).
#[inline(always)]
pub fn classify(link_type: LinkType, data: &[u8], opts: &DecodeOptions) -> Option<Common> {
    if link_type != LinkType::ETHERNET {
        return None;
    }
    let eth: &[u8; 14] = data.first_chunk()?;
    let be16 = |at: usize| data.get(at..)?.first_chunk::<2>().map(|b| u16::from_be_bytes(*b));
    let mut off = 14;
    let mut etype = u16::from_be_bytes([eth[12], eth[13]]);
    let mut pcp = None;
    if ethertype::is_vlan(etype) {
        let tci = be16(14)?;
        pcp = Some((tci >> 13) as u8);
        etype = be16(16)?;
        off = 18;
    }
    let l2 = off;
    let (src, dst, tos, ttl, ident, len_field, declared, ip_hdr, udp) = match etype {
        ethertype::IPV4 => {
            // The IPv4 header, UDP and the BTH at fixed offsets, with one bounds check (a
            // common frame holds the three whole; a shorter one is no common frame).
            let (h, rest) = data.get(off..)?.first_chunk::<40>()?.split_first_chunk::<20>()?;
            let udp: &[u8; 8] = rest.first_chunk()?;
            let [vihl, tos, l0, l1, i0, i1, f0, f1, ttl, proto, _, _, ..] = *h;
            let total = u16::from_be_bytes([l0, l1]);
            // Version 4 without options, UDP, not a fragment (neither MF nor an offset), and
            // a total length that holds the header (else the decoder's error).
            if vihl != 0x45 || proto != 17 || u16::from_be_bytes([f0, f1]) & 0x3FFF != 0 || total < 20 {
                return None;
            }
            // The addresses as two words.
            let word =
                |at: usize| h.get(at..).and_then(|b| b.first_chunk::<4>()).map(|w| u32::from_be_bytes(*w));
            let (s, d) = (Ipv4Addr::from(word(12)?), Ipv4Addr::from(word(16)?));
            let ident = u32::from(u16::from_be_bytes([i0, i1]));
            (IpAddr::V4(s), IpAddr::V4(d), tos, ttl, ident, total, usize::from(total), &h[..], udp)
        }
        ethertype::IPV6 => {
            let (h, [v, c, f1, f2, l0, l1, _, hop], s, d) = crate::peek::ipv6_udp(data, off)?;
            let tos = (v << 4) | (c >> 4);
            let label = (u32::from(c & 0x0F) << 16) | (u32::from(f1) << 8) | u32::from(f2);
            let plen = u16::from_be_bytes([l0, l1]);
            let udp: &[u8; 8] = data.get(off + 40..)?.first_chunk()?;
            (IpAddr::V6(s), IpAddr::V6(d), tos, hop, label, plen, 40 + usize::from(plen), &h[..], udp)
        }
        _ => return None,
    };
    let uoff = off + ip_hdr.len();
    let [s0, s1, d0, d1, l0, l1, _, _] = *udp;
    let ulen = usize::from(u16::from_be_bytes([l0, l1]));
    if u16::from_be_bytes([d0, d1]) != opts.roce_port || ulen < 8 || uoff + ulen > off + declared {
        return None;
    }
    let start = uoff + 8;
    let end = uoff + ulen;
    let truncated = data.len() < end;
    let ib = data.get(start..end.min(data.len()))?;
    let bth: &[u8; 12] = ib.first_chunk()?;
    let op = Opcode(bth[0]);
    let shape = shapes(opts.opcode).get(usize::from(bth[0])).copied().unwrap_or_default();
    let rel = 12 + usize::from(shape.ext_len);
    if !shape.common || ib.len() < rel {
        return None;
    }
    let ext = ib.get(12..rel)?;
    let reth_dma_len = match shape.reth_at {
        Some(at) => Some(be32(ext, usize::from(at) + 12)?),
        None => None,
    };
    let aeth = match shape.aeth_at {
        Some(at) => {
            let w = be32(ext, usize::from(at))?;
            Some(AethRepr { syndrome: (w >> 24) as u8, msn: w & 0xFF_FFFF })
        }
        None => None,
    };
    let pad = usize::from((bth[1] >> 4) & 0x03);
    let declared_ib = ulen - 8;
    if declared_ib < rel + 4 + pad {
        return None;
    }
    let payload_len = declared_ib - rel - 4 - pad;
    let icrc = if truncated {
        Icrc { value: None, computed: None, status: IcrcStatus::Truncated }
    } else {
        let crc_at = declared_ib - 4;
        let stored = ib.get(crc_at..crc_at + 4)?.first_chunk::<4>().map(|b| u32::from_le_bytes(*b));
        match (stored, opts.check_icrc) {
            (Some(v), true) => {
                let c = icrc_v2(ip_hdr, udp, ib.get(..crc_at)?);
                Icrc {
                    value: Some(v),
                    computed: Some(c),
                    status: if c == v { IcrcStatus::Valid } else { IcrcStatus::Invalid },
                }
            }
            (v, _) => Icrc { value: v, computed: None, status: IcrcStatus::NotApplicable },
        }
    };
    let mac = |at: usize| eth.get(at..at + 6).and_then(|m| m.first_chunk::<6>()).copied();
    Some(Common {
        src_mac: mac(6)?,
        dst_mac: mac(0)?,
        pcp,
        src,
        dst,
        tos,
        ttl,
        ident,
        ip_len_field: len_field,
        declared_len: (l2 + declared) as u32,
        sport: u16::from_be_bytes([s0, s1]),
        opcode: op,
        dest_qp: u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
        psn: u32::from_be_bytes([0, bth[9], bth[10], bth[11]]),
        ack_req: bth[8] & 0x80 != 0,
        reth_dma_len,
        aeth,
        payload_len: payload_len as u32,
        icrc,
    })
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..)?.first_chunk::<4>().map(|x| u32::from_be_bytes(*x))
}

impl Common {
    /// What [`classify`] gives for the frame `p` was decoded from: the common frame's
    /// fields from a full decode, or `None` when it is not a common frame. The fast path's
    /// specification, and what a caller holding a decoded packet feeds a fast-path consumer.
    pub fn of(p: &Packet<'_>, opts: &DecodeOptions) -> Option<Common> {
        let Link::Ethernet(eth) = p.link else { return None };
        let r = p.roce.as_ref()?;
        if !p.tunnels.is_empty() || p.vlans.len() > 1 || p.error.is_some() || r.version != RoceVersion::V2 {
            return None;
        }
        let ip = p.ip.as_ref()?;
        if matches!(ip, Ip::V4(_)) && ip.header().len() != 20 {
            return None;
        }
        let op = r.bth.opcode();
        if !shapes(opts.opcode).get(usize::from(op.0)).is_some_and(|s| s.common) {
            return None;
        }
        let udp = p.udp.as_ref()?;
        Some(Common {
            src_mac: eth.src(),
            dst_mac: eth.dst(),
            pcp: p.vlans.as_slice().first().map(|t| t.pcp),
            src: ip.src(),
            dst: ip.dst(),
            tos: ip.tos(),
            ttl: ip.ttl(),
            ident: ip.ident(),
            ip_len_field: ip.len_field(),
            declared_len: (14 + 4 * p.vlans.len() + ip.declared_len()) as u32,
            sport: udp.source_port(),
            opcode: op,
            dest_qp: r.bth.dest_qp(),
            psn: r.bth.psn(),
            ack_req: r.bth.ack_req(),
            reth_dma_len: r.ext.reth.map(|h| h.dma_len()),
            aeth: r.ext.aeth.map(|a| a.repr()),
            payload_len: r.payload_len as u32,
            icrc: r.icrc,
        })
    }

    /// The DSCP (the TOS byte's upper six bits).
    pub const fn dscp(&self) -> u8 {
        self.tos >> 2
    }

    /// The ECN codepoint.
    pub const fn ecn(&self) -> crate::Ecn {
        crate::Ecn::from_bits(self.tos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use crate::ext::RethRepr;
    use crate::{decode, BthRepr, Ecn};

    fn frame(op: Opcode, ext: ExtRepr, payload: usize) -> Vec<u8> {
        let ip = IpRepr::V4 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: Ecn::Ce,
            ttl: 63,
            id: 0x1234,
        };
        let bth = BthRepr { opcode: op, dest_qp: 0x12, psn: 0xFF_FFFE, ack_req: true, ..Default::default() };
        let ib = IbRepr { bth, ext, payload: vec![7; payload], icrc: IcrcMode::Correct };
        RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(OpcodeOptions::default())
    }

    #[test]
    fn a_write_first_reads_at_fixed_offsets_as_the_decoder_reads_it() {
        let reth = Some(RethRepr { va: 1, rkey: 2, dma_len: 4096 });
        let f = frame(Opcode::RC_WRITE_FIRST, ExtRepr { reth, ..Default::default() }, 1024);
        let opts = DecodeOptions::default();
        let c = classify(LinkType::ETHERNET, &f, &opts).expect("a common frame");
        assert_eq!(Some(c), Common::of(&decode(LinkType::ETHERNET, &f, &opts), &opts));
        assert_eq!((c.dest_qp, c.psn, c.ack_req, c.reth_dma_len), (0x12, 0xFF_FFFE, true, Some(4096)));
        assert_eq!((c.dscp(), c.ecn(), c.ttl, c.ident, c.payload_len), (26, Ecn::Ce, 63, 0x1234, 1024));
        assert_eq!(c.icrc.status, IcrcStatus::Valid);
        // Cut after its headers (a 128-byte snap length): still common, ICRC truncated.
        let cut = classify(LinkType::ETHERNET, &f[..128], &opts).expect("headers whole");
        assert_eq!(cut.icrc.status, IcrcStatus::Truncated);
        assert_eq!(cut.payload_len, 1024);
        // Cut inside the RETH: the full decoder's business.
        assert_eq!(classify(LinkType::ETHERNET, &f[..60], &opts), None);
    }

    #[test]
    fn uncommon_opcodes_go_to_the_full_decoder() {
        let opts = DecodeOptions::default();
        for op in [Opcode::UD_SEND_ONLY, Opcode::RC_COMPARE_SWAP, Opcode(0x80), Opcode(0xA0), Opcode(0x1F)] {
            let f = frame(op, ExtRepr::default(), 0);
            assert_eq!(classify(LinkType::ETHERNET, &f, &opts), None, "{op:?}");
        }
        let ack =
            frame(Opcode::RC_ACKNOWLEDGE, ExtRepr { aeth: Some(AethRepr::ack(5)), ..Default::default() }, 0);
        let c = classify(LinkType::ETHERNET, &ack, &opts).expect("an ACK is common");
        assert_eq!(c.aeth, Some(AethRepr::ack(5)));
    }

    /// Frames written out byte by byte (ICRCs computed apart, with zlib's CRC-32): a tagged
    /// ACK, a WRITE whose IPv4 header has options, an IPv6 CNP and a plain WRITE.
    const VLAN_ACK: &str = "020000000002020000000001810060640800456a0030123440004011141d0a0000010a000002\
        c00012b7001c00001100ffff0000001200000005000000051cc4b50a";
    const OPTIONS_WRITE: &str = "0200000000020200000000010800466a005012344000401110fc0a0000010a0000020101\
        0100c00012b7003800000a00ffff0000003480000007000000000000100000000077000000100001020304\
        05060708090a0b0c0d0e0f8586b55f";
    const V6_CNP: &str = "02000000000202000000000186dd66a1234500281140fd0000000000000000000000000000\
        01fd000000000000000000000000000002c00012b7002800008100ffff0000005600000000000000000000\
        0000000000000000000099211494";
    const PLAIN_WRITE: &str = "0200000000020200000000010800456a004c12344000401114010a0000010a000002c000\
        12b7003800000a00ffff000000348000000700000000000010000000007700000010000102030405060708\
        090a0b0c0d0e0f31dade13";

    /// The fast record of `bytes` and of every shorter cut of them is what the full decode
    /// makes of the same bytes; returns the record of the whole frame.
    fn agrees_at_every_cut(bytes: &[u8]) -> Option<Common> {
        let opts = DecodeOptions::default();
        for n in 0..=bytes.len() {
            let cut = &bytes[..n];
            let full = Common::of(&decode(LinkType::ETHERNET, cut, &opts), &opts);
            assert_eq!(
                classify(LinkType::ETHERNET, cut, &opts),
                full,
                "cut at {n} of {}",
                hex::encode(bytes)
            );
        }
        classify(LinkType::ETHERNET, bytes, &opts)
    }

    #[test]
    fn the_fixed_offsets_agree_with_the_full_decode_on_written_out_frames() {
        let hexed = |h: &str| hex::decode(h.split_whitespace().collect::<String>()).expect("hex");
        let opts = DecodeOptions::default();
        // A tagged ACK: the tag's PCP, the AETH, a checked ICRC.
        let c = agrees_at_every_cut(&hexed(VLAN_ACK)).expect("a tagged ACK is common");
        assert_eq!((c.pcp, c.opcode, c.dest_qp, c.psn), (Some(3), Opcode::RC_ACKNOWLEDGE, 0x12, 5));
        assert_eq!(
            (c.aeth, c.icrc.status, c.declared_len),
            (Some(AethRepr { syndrome: 0, msn: 5 }), IcrcStatus::Valid, 66)
        );
        assert_eq!(
            (c.src, c.ident, c.ttl, c.dscp()),
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 0x1234, 64, 26)
        );
        // IPv4 options: the full decoder's (which reads the WRITE and its ICRC whole).
        let options = hexed(OPTIONS_WRITE);
        assert_eq!(agrees_at_every_cut(&options), None);
        let p = decode(LinkType::ETHERNET, &options, &opts);
        assert_eq!(p.roce.as_ref().map(|r| (r.payload_len, r.icrc.status)), Some((16, IcrcStatus::Valid)));
        // IPv6: the flow label for the identification, the traffic class for the TOS.
        let c = agrees_at_every_cut(&hexed(V6_CNP)).expect("an IPv6 CNP is common");
        assert_eq!((c.opcode, c.dest_qp, c.ident, c.tos, c.ttl), (Opcode::CNP, 0x56, 0x12345, 0x6A, 64));
        assert_eq!((c.src.is_ipv6(), c.icrc.status, c.payload_len), (true, IcrcStatus::Valid, 0));
        // Untagged: the RETH's length, the payload by the UDP length.
        let write = hexed(PLAIN_WRITE);
        let c = agrees_at_every_cut(&write).expect("a WRITE is common");
        assert_eq!((c.pcp, c.reth_dma_len, c.payload_len, c.ack_req), (None, Some(16), 16, true));
        assert_eq!(c.icrc.status, IcrcStatus::Valid);
        // A bad ICRC, a fragment, another UDP port: each as the full decoder says.
        let mut bad = write.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(agrees_at_every_cut(&bad).map(|c| c.icrc.status), Some(IcrcStatus::Invalid));
        let mut fragment = write.clone();
        fragment[20] = 0x20; // MF
        assert_eq!(agrees_at_every_cut(&fragment), None);
        let mut port = write;
        port[37] ^= 1;
        assert_eq!(agrees_at_every_cut(&port), None);
    }
}
