//! Fabric-wide congestion series: per capture point and priority, the RoCE throughput, CE
//! marks, CNPs and PFC paused time on one time axis at the `--bin` resolution (10 µs to
//! 10 ms), plus the busiest bins at that resolution (docs/verdicts.md "Microbursts").
//!
//! A flow's frames come once per flow and bin, summed (crate::fold); frames that cannot fold,
//! one by one ([`Fabric::add`]).
//!
//! Memory is fixed per capture point and priority in use: [`MAX_BINS`] bins, allocated
//! whole when the priority is first seen so the series never grows after (past that many
//! bins, neighbouring bins merge and the width doubles, as a flow's bins do), the bin being
//! filled at the `--bin` width, and the peaks: about 10 kB per priority. Series are kept for the first [`MAX_POINTS`] capture points;
//! later points are counted ([`Fabric::points_uncharted`]), not charted.
//!
//! The priority is the one the switch gives a frame (its PCP or its DSCP through the map,
//! [`crate::audit::AuditConfig::priority`]); a CNP counts at its own priority (NICs often
//! send CNPs on a priority of their own). Paused time is a PFC timeline's (reference §1.8:
//! a pause runs from its frame for quanta × 512 bit times, until renewed or XON), summed over
//! the pausing MACs at the point; 802.3x PAUSE, which stops the whole link, is a series of
//! its own.

pub use rocescope_model::fabric::{FabricPeak, FabricReport, PointSeriesReport, PrioritySeries};

/// Most bins a capture point's series keeps; past that, pairs merge and the width doubles.
pub const MAX_BINS: usize = 256;

/// Capture points whose series are kept.
pub const MAX_POINTS: usize = 64;

/// One priority's figures in one bin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cell {
    bytes: u64,
    packets: u64,
    ce: u64,
    cnps: u64,
    pause_ns: u64,
    /// Packets of the data class (not ACKs, NAKs or CNPs) and of those CE-marked: a
    /// priority's CE fraction of data, packet by packet (a flow may carry data and ACKs).
    data: u64,
    data_ce: u64,
}

/// Figures of a frame or a share: [bytes, packets, CE, CNPs, data packets, data CE].
pub(crate) type Counts = [u64; 6];

/// The [`Counts`] of `packets` packets of `bytes` wire bytes, `ce` of them CE-marked, all
/// CNPs when `cnp` and all of the data class when `data`.
#[inline]
pub(crate) fn counts(bytes: u64, packets: u64, ce: u64, cnp: bool, data: bool) -> Counts {
    let (data, data_ce) = if data { (packets, ce) } else { (0, 0) };
    [bytes, packets, ce, if cnp { packets } else { 0 }, data, data_ce]
}

/// The bin being filled at the `--bin` width, per priority ([`Counts`]).
type FineBin = [Counts; 8];

/// One priority's busiest bins at the `--bin` width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Peaks {
    /// (bin index, bytes).
    bytes: (u64, u64),
    /// (bin index, CE packets, packets).
    ce: (u64, u64, u64),
    /// (bin index, CNPs).
    cnps: (u64, u64),
}

impl Peaks {
    fn take(&mut self, idx: u64, c: &Counts) {
        let [bytes, packets, ce, cnps, ..] = *c;
        if bytes > self.bytes.1 {
            self.bytes = (idx, bytes);
        }
        if ce > self.ce.1 {
            self.ce = (idx, ce, packets);
        }
        if cnps > self.cnps.1 {
            self.cnps = (idx, cnps);
        }
    }
}

/// One capture point's series.
#[derive(Clone, Debug)]
struct PointSeries {
    /// The `--bin` width.
    base_ns: u64,
    width_ns: u64,
    /// Bins in use (each series in use holds this many).
    len: usize,
    /// Per priority, its bins (empty for a priority not seen yet).
    bins: [Vec<Cell>; 8],
    /// 802.3x PAUSE paused ns per bin (summed over the pausing MACs; empty without).
    link_pause: Vec<u64>,
    /// Priorities that carried RoCE or were paused.
    used: u8,
    fine_idx: u64,
    /// Where that bin starts, ns after the capture start (`fine_idx` × the `--bin` width).
    fine_start: u64,
    fine: FineBin,
    peaks: [Peaks; 8],
}

