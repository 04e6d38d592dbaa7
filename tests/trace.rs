//! `rocescope report --trace FILE` end to end: the trace validates against
//! docs/trace.schema.json (the Trace Event Format's JSON Object Format), and what it holds is
//! the report's: a process per capture point, a thread per flow, as many resend, NAK, ACK
//! timeout and CNP instants as the report counts (flow by flow), a message slice per message,
//! and the first event at the capture's start. On demo.pcap, every other sample, a fabric of
//! four merged capture points and the real captures.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

/// `report --json --trace` of `files` (merged when several): the report, the trace, and the
/// run's standard error.
fn traced(files: &[PathBuf], extra: &[&str]) -> (Value, Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    let mut cmd = bin();
    cmd.args(["report", "--json", "--fail-on", "never", "--trace", path.to_str().unwrap()]);
    for f in files {
        cmd.arg("-r").arg(f);
    }
    let o = cmd.args(extra).output().expect("run rocescope");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{files:?}: {stderr}");
    let report = common::report_json(&o.stdout);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{files:?}: no trace: {e}: {stderr}"));
    let trace: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{files:?}: trace JSON: {e}"));
    (report, trace, text, stderr)
}

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let text = std::fs::read_to_string(common::root().join("docs/trace.schema.json")).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        jsonschema::validator_for(&schema).expect("a valid JSON Schema")
    })
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The events of phase `ph` (and category `cat`, when given).
fn events<'a>(trace: &'a Value, ph: &str, cat: Option<&str>) -> Vec<&'a Value> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == ph && cat.is_none_or(|c| e["cat"] == c))
        .collect()
}

/// The thread of flow 0 (docs/trace.md).
const TID_BASE: u64 = 100_000;

/// Per thread (TID_BASE + flow id), how many of `evs`.
fn per_tid(evs: &[&Value]) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for e in evs {
        *m.entry(u(&e["tid"])).or_insert(0) += 1;
    }
    m
}

