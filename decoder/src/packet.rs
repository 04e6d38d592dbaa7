//! Whole-frame decoding: link layer, VLAN tags, IP, UDP, RoCE (v2 and v1) and MAC Control.
//!
//! `decode` never panics and never allocates. A frame that fails part-way keeps every layer
//! decoded before the failure, and `Packet::error` says where and why decoding stopped.

use crate::bth::Bth;
use crate::error::{DecodeError, ErrorKind, Layer};
use crate::ext::*;
use crate::grh::{Grh, NXTHDR_IBA};
use crate::icrc::{icrc_v1, icrc_v2, Icrc, IcrcStatus};
use crate::ip::Ip;
use crate::link::{ethertype, Ethernet, LinkType, Sll, Sll2, VlanTag, Vlans};
use crate::mac_control::{self, MacControl};
use crate::opcode::{ExtKind, OpcodeOptions};
use crate::wire::fixed;
use etherparse::{Ipv4HeaderSlice, Ipv6HeaderSlice, UdpHeaderSlice};

/// The IANA port for RoCEv2.
pub const ROCE_V2_PORT: u16 = 4791;

/// Decoder settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// UDP destination port that marks RoCEv2 (only the destination port decides:
    /// reference §1.1 and the `roce.pcap` trap).
    pub roce_port: u16,
    /// How opcodes are read (Mellanox DC or RD in 0x40-0x5F).
    pub opcode: OpcodeOptions,
    /// Compute and check the ICRC.
    pub check_icrc: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { roce_port: ROCE_V2_PORT, opcode: OpcodeOptions::default(), check_icrc: true }
    }
}

/// The link-layer header of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link<'a> {
    /// Ethernet II.
    Ethernet(Ethernet<'a>),
    /// Linux cooked v1.
    Sll(Sll<'a>),
    /// Linux cooked v2.
    Sll2(Sll2<'a>),
    /// Raw IP: no link header.
    Raw,
    /// Nothing decoded (unsupported link type, or the link header was cut).
    None,
}

/// RoCE encapsulation version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoceVersion {
    /// EtherType 0x8915 + GRH.
    V1,
    /// IP/UDP to the RoCE port.
    V2,
}

/// The extended headers present in a packet; `None` for those its opcode does not carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ExtHeaders<'a> {
    pub dceth: Option<DcEth<'a>>,
    pub rdeth: Option<Rdeth<'a>>,
    pub deth: Option<Deth<'a>>,
    pub xrceth: Option<XrcEth<'a>>,
    pub feth: Option<Feth<'a>>,
    pub reth: Option<Reth<'a>>,
    pub atomiceth: Option<AtomicEth<'a>>,
    pub aeth: Option<Aeth<'a>>,
    pub atomicacketh: Option<AtomicAckEth<'a>>,
    pub immdt: Option<ImmDt<'a>>,
    pub ieth: Option<Ieth<'a>>,
    pub cnp: Option<CnpBody<'a>>,
}

/// The InfiniBand transport part of a RoCE packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roce<'a> {
    /// v1 or v2.
    pub version: RoceVersion,
    /// The GRH (RoCEv1 only).
    pub grh: Option<Grh<'a>>,
    /// The base transport header.
    pub bth: Bth<'a>,
    /// Extended headers selected by the opcode.
    pub ext: ExtHeaders<'a>,
    /// Whether the opcode is one rocescope knows the layout of; unknown opcodes keep their
    /// body as opaque payload.
    pub known_opcode: bool,
    /// The captured payload bytes (may be shorter than `payload_len` when truncated).
    pub payload: &'a [u8],
    /// Payload length from the IP/UDP (or GRH) lengths, excluding pad and ICRC.
    pub payload_len: usize,
    /// Pad bytes (BTH PadCnt) before the ICRC.
    pub pad: u8,
    /// The ICRC verdict.
    pub icrc: Icrc,
}

