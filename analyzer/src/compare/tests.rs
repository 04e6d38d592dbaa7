//! The verdict rules on profiles built by hand: each fires where its rule says, and not
//! within noise.

use super::*;

const SPAN: u64 = 1_000_000_000;

fn prio(p: u8, packets: u64) -> PriorityProfile {
    PriorityProfile {
        priority: p,
        bytes: packets * 1000,
        packets,
        data_packets: packets / 2,
        data_ecn_packets: packets / 2,
        qps: 2,
        gbps_bins: vec![8.0 * packets as f64 * 1000.0 / 1e9; 10],
        pause_bins: vec![0.0; 10],
        ..Default::default()
    }
}

fn marks(dscp: u8, pcp: Option<u8>, packets: u64) -> ClassMarks {
    let pcp: Vec<u8> = pcp.into_iter().collect();
    ClassMarks {
        packets,
        dscp: vec![Share { values: vec![dscp], packets, flows: 2 }],
        pcp: vec![Share { values: pcp, packets, flows: 2 }],
        ecn: [0, packets, 0, 0],
    }
}

fn qp(n: u32, p: u8, dscp: u8, loss: u64) -> QpFact {
    QpFact {
        qp: format!("10.0.0.1 > 10.0.0.2 QP {n:#x}"),
        priority: Some(p),
        data_packets: 1000,
        dscp: vec![dscp],
        pcp: Vec::new(),
        network_loss: loss,
        resends: loss,
    }
}

fn profile(p: PriorityProfile) -> Profile {
    let data = marks(26, None, p.data_packets);
    let roce = p.packets;
    Profile {
        points: vec![PointProfile {
            name: "a.pcap".into(),
            span_ns: SPAN,
            pmtu: 4096,
            qps: 2,
            connections: 2,
            priorities: vec![p],
            marks: Marks { data, ..Default::default() },
            qp: vec![qp(1, 3, 26, 0), qp(2, 3, 26, 0)],
        }],
        sampled: false,
        capture_share: None,
        partial: false,
        findings: Some(Default::default()),
        nccl: None,
        options: Default::default(),
        roce,
        family_packets: [roce, 0],
        ..Default::default()
    }
}

fn titles(c: &Comparison) -> Vec<String> {
    c.verdicts.iter().map(|v| format!("{:?} {}: {}", v.severity, v.kind, v.title)).collect()
}

#[test]
fn the_same_profile_is_no_change() {
    let p = profile(prio(3, 100_000));
    let c = Comparison::new(&p, &p, &Limits::default());
    assert!(c.verdicts.is_empty() && c.unmatched.is_empty(), "{:?}", titles(&c));
    assert_eq!(c.changes_beyond_noise, 0);
    assert!(!c.fails(Some(Severity::Info)));
}

/// `n` ACK latency samples in time order: about 10 µs, and one in 33 (evenly spread) about
/// `tail` ns; each within ±5%.
fn ack_samples(n: usize, tail: u64) -> crate::latency_samples::SampleSet {
    let exact = (0..n)
        .map(|i| {
            let base = if i % 33 == 16 { tail } else { 10_000 };
            base - base / 20 + (i as u64 * 7_919 % 1_000) * base / 10_000
        })
        .collect();
    crate::latency_samples::SampleSet { count: n as u64, exact: Some(exact), ..Default::default() }
}