/// Per thread, what `count` says of each flow of the report (flows with none left out).
fn per_flow(report: &Value, count: impl Fn(&Value) -> u64) -> BTreeMap<u64, u64> {
    report["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| Some((u(&f["id"]) + TID_BASE, count(f))).filter(|(_, n)| *n > 0))
        .collect()
}

/// Everything a trace must say of its report (`what` names the capture in messages).
fn check(what: &str, report: &Value, trace: &Value, text: &str) {
    let errors: Vec<String> =
        validator().iter_errors(trace).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: the trace does not validate: {errors:?}");
    // The phases rocescope writes, and nothing past the cap.
    for e in trace["traceEvents"].as_array().unwrap() {
        assert!(["M", "X", "i", "C"].contains(&e["ph"].as_str().unwrap()), "{what}: {e}");
    }
    assert_eq!(trace["otherData"]["dropped_total"], 0, "{what}");
    // A process per capture point, named after it.
    let names = events(trace, "M", None);
    let processes: Vec<&&Value> = names.iter().filter(|e| e["name"] == "process_name").collect();
    let points = report["points"].as_array().unwrap();
    assert_eq!(processes.len(), points.len(), "{what}: a process per point");
    for (i, p) in points.iter().enumerate() {
        let proc = processes.iter().find(|e| u(&e["pid"]) == i as u64 + 1).expect("the point's process");
        assert_eq!(proc["args"]["name"], p["name"], "{what}");
    }
    // A thread per flow, in its point's process, named after its QP and addresses.
    let threads: Vec<&&Value> = names.iter().filter(|e| e["name"] == "thread_name").collect();
    let flows = report["flows"].as_array().unwrap();
    assert_eq!(threads.len(), flows.len(), "{what}: a thread per flow");
    for f in flows {
        let tid = u(&f["id"]) + TID_BASE;
        let t = threads.iter().find(|e| u(&e["tid"]) == tid).expect("the flow's thread");
        assert_eq!(u(&t["pid"]), u(&f["point"]) + 1, "{what}: flow {tid} is at its point");
        let name = t["args"]["name"].as_str().unwrap();
        let want = format!(
            "QP {:#x} {} \u{2192} {}",
            u(&f["dest_qp"]),
            f["src"].as_str().unwrap(),
            f["dst"].as_str().unwrap()
        );
        assert_eq!(name, want, "{what}");
    }
    // Instants: the report's counts, flow by flow.
    let resends = events(trace, "i", Some("resend"));
    assert_eq!(per_tid(&resends), per_flow(report, |f| u(&f["psn"]["retransmits"])), "{what}: resends");
    let total: u64 = flows.iter().map(|f| u(&f["psn"]["retransmits"])).sum();
    assert_eq!(resends.len() as u64, total, "{what}");
    let causes = [
        ("timeout", "retransmits_timeout"),
        ("implied_nak", "retransmits_implied"),
        ("unknown", "retransmits_unknown"),
        ("rnr_nak", "retransmits_rnr"),
        ("spurious_nak", "retransmits_spurious"),
    ];
    for (cause, key) in causes {
        let n = resends.iter().filter(|e| e["args"]["cause"] == cause).count() as u64;
        let want: u64 = flows.iter().map(|f| u(&f["psn"][key])).sum();
        assert_eq!(n, want, "{what}: resends by {cause}");
    }
    let syndromes = [
        "psn_seq_err",
        "invalid_request",
        "remote_access",
        "remote_operational",
        "invalid_rd",
        "other",
        "rnr",
    ];
    let naks = events(trace, "i", Some("nak"));
    assert_eq!(
        per_tid(&naks),
        per_flow(report, |f| syndromes.iter().map(|s| u(&f["naks"][s])).sum()),
        "{what}: NAKs"
    );
    for s in syndromes {
        let n = naks.iter().filter(|e| e["args"]["syndrome"] == s).count() as u64;
        let want: u64 = flows.iter().map(|f| u(&f["naks"][s])).sum();
        assert_eq!(n, want, "{what}: NAKs {s}");
    }
    let cnps = events(trace, "i", Some("cnp"));
    assert_eq!(per_tid(&cnps), per_flow(report, |f| u(&f["cnps"])), "{what}: CNPs");
    assert_eq!(cnps.len() as u64, u(&report["summary"]["cnps"]), "{what}: CNPs");
    let timeouts = events(trace, "i", Some("timeout"));
    assert_eq!(
        per_tid(&timeouts),
        per_flow(report, |f| u(&f["psn"]["timeout_events"])),
        "{what}: ACK timeouts"
    );
    // A complete slice per message (the report's Last and Only packets, ACKs aside).
    let slices = events(trace, "X", Some("message"));
    let complete: Vec<&Value> = slices.iter().copied().filter(|e| e["args"]["complete"] == true).collect();
    assert_eq!(per_tid(&complete), per_flow(report, |f| u(&f["messages"])), "{what}: messages");
    for s in &slices {
        assert!(s["dur"].as_f64().unwrap() >= 0.0 && u(&s["args"]["packets"]) >= 1, "{what}: {s}");
        assert!(u(&s["args"]["frame"]) >= 1, "{what}: {s}");
    }
    // The counts the document gives of itself.
    let other = &trace["otherData"]["events"];
    assert_eq!(u(&other["resends"]), resends.len() as u64, "{what}");
    assert_eq!(u(&other["messages"]), complete.len() as u64, "{what}");
    // The first event is at the capture's start, in µs since the epoch, exactly as text.
    let start = report["summary"]["start_ns"].as_i64().expect("a start");
    let first = &trace["traceEvents"][0];
    let want = start as f64 / 1000.0;
    assert!((first["ts"].as_f64().unwrap() - want).abs() < 0.5, "{what}: first event {first}, start {start}");
    let exact = format!("\"ts\":{}.{:03}", start / 1000, start % 1000);
    let at = text.find("\"ts\":").expect("a ts");
    assert!(text[at..].starts_with(&exact), "{what}: {} vs {exact}", &text[at..at + 30]);
    // No event before it, none after the capture's end (a slice ends by it too).
    let end = report["summary"]["end_ns"].as_i64().unwrap() as f64 / 1000.0;
    for e in trace["traceEvents"].as_array().unwrap() {
        let ts = e["ts"].as_f64().unwrap();
        let last = ts + e["dur"].as_f64().unwrap_or(0.0);
        assert!(ts >= want - 0.5 && last <= end + 0.5, "{what}: {e} outside {want}..{end}");
    }
}

#[test]
fn demo_trace_holds_the_reports_events() {
    let (report, trace, text, stderr) = traced(&[sample("demo.pcap")], &[]);
    check("demo.pcap", &report, &trace, &text);
    // demo.pcap has every kind of instant; the counters chart its points' throughput and
    // the PFC storm's paused time.
    for cat in ["resend", "nak", "cnp", "timeout"] {
        assert!(!events(&trace, "i", Some(cat)).is_empty(), "demo.pcap has {cat} instants");
    }
    let counters = events(&trace, "C", None);
    assert!(counters.iter().any(|c| c["name"] == "RoCE bytes/s"
        && c["args"].as_object().unwrap().values().any(|v| v.as_f64().unwrap() > 0.0)));
    assert!(counters.iter().any(|c| c["name"] == "paused us/s"
        && c["args"].as_object().unwrap().values().any(|v| v.as_f64().unwrap() > 0.0)));
    assert!(stderr.contains("rocescope: wrote ") && stderr.contains(" resends"), "{stderr}");
}

/// Every single-file sample, one after another (the cases each kind of event comes from).
#[test]
fn every_sample_trace_holds_its_reports_events() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::root().join("samples"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    files.sort();
    assert!(files.len() > 20);
    let mut seen = BTreeMap::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let (report, trace, text, _) = traced(std::slice::from_ref(f), &[]);
        // A sampled capture's CNP counts stand for its rate: each instant says so.
        if report.get("sampled").is_some() {
            continue;
        }
        check(&name, &report, &trace, &text);
        for cat in ["resend", "nak", "cnp", "timeout"] {
            *seen.entry(cat).or_insert(0) += events(&trace, "i", Some(cat)).len();
        }
    }
    assert!(seen.values().all(|n| *n > 0), "{seen:?}");
}

