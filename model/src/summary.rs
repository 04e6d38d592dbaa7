//! Whole-capture figures: the report's `summary`, its time window and capture quality, how the reading ended, sampling and sFlow, and the settings used.

use crate::findings::SeverityCounts;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// How far an interrupted report read its files.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Interruption {
    /// The signal: `SIGINT` or `SIGTERM`.
    pub signal: Cow<'static, str>,
    /// Frames read.
    pub frames_read: u64,
    /// Bytes of the files read, about (record headers and data), when their sizes are known
    /// (uncompressed files; not standard input).
    pub bytes_read: Option<u64>,
    /// Their sizes together.
    pub bytes_total: Option<u64>,
}

/// What the sFlow datagrams of a capture held.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SflowReport {
    /// sFlow v5 datagrams read.
    pub datagrams: u64,
    /// Flow samples (formats 1 and 3) in them.
    pub flow_samples: u64,
    /// Raw Ethernet packet headers analysed.
    pub headers: u64,
    /// Counter samples and samples of other formats, skipped.
    pub skipped_samples: u64,
    /// Flow records other than Ethernet raw headers (extended records, other protocols),
    /// skipped.
    pub skipped_records: u64,
    /// Datagrams to the sFlow port that could not be read (analysed as ordinary frames).
    pub bad_datagrams: u64,
    /// Why the first of those could not be read, with its frame number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Each data source (agent and interface) in the order first seen.
    pub sources: Vec<SflowSource>,
}

/// One sFlow data source: an agent's interface, a capture point of the analysis.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SflowSource {
    /// The agent address the datagrams give.
    pub agent: String,
    /// Sub-agent id.
    pub sub_agent: u32,
    /// Data source type (0: ifIndex).
    pub source_type: u32,
    /// Data source index (the ifIndex for type 0).
    pub if_index: u32,
    /// Capture point (index into `points`).
    pub point: u16,
    /// Flow samples received.
    pub samples: u64,
    /// Sampling rate of its latest sample (one in N).
    pub sampling_rate: u32,
    /// Samples the agent says it dropped (its latest count).
    pub drops: u32,
    /// Samples missing by the sample sequence numbers (datagrams lost on the way to the
    /// collector, or dropped by the agent).
    pub sequence_gaps: u64,
}

/// A sampled capture (docs/verdicts.md "Sampled captures"): packet and byte counters are
/// estimates (each sampled packet counted as many times as its sampling rate), and the
/// verdicts that need every packet are off.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SampledReport {
    /// `flag` (`--sample-rate N`) or `sflow` (the rates sFlow agents sent).
    pub source: SamplingSource,
    /// The sampling rate (one packet in N) when one rate applies to every packet; `null`
    /// when sFlow agents used several (see `rate_min`, `rate_max`).
    pub rate: Option<u32>,
    /// Smallest rate met (the configured one before any packet).
    pub rate_min: u32,
    /// Largest rate met.
    pub rate_max: u32,
    /// Packets actually seen (samples), unscaled; `summary.packets` is the estimate.
    pub samples: u64,
    /// Always false: PSN-gap loss, resend causes, reordering, one-way connections, CE
    /// without CNP, PFC storms and deadlock hints, matching across capture points and
    /// pauses on priorities no RoCE uses are not judged on a sampled capture.
    pub loss_verdicts: bool,
    /// Findings of those kinds the analysis would have made, not made.
    pub suppressed_findings: u64,
    /// Latencies (ACK, READ, NAK to resend, CE to CNP) are measured between sampled
    /// packets only, so each is an upper bound of the real one: true.
    pub latency_upper_bound: bool,
}

/// libpcap's counters for a live capture.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaptureCounters {
    /// Interface.
    pub interface: String,
    /// Packets the filter accepted.
    pub received: u64,
    /// Dropped by the kernel (buffer full).
    pub kernel_dropped: u64,
    /// Dropped by the interface or driver.
    pub if_dropped: u64,
}

