//! Folds at bin close: what a flow's frames add to the capture-wide figures per `--bin` bin
//! (the fan-in of its receiver, crate::incast; the fabric series of its priority,
//! crate::fabric; the DSCP and PCP marks of its point, crate::marks), added up in the flow
//! and handed over once per flow and bin instead of once per frame (issue 39,
//! perf-anatomy.md §4.1 and §4.4 "Folds at bin close").
//!
//! **How.** Each flow keeps one share ([`FlowFold`]): the frames of one bin that agree in
//! class (data, ACK, CNP), DSCP, PCP and priority, as bytes, packets, CE marks and the first
//! frame number. A frame that agrees with it adds three counters. Each capture point has a
//! clock (its current bin) and the list of its flows holding a share. When a frame (or a
//! mirror copy's mark) at the point falls in a later bin, the point's shares are folded, in
//! one pass, before anything of the new bin is counted: the fan-in receiver, the fabric's
//! bin being filled and the marks get the sums the frames one by one would have given them,
//! and in the same order of bins, so the busiest bins, distinct senders, peaks and evidence
//! frames come out the same. Within one bin the order does not matter: the figures are sums,
//! the senders a set, the first frame a minimum.
//!
//! **When a frame is counted as before** (per frame, crate::capture_wide), the conditions a
//! fold needs not holding:
//! - it is older than its point's bin (merged captures out of order): the point's shares are
//!   folded first, then the frame counts as it did (a bin over takes it in the fabric series,
//!   not the peaks; a receiver's bin over does not take it);
//! - its class, DSCP, PCP or priority differs from the flow's share: the share is folded at
//!   once (same bin: exact) and a new one starts;
//! - a sampled frame (weight above 1), a capture point past [`MAX_POINTS`], a `--bin` under
//!   1 µs (the fabric's width is then not the fan-in's), a bin index past 2^40;
//! - its host pair is another shard's (`--threads`): the first shard counts every frame of
//!   the capture-wide figures but keeps only its own pairs' flows;
//! - the flow goes (eviction) or the analyses of shards are merged: every share is folded
//!   first; so is every share at [`Analyzer::finish`].
//!
//! A report reads the figures with the shares still open added to copies (the fabric and
//! marks of a point; the changed fan-in receivers, [`crate::incast::Overlay`], kept for the
//! report being built), so a live report is what the frames one by one would have made.

use crate::audit::Class;
use crate::flow::{Flow, FlowFold};
use crate::frame::RoceFrame;
use crate::incast::{Overlay, Share};
use crate::{fabric, incast, marks, Analyzer, FrameMeta};
use rocescope_decoder::Ecn;
use std::sync::{Arc, Mutex};

/// Capture points whose frames fold: the fabric charts this many (past them it counts
/// frames, one by one).
pub(crate) const MAX_POINTS: usize = fabric::MAX_POINTS;

/// No share (a flow's [`FlowFold::key`]), and a clock whose bin does not fold.
const EMPTY: u64 = FlowFold::EMPTY;

/// Bin indices below this fold: the key keeps the bin in its top 40 bits.
const MAX_BIN: u64 = (1 << 40) - 1;

/// No fan-in receiver resolved.
const NO_RX: u32 = FlowFold::NO_RX;

/// A frame's wire bytes as a share's 32-bit figure: a frame's are its record's length or
/// its headers' (IP total length), both far below `u32::MAX`.
fn wire32(wire: u64) -> u32 {
    u32::try_from(wire).unwrap_or(u32::MAX)
}

impl FlowFold {
    /// Frame `v` of key `key` ([`frame_key`]) joins the share when it agrees with it and
    /// the share is not full: false when a new share must start ([`Analyzer::fold_start`]).
    /// A share is full when its packets or bytes would pass 32 bits; it folds and a new one
    /// starts, as exact as one share (the sinks add, and a sender counts once a bin).
    #[inline]
    fn add(&mut self, key: u64, v: &RoceFrame<'_>) -> bool {
        let bytes = u32::try_from(v.wire).ok().and_then(|w| self.bytes.checked_add(w));
        let (true, Some(bytes)) = (self.key == key && self.packets != u32::MAX, bytes) else {
            return false;
        };
        self.bytes = bytes;
        self.packets += 1;
        self.ce += u32::from(v.ecn == Ecn::Ce);
        true
    }
}

