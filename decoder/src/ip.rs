//! IPv4 and IPv6 headers (parsed by `etherparse`), with the DSCP/ECN split RoCE cares about.

use core::net::IpAddr;
use etherparse::{Ipv4HeaderSlice, Ipv6HeaderSlice};

/// ECN codepoint (RFC 3168; reference §1.9): the two low bits of TOS / traffic class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ecn {
    /// `00`: not ECN-capable.
    NotEct = 0,
    /// `01`: ECT(1).
    Ect1 = 1,
    /// `10`: ECT(0).
    Ect0 = 2,
    /// `11`: congestion experienced.
    Ce = 3,
}

impl Ecn {
    /// From the two low bits of a TOS / traffic-class byte.
    pub const fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// Display name.
    pub const fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "Not-ECT",
            Ecn::Ect1 => "ECT(1)",
            Ecn::Ect0 => "ECT(0)",
            Ecn::Ce => "CE",
        }
    }
}

/// An IP header borrowed from a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ip<'a> {
    /// IPv4, options included.
    V4(Ipv4HeaderSlice<'a>),
    /// IPv6 fixed header.
    V6(Ipv6HeaderSlice<'a>),
}

impl<'a> Ip<'a> {
    /// 4 or 6.
    pub fn version(&self) -> u8 {
        match self {
            Ip::V4(_) => 4,
            Ip::V6(_) => 6,
        }
    }
    /// The header bytes (IPv4 with options; the 40-byte IPv6 header).
    pub fn header(&self) -> &'a [u8] {
        match self {
            Ip::V4(h) => h.slice(),
            Ip::V6(h) => h.slice(),
        }
    }
    /// The TOS / traffic-class byte.
    pub fn tos(&self) -> u8 {
        match self {
            Ip::V4(h) => h.slice().get(1).copied().unwrap_or(0),
            Ip::V6(h) => h.traffic_class(),
        }
    }
    /// DSCP: the six high bits of TOS / traffic class.
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }
    /// ECN codepoint.
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.tos())
    }
    /// TTL (IPv4) or hop limit (IPv6).
    pub fn ttl(&self) -> u8 {
        match self {
            Ip::V4(h) => h.ttl(),
            Ip::V6(h) => h.hop_limit(),
        }
    }
    /// What its sender numbers each packet with: the IPv4 identification, or the IPv6 flow
    /// label. Two frames with the same non-zero value, addresses and transport headers are
    /// copies of one packet (a mirror that saw it twice), not two sends of it.
    pub fn ident(&self) -> u32 {
        match self {
            Ip::V4(h) => u32::from(h.identification()),
            Ip::V6(h) => h.flow_label().value(),
        }
    }
    /// IPv4 total length, or IPv6 payload length, as the header states it.
    pub fn len_field(&self) -> u16 {
        match self {
            Ip::V4(h) => h.total_len(),
            Ip::V6(h) => h.payload_length(),
        }
    }
    /// Bytes from the start of the IP header to the end of the IP packet, per the header.
    pub fn declared_len(&self) -> usize {
        match self {
            Ip::V4(h) => usize::from(h.total_len()),
            Ip::V6(h) => 40 + usize::from(h.payload_length()),
        }
    }
    /// Source address.
    pub fn src(&self) -> IpAddr {
        match self {
            Ip::V4(h) => IpAddr::V4(h.source_addr()),
            Ip::V6(h) => IpAddr::V6(h.source_addr()),
        }
    }
    /// Destination address.
    pub fn dst(&self) -> IpAddr {
        match self {
            Ip::V4(h) => IpAddr::V4(h.destination_addr()),
            Ip::V6(h) => IpAddr::V6(h.destination_addr()),
        }
    }
    /// The next protocol (IPv4 protocol / IPv6 next header).
    pub fn protocol(&self) -> u8 {
        match self {
            Ip::V4(h) => h.protocol().0,
            Ip::V6(h) => h.next_header().0,
        }
    }
    /// True for an IPv4 fragment (MF set or a non-zero offset) or an IPv6 fragment header.
    /// Fragments are reported, not decoded further.
    pub fn is_fragment(&self) -> bool {
        match self {
            Ip::V4(h) => h.more_fragments() || h.fragments_offset().value() != 0,
            Ip::V6(h) => h.next_header().0 == 44,
        }
    }
}
