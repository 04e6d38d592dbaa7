//! Constant-memory statistics: latency summaries with a log-scale histogram, and throughput
//! bins that widen as the capture grows (so memory depends on flows, not on duration).

use serde::Serialize;

/// Histogram buckets: bucket k holds values in [2^(k/4), 2^((k+1)/4)) nanoseconds.
const BUCKETS: usize = 160;

/// Latency figures in nanoseconds.
#[derive(Clone, Debug)]
pub struct Latency {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    /// Allocated on the first sample: most flows never record most latencies.
    hist: Option<Box<[u32; BUCKETS]>>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency { count: 0, sum: 0, min: u64::MAX, max: 0, hist: None }
    }
}

fn bucket(ns: u64) -> usize {
    if ns == 0 {
        return 0;
    }
    let l = 63 - ns.leading_zeros() as usize; // floor(log2)
                                              // Quarter-octaves from the two bits below the leading one.
    let frac = if l >= 2 { ((ns >> (l - 2)) & 3) as usize } else { (ns << (2 - l)) as usize & 3 };
    (l * 4 + frac).min(BUCKETS - 1)
}

fn bucket_floor(k: usize) -> u64 {
    let l = k / 4;
    let frac = (k % 4) as u64;
    if l >= 2 {
        (1u64 << l) + (frac << (l - 2))
    } else {
        1u64 << l
    }
}

