//! Transport verdicts on traffic real fabrics produce (samples/*.expected.json `findings`):
//! every finding the report gives is the one the sample was built to show, at the stated
//! severity, and nothing else: no CRITICAL without the evidence for it.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn report(name: &str, extra: &[&str]) -> Value {
    let path = common::root().join("samples").join(format!("{name}.pcap"));
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "-r"])
        .arg(&path)
        .args(extra)
        .output()
        .expect("run rocescope");
    assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn expected(name: &str) -> Value {
    let p = common::root().join("samples").join(format!("{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// (kind, severity, destination QP) of every finding.
fn findings(r: &Value) -> BTreeSet<(String, String, Option<u64>)> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let qp = f["flow"].as_u64().map(|i| r["flows"][i as usize]["dest_qp"].as_u64().unwrap());
            (f["kind"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string(), qp)
        })
        .collect()
}

#[test]
fn every_transport_sample_gets_exactly_its_findings() {
    for name in common::TRANSPORT_SAMPLES {
        let e = expected(name);
        let want: BTreeSet<(String, String, Option<u64>)> = e["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: the sample lists its findings"))
            .iter()
            .map(|f| {
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    f["dest_qp"].as_u64(),
                )
            })
            .collect();
        // Every finding one by one (the incast sample has 16 of one kind).
        let r = report(name, &["--findings-per-kind", "0"]);
        assert_eq!(findings(&r), want, "{name}: {:#}", r["findings"]);
        // Every finding names the frames that show it.
        // (`truncated` is about the capture's snap length, every cut frame alike.)
        for f in r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] != "truncated") {
            assert!(!f["evidence"].as_array().unwrap().is_empty(), "{name}: no evidence for {f}");
        }
    }
}

#[test]
fn reordering_is_never_loss_and_the_window_only_grades_it() {
    let r = report("reorder-spray", &[]);
    for f in r["flows"].as_array().unwrap().iter().filter(|f| f["psn"]["tracked"] == true) {
        let p = &f["psn"];
        assert_eq!((p["retransmits"].as_u64(), p["network_loss_gaps"].as_u64()), (Some(0), Some(0)), "{f:#}");
        assert_eq!(p["capture_loss_gaps"], 0, "{f:#}");
        assert!(p["out_of_order"].as_u64().unwrap() > 100);
        assert!(p["max_late_ns"].as_i64().unwrap() < 100_000);
    }
    // 150 µs late: beyond the default 100 µs window (a warning); a 200 µs window takes it in.
    let r = report("reorder-late", &["--reorder-window", "200"]);
    let f = &r["findings"][0];
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("out_of_order"), Some("info")), "{f}");
    assert_eq!(r["flows"][0]["psn"]["max_late_ns"], 150_000);
}

#[test]
fn the_timeout_rule_follows_the_ack_timeout() {
    // 5 ms after the original: a timeout by the 4.19 ms the CM REQ set (t=10) ...
    let r = report("cm-timeout", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x112).unwrap();
    assert_eq!(f["ack_timeout_ns"], 4_194_304);
    assert_eq!(f["psn"]["retransmits_timeout"], 1);
    // ... while without the CM exchange the default (t=14, 67 ms) could not have passed.
    let r = report("early-resend", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0xF6).unwrap();
    assert_eq!(
        (f["psn"]["retransmits_unknown"].as_u64(), f["psn"]["retransmits_timeout"].as_u64()),
        (Some(1), Some(0))
    );
    // A requester configured for 1 µs timeouts would have timed out: the flag says so.
    let r = report("early-resend", &["--min-ack-timeout", "1us"]);
    assert!(findings(&r).contains(&("timeout_retransmit".into(), "critical".into(), Some(0xF6))));
}

#[test]
fn a_capture_of_one_direction_says_so_first() {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "-r"])
        .arg(common::root().join("samples/one-direction.pcap"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let note = text.find("NOTE: only one direction captured for 2 of 2").expect(&text);
    assert!(note < text.find("FINDINGS").unwrap(), "the note comes before the findings");
    // The same requests with their responses (nak-gobackn) give no such note.
    let r = report("nak-gobackn", &[]);
    assert!(!findings(&r).iter().any(|f| f.0 == "one_direction"));
}

#[test]
fn the_cm_req_local_ack_timeout_is_read_as_tshark_reads_it() {
    let Some(dir) = common::real_captures() else { return };
    // write.pcap's CM REQ: Primary Local ACK Timeout 0x13 (tshark infiniband.cm.req.prim_localacktout).
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "-r"])
        .arg(dir.join("write.pcap"))
        .output()
        .unwrap();
    let r = common::report_json(&o.stdout);
    let timeouts: BTreeSet<Option<i64>> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["pairing"] == "cm")
        .map(|f| f["ack_timeout_ns"].as_i64())
        .collect();
    assert_eq!(timeouts, BTreeSet::from([Some(4096 << 19)]));
}