/// Frame `v` (number `frame`) of flow `f` (id `id`), of key `key` ([`frame_key`]): it joins
/// the flow's share, or starts one when the flow holds none (the flow goes on its point's
/// list). False when [`Analyzer::fold_start`] must take it: the flow's share has another
/// key or is full, or a data frame's receiver is not resolved yet.
#[inline]
pub(crate) fn add_frame(
    folds: &mut Folds,
    f: &mut Flow,
    id: usize,
    key: u64,
    v: &RoceFrame<'_>,
    frame: u64,
) -> bool {
    if f.fold.add(key, v) {
        return true;
    }
    let s = &mut f.fold;
    if s.key != EMPTY || (v.info.class == Class::Data && s.rx == NO_RX) {
        return false;
    }
    let (Ok(id), Some(c)) = (u32::try_from(id), folds.clocks.get_mut(usize::from(f.key.point))) else {
        return false;
    };
    c.pending.push(id);
    *s = FlowFold {
        key,
        bytes: wire32(v.wire),
        first: frame,
        packets: 1,
        ce: u32::from(v.ecn == Ecn::Ce),
        rx: s.rx,
    };
    true
}

/// The key of frame `v` in the bin of key bits `bin_key`: its class, DSCP, PCP and priority.
#[inline]
pub(crate) fn frame_key(bin_key: u64, v: &RoceFrame<'_>) -> u64 {
    let slot = v.pcp.map_or(8, |p| u64::from(p & 7));
    bin_key | class_bits(v.info.class) << 20 | slot << 16 | u64::from(v.dscp & 63) << 8 | u64::from(v.prio)
}

/// One capture point's clock.
#[derive(Clone, Debug, Default)]
struct Clock {
    /// Its current bin: where it starts (ns after the capture start), and its key bits
    /// (bin << 24, or [`EMPTY`] for a bin that does not fold).
    start: u64,
    key: u64,
    /// Its current bin's index.
    bin: u64,
    /// The flows holding a share (ids).
    pending: Vec<u32>,
}

/// The fan-in overlay of a state of the analysis: (frames, flows evicted) then, and it.
type OverlayCache = ((u64, u64), Arc<Overlay>);

/// The per-point clocks and lists of open shares.
#[derive(Debug, Default)]
pub(crate) struct Folds {
    /// The `--bin` width; 0: nothing folds (a width under 1 µs).
    base: u64,
    clocks: Vec<Clock>,
    /// The fan-in receivers with open shares added, for the report being built: built on
    /// the first read and kept while (frames, flows evicted) stay the same.
    overlay: Mutex<Option<OverlayCache>>,
}

impl Folds {
    /// Folds of `bin_ns` bins (none under 1 µs: the fabric's bins are 1 µs at least, the
    /// fan-in's would not be its).
    pub(crate) fn new(bin_ns: u64) -> Self {
        Folds { base: if bin_ns >= 1000 { bin_ns } else { 0 }, ..Folds::default() }
    }

    /// Whether a share is open anywhere.
    fn pending(&self) -> bool {
        self.clocks.iter().any(|c| !c.pending.is_empty())
    }
}

/// Class in the key.
fn class_bits(c: Class) -> u64 {
    match c {
        Class::Data => 0,
        Class::Ack => 1,
        Class::Cnp => 2,
    }
}

/// What a share's key holds: (bin, class, DSCP, PCP, priority).
fn unkey(key: u64) -> (u64, Class, u8, Option<u8>, u8) {
    let class = match (key >> 20) & 3 {
        0 => Class::Data,
        1 => Class::Ack,
        _ => Class::Cnp,
    };
    let slot = ((key >> 16) & 15) as u8;
    let pcp = (slot < 8).then_some(slot);
    (key >> 24, class, ((key >> 8) & 63) as u8, pcp, (key & 255) as u8)
}

/// A share's figures for the fabric series ([`fabric::Counts`]).
fn counts(class: Class, bytes: u64, packets: u64, ce: u64) -> fabric::Counts {
    fabric::counts(bytes, packets, ce, class == Class::Cnp, class == Class::Data)
}

/// Where bin `bin` of width `base` starts, ns after the capture start (at most a frame's
/// offset: an `i64`).
fn offset(bin: u64, base: u64) -> i64 {
    i64::try_from(bin.saturating_mul(base)).unwrap_or(i64::MAX)
}

/// Where the shares go: the figures themselves, or copies a report reads.
struct Sinks<'a> {
    fabric: Option<&'a mut fabric::Fabric>,
    marks: Option<&'a mut marks::PointMarks>,
    fan_in: FanInSink<'a>,
}

enum FanInSink<'a> {
    None,
    Direct(&'a mut incast::FanIn),
    Over(&'a incast::FanIn, &'a mut Overlay),
}

