//! Extended transport headers (reference §1.4): RDETH, DETH, RETH, AtomicETH, AETH,
//! AtomicAckETH, ImmDt, IETH, XRCETH, FETH, the CNP body and the Mellanox DC extension.
//! Each is a fixed-size borrowed view with a `Repr` that describes and emits it.

use crate::wire::{be24, put24, view};

fn be32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_be_bytes(w)
}

fn be64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_be_bytes(w)
}

view!(
    /// RDETH: reserved byte + 24-bit EE context (`RDETH_EEN_MASK`).
    Rdeth,
    4
);
impl Rdeth<'_> {
    /// End-to-end context number.
    pub const fn eecn(&self) -> u32 {
        be24(self.0[1], self.0[2], self.0[3])
    }
    /// Owned description.
    pub const fn repr(&self) -> RdethRepr {
        RdethRepr { eecn: self.eecn() }
    }
}
/// Owned RDETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RdethRepr {
    /// EE context (24 bits).
    pub eecn: u32,
}
impl RdethRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        let e = put24(self.eecn);
        [0, e[0], e[1], e[2]]
    }
}

view!(
    /// DETH: Q_Key 32 + reserved 8 + source QP 24.
    Deth,
    8
);
impl Deth<'_> {
    /// The queue key (GSI uses 0x80010000).
    pub fn qkey(&self) -> u32 {
        be32(self.0, 0)
    }
    /// Source QP.
    pub const fn src_qp(&self) -> u32 {
        be24(self.0[5], self.0[6], self.0[7])
    }
    /// Owned description.
    pub fn repr(&self) -> DethRepr {
        DethRepr { qkey: self.qkey(), src_qp: self.src_qp() }
    }
}
/// Owned DETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DethRepr {
    /// Q_Key.
    pub qkey: u32,
    /// Source QP (24 bits).
    pub src_qp: u32,
}
impl DethRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 8] {
        let q = self.qkey.to_be_bytes();
        let s = put24(self.src_qp);
        [q[0], q[1], q[2], q[3], 0, s[0], s[1], s[2]]
    }
}

view!(
    /// RETH: virtual address 64, R_Key 32, DMA length 32.
    Reth,
    16
);
impl Reth<'_> {
    /// Remote virtual address.
    pub fn va(&self) -> u64 {
        be64(self.0, 0)
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        be32(self.0, 8)
    }
    /// DMA length in bytes.
    pub fn dma_len(&self) -> u32 {
        be32(self.0, 12)
    }
    /// Owned description.
    pub fn repr(&self) -> RethRepr {
        RethRepr { va: self.va(), rkey: self.rkey(), dma_len: self.dma_len() }
    }
}
/// Owned RETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RethRepr {
    /// Virtual address.
    pub va: u64,
    /// R_Key.
    pub rkey: u32,
    /// DMA length.
    pub dma_len: u32,
}
impl RethRepr {
    /// Wire bytes.
    pub fn emit(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.va.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        b[12..].copy_from_slice(&self.dma_len.to_be_bytes());
        b
    }
}

view!(
    /// AtomicETH: VA 64, R_Key 32, swap/add data 64, compare data 64 (packed, 28 bytes).
    AtomicEth,
    28
);
impl AtomicEth<'_> {
    /// Remote virtual address.
    pub fn va(&self) -> u64 {
        be64(self.0, 0)
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        be32(self.0, 8)
    }
    /// Swap (CmpSwap) or add (FetchAdd) data.
    pub fn swap(&self) -> u64 {
        be64(self.0, 12)
    }
    /// Compare data (CmpSwap).
    pub fn compare(&self) -> u64 {
        be64(self.0, 20)
    }
    /// Owned description.
    pub fn repr(&self) -> AtomicEthRepr {
        AtomicEthRepr { va: self.va(), rkey: self.rkey(), swap: self.swap(), compare: self.compare() }
    }
}
/// Owned AtomicETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AtomicEthRepr {
    /// Virtual address.
    pub va: u64,
    /// R_Key.
    pub rkey: u32,
    /// Swap or add data.
    pub swap: u64,
    /// Compare data.
    pub compare: u64,
}
impl AtomicEthRepr {
    /// Wire bytes.
    pub fn emit(&self) -> [u8; 28] {
        let mut b = [0u8; 28];
        b[..8].copy_from_slice(&self.va.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        b[12..20].copy_from_slice(&self.swap.to_be_bytes());
        b[20..].copy_from_slice(&self.compare.to_be_bytes());
        b
    }
}

/// The kind of an AETH syndrome (bits 6-5; reference §1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AethKind {
    /// Positive acknowledgement (`00`); value = credit count code.
    Ack,
    /// Receiver Not Ready NAK (`01`); value = RNR timer code.
    RnrNak,
    /// Reserved (`10`).
    Reserved,
    /// NAK (`11`); value = NAK code.
    Nak,
}

