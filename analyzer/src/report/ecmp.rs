//! The report's `ecmp` and `elephants` sections and their findings, `ecmp_low_entropy` and
//! `ecmp_imbalance` (crate::ecmp; docs/verdicts.md "ECMP"): read from the flows and the
//! fabric series at the end of the capture, nothing per frame.
//!
//! Grouping the data flows by host pair and source host takes one sort of 24 bytes a RoCEv2
//! data flow (24 MB at a million QPs, freed before the report is written): each flow keyed by
//! fingerprints of its (point, source) and destination, the groups then checked against the
//! flows' own keys, so two hosts whose fingerprints collide are still told apart. A flow's
//! bytes and port changes are read from the flow itself, not copied into the sort (it was
//! 32 bytes a flow, and the report's peak at a million one-packet QPs: issue 39).

use super::points::point_name;
use super::*;
use crate::ecmp::{
    entropy_bits, fitting_hashes, flows_for_share, max_over_mean, measured_imbalance, names_point, predict,
    predicted_imbalance, EcmpReport, Elephant, ElephantsReport, HashKey, HostEntropy, PairEntropy,
    PathPrediction, Placed, UplinkLoad, UplinkReport, BUSY_MIN_BYTES, ELEPHANT_SHARE, LISTED,
    LOW_ENTROPY_MIN_QPS, NAMED, ROCE_PORT, TOP_ELEPHANTS,
};
use crate::fabric::FabricReport;
use std::collections::HashMap;
use std::net::IpAddr;
use std::ops::Range;

/// A RoCEv2 data flow as the grouping reads it: 24 bytes, its sort key.
#[derive(Clone, Copy, Debug)]
struct Data {
    /// Fingerprint of (point, source).
    host: u64,
    /// Fingerprint of the destination.
    dst: u64,
    id: u32,
    port: u16,
}

/// A data flow's wire bytes.
fn data_bytes(a: &Analyzer, d: &Data) -> u64 {
    a.flows.get(d.id as usize).map_or(0, |f| f.bytes())
}

/// Whether a data flow's port changed during the capture.
fn data_changed(a: &Analyzer, d: &Data) -> bool {
    a.flows.get(d.id as usize).is_some_and(|f| f.udp_sport_changes > 0)
}

/// A flow that carries data (requests or READ responses with payload) with ECMP entropy of
/// its own: RoCEv2 (a UDP source port), not QP1's management datagrams.
fn is_ecmp_data(f: &Flow) -> bool {
    f.payload_bytes() > 0 && f.key.dest_qp != 1 && f.udp_sport_last().is_some()
}

fn fingerprint<T: std::hash::Hash>(t: T) -> u64 {
    crate::addr_hash::hash_one(t)
}

/// The RoCEv2 data flows, sorted by (source host, destination, port, id).
fn data_flows(a: &Analyzer) -> Vec<Data> {
    // Counted first and held exactly: at 100,000 QPs a growing `Vec` left a megabyte
    // unused at the report's peak (issue 39).
    let mut v: Vec<Data> = Vec::with_capacity(a.flows.iter().filter(|f| is_ecmp_data(f)).count());
    v.extend(a.flows.iter().enumerate().filter(|(_, f)| is_ecmp_data(f)).map(|(i, f)| Data {
        host: fingerprint((f.key.point, f.key.src)),
        dst: fingerprint(f.key.dst),
        id: u32::try_from(i).unwrap_or(u32::MAX),
        port: f.udp_sport,
    }));
    v.sort_unstable_by_key(|d| (d.host, d.dst, d.port, d.id));
    v
}

/// The runs of `v` whose entries belong together by `exact` (a flow's key read as a group
/// key), where the entries were sorted by a fingerprint `fp` of it: a run of equal
/// fingerprints holding more than one exact key (a collision) is sorted by the exact key
/// first, then `then`.
fn runs<K: Ord + Copy>(
    v: &mut [Data],
    fp: impl Fn(&Data) -> u64,
    exact: impl Fn(&Data) -> Option<K>,
    then: impl Fn(&Data) -> (u64, u16, u32),
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let (end, mut at) = runs_at(v, i, &fp, &exact, &then);
        out.append(&mut at);
        i = end;
    }
    out
}

