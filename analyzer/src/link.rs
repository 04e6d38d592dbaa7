//! Who is at each end of the link a capture point taps: RoCE received per (capture point,
//! MAC) and priority, which MACs sent RoCE, and the **station** of each point: the one MAC
//! that takes part in (almost) every RoCE frame seen there.
//!
//! PFC is hop by hop (IEEE 802.1Qbb; reference §1.8): a pause frame from a MAC stops its
//! *link peer* sending on the paused priority, whatever the destination of the peer's frames.
//! Where the pausing MAC itself sends or receives RoCE at the point (a host, or a switch's
//! routed port in an L3 fabric, whose MAC is the next hop of every frame), the frames sent
//! *to* it are the ones it stops. Where it sends none (a switch port in an L2 fabric: the
//! host's frames carry the remote host's MAC, not the switch's), the frames it stops are
//! those its link peer sends, and the link peer is found from the traffic: on a link
//! between a host and its switch, every RoCE frame is sent by or to that host, and each
//! other MAC appears only in its own conversations. [`MacTraffic::station`] names that MAC
//! when exactly one MAC besides the pausing one takes part in at least [`STATION_SHARE`] of
//! the point's RoCE frames. A capture point that sees several links (a mirror of a whole
//! switch) has no station, nor has one conversation between two hosts (both MACs in every
//! frame) unless their turnaround tells them apart (below): the rule falls back to frames
//! sent to the pausing MAC, and the report says the link peer could not be told
//! (docs/verdicts.md "PFC and PAUSE").
//!
//! **One conversation: the station by its turnaround.** Where both MACs are in every frame
//! (two hosts talking over one link), the share cannot tell them apart, but their answers
//! can: the host on the captured link answers a request in microseconds (its NIC's
//! turnaround), while the far host's answer comes back only after a round trip through the
//! fabric. While a point's two candidates are both in (almost) every frame, its requests
//! with AckReq and its ACKs (events, not every frame) pair up by PSN into each host's
//! AckReq-to-ACK latency as a responder (the last [`TURN_SAMPLES`] of each); at each pause
//! frame of such a point (a rare event) their medians are compared ([`TURNAROUND_RATIO`],
//! [`TURNAROUND_MARGIN_NS`]); the host that answers clearly faster is the station. Where
//! neither does, or one host never answered, the link peer stays unknown. The pairing is
//! capture-wide (every frame of the point, whatever shard keeps its flows), so a parallel
//! analysis names the same station.
//!
//! **Cost per frame** (every RoCE frame passes here): four compares for the station and a
//! count per priority ([`MacTraffic::add_link`]); the destination's count through the slot
//! its flow holds, checked by two compares ([`MacTraffic::add_bound`]: the table is probed
//! and the source's bit set only on a flow's first frame, or when its MACs or priority
//! change; a frame of another shard's flow probes it, [`MacTraffic::add_dst`]). The station
//! is followed without a count per MAC: the two MACs of a reference frame are the
//! candidates, each counting the frames it takes part in since; a MAC in 90% of the point's
//! frames is in 90% of any long enough run of them, so while neither candidate keeps that
//! share (checked from [`STATION_MIN_FRAMES`] × 2 frames on), the frame at hand becomes the
//! reference. Whether a MAC sent RoCE at a point is one bit of a fixed set ([`SENT_BITS`],
//! hashed): a MAC that never sent may read as one that did, which only makes its pauses
//! judged by the frames sent to it (rule 1), never a verdict of rule 2. (The bit is taken
//! from hash bits that depend only on the point and the MAC's last 9 bits: at one point at
//! most 512 of the 2^19 bits are used, so with a few hundred sending MACs almost every MAC
//! reads as one that sent.)

use hashbrown::HashTable;
use rustc_hash::FxHashMap;

/// The share of a capture point's RoCE frames a MAC must take part in to be the station
/// at the end of the tapped link: 90%, so that a few frames the switch floods or a second
/// host on a shared segment do not hide it, while a capture of two links (each host in
/// about half of the frames) has none.
pub const STATION_SHARE: f64 = 0.9;

/// Frames a capture point must have seen before it has a station: with fewer, the first
/// conversation's two hosts take part in every frame and cannot be told apart.
pub const STATION_MIN_FRAMES: u64 = 8;

/// How much faster the station's answers must be than the far host's, by their median
/// AckReq-to-ACK latency, for the turnaround to tell them apart: twice. The far host's
/// answers add a fabric round trip (two hops and more: a few µs) to a NIC turnaround of
/// about the same 1-2 µs as the station's.
pub const TURNAROUND_RATIO: u64 = 2;

