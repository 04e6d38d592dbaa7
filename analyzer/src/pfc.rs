//! PFC and 802.3x PAUSE timelines per (capture point, source MAC, kind, priority)
//! (reference §1.8).
//!
//! Facts used, from `shared/reference/roce-protocol.md` §1.8:
//! - A PFC frame (EtherType 0x8808, opcode 0x0101) carries an enable vector and eight
//!   16-bit times; its *source* MAC is the side that pauses: the receiver whose buffer for
//!   that priority fills asks its link peer to stop sending on it. 802.3x PAUSE (opcode
//!   0x0001) stops the whole link.
//! - 1 quantum = 512 bit times at the link speed (5.12 ns at 100G; 65535 quanta = 335.5 µs).
//! - Each frame restarts the priority's timer to now + quanta × 512 / link speed; zero quanta
//!   (XON) ends it; priorities not enabled in a frame keep their state *(inference, §1.8)*.
//!
//! Paused time is the union of the resulting intervals. Storms are windows paused more than
//! a threshold fraction. Direction matters: a pause stops the pausing MAC's *link peer*
//! (PFC is hop by hop, IEEE 802.1Qbb): while a MAC pauses a priority, the RoCE frames the
//! peer sends on it must stop within a response allowance (see
//! [`DEFAULT_PAUSE_ALLOWANCE_NS`]); those that arrive later show a peer ignoring the pause.
//! The frames the peer sends are those *to the pausing MAC* where that MAC sends or receives
//! RoCE at the capture point, and those *from the link's station* ([`crate::link`]) where it
//! sends none (a switch port in an L2 fabric).
//! A deadlock hint is a long continuous pause during which the RoCE traffic towards the
//! pausing side, seen before the pause, stopped (traffic the pausing host sends the other
//! way does not count against it).

use rocescope_decoder::mac_control::quanta_to_ns;
pub use rocescope_model::pauses::{Interval, PauseKind, Storm};

/// Intervals kept per timeline for the report (totals stay exact beyond it).
const MAX_INTERVALS: usize = 512;

/// Frames beyond the allowance kept as evidence per timeline.
const MAX_IGNORED_EVIDENCE: usize = 3;

/// One second, the unit of the per-second pause figures.
const SECOND_NS: i64 = 1_000_000_000;

/// How long after a pause took effect a RoCE frame to the pausing MAC may still arrive:
/// 7 µs. The frames that arrive later ignored the pause.
///
/// The budget from a pause frame passing the capture point to the peer's last frame coming
/// back, using the PFC headroom components of 802.1Qbb/802.3 (as restated in "How to Compute
/// Headroom for Lossless Ethernet Links", from *Storage Networking* ch. 7.3:
/// <https://www.besthub.dev/articles/how-to-compute-headroom-for-lossless-ethernet-links-part-2-6f1dc894e989>):
/// the peer's response time after receiving a pause (802.3 Annex 31B upper bounds: 40,960 /
/// 60,416 / 201,728 / 463,360 bit times, i.e. 80 / 118 / 394 / 905 quanta, at 25 / 40 / 100
/// / 400 Gb/s: 1.64 / 1.51 / 2.02 / 1.16 µs), the maximum frame it may have begun (9216
/// bytes + preamble and IFG, 73,888 bit times: 2.96 µs at 25G, 0.74 µs at 100G), the
/// interface delays (6,144 / 24,576 / 122,880 bit times at 25 / 40 / 100G: up to 1.23 µs)
/// and 100 m of cable each way (0.5 µs each). That sums to 5.9 µs at 25G, 5.0 µs at 40G and
/// 100G, and less at 400G; 1 µs more covers captures with microsecond timestamps. At 10 Gb/s
/// the same sum is about 12.3 µs: use `--pause-allowance-us 13` there.
pub const DEFAULT_PAUSE_ALLOWANCE_NS: i64 = 7_000;

/// Frames to a pausing MAC beyond the allowance that make `pause_ignored` critical (with the
/// latest of them at least twice the allowance after the pause took effect): more than a
/// compliant peer can deliver late even with capture timestamps off by a frame or two, so
/// the finding rests on a pattern, not on one frame's timing.
pub const IGNORED_CRITICAL_FRAMES: u64 = 8;

/// Settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcConfig {
    /// Storm detection window.
    pub storm_window_ns: i64,
    /// Paused fraction of a window that makes it a storm window.
    pub storm_threshold: f64,
    /// Continuous pause that, with the RoCE traffic towards the pausing side stopped, hints
    /// at deadlock.
    pub deadlock_ns: i64,
    /// How long after a pause took effect RoCE to the pausing MAC may still arrive (frames
    /// in flight and the peer's response time); later ones ignored the pause. Default
    /// [`DEFAULT_PAUSE_ALLOWANCE_NS`].
    pub pause_allowance_ns: i64,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            storm_window_ns: 10_000_000,
            storm_threshold: 0.5,
            deadlock_ns: 100_000_000,
            pause_allowance_ns: DEFAULT_PAUSE_ALLOWANCE_NS,
        }
    }
}

/// Which way a RoCE frame went relative to a pausing MAC ([`Timeline::on_roce`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Towards {
    /// Neither to the pausing MAC nor from its link peer: not stopped by the pause.
    No,
    /// Sent to the pausing MAC (it sends or receives RoCE at this point: a host, or a
    /// switch's routed port).
    Mac,
    /// Sent by the link peer of a pausing MAC that sends no RoCE here (a switch port in an
    /// L2 fabric), to anyone.
    Peer,
}

/// What had been seen on the paused priority before a pause frame, for the interval it may
/// begin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeenBefore {
    /// RoCE the pause stops on the priority ([`Towards::Mac`] or [`Towards::Peer`]).
    pub towards: bool,
    /// RoCE on the priority at this capture point, to anyone.
    pub any: bool,
}

/// A RoCE frame sent to a pausing MAC after the response allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IgnoredFrame {
    /// Its frame number.
    pub frame: u64,
    /// Its time.
    pub ts_ns: i64,
    /// How long after the pause took effect it arrived.
    pub delay_ns: i64,
    /// The pause frame that began the interval.
    pub pause_frame: u64,
    /// When that pause took effect.
    pub pause_ts_ns: i64,
}

/// State of one timeline.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Pause frames with non-zero quanta.
    pub pause_frames: u64,
    /// XON frames (quanta 0).
    pub xon_frames: u64,
    /// Sum of quanta.
    pub quanta_total: u64,
    /// Paused time, closed intervals.
    pub paused_ns: i64,
    /// Closed intervals (the first `MAX_INTERVALS`).
    pub intervals: Vec<Interval>,
    /// Intervals beyond those kept.
    pub intervals_dropped: u64,
    current: Option<Interval>,
    /// What RoCE the priority had carried before the pause under way began: whether its
    /// traffic's direction can be judged (for the deadlock hint).
    current_seen: SeenBefore,
    /// Link speed used.
    pub link_bps: u64,
    /// First frame number.
    pub first_frame: u64,
    storms: Vec<Storm>,
    win: (i64, i64),
    /// Start of the span the mean per second is taken over: the capture point's first
    /// frame.
    origin_ns: i64,
    /// Most paused ns in one storm window (`storm_window_ns`), the peak's window.
    win_max_ns: i64,
    /// Paused µs per second of capture (set by [`Timeline::finish`]).
    pub pause_us_per_s: f64,
    /// Paused µs per second in the busiest storm window (`--storm-window-ms`, 10 ms; set by
    /// [`Timeline::finish`]); never below `pause_us_per_s`.
    pub max_pause_us_per_s: f64,
    /// Longest interval during which the RoCE towards the pausing side stopped after having
    /// flowed.
    pub deadlock: Option<Interval>,
    /// RoCE frames to the pausing MAC on this priority that arrived while paused, more than
    /// the allowance after the pause took effect.
    pub ignored: u64,
    /// The latest of them, in ns after its pause took effect.
    pub ignored_max_delay_ns: i64,
    /// The first few of them.
    pub ignored_evidence: Vec<IgnoredFrame>,
    /// Of the ignored frames, those its link peer sent ([`Towards::Peer`]).
    pub ignored_from_peer: u64,
    /// The link peer whose frames the pause judged, when the pausing MAC sent no RoCE
    /// here (the last one met; [`crate::link::MacTraffic::station`]).
    pub peer: Option<[u8; 6]>,
    /// The pausing MAC sent RoCE at this point: only frames to it are judged.
    pub pauser_sends: bool,
}

