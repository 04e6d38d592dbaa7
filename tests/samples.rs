//! The bundled samples decode to the answers written beside them by the generator.

mod common;

use rocescope_capture::CaptureReader;
use rocescope_decoder::ext::{AethKind, NakCode};
use rocescope_decoder::{decode, DecodeOptions, Ecn, IcrcStatus, MacControl, Opcode, RoceVersion};
use serde_json::Value;

fn expected(name: &str) -> Value {
    let p = common::root().join("samples").join(format!("{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn sample_names() -> Vec<String> {
    let mut v: Vec<String> = common::captures_in(&common::root().join("samples"))
        .iter()
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
        // The two-point pair is one scenario in two files; tests/multi.rs checks it.
        .filter(|n| !n.starts_with("two-points-"))
        .collect();
    v.sort();
    v
}

#[test]
fn there_are_samples_for_every_scenario() {
    let names = sample_names();
    for want in common::all_samples() {
        assert!(names.iter().any(|n| n == want), "missing samples/{want}.pcap");
    }
}

#[test]
fn sample_counts_match_their_expectations() {
    for name in sample_names() {
        let e = expected(&name);
        let c = common::count(&common::root().join("samples").join(format!("{name}.pcap")));
        let x = &e["counts"];
        let n = |k: &str| x[k].as_u64().unwrap_or_else(|| panic!("{name}: no counts.{k}"));
        assert_eq!(c.frames, n("frames"), "{name}: frames");
        assert_eq!(c.roce_v2, n("roce_v2"), "{name}: roce_v2");
        assert_eq!(c.roce_v1, n("roce_v1"), "{name}: roce_v1");
        assert_eq!(c.cnp, n("cnp"), "{name}: cnp");
        assert_eq!(c.pfc, n("pfc"), "{name}: pfc");
        assert_eq!(c.pause, n("pause"), "{name}: pause");
        assert_eq!(c.icrc_valid, n("icrc_valid"), "{name}: icrc_valid");
        assert_eq!(c.icrc_invalid, n("icrc_invalid"), "{name}: icrc_invalid");
        assert_eq!(c.icrc_truncated, n("icrc_truncated"), "{name}: icrc_truncated");
        assert_eq!(c.malformed, n("malformed"), "{name}: malformed");
        let want: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(x["opcodes"].clone()).unwrap();
        assert_eq!(c.opcodes, want, "{name}: opcode counts");
    }
}

/// Every event the generator recorded is visible in the decoded frame it names.
#[test]
fn sample_events_are_where_the_expectations_say() {
    let opts = DecodeOptions::default();
    let mut checked = 0;
    for name in sample_names() {
        let e = expected(&name);
        let mut r =
            CaptureReader::open(&common::root().join("samples").join(format!("{name}.pcap"))).unwrap();
        let mut frames = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            frames.push((rec.link_type, rec.data.to_vec(), rec.caplen, rec.len));
        }
        for ev in e["events"].as_array().unwrap() {
            let n = ev["frame"].as_u64().unwrap() as usize;
            let what = ev["what"].as_str().unwrap();
            let (lt, data, caplen, len) = &frames[n - 1];
            let p = decode(*lt, data, &opts);
            let roce = p.roce.as_ref();
            let ok = match what {
                "gap" | "capture_loss" | "retransmit" | "late" | "uc_loss" | "lost" => {
                    roce.is_some_and(|r| r.bth.opcode().is_request())
                }
                // A new life of a QP: its first request, back at PSN 0 (NCCL).
                "qp_restart" => roce.is_some_and(|r| r.bth.opcode().is_request() && r.bth.psn() == 0),
                "implied_nak" => roce.is_some_and(|r| r.bth.opcode().is_read_request()),
                "read_response_gap" => {
                    roce.is_some_and(|r| (0x0D..=0x10).contains(&r.bth.opcode().operation()))
                }
                "nak" => roce.and_then(|r| r.ext.aeth).is_some_and(|a| {
                    a.kind() == AethKind::Nak && a.repr().nak_code() == Some(NakCode::PSN_SEQUENCE_ERROR)
                }),
                "rnr_nak" => roce.and_then(|r| r.ext.aeth).is_some_and(|a| a.kind() == AethKind::RnrNak),
                "ecn_ce" => p.ip.as_ref().is_some_and(|ip| ip.ecn() == Ecn::Ce),
                "cnp" => {
                    roce.is_some_and(|r| r.bth.opcode() == Opcode::CNP && r.bth.becn())
                        && p.ip.as_ref().is_some_and(|ip| ip.dscp() == 48)
                }
                "pfc_storm" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.quanta[3] == 65535)
                }
                "pfc_pause" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.enabled(3) && f.quanta[3] > 0)
                }
                "pfc_xon" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.enabled(3) && f.quanta[3] == 0)
                }
                "pfc_unused_priority" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.enabled(5))
                }
                "dscp_violation" | "pcp_violation" | "ecn_violation" => roce.is_some(),
                "cnp_dscp_violation" => {
                    roce.is_some_and(|r| r.bth.opcode() == Opcode::CNP)
                        && p.ip.as_ref().is_some_and(|ip| ip.dscp() == 0)
                }
                "icrc_bad" => roce.is_some_and(|r| r.icrc.status == IcrcStatus::Invalid),
                "truncated" => roce.is_some_and(|r| r.icrc.status == IcrcStatus::Truncated) && caplen < len,
                "malformed" => p.is_malformed_roce(),
                "qinq" => {
                    p.vlans.len() == 2 && p.vlans.as_slice()[0].tpid == 0x88A8 && p.vlans.pcp() == Some(3)
                }
                "opaque_opcode" => roce.is_some_and(|r| !r.known_opcode),
                "incast" => roce.is_some(),
                // A mirror's egress copy: one routed hop after its first copy.
                "mirror_copy" => roce.is_some() && p.ip.as_ref().is_some_and(|ip| ip.ttl() == 63),
                "rocev1" => roce.is_some_and(|r| r.version == RoceVersion::V1),
                other => panic!("{name}: unknown event kind {other}"),
            };
            assert!(ok, "{name}: frame {n} is not a {what}: {:?}", ev["detail"]);
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} events checked");
}

#[test]
fn demo_is_every_scenario_together() {
    let demo = expected("demo");
    let mut sum = 0;
    // The transport samples stand on their own, outside the demo.
    for name in
        sample_names().iter().filter(|n| *n != "demo" && !common::TRANSPORT_SAMPLES.contains(&n.as_str()))
    {
        sum += expected(name)["counts"]["frames"].as_u64().unwrap();
    }
    assert_eq!(demo["counts"]["frames"].as_u64().unwrap(), sum);
}
