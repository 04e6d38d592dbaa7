//! Flows seen at several capture points: what was lost between them.
//!
//! With captures from both ends of a connection (or from many hosts) merged by time, the
//! same packet shows up once per capture point on its path. Each packet is keyed by its
//! flow without the point (source, destination, destination QP) and its PSN, and counted per
//! point. Once a packet has waited `window` (clock offsets between hosts, plus the path
//! delay) it is settled: when point A holds more copies than point B, and B was capturing
//! that flow at the time (B saw the flow, and its capture ran before and after the packet),
//! the difference was lost between A and B (or dropped by B's capture: the per-point PSN
//! analysis at B tells which). Memory is bounded by the packets of one window.

use crate::flow::FlowKey;
use crate::FrameMeta;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Points taking part in matching (a packet's copies are counted in a fixed array).
pub const MAX_POINTS: usize = 16;

/// One packet, counted per capture point.
#[derive(Clone, Copy, Debug)]
struct Entry {
    first_ns: i64,
    first_frame: u64,
    /// The point that saw it first (in the merged order).
    first_point: u8,
    counts: [u16; MAX_POINTS],
}

/// One flow, whatever the point.
#[derive(Clone, Copy, Debug)]
struct Path {
    key: FlowKey,
    /// Points that have seen it.
    mask: u32,
}

/// Capture time span of a point.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    first: Option<i64>,
    last: i64,
}

/// Packets of one flow seen at `from` and not at `to`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// Packets.
    pub packets: u64,
    /// First such packet's frame number (at `from`).
    pub first_frame: u64,
    /// Its time.
    pub first_ns: i64,
}

/// The cross-point matcher.
#[derive(Debug)]
pub struct Matcher {
    points: usize,
    window_ns: i64,
    now: i64,
    spans: Vec<Span>,
    paths: FxHashMap<FlowKey, u32>,
    path_info: Vec<Path>,
    pending: FxHashMap<u64, Entry>,
    queue: VecDeque<(i64, u64)>,
    lost: FxHashMap<(u32, u8, u8), Lost>,
    /// Packets seen at two or more points.
    matched: u64,
    /// Clock shift between points, `[i * points + j]` = a packet's time at j minus its time
    /// at i, from the latest packet seen at both (host clocks differ by far more than the
    /// path delay): lets a packet's time at one point be placed in another's capture span.
    shift: Vec<Option<i64>>,
}

impl Matcher {
    /// A matcher for `points` capture points (only the first [`MAX_POINTS`] are matched).
    pub fn new(points: usize, window_ns: i64) -> Self {
        Matcher {
            points: points.min(MAX_POINTS),
            window_ns: window_ns.max(0),
            now: i64::MIN,
            spans: vec![Span::default(); points.min(MAX_POINTS)],
            paths: FxHashMap::default(),
            path_info: Vec::new(),
            pending: FxHashMap::default(),
            queue: VecDeque::new(),
            lost: FxHashMap::default(),
            matched: 0,
            shift: vec![None; points.min(MAX_POINTS) * points.min(MAX_POINTS)],
        }
    }

    /// A frame from `point` at `ts`: the point's capture runs at least until then; packets
    /// older than the window settle.
    pub fn advance(&mut self, point: u16, ts: i64) {
        if let Some(s) = self.spans.get_mut(usize::from(point)) {
            s.first.get_or_insert(ts);
            s.last = s.last.max(ts);
        }
        self.now = self.now.max(ts);
        let horizon = self.now.saturating_sub(self.window_ns);
        while let Some(&(t, k)) = self.queue.front() {
            if t >= horizon {
                break;
            }
            self.queue.pop_front();
            self.settle(t, k);
        }
    }

    /// A RoCE packet of `key` (which carries its point) with `psn`.
    pub fn seen(&mut self, key: FlowKey, psn: u32, opcode: u8, meta: &FrameMeta) {
        let point = usize::from(key.point);
        if point >= self.points {
            return;
        }
        let bare = key.at(0);
        let next = self.path_info.len() as u32;
        let path = *self.paths.entry(bare).or_insert(next);
        if path == next {
            self.path_info.push(Path { key: bare, mask: 0 });
        }
        if let Some(p) = self.path_info.get_mut(path as usize) {
            p.mask |= 1 << point;
        }
        // PSN is 24 bits; the opcode keeps a READ request and its response (same PSN,
        // other flow anyway) and an ACK apart from data that reuses the number.
        let k = u64::from(path) << 32 | u64::from(opcode) << 24 | u64::from(psn & 0xFF_FFFF);
        let e = self.pending.entry(k).or_insert_with(|| {
            self.queue.push_back((meta.ts_ns, k));
            Entry {
                first_ns: meta.ts_ns,
                first_frame: meta.number,
                first_point: point as u8,
                counts: [0; MAX_POINTS],
            }
        });
        if let Some(c) = e.counts.get_mut(point) {
            if *c == 0 && usize::from(e.first_point) != point {
                let (i, d) = (usize::from(e.first_point), meta.ts_ns - e.first_ns);
                let n = self.points;
                if let Some(s) = self.shift.get_mut(i * n + point) {
                    *s = Some(d);
                }
                if let Some(s) = self.shift.get_mut(point * n + i) {
                    *s = Some(-d);
                }
            }
            *c = c.saturating_add(1);
        }
    }

    fn settle(&mut self, t: i64, k: u64) {
        // The queue names an entry by its first time: a later entry under the same key
        // (the PSN came round again) is settled by its own queue slot.
        let Some(e) = self.pending.get(&k).copied() else { return };
        if e.first_ns != t {
            return;
        }
        self.pending.remove(&k);
        self.count(k, &e);
    }

