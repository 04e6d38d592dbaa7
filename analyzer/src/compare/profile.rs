//! A capture's profile: per capture point and priority, the figures a change is judged on
//! (throughput, CE fraction, CNPs, paused time, loss and resends, timeouts, ACK and READ
//! latency, QPs), and per capture point the DSCP/PCP/ECN marks of data, ACK/NAKs and CNPs
//! and each QP's facts (docs/compare-json.md). Built from a report's facts
//! ([`crate::compare::ReportFacts`]).

use super::facts::{FlowFacts, LatencyStat, ReportFacts, TimelinePoint};
use crate::latency_samples::{Kind, SampleSet};
use crate::report::Severity;
use serde::Serialize;
use std::collections::BTreeMap;

/// A capture's profile.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Profile {
    /// Per capture point, in the report's order.
    pub points: Vec<PointProfile>,
    /// The capture was sampled: packet counts are estimates and loss is not judged.
    pub sampled: bool,
    /// The report covers part of its input (a damaged file, or a signal).
    pub partial: bool,
    /// The share of its request packets the capture holds, when the report found it low
    /// (crate::report::quality): its rates and latencies are samples.
    pub capture_share: Option<f64>,
    /// Findings of the report per kind (folded ones counted as the findings they stand for);
    /// `None` when the side does not say (a Parquet directory holds no findings).
    pub findings: Option<BTreeMap<String, u64>>,
    /// Per finding kind, its worst severity and the title of its first finding of that
    /// severity (findings come worst first): what a finding verdict rests on.
    pub findings_worst: BTreeMap<String, (Severity, String)>,
    /// RoCE packets (`summary.roce`): the traffic finding counts are normalised by.
    pub roce: u64,
    /// Of those, RoCEv1 (EtherType 0x8915).
    pub roce_v1: u64,
    /// Packets of flows named by IPv4 addresses, and by IPv6 addresses (RoCEv1 flows are
    /// named by their GIDs, IPv6-shaped).
    pub family_packets: [u64; 2],
    /// The NCCL settings checked against this side, when they were (`--nccl-env`).
    pub nccl: Option<Vec<super::facts::NcclVarFacts>>,
    /// The NIC counters' deltas set beside the side (`report --counters` with two
    /// snapshots), per figure and priority; `None` without them (or with one snapshot:
    /// absolute values since the NIC's last reset compare nothing).
    #[serde(skip)]
    pub counters: Option<CounterDeltas>,
    /// The options the side's report was made with, by their JSON path (`timeline.base_ns`,
    /// `audit.expected.roce_dscps`, `config.link_speed_bps`, ...), as JSON text; empty when
    /// the side does not say (a Parquet directory).
    pub options: BTreeMap<String, String>,
}

/// The options a report was made with, by JSON path: the `--bin` width, every key of
/// `audit.expected` and of `config` (docs/verdicts.md "Change verdicts", like with like).
fn options(r: &ReportFacts) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    if r.timeline.base_ns > 0 {
        o.insert("timeline.base_ns (--bin)".to_string(), r.timeline.base_ns.to_string());
    }
    let maps = [
        ("audit.expected", r.audit.as_ref().and_then(|a| a.expected.as_ref())),
        ("config", r.config.as_ref()),
    ];
    for (prefix, map) in maps {
        for (k, v) in map.into_iter().flatten() {
            o.insert(format!("{prefix}.{k}"), v.to_string());
        }
    }
    o
}

/// NIC counter deltas by (figure, priority); null: that counter went backwards or is in
/// one snapshot only.
pub type CounterDeltas = BTreeMap<(String, Option<u8>), Option<u64>>;

/// One capture point's profile.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PointProfile {
    /// Its name.
    pub name: String,
    /// From its first frame to its last, ns.
    pub span_ns: u64,
    /// The path MTU most of its data travelled with (the flows' full-size packets; 0
    /// unknown).
    pub pmtu: u32,
    /// QPs that sent data here (data flows: one direction of a QP).
    pub qps: u64,
    /// Connections (QP pairs) here.
    pub connections: u64,
    /// Per priority that carried RoCE or was paused, in order.
    pub priorities: Vec<PriorityProfile>,
    /// The marks of data, ACK/NAKs and CNPs.
    pub marks: Marks,
    /// Each data flow's facts, sorted by name (the verdicts look a QP up by binary search).
    pub qp: Vec<QpFact>,
}