impl Timeline {
    /// A new timeline at a capture point whose first frame was at `origin_ns` (the start of
    /// the span its mean per second is taken over).
    pub fn new(link_bps: u64, first_frame: u64, origin_ns: i64) -> Self {
        Timeline {
            pause_frames: 0,
            xon_frames: 0,
            quanta_total: 0,
            paused_ns: 0,
            intervals: Vec::new(),
            intervals_dropped: 0,
            current: None,
            current_seen: SeenBefore::default(),
            link_bps,
            first_frame,
            storms: Vec::new(),
            win: (i64::MIN, 0),
            origin_ns,
            win_max_ns: 0,
            pause_us_per_s: 0.0,
            max_pause_us_per_s: 0.0,
            deadlock: None,
            ignored: 0,
            ignored_max_delay_ns: 0,
            ignored_evidence: Vec::new(),
            ignored_from_peer: 0,
            peer: None,
            pauser_sends: false,
        }
    }

    /// When the pause under way ends (ns since the epoch), if one is: the analyzer walks only
    /// these timelines per RoCE frame.
    pub fn pause_end(&self) -> Option<i64> {
        self.current.map(|c| c.end_ns)
    }

    /// When the pause under way began (ns since the epoch), if one is.
    pub fn pause_start(&self) -> Option<i64> {
        self.current.map(|c| c.start_ns)
    }

    /// Whether the priority is paused at `ts`.
    pub fn paused_at(&self, ts: i64) -> bool {
        self.current.is_some_and(|c| ts < c.end_ns)
    }

    /// A RoCE packet on this timeline's priority at its capture point (for 802.3x PAUSE, of
    /// any priority): frame `frame` at `ts`, going `towards` the pausing side or not.
    ///
    /// The analyzer splits this in two (`pause_watch` module): the packets during the pause
    /// come as one count ([`Timeline::add_during`]), and only those going towards the
    /// pausing side one by one ([`Timeline::on_towards`]).
    pub fn on_roce(&mut self, ts: i64, frame: u64, towards: Towards, cfg: &PfcConfig) {
        let Some(c) = &mut self.current else { return };
        if ts >= c.end_ns || ts < c.start_ns {
            return;
        }
        c.roce_during += 1;
        self.on_towards(ts, frame, towards, cfg);
    }

    /// `n` more RoCE packets during the pause under way ([`Interval::roce_during`]), counted
    /// elsewhere: those [`Timeline::on_roce`] would have counted one by one.
    pub fn add_during(&mut self, n: u64) {
        if let Some(c) = &mut self.current {
            c.roce_during += n;
        }
    }

    /// The part of [`Timeline::on_roce`] after [`Interval::roce_during`]: a packet going
    /// `towards` the pausing side (nothing for [`Towards::No`]), judged against the
    /// response allowance.
    pub fn on_towards(&mut self, ts: i64, frame: u64, towards: Towards, cfg: &PfcConfig) {
        let Some(c) = &mut self.current else { return };
        if ts >= c.end_ns || ts < c.start_ns || towards == Towards::No {
            return;
        }
        c.roce_towards += 1;
        let delay = ts - c.start_ns;
        if delay <= cfg.pause_allowance_ns {
            return; // in flight, or within the peer's response time
        }
        c.ignored += 1;
        self.ignored += 1;
        self.ignored_from_peer += u64::from(towards == Towards::Peer);
        self.ignored_max_delay_ns = self.ignored_max_delay_ns.max(delay);
        if self.ignored_evidence.len() < MAX_IGNORED_EVIDENCE {
            let (pause_frame, pause_ts_ns) = (c.first_frame, c.start_ns);
            self.ignored_evidence.push(IgnoredFrame {
                frame,
                ts_ns: ts,
                delay_ns: delay,
                pause_frame,
                pause_ts_ns,
            });
        }
    }

    /// A frame with `quanta` for this timeline at `ts`. `seen` says what RoCE the priority
    /// had carried before (for the deadlock hint of an interval this frame begins). Returns
    /// the paused interval the frame closed, `(start, end)` in ns since the epoch: one that
    /// had expired before it, or the one its XON ends.
    pub fn on_frame(
        &mut self,
        ts: i64,
        quanta: u16,
        frame: u64,
        cfg: &PfcConfig,
        seen: SeenBefore,
    ) -> Option<(i64, i64)> {
        let mut closed = None;
        if let Some(c) = self.current {
            if ts >= c.end_ns {
                closed = self.close(c.end_ns, false, cfg);
            }
        }
        if quanta == 0 {
            self.xon_frames += 1;
            if self.current.is_some() {
                closed = self.close(ts, true, cfg);
            }
            return closed;
        }
        self.pause_frames += 1;
        self.quanta_total += u64::from(quanta);
        let end = ts + quanta_to_ns(quanta, self.link_bps) as i64;
        match &mut self.current {
            Some(c) => {
                c.end_ns = end;
                c.frames += 1;
            }
            None => {
                self.current = Some(Interval {
                    start_ns: ts,
                    end_ns: end,
                    xon: false,
                    frames: 1,
                    first_frame: frame,
                    roce_during: 0,
                    roce_towards: 0,
                    ignored: 0,
                });
                self.current_seen = seen;
            }
        }
        closed
    }

