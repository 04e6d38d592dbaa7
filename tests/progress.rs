//! The progress bar (issue 42, docs/progress.md): drawn on standard error when it is a
//! terminal, never on standard output, cleared at the end; nothing without a terminal, with
//! -q or `--progress never`. The terminal is a pseudo-terminal `script` (util-linux) opens;
//! `ROCESCOPE_PROGRESS_DELAY_MS=0` draws the bar at the first batch of frames, so a small
//! sample shows it whatever the machine's speed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rocescope")
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

/// `s` quoted for sh.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command line `args` as sh words, the binary first.
fn line(args: &[&str]) -> String {
    std::iter::once(bin()).chain(args.iter().copied()).map(quote).collect::<Vec<_>>().join(" ")
}

/// Run the sh command `cmd` with standard input, output and error a pseudo-terminal of 200
/// columns, with the bar's delay at 0 and `env` set: what the terminal showed, and whether
/// it succeeded. `None` (a skip said) where there is no `script`.
fn on_tty(cmd: &str, env: &[(&str, &str)]) -> Option<(String, bool)> {
    on_tty_of(200, cmd, env)
}

/// [`on_tty`] on a terminal `columns` wide.
fn on_tty_of(columns: u16, cmd: &str, env: &[(&str, &str)]) -> Option<(String, bool)> {
    let mut c = Command::new("script");
    let cmd = format!("stty cols {columns} rows 40; {cmd}");
    c.args(["-qfec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .env("ROCESCOPE_PROGRESS_DELAY_MS", "0")
        .env_remove("ROCESCOPE_PROGRESS")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    match c.output() {
        Ok(out) => Some((String::from_utf8_lossy(&out.stdout).into_owned(), out.status.success())),
        Err(e) => {
            common::skip(&format!("no pseudo-terminal: `script` (util-linux) could not run: {e}"));
            None
        }
    }
}

/// Run the binary with `args`, no terminal anywhere (output and error piped), the bar's
/// delay at 0 and `env` set.
fn plain(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .env("TERM", "xterm")
        .env("ROCESCOPE_PROGRESS_DELAY_MS", "0")
        .env_remove("ROCESCOPE_PROGRESS")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run rocescope")
}

/// The bar as it is drawn over a file on a wide terminal: the share of the file, the bytes,
/// the time left, the frames read and the rates.
fn shows_bar(screen: &str) -> bool {
    screen.contains("% [")
        && screen.contains(" MiB/")
        && screen.contains(" left · ")
        && screen.contains(" frames · ")
        && screen.contains("B/s · ")
        && screen.contains(" frames/s")
}

/// Environment variables set for a run.
type Env<'a> = &'a [(&'a str, &'a str)];

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn report_draws_a_bar_on_the_terminal_and_prints_the_same_report() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let dir = tempfile::tempdir().expect("temp dir");
    for output in [&[][..], &["--json"][..], &["--threads", "2"][..]] {
        let mut args = vec!["report", "-r", cap];
        args.extend_from_slice(output);
        let expected = plain(&args, &[]);
        assert!(expected.status.success(), "{args:?}: {}", String::from_utf8_lossy(&expected.stderr));
        // No terminal: nothing on standard error.
        assert!(expected.stderr.is_empty(), "{args:?}: {:?}", String::from_utf8_lossy(&expected.stderr));
        assert!(!expected.stdout.is_empty());
        // Standard error a terminal, standard output a file: the bar on the terminal only.
        let out = dir.path().join("report.out");
        let cmd = format!("{} > {}", line(&args), quote(out.to_str().expect("a UTF-8 path")));
        let Some((screen, ok)) = on_tty(&cmd, &[("ROCESCOPE_DIVIDED", "1")]) else { return };
        assert!(ok, "{args:?}: {screen}");
        assert!(shows_bar(&screen), "{args:?}: no bar on the terminal: {screen:?}");
        assert!(screen.contains("reading "), "{screen:?}");
        assert_eq!(read(&out), expected.stdout, "{args:?}: the report changed under a terminal");
    }
}

#[test]
fn a_report_to_the_terminal_follows_a_cleared_bar() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let expected = plain(&["report", "-r", cap], &[]);
    let Some((screen, ok)) = on_tty(&line(&["report", "-r", cap]), &[]) else { return };
    assert!(ok, "{screen}");
    assert!(shows_bar(&screen), "{screen:?}");
    // The terminal ends with the report alone: the bar's line cleared (carriage return,
    // erase line) before it, and nothing of the bar after it.
    let report = String::from_utf8_lossy(&expected.stdout).replace('\n', "\r\n");
    let (before, after) = screen.rsplit_once("\r\x1b[2K").expect("the bar's line cleared");
    assert_eq!(after, report, "the terminal after the bar was cleared");
    assert!(shows_bar(before));
}

