//! A progress bar on standard error while a capture is read (issue 42): the frames, the
//! bytes, the share of the file read, the rate and the time left, redrawn in place (with
//! `indicatif`) and cleared when the reading is done, so the terminal is left as it was.
//!
//! When it is drawn (`--progress WHEN`, or `ROCESCOPE_PROGRESS`; docs/progress.md):
//! - `auto` (the default): standard error is a terminal (and `TERM` is set, not `dumb`), the
//!   command was not told to be quiet (`-q`), and what it prints as it goes (decode's
//!   frames) does not go to that terminal too;
//! - `always`: whatever standard error is (a log file gets the redraws);
//! - `never`.
//!
//! A file's total is its size (a gzip capture's compressed size, which is what the reader
//! counts): a bar with a percentage and the time left. A pipe, FIFO or standard input has no
//! total: a spinner with the frames, the bytes and the rate. A live capture (`-i`,
//! `--sflow`) has no end but the one the user gives it: the same spinner, the bytes being
//! those captured.
//!
//! Cost: the packet pump ([`crate::driver::pump`]) calls [`Progress::update`] once per batch
//! of records (512), never per frame, with the frames it counts anyway and the bytes the
//! reader counts per read(2) ([`rocescope_capture::Source::bytes_read`]); the update reads
//! the clock and redraws at most [`REDRAW`] apart. Without a bar (standard error not a
//! terminal: the benchmarks, CI) there is no [`Progress`] at all and the pump's only extra
//! work is one predictable branch per batch.
//!
//! A note written while the bar is up ([`crate::stdio::note!`]) clears it first and lets it
//! redraw below ([`suspend`]), so the two never share a line.

use indicatif::{HumanBytes, HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When to draw the bar: `--progress`, or the `ROCESCOPE_PROGRESS` environment variable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// When standard error is a terminal, the command is not quiet (-q) and its running
    /// output does not go to that terminal.
    #[default]
    Auto,
    /// Whatever standard error is, -q or not.
    Always,
    /// Never.
    Never,
}

/// Shortest time between two redraws of the figures (the bar's own limit is 20 a second).
pub const REDRAW: Duration = Duration::from_millis(100);

/// How long a run goes before its bar shows: a run shorter than this never draws one.
/// `ROCESCOPE_PROGRESS_DELAY_MS` sets it (0: at the first batch; the tests use it).
const DELAY: Duration = Duration::from_millis(500);

/// How often the spinner turns once the reading is done and the command is building its
/// output ([`Progress::finishing`]).
const SPIN: Duration = Duration::from_millis(120);

/// The bar on the screen now, for [`suspend`].
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Run `write` (a note to standard error) with the bar, if one is up, cleared from the
/// screen, and redraw it after.
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    let bar = ACTIVE.lock().ok().and_then(|a| a.clone());
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// What a command tells [`Progress::start`] about itself.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// `--progress` (or the environment's choice).
    pub when: When,
    /// The command's -q.
    pub quiet: bool,
    /// It prints to standard output as it reads (decode's frames, NDJSON): no bar in `auto`
    /// when standard output is a terminal too.
    pub streams_stdout: bool,
}

/// Whether `setting` asks for a bar here and now.
fn wanted(setting: Setting) -> bool {
    match setting.when {
        When::Never => false,
        When::Always => true,
        When::Auto => {
            !setting.quiet
                && std::io::stderr().is_terminal()
                && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
                && !(setting.streams_stdout && std::io::stdout().is_terminal())
        }
    }
}

/// The progress of one reading (see the module's documentation). Dropping it clears the bar.
pub struct Progress {
    bar: ProgressBar,
    /// The figures the bar shows after it ([`figures`]): set, then drawn with the position
    /// in one redraw.
    shown_figures: Arc<Mutex<String>>,
    /// The file's size, when known: a bar; without, a spinner.
    total: Option<u64>,
    /// Drawn yet (the bar stays hidden for [`DELAY`]).
    shown: bool,
    started: Instant,
    delay: Duration,
    /// When the figures may be redrawn next.
    next: Instant,
    /// Cleared for good: later updates draw nothing.
    done: bool,
}

