//! `rocescope report` end to end: every sample against the figures its generator wrote
//! beside it, the PFC, QoS and pairing cases, exit codes, and the real captures (no false
//! findings; the findings that do appear are named here with the frames that justify them).

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn report(path: &Path, extra: &[&str]) -> (Value, Option<i32>) {
    let mut args = vec!["report", "--json", "-r", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    (common::report_json(&o.stdout), o.status.code())
}

fn sample(name: &str) -> std::path::PathBuf {
    common::root().join("samples").join(name)
}

fn expected(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(sample(&format!("{name}.expected.json"))).unwrap()).unwrap()
}

fn flow<'a>(r: &'a Value, src: &str, dst: &str, qp: u64) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["src"] == src && f["dst"] == dst && f["dest_qp"] == qp)
        .unwrap_or_else(|| panic!("no flow {src} -> {dst} QP {qp:#x}"))
}

fn set(v: &Value) -> BTreeSet<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

/// Every flow and pause figure the generator recorded is what the analyzer finds.
#[test]
fn samples_match_their_expected_answers() {
    for name in common::all_samples() {
        let e = expected(name);
        let (r, _) = report(&sample(&format!("{name}.pcap")), &[]);
        let c = &e["counts"];
        let s = &r["summary"];
        assert_eq!(s["packets"], c["frames"], "{name}: packets");
        // A mirror's second copies are counted apart and left out of every RoCE figure.
        let dups = c["mirror_duplicates"].as_u64().unwrap_or(0);
        assert_eq!(s["duplicates"].as_u64(), Some(dups), "{name}: duplicates");
        assert_eq!(
            s["roce"].as_u64().unwrap() + dups,
            c["roce_v2"].as_u64().unwrap() + c["roce_v1"].as_u64().unwrap(),
            "{name}: roce"
        );
        assert_eq!(s["malformed"], c["malformed"], "{name}: malformed");
        assert_eq!(s["icrc_bad"], c["icrc_invalid"], "{name}: icrc_bad");
        assert_eq!(s["pfc_frames"], c["pfc"], "{name}: pfc_frames");
        let dup_cnps = c["mirror_duplicate_cnps"].as_u64().unwrap_or(0);
        assert_eq!(s["cnps"].as_u64().unwrap() + dup_cnps, c["cnp"].as_u64().unwrap(), "{name}: cnps");
        for x in e["flows"].as_array().unwrap() {
            let f = flow(
                &r,
                x["src"].as_str().unwrap(),
                x["dst"].as_str().unwrap(),
                x["dest_qp"].as_u64().unwrap(),
            );
            let who =
                format!("{name}: {} -> {} QP {:#x}", x["src"], x["dst"], x["dest_qp"].as_u64().unwrap());
            for (mine, theirs) in [
                (&f["packets"], &x["packets"]),
                (&f["payload_bytes"], &x["payload_bytes"]),
                (&f["ecn"]["ce"], &x["ecn_ce"]),
                (&f["acks"], &x["acks"]),
                (&f["naks"]["psn_seq_err"], &x["naks_psn_seq_err"]),
                (&f["naks"]["rnr"], &x["rnr_naks"]),
                (&f["cnps"], &x["cnps"]),
                (&f["psn"]["retransmits"], &x["retransmits"]),
                (&f["psn"]["retransmits_nak"], &x["retransmits_nak"]),
                (&f["psn"]["retransmits_timeout"], &x["retransmits_timeout"]),
                (&f["psn"]["gaps"], &x["gaps"]),
                (&f["psn"]["missing"], &x["missing_psns"]),
                (&f["psn"]["capture_loss_gaps"], &x["capture_loss_gaps"]),
            ] {
                assert_eq!(mine, theirs, "{who}: {f:#}");
            }
            // Counted only where a sample has them (absent means 0).
            for k in [
                "out_of_order",
                "retransmits_spurious",
                "retransmits_implied",
                "retransmits_unknown",
                "spurious_naks",
            ] {
                assert_eq!(f["psn"][k].as_u64(), Some(x[k].as_u64().unwrap_or(0)), "{who}: {k}: {f:#}");
            }
            let other: u64 =
                ["invalid_request", "remote_access", "remote_operational", "invalid_rd", "other"]
                    .iter()
                    .map(|k| f["naks"][k].as_u64().unwrap())
                    .sum();
            assert_eq!(other, x["naks_other"].as_u64().unwrap(), "{who}");
            assert_eq!(set(&f["dscp"]), set(&x["dscp"]), "{who}: dscp");
            assert_eq!(set(&f["pcp"]), set(&x["pcp"]), "{who}: pcp");
        }
        for x in e["pauses"].as_array().unwrap() {
            let p = r["pfc"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| {
                    p["src_mac"] == x["src_mac"] && p["kind"] == x["kind"] && p["priority"] == x["priority"]
                })
                .unwrap_or_else(|| panic!("{name}: no timeline {x}"));
            for k in ["pause_frames", "xon_frames", "quanta_total"] {
                assert_eq!(p[k], x[k], "{name}: {k} of {x}");
            }
        }
        assert_eq!(
            r["pfc"].as_array().unwrap().len(),
            e["pauses"].as_array().unwrap().len(),
            "{name}: timelines"
        );
    }
}

