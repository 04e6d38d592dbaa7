//! Constant-memory statistics: latency summaries with a log-scale histogram, throughput
//! bins that widen as the capture grows (so memory depends on flows, not on duration), the
//! byte count of a frame, and mean and peak rates figured on one basis.

use rocescope_decoder::{Link, Packet};
pub use rocescope_model::flows::{Burst, LatencySummary};

/// Histogram buckets (fewer than 256: a bucket index fits a byte): bucket k holds values in [2^(k/4), 2^((k+1)/4)) nanoseconds.
const BUCKETS: usize = 160;

/// Samples whose buckets are kept in line before a histogram is allocated: 14, so that
/// with its count they take 15 bytes and [`Hist`] 16 (24 with 16 in line).
const INLINE: usize = 14;

/// The buckets of a latency's samples: in line for the first [`INLINE`] (most flows of a
/// large capture record a handful: 640 bytes of histogram each would be most of their
/// memory), then a histogram. Quantiles read the same from either.
#[derive(Clone, Debug)]
enum Hist {
    /// `n` samples (the count), their buckets.
    Inline {
        n: u8,
        buckets: [u8; INLINE],
    },
    Full(Box<Full>),
}

/// A latency past its in-line samples: the count and the sum's high half live here with
/// the histogram, so a latency of a few samples holds neither (issue 39: 40 bytes where
/// 56 were, and a flow's ACK latency a 48-byte allocation of its own).
#[derive(Clone, Debug)]
struct Full {
    count: u64,
    /// The high half of the sum (its low half is [`Latency::sum`]).
    sum_hi: u64,
    buckets: [u32; BUCKETS],
}

impl Full {
    fn new(count: u64) -> Box<Full> {
        Box::new(Full { count, sum_hi: 0, buckets: [0; BUCKETS] })
    }
}

/// Latency figures in nanoseconds: 40 bytes. The count is the in-line buckets' `n` until
/// a histogram is allocated, and the sum's high half is kept there; a sum that would carry
/// past 64 bits while the samples are in line allocates it early (quantiles read the same).
#[derive(Clone, Debug)]
pub struct Latency {
    /// The sum of the samples: its low half (the high half in [`Full`]).
    sum: u64,
    min: u64,
    max: u64,
    hist: Hist,
}

impl Latency {
    /// No samples.
    pub const EMPTY: Latency =
        Latency { sum: 0, min: u64::MAX, max: 0, hist: Hist::Inline { n: 0, buckets: [0; INLINE] } };
}

impl Default for Latency {
    fn default() -> Self {
        Latency::EMPTY
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
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let k = bucket(v);
        let (lo, carry) = self.sum.overflowing_add(v);
        self.sum = lo;
        if let Hist::Inline { n, buckets } = &mut self.hist {
            if usize::from(*n) < INLINE && !carry {
                if let Some(b) = buckets.get_mut(usize::from(*n)) {
                    *b = k as u8;
                }
                *n += 1;
                return;
            }
            // The in-line buckets are full, or the sum carries: the histogram, with them.
            let mut h = Full::new(u64::from(*n));
            for b in buckets.iter().take(usize::from(*n)) {
                if let Some(c) = h.buckets.get_mut(usize::from(*b)) {
                    *c += 1;
                }
            }
            self.hist = Hist::Full(h);
        }
        if let Hist::Full(h) = &mut self.hist {
            h.count += 1;
            h.sum_hi = h.sum_hi.wrapping_add(u64::from(carry));
            if let Some(c) = h.buckets.get_mut(k) {
                *c = c.saturating_add(1);
            }
        }
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        match &self.hist {
            Hist::Inline { n, .. } => u64::from(*n),
            Hist::Full(h) => h.count,
        }
    }

    /// The sum of the samples.
    fn sum(&self) -> u128 {
        let hi = match &self.hist {
            Hist::Inline { .. } => 0,
            Hist::Full(h) => h.sum_hi,
        };
        u128::from(hi) << 64 | u128::from(self.sum)
    }

    /// The `q` quantile (0..=1), accurate to a quarter octave (about 19%).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let target = ((count as f64) * q).ceil().max(1.0) as u64;
        match &self.hist {
            Hist::Inline { n, buckets } => {
                let mut b: Vec<u8> = buckets.iter().take(usize::from(*n)).copied().collect();
                b.sort_unstable();
                let at = usize::try_from(target - 1).unwrap_or(usize::MAX);
                Some(b.get(at).map_or(self.max, |&k| bucket_floor(usize::from(k)).clamp(self.min, self.max)))
            }
            Hist::Full(h) => {
                let mut acc = 0u64;
                for (k, n) in h.buckets.iter().enumerate() {
                    acc += u64::from(*n);
                    if acc >= target {
                        return Some(bucket_floor(k).clamp(self.min, self.max));
                    }
                }
                Some(self.max)
            }
        }
    }

    /// The summary for reports, `None` when empty.
    pub fn summary(&self) -> Option<LatencySummary> {
        let count = self.count();
        (count > 0).then(|| LatencySummary {
            count,
            min_ns: self.min,
            mean_ns: (self.sum() / u128::from(count)) as u64,
            p50_ns: self.quantile(0.5).unwrap_or(0),
            p99_ns: self.quantile(0.99).unwrap_or(0),
            max_ns: self.max,
        })
    }
}

