//! The report as a timeline trace: Chrome's Trace Event Format (the JSON Object Format that
//! Perfetto and chrome://tracing open, and PyTorch's profiler writes), `report --trace FILE`
//! (docs/trace.md; the schema the tests check it against: docs/trace.schema.json).
//!
//! - A process per capture point, named after it; a thread per flow (one direction of a
//!   QP: `QP 0x126 10.0.0.1 → 10.0.0.2`), in the report's `flows` order (thread
//!   [`TID_BASE`] + its index; the point's process is its index + 1).
//! - On each flow's thread, its messages as slices (`X`: the packets from a First to its
//!   Last, or an Only; opcode, PSN range, packets and payload bytes in `args`), and its
//!   resends, NAKs (with the syndrome), ACK timeouts and CNPs as instants (`i`, thread
//!   scope), each naming its frame.
//! - Per point, counters (`C`) from the report's fabric timeline: RoCE bytes/s and paused
//!   µs per second, by priority.
//! - `ts` in µs since the Unix epoch with the nanoseconds as three decimals, so that the
//!   trace lines up with one of the job's GPUs on synchronised clocks.
//!
//! The events come from a [`Recorder`] fed frame by frame alongside the analyzer (its own
//! pass over the capture: the report's path is not touched). At most
//! [`TraceInfo::max_events`] slices and instants are kept; the rest are counted by kind in
//! the document's `otherData` and in [`Written::dropped`].
//!
//! ```
//! use rocescope_analyzer::{Analyzer, Config};
//! use rocescope_capture::CaptureReader;
//! use rocescope_decoder::DecodeOptions;
//! use rocescope_output::trace::{self, PacketInfo, Recorder, TraceInfo};
//! use std::path::Path;
//!
//! let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
//! let mut reader = CaptureReader::open(path)?;
//! let (mut analyzer, mut recorder) = (Analyzer::new(Config::default()), Recorder::new(1_000_000));
//! let opts = DecodeOptions::default();
//! while let Some(rec) = reader.next_record()? {
//!     let roce = analyzer.totals().roce;
//!     let packet = analyzer.push_record(&rec, &opts);
//!     let counted = analyzer.totals().roce > roce;
//!     let info = packet.roce.as_ref().map(|r| PacketInfo { opcode: r.bth.opcode(), psn: r.bth.psn() });
//!     let number = analyzer.totals().frames;
//!     recorder.frame(&analyzer, counted.then(|| analyzer.last_flow()).flatten(), info, number, rec.ts_ns);
//! }
//! analyzer.finish();
//! recorder.finish(&analyzer);
//! let report = analyzer.report();
//! let mut json = Vec::new();
//! let info = TraceInfo { source: "demo.pcap", max_events: 1_000_000 };
//! let written = trace::write(&mut json, &mut recorder, &analyzer, &report, &info)?;
//! let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
//! let resends: u64 = report.flows.iter().map(|f| f.psn.retransmits).sum();
//! assert_eq!(written.count("resends"), resends);
//! assert!(doc["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod event;
mod recorder;
mod write;

pub use event::{Cause, Event, Kind, Nak};
pub use recorder::{PacketInfo, Recorder};
pub use write::micros;

use rocescope_analyzer::report::Report;
use rocescope_analyzer::Analyzer;
use std::io::{self, Write};

/// The thread of flow 0: flow `i`'s is `TID_BASE + i`, apart from every process id (a
/// point's, its index + 1), since the viewers take a thread whose id is its process's for
/// that process's main thread.
pub const TID_BASE: u64 = 100_000;

/// The default cap on slices and instants (`report --trace-max-events`): about 56 bytes
/// each while recorded, and some 200 in the file.
pub const DEFAULT_MAX_EVENTS: usize = 3_000_000;

/// What the trace says of its making.
#[derive(Clone, Copy, Debug)]
pub struct TraceInfo<'a> {
    /// The capture (its file name, or the files merged), for `otherData.source`.
    pub source: &'a str,
    /// The cap the recorder was given, for `otherData.max_events`.
    pub max_events: usize,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Slices and instants written, by [`Kind`] (its index).
    pub events: [u64; Kind::COUNT],
    /// Slices and instants past the cap, not written, by [`Kind`].
    pub dropped: [u64; Kind::COUNT],
    /// Counter samples.
    pub counters: u64,
    /// Metadata events (process and thread names and order).
    pub metadata: u64,
    /// Bytes of the document.
    pub bytes: u64,
}

impl Written {
    /// Events of the kind whose key ([`Kind::key`]) is `key` written (0 for an unknown key).
    pub fn count(&self, key: &str) -> u64 {
        Kind::ALL.iter().position(|k| k.key() == key).and_then(|i| self.events.get(i)).copied().unwrap_or(0)
    }

    /// Slices and instants past the cap, all kinds together.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }
}

/// Write the trace of `a` (an analysis [finished](Analyzer::finish), whose report is
/// `report`) and of the events `rec` recorded ([`Recorder::finish`] called) into `out`
/// (buffered here). The recorder's events are sorted in place.
pub fn write<W: Write>(
    out: W,
    rec: &mut Recorder,
    a: &Analyzer,
    report: &Report,
    info: &TraceInfo<'_>,
) -> io::Result<Written> {
    write::write(out, rec, a, report, info)
}
