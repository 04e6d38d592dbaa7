//! `report --trace FILE`: the analysis as a timeline trace (Trace Event Format JSON,
//! docs/trace.md), made by a second pass over the capture files once the report is out.
//!
//! The report's own pass is left as it is (its per-frame cost does not change with or
//! without the option): this pass reads the files again with an analyzer of its own, single
//! threaded, and a [`Recorder`] that reads each frame's outcome off it. Its flows are the
//! report's, in the same order (a parallel report is the single-threaded one), so the
//! trace's threads and counts are the report's. Standard input, a pipe or a FIFO cannot be
//! read twice, nor an interface or an sFlow socket: the option is refused for them before
//! anything is read.

use crate::cli::ReportArgs;
use crate::driver::{self, Flow};
use crate::stdio::note;
use anyhow::Context;
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::text;
use rocescope_decoder::DecodeOptions;
use rocescope_output::tmpfile::Temp;
use rocescope_output::trace::{self, Kind, PacketInfo, Recorder, TraceInfo, Written};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A trace to write: its file, created (under a temporary name) before any frame is read.
pub struct TraceOut {
    temp: Temp,
    path: PathBuf,
    max_events: usize,
}

impl TraceOut {
    /// `--trace`'s file, when given: refused for a source that cannot be read twice (a
    /// usage error), created in its directory under a temporary name (an unwritable
    /// directory is an error at once).
    pub fn create(args: &ReportArgs) -> anyhow::Result<Option<TraceOut>> {
        let Some(path) = &args.trace else { return Ok(None) };
        let stream = args.source.read.iter().find(|p| crate::input::is_stream(p));
        if args.source.read.is_empty() || stream.is_some() {
            let what = match stream {
                Some(p) if p.as_os_str() == "-" => String::from("standard input"),
                Some(p) => format!("{} (a pipe or FIFO)", text::path(p)),
                None if args.source.interface.is_some() => String::from("a live interface"),
                None => String::from("an sFlow socket"),
            };
            return Err(crate::window::Usage(format!(
                "--trace reads the capture a second time, which {what} cannot give: write it to a file first (tcpdump -w, rocescope capture -w) and give that"
            ))
            .into());
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        let temp = Temp::create(dir, &name, ".tmp")
            .with_context(|| format!("--trace: cannot write in {}", text::path(dir)))?;
        Ok(Some(TraceOut { temp, path: path.clone(), max_events: args.trace_max_events }))
    }

    /// Read the capture again with `cfg`, record, and write the trace (renamed into place
    /// once complete). `stop` (a signal) ends the pass; no file is left then.
    pub fn run(
        self,
        args: &ReportArgs,
        opts: &DecodeOptions,
        cfg: &Config,
        stop: &AtomicBool,
    ) -> anyhow::Result<Written> {
        let mut opened = driver::open(&args.source, opts, false)?;
        // The report's pass has said what there is to say about the input.
        opened.quiet = true;
        let mut a = Analyzer::new(cfg.clone());
        let mut rec = Recorder::new(self.max_events);
        let mut number = 0u64;
        let mut sampled: Vec<usize> = Vec::new();
        let end = driver::pump(
            &mut opened,
            &args.source,
            opts,
            driver::Decoding::All,
            stop,
            |r, packet, _| {
                number = r.number_after(number);
                let Some(p) = packet else { return Ok(Flow::Continue) };
                let roce = a.totals().roce;
                a.push_frame_with(number, r, p, opts, |s| sampled.extend(s.flow));
                if !sampled.is_empty() {
                    // An sFlow datagram: each sampled header in its own flow, no message
                    // to follow (one packet in N).
                    for f in sampled.drain(..) {
                        rec.frame(&a, Some(f), None, number, r.ts_ns);
                    }
                } else if a.totals().roce > roce {
                    let info =
                        p.roce.as_ref().map(|x| PacketInfo { opcode: x.bth.opcode(), psn: x.bth.psn() });
                    rec.frame(&a, a.last_flow(), info, number, r.ts_ns);
                }
                Ok(Flow::Continue)
            },
            |_| Flow::Continue,
        )?;
        if end.interrupted {
            anyhow::bail!("interrupted before the trace was complete; no trace written");
        }
        a.finish();
        rec.finish(&a);
        let streamed = a.report_streamed();
        let info = TraceInfo { source: &opened.name, max_events: self.max_events };
        let TraceOut { mut temp, path, .. } = self;
        let written = trace::write(&mut temp.file, &mut rec, &a, &streamed.report, &info)
            .with_context(|| format!("writing {}", text::path(&path)))?;
        temp.persist(&path).with_context(|| format!("writing {}", text::path(&path)))?;
        // The process ends soon: freeing flow by flow would only take time.
        std::mem::forget(streamed);
        std::mem::forget(a);
        Ok(written)
    }

    /// The file's name, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Say what was written on standard error (and what the cap left out, by kind).
pub fn note_written(path: &Path, w: &Written, quiet: bool) {
    if !quiet {
        let kinds: Vec<String> = Kind::ALL
            .iter()
            .zip(w.events.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} {}", k.key().replace('_', " ")))
            .collect();
        let what = if kinds.is_empty() { String::from("no slice or instant") } else { kinds.join(", ") };
        let size = if w.bytes < 1_000_000 {
            format!("{:.1} kB", w.bytes as f64 / 1e3)
        } else {
            format!("{:.1} MB", w.bytes as f64 / 1e6)
        };
        note!("rocescope: wrote {} ({what}; {} counter samples; {size})", text::path(path), w.counters);
    }
    if w.dropped_total() > 0 {
        let kinds: Vec<String> = Kind::ALL
            .iter()
            .zip(w.dropped.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} {}", k.key().replace('_', " ")))
            .collect();
        note!(
            "rocescope: --trace: {} events past --trace-max-events not written ({}); the trace's otherData.dropped counts them",
            w.dropped_total(),
            kinds.join(", ")
        );
    }
}