/// cc-reaction.pcap: per-QP congestion control. The sender that halves its rate after each
/// CNP gets no finding beyond `congestion`; the one that keeps its rate gets
/// `cc_not_reacting`; CNPs 21 µs apart are `cnp_too_fast`; CE marks after the CNPs stopped
/// are `ce_without_cnp`. None of the three is made on a sampled run.
#[test]
fn congestion_control_per_qp() {
    let r = report("cc-reaction", &[]);
    let flow = |qp: u64| r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == qp).unwrap().clone();
    // Captured at their senders (no CE mark on their data): the rate is the sender's. Their
    // figures begin at the first CNP (the flow carried no mark before it), so the first CNP
    // has no window before it.
    let reacts = flow(0x122);
    let rx = &reacts["cc"]["reaction"];
    assert_eq!((rx["evaluated"].as_u64(), rx["fell"].as_u64()), (Some(6), Some(6)), "{rx}");
    assert!(rx["mean_ratio"].as_f64().unwrap() < 0.7, "{rx}");
    assert_eq!(reacts["cc"]["cnp_too_fast"], 0);
    assert_eq!(reacts["cc"]["cnp_interval"]["count"], 6);
    let keeps = flow(0x132);
    let rx = &keeps["cc"]["reaction"];
    assert_eq!((rx["evaluated"].as_u64(), rx["fell"].as_u64()), (Some(6), Some(0)), "{rx}");
    assert!((rx["mean_ratio"].as_f64().unwrap() - 1.0).abs() < 0.05, "{rx}");
    assert!(rx["not_judged"].is_null(), "before the queue the verdict stands: {rx}");
    let fast = flow(0x142);
    assert_eq!(fast["cc"]["cnp_too_fast"], 7);
    assert_eq!(fast["cc"]["cnp_pacing_ns"], 50_000);
    assert_eq!(fast["cc"]["reaction"]["evaluated"], 0, "a sender of one packet per 20 µs is not judged");
    let stopped = flow(0x152);
    assert_eq!(stopped["cc"]["ce_runs_without_cnp"], 1);
    assert!(stopped["cc"]["longest_ce_run_without_cnp"]["packets"].as_u64().unwrap() >= 10);
    // The reverse flows (ACKs and CNPs) have no congestion-control figures.
    assert!(flow(0x121)["cc"].is_null());
    // On a 400G link the same sender (56 Gb/s) is under half the line rate: a DCQCN cut from
    // line rate would not bind it, so its held rate cannot say whether its congestion
    // control is on. An INFO, the verdict withheld as `below_cut`; the reacting sender's fall
    // is evidence at any rate and stays judged.
    let r = report("cc-reaction", &["--link-speed", "400G"]);
    let flow = |qp: u64| r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == qp).unwrap().clone();
    assert_eq!(flow(0x132)["cc"]["reaction"]["not_judged"], "below_cut");
    assert!(flow(0x122)["cc"]["reaction"]["not_judged"].is_null());
    let f = findings(&r);
    let cc: Vec<_> = f.iter().filter(|(k, _, _)| k == "cc_not_reacting").collect();
    assert_eq!(cc.len(), 1, "{:#}", r["findings"]);
    assert_eq!(cc[0].1, "info", "{:#}", r["findings"]);
    // A pacing of 20 µs makes the 21 µs CNPs legitimate.
    let r = report("cc-reaction", &["--cnp-pacing-us", "20"]);
    assert!(findings(&r).iter().all(|(k, _, _)| k != "cnp_too_fast"), "{:#}", r["findings"]);
    // Sampled: the rate around a CNP and the spacing of CNPs need every packet.
    let r = report("cc-reaction", &["--sample-rate", "4"]);
    for (k, _, _) in findings(&r) {
        assert!(
            !["cc_not_reacting", "cnp_too_fast", "ce_without_cnp"].contains(&k.as_str()),
            "{:#}",
            r["findings"]
        );
    }
    assert!(r["sampled"]["suppressed_findings"].as_u64().unwrap() >= 3);
}