#[test]
fn ack_latency_p99_doubled_with_enough_samples_only() {
    let mut b = prio(3, 100_000);
    b.ack_samples = Some(ack_samples(660, 20_000));
    let mut a = b.clone();
    a.ack_samples = Some(ack_samples(660, 40_000));
    let c = Comparison::new(&profile(b.clone()), &profile(a.clone()), &Limits::default());
    let t = titles(&c);
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(t[0].starts_with("Warning latency_rose: ACK latency p99 doubled on priority 3 (2"), "{t:?}");
    assert!(c.fails(Some(Severity::Warning)) && !c.fails(Some(Severity::Critical)));
    let rows = &c.points[0].priorities[0].rows;
    let row = |m: &str| rows.iter().find(|r| r.metric == m).unwrap();
    let p99 = row("ack_p99_ns");
    assert_eq!(
        (p99.noise, p99.beyond_noise, p99.before_samples, p99.after_samples),
        ("samples", Some(true), Some(660), Some(660))
    );
    let (ib, ia) = (p99.before_interval.unwrap(), p99.after_interval.unwrap());
    assert!(ib.lo <= p99.before.unwrap() && p99.before.unwrap() <= ib.hi && ib.hi < ia.lo, "{p99:?}");
    // The medians are the same: within noise.
    assert_eq!(row("ack_p50_ns").beyond_noise, Some(false));
    // 330 samples make no p99 (400 do: 4 batches of 100).
    b.ack_samples = Some(ack_samples(330, 20_000));
    a.ack_samples = Some(ack_samples(330, 40_000));
    let c = Comparison::new(&profile(b.clone()), &profile(a.clone()), &Limits::default());
    assert!(c.verdicts.is_empty(), "{:?}", titles(&c));
    let p99 = c.points[0].priorities[0].rows.iter().find(|r| r.metric == "ack_p99_ns").unwrap().clone();
    assert_eq!((p99.beyond_noise, p99.before_interval), (None, None));
    // Summaries alone (an older report document): shown, never judged.
    b.ack_samples = None;
    b.ack = Some(LatencyStat { count: 500, p50_ns: 10_000, p99_ns: 20_000 });
    a.ack = Some(LatencyStat { count: 500, p50_ns: 10_000, p99_ns: 40_000 });
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    assert!(c.verdicts.is_empty(), "{:?}", titles(&c));
    let p99 = c.points[0].priorities[0].rows.iter().find(|r| r.metric == "ack_p99_ns").unwrap().clone();
    assert_eq!(
        (p99.noise, p99.before, p99.after, p99.beyond_noise),
        ("summaries", Some(20_000.0), Some(40_000.0), None)
    );
}

/// The case: 2 to 8 samples per QP, a median "doubled" between two 1.2 ms captures
/// of the same workload whose latency climbs as the burst goes on. The samples (ACK latency
/// in µs, in time order) of two of the Mellanox captures: their order-statistic intervals
/// barely overlap (40-74 µs, 72-158 µs); the batches say how much a capture's moments
/// differ, and the intervals overlap widely.
#[test]
fn a_median_that_moves_with_time_is_no_verdict() {
    let set = |us: &[u64]| crate::latency_samples::SampleSet {
        count: us.len() as u64,
        exact: Some(us.iter().map(|x| x * 1_000).collect()),
        ..Default::default()
    };
    // rocev2-2_test.pcap and rocev1_test.pcap, priority 3 (medians 55 µs and 107 µs).
    let before = [
        23, 38, 13, 25, 41, 46, 24, 48, 23, 15, 15, 37, 40, 13, 30, 4, 74, 85, 76, 56, 78, 55, 56, 33, 35,
        45, 25, 26, 15, 24, 25, 6, 60, 51, 29, 56, 75, 106, 208, 104, 64, 1, 61, 324, 188, 15, 166, 46, 122,
        275, 291, 1, 47, 32, 220, 143, 82, 332, 361, 473, 504, 64, 133, 251, 62, 86, 117, 130,
    ];
    let after = [
        18, 9, 10, 10, 19, 23, 55, 55, 46, 37, 45, 29, 76, 70, 148, 15, 200, 147, 289, 158, 191, 230, 56,
        100, 493, 139, 148, 356, 72, 97, 279, 350, 375, 78, 195, 301, 45, 149, 158, 199, 55, 356, 382, 417,
        50, 65, 107, 377, 79, 137, 169, 72, 405, 141,
    ];
    let mut b = prio(3, 100_000);
    b.ack_samples = Some(set(&before));
    let mut a = b.clone();
    a.ack_samples = Some(set(&after));
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    assert!(c.verdicts.is_empty(), "{:?}", titles(&c));
    let p50 = c.points[0].priorities[0].rows.iter().find(|r| r.metric == "ack_p50_ns").unwrap().clone();
    assert!(p50.ratio.unwrap() > 1.9, "the medians are about 2x apart: {p50:?}");
    assert_eq!(p50.beyond_noise, Some(false), "{p50:?}");
}

