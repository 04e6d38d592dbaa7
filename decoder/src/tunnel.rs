//! Mirror and overlay encapsulations: GRE (RFC 2784, RFC 2890), ERSPAN types I, II and III
//! (draft-foschiano-erspan-03), VXLAN (RFC 7348), Geneve (RFC 8926), MPLS label stacks
//! (RFC 3032) and the pseudowire control word (RFC 4385).
//!
//! Each header is a small `nom` combinator over the frame's bytes returning a view that
//! borrows them, like the other headers of this crate. [`crate::decode`] unwraps them
//! (outermost first, at most [`Tunnels::MAX`] layers) into [`crate::Packet::tunnels`], and
//! the rest of the `Packet` describes the inner frame. An encapsulation it recognises but
//! cannot unwrap (GRE carrying another protocol, an unknown ERSPAN version, ...) is noted in
//! [`crate::Packet::tunnel_undecoded`], not reported as an error.

use crate::ip::Ip;
use crate::link::Vlans;
use crate::packet::Link;
use crate::wire::{be24, fixed, view};
use etherparse::UdpHeaderSlice;
use nom::{IResult, Needed};

/// The IANA UDP port for VXLAN (RFC 7348 §5).
pub const VXLAN_PORT: u16 = 4789;
/// The IANA UDP port for Geneve (RFC 8926 §3.3).
pub const GENEVE_PORT: u16 = 6081;
/// IP protocol number of GRE.
pub const IPPROTO_GRE: u8 = 47;

/// A GRE protocol type (an EtherType, RFC 2784 §2.4). Open: any value is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GreProto(pub u16);

impl GreProto {
    /// ERSPAN types I and II (draft-foschiano-erspan-03 §4.1, §4.2).
    pub const ERSPAN: GreProto = GreProto(0x88BE);
    /// ERSPAN type III (draft-foschiano-erspan-03 §4.3).
    pub const ERSPAN_III: GreProto = GreProto(0x22EB);
    /// Transparent Ethernet bridging ("gretap").
    pub const TEB: GreProto = GreProto(0x6558);
    /// IPv4 (L3 GRE).
    pub const IPV4: GreProto = GreProto(0x0800);
    /// IPv6 (L3 GRE).
    pub const IPV6: GreProto = GreProto(0x86DD);
    /// MPLS unicast (RFC 4023).
    pub const MPLS: GreProto = GreProto(0x8847);
    /// MPLS multicast (RFC 4023).
    pub const MPLS_MC: GreProto = GreProto(0x8848);
}

/// Named bits and lengths of the GRE header (RFC 2784 §2, RFC 2890 §2).
pub mod gre_field {
    /// C: a checksum and reserved1 word follow the base header.
    pub const CHECKSUM: u16 = 0x8000;
    /// R (RFC 1701 routing; must be 0 in RFC 2784): rocescope does not unwrap it.
    pub const ROUTING: u16 = 0x4000;
    /// K: a 4-byte key follows (RFC 2890 §2.1).
    pub const KEY: u16 = 0x2000;
    /// S: a 4-byte sequence number follows (RFC 2890 §2.2).
    pub const SEQ: u16 = 0x1000;
    /// Version, the low 3 bits of the first word (0; 1 is PPTP's enhanced GRE).
    pub const VERSION: u16 = 0x0007;
    /// Flags and version, protocol type.
    pub const BASE: core::ops::Range<usize> = 0..4;
}

/// A GRE header borrowed from a frame: the 4-byte base header and the optional checksum,
/// key and sequence words its flags announce (4 to 16 bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Gre<'a>(&'a [u8]);

