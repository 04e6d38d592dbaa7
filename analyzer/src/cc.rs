//! Per-QP congestion control (docs/verdicts.md "Congestion control"): how the CNPs a data
//! sender receives are spaced, whether CE marks keep coming with no CNP back, and whether
//! the sender's rate falls after each CNP.
//!
//! The state lives in a flow's cold part and is allocated on the flow's first CE mark or
//! first CNP received (`Flow::cc_mut`); it is a fixed size (528 bytes)
//! however long the flow runs.
//!
//! It takes every packet of such a flow ([`CcState::on_packet`]), not the flow's closed
//! `--bin` bins (crate::fold folds the fan-in, fabric and marks that way): its rate bins are
//! an eighth of `--cc-window-us` (6.25 µs), on the absolute clock, and a CNP reads the
//! window before it mid-bin, so no `--bin` bin (1 µs to 1 s, from the capture start) gives
//! the same figures. A packet in the bin being filled costs a division and two adds; one
//! that opens a bin two windows or more after the last empties the ring at once.

use crate::stats::Latency;

/// Congestion-control settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcConfig {
    /// The notification point's CNP pacing interval (`--cnp-pacing-us`, default 50 µs: DCQCN's
    /// "at most one CNP per flow every N = 50 µs"). CNPs to one QP closer together than this
    /// count as too fast; CE marks over two of these with no CNP back count as unanswered.
    pub cnp_pacing_ns: i64,
    /// The window the sender's rate is measured over, before and after a CNP
    /// (`--cc-window-us`, default 50 µs: shorter than DCQCN's 55 µs timer K, so the window
    /// after a cut mostly ends before the rate recovers).
    pub window_ns: i64,
    /// How long after a CNP the window after it starts (`--cc-delay-us`, default 5 µs: the
    /// RP cuts its rate within microseconds; the packets already on the way to the capture
    /// point still show the old rate).
    pub delay_ns: i64,
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig { cnp_pacing_ns: 50_000, window_ns: 50_000, delay_ns: 5_000 }
    }
}

/// CE-marked packets in a run with no CNP back before it counts as unanswered.
pub const CE_RUN_MIN_PACKETS: u64 = 10;
/// Packets the window before a CNP must hold for the CNP to be evaluated.
pub const MIN_BEFORE_PACKETS: u32 = 4;
/// A CNP was followed by a fall when the rate after it is below this share of the rate
/// before it.
pub const FALL_RATIO: f64 = 0.9;
/// CNPs that must be evaluated before `cc_not_reacting` can be said.
pub const MIN_EVALUATED: u64 = 5;

/// A gap with no CE mark longer than this many pacing intervals ends a CE run: the marks
/// after it are a new episode of congestion, not the same one gone unanswered (a run of
/// marks the NP's pacing left unanswered at the end of one burst must not join the first
/// marks of a burst milliseconds later). Two intervals: marks one pacing interval apart
/// that the NP leaves unanswered still make one run.
pub const CE_RUN_IDLE_INTERVALS: i64 = 2;

/// Rate bins per window; the ring holds two windows.
const BINS_PER_WINDOW: i64 = 8;
const RING: usize = 16;
/// CNPs whose window after is still open, at most.
const PENDING: usize = 4;

/// A run of CE-marked packets with no CNP back to the flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CeRun {
    /// First CE-marked frame of the run.
    pub first_frame: u64,
    /// Its time.
    pub first_ns: i64,
    /// The last CE mark of the run.
    pub last_ns: i64,
    /// CE-marked packets in it.
    pub packets: u64,
}

