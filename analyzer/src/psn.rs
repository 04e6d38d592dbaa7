//! 24-bit PSN arithmetic and the request-stream tracker (reference §1.10).
//!
//! The tracker follows one flow's request PSNs in O(1) per packet with a fixed window of
//! recently seen PSNs: gaps (and the PSNs missing in them), retransmissions split by cause
//! (a pending NAK or RNR NAK, else the requester's ACK timeout), duplicates, out-of-order
//! arrivals, READ PSN reservations, and which gaps were never NAKed or resent (probable
//! capture loss rather than network loss).

use std::collections::VecDeque;

/// PSN space.
pub const PSN_MOD: u32 = 1 << 24;
const MASK: u32 = PSN_MOD - 1;

/// `a - b` as a signed distance in 24-bit modular arithmetic (`rxe_verbs.h` psn_compare).
pub const fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b)) << 8) as i32 >> 8
}

/// `a + n` modulo 2^24.
pub const fn psn_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & MASK
}

/// PSNs remembered behind the highest one seen (to tell duplicates from gap fillers). Kept
/// inline (64 bytes) so the per-packet check needs no pointer chase.
const WINDOW: u32 = 512;
/// A PSN further behind than this, outside any open gap, starts a new stream.
const RESYNC_BEHIND: i32 = 1 << 15;
/// Open gaps remembered per flow; older unresolved ones are counted as capture loss.
const MAX_OPEN_GAPS: usize = 64;
/// A jump ahead larger than this is a new PSN stream (a new connection on a reused QP
/// number, or a restart), not a gap.
const RESYNC_AHEAD: i32 = 1 << 16;

/// Why a request PSN was sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// After a NAK (PSN sequence error) or RNR NAK: go-back-N or the RNR retry.
    Nak,
    /// No NAK pending: the requester's ACK timeout fired.
    Timeout,
}

/// What one request packet was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The first request seen on the flow.
    First,
    /// The expected next PSN.
    InOrder,
    /// Ahead of the expected PSN: `missing` PSNs skipped.
    Gap {
        /// PSNs missing before this one.
        missing: u32,
    },
    /// At or behind the highest PSN: sent again.
    Retransmit {
        /// Why.
        cause: Cause,
        /// This PSN had been seen before (a duplicate on the wire).
        duplicate: bool,
        /// First packet of a retransmission burst.
        burst_start: bool,
    },
    /// Behind the highest PSN, filling a gap, with no NAK and soon after the gap: reordered.
    OutOfOrder,
}

/// A gap not yet explained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// First missing PSN.
    pub start: u32,
    /// Missing PSNs.
    pub count: u32,
    /// Frame that revealed it (the first one past the gap).
    pub frame: u64,
    /// Its time.
    pub ts_ns: i64,
    /// A NAK or a retransmission covered it: lost in the network.
    pub explained: bool,
    /// A reordered packet filled it: not lost at all.
    pub filled: bool,
}

impl Gap {
    fn contains(&self, psn: u32) -> bool {
        let d = psn_diff(psn, self.start);
        d >= 0 && (d as u32) < self.count
    }
}

/// Event counters of one request stream.
#[derive(Clone, Debug, Default)]
pub struct PsnStats {
    /// Gap events.
    pub gaps: u64,
    /// Packets sent again.
    pub retransmits: u64,
    pub(crate) open: VecDeque<Gap>,
    /// PSNs missing in them.
    pub missing: u64,
    /// Of those, after a NAK or RNR NAK.
    pub retransmits_nak: u64,
    /// Of those, with no NAK pending (timeouts).
    pub retransmits_timeout: u64,
    /// Of the NAK-triggered ones, retries after an RNR NAK (not loss).
    pub retransmits_rnr: u64,
    /// Packets seen twice.
    pub duplicates: u64,
    /// Gap fillers that arrived without a NAK or resend.
    pub out_of_order: u64,
    /// Gaps explained by a NAK or a retransmission (network loss).
    pub network_loss_gaps: u64,
    /// Gaps that fell out of the open-gap window unexplained.
    pub capture_loss_gaps_aged: u64,
    /// Times the stream restarted at an unrelated PSN (a new connection on the same QP
    /// number, or a CM exchange): not counted as gaps or retransmissions.
    pub resyncs: u64,
    /// The first few gaps, for evidence.
    pub first_gaps: Vec<Gap>,
}