#[test]
fn loss_appeared_on_the_qps_that_lose_and_one_loss_is_noise() {
    let b = prio(3, 200_000);
    let mut a = b.clone();
    a.network_loss = 50;
    a.resends = 50;
    let mut after = profile(a);
    after.points[0].qp = vec![qp(1, 3, 26, 30), qp(2, 3, 26, 20), qp(3, 3, 26, 0)];
    let c = Comparison::new(&profile(b.clone()), &after, &Limits::default());
    assert_eq!(
        titles(&c).first().map(String::as_str),
        Some("Critical loss_rose: loss appeared on 2 QPs (priority 3: 0 → 500 per million packets)")
    );
    let mut one = b.clone();
    one.network_loss = 1;
    let c = Comparison::new(&profile(b), &profile(one), &Limits::default());
    assert!(!c.verdicts.iter().any(|v| v.kind == "loss_rose"), "{:?}", titles(&c));
}

#[test]
fn ecn_stopped_and_what_the_pause_says() {
    let mut b = prio(3, 100_000);
    b.ce = 2_000;
    b.data_ce = 2_000;
    b.cnps = 500;
    b.pause_ns = 1_000_000; // 1000 µs/s
    b.pause_bins = vec![1000.0; 10];
    let mut a = b.clone();
    a.ce = 0;
    a.data_ce = 0;
    a.cnps = 0;
    a.pause_ns = 40_000_000;
    a.pause_bins = vec![40_000.0; 10];
    let c = Comparison::new(&profile(b.clone()), &profile(a.clone()), &Limits::default());
    assert_eq!(
        titles(&c),
        ["Critical ecn_stopped: ECN marking stopped on priority 3 while paused time rose 40x: ECN is probably off on the switch"]
    );
    // No pause rise: a warning that says both readings.
    a.pause_ns = b.pause_ns;
    a.pause_bins = b.pause_bins.clone();
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    let t = titles(&c);
    assert!(t[0].starts_with("Warning ecn_stopped") && t[0].contains("or the congestion went away"), "{t:?}");
}

#[test]
fn data_no_longer_ecn_capable_is_told_apart_from_a_switch() {
    let mut b = prio(3, 100_000);
    b.ce = 1_000;
    b.data_ce = 1_000;
    let mut a = b.clone();
    a.ce = 0;
    a.data_ce = 0;
    let before = profile(b);
    let mut after = profile(a);
    after.points[0].marks.data.ecn = [50_000, 0, 0, 0];
    let c = Comparison::new(&before, &after, &Limits::default());
    let t = titles(&c);
    assert!(
        t.iter().any(|x| x.starts_with("Critical ecn_capable_stopped: RoCE data is no longer ECN-capable")),
        "{t:?}"
    );
    assert!(!t.iter().any(|x| x.contains("ecn_stopped:")), "the switch is not blamed: {t:?}");
}

#[test]
fn marks_pmtu_and_pcp() {
    let b = profile(prio(3, 100_000));
    let mut a = b.clone();
    a.points[0].pmtu = 1024;
    a.points[0].marks.data = marks(26, Some(3), 50_000);
    for q in &mut a.points[0].qp {
        q.pcp = vec![3];
    }
    let c = Comparison::new(&b, &a, &Limits::default());
    let t = titles(&c);
    assert!(
        t.contains(&"Warning pcp_moved: RoCE data moved from untagged to PCP 3 on 2 QPs".to_string()),
        "{t:?}"
    );
    assert!(t.contains(&"Warning pmtu_changed: path MTU fell from 4096 to 1024".to_string()), "{t:?}");
}

