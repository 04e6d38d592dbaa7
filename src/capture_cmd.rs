//! `rocescope capture`: write what an interface (or a file) gives to pcapng or pcap, with
//! ring buffers, and say at the end what was captured, written and dropped.

use crate::cli::CaptureArgs;
use crate::driver::{self, Flow};
use rocescope_capture::{CaptureSink, FileFormat, SinkOptions};
use std::process::ExitCode;
use std::time::Duration;

/// Run the command.
pub fn run(args: &CaptureArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let mut opts = args.decoder.decode_options();
    opts.check_icrc = false; // only "is it RoCE" is needed here
    let mut opened = driver::open(&args.source, opts.roce_port, false)?;
    let to_stdout = args.write.as_os_str() == "-";
    let sink_opts = SinkOptions {
        path: args.write.clone(),
        format: if args.pcap { FileFormat::Pcap } else { FileFormat::PcapNg },
        rotate_bytes: args.file_mb.map(|mb| (mb * 1e6) as u64),
        rotate_every: args.rotate_secs.map(Duration::from_secs_f64),
        keep_files: args.keep_files,
    };
    if args.keep_files.is_some() && sink_opts.rotate_bytes.is_none() && sink_opts.rotate_every.is_none() {
        anyhow::bail!("-W needs -C or -G: it keeps the newest N of the rotated files");
    }
    // Both callbacks below use the sink; they never run at the same time.
    let sink = std::cell::RefCell::new(CaptureSink::create(sink_opts, &opened.source.interfaces())?);
    let mut write_error = None;
    let quiet = args.quiet;
    let mut last_written = 0;
    let end = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        driver::Decoding::UntilRoce,
        &stop,
        |rec, _packet| match sink.borrow_mut().write(rec) {
            Ok(()) => Ok(Flow::Continue),
            Err(e) => {
                write_error = Some(e);
                Ok(Flow::Stop)
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
                    eprintln!(
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
    let sink = sink.into_inner();
    let failure = sink.failure();
    let (summary, finish) = sink.finish(end.stats);
    driver::report_stats(&opened.name, &end);
    let not_written = summary.not_written;
    eprintln!(
        "{} packets written to {}{}",
        summary.written,
        if to_stdout { "standard output".to_string() } else { files_text(&summary.files) },
        if not_written > 0 { format!(", {not_written} not written") } else { String::new() }
    );
    if end.interrupted {
        eprintln!("(stopped by signal; every file is complete)");
    }
    if let Some(e) = failure.or(write_error).or(finish.err()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            eprintln!("rocescope: the reader of standard output went away; stopped");
            return Ok(ExitCode::SUCCESS);
        }
        anyhow::bail!("writing the capture failed: {e}; the files hold every packet up to the failure");
    }
    if let Some(e) = end.source_error {
        return Err(
            anyhow::Error::new(e).context(format!("{}: stopped after {} frames", opened.name, end.frames))
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn files_text(files: &[std::path::PathBuf]) -> String {
    match files {
        [one] => one.display().to_string(),
        many => format!(
            "{} files ({} ... {})",
            many.len(),
            many.first().map(|p| p.display().to_string()).unwrap_or_default(),
            many.last().map(|p| p.display().to_string()).unwrap_or_default()
        ),
    }
}