impl<'a> Gre<'a> {
    /// `nom` parser: the base header, then as many optional words as the C, K and S flags
    /// announce.
    pub fn parse(input: &'a [u8]) -> IResult<&'a [u8], Self> {
        let (_, base) = fixed::<4>(input)?;
        let flags = u16::from_be_bytes([base[0], base[1]]);
        let len = 4
            + 4 * usize::from(flags & gre_field::CHECKSUM != 0)
            + 4 * usize::from(flags & gre_field::KEY != 0)
            + 4 * usize::from(flags & gre_field::SEQ != 0);
        match (input.get(..len), input.get(len..)) {
            (Some(h), Some(rest)) => Ok((rest, Gre(h))),
            _ => Err(nom::Err::Incomplete(Needed::new(len - input.len()))),
        }
    }
    fn word(&self, i: usize) -> u16 {
        match (self.0.get(i), self.0.get(i + 1)) {
            (Some(a), Some(b)) => u16::from_be_bytes([*a, *b]),
            _ => 0,
        }
    }
    fn u32_at(&self, i: usize) -> Option<u32> {
        self.0.get(i..i + 4).and_then(|s| s.first_chunk::<4>()).map(|b| u32::from_be_bytes(*b))
    }
    /// The flags and version word.
    pub fn flags(&self) -> u16 {
        self.word(0)
    }
    /// GRE version (0 for RFC 2784 GRE).
    pub fn version(&self) -> u8 {
        (self.flags() & gre_field::VERSION) as u8
    }
    /// The RFC 1701 routing bit.
    pub fn routing(&self) -> bool {
        self.flags() & gre_field::ROUTING != 0
    }
    /// The protocol type of the payload.
    pub fn protocol(&self) -> GreProto {
        GreProto(self.word(2))
    }
    /// The checksum, when the C bit is set.
    pub fn checksum(&self) -> Option<u16> {
        (self.flags() & gre_field::CHECKSUM != 0).then(|| self.word(4))
    }
    /// The key, when the K bit is set (RFC 2890 §2.1).
    pub fn key(&self) -> Option<u32> {
        let at = 4 + 4 * usize::from(self.flags() & gre_field::CHECKSUM != 0);
        if self.flags() & gre_field::KEY != 0 {
            self.u32_at(at)
        } else {
            None
        }
    }
    /// The sequence number, when the S bit is set (RFC 2890 §2.2). ERSPAN II and III carry
    /// one; its absence on protocol 0x88BE marks ERSPAN type I.
    pub fn seq(&self) -> Option<u32> {
        if self.flags() & gre_field::SEQ != 0 {
            self.u32_at(self.0.len().saturating_sub(4))
        } else {
            None
        }
    }
    /// Header length on the wire.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Never true: a GRE header has at least its 4-byte base.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The header's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

impl core::fmt::Debug for Gre<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gre")
            .field("flags", &self.flags())
            .field("protocol", &self.protocol())
            .field("key", &self.key())
            .field("seq", &self.seq())
            .finish()
    }
}

/// Named bit positions of the ERSPAN type II header (draft-foschiano-erspan-03 §4.2, Linux
/// `include/net/erspan.h`).
pub mod erspan2_field {
    /// Ver (4 bits, 1) and VLAN (12 bits).
    pub const VER_VLAN: core::ops::Range<usize> = 0..2;
    /// COS (3 bits), En (2 bits), T (1 bit), Session ID (10 bits).
    pub const COS_EN_T_SESSION: core::ops::Range<usize> = 2..4;
    /// Reserved (12 bits), Index (20 bits).
    pub const INDEX: core::ops::Range<usize> = 4..8;
}

view!(
    /// ERSPAN type II header (8 bytes, after a GRE header with a sequence number and protocol
    /// 0x88BE): draft-foschiano-erspan-03 §4.2.
    ErspanII,
    8
);
impl ErspanII<'_> {
    /// Version (1 for type II).
    pub const fn version(&self) -> u8 {
        self.0[0] >> 4
    }
    /// The VLAN of the mirrored frame at the source port (12 bits).
    pub const fn vlan(&self) -> u16 {
        u16::from_be_bytes([self.0[0] & 0x0F, self.0[1]])
    }
    /// Class of service of the mirrored frame (3 bits).
    pub const fn cos(&self) -> u8 {
        self.0[2] >> 5
    }
    /// En, the original encapsulation: 0 untagged, 1 ISL, 2 802.1Q, 3 tag kept in the frame.
    pub const fn encap(&self) -> u8 {
        (self.0[2] >> 3) & 3
    }
    /// T: the mirrored frame was truncated by the switch (e.g. SONiC `truncate_size`).
    pub const fn truncated(&self) -> bool {
        self.0[2] & 0x04 != 0
    }
    /// The mirror session ID (10 bits).
    pub const fn session_id(&self) -> u16 {
        u16::from_be_bytes([self.0[2] & 0x03, self.0[3]])
    }
    /// Index: the source port or module (20 bits).
    pub const fn index(&self) -> u32 {
        be24(self.0[5] & 0x0F, self.0[6], self.0[7])
    }
    /// Owned description.
    pub const fn repr(&self) -> (u8, u16, u8, u16, u32) {
        (self.version(), self.vlan(), self.cos(), self.session_id(), self.index())
    }
}

