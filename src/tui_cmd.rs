//! `rocescope tui`: the terminal UI over a file or an interface. A worker thread reads,
//! decodes and analyses; every [`SNAPSHOT_EVERY`] (longer when building the report is slow,
//! so it never takes more than a tenth of the thread) it sends the UI a [`Snapshot`] (the report
//! so far, rates, progress and the most recent frames as summary lines). The UI thread only
//! renders, so a slow terminal never slows the capture.

use crate::cli::TuiArgs;
use crate::driver::{self, record_cost, Flow};
use crate::output::{sflow, summary, verbose, Frame};
use crate::report_cmd::analysis_config;
use rocescope_analyzer::mirror::Session;
use rocescope_analyzer::report::CaptureCounters;
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::text::{escape, is_unsafe};
use rocescope_capture::{interfaces, CaptureStats, Record};
use rocescope_decoder::{decode, DecodeOptions, LinkType};
use rocescope_tui::{FrameLine, Pulse, Snapshot, Update};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the worker publishes a snapshot, at most.
const SNAPSHOT_EVERY: Duration = Duration::from_millis(250);

/// How often the header's figures are sent between snapshots ([`Pulse`]).
const PULSE_EVERY: Duration = Duration::from_millis(250);

/// Snapshot interval as a multiple of the time the last report took to build: with 10,000
/// flows a report takes tens of milliseconds, and the capture must keep up meanwhile.
const REPORT_SHARE: u32 = 10;

/// Past this many flows in the picture the UI holds, it gives up its tables before the
/// worker builds the next ([`Update::Release`]): two pictures of half a million flows would
/// hold two gigabytes at once (docs/reliability.md, issue 26).
const RELEASE_OVER: usize = 100_000;

/// How long the worker waits for the UI to answer [`Update::Release`] before trying again at
/// the next snapshot (the UI answers within its 200 ms turn, plus the time to free).
const RELEASE_WAIT: Duration = Duration::from_secs(10);

/// Frames kept for the Packets screen.
const RECENT_FRAMES: usize = 5000;

/// Bytes of each recent frame kept for the tree and hex dump.
const KEEP_BYTES: usize = 512;

/// Run the command.
pub fn run(args: &TuiArgs) -> anyhow::Result<ExitCode> {
    let opts = args.decoder.decode_options();
    let cfg = analysis_config(&args.analysis, &opts)?;
    let stop = Arc::new(AtomicBool::new(false));
    let clear = Arc::new(AtomicBool::new(false));
    // Snapshots are big: keep at most a couple in flight; the worker skips one when full.
    let (tx, rx) = mpsc::sync_channel::<Update>(4);
    let (opened_tx, opened_rx) = mpsc::channel::<anyhow::Result<String>>();
    let worker = {
        let (args, stop, clear) = (args.clone(), Arc::clone(&stop), Arc::clone(&clear));
        std::thread::Builder::new().name("rocescope-worker".into()).spawn(move || {
            worker(&args, cfg, opts, &stop, &clear, &tx, &opened_tx);
        })?
    };
    // Open errors (no such file, no permission, no interface) are reported before the
    // terminal is taken over.
    let name = match opened_rx.recv() {
        Ok(Ok(name)) => name,
        Ok(Err(e)) => {
            let _ = worker.join();
            return Err(e);
        }
        Err(_) => anyhow::bail!("the capture thread ended before opening the source"),
    };
    // Checked once the source opened (its errors come first): without a terminal, say so and
    // what to run instead, rather than fail inside the terminal library.
    if let Some(why) = no_terminal() {
        stop.store(true, Ordering::Relaxed);
        let _ = worker.join();
        anyhow::bail!(
            "the TUI needs a terminal, and {why}. For a text report instead, run:\n  {}",
            report_command(std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect())
        );
    }
    let tree = move |line: &FrameLine| tree_text(line, &opts);
    // SIGTERM or SIGHUP (a closed terminal window) end the UI as a quit does, so the
    // terminal is restored; the status says which signal it was (128 + its number).
    let signal = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize)?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    watch_terminal(Arc::clone(&stop));
    let ui = rocescope_tui::term::run(rx, Arc::clone(&stop), clear, &tree);
    stop.store(true, Ordering::Relaxed);
    let _ = worker.join();
    ui.map_err(|e| anyhow::anyhow!("terminal on {}: {e}", escape(&name)))?;
    match u8::try_from(signal.load(Ordering::Relaxed)) {
        Ok(0) | Err(_) => Ok(ExitCode::SUCCESS),
        Ok(sig) => Ok(ExitCode::from(128u8.saturating_add(sig))),
    }
}

