//! What a NIC's counters say beyond one figure set against another (docs/counters.md
//! "Findings beyond the rows"): PFC that pauses another priority than the one RoCE travels
//! on, and receive drops that place the losses beyond the capture point in the host's NIC.
//! Both need two snapshots (deltas over the capture); neither is ever critical, since a
//! port's counters count all of its traffic, not only the capture's.

use super::{CaptureSide, CounterRow, Figure, Host};
pub use rocescope_model::counters::{NicDropFlow, NicDrops};
use rocescope_model::findings::{EvidenceRef, Finding, FindingKind, Severity};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The NIC's receive-drop figures, and whether each counts on one priority only.
fn is_drop(r: &CounterRow, roce: u8) -> bool {
    match r.figure {
        Figure::RxDiscards | Figure::RxOutOfBuffer | Figure::RoceRxDiscards => true,
        // A priority's discards count only on a priority RoCE to the host travels on.
        Figure::RxPrioDiscards => r.priority.is_some_and(|p| roce & (1 << (p & 7)) != 0),
        _ => false,
    }
}

/// The counter names of `PORT NAME` entries, each once.
fn names<'a>(counters: impl Iterator<Item = &'a String>) -> String {
    let mut v: Vec<&str> = counters.map(|s| s.rsplit(' ').next().unwrap_or(s)).collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}

/// The losses beyond the capture point to the host beside its NIC's receive drops, when
/// both are there (`c` holds the former only with `--counters-host` naming an IP).
pub(crate) fn drops_beyond(rows: &[CounterRow], c: &CaptureSide) -> Option<NicDrops> {
    let lost: u64 = c.lost_beyond_to.iter().map(|(_, n, _)| n).sum();
    let moved: Vec<&CounterRow> =
        rows.iter().filter(|r| is_drop(r, c.prio_to) && r.nic.is_some_and(|n| n > 0)).collect();
    // The largest, not the sum: one packet may count at the port and at its priority.
    let dropped = moved.iter().filter_map(|r| r.nic).max().unwrap_or(0);
    if lost == 0 || dropped == 0 {
        return None;
    }
    Some(NicDrops {
        lost_beyond: lost,
        nic_dropped: dropped,
        counters: moved.iter().flat_map(|r| r.counters.iter().cloned()).collect(),
        flows: c
            .lost_beyond_to
            .iter()
            .map(|&(flow, packets, gaps_here)| NicDropFlow { flow, packets, gaps_here })
            .collect(),
    })
}

/// Say in each `network_loss` finding of the flows `d` names where its packets lost beyond
/// the capture point were dropped: in the host's NIC, whose receive drops account for all
/// of them (the finding then no longer says "in the network" when the flow lost none
/// before the capture point), or for some.
pub fn place_drops(findings: &mut [Finding], d: &NicDrops) {
    let counters = names(d.counters.iter());
    let all = d.nic_dropped >= d.lost_beyond;
    let counted = format!(
        "the host's NIC counted {} receive drops between the counter snapshots ({counters}) against {} packets lost beyond the capture point on their way to it",
        d.nic_dropped, d.lost_beyond
    );
    for f in findings.iter_mut().filter(|f| f.kind == FindingKind::NetworkLoss) {
        let Some(fl) = f.flow.and_then(|id| d.flows.iter().find(|x| x.flow == id)) else { continue };
        if all && !fl.gaps_here {
            f.title = f.title.replacen(" lost in the network (", " lost (", 1);
            f.title.push_str(&format!(
                "; dropped in the host's NIC receive buffer, not in the network: {counted}"
            ));
        } else if all {
            f.title.push_str(&format!(
                "; those lost beyond the capture point were dropped in the host's NIC receive buffer: {counted}"
            ));
        } else {
            f.title.push_str(&format!(
                "; up to {} of those lost beyond the capture point were dropped in the host's NIC receive buffer, the rest in the network: {counted}",
                d.nic_dropped
            ));
        }
    }
}

/// Which priorities a bit mask names, as `3` or `3, 5`.
fn prio_list(mask: u8) -> String {
    (0..8u8).filter(|p| mask & (1 << p) != 0).map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
}

/// One direction of pause frames: the NIC sent them (it was congested: the pauses should
/// stop the RoCE coming to it) or received them (the switch stops the RoCE it sends).
struct Direction {
    figures: [Figure; 2],
    /// Priorities of the RoCE those pauses are for.
    roce: u8,
    sent: bool,
}