impl AethKind {
    /// Lower-case name used in JSON ("ack", "rnr_nak", "reserved", "nak").
    pub const fn name(self) -> &'static str {
        match self {
            AethKind::Ack => "ack",
            AethKind::RnrNak => "rnr_nak",
            AethKind::Reserved => "reserved",
            AethKind::Nak => "nak",
        }
    }
}

/// NAK codes (syndrome 0x60-0x64; `include/rdma/ib_hdrs.h`). Open: other values decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NakCode(pub u8);

impl NakCode {
    /// PSN sequence error (0x60).
    pub const PSN_SEQUENCE_ERROR: NakCode = NakCode(0);
    /// Invalid request (0x61).
    pub const INVALID_REQUEST: NakCode = NakCode(1);
    /// Remote access error (0x62).
    pub const REMOTE_ACCESS_ERROR: NakCode = NakCode(2);
    /// Remote operational error (0x63).
    pub const REMOTE_OPERATIONAL_ERROR: NakCode = NakCode(3);
    /// Invalid RD request (0x64).
    pub const INVALID_RD_REQUEST: NakCode = NakCode(4);

    /// Name of the code.
    pub const fn name(self) -> &'static str {
        match self.0 {
            0 => "PSN Sequence Error",
            1 => "Invalid Request",
            2 => "Remote Access Error",
            3 => "Remote Operational Error",
            4 => "Invalid RD Request",
            _ => "Reserved",
        }
    }
}

/// Credits for ACK credit codes 0-30 (reference §1.5); code 31 means "invalid" (unlimited).
pub const CREDIT_TABLE: [u16; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
    4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

/// RNR timer codes in microseconds (code 0 = 655.36 ms; Wireshark `aeth_syndrome_timer_code_vals`).
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840, 5_120,
    7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760, 327_680,
    491_520,
];

view!(
    /// AETH: syndrome 8 + MSN 24.
    Aeth,
    4
);
impl Aeth<'_> {
    /// The raw syndrome byte.
    pub const fn syndrome(&self) -> u8 {
        self.0[0]
    }
    /// Message sequence number (24 bits).
    pub const fn msn(&self) -> u32 {
        be24(self.0[1], self.0[2], self.0[3])
    }
    /// Owned description.
    pub const fn repr(&self) -> AethRepr {
        AethRepr { syndrome: self.syndrome(), msn: self.msn() }
    }
    /// Syndrome type from bits 6-5 (never `syndrome & 0x20`, reference §2 mistake 5).
    pub const fn kind(&self) -> AethKind {
        self.repr().kind()
    }
}

/// Owned AETH with the syndrome's interpretation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AethRepr {
    /// Raw syndrome byte.
    pub syndrome: u8,
    /// MSN (24 bits).
    pub msn: u32,
}
impl AethRepr {
    /// A positive ACK with "unlimited" credits (code 0x1F).
    pub const fn ack(msn: u32) -> Self {
        AethRepr { syndrome: 0x1F, msn }
    }
    /// A NAK with `code`.
    pub const fn nak(code: NakCode, msn: u32) -> Self {
        AethRepr { syndrome: 0x60 | (code.0 & 0x1F), msn }
    }
    /// An RNR NAK with timer code `timer`.
    pub const fn rnr_nak(timer: u8, msn: u32) -> Self {
        AethRepr { syndrome: 0x20 | (timer & 0x1F), msn }
    }
    /// Syndrome type.
    pub const fn kind(&self) -> AethKind {
        match (self.syndrome >> 5) & 3 {
            0 => AethKind::Ack,
            1 => AethKind::RnrNak,
            2 => AethKind::Reserved,
            _ => AethKind::Nak,
        }
    }
    /// The five-bit value: credit code, RNR timer code or NAK code.
    pub const fn value(&self) -> u8 {
        self.syndrome & 0x1F
    }
    /// For ACKs: the credit count, or `None` for code 31 (credits not in use).
    pub fn credits(&self) -> Option<u16> {
        match self.kind() {
            AethKind::Ack => CREDIT_TABLE.get(usize::from(self.value())).copied(),
            _ => None,
        }
    }
    /// For RNR NAKs: the minimum RNR timer in microseconds.
    pub fn rnr_timer_us(&self) -> Option<u32> {
        match self.kind() {
            AethKind::RnrNak => RNR_TIMER_US.get(usize::from(self.value())).copied(),
            _ => None,
        }
    }
    /// For NAKs: the NAK code.
    pub const fn nak_code(&self) -> Option<NakCode> {
        match self.kind() {
            AethKind::Nak => Some(NakCode(self.value())),
            _ => None,
        }
    }
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        let m = put24(self.msn);
        [self.syndrome, m[0], m[1], m[2]]
    }
}

