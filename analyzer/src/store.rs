//! Flow storage in fixed chunks: a flow never moves once stored, and growing the store never
//! copies more than one chunk or leaves half of a doubled `Vec` empty. With a `Vec<Flow>` a
//! million flows spent up to a million flows' worth of unused capacity (and a copy of all of
//! them at each doubling); here only the last chunk has room to spare.
//!
//! The store also indexes its flows: by key, and by host pair (point, source, destination).
//! The indexes hold flow ids only (4 bytes), and find a key by comparing the stored flow's:
//! a map from keys to ids held each 40-byte key a second time, and a map from pairs to
//! `Vec`s of ids one small allocation per pair, about 150 bytes a flow in all at 100k QPs
//! (issue 13). Now it is about 14 bytes.
//!
//! A parallel analysis' merged store (`FlowStore::from_shards`) keeps each shard's flows
//! where they are and numbers them through a table (4 bytes a flow): moving them into new
//! chunks held two copies at once, in two threads' malloc arenas (20 MB more at 100k QPs).

use crate::flow::{Flow, FlowKey};
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::net::IpAddr;

/// No next flow in a pair's list.
const NONE: u32 = u32::MAX;

/// A key's hash (FxHash over [`FlowKey`]'s packed words).
fn key_hash(k: &FlowKey) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(k)
}

/// A host pair's hash: its key with no QP.
fn pair_hash(point: u16, src: IpAddr, dst: IpAddr) -> u64 {
    key_hash(&FlowKey { src, dst, dest_qp: 0, point })
}

fn pair_of(k: &FlowKey) -> (u16, IpAddr, IpAddr) {
    (k.point, k.src, k.dst)
}

/// Flows per chunk.
const CHUNK: usize = 1024;

/// Flows of one host pair past which [`FlowStore::unpaired_in_pair`] keeps the pair's
/// unpaired flows in a list of their own: a response of a pair with thousands of QPs then
/// looks at the few flows still waiting for a partner, not at all of them (issue 40: 40,000
/// QPs of one host pair took seconds). Smaller pairs are walked whole, and cost no memory.
const PAIR_LIST_FROM: usize = 16;

/// The analysis' flows, indexed by flow id (the order they were first seen).
#[derive(Debug, Default)]
pub struct FlowStore {
    chunks: Vec<Vec<Flow>>,
    len: usize,
    /// Flow id to position (chunk × `CHUNK` + slot) after a merge of shards, whose chunks
    /// may be partly filled; empty while ids are positions.
    order: Vec<u32>,
    /// Flow ids by key. A flow's key never changes once stored.
    by_key: HashTable<u32>,
    /// The last flow id of each host pair (point, source, destination).
    by_pair: HashTable<u32>,
    /// Per flow, the next flow of its host pair; the last's is the first (a ring, so the
    /// table holds one id a pair where the first and the last took 9 bytes a bucket: 1 MB
    /// at 200,000 pairs, issue 39).
    next_in_pair: Vec<u32>,
    /// The flows without a partner of each host pair of more than [`PAIR_LIST_FROM`] flows
    /// that pairing has asked about, in id order: kept up to date as flows are stored, and
    /// cleared of paired ones when read.
    unpaired: crate::addr_hash::AddrMap<(u16, IpAddr, IpAddr), Vec<u32>>,
    /// Flows [`FlowStore::unpaired_in_pair`] has looked at: what the scale tests count.
    pair_visits: u64,
    /// What the report asks of a large host pair's flows ([`FlowStore::pair_summary`]),
    /// worked out once for every large pair; emptied when a flow is stored.
    summaries: std::sync::OnceLock<crate::addr_hash::AddrMap<(u16, IpAddr, IpAddr), PairSummary>>,
    /// Per flow id, its sequence number's low 32 bits, in a shard's store
    /// ([`FlowStore::push_numbered`]); empty otherwise.
    seqs: Vec<u32>,
    /// The high 32 bits of the sequence numbers: (first flow id, high bits) where they
    /// change (a shard's only grow). 4 bytes a flow where a `u64` took 8 (issue 39).
    seq_high: Vec<(u32, u32)>,
}

/// What the report asks of all the flows of one host pair (one direction, one point).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairSummary {
    /// Some flow of the pair carried responses.
    pub responses: bool,
    /// The largest request frame acknowledged on any of them
    /// ([`crate::psn::PsnTracker::acked_len_max`]).
    pub acked_len_max: u32,
}

