//! The report's JSON reads back into `rocescope_model::Report` (issue 39, "the house": the
//! data model is a crate a library user depends on to read rocescope's reports) and writes
//! back as it was: every sample's `report --json`, every real capture's, and runs that fill
//! the optional sections (NIC counters, NCCL settings, a time window, sampling and sFlow,
//! ECMP prediction and uplinks, merged capture points, a QoS audit, pcapng capture counters,
//! a switch clock, an input cut short). Written back the way `report --json` writes (the
//! time twins added on the way), each document is the same bytes.

mod common;

use rocescope_model::Report;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn report(args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .current_dir(common::root())
        .arg("report")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(!o.stdout.is_empty(), "report {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// Read `doc` into the model and write it back: the same bytes (and so the same value).
/// Returns the document, for the sections it fills.
fn round_trip(what: &str, doc: &[u8]) -> Value {
    let doc = doc.strip_suffix(b"\n").unwrap_or(doc);
    let value: Value = serde_json::from_slice(doc).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
    let report: Report =
        serde_json::from_slice(doc).unwrap_or_else(|e| panic!("{what}: does not read as a Report: {e}"));
    let back = rocescope_output::json::to_vec(&report).unwrap();
    let again: Value = serde_json::from_slice(&back).unwrap();
    assert!(again == value, "{what}: read and written back, the document is another value");
    if back != doc {
        let at = back.iter().zip(doc).position(|(a, b)| a != b).unwrap_or(back.len().min(doc.len()));
        let around = |d: &[u8]| {
            String::from_utf8_lossy(&d[at.saturating_sub(60)..(at + 60).min(d.len())]).into_owned()
        };
        panic!(
            "{what}: written back, other bytes at {at}:\n  back: {}\n  was:  {}",
            around(&back),
            around(doc)
        );
    }
    value
}

/// The optional parts of a report that `doc` fills.
fn filled(doc: &Value) -> BTreeSet<&'static str> {
    let mut s = BTreeSet::new();
    let non_empty = |v: &Value| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty));
    for key in
        ["counters", "nccl", "sampled", "sflow", "rhythm", "overlay", "input_errors", "between", "incast"]
    {
        if non_empty(&doc[key]) {
            s.insert(key);
        }
    }
    for (key, v) in [
        ("summary.window", &doc["summary"]["window"]),
        ("summary.capture_quality", &doc["summary"]["capture_quality"]),
        ("ecmp.prediction", &doc["ecmp"]["prediction"]),
        ("ecmp.uplinks", &doc["ecmp"]["uplinks"]),
        ("counters.nic_drops", &doc["counters"]["nic_drops"]),
        ("audit.violations", &doc["audit"]["violations"]),
    ] {
        if non_empty(v) {
            s.insert(key);
        }
    }
    let points = doc["points"].as_array().into_iter().flatten();
    for p in points {
        for key in ["capture_counters", "clock", "session", "marks"] {
            if non_empty(&p[key]) {
                s.insert(match key {
                    "capture_counters" => "points.capture_counters",
                    "clock" => "points.clock",
                    "session" => "points.session",
                    _ => "points.marks",
                });
            }
        }
    }
    let flows = doc["flows"].as_array().into_iter().flatten();
    for f in flows {
        if non_empty(&f["cc"]) {
            s.insert("flows.cc");
        }
        if non_empty(&f["psn"]["stall"]) {
            s.insert("flows.psn.stall");
        }
    }
    s
}

