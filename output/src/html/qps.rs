//! The top QPs: the connections the text report lists first (the worst, then the
//! busiest), each flow with a sparkline of its throughput and its PSN events.

use super::charts;
use super::page::list;
use super::tables::{evidence, Evidence};
use rocescope_analyzer::report::{FlowReport, StreamedReport};

/// Evidence frames shown per flow.
const EVIDENCE_SHOWN: usize = 6;

/// The section: a row per flow of the top connections.
pub(super) struct QpSection {
    /// Why there is no row, when there is none.
    pub note: Option<String>,
    pub rows: Vec<QpRow>,
    /// Connections not shown.
    pub more: usize,
}

/// One flow (one direction of a QP).
pub(super) struct QpRow {
    pub flow: usize,
    pub point: u16,
    pub src: String,
    pub dst: String,
    pub qp: String,
    pub health: String,
    pub packets: u64,
    pub bytes: u64,
    pub rate: String,
    pub bin_ns: u64,
    /// Wire bytes per bin, as `data-bins`.
    pub bins: String,
    pub spark: Result<String, String>,
    /// The PSN events that happened (name, count), as text and `data-psn-*`.
    pub events: Vec<(&'static str, u64)>,
    pub evidence: Vec<Evidence>,
}

/// The PSN events of a flow worth a word (those that happened).
fn events(f: &FlowReport) -> Vec<(&'static str, u64)> {
    let p = &f.psn;
    let all = [
        ("gaps", p.gaps),
        ("missing", p.missing),
        ("network-loss", p.network_loss_packets),
        ("capture-loss-gaps", p.capture_loss_gaps),
        ("retransmits", p.retransmits),
        ("retransmits-nak", p.retransmits_nak),
        ("retransmits-timeout", p.retransmits_timeout),
        ("timeouts", p.timeout_events),
        ("out-of-order", p.out_of_order),
        ("duplicates", p.duplicates),
        ("spurious-naks", p.spurious_naks),
        ("naks", f.naks.psn_seq_err),
        ("rnr-naks", f.naks.rnr),
        ("resyncs", p.resyncs),
        ("psn-violations", p.psn_violations),
    ];
    all.into_iter().filter(|(_, n)| *n > 0).collect()
}

/// The first `n` connections in the text report's order, a row per flow.
pub(super) fn top(sr: &StreamedReport<'_>, n: usize) -> QpSection {
    let r = &sr.report;
    let start = r.summary.start_ns.unwrap_or(0);
    let duration = r.summary.end_ns.unwrap_or(start).saturating_sub(start).max(0);
    let mut rows = Vec::new();
    for c in &sr.worst_connections(n) {
        for id in c.flows.iter() {
            let Some(f) = sr.flow(*id) else { continue };
            let t = &f.throughput;
            let color = charts::priority_color(f.priority.unwrap_or(0));
            let values: Vec<f64> = t.bins.iter().map(|b| *b as f64).collect();
            let span = usize::try_from(duration / t.bin_ns.max(1) as i64 + 1).unwrap_or(0).min(1 << 16);
            let evidence = r
                .findings
                .iter()
                .filter(|x| x.flow == Some(f.id))
                .flat_map(|x| evidence(x, start, EVIDENCE_SHOWN))
                .take(EVIDENCE_SHOWN)
                .collect();
            rows.push(QpRow {
                flow: f.id,
                point: f.point,
                src: f.src.clone(),
                dst: f.dst.clone(),
                qp: format!("0x{:06x}", f.dest_qp),
                health: f.health.to_string(),
                packets: f.packets,
                bytes: f.bytes,
                rate: format!("{:.2}/{:.2}", t.mean_gbps, t.peak_gbps),
                bin_ns: t.bin_ns,
                bins: list(&t.bins),
                spark: charts::sparkline(&values, span, color),
                events: events(&f),
                evidence,
            });
        }
    }
    let note = rows.is_empty().then(|| "no RoCE connection in the capture".to_string());
    QpSection { note, rows, more: sr.connection_count().saturating_sub(n) }
}
