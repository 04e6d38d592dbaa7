//! The pauses' section of the report: one entry per PFC/PAUSE timeline and its findings
//! (storms, deadlock hints, pauses ignored, 802.3x PAUSE, pauses on a priority RoCE does not
//! use).

use super::*;

/// The `pause_ignored` finding of a timeline, when RoCE to the pausing MAC went on beyond
/// the allowance. Critical with at least [`IGNORED_CRITICAL_FRAMES`] such frames, the latest
/// at least twice the allowance after its pause took effect; else a warning (a few frames
/// just past the allowance can be timing: a far capture point, coarse timestamps, a slow
/// link).
pub(super) fn pause_ignored(r: &PauseReport, tl: &Timeline, label: &str, cfg: &PfcConfig) -> Option<Finding> {
    if tl.ignored == 0 {
        return None;
    }
    let allowance = cfg.pause_allowance_ns;
    let clear = tl.ignored >= IGNORED_CRITICAL_FRAMES && tl.ignored_max_delay_ns >= 2 * allowance;
    let what = match r.kind {
        PauseKind::Pfc => format!("PFC on priority {}", r.priority),
        PauseKind::Pause => "802.3x PAUSE".to_string(),
    };
    // Frames the link peer sent (the pausing MAC, a switch port, takes part in no RoCE
    // here) or frames sent to the pausing MAC.
    let by_peer = r.link_peer.as_deref().filter(|_| tl.ignored_from_peer > 0);
    let sent = match by_peer {
        Some(peer) => format!("RoCE from {peer}"),
        None => format!("RoCE to {}", r.src_mac),
    };
    let mut evidence = Vec::new();
    if let Some(first) = tl.ignored_evidence.first() {
        evidence.push(EvidenceRef {
            frame: first.pause_frame,
            ts_ns: first.pause_ts_ns,
            what: format!("{what} from {} took effect", r.src_mac),
        });
    }
    evidence.extend(tl.ignored_evidence.iter().map(|e| EvidenceRef {
        frame: e.frame,
        ts_ns: e.ts_ns,
        what: format!("{sent} {} after the pause took effect", us_text(e.delay_ns)),
    }));
    let head = match by_peer {
        Some(peer) => format!(
            "{peer} kept sending RoCE while its link peer {} (a switch port: it sends no RoCE here) paused {label}: {} more than {} after the pause took effect (the latest {} after)",
            r.src_mac,
            plural(tl.ignored, "frame", "frames"),
            us_text(allowance),
            us_text(tl.ignored_max_delay_ns),
        ),
        None => format!(
            "RoCE kept arriving at {} while it paused {label}: {} sent to it more than {} after the pause took effect (the latest {} after)",
            r.src_mac,
            plural(tl.ignored, "frame", "frames"),
            us_text(allowance),
            us_text(tl.ignored_max_delay_ns),
        ),
    };
    let why = if !clear {
        ": few, and close to the allowance; a capture point far from the link or coarse timestamps can do this (--pause-allowance-us)"
    } else if by_peer.is_some() {
        ": the sender on this link ignores the pause (the host, or the switch port that forwards its frames: PFC not enabled for this priority there, or its traffic on another priority than the one paused)"
    } else {
        ": the sender ignores the pause (PFC not enabled for this priority on the peer, or a priority mapping mismatch)"
    };
    Some(Finding {
        severity: if clear { Severity::Critical } else { Severity::Warning },
        kind: FindingKind::PauseIgnored,
        title: format!("{head}{why}"),
        flow: None,
        src_mac: Some(r.src_mac.clone()),
        priority: Some(r.priority),
        evidence,
        weight: tl.ignored,
        folded: None,
    })
}

