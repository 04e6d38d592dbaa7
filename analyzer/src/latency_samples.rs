//! The ACK and READ latency samples of each capture point and priority, pooled over its
//! flows: the evidence `rocescope compare` tests a latency change on (docs/verdicts.md
//! "Change verdicts"). A flow's own [`crate::stats::Latency`] keeps a quarter-octave
//! histogram, enough to describe it but too coarse to tell a shift from noise: two captures
//! of the same workload gave medians a bucket apart (49.2 µs and 98.3 µs, "doubled").
//!
//! Per (capture point, priority, kind) a pool keeps the first [`EXACT_CAP`] samples exactly,
//! each with the time of the response that ended it; past that, every sample (the exact ones
//! too) goes into a histogram per time block: [`BLOCKS`] blocks from the capture's start,
//! their width doubled (neighbours merged) as the capture grows, each a log histogram of
//! [`BUCKETS`] buckets, 32 to an octave ([`bucket`]). Memory is bounded per pool, not per
//! flow: at most [`EXACT_CAP`] × 16 bytes, then [`BLOCKS`] × [`BUCKETS`] × 4 bytes
//! ([`MAX_POOL_BYTES`]), allocated once. The time is kept because samples taken close
//! together are not independent (a queue builds during a burst): compare groups them by time.
//!
//! What a pool holds depends on its samples only, not on the order they came in: the exact
//! list is written in time order (ties by value), and the blocks' width is the narrowest that
//! holds the latest sample. So the shards of a parallel analysis merge into what one analyzer
//! would have kept (`Pools::absorb`, crate::parallel).

pub use rocescope_model::latency_samples::{BlockSet, Kind, SampleSet};

/// Samples a pool keeps exactly; the next one moves them all into the time blocks.
pub const EXACT_CAP: usize = 4096;

/// Time blocks of a pool past [`EXACT_CAP`].
pub const BLOCKS: usize = 32;

/// Bits of a value below its leading one that pick its bucket: 2^5 = 32 buckets an octave,
/// each at most 1/32 of its values wide (3.1%).
pub const SUB_BITS: u32 = 5;

/// Buckets of a block's histogram: values 0 to 63 ns one each, then 32 an octave up to
/// 2^36 ns (68.7 s); larger values count in the last.
pub const BUCKETS: usize = 1024;

/// The narrowest block, ns (widths are this doubled: powers of two, so a sample finds its
/// block by a shift).
pub const BLOCK_BASE_NS: u64 = 1 << BLOCK_BASE_SHIFT;

const BLOCK_BASE_SHIFT: u32 = 10;

/// The most a pool holds on the heap, bytes (its time blocks).
pub const MAX_POOL_BYTES: usize = BLOCKS * BUCKETS * 4;

const SUB: u64 = 1 << SUB_BITS;

/// The bucket of a value, ns: the value itself below 64, else 32 buckets an octave
/// (`(l − 4) × 32 + the 5 bits below the leading one`, `l` its octave, `floor(log2 ns)`).
pub fn bucket(ns: u64) -> usize {
    if ns < 2 * SUB {
        return ns as usize;
    }
    let l = u64::from(63 - ns.leading_zeros());
    let k = (l - 4) * SUB + ((ns >> (l - u64::from(SUB_BITS))) & (SUB - 1));
    (k as usize).min(BUCKETS - 1)
}

/// The smallest value of bucket `k`, ns.
pub fn bucket_floor(k: usize) -> u64 {
    let k = k.min(BUCKETS - 1) as u64;
    if k < 2 * SUB {
        return k;
    }
    let (l, m) = (k / SUB + 4, k % SUB);
    (SUB + m) << (l - u64::from(SUB_BITS))
}

/// The first value past bucket `k`, ns (`u64::MAX` for the last, which is open).
pub fn bucket_end(k: usize) -> u64 {
    if k + 1 >= BUCKETS {
        u64::MAX
    } else {
        bucket_floor(k + 1)
    }
}

/// The time blocks of a pool past [`EXACT_CAP`]: one histogram per block, in one
/// allocation.
#[derive(Clone, Debug)]
struct Blocks {
    /// The blocks' width is `1 << shift` ns.
    shift: u32,
    counts: Box<[u32]>,
}

impl Blocks {
    /// Blocks narrow enough for every sample up to `latest` (offset from the start, ns).
    fn new(latest: u64) -> Blocks {
        Blocks { shift: shift_for(latest), counts: vec![0u32; BLOCKS * BUCKETS].into_boxed_slice() }
    }

    fn add(&mut self, offset: u64, ns: u64) {
        while offset >> self.shift >= BLOCKS as u64 {
            self.widen();
        }
        let at = (offset >> self.shift) as usize * BUCKETS + bucket(ns);
        if let Some(c) = self.counts.get_mut(at) {
            *c = c.saturating_add(1);
        }
    }

