//! BTH opcodes as an open newtype, and the extended-header layout each one selects.
//!
//! The opcode byte is `transport (bits 7-5) | operation (bits 4-0)`
//! (`include/rdma/ib_pack.h`; reference §1.3). Every byte value decodes: unknown and
//! reserved values get a generic name and an opaque body rather than an error
//! (the tls-parser style of open wire codes).

use core::fmt;

/// A BTH opcode. Any `u8` is a valid value; named constants cover the IBTA table,
/// the RoCEv2 CNP (0x81), FLUSH (0x1C) and ATOMIC WRITE (0x1D).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Opcode(pub u8);

/// The transport service encoded in the opcode's top three bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Reliable Connection (0x00-0x1F).
    Rc,
    /// Unreliable Connection (0x20-0x3F).
    Uc,
    /// Reliable Datagram (0x40-0x5F); Mellanox DC reuses this range.
    Rd,
    /// Unreliable Datagram (0x60-0x7F).
    Ud,
    /// Congestion notification (0x80-0x9F): 0x80 native IB CNP, 0x81 RoCEv2 CNP.
    Cnp,
    /// Extended Reliable Connection (0xA0-0xBF).
    Xrc,
    /// Reserved range (0xC0-0xDF).
    Reserved,
    /// Manufacturer-specific range (0xE0-0xFF): opaque.
    Manufacturer,
}

impl Transport {
    /// Short upper-case name ("RC", "UC", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Reserved => "Reserved",
            Transport::Manufacturer => "Manufacturer",
        }
    }
}

/// One extended transport header kind. The discriminant order is the order in which
/// headers follow the BTH on the wire (reference §1.3: RDETH, DETH, XRCETH, FETH, RETH,
/// AtomicETH, AETH, AtomicAckETH, ImmDt, IETH); the Mellanox DC extension comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ExtKind {
    /// Mellanox DC extension: 8 bytes right after the BTH (Wireshark's 20-byte DC BTH).
    DcEth = 0,
    /// Reliable Datagram Extended Transport Header, 4 bytes.
    Rdeth = 1,
    /// Datagram Extended Transport Header, 8 bytes.
    Deth = 2,
    /// XRC Extended Transport Header, 4 bytes.
    XrcEth = 3,
    /// FLUSH Extended Transport Header, 4 bytes.
    Feth = 4,
    /// RDMA Extended Transport Header, 16 bytes.
    Reth = 5,
    /// Atomic Extended Transport Header, 28 bytes.
    AtomicEth = 6,
    /// ACK Extended Transport Header, 4 bytes.
    Aeth = 7,
    /// Atomic ACK Extended Transport Header, 8 bytes.
    AtomicAckEth = 8,
    /// Immediate data, 4 bytes.
    ImmDt = 9,
    /// Invalidate Extended Transport Header, 4 bytes.
    Ieth = 10,
    /// CNP body: 16 reserved bytes.
    CnpBody = 11,
}

impl ExtKind {
    /// Every kind, in wire order.
    pub const ALL: [ExtKind; 12] = [
        ExtKind::DcEth,
        ExtKind::Rdeth,
        ExtKind::Deth,
        ExtKind::XrcEth,
        ExtKind::Feth,
        ExtKind::Reth,
        ExtKind::AtomicEth,
        ExtKind::Aeth,
        ExtKind::AtomicAckEth,
        ExtKind::ImmDt,
        ExtKind::Ieth,
        ExtKind::CnpBody,
    ];

    /// Length on the wire in bytes (reference §1.4).
    pub const fn size(self) -> usize {
        match self {
            ExtKind::DcEth => 8,
            ExtKind::Rdeth => 4,
            ExtKind::Deth => 8,
            ExtKind::XrcEth => 4,
            ExtKind::Feth => 4,
            ExtKind::Reth => 16,
            ExtKind::AtomicEth => 28,
            ExtKind::Aeth => 4,
            ExtKind::AtomicAckEth => 8,
            ExtKind::ImmDt => 4,
            ExtKind::Ieth => 4,
            ExtKind::CnpBody => 16,
        }
    }

