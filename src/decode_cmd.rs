//! `rocescope decode`: read a capture or an interface and print each frame as a summary line,
//! a tree or JSON.

use crate::cli::{DecodeArgs, OutputFormat};
use crate::driver::{self, Flow};
use crate::output::{fields::Fields, json, sflow, summary, verbose, Frame};
use crate::stdio::{self, note};
use anyhow::Context;
use rocescope_capture::text::escape;
use rocescope_capture::{CaptureSink, FileFormat, SinkOptions};
use rocescope_tui::filter::FramePlace;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// Run the command. A closed pipe (`| head`) ends the run quietly.
pub fn run(args: &DecodeArgs) -> anyhow::Result<ExitCode> {
    let format = match (args.format, args.json) {
        (Some(f), _) => f,
        (None, true) => OutputFormat::Ndjson,
        (None, false) => OutputFormat::Text,
    };
    // Mistakes in -T/-e/-E/-Y are usage errors (exit status 2, clap's format), found
    // before anything is read.
    let fields = match format {
        OutputFormat::Fields => match Fields::new(&args.fields, &args.field_opts) {
            Ok(f) => Some(f),
            Err(e) => return Ok(usage(&e)),
        },
        _ if !args.fields.is_empty() || !args.field_opts.is_empty() => {
            return Ok(usage("-e and -E go with -T fields"))
        }
        _ => None,
    };
    let opts = args.decoder.decode_options();
    let filter = match display_filter("decode", args.display_filter.as_deref(), opts.opcode) {
        Ok(f) => f,
        Err(status) => return Ok(status),
    };
    let to_stdout = args.write.as_ref().is_some_and(|w| w.as_os_str() == "-");
    if to_stdout && io::IsTerminal::is_terminal(&io::stdout()) {
        anyhow::bail!(
            "-w - writes a binary capture to standard output, which is a terminal: pipe it (| rocescope decode -r -) or redirect it (> matched.pcapng)"
        );
    }
    let stop = driver::install_signals()?;
    let mut opened = crate::signals::opening(|| driver::open(&args.source, &opts, true))?;
    // The bar goes where the frames do not: with -w, or when they go to a file or pipe.
    let setting = crate::progress::Setting {
        when: args.progress.progress,
        quiet: args.quiet,
        streams_stdout: args.write.is_none() && !args.quiet,
    };
    let label = if opened.source.is_live() { "capturing" } else { "reading" };
    opened.show_progress(setting, label, &args.source.read);
    // -w: the frames shown go to a capture file instead of the terminal (tshark -w).
    let mut sink = match &args.write {
        Some(path) => {
            let sink_opts = SinkOptions {
                path: path.clone(),
                format: if args.pcap { FileFormat::Pcap } else { FileFormat::PcapNg },
                rotate_bytes: None,
                rotate_every: None,
                keep_files: None,
                snaplen: args.source.snaplen,
            };
            match CaptureSink::create(sink_opts, &opened.source.interfaces()) {
                Ok(s) => Some(s),
                Err(e) if to_stdout && e.raw_os_error().is_some() => {
                    return Err(e).context("writing the capture to standard output")
                }
                Err(e) => return Err(e.into()),
            }
        }
        None => None,
    };
    let mut write_error = None;
    let live = opened.source.is_live();
    // Each frame as it comes when someone watches: live, -l, or a terminal (tshark and
    // tcpdump do the same); a file or pipe gets 64 kB writes.
    let flush_each = live || args.line_buffered || io::IsTerminal::is_terminal(&io::stdout());
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    if let Some(f) = fields.as_ref().filter(|f| f.header) {
        writeln!(out, "{}", f.header_line()).context("writing output")?;
    }
    let mut first_ts = None;
    let mut n = 0u64;
    let mut shown = 0u64;
    let mut json_line = String::with_capacity(512);
    let mut scratch = String::with_capacity(256);
    let mut pipe_closed = false;
    // Several files: each frame says which capture point it came from; in the text formats
    // with its control characters escaped (JSON escapes them itself).
    let raw_points: Option<Vec<String>> = opened.source.point_names();
    let points: Option<Vec<String>> =
        raw_points.as_ref().map(|p| p.iter().map(|n| escape(n).to_string()).collect());
    let point_json: Vec<String> = raw_points
        .iter()
        .flatten()
        .map(|p| format!("\"point\":{},", stdio::json_safe(&serde_json::Value::from(p.as_str()).to_string())))
        .collect();
    let end = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        driver::Decoding::All,
        &stop,
        |rec, packet, _| {
            let Some(packet) = packet else { return Ok(Flow::Continue) };
            n = rec.number_after(n);
            let t0 = *first_ts.get_or_insert(rec.ts_ns);
            // An sFlow datagram: its sampled headers are decoded and shown after it.
            let sampled = sflow::read(rec, packet, &opts, !args.no_sflow);
            if let Some(f) = &filter {
                let place = FramePlace { number: n, rel_ns: rec.ts_ns - t0 };
                let hit = f.matches_at(packet, u64::from(rec.len), place)
                    || sampled.as_ref().is_some_and(|d| d.any_sample(|p, len| f.matches_at(p, len, place)));
                if !hit {
                    return Ok(Flow::Continue);
                }
            }
            shown += 1;
            if let Some(s) = sink.as_mut() {
                return match s.write(rec) {
                    Ok(()) => Ok(Flow::Continue),
                    Err(e) => {
                        write_error = Some(e);
                        Ok(Flow::Stop)
                    }
                };
            }
            if args.quiet {
                return Ok(Flow::Continue);
            }
            let frame = Frame { number: n, record: rec, packet, rel_ns: rec.ts_ns - t0, opts: &opts };
            scratch.clear();
            let point = points.as_ref().and_then(|p| p.get(usize::from(rec.point)));
            if let Some(f) = &fields {
                json_line.clear();
                json::write(&frame, &mut json_line);
                if let Some(d) = &sampled {
                    add_sflow_json(d, &opts, n, &mut json_line);
                }
                let mut v: serde_json::Value = serde_json::from_str(&json_line).unwrap_or_default();
                if let (Some(p), Some(o)) = (point, v.as_object_mut()) {
                    o.insert("point".into(), p.as_str().into());
                }
                if let (true, Some(o)) = (f.wants_time_relative(), v.as_object_mut()) {
                    let text = crate::output::exact::epoch_secs(rec.ts_ns - t0);
                    o.insert(crate::output::fields::TIME_RELATIVE.into(), text.into());
                }
                f.line(&v, &mut scratch);
            } else if matches!(format, OutputFormat::Json | OutputFormat::Ndjson) {
                // -T json: one array, its objects separated by ",\n".
                if format == OutputFormat::Json {
                    scratch.push_str(if shown == 1 { "[\n" } else { ",\n" });
                }
                json::write(&frame, &mut scratch);
                if let Some(d) = &sampled {
                    add_sflow_json(d, &opts, n, &mut scratch);
                }
                if let Some(p) = point_json.get(usize::from(rec.point)) {
                    if let Some(at) = scratch.find('{') {
                        scratch.insert_str(at + 1, p);
                    }
                }
            } else if args.verbose {
                if let Some(p) = point {
                    scratch.push_str("Capture point: ");
                    scratch.push_str(p);
                    scratch.push('\n');
                }
                verbose::write(&frame, &mut scratch);
                if let Some(d) = &sampled {
                    d.verbose(&opts, n, &mut scratch);
                }
            } else {
                if let Some(p) = point {
                    scratch.push('[');
                    scratch.push_str(p);
                    scratch.push_str("] ");
                }
                summary::write(&frame, &mut scratch);
                if let Some(d) = &sampled {
                    d.summary_tag(&mut scratch);
                    d.summary_lines(&opts, n, &mut scratch);
                }
            }
            if format != OutputFormat::Json {
                scratch.push('\n');
            }
            let res =
                out.write_all(scratch.as_bytes())
                    .and_then(|()| if flush_each { out.flush() } else { Ok(()) });
            match res {
                Ok(()) => Ok(Flow::Continue),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    pipe_closed = true;
                    Ok(Flow::Stop)
                }
                Err(e) => Err(e).context("writing output"),
            }
        },
        |_| Flow::Continue,
    )?;
    opened.clear_progress();
    if format == OutputFormat::Json && !pipe_closed && sink.is_none() && !args.quiet {
        let end = if shown == 0 { "[]\n" } else { "\n]\n" };
        if let Err(e) = out.write_all(end.as_bytes()) {
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(e).context("writing output");
            }
        }
    }
    if !pipe_closed {
        if let Err(e) = out.flush() {
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(e).context("writing output");
            }
        }
    }
    driver::report_stats(&escape(&opened.name).to_string(), &end);
    if let Some(s) = sink {
        let failure = s.failure();
        let (summary, finish) = s.finish(end.stats);
        let to = match args.write.as_deref() {
            Some(p) if !to_stdout => rocescope_capture::text::path(p).to_string(),
            _ => "standard output".to_string(),
        };
        match &args.display_filter {
            Some(f) => note!(
                "{} of {} frames matched the display filter {}; written to {to}",
                summary.written,
                end.frames,
                filter_name(f)
            ),
            None => note!("{} frames written to {to}", summary.written),
        }
        if let Some(e) = failure.or(write_error).or(finish.err()) {
            if e.kind() != io::ErrorKind::BrokenPipe {
                anyhow::bail!(
                    "writing the capture failed: {e}; the file holds every frame up to the failure"
                );
            }
        }
    } else if args.quiet {
        match &args.display_filter {
            Some(f) => {
                note!("{} frames read, {shown} matched the display filter {}", end.frames, filter_name(f))
            }
            None => note!("{} frames read", end.frames),
        }
    }
    if let (OutputFormat::Json | OutputFormat::Ndjson, Some(s)) = (format, end.stats) {
        let doc = serde_json::json!({"capture": {"interface": opened.name, "frames": end.frames, "received": s.received,
            "kernel_dropped": s.kernel_dropped, "if_dropped": s.if_dropped}});
        note!("{}", stdio::json_safe(&doc.to_string()));
    }
    if let Some(msg) = end.empty_window() {
        return Err(crate::window::Usage(msg).into());
    }
    if args.quiet || args.write.is_some() {
        driver::note_window(&end);
    }
    // The error names the file, the place and the records read before it.
    match end.source_error {
        None => Ok(ExitCode::SUCCESS),
        Some(e) => Err(e.into()),
    }
}