/// A mirror of both ports of a path holds every packet twice: the second copies are counted
/// (`duplicates`, per point too) and left out, so one loss reads as one loss and its two
/// go-back-N resends (new IP identifications) as two; the switch's CE marks on the egress
/// copies count. `--keep-duplicates` analyses every copy: each reads as a resend.
#[test]
fn mirror_duplicates_are_counted_and_left_out() {
    let e = expected("mirror-duplicates");
    let copies = e["counts"]["mirror_duplicates"].as_u64().unwrap();
    assert_eq!(copies * 2, e["counts"]["roce_v2"].as_u64().unwrap(), "every RoCE frame twice");
    let r = report("mirror-duplicates", &[]);
    assert_eq!(r["summary"]["duplicates"].as_u64(), Some(copies));
    assert_eq!(r["config"]["keep_duplicates"], false);
    let f = &r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x212).unwrap();
    assert_eq!((f["psn"]["retransmits"].as_u64(), f["psn"]["retransmits_nak"].as_u64()), (Some(2), Some(2)));
    assert_eq!(f["ecn"]["ce"].as_u64(), Some(2), "the egress copies' marks");
    assert_eq!(r["summary"]["cnps"].as_u64(), Some(1));
    let text = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "-r"])
        .arg(common::root().join("samples/mirror-duplicates.pcap"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("{copies} mirror duplicate(s)")), "{text}");

    let r = report("mirror-duplicates", &["--keep-duplicates"]);
    assert_eq!(r["summary"]["duplicates"].as_u64(), Some(copies), "still counted");
    assert_eq!(r["config"]["keep_duplicates"], true);
    let f = &r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x212).unwrap();
    assert!(f["psn"]["retransmits"].as_u64().unwrap() > 10, "{:#}", f["psn"]);
    assert!(findings(&r).iter().all(|(k, _, _)| k != "network_loss"), "the copies hide the loss");
}

/// Senders that put one constant in every IP identification (RFC 6864): the go-back-N
/// resends repeat their originals byte for byte, identification included, and the five CNPs
/// are byte-identical; none is a mirror copy (the same TTL, and the identification is not
/// proven unique), so all five resends and all five CNPs count, in the JSON and the exporter.
#[test]
fn a_constant_ip_id_loses_no_resend_and_no_cnp() {
    let r = report("constant-ip-id", &[]);
    assert_eq!(r["summary"]["duplicates"].as_u64(), Some(0));
    assert_eq!(r["summary"]["cnps"].as_u64(), Some(5));
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x232).unwrap();
    assert_eq!((f["psn"]["retransmits"].as_u64(), f["psn"]["retransmits_nak"].as_u64()), (Some(5), Some(5)));
    assert_eq!((f["psn"]["gaps"].as_u64(), f["psn"]["spurious_naks"].as_u64()), (Some(1), Some(0)));
    assert_eq!(f["ecn"]["ce"].as_u64(), Some(5));
    let kinds: Vec<String> = findings(&r).into_iter().map(|(k, _, _)| k).collect();
    assert_eq!(kinds, ["congestion", "network_loss"], "no ce_without_cnp, no spurious NAK");
    // The exporter's counters say the same.
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["export", "--no-http", "--push", "-", "-r"])
        .arg(common::root().join("samples/constant-ip-id.pcap"))
        .output()
        .unwrap();
    let line: Value = serde_json::from_slice(o.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let sum = |name: &str| -> f64 {
        let m = line["metrics"].as_array().unwrap().iter().filter(|m| m["name"] == name);
        m.filter_map(|m| m["value"].as_f64()).sum()
    };
    assert_eq!(sum("rocescope_retransmitted_packets_total"), 5.0);
    assert_eq!(sum("rocescope_cnp_packets_total"), 5.0);
    assert_eq!(sum("rocescope_mirror_duplicates"), 0.0);
}

/// A READ whose Last response was lost, with no later response to show the gap: only the
/// requester's ACK timer can tell, so the re-issue is a timeout (with the stall it cost), not
/// an implied NAK; the READ with a response gap in sight stays an implied NAK.
#[test]
fn a_lost_read_tail_is_a_timeout_with_its_stall() {
    let r = report("read-tail-timeout", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x222).unwrap();
    assert_eq!(f["psn"]["read_tail_timeouts"].as_u64(), Some(1));
    assert_eq!(
        (f["psn"]["retransmits_timeout"].as_u64(), f["psn"]["retransmits_implied"].as_u64()),
        (Some(1), Some(0))
    );
    let stall = f["psn"]["timeout_stall_ns"].as_i64().unwrap();
    assert!((67_100_000..67_300_000).contains(&stall), "{stall}");
    let t = r["findings"].as_array().unwrap().iter().find(|x| x["kind"] == "timeout_retransmit").unwrap();
    let title = t["title"].as_str().unwrap();
    assert!(title.contains("last response of 1 READ was lost") && title.contains("stalled 67.2"), "{title}");
    let r = report("read-implied-nak", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x82).unwrap();
    assert_eq!(
        (f["psn"]["read_tail_timeouts"].as_u64(), f["psn"]["retransmits_implied"].as_u64()),
        (Some(0), Some(1))
    );
}

