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
    if f.requests() + f.responses() == 0 || (pc.ack_apart && f.requests() == 0) {
        return None;
    }
    let cnp_only = pc.cnp_only;
    let dscp = if f.cold().cnps > 0 { f.dscp_seen() & !cnp_only } else { f.dscp_seen() };
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
///
/// Per-host marks are merged from the flows in (point, host) order, through a sorted list
/// of flow ids (4 bytes a flow), not a map of hosts: at 100,000 QPs a map of every host's
/// marks and a per-flow table of marks held 25 MB at the report's peak (issue 39).
pub(super) fn marking_findings(a: &Analyzer, out: &mut FindingSink) {
    let au = &a.cfg.audit;
    let checked = unchecked(au);
    if checked == (false, false) {
        return;
    }
    let mut classes: BTreeMap<u16, PointClasses> = BTreeMap::new();
    for f in a.flows.iter() {
        classes.entry(f.key.point).or_insert_with(|| point_classes(a, f.key.point));
    }
    let marks_of = |f: &Flow| flow_marks(f, au, classes.get(&f.key.point).copied().unwrap_or_default());
    let odd = odd_hosts(a, &HostOrder::new(a, &marks_of), &marks_of, checked, out);
    end_findings(a, &marks_of, &odd, checked, out);
}

/// The flows with marks, ordered by (capture point, source host): each host's flows in a
/// run, hosts in the order a map keyed by (point, host) would give.
struct HostOrder {
    ids: Vec<u32>,
}

/// One host at a capture point: its merged marks and its first frame.
struct HostMarks {
    point: u16,
    host: IpAddr,
    marks: Marks,
    first: First,
}

impl HostOrder {
    fn new(a: &Analyzer, marks_of: &impl Fn(&Flow) -> Option<Marks>) -> Self {
        let mut ids: Vec<u32> = (0..a.flows.len())
            .filter(|&i| a.flows.get(i).is_some_and(|f| marks_of(f).is_some()))
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        let key = |i: &u32| a.flows.get(*i as usize).map(|f| (f.key.point, f.key.src));
        ids.sort_unstable_by_key(key);
        HostOrder { ids }
    }

    /// Each host in order, its flows' marks merged.
    fn hosts<'a>(
        &'a self,
        a: &'a Analyzer,
        marks_of: &'a impl Fn(&Flow) -> Option<Marks>,
    ) -> impl Iterator<Item = HostMarks> + 'a {
        let mut flows = self.ids.iter().filter_map(|&i| a.flows.get(i as usize)).peekable();
        std::iter::from_fn(move || {
            let f = flows.next()?;
            let mut h = HostMarks {
                point: f.key.point,
                host: f.key.src,
                marks: marks_of(f).unwrap_or_default(),
                first: (f.first_frame, f.first_ts),
            };
            while let Some(g) = flows.next_if(|g| (g.key.point, g.key.src) == (h.point, h.host)) {
                h.marks.merge(marks_of(g).unwrap_or_default());
                h.first = h.first.min((g.first_frame, g.first_ts));
            }
            Some(h)
        })
    }
}

