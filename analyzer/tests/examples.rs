//! Runs the logic of `examples/qp_report.rs` (compiled in here as a module) over
//! `samples/demo.pcap`, and checks `Analyzer::push_record` against hand-built `FrameMeta`s.

#[path = "../examples/qp_report.rs"]
#[allow(dead_code)] // its `main` is the example's, unused here
mod qp_report;

use rocescope_analyzer::report::{FindingKind, Severity};
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions};
use std::path::Path;

#[test]
fn qp_report_example_analyses_demo_pcap() {
    let report = qp_report::analyse(Path::new(qp_report::DEFAULT_FILE)).expect("demo.pcap reads");
    let s = &report.summary;
    assert_eq!(
        (s.packets, s.roce, s.malformed, s.pfc_frames, s.pause_frames, s.cnps),
        (182, 143, 2, 34, 3, 4)
    );
    assert_eq!((s.flows, s.connections), (37, 21));
    // The warnings include the two hosts marking DSCP 0 among 26 (marking_inconsistent).
    assert_eq!((s.findings.critical, s.findings.warning, s.findings.info), (3, 6, 3));
    assert_eq!(report.findings[0].kind, FindingKind::PfcStorm);
    assert_eq!(report.findings[0].evidence[0].frame, 85);

    let lossy = report.flows.iter().find(|f| f.dest_qp == 0x32).expect("QP 0x32");
    assert_eq!((lossy.packets, lossy.psn.gaps, lossy.psn.retransmits_nak), (10, 1, 3));
    let marked = report.flows.iter().find(|f| f.dest_qp == 0x72).expect("QP 0x72");
    assert_eq!(marked.ecn.ce, 4);

    let mut out = Vec::new();
    qp_report::print(&report, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "182 frames, 143 RoCE, 37 flows, 12 findings");
    assert!(lines.contains(
        &"10.0.0.1 → 10.0.0.2      0x000032       10     10836     1     3     0    0   0.00     0       0"
    ));
    assert!(lines.contains(
        &"10.0.0.5 → 10.0.0.6      0x000072       16     17328     0     0     0    0  25.00     0       0"
    ));
    // Two header lines, 37 flows, 12 findings with evidence on all but the last.
    assert_eq!(lines.len(), 2 + 37 + 12 + 11);
    let critical = report.findings.iter().filter(|f| f.severity == Severity::Critical).count();
    assert_eq!(lines.iter().filter(|l| l.starts_with("CRITICAL")).count(), critical);
}

#[test]
fn push_record_matches_push_with_frame_meta_from_record() {
    let path = Path::new(qp_report::DEFAULT_FILE);
    let opts = DecodeOptions::default();
    let mut by_record = Analyzer::new(Config::default());
    let mut by_meta = Analyzer::new(Config::default());
    let mut reader = CaptureReader::open(path).unwrap();
    let mut number = 0;
    while let Some(rec) = reader.next_record().unwrap() {
        number += 1;
        let returned = by_record.push_record(&rec, &opts);
        let packet = decode(rec.link_type, rec.data, &opts);
        assert_eq!(returned, packet);
        let meta = FrameMeta::from_record(number, &rec);
        assert_eq!(
            meta,
            FrameMeta { number, ts_ns: rec.ts_ns, len: rec.len, link_bps: rec.link_bps, point: 0 }
        );
        by_meta.push(&meta, &packet);
    }
    assert_eq!(number, 182);
    let a = serde_json::to_value(by_record.report()).unwrap();
    let b = serde_json::to_value(by_meta.report()).unwrap();
    assert_eq!(a, b);
}

/// `samples/cc-reaction.pcap` through the library: the congestion-control findings land on
/// the QPs built to show them, none on the sender that reacts, and none when sampled.
#[test]
fn congestion_control_findings_per_qp() {
    use rocescope_analyzer::{CcConfig, Sampling, SamplingSource};
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/cc-reaction.pcap"));
    let run = |cfg: Config| {
        let mut a = Analyzer::new(cfg);
        let mut reader = CaptureReader::open(path).unwrap();
        while let Some(rec) = reader.next_record().unwrap() {
            a.push_record(&rec, &DecodeOptions::default());
        }
        a.report()
    };
    let kinds_of = |r: &rocescope_analyzer::Report, qp: u32| -> Vec<(FindingKind, Severity)> {
        r.findings
            .iter()
            .filter(|f| f.flow.is_some_and(|i| r.flows[i].dest_qp == qp))
            .map(|f| (f.kind, f.severity))
            .collect()
    };
    let r = run(Config::default());
    // Captured at the sender (no CE mark on its data), reacting: nothing to say.
    assert_eq!(kinds_of(&r, 0x122), vec![]);
    assert!(kinds_of(&r, 0x132).contains(&(FindingKind::CcNotReacting, Severity::Warning)));
    assert!(kinds_of(&r, 0x142).contains(&(FindingKind::CnpTooFast, Severity::Warning)));
    assert!(kinds_of(&r, 0x152).contains(&(FindingKind::CeWithoutCnp, Severity::Warning)));
    let reacting = r.flows.iter().find(|f| f.dest_qp == 0x122).and_then(|f| f.cc.as_ref()).unwrap();
    assert_eq!((reacting.reaction.evaluated, reacting.reaction.fell), (6, 6));

    // A pacing of 20 µs makes the 21 µs CNPs legitimate.
    let cc = CcConfig { cnp_pacing_ns: 20_000, ..CcConfig::default() };
    let r = run(Config { cc, ..Config::default() });
    assert!(!r.findings.iter().any(|f| f.kind == FindingKind::CnpTooFast));

    let sampled = Some(Sampling { source: SamplingSource::Flag, rate: 1 });
    let r = run(Config { sampling: sampled, ..Config::default() });
    for k in [FindingKind::CcNotReacting, FindingKind::CnpTooFast, FindingKind::CeWithoutCnp] {
        assert!(!r.findings.iter().any(|f| f.kind == k), "{k} on a sampled capture");
    }
}