/// `pfc_priority_mismatch` warnings: the NIC's PFC counters moved on a priority no RoCE of
/// the host travels on, and on none that RoCE travels on (docs/counters.md): one side
/// pauses one priority, RoCE travels on another, so the pauses do not hold it back.
pub(crate) fn pfc_priority_mismatch(rows: &[CounterRow], c: &CaptureSide, host: &Host) -> Vec<Finding> {
    let ips = host.ips.iter().map(IpAddr::to_string).collect::<Vec<_>>().join(", ");
    let dirs = [
        Direction { figures: [Figure::PauseTx, Figure::PfcFramesTx], roce: c.prio_to, sent: true },
        Direction { figures: [Figure::PauseRx, Figure::PfcFramesRx], roce: c.prio_from, sent: false },
    ];
    let mut out = Vec::new();
    for d in dirs.iter().filter(|d| d.roce != 0) {
        let of_dir: Vec<&CounterRow> = rows.iter().filter(|r| d.figures.contains(&r.figure)).collect();
        let on = |r: &CounterRow| r.priority.is_some_and(|p| d.roce & (1 << (p & 7)) != 0);
        if of_dir.iter().any(|r| on(r) && r.nic.unwrap_or(0) > 0) {
            continue; // PFC moves where RoCE is: no mismatch shown.
        }
        // Per other priority: the most any one figure counted, and the counters.
        let mut other: BTreeMap<u8, (u64, Vec<&CounterRow>)> = BTreeMap::new();
        for r in of_dir.iter().filter(|r| !on(r)) {
            if let (Some(q), Some(n)) = (r.priority, r.nic.filter(|n| *n > 0)) {
                let e = other.entry(q).or_default();
                e.0 = e.0.max(n);
                e.1.push(r);
            }
        }
        let listed = of_dir.iter().any(|r| on(r));
        for (q, (n, counted)) in other {
            let roce = prio_list(d.roce);
            let whose = if ips.is_empty() { String::new() } else { format!(" ({ips})") };
            let absent = if listed {
                String::new()
            } else {
                format!("; the NIC lists no pause counter for priority {roce}: on mlx5 that means PFC is off there")
            };
            let check = "the NIC and the switch map RoCE to different priorities, or PFC is on for the wrong one: check the trust mode (PCP or DSCP), the DSCP-to-priority map and the PFC priorities on both";
            let title = if d.sent {
                format!(
                    "the NIC sent {n} PFC pause frames on priority {q} ({}) and none on priority {roce}, where the capture shows the RoCE coming to the host{whose}: it pauses priority {q} while RoCE travels on {roce}, so its pauses do not hold that RoCE back; {check}{absent}",
                    names(counted.iter().flat_map(|r| r.counters.iter()))
                )
            } else {
                format!(
                    "the NIC received {n} PFC pause frames on priority {q} ({}) and none on priority {roce}, where the capture shows the RoCE the host{whose} sends: the switch pauses priority {q} while that RoCE travels on {roce} and does not stop for it; {check}{absent}",
                    names(counted.iter().flat_map(|r| r.counters.iter()))
                )
            };
            out.push(Finding {
                severity: Severity::Warning,
                kind: FindingKind::PfcPriorityMismatch,
                title,
                flow: None,
                src_mac: None,
                priority: Some(q),
                evidence: Vec::<EvidenceRef>::new(),
                weight: n,
                folded: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(figure: Figure, priority: Option<u8>, nic: u64, name: &str) -> CounterRow {
        CounterRow {
            figure,
            priority,
            nic: Some(nic),
            counters: vec![format!("ethtool -S {name}")],
            capture: None,
            capture_figure: String::new(),
            status: "".into(),
        }
    }

    fn side(prio_to: u8, prio_from: u8, lost: &[(usize, u64, bool)]) -> CaptureSide {
        let mut c = CaptureSide::default();
        (c.prio_to, c.prio_from, c.lost_beyond_to) = (prio_to, prio_from, lost.to_vec());
        c
    }

    #[test]
    fn pauses_on_another_priority_only_are_a_mismatch() {
        let host = Host::default();
        let rows = [
            row(Figure::PauseTx, Some(4), 12, "tx_prio4_pause"),
            row(Figure::PauseRx, Some(4), 0, "rx_prio4_pause"),
        ];
        let f = pfc_priority_mismatch(&rows, &side(1 << 3, 1 << 3, &[]), &host);
        assert_eq!(f.len(), 1, "sent on 4, RoCE to the host on 3; nothing received");
        assert_eq!(
            (f[0].severity, f[0].kind, f[0].priority),
            (Severity::Warning, FindingKind::PfcPriorityMismatch, Some(4))
        );
        assert!(f[0].title.contains("no pause counter for priority 3"), "{}", f[0].title);
        // RoCE on 4 too, or pauses on 3 as well: PFC where RoCE is, no mismatch.
        assert!(pfc_priority_mismatch(&rows, &side(1 << 3 | 1 << 4, 0, &[]), &host).is_empty());
        let both = [
            row(Figure::PauseTx, Some(3), 1, "tx_prio3_pause"),
            row(Figure::PauseTx, Some(4), 12, "tx_prio4_pause"),
        ];
        assert!(pfc_priority_mismatch(&both, &side(1 << 3, 0, &[]), &host).is_empty());
        // A zero counter on RoCE's priority is listed (PFC on there) and moved not.
        let listed = [
            row(Figure::PfcFramesRx, Some(3), 0, "rx_pfc_ena_frames_pri3"),
            row(Figure::PfcFramesRx, Some(5), 7, "rx_pfc_ena_frames_pri5"),
        ];
        let f = pfc_priority_mismatch(&listed, &side(0, 1 << 3, &[]), &host);
        assert_eq!(f.len(), 1);
        assert!(f[0].title.starts_with("the NIC received 7 PFC pause frames on priority 5 (rx_pfc_ena_frames_pri5) and none on priority 3"), "{}", f[0].title);
        assert!(!f[0].title.contains("no pause counter"), "{}", f[0].title);
        // No RoCE seen for the host: nothing to set the pauses against.
        assert!(pfc_priority_mismatch(&rows, &side(0, 0, &[]), &host).is_empty());
    }

    #[test]
    fn drops_are_the_largest_counter_and_need_losses_beyond() {
        let rows = [
            row(Figure::RxDiscards, None, 5, "rx_discards_phy"),
            row(Figure::RxPrioDiscards, Some(3), 4, "rx_prio3_buf_discard"),
            row(Figure::RxPrioDiscards, Some(4), 9, "rx_prio4_buf_discard"),
            row(Figure::OutOfBuffer, None, 50, "out_of_buffer"),
        ];
        let d = drops_beyond(&rows, &side(1 << 3, 0, &[(2, 3, false)])).expect("losses and drops");
        // The priority 4 discards are not RoCE's; out_of_buffer is a missing receive WQE
        // (RNR on RC), not a drop of these losses; the port's and the priority's may count
        // one packet twice: the largest.
        assert_eq!((d.lost_beyond, d.nic_dropped), (3, 5));
        assert_eq!(d.counters, ["ethtool -S rx_discards_phy", "ethtool -S rx_prio3_buf_discard"]);
        assert!(drops_beyond(&rows, &side(1 << 3, 0, &[])).is_none(), "no loss beyond the point");
        assert!(
            drops_beyond(&rows[3..], &side(1 << 3, 0, &[(2, 3, false)])).is_none(),
            "no drop counter moved"
        );
    }

    #[test]
    fn placing_drops_rewords_only_the_flows_named() {
        let finding = |flow| Finding {
            severity: Severity::Critical,
            kind: FindingKind::NetworkLoss,
            title: "QP: 3 packets lost in the network (beyond this capture point: no gap here), recovered"
                .into(),
            flow: Some(flow),
            src_mac: None,
            priority: None,
            evidence: Vec::new(),
            weight: 1,
            folded: None,
        };
        let mut fs = vec![finding(1), finding(2)];
        let d = NicDrops {
            lost_beyond: 3,
            nic_dropped: 3,
            counters: vec!["ethtool -S rx_discards_phy".into()],
            flows: vec![NicDropFlow { flow: 2, packets: 3, gaps_here: false }],
        };
        place_drops(&mut fs, &d);
        assert!(fs[0].title.ends_with("recovered"), "{}", fs[0].title);
        assert!(fs[1].title.starts_with("QP: 3 packets lost (beyond"), "{}", fs[1].title);
        assert!(fs[1].title.contains("; dropped in the host's NIC receive buffer, not in the network: the host's NIC counted 3 receive drops"), "{}", fs[1].title);
    }
}