fn kinds(r: &Value) -> Vec<String> {
    r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

fn finding<'a>(r: &'a Value, kind: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} finding in {:?}", kinds(r)))
}

#[test]
fn go_back_n_capture_loss_timeout_and_rnr_are_told_apart() {
    let (r, code) = report(&sample("nak-gobackn.pcap"), &[]);
    assert_eq!(code, Some(0), "no audit expectations: clean exit");
    let loss = finding(&r, "network_loss");
    assert_eq!(loss["severity"], "critical");
    let frames: Vec<u64> =
        loss["evidence"].as_array().unwrap().iter().map(|e| e["frame"].as_u64().unwrap()).collect();
    let ev = expected("nak-gobackn");
    for what in ["gap", "nak", "retransmit"] {
        let f = ev["events"].as_array().unwrap().iter().find(|e| e["what"] == what).unwrap()["frame"]
            .as_u64()
            .unwrap();
        assert!(frames.contains(&f), "{what} frame {f} not in the evidence {frames:?}");
    }
    let f = flow(&r, "10.0.0.1", "10.0.0.2", 0x32);
    assert_eq!(f["psn"]["network_loss_gaps"], 1);
    assert_eq!(f["psn"]["duplicates"], 2);
    assert!(f["latency"]["nak_to_retransmit"]["count"] == 1);
    // The wrap at 2^24 is no gap; the one missing packet is capture loss (info, not critical).
    let cl = finding(&r, "capture_loss");
    assert_eq!(cl["severity"], "info");
    assert!(cl["title"].as_str().unwrap().contains("QP 0x000042"));
    let w = flow(&r, "10.0.0.3", "10.0.0.4", 0x42);
    assert_eq!((w["psn"]["gaps"].as_u64(), w["psn"]["missing"].as_u64()), (Some(1), Some(1)));
    let t = finding(&r, "timeout_retransmit");
    assert!(t["title"].as_str().unwrap().contains("QP 0x000052"));

    let (r, _) = report(&sample("rnr.pcap"), &[]);
    assert!(!kinds(&r).contains(&"network_loss".to_string()), "RNR is not loss: {:?}", kinds(&r));
    let rnr = finding(&r, "rnr");
    assert!(
        rnr["title"].as_str().unwrap().contains("1.28") || rnr["title"].as_str().unwrap().contains("1280")
    );
    assert_eq!(flow(&r, "10.0.0.1", "10.0.0.2", 0x62)["psn"]["retransmits_rnr"], 1);
}

#[test]
fn read_reservation_latency_and_pairing() {
    let (r, _) = report(&sample("rc-normal.pcap"), &[]);
    assert!(r["findings"].as_array().unwrap().is_empty(), "healthy traffic has no findings: {:?}", kinds(&r));
    let a = flow(&r, "10.0.0.1", "10.0.0.2", 0x12);
    assert_eq!(a["psn"]["gaps"], 0, "READ reserved PSNs are not a gap");
    assert_eq!(a["pairing"], "psn");
    assert!(a["latency"]["ack"]["count"].as_u64().unwrap() >= 3);
    assert_eq!(a["latency"]["read"]["count"], 1);
    assert!(a["throughput"]["peak_gbps"].as_f64().unwrap() > 0.0);
    // Each connection has its own path MTU: 1024 here, 4096 on the other.
    assert_eq!(a["pmtu"], 1024);
    assert_eq!(flow(&r, "10.0.0.3", "10.0.0.4", 0x22)["pmtu"], 4096);
    assert_eq!(flow(&r, "10.0.0.3", "10.0.0.4", 0x22)["psn"]["gaps"], 0);
    let conns = r["connections"].as_array().unwrap();
    assert!(conns.iter().all(|c| c["pairing"] == "psn" && c["flows"].as_array().unwrap().len() == 2));
}

