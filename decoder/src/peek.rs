//! A glance at a frame's outer headers, far cheaper than [`crate::decode`]: the IP
//! addresses of a plain RoCEv2 frame (Ethernet, up to four VLAN tags, IPv4 or IPv6, UDP to
//! the RoCE port). A parallel analysis uses it to tell, without decoding, whose frame it is
//! (each thread decodes only its own).
//!
//! The promise, checked by property tests against the decoder: when [`roce_v2`]
//! names two addresses and [`crate::decode`] finds RoCE in the frame with no tunnel, the
//! decoder's IP source and destination are those two. A frame it cannot vouch for gets
//! `None` (the caller then decodes it).

use crate::link::{ethertype, LinkType, Vlans};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What [`roce_v2`] saw of a plain RoCEv2 frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Glance {
    /// IP source.
    pub src: IpAddr,
    /// IP destination.
    pub dst: IpAddr,
    /// The UDP header's length field (UDP header included), as the frame states it.
    pub udp_len: u16,
    /// The BTH opcode byte, when the record holds it.
    pub opcode: Option<u8>,
}

/// What is needed to tell a plain RoCEv2 frame's owner: Ethernet, at most four VLAN tags,
/// an IPv4 header (not a fragment) or an IPv6 header whose next header is UDP, and UDP to
/// `roce_port`. `None` for anything else (other link types, tunnels, IPv6 extension headers,
/// short frames).
pub fn roce_v2(link_type: LinkType, data: &[u8], roce_port: u16) -> Option<Glance> {
    if link_type != LinkType::ETHERNET {
        return None;
    }
    let be16 = |at: usize| data.get(at..)?.first_chunk::<2>().map(|b| u16::from_be_bytes(*b));
    let mut off = 12;
    let mut etype = be16(off)?;
    off += 2;
    let mut tags = 0;
    while ethertype::is_vlan(etype) {
        tags += 1;
        if tags > Vlans::MAX {
            return None;
        }
        etype = be16(off + 2)?;
        off += 4;
    }
    let (src, dst, udp) = match etype {
        ethertype::IPV4 => {
            let h: &[u8; 20] = data.get(off..)?.first_chunk()?;
            let [vihl, _, _, _, _, _, f0, f1, _, proto, _, _, s0, s1, s2, s3, d0, d1, d2, d3] = *h;
            let ihl = usize::from(vihl & 0x0F) * 4;
            // Version 4, IHL at least 5, protocol UDP, neither more fragments nor an offset.
            if vihl >> 4 != 4 || ihl < 20 || proto != 17 || u16::from_be_bytes([f0, f1]) & 0x3FFF != 0 {
                return None;
            }
            let src = Ipv4Addr::new(s0, s1, s2, s3);
            let dst = Ipv4Addr::new(d0, d1, d2, d3);
            (IpAddr::V4(src), IpAddr::V4(dst), off + ihl)
        }
        ethertype::IPV6 => {
            let (_, _, s, d) = ipv6_udp(data, off)?;
            (IpAddr::V6(s), IpAddr::V6(d), off + 40)
        }
        _ => return None,
    };
    // The UDP header must be whole, as the decoder needs it.
    data.get(udp..udp + 8)?;
    if be16(udp + 2)? != roce_port {
        return None;
    }
    Some(Glance { src, dst, udp_len: be16(udp + 4)?, opcode: data.get(udp + 8).copied() })
}

/// The IPv6 header at `off` when it is version 6 with UDP next: the whole header, its first
/// eight bytes (version, traffic class, flow label, payload length, next header, hop limit),
/// source and destination. Shared by the glance and the fast path's classifier (`fast`).
pub(crate) fn ipv6_udp(data: &[u8], off: usize) -> Option<(&[u8; 40], [u8; 8], Ipv6Addr, Ipv6Addr)> {
    let h: &[u8; 40] = data.get(off..)?.first_chunk()?;
    let (fixed, addrs) = h.split_first_chunk::<8>()?;
    let (s, d) = addrs.split_first_chunk::<16>()?;
    let d: &[u8; 16] = d.first_chunk()?;
    if fixed[0] >> 4 != 6 || fixed[6] != 17 {
        return None;
    }
    Some((h, *fixed, Ipv6Addr::from(*s), Ipv6Addr::from(*d)))
}
