//! The NCCL settings on both sides of a change (`compare --nccl-env`, or two reports made
//! with `report --nccl-env`; docs/verdicts.md "Change verdicts"): each variable's verdict
//! before and after, and a verdict on the change when a setting that matched the wire no
//! longer does (the wire moved, not the job's environment: a re-marking switch, a NIC's
//! forced class) or starts to. When the environment is the same on both sides and the wire
//! moved, the verdict says the fabric moved (which hosts and QPs, from what to what) and
//! does not advise changing the job to match a broken switch.

use super::profile::QpFact;
use super::{Profile, Verdict};
use crate::report::Severity;
use serde::Serialize;
use std::collections::HashMap;

/// One variable on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NcclChange {
    /// The variable (`NCCL_IB_TC`).
    pub name: String,
    /// Its value in the file (null: NCCL's default), as the AFTER side read it.
    pub value: Option<String>,
    /// Its value on the BEFORE side, when that differs (two report documents made with
    /// different environment files): then the verdicts do not say the wire moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_value: Option<Option<String>>,
    /// Its verdict before: `match`, `mismatch`, `not_checked`, or `absent` (that side was
    /// not checked: a report without an `nccl` section, or a Parquet directory).
    pub before: String,
    /// Its verdict after.
    pub after: String,
    /// For a mismatch after: the value that would match the wire. Absent when the setting
    /// matched the wire before with the same environment: then the fabric moved, and the
    /// job is not what to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_match: Option<String>,
    /// What the AFTER capture shows.
    pub wire: String,
    /// What the BEFORE capture showed, when it differs from the AFTER's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_before: Option<String>,
}

/// Every variable either side checked, in the order the checks list them (AFTER's first).
pub fn changes(before: &Profile, after: &Profile) -> Vec<NcclChange> {
    let (b, a) = (before.nccl.as_deref().unwrap_or_default(), after.nccl.as_deref().unwrap_or_default());
    // Each side's variables by name (the first of a name, as a search would find): a search
    // of both lists per variable took 10-13 s at 40,000 variables.
    fn by_name(vars: &[super::NcclVarFacts]) -> HashMap<&str, &super::NcclVarFacts> {
        let mut m: HashMap<&str, &super::NcclVarFacts> = HashMap::with_capacity(vars.len());
        for v in vars {
            m.entry(v.name.as_str()).or_insert(v);
        }
        m
    }
    let (bm, am) = (by_name(b), by_name(a));
    let mut names: Vec<&str> = a.iter().map(|v| v.name.as_str()).collect();
    names.extend(b.iter().map(|v| v.name.as_str()).filter(|n| !am.contains_key(n)));
    names
        .into_iter()
        .map(|name| {
            let (vb, va) = (bm.get(name).copied(), am.get(name).copied());
            let verdict = |v: Option<&super::NcclVarFacts>| {
                v.map_or_else(|| "absent".to_string(), |v| v.verdict.clone())
            };
            let differs = vb.zip(va).is_some_and(|(b, a)| b.value != a.value);
            let (before, after) = (verdict(vb), verdict(va));
            // The same setting matched before: the wire moved, not the job.
            let fabric_moved = !differs && before == "match" && after == "mismatch";
            let wire = va.map(|v| v.wire.clone()).unwrap_or_default();
            NcclChange {
                name: name.to_string(),
                value: va.or(vb).and_then(|v| v.value.clone()),
                before_value: differs.then(|| vb.and_then(|v| v.value.clone())),
                before,
                after,
                would_match: va.and_then(|v| v.would_match.clone()).filter(|_| !fabric_moved),
                wire_before: vb.map(|v| v.wire.clone()).filter(|w| *w != wire && !w.is_empty()),
                wire,
            }
        })
        .collect()
}

/// `NCCL_IB_TC=104`, or `NCCL_IB_TC (unset)`.
fn setting(c: &NcclChange) -> String {
    match &c.value {
        Some(v) => format!("{}={v}", c.name),
        None => format!("{} (unset, NCCL's default)", c.name),
    }
}

/// What moved on the wire under the variable of `c`: per source host whose requests changed
/// marks, `10.0.0.1, 10.0.0.2 (2 QPs): DSCP 26 → 0`, for the variables that set a mark (the traffic
/// class: DSCP; the service level: PCP); for the others, the two captures' own words.
fn moved(c: &NcclChange, before: &Profile, after: &Profile) -> String {
    let mark: Option<(&str, MarksOf)> = match c.name.as_str() {
        "NCCL_IB_TC" | "NCCL_IB_FIFO_TC" => Some(("DSCP", |q| &q.dscp)),
        "NCCL_IB_SL" => Some(("PCP", |q| &q.pcp)),
        _ => None,
    };
    let hosts = mark.map(|(kind, of)| (kind, host_moves(before, after, of))).filter(|(_, m)| !m.is_empty());
    match hosts {
        Some((kind, m)) => {
            // Hosts with the same move together: `10.0.0.1, 10.0.0.2 (3 QPs): DSCP 26 → 0`.
            // In the order of their first host; one look-up a host (many hosts, few moves).
            let mut groups: Vec<(String, Vec<&str>, usize)> = Vec::new();
            let mut group_of: HashMap<String, usize> = HashMap::new();
            for h in &m {
                let mv = format!("{kind} {} → {}", marks(&h.before), marks(&h.after));
                match group_of.get(&mv).and_then(|&i| groups.get_mut(i)) {
                    Some(g) => {
                        g.1.push(&h.host);
                        g.2 += h.qps;
                    }
                    None => {
                        group_of.insert(mv.clone(), groups.len());
                        groups.push((mv, vec![&h.host], h.qps));
                    }
                }
            }
            let shown: Vec<String> = groups
                .iter()
                .map(|(mv, hosts, qps)| {
                    let more = hosts.len().saturating_sub(MAX_HOSTS);
                    let mut names = hosts.iter().take(MAX_HOSTS).copied().collect::<Vec<_>>().join(", ");
                    if more > 0 {
                        names.push_str(&format!(" and {more} more"));
                    }
                    format!("{names} ({qps} {}): {mv}", if *qps == 1 { "QP" } else { "QPs" })
                })
                .collect();
            format!("the requests of {}", shown.join("; "))
        }
        None => match &c.wire_before {
            Some(b) => format!("before, {b}; after, {}", c.wire),
            None => format!("the wire now shows {}", c.wire),
        },
    }
}