impl PointSeries {
    fn new(base_ns: u64) -> Self {
        PointSeries {
            base_ns,
            width_ns: base_ns,
            len: 0,
            bins: Default::default(),
            link_pause: Vec::new(),
            used: 0,
            fine_idx: 0,
            fine_start: 0,
            fine: [[0; 6]; 8],
            peaks: [Peaks::default(); 8],
        }
    }

    /// The bin holding `off` (ns after the capture start), merging until it fits; every
    /// series in use, and priority `prio`'s (allocated whole on first use), reach it.
    fn bin(&mut self, off: u64, prio: Option<usize>) -> usize {
        let mut idx = off / self.width_ns;
        // The common case: a bin that exists, of a series already in use.
        let ready = match prio {
            Some(p) => self.bins.get(p).is_some_and(|v| v.len() == self.len),
            None => self.link_pause.len() == self.len,
        };
        if (idx as usize) < self.len && ready {
            return idx as usize;
        }
        while idx as usize >= MAX_BINS {
            self.merge();
            idx = off / self.width_ns;
        }
        let i = idx as usize;
        self.len = self.len.max(i + 1);
        let len = self.len;
        let fresh = |v: &mut Vec<Cell>| {
            if v.capacity() == 0 {
                v.reserve_exact(MAX_BINS);
            }
        };
        if let Some(v) = prio.and_then(|p| self.bins.get_mut(p)) {
            fresh(v);
        }
        for v in self.bins.iter_mut().filter(|v| v.capacity() > 0) {
            v.resize(len, Cell::default());
        }
        if !self.link_pause.is_empty() {
            self.link_pause.resize(len, 0);
        }
        i
    }

    fn merge(&mut self) {
        self.width_ns = self.width_ns.saturating_mul(2);
        self.len = self.len.div_ceil(2);
        for v in &mut self.bins {
            // In place: the allocation is kept.
            let n = v.len().div_ceil(2);
            for k in 0..n {
                let pair = v.get(2 * k..(2 * k + 2).min(v.len())).unwrap_or(&[]);
                let mut o = Cell::default();
                for c in pair {
                    o.bytes += c.bytes;
                    o.packets += c.packets;
                    o.ce += c.ce;
                    o.cnps += c.cnps;
                    o.pause_ns += c.pause_ns;
                    o.data += c.data;
                    o.data_ce += c.data_ce;
                }
                if let Some(x) = v.get_mut(k) {
                    *x = o;
                }
            }
            v.truncate(n);
        }
        let lp = &mut self.link_pause;
        let n = lp.len().div_ceil(2);
        for k in 0..n {
            let sum = lp.get(2 * k..(2 * k + 2).min(lp.len())).unwrap_or(&[]).iter().sum();
            if let Some(x) = lp.get_mut(k) {
                *x = sum;
            }
        }
        lp.truncate(n);
    }

    /// Fold the `--bin` bin being filled into the peaks and the series, and empty it.
    fn close_fine(&mut self) {
        let (fi, fine) = (self.fine_idx, self.fine);
        for (p, c) in fine.iter().enumerate() {
            if c[1] == 0 {
                continue; // no frame on this priority
            }
            if let Some(pk) = self.peaks.get_mut(p) {
                pk.take(fi, c);
            }
            self.put(fi.saturating_mul(self.base_ns), p, c);
        }
        self.fine = [[0; 6]; 8];
    }