/// Most bins a flow keeps; past that, adjacent bins merge and the width doubles.
pub const MAX_BINS: usize = 64;

/// Wire bytes, packets, CE-marked packets, retransmitted packets and CNPs received per
/// fixed-width time bin since the capture start (what the throughput, CE-rate and CNP-rate
/// charts draw). The bins start at the `--bin` width and widen (merging pairs) past
/// [`MAX_BINS`]; the busiest bins at the `--bin` width are kept however wide the series grows
/// ([`Bins::burst`]).
///
/// The bin being filled is kept inline at the `--bin` width, so the per-packet update
/// touches no heap memory; when a packet opens the next one, the last is folded into the
/// peaks and spilled into the series. A packet older than the bin being filled (merged
/// captures slightly out of order) goes straight into the series and not the peaks, so a
/// peak may be missed but is never overstated.
#[derive(Clone, Debug)]
pub struct Bins {
    width_ns: u64,
    /// Times the width doubled: the `--bin` width is `width_ns >> doublings`.
    doublings: u8,
    /// Per bin: [bytes, packets, CE packets, resent packets, CNPs received].
    /// Per bin from `first` on (a flow that starts late holds no empty bins before it).
    /// 32-bit figures until one needs more (`wide`: the `closed` module).
    bins: Closed,
    /// The closed bins hold 64-bit figures.
    wide: bool,
    /// Words of `bins` in use: kept here, in what was padding, so that closing a bin does
    /// not read the (cold) series to find its end (the `closed` module).
    used: closed::Used,
    /// The series index of `bins[0]`.
    first: u32,
    /// The bin being filled, by index at the `--bin` width.
    fine_idx: u64,
    fine: Fine,
    /// The busiest `--bin` bins, once the series can no longer tell them: `None` while
    /// every closed bin is one `--bin` bin, closed in order ([`Bins::appends`]), so the
    /// series itself holds them ([`Bins::derived_peaks`]). A flow of a few bins (most of a
    /// capture with many QPs) keeps 8 bytes here where the two peaks took 32 (issue 39);
    /// a flow whose series widens pays a 32-byte box.
    peaks: Option<Box<Peaks>>,
}

/// The busiest `--bin` bins of a flow ([`Bins::burst`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Peaks {
    /// The busiest `--bin` bin by bytes: (index, bytes).
    bytes: (u64, u64),
    /// The `--bin` bin with most CE marks: (index, CE packets, packets).
    ce: (u64, u32, u32),
}

impl Peaks {
    /// Bin `i` with figures `f` closed: the first bin of the most bytes, and of the most CE
    /// marks, wins.
    fn add(&mut self, i: u64, f: &[u64; FIGURES]) {
        if f[BYTES] > self.bytes.1 {
            self.bytes = (i, f[BYTES]);
        }
        let ce = u32::try_from(f[CE]).unwrap_or(u32::MAX);
        if ce > self.ce.1 {
            self.ce = (i, ce, u32::try_from(f[PACKETS]).unwrap_or(u32::MAX));
        }
    }
}

mod closed;
use closed::{Closed, FIGURES};

/// The `--bin` bin being filled: its bytes, and its other figures as 32-bit counts (one
/// flow's packets in one `--bin` bin; saturating), 24 bytes where five `u64`s took 40. The
/// series it spills into keeps 64-bit figures: its bins widen with the capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Fine {
    bytes: u64,
    counts: [u32; FIGURES - 1],
}

impl Fine {
    fn is_empty(&self) -> bool {
        *self == Fine::default()
    }

    /// Figure `k` ([`BYTES`], [`PACKETS`], ...).
    fn get(&self, k: usize) -> u64 {
        match k.checked_sub(1) {
            None => self.bytes,
            Some(i) => self.counts.get(i).map_or(0, |c| u64::from(*c)),
        }
    }

    fn add(&mut self, v: [u64; FIGURES]) {
        let [bytes, rest @ ..] = v;
        self.bytes = self.bytes.wrapping_add(bytes);
        for (c, x) in self.counts.iter_mut().zip(rest) {
            if x != 0 {
                // Most figures of most packets are 0 (no CE mark, no resend, no CNP).
                *c = c.saturating_add(u32::try_from(x).unwrap_or(u32::MAX));
            }
        }
    }

    /// One more of figure `k` (not the bytes).
    fn add_one(&mut self, k: usize) {
        if let Some(c) = k.checked_sub(1).and_then(|i| self.counts.get_mut(i)) {
            *c = c.saturating_add(1);
        }
    }

    fn to_array(self) -> [u64; FIGURES] {
        std::array::from_fn(|k| self.get(k))
    }
}
/// Index of each figure in a bin.
const BYTES: usize = 0;
const PACKETS: usize = 1;
const CE: usize = 2;
const RESENT: usize = 3;
const CNPS: usize = 4;