/// One priority at one capture point.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PriorityProfile {
    /// The priority (PCP, or DSCP through the map, as the report gave it).
    pub priority: u8,
    /// RoCE wire bytes at this priority.
    pub bytes: u64,
    /// RoCE packets at this priority.
    pub packets: u64,
    /// Of those, ECN-CE marked (ACKs and CNPs included: the switch's marks on the class).
    pub ce: u64,
    /// Data packets at this priority, the base of `ce_fraction`: counted packet by packet
    /// (the timeline's `data_packets`), or in documents made before that, the ECN-counted
    /// packets of the flows that mostly carry data. ACKs and CNPs are left out: they halved
    /// the fraction beside the marks' data ECN row (issue 41), and CE-marked ACKs read as
    /// congestion of the data.
    pub data_ecn_packets: u64,
    /// Of those, ECN-CE marked.
    pub data_ce: u64,
    /// Whether the two above were counted packet by packet.
    #[serde(skip)]
    pub data_exact: bool,
    /// CNPs answering data at this priority (a CNP counts at the priority of the data flow
    /// its pairing names, else at its own flow's).
    pub cnps: u64,
    /// CNPs travelling at this priority, whatever data they answer: what a priority that
    /// carries only CNPs (DSCP 48 on a class of its own) carries.
    pub cnps_carried: u64,
    /// PFC paused time, summed over the pausing MACs, ns.
    pub pause_ns: u64,
    /// Data packets of PSN-tracked flows (the base of loss and resends per million).
    pub data_packets: u64,
    /// Packets lost in the network.
    pub network_loss: u64,
    /// Request packets sent again.
    pub resends: u64,
    /// ACK timer expirations.
    pub timeouts: u64,
    /// ACK latency over the priority's flows (see [`pool`]).
    pub ack: Option<LatencyStat>,
    /// READ latency.
    pub read: Option<LatencyStat>,
    /// The ACK latency samples of the priority's request flows (`latency_samples`): what a
    /// latency change is judged on. `None` when the side has none to give (a report document
    /// made before them, a Parquet directory); a side that has them but took none here gets
    /// an empty set.
    #[serde(skip)]
    pub ack_samples: Option<SampleSet>,
    /// The READ latency samples, likewise.
    #[serde(skip)]
    pub read_samples: Option<SampleSet>,
    /// Data flows (QPs sending data).
    pub qps: u64,
    /// Throughput per whole bin of the point's series, Gb/s (the noise of the mean).
    #[serde(skip)]
    pub gbps_bins: Vec<f64>,
    /// Paused µs per second per whole bin.
    #[serde(skip)]
    pub pause_bins: Vec<f64>,
}

/// A data flow's facts.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct QpFact {
    /// `SRC > DST QP 0xNN`: the flow's key without its capture point.
    pub qp: String,
    /// Its priority.
    pub priority: Option<u8>,
    /// Data packets.
    pub data_packets: u64,
    /// DSCP values its packets carried.
    pub dscp: Vec<u8>,
    /// PCP values (empty: untagged).
    pub pcp: Vec<u8>,
    /// Packets lost in the network.
    pub network_loss: u64,
    /// Packets sent again.
    pub resends: u64,
}

/// The marks of each class at a capture point.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Marks {
    /// Data: requests and READ/atomic responses.
    pub data: ClassMarks,
    /// ACK/NAKs.
    pub ack: ClassMarks,
    /// CNPs.
    pub cnp: ClassMarks,
}

/// One class's marks.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ClassMarks {
    /// Packets.
    pub packets: u64,
    /// Packets per DSCP.
    pub dscp: Vec<Share>,
    /// Packets per PCP (an empty `values`: untagged).
    pub pcp: Vec<Share>,
    /// Packets per ECN codepoint: Not-ECT, ECT(0), ECT(1), CE (the codepoints of the flows
    /// whose packets are mostly of this class).
    pub ecn: [u64; 4],
}