#[test]
fn ecn_marks_are_answered_by_cnps_to_the_sender() {
    let (r, _) = report(&sample("ecn-cnp.pcap"), &[]);
    let data = flow(&r, "10.0.0.5", "10.0.0.6", 0x72);
    assert_eq!(data["ecn"]["ce"], 4);
    assert_eq!(data["cnps_received"], 2, "CNPs to QP 0x71 belong to the 0x72 data flow");
    assert_eq!(data["latency"]["ce_to_cnp"]["count"], 2);
    // The first unanswered CE mark to the next CNP: 2 us after PSN 40004, then from the CE
    // at 40005 until the NP's next CNP (paced) after 40011.
    assert!(data["latency"]["ce_to_cnp"]["min_ns"].as_u64().unwrap() <= 3_000);
    assert!(data["latency"]["ce_to_cnp"]["max_ns"].as_u64().unwrap() < 20_000);
    assert_eq!(flow(&r, "10.0.0.6", "10.0.0.5", 0x71)["cnps"], 2);
    assert_eq!(finding(&r, "congestion")["severity"], "info");
    // IPv6 too.
    let (r, _) = report(&sample("ipv6.pcap"), &[]);
    assert_eq!(flow(&r, "fd00::1", "fd00::2", 0x1c2)["cnps_received"], 1);
    assert!(flow(&r, "fd00::1", "fd00::2", 0x1c2)["partner"].is_u64());
}

#[test]
fn pfc_storm_xon_unused_priority_and_pause() {
    let (r, code) = report(&sample("pfc-storm.pcap"), &[]);
    let p3 = r["pfc"].as_array().unwrap().iter().find(|p| p["priority"] == 3).unwrap();
    assert_eq!(p3["paused_ns"], 9_024_000, "30 frames 300.8 us apart, each restarting the timer, then XON");
    assert_eq!(p3["intervals"].as_array().unwrap().len(), 1);
    assert_eq!(p3["intervals"][0]["xon"], true);
    assert_eq!(p3["storms"].as_array().unwrap().len(), 1);
    assert!(p3["deadlock_hint"].is_null());
    // The capture lasts 9.5188 ms, less than a second: one window, so the busiest "second" is
    // the capture's own rate (9.024 ms paused), the same as the mean.
    let per_s = 9_024_000.0 / 9_518_800.0 * 1e6;
    assert!((p3["max_pause_us_per_s"].as_f64().unwrap() - per_s).abs() < 1e-6, "{p3}");
    assert!((p3["pause_us_per_s"].as_f64().unwrap() - per_s).abs() < 1e-6, "{p3}");
    let storm = finding(&r, "pfc_storm");
    assert_eq!((storm["severity"].as_str(), storm["priority"].as_u64()), (Some("critical"), Some(3)));
    let unused = finding(&r, "pause_unused_priority");
    assert!(unused["title"].as_str().unwrap().contains("priority 5"));
    assert!(kinds(&r).contains(&"link_pause".to_string()));
    // Reported as a violation, but no expectation given names it: the run does not fail
    // (README "Exit status"; tests/exit_status.rs for --lossless).
    assert_eq!(code, Some(0), "a pause on a priority RoCE does not use is listed, not failed");
    let v = &r["audit"]["violations"][0];
    assert_eq!(
        (v["what"].as_str(), v["seen"].as_u64(), v["packets"].as_u64()),
        (Some("pause_priority"), Some(5), Some(3))
    );
    // RoCE on priority 3 stops while paused: with a 5 ms threshold that is a deadlock hint.
    let (r, _) = report(&sample("pfc-storm.pcap"), &["--deadlock-ms", "5"]);
    assert_eq!(finding(&r, "pfc_deadlock")["priority"], 3);
    // At 25G the same quanta last four times longer.
    let (r, _) = report(&sample("pfc-storm.pcap"), &["--link-speed", "25G"]);
    let p5 = r["pfc"].as_array().unwrap().iter().find(|p| p["priority"] == 5).unwrap();
    assert_eq!(p5["paused_ns"], 3 * 20_480, "1000 quanta x 512 bits at 25 Gb/s");
}