impl Bins {
    /// Bins of `width_ns` (at least 1 µs).
    pub fn new(width_ns: u64) -> Self {
        let w = width_ns.max(1000);
        Bins {
            width_ns: w,
            doublings: 0,
            bins: Closed::default(),
            wide: false,
            used: 0,
            first: 0,
            fine_idx: 0,
            fine: Fine::default(),
            peaks: None,
        }
    }

    /// The starting width (`--bin`): [`Bins::burst`]'s.
    pub fn base_ns(&self) -> u64 {
        self.width_ns >> self.doublings
    }

    /// Add a packet of `bytes` at `offset_ns` after the capture start, `ce` if it carried
    /// ECN Congestion Experienced.
    pub fn add(&mut self, offset_ns: i64, bytes: u64, ce: bool) {
        self.add_n(offset_ns, bytes, 1, ce);
    }

    /// Add `packets` packets of `bytes` wire bytes in all at `offset_ns` (a sampled packet
    /// stands for the rate's worth), all CE-marked when `ce`.
    pub fn add_n(&mut self, offset_ns: i64, bytes: u64, packets: u64, ce: bool) {
        let mut v = [0; FIGURES];
        v[BYTES] = bytes;
        v[PACKETS] = packets;
        v[CE] = if ce { packets } else { 0 };
        self.put(offset_ns, v);
    }

    /// `n` CE marks at `offset_ns` on packets already counted (a mirror's copy of a packet,
    /// marked between the two copies: crate::dedup).
    pub fn add_ce(&mut self, offset_ns: i64, n: u64) {
        let mut v = [0; FIGURES];
        v[CE] = n;
        self.put(offset_ns, v);
    }

    /// `n` CNPs received (by this data flow's sender) at `offset_ns`.
    pub fn add_cnps(&mut self, offset_ns: i64, n: u64) {
        let mut v = [0; FIGURES];
        v[CNPS] = n;
        self.put(offset_ns, v);
    }

    fn put(&mut self, offset_ns: i64, v: [u64; FIGURES]) {
        let off = offset_ns.max(0) as u64;
        let base = self.base_ns();
        if off.wrapping_sub(self.fine_idx.wrapping_mul(base)) >= base {
            let fi = off / base;
            if fi < self.fine_idx && !self.fine.is_empty() {
                // Older than the bin being filled: the series only (its bin no longer one
                // closed in order: the peaks kept apart from here on).
                self.keep_peaks();
                self.spill(fi, v);
                return;
            }
            self.close_fine();
            self.fine_idx = fi;
        }
        self.fine.add(v);
    }

    /// Fold the bin being filled into the peaks and the series, and empty it.
    fn close_fine(&mut self) {
        if self.fine.is_empty() {
            return;
        }
        let (i, f) = (self.fine_idx, self.fine.to_array());
        if !self.appends(i) {
            self.keep_peaks();
        }
        if let Some(p) = &mut self.peaks {
            p.add(i, &f);
        }
        self.spill(i, f);
        self.fine = Fine::default();
    }

    /// Closing `--bin` bin `i` appends it to the series as a bin of its own, after every bin
    /// held: the series stays one closed `--bin` bin per bin, in order.
    fn appends(&self, i: u64) -> bool {
        let held = u64::from(self.first) + Closed::len(self.used, self.wide) as u64;
        self.doublings == 0 && i < MAX_BINS as u64 && (self.used == 0 || i >= held)
    }

    /// The peaks kept apart from the series from now on (derived from it on the first call).
    fn keep_peaks(&mut self) {
        if self.peaks.is_none() {
            self.peaks = Some(Box::new(self.derived_peaks()));
        }
    }

    /// The peaks as the bins closed so far made them, read from the series while each of
    /// its bins is one `--bin` bin closed in order ([`Bins::peaks`]'s `None`): scanned in
    /// order, each bin as [`Peaks::add`] took it when it closed.
    fn derived_peaks(&self) -> Peaks {
        let mut p = Peaks::default();
        for j in 0..Closed::len(self.used, self.wide) {
            p.add(u64::from(self.first) + j as u64, &self.bins.get(self.used, j, self.wide));
        }
        p
    }

    /// Add `v` to the series bin holding `--bin` bin `fine_idx`, widening as needed.
    fn spill(&mut self, fine_idx: u64, v: [u64; FIGURES]) {
        let mut idx = fine_idx >> self.doublings;
        while idx as usize >= MAX_BINS {
            self.merge();
            idx = fine_idx >> self.doublings;
        }
        // Below MAX_BINS: fits the u32.
        let idx = idx as u32;
        if self.used == 0 {
            self.first = idx;
        } else if idx < self.first {
            // Before the first bin held (merged captures out of order): rare.
            let n = (self.first - idx) as usize;
            self.bins.insert_front(&mut self.used, n, self.wide);
            self.first = idx;
        }
        let i = (idx - self.first) as usize;
        // Exactly as many as needed while the series is short: a flow of a few packets
        // holds one or two bins, not the four a growing `Vec` starts with (most of a quiet
        // flow's series memory at 100k QPs, issue 13). Longer series grow as usual.
        if i == Closed::len(self.used, self.wide) {
            // The next bin, as a flow's bins close in order: written, not read.
            self.bins.push(&mut self.used, v, i < 8, &mut self.wide);
        } else {
            self.bins.grow_to(&mut self.used, i + 1, i < 8, self.wide);
            self.bins.add(&mut self.used, i, v, &mut self.wide);
        }
    }