/// [`runs`] for the run of equal fingerprints that starts at `i`: where it ends, and its
/// runs by the exact key (one, unless fingerprints collide). Walked a run at a time, the
/// runs of a capture's data flows are never all held at once (2 MB at 100,000 hosts).
fn runs_at<K: Ord + Copy>(
    v: &mut [Data],
    i: usize,
    fp: &impl Fn(&Data) -> u64,
    exact: &impl Fn(&Data) -> Option<K>,
    then: &impl Fn(&Data) -> (u64, u16, u32),
) -> (usize, Vec<Range<usize>>) {
    let mut out = Vec::new();
    let f = v.get(i).map(fp);
    let end = (i..v.len()).find(|&j| v.get(j).map(fp) != f).unwrap_or(v.len());
    if let Some(run) = v.get_mut(i..end) {
        let first = run.first().and_then(exact);
        if run.iter().any(|d| exact(d) != first) {
            run.sort_by_key(|d| (exact(d), then(d)));
        }
        let mut s = 0;
        while s < run.len() {
            let k = run.get(s).and_then(exact);
            let e = (s..run.len()).find(|&j| run.get(j).and_then(exact) != k).unwrap_or(run.len());
            out.push(i + s..i + e);
            s = e;
        }
    }
    (end.max(i + 1), out)
}

/// The bytes per port of `entries` (any order; `bytes` reads an entry's), sorted by port:
/// (port, bytes, QPs, busy QPs).
fn port_bytes(entries: &[Data], bytes: impl Fn(&Data) -> u64) -> Vec<(u16, u64, u32, u32)> {
    let mut ports: Vec<(u16, u64, u32, u32)> = Vec::new();
    let mut sorted: Vec<&Data> = entries.iter().collect();
    sorted.sort_by_key(|d| d.port);
    for d in sorted {
        let b = bytes(d);
        let busy = u32::from(b >= BUSY_MIN_BYTES);
        match ports.last_mut() {
            Some(p) if p.0 == d.port => {
                p.1 += b;
                p.2 += 1;
                p.3 += busy;
            }
            _ => ports.push((d.port, b, 1, busy)),
        }
    }
    ports
}

/// A host pair whose busy QPs share a port: the `ecmp_low_entropy` candidate.
struct SharedPort {
    pair: PairEntropy,
    port: u16,
    /// The busy QPs on it whose port never changed.
    ids: Vec<u32>,
}

fn pair_entropy(a: &Analyzer, g: &[Data]) -> Option<(PairEntropy, Option<SharedPort>)> {
    let key = g.first().and_then(|d| a.flows.get(d.id as usize)).map(|f| f.key)?;
    let bytes = |d: &Data| data_bytes(a, d);
    let ports = port_bytes(g, bytes);
    let top = ports.iter().max_by_key(|p| (p.3, p.2, std::cmp::Reverse(p.0))).copied().unwrap_or_default();
    let mut pair = PairEntropy {
        point: key.point,
        src: key.src,
        dst: key.dst,
        qps: g.len() as u32,
        busy_qps: g.iter().filter(|d| bytes(d) >= BUSY_MIN_BYTES).count() as u32,
        ports: ports.len() as u32,
        bytes: g.iter().map(bytes).sum(),
        entropy_bits: entropy_bits(ports.iter().map(|p| p.1)),
        qp_entropy_bits: entropy_bits(g.iter().map(bytes)),
        top_port: top.0,
        top_port_qps: top.2,
        top_port_busy_qps: top.3,
        ports_changed: g.iter().filter(|d| data_changed(a, d)).count() as u32,
        low_entropy: false,
    };
    // Busy QPs that stayed on one port, by port: the most on one.
    let steady: Vec<Data> =
        g.iter().filter(|d| bytes(d) >= BUSY_MIN_BYTES && !data_changed(a, d)).copied().collect();
    let shared = port_bytes(&steady, bytes)
        .into_iter()
        .max_by_key(|p| (p.2, std::cmp::Reverse(p.0)))
        .filter(|p| p.2 >= LOW_ENTROPY_MIN_QPS)
        .map(|p| p.0);
    pair.low_entropy = shared.is_some();
    let shared = shared.map(|port| SharedPort {
        pair: pair.clone(),
        port,
        ids: steady.iter().filter(|d| d.port == port).map(|d| d.id).collect(),
    });
    Some((pair, shared))
}

