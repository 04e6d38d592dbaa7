//! Flows seen at several capture points: what was lost between them.
//!
//! With captures from both ends of a connection (or from many hosts) merged by time, the
//! same packet shows up once per capture point on its path. Each packet a PSN names (RC, UC
//! and XRC requests and READ responses: ACKs repeat PSNs and CNPs carry none, so they are left
//! out) is keyed by its flow without the point (source, destination, destination QP), its
//! opcode and its PSN, and counted per point. Once a packet has waited `window` after its
//! first copy (clock offsets between hosts, plus the path delay) it settles: a point holding
//! fewer copies than the others is missing the difference, lost between them (or dropped by
//! that point's capture: the per-point PSN analysis tells which).
//!
//! A point counts as missing a packet only when
//! - it saw the flow at all (it is on the flow's path),
//! - the two points' clocks are tied: some packet was seen at both, which gives the offset
//!   between them (host clocks differ by milliseconds, paths by microseconds); without one,
//!   nothing is said about the pair, and the report names it,
//! - and it was capturing at the packet's time on its own clock: it had started, and it
//!   captured something later. During an outage the point may record nothing at all, so a
//!   packet past its latest frame waits until the point records a later frame (then it was
//!   lost) or its capture ends (then nothing is said).
//!
//! With three or more points on a path, a packet missing at one point is charged once, to the
//! point that saw it last (the nearest upstream in the merged order).
//!
//! Up to [`MAX_POINTS`] points are matched. Memory is bounded by the packets of one window
//! (and of an outage being confirmed), and does not grow with the number of points: a packet
//! keeps the points that saw it (normally 2 or 3; up to 4 inline, more in a list of its own
//! while it waits), a flow the points on its path, and the clock offsets are kept per pair
//! of points that share a flow. Besides those, each point costs a few dozen bytes.

use crate::flow::FlowKey;
use crate::FrameMeta;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::collections::VecDeque;

/// Points taking part in matching: the first 1024 capture points. What matching holds per
/// point is small (its capture span and the runs it is waiting on); the clock offsets are
/// kept for pairs of points that share a flow, at most 1024 × 1023 / 2 of them.
pub const MAX_POINTS: usize = 1024;

/// Points a pending packet counts its copies at inline; a packet seen at more keeps the rest
/// in a list of its own until it settles.
const INLINE: usize = 4;

/// One packet, counted per capture point.
#[derive(Clone, Copy, Debug)]
struct Packet {
    first_ns: i64,
    first_frame: u64,
    last_ns: i64,
    last_frame: u64,
    /// The point that saw it first, and last (in the merged order).
    first_point: u16,
    last_point: u16,
    /// The first points that saw it, in that order, and their copies; the points past
    /// [`INLINE`] are in `Matcher::spill` under the packet's key.
    at: [u16; INLINE],
    copies: [u8; INLINE],
    len: u8,
    spilled: bool,
}

impl Packet {
    /// Copies seen at `point` (`spill`: the packet's points past the inline ones).
    fn copies_at(&self, spill: &[(u16, u8)], point: u16) -> u8 {
        let n = usize::from(self.len).min(INLINE);
        if let Some(i) = self.at[..n].iter().position(|&p| p == point) {
            return self.copies.get(i).copied().unwrap_or(0);
        }
        spill.iter().find(|(p, _)| *p == point).map_or(0, |(_, c)| *c)
    }
}

/// Points on a flow's path, sorted: inline while few, else in a list.
#[derive(Clone, Debug)]
enum PointSet {
    Inline { len: u8, p: [u16; 7] },
    Heap(Vec<u16>),
}

impl PointSet {
    fn as_slice(&self) -> &[u16] {
        match self {
            PointSet::Inline { len, p } => p.get(..usize::from(*len)).unwrap_or(&[]),
            PointSet::Heap(v) => v,
        }
    }

    fn contains(&self, point: u16) -> bool {
        self.as_slice().contains(&point)
    }

    /// Add `point` (not already in the set).
    fn insert(&mut self, point: u16) {
        let at = self.as_slice().partition_point(|&q| q < point);
        match self {
            PointSet::Inline { len, p } if usize::from(*len) < p.len() => {
                let n = usize::from(*len);
                p.copy_within(at..n, at + 1);
                p[at] = point;
                *len += 1;
            }
            PointSet::Inline { .. } => {
                let mut v = self.as_slice().to_vec();
                v.insert(at, point);
                *self = PointSet::Heap(v);
            }
            PointSet::Heap(v) => v.insert(at, point),
        }
    }
}