/// Put the `"sflow"` object into the frame's JSON object `obj` (before its closing brace).
fn add_sflow_json(
    d: &sflow::Datagram<'_>,
    opts: &rocescope_decoder::DecodeOptions,
    number: u64,
    obj: &mut String,
) {
    if obj.ends_with('}') {
        obj.pop();
        obj.push_str(",\"sflow\":");
        d.json(opts, number, obj);
        obj.push('}');
    }
}

/// Say a usage error for `rocescope decode` as clap does; its exit status (2).
fn usage(msg: &str) -> ExitCode {
    usage_of("decode", msg)
}

/// Say a usage error for subcommand `command` as clap does; its exit status (2).
fn usage_of(command: &str, msg: &str) -> ExitCode {
    let mut cmd = <crate::cli::Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut sub = cmd.find_subcommand(command).cloned().unwrap_or(cmd);
    stdio::clap_exit(&sub.error(clap::error::ErrorKind::ValueValidation, msg))
}

/// `-Y` of `command` (decode, capture) parsed, opcode names read as `opcode` says; a filter
/// that does not parse is a usage error, said (naming a long filter by its start), with its
/// status in `Err`.
pub(crate) fn display_filter(
    command: &str,
    text: Option<&str>,
    opcode: rocescope_decoder::OpcodeOptions,
) -> Result<Option<rocescope_tui::filter::PacketFilter>, ExitCode> {
    let Some(text) = text else { return Ok(None) };
    match rocescope_tui::filter::PacketFilter::parse(text) {
        Ok(f) => Ok(f.map(|f| f.with_opcode_options(opcode))),
        Err(e) => Err(usage_of(command, &format!("display filter {}: {e}", filter_name(text)))),
    }
}

/// A display filter as messages name it, quoted: a pasted filter of thousands of characters by
/// its first 80.
fn filter_name(text: &str) -> String {
    let shown: String = text.chars().take(80).collect();
    let more = if text.chars().count() > 80 { "..." } else { "" };
    format!("{shown:?}{more}")
}
