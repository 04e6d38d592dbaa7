//! PFC and 802.3x PAUSE: the report's `pfc` timelines, their paused intervals and storm runs.

use serde::{Deserialize, Serialize};

/// Which RoCE frames a pausing MAC's pauses stop, as judged at its capture point (PFC is hop
/// by hop: a pause stops the pausing MAC's link peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseDirection {
    /// The pausing MAC sends RoCE here (a host, or a switch's routed port whose MAC is
    /// every frame's next hop): the frames sent to it.
    ToPausingMac,
    /// It sends none (a switch port in an L2 fabric): the frames its link peer, the
    /// capture point's station, sends to anyone (and any sent to it).
    FromLinkPeer,
    /// It sends none and the link peer cannot be told (one conversation, or a capture point
    /// on several links): only frames sent to it, of which there may be none.
    Unknown,
}

/// One PFC or PAUSE timeline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PauseReport {
    /// Capture point (index into `Report::points`).
    pub point: u16,
    /// Source MAC.
    pub src_mac: String,
    /// `pfc` or `pause`.
    pub kind: PauseKind,
    /// Priority (0 for 802.3x PAUSE, which stops the whole link).
    pub priority: u8,
    /// Frames with non-zero quanta.
    pub pause_frames: u64,
    /// XON frames (quanta 0).
    pub xon_frames: u64,
    /// Sum of quanta.
    pub quanta_total: u64,
    /// Paused time.
    pub paused_ns: i64,
    /// Paused microseconds per second of capture (the unit of mlx5 and switch counters).
    pub pause_us_per_s: f64,
    /// Most paused microseconds in any one second.
    pub max_pause_us_per_s: f64,
    /// Link speed used for quanta.
    pub link_bps: u64,
    /// Paused intervals (the first 512).
    pub intervals: Vec<Interval>,
    /// Intervals not listed.
    pub intervals_dropped: u64,
    /// Storm runs.
    pub storms: Vec<Storm>,
    /// The longest pause during which the RoCE traffic towards the pausing side stopped
    /// (all RoCE on the priority when none was ever sent to `src_mac`).
    pub deadlock_hint: Option<Interval>,
    /// RoCE packets on this priority in the capture.
    pub roce_packets_on_priority: u64,
    /// First frame.
    pub first_frame: u64,
    /// RoCE packets to `src_mac` on this priority at this capture point (802.3x PAUSE: on
    /// any priority), in the whole capture. Zero: the pausing MAC receives no RoCE here (a
    /// switch port in an L2 fabric, or a one-way capture), so which traffic its pauses
    /// stop cannot be told.
    pub roce_to_mac: u64,
    /// Which frames the pauses were judged on (docs/verdicts.md "PFC and PAUSE").
    pub direction: PauseDirection,
    /// The station at the other end of the link, whose frames the pauses stop, when
    /// `src_mac` sends no RoCE at this point (a switch port in an L2 fabric): the one MAC in
    /// nearly every RoCE frame here. `None` otherwise, or when it cannot be told.
    pub link_peer: Option<String>,
    /// RoCE packets the pauses stop (to `src_mac`, or from `link_peer`) on the paused
    /// priority that arrived while it was paused, more than `config.pause_allowance_ns`
    /// after the pause took effect.
    pub ignored_frames: u64,
    /// Of those, the ones `link_peer` sent.
    pub ignored_from_peer: u64,
    /// How long after its pause took effect the latest of them arrived (0 when none).
    pub ignored_max_delay_ns: i64,
}

/// PFC or link-level PAUSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PauseKind {
    /// 802.1Qbb per-priority flow control.
    Pfc,
    /// 802.3x PAUSE (the whole link; reported as priority 0).
    Pause,
}

/// One paused interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, ns since the epoch: the pause frame that began it (the pause took effect).
    pub start_ns: i64,
    /// End (expiry or XON).
    pub end_ns: i64,
    /// Ended by an XON rather than by expiry.
    pub xon: bool,
    /// Pause frames that started or extended it.
    pub frames: u64,
    /// Frame number that started it.
    pub first_frame: u64,
    /// RoCE packets on this priority at this capture point while paused, to any destination
    /// (for 802.3x PAUSE, on any priority).
    pub roce_during: u64,
    /// Of those, packets the pause asks to stop: sent to the pausing MAC, or by its link
    /// peer when the pausing MAC sends no RoCE here.
    pub roce_towards: u64,
    /// Of those, packets that arrived more than the response allowance after the pause
    /// took effect: sent in spite of the pause.
    pub ignored: u64,
}

/// A run of storm windows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Storm {
    /// Start of the first window.
    pub start_ns: i64,
    /// End of the last window.
    pub end_ns: i64,
    /// Highest paused fraction of a window.
    pub max_fraction: f64,
}