/// ERSPAN type III timestamp granularity (draft-foschiano-erspan-03 §4.3, "Gra"). Open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Granularity(pub u8);

impl Granularity {
    /// 00: 100 microseconds.
    pub const US_100: Granularity = Granularity(0);
    /// 01: 100 nanoseconds.
    pub const NS_100: Granularity = Granularity(1);
    /// 10: IEEE 1588 (seconds in the platform subheader, nanoseconds in the timestamp).
    pub const IEEE_1588: Granularity = Granularity(2);
    /// 11: user-defined.
    pub const USER: Granularity = Granularity(3);

    /// Display name.
    pub const fn name(self) -> &'static str {
        match self.0 {
            0 => "100us",
            1 => "100ns",
            2 => "IEEE 1588",
            _ => "user-defined",
        }
    }
    /// Nanoseconds per timestamp tick, for the granularities that define one.
    pub const fn tick_ns(self) -> Option<u64> {
        match self.0 {
            0 => Some(100_000),
            1 => Some(100),
            2 => Some(1),
            _ => None,
        }
    }
}

/// Named byte ranges of the ERSPAN type III header (draft-foschiano-erspan-03 §4.3).
pub mod erspan3_field {
    /// Ver (4 bits, 2) and VLAN (12 bits).
    pub const VER_VLAN: core::ops::Range<usize> = 0..2;
    /// COS (3), BSO (2), T (1), Session ID (10).
    pub const COS_BSO_T_SESSION: core::ops::Range<usize> = 2..4;
    /// Timestamp (32 bits, low part in the unit `Gra` gives).
    pub const TIMESTAMP: core::ops::Range<usize> = 4..8;
    /// Security group tag (16 bits).
    pub const SGT: core::ops::Range<usize> = 8..10;
    /// P (1), FT (5), HW ID (6), D (1), Gra (2), O (1).
    pub const FLAGS: core::ops::Range<usize> = 10..12;
}

view!(
    /// ERSPAN type III header (12 bytes, after a GRE header with protocol 0x22EB):
    /// draft-foschiano-erspan-03 §4.3.
    ErspanIII,
    12
);
impl ErspanIII<'_> {
    const fn flags(&self) -> u16 {
        u16::from_be_bytes([self.0[10], self.0[11]])
    }
    /// Version (2 for type III).
    pub const fn version(&self) -> u8 {
        self.0[0] >> 4
    }
    /// The VLAN of the mirrored frame (12 bits).
    pub const fn vlan(&self) -> u16 {
        u16::from_be_bytes([self.0[0] & 0x0F, self.0[1]])
    }
    /// Class of service of the mirrored frame (3 bits).
    pub const fn cos(&self) -> u8 {
        self.0[2] >> 5
    }
    /// BSO, bad/short/oversized: 0 good frame, 1 short, 2 oversized, 3 bad CRC.
    pub const fn bso(&self) -> u8 {
        (self.0[2] >> 3) & 3
    }
    /// T: the mirrored frame was truncated.
    pub const fn truncated(&self) -> bool {
        self.0[2] & 0x04 != 0
    }
    /// The mirror session ID (10 bits).
    pub const fn session_id(&self) -> u16 {
        u16::from_be_bytes([self.0[2] & 0x03, self.0[3]])
    }
    /// The timestamp (the low 32 bits, in ticks of [`Self::granularity`]).
    pub const fn timestamp(&self) -> u32 {
        u32::from_be_bytes([self.0[4], self.0[5], self.0[6], self.0[7]])
    }
    /// Security group tag.
    pub const fn sgt(&self) -> u16 {
        u16::from_be_bytes([self.0[8], self.0[9]])
    }
    /// P: the payload is an Ethernet frame with its FCS stripped (1) or a PDU.
    pub const fn p(&self) -> bool {
        self.flags() & 0x8000 != 0
    }
    /// FT, frame type (5 bits): 0 Ethernet, 2 IP.
    pub const fn frame_type(&self) -> u8 {
        ((self.flags() >> 10) & 0x1F) as u8
    }
    /// Hardware ID of the mirroring engine (6 bits).
    pub const fn hw_id(&self) -> u8 {
        ((self.flags() >> 4) & 0x3F) as u8
    }
    /// D: the direction mirrored, 0 ingress, 1 egress.
    pub const fn direction(&self) -> bool {
        self.flags() & 0x0008 != 0
    }
    /// Gra: the unit of the timestamp.
    pub const fn granularity(&self) -> Granularity {
        Granularity(((self.flags() >> 1) & 3) as u8)
    }
    /// O: an 8-byte platform-specific subheader follows.
    pub const fn optional(&self) -> bool {
        self.flags() & 0x0001 != 0
    }
    /// Owned description.
    pub const fn repr(&self) -> (u8, u16, u8, u16, u32, Granularity) {
        (self.version(), self.vlan(), self.cos(), self.session_id(), self.timestamp(), self.granularity())
    }
}