#[test]
fn every_sample_reads_back_as_it_was_written() {
    let files = common::pcaps_under(&common::root().join("samples"));
    assert!(files.len() > 40, "{}", files.len());
    let mut seen = BTreeSet::new();
    for f in &files {
        let path = f.to_str().unwrap();
        seen.extend(filled(&round_trip(path, &report(&["-r", path]))));
    }
    let s = |p: &str| common::root().join("samples").join(p).to_str().unwrap().to_string();
    let cut = tempfile::NamedTempFile::new().unwrap();
    let demo = std::fs::read(s("demo.pcap")).unwrap();
    std::fs::write(cut.path(), &demo[..5000]).unwrap();
    let nccl = s("nccl/nccl-job.pcap");
    let runs: Vec<Vec<String>> = vec![
        // NIC counters, two snapshots, a host: the rows and the drops beyond the point.
        vec![
            "-r".into(),
            s("nak-beyond.pcap"),
            "--counters".into(),
            s("counters/nak-beyond-responder.txt"),
            "--counters-host".into(),
            "10.0.0.52".into(),
        ],
        vec!["-r".into(), s("capture/demo-isb.pcapng"), "--counters".into(), s("counters/disagree.txt")],
        vec!["-r".into(), nccl, "--nccl-env".into(), s("nccl/nccl-job.mismatch.env")],
        vec![
            "-r".into(),
            s("demo.pcap"),
            "--from".into(),
            "+0.001s".into(),
            "--sample-rate".into(),
            "4".into(),
        ],
        vec![
            "-r".into(),
            s("demo.pcap"),
            "--expect-dscp".into(),
            "26".into(),
            "--lossless".into(),
            "3".into(),
        ],
        vec!["-r".into(), s("ecmp/low-entropy.pcap"), "--ecmp-paths".into(), "4".into()],
        vec![
            "-r".into(),
            s("ecmp/uplink1.pcap"),
            "-r".into(),
            s("ecmp/uplink2.pcap"),
            "-r".into(),
            s("ecmp/uplink3.pcap"),
            "-r".into(),
            s("ecmp/uplink4.pcap"),
            "--uplinks".into(),
            "uplink1,uplink2,uplink3,uplink4".into(),
        ],
        vec!["-r".into(), s("two-points-sender.pcap"), "-r".into(), s("two-points-receiver.pcap")],
        vec!["-r".into(), cut.path().to_str().unwrap().to_string()],
    ];
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        seen.extend(filled(&round_trip(&format!("report {args:?}"), &report(&args))));
    }
    let want = [
        "counters",
        "counters.nic_drops",
        "nccl",
        "sampled",
        "sflow",
        "rhythm",
        "overlay",
        "input_errors",
        "between",
        "incast",
        "summary.window",
        "ecmp.prediction",
        "ecmp.uplinks",
        "audit.violations",
        "points.capture_counters",
        "points.clock",
        "points.session",
        "points.marks",
        "flows.cc",
    ];
    let missing: Vec<&str> = want.iter().copied().filter(|k| !seen.contains(k)).collect();
    assert!(missing.is_empty(), "no document filled {missing:?}: the round trip does not cover them");
}

#[test]
fn every_real_capture_reads_back_as_it_was_written() {
    let Some(dir) = common::real_captures() else { return };
    let files = common::captures_in(&dir);
    assert!(!files.is_empty());
    let mut seen = BTreeSet::new();
    for f in &files {
        let path = f.to_str().unwrap();
        seen.extend(filled(&round_trip(path, &report(&["-r", path]))));
    }
    // A stalled QP is in the real captures only (Roce_PacketSize_2400_stall.pcapng).
    assert!(seen.contains("flows.psn.stall"), "{seen:?}");
}

/// The analyzer's report is the model's type: what `Analyzer::report` builds is what the
/// JSON reads back into, and the schema the crate carries is the one in docs/.
#[test]
fn the_analyzer_builds_the_models_report() {
    let a = common::analyse(&common::root().join("samples/demo.pcap"), 0, 1);
    let built: rocescope_model::Report = a.report();
    let doc = rocescope_output::json::to_vec(&built).unwrap();
    let back: Report = serde_json::from_slice(&doc).unwrap();
    assert_eq!(back.flows.len(), built.flows.len());
    assert_eq!(back.findings.len(), built.findings.len());
    assert_eq!(rocescope_output::json::to_vec(&back).unwrap(), doc);
    let schema = std::fs::read_to_string(common::root().join("docs/report.schema.json")).unwrap();
    assert_eq!(rocescope_model::REPORT_SCHEMA, schema);
    assert_eq!(rocescope_model::SCHEMA_VERSION, rocescope_analyzer::report::SCHEMA_VERSION);
}
