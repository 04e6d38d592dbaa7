//! A latency percentile and its 95% interval from one side's pooled samples
//! ([`crate::latency_samples`]; docs/verdicts.md "Latency on evidence").
//!
//! Two intervals, and the figure's is their hull (the wider on each end):
//!
//! - **Order statistics** (distribution-free): for `n` samples, the percentile `q` lies
//!   between the samples of ranks `n·q ∓ 1.96·√(n·q·(1−q))` with 95% confidence, if the samples
//!   are independent.
//! - **Batches** (sectioning): they are not. ACK latency rises and falls with the queues a
//!   burst builds (two 1.2 ms Mellanox captures of the same workload have medians of 25 µs
//!   in their first 100 µs and 330 µs later), and one coalesced ACK ends several samples at
//!   once. So the samples, in the order they were taken, are cut into 4 to 8 batches of
//!   equal count (time blocks, past the exact cap); the percentile of each batch varies as
//!   much as the capture's moments do, and the interval is the percentile ± t(batches − 1)
//!   × their standard deviation / √batches. For independent samples this is about as wide
//!   as the first; for a capture whose latency moves with time it is as wide as it moves.
//!
//! A batch needs [`batch_samples`] samples (5 for a median, 100 for a 99th percentile),
//! so a percentile needs 4 batches' worth ([`min_samples`]: 20 and 400) to get an interval.

use super::noise::{Interval, Z};
use crate::latency_samples::{bucket_end, bucket_floor, SampleSet, BUCKETS, SUB_BITS};

/// Fewest batches an interval rests on.
pub const MIN_BATCHES: u64 = 4;
/// Most batches. Few and long rather than many and short: samples that move together (a
/// queue holding for a while, an ACK ending several) must mostly fall in one batch for the
/// batches to vary as the capture did; with more than 8, Student's t gains little (2.36 at
/// 8, 2.13 at 16).
pub const MAX_BATCHES: u64 = 8;

/// Student's t at 97.5% for 3 to 7 degrees of freedom (4 to 8 batches).
const T975: [f64; 5] = [3.182, 2.776, 2.571, 2.447, 2.365];

/// Samples a batch needs for percentile `q`: 5 for a median, 100 for the 99th (below that
/// a batch's 99th percentile is its largest sample).
pub fn batch_samples(q: f64) -> u64 {
    if q > 0.9 {
        100
    } else {
        5
    }
}

/// Samples a side needs for percentile `q` to be judged: [`MIN_BATCHES`] batches.
pub fn min_samples(q: f64) -> u64 {
    MIN_BATCHES * batch_samples(q)
}

/// A side's percentile from its samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evidence {
    /// Samples.
    pub count: u64,
    /// The percentile, ns (the sample of rank ⌈n·q⌉; past the exact cap, its bucket's middle).
    pub value: f64,
    /// Its 95% interval, ns; `None` with fewer than [`min_samples`].
    pub interval: Option<Interval>,
}

/// The samples, sorted, as values or as a histogram.
enum Sorted {
    Exact(Vec<u64>),
    /// (bucket, samples), by bucket.
    Hist(Vec<(usize, u64)>),
}

impl Sorted {
    fn of_values(mut v: Vec<u64>) -> Sorted {
        v.sort_unstable();
        Sorted::Exact(v)
    }

    fn of_counts(counts: impl Iterator<Item = (usize, u64)>) -> Sorted {
        let mut h = vec![0u64; BUCKETS];
        for (k, n) in counts {
            if let Some(c) = h.get_mut(k) {
                *c = c.saturating_add(n);
            }
        }
        Sorted::Hist(h.into_iter().enumerate().filter(|(_, n)| *n > 0).collect())
    }

    fn len(&self) -> u64 {
        match self {
            Sorted::Exact(v) => v.len() as u64,
            Sorted::Hist(h) => h.iter().fold(0u64, |a, (_, n)| a.saturating_add(*n)),
        }
    }

