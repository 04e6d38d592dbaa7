//! The streamed report (`Analyzer::report_streamed`: each flow's entry built as it is
//! written, what `report` and `export` use) is the report `Analyzer::report` builds whole
//! (what the TUI and library users get): the same JSON over every bundled sample and every
//! real capture, and the same connection totals.

mod common;

use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions};
use std::path::{Path, PathBuf};

fn analyse(path: &Path) -> Analyzer {
    let opts = DecodeOptions::default();
    let mut a = Analyzer::new(Config::default());
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        n += 1;
        let p = decode(rec.link_type, rec.data, &opts);
        a.push_frame(n, &rec, &p, &opts);
    }
    a.finish();
    a
}

fn pcaps_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            pcaps_under(&p, out);
        } else if p.extension().is_some_and(|e| e == "pcap") {
            out.push(p);
        }
    }
}

fn check(path: &Path) {
    let a = analyse(path);
    let whole = a.report();
    let streamed = a.report_streamed();
    assert_eq!(
        serde_json::to_value(&streamed).unwrap(),
        serde_json::to_value(&whole).unwrap(),
        "{}",
        path.display()
    );
    for c in &whole.connections {
        let (w, s) = (whole.connection_totals(c), streamed.connection_totals(c));
        assert_eq!(format!("{w:?}"), format!("{s:?}"), "{}", path.display());
    }
    assert_eq!(streamed.flow_count(), whole.flows.len());
}

#[test]
fn every_sample_streams_the_whole_report() {
    let mut files = Vec::new();
    pcaps_under(&common::root().join("samples"), &mut files);
    assert!(files.len() > 40, "{}", files.len());
    for f in &files {
        check(f);
    }
}

#[test]
fn every_real_capture_streams_the_whole_report() {
    let Some(dir) = common::real_captures() else { return };
    let files = common::captures_in(&dir);
    assert!(!files.is_empty());
    for f in &files {
        check(f);
    }
}
