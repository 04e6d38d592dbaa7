//! The streamed report (`Analyzer::report_streamed`: each flow's entry built as it is
//! written, what `report` and `export` use) is the report `Analyzer::report` builds whole
//! (what the TUI and library users get): the same JSON over every bundled sample and every
//! real capture, and the same connection totals.

mod common;

use rocescope_analyzer::report::ReportTotals;
use std::path::Path;

fn check(path: &Path) {
    let a = common::analyse(path, 0, 1);
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
    // The connections, built one at a time, are the whole report's list, and the text
    // report's worst-first list is that list sorted (stably) by health, then packets.
    let listed: Vec<String> = streamed.connections().map(|c| format!("{c:?}")).collect();
    let want: Vec<String> = whole.connections.iter().map(|c| format!("{c:?}")).collect();
    assert_eq!(listed, want, "{}", path.display());
    assert_eq!(streamed.connection_count(), whole.connections.len());
    assert!(streamed.report.connections.is_empty(), "a streamed report holds no list of them");
    let rank = |h: &str| ["critical", "warning", "info"].iter().position(|w| *w == h).unwrap_or(3);
    let mut sorted: Vec<_> = whole.connections.iter().collect();
    sorted.sort_by(|a, b| rank(&a.health).cmp(&rank(&b.health)).then(b.packets.cmp(&a.packets)));
    for n in [0, 1, 3, 50, usize::MAX] {
        let got: Vec<String> = streamed.worst_connections(n).iter().map(|c| format!("{c:?}")).collect();
        let want: Vec<String> = sorted.iter().take(n).map(|c| format!("{c:?}")).collect();
        assert_eq!(got, want, "{} top {n}", path.display());
    }
}

#[test]
fn every_sample_streams_the_whole_report() {
    let files = common::pcaps_under(&common::root().join("samples"));
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
