//! The NIC counters on both sides of a change (docs/verdicts.md "Change verdicts",
//! "Counters"): where both sides carry two-snapshot counters (`report --counters`, or
//! `compare --counters-before/--counters-after` on capture sides), each figure's delta
//! before and after, with the Poisson interval of each count.
//!
//! The deltas span each side's snapshots, not its capture: they compare like with like
//! when the snapshots bracket captures of similar length (the usual `ethtool -S; capture;
//! ethtool -S`). Rows only: the counters' disagreements with the capture are findings
//! (`counters_disagree`), which the findings rule already judges.

use super::noise::{self, Interval};
use super::Profile;
use serde::Serialize;

/// One counter figure on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CounterChange {
    /// The canonical figure (`cnp_sent`, `pause_rx`, `out_of_sequence`, ...).
    pub figure: String,
    /// The priority, for per-priority figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The NIC's delta before (null: that side's counters lack it or it went backwards).
    pub before: Option<u64>,
    /// The delta after.
    pub after: Option<u64>,
    /// After − before.
    pub change: Option<i64>,
    /// Whether the two counts' Poisson intervals are apart; null when a side lacks it.
    pub beyond_noise: Option<bool>,
    /// Before's 95% interval (a count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_interval: Option<Interval>,
    /// After's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_interval: Option<Interval>,
}

impl CounterChange {
    /// How the text names it (`cnp_sent prio 3`).
    pub fn label(&self) -> String {
        match self.priority {
            Some(p) => format!("{} prio {p}", self.figure),
            None => self.figure.clone(),
        }
    }
}

/// Every figure either side's counters hold, in figure order; empty unless both sides carry
/// two-snapshot counters.
pub fn changes(before: &Profile, after: &Profile) -> Vec<CounterChange> {
    let (Some(b), Some(a)) = (&before.counters, &after.counters) else { return Vec::new() };
    let mut keys: Vec<&(String, Option<u8>)> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let (vb, va) = (b.get(k).copied().flatten(), a.get(k).copied().flatten());
            let count = |v: Option<u64>| v.and_then(|n| noise::poisson_rate(n, 1.0));
            let (ib, ia) = (count(vb), count(va));
            CounterChange {
                figure: k.0.clone(),
                priority: k.1,
                before: vb,
                after: va,
                change: vb.zip(va).map(|(x, y)| {
                    i64::try_from(y).unwrap_or(i64::MAX).saturating_sub(i64::try_from(x).unwrap_or(i64::MAX))
                }),
                beyond_noise: ib.zip(ia).map(|(x, y)| x.apart(&y)),
                before_interval: ib,
                after_interval: ia,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn side(figures: &[(&str, Option<u8>, Option<u64>)]) -> Profile {
        let m: BTreeMap<(String, Option<u8>), Option<u64>> =
            figures.iter().map(|(f, p, v)| ((f.to_string(), *p), *v)).collect();
        Profile { counters: Some(m), ..Profile::default() }
    }

    #[test]
    fn deltas_side_by_side_with_their_noise() {
        let b = side(&[("cnp_sent", None, Some(100)), ("pause_rx", Some(3), Some(0))]);
        let a = side(&[
            ("cnp_sent", None, Some(104)),
            ("pause_rx", Some(3), Some(5_000)),
            ("out_of_sequence", None, None),
        ]);
        let c = changes(&b, &a);
        let names: Vec<String> = c.iter().map(CounterChange::label).collect();
        assert_eq!(names, ["cnp_sent", "out_of_sequence", "pause_rx prio 3"]);
        assert_eq!((c[0].change, c[0].beyond_noise), (Some(4), Some(false)), "100 → 104 is noise");
        assert_eq!((c[1].before, c[1].after, c[1].beyond_noise), (None, None, None));
        assert_eq!((c[2].change, c[2].beyond_noise), (Some(5_000), Some(true)));
        // One side without counters: no rows.
        assert!(changes(&Profile::default(), &a).is_empty());
    }
}