    /// Add figures ([`Counts`]) to priority `p`'s bin holding `off`.
    fn put(&mut self, off: u64, p: usize, c: &Counts) {
        let i = self.bin(off, Some(p));
        if let Some(x) = self.bins.get_mut(p).and_then(|b| b.get_mut(i)) {
            x.bytes = x.bytes.saturating_add(c[0]);
            x.packets = x.packets.saturating_add(c[1]);
            x.ce = x.ce.saturating_add(c[2]);
            x.cnps = x.cnps.saturating_add(c[3]);
            x.data = x.data.saturating_add(c[4]);
            x.data_ce = x.data_ce.saturating_add(c[5]);
        }
    }

    /// Spread [s, e) (ns after the capture start) over the bins of `series`.
    fn spread(width: u64, s: u64, e: u64, mut put: impl FnMut(usize, u64)) {
        let mut t = s;
        while t < e {
            let k = t / width;
            let until = ((k + 1) * width).min(e);
            put(k as usize, until - t);
            t = until;
        }
    }

    fn add_pause(&mut self, prio: Option<u8>, s: u64, e: u64) {
        if e <= s {
            return;
        }
        // Make room for the end first, so one width covers the whole interval.
        let p = prio.map(|p| usize::from(p & 7));
        if p.is_none() && self.link_pause.capacity() == 0 {
            self.link_pause.reserve_exact(MAX_BINS);
            self.link_pause.push(0);
        }
        self.bin(e - 1, p);
        let width = self.width_ns;
        match p {
            Some(p) => {
                self.used |= 1 << p;
                let Some(bins) = self.bins.get_mut(p) else { return };
                Self::spread(width, s, e, |k, ns| {
                    if let Some(c) = bins.get_mut(k) {
                        c.pause_ns += ns;
                    }
                });
            }
            None => {
                let lp = &mut self.link_pause;
                Self::spread(width, s, e, |k, ns| {
                    if let Some(x) = lp.get_mut(k) {
                        *x += ns;
                    }
                });
            }
        }
    }
}

/// What one RoCE frame adds to the fabric series.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Its capture point.
    pub point: u16,
    /// The priority the switch gives it.
    pub prio: u8,
    /// ns after the capture start.
    pub offset_ns: i64,
    /// Wire bytes (scaled by the sampling rate).
    pub bytes: u64,
    /// Packets it stands for (the sampling rate; 1 when every packet was captured).
    pub packets: u64,
    /// ECN Congestion Experienced.
    pub ce: bool,
    /// A CNP.
    pub cnp: bool,
    /// Of the data class (crate::audit::Class::Data).
    pub data: bool,
}

/// The fabric-wide series of every capture point (see the module documentation).
#[derive(Clone, Debug)]
pub struct Fabric {
    base_ns: u64,
    points: Vec<Option<Box<PointSeries>>>,
    /// RoCE frames and paused intervals at points past [`MAX_POINTS`], not charted.
    pub points_uncharted: u64,
}

impl Fabric {
    /// Series of `base_ns` bins (at least 1 µs), none yet.
    pub fn new(base_ns: u64) -> Self {
        Fabric { base_ns: base_ns.max(1000), points: Vec::new(), points_uncharted: 0 }
    }

    fn point(&mut self, point: u16) -> Option<&mut PointSeries> {
        let i = usize::from(point);
        if matches!(self.points.get(i), Some(Some(_))) {
            return self.points.get_mut(i).and_then(|p| p.as_deref_mut());
        }
        if i >= MAX_POINTS {
            self.points_uncharted += 1;
            return None;
        }
        if self.points.len() <= i {
            self.points.resize_with(i + 1, || None);
        }
        let base = self.base_ns;
        self.points.get_mut(i).map(|p| &mut **p.get_or_insert_with(|| Box::new(PointSeries::new(base))))
    }

