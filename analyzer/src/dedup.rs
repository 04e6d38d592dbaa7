//! Mirror duplicates: the second copy of a packet that a capture holds twice.
//!
//! A SPAN of both ports a packet crosses, or two mirror sessions covering one path, puts
//! each packet in the capture twice: the copies are microseconds apart (the switch's
//! forwarding and queueing delay) and identical but for what the switch changes, the TTL
//! (one lower after a routed hop), the ECN field (CE may be set on the way out) and the IP
//! checksum. The ICRC masks exactly those fields (reference §1.6), so it is the same in both.
//! Read as two packets, the copies make every PSN a resend and every CNP "too fast" (field
//! notes, "Mirror artefacts": a capture-side artefact must never be read as a fabric fault).
//!
//! **The rule.** A RoCE frame is a duplicate of an earlier one at the same capture point
//! when, within [`DUP_WINDOW_NS`] of it, both carry the same IP addresses, IP identification
//! (IPv6: flow label), destination QP, PSN, opcode, UDP length and ICRC, and either
//! - the identification is not zero: NICs number every packet they send (ConnectX and
//!   soft-RoCE increment it per packet: the real captures' `ip.id`), so a true resend, even of
//!   the same PSN with the same payload, carries a new one; or
//! - it is zero (a sender that does not number its packets) and the copy's TTL is lower: it
//!   crossed a router after the first copy was taken, where a resend leaves its sender with
//!   the same TTL as the original.
//!
//! A resend later than the window is never a duplicate. Cost per frame: one hash of the
//! fields above and one probe of a fixed table ([`SLOTS`] entries, 24 bytes each, allocated
//! on the first RoCE frame: [`TABLE_BYTES`]), so O(1) and bounded memory whatever the capture; a packet whose
//! slot a later packet took before its copy came is missed (counted as a packet, as without
//! this rule), which takes more than [`SLOTS`] packets within one window.

use rustc_hash::FxHasher;
use std::hash::Hasher;

/// How far apart two copies of one packet may be: 1 ms. A switch's forwarding delay is a
/// microsecond or two; queueing under congestion adds up to its buffer's drain time (a few
/// MB at 100 Gb/s: hundreds of µs). A resend comes no sooner than a NAK's round trip, and
/// carries a new IP identification in any case.
pub const DUP_WINDOW_NS: i64 = 1_000_000;

/// Entries of the table of recent packets: 2^15 (768 KiB). A packet's copy comes
/// microseconds after it, a few dozen packets later even at 100 Gb/s, so a packet in between
/// takes its slot once in a thousand times or less; the window's worth of packets (12,000 in
/// 1 ms at 100 Gb/s of 1 kB frames) fits too.
pub const SLOTS: usize = 1 << 15;

/// Bytes the table takes once the first RoCE frame arrives.
pub const TABLE_BYTES: usize = SLOTS * std::mem::size_of::<Slot>();

/// What identifies a packet's copies: see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Capture point.
    pub point: u16,
    /// IP source and destination.
    pub src: std::net::IpAddr,
    /// IP destination.
    pub dst: std::net::IpAddr,
    /// IPv4 identification or IPv6 flow label.
    pub ident: u32,
    /// BTH destination QP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH opcode.
    pub opcode: u8,
    /// UDP length (or the record's RoCE length).
    pub len: u32,
    /// ICRC as carried (0 when the capture cut it off).
    pub icrc: u32,
}

impl Fingerprint {
    fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        match (self.src, self.dst) {
            (std::net::IpAddr::V4(a), std::net::IpAddr::V4(b)) => {
                h.write_u64((u64::from(u32::from(a)) << 32) | u64::from(u32::from(b)));
            }
            (a, b) => {
                let bits = |x: std::net::IpAddr| match x {
                    std::net::IpAddr::V4(v) => u128::from(u32::from(v)),
                    std::net::IpAddr::V6(v) => u128::from(v),
                };
                h.write_u128(bits(a));
                h.write_u128(bits(b));
            }
        }
        h.write_u64((u64::from(self.ident) << 32) | u64::from(self.dest_qp));
        h.write_u64((u64::from(self.psn) << 32) | (u64::from(self.opcode) << 16) | u64::from(self.point));
        h.write_u64((u64::from(self.len) << 32) | u64::from(self.icrc));
        // Never 0: 0 marks an empty slot.
        h.finish() | 1
    }
}

/// One slot: a packet seen, its fingerprint's hash, when, with which TTL, and whether a copy
/// of it seen so far carried CE.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hash: u64,
    ts: i64,
    ttl: u8,
    ce: bool,
}

/// What [`Dedup::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    /// A packet of its own (now remembered).
    No,
    /// A copy of a packet already seen; `marked` when it carries CE and no copy before it
    /// did (the switch marked the packet between the two mirror ports).
    Yes {
        /// CE appears on this copy first.
        marked: bool,
    },
}

/// Recent packets, to tell the second copy of one from a packet of its own.
#[derive(Clone, Debug, Default)]
pub struct Dedup {
    slots: Vec<Slot>,
}