/// End the process when its terminal goes away (the window closed, the tmux session
/// killed, the ssh connection dropped). A SIGHUP does not always come, and then the terminal
/// library reads end-of-file from the dead terminal in a loop that never returns, at full CPU,
/// for ever. With no terminal left there is nothing to restore: exit 129 (as SIGHUP).
fn watch_terminal(stop: Arc<AtomicBool>) {
    #[cfg(unix)]
    {
        // Only a process whose controlling terminal opens now can tell when it goes.
        if !controlling_terminal() {
            return;
        }
        let _ = std::thread::Builder::new().name("rocescope-tty".into()).spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(500));
                if !controlling_terminal() {
                    std::process::exit(129);
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = stop;
}

/// Why the UI cannot run here, if it cannot. It draws on standard output, which must be a
/// terminal; it reads keys from standard input when that is a terminal, else (standard input
/// is the capture: `-r -`, or `< /dev/null`) from the controlling terminal, `/dev/tty`.
fn no_terminal() -> Option<&'static str> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Some("standard output is not one (it is piped or redirected)");
    }
    if !std::io::stdin().is_terminal() && !controlling_terminal() {
        return Some(
            "there is none to read keys from (standard input is not a terminal and the process has no controlling terminal)",
        );
    }
    None
}

/// The process has a controlling terminal to read keys from.
#[cfg(unix)]
fn controlling_terminal() -> bool {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok()
}

/// Elsewhere the terminal library finds the console itself.
#[cfg(not(unix))]
fn controlling_terminal() -> bool {
    true
}

/// The command line `args` (program first) as `report` would take it: `tui` becomes `report`
/// (or `report` is added, for the bare `rocescope -r FILE`), `--replay` goes, the rest stays;
/// quoted for a POSIX shell where needed.
fn report_command(args: Vec<String>) -> String {
    let mut out: Vec<String> = Vec::with_capacity(args.len() + 1);
    let mut args = args.into_iter();
    out.extend(args.next());
    let mut sub = false;
    while let Some(a) = args.next() {
        if a == "--replay" {
            args.next();
        } else if a.starts_with("--replay=") {
        } else if !sub && a == "tui" {
            out.push("report".into());
            sub = true;
        } else {
            out.push(a);
        }
    }
    if !sub {
        out.insert(out.len().min(1), "report".into());
    }
    out.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
}

