//! Mirror and overlay tunnels (issue 12): every frame of `samples/demo.pcap` wrapped in
//! each encapsulation (`samples/tunnels/demo-<encap>.pcap`, written by the samplegen) gives
//! the demo's flows, findings, audit and exit status; a tunnel rocescope does not unwrap
//! is said to be one, never blamed on NIC offload.

mod common;

use serde_json::Value;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn path(name: &str) -> String {
    common::root().join("samples").join(name).to_string_lossy().into_owned()
}

const AUDIT: [&str; 6] = ["--expect-dscp", "26", "--expect-pcp", "3", "--lossless", "3"];

/// Encapsulations that carry the whole Ethernet frame: everything must match the demo.
const ETHERNET: [&str; 8] =
    ["erspan1", "erspan2", "erspan3", "gretap", "vxlan", "geneve", "mpls-pw", "mpls-pw-cw"];
/// Encapsulations that carry only the IP packet: the inner frame has no VLAN tag, so no PCP.
const L3: [&str; 2] = ["gre", "mpls-ip"];
/// Mirrors that change what the capture shows and give it back (analyzer `mirror` module):
/// a collector stamping frames in 50 µs batches (the ERSPAN III clock restores the timing),
/// a mirror that strips the 802.1Q tag (its COS restores the PCP, its 4 bytes the length).
const RESTORED: [&str; 2] = ["erspan3-batched", "erspan2-stripped-tag"];

fn report(file: &str, extra: &[&str]) -> (Value, Option<i32>) {
    let mut args = vec!["report", "-r", file, "--json"];
    args.extend_from_slice(extra);
    let out = run(&args);
    (common::report_json(&out.stdout), out.status.code())
}

/// A finding without what names the file or frame offsets (a tunnel moves the inner headers).
fn finding_key(f: &Value) -> Value {
    let mut f = f.clone();
    if let Some(ev) = f.get_mut("evidence").and_then(Value::as_array_mut) {
        for e in ev {
            e.as_object_mut().map(|o| o.remove("what"));
        }
    }
    f
}

#[test]
fn every_ethernet_tunnel_gives_the_demo_report() {
    for audit in [&[][..], &AUDIT[..]] {
        let (demo, demo_rc) = report(&path("demo.pcap"), audit);
        // Violations of the expectations given fail the run; without any, the demo's pause
        // on an unused priority is listed but does not (README "Exit status").
        let want = if audit.is_empty() { 0 } else { 3 };
        assert_eq!(demo_rc, Some(want), "the demo has violations (and audit findings)");
        let files = ETHERNET.map(|e| format!("tunnels/demo-{e}.pcap"));
        for e in files.iter().cloned().chain(RESTORED.map(|r| format!("tunnels/{r}.pcap"))) {
            let (r, rc) = report(&path(&e), audit);
            assert_eq!(rc, demo_rc, "{e}: exit status");
            for k in ["summary", "flows", "connections", "pfc", "audit"] {
                assert_eq!(r[k], demo[k], "{e}: {k} differs from the demo's (audit {audit:?})");
            }
            let ours: Vec<Value> = r["findings"].as_array().unwrap().iter().map(finding_key).collect();
            let want: Vec<Value> = demo["findings"].as_array().unwrap().iter().map(finding_key).collect();
            assert_eq!(ours, want, "{e}: findings");
        }
    }
}