impl PairSummary {
    fn add(&mut self, f: &Flow) {
        self.responses |= f.responses() > 0;
        self.acked_len_max = self.acked_len_max.max(f.psn.acked_len_max);
    }
}

/// The flow at position `pos` (chunk × `CHUNK` + slot).
fn at_pos(chunks: &[Vec<Flow>], pos: usize) -> Option<&Flow> {
    chunks.get(pos / CHUNK).and_then(|c| c.get(pos % CHUNK))
}

/// The position of flow `id`.
fn locate(order: &[u32], id: usize) -> Option<usize> {
    if order.is_empty() {
        Some(id)
    } else {
        order.get(id).map(|&p| p as usize)
    }
}

/// The flow with id `id`.
fn at<'a>(chunks: &'a [Vec<Flow>], order: &[u32], id: u32) -> Option<&'a Flow> {
    locate(order, id as usize).and_then(|p| at_pos(chunks, p))
}

impl FlowStore {
    /// Number of flows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Flow `id`.
    pub fn get(&self, id: usize) -> Option<&Flow> {
        locate(&self.order, id).and_then(|p| at_pos(&self.chunks, p))
    }

    /// Flow `id`, to change.
    pub fn get_mut(&mut self, id: usize) -> Option<&mut Flow> {
        let p = locate(&self.order, id)?;
        self.chunks.get_mut(p / CHUNK).and_then(|c| c.get_mut(p % CHUNK))
    }

    /// The id of the flow with key `key`.
    pub fn find(&self, key: &FlowKey) -> Option<usize> {
        let (chunks, order) = (&self.chunks, &self.order);
        self.by_key
            .find(key_hash(key), |&id| at(chunks, order, id).is_some_and(|f| f.key == *key))
            .map(|&id| id as usize)
    }

