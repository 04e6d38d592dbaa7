//! What a switch mirror adds to a frame (issue 12): its mirror session, its clock and the
//! class of service it saw. The rules, documented in docs/verdicts.md "Mirror sessions":
//!
//! - **Sessions are capture points.** The outermost tunnel layer that names a session (the
//!   ERSPAN II/III session ID, the VXLAN or Geneve VNI) tells which mirror session delivered
//!   the frame. The first session met at a capture point keeps that point (its name gains
//!   the session, e.g. `collector.pcap [ERSPAN session 1]`); each further session there
//!   becomes a point of its own, so two mirror sessions of one capture are analysed apart
//!   as two merged captures are. Frames outside any session stay at the point. Points found
//!   while reading take no part in matching packets across points (as sFlow's). At most
//!   [`MAX_SESSION_POINTS`] points are added; the sessions beyond share the last one,
//!   named as the overflow it is ([`OVERFLOW_LABEL`]), and so do the later frames of a
//!   VXLAN or Geneve overlay whose first frames went there.
//! - **The switch's clock.** An ERSPAN type III header carries the time the switch mirrored
//!   the frame (draft-foschiano-erspan-03 §4.3: 32 bits in 100 µs, 100 ns or IEEE 1588
//!   ns ticks; the platform subheader IDs 0x3/0x5/0x6 carry the upper 32 bits, or the 1588
//!   seconds). The collector's capture time adds the tunnel's queueing and the collector's
//!   interrupt batching, so within a session the switch's clock says how far apart the
//!   frames really were. Its epoch is unknown (and PTP's TAI is not UTC), so it is anchored:
//!   a session's first timestamped frame keeps its capture time, and each later frame gets
//!   that time plus the switch clock's advance since. A timestamp without its upper bits is
//!   unwrapped to the value nearest what the capture clock predicts. A switch clock that
//!   departs from the capture clock by more than any collector queue or clock drift explains
//!   ([`plausible_departure_ns`]: [`MAX_QUEUE_DEPARTURE_NS`] plus [`MAX_DRIFT_PPM`] of the
//!   time since its anchor; a stepped clock, a reset) is anchored again at that frame (a
//!   step in the report). Timestamps that are zero, or of the user-defined granularity, are
//!   not used.
//! - **A switch clock is checked before it times anything.** A session's frames are held
//!   back from its first timestamped frame until its clock has been compared with the
//!   capture clock over [`CHECK_SPAN_NS`] (or [`CHECK_MAX_FRAMES`] frames,
//!   [`CHECK_MAX_BYTES`] bytes held, or the end of the input, whichever comes first): each
//!   stamped frame's switch-clock advance since the session's first must stay within
//!   [`check_bound_ns`] of the capture clock's (half the elapsed time, at least
//!   [`CHECK_JITTER_NS`]). A clock of the wrong rate (stamps in 100 µs ticks under a header
//!   that says 100 ns), several clocks behind one session, or one that jumps by hours
//!   between its first frames fails: the session is **distrusted before any of its frames
//!   is timed**, and all its frames keep their capture time (`fallback.reason`
//!   `first_frames`). One that passes times every frame, the held ones included. While a
//!   check is under way every frame is held, whatever its session, and the held frames are
//!   then analysed in their order: the analysis sees the capture as it came.
//! - **A switch clock that cannot be trusted.** One that needs anchoring again more than
//!   [`MAX_CLOCK_STEPS`] times is not stepped now and then: its timestamps disagree with the
//!   capture clock beyond any plausible drift (a clock that keeps jumping, several clocks
//!   behind one session, the wrong granularity). From the frame that would have been the
//!   next step on, the session's frames keep their capture times (the fallback, said in the
//!   report). Earlier frames keep the times already given: a streaming analysis cannot take
//!   them back, and they were each within the plausible departure of their capture time.
//! - **ERSPAN COS as the PCP.** A mirror may strip the frame's 802.1Q tag and report its
//!   priority in the ERSPAN header instead. When the inner frame carries no tag, the COS of
//!   the innermost ERSPAN layer serves as its PCP where the header says a tag was there:
//!   type II with En = 1 (ISL) or 2 (802.1Q, tag removed); type III with a VLAN other than
//!   0. A type II frame that was untagged (En = 0), or whose tag was kept (En = 3, decoded
//!   from the frame itself), is not given one: Linux's `erspan` driver, for one, fills COS
//!   from the DSCP, not from a tag.

use crate::{Analyzer, FrameMeta};
use rocescope_decoder::tunnel::Granularity;
use rocescope_decoder::{Encap, Packet};
use rocescope_model::points::{ClockFallback, PointClock};
use rustc_hash::FxHashMap;

/// Most capture points that mirror sessions add to an analysis.
pub const MAX_SESSION_POINTS: usize = 256;

/// How the point the sessions beyond [`MAX_SESSION_POINTS`] share is named (after its
/// capture's name): it says it is an overflow, so no one reads it as one session.
pub const OVERFLOW_LABEL: &str = "overflow: more than 256 mirror sessions or VNIs";

/// The most a mirror's path and its collector can move a frame in time (ns): 100 ms. A
/// collector's interrupt batching moves frames by tens of µs; a switch's mirror port, its
/// whole buffer queued (32 MB at 10 Gb/s: 27 ms), by tens of ms. A departure beyond this
/// (plus drift, [`MAX_DRIFT_PPM`]) is the switch clock's doing, not the path's.
pub const MAX_QUEUE_DEPARTURE_NS: i64 = 100_000_000;

/// How fast two free-running clocks may drift apart (parts per million): 200, two
/// oscillators each within the ±100 ppm IEEE 802.3 allows a transmit clock.
pub const MAX_DRIFT_PPM: i64 = 200;

