//! The findings about a QP's own protocol state (docs/verdicts.md "Transport (per QP)"): new
//! lives of its PSNs (`qp_restart`), PSN rule violations (`psn_violation`), a QP stuck with
//! a request outstanding (`qp_stalled`), and a retry count used up (`retry_exhausted`). All
//! are judged at the end of the capture from the request tracker's counters.

use super::flows::{ev, qp_name};
use super::*;
use crate::psn::{ack_timeout_ns, RETRY_CNT};

/// The ACK timeout assumed when the capture holds no CM REQ for the connection: 4.096 µs x
/// 2^20 = 4.3 s, the largest NCCL_IB_TIMEOUT default (field notes: 18 to 20).
const STALL_TIMEOUT_T: u8 = 20;

/// A request outstanding on a silent QP (see [`stall_of`]).
pub(crate) struct Stall {
    pub psn: u32,
    pub frame: u64,
    pub ts_ns: i64,
    pub silent_ns: i64,
    pub firm: bool,
    /// The silence ended with a CM DREQ (the connection torn down), not the capture's end.
    pub closed: bool,
    /// The capture lost packets (this QP's PSN gaps no NAK or resend explains, or the
    /// capture-quality headline): the missing ACK may be the capture's loss, so the stall is
    /// never firm (docs/verdicts.md "Capture quality").
    pub doubtful: bool,
}

/// The connection's ACK timeout: its CM REQ's, else [`STALL_TIMEOUT_T`]'s.
fn ack_timeout(f: &Flow) -> i64 {
    f.cold().cm_ack_timeout_ns.unwrap_or(ack_timeout_ns(STALL_TIMEOUT_T))
}

/// A stuck QP: an RC/XRC request that asked for an ACK got none (nor a NAK), was never
/// resent, and the QP (both directions) then stayed silent until the end of the capture for
/// at least twice its ACK timeout (a requester whose ACK timer works would have resent by
/// then). `firm` when the silence outlasts the whole retry budget, (RETRY_CNT + 1) x the ACK
/// timeout: the capture went on well past the point the QP would have failed, so the
/// silence is the QP's, not the capture's end. A capture that ends soon after a request
/// gives none. Not on one-way captures, where no ACK could be seen.
pub(crate) fn stall_of(f: &Flow, a: &Analyzer) -> Option<Stall> {
    if !f.tracked() || f.uc() || f.psn.requests == 0 || super::flows::responses_missing(f, a) {
        return None;
    }
    let &(psn, _, ts_ns, frame) = f.outstanding_ackreq.front()?;
    // Resent since: the retry findings speak for it.
    if f.psn.stats().last_burst.is_some_and(|(_, t)| t >= ts_ns) {
        return None;
    }
    let partner_last = f.partner().and_then(|p| a.flows.get(p)).map_or(f.last_ts, |p| p.last_ts);
    let last = f.last_ts.max(partner_last);
    // Up to the DREQ that tore the connection down, when there is one after it.
    let closed = f.cold().cm_closed_ns.filter(|c| *c > last);
    let silent_ns = closed.or(a.totals().end_ns)? - last;
    let t = ack_timeout(f);
    if silent_ns < t.saturating_mul(2) {
        return None;
    }
    let doubtful = f.psn.capture_loss_gaps() > 0 || super::quality::share(a) < 1.0;
    let firm = silent_ns >= t.saturating_mul(i64::from(RETRY_CNT) + 1) && !doubtful;
    Some(Stall { psn, frame, ts_ns, silent_ns, firm, closed: closed.is_some(), doubtful })
}

/// The largest request frame acknowledged on flow `f` or any flow between the same two hosts
/// at its capture point ([`crate::psn::PsnTracker::acked_len_max`]: `u32::MAX` once a
/// multi-packet message was acknowledged; 0 when nothing was).
fn acked_len_max(f: &Flow, a: &Analyzer) -> u32 {
    a.flows.pair_summary(f.key.point, f.key.src, f.key.dst).acked_len_max.max(f.psn.acked_len_max)
}