/// Sixteen senders to one receiver, captured past the queue they share: the incast is named
/// (fan-in, the busiest bin, CE, position) and no sender is called "not reacting" for a rate
/// that is its share of the drain rate; the flows say why their reaction is not judged.
#[test]
fn an_incast_past_the_queue_is_judged_as_a_group() {
    let r = report("incast", &["--link-speed", "10G", "--bin", "10us"]);
    let i = &r["incast"][0];
    assert_eq!((i["receiver"].as_str(), i["fan_in"].as_u64()), (Some("10.0.0.100"), Some(16)));
    assert_eq!(i["position"], "past");
    assert_eq!(i["bin_ns"], 10_000);
    assert!(i["ce"].as_u64().unwrap() > 0 && i["link_share"].as_f64().unwrap() > 0.9, "{i:#}");
    assert_eq!(i["senders"].as_array().unwrap().len(), 8);
    let withheld = i["cc_not_judged"].as_u64().unwrap();
    assert!(withheld >= 12, "{withheld}");
    let kinds: Vec<&str> =
        r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert!(!kinds.contains(&"cc_not_reacting"), "{kinds:?}");
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "incast").unwrap();
    let title = f["title"].as_str().unwrap();
    assert!(title.contains("16 senders in one 10 µs bin") && title.contains("past the queue"), "{title}");
    // Every flow whose verdict is withheld says why, and so do the incast's senders whose
    // figures would not have made one (their reaction is not judged either).
    let not_judged = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["cc"]["reaction"]["not_judged"] == "incast")
        .count() as u64;
    assert!(not_judged >= withheld, "{not_judged} < {withheld}");
    assert_eq!(not_judged, 16, "every sender of the incast");
    // Without the rule's evidence (a bin of 10 ms takes all 16 senders too), still an incast.
    let r = report("incast", &[]);
    assert_eq!(r["incast"][0]["fan_in"], 16);
    // A capture with no receiver of several senders lists none as an incast.
    let r = report("rc-normal", &[]);
    assert!(r["incast"].as_array().unwrap().iter().all(|i| i["fan_in"].as_u64().unwrap() < 4));
}

/// One sender seen past the congested queue: its data arrives CE-marked, so its rate there is
/// the queue's drain rate, and its reaction to the CNPs is not judged; the flow says why.
#[test]
fn a_sender_past_the_queue_is_not_judged() {
    let r = report("cc-past-queue", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x172).unwrap();
    let rx = &f["cc"]["reaction"];
    assert_eq!((rx["evaluated"].as_u64(), rx["fell"].as_u64()), (Some(12), Some(0)), "{rx}");
    assert_eq!(rx["not_judged"], "past_queue", "{rx}");
    assert!(f["ecn"]["ce"].as_u64().unwrap() > 200);
    assert!(findings(&r).iter().all(|(k, _, _)| k != "cc_not_reacting"), "{:#}", r["findings"]);
    // Every CE run between two CNPs was answered (the CNPs come every 60 µs).
    assert_eq!(f["cc"]["ce_runs_without_cnp"], 0);
    // The text report says why.
    let path = common::root().join("samples/cc-past-queue.pcap");
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(["report", "-r"]).arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("not judged: the data arrives CE-marked"), "{text}");
}

/// Bursts of CE marks 2 ms apart, each answered 2 µs after its first mark, the rest paced:
/// no CE run spans the idle time between bursts, and the CE-to-CNP delay is the NP's 2 µs,
/// not the 2 ms from the last unanswered mark of the burst before.
#[test]
fn ce_marks_and_cnps_pair_across_idle_time() {
    let r = report("ce-idle-bursts", &[]);
    let f = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x182).unwrap();
    assert_eq!((f["ecn"]["ce"].as_u64(), f["cnps_received"].as_u64()), (Some(120), Some(6)));
    assert_eq!(f["cc"]["ce_runs_without_cnp"], 0, "{:#}", f["cc"]);
    let l = &f["latency"]["ce_to_cnp"];
    assert_eq!(
        (l["count"].as_u64(), l["p50_ns"].as_u64(), l["max_ns"].as_u64()),
        (Some(6), Some(2_000), Some(2_000)),
        "{l}"
    );
    assert_eq!(
        findings(&r).into_iter().map(|(k, s, _)| (k, s)).collect::<Vec<_>>(),
        [("congestion".to_string(), "info".to_string())]
    );
}

