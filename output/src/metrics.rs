//! The analysis as Prometheus metric families (docs/metrics.md), as plain data: built from a
//! [`Report`] by [`Exposition::update`], then encoded for `/metrics` (OpenMetrics or the
//! Prometheus text format, through `prometheus-client`: [`exposition_text`], or
//! [`FamiliesCollector`] in a registry of your own) or as NDJSON lines ([`ndjson_line`]).
//!
//! Label sets are bounded: only N flows get their own series; the rest are summed into
//! `qp="other"`, so the sum over a family's series equals the true total. A flow keeps its
//! series for the exporter's life: moving a flow between its own series and `other` would
//! make Prometheus count its history twice (the flow's series already counted it, and
//! `other` would jump by it), so the top N is chosen once (for a file, at its end: exactly the
//! N busiest) and newcomers take the slots left (see [`Exposition`]).

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;
use rocescope_analyzer::report::{FlowReport, Report, StreamedReport};
use rocescope_analyzer::PauseKind;
use serde::Serialize;
use std::collections::HashMap;

/// Counter or gauge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
}

/// Base unit of a family (appended to the name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseUnit {
    /// Bytes.
    Bytes,
    /// Seconds.
    Seconds,
}

/// One metric family and its series.
#[derive(Clone, Debug)]
pub struct Family {
    /// Name without unit or `_total` (e.g. `rocescope_flow_packets`).
    pub name: &'static str,
    /// HELP text.
    pub help: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
    /// Unit, when the value has one.
    pub unit: Option<BaseUnit>,
    /// Series: labels and value.
    pub samples: Vec<(Labels, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str, kind: Kind, unit: Option<BaseUnit>) -> Self {
        Family { name, help, kind, unit, samples: Vec::new() }
    }

    /// The full sample name as exposed: name, unit, `_total` for counters.
    pub fn sample_name(&self) -> String {
        let mut n = self.name.to_string();
        match self.unit {
            Some(BaseUnit::Bytes) => n.push_str("_bytes"),
            Some(BaseUnit::Seconds) => n.push_str("_seconds"),
            None => {}
        }
        if self.kind == Kind::Counter {
            n.push_str("_total");
        }
        n
    }
}

