//! Base Transport Header: 12 bytes, big-endian (reference §1.2, `rxe_hdr.h` `BTH_*_MASK`).

use crate::opcode::Opcode;
use crate::wire::{be24, put24, view};

/// Named byte positions and masks of the BTH.
pub mod field {
    /// OpCode byte.
    pub const OPCODE: usize = 0;
    /// SE (0x80), M (0x40), PadCnt (0x30), TVer (0x0F).
    pub const FLAGS: usize = 1;
    /// P_Key, 16 bits.
    pub const PKEY: core::ops::Range<usize> = 2..4;
    /// FECN (0x80), BECN (0x40), resv6 (0x3F): masked to 0xFF in the ICRC.
    pub const FB: usize = 4;
    /// Destination QP, 24 bits.
    pub const DEST_QP: core::ops::Range<usize> = 5..8;
    /// AckReq (0x80), resv7 (0x7F).
    pub const ACK: usize = 8;
    /// PSN, 24 bits.
    pub const PSN: core::ops::Range<usize> = 9..12;
}

view!(
    /// A Base Transport Header borrowed from a frame.
    Bth,
    12
);

impl Bth<'_> {
    /// The opcode.
    pub const fn opcode(&self) -> Opcode {
        Opcode(self.0[0])
    }
    /// Solicited Event.
    pub const fn se(&self) -> bool {
        self.0[1] & 0x80 != 0
    }
    /// MigReq.
    pub const fn migreq(&self) -> bool {
        self.0[1] & 0x40 != 0
    }
    /// Pad count: 0-3 bytes of pad before the ICRC.
    pub const fn pad_count(&self) -> u8 {
        (self.0[1] >> 4) & 0x03
    }
    /// Transport header version (0).
    pub const fn tver(&self) -> u8 {
        self.0[1] & 0x0F
    }
    /// Partition key.
    pub const fn pkey(&self) -> u16 {
        u16::from_be_bytes([self.0[2], self.0[3]])
    }
    /// FECN: forward explicit congestion notification.
    pub const fn fecn(&self) -> bool {
        self.0[4] & 0x80 != 0
    }
    /// BECN: backward explicit congestion notification (set in CNPs).
    pub const fn becn(&self) -> bool {
        self.0[4] & 0x40 != 0
    }
    /// The six reserved bits of byte 4.
    pub const fn resv6(&self) -> u8 {
        self.0[4] & 0x3F
    }
    /// Destination QP number (24 bits).
    pub const fn dest_qp(&self) -> u32 {
        be24(self.0[5], self.0[6], self.0[7])
    }
    /// AckReq: the requester asks for an acknowledgement.
    pub const fn ack_req(&self) -> bool {
        self.0[8] & 0x80 != 0
    }
    /// The seven reserved bits of byte 8.
    pub const fn resv7(&self) -> u8 {
        self.0[8] & 0x7F
    }
    /// Packet sequence number (24 bits).
    pub const fn psn(&self) -> u32 {
        be24(self.0[9], self.0[10], self.0[11])
    }
    /// The owned description of this header.
    pub const fn repr(&self) -> BthRepr {
        BthRepr {
            opcode: self.opcode(),
            se: self.se(),
            migreq: self.migreq(),
            pad_count: self.pad_count(),
            tver: self.tver(),
            pkey: self.pkey(),
            fecn: self.fecn(),
            becn: self.becn(),
            resv6: self.resv6(),
            dest_qp: self.dest_qp(),
            ack_req: self.ack_req(),
            resv7: self.resv7(),
            psn: self.psn(),
        }
    }
}

/// An owned BTH: describes a parsed header and emits one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BthRepr {
    /// OpCode.
    pub opcode: Opcode,
    /// Solicited Event.
    pub se: bool,
    /// MigReq.
    pub migreq: bool,
    /// Pad count (0-3); masked to two bits when emitted.
    pub pad_count: u8,
    /// Transport header version (four bits).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// FECN.
    pub fecn: bool,
    /// BECN.
    pub becn: bool,
    /// Reserved six bits of byte 4.
    pub resv6: u8,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// Reserved seven bits of byte 8.
    pub resv7: u8,
    /// PSN (24 bits).
    pub psn: u32,
}

impl Default for BthRepr {
    fn default() -> Self {
        BthRepr {
            opcode: Opcode::RC_SEND_ONLY,
            se: false,
            migreq: false,
            pad_count: 0,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp: 0,
            ack_req: false,
            resv7: 0,
            psn: 0,
        }
    }
}

impl BthRepr {
    /// The 12 wire bytes of this header.
    pub const fn emit(&self) -> [u8; 12] {
        let qp = put24(self.dest_qp);
        let psn = put24(self.psn);
        let pk = self.pkey.to_be_bytes();
        [
            self.opcode.0,
            (self.se as u8) << 7 | (self.migreq as u8) << 6 | (self.pad_count & 3) << 4 | (self.tver & 0x0F),
            pk[0],
            pk[1],
            (self.fecn as u8) << 7 | (self.becn as u8) << 6 | (self.resv6 & 0x3F),
            qp[0],
            qp[1],
            qp[2],
            (self.ack_req as u8) << 7 | (self.resv7 & 0x7F),
            psn[0],
            psn[1],
            psn[2],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_from_the_cnp_vector() {
        // Reference §1.6 V1: opcode 0x81, flags 0x00, P_Key 0xFFFF, byte 4 = 0x40 (BECN),
        // DestQP 0x000118, byte 8 = 0x00, PSN 0.
        let b = [0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00];
        let (rest, bth) = Bth::parse(&b).unwrap();
        assert!(rest.is_empty());
        assert_eq!(bth.opcode(), Opcode::CNP);
        assert!(bth.becn() && !bth.fecn());
        assert_eq!(bth.dest_qp(), 0x118);
        assert_eq!(bth.psn(), 0);
        assert_eq!(bth.pkey(), 0xffff);
        assert_eq!(bth.repr().emit(), b);
    }

    #[test]
    fn slicing_is_not_off_by_one() {
        // Reference §2 mistake 6: DestQP is bytes 5..8, PSN 9..12, AckReq is byte 8 bit 7.
        let b = [0x04, 0xb0, 0x12, 0x34, 0x3f, 0xab, 0xcd, 0xef, 0x80, 0x01, 0x02, 0x03];
        let bth = Bth::new(&b);
        assert_eq!(bth.dest_qp(), 0xabcdef);
        assert_eq!(bth.psn(), 0x010203);
        assert!(bth.ack_req());
        assert!(bth.se());
        assert_eq!(bth.pad_count(), 3);
        assert_eq!(bth.resv6(), 0x3f);
        assert_eq!(bth.pkey(), 0x1234);
        assert_eq!(bth.repr().emit(), b);
    }

    #[test]
    fn short_input_is_an_error() {
        assert!(Bth::parse(&[0u8; 11]).is_err());
    }
}