impl Latency {
    /// Add a sample (negative values are clamped to zero).
    pub fn add(&mut self, ns: i64) {
        let v = ns.max(0) as u64;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let hist = self.hist.get_or_insert_with(|| Box::new([0; BUCKETS]));
        if let Some(h) = hist.get_mut(bucket(v)) {
            *h = h.saturating_add(1);
        }
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1), accurate to a quarter octave (about 19%).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let target = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut acc = 0u64;
        for (k, n) in self.hist.iter().flat_map(|h| h.iter()).enumerate() {
            acc += u64::from(*n);
            if acc >= target {
                return Some(bucket_floor(k).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The summary for reports, `None` when empty.
    pub fn summary(&self) -> Option<LatencySummary> {
        (self.count > 0).then(|| LatencySummary {
            count: self.count,
            min_ns: self.min,
            mean_ns: (self.sum / u128::from(self.count)) as u64,
            p50_ns: self.quantile(0.5).unwrap_or(0),
            p99_ns: self.quantile(0.99).unwrap_or(0),
            max_ns: self.max,
        })
    }
}

/// A latency summary in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: u64,
    /// Median (quarter-octave resolution).
    pub p50_ns: u64,
    /// 99th percentile (quarter-octave resolution).
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// Most bins a flow keeps; past that, adjacent bins merge and the width doubles.
pub const MAX_BINS: usize = 64;

/// Wire bytes, packets, CE-marked packets and retransmitted packets per fixed-width time bin since the capture
/// start (what the throughput and CE-rate charts draw). The current bin is kept inline, so
/// the per-packet update touches no heap memory.
#[derive(Clone, Debug)]
pub struct Bins {
    width_ns: u64,
    /// Per bin: [bytes, packets, CE packets, resent packets].
    bins: Vec<[u64; 4]>,
    cur_idx: u64,
    cur: [u64; 4],
    /// Offsets covered by the current bin: [cur_lo, cur_hi).
    cur_lo: u64,
    cur_hi: u64,
}

/// Index of each figure in a bin.
const BYTES: usize = 0;
const PACKETS: usize = 1;
const CE: usize = 2;
const RESENT: usize = 3;

impl Bins {
    /// Bins of `width_ns` (at least 1 µs).
    pub fn new(width_ns: u64) -> Self {
        let w = width_ns.max(1000);
        Bins { width_ns: w, bins: Vec::new(), cur_idx: 0, cur: [0; 4], cur_lo: 0, cur_hi: w }
    }

    /// Add a packet of `bytes` at `offset_ns` after the capture start, `ce` if it carried
    /// ECN Congestion Experienced.
    pub fn add(&mut self, offset_ns: i64, bytes: u64, ce: bool) {
        let off = offset_ns.max(0) as u64;
        if off < self.cur_lo || off >= self.cur_hi {
            self.spill();
            let mut idx = off / self.width_ns;
            while idx as usize >= MAX_BINS {
                self.merge();
                idx = off / self.width_ns;
            }
            self.cur_idx = idx;
            self.cur_lo = idx * self.width_ns;
            self.cur_hi = self.cur_lo + self.width_ns;
        }
        self.cur[BYTES] += bytes;
        self.cur[PACKETS] += 1;
        self.cur[CE] += u64::from(ce);
    }

    /// Move the current bin into the list.
    fn spill(&mut self) {
        if self.cur[PACKETS] == 0 {
            return;
        }
        let i = self.cur_idx as usize;
        if self.bins.len() <= i {
            self.bins.resize(i + 1, [0; 4]);
        }
        if let Some(b) = self.bins.get_mut(i) {
            for (x, c) in b.iter_mut().zip(self.cur) {
                *x += c;
            }
        }
        self.cur = [0; 4];
    }

    fn merge(&mut self) {
        self.width_ns *= 2;
        let merged: Vec<[u64; 4]> = self
            .bins
            .chunks(2)
            .map(|c| c.iter().fold([0; 4], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]))
            .collect();
        self.bins = merged;
        self.cur_idx /= 2;
    }

    /// Bin width.
    pub fn width_ns(&self) -> u64 {
        self.width_ns
    }

    /// One figure per bin, the current bin included.
    fn series(&self, k: usize) -> Vec<u64> {
        let mut v: Vec<u64> = self.bins.iter().map(|b| b[k]).collect();
        let i = self.cur_idx as usize;
        if self.cur[PACKETS] > 0 {
            if v.len() <= i {
                v.resize(i + 1, 0);
            }
            if let Some(b) = v.get_mut(i) {
                *b += self.cur[k];
            }
        }
        v
    }

    /// Wire bytes per bin.
    pub fn bins(&self) -> Vec<u64> {
        self.series(BYTES)
    }

    /// Packets per bin.
    pub fn packets(&self) -> Vec<u64> {
        self.series(PACKETS)
    }

    /// CE-marked packets per bin.
    pub fn ce(&self) -> Vec<u64> {
        self.series(CE)
    }

    /// Mark the packet just added as a retransmission (it is in the current bin).
    pub fn mark_resent(&mut self) {
        self.cur[RESENT] += 1;
    }

    /// Retransmitted packets per bin.
    pub fn resent(&self) -> Vec<u64> {
        self.series(RESENT)
    }

    /// The busiest bin as Gb/s.
    pub fn peak_gbps(&self) -> f64 {
        let max = self.bins().into_iter().max().unwrap_or(0);
        max as f64 * 8.0 / self.width_ns as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_close() {
        let mut l = Latency::default();
        for v in 1..=1000 {
            l.add(v * 1000);
        }
        let s = l.summary().unwrap();
        assert_eq!((s.count, s.min_ns, s.max_ns, s.mean_ns), (1000, 1000, 1_000_000, 500_500));
        assert!((400_000..=520_000).contains(&s.p50_ns), "{}", s.p50_ns);
        assert!((800_000..=1_000_000).contains(&s.p99_ns), "{}", s.p99_ns);
        assert!(Latency::default().summary().is_none());
    }

    #[test]
    fn bins_widen_without_losing_bytes() {
        let mut b = Bins::new(1_000_000);
        for ms in 0..1000 {
            b.add(ms * 1_000_000, 100, ms % 4 == 0);
            if ms == 999 {
                b.mark_resent();
            }
        }
        assert_eq!(b.resent().iter().sum::<u64>(), 1);
        assert_eq!(b.resent().last(), Some(&1));
        assert_eq!(b.packets().iter().sum::<u64>(), 1000);
        assert_eq!(b.ce().iter().sum::<u64>(), 250);
        assert_eq!(b.ce().len(), b.bins().len());
        // 16 ms bins hold 16 packets, 4 of them CE.
        assert_eq!(b.ce().first(), Some(&4));
        assert!(b.bins().len() <= MAX_BINS);
        assert_eq!(b.bins().iter().sum::<u64>(), 100_000);
        assert_eq!(b.width_ns(), 16_000_000);
        assert!((b.peak_gbps() - 1600.0 * 8.0 / 16e6).abs() < 1e-9);
    }
}