    /// Count a RoCE frame.
    ///
    /// Frames add to the `--bin` bin being filled; when one opens the next, the last is
    /// folded into the peaks and spilled into the series. A frame older than the bin being
    /// filled (merged captures out of order) goes straight into the series and not the
    /// peaks, so a peak may be missed but is never overstated.
    #[inline]
    pub fn add(&mut self, s: Sample) {
        let ce = if s.ce { s.packets } else { 0 };
        self.add_counts(s.point, s.prio, s.offset_ns, counts(s.bytes, s.packets, ce, s.cnp, s.data));
    }

    /// `n` CE marks with no packet of their own at `offset_ns`: the mirror copy of a packet
    /// already counted, marked by the switch between the two copies (crate::dedup); `data`:
    /// a copy of a data packet.
    pub fn add_ce(&mut self, point: u16, prio: u8, offset_ns: i64, n: u64, data: bool) {
        self.add_counts(point, prio, offset_ns, [0, 0, n, 0, 0, if data { n } else { 0 }]);
    }

    /// Add bytes, packets, CE marks, CNPs, data packets and data CE marks (`c`) to priority
    /// `prio` at `point`.
    #[inline]
    pub(crate) fn add_counts(&mut self, point: u16, prio: u8, offset_ns: i64, c: Counts) {
        let base = self.base_ns;
        let ps = match self.points.get_mut(usize::from(point)) {
            Some(Some(ps)) => ps,
            _ => match self.point(point) {
                Some(ps) => ps,
                None => return,
            },
        };
        let off = offset_ns.max(0) as u64;
        // `& 7` keeps the index inside the eight priorities: no bounds to fail.
        let p = usize::from(prio & 7);
        ps.used |= 1 << p;
        if off.wrapping_sub(ps.fine_start) >= base {
            let fi = off / base;
            if fi < ps.fine_idx {
                ps.put(off, p, &c);
                return;
            }
            ps.close_fine();
            ps.fine_idx = fi;
            ps.fine_start = fi.saturating_mul(base);
        }
        let f = &mut ps.fine[p];
        for (x, y) in f.iter_mut().zip(c) {
            *x = x.wrapping_add(y);
        }
    }

    /// A paused interval [start, end) (ns after the capture start) at `point`: PFC on
    /// priority `prio`, or 802.3x PAUSE (the whole link) for `None`.
    pub fn add_pause(&mut self, point: u16, prio: Option<u8>, start_ns: i64, end_ns: i64) {
        let Some(ps) = self.point(point) else { return };
        ps.add_pause(prio, start_ns.max(0) as u64, end_ns.max(0) as u64);
    }

    /// The `--bin` width.
    pub fn base_ns(&self) -> u64 {
        self.base_ns
    }

    /// The series as the report gives them: every charted point with traffic or pauses,
    /// the priorities that carried RoCE or were paused.
    pub fn report(&self) -> FabricReport {
        let base = self.base_ns;
        let points = self
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_ref().map(|p| (i, p)))
            .map(|(i, ps)| {
                let mut ps = (**ps).clone();
                ps.close_fine();
                let n = ps.len;
                let priorities = (0..8u8)
                    .filter(|p| ps.used & (1 << p) != 0)
                    .map(|p| {
                        let col = |f: fn(&Cell) -> u64| -> Vec<u64> {
                            ps.bins.get(usize::from(p)).map_or_else(Vec::new, |v| v.iter().map(f).collect())
                        };
                        let pk = ps.peaks.get(usize::from(p)).copied().unwrap_or_default();
                        PrioritySeries {
                            priority: p,
                            bytes: col(|c| c.bytes),
                            packets: col(|c| c.packets),
                            ce: col(|c| c.ce),
                            cnps: col(|c| c.cnps),
                            pause_ns: col(|c| c.pause_ns),
                            data_packets: col(|c| c.data),
                            data_ce: col(|c| c.data_ce),
                            peak: FabricPeak {
                                gbps: pk.bytes.1 as f64 * 8.0 / base as f64,
                                offset_ns: pk.bytes.0.saturating_mul(base),
                                ce: pk.ce.1,
                                ce_packets: pk.ce.2,
                                ce_offset_ns: pk.ce.0.saturating_mul(base),
                                cnps: pk.cnps.1,
                                cnps_offset_ns: pk.cnps.0.saturating_mul(base),
                            },
                        }
                    })
                    .collect();
                let mut link = ps.link_pause.clone();
                if link.iter().any(|x| *x > 0) {
                    link.resize(n.max(link.len()), 0);
                } else {
                    link.clear();
                }
                PointSeriesReport {
                    point: u16::try_from(i).unwrap_or(u16::MAX),
                    bin_ns: ps.width_ns,
                    priorities,
                    link_pause_ns: link,
                }
            })
            .collect();
        FabricReport { base_ns: base, points, points_uncharted: self.points_uncharted }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(offset_ns: i64, prio: u8, bytes: u64, ce: bool) -> Sample {
        Sample { point: 0, prio, offset_ns, bytes, packets: 1, ce, cnp: false, data: true }
    }

