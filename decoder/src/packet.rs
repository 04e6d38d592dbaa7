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
use crate::tunnel::{
    gre_field, Encap, ErspanII, ErspanIII, ErspanPlatform, Geneve, Gre, GreProto, MplsPayload, MplsStack,
    PwControlWord, Tunnel, Tunnels, Undecoded, UndecodedReason, Vxlan, GENEVE_PORT, IPPROTO_GRE, VXLAN_PORT,
};
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
    /// UDP destination ports unwrapped as VXLAN (RFC 7348; 4789 by default).
    pub vxlan_ports: Ports,
    /// UDP destination ports unwrapped as Geneve (RFC 8926; 6081 by default).
    pub geneve_ports: Ports,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            roce_port: ROCE_V2_PORT,
            opcode: OpcodeOptions::default(),
            check_icrc: true,
            vxlan_ports: Ports::one(VXLAN_PORT),
            geneve_ports: Ports::one(GENEVE_PORT),
        }
    }
}

/// A small set of UDP ports: fixed capacity, `Copy`, no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ports {
    ports: [u16; Ports::MAX],
    len: u8,
}

impl Ports {
    /// Most ports a set holds.
    pub const MAX: usize = 8;

    /// A set of one port.
    pub const fn one(port: u16) -> Self {
        let mut ports = [0u16; Ports::MAX];
        ports[0] = port;
        Ports { ports, len: 1 }
    }
    /// Add a port (a port already present is not added twice); false when the set is full.
    pub fn add(&mut self, port: u16) -> bool {
        if self.contains(port) {
            return true;
        }
        match self.ports.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = port;
                self.len += 1;
                true
            }
            None => false,
        }
    }
    /// True when `port` is in the set.
    pub fn contains(&self, port: u16) -> bool {
        self.as_slice().contains(&port)
    }
    /// The ports.
    pub fn as_slice(&self) -> &[u16] {
        self.ports.get(..usize::from(self.len)).unwrap_or(&[])
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
///
/// A tunnelled frame (ERSPAN, GRE, VXLAN, Geneve, MPLS) has its encapsulations in `tunnels`,
/// outermost first, each with the outer headers that carried it; every other field describes
/// the inner frame, so its DSCP, ECN and PCP are those of the traffic, not of the tunnel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The frame bytes as captured.
    pub data: &'a [u8],
    /// The link type it was decoded with.
    pub link_type: LinkType,
    /// Link-layer header: the innermost one, i.e. the inner Ethernet of a tunnel that carries
    /// Ethernet; for a tunnel that carries IP (L3 GRE, MPLS with IP), the last link-layer
    /// header before it.
    pub link: Link<'a>,
    /// Tunnel layers unwrapped to reach the inner frame, outermost first (empty when the frame
    /// is not tunnelled).
    pub tunnels: Tunnels<'a>,
    /// An encapsulation recognised but not unwrapped (GRE with another protocol, an unknown
    /// ERSPAN version, ...): the other fields then describe the frame up to that header.
    pub tunnel_undecoded: Option<Undecoded>,
    /// VLAN tags of the inner frame, outermost first.
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
    /// The UDP payload as captured (up to the UDP length), for protocols carried over UDP
    /// that other layers read (sFlow datagrams to port 6343); empty without UDP.
    pub udp_payload: &'a [u8],
    /// RoCE transport.
    pub roce: Option<Roce<'a>>,
    /// MAC Control (PFC / PAUSE).
    pub mac_control: Option<MacControl>,
    /// Where and why decoding stopped, if it did.
    pub error: Option<DecodeError>,
}

