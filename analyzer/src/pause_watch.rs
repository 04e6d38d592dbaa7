//! The pauses under way, followed without walking them per RoCE frame (issue 39; reference
//! perf-anatomy.md §4.1 "pause walk", §4.4 "Pause counters by difference").
//!
//! While its pause is under way, a timeline counts every RoCE frame at its capture point on
//! its priority (802.3x PAUSE: on any priority), and one by one the frames the pause asks to
//! stop: those sent to the pausing MAC, and, where that MAC sends no RoCE here, those its
//! link peer sends ([`crate::pfc`], [`crate::link`]). Walking every pause under way for every
//! frame cost about 500 instructions a frame with two or three pauses under way (issue 28
//! already left out the timelines whose pause had ended). Instead:
//!
//! - **The frames during a pause** are a difference of a counter the MAC table keeps anyway
//!   (RoCE frames per capture point and priority, [`MacTraffic::frames_on`]), taken when the
//!   timeline joins the watch (the pause frame that starts or extends its pause) and when it
//!   leaves it or is read (its next pause frame, the report).
//! - **The frames towards the pausing side** each count with their frame number and delay
//!   (the evidence, the latest delay), so they are still met one by one, but found cheaply:
//!   a frame's destination is tested against one bit of a 64-bit set of the pausing MACs,
//!   and only where a pausing MAC sends no RoCE (its link peer's frames are judged) is its
//!   source compared with the point's two station candidates. Only a frame that passes is
//!   matched against the pauses under way.
//! - **A frame earlier than a pause's start** (frames out of time order, or merged capture
//!   points whose clocks differ) is in the counter but not in the timeline (the walk skipped
//!   it): while such a frame comes, the pauses under way are walked and it is taken off.
//!
//! A timeline is watched exactly while the walk would have walked it: from the pause frame
//! that leaves it a pause under way until the first RoCE frame with MACs (at any capture
//! point) at or after the pause's end, or until an XON ends its pause. So every figure is
//! the walk's, frame for frame (the tests run a copy of the walk beside it on random
//! captures).

use crate::link::{mac_bits, MacTraffic};
use crate::pfc::{PauseKind, PfcConfig, Timeline, Towards};
use crate::TimelineKey;
use rustc_hash::FxHashMap;

/// The pause timelines, by key (the analyzer's).
type Timelines = FxHashMap<TimelineKey, Timeline>;

/// A timeline with a pause under way.
#[derive(Clone, Copy, Debug)]
struct Active {
    key: TimelineKey,
    /// The pausing MAC as a 48-bit integer.
    mac: u64,
    /// The pause's start and end (ns since the epoch), as its timeline has them.
    start: i64,
    end: i64,
    /// The frames counter ([`counted`]) when the timeline last took its count.
    base: u64,
    /// Frames the counter took since `base` that the timeline does not count: earlier than
    /// the pause's start.
    early: u64,
    /// The pausing MAC had sent no RoCE at its point when last looked at: the frames of its
    /// link peer may be the ones its pause stops.
    peer: bool,
}

/// A RoCE frame as the watch sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watched {
    /// Capture point.
    pub point: u16,
    /// Priority.
    pub prio: u8,
    /// Capture time.
    pub ts: i64,
    /// Frame number.
    pub number: u64,
    /// Ethernet source and destination.
    pub src: [u8; 6],
    pub dst: [u8; 6],
}

/// The timelines with a pause under way (module docs).
#[derive(Clone, Debug)]
pub(crate) struct PauseWatch {
    active: Vec<Active>,
    /// The earliest end among them (`i64::MAX`: none): a frame at or after it ends a watch.
    next_end: i64,
    /// The latest start among them (`i64::MIN`: none): a frame before it goes back in time.
    last_start: i64,
    /// [`mac_bit`] of every pausing MAC among them.
    dst_bits: u64,
    /// How many of them may judge their link peer's frames ([`Active::peer`]).
    peers: usize,
}

impl Default for PauseWatch {
    fn default() -> Self {
        PauseWatch { active: Vec::new(), next_end: i64::MAX, last_start: i64::MIN, dst_bits: 0, peers: 0 }
    }
}

