//! Parallel analysis by shards of host pairs (issue 13).
//!
//! Every shard is a whole [`Analyzer`] that sees every frame of the capture, in order; each
//! keeps the flows of its own host pairs only (both directions of a pair hash to one shard,
//! so a connection, its CM exchange, its CNPs and its pairing stay together).
//!
//! The first shard decodes every frame and computes what concerns the whole capture (totals,
//! capture points, priorities and PFC/PAUSE timelines, the fabric series, the path MTU,
//! mirror sessions and switch clocks, sFlow sources); [`merge`] keeps its figures. The others
//! glance at each frame's addresses ([`rocescope_decoder::peek`]) and pass over the plain
//! RoCEv2 frames of pairs not their own undecoded ([`Analyzer::is_others`]), counting only
//! their place and time; they decode the rest (their own frames, and every frame the glance
//! cannot vouch for) as one analyzer would. What their flows read of the capture-wide state
//! is the capture's start and the path MTU: a passed-over First or Middle packet that could
//! raise the MTU is decoded too. Since the first shard carries the per-frame work, it keeps
//! fewer host pairs ([`shard_of`]).
//!
//! [`merge`] then joins the shards' flows into one analysis, ordered and numbered as one
//! analyzer would have made them, so its report is the single-threaded report
//! (tests/threads.rs compares them over every sample and real capture).
//!
//! Not sharded: merged captures matched across capture points (the matcher ties clocks from
//! packets of every flow), and analyzers whose idle flows are evicted (the exporter).

use crate::Analyzer;
use rustc_hash::FxHashMap;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;

/// The first shard's part of the host pairs, out of `count` shards. The first shard decodes
/// every frame and runs the capture-wide pass on it; the others pass over the frames of pairs
/// not their own undecoded ([`Analyzer::is_others`]) and decode and analyse only their own,
/// without the capture-wide pass. So it takes fewer pairs, as many as balance the shards'
/// pumps (the report after the merge is the main thread's, whatever the split).
///
/// The model, as parts of one thread's instructions: the first shard's pump is `f + s·p`,
/// with `f` its floor (reading, decoding and the capture-wide pass on every frame) and `p`
/// what all the pairs' flows add to it; another's is `r + (1 - s)/(n - 1)·q`, with `r` its
/// floor (reading and the glance at every frame) and `q` what decoding and analysing all the
/// pairs' frames would cost it. Fitted on the pumps measured per thread (callgrind
/// `--separate-threads`, `report -q --threads 2` with two splits, 2026-12-07), every thread
/// reading the file: 200,000 mixed frames over 1,024 QPs `f` 0.76, `p` 0.21, `r` 0.19,
/// `q` 0.78 (balanced at 22%); 200,000 WRITEs over 10,000 QPs 0.56, 0.25, 0.15, 0.65
/// (26%); the constants are their means. Two shards: 24%, which leaves the busier pump
/// within 2% of the balanced one on both captures and both readings (the divided reading,
/// whose `r` is about nothing, balances at 18% and 22%) and 1.5-5% below the 36% fitted on
/// 12-03. Three and more: none (`f` alone is above `r + q/2`). None at two, as the
/// single-thread anatomy suggested, left the other shard's pump 21% above balance.
const fn first_fraction(count: u64) -> f64 {
    const F: f64 = 0.66;
    const P: f64 = 0.23;
    const R: f64 = 0.17;
    const Q: f64 = 0.715;
    if count <= 1 {
        return 1.0;
    }
    let q = Q / (count - 1) as f64;
    ((R + q - F) / (P + q)).clamp(0.0, 1.0 / count as f64)
}

/// Most shards `report --threads` makes.
const MAX_SHARDS: usize = 64;

/// No new id (yet): the merge gives every flow one, as a `u32` (a flow's partner is one).
const NO_ID: u32 = u32::MAX;

/// The first shard's part of the hash space, per shard count up to [`MAX_SHARDS`]: worked out
/// once, not per frame.
const FIRST_BELOW: [u64; MAX_SHARDS + 1] = {
    let mut t = [0u64; MAX_SHARDS + 1];
    let mut n = 0;
    while n <= MAX_SHARDS {
        t[n] = (first_fraction(n as u64) * (1u64 << 32) as f64) as u64;
        n += 1;
    }
    t
};

