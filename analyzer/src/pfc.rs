//! PFC and 802.3x PAUSE timelines per (source MAC, kind, priority) (reference §1.8).
//!
//! Each pause frame restarts the priority's timer to now + quanta x 512 bit times at the
//! link speed; XON (quanta 0) ends it; priorities not enabled in a frame keep their state.
//! Paused time is the union of the resulting intervals. Storms are windows paused more than a
//! threshold fraction; a deadlock hint is a long continuous pause during which the
//! priority's RoCE traffic, seen before, stopped.

use rocescope_decoder::mac_control::quanta_to_ns;
use serde::Serialize;

/// Intervals kept per timeline for the report (totals stay exact beyond it).
const MAX_INTERVALS: usize = 512;

/// PFC or link-level PAUSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PauseKind {
    /// 802.1Qbb per-priority flow control.
    Pfc,
    /// 802.3x PAUSE (the whole link; reported as priority 0).
    Pause,
}

/// One paused interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// Start, ns since the epoch.
    pub start_ns: i64,
    /// End (expiry or XON).
    pub end_ns: i64,
    /// Ended by an XON rather than by expiry.
    pub xon: bool,
    /// Pause frames that started or extended it.
    pub frames: u64,
    /// Frame number that started it.
    pub first_frame: u64,
    /// RoCE packets on this priority seen while paused.
    pub roce_during: u64,
}

/// A run of storm windows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Storm {
    /// Start of the first window.
    pub start_ns: i64,
    /// End of the last window.
    pub end_ns: i64,
    /// Highest paused fraction of a window.
    pub max_fraction: f64,
}

/// Settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcConfig {
    /// Storm detection window.
    pub storm_window_ns: i64,
    /// Paused fraction of a window that makes it a storm window.
    pub storm_threshold: f64,
    /// Continuous pause that, with the priority's RoCE traffic stopped, hints at deadlock.
    pub deadlock_ns: i64,
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
    /// Link speed used.
    pub link_bps: u64,
    /// First frame number.
    pub first_frame: u64,
    storms: Vec<Storm>,
    win: (i64, i64),
    sec: (i64, i64),
    /// Most paused nanoseconds in any one-second window.
    pub max_paused_ns_per_s: i64,
    /// Longest interval during which RoCE on this priority stopped after having flowed.
    pub deadlock: Option<Interval>,
}

impl Timeline {
    /// A new timeline.
    pub fn new(link_bps: u64, first_frame: u64) -> Self {
        Timeline {
            pause_frames: 0,
            xon_frames: 0,
            quanta_total: 0,
            paused_ns: 0,
            intervals: Vec::new(),
            intervals_dropped: 0,
            current: None,
            link_bps,
            first_frame,
            storms: Vec::new(),
            win: (i64::MIN, 0),
            sec: (i64::MIN, 0),
            max_paused_ns_per_s: 0,
            deadlock: None,
        }
    }

    /// Whether the priority is paused at `ts`.
    pub fn paused_at(&self, ts: i64) -> bool {
        self.current.is_some_and(|c| ts < c.end_ns)
    }

    /// A RoCE packet on this timeline's priority at `ts`.
    pub fn on_roce(&mut self, ts: i64) {
        if let Some(c) = &mut self.current {
            if ts < c.end_ns {
                c.roce_during += 1;
            }
        }
    }

