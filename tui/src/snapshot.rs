//! What the worker sends the UI: the analyzer's report plus what the header and the packet
//! list need.

use rocescope_analyzer::Report;

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
    /// Wall-clock seconds since the start (live) or analysis time (file).
    pub elapsed_s: f64,
    /// Packets per second over the last interval.
    pub rate_pps: f64,
    /// Gb/s over the last interval.
    pub rate_gbps: f64,
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
}

impl Snapshot {
    /// An empty snapshot for `source` before any packet.
    pub fn empty(report: Report, source: &str, live: bool) -> Self {
        Snapshot {
            report,
            source: source.to_string(),
            live,
            elapsed_s: 0.0,
            rate_pps: 0.0,
            rate_gbps: 0.0,
            progress: if live { None } else { Some(0.0) },
            done: false,
            frames: Vec::new(),
            error: None,
            notice: None,
        }
    }
}
