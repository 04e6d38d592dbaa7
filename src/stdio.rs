//! Standard output and standard error without panics.
//!
//! `println!` and `eprintln!` panic when the write fails (`> /dev/full`, a full disk, a pipe
//! whose reader is gone), which ends the process with status 101 and a backtrace. Everything
//! rocescope prints goes through here instead:
//!
//! - standard output: [`out`] writes a whole buffer and says whether the reader went away
//!   (EPIPE: `| head`), which ends a command quietly, as other Unix tools do; any other
//!   failure is an error (status 1, said on standard error);
//! - standard error: [`note!`] writes one message with its control characters escaped (it
//!   may carry a file or interface name: see [`safe_text`]). A failed write is remembered and
//!   the process exits with status 1 where it would have exited 0 (GNU tools do the same: a
//!   message that could not be written is a failure), since nothing more can be said;
//! - clap's help, version and usage errors: [`clap_exit`].

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// A write to standard error failed (see [`stderr_failed`]).
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Write one line to standard error: `format!` arguments, made safe by [`safe_text`].
/// Never panics; a failure makes the exit status 1 (see [`exit_status`]).
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::stdio::note_args(format_args!($($arg)*))
    };
}
pub(crate) use note;

/// What [`note!`] calls.
pub fn note_args(args: fmt::Arguments<'_>) {
    let mut line = safe_text(&args.to_string());
    line.push('\n');
    // One write: stderr is unbuffered, and concurrent notes should not interleave. A
    // progress bar on the screen is cleared first and redrawn below (crate::progress).
    crate::progress::suspend(|| {
        let mut err = io::stderr().lock();
        if err.write_all(line.as_bytes()).and_then(|()| err.flush()).is_err() {
            STDERR_FAILED.store(true, Ordering::Relaxed);
        }
    });
}

/// Some write to standard error failed.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

/// The exit status for a command that ended with `code`: 1 instead of 0 when a message
/// could not be written to standard error.
pub fn exit_status(code: ExitCode) -> ExitCode {
    if code == ExitCode::SUCCESS && stderr_failed() {
        ExitCode::from(1)
    } else {
        code
    }
}

/// `s` with every control character but the line feed escaped (`\x1b`, `\r`, `\t`,
/// `\u{202e}`: [`rocescope_capture::text::escape`]), so a message that quotes a file name
/// such as `"\x1b]0;owned\x07.pcap"` cannot drive the terminal.
pub fn safe_text(s: &str) -> String {
    if !s.contains(rocescope_capture::text::is_unsafe) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&rocescope_capture::text::escape(line).to_string());
    }
    out
}

/// Serialised JSON made terminal-safe (the output library's, `rocescope_output::json`).
pub use rocescope_output::json::json_safe;

/// How a write to standard output went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// All of it was written.
    All,
    /// The reader went away (EPIPE: `| head`): stop quietly.
    ReaderGone,
}

/// Write all of `buf` to standard output and flush it. EPIPE is [`Written::ReaderGone`];
/// any other failure is an error.
pub fn out(buf: &[u8]) -> io::Result<Written> {
    let mut out = io::stdout().lock();
    match out.write_all(buf).and_then(|()| out.flush()) {
        Ok(()) => Ok(Written::All),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Written::ReaderGone),
        Err(e) => Err(e),
    }
}

/// Print what clap has to say (help and version on standard output, usage errors on
/// standard error) and give the exit status: clap's own (0 for help, 2 for a usage error),
/// or 1 when the help or version could not be written (clap itself would exit 0 having
/// written nothing). Clap's `Error::exit` ignores write failures; this does not.
pub fn clap_exit(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(1);
    if !e.use_stderr() {
        let res = e.print().and_then(|()| io::stdout().lock().flush());
        return match res {
            Ok(()) => ExitCode::from(code),
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(code),
            Err(err) => {
                note!("rocescope: writing to standard output: {err}");
                ExitCode::from(1)
            }
        };
    }
    if e.print().is_err() {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_text_escapes_all_but_line_feeds() {
        assert_eq!(safe_text("plain\ntwo lines"), "plain\ntwo lines");
        assert_eq!(
            safe_text("cannot read a\x1b]0;owned\x07b\r\u{202e}.pcap\n  next"),
            "cannot read a\\x1b]0;owned\\x07b\\r\\u{202e}.pcap\n  next"
        );
        assert_eq!(safe_text("tab\there"), "tab\\there");
    }

    #[test]
    fn json_safe_keeps_the_document() {
        let doc = serde_json::json!({"name": "a\x1b]0;x\x07\u{9b}\u{202e}\u{7f}.pcap"}).to_string();
        let safe = json_safe(&doc);
        assert!(!safe.contains(rocescope_capture::text::is_unsafe), "{safe}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).ok(), serde_json::from_str(&doc).ok());
        assert!(matches!(json_safe("{\n  \"a\":\t1\r\n}"), std::borrow::Cow::Borrowed(_)));
    }
}
