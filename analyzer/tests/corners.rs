//! Issue 40, the third round: report documents out of schema are refused, and the corners
//! that searched a list inside a loop over it are linear (docs/reliability.md "Issue 40").
//!
//! A scale test runs the same work on N and 8N things and asserts the larger took less than
//! 24 times as long (best of three runs each): linear work takes about 8 times, the
//! quadratic searches took 64 times (seconds, at these sizes, where the linear takes
//! milliseconds). The bound is generous: the machine is shared.

use rocescope_analyzer::compare::{
    Comparison, FlowFacts, Limits, NcclFacts, NcclVarFacts, PointFacts, Profile, ReportFacts, TimelinePoint,
    TimelinePriority,
};
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions};
use std::time::Instant;

/// The least time `work` takes on what `make` builds, of three runs.
fn best<T>(make: &impl Fn() -> T, work: &impl Fn(&T)) -> f64 {
    (0..3)
        .map(|_| {
            let input = make();
            let t = Instant::now();
            work(&input);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// `work` on `make(8 n)` takes less than 24 times as long as on `make(n)` (module docs).
fn linear<T>(what: &str, n: usize, make: impl Fn(usize) -> T, work: impl Fn(&T)) {
    let small = best(&|| make(n), &work);
    let large = best(&|| make(8 * n), &work);
    assert!(
        large < small * 24.0 + 0.05,
        "{what}: {small:.4} s for {n}, {large:.4} s for {}: not linear",
        8 * n
    );
}

/// A WRITE of 64 bytes from `src` to `dst` (QP `qp`, DSCP `dscp`, ECT(0)), at `ts`.
fn push(a: &mut Analyzer, number: u64, ts: i64, src: [u8; 4], dst: [u8; 4], qp: u32, dscp: u8) {
    let ip = IpRepr::V4 { src: src.into(), dst: dst.into(), dscp, ecn: Ecn::Ect0, ttl: 64, id: 0 };
    let bth =
        BthRepr { opcode: Opcode::RC_WRITE_ONLY, dest_qp: qp, psn: 1, ack_req: true, ..Default::default() };
    let ext = ExtRepr { reth: Some(RethRepr { va: 0, rkey: 1, dma_len: 64 }), ..Default::default() };
    let ib = IbRepr { bth, ext, payload: vec![0; 64], icrc: IcrcMode::Correct };
    let data =
        RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(OpcodeOptions { dc: false });
    let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
    a.push(&FrameMeta { number, ts_ns: ts, len: data.len() as u32, link_bps: None, point: 0 }, &p);
}

/// A report of a few QPs on DSCP 26 (priority 3 through the default map), as its JSON
/// document.
fn document() -> serde_json::Value {
    let mut a = Analyzer::new(Config::default());
    for q in 0..4u32 {
        push(&mut a, u64::from(q) + 1, i64::from(q) * 1_000, [10, 0, 0, 1], [10, 0, 0, 2], 0x100 + q, 26);
    }
    a.finish();
    serde_json::to_value(a.report()).expect("the report serialises")
}

#[test]
fn values_out_of_the_schema_are_refused_naming_their_path() {
    let doc = document();
    let facts = ReportFacts::from_json(&doc).expect("the report itself is read");
    assert!(!facts.flows.is_empty() && !facts.timeline.points.is_empty(), "{doc:#}");
    let cases: [(&str, serde_json::Value, &str); 10] = [
        // Issue 40's document: its traffic left every priority, the ECN-off CRITICAL
        // vanished and the gate passed.
        (
            "/timeline/points/0/priorities/0/priority",
            255.into(),
            "timeline.points[0].priorities[0].priority is 255",
        ),
        ("/flows/0/priority", 9.into(), "flows[0].priority is 9; the schema allows 0 to 7"),
        ("/flows/1/dscp/0", 64.into(), "flows[1].dscp[0] is 64; the schema allows 0 to 63"),
        ("/flows/0/point", 3.into(), "flows[0].point is 3, but the document's points has 1 entries"),
        ("/flows/0/partner", 99.into(), "flows[0].partner is 99"),
        ("/flows/2/pmtu", 1500.into(), "flows[2].pmtu is 1500"),
        ("/flows/0/dest_qp", 0x100_0000.into(), "flows[0].dest_qp is 16777216"),
        ("/timeline/base_ns", 5.into(), "timeline.base_ns is 5; the schema allows 1000 to 1000000000"),
        ("/timeline/points/0/bin_ns", 0.into(), "timeline.points[0].bin_ns is 0"),
        ("/config/storm_threshold", 2.into(), "config.storm_threshold is 2"),
    ];
    for (at, value, says) in cases {
        let mut d = doc.clone();
        *d.pointer_mut(at).unwrap_or_else(|| panic!("{at} in {doc:#}")) = value;
        let e = ReportFacts::from_json(&d).expect_err(at);
        assert!(e.contains("out of the report schema") && e.contains(says), "{at}: {e}");
        // The same, read as a stream (compare reads a document that way).
        let text = serde_json::to_vec(&d).unwrap_or_default();
        let e = ReportFacts::from_reader(text.as_slice()).expect_err(at);
        assert!(e.contains(says), "{at}: {e}");
    }
    // A finding's severity in a word the schema does not have would have read as INFO.
    let mut d = doc.clone();
    d["findings"] = serde_json::json!([{"severity": "Critical", "kind": "network_loss", "title": "loss"}]);
    let e = ReportFacts::from_json(&d).expect_err("severity");
    assert!(e.contains("findings[0].severity is \"Critical\""), "{e}");
    d["findings"] = serde_json::json!([{"severity": "critical", "kind": "lost", "title": "loss"}]);
    let e = ReportFacts::from_json(&d).expect_err("kind");
    assert!(e.contains("findings[0].kind is \"lost\""), "{e}");
}

/// A report's facts with `n` points, one QP each on priority 3, named `host{i}.pcap`.
fn points(n: usize) -> ReportFacts {
    let flows = (0..n)
        .map(|i| FlowFacts {
            point: u16::try_from(i % 65_536).unwrap_or(0),
            src: "10.0.0.1".into(),
            dst: "10.0.0.2".into(),
            dest_qp: 0x100,
            priority: Some(3),
            packets: 10,
            bytes: 10_000,
            requests: 10,
            dscp: vec![26],
            ..FlowFacts::default()
        })
        .filter(|f| usize::from(f.point) < n)
        .collect();
    let timeline = (0..n.min(65_536))
        .map(|i| TimelinePoint {
            point: i as u16,
            bin_ns: 1_000_000,
            priorities: vec![TimelinePriority {
                priority: 3,
                bytes: vec![10_000],
                packets: vec![10],
                ce: vec![0],
                cnps: vec![0],
                pause_ns: vec![0],
                data_packets: Some(vec![10]),
                data_ce: Some(vec![0]),
            }],
        })
        .collect();
    let mut r = ReportFacts { schema_version: 1, flows, ..ReportFacts::default() };
    r.points = (0..n)
        .map(|i| PointFacts {
            name: format!("host{i}.pcap"),
            packets: 10,
            roce: 10,
            start_ns: Some(0),
            end_ns: Some(1_000_000),
            marks: None,
        })
        .collect();
    r.timeline.base_ns = 1_000_000;
    r.timeline.points = timeline;
    r.summary.roce = 10 * n as u64;
    r
}

/// Two documents of many points, matched by name: each point's flows, series and samples
/// gathered once, each point of one side found in the other by name (40,000 points took
/// 17-22 s, each looked up by a walk of the other side and of every list).
#[test]
fn documents_of_many_points_are_compared_in_linear_time() {
    linear(
        "points",
        1_000,
        |n| {
            let r = points(n);
            assert_eq!(
                ReportFacts::from_json(&serde_json::to_value(&r).unwrap_or_default()).map(|_| ()),
                Ok(())
            );
            r
        },
        |r| {
            let (b, a) = (Profile::from_facts(r), Profile::from_facts(r));
            let c = Comparison::new(&b, &a, &Limits::default());
            assert_eq!(c.points.len(), r.points.len());
            assert!(c.unmatched.is_empty() && c.verdicts.is_empty(), "{:?}", c.verdicts.first());
        },
    );
}

/// Two documents checked against NCCL environments of many variables: each side's found by
/// name (40,000 variables took 10-13 s, each searched for in both lists).
#[test]
fn documents_of_many_nccl_variables_are_compared_in_linear_time() {
    let side = |n: usize, verdict: &str| {
        let mut r = points(1);
        r.nccl = Some(NcclFacts {
            file: Some("nccl.env".into()),
            variables: (0..n)
                .map(|i| NcclVarFacts {
                    name: format!("NCCL_IB_VAR_{i}"),
                    value: Some("1".into()),
                    verdict: verdict.into(),
                    wire: "DSCP 26".into(),
                    would_match: None,
                })
                .collect(),
        });
        Profile::from_facts(&r)
    };
    linear(
        "NCCL variables",
        2_000,
        |n| (side(n, "match"), side(n, "mismatch")),
        |(b, a)| {
            let c = Comparison::new(b, a, &Limits::default());
            assert_eq!(c.nccl.len(), b.nccl.as_ref().map_or(0, Vec::len));
            assert!(c.verdicts.iter().any(|v| v.kind == "nccl_now_mismatch"));
        },
    );
}

/// A DSCP move over many QPs: where each QP was before found by binary search (100,000 QPs
/// took 14.5-17.2 s, each searched for among the QPs before, against 4.6-5.2 s unchanged).
#[test]
fn a_dscp_move_over_many_qps_is_judged_in_linear_time() {
    let side = |n: usize, dscp: u8| {
        let mut r = points(1);
        r.flows = (0..n)
            .map(|q| FlowFacts {
                src: "10.0.0.1".into(),
                dst: "10.0.0.2".into(),
                dest_qp: q as u32,
                priority: Some(3),
                packets: 10,
                bytes: 10_000,
                requests: 10,
                dscp: vec![dscp],
                ..FlowFacts::default()
            })
            .collect();
        Profile::from_facts(&r)
    };
    linear(
        "QPs",
        2_000,
        |n| (side(n, 26), side(n, 0)),
        |(b, a)| {
            let c = Comparison::new(b, a, &Limits::default());
            let moved = c.verdicts.iter().find(|v| v.kind == "dscp_moved").map(|v| v.title.as_str());
            let n = a.points.first().map_or(0, |p| p.qp.len());
            assert!(
                moved.is_some_and(
                    |t| t.contains("moved from DSCP 26 to 0") && t.contains(&format!("on {n} QPs"))
                ),
                "{moved:?}"
            );
        },
    );
}

/// `--nccl-env` of many variables: each assignment and each check finds its variable by
/// name (60,000 lines took 24-38 s, each searching those before).
#[test]
fn an_nccl_environment_of_many_variables_is_read_and_checked_in_linear_time() {
    let report = Analyzer::new(Config::default()).report();
    linear(
        "NCCL environment lines",
        2_000,
        |n| {
            let mut text = String::from("# NCCL version 2.23.4\nNCCL_IB_TC=106\n");
            for i in 0..n {
                text.push_str(&format!("export NCCL_IB_EXTRA_{i}={i}\n"));
            }
            // Set again and unset: the last line wins, an unset variable is gone.
            text.push_str("NCCL_IB_EXTRA_1=one\nunset NCCL_IB_EXTRA_0\n");
            text
        },
        |text| {
            let env = rocescope_analyzer::nccl::parse(text).expect("the environment reads");
            assert_eq!(env.get("NCCL_IB_EXTRA_0"), None);
            assert_eq!(
                env.get("NCCL_IB_EXTRA_1").map(|v| (v.value.as_str(), v.earlier_lines.len())),
                Some(("one", 1))
            );
            let n = text.lines().filter(|l| l.starts_with("export ")).count();
            let last = format!("NCCL_IB_EXTRA_{}", n - 1);
            assert_eq!(env.vars.last().map(|v| v.name.as_str()), Some(last.as_str()));
            let check = rocescope_analyzer::nccl::check(&env, &report);
            let extra = check.variables.iter().filter(|v| v.name.starts_with("NCCL_IB_EXTRA_")).count();
            assert_eq!(extra, n - 1, "every variable checked but the one unset");
        },
    );
}
