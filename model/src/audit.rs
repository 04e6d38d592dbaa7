//! The QoS audit in the report (`audit`): what was expected ([`AuditConfig`], with the trust
//! mode and DSCP map priorities were read by) and what differed ([`Violation`]). The checks
//! themselves, packet by packet, are the analyzer's (its `audit` module).

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The field a device takes a frame's priority from (reference §1.9: mlx5's QPTS register
/// "allow changing the trust state between dscp and pcp mode").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// The VLAN PCP when the frame is tagged; an untagged frame has no PCP, so its DSCP
    /// through the map. The default (rocescope's behaviour before trust modes existed).
    #[default]
    Pcp,
    /// The DSCP through the map, tagged or not.
    Dscp,
}

impl Trust {
    /// `pcp` or `dscp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Pcp => "pcp",
            Trust::Dscp => "dscp",
        }
    }
}

impl FromStr for Trust {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pcp" => Ok(Trust::Pcp),
            "dscp" => Ok(Trust::Dscp),
            _ => Err(format!("{s:?} is not a trust mode (dscp or pcp)")),
        }
    }
}

impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which VLAN tag of a double-tagged (QinQ) frame gives its PCP. A switch on a QinQ trunk
/// (an S-VLAN component, IEEE 802.1ad) classifies a double-tagged frame on its outer tag,
/// the S-tag; the inner C-tag's PCP is the customer's and is carried through untouched.
/// Single-tagged frames have one PCP either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PcpTag {
    /// The outermost tag (the S-tag of QinQ): the default, what a provider bridge reads.
    #[default]
    Outer,
    /// The innermost tag (the C-tag): a port that classifies on the customer's tag.
    Inner,
}

impl PcpTag {
    /// `outer` or `inner`.
    pub fn as_str(self) -> &'static str {
        match self {
            PcpTag::Outer => "outer",
            PcpTag::Inner => "inner",
        }
    }
}

impl FromStr for PcpTag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "outer" => Ok(PcpTag::Outer),
            "inner" => Ok(PcpTag::Inner),
            _ => Err(format!("{s:?} is not a VLAN tag to read the PCP from (outer or inner)")),
        }
    }
}

impl fmt::Display for PcpTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A DSCP → priority table (64 entries). Built from `DSCP:PRIORITY` pairs; DSCPs not listed
/// map to priority 0, as on mlx5 before it is configured (reference §1.9).
///
/// ```
/// use rocescope_model::audit::DscpMap;
///
/// let m: DscpMap = "3:3,4:4,26:3".parse().unwrap();
/// assert_eq!((m.get(3), m.get(4), m.get(26), m.get(46)), (3, 4, 3, 0));
/// assert_eq!(m.to_string(), "3:3,4:4,26:3");
/// assert!("3:8".parse::<DscpMap>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DscpMap([u8; 64]);

impl DscpMap {
    /// The priority of `dscp` (its low six bits).
    pub fn get(&self, dscp: u8) -> u8 {
        self.0.get(usize::from(dscp & 63)).copied().unwrap_or(0)
    }

    /// The table from (DSCP, priority) pairs; every other DSCP maps to 0. A DSCP above 63,
    /// a priority above 7 or a DSCP listed twice is an error.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u64, u64)>) -> Result<Self, String> {
        let mut t = [0u8; 64];
        let mut listed = 0u64;
        for (d, p) in pairs {
            let dscp = u8::try_from(d).ok().filter(|d| *d < 64).ok_or(format!("DSCP {d} is not 0..=63"))?;
            let prio = u8::try_from(p).ok().filter(|p| *p < 8).ok_or(format!("priority {p} is not 0..=7"))?;
            if listed & (1 << dscp) != 0 {
                return Err(format!("DSCP {dscp} is listed twice"));
            }
            listed |= 1 << dscp;
            if let Some(slot) = t.get_mut(usize::from(dscp)) {
                *slot = prio;
            }
        }
        Ok(DscpMap(t))
    }

    /// The 64 priorities, indexed by DSCP.
    pub fn table(&self) -> &[u8; 64] {
        &self.0
    }
}

impl FromStr for DscpMap {
    type Err = String;

