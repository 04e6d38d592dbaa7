//! Reliability under abuse (issue 15): output that fails (a full disk, a reader that went
//! away) never panics; a signal while libpcap compiles a huge filter stops the process at
//! once.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn sample(name: &str) -> String {
    common::root().join("samples").join(name).display().to_string()
}

fn full() -> Stdio {
    Stdio::from(std::fs::File::options().write(true).open("/dev/full").expect("/dev/full"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every subcommand, the way it writes to standard output or standard error, and its error
/// paths. `dir` receives the files `capture` writes.
fn commands(dir: &Path) -> Vec<Vec<String>> {
    let demo = sample("demo.pcap");
    let out = dir.join("out.pcapng").display().to_string();
    let lines: &[&[&str]] = &[
        &[],
        &["interfaces"],
        &["-D"],
        &["interfaces", "--json"],
        &["--help"],
        &["--version"],
        &["help"],
        &["decode", "--help"],
        &["report", "-h"],
        &["completions", "bash"],
        &["man"],
        &["decode", "-r", &demo],
        &["decode", "--json", "-r", &demo],
        &["decode", "-V", "-r", &demo],
        &["decode", "-T", "fields", "-e", "frame", "-E", "header=y", "-r", &demo],
        &["decode", "-q", "-r", &demo],
        &["decode", "-q", "-Y", "nak", "-r", &demo],
        &["decode", "-r", &demo, "-r", &demo],
        &["report", "-r", &demo],
        &["report", "--json", "-r", &demo],
        &["report", "-r", &sample("truncated.pcap")],
        &["-r", &demo],
        &["capture", "-r", &demo, "-w", "-"],
        &["capture", "-r", &demo, "-w", &out],
        &["tui", "-r", &demo],
        &["export", "--no-http", "--push", "-", "-r", &demo],
        // Error paths: a missing file, a usage error, a bad field, a missing source.
        &["decode", "-r", "/nonexistent/x.pcap"],
        &["bogus"],
        &["decode", "-T", "fields", "-e", "nope", "-r", &demo],
        &["decode", "-e", "frame", "-r", &demo],
        &["decode", "-Y", "qp=(", "-r", &demo],
        &["report"],
        &["report", "--baseline", "/nonexistent/b.toml", "-r", &demo],
    ];
    lines.iter().map(|l| l.iter().map(|s| s.to_string()).collect()).collect()
}

fn no_panic(what: &str, o: &Output) {
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert_ne!(o.status.code(), Some(101), "{what}: a panic\n{all}");
    assert!(o.status.code().is_some(), "{what}: killed by a signal: {:?}", o.status);
    assert!(!all.contains("panicked"), "{what}: {all}");
}

#[test]
fn a_full_stdout_is_an_error_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for args in commands(dir.path()) {
        let o =
            bin().args(&args).stdin(Stdio::null()).stdout(full()).stderr(Stdio::piped()).output().unwrap();
        no_panic(&format!("{args:?} > /dev/full"), &o);
    }
    // What writes to standard output says it could not, and exits 1: clap's help and
    // version (it ignored the failure and exited 0), the interface list (it panicked).
    for args in [
        &["interfaces"][..],
        &["-D"],
        &["interfaces", "--json"],
        &["--help"],
        &["--version"],
        &["decode", "--help"],
        &["completions", "bash"],
        &["man"],
        &["report", "-r", &sample("demo.pcap")],
        &["decode", "-r", &sample("demo.pcap")],
        &["capture", "-r", &sample("demo.pcap"), "-w", "-"],
    ] {
        let o = bin().args(args).stdout(full()).stderr(Stdio::piped()).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("rocescope: ") && err.contains("No space left on device"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: said once: {err}");
    }
}

#[test]
fn a_full_stderr_is_an_error_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for args in commands(dir.path()) {
        let o =
            bin().args(&args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(full()).output().unwrap();
        no_panic(&format!("{args:?} 2> /dev/full"), &o);
    }
    // A command whose message could not be written does not exit 0 (GNU tools do the same);
    // one that says nothing on stderr keeps its status.
    let demo = sample("demo.pcap");
    let out = dir.path().join("x.pcapng");
    for (args, code) in [
        (vec!["decode", "-q", "-r", &demo], 1),
        (vec!["capture", "-r", &demo, "-w", out.to_str().unwrap()], 1),
        (vec!["decode", "-r", "/nonexistent/x.pcap"], 1),
        (vec!["bogus"], 2),
        (vec!["decode", "-r", &demo], 0),
        (vec!["report", "-r", &demo], 3),
    ] {
        let o = bin().args(&args).stdout(Stdio::null()).stderr(full()).output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
}

/// A pipe whose reader is already gone: every write to it fails with EPIPE.
fn widowed_pipe() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().expect("true");
    let end = reader.stdin.take().expect("pipe");
    reader.wait().expect("true");
    Stdio::from(end)
}

#[test]
fn a_reader_that_went_away_ends_the_command_quietly() {
    let demo = sample("demo.pcap");
    for args in [
        &["interfaces"][..],
        &["interfaces", "--json"],
        &["--help"],
        &["--version"],
        &["completions", "zsh"],
        &["man"],
        &["decode", "-r", &demo],
        &["decode", "--json", "-r", &demo],
        &["report", "-r", &demo],
        &["report", "--json", "-r", &demo],
    ] {
        let o = bin().args(args).stdout(widowed_pipe()).stderr(Stdio::piped()).output().unwrap();
        no_panic(&format!("{args:?} | (closed)"), &o);
        // As `| head` expects: no error, nothing said. (report keeps its audit status.)
        let want = if args[0] == "report" { 3 } else { 0 };
        assert_eq!(o.status.code(), Some(want), "{args:?}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{args:?}: {}", text(&o.stderr));
    }
}

/// Root can capture on `lo`; others skip.
fn root() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        common::skip("signal tests: a live capture on lo needs root");
    }
    root
}

/// A filter libpcap takes more than a minute to compile (2000 hosts; about 37 kB, well
/// under the 128 kB a single argument may hold).
fn huge_filter() -> String {
    (0..2000).map(|i| format!("host 10.0.{}.{}", i / 256, i % 256)).collect::<Vec<_>>().join(" or ")
}

/// Send `signal` one second into the filter's compile; the process must be gone within two.
fn stops_during_the_compile(args: &[&str], signal: &str, code: i32) {
    let filter = huge_filter();
    let mut child = bin()
        .args(args)
        .args(["-i", "lo", "-f", &filter])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(child.try_wait().unwrap().is_none(), "{args:?} ended before the signal");
    assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
    let sent = Instant::now();
    while child.try_wait().unwrap().is_none() && sent.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let gone = child.try_wait().unwrap();
    if gone.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let status = gone.unwrap_or_else(|| panic!("{args:?}: still running 2 s after {signal}"));
    assert_eq!(status.code(), Some(code), "{args:?} {signal}");
}

#[test]
fn a_signal_during_a_huge_filter_compile_stops_at_once() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.pcapng");
    stops_during_the_compile(&["capture", "-w", out.to_str().unwrap()], "-TERM", 143);
    stops_during_the_compile(&["decode"], "-INT", 130);
    stops_during_the_compile(&["report"], "-TERM", 143);
}

/// `println!`, `print!`, `eprintln!` and `eprint!` panic when the output fails: none in the
/// binary or the TUI (driver.rs's notices are being moved by another change).
#[test]
fn nothing_prints_with_the_panicking_macros() {
    let mut found = Vec::new();
    for dir in ["src", "src/output", "tui/src"] {
        for entry in std::fs::read_dir(common::root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("src/driver.rs") {
                continue;
            }
            let src = std::fs::read_to_string(&path).unwrap();
            // Up to the unit tests, which may print.
            let code = src.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                let l = line.trim_start();
                if l.starts_with("//") {
                    continue;
                }
                if ["println!", "print!", "eprintln!", "eprint!"].iter().any(|m| {
                    l.match_indices(m).any(|(i, _)| {
                        i == 0 || !l.as_bytes()[i - 1].is_ascii_alphanumeric() && l.as_bytes()[i - 1] != b'_'
                    })
                }) {
                    found.push(format!("{}:{}: {l}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "use crate::stdio (note!, out) instead:\n{}", found.join("\n"));
}