    /// A frame with `quanta` for this timeline at `ts`. `roce_before` says whether RoCE on
    /// the priority had been seen before (for the deadlock hint).
    pub fn on_frame(&mut self, ts: i64, quanta: u16, frame: u64, cfg: &PfcConfig, roce_seen_before: bool) {
        if let Some(c) = self.current {
            if ts >= c.end_ns {
                self.close(c.end_ns, false, cfg, roce_seen_before);
            }
        }
        if quanta == 0 {
            self.xon_frames += 1;
            if self.current.is_some() {
                self.close(ts, true, cfg, roce_seen_before);
            }
            return;
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
                })
            }
        }
    }

    fn close(&mut self, end: i64, xon: bool, cfg: &PfcConfig, roce_seen_before: bool) {
        let Some(mut c) = self.current.take() else { return };
        c.end_ns = end.max(c.start_ns);
        c.xon = xon;
        let len = c.end_ns - c.start_ns;
        self.paused_ns += len;
        self.account(c.start_ns, c.end_ns, cfg);
        if len >= cfg.deadlock_ns && c.roce_during == 0 && roce_seen_before {
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
    }

    /// Spread [s, e) over the storm windows and the one-second windows.
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
        let mut t = s;
        while t < e {
            let k = t.div_euclid(1_000_000_000);
            let until = ((k + 1) * 1_000_000_000).min(e);
            if self.sec.0 != k {
                self.sec = (k, 0);
            }
            self.sec.1 += until - t;
            self.max_paused_ns_per_s = self.max_paused_ns_per_s.max(self.sec.1);
            t = until;
        }
    }

    fn flush_window(&mut self, cfg: &PfcConfig) {
        let (k, paused) = self.win;
        if k == i64::MIN {
            return;
        }
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

    /// Close what is open at the end of the capture (`end`) and return the storms.
    pub fn finish(&self, end: i64, cfg: &PfcConfig, roce_seen_before: bool) -> Timeline {
        let mut t = self.clone();
        if let Some(c) = t.current {
            // A pause still running at the end counts until the capture ends or it expires.
            t.close(c.end_ns.min(end.max(c.start_ns)), false, cfg, roce_seen_before);
        }
        t.flush_window(cfg);
        t.win = (i64::MIN, 0);
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
    const CFG: PfcConfig =
        PfcConfig { storm_window_ns: 10_000_000, storm_threshold: 0.5, deadlock_ns: 5_000_000 };

    #[test]
    fn frames_restart_the_timer_and_xon_ends_it() {
        let mut t = Timeline::new(LINK_BPS, 1);
        // 65535 quanta at 100G = 335,539 ns; resent every 300 us for 3 ms, then XON.
        for i in 0..10 {
            t.on_frame(i * 300_000, 65535, i as u64 + 1, &CFG, true);
        }
        t.on_frame(3_000_000, 0, 11, &CFG, true);
        let t = t.finish(4_000_000, &CFG, true);
        assert_eq!((t.pause_frames, t.xon_frames, t.quanta_total), (10, 1, 655_350));
        assert_eq!(t.intervals.len(), 1);
        assert_eq!(t.paused_ns, 3_000_000);
        assert!(t.intervals[0].xon);
        assert_eq!(t.deadlock.map(|d| d.frames), None, "3 ms is below the 5 ms deadlock hint");
    }

    #[test]
    fn expiry_gaps_and_storms() {
        let mut t = Timeline::new(LINK_BPS, 1);
        // Two frames 1 ms apart: two separate 335 us intervals.
        t.on_frame(0, 65535, 1, &CFG, false);
        t.on_frame(1_000_000, 65535, 2, &CFG, false);
        let f = t.finish(2_000_000, &CFG, false);
        assert_eq!(f.intervals.len(), 2);
        assert_eq!(f.paused_ns, 2 * 335_539);
        assert!(f.storms().is_empty());
        // 20 ms paused solid: two storm windows merged into one run, and a deadlock hint
        // because RoCE had flowed before and none came during the pause.
        let mut s = Timeline::new(LINK_BPS, 1);
        for i in 0..70 {
            s.on_frame(i * 300_000, 65535, i as u64, &CFG, true);
        }
        let f = s.finish(30_000_000, &CFG, true);
        assert_eq!(f.storms().len(), 1);
        assert_eq!(f.storms()[0].start_ns, 0);
        assert!(f.storms()[0].end_ns >= 20_000_000);
        assert!(f.deadlock.is_some());
        assert_eq!(f.max_paused_ns_per_s, f.paused_ns);
    }
}
