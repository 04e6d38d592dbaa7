//! Before and after: two captures' profiles side by side, each change with its size and
//! whether it is beyond the noise the two captures allow, and verdicts on the change, worst
//! first (`rocescope compare`; the rules: docs/verdicts.md "Change verdicts"; the JSON:
//! docs/compare-json.md).
//!
//! The pure part lives here, beside the report it reads, so that any tool holding two
//! reports (or their JSON documents) can compare them: [`ReportFacts`] (what is read of a
//! report), [`Profile`] (per capture point and priority), [`Comparison::new`] (rows,
//! verdicts, the points and priorities found on one side only). Reading captures, Parquet
//! tables and printing are the binary's and rocescope-output's.
//!
//! ```
//! use rocescope_analyzer::compare::{Comparison, Limits, Profile, ReportFacts};
//! use rocescope_analyzer::{Analyzer, Config};
//!
//! let report = Analyzer::new(Config::default()).report();
//! let facts = ReportFacts::from_report(&report).unwrap();
//! let p = Profile::from_facts(&facts);
//! let c = Comparison::new(&p, &p, &Limits::default());
//! assert!(c.verdicts.is_empty() && c.unmatched.is_empty());
//! ```

mod classes;
mod counters;
pub mod direction;
mod facts;
mod findings;
pub mod nccl;
pub mod noise;
mod profile;
mod rows;
pub mod samples;
pub mod schema;
mod verdicts;

pub use counters::CounterChange;
pub use facts::*;
pub use profile::{pool, ClassMarks, Marks, PointProfile, PriorityProfile, Profile, QpFact, Share};
pub use rows::Row;

use crate::report::Severity;
use serde::Serialize;

/// The version of the comparison's JSON schema (docs/compare.schema.json); it changes only
/// when a field is removed or renamed or changes its meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// The thresholds that make a change a verdict (`compare --fail-on NAME=VALUE`; the
/// defaults are documented in docs/verdicts.md "Change verdicts").
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Limits {
    /// A throughput fall of at least this share of before (0.2: 20%).
    pub throughput_drop: f64,
    /// A latency percentile rising at least this many times (1.5).
    pub latency_rise: f64,
    /// Network loss rising by at least this many packets per million (10).
    pub loss_ppm: f64,
    /// Resends rising by at least this many per million packets (1000).
    pub resend_ppm: f64,
    /// Paused time, CE fraction or CNPs per second rising at least this many times (4).
    pub congestion_rise: f64,
    /// Paused time must reach at least this many µs per second (1000: 0.1% of the time) to
    /// count as risen.
    pub pause_min_us_per_s: f64,
    /// A DSCP or PCP value counts when it carries at least this share of a class's packets
    /// (0.01).
    pub mark_share: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            throughput_drop: 0.2,
            latency_rise: 1.5,
            loss_ppm: 10.0,
            resend_ppm: 1000.0,
            congestion_rise: 4.0,
            pause_min_us_per_s: 1000.0,
            mark_share: 0.01,
        }
    }
}

impl Limits {
    /// The names `--fail-on NAME=VALUE` takes, with what each sets.
    pub const NAMES: &'static [(&'static str, &'static str)] = &[
        ("throughput-drop", "a throughput fall, as a share or percent of before (20%)"),
        ("latency-rise", "an ACK or READ latency p50/p99 ratio (1.5)"),
        ("loss-ppm", "a rise of network loss per million packets (10)"),
        ("resend-ppm", "a rise of resends per million packets (1000)"),
        ("congestion-rise", "a ratio of paused time, CE fraction or CNPs per second (4)"),
        ("pause-min", "paused µs per second that a rise must reach (1000)"),
        ("mark-share", "the share of a class's packets a DSCP/PCP value must carry (1%)"),
    ];

    /// Set the limit `name` to `value` (`20%` or `0.2` for shares, a number otherwise).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = value.trim();
        let (num, pct) = match v.strip_suffix('%') {
            Some(n) => (n, true),
            None => (v.strip_suffix('x').unwrap_or(v), false),
        };
        let x: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("{name}={value}: not a number (0 or more)"))?;
        let x = if pct { x / 100.0 } else { x };
        let share_ok = |x: f64| {
            if x <= 1.0 {
                Ok(x)
            } else {
                Err(format!("{name}={value}: a share from 0 to 1 (or 0% to 100%)"))
            }
        };
        match name {
            "throughput-drop" => self.throughput_drop = share_ok(x)?,
            "mark-share" => self.mark_share = share_ok(x)?,
            "latency-rise" | "congestion-rise" if x < 1.0 => {
                return Err(format!("{name}={value}: a ratio of at least 1"));
            }
            "latency-rise" => self.latency_rise = x,
            "congestion-rise" => self.congestion_rise = x,
            "loss-ppm" => self.loss_ppm = x,
            "resend-ppm" => self.resend_ppm = x,
            "pause-min" => self.pause_min_us_per_s = x,
            _ => {
                let names: Vec<&str> = Self::NAMES.iter().map(|n| n.0).collect();
                return Err(format!("unknown threshold {name:?} (one of: {})", names.join(", ")));
            }
        }
        Ok(())
    }
}