/// Priority 3 paused a quarter of the capture by 40 pauses while its ECT(0) RoCE carried no
/// CE mark and drew no CNP: `pfc_without_ecn` names the priority, the share and the zero
/// marks. Priority 4, paused alike, carries Not-ECT RoCE that could not be marked: nothing.
#[test]
fn pauses_without_ecn_marks_are_named() {
    let r = report("pfc-no-ecn", &["--findings-per-kind", "0"]);
    let hits: Vec<&Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "pfc_without_ecn").collect();
    assert_eq!(hits.len(), 2, "{:#}", r["findings"]);
    // Priority 4's RoCE is Not-ECT: the senders' NICs are named, not the switch.
    let p4 = hits.iter().find(|f| f["priority"] == 4).expect("priority 4");
    let t4 = p4["title"].as_str().unwrap();
    assert!(
        t4.contains("not ECN-capable") && t4.contains("Not-ECT packets") && !t4.contains("off on the switch"),
        "{t4}"
    );
    let f = hits.iter().find(|f| f["priority"] == 3).expect("priority 3");
    assert_eq!((f["severity"].as_str(), f["priority"].as_u64()), (Some("warning"), Some(3)));
    let title = f["title"].as_str().unwrap();
    assert!(
        title.starts_with("priority 3 paused 25% of the capture")
            && title.contains("40 pauses")
            && title.contains("161 ECT packets")
            && title.contains("no CE mark and drew no CNP"),
        "{title}"
    );
    assert_eq!(f["evidence"].as_array().unwrap().len(), 3);
    // The pauses' peak per second is over a 10 ms window: the mean here, as the pauses are even.
    let p3 = r["pfc"].as_array().unwrap().iter().find(|p| p["priority"] == 3).unwrap();
    let (mean, peak) = (p3["pause_us_per_s"].as_f64().unwrap(), p3["max_pause_us_per_s"].as_f64().unwrap());
    assert!((mean - 250_000.0).abs() < 500.0 && peak >= mean && peak < 251_000.0, "{mean} {peak}");
    // The existing ECN and PFC samples do not give it: marks answered by CNPs, or one storm.
    for name in ["ecn-cnp", "pfc-storm", "microburst", "incast"] {
        let r = report(name, &["--findings-per-kind", "0"]);
        assert!(findings(&r).iter().all(|(k, _, _)| k != "pfc_without_ecn"), "{name}: {:#}", r["findings"]);
    }
}

/// Five senders to one receiver in one 10 ms bin at 0.02 Gb/s (the DSCP-remark compare
/// samples): a fan-in, listed, but no incast: far below a queue's worth of data.
#[test]
fn a_fan_in_at_a_negligible_rate_is_no_incast() {
    let r = report("compare/dscp-remark-before", &["--findings-per-kind", "0"]);
    let i = &r["incast"][0];
    assert_eq!(i["fan_in"], 5, "{i:#}");
    assert!(i["gbps"].as_f64().unwrap() < 0.05 && i["ce"].as_u64().unwrap() > 0, "{i:#}");
    assert!(findings(&r).iter().all(|(k, _, _)| k != "incast"), "{:#}", r["findings"]);
    assert_eq!(i["cc_not_judged"], 0);
    // The text report lists the fan-in and says why it is none.
    let path = common::root().join("samples/compare/dscp-remark-before.pcap");
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(["report", "-r"]).arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("5 senders at +0.000 ms") && text.contains("no incast"), "{text}");
}

/// The figures of one flow (by destination QP) of a sample's report.
fn flow_psn(r: &Value, qp: u64) -> Value {
    r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == qp && f["requests"] != 0).unwrap()["psn"]
        .clone()
}