/// One flow's congestion-control state (the data sender's direction).
#[derive(Clone, Debug)]
pub struct CcState {
    last_cnp: Option<i64>,
    /// Time between consecutive CNPs received.
    pub intervals: Latency,
    /// Intervals shorter than the pacing.
    pub too_fast: u64,
    /// The first too-fast CNP: (frame, time, interval).
    pub first_too_fast: Option<(u64, i64, i64)>,
    /// The open CE run (since the last CNP received).
    run: CeRun,
    /// A CNP reached the same sender host from the same NP host during the open run: the NP
    /// answers, pacing per host pair or port rather than per QP.
    pub(crate) run_host_answered: bool,
    /// Runs of at least [`CE_RUN_MIN_PACKETS`] CE marks over at least two pacing intervals
    /// with no CNP back, the open run not included ([`CcState::unanswered`] includes it).
    pub unanswered_runs: u64,
    /// The longest of them (most packets).
    pub worst_run: Option<CeRun>,
    /// Rate ring: bytes and packets per bin of `window / 8`, by absolute bin index.
    bin_ns: i64,
    bytes: [u64; RING],
    packets: [u32; RING],
    /// Latest bin index with a packet (None before the first).
    cur: Option<i64>,
    /// First bin index the ring saw (the rate before it is unknown).
    start: i64,
    /// Open evaluations: (first bin of the window after, bytes in the window before).
    pending: [(i64, u64); PENDING],
    pending_len: u8,
    /// CNPs whose rate before and after were compared.
    pub evaluated: u64,
    /// Of those, followed by a fall (after < [`FALL_RATIO`] × before).
    pub fell: u64,
    /// Sum of after/before over the evaluated CNPs.
    pub ratio_sum: f64,
    /// Bytes in the window before, summed over the evaluated CNPs: the sender's mean rate
    /// when the CNPs came ([`CcState::rate_before_bps`]).
    pub before_bytes: u64,
    /// CNPs that could not be evaluated: too few packets before, a bin of the window before
    /// with none (the sender idle for part of it), the flow not yet seen a whole window
    /// before, too many windows open, or the flow ended inside the window after.
    pub not_evaluated: u64,
}

impl CcState {
    /// Empty, measuring rates with `cfg`.
    pub fn new(cfg: &CcConfig) -> Self {
        CcState {
            last_cnp: None,
            intervals: Latency::EMPTY,
            too_fast: 0,
            first_too_fast: None,
            run: CeRun::default(),
            run_host_answered: false,
            unanswered_runs: 0,
            worst_run: None,
            bin_ns: (cfg.window_ns / BINS_PER_WINDOW).max(1),
            bytes: [0; RING],
            packets: [0; RING],
            cur: None,
            start: 0,
            pending: [(0, 0); PENDING],
            pending_len: 0,
            evaluated: 0,
            fell: 0,
            ratio_sum: 0.0,
            before_bytes: 0,
            not_evaluated: 0,
        }
    }

    fn slot(idx: i64) -> usize {
        idx.rem_euclid(RING as i64) as usize
    }

    /// Bytes, packets and bins holding a packet in bins `[from, to)`, bins never filled
    /// counted empty.
    fn sum(&self, from: i64, to: i64) -> (u64, u64, i64) {
        let Some(cur) = self.cur else { return (0, 0, 0) };
        let (mut b, mut p, mut busy) = (0u64, 0u64, 0i64);
        for i in from.max(cur - RING as i64 + 1)..to.min(cur + 1) {
            b += self.bytes[Self::slot(i)];
            p += u64::from(self.packets[Self::slot(i)]);
            busy += i64::from(self.packets[Self::slot(i)] > 0);
        }
        (b, p, busy)
    }

    /// A packet of the flow: `bytes` wire bytes at `ts`.
    pub fn on_packet(&mut self, ts: i64, bytes: u64) {
        let idx = ts.div_euclid(self.bin_ns);
        let cur = match self.cur {
            None => {
                self.cur = Some(idx);
                self.start = idx;
                idx
            }
            Some(c) => c,
        };
        if idx > cur {
            // Windows after that end before this bin are complete: judge them first.
            if self.pending_len > 0 {
                self.close_pending(idx);
            }
            if idx.saturating_sub(cur) >= RING as i64 {
                // The whole ring is older than the window (a flow's packets further apart
                // than two windows, the common case of a sparse flow): emptied at once.
                self.bytes = [0; RING];
                self.packets = [0; RING];
            } else {
                for i in (cur + 1)..=idx {
                    self.bytes[Self::slot(i)] = 0;
                    self.packets[Self::slot(i)] = 0;
                }
            }
            self.cur = Some(idx);
        } else if idx <= cur - RING as i64 {
            return;
        }
        let s = Self::slot(idx);
        self.bytes[s] = self.bytes[s].saturating_add(bytes);
        self.packets[s] = self.packets[s].saturating_add(1);
    }