    #[test]
    fn a_microburst_keeps_its_resolution_in_a_long_series() {
        let mut f = Fabric::new(10_000);
        // A steady 1 kB every 100 µs for 1 s on priority 3 ...
        let mut frames: Vec<Sample> = (0..10_000).map(|i| frame(i * 100_000, 3, 1000, false)).collect();
        // ... and a 10 µs burst of 20 kB, half CE-marked, at 500 ms.
        frames.extend((0..20).map(|k| frame(500_000_000 + 1_000 + k * 400, 3, 1000, k % 2 == 0)));
        frames.sort_by_key(|s| s.offset_ns);
        for s in frames {
            f.add(s);
        }
        let r = f.report();
        let p = &r.points[0];
        // 1 s in at most 256 bins: 10 µs doubled to 5.12 ms (196 bins).
        assert_eq!(p.bin_ns, 5_120_000);
        assert!(p.priorities[0].bytes.len() <= MAX_BINS);
        let s = &p.priorities[0];
        assert_eq!(s.priority, 3);
        assert_eq!(s.bytes.iter().sum::<u64>(), 10_020_000);
        assert_eq!(s.ce.iter().sum::<u64>(), 10);
        // At 10 µs the burst's bin holds its 20 kB and the steady packet at 500 ms: 16.8
        // Gb/s, where the coarse series peaks under 0.2 Gb/s.
        assert_eq!(s.peak.offset_ns, 500_000_000);
        assert!((s.peak.gbps - 21_000.0 * 8.0 / 10_000.0).abs() < 1e-9, "{}", s.peak.gbps);
        assert_eq!((s.peak.ce, s.peak.ce_packets, s.peak.ce_offset_ns), (10, 21, 500_000_000));
        let coarse_peak = s.bytes.iter().max().copied().unwrap_or(0) as f64 * 8.0 / p.bin_ns as f64;
        assert!(coarse_peak < 0.2, "{coarse_peak}");
    }

    #[test]
    fn a_frame_older_than_the_fine_bin_counts_in_the_series_only() {
        let mut f = Fabric::new(10_000);
        f.add(frame(100_000, 0, 500, false));
        f.add(frame(5_000, 0, 9_000, false)); // late, out of order
        let r = f.report();
        let s = &r.points[0].priorities[0];
        assert_eq!(s.bytes.iter().sum::<u64>(), 9_500);
        assert_eq!((s.peak.offset_ns, s.peak.gbps), (100_000, 0.4));
    }

    #[test]
    fn pauses_spread_over_bins_and_link_pause_is_its_own_series() {
        let mut f = Fabric::new(100_000);
        f.add(frame(0, 3, 100, false));
        // 250 µs paused from 50 µs: 50 + 100 + 100 µs over bins 0..3.
        f.add_pause(0, Some(3), 50_000, 300_000);
        f.add_pause(0, None, 0, 150_000);
        let r = f.report();
        let p = &r.points[0];
        assert_eq!(p.priorities[0].pause_ns, vec![50_000, 100_000, 100_000]);
        assert_eq!(p.link_pause_ns, vec![100_000, 50_000, 0]);
        // A paused priority with no traffic is charted too.
        f.add_pause(0, Some(5), 0, 10);
        assert_eq!(
            f.report().points[0].priorities.iter().map(|s| s.priority).collect::<Vec<_>>(),
            vec![3, 5]
        );
    }