impl<'a> Packet<'a> {
    /// A packet of `data` not decoded yet: every header `None`. With
    /// [`Packet::decode_from`], the packet is decoded where the caller keeps it rather than
    /// returned by value (a `Packet` is close to a kilobyte with its tunnel slots, and the
    /// copy [`decode`]'s return makes shows in a profile at millions of frames per second).
    #[inline(always)]
    pub fn empty(data: &'a [u8], link_type: LinkType) -> Self {
        Packet {
            data,
            link_type,
            link: Link::None,
            tunnels: Tunnels::default(),
            tunnel_undecoded: None,
            vlans: Vlans::default(),
            ethertype: None,
            ip: None,
            ip_fragment: false,
            to_roce_port: false,
            udp: None,
            udp_payload: &[],
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

    /// Where the inner frame (or packet) of a tunnelled frame starts: 0 when the frame is
    /// not tunnelled. `data.len() - inner_offset()` is the inner frame's captured length.
    pub fn inner_offset(&self) -> usize {
        self.tunnels.innermost().map_or(0, |t| t.inner_offset)
    }
}

/// What a tunnel carries, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inner {
    Ethernet,
    /// IPv4 or IPv6 (by EtherType).
    Ip(u16),
    Mpls,
}

/// The result of one layer: done, or a tunnel's inner frame to decode at an offset.
type Next = Result<Option<(usize, Inner)>, DecodeError>;

fn needed(e: &nom::Err<nom::error::Error<&[u8]>>, available: usize, min: usize) -> usize {
    match e {
        nom::Err::Incomplete(nom::Needed::Size(n)) => available + n.get(),
        _ => min,
    }
}

fn short(
    layer: Layer,
    off: usize,
    min: usize,
    data: &[u8],
) -> impl Fn(nom::Err<nom::error::Error<&[u8]>>) -> DecodeError + '_ {
    move |e| {
        let avail = data.len().saturating_sub(off);
        DecodeError::truncated(layer, off, needed(&e, avail, min), avail)
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
    p.decode_from(opts);
    p
}

impl Packet<'_> {
    /// Decode a packet made with [`Packet::empty`] in place: what [`decode`] does, without
    /// moving the result.
    #[inline]
    pub fn decode_from(&mut self, opts: &DecodeOptions) {
        if let Err(e) = decode_into(self, opts) {
            self.error = Some(e);
        }
    }
}

fn trunc(layer: Layer, offset: usize, needed: usize, data: &[u8]) -> DecodeError {
    DecodeError::truncated(layer, offset, needed, data.len().saturating_sub(offset))
}

fn at(data: &[u8], off: usize) -> &[u8] {
    data.get(off..).unwrap_or(&[])
}