view!(
    /// ERSPAN type III platform-specific subheader (8 bytes, present when O = 1):
    /// Platf ID (6 bits) and 58 bits whose layout the platform ID selects
    /// (draft-foschiano-erspan-03 §4.3.1).
    ErspanPlatform,
    8
);
impl ErspanPlatform<'_> {
    /// Platform ID (6 bits).
    pub const fn platform_id(&self) -> u8 {
        self.0[0] >> 2
    }
    /// The 58 platform-specific bits.
    pub const fn info(&self) -> u64 {
        u64::from_be_bytes(*self.0) & 0x03FF_FFFF_FFFF_FFFF
    }
    /// The low 32 bits of the subheader: the upper 32 bits of the timestamp for platform ID
    /// 0x3, the timestamp's seconds for IDs 0x5 and 0x6 (draft §4.3.1; Wireshark
    /// `packet-erspan.c`); `None` for other platforms.
    pub const fn timestamp_high(&self) -> Option<u32> {
        match self.platform_id() {
            3 | 5 | 6 => Some(u32::from_be_bytes([self.0[4], self.0[5], self.0[6], self.0[7]])),
            _ => None,
        }
    }
    /// Owned description.
    pub const fn repr(&self) -> (u8, u64) {
        (self.platform_id(), self.info())
    }
}

/// Named byte ranges of the VXLAN header (RFC 7348 §5).
pub mod vxlan_field {
    /// Flags: I (0x08) says the VNI is valid.
    pub const FLAGS: usize = 0;
    /// Reserved (24 bits).
    pub const RESERVED1: core::ops::Range<usize> = 1..4;
    /// VXLAN network identifier (24 bits).
    pub const VNI: core::ops::Range<usize> = 4..7;
    /// Reserved (8 bits).
    pub const RESERVED2: usize = 7;
}

view!(
    /// VXLAN header (8 bytes, UDP 4789): RFC 7348 §5. An Ethernet frame follows.
    Vxlan,
    8
);
impl Vxlan<'_> {
    /// The flags byte.
    pub const fn flags(&self) -> u8 {
        self.0[0]
    }
    /// I: the VNI is valid (RFC 7348: must be 1).
    pub const fn vni_valid(&self) -> bool {
        self.0[0] & 0x08 != 0
    }
    /// VXLAN network identifier (24 bits).
    pub const fn vni(&self) -> u32 {
        be24(self.0[4], self.0[5], self.0[6])
    }
    /// Owned description.
    pub const fn repr(&self) -> (u8, u32) {
        (self.flags(), self.vni())
    }
}

/// Named byte ranges of the Geneve base header (RFC 8926 §3.4).
pub mod geneve_field {
    /// Ver (2 bits), Opt Len (6 bits, in 4-byte words).
    pub const VER_OPTLEN: usize = 0;
    /// O (0x80), C (0x40), reserved (6 bits).
    pub const FLAGS: usize = 1;
    /// Protocol type (an EtherType; 0x6558 for Ethernet).
    pub const PROTOCOL: core::ops::Range<usize> = 2..4;
    /// Virtual network identifier (24 bits).
    pub const VNI: core::ops::Range<usize> = 4..7;
}

/// A Geneve header (RFC 8926 §3.4): the 8-byte base header and its options, which rocescope
/// skips by their total length.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Geneve<'a> {
    base: &'a [u8; 8],
    options: &'a [u8],
}

