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

/// PSNs remembered behind the highest one seen (to tell duplicates from gap fillers):
/// the `window` submodule, 8 bytes inline for an in-order stream.
mod window;
use window::{SeenWindow, WINDOW};
/// A PSN further behind than this, outside any open gap, starts a new stream.
const RESYNC_BEHIND: i32 = 1 << 15;
/// Open gaps remembered per flow; older unresolved ones are counted as capture loss.
const MAX_OPEN_GAPS: usize = 64;
/// A jump ahead larger than this is a new PSN stream (a new connection on a reused QP
/// number, or a restart), not a gap.
const RESYNC_AHEAD: i32 = 1 << 16;
/// A request PSN the responder had already acknowledged, this far or further behind the
/// highest PSN, starts a new life of the QP (an NCCL job restarted on reused QP numbers
/// begins again at PSN 0): an RC requester resends only unacknowledged packets (field notes
/// "QP lives", IBTA 9.7.5), and a resend of a tail whose ACK was lost beyond the capture
/// point goes back no further than the requester's outstanding window. Twice [`WINDOW`].
const LIFE_BEHIND: i32 = 2 * WINDOW as i32;
/// ... or this long after the flow last sent anything (new or resent): a new life after
/// an idle spell, however close to the old PSNs it starts.
const LIFE_IDLE_NS: i64 = 1_000_000_000;
/// Retries of one PSN after which the QP has used up its retry count: NCCL_IB_RETRY_CNT's
/// default 7 (field notes "Retries that run out"; the IB retry_cnt is at most 7).
pub const RETRY_CNT: u32 = 7;
/// A filler for a NAKed PSN this long or longer after the NAK is the requester's answer to
/// it (a selective resend: the NAK had to reach the requester and the copy come back), not
/// the original arriving late.
const SELECTIVE_MIN_NS: i64 = 1_000;

/// Why a request PSN was sent again (reference §1.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// After a NAK (PSN sequence error) or RNR NAK: go-back-N or the RNR retry.
    Nak,
    /// After a NAK for a packet that then arrived late: go-back-N that reordering provoked,
    /// resending packets that were never lost.
    SpuriousNak,
    /// A READ request re-issued from inside an earlier READ's PSN range: the requester saw
    /// its READ responses out of sequence (an implied NAK, mlx5 `implied_nak_seq_err`).
    ImpliedNak,
    /// No NAK pending, and at least the ACK timeout since the original: the requester's
    /// ACK timeout fired (mlx5 `local_ack_timeout_err`).
    Timeout,
    /// No NAK in the capture and too soon for the ACK timeout: a NAK the capture does not
    /// hold (the other direction missing, or dropped by the capture).
    Unknown,
}

/// What one request packet was, as far as can be told when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The first request seen on the flow.
    First,
    /// The first request of a new life of the QP: a restart at an unrelated PSN (a new
    /// random starting PSN), or back at a PSN the responder had already acknowledged (an
    /// NCCL restart at PSN 0): neither a gap nor a resend.
    NewLife {
        /// The PSN fell back behind the acknowledged ones (else it jumped elsewhere).
        fell_back: bool,
    },
    /// A request on a PSN a READ request had reserved for its responses: the requester
    /// broke the PSN rules (IBTA C9-?? in docs/verdicts.md); not a resend.
    InReadRange,
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
    /// A PSN never seen before that fills a gap. Whether it arrived late (reordering) or
    /// starts a go-back-N resend is told by the next packet: a resend burst goes on with
    /// the PSN after it, which the flow had already sent. See [`Resolution`].
    Filler,
}

/// How a run of gap fillers turned out, decided when the packet after them arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// They arrived late: reordering, not loss.
    Late {
        /// First filler's frame and time.
        frame: u64,
        /// Its time.
        ts_ns: i64,
        /// Its PSN.
        psn: u32,
        /// Fillers in the run.
        packets: u32,
        /// How long after the gap was seen the first one came.
        late_ns: i64,
    },
    /// They started a resend burst (go-back-N): the PSNs had been lost.
    Resent {
        /// First filler's frame.
        frame: u64,
        /// Its time.
        ts_ns: i64,
        /// Its PSN.
        psn: u32,
        /// Why it was resent.
        cause: Cause,
    },
}

/// An ACK or NAK PSN outside the outstanding window ([`PsnTracker::on_ack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckOutside {
    /// Ahead of every request PSN sent (the highest given).
    Ahead {
        /// The highest request PSN sent.
        highest: u32,
    },
    /// Behind the PSN already acknowledged (given).
    Behind {
        /// The PSN acknowledged before (or the one before the stream's first).
        acked: u32,
    },
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
    /// A late packet filled it: not lost at all.
    pub filled: bool,
    /// A sequence-error NAK named it.
    pub naked: bool,
}

impl Gap {
    fn contains(&self, psn: u32) -> bool {
        let d = psn_diff(psn, self.start);
        d >= 0 && (d as u32) < self.count
    }
}

/// What a flow without PSN events reads as its counters.
static NO_EVENTS: PsnStats = PsnStats {
    fill: None,
    gaps: 0,
    retransmits: 0,
    open: VecDeque::new(),
    missing: 0,
    retransmits_nak: 0,
    retransmits_timeout: 0,
    retransmits_rnr: 0,
    retransmits_spurious: 0,
    retransmits_implied: 0,
    retransmits_unknown: 0,
    duplicates: 0,
    out_of_order: 0,
    late_beyond_window: 0,
    max_late_ns: 0,
    network_loss_gaps: 0,
    spurious_naks: 0,
    capture_loss_gaps_aged: 0,
    resyncs: 0,
    first_gaps: Vec::new(),
    last_resend_after_ns: None,
    spurious_nak: None,
    timeout_bursts: 0,
    implied_bursts: 0,
    lost_beyond: 0,
    resent_out_of_sequence: 0,
    lost_here: 0,
    timeout_stall_ns: 0,
    resend_gaps: 0,
    resend_gap_min_ns: 0,
    resend_gap_max_ns: 0,
    resend_gap_max_frame: 0,
    last_burst: None,
    last_resent: None,
    retry_run: 0,
    retries_max: 0,
    retries_max_span_ns: 0,
    retries_max_frame: 0,
    lives_fell_back: 0,
    lives_from_zero: 0,
    selective_resends: 0,
    in_read_range: 0,
    retry_run_end: None,
    acks_outside: 0,
    resent_len_max: 0,
    nak_at: None,
    selective_at: None,
};

/// Event counters of one request stream (allocated on its first event:
/// [`PsnTracker::stats`]).
#[derive(Clone, Debug, Default)]
pub struct PsnStats {
    /// The run of reordered or resent packets under way (only such packets open one): kept
    /// with the events, not in every tracker (issue 39).
    fill: Option<FillRun>,
    /// Gap events.
    pub gaps: u64,
    /// Packets sent again.
    pub retransmits: u64,
    pub(crate) open: VecDeque<Gap>,
    /// PSNs missing in them.
    pub missing: u64,
    /// Of the resends, after a NAK or RNR NAK (spurious NAKs included).
    pub retransmits_nak: u64,
    /// Of the resends, after the ACK timeout (no NAK pending, the timeout plausible).
    pub retransmits_timeout: u64,
    /// Of the NAK-triggered ones, retries after an RNR NAK (not loss).
    pub retransmits_rnr: u64,
    /// Of the NAK-triggered ones, after a NAK for a packet that arrived late (needless).
    pub retransmits_spurious: u64,
    /// READ requests re-issued from inside an earlier READ (implied NAK).
    pub retransmits_implied: u64,
    /// Resends with no NAK in the capture, too soon for the ACK timeout.
    pub retransmits_unknown: u64,
    /// Packets seen twice.
    pub duplicates: u64,
    /// Gap fillers that arrived late, with no resend (reordering).
    pub out_of_order: u64,
    /// Of those, later than the reorder window.
    pub late_beyond_window: u64,
    /// The latest of them: how long after its gap was seen.
    pub max_late_ns: i64,
    /// Gaps explained by a NAK or a retransmission (network loss).
    pub network_loss_gaps: u64,
    /// Sequence-error NAKs whose missing packet arrived late after all.
    pub spurious_naks: u64,
    /// Gaps that fell out of the open-gap window unexplained.
    pub capture_loss_gaps_aged: u64,
    /// Times the stream restarted at an unrelated PSN (a new connection on the same QP
    /// number, or a CM exchange): not counted as gaps or retransmissions.
    pub resyncs: u64,
    /// The first few gaps, for evidence.
    pub first_gaps: Vec<Gap>,
    /// How long the flow had sent nothing new before its last resend of unknown cause: for
    /// the report's wording.
    pub last_resend_after_ns: Option<i64>,
    /// The PSN of a NAK whose packet arrived late: the go-back-N it starts is needless.
    /// Here, not in the tracker: only a stream with events has one (8 bytes off every
    /// tracker, which then takes a 112-byte allocation, not 128: issue 39).
    pub(crate) spurious_nak: Option<u32>,
    /// Resend bursts after the ACK timeout: timer expirations (one resends every packet
    /// outstanding; a NIC counts it once, mlx5 `local_ack_timeout_err`).
    pub timeout_bursts: u64,
    /// Resend bursts after an implied NAK (mlx5 `implied_nak_seq_err` counts each once).
    pub implied_bursts: u64,
    /// Go-back-N bursts after a sequence-error NAK (not RNR, not needless) that start at a
    /// PSN this point had seen pass: at least that packet was lost beyond this point.
    pub lost_beyond: u64,
    /// Packets of go-back-N bursts after a sequence-error NAK, after the burst's first, that
    /// this point had seen before: they had reached the responder after the missing one, out
    /// of sequence, and were dropped there (mlx5 `out_of_sequence` counts each).
    pub resent_out_of_sequence: u64,
    /// PSNs missing in the gaps explained as network loss (NAKed or resent, not filled late).
    pub lost_here: u64,
    /// The longest a flow had sent nothing new before a timeout resend began: how long the
    /// requester stalled waiting out its ACK timeout (a lower bound: the lost packet may
    /// have been sent a little after the flow's last new one).
    pub timeout_stall_ns: i64,
    /// Passes of resends with no NAK or implied NAK before them (timeouts, and resends of
    /// unknown cause): what the requester's ACK timer, or a NIC's adaptive retransmission,
    /// did (the NCCL_IB_TIMEOUT check, crate::nccl). A pass is a resend burst, or a part
    /// of one that goes back to a PSN it already resent (a timer that fired again: the
    /// counters above count such a burst once). Each pass's gap is the time since the flow
    /// last sent anything new or began its previous pass.
    pub resend_gaps: u64,
    /// The shortest of those gaps (0 while there is none: see `resend_gaps`).
    pub resend_gap_min_ns: i64,
    /// The longest.
    pub resend_gap_max_ns: i64,
    /// The frame that began the pass after the longest gap.
    pub resend_gap_max_frame: u64,
    /// The previous pass of resends: (its first PSN, its time), for the retry runs.
    pub(crate) last_burst: Option<(u32, i64)>,
    /// The PSN last resent: a resend at or before it begins another pass.
    pub(crate) last_resent: Option<u32>,
    /// Passes of the current run: passes (RNR retries left out) that began at the same PSN
    /// with no new packet sent in between.
    pub(crate) retry_run: u32,
    /// The longest such run: how many times one PSN was sent again without progress (each
    /// pass costs the QP one retry of its retry count, IB Local ACK timeout or
    /// NAK-sequence retries alike; the NCCL_IB_RETRY_CNT check, crate::nccl).
    pub retries_max: u32,
    /// Its span: from the flow's last new packet before it to its last resend.
    pub retries_max_span_ns: i64,
    /// The frame of its last resend.
    pub retries_max_frame: u64,
    /// New lives of the QP that began back at a PSN the responder had already
    /// acknowledged (an NCCL restart at PSN 0 on a reused QP number): not resends.
    pub lives_fell_back: u64,
    /// Of those, the lives that began at PSN 0 (NCCL's `sq_psn = 0`).
    pub lives_from_zero: u64,
    /// Resends after a sequence-error NAK of the NAKed PSN alone, the flow then going on
    /// with new PSNs (selective repeat, lossy RoCE), rather than everything from it.
    pub selective_resends: u64,
    /// Requests on a PSN a READ had reserved for its responses (a PSN rule violation).
    pub in_read_range: u64,
    /// The current run of retries of one PSN: (its PSN, its first frame, the time of its
    /// last resend), while no new packet followed it (for `retry_exhausted`).
    pub retry_run_end: Option<(u32, u64, i64)>,
    /// ACK or NAK PSNs outside the outstanding window ([`PsnTracker::on_ack`]).
    pub acks_outside: u64,
    /// The largest frame resent (wire bytes): with `acked_len_max`, whether only the large
    /// frames died (a path MTU below them).
    pub resent_len_max: u32,
    /// The pending sequence-error NAK: (its PSN, its time), for selective repeat.
    pub(crate) nak_at: Option<(u32, i64)>,
    /// The PSN of the last selective resend seen at the responder's side: a go-back-N from
    /// it after all shows it was the original, late, and the NAK spurious.
    pub(crate) selective_at: Option<u32>,
}