/// `a` as a POSIX shell reads it back: bare when it is made of safe characters only, else in
/// single quotes; with a control character (or a bidi override), which must never reach the
/// terminal raw, in `$'...'` (POSIX.1-2024, bash, zsh, ksh) with `\xHH`/`\uHHHH` escapes.
fn shell_quote(a: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !a.is_empty() && a.chars().all(safe) {
        a.to_string()
    } else if a.contains(is_unsafe) {
        let mut q = String::from("$'");
        for c in a.chars() {
            match c {
                '\\' => q.push_str("\\\\"),
                '\'' => q.push_str("\\'"),
                c if is_unsafe(c) && u32::from(c) < 0x100 => q.push_str(&format!("\\x{:02x}", u32::from(c))),
                c if is_unsafe(c) => q.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => q.push(c),
            }
        }
        q.push('\'');
        q
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// The decoded tree and hex dump of a kept frame (the first [`KEEP_BYTES`] bytes).
fn tree_text(line: &FrameLine, opts: &DecodeOptions) -> String {
    let rec = Record {
        ts_ns: line.ts_ns,
        caplen: line.bytes.len() as u32,
        len: line.wire_len,
        link_type: LinkType(line.link_type),
        interface: 0,
        link_bps: None,
        point: 0,
        data: &line.bytes,
        empty_before: 0,
    };
    let packet = decode(rec.link_type, rec.data, opts);
    let frame = Frame { number: line.number, record: &rec, packet: &packet, rel_ns: 0, opts };
    let mut out = String::new();
    if line.bytes.len() == KEEP_BYTES && line.wire_len as usize > KEEP_BYTES {
        // Only the first bytes are kept per frame: say so, or the cut would read as the
        // capture's (payload short, ICRC unchecked).
        let _ = writeln!(
            out,
            "(the UI keeps the first {} of {} bytes: payload and ICRC below are cut here, not in the capture; `rocescope decode -V` shows frame {} whole)\n",
            line.bytes.len(),
            line.wire_len,
            line.number
        );
    }
    verbose::write(&frame, &mut out);
    out.push('\n');
    hex_dump(&line.bytes, &mut out);
    out
}

/// `0000  45 00 ...  E...` lines, printable ASCII only.
fn hex_dump(bytes: &[u8], out: &mut String) {
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let _ = write!(out, "{:04x}  ", i * 16);
        for j in 0..16 {
            match chunk.get(j) {
                Some(b) => {
                    let _ = write!(out, "{b:02x} ");
                }
                None => out.push_str("   "),
            }
        }
        out.push(' ');
        out.extend(chunk.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }));
        out.push('\n');
    }
}