fn host_entropy(a: &Analyzer, g: &[Data], destinations: u32) -> Option<HostEntropy> {
    let key = g.first().and_then(|d| a.flows.get(d.id as usize)).map(|f| f.key)?;
    let bytes = |d: &Data| data_bytes(a, d);
    let ports = port_bytes(g, bytes);
    Some(HostEntropy {
        point: key.point,
        src: key.src,
        qps: g.len() as u32,
        busy_qps: g.iter().filter(|d| bytes(d) >= BUSY_MIN_BYTES).count() as u32,
        destinations,
        ports: ports.len() as u32,
        bytes: g.iter().map(bytes).sum(),
        entropy_bits: entropy_bits(ports.iter().map(|p| p.1)),
        qp_entropy_bits: entropy_bits(g.iter().map(bytes)),
    })
}

/// The most bytes first, then by place: the listing order.
fn listed<T>(mut v: Vec<T>, key: impl Fn(&T) -> (u64, u16, IpAddr, Option<IpAddr>)) -> Vec<T> {
    v.sort_by(|x, y| {
        let (bx, px, sx, dx) = key(x);
        let (by, py, sy, dy) = key(y);
        by.cmp(&bx).then(px.cmp(&py)).then(sx.cmp(&sy)).then(dx.cmp(&dy))
    });
    v.truncate(LISTED);
    v
}

/// Per host pair and per source host: QPs, ports, entropy; and the pairs whose busy QPs
/// share a port.
fn entropy(a: &Analyzer, report: &mut EcmpReport) -> Vec<SharedPort> {
    let mut data = data_flows(a);
    let key = |d: &Data| a.flows.get(d.id as usize).map(|f| f.key);
    let host_exact = |d: &Data| key(d).map(|k| (k.point, k.src));
    let then = |d: &Data| (d.dst, d.port, d.id);
    let (mut pairs_out, mut hosts_out, mut shared) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pairs_total, mut hosts_total) = (0u64, 0u64);
    let mut at = 0;
    while at < data.len() {
        let (end, hosts) = runs_at(&mut data, at, &|d: &Data| d.host, &host_exact, &then);
        at = end;
        for h in hosts {
            let Some(group) = data.get_mut(h) else { continue };
            let pairs = runs(group, |d| d.dst, |d| key(d).map(|k| k.dst), |d| (0, d.port, d.id));
            hosts_total += 1;
            pairs_total += pairs.len() as u64;
            for p in &pairs {
                let Some((pair, s)) = group.get(p.clone()).and_then(|g| pair_entropy(a, g)) else { continue };
                if pair.qps >= 2 {
                    pairs_out.push(pair);
                }
                shared.extend(s);
            }
            if group.len() >= 2 {
                hosts_out.extend(host_entropy(a, group, pairs.len() as u32));
            }
        }
    }
    report.host_pairs_total = pairs_total;
    report.hosts_total = hosts_total;
    report.host_pairs = listed(pairs_out, |p| (p.bytes, p.point, p.src, Some(p.dst)));
    report.hosts = listed(hosts_out, |h| (h.bytes, h.point, h.src, None));
    shared.sort_by(|x, y| y.ids.len().cmp(&x.ids.len()).then(y.pair.bytes.cmp(&x.pair.bytes)));
    shared
}