#[test]
fn points_pair_by_name_and_the_rest_is_said() {
    let mut b = profile(prio(3, 1000));
    let mut second = b.points[0].clone();
    second.name = "b.pcap".into();
    b.points.push(second);
    let mut a = b.clone();
    a.points[1].name = "c.pcap".into();
    let c = Comparison::new(&b, &a, &Limits::default());
    assert_eq!(c.points.len(), 1);
    let u: Vec<(&str, &str)> = c.unmatched.iter().map(|u| (u.side, u.point.as_str())).collect();
    assert_eq!(u, [("before", "b.pcap"), ("after", "c.pcap")]);
    assert!(c.verdicts.iter().all(|v| v.kind == "point_one_side" && v.severity == Severity::Warning));
    assert_eq!(c.pairing, Pairing { by: "name", before_root: None, after_root: None, paired: 1 });
}

/// Points named by their paths (files sharing a file name) pair by the path below each
/// side's directory; names that pair as they are keep pairing by name; one point a side
/// pairs whatever its name.
#[test]
fn points_named_by_path_pair_below_each_sides_root() {
    let named = |names: &[&str]| {
        let mut p = profile(prio(3, 1000));
        let one = p.points[0].clone();
        p.points = names.iter().map(|n| PointProfile { name: n.to_string(), ..one.clone() }).collect();
        p
    };
    let b = named(&[
        "/data/before/host1/roce.pcap",
        "/data/before/host2/roce.pcap",
        "/data/before/host3/roce.pcap",
    ]);
    let a = named(&["after/host2/roce.pcap", "after/host1/roce.pcap", "after/host4/roce.pcap"]);
    let c = Comparison::new(&b, &a, &Limits::default());
    assert_eq!(
        c.pairing,
        Pairing {
            by: "path_below_root",
            before_root: Some("/data/before/".into()),
            after_root: Some("after/".into()),
            paired: 2
        }
    );
    let pairs: Vec<(&str, &str)> =
        c.points.iter().map(|p| (p.before_name.as_str(), p.name.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("/data/before/host1/roce.pcap", "after/host1/roce.pcap"),
            ("/data/before/host2/roce.pcap", "after/host2/roce.pcap")
        ]
    );
    let u: Vec<(&str, &str)> = c.unmatched.iter().map(|u| (u.side, u.point.as_str())).collect();
    assert_eq!(u, [("before", "/data/before/host3/roce.pcap"), ("after", "after/host4/roce.pcap")]);
    // The same names on both sides: by name, whatever their directories.
    let same = named(&["x/a.pcap", "x/b.pcap"]);
    assert_eq!(Comparison::new(&same, &same, &Limits::default()).pairing.by, "name");
    // One a side.
    let (one, other) = (named(&["before/roce.pcap"]), named(&["after/new.pcap"]));
    let c = Comparison::new(&one, &other, &Limits::default());
    assert_eq!((c.pairing.by, c.points.len()), ("one_each", 1));
    // Roots are whole directories: `/` alone, shared by every absolute path, is none.
    assert_eq!(root(["/a/x.pcap", "/b/x.pcap"].into_iter()), None);
    assert_eq!(root(["ab/x.pcap", "ac/x.pcap"].into_iter()), None);
    assert_eq!(root(["r/ab/x.pcap", "r/ac/x.pcap"].into_iter()), Some("r/".into()));
}

#[test]
fn limits_read_percent_ratios_and_refuse_nonsense() {
    let mut l = Limits::default();
    l.set("throughput-drop", "10%").unwrap();
    l.set("latency-rise", "2x").unwrap();
    l.set("mark-share", "0.05").unwrap();
    assert_eq!((l.throughput_drop, l.latency_rise, l.mark_share), (0.1, 2.0, 0.05));
    assert!(l.set("throughput-drop", "150%").is_err());
    assert!(l.set("latency-rise", "0.5").is_err());
    assert!(l.set("loss-ppm", "-1").is_err());
    assert!(l.set("loss-ppm", "NaN").is_err());
    assert!(l.set("speed", "1").unwrap_err().contains("throughput-drop"));
}