/// A series' labels.
pub type Labels = Vec<(&'static str, String)>;

/// Per-flow counters, in the order of [`FLOW_COUNTERS`].
type FlowValues = [f64; FLOW_COUNTERS.len()];

/// Per-flow counter families: (family index, extra label). Families are in [`FLOW_FAMILIES`].
const FLOW_COUNTERS: [(usize, Option<(&str, &str)>); 32] = [
    (0, None),
    (1, None),
    (2, None),
    (3, Some(("cause", "nak"))),
    (3, Some(("cause", "rnr"))),
    (3, Some(("cause", "timeout"))),
    (3, Some(("cause", "spurious_nak"))),
    (3, Some(("cause", "implied_nak"))),
    (3, Some(("cause", "unknown"))),
    (4, Some(("code", "psn_sequence_error"))),
    (4, Some(("code", "invalid_request"))),
    (4, Some(("code", "remote_access_error"))),
    (4, Some(("code", "remote_operational_error"))),
    (4, Some(("code", "invalid_rd_request"))),
    (4, Some(("code", "reserved"))),
    (5, None),
    (6, Some(("ecn", "not_ect"))),
    (6, Some(("ecn", "ect0"))),
    (6, Some(("ecn", "ect1"))),
    (6, Some(("ecn", "ce"))),
    (7, None),
    (8, None),
    (9, None),
    (10, None),
    (11, None),
    (12, None),
    (13, None),
    (14, None),
    (15, None),
    (16, Some(("rate", "fell"))),
    (16, Some(("rate", "kept"))),
    (17, None),
];

/// (name, help, unit) of the per-flow families; all counters but [`CAPTURE_LOSS`].
const FLOW_FAMILIES: [(&str, &str, Option<BaseUnit>); 18] = [
    ("rocescope_flow_packets", "RoCE packets of the flow.", None),
    ("rocescope_flow", "Wire bytes (frame length) of the flow.", Some(BaseUnit::Bytes)),
    ("rocescope_flow_payload", "RDMA payload bytes of the flow.", Some(BaseUnit::Bytes)),
    (
        "rocescope_retransmitted_packets",
        "Packets sent again: go-back-N after a NAK, after an RNR NAK, after the ACK timeout, after a NAK for a packet that arrived late (spurious_nak), READs re-issued after out-of-sequence responses (implied_nak), or with no NAK in the capture too soon for a timeout (unknown).",
        None,
    ),
    ("rocescope_naks", "NAKs carried by this (response) flow, by code.", None),
    ("rocescope_rnr_naks", "RNR NAKs carried by this flow.", None),
    ("rocescope_ecn_packets", "Packets by IP ECN codepoint.", None),
    (
        "rocescope_cnp_packets",
        "CNPs carried by this flow (src: notification point; dst: the sender slowed).",
        None,
    ),
    ("rocescope_icrc_errors", "Packets whose ICRC did not match.", None),
    ("rocescope_psn_gaps", "PSN gaps (jumps forward) in the request stream.", None),
    ("rocescope_psn_missing_packets", "PSNs skipped by those gaps.", None),
    ("rocescope_network_loss_gaps", "Gaps explained by a NAK or a resend: lost in the network.", None),
    ("rocescope_capture_loss_gaps", "Gaps never NAKed or resent once settled: probable capture loss.", None),
    ("rocescope_acks", "ACKs carried by this flow.", None),
    ("rocescope_flow_messages", "Messages (last or only packets) of the flow.", None),
    (
        "rocescope_cnp_too_fast",
        "CNPs this (data) flow received sooner after the one before than the CNP pacing (--cnp-pacing-us).",
        None,
    ),
    (
        "rocescope_cc_cnps_evaluated",
        "CNPs this (data) flow received whose sending rate before and after was compared, by whether it fell.",
        None,
    ),
    (
        "rocescope_cc_cnp_intervals",
        "Intervals between consecutive CNPs this (data) flow received (rocescope_cnp_too_fast counts those shorter than the pacing).",
        None,
    ),
];

/// The one per-flow gauge family (index into [`FLOW_FAMILIES`]).
const CAPTURE_LOSS: usize = 12;

fn flow_values(f: &FlowReport) -> FlowValues {
    let p = &f.psn;
    let n = &f.naks;
    let e = &f.ecn;
    let capture_loss = p.capture_loss_gaps;
    let cc = f.cc.as_ref();
    [
        f.packets,
        f.bytes,
        f.payload_bytes,
        p.retransmits_nak.saturating_sub(p.retransmits_rnr + p.retransmits_spurious),
        p.retransmits_rnr,
        p.retransmits_timeout,
        p.retransmits_spurious,
        p.retransmits_implied,
        p.retransmits_unknown,
        n.psn_seq_err,
        n.invalid_request,
        n.remote_access,
        n.remote_operational,
        n.invalid_rd,
        n.other,
        n.rnr,
        e.not_ect,
        e.ect0,
        e.ect1,
        e.ce,
        f.cnps,
        f.icrc_bad,
        p.gaps,
        p.missing,
        p.network_loss_gaps,
        capture_loss,
        f.acks,
        f.messages,
        cc.map_or(0, |c| c.cnp_too_fast),
        cc.map_or(0, |c| c.reaction.fell),
        cc.map_or(0, |c| c.reaction.evaluated - c.reaction.fell),
        cc.and_then(|c| c.cnp_interval).map_or(0, |l| l.count),
    ]
    .map(|v| v as f64)
}

/// Visits every flow of a report in order (the flows of a [`Report`], or those a
/// [`StreamedReport`] builds one at a time).
type FlowsOf<'a> = dyn Fn(&mut dyn FnMut(&FlowReport)) + 'a;

/// A flow's identity across snapshots.
type FlowId = (u16, String, String, u32);

fn flow_id(f: &FlowReport) -> FlowId {
    (f.point, f.src.clone(), f.dst.clone(), f.dest_qp)
}

/// A flow with its own series.
#[derive(Clone, Debug)]
struct Slot {
    /// What it had counted when it got its series (that part stays in `other`).
    baseline: FlowValues,
    /// What earlier lives of the flow counted on this series (the analyzer stopped tracking
    /// it while idle; a flow with the same key may come back).
    carried: FlowValues,
    /// Its UDP source port, once seen (its series stays, as the counters' do).
    port: Option<u16>,
}

/// The exposition state: the flows with their own series, what retired flows left, and the
/// latest families.
#[derive(Debug)]
pub struct Exposition {
    top: usize,
    named: HashMap<FlowId, Slot>,
    /// What flows without series counted before the analyzer stopped tracking them.
    retired_other: FlowValues,
    /// Flows were given series (they keep them).
    assigned: bool,
    /// Highest value exposed per series of the families that must not go down although the
    /// analysis may revise them (audit verdicts, paused time with timestamps out of order).
    ratchet: HashMap<String, f64>,
    families: Vec<Family>,
}

impl Exposition {
    /// Up to `top` flows get their own series.
    pub fn new(top: usize) -> Self {
        Exposition {
            top,
            named: HashMap::new(),
            retired_other: [0.0; FLOW_COUNTERS.len()],
            assigned: false,
            ratchet: HashMap::new(),
            families: Vec::new(),
        }
    }

    /// The families of the last update.
    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// Rebuild the families from a new report. `flows`: include the per-flow families (a
    /// file being read leaves them out until its end, so its top N is exact).
    pub fn update(&mut self, r: &Report, flows: bool) {
        self.update_with(r, &|each: &mut dyn FnMut(&FlowReport)| r.flows.iter().for_each(each), flows);
    }

    /// [`Exposition::update`] over a report whose flows are built one at a time
    /// ([`StreamedReport`]): the exporter's memory follows the flows it names, not all of
    /// them.
    pub fn update_streamed(&mut self, r: &StreamedReport<'_>, flows: bool) {
        let each_flow = |each: &mut dyn FnMut(&FlowReport)| {
            (0..r.flow_count()).filter_map(|i| r.flow_counters(i)).for_each(|f| each(&f));
        };
        self.update_with(&r.report, &each_flow, flows);
    }

    /// The update, with the flows given by `flows_of` (called once or twice, each call
    /// visiting every flow in order).
    fn update_with(&mut self, r: &Report, flows_of: &FlowsOf<'_>, flows: bool) {
        if flows {
            self.select(flows_of);
        }

        let mut fams: Vec<Family> = FLOW_FAMILIES
            .iter()
            .enumerate()
            .map(|(i, (n, h, u))| {
                Family::new(n, h, if i == CAPTURE_LOSS { Kind::Gauge } else { Kind::Counter }, *u)
            })
            .collect();
        let point_name =
            |p: u16| r.points.get(usize::from(p)).map_or_else(|| p.to_string(), |x| x.name.clone());
        // A file being read gets its flow series at its end (an exact top N).
        if flows {
            let mut other: FlowValues = self.retired_other;
            let mut named_rows: Vec<(FlowId, FlowValues)> = Vec::new();
            let mut present: HashMap<FlowId, FlowValues> = HashMap::with_capacity(self.named.len());
            let mut ports: Vec<(FlowId, u16)> = Vec::new();
            flows_of(&mut |f: &FlowReport| {
                let v = flow_values(f);
                let id = flow_id(f);
                if self.named.contains_key(&id) {
                    if let Some(p) = f.udp_src_port {
                        ports.push((id.clone(), p));
                    }
                    present.insert(id, v);
                } else {
                    for (o, x) in other.iter_mut().zip(&v) {
                        *o += x;
                    }
                }
            });
            for (id, port) in ports {
                if let Some(slot) = self.named.get_mut(&id) {
                    slot.port = Some(port);
                }
            }
            for (id, slot) in &self.named {
                let mut own = slot.carried;
                if let Some(v) = present.get(id) {
                    for (k, o) in own.iter_mut().enumerate() {
                        if FLOW_COUNTERS[k].0 == CAPTURE_LOSS {
                            *o += v[k]; // a gauge: its value now
                        } else {
                            // What it counted before getting its series stays in `other`.
                            *o += v[k] - slot.baseline[k];
                            other[k] += slot.baseline[k];
                        }
                    }
                }
                named_rows.push((id.clone(), own));
            }
            // Stable order: by point, then address, then QP.
            named_rows.sort_by(|a, b| a.0.cmp(&b.0));
            let rows = named_rows.into_iter().map(|((p, src, dst, qp), v)| {
                (vec![("point", point_name(p)), ("src", src), ("dst", dst), ("qp", format!("0x{qp:06x}"))], v)
            });
            let other_row = (
                vec![
                    ("point", "other".to_string()),
                    ("src", "other".to_string()),
                    ("dst", "other".to_string()),
                    ("qp", "other".to_string()),
                ],
                other,
            );
            for (labels, v) in rows.chain(std::iter::once(other_row)) {
                for (k, (fam, extra)) in FLOW_COUNTERS.iter().enumerate() {
                    let mut l = labels.clone();
                    if let Some((key, val)) = extra {
                        l.push((key, (*val).to_string()));
                    }
                    if let Some(f) = fams.get_mut(*fam) {
                        f.samples.push((l, v[k]));
                    }
                }
            }
            // The ECMP entropy of the flows with series of their own: an info-style gauge
            // (its value is the port) to join on their labels.
            let mut sport = Family::new(
                "rocescope_flow_udp_source_port",
                "The UDP source port of the flow's first RoCEv2 packet (the ECMP entropy its NIC set for the QP), for the flows with series of their own.",
                Kind::Gauge,
                None,
            );
            let mut ports: Vec<(FlowId, u16)> =
                self.named.iter().filter_map(|(id, slot)| Some((id.clone(), slot.port?))).collect();
            ports.sort();
            for ((p, src, dst, qp), port) in ports {
                let l =
                    vec![("point", point_name(p)), ("src", src), ("dst", dst), ("qp", format!("0x{qp:06x}"))];
                sport.samples.push((l, f64::from(port)));
            }
            fams.push(sport);
        }

        // Pauses per (point, MAC, priority).
        let mut pfc_frames = Family::new(
            "rocescope_pfc_pause_frames",
            "PFC frames pausing this priority (quanta > 0).",
            Kind::Counter,
            None,
        );
        let mut pfc_xon = Family::new(
            "rocescope_pfc_xon_frames",
            "PFC frames resuming this priority (quanta 0).",
            Kind::Counter,
            None,
        );
        let mut pfc_paused = Family::new(
            "rocescope_pfc_paused",
            "Time the priority was paused (each frame restarts the timer; quanta at the link speed).",
            Kind::Counter,
            Some(BaseUnit::Seconds),
        );
        let mut pfc_storms = Family::new("rocescope_pfc_storms", "Storm periods so far (paused more than the threshold fraction of a window; adjacent windows merged).", Kind::Gauge, None);
        let mut link_frames = Family::new(
            "rocescope_link_pause_frames",
            "802.3x PAUSE frames (whole link).",
            Kind::Counter,
            None,
        );
        let mut link_paused = Family::new(
            "rocescope_link_paused",
            "Time the link was paused by 802.3x PAUSE.",
            Kind::Counter,
            Some(BaseUnit::Seconds),
        );
        for p in &r.pfc {
            let point = point_name(p.point);
            let secs = p.paused_ns.max(0) as f64 / 1e9;
            match p.kind {
                PauseKind::Pfc => {
                    let l = vec![
                        ("point", point),
                        ("mac", p.src_mac.clone()),
                        ("priority", p.priority.to_string()),
                    ];
                    pfc_frames.samples.push((l.clone(), p.pause_frames as f64));
                    pfc_xon.samples.push((l.clone(), p.xon_frames as f64));
                    // Timestamps out of order can shorten a pause already counted.
                    let secs = self.ratcheted("pfc_paused", &l, secs);
                    pfc_paused.samples.push((l.clone(), secs));
                    pfc_storms.samples.push((l, p.storms.len() as f64));
                }
                PauseKind::Pause => {
                    let l = vec![("point", point), ("mac", p.src_mac.clone())];
                    link_frames.samples.push((l.clone(), p.pause_frames as f64));
                    let secs = self.ratcheted("link_paused", &l, secs);
                    link_paused.samples.push((l, secs));
                }
            }
        }
        fams.extend([pfc_frames, pfc_xon, pfc_paused, pfc_storms, link_frames, link_paused]);

        // Whole capture.
        let s = &r.summary;
        let one = |name, help, kind, unit, v: f64| {
            let mut f = Family::new(name, help, kind, unit);
            f.samples.push((Vec::new(), v));
            f
        };
        fams.push(one("rocescope_frames", "Frames read.", Kind::Counter, None, s.packets as f64));
        let mut roce = Family::new(
            "rocescope_roce_packets",
            "RoCE packets that decoded, by version.",
            Kind::Counter,
            None,
        );
        roce.samples.push((vec![("version", "v1".into())], s.roce_v1 as f64));
        roce.samples.push((vec![("version", "v2".into())], s.roce.saturating_sub(s.roce_v1) as f64));
        fams.push(roce);
        fams.push(one(
            "rocescope_roce",
            "Wire bytes of RoCE packets.",
            Kind::Counter,
            Some(BaseUnit::Bytes),
            s.roce_bytes as f64,
        ));
        fams.push(one(
            "rocescope_malformed_packets",
            "Frames to the RoCE port that did not decode.",
            Kind::Counter,
            None,
            s.malformed as f64,
        ));
        fams.push(one(
            "rocescope_non_roce_frames",
            "Frames that are neither RoCE nor MAC Control.",
            Kind::Counter,
            None,
            s.non_roce as f64,
        ));
        fams.push(one(
            "rocescope_flows_evicted",
            "Flows no longer tracked: idle past --flow-idle-timeout, or the least recently seen past --max-flows (what they counted stays in their series or qp=\"other\").",
            Kind::Counter,
            None,
            s.flows_evicted as f64,
        ));
        let mut dups = Family::new(
            "rocescope_mirror_duplicates",
            "RoCE frames that were a mirror's second copy of a packet (left out of the analysis unless --keep-duplicates), per capture point.",
            Kind::Counter,
            None,
        );
        if r.points.len() > 1 {
            for p in &r.points {
                dups.samples.push((vec![("point", p.name.clone())], p.duplicates as f64));
            }
        } else {
            let name = r.points.first().map_or_else(String::new, |p| p.name.clone());
            dups.samples.push((vec![("point", name)], s.duplicates as f64));
        }
        fams.push(dups);
        let mut fan_in = Family::new(
            "rocescope_fan_in",
            "Most senders of data to one receiver in one --bin bin (the receivers with the most, at most 16): incast when 4 or more.",
            Kind::Gauge,
            None,
        );
        for i in &r.incast {
            let point =
                r.points.get(usize::from(i.point)).map_or_else(|| i.point.to_string(), |p| p.name.clone());
            fan_in
                .samples
                .push((vec![("point", point), ("receiver", i.receiver.clone())], f64::from(i.fan_in)));
        }
        fams.push(fan_in);
        fams.extend(rhythm_families(r));
        fams.extend(ecmp_families(r));
        let mut audit = Family::new(
            "rocescope_audit_violations",
            "Packets (or pause frames) that broke the QoS baseline, by kind.",
            Kind::Counter,
            None,
        );
        for &kind in rocescope_analyzer::audit::VIOLATION_KINDS {
            let n: u64 = r.audit.violations.iter().filter(|v| v.what == kind).map(|v| v.packets).sum();
            // A pause on a priority no RoCE used yet stops counting once RoCE appears there;
            // what was exposed stays.
            let l = vec![("kind", kind.to_string())];
            let n = self.ratcheted("audit", &l, n as f64);
            audit.samples.push((l, n));
        }
        fams.push(audit);
        let mut received = Family::new(
            "rocescope_capture_received_packets",
            "libpcap: packets the capture filter passed.",
            Kind::Counter,
            None,
        );
        let mut dropped = Family::new(
            "rocescope_capture_dropped_packets",
            "libpcap: packets dropped, by the kernel (buffer full) or the interface.",
            Kind::Counter,
            None,
        );
        if let Some(c) = &r.capture {
            received.samples.push((vec![("interface", c.interface.clone())], c.received as f64));
            dropped.samples.push((
                vec![("interface", c.interface.clone()), ("by", "kernel".into())],
                c.kernel_dropped as f64,
            ));
            dropped.samples.push((
                vec![("interface", c.interface.clone()), ("by", "interface".into())],
                c.if_dropped as f64,
            ));
        }
        fams.extend([received, dropped]);
        let mut between = Family::new(
            "rocescope_lost_between_points_packets",
            "Packets of a flow captured at point `from` and never at point `to` while both captured it.",
            Kind::Counter,
            None,
        );
        for l in &r.between {
            between.samples.push((
                vec![
                    ("src", l.src.clone()),
                    ("dst", l.dst.clone()),
                    ("qp", format!("0x{:06x}", l.dest_qp)),
                    ("from", point_name(l.from)),
                    ("to", point_name(l.to)),
                ],
                l.packets as f64,
            ));
        }
        fams.push(between);
        fams.push(one("rocescope_flows", "Flows tracked.", Kind::Gauge, None, s.flows as f64));
        // Microbursts (docs/verdicts.md "Microbursts"): the busiest --bin bins per priority.
        let bin_s = r.timeline.base_ns as f64 / 1e9;
        fams.push(one(
            "rocescope_burst_bin",
            "The --bin width the burst figures are measured at.",
            Kind::Gauge,
            Some(BaseUnit::Seconds),
            bin_s,
        ));
        let mut burst = Family::new(
            "rocescope_priority_burst_gbps",
            "The busiest --bin wide bin of RoCE on the priority at the capture point, Gb/s over the bin.",
            Kind::Gauge,
            None,
        );
        let mut burst_ce = Family::new(
            "rocescope_priority_burst_ce_packets",
            "Most ECN-CE marked packets in one --bin wide bin on the priority at the capture point.",
            Kind::Gauge,
            None,
        );
        let mut burst_cnps = Family::new(
            "rocescope_priority_burst_cnp_packets",
            "Most CNPs in one --bin wide bin on the priority (the CNPs' own) at the capture point.",
            Kind::Gauge,
            None,
        );
        for p in &r.timeline.points {
            for ps in &p.priorities {
                let l = vec![("point", point_name(p.point)), ("priority", ps.priority.to_string())];
                burst.samples.push((l.clone(), ps.peak.gbps));
                burst_ce.samples.push((l.clone(), ps.peak.ce as f64));
                burst_cnps.samples.push((l, ps.peak.cnps as f64));
            }
        }
        fams.extend([burst, burst_ce, burst_cnps]);
        // Sampled captures (docs/verdicts.md "Sampled captures"): counters are estimates.
        fams.push(one(
            "rocescope_sampled",
            "1 when the capture is sampled (--sample-rate, sFlow): packet and byte counters are estimates and PSN loss verdicts are off.",
            Kind::Gauge,
            None,
            if r.sampled.is_some() { 1.0 } else { 0.0 },
        ));
        if let Some(sm) = &r.sampled {
            let mut rate = Family::new(
                "rocescope_sampling_rate",
                "One packet in this many is seen, per capture point (sFlow: its latest sample's rate).",
                Kind::Gauge,
                None,
            );
            match &r.sflow {
                Some(sf) => {
                    for src in &sf.sources {
                        rate.samples
                            .push((vec![("point", point_name(src.point))], f64::from(src.sampling_rate)));
                    }
                }
                None => {
                    for p in &r.points {
                        rate.samples.push((vec![("point", p.name.clone())], f64::from(sm.rate_max)));
                    }
                }
            }
            fams.push(rate);
        }
        // NIC counters beside the capture (`--counters`; docs/counters.md).
        if let Some(c) = &r.counters {
            let mut nic = Family::new(
                "rocescope_nic_figure",
                "The NIC's counters (--counters) mapped to canonical figures: the delta between two snapshots (mode=\"delta\") or the absolute value of one (mode=\"absolute\"). docs/counters.md.",
                Kind::Gauge,
                None,
            );
            let mut cap = Family::new(
                "rocescope_nic_figure_capture",
                "What the capture shows for the same figure, for the --counters-host (or the whole capture).",
                Kind::Gauge,
                None,
            );
            let mut dis = Family::new(
                "rocescope_nic_figure_disagree",
                "1 when the figure makes a counters_disagree finding (status capture_misses or capture_more).",
                Kind::Gauge,
                None,
            );
            for row in &c.figures {
                let mut labels = vec![("figure", row.figure.as_str().to_string())];
                if let Some(p) = row.priority {
                    labels.push(("priority", p.to_string()));
                }
                if let Some(n) = row.nic {
                    let mut l = labels.clone();
                    l.push(("mode", c.mode.to_string()));
                    nic.samples.push((l, n as f64));
                }
                if let Some(x) = row.capture {
                    cap.samples.push((labels.clone(), x as f64));
                }
                let bad = matches!(row.status.as_ref(), "capture_misses" | "capture_more");
                dis.samples.push((labels, if bad { 1.0 } else { 0.0 }));
            }
            fams.extend([nic, cap, dis]);
        }
        let mut findings = Family::new("rocescope_findings", "Findings now, by severity.", Kind::Gauge, None);
        for (sev, n) in
            [("critical", s.findings.critical), ("warning", s.findings.warning), ("info", s.findings.info)]
        {
            findings.samples.push((vec![("severity", sev.to_string())], n as f64));
        }
        fams.push(findings);
        if let Some(end) = s.end_ns {
            fams.push(one(
                "rocescope_last_packet_timestamp",
                "Capture time of the latest packet.",
                Kind::Gauge,
                Some(BaseUnit::Seconds),
                end as f64 / 1e9,
            ));
        }
        let mut info =
            Family::new("rocescope_build_info", "Always 1; the version in a label.", Kind::Gauge, None);
        info.samples.push((vec![("version", env!("CARGO_PKG_VERSION").to_string())], 1.0));
        fams.push(info);
        self.families = fams;
    }

    /// Give flows their series: the first time, the `top` busiest (by bytes) from zero; then
    /// newcomers, busiest first, while slots remain, from what they have counted by then
    /// (which stays in `other`). No flow ever loses its series.
    fn select(&mut self, flows_of: &FlowsOf<'_>) {
        let first = !self.assigned;
        self.assigned = true;
        if self.named.len() >= self.top {
            return;
        }
        // The busiest flows not yet named, by bytes (the earlier flow first among equals),
        // kept in a bounded heap: one pass, memory for `top` flows only.
        let want = self.top - self.named.len();
        let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(u64, std::cmp::Reverse<usize>)>> =
            std::collections::BinaryHeap::with_capacity(want + 1);
        let mut picked: HashMap<usize, (FlowId, FlowValues)> = HashMap::with_capacity(want + 1);
        let mut i = 0usize;
        flows_of(&mut |f: &FlowReport| {
            let at = i;
            i += 1;
            let id = flow_id(f);
            if self.named.contains_key(&id) {
                return;
            }
            let key = (f.bytes, std::cmp::Reverse(at));
            if best.len() == want && best.peek().is_some_and(|w| w.0 >= key) {
                return;
            }
            best.push(std::cmp::Reverse(key));
            picked.insert(at, (id, flow_values(f)));
            if best.len() > want {
                if let Some(std::cmp::Reverse((_, std::cmp::Reverse(out)))) = best.pop() {
                    picked.remove(&out);
                }
            }
        });
        for (_, (id, values)) in picked {
            let baseline = if first { [0.0; FLOW_COUNTERS.len()] } else { values };
            self.named.insert(id, Slot { baseline, carried: [0.0; FLOW_COUNTERS.len()], port: None });
        }
    }

    /// Flows the analyzer stopped tracking ([`rocescope_analyzer::Analyzer::evict_idle`]):
    /// what they counted stays exposed, on their own series (which stay, at their last
    /// value, until a flow with the same key counts on them again) or in `other`.
    pub fn retire(&mut self, evicted: &[FlowReport]) {
        for f in evicted {
            let id = flow_id(f);
            let v = flow_values(f);
            match self.named.get_mut(&id) {
                Some(slot) => {
                    for k in 0..FLOW_COUNTERS.len() {
                        if FLOW_COUNTERS[k].0 == CAPTURE_LOSS {
                            slot.carried[k] += v[k];
                        } else {
                            slot.carried[k] += v[k] - slot.baseline[k];
                            self.retired_other[k] += slot.baseline[k];
                        }
                        slot.baseline[k] = 0.0;
                    }
                }
                None => {
                    for (o, x) in self.retired_other.iter_mut().zip(&v) {
                        *o += x;
                    }
                }
            }
        }
    }

    /// `v`, or the highest value this series has shown, whichever is larger.
    fn ratcheted(&mut self, name: &str, labels: &Labels, v: f64) -> f64 {
        let key = format!("{name}{labels:?}");
        let e = self.ratchet.entry(key).or_insert(v);
        *e = e.max(v);
        *e
    }
}

/// Label values with every terminal-unsafe character escaped as the text output escapes it
/// (`\x1b`, `\u{202e}`: rocescope_capture::text::escape). Values are mostly addresses, so
/// they are copied only when one needs it.
fn safe_labels(labels: &Labels) -> Labels {
    labels
        .iter()
        .map(|(k, v)| {
            let v = if v.chars().any(rocescope_capture::text::is_unsafe) {
                rocescope_capture::text::escape(v).to_string()
            } else {
                v.clone()
            };
            (*k, v)
        })
        .collect()
}

/// Encode families through prometheus-client (OpenMetrics or Prometheus text, as the
/// encoder was made).
pub fn encode(families: &[Family], mut enc: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
    for f in families {
        let unit = match f.unit {
            Some(BaseUnit::Bytes) => Some(Unit::Bytes),
            Some(BaseUnit::Seconds) => Some(Unit::Seconds),
            None => None,
        };
        let ty = match f.kind {
            Kind::Counter => MetricType::Counter,
            Kind::Gauge => MetricType::Gauge,
        };
        let mut me = enc.encode_descriptor(f.name, f.help, unit.as_ref(), ty)?;
        for (labels, v) in &f.samples {
            // A label value (a capture file's name) keeps no control character raw: a
            // terminal running `curl .../metrics` would act on it.
            let labels = safe_labels(labels);
            let fam = me.encode_family(&labels)?;
            // Whole numbers print as integers (`6`, not `6.0`).
            let int = (v.fract() == 0.0 && (0.0..9.0e15).contains(v)).then_some(*v as u64);
            match (f.kind, int) {
                (Kind::Counter, Some(n)) => ConstCounter::new(n).encode(fam)?,
                (Kind::Counter, None) => ConstCounter::new(*v).encode(fam)?,
                (Kind::Gauge, Some(n)) => ConstGauge::new(n as i64).encode(fam)?,
                (Kind::Gauge, None) => ConstGauge::new(*v).encode(fam)?,
            }
        }
    }
    Ok(())
}

/// One NDJSON line: every series with its full name.
pub fn ndjson_line(families: &[Family], ts_unix: f64) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        ts: f64,
        metrics: Vec<Sample<'a>>,
    }
    #[derive(Serialize)]
    struct Sample<'a> {
        name: String,
        #[serde(rename = "type")]
        kind: Kind,
        labels: serde_json::Map<String, serde_json::Value>,
        value: f64,
        #[serde(skip)]
        _p: std::marker::PhantomData<&'a ()>,
    }
    let mut metrics = Vec::new();
    for f in families {
        let name = f.sample_name();
        for (labels, v) in &f.samples {
            metrics.push(Sample {
                name: name.clone(),
                kind: f.kind,
                labels: safe_labels(labels)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
                    .collect(),
                value: *v,
                _p: std::marker::PhantomData,
            });
        }
    }
    serde_json::to_string(&Line { ts: ts_unix, metrics }).unwrap_or_default()
}