view!(
    /// AtomicAckETH: the original remote data, 64 bits.
    AtomicAckEth,
    8
);
impl AtomicAckEth<'_> {
    /// Original remote data.
    pub fn orig(&self) -> u64 {
        be64(self.0, 0)
    }
    /// Owned description.
    pub fn repr(&self) -> AtomicAckEthRepr {
        AtomicAckEthRepr { orig: self.orig() }
    }
}
/// Owned AtomicAckETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AtomicAckEthRepr {
    /// Original remote data.
    pub orig: u64,
}
impl AtomicAckEthRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 8] {
        self.orig.to_be_bytes()
    }
}

view!(
    /// ImmDt: 32 bits of immediate data (opaque, kept big-endian).
    ImmDt,
    4
);
impl ImmDt<'_> {
    /// The immediate value, read big-endian.
    pub fn value(&self) -> u32 {
        be32(self.0, 0)
    }
    /// Owned description.
    pub fn repr(&self) -> ImmDtRepr {
        ImmDtRepr { value: self.value() }
    }
}
/// Owned ImmDt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ImmDtRepr {
    /// Immediate data.
    pub value: u32,
}
impl ImmDtRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        self.value.to_be_bytes()
    }
}

view!(
    /// IETH: the R_Key to invalidate.
    Ieth,
    4
);
impl Ieth<'_> {
    /// R_Key to invalidate.
    pub fn rkey(&self) -> u32 {
        be32(self.0, 0)
    }
    /// Owned description.
    pub fn repr(&self) -> IethRepr {
        IethRepr { rkey: self.rkey() }
    }
}
/// Owned IETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IethRepr {
    /// R_Key.
    pub rkey: u32,
}
impl IethRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        self.rkey.to_be_bytes()
    }
}

view!(
    /// XRCETH: reserved 8 + XRC SRQ number 24 (`XRCETH_SRQN_MASK`).
    XrcEth,
    4
);
impl XrcEth<'_> {
    /// XRC shared receive queue number.
    pub const fn srqn(&self) -> u32 {
        be24(self.0[1], self.0[2], self.0[3])
    }
    /// Owned description.
    pub const fn repr(&self) -> XrcEthRepr {
        XrcEthRepr { srqn: self.srqn() }
    }
}
/// Owned XRCETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct XrcEthRepr {
    /// SRQ number (24 bits).
    pub srqn: u32,
}
impl XrcEthRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        let s = put24(self.srqn);
        [0, s[0], s[1], s[2]]
    }
}

view!(
    /// FETH (FLUSH): reserved 26 bits, selectivity level bits 5-4, placement type bits 3-0.
    Feth,
    4
);
impl Feth<'_> {
    /// Selectivity level (`FETH_SEL_MASK 0x30`).
    pub const fn sel(&self) -> u8 {
        (self.0[3] >> 4) & 0x03
    }
    /// Placement type (`FETH_PLT_MASK 0x0f`).
    pub const fn plt(&self) -> u8 {
        self.0[3] & 0x0F
    }
    /// Owned description.
    pub const fn repr(&self) -> FethRepr {
        FethRepr { sel: self.sel(), plt: self.plt() }
    }
}
/// Owned FETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FethRepr {
    /// Selectivity level (2 bits).
    pub sel: u8,
    /// Placement type (4 bits).
    pub plt: u8,
}
impl FethRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 4] {
        [0, 0, 0, (self.sel & 3) << 4 | (self.plt & 0x0F)]
    }
}