/// Rates in a verdict's title keep their digits however slow the capture: kb/s below 1 Mb/s.
#[test]
fn rates_in_titles_pick_a_unit_that_shows_them() {
    use super::verdicts::gbps;
    assert_eq!(gbps(32.1e-3, 22.5e-3), "32.1 → 22.5 Mb/s");
    assert_eq!(gbps(0.0412e-3, 0.0012e-3), "41.2 → 1.2 kb/s");
    assert_eq!(gbps(2.5, 0.5), "2.50 → 0.50 Gb/s");
}

/// Review fixes: a value that only flows with several values carry is not a firm move; a
/// single lost packet beyond noise is a warning, not critical; all RoCE gone is a warning;
/// a pause rise with no noise interval (too few bins) makes no verdict.
#[test]
fn weak_evidence_makes_no_critical_and_no_gate_failure() {
    // CNP flows carried {48} before and {26, 48} after (one ACK on 26 among their CNPs).
    let base = prio(3, 200_000);
    let mut before = profile(base.clone());
    let mut after = profile(base.clone());
    let cnp = |values: Vec<u8>| ClassMarks {
        packets: 1_000,
        dscp: vec![Share { values, packets: 1_000, flows: 4 }],
        pcp: vec![Share { values: Vec::new(), packets: 1_000, flows: 4 }],
        ecn: [0, 1_000, 0, 0],
    };
    before.points[0].marks.cnp = cnp(vec![48]);
    after.points[0].marks.cnp = cnp(vec![26, 48]);
    let c = Comparison::new(&before, &after, &Limits::default());
    assert!(!c.fails(Some(Severity::Warning)), "{:?}", titles(&c));
    assert!(
        titles(&c).iter().any(|t| t.starts_with("Info cnp_dscp_moved: CNPs may now arrive")),
        "{:?}",
        titles(&c)
    );
    // One lost packet, beyond noise on a large capture: a warning.
    let mut a = base.clone();
    a.network_loss = 1;
    a.resends = 1;
    let mut b = base.clone();
    b.data_packets = 20;
    a.data_packets = 20;
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    let loss: Vec<_> = c.verdicts.iter().filter(|v| v.kind == "loss_rose").collect();
    assert!(loss.iter().all(|v| v.severity == Severity::Warning), "{:?}", titles(&c));
    // Every RoCE packet gone after the change: CRITICAL (issue 38: a WARNING let
    // `--fail-on critical` pass it).
    let mut empty = profile(base.clone());
    empty.points[0].priorities.clear();
    let c = Comparison::new(&profile(base.clone()), &empty, &Limits::default());
    assert!(titles(&c).iter().any(|t| t.starts_with("Critical roce_stopped")), "{:?}", titles(&c));
    assert!(c.fails(Some(Severity::Critical)));
    // Paused time from none to 3% with one bin a side: no interval, no verdict.
    let mut b = base.clone();
    b.pause_bins = vec![0.0];
    let mut a = b.clone();
    a.pause_ns = 30_000_000;
    a.pause_bins = vec![30_000.0];
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    assert!(
        !c.verdicts.iter().any(|v| v.kind == "pause_rose" || v.kind == "ecn_stopped"),
        "{:?}",
        titles(&c)
    );
}