/// Re-anchorings a session's switch clock is allowed (a PTP lock, a reset); the next one
/// makes the session fall back to the capture clock (module docs).
pub const MAX_CLOCK_STEPS: u64 = 3;

/// How long a session's switch clock is compared with the capture clock before it times
/// any frame (capture time since the session's first stamped frame): 2 ms. A clock of the
/// wrong granularity (a factor of 10 to 10^5) departs by more than [`CHECK_JITTER_NS`]
/// within 0.4 ms.
pub const CHECK_SPAN_NS: i64 = 2_000_000;

/// The departure a checked clock is allowed however short the span: 200 µs, several times a
/// collector's interrupt batching (tens of µs; the batched sample's 50 µs).
pub const CHECK_JITTER_NS: i64 = 200_000;

/// Most frames held back while clocks are checked: the check ends with those it has.
pub const CHECK_MAX_FRAMES: usize = 16_384;

/// Most bytes held back while clocks are checked (16 MiB).
pub const CHECK_MAX_BYTES: usize = 16 << 20;

/// How far a checked clock's advance may depart from the capture clock's `elapsed_ns`
/// after the session's first stamped frame: half of it, at least [`CHECK_JITTER_NS`]. A
/// clock off in rate by a factor of 2 or more fails once the span is long enough to tell.
pub fn check_bound_ns(elapsed_ns: i64) -> i64 {
    (elapsed_ns.saturating_abs() / 2).max(CHECK_JITTER_NS)
}

/// How far a switch clock may depart from the capture clock `elapsed_ns` after its anchor
/// before it is anchored again: [`MAX_QUEUE_DEPARTURE_NS`] plus [`MAX_DRIFT_PPM`] of the
/// elapsed time. At most half a second: a 1588 nanosecond field read without its seconds
/// is unwrapped to within half a second of what the capture clock predicts.
pub fn plausible_departure_ns(elapsed_ns: i64) -> i64 {
    let drift = elapsed_ns.saturating_abs() / (1_000_000 / MAX_DRIFT_PPM);
    MAX_QUEUE_DEPARTURE_NS.saturating_add(drift)
}

/// A mirror session or virtual network, as a tunnel layer names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Session {
    /// ERSPAN type II or III session ID (10 bits).
    Erspan(u16),
    /// VXLAN network identifier.
    Vxlan(u32),
    /// Geneve virtual network identifier.
    Geneve(u32),
}

impl Session {
    /// The session of a frame: that of its outermost tunnel layer that names one.
    pub fn of(p: &Packet<'_>) -> Option<Session> {
        p.tunnels.iter().find_map(|t| match t.encap {
            Encap::ErspanII { erspan, .. } => Some(Session::Erspan(erspan.session_id())),
            Encap::ErspanIII { erspan, .. } => Some(Session::Erspan(erspan.session_id())),
            Encap::Vxlan(v) => Some(Session::Vxlan(v.vni())),
            Encap::Geneve(g) => Some(Session::Geneve(g.vni())),
            _ => None,
        })
    }

    /// How the report names it: `ERSPAN session 7`, `VXLAN VNI 10007`, `Geneve VNI 5`.
    pub fn label(self) -> String {
        match self {
            Session::Erspan(s) => format!("ERSPAN session {s}"),
            Session::Vxlan(v) => format!("VXLAN VNI {v}"),
            Session::Geneve(v) => format!("Geneve VNI {v}"),
        }
    }
}

/// The PCP a frame's ERSPAN header gives it when the frame itself is untagged (module docs).
pub fn erspan_pcp(p: &Packet<'_>) -> Option<u8> {
    if !p.vlans.is_empty() {
        return None;
    }
    let t = p
        .tunnels
        .iter()
        .filter(|t| matches!(t.encap, Encap::ErspanII { .. } | Encap::ErspanIII { .. }))
        .last()?;
    match t.encap {
        Encap::ErspanII { erspan, .. } if matches!(erspan.encap(), 1 | 2) => Some(erspan.cos()),
        Encap::ErspanIII { erspan, .. } if erspan.vlan() != 0 => Some(erspan.cos()),
        _ => None,
    }
}

/// One switch clock: how a session's ERSPAN III timestamps map onto capture time.
#[derive(Clone, Copy, Debug)]
struct SwitchClock {
    /// Granularity and whether the upper bits are carried: a change re-anchors.
    mode: (u8, bool),
    /// Capture time of the anchoring frame.
    anchor_capture: i64,
    /// Switch time of the anchoring frame (ns; unwrapped, arbitrary origin without the
    /// upper bits).
    anchor_switch: i64,
    /// Frames timed by the switch clock.
    frames: u64,
    /// Times it was anchored again.
    steps: u64,
    /// Largest departure of the capture clock from the switch clock, each frame measured
    /// from its anchor (ns).
    max_departure_ns: i64,
    /// Set when the session fell back to the capture clock (module docs).
    fallback: Option<Fallback>,
}

/// Where a session fell back to the capture clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fallback {
    /// `steps` (re-anchored too often) or `first_frames` (failed its check).
    reason: &'static str,
    /// The frame that would have been the next re-anchoring.
    frame: u64,
    /// Its capture time.
    ts_ns: i64,
    /// How far the switch clock had departed from the capture clock at it (ns).
    departure_ns: i64,
    /// Frames that kept their capture time since (that one included).
    frames: u64,
}