    /// Conventional header name ("RETH", "AETH", ...).
    pub const fn name(self) -> &'static str {
        match self {
            ExtKind::DcEth => "DCETH",
            ExtKind::Rdeth => "RDETH",
            ExtKind::Deth => "DETH",
            ExtKind::XrcEth => "XRCETH",
            ExtKind::Feth => "FETH",
            ExtKind::Reth => "RETH",
            ExtKind::AtomicEth => "AtomicETH",
            ExtKind::Aeth => "AETH",
            ExtKind::AtomicAckEth => "AtomicAckETH",
            ExtKind::ImmDt => "ImmDt",
            ExtKind::Ieth => "IETH",
            ExtKind::CnpBody => "CNP",
        }
    }
}

/// A set of extended headers, iterated in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct HeaderSet(u16);

impl HeaderSet {
    /// The empty set.
    pub const EMPTY: HeaderSet = HeaderSet(0);

    /// This set plus `kind`.
    pub const fn with(self, kind: ExtKind) -> HeaderSet {
        HeaderSet(self.0 | (1 << kind as u8))
    }

    /// Whether `kind` is in the set.
    pub const fn contains(self, kind: ExtKind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }

    /// Total length of the headers in bytes.
    pub fn len(self) -> usize {
        self.iter().map(ExtKind::size).sum()
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The headers in wire order (set bits, lowest first).
    pub fn iter(self) -> impl Iterator<Item = ExtKind> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            ExtKind::ALL.get(i).copied()
        })
    }
}

/// What follows the BTH for one opcode: the extended headers and whether a payload may follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Extended headers in wire order.
    pub headers: HeaderSet,
    /// Whether the opcode carries a payload after the headers.
    pub payload: bool,
    /// False for reserved, unknown and manufacturer opcodes, whose body is kept opaque.
    pub known: bool,
}

/// Where a packet sits in its message, from the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// First packet of a multi-packet message.
    First,
    /// Middle packet.
    Middle,
    /// Last packet.
    Last,
    /// Single-packet message.
    Only,
}

/// Decoder options that change how opcodes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpcodeOptions {
    /// Read 0x40-0x5F as Mellanox DC (BTH + 8-byte DC extension + RDETH + DETH + the RC
    /// header sequence) instead of IBTA Reliable Datagram.
    pub dc: bool,
}

impl Default for OpcodeOptions {
    fn default() -> Self {
        // RD is unused in practice (reference §1.3 †); real captures in that range are DC.
        OpcodeOptions { dc: true }
    }
}