    /// Judge the open windows after that end at or before bin `upto`.
    fn close_pending(&mut self, upto: i64) {
        let mut keep = 0;
        for i in 0..usize::from(self.pending_len) {
            let (from, before) = self.pending[i];
            let end = from + BINS_PER_WINDOW;
            if end < upto || (end == upto && self.sum(end - 1, end).1 == 0) {
                // The sender was not sending through to the window's end (its last bin, or
                // the bin right after it, holds none of its packets): its burst ended inside
                // the window, or it paused, which reads as a fall whatever it does. Not
                // evaluated.
                self.not_evaluated += 1;
            } else if end == upto {
                let (after, _, _) = self.sum(from, end);
                let ratio = after as f64 / before as f64;
                self.evaluated += 1;
                self.ratio_sum += ratio;
                self.before_bytes = self.before_bytes.saturating_add(before);
                if ratio < FALL_RATIO {
                    self.fell += 1;
                }
            } else {
                self.pending[keep] = self.pending[i];
                keep += 1;
            }
        }
        self.pending_len = keep as u8;
    }

    /// A CE-marked packet of the flow, with the NP's pacing `pacing_ns`. A gap with no
    /// mark of more than [`CE_RUN_IDLE_INTERVALS`] pacing intervals closes the open run
    /// first (judged as a CNP would judge it): a run never spans idle time.
    pub fn on_ce(&mut self, ts: i64, frame: u64, pacing_ns: i64) {
        if self.run.packets > 0 && ts - self.run.last_ns > CE_RUN_IDLE_INTERVALS * pacing_ns {
            self.close_run(pacing_ns);
        }
        // Marks within a pacing interval of the latest CNP are covered by it: a paced NP
        // answers the first mark of each interval only. They start no run.
        if self.run.packets == 0 && self.last_cnp.is_some_and(|c| ts >= c && ts - c < pacing_ns) {
            return;
        }
        if self.run.packets == 0 {
            self.run = CeRun { first_frame: frame, first_ns: ts, last_ns: ts, packets: 0 };
            self.run_host_answered = false;
        }
        self.run.packets += 1;
        self.run.last_ns = self.run.last_ns.max(ts);
    }

    /// The start of the open CE run, if any.
    pub(crate) fn run_start(&self) -> Option<i64> {
        (self.run.packets > 0).then_some(self.run.first_ns)
    }

    /// Whether `r` went unanswered: enough CE marks over two pacing intervals, and no CNP to
    /// the sender's host from the NP's host meanwhile.
    fn unanswered_run(&self, r: &CeRun, pacing_ns: i64) -> bool {
        r.packets >= CE_RUN_MIN_PACKETS && r.last_ns - r.first_ns >= 2 * pacing_ns && !self.run_host_answered
    }

    /// Close the open CE run: count it when it went unanswered.
    fn close_run(&mut self, pacing_ns: i64) {
        let r = self.run;
        if self.unanswered_run(&r, pacing_ns) {
            self.unanswered_runs += 1;
            if self.worst_run.is_none_or(|w| r.packets > w.packets) {
                self.worst_run = Some(r);
            }
        }
        self.run = CeRun::default();
        self.run_host_answered = false;
    }

    /// Unanswered CE runs so far, the open one included, and the longest.
    pub fn unanswered(&self, pacing_ns: i64) -> (u64, Option<CeRun>) {
        let r = self.run;
        if self.unanswered_run(&r, pacing_ns) {
            let worst = match self.worst_run {
                Some(w) if w.packets >= r.packets => w,
                _ => r,
            };
            (self.unanswered_runs + 1, Some(worst))
        } else {
            (self.unanswered_runs, self.worst_run)
        }
    }

    /// When the latest CNP came (none yet: `None`).
    pub fn last_cnp(&self) -> Option<i64> {
        self.last_cnp
    }

