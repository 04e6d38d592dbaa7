//! The page's parts as the template shows them, and the page built from a report.

use super::{fabric, qps, tables, timeline};
use askama::Template;
use rocescope_analyzer::report::{FindingKind, StreamedReport};
use rocescope_capture::text::escape;

/// The whole page (`templates/report.html`).
#[derive(Template)]
#[template(path = "report.html")]
pub(super) struct Page {
    pub source: String,
    pub summary: String,
    pub verdict: Verdict,
    pub notes: Vec<String>,
    pub quality: Option<String>,
    pub findings: Vec<tables::FindingView>,
    pub throughput: Section,
    pub paused: Section,
    pub pfc: Vec<tables::PauseRow>,
    pub congestion: Section,
    pub rhythm: Section,
    pub ecmp: Section,
    pub audit: tables::AuditView,
    pub qps: qps::QpSection,
}

impl Page {
    /// The chart sections in their order: element id, heading, the charts, and the pause
    /// table under them (empty but under the paused time).
    fn chart_sections(&self) -> [(&'static str, &'static str, &Section, &[tables::PauseRow]); 5] {
        [
            ("throughput-section", "Throughput", &self.throughput, &[]),
            ("paused-section", "Paused time", &self.paused, &self.pfc),
            ("congestion-section", "Congestion: CE marks and CNPs", &self.congestion, &[]),
            ("rhythm-section", "Iteration rhythm and stragglers", &self.rhythm, &[]),
            ("ecmp-section", "ECMP paths and uplinks", &self.ecmp, &[]),
        ]
    }
}

/// The headline: how bad the worst finding is, and the counts.
pub(super) struct Verdict {
    /// `critical`, `warning`, `info`, `clean` or `unchecked` (a CSS class and a `data-`
    /// value).
    pub level: &'static str,
    /// The level in words, shown big.
    pub word: &'static str,
    /// The sentence after it.
    pub text: String,
    pub critical: u64,
    pub warning: u64,
    pub info: u64,
    pub violations: usize,
}

/// A section of charts, or one line saying why it has none.
pub(super) struct Section {
    pub note: Option<String>,
    pub charts: Vec<Chart>,
}

impl Section {
    /// A section with nothing to draw, and why.
    pub fn empty(why: impl Into<String>) -> Section {
        Section { note: Some(why.into()), charts: Vec::new() }
    }
}

/// One chart: its SVG, its legend and the values it plots (as `data-*` attributes).
pub(super) struct Chart {
    /// The element id (`throughput-p0`, `ecmp-uplinks`, ...).
    pub id: String,
    /// `data-chart`: what it plots.
    pub kind: &'static str,
    pub title: String,
    /// The figure's own `data-*` attributes (the point, the bin width).
    pub attrs: Vec<Attr>,
    /// The SVG, or why it could not be drawn.
    pub svg: Result<String, String>,
    pub legend: Vec<Legend>,
    /// The plotted values: an element per series, bar or iteration.
    pub series: Vec<Series>,
    /// Lines under the chart.
    pub notes: Vec<String>,
}

/// A `data-NAME="value"` attribute.
pub(super) struct Attr {
    pub name: &'static str,
    pub value: String,
}

/// `data-NAME="value"`.
pub(super) fn attr(name: &'static str, value: impl ToString) -> Attr {
    Attr { name, value: value.to_string() }
}