/// Counters and state of one request stream (hot fields first).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PsnTracker {
    started: bool,
    /// A READ reserved an unknown number of PSNs (PMTU not known yet): the next request
    /// re-synchronises instead of reporting a gap.
    resync: bool,
    burst: Option<(Cause, bool)>,
    nak_pending: Option<bool>,
    /// The PSN after the highest one used (READ reservations included).
    expected: u32,
    /// Request packets seen.
    pub requests: u64,
    seen: [u64; (WINDOW / 64) as usize],
    /// Counters and open gaps: touched on events only, kept out of line.
    pub stats: Box<PsnStats>,
}

impl PsnTracker {
    /// A tracker with its window allocated.
    pub fn new() -> Self {
        PsnTracker::default()
    }

    fn bit(&self, psn: u32) -> bool {
        let i = (psn % WINDOW) as usize;
        self.seen.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    fn set(&mut self, psn: u32, on: bool) {
        let i = (psn % WINDOW) as usize;
        if let Some(w) = self.seen.get_mut(i / 64) {
            if on {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    /// Advance the window to cover `[self.expected, new_expected)`, clearing stale bits.
    fn advance(&mut self, new_expected: u32) {
        let d = psn_diff(new_expected, self.expected).max(0) as u32;
        if d >= WINDOW {
            self.seen.iter_mut().for_each(|w| *w = 0);
        } else {
            for k in 0..d {
                self.set(psn_add(self.expected, k), false);
            }
        }
        self.expected = new_expected;
    }

    /// A NAK (sequence error) or, with `rnr`, an RNR NAK for this flow arrived: the next
    /// resend is its doing. A sequence-error NAK explains the gaps containing `psn`.
    pub fn on_nak(&mut self, psn: u32, rnr: bool) {
        self.nak_pending = Some(rnr);
        if !rnr {
            self.explain(psn);
        }
    }

    fn explain(&mut self, psn: u32) {
        for g in self.stats.open.iter_mut() {
            if !g.explained && (g.contains(psn) || psn_diff(psn, g.start) == g.count as i32) {
                g.explained = true;
                self.stats.network_loss_gaps += 1;
            }
        }
    }

    /// The highest PSN used so far (the last reserved one for a READ).
    pub fn highest(&self) -> Option<u32> {
        self.started.then(|| psn_add(self.expected, MASK))
    }

    /// Record a request packet with PSN `psn` reserving `span` PSNs (1, or the number of
    /// READ response packets for a READ request; 0 when that number is unknown, so the next
    /// request re-synchronises). `reorder_ns` bounds how soon after a gap a filler counts as
    /// reordering rather than a resend.
    pub fn on_request(&mut self, psn: u32, span: u32, frame: u64, ts_ns: i64, reorder_ns: i64) -> Verdict {
        let unknown_span = span == 0;
        let span = span.clamp(1, 1 << 20);
        if std::mem::replace(&mut self.resync, unknown_span) && psn_diff(psn, self.expected) > 0 {
            self.advance(psn);
        }
        self.requests += 1;
        if self.started {
            let d = psn_diff(psn, self.expected);
            let far_behind = d < -RESYNC_BEHIND && !self.stats.open.iter().any(|g| g.contains(psn));
            if d > RESYNC_AHEAD || far_behind {
                self.restart();
                self.stats.resyncs += 1;
            }
        }
        if !self.started {
            self.started = true;
            self.expected = psn;
            self.advance(psn_add(psn, span));
            self.mark(psn, span);
            return Verdict::First;
        }
        let d = psn_diff(psn, self.expected);
        if d >= 0 {
            self.burst = None;
            self.advance(psn_add(psn, span));
            self.mark(psn, span);
            if d == 0 {
                return Verdict::InOrder;
            }
            let missing = d as u32;
            self.stats.gaps += 1;
            self.stats.missing += u64::from(missing);
            let gap = Gap {
                start: psn_add(psn, PSN_MOD - missing),
                count: missing,
                frame,
                ts_ns,
                explained: false,
                filled: false,
            };
            if self.stats.first_gaps.len() < 8 {
                self.stats.first_gaps.push(gap);
            }
            if self.stats.open.len() == MAX_OPEN_GAPS {
                if let Some(old) = self.stats.open.pop_front() {
                    if !old.explained && !old.filled {
                        self.stats.capture_loss_gaps_aged += 1;
                    }
                }
            }
            self.stats.open.push_back(gap);
            return Verdict::Gap { missing };
        }
        // At or behind the highest PSN.
        let duplicate = -d <= WINDOW as i32 && self.bit(psn);
        let in_gap = self.stats.open.iter().find(|g| g.contains(psn)).copied();
        self.mark(psn, 1);
        if self.burst.is_none() && self.nak_pending.is_none() && !duplicate {
            if let Some(g) = in_gap {
                if !g.explained && ts_ns - g.ts_ns <= reorder_ns {
                    self.stats.out_of_order += 1;
                    if let Some(open) = self.stats.open.iter_mut().find(|o| o.contains(psn)) {
                        open.filled = true;
                    }
                    return Verdict::OutOfOrder;
                }
            }
        }
        let burst_start = self.burst.is_none();
        let (cause, rnr) = match (self.burst, self.nak_pending) {
            (Some(b), _) => b,
            (None, Some(rnr)) => (Cause::Nak, rnr),
            (None, None) => (Cause::Timeout, false),
        };
        self.burst = Some((cause, rnr));
        self.nak_pending = None;
        self.stats.retransmits += 1;
        match cause {
            Cause::Nak => self.stats.retransmits_nak += 1,
            Cause::Timeout => self.stats.retransmits_timeout += 1,
        }
        if rnr {
            self.stats.retransmits_rnr += 1;
        }
        if duplicate {
            self.stats.duplicates += 1;
        }
        self.explain(psn);
        Verdict::Retransmit { cause, duplicate, burst_start }
    }

    /// Forget the stream position (a new connection on this flow); counters stay.
    pub fn restart(&mut self) {
        self.started = false;
        self.burst = None;
        self.nak_pending = None;
        self.resync = false;
        for g in self.stats.open.drain(..) {
            if !g.explained && !g.filled {
                self.stats.capture_loss_gaps_aged += 1;
            }
        }
        self.seen.iter_mut().for_each(|w| *w = 0);
    }

    fn mark(&mut self, psn: u32, span: u32) {
        for k in 0..span.min(WINDOW) {
            self.set(psn_add(psn, k), true);
        }
    }

    /// Gaps never explained by a NAK or a retransmission: probable capture loss.
    pub fn unexplained_gaps(&self) -> impl Iterator<Item = &Gap> {
        self.stats.open.iter().filter(|g| !g.explained && !g.filled)
    }

    /// Count of unexplained gaps, aged ones included.
    pub fn capture_loss_gaps(&self) -> u64 {
        self.stats.capture_loss_gaps_aged + self.unexplained_gaps().count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modular_distance() {
        assert_eq!(psn_diff(5, 3), 2);
        assert_eq!(psn_diff(3, 5), -2);
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        assert_eq!(psn_add(0xFF_FFFF, 2), 1);
    }

    #[test]
    fn go_back_n_after_one_loss() {
        let mut t = PsnTracker::new();
        for p in [100, 101, 102] {
            t.on_request(p, 1, 0, 0, 1000);
        }
        assert_eq!(t.on_request(104, 1, 4, 10, 1000), Verdict::Gap { missing: 1 });
        t.on_request(105, 1, 5, 11, 1000);
        t.on_nak(103, false);
        let v = t.on_request(103, 1, 7, 20, 1000);
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Nak, duplicate: false, burst_start: true });
        let v = t.on_request(104, 1, 8, 21, 1000);
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Nak, duplicate: true, burst_start: false });
        t.on_request(105, 1, 9, 22, 1000);
        assert_eq!(t.on_request(106, 1, 10, 23, 1000), Verdict::InOrder);
        assert_eq!(
            (t.stats.gaps, t.stats.missing, t.stats.retransmits, t.stats.retransmits_nak, t.stats.duplicates),
            (1, 1, 3, 3, 2)
        );
        assert_eq!(t.capture_loss_gaps(), 0);
        assert_eq!(t.stats.network_loss_gaps, 1);
    }

    #[test]
    fn wrap_is_not_a_gap_and_capture_loss_is_told_apart() {
        let mut t = PsnTracker::new();
        for p in [0xFF_FFFC, 0xFF_FFFD, 0xFF_FFFE, 0xFF_FFFF] {
            t.on_request(p, 1, 0, 0, 1000);
        }
        assert_eq!(t.on_request(1, 1, 5, 10, 1000), Verdict::Gap { missing: 1 });
        assert_eq!(t.on_request(2, 1, 6, 11, 1000), Verdict::InOrder);
        assert_eq!((t.stats.gaps, t.stats.missing, t.stats.retransmits), (1, 1, 0));
        assert_eq!(t.capture_loss_gaps(), 1);
        assert_eq!(t.unexplained_gaps().next().map(|g| g.start), Some(0));
    }

    #[test]
    fn read_reservation_is_not_a_gap() {
        let mut t = PsnTracker::new();
        t.on_request(10, 1, 1, 0, 1000);
        assert_eq!(t.on_request(11, 3, 2, 1, 1000), Verdict::InOrder); // READ of 3 packets
        assert_eq!(t.on_request(14, 1, 3, 2, 1000), Verdict::InOrder);
        assert_eq!(t.stats.gaps, 0);
    }

    #[test]
    fn a_new_stream_on_the_same_flow_is_not_loss() {
        // write... pcapng reuses QP 0x11 with a new random starting PSN 22 s later.
        let mut t = PsnTracker::new();
        t.on_request(7_825_157, 1, 51, 0, 1000);
        assert_eq!(t.on_request(16_227_732, 1, 266, 1, 1000), Verdict::First);
        assert_eq!((t.stats.gaps, t.stats.retransmits, t.stats.resyncs), (0, 0, 1));
        t.on_request(16_227_733, 1, 267, 2, 1000);
        assert_eq!(t.on_request(100, 1, 268, 3, 1000), Verdict::First);
        assert_eq!(t.stats.resyncs, 2);
    }

    #[test]
    fn timeout_and_reorder() {
        let mut t = PsnTracker::new();
        t.on_request(7000, 1, 1, 0, 1000);
        let v = t.on_request(7000, 1, 2, 67_000_000, 1000);
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Timeout, duplicate: true, burst_start: true });
        let mut r = PsnTracker::new();
        r.on_request(1, 1, 1, 0, 1000);
        r.on_request(3, 1, 2, 10, 1000);
        assert_eq!(r.on_request(2, 1, 3, 20, 1000), Verdict::OutOfOrder);
        assert_eq!((r.stats.out_of_order, r.stats.retransmits), (1, 0));
        assert_eq!(r.capture_loss_gaps(), 0, "a reordered filler is neither network nor capture loss");
        assert_eq!(r.stats.network_loss_gaps, 0);
    }
}
