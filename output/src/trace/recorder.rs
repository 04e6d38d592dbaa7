//! The recorder: what a trace holds that the report does not, the messages of each QP and
//! the frame of every resend, NAK, ACK timeout and CNP, read off the analyzer frame by frame.
//!
//! It asks nothing new of the analyzer. After each frame it compares the counters of the
//! flow that frame went to (and of its partner) with what it saw the frame before: a
//! `psn.retransmits` one higher is a resend at this frame, a NAK count one higher a NAK, and
//! so on. So its events are the report's by construction: the instants of each kind add up
//! to the report's counts, whatever rule the analyzer follows (a resend decided only by the
//! packet after it is placed at that packet; a resend the analyzer takes back, a late
//! original after all, is taken out of the trace too). What changes after the last frame
//! ([`Analyzer::finish`]) is put at the flow's last packet.

use super::event::{Cause, Event, Kind, Nak};
use rocescope_analyzer::flow::Flow;
use rocescope_analyzer::Analyzer;
use rocescope_decoder::opcode::Position;
use rocescope_decoder::Opcode;

/// A flow's counters as the recorder last saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Snapshot {
    messages: u64,
    payload_bytes: u64,
    retransmits: u64,
    nak: u64,
    rnr_resends: u64,
    spurious: u64,
    implied: u64,
    timeout: u64,
    unknown: u64,
    timeout_bursts: u64,
    naks: [u64; 7],
    cnps: u64,
}

impl Snapshot {
    fn of(f: &Flow) -> Snapshot {
        let s = f.psn.stats();
        let n = f.naks();
        let [a, b, c, d, e, g] = n.by_code;
        Snapshot {
            messages: f.messages(),
            payload_bytes: f.payload_bytes(),
            retransmits: s.retransmits,
            nak: s.retransmits_nak,
            rnr_resends: s.retransmits_rnr,
            spurious: s.retransmits_spurious,
            implied: s.retransmits_implied,
            timeout: s.retransmits_timeout,
            unknown: s.retransmits_unknown,
            timeout_bursts: s.timeout_bursts,
            naks: [a, b, c, d, e, g, n.rnr],
            cnps: f.cold().cnps,
        }
    }
}

/// A message under way: its first packet seen, its last not yet.
#[derive(Clone, Copy, Debug)]
struct Open {
    ts_ns: i64,
    last_ns: i64,
    frame: u64,
    psn_first: u32,
    psn_last: u32,
    opcode: u8,
    packets: u32,
    bytes: u64,
}

/// What the recorder keeps per flow.
#[derive(Clone, Debug, Default)]
struct FlowState {
    seen: Snapshot,
    /// Messages under way: requests (SEND, WRITE) and responses (READ responses), which
    /// one flow can carry interleaved (a responder's own requests travel to the same QP).
    open: [Option<Open>; 2],
    /// Its latest packets before this one, newest last: (frame, ns, PSN). A resend the
    /// analyzer decides only at the packet after it (a gap filler followed by a resend of
    /// the next PSN) is placed at the packet it was.
    recent: [(u64, i64, u32); RECENT],
    recent_len: usize,
}

/// Packets remembered per flow for resends decided late.
const RECENT: usize = 4;

/// The packet a frame carried, as the messages need it: its opcode and PSN (`None` for a
/// frame whose packet the caller did not decode, an sFlow sample).
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo {
    /// BTH opcode.
    pub opcode: Opcode,
    /// BTH PSN.
    pub psn: u32,
}

/// Events kept, and those past the cap counted by kind.
#[derive(Debug)]
pub struct Recorder {
    max_events: usize,
    pub(super) events: Vec<Event>,
    /// Events past `max_events`, by [`Kind`] (its index).
    pub(super) dropped: [u64; Kind::COUNT],
    flows: Vec<FlowState>,
    /// Flows touched by the frame being recorded (its own and its partner).
    touched: Vec<usize>,
}

impl Recorder {
    /// A recorder keeping at most `max_events` slices and instants (the rest are counted).
    pub fn new(max_events: usize) -> Recorder {
        Recorder {
            max_events,
            events: Vec::new(),
            dropped: [0; Kind::COUNT],
            flows: Vec::new(),
            touched: Vec::with_capacity(4),
        }
    }

