//! How much of the traffic the capture holds, said once at the top of the report.
//!
//! A capture device that keeps a small share of the packets (a lossy SPAN, a snap of a busy
//! port, ibdump under load) leaves PSN gaps that no NAK or resend explains: per flow they are
//! `capture_loss` findings (reference §1.10). When they add up to a large share of the
//! request packets, a list of per-QP gaps beside confident Gb/s figures misleads: every rate
//! and latency is then a sample. The report says it once instead (docs/verdicts.md
//! "Capture quality"), in `summary.capture_quality`, the text header, the TUI header and
//! compare, with one capture-wide `capture_loss` finding in place of the per-flow ones.

use super::*;
pub use rocescope_model::summary::CaptureQuality;

/// A capture holding less than this share of its RoCE request packets gets the headline.
pub const HEADLINE_BELOW: f64 = 0.9;
/// ... and only with at least this many request PSNs missing (a few gaps are not a trend).
pub const HEADLINE_MIN_MISSING: u64 = 16;
/// Below this share, rates and latencies are called sampled.
const SAMPLED_BELOW: f64 = 0.5;

/// The PSNs one flow shows and those the capture missed (UC left out: a UC gap may be
/// network loss, which UC never repairs, so it says nothing of the capture).
fn flow_psns(f: &Flow) -> Option<(u64, u64)> {
    if !f.tracked() || f.uc() || f.psn.requests == 0 {
        return None;
    }
    let st = f.psn.stats();
    let seen = f.psn.requests.saturating_sub(st.retransmits);
    // Gaps' PSNs, less those lost in the network (NAKed or resent) and those a late packet
    // filled: what remains the capture never held.
    let missing = st.missing.saturating_sub(st.lost_here).saturating_sub(st.out_of_order);
    Some((seen, if f.psn.capture_loss_gaps() > 0 { missing } else { 0 }))
}

/// The request PSNs the capture holds and misses, over its RC/XRC request flows.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    seen: u64,
    missing: u64,
    flows: u64,
}

impl Tally {
    /// Over every flow (a capture sampled on purpose counts nothing: its gaps are the
    /// sampling's, "Sampled captures").
    pub(super) fn of(a: &Analyzer) -> Tally {
        let mut t = Tally::default();
        if a.cfg.sampling.is_some() {
            return t;
        }
        for (s, m) in a.flows.iter().filter_map(flow_psns) {
            t.seen = t.seen.saturating_add(s);
            t.missing = t.missing.saturating_add(m);
            t.flows += u64::from(m > 0);
        }
        t
    }

    /// seen / (seen + missing); 1.0 when nothing was seen.
    pub(super) fn share(&self) -> f64 {
        let total = self.seen.saturating_add(self.missing);
        if total == 0 {
            1.0
        } else {
            self.seen as f64 / total as f64
        }
    }
}

/// The capture's share of its request packets, when it is low enough to say so.
pub(super) fn capture_quality(t: &Tally) -> Option<CaptureQuality> {
    let (seen, missing, flows) = (t.seen, t.missing, t.flows);
    let total = seen.saturating_add(missing);
    if total == 0 || missing < HEADLINE_MIN_MISSING {
        return None;
    }
    let share = seen as f64 / total as f64;
    if share >= HEADLINE_BELOW {
        return None;
    }
    let pct = (share * 100.0).round().max(1.0);
    let advice = if share < SAMPLED_BELOW {
        "treat rates and latencies as sampled".to_string()
    } else {
        format!("rates and counts are low by about {:.0}%", 100.0 - pct)
    };
    let note = format!(
        "the capture holds about {pct:.0}% of this traffic ({} seen, about {} missing in PSN gaps no NAK or resend explains, on {}): {advice}",
        plural(seen, "request packet", "request packets"),
        missing,
        plural(flows, "QP", "QPs"),
    );
    Some(CaptureQuality { share, psns_seen: seen, psns_missing: missing, flows, note })
}

/// Keep the share for the verdicts of this report that a lossy capture weakens.
pub(super) fn remember_share(a: &Analyzer, t: &Tally) {
    a.capture_share.store(t.share().to_bits(), std::sync::atomic::Ordering::Relaxed);
}

/// The share the report being built found: below 1.0 once the capture shows it dropped
/// request packets (an ACK missing from such a capture may be the capture's loss, not the
/// network's).
pub(super) fn share(a: &Analyzer) -> f64 {
    let s = f64::from_bits(a.capture_share.load(std::sync::atomic::Ordering::Relaxed));
    if s.is_nan() {
        1.0
    } else {
        s
    }
}

/// The one capture-wide `capture_loss` finding that stands for the per-flow ones when the
/// headline is said (they are absorbed by the sink: [`FindingSink::absorb`]).
pub(super) fn capture_quality_finding(q: &CaptureQuality, a: &Analyzer, out: &mut FindingSink) {
    let gaps: u64 = a.flows.iter().filter(|f| !f.uc()).map(|f| f.psn.capture_loss_gaps()).sum();
    let mut evidence: Vec<EvidenceRef> = a
        .flows
        .iter()
        .filter(|f| !f.uc())
        .filter_map(|f| f.psn.unexplained_gaps().next().map(|g| (f, *g)))
        .map(|(f, g)| EvidenceRef {
            frame: g.frame,
            ts_ns: g.ts_ns,
            what: format!(
                "{}: PSN {}..{} missing, never NAKed or resent",
                qp_name(f, a),
                g.start,
                crate::psn::psn_add(g.start, g.count.saturating_sub(1))
            ),
        })
        .collect();
    evidence.sort_by_key(|e| e.frame);
    evidence.truncate(3);
    out.push(Finding::about_capture(
        Severity::Info,
        FindingKind::CaptureLoss,
        format!(
            "{} on {} that no NAK or resend explains: about {} request PSNs the capture never held (it holds about {:.0}% of this traffic), not lost in the network",
            plural(gaps, "PSN gap", "PSN gaps"),
            plural(q.flows, "QP", "QPs"),
            q.psns_missing,
            (q.share * 100.0).round().max(1.0),
        ),
        evidence,
        q.psns_missing,
    ));
}