impl<'a> Geneve<'a> {
    /// `nom` parser: the base header, then `Opt Len` × 4 bytes of options.
    pub fn parse(input: &'a [u8]) -> IResult<&'a [u8], Self> {
        let (rest, base) = fixed::<8>(input)?;
        let n = usize::from(base[0] & 0x3F) * 4;
        match (rest.get(..n), rest.get(n..)) {
            (Some(options), Some(rest)) => Ok((rest, Geneve { base, options })),
            _ => Err(nom::Err::Incomplete(Needed::new(n - rest.len()))),
        }
    }
    /// Version (0).
    pub const fn version(&self) -> u8 {
        self.base[0] >> 6
    }
    /// O: an OAM packet.
    pub const fn oam(&self) -> bool {
        self.base[1] & 0x80 != 0
    }
    /// C: critical options are present.
    pub const fn critical(&self) -> bool {
        self.base[1] & 0x40 != 0
    }
    /// Protocol type of the payload.
    pub const fn protocol(&self) -> GreProto {
        GreProto(u16::from_be_bytes([self.base[2], self.base[3]]))
    }
    /// Virtual network identifier (24 bits).
    pub const fn vni(&self) -> u32 {
        be24(self.base[4], self.base[5], self.base[6])
    }
    /// The options (undecoded TLVs).
    pub const fn options(&self) -> &'a [u8] {
        self.options
    }
    /// Header length with options.
    pub const fn len(&self) -> usize {
        8 + self.options.len()
    }
    /// Never true.
    pub const fn is_empty(&self) -> bool {
        false
    }
}

impl core::fmt::Debug for Geneve<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Geneve")
            .field("protocol", &self.protocol())
            .field("vni", &self.vni())
            .field("options", &self.options.len())
            .finish()
    }
}

/// Named bit positions of an MPLS label stack entry (RFC 3032 §2.1).
pub mod mpls_field {
    /// Label (20 bits), TC (3 bits), S (1 bit), TTL (8 bits), in one 32-bit word.
    pub const ENTRY: core::ops::Range<usize> = 0..4;
    /// Reserved label: IPv4 explicit NULL (RFC 3032 §2.1).
    pub const IPV4_EXPLICIT_NULL: u32 = 0;
    /// Reserved label: IPv6 explicit NULL.
    pub const IPV6_EXPLICIT_NULL: u32 = 2;
}

view!(
    /// One MPLS label stack entry (RFC 3032 §2.1).
    MplsLabel,
    4
);
impl MplsLabel<'_> {
    const fn word(&self) -> u32 {
        u32::from_be_bytes(*self.0)
    }
    /// Label value (20 bits).
    pub const fn label(&self) -> u32 {
        self.word() >> 12
    }
    /// Traffic class (3 bits; formerly EXP).
    pub const fn tc(&self) -> u8 {
        ((self.word() >> 9) & 7) as u8
    }
    /// S: bottom of stack.
    pub const fn bottom(&self) -> bool {
        self.word() & 0x100 != 0
    }
    /// Time to live.
    pub const fn ttl(&self) -> u8 {
        self.0[3]
    }
    /// Owned description.
    pub const fn repr(&self) -> (u32, u8, bool, u8) {
        (self.label(), self.tc(), self.bottom(), self.ttl())
    }
}

/// An MPLS label stack borrowed from a frame: whole 4-byte entries, the last with S = 1.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MplsStack<'a>(&'a [u8]);

impl<'a> MplsStack<'a> {
    /// Most labels unwrapped; a deeper stack is reported as malformed.
    pub const MAX: usize = 16;

    /// `nom` parser: entries up to and including the one with the bottom-of-stack bit.
    /// `Err(nom::Err::Error)` when no bottom appears within [`Self::MAX`] entries.
    pub fn parse(input: &'a [u8]) -> IResult<&'a [u8], Self> {
        let mut rest = input;
        for n in 1..=Self::MAX {
            let (r, e) = MplsLabel::parse(rest)?;
            rest = r;
            if e.bottom() {
                let len = n * 4;
                return Ok((rest, MplsStack(input.get(..len).unwrap_or(&[]))));
            }
        }
        Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::TooLarge)))
    }
    /// The entries, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = MplsLabel<'a>> + 'a {
        self.0.chunks_exact(4).filter_map(|c| c.first_chunk::<4>()).map(MplsLabel::new)
    }
    /// Number of labels.
    pub const fn len(&self) -> usize {
        self.0.len() / 4
    }
    /// Never true for a parsed stack.
    pub const fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The bottom-of-stack entry.
    pub fn bottom(&self) -> Option<MplsLabel<'a>> {
        self.iter().last()
    }
    /// The stack's bytes.
    pub const fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

impl core::fmt::Debug for MplsStack<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter().map(|l| l.repr())).finish()
    }
}