    /// Frame `number` at `ts_ns` has just been fed to `a`, counted in flow `flow` (its
    /// [`Analyzer::last_flow`] when the frame was RoCE; `None` otherwise), carrying `packet`.
    pub fn frame(
        &mut self,
        a: &Analyzer,
        flow: Option<usize>,
        packet: Option<PacketInfo>,
        number: u64,
        ts_ns: i64,
    ) {
        let Some(id) = flow else { return };
        self.touched.clear();
        self.touched.push(id);
        if let Some(p) = a.flows().get(id).and_then(Flow::partner) {
            self.touched.push(p);
        }
        for i in 0..self.touched.len() {
            let Some(&fid) = self.touched.get(i) else { continue };
            let info = if fid == id { packet } else { None };
            self.update(a, fid, info, number, ts_ns);
        }
    }

    /// The input has ended and `a` was [finished](Analyzer::finish): what changed since the
    /// last frame of each flow is put at that flow's last packet, and messages still under
    /// way become slices marked incomplete.
    pub fn finish(&mut self, a: &Analyzer) {
        for (id, f) in a.flows().iter().enumerate() {
            self.update(a, id, None, 0, f.last_ts);
        }
        for (id, st) in self.flows.iter_mut().enumerate() {
            for open in st.open.iter_mut() {
                if let Some(o) = open.take() {
                    let ev = partial(id, &o);
                    push(&mut self.events, &mut self.dropped, self.max_events, ev);
                }
            }
        }
    }

    /// Compare flow `id` with what was seen of it, and record the difference.
    fn update(&mut self, a: &Analyzer, id: usize, packet: Option<PacketInfo>, number: u64, ts_ns: i64) {
        let Some(f) = a.flows().get(id) else { return };
        if self.flows.len() <= id {
            self.flows.resize_with(id + 1, FlowState::default);
        }
        let now = Snapshot::of(f);
        let Some(st) = self.flows.get_mut(id) else { return };
        let was = st.seen;
        if now == was && packet.is_none() {
            return;
        }
        st.seen = now;
        let (events, dropped, max) = (&mut self.events, &mut self.dropped, self.max_events);
        let flow = u32::try_from(id).unwrap_or(u32::MAX);
        let psn = packet.map_or(0, |p| p.psn);
        let base = Event { ts_ns, flow, frame: number, psn, psn_last: psn, weight: 1, ..Event::default() };
        // Messages: a packet that ends one (the analyzer's `messages` grew) closes the one
        // its class has under way, or is one by itself.
        let bytes = now.payload_bytes.saturating_sub(was.payload_bytes);
        let ended = now.messages.saturating_sub(was.messages);
        let class = packet.map_or(0, |p| usize::from(p.opcode.is_response()));
        // Only a frame of this flow adds to its message (not a change its partner's frame made).
        let open = if packet.is_some() { st.open.get_mut(class).and_then(Option::as_mut) } else { None };
        if let Some(o) = open {
            o.bytes = o.bytes.saturating_add(bytes);
            o.packets = o.packets.saturating_add(1);
            o.last_ns = ts_ns;
            o.psn_last = psn;
        }
        let position = packet.and_then(|p| p.opcode.position());
        if ended > 0 {
            let opcode = packet.map_or(0, |p| p.opcode.0);
            let open = if packet.is_some() { st.open.get_mut(class).and_then(Option::take) } else { None };
            let ev = match open {
                Some(o) => Event {
                    kind: Kind::Message,
                    ts_ns: o.ts_ns,
                    dur_ns: ts_ns.saturating_sub(o.ts_ns).max(0),
                    frame: o.frame,
                    psn: o.psn_first,
                    psn_last: psn,
                    bytes: o.bytes,
                    packets: o.packets,
                    code: opcode,
                    first_opcode: o.opcode,
                    weight: clamp32(ended),
                    ..base
                },
                None => Event {
                    kind: Kind::Message,
                    bytes,
                    packets: 1,
                    code: opcode,
                    first_opcode: opcode,
                    weight: clamp32(ended),
                    ..base
                },
            };
            push(events, dropped, max, ev);
        } else if let (Some(p), Some(Position::First | Position::Middle)) = (packet, position) {
            let slot = st.open.get_mut(class);
            if let Some(slot) = slot {
                // A First while a message is under way: that one's Last never came.
                if position == Some(Position::First) {
                    if let Some(o) = slot.take() {
                        let mut o = o;
                        // This packet was added to it above: it is the new message's.
                        o.packets = o.packets.saturating_sub(1);
                        o.bytes = o.bytes.saturating_sub(bytes);
                        push(events, dropped, max, partial(id, &o));
                    }
                }
                if slot.is_none() {
                    *slot = Some(Open {
                        ts_ns,
                        last_ns: ts_ns,
                        frame: number,
                        psn_first: p.psn,
                        psn_last: p.psn,
                        opcode: p.opcode.0,
                        packets: 1,
                        bytes,
                    });
                }
            }
        }
        // Resends, by cause: the counters of each cause that grew (their sum is the total's
        // growth; what none explains is `unknown`).
        let total = now.retransmits as i128 - was.retransmits as i128;
        if total > 0 {
            let grew = |n: u64, w: u64| n.saturating_sub(w);
            let rnr = grew(now.rnr_resends, was.rnr_resends);
            let spurious = grew(now.spurious, was.spurious);
            let nak = grew(now.nak, was.nak).saturating_sub(rnr + spurious);
            let causes = [
                (Cause::Nak, nak),
                (Cause::Rnr, rnr),
                (Cause::SpuriousNak, spurious),
                (Cause::ImpliedNak, grew(now.implied, was.implied)),
                (Cause::Timeout, grew(now.timeout, was.timeout)),
                (Cause::Unknown, grew(now.unknown, was.unknown)),
            ];
            let total = u64::try_from(total).unwrap_or(u64::MAX);
            // Several at once: the packets just before this one were resends too, decided
            // now (the oldest first); this packet is the last of them.
            let before = usize::try_from(total - 1).unwrap_or(usize::MAX).min(st.recent_len);
            let mut at = st.recent.iter().take(st.recent_len).skip(st.recent_len - before).copied();
            let mut left = total;
            let all = causes.into_iter().chain([(Cause::Unknown, u64::MAX)]);
            for (cause, n) in all {
                let n = n.min(left);
                left -= n;
                for _ in 0..n {
                    let ev = match at.next() {
                        Some((frame, ts_ns, psn)) => Event { frame, ts_ns, psn, psn_last: psn, ..base },
                        None => base,
                    };
                    push(events, dropped, max, Event { kind: Kind::Resend, code: cause as u8, ..ev });
                }
            }
        } else if total < 0 {
            // A resend taken back (a late original after all).
            for _ in 0..total.unsigned_abs() {
                take_back(events, dropped, flow, Kind::Resend);
            }
        }
        let mut changed = |kind: Kind, code: u8, now: u64, was: u64| {
            if now > was {
                let weight = clamp32(now - was);
                push(events, dropped, max, Event { kind, code, weight, ..base });
            } else {
                for _ in now..was {
                    take_back(events, dropped, flow, kind);
                }
            }
        };
        for (i, (n, w)) in now.naks.iter().zip(was.naks.iter()).enumerate() {
            let code = Nak::ALL.get(i).copied().unwrap_or(Nak::Other) as u8;
            // One instant a NAK: they are never sampled in bulk (each NAK is a packet).
            for _ in *w..*n {
                changed(Kind::Nak, code, 1, 0);
            }
            for _ in *n..*w {
                changed(Kind::Nak, code, 0, 1);
            }
        }
        changed(Kind::AckTimeout, 0, now.timeout_bursts, was.timeout_bursts);
        // A CNP stands for its sampling rate's worth: one instant, weighted.
        changed(Kind::Cnp, 0, now.cnps, was.cnps);
        if let Some(p) = packet {
            if st.recent_len == RECENT {
                st.recent.rotate_left(1);
                st.recent_len -= 1;
            }
            if let Some(slot) = st.recent.get_mut(st.recent_len) {
                *slot = (number, ts_ns, p.psn);
                st.recent_len += 1;
            }
        }
    }
}