impl PsnStats {
    /// A pass of resends began at PSN `at.0` (frame `at.1`, time `at.2`); the flow last
    /// sent a new packet at `last_new`. Measures the gap a pass with no NAK before it
    /// waited, and the runs of passes from one PSN with no progress between them (RNR
    /// retries, which count against the RNR retry count instead, left out). Only resends
    /// come here: the common path is untouched.
    fn note_pass(&mut self, cause: Cause, rnr: bool, last_new: i64, at: (u32, u64, i64)) {
        let (psn, frame, ts) = at;
        let since = self.last_burst.map_or(last_new, |(_, t)| t.max(last_new));
        if matches!(cause, Cause::Timeout | Cause::Unknown) {
            let gap = ts - since;
            self.resend_gaps += 1;
            let first = self.resend_gaps == 1;
            if first || gap < self.resend_gap_min_ns {
                self.resend_gap_min_ns = gap;
            }
            if first || gap > self.resend_gap_max_ns {
                self.resend_gap_max_ns = gap;
                self.resend_gap_max_frame = frame;
            }
        }
        if rnr {
            return;
        }
        // The same PSN again, and nothing new sent since the previous pass: one more retry.
        let again = self.last_burst.is_some_and(|(p, t)| p == psn && last_new <= t);
        self.retry_run = if again { self.retry_run.saturating_add(1) } else { 1 };
        self.last_burst = Some((psn, ts));
        let first_frame = match self.retry_run_end {
            Some((p, f, _)) if again && p == psn => f,
            _ => frame,
        };
        self.retry_run_end = Some((psn, first_frame, ts));
        if self.retry_run > self.retries_max {
            self.retries_max = self.retry_run;
            self.retries_max_span_ns = ts - last_new;
            self.retries_max_frame = frame;
        }
    }

    /// The shortest gap before a resend with no NAK, when there was one.
    pub fn resend_gap_min(&self) -> Option<i64> {
        (self.resend_gaps > 0).then_some(self.resend_gap_min_ns)
    }
}

/// A run of gap fillers waiting for the next packet to tell late arrival from resend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FillRun {
    next: u32,
    first: u32,
    frame: u64,
    ts_ns: i64,
    late_ns: i64,
    packets: u32,
    /// The cause, were the run a resend burst.
    cause: Cause,
    rnr: bool,
}

/// Settings of the request-stream analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsnConfig {
    /// How late a packet may arrive and count as ordinary reordering (later still is
    /// reported as late, never as loss).
    pub reorder_ns: i64,
    /// The shortest ACK timeout a requester may use: a resend sooner than this after the
    /// original, with no NAK pending, is not a timeout.
    pub min_ack_timeout_ns: i64,
}

impl Default for PsnConfig {
    fn default() -> Self {
        PsnConfig { reorder_ns: 100_000, min_ack_timeout_ns: ack_timeout_ns(14) }
    }
}

/// The RC ACK timeout for the 5-bit exponent `t` (NCCL_IB_TIMEOUT, the CM REQ's local ACK
/// timeout): 4.096 µs × 2^t (field notes; IBA 9.7.6.1.3); 0 means infinite.
pub const fn ack_timeout_ns(t: u8) -> i64 {
    if t == 0 {
        i64::MAX
    } else {
        4096 << (t & 31) as u32
    }
}

/// No PSN: PSNs are 24-bit (a tracker's `acked` and `read_range` sentinel).
const NO_PSN: u32 = u32::MAX;

/// Counters and state of one request stream (hot fields first).
#[derive(Clone, Debug)]
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
    /// The lowest PSN of the stream seen so far (its first packet, or a late one before it).
    first: u32,
    /// Time of the last packet that advanced the stream (a new highest PSN).
    last_new_ts: i64,
    /// Request packets seen.
    pub requests: u64,
    seen: SeenWindow,
    /// Counters, open gaps and the run of reordered or resent packets under way: touched
    /// on events only, kept out of line.
    stats: Option<Box<PsnStats>>,
    /// Frame and time where the current PSN stream started.
    start: (u64, i64),
    /// The highest PSN the responder acknowledged in this life (ACKs and READ responses):
    /// a PSN at or behind it cannot be a resend of a lost packet. Events only. [`NO_PSN`]
    /// for none ([`PsnTracker::acked`]: PSNs are 24-bit, so the sentinel is no PSN).
    acked: u32,
    /// The largest request frame the responder acknowledged (wire bytes, from the frames
    /// that asked for an ACK; `u32::MAX` once a multi-packet message was acknowledged, its
    /// full-size packets having passed).
    pub acked_len_max: u32,
    /// The PSNs the latest READ request reserved for its responses (from its RETH, or
    /// widened by its responses when its span was unknown); first [`NO_PSN`] for none
    /// ([`PsnTracker::read_range`]). With `acked` as sentinels, not `Option`s, and the fill
    /// run in the event box, a tracker is 88 bytes, a 96-byte allocation where 104 took 112
    /// (issue 39).
    read_range: [u32; 2],
}

/// What a stream no request has touched reads as ([`LazyPsn`]).
static UNTOUCHED: PsnTracker = PsnTracker {
    started: false,
    resync: false,
    burst: None,
    nak_pending: None,
    expected: 0,
    first: 0,
    last_new_ts: 0,
    requests: 0,
    seen: SeenWindow::EMPTY,
    stats: None,
    start: (0, 0),
    acked: NO_PSN,
    acked_len_max: 0,
    read_range: [NO_PSN, 0],
};

impl Default for PsnTracker {
    /// An untouched tracker (its sentinels set: not a zeroed one).
    fn default() -> Self {
        UNTOUCHED.clone()
    }
}

/// A flow's request PSN tracker, allocated on its first change. The flows that carry no
/// request (the ACK direction of a connection: half the flows of a capture) hold 8 bytes,
/// not a 136-byte tracker (issue 13). Reading an untouched one reads a new tracker's state.
#[derive(Clone, Debug, Default)]
pub struct LazyPsn(Option<Box<PsnTracker>>);

impl LazyPsn {
    /// The tracker, when a change has allocated it: to update state without allocating one
    /// for a flow no request touched.
    pub fn touched_mut(&mut self) -> Option<&mut PsnTracker> {
        self.0.as_deref_mut()
    }
}

impl std::ops::Deref for LazyPsn {
    type Target = PsnTracker;
    fn deref(&self) -> &PsnTracker {
        self.0.as_deref().unwrap_or(&UNTOUCHED)
    }
}

