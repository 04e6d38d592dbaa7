//! Findings stay readable when a capture holds thousands of them: each kind lists its
//! `--findings-per-kind` most important one by one and folds the rest into one summary,
//! while the severity counts, each connection's health and the exit status still count
//! every finding (docs/reliability.md).

mod common;

use rocescope_capture::PcapWriter;
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::{BthRepr, Ecn, LinkType, Opcode, OpcodeOptions};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// `qps` QPs, one WRITE Only each, every ICRC corrupted: one `icrc_bad` finding per QP.
/// QP `i` carries `i + 1` packets, so the heaviest findings are the last QPs'.
fn bad_icrcs(path: &Path, qps: u32) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(std::io::BufWriter::new(file), LinkType::ETHERNET, 65535).unwrap();
    let mut ts = 1_767_225_600_000_000_000i64;
    for q in 0..qps {
        for psn in 0..=q {
            let ip = IpRepr::V4 {
                src: [10, 0, (q >> 8) as u8, q as u8].into(),
                dst: [10, 1, (q >> 8) as u8, q as u8].into(),
                dscp: 26,
                ecn: Ecn::Ect0,
                ttl: 64,
                id: 0,
            };
            let bth =
                BthRepr { opcode: Opcode::RC_WRITE_ONLY, dest_qp: 0x100 + q, psn, ..Default::default() };
            let ext =
                ExtRepr { reth: Some(RethRepr { va: 0x1000, rkey: 7, dma_len: 64 }), ..Default::default() };
            let f = RoceV2Frame::new(
                [2, 0, 0, 0, 0, 1],
                [2, 0, 0, 0, 0, 2],
                ip,
                IbRepr { bth, ext, payload: vec![0xab; 64], icrc: IcrcMode::Corrupt },
            );
            let data = f.build(OpcodeOptions { dc: false });
            w.write(ts, &data, data.len() as u32).unwrap();
            ts += 1_000;
        }
    }
    w.finish().unwrap();
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn of_kind<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

#[test]
fn many_findings_of_a_kind_fold_into_one_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("icrc.pcap");
    bad_icrcs(&path, 40);
    let p = path.to_str().unwrap();

    let o = run(&["report", "--json", "-r", p]);
    let r = common::report_json(&o.stdout);
    let icrc = of_kind(&r, "icrc_bad");
    // Ten listed one by one, the heaviest (most packets) first, then the summary.
    assert_eq!(icrc.len(), 11, "{icrc:#?}");
    let listed: Vec<u64> = icrc[..10].iter().map(|f| f["weight"].as_u64().unwrap()).collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(listed, sorted);
    assert!(icrc[..10].iter().all(|f| f.get("folded").is_none() && f["flow"].is_u64()));
    let summary = icrc[10];
    let summary_weight = summary["weight"].as_u64().unwrap();
    assert_eq!(summary["folded"], 30);
    assert!(summary.get("flow").is_none());
    assert_eq!(summary["severity"], "warning");
    let title = summary["title"].as_str().unwrap();
    assert!(
        title.starts_with(
            "30 more findings of kind icrc_bad on 30 flows (30 warning), beyond the 10 listed above"
        ),
        "{title}"
    );
    // Nothing is lost from the per-flow figures.
    let all: u64 = r["flows"].as_array().unwrap().iter().map(|f| f["icrc_bad"].as_u64().unwrap()).sum();
    assert_eq!(all, (1..=40).sum::<u64>());
    // The summary's evidence is the heaviest folded findings' (QP 29's first packet is frame
    // 1 + 2 + ... + 29 + 1).
    let frames: Vec<u64> =
        summary["evidence"].as_array().unwrap().iter().map(|e| e["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0], (1..=29).sum::<u64>() + 1);
    // Every finding is still counted, and every connection is still unhealthy.
    assert_eq!(r["summary"]["findings"]["warning"], 40 + u64::from(!of_kind(&r, "one_direction").is_empty()));
    assert!(r["connections"].as_array().unwrap().iter().all(|c| c["health"] == "warning"));

    // The text report says the same, and stays short.
    let o = run(&["report", "-r", p]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("30 more findings of kind icrc_bad on 30 flows"), "{text}");
    assert_eq!(
        text.matches("with an invalid ICRC").count(),
        11,
        "ten listed, and the heaviest folded one named in the summary"
    );

    // --findings-per-kind 0 lists every one.
    let o = run(&["report", "--json", "--findings-per-kind", "0", "-r", p]);
    let r = common::report_json(&o.stdout);
    let every = of_kind(&r, "icrc_bad");
    assert_eq!(every.len(), 40);
    assert!(every.iter().all(|f| f.get("folded").is_none()));
    // The summary weighs what it folds: all the findings' weight but the listed ones'.
    let total: u64 = every.iter().map(|f| f["weight"].as_u64().unwrap()).sum();
    assert_eq!(summary_weight, total - listed.iter().sum::<u64>());
}

#[test]
fn a_few_findings_are_all_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("icrc.pcap");
    bad_icrcs(&path, 10);
    let o = run(&["report", "--json", "-r", path.to_str().unwrap()]);
    let r = common::report_json(&o.stdout);
    let icrc = of_kind(&r, "icrc_bad");
    assert_eq!(icrc.len(), 10);
    assert!(icrc.iter().all(|f| f.get("folded").is_none()));
}
