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
//! - Latency percentiles: no interval (a percentile of a quarter-octave histogram); a change
//!   counts when both sides have enough samples and the ratio clears the histogram's
//!   resolution and a minimum absolute change ([`latency_beyond_noise`]).

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

/// Samples a latency median needs on each side to be compared.
pub const LATENCY_MIN_SAMPLES_P50: u64 = 20;
/// Samples a 99th percentile needs on each side (below 100 it is the largest sample).
pub const LATENCY_MIN_SAMPLES_P99: u64 = 100;
/// The smallest latency ratio that can be told from the histogram's quarter-octave
/// resolution (2^(1/4) = 1.19 a step) with a step of margin.
pub const LATENCY_MIN_RATIO: f64 = 1.42;
/// The smallest latency change counted, ns.
pub const LATENCY_MIN_CHANGE_NS: u64 = 1_000;

/// Whether a latency percentile's change is beyond noise: enough samples on both sides
/// (`min_samples`), a ratio of at least [`LATENCY_MIN_RATIO`] either way, and at least
/// [`LATENCY_MIN_CHANGE_NS`].
pub fn latency_beyond_noise(before: (u64, u64), after: (u64, u64), min_samples: u64) -> bool {
    let ((nb, b), (na, a)) = (before, after);
    if nb < min_samples || na < min_samples {
        return false;
    }
    let (lo, hi) = (b.min(a), b.max(a));
    hi.saturating_sub(lo) >= LATENCY_MIN_CHANGE_NS && hi as f64 >= lo as f64 * LATENCY_MIN_RATIO
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
        assert!(latency_beyond_noise((100, 10_000), (100, 20_000), 100));
        assert!(!latency_beyond_noise((99, 10_000), (100, 20_000), 100), "too few samples");
        assert!(!latency_beyond_noise((100, 10_000), (100, 12_000), 100), "within two histogram steps");
        assert!(!latency_beyond_noise((100, 500), (100, 1_200), 100), "below a microsecond");
        assert!(latency_beyond_noise((100, 20_000), (100, 10_000), 100), "a fall counts too");
    }
}
