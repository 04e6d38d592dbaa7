//! Reliability under abuse (issue 15): output that fails (a full disk, a reader that went
//! away) never panics; names holding control characters never reach the terminal raw; a
//! signal while libpcap compiles a huge filter stops the process at once.

mod common;

use std::path::{Path, PathBuf};
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
        (vec!["report", "-r", &demo, "--expect-dscp", "26"], 3),
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
        // As `| head` expects: no error, nothing said (the demo without expectations fails
        // nothing: status 0, README "Exit status").
        let want = 0;
        assert_eq!(o.status.code(), Some(want), "{args:?}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{args:?}: {}", text(&o.stderr));
    }
}

/// Output a terminal shows: no control byte but the line feed and tab, no ESC, no DEL, no
/// C1 control, no bidi override.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let s = text(bytes);
    for (i, c) in s.char_indices() {
        let bad = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!bad, "{what}: raw {c:?} at byte {i}:\n{s}");
    }
}

/// A directory with two copies of `sample` whose names hold ESC (an OSC title sequence),
/// BEL, CR, a line feed and U+202E, and a file of the same kind of name that is no capture.
fn hostile_names(dir: &Path, sample_name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let a = dir.join("a\x1b]0;owned\x07\r\nb\u{202e}gpj.pcap");
    let b = dir.join("b\x1b[31mred\x1b[0m.pcap");
    let bad = dir.join("bad\x1b]0;owned\x07\r\n.pcap");
    std::fs::copy(common::root().join("samples").join(sample_name), &a).unwrap();
    std::fs::copy(common::root().join("samples").join(sample_name), &b).unwrap();
    std::fs::write(&bad, b"not a capture at all\n").unwrap();
    (a, b, bad)
}

#[test]
fn names_with_control_characters_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, bad) = hostile_names(dir.path(), "pfc-storm.pcap");
    let out_file = dir.path().join("w\x1b]0;owned\x07.pcapng");
    let (a, b, bad, out_file) =
        (a.to_str().unwrap(), b.to_str().unwrap(), bad.to_str().unwrap(), out_file.to_str().unwrap());
    let runs: Vec<Vec<&str>> = vec![
        vec!["report", "-r", a],
        vec!["report", "-r", a, "-r", b],
        vec!["decode", "-r", a],
        vec!["decode", "-r", a, "-r", b],
        vec!["decode", "-V", "-c", "2", "-r", a, "-r", b],
        vec!["decode", "-T", "fields", "-e", "frame", "-e", "point", "-r", a, "-r", b],
        vec!["decode", "--json", "-r", a, "-r", b],
        vec!["report", "--json", "-r", a, "-r", b],
        vec!["capture", "-r", a, "-w", out_file],
        vec!["decode", "-r", bad],
        vec!["report", "-r", bad],
        vec!["report", "-r", a, "-r", bad],
        vec!["tui", "-r", a],
        vec!["report", "--baseline", bad, "-r", a],
    ];
    for args in runs {
        let o = bin().args(&args).stdin(Stdio::null()).output().unwrap();
        no_panic(&format!("{args:?}"), &o);
        assert_terminal_safe(&format!("{args:?} stdout"), &o.stdout);
        assert_terminal_safe(&format!("{args:?} stderr"), &o.stderr);
    }
    // Escaped as `ls --quoting-style=escape` would, so the name can still be read.
    let o = bin().args(["report", "-r", a, "-r", b]).output().unwrap();
    let s = text(&o.stdout);
    assert!(s.contains("a\\x1b]0;owned\\x07\\r\\nb\\u{202e}gpj.pcap + b\\x1b[31mred\\x1b[0m.pcap"), "{s}");
    assert!(s.contains("(at b\\x1b[31mred\\x1b[0m.pcap)"), "findings quote the point escaped:\n{s}");
    // (The line feed in this one is the capture crate's message to escape: a raw one breaks
    // the line but drives nothing.)
    let o = bin().args(["decode", "-r", bad]).output().unwrap();
    assert!(text(&o.stderr).contains("bad\\x1b]0;owned\\x07\\r"), "{}", text(&o.stderr));
    // The TUI's advice (no terminal here) quotes the name for the shell, escapes and all.
    let o = bin().args(["tui", "-r", a]).output().unwrap();
    assert!(text(&o.stderr).contains("report -r $'"), "{}", text(&o.stderr));
    // JSON keeps the names exact (escaped as JSON: \u001b, \u202e).
    let o = bin().args(["report", "--json", "-r", a, "-r", b]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["points"][0]["name"], "a\x1b]0;owned\x07\r\nb\u{202e}gpj.pcap");
}