    /// A CNP answering the flow's data, at `ts` (frame `frame`).
    pub fn on_cnp(&mut self, ts: i64, frame: u64, cfg: &CcConfig) {
        if let Some(last) = self.last_cnp {
            let gap = ts - last;
            self.intervals.add(gap);
            if gap < cfg.cnp_pacing_ns {
                self.too_fast += 1;
                self.first_too_fast.get_or_insert((frame, ts, gap));
            }
        }
        self.last_cnp = Some(ts);
        self.close_run(cfg.cnp_pacing_ns);
        // The rate before: the whole bins of the window before the CNP's bin.
        let ti = ts.div_euclid(self.bin_ns);
        let from = ti - BINS_PER_WINDOW;
        let (before, packets, busy) = self.sum(from, ti);
        let covered = self.cur.is_some() && self.start <= from;
        let after_from = (ts + cfg.delay_ns + self.bin_ns - 1).div_euclid(self.bin_ns);
        // The sender must have been sending through the whole window before: a window that
        // holds the start of a burst (idle, then busy) reads as a rise after any CNP early
        // in the burst, whatever the sender does next.
        if !covered
            || packets < u64::from(MIN_BEFORE_PACKETS)
            || busy < BINS_PER_WINDOW
            || usize::from(self.pending_len) >= PENDING
        {
            self.not_evaluated += 1;
        } else {
            self.pending[usize::from(self.pending_len)] = (after_from, before);
            self.pending_len += 1;
        }
    }

    /// CNPs not evaluated so far, those whose window after is still open (or was cut by the
    /// end of the capture) included.
    pub fn not_evaluated_total(&self) -> u64 {
        self.not_evaluated + u64::from(self.pending_len)
    }

    /// Mean of after/before over the evaluated CNPs.
    pub fn mean_ratio(&self) -> Option<f64> {
        (self.evaluated > 0).then(|| self.ratio_sum / self.evaluated as f64)
    }

    /// The sender's mean rate in the windows before the evaluated CNPs, in bits a second,
    /// with windows of `window_ns`.
    pub fn rate_before_bps(&self, window_ns: i64) -> Option<f64> {
        (self.evaluated > 0 && window_ns > 0)
            .then(|| self.before_bytes as f64 * 8e9 / (self.evaluated as f64 * window_ns as f64))
    }