#[test]
fn l3_tunnels_give_the_demo_flows_without_pcp() {
    let (demo, _) = report(&path("demo.pcap"), &AUDIT);
    for e in L3 {
        let (r, rc) = report(&path(&format!("tunnels/demo-{e}.pcap")), &AUDIT);
        assert_eq!(rc, Some(3), "{e}");
        let s = &r["summary"];
        for k in [
            "packets",
            "roce",
            "roce_v1",
            "malformed",
            "icrc_bad",
            "pfc_frames",
            "cnps",
            "flows",
            "connections",
        ] {
            assert_eq!(s[k], demo["summary"][k], "{e}: summary.{k}");
        }
        // Same flows, packet for packet; bytes differ by the inner VLAN tags the L3 tunnel dropped.
        let key =
            |f: &Value| (f["src"].clone(), f["dst"].clone(), f["dest_qp"].clone(), f["packets"].clone());
        let ours: Vec<_> = r["flows"].as_array().unwrap().iter().map(key).collect();
        let want: Vec<_> = demo["flows"].as_array().unwrap().iter().map(key).collect();
        assert_eq!(ours, want, "{e}: flows");
        // What the inner frame still says (DSCP) is audited as in the demo; PCP is gone.
        assert!(kinds(&r).contains(&"pcp_untagged".to_string()), "{e}");
        assert!(!kinds(&r).contains(&"no_roce".to_string()), "{e}");
    }
}

#[test]
fn the_audit_never_passes_on_traffic_it_did_not_see() {
    // Before issue 12 the VXLAN file passed `--expect-dscp 26 --expect-pcp 3 --lossless 3`
    // with exit 0: 0 RoCE seen. Now it sees the traffic and fails as the demo does.
    let (r, rc) = report(&path("tunnels/demo-vxlan.pcap"), &AUDIT);
    assert_eq!(rc, Some(3));
    assert_eq!(r["summary"]["roce"], 143);
    assert!(r["audit"]["violations"].as_array().is_some_and(|v| !v.is_empty()), "{}", r["audit"]);
}

#[test]
fn an_unknown_tunnel_is_named_not_blamed_on_offload() {
    let file = path("tunnels/unknown-gre.pcap");
    let (r, rc) = report(&file, &[]);
    assert_eq!(r["summary"]["roce"], 0);
    assert_eq!(r["summary"]["tunnel_undecoded"], 182, "{}", r["summary"]);
    let kinds: Vec<&str> =
        r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"tunnel_not_decoded"), "{kinds:?}");
    assert!(!kinds.contains(&"no_roce"), "{kinds:?}");
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "tunnel_not_decoded").unwrap();
    let title = f["title"].as_str().unwrap();
    assert!(title.contains("in tunnels not decoded (GRE proto 0x880b"), "{title}");
    assert_eq!(rc, Some(0), "a note and a warning, nothing checked fails");
    let text = String::from_utf8_lossy(&run(&["report", "-r", &file]).stdout).into_owned();
    assert!(text.contains("frames in tunnels not decoded (GRE proto 0x880b"), "{text}");
    assert!(!text.contains("NIC-offloaded RoCE never reaches the host interface"), "{text}");
    // With an audit, it still fails: it checked nothing.
    let (_, rc) = report(&file, &AUDIT);
    assert_eq!(rc, Some(3));
    let line = String::from_utf8_lossy(&run(&["decode", "-r", &file, "-c", "1"]).stdout).into_owned();
    assert!(line.contains("GRE") && line.contains("[tunnel not decoded: GRE proto 0x880b]"), "{line}");
}