/// A network namespace, removed on drop.
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

#[test]
fn a_hostile_interface_name_is_escaped() {
    // Linux refuses only '/', ':' and white space in an interface name: ESC and BEL pass.
    if !root() {
        return;
    }
    let ns = Netns(format!("rsrel{}", std::process::id()));
    let name = "e\x1b]0;o\x07";
    let ip = |args: &[&str]| Command::new("ip").args(args).status().is_ok_and(|s| s.success());
    if !(ip(&["netns", "add", &ns.0])
        && ip(&["-n", &ns.0, "link", "add", name, "type", "veth", "peer", "name", "p1"])
        && ip(&["-n", &ns.0, "link", "set", name, "up"])
        && ip(&["-n", &ns.0, "link", "set", "p1", "up"]))
    {
        common::skip("could not create a namespace and a veth pair");
        return;
    }
    let rocescope = |args: &[&str]| {
        Command::new("ip")
            .args(["netns", "exec", &ns.0, env!("CARGO_BIN_EXE_rocescope")])
            .args(args)
            .output()
            .unwrap()
    };
    for args in [&["-D"][..], &["interfaces", "--json"], &["report", "-i", name, "--duration", "1"]] {
        let o = rocescope(args);
        no_panic(&format!("{args:?}"), &o);
        assert_terminal_safe(&format!("{args:?} stdout"), &o.stdout);
        assert_terminal_safe(&format!("{args:?} stderr"), &o.stderr);
        assert!(
            text(&o.stdout).contains(r"e\x1b]0;o\x07") || text(&o.stdout).contains(r"e\u001b]0;o\u0007"),
            "{args:?}: {}",
            text(&o.stdout)
        );
    }
}

