//! Link layers: the capture link type, Ethernet II, 802.1Q/QinQ tags and Linux cooked
//! captures (SLL for `-i any` on older libpcap, SLL2 on newer).

use crate::wire::view;

/// A capture link type (LINKTYPE_* value). Open: unknown values are kept, and decode
/// reports them as unsupported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// LINKTYPE_ETHERNET.
    pub const ETHERNET: LinkType = LinkType(1);
    /// LINKTYPE_RAW (raw IPv4 or IPv6; DLT_RAW is 12 or 14 on some BSDs).
    pub const RAW: LinkType = LinkType(101);
    /// LINKTYPE_LINUX_SLL.
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// LINKTYPE_ERF (Endace; native InfiniBand captures use it).
    pub const ERF: LinkType = LinkType(197);
    /// LINKTYPE_IPV4.
    pub const IPV4: LinkType = LinkType(228);
    /// LINKTYPE_IPV6.
    pub const IPV6: LinkType = LinkType(229);
    /// LINKTYPE_LINUX_SLL2.
    pub const LINUX_SLL2: LinkType = LinkType(276);

    /// A short name for display.
    pub const fn name(self) -> &'static str {
        match self.0 {
            1 => "Ethernet",
            12 | 14 | 101 => "Raw IP",
            113 => "Linux SLL",
            197 => "ERF",
            228 => "Raw IPv4",
            229 => "Raw IPv6",
            276 => "Linux SLL2",
            _ => "unknown",
        }
    }
}

/// Well-known EtherTypes.
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// IPv6.
    pub const IPV6: u16 = 0x86DD;
    /// 802.1Q customer tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service tag (QinQ outer).
    pub const QINQ: u16 = 0x88A8;
    /// Pre-standard QinQ outer tag.
    pub const QINQ_OLD: u16 = 0x9100;
    /// RoCEv1 (IB GRH follows).
    pub const ROCE_V1: u16 = 0x8915;
    /// MAC Control (PAUSE, PFC).
    pub const MAC_CONTROL: u16 = 0x8808;
    /// MPLS unicast (RFC 3032 §5).
    pub const MPLS: u16 = 0x8847;
    /// MPLS multicast (RFC 3032 §5).
    pub const MPLS_MC: u16 = 0x8848;

    /// True for the tag protocol identifiers rocescope unwraps.
    pub const fn is_vlan(t: u16) -> bool {
        matches!(t, VLAN | QINQ | QINQ_OLD)
    }
}

view!(
    /// Ethernet II header: destination, source, EtherType.
    Ethernet,
    14
);
impl Ethernet<'_> {
    /// Destination MAC.
    pub fn dst(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.0[0..6]);
        m
    }
    /// Source MAC.
    pub fn src(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.0[6..12]);
        m
    }
    /// EtherType (or TPID when tagged).
    pub const fn ethertype(&self) -> u16 {
        u16::from_be_bytes([self.0[12], self.0[13]])
    }
    /// Owned description.
    pub fn repr(&self) -> EthernetRepr {
        EthernetRepr { dst: self.dst(), src: self.src(), ethertype: self.ethertype() }
    }
}

/// Owned Ethernet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EthernetRepr {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// EtherType.
    pub ethertype: u16,
}
impl EthernetRepr {
    /// Wire bytes.
    pub fn emit(&self) -> [u8; 14] {
        let mut b = [0u8; 14];
        b[0..6].copy_from_slice(&self.dst);
        b[6..12].copy_from_slice(&self.src);
        b[12..].copy_from_slice(&self.ethertype.to_be_bytes());
        b
    }
}

/// One 802.1Q / 802.1ad tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct VlanTag {
    /// The TPID that introduced this tag (0x8100, 0x88A8 or 0x9100).
    pub tpid: u16,
    /// Priority code point (802.1p priority, 0-7).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier (12 bits).
    pub vid: u16,
}

impl VlanTag {
    /// Wire bytes of the TCI (the TPID is written by the preceding header).
    pub const fn emit_tci(&self) -> [u8; 2] {
        let tci = ((self.pcp as u16 & 7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0FFF);
        tci.to_be_bytes()
    }
    pub(crate) const fn from_tci(tpid: u16, tci: u16) -> Self {
        VlanTag { tpid, pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0x0FFF }
    }
}

/// The VLAN tags of a frame, outermost first. Fixed capacity: no allocation per packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Vlans {
    tags: [VlanTag; Vlans::MAX],
    len: u8,
}

impl Vlans {
    /// Most tags decoded before the frame is reported as malformed.
    pub const MAX: usize = 4;

    /// The tags, outermost first.
    pub fn as_slice(&self) -> &[VlanTag] {
        self.tags.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Number of tags.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the frame is untagged.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The innermost tag's PCP, which is what a switch classifies on.
    pub fn pcp(&self) -> Option<u8> {
        self.as_slice().last().map(|t| t.pcp)
    }

    /// Add a tag; false when full.
    pub fn push(&mut self, tag: VlanTag) -> bool {
        match self.tags.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = tag;
                self.len += 1;
                true
            }
            None => false,
        }
    }
}

view!(
    /// Linux cooked capture v1 header (16 bytes).
    Sll,
    16
);
impl Sll<'_> {
    /// Packet type (0 to us, 4 outgoing, ...).
    pub const fn packet_type(&self) -> u16 {
        u16::from_be_bytes([self.0[0], self.0[1]])
    }
    /// ARPHRD_ type.
    pub const fn hatype(&self) -> u16 {
        u16::from_be_bytes([self.0[2], self.0[3]])
    }
    /// Link-layer address length.
    pub const fn halen(&self) -> u16 {
        u16::from_be_bytes([self.0[4], self.0[5]])
    }
    /// Link-layer address bytes (first `halen`, at most 8).
    pub fn addr(&self) -> &[u8] {
        let n = usize::from(self.halen()).min(8);
        self.0.get(6..6 + n).unwrap_or(&[])
    }
    /// Protocol (EtherType).
    pub const fn protocol(&self) -> u16 {
        u16::from_be_bytes([self.0[14], self.0[15]])
    }
    /// Owned description.
    pub const fn repr(&self) -> (u16, u16, u16) {
        (self.packet_type(), self.hatype(), self.protocol())
    }
}

view!(
    /// Linux cooked capture v2 header (20 bytes).
    Sll2,
    20
);
impl Sll2<'_> {
    /// Protocol (EtherType).
    pub const fn protocol(&self) -> u16 {
        u16::from_be_bytes([self.0[0], self.0[1]])
    }
    /// Interface index.
    pub const fn ifindex(&self) -> u32 {
        u32::from_be_bytes([self.0[4], self.0[5], self.0[6], self.0[7]])
    }
    /// ARPHRD_ type.
    pub const fn hatype(&self) -> u16 {
        u16::from_be_bytes([self.0[8], self.0[9]])
    }
    /// Packet type.
    pub const fn packet_type(&self) -> u8 {
        self.0[10]
    }
    /// Link-layer address length.
    pub const fn halen(&self) -> u8 {
        self.0[11]
    }
    /// Link-layer address bytes (first `halen`, at most 8).
    pub fn addr(&self) -> &[u8] {
        let n = usize::from(self.halen()).min(8);
        self.0.get(12..12 + n).unwrap_or(&[])
    }
    /// Owned description.
    pub const fn repr(&self) -> (u16, u32, u8) {
        (self.protocol(), self.ifindex(), self.packet_type())
    }
}

/// Format a MAC address as `aa:bb:cc:dd:ee:ff`.
pub fn mac_string(m: &[u8; 6]) -> String {
    format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
}