/// Whole-capture counters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// Frames.
    pub packets: u64,
    /// RoCE frames that decoded completely (v1 and v2).
    pub roce: u64,
    /// Of those, RoCEv1.
    pub roce_v1: u64,
    /// Frames that are neither RoCE nor MAC Control.
    pub non_roce: u64,
    /// Frames to the RoCE port that did not decode as RoCE.
    pub malformed: u64,
    /// Frames in a tunnel the decoder recognised but did not unwrap (also in `non_roce`).
    pub tunnel_undecoded: u64,
    /// Invalid ICRCs.
    pub icrc_bad: u64,
    /// ICRCs not checkable because the capture cut the frame.
    pub icrc_truncated: u64,
    /// PFC frames.
    pub pfc_frames: u64,
    /// 802.3x PAUSE frames.
    pub pause_frames: u64,
    /// CNPs.
    pub cnps: u64,
    /// First frame time (ns since the epoch).
    pub start_ns: Option<i64>,
    /// Last frame time.
    pub end_ns: Option<i64>,
    /// Flows.
    pub flows: u64,
    /// Connections (paired or not).
    pub connections: u64,
    /// Wire bytes of RoCE frames.
    pub roce_bytes: u64,
    /// Path MTU used for READ reservations (configured or inferred; 0 unknown).
    pub pmtu: u32,
    /// RoCE frames that were a mirror's second copy of a packet (crate::dedup): left out
    /// of `roce` and every other figure unless `config.keep_duplicates`.
    pub duplicates: u64,
    /// Capture records with no captured byte, passed over by the reader (nothing to analyse,
    /// not in `packets`; set by the caller). Frame numbers count them, as tshark's do.
    pub empty_records: u64,
    /// Flows no longer tracked (idle, or past `--max-flows`): not in `flows`; their packets
    /// and wire bytes are `evicted_packets` and `evicted_bytes`.
    pub flows_evicted: u64,
    /// See `flows_evicted`.
    pub evicted_packets: u64,
    /// See `flows_evicted`.
    pub evicted_bytes: u64,
    /// Findings by severity.
    pub findings: SeverityCounts,
    /// Frames held back while an ERSPAN III session's switch clock is checked, not yet
    /// analysed (a report built mid-capture; `Analyzer::finish` analyses them). Absent at 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frames_held: u64,
    /// The capture holds a low share of its request packets (the analyzer's `report::quality`):
    /// rates and latencies are samples. Absent when it holds most of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_quality: Option<CaptureQuality>,
    /// The time window the report was made over (`--from`, `--to`; set by the caller, which
    /// skips the frames outside it before analysis). Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
}

/// The time window of a report (`report --from T --to T`) or of one side of `compare
/// --split-at`: the frames outside it were skipped before the analysis and count nowhere
/// but in `frames_outside`. Every other figure of the report is the window's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// `--from` as given (`+1.5s`, `2026-12-06T10:00:00.5Z`, `1733480000.25`); `None`:
    /// from the first frame.
    pub from: Option<String>,
    /// `--to` as given; `None`: to the last frame.
    pub to: Option<String>,
    /// The window's first instant (inclusive), ns since the epoch: `from` resolved (a
    /// relative time against the first frame of all the inputs). `None`: unbounded, or a
    /// relative time with no frame read to resolve it against.
    pub start_ns: Option<i64>,
    /// The window's end (exclusive), ns since the epoch. `None`: unbounded (or unresolved).
    pub end_ns: Option<i64>,
    /// Frames read but outside the window: skipped, in no other figure.
    pub frames_outside: u64,
}

/// Settings used.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigReport {
    /// Link speed for pause quanta when the capture gives none.
    pub link_speed_bps: u64,
    /// Storm window.
    pub storm_window_ns: i64,
    /// Storm threshold (paused fraction).
    pub storm_threshold: f64,
    /// Deadlock hint threshold.
    pub deadlock_ns: i64,
    /// How long after a pause took effect RoCE to the pausing MAC may still arrive
    /// (`--pause-allowance-us`); later frames ignored the pause.
    pub pause_allowance_ns: i64,
    /// Mirror duplicates analysed as packets of their own (`--keep-duplicates`).
    pub keep_duplicates: bool,
}

/// The capture's share of the request packets of its RC/XRC QPs (estimated from PSN gaps
/// no NAK, resend or late packet explains). Absent from the report when the capture holds
/// at least the analyzer's `report::quality::HEADLINE_BELOW` of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureQuality {
    /// Request packets seen / (seen + missing), 0..1.
    pub share: f64,
    /// Distinct request PSNs the capture holds (resends counted once).
    pub psns_seen: u64,
    /// Request PSNs missing in gaps no NAK, resend or late packet explains.
    pub psns_missing: u64,
    /// Request flows with such gaps.
    pub flows: u64,
    /// The sentence the report leads with.
    pub note: String,
}

/// Where a sampling rate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplingSource {
    /// `--sample-rate N`: the user says the capture holds one packet in N.
    Flag,
    /// sFlow flow samples, each with the sampling rate its agent used.
    Sflow,
}

impl SamplingSource {
    /// Its name in the report: `flag` or `sflow`.
    pub fn as_str(self) -> &'static str {
        match self {
            SamplingSource::Flag => "flag",
            SamplingSource::Sflow => "sflow",
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