    /// The sample of rank `r` (1-based, clamped): (lowest it can be, highest, the estimate).
    fn at(&self, r: u64) -> (f64, f64, f64) {
        match self {
            Sorted::Exact(v) => {
                let i = usize::try_from(r.max(1) - 1).unwrap_or(usize::MAX).min(v.len().saturating_sub(1));
                let x = v.get(i).copied().unwrap_or(0) as f64;
                (x, x, x)
            }
            Sorted::Hist(h) => {
                let mut acc = 0u64;
                let mut last = (0.0, 0.0, 0.0);
                for (k, n) in h {
                    acc = acc.saturating_add(*n);
                    let (lo, end) = (bucket_floor(*k), bucket_end(*k));
                    // The open last bucket: its floor is all that is known.
                    let hi = if end == u64::MAX { lo as f64 } else { (end - 1) as f64 };
                    last = (lo as f64, hi, (lo as f64 + hi) / 2.0);
                    if acc >= r {
                        break;
                    }
                }
                last
            }
        }
    }

    /// Percentile `q`: the sample of rank ⌈n·q⌉.
    fn percentile(&self, q: f64) -> f64 {
        let n = self.len();
        self.at(((n as f64 * q).ceil() as u64).max(1)).2
    }
}

/// The batches of a side's samples, in time order: equal counts of the exact samples, or
/// runs of time blocks holding about equal counts. Fewer than [`MIN_BATCHES`]: none.
fn batches(s: &SampleSet, n: u64, per: u64) -> Vec<Sorted> {
    let want = (n / per.max(1)).min(MAX_BATCHES);
    if want < MIN_BATCHES {
        return Vec::new();
    }
    if let Some(v) = &s.exact {
        let len = v.len();
        let b = want as usize;
        return (0..b)
            .map(|i| Sorted::of_values(v.get(i * len / b..(i + 1) * len / b).unwrap_or_default().to_vec()))
            .collect();
    }
    let Some(blocks) = &s.blocks else { return Vec::new() };
    // Per block, in time order.
    let mut per_block: Vec<(u32, Vec<(usize, u64)>)> = Vec::new();
    for &(block, k, c) in &blocks.counts {
        match per_block.last_mut() {
            Some((b, v)) if *b == block => v.push((k as usize, c)),
            _ => per_block.push((block, vec![(k as usize, c)])),
        }
    }
    per_block.sort_by_key(|(b, _)| *b);
    let target = n.div_ceil(want);
    let mut out: Vec<Vec<(usize, u64)>> = Vec::new();
    let mut cur: Vec<(usize, u64)> = Vec::new();
    let mut held = 0u64;
    for (_, v) in per_block {
        held = held.saturating_add(v.iter().fold(0u64, |a, x| a.saturating_add(x.1)));
        cur.extend(v);
        if held >= target {
            out.push(std::mem::take(&mut cur));
            held = 0;
        }
    }
    // A last run of less than half a batch joins the one before.
    if !cur.is_empty() {
        match out.last_mut() {
            Some(last) if held < target / 2 => last.extend(cur),
            _ => out.push(cur),
        }
    }
    if (out.len() as u64) < MIN_BATCHES {
        return Vec::new();
    }
    out.into_iter().map(|v| Sorted::of_counts(v.into_iter())).collect()
}

/// Percentile `q` of a side's samples with its interval; `None` without a sample (or with
/// blocks of a layout this build does not read).
pub fn evidence(s: &SampleSet, q: f64) -> Option<Evidence> {
    let sorted = match (&s.exact, &s.blocks) {
        (Some(v), _) => Sorted::of_values(v.clone()),
        (None, Some(b)) if b.sub_bits == SUB_BITS => {
            Sorted::of_counts(b.counts.iter().map(|&(_, k, c)| (k as usize, c)))
        }
        _ => return None,
    };
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let value = sorted.percentile(q);
    let interval = (n >= min_samples(q)).then(|| interval(s, &sorted, n, q, value)).flatten();
    Some(Evidence { count: n, value, interval })
}