    /// `DSCP:PRIORITY[,DSCP:PRIORITY...]`, e.g. `3:3,4:4,26:3`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |item: &str| format!("{item:?} is not DSCP:PRIORITY (like 3:3,4:4,26:3)");
        let mut pairs = Vec::new();
        for item in s.split(',').map(str::trim) {
            let (d, p) = item.split_once(':').ok_or_else(|| bad(item))?;
            let d = d.trim().parse::<u64>().map_err(|_| bad(item))?;
            let p = p.trim().parse::<u64>().map_err(|_| bad(item))?;
            pairs.push((d, p));
        }
        DscpMap::from_pairs(pairs)
    }
}

impl fmt::Display for DscpMap {
    /// The entries that are not 0, as `DSCP:PRIORITY` pairs (`-` when all are 0).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> =
            self.0.iter().enumerate().filter(|(_, p)| **p != 0).map(|(d, p)| format!("{d}:{p}")).collect();
        if items.is_empty() {
            f.write_str("-")
        } else {
            f.write_str(&items.join(","))
        }
    }
}

impl fmt::Debug for DscpMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DscpMap({self})")
    }
}

/// In the JSON report: the 64 priorities, indexed by DSCP.
impl Serialize for DscpMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

/// From a baseline file: a table `{ 3 = 3, 26 = 3 }` or the option's text `"3:3,26:3"`.
impl<'de> Deserialize<'de> for DscpMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DscpMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of DSCP = priority, or \"DSCP:PRIORITY,...\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DscpMap, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<DscpMap, A::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, i64>()? {
                    let d = k.trim().parse::<u64>().map_err(|_| {
                        de::Error::custom(format!("dscp_map key {k:?} is not a DSCP (0..=63)"))
                    })?;
                    let p = u64::try_from(v)
                        .map_err(|_| de::Error::custom(format!("priority {v} is not 0..=7")))?;
                    pairs.push((d, p));
                }
                DscpMap::from_pairs(pairs).map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// What the fabric expects, and how it maps a frame to a priority. Every check is off until
/// its value is given; `trust` and `dscp_map` only say how priorities are read.
///
/// Baseline file (TOML) keys are the field names; `roce_dscp`, `ack_dscp` and `cnp_dscp` take
/// one number or a list, `dscp_map` a table (`{ 3 = 3, 26 = 3 }`) or the `--dscp-map` text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// DSCPs allowed for RoCE data (requests and READ responses; ACK/NAKs too until
    /// `ack_dscp` is given), e.g. `[26]` or SONiC's `[3, 4]`.
    #[serde(default, deserialize_with = "one_or_many")]
    pub roce_dscp: Option<Vec<u8>>,
    /// DSCPs allowed for ACK/NAKs (Acknowledge and Atomic Acknowledge), e.g. `[44]`: given,
    /// ACK/NAKs are a class of their own and only their DSCP is checked.
    #[serde(default, deserialize_with = "one_or_many")]
    pub ack_dscp: Option<Vec<u8>>,
    /// DSCPs allowed for CNPs (e.g. `[48]`; deployments differ: 46 is also seen).
    #[serde(default, deserialize_with = "one_or_many")]
    pub cnp_dscp: Option<Vec<u8>>,
    /// 802.1p PCP of RoCE data (e.g. 3): tagged data must carry it, and untagged data is a
    /// `pcp_untagged` violation (it carries none to check).
    pub roce_pcp: Option<u8>,
    /// Priorities with PFC enabled (lossless): RoCE data must map to one, and pauses on
    /// others are flagged.
    pub lossless_priorities: Option<Vec<u8>>,
    /// RoCE data must be ECN-capable (ECT(0), ECT(1) or CE).
    #[serde(default)]
    pub ecn_capable: bool,
    /// Where a frame's priority comes from.
    #[serde(default)]
    pub trust: Trust,
    /// DSCP → priority; `None` is DSCP >> 3.
    #[serde(default)]
    pub dscp_map: Option<DscpMap>,
    /// Which tag of a QinQ frame gives its PCP (the outer one by default).
    #[serde(default)]
    pub pcp_tag: PcpTag,
    /// DSCPs allowed in the outer header of overlay (VXLAN/Geneve transport) RoCE data: the
    /// underlay classifies on it (crate::overlay).
    #[serde(default, deserialize_with = "one_or_many")]
    pub outer_dscp: Option<Vec<u8>>,
}

