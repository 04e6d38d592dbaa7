//! The report: whole-capture summary, findings worst first, per-flow figures, connections,
//! PFC/PAUSE timelines and the QoS audit. Serialises to the JSON documented in
//! `docs/report-json.md`.

use crate::audit::serde_json_value::Value;
use crate::audit::{FlowRef, Violation};
use crate::findings::FindingSink;
use crate::flow::{EvidenceKind, Flow};
use crate::pfc::{PauseKind, PfcConfig, Timeline, IGNORED_CRITICAL_FRAMES};
use crate::stats::{rates, Rate, Series};
use crate::Analyzer;
use rocescope_decoder::link::mac_string;
use serde::Serialize;

mod capture;
mod connections;
mod ecmp;
mod flows;
mod marking;
mod pauses;
mod points;
mod qos;
mod qp_life;
pub mod quality;
mod rhythm;
mod streamed;

pub(crate) use flows::flow_report;
use flows::{flow_findings, flow_ref, one_direction_finding, qp_name};
use points::{at_point, point_losses};
use qos::{qos_findings, roce_priorities};
pub use streamed::StreamedReport;

pub use rocescope_model::audit::AuditReport;
pub use rocescope_model::connections::{health_rank, ConnFlows, Connection, Word};
pub use rocescope_model::findings::{EvidenceRef, Finding, FindingKind, Severity, SeverityCounts};
pub use rocescope_model::flows::{
    CcReaction, CcReport, CeRunReport, EcnCounts, FlowReport, Latencies, NakCounts, OpcodeCount, PsnReport,
    StallReport, Throughput,
};
pub use rocescope_model::pauses::{PauseDirection, PauseReport};
pub use rocescope_model::points::{ClockFallback, PointCaptureCounters, PointClock, PointLoss, PointReport};
pub use rocescope_model::report::Report;
pub use rocescope_model::summary::{
    CaptureCounters, ConfigReport, Interruption, SampledReport, SflowReport, SflowSource, Summary, Window,
};
pub use rocescope_model::SCHEMA_VERSION;

/// A connection's figures summed over its directions: what a one-line view of it (the text
/// report's table, the UI's QPs row) shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectionTotals {
    /// Packets.
    pub packets: u64,
    /// Wire bytes.
    pub bytes: u64,
    /// First and last packet, ns since the epoch.
    pub first_ns: i64,
    /// Last packet.
    pub last_ns: i64,
    /// Messages.
    pub messages: u64,
    /// PSN gaps.
    pub gaps: u64,
    /// Retransmissions of any cause.
    pub retransmits: u64,
    /// NAK-driven retransmissions.
    pub retransmits_nak: u64,
    /// Timeout retransmissions.
    pub retransmits_timeout: u64,
    /// NAKs of every code but RNR.
    pub naks: u64,
    /// RNR NAKs.
    pub rnr: u64,
    /// CE-marked packets.
    pub ce: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// The busiest window of both directions together (see [`crate::stats::rates`]).
    pub peak_gbps: f64,
    /// Both directions over the windows from the connection's first to its last: the same
    /// basis as `peak_gbps`, never above it. Read it with [`ConnectionTotals::mean_gbps`].
    pub mean_gbps_windows: f64,
    /// Sum of the directions' last-bin rates.
    pub now_gbps: f64,
    /// DSCP values seen, sorted.
    pub dscp: Vec<u8>,
    /// PCP values seen, sorted.
    pub pcp: Vec<u8>,
    /// The UDP source port (ECMP entropy) of each direction: (sender, port of its first
    /// RoCEv2 packet), RoCEv1 directions left out.
    pub udp_src_ports: Vec<(String, u16)>,
}

impl ConnectionTotals {
    /// CE-marked share of the packets, in percent.
    pub fn ce_percent(&self) -> f64 {
        if self.packets > 0 {
            self.ce as f64 * 100.0 / self.packets as f64
        } else {
            0.0
        }
    }

    /// Mean Gb/s over the windows the connection spans, on the same basis as `peak_gbps`
    /// (so never above it).
    pub fn mean_gbps(&self) -> f64 {
        self.mean_gbps_windows
    }
}

/// A connection's totals from a report ([`ConnectionTotals`]: what its one-line views show),
/// summed here rather than in the model: the rates are read from the flows' throughput bins
/// as the analysis reads them ([`crate::stats::rates`]).
pub trait ReportTotals {
    /// Sum `c`'s directions.
    fn connection_totals(&self, c: &Connection) -> ConnectionTotals;
}

impl ReportTotals for Report {
    fn connection_totals(&self, c: &Connection) -> ConnectionTotals {
        let flows: Vec<&FlowReport> = c.flows.iter().filter_map(|i| self.flows.get(*i)).collect();
        totals_of(self, &flows)
    }
}

