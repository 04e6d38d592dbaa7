//! `rocescope capture` from a file to files (no root, no network): the closing summary must
//! say what the files on disk hold, also when a ring buffer (`-C` with `-W`) deleted some.

mod common;

use rocescope_capture::CaptureReader;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rocescope")
}

/// Every record's bytes, in order.
fn frames(path: &Path) -> Vec<Vec<u8>> {
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        out.push(rec.data.to_vec());
    }
    out
}

/// The files in `dir`, sorted by name (the ring numbers them in order).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("dir").map(|e| e.expect("entry").path()).collect();
    v.sort();
    v
}

/// Run `rocescope capture ARGS`; its summary line (the last line of standard error).
fn capture(args: &[&str]) -> String {
    let o = Command::new(bin()).arg("capture").args(args).output().expect("run");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err.lines().last().expect("a summary").to_string()
}

/// The numbers of "N packets written to M files; the newest K kept (P packets: ...), R files
/// (Q packets) rotated away".
fn ring_numbers(line: &str) -> [u64; 6] {
    let num = |after: &str, from: &str| -> u64 {
        let i = from.find(after).unwrap_or_else(|| panic!("{after:?} in {line:?}")) + after.len();
        from[i..].split(|c: char| !c.is_ascii_digit()).next().unwrap_or("").parse().expect(line)
    };
    let written = num("", line);
    let made = num("packets written to ", line);
    let kept_files = num("; the newest ", line);
    let kept = num(" kept (", line);
    let tail = &line[line.find("), ").expect(line) + 3..];
    let removed_files = num("", tail);
    let removed = num(" files (", tail);
    assert!(tail.ends_with(" packets) rotated away"), "{line}");
    [written, made, kept_files, kept, removed_files, removed]
}

#[test]
fn the_ring_summary_matches_the_files_kept() {
    let sample = common::root().join("samples/demo.pcap");
    let sent = frames(&sample);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("x.pcapng");
    let line =
        capture(&["-r", sample.to_str().unwrap(), "-w", out.to_str().unwrap(), "-C", "0.01", "-W", "2"]);
    let [written, made, kept_files, kept, removed_files, removed] = ring_numbers(&line);
    let files = files_in(dir.path());
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(kept_files, 2, "{line}");
    // What the summary says was kept is what the kept files hold, and they are the newest:
    // the sample's last frames, in order.
    let on_disk: Vec<Vec<u8>> = files.iter().flat_map(|f| frames(f)).collect();
    assert_eq!(kept, on_disk.len() as u64, "{line}");
    assert_eq!(&sent[sent.len() - on_disk.len()..], &on_disk[..]);
    // Every frame was written; those not kept went with the rotated files.
    assert_eq!(written, sent.len() as u64, "{line}");
    assert_eq!(removed, written - kept, "{line}");
    // The newest file's number is how many files were made.
    let last = files[1].file_name().unwrap().to_string_lossy().to_string();
    let number: u64 = last["x_".len().."x_".len() + 5].parse().expect("numbered");
    assert_eq!(made, number, "{line}");
    assert_eq!(removed_files, made - 2, "{line}");
    assert!(removed_files > 0, "the ring rotated: {line}");
    // The kept files are named, oldest and newest.
    assert!(line.contains(&format!("{} ... {}", files[0].display(), files[1].display())), "{line}");
}

#[test]
fn without_a_ring_every_file_is_kept() {
    let sample = common::root().join("samples/demo.pcap");
    let sent = frames(&sample);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("x.pcap");
    let line =
        capture(&["-r", sample.to_str().unwrap(), "-w", out.to_str().unwrap(), "--pcap", "-C", "0.05"]);
    let files = files_in(dir.path());
    assert!(files.len() > 1, "rotated: {files:?}");
    assert!(
        line.starts_with(&format!("{} packets written to {} files (", sent.len(), files.len())),
        "{line}"
    );
    assert!(!line.contains("rotated away"), "{line}");
    let on_disk: Vec<Vec<u8>> = files.iter().flat_map(|f| frames(f)).collect();
    assert_eq!(on_disk, sent);
    // One file, no rotation.
    let one = dir.path().join("one.pcapng");
    let line = capture(&["-r", sample.to_str().unwrap(), "-w", one.to_str().unwrap()]);
    assert_eq!(line, format!("{} packets written to {}", sent.len(), one.display()));
    assert_eq!(frames(&one), sent);
}