/// One number or a list of them, for the DSCP keys of a baseline file.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a DSCP or a list of DSCPs")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Vec<u8>, E> {
            u8::try_from(v).map(|v| vec![v]).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Vec<u8>, E> {
            u8::try_from(v).map(|v| vec![v]).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Vec<u8>, A::Error> {
            let mut v = Vec::new();
            while let Some(x) = s.next_element::<u8>()? {
                v.push(x);
            }
            Ok(v)
        }
    }
    d.deserialize_any(V).map(Some)
}

/// The single value of a list of one, for the JSON keys that predate lists.
fn single(v: &Option<Vec<u8>>) -> Option<u8> {
    match v.as_deref() {
        Some([one]) => Some(*one),
        _ => None,
    }
}

/// In the JSON report (`audit.expected`): the keys of earlier builds (`roce_dscp` and
/// `cnp_dscp` hold the value when exactly one is expected, else null), then the lists, the
/// trust mode and the map (64 priorities, or null for DSCP >> 3).
impl Serialize for AuditConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Expected<'a> {
            roce_dscp: Option<u8>,
            cnp_dscp: Option<u8>,
            roce_pcp: Option<u8>,
            lossless_priorities: &'a Option<Vec<u8>>,
            ecn_capable: bool,
            roce_dscps: &'a Option<Vec<u8>>,
            ack_dscps: &'a Option<Vec<u8>>,
            cnp_dscps: &'a Option<Vec<u8>>,
            trust: Trust,
            dscp_map: &'a Option<DscpMap>,
            pcp_tag: PcpTag,
            outer_dscps: &'a Option<Vec<u8>>,
        }
        Expected {
            roce_dscp: single(&self.roce_dscp),
            cnp_dscp: single(&self.cnp_dscp),
            roce_pcp: self.roce_pcp,
            lossless_priorities: &self.lossless_priorities,
            ecn_capable: self.ecn_capable,
            roce_dscps: &self.roce_dscp,
            ack_dscps: &self.ack_dscp,
            cnp_dscps: &self.cnp_dscp,
            trust: self.trust,
            dscp_map: &self.dscp_map,
            pcp_tag: self.pcp_tag,
            outer_dscps: &self.outer_dscp,
        }
        .serialize(s)
    }
}

impl AuditConfig {
    /// True when any check is configured (the trust mode and the map are not checks). With
    /// none, the audit checks nothing ("not audited"), and only the marking's consistency is
    /// looked at (report::marking).
    pub fn is_set(&self) -> bool {
        self.roce_dscp.is_some()
            || self.ack_dscp.is_some()
            || self.cnp_dscp.is_some()
            || self.roce_pcp.is_some()
            || self.lossless_priorities.is_some()
            || self.ecn_capable
            || self.outer_dscp.is_some()
    }

    /// Check the ranges (DSCP 0..=63, PCP and priorities 0..=7; lists not empty) and put the
    /// lists in order without repeats. The error names the key.
    pub fn normalize(&mut self) -> Result<(), String> {
        for (name, list, max) in [
            ("roce_dscp", &mut self.roce_dscp, 63),
            ("ack_dscp", &mut self.ack_dscp, 63),
            ("cnp_dscp", &mut self.cnp_dscp, 63),
            ("outer_dscp", &mut self.outer_dscp, 63),
            ("lossless_priorities", &mut self.lossless_priorities, 7),
        ] {
            let Some(l) = list else { continue };
            if l.is_empty() {
                return Err(format!("{name} is an empty list: give a value or leave it out"));
            }
            if let Some(bad) = l.iter().find(|v| **v > max) {
                return Err(format!("{name}: {bad} is not 0..={max}"));
            }
            l.sort_unstable();
            l.dedup();
        }
        if let Some(p) = self.roce_pcp.filter(|p| *p > 7) {
            return Err(format!("roce_pcp: {p} is not 0..=7"));
        }
        Ok(())
    }

    /// The priority DSCP `dscp` maps to: the map's, else DSCP >> 3.
    pub fn dscp_priority(&self, dscp: u8) -> u8 {
        match &self.dscp_map {
            Some(m) => m.get(dscp),
            None => (dscp & 63) >> 3,
        }
    }