/// The totals of a connection of `report` whose flows are `flows`.
fn totals_of(report: &Report, flows: &[&FlowReport]) -> ConnectionTotals {
    let sum = |g: &dyn Fn(&FlowReport) -> u64| flows.iter().map(|f| g(f)).sum::<u64>();
    let sorted = |g: &dyn Fn(&FlowReport) -> &[u8]| {
        let mut v: Vec<u8> = flows.iter().flat_map(|f| g(f).iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // Both directions' bins together, over the capture's span; a report without the
    // series (`Analyzer::report_counters`) gives the busier direction's figures.
    let capture_ns =
        report.summary.end_ns.zip(report.summary.start_ns).map_or(0, |(e, s)| (e - s).max(0) as u64);
    let series: Vec<Series<'_>> = flows
        .iter()
        .map(|f| Series {
            width_ns: f.throughput.bin_ns,
            bytes: &f.throughput.bins,
            packets: &f.throughput.packets,
        })
        .collect();
    let rate = if flows.iter().any(|f| f.bytes > 0 && f.throughput.bins.is_empty()) {
        flows
            .iter()
            .max_by_key(|f| f.bytes)
            .map(|f| Rate { mean_gbps: f.throughput.mean_gbps, peak_gbps: f.throughput.peak_gbps })
            .unwrap_or_default()
    } else {
        rates(&series, capture_ns)
    };
    ConnectionTotals {
        packets: sum(&|f| f.packets),
        bytes: sum(&|f| f.bytes),
        first_ns: flows.iter().map(|f| f.first_ns).min().unwrap_or(0),
        last_ns: flows.iter().map(|f| f.last_ns).max().unwrap_or(0),
        messages: sum(&|f| f.messages),
        gaps: sum(&|f| f.psn.gaps),
        retransmits: sum(&|f| f.psn.retransmits),
        retransmits_nak: sum(&|f| f.psn.retransmits_nak),
        retransmits_timeout: sum(&|f| f.psn.retransmits_timeout),
        naks: sum(&|f| {
            f.naks.psn_seq_err
                + f.naks.invalid_request
                + f.naks.remote_access
                + f.naks.remote_operational
                + f.naks.invalid_rd
                + f.naks.other
        }),
        rnr: sum(&|f| f.naks.rnr),
        ce: sum(&|f| f.ecn.ce),
        cnps: sum(&|f| f.cnps),
        peak_gbps: rate.peak_gbps,
        mean_gbps_windows: rate.mean_gbps,
        now_gbps: flows
            .iter()
            .map(|f| {
                f.throughput.bins.last().copied().unwrap_or(0) as f64 * 8.0
                    / f.throughput.bin_ns.max(1) as f64
            })
            .sum(),
        dscp: sorted(&|f| &f.dscp),
        pcp: sorted(&|f| &f.pcp),
        udp_src_ports: flows.iter().filter_map(|f| Some((f.src.clone(), f.udp_src_port?))).collect(),
    }
}

/// A duration in µs with one decimal (below 10 ms), else ms.
fn us_text(ns: i64) -> String {
    if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}

fn bits(mask: u64) -> Vec<u8> {
    (0..64u8).filter(|b| mask & (1 << b) != 0).collect()
}

/// The name of a worst severity (`ok` for none).
fn health_name(s: Option<Severity>) -> &'static str {
    match s {
        Some(Severity::Critical) => "critical",
        Some(Severity::Warning) => "warning",
        Some(Severity::Info) => "info",
        None => "ok",
    }
}

/// How long the capture has lasted: the span the throughput bins cover.
fn capture_ns(a: &Analyzer) -> u64 {
    let t = &a.totals;
    t.end_ns.zip(t.start_ns).map_or(0, |(e, s)| (e - s).max(0) as u64)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// A duration as µs (below 10 ms) or ms.
fn us(ns: i64) -> String {
    if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}

pub(crate) fn build(a: &Analyzer, detail: bool) -> Report {
    build_with(a, detail, true).0
}

/// The report, with its per-flow entries and connections or without them (`flows` and
/// `connections` left empty: they are built one at a time by [`StreamedReport`]), and every
/// flow's worst finding.
pub(crate) fn build_with(a: &Analyzer, detail: bool, with_flows: bool) -> (Report, Vec<Option<Severity>>) {
    let t = &a.totals;
    let mut flows: Vec<FlowReport> = if with_flows {
        // Sized once: a FlowReport is over a kilobyte, and growing by doubling would leave up
        // to half of the largest allocation unused (300 MB at half a million flows).
        let mut v = Vec::with_capacity(a.flows.len());
        v.extend(a.flows.iter().enumerate().map(|(i, f)| flow_report(i, f, a, detail)));
        v
    } else {
        Vec::new()
    };

    let mut findings = FindingSink::new(a.flows.len(), a.cfg.findings_per_kind);
    findings.set_sampled(a.cfg.sampling.is_some());
    let mut violations = Vec::new();
    let points = a.points();
    let pfc = pauses::pause_reports(a, &points, &mut findings, &mut violations);
    pauses::pfc_without_ecn(a, &points, &pfc, &mut findings);

    let incast = crate::incast::report(a, &pfc, &mut findings);
    let timeline = a.fabric_report();
    let rhythm = rhythm::rhythm(a, &pfc, &timeline, &mut findings);
    let (ecmp, elephants) = ecmp::ecmp(a, &timeline, &mut findings);

    qos::audit_violations(a, &mut violations);

    let tally = quality::Tally::of(a);
    quality::remember_share(a, &tally);
    let capture_quality = quality::capture_quality(&tally);
    if capture_quality.is_some() {
        findings.absorb(FindingKind::CaptureLoss);
    }
    for (i, f) in a.flows.iter().enumerate() {
        flow_findings(i, f, a, &mut findings);
    }
    if let Some(q) = &capture_quality {
        quality::capture_quality_finding(q, a, &mut findings);
    }
    one_direction_finding(a, &mut findings);
    qos_findings(&violations, &mut findings, a);
    marking::marking_findings(a, &mut findings);
    capture::capture_findings(t, &mut findings);
    let between = point_losses(a, &mut findings);
    // Every flow's worst finding and the severity counts include the folded findings.
    let counts = findings.counts();
    let suppressed = findings.suppressed();
    let flow_worst = findings.flow_worst().to_vec();
    let findings = findings.finish(|i| a.flows.get(i).map_or_else(|| format!("flow {i}"), |f| qp_name(f, a)));

    for (f, w) in flows.iter_mut().zip(&flow_worst) {
        f.health = health_name(*w).into();
    }
    // Streamed: the connections too are built as they are written.
    let (connections, connection_count) = if with_flows {
        let c = connections::connections(a, &flow_worst);
        let n = c.len();
        (c, n)
    } else {
        (Vec::new(), connections::count(a))
    };

    let sampled = a.cfg.sampling.map(|cfg| {
        let seen = a.sampling_seen();
        let (lo, hi) = if seen.samples == 0 { (cfg.rate, cfg.rate) } else { (seen.rate_min, seen.rate_max) };
        SampledReport {
            source: cfg.source,
            rate: (lo == hi).then_some(lo),
            rate_min: lo,
            rate_max: hi,
            samples: seen.samples,
            loss_verdicts: false,
            suppressed_findings: suppressed,
            latency_upper_bound: true,
        }
    });
    let report = Report {
        sflow: a.sflow_summary(),
        sampled,
        counters: None,
        nccl: None,
        input_errors: Vec::new(),
        interrupted: false,
        interrupted_at: None,
        schema_version: SCHEMA_VERSION,
        summary: Summary {
            packets: t.packets,
            roce: t.roce,
            roce_v1: t.roce_v1,
            non_roce: t.non_roce,
            malformed: t.malformed,
            tunnel_undecoded: t.tunnel_undecoded,
            icrc_bad: t.icrc_bad,
            icrc_truncated: t.icrc_truncated,
            pfc_frames: t.pfc_frames,
            pause_frames: t.pause_frames,
            cnps: t.cnps,
            start_ns: t.start_ns,
            end_ns: t.end_ns,
            flows: a.flows.len() as u64,
            connections: connection_count as u64,
            roce_bytes: t.roce_bytes,
            pmtu: a.pmtu(),
            duplicates: t.duplicates,
            empty_records: 0,
            flows_evicted: t.flows_evicted,
            evicted_packets: t.evicted_packets,
            evicted_bytes: t.evicted_bytes,
            findings: counts,
            frames_held: a.mirror.held_frames(),
            capture_quality,
            window: None,
        },
        findings,
        flows,
        connections,
        pfc,
        timeline,
        incast,
        rhythm,
        ecmp,
        elephants,
        overlay: a.overlay.report(),
        audit: AuditReport { audited: a.cfg.audit.is_set(), expected: a.cfg.audit.clone(), violations },
        config: ConfigReport {
            link_speed_bps: a.cfg.link_speed_bps,
            storm_window_ns: a.cfg.pfc.storm_window_ns,
            storm_threshold: a.cfg.pfc.storm_threshold,
            deadlock_ns: a.cfg.pfc.deadlock_ns,
            pause_allowance_ns: a.cfg.pfc.pause_allowance_ns,
            keep_duplicates: a.cfg.keep_duplicates,
        },
        capture: None,
        points: points::point_reports(a, points),
        between,
        latency_samples: a.latency_samples.report(),
    };
    (report, flow_worst)
}