/// And by at least this much (ns): 1 µs, past the timestamp resolution of a microsecond
/// capture.
pub const TURNAROUND_MARGIN_NS: u64 = 1_000;

/// How often a point's turnaround verdict is worked out again at its pause frames (ns):
/// 100 ms (each time walks the flows).
pub const TURNAROUND_EVERY_NS: i64 = 100_000_000;

/// Turnaround samples kept per host: the last 32.
pub const TURN_SAMPLES: usize = 32;

/// Requests with AckReq waiting for their ACK, per host: the last 16.
const TURN_PENDING: usize = 16;

/// What a RoCE frame tells the turnaround (module docs): its time, PSN, and whether it is a
/// request with AckReq or an ACK.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exchange {
    /// Capture time.
    pub ts: i64,
    /// BTH PSN.
    pub psn: u32,
    /// A request with the AckReq bit.
    pub ack_req: bool,
    /// An Acknowledge (ACK or NAK).
    pub ack: bool,
}

/// One conversation's exchanges: per candidate (as the requester) its requests waiting for
/// an ACK, and (as the responder) its latest AckReq-to-ACK latencies.
#[derive(Clone, Debug, Default)]
struct Turn {
    pending: [[(u32, i64); TURN_PENDING]; 2],
    next: [usize; 2],
    samples: [[i64; TURN_SAMPLES]; 2],
    count: [usize; 2],
}

impl Turn {
    /// Frame `x` sent by candidate `from` to the other.
    fn add(&mut self, from: usize, x: Exchange) {
        let to = 1 - from;
        if x.ack_req {
            let n = self.next.get(from).copied().unwrap_or(0);
            if let Some(slot) = self.pending.get_mut(from).and_then(|p| p.get_mut(n % TURN_PENDING)) {
                *slot = (x.psn, x.ts);
            }
            if let Some(n) = self.next.get_mut(from) {
                *n += 1;
            }
        } else if x.ack {
            // The ACK of the other's request with this PSN: `from` answered it.
            let Some(p) = self.pending.get_mut(to) else { return };
            let Some(slot) =
                p.iter_mut().filter(|(psn, ts)| *psn == x.psn && *ts != i64::MIN).max_by_key(|s| s.1)
            else {
                return;
            };
            let sample = x.ts.saturating_sub(slot.1);
            slot.1 = i64::MIN;
            let n = self.count.get(from).copied().unwrap_or(0);
            if let Some(s) = self.samples.get_mut(from).and_then(|s| s.get_mut(n % TURN_SAMPLES)) {
                *s = sample;
            }
            if let Some(c) = self.count.get_mut(from) {
                *c += 1;
            }
        }
    }

    /// Candidate `i`'s median turnaround as a responder (ns), if it answered.
    fn median(&self, i: usize) -> Option<u64> {
        let n = self.count.get(i).copied()?.min(TURN_SAMPLES);
        let mut v: Vec<i64> = self.samples.get(i)?.get(..n)?.to_vec();
        v.sort_unstable();
        v.get(n / 2).map(|&m| m.max(0) as u64)
    }
}

/// Bits of the set of (point, MAC)s that sent RoCE: 2^19 (64 KiB).
pub const SENT_BITS: usize = 1 << 19;

/// Bytes that set takes once the first RoCE frame arrives.
pub const SENT_BYTES: usize = SENT_BITS / 8;

/// Per (point, MAC): RoCE received on its first priority (where a host's RoCE almost always
/// goes; the others in [`MacTraffic`]'s `more`). 16 bytes, the count 48-bit (2.8 x 10^14
/// frames, 33 days of 100 Mpps to one MAC; past that the frames count in `more`, so the
/// count reads as a 64-bit one), where a 64-bit count made it 24: 0.8 MB at 100,000 MACs
/// (issue 39).
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    /// The count's low 32 bits and high 16.
    count: u32,
    count_hi: u16,
    prio: u8,
}

impl Slot {
    /// Frames counted.
    fn frames(&self) -> u64 {
        u64::from(self.count_hi) << 32 | u64::from(self.count)
    }

    /// One more frame: false when the 48 bits are full (the caller counts it elsewhere).
    #[inline]
    fn bump(&mut self) -> bool {
        match self.count.checked_add(1) {
            Some(c) => self.count = c,
            None if self.count_hi < u16::MAX => (self.count, self.count_hi) = (0, self.count_hi + 1),
            None => return false,
        }
        true
    }
}

/// A station candidate: a MAC (48-bit integer), the frames it took part in since it became
/// one, and the priorities it sent on.
#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    mac: u64,
    hits: u64,
    sent: u8,
}