    /// The priority of a frame with this DSCP and (when tagged) PCP, by the trust mode.
    ///
    /// ```
    /// use rocescope_model::audit::{AuditConfig, Trust};
    ///
    /// let mut a = AuditConfig::default();
    /// assert_eq!((a.priority(26, None), a.priority(26, Some(5)), a.priority(3, None)), (3, 5, 0));
    /// a.trust = Trust::Dscp;
    /// a.dscp_map = Some("3:3".parse().unwrap());
    /// assert_eq!((a.priority(3, Some(0)), a.priority(26, None)), (3, 0));
    /// ```
    pub fn priority(&self, dscp: u8, pcp: Option<u8>) -> u8 {
        match (self.trust, pcp) {
            (Trust::Pcp, Some(p)) => p & 7,
            _ => self.dscp_priority(dscp),
        }
    }

    /// How priorities are read, in words for reports: `PCP when tagged, else DSCP >> 3`,
    /// `DSCP, map 3:3,4:4, other DSCPs 0`, ...
    pub fn priority_rule(&self) -> String {
        let dscp = match &self.dscp_map {
            Some(m) => format!("DSCP, map {m}, other DSCPs 0"),
            None => "DSCP >> 3".to_string(),
        };
        let pcp = match self.pcp_tag {
            PcpTag::Outer => "PCP",
            PcpTag::Inner => "PCP (inner tag)",
        };
        match self.trust {
            Trust::Pcp => format!("{pcp} when tagged, else {dscp}"),
            Trust::Dscp => dscp,
        }
    }
}

/// The QoS audit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AuditReport {
    /// Something was expected (`--expect-*`, `--lossless`, `--baseline`): false means
    /// the audit checked nothing ("not audited", never "clean"); the marking's consistency
    /// is checked either way (`marking_inconsistent` findings).
    pub audited: bool,
    /// Expectations given (written as [`AuditConfig`]'s `Serialize` says; a baseline file
    /// reads another way, [`AuditConfig`]'s `Deserialize`).
    #[serde(deserialize_with = "expected_from_report")]
    pub expected: AuditConfig,
    /// Differences found.
    pub violations: Vec<Violation>,
}

/// `audit.expected` as a report writes it ([`AuditConfig`]'s `Serialize`), read back: the
/// lists (`roce_dscps`, `ack_dscps`, `cnp_dscps`, `outer_dscps`), the trust mode, the PCP tag
/// and the map (64 priorities, or null for DSCP >> 3). The single values of earlier builds
/// (`roce_dscp`, `cnp_dscp`) stand for their lists when a document has no list.
fn expected_from_report<'de, D: Deserializer<'de>>(d: D) -> Result<AuditConfig, D::Error> {
    #[derive(Deserialize)]
    #[serde(default)]
    #[derive(Default)]
    struct Expected {
        roce_dscp: Option<u8>,
        cnp_dscp: Option<u8>,
        roce_pcp: Option<u8>,
        lossless_priorities: Option<Vec<u8>>,
        ecn_capable: bool,
        roce_dscps: Option<Vec<u8>>,
        ack_dscps: Option<Vec<u8>>,
        cnp_dscps: Option<Vec<u8>>,
        trust: Trust,
        dscp_map: Option<Vec<u8>>,
        pcp_tag: PcpTag,
        outer_dscps: Option<Vec<u8>>,
    }
    let e = Expected::deserialize(d)?;
    let dscp_map = match e.dscp_map {
        None => None,
        Some(t) if t.len() == 64 => Some(
            DscpMap::from_pairs((0u64..).zip(t.iter().map(|p| u64::from(*p)))).map_err(de::Error::custom)?,
        ),
        Some(t) => return Err(de::Error::invalid_length(t.len(), &"64 priorities, one per DSCP")),
    };
    Ok(AuditConfig {
        roce_dscp: e.roce_dscps.or(e.roce_dscp.map(|v| vec![v])),
        ack_dscp: e.ack_dscps,
        cnp_dscp: e.cnp_dscps.or(e.cnp_dscp.map(|v| vec![v])),
        roce_pcp: e.roce_pcp,
        lossless_priorities: e.lossless_priorities,
        ecn_capable: e.ecn_capable,
        trust: e.trust,
        dscp_map,
        pcp_tag: e.pcp_tag,
        outer_dscp: e.outer_dscps,
    })
}