view!(
    /// The pseudowire control word (RFC 4385 §3): `0000`, flags (4), FRG (2), length (6),
    /// sequence number (16).
    PwControlWord,
    4
);
impl PwControlWord<'_> {
    /// The four flag bits.
    pub const fn flags(&self) -> u8 {
        self.0[0] & 0x0F
    }
    /// FRG: fragmentation bits (2).
    pub const fn frg(&self) -> u8 {
        self.0[1] >> 6
    }
    /// Length (6 bits): padding indication for short payloads.
    pub const fn length(&self) -> u8 {
        self.0[1] & 0x3F
    }
    /// Sequence number (0 when not used).
    pub const fn seq(&self) -> u16 {
        u16::from_be_bytes([self.0[2], self.0[3]])
    }
    /// Owned description.
    pub const fn repr(&self) -> (u8, u8, u8, u16) {
        (self.flags(), self.frg(), self.length(), self.seq())
    }
}

/// What follows an MPLS label stack. MPLS does not say (RFC 3032 §2.2), so the decoder
/// guesses, much as Wireshark does:
///
/// 1. the bottom label 0 (IPv4 explicit NULL) or 2 (IPv6 explicit NULL) decides;
/// 2. otherwise the first nibble of the payload: 4 is IPv4, 6 is IPv6, 1 an associated
///    channel (RFC 5586, noted as not decoded);
/// 3. 0 is the RFC 4385 control word and then an Ethernet frame (an Ethernet pseudowire,
///    RFC 4448) — unless the bytes read better as an Ethernet frame without control word
///    (a frame to a MAC beginning with the nibble 0, such as `02:...`): a known EtherType
///    at byte 12 (IPv4, IPv6, VLAN, QinQ, RoCEv1, MAC Control, MPLS, ARP, LLDP), the more
///    so when what it announces follows (an IPv4 or IPv6 header of that version, a VLAN
///    tag and a known EtherType), against the same reading at byte 16 after a control
///    word; a VLAN TPID at byte 12 decides for no control word, a tie for one;
/// 4. any other nibble is an Ethernet pseudowire without control word.
///
/// The guess is wrong for an Ethernet pseudowire without control word whose destination
/// MAC begins with the nibble 4 or 6 (read as IP), which is why RFC 4385 and RFC 4928
/// recommend the control word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MplsPayload {
    /// An IPv4 packet.
    Ipv4,
    /// An IPv6 packet.
    Ipv6,
    /// An Ethernet frame (pseudowire), after a control word when there is one.
    Ethernet,
}

/// The encapsulation of one tunnel layer, with its headers borrowed from the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encap<'a> {
    /// ERSPAN type I: GRE 0x88BE without a sequence number, then the mirrored frame.
    ErspanI {
        /// The GRE header.
        gre: Gre<'a>,
    },
    /// ERSPAN type II: GRE 0x88BE with a sequence number, the 8-byte ERSPAN header.
    ErspanII {
        /// The GRE header.
        gre: Gre<'a>,
        /// The ERSPAN header.
        erspan: ErspanII<'a>,
    },
    /// ERSPAN type III: GRE 0x22EB, the 12-byte header and the optional platform subheader.
    ErspanIII {
        /// The GRE header.
        gre: Gre<'a>,
        /// The ERSPAN header.
        erspan: ErspanIII<'a>,
        /// The platform-specific subheader (when O = 1).
        platform: Option<ErspanPlatform<'a>>,
    },
    /// GRE carrying Ethernet (0x6558, "gretap"), IPv4/IPv6 (L3 GRE) or MPLS: `gre.protocol()`
    /// says which.
    Gre {
        /// The GRE header.
        gre: Gre<'a>,
    },
    /// VXLAN over UDP.
    Vxlan(Vxlan<'a>),
    /// Geneve over UDP.
    Geneve(Geneve<'a>),
    /// An MPLS label stack and what it carries.
    Mpls {
        /// The labels, outermost first.
        labels: MplsStack<'a>,
        /// The pseudowire control word, when the payload is an Ethernet pseudowire with one.
        control_word: Option<PwControlWord<'a>>,
        /// What follows the stack (see [`MplsPayload`] for the heuristic).
        payload: MplsPayload,
    },
}

/// The kind of a tunnel layer, for display and matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TunnelKind {
    /// ERSPAN type I.
    ErspanI,
    /// ERSPAN type II.
    ErspanII,
    /// ERSPAN type III.
    ErspanIII,
    /// GRE transparent Ethernet bridging.
    Gretap,
    /// GRE carrying IPv4, IPv6 or MPLS.
    Gre,
    /// VXLAN.
    Vxlan,
    /// Geneve.
    Geneve,
    /// MPLS.
    Mpls,
}

