//! Who is at each end of the link a capture point taps: RoCE per (capture point, MAC),
//! sent and received, per priority, and the **station** of each point: the one MAC that
//! takes part in (almost) every RoCE frame seen there.
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
//! when exactly one MAC besides the pausing one takes part in at least
//! [`STATION_SHARE`] of the point's RoCE frames. A capture point that sees several links (a
//! mirror of a whole switch), or one conversation between two hosts (both MACs in every
//! frame), has no station: the rule falls back to frames sent to the pausing MAC, and the
//! report says the link peer could not be told (docs/verdicts.md "PFC and PAUSE").

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

/// One direction of a (point, MAC)'s RoCE: the packets on its first priority, which is
/// where a host's RoCE almost always goes; other priorities go to [`MacTraffic`]'s `more`.
#[derive(Clone, Copy, Debug, Default)]
struct Dir {
    /// Packets (saturating at 2^32: only "any" and rough shares are read from it).
    count: u32,
    prio: u8,
}

/// One (point, MAC).
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    to: Dir,
    from: Dir,
    /// Frames it took part in, either way.
    seen: u64,
}

/// Per capture point: RoCE frames with an Ethernet link and the three MACs that took part
/// in most of them (exact: counts only grow, so a MAC that passes the third replaces it).
#[derive(Clone, Copy, Debug, Default)]
struct PointMacs {
    frames: u64,
    top: [Option<([u8; 6], u64)>; 3],
}

impl PointMacs {
    fn bump(&mut self, mac: [u8; 6], seen: u64) {
        let top = &mut self.top;
        if let Some(t) = top.iter_mut().flatten().find(|t| t.0 == mac) {
            t.1 = seen;
        } else if top.get(2).copied().flatten().is_none_or(|t| seen > t.1) {
            if let Some(last) = top.get_mut(2) {
                *last = Some((mac, seen));
            }
        } else {
            return;
        }
        // Keep them by count, most first (three entries: a bubble pass or two).
        top.sort_by_key(|t| std::cmp::Reverse(t.map_or(0, |t| t.1)));
    }
}

/// RoCE per (capture point, MAC), sent and received, per priority, and each point's most
/// involved MACs. Updated for every RoCE frame, so kept cheap: one 64-bit key per (point,
/// MAC), a two-entry cache for runs of frames of one host pair, 32 bytes a MAC.
#[derive(Clone, Debug, Default)]
pub struct MacTraffic {
    /// Slots by key: ids into `slots` (4 bytes each).
    index: HashTable<u32>,
    slots: Vec<Slot>,
    /// Packets on a direction's other priorities, by (slot, sent, priority).
    more: FxHashMap<(u32, bool, u8), u64>,
    /// The last two keys looked up and their slots (a frame's source and destination).
    last: [Option<(u64, usize)>; 2],
    points: Vec<PointMacs>,
}

/// (point, MAC) as one integer: the MAC in the top 48 bits, the point below. (The point in
/// the low bits: FxHash takes a table's bucket from the middle bits of a multiply, which the
/// top 16 bits of a key never reach, so with the point on top every point's key for one MAC
/// fell in one bucket: 1,700 instructions a packet with 256 points.)
fn mac_key(point: u16, mac: [u8; 6]) -> u64 {
    let [a, b, c, d, e, f] = mac;
    u64::from_be_bytes([a, b, c, d, e, f, 0, 0]) | u64::from(point)
}

fn key_hash(key: u64) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key)
}

impl MacTraffic {
    /// Count a RoCE frame from `src` to `dst` on `prio` at `point`.
    pub fn add(&mut self, point: u16, src: [u8; 6], dst: [u8; 6], prio: u8) {
        let prio = prio & 7;
        let at = usize::from(point);
        if self.points.len() <= at {
            self.points.resize(at + 1, PointMacs::default());
        }
        if let Some(p) = self.points.get_mut(at) {
            p.frames += 1;
        }
        for (mac, sent) in [(src, true), (dst, false)] {
            let Some(i) = self.slot(mac_key(point, mac)) else { continue };
            let Some(s) = self.slots.get_mut(i) else { continue };
            s.seen += 1;
            let seen = s.seen;
            let d = if sent { &mut s.from } else { &mut s.to };
            if d.count == 0 {
                d.prio = prio;
            }
            if d.prio == prio {
                d.count = d.count.saturating_add(1);
            } else {
                *self.more.entry((i as u32, sent, prio)).or_default() += 1;
            }
            if let Some(p) = self.points.get_mut(at) {
                p.bump(mac, seen);
            }
        }
    }

    /// The slot of `key`, made when new (`None` past 2^32 MACs).
    fn slot(&mut self, key: u64) -> Option<usize> {
        if let Some(i) = self.last.iter().flatten().find(|(k, _)| *k == key).map(|(_, i)| *i) {
            return Some(i);
        }
        let i = match self.find(key) {
            Some(i) => i,
            None => {
                let id = u32::try_from(self.slots.len()).ok()?;
                self.slots.push(Slot { key, to: Dir::default(), from: Dir::default(), seen: 0 });
                let slots = &self.slots;
                self.index.insert_unique(key_hash(key), id, |&i| {
                    slots.get(i as usize).map_or(0, |s| key_hash(s.key))
                });
                id as usize
            }
        };
        self.last = [Some((key, i)), self.last[0]];
        Some(i)
    }