/// The hull of the order-statistic interval and the batches' interval.
fn interval(s: &SampleSet, sorted: &Sorted, n: u64, q: f64, value: f64) -> Option<Interval> {
    let nf = n as f64;
    let half = Z * (nf * q * (1.0 - q)).sqrt();
    let lo_rank = ((nf * q - half).floor() as u64).max(1);
    let hi_rank = ((nf * q + half).ceil() as u64).min(n);
    let order = Interval { lo: sorted.at(lo_rank).0, hi: sorted.at(hi_rank).1 };
    let qs: Vec<f64> = batches(s, n, batch_samples(q)).iter().map(|b| b.percentile(q)).collect();
    let b = qs.len();
    let t = T975.get(b.checked_sub(MIN_BATCHES as usize)?)?;
    let mean = qs.iter().sum::<f64>() / b as f64;
    let var = qs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
    let h = t * (var / b as f64).sqrt();
    // Not below the smallest sample: with 20 or more, a percentile from the 50th up lies
    // below it with a chance under 2^-20.
    let least = sorted.at(1).0;
    Some(Interval { lo: order.lo.min((value - h).max(least)), hi: order.hi.max(value + h) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency_samples::{Kind, Pools, EXACT_CAP};

    fn exact(v: &[u64]) -> SampleSet {
        SampleSet { count: v.len() as u64, exact: Some(v.to_vec()), ..Default::default() }
    }

    /// A deterministic spread around `centre` (±20%, log-uniform-ish).
    fn jittered(n: usize, centre: f64, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                (centre * (0.8 + 0.4 * u)) as u64
            })
            .collect()
    }

    #[test]
    fn few_samples_have_a_value_but_no_interval() {
        let e = evidence(&exact(&[30, 10, 20]), 0.5).unwrap();
        assert_eq!((e.count, e.value, e.interval), (3, 20.0, None));
        assert_eq!(evidence(&exact(&[]), 0.5), None);
        let e = evidence(&exact(&jittered(399, 10_000.0, 7)), 0.99).unwrap();
        assert_eq!(e.interval, None, "a 99th percentile needs 400 samples");
        assert!(evidence(&exact(&jittered(400, 10_000.0, 7)), 0.99).unwrap().interval.is_some());
    }

    #[test]
    fn steady_samples_give_a_tight_interval_around_the_median() {
        let e = evidence(&exact(&jittered(2_000, 10_000.0, 3)), 0.5).unwrap();
        let i = e.interval.unwrap();
        assert!(i.lo <= e.value && e.value <= i.hi);
        assert!(i.lo > 9_500.0 && i.hi < 10_500.0, "{e:?}");
        let doubled = evidence(&exact(&jittered(2_000, 20_000.0, 5)), 0.5).unwrap();
        assert!(doubled.interval.unwrap().apart(&i));
    }

    /// The same values in time order: in runs of 10 at one level (a queue that holds for a
    /// while), they are much less certain than shuffled, where each sample is news.
    #[test]
    fn runs_in_time_widen_the_interval() {
        let levels = [20_000u64, 80_000, 35_000, 60_000, 15_000, 90_000, 45_000, 70_000];
        let runs: Vec<u64> = (0..80u64).map(|i| levels[(i / 10) as usize] + i * 37 % 400).collect();
        // The same values in a fixed interleaving (every 7th: 7 and 80 are coprime).
        let shuffled: Vec<u64> = (0..80).map(|i| runs[i * 7 % 80]).collect();
        let a = evidence(&exact(&runs), 0.5).unwrap().interval.unwrap();
        let b = evidence(&exact(&shuffled), 0.5).unwrap().interval.unwrap();
        assert!(a.hi - a.lo > 1.4 * (b.hi - b.lo), "runs {a:?}, shuffled {b:?}");
    }

    /// Past the cap the blocks give about the exact samples' answer.
    #[test]
    fn blocks_agree_with_the_exact_samples() {
        let values = jittered(3 * EXACT_CAP, 40_000.0, 11);
        let mut p = Pools::default();
        for (i, v) in values.iter().enumerate() {
            p.add(0, Some(3), Kind::Ack, i as i64 * 10_000, *v as i64, 0);
        }
        let set = p.report().remove(0);
        assert!(set.blocks.is_some());
        let hist = evidence(&set, 0.5).unwrap();
        let ex = evidence(&exact(&values), 0.5).unwrap();
        assert_eq!(hist.count, ex.count);
        assert!((hist.value - ex.value).abs() / ex.value < 0.02, "{hist:?} {ex:?}");
        let (hi, ei) = (hist.interval.unwrap(), ex.interval.unwrap());
        assert!(!hi.apart(&ei));
        assert!(hi.hi - hi.lo < 0.1 * ex.value, "{hi:?}");
        let p99 = evidence(&set, 0.99).unwrap();
        assert!(p99.value > 47_000.0 && p99.interval.is_some(), "{p99:?}");
    }
}