/// Seconds with three decimals.
fn secs(ns: i64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// The findings of one request flow's protocol state.
pub(super) fn qp_life_findings(
    f: &Flow,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    let st = f.psn.stats();
    let lives = st.resyncs + st.lives_fell_back;
    if f.tracked() && lives > 0 {
        let how = if st.lives_fell_back > 0 {
            // NCCL is named only where the new life began at PSN 0, as NCCL's do.
            let why = if st.lives_from_zero == st.lives_fell_back {
                "at PSN 0, as NCCL starts every QP: a job restarted on reused QP numbers"
            } else if st.lives_from_zero > 0 {
                "some at PSN 0, as NCCL starts every QP: a job, or a connection, restarted on reused QP numbers"
            } else {
                "a new connection on the reused QP number"
            };
            format!(
                "{} back behind PSNs the responder had already acknowledged ({why})",
                plural(st.lives_fell_back, "restart", "restarts")
            )
        } else {
            "at an unrelated PSN (a new connection on the QP number)".to_string()
        };
        push(
            Severity::Info,
            FindingKind::QpRestart,
            format!(
                "{}: {} lives in the capture, its PSNs started over: {how}; an acknowledged PSN is never a resend, so none of it is counted as loss or retransmission",
                qp_name(f, a),
                lives + 1
            ),
            ev(f, &[EvidenceKind::NewLife]),
            lives,
        );
    }
    let violations = st.in_read_range + st.acks_outside;
    if violations > 0 {
        let mut what = Vec::new();
        if st.in_read_range > 0 {
            what.push(format!(
                "{} on PSNs a READ had reserved for its responses (the next request must follow the READ's last response PSN)",
                plural(st.in_read_range, "request", "requests")
            ));
        }
        if st.acks_outside > 0 {
            what.push(format!(
                "{} outside the outstanding window (ahead of every request sent, or behind the PSN already acknowledged)",
                plural(st.acks_outside, "ACK/NAK PSN", "ACK/NAK PSNs")
            ));
        }
        push(
            Severity::Warning,
            FindingKind::PsnViolation,
            format!(
                "{}: PSN rules broken (IBTA Vol 1 9.7.1, 9.7.5.1; reference §1.10): {}; the requester's or responder's PSN state is wrong, and the QP may hang",
                qp_name(f, a),
                what.join("; ")
            ),
            ev(f, &[EvidenceKind::PsnViolation]),
            violations,
        );
    }
    if let Some(s) = stall_of(f, a) {
        let t = ack_timeout(f);
        let source =
            if f.cold().cm_ack_timeout_ns.is_some() { "its CM REQ's" } else { "assumed, no CM REQ seen" };
        let (severity, tail) = if s.firm {
            (
                Severity::Critical,
                format!(
                    "longer than the whole retry budget ({} x the ACK timeout) {}: the QP is stuck, the job hangs",
                    RETRY_CNT + 1,
                    if s.closed {
                        "until the connection was torn down (CM DREQ)"
                    } else {
                        "while the capture went on"
                    }
                ),
            )
        } else if s.doubtful {
            (
                Severity::Warning,
                format!(
                    "the capture itself lost packets ({}), so the ACK may be among them: the QP is stuck only if it was never sent",
                    if f.psn.capture_loss_gaps() > 0 {
                        "this QP's request PSNs show gaps no NAK or resend explains"
                    } else {
                        "other QPs' request PSNs show gaps no NAK or resend explains"
                    }
                ),
            )
        } else {
            (
                Severity::Warning,
                if s.closed {
                    "longer than twice the ACK timeout, until the connection was torn down (CM DREQ): the application gave up on it".to_string()
                } else {
                    "longer than twice the ACK timeout with no retry, where a working requester would have resent; the capture ends before the whole retry budget would have run out, so whether the QP went to error or hangs is not seen".to_string()
                },
            )
        };
        push(
            severity,
            FindingKind::QpStalled,
            format!(
                "{}: request PSN {} unacknowledged, never resent, and the QP silent for {} after it (ACK timeout {}, {source}): {tail}",
                qp_name(f, a),
                s.psn,
                secs(s.silent_ns),
                ms(t.max(0) as u64),
            ),
            {
                let mut e = vec![EvidenceRef {
                    frame: s.frame,
                    ts_ns: s.ts_ns,
                    what: format!("request PSN {}: the last the QP sent, never acknowledged", s.psn),
                }];
                e.extend(ev(f, &[EvidenceKind::PsnViolation]));
                e.sort_by_key(|x| x.frame);
                e
            },
            (s.silent_ns / 1_000_000).max(1) as u64,
        );
    }
    if let Some((psn, frame, ts_ns)) = f.psn.retries_exhausted() {
        let acked = acked_len_max(f, a);
        let mtu = if st.resent_len_max > acked && acked > 0 && acked != u32::MAX {
            format!(
                "; only the large frames die: the resent frames are {} bytes while every acknowledged one of the QP and its host pair was at most {acked} bytes, so a path MTU below {} bytes (a link MTU under the RoCE frame) is the likely cause",
                st.resent_len_max, st.resent_len_max
            )
        } else {
            String::new()
        };
        push(
            Severity::Critical,
            FindingKind::RetryExhausted,
            format!(
                "{}: PSN {psn} sent again {} times with no ACK and nothing new sent, over {}: the retry count ({RETRY_CNT}, the NCCL_IB_RETRY_CNT default) is used up, the QP goes to error and the job fails with IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded){mtu}",
                qp_name(f, a),
                st.retries_max,
                ms(st.retries_max_span_ns.max(0) as u64),
            ),
            {
                // The run's tuple holds its first frame and its last resend's time: the last
                // resend is the longest run's last frame (this run is the longest: it used up
                // the retry count).
                let mut e = vec![EvidenceRef {
                    frame: st.retries_max_frame,
                    ts_ns,
                    what: format!("the last retry of PSN {psn} (the first was frame {frame})"),
                }];
                e.extend(ev(f, &[EvidenceKind::RetransmitTimeout, EvidenceKind::RetransmitUnknown]));
                e.sort_by_key(|x| x.frame);
                e.dedup_by_key(|x| x.frame);
                e
            },
            u64::from(st.retries_max) * 10,
        );
    }
}
