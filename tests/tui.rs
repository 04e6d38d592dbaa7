//! `rocescope tui` as a user drives it: in a tmux pane (160x45), keys sent, the screen read
//! back. Also: open errors are reported before the terminal is taken over. The tmux tests
//! skip (with a message) where tmux is not installed; `.ci/run` installs it.

mod common;

use common::Tmux;
use std::process::Command;
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rocescope")
}

#[test]
fn missing_file_is_an_error_before_the_terminal() {
    let o = Command::new(bin()).args(["tui", "-r", "/nonexistent/roce.pcap"]).output().expect("run");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/roce.pcap"), "names the file: {err}");
    assert!(!err.contains("\x1b[?1049h"), "never entered the alternate screen");
    assert!(o.stdout.is_empty(), "nothing drawn: {:?}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn browse_a_capture_in_tmux() {
    let sample = common::root().join("samples/nak-gobackn.pcap");
    // `; sleep` keeps the pane after rocescope exits, so the restored screen can be read.
    let cmd = format!("{} tui -r {}; echo EXITED $?; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    let s = t.wait_for("3 of 3");
    assert!(s.contains("0x31 10.0.0.1"), "the NAK'd QP is listed:\n{s}");
    assert!(s.contains("!! crit"), "and marked critical:\n{s}");
    // Open it: the detail names the gap, the NAK and the resend.
    t.keys(&["Enter"]);
    let s = t.wait_for("events");
    assert!(s.contains("NAK PSN Sequence Error"), "detail events:\n{s}");
    // Its packets, then one frame's tree and hex dump.
    t.keys(&["Enter"]);
    let s = t.wait_for("Packets");
    t.keys(&["Enter"]);
    let s2 = t.wait_for("Base Transport Header");
    assert!(s2.contains("0000  "), "hex dump shown:\n{s2}\n(before: {s})");
    // Help, then the Findings screen, then quit: the terminal comes back.
    t.keys(&["Escape", "Escape", "?"]);
    t.wait_for("quit");
    t.keys(&["Escape", "5"]);
    t.wait_for("Findings, worst first");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED 0");
    assert!(!s.contains("Findings, worst first"), "alternate screen left:\n{s}");
    assert!(t.alive());
}

#[test]
fn sflow_datagrams_are_unpacked_in_the_tui() {
    // The sampled headers are analysed (the QPs, at their agents' capture points) and listed
    // after their datagram, each named by its point, each opening its own tree.
    let sample = common::root().join("samples/sflow/demo-sflow.pcap");
    let cmd = format!("{} tui -r {}; echo EXITED $?; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    let s = t.wait_for("29 of 29");
    assert!(s.contains("sflow 10.255.0.1 ifIndex"), "agents are the capture points:\n{s}");
    assert!(s.contains("0x32 10.0.0.2"), "a sampled QP:\n{s}");
    t.keys(&["2"]);
    let s = t.wait_for("sFlow v5 agent 10.255.0.1 sub-agent 0 seq 1, 4 sampled headers");
    assert!(
        s.contains(
            "[sflow 10.255.0.1 ifIndex 3]      1    0.000000000 sFlow 1-in-4 | 10.0.0.1 → 10.0.0.2 RoCEv2"
        ),
        "{s}"
    );
    assert!(s.contains("[sflow 2001:db8::2 ifIndex 7]      2 "), "{s}");
    // The second sample of frame 1, not the datagram, opens.
    t.keys(&["Down", "Down", "Enter"]);
    let s = t.wait_for("Frame 1: 62 bytes on wire");
    assert!(s.contains("RC Acknowledge"), "{s}");
    t.keys(&["Escape", "q"]);
    t.wait_for("EXITED 0");
}

#[test]
fn each_frame_names_its_mirror_sessions_capture_point() {
    // Mirror sessions become capture points while reading: the frame list names each frame's
    // own, from the first frame on.
    let sample = common::root().join("samples/tunnels/two-sessions.pcap");
    let cmd = format!("{} tui -r {}; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("QPs");
    t.keys(&["2"]);
    let s = t.wait_for("[two-sessions.pcap [ERSPAN session 2]]      4 ");
    assert!(s.contains("[two-sessions.pcap [ERSPAN session 1]]      1 "), "{s}");
    assert!(s.contains("[two-sessions.pcap [ERSPAN session 1]]      5 "), "{s}");
}

#[test]
fn replay_unfolds_at_capture_speed() {
    // nak-gobackn spans 67 ms; at 0.03x that is about 2.2 s of replay.
    let sample = common::root().join("samples/nak-gobackn.pcap");
    let cmd = format!("{} tui --replay 0.03x -r {}; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    let early = t.wait_for("packets (");
    let started = Instant::now();
    let s = t.wait_for("24 packets (24 RoCE)");
    assert!(
        started.elapsed() >= Duration::from_millis(800) || !early.contains("24 packets"),
        "the replay did not wait for capture time:\n{early}"
    );
    assert!(!early.contains("24 packets (24 RoCE)"), "all frames at once:\n{early}");
    assert!(s.contains("(file)"), "finished:\n{s}");
    t.keys(&["q"]);
}

#[test]
fn replay_speed_is_checked() {
    let o = Command::new(bin()).args(["tui", "--replay", "fast", "-r", "x.pcap"]).output().expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a replay speed"));
}

#[test]
fn plain_read_prints_the_report_when_not_a_terminal() {
    let sample = common::root().join("samples/nak-gobackn.pcap");
    let o = Command::new(bin()).args(["-r", sample.to_str().unwrap()]).output().expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("rocescope report:"), "{out}");
    assert!(out.contains("FINDINGS (2 critical"), "{out}");
}

#[test]
fn without_a_terminal_it_says_what_to_run_instead() {
    // `rocescope tui -r FILE | head`: standard output is a pipe.
    let sample = common::root().join("samples/demo.pcap");
    let o = Command::new(bin())
        .args(["tui", "-r", sample.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the TUI needs a terminal, and standard output is not one"), "{err}");
    assert!(!err.contains("os error"), "no raw OS error: {err}");
    let suggested = format!("\n  {} report -r {}\n", bin(), sample.display());
    assert!(err.ends_with(&suggested), "the report command, with the user's file: {err}");
    assert!(o.stdout.is_empty(), "nothing drawn: {:?}", String::from_utf8_lossy(&o.stdout));

    // Several files, one with a space and a quote in its name, and --replay (a TUI option):
    // the suggestion keeps the files and options, drops --replay, and runs as printed.
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = dir.path().join("it's a capture.pcap");
    std::fs::copy(common::root().join("samples/rnr.pcap"), &odd).expect("copy");
    let o = Command::new(bin())
        .args(["tui", "--replay", "2x", "-r", sample.to_str().unwrap(), odd.to_str().unwrap()])
        .args(["--expect-dscp", "26"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let cmd = err.lines().last().expect("a suggestion").trim();
    assert!(
        !cmd.contains("--replay") && cmd.contains(" report -r ") && cmd.contains("--expect-dscp 26"),
        "{cmd}"
    );
    let ran = Command::new("sh").args(["-c", cmd]).output().expect("sh");
    // Exit 3: QoS violations, which only an expected DSCP finds: the option came along.
    assert_eq!(ran.status.code(), Some(3), "{cmd}: {}", String::from_utf8_lossy(&ran.stderr));
    let report = String::from_utf8_lossy(&ran.stdout);
    assert!(report.starts_with("rocescope report: demo.pcap + it's a capture.pcap"), "{report}");
}

#[test]
fn keys_come_from_the_terminal_when_stdin_is_not_one() {
    // Standard input redirected (as when it carries the capture): keys are read from the
    // controlling terminal, and the UI works.
    let sample = common::root().join("samples/nak-gobackn.pcap");
    let cmd = format!("{} tui -r {} < /dev/null; echo EXITED $?; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("3 of 3");
    t.keys(&["q"]);
    t.wait_for("EXITED 0");
    // No controlling terminal either (a new session): nowhere to read keys from.
    let cmd =
        format!("setsid -w {} tui -r {} < /dev/null; echo EXITED $?; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    let s = t.wait_for("EXITED");
    assert!(s.contains("EXITED 1"), "{s}");
    assert!(s.contains("there is none to read keys from"), "{s}");
    assert!(s.contains(&format!("report -r {}", sample.display())), "{s}");
}

#[test]
fn ctrl_u_clears_the_filter_line() {
    let sample = common::root().join("samples/nak-gobackn.pcap");
    let cmd = format!("{} tui -r {}; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("3 of 3");
    t.keys(&["/", "nak and qp=0x99"]);
    t.wait_for("/nak and qp=0x99");
    t.keys(&["C-w"]);
    let s = t.wait_for("/nak and  ");
    assert!(s.contains("invalid: empty term after and"), "{s}");
    t.keys(&["C-u"]);
    let s = t.wait_for("valid (Enter");
    let footer = s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(footer.starts_with("/  valid"), "Ctrl-U empties the line, no `u` typed: {footer:?}");
    t.keys(&["loss", "Enter"]);
    let s = t.wait_for("filter: loss");
    assert!(s.contains("3 of 3"), "the three lossy connections:\n{s}");
    t.keys(&["q"]);
}

/// A 12,000-character paste into the filter line, as keys (tmux `paste-buffer`) and as a
/// bracketed paste (`paste-buffer -p`): the Esc typed after it acts (the line's limit is
/// tested in the `tui` crate: its message is past the edge of a 160-column screen). Before, the TUI parsed and drew after each key, and
/// crossterm's edge-triggered reader left all but the first 1 KiB in the terminal until the
/// next key: the Esc never acted.
#[test]
fn a_long_paste_into_the_filter_line_is_taken_and_the_next_key_acts() {
    let sample = common::root().join("samples/nak-gobackn.pcap");
    let cmd = format!("{} tui -r {}; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("3 of 3");
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("paste.txt");
    std::fs::write(&text, &"nak or ".repeat(2_000)[..12_000]).unwrap();
    let tmux =
        |args: &[&str]| assert!(Command::new("tmux").args(args).status().unwrap().success(), "{args:?}");
    tmux(&["load-buffer", "-b", t.name(), text.to_str().unwrap()]);
    for bracketed in [false, true] {
        t.keys(&["/"]);
        t.wait_for("/  valid");
        let mut paste = vec!["paste-buffer", "-b", t.name(), "-t", t.name()];
        if bracketed {
            paste.push("-p");
        }
        tmux(&paste);
        t.wait_for("/nak or nak or");
        t.keys(&["Escape"]);
        let s = t.wait_for("? keys");
        assert!(s.contains("3 of 3"), "Esc went back to the filter before the paste:\n{s}");
    }
    t.keys(&["q"]);
}

#[test]
fn sigterm_gives_the_terminal_back() {
    let sample = common::root().join("samples/nak-gobackn.pcap");
    // The pane's shell reports the status and whether the terminal is back in cooked mode.
    let cmd = format!(
        "{} tui -r {}; echo EXITED $?; stty -a | grep -o -- '-\\?icanon' | sed 's/^/MODE /'; sleep 30",
        bin(),
        sample.display()
    );
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("3 of 3");
    let pid = String::from_utf8(
        std::process::Command::new("tmux")
            .args(["list-panes", "-F", "#{pane_pid}", "-t"])
            .arg(t.name())
            .output()
            .expect("tmux")
            .stdout,
    )
    .unwrap();
    // The pane runs `sh -c CMD`: signal its rocescope child.
    let ok = std::process::Command::new("pkill")
        .args(["-TERM", "-P", pid.trim(), "-f", "tui -r"])
        .status()
        .expect("pkill")
        .success();
    assert!(ok, "rocescope was running");
    let s = t.wait_for("EXITED");
    assert!(s.contains("EXITED 143"), "128 + SIGTERM:\n{s}");
    let s = t.wait_for("MODE");
    assert!(s.contains("MODE icanon") && !s.contains("MODE -icanon"), "cooked mode restored:\n{s}");
    assert!(!s.contains("3 of 3"), "alternate screen left:\n{s}");
}

#[test]
fn a_closed_terminal_ends_the_tui() {
    // A killed tmux session (a closed window, a dropped ssh connection) must not leave the
    // TUI spinning on a dead terminal for ever (it did, at full CPU: no SIGHUP came).
    let dir = tempfile::tempdir().unwrap();
    let name = format!("closed-terminal-{}.pcap", std::process::id());
    let path = dir.path().join(&name);
    std::fs::copy(common::root().join("samples/demo.pcap"), &path).unwrap();
    let cmd = format!("{} tui -r {}; sleep 30", bin(), path.display());
    let alive =
        || std::process::Command::new("pgrep").args(["-f", &name]).output().is_ok_and(|o| o.status.success());
    {
        let Some(t) = Tmux::start(&cmd) else { return };
        t.wait_for("connections");
        assert!(alive());
    } // dropped: the session is killed
    let start = std::time::Instant::now();
    while alive() && start.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let gone = !alive();
    if !gone {
        let _ = std::process::Command::new("pkill").args(["-9", "-f", &name]).status();
    }
    assert!(gone, "the TUI outlived its terminal by 5 s");
}

/// `--counters`: the NIC's counters beside the pause timelines (docs/counters.md).
#[test]
fn nic_counters_are_shown_beside_the_pause_timelines() {
    let root = common::root();
    let cmd = format!(
        "{} tui -r {} --counters {} --counters-host 10.0.0.5,02:00:00:00:00:05; sleep 30",
        bin(),
        root.join("samples/demo.pcap").display(),
        root.join("samples/counters/disagree.txt").display()
    );
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("182 packets");
    t.keys(&["3"]);
    let s = t.wait_for("NIC counters:");
    assert!(s.contains("(delta)"), "{s}");
    let line = s.lines().find(|l| l.contains("PFC pauses sent prio 3")).unwrap_or_else(|| panic!("{s}"));
    assert!(line.contains("12") && line.contains("capture_misses"), "{line}");
    t.keys(&["5"]);
    let s = t.wait_for("Findings, worst first");
    assert!(s.contains("the NIC sent 12 PFC pause frames on priority 3"), "{s}");
    t.keys(&["q"]);
}

#[test]
fn a_bad_counter_file_is_an_error_before_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "NIC statistics:\n     tx_prio3_pause: many\n").unwrap();
    let demo = common::root().join("samples/demo.pcap");
    let o = Command::new(bin())
        .args(["tui", "-r", demo.to_str().unwrap(), "--counters", bad.to_str().unwrap()])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.txt: line 2: counter `tx_prio3_pause` has the value `many`"), "{err}");
    assert!(!err.contains("\x1b[?1049h") && o.stdout.is_empty(), "never entered the terminal");
}

#[test]
fn the_congestion_screen_charts_priorities_and_qps() {
    // `6`: per priority the CE, CNP and pause rates on one time axis, then the QPs most
    // marked (the sender that does not react first); Enter opens that QP's detail.
    let sample = common::root().join("samples/cc-reaction.pcap");
    let cmd = format!("{} tui -r {} --bin 10us; sleep 30", bin(), sample.display());
    let Some(t) = Tmux::start(&cmd) else { return };
    t.wait_for("4 of 4");
    t.keys(&["6"]);
    let s = t.wait_for("QPs by CE marks");
    assert!(s.contains("cc-reaction.pcap | 0 to +2.626 ms | a column is"), "{s}");
    assert!(s.contains("--bin 10 µs"), "{s}");
    let row = |text: &str| s.lines().find(|l| l.contains(text)).unwrap_or_else(|| panic!("{text}:\n{s}"));
    assert!(row("prio 3: 6022 pkts").contains("Gb/s"), "{s}");
    assert!(row("82 CE (1.4%)").contains("CE %"), "{s}");
    assert!(row("prio 6: 24 CNPs only").contains("CNP/s"), "{s}");
    assert!(s.contains("busiest 10 µs: 58.00 Gb/s at +0.910 ms; most CE 2/2 at +2.270 ms"), "{s}");
    assert!(row("> 10.0.0.57 → 10.0.0.58").contains("CE %"), "{s}");
    assert!(row("QP 0x152 p3: 73 CE, 2 CNPs").contains("CNP/s"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("events");
    assert!(s.contains("10.0.0.57 → 10.0.0.58 QP 0x000152"), "{s}");
    assert!(s.contains("burst: busiest 10 µs: 1.74 Gb/s at +2.120 ms, most CE 2/2 at +2.270 ms"), "{s}");
    t.keys(&["q"]);
}
