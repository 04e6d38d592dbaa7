//! The exit status policy (README "Exit status", `src/exit.rs`, every command's `--help` and man page):
//! one table for every command, a test per row and command. 0 done, 1 could not read, 2
//! usage, 3 violations of the expectations the user gave (report), 4 the gate (report's
//! findings, compare's verdicts, at or above `--fail-on`), 5 nothing to compare (compare),
//! 128 + a signal's number when cut short.

mod common;

use std::process::{Command, Output};

fn report(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).arg("report").args(args).output().expect("run rocescope")
}

fn sample(name: &str) -> String {
    common::root().join("samples").join(name).display().to_string()
}

fn status(args: &[&str]) -> Option<i32> {
    report(args).status.code()
}

#[test]
fn analysed_is_0_whatever_was_found_without_expectations() {
    // Two CRITICAL findings (a NAK'd connection): analysed, status 0 by default.
    let nak = sample("nak-gobackn.pcap");
    assert_eq!(status(&["-q", "-r", &nak]), Some(0));
    // The demo's pause on a priority no RoCE uses is reported as a violation, but no
    // expectation the user gave names it: status 0 (it was 3).
    let demo = sample("demo.pcap");
    let o = report(&["--json", "-r", &demo]);
    assert_eq!(o.status.code(), Some(0));
    let r = common::report_json(&o.stdout);
    let v = r["audit"]["violations"].as_array().expect("violations");
    assert!(v.iter().any(|v| v["what"] == "pause_priority"), "still reported: {v:?}");
}

#[test]
fn could_not_read_is_1() {
    let o = report(&["-q", "-r", "/nonexistent/roce.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/roce.pcap"));
    // A capture cut short: what was read is analysed, and the run still says 1.
    let dir = tempfile::tempdir().expect("tempdir");
    let cut = dir.path().join("cut.pcap");
    let bytes = std::fs::read(sample("demo.pcap")).expect("demo");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    assert_eq!(status(&["-q", "-r", cut.to_str().unwrap(), "--fail-on", "never"]), Some(1));
}

#[test]
fn usage_is_2() {
    assert_eq!(status(&["-q", "-r", &sample("demo.pcap"), "--fail-on", "sometimes"]), Some(2));
    assert_eq!(status(&["-q", "-r", &sample("demo.pcap"), "--expect-dscp", "64"]), Some(2));
    // A --from/--to window that holds no frame: before reading (--from not before --to), or
    // once the capture is read (the demo lasts 80 ms).
    assert_eq!(status(&["-q", "-r", &sample("demo.pcap"), "--from", "+2s", "--to", "+1s"]), Some(2));
    assert_eq!(status(&["-q", "-r", &sample("demo.pcap"), "--from", "+1s"]), Some(2));
}

#[test]
fn violations_of_expectations_given_are_3() {
    let demo = sample("demo.pcap");
    assert_eq!(status(&["-q", "-r", &demo, "--expect-dscp", "26", "--expect-cnp-dscp", "48"]), Some(3));
    // A pause on a priority the lossless list leaves out is the user's expectation.
    let storm = sample("pfc-storm.pcap");
    assert_eq!(status(&["-q", "-r", &storm, "--lossless", "3"]), Some(3));
    // On a priority the list names (though no RoCE uses it): derived, not failed.
    assert_eq!(status(&["-q", "-r", &storm, "--lossless", "3,5"]), Some(0));
    // The same capture and expectations with nothing to violate.
    let rc = sample("rc-normal.pcap");
    assert_eq!(status(&["-q", "-r", &rc, "--expect-dscp", "26"]), Some(0));
}

#[test]
fn findings_at_the_fail_on_level_are_4() {
    let nak = sample("nak-gobackn.pcap"); // 2 critical, 0 warning
    let rnr = sample("rnr.pcap"); // 0 critical, 1 warning
    let rc = sample("rc-normal.pcap"); // nothing
    assert_eq!(status(&["-q", "-r", &nak, "--fail-on", "critical"]), Some(4));
    assert_eq!(status(&["-q", "-r", &nak, "--fail-on", "warning"]), Some(4));
    assert_eq!(status(&["-q", "-r", &rnr, "--fail-on", "critical"]), Some(0));
    assert_eq!(status(&["-q", "-r", &rnr, "--fail-on", "warning"]), Some(4));
    assert_eq!(status(&["-q", "-r", &rc, "--fail-on", "warning"]), Some(0));
    // Findings come before the audit: 4 where both apply (a violation is also a finding);
    // the audit alone gives 3.
    let demo = sample("demo.pcap");
    assert_eq!(status(&["-q", "-r", &demo, "--expect-dscp", "26", "--fail-on", "critical"]), Some(4));
    assert_eq!(status(&["-q", "-r", &demo, "--expect-dscp", "26"]), Some(3));
}

#[test]
fn fail_on_info_fails_on_any_finding() {
    // One INFO finding (a QP's new life at PSN 0), nothing worse.
    let restart = sample("qp-restart.pcap");
    assert_eq!(status(&["-q", "-r", &restart, "--fail-on", "warning"]), Some(0));
    assert_eq!(status(&["-q", "-r", &restart, "--fail-on", "info"]), Some(4));
    assert_eq!(status(&["-q", "-r", &sample("rc-normal.pcap"), "--fail-on", "info"]), Some(0));
}