/// Fold share `s` of flow `f` (width `base`) into `to`.
fn fold_into(s: &FlowFold, f: &Flow, base: u64, to: &mut Sinks<'_>) {
    if s.key == EMPTY {
        return;
    }
    let (bin, class, dscp, pcp, prio) = unkey(s.key);
    let point = f.key.point;
    let packets = u64::from(s.packets);
    let ce = u64::from(s.ce);
    if let Some(fab) = to.fabric.as_deref_mut() {
        fab.add_counts(point, prio, offset(bin, base), counts(class, u64::from(s.bytes), packets, ce));
    }
    if let Some(m) = to.marks.as_deref_mut() {
        m.add(point, class, dscp, pcp, packets);
    }
    if class != Class::Data || s.rx == NO_RX {
        return;
    }
    let share =
        Share { src: f.key.src, bin: bin as i64, frame: s.first, bytes: u64::from(s.bytes), packets, ce };
    match &mut to.fan_in {
        FanInSink::None => {}
        FanInSink::Direct(fi) => fi.put(s.rx, &share),
        FanInSink::Over(fi, ov) => fi.put_over(ov, s.rx, &share),
    }
}

impl Analyzer {
    /// The clock of `point` sees a frame (or a mirror copy's mark) at `off` ns after the
    /// capture start. Folds the point's shares when it opens a later bin, or when it is
    /// older than the point's bin. Returns the key bits of the bin when the frame may fold
    /// ([`Analyzer::fold_frame`]), `None` when it counts one by one.
    #[inline]
    pub(crate) fn fold_clock(&mut self, point: u16, off: i64) -> Option<u64> {
        let base = self.folds.base;
        let off = off.max(0) as u64;
        if let Some(c) = self.folds.clocks.get(usize::from(point)) {
            if off.wrapping_sub(c.start) < base {
                return (self.weight == 1 && c.key != EMPTY).then_some(c.key);
            }
        }
        self.fold_clock_slow(point, off)
    }

    /// [`Analyzer::fold_clock`] for a frame outside the point's bin, or the point's first.
    #[cold]
    #[inline(never)]
    fn fold_clock_slow(&mut self, point: u16, off: u64) -> Option<u64> {
        let base = self.folds.base;
        let p = usize::from(point);
        if base == 0 || p >= MAX_POINTS {
            return None;
        }
        if self.folds.clocks.len() <= p {
            // A point's clock starts at bin 0, as the fabric's bin being filled does.
            self.folds.clocks.resize_with(p + 1, || Clock { key: 0, ..Clock::default() });
        }
        let c = self.folds.clocks.get(p)?;
        let (start, bin) = (c.start, c.bin);
        if off.wrapping_sub(start) < base {
            return (self.weight == 1 && c.key != EMPTY).then_some(c.key);
        }
        self.fold_point(p);
        let fi = off / base;
        if fi < bin {
            // Older than the point's bin: counted one by one, as before.
            return None;
        }
        let c = self.folds.clocks.get_mut(p)?;
        c.bin = fi;
        c.start = fi.saturating_mul(base);
        c.key = if fi < MAX_BIN { fi << 24 } else { EMPTY };
        (self.weight == 1 && c.key != EMPTY).then_some(c.key)
    }

    /// Frame `v` (`meta`) of flow `id`, in its point's bin of key bits `bin_key`
    /// ([`Analyzer::fold_clock`]): added to the flow's share. The capture-wide pass left
    /// its fan-in, fabric and marks to this. (Where the flow is at hand, `on_roce` calls
    /// [`frame_key`] and [`add_frame`] itself.)
    pub(crate) fn fold_frame(&mut self, id: usize, bin_key: u64, meta: &FrameMeta, v: &RoceFrame<'_>) {
        let key = frame_key(bin_key, v);
        let Some(f) = self.flows.get_mut(id) else { return };
        if !add_frame(&mut self.folds, f, id, key, v, meta.number) {
            self.fold_start(id, key, meta, v);
        }
    }

