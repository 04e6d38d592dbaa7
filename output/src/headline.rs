//! The line a report opens with: frames, span, start and the counts by kind, as both the
//! text report and the HTML page show it (one wording in one place).

use rocescope_analyzer::report::Summary;

/// `N frames over S s from <UTC>; R RoCE (V v1), P PFC, Q PAUSE, C CNP, M malformed, B bad
/// ICRC, X non-RoCE`.
pub fn summary_line(s: &Summary) -> String {
    let start = s.start_ns.unwrap_or(0);
    let dur = s.end_ns.unwrap_or(start) - start;
    format!(
        "{} frames over {:.6} s from {}; {} RoCE ({} v1), {} PFC, {} PAUSE, {} CNP, {} malformed, {} bad ICRC, {} non-RoCE",
        s.packets,
        dur as f64 / 1e9,
        s.start_ns.map(rocescope_capture::time::utc).unwrap_or_else(|| "-".into()),
        s.roce,
        s.roce_v1,
        s.pfc_frames,
        s.pause_frames,
        s.cnps,
        s.malformed,
        s.icrc_bad,
        s.non_roce
    )
}
