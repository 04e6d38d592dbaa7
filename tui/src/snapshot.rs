//! What the worker sends the UI: the analyzer's report plus what the header and the packet
//! list need.

use crate::app::QpRow;
use rocescope_analyzer::Report;
use std::sync::Arc;

/// One recent frame, already formatted by the worker (numbers only: no bytes from the wire
/// reach the terminal raw).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameLine {
    /// 1-based frame number.
    pub number: u64,
    /// Capture time.
    pub ts_ns: i64,
    /// Index of its flow in `Report::flows`, if RoCE.
    pub flow: Option<usize>,
    /// tshark-like summary.
    pub summary: String,
    /// The bytes kept for the tree and hex dump (the first few hundred).
    pub bytes: Vec<u8>,
    /// Length on the wire, so a tree decoded from the kept bytes says what was cut.
    pub wire_len: u32,
    /// Link type, for decoding the tree on demand.
    pub link_type: u32,
}

/// A complete picture for one render.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The analysis so far.
    pub report: Report,
    /// File name or interface.
    pub source: String,
    /// Live capture.
    pub live: bool,
    /// A file played back at this multiple of capture speed (`--replay`), else `None`.
    pub replay: Option<f64>,
    /// Wall-clock seconds since the start (live) or analysis time (file).
    pub elapsed_s: f64,
    /// Packets per second over the last interval: per second of capture time when live or
    /// replaying; for a file read as fast as it goes, the reading speed (the header shows the
    /// capture's own mean rate instead, from `wire_bytes` and the capture span).
    pub rate_pps: f64,
    /// Gb/s over the last interval (capture time, as `rate_pps`).
    pub rate_gbps: f64,
    /// Wire bytes of every frame so far.
    pub wire_bytes: u64,
    /// Offline analysis progress, 0..=1 (`None` for live).
    pub progress: Option<f64>,
    /// The source is exhausted (file read to the end).
    pub done: bool,
    /// The most recent frames, oldest first.
    pub frames: Vec<FrameLine>,
    /// An error that stopped the worker.
    pub error: Option<String>,
    /// Something the user should know that is not an error (e.g. a live interface that has
    /// shown no RoCE yet, and why that may be).
    pub notice: Option<String>,
    /// The QPs rows of `report` (one per connection), built by the worker so that a million
    /// connections do not stall the UI thread; `None`: the UI builds them.
    pub rows: Option<Arc<Vec<QpRow>>>,
    /// How the worker decodes (RoCE port, opcode reading): the Packets screen's filter
    /// decodes the kept frames again the same way.
    pub decode: rocescope_decoder::DecodeOptions,
}

impl Snapshot {
    /// An empty snapshot for `source` before any packet.
    pub fn empty(report: Report, source: &str, live: bool) -> Self {
        Snapshot {
            report,
            source: source.to_string(),
            live,
            replay: None,
            elapsed_s: 0.0,
            rate_pps: 0.0,
            rate_gbps: 0.0,
            wire_bytes: 0,
            progress: if live { None } else { Some(0.0) },
            done: false,
            frames: Vec::new(),
            error: None,
            notice: None,
            rows: None,
            decode: rocescope_decoder::DecodeOptions::default(),
        }
    }
}

/// What the worker sends the UI.
#[derive(Clone, Debug)]
pub enum Update {
    /// A complete picture.
    Full(Box<Snapshot>),
    /// Fresh header figures between two complete pictures: building a report over a
    /// million connections takes seconds, and the header must keep moving meanwhile.
    Pulse(Pulse),
    /// The worker is about to build a snapshot of many flows: the UI gives up the tables of
    /// the one it shows ([`crate::App::release`]) and answers `true` once they are freed, or
    /// `false` when it keeps them (a frozen view: the worker then builds none).
    Release(std::sync::mpsc::SyncSender<bool>),
}

/// The header's figures, cheap to take at any time (no report is built).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pulse {
    /// Frames so far.
    pub packets: u64,
    /// RoCE frames so far.
    pub roce: u64,
    /// Frames with a bad ICRC.
    pub icrc_bad: u64,
    /// Frames to the RoCE port that did not decode.
    pub malformed: u64,
    /// Mirror duplicates (second copies of packets) so far.
    pub duplicates: u64,
    /// First and latest capture time.
    pub start_ns: Option<i64>,
    /// Latest capture time.
    pub end_ns: Option<i64>,
    /// As [`Snapshot::elapsed_s`].
    pub elapsed_s: f64,
    /// As [`Snapshot::rate_pps`].
    pub rate_pps: f64,
    /// As [`Snapshot::rate_gbps`].
    pub rate_gbps: f64,
    /// As [`Snapshot::wire_bytes`].
    pub wire_bytes: u64,
    /// As [`Snapshot::progress`].
    pub progress: Option<f64>,
}

impl Snapshot {
    /// Take the header figures of `p` (the tables stay as they are until the next complete
    /// snapshot).
    pub fn apply(&mut self, p: &Pulse) {
        let sm = &mut self.report.summary;
        sm.packets = p.packets;
        sm.roce = p.roce;
        sm.icrc_bad = p.icrc_bad;
        sm.malformed = p.malformed;
        sm.duplicates = p.duplicates;
        sm.start_ns = p.start_ns;
        sm.end_ns = p.end_ns;
        self.elapsed_s = p.elapsed_s;
        self.rate_pps = p.rate_pps;
        self.rate_gbps = p.rate_gbps;
        self.wire_bytes = p.wire_bytes;
        self.progress = p.progress;
    }
}