    /// The ids of the flows from `src` to `dst` at `point`, in id order.
    pub fn pair(&self, point: u16, src: IpAddr, dst: IpAddr) -> PairFlows<'_> {
        let (chunks, order) = (&self.chunks, &self.order);
        let want = (point, src, dst);
        let last = self
            .by_pair
            .find(pair_hash(point, src, dst), |&h| {
                at(chunks, order, h).is_some_and(|f| pair_of(&f.key) == want)
            })
            .copied();
        let first = last.and_then(|l| self.next_in_pair.get(l as usize)).copied();
        PairFlows { next: &self.next_in_pair, at: first.unwrap_or(NONE), last: last.unwrap_or(NONE) }
    }

    /// The flows from `src` to `dst` at `point` that have no partner, in id order: the
    /// candidates of pairing (transport module). Linear in the pair's unpaired flows once
    /// the pair is large (see [`PAIR_LIST_FROM`]).
    pub(crate) fn unpaired_in_pair(&mut self, point: u16, src: IpAddr, dst: IpAddr) -> Vec<usize> {
        let (chunks, order) = (&self.chunks, &self.order);
        let unpaired = |id: u32| at(chunks, order, id).is_some_and(|f| f.partner().is_none());
        if let Some(list) = self.unpaired.get_mut(&(point, src, dst)) {
            self.pair_visits += list.len() as u64;
            list.retain(|&id| unpaired(id));
            return list.iter().map(|&id| id as usize).collect();
        }
        let all: Vec<usize> = self.pair(point, src, dst).collect();
        self.pair_visits += all.len() as u64;
        let (chunks, order) = (&self.chunks, &self.order);
        let free: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&id| at(chunks, order, id as u32).is_some_and(|f| f.partner().is_none()))
            .collect();
        if all.len() > PAIR_LIST_FROM {
            let list = free.iter().filter_map(|&id| u32::try_from(id).ok()).collect();
            self.unpaired.insert((point, src, dst), list);
        }
        free
    }

    /// What the flows from `src` to `dst` at `point` add up to: walked for a small pair, and
    /// looked up for a large one (every large pair's worked out in one pass over the flows
    /// the first time one is asked for: the report asks per flow, and a pair of 40,000 QPs
    /// walked per flow took seconds, issue 40).
    pub fn pair_summary(&self, point: u16, src: IpAddr, dst: IpAddr) -> PairSummary {
        let mut sum = PairSummary::default();
        let mut walked = 0;
        for id in self.pair(point, src, dst) {
            walked += 1;
            if walked > PAIR_LIST_FROM {
                break;
            }
            if let Some(f) = self.get(id) {
                sum.add(f);
            }
        }
        if walked <= PAIR_LIST_FROM {
            return sum;
        }
        let all = self.summaries.get_or_init(|| {
            let mut count: crate::addr_hash::AddrMap<(u16, IpAddr, IpAddr), usize> = Default::default();
            for f in self.iter() {
                *count.entry(pair_of(&f.key)).or_default() += 1;
            }
            let mut out: crate::addr_hash::AddrMap<(u16, IpAddr, IpAddr), PairSummary> = Default::default();
            for f in self.iter() {
                let k = pair_of(&f.key);
                if count.get(&k).is_some_and(|&n| n > PAIR_LIST_FROM) {
                    out.entry(k).or_default().add(f);
                }
            }
            out
        });
        all.get(&(point, src, dst)).copied().unwrap_or_default()
    }

    /// Flows pairing has looked at so far, to find a response's request flow (the scale
    /// tests' count).
    pub fn pair_visits(&self) -> u64 {
        self.pair_visits
    }

    /// [`FlowStore::push`] for a shard of a parallel analysis: `seq`, the analyzer's packet
    /// count when it made the flow, orders the shards' flows at the merge as one analysis
    /// would have made them ([`FlowStore::seq`]). Kept beside the flows, and only by shards:
    /// 4 bytes a flow (and the rare high halves) that one thread does not hold (issue 39).
    pub(crate) fn push_numbered(&mut self, f: Flow, seq: u64) {
        if self.seqs.len() == self.len {
            let high = (seq >> 32) as u32;
            if self.seq_high.last().map_or(0, |&(_, h)| h) != high {
                self.seq_high.push((self.seqs.len() as u32, high));
            }
            self.seqs.push(seq as u32);
        }
        self.push(f);
    }

    /// The sequence number flow `id` was stored with ([`FlowStore::push_numbered`]).
    pub(crate) fn seq(&self, id: usize) -> Option<u64> {
        let low = *self.seqs.get(id)?;
        let at = self.seq_high.partition_point(|&(first, _)| first as usize <= id);
        let high = at.checked_sub(1).and_then(|i| self.seq_high.get(i)).map_or(0, |&(_, h)| h);
        Some(u64::from(high) << 32 | u64::from(low))
    }

    /// Store a flow; its id is the previous [`FlowStore::len`]. Its key is new to the store
    /// (the analyzer makes a flow for a key only when [`FlowStore::find`] found none).
    pub(crate) fn push(&mut self, f: Flow) {
        let last = self.chunks.len().saturating_sub(1);
        let pos = match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => {
                c.push(f);
                last * CHUNK + c.len() - 1
            }
            // The first chunk grows by doubling up to its full size (a small analysis holds a
            // small chunk); the next ones are allocated whole, never copied.
            Some(_) => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(f);
                self.chunks.push(c);
                (self.chunks.len() - 1) * CHUNK
            }
            None => {
                self.chunks.push(vec![f]);
                0
            }
        };
        let id = self.len;
        self.len += 1;
        if !self.order.is_empty() {
            self.order.push(u32::try_from(pos).unwrap_or(NONE));
        }
        self.index(id);
    }

    /// Enter flow `id` (the last stored) in the indexes. Past 4 G flows (far more than
    /// memory holds), a flow is stored but not indexed.
    fn index(&mut self, id: usize) {
        let Ok(id) = u32::try_from(id) else { return };
        if id == NONE {
            return;
        }
        let (chunks, order) = (&self.chunks, &self.order);
        let Some(key) = at(chunks, order, id).map(|f| f.key) else { return };
        if let Some(list) = self.unpaired.get_mut(&pair_of(&key)) {
            list.push(id);
        }
        if self.summaries.get().is_some() {
            self.summaries = std::sync::OnceLock::new();
        }
        let rehash = |i: &u32| at(chunks, order, *i).map_or(0, |f| key_hash(&f.key));
        self.by_key.insert_unique(key_hash(&key), id, rehash);
        let want = pair_of(&key);
        let pair_rehash =
            |h: &u32| at(chunks, order, *h).map_or(0, |f| pair_hash(f.key.point, f.key.src, f.key.dst));
        let entry = self.by_pair.entry(
            pair_hash(key.point, key.src, key.dst),
            |&h| at(chunks, order, h).is_some_and(|f| pair_of(&f.key) == want),
            pair_rehash,
        );
        match entry {
            Entry::Occupied(mut e) => {
                // In the ring after the last, before the first.
                let last = *e.get();
                let first = self.next_in_pair.get(last as usize).copied().unwrap_or(id);
                self.next_in_pair.push(first);
                if let Some(n) = self.next_in_pair.get_mut(last as usize) {
                    *n = id;
                }
                *e.get_mut() = id;
            }
            Entry::Vacant(e) => {
                self.next_in_pair.push(id);
                e.insert(id);
            }
        }
    }

    /// One store of the shards' flows, without moving them: flow id `i` of the result is
    /// the next flow, in id order, of store `from[i]`. Entries of `from` past a store's
    /// flows are skipped, and flows `from` does not reach follow, store by store, so none is
    /// lost (the parallel merge gives neither case). A store that is itself merged is first
    /// laid out in id order.
    pub(crate) fn from_shards(stores: Vec<FlowStore>, from: &[u8]) -> FlowStore {
        let mut out = FlowStore::default();
        let mut first_chunk = Vec::with_capacity(stores.len());
        let mut lens = Vec::with_capacity(stores.len());
        // The merged indexes reuse the largest shard's tables, emptied: they are nearly big
        // enough, and new ones would be taken from this thread's malloc arena while the
        // shards' freed tables stay in theirs (5 MB more at 100k QPs, issue 13).
        let mut stores = stores;
        if let Some(big) = stores.iter_mut().max_by_key(|st| st.by_key.capacity()) {
            out.by_key = std::mem::take(&mut big.by_key);
            out.by_pair = std::mem::take(&mut big.by_pair);
            out.next_in_pair = std::mem::take(&mut big.next_in_pair);
            out.by_key.clear();
            out.by_pair.clear();
            out.next_in_pair.clear();
        }
        for st in stores {
            let st = if st.order.is_empty() { st } else { st.into_iter().collect() };
            first_chunk.push(out.chunks.len());
            lens.push(st.len);
            out.chunks.extend(st.chunks);
        }
        let mut next = vec![0usize; lens.len()];
        out.order.reserve_exact(from.len());
        let mut take = |out: &mut FlowStore, s: usize| {
            let (Some(n), Some(&len), Some(&c0)) = (next.get_mut(s), lens.get(s), first_chunk.get(s)) else {
                return false;
            };
            if *n >= len {
                return false;
            }
            let pos = (c0 + *n / CHUNK) * CHUNK + *n % CHUNK;
            *n += 1;
            out.order.push(u32::try_from(pos).unwrap_or(NONE));
            out.len += 1;
            true
        };
        for &s in from {
            take(&mut out, usize::from(s));
        }
        for s in 0..lens.len() {
            while take(&mut out, s) {}
        }
        out.next_in_pair.reserve_exact(out.len);
        for id in 0..out.len {
            out.index(id);
        }
        out
    }

    /// The flows in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Flow> + Clone {
        (0..self.len).filter_map(move |id| self.get(id))
    }

    /// The flows, to change, in storage order: id order but in a merged store
    /// (`FlowStore::from_shards`).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Flow> {
        self.chunks.iter_mut().flatten()
    }
}