fn decode_into<'a>(p: &mut Packet<'a>, opts: &DecodeOptions) -> Result<(), DecodeError> {
    let data = p.data;
    let (off, etype) = match p.link_type.0 {
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
    let mut next = decode_l2(p, off, etype, opts)?;
    // Each tunnel adds a layer to `p.tunnels` (at most `Tunnels::MAX`, then an error), so
    // this loop, not recursion, unwraps the nesting, and it ends.
    while let Some((off, inner)) = next {
        next = match inner {
            Inner::Ethernet => {
                let (_, eth) =
                    Ethernet::parse(at(data, off)).map_err(|_| trunc(Layer::Ethernet, off, 14, data))?;
                p.link = Link::Ethernet(eth);
                decode_l2(p, off + 14, eth.ethertype(), opts)?
            }
            Inner::Ip(etype) => decode_l2(p, off, etype, opts)?,
            Inner::Mpls => decode_l2(p, off, ethertype::MPLS, opts)?,
        };
    }
    Ok(())
}

/// Decode from the EtherType `etype` whose payload (or first VLAN tag) starts at `off`.
fn decode_l2<'a>(p: &mut Packet<'a>, mut off: usize, mut etype: u16, opts: &DecodeOptions) -> Next {
    let data = p.data;
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
        ethertype::MPLS | ethertype::MPLS_MC => decode_mpls(p, off),
        ethertype::ROCE_V1 => decode_v1(p, off, opts).map(|()| None),
        ethertype::MAC_CONTROL => {
            let dst = match p.link {
                Link::Ethernet(e) => Some(e.dst()),
                _ => None,
            };
            let mc = mac_control::parse(at(data, off), dst)
                .map_err(|needed| trunc(Layer::MacControl, off, needed, data))?;
            p.mac_control = Some(mc);
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Move the headers decoded so far into a new tunnel layer, and clear them for the inner
/// frame. Errors when the frame already has `Tunnels::MAX` layers.
fn enter<'a>(p: &mut Packet<'a>, encap: Encap<'a>, offset: usize, inner_offset: usize, inner: Inner) -> Next {
    let t = Tunnel {
        link: p.link,
        vlans: core::mem::take(&mut p.vlans),
        ip: p.ip.take(),
        udp: p.udp.take(),
        encap,
        offset,
        inner_offset,
    };
    if !p.tunnels.push(t) {
        return Err(DecodeError::invalid(Layer::Tunnel, offset, "more than 4 tunnel layers"));
    }
    p.ethertype = None;
    Ok(Some((inner_offset, inner)))
}

fn undecoded(p: &mut Packet<'_>, offset: usize, reason: UndecodedReason) -> Next {
    p.tunnel_undecoded = Some(Undecoded { offset, reason });
    Ok(None)
}

/// IPv4 or IPv6 by the first nibble of the bytes at `off`, for payloads that do not say.
fn ip_by_nibble(data: &[u8], off: usize) -> Option<u16> {
    match data.get(off).map(|b| b >> 4) {
        Some(4) => Some(ethertype::IPV4),
        Some(6) => Some(ethertype::IPV6),
        _ => None,
    }
}

/// GRE (RFC 2784, RFC 2890) and what it carries: ERSPAN I/II/III (draft-foschiano-erspan-03),
/// Ethernet (0x6558), IPv4/IPv6, MPLS (RFC 4023).
fn decode_gre<'a>(p: &mut Packet<'a>, off: usize) -> Next {
    let data = p.data;
    // Version and routing first: other versions (1 is PPTP) lay the header out differently.
    let (_, base) = fixed::<4>(at(data, off)).map_err(short(Layer::Gre, off, 4, data))?;
    let flags = u16::from_be_bytes([base[0], base[1]]);
    if flags & (gre_field::VERSION | gre_field::ROUTING) != 0 {
        return undecoded(p, off, UndecodedReason::GreVersion(flags));
    }
    let (rest, gre) = Gre::parse(at(data, off)).map_err(short(Layer::Gre, off, 4, data))?;
    let ioff = off + gre.len();
    match gre.protocol() {
        // Type I has no sequence number and no ERSPAN header (the rule Wireshark and Linux
        // `ip_gre.c` follow); type II has both.
        GreProto::ERSPAN if gre.seq().is_none() => {
            enter(p, Encap::ErspanI { gre }, off, ioff, Inner::Ethernet)
        }
        GreProto::ERSPAN => {
            let (_, erspan) = ErspanII::parse(rest).map_err(short(Layer::Erspan, ioff, 8, data))?;
            if erspan.version() != 1 {
                return undecoded(p, ioff, UndecodedReason::ErspanVersion(erspan.version()));
            }
            enter(p, Encap::ErspanII { gre, erspan }, off, ioff + 8, Inner::Ethernet)
        }
        GreProto::ERSPAN_III => {
            let (rest, erspan) = ErspanIII::parse(rest).map_err(short(Layer::Erspan, ioff, 12, data))?;
            if erspan.version() != 2 {
                return undecoded(p, ioff, UndecodedReason::ErspanVersion(erspan.version()));
            }
            let (platform, len) = if erspan.optional() {
                let (_, h) = ErspanPlatform::parse(rest).map_err(short(Layer::Erspan, ioff + 12, 8, data))?;
                (Some(h), 20)
            } else {
                (None, 12)
            };
            let inner_off = ioff + len;
            // FT: 0 an Ethernet frame, 2 an IP packet (draft §4.3).
            let inner = match erspan.frame_type() {
                0 => Inner::Ethernet,
                2 => match ip_by_nibble(data, inner_off) {
                    Some(t) => Inner::Ip(t),
                    None => {
                        return Err(DecodeError::invalid(
                            Layer::Erspan,
                            ioff,
                            "frame type IP without an IP packet",
                        ))
                    }
                },
                ft => return undecoded(p, ioff, UndecodedReason::ErspanFrameType(ft)),
            };
            enter(p, Encap::ErspanIII { gre, erspan, platform }, off, inner_off, inner)
        }
        GreProto::TEB => enter(p, Encap::Gre { gre }, off, ioff, Inner::Ethernet),
        GreProto::IPV4 => enter(p, Encap::Gre { gre }, off, ioff, Inner::Ip(ethertype::IPV4)),
        GreProto::IPV6 => enter(p, Encap::Gre { gre }, off, ioff, Inner::Ip(ethertype::IPV6)),
        GreProto::MPLS | GreProto::MPLS_MC => enter(p, Encap::Gre { gre }, off, ioff, Inner::Mpls),
        GreProto(other) => undecoded(p, off, UndecodedReason::GreProtocol(other)),
    }
}

