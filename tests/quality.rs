//! What the report says before any verdict on the fabric (docs/verdicts.md "Capture
//! quality", "Marking without expectations"): a capture holding a small share of its traffic
//! is said once, at the top, in the text, the JSON and compare; an audit with nothing
//! expected is "not audited", and marking that disagrees with itself is a finding.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).arg(file).output().expect("run rocescope")
}

fn sample(name: &str) -> std::path::PathBuf {
    common::root().join("samples").join(format!("{name}.pcap"))
}

fn report(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["report", "--json", "--findings-per-kind", "0"];
    args.extend_from_slice(extra);
    args.push("-r");
    let o = run(&args, file);
    // 3: the audit failed (with --expect-*), which some of these runs are about.
    let code = if extra.iter().any(|a| a.starts_with("--expect")) { 3 } else { 0 };
    assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn text(file: &Path, extra: &[&str]) -> String {
    let mut args = vec!["report"];
    args.extend_from_slice(extra);
    args.push("-r");
    String::from_utf8(run(&args, file).stdout).unwrap()
}

fn kinds<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

#[test]
fn a_capture_holding_a_small_share_says_so_once_at_the_top() {
    let f = sample("sampled-capture");
    let r = report(&f, &[]);
    let q = &r["summary"]["capture_quality"];
    // 4 QPs x 20 packets kept of 160 PSNs; 19 gaps of 7 PSNs each before the kept ones.
    assert_eq!(
        (q["psns_seen"].as_u64(), q["psns_missing"].as_u64(), q["flows"].as_u64()),
        (Some(80), Some(532), Some(4))
    );
    let share = q["share"].as_f64().unwrap();
    assert!((share - 80.0 / 612.0).abs() < 1e-9, "{share}");
    // One capture-wide finding, not one per QP; each flow keeps its counters.
    let cl = kinds(&r, "capture_loss");
    assert_eq!(cl.len(), 1, "{:#}", r["findings"]);
    assert!(cl[0]["flow"].is_null());
    assert!(cl[0]["title"].as_str().unwrap().starts_with("76 PSN gaps on 4 QPs"), "{}", cl[0]["title"]);
    assert_eq!(cl[0]["evidence"].as_array().unwrap().len(), 3);
    let gaps: Vec<u64> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["psn"]["tracked"] == true)
        .map(|f| f["psn"]["capture_loss_gaps"].as_u64().unwrap())
        .collect();
    assert_eq!(gaps, [19, 19, 19, 19]);
    let t = text(&f, &[]);
    let head: Vec<&str> = t.lines().take(4).collect();
    assert!(
        head.iter().any(|l| l.starts_with("  CAPTURE QUALITY: the capture holds about 13% of this traffic")
            && l.ends_with("treat rates and latencies as sampled")),
        "{t}"
    );
    // A capture that holds everything says nothing of it.
    let full = report(&sample("rc-normal"), &[]);
    assert!(full["summary"].get("capture_quality").is_none());
    assert!(!text(&sample("rc-normal"), &[]).contains("CAPTURE QUALITY"));
}

#[test]
fn compare_says_which_side_holds_a_small_share() {
    let f = sample("sampled-capture");
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["compare", "--json"])
        .arg(sample("rc-normal"))
        .arg(&f)
        .output()
        .unwrap();
    let c = common::compare_json(&o.stdout);
    let v: Vec<&Value> =
        c["verdicts"].as_array().unwrap().iter().filter(|v| v["kind"] == "side_capture_quality").collect();
    assert_eq!(v.len(), 1, "{:#}", c["verdicts"]);
    assert_eq!(v[0]["severity"], "info");
    assert!(
        v[0]["title"].as_str().unwrap().starts_with("the AFTER capture holds about 13%"),
        "{}",
        v[0]["title"]
    );
    assert!(c["before"].get("capture_share").is_none());
    assert!((c["after"]["capture_share"].as_f64().unwrap() - 80.0 / 612.0).abs() < 1e-9);
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .arg("compare")
        .arg(sample("rc-normal"))
        .arg(&f)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("holds ~13% of its traffic"), "{t}");
}

#[test]
fn an_audit_with_nothing_expected_is_not_audited_and_flags_ends_that_disagree() {
    let f = sample("marking-ends");
    let r = report(&f, &[]);
    assert_eq!(r["audit"]["audited"], false);
    let m = kinds(&r, "marking_inconsistent");
    assert_eq!(m.len(), 1, "{:#}", r["findings"]);
    assert_eq!(m[0]["severity"], "warning");
    assert_eq!(
        m[0]["title"].as_str().unwrap().split(';').next().unwrap(),
        "the two ends of 6 connections mark differently: 10.0.0.73 sends DSCP 26 (priority 3), 10.0.0.74 sends DSCP 0 (priority 0)"
    );
    let t = text(&f, &[]);
    assert!(t.contains("  not audited: nothing expected"), "{t}");
    assert!(!t.contains("\n  clean"), "{t}");
    // With an expectation the audit names the offending flows and this check stands aside.
    let r = report(&f, &["--expect-dscp", "26"]);
    assert_eq!(r["audit"]["audited"], true);
    assert!(kinds(&r, "marking_inconsistent").is_empty());
    assert!(!kinds(&r, "qos_violation").is_empty());
    // A healthy sample's marking is consistent, and said to be.
    let t = text(&sample("rc-normal"), &[]);
    assert!(t.contains("marking consistent (not audited: no expectations)"), "{t}");
    assert!(kinds(&report(&sample("rc-normal"), &[]), "marking_inconsistent").is_empty());
}

#[test]
fn a_host_unlike_the_rest_is_named() {
    // qos-mismatch: 2 of 8 hosts send on DSCP 0 where the others use 26.
    let r = report(&sample("qos-mismatch"), &[]);
    let m = kinds(&r, "marking_inconsistent");
    assert_eq!(m.len(), 1, "{:#}", r["findings"]);
    let t = m[0]["title"].as_str().unwrap();
    assert!(t.starts_with("2 of 8 hosts mark their RoCE differently from the other 6, which use DSCP 26 (priority 3): 10.0.0.9 (DSCP 0 (priority 0)), 10.0.0.10 (DSCP 0 (priority 0))"), "{t}");
}

#[test]
fn the_real_ibdump_capture_reads_as_sampled_and_its_ends_disagree() {
    let Some(dir) = common::real_captures() else { return };
    let r = report(&dir.join("rocev2_test.pcap"), &[]);
    let q = &r["summary"]["capture_quality"];
    assert_eq!(
        (q["psns_seen"].as_u64(), q["psns_missing"].as_u64(), q["flows"].as_u64()),
        (Some(533), Some(6912), Some(32))
    );
    assert_eq!(kinds(&r, "capture_loss").len(), 1);
    let m = kinds(&r, "marking_inconsistent");
    assert_eq!(m.len(), 1);
    assert!(m[0]["title"].as_str().unwrap().starts_with("the two ends of 16 connections mark differently: 172.17.242.47 sends DSCP 0 (priority 0), 172.17.242.56 sends DSCP 26 (priority 3)"));
}