/// A message whose last packet never came, as a slice up to its latest packet.
fn partial(id: usize, o: &Open) -> Event {
    Event {
        kind: Kind::Partial,
        ts_ns: o.ts_ns,
        dur_ns: o.last_ns.saturating_sub(o.ts_ns).max(0),
        flow: u32::try_from(id).unwrap_or(u32::MAX),
        frame: o.frame,
        psn: o.psn_first,
        psn_last: o.psn_last,
        bytes: o.bytes,
        packets: o.packets,
        code: o.opcode,
        first_opcode: o.opcode,
        weight: 1,
    }
}

fn clamp32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Keep `ev`, or count it past the cap.
fn push(events: &mut Vec<Event>, dropped: &mut [u64; Kind::COUNT], max: usize, ev: Event) {
    if events.len() < max {
        events.push(ev);
    } else if let Some(d) = dropped.get_mut(ev.kind as usize) {
        *d += 1;
    }
}

/// Take back flow `flow`'s latest event of `kind` (or one of those counted past the cap).
fn take_back(events: &mut Vec<Event>, dropped: &mut [u64; Kind::COUNT], flow: u32, kind: Kind) {
    if let Some(d) = dropped.get_mut(kind as usize).filter(|d| **d > 0) {
        *d -= 1;
    } else if let Some(at) = events.iter().rposition(|e| e.flow == flow && e.kind == kind) {
        events.remove(at);
    }
}