    /// The interval still open, as [`Timeline::finish`] at `end` would close it.
    pub fn open_span(&self, end: i64) -> Option<(i64, i64)> {
        self.current.map(|c| (c.start_ns, c.end_ns.min(end.max(c.start_ns))))
    }

    /// Close the current interval at `end`; returns its span.
    fn close(&mut self, end: i64, xon: bool, cfg: &PfcConfig) -> Option<(i64, i64)> {
        let mut c = self.current.take()?;
        c.end_ns = end.max(c.start_ns);
        c.xon = xon;
        let len = c.end_ns - c.start_ns;
        self.paused_ns += len;
        self.account(c.start_ns, c.end_ns, cfg);
        // Stopped: when RoCE had gone to the pausing MAC on this priority before, none went
        // to it beyond the allowance (the pausing side's own traffic, going the other way,
        // may continue in a deadlock). When it had not (the pausing MAC is no RoCE
        // destination here: a switch port in an L2 fabric, or a one-way capture), the
        // direction cannot be told: the priority's RoCE as a whole stopped.
        let seen = self.current_seen;
        let stopped = if seen.towards { c.ignored == 0 } else { seen.any && c.roce_during == 0 };
        if len >= cfg.deadlock_ns && stopped {
            let longer = self.deadlock.is_none_or(|d| d.end_ns - d.start_ns < len);
            if longer {
                self.deadlock = Some(c);
            }
        }
        if self.intervals.len() < MAX_INTERVALS {
            self.intervals.push(c);
        } else {
            self.intervals_dropped += 1;
        }
        Some((c.start_ns, c.end_ns))
    }

    /// Spread [s, e) over the storm windows.
    fn account(&mut self, s: i64, e: i64, cfg: &PfcConfig) {
        let w = cfg.storm_window_ns.max(1);
        let mut t = s;
        while t < e {
            let k = t.div_euclid(w);
            let until = ((k + 1) * w).min(e);
            if self.win.0 != k {
                self.flush_window(cfg);
                self.win = (k, 0);
            }
            self.win.1 += until - t;
            t = until;
        }
    }

    fn flush_window(&mut self, cfg: &PfcConfig) {
        let (k, paused) = self.win;
        if k == i64::MIN {
            return;
        }
        self.win_max_ns = self.win_max_ns.max(paused);
        let w = cfg.storm_window_ns.max(1);
        let frac = paused as f64 / w as f64;
        if frac > cfg.storm_threshold {
            let (start, end) = (k * w, (k + 1) * w);
            match self.storms.last_mut() {
                Some(s) if s.end_ns == start => {
                    s.end_ns = end;
                    s.max_fraction = s.max_fraction.max(frac);
                }
                _ => self.storms.push(Storm { start_ns: start, end_ns: end, max_fraction: frac }),
            }
        }
    }

    /// The timeline as of the capture point's latest frame at `end`: what is open is closed
    /// there, the storms are settled and the per-second figures set.
    ///
    /// `pause_us_per_s` is the paused time over the point's span (first frame to `end`);
    /// `max_pause_us_per_s` the busiest storm window's (`storm_window_ns`, aligned on its
    /// multiples), so a burst of pauses shows at its own rate, not spread over the capture.
    /// A capture no longer than one window has the mean for both; the peak is never below
    /// the mean (a window cut by the capture's edge counts its whole width).
    pub fn finish(&self, end: i64, cfg: &PfcConfig) -> Timeline {
        let mut t = self.clone();
        if let Some(c) = t.current {
            // A pause still running at the end counts until the capture ends or it expires.
            t.close(c.end_ns.min(end.max(c.start_ns)), false, cfg);
        }
        t.flush_window(cfg);
        t.win = (i64::MIN, 0);
        let span = (end - t.origin_ns).max(0);
        if span == 0 {
            return t;
        }
        let per_s = |paused: i64, len: i64| paused as f64 / 1e3 * (SECOND_NS as f64 / len as f64);
        let w = cfg.storm_window_ns.max(1);
        t.pause_us_per_s = per_s(t.paused_ns, span);
        let peak = if span <= w { 0.0 } else { per_s(t.win_max_ns, w) };
        t.max_pause_us_per_s = peak.max(t.pause_us_per_s);
        t
    }