/// The training rhythm's series (docs/verdicts.md "Iteration rhythm and stragglers"): per
/// capture point that has one, its period, whole iterations and mean busy share, and per host
/// last in two or more iterations, how many.
fn rhythm_families(r: &Report) -> Vec<Family> {
    let point = |p: u16| r.points.get(usize::from(p)).map_or_else(|| p.to_string(), |x| x.name.clone());
    let mut period = Family::new(
        "rocescope_iteration_period_seconds",
        "The training job's iteration period at the capture point, read from the bursts of data (none without a rhythm).",
        Kind::Gauge,
        None,
    );
    let mut iterations = Family::new(
        "rocescope_iterations",
        "Whole iterations (periods) of the rhythm in the capture so far.",
        Kind::Gauge,
        None,
    );
    let mut busy = Family::new(
        "rocescope_iteration_busy_share",
        "Mean share of an iteration from its first burst's start to its last burst's end.",
        Kind::Gauge,
        None,
    );
    let mut last = Family::new(
        "rocescope_straggler_iterations",
        "Iterations a host finished its data last in, by more than 1 ms and 10% of the busy part (hosts last in two or more).",
        Kind::Gauge,
        None,
    );
    for rh in &r.rhythm {
        let p = point(rh.point);
        period.samples.push((vec![("point", p.clone())], rh.period_ns as f64 / 1e9));
        iterations.samples.push((vec![("point", p.clone())], rh.iterations as f64));
        busy.samples.push((vec![("point", p.clone())], rh.busy_share_mean));
        for s in &rh.stragglers {
            last.samples.push((vec![("point", p.clone()), ("host", s.host.to_string())], s.last_in as f64));
        }
    }
    vec![period, iterations, busy, last]
}

