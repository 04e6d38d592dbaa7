//! Decode errors that say which layer stopped decoding, where, and why.

use core::fmt;

/// The protocol layer a decode error belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Ethernet II header.
    Ethernet,
    /// Linux cooked capture v1 (SLL) header.
    Sll,
    /// Linux cooked capture v2 (SLL2) header.
    Sll2,
    /// 802.1Q / 802.1ad tag.
    Vlan,
    /// IPv4 header.
    Ipv4,
    /// IPv6 header.
    Ipv6,
    /// UDP header.
    Udp,
    /// RoCEv1 Global Route Header.
    Grh,
    /// InfiniBand Base Transport Header.
    Bth,
    /// An extended transport header (named by `ExtKind`).
    Ext(crate::opcode::ExtKind),
    /// The IB payload, pad and ICRC region.
    Payload,
    /// MAC Control (0x8808) frame.
    MacControl,
    /// The link type itself.
    Link,
    /// A GRE header (RFC 2784, RFC 2890).
    Gre,
    /// An ERSPAN header (draft-foschiano-erspan-03).
    Erspan,
    /// A VXLAN header (RFC 7348).
    Vxlan,
    /// A Geneve header (RFC 8926).
    Geneve,
    /// An MPLS label stack or pseudowire control word (RFC 3032, RFC 4385).
    Mpls,
    /// The tunnel nesting itself (more layers than `Tunnels::MAX`).
    Tunnel,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Layer::Ethernet => "Ethernet",
            Layer::Sll => "Linux SLL",
            Layer::Sll2 => "Linux SLL2",
            Layer::Vlan => "VLAN tag",
            Layer::Ipv4 => "IPv4",
            Layer::Ipv6 => "IPv6",
            Layer::Udp => "UDP",
            Layer::Grh => "GRH",
            Layer::Bth => "BTH",
            Layer::Ext(k) => k.name(),
            Layer::Payload => "IB payload",
            Layer::MacControl => "MAC Control",
            Layer::Link => "link layer",
            Layer::Gre => "GRE",
            Layer::Erspan => "ERSPAN",
            Layer::Vxlan => "VXLAN",
            Layer::Geneve => "Geneve",
            Layer::Mpls => "MPLS",
            Layer::Tunnel => "tunnel",
        };
        f.write_str(s)
    }
}

/// Why decoding stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The header needs more bytes than the frame holds.
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes available from its offset.
        available: usize,
    },
    /// A field holds a value that makes the rest undecodable.
    Invalid(&'static str),
    /// The capture's link type is not one rocescope decodes.
    UnsupportedLinkType(u32),
}

/// A decode error: the layer, the byte offset in the frame where that layer starts, and the
/// reason. A frame that fails part-way keeps every layer decoded before the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The layer that failed.
    pub layer: Layer,
    /// Offset of that layer in the frame.
    pub offset: usize,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl DecodeError {
    /// A truncation error for `layer` at `offset`.
    pub const fn truncated(layer: Layer, offset: usize, needed: usize, available: usize) -> Self {
        DecodeError { layer, offset, kind: ErrorKind::Truncated { needed, available } }
    }

    /// An invalid-field error for `layer` at `offset`.
    pub const fn invalid(layer: Layer, offset: usize, why: &'static str) -> Self {
        DecodeError { layer, offset, kind: ErrorKind::Invalid(why) }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Truncated { needed, available } => write!(
                f,
                "{} at offset {}: truncated, needs {} bytes but {} remain",
                self.layer, self.offset, needed, available
            ),
            ErrorKind::Invalid(why) => {
                write!(f, "{} at offset {}: {}", self.layer, self.offset, why)
            }
            ErrorKind::UnsupportedLinkType(lt) => write!(f, "unsupported link type {lt}"),
        }
    }
}

impl std::error::Error for DecodeError {}