#[test]
fn decode_shows_each_layer_in_every_output() {
    let f = path("tunnels/demo-erspan3.pcap");
    let line = String::from_utf8_lossy(&run(&["decode", "-r", &f, "-c", "1"]).stdout).into_owned();
    assert!(line.contains("ERSPAN III s=7 | 10.0.0.1 → 10.0.0.2 RoCEv2"), "{line}");
    let tree = String::from_utf8_lossy(&run(&["decode", "-r", &f, "-c", "1", "-V"]).stdout).into_owned();
    for want in [
        "Tunnel 1: ERSPAN III (header at offset 34, inner frame at 62)",
        "Session ID: 7",
        "Platform ID: 3",
        "DSCP: 26",
    ] {
        assert!(tree.contains(want), "{want}: {tree}");
    }
    // Every line of every tunnelled sample validates against the strict schema.
    for e in ETHERNET
        .iter()
        .chain(L3.iter())
        .map(|e| format!("tunnels/demo-{e}.pcap"))
        .chain(["tunnels/unknown-gre.pcap".into()])
    {
        let out = run(&["decode", "-r", &path(&e), "--json"]);
        let lines = common::decode_lines(&out.stdout);
        assert_eq!(lines.len(), 182, "{e}");
        assert!(
            lines.iter().all(|l| l.get("tunnel").is_some()
                || l.get("tunnel_undecoded").is_some()
                || e.contains("-ip")
                || e.ends_with("demo-gre.pcap")),
            "{e}"
        );
    }
    let v = common::decode_lines(
        &run(&["decode", "-r", &path("tunnels/demo-mpls-pw-cw.pcap"), "-c", "1", "--json"]).stdout,
    );
    let t = &v[0]["tunnel"][0];
    assert_eq!((t["kind"].as_str(), t["mpls"]["payload"].as_str()), (Some("mpls"), Some("ethernet")));
    assert_eq!(t["mpls"]["labels"].as_array().map(Vec::len), Some(2));
    assert!(t["mpls"]["control_word"].is_object());
    // -T fields: the names come from the schema.
    let out = run(&[
        "decode",
        "-r",
        &f,
        "-c",
        "2",
        "-T",
        "fields",
        "-e",
        "tunnel.kind",
        "-e",
        "tunnel.erspan.session_id",
        "-e",
        "ip.dscp",
        "-e",
        "tunnel.ip.dscp",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "erspan3\t7\t26\t0\nerspan3\t7\t26\t0\n");
}

#[test]
fn extra_vxlan_and_geneve_ports_are_flags() {
    let out = run(&["decode", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--vxlan-port") && help.contains("--geneve-port"), "{help}");
    // VXLAN on 4789 with --vxlan-port 8472 (Linux's old default) added still decodes.
    let out = run(&["decode", "-r", &path("tunnels/demo-vxlan.pcap"), "-c", "1", "--vxlan-port", "8472"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("VXLAN vni=10007 |"));
}

fn kinds(r: &Value) -> Vec<String> {
    r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

/// Fields of a flow that do not depend on where it sits in the report or when its point's
/// copies arrived (the rates' last window ends with the whole capture).
fn flow_view(f: &Value) -> Value {
    let mut f = f.clone();
    if let Some(o) = f.as_object_mut() {
        for k in
            ["point", "id", "partner", "first_frame", "first_ns", "first", "last_ns", "last", "throughput"]
        {
            o.remove(k);
        }
        // Frame numbers are the merged file's.
        if let Some(psn) = o.get_mut("psn").and_then(Value::as_object_mut) {
            psn.remove("retries_frame");
            psn.remove("resend_gap_max_frame");
        }
    }
    f
}

#[test]
fn two_mirror_sessions_are_two_capture_points() {
    let (demo, _) = report(&path("demo.pcap"), &[]);
    let (r, rc) = report(&path("tunnels/two-sessions.pcap"), &[]);
    assert_eq!(rc, Some(0), "violations listed, none of an expectation given");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{points:?}");
    for (i, p) in points.iter().enumerate() {
        let s = format!("ERSPAN session {}", i + 1);
        assert_eq!(p["session"], s.as_str());
        assert_eq!(p["name"], format!("two-sessions.pcap [{s}]").as_str());
        assert_eq!((p["packets"].as_u64(), p["roce"].as_u64()), (Some(182), Some(143)), "{p}");
        // Each session's view is the demo's, analysed apart.
        let ours: Vec<Value> =
            r["flows"].as_array().unwrap().iter().filter(|f| f["point"] == i).map(flow_view).collect();
        let want: Vec<Value> = demo["flows"].as_array().unwrap().iter().map(flow_view).collect();
        assert_eq!(ours, want, "session {}", i + 1);
    }
    // Session 2's copies came 3 µs later: its point starts 3 µs after session 1's.
    assert_eq!(points[1]["start_ns"].as_i64().unwrap() - points[0]["start_ns"].as_i64().unwrap(), 3_000);
    // Kept as one point, every packet is there twice: duplicates, not two views.
    let (one, _) = report(&path("tunnels/two-sessions.pcap"), &["--one-point-per-capture"]);
    assert_eq!(one["points"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["summary"]["flows"], demo["summary"]["flows"]);
    assert!(one["flows"].as_array().unwrap().iter().any(|f| f["psn"]["duplicates"].as_u64() > Some(0)));
    let text = run(&["report", "-r", &path("tunnels/two-sessions.pcap")]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("two-sessions.pcap [ERSPAN session 2]"), "{text}");
}

#[test]
fn erspan3_timestamps_time_the_frames_within_a_session() {
    let (demo, _) = report(&path("demo.pcap"), &[]);
    let (r, _) = report(&path("tunnels/erspan3-batched.pcap"), &[]);
    let clock = &r["points"][0]["clock"];
    assert_eq!(clock["source"], "erspan3");
    assert_eq!(clock["granularity"], "100ns");
    assert_eq!(clock["upper_bits"], false, "the field was unwrapped");
    assert_eq!((clock["frames"].as_u64(), clock["steps"].as_u64()), (Some(182), Some(0)));
    // The collector moved frames by up to one 50 µs batch; the switch clock undoes it.
    let d = clock["max_departure_ns"].as_i64().unwrap();
    assert!(d > 0 && d < 50_000, "{clock}");
    assert_eq!(r["flows"], demo["flows"]);
    // By the capture clock the latencies are the batches', not the fabric's.
    let (cap, _) = report(&path("tunnels/erspan3-batched.pcap"), &["--capture-clock"]);
    assert!(cap["points"][0].get("clock").is_none());
    assert_ne!(cap["flows"], demo["flows"]);
    let lat = |r: &Value| {
        r["flows"].as_array().unwrap().iter().find_map(|f| f["latency"]["ack"]["p50_ns"].as_u64())
    };
    assert_ne!(lat(&cap), lat(&demo));
}

/// Two switch clocks 350 ms apart behind one ERSPAN III session, after the first's 60
/// frames 20 frames each in turn (samplegen `erspan3-stepping.pcap`, the demo at its own
/// capture times): the clock passes its check on the first 60, then every change is a step
/// beyond what a collector queue explains; the fourth makes the session fall back to the
/// capture clock, and the report says where.
#[test]
fn a_switch_clock_that_keeps_stepping_falls_back_to_the_capture_clock() {
    let (demo, _) = report(&path("demo.pcap"), &[]);
    let (r, _) = report(&path("tunnels/erspan3-stepping.pcap"), &[]);
    let clock = &r["points"][0]["clock"];
    assert_eq!((clock["frames"].as_u64(), clock["steps"].as_u64()), (Some(120), Some(3)), "{clock}");
    let fb = &clock["fallback"];
    assert_eq!(fb["reason"], "steps");
    assert_eq!((fb["frame"].as_u64(), fb["frames"].as_u64()), (Some(121), Some(62)), "{fb}");
    assert_eq!(fb["departure_ns"].as_i64().map(i64::abs), Some(350_000_000));
    // Each frame has its own time again: no packet is 350 ms off, every flow is the demo's.
    assert_eq!(r["flows"], demo["flows"]);
    assert_eq!(r["points"][0]["end_ns"], demo["summary"]["end_ns"]);
    let text = run(&["report", "-r", &path("tunnels/erspan3-stepping.pcap")]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("switch clock NOT TRUSTED from frame 121 on: it needed re-anchoring a 4th time (departed 350.000 ms"),
        "{text}"
    );
    // A clock that runs true keeps being used: the batched sample has no fallback.
    let (batched, _) = report(&path("tunnels/erspan3-batched.pcap"), &[]);
    assert!(batched["points"][0]["clock"].get("fallback").is_none());
}

/// A switch clock that reads 3 hours ahead and ticks every 100 µs under a header that says
/// 100 ns (samplegen `erspan3-wrong-clock.pcap`, the demo at its own capture times): its
/// check on the session's first frames fails before any frame is timed, so the mirror reads
/// as the demo does (flows, rates, latencies, findings), and the report says why.
#[test]
fn a_switch_clock_wrong_from_its_first_frames_times_nothing() {
    let (demo, _) = report(&path("demo.pcap"), &[]);
    let (r, _) = report(&path("tunnels/erspan3-wrong-clock.pcap"), &[]);
    let clock = &r["points"][0]["clock"];
    assert_eq!((clock["frames"].as_u64(), clock["steps"].as_u64()), (Some(0), Some(0)), "{clock}");
    let fb = &clock["fallback"];
    assert_eq!(fb["reason"], "first_frames");
    assert_eq!((fb["frame"].as_u64(), fb["frames"].as_u64()), (Some(1), Some(182)), "{fb}");
    assert!(fb["departure_ns"].as_i64().unwrap() > 200_000, "{fb}");
    assert_eq!(r["flows"], demo["flows"]);
    // The same findings (their evidence's header offsets are the tunnel's).
    let titles = |r: &Value| -> Vec<(Value, Value, Value)> {
        let f = r["findings"].as_array().unwrap().iter();
        f.map(|f| (f["kind"].clone(), f["severity"].clone(), f["title"].clone())).collect()
    };
    assert_eq!(titles(&r), titles(&demo));
    assert_eq!(
        (&r["summary"]["start_ns"], &r["summary"]["end_ns"]),
        (&demo["summary"]["start_ns"], &demo["summary"]["end_ns"])
    );
    let text = run(&["report", "-r", &path("tunnels/erspan3-wrong-clock.pcap")]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("switch clock NOT TRUSTED from its first frame (1) on"), "{text}");
    // Timed by that clock, the demo's 79.5 ms would have shrunk to 80 µs.
    let (cap, _) = report(&path("tunnels/erspan3-wrong-clock.pcap"), &["--capture-clock"]);
    assert_eq!(cap["flows"], demo["flows"]);
}

#[test]
fn a_stripped_tag_is_restored_from_the_erspan_cos_and_only_then() {
    let (r, rc) = report(&path("tunnels/erspan2-stripped-tag.pcap"), &AUDIT);
    assert_eq!(rc, Some(3));
    assert_eq!(r["points"][0]["pcp_from_erspan"], 21, "the demo's tagged RoCE packets");
    let untagged = |r: &Value| -> u64 {
        let v = r["audit"]["violations"].as_array().unwrap().iter();
        v.filter(|v| v["what"] == "pcp_untagged").filter_map(|v| v["packets"].as_u64()).sum()
    };
    let (demo, _) = report(&path("demo.pcap"), &AUDIT);
    assert_eq!(untagged(&r), untagged(&demo));
    let (off, _) =
        report(&path("tunnels/erspan2-stripped-tag.pcap"), &[&AUDIT[..], &["--no-erspan-cos"]].concat());
    assert_eq!(untagged(&demo), 117);
    assert_eq!(untagged(&off), 138, "{}", off["audit"]);
    assert!(off["points"][0].get("pcp_from_erspan").is_none());
    // ERSPAN II with En = 3 (the tag kept in the frame) and type I: the frame's own tag only.
    for e in ["erspan1", "erspan2"] {
        let (r, _) = report(&path(&format!("tunnels/demo-{e}.pcap")), &AUDIT);
        assert!(r["points"][0].get("pcp_from_erspan").is_none(), "{e}");
    }
}

/// VXLAN as the fabric's transport (frames both ways between two VTEPs), captured on a leaf's
/// link to the spine: the underlay's outer CE marks count and are answered by CNPs, the
/// spine's pause is judged on the outer MACs (the leaf sends through it), the outer DSCP is
/// audited with --expect-outer-dscp, and the VTEP pair is reported. The demo wrapped in VXLAN
/// towards a collector (one way) stays a mirror session.
#[test]
fn a_vxlan_overlay_is_judged_on_its_outer_headers() {
    let e: Value = serde_json::from_slice(
        &std::fs::read(common::root().join("samples/tunnels/overlay-vxlan.expected.json")).unwrap(),
    )
    .unwrap();
    let file = path("tunnels/overlay-vxlan.pcap");
    let (r, rc) = report(&file, &["--expect-outer-dscp", "26,48"]);
    assert_eq!(rc, Some(3), "an outer DSCP violation fails the audit");
    let ov = r["overlay"].as_array().expect("overlay pairs");
    assert_eq!(ov.len(), 1);
    assert_eq!(
        (ov[0]["vtep_a"].as_str(), ov[0]["vtep_b"].as_str()),
        (e["vteps"][0].as_str(), e["vteps"][1].as_str())
    );
    assert_eq!(ov[0]["outer_ce"], e["outer_ce"]);
    let f = &r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x502).unwrap();
    assert_eq!(f["ecn"]["ce"], e["outer_ce"], "outer CE marks count as CE");
    let kinds = kinds(&r);
    assert!(kinds.contains(&"congestion".to_string()), "{kinds:?}");
    assert!(!kinds.contains(&"ce_without_cnp".to_string()), "the CNPs answer them: {kinds:?}");
    let p = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "pause_ignored")
        .expect("pause_ignored");
    assert_eq!(
        (p["severity"].as_str(), p["src_mac"].as_str()),
        (Some("critical"), e["pausing_mac"].as_str())
    );
    assert_eq!(p["weight"], e["ignored"]);
    assert_eq!(p["evidence"][0]["frame"], e["pause_frame"]);
    let v: Vec<&Value> =
        r["audit"]["violations"].as_array().unwrap().iter().filter(|v| v["what"] == "outer_dscp").collect();
    assert_eq!(v.len(), 1, "{:#}", r["audit"]);
    assert_eq!(
        (v[0]["seen"].as_u64(), v[0]["packets"].as_u64()),
        (Some(0), e["outer_dscp_zero_frames"].as_u64())
    );
    assert_eq!(r["audit"]["expected"]["outer_dscps"], serde_json::json!([26, 48]));
    // One capture point: the VNI made none of its own.
    assert_eq!(r["points"].as_array().unwrap().len(), 1);
    // The one-way VXLAN mirror of the demo has no overlay.
    let (m, _) = report(&path("tunnels/demo-vxlan.pcap"), &[]);
    assert!(m.get("overlay").is_none(), "{:#}", m["overlay"]);
    let text = String::from_utf8_lossy(&run(&["report", "-r", &file]).stdout).into_owned();
    assert!(text.contains("OVERLAY (1 VTEP pair(s)") && text.contains("10.1.0.1 ⇄ 10.1.0.2"), "{text}");
}

/// Frames held back while an ERSPAN III switch clock is checked are never dropped silently:
/// a report built mid-capture counts them (`summary.frames_held`), and `finish` analyses them.
#[test]
fn frames_held_for_a_clock_check_are_counted_until_analysed() {
    use rocescope_capture::CaptureReader;
    use rocescope_decoder::{decode, DecodeOptions};
    let path = common::root().join("samples/tunnels/erspan3-wrong-clock.pcap");
    let opts = DecodeOptions::default();
    let mut a = rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default());
    let mut r = CaptureReader::open(&path).unwrap();
    // The first 10 frames: well inside the check's 2 ms.
    for n in 1..=10u64 {
        let rec = r.next_record().unwrap().expect("a frame");
        let p = decode(rec.link_type, rec.data, &opts);
        a.push_frame(n, &rec, &p, &opts);
    }
    let mid = a.report();
    assert_eq!(mid.summary.frames_held, 10);
    assert_eq!(mid.summary.roce, 0, "held frames are not analysed yet");
    a.finish();
    let done = a.report();
    assert_eq!(done.summary.frames_held, 0);
    assert_eq!(done.summary.packets, 10);
    let json = serde_json::to_value(&done).unwrap();
    assert!(json["summary"].get("frames_held").is_none(), "absent at 0");
}