impl Progress {
    /// A progress display for reading `total` bytes (`None`: a stream or a live capture),
    /// named `label` ("reading", "BEFORE"), or `None` when `setting` wants none.
    pub fn start(setting: Setting, label: &str, total: Option<u64>) -> Option<Progress> {
        if !wanted(setting) {
            return None;
        }
        let delay = std::env::var("ROCESCOPE_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DELAY, Duration::from_millis);
        // Hidden until it is first drawn: a short run leaves no trace.
        let shown_figures = Arc::new(Mutex::new(String::new()));
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_style(style(total.is_some(), Arc::clone(&shown_figures)))
            .with_prefix(format!("{label} "));
        let started = Instant::now();
        Some(Progress {
            bar,
            shown_figures,
            total,
            shown: false,
            started,
            delay,
            next: started + delay,
            done: false,
        })
    }

    /// [`Progress::start`] for reading the capture files `read` (their sizes summed; no
    /// total for a pipe, FIFO or standard input) or, with none, a live source.
    pub fn for_files(setting: Setting, label: &str, read: &[std::path::PathBuf]) -> Option<Progress> {
        Progress::start(setting, label, total_bytes(read))
    }

    /// `frames` read and `bytes` taken in so far: redrawn when [`REDRAW`] has passed since the
    /// last time (the pump calls this once per batch).
    pub fn update(&mut self, frames: u64, bytes: u64) {
        let now = Instant::now();
        if now < self.next || self.done {
            return;
        }
        self.next = now + REDRAW;
        // A file's reader reads ahead of the frames handed out, never past its end.
        let bytes = self.total.map_or(bytes, |t| bytes.min(t));
        let elapsed = now.duration_since(self.started);
        let width = usize::from(console::Term::stderr().size().1);
        let text = figures(self.total, frames, bytes, elapsed, self.room(width));
        if let Ok(mut f) = self.shown_figures.lock() {
            *f = text;
        }
        // One redraw: the bar, its percentage and the figures agree.
        self.bar.set_position(bytes);
        // Its first draw with every figure in place.
        if !self.shown {
            self.show();
            self.bar.force_draw();
        }
    }

    /// The columns the figures may take on a terminal `width` columns wide, the label, the
    /// percentage and a bar of [`MIN_BAR`] set aside: the line never wraps (a wrapped line
    /// is two to clear, and a narrow terminal would scroll).
    fn room(&self, width: usize) -> usize {
        let label = self.bar.prefix().chars().count();
        let fixed =
            if self.total.is_some() { label + "100% [] ".len() + MIN_BAR } else { label + "| ".len() };
        width.saturating_sub(fixed + 1)
    }

    fn show(&mut self) {
        self.shown = true;
        // One write a redraw (a buffered stderr), at most 20 a second.
        let term = console::Term::buffered_stderr();
        self.bar.set_draw_target(ProgressDrawTarget::term_like_with_hz(Box::new(term), 20));
        if let Ok(mut a) = ACTIVE.lock() {
            *a = Some(self.bar.clone());
        }
    }

    /// The reading is done; the command is now building its output (`what`: "building the
    /// report"): a spinner says so until [`Progress::clear`]. Not drawn when the bar never
    /// was (a short run).
    pub fn finishing(&mut self, what: &str) {
        if self.done || (!self.shown && self.started.elapsed() < self.delay) {
            return;
        }
        if !self.shown {
            self.show();
        }
        self.bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .tick_chars(TICKS),
        );
        self.bar.set_message(what.to_string());
        self.bar.enable_steady_tick(SPIN);
    }

