//! Several captures analysed as one (`-r a -r b`): merged by time, each frame tagged with its
//! capture point, each point's view analysed apart, and packets that one point saw and the
//! other did not placed between them. The two-point sample: one RDMA WRITE captured at the
//! sender's and the receiver's NIC, the receiver's clock 2 ms ahead, one packet lost in the
//! fabric (NAKed by the receiver, resent by go-back-N).

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rocescope")
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

fn run(args: &[&str], files: &[PathBuf]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    for f in files {
        cmd.arg("-r").arg(f);
    }
    cmd.output().expect("run rocescope")
}

fn report(files: &[PathBuf]) -> Value {
    let o = run(&["report", "--json"], files);
    assert!(o.status.code().is_some_and(|c| c == 0 || c == 3), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn pair() -> Vec<PathBuf> {
    vec![sample("two-points-sender.pcap"), sample("two-points-receiver.pcap")]
}

/// The data flow 10.0.0.1 -> 10.0.0.2 (QP 0x72) at point `p`.
fn data_flow(r: &Value, p: u64) -> &Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["point"] == p && f["src"] == "10.0.0.1" && f["dest_qp"] == 0x72)
        .unwrap_or_else(|| panic!("no data flow at point {p}"))
}

#[test]
fn a_loss_is_placed_between_the_sender_and_the_receiver() {
    let r = report(&pair());
    let points: Vec<&str> =
        r["points"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(points, ["two-points-sender.pcap", "two-points-receiver.pcap"]);
    assert_eq!(r["points"][0]["packets"], 13);
    assert_eq!(r["points"][1]["packets"], 12);
    // Each point's own view: the sender saw no gap and resent 3; the receiver saw the gap.
    let s = data_flow(&r, 0);
    assert_eq!((s["packets"].as_u64(), s["psn"]["gaps"].as_u64()), (Some(11), Some(0)));
    assert_eq!(s["psn"]["retransmits_nak"], 3);
    let d = data_flow(&r, 1);
    assert_eq!((d["packets"].as_u64(), d["psn"]["gaps"].as_u64()), (Some(10), Some(1)));
    assert_eq!(d["psn"]["missing"], 1);
    // The comparison: one packet sent, never received. Frame 3 of the merged stream is the
    // sender's copy of PSN 5002 (the first transmission).
    let between = r["between"].as_array().unwrap();
    assert_eq!(between.len(), 1, "{between:?}");
    let l = &between[0];
    assert_eq!((l["from"].as_u64(), l["to"].as_u64(), l["packets"].as_u64()), (Some(0), Some(1), Some(1)));
    assert_eq!(
        (l["src"].as_str(), l["dest_qp"].as_u64(), l["first_frame"].as_u64()),
        (Some("10.0.0.1"), Some(0x72), Some(3))
    );
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "lost_between_points")
        .expect("a finding");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("seen at two-points-sender.pcap never seen at two-points-receiver.pcap"),
        "{title}"
    );
    // Connections are per point; pairing stays within a point.
    for c in r["connections"].as_array().unwrap() {
        let flows: Vec<u64> = c["flows"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        for id in flows {
            assert_eq!(r["flows"][id as usize]["point"], c["point"]);
        }
    }
}

#[test]
fn order_of_files_and_the_text_report() {
    let mut files = pair();
    files.reverse();
    let r = report(&files);
    let l = &r["between"][0];
    assert_eq!((l["from"].as_u64(), l["to"].as_u64()), (Some(1), Some(0)), "from the sender, now point 1");
    let o = run(&["report"], &files);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("CAPTURE POINTS (2, merged by time)"), "{text}");
    assert!(
        text.contains(
            "lost between two-points-sender.pcap and two-points-receiver.pcap: 1 packet(s) of QP 0x000072"
        ),
        "{text}"
    );
    assert!(
        text.contains("two-points-receiver.pcap: 10.0.0.1 (0x71)"),
        "connections name their point:\n{text}"
    );
}

#[test]
fn the_same_capture_twice_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("h1");
    let b = dir.path().join("h2");
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        std::fs::copy(sample("nak-gobackn.pcap"), d.join("roce.pcap")).unwrap();
    }
    let r = report(&[a.join("roce.pcap"), b.join("roce.pcap")]);
    let names: Vec<String> =
        r["points"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect();
    assert!(names[0].ends_with("h1/roce.pcap") && names[1].ends_with("h2/roce.pcap"), "{names:?}");
    assert_eq!(r["between"].as_array().unwrap().len(), 0);
    // Each point analysed on its own: the same figures twice.
    let single = report(&[sample("nak-gobackn.pcap")]);
    assert_eq!(r["flows"].as_array().unwrap().len(), 2 * single["flows"].as_array().unwrap().len());
    let gaps = |r: &Value| {
        r["flows"].as_array().unwrap().iter().map(|f| f["psn"]["gaps"].as_u64().unwrap()).sum::<u64>()
    };
    assert_eq!(gaps(&r), 2 * gaps(&single));
}

