//! Which way RoCE flows while a MAC pauses a priority (reference §1.8: a PFC frame's source
//! is the pausing MAC, so RoCE *to* that MAC on that priority must stop). The cases in
//! samples/cases/ were built with their answers (`analysis` in each `.expected.json`):
//! a peer that ignores the pause, one that stops within the response allowance, and a
//! deadlock hint where only the pausing host's own traffic goes on.

mod common;

use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions, Link, MacControl};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn case(name: &str) -> PathBuf {
    common::root().join("samples/cases").join(name)
}

fn expected(name: &str) -> Value {
    let p = case(&format!("{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn report(name: &str, extra: &[&str]) -> Value {
    let path = case(&format!("{name}.pcap"));
    let mut args = vec!["report", "--json", "-r", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn findings<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

fn timeline<'a>(r: &'a Value, mac: &str, prio: u64) -> &'a Value {
    r["pfc"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["src_mac"] == mac && p["priority"] == prio && p["kind"] == "pfc")
        .unwrap_or_else(|| panic!("no PFC timeline for {mac} priority {prio}"))
}

fn frames(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|e| e["frame"].as_u64().unwrap()).collect()
}

const CASES: &[&str] = &[
    "pfc-ignored",
    "pfc-honoured",
    "pfc-deadlock-direction",
    "pfc-l2-ignored",
    "pfc-l2-honoured",
    "pfc-l2-one-conversation",
    "pfc-qinq-ignored",
    "truncated-length",
];

/// The cases decode to the counts written beside them, and every event is where it says.
#[test]
fn cases_match_their_counts_and_events() {
    let opts = DecodeOptions::default();
    for name in CASES {
        let e = expected(name);
        let c = common::count(&case(&format!("{name}.pcap")));
        let x = &e["counts"];
        for (k, mine) in [
            ("frames", c.frames),
            ("roce_v2", c.roce_v2),
            ("pfc", c.pfc),
            ("icrc_valid", c.icrc_valid),
            ("icrc_truncated", c.icrc_truncated),
            ("malformed", c.malformed),
        ] {
            assert_eq!(mine, x[k].as_u64().unwrap(), "{name}: counts.{k}");
        }
        let mut r = CaptureReader::open(&case(&format!("{name}.pcap"))).unwrap();
        let mut recs = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            recs.push((rec.data.to_vec(), rec.len));
        }
        let pausing = e["analysis"]["intervals"][0]["src_mac"].as_str().map(str::to_owned);
        let peer = e["analysis"]["link_peer"].as_str().map(str::to_owned);
        for ev in e["events"].as_array().unwrap() {
            let n = ev["frame"].as_u64().unwrap() as usize;
            let (data, len) = &recs[n - 1];
            let p = decode(rocescope_decoder::LinkType::ETHERNET, data, &opts);
            let src = match p.link {
                Link::Ethernet(eth) => rocescope_decoder::link::mac_string(&eth.src()),
                _ => String::new(),
            };
            let dst = match p.link {
                Link::Ethernet(eth) => rocescope_decoder::link::mac_string(&eth.dst()),
                _ => String::new(),
            };
            let ok = match ev["what"].as_str().unwrap() {
                "pfc_pause" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.enabled(3) && f.quanta[3] == 65535)
                }
                "pfc_xon" => {
                    matches!(p.mac_control, Some(MacControl::Pfc(f)) if f.enabled(3) && f.quanta[3] == 0)
                }
                // A RoCE frame on priority 3 (its outer tag's PCP) to the MAC that is pausing
                // priority 3, or from that MAC's link peer when it is a switch port.
                "pause_ignored" => {
                    let outer = p.vlans.as_slice().first().map(|t| t.pcp);
                    p.roce_ok().is_some()
                        && outer == Some(3)
                        && (Some(&dst) == pausing.as_ref() || (peer.is_some() && Some(&src) == peer.as_ref()))
                }
                // The record claims the cut length; the IP header says the frame was longer.
                "truncated" => *len as usize == data.len() && data.len() == 128,
                other => panic!("{name}: unknown event {other}"),
            };
            assert!(ok, "{name}: frame {n} is not a {}: {:?} (src {src})", ev["what"], ev["detail"]);
        }
    }
}