/// Mirror bookkeeping of one analysis.
#[derive(Debug, Default)]
pub(crate) struct MirrorState {
    /// (capture point of the frame, session) → analysis point.
    sessions: FxHashMap<(u16, Session), u16>,
    /// Per analysis point: the session it stands for.
    session_of: Vec<Option<Session>>,
    /// Per analysis point: its switch clock.
    clocks: Vec<Option<SwitchClock>>,
    /// Per analysis point: frames whose PCP came from their ERSPAN header.
    pcp_from_erspan: Vec<u64>,
    /// Per analysis point: frames whose ERSPAN III timestamp could not be used (zero, the
    /// user-defined granularity, nanoseconds past a second): they keep their capture time.
    stamps_unused: Vec<u64>,
    /// Points added for sessions.
    added: usize,
    /// Sessions (capture point of the frame, session) whose clock was checked: failed ones
    /// with the frame, time and departure that failed them.
    checked: FxHashMap<(u16, Session), Option<CheckFailure>>,
    /// Checks under way.
    checks: FxHashMap<(u16, Session), ClockCheck>,
    /// Frames held back while checks are under way, in their order.
    held: Vec<Held>,
    /// Their bytes.
    held_bytes: usize,
    /// The point the sessions beyond [`MAX_SESSION_POINTS`] share.
    overflow: Option<u16>,
}

/// Why a clock failed its check: the session's first frame, its capture time, and the
/// departure that failed it (ns).
type CheckFailure = (u64, i64, i64);

/// A session's clock under check: its first stamp, by both clocks.
#[derive(Clone, Copy, Debug)]
struct ClockCheck {
    /// Capture time and switch time (ns) of the session's first usable stamp, and whether
    /// the stamp was complete.
    first: (i64, i64, bool),
    /// That frame's number.
    first_frame: u64,
    /// Set when a stamp departed beyond [`check_bound_ns`]: the session's first frame, its
    /// capture time, and the departure that failed the check.
    failed: Option<CheckFailure>,
    /// Set once the check spanned [`CHECK_SPAN_NS`] without failing.
    passed: bool,
}

impl ClockCheck {
    /// A check beginning at a session's first stamped frame `frame`, captured at `capture`,
    /// whose stamp `(ticks, gra, high)` reads as switch time; `None` when it does not.
    fn start(
        capture: i64,
        frame: u64,
        (ticks, gra, high): (u32, Granularity, Option<u32>),
    ) -> Option<ClockCheck> {
        let (raw, complete) = switch_ns(ticks, gra, high)?;
        Some(ClockCheck { first: (capture, raw, complete), first_frame: frame, failed: None, passed: false })
    }

    /// Compare the stamp `(ticks, gra, high)` of frame `frame` at `capture` with the first.
    fn add(&mut self, capture: i64, ticks: u32, gra: Granularity, high: Option<u32>) {
        let Some((raw, complete)) = switch_ns(ticks, gra, high) else { return };
        let (c0, s0, complete0) = self.first;
        let elapsed = capture.saturating_sub(c0);
        let switch = if complete && complete0 {
            raw
        } else {
            // Unwrapped to the value nearest what the capture clock predicts.
            let p = period(gra);
            let k = (s0.saturating_add(elapsed).saturating_sub(raw) as f64 / p as f64).round() as i64;
            raw.saturating_add(k.saturating_mul(p))
        };
        let departure = elapsed.saturating_sub(switch.saturating_sub(s0));
        if departure.saturating_abs() > check_bound_ns(elapsed) {
            self.failed.get_or_insert((self.first_frame, c0, departure));
        } else if elapsed >= CHECK_SPAN_NS {
            self.passed = true;
        }
    }

    fn done(&self) -> bool {
        self.passed || self.failed.is_some()
    }
}

/// A frame held back while a clock is checked: enough to decode it again, or (`skipped`)
/// the time of one a shard passes over ([`Analyzer::skip_record`]).
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub meta: FrameMeta,
    pub data: Vec<u8>,
    pub link_type: rocescope_decoder::LinkType,
    pub rate: u32,
    pub skipped: bool,
}

fn slot<T: Default + Clone>(v: &mut Vec<T>, i: u16) -> Option<&mut T> {
    let i = usize::from(i);
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    v.get_mut(i)
}

impl MirrorState {
    /// The clock and session facts of a point, for the report.
    pub(crate) fn point(&self, i: u16) -> (Option<String>, Option<PointClock>, u64, u64) {
        let i = usize::from(i);
        let session = self.session_of.get(i).copied().flatten().map(Session::label);
        let clock =
            self.clocks.get(i).copied().flatten().filter(|c| c.frames > 0 || c.fallback.is_some()).map(|c| {
                PointClock {
                    source: "erspan3".into(),
                    granularity: Granularity(c.mode.0).name().into(),
                    upper_bits: c.mode.1,
                    frames: c.frames,
                    steps: c.steps,
                    max_departure_ns: c.max_departure_ns,
                    fallback: c.fallback.map(|f| ClockFallback {
                        reason: f.reason.into(),
                        frame: f.frame,
                        ts_ns: f.ts_ns,
                        departure_ns: f.departure_ns,
                        frames: f.frames,
                    }),
                }
            });
        let at = |v: &Vec<u64>| v.get(i).copied().unwrap_or(0);
        (session, clock, at(&self.pcp_from_erspan), at(&self.stamps_unused))
    }

    /// Frames held back for a check still under way: not in a report built now (they are
    /// analysed when the check ends, or by `Analyzer::finish`).
    pub(crate) fn held_frames(&self) -> u64 {
        self.held.len() as u64
    }

    /// Whether a switch clock's check is under way (frames are being held back).
    #[inline]
    pub(crate) fn checking(&self) -> bool {
        !self.checks.is_empty()
    }