/// A verdict on the change, in the findings' style.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// How bad the change is.
    pub severity: Severity,
    /// The rule (docs/verdicts.md "Change verdicts"): `ecn_stopped`, `loss_rose`, ...
    pub kind: &'static str,
    /// What changed, in a sentence.
    pub title: String,
    /// The capture point (its AFTER name), when about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The priority, when about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The rows it rests on.
    pub rests_on: Vec<&'static str>,
    /// How much it weighs (packets or QPs concerned), for the order among equals.
    pub weight: u64,
    /// The report finding kind a `finding_rose` verdict is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
}

/// A capture point, or a priority at one, found on one side only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unmatched {
    /// `before` or `after`: the side that has it.
    pub side: &'static str,
    /// The capture point's name on that side.
    pub point: String,
    /// The priority; absent when the whole point is on one side only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// RoCE packets it holds there.
    pub packets: u64,
}

/// One priority compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriorityComparison {
    /// The priority.
    pub priority: u8,
    /// `both`, `before` or `after`: the sides that have it.
    pub sides: &'static str,
    /// The figures.
    pub rows: Vec<Row>,
}

/// A class's marks on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarksPair {
    /// Before.
    pub before: ClassMarks,
    /// After.
    pub after: ClassMarks,
}

/// One capture point compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointComparison {
    /// Its name after (the name before when they differ is `before_name`).
    pub name: String,
    /// Its name before.
    pub before_name: String,
    /// Before's span, ns.
    pub before_span_ns: u64,
    /// After's span, ns.
    pub after_span_ns: u64,
    /// QPs, connections, path MTU.
    pub rows: Vec<Row>,
    /// Per priority on either side.
    pub priorities: Vec<PriorityComparison>,
    /// Data marks.
    pub data: MarksPair,
    /// ACK/NAK marks.
    pub ack: MarksPair,
    /// CNP marks.
    pub cnp: MarksPair,
}

/// A finding kind's count on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingCount {
    /// The kind.
    pub kind: String,
    /// Findings before.
    pub before: u64,
    /// Findings after.
    pub after: u64,
}

/// Verdicts per severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct VerdictCounts {
    /// Critical.
    pub critical: u64,
    /// Warning.
    pub warning: u64,
    /// Info.
    pub info: u64,
}

/// Two profiles compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// How the capture points were paired.
    pub pairing: Pairing,
    /// Every capture point found on both sides.
    pub points: Vec<PointComparison>,
    /// What is on one side only (never silently dropped).
    pub unmatched: Vec<Unmatched>,
    /// Verdicts, worst first.
    pub verdicts: Vec<Verdict>,
    /// Verdicts per severity.
    pub counts: VerdictCounts,
    /// Rows whose change is beyond noise.
    pub changes_beyond_noise: u64,
    /// Capture-wide rows: `roce_v1_share`, `ipv6_share`.
    pub rows: Vec<Row>,
    /// The NIC counters' deltas on both sides, when both carry two snapshots.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterChange>,
    /// Neither side holds any RoCE: nothing was compared, and the gate says so with its own
    /// status (never a pass).
    pub nothing_to_compare: bool,
    /// The reports' findings per kind, where either side has some (empty when a side cannot
    /// say: a Parquet directory).
    pub findings: Vec<FindingCount>,
    /// The NCCL settings checked on either side (`--nccl-env`), each with its verdict
    /// before and after; absent when neither side was checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nccl: Vec<nccl::NcclChange>,
    /// The thresholds used.
    pub limits: Limits,
}

/// How the capture points of the two sides were paired (docs/verdicts.md "What is
/// compared").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pairing {
    /// `one_each`: one point on each side, paired whatever their names; `name`: by name;
    /// `path_below_root`: by the path below each side's root, the directory all of that
    /// side's points lie in (`before/host1/roce.pcap` with `after/host1/roce.pcap`: their
    /// paths are their names when the files share a name).
    pub by: &'static str,
    /// BEFORE's root (`path_below_root` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_root: Option<String>,
    /// AFTER's root (`path_below_root` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_root: Option<String>,
    /// Points paired.
    pub paired: u64,
}