impl Opcode {
    /// RC Send First (0x00).
    pub const RC_SEND_FIRST: Opcode = Opcode(0x00);
    /// RC Send Middle (0x01).
    pub const RC_SEND_MIDDLE: Opcode = Opcode(0x01);
    /// RC Send Last (0x02).
    pub const RC_SEND_LAST: Opcode = Opcode(0x02);
    /// RC Send Last with Immediate (0x03).
    pub const RC_SEND_LAST_IMM: Opcode = Opcode(0x03);
    /// RC Send Only (0x04).
    pub const RC_SEND_ONLY: Opcode = Opcode(0x04);
    /// RC Send Only with Immediate (0x05).
    pub const RC_SEND_ONLY_IMM: Opcode = Opcode(0x05);
    /// RC RDMA Write First (0x06).
    pub const RC_WRITE_FIRST: Opcode = Opcode(0x06);
    /// RC RDMA Write Middle (0x07).
    pub const RC_WRITE_MIDDLE: Opcode = Opcode(0x07);
    /// RC RDMA Write Last (0x08).
    pub const RC_WRITE_LAST: Opcode = Opcode(0x08);
    /// RC RDMA Write Last with Immediate (0x09).
    pub const RC_WRITE_LAST_IMM: Opcode = Opcode(0x09);
    /// RC RDMA Write Only (0x0A).
    pub const RC_WRITE_ONLY: Opcode = Opcode(0x0A);
    /// RC RDMA Write Only with Immediate (0x0B).
    pub const RC_WRITE_ONLY_IMM: Opcode = Opcode(0x0B);
    /// RC RDMA Read Request (0x0C).
    pub const RC_READ_REQUEST: Opcode = Opcode(0x0C);
    /// RC RDMA Read Response First (0x0D).
    pub const RC_READ_RESPONSE_FIRST: Opcode = Opcode(0x0D);
    /// RC RDMA Read Response Middle (0x0E).
    pub const RC_READ_RESPONSE_MIDDLE: Opcode = Opcode(0x0E);
    /// RC RDMA Read Response Last (0x0F).
    pub const RC_READ_RESPONSE_LAST: Opcode = Opcode(0x0F);
    /// RC RDMA Read Response Only (0x10).
    pub const RC_READ_RESPONSE_ONLY: Opcode = Opcode(0x10);
    /// RC Acknowledge (0x11).
    pub const RC_ACKNOWLEDGE: Opcode = Opcode(0x11);
    /// RC Atomic Acknowledge (0x12).
    pub const RC_ATOMIC_ACKNOWLEDGE: Opcode = Opcode(0x12);
    /// RC Compare Swap (0x13).
    pub const RC_COMPARE_SWAP: Opcode = Opcode(0x13);
    /// RC Fetch Add (0x14).
    pub const RC_FETCH_ADD: Opcode = Opcode(0x14);
    /// RC Send Last with Invalidate (0x16).
    pub const RC_SEND_LAST_INV: Opcode = Opcode(0x16);
    /// RC Send Only with Invalidate (0x17).
    pub const RC_SEND_ONLY_INV: Opcode = Opcode(0x17);
    /// RC Flush (0x1C).
    pub const RC_FLUSH: Opcode = Opcode(0x1C);
    /// RC Atomic Write (0x1D).
    pub const RC_ATOMIC_WRITE: Opcode = Opcode(0x1D);
    /// UC Send First (0x20).
    pub const UC_SEND_FIRST: Opcode = Opcode(0x20);
    /// UC Send Middle (0x21).
    pub const UC_SEND_MIDDLE: Opcode = Opcode(0x21);
    /// UC Send Last (0x22).
    pub const UC_SEND_LAST: Opcode = Opcode(0x22);
    /// UC Send Last with Immediate (0x23).
    pub const UC_SEND_LAST_IMM: Opcode = Opcode(0x23);
    /// UC Send Only (0x24).
    pub const UC_SEND_ONLY: Opcode = Opcode(0x24);
    /// UC Send Only with Immediate (0x25).
    pub const UC_SEND_ONLY_IMM: Opcode = Opcode(0x25);
    /// UC RDMA Write First (0x26).
    pub const UC_WRITE_FIRST: Opcode = Opcode(0x26);
    /// UC RDMA Write Middle (0x27).
    pub const UC_WRITE_MIDDLE: Opcode = Opcode(0x27);
    /// UC RDMA Write Last (0x28).
    pub const UC_WRITE_LAST: Opcode = Opcode(0x28);
    /// UC RDMA Write Last with Immediate (0x29).
    pub const UC_WRITE_LAST_IMM: Opcode = Opcode(0x29);
    /// UC RDMA Write Only (0x2A).
    pub const UC_WRITE_ONLY: Opcode = Opcode(0x2A);
    /// UC RDMA Write Only with Immediate (0x2B).
    pub const UC_WRITE_ONLY_IMM: Opcode = Opcode(0x2B);
    /// RD Send First (0x40).
    pub const RD_SEND_FIRST: Opcode = Opcode(0x40);
    /// RD Send Middle (0x41).
    pub const RD_SEND_MIDDLE: Opcode = Opcode(0x41);
    /// RD Send Last (0x42).
    pub const RD_SEND_LAST: Opcode = Opcode(0x42);
    /// RD Send Last with Immediate (0x43).
    pub const RD_SEND_LAST_IMM: Opcode = Opcode(0x43);
    /// RD Send Only (0x44).
    pub const RD_SEND_ONLY: Opcode = Opcode(0x44);
    /// RD Send Only with Immediate (0x45).
    pub const RD_SEND_ONLY_IMM: Opcode = Opcode(0x45);
    /// RD RDMA Write First (0x46).
    pub const RD_WRITE_FIRST: Opcode = Opcode(0x46);
    /// RD RDMA Write Middle (0x47).
    pub const RD_WRITE_MIDDLE: Opcode = Opcode(0x47);
    /// RD RDMA Write Last (0x48).
    pub const RD_WRITE_LAST: Opcode = Opcode(0x48);
    /// RD RDMA Write Last with Immediate (0x49).
    pub const RD_WRITE_LAST_IMM: Opcode = Opcode(0x49);
    /// RD RDMA Write Only (0x4A).
    pub const RD_WRITE_ONLY: Opcode = Opcode(0x4A);
    /// RD RDMA Write Only with Immediate (0x4B).
    pub const RD_WRITE_ONLY_IMM: Opcode = Opcode(0x4B);
    /// RD RDMA Read Request (0x4C).
    pub const RD_READ_REQUEST: Opcode = Opcode(0x4C);
    /// RD RDMA Read Response First (0x4D).
    pub const RD_READ_RESPONSE_FIRST: Opcode = Opcode(0x4D);
    /// RD RDMA Read Response Middle (0x4E).
    pub const RD_READ_RESPONSE_MIDDLE: Opcode = Opcode(0x4E);
    /// RD RDMA Read Response Last (0x4F).
    pub const RD_READ_RESPONSE_LAST: Opcode = Opcode(0x4F);
    /// RD RDMA Read Response Only (0x50).
    pub const RD_READ_RESPONSE_ONLY: Opcode = Opcode(0x50);
    /// RD Acknowledge (0x51).
    pub const RD_ACKNOWLEDGE: Opcode = Opcode(0x51);
    /// RD Atomic Acknowledge (0x52).
    pub const RD_ATOMIC_ACKNOWLEDGE: Opcode = Opcode(0x52);
    /// RD Compare Swap (0x53).
    pub const RD_COMPARE_SWAP: Opcode = Opcode(0x53);
    /// RD Fetch Add (0x54).
    pub const RD_FETCH_ADD: Opcode = Opcode(0x54);
    /// RD Resync (0x55).
    pub const RD_RESYNC: Opcode = Opcode(0x55);
    /// RD Flush (0x5C).
    pub const RD_FLUSH: Opcode = Opcode(0x5C);
    /// UD Send Only (0x64).
    pub const UD_SEND_ONLY: Opcode = Opcode(0x64);
    /// UD Send Only with Immediate (0x65).
    pub const UD_SEND_ONLY_IMM: Opcode = Opcode(0x65);
    /// XRC Send First (0xA0).
    pub const XRC_SEND_FIRST: Opcode = Opcode(0xA0);
    /// XRC Send Middle (0xA1).
    pub const XRC_SEND_MIDDLE: Opcode = Opcode(0xA1);
    /// XRC Send Last (0xA2).
    pub const XRC_SEND_LAST: Opcode = Opcode(0xA2);
    /// XRC Send Last with Immediate (0xA3).
    pub const XRC_SEND_LAST_IMM: Opcode = Opcode(0xA3);
    /// XRC Send Only (0xA4).
    pub const XRC_SEND_ONLY: Opcode = Opcode(0xA4);
    /// XRC Send Only with Immediate (0xA5).
    pub const XRC_SEND_ONLY_IMM: Opcode = Opcode(0xA5);
    /// XRC RDMA Write First (0xA6).
    pub const XRC_WRITE_FIRST: Opcode = Opcode(0xA6);
    /// XRC RDMA Write Middle (0xA7).
    pub const XRC_WRITE_MIDDLE: Opcode = Opcode(0xA7);
    /// XRC RDMA Write Last (0xA8).
    pub const XRC_WRITE_LAST: Opcode = Opcode(0xA8);
    /// XRC RDMA Write Last with Immediate (0xA9).
    pub const XRC_WRITE_LAST_IMM: Opcode = Opcode(0xA9);
    /// XRC RDMA Write Only (0xAA).
    pub const XRC_WRITE_ONLY: Opcode = Opcode(0xAA);
    /// XRC RDMA Write Only with Immediate (0xAB).
    pub const XRC_WRITE_ONLY_IMM: Opcode = Opcode(0xAB);
    /// XRC RDMA Read Request (0xAC).
    pub const XRC_READ_REQUEST: Opcode = Opcode(0xAC);
    /// XRC RDMA Read Response First (0xAD).
    pub const XRC_READ_RESPONSE_FIRST: Opcode = Opcode(0xAD);
    /// XRC RDMA Read Response Middle (0xAE).
    pub const XRC_READ_RESPONSE_MIDDLE: Opcode = Opcode(0xAE);
    /// XRC RDMA Read Response Last (0xAF).
    pub const XRC_READ_RESPONSE_LAST: Opcode = Opcode(0xAF);
    /// XRC RDMA Read Response Only (0xB0).
    pub const XRC_READ_RESPONSE_ONLY: Opcode = Opcode(0xB0);
    /// XRC Acknowledge (0xB1).
    pub const XRC_ACKNOWLEDGE: Opcode = Opcode(0xB1);
    /// XRC Atomic Acknowledge (0xB2).
    pub const XRC_ATOMIC_ACKNOWLEDGE: Opcode = Opcode(0xB2);
    /// XRC Compare Swap (0xB3).
    pub const XRC_COMPARE_SWAP: Opcode = Opcode(0xB3);
    /// XRC Fetch Add (0xB4).
    pub const XRC_FETCH_ADD: Opcode = Opcode(0xB4);
    /// XRC Send Last with Invalidate (0xB6).
    pub const XRC_SEND_LAST_INV: Opcode = Opcode(0xB6);
    /// XRC Send Only with Invalidate (0xB7).
    pub const XRC_SEND_ONLY_INV: Opcode = Opcode(0xB7);
    /// XRC Flush (0xBC).
    pub const XRC_FLUSH: Opcode = Opcode(0xBC);

