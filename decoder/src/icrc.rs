//! The invariant CRC (reference §1.6; `rxe_icrc.c`, scapy `BTH.compute_icrc`).
//!
//! CRC-32 (zlib) over 8 bytes of 0xFF standing in for the LRH, then the IP (or GRH), UDP
//! and IB headers with their variant fields forced to all-ones, then the extended headers,
//! payload and pad. The 32-bit result is stored least-significant byte first.

use crc32fast::Hasher;

/// The ICRC verdict for a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IcrcStatus {
    /// The stored ICRC matches the computed one.
    Valid,
    /// It does not: corruption, a rewriting middlebox, or a capture artifact.
    Invalid,
    /// The frame is shorter than its IP/UDP (or GRH) lengths say; not checked.
    Truncated,
    /// No ICRC applies (not RoCE, or the layout could not be decoded).
    NotApplicable,
}

impl IcrcStatus {
    /// Lower-case name used in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            IcrcStatus::Valid => "valid",
            IcrcStatus::Invalid => "invalid",
            IcrcStatus::Truncated => "truncated",
            IcrcStatus::NotApplicable => "not_applicable",
        }
    }
}

/// The ICRC of a packet: the stored value (as the little-endian wire word, i.e. zlib's
/// value), what rocescope computed, and the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Icrc {
    /// The value on the wire, when captured.
    pub value: Option<u32>,
    /// The value computed from the packet, when it could be.
    pub computed: Option<u32>,
    /// The verdict.
    pub status: IcrcStatus,
}

impl Icrc {
    /// No ICRC applies.
    pub const NOT_APPLICABLE: Icrc = Icrc { value: None, computed: None, status: IcrcStatus::NotApplicable };
}

fn seeded() -> Hasher {
    let mut h = Hasher::new();
    // The masked pseudo-LRH; equivalent to rxe's seed 0xDEBB20E3.
    h.update(&[0xFF; 8]);
    h
}

/// Feed the IB part: the BTH with byte 4 (FECN, BECN, resv6) forced to 0xFF, then the rest.
/// The whole byte is masked, not just resv6 (reference §2 mistake 1).
fn feed_ib(h: &mut Hasher, ib: &[u8]) {
    match ib.split_first_chunk::<12>() {
        Some((bth, rest)) => {
            let mut b = *bth;
            b[4] = 0xFF;
            h.update(&b);
            h.update(rest);
        }
        None => h.update(ib),
    }
}

/// Mask the variant fields of an IPv6 header or GRH (same first-8-byte layout):
/// traffic class, flow label and hop limit.
fn mask_v6_like(b: &mut [u8]) {
    if let Some(first) = b.first_mut() {
        *first |= 0x0F;
    }
    for i in [1usize, 2, 3, 7] {
        if let Some(x) = b.get_mut(i) {
            *x = 0xFF;
        }
    }
}

/// ICRC for RoCEv2. `ip` is the whole IP header (IPv4 with options, or the 40-byte IPv6
/// header), `udp` the UDP header, `ib` the BTH through the pad bytes (without the ICRC).
pub fn icrc_v2(ip: &[u8], udp: &[u8; 8], ib: &[u8]) -> u32 {
    let mut h = seeded();
    let mut buf = [0u8; 60];
    let n = ip.len().min(60);
    let hdr = buf.get_mut(..n).unwrap_or(&mut []);
    hdr.copy_from_slice(ip.get(..n).unwrap_or(&[]));
    match hdr.first().map(|b| b >> 4) {
        Some(4) => {
            // TOS, TTL and header checksum.
            for i in [1usize, 8, 10, 11] {
                if let Some(x) = hdr.get_mut(i) {
                    *x = 0xFF;
                }
            }
        }
        _ => mask_v6_like(hdr),
    }
    h.update(hdr);
    let mut u = *udp;
    u[6] = 0xFF;
    u[7] = 0xFF;
    h.update(&u);
    feed_ib(&mut h, ib);
    h.finalize()
}

/// ICRC for RoCEv1: the GRH (traffic class, flow label and hop limit masked), then `ib`
/// (BTH through pad, without the ICRC).
pub fn icrc_v1(grh: &[u8; 40], ib: &[u8]) -> u32 {
    let mut h = seeded();
    let mut g = *grh;
    mask_v6_like(&mut g);
    h.update(&g);
    feed_ib(&mut h, ib);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_matches_rxe() {
        // rxe: "0xdebb20e3 is the result of computing a CRC with a seed of 0xffffffff and
        // 8 bytes of 0xff". crc32fast keeps the state inverted: !finalize() is the raw state.
        assert_eq!(!seeded().finalize(), 0xDEBB_20E3);
    }
}
