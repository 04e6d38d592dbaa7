//! The packet pump shared by every command: open the source (file or interface), drop
//! privileges when asked, then feed each frame to the command until the end, a count, a
//! duration, Ctrl-C/SIGTERM or an error; meanwhile read libpcap's drop counters every
//! second and explain a capture that sees no RoCE.

use crate::cli::SourceArgs;
use rocescope_analyzer::report::{PointCaptureCounters, PointReport};
use rocescope_capture::{
    interfaces, Batch, CaptureError, CaptureStats, FileStats, LiveOptions, Record, Source,
};
use rocescope_decoder::fast::Common;
use rocescope_decoder::{DecodeOptions, Packet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Set by SIGINT/SIGTERM; a second signal, or one while the source is being opened
/// ([`crate::signals::opening`]), ends the process at once (see [`crate::signals`]).
/// The bytes of the capture files `read` together, when all are known (not standard input,
/// not gzip, whose size is not the capture's): what the reading's progress is measured by.
pub fn file_bytes(read: &[std::path::PathBuf]) -> Option<u64> {
    read.iter()
        .map(|p| {
            // A pipe's or FIFO's size says nothing of what it will carry.
            (p.as_os_str() != "-" && p.extension().is_none_or(|e| e != "gz"))
                .then(|| std::fs::metadata(p).ok())
                .flatten()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
        })
        .sum::<Option<u64>>()
        .filter(|_| !read.is_empty())
}

/// Bytes a record takes in a classic pcap file (its 16-byte header plus data): the basis of
/// progress estimates (pcapng blocks are a little larger, so they err low, never past 100%).
pub fn record_cost(caplen: u32) -> u64 {
    16 + u64::from(caplen)
}

pub fn install_signals() -> anyhow::Result<Arc<AtomicBool>> {
    crate::signals::install()
}

/// Kernel capture buffer unless -B says otherwise: 64 MiB absorbs the bursts of a 100G
/// RoCE link for a few milliseconds (libpcap's own default, 2 MiB, drops at replay speed).
const DEFAULT_BUFFER: u32 = 64 << 20;
/// Live snap length unless -s says otherwise: whole frames (as tcpdump).
pub const DEFAULT_SNAPLEN: u32 = 262_144;

/// An open source and how to name it in messages.
pub struct Opened {
    /// The source.
    pub source: Source,
    /// File path or interface name.
    pub name: String,
    /// Print no notices on stderr (drops, blind interface): the terminal UI shows them.
    pub quiet: bool,
    /// The progress bar the command asked for ([`Opened::show_progress`]): [`pump`] updates
    /// it once per batch of records.
    pub progress: Option<crate::progress::Progress>,
}

/// `error` (a source that failed part-way), followed by what the analysis covered: for one
/// file, the frames before the damage (nothing more when there were none: the error says no
/// record could be read); for several, the others whole and the damaged one up to the damage.
/// `what` is "the report", "the figures", "the analysis" (the past tense agrees with each).
pub fn with_cover(error: impl std::fmt::Display, merged: bool, frames: u64, what: &str) -> String {
    if merged {
        format!("{error} ({what} covered the other files whole and this one up to the damage)")
    } else {
        match frames {
            // The error says no record could be read: nothing to add.
            0 => error.to_string(),
            1 => format!("{error} ({what} covered the frame before it)"),
            n => format!("{error} ({what} covered the {n} frames before it)"),
        }
    }
}

impl Opened {
    /// Draw a progress bar named `label` while [`pump`] reads this source, if `setting`
    /// wants one: over the files' sizes when `read` names files only, a spinner otherwise.
    pub fn show_progress(
        &mut self,
        setting: crate::progress::Setting,
        label: &str,
        read: &[std::path::PathBuf],
    ) {
        self.progress = crate::progress::Progress::for_files(setting, label, read);
    }

    /// The reading is done and the command builds its output (`what`): the bar, if any,
    /// becomes a spinner that says so ([`crate::progress::Progress::finishing`]).
    pub fn progress_finishing(&mut self, what: &str) {
        if let Some(p) = self.progress.as_mut() {
            p.finishing(what);
        }
    }

    /// Take the progress bar off the screen, for good (before the command's output).
    pub fn clear_progress(&mut self) {
        if let Some(p) = self.progress.as_mut() {
            p.clear();
        }
    }

    /// Names of the capture points: each merged file's, or the one source's.
    pub fn point_names(&self) -> Vec<String> {
        self.source.point_names().unwrap_or_else(|| {
            let short = match self.name.as_str() {
                "-" => String::from("stdin"),
                n => std::path::Path::new(n)
                    .file_name()
                    .map_or_else(|| n.to_string(), |f| f.to_string_lossy().into_owned()),
            };
            vec![short]
        })
    }
}

/// Open what `args` select. Live captures use the default filter by default: RoCE on the
/// decoder's RoCE port and the tunnels on every VXLAN and Geneve port it unwraps
/// (`--vxlan-port`, `--geneve-port` included); `interactive` asks libpcap to deliver each
/// packet at once (decode, TUI) rather than per kernel block (capture to a file).
pub fn open(args: &SourceArgs, decoder: &DecodeOptions, interactive: bool) -> anyhow::Result<Opened> {
    let opened = match (args.read.as_slice(), &args.interface) {
        // A pipe, FIFO or standard input is read on a thread of its own, so that a signal
        // ends a wait in its open(2) or read(2) (crate::input).
        ([path], _) => Opened {
            source: crate::input::open_files(std::slice::from_ref(path))?,
            name: path.display().to_string(),
            quiet: false,
            progress: None,
        },
        ([_, ..], _) => {
            let source = crate::input::open_files(&args.read)?;
            let name = source.point_names().unwrap_or_default().join(" + ");
            Opened { source, name, quiet: false, progress: None }
        }
        ([], Some(iface)) => {
            let opts = LiveOptions {
                interface: iface.clone(),
                filter: args.filter.clone(),
                roce_port: decoder.roce_port,
                tunnel_ports: decoder.vxlan_ports.as_slice().iter().chain(decoder.geneve_ports.as_slice()).copied().collect(),
                snaplen: args.snaplen.unwrap_or(DEFAULT_SNAPLEN),
                buffer_bytes: Some(args.buffer_kib.map_or(DEFAULT_BUFFER, |k| k.saturating_mul(1024))),
                promisc: !args.no_promisc,
                immediate: interactive,
            };
            Opened { source: Source::live(&opts)?, name: iface.clone(), quiet: false, progress: None }
        }
        ([], None) => match args.sflow {
            Some(addr) => {
                Opened {
                    source: Source::sflow(addr)?,
                    name: format!("sflow {addr}"),
                    quiet: false,
                    progress: None,
                }
            }
            None => anyhow::bail!("give a capture file (-r FILE), an interface (-i IFACE) or an sFlow address (--sflow ADDR:PORT)"),
        },
    };
    if !args.read.is_empty() && args.filter.is_some() {
        anyhow::bail!("-f applies to live captures (-i); files are read whole");
    }
    if let Some(user) = &args.user {
        rocescope_capture::privileges::drop_privileges(user)?;
    }
    Ok(opened)
}

/// What the command wants after a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep going.
    Continue,
    /// Stop now (e.g. the output went away).
    Stop,
}