/// A decoded frame. Every layer borrows from the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The frame bytes as captured.
    pub data: &'a [u8],
    /// The link type it was decoded with.
    pub link_type: LinkType,
    /// Link-layer header.
    pub link: Link<'a>,
    /// VLAN tags, outermost first.
    pub vlans: Vlans,
    /// EtherType after the tags (or the SLL protocol), when known.
    pub ethertype: Option<u16>,
    /// IP header.
    pub ip: Option<Ip<'a>>,
    /// The IP packet is a fragment (reported, not decoded further).
    pub ip_fragment: bool,
    /// The UDP destination port was the RoCE port, so the frame should be RoCEv2.
    pub to_roce_port: bool,
    /// UDP header.
    pub udp: Option<UdpHeaderSlice<'a>>,
    /// RoCE transport.
    pub roce: Option<Roce<'a>>,
    /// MAC Control (PFC / PAUSE).
    pub mac_control: Option<MacControl>,
    /// Where and why decoding stopped, if it did.
    pub error: Option<DecodeError>,
}

impl<'a> Packet<'a> {
    fn empty(data: &'a [u8], link_type: LinkType) -> Self {
        Packet {
            data,
            link_type,
            link: Link::None,
            vlans: Vlans::default(),
            ethertype: None,
            ip: None,
            ip_fragment: false,
            to_roce_port: false,
            udp: None,
            roce: None,
            mac_control: None,
            error: None,
        }
    }

    /// True when the frame went to the RoCE port (or carried EtherType 0x8915) but did not
    /// decode completely as RoCE. Its `roce` may still hold the BTH and the headers that
    /// decoded before the failure.
    pub fn is_malformed_roce(&self) -> bool {
        self.error.is_some() && (self.to_roce_port || self.ethertype == Some(ethertype::ROCE_V1))
    }

    /// The RoCE transport, only when it decoded completely.
    pub fn roce_ok(&self) -> Option<&Roce<'a>> {
        self.roce.as_ref().filter(|_| self.error.is_none())
    }
}

/// Decode one frame captured with `link_type`. Never panics: a frame that fails part-way
/// keeps the layers decoded before the failure, and [`Packet::error`] says why it stopped.
///
/// ```
/// use rocescope_decoder::{decode, DecodeOptions, IcrcStatus, LinkType, Opcode};
/// # fn unhex(s: &str) -> Vec<u8> {
/// #     let s: String = s.split_whitespace().collect();
/// #     (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
/// # }
/// // A CNP captured on a ConnectX-4 Lx: Ethernet, IPv4, UDP to 4791, BTH, CNP body, ICRC.
/// let frame = unhex(
///     "e41d2dab2bc2 7cfe90643b32 0800 45c2003c718c400040119161 0a001101 0a001201
///      000012b700280000 8100ffff4000011800000000 00000000000000000000000000000000 82fd002a",
/// );
/// let p = decode(LinkType::ETHERNET, &frame, &DecodeOptions::default());
/// assert_eq!(p.error, None);
/// let roce = p.roce_ok().unwrap();
/// assert_eq!(roce.bth.opcode(), Opcode::CNP);
/// assert_eq!((roce.bth.dest_qp(), roce.bth.psn()), (0x118, 0));
/// assert!(roce.bth.becn());
/// assert_eq!(roce.icrc.status, IcrcStatus::Valid);
///
/// // The same frame cut before its ICRC (a snap length): headers decode, ICRC unchecked.
/// let cut = decode(LinkType::ETHERNET, &frame[..70], &DecodeOptions::default());
/// assert_eq!(cut.roce_ok().map(|r| r.icrc.status), Some(IcrcStatus::Truncated));
/// ```
#[inline]
pub fn decode<'a>(link_type: LinkType, data: &'a [u8], opts: &DecodeOptions) -> Packet<'a> {
    let mut p = Packet::empty(data, link_type);
    if let Err(e) = decode_into(&mut p, opts) {
        p.error = Some(e);
    }
    p
}

