//! A document `rocescope report --json` wrote (`tests/data/ecn-cnp.report.json`, of
//! samples/ecn-cnp.pcap) reads into the model and writes back as the same JSON value, less
//! the time twins `report --json` adds to every absolute time (`"ts_ns":..,"ts":"..."`:
//! rocescope-output's writer adds them, serde_json does not). The sections a plain capture
//! leaves out (a live run's counters, an interrupted reading, inputs that failed) read back
//! too, and keys this crate does not know are passed over. (Every sample's and every real
//! capture's document is read back by the workspace's tests/model.rs.)

use rocescope_model::{
    CaptureCounters, FindingKind, Interruption, PauseKind, Report, Severity, Word, SCHEMA_VERSION,
};
use serde_json::Value;

const DOC: &str = include_str!("data/ecn-cnp.report.json");

/// The time twins' names, by the `_ns` key they follow.
const TWINS: [(&str, &str); 5] =
    [("ts_ns", "ts"), ("start_ns", "start"), ("end_ns", "end"), ("first_ns", "first"), ("last_ns", "last")];

/// `v` without the time twins.
fn without_twins(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (ns, twin) in TWINS {
                if m.contains_key(ns) && m.get(twin).is_some_and(|t| t.is_string() || t.is_null()) {
                    m.remove(twin);
                }
            }
            m.values_mut().for_each(without_twins);
        }
        Value::Array(a) => a.iter_mut().for_each(without_twins),
        _ => {}
    }
}

fn doc() -> Value {
    let mut v: Value = serde_json::from_str(DOC).unwrap();
    without_twins(&mut v);
    v
}

#[test]
fn a_written_document_reads_back_as_it_was() {
    let r: Report = serde_json::from_str(DOC).unwrap();
    assert_eq!(r.schema_version, SCHEMA_VERSION);
    assert_eq!((r.summary.flows, r.flows.len(), r.connections.len()), (2, 2, 1));
    assert_eq!(r.summary.findings.info, 1);
    let f = &r.findings[0];
    assert_eq!((f.severity, f.kind), (Severity::Info, FindingKind::Congestion));
    assert_eq!(f.kind, "congestion");
    let c = &r.connections[0];
    assert_eq!(
        (c.a.to_string(), c.b.to_string(), &*c.flows),
        ("10.0.0.5".into(), "10.0.0.6".into(), &[0, 1][..])
    );
    assert_eq!((c.pairing, c.health), (Word::new("address"), Word::new("info")));
    assert_eq!(r.flows[0].health, "info");
    assert_eq!(r.flows[0].pairing.as_deref(), Some("address"));
    assert!(
        r.flows[0].opcodes.iter().any(|o| o.name == "RC RDMA Write Middle" && o.packets == 14),
        "{:?}",
        r.flows[0].opcodes
    );
    assert_eq!(serde_json::to_value(&r).unwrap(), doc());
}

#[test]
fn sections_a_plain_capture_leaves_out_read_back() {
    let mut r: Report = serde_json::from_str(DOC).unwrap();
    r.capture =
        Some(CaptureCounters { interface: "eth1".into(), received: 100, kernel_dropped: 3, if_dropped: 1 });
    r.interrupted = true;
    r.interrupted_at = Some(Interruption {
        signal: "SIGINT".into(),
        frames_read: 20,
        bytes_read: Some(4096),
        bytes_total: None,
    });
    r.input_errors = vec!["b.pcap: capture is cut off".into()];
    assert_eq!(r.capture_dropped(), 4);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["interrupted_at"]["signal"], "SIGINT");
    assert_eq!(v["capture"]["kernel_dropped"], 3);
    let back: Report = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), v);
    assert!(back.interrupted && back.interrupted_at.is_some_and(|i| i.frames_read == 20));
}

#[test]
fn keys_a_later_version_adds_are_passed_over() {
    let mut v: Value = serde_json::from_str(DOC).unwrap();
    v["a_later_section"] = serde_json::json!({"x": 1});
    v["summary"]["a_later_count"] = 7.into();
    v["flows"][0]["a_later_figure"] = serde_json::json!([1, 2]);
    let r: Report = serde_json::from_value(v).unwrap();
    assert_eq!(serde_json::to_value(&r).unwrap(), doc());
}

#[test]
fn what_is_not_a_report_is_refused() {
    let mut v: Value = serde_json::from_str(DOC).unwrap();
    v["findings"][0]["kind"] = "no_such_kind".into();
    let e = serde_json::from_value::<Report>(v).unwrap_err().to_string();
    assert!(e.contains("no_such_kind"), "{e}");
    let mut v: Value = serde_json::from_str(DOC).unwrap();
    v["connections"][0]["flows"] = serde_json::json!([0, 1, 2]);
    assert!(serde_json::from_value::<Report>(v).is_err(), "a connection has one or two flows");
    let mut v: Value = serde_json::from_str(DOC).unwrap();
    v.as_object_mut().unwrap().remove("summary");
    assert!(serde_json::from_value::<Report>(v).is_err(), "summary is required");
    assert_eq!(serde_json::from_str::<PauseKind>("\"pfc\"").unwrap(), PauseKind::Pfc);
}

#[test]
fn the_schema_is_the_documents() {
    let schema: Value = serde_json::from_str(rocescope_model::REPORT_SCHEMA).unwrap();
    assert_eq!(schema["title"], "rocescope report --json");
    let required: Vec<&str> =
        schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let v = doc();
    for key in &required {
        assert!(v.get(key).is_some(), "{key} is required and the document has it");
    }
    // Every finding kind the model knows is one the schema lists, in the same order.
    let kinds: Vec<&str> = schema["properties"]["findings"]["items"]["properties"]["kind"]["enum"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let ours: Vec<&str> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(kinds, ours);
}