/// Every kind of violation ([`Violation::what`]), for consumers that list them all (the
/// exporter serves each from 0).
pub const VIOLATION_KINDS: &[&str] = &[
    "dscp",
    "outer_dscp",
    "ack_dscp",
    "cnp_dscp",
    "pcp",
    "pcp_untagged",
    "ecn",
    "not_lossless",
    "pause_priority",
    "no_roce",
];

/// The flow a violation is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FlowRef {
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
}

/// One audit violation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// The flow (absent for pause-frame violations, which belong to a MAC and priority, and
    /// for the capture-wide `pcp_untagged` and `no_roce`).
    pub flow: Option<FlowRef>,
    /// `dscp`, `ack_dscp`, `cnp_dscp`, `pcp`, `pcp_untagged`, `ecn`, `not_lossless`,
    /// `pause_priority` or `no_roce`.
    pub what: Cow<'static, str>,
    /// What was expected: a number, or a list when several values are allowed; for `ecn`,
    /// the text "ECN-capable"; for `not_lossless`, the lossless priorities; for
    /// `pause_priority`, the lossless priorities or those RoCE uses; for `no_roce`, "RoCE".
    pub expected: Value,
    /// What was seen (for `pcp_untagged`, "untagged"; for `not_lossless` and
    /// `pause_priority`, the priority; for `no_roce`, 0).
    pub seen: Value,
    /// Packets (or pause frames) that differ; for `no_roce`, the frames of the capture.
    pub packets: u64,
    /// First such frame (for `no_roce`, 1, or 0 when the capture holds no frame).
    pub first_frame: u64,
    /// Source MAC, for pause-frame violations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_mac: Option<String>,
    /// Index of the flow in `Report::flows` (not in the JSON, which names the flow: `None`
    /// in a report read back from it).
    #[serde(skip)]
    pub flow_index: Option<usize>,
}

impl Violation {
    /// Whether an expectation the user gave (`audit`: --expect-*, --baseline) is what this
    /// violates. A pause on a priority no RoCE uses is a violation the analyzer derives
    /// itself: it counts only under a lossless-priority expectation that excludes the
    /// priority. The exit status policy gates on these (README "Exit status").
    pub fn of_expectation_given(&self, audit: &AuditConfig) -> bool {
        match self.what.as_ref() {
            "pause_priority" => {
                let seen = match self.seen {
                    Value::Num(n) => u8::try_from(n).ok(),
                    _ => None,
                };
                audit.lossless_priorities.as_ref().is_some_and(|l| seen.is_some_and(|p| !l.contains(&p)))
            }
            _ => true,
        }
    }
}

/// A value in a violation (`expected`, `seen`): a number, text or a list of numbers, as
/// JSON writes them (a tiny JSON value, so the model needs no JSON crate).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A number.
    Num(u64),
    /// Text.
    Text(Cow<'static, str>),
    /// A list of numbers.
    List(Vec<u64>),
}

