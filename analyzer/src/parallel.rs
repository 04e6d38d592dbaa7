//! Parallel analysis by shards of host pairs (issue 13).
//!
//! Every shard is a whole [`Analyzer`] fed every frame of the capture, in order; each keeps
//! the flows of its own host pairs only (both directions of a pair hash to one shard, so a
//! connection, its CM exchange, its CNPs and its pairing stay together). What concerns the
//! whole capture (totals, capture points, priorities and PFC/PAUSE timelines, the path MTU,
//! mirror sessions and switch clocks, sFlow sources) is computed the same way in every shard,
//! from every frame; the per-flow work (PSN tracking, latencies, audit, findings' evidence),
//! the bulk of the cost, is split. [`merge`] then joins the shards' flows into one analysis,
//! ordered and numbered as one analyzer would have made them, so its report is the
//! single-threaded report (tests/threads.rs compares them over every sample and real capture).
//!
//! Pause timelines, priorities and destinations, which no flow reads, are kept by the first
//! shard only.
//!
//! Not sharded: merged captures matched across capture points (the matcher ties clocks from
//! packets of every flow), and analyzers whose idle flows are evicted (the exporter).

use crate::Analyzer;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use std::net::IpAddr;

/// The shard a host pair belongs to, out of `count`: both directions alike.
pub fn shard_of(a: IpAddr, b: IpAddr, count: u32) -> u32 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut h = FxHasher::default();
    lo.hash(&mut h);
    hi.hash(&mut h);
    // The high bits: FxHash's low bits are weak for keys that differ in a few bytes.
    let x = h.finish();
    ((x >> 32) ^ (x & 0xFFFF_FFFF)) as u32 % count.max(1)
}

impl Analyzer {
    /// Keep only the flows of shard `index` of `count` (see the module docs); everything
    /// else is analysed as before. Call before the first frame. Refused (false) for merged
    /// captures matched across capture points.
    pub fn set_shard(&mut self, index: u32, count: u32) -> bool {
        if self.matcher.is_some() || count == 0 || index >= count || self.totals.frames > 0 {
            return false;
        }
        self.shard = (count > 1).then_some((index, count));
        true
    }

    /// False for the shards of a parallel analysis but the first: the capture-wide state
    /// that no flow reads (pause timelines, priorities, destinations) is the first shard's
    /// alone, and [`merge`] keeps that one.
    pub(crate) fn keeps_capture_state(&self) -> bool {
        self.shard.is_none_or(|(i, _)| i == 0)
    }

    /// True when this analyzer keeps the flows between `a` and `b`.
    pub(crate) fn owns(&self, a: IpAddr, b: IpAddr) -> bool {
        self.shard.is_none_or(|(i, n)| shard_of(a, b, n) == i)
    }
}

/// Join the shards of one parallel analysis (each [`Analyzer::set_shard`] to its index, all
/// fed the same frames) into the analysis one analyzer would have made. `None` when there is
/// no shard.
pub fn merge(shards: Vec<Analyzer>) -> Option<Analyzer> {
    let mut shards = shards.into_iter();
    let mut base = shards.next()?;
    let mut rest: Vec<Analyzer> = shards.collect();
    if rest.is_empty() {
        base.shard = None;
        return Some(base);
    }
    // Every flow, by when one analyzer would have created it: each shard made its own in
    // that order, so a merge of the shards' sequences gives it (ties, which one frame cannot
    // make, by shard). The flows stay where their shard stored them: the merged store numbers
    // them through a table (store::FlowStore::from_shards).
    let mut stores = vec![std::mem::take(&mut base.flows)];
    stores.extend(rest.iter_mut().map(|a| std::mem::take(&mut a.flows)));
    let seqs: Vec<Vec<u64>> = stores.iter().map(|st| st.iter().map(|f| f.first_seq).collect()).collect();
    let mut pos = vec![0usize; seqs.len()];
    // The shard each merged flow comes from, and each shard's flows' new ids.
    let mut from: Vec<u8> = Vec::with_capacity(seqs.iter().map(Vec::len).sum());
    let mut new_id: Vec<Vec<usize>> = seqs.iter().map(|v| vec![usize::MAX; v.len()]).collect();
    loop {
        let next = (0..seqs.len()).filter_map(|s| Some((*seqs.get(s)?.get(*pos.get(s)?)?, s))).min();
        let Some((_, s)) = next else { break };
        let (Some(p), Some(ids)) = (pos.get_mut(s), new_id.get_mut(s)) else { break };
        if let Some(slot) = ids.get_mut(*p) {
            *slot = from.len();
        }
        *p += 1;
        from.push(u8::try_from(s).unwrap_or(u8::MAX));
    }
    drop(seqs);
    let remap =
        |s: usize, id: usize| new_id.get(s).and_then(|m| m.get(id)).copied().filter(|&n| n != usize::MAX);
    for (s, st) in stores.iter_mut().enumerate() {
        for f in st.iter_mut() {
            f.set_partner(f.partner().and_then(|p| remap(s, p)));
        }
    }
    base.flows = crate::store::FlowStore::from_shards(stores, &from);
    drop(from);
    // What refers to flows by id, or is kept per host pair.
    let mut audit = FxHashMap::default();
    for (s, a) in std::iter::once(&mut base).chain(rest.iter_mut()).enumerate() {
        for ((id, what, seen), (n, first)) in std::mem::take(&mut a.audit) {
            let e = audit.entry((id.and_then(|i| remap(s, i)), what, seen)).or_insert((0u64, first));
            e.0 += n;
            e.1 = e.1.min(first);
        }
    }
    base.audit = audit;
    for a in &mut rest {
        base.cm_pending.extend(std::mem::take(&mut a.cm_pending));
        base.cm_timeout.extend(std::mem::take(&mut a.cm_timeout));
        base.cm_partner.extend(std::mem::take(&mut a.cm_partner));
        base.cnp_hosts.extend(std::mem::take(&mut a.cnp_hosts));
    }
    drop(rest);
    base.last = None;
    base.shard = None;
    Some(base)
}
