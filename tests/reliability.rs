//! Reliability under abuse (issue 15): a signal while libpcap compiles a huge filter stops
//! the process at once.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
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