    /// IB CNP (0x80, IBTA vol 1 A10.3.2).
    pub const IB_CNP: Opcode = Opcode(0x80);
    /// RoCEv2 CNP (0x81; scapy `CNP_OPCODE`, Lumina `RDMA_CNP_OPCODE`).
    pub const CNP: Opcode = Opcode(0x81);

    /// The transport service (top three bits).
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            6 => Transport::Reserved,
            _ => Transport::Manufacturer,
        }
    }

    /// The operation (low five bits).
    pub const fn operation(self) -> u8 {
        self.0 & 0x1F
    }

    /// Whether this is a congestion notification packet (0x80 or 0x81).
    pub const fn is_cnp(self) -> bool {
        self.0 == 0x80 || self.0 == 0x81
    }

    /// Human-readable name, e.g. "RC RDMA Write Only". Unknown values get a generic name.
    // Named values come first; the ranges after them name the rest of each transport.
    #[allow(clippy::match_overlapping_arm)]
    pub const fn name(self, opts: OpcodeOptions) -> &'static str {
        if opts.dc && matches!(self.transport(), Transport::Rd) {
            return match self.0 {
                0x40 => "DC Send First",
                0x41 => "DC Send Middle",
                0x42 => "DC Send Last",
                0x43 => "DC Send Last with Immediate",
                0x44 => "DC Send Only",
                0x45 => "DC Send Only with Immediate",
                0x46 => "DC RDMA Write First",
                0x47 => "DC RDMA Write Middle",
                0x48 => "DC RDMA Write Last",
                0x49 => "DC RDMA Write Last with Immediate",
                0x4A => "DC RDMA Write Only",
                0x4B => "DC RDMA Write Only with Immediate",
                0x4C => "DC RDMA Read Request",
                0x4D => "DC RDMA Read Response First",
                0x4E => "DC RDMA Read Response Middle",
                0x4F => "DC RDMA Read Response Last",
                0x50 => "DC RDMA Read Response Only",
                0x51 => "DC Acknowledge",
                0x52 => "DC Atomic Acknowledge",
                0x53 => "DC Compare Swap",
                0x54 => "DC Fetch Add",
                0x55 => "DC Resync",
                0x5C => "DC Flush",
                _ => "DC Reserved",
            };
        }
        match self.0 {
            0x00 => "RC Send First",
            0x01 => "RC Send Middle",
            0x02 => "RC Send Last",
            0x03 => "RC Send Last with Immediate",
            0x04 => "RC Send Only",
            0x05 => "RC Send Only with Immediate",
            0x06 => "RC RDMA Write First",
            0x07 => "RC RDMA Write Middle",
            0x08 => "RC RDMA Write Last",
            0x09 => "RC RDMA Write Last with Immediate",
            0x0A => "RC RDMA Write Only",
            0x0B => "RC RDMA Write Only with Immediate",
            0x0C => "RC RDMA Read Request",
            0x0D => "RC RDMA Read Response First",
            0x0E => "RC RDMA Read Response Middle",
            0x0F => "RC RDMA Read Response Last",
            0x10 => "RC RDMA Read Response Only",
            0x11 => "RC Acknowledge",
            0x12 => "RC Atomic Acknowledge",
            0x13 => "RC Compare Swap",
            0x14 => "RC Fetch Add",
            0x16 => "RC Send Last with Invalidate",
            0x17 => "RC Send Only with Invalidate",
            0x1C => "RC Flush",
            0x1D => "RC Atomic Write",
            0x20 => "UC Send First",
            0x21 => "UC Send Middle",
            0x22 => "UC Send Last",
            0x23 => "UC Send Last with Immediate",
            0x24 => "UC Send Only",
            0x25 => "UC Send Only with Immediate",
            0x26 => "UC RDMA Write First",
            0x27 => "UC RDMA Write Middle",
            0x28 => "UC RDMA Write Last",
            0x29 => "UC RDMA Write Last with Immediate",
            0x2A => "UC RDMA Write Only",
            0x2B => "UC RDMA Write Only with Immediate",
            0x40 => "RD Send First",
            0x41 => "RD Send Middle",
            0x42 => "RD Send Last",
            0x43 => "RD Send Last with Immediate",
            0x44 => "RD Send Only",
            0x45 => "RD Send Only with Immediate",
            0x46 => "RD RDMA Write First",
            0x47 => "RD RDMA Write Middle",
            0x48 => "RD RDMA Write Last",
            0x49 => "RD RDMA Write Last with Immediate",
            0x4A => "RD RDMA Write Only",
            0x4B => "RD RDMA Write Only with Immediate",
            0x4C => "RD RDMA Read Request",
            0x4D => "RD RDMA Read Response First",
            0x4E => "RD RDMA Read Response Middle",
            0x4F => "RD RDMA Read Response Last",
            0x50 => "RD RDMA Read Response Only",
            0x51 => "RD Acknowledge",
            0x52 => "RD Atomic Acknowledge",
            0x53 => "RD Compare Swap",
            0x54 => "RD Fetch Add",
            0x55 => "RD Resync",
            0x5C => "RD Flush",
            0x64 => "UD Send Only",
            0x65 => "UD Send Only with Immediate",
            0xA0 => "XRC Send First",
            0xA1 => "XRC Send Middle",
            0xA2 => "XRC Send Last",
            0xA3 => "XRC Send Last with Immediate",
            0xA4 => "XRC Send Only",
            0xA5 => "XRC Send Only with Immediate",
            0xA6 => "XRC RDMA Write First",
            0xA7 => "XRC RDMA Write Middle",
            0xA8 => "XRC RDMA Write Last",
            0xA9 => "XRC RDMA Write Last with Immediate",
            0xAA => "XRC RDMA Write Only",
            0xAB => "XRC RDMA Write Only with Immediate",
            0xAC => "XRC RDMA Read Request",
            0xAD => "XRC RDMA Read Response First",
            0xAE => "XRC RDMA Read Response Middle",
            0xAF => "XRC RDMA Read Response Last",
            0xB0 => "XRC RDMA Read Response Only",
            0xB1 => "XRC Acknowledge",
            0xB2 => "XRC Atomic Acknowledge",
            0xB3 => "XRC Compare Swap",
            0xB4 => "XRC Fetch Add",
            0xB6 => "XRC Send Last with Invalidate",
            0xB7 => "XRC Send Only with Invalidate",
            0xBC => "XRC Flush",
            0x80 => "CNP (IB)",
            0x81 => "CNP",
            0x00..=0x1F => "RC Reserved",
            0x20..=0x3F => "UC Reserved",
            0x40..=0x5F => "RD Reserved",
            0x60..=0x7F => "UD Reserved",
            0x80..=0x9F => "CNP Reserved",
            0xA0..=0xBF => "XRC Reserved",
            0xC0..=0xDF => "Reserved",
            _ => "Manufacturer Specific",
        }
    }

    /// The header sequence after the BTH (reference §1.3 table), from a table built once.
    pub fn layout(self, opts: OpcodeOptions) -> Layout {
        static TABLES: std::sync::OnceLock<[[Layout; 256]; 2]> = std::sync::OnceLock::new();
        let t = TABLES.get_or_init(|| {
            let mut t = [[Layout { headers: HeaderSet::EMPTY, payload: true, known: false }; 256]; 2];
            for (dc, table) in t.iter_mut().enumerate() {
                for (op, slot) in table.iter_mut().enumerate() {
                    *slot = Opcode(op as u8).compute_layout(OpcodeOptions { dc: dc == 1 });
                }
            }
            t
        });
        t.get(usize::from(opts.dc)).and_then(|row| row.get(usize::from(self.0))).copied().unwrap_or(Layout {
            headers: HeaderSet::EMPTY,
            payload: true,
            known: false,
        })
    }

    fn compute_layout(self, opts: OpcodeOptions) -> Layout {
        let op = self.operation();
        let unknown = Layout { headers: HeaderSet::EMPTY, payload: true, known: false };
        let (base, payload) = match base_layout(op) {
            Some(b) => b,
            None if self.is_cnp() => (HeaderSet::EMPTY, false),
            None => return unknown,
        };
        let is_response = (0x0D..=0x12).contains(&op);
        let headers = match self.transport() {
            Transport::Rc if op != 0x15 => base,
            Transport::Uc if op <= 0x0B => base,
            Transport::Rd => {
                if matches!(op, 0x16 | 0x17 | 0x1D) {
                    return unknown;
                }
                let h = base.with(ExtKind::Rdeth);
                if opts.dc {
                    // Mellanox DC: an 8-byte extension, then RDETH and DETH on every packet,
                    // responses included, then the RC sequence. Inferred from the lengths of
                    // the DC frames in the real captures (an ACK's AETH, 0x1F = ACK, ends
                    // exactly at the ICRC); Wireshark reads a DC ACK's RDETH as its AETH.
                    h.with(ExtKind::Deth).with(ExtKind::DcEth)
                } else if !is_response && op != 0x1C {
                    // IBTA RD: requests carry a DETH; responses and FLUSH do not (§1.3).
                    h.with(ExtKind::Deth)
                } else {
                    h
                }
            }
            Transport::Ud if op == 0x04 || op == 0x05 => base.with(ExtKind::Deth),
            Transport::Xrc if !matches!(op, 0x15 | 0x1D) => {
                if is_response {
                    base
                } else {
                    base.with(ExtKind::XrcEth)
                }
            }
            Transport::Cnp if self.0 == 0x81 => HeaderSet::EMPTY.with(ExtKind::CnpBody),
            // The IB CNP 0x80 carries no extended header; its body is kept as payload.
            Transport::Cnp if self.0 == 0x80 => {
                return Layout { headers: HeaderSet::EMPTY, payload: true, known: true }
            }
            _ => return unknown,
        };
        let payload = payload && !self.is_cnp();
        Layout { headers, payload, known: true }
    }

    /// True for requester-to-responder packets (SEND, WRITE, READ request, atomics, FLUSH,
    /// ATOMIC WRITE, RD RESYNC); false for responses (READ responses, ACKs), CNPs and
    /// opcodes outside the table.
    pub fn is_request(self) -> bool {
        let op = self.operation();
        match self.transport() {
            Transport::Rc | Transport::Uc | Transport::Rd | Transport::Ud | Transport::Xrc => {
                !(0x0D..=0x12).contains(&op) && self.layout(OpcodeOptions::default()).known
            }
            _ => false,
        }
    }

    /// True for responses: READ response packets, Acknowledge and Atomic Acknowledge.
    pub const fn is_response(self) -> bool {
        match self.transport() {
            Transport::Rc | Transport::Rd | Transport::Xrc => {
                matches!(self.operation(), 0x0D..=0x12)
            }
            _ => false,
        }
    }

    /// Position of the packet in its message, for message-carrying opcodes.
    pub const fn position(self) -> Option<Position> {
        if !matches!(
            self.transport(),
            Transport::Rc | Transport::Uc | Transport::Rd | Transport::Ud | Transport::Xrc
        ) {
            return None;
        }
        match self.operation() {
            0x00 | 0x06 | 0x0D => Some(Position::First),
            0x01 | 0x07 | 0x0E => Some(Position::Middle),
            0x02 | 0x03 | 0x08 | 0x09 | 0x0F | 0x16 => Some(Position::Last),
            0x04 | 0x05 | 0x0A | 0x0B | 0x0C | 0x10 | 0x11 | 0x12 | 0x13 | 0x14 | 0x15 | 0x17 | 0x1C
            | 0x1D => Some(Position::Only),
            _ => None,
        }
    }

    /// True for RDMA READ Request (any transport).
    pub fn is_read_request(self) -> bool {
        self.operation() == 0x0C && self.is_request()
    }

    /// True for Acknowledge (0x11 in RC/RD/XRC).
    pub const fn is_ack(self) -> bool {
        self.operation() == 0x11 && self.is_response()
    }
}

