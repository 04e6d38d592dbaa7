//! `--from` / `--to`: a window over the capture. The frames outside it are skipped before
//! the analysis and counted (`summary.window.frames_outside`, a text line); relative and
//! absolute times of one instant give the same report; a relative time means the same
//! instant for merged files and for `--threads`; frame numbers stay the capture's; a time
//! that does not parse, `--from` not before `--to`, and a window that holds no frame are
//! usage errors (status 2) that say so.

mod common;

use serde_json::Value;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sample(name: &str) -> String {
    common::root().join("samples").join(name).to_str().unwrap().to_string()
}

/// `report --json FILE ARGS`, checked against the schema.
fn report(file: &str, args: &[&str]) -> Value {
    let mut a = vec!["report", "--json", "-r", file, "--fail-on", "never"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{a:?}: {}", err(&o));
    common::report_json(&o.stdout)
}

/// A report without what says how its window was written (`summary.window.from`, `.to`).
fn but_window_text(mut r: Value) -> Value {
    if let Some(w) = r["summary"].get_mut("window").and_then(Value::as_object_mut) {
        w.remove("from");
        w.remove("to");
    }
    r
}

/// The decoded frames' (number, time).
fn decoded(file: &str, args: &[&str]) -> Vec<(u64, i64)> {
    let mut a = vec!["decode", "--json", "-r", file];
    a.extend_from_slice(args);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{a:?}: {}", err(&o));
    common::decode_lines(&o.stdout)
        .iter()
        .map(|l| (l["frame"].as_u64().unwrap(), l["ts_ns"].as_i64().unwrap()))
        .collect()
}

/// The split sample's 1440 frames: 240 rounds 250 µs apart, each a write and its ACK on 3
/// QPs, from 2026-01-01T00:00:00Z. The window from +10 ms to +20 ms holds 40 rounds.
#[test]
fn a_window_counts_the_frames_in_it_and_says_how_many_it_skipped() {
    let f = sample("compare/split-change.pcap");
    let whole = report(&f, &[]);
    assert!(whole["summary"].get("window").is_none(), "no window, no summary.window");
    assert_eq!(whole["summary"]["packets"], 1440);
    let first = whole["summary"]["start_ns"].as_i64().unwrap();
    assert_eq!(first, 1_767_225_600_000_000_000);
    let rel = report(&f, &["--from", "+10ms", "--to", "+20ms"]);
    let s = &rel["summary"];
    assert_eq!(s["packets"], 240, "{s:#}");
    assert_eq!(s["window"]["frames_outside"], 1200);
    assert_eq!((s["window"]["from"].as_str(), s["window"]["to"].as_str()), (Some("+10ms"), Some("+20ms")));
    assert_eq!(s["window"]["start_ns"], first + 10_000_000);
    assert_eq!(s["window"]["end_ns"], first + 20_000_000);
    // --from is inclusive (a round starts at +10 ms), --to exclusive (and one at +20 ms).
    assert_eq!(s["start_ns"], first + 10_000_000);
    assert!(s["end_ns"].as_i64().unwrap() < first + 20_000_000);
    // The same instants, absolute: RFC 3339 (in UTC and at an offset) and epoch seconds.
    for (from, to) in [
        ("2026-01-01T00:00:00.010Z", "2026-01-01T00:00:00.02Z"),
        ("2026-01-01T01:00:00.01+01:00", "2025-12-31T23:00:00.020-01:00"),
        ("1767225600.01", "1767225600.020000000"),
        ("+10000us", "1767225600.02"),
    ] {
        let abs = report(&f, &["--from", from, "--to", to]);
        assert_eq!(abs["summary"]["window"]["from"], from);
        assert!(but_window_text(abs) == but_window_text(rel.clone()), "--from {from} --to {to}");
    }
    // Open at one end.
    assert_eq!(report(&f, &["--from", "+59ms"])["summary"]["packets"], 24);
    assert_eq!(report(&f, &["--to", "+1ms"])["summary"]["packets"], 24);
    // The text says the window and what it skipped.
    let o = run(&["report", "-r", &f, "--from", "+10ms", "--to", "+20ms"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("  window from +10ms (2026-01-01 00:00:00.010000000 UTC) to +20ms (2026-01-01 00:00:00.020000000 UTC): 1200 frame(s) outside it skipped"),
        "{text}"
    );
}

/// Several files: a relative time counts from the first frame of all of them (the receiver's
/// capture starts 2 ms after the sender's, its clock ahead); `--threads` shards read the
/// file each, and agree on the instant.
#[test]
fn a_relative_time_is_one_instant_for_merged_files_and_threads() {
    let (s, r) = (sample("two-points-sender.pcap"), sample("two-points-receiver.pcap"));
    let sender = report(&s, &[]);
    let first = sender["summary"]["start_ns"].as_i64().unwrap();
    let o = run(&["report", "--json", "-r", &s, "-r", &r, "--from", "+2ms", "--fail-on", "never"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let merged = common::report_json(&o.stdout);
    assert_eq!(merged["summary"]["window"]["start_ns"], first + 2_000_000);
    // Every frame of the receiver's capture (12), none of the sender's (13).
    assert_eq!(merged["summary"]["packets"], 12);
    assert_eq!(merged["summary"]["window"]["frames_outside"], 13);
    let abs = format!("{}.002", first / 1_000_000_000);
    let o = run(&["report", "--json", "-r", &s, "-r", &r, "--from", &abs, "--fail-on", "never"]);
    assert!(but_window_text(common::report_json(&o.stdout)) == but_window_text(merged));
    // The demo (182 frames over 80 ms) on 1 and 3 threads, a part of its middle.
    let demo = sample("demo.pcap");
    let one = report(&demo, &["--threads", "1", "--from", "+68ms", "--to", "+75ms"]);
    let three = report(&demo, &["--threads", "3", "--from", "+68ms", "--to", "+75ms"]);
    assert!(one == three, "3 threads give the single-threaded report");
    let n = one["summary"]["packets"].as_u64().unwrap();
    assert!(n > 0 && n < 182, "{n}");
    assert_eq!(n + one["summary"]["window"]["frames_outside"].as_u64().unwrap(), 182);
}

/// Frame numbers stay the capture's: `decode` shows the window's frames with their numbers in
/// the whole file, and the report's evidence cites those numbers (the fast path and the full
/// decoding, on 1 and 3 threads).
#[test]
fn frame_numbers_are_the_captures() {
    let demo = sample("demo.pcap");
    let all = decoded(&demo, &[]);
    let first = all[0].1;
    let (from, to) = (first + 68_000_000, first + 75_000_000);
    let window = decoded(&demo, &["--from", "+68ms", "--to", "+75ms"]);
    let want: Vec<(u64, i64)> = all.iter().copied().filter(|(_, t)| (from..to).contains(t)).collect();
    assert_eq!(window, want);
    assert!(window[0].0 > 1, "the window starts after frame 1");
    let split = sample("compare/split-change.pcap");
    assert_eq!(decoded(&split, &["--from", "+30ms", "-c", "1"]), [(721, 1_767_225_600_030_000_000)]);
    for threads in ["1", "3"] {
        let r = report(&demo, &["--threads", threads, "--from", "+68ms", "--to", "+75ms"]);
        let mut cited = 0;
        for e in r["findings"].as_array().unwrap().iter().flat_map(|f| f["evidence"].as_array().unwrap()) {
            let (n, ts) = (e["frame"].as_u64().unwrap(), e["ts_ns"].as_i64().unwrap());
            assert!(all.contains(&(n, ts)), "evidence frame {n} at {ts} is not the capture's frame {n}");
            assert!((from..to).contains(&ts), "evidence outside the window: {e}");
            cited += 1;
        }
        assert!(cited > 0, "the demo's window holds findings with evidence");
    }
}

/// Bad times, `--from` not before `--to` and a window with no frame: status 2, said.
#[test]
fn bad_windows_are_usage_errors() {
    let f = sample("compare/split-change.pcap");
    for (args, says) in [
        (vec!["--from", "yesterday"], "\"yesterday\" is not a time"),
        (vec!["--to", "+5h"], "unknown unit \"h\""),
        (vec!["--from", "2026-01-01T00:00:00"], "give its zone"),
        (vec!["--from", "2026-02-30T00:00:00Z"], "no such date or time"),
        (vec!["--from", "+2s", "--to", "+1s"], "--from +2s is not before --to +1s"),
        (vec!["--from", "1767225600.5", "--to", "1767225600.5"], "is not before"),
        (vec!["--from", "+1s"], "no frame in the window from +1s"),
        (vec!["--to", "2025-01-01T00:00:00Z"], "no frame in the window to 2025-01-01T00:00:00Z"),
        // Mixed kinds: known to be empty once the first frame is read.
        (vec!["--from", "1767225600.05", "--to", "+40ms"], "no frame in the window"),
    ] {
        let mut a = vec!["report", "-r", f.as_str()];
        a.extend(args.iter().copied());
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", err(&o));
        assert!(err(&o).contains(says), "{a:?}: {}", err(&o));
        assert!(o.stdout.is_empty(), "{a:?}");
    }
    // The empty window's message says where the capture's frames are.
    let o = run(&["report", "-r", &f, "--from", "+1s"]);
    assert!(
        err(&o).contains("the capture's 1440 frame(s) run from 2026-01-01 00:00:00.000000000 UTC"),
        "{}",
        err(&o)
    );
    // The other commands that read captures take the window too, and check it alike.
    let o = run(&["decode", "-r", &f, "--from", "+2s", "--to", "+1s"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
}