/// Values as a `data-` attribute holds them: comma-separated, as the JSON has them.
pub(super) fn list<T: ToString>(values: &[T]) -> String {
    values.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// A legend entry.
pub(super) struct Legend {
    pub color: String,
    pub label: String,
    pub dashed: bool,
}

/// One plotted series (or bar, or iteration) as data.
pub(super) struct Series {
    /// Its class: `series`, `bar`, `iteration`.
    pub class: &'static str,
    pub attrs: Vec<Attr>,
}

/// Seconds from the capture start, as the text report writes them.
pub(super) fn rel(ns: i64, start: i64) -> String {
    format!("{:.6} s", (ns - start) as f64 / 1e9)
}

/// A capture point's name for a title, when there are several ("" with one).
pub(super) fn point_name(sr: &StreamedReport<'_>, point: u16) -> Option<String> {
    let r = &sr.report;
    if r.points.len() > 1 {
        r.points.get(usize::from(point)).map(|p| escape(&p.name).to_string())
    } else {
        None
    }
}

pub(super) fn build(sr: &StreamedReport<'_>, source: &str) -> String {
    let r = &sr.report;
    let s = &r.summary;
    let start = s.start_ns.unwrap_or(0);
    let summary = crate::headline::summary_line(s);
    let page = Page {
        source: escape(source).to_string(),
        summary,
        verdict: verdict(sr),
        notes: notes(sr),
        quality: s.capture_quality.as_ref().map(|q| escape(&q.note).to_string()),
        findings: tables::findings(r, start),
        throughput: timeline::throughput(sr),
        paused: timeline::paused(sr),
        pfc: tables::pauses(sr),
        congestion: timeline::congestion(sr),
        rhythm: fabric::rhythm(sr),
        ecmp: fabric::ecmp(sr),
        audit: tables::audit(r),
        qps: qps::top(sr, super::TOP_CONNECTIONS),
    };
    page.render().unwrap_or_else(|e| {
        // The template is checked when the crate is built; writing into a String fails only
        // on a formatting error of a value, which none of these has.
        format!("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>rocescope report</title></head><body><p>the HTML report could not be made: {}</p></body></html>", escape(&e.to_string()).to_string().replace('&', "&amp;").replace('<', "&lt;"))
    })
}

/// The headline, from the findings' counts and the audit (the text report's FINDINGS line
/// and its "none" sentence).
fn verdict(sr: &StreamedReport<'_>) -> Verdict {
    let r = &sr.report;
    let f = &r.summary.findings;
    let violations = r.audit.violations.len();
    let (level, word) = if f.critical > 0 {
        ("critical", "Critical")
    } else if f.warning > 0 {
        ("warning", "Warning")
    } else if f.info > 0 {
        ("info", "Information only")
    } else if r.summary.roce == 0 {
        ("unchecked", "Nothing checked")
    } else {
        ("clean", "Clean")
    };
    let mut text = format!("{} critical, {} warning, {} info finding(s)", f.critical, f.warning, f.info);
    if violations > 0 {
        text.push_str(&format!("; {violations} QoS audit violation(s)"));
    }
    if f.critical + f.warning + f.info == 0 {
        let pauses = if r.pfc.is_empty() { "no pauses" } else { "no pause problems" };
        text = if r.summary.roce == 0 {
            format!("no RoCE seen, so nothing was checked ({pauses})")
        } else {
            let audit = if r.audit.audited {
                "audit clean"
            } else {
                "marking consistent (not audited: no expectations)"
            };
            format!("no loss, no retransmissions, {pauses}, {audit}")
        };
    }
    Verdict { level, word, text, critical: f.critical, warning: f.warning, info: f.info, violations }
}

/// What changes how the whole report reads, said before the findings.
fn notes(sr: &StreamedReport<'_>) -> Vec<String> {
    let r = &sr.report;
    let mut v = Vec::new();
    if let Some(i) = &r.interrupted_at {
        v.push(format!(
            "INTERRUPTED by {} after {} frames: this report is partial, it covers only the frames read",
            i.signal, i.frames_read
        ));
    }
    if let Some(w) = &r.summary.window {
        v.push(format!(
            "a time window: {} frame(s) outside it skipped, in no figure of this report",
            w.frames_outside
        ));
    }
    if let Some(c) = &r.capture {
        if c.kernel_dropped + c.if_dropped > 0 {
            v.push(format!(
                "live capture on {}: {} dropped by kernel, {} by interface (findings may reflect capture loss)",
                escape(&c.interface),
                c.kernel_dropped,
                c.if_dropped
            ));
        }
    }
    if let Some(sm) = &r.sampled {
        let rate = match sm.rate {
            Some(n) => format!("1 in {n}"),
            None => format!("1 in {} to 1 in {}", sm.rate_min, sm.rate_max),
        };
        v.push(format!(
            "SAMPLED capture ({rate}): counts are estimates; loss, resend-cause, reordering and storm verdicts are off; latencies are upper bounds"
        ));
    }
    for e in &r.input_errors {
        v.push(format!("input error: {}", escape(e)));
    }
    if let Some(f) = r.findings.iter().find(|f| f.kind == FindingKind::OneDirection) {
        v.push(escape(&f.title).to_string());
    }
    v
}