/// The flows of one host pair ([`FlowStore::pair`]), by id.
#[derive(Clone, Debug)]
pub struct PairFlows<'a> {
    next: &'a [u32],
    at: u32,
    /// The pair's last flow: the walk ends after it.
    last: u32,
}

impl Iterator for PairFlows<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.at == NONE {
            return None;
        }
        let id = self.at;
        self.at = if id == self.last { NONE } else { self.next.get(id as usize).copied().unwrap_or(NONE) };
        Some(id as usize)
    }
}

impl IntoIterator for FlowStore {
    type Item = Flow;
    type IntoIter = Box<dyn Iterator<Item = Flow> + Send>;
    /// The flows in id order.
    fn into_iter(self) -> Self::IntoIter {
        if self.order.is_empty() {
            return Box::new(self.chunks.into_iter().flatten());
        }
        // A merged store (ids are not positions): taken out by position.
        let mut slots: Vec<Vec<Option<Flow>>> =
            self.chunks.into_iter().map(|c| c.into_iter().map(Some).collect()).collect();
        Box::new(self.order.into_iter().filter_map(move |p| {
            let p = p as usize;
            slots.get_mut(p / CHUNK).and_then(|c| c.get_mut(p % CHUNK)).and_then(Option::take)
        }))
    }
}