/// Packets of one class on one value (or, when a flow carried several, on one of those).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Share {
    /// The value; several when a flow's packets carried several and the report does not
    /// say how many each (its packets are counted here, not split).
    pub values: Vec<u8>,
    /// Packets.
    pub packets: u64,
    /// Flows (one direction of a QP) that contributed.
    pub flows: u64,
}

impl ClassMarks {
    fn add(&mut self, packets: u64, dscp: &[u8], pcp: &[u8]) {
        if packets == 0 {
            return;
        }
        self.packets = self.packets.saturating_add(packets);
        for (list, values) in [(&mut self.dscp, dscp), (&mut self.pcp, pcp)] {
            match list.iter_mut().find(|s| s.values == values) {
                Some(s) => {
                    s.packets = s.packets.saturating_add(packets);
                    s.flows += 1;
                }
                None => list.push(Share { values: values.to_vec(), packets, flows: 1 }),
            }
        }
    }

    fn sort(&mut self) {
        for list in [&mut self.dscp, &mut self.pcp] {
            list.sort_by(|a, b| b.packets.cmp(&a.packets).then_with(|| a.values.cmp(&b.values)));
        }
    }

    /// Whether `value` is among the values packets of this class carried (exactly or as one
    /// of a flow's several).
    pub fn dscp_possible(&self, value: u8) -> bool {
        self.dscp.iter().any(|s| s.values.contains(&value))
    }

    /// Packets known to carry `value` (flows with that value alone).
    pub fn dscp_exact(&self, value: u8) -> u64 {
        self.dscp.iter().filter(|s| s.values == [value]).map(|s| s.packets).sum()
    }