/// The directory all of `names` lie in, with its trailing `/` (`before/` for
/// `before/host1/roce.pcap` and `before/host2/roce.pcap`); `None` when they share none or
/// are not paths.
fn root<'a>(names: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut common: Option<Vec<&str>> = None;
    for name in names {
        // The directories a name lies in: all but its last part.
        let mut parts: Vec<&str> = name.split('/').collect();
        parts.pop();
        common = Some(match common {
            None => parts,
            Some(c) => c.iter().zip(&parts).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    let common = common?;
    // `/x` splits into "", "x": a root of "" alone is `/`, which every absolute path shares.
    (!common.is_empty() && common != [""]).then(|| common.join("/") + "/")
}

/// Pair the capture points: one on each side pair whatever their names (a capture before
/// and after a change rarely shares a file name); else by name, or by the path below each
/// side's root when that pairs more of them (issue 40: `before/hostN/roce.pcap` and
/// `after/hostN/roce.pcap` are named by their paths, which never matched).
fn pair_points<'a>(
    before: &'a Profile,
    after: &'a Profile,
) -> (Vec<(&'a PointProfile, &'a PointProfile)>, Vec<Unmatched>, Pairing) {
    let roce = |p: &PointProfile| p.priorities.iter().map(|x| x.packets).sum::<u64>();
    if let ([b], [a]) = (before.points.as_slice(), after.points.as_slice()) {
        let pairing = Pairing { by: "one_each", before_root: None, after_root: None, paired: 1 };
        return (vec![(b, a)], Vec::new(), pairing);
    }
    let roots = (
        root(before.points.iter().map(|p| p.name.as_str())),
        root(after.points.iter().map(|p| p.name.as_str())),
    );
    fn below<'n>(name: &'n str, root: &Option<String>) -> &'n str {
        root.as_deref().and_then(|r| name.strip_prefix(r)).unwrap_or(name)
    }
    // The after side's points by name and by the path below its root (the first of a key, as
    // a search would find): one look-up a point, where a search of the other side per point
    // took 17-22 s at 40,000 points.
    let index = |root: Option<&Option<String>>| {
        let mut m: std::collections::HashMap<&'a str, &'a PointProfile> = std::collections::HashMap::new();
        for x in &after.points {
            m.entry(root.map_or(x.name.as_str(), |r| below(&x.name, r))).or_insert(x);
        }
        m
    };
    let (after_names, after_paths) = (index(None), index(Some(&roots.1)));
    let by_name = |b: &PointProfile| after_names.get(b.name.as_str()).copied();
    let by_path = |b: &PointProfile| after_paths.get(below(&b.name, &roots.0)).copied();
    let named = before.points.iter().filter(|b| by_name(b).is_some()).count();
    let pathed = before.points.iter().filter(|b| by_path(b).is_some()).count();
    let paths = pathed > named;
    let pairing = if paths {
        Pairing {
            by: "path_below_root",
            before_root: roots.0.clone(),
            after_root: roots.1.clone(),
            paired: pathed as u64,
        }
    } else {
        Pairing { by: "name", before_root: None, after_root: None, paired: named as u64 }
    };
    let partner = |b: &PointProfile| if paths { by_path(b) } else { by_name(b) };
    let mut pairs = Vec::new();
    let mut unmatched = Vec::new();
    for b in &before.points {
        match partner(b) {
            Some(a) => pairs.push((b, a)),
            None => unmatched.push(Unmatched {
                side: "before",
                point: b.name.clone(),
                priority: None,
                packets: roce(b),
            }),
        }
    }
    // The after side's points no before point took (by address: one look-up each).
    let taken: std::collections::HashSet<*const PointProfile> =
        pairs.iter().map(|(_, x)| *x as *const _).collect();
    for a in after.points.iter().filter(|a| !taken.contains(&(*a as *const PointProfile))) {
        unmatched.push(Unmatched { side: "after", point: a.name.clone(), priority: None, packets: roce(a) });
    }
    (pairs, unmatched, pairing)
}

impl Comparison {
    /// Compare `before` with `after` under `limits`, with no expectation.
    pub fn new(before: &Profile, after: &Profile, limits: &Limits) -> Comparison {
        Self::expecting(before, after, limits, &crate::audit::AuditConfig::default())
    }

