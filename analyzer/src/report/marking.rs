//! Marking that disagrees with itself, checked without expectations (docs/verdicts.md "QoS
//! audit", "Marking without expectations").
//!
//! With no `--expect-*`, the audit cannot say which DSCP or PCP is right, but a fabric
//! configured one way carries one class per connection: the two ends of a QP are set up by
//! the same job on hosts meant to be alike (NCCL_IB_TC, the NIC's trust mode and DSCP
//! settings). Field notes, "Mismatched QoS": "On the wire: DSCP/PCP differ between directions
//! or hosts". Two rules, each a `marking_inconsistent` finding:
//! - **the two ends of a connection** send their data and ACKs on DSCPs (or PCPs) with no
//!   value in common (one finding per host pair);
//! - **a host unlike the rest**: with three hosts or more, at least two thirds of them share
//!   one DSCP and some do not use it at all (one finding naming those hosts; their
//!   connections are not listed again under the first rule).
//!
//! WARNING when the values map to different priorities (one direction or host is then off
//! the priority the others travel on, lossless or not), INFO when only the DSCP differs and
//! the priority is the same. CNPs are left out (they travel on a class of their own by
//! design, DSCP 48 commonly); a DSCP expectation (`--expect-dscp`, `--baseline`) or a PCP
//! one hands the check to the audit.

use super::*;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A first frame and its time, for evidence.
type First = (u64, i64);

/// Per (capture point, host): its marks and its first frame.
type HostMarks = BTreeMap<(u16, IpAddr), (Marks, First)>;

/// Hosts needed before one can be unlike "the rest".
const MIN_HOSTS: usize = 3;

/// One host's (or flow's) marks: DSCP and PCP bit sets, and the priorities they map to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Marks {
    dscp: u64,
    pcp: u8,
    prio: u8,
}

impl Marks {
    fn merge(&mut self, o: Marks) {
        self.dscp |= o.dscp;
        self.pcp |= o.pcp;
        self.prio |= o.prio;
    }
}

/// What the classes at a capture point say about a flow's set of DSCPs.
#[derive(Clone, Copy, Debug, Default)]
struct PointClasses {
    /// The DSCPs only CNPs carried: a flow carrying CNPs among its ACKs (an RC QP's CNPs
    /// share the ACKs' flow) has them removed from its set.
    cnp_only: u64,
    /// ACK/NAKs travel on marked DSCPs no data uses (a fabric that gives them a class of
    /// their own, as a SONiC RoCEv2 profile does with DSCP 44, verdicts.md "QoS audit"): a
    /// flow of responses only is then not compared with its peer's data. DSCP 0 is no such
    /// class: it is what an end that was never configured sends.
    ack_apart: bool,
}

fn point_classes(a: &Analyzer, point: u16) -> PointClasses {
    let Some(m) = a.marks_report(point) else { return PointClasses::default() };
    let mask = |v: &[crate::marks::ValueCount]| {
        v.iter().filter_map(|x| x.value).fold(0u64, |m, d| m | 1u64 << (d & 63))
    };
    let (data, ack) = (mask(&m.data.dscp), mask(&m.ack.dscp));
    PointClasses {
        cnp_only: mask(&m.cnp.dscp) & !(data | ack),
        ack_apart: data != 0 && ack != 0 && data & ack == 0 && ack & 1 == 0,
    }
}

/// The marks of a flow's data and ACKs (CNPs left out); `None` for a flow of CNPs only, or
/// of responses only where ACKs have a class of their own.
fn flow_marks(f: &Flow, au: &crate::audit::AuditConfig, pc: PointClasses) -> Option<Marks> {
    if f.requests + f.responses == 0 || (pc.ack_apart && f.requests == 0) {
        return None;
    }
    let cnp_only = pc.cnp_only;
    let dscp = if f.cold().cnps > 0 { f.dscp_seen & !cnp_only } else { f.dscp_seen };
    if dscp == 0 && f.pcp_seen == 0 {
        return None;
    }
    // The priority by the trust in force: tagged frames by their PCP (trust PCP), else
    // their DSCP through the map.
    let prio = if f.pcp_seen != 0 && au.trust == crate::audit::Trust::Pcp {
        f.pcp_seen
    } else {
        (0..64u8).filter(|d| dscp & (1 << d) != 0).fold(0u8, |m, d| m | 1 << (au.dscp_priority(d) & 7))
    };
    Some(Marks { dscp, pcp: f.pcp_seen, prio })
}