    fn merge(&mut self) {
        self.width_ns *= 2;
        self.doublings = self.doublings.saturating_add(1);
        let first = self.first / 2;
        let (mut merged, mut used, mut wide) = (Closed::default(), 0, self.wide);
        for j in 0..Closed::len(self.used, self.wide) {
            let t = ((self.first as usize + j) / 2).saturating_sub(first as usize);
            merged.grow_to(&mut used, t + 1, false, wide);
            merged.add(&mut used, t, self.bins.get(self.used, j, self.wide), &mut wide);
        }
        (self.bins, self.used, self.wide) = (merged, used, wide);
        self.first = first;
    }

    /// Bin width (with the bin being filled spilled: it may widen the series).
    pub fn width_ns(&self) -> u64 {
        let mut d = self.doublings;
        if !self.fine.is_empty() {
            while d < 63 && (self.fine_idx >> d) as usize >= MAX_BINS {
                d += 1;
            }
        }
        self.width_ns << (d - self.doublings)
    }

    /// The series with the bin being filled spilled into it.
    fn settled(&self) -> Bins {
        let mut b = self.clone();
        b.close_fine();
        b
    }

    /// One figure per bin, the bin being filled included.
    fn series(&self, k: usize) -> Vec<u64> {
        let idx = (self.fine_idx >> self.doublings) as usize;
        if !self.fine.is_empty() && idx >= MAX_BINS {
            // Spilling it widens the series: settle a copy.
            return self.settled().series(k);
        }
        let first = if self.used == 0 { 0 } else { self.first as usize };
        // Sized once: grown as it was filled, each of a flow's series cost two or three
        // reallocations (a report writes seven series a flow, for 200,000 flows at 100,000 QPs).
        let len =
            (first + Closed::len(self.used, self.wide)).max(if self.fine.is_empty() { 0 } else { idx + 1 });
        let mut v: Vec<u64> = Vec::with_capacity(len);
        v.resize(first, 0);
        v.extend(self.bins.figure(self.used, k, self.wide));
        if !self.fine.is_empty() {
            if v.len() <= idx {
                v.resize(idx + 1, 0);
            }
            if let Some(b) = v.get_mut(idx) {
                *b += self.fine.get(k);
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

    /// Mark the packet just added as a retransmission (it is in the bin being filled).
    pub fn mark_resent(&mut self) {
        self.fine.add_one(RESENT);
    }

    /// Retransmitted packets per bin.
    pub fn resent(&self) -> Vec<u64> {
        self.series(RESENT)
    }

    /// CNPs received per bin.
    pub fn cnps(&self) -> Vec<u64> {
        self.series(CNPS)
    }

    /// The busiest bin as Gb/s over the bin's full width (reports use [`rates`], which
    /// also handles the capture's last, partial bin).
    pub fn peak_gbps(&self) -> f64 {
        let max = self.bins().into_iter().max().unwrap_or(0);
        max as f64 * 8.0 / self.width_ns() as f64
    }

    /// The busiest bins at the starting width (`--bin`), however wide the series grew (the
    /// bin being filled included).
    pub fn burst(&self) -> Burst {
        let p = self.peaks.as_deref().copied().unwrap_or_else(|| self.derived_peaks());
        let (mut bytes, mut ce) = (p.bytes, p.ce);
        let (i, f) = (self.fine_idx, self.fine.to_array());
        if f[BYTES] > bytes.1 {
            bytes = (i, f[BYTES]);
        }
        let fce = u32::try_from(f[CE]).unwrap_or(u32::MAX);
        if fce > ce.1 {
            ce = (i, fce, u32::try_from(f[PACKETS]).unwrap_or(u32::MAX));
        }
        let base = self.base_ns();
        Burst {
            bin_ns: base,
            peak_gbps: bytes.1 as f64 * 8.0 / base as f64,
            peak_offset_ns: bytes.0.saturating_mul(base),
            ce_peak: ce.1,
            ce_peak_packets: ce.2,
            ce_peak_offset_ns: ce.0.saturating_mul(base),
        }
    }
}

/// The bytes a frame took on the wire, for byte counts and rates: from the destination MAC to
/// the end of the IP packet as its header states it (RoCEv1: the GRH payload length), or the
/// capture record's length when that is larger (Ethernet padding of short frames, or a
/// capture that kept the FCS). Reference §1.1: "Use the IP total length / UDP length, not the
/// captured length" (Lumina restores `orig_len = ip.len + 14`), and §1.11 ("compute
/// throughput from original length"): some capture devices cut frames and write the cut
/// length as the original length too (INDEX.md: rdma-nccl2.pcap, 243-byte records of
/// 4170-byte frames), so the record alone would count a seventeenth of the bytes.
///
/// The FCS (4 bytes), preamble and inter-frame gap (20 bytes) are not counted: pcap records
/// normally exclude them, so whole frames count as recorded and the rule changes nothing for
/// captures that are not cut. A line-rate figure is therefore (len + 24) / len higher.
pub fn wire_len(p: &Packet<'_>, record_len: u32) -> u64 {
    let l2 = match p.link {
        Link::Ethernet(_) => 14,
        Link::Sll(_) => 16,
        Link::Sll2(_) => 20,
        Link::Raw => 0,
        Link::None => return u64::from(record_len),
    } + 4 * p.vlans.as_slice().len();
    let declared = match (&p.ip, p.roce.as_ref().and_then(|r| r.grh)) {
        (Some(ip), _) => l2 + ip.declared_len(),
        (None, Some(grh)) => l2 + 40 + usize::from(grh.paylen()),
        (None, None) => 0,
    };
    // A tunnelled frame counts as its inner frame: the record's length less the outer
    // headers (the mirror's or overlay's, not the traffic's).
    let record = u64::from(record_len).saturating_sub(p.inner_offset() as u64);
    (declared as u64).max(record)
}

/// Mean and peak rate of one or more bin series over the same windows, so that the peak is
/// never below the mean.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rate {
    /// Bytes over the windows from the first to the last one with packets, as Gb/s.
    pub mean_gbps: f64,
    /// The busiest of those windows, as Gb/s.
    pub peak_gbps: f64,
}

/// One series of throughput bins from the capture start, as [`Bins`] keeps them (or as a
/// report carries them).
#[derive(Clone, Copy, Debug)]
pub struct Series<'a> {
    /// Bin width.
    pub width_ns: u64,
    /// Wire bytes per bin.
    pub bytes: &'a [u64],
    /// Packets per bin.
    pub packets: &'a [u64],
}

impl Bins {
    /// Mean and peak of this series in a capture that lasted `capture_ns` (see [`rates`]).
    pub fn rate(&self, capture_ns: u64) -> Rate {
        let (bytes, packets) = (self.bins(), self.packets());
        rates(&[Series { width_ns: self.width_ns(), bytes: &bytes, packets: &packets }], capture_ns)
    }
}

/// The mean and peak of `series` together (the directions of a connection, or one flow) in
/// a capture that lasted `capture_ns` from the bins' origin (the capture start).
///
/// Windows are the bins at the widest width among the series (narrower bins fold into it
/// exactly: every width is the same start width doubled), from the first window with
/// packets to the last. The capture's final bin is cut short by the capture's end, so it
/// joins the bin before it into one window of one to two bin widths (a capture shorter than
/// a bin is one window, its whole length): no window is a sliver whose few packets would
/// make a spike. The mean is the bytes over the windows' total length and the peak the
/// busiest window's own rate, so peak ≥ mean (a maximum is at least the length-weighted
/// mean).
pub fn rates(series: &[Series<'_>], capture_ns: u64) -> Rate {
    let Some(width) = series.iter().map(|s| s.width_ns.max(1)).max() else { return Rate::default() };
    // The windows, sized once.
    let windows = series
        .iter()
        .map(|s| s.bytes.len().div_ceil((width / s.width_ns.max(1)).max(1) as usize))
        .max()
        .unwrap_or(0);
    let mut bytes: Vec<u64> = Vec::with_capacity(windows);
    let mut used: Vec<bool> = Vec::with_capacity(windows);
    for s in series {
        let fold = (width / s.width_ns.max(1)).max(1) as usize;
        for (i, (x, n)) in s.bytes.iter().zip(s.packets).enumerate() {
            if *n == 0 {
                continue;
            }
            let j = i / fold;
            if bytes.len() <= j {
                bytes.resize(j + 1, 0);
                used.resize(j + 1, false);
            }
            if let (Some(b), Some(u)) = (bytes.get_mut(j), used.get_mut(j)) {
                *b += x;
                *u = true;
            }
        }
    }
    let (Some(first), Some(last)) = (used.iter().position(|u| *u), used.iter().rposition(|u| *u)) else {
        return Rate::default();
    };
    // The bin holding the capture's end, and the window it closes (that bin and the one
    // before it).
    let end_bin = capture_ns / width;
    let merge_from = end_bin.saturating_sub(1) as usize;
    let tail_ns = capture_ns.saturating_sub(merge_from as u64 * width);
    let (mut total, mut len, mut peak) = (0u64, 0u64, 0.0f64);
    let mut tail_bytes = None;
    for (k, b) in bytes.iter().enumerate().take(last + 1).skip(first) {
        if k >= merge_from {
            *tail_bytes.get_or_insert(0) += b;
        } else {
            total += b;
            len += width;
            peak = peak.max(*b as f64 * 8.0 / width as f64);
        }
    }
    if let Some(b) = tail_bytes {
        total += b;
        len += tail_ns;
        if tail_ns > 0 {
            peak = peak.max(b as f64 * 8.0 / tail_ns as f64);
        }
    }
    if len == 0 {
        return Rate::default();
    }
    let mean = total as f64 * 8.0 / len as f64;
    // Exact arithmetic gives peak >= mean; `max` only absorbs floating-point rounding.
    Rate { mean_gbps: mean, peak_gbps: peak.max(mean) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_is_40_bytes_and_sums_past_64_bits() {
        assert_eq!(std::mem::size_of::<Latency>(), 40);
        let mut l = Latency::default();
        for _ in 0..4 {
            l.add(i64::MAX);
        }
        // 4 * (2^63 - 1) / 4, exactly: the sum carried into its high half, which the third
        // sample allocated though the samples would still fit in line.
        assert_eq!(l.summary().map(|s| (s.count, s.mean_ns)), Some((4, i64::MAX as u64)));
        assert!(matches!(l.hist, Hist::Full(_)));
    }

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
    fn in_line_samples_give_the_histograms_quantiles() {
        // The same samples through the in-line buckets and through a histogram (forced by
        // adding them to one that already spilled) give the same summary, at every count.
        let vals: Vec<i64> = (0..40).map(|i| (i * 7919 % 97) * 1_000 + 300).collect();
        for n in 1..=vals.len() {
            let mut inline = Latency::default();
            let mut full = Latency { hist: Hist::Full(Full::new(0)), ..Latency::default() };
            for v in &vals[..n] {
                inline.add(*v);
                full.add(*v);
            }
            assert_eq!(inline.summary(), full.summary(), "{n} samples");
            assert_eq!(matches!(inline.hist, Hist::Inline { .. }), n <= INLINE, "{n}");
        }
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

    use rocescope_decoder::build::{IbRepr, IpRepr, RoceV1Frame, RoceV2Frame};
    use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, VlanTag};

    fn write(payload: usize) -> IbRepr {
        let bth = BthRepr { opcode: Opcode::RC_WRITE_MIDDLE, dest_qp: 7, psn: 1, ..Default::default() };
        IbRepr { bth, payload: vec![0; payload], ..Default::default() }
    }

    #[test]
    fn wire_length_comes_from_the_ip_length_when_the_record_is_cut() {
        let opts = DecodeOptions::default();
        let v4 = IpRepr::V4 {
            src: [10, 0, 0, 1].into(),
            dst: [10, 0, 0, 2].into(),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            id: 0,
        };
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], v4, write(4096));
        let whole = f.build(opts.opcode);
        assert_eq!(whole.len(), 14 + 20 + 8 + 12 + 4096 + 4);
        // Cut to 128 bytes, the record saying 128 too (rdma-nccl2.pcap's device): the IP's.
        let cut = decode(LinkType::ETHERNET, &whole[..128], &opts);
        assert_eq!(wire_len(&cut, 128), whole.len() as u64);
        // Whole frames count as recorded; a longer record (padding, FCS kept) wins.
        let p = decode(LinkType::ETHERNET, &whole, &opts);
        assert_eq!(wire_len(&p, whole.len() as u32), whole.len() as u64);
        assert_eq!(wire_len(&p, whole.len() as u32 + 4), whole.len() as u64 + 4);
        // VLAN tags are part of the L2 header.
        f.vlans = vec![VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 100 }; 2];
        let tagged = f.build(opts.opcode);
        let cut = decode(LinkType::ETHERNET, &tagged[..100], &opts);
        assert_eq!(wire_len(&cut, 100), whole.len() as u64 + 8);
        // IPv6: 40 + the payload length.
        let v6 = IpRepr::V6 {
            src: "fd00::1".parse().unwrap(),
            dst: "fd00::2".parse().unwrap(),
            dscp: 26,
            ecn: Ecn::Ect0,
            hop_limit: 64,
            flow_label: 0,
        };
        let six =
            RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], v6, write(1024)).build(opts.opcode);
        let cut = decode(LinkType::ETHERNET, &six[..90], &opts);
        assert_eq!(wire_len(&cut, 90), six.len() as u64);
        // RoCEv1: 40 + the GRH payload length.
        let v1 = RoceV1Frame {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            vlans: Vec::new(),
            sgid: "fe80::1".parse().unwrap(),
            dgid: "fe80::2".parse().unwrap(),
            tclass: 0x68,
            hop_limit: 1,
            ib: write(2048),
        }
        .build(opts.opcode);
        let cut = decode(LinkType::ETHERNET, &v1[..80], &opts);
        assert_eq!(wire_len(&cut, 80), v1.len() as u64);
        // Nothing decoded: the record's length.
        let none = decode(LinkType(9999), &whole, &opts);
        assert_eq!(wire_len(&none, 60), 60);
    }

    #[test]
    fn a_flows_burst_stays_at_the_bin_width_as_its_series_widens() {
        let mut b = Bins::new(10_000);
        // 1 kB every ms for 1 s: the series widens to 20.48 ms bins.
        for i in 0..1000 {
            b.add(i * 1_000_000, 1000, false);
            if i == 700 {
                // 9 more packets in the same 10 µs, 3 CE-marked.
                for k in 0..9 {
                    b.add(i * 1_000_000 + 100 + k * 10, 1000, k < 3);
                }
                b.add_cnps(i * 1_000_000 + 9_000, 2);
            }
        }
        assert_eq!(b.width_ns(), 20_480_000);
        assert_eq!(b.base_ns(), 10_000);
        let burst = b.burst();
        assert_eq!(burst.bin_ns, 10_000);
        assert_eq!(burst.peak_offset_ns, 700_000_000);
        assert!((burst.peak_gbps - 10_000.0 * 8.0 / 10_000.0).abs() < 1e-9);
        assert_eq!((burst.ce_peak, burst.ce_peak_packets, burst.ce_peak_offset_ns), (3, 10, 700_000_000));
        assert_eq!(b.cnps().iter().sum::<u64>(), 2);
        assert_eq!(b.cnps().len(), b.bins().len());
        assert_eq!(b.packets().iter().sum::<u64>(), 1009);
        // No CE at all: the CE peak is empty.
        let mut q = Bins::new(1_000_000);
        q.add(5, 10, false);
        assert_eq!((q.burst().ce_peak, q.burst().ce_peak_offset_ns), (0, 0));
    }

    #[test]
    fn a_late_flow_holds_only_its_own_bins_and_its_series_is_exact() {
        // Offsets from a fixed pseudo-random walk, starting late and spanning many widths.
        let mut b = Bins::new(1_000);
        let mut offs = Vec::new();
        let mut t: i64 = 5_000_123;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += (x % 40_000) as i64;
            offs.push(t);
        }
        // A few out of order, before the flow's first bin too.
        offs.insert(3000, offs[10] - 4_000_000);
        offs.insert(4000, offs[2500]);
        for (i, o) in offs.iter().enumerate() {
            b.add(*o, 100 + i as u64, i % 3 == 0);
        }
        let w = b.width_ns();
        let bytes = b.bins();
        let mut want = vec![0u64; bytes.len()];
        for (i, o) in offs.iter().enumerate() {
            want[(*o as u64 / w) as usize] += 100 + i as u64;
        }
        assert_eq!(bytes, want);
        assert!(bytes.len() <= MAX_BINS);
        assert_eq!(b.packets().iter().sum::<u64>(), offs.len() as u64);
        // Held: from the first bin with a packet, not from the capture start.
        let settled = b.settled();
        assert_eq!(settled.first as usize, bytes.iter().position(|x| *x > 0).unwrap());
        assert_eq!(Closed::len(settled.used, settled.wide) + settled.first as usize, bytes.len());
    }

    proptest::proptest! {
        /// Whatever the order and spacing of packets and CNPs: every figure is kept, the
        /// series stays within its bins, and the busiest `--bin` bin is never above what a
        /// series bin (at least as wide) holds nor at a bin with no packet.
        #[test]
        fn bins_keep_every_figure(
            base in 1_000u64..50_000_000,
            ops in proptest::collection::vec((-1_000_000i64..10_000_000_000, 0u64..100_000, proptest::bool::ANY, 0u8..4), 1..300),
        ) {
            let mut b = Bins::new(base);
            let (mut bytes, mut packets, mut ce, mut cnps) = (0u64, 0u64, 0u64, 0u64);
            for (off, n, marked, kind) in &ops {
                if *kind == 0 {
                    b.add_cnps(*off, 1);
                    cnps += 1;
                } else {
                    b.add(*off, *n, *marked);
                    bytes += n;
                    packets += 1;
                    ce += u64::from(*marked);
                }
            }
            let sum = |v: Vec<u64>| v.iter().sum::<u64>();
            proptest::prop_assert_eq!(sum(b.bins()), bytes);
            proptest::prop_assert_eq!(sum(b.packets()), packets);
            proptest::prop_assert_eq!(sum(b.ce()), ce);
            proptest::prop_assert_eq!(sum(b.cnps()), cnps);
            proptest::prop_assert!(b.bins().len() <= MAX_BINS);
            let burst = b.burst();
            proptest::prop_assert_eq!(burst.bin_ns, b.base_ns());
            let peak_bytes = (burst.peak_gbps * burst.bin_ns as f64 / 8.0).round() as u64;
            let widest = b.bins().into_iter().max().unwrap_or(0);
            proptest::prop_assert!(peak_bytes <= widest, "{} > {}", peak_bytes, widest);
            proptest::prop_assert!(u64::from(burst.ce_peak) <= ce);
            proptest::prop_assert!(burst.ce_peak <= burst.ce_peak_packets);
        }
    }

    /// The peaks as they were kept before issue 39 made them lazy: updated at every close of
    /// the bin being filled, in the order bins close; a packet older than that bin skips them.
    struct EagerPeaks {
        fine_idx: u64,
        fine: [u64; 3],
        peaks: Peaks,
    }

    impl EagerPeaks {
        fn put(&mut self, off: i64, base: u64, v: [u64; 3]) {
            let fi = off.max(0) as u64 / base;
            if fi != self.fine_idx {
                if fi < self.fine_idx && self.fine != [0; 3] {
                    return;
                }
                self.close();
                self.fine_idx = fi;
            }
            for (a, b) in self.fine.iter_mut().zip(v) {
                *a += b;
            }
        }

        fn close(&mut self) {
            let [bytes, packets, ce] = self.fine;
            self.peaks.add(self.fine_idx, &[bytes, packets, ce, 0, 0]);
            self.fine = [0; 3];
        }
    }

    proptest::proptest! {
        /// The busiest bins read from the series while it can tell them, and kept apart once
        /// it cannot (a packet out of order, a series that widens), are the bins the eager
        /// rule picked: the same index and figures, the first of equals.
        #[test]
        fn lazy_peaks_are_the_eager_peaks(
            base in 1_000u64..5_000_000,
            ops in proptest::collection::vec((0i64..400_000_000, 0u64..4, proptest::bool::ANY, 0u8..8), 1..200),
        ) {
            let mut b = Bins::new(base);
            let mut m = EagerPeaks { fine_idx: 0, fine: [0; 3], peaks: Peaks::default() };
            let mut t = 0i64;
            for (step, n, marked, back) in &ops {
                // Mostly forward in time, sometimes back (merged captures).
                t = if *back == 0 { (t - step / 4).max(0) } else { t + step / 64 };
                let bytes = n * 100;
                b.add(t, bytes, *marked);
                m.put(t, b.base_ns(), [bytes, 1, u64::from(*marked)]);
            }
            m.close();
            let burst = b.burst();
            let base = b.base_ns();
            proptest::prop_assert_eq!(burst.peak_offset_ns, m.peaks.bytes.0 * base);
            proptest::prop_assert_eq!((burst.peak_gbps * base as f64 / 8.0).round() as u64, m.peaks.bytes.1);
            proptest::prop_assert_eq!((burst.ce_peak_offset_ns, burst.ce_peak, burst.ce_peak_packets), (m.peaks.ce.0 * base, m.peaks.ce.1, m.peaks.ce.2));
        }
    }

    #[test]
    fn rates_share_their_windows() {
        // 10 ms bins; a 25 ms capture: windows [0, 10) and [10, 25) ms.
        let mut b = Bins::new(10_000_000);
        b.add(1_000_000, 1_000_000, false); // 1 MB in the first bin
        b.add(12_000_000, 500_000, false);
        b.add(21_000_000, 500_000, false); // the final, partial bin joins the one before
        let r = b.rate(25_000_000);
        assert!((r.mean_gbps - 2_000_000.0 * 8.0 / 25e6).abs() < 1e-12);
        assert!((r.peak_gbps - 1_000_000.0 * 8.0 / 10e6).abs() < 1e-12);
        // A burst in a short capture: one window, its whole length, peak = mean.
        let mut s = Bins::new(10_000_000);
        s.add(0, 4000, false);
        s.add(50_000, 4000, false);
        let r = s.rate(100_000);
        assert_eq!(r.mean_gbps, r.peak_gbps);
        assert!((r.mean_gbps - 8000.0 * 8.0 / 100_000.0).abs() < 1e-12);
        // A flow in the middle of a long capture: only the bins it spans, gaps included.
        let mut m = Bins::new(10_000_000);
        m.add(30_000_000, 100, false);
        m.add(55_000_000, 300, false);
        let r = m.rate(200_000_000);
        assert!((r.mean_gbps - 400.0 * 8.0 / 30e6).abs() < 1e-12);
        assert!((r.peak_gbps - 300.0 * 8.0 / 10e6).abs() < 1e-12);
        // Two directions of different widths fold onto the wider one.
        let mut wide = Bins::new(1_000_000);
        wide.add(100_000_000, 1000, false); // widens to 2 ms bins
        assert_eq!(wide.width_ns(), 2_000_000);
        let mut narrow = Bins::new(1_000_000);
        narrow.add(1_500_000, 1000, false);
        let (wb, wp, nb, np) = (wide.bins(), wide.packets(), narrow.bins(), narrow.packets());
        let both = rates(
            &[
                Series { width_ns: wide.width_ns(), bytes: &wb, packets: &wp },
                Series { width_ns: narrow.width_ns(), bytes: &nb, packets: &np },
            ],
            101_000_000,
        );
        // Windows [0, 2 ms) .. [98, 101 ms): 49 full 2 ms windows and the 3 ms tail.
        assert!((both.mean_gbps - 2000.0 * 8.0 / 101e6).abs() < 1e-12);
        assert!((both.peak_gbps - 1000.0 * 8.0 / 2e6).abs() < 1e-12);
        assert_eq!(rates(&[], 5).peak_gbps, 0.0);
        assert_eq!(Bins::new(1000).rate(0), Rate::default());
    }
}