/// Kills the child when dropped, so a failed assertion leaves no server behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_exporter_names_a_hostile_file_escaped() {
    use std::io::{BufRead, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (a, _, _) = hostile_names(dir.path(), "rc-normal.pcap");
    let mut r = Running(
        bin()
            .args(["export", "--listen", "127.0.0.1:0", "-r"])
            .arg(&a)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // "rocescope: exporting NAME on http://127.0.0.1:PORT/metrics"
    let mut err = std::io::BufReader::new(r.0.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_terminal_safe("export's first line", line.as_bytes());
    assert!(line.contains("a\\x1b]0;owned\\x07\\r\\nb\\u{202e}gpj.pcap"), "{line}");
    let addr =
        line.split("http://").nth(1).and_then(|s| s.split('/').next()).unwrap_or_else(|| panic!("{line}"));
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET / HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut page = Vec::new();
    s.read_to_end(&mut page).unwrap();
    let body = text(&page).split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    assert_terminal_safe("the index page", body.as_bytes());
    assert!(body.contains("a\\x1b]0;owned\\x07\\r\\nb\\u{202e}gpj.pcap"), "{body}");
}

#[test]
fn the_tui_shows_a_hostile_name_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _, _) = hostile_names(dir.path(), "nak-gobackn.pcap");
    // The name goes through a script: single quotes carry any byte but the quote itself.
    let script = dir.path().join("run.sh");
    let cmd = format!("exec '{}' tui -r '{}'\n", env!("CARGO_BIN_EXE_rocescope"), a.display());
    std::fs::write(&script, cmd).unwrap();
    let Some(t) = common::Tmux::start(&format!("sh {}; sleep 30", script.display())) else { return };
    let s = t.wait_for("3 of 3");
    assert!(
        s.contains("a\\x1b]0;owned\\x07\\r\\nb\\u{202e}gpj.pcap"),
        "the header names the file escaped:\n{s}"
    );
    assert!(!t.title().contains("owned"), "the title was set: {}", t.title());
    t.keys(&["q"]);
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
/// binary or the TUI.
#[test]
fn nothing_prints_with_the_panicking_macros() {
    let mut found = Vec::new();
    for dir in ["src", "src/output", "tui/src"] {
        for entry in std::fs::read_dir(common::root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
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

/// `--counters` and `--baseline` read regular files of at most 4 MiB: `/dev/zero`, a
/// directory or a 5 MiB file is refused at once with a clear error (they were read until
/// memory ran out), and a real counter file still reads.
#[test]
fn small_input_files_are_read_with_a_limit() {
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let sample = common::root().join("samples/rc-normal.pcap");
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.txt");
    std::fs::write(&big, vec![b'#'; 5 << 20]).unwrap();
    for (opt, path, says) in [
        ("--counters", std::path::Path::new("/dev/zero"), "not a regular file"),
        ("--baseline", std::path::Path::new("/dev/zero"), "not a regular file"),
        ("--counters", dir.path(), "not a regular file"),
        ("--counters", big.as_path(), "more than the 4194304"),
        ("--baseline", big.as_path(), "more than the 4194304"),
    ] {
        let o = std::process::Command::new(bin)
            .args(["report", "-r"])
            .arg(&sample)
            .arg(opt)
            .arg(path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{opt} {}: {err}", path.display());
        assert!(err.contains(says), "{opt} {}: {err}", path.display());
    }
    let counters = common::root().join("samples/counters/single.txt");
    let o = std::process::Command::new(bin)
        .args(["report", "-r"])
        .arg(&sample)
        .arg("--counters")
        .arg(&counters)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // At the limit: a baseline of exactly 4 MiB (comments) is read; one byte more is not.
    let limit = 4usize << 20;
    let mut at = b"roce_dscp = 26\n".to_vec();
    while at.len() < limit {
        let line = b"# padding to the limit of a small input file\n";
        at.extend_from_slice(&line[..line.len().min(limit - at.len())]);
    }
    at.truncate(limit - 1);
    at.push(b'\n');
    let at_limit = dir.path().join("at-limit.toml");
    std::fs::write(&at_limit, &at).unwrap();
    let over = dir.path().join("over-limit.toml");
    at.push(b'\n');
    std::fs::write(&over, &at).unwrap();
    let run = |baseline: &Path| {
        let o = Command::new(bin)
            .args(["report", "-r"])
            .arg(&sample)
            .arg("--baseline")
            .arg(baseline)
            .output()
            .unwrap();
        (o.status.code(), text(&o.stderr))
    };
    let (code, err) = run(&at_limit);
    assert!(matches!(code, Some(0 | 3)), "a baseline of exactly 4 MiB: {code:?} {err}");
    let (code, err) = run(&over);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("holds 4194305 bytes, more than the 4194304 a baseline may have"), "{err}");
}

/// A FIFO given as a counter file or baseline is refused at once, neither opened (opening
/// one waits for a writer) nor read (a writer could send forever).
#[test]
fn a_fifo_as_a_small_input_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("counters.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for opt in ["--counters", "--baseline"] {
        let mut child = bin()
            .args(["report", "-r", &sample("rc-normal.pcap"), opt])
            .arg(&fifo)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{opt} FIFO: still waiting after 20 s");
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{opt}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("is not a regular file"), "{opt}: {}", text(&o.stderr));
    }
}

/// An output that is also an input is refused before anything is written (by file identity:
/// a symlink or a hard link to the input is the input), with status 2 and the input
/// untouched: `capture -r F -w F` truncated F, `export -r F --push F` appended NDJSON to it.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("in.pcap");
    std::fs::copy(common::root().join("samples/rc-normal.pcap"), &f).unwrap();
    let before = std::fs::read(&f).unwrap();
    let link = dir.path().join("link.pcap");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let hard = dir.path().join("hard.pcap");
    std::fs::hard_link(&f, &hard).unwrap();
    let counters = dir.path().join("counters.txt");
    std::fs::copy(common::root().join("samples/counters/single.txt"), &counters).unwrap();
    let (fs, ls, hs, cs) =
        (f.to_str().unwrap(), link.to_str().unwrap(), hard.to_str().unwrap(), counters.to_str().unwrap());
    let cases: [&[&str]; 10] = [
        &["capture", "-r", fs, "-w", fs],
        &["capture", "-r", fs, "-w", hs],
        &["capture", "-r", ls, "-w", fs],
        &["capture", "-r", fs, "-w", fs, "-C", "1", "-W", "2"],
        &["export", "-r", fs, "--no-http", "--push", ls],
        &["export", "-r", fs, "--no-http", "--push", cs, "--counters", cs],
        &["report", "-r", fs, "--parquet", fs],
        &["report", "-r", hs, "--parquet", ls],
        &["report", "-r", fs, "--parquet", cs, "--counters", cs],
        &["report", "-r", fs, "--json", "--parquet", hs, "--baseline", hs],
    ];
    for args in cases {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is the input") && err.contains("never writes over what it reads"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), before, "{args:?} changed the input");
    }
    // Another file is fine.
    let out = dir.path().join("out.pcapng");
    let o = std::process::Command::new(bin)
        .args(["capture", "-q", "-r", fs, "-w", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `report --parquet DIR` where DIR holds the names the tables would take, as links to the
/// input capture (a hard link, a symlink): the input is never replaced or written through;
/// the tables take the next free suffix and the run says so.
#[test]
fn parquet_tables_never_replace_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rc-normal.pcap");
    std::fs::copy(sample("rc-normal.pcap"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = dir.path().join("tables");
    std::fs::create_dir(&out).unwrap();
    let name = |t: &str| out.join(format!("{t}-rc-normal-20260101T000000Z.parquet"));
    std::fs::hard_link(&input, name("flows")).unwrap();
    std::os::unix::fs::symlink(&input, name("packets")).unwrap();
    std::fs::hard_link(&input, name("intervals")).unwrap();
    let o = bin().args(["report", "-q", "-r"]).arg(&input).arg("--parquet").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input changed");
    for t in ["flows", "packets", "intervals"] {
        assert_eq!(std::fs::read(name(t)).unwrap(), before, "{t}: the link to the input changed");
        let taken = out.join(format!("{t}-rc-normal-20260101T000000Z-2.parquet"));
        assert!(std::fs::read(&taken).unwrap().starts_with(b"PAR1"), "{t}: no table at the next suffix");
    }
}

/// A ring's file names can be guessed (`STEM_NNNNN_TIME.EXT`): a symlink planted at the next
/// ones, pointing at a victim file, is not written through. The ring refuses to replace it
/// (status 1, naming it) and the victim keeps its bytes (it held a pcapng before).
#[test]
fn ring_files_are_never_written_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    for t in now.saturating_sub(2)..now + 30 {
        let (days, secs) = (t / 86_400, t % 86_400);
        let (y, m, d) = civil_from_days(days);
        let stamp = format!("{y:04}{m:02}{d:02}{:02}{:02}{:02}", secs / 3600, secs / 60 % 60, secs % 60);
        std::os::unix::fs::symlink(&victim, dir.path().join(format!("ring_00001_{stamp}.pcapng"))).unwrap();
    }
    let o = bin()
        .args(["capture", "-q", "-r", &sample("rc-normal.pcap"), "-C", "0.01", "-W", "3", "-w"])
        .arg(dir.path().join("ring.pcapng"))
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot create the ring file") && err.contains("never replaces one"), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me", "the ring wrote through a planted link");
}

/// Days since 1970-01-01 as a proleptic Gregorian (year, month, day) (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// `man --dir DIR` writes each page under a temporary name and renames it into place: a
/// symlink planted at a page's name is replaced by the page, never written through, and a
/// hard link's other name keeps its bytes. Leftovers of dead runs go.
#[test]
fn man_pages_are_never_written_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    let pages = dir.path().join("man");
    std::fs::create_dir(&pages).unwrap();
    std::os::unix::fs::symlink(&victim, pages.join("rocescope-report.1")).unwrap();
    let kept = dir.path().join("kept.txt");
    std::fs::write(&kept, b"mine").unwrap();
    std::fs::hard_link(&kept, pages.join("rocescope.1")).unwrap();
    let dead = pages.join(".rocescope-tui.1.2147483646.AbC123.tmp");
    std::fs::write(&dead, b"partial").unwrap();
    let o = bin().args(["man", "--dir"]).arg(&pages).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me", "the page was written through a symlink");
    assert_eq!(std::fs::read(&kept).unwrap(), b"mine", "the page was written into a hard link");
    let report = std::fs::symlink_metadata(pages.join("rocescope-report.1")).unwrap();
    assert!(report.file_type().is_file(), "the link was not replaced");
    let page = std::fs::read_to_string(pages.join("rocescope-report.1")).unwrap();
    assert!(page.contains(".TH rocescope-report 1"), "{page}");
    assert!(!dead.exists(), "a dead run's leftover stays");
    let names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}
