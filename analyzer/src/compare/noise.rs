//! Whether a change is beyond the noise the two captures allow (docs/verdicts.md "Change
//! verdicts"): each figure's interval at 95% from the counts behind it, and a change is
//! beyond noise when the two sides' intervals do not overlap.
//!
//! - Shares (CE fraction, loss and resends per million packets): the Wilson score interval
//!   of k events in n packets, which stays inside [0, 1] and is honest at k = 0 (its upper
//!   bound is then about 3.84 / n: no loss in 10,000 packets allows up to 384 per million).
//! - Counts over time (CNPs, timeouts per second): the Poisson interval of k events,
//!   [(√k − z/2)², (√(k+1) + z/2)²], over the span.
//! - Levels over time (throughput, paused time per second): the mean of the per-bin values,
//!   ± z × their standard deviation / √bins (the bins of the capture point's series).
//! - Latency percentiles: the interval of the percentile from the side's pooled samples
//!   (the hull of an order-statistic interval and one from batches of samples taken
//!   together: [`super::samples`]); a change counts when the intervals do not overlap and
//!   it is large enough to matter ([`latency_change_counts`]).

use serde::Serialize;

/// The normal quantile of a two-sided 95% interval.
pub const Z: f64 = 1.96;

/// A 95% interval of a figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Whether the two intervals share no point.
    pub fn apart(&self, other: &Interval) -> bool {
        self.hi < other.lo || other.hi < self.lo
    }

    /// The interval scaled by `k`.
    pub fn scaled(self, k: f64) -> Interval {
        Interval { lo: self.lo * k, hi: self.hi * k }
    }
}

/// The Wilson score interval of `k` events in `n` trials (a share in [0, 1]); `None` when
/// there was no trial.
pub fn wilson(k: u64, n: u64) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = (k as f64 / n).min(1.0);
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    Some(Interval { lo: (centre - half).max(0.0), hi: (centre + half).min(1.0) })
}

/// The Poisson interval of `k` events, as a rate per `span_s` seconds; `None` without a
/// span.
pub fn poisson_rate(k: u64, span_s: f64) -> Option<Interval> {
    if span_s.is_nan() || span_s <= 0.0 {
        return None;
    }
    let k = k as f64;
    let lo = if k > 0.0 { (k.sqrt() - Z / 2.0).max(0.0).powi(2) } else { 0.0 };
    let hi = ((k + 1.0).sqrt() + Z / 2.0).powi(2);
    Some(Interval { lo: lo / span_s, hi: hi / span_s })
}

/// The interval of a level measured as per-bin values (their mean ± z standard errors);
/// `None` with fewer than two bins.
pub fn series_mean(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let half = Z * (var / nf).sqrt();
    Some(Interval { lo: (mean - half).max(0.0), hi: mean + half })
}

/// The smallest latency ratio counted (either way). The percentiles are exact (or within
/// 3% past the exact cap), so this is no resolution but a floor of relevance: a shift of
/// less than a quarter, however certain, is the load of the day, not a change to judge
/// (the `latency_rose` verdict asks for 1.5 by default, `--fail-on latency-rise`).
pub const LATENCY_MIN_RATIO: f64 = 1.25;
/// The smallest latency change counted, ns: many captures stamp frames to the microsecond
/// (ibdump's, Mellanox's), so a smaller change is below their resolution.
pub const LATENCY_MIN_CHANGE_NS: f64 = 1_000.0;

/// Whether a latency change from `before` to `after` (ns) is large enough to count once the
/// intervals say it is no noise: at least [`LATENCY_MIN_CHANGE_NS`] and a ratio of at least
/// [`LATENCY_MIN_RATIO`] either way.
pub fn latency_change_counts(before: f64, after: f64) -> bool {
    let (lo, hi) = (before.min(after), before.max(after));
    hi - lo >= LATENCY_MIN_CHANGE_NS && hi >= lo * LATENCY_MIN_RATIO
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_at_zero_and_apart() {
        let none = wilson(0, 10_000).unwrap();
        assert_eq!(none.lo, 0.0);
        assert!((none.hi - 3.84e-4).abs() < 2e-5, "{none:?}");
        let some = wilson(50, 10_000).unwrap();
        assert!(some.lo > none.hi, "50 in 10,000 is beyond none in 10,000");
        let few = wilson(1, 10_000).unwrap();
        assert!(!few.apart(&none), "one loss is within the noise of none");
        assert_eq!(wilson(3, 0), None);
    }

    #[test]
    fn poisson_rates() {
        let z = poisson_rate(0, 1.0).unwrap();
        assert_eq!(z.lo, 0.0);
        assert!(z.hi > 3.0 && z.hi < 5.0, "{z:?}");
        let hundred = poisson_rate(100, 2.0).unwrap();
        assert!(hundred.lo > 39.0 && hundred.hi < 62.0, "{hundred:?}");
        assert!(hundred.apart(&z));
        assert_eq!(poisson_rate(3, 0.0), None);
    }

    #[test]
    fn series_means() {
        let flat = series_mean(&[10.0, 10.0, 10.0]).unwrap();
        assert_eq!((flat.lo, flat.hi), (10.0, 10.0));
        let noisy = series_mean(&[0.0, 20.0, 0.0, 20.0]).unwrap();
        assert!(noisy.lo < 10.0 && noisy.hi > 10.0);
        assert!(!noisy.apart(&flat));
        assert_eq!(series_mean(&[1.0]), None);
    }

    #[test]
    fn latency_rules() {
        assert!(latency_change_counts(10_000.0, 20_000.0));
        assert!(latency_change_counts(20_000.0, 10_000.0), "a fall counts too");
        assert!(!latency_change_counts(10_000.0, 12_000.0), "less than a quarter");
        assert!(latency_change_counts(10_000.0, 12_500.0));
        assert!(!latency_change_counts(500.0, 1_200.0), "below a microsecond");
    }
}