impl Value {
    /// One number, or a list when there are several.
    pub fn of(v: &[u8]) -> Value {
        match v {
            [one] => Value::Num(u64::from(*one)),
            more => Value::List(more.iter().map(|x| u64::from(*x)).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(toml_like: &[(&str, Option<Vec<u8>>)]) -> AuditConfig {
        let mut a = AuditConfig::default();
        for (k, v) in toml_like {
            match *k {
                "roce" => a.roce_dscp = v.clone(),
                "ack" => a.ack_dscp = v.clone(),
                "cnp" => a.cnp_dscp = v.clone(),
                "lossless" => a.lossless_priorities = v.clone(),
                _ => unreachable!(),
            }
        }
        a
    }

    #[test]
    fn maps_parse_and_refuse() {
        let m: DscpMap = " 3:3, 4:4 ,26:3".parse().unwrap();
        assert_eq!(m.table().iter().filter(|p| **p != 0).count(), 3);
        assert_eq!(m.get(3 + 64), 3, "the low six bits");
        for bad in ["", "3", "3:", ":3", "3:3,", "64:1", "3:8", "3:3,3:3", "a:1", "-1:2"] {
            assert!(bad.parse::<DscpMap>().is_err(), "{bad:?}");
        }
        assert_eq!("0:0".parse::<DscpMap>().unwrap().to_string(), "-");
    }

    #[test]
    fn trust_modes() {
        let mut a = AuditConfig::default();
        // Today's rule: PCP when tagged, else DSCP >> 3.
        assert_eq!(a.priority(26, Some(0)), 0);
        assert_eq!(a.priority(26, None), 3);
        assert_eq!(a.priority(46, None), 5);
        assert_eq!(a.priority_rule(), "PCP when tagged, else DSCP >> 3");
        a.trust = Trust::Dscp;
        assert_eq!(a.priority(26, Some(0)), 3);
        a.dscp_map = Some("3:3,4:4".parse().unwrap());
        assert_eq!((a.priority(3, Some(6)), a.priority(4, None), a.priority(26, None)), (3, 4, 0));
        assert_eq!(a.priority_rule(), "DSCP, map 3:3,4:4, other DSCPs 0");
        assert_eq!("DSCP".parse::<Trust>(), Ok(Trust::Dscp));
        assert!("cos".parse::<Trust>().is_err());
    }

    #[test]
    fn normalize_sorts_and_checks_ranges() {
        let mut a = cfg(&[("roce", Some(vec![4, 3, 4])), ("cnp", Some(vec![46]))]);
        a.normalize().unwrap();
        assert_eq!(a.roce_dscp, Some(vec![3, 4]));
        assert!(cfg(&[("ack", Some(vec![64]))]).normalize().unwrap_err().contains("ack_dscp: 64"));
        assert!(cfg(&[("lossless", Some(vec![8]))]).normalize().unwrap_err().contains("lossless_priorities"));
        assert!(cfg(&[("roce", Some(vec![]))]).normalize().is_err());
        assert!(AuditConfig { roce_pcp: Some(9), ..Default::default() }.normalize().is_err());
    }

    #[test]
    fn expectations_read_back_from_the_report() {
        let mut a = cfg(&[("roce", Some(vec![3, 4])), ("ack", Some(vec![44])), ("cnp", Some(vec![48]))]);
        a.roce_pcp = Some(3);
        a.ecn_capable = true;
        a.trust = Trust::Dscp;
        a.dscp_map = Some("3:3,4:4".parse().unwrap());
        a.pcp_tag = PcpTag::Inner;
        a.outer_dscp = Some(vec![26]);
        for expected in [a, AuditConfig::default()] {
            let r = AuditReport { audited: expected.is_set(), expected, violations: Vec::new() };
            let text = serde_json::to_string(&r).unwrap();
            let back: AuditReport = serde_json::from_str(&text).unwrap();
            assert_eq!(back.expected, r.expected, "{text}");
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
        // A document of an earlier build, with single values and no lists.
        let old = r#"{"audited":true,"expected":{"roce_dscp":26,"cnp_dscp":48,"roce_pcp":null,"lossless_priorities":null,"ecn_capable":false},"violations":[]}"#;
        let back: AuditReport = serde_json::from_str(old).unwrap();
        assert_eq!((back.expected.roce_dscp, back.expected.cnp_dscp), (Some(vec![26]), Some(vec![48])));
        let short = r#"{"audited":false,"expected":{"dscp_map":[1,2]},"violations":[]}"#;
        assert!(serde_json::from_str::<AuditReport>(short).is_err(), "a map has 64 priorities");
    }

    #[test]
    fn violations_read_back() {
        let v = Violation {
            point: 0,
            flow: Some(FlowRef { src: "10.0.0.1".into(), dst: "10.0.0.2".into(), dest_qp: 7 }),
            what: "dscp".into(),
            expected: Value::of(&[3, 4]),
            seen: Value::Num(26),
            packets: 5,
            first_frame: 9,
            src_mac: None,
            flow_index: None,
        };
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.contains(r#""expected":[3,4],"seen":26"#), "{text}");
        assert_eq!(serde_json::from_str::<Violation>(&text).unwrap(), v);
        let t = Violation {
            what: "ecn".into(),
            expected: Value::Text("ECN-capable".into()),
            seen: Value::Num(0),
            ..v
        };
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Violation>(&text).unwrap(), t);
    }
}