/// An MPLS label stack (RFC 3032) and a guess at its payload (see [`MplsPayload`]).
fn decode_mpls<'a>(p: &mut Packet<'a>, off: usize) -> Next {
    let data = p.data;
    let (rest, labels) = MplsStack::parse(at(data, off)).map_err(|e| match e {
        nom::Err::Incomplete(_) => trunc(Layer::Mpls, off, 4, data),
        _ => DecodeError::invalid(Layer::Mpls, off, "no bottom-of-stack label within 16 labels"),
    })?;
    let poff = off + labels.bytes().len();
    let bottom = labels.bottom().map(|l| l.label());
    let nibble = rest.first().map(|b| b >> 4);
    let (payload, inner, cw) = match (bottom, nibble) {
        (Some(crate::tunnel::mpls_field::IPV4_EXPLICIT_NULL), _) | (_, Some(4)) => {
            (MplsPayload::Ipv4, Inner::Ip(ethertype::IPV4), None)
        }
        (Some(crate::tunnel::mpls_field::IPV6_EXPLICIT_NULL), _) | (_, Some(6)) => {
            (MplsPayload::Ipv6, Inner::Ip(ethertype::IPV6), None)
        }
        (_, None) => return Err(trunc(Layer::Mpls, poff, 1, data)),
        (_, Some(0)) if !no_control_word(rest) => {
            let (_, cw) = PwControlWord::parse(rest).map_err(short(Layer::Mpls, poff, 4, data))?;
            (MplsPayload::Ethernet, Inner::Ethernet, Some(cw))
        }
        (_, Some(1)) => return undecoded(p, poff, UndecodedReason::MplsPayload(1)),
        (_, Some(_)) => (MplsPayload::Ethernet, Inner::Ethernet, None),
    };
    let inner_off = poff + 4 * usize::from(cw.is_some());
    enter(p, Encap::Mpls { labels, control_word: cw, payload }, off, inner_off, inner)
}

/// True when the two bytes at `at` are an EtherType a RoCE fabric carries: the test that
/// tells an Ethernet pseudowire without control word whose destination MAC begins with the
/// nibble 0 from one with a control word.
fn plausible_ethertype(b: &[u8], at: usize) -> bool {
    match (b.get(at), b.get(at + 1)) {
        (Some(&x), Some(&y)) => matches!(
            u16::from_be_bytes([x, y]),
            ethertype::IPV4
                | ethertype::IPV6
                | ethertype::VLAN
                | ethertype::QINQ
                | ethertype::QINQ_OLD
                | ethertype::ROCE_V1
                | ethertype::MAC_CONTROL
                | ethertype::MPLS
                | ethertype::MPLS_MC
                | 0x0806
                | 0x88CC
        ),
        _ => false,
    }
}

/// How well the bytes read as an Ethernet frame whose EtherType sits at `at`: 0 not at all
/// (no EtherType a RoCE fabric carries), 1 a known EtherType, 2 a known EtherType followed
/// by what it announces (an IPv4 header with version 4 and a length of at least 5 words, an
/// IPv6 header with version 6, a VLAN tag followed by a known EtherType).
fn ethernet_score(b: &[u8], at: usize) -> u8 {
    if !plausible_ethertype(b, at) {
        return 0;
    }
    let t = u16::from_be_bytes([b.get(at).copied().unwrap_or(0), b.get(at + 1).copied().unwrap_or(0)]);
    let next = b.get(at + 2).copied();
    let follows = match t {
        ethertype::IPV4 => next.is_some_and(|v| v >> 4 == 4 && v & 0x0F >= 5),
        ethertype::IPV6 => next.is_some_and(|v| v >> 4 == 6),
        t if ethertype::is_vlan(t) => plausible_ethertype(b, at + 4),
        ethertype::MPLS | ethertype::MPLS_MC => mpls_carries_ip(b, at + 2),
        _ => false,
    };
    1 + u8::from(follows)
}