impl FromIterator<Flow> for FlowStore {
    fn from_iter<I: IntoIterator<Item = Flow>>(iter: I) -> Self {
        let mut s = FlowStore::default();
        for f in iter {
            s.push(f);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn flow(src: u8, dst: u8, qp: u32, seq: u64) -> Flow {
        let ip = |x| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        // The flow's first frame tags it: the tests follow flows by it.
        Flow::new(FlowKey { src: ip(src), dst: ip(dst), dest_qp: qp, point: 0 }, seq, 0, 1_000_000)
    }

    #[test]
    fn finds_flows_by_key_and_lists_host_pairs_in_id_order() {
        let mut s = FlowStore::default();
        // Three chunks' worth, over a few host pairs.
        for i in 0..(2 * CHUNK + 5) as u32 {
            s.push(flow((i % 3) as u8, 9, i, u64::from(i)));
        }
        for i in [0usize, 1, CHUNK, 2 * CHUNK + 4] {
            let key = s.get(i).map(|f| f.key).unwrap();
            assert_eq!(s.find(&key), Some(i));
        }
        assert_eq!(s.find(&flow(1, 2, 3, 0).key), None);
        let ip = |x| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        let pair: Vec<usize> = s.pair(0, ip(1), ip(9)).collect();
        assert_eq!(pair.len(), (2 * CHUNK + 5) / 3);
        assert!(pair.windows(2).all(|w| w[0] < w[1]) && pair.iter().all(|i| i % 3 == 1));
        assert_eq!(s.pair(0, ip(9), ip(1)).count(), 0);
        // A pair of one flow: its ring is itself.
        s.push(flow(7, 8, 1, 0));
        assert_eq!(s.pair(0, ip(7), ip(8)).collect::<Vec<_>>(), [2 * CHUNK + 5]);
        assert_eq!(s.pair(0, ip(1), ip(9)).count(), (2 * CHUNK + 5) / 3, "the other rings unchanged");
    }

    #[test]
    fn a_large_pairs_unpaired_flows_are_listed_without_walking_the_paired_ones() {
        let ip = |x| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        let mut s = FlowStore::default();
        let n = 1000u32;
        for i in 0..n {
            s.push(flow(1, 2, i, u64::from(i)));
        }
        // Asked once: the pair is walked whole, and its list kept.
        assert_eq!(s.unpaired_in_pair(0, ip(1), ip(2)).len(), n as usize);
        assert_eq!(s.pair_visits(), u64::from(n));
        // All but the last ten paired: one more look costs the list, then the ten.
        for id in 0..(n - 10) as usize {
            s.get_mut(id).unwrap().set_partner(Some(id + 5000));
        }
        assert_eq!(s.unpaired_in_pair(0, ip(1), ip(2)), ((n - 10) as usize..n as usize).collect::<Vec<_>>());
        assert_eq!(s.unpaired_in_pair(0, ip(1), ip(2)).len(), 10);
        assert_eq!(s.pair_visits(), u64::from(2 * n + 10));
        // A flow stored later is on the list; a small pair is walked and kept no list.
        s.push(flow(1, 2, 9999, 9999));
        assert_eq!(s.unpaired_in_pair(0, ip(1), ip(2)).last(), Some(&(n as usize)));
        s.push(flow(3, 4, 1, 1));
        assert_eq!(s.unpaired_in_pair(0, ip(3), ip(4)), vec![n as usize + 1]);
        assert_eq!(s.unpaired.len(), 1);
    }

    #[test]
    fn a_pairs_summary_is_the_same_walked_or_looked_up() {
        let ip = |x| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        for n in [3u32, PAIR_LIST_FROM as u32 + 1, 500] {
            let mut s = FlowStore::default();
            for i in 0..n {
                s.push(flow(1, 2, i, u64::from(i)));
                s.push(flow(2, 1, i, u64::from(i)));
            }
            assert_eq!(s.pair_summary(0, ip(1), ip(2)), PairSummary::default(), "{n} flows");
            // A later flow empties what was worked out.
            let mut last = flow(1, 2, n, 10_000);
            last.add_count(crate::flow::count::RESPONSES, 1);
            last.psn.acked_len_max = 1100;
            s.push(last);
            let want = PairSummary { responses: true, acked_len_max: 1100 };
            assert_eq!(s.pair_summary(0, ip(1), ip(2)), want, "{n} flows");
            assert_eq!(s.pair_summary(0, ip(2), ip(1)), PairSummary::default(), "{n} flows");
        }
    }

    #[test]
    fn a_merged_store_numbers_the_shards_flows_without_moving_them() {
        // Shard 0 holds the even sequence numbers, shard 1 the odd, each over more than a chunk.
        let n = CHUNK as u64 + 7;
        let shards: Vec<FlowStore> =
            (0..2u64).map(|s| (0..n).map(|i| flow(s as u8, 9, i as u32, 2 * i + s)).collect()).collect();
        let from: Vec<u8> = (0..2 * n).map(|i| (i % 2) as u8).collect();
        let mut m = FlowStore::from_shards(shards, &from);
        assert_eq!(m.len(), 2 * n as usize);
        let seqs: Vec<u64> = m.iter().map(|f| f.first_frame).collect();
        assert_eq!(seqs, (0..2 * n).collect::<Vec<_>>(), "id order is the merged order");
        for id in [0usize, 1, 2 * CHUNK + 1, 2 * n as usize - 1] {
            let key = m.get(id).unwrap().key;
            assert_eq!(m.find(&key), Some(id));
        }
        let ip = |x| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        assert!(m.pair(0, ip(1), ip(9)).eq((0..n as usize).map(|i| 2 * i + 1)));
        // Stored after the merge: numbered on.
        m.push(flow(5, 9, 1, 99));
        assert_eq!(m.find(&flow(5, 9, 1, 0).key), Some(2 * n as usize));
        assert_eq!(m.get_mut(2 * n as usize).map(|f| f.first_frame), Some(99));
        // Taken out whole, in id order.
        let all: Vec<u64> = m.into_iter().map(|f| f.first_frame).collect();
        assert_eq!(all, (0..2 * n).chain([99]).collect::<Vec<_>>());
    }

    #[test]
    fn a_shards_flows_keep_their_sequence_numbers_beside_them() {
        let mut s = FlowStore::default();
        s.push_numbered(flow(1, 2, 1, 0), 40);
        s.push_numbered(flow(1, 2, 2, 0), 7);
        assert_eq!((s.seq(0), s.seq(1), s.seq(2)), (Some(40), Some(7), None));
        // Past 32 bits: the high halves kept where they change.
        let big = [u64::from(u32::MAX), 1 << 32, (1 << 32) + 5, 3 << 40, (3 << 40) + 1];
        for (i, q) in big.into_iter().enumerate() {
            s.push_numbered(flow(1, 3, i as u32, 0), q);
        }
        let read: Vec<_> = (2..7).map(|i| s.seq(i)).collect();
        assert_eq!(read, big.map(Some));
        assert_eq!(s.seq_high.len(), 2);
        let mut plain = FlowStore::default();
        plain.push(flow(1, 2, 1, 0));
        assert_eq!(plain.seq(0), None, "one thread keeps none");
    }

    #[test]
    fn a_merge_loses_no_flow_whatever_it_is_given() {
        // A merged store among the inputs, and an order that names only some flows (and a
        // shard past the inputs): every flow is still there, the named ones first.
        let merged = FlowStore::from_shards(
            vec![
                (0..3).map(|i| flow(0, 9, i, u64::from(i) * 2)).collect(),
                (0..3).map(|i| flow(1, 9, i, u64::from(i) * 2 + 1)).collect(),
            ],
            &[0, 1, 0, 1, 0, 1],
        );
        let plain: FlowStore = (0..4).map(|i| flow(2, 9, i, 100 + u64::from(i))).collect();
        let m = FlowStore::from_shards(vec![merged, plain], &[1, 0, 7, 1]);
        let seqs: Vec<u64> = m.iter().map(|f| f.first_frame).collect();
        assert_eq!(seqs, [100, 0, 101, 1, 2, 3, 4, 5, 102, 103]);
        for id in 0..m.len() {
            assert_eq!(m.find(&m.get(id).unwrap().key), Some(id));
        }
    }
}