#[test]
fn no_bar_when_quiet_or_told_never() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let cases: [(&[&str], Env<'_>); 4] = [
        (&["report", "-q", "-r", cap], &[]),
        (&["report", "--progress", "never", "-r", cap, "--json"], &[]),
        (&["report", "-r", cap, "--json"], &[("ROCESCOPE_PROGRESS", "never")]),
        // A terminal with no capabilities.
        (&["report", "-r", cap, "--json"], &[("TERM", "dumb")]),
    ];
    for (args, env) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out");
        let cmd = format!("{} > {}", line(args), quote(out.to_str().expect("a UTF-8 path")));
        let Some((screen, ok)) = on_tty(&cmd, env) else { return };
        assert!(ok, "{args:?}: {screen}");
        assert_eq!(screen, "", "{args:?} {env:?}: the terminal should show nothing");
    }
}

#[test]
fn always_draws_without_a_terminal_and_the_output_stays_the_same() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let auto = plain(&["report", "-r", cap, "--json"], &[]);
    let always = plain(&["report", "-r", cap, "--json", "--progress", "always"], &[]);
    let by_env = plain(&["report", "-r", cap, "--json"], &[("ROCESCOPE_PROGRESS", "always")]);
    assert!(auto.stderr.is_empty());
    for run in [&always, &by_env] {
        assert!(run.status.success());
        // Not a terminal: drawn 80 columns wide, the figures that fit.
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains("% [") && err.contains(" left · ") && err.contains(" frames"), "{err:?}");
        assert_eq!(run.stdout, auto.stdout);
    }
    // A value that is none of the three is a usage error, as a bad option is.
    let bad = plain(&["report", "-r", cap], &[("ROCESCOPE_PROGRESS", "sometimes")]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn a_pipe_has_a_spinner_with_no_percentage() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let expected = Command::new(bin())
        .args(["report", "-r", "-"])
        .env_remove("ROCESCOPE_PROGRESS")
        .stdin(std::fs::File::open(&capture).expect("open the sample"))
        .output()
        .expect("run rocescope");
    assert!(expected.status.success() && expected.stderr.is_empty());
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let cmd = format!(
        "cat {} | {} > {}",
        quote(cap),
        line(&["report", "-r", "-"]),
        quote(out.to_str().expect("a UTF-8 path"))
    );
    let Some((screen, ok)) = on_tty(&cmd, &[]) else { return };
    assert!(ok, "{screen}");
    assert!(screen.contains(" frames") && screen.contains("frames/s"), "{screen:?}");
    assert!(!screen.contains('%') && !screen.contains(" left"), "no total, no share: {screen:?}");
    assert_eq!(read(&out), expected.stdout);
}

#[test]
fn compare_shows_each_side() {
    let before = sample("compare/dscp-remark-before.pcap");
    let after = sample("compare/dscp-remark-after.pcap");
    let (b, a) = (before.to_str().expect("UTF-8"), after.to_str().expect("UTF-8"));
    let expected = plain(&["compare", b, a], &[]);
    assert!(expected.stderr.is_empty(), "{}", String::from_utf8_lossy(&expected.stderr));
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let cmd = format!("{} > {}", line(&["compare", b, a]), quote(out.to_str().expect("UTF-8")));
    let Some((screen, _)) = on_tty(&cmd, &[]) else { return };
    assert!(shows_bar(&screen), "{screen:?}");
    let (first, second) = (screen.find("BEFORE "), screen.find("AFTER "));
    assert!(first.is_some() && second.is_some() && first < second, "{screen:?}");
    assert_eq!(read(&out), expected.stdout);
}