/// Data flows ranked by bytes (RoCEv1 included).
/// Of the flows `ids`, one per QP (source, destination, destination QP): a QP captured at
/// several points (a sender's capture and a receiver's) is one flow on the wire, kept where
/// it was seen with the most bytes (the first on a tie). With one point, `ids` as they are.
fn once_per_qp(a: &Analyzer, ids: impl Iterator<Item = usize>) -> Vec<usize> {
    if a.points().len() <= 1 {
        return ids.collect();
    }
    let mut best: HashMap<(IpAddr, IpAddr, u32), usize> = HashMap::new();
    for i in ids {
        let Some(f) = a.flows.get(i) else { continue };
        let e = best.entry((f.key.src, f.key.dst, f.key.dest_qp)).or_insert(i);
        if a.flows.get(*e).is_some_and(|g| f.bytes() > g.bytes()) {
            *e = i;
        }
    }
    let mut v: Vec<usize> = best.into_values().collect();
    v.sort_unstable();
    v
}

fn elephants(a: &Analyzer) -> ElephantsReport {
    let data = a.flows.iter().enumerate().filter(|(_, f)| f.payload_bytes() > 0).map(|(i, _)| i);
    let mut v: Vec<(u64, u32)> = once_per_qp(a, data)
        .into_iter()
        .filter_map(|i| Some((a.flows.get(i)?.bytes(), u32::try_from(i).unwrap_or(u32::MAX))))
        .collect();
    v.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let total: u64 = v.iter().map(|x| x.0).sum();
    let share = |b: u64| if total == 0 { 0.0 } else { b as f64 / total as f64 };
    let top: Vec<Elephant> = v
        .iter()
        .take(TOP_ELEPHANTS)
        .filter_map(|&(bytes, id)| {
            let f = a.flows.get(id as usize)?;
            Some(Elephant {
                flow: id as usize,
                point: f.key.point,
                src: f.key.src,
                dst: f.key.dst,
                dest_qp: f.key.dest_qp,
                udp_src_port: f.udp_sport_last().map(|_| f.udp_sport),
                bytes,
                share: share(bytes),
                busy: bytes >= BUSY_MIN_BYTES,
            })
        })
        .collect();
    let bytes: Vec<u64> = v.iter().map(|x| x.0).collect();
    ElephantsReport {
        data_flows: v.len() as u64,
        data_bytes: total,
        busy_flows: v.iter().filter(|x| x.0 >= BUSY_MIN_BYTES).count() as u64,
        top_share: share(top.iter().map(|e| e.bytes).sum()),
        top,
        share: ELEPHANT_SHARE,
        flows_for_share: flows_for_share(&bytes, ELEPHANT_SHARE),
    }
}

/// The capture points `--uplinks` names, and the names no point has.
fn uplink_points(a: &Analyzer) -> (Vec<u16>, Vec<String>) {
    let n = u16::try_from(a.points().len()).unwrap_or(u16::MAX);
    let mut points = Vec::new();
    let mut unmatched = Vec::new();
    for name in &a.cfg.ecmp.uplinks {
        match (0..n).find(|&i| names_point(name, &point_name(a, i))) {
            Some(p) if !points.contains(&p) => points.push(p),
            Some(_) => {}
            None => unmatched.push(name.clone()),
        }
    }
    (points, unmatched)
}

/// The busy data flows at `point`, the most bytes first.
fn busy_at(a: &Analyzer, point: u16) -> Vec<usize> {
    let mut v: Vec<(u64, usize)> = a
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.key.point == point && f.payload_bytes() > 0 && f.bytes() >= BUSY_MIN_BYTES)
        .map(|(i, f)| (f.bytes(), i))
        .collect();
    v.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    v.into_iter().map(|x| x.1).collect()
}

/// A point's RoCE bytes per bin at `width` (a multiple of its own width), from the fabric
/// series summed over its priorities.
fn rebinned(timeline: &FabricReport, point: u16, width: u64, len: usize) -> Vec<u64> {
    let mut out = vec![0u64; len];
    let Some(s) = timeline.points.iter().find(|s| s.point == point) else { return Vec::new() };
    for p in &s.priorities {
        for (j, b) in p.bytes.iter().enumerate() {
            let at = (j as u64 * s.bin_ns / width.max(1)) as usize;
            if let Some(o) = out.get_mut(at) {
                *o += b;
            }
        }
    }
    out
}

