//! A report whose per-flow entries are built as they are written.

use super::*;

/// A report whose per-flow entries are built one at a time, as they are written
/// ([`Analyzer::report_streamed`]): a million flows' entries never sit in memory together.
/// It serialises to the same JSON as the [`Report`] [`Analyzer::report`] gives.
pub struct StreamedReport<'a> {
    /// Everything but the per-flow entries and the connections (`flows` and `connections`
    /// are empty: [`StreamedReport::flow`], [`StreamedReport::connections`]).
    pub report: Report,
    analyzer: &'a Analyzer,
    worst: Vec<Option<Severity>>,
}

impl<'a> StreamedReport<'a> {
    pub(crate) fn new(analyzer: &'a Analyzer) -> Self {
        let (report, worst) = build_with(analyzer, true, false);
        StreamedReport { report, analyzer, worst }
    }

    /// Number of flows.
    pub fn flow_count(&self) -> usize {
        self.analyzer.flows.len()
    }

    /// The entry of flow `id`, as `Report::flows[id]` would hold it.
    pub fn flow(&self, id: usize) -> Option<FlowReport> {
        let f = self.analyzer.flows.get(id)?;
        let mut r = flow_report(id, f, self.analyzer, true);
        r.health = health_name(self.worst.get(id).copied().flatten()).into();
        Some(r)
    }

    /// The entry of flow `id` without its throughput series, as
    /// [`Analyzer::report_counters`] gives it (what an exporter needs).
    pub fn flow_counters(&self, id: usize) -> Option<FlowReport> {
        let f = self.analyzer.flows.get(id)?;
        let mut r = flow_report(id, f, self.analyzer, false);
        r.health = health_name(self.worst.get(id).copied().flatten()).into();
        Some(r)
    }

    /// The flows that received CNPs (their `cc` is set), in flow order.
    pub fn cnp_receivers(&self) -> impl Iterator<Item = usize> + '_ {
        self.analyzer
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.cc().is_some() && f.cold().cnps_received > 0)
            .map(|(i, _)| i)
    }

    /// The `n` flows with the busiest bin at the `--bin` width, busiest first (ties in flow
    /// order), with their entries: what a microburst list shows. Ranked from each flow's
    /// [`crate::stats::Burst`] alone, so only the `n` entries are built.
    pub fn top_bursts(&self, n: usize) -> Vec<FlowReport> {
        let mut ranked: Vec<(u64, usize)> = self
            .analyzer
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.bins.burst().peak_gbps.to_bits(), i))
            .filter(|(g, _)| f64::from_bits(*g) > 0.0)
            .collect();
        // Non-negative floats order as their bits do.
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().take(n).filter_map(|(_, i)| self.flow(i)).collect()
    }

    /// Number of connections (`Report::connections.len()` of the report built whole).
    pub fn connection_count(&self) -> usize {
        connections::count(self.analyzer)
    }

    /// The connections, as `Report::connections` would hold them, built one at a time
    /// (`report.connections` is empty: the list of 100,000 connections held 9.6 MB).
    pub fn connections(&self) -> impl Iterator<Item = Connection> + '_ {
        connections::iter(self.analyzer, &self.worst)
    }

    /// The first `n` connections in the text report's order: the worst health first
    /// (critical, warning, info, then the rest), then the most packets, ties in the
    /// report's order.
    pub fn worst_connections(&self, n: usize) -> Vec<Connection> {
        connections::worst_first(self.analyzer, &self.worst, n)
    }

    /// Totals of a connection, as [`Report::connection_totals`] gives them.
    pub fn connection_totals(&self, c: &Connection) -> ConnectionTotals {
        let flows: Vec<FlowReport> = c.flows.iter().filter_map(|i| self.flow(*i)).collect();
        let refs: Vec<&FlowReport> = flows.iter().collect();
        totals_of(&self.report, &refs)
    }
}

/// The flows of a [`StreamedReport`], serialised one by one.
struct LazyFlows<'r, 'a>(&'r StreamedReport<'a>);

impl Serialize for LazyFlows<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.flow_count()))?;
        for id in 0..self.0.flow_count() {
            if let Some(f) = self.0.flow(id) {
                seq.serialize_element(&f)?;
            }
        }
        seq.end()
    }
}

/// The connections of a [`StreamedReport`], serialised one by one.
struct LazyConnections<'r, 'a>(&'r StreamedReport<'a>);

impl Serialize for LazyConnections<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.connection_count()))?;
        for c in self.0.connections() {
            seq.serialize_element(&c)?;
        }
        seq.end()
    }
}

/// [`Report`]'s fields in its order, with the flows built as they are written.
#[derive(Serialize)]
struct ReportView<'r, 'a> {
    schema_version: u32,
    summary: &'r Summary,
    findings: &'r [Finding],
    flows: LazyFlows<'r, 'a>,
    connections: LazyConnections<'r, 'a>,
    pfc: &'r [PauseReport],
    timeline: &'r rocescope_model::fabric::FabricReport,
    incast: &'r [rocescope_model::incast::IncastReport],
    #[serde(skip_serializing_if = "<[rocescope_model::rhythm::RhythmReport]>::is_empty")]
    rhythm: &'r [rocescope_model::rhythm::RhythmReport],
    ecmp: &'r rocescope_model::ecmp::EcmpReport,
    elephants: &'r rocescope_model::ecmp::ElephantsReport,
    #[serde(skip_serializing_if = "<[rocescope_model::overlay::VtepPairReport]>::is_empty")]
    overlay: &'r [rocescope_model::overlay::VtepPairReport],
    audit: &'r AuditReport,
    config: &'r ConfigReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<&'r CaptureCounters>,
    points: &'r [PointReport],
    between: &'r [PointLoss],
    latency_samples: &'r [rocescope_model::latency_samples::SampleSet],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    input_errors: &'r [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    interrupted_at: Option<&'r Interruption>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampled: Option<&'r SampledReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sflow: Option<&'r SflowReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    counters: Option<&'r rocescope_model::counters::CountersReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nccl: Option<&'r rocescope_model::nccl::NcclCheck>,
}

impl Serialize for StreamedReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = &self.report;
        ReportView {
            schema_version: r.schema_version,
            summary: &r.summary,
            findings: &r.findings,
            flows: LazyFlows(self),
            connections: LazyConnections(self),
            pfc: &r.pfc,
            timeline: &r.timeline,
            incast: &r.incast,
            rhythm: &r.rhythm,
            ecmp: &r.ecmp,
            elephants: &r.elephants,
            overlay: &r.overlay,
            audit: &r.audit,
            config: &r.config,
            capture: r.capture.as_ref(),
            points: &r.points,
            between: &r.between,
            latency_samples: &r.latency_samples,
            input_errors: &r.input_errors,
            interrupted: r.interrupted,
            interrupted_at: r.interrupted_at.as_ref(),
            sampled: r.sampled.as_ref(),
            sflow: r.sflow.as_ref(),
            counters: r.counters.as_ref(),
            nccl: r.nccl.as_ref(),
        }
        .serialize(s)
    }
}