/// Per capture point: the station candidates and the frames since they were chosen, and
/// (one conversation) their exchanges, the candidate the turnaround says is on the link,
/// and when that was worked out.
#[derive(Clone, Debug, Default)]
struct PointLink {
    /// RoCE frames (with Ethernet MACs) per priority, never reset: what the pauses under way
    /// count their frames from ([`MacTraffic::frames_on`]).
    by_prio: [u64; 8],
    frames: u64,
    cands: [Candidate; 2],
    turn: Option<Box<Turn>>,
    by_turnaround: Option<u64>,
    judged_at: Option<i64>,
}

impl PointLink {
    #[inline]
    fn add(&mut self, src: u64, dst: u64, prio: u8, x: Exchange) {
        if let Some(n) = self.by_prio.get_mut(usize::from(prio & 7)) {
            *n += 1;
        }
        self.frames += 1;
        let mut both = true;
        for c in &mut self.cands {
            if c.mac == src || c.mac == dst {
                c.hits += 1;
                if c.mac == src {
                    c.sent |= 1 << (prio & 7);
                }
            } else {
                both = false;
            }
        }
        // Neither candidate holds its share any more (checked in integers: hits ≥ 90% of
        // frames): this frame is the new reference.
        let frames = self.frames;
        let holds = |c: &Candidate| c.hits * 10 >= frames * 9;
        if frames == 1 || (frames >= 2 * STATION_MIN_FRAMES && !self.cands.iter().any(holds)) {
            self.frames = 1;
            self.cands = [
                Candidate { mac: src, hits: 1, sent: 1 << (prio & 7) },
                Candidate { mac: dst, hits: 1, sent: 0 },
            ];
            self.by_turnaround = None;
            self.turn = None;
            // One frame since: no exchange to pair yet.
            return;
        }
        // Only between the two candidates (`exchange`).
        if both && (x.ack_req || x.ack) {
            self.exchange(src, dst, x);
        }
    }

    /// A request with AckReq or an ACK between the two candidates while both hold their
    /// share (one conversation): paired up for the turnaround (module docs).
    fn exchange(&mut self, src: u64, dst: u64, x: Exchange) {
        let from = match self.cands {
            [a, b] if a.mac == src && b.mac == dst => 0,
            [a, b] if b.mac == src && a.mac == dst => 1,
            _ => return,
        };
        let frames = self.frames;
        if frames < STATION_MIN_FRAMES || !self.cands.iter().all(|c| c.hits * 10 >= frames * 9) {
            return;
        }
        self.turn.get_or_insert_with(Box::default).add(from, x);
    }
}

/// RoCE received per (capture point, MAC) and priority, which MACs sent RoCE, and each
/// point's station (module docs). Updated for every RoCE frame, so kept cheap: one 64-bit key
/// per (point, MAC), each flow's slot kept for its next frames ([`MacTraffic::add_bound`]),
/// and a one-entry cache for runs of packets to one host ([`MacTraffic::add_dst`]).
#[derive(Clone, Debug, Default)]
pub struct MacTraffic {
    /// Slots by key: ids into `slots` (4 bytes each).
    index: HashTable<u32>,
    slots: Vec<Slot>,
    /// Packets on the other priorities, by (slot, priority).
    more: FxHashMap<(u32, u8), u64>,
    /// The last key looked up and its slot.
    last: Option<(u64, usize)>,
    points: Vec<PointLink>,
    /// (point, MAC)s that sent RoCE, hashed ([`SENT_BITS`] bits, allocated at the first frame).
    sent: Vec<u64>,
    /// Per flow id: the MACs and priority of its last frame and the slot they count in
    /// ([`MacTraffic::add_bound`]).
    bound: Vec<Bound>,
}

/// A flow's MACs, point, priority and destination slot ([`MacTraffic::add_bound`]): a cache,
/// checked whole on every frame, so it needs no care when flows are renumbered. 20 bytes
/// (24 with the MACs as a `u64` and a `u32`: 0.8 MB more at 200,000 flows, issue 39).
#[derive(Clone, Copy, Debug)]
struct Bound {
    /// Source and destination MACs ([`pack`]).
    macs: [u32; 3],
    /// The destination's slot.
    slot: u32,
    point: u16,
    /// The priority, 0-7 (8: no binding yet).
    prio: u8,
}

/// No binding yet (what `MacTraffic::bind` fills the ids it skips with).
const UNBOUND: Bound = Bound { macs: [0; 3], slot: 0, point: 0, prio: 8 };

