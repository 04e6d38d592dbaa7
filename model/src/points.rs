//! The capture points: the report's `points` and the packets lost `between` them.

use crate::marks::MarksReport;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One capture point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointReport {
    /// Its name (capture file name, or interface).
    pub name: String,
    /// Frames.
    pub packets: u64,
    /// RoCE frames.
    pub roce: u64,
    /// Mirror duplicates at this point (crate::dedup). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// First frame time.
    pub start_ns: Option<i64>,
    /// Latest frame time.
    pub end_ns: Option<i64>,
    /// The mirror session this point stands for (`ERSPAN session 7`, `VXLAN VNI 10007`),
    /// when a tunnel named one (crate::mirror).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The switch clock that timed this point's frames (ERSPAN III), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<PointClock>,
    /// RoCE packets whose PCP came from their ERSPAN header's COS (the frame was untagged).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pcp_from_erspan: u64,
    /// Frames whose ERSPAN III timestamp could not be used (zero, the user-defined
    /// granularity, nanoseconds past a second): they kept their capture time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_stamps_unused: u64,
    /// Its packets were matched against the other points' (merged captures; not points
    /// found while reading: mirror sessions, sFlow sources). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub matched: bool,
    /// The capture's own counters at this point, as its pcapng file recorded them (its
    /// Interface Statistics Blocks): what the capture received and dropped. Absent when the
    /// file holds none. The caller fills it in (the analyzer sees frames, not blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_counters: Option<PointCaptureCounters>,
    /// The DSCP and PCP of its data, ACK/NAKs and CNPs, packet by packet (crate::marks;
    /// absent past the first 256 points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks: Option<MarksReport>,
}

/// The capture counters a capture point's pcapng file recorded: its interfaces' last usable
/// Interface Statistics Blocks added up (docs/report-json.md). Each count is the sum over the
/// interfaces that gave it, null when none did: an absent option is unknown, not zero.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PointCaptureCounters {
    /// Where they come from: `pcapng` (Interface Statistics Blocks).
    pub source: Cow<'static, str>,
    /// The interfaces whose counters these are (`if_name`, or `interface N`).
    pub interfaces: Vec<String>,
    /// `isb_ifrecv`: packets received from the interfaces.
    pub received: Option<u64>,
    /// `isb_ifdrop`: packets dropped by the interface (dumpcap writes the kernel's and its
    /// own drops here too).
    pub if_dropped: Option<u64>,
    /// `isb_osdrop`: packets dropped by the operating system.
    pub os_dropped: Option<u64>,
    /// The drops known: `if_dropped` + `os_dropped`; null when neither is.
    pub dropped: Option<u64>,
    /// Interface Statistics Blocks set aside (damaged, or naming an interface not
    /// described). Absent when none.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub damaged_blocks: u32,
    /// An interface's later block counted less than an earlier one (the last was kept).
    /// Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub went_backwards: bool,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A switch clock that timed a capture point's frames (crate::mirror: the ERSPAN III
/// timestamps, anchored to the capture clock).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointClock {
    /// Where the times come from: `erspan3`.
    pub source: String,
    /// The timestamps' unit: `100us`, `100ns` or `IEEE 1588`.
    pub granularity: String,
    /// The platform subheader carried the upper bits (else the field was unwrapped).
    pub upper_bits: bool,
    /// Frames timed by it.
    pub frames: u64,
    /// Times it was anchored again (the switch clock departed from the capture clock by
    /// more than a collector queue and clock drift explain: crate::mirror).
    pub steps: u64,
    /// Largest difference between the capture clock's and the switch clock's advance (ns):
    /// how much the mirror's path and the collector moved frames in time.
    pub max_departure_ns: i64,
    /// The session fell back to the capture clock: its switch clock needed anchoring again
    /// more than the analyzer's `mirror::MAX_CLOCK_STEPS` times. Absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<ClockFallback>,
}

/// Where a session's switch clock was given up for the capture clock (crate::mirror).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClockFallback {
    /// Why: `steps` (re-anchored more than the analyzer's `mirror::MAX_CLOCK_STEPS` times).
    pub reason: Cow<'static, str>,
    /// The frame from which on the session's frames keep their capture time (the one that
    /// would have re-anchored the clock once more).
    pub frame: u64,
    /// Its capture time.
    pub ts_ns: i64,
    /// How far the switch clock had departed from the capture clock at that frame (ns,
    /// signed: positive when the capture clock had advanced more).
    pub departure_ns: i64,
    /// Frames that kept their capture time from then on (that frame included).
    pub frames: u64,
}

/// Packets of one flow lost between two capture points.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointLoss {
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
    /// The point that saw them (index into `points`).
    pub from: u16,
    /// The point that did not.
    pub to: u16,
    /// Packets.
    pub packets: u64,
    /// First such packet (frame number, at `from`).
    pub first_frame: u64,
    /// Its time.
    pub first_ns: i64,
    /// The flow at `from` (index into `flows`).
    pub flow: Option<usize>,
}