    pub(crate) fn count_pcp(&mut self, point: u16, w: u64) {
        if let Some(n) = slot(&mut self.pcp_from_erspan, point) {
            *n += w;
        }
    }
}

/// The switch time of an ERSPAN III timestamp in ns: `(ns, complete)`, where `complete`
/// says the upper bits were carried (else the value is known modulo [`period`]).
fn switch_ns(ticks: u32, gra: Granularity, high: Option<u32>) -> Option<(i64, bool)> {
    let tick = i64::try_from(gra.tick_ns()?).ok()?;
    if ticks == 0 && high.unwrap_or(0) == 0 {
        return None;
    }
    let ieee = gra == Granularity::IEEE_1588;
    if ieee && ticks >= 1_000_000_000 {
        return None;
    }
    match high {
        Some(h) if ieee => Some((i64::from(h) * 1_000_000_000 + i64::from(ticks), true)),
        Some(h) => {
            let all = i64::try_from(u64::from(h) << 32 | u64::from(ticks)).ok()?;
            all.checked_mul(tick).map(|n| (n, true))
        }
        None => Some((i64::from(ticks) * tick, false)),
    }
}

/// How often a timestamp without its upper bits repeats (ns).
fn period(gra: Granularity) -> i64 {
    match gra.tick_ns() {
        _ if gra == Granularity::IEEE_1588 => 1_000_000_000,
        Some(t) => (1i64 << 32).saturating_mul(i64::try_from(t).unwrap_or(1)),
        None => i64::MAX,
    }
}

impl SwitchClock {
    /// The frame's time on this clock, or `None` when its stamp cannot be used (the frame
    /// keeps its capture time). A frame that re-anchors the clock, and every frame after
    /// the session fell back to the capture clock, keep their capture time too.
    fn time(
        this: &mut Option<SwitchClock>,
        frame: u64,
        capture: i64,
        ticks: u32,
        gra: Granularity,
        high: Option<u32>,
    ) -> Option<i64> {
        if let Some(f) = this.as_mut().and_then(|c| c.fallback.as_mut()) {
            f.frames += 1;
            return Some(capture);
        }
        let (raw, complete) = switch_ns(ticks, gra, high)?;
        let mode = (gra.0, complete);
        let Some(c) = this.as_mut().filter(|c| c.mode == mode) else {
            // The first stamp, or one of another granularity or completeness: anchor.
            let anchored = this.map_or(0, |c| c.steps + 1);
            let at = SwitchClock {
                mode,
                anchor_capture: capture,
                anchor_switch: raw,
                frames: this.map_or(0, |c| c.frames),
                steps: this.map_or(0, |c| c.steps),
                max_departure_ns: this.map_or(0, |c| c.max_departure_ns),
                fallback: None,
            };
            let c = this.insert(at);
            c.step(anchored, frame, capture, raw, 0);
            return Some(capture);
        };
        let elapsed = capture.saturating_sub(c.anchor_capture);
        let switch = if complete {
            raw
        } else {
            // The value of the repeating field nearest what the capture clock predicts.
            let p = period(gra);
            let expected = c.anchor_switch.saturating_add(elapsed);
            let k = (expected.saturating_sub(raw) as f64 / p as f64).round() as i64;
            raw.saturating_add(k.saturating_mul(p))
        };
        let advance = switch.saturating_sub(c.anchor_switch);
        let departure = elapsed.saturating_sub(advance);
        if departure.saturating_abs() > plausible_departure_ns(elapsed) {
            c.step(c.steps + 1, frame, capture, switch, departure);
            return Some(capture);
        }
        c.frames += 1;
        c.max_departure_ns = c.max_departure_ns.max(departure.saturating_abs());
        Some(c.anchor_capture.saturating_add(advance))
    }

    /// Anchor the clock at this frame, its `steps`-th re-anchoring (0: the first anchor);
    /// beyond [`MAX_CLOCK_STEPS`] the session falls back to the capture clock instead.
    fn step(&mut self, steps: u64, frame: u64, capture: i64, switch: i64, departure: i64) {
        if steps > MAX_CLOCK_STEPS {
            self.fallback =
                Some(Fallback { reason: "steps", frame, ts_ns: capture, departure_ns: departure, frames: 1 });
            return;
        }
        self.anchor_capture = capture;
        self.anchor_switch = switch;
        self.steps = steps;
        self.frames += 1;
    }
}