/// The 12 bytes of a source and destination MAC as three integers: compared in a few
/// instructions, not twelve.
#[inline]
fn pack(macs: &([u8; 6], [u8; 6])) -> [u32; 3] {
    let ([a, b, c, d, e, f], [g, h, i, j, k, l]) = *macs;
    [u32::from_ne_bytes([a, b, c, d]), u32::from_ne_bytes([e, f, g, h]), u32::from_ne_bytes([i, j, k, l])]
}

/// (point, MAC) as one integer: the MAC in the top 48 bits, the point below. (The point in
/// the low bits: FxHash takes a table's bucket from the middle bits of a multiply, which the
/// top 16 bits of a key never reach, so with the point on top every point's key for one MAC
/// fell in one bucket: 1,700 instructions a packet with 256 points.)
fn mac_key(point: u16, mac: [u8; 6]) -> u64 {
    mac_bits(mac) << 16 | u64::from(point)
}

/// A MAC as a 48-bit integer.
#[inline]
pub(crate) fn mac_bits(mac: [u8; 6]) -> u64 {
    let [a, b, c, d, e, f] = mac;
    u64::from(u32::from_be_bytes([a, b, c, d])) << 16 | u64::from(u16::from_be_bytes([e, f]))
}

fn key_hash(key: u64) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key)
}

/// The bit of (point, MAC) key `key` in the sent set: word, bit.
fn sent_bit(key: u64) -> (usize, u64) {
    let h = (key_hash(key) >> 32) as usize & (SENT_BITS - 1);
    (h / 64, 1 << (h % 64))
}

impl MacTraffic {
    /// Count a RoCE frame from `src` to `dst` on `prio` at `point`; `x` says what it tells
    /// the turnaround (module docs): [`MacTraffic::add_link`] and [`MacTraffic::add_dst`].
    pub fn add(&mut self, point: u16, src: [u8; 6], dst: [u8; 6], prio: u8, x: Exchange) {
        self.add_link(point, src, dst, prio, x);
        self.add_dst(point, src, dst, prio);
    }

    /// The part of [`MacTraffic::add`] that must see every frame in order: the point's
    /// station and its frames per priority.
    #[inline]
    pub fn add_link(&mut self, point: u16, src: [u8; 6], dst: [u8; 6], prio: u8, x: Exchange) {
        let at = usize::from(point);
        if self.points.len() <= at {
            self.points.resize(at + 1, PointLink::default());
        }
        if let Some(p) = self.points.get_mut(at) {
            p.add(mac_bits(src), mac_bits(dst), prio & 7, x);
        }
    }

