//! The `nccl` section of the report: each `NCCL_IB_*` setting beside what the capture shows,
//! and a `nccl_env_mismatch` finding for each one the wire contradicts. A pure function of
//! the environment and a finished report: nothing here runs per frame.
//!
//! A verdict is `match`, `mismatch` (with the value that would match the wire) or
//! `not_checked` with the reason: a check the capture cannot decide (no resend to time, no
//! VLAN tag to read a PCP from, a sampled capture) says so instead of passing or failing.
//! No mismatch is critical: the variable may not be what set the wire (a host can force the
//! DSCP, NCCL ≥ 2.26 lets the application set the traffic class, the GID table is the
//! host's), so a mismatch is a warning, or context (info) where the rule is a heuristic.

use super::env::NcclEnv;
use super::rules;
use crate::report::{Connection, EvidenceRef, FlowReport, Report, Severity};
pub use rocescope_model::nccl::{NcclCheck, VarCheck, Verdict};
use std::borrow::Borrow;
use std::net::IpAddr;

/// How the rules build a variable's check ([`VarCheck`]): its value from the environment,
/// then its verdict.
pub(super) trait Build: Sized {
    /// A check of `name` (value and line from `env`), to be given its verdict.
    fn new(env: &NcclEnv, name: &str) -> Self;

    /// Not checked, because `why`.
    fn not_checked(self, why: impl Into<String>) -> Self;

    /// A mismatch: `why`, and the value that would match the wire.
    fn mismatch(self, severity: Severity, why: String, would: String) -> Self;

    /// A mismatch where the hosts disagree: no value would match every host (`reason` names
    /// the hosts that do not follow the setting).
    fn mismatch_hosts(self, severity: Severity, why: String) -> Self;

    /// A match, with an optional note.
    fn matched(self, note: Option<String>) -> Self;
}

impl Build for VarCheck {
    fn new(env: &NcclEnv, name: &str) -> Self {
        let var = env.get(name).filter(|v| !v.value.trim().is_empty());
        VarCheck {
            name: name.to_string(),
            value: var.map(|v| v.value.trim().to_string()),
            line: var.map(|v| v.line),
            sets: String::new(),
            wire: String::new(),
            verdict: Verdict::NotChecked,
            reason: None,
            would_match: None,
            severity: None,
            checked: 0,
            evidence: Vec::new(),
        }
    }

    fn not_checked(mut self, why: impl Into<String>) -> Self {
        self.verdict = Verdict::NotChecked;
        self.reason = Some(why.into());
        self
    }

    fn mismatch(mut self, severity: Severity, why: String, would: String) -> Self {
        self.verdict = Verdict::Mismatch;
        self.severity = Some(severity);
        self.reason = Some(why);
        self.would_match = Some(would);
        self
    }

    fn mismatch_hosts(mut self, severity: Severity, why: String) -> Self {
        self.verdict = Verdict::Mismatch;
        self.severity = Some(severity);
        self.reason = Some(why);
        self.would_match = None;
        self
    }

    fn matched(mut self, note: Option<String>) -> Self {
        self.verdict = Verdict::Match;
        self.reason = note;
        self
    }
}

/// What the rules need of one flow (taken from its report entry, so that a streamed report
/// never holds every entry at once).
#[derive(Clone, Debug)]
pub(super) struct FlowFacts {
    pub id: usize,
    pub point: u16,
    pub src: Option<IpAddr>,
    pub dst: Option<IpAddr>,
    pub payload_bytes: u64,
    /// Every packet is a request (no ACK, NAK, response or CNP): its DSCPs are its
    /// requests'.
    pub pure: bool,
    /// DSCPs seen (bit n = DSCP n).
    pub dscp: u64,
    /// PCPs seen on tagged packets (bit n = PCP n).
    pub pcp: u8,
    /// Not-ECT, ECT(1), ECT(0), CE.
    pub ecn: [u64; 4],
    pub priority: Option<u8>,
    /// A RoCEv2 packet was seen (else RoCEv1 only).
    pub v2: bool,
    pub first_frame: u64,
    pub first_ns: i64,
    pub partner: Option<usize>,
    pub resend_gaps: u64,
    pub gap_min: Option<i64>,
    pub gap_max: Option<i64>,
    pub gap_max_frame: Option<u64>,
    pub retries: u32,
    pub retries_span: i64,
    pub retries_frame: Option<u64>,
}