fn values(mask: u64) -> String {
    let v: Vec<String> = (0..64u8).filter(|d| mask & (1 << d) != 0).map(|d| d.to_string()).collect();
    v.join(" or ")
}

/// "DSCP 26 (priority 3)", "DSCP 0 (priority 0), PCP 0".
fn describe(m: &Marks) -> String {
    let mut s = String::new();
    if m.dscp != 0 {
        s = format!("DSCP {} (priority {})", values(m.dscp), values(u64::from(m.prio)));
    }
    if m.pcp != 0 {
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&format!("PCP {}", values(u64::from(m.pcp))));
    }
    s
}

/// What the audit's expectations leave to this check: DSCPs, PCPs.
fn unchecked(au: &crate::audit::AuditConfig) -> (bool, bool) {
    (au.roce_dscp.is_none(), au.roce_pcp.is_none())
}

/// Two sets of marks disagree: no DSCP in common (when DSCPs are checked) or no PCP in common
/// (both tagged, PCPs checked). `Some(true)` when their priorities differ too.
fn disagree(x: &Marks, y: &Marks, (dscp, pcp): (bool, bool)) -> Option<bool> {
    let d = dscp && x.dscp != 0 && y.dscp != 0 && x.dscp & y.dscp == 0;
    let p = pcp && x.pcp != 0 && y.pcp != 0 && x.pcp & y.pcp == 0;
    (d || p).then_some(x.prio & y.prio == 0)
}

/// The `marking_inconsistent` findings.
pub(super) fn marking_findings(a: &Analyzer, out: &mut FindingSink) {
    let au = &a.cfg.audit;
    let checked = unchecked(au);
    if checked == (false, false) {
        return;
    }
    let mut classes: BTreeMap<u16, PointClasses> = BTreeMap::new();
    let mut marks: Vec<Option<Marks>> = Vec::with_capacity(a.flows.len());
    for f in a.flows.iter() {
        let pc = *classes.entry(f.key.point).or_insert_with(|| point_classes(a, f.key.point));
        marks.push(flow_marks(f, au, pc));
    }
    // Per capture point, each host's marks and first frame.
    let mut hosts: HostMarks = BTreeMap::new();
    for (f, m) in a.flows.iter().zip(&marks) {
        if let Some(m) = m {
            let first = (f.first_frame, f.first_ts);
            let h = hosts.entry((f.key.point, f.key.src)).or_insert((Marks::default(), first));
            h.0.merge(*m);
            h.1 = h.1.min(first);
        }
    }
    let odd = odd_hosts(a, &hosts, checked, out);
    end_findings(a, &marks, &odd, checked, out);
}

/// Hosts unlike the rest at each point: a finding per point, and the hosts it names.
fn odd_hosts(
    a: &Analyzer,
    hosts: &HostMarks,
    checked: (bool, bool),
    out: &mut FindingSink,
) -> std::collections::BTreeSet<(u16, IpAddr)> {
    let mut named = std::collections::BTreeSet::new();
    let points: std::collections::BTreeSet<u16> = hosts.keys().map(|k| k.0).collect();
    for point in points {
        let here: Vec<(&IpAddr, &(Marks, First))> = hosts
            .range((point, IpAddr::from([0u8; 4]))..)
            .take_while(|(k, _)| k.0 == point)
            .map(|(k, v)| (&k.1, v))
            .collect();
        let here: Vec<_> = here.into_iter().filter(|(_, (m, _))| m.dscp != 0).collect();
        if !checked.0 || here.len() < MIN_HOSTS {
            continue;
        }
        // The DSCP the most hosts use.
        let Some((common, n)) = (0..64u8)
            .map(|d| (d, here.iter().filter(|(_, (m, _))| m.dscp & (1 << d) != 0).count()))
            .max_by_key(|&(d, n)| (n, std::cmp::Reverse(d)))
        else {
            continue;
        };
        if n * 3 < here.len() * 2 || n == here.len() {
            continue;
        }
        let common_prio = 1u8 << (a.cfg.audit.dscp_priority(common) & 7);
        let odd: Vec<_> = here.iter().filter(|(_, (m, _))| m.dscp & (1 << common) == 0).collect();
        let other_prio = odd.iter().any(|(_, (m, _))| m.prio & common_prio == 0);
        let names: Vec<String> =
            odd.iter().take(8).map(|(h, (m, _))| format!("{h} ({})", describe(m))).collect();
        let more = if odd.len() > 8 { format!(" and {} more", odd.len() - 8) } else { String::new() };
        let title = format!(
            "{} of {} hosts mark their RoCE differently from the other {}, which use DSCP {common} (priority {}): {}{more}{}; {} (no --expect-dscp given: which is right is not known)",
            odd.len(),
            here.len(),
            n,
            a.cfg.audit.dscp_priority(common),
            names.join(", "),
            at_point(a, point),
            if other_prio {
                "their traffic is on another priority than the rest, lossless or not: check NCCL_IB_TC, the NIC's trust mode and DSCP settings on those hosts"
            } else {
                "the same priority, so PFC treats them alike, but a switch's DSCP-based ECN or queue maps may not"
            },
        );
        let evidence = odd
            .iter()
            .take(3)
            .map(|(h, (_, (frame, ts_ns)))| EvidenceRef {
                frame: *frame,
                ts_ns: *ts_ns,
                what: format!("first RoCE frame from {h}"),
            })
            .collect();
        out.push(Finding::about_capture(
            if other_prio { Severity::Warning } else { Severity::Info },
            FindingKind::MarkingInconsistent,
            title,
            evidence,
            odd.len() as u64,
        ));
        named.extend(odd.iter().map(|(h, _)| (point, **h)));
    }
    named
}