    /// Every DSCP value this class carried.
    pub fn dscp_values(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self.dscp.iter().flat_map(|s| s.values.iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The pooled latency of several flows: samples summed, each percentile the samples'
/// weighted percentile of the flows' own (exact for one flow; for many, the percentile of
/// the flows' percentiles, weighted by their samples: docs/verdicts.md "Change verdicts").
pub fn pool(stats: &[LatencyStat]) -> Option<LatencyStat> {
    let count: u64 = stats.iter().fold(0u64, |a, s| a.saturating_add(s.count));
    if count == 0 {
        return None;
    }
    let pct = |q: f64, f: fn(&LatencyStat) -> u64| -> u64 {
        let mut v: Vec<(u64, u64)> = stats.iter().filter(|s| s.count > 0).map(|s| (f(s), s.count)).collect();
        v.sort_unstable();
        let want = q * count as f64;
        let mut acc = 0u64;
        for (value, n) in &v {
            acc = acc.saturating_add(*n);
            if acc as f64 >= want {
                return *value;
            }
        }
        v.last().map_or(0, |x| x.0)
    };
    Some(LatencyStat { count, p50_ns: pct(0.5, |s| s.p50_ns), p99_ns: pct(0.99, |s| s.p99_ns) })
}

/// The bins of a point's series that lie wholly inside its span: (first, last) indices.
/// At most `len` bins (the series' own length): a report document's times cannot ask for
/// more than its series holds.
fn whole_bins(tl: &TimelinePoint, origin: i64, start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let w = i64::try_from(tl.bin_ns).ok().filter(|w| *w > 0)?;
    let (s, e) = (start.checked_sub(origin)?, end.checked_sub(origin)?);
    // The first bin starting at or after the point's first frame; the last ending by its
    // last (a bin whose end is the last frame's time is whole enough).
    let first = s.checked_add(w - 1)?.div_euclid(w);
    let last = e.checked_add(1)?.div_euclid(w) - 1;
    let last = last.min(i64::try_from(len).ok()? - 1);
    (last >= first && first >= 0).then_some((usize::try_from(first).ok()?, usize::try_from(last).ok()?))
}

impl Profile {
    /// The profile of a report's facts.
    pub fn from_facts(r: &ReportFacts) -> Profile {
        let mut findings = BTreeMap::new();
        let mut findings_worst: BTreeMap<String, (Severity, String)> = BTreeMap::new();
        for f in &r.findings {
            let n = findings.entry(f.kind.clone()).or_insert(0u64);
            *n = n.saturating_add(f.folded.unwrap_or(1));
            let sev = severity(&f.severity);
            match findings_worst.get_mut(&f.kind) {
                Some(w) if w.0 <= sev => {}
                Some(w) => *w = (sev, f.title.clone()),
                None => {
                    findings_worst.insert(f.kind.clone(), (sev, f.title.clone()));
                }
            }
        }
        let mut family_packets = [0u64; 2];
        for f in &r.flows {
            let i = usize::from(f.src.contains(':'));
            family_packets[i] = family_packets[i].saturating_add(f.packets);
        }
        let by_point = ByPoint::of(r);
        let points = r.points.iter().enumerate().map(|(i, p)| point_profile(r, &by_point, i, p)).collect();
        Profile {
            points,
            sampled: r.sampled.is_some(),
            capture_share: r.summary.capture_quality.as_ref().map(|q| q.share),
            partial: r.interrupted || !r.input_errors.is_empty(),
            findings: Some(findings),
            findings_worst,
            roce: r.summary.roce,
            roce_v1: r.summary.roce_v1,
            family_packets,
            nccl: r.nccl.as_ref().map(|n| n.variables.clone()),
            counters: r
                .counters
                .as_ref()
                .filter(|c| c.mode == "delta")
                .map(|c| c.figures.iter().map(|f| ((f.figure.clone(), f.priority), f.nic)).collect()),
            options: options(r),
        }
    }

    /// The point named `name`.
    pub fn point(&self, name: &str) -> Option<&PointProfile> {
        self.points.iter().find(|p| p.name == name)
    }
}

impl PointProfile {
    /// The priority `p`'s profile.
    pub fn priority(&self, p: u8) -> Option<&PriorityProfile> {
        self.priorities.iter().find(|x| x.priority == p)
    }
}

/// A finding's severity from its document's word (an unknown word: INFO, the mildest).
fn severity(word: &str) -> Severity {
    match word {
        "critical" => Severity::Critical,
        "warning" => Severity::Warning,
        _ => Severity::Info,
    }
}

/// Priority `p`'s entry, made when first met.
fn slot(m: &mut BTreeMap<u8, PriorityProfile>, p: u8) -> &mut PriorityProfile {
    m.entry(p).or_insert_with(|| PriorityProfile { priority: p, ..Default::default() })
}

/// A capture point's index as the documents write it.
fn p_index(i: usize) -> u16 {
    u16::try_from(i).unwrap_or(u16::MAX)
}

fn qp_name(f: &FlowFacts) -> String {
    format!("{} > {} QP {:#x}", f.src, f.dst, f.dest_qp)
}

/// What a report holds per capture point, gathered in one pass over each list: a point's
/// profile then looks at its own flows, series and samples only. Looking them up point by
/// point walked every list once per point (issue 40: 40,000 points took 17-22 s).
struct ByPoint<'a> {
    /// Per point: its flows, in the report's order.
    flows: Vec<Vec<&'a FlowFacts>>,
    /// Per point: its first timeline entry.
    timeline: Vec<Option<&'a TimelinePoint>>,
    /// Per point: its connections.
    connections: Vec<u64>,
    /// The first latency sample set of each (point, priority, kind).
    samples: std::collections::HashMap<(u16, u8, Kind), &'a SampleSet>,
}

impl<'a> ByPoint<'a> {
    fn of(r: &'a ReportFacts) -> ByPoint<'a> {
        let n = r.points.len();
        let mut by = ByPoint {
            flows: vec![Vec::new(); n],
            timeline: vec![None; n],
            connections: vec![0; n],
            samples: std::collections::HashMap::new(),
        };
        for f in &r.flows {
            if let Some(v) = by.flows.get_mut(usize::from(f.point)) {
                v.push(f);
            }
        }
        for t in &r.timeline.points {
            if let Some(slot) = by.timeline.get_mut(usize::from(t.point)) {
                slot.get_or_insert(t);
            }
        }
        for c in &r.connections {
            if let Some(k) = by.connections.get_mut(usize::from(c.point)) {
                *k += 1;
            }
        }
        for s in r.latency_samples.iter().flatten() {
            by.samples.entry((s.point, s.priority, s.kind)).or_insert(s);
        }
        by
    }
}

fn point_profile(
    r: &ReportFacts,
    by: &ByPoint<'_>,
    index: usize,
    p: &super::facts::PointFacts,
) -> PointProfile {
    let flows: &[&FlowFacts] = by.flows.get(index).map_or(&[], Vec::as_slice);
    let span_ns = p.end_ns.zip(p.start_ns).map_or(0, |(e, s)| e.saturating_sub(s).max(0) as u64);
    let mut prios: BTreeMap<u8, PriorityProfile> = BTreeMap::new();
    // The series: bytes, packets, CE and paused time per priority.
    let origin = r.summary.start_ns.unwrap_or(0);
    if let Some(tl) = by.timeline.get(index).copied().flatten() {
        let len = tl.priorities.iter().map(|s| s.bytes.len().max(s.pause_ns.len())).max().unwrap_or(0);
        let bins = p.start_ns.zip(p.end_ns).and_then(|(s, e)| whole_bins(tl, origin, s, e, len));
        let sum = |v: &[u64]| v.iter().fold(0u64, |a, x| a.saturating_add(*x));
        for s in &tl.priorities {
            let x = slot(&mut prios, s.priority);
            x.bytes = sum(&s.bytes);
            x.packets = sum(&s.packets);
            x.ce = sum(&s.ce);
            // Each CNP at the priority its own packet carried (a CNP flow shares its key
            // with the ACKs to the same QP, so a flow's priority cannot tell).
            x.cnps_carried = sum(&s.cnps);
            if let (Some(d), Some(c)) = (&s.data_packets, &s.data_ce) {
                x.data_ecn_packets = sum(d);
                x.data_ce = sum(c);
                x.data_exact = true;
            }
            x.pause_ns = sum(&s.pause_ns);
            if let Some((a, b)) = bins {
                let w = tl.bin_ns as f64;
                x.gbps_bins =
                    (a..=b).map(|i| s.bytes.get(i).copied().unwrap_or(0) as f64 * 8.0 / w).collect();
                x.pause_bins =
                    (a..=b).map(|i| s.pause_ns.get(i).copied().unwrap_or(0) as f64 * 1e6 / w).collect();
            }
        }
    }

    // Per flow: loss, resends, timeouts, latency, QPs, CNPs at the data's priority.
    let mut ack: BTreeMap<u8, Vec<LatencyStat>> = BTreeMap::new();
    let mut read: BTreeMap<u8, Vec<LatencyStat>> = BTreeMap::new();
    let mut marks = Marks::default();
    // Each class's flows' DSCP and PCP sets (data, ACKs, CNPs): the flows per value of the
    // per-packet marks below.
    let mut sets: [Vec<(&[u8], &[u8])>; 3] = Default::default();
    let mut qp = Vec::new();
    let mut pmtu: BTreeMap<u32, u64> = BTreeMap::new();
    for f in flows {
        let pr = f.priority.unwrap_or(0) & 7;
        let data = f.data_packets();
        let x = slot(&mut prios, pr);
        if f.psn.tracked {
            x.data_packets = x.data_packets.saturating_add(f.requests);
            x.network_loss = x.network_loss.saturating_add(f.psn.network_loss_packets);
            x.resends = x.resends.saturating_add(f.psn.retransmits);
            x.timeouts = x.timeouts.saturating_add(f.psn.timeout_events);
        }
        if data > 0 {
            x.qps += 1;
            qp.push(QpFact {
                qp: qp_name(f),
                priority: f.priority,
                data_packets: data,
                dscp: f.dscp.clone(),
                pcp: f.pcp.clone(),
                network_loss: f.psn.network_loss_packets,
                resends: f.psn.retransmits,
            });
            if f.pmtu > 0 {
                let n = pmtu.entry(f.pmtu).or_insert(0);
                *n = n.saturating_add(data);
            }
        }
        ack.entry(pr).or_default().extend(f.latency.ack);
        read.entry(pr).or_default().extend(f.latency.read);
        // A CNP answers the data of the flow its pairing names.
        if f.cnps > 0 {
            let answered = f
                .partner
                .and_then(|d| r.flows.get(d))
                .filter(|d| d.cnps_received > 0 && usize::from(d.point) == index)
                .map_or(pr, |d| d.priority.unwrap_or(0) & 7);
            let y = slot(&mut prios, answered);
            y.cnps = y.cnps.saturating_add(f.cnps);
        }
        // Marks by class; a flow's ECN counts go to the class most of its packets are.
        let (acks, cnps) = (f.ack_packets(), f.cnps);
        for (set, n) in sets.iter_mut().zip([data, acks, cnps]) {
            if n > 0 {
                set.push((&f.dscp, &f.pcp));
            }
        }
        marks.data.add(data, &f.dscp, &f.pcp);
        marks.ack.add(acks, &f.dscp, &f.pcp);
        marks.cnp.add(cnps, &f.dscp, &f.pcp);
        let ecn = [f.ecn.not_ect, f.ecn.ect0, f.ecn.ect1, f.ecn.ce];
        let main = if data >= acks && data >= cnps && data > 0 {
            let x = slot(&mut prios, pr);
            if !x.data_exact {
                x.data_ecn_packets = ecn.iter().fold(x.data_ecn_packets, |a, n| a.saturating_add(*n));
                x.data_ce = x.data_ce.saturating_add(f.ecn.ce);
            }
            &mut marks.data
        } else if acks >= cnps && acks > 0 {
            &mut marks.ack
        } else {
            &mut marks.cnp
        };
        for (slot, n) in main.ecn.iter_mut().zip(ecn) {
            *slot = slot.saturating_add(n);
        }
    }
    // Counted packet by packet, when the report has the counts: exact values per class,
    // where the flows' sets could only say "one of these".
    if let Some(pm) = &p.marks {
        let classes = [(&mut marks.data, &pm.data), (&mut marks.ack, &pm.ack), (&mut marks.cnp, &pm.cnp)];
        for ((m, c), set) in classes.into_iter().zip(&sets) {
            // A value's flows: the class's flows whose set holds it (`None`, untagged: the
            // flows with no PCP); a flow that carried several counts under each.
            let shares = |v: &[super::facts::ValueCountFacts], pcp: bool| {
                v.iter()
                    .filter(|x| x.packets > 0)
                    .map(|x| {
                        let flows = set
                            .iter()
                            .map(|s| if pcp { s.1 } else { s.0 })
                            .filter(|vals| x.value.map_or(vals.is_empty(), |v| vals.contains(&v)))
                            .count() as u64;
                        Share { values: x.value.into_iter().collect(), packets: x.packets, flows }
                    })
                    .collect::<Vec<Share>>()
            };
            m.dscp = shares(&c.dscp, false);
            m.pcp = shares(&c.pcp, true);
            m.packets = c.dscp.iter().fold(0u64, |a, x| a.saturating_add(x.packets));
        }
    }
    for m in [&mut marks.data, &mut marks.ack, &mut marks.cnp] {
        m.sort();
    }
    for x in prios.values_mut() {
        x.ack = ack.get(&x.priority).and_then(|v| pool(v));
        x.read = read.get(&x.priority).and_then(|v| pool(v));
        if r.latency_samples.is_some() {
            let find = |kind: Kind| {
                let here = u16::try_from(index).ok().and_then(|i| by.samples.get(&(i, x.priority, kind)));
                Some(here.map(|s| (*s).clone()).unwrap_or(SampleSet {
                    point: p_index(index),
                    priority: x.priority,
                    kind,
                    ..SampleSet::default()
                }))
            };
            x.ack_samples = find(Kind::Ack);
            x.read_samples = find(Kind::Read);
        }
    }
    qp.sort_by(|a, b| a.qp.cmp(&b.qp));
    let connections = by.connections.get(index).copied().unwrap_or(0);
    PointProfile {
        name: p.name.clone(),
        span_ns,
        // The MTU most data went with; ties to the larger.
        pmtu: pmtu.iter().max_by_key(|(m, n)| (**n, **m)).map_or(0, |(m, _)| *m),
        qps: qp.len() as u64,
        connections,
        priorities: prios.into_values().collect(),
        marks,
        qp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_latency() {
        let one = LatencyStat { count: 10, p50_ns: 5_000, p99_ns: 9_000 };
        assert_eq!(pool(&[one]), Some(one));
        let slow = LatencyStat { count: 90, p50_ns: 20_000, p99_ns: 40_000 };
        let p = pool(&[one, slow]).unwrap();
        assert_eq!((p.count, p.p50_ns, p.p99_ns), (100, 20_000, 40_000));
        assert_eq!(pool(&[]), None);
    }
}
