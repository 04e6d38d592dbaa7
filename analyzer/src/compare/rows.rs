//! Side-by-side rows: each figure before and after, its change, and whether the change is
//! beyond the noise the two captures allow ([`super::noise`]).

use super::facts::LatencyStat;
use super::noise::{self, Interval};
use super::profile::{PointProfile, PriorityProfile};
use super::samples;
use crate::latency_samples::{Kind, SampleSet};
use serde::Serialize;

/// One figure on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The figure: `throughput_gbps`, `ce_fraction`, `cnps_per_s`, `cnps_carried_per_s`,
    /// `pause_us_per_s`,
    /// `loss_per_million`, `resends_per_million`, `timeouts`, `ack_p50_ns`, `ack_p99_ns`,
    /// `read_p50_ns`, `read_p99_ns`, `qps` (per priority); `qps`, `connections`, `pmtu` (per
    /// capture point).
    pub metric: &'static str,
    /// Before (null: not measurable there, e.g. no sample).
    pub before: Option<f64>,
    /// After.
    pub after: Option<f64>,
    /// After − before.
    pub change: Option<f64>,
    /// After / before (null when before is 0 or either is null).
    pub ratio: Option<f64>,
    /// Whether the change is beyond noise; null when it cannot be told (too few samples or
    /// bins, or a side without the figure).
    pub beyond_noise: Option<bool>,
    /// How noise is judged: `wilson`, `poisson`, `series`, `samples`, `summaries` or
    /// `exact` (docs/compare-json.md).
    pub noise: &'static str,
    /// Before's 95% interval, in the figure's unit (absent when not computed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_interval: Option<Interval>,
    /// After's 95% interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_interval: Option<Interval>,
    /// Latency rows: the samples before (absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_samples: Option<u64>,
    /// Latency rows: the samples after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_samples: Option<u64>,
}

impl Row {
    fn new(metric: &'static str, noise: &'static str, before: Option<f64>, after: Option<f64>) -> Row {
        let change = before.zip(after).map(|(b, a)| a - b);
        let ratio = before.zip(after).and_then(|(b, a)| (b > 0.0).then(|| a / b));
        Row {
            metric,
            before,
            after,
            change,
            ratio,
            beyond_noise: None,
            noise,
            before_interval: None,
            after_interval: None,
            before_samples: None,
            after_samples: None,
        }
    }

    /// A figure whose value is exact: any change is a change.
    fn exact(metric: &'static str, before: Option<f64>, after: Option<f64>) -> Row {
        let mut r = Row::new(metric, "exact", before, after);
        r.beyond_noise = r.change.map(|c| c != 0.0);
        r
    }

    /// A figure with an interval on each side: beyond noise when they do not overlap.
    fn with_intervals(
        metric: &'static str,
        noise: &'static str,
        before: Option<f64>,
        after: Option<f64>,
        ib: Option<Interval>,
        ia: Option<Interval>,
    ) -> Row {
        let mut r = Row::new(metric, noise, before, after);
        r.beyond_noise = ib.zip(ia).map(|(b, a)| b.apart(&a));
        r.before_interval = ib;
        r.after_interval = ia;
        r
    }

    /// Whether the change is beyond noise and the figure rose.
    pub fn rose(&self) -> bool {
        self.beyond_noise == Some(true) && self.change.is_some_and(|c| c > 0.0)
    }