    /// Take the bar off the screen (before the command's own output).
    pub fn clear(&mut self) {
        if self.shown {
            self.bar.finish_and_clear();
            if let Ok(mut a) = ACTIVE.lock() {
                *a = None;
            }
            self.shown = false;
        }
        // Nothing more is drawn: a later update is too late to show.
        self.done = true;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The spinner's turns (ASCII: any terminal and font draws them).
const TICKS: &str = "|/-\\ ";

/// The narrowest bar drawn: what the figures leave of the line, at least this.
const MIN_BAR: usize = 10;

/// The bar (over a known total) or the spinner, and after it `shown` ([`figures`]).
fn style(bar: bool, shown: Arc<Mutex<String>>) -> ProgressStyle {
    let template =
        if bar { "{prefix}{percent:>3}% [{wide_bar}] {figures}" } else { "{spinner} {prefix}{figures}" };
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("figures", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
            if let Ok(f) = shown.lock() {
                let _ = w.write_str(&f);
            }
        })
        .progress_chars("=> ")
        .tick_chars(TICKS)
}

/// The figures after `elapsed`, most wanted first, as many as fit in `room` columns: the
/// bytes read (of the total), the time left at the rate so far (with a total), the frames,
/// the byte rate, the frame rate; the time taken (without a total).
fn figures(total: Option<u64>, frames: u64, bytes: u64, elapsed: Duration, room: usize) -> String {
    let secs = elapsed.as_secs_f64();
    let per_sec = |n: u64| if secs > 0.0 { (n as f64 / secs) as u64 } else { 0 };
    let mut parts = Vec::with_capacity(6);
    match total {
        Some(t) => {
            parts.push(format!("{}/{}", HumanBytes(bytes), HumanBytes(t)));
            let left = match per_sec(bytes) {
                0 => String::from("?"),
                // Rounded up: "0s left" only at the end.
                rate => format!(
                    "{:#}",
                    HumanDuration(Duration::from_secs(t.saturating_sub(bytes).div_ceil(rate)))
                ),
            };
            parts.push(format!("{left} left"));
        }
        None => parts.push(HumanBytes(bytes).to_string()),
    }
    parts.push(format!("{} frames", count(frames)));
    parts.push(format!("{}/s", HumanBytes(per_sec(bytes))));
    parts.push(format!("{} frames/s", count(per_sec(frames))));
    if total.is_none() {
        parts.push(format!("{:#}", HumanDuration(elapsed)));
    }
    let mut line = String::new();
    for part in parts {
        let sep = if line.is_empty() { "" } else { " · " };
        if line.chars().count() + sep.chars().count() + part.chars().count() > room {
            break;
        }
        line.push_str(sep);
        line.push_str(&part);
    }
    line
}

/// `n` with thousands separators: 1,234,567.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The bytes the reader will take in from the capture files `read`, when all are known:
/// regular files' sizes (a gzip capture's compressed size, which is what the reader
/// counts); `None` for a pipe, FIFO or standard input, or no file (a live source).
pub fn total_bytes(read: &[std::path::PathBuf]) -> Option<u64> {
    if read.is_empty() {
        return None;
    }
    read.iter()
        .map(|p| {
            (p.as_os_str() != "-")
                .then(|| std::fs::metadata(p).ok())
                .flatten()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn the_figures_fit_the_room_most_wanted_first() {
        let t = Duration::from_secs(2);
        let all = figures(Some(4 << 20), 20_000, 1 << 20, t, 200);
        assert_eq!(all, "1.00 MiB/4.00 MiB · 6s left · 20,000 frames · 512.00 KiB/s · 10,000 frames/s");
        let narrow = figures(Some(4 << 20), 20_000, 1 << 20, t, 40);
        assert_eq!(narrow, "1.00 MiB/4.00 MiB · 6s left");
        assert!(figures(Some(4 << 20), 20_000, 1 << 20, t, 10).is_empty());
        let stream = figures(None, 20_000, 1 << 20, t, 200);
        assert_eq!(stream, "1.00 MiB · 20,000 frames · 512.00 KiB/s · 10,000 frames/s · 2s");
        // Nothing read yet: no rate to say the time left by.
        assert!(figures(Some(10), 0, 0, Duration::ZERO, 200).starts_with("0 B/10 B · ? left · 0 frames"));
    }

    #[test]
    fn a_file_has_a_total_and_a_stream_none() {
        let demo = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/demo.pcap"));
        let size = std::fs::metadata(&demo).map(|m| m.len()).ok();
        assert!(size.is_some_and(|s| s > 0));
        assert_eq!(total_bytes(std::slice::from_ref(&demo)), size);
        assert_eq!(total_bytes(&[demo.clone(), demo.clone()]), size.map(|s| 2 * s));
        assert_eq!(total_bytes(&[demo, "-".into()]), None);
        assert_eq!(total_bytes(&[]), None);
    }

    #[test]
    fn never_and_a_quiet_auto_draw_nothing() {
        let never = Setting { when: When::Never, quiet: false, streams_stdout: false };
        assert!(Progress::start(never, "reading", Some(10)).is_none());
        let quiet = Setting { when: When::Auto, quiet: true, streams_stdout: false };
        assert!(Progress::start(quiet, "reading", Some(10)).is_none());
        let always = Setting { when: When::Always, quiet: true, streams_stdout: true };
        assert!(Progress::start(always, "reading", Some(10)).is_some());
    }
}