fn worker(
    args: &TuiArgs,
    mut cfg: Config,
    opts: DecodeOptions,
    stop: &AtomicBool,
    clear: &AtomicBool,
    tx: &SyncSender<Update>,
    opened_tx: &mpsc::Sender<anyhow::Result<String>>,
) {
    // A bad counter file is an error before the terminal is taken over, as an open error is.
    let counters = match crate::report_cmd::read_counters(&args.counters, &args.counters_host) {
        Ok(c) => c,
        Err(e) => {
            let _ = opened_tx.send(Err(e));
            return;
        }
    };
    let mut opened = match driver::open(&args.source, &opts, true) {
        // The UI owns the terminal: the pump's stderr notices go into the header instead.
        Ok(o) => driver::Opened { quiet: true, ..o },
        Err(e) => {
            let _ = opened_tx.send(Err(e));
            return;
        }
    };
    let _ = opened_tx.send(Ok(opened.name.clone()));
    // Everything the UI shows comes from here: names with their control characters escaped
    // (capture points also appear inside findings), as everywhere rocescope prints them.
    cfg.points = opened.point_names().iter().map(|p| escape(p).to_string()).collect();
    let merged = cfg.points.len() > 1;
    let live = opened.source.is_live();
    let max_flows = usize::try_from(args.analysis.max_flows).unwrap_or(usize::MAX);
    let name =
        if opened.name == "-" { String::from("standard input") } else { escape(&opened.name).to_string() };
    // Offline progress from the file size, unless compressed or stdin.
    let total_bytes = driver::file_bytes(&args.source.read).map(|n| n.max(1));
    let started = Instant::now();
    let st = RefCell::new(State {
        analyzer: Analyzer::new(cfg.clone()),
        recent: VecDeque::with_capacity(RECENT_FRAMES),
        first_ts: None,
        bytes_read: 0,
        last_send: Instant::now(),
        last_full: Instant::now(),
        interval: SNAPSHOT_EVERY,
        last_packets: 0,
        last_bytes: 0,
        wire_bytes: 0,
        stats: None,
        file_stats: Vec::new(),
        notice: None,
        frame_no: 0,
        shown_flows: 0,
    });
    let progress = |st: &State, done: bool| match (live, total_bytes) {
        (true, _) => None,
        (false, _) if done => Some(1.0),
        (false, Some(t)) => Some((st.bytes_read as f64 / t as f64).min(0.99)),
        (false, None) => None,
    };
    let publish = |st: &mut State, done: bool, error: Option<String>| {
        if st.shown_flows > RELEASE_OVER && !released(tx, stop) {
            // A frozen view keeps its picture: build none until it resumes.
            st.last_full = Instant::now();
            return Published::Deferred;
        }
        let built = Instant::now();
        let mut report = st.analyzer.report();
        report.capture = st.stats.map(|s| CaptureCounters {
            interface: name.clone(),
            received: s.received,
            kernel_dropped: s.kernel_dropped,
            if_dropped: s.if_dropped,
        });
        driver::attach_file_stats(&mut report.points, &st.file_stats);
        if let Some((input, host)) = &counters {
            crate::report_cmd::add_counters_to(&mut report, input, host);
        }
        // The QPs rows are built here, off the UI thread (a million connections take
        // seconds), and counted in the time the snapshot cost.
        let rows = Arc::new(rocescope_tui::app::qp_rows(&report));
        st.interval = SNAPSHOT_EVERY.max(built.elapsed() * REPORT_SHARE);
        let (rate_pps, rate_gbps) = st.take_rates(args.replay);
        let snap = Snapshot {
            report,
            source: name.clone(),
            live,
            replay: args.replay,
            elapsed_s: started.elapsed().as_secs_f64(),
            rate_pps,
            rate_gbps,
            wire_bytes: st.wire_bytes,
            progress: progress(st, done),
            done,
            frames: st.recent.iter().cloned().collect(),
            error,
            notice: st.notice.clone(),
            rows: Some(rows),
            decode: opts,
        };
        st.last_full = Instant::now();
        st.shown_flows = snap.report.flows.len();
        // A full channel means the UI is behind: hand the snapshot back; while capturing it
        // is dropped (the next is newer anyway), at the end it is sent again as it is.
        match tx.try_send(Update::Full(Box::new(snap))) {
            Err(TrySendError::Full(s)) => Published::Unsent(s),
            _ => Published::Sent,
        }
    };
    // Between two snapshots (seconds apart at a million connections), the header's figures.
    let pulse = |st: &mut State| {
        let (rate_pps, rate_gbps) = st.take_rates(args.replay);
        let t = st.analyzer.totals();
        let p = Pulse {
            packets: t.packets,
            roce: t.roce,
            icrc_bad: t.icrc_bad,
            malformed: t.malformed,
            duplicates: t.duplicates,
            start_ns: t.start_ns,
            end_ns: t.end_ns,
            elapsed_s: started.elapsed().as_secs_f64(),
            rate_pps,
            rate_gbps,
            wire_bytes: st.wire_bytes,
            progress: progress(st, false),
        };
        // A full channel: the UI is behind, and the next pulse is newer anyway.
        let _ = tx.try_send(Update::Pulse(p));
    };
    // Whichever is due: a snapshot, else the header's figures.
    let tick = |st: &mut State| {
        if st.last_full.elapsed() >= st.interval {
            publish(st, false, None);
        } else if st.last_send.elapsed() >= PULSE_EVERY {
            pulse(st);
        }
    };
    let mut replay_start: Option<(i64, Instant)> = None;
    let result = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        driver::Decoding::All,
        stop,
        |rec, packet, _| {
            let mut st = st.borrow_mut();
            let st = &mut *st;
            clear_if_asked(clear, st, &cfg);
            if let Some(speed) = args.replay {
                // Hold each frame until its time comes at `speed` times capture speed,
                // publishing snapshots and watching for quit meanwhile.
                let t0 = *replay_start.get_or_insert((rec.ts_ns, Instant::now()));
                let due = Duration::from_secs_f64(((rec.ts_ns - t0.0).max(0) as f64 / 1e9) / speed);
                while t0.1.elapsed() < due {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(Flow::Stop);
                    }
                    tick(st);
                    std::thread::sleep(due.saturating_sub(t0.1.elapsed()).min(Duration::from_millis(20)));
                }
            }
            st.bytes_read += record_cost(rec.caplen);
            st.wire_bytes += u64::from(rec.len);
            if let Some(p) = packet {
                // Numbered as in the source, also after a clear restarted the analysis.
                st.frame_no = rec.number_after(st.frame_no);
                let number = st.frame_no;
                // An sFlow datagram (unless --no-sflow) is analysed by the headers it samples,
                // each listed after it with its agent's capture point and its flow.
                let sampled = sflow::read(rec, p, &opts, cfg.sflow);
                let mut seen = Vec::new();
                let roce_before = st.analyzer.totals().roce;
                st.analyzer.push_frame_with(number, rec, p, &opts, |s| seen.push(s));
                // Past --max-flows the least recently seen flows go; the flow numbers of the
                // frames listed so far change with them, so those frames lose their link to
                // a connection (the list keeps them).
                if st.analyzer.flows().len() > max_flows {
                    st.analyzer.evict_over(max_flows);
                    for line in st.recent.iter_mut() {
                        line.flow = None;
                    }
                }
                let flow = (sampled.is_none() && st.analyzer.totals().roce > roce_before)
                    .then(|| st.analyzer.last_flow())
                    .flatten();
                let t0 = *st.first_ts.get_or_insert(rec.ts_ns);
                let rel_ns = rec.ts_ns - t0;
                // Capture points by the analyzer's list: sFlow agents and mirror sessions join
                // it while reading. With several, each frame names its own.
                // A mirror session's frame names its session's point from the first frame on
                // (a second session may come later); others, when there are several points.
                let several = st.analyzer.config().points.len() > 1
                    || (st.analyzer.config().mirror_sessions && Session::of(p).is_some());
                let point = (sampled.is_none() && several).then(|| st.analyzer.last_point());
                let mut line = take_line(&mut st.recent);
                if let Some(name) = point.and_then(|i| st.analyzer.config().points.get(usize::from(i))) {
                    line.summary.push('[');
                    line.summary.push_str(name);
                    line.summary.push_str("] ");
                }
                summary::write(
                    &Frame { number, record: rec, packet: p, rel_ns, opts: &opts },
                    &mut line.summary,
                );
                if let Some(d) = &sampled {
                    d.summary_tag(&mut line.summary);
                }
                line.fill(number, rec, flow);
                st.recent.push_back(line);
                for (i, s) in sampled.iter().flat_map(|d| d.samples.iter()).enumerate() {
                    let seen = seen.get(i).filter(|x| x.index == i);
                    let mut line = take_line(&mut st.recent);
                    let points = &st.analyzer.config().points;
                    if let Some(name) = seen.and_then(|x| points.get(usize::from(x.point))) {
                        line.summary.push('[');
                        line.summary.push_str(name);
                        line.summary.push_str("] ");
                    }
                    let _ = write!(
                        line.summary,
                        "{:>6} {:>14} sFlow 1-in-{} | ",
                        number,
                        crate::output::rel_time(rel_ns),
                        s.info.sampling_rate
                    );
                    sflow::sample_body(s, &opts, number, &mut line.summary);
                    line.fill(number, &s.record, seen.and_then(|x| x.flow));
                    st.recent.push_back(line);
                }
            }
            tick(st);
            Ok(Flow::Continue)
        },
        |stats| {
            // Live, about once a second, also when no packet arrives: libpcap's counters
            // for the header, the "blind interface" hint, and a fresh picture.
            let mut st = st.borrow_mut();
            let st = &mut *st;
            clear_if_asked(clear, st, &cfg);
            st.stats = stats.or(st.stats);
            st.notice = (st.analyzer.totals().roce == 0
                && started.elapsed().as_secs_f64() >= args.source.blind_after)
                .then(|| interfaces::blind_hint(&name));
            publish(st, false, None);
            Flow::Continue
        },
    );
    let mut st = st.into_inner();
    st.analyzer.finish();
    let error = match result {
        Ok(end) => {
            // What the files recorded of their own drops (pcapng statistics blocks).
            st.file_stats = end.file_stats;
            end.source_error.map(|e| driver::with_cover(e, merged, end.frames, "the analysis"))
        }
        Err(e) => Some(format!("{e:#}")),
    }
    .map(|e| escape(&e).to_string());
    // The file is done (or capture stopped): keep the final picture on screen until the
    // user quits. Re-send it until it gets through, and answer a clear with an empty one.
    let mut unsent = publish(&mut st, true, error.clone());
    while !stop.load(Ordering::Relaxed) {
        if clear_if_asked(clear, &mut st, &cfg) {
            unsent = publish(&mut st, true, error.clone());
        } else {
            unsent = match unsent {
                // The view was frozen: the final picture is built once it resumes.
                Published::Deferred => publish(&mut st, true, error.clone()),
                Published::Unsent(s) => match tx.try_send(s) {
                    Err(TrySendError::Full(s)) => Published::Unsent(s),
                    _ => Published::Sent,
                },
                Published::Sent => Published::Sent,
            };
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // The UI has quit and the process is ending: freeing a million flows one by one would
    // hold the exit up for seconds.
    std::mem::forget(st);
}

/// What became of a picture ([`worker`]'s `publish`).
enum Published {
    /// On its way to the UI.
    Sent,
    /// Built, but the channel was full: to send again (at the end of a file).
    Unsent(Update),
    /// Not built: the UI keeps a frozen picture of many flows.
    Deferred,
}

/// Ask the UI to give up its picture's tables before a large one is built ([`RELEASE_OVER`]),
/// and wait for them to be freed: `false` when it keeps them (frozen), it is gone, or it
/// does not answer in [`RELEASE_WAIT`].
fn released(tx: &SyncSender<Update>, stop: &AtomicBool) -> bool {
    let (reply, answer) = mpsc::sync_channel(1);
    let mut msg = Update::Release(reply);
    let asked = Instant::now();
    loop {
        match tx.try_send(msg) {
            Ok(()) => break,
            Err(TrySendError::Full(m)) if !stop.load(Ordering::Relaxed) && asked.elapsed() < RELEASE_WAIT => {
                msg = m;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => return false,
        }
    }
    while asked.elapsed() < RELEASE_WAIT && !stop.load(Ordering::Relaxed) {
        match answer.recv_timeout(Duration::from_millis(50)) {
            Ok(yes) => return yes,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        }
    }
    false
}

/// Restart the analysis when the user asked (`c`). A plain load first: the frame loop
/// calls this per packet, and a swap would write the shared cache line every time.
fn clear_if_asked(clear: &AtomicBool, st: &mut State, cfg: &Config) -> bool {
    if clear.load(Ordering::Relaxed) && clear.swap(false, Ordering::Relaxed) {
        st.reset(Analyzer::new(cfg.clone()));
        return true;
    }
    false
}

impl State {
    /// Packets and Gb/s since the figures were last sent, per second of capture time (a
    /// replay at `speed` plays `dt * speed` seconds of the capture in `dt`, as live).
    fn take_rates(&mut self, replay: Option<f64>) -> (f64, f64) {
        let dt = self.last_send.elapsed().as_secs_f64().max(1e-3);
        let capture_dt = dt * replay.unwrap_or(1.0);
        let packets = self.analyzer.totals().packets;
        let pps = packets.saturating_sub(self.last_packets) as f64 / capture_dt;
        let gbps = self.wire_bytes.saturating_sub(self.last_bytes) as f64 * 8.0 / capture_dt / 1e9;
        self.last_send = Instant::now();
        self.last_packets = packets;
        self.last_bytes = self.wire_bytes;
        (pps, gbps)
    }

    /// Start the analysis over (the user cleared the counters).
    fn reset(&mut self, analyzer: Analyzer) {
        self.analyzer = analyzer;
        self.recent.clear();
        self.first_ts = None;
        self.last_packets = 0;
        self.wire_bytes = 0;
        self.last_bytes = 0;
    }
}

/// A line for the frame list, reusing the buffers of the frame that falls out of the ring:
/// no allocation per packet once it is full.
fn take_line(recent: &mut VecDeque<FrameLine>) -> FrameLine {
    let mut line = if recent.len() == RECENT_FRAMES {
        recent.pop_front().unwrap_or_default()
    } else {
        FrameLine::default()
    };
    line.summary.clear();
    line
}

/// Fill a frame-list line (its summary written) from the record it shows.
trait Fill {
    fn fill(&mut self, number: u64, rec: &Record<'_>, flow: Option<usize>);
}

impl Fill for FrameLine {
    fn fill(&mut self, number: u64, rec: &Record<'_>, flow: Option<usize>) {
        self.summary.truncate(self.summary.trim_end().len());
        self.bytes.clear();
        self.bytes.extend_from_slice(&rec.data[..rec.data.len().min(KEEP_BYTES)]);
        self.number = number;
        self.ts_ns = rec.ts_ns;
        self.flow = flow;
        self.wire_len = rec.len;
        self.link_type = rec.link_type.0;
    }
}

/// The worker's running state.
struct State {
    analyzer: Analyzer,
    recent: VecDeque<FrameLine>,
    first_ts: Option<i64>,
    bytes_read: u64,
    /// When figures (a snapshot or a pulse) were last sent: the rates are over the time since.
    last_send: Instant,
    /// When the last snapshot was sent.
    last_full: Instant,
    /// Current snapshot interval (see [`REPORT_SHARE`]).
    interval: Duration,
    last_packets: u64,
    last_bytes: u64,
    wire_bytes: u64,
    /// libpcap's counters (live).
    stats: Option<CaptureStats>,
    /// The files' recorded capture counters (pcapng statistics blocks), once read to the end.
    file_stats: Vec<rocescope_capture::FileStats>,
    /// Shown under the header: why a live capture may see nothing.
    notice: Option<String>,
    /// The latest frame's number in the source (records with no captured byte numbered too,
    /// as tshark numbers them; kept across a clear).
    frame_no: u64,
    /// Flows in the last picture sent: the UI holds it until the next.
    shown_flows: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_report_command_keeps_the_source_and_options() {
        assert_eq!(report_command(v(&["rocescope", "tui", "-r", "a.pcap"])), "rocescope report -r a.pcap");
        assert_eq!(
            report_command(v(&[
                "rocescope",
                "tui",
                "--replay",
                "2x",
                "-r",
                "a.pcap",
                "b.pcap",
                "--expect-dscp",
                "26"
            ])),
            "rocescope report -r a.pcap b.pcap --expect-dscp 26"
        );
        assert_eq!(
            report_command(v(&["rocescope", "tui", "--replay=0.5x", "-i", "eth0"])),
            "rocescope report -i eth0"
        );
        // The bare form (`rocescope -r FILE` opens the TUI on a terminal).
        assert_eq!(report_command(v(&["rocescope", "-r", "a.pcap"])), "rocescope report -r a.pcap");
        // Only the subcommand is replaced, and paths are quoted for the shell.
        assert_eq!(
            report_command(v(&["./rocescope", "tui", "-r", "tui", "-r", "it's here.pcap"])),
            "./rocescope report -r tui -r 'it'\\''s here.pcap'"
        );
        assert_eq!(shell_quote(""), "''");
        // Control characters and bidi overrides never reach the terminal raw.
        assert_eq!(shell_quote("a\x1b]0;x\x07'\\\u{202e}.pcap"), "$'a\\x1b]0;x\\x07\\'\\\\\\u202e.pcap'");
    }

    #[test]
    fn hex_dump_lines() {
        let mut s = String::new();
        hex_dump(b"ABC\x00\x01", &mut s);
        // 16 columns of "xx " (missing bytes as spaces), one space, then the ASCII.
        assert_eq!(s, format!("0000  41 42 43 00 01 {} ABC..\n", " ".repeat(11 * 3)));
    }
}