/// True when a label stack starting at `from` reaches its bottom-of-stack entry (the S bit,
/// the low bit of each entry's third byte) within the 16 labels the decoder reads, and an IP
/// header follows it (version 4 with a header length of at least 5 words, or version 6):
/// what an MPLS EtherType carrying IP announces. Without it an Ethernet pseudowire carrying
/// MPLS, whose first label's bytes happened to read as an IPv6 EtherType four bytes on, tied
/// with the control-word reading and went to it; a bare stack end is not enough either (an
/// IPv6 flow label of 0x8847 four bytes on then tied the other way): proptest cases.
fn mpls_carries_ip(b: &[u8], from: usize) -> bool {
    let Some(k) = (0..16)
        .take_while(|k| b.get(from + 4 * k + 2).is_some())
        .find(|k| b.get(from + 4 * k + 2).is_some_and(|x| x & 1 == 1))
    else {
        return false;
    };
    b.get(from + 4 * (k + 1)).is_some_and(|&v| (v >> 4 == 4 && v & 0x0F >= 5) || v >> 4 == 6)
}

/// For an MPLS payload whose first nibble is 0: true when it reads better as an Ethernet
/// frame without control word (EtherType at byte 12) than as one after a control word
/// (EtherType at byte 16; [`ethernet_score`]), or when the EtherType at byte 12 is a VLAN
/// tag (whose inner EtherType then sits at byte 16, where the control-word reading would
/// look). A tie goes to the control word, which RFC 4385 recommends.
fn no_control_word(rest: &[u8]) -> bool {
    let tpid = matches!((rest.get(12), rest.get(13)), (Some(&a), Some(&b)) if ethertype::is_vlan(u16::from_be_bytes([a, b])));
    let without = ethernet_score(rest, 12);
    without > 0 && (tpid || without > ethernet_score(rest, 16))
}

/// VXLAN (RFC 7348 §5): an Ethernet frame after the 8-byte header.
fn decode_vxlan<'a>(p: &mut Packet<'a>, off: usize) -> Next {
    let data = p.data;
    let (_, v) = Vxlan::parse(at(data, off)).map_err(short(Layer::Vxlan, off, 8, data))?;
    enter(p, Encap::Vxlan(v), off, off + 8, Inner::Ethernet)
}

/// Geneve (RFC 8926 §3.4): options skipped by their length, then the protocol type.
fn decode_geneve<'a>(p: &mut Packet<'a>, off: usize) -> Next {
    let data = p.data;
    let (_, g) = Geneve::parse(at(data, off)).map_err(short(Layer::Geneve, off, 8, data))?;
    let inner_off = off + g.len();
    let inner = match (g.version(), g.protocol()) {
        (0, GreProto::TEB) => Inner::Ethernet,
        (0, GreProto::IPV4) => Inner::Ip(ethertype::IPV4),
        (0, GreProto::IPV6) => Inner::Ip(ethertype::IPV6),
        (0, GreProto::MPLS | GreProto::MPLS_MC) => Inner::Mpls,
        (_, GreProto(other)) => return undecoded(p, off, UndecodedReason::GeneveProtocol(other)),
    };
    enter(p, Encap::Geneve(g), off, inner_off, inner)
}

fn decode_ip<'a>(p: &mut Packet<'a>, off: usize, etype: u16, opts: &DecodeOptions) -> Next {
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
        return Ok(None);
    }
    match proto {
        17 => {}
        IPPROTO_GRE => return decode_gre(p, off + hlen),
        4 | 41 => return undecoded(p, off + hlen, UndecodedReason::IpInIp(proto)),
        _ => return Ok(None),
    }
    let uoff = off + hlen;
    let udp = UdpHeaderSlice::from_slice(at(data, uoff)).map_err(|_| trunc(Layer::Udp, uoff, 8, data))?;
    let (dport, ulen, udp_bytes) = (udp.destination_port(), usize::from(udp.length()), udp.slice());
    p.udp = Some(udp);
    let payload_end = uoff.saturating_add(ulen).min(data.len());
    p.udp_payload = data.get(uoff + 8..payload_end).unwrap_or(&[]);
    if dport != opts.roce_port {
        if opts.vxlan_ports.contains(dport) {
            return decode_vxlan(p, uoff + 8);
        }
        if opts.geneve_ports.contains(dport) {
            return decode_geneve(p, uoff + 8);
        }
        return Ok(None);
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
    err.map_or(Ok(None), Err)
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