impl std::ops::DerefMut for LazyPsn {
    /// Any change allocates the tracker.
    fn deref_mut(&mut self) -> &mut PsnTracker {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PsnTracker {
    /// Keep at most [`MAX_OPEN_GAPS`] open gaps: the oldest goes first, and one that was
    /// neither resent, NAKed nor filled counts as probable capture loss. Every path that
    /// adds a gap (a new gap, one before the first PSN, a late packet splitting one in two)
    /// ends here, so a flow's memory is bounded whatever its PSNs do.
    fn age_open_gaps(&mut self) {
        while self.stats().open.len() > MAX_OPEN_GAPS {
            if let Some(old) = self.stats_mut().open.pop_front() {
                if !old.explained && !old.filled {
                    self.stats_mut().capture_loss_gaps_aged += 1;
                }
            }
        }
    }

    /// A tracker with its window allocated.
    pub fn new() -> Self {
        PsnTracker::default()
    }

    /// The highest PSN the responder acknowledged in this life.
    #[inline]
    fn acked(&self) -> Option<u32> {
        (self.acked != NO_PSN).then_some(self.acked)
    }

    /// The PSNs the latest READ request reserved: (first, last).
    #[inline]
    fn read_range(&self) -> Option<(u32, u32)> {
        let [first, last] = self.read_range;
        (first != NO_PSN).then_some((first, last))
    }

    /// The run of reordered or resent packets under way.
    #[inline]
    fn fill(&self) -> Option<&FillRun> {
        self.stats.as_deref().and_then(|s| s.fill.as_ref())
    }

    /// Its gap, resend and reordering counters (all zero, and no allocation, until the
    /// flow's first such event).
    pub fn stats(&self) -> &PsnStats {
        self.stats.as_deref().unwrap_or(&NO_EVENTS)
    }

    /// The counters, to change: allocated on the first event.
    fn stats_mut(&mut self) -> &mut PsnStats {
        self.stats.get_or_insert_with(Box::default)
    }

    #[inline]
    fn bit(&self, psn: u32) -> bool {
        self.seen.bit(self.expected, psn)
    }

    /// Advance the window to cover `[self.expected, new_expected)`, clearing stale bits.
    #[inline]
    fn advance(&mut self, new_expected: u32) {
        self.seen.advance(self.expected, new_expected);
        self.expected = new_expected;
    }

    /// A NAK (sequence error) or, with `rnr`, an RNR NAK for this flow arrived: the next
    /// resend is its doing. A sequence-error NAK explains the gaps containing `psn`, unless
    /// that packet arrived late after all (then the NAK was spurious).
    pub fn on_nak(&mut self, psn: u32, rnr: bool) {
        self.on_nak_at(psn, rnr, None);
    }

    /// [`PsnTracker::on_nak`] with the NAK's time, when known: a filler for the NAKed PSN
    /// that comes a round trip after it is a selective resend, not a late packet.
    pub fn on_nak_at(&mut self, psn: u32, rnr: bool, ts_ns: Option<i64>) {
        self.nak_pending = Some(rnr);
        if rnr {
            return;
        }
        if let Some(t) = ts_ns {
            self.stats_mut().nak_at = Some((psn, t));
        }
        let pending_fill =
            self.fill().is_some_and(|f| psn_diff(psn, f.first) >= 0 && psn_diff(psn, f.next) < 0);
        let mut late = pending_fill;
        let open = self.stats.as_deref_mut().map(|s| s.open.iter_mut());
        for g in open.into_iter().flatten() {
            if g.contains(psn) || psn_diff(psn, g.start) == g.count as i32 {
                g.naked = true;
                late |= g.filled && g.contains(psn);
            }
        }
        if late {
            let st = self.stats_mut();
            st.spurious_naks += 1;
            st.spurious_nak = Some(psn);
        } else {
            self.explain(psn);
        }
    }

    fn explain(&mut self, psn: u32) {
        let Some(st) = self.stats.as_deref_mut() else { return };
        for g in st.open.iter_mut() {
            if !g.explained && !g.filled && (g.contains(psn) || psn_diff(psn, g.start) == g.count as i32) {
                g.explained = true;
                st.network_loss_gaps += 1;
                st.lost_here += u64::from(g.count);
            }
        }
    }

    /// A resend burst starts: count it by cause (events, as a NIC counts them). `seen`: its
    /// first PSN had passed this point (not a gap here), so a NAK for it means it was lost
    /// beyond this point.
    fn count_burst(&mut self, cause: Cause, rnr: bool, seen: bool) {
        let st = self.stats_mut();
        match cause {
            Cause::Timeout => st.timeout_bursts += 1,
            Cause::ImpliedNak => st.implied_bursts += 1,
            Cause::Nak if !rnr && seen => st.lost_beyond += 1,
            _ => {}
        }
    }

    /// Whether a resend at `ts_ns` with no NAK pending comes late enough to be a timeout
    /// (see [`PsnTracker::on_request`]'s causes): the flow has sent nothing new for at least
    /// 90% of the ACK timeout.
    pub fn timed_out(&self, ts_ns: i64, cfg: &PsnConfig) -> bool {
        self.started && ts_ns - self.last_new_ts >= cfg.min_ack_timeout_ns - cfg.min_ack_timeout_ns / 10
    }

    /// Whether `psn` lies in the PSNs this flow's requests have used, from the first seen
    /// to the highest (24-bit serial arithmetic).
    pub fn covers(&self, psn: u32) -> bool {
        self.started && psn_diff(psn, self.first) >= 0 && psn_diff(psn, psn_add(self.expected, MASK)) <= 0
    }

    /// The highest PSN used so far (the last reserved one for a READ).
    pub fn highest(&self) -> Option<u32> {
        self.started.then(|| psn_add(self.expected, MASK))
    }

    /// The cause of a resend starting now at `psn` with no burst under way.
    fn resend_cause(&self, psn: u32, ts_ns: i64, implied: bool, cfg: &PsnConfig) -> (Cause, bool) {
        match self.nak_pending {
            Some(true) => (Cause::Nak, true),
            Some(false) if self.stats().spurious_nak == Some(psn) => (Cause::SpuriousNak, false),
            Some(false) => (Cause::Nak, false),
            None if implied => (Cause::ImpliedNak, false),
            // A timeout needs the time of one since the resent PSN was first sent. That was
            // no later than the flow's last new packet (it is behind the highest PSN), so
            // the quiet time since then is a lower bound; 90% of the ACK timeout allows for
            // a sender that went on sending a little after it. A copy a mirror duplicated,
            // or a resend after a NAK the capture lacks, comes sooner: cause unknown.
            None if self.timed_out(ts_ns, cfg) => (Cause::Timeout, false),
            None => (Cause::Unknown, false),
        }
    }

    fn count_resend(&mut self, cause: Cause, rnr: bool, duplicate: bool) {
        self.stats_mut().retransmits += 1;
        match cause {
            Cause::Nak => self.stats_mut().retransmits_nak += 1,
            Cause::SpuriousNak => {
                self.stats_mut().retransmits_nak += 1;
                self.stats_mut().retransmits_spurious += 1;
            }
            Cause::ImpliedNak => self.stats_mut().retransmits_implied += 1,
            Cause::Timeout => self.stats_mut().retransmits_timeout += 1,
            Cause::Unknown => self.stats_mut().retransmits_unknown += 1,
        }
        if rnr {
            self.stats_mut().retransmits_rnr += 1;
        }
        if duplicate {
            self.stats_mut().duplicates += 1;
        }
    }

    /// Settle a pending run of fillers: `resent` when the packet after them continued a
    /// resend burst, else they arrived late.
    fn settle(&mut self, resent: bool, cfg: &PsnConfig) -> Option<Resolution> {
        let f = self.stats.as_deref_mut().and_then(|s| s.fill.take())?;
        let selective = !resent && self.selective_fill(&f);
        if selective {
            self.stats_mut().selective_resends += u64::from(f.packets);
            self.stats_mut().selective_at = Some(f.first);
        }
        if resent || selective {
            if f.cause == Cause::Unknown {
                self.stats_mut().last_resend_after_ns = Some(f.ts_ns - self.last_new_ts);
            }
            self.nak_pending = None;
            // A selective resend is over already: the flow goes on with new PSNs.
            self.burst = (!selective).then_some((f.cause, f.rnr));
            self.count_burst(f.cause, f.rnr, false);
            let last_new = self.last_new_ts;
            let st = self.stats_mut();
            st.note_pass(f.cause, f.rnr, last_new, (f.first, f.frame, f.ts_ns));
            st.last_resent = Some(psn_add(f.first, f.packets.saturating_sub(1)));
            for k in 0..f.packets {
                self.count_resend(f.cause, f.rnr, false);
                self.explain(psn_add(f.first, k));
            }
            return Some(Resolution::Resent { frame: f.frame, ts_ns: f.ts_ns, psn: f.first, cause: f.cause });
        }
        self.stats_mut().out_of_order += u64::from(f.packets);
        let st = self.stats_mut();
        st.max_late_ns = st.max_late_ns.max(f.late_ns);
        if f.late_ns > cfg.reorder_ns {
            self.stats_mut().late_beyond_window += u64::from(f.packets);
        }
        let mut spurious = None;
        // The late packets leave what remains of their gap open (a gap of several PSNs
        // may be filled one packet at a time, or only in part).
        // In place (no allocation: late packets are frequent under packet spraying).
        let (lo, n) = (f.first, f.packets as i32);
        let mut i = 0;
        while let Some(&g) = self.stats().open.get(i) {
            i += 1;
            let left = psn_diff(lo, g.start); // PSNs of the gap before the run
            if g.filled || left >= g.count as i32 || left + n <= 0 {
                continue; // no overlap
            }
            if g.explained && g.naked && left <= 0 {
                // A NAK had called its first PSN lost: it was not.
                let st = self.stats_mut();
                st.network_loss_gaps = st.network_loss_gaps.saturating_sub(1);
                self.stats_mut().spurious_naks += 1;
                spurious = Some(g.start);
            }
            let explained = g.explained && spurious != Some(g.start);
            let right_start = psn_add(lo, n as u32);
            let right = psn_diff(psn_add(g.start, g.count), right_start).max(0) as u32;
            if g.explained {
                // The PSNs the late packets filled (and all of a spurious NAK's) were not lost.
                let kept = if explained { u64::from(left.max(0) as u32) + u64::from(right) } else { 0 };
                let st = self.stats_mut();
                st.lost_here = st.lost_here.saturating_sub(u64::from(g.count).saturating_sub(kept));
            }
            let mut parts = [
                (left > 0).then_some(Gap { count: left.max(0) as u32, explained, ..g }),
                (right > 0).then_some(Gap { start: right_start, count: right, explained, ..g }),
            ]
            .into_iter()
            .flatten();
            match (parts.next(), parts.next()) {
                (Some(a), b) => {
                    if let Some(slot) = self.stats_mut().open.get_mut(i - 1) {
                        *slot = a;
                    }
                    if let Some(b) = b {
                        self.stats_mut().open.insert(i, b);
                        i += 1;
                        // A split adds a gap: the oldest may have to go (capped memory).
                        if self.stats().open.len() > MAX_OPEN_GAPS {
                            self.age_open_gaps();
                            i = i.saturating_sub(1);
                        }
                    }
                }
                (None, _) => {
                    if let Some(slot) = self.stats_mut().open.get_mut(i - 1) {
                        *slot = Gap { filled: true, explained: false, ..g };
                    }
                }
            }
        }
        if spurious.is_some() {
            self.stats_mut().spurious_nak = spurious;
        }
        Some(Resolution::Late {
            frame: f.frame,
            ts_ns: f.ts_ns,
            psn: f.first,
            packets: f.packets,
            late_ns: f.late_ns,
        })
    }

    /// Whether a run of fillers that no go-back-N followed is the requester's selective
    /// resend of the PSN a sequence-error NAK named (selective repeat, field notes): the
    /// run is that one PSN, a NAK for it is pending, and it came at least
    /// [`SELECTIVE_MIN_NS`] after the NAK (none of it was seen before the NAK: a filler is
    /// a PSN never seen).
    fn selective_fill(&self, f: &FillRun) -> bool {
        f.packets == 1
            && f.cause == Cause::Nak
            && !f.rnr
            && self.stats().nak_at.is_some_and(|(p, t)| p == f.first && f.ts_ns - t >= SELECTIVE_MIN_NS)
    }

    /// The responder acknowledged everything up to `psn` (an ACK, or a READ response's
    /// AETH). With `check`, a PSN outside the outstanding window is returned as a
    /// violation: ahead of every request PSN sent (by more than the reordering window), or
    /// behind the PSN already acknowledged by more than `WINDOW` (512) (ACK PSNs only move
    /// forward: reference §1.10, IBTA Vol 1 9.7.5.1). Called on ACKs only (events).
    pub fn on_ack(&mut self, psn: u32, check: bool) -> Option<AckOutside> {
        if !self.started {
            return None;
        }
        let highest = psn_add(self.expected, MASK);
        let ahead = psn_diff(psn, highest);
        let base = self.acked().unwrap_or(psn_add(self.first, MASK));
        let behind = psn_diff(base, psn);
        let limit = if self.acked().is_some() { WINDOW as i32 } else { RESYNC_BEHIND };
        let outside = if check && !self.resync && ahead > WINDOW as i32 {
            Some(AckOutside::Ahead { highest })
        } else if check && behind > limit {
            Some(AckOutside::Behind { acked: base })
        } else {
            None
        };
        if outside.is_some() {
            self.stats_mut().acks_outside += 1;
            return outside;
        }
        if ahead <= 0 && self.acked().is_none_or(|a| psn_diff(psn, a) > 0) {
            self.acked = psn;
        }
        None
    }

    /// The PSNs through `last` belong to the READ whose responses end there: when the
    /// READ's span was unknown (or smaller) at its request, widen its reservation now.
    /// Returns the highest request PSN that was sent after the READ inside the PSNs it
    /// reserved (a violation: reference §1.10 "the next request PSN = read PSN + ...").
    pub fn reserve_through(&mut self, last: u32) -> Option<u32> {
        let (first, reserved) = self.read_range()?;
        if psn_diff(last, reserved) <= 0 || psn_diff(last, first) < 0 || psn_diff(last, first) >= 1 << 16 {
            return None;
        }
        self.read_range = [first, last];
        let highest = psn_add(self.expected, MASK);
        let used = psn_diff(highest, reserved) > 0 && psn_diff(highest, last) <= 0;
        if psn_diff(psn_add(last, 1), self.expected) > 0 {
            self.advance(psn_add(last, 1));
            self.resync = false;
        }
        if used {
            self.stats_mut().in_read_range += 1;
        }
        used.then_some(highest)
    }

    /// Record a request packet with PSN `psn` reserving `span` PSNs (1, or the number of
    /// READ response packets for a READ request; 0 when that number is unknown, so the next
    /// request re-synchronises). `implied` marks a READ request re-issued from inside an
    /// earlier READ's PSN range. Returns what the packet was and, when this packet settles
    /// a run of gap fillers, how they turned out.
    pub fn on_request(
        &mut self,
        psn: u32,
        span: u32,
        frame: u64,
        ts_ns: i64,
        implied: bool,
        cfg: &PsnConfig,
    ) -> (Verdict, Option<Resolution>) {
        self.on_request_of(psn, span, (frame, ts_ns), (implied, span != 1), cfg)
    }

    /// [`PsnTracker::on_request`] telling READ requests (`kind.1`) from the rest: a READ's
    /// PSN range is remembered, and any other request inside it is a PSN rule violation.
    /// `kind.0` marks an implied-NAK re-issue; `at` is the frame and its time.
    pub fn on_request_of(
        &mut self,
        psn: u32,
        span: u32,
        at: (u64, i64),
        kind: (bool, bool),
        cfg: &PsnConfig,
    ) -> (Verdict, Option<Resolution>) {
        if self.in_sequence(psn, span, kind.1) {
            return self.take_in_sequence(psn, at.1);
        }
        self.on_request_general(psn, span, at, kind, cfg)
    }

    /// Whether a request with `psn` reserving `span` PSNs (a READ when `read`) is the common
    /// case: the next request in sequence (its PSN the expected one, reference §1.9), not a
    /// READ, on a tracker with no resend burst, no run of fillers and no re-synchronisation
    /// pending. [`PsnTracker::take_in_sequence`] then does what the general path does with
    /// it, without the general path's tests (issue 39: the in-sequence check on the
    /// per-frame path; a property test holds the two paths to the same result).
    #[inline]
    fn in_sequence(&self, psn: u32, span: u32, read: bool) -> bool {
        span == 1
            && !read
            && psn == self.expected
            && self.started
            && !self.resync
            && self.burst.is_none()
            && self.fill().is_none()
    }

    /// The next request in sequence ([`PsnTracker::in_sequence`]), at `ts_ns`.
    #[inline]
    fn take_in_sequence(&mut self, psn: u32, ts_ns: i64) -> (Verdict, Option<Resolution>) {
        self.requests += 1;
        self.last_new_ts = ts_ns;
        self.advance(psn_add(psn, 1));
        self.mark(psn, 1);
        (Verdict::InOrder, None)
    }

    /// [`PsnTracker::on_request_of`] for any request.
    fn on_request_general(
        &mut self,
        psn: u32,
        span: u32,
        at: (u64, i64),
        kind: (bool, bool),
        cfg: &PsnConfig,
    ) -> (Verdict, Option<Resolution>) {
        let (frame, ts_ns) = at;
        let (implied, read) = kind;
        let unknown_span = span == 0;
        let span = span.clamp(1, 1 << 20);
        if std::mem::replace(&mut self.resync, unknown_span) && psn_diff(psn, self.expected) > 0 {
            self.advance(psn);
        }
        self.requests += 1;
        let mut new_life = None;
        if self.started {
            let d = psn_diff(psn, self.expected);
            let far_behind = d < -RESYNC_BEHIND && !self.stats().open.iter().any(|g| g.contains(psn));
            if d > RESYNC_AHEAD || far_behind {
                self.restart();
                self.stats_mut().resyncs += 1;
                new_life = Some(false);
            } else if d < 0 && self.fell_back(psn, d, ts_ns) {
                self.restart();
                self.stats_mut().lives_fell_back += 1;
                self.stats_mut().lives_from_zero += u64::from(psn == 0);
                new_life = Some(true);
            }
        }
        if !self.started {
            self.started = true;
            self.seen.rebase(self.expected);
            self.expected = psn;
            self.first = psn;
            self.last_new_ts = ts_ns;
            self.start = (frame, ts_ns);
            self.advance(psn_add(psn, span));
            self.mark(psn, span);
            if read {
                self.read_range = [psn, psn_add(psn, span - 1)];
            }
            return (new_life.map_or(Verdict::First, |fell_back| Verdict::NewLife { fell_back }), None);
        }
        let d = psn_diff(psn, self.expected);
        let duplicate = d < 0 && -d <= WINDOW as i32 && self.bit(psn);
        // A pending run of fillers: this packet tells what they were.
        let mut resolved = None;
        if let Some(f) = self.fill().copied() {
            if psn == f.next && d < 0 && !duplicate && self.open_gap(psn).is_some() {
                // Another filler in the same run.
                if let Some(run) = self.stats.as_deref_mut().and_then(|s| s.fill.as_mut()) {
                    run.next = psn_add(psn, 1);
                    run.packets += 1;
                }
                self.mark(psn, 1);
                return (Verdict::Filler, None);
            }
            resolved = self.settle(psn == f.next && duplicate, cfg);
        }
        if d >= 0 {
            if let Some(b) = self.burst.take() {
                self.progress_after(b, ts_ns);
            }
            if read {
                self.read_range = [psn, psn_add(psn, span - 1)];
            }
            self.last_new_ts = ts_ns;
            self.advance(psn_add(psn, span));
            self.mark(psn, span);
            if d == 0 {
                return (Verdict::InOrder, resolved);
            }
            let missing = d as u32;
            self.stats_mut().gaps += 1;
            self.stats_mut().missing += u64::from(missing);
            let gap = Gap {
                start: psn_add(psn, PSN_MOD - missing),
                count: missing,
                frame,
                ts_ns,
                explained: false,
                filled: false,
                naked: false,
            };
            if self.stats().first_gaps.len() < 8 {
                self.stats_mut().first_gaps.push(gap);
            }
            self.stats_mut().open.push_back(gap);
            self.age_open_gaps();
            return (Verdict::Gap { missing }, resolved);
        }
        // At or behind the highest PSN. Not a READ, inside the PSNs a READ reserved for its
        // responses: the requester reused them (the READ's span was unknown when it went
        // by, and its responses showed it since).
        if !read && !implied && self.in_read_range(psn) {
            self.stats_mut().in_read_range += 1;
            return (Verdict::InReadRange, resolved);
        }
        // Behind the first PSN seen, by a little, and new: sent
        // before the stream's first packet here but overtaken by it (reordering from the
        // start of the capture), so it fills a gap the capture could not see open.
        let before_first = psn_diff(psn, self.first);
        if !duplicate && (-64..0).contains(&before_first) {
            let count = (-before_first) as u32;
            let (gframe, gts) = self.start;
            self.stats_mut().open.push_back(Gap {
                start: psn,
                count,
                frame: gframe,
                ts_ns: gts,
                explained: false,
                filled: false,
                naked: false,
            });
            self.age_open_gaps();
            self.first = psn;
        }
        let in_burst = self.burst.is_some() && !matches!(resolved, Some(Resolution::Late { .. }));
        if !duplicate && !in_burst && !implied {
            if let Some(g) = self.open_gap(psn) {
                // Late, or the start of a resend: the next packet tells.
                let (cause, rnr) = self.resend_cause(psn, ts_ns, implied, cfg);
                self.stats_mut().fill = Some(FillRun {
                    next: psn_add(psn, 1),
                    first: psn,
                    frame,
                    ts_ns,
                    late_ns: ts_ns - g.ts_ns,
                    packets: 1,
                    cause,
                    rnr,
                });
                self.mark(psn, 1);
                return (Verdict::Filler, resolved);
            }
        }
        self.mark(psn, 1);
        let burst_start = !in_burst;
        let (cause, rnr) = match self.burst {
            Some(b) if in_burst => b,
            _ if duplicate && self.stats().selective_at == Some(psn) => {
                self.unselect(psn);
                (Cause::SpuriousNak, false)
            }
            _ => {
                let c = self.resend_cause(psn, ts_ns, implied, cfg);
                let quiet = ts_ns - self.last_new_ts;
                match c.0 {
                    Cause::Unknown => self.stats_mut().last_resend_after_ns = Some(quiet),
                    Cause::Timeout => {
                        let st = self.stats_mut();
                        st.timeout_stall_ns = st.timeout_stall_ns.max(quiet);
                    }
                    _ => {}
                }
                c
            }
        };
        // A pass of resends begins with a burst, or where a burst goes back to a PSN it
        // already resent (the same PSN again after another timeout: one more retry).
        let back = self.stats().last_resent.is_some_and(|p| psn_diff(psn, p) <= 0);
        if burst_start || back {
            let last_new = self.last_new_ts;
            self.stats_mut().note_pass(cause, rnr, last_new, (psn, frame, ts_ns));
            if back && !burst_start && cause == Cause::Timeout {
                // The timer fired again within one burst: one more expiry.
                self.stats_mut().timeout_bursts += 1;
            }
        }
        if cause == Cause::Timeout {
            // The requester has sent nothing new since its last new packet: so far.
            let quiet = ts_ns - self.last_new_ts;
            let st = self.stats_mut();
            st.timeout_stall_ns = st.timeout_stall_ns.max(quiet);
        }
        self.stats_mut().last_resent = Some(psn);
        if burst_start {
            self.count_burst(cause, rnr, true);
        } else if cause == Cause::Nak && !rnr {
            self.stats_mut().resent_out_of_sequence += 1;
        }
        self.burst = Some((cause, rnr));
        self.nak_pending = None;
        if cause == Cause::SpuriousNak {
            if let Some(st) = self.stats.as_deref_mut() {
                st.spurious_nak = None;
            }
        }
        self.count_resend(cause, rnr, duplicate);
        if cause != Cause::SpuriousNak {
            self.explain(psn);
        }
        (Verdict::Retransmit { cause, duplicate, burst_start }, resolved)
    }

    /// A frame of `len` wire bytes was resent (events only).
    pub fn note_resent_len(&mut self, len: u32) {
        let st = self.stats_mut();
        st.resent_len_max = st.resent_len_max.max(len);
    }

    /// A go-back-N from the PSN last taken for a selective resend: that copy was the
    /// original arriving late after all, and its NAK spurious (reference §1.10): undo the
    /// resend and the loss it was counted as, and count it late.
    fn unselect(&mut self, psn: u32) {
        let st = self.stats_mut();
        st.selective_at = None;
        st.selective_resends = st.selective_resends.saturating_sub(1);
        st.retransmits = st.retransmits.saturating_sub(1);
        st.retransmits_nak = st.retransmits_nak.saturating_sub(1);
        st.network_loss_gaps = st.network_loss_gaps.saturating_sub(1);
        st.lost_here = st.lost_here.saturating_sub(1);
        st.out_of_order += 1;
        st.spurious_naks += 1;
        for g in st.open.iter_mut().filter(|g| g.contains(psn) && g.count == 1) {
            *g = Gap { filled: true, explained: false, ..*g };
        }
    }

    /// Whether `psn` (behind the highest) lies inside the latest READ's reserved PSNs, after
    /// its first (the READ request's own PSN).
    fn in_read_range(&self, psn: u32) -> bool {
        self.read_range().is_some_and(|(a, b)| psn_diff(psn, a) > 0 && psn_diff(psn, b) <= 0)
    }

    /// Whether a request `d` (< 0) PSNs behind the expected one begins a new life of the
    /// QP: the responder had acknowledged `psn` already, so it cannot be a resend of a lost
    /// packet (field notes "QP lives"), and the PSN fell back [`LIFE_BEHIND`] or more, or
    /// the flow had sent nothing for [`LIFE_IDLE_NS`]. Only behind the expected PSN: the
    /// in-order path never comes here.
    fn fell_back(&self, psn: u32, d: i32, ts_ns: i64) -> bool {
        if self.acked().is_none_or(|a| psn_diff(psn, a) > 0) || self.open_gap(psn).is_some() {
            return false;
        }
        let last = self.stats().last_burst.map_or(self.last_new_ts, |(_, t)| t.max(self.last_new_ts));
        -d > LIFE_BEHIND || ts_ns - last >= LIFE_IDLE_NS
    }

    /// The first new packet after a resend burst `b` (its cause, RNR): a timeout burst's
    /// stall lasts until now; a NAK's burst that resent only the NAKed PSN, skipping PSNs
    /// sent after it, was a selective resend. Called once per burst, not per packet.
    fn progress_after(&mut self, b: (Cause, bool), ts_ns: i64) {
        let last_new = self.last_new_ts;
        let highest = psn_add(self.expected, MASK);
        let st = self.stats_mut();
        st.retry_run_end = None;
        match b {
            (Cause::Timeout, _) => st.timeout_stall_ns = st.timeout_stall_ns.max(ts_ns - last_new),
            (Cause::Nak, false) => {
                let one = st.last_burst.zip(st.last_resent).is_some_and(|((p, _), r)| p == r);
                if one && st.last_resent.is_some_and(|r| psn_diff(highest, r) > 0) {
                    st.selective_resends += 1;
                }
            }
            _ => {}
        }
    }

    /// Whether the QP used up its retry count: [`RETRY_CNT`] or more passes resent one PSN
    /// with nothing new sent since, and no ACK for it. Returns (the PSN, the first frame of
    /// the run, the time of its last resend).
    pub fn retries_exhausted(&self) -> Option<(u32, u64, i64)> {
        let st = self.stats();
        let run = st.retry_run_end?;
        let acked = self.acked().is_some_and(|a| psn_diff(run.0, a) <= 0);
        (st.retry_run >= RETRY_CNT && !acked && run.2 >= self.last_new_ts).then_some(run)
    }

    /// The open gap `psn` falls in, if no late packet filled it yet.
    fn open_gap(&self, psn: u32) -> Option<Gap> {
        self.stats().open.iter().find(|g| g.contains(psn) && !g.filled).copied()
    }

    /// The input ended (or a report is due): a pending run of fillers was not followed by
    /// a resend burst, so it arrived late.
    pub fn flush(&mut self, cfg: &PsnConfig) -> Option<Resolution> {
        self.settle(false, cfg)
    }

    /// Forget the stream position (a new connection on this flow); counters stay.
    pub fn restart(&mut self) {
        self.started = false;
        self.burst = None;
        self.nak_pending = None;
        self.resync = false;
        self.acked = NO_PSN;
        self.read_range = [NO_PSN, 0];
        if let Some(st) = self.stats.as_deref_mut() {
            st.fill = None;
            st.spurious_nak = None;
            st.nak_at = None;
            st.selective_at = None;
            st.retry_run_end = None;
            let aged = st.open.drain(..).filter(|g| !g.explained && !g.filled).count();
            st.capture_loss_gaps_aged += aged as u64;
        }
        self.seen.clear();
    }

    #[inline]
    fn mark(&mut self, psn: u32, span: u32) {
        self.seen.mark(self.expected, psn, span);
    }

    /// Gaps never explained by a NAK or a retransmission nor filled late: probable capture
    /// loss (RC), or loss the transport does not repair (UC).
    pub fn unexplained_gaps(&self) -> impl Iterator<Item = &Gap> {
        self.stats().open.iter().filter(|g| !g.explained && !g.filled)
    }

    /// Count of unexplained gaps, aged ones included.
    pub fn capture_loss_gaps(&self) -> u64 {
        self.stats().capture_loss_gaps_aged + self.unexplained_gaps().count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracker_is_88_bytes() {
        // One per requesting flow, a 96-byte allocation (112 at 104 bytes, 128 at 112: issue 39).
        assert_eq!(std::mem::size_of::<PsnTracker>(), 88);
        // Its sentinels, not zeros: a new tracker has acknowledged nothing, reserved nothing.
        let t = PsnTracker::default();
        assert_eq!((t.acked(), t.read_range(), t.fill().is_none()), (None, None, true));
    }

    #[test]
    fn an_untouched_lazy_tracker_reads_as_a_new_one_and_allocates_on_change() {
        let mut l = LazyPsn::default();
        assert_eq!(format!("{:?}", *l), format!("{:?}", PsnTracker::new()));
        assert!(l.touched_mut().is_none(), "reading allocates nothing");
        let cfg = PsnConfig { reorder_ns: 0, min_ack_timeout_ns: 0 };
        l.on_request(7, 1, 1, 10, false, &cfg);
        assert_eq!(l.requests, 1);
        assert!(l.touched_mut().is_some());
    }

    #[test]
    fn modular_distance() {
        assert_eq!(psn_diff(5, 3), 2);
        assert_eq!(psn_diff(3, 5), -2);
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        assert_eq!(psn_add(0xFF_FFFF, 2), 1);
    }

    fn cfg() -> PsnConfig {
        PsnConfig { reorder_ns: 1000, min_ack_timeout_ns: ack_timeout_ns(14) }
    }

    /// Feed `(psn, ts)` requests; returns the verdicts and resolutions.
    fn feed(t: &mut PsnTracker, pkts: &[(u32, i64)]) -> Vec<(Verdict, Option<Resolution>)> {
        pkts.iter()
            .enumerate()
            .map(|(i, &(p, ts))| t.on_request(p, 1, i as u64 + 1, ts, false, &cfg()))
            .collect()
    }

    #[test]
    fn go_back_n_after_one_loss() {
        let mut t = PsnTracker::new();
        feed(&mut t, &[(100, 0), (101, 1), (102, 2)]);
        assert_eq!(t.on_request(104, 1, 4, 10, false, &cfg()).0, Verdict::Gap { missing: 1 });
        t.on_request(105, 1, 5, 11, false, &cfg());
        t.on_nak(103, false);
        assert_eq!(t.on_request(103, 1, 7, 20, false, &cfg()).0, Verdict::Filler);
        let (v, r) = t.on_request(104, 1, 8, 21, false, &cfg());
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Nak, duplicate: true, burst_start: false });
        assert_eq!(r, Some(Resolution::Resent { frame: 7, ts_ns: 20, psn: 103, cause: Cause::Nak }));
        t.on_request(105, 1, 9, 22, false, &cfg());
        assert_eq!(t.on_request(106, 1, 10, 23, false, &cfg()).0, Verdict::InOrder);
        assert_eq!(
            (
                t.stats().gaps,
                t.stats().missing,
                t.stats().retransmits,
                t.stats().retransmits_nak,
                t.stats().duplicates
            ),
            (1, 1, 3, 3, 2)
        );
        assert_eq!(t.capture_loss_gaps(), 0);
        assert_eq!((t.stats().network_loss_gaps, t.stats().out_of_order, t.stats().spurious_naks), (1, 0, 0));
        // Per packet: 103 lost here; 104 and 105 had reached the responder out of sequence.
        let s = t.stats();
        assert_eq!((s.lost_here, s.lost_beyond, s.resent_out_of_sequence), (1, 0, 2));
    }

    #[test]
    fn losses_beyond_the_capture_point_count_one_packet_per_nak() {
        // Five times: 3 packets pass here, the responder NAKs the first of them (lost
        // beyond this point), and go-back-N resends all three.
        let mut t = PsnTracker::new();
        let mut frame = 0;
        let mut next = |t: &mut PsnTracker, psn: u32| {
            frame += 1;
            t.on_request(psn, 1, frame, frame as i64 * 1_000, false, &cfg()).0
        };
        for k in 0..5u32 {
            let p = 100 + 3 * k;
            for psn in p..p + 3 {
                next(&mut t, psn);
            }
            t.on_nak(p, false);
            assert_eq!(
                next(&mut t, p),
                Verdict::Retransmit { cause: Cause::Nak, duplicate: true, burst_start: true }
            );
            next(&mut t, p + 1);
            next(&mut t, p + 2);
        }
        let s = t.stats();
        assert_eq!((s.gaps, s.network_loss_gaps, s.lost_here), (0, 0, 0), "no gap here");
        assert_eq!((s.lost_beyond, s.resent_out_of_sequence, s.retransmits_nak), (5, 10, 15));
        // An RNR retry is no loss.
        let mut r = PsnTracker::new();
        feed(&mut r, &[(1, 0), (2, 1)]);
        r.on_nak(2, true);
        r.on_request(2, 1, 3, 2, false, &cfg());
        assert_eq!(r.stats().lost_beyond, 0);
    }

    #[test]
    fn a_timeout_is_one_event_however_many_packets_it_resends() {
        let mut t = PsnTracker::new();
        feed(&mut t, &[(1, 0), (2, 1), (3, 2)]);
        let late = 70_000_000;
        feed(&mut t, &[(1, late), (2, late + 1), (3, late + 2)]);
        let s = t.stats();
        assert_eq!((s.retransmits_timeout, s.timeout_bursts, s.lost_beyond), (3, 1, 0));
    }

    #[test]
    fn resend_gaps_count_from_the_last_send_and_retries_of_one_psn_make_a_run() {
        // PSN 1..3 sent, then PSN 1 resent three times 75 ms apart (ACK timeouts), then
        // progress, then one early resend of PSN 4 (2 ms: adaptive retransmission).
        let mut t = PsnTracker::new();
        feed(&mut t, &[(1, 0), (2, 1_000), (3, 2_000)]);
        let gap = 75_000_000;
        for k in 1..=3 {
            feed(&mut t, &[(1, 2_000 + k * gap)]);
        }
        let s = t.stats();
        assert_eq!((s.resend_gaps, s.resend_gap_min(), s.resend_gap_max_ns), (3, Some(gap), gap));
        assert_eq!((s.retries_max, s.retries_max_span_ns), (3, 3 * gap));
        let t0 = 2_000 + 3 * gap;
        feed(&mut t, &[(4, t0 + 10), (4, t0 + 2_000_010), (5, t0 + 2_000_020)]);
        let s = t.stats();
        assert_eq!((s.resend_gaps, s.resend_gap_min(), s.resend_gap_max_ns), (4, Some(2_000_000), gap));
        assert_eq!(s.retries_max, 3, "a new PSN starts a new run");
        // A resend after a NAK is a retry, but no timer's gap.
        let mut t = PsnTracker::new();
        feed(&mut t, &[(1, 0), (2, 10)]);
        t.on_nak(1, false);
        feed(&mut t, &[(1, 20)]);
        t.on_nak(1, false);
        feed(&mut t, &[(1, 30)]);
        let s = t.stats();
        assert_eq!((s.resend_gaps, s.resend_gap_min(), s.retries_max), (0, None, 2));
        // RNR retries count against the RNR retry count, not this one.
        let mut t = PsnTracker::new();
        feed(&mut t, &[(1, 0)]);
        t.on_nak(1, true);
        feed(&mut t, &[(1, 20)]);
        assert_eq!(t.stats().retries_max, 0);
    }

    #[test]
    fn wrap_is_not_a_gap_and_capture_loss_is_told_apart() {
        let mut t = PsnTracker::new();
        feed(&mut t, &[(0xFF_FFFC, 0), (0xFF_FFFD, 0), (0xFF_FFFE, 0), (0xFF_FFFF, 0)]);
        assert_eq!(t.on_request(1, 1, 5, 10, false, &cfg()).0, Verdict::Gap { missing: 1 });
        assert_eq!(t.on_request(2, 1, 6, 11, false, &cfg()).0, Verdict::InOrder);
        assert_eq!((t.stats().gaps, t.stats().missing, t.stats().retransmits), (1, 1, 0));
        assert_eq!(t.capture_loss_gaps(), 1);
        assert_eq!(t.unexplained_gaps().next().map(|g| g.start), Some(0));
    }

    #[test]
    fn read_reservation_is_not_a_gap() {
        let mut t = PsnTracker::new();
        t.on_request(10, 1, 1, 0, false, &cfg());
        assert_eq!(t.on_request(11, 3, 2, 1, false, &cfg()).0, Verdict::InOrder); // READ of 3 packets
        assert_eq!(t.on_request(14, 1, 3, 2, false, &cfg()).0, Verdict::InOrder);
        assert_eq!(t.stats().gaps, 0);
    }

    #[test]
    fn a_new_stream_on_the_same_flow_is_not_loss() {
        // write... pcapng reuses QP 0x11 with a new random starting PSN 22 s later.
        let mut t = PsnTracker::new();
        t.on_request(7_825_157, 1, 51, 0, false, &cfg());
        let life = Verdict::NewLife { fell_back: false };
        assert_eq!(t.on_request(16_227_732, 1, 266, 1, false, &cfg()).0, life);
        assert_eq!((t.stats().gaps, t.stats().retransmits, t.stats().resyncs), (0, 0, 1));
        t.on_request(16_227_733, 1, 267, 2, false, &cfg());
        assert_eq!(t.on_request(100, 1, 268, 3, false, &cfg()).0, life);
        assert_eq!(t.stats().resyncs, 2);
    }

    #[test]
    fn back_behind_acknowledged_psns_is_a_new_life_not_resends() {
        // An old life to PSN 4999, all acknowledged; then PSN 0.. on the same QP (NCCL's
        // sq_psn = 0), with no pause at all.
        let mut t = PsnTracker::new();
        let old: Vec<(u32, i64)> = (0..5000).map(|k| (k, i64::from(k) * 1_000)).collect();
        feed(&mut t, &old);
        assert_eq!(t.on_ack(4999, true), None);
        let t0 = 5_000_000;
        assert_eq!(t.on_request(0, 1, 1, t0, false, &cfg()).0, Verdict::NewLife { fell_back: true });
        for k in 1..100u32 {
            assert_eq!(t.on_request(k, 1, 1, t0 + i64::from(k), false, &cfg()).0, Verdict::InOrder);
        }
        let s = t.stats();
        assert_eq!((s.retransmits, s.lives_fell_back, s.resyncs, s.gaps), (0, 1, 0, 0));
        // Without the ACK in the capture, the same fall-back stays a resend (nothing says
        // the responder had those PSNs).
        let mut u = PsnTracker::new();
        feed(&mut u, &old);
        u.on_request(0, 1, 1, t0, false, &cfg());
        assert_eq!((u.stats().lives_fell_back, u.stats().retransmits), (0, 1));
        // A resend of the acknowledged tail, soon and shallow (its ACK lost beyond the
        // point): a resend, not a life.
        let mut w = PsnTracker::new();
        feed(&mut w, &old);
        w.on_ack(4999, true);
        w.on_request(4990, 1, 1, 5_000_000 + 70_000_000, false, &cfg());
        assert_eq!((w.stats().lives_fell_back, w.stats().retransmits_timeout), (0, 1));
        // ... but after a second of silence, a new life however close.
        let mut x = PsnTracker::new();
        feed(&mut x, &[(0, 0), (1, 10), (2, 20)]);
        x.on_ack(2, true);
        assert_eq!(
            x.on_request(0, 1, 4, 1_500_000_000, false, &cfg()).0,
            Verdict::NewLife { fell_back: true }
        );
    }

    #[test]
    fn a_request_inside_a_reads_psns_and_an_ack_outside_the_window_break_the_rules() {
        // Roce_PacketSize_2400_stall.pcapng: a READ of unknown span at 7488511, responses
        // through 7488513, a SEND on 7488513, an ACK for 16777215.
        let mut t = PsnTracker::new();
        t.on_request(7_488_500, 1, 1, 0, false, &cfg());
        t.on_request_of(7_488_511, 0, (2, 10), (false, true), &cfg());
        assert_eq!(t.on_ack(7_488_511, false), None);
        assert_eq!(t.reserve_through(7_488_513), None, "no request used the READ's PSNs yet");
        assert_eq!(t.on_ack(7_488_513, false), None);
        let (v, _) = t.on_request_of(7_488_513, 1, (3, 20), (false, false), &cfg());
        assert_eq!(v, Verdict::InReadRange);
        assert_eq!(t.on_ack(16_777_215, true), Some(AckOutside::Behind { acked: 7_488_513 }));
        let s = t.stats();
        assert_eq!((s.in_read_range, s.acks_outside, s.retransmits), (1, 1, 0));
        // The same SEND before the responses showed the READ's span: caught when they do.
        let mut u = PsnTracker::new();
        u.on_request_of(7_488_511, 0, (1, 10), (false, true), &cfg());
        u.on_request_of(7_488_513, 1, (2, 20), (false, false), &cfg());
        assert_eq!(u.reserve_through(7_488_513), Some(7_488_513));
        // An ACK well ahead of every request: outside too; an ordinary one is not.
        let mut w = PsnTracker::new();
        feed(&mut w, &[(10, 0), (11, 1)]);
        assert_eq!(w.on_ack(11, true), None);
        assert_eq!(w.on_ack(5_000, true), Some(AckOutside::Ahead { highest: 11 }));
    }

    #[test]
    fn selective_repeat_is_one_resend_of_the_naked_psn_seen_at_either_link() {
        // At the responder's link: 100, 102, 103, NAK 101, then 101 once, 5 µs after the
        // NAK, and 104 on: a network loss repaired by a selective resend.
        let mut t = PsnTracker::new();
        feed(&mut t, &[(100, 0), (102, 1_000), (103, 2_000)]);
        t.on_nak_at(101, false, Some(3_000));
        feed(&mut t, &[(101, 8_000), (104, 9_000), (105, 10_000)]);
        let s = t.stats();
        assert_eq!((s.network_loss_gaps, s.spurious_naks, s.out_of_order), (1, 0, 0));
        assert_eq!((s.retransmits_nak, s.selective_resends, s.lost_here), (1, 1, 1));
        // The spurious NAK's late packet, right at the NAK, stays a late packet.
        let mut u = PsnTracker::new();
        feed(&mut u, &[(100, 0), (102, 1_000), (103, 2_000)]);
        u.on_nak_at(101, false, Some(3_000));
        feed(&mut u, &[(101, 3_100), (104, 4_000)]);
        assert_eq!((u.stats().selective_resends, u.stats().spurious_naks), (0, 1));
        // Late by more than that, but a go-back-N from it follows: it was the original,
        // late, and the NAK spurious after all.
        let mut v = PsnTracker::new();
        feed(&mut v, &[(100, 0), (102, 1_000), (103, 2_000)]);
        v.on_nak_at(101, false, Some(3_000));
        feed(&mut v, &[(101, 5_000), (104, 6_000), (101, 8_000), (102, 8_100), (103, 8_200), (104, 8_300)]);
        let s = v.stats();
        assert_eq!((s.selective_resends, s.spurious_naks, s.network_loss_gaps, s.lost_here), (0, 1, 0, 0));
        assert_eq!((s.out_of_order, s.retransmits, s.retransmits_spurious), (1, 4, 4));
        assert_eq!(v.capture_loss_gaps(), 0);
        // At the requester's link: 100..103 pass, NAK 101, 101 once, then 104.
        let mut r = PsnTracker::new();
        feed(&mut r, &[(100, 0), (101, 1_000), (102, 2_000), (103, 3_000)]);
        r.on_nak_at(101, false, Some(4_000));
        feed(&mut r, &[(101, 5_000), (104, 6_000)]);
        let s = r.stats();
        assert_eq!((s.retransmits_nak, s.lost_beyond, s.selective_resends), (1, 1, 1));
        // Go-back-N there resends 101..103: not selective.
        let mut g = PsnTracker::new();
        feed(&mut g, &[(100, 0), (101, 1_000), (102, 2_000), (103, 3_000)]);
        g.on_nak_at(101, false, Some(4_000));
        feed(&mut g, &[(101, 5_000), (102, 5_100), (103, 5_200), (104, 6_000)]);
        assert_eq!((g.stats().retransmits_nak, g.stats().selective_resends), (3, 0));
    }

    #[test]
    fn each_timer_expiry_counts_and_seven_retries_use_up_the_retry_count() {
        // A WRITE at PSN 10 resent 7 times, 268 ms apart, never acknowledged.
        let mut t = PsnTracker::new();
        feed(&mut t, &[(9, 0), (10, 1_000)]);
        t.on_ack(9, true);
        let gap = 268_000_000;
        for k in 1..=7 {
            feed(&mut t, &[(10, 1_000 + k * gap)]);
        }
        let s = t.stats();
        assert_eq!((s.timeout_bursts, s.resend_gaps, s.retries_max), (7, 7, 7));
        assert_eq!(s.timeout_stall_ns, 7 * gap, "from the last new packet to the last resend");
        assert_eq!(t.retries_exhausted().map(|r| r.0), Some(10));
        // Six retries and then progress: not used up.
        let mut u = PsnTracker::new();
        feed(&mut u, &[(9, 0), (10, 1_000)]);
        for k in 1..=7 {
            feed(&mut u, &[(10, 1_000 + k * gap)]);
        }
        feed(&mut u, &[(11, 1_000 + 8 * gap)]);
        assert_eq!(u.retries_exhausted(), None);
        assert_eq!(u.stats().timeout_stall_ns, 8 * gap, "the stall lasts until the progress");
    }

    #[test]
    fn a_timeout_needs_the_time_of_one() {
        let mut t = PsnTracker::new();
        t.on_request(7000, 1, 1, 0, false, &cfg());
        let (v, _) = t.on_request(7000, 1, 2, 67_200_000, false, &cfg());
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Timeout, duplicate: true, burst_start: true });
        // The same resend 3 µs after the original is no timeout: its NAK is not in view.
        let mut u = PsnTracker::new();
        u.on_request(7000, 1, 1, 0, false, &cfg());
        let (v, _) = u.on_request(7000, 1, 2, 3_000, false, &cfg());
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Unknown, duplicate: true, burst_start: true });
        assert_eq!((u.stats().retransmits_timeout, u.stats().retransmits_unknown), (0, 1));
        assert_eq!(u.stats().last_resend_after_ns, Some(3_000));
    }

    #[test]
    fn a_copy_after_an_idle_spell_is_no_timeout() {
        // A burst, 100 ms idle (an NCCL iteration gap), a second burst in which a mirror
        // shows one frame twice, 300 ns apart: the copy is not a timeout however old the
        // flow is (review finding: an upper bound on the age had made it one).
        let mut t = PsnTracker::new();
        feed(&mut t, &[(5000, 0), (5001, 1_000), (5002, 2_000)]);
        let idle = 100_000_000;
        t.on_request(5003, 1, 4, idle, false, &cfg());
        t.on_request(5004, 1, 5, idle + 1_000, false, &cfg());
        let (v, _) = t.on_request(5004, 1, 6, idle + 1_300, false, &cfg());
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Unknown, duplicate: true, burst_start: true });
        assert_eq!((t.stats().retransmits_timeout, t.stats().last_resend_after_ns), (0, Some(300)));
        // A slow flow (a packet every 2 ms) that shows one frame twice: the same.
        let mut s = PsnTracker::new();
        let pkts: Vec<(u32, i64)> = (0..90).map(|k| (7000 + k, i64::from(k) * 2_000_000)).collect();
        feed(&mut s, &pkts);
        let (v, _) = s.on_request(7089, 1, 91, 89 * 2_000_000 + 500, false, &cfg());
        assert!(matches!(v, Verdict::Retransmit { cause: Cause::Unknown, .. }), "{v:?}");
    }

    #[test]
    fn a_late_packet_is_reordering_not_loss() {
        let mut r = PsnTracker::new();
        let v = feed(&mut r, &[(1, 0), (3, 10), (2, 20), (4, 30)]);
        assert_eq!(v[2].0, Verdict::Filler);
        assert_eq!(v[3].1, Some(Resolution::Late { frame: 3, ts_ns: 20, psn: 2, packets: 1, late_ns: 10 }));
        assert_eq!((r.stats().out_of_order, r.stats().retransmits, r.stats().late_beyond_window), (1, 0, 0));
        assert_eq!(r.capture_loss_gaps(), 0, "a reordered filler is neither network nor capture loss");
        assert_eq!(r.stats().network_loss_gaps, 0);
        // 150 µs late, two packets in a row, and the capture ends: still late, not lost.
        let mut s = PsnTracker::new();
        feed(&mut s, &[(1, 0), (4, 10), (5, 20), (2, 150_010), (3, 150_020)]);
        assert_eq!(
            s.flush(&cfg()),
            Some(Resolution::Late { frame: 4, ts_ns: 150_010, psn: 2, packets: 2, late_ns: 150_000 })
        );
        assert_eq!((s.stats().out_of_order, s.stats().late_beyond_window, s.stats().retransmits), (2, 2, 0));
        assert_eq!((s.stats().max_late_ns, s.capture_loss_gaps()), (150_000, 0));
    }

    #[test]
    fn a_nak_for_a_late_packet_is_spurious_and_its_resends_needless() {
        let mut t = PsnTracker::new();
        feed(&mut t, &[(10, 0), (12, 10), (13, 20)]);
        t.on_nak(11, false);
        assert_eq!(t.stats().network_loss_gaps, 1, "until 11 shows up, the NAK says lost");
        assert_eq!(t.on_request(11, 1, 4, 30, false, &cfg()).0, Verdict::Filler); // the late original
        let (v, r) = t.on_request(11, 1, 5, 40, false, &cfg()); // go-back-N from 11
        assert!(matches!(r, Some(Resolution::Late { psn: 11, .. })));
        assert_eq!(v, Verdict::Retransmit { cause: Cause::SpuriousNak, duplicate: true, burst_start: true });
        t.on_request(12, 1, 6, 41, false, &cfg());
        t.on_request(13, 1, 7, 42, false, &cfg());
        assert_eq!(t.on_request(14, 1, 8, 43, false, &cfg()).0, Verdict::InOrder);
        let s = t.stats();
        assert_eq!((s.network_loss_gaps, s.spurious_naks, s.out_of_order), (0, 1, 1));
        assert_eq!((s.lost_here, s.lost_beyond, s.resent_out_of_sequence), (0, 0, 0), "nothing was lost");
        assert_eq!(
            (s.retransmits, s.retransmits_nak, s.retransmits_spurious, s.retransmits_timeout),
            (3, 3, 3, 0)
        );
        // The NAK after the late packet: spurious too.
        let mut u = PsnTracker::new();
        feed(&mut u, &[(10, 0), (12, 10), (11, 20), (13, 30)]);
        u.on_nak(11, false);
        assert_eq!((u.stats().spurious_naks, u.stats().network_loss_gaps), (1, 0));
    }

    #[test]
    fn a_two_packet_loss_resent_by_timeout_is_loss() {
        let mut t = PsnTracker::new();
        feed(&mut t, &[(1, 0), (4, 10)]);
        let late = 70_000_000;
        assert_eq!(t.on_request(2, 1, 3, late, false, &cfg()).0, Verdict::Filler);
        assert_eq!(t.on_request(3, 1, 4, late + 1, false, &cfg()).0, Verdict::Filler);
        let (v, r) = t.on_request(4, 1, 5, late + 2, false, &cfg());
        assert_eq!(r, Some(Resolution::Resent { frame: 3, ts_ns: late, psn: 2, cause: Cause::Timeout }));
        assert_eq!(v, Verdict::Retransmit { cause: Cause::Timeout, duplicate: true, burst_start: false });
        assert_eq!(
            (t.stats().retransmits_timeout, t.stats().network_loss_gaps, t.stats().out_of_order),
            (3, 1, 0)
        );
        assert_eq!((t.stats().lost_here, t.stats().timeout_bursts), (2, 1));
    }

    /// One step of a random request stream: a request (PSN offset from a base, time step,
    /// READ span, implied flag), a NAK or an RNR NAK.
    #[derive(Clone, Debug)]
    enum Step {
        Req(i32, i64, u32, bool),
        Nak(i32),
        Rnr(i32),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (-40i32..80, 0i64..200_000_000, 0u32..4, any::<bool>()).prop_map(|(d, t, s, i)| Step::Req(d, t, s, i)),
            1 => (-20i32..40).prop_map(Step::Nak),
            1 => (-20i32..40).prop_map(Step::Rnr),
        ]
    }

    /// The PSN a random stream's offsets count from: near 0, or near the 24-bit wrap.
    fn base() -> impl proptest::strategy::Strategy<Value = u32> {
        proptest::prelude::prop_oneof![0u32..100, (PSN_MOD - 100)..PSN_MOD]
    }

    /// Step `i` of a random stream, its PSNs offsets from `base`, fed to `t` (a request
    /// advances the time `ts`): what a request settled.
    fn apply(t: &mut PsnTracker, base: u32, i: usize, s: &Step, ts: &mut i64) -> Option<Resolution> {
        let at = |d: i32| psn_add(base, d.rem_euclid(PSN_MOD as i32) as u32);
        match *s {
            Step::Req(d, dt, span, implied) => {
                *ts += dt;
                t.on_request(at(d), span, i as u64 + 1, *ts, implied, &cfg()).1
            }
            Step::Nak(d) => {
                t.on_nak(at(d), false);
                None
            }
            Step::Rnr(d) => {
                t.on_nak(at(d), true);
                None
            }
        }
    }

    proptest::proptest! {
        /// Whatever the order of requests, NAKs and times (across the 24-bit wrap too), the
        /// tracker never panics and its counters stay consistent: every resend has exactly
        /// one cause, and late packets and network-loss gaps never exceed what was seen.
        #[test]
        fn any_stream_keeps_the_counters_consistent(
            base in base(),
            steps in proptest::collection::vec(step(), 1..300),
        ) {
            let mut t = PsnTracker::new();
            let mut ts = 1_000_000_000i64;
            let mut late = 0u64;
            let mut resent_by_resolution = 0u64;
            for (i, s) in steps.iter().enumerate() {
                match apply(&mut t, base, i, s, &mut ts) {
                    Some(Resolution::Late { packets, late_ns, .. }) => {
                        late += u64::from(packets);
                        proptest::prop_assert!(late_ns >= 0);
                    }
                    Some(Resolution::Resent { .. }) => resent_by_resolution += 1,
                    None => {}
                }
            }
            if let Some(Resolution::Late { packets, .. }) = t.flush(&cfg()) {
                late += u64::from(packets);
            }
            let s = t.stats();
            proptest::prop_assert_eq!(
                s.retransmits,
                s.retransmits_nak + s.retransmits_implied + s.retransmits_timeout + s.retransmits_unknown
            );
            // RNR retries and needless go-back-N are both NAK-caused, and never the same burst.
            proptest::prop_assert!(s.retransmits_rnr + s.retransmits_spurious <= s.retransmits_nak);
            proptest::prop_assert_eq!(s.out_of_order, late);
            proptest::prop_assert!(s.late_beyond_window <= s.out_of_order);
            proptest::prop_assert!(s.out_of_order + s.retransmits <= t.requests);
            proptest::prop_assert!(resent_by_resolution <= s.retransmits);
            proptest::prop_assert!(s.network_loss_gaps <= s.gaps + s.resyncs + t.requests);
            // Per packet and per event: within what was resent.
            proptest::prop_assert!(s.lost_beyond + s.resent_out_of_sequence <= s.retransmits_nak);
            proptest::prop_assert!(s.timeout_bursts <= s.retransmits_timeout);
            proptest::prop_assert!(s.implied_bursts <= s.retransmits_implied);
        }

        /// The short path of a request in sequence leaves the tracker as the general path
        /// does, and says the same, on any stream of requests and NAKs before it.
        #[test]
        fn the_in_sequence_path_is_the_general_one(
            base in base(),
            steps in proptest::collection::vec(step(), 1..200),
        ) {
            // Started by a plain request: the first comparison runs at once.
            let (mut t, mut ts) = (PsnTracker::new(), 1_000_000_000i64);
            t.on_request(base, 1, 0, ts, false, &cfg());
            let mut taken = 0;
            for (i, s) in steps.iter().enumerate() {
                // Every other step, the next request in sequence first, both ways.
                // (At a later time and frame of its own, marked implied every third time: what
                // the short path must not read.)
                if i % 2 == 0 && t.in_sequence(t.expected, 1, false) {
                    let mut general = t.clone();
                    let (at, kind) = ((10_000 + i as u64, ts + 7), (i % 3 == 0, false));
                    let want = general.on_request_general(t.expected, 1, at, kind, &cfg());
                    let got = t.on_request_of(t.expected, 1, at, kind, &cfg());
                    proptest::prop_assert_eq!(got, want);
                    proptest::prop_assert_eq!(format!("{t:?}"), format!("{general:?}"));
                    taken += 1;
                }
                apply(&mut t, base, i, s, &mut ts);
            }
            proptest::prop_assert!(taken > 0);
        }
    }

    #[test]
    fn requests_in_sequence_take_the_short_path_until_a_gap() {
        let mut t = PsnTracker::new();
        assert!(!t.in_sequence(0, 1, false), "not before the first request");
        t.on_request(10, 1, 1, 0, false, &cfg());
        for psn in 11..20 {
            assert!(t.in_sequence(psn, 1, false));
            assert!(!t.in_sequence(psn, 3, true), "a READ takes the general path");
            assert_eq!(t.on_request(psn, 1, u64::from(psn), 0, false, &cfg()).0, Verdict::InOrder);
        }
        assert_eq!((t.requests, t.expected), (10, 20));
        assert_eq!(t.on_request(22, 1, 30, 0, false, &cfg()).0, Verdict::Gap { missing: 2 });
        assert!(t.in_sequence(23, 1, false), "the next in sequence after the gap");
        // A filler of the gap opens a run: the general path until it is settled.
        t.on_request(20, 1, 31, 0, false, &cfg());
        assert!(t.fill().is_some());
        assert!(!t.in_sequence(23, 1, false));
    }

    #[test]
    fn a_read_reissued_inside_its_range_is_an_implied_nak() {
        let mut t = PsnTracker::new();
        t.on_request(20, 4, 1, 0, false, &cfg()); // READ of 4 responses: PSNs 20..23
        let (v, _) = t.on_request(21, 3, 2, 5_000, true, &cfg()); // re-issued from 21
        assert_eq!(v, Verdict::Retransmit { cause: Cause::ImpliedNak, duplicate: true, burst_start: true });
        assert_eq!((t.stats().retransmits_implied, t.stats().retransmits_timeout), (1, 0));
    }
}
