//! The NCCL settings on both sides of a change (`compare --nccl-env`, or two reports made
//! with `report --nccl-env`; docs/verdicts.md "Change verdicts"): each variable's verdict
//! before and after, and a verdict on the change when a setting that matched the wire no
//! longer does (the wire moved, not the job's environment: a re-marking switch, a NIC's
//! forced class) or starts to.

use super::{Profile, Verdict};
use crate::report::Severity;
use serde::Serialize;

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
    /// For a mismatch after: the value that would match the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_match: Option<String>,
    /// What the AFTER capture shows.
    pub wire: String,
}

/// Every variable either side checked, in the order the checks list them (AFTER's first).
pub fn changes(before: &Profile, after: &Profile) -> Vec<NcclChange> {
    let (b, a) = (before.nccl.as_deref().unwrap_or_default(), after.nccl.as_deref().unwrap_or_default());
    let mut names: Vec<&str> = a.iter().map(|v| v.name.as_str()).collect();
    names.extend(b.iter().map(|v| v.name.as_str()).filter(|n| !a.iter().any(|v| v.name == *n)));
    names
        .into_iter()
        .map(|name| {
            let (vb, va) = (b.iter().find(|v| v.name == name), a.iter().find(|v| v.name == name));
            let verdict = |v: Option<&super::NcclVarFacts>| {
                v.map_or_else(|| "absent".to_string(), |v| v.verdict.clone())
            };
            let differs = vb.zip(va).is_some_and(|(b, a)| b.value != a.value);
            NcclChange {
                name: name.to_string(),
                value: va.or(vb).and_then(|v| v.value.clone()),
                before_value: differs.then(|| vb.and_then(|v| v.value.clone())),
                before: verdict(vb),
                after: verdict(va),
                would_match: va.and_then(|v| v.would_match.clone()),
                wire: va.map(|v| v.wire.clone()).unwrap_or_default(),
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

/// The verdicts on the NCCL settings' change: a WARNING per variable that matched the wire
/// before and does not after, an INFO per one that did not and does, and an INFO when only
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
                    "{} matched the wire before the change and does not after{}",
                    setting(c),
                    c.would_match
                        .as_deref()
                        .map_or(String::new(), |w| format!(": {}={w} would match now", c.name))
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
