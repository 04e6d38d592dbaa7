//! The 40-byte InfiniBand Global Route Header that follows EtherType 0x8915 in RoCEv1.

use crate::wire::view;
use core::net::Ipv6Addr;

view!(
    /// RoCEv1 GRH: IPVer 4, TClass 8, FlowLabel 20, PayLen 16, NxtHdr 8, HopLmt 8, SGID, DGID.
    Grh,
    40
);

impl Grh<'_> {
    /// IP version field (6).
    pub const fn ipver(&self) -> u8 {
        self.0[0] >> 4
    }
    /// Traffic class.
    pub const fn tclass(&self) -> u8 {
        (self.0[0] << 4) | (self.0[1] >> 4)
    }
    /// Flow label (20 bits).
    pub const fn flow_label(&self) -> u32 {
        ((self.0[1] as u32 & 0x0F) << 16) | ((self.0[2] as u32) << 8) | self.0[3] as u32
    }
    /// Bytes after the GRH up to and including the ICRC.
    pub const fn paylen(&self) -> u16 {
        u16::from_be_bytes([self.0[4], self.0[5]])
    }
    /// Next header (0x1B: IBA transport).
    pub const fn nxthdr(&self) -> u8 {
        self.0[6]
    }
    /// Hop limit.
    pub const fn hoplmt(&self) -> u8 {
        self.0[7]
    }
    /// Source GID.
    pub fn sgid(&self) -> Ipv6Addr {
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.0[8..24]);
        Ipv6Addr::from(g)
    }
    /// Destination GID.
    pub fn dgid(&self) -> Ipv6Addr {
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.0[24..40]);
        Ipv6Addr::from(g)
    }
    /// Owned description.
    pub fn repr(&self) -> GrhRepr {
        GrhRepr {
            tclass: self.tclass(),
            flow_label: self.flow_label(),
            paylen: self.paylen(),
            nxthdr: self.nxthdr(),
            hoplmt: self.hoplmt(),
            sgid: self.sgid(),
            dgid: self.dgid(),
        }
    }
}

/// Next-header value for IBA transport headers.
pub const NXTHDR_IBA: u8 = 0x1B;

/// Owned GRH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrhRepr {
    /// Traffic class.
    pub tclass: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Payload length (BTH through ICRC).
    pub paylen: u16,
    /// Next header.
    pub nxthdr: u8,
    /// Hop limit.
    pub hoplmt: u8,
    /// Source GID.
    pub sgid: Ipv6Addr,
    /// Destination GID.
    pub dgid: Ipv6Addr,
}

impl GrhRepr {
    /// Wire bytes (IPVer 6).
    pub fn emit(&self) -> [u8; 40] {
        let mut b = [0u8; 40];
        let w = (6u32 << 28) | (u32::from(self.tclass) << 20) | (self.flow_label & 0xF_FFFF);
        b[0..4].copy_from_slice(&w.to_be_bytes());
        b[4..6].copy_from_slice(&self.paylen.to_be_bytes());
        b[6] = self.nxthdr;
        b[7] = self.hoplmt;
        b[8..24].copy_from_slice(&self.sgid.octets());
        b[24..40].copy_from_slice(&self.dgid.octets());
        b
    }
}
