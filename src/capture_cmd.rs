//! `rocescope capture`: write what an interface (or a file) gives to pcapng or pcap, with
//! ring buffers, and say at the end what was captured, written and dropped.

use crate::cli::CaptureArgs;
use crate::driver::{self, Flow};
use crate::stdio::note;
use anyhow::Context;
use rocescope_capture::text::{self, escape};
use rocescope_capture::{CaptureSink, FileFormat, SinkOptions, SinkSummary};
use rocescope_tui::filter::FramePlace;
use std::process::ExitCode;
use std::time::Duration;

/// Run the command.
pub fn run(args: &CaptureArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let mut opts = args.decoder.decode_options();
    // -Y: frames kept by the display filter, decoded whole (ICRC included: `icrc` is a
    // filter word); without it, only "is it RoCE" is needed here.
    let filter =
        match crate::decode_cmd::display_filter("capture", args.display_filter.as_deref(), opts.opcode) {
            Ok(f) => f,
            Err(status) => return Ok(status),
        };
    opts.check_icrc = filter.is_some();
    let to_stdout = args.write.as_os_str() == "-";
    if to_stdout && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!(
            "-w - writes a binary capture to standard output, which is a terminal: pipe it (| rocescope decode -r -) or redirect it (> roce.pcapng)"
        );
    }
    // A signal while libpcap compiles the filter ends the process at once.
    let mut opened = crate::signals::opening(|| driver::open(&args.source, &opts, false))?;
    // A file re-written (-r) has a bar; a live capture's progress is the line a second.
    if !opened.source.is_live() {
        let setting = crate::progress::Setting {
            when: args.progress.progress,
            quiet: args.quiet,
            streams_stdout: false,
        };
        opened.show_progress(setting, "reading", &args.source.read);
    }
    let sink_opts = SinkOptions {
        path: args.write.clone(),
        format: if args.pcap { FileFormat::Pcap } else { FileFormat::PcapNg },
        rotate_bytes: args.file_mb.map(|mb| (mb * 1e6) as u64),
        rotate_every: args.rotate_secs.map(Duration::from_secs_f64),
        keep_files: args.keep_files,
        snaplen: args.source.snaplen,
    };
    if args.keep_files.is_some() && sink_opts.rotate_bytes.is_none() && sink_opts.rotate_every.is_none() {
        anyhow::bail!("-W needs -C or -G: it keeps the newest N of the rotated files");
    }
    // Both callbacks below use the sink; they never run at the same time.
    let sink = match CaptureSink::create(sink_opts, &opened.source.interfaces()) {
        Ok(sink) => sink,
        // The system's error (a full disk, a closed pipe) says not what failed: say it.
        Err(e) if to_stdout && e.raw_os_error().is_some() => {
            return Err(e).context("writing the capture to standard output")
        }
        Err(e) => return Err(e.into()),
    };
    let sink = std::cell::RefCell::new(sink);
    let mut write_error = None;
    let quiet = args.quiet;
    let mut last_written = 0;
    let (mut number, mut first_ts) = (0u64, None::<i64>);
    let end = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        if filter.is_some() { driver::Decoding::All } else { driver::Decoding::UntilRoce },
        &stop,
        |rec, packet, _| {
            if let Some(f) = &filter {
                // Numbered and timed as decode numbers them, for `frame` and `time` terms.
                number = rec.number_after(number);
                let t0 = *first_ts.get_or_insert(rec.ts_ns);
                let place = FramePlace { number, rel_ns: rec.ts_ns - t0 };
                let sampled = packet.and_then(|p| crate::output::sflow::read(rec, p, &opts, true));
                let hit = packet.is_some_and(|p| f.matches_at(p, u64::from(rec.len), place))
                    || sampled.as_ref().is_some_and(|d| d.any_sample(|p, len| f.matches_at(p, len, place)));
                if !hit {
                    return Ok(Flow::Continue);
                }
            }
            match sink.borrow_mut().write(rec) {
                Ok(()) => Ok(Flow::Continue),
                Err(e) => {
                    write_error = Some(e);
                    Ok(Flow::Stop)
                }
            }
        },
        |stats| {
            // Once a second: make what is captured readable now, and show progress.
            let mut sink = sink.borrow_mut();
            if sink.flush().is_err() {
                return Flow::Stop;
            }
            if !quiet && !to_stdout {
                let w = sink.written();
                if let Some(s) = stats {
                    note!(
                        "rocescope: {w} packets written (+{}), {} dropped by kernel, {} by interface",
                        w - last_written,
                        s.kernel_dropped,
                        s.if_dropped
                    );
                }
                last_written = w;
            }
            Flow::Continue
        },
    )?;
    opened.clear_progress();
    let sink = sink.into_inner();
    let failure = sink.failure();
    let (summary, finish) = sink.finish(end.stats);
    driver::report_stats(&escape(&opened.name).to_string(), &end);
    note!("{}", written_text(&summary, to_stdout));
    for e in &summary.removal_errors {
        note!("rocescope: -W: {e}");
    }
    if end.interrupted {
        note!("(stopped by signal; every file is complete)");
    }
    if let Some(e) = failure.or(write_error).or(finish.err()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            note!("rocescope: the reader of standard output went away; stopped");
            return Ok(ExitCode::SUCCESS);
        }
        anyhow::bail!("writing the capture failed: {e}; the files hold every packet up to the failure");
    }
    // The error names the file, the place and the records read before it.
    if let Some(e) = end.source_error {
        return Err(e.into());
    }
    if let Some(msg) = end.empty_window() {
        return Err(crate::window::Usage(msg).into());
    }
    driver::note_window(&end);
    Ok(ExitCode::SUCCESS)
}

