//! NCCL settings against the wire (the report's `nccl`, `--nccl-env`): each `NCCL_IB_*`
//! variable with its verdict. The rules that judge them are the analyzer's (`nccl`).

use crate::findings::{EvidenceRef, Finding, FindingKind, Severity};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What the capture says about one variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The wire shows what the setting sets.
    Match,
    /// It shows something else (`would_match` names the value that fits the wire).
    Mismatch,
    /// The capture cannot tell (`reason` says why).
    NotChecked,
}

impl Verdict {
    /// Its JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Match => "match",
            Verdict::Mismatch => "mismatch",
            Verdict::NotChecked => "not_checked",
        }
    }
}

/// One variable's check.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VarCheck {
    /// The variable (`NCCL_IB_TC`).
    pub name: String,
    /// Its value in the file; null when the file does not set it (NCCL's default applies).
    pub value: Option<String>,
    /// The line that set it (null when not set).
    pub line: Option<usize>,
    /// What it sets, in words: `DSCP 26 (106 >> 2); ECN bits from the NIC`, `ACK timeout
    /// 4.29 s (4.096 µs × 2^20)`; for an unset variable, NCCL's default.
    pub sets: String,
    /// What the capture shows, with counts.
    pub wire: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why it is not checked, what the mismatch is, or a note on a match. Absent when
    /// there is nothing to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a mismatch: the value of the variable that would match the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_match: Option<String>,
    /// For a mismatch: the severity of its `nccl_env_mismatch` finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// The flows (or host-pair directions, for NCCL_IB_QPS_PER_CONNECTION) the verdict rests on.
    pub checked: u64,
    /// Frames that show the wire's side (for a mismatch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<EvidenceRef>,
}

impl VarCheck {
    /// The setting as written: `NCCL_IB_TC=106`, or `NCCL_IB_TC unset`.
    pub fn setting(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.name),
            None => format!("{} unset", self.name),
        }
    }
}

/// The `nccl` section of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NcclCheck {
    /// The environment file (set by the caller; null when it did not say).
    pub file: Option<String>,
    /// The NCCL version the defaults were taken for (`--nccl-version`, or a `# nccl X.Y`
    /// comment in the file); null when unknown (then each default names the versions it
    /// holds for, and a check holds against every one of them).
    pub version: Option<NcclVersion>,
    /// One entry per variable: the checked ones always (set or not), then every other
    /// `NCCL_IB_*` the file sets (not checked).
    pub variables: Vec<VarCheck>,
    /// Variables matching the wire.
    pub matched: u64,
    /// Variables the wire contradicts.
    pub mismatched: u64,
    /// Variables not checked.
    pub not_checked: u64,
}

impl NcclCheck {
    /// One `nccl_env_mismatch` finding per variable the wire contradicts.
    pub fn findings(&self) -> Vec<Finding> {
        self.variables
            .iter()
            .filter(|v| v.verdict == Verdict::Mismatch)
            .map(|v| Finding {
                severity: v.severity.unwrap_or(Severity::Warning),
                kind: FindingKind::NcclEnvMismatch,
                title: format!(
                    "{} does not match the wire: {}{}",
                    v.setting(),
                    v.reason.as_deref().unwrap_or(&v.wire),
                    // Hosts that disagree get no value: the reason names them.
                    v.would_match
                        .as_deref()
                        .map_or(String::new(), |w| format!("; {}={w} would match", v.name))
                ),
                flow: None,
                src_mac: None,
                priority: None,
                evidence: v.evidence.clone(),
                weight: v.checked,
                folded: None,
            })
            .collect()
    }
}

/// An NCCL version (`2.23.4`; the patch level may be unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    /// Major (2).
    pub major: u32,
    /// Minor (23).
    pub minor: u32,
    /// Patch (4), when given.
    pub patch: Option<u32>,
}

impl NcclVersion {
    /// `2.23`, `2.23.4`, `v2.23.4-1`, `2.23.4+cuda12.6`: the numbers before any suffix.
    pub fn parse(s: &str) -> Option<NcclVersion> {
        let s = s.trim().trim_start_matches(['v', 'V']);
        let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let mut parts = s.get(..end)?.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok());
        Some(NcclVersion { major, minor, patch })
    }

    /// At least `major.minor` (the patch level does not matter to any default used here).
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for NcclVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// From its text (`2.23.4`), as [`NcclVersion::parse`] reads it.
impl<'de> Deserialize<'de> for NcclVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        NcclVersion::parse(&text).ok_or_else(|| {
            serde::de::Error::invalid_value(serde::de::Unexpected::Str(&text), &"an NCCL version")
        })
    }
}