/// The two ends of connections that disagree: one finding per host pair.
fn end_findings(
    a: &Analyzer,
    marks: &[Option<Marks>],
    odd: &std::collections::BTreeSet<(u16, IpAddr)>,
    checked: (bool, bool),
    out: &mut FindingSink,
) {
    // (point, host A, host B, A's marks, B's marks) → (connections, across priorities, the
    // first frame and time of each).
    type Pair = (u16, IpAddr, IpAddr, Marks, Marks);
    let mut pairs: BTreeMap<Pair, (u64, bool, First, First)> = BTreeMap::new();
    for (i, f) in a.flows.iter().enumerate() {
        let Some(p) = f.partner().filter(|&p| p > i) else { continue };
        let (Some(Some(x)), Some(Some(y)), Some(g)) = (marks.get(i), marks.get(p), a.flows.get(p)) else {
            continue;
        };
        let point = f.key.point;
        if odd.contains(&(point, f.key.src)) || odd.contains(&(point, g.key.src)) {
            continue;
        }
        let Some(other_prio) = disagree(x, y, checked) else { continue };
        // One order per host pair, whichever end the connection starts from.
        let (ka, kb, ma, mb, fa, fb) = if f.key.src <= g.key.src {
            (f.key.src, g.key.src, *x, *y, (f.first_frame, f.first_ts), (g.first_frame, g.first_ts))
        } else {
            (g.key.src, f.key.src, *y, *x, (g.first_frame, g.first_ts), (f.first_frame, f.first_ts))
        };
        let e = pairs.entry((point, ka, kb, ma, mb)).or_insert((0, false, fa, fb));
        e.0 += 1;
        e.1 |= other_prio;
        e.2 = e.2.min(fa);
        e.3 = e.3.min(fb);
    }
    for ((point, ha, hb, ma, mb), (n, other_prio, fa, fb)) in pairs {
        let title = format!(
            "the two ends of {} mark differently{}: {ha} sends {}, {hb} sends {}; {} (no --expect-dscp given: which end is right is not known)",
            plural(n, "connection", "connections"),
            at_point(a, point),
            describe(&ma),
            describe(&mb),
            if other_prio {
                "one direction travels on another priority than the other, so it is not on the same lossless class: check NCCL_IB_TC, the NIC's trust mode and DSCP settings on both hosts"
            } else {
                "the same priority, so PFC treats them alike, but a switch's DSCP-based ECN or queue maps may not"
            },
        );
        let evidence = vec![
            EvidenceRef {
                frame: fa.0,
                ts_ns: fa.1,
                what: format!("first RoCE frame from {ha}: {}", describe(&ma)),
            },
            EvidenceRef {
                frame: fb.0,
                ts_ns: fb.1,
                what: format!("first RoCE frame from {hb}: {}", describe(&mb)),
            },
        ];
        out.push(Finding::about_capture(
            if other_prio { Severity::Warning } else { Severity::Info },
            FindingKind::MarkingInconsistent,
            title,
            evidence,
            n,
        ));
    }
}