/// How a run ended.
#[derive(Debug, Default)]
pub struct RunEnd {
    /// Frames read.
    pub frames: u64,
    /// Frames that decoded as RoCE.
    pub roce: u64,
    /// libpcap counters at the end (live only).
    pub stats: Option<CaptureStats>,
    /// The capture counters the files recorded (pcapng Interface Statistics Blocks), by
    /// capture point: [`attach_file_stats`] puts them in the report.
    pub file_stats: Vec<FileStats>,
    /// Stopped by a signal.
    pub interrupted: bool,
    /// Records with no captured byte passed over (not frames).
    pub empty_records: u64,
    /// The source failed part-way (damaged file, capture error).
    pub source_error: Option<CaptureError>,
    /// Every input error, the first one included (merged files may fail one by one): for
    /// the report's `input_errors`.
    pub errors: Vec<String>,
    /// The `--from`/`--to` window, resolved, and the frames read outside it (skipped: not
    /// in `frames`); `None` without one.
    pub window: Option<rocescope_analyzer::report::Window>,
    /// The times of the earliest and the latest frame read, in the window or not: what an
    /// empty window's message says the capture holds.
    pub span: Option<(i64, i64)>,
}

impl RunEnd {
    /// The message for a `--from`/`--to` window that held none of the frames read, when the
    /// run was not cut short (a damaged file, a signal: their own messages say more).
    pub fn empty_window(&self) -> Option<String> {
        if self.source_error.is_some() || self.interrupted {
            return None;
        }
        crate::window::empty_window(self.window.as_ref()?, self.frames, self.span)
    }
}