/// The load measured at the uplinks: bytes per uplink and over time.
/// `flows`: the data flows at the uplinks ([`prediction_flows`]), for the hash fit.
fn uplinks(
    a: &Analyzer,
    timeline: &FabricReport,
    points: &[u16],
    unmatched: Vec<String>,
    flows: &[Placed],
) -> UplinkReport {
    let mut bytes = vec![0u64; points.len()];
    for f in a.flows.iter() {
        if let Some(i) = points.iter().position(|p| *p == f.key.point) {
            if let Some(b) = bytes.get_mut(i) {
                *b += f.bytes();
            }
        }
    }
    let total: u64 = bytes.iter().sum();
    let series: Vec<_> = timeline.points.iter().filter(|s| points.contains(&s.point)).collect();
    let width = series.iter().map(|s| s.bin_ns).max().unwrap_or(0);
    let len = series
        .iter()
        .map(|s| s.priorities.iter().map(|p| p.bytes.len()).max().unwrap_or(0) as u64 * s.bin_ns)
        .max()
        .map_or(0, |span| span.div_ceil(width.max(1)) as usize);
    let loads: Vec<UplinkLoad> = points
        .iter()
        .zip(&bytes)
        .map(|(&point, &b)| {
            let busy = busy_at(a, point);
            UplinkLoad {
                point,
                name: point_name(a, point),
                bytes: b,
                share: if total == 0 { 0.0 } else { b as f64 / total as f64 },
                busy_flows: busy.len() as u64,
                elephants: busy.into_iter().take(NAMED).collect(),
                bins: rebinned(timeline, point, width, len),
            }
        })
        .collect();
    let max_over_mean_bins = (0..len)
        .map(|j| {
            let at: Vec<u64> = loads.iter().map(|l| l.bins.get(j).copied().unwrap_or(0)).collect();
            max_over_mean(&at)
        })
        .collect();
    let busiest = loads.iter().max_by_key(|l| (l.bytes, std::cmp::Reverse(l.point))).map(|l| l.point);
    let placed: Vec<(HashKey, usize)> = flows
        .iter()
        .filter_map(|p| {
            let at = a.flows.get(p.flow)?.key.point;
            Some((p.key, points.iter().position(|x| *x == at)?))
        })
        .collect();
    let hash_fit = fitting_hashes(&placed, u16::try_from(points.len()).unwrap_or(u16::MAX));
    UplinkReport {
        hash_fit,
        max_over_mean: if loads.len() < 2 { 0.0 } else { max_over_mean(&bytes) },
        busiest,
        uplinks: loads,
        unmatched,
        bin_ns: width,
        max_over_mean_bins,
    }
}

/// The RoCEv2 data flows at `points` (every point when empty), each QP once
/// (`once_per_qp`), with the key a switch hashes.
fn prediction_flows(a: &Analyzer, points: &[u16]) -> Vec<Placed> {
    let ids = a
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| is_ecmp_data(f) && (points.is_empty() || points.contains(&f.key.point)))
        .map(|(i, _)| i);
    once_per_qp(a, ids)
        .into_iter()
        .filter_map(|i| Some((i, a.flows.get(i)?)))
        .map(|(i, f)| Placed {
            flow: i,
            key: HashKey {
                src: f.key.src,
                dst: f.key.dst,
                sport: f.udp_sport,
                dport: ROCE_PORT,
                dest_qp: f.key.dest_qp,
            },
            bytes: f.bytes(),
        })
        .collect()
}

/// `flows` ([`prediction_flows`] at `points`, every point when empty) placed by the
/// configured hash.
fn prediction(a: &Analyzer, paths: u16, points: &[u16], flows: &[Placed]) -> PathPrediction {
    let mut shown = points.to_vec();
    if shown.is_empty() {
        shown = (0..u16::try_from(a.points().len()).unwrap_or(u16::MAX)).collect();
    }
    predict(flows, &a.cfg.ecmp.hash, paths, shown)
}