    fn count(&mut self, k: u64, e: &Entry) {
        let path = (k >> 32) as u32;
        let Some(info) = self.path_info.get(path as usize).copied() else { return };
        let present = e.counts.iter().filter(|c| **c > 0).count();
        if present >= 2 {
            self.matched += 1;
        }
        for from in 0..self.points {
            let a = e.counts.get(from).copied().unwrap_or(0);
            if a == 0 {
                continue;
            }
            for to in 0..self.points {
                let b = e.counts.get(to).copied().unwrap_or(0);
                if to == from || b >= a || info.mask & (1 << to) == 0 {
                    continue;
                }
                let Some(span) = self.spans.get(to) else { continue };
                // The packet's time on `to`'s clock.
                let shift = self
                    .shift
                    .get(usize::from(e.first_point) * self.points + to)
                    .copied()
                    .flatten()
                    .unwrap_or(0);
                let t = e.first_ns.saturating_add(shift);
                let covers = span.first.is_some_and(|f| f <= t) && span.last >= t;
                if !covers {
                    continue;
                }
                let l = self.lost.entry((path, from as u8, to as u8)).or_insert(Lost {
                    packets: 0,
                    first_frame: e.first_frame,
                    first_ns: e.first_ns,
                });
                l.packets += u64::from(a - b);
                if e.first_ns < l.first_ns {
                    l.first_ns = e.first_ns;
                    l.first_frame = e.first_frame;
                }
            }
        }
    }

    /// Settle every packet still waiting: the input has ended.
    pub fn finish(&mut self) {
        while let Some((t, k)) = self.queue.pop_front() {
            self.settle(t, k);
        }
    }

    /// Packets seen at two or more points (settled so far).
    pub fn matched(&self) -> u64 {
        self.matched
    }

    /// Packets waiting to settle.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Losses between points: (flow without its point, from, to, what).
    pub fn losses(&self) -> Vec<(FlowKey, u16, u16, Lost)> {
        let mut v: Vec<_> = self
            .lost
            .iter()
            .filter_map(|(&(path, from, to), l)| {
                let key = self.path_info.get(path as usize)?.key;
                Some((key, u16::from(from), u16::from(to), *l))
            })
            .collect();
        v.sort_by_key(|(k, from, to, l)| (l.first_frame, *k, *from, *to));
        v
    }

    /// Flows seen at two or more points (the ones losses can be placed on).
    pub fn shared_flows(&self) -> usize {
        self.path_info.iter().filter(|p| p.mask.count_ones() >= 2).count()
    }

    /// Points taking part in matching.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Points that saw a flow (bit per point), by the flow without its point.
    pub fn points_of(&self, key: FlowKey) -> u32 {
        self.paths.get(&key.at(0)).and_then(|p| self.path_info.get(*p as usize)).map_or(0, |p| p.mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn key(point: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            dest_qp: 0x12,
            point,
        }
    }

    fn push(m: &mut Matcher, point: u16, ts: i64, psn: u32, frame: u64) {
        m.advance(point, ts);
        m.seen(
            key(point),
            psn,
            0x0a,
            &FrameMeta { number: frame, ts_ns: ts, len: 100, link_bps: None, point },
        );
    }

    #[test]
    fn a_packet_missing_downstream_is_lost_between() {
        let mut m = Matcher::new(2, 1_000);
        let mut frame = 0;
        for psn in 0..10u32 {
            let t = i64::from(psn) * 100;
            frame += 1;
            push(&mut m, 0, t, psn, frame);
            if psn != 4 && psn != 7 {
                frame += 1;
                push(&mut m, 1, t + 10, psn, frame);
            }
        }
        m.finish();
        let l = m.losses();
        assert_eq!(l.len(), 1);
        let (k, from, to, lost) = l[0];
        assert_eq!((k.dest_qp, from, to, lost.packets), (0x12, 0, 1, 2));
        assert_eq!(lost.first_ns, 400);
        assert_eq!(m.matched(), 8);
        assert_eq!(m.pending(), 0);
    }

    #[test]
    fn a_retransmit_counts_copies_and_uncovered_time_is_not_loss() {
        let mut m = Matcher::new(2, 1_000);
        // PSN 1 sent twice at A (the first copy lost), once at B.
        push(&mut m, 0, 0, 1, 1);
        push(&mut m, 1, 5, 0, 2); // B starts (an earlier packet, only at B)
        push(&mut m, 0, 50, 1, 3);
        push(&mut m, 1, 60, 1, 4);
        // B's capture ends; A goes on: not lost, B was not capturing.
        push(&mut m, 0, 5_000, 2, 5);
        push(&mut m, 0, 9_000, 3, 6);
        m.finish();
        let l = m.losses();
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].3.packets, 1);
        // The PSN-0 packet at B before A started is not "lost at A" either.
        assert!(l.iter().all(|(_, from, _, _)| *from == 0));
    }

    #[test]
    fn points_that_never_see_a_flow_are_not_on_its_path() {
        let mut m = Matcher::new(3, 1_000);
        for psn in 0..5 {
            push(&mut m, 0, i64::from(psn) * 10, psn, 1);
            push(&mut m, 1, i64::from(psn) * 10 + 1, psn, 2);
        }
        // Point 2 captures other traffic at the same time.
        m.advance(2, 0);
        m.advance(2, 100);
        m.finish();
        assert!(m.losses().is_empty());
        assert_eq!(m.points_of(key(0)), 0b011);
    }
}