/// The receiver pauses priority 3 and its peer goes on sending to it: `pause_ignored`,
/// critical, naming the pausing MAC, the priority and the frames; not a deadlock.
#[test]
fn a_peer_that_ignores_the_pause_is_named() {
    let e = expected("pfc-ignored");
    let want = &e["analysis"]["pause_ignored"][0];
    let mac = want["src_mac"].as_str().unwrap();
    let r = report("pfc-ignored", &[]);
    assert_eq!(r["config"]["pause_allowance_ns"], e["analysis"]["allowance_ns"]);
    let f = findings(&r, "pause_ignored");
    assert_eq!(f.len(), 1, "{:#}", r["findings"]);
    let f = f[0];
    assert_eq!(f["severity"], "critical");
    assert_eq!((f["src_mac"].as_str(), f["priority"].as_u64()), (Some(mac), Some(3)));
    assert_eq!(f["weight"], want["frames"]);
    let title = f["title"].as_str().unwrap();
    assert!(title.contains(&format!("{} frames", want["frames"])), "{title}");
    assert!(title.contains("priority 3") && title.contains(mac), "{title}");
    // Evidence: the pause frame, then the first frames that arrived after the allowance.
    let mut ev = vec![want["pause_frame"].as_u64().unwrap()];
    ev.extend(want["first_frames"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()));
    assert_eq!(frames(&f["evidence"]), ev);
    let t = timeline(&r, mac, 3);
    assert_eq!(t["ignored_frames"], want["frames"]);
    assert_eq!(t["ignored_max_delay_ns"], want["max_delay_ns"]);
    let iv = &e["analysis"]["intervals"][0];
    assert_eq!(t["intervals"].as_array().unwrap().len(), 1);
    let i = &t["intervals"][0];
    assert_eq!(i["first_frame"], iv["first_frame"]);
    assert_eq!(i["xon"], true);
    assert_eq!(i["roce_towards"], iv["roce_towards"]);
    assert_eq!(i["ignored"], iv["ignored"]);
    assert!(findings(&r, "pfc_deadlock").is_empty());
    // The text report says it too.
    let o = run(&["report", "-r", case("pfc-ignored.pcap").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("CRITICAL") && text.contains("ignore"), "{text}");

    // A larger allowance than the pause lasted: nothing beyond it, no finding.
    let r = report("pfc-ignored", &["--pause-allowance-us", "500"]);
    assert!(findings(&r, "pause_ignored").is_empty());
    assert_eq!(r["config"]["pause_allowance_ns"], 500_000);
    assert_eq!(timeline(&r, mac, 3)["ignored_frames"], 0);
    // Only the last few frames beyond the allowance: too few to be sure, a warning.
    let r = report("pfc-ignored", &["--pause-allowance-us", "390"]);
    let f = findings(&r, "pause_ignored");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "warning");
    let n = f[0]["weight"].as_u64().unwrap();
    assert!((1..8).contains(&n), "{n} frames");
}

/// The peer stops within the allowance (one frame in flight), and traffic to the same host
/// on another priority, or on the paused priority to another host, goes on: nothing ignored.
#[test]
fn a_peer_that_stops_in_time_is_not_blamed() {
    let e = expected("pfc-honoured");
    let iv = &e["analysis"]["intervals"][0];
    let mac = iv["src_mac"].as_str().unwrap();
    let r = report("pfc-honoured", &[]);
    assert!(findings(&r, "pause_ignored").is_empty(), "{:#}", r["findings"]);
    let t = timeline(&r, mac, 3);
    assert_eq!(t["ignored_frames"], 0);
    let i = &t["intervals"][0];
    assert_eq!(i["first_frame"], iv["first_frame"]);
    assert_eq!(i["roce_towards"], 1, "the frame in flight");
    assert_eq!(i["ignored"], 0);
    // Priority 3 to the other host, and the ACK back to the sender, count as traffic on
    // the priority, not to the pauser.
    assert_eq!(i["roce_during"], iv["roce_during"]);
    assert!(iv["roce_during"].as_u64().unwrap() > 10);
    // With no allowance at all, the frame in flight is the only one: a warning, not critical.
    let r = report("pfc-honoured", &["--pause-allowance-us", "0"]);
    let f = findings(&r, "pause_ignored");
    assert_eq!(f.len(), 1);
    assert_eq!((f[0]["severity"].as_str(), f[0]["weight"].as_u64()), (Some("warning"), Some(1)));
    assert!(iv["in_flight_delay_ns"].as_i64().unwrap() < 7_000);
}