    proptest::proptest! {
        /// Any frames and pauses, in any order: no panic, every byte, packet, CE mark and CNP
        /// is in the series, paused time is kept, and the series stay within their bins.
        #[test]
        fn the_series_keep_every_figure(
            base in 1_000u64..20_000_000,
            frames in proptest::collection::vec((-1_000_000i64..5_000_000_000, 0u8..8, 0u64..10_000, proptest::bool::ANY, proptest::bool::ANY, proptest::bool::ANY), 0..200),
            pauses in proptest::collection::vec((0i64..5_000_000_000, 0i64..1_000_000, proptest::option::of(0u8..8)), 0..20),
        ) {
            let mut f = Fabric::new(base);
            let mut want = [0u64; 6];
            for (off, prio, bytes, ce, cnp, data) in &frames {
                f.add(Sample { point: 0, prio: *prio, offset_ns: *off, bytes: *bytes, packets: 1, ce: *ce, cnp: *cnp, data: *data });
                want[0] += bytes;
                want[1] += 1;
                want[2] += u64::from(*ce);
                want[3] += u64::from(*cnp);
                want[4] += u64::from(*data);
                want[5] += u64::from(*data && *ce);
            }
            let mut paused = (0u64, 0u64);
            for (s, len, prio) in &pauses {
                f.add_pause(0, *prio, *s, s + len);
                if prio.is_some() { paused.0 += *len as u64 } else { paused.1 += *len as u64 }
            }
            let r = f.report();
            let mut got = [0u64; 6];
            let mut got_paused = (0u64, 0u64);
            for p in &r.points {
                proptest::prop_assert!(p.link_pause_ns.len() <= MAX_BINS);
                got_paused.1 += p.link_pause_ns.iter().sum::<u64>();
                for s in &p.priorities {
                    proptest::prop_assert!(s.bytes.len() <= MAX_BINS);
                    got[0] += s.bytes.iter().sum::<u64>();
                    got[1] += s.packets.iter().sum::<u64>();
                    got[2] += s.ce.iter().sum::<u64>();
                    got[3] += s.cnps.iter().sum::<u64>();
                    got[4] += s.data_packets.iter().sum::<u64>();
                    got[5] += s.data_ce.iter().sum::<u64>();
                    proptest::prop_assert_eq!(s.data_packets.len(), s.packets.len());
                    got_paused.0 += s.pause_ns.iter().sum::<u64>();
                }
            }
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(got_paused, paused);
        }
    }

    #[test]
    fn points_past_the_cap_are_counted_not_charted() {
        let mut f = Fabric::new(1_000);
        for point in 0..70u16 {
            f.add(Sample { point, ..frame(0, 0, 1, false) });
        }
        let r = f.report();
        assert_eq!(r.points.len(), MAX_POINTS);
        assert_eq!(r.points_uncharted, 6);
    }

    #[test]
    fn cnps_peak_at_their_own_priority() {
        let mut f = Fabric::new(10_000);
        for k in 0..5 {
            f.add(Sample { cnp: true, ..frame(1_000_000 + k * 1_000, 6, 66, false) });
        }
        f.add(Sample { cnp: true, ..frame(2_000_000, 6, 66, false) });
        let r = f.report();
        let s = &r.points[0].priorities[0];
        assert_eq!((s.priority, s.peak.cnps, s.peak.cnps_offset_ns), (6, 5, 1_000_000));
        assert_eq!(s.cnps.iter().sum::<u64>(), 6);
    }
}