/// The shard a host pair belongs to, out of `count`: both directions alike.
#[inline]
pub fn shard_of(a: IpAddr, b: IpAddr, count: u32) -> u32 {
    let n = u64::from(count.max(1));
    if n == 1 {
        return 0;
    }
    let x = match (a, b) {
        (IpAddr::V4(a), IpAddr::V4(b)) => return shard_of_v4(u32::from(a), u32::from(b), count),
        _ => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            // IPv6 addresses mixed first (crate::addr_hash): FxHash of the addresses alone
            // put every pair of one subnet in one shard.
            let mut h = crate::addr_hash::AddrHasher::default();
            lo.hash(&mut h);
            hi.hash(&mut h);
            h.finish()
        }
    };
    in_shard(x, n)
}

/// [`shard_of`] for two IPv4 hosts (nearly every frame): the pair as one word, mixed
/// (splitmix64's finaliser). The walker of a divided reading asks this for every frame.
#[inline]
pub fn shard_of_v4(a: u32, b: u32, count: u32) -> u32 {
    let n = u64::from(count.max(1));
    if n == 1 {
        return 0;
    }
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut z = (u64::from(lo) << 32 | u64::from(hi)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    in_shard(z ^ (z >> 31), n)
}

/// The shard of a pair whose hash is `x`, out of `n` (at least 2).
#[inline]
fn in_shard(x: u64, n: u64) -> u32 {
    let h = ((x >> 32) ^ (x & 0xFFFF_FFFF)) & 0xFFFF_FFFF;
    // [0, first) for the first shard, the rest in equal parts.
    let first = match FIRST_BELOW.get(n as usize) {
        Some(&f) => f,
        None => (first_fraction(n) * (1u64 << 32) as f64) as u64,
    };
    if h < first {
        0
    } else {
        let rest = (1u64 << 32) - first;
        (1 + (h - first) * (n - 1) / rest.max(1)).min(n - 1) as u32
    }
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

    /// For a shard other than the first: true when `rec` is a plain RoCEv2 frame
    /// ([`rocescope_decoder::peek`]) of a host pair another shard keeps. Such a frame
    /// changes nothing this shard keeps but the frame count ([`Analyzer::skip_record`]): the
    /// first shard keeps the capture-wide figures. Feature `capture`.
    #[cfg(feature = "capture")]
    pub fn is_others(
        &self,
        rec: &rocescope_capture::Record<'_>,
        opts: &rocescope_decoder::DecodeOptions,
    ) -> bool {
        let Some((i, n)) = self.shard else { return false };
        // An sFlow datagram on the RoCE port is the sFlow reader's.
        if i == 0 || (self.cfg.sflow && opts.roce_port == rocescope_decoder::sflow::PORT) {
            return false;
        }
        let Some(g) = rocescope_decoder::peek::roce_v2(rec.link_type, rec.data, opts.roce_port) else {
            return false;
        };
        if shard_of(g.src, g.dst, n) == i {
            return false;
        }
        // The path MTU the flows' READs are measured with comes from every flow's full-size
        // First and Middle packets: one that could raise it is decoded (its payload is at
        // most the UDP length less the BTH, the opcode's headers and the ICRC).
        let Some(op) = g.opcode.map(rocescope_decoder::Opcode) else { return false };
        if matches!(
            op.position(),
            Some(rocescope_decoder::Position::First | rocescope_decoder::Position::Middle)
        ) {
            let headers: usize = op.layout(opts.opcode).headers.iter().map(|k| k.size()).sum();
            let most = usize::from(g.udp_len).saturating_sub(8 + 12 + 4 + headers);
            // (A configured MTU is the one they use: nothing to decode for.)
            if self.cfg.pmtu.is_none() && most > 0 && crate::mtu_class(most) > self.pmtu_seen {
                return false;
            }
        }
        true
    }

    /// Feed record `rec` (frame `number`) as `report --threads` feeds a shard: another
    /// shard's plain RoCEv2 frame passed over ([`Analyzer::is_others`]), a common frame
    /// through the fast path when the analysis takes it, anything else decoded whole. One
    /// place for the dispatch, so tests that merge shards feed them as the command does.
    /// Feature `capture`.
    #[cfg(feature = "capture")]
    pub fn push_shard_record(
        &mut self,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        opts: &rocescope_decoder::DecodeOptions,
    ) {
        if self.is_others(rec, opts) {
            self.skip_record(rec);
        } else if let Some(c) = self
            .takes_common(opts)
            .then(|| rocescope_decoder::fast::classify(rec.link_type, rec.data, opts))
            .flatten()
        {
            self.push_common_record(number, rec, &c);
        } else {
            let p = rocescope_decoder::decode(rec.link_type, rec.data, opts);
            self.push_frame(number, rec, &p, opts);
        }
    }

    /// Count a frame [`Analyzer::is_others`] passed over: its place in the capture's order
    /// (which orders the shards' flows at the merge) and its time. Feature `capture`.
    #[cfg(feature = "capture")]
    pub fn skip_record(&mut self, rec: &rocescope_capture::Record<'_>) {
        if self.mirror.checking() {
            // Its place among the frames held back for a switch clock's check (mirror
            // module): counted when they are.
            self.hold_skipped(rec.ts_ns);
            return;
        }
        self.skip_at(rec.ts_ns);
    }

    /// The count of a frame passed over at `ts_ns` ([`Analyzer::skip_record`]).
    pub(crate) fn skip_at(&mut self, ts_ns: i64) {
        self.pushed += 1;
        let t = &mut self.totals;
        t.frames += 1;
        t.packets = t.packets.saturating_add(1);
        t.start_ns.get_or_insert(ts_ns);
        t.end_ns = Some(t.end_ns.map_or(ts_ns, |e| e.max(ts_ns)));
    }

    /// True when this analyzer keeps the flows between `a` and `b`.
    pub(crate) fn owns(&self, a: IpAddr, b: IpAddr) -> bool {
        self.shard.is_none_or(|(i, n)| shard_of(a, b, n) == i)
    }
}

/// Join the shards of one parallel analysis (each [`Analyzer::set_shard`] to its index, all
/// fed the same frames) into the analysis one analyzer would have made. `None` when there is
/// no shard.
pub fn merge(mut shards: Vec<Analyzer>) -> Option<Analyzer> {
    // Frames still held back for a switch clock's check are each shard's to analyse first.
    for a in &mut shards {
        if a.mirror.checking() {
            a.end_clock_checks();
        }
        // Flows are renumbered: their open shares fold first (crate::fold).
        a.fold_all();
    }
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
    // Read from the stores where they lie: a copy of every flow's sequence number, and new
    // ids as `usize`, were 4 MB at the two-thread run's peak at 200,000 flows (issue 39).
    let lens: Vec<usize> = stores.iter().map(|st| st.len()).collect();
    let seq = |s: usize, i: usize| stores.get(s).and_then(|st| st.seq(i));
    let mut pos = vec![0usize; stores.len()];
    // The shard each merged flow comes from, and each shard's flows' new ids.
    let mut from: Vec<u8> = Vec::with_capacity(lens.iter().sum());
    let mut new_id: Vec<Vec<u32>> = lens.iter().map(|n| vec![NO_ID; *n]).collect();
    loop {
        let next = (0..stores.len()).filter_map(|s| Some((seq(s, *pos.get(s)?)?, s))).min();
        let Some((_, s)) = next else { break };
        let (Some(p), Some(ids)) = (pos.get_mut(s), new_id.get_mut(s)) else { break };
        if let Some(slot) = ids.get_mut(*p) {
            *slot = u32::try_from(from.len()).unwrap_or(NO_ID);
        }
        *p += 1;
        from.push(u8::try_from(s).unwrap_or(u8::MAX));
    }
    let remap = |s: usize, id: usize| {
        new_id.get(s).and_then(|m| m.get(id)).copied().filter(|&n| n != NO_ID).map(|n| n as usize)
    };
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
    // Latency samples: each shard's are its own flows'.
    let start = base.totals.start_ns.unwrap_or(0);
    for a in &mut rest {
        base.latency_samples.absorb(std::mem::take(&mut a.latency_samples), start);
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