    /// A frame of flow `id` that [`add_frame`] could not take: the flow's share folds now
    /// (it is of the point's bin: exact) and a new one starts with the frame, its receiver
    /// resolved.
    #[cold]
    #[inline(never)]
    pub(crate) fn fold_start(&mut self, id: usize, key: u64, meta: &FrameMeta, v: &RoceFrame<'_>) {
        let base = self.folds.base;
        let point = usize::from(meta.point);
        let (Ok(id32), Some(f)) = (u32::try_from(id), self.flows.get_mut(id)) else {
            // Past the ids a list holds: one by one.
            let start = self.totals.start_ns.unwrap_or(meta.ts_ns);
            self.capture_wide_counts(meta, v, start);
            return;
        };
        let old = f.fold;
        if old.key == EMPTY {
            if let Some(c) = self.folds.clocks.get_mut(point) {
                c.pending.push(id32);
            }
        } else {
            let mut to = Sinks {
                fabric: Some(&mut self.fabric),
                marks: Some(&mut self.marks),
                fan_in: FanInSink::Direct(&mut self.fan_in),
            };
            fold_into(&old, f, base, &mut to);
        }
        let mut rx = old.rx;
        if v.info.class == Class::Data && rx == NO_RX {
            // Made now, on the receiver's first data frame, as one by one: receivers keep
            // the order they came in.
            let bin = i64::try_from(key >> 24).unwrap_or(i64::MAX);
            rx = self.fan_in.resolve(meta.point, v.dst, bin).unwrap_or(NO_RX);
        }
        f.fold = FlowFold {
            key,
            bytes: wire32(v.wire),
            first: meta.number,
            packets: 1,
            ce: u32::from(v.ecn == Ecn::Ce),
            rx,
        };
    }

    /// Fold the shares of point `p` (index), and empty its list. They are all of the
    /// point's bin: the fabric takes their sums per priority, one add each.
    fn fold_point(&mut self, p: usize) {
        let base = self.folds.base;
        let Some(c) = self.folds.clocks.get_mut(p) else { return };
        if c.pending.is_empty() {
            return;
        }
        let (Ok(point), bin) = (u16::try_from(p), c.bin) else { return };
        let mut list = std::mem::take(&mut c.pending);
        let mut sums = [[0u64; 6]; 8];
        let mut used = 0u8;
        let mut marks = self.marks.point_mut(point);
        for &id in &list {
            let Some(f) = self.flows.get_mut(id as usize) else { continue };
            let s = f.fold;
            f.fold = FlowFold { rx: s.rx, ..FlowFold::default() };
            if s.key == EMPTY {
                continue;
            }
            let (sbin, class, dscp, pcp, prio) = unkey(s.key);
            let packets = u64::from(s.packets);
            let ce = u64::from(s.ce);
            let c = counts(class, u64::from(s.bytes), packets, ce);
            if sbin == bin {
                let q = usize::from(prio & 7);
                used |= 1 << q;
                if let Some(sum) = sums.get_mut(q) {
                    for (x, y) in sum.iter_mut().zip(c) {
                        *x = x.wrapping_add(y);
                    }
                }
            } else {
                self.fabric.add_counts(point, prio, offset(sbin, base), c);
            }
            if let Some(m) = marks.as_mut() {
                m.add(class, dscp, pcp, packets);
            }
            if class == Class::Data && s.rx != NO_RX {
                let share = Share {
                    src: f.key.src,
                    bin: sbin as i64,
                    frame: s.first,
                    bytes: u64::from(s.bytes),
                    packets,
                    ce,
                };
                self.fan_in.put(s.rx, &share);
            }
        }
        for (q, sum) in (0u8..).zip(sums) {
            if used & (1 << q) != 0 {
                self.fabric.add_counts(point, q, offset(bin, base), sum);
            }
        }
        list.clear();
        if let Some(c) = self.folds.clocks.get_mut(p) {
            c.pending = list;
        }
    }

    /// Fold every open share (before flows go or are renumbered, and at the end).
    pub(crate) fn fold_all(&mut self) {
        for p in 0..self.folds.clocks.len() {
            self.fold_point(p);
        }
    }

    /// The fan-in receivers changed since the flows' resolved them (an eviction's
    /// [`incast::FanIn::retain`] renumbers them): each flow resolves its receiver again.
    pub(crate) fn fold_forget_receivers(&mut self) {
        for f in self.flows.iter_mut() {
            f.fold.rx = NO_RX;
        }
    }