    /// The rest of [`MacTraffic::add`], by table probe: `src` sent RoCE, and one more frame
    /// to `dst` on `prio` at `point`.
    pub fn add_dst(&mut self, point: u16, src: [u8; 6], dst: [u8; 6], prio: u8) {
        let prio = prio & 7;
        self.set_sent(point, src);
        let key = mac_key(point, dst);
        let i = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let Some(i) = self.slot_of(key, prio) else { return };
                self.last = Some((key, i));
                i
            }
        };
        self.count(i, prio);
    }

    /// [`MacTraffic::add_dst`] for a frame of flow `id` (an index the caller keeps stable
    /// for one flow, such as its place in the flow store): the flow's MACs and priority
    /// are checked against those of its last frame, and while they hold, its destination's
    /// slot is counted without a probe, and the source is already in the sent set.
    #[inline]
    pub fn add_bound(&mut self, id: usize, point: u16, macs: &([u8; 6], [u8; 6]), prio: u8) {
        let prio = prio & 7;
        match self.bound.get(id) {
            Some(b) if b.macs == pack(macs) && b.point == point && b.prio == prio => {
                self.count(b.slot as usize, prio)
            }
            _ => self.bind(id, point, macs, prio),
        }
    }

    /// Flow `id`'s first frame, or one whose MACs or priority changed: counted by probe, and
    /// its slot kept for the next frames.
    #[cold]
    fn bind(&mut self, id: usize, point: u16, macs: &([u8; 6], [u8; 6]), prio: u8) {
        let (src, dst) = *macs;
        self.set_sent(point, src);
        let Some(i) = self.slot_of(mac_key(point, dst), prio) else { return };
        self.count(i, prio);
        let Ok(slot) = u32::try_from(i) else { return };
        if self.bound.len() <= id {
            self.bound.resize(id + 1, UNBOUND);
        }
        if let Some(b) = self.bound.get_mut(id) {
            *b = Bound { macs: pack(macs), point, prio, slot };
        }
    }

    /// Drop the flows' bindings ([`MacTraffic::add_bound`]) at the end of the input: a cache
    /// the report never reads (4-5 MB at 200,000 flows, freed before the report's own
    /// memory is taken, issue 39). A frame after this binds again, and counts the same.
    pub(crate) fn drop_bindings(&mut self) {
        self.bound = Vec::new();
        self.last = None;
    }

    /// Mark (point, `src`) as a MAC that sent RoCE.
    fn set_sent(&mut self, point: u16, src: [u8; 6]) {
        if self.sent.is_empty() {
            self.sent = vec![0; SENT_BITS / 64];
        }
        let (w, b) = sent_bit(mac_key(point, src));
        if let Some(word) = self.sent.get_mut(w) {
            *word |= b;
        }
    }

    /// The slot of (point, MAC) `key`, made on its first frame (`prio` then its first
    /// priority); `None` past 2^32 slots.
    fn slot_of(&mut self, key: u64, prio: u8) -> Option<usize> {
        if let Some(i) = self.find(key) {
            return Some(i);
        }
        let id = u32::try_from(self.slots.len()).ok()?;
        self.slots.push(Slot { key, count: 0, count_hi: 0, prio });
        let slots = &self.slots;
        self.index
            .insert_unique(key_hash(key), id, |&i| slots.get(i as usize).map_or(0, |s| key_hash(s.key)));
        Some(id as usize)
    }

    /// One more frame to slot `i` on `prio`.
    #[inline]
    fn count(&mut self, i: usize, prio: u8) {
        let Some(s) = self.slots.get_mut(i) else { return };
        // The slot's own priority, while its 48 bits hold; the others (and past that) apart.
        if s.prio != prio || !s.bump() {
            *self.more.entry((i as u32, prio)).or_default() += 1;
        }
    }

    /// RoCE frames with MACs at `point` on `prio` so far (a counter that only grows).
    #[inline]
    pub fn frames_on(&self, point: u16, prio: u8) -> u64 {
        self.points
            .get(usize::from(point))
            .and_then(|p| p.by_prio.get(usize::from(prio & 7)))
            .copied()
            .unwrap_or(0)
    }

    /// Whether `mac` (a 48-bit integer) is one of the two MACs the station of `point` is
    /// chosen from: a station is always one ([`MacTraffic::station`]).
    #[inline]
    pub(crate) fn is_candidate(&self, point: u16, mac: u64) -> bool {
        self.points
            .get(usize::from(point))
            .is_some_and(|p| p.cands.iter().any(|c| c.mac == mac && c.hits > 0))
    }

    fn find(&self, key: u64) -> Option<usize> {
        let slots = &self.slots;
        self.index
            .find(key_hash(key), |&i| slots.get(i as usize).is_some_and(|s| s.key == key))
            .map(|&i| i as usize)
    }

    /// RoCE packets to `mac` at `point`, per priority.
    pub fn to(&self, point: u16, mac: [u8; 6]) -> [u64; 8] {
        let mut c = [0; 8];
        let Some(i) = self.find(mac_key(point, mac)) else { return c };
        if let Some(s) = self.slots.get(i) {
            if let Some(n) = c.get_mut(usize::from(s.prio)) {
                *n = s.frames();
            }
        }
        if !self.more.is_empty() {
            for (p, n) in c.iter_mut().enumerate() {
                if let Some(m) = self.more.get(&(i as u32, p as u8)) {
                    *n += m;
                }
            }
        }
        c
    }

    /// Whether `mac` sent RoCE at `point` (a hashed set: a MAC that did not may read as one
    /// that did, rarely; module docs).
    pub fn sends(&self, point: u16, mac: [u8; 6]) -> bool {
        let (w, b) = sent_bit(mac_key(point, mac));
        self.sent.get(w).is_some_and(|word| word & b != 0)
    }

    /// [`MacTraffic::sends`] as it reads once a frame from `src` at `point` is counted (the
    /// sent set may be given the frame's source later in the frame's analysis).
    pub(crate) fn sends_with(&self, point: u16, mac: [u8; 6], src: [u8; 6]) -> bool {
        self.sends(point, mac) || sent_bit(mac_key(point, mac)) == sent_bit(mac_key(point, src))
    }

    /// The priorities the station `mac` of `point` sent RoCE on since it became a candidate
    /// (bit n: priority n; 0 for a MAC that is not a candidate).
    pub fn station_sent(&self, point: u16, mac: [u8; 6]) -> u8 {
        let m = mac_bits(mac);
        self.points
            .get(usize::from(point))
            .map_or(0, |p| p.cands.iter().filter(|c| c.mac == m && c.hits > 0).fold(0, |a, c| a | c.sent))
    }

    /// The station at the end of the link `point` taps, `pauser` aside: the one other MAC
    /// that took part in at least [`STATION_SHARE`] of the point's RoCE frames (module docs),
    /// once it has seen [`STATION_MIN_FRAMES`]. Where two do (one conversation: either host
    /// could be the one on this link), the one its turnaround named
    /// (`MacTraffic::set_turnaround`), if any; `None` when no MAC does, or two do and the
    /// turnaround could not tell them apart.
    pub fn station(&self, point: u16, pauser: [u8; 6]) -> Option<[u8; 6]> {
        let p = self.points.get(usize::from(point))?;
        let pauser = mac_bits(pauser);
        let mut found = None;
        for c in Self::holding(p) {
            if c.mac == pauser {
                continue;
            }
            if found.is_some() {
                return p.by_turnaround.filter(|&m| m != pauser).map(mac_bytes);
            }
            found = Some(c.mac);
        }
        found.map(mac_bytes)
    }

    /// The candidates of point `p` that hold [`STATION_SHARE`] of its frames (none before
    /// [`STATION_MIN_FRAMES`]).
    fn holding(p: &PointLink) -> impl Iterator<Item = &Candidate> {
        let floor = STATION_SHARE * p.frames as f64;
        let enough = p.frames >= STATION_MIN_FRAMES;
        p.cands.iter().filter(move |c| enough && c.hits > 0 && (c.hits as f64) >= floor)
    }

    /// The two hosts of a point where both MACs are in (almost) every frame (one
    /// conversation), with each one's median turnaround as a responder: what tells them
    /// apart. `None` elsewhere, or when it was worked out less than [`TURNAROUND_EVERY_NS`]
    /// before `now`.
    pub(crate) fn conversation(&self, point: u16, now: i64) -> Option<[([u8; 6], Option<u64>); 2]> {
        let p = self.points.get(usize::from(point))?;
        if p.judged_at.is_some_and(|t| now.saturating_sub(t) < TURNAROUND_EVERY_NS) {
            return None;
        }
        if Self::holding(p).count() < 2 {
            return None;
        }
        let [a, b] = p.cands;
        let median = |i| p.turn.as_ref().and_then(|t| t.median(i));
        Some([(mac_bytes(a.mac), median(0)), (mac_bytes(b.mac), median(1))])
    }

    /// Record at `now` which of the point's two hosts its turnaround says is on the link
    /// (`None`: it could not tell).
    pub(crate) fn set_turnaround(&mut self, point: u16, station: Option<[u8; 6]>, now: i64) {
        if let Some(p) = self.points.get_mut(usize::from(point)) {
            p.by_turnaround = station.map(mac_bits);
            p.judged_at = Some(now);
        }
    }
}