/// qp-restart.pcap: a PSN-0 restart behind acknowledged PSNs, after 2 s or at once, is a
/// new life (`qp_restart`, info), with no resend and nothing critical.
#[test]
fn a_restart_at_psn_0_is_a_new_life_not_resends() {
    let r = report("qp-restart", &["--findings-per-kind", "0"]);
    for qp in [0x232, 0x242] {
        let p = flow_psn(&r, qp);
        assert_eq!((p["lives"].as_u64(), p["retransmits"].as_u64()), (Some(2), Some(0)), "{p:#}");
        assert_eq!((p["gaps"].as_u64(), p["capture_loss_gaps"].as_u64()), (Some(0), Some(0)), "{p:#}");
    }
    assert_eq!(r["summary"]["findings"]["critical"], 0, "{:#}", r["findings"]);
    let f = r["findings"].as_array().unwrap();
    assert!(f.iter().all(|f| f["kind"] == "qp_restart" && f["severity"] == "info"), "{f:#?}");
    assert!(f[0]["title"].as_str().unwrap().contains("2 lives"), "{}", f[0]["title"]);
}

/// selective-repeat.pcap: one resend of the NAKed PSN, new PSNs going on, at either link:
/// network loss repaired selectively (titled so), not a spurious NAK with a late packet.
#[test]
fn selective_repeat_is_loss_repaired_selectively_at_either_link() {
    let r = report("selective-repeat", &["--findings-per-kind", "0"]);
    for (qp, here) in [(0x252, 1), (0x262, 0)] {
        let p = flow_psn(&r, qp);
        assert_eq!(
            (p["selective_resends"].as_u64(), p["retransmits_nak"].as_u64()),
            (Some(1), Some(1)),
            "{p:#}"
        );
        assert_eq!(
            (p["network_loss_gaps"].as_u64(), p["spurious_naks"].as_u64()),
            (Some(here), Some(0)),
            "{p:#}"
        );
        assert_eq!(
            (p["out_of_order"].as_u64(), p["network_loss_packets"].as_u64()),
            (Some(0), Some(1)),
            "{p:#}"
        );
    }
    for f in r["findings"].as_array().unwrap() {
        let t = f["title"].as_str().unwrap();
        assert!(t.contains("1 selective resend") && !t.contains("go-back-N"), "{t}");
    }
}

/// mtu-blackhole.pcap: a 4 KiB WRITE resent 7 times after the ACK timeout, never
/// acknowledged, while small SENDs were: 7 timer expiries, the stall to the last resend,
/// the retry count used up, and the path MTU named.
#[test]
fn a_path_mtu_black_hole_uses_up_the_retry_count() {
    let r = report("mtu-blackhole", &["--findings-per-kind", "0"]);
    let p = flow_psn(&r, 0x272);
    assert_eq!((p["timeout_events"].as_u64(), p["resend_gaps"].as_u64()), (Some(7), Some(7)), "{p:#}");
    assert_eq!((p["retries_max"].as_u64(), p["retries_exhausted"].as_bool()), (Some(7), Some(true)), "{p:#}");
    // Seven timeouts of 67.2 ms from the last new packet to the last resend.
    let stall = p["timeout_stall_ns"].as_i64().unwrap();
    assert!((470_000_000..471_000_000).contains(&stall), "{stall}");
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "retry_exhausted").unwrap();
    let t = f["title"].as_str().unwrap();
    assert!(
        t.contains("IBV_WC_RETRY_EXC_ERR") && t.contains("at most 314 bytes, so a path MTU below 4170 bytes"),
        "{t}"
    );
}