/// Two report documents checked against different NCCL files: no claim that the wire moved.
#[test]
fn nccl_values_that_differ_between_sides_are_not_a_wire_change() {
    let var = |value: &str, verdict: &str| NcclVarFacts {
        name: "NCCL_IB_TC".into(),
        value: Some(value.into()),
        verdict: verdict.into(),
        wire: String::new(),
        would_match: None,
    };
    let mut before = profile(prio(3, 1_000));
    let mut after = before.clone();
    before.nccl = Some(vec![var("104", "match")]);
    after.nccl = Some(vec![var("0", "mismatch")]);
    let c = Comparison::new(&before, &after, &Limits::default());
    assert_eq!(
        c.verdicts.iter().map(|v| v.kind).collect::<Vec<_>>(),
        ["nccl_setting_changed"],
        "{:?}",
        titles(&c)
    );
    assert_eq!(c.nccl.first().and_then(|n| n.before_value.clone()), Some(Some("104".to_string())));
}

/// A profile whose report found `n` findings of `kind`, the worst of severity `sev`.
fn with_findings(mut p: Profile, kind: &str, n: u64, sev: Severity) -> Profile {
    p.findings.get_or_insert_with(Default::default).insert(kind.into(), n);
    p.findings_worst.insert(kind.into(), (sev, format!("{n} things")));
    p
}

#[test]
fn a_finding_kind_appearing_or_growing_is_a_verdict_unless_a_specific_one_says_it() {
    let before = profile(prio(3, 100_000));
    let after = with_findings(before.clone(), "icrc_bad", 3, Severity::Critical);
    let c = Comparison::new(&before, &after, &Limits::default());
    let v = &c.verdicts[0];
    assert_eq!(
        (v.severity, v.kind, v.finding.as_deref()),
        (Severity::Critical, "finding_rose", Some("icrc_bad"))
    );
    assert!(v.title.contains("icrc_bad findings appeared: 3 after, none before"), "{}", v.title);
    // An INFO finding appearing once is within noise; growing 2 → 40 is not.
    let after = with_findings(before.clone(), "out_of_order", 1, Severity::Info);
    assert!(Comparison::new(&before, &after, &Limits::default()).verdicts.is_empty());
    let b2 = with_findings(before.clone(), "out_of_order", 2, Severity::Info);
    let a2 = with_findings(before.clone(), "out_of_order", 40, Severity::Info);
    let c = Comparison::new(&b2, &a2, &Limits::default());
    assert_eq!(titles(&c), ["Info finding_rose: out_of_order findings rose: 2 → 40 (worst INFO: 40 things)"]);
    // As many per packet in a capture twice as long: no rise.
    let mut a3 = with_findings(before.clone(), "out_of_order", 80, Severity::Info);
    let mut b3 = with_findings(before.clone(), "out_of_order", 40, Severity::Info);
    b3.roce = 100_000;
    a3.roce = 200_000;
    assert!(Comparison::new(&b3, &a3, &Limits::default()).verdicts.is_empty());
    // The same counts on both sides: nothing.
    assert!(Comparison::new(&a2, &a2, &Limits::default()).verdicts.is_empty());
}

#[test]
fn the_specific_verdict_wins_over_the_finding_one() {
    let mut before = profile(prio(3, 100_000));
    before.points[0].priorities[0].data_packets = 100_000;
    let mut after = before.clone();
    after.points[0].priorities[0].network_loss = 100;
    after.points[0].qp[0].network_loss = 100;
    let after = with_findings(after, "network_loss", 1, Severity::Critical);
    let c = Comparison::new(&before, &after, &Limits::default());
    let kinds: Vec<&str> = c.verdicts.iter().map(|v| v.kind).collect();
    assert!(kinds.contains(&"loss_rose") && !kinds.contains(&"finding_rose"), "{:?}", titles(&c));
}

/// `before` with its QPs (one host pair) on priority `p` and DSCP `dscp`.
fn on_class(p: u8, dscp: u8) -> Profile {
    let mut x = profile(prio(p, 100_000));
    x.points[0].qp = vec![qp(1, p, dscp, 0), qp(2, p, dscp, 0)];
    x
}