/// A 48-bit integer as a MAC.
fn mac_bytes(m: u64) -> [u8; 6] {
    let b = m.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// Which of two hosts answers clearly faster, from their median AckReq-to-ACK latencies as
/// responders (ns): 0 or 1, or `None` when neither answers [`TURNAROUND_RATIO`] times and
/// [`TURNAROUND_MARGIN_NS`] faster than the other, or one never answered.
pub fn faster_responder(medians: [Option<u64>; 2]) -> Option<usize> {
    let [Some(a), Some(b)] = medians else { return None };
    let (fast, slow, i) = if a <= b { (a, b, 0) } else { (b, a, 1) };
    (fast.saturating_mul(TURNAROUND_RATIO) <= slow && slow - fast >= TURNAROUND_MARGIN_NS).then_some(i)
}

impl crate::Analyzer {
    /// At a pause frame of `point` (at `now`): where two hosts share every frame, name the
    /// one on the link by its turnaround (module docs).
    pub(crate) fn judge_turnaround(&mut self, point: u16, now: i64) {
        let Some(hosts) = self.macs.conversation(point, now) else { return };
        let station = faster_responder(hosts.map(|h| h.1)).and_then(|i| hosts.get(i)).map(|h| h.0);
        self.macs.set_turnaround(point, station, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: Exchange = Exchange { ts: 0, psn: 0, ack_req: false, ack: false };

    const A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const C: [u8; 6] = [2, 0, 0, 0, 0, 3];
    const SW: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

    #[test]
    fn a_slot_is_16_bytes_and_counts_past_32_bits() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        let mut s = Slot { key: 1, count: u32::MAX - 1, count_hi: 0, prio: 3 };
        assert!(s.bump() && s.bump());
        assert_eq!(s.frames(), 1 << 32);
        s.count_hi = u16::MAX;
        s.count = u32::MAX;
        assert!(!s.bump(), "full");
        assert_eq!(s.frames(), (1 << 48) - 1);
        // Past 48 bits the table counts on in `more`: the MAC's count reads whole.
        let mut t = MacTraffic::default();
        t.add_dst(0, A, B, 3);
        let i = t.find(mac_key(0, B)).unwrap_or(usize::MAX);
        if let Some(slot) = t.slots.get_mut(i) {
            (slot.count, slot.count_hi) = (u32::MAX, u16::MAX);
        }
        t.add_dst(0, A, B, 3);
        t.add_dst(0, A, B, 3);
        assert_eq!(t.to(0, B)[3], (1 << 48) + 1);
    }

    #[test]
    fn a_flows_binding_is_20_bytes() {
        // 200,000 flows' bindings: 4 MB (issue 39).
        assert_eq!(std::mem::size_of::<Bound>(), 20);
        // The MACs are told apart in every byte.
        for i in 0..12 {
            let mut m = ([0u8; 6], [0u8; 6]);
            if i < 6 {
                m.0[i] = 1;
            } else {
                m.1[i - 6] = 1;
            }
            assert_ne!(pack(&m), pack(&([0; 6], [0; 6])), "byte {i}");
        }
    }

    #[test]
    fn counts_per_point_mac_direction_and_priority() {
        let mut t = MacTraffic::default();
        for _ in 0..3 {
            t.add(0, B, A, 3, X);
        }
        t.add(0, A, B, 3, X);
        t.add(1, B, A, 0, X);
        t.add(0, B, A, 11, X); // priorities are 3 bits
        assert_eq!(t.to(0, A), [0, 0, 0, 4, 0, 0, 0, 0]);
        assert_eq!(t.to(0, B)[3], 1);
        assert_eq!(t.to(1, A)[0], 1);
        assert_eq!(t.to(2, A), [0; 8]);
        // A host's frames on a second and third priority, kept apart from its first.
        t.add(0, A, B, 5, X);
        t.add(0, A, B, 5, X);
        t.add(0, A, B, 0, X);
        assert_eq!(t.to(0, B), [1, 0, 0, 1, 0, 2, 0, 0]);
        assert!(t.sends(0, A) && t.sends(0, B) && !t.sends(0, SW) && !t.sends(3, A));
    }

    #[test]
    fn a_flows_slot_counts_as_the_probe_does() {
        // The same frames counted by probe (`add`) and through flows' slots (`add_bound`),
        // with a flow whose MACs change (a new next hop), one whose priority changes, and a
        // flow id that comes to stand for another flow (flows renumbered).
        let (mut probe, mut slots) = (MacTraffic::default(), MacTraffic::default());
        // (flow id, point, source, destination, priority)
        type Frame = (usize, u16, [u8; 6], [u8; 6], u8);
        let frames: [Frame; 10] = [
            (0, 0, A, B, 3),
            (0, 0, A, B, 3),
            (1, 0, B, A, 3),
            (0, 0, A, C, 3), // flow 0's next hop changed
            (0, 0, A, C, 3),
            (1, 0, B, A, 5), // flow 1 moved to priority 5
            (1, 1, B, A, 5), // id 1 is now a flow at point 1
            (2, 0, SW, A, 3),
            (2, 0, SW, A, 3),
            (1, 1, B, A, 5),
        ];
        for (id, point, src, dst, prio) in frames {
            probe.add(point, src, dst, prio, X);
            slots.add_link(point, src, dst, prio, X);
            slots.add_bound(id, point, &(src, dst), prio);
        }
        for point in 0..2 {
            for mac in [A, B, C, SW] {
                assert_eq!(slots.to(point, mac), probe.to(point, mac), "point {point}, {mac:?}");
                assert_eq!(slots.sends(point, mac), probe.sends(point, mac));
                assert_eq!(slots.station(point, mac), probe.station(point, mac));
            }
            assert_eq!(slots.frames_on(point, 3), probe.frames_on(point, 3));
        }
        assert_eq!(slots.to(0, A), [0, 0, 0, 3, 0, 1, 0, 0]);
        assert_eq!(slots.to(1, A), [0, 0, 0, 0, 0, 2, 0, 0]);
        assert_eq!((slots.frames_on(0, 3), slots.frames_on(0, 5), slots.frames_on(1, 5)), (7, 1, 2));
    }

    #[test]
    fn the_station_is_the_one_host_in_every_conversation() {
        let mut t = MacTraffic::default();
        // One conversation: A and B are both in every frame; either could be on this link.
        for _ in 0..10 {
            t.add(0, A, B, 3, X);
            t.add(0, B, A, 3, X);
        }
        assert_eq!(t.station(0, SW), None);
        // A second peer of A's: A is the host on this link.
        for _ in 0..10 {
            t.add(0, C, A, 3, X);
        }
        assert_eq!(t.station(0, SW), Some(A));
        // The pausing MAC is never its own link's station.
        assert_eq!(t.station(0, A), None);
        // Another point is apart.
        assert_eq!(t.station(1, SW), None);
    }

    #[test]
    fn an_l3_link_has_the_router_mac_in_every_frame_too() {
        // Host A behind router MAC SW: both take part in every frame. Pauses from SW judge
        // A's frames; from A, SW's (today's rule covers both by destination as well).
        let mut t = MacTraffic::default();
        for _ in 0..10 {
            t.add(0, A, SW, 3, X);
            t.add(0, SW, A, 3, X);
        }
        assert_eq!(t.station(0, SW), Some(A));
        assert_eq!(t.station(0, A), Some(SW));
        assert_eq!(t.station(0, C), None, "two MACs in every frame and neither pauses");
    }

    #[test]
    fn two_links_in_one_capture_have_no_station() {
        let mut t = MacTraffic::default();
        for _ in 0..10 {
            t.add(0, A, B, 3, X);
            t.add(0, C, SW, 3, X);
        }
        assert_eq!(t.station(0, [9; 6]), None);
        // Too few frames: none yet.
        let mut u = MacTraffic::default();
        u.add(0, A, B, 3, X);
        u.add(0, C, A, 3, X);
        assert_eq!(u.station(0, SW), None);
    }

    #[test]
    fn a_few_stray_frames_do_not_hide_the_station() {
        let mut t = MacTraffic::default();
        for i in 0..100 {
            t.add(0, A, if i % 2 == 0 { B } else { C }, 3, X);
        }
        for _ in 0..5 {
            t.add(0, B, C, 3, X); // flooded frames between two other hosts
        }
        assert_eq!(t.station(0, SW), Some(A));
    }

    #[test]
    fn one_conversation_takes_the_station_its_turnaround_names() {
        let mut t = MacTraffic::default();
        let (mut ts, mut psn) = (0, 100);
        for _ in 0..10 {
            // A's request is answered by B 8 µs later; B's by A 1.5 µs later.
            t.add(0, A, B, 3, Exchange { ts, psn, ack_req: true, ack: false });
            t.add(0, B, A, 3, Exchange { ts: ts + 8_000, psn, ack_req: false, ack: true });
            t.add(0, B, A, 3, Exchange { ts: ts + 10_000, psn: psn + 1000, ack_req: true, ack: false });
            t.add(0, A, B, 3, Exchange { ts: ts + 11_500, psn: psn + 1000, ack_req: false, ack: true });
            ts += 20_000;
            psn += 1;
        }
        assert_eq!(t.station(0, SW), None, "two MACs in every frame");
        let hosts = t.conversation(0, 0).expect("one conversation");
        assert_eq!(hosts, [(A, Some(1_500)), (B, Some(8_000))]);
        assert_eq!(faster_responder(hosts.map(|h| h.1)), Some(0));
        t.set_turnaround(0, Some(A), 0);
        assert_eq!(t.station(0, SW), Some(A));
        assert_eq!(t.station(0, A), Some(B), "the pausing MAC is never its own link's station");
        assert_eq!(t.conversation(0, TURNAROUND_EVERY_NS - 1), None, "worked out not long ago");
        assert!(t.conversation(0, TURNAROUND_EVERY_NS).is_some());
        // A third host: the share says it again, whatever the turnaround said.
        for _ in 0..10 {
            t.add(0, C, A, 3, X);
        }
        assert_eq!(t.station(0, SW), Some(A));
        assert_eq!(t.conversation(0, i64::MAX), None);
    }

    #[test]
    fn the_faster_responder_must_be_clearly_faster() {
        // The station answers in 1.5 µs; the far host after an 8 µs round trip.
        assert_eq!(faster_responder([Some(9_500), Some(1_500)]), Some(1));
        assert_eq!(faster_responder([Some(1_500), Some(9_500)]), Some(0));
        // Not twice as fast, or not 1 µs apart, or one never answered: unknown.
        assert_eq!(faster_responder([Some(1_500), Some(2_900)]), None);
        assert_eq!(faster_responder([Some(300), Some(900)]), None);
        assert_eq!(faster_responder([Some(1_500), None]), None);
        assert_eq!(faster_responder([None, None]), None);
    }
}