/// `QP 0x000101 10.0.0.1 → 10.0.0.2` for flow `id`.
fn qp_text(a: &Analyzer, id: usize) -> String {
    a.flows.get(id).map_or_else(
        || format!("flow {id}"),
        |f| format!("QP 0x{:06x} {} → {}", f.key.dest_qp, f.key.src, f.key.dst),
    )
}

/// Each flow's first frame, as evidence.
fn first_frames(
    a: &Analyzer,
    ids: impl Iterator<Item = usize>,
    what: impl Fn(&Flow) -> String,
) -> Vec<EvidenceRef> {
    ids.filter_map(|id| a.flows.get(id))
        .take(5)
        .map(|f| EvidenceRef { frame: f.first_frame, ts_ns: f.first_ts, what: what(f) })
        .collect()
}

fn low_entropy_finding(a: &Analyzer, s: &SharedPort) -> Finding {
    let p = &s.pair;
    let cause = if s.port == 0xC000 {
        "49152 (0xC000) is the port mlx5 sends on every QP whose flow label is 0 (rdma_flow_label_to_udp_sport)"
            .to_string()
    } else {
        "a NIC or library that sets one port on every QP".to_string()
    };
    let title = format!(
        "{} → {}{}: {} busy QPs (1 MiB or more each) share UDP source port {}: a 5-tuple hash puts them all on one ECMP path ({:.2} bits of entropy over the pair's {} QPs, {:.2} with a port each); {cause}",
        p.src,
        p.dst,
        at_point(a, p.point),
        s.ids.len(),
        s.port,
        p.entropy_bits,
        p.qps,
        p.qp_entropy_bits,
    );
    let evidence = first_frames(a, s.ids.iter().map(|i| *i as usize), |f| {
        format!("QP 0x{:06x}'s first packet, from UDP port {}", f.key.dest_qp, s.port)
    });
    Finding::about_capture(
        Severity::Warning,
        FindingKind::EcmpLowEntropy,
        title,
        evidence,
        s.ids.len() as u64,
    )
}

/// The first three of `ids` by name, and how many more of `total` there are.
fn names(a: &Analyzer, ids: &[usize], total: u64) -> String {
    let n: Vec<String> = ids.iter().take(3).map(|i| qp_text(a, *i)).collect();
    let more = total.saturating_sub(n.len() as u64);
    if more > 0 {
        format!("{} and {more} more", n.join(", "))
    } else {
        n.join(", ")
    }
}

fn measured_finding(a: &Analyzer, u: &UplinkReport, l: &UplinkLoad) -> Finding {
    let idle = u.uplinks.iter().filter(|x| (x.share * u.uplinks.len() as f64) < 0.1).count();
    let title = format!(
        "uplink {} carried {:.1}x the mean of {} uplinks ({:.0}% of their bytes) with {} elephants: {}{}: ECMP hashed them onto one uplink (measured at the capture points)",
        l.name,
        u.max_over_mean,
        u.uplinks.len(),
        l.share * 100.0,
        l.busy_flows,
        names(a, &l.elephants, l.busy_flows),
        if idle > 0 { format!(", while {idle} uplink(s) carried almost nothing") } else { String::new() },
    );
    let evidence = first_frames(a, l.elephants.iter().copied(), |f| {
        format!("QP 0x{:06x}'s first packet on {}", f.key.dest_qp, l.name)
    });
    Finding::about_capture(Severity::Warning, FindingKind::EcmpImbalance, title, evidence, l.busy_flows)
}

fn predicted_finding(a: &Analyzer, p: &PathPrediction, c: &crate::ecmp::Collision) -> Finding {
    let title = format!(
        "ECMP prediction ({}, {} paths): path {} would carry {:.1}x the mean with {} elephants on it: {}; a prediction, true only if the switch hashes the {} as {} does with this seed",
        p.hash,
        p.paths,
        c.path,
        p.max_over_mean,
        c.busy_flows,
        names(a, &c.elephants, c.busy_flows),
        p.key,
        p.hash
    );
    let evidence = first_frames(a, c.elephants.iter().copied(), |f| {
        format!("QP 0x{:06x}'s first packet, UDP port {}", f.key.dest_qp, f.udp_sport)
    });
    Finding::about_capture(Severity::Info, FindingKind::EcmpImbalance, title, evidence, c.busy_flows)
}