    /// Storm runs found (after `finish`).
    pub fn storms(&self) -> &[Storm] {
        &self.storms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK_BPS: u64 = 100_000_000_000;
    const CFG: PfcConfig = PfcConfig {
        storm_window_ns: 10_000_000,
        storm_threshold: 0.5,
        deadlock_ns: 5_000_000,
        pause_allowance_ns: DEFAULT_PAUSE_ALLOWANCE_NS,
    };
    const SEEN: SeenBefore = SeenBefore { towards: false, any: true };
    const NONE: SeenBefore = SeenBefore { towards: false, any: false };
    const TOWARDS: SeenBefore = SeenBefore { towards: true, any: true };

    #[test]
    fn frames_restart_the_timer_and_xon_ends_it() {
        let mut t = Timeline::new(LINK_BPS, 1, 0);
        // 65535 quanta at 100G = 335,539 ns; resent every 300 us for 3 ms, then XON.
        for i in 0..10 {
            t.on_frame(i * 300_000, 65535, i as u64 + 1, &CFG, SEEN);
        }
        t.on_frame(3_000_000, 0, 11, &CFG, SEEN);
        let t = t.finish(4_000_000, &CFG);
        assert_eq!((t.pause_frames, t.xon_frames, t.quanta_total), (10, 1, 655_350));
        assert_eq!(t.intervals.len(), 1);
        assert_eq!(t.paused_ns, 3_000_000);
        assert!(t.intervals[0].xon);
        assert_eq!(t.deadlock.map(|d| d.frames), None, "3 ms is below the 5 ms deadlock hint");
        // 3 ms paused in a 4 ms capture: one window, 750,000 µs/s both ways.
        assert_eq!(t.pause_us_per_s, 750_000.0);
        assert_eq!(t.max_pause_us_per_s, 750_000.0);
    }

    #[test]
    fn expiry_gaps_and_storms() {
        let mut t = Timeline::new(LINK_BPS, 1, 0);
        // Two frames 1 ms apart: two separate 335 us intervals.
        t.on_frame(0, 65535, 1, &CFG, NONE);
        t.on_frame(1_000_000, 65535, 2, &CFG, NONE);
        let f = t.finish(2_000_000, &CFG);
        assert_eq!(f.intervals.len(), 2);
        assert_eq!(f.paused_ns, 2 * 335_539);
        assert!(f.storms().is_empty());
        // 20 ms paused solid: two storm windows merged into one run, and a deadlock hint
        // because RoCE had flowed before and none came during the pause.
        let mut s = Timeline::new(LINK_BPS, 1, 0);
        for i in 0..70 {
            s.on_frame(i * 300_000, 65535, i as u64, &CFG, SEEN);
        }
        let f = s.finish(30_000_000, &CFG);
        assert_eq!(f.storms().len(), 1);
        assert_eq!(f.storms()[0].start_ns, 0);
        assert!(f.storms()[0].end_ns >= 20_000_000);
        assert!(f.deadlock.is_some());
        // Peak: a 10 ms window paused whole; the mean over the 30 ms is lower.
        assert_eq!(f.max_pause_us_per_s, 1_000_000.0);
        assert!(f.pause_us_per_s < 750_000.0);
    }

    #[test]
    fn frames_from_the_link_peer_are_counted_apart() {
        let mut t = Timeline::new(LINK_BPS, 1, 0);
        t.on_frame(1_000, 65535, 10, &CFG, TOWARDS);
        for (i, towards) in [(0, Towards::Peer), (1, Towards::Peer), (2, Towards::Mac), (3, Towards::No)] {
            t.on_roce(20_000 + i * 1_000, 20 + i as u64, towards, &CFG);
        }
        let f = t.finish(500_000, &CFG);
        assert_eq!((f.ignored, f.ignored_from_peer), (3, 2));
        assert_eq!(f.intervals[0].roce_during, 4);
    }

    #[test]
    fn traffic_to_the_pausing_side_beyond_the_allowance_ignores_the_pause() {
        let mut t = Timeline::new(LINK_BPS, 1, 0);
        t.on_frame(1_000, 65535, 10, &CFG, TOWARDS);
        // In flight (within 7 µs), then beyond it; the other way; after expiry.
        t.on_roce(3_000, 11, Towards::Mac, &CFG);
        t.on_roce(8_000, 12, Towards::Mac, &CFG);
        t.on_roce(8_001, 13, Towards::Mac, &CFG);
        t.on_roce(9_000, 14, Towards::No, &CFG);
        t.on_roce(400_000, 15, Towards::Mac, &CFG);
        let f = t.finish(500_000, &CFG);
        assert_eq!((f.ignored, f.ignored_max_delay_ns), (1, 7_001));
        assert_eq!(
            f.ignored_evidence.iter().map(|e| (e.frame, e.pause_frame)).collect::<Vec<_>>(),
            [(13, 10)]
        );
        let i = f.intervals[0];
        assert_eq!((i.roce_during, i.roce_towards, i.ignored), (4, 3, 1));
    }

    #[test]
    fn a_deadlock_hint_looks_only_at_traffic_towards_the_pausing_side() {
        // 10 ms paused; RoCE had gone to the pausing MAC before.
        let run = |towards_late: bool, other_way: bool, seen: SeenBefore| {
            let mut t = Timeline::new(LINK_BPS, 1, 0);
            for i in 0..34 {
                t.on_frame(i * 300_000, 65535, i as u64 + 1, &CFG, seen);
                if other_way {
                    t.on_roce(i * 300_000 + 1_000, 100 + i as u64, Towards::No, &CFG);
                }
            }
            if towards_late {
                t.on_roce(5_000_000, 99, Towards::Mac, &CFG);
            }
            if seen.towards {
                t.on_roce(2_000, 98, Towards::Mac, &CFG); // in flight at the start: not against a hint
            }
            t.finish(20_000_000, &CFG).deadlock.is_some()
        };
        assert!(run(false, true, TOWARDS), "the pauser's own traffic the other way goes on");
        assert!(!run(true, false, TOWARDS), "traffic to the pauser went on");
        // Direction unknown (nothing was ever sent to the pausing MAC): any traffic on the
        // priority counts, as before.
        assert!(!run(false, true, SEEN));
        assert!(run(false, false, SEEN));
        assert!(!run(false, false, NONE), "no RoCE on the priority before: nothing stopped");
    }

    #[test]
    fn the_peak_per_second_is_the_busiest_storm_window() {
        // A 2.5 s capture from t = 0: 1 ms paused every 100 ms (1% of the time), and one
        // burst of pauses covering 9 ms of the window [1.20 s, 1.21 s).
        let mut t = Timeline::new(LINK_BPS, 1, 0);
        let mut frame = 0;
        // Paused for `len` from `at`: a frame every 300 µs (each lasts 335.5 µs), then XON.
        let mut pause = |t: &mut Timeline, at: i64, len: i64| {
            for k in 0..(len + 299_999) / 300_000 {
                frame += 1;
                t.on_frame(at + k * 300_000, 65535, frame, &CFG, NONE);
            }
            t.on_frame(at + len, 0, frame, &CFG, NONE);
        };
        for k in 0..25 {
            pause(&mut t, k * 100_000_000 + 50_000_000, 1_000_000);
        }
        pause(&mut t, 1_200_500_000, 9_000_000);
        let f = t.finish(2_500_000_000, &CFG);
        assert_eq!(f.paused_ns, 34_000_000);
        assert!((f.pause_us_per_s - 13_600.0).abs() < 1e-6, "{}", f.pause_us_per_s);
        // The busiest 10 ms window is 90% paused: 900,000 µs/s, not the mean.
        assert!((f.max_pause_us_per_s - 900_000.0).abs() < 1e-6, "{}", f.max_pause_us_per_s);
        // A capture no longer than a window: peak = mean.
        let mut s = Timeline::new(LINK_BPS, 1, 5_000);
        s.on_frame(10_000, 1000, 1, &CFG, NONE);
        let f = s.finish(15_000, &CFG);
        assert_eq!(f.paused_ns, 5_000);
        assert_eq!(f.pause_us_per_s, f.max_pause_us_per_s);
        assert!((f.pause_us_per_s - 500_000.0).abs() < 1e-6);
    }
}
