//! Classes and versions (docs/verdicts.md "Change verdicts"): a priority whose RoCE data
//! moved to another (`class_left`), RoCEv1 appearing (`rocev1_appeared`).

use super::direction::Direction;
use super::profile::{PointProfile, Profile, QpFact};
use super::{Row, Verdict};
use crate::audit::AuditConfig;
use crate::report::Severity;
use std::collections::BTreeMap;

/// The share of a priority's data that must leave it for another for `class_left`: most.
pub const CLASS_LEFT_SHARE: f64 = 0.5;

/// The host pair of a data flow (`SRC > DST`): what survives a change that renumbers QPs.
fn hosts(q: &QpFact) -> &str {
    q.qp.split(" QP ").next().unwrap_or(&q.qp)
}

/// Per host pair, its data packets per priority.
fn by_hosts(p: &PointProfile) -> BTreeMap<&str, BTreeMap<u8, u64>> {
    let mut m: BTreeMap<&str, BTreeMap<u8, u64>> = BTreeMap::new();
    for q in &p.qp {
        let n = m.entry(hosts(q)).or_default().entry(q.priority.unwrap_or(0) & 7).or_insert(0);
        *n = n.saturating_add(q.data_packets);
    }
    m
}

/// The priority that carries most of a host pair's data (ties: the lower).
fn main_priority(m: &BTreeMap<u8, u64>) -> Option<u8> {
    m.iter().max_by_key(|(p, n)| (**n, std::cmp::Reverse(**p))).map(|(p, _)| *p)
}

/// The DSCPs the data of the host pairs at priority `p` carried on side `s`.
fn dscps_at(s: &PointProfile, p: u8) -> Vec<u8> {
    let mut v: Vec<u8> =
        s.qp.iter().filter(|q| q.priority.map(|x| x & 7) == Some(p)).flat_map(|q| q.dscp.clone()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Which way a move of data from priority `p` to `q` went, against the lossless
/// priorities, the expected PCP and the expected data DSCP, the first one given.
fn class_direction(p: u8, q: u8, b: &PointProfile, a: &PointProfile, expect: &AuditConfig) -> Direction {
    if let Some(l) = expect.lossless_priorities.as_deref().filter(|l| !l.is_empty()) {
        return Direction::of(&[p], &[q], Some(l));
    }
    if let Some(e) = expect.roce_pcp {
        return Direction::of(&[p], &[q], Some(&[e]));
    }
    if let Some(e) = expect.roce_dscp.as_deref() {
        return Direction::of(&dscps_at(b, p), &dscps_at(a, q), Some(e));
    }
    Direction::Unknown
}

/// A priority that lost most of its data to another: the host pairs whose data travelled
/// on it before and on another after (none of it left on it). CRITICAL whatever the new
/// priority carried before (a class left is the wrong queue, PFC and ECN settings), INFO
/// "fixed" when the move went toward what is expected.
pub fn class_verdicts(b: &PointProfile, a: &PointProfile, expect: &AuditConfig, out: &mut Vec<Verdict>) {
    let (hb, ha) = (by_hosts(b), by_hosts(a));
    let mut total: BTreeMap<u8, u64> = BTreeMap::new();
    let mut moved: BTreeMap<u8, BTreeMap<u8, u64>> = BTreeMap::new();
    for (h, m) in &hb {
        for (&p, &n) in m {
            let t = total.entry(p).or_insert(0);
            *t = t.saturating_add(n);
        }
        let Some(after) = ha.get(h) else { continue };
        let Some(q) = main_priority(after) else { continue };
        for (&p, &n) in m.iter().filter(|(p, _)| **p != q && !after.contains_key(p)) {
            let x = moved.entry(p).or_default().entry(q).or_insert(0);
            *x = x.saturating_add(n);
        }
    }
    for (p, dests) in moved {
        let t = total.get(&p).copied().unwrap_or(0);
        let n = dests.values().fold(0u64, |s, x| s.saturating_add(*x));
        if t == 0 || n == 0 || (n as f64) < CLASS_LEFT_SHARE * t as f64 {
            continue;
        }
        let Some(q) = main_priority(&dests) else { continue };
        let share = (n as f64 / t as f64 * 100.0).round();
        let dir = class_direction(p, q, b, a, expect);
        let title = if dir == Direction::Toward {
            format!("priority {p} lost {share:.0}% of its RoCE to priority {q}: fixed, priority {q} is the expected class")
        } else {
            let which = match expect.lossless_priorities.as_deref() {
                Some(l) if l.contains(&q) => "which is lossless",
                Some(_) => "which is lossy",
                None => "where it was not before",
            };
            format!("priority {p} lost {share:.0}% of its RoCE; it now travels on priority {q}, {which}")
        };
        out.push(Verdict {
            severity: dir.severity(Severity::Critical),
            kind: "class_left",
            title,
            point: Some(a.name.clone()),
            priority: Some(p),
            rests_on: vec!["qps"],
            weight: n,
            finding: None,
        });
    }
}

/// RoCEv1 appearing (none before, or its share beyond noise above before's): a WARNING, the
/// classic slip of a wrong GID index (NCCL_IB_GID_INDEX picking a RoCEv1 GID).
pub fn version_verdicts(b: &Profile, a: &Profile, rows: &[Row], out: &mut Vec<Verdict>) {
    let share = rows.iter().find(|r| r.metric == "roce_v1_share");
    if a.roce_v1 == 0 || !(b.roce_v1 == 0 || share.is_some_and(Row::rose)) {
        return;
    }
    let pct = a.roce_v1 as f64 * 100.0 / a.roce.max(1) as f64;
    let before = if b.roce_v1 == 0 { "none before".to_string() } else { format!("{} before", b.roce_v1) };
    out.push(Verdict {
        severity: Severity::Warning,
        kind: "rocev1_appeared",
        title: format!(
            "RoCEv1 (EtherType 0x8915) appeared: {} packets after ({pct:.0}% of RoCE), {before}: not routable, no ECN; the classic slip is a GID index naming a RoCEv1 GID (NCCL_IB_GID_INDEX, show_gids)",
            a.roce_v1
        ),
        point: None,
        priority: None,
        rests_on: vec!["roce_v1_share"],
        weight: a.roce_v1,
        finding: None,
    });
}