#[test]
fn a_damaged_file_among_several_is_named_and_the_rest_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.pcap");
    let bytes = std::fs::read(sample("two-points-receiver.pcap")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let o = run(&["report", "--json"], &[sample("two-points-sender.pcap"), cut]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.pcap: capture is cut off"), "{err}");
    let r = common::report_json(&o.stdout);
    let errors = r["input_errors"].as_array().expect("the document names the damage");
    assert!(
        errors.len() == 1 && errors[0].as_str().unwrap().contains("cut.pcap: capture is cut off"),
        "{errors:?}"
    );
    assert_eq!(r["points"][0]["packets"], 13, "the sender's file read whole");
    assert_eq!(r["points"][1]["packets"], 11, "the receiver's up to the damage");
    // A missing file is an error before anything is read.
    let o = run(&["report"], &[sample("two-points-sender.pcap"), PathBuf::from("/nonexistent/b.pcap")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/b.pcap"));
}

#[test]
fn decode_merges_by_time_too() {
    let o = run(&["decode", "--json"], &pair());
    assert!(o.status.success());
    let ts: Vec<i64> =
        common::decode_lines(&o.stdout).into_iter().map(|v| v["ts_ns"].as_i64().expect("ts_ns")).collect();
    assert_eq!(ts.len(), 25);
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "in time order");
    // The receiver's frames (2 ms later on its clock) come after all the sender's.
    assert!(ts[13] - ts[12] > 1_900_000, "{ts:?}");
    let points: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["point"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(points[0], "two-points-sender.pcap");
    assert_eq!(points[24], "two-points-receiver.pcap");
    let o = run(&["decode"], &pair());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().next().unwrap().starts_with("[two-points-sender.pcap] "), "{text}");
}

#[test]
fn tui_names_the_capture_points() {
    let cmd = format!(
        "{} tui -r {} -r {}; sleep 30",
        bin(),
        sample("two-points-sender.pcap").display(),
        sample("two-points-receiver.pcap").display()
    );
    let Some(t) = common::Tmux::start(&cmd) else { return };
    let s = t.wait_for("2 of 2");
    // A point column names where each connection was seen.
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("0x71 10.0.0.1")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows.iter().any(|l| l.contains("two-points-sender.pcap")), "{s}");
    assert!(rows.iter().any(|l| l.contains("two-points-receiver.pcap")), "{s}");
    // Packets name their point.
    t.keys(&["2"]);
    let s = t.wait_for("[two-points-receiver.pcap]");
    assert!(s.contains("[two-points-sender.pcap]"), "{s}");
    t.keys(&["5"]);
    let s = t.wait_for("never seen at");
    assert!(s.contains("two-points-sender.pcap never seen at two-points-receiver.pcap"), "{s}");
}

#[test]
fn every_real_capture_merged_at_once() {
    let Some(dir) = common::real_captures() else { return };
    let files = common::captures_in(&dir);
    let merged = report(&files);
    assert_eq!(merged["points"].as_array().unwrap().len(), files.len());
    // Each point's view is the file's own: frames and flows add up.
    let (mut frames, mut flows) = (0, 0);
    for f in &files {
        let r = report(std::slice::from_ref(f));
        frames += r["summary"]["packets"].as_u64().unwrap();
        flows += r["flows"].as_array().unwrap().len();
    }
    assert_eq!(merged["summary"]["packets"].as_u64(), Some(frames));
    assert_eq!(merged["flows"].as_array().unwrap().len(), flows);
    // Unrelated captures (different hosts, different days): nothing lost between them.
    assert_eq!(merged["between"].as_array().unwrap().len(), 0, "{}", merged["between"]);
}

#[test]
fn capture_merges_files_into_one_pcapng_naming_each_point() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.pcapng");
    let o = run(&["capture", "-w", out.to_str().unwrap()], &pair());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = rocescope_capture::CaptureReader::open(&out).unwrap();
    let mut per_iface = [0u32; 2];
    let mut last = 0;
    while let Some(rec) = r.next_record().unwrap() {
        per_iface[rec.interface as usize] += 1;
        assert!(rec.ts_ns >= last, "in time order");
        last = rec.ts_ns;
    }
    assert_eq!(per_iface, [13, 12]);
    let names: Vec<_> = r.interfaces().iter().map(|i| i.name.clone().unwrap_or_default()).collect();
    assert_eq!(names, ["two-points-sender.pcap", "two-points-receiver.pcap"]);
}