/// The `ecmp` and `elephants` sections, with their findings.
pub(super) fn ecmp(
    a: &Analyzer,
    timeline: &FabricReport,
    findings: &mut FindingSink,
) -> (EcmpReport, ElephantsReport) {
    let mut report = EcmpReport { busy_min_bytes: BUSY_MIN_BYTES, ..EcmpReport::default() };
    for s in entropy(a, &mut report) {
        findings.push(low_entropy_finding(a, &s));
    }
    let (points, unmatched) = uplink_points(a);
    let paths = a.cfg.ecmp.paths.or_else(|| (points.len() >= 2).then_some(points.len() as u16));
    let measured = !a.cfg.ecmp.uplinks.is_empty();
    // The data flows placed, gathered once for the hash fit and the prediction.
    let flows = if measured || paths.is_some() { prediction_flows(a, &points) } else { Vec::new() };
    if measured {
        report.uplinks = Some(uplinks(a, timeline, &points, unmatched, &flows));
    }
    if let Some(n) = paths {
        report.prediction = Some(prediction(a, n, &points, &flows));
    }
    // Measured when uplinks are given; else predicted.
    match (&report.uplinks, &report.prediction) {
        (Some(u), _) => {
            if let Some(l) = measured_imbalance(u) {
                findings.push(measured_finding(a, u, l));
            }
        }
        (None, Some(p)) => {
            if let Some(c) = predicted_imbalance(p) {
                findings.push(predicted_finding(a, p, c));
            }
        }
        (None, None) => {}
    }
    (report, elephants(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(host: u64, dst: u64, port: u16, id: u32) -> Data {
        Data { host, dst, id, port }
    }

    #[test]
    fn runs_split_colliding_fingerprints_by_the_exact_key() {
        // Flows 0-2 and 3-4 are two hosts (exact keys 10 and 20) whose fingerprints
        // collide (7), sorted by fingerprint then port: interleaved.
        let exact = |x: &Data| Some(if x.id < 3 { 10u8 } else { 20 });
        let mut v =
            vec![d(7, 1, 1, 0), d(7, 1, 1, 3), d(7, 1, 2, 1), d(7, 1, 2, 4), d(7, 1, 3, 2), d(9, 1, 1, 5)];
        let r = runs(
            &mut v,
            |x| x.host,
            |x| if x.id == 5 { Some(30) } else { exact(x) },
            |x| (x.dst, x.port, x.id),
        );
        let groups: Vec<Vec<u32>> =
            r.iter().map(|g| v.get(g.clone()).unwrap().iter().map(|x| x.id).collect()).collect();
        assert_eq!(groups, [vec![0, 1, 2], vec![3, 4], vec![5]]);
        // Without a collision the order stays as sorted.
        let mut v = vec![d(1, 1, 5, 0), d(1, 2, 1, 1), d(2, 1, 1, 2)];
        let r = runs(&mut v, |x| x.host, |x| Some(x.host), |x| (x.dst, x.port, x.id));
        assert_eq!(r, [0..2, 2..3]);
        assert_eq!(v.first().map(|x| x.id), Some(0));
    }

    #[test]
    fn a_data_flow_sorts_as_24_bytes() {
        // The report's peak at a million one-packet QPs holds one a data flow (issue 39).
        assert_eq!(std::mem::size_of::<Data>(), 24);
    }

    #[test]
    fn ports_add_up_bytes_qps_and_busy_qps() {
        // Flow 0 is busy, the others carry a byte each.
        let bytes = |x: &Data| if x.id == 0 { BUSY_MIN_BYTES } else { 1 };
        let v = [d(1, 1, 49152, 0), d(1, 1, 49153, 1), d(1, 1, 49152, 2)];
        assert_eq!(port_bytes(&v, bytes), [(49152, BUSY_MIN_BYTES + 1, 2, 1), (49153, 1, 1, 0)]);
    }
}