/// What was written where. A ring buffer (`-W`) says what it kept and what it rotated away:
/// "6640 packets written to 5 files; the newest 2 kept (2620 packets: a ... b), 3 files
/// (4020 packets) rotated away".
fn written_text(s: &SinkSummary, to_stdout: bool) -> String {
    let packets = |n: u64| format!("{n} {}", if n == 1 { "packet" } else { "packets" });
    let files = |n: u64| format!("{n} {}", if n == 1 { "file" } else { "files" });
    let mut text = if to_stdout {
        format!("{} written to standard output", packets(s.written))
    } else if s.removed_files == 0 {
        format!("{} written to {}", packets(s.written), files_text(&s.files))
    } else {
        let kept = s.files.len() as u64;
        format!(
            "{} written to {}; the newest {} kept ({}: {}), {} ({}) rotated away",
            packets(s.written),
            files(kept + s.removed_files),
            if kept == 1 { "file".to_string() } else { kept.to_string() },
            packets(s.kept_records()),
            match s.files.as_slice() {
                [one] => text::path(one),
                many => format!(
                    "{} ... {}",
                    many.first().map(|p| text::path(p)).unwrap_or_default(),
                    many.last().map(|p| text::path(p)).unwrap_or_default()
                ),
            },
            files(s.removed_files),
            packets(s.removed_records)
        )
    };
    if s.not_written > 0 {
        text.push_str(&format!(", {} not written", s.not_written));
    }
    text
}

fn files_text(files: &[std::path::PathBuf]) -> String {
    match files {
        [one] => text::path(one),
        many => format!(
            "{} files ({} ... {})",
            many.len(),
            many.first().map(|p| text::path(p)).unwrap_or_default(),
            many.last().map(|p| text::path(p)).unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_summary_says_what_the_ring_kept() {
        let s = SinkSummary {
            written: 6640,
            files: vec![PathBuf::from("x_00004.pcapng"), PathBuf::from("x_00005.pcapng")],
            file_records: vec![2011, 609],
            removed_files: 3,
            removed_records: 4020,
            ..SinkSummary::default()
        };
        assert_eq!(
            written_text(&s, false),
            "6640 packets written to 5 files; the newest 2 kept (2620 packets: x_00004.pcapng ... x_00005.pcapng), 3 files (4020 packets) rotated away"
        );
        let one = SinkSummary {
            written: 10,
            files: vec![PathBuf::from("x_00002.pcapng")],
            file_records: vec![1],
            removed_files: 1,
            removed_records: 9,
            not_written: 2,
            ..SinkSummary::default()
        };
        assert_eq!(
            written_text(&one, false),
            "10 packets written to 2 files; the newest file kept (1 packet: x_00002.pcapng), 1 file (9 packets) rotated away, 2 not written"
        );
        let plain = SinkSummary {
            written: 7,
            files: vec![PathBuf::from("a.pcap")],
            file_records: vec![7],
            ..SinkSummary::default()
        };
        assert_eq!(written_text(&plain, false), "7 packets written to a.pcap");
        assert_eq!(
            written_text(&SinkSummary { written: 1, ..plain }, true),
            "1 packet written to standard output"
        );
    }
}