view!(
    /// The RoCEv2 CNP body: 16 reserved bytes (scapy `CNPPadding`).
    CnpBody,
    16
);
impl CnpBody<'_> {
    /// True when all 16 reserved bytes are zero, as the spec requires.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|b| *b == 0)
    }
    /// Owned description.
    pub fn repr(&self) -> CnpBodyRepr {
        CnpBodyRepr { reserved: *self.0 }
    }
}
/// Owned CNP body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CnpBodyRepr {
    /// The reserved bytes (zero on the wire).
    pub reserved: [u8; 16],
}
impl CnpBodyRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 16] {
        self.reserved
    }
}

view!(
    /// The Mellanox DC extension: 8 bytes after the BTH in DC packets (Wireshark reads a
    /// 20-byte BTH for DC). Its contents are vendor-defined and kept opaque.
    DcEth,
    8
);
impl DcEth<'_> {
    /// The eight bytes as one big-endian value.
    pub fn value(&self) -> u64 {
        be64(self.0, 0)
    }
    /// Owned description.
    pub fn repr(&self) -> DcEthRepr {
        DcEthRepr { value: self.value() }
    }
}
/// Owned DC extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DcEthRepr {
    /// The eight bytes, big-endian.
    pub value: u64,
}
impl DcEthRepr {
    /// Wire bytes.
    pub const fn emit(&self) -> [u8; 8] {
        self.value.to_be_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aeth_kinds_use_bits_6_5() {
        // Reference §2 mistake 5: an RNR NAK (0x20-0x3F) is not a NAK.
        let rnr = Aeth::new(&[0x2e, 0, 0, 7]);
        assert_eq!(rnr.kind(), AethKind::RnrNak);
        assert_eq!(rnr.repr().rnr_timer_us(), Some(1_280));
        assert_eq!(rnr.repr().nak_code(), None);
        let nak = Aeth::new(&[0x60, 0x00, 0x01, 0x00]);
        assert_eq!(nak.kind(), AethKind::Nak);
        assert_eq!(nak.repr().nak_code(), Some(NakCode::PSN_SEQUENCE_ERROR));
        assert_eq!(nak.msn(), 0x100);
        let ack = Aeth::new(&[0x1f, 0xff, 0xff, 0xff]);
        assert_eq!(ack.kind(), AethKind::Ack);
        assert_eq!(ack.repr().credits(), None);
        assert_eq!(ack.msn(), 0xffffff);
        assert_eq!(AethRepr { syndrome: 0x0a, msn: 0 }.credits(), Some(32));
        assert_eq!(Aeth::new(&[0x40, 0, 0, 0]).kind(), AethKind::Reserved);
        assert_eq!(NakCode(3).name(), "Remote Operational Error");
    }

    #[test]
    fn emit_round_trips() {
        let r = RethRepr { va: 0x0000_7fb2_35d0_9a00, rkey: 0x53829, dma_len: 8 };
        let b = r.emit();
        // VA, R_Key, DMA length, big-endian (bytes taken from dc-small.pcap frame 1).
        assert_eq!(hex::encode(b), "00007fb235d09a000005382900000008");
        assert_eq!(Reth::new(&b).repr(), r);
        let a = AtomicEthRepr { va: 1, rkey: 2, swap: 3, compare: 4 };
        assert_eq!(AtomicEth::new(&a.emit()).repr(), a);
        let d = DethRepr { qkey: 0x8001_0000, src_qp: 0x123456 };
        assert_eq!(hex::encode(d.emit()), "8001000000123456");
        assert_eq!(Deth::new(&d.emit()).repr(), d);
        let x = XrcEthRepr { srqn: 0xabcdef };
        assert_eq!(XrcEth::new(&x.emit()).repr(), x);
        let f = FethRepr { sel: 1, plt: 2 };
        assert_eq!(f.emit(), [0, 0, 0, 0x12]);
        assert_eq!(Feth::new(&f.emit()).repr(), f);
        assert_eq!(Rdeth::new(&RdethRepr { eecn: 6414926 }.emit()).eecn(), 6414926);
        assert_eq!(AtomicAckEth::new(&AtomicAckEthRepr { orig: 9 }.emit()).orig(), 9);
        assert_eq!(ImmDt::new(&[0xde, 0xad, 0xbe, 0xef]).value(), 0xdeadbeef);
        assert_eq!(Ieth::new(&IethRepr { rkey: 77 }.emit()).rkey(), 77);
    }
}