/// How much decoding the command needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoding {
    /// Every frame (decode, report, ...).
    All,
    /// Only until the first RoCE frame, to know whether the capture is blind (capture).
    UntilRoce,
    /// None: the command decodes the frames it wants itself (the shards of a parallel
    /// report decode only their own frames).
    Caller,
    /// The common RoCEv2 frame classified at fixed offsets
    /// ([`rocescope_decoder::fast::classify`]) and handed over as such; every other frame
    /// decoded in full (report: the fast path, issue 28).
    Fast,
}

/// Frames per batch: one kernel block's worth for live captures.
const BATCH: usize = 512;

/// [`pump`] for a caller that decodes what it wants itself ([`Decoding::Caller`]: the two
/// stages, the divided reading), each record handed to `each` with its frame number
/// ([`Record::number_after`]). Returns how the run ended and about how many bytes of the
/// files its records took ([`record_cost`]), for a report a signal cuts short.
pub fn pump_numbered(
    opened: &mut Opened,
    args: &SourceArgs,
    opts: &DecodeOptions,
    stop: &AtomicBool,
    mut each: impl FnMut(&Record<'_>, u64) -> anyhow::Result<Flow>,
) -> (anyhow::Result<RunEnd>, u64) {
    let (mut number, mut bytes) = (0u64, 0u64);
    let end = pump(
        opened,
        args,
        opts,
        Decoding::Caller,
        stop,
        |rec, _, _| {
            number = rec.number_after(number);
            bytes += record_cost(rec.caplen);
            each(rec, number)
        },
        |_| Flow::Continue,
    );
    (end, bytes)
}

/// Feed every frame to `each` until something stops the run. `each` gets the decoded
/// packet when `decoding` asks for it. `tick` runs about once a second on live captures.
pub fn pump(
    opened: &mut Opened,
    args: &SourceArgs,
    opts: &DecodeOptions,
    decoding: Decoding,
    stop: &AtomicBool,
    mut each: impl FnMut(&Record<'_>, Option<&Packet<'_>>, Option<&Common>) -> anyhow::Result<Flow>,
    mut tick: impl FnMut(Option<CaptureStats>) -> Flow,
) -> anyhow::Result<RunEnd> {
    let live = opened.source.is_live();
    let started = Instant::now();
    let mut end = RunEnd::default();
    let mut first_ts: Option<i64> = None;
    let mut last_poll = Instant::now();
    let mut last_drops = 0u64;
    let mut hinted = false;
    let mut failure: Option<anyhow::Error> = None;
    let mut finished = false;
    let duration_ns = args.duration.map(|s| (s * 1e9) as i64);
    // The --from/--to window, resolved against the first frame read (of all the inputs:
    // merged files come in time order), and the record numbers skipped since the last frame
    // handed over: added to the next one's `empty_before`, so frame numbers stay the file's.
    let window = args.window();
    let mut bounds: Option<crate::window::Bounds> = None;
    let mut outside = 0u64;
    let mut skipped_numbers = 0u64;
    // No option that cuts, skips or stops at a frame: each record goes straight through.
    let plain =
        !live && args.snaplen.is_none() && args.count.is_none() && duration_ns.is_none() && !window.is_set();
    loop {
        if stop.load(Ordering::Relaxed) {
            end.interrupted = true;
            break;
        }
        if finished || args.count.is_some_and(|c| end.frames >= c) {
            break;
        }
        if live && duration_ns.is_some_and(|d| started.elapsed() >= Duration::from_nanos(d.max(0) as u64)) {
            break;
        }
        if live && last_poll.elapsed() >= Duration::from_secs(1) {
            last_poll = Instant::now();
            let stats = opened.source.stats();
            if let Some(s) = stats {
                let drops = s.kernel_dropped + s.if_dropped;
                if drops > last_drops && !opened.quiet {
                    crate::stdio::note!(
                        "rocescope: {} packets dropped in the last second on {} ({} by the kernel, {} by the interface in total); a larger -B or a tighter -f helps",
                        drops - last_drops,
                        opened.name,
                        s.kernel_dropped,
                        s.if_dropped
                    );
                    last_drops = drops;
                }
            }
            if tick(stats) == Flow::Stop {
                break;
            }
            if !hinted
                && !opened.quiet
                && !opened.source.is_sflow()
                && end.roce == 0
                && started.elapsed().as_secs_f64() >= args.blind_after
            {
                crate::stdio::note!("rocescope: {}", interfaces::blind_hint(&opened.name));
                hinted = true;
            }
        }
        let mut on_frame = |rec: &Record<'_>| -> bool {
            let span = |s: Option<(i64, i64)>| {
                Some(s.map_or((rec.ts_ns, rec.ts_ns), |(a, b)| (a.min(rec.ts_ns), b.max(rec.ts_ns))))
            };
            let (cut, renumbered);
            // A file read whole: every record is a frame as it is (the engine's walk, issue 39).
            let rec = if plain {
                end.span = span(end.span);
                rec
            } else {
                // -s on a file: cut each frame as a capture with that snap length would have.
                let rec = match args.snaplen {
                    Some(snap) if !live && rec.caplen > snap => {
                        cut = Record {
                            caplen: snap,
                            data: rec.data.get(..snap as usize).unwrap_or(rec.data),
                            ..*rec
                        };
                        &cut
                    }
                    _ => rec,
                };
                if args.count.is_some_and(|c| end.frames >= c) {
                    finished = true;
                    return false;
                }
                end.span = span(end.span);
                if window.is_set() {
                    let b = *bounds.get_or_insert_with(|| window.bounds(rec.ts_ns));
                    if !b.holds(rec.ts_ns) {
                        outside += 1;
                        skipped_numbers = skipped_numbers.saturating_add(1).saturating_add(rec.empty_before);
                        // A live capture comes in time order: past the window's end, it is over.
                        if live && b.end.is_some_and(|e| rec.ts_ns >= e) {
                            finished = true;
                            return false;
                        }
                        return true;
                    }
                }
                let rec = if skipped_numbers > 0 {
                    renumbered =
                        Record { empty_before: rec.empty_before.saturating_add(skipped_numbers), ..*rec };
                    skipped_numbers = 0;
                    &renumbered
                } else {
                    rec
                };
                // --duration of a file counts from the first frame in the window.
                let t0 = *first_ts.get_or_insert(rec.ts_ns);
                if !live && duration_ns.is_some_and(|d| rec.ts_ns - t0 > d) {
                    finished = true;
                    return false;
                }
                rec
            };
            end.frames += 1;
            // The common frame first: classified at fixed offsets, handed over as such.
            let common = match decoding {
                Decoding::Fast => rocescope_decoder::fast::classify(rec.link_type, rec.data, opts),
                _ => None,
            };
            let want = || match decoding {
                Decoding::All | Decoding::Fast => true,
                Decoding::UntilRoce => end.roce == 0,
                Decoding::Caller => false,
            };
            // One call of `each` (so that it is inlined here: no call per frame).
            let mut decoded;
            let (packet, common) = if let Some(c) = &common {
                end.roce += 1;
                (None, Some(c))
            } else if want() {
                // Decoded where it stays: no copy of the packet per frame.
                decoded = Packet::empty(rec.data, rec.link_type);
                decoded.decode_from(opts);
                if decoded.roce.is_some() || decoded.mac_control.is_some() {
                    end.roce += 1;
                }
                (Some(&decoded), None)
            } else {
                (None, None)
            };
            let result = each(rec, packet, common);
            match result {
                Ok(Flow::Continue) => true,
                Ok(Flow::Stop) => {
                    finished = true;
                    false
                }
                Err(e) => {
                    failure = Some(e.context(format!("frame {}", end.frames)));
                    finished = true;
                    false
                }
            }
        };
        let batch = opened.source.for_each_batch(BATCH, &mut on_frame);
        // Once per batch, not per frame (crate::progress): the frames counted anyway and the
        // bytes the reader counts per read.
        if let Some(p) = opened.progress.as_mut() {
            p.update(end.frames + outside, opened.source.bytes_read());
        }
        match batch {
            // A stream ends where a signal came (crate::input::Stream): the run was cut
            // short, the input did not end.
            Ok(Batch::End) => {
                end.interrupted |= stop.load(Ordering::Relaxed);
                break;
            }
            Ok(_) => {}
            // Nor is a stream that a signal cut in the middle of a record damaged.
            Err(_) if stop.load(Ordering::Relaxed) => {
                end.interrupted = true;
                break;
            }
            Err(e) => {
                end.errors.push(e.to_string());
                end.source_error = Some(e);
                break;
            }
        }
        if let Some(e) = failure.take() {
            return Err(e);
        }
    }
    if window.is_set() {
        end.window = Some(window.report(bounds, outside));
    }
    end.stats = opened.source.stats();
    end.file_stats = opened.source.file_stats();
    end.empty_records = opened.source.empty_records();
    if end.empty_records > 0 && !opened.quiet {
        crate::stdio::note!(
            "rocescope: {} record(s) with no captured byte passed over: nothing in them to decode; frame numbers count them, as tshark's do",
            end.empty_records
        );
    }
    if !opened.quiet {
        for (name, n) in opened.source.out_of_order() {
            crate::stdio::note!(
                "rocescope: {}: {n} record(s) earlier than the one before: merging several files assumes each is in time order (sort it first, e.g. reordercap)",
                rocescope_capture::text::escape(&name)
            );
        }
    }
    // Merged files: one that failed (damaged from its start, or part-way) did not stop the
    // others; report them all, in the order they were found. Each error names its file: the
    // caller prints the last (with what the analysis covers), this the ones before it.
    let mut failed = opened.source.take_errors();
    end.errors.extend(failed.iter().map(ToString::to_string));
    if end.source_error.is_none() {
        end.source_error = failed.pop();
    }
    if !opened.quiet {
        for e in &failed {
            crate::stdio::note!("rocescope: {e}");
        }
    }
    Ok(end)
}