impl Analyzer {
    /// The frame as the analysis sees it: at its mirror session's capture point, at its
    /// switch's time (module docs). Frames without a tunnel pass as they are.
    pub(crate) fn mirror_meta(&mut self, meta: &FrameMeta, p: &Packet<'_>, overlay: bool) -> FrameMeta {
        let mut m = *meta;
        if p.tunnels.is_empty() {
            return m;
        }
        if self.cfg.mirror_sessions {
            if let Some(s) = Session::of(p) {
                // A VNI of an overlay (crate::overlay) is a tenant network on the link, not a
                // mirror session: it makes no point of its own (one it made before the
                // overlay was known keeps its frames, so they are not split).
                let vni = matches!(s, Session::Vxlan(_) | Session::Geneve(_));
                if !(overlay && vni) || self.mirror.sessions.contains_key(&(meta.point, s)) {
                    m.point = self.session_point(meta.point, s);
                    if vni && !overlay && self.mirror.overflow == Some(m.point) {
                        self.overlay.mark_overflow(meta.point, p);
                    }
                } else if let Some(o) =
                    self.mirror.overflow.filter(|_| self.overlay.overflowed(meta.point, p))
                {
                    // Sessions past the cap are not remembered one by one: the pair's first
                    // frames went to the overflow point, and so do the rest (the capture
                    // point's own is named after its first session, another one).
                    m.point = o;
                }
            }
        }
        if self.cfg.switch_clock {
            let stamp = p.tunnels.iter().find_map(|t| t.erspan_timestamp());
            let failed =
                Session::of(p).and_then(|s| self.mirror.checked.get(&(meta.point, s)).copied().flatten());
            if let (Some((_, gra, high)), Some((frame, ts_ns, departure_ns))) = (stamp, failed) {
                // Distrusted from its first frames (module docs): every frame keeps its
                // capture time.
                if let Some(clock) = slot(&mut self.mirror.clocks, m.point) {
                    let c = clock.get_or_insert(SwitchClock {
                        mode: (gra.0, high.is_some()),
                        anchor_capture: meta.ts_ns,
                        anchor_switch: 0,
                        frames: 0,
                        steps: 0,
                        max_departure_ns: 0,
                        fallback: Some(Fallback {
                            reason: "first_frames",
                            frame,
                            ts_ns,
                            departure_ns,
                            frames: 0,
                        }),
                    });
                    if let Some(f) = &mut c.fallback {
                        f.frames += 1;
                    }
                }
                return m;
            }
            if let Some((ticks, gra, high)) = stamp {
                let timed = slot(&mut self.mirror.clocks, m.point)
                    .and_then(|clock| SwitchClock::time(clock, meta.number, meta.ts_ns, ticks, gra, high));
                match timed {
                    Some(ts) => m.ts_ns = ts,
                    None => {
                        if let Some(n) = slot(&mut self.mirror.stamps_unused, m.point) {
                            *n += 1;
                        }
                    }
                }
            }
        }
        m
    }

    /// Whether frame `p` is held back while a session's switch clock is checked (module
    /// docs): a frame that starts a check, or any frame while one is under way. The frames
    /// are analysed, in their order, once every check under way is done.
    pub(crate) fn hold_for_clock_check(&mut self, meta: &FrameMeta, p: &Packet<'_>, rate: u32) -> bool {
        if self.mirror.checks.is_empty() {
            if p.tunnels.is_empty() || !self.cfg.switch_clock {
                return false;
            }
            let Some(stamp) = p.tunnels.iter().find_map(|t| t.erspan_timestamp()) else { return false };
            let Some(s) = Session::of(p) else { return false };
            if self.mirror.checked.contains_key(&(meta.point, s)) {
                return false;
            }
            let Some(check) = ClockCheck::start(meta.ts_ns, meta.number, stamp) else { return false };
            self.mirror.checks.insert((meta.point, s), check);
        } else if let Some(s) = Session::of(p) {
            let stamp = p.tunnels.iter().find_map(|t| t.erspan_timestamp());
            match (self.mirror.checks.get_mut(&(meta.point, s)), stamp) {
                (Some(c), Some((ticks, gra, high))) => c.add(meta.ts_ns, ticks, gra, high),
                (None, Some((ticks, gra, high))) if !self.mirror.checked.contains_key(&(meta.point, s)) => {
                    // Another session begins while one is checked: checked alongside.
                    if let Some(check) = ClockCheck::start(meta.ts_ns, meta.number, (ticks, gra, high)) {
                        self.mirror.checks.insert((meta.point, s), check);
                    }
                }
                _ => {}
            }
        }
        self.mirror.held_bytes += p.data.len();
        let held = Held { meta: *meta, data: p.data.to_vec(), link_type: p.link_type, rate, skipped: false };
        self.mirror.held.push(held);
        let full = self.mirror.held.len() >= CHECK_MAX_FRAMES || self.mirror.held_bytes >= CHECK_MAX_BYTES;
        if full || self.mirror.checks.values().all(ClockCheck::done) {
            self.end_clock_checks();
        }
        true
    }

    /// Hold the place of a frame a shard passes over at `ts_ns` while a check is under way.
    #[cfg(feature = "capture")]
    pub(crate) fn hold_skipped(&mut self, ts_ns: i64) {
        let meta = FrameMeta { number: 0, ts_ns, len: 0, link_bps: None, point: 0 };
        let link_type = rocescope_decoder::LinkType::ETHERNET;
        self.mirror.held.push(Held { meta, data: Vec::new(), link_type, rate: 1, skipped: true });
        if self.mirror.held.len() >= CHECK_MAX_FRAMES {
            self.end_clock_checks();
        }
    }

    /// End every check under way (a check not yet done passes: nothing it saw failed it)
    /// and analyse the held frames in their order.
    pub(crate) fn end_clock_checks(&mut self) {
        for (k, c) in std::mem::take(&mut self.mirror.checks) {
            self.mirror.checked.insert(k, c.failed);
        }
        let held = std::mem::take(&mut self.mirror.held);
        self.mirror.held_bytes = 0;
        let opts = self.cfg.decode;
        for h in held {
            if h.skipped {
                self.skip_at(h.meta.ts_ns);
                continue;
            }
            let p = rocescope_decoder::decode(h.link_type, &h.data, &opts);
            self.push_sampled(&h.meta, &p, h.rate);
        }
    }

    /// Whether a switch clock's check is under way (frames are being held back): read by
    /// the record path (`capture` feature).
    #[cfg(feature = "capture")]
    pub(crate) fn mirror_checking(&self) -> bool {
        self.mirror.checking()
    }