#[test]
fn decode_and_capture_writing_a_file_show_a_bar() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let dir = tempfile::tempdir().expect("temp dir");
    let at = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_string();
    let (plain_w, tty_w) = (at("plain.pcapng"), at("tty.pcapng"));
    for command in ["decode", "capture"] {
        let quiet = plain(&[command, "-r", cap, "-w", &plain_w], &[]);
        assert!(quiet.status.success());
        let Some((screen, ok)) = on_tty(&line(&[command, "-r", cap, "-w", &tty_w]), &[]) else { return };
        assert!(ok, "{command}: {screen}");
        assert!(shows_bar(&screen), "{command}: {screen:?}");
        // The summary line is said after the bar was cleared, on a line of its own.
        let summary = String::from_utf8_lossy(&quiet.stderr).trim_end().replace(&plain_w, &tty_w);
        assert!(!summary.is_empty());
        let tail = screen.rsplit_once("\r\x1b[2K").map(|(_, t)| t).unwrap_or_default();
        assert!(tail.contains(&summary), "{command}: {tail:?} should hold {summary:?}");
        assert_eq!(read(Path::new(&tty_w)), read(Path::new(&plain_w)), "{command}: the written capture");
    }
    // Frames printed to the terminal: no bar over them (a file or pipe would have one).
    let Some((screen, _)) = on_tty(&line(&["decode", "-c", "50", "-r", cap]), &[]) else { return };
    assert!(!screen.contains("frames/s"), "{screen:?}");
    let Some((screen, _)) = on_tty(&format!("{} > /dev/null", line(&["decode", "-r", cap])), &[]) else {
        return;
    };
    assert!(shows_bar(&screen), "{screen:?}");
}

#[test]
fn parquet_writing_shows_a_bar_and_says_what_it_wrote_after_it() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = dir.path().join("tables");
    let tables = tables.to_str().expect("UTF-8");
    let cmd = format!("{} > /dev/null", line(&["report", "-r", cap, "--parquet", tables]));
    let Some((screen, ok)) = on_tty(&cmd, &[]) else { return };
    assert!(ok, "{screen}");
    assert!(shows_bar(&screen), "{screen:?}");
    let tail = screen.rsplit_once("\r\x1b[2K").map(|(_, t)| t).unwrap_or_default();
    assert!(tail.starts_with("rocescope: wrote ") && tail.contains("packets-"), "{tail:?}");
}

#[test]
fn the_bar_keeps_to_one_line_of_a_narrow_terminal() {
    let capture = sample("cc-reaction.pcap");
    let cap = capture.to_str().expect("a UTF-8 path");
    for columns in [60u16, 80] {
        let cmd = format!("{} > /dev/null", line(&["report", "-r", cap]));
        let Some((screen, ok)) = on_tty_of(columns, &cmd, &[]) else { return };
        assert!(ok, "{screen}");
        assert!(screen.contains("% [") && screen.contains(" left"), "{columns}: {screen:?}");
        // A line that wrapped would be cleared by moving up to it (ESC [ 1 A).
        assert!(!screen.contains("\x1b[1A"), "{columns} columns: the bar wrapped: {screen:?}");
        for drawn in screen.split("\r\x1b[2K") {
            let shown = drawn.trim_end().chars().count();
            assert!(shown <= usize::from(columns), "{columns} columns: {shown} taken by {drawn:?}");
        }
    }
}

#[test]
fn a_live_source_has_a_spinner() {
    // An sFlow socket is a live source a test can open (no interface, no root): nothing comes,
    // and the spinner turns on the idle polls until --duration ends the run.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let cmd = format!(
        "{} > {}",
        line(&["report", "--sflow", "127.0.0.1:0", "--duration", "1"]),
        quote(out.to_str().expect("UTF-8"))
    );
    let Some((screen, ok)) = on_tty(&cmd, &[]) else { return };
    assert!(ok, "{screen}");
    assert!(screen.contains("capturing 0 B · 0 frames · 0 B/s · 0 frames/s · "), "{screen:?}");
    assert!(!screen.contains('%') && !screen.contains(" left"), "no end, no share: {screen:?}");
    assert!(String::from_utf8_lossy(&read(&out)).starts_with("rocescope report: sflow 127.0.0.1:0"));
}
