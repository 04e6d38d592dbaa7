//! `rocescope decode`: read a capture and print each frame as a summary line, a tree or JSON.

use crate::cli::DecodeArgs;
use crate::output::{json, summary, verbose, Frame};
use anyhow::Context;
use rocescope_capture::CaptureReader;
use rocescope_decoder::decode;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// Run the command. Output errors from a closed pipe (`| head`) end the run quietly.
pub fn run(args: &DecodeArgs) -> anyhow::Result<ExitCode> {
    let mut reader = CaptureReader::open(&args.read)?;
    let opts = args.decoder.decode_options();
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut first_ts = None;
    let mut n = 0u64;
    let mut scratch = String::with_capacity(256);
    let result = loop {
        if args.count.is_some_and(|c| n >= c) {
            break Ok(());
        }
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        n += 1;
        let t0 = *first_ts.get_or_insert(rec.ts_ns);
        let packet = decode(rec.link_type, rec.data, &opts);
        let frame = Frame { number: n, record: &rec, packet: &packet, rel_ns: rec.ts_ns - t0, opts: &opts };
        scratch.clear();
        if args.json {
            json::write(&frame, &mut scratch);
        } else if args.verbose {
            verbose::write(&frame, &mut scratch);
        } else {
            summary::write(&frame, &mut scratch);
        }
        scratch.push('\n');
        if let Err(e) = out.write_all(scratch.as_bytes()) {
            return quiet_pipe(e);
        }
    };
    if let Err(e) = out.flush() {
        return quiet_pipe(e);
    }
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e).with_context(|| format!("{}: stopped after {n} frames", args.read.display())),
    }
}

fn quiet_pipe(e: io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(e).context("writing output")
    }
}