impl FlowFacts {
    fn of(f: &FlowReport) -> FlowFacts {
        FlowFacts {
            id: f.id,
            point: f.point,
            src: f.src.parse().ok(),
            dst: f.dst.parse().ok(),
            payload_bytes: f.payload_bytes,
            pure: f.requests == f.packets && f.cnps == 0,
            dscp: f.dscp.iter().fold(0, |m, d| m | 1u64.checked_shl(u32::from(*d)).unwrap_or(0)),
            pcp: f.pcp.iter().fold(0, |m, p| m | 1u8.checked_shl(u32::from(*p)).unwrap_or(0)),
            ecn: [f.ecn.not_ect, f.ecn.ect1, f.ecn.ect0, f.ecn.ce],
            priority: f.priority,
            v2: f.udp_src_port.is_some(),
            first_frame: f.first_frame,
            first_ns: f.first_ns,
            partner: f.partner,
            resend_gaps: f.psn.resend_gaps,
            gap_min: f.psn.resend_gap_min_ns,
            gap_max: f.psn.resend_gap_max_ns,
            gap_max_frame: f.psn.resend_gap_max_frame,
            retries: f.psn.retries_max,
            retries_span: f.psn.retries_span_ns,
            retries_frame: f.psn.retries_frame,
        }
    }

    /// A frame that shows this flow, with what it shows.
    pub fn evidence(&self, what: String) -> EvidenceRef {
        EvidenceRef { frame: self.first_frame, ts_ns: self.first_ns, what }
    }

    /// `QP 0x000612 10.0.0.1 → 10.0.0.2`.
    pub fn name(&self, dest_qp: u32) -> String {
        let show = |a: Option<IpAddr>| a.map_or_else(|| "?".to_string(), |a| a.to_string());
        format!("QP 0x{dest_qp:06x} {} → {}", show(self.src), show(self.dst))
    }
}

/// What the rules see: the flows carrying requests, the connections and the capture's kind.
pub(super) struct Wire<'r> {
    pub report: &'r Report,
    /// The report's connections (a streamed report's `report.connections` is empty).
    pub connections: &'r [Connection],
    /// Every flow that carries requests, in flow order.
    pub flows: Vec<FlowFacts>,
    /// Destination QP of each of them (same order), for names.
    pub qps: Vec<u32>,
    /// Flows (of any kind) seen, for the wording when none carries requests.
    pub all_flows: u64,
}

impl Wire<'_> {
    /// The facts of flow `id`, when it carries requests.
    pub fn flow(&self, id: usize) -> Option<&FlowFacts> {
        self.flows.binary_search_by_key(&id, |f| f.id).ok().and_then(|i| self.flows.get(i))
    }

    /// The name of a flow in `flows`.
    pub fn flow_name(&self, f: &FlowFacts) -> String {
        let i = self.flows.binary_search_by_key(&f.id, |x| x.id).unwrap_or(0);
        f.name(self.qps.get(i).copied().unwrap_or(0))
    }

    /// The capture is sampled: verdicts that need every packet are not given.
    pub fn sampled(&self) -> bool {
        self.report.sampled.is_some()
    }
}

/// Check `env` against `report`, whose flows are in `report.flows` (a report built with
/// them: [`crate::Analyzer::report`]).
pub fn check(env: &NcclEnv, report: &Report) -> NcclCheck {
    check_flows(env, report, &report.connections, report.flows.iter())
}