/// One flow, whatever the point.
#[derive(Clone, Debug)]
struct Path {
    key: FlowKey,
    /// Points that have seen it.
    points: PointSet,
}

/// Capture time span of a point.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    first: Option<i64>,
    last: i64,
}

/// Packets missing at a point whose capture had not (yet) recorded anything later, per
/// (path, from): confirmed when it does, dropped when the input ends.
#[derive(Clone, Copy, Debug)]
struct Awaiting {
    /// Latest packet time of the run, on the missing point's clock.
    t_last: i64,
    lost: Lost,
}

/// The runs one point is waiting on, and the earliest time that would confirm one.
#[derive(Clone, Debug, Default)]
struct Waiting {
    runs: FxHashMap<(u32, u16), Awaiting>,
    min_t: i64,
}

/// Packets of one flow seen at `from` and not at `to`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// Packets.
    pub packets: u64,
    /// First such packet's frame number (its copy at `from`).
    pub first_frame: u64,
    /// Its time (at `from`).
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
    pending: FxHashMap<u64, Packet>,
    /// The points past [`INLINE`] of pending packets seen at more, by packet key.
    spill: FxHashMap<u64, Vec<(u16, u8)>>,
    queue: VecDeque<(i64, u64)>,
    /// Per missing point, runs waiting for that point to record a later frame.
    awaiting: Vec<Waiting>,
    lost: FxHashMap<(u32, u16, u16), Lost>,
    /// Packets seen at two or more points.
    matched: u64,
    /// Pairs of points `(a, b)`, `a < b`, that share a flow: their index in `shifts`.
    pairs: FxHashMap<(u16, u16), u32>,
    /// Clock shift between the points of a pair: a packet's time at b minus its time at a,
    /// from the latest packet seen at both; `None` until one is.
    shifts: Vec<Option<i64>>,
    /// The pair tied last, and its index (most packets tie the same pair as the one before).
    last_tie: ((u16, u16), u32),
}

impl Matcher {
    /// A matcher for `points` capture points (only the first [`MAX_POINTS`] are matched).
    pub fn new(points: usize, window_ns: i64) -> Self {
        let n = points.min(MAX_POINTS);
        Matcher {
            points: n,
            window_ns: window_ns.max(0),
            now: i64::MIN,
            spans: vec![Span::default(); n],
            paths: FxHashMap::default(),
            path_info: Vec::new(),
            pending: FxHashMap::default(),
            spill: FxHashMap::default(),
            queue: VecDeque::new(),
            awaiting: vec![Waiting::default(); n],
            lost: FxHashMap::default(),
            matched: 0,
            pairs: FxHashMap::default(),
            shifts: Vec::new(),
            last_tie: ((u16::MAX, u16::MAX), 0),
        }
    }