    /// The rate did not fall after most CNPs (docs/verdicts.md "Congestion control").
    pub fn not_reacting(&self) -> bool {
        self.evaluated >= MIN_EVALUATED
            && self.fell * 2 < self.evaluated
            && self.mean_ratio().is_some_and(|m| m >= FALL_RATIO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1000;

    /// A sender at one 1 kB packet per µs, CNPs every 200 µs from 200 µs; after each CNP
    /// the rate halves for 60 µs when `halve`, else stays.
    fn run(halve: bool) -> CcState {
        let cfg = CcConfig::default();
        let mut s = CcState::new(&cfg);
        let mut next_cnp = 200 * US;
        let mut slow_until = 0;
        for t in 0..1400 {
            let ts = t * US;
            if ts >= next_cnp {
                s.on_cnp(ts, t as u64, &cfg);
                next_cnp += 200 * US;
                if halve {
                    slow_until = ts + 60 * US;
                }
            }
            if ts < slow_until && t % 2 == 1 {
                continue;
            }
            s.on_packet(ts, 1000);
        }
        s
    }

    #[test]
    fn a_sender_that_halves_its_rate_reacts() {
        let s = run(true);
        assert_eq!(s.evaluated, 6, "{s:?}");
        assert_eq!(s.fell, s.evaluated);
        assert!(s.mean_ratio().unwrap() < 0.6);
        assert!(!s.not_reacting());
        assert_eq!(s.too_fast, 0);
    }

    #[test]
    fn a_sender_at_the_same_rate_does_not() {
        let s = run(false);
        assert_eq!(s.evaluated, 6, "{s:?}");
        assert_eq!(s.fell, 0);
        assert!((s.mean_ratio().unwrap() - 1.0).abs() < 0.05);
        assert!(s.not_reacting());
    }

    /// Bursts of 40 packets 2.5 µs apart every 1 ms, a CNP 15 µs into each, the sender at
    /// half its rate for 100 µs after: the window before each CNP holds idle time and the
    /// burst's first 6 packets, the window after 10 packets at the halved rate. Read as
    /// before/after that is a rise (1.67) after every CNP, from a sender that reacts (the
    /// judge's CE-hidden captures): such CNPs are not evaluated.
    #[test]
    fn a_cnp_early_in_a_burst_is_not_evaluated() {
        let cfg = CcConfig::default();
        let mut s = CcState::new(&cfg);
        for burst in 0..8i64 {
            let start = 1_000 * US + burst * 1_000 * US;
            let (mut ts, mut sent, mut cnp_done) = (start, 0, false);
            while sent < 40 {
                if !cnp_done && ts >= start + 15 * US {
                    s.on_cnp(ts, sent as u64, &cfg);
                    cnp_done = true;
                }
                s.on_packet(ts, 1000);
                sent += 1;
                ts += if cnp_done && ts < start + 115 * US { 5 * US } else { 5 * US / 2 };
            }
        }
        s.on_packet(20_000 * US, 1000);
        assert_eq!(s.evaluated, 0, "{s:?}");
        assert_eq!(s.not_evaluated_total(), 8);
        assert!(!s.not_reacting());
    }

    #[test]
    fn cnps_faster_than_the_pacing_are_counted() {
        let cfg = CcConfig::default();
        let mut s = CcState::new(&cfg);
        for (i, t) in [0, 10, 20, 100, 110].into_iter().enumerate() {
            s.on_cnp(t * US, i as u64 + 1, &cfg);
        }
        assert_eq!(s.too_fast, 3);
        assert_eq!(s.first_too_fast, Some((2, 10 * US, 10 * US)));
        assert_eq!(s.intervals.count(), 4);
    }

    #[test]
    fn ce_runs_without_a_cnp() {
        let cfg = CcConfig::default();
        let mut s = CcState::new(&cfg);
        // 12 CE marks over 110 µs, then a CNP: unanswered for two pacing intervals.
        let p = cfg.cnp_pacing_ns;
        for i in 0..12 {
            s.on_ce(i * 10 * US, i as u64, p);
        }
        s.on_cnp(115 * US, 99, &cfg);
        assert_eq!(s.unanswered_runs, 1);
        assert_eq!(s.worst_run.unwrap().packets, 12);
        // A short run answered quickly is not one.
        for i in 0..12 {
            s.on_ce(200 * US + i * US, 100 + i as u64, p);
        }
        s.on_cnp(215 * US, 200, &cfg);
        assert_eq!(s.unanswered_runs, 1);
        // An open run at the end is judged.
        for i in 0..20 {
            s.on_ce(300 * US + i * 10 * US, 300 + i as u64, p);
        }
        let (runs, worst) = s.unanswered(cfg.cnp_pacing_ns);
        assert_eq!(runs, 2);
        assert_eq!(worst.unwrap().packets, 20);
    }

    /// A healthy NP pacing at 50 µs (the judge's 7d): a CNP, 12 marks in the pacing
    /// interval after it (the NP answers none: paced), 60 µs with none, then a mark the NP
    /// answers 2 µs later. The marks the CNP's interval covers start no run.
    #[test]
    fn marks_a_paced_np_leaves_unanswered_start_no_run() {
        let cfg = CcConfig::default();
        let p = cfg.cnp_pacing_ns;
        let mut s = CcState::new(&cfg);
        for round in 0..5i64 {
            let t0 = 1_000 * US + round * 1_000 * US;
            s.on_ce(t0 - 2 * US, 0, p);
            s.on_cnp(t0, 0, &cfg);
            for i in 0..12 {
                s.on_ce(t0 + US + i * 4 * US, 0, p);
            }
            s.on_ce(t0 + 110 * US, 0, p);
            s.on_cnp(t0 + 112 * US, 0, &cfg);
        }
        assert_eq!(s.unanswered(p).0, 0, "{s:?}");
    }

    /// A sender with congestion control off, in 120 µs bursts at one packet per µs, a CNP
    /// 80 µs into each: the burst ends inside the window after, which holds its last 35 µs
    /// of packets and then none. That reads as a fall; such CNPs are not evaluated.
    #[test]
    fn a_burst_that_ends_inside_the_window_after_is_not_evaluated() {
        let cfg = CcConfig::default();
        let mut s = CcState::new(&cfg);
        for burst in 0..8i64 {
            let start = 1_000 * US + burst * 1_000 * US;
            for k in 0..120 {
                if k == 80 {
                    s.on_cnp(start + k * US, 0, &cfg);
                }
                s.on_packet(start + k * US, 1000);
            }
        }
        s.on_packet(20_000 * US, 1000);
        assert_eq!(s.evaluated, 0, "{s:?}");
        assert_eq!(s.not_evaluated_total(), 8);
    }

    #[test]
    fn a_ce_run_never_spans_idle_time() {
        let cfg = CcConfig::default();
        let p = cfg.cnp_pacing_ns;
        let mut s = CcState::new(&cfg);
        // Bursts 5 ms apart: each one's first mark answered by a CNP 2 µs later, its other
        // 5 marks (10 µs apart, inside the NP's pacing) left unanswered. Joined over the
        // idle gaps they made "30 CE-marked packets over 25 ms".
        for b in 0..6i64 {
            let t0 = b * 5_000 * US;
            s.on_ce(t0, (b * 10) as u64, p);
            s.on_cnp(t0 + 2 * US, (b * 10 + 1) as u64, &cfg);
            for k in 1..=5 {
                s.on_ce(t0 + 2 * US + k * 10 * US, (b * 10 + 1 + k) as u64, p);
            }
        }
        assert_eq!(s.unanswered(p), (0, None));
        // Marks that keep coming with gaps under two pacing intervals are still one run.
        let mut s = CcState::new(&cfg);
        for i in 0..12 {
            s.on_ce(i * 90 * US, i as u64, p);
        }
        assert_eq!(s.unanswered(p).0, 1);
    }

    proptest::proptest! {
        /// Packets at any spacing (within a bin, a few bins on, far past the ring): the
        /// rate ring holds the bytes and packets of its last 16 bins, whether it was emptied
        /// bin by bin or at once, and drops packets older than that.
        #[test]
        fn the_ring_holds_the_last_bins_whatever_the_spacing(
            gaps in proptest::collection::vec((0i64..3, 0i64..40_000, 1u64..2_000), 1..200),
        ) {
            let cfg = CcConfig::default();
            let mut s = CcState::new(&cfg);
            let bin = s.bin_ns;
            let mut model: std::collections::BTreeMap<i64, (u64, u64)> = Default::default();
            let mut ts = 1_000_000i64;
            for (kind, gap, bytes) in gaps {
                // Mostly forward by up to 40 µs, sometimes far on, sometimes back.
                ts += match kind { 0 => gap, 1 => gap * 50, _ => -gap };
                s.on_packet(ts, bytes);
                let idx = ts.div_euclid(bin);
                let cur = model.keys().next_back().copied().unwrap_or(idx).max(idx);
                if idx > cur - RING as i64 {
                    let e = model.entry(idx).or_default();
                    e.0 += bytes;
                    e.1 += 1;
                }
                let want = |from: i64, to: i64| {
                    model.range(from.max(cur - RING as i64 + 1)..to.min(cur + 1)).fold((0, 0, 0), |a, (_, v)| (a.0 + v.0, a.1 + v.1, a.2 + i64::from(v.1 > 0)))
                };
                for (from, to) in [(cur - 8, cur), (cur - 20, cur + 1), (cur - 3, cur + 5)] {
                    proptest::prop_assert_eq!(s.sum(from, to), want(from, to));
                }
            }
        }
    }

    #[test]
    fn the_state_is_small() {
        assert!(std::mem::size_of::<CcState>() <= 600, "{}", std::mem::size_of::<CcState>());
    }
}