    fn find(&self, key: u64) -> Option<usize> {
        let slots = &self.slots;
        self.index
            .find(key_hash(key), |&i| slots.get(i as usize).is_some_and(|s| s.key == key))
            .map(|&i| i as usize)
    }

    fn per_priority(&self, point: u16, mac: [u8; 6], sent: bool) -> [u64; 8] {
        let mut c = [0; 8];
        let Some(i) = self.find(mac_key(point, mac)) else { return c };
        if let Some(s) = self.slots.get(i) {
            let d = if sent { s.from } else { s.to };
            if let Some(n) = c.get_mut(usize::from(d.prio)) {
                *n = u64::from(d.count);
            }
        }
        if !self.more.is_empty() {
            for (p, n) in c.iter_mut().enumerate() {
                if let Some(m) = self.more.get(&(i as u32, sent, p as u8)) {
                    *n += m;
                }
            }
        }
        c
    }

    /// RoCE packets to `mac` at `point`, per priority.
    pub fn to(&self, point: u16, mac: [u8; 6]) -> [u64; 8] {
        self.per_priority(point, mac, false)
    }

    /// RoCE packets from `mac` at `point`, per priority.
    pub fn from(&self, point: u16, mac: [u8; 6]) -> [u64; 8] {
        self.per_priority(point, mac, true)
    }

    /// Whether `mac` sent any RoCE at `point`.
    pub fn sends(&self, point: u16, mac: [u8; 6]) -> bool {
        self.find(mac_key(point, mac)).and_then(|i| self.slots.get(i)).is_some_and(|s| s.from.count > 0)
    }

    /// The station at the end of the link `point` taps, `pauser` aside: the one other MAC
    /// that took part in at least [`STATION_SHARE`] of the point's RoCE frames (and the
    /// point has seen [`STATION_MIN_FRAMES`]). `None` when no MAC does, or two do (one
    /// conversation: either host could be the one on this link).
    pub fn station(&self, point: u16, pauser: [u8; 6]) -> Option<[u8; 6]> {
        let p = self.points.get(usize::from(point))?;
        if p.frames < STATION_MIN_FRAMES {
            return None;
        }
        let floor = (p.frames as f64 * STATION_SHARE).ceil() as u64;
        let mut found = None;
        for (mac, seen) in p.top.iter().flatten() {
            if *mac == pauser || *seen < floor {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(*mac);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const C: [u8; 6] = [2, 0, 0, 0, 0, 3];
    const SW: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

    #[test]
    fn counts_per_point_mac_direction_and_priority() {
        let mut t = MacTraffic::default();
        for _ in 0..3 {
            t.add(0, B, A, 3);
        }
        t.add(0, A, B, 3);
        t.add(1, B, A, 0);
        t.add(0, B, A, 11); // priorities are 3 bits
        assert_eq!(t.to(0, A), [0, 0, 0, 4, 0, 0, 0, 0]);
        assert_eq!(t.from(0, B), [0, 0, 0, 4, 0, 0, 0, 0]);
        assert_eq!(t.to(0, B)[3], 1);
        assert_eq!(t.to(1, A)[0], 1);
        assert_eq!(t.to(2, A), [0; 8]);
        // A host's frames on a second and third priority, kept apart from its first.
        t.add(0, A, B, 5);
        t.add(0, A, B, 5);
        t.add(0, A, B, 0);
        assert_eq!(t.to(0, B), [1, 0, 0, 1, 0, 2, 0, 0]);
        assert_eq!(t.from(0, A), [1, 0, 0, 1, 0, 2, 0, 0]);
        assert!(t.sends(0, A) && t.sends(0, B) && !t.sends(0, SW) && !t.sends(3, A));
    }

    #[test]
    fn the_station_is_the_one_host_in_every_conversation() {
        let mut t = MacTraffic::default();
        // One conversation: A and B are both in every frame; either could be on this link.
        for _ in 0..10 {
            t.add(0, A, B, 3);
            t.add(0, B, A, 3);
        }
        assert_eq!(t.station(0, SW), None);
        // A second peer of A's: A is the host on this link.
        for _ in 0..10 {
            t.add(0, C, A, 3);
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
            t.add(0, A, SW, 3);
            t.add(0, SW, A, 3);
        }
        assert_eq!(t.station(0, SW), Some(A));
        assert_eq!(t.station(0, A), Some(SW));
        assert_eq!(t.station(0, C), None, "two MACs in every frame and neither pauses");
    }

    #[test]
    fn two_links_in_one_capture_have_no_station() {
        let mut t = MacTraffic::default();
        for _ in 0..10 {
            t.add(0, A, B, 3);
            t.add(0, C, SW, 3);
        }
        assert_eq!(t.station(0, [9; 6]), None);
        // Too few frames: none yet.
        let mut u = MacTraffic::default();
        u.add(0, A, B, 3);
        u.add(0, C, A, 3);
        assert_eq!(u.station(0, SW), None);
    }

    #[test]
    fn a_few_stray_frames_do_not_hide_the_station() {
        let mut t = MacTraffic::default();
        for i in 0..100 {
            t.add(0, A, if i % 2 == 0 { B } else { C }, 3);
        }
        for _ in 0..5 {
            t.add(0, B, C, 3); // flooded frames between two other hosts
        }
        assert_eq!(t.station(0, SW), Some(A));
    }
}