fn trunc(layer: Layer, offset: usize, needed: usize, data: &[u8]) -> DecodeError {
    DecodeError::truncated(layer, offset, needed, data.len().saturating_sub(offset))
}

fn at(data: &[u8], off: usize) -> &[u8] {
    data.get(off..).unwrap_or(&[])
}

fn decode_into<'a>(p: &mut Packet<'a>, opts: &DecodeOptions) -> Result<(), DecodeError> {
    let data = p.data;
    let (mut off, mut etype) = match p.link_type.0 {
        1 => {
            let (_, eth) = Ethernet::parse(data).map_err(|_| trunc(Layer::Ethernet, 0, 14, data))?;
            p.link = Link::Ethernet(eth);
            (14, eth.ethertype())
        }
        113 => {
            let (_, sll) = Sll::parse(data).map_err(|_| trunc(Layer::Sll, 0, 16, data))?;
            p.link = Link::Sll(sll);
            (16, sll.protocol())
        }
        276 => {
            let (_, sll) = Sll2::parse(data).map_err(|_| trunc(Layer::Sll2, 0, 20, data))?;
            p.link = Link::Sll2(sll);
            (20, sll.protocol())
        }
        12 | 14 | 101 | 228 | 229 => {
            p.link = Link::Raw;
            match data.first().map(|b| b >> 4) {
                Some(4) => (0, ethertype::IPV4),
                Some(6) => (0, ethertype::IPV6),
                Some(_) => {
                    return Err(DecodeError::invalid(
                        Layer::Link,
                        0,
                        "raw IP frame with an IP version other than 4 or 6",
                    ))
                }
                None => return Err(trunc(Layer::Link, 0, 1, data)),
            }
        }
        other => {
            return Err(DecodeError {
                layer: Layer::Link,
                offset: 0,
                kind: ErrorKind::UnsupportedLinkType(other),
            })
        }
    };
    while ethertype::is_vlan(etype) {
        let (_, tag) = fixed::<4>(at(data, off)).map_err(|_| trunc(Layer::Vlan, off, 4, data))?;
        let tci = u16::from_be_bytes([tag[0], tag[1]]);
        if !p.vlans.push(VlanTag::from_tci(etype, tci)) {
            return Err(DecodeError::invalid(Layer::Vlan, off, "more than 4 VLAN tags"));
        }
        etype = u16::from_be_bytes([tag[2], tag[3]]);
        off += 4;
    }
    p.ethertype = Some(etype);
    match etype {
        ethertype::IPV4 | ethertype::IPV6 => decode_ip(p, off, etype, opts),
        ethertype::ROCE_V1 => decode_v1(p, off, opts),
        ethertype::MAC_CONTROL => {
            let dst = match p.link {
                Link::Ethernet(e) => Some(e.dst()),
                _ => None,
            };
            let mc = mac_control::parse(at(data, off), dst)
                .map_err(|needed| trunc(Layer::MacControl, off, needed, data))?;
            p.mac_control = Some(mc);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn decode_ip<'a>(
    p: &mut Packet<'a>,
    off: usize,
    etype: u16,
    opts: &DecodeOptions,
) -> Result<(), DecodeError> {
    let data = p.data;
    let rest = at(data, off);
    let ip = if etype == ethertype::IPV4 {
        let h = Ipv4HeaderSlice::from_slice(rest).map_err(|e| match e {
            etherparse::err::ipv4::HeaderSliceError::Len(l) => trunc(Layer::Ipv4, off, l.required_len, data),
            etherparse::err::ipv4::HeaderSliceError::Content(c) => match c {
                etherparse::err::ipv4::HeaderError::UnexpectedVersion { .. } => {
                    DecodeError::invalid(Layer::Ipv4, off, "version field is not 4")
                }
                etherparse::err::ipv4::HeaderError::HeaderLengthSmallerThanHeader { .. } => {
                    DecodeError::invalid(Layer::Ipv4, off, "IHL below 5")
                }
            },
        })?;
        Ip::V4(h)
    } else {
        let h = Ipv6HeaderSlice::from_slice(rest).map_err(|e| match e {
            etherparse::err::ipv6::HeaderSliceError::Len(l) => trunc(Layer::Ipv6, off, l.required_len, data),
            etherparse::err::ipv6::HeaderSliceError::Content(_) => {
                DecodeError::invalid(Layer::Ipv6, off, "version field is not 6")
            }
        })?;
        Ip::V6(h)
    };
    let ip_hdr: &'a [u8] = ip.header();
    let hlen = ip_hdr.len();
    let ip_declared = ip.declared_len();
    let (layer, proto, frag) =
        (if ip.version() == 4 { Layer::Ipv4 } else { Layer::Ipv6 }, ip.protocol(), ip.is_fragment());
    p.ip = Some(ip);
    if ip_declared < hlen {
        return Err(DecodeError::invalid(layer, off, "total length is smaller than the header"));
    }
    if frag {
        p.ip_fragment = true;
        return Ok(());
    }
    if proto != 17 {
        return Ok(());
    }
    let uoff = off + hlen;
    let udp = UdpHeaderSlice::from_slice(at(data, uoff)).map_err(|_| trunc(Layer::Udp, uoff, 8, data))?;
    let (dport, ulen, udp_bytes) = (udp.destination_port(), usize::from(udp.length()), udp.slice());
    p.udp = Some(udp);
    if dport != opts.roce_port {
        return Ok(());
    }
    p.to_roce_port = true;
    if ulen < 8 {
        return Err(DecodeError::invalid(Layer::Udp, uoff, "UDP length below 8"));
    }
    if uoff + ulen > off + ip_declared {
        return Err(DecodeError::invalid(Layer::Udp, uoff, "UDP length runs past the IP packet"));
    }
    let ib_start = uoff + 8;
    let ib_end = uoff + ulen;
    let err = decode_ib(data, ib_start, ib_end, RoceVersion::V2, None, opts, &mut p.roce, |ib| {
        let mut u = [0u8; 8];
        u.copy_from_slice(udp_bytes.get(..8).unwrap_or(&[0; 8]));
        icrc_v2(ip_hdr, &u, ib)
    })?;
    err.map_or(Ok(()), Err)
}

fn decode_v1<'a>(p: &mut Packet<'a>, off: usize, opts: &DecodeOptions) -> Result<(), DecodeError> {
    let data = p.data;
    let (_, grh) = Grh::parse(at(data, off)).map_err(|_| trunc(Layer::Grh, off, 40, data))?;
    if grh.nxthdr() != NXTHDR_IBA {
        return Err(DecodeError::invalid(Layer::Grh, off, "next header is not IBA transport (0x1B)"));
    }
    let ib_start = off + 40;
    let ib_end = ib_start + usize::from(grh.paylen());
    let err = decode_ib(data, ib_start, ib_end, RoceVersion::V1, Some(grh), opts, &mut p.roce, |ib| {
        icrc_v1(grh.bytes(), ib)
    })?;
    err.map_or(Ok(()), Err)
}

/// Decode the IB transport between `start` and the declared `end` (which may lie past the
/// captured bytes) into `slot`. `crc` computes the ICRC over BTH..pad. Returns the error that
/// stopped decoding part-way (the slot then holds what decoded), or an error when even the
/// BTH did not decode.
#[allow(clippy::too_many_arguments)] // internal: one call site per RoCE version
fn decode_ib<'a>(
    data: &'a [u8],
    start: usize,
    end: usize,
    version: RoceVersion,
    grh: Option<Grh<'a>>,
    opts: &DecodeOptions,
    slot: &mut Option<Roce<'a>>,
    crc: impl FnOnce(&[u8]) -> u32,
) -> Result<Option<DecodeError>, DecodeError> {
    let truncated = data.len() < end;
    let avail_end = end.min(data.len());
    let ib = data.get(start..avail_end).unwrap_or(&[]);
    let declared = end.saturating_sub(start);
    let short = |layer: Layer, rel: usize, needed: usize| {
        if truncated {
            DecodeError::truncated(layer, start + rel, needed, ib.len().saturating_sub(rel))
        } else {
            DecodeError::invalid(layer, start + rel, "the IP/UDP length leaves no room for this header")
        }
    };
    let (mut rest, bth) = Bth::parse(ib).map_err(|_| short(Layer::Bth, 0, Bth::LEN))?;
    let layout = bth.opcode().layout(opts.opcode);
    // Built in place: the headers are filled in as they parse. A frame that fails part-way
    // keeps the BTH and the headers before the failure, with no ICRC verdict.
    let roce = slot.insert(Roce {
        version,
        grh,
        bth,
        ext: ExtHeaders::default(),
        known_opcode: layout.known,
        payload: &[],
        payload_len: 0,
        pad: 0,
        icrc: Icrc {
            value: None,
            computed: None,
            status: if truncated { IcrcStatus::Truncated } else { IcrcStatus::NotApplicable },
        },
    });
    let mut rel = Bth::LEN;
    for kind in layout.headers.iter() {
        macro_rules! take {
            ($ty:ident, $field:ident) => {{
                match $ty::parse(rest) {
                    Ok((r, h)) => {
                        roce.ext.$field = Some(h);
                        r
                    }
                    Err(_) => return Ok(Some(short(Layer::Ext(kind), rel, kind.size()))),
                }
            }};
        }
        rest = match kind {
            ExtKind::DcEth => take!(DcEth, dceth),
            ExtKind::Rdeth => take!(Rdeth, rdeth),
            ExtKind::Deth => take!(Deth, deth),
            ExtKind::XrcEth => take!(XrcEth, xrceth),
            ExtKind::Feth => take!(Feth, feth),
            ExtKind::Reth => take!(Reth, reth),
            ExtKind::AtomicEth => take!(AtomicEth, atomiceth),
            ExtKind::Aeth => take!(Aeth, aeth),
            ExtKind::AtomicAckEth => take!(AtomicAckEth, atomicacketh),
            ExtKind::ImmDt => take!(ImmDt, immdt),
            ExtKind::Ieth => take!(Ieth, ieth),
            ExtKind::CnpBody => take!(CnpBody, cnp),
        };
        rel += kind.size();
    }
    // After the headers: payload, pad, 4-byte ICRC. Lengths come from the IP/UDP (or GRH)
    // fields, never from the capture record (reference §1.1).
    let pad = if layout.known { bth.pad_count() } else { 0 };
    let tail = 4 + usize::from(pad);
    if declared < rel + tail {
        let why = "the IP/UDP length leaves no room for the pad and ICRC";
        return Ok(Some(DecodeError::invalid(Layer::Payload, start + rel, why)));
    }
    let payload_len = declared - rel - tail;
    roce.payload = rest.get(..payload_len.min(rest.len())).unwrap_or(rest);
    roce.payload_len = payload_len;
    roce.pad = pad;
    if !truncated {
        let crc_at = declared - 4;
        let stored =
            ib.get(crc_at..crc_at + 4).and_then(|s| s.first_chunk::<4>()).map(|b| u32::from_le_bytes(*b));
        roce.icrc = match (stored, opts.check_icrc) {
            (Some(v), true) => {
                let c = crc(ib.get(..crc_at).unwrap_or(&[]));
                Icrc {
                    value: Some(v),
                    computed: Some(c),
                    status: if c == v { IcrcStatus::Valid } else { IcrcStatus::Invalid },
                }
            }
            (v, _) => Icrc { value: v, computed: None, status: IcrcStatus::NotApplicable },
        };
    }
    Ok(None)
}