impl TunnelKind {
    /// Short display name ("ERSPAN II", "VXLAN", ...).
    pub const fn name(self) -> &'static str {
        match self {
            TunnelKind::ErspanI => "ERSPAN I",
            TunnelKind::ErspanII => "ERSPAN II",
            TunnelKind::ErspanIII => "ERSPAN III",
            TunnelKind::Gretap => "GRETAP",
            TunnelKind::Gre => "GRE",
            TunnelKind::Vxlan => "VXLAN",
            TunnelKind::Geneve => "Geneve",
            TunnelKind::Mpls => "MPLS",
        }
    }
    /// Stable key for JSON (`erspan1`, `erspan2`, `erspan3`, `gretap`, `gre`, `vxlan`,
    /// `geneve`, `mpls`).
    pub const fn key(self) -> &'static str {
        match self {
            TunnelKind::ErspanI => "erspan1",
            TunnelKind::ErspanII => "erspan2",
            TunnelKind::ErspanIII => "erspan3",
            TunnelKind::Gretap => "gretap",
            TunnelKind::Gre => "gre",
            TunnelKind::Vxlan => "vxlan",
            TunnelKind::Geneve => "geneve",
            TunnelKind::Mpls => "mpls",
        }
    }
}

/// One unwrapped tunnel layer: the outer headers that carried it and its encapsulation.
/// Offsets are from the start of the captured frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunnel<'a> {
    /// The link-layer header that carried this layer: the frame's own for the outermost
    /// layer, the previous layer's inner Ethernet for nested ones (the last link-layer
    /// header before it when the previous layer carried IP or MPLS directly).
    pub link: Link<'a>,
    /// The VLAN tags before this layer's network header.
    pub vlans: Vlans,
    /// The outer IP header (`None` for MPLS, which sits on the link layer).
    pub ip: Option<Ip<'a>>,
    /// The outer UDP header (VXLAN and Geneve).
    pub udp: Option<UdpHeaderSlice<'a>>,
    /// The encapsulation.
    pub encap: Encap<'a>,
    /// Where the encapsulation header (GRE, UDP payload, first MPLS label) starts.
    pub offset: usize,
    /// Where the inner frame (Ethernet) or packet (IP, MPLS) starts.
    pub inner_offset: usize,
}

impl Tunnel<'_> {
    /// The kind of this layer.
    pub fn kind(&self) -> TunnelKind {
        match self.encap {
            Encap::ErspanI { .. } => TunnelKind::ErspanI,
            Encap::ErspanII { .. } => TunnelKind::ErspanII,
            Encap::ErspanIII { .. } => TunnelKind::ErspanIII,
            Encap::Gre { gre } if gre.protocol() == GreProto::TEB => TunnelKind::Gretap,
            Encap::Gre { .. } => TunnelKind::Gre,
            Encap::Vxlan(_) => TunnelKind::Vxlan,
            Encap::Geneve(_) => TunnelKind::Geneve,
            Encap::Mpls { .. } => TunnelKind::Mpls,
        }
    }
    /// The ERSPAN session ID (types II and III).
    pub fn erspan_session(&self) -> Option<u16> {
        match self.encap {
            Encap::ErspanII { erspan, .. } => Some(erspan.session_id()),
            Encap::ErspanIII { erspan, .. } => Some(erspan.session_id()),
            _ => None,
        }
    }
    /// The ERSPAN COS of the mirrored frame (types II and III).
    pub fn erspan_cos(&self) -> Option<u8> {
        match self.encap {
            Encap::ErspanII { erspan, .. } => Some(erspan.cos()),
            Encap::ErspanIII { erspan, .. } => Some(erspan.cos()),
            _ => None,
        }
    }
    /// The ERSPAN VLAN of the mirrored frame (types II and III).
    pub fn erspan_vlan(&self) -> Option<u16> {
        match self.encap {
            Encap::ErspanII { erspan, .. } => Some(erspan.vlan()),
            Encap::ErspanIII { erspan, .. } => Some(erspan.vlan()),
            _ => None,
        }
    }
    /// The VXLAN or Geneve network identifier.
    pub fn vni(&self) -> Option<u32> {
        match self.encap {
            Encap::Vxlan(v) => Some(v.vni()),
            Encap::Geneve(g) => Some(g.vni()),
            _ => None,
        }
    }
    /// The mirror session or virtual network this layer belongs to: the ERSPAN session ID or
    /// the VXLAN/Geneve VNI (for the analyzer's capture point).
    pub fn session(&self) -> Option<u32> {
        self.erspan_session().map(u32::from).or_else(|| self.vni())
    }
    /// The ERSPAN III timestamp as (ticks, granularity), with the platform subheader's high
    /// 32 bits when it carries them (platform IDs 0x3, 0x5, 0x6).
    pub fn erspan_timestamp(&self) -> Option<(u32, Granularity, Option<u32>)> {
        match self.encap {
            Encap::ErspanIII { erspan, platform, .. } => {
                Some((erspan.timestamp(), erspan.granularity(), platform.and_then(|p| p.timestamp_high())))
            }
            _ => None,
        }
    }
}