/// The ECMP picture's series (docs/verdicts.md "ECMP"): the entropy of each listed host
/// pair's bytes over its UDP source ports beside the most its QPs could give, the busiest
/// path or uplink over the mean (predicted with `--ecmp-paths`, measured with `--uplinks`),
/// each uplink's share, and how concentrated the bytes are in the elephants.
fn ecmp_families(r: &Report) -> Vec<Family> {
    let point = |p: u16| r.points.get(usize::from(p)).map_or_else(|| p.to_string(), |x| x.name.clone());
    let mut entropy = Family::new(
        "rocescope_ecmp_entropy",
        "Entropy, in bits, of a host pair's RoCE data bytes over its UDP source ports (host pairs with two or more data QPs).",
        Kind::Gauge,
        None,
    );
    let mut qp_entropy = Family::new(
        "rocescope_ecmp_qp_entropy",
        "Entropy, in bits, of the pair's RoCE data bytes over its QPs: the most its source ports could give.",
        Kind::Gauge,
        None,
    );
    let mut imbalance = Family::new(
        "rocescope_ecmp_max_over_mean",
        "The busiest ECMP path or uplink's bytes over the mean: predicted by the modelled hash, or measured at the uplinks.",
        Kind::Gauge,
        None,
    );
    let mut uplink = Family::new(
        "rocescope_uplink_share",
        "An uplink's share of the RoCE bytes the uplinks carried (--uplinks).",
        Kind::Gauge,
        None,
    );
    let mut top_share = Family::new(
        "rocescope_elephants_top_share",
        "Share of the RoCE data bytes the 10 largest data flows carry.",
        Kind::Gauge,
        None,
    );
    let mut for_share = Family::new(
        "rocescope_elephants_flows_for_share",
        "The fewest data flows that carry 80% of the data bytes.",
        Kind::Gauge,
        None,
    );
    for h in &r.ecmp.host_pairs {
        let l = vec![("point", point(h.point)), ("src", h.src.to_string()), ("dst", h.dst.to_string())];
        entropy.samples.push((l.clone(), h.entropy_bits));
        qp_entropy.samples.push((l, h.qp_entropy_bits));
    }
    if let Some(p) = &r.ecmp.prediction {
        imbalance.samples.push((vec![("source", "predicted".to_string())], p.max_over_mean));
    }
    if let Some(u) = &r.ecmp.uplinks {
        imbalance.samples.push((vec![("source", "measured".to_string())], u.max_over_mean));
        for l in &u.uplinks {
            uplink.samples.push((vec![("point", point(l.point))], l.share));
        }
    }
    // Always there (0 without data flows): the exporter's series do not vanish when idle
    // flows are evicted.
    top_share.samples.push((Vec::new(), r.elephants.top_share));
    for_share.samples.push((Vec::new(), r.elephants.flows_for_share as f64));
    vec![entropy, qp_entropy, imbalance, uplink, top_share, for_share]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_analyzer::{Analyzer, Config, FrameMeta};
    use rocescope_capture::CaptureReader;
    use rocescope_decoder::{decode, DecodeOptions};
    use std::path::Path;

    fn series(fams: &[Family]) -> HashMap<(String, Labels), f64> {
        fams.iter()
            .flat_map(|f| f.samples.iter().map(move |(l, v)| ((f.sample_name(), l.clone()), *v)))
            .collect()
    }

    /// Feed demo.pcap to an analyzer, calling `step` every `every` frames and at the end
    /// (with `true`).
    fn demo_in_steps(every: u64, mut step: impl FnMut(&mut Analyzer, bool)) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/demo.pcap");
        let mut reader = CaptureReader::open(&path).unwrap();
        let opts = DecodeOptions::default();
        let mut a = Analyzer::new(Config { points: vec!["demo.pcap".into()], ..Config::default() });
        let mut n = 0u64;
        while let Some(rec) = reader.next_record().unwrap() {
            n += 1;
            let p = decode(rec.link_type, rec.data, &opts);
            a.push(&FrameMeta { number: n, ts_ns: rec.ts_ns, len: rec.len, link_bps: None, point: 0 }, &p);
            if n % every == 0 {
                step(&mut a, false);
            }
        }
        step(&mut a, true);
    }

    /// Per family, the sum over all flows in the report (what the series must add up to).
    fn totals(r: &Report) -> Vec<f64> {
        let mut t = vec![0.0; FLOW_FAMILIES.len()];
        for f in &r.flows {
            for (k, v) in flow_values(f).iter().enumerate() {
                t[FLOW_COUNTERS[k].0] += v;
            }
        }
        t
    }

    #[test]
    fn top_n_series_sum_to_the_totals_and_never_go_down() {
        let mut ex = Exposition::new(2);
        let mut before = HashMap::new();
        let mut updates = 0;
        let mut named_sets = Vec::new();
        demo_in_steps(7, |a, _done| {
            let r = a.report();
            ex.update(&r, true);
            updates += 1;
            let mut names: Vec<_> = ex.named.keys().cloned().collect();
            names.sort();
            // Flows keep their series: the named set only grows, up to the limit.
            assert!(named_sets.iter().all(|n: &Vec<_>| n.iter().all(|x| names.contains(x))), "{names:?}");
            named_sets.push(names);
            assert!(ex.named.len() <= 2);
            // The sum over each flow family's series is the true total.
            let want = totals(&r);
            for (i, f) in ex.families()[..FLOW_FAMILIES.len()].iter().enumerate() {
                let got: f64 = f.samples.iter().map(|(_, v)| v).sum();
                assert!((got - want[i]).abs() < 1e-6, "{}: {got} != {}", f.name, want[i]);
                // Top 2 plus `other`, for each extra label value.
                let per = FLOW_COUNTERS.iter().filter(|(fam, _)| *fam == i).count();
                assert!(f.samples.len() <= 3 * per, "{}: {} series", f.name, f.samples.len());
            }
            // Counters never go down; after the first update, a new flow series starts at 0
            // and no series goes away: so Prometheus's rate() and increase() summed over a family
            // are the true rates (a flow moved into `other` would be counted twice).
            let now = series(ex.families());
            for k in before.keys() {
                assert!(now.contains_key(k), "{k:?} disappeared");
            }
            if updates > 1 {
                for (k, v) in &now {
                    let counter =
                        ex.families().iter().any(|f| f.sample_name() == k.0 && f.kind == Kind::Counter);
                    let flow = k.1.iter().any(|(l, _)| *l == "qp");
                    if counter && flow && !before.contains_key(k) {
                        assert_eq!(*v, 0.0, "{k:?} was born at {v}");
                    }
                }
            }
            for (k, v) in &now {
                let fam = ex.families().iter().find(|f| f.sample_name() == k.0).unwrap();
                if fam.kind == Kind::Counter {
                    if let Some(old) = before.get(k) {
                        assert!(v >= old, "{k:?} went from {old} to {v}");
                    }
                }
            }
            before = now;
        });
        assert!(updates > 20);
        assert_eq!(ex.named.len(), 2);
    }

    #[test]
    fn a_file_read_whole_gives_the_top_flows_their_whole_counts() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/demo.pcap");
        let mut reader = CaptureReader::open(&path).unwrap();
        let mut a = Analyzer::new(Config { points: vec!["demo.pcap".into()], ..Config::default() });
        let mut n = 0;
        while let Some(rec) = reader.next_record().unwrap() {
            n += 1;
            let p = decode(rec.link_type, rec.data, &DecodeOptions::default());
            a.push(&FrameMeta { number: n, ts_ns: rec.ts_ns, len: rec.len, link_bps: None, point: 0 }, &p);
        }
        let r = a.report();
        let mut ex = Exposition::new(3);
        // A file: no flow series while it is read, then the exact top 3 at its end.
        ex.update(&r, false);
        assert!(ex.families()[1].samples.is_empty());
        ex.update(&r, true);
        let mut by_bytes: Vec<_> = r.flows.iter().collect();
        by_bytes.sort_by_key(|f| std::cmp::Reverse(f.bytes));
        let bytes = &ex.families()[1];
        assert_eq!(bytes.sample_name(), "rocescope_flow_bytes_total");
        for f in by_bytes.iter().take(3) {
            let qp = format!("0x{:06x}", f.dest_qp);
            let s = bytes
                .samples
                .iter()
                .find(|(l, _)| {
                    l.iter().any(|(k, v)| *k == "qp" && *v == qp)
                        && l.iter().any(|(k, v)| *k == "src" && *v == f.src)
                })
                .unwrap_or_else(|| panic!("no series for {qp}"));
            assert_eq!(s.1, f.bytes as f64);
        }
        let other = bytes.samples.iter().find(|(l, _)| l.iter().any(|(_, v)| v == "other")).unwrap().1;
        let rest: u64 = by_bytes.iter().skip(3).map(|f| f.bytes).sum();
        assert_eq!(other, rest as f64);
        // Prometheus text, through prometheus-client.
        let mut registry = Registry::default();
        registry.register_collector(Box::new(TestCollector(ex.families().to_vec())));
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).unwrap();
        assert!(text.contains("# TYPE rocescope_cnp_packets_total counter"), "{text}");
        assert!(text.contains("# TYPE rocescope_pfc_pause_frames_total counter"));
        assert!(text.contains("rocescope_pfc_paused_seconds_total{point=\"demo.pcap\",mac=\"02:00:00:00:ff:01\",priority=\"3\"} 0.009024"), "{text}");
        assert!(text.contains("rocescope_frames_total 182\n"));
        let line = ndjson_line(ex.families(), 1.5);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["ts"], 1.5);
        assert!(v["metrics"].as_array().unwrap().iter().any(|m| m["name"] == "rocescope_cnp_packets_total"));
    }

    #[test]
    fn flows_evicted_when_idle_stay_counted_and_their_series_stay() {
        let mut ex = Exposition::new(3);
        let mut retired = vec![0.0; FLOW_FAMILIES.len()];
        let mut before: HashMap<(String, Labels), f64> = HashMap::new();
        let (mut evicted_flows, mut most_tracked) = (0, 0);
        demo_in_steps(5, |a, _done| {
            // Flows idle for 50 us of capture time are dropped, as the exporter does.
            let now = a.totals().end_ns.unwrap();
            let gone = a.evict_idle(now - 50_000);
            evicted_flows += gone.len();
            for f in &gone {
                for (k, v) in flow_values(f).iter().enumerate() {
                    retired[FLOW_COUNTERS[k].0] += v;
                }
            }
            ex.retire(&gone);
            let r = a.report();
            most_tracked = most_tracked.max(r.flows.len());
            // Indices stay consistent after eviction: partners point at each other.
            for (i, f) in r.flows.iter().enumerate() {
                assert_eq!(f.id, i);
                if let Some(p) = f.partner {
                    assert_eq!(r.flows[p].partner, Some(i), "{f:?}");
                }
            }
            for c in &r.connections {
                assert!(c.flows.iter().all(|&i| i < r.flows.len()));
            }
            ex.update(&r, true);
            let want = totals(&r);
            for (i, f) in ex.families()[..FLOW_FAMILIES.len()].iter().enumerate() {
                let got: f64 = f.samples.iter().map(|(_, v)| v).sum();
                let all = want[i] + retired[i];
                assert!((got - all).abs() < 1e-6, "{}: {got} != {all}", f.name);
            }
            let now = series(ex.families());
            for (k, old) in &before {
                let v = now.get(k).unwrap_or_else(|| panic!("{k:?} disappeared"));
                let counter = ex.families().iter().any(|f| f.sample_name() == k.0 && f.kind == Kind::Counter);
                assert!(!counter || v >= old, "{k:?} went from {old} to {v}");
            }
            before = now;
        });
        assert!(evicted_flows > 10, "flows were evicted: {evicted_flows}");
        assert!(most_tracked < 20, "at most {most_tracked} flows tracked at once (the demo has 37)");
    }

    #[derive(Debug)]
    struct TestCollector(Vec<Family>);
    impl prometheus_client::collector::Collector for TestCollector {
        fn encode(&self, e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
            encode(&self.0, e)
        }
    }
    use prometheus_client::registry::Registry;
}

/// The families as a `prometheus-client` collector, to register beside a tool's own metrics
/// (`registry.register_collector(Box::new(FamiliesCollector(families)))`).
#[derive(Debug, Clone)]
pub struct FamiliesCollector(pub std::sync::Arc<Vec<Family>>);

impl prometheus_client::collector::Collector for FamiliesCollector {
    fn encode(&self, encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        encode(&self.0, encoder)
    }
}

/// The families as a `/metrics` body: OpenMetrics (`openmetrics`, what Prometheus asks for
/// first) or the Prometheus text format 0.0.4.
pub fn exposition_text(
    families: std::sync::Arc<Vec<Family>>,
    openmetrics: bool,
) -> Result<String, std::fmt::Error> {
    let mut registry = prometheus_client::registry::Registry::default();
    registry.register_collector(Box::new(FamiliesCollector(families)));
    let mut body = String::new();
    if openmetrics {
        prometheus_client::encoding::text::encode(&mut body, &registry)?;
    } else {
        prometheus_client::encoding::prometheus_text::encode(&mut body, &registry)?;
    }
    Ok(body)
}