#[test]
fn clocks_further_apart_than_the_window_are_named_and_a_wider_window_matches() {
    // The receiver's capture with its clock 10 s further ahead.
    let bytes = std::fs::read(sample("two-points-receiver.pcap")).unwrap();
    let mut out = bytes[..24].to_vec();
    let mut i = 24;
    while i + 16 <= bytes.len() {
        let sec = u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) + 10;
        let caplen = u32::from_le_bytes(bytes[i + 8..i + 12].try_into().unwrap()) as usize;
        out.extend_from_slice(&sec.to_le_bytes());
        out.extend_from_slice(&bytes[i + 4..i + 16 + caplen]);
        i += 16 + caplen;
    }
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.pcap");
    std::fs::write(&late, out).unwrap();
    let files = [sample("two-points-sender.pcap"), late];
    let r = report(&files);
    assert_eq!(r["between"].as_array().unwrap().len(), 0);
    let f =
        r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "points_unmatched").expect("says why");
    assert!(f["title"].as_str().unwrap().contains("--match-window-ms"), "{f}");
    let o = run(&["report", "--json", "--match-window-ms", "20000"], &files);
    let r = common::report_json(&o.stdout);
    assert_eq!(r["between"][0]["packets"], 1);
}

#[test]
fn classic_pcap_output_refuses_a_second_link_type_and_empty_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // rc-normal.pcap relabelled as Linux cooked capture (link type 113).
    let mut bytes = std::fs::read(sample("rc-normal.pcap")).unwrap();
    bytes[20..24].copy_from_slice(&113u32.to_le_bytes());
    let sll = dir.path().join("sll.pcap");
    std::fs::write(&sll, bytes).unwrap();
    let out = dir.path().join("out.pcap");
    let o =
        run(&["capture", "--pcap", "-w", out.to_str().unwrap()], &[sample("rc-normal.pcap"), sll.clone()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot go into a classic pcap") && err.contains("without --pcap"), "{err}");
    // pcapng holds both.
    let out = dir.path().join("out.pcapng");
    let o = run(&["capture", "-w", out.to_str().unwrap()], &[sample("rc-normal.pcap"), sll]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // An empty file among several: named, the others analysed.
    let empty = dir.path().join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    let o = run(&["report", "--json"], &[sample("rc-normal.pcap"), empty]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("empty.pcap is empty"));
    let r = common::report_json(&o.stdout);
    assert_eq!(r["points"].as_array().unwrap().len(), 2);
    assert!(r["summary"]["roce"].as_u64().unwrap() > 0);
}

#[test]
fn a_file_out_of_time_order_is_named() {
    // The receiver's capture with its 3rd record stamped a minute ahead.
    let mut bytes = std::fs::read(sample("two-points-receiver.pcap")).unwrap();
    let mut at = 24;
    for _ in 0..2 {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + caplen;
    }
    let sec = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) + 60;
    bytes[at..at + 4].copy_from_slice(&sec.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.pcap");
    std::fs::write(&odd, bytes).unwrap();
    let o = run(&["report"], &[sample("two-points-sender.pcap"), odd]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("odd.pcap: 1 record(s) earlier than the one before"), "{err}");
}

#[test]
fn a_second_pcapng_section_brings_new_interfaces() {
    let dir = tempfile::tempdir().unwrap();
    // Section 1: Ethernet; section 2: the same frames relabelled Linux cooked (113). Two
    // pcapng files one after the other make one two-section pcapng.
    let mut sll = std::fs::read(sample("rc-normal.pcap")).unwrap();
    sll[20..24].copy_from_slice(&113u32.to_le_bytes());
    let sll_pcap = dir.path().join("sll.pcap");
    std::fs::write(&sll_pcap, sll).unwrap();
    let mut two = Vec::new();
    for src in [sample("rc-normal.pcap"), sll_pcap] {
        let out = dir.path().join("part.pcapng");
        let o = run(&["capture", "-w", out.to_str().unwrap()], &[src]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        two.extend(std::fs::read(&out).unwrap());
    }
    let sections = dir.path().join("two.pcapng");
    std::fs::write(&sections, two).unwrap();
    let merged = dir.path().join("merged.pcapng");
    let o = run(&["capture", "-w", merged.to_str().unwrap()], &[sections, sample("ud.pcap")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = rocescope_capture::CaptureReader::open(&merged).unwrap();
    let mut by_type = std::collections::BTreeMap::new();
    let mut seen = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        *by_type.entry(rec.link_type.0).or_insert(0) += 1;
        seen.push((rec.interface, rec.link_type));
    }
    for (i, lt) in seen {
        assert_eq!(
            r.interfaces()[i as usize].link_type,
            lt,
            "each record under an interface of its own type"
        );
    }
    let n = common::count(&sample("rc-normal.pcap")).frames as i32;
    assert_eq!(by_type.get(&113), Some(&n), "{by_type:?}");
}

/// The two-point pair with, between them, files damaged from their very start: cut at 10
/// bytes, not a capture, a corrupt gzip start, empty.
fn pair_with_files_damaged_at_the_start(dir: &std::path::Path) -> (Vec<PathBuf>, Vec<String>) {
    let bytes = std::fs::read(sample("two-points-receiver.pcap")).unwrap();
    let write = |name: &str, b: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    let mut gz = vec![0x1f, 0x8b, 8, 0xe0]; // reserved flag bits set: an invalid gzip header
    gz.extend_from_slice(&[0; 20]);
    let files = vec![
        sample("two-points-sender.pcap"),
        write("cut10.pcap", &bytes[..10]),
        write("notes.txt", b"these are notes, not packets\n"),
        write("bad.pcap.gz", &gz),
        write("empty.pcap", b""),
        sample("two-points-receiver.pcap"),
    ];
    let errors = [
        "cut10.pcap: capture is cut off: its file header (at byte 0) is incomplete, no record could be read",
        "notes.txt is not a pcap or pcapng capture (starts with 74 68 65 73)",
        "bad.pcap.gz: gzip stream is corrupt before any record (byte 0 of the decompressed capture): a gzip member header is invalid",
        "empty.pcap is empty: not a pcap or pcapng capture",
    ];
    // Each message names the file by the path given.
    (files, errors.iter().map(|e| format!("{}/{e}", dir.display())).collect())
}

#[test]
fn files_damaged_from_their_start_are_named_and_the_others_analysed_whole() {
    // Issue 15: one file damaged in its header aborted the whole merge with exit 1.
    let dir = tempfile::tempdir().unwrap();
    let (files, errors) = pair_with_files_damaged_at_the_start(dir.path());
    let o = run(&["report", "--json"], &files);
    // A damaged input: exit status 1 (README, `report --help`), the report still printed.
    assert_eq!(o.status.code(), Some(1));
    let r = common::report_json(&o.stdout);
    assert_eq!(r["input_errors"], serde_json::json!(errors), "every damaged file named, in order");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 6, "each file keeps its place as a point");
    assert_eq!(points[0]["packets"], 13, "the sender's file read whole");
    assert_eq!(points[5]["packets"], 12, "the receiver's file read whole");
    assert!(points[1..5].iter().all(|p| p["packets"] == 0));
    // The merge is the same analysis as without the damaged files.
    assert_eq!(r["between"][0]["packets"], 1, "the loss is still placed between the two");
    let err = String::from_utf8_lossy(&o.stderr);
    for e in &errors {
        assert_eq!(err.matches(e.as_str()).count(), 1, "named once on stderr: {e}\n{err}");
    }
    assert!(err
        .trim_end()
        .ends_with("(the report covered the other files whole and this one up to the damage)"));

    // decode: every frame of the good files, the damaged ones named, exit 1.
    let o = run(&["decode"], &files);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 25);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 4, "{err}");
    for e in &errors {
        assert!(err.contains(e.as_str()), "{e}\n{err}");
    }

    // export: the final figures of the good files, the damage said, exit 1.
    let o = run(&["export", "--no-http", "--push", "-"], &files);
    assert_eq!(o.status.code(), Some(1));
    let line: Value = serde_json::from_slice(&o.stdout).expect("one NDJSON line");
    assert_eq!(common::pushed_sum(&line, "rocescope_frames_total"), 25.0, "{line}");
    let err = String::from_utf8_lossy(&o.stderr);
    for e in &errors {
        assert!(err.contains(e.as_str()), "{e}\n{err}");
    }

    // A missing file is still a mistake to fix before anything is read.
    let mut missing = files.clone();
    missing.push(dir.path().join("no-such.pcap"));
    let o = run(&["report", "--json"], &missing);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
}

#[test]
fn tui_shows_the_damaged_file_and_the_others_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = pair_with_files_damaged_at_the_start(dir.path());
    let mut cmd = format!("{} tui", bin());
    for f in &files {
        cmd.push_str(&format!(" -r {}", f.display()));
    }
    cmd.push_str("; sleep 30");
    let Some(t) = common::Tmux::start(&cmd) else { return };
    // The damage shown (the last file found damaged), and both good files analysed: each
    // point's connection listed.
    let s = t.wait_for("empty.pcap is empty");
    let mut s = if s.contains("2 of 2") { s } else { t.wait_for("2 of 2") };
    // Both rows: a capture of the pane can catch the terminal half-painted on a busy machine.
    for _ in 0..50 {
        if s.lines().filter(|l| l.contains("0x71 10.0.0.1")).count() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        s = t.screen();
    }
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("0x71 10.0.0.1")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows.iter().any(|l| l.contains("two-points-sender.pcap")), "{s}");
    assert!(rows.iter().any(|l| l.contains("two-points-receiver.pcap")), "{s}");
}