    /// Double the width: block `2i` and `2i + 1` become block `i`.
    fn widen(&mut self) {
        for i in 0..BLOCKS / 2 {
            for k in 0..BUCKETS {
                let (a, b) = (2 * i * BUCKETS + k, (2 * i + 1) * BUCKETS + k);
                let sum = self.get(a).saturating_add(self.get(b));
                if let Some(c) = self.counts.get_mut(i * BUCKETS + k) {
                    *c = sum;
                }
            }
        }
        // The upper half now holds nothing (its blocks moved into the lower).
        for c in self.counts.iter_mut().skip(BLOCKS / 2 * BUCKETS) {
            *c = 0;
        }
        self.shift += 1;
    }

    fn get(&self, at: usize) -> u32 {
        self.counts.get(at).copied().unwrap_or(0)
    }

    /// Add `other`'s counts (made from the same start).
    fn absorb(&mut self, mut other: Blocks) {
        while self.shift < other.shift {
            self.widen();
        }
        while other.shift < self.shift {
            other.widen();
        }
        for (c, o) in self.counts.iter_mut().zip(other.counts.iter()) {
            *c = c.saturating_add(*o);
        }
    }
}

/// The narrowest block width (the base doubled), as a shift, whose [`BLOCKS`] blocks hold
/// `latest`.
fn shift_for(latest: u64) -> u32 {
    let mut s = BLOCK_BASE_SHIFT;
    while latest >> s >= BLOCKS as u64 {
        s += 1;
    }
    s
}

/// One pool's samples.
#[derive(Clone, Debug, Default)]
struct Pool {
    count: u64,
    /// (time of the response, latency ns), while `blocks` is `None`.
    exact: Vec<(i64, u64)>,
    blocks: Option<Blocks>,
}

impl Pool {
    fn add(&mut self, ts: i64, ns: u64, start: i64) {
        self.count = self.count.saturating_add(1);
        if let Some(b) = &mut self.blocks {
            b.add(offset(ts, start), ns);
        } else if self.exact.len() < EXACT_CAP {
            self.exact.push((ts, ns));
        } else {
            // Into the blocks with the others (not pushed first: the list would double).
            let at = offset(ts, start);
            self.move_to_blocks(start, at);
            if let Some(b) = &mut self.blocks {
                b.add(at, ns);
            }
        }
    }

    /// Move the exact samples into time blocks wide enough for them and for a sample at
    /// `latest` (from the start).
    fn move_to_blocks(&mut self, start: i64, latest: u64) {
        let latest = self.exact.iter().map(|(t, _)| offset(*t, start)).fold(latest, u64::max);
        let mut b = Blocks::new(latest);
        for (t, ns) in std::mem::take(&mut self.exact) {
            b.add(offset(t, start), ns);
        }
        self.blocks = Some(b);
    }

    fn absorb(&mut self, other: Pool, start: i64) {
        self.count = self.count.saturating_add(other.count);
        self.exact.extend(other.exact);
        match (&mut self.blocks, other.blocks) {
            (Some(b), Some(o)) => b.absorb(o),
            (None, Some(o)) => self.blocks = Some(o),
            _ => {}
        }
        if let Some(b) = &mut self.blocks {
            for (t, ns) in std::mem::take(&mut self.exact) {
                b.add(offset(t, start), ns);
            }
        } else if self.exact.len() > EXACT_CAP {
            self.move_to_blocks(start, 0);
        }
    }

    fn report(&self, point: u16, priority: u8, kind: Kind) -> SampleSet {
        let (exact, blocks) = match &self.blocks {
            None => {
                let mut v = self.exact.clone();
                v.sort_unstable();
                (Some(v.into_iter().map(|(_, ns)| ns).collect()), None)
            }
            Some(b) => {
                let counts = (0..BLOCKS)
                    .flat_map(|i| (0..BUCKETS).map(move |k| (i, k)))
                    .filter_map(|(i, k)| {
                        let n = b.get(i * BUCKETS + k);
                        (n > 0).then_some((i as u32, k as u32, u64::from(n)))
                    })
                    .collect();
                (None, Some(BlockSet { width_ns: 1 << b.shift, sub_bits: SUB_BITS, counts }))
            }
        };
        SampleSet { point, priority, kind, count: self.count, exact, blocks }
    }
}

/// A sample's time from the capture's start, ns (0 for a frame stamped before it).
fn offset(ts: i64, start: i64) -> u64 {
    u64::try_from(ts.saturating_sub(start)).unwrap_or(0)
}

/// A pool's key: capture point, priority, kind.
type Key = (u16, u8, Kind);

/// Every pool of an analysis, by (capture point, priority, kind). A list searched from the
/// start: a capture has a handful (a priority or two, ACKs and maybe READs), and a sample
/// costs a few compares rather than a tree's search.
#[derive(Clone, Debug, Default)]
pub struct Pools {
    pools: Vec<(Key, Pool)>,
}

