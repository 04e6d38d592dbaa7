//! The QoS section of the report: the audit's violations and their findings.

use super::*;

/// Priorities as `3,4` (`-` for none).
pub(super) fn prio_list(v: impl IntoIterator<Item = u64>) -> String {
    let items: Vec<String> = v.into_iter().map(|p| p.to_string()).collect();
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

/// The priorities RoCE used at a capture point.
pub(super) fn roce_priorities(a: &Analyzer, point: u16) -> Vec<u64> {
    a.priorities(point).iter().enumerate().filter(|(_, u)| u.packets > 0).map(|(p, _)| p as u64).collect()
}

/// The findings of the QoS audit's violations (docs/verdicts.md "QoS audit"; reference §1.7,
/// §1.9): marking and priority violations are critical `qos_violation`s, pauses on a priority
/// RoCE does not use or that is not lossless are `pause_unused_priority` warnings, untagged
/// RoCE under a PCP expectation is a `pcp_untagged` warning, and an audit that saw no RoCE is
/// an `audit_no_roce` warning (each still fails the audit: exit status 3).
pub(super) fn qos_findings(violations: &[Violation], out: &mut FindingSink, a: &Analyzer) {
    let au = &a.cfg.audit;
    for v in violations {
        let at = at_point(a, v.point);
        let num = |x: &Value| match x {
            Value::Num(n) => *n,
            _ => 0,
        };
        let where_ = match &v.flow {
            Some(f) => format!("QP 0x{:06x} {} → {}{at}", f.dest_qp, f.src, f.dst),
            None if v.what != "pause_priority" => String::from("flows no longer tracked (idle)"),
            None => format!("{} priority {}{at}", v.src_mac.clone().unwrap_or_default(), num(&v.seen)),
        };
        let show = |x: &Value| match x {
            Value::Num(n) => n.to_string(),
            Value::Text(t) => (*t).to_string(),
            Value::List(l) => l.iter().map(u64::to_string).collect::<Vec<_>>().join(" or "),
        };
        let mut evidence = vec![EvidenceRef {
            frame: v.first_frame,
            ts_ns: 0,
            what: format!("first of {}", plural(v.packets, "frame", "frames")),
        }];
        let (severity, kind) = match v.what.as_ref() {
            "pause_priority" => (Severity::Warning, FindingKind::PauseUnusedPriority),
            "pcp_untagged" => (Severity::Warning, FindingKind::PcpUntagged),
            "no_roce" => (Severity::Warning, FindingKind::AuditNoRoce),
            _ => (Severity::Critical, FindingKind::QosViolation),
        };
        let title = match v.what.as_ref() {
            "pause_priority" => {
                let prio = num(&v.seen) as u8;
                let lossless = au.lossless_priorities.as_deref().filter(|l| !l.contains(&prio));
                let on = roce_priorities(a, v.point);
                let uses = if on.is_empty() {
                    format!("no RoCE at all{at}")
                } else {
                    format!("RoCE is on priorities {}: {}", prio_list(on), au.priority_rule())
                };
                match lossless {
                    Some(l) => format!(
                        "pause frames on {where_}, which is not a lossless priority (lossless: {}; {uses}) ({} frames)",
                        prio_list(l.iter().map(|p| u64::from(*p))),
                        v.packets
                    ),
                    None => format!(
                        "pause frames on {where_}, which no RoCE traffic uses ({uses}; see --trust, --dscp-map) ({} frames)",
                        v.packets
                    ),
                }
            }
            "ecn" => format!(
                "{where_}: {} of RoCE data not ECN-capable (Not-ECT)",
                plural(v.packets, "packet", "packets")
            ),
            "not_lossless" => format!(
                "{where_}: {} of RoCE data on priority {}, which is not lossless ({}); priority from {}",
                plural(v.packets, "packet", "packets"),
                num(&v.seen),
                prio_list(au.lossless_priorities.iter().flatten().map(|p| u64::from(*p))),
                au.priority_rule()
            ),
            "pcp_untagged" => {
                // The flows behind it, their first untagged frames and DSCPs.
                let mut flows: Vec<(Option<usize>, u64, u64)> = a
                    .audit_hits()
                    .iter()
                    .filter(|((id, what, _), _)| {
                        *what == "pcp_untagged"
                            && id.and_then(|i| a.flows.get(i)).map_or(0, |f| f.key.point) == v.point
                    })
                    .map(|((id, _, _), (n, first))| (*id, *n, *first))
                    .collect();
                flows.sort_by_key(|f| f.2);
                let mut dscps = 0u64;
                evidence = flows
                    .iter()
                    .take(3)
                    .map(|(id, n, first)| EvidenceRef {
                        frame: *first,
                        ts_ns: 0,
                        what: match id.and_then(|i| a.flows.get(i)) {
                            Some(f) => format!(
                                "QP 0x{:06x} {} → {}: first of {} untagged",
                                f.key.dest_qp,
                                f.key.src,
                                f.key.dst,
                                plural(*n, "packet", "packets")
                            ),
                            None => format!("flows no longer tracked: first of {n} untagged"),
                        },
                    })
                    .collect();
                for f in flows.iter().filter_map(|(id, _, _)| id.and_then(|i| a.flows.get(i))) {
                    dscps |= f.dscp_seen();
                }
                let marks: Vec<String> = (0..64u8)
                    .filter(|d| dscps & (1 << d) != 0)
                    .take(4)
                    .map(|d| format!("DSCP {d} → priority {}", au.dscp_priority(d)))
                    .collect();
                format!(
                    "{} in {} carry no VLAN tag, so no PCP{at}: with PCP {} expected, a switch port trusting PCP gives them its default priority and one trusting DSCP the priority of their DSCP ({}); if the capture strips tags (VLAN offload, a capture on the VLAN interface), capture on the parent interface to see them",
                    plural(v.packets, "RoCE packet", "RoCE packets"),
                    plural(flows.len() as u64, "flow", "flows"),
                    show(&v.expected),
                    if marks.is_empty() { "-".to_string() } else { marks.join(", ") }
                )
            }
            "no_roce" => {
                evidence.clear();
                let what = if v.packets == 0 {
                    "the capture holds no frame".to_string()
                } else {
                    format!(
                        "no RoCE frame among the {} of this capture",
                        plural(v.packets, "frame", "frames")
                    )
                };
                format!(
                    "the QoS audit checked nothing: {what}, so none of its expectations could be verified (a failed audit: exit status 3)"
                )
            }
            what => format!(
                "{where_}: {} with {} {} (expected {})",
                plural(v.packets, "packet", "packets"),
                what.replace('_', " ").to_uppercase(),
                show(&v.seen),
                show(&v.expected)
            ),
        };
        out.push(Finding {
            severity,
            kind,
            title,
            flow: v.flow_index,
            src_mac: v.src_mac.clone(),
            priority: None,
            evidence,
            weight: v.packets,
            folded: None,
        });
    }
}

/// The audit's violations on flows (rules in [`crate::audit::AuditConfig::check`]), after
/// those of the pauses: untagged packets under a PCP expectation are one violation per
/// capture point (its finding names the flows), and an audit that saw no RoCE checked
/// nothing, which is not a pass.
pub(super) fn audit_violations(a: &Analyzer, violations: &mut Vec<Violation>) {
    let t = &a.totals;
    let au = &a.cfg.audit;
    let mut hits: Vec<_> = a.audit_hits().iter().collect();
    hits.sort_by_key(|((id, what, seen), (_, first))| (*first, *id, *what, *seen));
    let mut untagged: Vec<(u16, u64, u64)> = Vec::new();
    for ((id, what, seen), (packets, first)) in hits {
        // A flow no longer tracked (evicted when idle) keeps its hits under no flow.
        let f = id.and_then(|i| a.flows.get(i));
        let point = f.map_or(0, |f| f.key.point);
        if *what == "pcp_untagged" {
            match untagged.iter_mut().find(|u| u.0 == point) {
                Some(u) => {
                    u.1 += packets;
                    u.2 = u.2.min(*first);
                }
                None => untagged.push((point, *packets, *first)),
            }
            continue;
        }
        let allowed = |l: &Option<Vec<u8>>| Value::of(l.as_deref().unwrap_or(&[]));
        let expected = match *what {
            "dscp" => allowed(&au.roce_dscp),
            "ack_dscp" => allowed(&au.ack_dscp),
            "cnp_dscp" => allowed(&au.cnp_dscp),
            "outer_dscp" => allowed(&au.outer_dscp),
            "pcp" => Value::Num(u64::from(au.roce_pcp.unwrap_or(0))),
            "not_lossless" => {
                Value::List(au.lossless_priorities.iter().flatten().map(|p| u64::from(*p)).collect())
            }
            _ => Value::Text("ECN-capable".into()),
        };
        let seen_v =
            if *what == "ecn" { Value::Text("Not-ECT".into()) } else { Value::Num(u64::from(*seen)) };
        violations.push(Violation {
            point,
            flow: f.map(flow_ref),
            what: (*what).into(),
            expected,
            seen: seen_v,
            packets: *packets,
            first_frame: *first,
            src_mac: None,
            flow_index: f.and(*id),
        });
    }
    for (point, packets, first) in untagged {
        violations.push(Violation {
            point,
            flow: None,
            what: "pcp_untagged".into(),
            expected: Value::Num(u64::from(au.roce_pcp.unwrap_or(0))),
            seen: Value::Text("untagged".into()),
            packets,
            first_frame: first,
            src_mac: None,
            flow_index: None,
        });
    }
    // An audit that saw no RoCE checked nothing: that is not a pass.
    if au.is_set() && t.roce == 0 {
        violations.push(Violation {
            point: 0,
            flow: None,
            what: "no_roce".into(),
            expected: Value::Text("RoCE".into()),
            seen: Value::Num(0),
            packets: t.packets,
            first_frame: u64::from(t.packets > 0),
            src_mac: None,
            flow_index: None,
        });
    }
}