/// A data flow's marks of one kind (its DSCPs, its PCPs).
type MarksOf = fn(&QpFact) -> &[u8];

/// Hosts named per move in a fabric-moved verdict before "and N more".
const MAX_HOSTS: usize = 4;

/// One source host whose requests changed marks.
struct HostMove {
    host: String,
    /// Its QPs that sent data after.
    qps: usize,
    before: Vec<u8>,
    after: Vec<u8>,
}

/// `26`, `0/26`.
fn marks(v: &[u8]) -> String {
    v.iter().map(u8::to_string).collect::<Vec<_>>().join("/")
}

/// Per source host seen on both sides, the marks (`of`) its data flows carried before and
/// after, where they differ: hosts, not QPs, survive a job restart that renumbers QPs.
fn host_moves(before: &Profile, after: &Profile, of: MarksOf) -> Vec<HostMove> {
    use std::collections::{BTreeMap, BTreeSet};
    type Seen = BTreeMap<String, (BTreeSet<u8>, BTreeSet<String>)>;
    let per_host = |p: &Profile| {
        let mut m: Seen = BTreeMap::new();
        for q in p.points.iter().flat_map(|pt| &pt.qp).filter(|q| q.data_packets > 0) {
            let host = q.qp.split(" > ").next().unwrap_or(&q.qp).to_string();
            let e = m.entry(host).or_default();
            e.0.extend(of(q).iter().copied());
            e.1.insert(q.qp.clone());
        }
        m
    };
    let (b, a) = (per_host(before), per_host(after));
    a.into_iter()
        .filter_map(|(host, (marks_after, qps))| {
            let (marks_before, _) = b.get(&host)?;
            (*marks_before != marks_after && !marks_after.is_empty()).then(|| HostMove {
                host,
                qps: qps.len(),
                before: marks_before.iter().copied().collect(),
                after: marks_after.into_iter().collect(),
            })
        })
        .collect()
}

/// The verdicts on the NCCL settings' change: a WARNING per variable that matched the wire
/// before and does not after with the same environment (the fabric moved, in words `moved` builds), an INFO per one that did not and does, and an INFO when only
/// one side was checked.
pub fn verdicts(before: &Profile, after: &Profile, changes: &[NcclChange], out: &mut Vec<Verdict>) {
    let verdict = |severity, kind, title| Verdict {
        severity,
        kind,
        title,
        point: None,
        priority: None,
        rests_on: vec!["nccl"],
        weight: 0,
        finding: None,
    };
    match (before.nccl.is_some(), after.nccl.is_some()) {
        (true, false) | (false, true) => {
            let (checked, not) =
                if before.nccl.is_some() { ("BEFORE", "AFTER") } else { ("AFTER", "BEFORE") };
            out.push(verdict(
                Severity::Info,
                "nccl_one_side",
                format!(
                    "the NCCL settings were checked on the {checked} side only: the {not} side is a report without \
                     an nccl section or a Parquet directory (run report --nccl-env on its capture)"
                ),
            ));
            return;
        }
        (false, false) => return,
        (true, true) => {}
    }
    for c in changes {
        if let Some(was) = &c.before_value {
            out.push(verdict(
                Severity::Info,
                "nccl_setting_changed",
                format!(
                    "{} was {} before and is {} after: the sides were checked against different environments, \
                     so their verdicts do not say whether the wire moved",
                    c.name,
                    was.as_deref().unwrap_or("unset"),
                    c.value.as_deref().unwrap_or("unset")
                ),
            ));
            continue;
        }
        match (c.before.as_str(), c.after.as_str()) {
            ("match", "mismatch") => out.push(verdict(
                Severity::Warning,
                "nccl_now_mismatch",
                format!(
                    "the fabric moved: {} is the same on both sides and matched the wire before the change, \
                     not after: {}; fix the fabric (a switch re-marking, a NIC's trust mode or forced class), \
                     not the job",
                    setting(c),
                    moved(c, before, after)
                ),
            )),
            ("mismatch", "match") => out.push(verdict(
                Severity::Info,
                "nccl_now_match",
                format!("{} did not match the wire before the change and does after", setting(c)),
            )),
            _ => {}
        }
    }
}