    /// Compare `before` with `after` under `limits`, judging the direction of mark and
    /// class changes against `expect` (`--expect-*`, `--lossless`, `--baseline`): toward
    /// it is a fix (INFO), away from it at least a WARNING.
    pub fn expecting(
        before: &Profile,
        after: &Profile,
        limits: &Limits,
        expect: &crate::audit::AuditConfig,
    ) -> Comparison {
        let (pairs, mut unmatched, pairing) = pair_points(before, after);
        let mut points = Vec::new();
        for (b, a) in &pairs {
            let mut prios: Vec<u8> = b.priorities.iter().chain(&a.priorities).map(|p| p.priority).collect();
            prios.sort_unstable();
            prios.dedup();
            let priorities = prios
                .into_iter()
                .map(|p| {
                    let (pb, pa) = (b.priority(p), a.priority(p));
                    let sides = match (pb, pa) {
                        (Some(_), Some(_)) => "both",
                        (Some(x), None) => {
                            unmatched.push(Unmatched {
                                side: "before",
                                point: b.name.clone(),
                                priority: Some(p),
                                packets: x.packets,
                            });
                            "before"
                        }
                        _ => {
                            let packets = pa.map_or(0, |x| x.packets);
                            unmatched.push(Unmatched {
                                side: "after",
                                point: a.name.clone(),
                                priority: Some(p),
                                packets,
                            });
                            "after"
                        }
                    };
                    PriorityComparison {
                        priority: p,
                        sides,
                        rows: rows::priority_rows(pb, b.span_ns, pa, a.span_ns),
                    }
                })
                .collect();
            points.push(PointComparison {
                name: a.name.clone(),
                before_name: b.name.clone(),
                before_span_ns: b.span_ns,
                after_span_ns: a.span_ns,
                rows: rows::point_rows(b, a),
                priorities,
                data: MarksPair { before: b.marks.data.clone(), after: a.marks.data.clone() },
                ack: MarksPair { before: b.marks.ack.clone(), after: a.marks.ack.clone() },
                cnp: MarksPair { before: b.marks.cnp.clone(), after: a.marks.cnp.clone() },
            });
        }
        let mut verdicts = Vec::new();
        for ((b, a), pc) in pairs.iter().zip(&points) {
            verdicts::point_verdicts(b, a, pc, (before, after), limits, expect, &mut verdicts);
            classes::class_verdicts(b, a, expect, &mut verdicts);
        }
        verdicts::side_verdicts(before, after, &unmatched, &mut verdicts);
        let rows = rows::capture_rows(before, after);
        let counters = counters::changes(before, after);
        classes::version_verdicts(before, after, &rows, &mut verdicts);
        let nccl = nccl::changes(before, after);
        nccl::verdicts(before, after, &nccl, &mut verdicts);
        // Last: the specific verdicts above win over the generic one for their kinds.
        findings::finding_verdicts(before, after, &mut verdicts);
        verdicts::order(&mut verdicts);
        let mut counts = VerdictCounts::default();
        for v in &verdicts {
            match v.severity {
                Severity::Critical => counts.critical += 1,
                Severity::Warning => counts.warning += 1,
                Severity::Info => counts.info += 1,
            }
        }
        let changes_beyond_noise = points
            .iter()
            .flat_map(|p| p.rows.iter().chain(p.priorities.iter().flat_map(|x| &x.rows)))
            .chain(&rows)
            .filter(|r| r.beyond_noise == Some(true))
            .count() as u64;
        let nothing_to_compare = before.roce == 0 && after.roce == 0;
        let findings = match (&before.findings, &after.findings) {
            (Some(fb), Some(fa)) => {
                let mut kinds: Vec<&String> = fb.keys().chain(fa.keys()).collect();
                kinds.sort();
                kinds.dedup();
                kinds
                    .into_iter()
                    .map(|k| FindingCount {
                        kind: k.clone(),
                        before: fb.get(k).copied().unwrap_or(0),
                        after: fa.get(k).copied().unwrap_or(0),
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        Comparison {
            pairing,
            points,
            unmatched,
            verdicts,
            counts,
            changes_beyond_noise,
            rows,
            counters,
            nothing_to_compare,
            findings,
            nccl,
            limits: *limits,
        }
    }

    /// Whether a verdict at or above `level` was made (the change gate; `None`: never).
    pub fn fails(&self, level: Option<Severity>) -> bool {
        level.is_some_and(|l| self.verdicts.iter().any(|v| v.severity <= l))
    }
}

#[cfg(test)]
mod tests;
