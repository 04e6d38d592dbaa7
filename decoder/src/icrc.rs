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

/// A new hasher, without `Hasher::new`'s look at the CPU's features each time (done once).
fn fresh() -> Hasher {
    static FRESH: std::sync::OnceLock<Hasher> = std::sync::OnceLock::new();
    FRESH.get_or_init(Hasher::new).clone()
}

fn seeded() -> Hasher {
    let mut h = fresh();
    // The masked pseudo-LRH; equivalent to rxe's seed 0xDEBB20E3.
    h.update(&[0xFF; 8]);
    h
}

/// The BTH as the ICRC covers it: byte 4 (FECN, BECN, resv6) forced to 0xFF. The whole
/// byte is masked, not just resv6 (reference §2 mistake 1).
#[inline]
fn masked_bth(bth: &[u8; 12]) -> [u8; 12] {
    let mut b = *bth;
    b[4] = 0xFF;
    b
}

/// The UDP header as the ICRC covers it: its checksum forced to 0xFFFF.
#[inline]
fn masked_udp(udp: &[u8; 8]) -> [u8; 8] {
    let mut u = *udp;
    u[6] = 0xFF;
    u[7] = 0xFF;
    u
}

/// Mask the variant fields of an IPv4 header: TOS, TTL and header checksum.
#[inline]
fn mask_v4(b: &mut [u8]) {
    for i in [1usize, 8, 10, 11] {
        if let Some(x) = b.get_mut(i) {
            *x = 0xFF;
        }
    }
}

/// Feed the IB part: the masked BTH ([`masked_bth`]), then the rest.
fn feed_ib(h: &mut Hasher, ib: &[u8]) {
    match ib.split_first_chunk::<12>() {
        Some((bth, rest)) => {
            h.update(&masked_bth(bth));
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
    if let (Some(v4), Some((bth, rest))) = (ip.first_chunk::<20>(), ib.split_first_chunk::<12>()) {
        if ip.len() == 20 && v4[0] >> 4 == 4 {
            return icrc_v4(v4, udp, bth, rest);
        }
    }
    // The pseudo-LRH, the masked headers and as much of the rest as fits go into one buffer
    // and one CRC update: a complete ACK, CNP or READ request (the ICRCs a capture cut to its
    // headers checks) is a single short run, not five updates of a few bytes each (issue 39).
    // The bytes, and so the value, are those of the update per header.
    let mut buf = [0u8; ONE_RUN];
    let mut at = 0;
    put(&mut buf, &mut at, &[0xFF; 8]);
    let ip = ip.get(..ip.len().min(60)).unwrap_or(&[]);
    if let Some(hdr) = put(&mut buf, &mut at, ip) {
        match hdr.first().map(|b| b >> 4) {
            Some(4) => mask_v4(hdr),
            _ => mask_v6_like(hdr),
        }
    }
    put(&mut buf, &mut at, &masked_udp(udp));
    let rest = match ib.split_first_chunk::<12>() {
        Some((bth, rest)) => {
            put(&mut buf, &mut at, &masked_bth(bth));
            rest
        }
        None => ib,
    };
    // The rest: what fits in the run, then the remainder straight from the packet.
    let (head, tail) = rest.split_at(rest.len().min(ONE_RUN - at));
    put(&mut buf, &mut at, head);
    let mut h = fresh();
    h.update(buf.get(..at).unwrap_or(&[]));
    h.update(tail);
    h.finalize()
}

/// [`icrc_v2`] of the common packet: IPv4 without options and a whole BTH. The 48 bytes up to
/// the end of the BTH are put together at fixed offsets (no copy of a length known only at
/// run time), then hashed with what follows the BTH: two CRC updates.
fn icrc_v4(ip: &[u8; 20], udp: &[u8; 8], bth: &[u8; 12], rest: &[u8]) -> u32 {
    // The pseudo-LRH's 8 bytes of 0xFF, then the three headers, masked.
    let mut head = [0xFFu8; 48];
    if let Some(d) = head.get_mut(8..28) {
        d.copy_from_slice(ip);
        mask_v4(d);
    }
    if let Some(d) = head.get_mut(28..36) {
        d.copy_from_slice(&masked_udp(udp));
    }
    if let Some(d) = head.get_mut(36..48) {
        d.copy_from_slice(&masked_bth(bth));
    }
    let mut h = fresh();
    h.update(&head);
    h.update(rest);
    h.finalize()
}

/// `bytes` copied into `buf` at `at`, which moves past them: the copy, `None` (and nothing
/// copied) when they do not fit.
fn put<'b>(buf: &'b mut [u8; ONE_RUN], at: &mut usize, bytes: &[u8]) -> Option<&'b mut [u8]> {
    let end = *at + bytes.len();
    let dst = buf.get_mut(*at..end)?;
    dst.copy_from_slice(bytes);
    *at = end;
    Some(dst)
}

/// Bytes of one ICRC run ([`icrc_v2`]): the pseudo-LRH (8), the largest IP header (60), UDP
/// (8), the BTH (12) and 168 bytes of what follows.
const ONE_RUN: usize = 256;

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

    /// The ICRC as one update per header: what [`icrc_v2`]'s single run must agree with.
    fn per_header(ip: &[u8], udp: &[u8; 8], ib: &[u8]) -> u32 {
        let mut h = seeded();
        let mut hdr = ip[..ip.len().min(60)].to_vec();
        if hdr.first().map(|b| b >> 4) == Some(4) {
            for i in [1usize, 8, 10, 11] {
                if let Some(x) = hdr.get_mut(i) {
                    *x = 0xFF;
                }
            }
        } else {
            mask_v6_like(&mut hdr);
        }
        h.update(&hdr);
        let mut u = *udp;
        u[6] = 0xFF;
        u[7] = 0xFF;
        h.update(&u);
        feed_ib(&mut h, ib);
        h.finalize()
    }

    #[test]
    fn one_run_agrees_with_an_update_per_header() {
        // Bytes that differ everywhere, so a byte out of place changes the value.
        let bytes = |n: usize, seed: u8| -> Vec<u8> {
            (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
        };
        let udp: [u8; 8] = bytes(8, 7).try_into().unwrap();
        let mut v4 = bytes(20, 1);
        v4[0] = 0x45;
        let mut v4_options = bytes(60, 2);
        v4_options[0] = 0x4F;
        let mut v6 = bytes(40, 3);
        v6[0] = 0x60;
        // IB parts: shorter than a BTH, an ACK, a CNP, around the run's end, long payloads.
        for ip in [&v4[..], &v4_options[..], &v6[..], &[][..]] {
            for n in [0, 5, 12, 16, 28, 100, 167, 168, 169, 180, 256, 1036, 4200] {
                let ib = bytes(n, 9);
                assert_eq!(icrc_v2(ip, &udp, &ib), per_header(ip, &udp, &ib), "ip {} ib {n}", ip.len());
            }
        }
    }
}