/// The RC header sequence for an operation, and whether it has a payload.
const fn base_layout(op: u8) -> Option<(HeaderSet, bool)> {
    let e = HeaderSet::EMPTY;
    Some(match op {
        0x00 | 0x01 | 0x02 | 0x04 | 0x07 | 0x08 | 0x0E => (e, true),
        0x03 | 0x05 | 0x09 => (e.with(ExtKind::ImmDt), true),
        0x06 | 0x0A | 0x1D => (e.with(ExtKind::Reth), true),
        0x0B => (e.with(ExtKind::Reth).with(ExtKind::ImmDt), true),
        0x0C => (e.with(ExtKind::Reth), false),
        0x0D | 0x0F | 0x10 => (e.with(ExtKind::Aeth), true),
        0x11 => (e.with(ExtKind::Aeth), false),
        0x12 => (e.with(ExtKind::Aeth).with(ExtKind::AtomicAckEth), false),
        0x13 | 0x14 => (e.with(ExtKind::AtomicEth), false),
        0x15 => (e, false),
        0x16 | 0x17 => (e.with(ExtKind::Ieth), true),
        0x1C => (e.with(ExtKind::Feth).with(ExtKind::Reth), false),
        _ => return None,
    })
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Opcode(0x{:02X} {})", self.0, self.name(OpcodeOptions::default()))
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name(OpcodeOptions::default()))
    }
}