/// Check `env` against `report` with its flows given one at a time (a streamed report's
/// entries, [`crate::report::StreamedReport::flow_counters`]), and its connections
/// (a streamed report's [`crate::report::StreamedReport::connections`]): only what the rules
/// need of each flow is kept.
pub fn check_flows<F: Borrow<FlowReport>>(
    env: &NcclEnv,
    report: &Report,
    connections: &[Connection],
    flows: impl IntoIterator<Item = F>,
) -> NcclCheck {
    let mut wire = Wire { report, connections, flows: Vec::new(), qps: Vec::new(), all_flows: 0 };
    for f in flows {
        let f = f.borrow();
        wire.all_flows += 1;
        if f.requests > 0 {
            wire.flows.push(FlowFacts::of(f));
            wire.qps.push(f.dest_qp);
        }
    }
    // In flow order (streamed entries come in order already), for `Wire::flow`.
    if !wire.flows.is_sorted_by_key(|f| f.id) {
        let flows = std::mem::take(&mut wire.flows);
        let qps = std::mem::take(&mut wire.qps);
        let mut pairs: Vec<(FlowFacts, u32)> = flows.into_iter().zip(qps).collect();
        pairs.sort_by_key(|(f, _)| f.id);
        (wire.flows, wire.qps) = pairs.into_iter().unzip();
    }
    let variables = rules::all(env, &wire);
    let count = |v: Verdict| variables.iter().filter(|c| c.verdict == v).count() as u64;
    NcclCheck {
        file: None,
        version: env.version,
        matched: count(Verdict::Match),
        mismatched: count(Verdict::Mismatch),
        not_checked: count(Verdict::NotChecked),
        variables,
    }
}

/// Set the check in `report`: its `nccl` section, and its findings among the others (after
/// those of their severity already there), counted in the summary.
pub fn attach(report: &mut Report, check: NcclCheck) {
    for f in check.findings() {
        let counts = &mut report.summary.findings;
        match f.severity {
            Severity::Critical => counts.critical += 1,
            Severity::Warning => counts.warning += 1,
            Severity::Info => counts.info += 1,
        }
        let at =
            report.findings.iter().position(|x| x.severity > f.severity).unwrap_or(report.findings.len());
        report.findings.insert(at, f);
    }
    report.nccl = Some(check);
}

/// The text report's NCCL section.
pub fn render_text(c: &NcclCheck) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let version = c.version.map_or_else(|| "version unknown".to_string(), |v| format!("NCCL {v}"));
    let file = c.file.as_deref().map(|f| format!("{f}, ")).unwrap_or_default();
    let _ = writeln!(
        o,
        "NCCL SETTINGS AGAINST THE WIRE ({file}{version}): {} match, {} mismatch, {} not checked",
        c.matched, c.mismatched, c.not_checked
    );
    for v in &c.variables {
        let mark = match v.verdict {
            Verdict::Match => "match",
            Verdict::Mismatch => "MISMATCH",
            Verdict::NotChecked => "not checked",
        };
        let _ = writeln!(o, "  {:<40} {mark}", v.setting());
        if !v.sets.is_empty() {
            let _ = writeln!(o, "      sets: {}", v.sets);
        }
        if !v.wire.is_empty() {
            let _ = writeln!(o, "      wire: {}", v.wire);
        }
        if let Some(r) = &v.reason {
            let _ =
                writeln!(o, "      {}: {r}", if v.verdict == Verdict::NotChecked { "why" } else { "note" });
        }
        if let Some(w) = &v.would_match {
            let _ = writeln!(o, "      would match: {}={w}", v.name);
        }
    }
    o
}

/// A duration in words: `67.1 ms`, `4.29 s`, `512.0 µs`.
pub(super) fn dur(ns: i64) -> String {
    let f = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{:.2} s", f / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.1} ms", f / 1e6)
    } else {
        format!("{:.1} µs", f / 1e3)
    }
}
