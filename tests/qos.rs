//! The QoS audit's model of a fabric: DSCP→priority maps and trust modes, several data
//! DSCPs, ACK/NAK and CNP classes of their own, untagged RoCE audited against a PCP, and an
//! audit that saw no RoCE. The samples in `samples/qos/` carry the runs their generator
//! worked out (options or baseline file, exit status, every violation); the tests here run
//! them and check what the findings and the text report say about them.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn qos(name: &str) -> PathBuf {
    common::root().join("samples/qos").join(name)
}

fn report(path: &Path, extra: &[&str]) -> (Value, Option<i32>) {
    let mut args = vec!["report", "--json", "-r", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{} {extra:?}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    (common::report_json(&o.stdout), o.status.code())
}

fn text(path: &Path, extra: &[&str]) -> (String, Option<i32>) {
    let mut args = vec!["report", "-r", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    (String::from_utf8_lossy(&o.stdout).into_owned(), o.status.code())
}

fn findings<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

fn kinds(r: &Value) -> Vec<String> {
    r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

/// (what, flow, expected, seen, packets) of every violation, sorted.
fn violations(r: &Value) -> Vec<String> {
    let mut v: Vec<String> = r["audit"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            serde_json::json!([v["what"], v["flow"], v["expected"], v["seen"], v["packets"]]).to_string()
        })
        .collect();
    v.sort();
    v
}

const SONIC: [&str; 13] = [
    "--trust",
    "dscp",
    "--dscp-map",
    "3:3,4:4",
    "--expect-dscp",
    "3,4",
    "--expect-ack-dscp",
    "44",
    "--expect-cnp-dscp",
    "46",
    "--lossless",
    "3,4",
    "--expect-ecn",
];

/// Every run each QoS sample's generator worked out gives its exit status and exactly its
/// violations; the decode-level counts match too.
#[test]
fn qos_samples_give_the_audits_their_generator_worked_out() {
    let mut names: Vec<PathBuf> = common::captures_in(&common::root().join("samples/qos"));
    names.sort();
    assert_eq!(names.len(), 3, "sonic-profile, untagged-pcp, no-roce");
    let dir = tempfile::tempdir().unwrap();
    let mut runs = 0;
    for pcap in names {
        let stem = pcap.file_stem().unwrap().to_str().unwrap().to_string();
        let e: Value =
            serde_json::from_slice(&std::fs::read(qos(&format!("{stem}.expected.json"))).unwrap()).unwrap();
        let c = common::count(&pcap);
        let x = &e["counts"];
        assert_eq!(
            (c.frames, c.roce_v2, c.cnp, c.pfc),
            (
                x["frames"].as_u64().unwrap(),
                x["roce_v2"].as_u64().unwrap(),
                x["cnp"].as_u64().unwrap(),
                x["pfc"].as_u64().unwrap()
            ),
            "{stem}: counts"
        );
        for r in e["audit"].as_array().unwrap() {
            let mut args: Vec<String> =
                r["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
            if let Some(b) = r["baseline"].as_str() {
                let path = dir.path().join(format!("{stem}-{runs}.toml"));
                std::fs::write(&path, b).unwrap();
                args.extend(["--baseline".to_string(), path.to_str().unwrap().to_string()]);
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let (rep, code) = report(&pcap, &argv);
            let about = format!("{stem} {argv:?} ({})", r["about"]);
            assert_eq!(code, r["exit"].as_u64().map(|c| c as i32), "{about}: {:#}", rep["audit"]);
            let mut want: Vec<String> = r["violations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    serde_json::json!([v["what"], v["flow"], v["expected"], v["seen"], v["packets"]])
                        .to_string()
                })
                .collect();
            want.sort();
            assert_eq!(violations(&rep), want, "{about}");
            runs += 1;
        }
    }
    assert!(runs >= 10, "only {runs} runs");
}

/// SONiC-style DSCP 3 → TC 3 with `--lossless 3,4`: RoCE on DSCP 3 is on lossless priority
/// 3, so the pauses there are expected and the deadlock hint (RoCE on priority 3 stops while
/// it is paused) still fires; without the map, the priority is DSCP >> 3 = 0 and the report
/// says so instead of calling priority 3 "not lossless".
#[test]
fn a_dscp_map_puts_roce_on_the_priority_pfc_pauses() {
    let pcap = qos("sonic-profile.pcap");
    let mut args = SONIC.to_vec();
    args.extend(["--deadlock-ms", "5"]);
    let (r, code) = report(&pcap, &args);
    assert_eq!(code, Some(0), "{:#}", r["audit"]);
    let dl = findings(&r, "pfc_deadlock");
    assert_eq!(dl.len(), 1, "{:?}", kinds(&r));
    assert_eq!(dl[0]["priority"], 3);
    assert!(findings(&r, "pause_unused_priority").is_empty());
    let p3 = r["pfc"].as_array().unwrap().iter().find(|p| p["priority"] == 3).unwrap();
    // Priority 3 carries A's data (WRITEs and the READ request) and its READ responses:
    // the flows' packets less A's ACKs and CNP (DSCP 44, 46: unmapped, priority 0).
    let flows = r["flows"].as_array().unwrap();
    let on3: u64 = flows.iter().filter(|f| f["priority"] == 3).map(|f| f["packets"].as_u64().unwrap()).sum();
    assert_eq!(on3, 19, "the WRITE/READ request flow is on priority 3");
    assert_eq!(p3["roce_packets_on_priority"], 19 + 2);
    // The JSON names the model used.
    let x = &r["audit"]["expected"];
    assert_eq!(x["roce_dscps"], serde_json::json!([3, 4]));
    assert_eq!(x["ack_dscps"], serde_json::json!([44]));
    assert_eq!(x["cnp_dscps"], serde_json::json!([46]));
    assert_eq!(x["roce_dscp"], Value::Null, "two data DSCPs: the single-value key is null");
    assert_eq!(x["cnp_dscp"], 46);
    assert_eq!(x["trust"], "dscp");
    let map: Vec<u64> = x["dscp_map"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect();
    assert_eq!(map.len(), 64);
    assert_eq!((map[3], map[4], map[26], map[46]), (3, 4, 0, 0), "unlisted DSCPs map to priority 0");

    // The same capture without the map: no deadlock hint on priority 3 (no RoCE seen there),
    // and the pause finding says why: no RoCE uses priority 3, RoCE is on 0 and 5.
    let (r, code) = report(&pcap, &["--expect-dscp", "3,4", "--lossless", "3,4", "--deadlock-ms", "5"]);
    assert_eq!(code, Some(3));
    assert!(findings(&r, "pfc_deadlock").is_empty(), "{:?}", kinds(&r));
    let f = findings(&r, "pause_unused_priority");
    assert_eq!(f.len(), 1);
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.contains("priority 3") && title.contains("no RoCE traffic uses"), "{title}");
    assert!(title.contains("RoCE is on priorities 0,5"), "{title}");
    assert!(!title.contains("not a lossless"), "{title}");
    let nl = findings(&r, "qos_violation");
    assert!(
        nl.iter()
            .any(|f| f["title"].as_str().unwrap().contains("on priority 0, which is not lossless (3,4)")),
        "{nl:#?}"
    );
    let (t, _) = text(&pcap, &["--expect-dscp", "3,4", "--lossless", "3,4"]);
    assert!(!t.contains("is not a lossless RoCE priority"), "{t}");
    assert!(t.contains("QOS AUDIT (expected RoCE DSCP 3,4, lossless 3,4)"), "{t}");
    let (t, code) = text(&pcap, &SONIC);
    assert_eq!(code, Some(0));
    assert!(
        t.contains("QOS AUDIT (expected RoCE DSCP 3,4, ACK/NAK DSCP 44, CNP DSCP 46, lossless 3,4, ECN-capable data; priority from DSCP, map 3:3,4:4, other DSCPs 0)"),
        "{t}"
    );
    assert!(t.contains("\n  clean\n"), "{t}");
}

/// Untagged RoCE audited against a PCP is its own violation with the reason, never silence.
#[test]
fn untagged_roce_with_a_pcp_expectation_is_not_silent() {
    let pcap = qos("untagged-pcp.pcap");
    let (r, code) = report(&pcap, &["--expect-pcp", "3"]);
    assert_eq!(code, Some(3));
    let f = findings(&r, "pcp_untagged");
    assert_eq!(f.len(), 1, "{:?}", kinds(&r));
    assert_eq!(f[0]["severity"], "warning");
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.starts_with("15 RoCE packets in 2 flows carry no VLAN tag, so no PCP"), "{title}");
    assert!(title.contains("PCP 3 expected"), "{title}");
    assert!(title.contains("DSCP 26 → priority 3"), "{title}");
    // Evidence names the flows' first untagged frames.
    assert_eq!(f[0]["evidence"].as_array().unwrap().len(), 2);
    assert_eq!(f[0]["evidence"][0]["frame"], 1);
    // The tagged connection (PCP 3) is clean: no pcp violation.
    assert!(!r["audit"]["violations"].as_array().unwrap().iter().any(|v| v["what"] == "pcp"));
    let (t, _) = text(&pcap, &["--expect-pcp", "3"]);
    assert!(t.contains("untagged RoCE: pcp_untagged expected 3 seen \"untagged\" on 15"), "{t}");
    assert!(t.contains("1 violation(s): exit status 3"), "{t}");
}

/// An audit that saw no RoCE frame fails (exit status 3) with a finding that says so; with
/// no expectations there is no audit and the exit status stays 0.
#[test]
fn an_audit_of_a_capture_without_roce_fails() {
    let pcap = qos("no-roce.pcap");
    let (r, code) = report(&pcap, &["--expect-dscp", "26"]);
    assert_eq!(code, Some(3));
    let f = findings(&r, "audit_no_roce");
    assert_eq!(f.len(), 1, "{:?}", kinds(&r));
    let title = f[0]["title"].as_str().unwrap();
    assert!(title.starts_with("the QoS audit checked nothing: no RoCE frame among the 4 frames"), "{title}");
    assert_eq!(
        run(&["report", "-q", "-r", pcap.to_str().unwrap(), "--expect-pcp", "3"]).status.code(),
        Some(3)
    );
    assert_eq!(run(&["report", "-q", "-r", pcap.to_str().unwrap()]).status.code(), Some(0));
    // An empty capture (a pcap header and no record) too.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pcap");
    let mut hdr = Vec::new();
    for w in [
        0xa1b2_c3d4u32.to_le_bytes(),
        [2, 0, 4, 0],
        [0; 4],
        [0; 4],
        65535u32.to_le_bytes(),
        1u32.to_le_bytes(),
    ] {
        hdr.extend_from_slice(&w);
    }
    std::fs::write(&empty, &hdr).unwrap();
    let (r, code) = report(&empty, &["--lossless", "3"]);
    assert_eq!(code, Some(3));
    let v = &r["audit"]["violations"][0];
    assert_eq!(
        (v["what"].as_str(), v["packets"].as_u64(), v["first_frame"].as_u64()),
        (Some("no_roce"), Some(0), Some(0))
    );
    let (t, _) = text(&empty, &["--lossless", "3"]);
    assert!(t.contains("the capture: no_roce expected \"RoCE\" seen 0"), "{t}");
}

/// The new options refuse what they cannot mean, and so does the baseline file; the old
/// baseline keys (single values) still work.
#[test]
fn maps_trust_and_class_lists_are_validated() {
    let pcap = qos("sonic-profile.pcap");
    let p = pcap.to_str().unwrap();
    for bad in [
        ["--dscp-map", "3:8"],
        ["--dscp-map", "64:1"],
        ["--dscp-map", "3-3"],
        ["--dscp-map", "3:3,3:4"],
        ["--trust", "cos"],
        ["--expect-dscp", "3,64"],
        ["--expect-ack-dscp", "x"],
        ["--expect-cnp-dscp", "70"],
    ] {
        let o = run(&["report", "-q", "-r", p, bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("fabric.toml");
    for (toml, err) in [
        ("dscp_map = { 70 = 1 }\n", "DSCP 70"),
        ("dscp_map = { 3 = 9 }\n", "priority 9"),
        ("dscp_map = \"3:3,x\"\n", "not DSCP:PRIORITY"),
        ("trust = \"cos\"\n", "unknown variant"),
        ("roce_dscp = [3, 99]\n", "roce_dscp"),
        ("lossless_priorities = [3, 8]\n", "lossless_priorities"),
        ("ack_dscps = [44]\n", "unknown field"),
    ] {
        std::fs::write(&base, toml).unwrap();
        let o = run(&["report", "-q", "-r", p, "--baseline", base.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{toml}: {stderr}");
        assert!(stderr.contains(err), "{toml}: {stderr}");
    }
    // The string form of the map, single values for the old keys, and flags over the file.
    std::fs::write(
        &base,
        "trust = \"dscp\"\ndscp_map = \"3:3,4:4\"\nroce_dscp = 26\nack_dscp = [44]\ncnp_dscp = 46\nlossless_priorities = [3, 4]\n",
    )
    .unwrap();
    let (r, code) = report(&pcap, &["--baseline", base.to_str().unwrap(), "--expect-dscp", "3,4"]);
    assert_eq!(code, Some(0), "{:#}", r["audit"]);
    assert_eq!(r["audit"]["expected"]["roce_dscps"], serde_json::json!([3, 4]));
    let (r, code) = report(&pcap, &["--baseline", base.to_str().unwrap()]);
    assert_eq!(code, Some(3));
    assert_eq!(r["audit"]["expected"]["roce_dscp"], 26);
    assert!(r["audit"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v["what"] == "dscp" && v["expected"] == 26));
    // --trust pcp on the command line overrides the file's dscp: B's PCP 0 is priority 0.
    let (r, _) =
        report(&pcap, &["--baseline", base.to_str().unwrap(), "--expect-dscp", "3,4", "--trust", "pcp"]);
    let v = &r["audit"]["violations"];
    assert_eq!(v.as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(
        (v[0]["what"].as_str(), v[0]["flow"]["dest_qp"].as_u64()),
        (Some("not_lossless"), Some(0x632))
    );
}

/// The baseline files docs/report-json.md shows are valid, and the SONiC one passes the
/// SONiC sample.
#[test]
fn the_documented_baselines_parse() {
    let doc = std::fs::read_to_string(common::root().join("docs/report-json.md")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "```toml" {
            blocks.push(lines.by_ref().take_while(|b| !b.starts_with("```")).collect::<Vec<_>>().join("\n"));
        }
    }
    assert!(blocks.len() >= 2, "the DSCP 26 and the SONiC examples");
    let dir = tempfile::tempdir().unwrap();
    let pcap = qos("sonic-profile.pcap");
    for (i, b) in blocks.iter().enumerate() {
        let path = dir.path().join(format!("{i}.toml"));
        std::fs::write(&path, b).unwrap();
        let o = run(&["report", "-q", "-r", pcap.to_str().unwrap(), "--baseline", path.to_str().unwrap()]);
        let want = if b.contains("sonic") { 0 } else { 3 };
        assert_eq!(o.status.code(), Some(want), "{b}\n{}", String::from_utf8_lossy(&o.stderr));
    }
}