/// Hosts unlike the rest at each point: a finding per point, and the hosts it names.
fn odd_hosts(
    a: &Analyzer,
    order: &HostOrder,
    marks_of: &impl Fn(&Flow) -> Option<Marks>,
    checked: (bool, bool),
    out: &mut FindingSink,
) -> std::collections::BTreeSet<(u16, IpAddr)> {
    let mut named = std::collections::BTreeSet::new();
    if !checked.0 {
        return named;
    }
    // Per point: hosts that mark with a DSCP, and how many of them use each DSCP.
    let mut per_point: BTreeMap<u16, (usize, [usize; 64])> = BTreeMap::new();
    for h in order.hosts(a, marks_of).filter(|h| h.marks.dscp != 0) {
        let e = per_point.entry(h.point).or_insert((0, [0; 64]));
        e.0 += 1;
        for (d, n) in e.1.iter_mut().enumerate() {
            *n += usize::from(h.marks.dscp & (1 << d) != 0);
        }
    }
    // Per point with a common DSCP most hosts use: (that DSCP, the hosts using it, hosts).
    let mut common_at: BTreeMap<u16, (u8, usize, usize)> = BTreeMap::new();
    for (&point, &(hosts, ref uses)) in &per_point {
        if hosts < MIN_HOSTS {
            continue;
        }
        // The DSCP the most hosts use.
        let Some((common, n)) = (0..64u8)
            .map(|d| (d, uses.get(usize::from(d)).copied().unwrap_or(0)))
            .max_by_key(|&(d, n)| (n, std::cmp::Reverse(d)))
        else {
            continue;
        };
        if n * 3 >= hosts * 2 && n != hosts {
            common_at.insert(point, (common, n, hosts));
        }
    }
    if common_at.is_empty() {
        return named;
    }
    // The hosts without it, every point in one pass (a pass per point was points x flows).
    let mut odd: BTreeMap<u16, Vec<HostMarks>> = BTreeMap::new();
    for h in order.hosts(a, marks_of) {
        if let Some(&(common, _, _)) = common_at.get(&h.point) {
            if h.marks.dscp != 0 && h.marks.dscp & (1 << common) == 0 {
                odd.entry(h.point).or_default().push(h);
            }
        }
    }
    for (point, hosts) in odd {
        let Some(&c) = common_at.get(&point) else { continue };
        odd_finding(a, point, c, &hosts, out);
        named.extend(hosts.iter().map(|h| (point, h.host)));
    }
    named
}

/// The finding for hosts `odd` at `point`, where `n` of `hosts` use DSCP `common`.
fn odd_finding(
    a: &Analyzer,
    point: u16,
    (common, n, hosts): (u8, usize, usize),
    odd: &[HostMarks],
    out: &mut FindingSink,
) {
    let common_prio = 1u8 << (a.cfg.audit.dscp_priority(common) & 7);
    let other_prio = odd.iter().any(|h| h.marks.prio & common_prio == 0);
    let names: Vec<String> =
        odd.iter().take(8).map(|h| format!("{} ({})", h.host, describe(&h.marks))).collect();
    let more = if odd.len() > 8 { format!(" and {} more", odd.len() - 8) } else { String::new() };
    let title = format!(
        "{} of {} hosts mark their RoCE differently from the other {}, which use DSCP {common} (priority {}): {}{more}{}; {} (no --expect-dscp given: which is right is not known)",
        odd.len(),
        hosts,
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
        .map(|h| EvidenceRef {
            frame: h.first.0,
            ts_ns: h.first.1,
            what: format!("first RoCE frame from {}", h.host),
        })
        .collect();
    out.push(Finding::about_capture(
        if other_prio { Severity::Warning } else { Severity::Info },
        FindingKind::MarkingInconsistent,
        title,
        evidence,
        odd.len() as u64,
    ));
}

/// The two ends of connections that disagree: one finding per host pair.
fn end_findings(
    a: &Analyzer,
    marks_of: &impl Fn(&Flow) -> Option<Marks>,
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
        let Some(g) = a.flows.get(p) else { continue };
        let (Some(x), Some(y)) = (marks_of(f), marks_of(g)) else { continue };
        let point = f.key.point;
        if odd.contains(&(point, f.key.src)) || odd.contains(&(point, g.key.src)) {
            continue;
        }
        let Some(other_prio) = disagree(&x, &y, checked) else { continue };
        // One order per host pair, whichever end the connection starts from.
        let (ka, kb, ma, mb, fa, fb) = if f.key.src <= g.key.src {
            (f.key.src, g.key.src, x, y, (f.first_frame, f.first_ts), (g.first_frame, g.first_ts))
        } else {
            (g.key.src, f.key.src, y, x, (g.first_frame, g.first_ts), (f.first_frame, f.first_ts))
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