#[test]
fn qos_audit_flags_and_baseline_gate_the_exit_status() {
    let flags = ["--expect-dscp", "26", "--expect-cnp-dscp", "48", "--expect-pcp", "3", "--expect-ecn"];
    let (r, code) = report(&sample("qos-mismatch.pcap"), &flags);
    assert_eq!(code, Some(3));
    let got: BTreeSet<(String, u64, String)> = r["audit"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["what"].as_str().unwrap().to_string(),
                // 0: a capture-wide violation (pcp_untagged names no one flow).
                v["flow"]["dest_qp"].as_u64().unwrap_or(0),
                v["seen"].to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, u64, String)> = [
        ("dscp", 0x92, "0"),
        ("dscp", 0x91, "0"),
        ("pcp", 0xa2, "0"),
        ("pcp", 0xa1, "0"),
        ("ecn", 0xb2, "\"Not-ECT\""),
        ("ecn", 0xb1, "\"Not-ECT\""),
        ("cnp_dscp", 0x91, "0"),
        // QPs 0x91/0x92 and 0xb1/0xb2 are untagged: no PCP to hold to 3 (6 packets, CNP aside).
        ("pcp_untagged", 0, "\"untagged\""),
    ]
    .iter()
    .map(|(w, q, s)| (w.to_string(), *q, s.to_string()))
    .collect();
    assert_eq!(got, want);
    let v = r["audit"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["what"] == "dscp" && v["flow"]["dest_qp"] == 0x92)
        .unwrap();
    assert_eq!((v["expected"].as_u64(), v["packets"].as_u64()), (Some(26), Some(2)));
    assert_eq!(v["flow"]["src"], "10.0.0.9");

    // The same from a baseline file; the compliant sample passes it.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("fabric.toml");
    std::fs::write(
        &base,
        "roce_dscp = 26\ncnp_dscp = 48\nroce_pcp = 3\necn_capable = true\nlossless_priorities = [3]\n",
    )
    .unwrap();
    let (r2, code) = report(&sample("qos-mismatch.pcap"), &["--baseline", base.to_str().unwrap()]);
    assert_eq!((code, r2["audit"]["violations"].as_array().unwrap().len()), (Some(3), 8));
    // rc-normal is untagged: no PCP to hold to 3 (one pcp_untagged violation); it passes a
    // baseline without a PCP.
    let (r3, code) = report(&sample("rc-normal.pcap"), &["--baseline", base.to_str().unwrap()]);
    let whats: Vec<&Value> =
        r3["audit"]["violations"].as_array().unwrap().iter().map(|v| &v["what"]).collect();
    assert_eq!((code, whats), (Some(3), vec![&Value::from("pcp_untagged")]));
    let untagged = dir.path().join("untagged.toml");
    std::fs::write(
        &untagged,
        "roce_dscp = 26\ncnp_dscp = 48\necn_capable = true\nlossless_priorities = [3]\n",
    )
    .unwrap();
    let (_, code) = report(&sample("rc-normal.pcap"), &["--baseline", untagged.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    // Text report says the same and names the exit status.
    let o = run(&[
        "report",
        "-r",
        sample("qos-mismatch.pcap").to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("QOS AUDIT (expected RoCE DSCP 26, CNP DSCP 48, PCP 3, lossless 3, ECN-capable data)"),
        "{text}"
    );
    assert!(text.contains("8 violation(s): exit status 3"), "{text}");
    assert!(text.find("FINDINGS").unwrap() < text.find("CONNECTIONS").unwrap());
    // A bad baseline is an error, not a silent pass.
    std::fs::write(&base, "roce_dcsp = 26\n").unwrap();
    let o = run(&[
        "report",
        "-r",
        sample("rc-normal.pcap").to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unknown field"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn report_json_validates_against_its_schema() {
    // `report` checks every document against the schema (strictly) and the time rule.
    let mut files: Vec<std::path::PathBuf> =
        common::all_samples().map(|n| sample(&format!("{n}.pcap"))).collect();
    if let Some(dir) = common::real_captures() {
        files.extend(common::captures_in(&dir));
    }
    for f in files {
        let (r, _) = report(
            &f,
            &[
                "--expect-dscp",
                "26",
                "--expect-cnp-dscp",
                "48",
                "--expect-pcp",
                "3",
                "--expect-ecn",
                "--lossless",
                "3",
            ],
        );
        assert_eq!(r["schema_version"], rocescope_analyzer::report::SCHEMA_VERSION, "{}", f.display());
        // Every violation is of a kind the exporter serves (and docs/metrics.md lists).
        for v in r["audit"]["violations"].as_array().unwrap() {
            let what = v["what"].as_str().unwrap();
            assert!(rocescope_analyzer::audit::VIOLATION_KINDS.contains(&what), "{}: {what}", f.display());
        }
    }
}

/// The schema names every finding kind the analyzer has, and it stays open to fields a later
/// version adds (the stability rule in docs/report-json.md).
#[test]
fn the_schema_lists_every_finding_kind_and_accepts_added_fields() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(common::root().join("docs/report.schema.json")).unwrap())
            .unwrap();
    let kinds: Vec<&str> = schema["properties"]["findings"]["items"]["properties"]["kind"]["enum"]
        .as_array()
        .expect("the kind enum")
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = rocescope_analyzer::report::FindingKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(kinds, ours);
    assert_eq!(schema["properties"]["schema_version"]["const"], rocescope_analyzer::report::SCHEMA_VERSION);
    let (mut r, _) = report(&sample("demo.pcap"), &[]);
    r["added_in_a_later_version"] = Value::from(1);
    r["flows"][0]["also_added"] = Value::from("x");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    assert!(validator.is_valid(&r), "the shipped schema must accept fields it does not list");
    r["schema_version"] = Value::from(2);
    assert!(!validator.is_valid(&r), "another major version is refused");
}

/// Real captures: the only findings are these, each justified by the frames named.
#[test]
fn real_captures_have_no_false_findings() {
    let Some(dir) = common::real_captures() else { return };
    for path in common::captures_in(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (r, code) = report(&path, &[]);
        assert_eq!(code, Some(0), "{name}");
        for f in r["findings"].as_array().unwrap() {
            let kind = f["kind"].as_str().unwrap();
            let ok = match kind {
                // INDEX.md: in these captures every ICRC fails and the source MAC changes per
                // frame: a capture device wrote into the frames. Real, and named as such.
                "icrc_bad" => {
                    ["rc-small.pcap", "dc-small.pcap", "dc-small2.pcap", "uc-sg.pcap", "rdma-nccl2.pcap"]
                        .contains(&name.as_str())
                }
                // ibdump captures that lost packets: checked below against the ACK MSNs.
                "capture_loss" => {
                    ["rocev1.pcap", "rocev1_test.pcap", "rocev2_test.pcap", "rocev2-2_test.pcap"]
                        .contains(&name.as_str())
                }
                // The ConnectX lab's hosts (172.17.242.47/.56, 10.22.116.220/.221) mark DSCP 0
                // on one end and 26 on the other (INDEX.md: tos 0x02 against 0x6a): priority 0
                // against 3, a warning. The rxe LAN captures: DSCP 4 against 0, one priority.
                "marking_inconsistent" => {
                    let warn = [
                        "dc-small.pcap",
                        "rc-small.pcap",
                        "read2.pcap",
                        "rocev1_test.pcap",
                        "rocev2-2_test.pcap",
                        "rocev2_test.pcap",
                        "send.pcap",
                        "write.pcap",
                    ];
                    let info = [
                        "FirstSuccesfullRping.pcapng",
                        "Roce_PacketSize_1400.pcapng",
                        "Roce_PacketSize_2400_stall.pcapng",
                        "rping_3072_faillire.pcapng",
                    ];
                    let sev = f["severity"].as_str().unwrap();
                    (warn.contains(&name.as_str()) && sev == "warning")
                        || (info.contains(&name.as_str()) && sev == "info")
                }
                // dc-small2.pcap frame 1: a DC ACK with syndrome 0x64 before the DC connect.
                "dc_nak" => name == "dc-small2.pcap" && f["evidence"][0]["frame"] == 1,
                // Frames cut at 243 bytes while the IP length says 4156 (INDEX.md).
                "truncated" => name == "rdma-nccl2.pcap",
                // Not RoCE at all: native InfiniBand (ERF) or LLDP/DHCP.
                "no_roce" => ["ib2.pcap", "infiniband.pcap", "dcb_pfc.pcap"].contains(&name.as_str()),
                // The same rping fault in both: a READ reserves 3 PSNs, the next SEND reuses
                // the last of them, the responder ACKs PSN 16777215, and the SEND is never
                // acknowledged nor resent (tests/transport.rs checks the stall capture).
                "psn_violation" | "qp_stalled" => {
                    ["Roce_PacketSize_2400_stall.pcapng", "rping_3072_faillire.pcapng"]
                        .contains(&name.as_str())
                }
                _ => false,
            };
            assert!(ok, "{name}: unexpected finding {f:#}");
            // Silent for 146 s while the capture goes on: the one firm stall. rping_3072's
            // QP is silent 16.3 s, less than its retry budget (8 x 2.15 s): a warning.
            let firm_stall = name == "Roce_PacketSize_2400_stall.pcapng" && kind == "qp_stalled";
            assert_eq!(f["severity"] == "critical", firm_stall, "{name}: {f:#}");
        }
    }
    // The capture-loss gaps are the capture's, not the network's: the responder's ACK MSN
    // advances by more messages than the capture holds between two ACKs, and no NAK exists.
    let (r, _) = report(&dir.join("rocev2_test.pcap"), &[]);
    let flows = r["flows"].as_array().unwrap();
    let total_naks: u64 = flows.iter().map(|f| f["naks"]["psn_seq_err"].as_u64().unwrap()).sum();
    assert_eq!(total_naks, 0);
    let acked_msgs: u64 = flows.iter().filter(|f| f["acks"].as_u64().unwrap() > 0).count() as u64;
    assert!(acked_msgs > 0);
    let o = run(&["decode", "--json", "-r", dir.join("rocev2_test.pcap").to_str().unwrap()]);
    let mut msn: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
    let mut msgs: std::collections::BTreeMap<u64, u64> = Default::default();
    for v in common::decode_lines(&o.stdout) {
        let Some(op) = v["bth"]["opcode"].as_u64() else { continue };
        if op == 0x11 {
            let m = v["aeth"]["msn"].as_u64().unwrap();
            let e = msn.entry(v["bth"]["dqpn"].as_u64().unwrap()).or_insert((m, m));
            e.0 = e.0.min(m);
            e.1 = e.1.max(m);
        }
        if op == 0x02 || op == 0x04 {
            *msgs.entry(v["bth"]["dqpn"].as_u64().unwrap()).or_default() += 1;
        }
    }
    let lossy = msn.values().filter(|(lo, hi)| hi - lo > 0).count();
    assert!(lossy > 0);
    let captured_msgs: u64 = msgs.values().sum();
    let acked: u64 = msn.values().map(|(lo, hi)| hi - lo).sum();
    assert!(acked > captured_msgs, "ACKs cover {acked} messages, the capture holds {captured_msgs}");
}

/// CM REQ/REP on QP1 pair the connection in the real write.pcap and read2.pcap, and give
/// each direction's starting PSN (checked against the first request PSN of each flow).
#[test]
fn cm_exchange_pairs_real_connections() {
    let Some(dir) = common::real_captures() else { return };
    let (r, _) = report(&dir.join("write.pcap"), &[]);
    let c = r["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["pairing"] == "cm")
        .expect("a CM-paired connection");
    let qps: BTreeSet<u64> =
        [c["a_qpn"].as_u64().unwrap(), c["b_qpn"].as_u64().unwrap()].into_iter().collect();
    assert_eq!(qps, [0x137, 0x167].into_iter().collect());
    let (r, _) = report(&dir.join("read2.pcap"), &[]);
    let f = flow(&r, "172.17.242.47", "172.17.242.56", 0x169);
    assert_eq!(f["pairing"], "cm");
    assert_eq!(f["cm_start_psn"], 7_010_276, "frame 7: SEND Only PSN 7010276");
    assert_eq!(f["latency"]["read"]["count"], 1, "the READ and its response");
    let back = flow(&r, "172.17.242.56", "172.17.242.47", 0x139);
    assert_eq!(back["cm_start_psn"], 15_746_512, "frame 9: SEND Only PSN 15746512");
}

/// A pcapng file's Interface Statistics Blocks are the capture's own drops, reported per
/// capture point as a live capture's libpcap counters are (samplegen
/// `capture/demo-isb.pcapng`: the demo's frames, 200 received, 3 dropped by the interface,
/// 15 by the OS).
#[test]
fn pcapng_statistics_blocks_are_reported_as_capture_drops_per_point() {
    let isb = sample("capture/demo-isb.pcapng");
    let (r, _) = report(&isb, &[]);
    let (demo, _) = report(&sample("demo.pcap"), &[]);
    let want = serde_json::json!({
        "source": "pcapng",
        "interfaces": ["enp65s0f0np0"],
        "received": 200,
        "if_dropped": 3,
        "os_dropped": 15,
        "dropped": 18,
    });
    assert_eq!(r["points"][0]["capture_counters"], want);
    assert_eq!(r["flows"], demo["flows"], "the analysis is the demo's");
    assert!(r.get("capture").is_none(), "`capture` stays a live run's");
    assert!(demo["points"][0].get("capture_counters").is_none(), "a classic pcap records none");
    let text = run(&["report", "-r", isb.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("\n  capture statistics recorded in the file (pcapng) on enp65s0f0np0: 200 received, 3 dropped by the interface, 15 dropped by the OS (findings may reflect capture loss)\n"),
        "{text}"
    );
    // Merged with a file that records none: each point its own.
    let demo_path = sample("demo.pcap");
    let (m, _) = report(&isb, &["-r", demo_path.to_str().unwrap()]);
    assert_eq!(m["points"][0]["capture_counters"], want);
    assert!(m["points"][1].get("capture_counters").is_none());
    let text = run(&["report", "-r", isb.to_str().unwrap(), "-r", demo_path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("capture statistics recorded in the file of demo-isb.pcapng (pcapng)"), "{text}");
    assert_eq!(text.matches("capture statistics recorded").count(), 1, "{text}");
}

/// Each flow's UDP source port (its ECMP entropy) is the one its first frame carries, as the
/// decoder reads each frame (and tshark's `udp.srcport`, when tshark is here); the text
/// report shows both directions' ports per connection.
#[test]
fn every_flow_names_its_udp_source_port() {
    use rocescope_capture::CaptureReader;
    use rocescope_decoder::{decode, DecodeOptions};
    let path = sample("demo.pcap");
    let (r, _) = report(&path, &[]);
    let mut first: std::collections::BTreeMap<(String, String, u64), u16> = Default::default();
    let mut rd = CaptureReader::open(&path).unwrap();
    while let Some(rec) = rd.next_record().unwrap() {
        let p = decode(rec.link_type, rec.data, &DecodeOptions::default());
        // CNPs carry the notification point's port, not the QP's.
        if let (Some(ip), Some(udp), Some(roce)) =
            (p.ip.as_ref(), p.udp.as_ref(), p.roce_ok().filter(|r| !r.bth.opcode().is_cnp()))
        {
            let key = (ip.src().to_string(), ip.dst().to_string(), u64::from(roce.bth.dest_qp()));
            first.entry(key).or_insert(udp.source_port());
        }
    }
    let mut checked = 0;
    for f in r["flows"].as_array().unwrap() {
        let key = (
            f["src"].as_str().unwrap().to_string(),
            f["dst"].as_str().unwrap().to_string(),
            f["dest_qp"].as_u64().unwrap(),
        );
        match first.get(&key) {
            Some(port) => {
                assert_eq!(f["udp_src_port"].as_u64(), Some(u64::from(*port)), "{key:?}");
                checked += 1;
            }
            // RoCEv1 flows, and flows of CNPs only, have none.
            None => assert!(f["udp_src_port"].is_null(), "{key:?}: {}", f["udp_src_port"]),
        }
    }
    assert!(checked > 30, "{checked}");
    if let Ok(o) = std::process::Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "-Y",
            "udp.dstport == 4791",
            "-T",
            "fields",
            "-e",
            "udp.srcport",
            "-c",
            "1",
        ])
        .output()
    {
        let port = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if let Ok(port) = port.parse::<u64>() {
            assert!(r["flows"].as_array().unwrap().iter().any(|f| f["udp_src_port"].as_u64() == Some(port)));
        }
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "-r"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("sport A/B") && text.contains("49169/49168"), "{text}");
}
