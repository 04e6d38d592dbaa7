//! `rocescope decode`: read a capture or an interface and print each frame as a summary line,
//! a tree or JSON.

use crate::cli::DecodeArgs;
use crate::driver::{self, Flow};
use crate::output::{json, summary, verbose, Frame};
use anyhow::Context;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// Run the command. A closed pipe (`| head`) ends the run quietly.
pub fn run(args: &DecodeArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let opts = args.decoder.decode_options();
    let mut opened = driver::open(&args.source, opts.roce_port, true)?;
    let live = opened.source.is_live();
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut first_ts = None;
    let mut n = 0u64;
    let mut scratch = String::with_capacity(256);
    let mut pipe_closed = false;
    // Several files: each frame says which capture point it came from.
    let points: Option<Vec<String>> = opened.source.point_names();
    let point_json: Vec<String> = points
        .iter()
        .flatten()
        .map(|p| format!("\"point\":{},", serde_json::Value::from(p.as_str())))
        .collect();
    let end = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        driver::Decoding::All,
        &stop,
        |rec, packet| {
            let Some(packet) = packet else { return Ok(Flow::Continue) };
            n += 1;
            let t0 = *first_ts.get_or_insert(rec.ts_ns);
            let frame = Frame { number: n, record: rec, packet, rel_ns: rec.ts_ns - t0, opts: &opts };
            scratch.clear();
            let point = points.as_ref().and_then(|p| p.get(usize::from(rec.point)));
            if args.json {
                json::write(&frame, &mut scratch);
                if let (Some(p), true) = (point_json.get(usize::from(rec.point)), scratch.starts_with('{')) {
                    scratch.insert_str(1, p);
                }
            } else if args.verbose {
                if let Some(p) = point {
                    scratch.push_str("Capture point: ");
                    scratch.push_str(p);
                    scratch.push('\n');
                }
                verbose::write(&frame, &mut scratch);
            } else {
                if let Some(p) = point {
                    scratch.push('[');
                    scratch.push_str(p);
                    scratch.push_str("] ");
                }
                summary::write(&frame, &mut scratch);
            }
            scratch.push('\n');
            let res =
                out.write_all(scratch.as_bytes()).and_then(|()| if live { out.flush() } else { Ok(()) });
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
    if !pipe_closed {
        if let Err(e) = out.flush() {
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(e).context("writing output");
            }
        }
    }
    driver::report_stats(&opened.name, &end);
    if let (true, Some(s)) = (args.json, end.stats) {
        eprintln!(
            "{}",
            serde_json::json!({"capture": {"interface": opened.name, "frames": end.frames, "received": s.received,
                "kernel_dropped": s.kernel_dropped, "if_dropped": s.if_dropped}})
        );
    }
    match end.source_error {
        None => Ok(ExitCode::SUCCESS),
        Some(e) => Err(e).with_context(|| format!("{}: stopped after {n} frames", opened.name)),
    }
}