/// A fabric: four uplinks' captures merged, a process each.
#[test]
fn a_fabric_of_merged_points_has_a_process_per_point() {
    let files: Vec<PathBuf> = (1..=4).map(|i| sample(&format!("ecmp/uplink{i}.pcap"))).collect();
    let (report, trace, text, _) = traced(&files, &[]);
    assert_eq!(report["points"].as_array().unwrap().len(), 4);
    check("ecmp uplinks", &report, &trace, &text);
    // Each point charts its own throughput.
    let pids: std::collections::BTreeSet<u64> = events(&trace, "C", None)
        .iter()
        .filter(|c| c["name"] == "RoCE bytes/s")
        .map(|c| u(&c["pid"]))
        .collect();
    assert_eq!(pids, (1..=4).collect());
    let (report, trace, text, _) =
        traced(&[sample("two-points-sender.pcap"), sample("two-points-receiver.pcap")], &[]);
    check("two points", &report, &trace, &text);
}

/// A report on several threads is the single-threaded one: so is its trace.
#[test]
fn a_parallel_report_has_the_same_trace() {
    let (one, t1, _, _) = traced(&[sample("demo.pcap")], &["--threads", "1"]);
    let (two, t2, text, _) = traced(&[sample("demo.pcap")], &["--threads", "3"]);
    assert_eq!(one, two);
    assert_eq!(t1["traceEvents"], t2["traceEvents"]);
    check("demo.pcap --threads 3", &two, &t2, &text);
}

#[test]
fn real_captures_traces_hold_their_reports_events() {
    let Some(dir) = common::real_captures() else { return };
    let mut slices = 0;
    for path in common::captures_in(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (report, trace, text, _) = traced(std::slice::from_ref(&path), &[]);
        if report["summary"]["start_ns"].is_null() {
            continue;
        }
        check(&name, &report, &trace, &text);
        slices += events(&trace, "X", None).len();
    }
    assert!(slices > 100, "the real captures' messages are slices: {slices}");
}

/// Past --trace-max-events the events are counted, by kind, in the trace and on stderr:
/// nothing is lost unsaid.
#[test]
fn the_cap_counts_what_it_leaves_out() {
    let (report, full, _, _) = traced(&[sample("demo.pcap")], &[]);
    let (_, capped, _, stderr) = traced(&[sample("demo.pcap")], &["--trace-max-events", "10"]);
    let kept =
        capped["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X" || e["ph"] == "i").count();
    assert_eq!(kept, 10);
    let all =
        full["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X" || e["ph"] == "i").count();
    let dropped = u(&capped["otherData"]["dropped_total"]);
    assert_eq!(dropped as usize, all - 10);
    let by_kind: u64 = capped["otherData"]["dropped"].as_object().unwrap().values().map(u).sum();
    assert_eq!(by_kind, dropped);
    // Kept and dropped together are the report's.
    let resends: u64 = report["flows"].as_array().unwrap().iter().map(|f| u(&f["psn"]["retransmits"])).sum();
    assert_eq!(
        u(&capped["otherData"]["events"]["resends"]) + u(&capped["otherData"]["dropped"]["resends"]),
        resends
    );
    assert!(stderr.contains(&format!("{dropped} events past --trace-max-events not written")), "{stderr}");
    assert!(validator().is_valid(&capped));
}

/// Standard input cannot be read twice: a usage error before anything is read, naming why.
#[test]
fn a_trace_of_standard_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    let o: Output = bin()
        .args(["report", "-q", "-r", "-", "--trace", path.to_str().unwrap()])
        .stdin(std::fs::File::open(sample("demo.pcap")).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--trace reads the capture a second time") && err.contains("standard input"),
        "{err}"
    );
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file left behind");
}

/// The schema refuses what the format does not allow (it is not a schema that takes anything).
#[test]
fn the_schema_refuses_malformed_events() {
    let v = validator();
    let ok = serde_json::json!({"traceEvents": [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}},
        {"ph": "i", "s": "p", "name": "b", "pid": 1, "ts": 3},
        {"ph": "C", "name": "c", "pid": 1, "ts": 3, "args": {"x": 1}}
    ]});
    assert!(v.is_valid(&ok));
    let bad = [
        serde_json::json!({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1.5}),
        serde_json::json!({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1.5", "dur": 1}),
        serde_json::json!({"ph": "M", "name": "thread_name", "pid": 1, "args": {"name": "t"}}),
        serde_json::json!({"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": "x"}}),
        serde_json::json!({"ph": "i", "name": "b", "pid": 1, "ts": 3}),
        serde_json::json!({"ph": "C", "name": "c", "pid": 1, "ts": 3, "args": {"x": "1"}}),
        serde_json::json!({"ph": "Q", "name": "c", "pid": 1, "ts": 3}),
    ];
    for b in bad {
        assert!(!v.is_valid(&serde_json::json!({ "traceEvents": [b] })), "{b}");
    }
    assert!(!v.is_valid(&serde_json::json!({"events": []})));
}
