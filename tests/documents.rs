//! `rocescope compare` with report documents out of the schema (issue 40): a value the schema
//! does not allow is status 1, naming the side and the value's JSON path, never a comparison
//! whose verdicts rest on it. And the text wraps at 100 columns whatever a point's name.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn report(capture: &str) -> Value {
    let path = common::root().join("samples/compare").join(capture);
    common::report_json(&run(&["report", "--json", "-r", path.to_str().unwrap_or_default()]).stdout)
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap_or_default()).expect("write the document");
}

#[test]
fn a_document_out_of_the_schema_is_refused_naming_the_side_and_the_path() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (b, a) = (dir.path().join("before.json"), dir.path().join("after.json"));
    write(&b, &report("ecn-off-before.pcap"));
    let after = report("ecn-off-after.pcap");
    write(&a, &after);
    let (bs, as_) = (b.to_str().unwrap_or_default(), a.to_str().unwrap_or_default());
    // As documents, the change is the CRITICAL it is as captures.
    let o = run(&["compare", bs, as_]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{text}");
    assert!(text.contains("CRITICAL") && text.contains("ECN marking stopped on priority 3"), "{text}");
    // Issue 40: the AFTER document's series moved to priority 255; the CRITICAL vanished and
    // the gate passed.
    let mut bad = after.clone();
    let prios = bad.pointer_mut("/timeline/points/0/priorities").and_then(Value::as_array_mut);
    for p in prios.expect("the AFTER document has a series") {
        p["priority"] = 255.into();
    }
    write(&a, &bad);
    let o = run(&["compare", bs, as_]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}\n{}", String::from_utf8_lossy(&o.stdout));
    assert!(o.stdout.is_empty(), "no comparison is printed");
    assert!(e.contains("AFTER") && e.contains("after.json"), "names the side and its file: {e}");
    assert!(e.contains("timeline.points[0].priorities[0].priority is 255; the schema allows 0 to 7"), "{e}");
    // A series' bin of 1 ns (the schema's least is 1 µs).
    let mut bad = after.clone();
    bad["timeline"]["points"][0]["bin_ns"] = 1.into();
    write(&a, &bad);
    let o = run(&["compare", bs, as_]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("timeline.points[0].bin_ns is 1; the schema allows 1000 or more"), "{e}");
    // A value beyond its type (a priority of 256) is refused too, as BEFORE.
    let mut bad = report("ecn-off-before.pcap");
    bad["flows"][0]["priority"] = 256.into();
    write(&b, &bad);
    write(&a, &after);
    let o = run(&["compare", bs, as_]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("BEFORE") && e.contains("before.json") && e.contains("256"), "{e}");
}

/// A point named with a long CJK name: every line of the text fits 100 columns (it was
/// wrapped by characters, 176 columns).
#[test]
fn compare_text_fits_100_columns_with_wide_point_names() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (b, a) = (dir.path().join("before.json"), dir.path().join("after.json"));
    let mut before = report("ecn-off-before.pcap");
    let mut after = report("ecn-off-after.pcap");
    // Two points each side, the second named apart: it is on one side only, named in full.
    for (doc, name) in [(&mut before, "前".repeat(150)), (&mut after, "後".repeat(150))] {
        let mut p = doc["points"][0].clone();
        p["name"] = name.into();
        doc["points"].as_array_mut().expect("points").push(p);
    }
    write(&b, &before);
    write(&a, &after);
    let o = run(&["compare", b.to_str().unwrap_or_default(), a.to_str().unwrap_or_default()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains('前') && text.contains('後'), "{text}");
    for line in text.lines() {
        let cols: usize =
            line.chars().map(|c| if ('\u{3000}'..='\u{9fff}').contains(&c) { 2 } else { 1 }).sum();
        assert!(cols <= 100, "{cols} columns: {line}");
    }
}