/// The tunnel layers of a frame, outermost first. Fixed capacity: no allocation per packet.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Tunnels<'a> {
    layers: [Option<Tunnel<'a>>; Tunnels::MAX],
    len: u8,
}

impl<'a> Tunnels<'a> {
    /// Most tunnel layers unwrapped; a frame with more is reported as malformed
    /// (`Layer::Tunnel`), so hostile nesting costs a bounded amount of work.
    pub const MAX: usize = 4;

    /// The layers, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = &Tunnel<'a>> {
        self.layers.iter().take(usize::from(self.len)).flatten()
    }
    /// Number of layers.
    pub const fn len(&self) -> usize {
        self.len as usize
    }
    /// True when the frame was not tunnelled.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The outermost layer.
    pub fn outermost(&self) -> Option<&Tunnel<'a>> {
        self.layers.first().and_then(|l| l.as_ref())
    }
    /// The innermost layer (the one around the inner frame).
    pub fn innermost(&self) -> Option<&Tunnel<'a>> {
        self.iter().last()
    }
    /// Add a layer; false when full.
    pub fn push(&mut self, t: Tunnel<'a>) -> bool {
        match self.layers.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = Some(t);
                self.len += 1;
                true
            }
            None => false,
        }
    }
}

/// Why an encapsulation was recognised but not unwrapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UndecodedReason {
    /// GRE carrying a protocol rocescope does not unwrap.
    GreProtocol(u16),
    /// GRE with a version other than 0 (1 is PPTP) or the RFC 1701 routing bit.
    GreVersion(u16),
    /// An ERSPAN header with an unknown version.
    ErspanVersion(u8),
    /// An ERSPAN III frame type other than Ethernet (0) or IP (2).
    ErspanFrameType(u8),
    /// Geneve with a version other than 0 or a protocol type it does not unwrap.
    GeneveProtocol(u16),
    /// An MPLS payload that is none of IPv4, IPv6 or Ethernet (an associated channel).
    MplsPayload(u8),
    /// IP-in-IP (protocol 4) or IPv6-in-IP (protocol 41).
    IpInIp(u8),
}

impl core::fmt::Display for UndecodedReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            UndecodedReason::GreProtocol(p) => write!(f, "GRE proto 0x{p:04x}"),
            UndecodedReason::GreVersion(v) => write!(f, "GRE flags/version 0x{v:04x}"),
            UndecodedReason::ErspanVersion(v) => write!(f, "ERSPAN version {v}"),
            UndecodedReason::ErspanFrameType(t) => write!(f, "ERSPAN III frame type {t}"),
            UndecodedReason::GeneveProtocol(p) => write!(f, "Geneve protocol 0x{p:04x}"),
            UndecodedReason::MplsPayload(n) => write!(f, "MPLS payload nibble {n}"),
            UndecodedReason::IpInIp(p) => write!(f, "IP protocol {p}"),
        }
    }
}

/// A tunnel the decoder recognised but did not unwrap: the frame is neither malformed nor
/// plain non-RoCE, and the report counts it apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Undecoded {
    /// Offset of the encapsulation header that stopped unwrapping.
    pub offset: usize,
    /// Why.
    pub reason: UndecodedReason,
}

impl core::fmt::Display for Undecoded {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "tunnel not decoded ({}) at offset {}", self.reason, self.offset)
    }
}