impl Pools {
    /// Apply `f` to the pool of `key`, made when first met.
    fn with(&mut self, key: Key, f: impl FnOnce(&mut Pool)) {
        if let Some((_, p)) = self.pools.iter_mut().find(|(k, _)| *k == key) {
            f(p);
            return;
        }
        let mut p = Pool::default();
        f(&mut p);
        self.pools.push((key, p));
    }

    /// Add a sample of `ns` (negative: 0) ended at `ts` by a response at capture point
    /// `point`, for a request flow on `priority` (`None`: 0); `start` is the capture's
    /// first frame time.
    pub(crate) fn add(&mut self, point: u16, priority: Option<u8>, kind: Kind, ts: i64, ns: i64, start: i64) {
        let key = (point, priority.unwrap_or(0) & 7, kind);
        self.with(key, |p| p.add(ts, u64::try_from(ns).unwrap_or(0), start));
    }

    /// Add another analysis' pools (a shard of the same capture, made from the same
    /// `start`).
    pub(crate) fn absorb(&mut self, other: Pools, start: i64) {
        for (k, o) in other.pools {
            self.with(k, |p| p.absorb(o, start));
        }
    }

    /// The report's `latency_samples`: one entry per pool, by point, priority and kind.
    pub fn report(&self) -> Vec<SampleSet> {
        let mut v: Vec<&(Key, Pool)> = self.pools.iter().collect();
        v.sort_unstable_by_key(|(k, _)| *k);
        v.into_iter().map(|((pt, pr, k), p)| p.report(*pt, *pr, *k)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_fine() {
        for v in [0u64, 1, 63, 64, 65, 127, 128, 1000, 49_152, 98_304, 123_456_789, (1 << 36) - 1] {
            let k = bucket(v);
            assert!(bucket_floor(k) <= v && v < bucket_end(k), "{v} in bucket {k}");
        }
        for k in 0..BUCKETS - 1 {
            assert_eq!(bucket(bucket_floor(k)), k);
            assert!(bucket_end(k) > bucket_floor(k));
            // At most 1/32 of the values wide.
            let (lo, hi) = (bucket_floor(k), bucket_end(k));
            assert!(hi - lo <= lo / 32 + 1, "bucket {k}: {lo}..{hi}");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_end(BUCKETS - 1), u64::MAX);
    }

    #[test]
    fn exact_up_to_the_cap_in_time_order_then_blocks() {
        let mut p = Pools::default();
        // Taken out of order (ties in time by value).
        p.add(0, Some(3), Kind::Ack, 3_000, 30, 0);
        p.add(0, Some(3), Kind::Ack, 1_000, 10, 0);
        p.add(0, Some(3), Kind::Ack, 1_000, 5, 0);
        p.add(1, None, Kind::Read, 1_000, -4, 0);
        let r = p.report();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].point, r[0].priority, r[0].kind, r[0].count), (0, 3, Kind::Ack, 3));
        assert_eq!(r[0].exact.as_deref(), Some(&[5, 10, 30][..]));
        assert_eq!((r[1].point, r[1].priority, r[1].kind), (1, 0, Kind::Read));
        assert_eq!(r[1].exact.as_deref(), Some(&[0][..]));

        let mut p = Pools::default();
        for i in 0..=EXACT_CAP as i64 {
            p.add(0, Some(0), Kind::Ack, i * 1_000_000, 10_000 + i, 0);
        }
        let r = p.report();
        let b = r[0].blocks.as_ref().expect("past the cap: blocks");
        assert!(r[0].exact.is_none());
        assert_eq!(r[0].count, EXACT_CAP as u64 + 1);
        assert_eq!(b.counts.iter().map(|c| c.2).sum::<u64>(), EXACT_CAP as u64 + 1);
        // The narrowest width holding the last sample (4.096 s from the start).
        assert!(
            4_096_000_000 / b.width_ns < BLOCKS as u64 && 4_096_000_000 / (b.width_ns / 2) >= BLOCKS as u64
        );
        assert!(b.counts.iter().all(|c| (c.0 as usize) < BLOCKS && (c.1 as usize) < BUCKETS));
    }

    /// Shards merge into what one pool would have kept, whatever the split.
    #[test]
    fn merged_shards_hold_what_one_pool_holds() {
        for n in [10usize, EXACT_CAP - 3, EXACT_CAP + 500, 3 * EXACT_CAP] {
            let sample = |i: usize| ((i as i64 * 7_919) % 50_000_000, (i as u64 * 104_729) % 300_000);
            let mut one = Pools::default();
            let mut shards = [Pools::default(), Pools::default(), Pools::default()];
            for i in 0..n {
                let (t, ns) = sample(i);
                one.add(0, Some(3), Kind::Ack, t, ns as i64, 0);
                if let Some(s) = shards.get_mut(i * 7 % 3) {
                    s.add(0, Some(3), Kind::Ack, t, ns as i64, 0);
                }
            }
            let [mut a, b, c] = shards;
            a.absorb(b, 0);
            a.absorb(c, 0);
            assert_eq!(a.report(), one.report(), "{n} samples");
        }
    }
}