/// One of 64 bits for a 48-bit MAC: the top bits of a multiply, so MACs that differ in
/// their last byte (a host's, numbered in turn) fall apart.
#[inline]
fn mac_bit(mac: u64) -> u64 {
    1 << (mac.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// The counter timeline `key` takes its frames during a pause from: the RoCE frames at its
/// point on its priority, or on all eight for 802.3x PAUSE.
fn counted(macs: &MacTraffic, key: TimelineKey) -> u64 {
    let (point, _, kind, prio) = key;
    match kind {
        PauseKind::Pfc => macs.frames_on(point, prio),
        PauseKind::Pause => (0..8).map(|p| macs.frames_on(point, p)).sum(),
    }
}

/// Whether timeline `key` concerns a frame at `point` on `prio`.
#[inline]
fn concerns(key: TimelineKey, point: u16, prio: u8) -> bool {
    key.0 == point && (key.2 == PauseKind::Pause || key.3 == prio & 7)
}

impl PauseWatch {
    /// How many timelines are watched.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.active.len()
    }

    /// No pause under way.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Before a RoCE frame at `ts` is counted: the timelines whose pause has ended by then
    /// take their count and leave.
    #[inline]
    pub(crate) fn before_frame(&mut self, ts: i64, timelines: &mut Timelines, macs: &MacTraffic) {
        if ts >= self.next_end {
            self.end_by(ts, timelines, macs);
        }
    }

    #[cold]
    fn end_by(&mut self, ts: i64, timelines: &mut Timelines, macs: &MacTraffic) {
        let mut i = 0;
        while let Some(a) = self.active.get(i) {
            if ts >= a.end {
                let a = self.active.swap_remove(i);
                if let Some(tl) = timelines.get_mut(&a.key) {
                    tl.add_during(counted(macs, a.key).saturating_sub(a.base).saturating_sub(a.early));
                }
            } else {
                i += 1;
            }
        }
        self.sum_up();
    }

    /// A RoCE frame `f`, already counted in `macs` ([`MacTraffic::add_link`]).
    #[inline]
    pub(crate) fn on_frame(
        &mut self,
        f: &Watched,
        timelines: &mut Timelines,
        macs: &MacTraffic,
        cfg: &PfcConfig,
    ) {
        if self.active.is_empty() {
            return;
        }
        if f.ts < self.last_start {
            self.early(f);
        }
        let dst = mac_bits(f.dst);
        if self.dst_bits & mac_bit(dst) != 0 {
            self.towards_pauser(f, dst, timelines, cfg);
        }
        if self.peers > 0 && macs.is_candidate(f.point, mac_bits(f.src)) {
            self.sent_by_station(f, dst, timelines, macs, cfg);
        }
    }

    /// `f` came before the start of some pauses under way: those it concerns do not count it.
    #[cold]
    fn early(&mut self, f: &Watched) {
        for a in &mut self.active {
            if f.ts < a.start && concerns(a.key, f.point, f.prio) {
                a.early += 1;
            }
        }
    }

    /// `f` may be sent to a pausing MAC.
    #[cold]
    fn towards_pauser(&self, f: &Watched, dst: u64, timelines: &mut Timelines, cfg: &PfcConfig) {
        for a in &self.active {
            if a.mac == dst && concerns(a.key, f.point, f.prio) {
                if let Some(tl) = timelines.get_mut(&a.key) {
                    tl.on_towards(f.ts, f.number, Towards::Mac, cfg);
                }
            }
        }
    }

    /// `f` was sent by a station candidate of its point: the link peer of the pausing MACs
    /// there that send no RoCE, if it is their station.
    #[cold]
    fn sent_by_station(
        &mut self,
        f: &Watched,
        dst: u64,
        timelines: &mut Timelines,
        macs: &MacTraffic,
        cfg: &PfcConfig,
    ) {
        let mut changed = false;
        for a in &mut self.active {
            if !a.peer || a.mac == dst || !concerns(a.key, f.point, f.prio) {
                continue;
            }
            let mac = a.key.1;
            if macs.sends_with(f.point, mac, f.src) {
                // The pausing MAC sends RoCE here (the set only grows): only frames to it.
                a.peer = false;
                changed = true;
                continue;
            }
            if macs.station(f.point, mac) == Some(f.src) {
                if let Some(tl) = timelines.get_mut(&a.key) {
                    tl.peer = Some(f.src);
                    tl.on_towards(f.ts, f.number, Towards::Peer, cfg);
                }
            }
        }
        if changed {
            self.sum_up();
        }
    }

    /// Before a pause frame of timeline `key` changes it: its frames so far go into the
    /// pause they were counted in.
    pub(crate) fn settle(&mut self, key: TimelineKey, timelines: &mut Timelines, macs: &MacTraffic) {
        let Some(a) = self.active.iter_mut().find(|a| a.key == key) else { return };
        let now = counted(macs, key);
        if let Some(tl) = timelines.get_mut(&key) {
            tl.add_during(now.saturating_sub(a.base).saturating_sub(a.early));
        }
        a.base = now;
        a.early = 0;
    }

    /// After a pause frame of timeline `key` ([`PauseWatch::settle`] before it): watched
    /// while a pause is under way, from now on.
    pub(crate) fn join(&mut self, key: TimelineKey, tl: &Timeline, macs: &MacTraffic) {
        let at = self.active.iter().position(|a| a.key == key);
        match (tl.pause_start().zip(tl.pause_end()), at) {
            (Some((start, end)), Some(i)) => {
                if let Some(a) = self.active.get_mut(i) {
                    (a.start, a.end) = (start, end);
                }
            }
            (Some((start, end)), None) => self.active.push(Active {
                key,
                mac: mac_bits(key.1),
                start,
                end,
                base: counted(macs, key),
                early: 0,
                peer: !macs.sends(key.0, key.1),
            }),
            (None, Some(i)) => {
                self.active.swap_remove(i);
            }
            (None, None) => return,
        }
        self.sum_up();
    }

    /// The frames timeline `key` has yet to take (the report reads it before the next
    /// pause frame).
    pub(crate) fn pending(&self, key: TimelineKey, macs: &MacTraffic) -> u64 {
        self.active
            .iter()
            .find(|a| a.key == key)
            .map_or(0, |a| counted(macs, key).saturating_sub(a.base).saturating_sub(a.early))
    }

    /// The summary the per-frame tests read.
    fn sum_up(&mut self) {
        self.next_end = self.active.iter().map(|a| a.end).min().unwrap_or(i64::MAX);
        self.last_start = self.active.iter().map(|a| a.start).max().unwrap_or(i64::MIN);
        self.dst_bits = self.active.iter().fold(0, |b, a| b | mac_bit(a.mac));
        self.peers = self.active.iter().filter(|a| a.peer).count();
    }
}

#[cfg(test)]
mod tests {
    //! The watch against a copy of the per-frame walk it replaced, on random captures made
    //! to meet every case: pausing MACs that send, receive or take no part in RoCE; a
    //! station that holds, flickers at its share or is named by turnaround; PFC on one or
    //! several priorities, 802.3x PAUSE, XONs; two capture points; frames back in time; and
    //! the first shard of a parallel analysis (frames of other shards' flows).

    use crate::link::{faster_responder, Exchange, MacTraffic};
    use crate::pfc::{PauseKind, PfcConfig, SeenBefore, Timeline, Towards};
    use crate::{Analyzer, Config, FrameMeta, TimelineKey};
    use rocescope_decoder::build::{pause_frame, pfc_frame, ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::AethRepr;
    use rocescope_decoder::mac_control::{Pause, Pfc};
    use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions};
    use rustc_hash::FxHashMap;

    /// The per-frame walk as the analyzer ran it before the watch (pauses.rs at 43a779f),
    /// on a MAC table of its own that counts every frame at once ([`MacTraffic::add`]).
    struct Walk {
        macs: MacTraffic,
        timelines: FxHashMap<TimelineKey, Timeline>,
        paused: Vec<TimelineKey>,
        cfg: PfcConfig,
        link_bps: u64,
    }

    impl Walk {
        #[allow(clippy::too_many_arguments)]
        fn roce(
            &mut self,
            point: u16,
            ts: i64,
            number: u64,
            src: [u8; 6],
            dst: [u8; 6],
            prio: u8,
            x: Exchange,
        ) {
            self.macs.add(point, src, dst, prio, x);
            if self.timelines.is_empty() {
                return;
            }
            let mut i = 0;
            while let Some(&key) = self.paused.get(i) {
                let (pt, mac, kind, pr) = key;
                let Some(tl) = self.timelines.get_mut(&key) else {
                    self.paused.swap_remove(i);
                    continue;
                };
                if tl.pause_end().is_none_or(|end| ts >= end) {
                    self.paused.swap_remove(i);
                    continue;
                }
                i += 1;
                if pt != point || (kind == PauseKind::Pfc && pr != prio) {
                    continue;
                }
                tl.pauser_sends |= src == mac || self.macs.sends(point, mac);
                let towards = if dst == mac {
                    Towards::Mac
                } else if !tl.pauser_sends && self.macs.station(point, mac) == Some(src) {
                    tl.peer = Some(src);
                    Towards::Peer
                } else {
                    Towards::No
                };
                tl.on_roce(ts, number, towards, &self.cfg);
            }
        }

        /// A MAC control frame from `src`: `(kind, priority, quanta)` for each priority it
        /// names.
        fn pause(&mut self, point: u16, ts: i64, number: u64, src: [u8; 6], what: &[(PauseKind, u8, u16)]) {
            if let Some(hosts) = self.macs.conversation(point, ts) {
                let station = faster_responder(hosts.map(|h| h.1)).and_then(|i| hosts.get(i)).map(|h| h.0);
                self.macs.set_turnaround(point, station, ts);
            }
            for &(kind, prio, quanta) in what {
                let sends = self.macs.sends(point, src);
                let key = (point, src, kind, prio);
                let link_bps = self.link_bps;
                let tl = self.timelines.entry(key).or_insert_with(|| {
                    let mut t = Timeline::new(link_bps, number, 0);
                    t.pauser_sends = sends;
                    t
                });
                tl.on_frame(ts, quanta, number, &self.cfg, SeenBefore::default());
                if tl.pause_end().is_some() && !self.paused.contains(&key) {
                    self.paused.push(key);
                }
            }
        }
    }

    /// xorshift64*: the captures are the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
    }

    fn host_mac(i: usize) -> [u8; 6] {
        [2, 0, 0, 0, 0, 1 + i as u8]
    }

    /// A switch port's MAC: it pauses, and takes part in no RoCE.
    const SWITCH: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

    /// A frame of a test capture.
    enum Event {
        /// A RoCE frame between hosts (or any MACs) `from` and `to`.
        Roce {
            from: [u8; 6],
            to: [u8; 6],
            prio: u8,
            ack_req: bool,
            ack: bool,
            psn: u32,
        },
        /// A MAC control frame from `mac`: PFC with its (priority, quanta), or a PAUSE.
        Pfc {
            mac: [u8; 6],
            prios: Vec<(u8, u16)>,
        },
        Pause {
            mac: [u8; 6],
            quanta: u16,
        },
    }

    /// The last byte of a host MAC is its IPv4 host number.
    fn roce_frame(
        from: [u8; 6],
        to: [u8; 6],
        prio: u8,
        ack: bool,
        ack_req: bool,
        psn: u32,
        number: u64,
    ) -> Vec<u8> {
        let ip = IpRepr::V4 {
            src: [10, 0, from[4], from[5]].into(),
            dst: [10, 0, to[4], to[5]].into(),
            dscp: if prio == 5 { 40 } else { 26 },
            ecn: Ecn::Ect0,
            ttl: 64,
            id: number as u16,
        };
        let (opcode, ext) = if ack {
            (Opcode::RC_ACKNOWLEDGE, ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() })
        } else {
            (Opcode::RC_SEND_ONLY, ExtRepr::default())
        };
        let bth = BthRepr { opcode, dest_qp: 0x100 + u32::from(to[5]), psn, ack_req, ..Default::default() };
        let ib = IbRepr { bth, ext, payload: vec![0; if ack { 0 } else { 64 }], icrc: IcrcMode::Correct };
        RoceV2Frame::new(from, to, ip, ib).build(OpcodeOptions::default())
    }

    /// An analyzer (the first shard of `shards` when more than one) and the walk, fed alike.
    struct Both {
        a: Analyzer,
        walk: Walk,
        n: u64,
        last_ts: i64,
    }

    impl Both {
        fn new(shards: u32) -> Both {
            let cfg = Config::default();
            let mut a = Analyzer::new(cfg.clone());
            if shards > 1 {
                assert!(a.set_shard(0, shards));
            }
            let walk = Walk {
                macs: MacTraffic::default(),
                timelines: FxHashMap::default(),
                paused: Vec::new(),
                cfg: cfg.pfc,
                link_bps: cfg.link_speed_bps,
            };
            Both { a, walk, n: 0, last_ts: 0 }
        }

        fn push(&mut self, point: u16, ts: i64, e: &Event) {
            self.n += 1;
            self.last_ts = self.last_ts.max(ts);
            let n = self.n;
            let data = match e {
                Event::Roce { from, to, prio, ack_req, ack, psn } => {
                    let x = Exchange { ts, psn: *psn, ack_req: *ack_req, ack: *ack };
                    self.walk.roce(point, ts, n, *from, *to, *prio, x);
                    roce_frame(*from, *to, *prio, *ack, *ack_req, *psn, n)
                }
                Event::Pfc { mac, prios } => {
                    let mut p = Pfc { enable_vector: 0, quanta: [0; 8], bad_dst: false };
                    for &(prio, q) in prios {
                        p.enable_vector |= 1 << prio;
                        p.quanta[usize::from(prio)] = q;
                    }
                    // The analyzer takes the priorities in order.
                    let mut what: Vec<_> = prios.iter().map(|&(prio, q)| (PauseKind::Pfc, prio, q)).collect();
                    what.sort_by_key(|w| w.1);
                    self.walk.pause(point, ts, n, *mac, &what);
                    pfc_frame(*mac, None, &[], &p)
                }
                Event::Pause { mac, quanta } => {
                    self.walk.pause(point, ts, n, *mac, &[(PauseKind::Pause, 0, *quanta)]);
                    pause_frame(*mac, None, &Pause { quanta: *quanta, bad_dst: false })
                }
            };
            let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
            self.a
                .push(&FrameMeta { number: n, ts_ns: ts, len: data.len() as u32, link_bps: None, point }, &p);
        }

        /// Every figure of every timeline as the report finishes them, and the MAC table's
        /// answers for `macs` at `points`, must agree; the sums of frames during pauses,
        /// towards the pausing side, beyond the allowance and from the link peer.
        fn check(&self, what: &str, points: u16, macs: &[[u8; 6]]) -> [u64; 4] {
            let (a, walk) = (&self.a, &self.walk);
            let end = self.last_ts + 1_000_000;
            let mut sums = [0; 4];
            assert_eq!(a.timelines.len(), walk.timelines.len(), "{what}");
            for (key, w) in &walk.timelines {
                let got = a.finished_timeline(*key, &a.timelines[key], end);
                let want = w.finish(end, &walk.cfg);
                let figures = |t: &Timeline| {
                    let iv: Vec<_> = t
                        .intervals
                        .iter()
                        .map(|i| {
                            (i.start_ns, i.end_ns, i.xon, i.frames, i.roce_during, i.roce_towards, i.ignored)
                        })
                        .collect();
                    (
                        iv,
                        t.ignored,
                        t.ignored_from_peer,
                        t.ignored_max_delay_ns,
                        t.ignored_evidence.clone(),
                        t.peer,
                    )
                };
                assert_eq!(figures(&got), figures(&want), "{what}, timeline {key:?}");
                assert_eq!(
                    got.pauser_sends || a.macs.sends(key.0, key.1),
                    want.pauser_sends || walk.macs.sends(key.0, key.1),
                    "{what}"
                );
                sums[0] += want.intervals.iter().map(|i| i.roce_during).sum::<u64>();
                sums[1] += want.intervals.iter().map(|i| i.roce_towards).sum::<u64>();
                sums[2] += want.ignored;
                sums[3] += want.ignored_from_peer;
            }
            for point in 0..points {
                for &mac in macs {
                    assert_eq!(a.macs.to(point, mac), walk.macs.to(point, mac), "{what}");
                    assert_eq!(a.macs.sends(point, mac), walk.macs.sends(point, mac), "{what}");
                    assert_eq!(a.macs.station(point, mac), walk.macs.station(point, mac), "{what}");
                }
            }
            sums
        }
    }

    /// One random capture (`seed`) through the analyzer (`shards`: 0 a whole analysis, 2 the
    /// first shard of two) and the walk, checked ([`Both::check`]).
    fn run(seed: u64, shards: u32) -> [u64; 4] {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let hosts = 2 + rng.below(3) as usize;
        // 0: random pairs; 1: every frame to or from host 0 (a station), some strays;
        // 2: one conversation between hosts 0 and 1, answered at two speeds (turnaround).
        let mode = rng.below(3);
        let points = 1 + rng.below(2) as u16;
        let back_percent = [0, 0, 3, 20][rng.below(4) as usize];
        let pause_percent = 2 + rng.below(10);
        let stray_percent = rng.below(15);
        let mut both = Both::new(shards);
        let mut ts: i64 = 1_000_000_000;
        let mut psn = 0u32;
        // Mode 2: requests waiting for their ACK (requester, responder, PSN).
        let mut waiting: Vec<(usize, usize, u32)> = Vec::new();
        for _ in 0..400 {
            ts += 100 + rng.below(2_000) as i64;
            if rng.chance(back_percent) {
                ts -= rng.below(30_000) as i64;
            }
            let point = rng.below(u64::from(points)) as u16;
            let e = if rng.chance(pause_percent) {
                let mac = match rng.below(4) {
                    0 => SWITCH,
                    1 => [2, 0, 0, 0, 0, 0x80], // receives nothing, sends nothing
                    _ => host_mac(rng.below(hosts as u64) as usize),
                };
                let quanta = [0u16, 10, 500, 1_000, 5_000, 65_535][rng.below(6) as usize];
                if rng.chance(20) {
                    Event::Pause { mac, quanta }
                } else {
                    let mut prios = Vec::new();
                    for prio in [3u8, 5] {
                        if rng.chance(60) {
                            let q =
                                if rng.chance(70) { quanta } else { [0u16, 2_000][rng.below(2) as usize] };
                            prios.push((prio, q));
                        }
                    }
                    Event::Pfc { mac, prios }
                }
            } else {
                let (from, to, ack, ack_psn) = match mode {
                    // Host 0 answers at once (it is on the link), host 1 after a while.
                    2 if waiting.first().is_some_and(|w| w.1 == 0 || rng.chance(30)) => {
                        let (from, to, p) = waiting.remove(0);
                        (to, from, true, p)
                    }
                    2 => {
                        let from = rng.below(2) as usize;
                        (from, 1 - from, false, 0)
                    }
                    1 if !rng.chance(stray_percent) => {
                        let other = 1 + rng.below(hosts as u64 - 1) as usize;
                        if rng.chance(50) {
                            (0, other, false, 0)
                        } else {
                            (other, 0, false, 0)
                        }
                    }
                    _ => {
                        let from = rng.below(hosts as u64) as usize;
                        let to = (from + 1 + rng.below(hosts as u64 - 1) as usize) % hosts;
                        (from, to, false, 0)
                    }
                };
                if ack {
                    Event::Roce {
                        from: host_mac(from),
                        to: host_mac(to),
                        prio: 3,
                        ack_req: false,
                        ack: true,
                        psn: ack_psn,
                    }
                } else {
                    psn += 1;
                    let ack_req = mode == 2 || rng.chance(30);
                    if mode == 2 {
                        waiting.push((from, to, psn));
                    }
                    let prio = if rng.chance(75) { 3 } else { 5 };
                    Event::Roce { from: host_mac(from), to: host_mac(to), prio, ack_req, ack: false, psn }
                }
            };
            both.push(point, ts, &e);
        }
        let macs: Vec<_> = (0..hosts).map(host_mac).chain([SWITCH]).collect();
        both.check(&format!("seed {seed}, shards {shards}"), points, &macs)
    }

    #[test]
    fn the_watch_counts_what_the_walk_counted() {
        let mut sums = [0u64; 4];
        for seed in 0..240 {
            for shards in [0, 2] {
                for (s, n) in sums.iter_mut().zip(run(seed, shards)) {
                    *s += n;
                }
            }
        }
        // The captures met the cases: frames during pauses, towards the pausing side,
        // beyond the allowance, and from a link peer.
        let [during, towards, ignored, from_peer] = sums;
        assert!(during > 10_000 && towards > 1_000 && ignored > 500 && from_peer > 100, "{sums:?}");
    }

    /// A MAC whose bit in the sent set ([`MacTraffic::sends`]) is `mac`'s at point 0.
    fn same_sent_bit(mac: [u8; 6]) -> [u8; 6] {
        (1..u32::MAX)
            .map(|i| {
                let [a, b, c, d] = i.to_be_bytes();
                [6, 0, a, b, c, d]
            })
            .find(|&m| {
                let mut t = MacTraffic::default();
                t.add_dst(0, m, m, 0);
                t.sends(0, mac)
            })
            .unwrap_or(mac)
    }

    #[test]
    fn a_link_peer_whose_first_frame_marks_the_pausing_mac_as_sending() {
        // The station (host 1, in every frame) sends its first frame during a pause from
        // a MAC that shares its bit in the sent set: as the walk saw it, the pausing MAC then
        // sends RoCE, so that frame is not judged as the link peer's, nor are the next.
        let station = host_mac(1);
        let pauser = same_sent_bit(station);
        assert_ne!(pauser, station);
        for shards in [0, 2] {
            let mut both = Both::new(shards);
            let mut ts = 1_000_000_000;
            for k in 0..12u8 {
                ts += 1_000;
                let e = Event::Roce {
                    from: host_mac(2 + usize::from(k % 3)),
                    to: station,
                    prio: 3,
                    ack_req: false,
                    ack: false,
                    psn: u32::from(k),
                };
                both.push(0, ts, &e);
            }
            both.push(0, ts + 1_000, &Event::Pfc { mac: pauser, prios: vec![(3, 65_535)] });
            for k in 0..4u8 {
                let e = Event::Roce {
                    from: station,
                    to: host_mac(2 + usize::from(k % 3)),
                    prio: 3,
                    ack_req: false,
                    ack: false,
                    psn: 100 + u32::from(k),
                };
                both.push(0, ts + 20_000 + i64::from(k) * 1_000, &e);
            }
            let sums = both.check("shared sent bit", 1, &[station, pauser]);
            assert_eq!(sums, [4, 0, 0, 0], "shards {shards}");
        }
    }

    #[test]
    fn a_pause_counts_from_its_start_to_just_before_its_end() {
        // 5,000 quanta at 100 Gb/s: 25,600 ns from its pause frame at t.
        let t = 1_000_000_000;
        let (a, b) = (host_mac(0), host_mac(1));
        let frame = |psn| Event::Roce { from: a, to: b, prio: 3, ack_req: false, ack: false, psn };
        for shards in [0, 2] {
            let mut both = Both::new(shards);
            both.push(0, t - 1_000, &frame(1));
            both.push(0, t, &Event::Pfc { mac: b, prios: vec![(3, 5_000)] });
            both.push(0, t + 100, &frame(2)); // in flight
            both.push(0, t - 10, &frame(3)); // back in time: before the pause
            both.push(0, t + 25_599, &frame(4)); // beyond the allowance
            both.push(0, t + 25_600, &frame(5)); // the pause has ended
            both.push(0, t + 25_000, &frame(6)); // back in time, but the pause has left
            let sums = both.check("the pause's edges", 1, &[a, b]);
            assert_eq!(sums, [2, 2, 1, 0], "shards {shards}");
            let tl = &both.a.timelines[&(0, b, PauseKind::Pfc, 3)];
            assert_eq!(
                tl.ignored_evidence.iter().map(|e| (e.frame, e.delay_ns)).collect::<Vec<_>>(),
                [(5, 25_599)]
            );
        }
    }
}