/// Roce_PacketSize_2400_stall.pcapng: a READ reserves 7488511-7488513, the next SEND reuses
/// 7488513, the responder ACKs 16777215, and the QP is silent for 146 s while the capture
/// goes on: `psn_violation` and a firm `qp_stalled` (it reported nothing before).
#[test]
fn the_real_stall_capture_is_a_stuck_qp_with_broken_psns() {
    let Some(dir) = common::real_captures() else { return };
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "--findings-per-kind", "0", "-r"])
        .arg(dir.join("Roce_PacketSize_2400_stall.pcapng"))
        .output()
        .unwrap();
    let r = common::report_json(&o.stdout);
    assert_eq!(
        findings(&r),
        BTreeSet::from([
            // Its two hosts mark DSCP 0 and 4, one priority (docs/verdicts.md "Marking
            // without expectations").
            ("marking_inconsistent".into(), "info".into(), None),
            ("psn_violation".into(), "warning".into(), Some(0x19)),
            ("qp_stalled".into(), "critical".into(), Some(0x19)),
        ]),
        "{:#}",
        r["findings"]
    );
    let p =
        r["flows"].as_array().unwrap().iter().find(|f| f["psn"]["stall"].is_object()).unwrap()["psn"].clone();
    assert_eq!((p["stall"]["psn"].as_u64(), p["stall"]["firm"].as_bool()), (Some(7_488_513), Some(true)));
    assert!(p["stall"]["silent_ns"].as_i64().unwrap() > 145_000_000_000);
    assert_eq!((p["psn_violations"].as_u64(), p["retransmits"].as_u64()), (Some(2), Some(0)));
    let v = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "psn_violation").unwrap();
    let frames: Vec<u64> =
        v["evidence"].as_array().unwrap().iter().map(|e| e["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames, [147, 148], "the SEND on the READ's PSN and the ACK outside the window");
    // rping_3072_faillire.pcapng: the same fault, the connection torn down (CM DREQ, frame
    // 116) 9.19 s after the SEND: a stall up to the DREQ, shorter than the retry budget.
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "-r"])
        .arg(dir.join("rping_3072_faillire.pcapng"))
        .output()
        .unwrap();
    let r = common::report_json(&o.stdout);
    let s = r["flows"].as_array().unwrap().iter().find(|f| f["psn"]["stall"].is_object()).unwrap()["psn"]
        ["stall"]
        .clone();
    assert_eq!(
        (s["psn"].as_u64(), s["firm"].as_bool(), s["closed"].as_bool()),
        (Some(4_445_928), Some(false), Some(true))
    );
    assert_eq!(s["silent_ns"].as_i64().map(|n| n / 10_000_000), Some(918), "{s}");
}

/// NCCL's parallel QPs between two hosts all start at PSN 0 and move in lockstep, so an
/// ACK's PSN fits every one of them: ACKs must not be timed against another QP's requests.
/// Two QPs, one WRITE Only each in turn (AckReq), each ACKed 3 µs later: with the responder
/// on the same UDP source port as the requester (ConnectX: both directions hash the two
/// QPNs to one port) the directions pair by port; with another port (soft-RoCE), by PSN once
/// they part, never crosswise. Either way no ACK latency beyond the 3 µs the wire shows.
#[test]
fn lockstep_qps_from_psn_0_never_pair_crosswise() {
    use rocescope_capture::PcapWriter;
    use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::{AethRepr, RethRepr};
    use rocescope_decoder::{BthRepr, Ecn, LinkType, Opcode, OpcodeOptions};
    let dir = tempfile::tempdir().unwrap();
    for same_port in [true, false] {
        let path = dir.path().join(format!("lockstep-{same_port}.pcap"));
        let file = std::fs::File::create(&path).unwrap();
        let mut w = PcapWriter::new(std::io::BufWriter::new(file), LinkType::ETHERNET, 65535).unwrap();
        let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let frame = |src: [u8; 4], dst: [u8; 4], sport: u16, bth: BthRepr, ext: ExtRepr, payload: usize| {
            let ip =
                IpRepr::V4 { src: src.into(), dst: dst.into(), dscp: 26, ecn: Ecn::Ect0, ttl: 64, id: 0 };
            let mut f = RoceV2Frame::new(
                [2, 0, 0, 0, 0, src[3]],
                [2, 0, 0, 0, 0, dst[3]],
                ip,
                IbRepr { bth, ext, payload: vec![0; payload], icrc: IcrcMode::Correct },
            );
            f.sport = sport;
            f.build(OpcodeOptions::default())
        };
        // QP i: requester QPN 0x100 + i, responder QPN 0x200 + i, port 50000 + i.
        let mut ts = 1_767_225_600_000_000_000i64;
        for psn in 0..200u32 {
            for i in 0..2u32 {
                let port = 50_000 + i as u16;
                let bth = BthRepr {
                    opcode: Opcode::RC_WRITE_ONLY,
                    dest_qp: 0x200 + i,
                    psn,
                    ack_req: true,
                    ..Default::default()
                };
                let ext = ExtRepr {
                    reth: Some(RethRepr { va: 0x1000, rkey: 7, dma_len: 256 }),
                    ..Default::default()
                };
                let req = frame(a, b, port, bth, ext, 256);
                w.write(ts, &req, req.len() as u32).unwrap();
                let ack_port = if same_port { port } else { port ^ 0x8000 };
                let bth =
                    BthRepr { opcode: Opcode::RC_ACKNOWLEDGE, dest_qp: 0x100 + i, psn, ..Default::default() };
                let ext = ExtRepr { aeth: Some(AethRepr::ack(psn + 1)), ..Default::default() };
                let ack = frame(b, a, ack_port, bth, ext, 0);
                // The other QP's request goes out before this ACK comes back: lockstep.
                w.write(ts + 3_000 + 500, &ack, ack.len() as u32).unwrap();
                ts += 1_000;
            }
            ts += 10_000;
        }
        w.finish().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .args(["report", "--json", "-r", path.to_str().unwrap()])
            .output()
            .expect("run rocescope");
        let r = common::report_json(&o.stdout);
        let data: Vec<&Value> =
            r["flows"].as_array().unwrap().iter().filter(|f| f["src"] == "10.0.0.1").collect();
        assert_eq!(data.len(), 2);
        for f in data {
            let partner = &r["flows"][f["partner"].as_u64().expect("paired") as usize];
            assert_eq!(
                partner["dest_qp"].as_u64().unwrap() + 0x100,
                f["dest_qp"].as_u64().unwrap(),
                "crosswise: {f:#}"
            );
            let ack = &f["latency"]["ack"];
            assert!(ack["max_ns"].as_u64().unwrap() <= 4_000, "same port {same_port}: {ack:#}");
            assert!(ack["count"].as_u64().unwrap() >= 190, "{ack:#}");
        }
        let how: BTreeSet<&str> =
            r["connections"].as_array().unwrap().iter().filter_map(|c| c["pairing"].as_str()).collect();
        assert_eq!(how, BTreeSet::from([if same_port { "port" } else { "psn" }]), "{same_port}");
    }
}