/// Say on standard error how many frames a `--from`/`--to` window skipped (for the commands
/// whose output has no summary of its own to say it in: `decode -q`, `capture`).
pub fn note_window(end: &RunEnd) {
    if let Some(w) = &end.window {
        crate::stdio::note!(
            "rocescope: window {}: {} frame(s) outside it skipped",
            crate::window::describe(w),
            w.frames_outside
        );
    }
}

/// tcpdump-style closing lines for a live capture.
pub fn report_stats(name: &str, end: &RunEnd) {
    if let Some(s) = end.stats {
        crate::stdio::note!("{} packets captured on {name}", end.frames);
        crate::stdio::note!("{} packets received by filter", s.received);
        crate::stdio::note!("{} packets dropped by kernel", s.kernel_dropped);
        crate::stdio::note!("{} packets dropped by interface", s.if_dropped);
    }
}

/// Put each file's recorded capture counters (pcapng Interface Statistics Blocks) on its
/// capture point: `points[].capture_counters` (docs/report-json.md). A point without any
/// (a classic pcap, a pcapng without ISBs) is left as it is.
pub fn attach_file_stats(points: &mut [PointReport], stats: &[FileStats]) {
    for f in stats {
        let Some(p) = points.get_mut(usize::from(f.point)) else { continue };
        let sum = |get: &dyn Fn(&rocescope_capture::InterfaceStats) -> Option<u64>| {
            f.interfaces.iter().filter_map(get).reduce(u64::saturating_add)
        };
        let (if_dropped, os_dropped) = (sum(&|i| i.if_dropped), sum(&|i| i.os_dropped));
        p.capture_counters = Some(PointCaptureCounters {
            source: "pcapng".into(),
            interfaces: f
                .interfaces
                .iter()
                .map(|i| i.name.clone().unwrap_or_else(|| format!("interface {}", i.interface)))
                .collect(),
            received: sum(&|i| i.received),
            if_dropped,
            os_dropped,
            dropped: match (if_dropped, os_dropped) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            },
            damaged_blocks: f.damaged,
            went_backwards: f.interfaces.iter().any(|i| i.went_backwards),
        });
    }
}