impl From<u8> for Opcode {
    fn from(v: u8) -> Self {
        Opcode(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_table() {
        let o = OpcodeOptions::default();
        assert_eq!(Opcode::RC_SEND_ONLY.name(o), "RC Send Only");
        assert_eq!(Opcode(0x81).name(o), "CNP");
        assert_eq!(Opcode(0xA4).name(o), "XRC Send Only");
        assert_eq!(Opcode(0x4A).name(o), "DC RDMA Write Only");
        assert_eq!(Opcode(0x4A).name(OpcodeOptions { dc: false }), "RD RDMA Write Only");
        assert_eq!(Opcode(0xE5).name(o), "Manufacturer Specific");
        assert_eq!(Opcode(0x15).name(o), "RC Reserved");
        // Mistake 6 in the reference: 0x16, not 0x19, is SEND Last with Invalidate.
        assert_eq!(Opcode(0x16).name(o), "RC Send Last with Invalidate");
        assert_eq!(Opcode(0x19).name(o), "RC Reserved");
    }

    #[test]
    fn layouts_follow_the_table() {
        let o = OpcodeOptions { dc: false };
        let l = Opcode::RC_WRITE_ONLY_IMM.layout(o);
        assert_eq!(l.headers.iter().collect::<Vec<_>>(), [ExtKind::Reth, ExtKind::ImmDt]);
        let l = Opcode(0x4B).layout(o);
        assert_eq!(
            l.headers.iter().collect::<Vec<_>>(),
            [ExtKind::Rdeth, ExtKind::Deth, ExtKind::Reth, ExtKind::ImmDt]
        );
        let l = Opcode(0x4D).layout(o);
        assert_eq!(l.headers.iter().collect::<Vec<_>>(), [ExtKind::Rdeth, ExtKind::Aeth]);
        let l = Opcode(0xAB).layout(o);
        assert_eq!(l.headers.iter().collect::<Vec<_>>(), [ExtKind::XrcEth, ExtKind::Reth, ExtKind::ImmDt]);
        assert_eq!(Opcode(0xB1).layout(o).headers.iter().collect::<Vec<_>>(), [ExtKind::Aeth]);
        assert_eq!(
            Opcode(0x65).layout(o).headers.iter().collect::<Vec<_>>(),
            [ExtKind::Deth, ExtKind::ImmDt]
        );
        assert_eq!(Opcode(0x1C).layout(o).headers.iter().collect::<Vec<_>>(), [ExtKind::Feth, ExtKind::Reth]);
        assert!(!Opcode(0x1C).layout(o).payload);
        assert_eq!(Opcode(0x81).layout(o).headers.iter().collect::<Vec<_>>(), [ExtKind::CnpBody]);
        assert!(!Opcode(0x66).layout(o).known);
        assert!(!Opcode(0x2C).layout(o).known, "UC has no READ");
        let dc = Opcode(0x51).layout(OpcodeOptions { dc: true });
        assert_eq!(
            dc.headers.iter().collect::<Vec<_>>(),
            [ExtKind::DcEth, ExtKind::Rdeth, ExtKind::Deth, ExtKind::Aeth]
        );
    }

    #[test]
    fn request_and_response_classes() {
        assert!(Opcode::RC_READ_REQUEST.is_request());
        assert!(Opcode::RC_READ_REQUEST.is_read_request());
        assert!(Opcode::RC_READ_RESPONSE_ONLY.is_response());
        assert!(Opcode::RC_ACKNOWLEDGE.is_ack());
        assert!(!Opcode::CNP.is_request() && !Opcode::CNP.is_response());
        assert_eq!(Opcode::RC_SEND_LAST_INV.position(), Some(Position::Last));
    }
}