/// One entry per PFC/PAUSE timeline (by capture point, MAC, kind and priority), with the
/// findings each gives, and a violation for pauses on a priority RoCE does not use or that
/// is not lossless.
pub(super) fn pause_reports(
    a: &Analyzer,
    points: &[crate::PointTotals],
    findings: &mut FindingSink,
    violations: &mut Vec<Violation>,
) -> Vec<PauseReport> {
    let end = a.totals.end_ns.unwrap_or(0);
    let sampled = a.cfg.sampling.is_some();
    let mut keys: Vec<_> = a.timelines().keys().copied().collect();
    keys.sort();
    let mut pfc = Vec::new();
    for key in keys {
        let Some(tl) = a.timelines().get(&key) else { continue };
        let (point, mac, kind, prio) = key;
        let use_ = a.priorities(point).get(usize::from(prio)).copied().unwrap_or_default();
        let point_end = points.get(usize::from(point)).and_then(|p| p.end_ns).unwrap_or(end);
        // Per second of this point's own capture (merged captures span more): the timeline's
        // windows start at the point's first frame and end at its latest.
        let tl = a.finished_timeline(key, tl, point_end);
        let to_mac = a.macs.to(point, mac);
        // The pausing MAC's RoCE is in the MAC table whether or not it was paused.
        let pauser_sends = tl.pauser_sends || a.macs.sends(point, mac);
        let peer = if pauser_sends { None } else { tl.peer.or_else(|| a.macs.station(point, mac)) };
        let direction = match (pauser_sends, peer) {
            (true, _) => PauseDirection::ToPausingMac,
            (false, Some(_)) => PauseDirection::FromLinkPeer,
            (false, None) => PauseDirection::Unknown,
        };
        let r = PauseReport {
            point,
            src_mac: mac_string(&mac),
            kind,
            priority: prio,
            pause_frames: tl.pause_frames,
            xon_frames: tl.xon_frames,
            quanta_total: tl.quanta_total,
            paused_ns: tl.paused_ns,
            pause_us_per_s: tl.pause_us_per_s,
            max_pause_us_per_s: tl.max_pause_us_per_s,
            link_bps: tl.link_bps,
            intervals: tl.intervals.clone(),
            intervals_dropped: tl.intervals_dropped,
            storms: tl.storms().to_vec(),
            deadlock_hint: tl.deadlock,
            roce_packets_on_priority: use_.packets,
            first_frame: tl.first_frame,
            roce_to_mac: match kind {
                PauseKind::Pfc => to_mac.get(usize::from(prio & 7)).copied().unwrap_or(0),
                PauseKind::Pause => to_mac.iter().sum(),
            },
            direction,
            link_peer: peer.map(|m| mac_string(&m)),
            ignored_frames: tl.ignored,
            ignored_from_peer: tl.ignored_from_peer,
            ignored_max_delay_ns: tl.ignored_max_delay_ns,
        };
        // Merged captures: say at which capture point the pauses were seen.
        let at = at_point(a, point);
        let label = match kind {
            PauseKind::Pfc => format!("priority {prio}{at}"),
            PauseKind::Pause => format!("the whole link (802.3x PAUSE){at}"),
        };
        if !r.storms.is_empty() {
            let longest = r.storms.iter().map(|s| s.end_ns - s.start_ns).max().unwrap_or(0);
            findings.push(Finding {
                severity: Severity::Critical,
                kind: FindingKind::PfcStorm,
                title: format!(
                    "PFC storm from {} on {label}: paused {:.0}% of its windows for up to {} ({} pause frames, {:.0} µs paused per second at peak)",
                    r.src_mac,
                    r.storms.iter().map(|s| s.max_fraction).fold(0.0, f64::max) * 100.0,
                    ms(longest as u64),
                    r.pause_frames,
                    r.max_pause_us_per_s
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: Some(prio),
                evidence: r
                    .intervals
                    .iter()
                    .take(3)
                    .map(|i| EvidenceRef {
                        frame: i.first_frame,
                        ts_ns: i.start_ns,
                        what: format!("paused {} by {} frames{}", ms((i.end_ns - i.start_ns) as u64), i.frames, if i.xon { ", ended by XON" } else { "" }),
                    })
                    .collect(),
                weight: r.pause_frames * 10,
                folded: None,
            });
        }
        if let Some(d) = r.deadlock_hint {
            findings.push(Finding {
                severity: Severity::Critical,
                kind: FindingKind::PfcDeadlock,
                title: format!(
                    "possible PFC deadlock on {label}: paused continuously for {} by {} while the RoCE traffic towards it stopped",
                    ms((d.end_ns - d.start_ns) as u64),
                    r.src_mac
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: Some(prio),
                evidence: vec![EvidenceRef { frame: d.first_frame, ts_ns: d.start_ns, what: "pause began".into() }],
                weight: u64::MAX / 4,
                folded: None,
            });
        }
        if let Some(f) = pause_ignored(&r, &tl, &label, &a.cfg.pfc) {
            findings.push(f);
        }
        if kind == PauseKind::Pause && r.pause_frames > 0 {
            findings.push(Finding {
                severity: Severity::Warning,
                kind: FindingKind::LinkPause,
                title: format!(
                    "802.3x PAUSE from {}{at}: {} stopping every priority for {} in all",
                    r.src_mac,
                    plural(r.pause_frames, "frame", "frames"),
                    ms(r.paused_ns as u64)
                ),
                flow: None,
                src_mac: Some(r.src_mac.clone()),
                priority: None,
                evidence: vec![EvidenceRef {
                    frame: r.first_frame,
                    ts_ns: 0,
                    what: "first PAUSE frame".into(),
                }],
                weight: r.pause_frames,
                folded: None,
            });
        }
        // No RoCE seen on a priority proves nothing when packets are sampled.
        let unused = kind == PauseKind::Pfc && use_.packets == 0 && !sampled;
        let not_lossless = kind == PauseKind::Pfc
            && a.cfg.audit.lossless_priorities.as_ref().is_some_and(|l| !l.contains(&prio));
        if (unused || not_lossless) && r.pause_frames > 0 {
            // A priority that is not lossless is held to the lossless ones; a lossless (or
            // unconfigured) one no RoCE uses, to the priorities RoCE does use (priorities by
            // trust mode and DSCP map, reference §1.9).
            let expected = match &a.cfg.audit.lossless_priorities {
                Some(l) if not_lossless => Value::List(l.iter().map(|p| u64::from(*p)).collect()),
                _ => Value::List(roce_priorities(a, point)),
            };
            violations.push(Violation {
                point,
                flow: None,
                what: "pause_priority".into(),
                expected,
                seen: Value::Num(u64::from(prio)),
                packets: r.pause_frames,
                first_frame: r.first_frame,
                src_mac: Some(r.src_mac.clone()),
                flow_index: None,
            });
        }
        pfc.push(r);
    }

    pfc
}

/// Least share of a capture point's span one MAC must keep a priority paused for
/// `pfc_without_ecn`: 5%. With [`PFC_WITHOUT_ECN_MIN_PAUSES`] separate pauses, one short
/// burst of pauses never fires it.
pub const PFC_WITHOUT_ECN_MIN_SHARE: f64 = 0.05;

/// Least separate paused intervals (pauses that ended before the next began) for
/// `pfc_without_ecn`: 10. Pausing again and again is the pattern of a queue that reaches
/// XOFF time after time with no ECN slowing its senders first.
pub const PFC_WITHOUT_ECN_MIN_PAUSES: u64 = 10;

/// Least ECN-capable (ECT(0) or ECT(1)) RoCE data packets on the priority at the point for
/// `pfc_without_ecn`: 100. With fewer, no CE mark among them proves little.
pub const PFC_WITHOUT_ECN_MIN_ECT: u64 = 100;

/// What the RoCE data on one priority at one capture point carried, for
/// [`pfc_without_ecn`]: ECN-capable packets, Not-ECT packets, CE marks, CNPs received.
#[derive(Clone, Copy, Debug, Default)]
struct PriorityEcn {
    ect: u64,
    not_ect: u64,
    ce: u64,
    cnps: u64,
}

/// The ECN the data flows (those that sent requests) on priority `prio` at `point` carried.
fn priority_ecn(a: &Analyzer, point: u16, prio: u8) -> PriorityEcn {
    use rocescope_decoder::Ecn;
    let mut e = PriorityEcn::default();
    for f in a.flows.iter().filter(|f| f.key.point == point && f.priority == Some(prio) && f.requests() > 0) {
        let ecn = f.ecn();
        e.ect += ecn[Ecn::Ect0 as usize] + ecn[Ecn::Ect1 as usize];
        e.not_ect += ecn[Ecn::NotEct as usize];
        e.ce += ecn[Ecn::Ce as usize];
        e.cnps += f.cold().cnps_received;
    }
    e
}

/// `pfc_without_ecn` (docs/verdicts.md "PFC and PAUSE"; field notes, "ECN before PFC"): a
/// PFC priority that one MAC kept paused at least [`PFC_WITHOUT_ECN_MIN_SHARE`] of its
/// capture point's span by at least [`PFC_WITHOUT_ECN_MIN_PAUSES`] pauses, while the RoCE
/// data on it there was ECN-capable (at least [`PFC_WITHOUT_ECN_MIN_ECT`] ECT packets, more
/// than Not-ECT ones), carried no CE mark and drew no CNP. A sound profile marks CE below
/// the PFC XOFF threshold, so DCQCN slows the senders before pauses fire: ECN is off on the
/// switch for that priority, or its thresholds sit above XOFF. Data that is mostly Not-ECT
/// could not be marked at all (ECN not enabled at the NICs): no finding then, the switch is
/// not to blame. One finding per (point, priority), on its most paused MAC.
pub(super) fn pfc_without_ecn(
    a: &Analyzer,
    points: &[crate::PointTotals],
    pfc: &[PauseReport],
    findings: &mut FindingSink,
) {
    let (start, end) = (a.totals.start_ns.unwrap_or(0), a.totals.end_ns.unwrap_or(0));
    let mut keys: Vec<(u16, u8)> =
        pfc.iter().filter(|r| r.kind == PauseKind::Pfc).map(|r| (r.point, r.priority)).collect();
    keys.sort_unstable();
    keys.dedup();
    for (point, prio) in keys {
        let Some(r) = pfc
            .iter()
            .filter(|r| r.kind == PauseKind::Pfc && r.point == point && r.priority == prio)
            .max_by_key(|r| r.paused_ns)
        else {
            continue;
        };
        let p = points.get(usize::from(point));
        let span = p.and_then(|p| p.end_ns).unwrap_or(end) - p.and_then(|p| p.start_ns).unwrap_or(start);
        let pauses = r.intervals.len() as u64 + r.intervals_dropped;
        if span <= 0
            || (r.paused_ns as f64) < PFC_WITHOUT_ECN_MIN_SHARE * span as f64
            || pauses < PFC_WITHOUT_ECN_MIN_PAUSES
        {
            continue;
        }
        let e = priority_ecn(a, point, prio);
        if e.ce > 0 || e.cnps > 0 {
            continue;
        }
        let share = r.paused_ns as f64 / span as f64;
        // RoCE that is not ECN-capable cannot be marked: the switch is not to blame, the
        // senders' NICs are (ECN off at the reaction point, so DCQCN never slows them), and
        // PFC does all the flow control. Said as such, never as a switch that does not mark.
        let head = format!(
            "priority {prio}{} paused {:.0}% of the capture by {} ({}, {} in all) while its",
            at_point(a, point),
            share * 100.0,
            r.src_mac,
            plural(pauses, "pause", "pauses"),
            ms(r.paused_ns.max(0) as u64),
        );
        let title = if e.not_ect >= PFC_WITHOUT_ECN_MIN_ECT && e.not_ect > e.ect {
            format!(
                "{head} RoCE data is not ECN-capable ({}): no switch can mark it, so DCQCN never slows the senders and PFC does all the flow control; enable ECN for RoCE on the sending hosts' NICs (check with --expect-ecn)",
                plural(e.not_ect, "Not-ECT packet", "Not-ECT packets"),
            )
        } else if e.ect < PFC_WITHOUT_ECN_MIN_ECT || e.ect <= e.not_ect {
            continue;
        } else {
            format!(
                "{head} ECN-capable RoCE data ({}) carried no CE mark and drew no CNP: ECN is off on the switch for this priority, or its marking threshold sits above the PFC threshold, so pauses fire before ECN slows any sender (ECN should mark before PFC pauses)",
                plural(e.ect, "ECT packet", "ECT packets"),
            )
        };
        let evidence = r
            .intervals
            .iter()
            .take(3)
            .map(|i| EvidenceRef {
                frame: i.first_frame,
                ts_ns: i.start_ns,
                what: format!(
                    "PFC pause on priority {prio} from {}, {}",
                    r.src_mac,
                    ms((i.end_ns - i.start_ns) as u64)
                ),
            })
            .collect();
        findings.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::PfcWithoutEcn,
            title,
            flow: None,
            src_mac: Some(r.src_mac.clone()),
            priority: Some(prio),
            evidence,
            weight: pauses,
            folded: None,
        });
    }
}