    /// A frame from `point` at `ts`: the point's capture runs at least until then (which
    /// confirms packets it was waiting to be shown missing); packets older than the window
    /// settle.
    pub fn advance(&mut self, point: u16, ts: i64) {
        let p = usize::from(point);
        if let Some(s) = self.spans.get_mut(p) {
            s.first.get_or_insert(ts);
            s.last = s.last.max(ts);
        }
        if let Some(w) = self.awaiting.get_mut(p).filter(|w| !w.runs.is_empty() && w.min_t <= ts) {
            let lost = &mut self.lost;
            w.runs.retain(|&(path, from), a| {
                if a.t_last <= ts {
                    add_lost(lost, (path, from, point), a.lost);
                    false
                } else {
                    true
                }
            });
            w.min_t = w.runs.values().map(|a| a.t_last).min().unwrap_or(i64::MAX);
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

    /// A packet of `key` (which carries its point) with `psn`; the caller passes only
    /// packets a PSN identifies (see the module docs).
    pub fn seen(&mut self, key: FlowKey, psn: u32, opcode: u8, meta: &FrameMeta) {
        let point = key.point;
        if usize::from(point) >= self.points {
            return;
        }
        let bare = key.at(0);
        let next = self.path_info.len() as u32;
        let path = *self.paths.entry(bare).or_insert(next);
        if path == next {
            self.path_info.push(Path { key: bare, points: PointSet::Inline { len: 0, p: [0; 7] } });
        }
        if let Some(p) = self.path_info.get_mut(path as usize).filter(|p| !p.points.contains(point)) {
            // A point joins the path: it shares the flow with every point already on it.
            for &q in p.points.as_slice() {
                let next = self.shifts.len() as u32;
                if *self.pairs.entry((q.min(point), q.max(point))).or_insert(next) == next {
                    self.shifts.push(None);
                }
            }
            p.points.insert(point);
        }
        let k = u64::from(path) << 32 | u64::from(opcode) << 24 | u64::from(psn & 0xFF_FFFF);
        let e = match self.pending.entry(k) {
            Entry::Vacant(v) => {
                // The first copy.
                self.queue.push_back((meta.ts_ns, k));
                v.insert(Packet {
                    first_ns: meta.ts_ns,
                    first_frame: meta.number,
                    last_ns: meta.ts_ns,
                    last_frame: meta.number,
                    first_point: point,
                    last_point: point,
                    at: [point; INLINE],
                    copies: [1; INLINE],
                    len: 1,
                    spilled: false,
                });
                return;
            }
            Entry::Occupied(o) => o.into_mut(),
        };
        let n = usize::from(e.len).min(INLINE);
        let first_here = if let Some(i) = e.at[..n].iter().position(|&p| p == point) {
            if let Some(c) = e.copies.get_mut(i) {
                *c = c.saturating_add(1);
            }
            false
        } else if n < INLINE {
            e.at[n] = point;
            e.copies[n] = 1;
            e.len += 1;
            true
        } else {
            e.spilled = true;
            let v = self.spill.entry(k).or_default();
            if let Some((_, c)) = v.iter_mut().find(|(p, _)| *p == point) {
                *c = c.saturating_add(1);
                false
            } else {
                v.push((point, 1));
                true
            }
        };
        if first_here && e.first_point != point {
            // The first copy at a second point ties the two clocks.
            let (i, d) = (e.first_point, meta.ts_ns - e.first_ns);
            let (pair, shift) = if i < point { ((i, point), d) } else { ((point, i), -d) };
            let at = if self.last_tie.0 == pair {
                Some(self.last_tie.1)
            } else {
                self.pairs.get(&pair).copied().inspect(|&at| self.last_tie = (pair, at))
            };
            if let Some(s) = at.and_then(|at| self.shifts.get_mut(at as usize)) {
                *s = Some(shift);
            }
        }
        e.last_point = point;
        e.last_ns = meta.ts_ns;
        e.last_frame = meta.number;
    }

    fn settle(&mut self, t: i64, k: u64) {
        // The queue names an entry by its first time: a later entry under the same key
        // (the PSN came round again) is settled by its own queue slot.
        let Some(e) = self.pending.get(&k).copied() else { return };
        if e.first_ns != t {
            return;
        }
        self.pending.remove(&k);
        let spill = if e.spilled { self.spill.remove(&k).unwrap_or_default() } else { Vec::new() };
        self.count(k, &e, &spill);
    }

    fn count(&mut self, k: u64, e: &Packet, spill: &[(u16, u8)]) {
        let path = (k >> 32) as u32;
        let Some(info) = self.path_info.get(path as usize) else { return };
        let inline = e.copies.get(..usize::from(e.len)).unwrap_or(&[]);
        let held = inline.len() + spill.len();
        if held >= 2 {
            self.matched += 1;
        }
        let (min, max) = inline
            .iter()
            .chain(spill.iter().map(|(_, c)| c))
            .fold((u8::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        if min == max && held == info.points.as_slice().len() {
            return; // as many copies at every point on the path
        }
        // Charged to the last point that saw every copy (the nearest upstream), else the
        // first in the points' order that did.
        let from = if e.copies_at(spill, e.last_point) == max {
            e.last_point
        } else {
            let all = e.at.iter().take(inline.len()).zip(inline).chain(spill.iter().map(|(p, c)| (p, c)));
            all.filter(|(_, c)| **c == max).map(|(p, _)| *p).min().unwrap_or(0)
        };
        let (frame, ns) =
            if from == e.last_point { (e.last_frame, e.last_ns) } else { (e.first_frame, e.first_ns) };
        for &to in info.points.as_slice() {
            let have = e.copies_at(spill, to);
            if have >= max {
                continue;
            }
            // The packet's time on `to`'s clock; no tie between the clocks, no verdict.
            let first = e.first_point;
            let shift = if first == to {
                Some(0)
            } else {
                let at = self.pairs.get(&(first.min(to), first.max(to)));
                let s = at.and_then(|at| self.shifts.get(*at as usize)).copied().flatten();
                if first < to {
                    s
                } else {
                    s.map(|s| -s)
                }
            };
            let Some(shift) = shift else { continue };
            let t = e.first_ns.saturating_add(shift);
            let Some(span) = self.spans.get(usize::from(to)) else { continue };
            if span.first.is_none_or(|f| f > t) {
                continue; // not capturing yet
            }
            let lost = Lost { packets: u64::from(max - have), first_frame: frame, first_ns: ns };
            if span.last >= t {
                add_lost(&mut self.lost, (path, from, to), lost);
            } else if let Some(w) = self.awaiting.get_mut(usize::from(to)) {
                // Past its latest frame: lost only if it records something later.
                if w.runs.is_empty() {
                    w.min_t = i64::MAX;
                }
                let a = w
                    .runs
                    .entry((path, from))
                    .or_insert(Awaiting { t_last: t, lost: Lost { packets: 0, ..lost } });
                a.t_last = a.t_last.max(t);
                a.lost.packets += lost.packets;
                w.min_t = w.min_t.min(a.t_last);
            }
        }
    }

    /// Settle every packet still waiting: the input has ended. Packets a point was waiting
    /// to be shown missing stay unsaid (its capture ended before them).
    pub fn finish(&mut self) {
        while let Some((t, k)) = self.queue.pop_front() {
            self.settle(t, k);
        }
        for w in &mut self.awaiting {
            w.runs.clear();
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

    /// Points taking part in matching.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Pairs of points that share a flow but whose clocks were never tied by a packet seen
    /// at both: nothing can be said about losses between them.
    pub fn untied_pairs(&self) -> Vec<(u16, u16)> {
        let untied = |at: &u32| self.shifts.get(*at as usize).is_none_or(|s| s.is_none());
        let mut v: Vec<_> = self.pairs.iter().filter(|(_, at)| untied(at)).map(|(p, _)| *p).collect();
        v.sort_unstable();
        v
    }

    /// Losses between points: (flow without its point, from, to, what).
    pub fn losses(&self) -> Vec<(FlowKey, u16, u16, Lost)> {
        let mut v: Vec<_> = self
            .lost
            .iter()
            .filter_map(|(&(path, from, to), l)| {
                let key = self.path_info.get(path as usize)?.key;
                Some((key, from, to, *l))
            })
            .collect();
        v.sort_by_key(|(k, from, to, l)| (l.first_frame, *k, *from, *to));
        v
    }

    /// Points that saw a flow (in order), by the flow without its point.
    pub fn points_of(&self, key: FlowKey) -> &[u16] {
        self.paths
            .get(&key.at(0))
            .and_then(|p| self.path_info.get(*p as usize))
            .map_or(&[], |p| p.points.as_slice())
    }
}

fn add_lost(map: &mut FxHashMap<(u32, u16, u16), Lost>, key: (u32, u16, u16), l: Lost) {
    let e = map.entry(key).or_insert(Lost { packets: 0, first_frame: l.first_frame, first_ns: l.first_ns });
    e.packets += l.packets;
    if l.first_ns < e.first_ns {
        e.first_ns = l.first_ns;
        e.first_frame = l.first_frame;
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
        push(&mut m, 0, 10, 0, 3); // ... which A sends late: ties the clocks
        push(&mut m, 0, 50, 1, 4);
        push(&mut m, 1, 60, 1, 5);
        // B's capture ends; A goes on: not lost, B was not capturing.
        push(&mut m, 0, 5_000, 2, 6);
        push(&mut m, 0, 9_000, 3, 7);
        m.finish();
        let l = m.losses();
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].3.packets, 1);
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
        assert_eq!(m.points_of(key(0)), [0, 1]);
    }

    #[test]
    fn clocks_never_tied_say_nothing() {
        // B's clock 1 s ahead, window 1 us: no copy ever matches in time.
        let mut m = Matcher::new(2, 1_000);
        for psn in 0..100u32 {
            let t = i64::from(psn) * 10_000;
            push(&mut m, 0, t, psn, u64::from(psn) * 2);
        }
        for psn in 0..100u32 {
            let t = 1_000_000_000 + i64::from(psn) * 10_000;
            push(&mut m, 1, t, psn, u64::from(psn) * 2 + 1);
        }
        m.finish();
        assert!(m.losses().is_empty(), "{:?}", m.losses());
        assert_eq!(m.untied_pairs(), [(0, 1)]);
    }

    #[test]
    fn an_outage_longer_than_the_window_is_counted_when_the_point_comes_back() {
        let mut m = Matcher::new(2, 1_000);
        let mut frame = 0;
        for psn in 0..300u32 {
            let t = i64::from(psn) * 100;
            frame += 1;
            push(&mut m, 0, t, psn, frame);
            // B records nothing from PSN 100 to 199 (30 windows).
            if !(100..200).contains(&psn) {
                frame += 1;
                push(&mut m, 1, t + 5, psn, frame);
            }
        }
        m.finish();
        let l = m.losses();
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0].3.packets, 100);
        assert_eq!(l[0].3.first_ns, 10_000);
        // An outage that lasts to the end of B's capture says nothing.
        let mut m = Matcher::new(2, 1_000);
        for psn in 0..300u32 {
            let t = i64::from(psn) * 100;
            push(&mut m, 0, t, psn, 1);
            if psn < 100 {
                push(&mut m, 1, t + 5, psn, 2);
            }
        }
        m.finish();
        assert!(m.losses().is_empty(), "{:?}", m.losses());
    }

    #[test]
    fn three_points_charge_a_loss_once_to_the_nearest_upstream() {
        // A -> S -> B; PSN 3 lost between S and B.
        let mut m = Matcher::new(3, 1_000);
        let mut frame = 0;
        for psn in 0..6u32 {
            let t = i64::from(psn) * 100;
            for (p, d) in [(0u16, 0i64), (1, 5), (2, 10)] {
                if p == 2 && psn == 3 {
                    continue;
                }
                frame += 1;
                push(&mut m, p, t + d, psn, frame);
            }
        }
        m.finish();
        let l = m.losses();
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].1, l[0].2, l[0].3.packets), (1, 2, 1));
        assert_eq!(l[0].3.first_ns, 305, "the copy at S");
    }

    #[test]
    fn a_path_through_300_points_charges_a_loss_to_the_point_before_it() {
        // One flow captured at 300 points in a row (more than a packet keeps inline): PSN 7
        // never reaches point 201.
        let mut m = Matcher::new(300, 1_000_000);
        let mut frame = 0;
        for psn in 0..20u32 {
            let t = i64::from(psn) * 10_000;
            for p in 0..300u16 {
                if p >= 201 && psn == 7 {
                    continue;
                }
                frame += 1;
                push(&mut m, p, t + i64::from(p), psn, frame);
            }
        }
        m.finish();
        let l = m.losses();
        // Missing at every point past 200, each charged to 200, the last that saw it.
        assert_eq!(l.len(), 99, "{l:?}");
        assert!(l.iter().all(|(_, from, _, lost)| *from == 200 && lost.packets == 1));
        assert_eq!((l[0].2, l[0].3.first_ns), (201, 70_200));
        assert_eq!(m.matched(), 20);
        assert_eq!(m.points_of(key(0)).len(), 300);
        assert!(m.spill.is_empty() && m.pending() == 0);
    }

    #[test]
    fn points_past_the_limit_are_not_matched() {
        let mut m = Matcher::new(MAX_POINTS + 10, 1_000);
        assert_eq!(m.points(), MAX_POINTS);
        let last = MAX_POINTS as u16 - 1;
        for psn in 0..5u32 {
            let t = i64::from(psn) * 100;
            push(&mut m, last, t, psn, 1);
            if psn != 2 {
                push(&mut m, last + 1, t + 1, psn, 2);
            }
        }
        m.finish();
        assert!(m.losses().is_empty());
        assert_eq!(m.points_of(key(0)), [last]);
    }
}