/// The gate is the same number in `report` and `compare`, and `--fail-on info` works in both.
#[test]
fn the_gate_is_4_in_report_and_compare_and_nothing_to_compare_is_5() {
    let compare = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .arg("compare")
            .args(args)
            .output()
            .expect("run")
            .status
            .code()
    };
    let cmp = |n: &str| sample(&format!("compare/{n}"));
    let (b, a) = (cmp("ecn-off-before.pcap"), cmp("ecn-off-after.pcap"));
    assert_eq!(compare(&["-q", &b, &a]), Some(4));
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "critical"]), Some(4));
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "never"]), Some(0));
    assert_eq!(compare(&["-q", &b, &b, "--fail-on", "info"]), Some(0));
    let (nb, na) = (cmp("no-roce-before.pcap"), cmp("no-roce-after.pcap"));
    assert_eq!(compare(&["-q", &nb, &na, "--fail-on", "never"]), Some(5));
    assert_eq!(compare(&["-q", &b, "/nonexistent/after.pcap"]), Some(1));
    assert_eq!(compare(&["-q", &b]), Some(2));
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "sometimes"]), Some(2));
    // An empty level and two levels are usage errors, as in report (issue 40: `never,info`
    // let the last win, `""` passed as the default).
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", ""]), Some(2));
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "never,info"]), Some(2));
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "never", "--fail-on", "critical"]), Some(2));
    assert_eq!(status(&["-q", "-r", &sample("demo.pcap"), "--fail-on", ""]), Some(2));
    // A level with thresholds is one level.
    assert_eq!(compare(&["-q", &b, &a, "--fail-on", "never,loss-ppm=5"]), Some(0));
    // Standard input as both sides: a usage error (it said "AFTER: standard input is empty", 1).
    assert_eq!(compare(&["-q", "-", "-"]), Some(2));
}

/// The commands whose `--help` and man page carry the exit-status table.
const COMMANDS: [&str; 7] = ["decode", "capture", "interfaces", "report", "tui", "export", "compare"];

/// README.md's "Exit status" table, each row as `STATUS WHEN` with the Markdown's backticks
/// taken out and its spaces collapsed: what `--help` and the man pages must say, row by row.
fn readme_rows() -> Vec<String> {
    let readme = std::fs::read_to_string(common::root().join("README.md")).expect("README.md");
    let at = readme.find("| status | when |").expect("README.md has the exit-status table");
    let rows: Vec<String> = readme[at..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            let row = l.trim_start_matches("| ").trim_end_matches(" |").replacen(" | ", " ", 1);
            flat(&row.replace('`', ""))
        })
        .collect();
    assert!(rows.len() >= 7, "{rows:?}");
    rows
}

/// `text` with every run of white space made one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every command prints the one table in its `--help`, row by row as README.md shows it, and 1
/// and 2 mean the same in each.
#[test]
fn every_command_gives_the_one_table_and_the_same_1_and_2() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run");
    let rows = readme_rows();
    for cmd in COMMANDS {
        let o = run(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}");
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains("Exit status (the same in every command"), "{cmd} --help: {help}");
        let help = flat(&help);
        for row in &rows {
            assert!(help.contains(row.as_str()), "{cmd} --help lacks the README's row {row:?}: {help}");
        }
        assert_eq!(run(&[cmd, "--no-such-option"]).status.code(), Some(2), "{cmd}");
    }
    for cmd in ["decode", "report", "export"] {
        let o = run(&[cmd, "-r", "/nonexistent/roce.pcap"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Every command's man page carries the same table, row by row.
#[test]
fn every_man_page_gives_the_one_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run rocescope man");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = readme_rows();
    for cmd in COMMANDS {
        let page = dir.path().join(format!("rocescope-{cmd}.1"));
        let roff = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        // The page's text as man shows it: roff's escapes undone, its requests left out.
        let text: String = roff
            .lines()
            .filter(|l| !l.starts_with('.'))
            .map(|l| {
                l.replace("\\-", "-")
                    .replace("\\(aq", "'")
                    .replace("\\*(Aq", "'")
                    .replace("\\&", "")
                    .replace("\\\\", "\\")
            })
            .collect::<Vec<_>>()
            .join(" ");
        let text = flat(&text);
        assert!(text.contains("Exit status (the same in every command"), "rocescope-{cmd}.1: {text}");
        for row in &rows {
            assert!(text.contains(row.as_str()), "rocescope-{cmd}.1 lacks the README's row {row:?}: {text}");
        }
    }
}

#[test]
fn never_is_0_for_anything_analysed() {
    let demo = sample("demo.pcap");
    assert_eq!(status(&["-q", "-r", &demo, "--expect-dscp", "26", "--fail-on", "never"]), Some(0));
    assert_eq!(status(&["-q", "-r", &sample("nak-gobackn.pcap"), "--fail-on", "never"]), Some(0));
}

/// Ctrl-C while compare reads a side: no verdict from half a capture, a word saying so, and
/// 130 as every command (issue 40: it died on the signal without a word).
#[test]
fn compare_cut_short_by_a_signal_says_so_and_exits_130() {
    use rocescope_decoder::build::{IbRepr, RoceV2Frame};
    use rocescope_decoder::{BthRepr, Opcode, OpcodeOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.pcap");
    let frames: Vec<Vec<u8>> = (0..64u8)
        .map(|q| {
            let bth =
                BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x100 + u32::from(q), ..Default::default() };
            let ib = IbRepr { bth, payload: vec![0xab; 64], ..Default::default() };
            RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], common::ipv4(1, q.max(2)), ib)
                .build(OpcodeOptions::default())
        })
        .collect();
    common::repeated_capture(&path, &frames, 3_000_000);
    let child = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["compare", "-q"])
        .args([&path, &path])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::interrupt_after(child, 700);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT: no verdict"), "{err}");
}