    /// The flows holding an open share.
    fn open_shares(&self) -> impl Iterator<Item = &Flow> + '_ {
        self.folds.clocks.iter().flat_map(|c| c.pending.iter()).filter_map(|&id| self.flows.get(id as usize))
    }

    /// `fab` (a copy of the fabric series) with the open shares added.
    pub(crate) fn fold_into_fabric(&self, fab: &mut fabric::Fabric) {
        let mut to = Sinks { fabric: Some(fab), marks: None, fan_in: FanInSink::None };
        for f in self.open_shares() {
            fold_into(&f.fold, f, self.folds.base, &mut to);
        }
    }

    /// The marks report of `point` with the open shares (of every point: a frame at a later
    /// point makes room for the earlier ones' counts, as one by one).
    pub(crate) fn marks_report(&self, point: u16) -> Option<marks::MarksReport> {
        if !self.folds.pending() {
            return self.marks.report(point);
        }
        let mut m = self.marks.clone();
        let mut to = Sinks { fabric: None, marks: Some(&mut m), fan_in: FanInSink::None };
        for f in self.open_shares() {
            fold_into(&f.fold, f, self.folds.base, &mut to);
        }
        m.report(point)
    }

    /// The fan-in receivers with open shares, as the shares would leave them (`None`: no
    /// share is open). Built once per state of the analysis: a report reads it for every
    /// flow with congestion-control figures.
    pub(crate) fn fan_in_overlay(&self) -> Option<Arc<Overlay>> {
        if !self.folds.pending() {
            return None;
        }
        let stamp = (self.totals.frames, self.totals.flows_evicted);
        let mut cache = self.folds.overlay.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((s, ov)) = cache.as_ref() {
            if *s == stamp {
                return Some(Arc::clone(ov));
            }
        }
        let mut ov = Overlay::default();
        {
            let mut to = Sinks { fabric: None, marks: None, fan_in: FanInSink::Over(&self.fan_in, &mut ov) };
            for f in self.open_shares() {
                fold_into(&f.fold, f, self.folds.base, &mut to);
            }
        }
        let ov = Arc::new(ov);
        *cache = Some((stamp, Arc::clone(&ov)));
        Some(ov)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::AethRepr;
    use rocescope_decoder::{decode, BthRepr, DecodeOptions, LinkType, Opcode, OpcodeOptions, VlanTag};

    /// What a test frame is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Kind {
        /// An RC WRITE Only (data).
        Write,
        /// An RC ACK (class ACK).
        Ack,
        /// A CNP.
        Cnp,
        /// An RC READ response (data, on the ACKs' QP).
        ReadResponse,
        /// A mirror's second copy of the frame before (TTL one less), CE-marked when `ce`.
        Copy,
    }

    /// One test frame: from host `src` to host `dst` (10.0.0.x), QP `qp`, at `ts` ns.
    #[derive(Clone, Copy, Debug)]
    struct Spec {
        src: u8,
        dst: u8,
        qp: u32,
        kind: Kind,
        dscp: u8,
        pcp: Option<u8>,
        ce: bool,
        ts: i64,
        point: u16,
        rate: u32,
    }

    fn spec(src: u8, dst: u8, kind: Kind, ts: i64) -> Spec {
        Spec { src, dst, qp: u32::from(src), kind, dscp: 26, pcp: None, ce: false, ts, point: 0, rate: 1 }
    }

    fn bytes(s: &Spec, ident: u16, ttl: u8) -> Vec<u8> {
        let ip = IpRepr::V4 {
            src: [10, 0, 0, s.src].into(),
            dst: [10, 0, 0, s.dst].into(),
            dscp: s.dscp,
            ecn: if s.ce { Ecn::Ce } else { Ecn::Ect0 },
            ttl,
            id: ident,
        };
        let (opcode, ext, payload) = match s.kind {
            Kind::Write | Kind::Copy => (Opcode::RC_WRITE_ONLY, ExtRepr::default(), 256),
            Kind::Ack => {
                (Opcode::RC_ACKNOWLEDGE, ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() }, 0)
            }
            Kind::Cnp => (Opcode::CNP, ExtRepr::default(), 16),
            Kind::ReadResponse => (
                Opcode::RC_READ_RESPONSE_ONLY,
                ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() },
                128,
            ),
        };
        let bth = BthRepr { opcode, dest_qp: s.qp, psn: u32::from(ident), ..Default::default() };
        let ib = IbRepr { bth, ext, payload: vec![0; payload], icrc: IcrcMode::Correct };
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, s.src], [2, 0, 0, 0, 0, s.dst], ip, ib);
        if let Some(pcp) = s.pcp {
            f.vlans.push(VlanTag { tpid: 0x8100, pcp, dei: false, vid: 10 });
        }
        f.build(OpcodeOptions::default())
    }

    /// Feed `frames` (numbered from 1) to `a`; a `Copy` repeats the frame before it.
    fn feed(a: &mut Analyzer, frames: &[Spec], from: usize) {
        let opts = DecodeOptions::default();
        for (i, s) in frames.iter().enumerate().skip(from) {
            let data = match (s.kind, i.checked_sub(1).and_then(|j| frames.get(j))) {
                (Kind::Copy, Some(prev)) => {
                    let copy = Spec { ce: s.ce, ..*prev };
                    bytes(
                        &Spec { kind: if prev.kind == Kind::Copy { Kind::Write } else { prev.kind }, ..copy },
                        (i - 1) as u16,
                        63,
                    )
                }
                _ => bytes(s, i as u16, 64),
            };
            let p = decode(LinkType::ETHERNET, &data, &opts);
            let meta = FrameMeta {
                number: i as u64 + 1,
                ts_ns: s.ts,
                len: data.len() as u32,
                link_bps: None,
                point: s.point,
            };
            a.push_sampled(&meta, &p, s.rate);
        }
    }

    fn cfg(bin_ns: u64) -> Config {
        Config { bin_ns, link_speed_bps: 1_000_000_000, ..Config::default() }
    }

    /// An analyzer whose frames all count one by one (today's path, the reference).
    fn one_by_one(c: Config) -> Analyzer {
        let mut a = Analyzer::new(c);
        a.folds = Folds::new(0);
        a
    }

    fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
        serde_json::to_value(v).unwrap_or_default()
    }

    /// The reports of `frames` with folds and one by one: live after `live` frames, then
    /// (after evicting down to `max_flows` there, if given) at the end. They must agree.
    fn agree(c: &Config, frames: &[Spec], live: usize, max_flows: Option<usize>) {
        let mut folded = Analyzer::new(c.clone());
        let mut reference = one_by_one(c.clone());
        for a in [&mut folded, &mut reference] {
            feed_range(a, frames, 0, live);
        }
        assert_eq!(json(&folded.report()), json(&reference.report()), "live report after {live} frames");
        if let Some(m) = max_flows {
            assert_eq!(json(&folded.evict_over(m)), json(&reference.evict_over(m)), "evicted flows");
        }
        for a in [&mut folded, &mut reference] {
            feed_range(a, frames, live, frames.len());
            a.finish();
        }
        assert_eq!(json(&folded.report()), json(&reference.report()), "final report");
    }

    fn feed_range(a: &mut Analyzer, frames: &[Spec], from: usize, to: usize) {
        feed(a, frames.get(..to).unwrap_or(frames), from);
    }

    /// Six senders, each to receiver 100 in three 10 µs bins, with their ACKs and CNPs
    /// back on the senders' QPs (CNPs on DSCP 48), some data CE-marked.
    fn incast() -> Vec<Spec> {
        let mut v = Vec::new();
        for k in 0..90i64 {
            let src = 1 + (k % 6) as u8;
            let ts = 1_000 + k * 333;
            v.push(Spec { ce: k % 7 == 3, ..spec(src, 100, Kind::Write, ts) });
            if k % 3 == 0 {
                v.push(Spec { qp: u32::from(src) + 50, ..spec(100, src, Kind::Ack, ts + 50) });
            }
            if k % 10 == 4 {
                v.push(Spec { qp: u32::from(src) + 50, dscp: 48, ..spec(100, src, Kind::Cnp, ts + 60) });
            }
        }
        v
    }

    #[test]
    fn an_incast_folded_at_bin_close_is_the_incast_counted_frame_by_frame() {
        let c = cfg(10_000);
        let frames = incast();
        agree(&c, &frames, 40, None);
        let mut a = Analyzer::new(c.clone());
        feed(&mut a, &frames, 0);
        a.finish();
        let r = a.report();
        let top = r.incast.first().map(|i| (i.fan_in, i.packets, i.first_frame));
        // The bin of 10 µs from offset 0 holds 31 writes of the six senders (the first at
        // frame 1); the ACKs and CNPs are no data.
        assert_eq!(top, Some((6, 31, 1)));
        // ACKs and CNPs are the ACK and CNP classes of the marks, with their own DSCPs.
        let m = r.points.first().and_then(|p| p.marks.as_ref()).map(|m| {
            (
                m.data.dscp.first().map(|d| (d.value, d.packets)),
                m.cnp.dscp.first().map(|d| (d.value, d.packets)),
            )
        });
        assert_eq!(m, Some((Some((Some(26), 90)), Some((Some(48), 9)))));
    }

    #[test]
    fn a_point_whose_time_goes_back_counts_the_late_frame_as_before() {
        let c = cfg(10_000);
        // Two senders to receiver 100 in bin 0, then bin 2; then a late frame of bin 0 from
        // a third sender (not counted in the receiver's bin 0, which is over), and another
        // of bin 2 (counted).
        let mut frames = vec![
            spec(1, 100, Kind::Write, 1_000),
            spec(2, 100, Kind::Write, 2_000),
            spec(1, 100, Kind::Write, 21_000),
            spec(3, 100, Kind::Write, 5_000),
            spec(2, 100, Kind::Write, 22_000),
            spec(4, 100, Kind::Write, 23_000),
        ];
        agree(&c, &frames, 4, None);
        let mut a = Analyzer::new(c.clone());
        feed(&mut a, &frames, 0);
        a.finish();
        let r = a.report();
        assert_eq!(
            r.incast.first().map(|i| (i.fan_in, i.start_ns - r.summary.start_ns.unwrap_or(0))),
            Some((3, 20_000))
        );
        // The fabric series keeps the late frame (in its bin, not the peaks).
        let bytes: u64 = r.timeline.points.iter().flat_map(|p| &p.priorities).flat_map(|s| &s.bytes).sum();
        assert_eq!(bytes, r.summary.roce_bytes);
        // Late frames at every place of a bin, and ones within the bin (no fallback).
        frames.push(spec(5, 100, Kind::Write, 22_500));
        frames.push(spec(6, 100, Kind::Write, 45_000));
        frames.push(spec(6, 100, Kind::Write, 39_999));
        frames.push(spec(7, 100, Kind::Write, 44_000));
        for live in 0..frames.len() {
            agree(&c, &frames, live, None);
        }
    }

    #[test]
    fn a_marked_copy_in_the_next_bin_closes_the_bin_with_its_shares() {
        let c = cfg(10_000);
        // Three writes in bin 0 (offsets 0 to 9,990 ns), the CE-marked mirror copy of the
        // last in bin 1: it closes the fabric's bin 0, which must hold the three.
        let frames = vec![
            spec(1, 100, Kind::Write, 1_000),
            spec(2, 100, Kind::Write, 5_000),
            spec(5, 101, Kind::Write, 10_990),
            Spec { ce: true, ..spec(5, 101, Kind::Copy, 11_020) },
            spec(1, 100, Kind::Write, 15_000),
        ];
        agree(&c, &frames, 4, None);
        let mut a = Analyzer::new(c.clone());
        feed(&mut a, &frames, 0);
        a.finish();
        let r = a.report();
        assert_eq!(r.summary.duplicates, 1);
        let s = r.timeline.points.first().and_then(|p| p.priorities.first());
        let frame_bytes = r.summary.roce_bytes / 4;
        assert_eq!(
            s.map(|s| (s.peak.offset_ns, s.peak.gbps * 1e4 / 8.0)),
            Some((0, (3 * frame_bytes) as f64))
        );
        assert_eq!(s.map(|s| (s.peak.ce, s.peak.ce_offset_ns)), Some((1, 10_000)));
    }

    #[test]
    fn a_flow_that_changes_priority_class_or_marks_in_a_bin_folds_each_part() {
        let c = cfg(1_000_000);
        let mut frames = Vec::new();
        for k in 0..40i64 {
            let ts = 1_000 + k * 10_000;
            let pcp = if k % 8 < 4 { Some(3) } else { Some(5) };
            let dscp = if k % 5 == 0 { 10 } else { 26 };
            frames.push(Spec { pcp, dscp, ..spec(1, 100, Kind::Write, ts) });
            // The reverse flow: ACKs and READ responses on one QP, untagged and tagged.
            let kind = if k % 3 == 0 { Kind::ReadResponse } else { Kind::Ack };
            let pcp = if k % 4 == 0 { None } else { Some(3) };
            frames.push(Spec { qp: 9, pcp, ..spec(100, 1, kind, ts + 100) });
        }
        agree(&c, &frames, 17, None);
        let mut a = Analyzer::new(c.clone());
        feed(&mut a, &frames, 0);
        a.finish();
        let r = a.report();
        let pcp: Vec<(Option<u8>, u64)> = r
            .points
            .first()
            .and_then(|p| p.marks.as_ref())
            .map(|m| m.data.pcp.iter().map(|v| (v.value, v.packets)).collect())
            .unwrap_or_default();
        // Data: 20 writes on PCP 3 and 20 on 5; 14 READ responses, 4 of them untagged.
        assert_eq!(pcp, vec![(Some(3), 20 + 10), (Some(5), 20), (None, 4)]);
    }

    #[test]
    fn eviction_shards_points_copies_and_sampling_agree_with_frame_by_frame() {
        let c = cfg(10_000);
        let mut frames = incast();
        // A second capture point, one past the folds' points, sampled frames, copies.
        for k in 0..30i64 {
            let ts = 5_000 + k * 900;
            frames.push(Spec { point: 1, ..spec(3, 100, Kind::Write, ts) });
            frames.push(Spec { point: 70, ..spec(4, 100, Kind::Write, ts + 10) });
            frames.push(Spec { rate: 4, ..spec(5, 101, Kind::Write, ts + 20) });
            frames.push(Spec { ce: k % 2 == 0, ..spec(5, 101, Kind::Copy, ts + 30) });
        }
        frames.sort_by_key(|s| (s.ts, s.point));
        // A copy follows its frame.
        frames.retain(|s| s.kind != Kind::Copy);
        let mut with_copies = Vec::new();
        for s in frames {
            with_copies.push(s);
            if s.src == 5 {
                with_copies.push(Spec { ce: s.ts % 2 == 0, ..spec(5, 101, Kind::Copy, s.ts + 30) });
            }
        }
        let frames = with_copies;
        agree(&c, &frames, 100, Some(4));
        // Three shards, merged: the first folds only its own pairs.
        let mut shards: Vec<Analyzer> = (0..3)
            .map(|i| {
                let mut a = Analyzer::new(c.clone());
                assert!(a.set_shard(i, 3));
                a
            })
            .collect();
        for a in &mut shards {
            feed(a, &frames, 0);
        }
        let mut merged = crate::parallel::merge(shards).unwrap_or_else(|| Analyzer::new(c.clone()));
        merged.finish();
        let mut reference = one_by_one(c.clone());
        feed(&mut reference, &frames, 0);
        reference.finish();
        assert_eq!(json(&merged.report()), json(&reference.report()));
    }

    #[test]
    fn a_live_report_reads_the_open_shares_of_every_point() {
        let c = cfg(10_000);
        // Point 0 sees only a non-RoCE frame; point 2's RoCE frames are all in open shares.
        let mut frames: Vec<Spec> = (0..6)
            .map(|k| Spec { point: 2, ..spec(1 + k % 3, 100, Kind::Write, 2_000 + i64::from(k) * 100) })
            .collect();
        frames.push(Spec { point: 2, ..spec(100, 1, Kind::Ack, 3_000) });
        for live in [1, 4, 7] {
            let mut folded = Analyzer::new(c.clone());
            let mut reference = one_by_one(c.clone());
            for a in [&mut folded, &mut reference] {
                let other = decode(LinkType::ETHERNET, &[0u8; 60], &DecodeOptions::default());
                a.push(&FrameMeta { number: 1, ts_ns: 1_000, len: 60, link_bps: None, point: 0 }, &other);
                feed_range(a, &frames, 0, live);
            }
            assert!(folded.folds.pending());
            let r = folded.report();
            assert_eq!(json(&r), json(&reference.report()));
            assert!(r.points.first().is_some_and(|p| p.marks.is_some()), "point 0's marks, made room for");
            assert_eq!(r.incast.first().map(|i| i.fan_in), Some(3.min(live as u32)).filter(|_| live >= 2));
        }
    }

    #[test]
    fn bins_under_a_microsecond_count_frame_by_frame() {
        let c = cfg(500);
        let frames = incast();
        let mut a = Analyzer::new(c.clone());
        feed(&mut a, &frames, 0);
        assert!(a.folds.clocks.is_empty() && !a.folds.pending());
        agree(&c, &frames, 30, None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Any frames, times going back now and then, several points, classes, marks,
        /// priorities, sampled frames and copies; a live report and an eviction on the way:
        /// folded, the reports are those of the frames counted one by one.
        #[test]
        fn folds_make_the_reports_of_frames_one_by_one(
            raw in proptest::collection::vec(
                (1u8..7, 99u8..102, 0u8..5, 0u8..3, 0u8..3, 0u8..4, -3i64..6, 0u8..10),
                1..160,
            ),
            live in 0usize..160,
            evict in proptest::option::of(1usize..12),
            bin in proptest::sample::select(vec![1_000u64, 10_000, 1_000_000]),
        ) {
            let mut ts = 1_000i64;
            let frames: Vec<Spec> = raw
                .iter()
                .map(|&(src, dst, kind, dscp, pcp, ce, step, extra)| {
                    ts += step * 1_500;
                    let kind = [Kind::Write, Kind::Ack, Kind::Cnp, Kind::ReadResponse, Kind::Copy][usize::from(kind)];
                    Spec {
                        src,
                        dst,
                        qp: u32::from(src % 3),
                        kind,
                        dscp: [26, 48, 0][usize::from(dscp)],
                        pcp: [None, Some(3), Some(5)][usize::from(pcp)],
                        ce: ce == 0,
                        ts,
                        point: if extra == 9 { 1 } else { 0 },
                        rate: if extra == 8 { 3 } else { 1 },
                    }
                })
                .collect();
            agree(&cfg(bin), &frames, live.min(frames.len()), evict);
        }
    }
}