/// A deadlock hint counts only RoCE towards the pausing side: here the pausing host's own
/// traffic on the priority goes on, and the hint is still given.
#[test]
fn deadlock_hint_counts_only_traffic_towards_the_pausing_side() {
    let e = expected("pfc-deadlock-direction");
    let d = &e["analysis"]["deadlock"];
    let mac = d["src_mac"].as_str().unwrap();
    let r = report("pfc-deadlock-direction", &[]);
    let f = findings(&r, "pfc_deadlock");
    assert_eq!(f.len(), 1, "{:#}", r["findings"]);
    assert_eq!(f[0]["severity"], "critical");
    assert_eq!((f[0]["src_mac"].as_str(), f[0]["priority"].as_u64()), (Some(mac), Some(3)));
    assert_eq!(frames(&f[0]["evidence"])[0], d["first_frame"].as_u64().unwrap());
    let hint = &timeline(&r, mac, 3)["deadlock_hint"];
    assert_eq!(hint["first_frame"], d["first_frame"]);
    assert_eq!(hint["roce_during"], d["roce_during"], "the pauser's own WRITEs on priority 3");
    assert_eq!(hint["roce_towards"], 0);
    assert_eq!(
        hint["end_ns"].as_i64().unwrap() - hint["start_ns"].as_i64().unwrap(),
        d["paused_ns"].as_i64().unwrap()
    );
    assert!(findings(&r, "pause_ignored").is_empty());
    // Traffic towards the pausing side that goes on is no deadlock, however long the pause.
    let r = report("pfc-ignored", &["--deadlock-ms", "0.1"]);
    assert!(findings(&r, "pfc_deadlock").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn the_allowance_flag_is_checked() {
    let path = case("pfc-ignored.pcap");
    let o = run(&["report", "-r", path.to_str().unwrap(), "--pause-allowance-us=-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("allowance"));
    let o = run(&["report", "--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--pause-allowance-us"));
}

/// The `pause_ignored` finding of a case built with its answers, as `rocescope report` gives
/// it: critical, naming the pausing MAC, the priority, the frames and the evidence.
fn assert_ignored_as_built(name: &str, r: &Value) {
    let e = expected(name);
    let want = &e["analysis"]["pause_ignored"][0];
    let mac = want["src_mac"].as_str().unwrap();
    let f = findings(r, "pause_ignored");
    assert_eq!(f.len(), 1, "{name}: {:#}", r["findings"]);
    let f = f[0];
    assert_eq!(f["severity"], "critical", "{name}");
    assert_eq!((f["src_mac"].as_str(), f["priority"].as_u64()), (Some(mac), Some(3)), "{name}");
    assert_eq!(f["weight"], want["frames"], "{name}");
    let mut ev = vec![want["pause_frame"].as_u64().unwrap()];
    ev.extend(want["first_frames"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()));
    assert_eq!(frames(&f["evidence"]), ev, "{name}");
    let t = timeline(r, mac, 3);
    assert_eq!(t["ignored_frames"], want["frames"], "{name}");
    assert_eq!(t["ignored_max_delay_ns"], want["max_delay_ns"], "{name}");
    let iv = &e["analysis"]["intervals"][0];
    let i = &t["intervals"][0];
    assert_eq!(
        (&i["first_frame"], &i["roce_towards"], &i["ignored"]),
        (&iv["first_frame"], &iv["roce_towards"], &iv["ignored"]),
        "{name}"
    );
}

/// PFC is hop by hop: a ToR port that sends no RoCE pauses the host at the other end of its
/// link, whose frames carry the remote hosts' MACs in an L2 fabric. The host that sends on is
/// named, with the switch port whose pause it ignored.
#[test]
fn a_host_that_ignores_its_switch_port_in_an_l2_fabric_is_named() {
    let e = expected("pfc-l2-ignored");
    let peer = e["analysis"]["link_peer"].as_str().unwrap();
    let r = report("pfc-l2-ignored", &[]);
    assert_ignored_as_built("pfc-l2-ignored", &r);
    let want = &e["analysis"]["pause_ignored"][0];
    let mac = want["src_mac"].as_str().unwrap();
    let t = timeline(&r, mac, 3);
    assert_eq!((t["direction"].as_str(), t["link_peer"].as_str()), (Some("from_link_peer"), Some(peer)));
    assert_eq!(t["ignored_from_peer"], want["frames"]);
    assert_eq!(t["roce_to_mac"], 0, "the switch port receives no RoCE of its own");
    let title = findings(&r, "pause_ignored")[0]["title"].as_str().unwrap().to_string();
    assert!(title.starts_with(peer) && title.contains(mac) && title.contains("sends no RoCE"), "{title}");
    // The exit status is not 0 for it only through --fail-on (issue 27); the text says it.
    let o = run(&["report", "-r", case("pfc-l2-ignored.pcap").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("CRITICAL") && text.contains(&format!("its pauses stop {peer}")), "{text}");
    assert!(!text.contains("no pause problems"), "{text}");
}

/// Two hosts, one conversation: both MACs are in every frame, so the share cannot tell which
/// is on the captured link; the turnaround can (the host ACKs in 1.5 µs, its far peer's ACKs
/// take a fabric round trip, 8 µs). The host that sends through its ToR port's pause is
/// named; by the capture clock alone the direction would be unknown and the pause unjudged.
#[test]
fn one_conversation_names_the_host_on_the_link_by_its_turnaround() {
    let name = "pfc-l2-one-conversation";
    let e = expected(name);
    let peer = e["analysis"]["link_peer"].as_str().unwrap();
    let r = report(name, &[]);
    assert_ignored_as_built(name, &r);
    let mac = e["analysis"]["pause_ignored"][0]["src_mac"].as_str().unwrap();
    let t = timeline(&r, mac, 3);
    assert_eq!((t["direction"].as_str(), t["link_peer"].as_str()), (Some("from_link_peer"), Some(peer)));
    let title = findings(&r, "pause_ignored")[0]["title"].as_str().unwrap().to_string();
    assert!(title.starts_with(peer) && title.contains(mac), "{title}");
}

/// The same link with a host that stops in time: its peers' frames to it through the paused
/// switch port (the link's other direction) go on and are not held against anyone.
#[test]
fn an_l2_host_that_stops_in_time_is_not_blamed_for_its_peers_frames() {
    let e = expected("pfc-l2-honoured");
    let iv = &e["analysis"]["intervals"][0];
    let mac = iv["src_mac"].as_str().unwrap();
    let r = report("pfc-l2-honoured", &[]);
    assert!(findings(&r, "pause_ignored").is_empty(), "{:#}", r["findings"]);
    assert!(findings(&r, "pfc_deadlock").is_empty(), "{:#}", r["findings"]);
    let t = timeline(&r, mac, 3);
    assert_eq!(t["link_peer"].as_str(), e["analysis"]["link_peer"].as_str());
    assert_eq!(t["ignored_frames"], 0);
    let i = &t["intervals"][0];
    assert_eq!(
        (&i["roce_towards"], &i["ignored"], &i["roce_during"]),
        (&iv["roce_towards"], &iv["ignored"], &iv["roce_during"])
    );
}

/// On a QinQ trunk the switch classifies on the outer tag (802.1ad S-tag): by default the
/// frames are on the S-tag's priority 3, lossless, and the far port that sends through the
/// pause is found. Read by the inner tag (`--pcp-tag inner`), the same frames are on
/// priority 0: not lossless, and no pause concerns them.
#[test]
fn qinq_frames_take_their_priority_from_the_outer_tag() {
    let e = expected("pfc-qinq-ignored");
    let r = report("pfc-qinq-ignored", &["--lossless", "3"]);
    assert_ignored_as_built("pfc-qinq-ignored", &r);
    assert_eq!(r["audit"]["expected"]["pcp_tag"], "outer");
    let not_lossless: Vec<_> =
        r["audit"]["violations"].as_array().unwrap().iter().filter(|v| v["what"] == "not_lossless").collect();
    assert!(not_lossless.is_empty(), "{not_lossless:#?}");
    let inner = e["analysis"]["inner_priority"].as_u64().unwrap();
    let r = report("pfc-qinq-ignored", &["--lossless", "3", "--pcp-tag", "inner"]);
    assert_eq!(r["audit"]["expected"]["pcp_tag"], "inner");
    assert!(findings(&r, "pause_ignored").is_empty(), "{:#}", r["findings"]);
    let seen: Vec<u64> = r["audit"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["what"] == "not_lossless")
        .map(|v| v["seen"].as_u64().unwrap())
        .collect();
    assert!(!seen.is_empty() && seen.iter().all(|s| *s == inner), "{seen:?}");
    let o = run(&["report", "-r", case("pfc-qinq-ignored.pcap").to_str().unwrap(), "--pcp-tag", "middle"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}
