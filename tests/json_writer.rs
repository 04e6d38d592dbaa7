//! The report's JSON writer (`rocescope_output::json::report_to_writer`, what
//! `report --json` uses: a serializer of its own, the flows' entries written by hand)
//! writes the same bytes as the reference it replaced
//! (`json::legacy`: serde_json with the time-twin formatter), over every bundled sample
//! and every real capture, for one analyzer and for three shards merged as
//! `report --threads 3` merges them. (The bench captures, written by the samplegen, are
//! checked the same way in `samplegen/tests/json_writer.rs`.)

mod common;

use rocescope_analyzer::{parallel, Analyzer};
use rocescope_output::json;
use std::path::Path;

/// Shard `index` of `count` of `path`, fed as `report --threads` feeds it: common frames
/// through the fast path, other shards' pairs passed over.
fn analyse_fast(path: &Path, index: u32, count: u32) -> Analyzer {
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(rocescope_analyzer::Config::default());
    assert!(a.set_shard(index, count));
    let mut r = rocescope_capture::CaptureReader::open(path).unwrap();
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap() {
        n = rec.number_after(n);
        a.push_shard_record(n, &rec, &opts);
    }
    a.finish();
    a
}

/// Where two documents first differ, with some context, for the failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let around = |d: &[u8]| {
        String::from_utf8_lossy(d.get(at.saturating_sub(80)..(at + 80).min(d.len())).unwrap_or(&[]))
            .into_owned()
    };
    format!(
        "lengths {} and {}, first difference at byte {at}:\n  fast: {}\n  reference: {}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    )
}

fn check(path: &Path) {
    for count in [1, 3] {
        let mut shards: Vec<Analyzer> = (0..count).map(|i| analyse_fast(path, i, count)).collect();
        let a = match shards.len() {
            1 => shards.pop().unwrap(),
            _ => parallel::merge(shards).unwrap(),
        };
        let streamed = a.report_streamed();
        let mut fast = Vec::new();
        json::report_to_writer(&mut fast, &streamed).unwrap();
        let reference = json::legacy::to_vec(&streamed).unwrap();
        assert!(
            fast == reference,
            "{} with {count} shards: {}",
            path.display(),
            first_difference(&fast, &reference)
        );
        // The serde writer alone (every entry through serde) writes them too.
        assert_eq!(json::to_vec(&streamed).unwrap(), fast, "{}", path.display());
        // A real document: it reads back, with its flows.
        let v: serde_json::Value = serde_json::from_slice(&fast).unwrap();
        assert_eq!(v["flows"].as_array().map(Vec::len), Some(streamed.flow_count()), "{}", path.display());
    }
}

#[test]
fn every_sample_writes_the_reference_bytes() {
    let files = common::pcaps_under(&common::root().join("samples"));
    assert!(files.len() > 40, "{}", files.len());
    for f in &files {
        check(f);
    }
}

#[test]
fn every_real_capture_writes_the_reference_bytes() {
    let Some(dir) = common::real_captures() else { return };
    let files = common::captures_in(&dir);
    assert!(!files.is_empty());
    for f in &files {
        check(f);
    }
}