    /// The analysis point of session `s` met at capture point `base`.
    fn session_point(&mut self, base: u16, s: Session) -> u16 {
        if let Some(&p) = self.mirror.sessions.get(&(base, s)) {
            return p;
        }
        let taken = slot(&mut self.mirror.session_of, base).is_some_and(|o| o.is_some());
        if taken && self.mirror.added + 1 >= MAX_SESSION_POINTS {
            // Too many sessions: the rest share one point, and are not remembered one by one
            // (a capture with a million VNIs costs one point and no map entries).
            if let Some(p) = self.mirror.overflow {
                return p;
            }
        }
        let base_name =
            self.cfg.points.get(usize::from(base)).cloned().unwrap_or_else(|| format!("point {base}"));
        let root = base_name.split(" [").next().unwrap_or(&base_name).to_string();
        let point = if !taken {
            // The first session at this point keeps it.
            let named = format!("{base_name} [{}]", s.label());
            if let Some(name) = self.cfg.points.get_mut(usize::from(base)) {
                *name = named;
            } else if base == 0 {
                // A single source given no name: the report calls it "capture".
                self.cfg.points = vec![format!("capture [{}]", s.label())];
            }
            base
        } else if self.mirror.added + 1 >= MAX_SESSION_POINTS {
            let p = self.add_point(format!("{root} [{OVERFLOW_LABEL}]"));
            self.mirror.added += 1;
            self.mirror.overflow = Some(p);
            return p;
        } else {
            let p = self.add_point(format!("{root} [{}]", s.label()));
            self.mirror.added += 1;
            p
        };
        if let Some(o) = slot(&mut self.mirror.session_of, point) {
            o.get_or_insert(s);
        }
        self.mirror.sessions.insert((base, s), point);
        point
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Config;
    use rocescope_decoder::build::{Encapsulation, IbRepr, IpRepr, Outer, RoceV2Frame, TunnelRepr};
    use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode};
    use std::net::Ipv4Addr;

    const NS100: Granularity = Granularity::NS_100;

    fn ip(a: u8, b: u8) -> IpRepr {
        IpRepr::V4 {
            src: Ipv4Addr::new(10, 0, 0, a),
            dst: Ipv4Addr::new(10, 0, 0, b),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            id: 0,
        }
    }

