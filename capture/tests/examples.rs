//! Runs the logic of `examples/list_frames.rs` (compiled in here as a module) over the
//! sample captures and checks what it prints.

#[path = "../examples/list_frames.rs"]
#[allow(dead_code)] // its `main` is the example's, unused here
mod list_frames;

use rocescope_capture::CaptureError;
use std::path::Path;

fn listing(path: &Path) -> (u64, Vec<String>) {
    let mut out = Vec::new();
    let n = list_frames::list(path, &mut out).expect("the sample reads");
    let text = String::from_utf8(out).expect("UTF-8");
    (n, text.lines().map(str::to_string).collect())
}

#[test]
fn list_frames_example_lists_every_frame_of_demo_pcap() {
    let (n, lines) = listing(Path::new(list_frames::DEFAULT_FILE));
    assert_eq!(n, 182);
    assert_eq!(lines.len(), 182);
    let line = |no: usize| lines[no - 1].as_str();
    assert_eq!(line(1), "     1  RC RDMA Write First                QP=0x000012  PSN=1000");
    assert_eq!(line(62), "    62  CNP                                QP=0x000071  PSN=0");
    assert_eq!(line(85), "    85  PFC, priorities enabled 0x08");
    assert_eq!(line(125), "   125  802.3x PAUSE, 500 quanta");
    assert_eq!(
        line(169),
        "   169  malformed RoCE: BTH at offset 42: the IP/UDP length leaves no room for this header"
    );
    assert_eq!(line(182), "   182  RC Acknowledge                     QP=0x000221  PSN=900");
    // The same split as `rocescope report`: 143 RoCE, 34 PFC, 3 PAUSE, 2 malformed.
    let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    assert_eq!(count("QP=0x"), 143);
    assert_eq!(count("PFC,"), 34);
    assert_eq!(count("PAUSE"), 3);
    assert_eq!(count("malformed RoCE"), 2);
}

#[test]
fn list_frames_example_prints_the_frames_before_damage_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.pcap");
    let whole = std::fs::read(list_frames::DEFAULT_FILE).unwrap();
    // Header (24) + first record (16 + 1098) + part of the second.
    std::fs::write(&cut, &whole[..24 + 16 + 1098 + 30]).unwrap();
    let mut out = Vec::new();
    let err = list_frames::list(&cut, &mut out).expect_err("the second record is cut");
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text, "     1  RC RDMA Write First                QP=0x000012  PSN=1000\n");
    match err.downcast_ref::<CaptureError>() {
        Some(CaptureError::Truncated { source_name, offset, records }) => {
            assert_eq!((source_name.as_path(), *offset, *records), (cut.as_path(), 1138, 1))
        }
        other => panic!("expected a truncation, got {other:?}"),
    }
}