impl Dedup {
    /// Whether the packet `fp` at `ts` with `ttl` (CE-marked when `ce`) is a copy of one
    /// already seen (see the module docs); a packet of its own is remembered.
    pub fn check(&mut self, fp: &Fingerprint, ts: i64, ttl: u8, ce: bool) -> Copy {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); SLOTS];
        }
        let hash = fp.hash();
        // The high bits pick the slot (FxHash's low bits are its weakest).
        let i = (hash >> 48) as usize & (SLOTS - 1);
        let Some(slot) = self.slots.get_mut(i) else { return Copy::No };
        let near = slot.hash == hash && ts.abs_diff(slot.ts) <= DUP_WINDOW_NS as u64;
        if near && (fp.ident != 0 || ttl < slot.ttl) {
            let marked = ce && !slot.ce;
            slot.ce |= ce;
            return Copy::Yes { marked };
        }
        *slot = Slot { hash, ts, ttl, ce };
        Copy::No
    }

    /// True when the packet is a copy of one already seen ([`Dedup::check`], unmarked).
    pub fn is_copy(&mut self, fp: &Fingerprint, ts: i64, ttl: u8) -> bool {
        matches!(self.check(fp, ts, ttl, false), Copy::Yes { .. })
    }
}

impl crate::Analyzer {
    /// Whether RoCE frame `v` is a mirror's second copy of a packet to leave out of the
    /// analysis: counted as a duplicate, and a CE mark it shows that the first copy did not
    /// goes to the packet's flow (`--keep-duplicates` keeps copies in).
    pub(crate) fn mirror_copy(
        &mut self,
        meta: &crate::FrameMeta,
        v: &crate::frame::RoceFrame<'_>,
        multi: bool,
    ) -> bool {
        let w = self.weight;
        let point = usize::from(meta.point);
        let (src, dst, ecn, prio) = (v.src, v.dst, v.ecn, v.prio);
        if let Some(ip) = v.ip {
            let fp = Fingerprint {
                point: meta.point,
                src,
                dst,
                ident: ip.ident,
                dest_qp: v.dest_qp,
                psn: v.psn,
                opcode: v.op.0,
                len: u32::from(ip.len_field),
                icrc: v.icrc.value.unwrap_or(0),
            };
            if let Copy::Yes { marked } =
                self.dedup.check(&fp, meta.ts_ns, ip.ttl, ecn == rocescope_decoder::Ecn::Ce)
            {
                self.totals.duplicates += w;
                if multi {
                    if let Some(pt) = self.points.get_mut(point) {
                        pt.duplicates += w;
                    }
                }
                if !self.cfg.keep_duplicates {
                    if marked {
                        let key = crate::FlowKey { src, dst, dest_qp: v.dest_qp, point: meta.point };
                        self.on_marked_copy(meta, key, v.psn, prio);
                    }
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(ident: u32, psn: u32) -> Fingerprint {
        Fingerprint {
            point: 0,
            src: [10, 0, 0, 1].into(),
            dst: [10, 0, 0, 2].into(),
            ident,
            dest_qp: 0x12,
            psn,
            opcode: 0x0A,
            len: 1060,
            icrc: 0xdead_beef,
        }
    }

    #[test]
    fn a_copy_within_the_window_is_a_duplicate_and_a_new_ident_is_not() {
        let mut d = Dedup::default();
        assert!(!d.is_copy(&fp(7, 100), 1_000, 64));
        // The egress copy, one hop later (or a bridged SPAN: the same TTL).
        assert!(d.is_copy(&fp(7, 100), 3_000, 63));
        assert!(d.is_copy(&fp(7, 100), 4_000, 64), "a third copy is one too");
        // A resend of PSN 100 carries a new identification: a packet of its own.
        assert!(!d.is_copy(&fp(9, 100), 5_000, 64));
        // After the window, the same fingerprint is a packet of its own.
        let mut d = Dedup::default();
        assert!(!d.is_copy(&fp(7, 100), 0, 64));
        assert!(!d.is_copy(&fp(7, 100), DUP_WINDOW_NS + 1, 64));
    }

    #[test]
    fn unnumbered_packets_are_copies_only_across_a_router() {
        let mut d = Dedup::default();
        assert!(!d.is_copy(&fp(0, 100), 1_000, 64));
        // Same TTL, no identification: a resend of the same bytes cannot be told from a
        // copy, so it counts as a packet.
        assert!(!d.is_copy(&fp(0, 100), 9_000, 64));
        assert!(d.is_copy(&fp(0, 100), 10_000, 63));
    }

    #[test]
    fn the_first_copy_to_carry_ce_is_marked() {
        let mut d = Dedup::default();
        assert_eq!(d.check(&fp(7, 100), 0, 64, false), Copy::No);
        assert_eq!(d.check(&fp(7, 100), 1_000, 63, true), Copy::Yes { marked: true });
        assert_eq!(d.check(&fp(7, 100), 2_000, 62, true), Copy::Yes { marked: false });
        // Marked before the first copy was taken: the copy adds nothing.
        assert_eq!(d.check(&fp(8, 101), 0, 64, true), Copy::No);
        assert_eq!(d.check(&fp(8, 101), 1_000, 63, true), Copy::Yes { marked: false });
    }

    #[test]
    fn every_field_of_the_fingerprint_tells_packets_apart() {
        let base = fp(7, 100);
        let variants = [
            Fingerprint { point: 1, ..base },
            Fingerprint { src: [10, 0, 0, 3].into(), ..base },
            Fingerprint { dst: [10, 0, 0, 3].into(), ..base },
            Fingerprint { dest_qp: 0x13, ..base },
            Fingerprint { psn: 101, ..base },
            Fingerprint { opcode: 0x06, ..base },
            Fingerprint { len: 1000, ..base },
            Fingerprint { icrc: 1, ..base },
        ];
        for v in variants {
            let mut d = Dedup::default();
            assert!(!d.is_copy(&base, 0, 64));
            assert!(!d.is_copy(&v, 1_000, 63), "{v:?}");
        }
    }
}