#[test]
fn a_priority_emptied_into_another_is_critical_and_a_fix_toward_the_expectation_is_info() {
    let (bad, good) = (on_class(0, 0), on_class(3, 26));
    let c = Comparison::new(&good, &bad, &Limits::default());
    let v = c.verdicts.iter().find(|v| v.kind == "class_left").unwrap();
    assert_eq!(v.severity, Severity::Critical);
    assert_eq!(
        v.title,
        "priority 3 lost 100% of its RoCE; it now travels on priority 0, where it was not before"
    );
    let lossless = crate::audit::AuditConfig { lossless_priorities: Some(vec![3]), ..Default::default() };
    let c = Comparison::expecting(&good, &bad, &Limits::default(), &lossless);
    let v = c.verdicts.iter().find(|v| v.kind == "class_left").unwrap();
    assert!(v.title.ends_with("priority 0, which is lossy"), "{}", v.title);
    // The rollback: toward the lossless class, or the expected DSCP.
    for expect in [lossless, crate::audit::AuditConfig { roce_dscp: Some(vec![26]), ..Default::default() }] {
        let c = Comparison::expecting(&bad, &good, &Limits::default(), &expect);
        let v = c.verdicts.iter().find(|v| v.kind == "class_left").unwrap();
        assert_eq!(v.severity, Severity::Info, "{}", v.title);
        assert!(v.title.contains(": fixed"), "{}", v.title);
    }
}

#[test]
fn rocev1_appearing_and_nothing_to_compare() {
    let before = profile(prio(3, 100_000));
    let mut after = before.clone();
    after.roce_v1 = 500;
    let c = Comparison::new(&before, &after, &Limits::default());
    assert_eq!(c.verdicts[0].kind, "rocev1_appeared");
    assert_eq!(c.verdicts[0].severity, Severity::Warning);
    let row = c.rows.iter().find(|r| r.metric == "roce_v1_share").unwrap();
    assert_eq!((row.before, row.beyond_noise), (Some(0.0), Some(true)));
    assert!(!c.nothing_to_compare);
    let none = Profile { findings: Some(Default::default()), ..Default::default() };
    let c = Comparison::new(&none, &none, &Limits::default());
    assert!(c.nothing_to_compare && c.verdicts.is_empty());
}

#[test]
fn ce_no_longer_seen_while_cnps_go_on_is_the_capture_point_not_ecn_off() {
    let mut b = prio(3, 100_000);
    b.ce = 2_000;
    b.data_ce = 2_000;
    b.cnps = 500;
    let mut a = b.clone();
    a.ce = 0;
    a.data_ce = 0;
    let c = Comparison::new(&profile(b.clone()), &profile(a.clone()), &Limits::default());
    let t = titles(&c);
    assert!(
        t.iter().any(|x| x.starts_with("Info ce_unseen: CE marks on priority 3 are no longer seen here")),
        "{t:?}"
    );
    assert!(!t.iter().any(|x| x.contains("ecn_stopped")), "no ECN-off verdict while CNPs go on: {t:?}");
    // The CNPs stopped too: ECN off after all.
    a.cnps = 0;
    let c = Comparison::new(&profile(b), &profile(a), &Limits::default());
    assert!(titles(&c).iter().any(|x| x.contains("ecn_stopped")), "{:?}", titles(&c));
}

#[test]
fn cnps_moved_to_another_pcp_are_a_warning() {
    let base = prio(3, 100_000);
    let mut before = profile(base.clone());
    before.points[0].marks.cnp = marks(48, Some(6), 500);
    let mut after = profile(base);
    after.points[0].marks.cnp = marks(48, Some(0), 500);
    let c = Comparison::new(&before, &after, &Limits::default());
    let t = titles(&c);
    assert!(t.iter().any(|x| x == "Warning cnp_pcp_moved: CNPs moved from PCP 6 to PCP 0"), "{t:?}");
    let c = Comparison::new(&before, &before.clone(), &Limits::default());
    assert!(!titles(&c).iter().any(|x| x.contains("cnp_pcp_moved")));
}