/// `n` QPs between one pair of hosts, each a WRITE asking for an ACK and its ACK, the two
/// directions on different UDP ports (no port pairing): what pairing looked at, and how many
/// flows it paired.
fn one_host_pair(n: u32) -> (u64, usize) {
    use rocescope_analyzer::{Analyzer, Config, FrameMeta};
    use rocescope_decoder::build::{ExtRepr, IbRepr, RoceV2Frame};
    use rocescope_decoder::ext::{AethRepr, RethRepr};
    use rocescope_decoder::{decode, BthRepr, DecodeOptions, LinkType, Opcode};
    let opts = DecodeOptions::default();
    let mut a = Analyzer::new(Config::default());
    let mut number = 0u64;
    for q in 0..n {
        let write = IbRepr {
            bth: BthRepr {
                opcode: Opcode::RC_WRITE_ONLY,
                dest_qp: 0x1000 + q,
                ack_req: true,
                ..Default::default()
            },
            ext: ExtRepr { reth: Some(RethRepr { va: 0, rkey: 1, dma_len: 64 }), ..Default::default() },
            payload: vec![0; 64],
            ..Default::default()
        };
        let ack = IbRepr {
            bth: BthRepr { opcode: Opcode::RC_ACKNOWLEDGE, dest_qp: 0x10_0000 + q, ..Default::default() },
            ext: ExtRepr { aeth: Some(AethRepr { syndrome: 0, msn: 1 }), ..Default::default() },
            ..Default::default()
        };
        for (ib, (s, d)) in [(write, (1, 2)), (ack, (2, 1))] {
            let mut frame = RoceV2Frame::new([2, 0, 0, 0, 0, s], [2, 0, 0, 0, 0, d], common::ipv4(s, d), ib);
            frame.sport = if s == 1 { 10_000 + (q % 40_000) as u16 } else { 60_000 - (q % 5_000) as u16 };
            let data = frame.build(opts.opcode);
            number += 1;
            let meta = FrameMeta {
                number,
                ts_ns: number as i64 * 1_000,
                len: data.len() as u32,
                link_bps: None,
                point: 0,
            };
            a.push(&meta, &decode(LinkType::ETHERNET, &data, &opts));
        }
    }
    let paired = a.flows().iter().filter(|f| f.partner().is_some()).count();
    (a.flows().pair_visits(), paired)
}

/// Pairing a response with its request looks at the host pair's flows still waiting for a
/// partner, not at every flow of the pair: 40,000 QPs between two hosts took 8-12 s when
/// each response walked them all (issue 40). Linear: twice the QPs, twice the looking.
#[test]
fn pairing_many_qps_of_one_host_pair_is_linear() {
    let (small, paired_small) = one_host_pair(2_000);
    let (large, paired_large) = one_host_pair(4_000);
    assert_eq!((paired_small, paired_large), (4_000, 8_000), "every QP's two directions paired");
    assert!(large <= small * 5 / 2, "looked at {small} flows for 2,000 QPs, {large} for 4,000");
}