    /// A SEND from 10.0.0.1 to 10.0.0.2, and the outer headers of a mirror that carries it
    /// from 10.0.0.100 to 10.0.0.200.
    fn mirrored(opts: &DecodeOptions) -> (Vec<u8>, Outer) {
        let bth = BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x12, psn: 1, ..Default::default() };
        let ib = IbRepr { bth, payload: vec![0; 32], ..Default::default() };
        let frame = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip(1, 2), ib).build(opts.opcode);
        let outer = Outer {
            src_mac: [2, 0, 0, 0, 0xee, 1],
            dst_mac: [2, 0, 0, 0, 0xee, 2],
            vlans: Vec::new(),
            ip: ip(100, 200),
        };
        (frame, outer)
    }

    #[test]
    fn sessions_beyond_the_cap_share_one_point_and_cost_no_memory_each() {
        let opts = DecodeOptions::default();
        let (frame, outer) = mirrored(&opts);
        let mut a = Analyzer::new(Config { points: vec!["c.pcap".into()], ..Config::default() });
        let n = 2 * MAX_SESSION_POINTS as u32;
        for vni in 0..n {
            let encap = Encapsulation::Vxlan { sport: 49152, dport: 4789, vni };
            let bytes = TunnelRepr { outer: outer.clone(), encap }.wrap(&frame).unwrap();
            let p = decode(LinkType::ETHERNET, &bytes, &opts);
            let meta = FrameMeta {
                number: u64::from(vni) + 1,
                ts_ns: i64::from(vni),
                len: bytes.len() as u32,
                link_bps: None,
                point: 0,
            };
            a.push(&meta, &p);
        }
        let r = a.report();
        assert_eq!(r.points.len(), 1 + MAX_SESSION_POINTS);
        assert_eq!(r.points[0].name, "c.pcap [VXLAN VNI 0]");
        assert_eq!(r.points[1].session.as_deref(), Some("VXLAN VNI 1"));
        let last = r.points.last().unwrap();
        assert_eq!(last.name, "c.pcap [overflow: more than 256 mirror sessions or VNIs]");
        assert_eq!(last.session, None);
        assert_eq!(last.roce, u64::from(n) - MAX_SESSION_POINTS as u64);
        assert_eq!(a.mirror.sessions.len(), MAX_SESSION_POINTS, "the shared sessions are not remembered");
        assert_eq!(r.points.iter().map(|p| p.roce).sum::<u64>(), u64::from(n));
    }

    /// Past the cap, a VXLAN overlay's VTEP pairs whose first frames (read as a mirror's
    /// before the pair was seen both ways) went to the overflow point keep their later
    /// frames there: they landed on the capture point's own, named after VNI 0 (issue 40:
    /// 316 frames where VNI 0 had 8).
    #[test]
    fn overlay_pairs_past_the_cap_stay_on_the_overflow_point() {
        let opts = DecodeOptions::default();
        let (frame, _) = mirrored(&opts);
        let mut a = Analyzer::new(Config { points: vec!["c.pcap".into()], ..Config::default() });
        let pairs = 300u32;
        let per_pair = 4u64;
        let mut number = 0u64;
        for vni in 0..pairs {
            // VTEPs 10.1.x.y and 10.2.x.y, the pair's VNI its index; one way, back, and again.
            let vtep = |side: u8| Ipv4Addr::new(10, side, (vni >> 8) as u8, vni as u8);
            for (s, d) in [(1, 2), (2, 1), (1, 2), (2, 1)] {
                let outer = Outer {
                    src_mac: [2, 0, 0, 0, 0xee, s],
                    dst_mac: [2, 0, 0, 0, 0xee, d],
                    vlans: Vec::new(),
                    ip: IpRepr::V4 { src: vtep(s), dst: vtep(d), dscp: 26, ecn: Ecn::Ect0, ttl: 64, id: 0 },
                };
                let encap = Encapsulation::Vxlan { sport: 49152, dport: 4789, vni };
                let bytes = TunnelRepr { outer, encap }.wrap(&frame).unwrap();
                number += 1;
                let meta = FrameMeta {
                    number,
                    ts_ns: number as i64 * 1_000,
                    len: bytes.len() as u32,
                    link_bps: None,
                    point: 0,
                };
                a.push(&meta, &decode(LinkType::ETHERNET, &bytes, &opts));
            }
        }
        let r = a.report();
        assert_eq!(r.points.len(), 1 + MAX_SESSION_POINTS);
        let first = &r.points[0];
        assert_eq!(
            (first.name.as_str(), first.roce),
            ("c.pcap [VXLAN VNI 0]", per_pair),
            "only its own pair's frames"
        );
        let last = r.points.last().unwrap();
        assert_eq!(last.name, format!("c.pcap [{OVERFLOW_LABEL}]"));
        assert!(last.name.contains("overflow"));
        // The 256 sessions with points of their own: VNI 0 at the capture point, 255 added;
        // the 44 pairs past them, every frame.
        assert_eq!(last.roce, u64::from(pairs - MAX_SESSION_POINTS as u32) * per_pair);
        assert!(r.points.iter().take(MAX_SESSION_POINTS).all(|p| p.roce == per_pair));
        assert_eq!(r.points.iter().map(|p| p.roce).sum::<u64>(), u64::from(pairs) * per_pair);
        assert_eq!(r.overlay.len(), pairs as usize, "every pair is an overlay");
    }

    #[test]
    fn unusable_switch_stamps_are_counted_and_keep_the_capture_time() {
        let opts = DecodeOptions::default();
        let (frame, outer) = mirrored(&opts);
        let mut a = Analyzer::new(Config { points: vec!["c.pcap".into()], ..Config::default() });
        // A zero stamp, then two of the user-defined granularity, then a usable one.
        for (n, (timestamp, granularity)) in
            [(0u32, 1u8), (500, 3), (600, 3), (700, 1)].into_iter().enumerate()
        {
            let encap = Encapsulation::ErspanIII {
                seq: n as u32,
                vlan: 0,
                cos: 0,
                bso: 0,
                truncated: false,
                session_id: 3,
                timestamp,
                sgt: 0,
                p: false,
                hw_id: 1,
                direction: false,
                granularity,
                platform: None,
            };
            let bytes = TunnelRepr { outer: outer.clone(), encap }.wrap(&frame).unwrap();
            let p = decode(LinkType::ETHERNET, &bytes, &opts);
            let ts = 1_000_000 * (n as i64 + 1);
            let meta = FrameMeta {
                number: n as u64 + 1,
                ts_ns: ts,
                len: bytes.len() as u32,
                link_bps: None,
                point: 0,
            };
            a.push(&meta, &p);
        }
        // The usable stamp began a check of the clock: its frame is analysed at the end.
        a.finish();
        let r = a.report();
        assert_eq!(r.points[0].switch_stamps_unused, 3);
        // The unusable ones kept their capture times; the usable one anchors at its own.
        assert_eq!((r.points[0].start_ns, r.points[0].end_ns), (Some(1_000_000), Some(4_000_000)));
        assert_eq!(r.points[0].clock.as_ref().map(|c| c.frames), Some(1));
    }

    #[test]
    fn a_full_timestamp_gives_the_switch_spacing_at_the_capture_anchor() {
        let mut c = None;
        // Switch: frames 1 µs apart; capture: the second one 30 µs late (collector batching).
        assert_eq!(SwitchClock::time(&mut c, 0, 5_000, 100, NS100, Some(1)), Some(5_000));
        assert_eq!(SwitchClock::time(&mut c, 0, 35_000, 110, NS100, Some(1)), Some(6_000));
        let k = c.unwrap();
        assert_eq!((k.frames, k.steps, k.max_departure_ns), (2, 0, 29_000));
    }

    #[test]
    fn a_timestamp_without_upper_bits_unwraps_across_its_wrap() {
        let mut c = None;
        let last = u32::MAX - 4; // 5 ticks before the wrap
        assert_eq!(SwitchClock::time(&mut c, 0, 1_000_000, last, NS100, None), Some(1_000_000));
        // 10 ticks (1 µs) later on the switch, the field has wrapped to 5.
        assert_eq!(SwitchClock::time(&mut c, 0, 1_002_000, 5, NS100, None), Some(1_001_000));
        // A 1588 nanosecond field without seconds repeats every second.
        let mut c = None;
        let ieee = Granularity::IEEE_1588;
        assert_eq!(SwitchClock::time(&mut c, 0, 0, 999_999_990, ieee, None), Some(0));
        assert_eq!(SwitchClock::time(&mut c, 0, 50, 20, ieee, None), Some(30));
    }

    #[test]
    fn a_clock_that_keeps_stepping_falls_back_to_the_capture_clock() {
        let mut c = None;
        // Frames 1 ms apart by both clocks, but every 10th frame the switch clock jumps
        // 300 ms ahead: more than any collector queue explains, so a step each time.
        let mut offset = 0i64;
        let mut times = Vec::new();
        for n in 0..60u64 {
            if n > 0 && n % 10 == 0 {
                offset += 300_000_000;
            }
            let capture = n as i64 * 1_000_000;
            let ticks = ((capture + offset) / 100) as u32 + 1;
            times.push(SwitchClock::time(&mut c, n + 1, capture, ticks, NS100, Some(0)));
        }
        let k = c.unwrap();
        assert_eq!(k.steps, MAX_CLOCK_STEPS, "three steps are tolerated");
        let f = k.fallback.expect("the fourth falls back");
        assert_eq!((f.frame, f.ts_ns, f.departure_ns), (41, 40_000_000, -300_000_000));
        assert_eq!(f.frames, 20, "frames 41 to 60");
        assert_eq!(k.frames, 40);
        // Before: the switch clock's spacing from each anchor; from frame 41 on, the capture
        // time, whatever the stamp (zero included).
        assert_eq!(times[39], Some(39_000_000));
        assert!(times.iter().enumerate().skip(40).all(|(i, t)| *t == Some(i as i64 * 1_000_000)));
        assert_eq!(SwitchClock::time(&mut c, 61, 61_000_000, 0, NS100, None), Some(61_000_000));
        assert_eq!(c.and_then(|c| c.fallback).map(|f| f.frames), Some(21));
    }

    #[test]
    fn a_departure_within_queueing_and_drift_is_not_a_step() {
        // A switch clock 150 ppm slow over 1000 s: 150 ms behind at the end, within the
        // 100 ms queue plus 200 ppm drift allowed; never re-anchored.
        let mut c = None;
        for n in 0..=1000i64 {
            let capture = n * 1_000_000_000 + 1_000_000;
            let switch = capture - n * 1_000 * 150;
            let t = SwitchClock::time(
                &mut c,
                n as u64,
                capture,
                (switch / 100) as u32,
                NS100,
                Some(((switch / 100) >> 32) as u32),
            );
            assert_eq!(t, Some(switch), "{n}");
        }
        assert_eq!(
            c.map(|c| (c.steps, c.max_departure_ns, c.fallback.is_none())),
            Some((0, 150_000_000, true))
        );
        // A 150 ms jump a second after the anchor is beyond it: a step.
        let mut c = None;
        SwitchClock::time(&mut c, 1, 0, 10, NS100, Some(0));
        let ticks = (1_000_000_000 + 150_000_000) / 100 + 10;
        assert_eq!(SwitchClock::time(&mut c, 2, 1_000_000_000, ticks, NS100, Some(0)), Some(1_000_000_000));
        assert_eq!(c.map(|c| c.steps), Some(1));
        assert_eq!(plausible_departure_ns(0), MAX_QUEUE_DEPARTURE_NS);
        assert_eq!(plausible_departure_ns(-1_000_000_000), 100_200_000);
        assert_eq!(plausible_departure_ns(i64::MIN), MAX_QUEUE_DEPARTURE_NS + i64::MAX / 5000);
    }

    #[test]
    fn a_stepped_clock_is_anchored_again_and_zero_or_user_stamps_are_not_used() {
        let mut c = None;
        assert_eq!(SwitchClock::time(&mut c, 0, 0, 10, NS100, Some(0)), Some(0));
        // The switch clock jumps 5 s ahead while the capture moves 1 µs.
        assert_eq!(SwitchClock::time(&mut c, 0, 1_000, 50_000_010, NS100, Some(0)), Some(1_000));
        assert_eq!(SwitchClock::time(&mut c, 0, 2_000, 50_000_020, NS100, Some(0)), Some(2_000));
        assert_eq!(c.map(|c| (c.steps, c.frames)), Some((1, 3)));
        assert_eq!(SwitchClock::time(&mut c, 0, 3_000, 0, NS100, None), None);
        assert_eq!(SwitchClock::time(&mut c, 0, 3_000, 7, Granularity::USER, None), None);
        assert_eq!(switch_ns(1_000_000_000, Granularity::IEEE_1588, Some(1)), None);
        assert_eq!(switch_ns(5, Granularity::IEEE_1588, Some(2)), Some((2_000_000_005, true)));
        assert_eq!(switch_ns(u32::MAX, Granularity::US_100, Some(u32::MAX)), None, "overflow, not a wrap");
    }

    #[test]
    fn a_clock_is_checked_on_its_first_frames_for_its_rate_and_its_jumps() {
        let start = |capture: i64, ticks: u32| ClockCheck {
            first: (capture, i64::from(ticks) * 100, true),
            first_frame: 1,
            failed: None,
            passed: false,
        };
        // A true clock behind a collector that batches frames by up to 50 µs: passes once
        // the check spans 2 ms.
        let mut c = start(0, 0);
        for k in 1..=20i64 {
            let real = k * 100_000;
            c.add(real + (k % 3) * 25_000, (real / 100) as u32, NS100, Some(0));
            assert!(c.failed.is_none(), "{k}");
            assert_eq!(c.passed, real + (k % 3) * 25_000 >= CHECK_SPAN_NS, "{k}");
        }
        // Stamps in 100 µs ticks under a 100 ns header: 1000 times slow, failed by 0.3 ms.
        let mut c = start(0, 0);
        for k in 1..=3i64 {
            c.add(k * 100_000, (k * 100_000 / 100_000) as u32, NS100, Some(0));
        }
        assert_eq!(c.failed.map(|f| (f.0, f.1)), Some((1, 0)), "failed, from the session's first frame");
        assert!(c.failed.is_some_and(|f| f.2 > CHECK_JITTER_NS));
        // A clock that jumps 3 hours after its first frame.
        let mut c = start(0, 10);
        c.add(1_000, 10 + (3 * 3_600_000_000_000i64 / 100) as u32, NS100, Some(0));
        assert!(c.failed.is_some() && c.done());
        assert_eq!(check_bound_ns(100_000), CHECK_JITTER_NS);
        assert_eq!(check_bound_ns(-4_000_000), 2_000_000);
    }
}