    /// Whether the change is beyond noise and the figure fell.
    pub fn fell(&self) -> bool {
        self.beyond_noise == Some(true) && self.change.is_some_and(|c| c < 0.0)
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A share of `n` with its Wilson interval, scaled by `k` (1 for a fraction, 1e6 per million).
fn share(k: u64, n: u64, scale: f64) -> (Option<f64>, Option<Interval>) {
    ((n > 0).then(|| k as f64 / n as f64 * scale), noise::wilson(k, n).map(|i| i.scaled(scale)))
}

/// A rate per second with its Poisson interval.
fn per_s(k: u64, span_ns: u64) -> (Option<f64>, Option<Interval>) {
    let s = secs(span_ns);
    ((s > 0.0).then(|| k as f64 / s), noise::poisson_rate(k, s))
}

/// A level over time (`total` over the span, scaled by `k`) with its series interval.
fn level(total: f64, span_ns: u64, bins: &[f64]) -> (Option<f64>, Option<Interval>) {
    let s = secs(span_ns);
    ((s > 0.0).then(|| total / s), noise::series_mean(bins))
}

/// The rows of one priority present on one side or both.
///
/// A priority with no data on either side (a class of its own for CNPs, DSCP 48) gets no
/// data rows: its throughput, CE fraction, the CNPs answering its data, its timeouts and
/// QPs sending data are not measurable there (null), rather than zeros that read as "the CNPs stopped"
/// (issue 41). What it carries shows as `cnps_carried_per_s`, a row present wherever the
/// CNPs a priority carries are not those answering its own data.
pub fn priority_rows(
    b: Option<&PriorityProfile>,
    bs: u64,
    a: Option<&PriorityProfile>,
    as_: u64,
) -> Vec<Row> {
    type Measure = fn(&PriorityProfile, u64) -> (Option<f64>, Option<Interval>);
    let has_data = [b, a].iter().flatten().any(|p| p.qps > 0);
    let both = |m: Measure| (b.map_or((None, None), |p| m(p, bs)), a.map_or((None, None), |p| m(p, as_)));
    let none: Measure = |_, _| (None, None);
    let data_only = |m: Measure| if has_data { m } else { none };
    let interval_rows: [(&'static str, &'static str, Measure); 7] = [
        // A class of CNPs or ACKs alone carries a few kB/s: "0.000 Gb/s" there reads as an
        // empty class; what it carries is `cnps_carried_per_s`.
        ("throughput_gbps", "series", data_only(|p, s| level(p.bytes as f64 * 8.0 / 1e9, s, &p.gbps_bins))),
        // Over the packets of the flows that carry data, as the marks' data ECN row.
        ("ce_fraction", "wilson", |p, _| share(p.data_ce, p.data_ecn_packets, 1.0)),
        ("cnps_per_s", "poisson", data_only(|p, s| per_s(p.cnps, s))),
        ("pause_us_per_s", "series", |p, s| level(p.pause_ns as f64 / 1e3, s, &p.pause_bins)),
        ("loss_per_million", "wilson", |p, _| share(p.network_loss, p.data_packets, 1e6)),
        ("resends_per_million", "wilson", |p, _| share(p.resends, p.data_packets, 1e6)),
        (
            "timeouts",
            "poisson",
            data_only(|p, s| (Some(p.timeouts as f64), noise::poisson_rate(p.timeouts, secs(s)))),
        ),
    ];
    let mut rows: Vec<Row> = interval_rows
        .iter()
        .map(|(metric, how, m)| {
            let ((vb, ib), (va, ia)) = both(*m);
            Row::with_intervals(metric, how, vb, va, ib, ia)
        })
        .collect();
    let carried_elsewhere = [b, a].iter().flatten().any(|p| p.cnps_carried != p.cnps);
    let carries = [b, a].iter().flatten().any(|p| p.cnps_carried > 0);
    if carried_elsewhere && carries {
        let ((vb, ib), (va, ia)) = both(|p, s| per_s(p.cnps_carried, s));
        rows.insert(3, Row::with_intervals("cnps_carried_per_s", "poisson", vb, va, ib, ia));
    }
    // Timeouts are shown as counts but judged as rates: the spans may differ.
    for (metric, kind, q) in [
        ("ack_p50_ns", Kind::Ack, 0.5),
        ("ack_p99_ns", Kind::Ack, 0.99),
        ("read_p50_ns", Kind::Read, 0.5),
        ("read_p99_ns", Kind::Read, 0.99),
    ] {
        rows.push(latency_row(metric, kind, q, b, a));
    }
    let qps = |p: Option<&PriorityProfile>| p.filter(|_| has_data).map(|p| p.qps as f64);
    rows.push(Row::exact("qps", qps(b), qps(a)));
    rows
}

/// A latency percentile's row. With samples on both sides (`samples`): each side's
/// percentile and its interval ([`samples::evidence`]), beyond noise when the intervals do
/// not overlap and the change counts ([`noise::latency_change_counts`]); not judged where a
/// side has too few samples for an interval. Without samples on a side (`summaries`: a
/// report document made before them, a Parquet directory): the flows' percentiles pooled
/// ([`super::pool`]) on both sides, like with like, shown but never judged.
fn latency_row(
    metric: &'static str,
    kind: Kind,
    q: f64,
    b: Option<&PriorityProfile>,
    a: Option<&PriorityProfile>,
) -> Row {
    fn sets(p: Option<&PriorityProfile>, kind: Kind) -> Option<Option<&SampleSet>> {
        p.map(|p| match kind {
            Kind::Ack => p.ack_samples.as_ref(),
            Kind::Read => p.read_samples.as_ref(),
        })
    }
    // A side without the priority has no figure; one without samples at all, summaries.
    let with_samples = |p: Option<Option<&SampleSet>>| p.is_none_or(|s| s.is_some());
    let (sb, sa) = (sets(b, kind), sets(a, kind));
    if with_samples(sb) && with_samples(sa) {
        let ev = |s: Option<Option<&SampleSet>>| s.flatten().and_then(|s| samples::evidence(s, q));
        let (eb, ea) = (ev(sb), ev(sa));
        let mut r = Row::with_intervals(
            metric,
            "samples",
            eb.map(|e| e.value),
            ea.map(|e| e.value),
            eb.and_then(|e| e.interval),
            ea.and_then(|e| e.interval),
        );
        if let (Some(true), Some(x), Some(y)) = (r.beyond_noise, r.before, r.after) {
            r.beyond_noise = Some(noise::latency_change_counts(x, y));
        }
        r.before_samples = sb.flatten().map(|_| eb.map_or(0, |e| e.count));
        r.after_samples = sa.flatten().map(|_| ea.map_or(0, |e| e.count));
        return r;
    }
    let stat = |p: Option<&PriorityProfile>| {
        p.and_then(|p| match kind {
            Kind::Ack => p.ack,
            Kind::Read => p.read,
        })
    };
    let pick = |s: LatencyStat| if q > 0.9 { s.p99_ns } else { s.p50_ns } as f64;
    let (xb, xa) = (stat(b), stat(a));
    let mut r = Row::new(metric, "summaries", xb.map(pick), xa.map(pick));
    r.before_samples = xb.map(|s| s.count);
    r.after_samples = xa.map(|s| s.count);
    r
}

/// The rows of a capture point: QPs, connections, path MTU.
pub fn point_rows(b: &PointProfile, a: &PointProfile) -> Vec<Row> {
    let mtu = |p: &PointProfile| (p.pmtu > 0).then_some(f64::from(p.pmtu));
    vec![
        Row::exact("qps", Some(b.qps as f64), Some(a.qps as f64)),
        Row::exact("connections", Some(b.connections as f64), Some(a.connections as f64)),
        Row::exact("pmtu", mtu(b), mtu(a)),
    ]
}

/// The capture-wide rows: the share of RoCE that is RoCEv1 (`roce_v1_share`, of
/// `summary.roce`) and the share of the flows' packets named by IPv6 addresses
/// (`ipv6_share`), each with its Wilson interval.
pub fn capture_rows(b: &super::profile::Profile, a: &super::profile::Profile) -> Vec<Row> {
    type Measure = fn(&super::profile::Profile) -> (u64, u64);
    let rows: [(&'static str, Measure); 2] = [
        ("roce_v1_share", |p| (p.roce_v1, p.roce)),
        ("ipv6_share", |p| (p.family_packets[1], p.family_packets[0].saturating_add(p.family_packets[1]))),
    ];
    rows.iter()
        .map(|(metric, m)| {
            let ((kb, nb), (ka, na)) = (m(b), m(a));
            let (vb, ib) = share(kb, nb, 1.0);
            let (va, ia) = share(ka, na, 1.0);
            Row::with_intervals(metric, "wilson", vb, va, ib, ia)
        })
        .collect()
}
