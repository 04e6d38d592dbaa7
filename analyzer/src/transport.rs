//! The transport pass: requests and responses of a flow against its PSN tracker (gaps,
//! resends by cause, late packets, READ PSN reservation and implied NAKs, ACK and READ
//! latency, NAK and RNR), the pairing of a QP's two directions, and CM set-ups (reference
//! §1.10, §1.4). Called for every request and response, by the fast path and the full
//! decode alike (frame module).

use crate::flow::{count, EvidenceKind, Flow, FlowKey, Pairing};
use crate::latency_samples::Kind;
use crate::psn::{psn_diff, Cause, PsnConfig, Resolution, Verdict};
use crate::{cm, frame, psn, Analyzer, FrameMeta, MAX_OUTSTANDING};
use rocescope_decoder::ext::{AethKind, NakCode};
use rocescope_decoder::{Opcode, Transport};

impl Analyzer {
    pub(crate) fn link(&mut self, a: usize, b: usize, how: Pairing) {
        if let Some(f) = self.flows.get_mut(a) {
            f.set_partner(Some(b));
            f.set_pairing(Some(how));
        }
        if let Some(f) = self.flows.get_mut(b) {
            f.set_partner(Some(a));
            f.set_pairing(Some(how));
        }
    }

    /// The request flow a response (or CNP) in flow `id` is about: its partner; else the one
    /// unpaired reverse flow with the same UDP source port (ConnectX gives both directions of
    /// a QP pair the same port: [`Pairing::Port`]); else the one reverse flow with a request
    /// at `psn` waiting for its ACK; else the one whose requests used `psn`; else the one
    /// whose highest PSN is nearest above `psn`; else the only reverse flow. When several reverse flows
    /// fit equally (NCCL starts every QP at PSN 0 and parallel QPs move in lockstep), nothing
    /// is paired yet: a later response, once their PSNs part, pairs it; timing an ACK against
    /// another QP's request would make up its latency.
    pub(crate) fn request_flow_for(&mut self, id: usize, psn: Option<u32>) -> Option<usize> {
        let f = self.flows.get(id)?;
        if let Some(p) = f.partner() {
            return Some(p);
        }
        let key = f.key;
        let sport = f.udp_sport_last().map(|_| f.udp_sport);
        // Not the flow itself (a host sending to itself is its own reverse direction).
        let mut reverse = self.flows.unpaired_in_pair(key.point, key.dst, key.src);
        reverse.retain(|c| *c != id);
        // The same UDP source port, on exactly one candidate.
        let same_port = |c: &&usize| {
            self.flows.get(**c).is_some_and(|r| r.udp_sport_last().is_some() && Some(r.udp_sport) == sport)
        };
        let mut ports = reverse.iter().filter(same_port);
        if let (Some(&c), None) = (ports.next(), ports.next()) {
            self.link(id, c, Pairing::Port);
            return Some(c);
        }
        if let Some(q) = psn {
            // The one reverse flow with a request at `psn` waiting for its ACK; several (NCCL's
            // lockstep QPs): ambiguous, pair nothing yet.
            let waits = |c: &&usize| {
                self.flows.get(**c).is_some_and(|r| r.outstanding_ackreq.iter().any(|o| o.0 == q))
            };
            let mut waiting = reverse.iter().filter(waits);
            match (waiting.next(), waiting.next()) {
                (Some(&c), None) => {
                    self.link(id, c, Pairing::Psn);
                    return Some(c);
                }
                (Some(_), Some(_)) => return None,
                _ => {}
            }
            // Else the one reverse flow whose requests used `psn`.
            let covers = |c: &&usize| self.flows.get(**c).is_some_and(|r| r.psn.covers(q));
            let mut covering = reverse.iter().filter(covers);
            if let (Some(&c), None) = (covering.next(), covering.next()) {
                self.link(id, c, Pairing::Psn);
                return Some(c);
            }
        }
        // Else the one whose highest PSN is nearest above it (a flow whose first requests
        // came before the capture, or several covering it); a tie is ambiguous.
        let mut best: Option<(i32, usize)> = None;
        let mut tied = false;
        for &c in &reverse {
            let (Some(q), Some(h)) = (psn, self.flows.get(c).and_then(|f| f.psn.highest())) else {
                continue;
            };
            let d = psn_diff(q, h);
            if d > 0 || d <= -(1 << 20) {
                continue;
            }
            match best {
                Some((bd, _)) if d == bd => tied = true,
                Some((bd, _)) if -d >= -bd => {}
                _ => {
                    best = Some((d, c));
                    tied = false;
                }
            }
        }
        match (best, reverse.as_slice()) {
            (Some(_), _) if tied => None,
            (Some((_, c)), _) => {
                self.link(id, c, Pairing::Psn);
                Some(c)
            }
            // A host sending to itself: the only other flow is no evidence of a pair.
            (None, [c]) if key.src != key.dst => {
                let c = *c;
                self.link(id, c, Pairing::Address);
                Some(c)
            }
            _ => None,
        }
    }

    pub(crate) fn on_request(&mut self, id: usize, meta: &FrameMeta, v: &frame::RoceFrame<'_>) {
        let op = v.op;
        // The connection's PMTU (what a READ's PSN span is measured with; no other request
        // needs it): configured, else from this flow's full-size packets or the READ
        // responses coming back, else from any flow.
        let pmtu = if !v.info.read_request {
            0
        } else if let Some(m) = self.cfg.pmtu {
            m
        } else {
            let own = self.flows.get(id).map_or(0, |f| u32::from(f.pmtu));
            let back = self
                .flows
                .get(id)
                .and_then(|f| f.partner())
                .and_then(|p| self.flows.get(p))
                .map_or(0, |p| u32::from(p.pmtu));
            [own, back, self.pmtu_seen].into_iter().find(|m| *m > 0).unwrap_or(0)
        };
        // UD carries CM MADs to QP1: they pair connections.
        if v.info.transport == Transport::Ud && v.dest_qp == 1 && v.deth_qkey == Some(0x8001_0000) {
            self.on_cm(id, meta.point, v.payload);
            if let Some(qpn) = crate::cm::dreq_remote_qpn(v.payload) {
                self.on_dreq(id, meta.point, qpn, meta.ts_ns);
            }
        }
        let mut psn_cfg =
            PsnConfig { reorder_ns: self.cfg.reorder_ns, min_ack_timeout_ns: self.cfg.min_ack_timeout_ns };
        let w = self.weight;
        let Some(f) = self.flows.get_mut(id) else { return };
        f.add_count(count::REQUESTS, w);
        if !frame::psn_tracked(v.info.transport) {
            return;
        }
        f.set_tracked();
        f.mark_uc(v.info.transport == Transport::Uc);
        if let Some(t) = f.cold().cm_ack_timeout_ns {
            psn_cfg.min_ack_timeout_ns = t;
        }
        let span = if v.info.read_request {
            // No RETH (the capture cut it) or no PMTU yet: the span is unknown and the next
            // request re-synchronises (span 0).
            match (v.reth_dma_len, pmtu) {
                (None, _) => 0,
                (Some(0), _) => 1,
                (_, 0) => 0,
                (Some(l), m) => l.div_ceil(m),
            }
        } else {
            1
        };
        let psn = v.psn;
        // A READ request from inside an earlier READ's range that is still outstanding:
        // the requester saw that READ's responses out of sequence and asks again from here
        // (an implied NAK, reference §1.10).
        // From its first PSN, it is a re-issue only once some of its responses were seen
        // (else the READ itself may have been lost: the ACK timeout's business).
        // (Asked of READ requests only: a flow's READ state is behind two pointers.)
        let (in_gap, reissue) = if v.info.read_request {
            let reads = f.reads();
            let resp_next = reads.resp_next;
            let in_gap =
                reads.gap.is_some_and(|(first, last)| psn_diff(psn, first) >= 0 && psn_diff(psn, last) <= 0);
            let reissue = in_gap
                || reads.outstanding.iter().any(|&(first, last, _)| {
                    psn_diff(psn, first) >= 0
                        && psn_diff(psn, last) <= 0
                        && (psn != first || resp_next != Some(first))
                });
            (in_gap, reissue)
        } else {
            (false, false)
        };
        // An implied NAK needs a later response that showed the requester the gap: seen here
        // (`in_gap`), or beyond this point, which a re-issue sooner than the ACK timeout
        // shows. A re-issue after the ACK timeout with no gap in sight is the tail of the
        // READ (its Last or Only response) lost: only the timer told the requester, a
        // timeout (mlx5 `local_ack_timeout_err`, reference §1.10).
        let tail_timeout = reissue && !in_gap && f.psn.timed_out(meta.ts_ns, &psn_cfg);
        let implied = reissue && !tail_timeout;
        let (verdict, resolved) = f.psn.on_request_of(
            psn,
            span,
            (meta.number, meta.ts_ns),
            (implied, v.info.read_request),
            &psn_cfg,
        );
        if v.info.class == crate::audit::Class::Data
            && !matches!(verdict, Verdict::Retransmit { .. } | Verdict::InReadRange)
        {
            // New data (frame::count_in_flow leaves connected requests to this point).
            f.data_packet(meta.ts_ns, meta.number, v.wire.saturating_mul(w));
        }
        if tail_timeout && matches!(verdict, Verdict::Retransmit { cause: Cause::Timeout, .. }) {
            f.reads_mut().tail_timeouts += 1;
        }
        if let Some(r) = resolved {
            Self::note_resolution(f, r);
        }
        match verdict {
            Verdict::Gap { missing } => f.note(EvidenceKind::Gap, meta.number, meta.ts_ns, || {
                format!("PSN {psn} arrived; {missing} PSN(s) before it missing")
            }),
            Verdict::Retransmit { cause, burst_start, .. } => {
                f.bins.mark_resent();
                f.psn.note_resent_len(meta.len);
                if burst_start {
                    if let (Cause::Nak | Cause::SpuriousNak, Some(t)) = (cause, f.take_nak_ts()) {
                        f.latency_mut().nak_to_retransmit.add(meta.ts_ns - t);
                    }
                    f.note(evidence_of_cause(cause), meta.number, meta.ts_ns, || resend_text(psn, cause, op));
                }
            }
            Verdict::NewLife { fell_back } => {
                // The old life's requests are never answered in the new one: left waiting,
                // they would block its ACKs from being timed, then be timed against them.
                if !f.outstanding_ackreq.is_empty() {
                    f.outstanding_ackreq.clear();
                }
                if !f.reads().outstanding.is_empty() {
                    f.reads_mut().outstanding.clear();
                }
                f.note(EvidenceKind::NewLife, meta.number, meta.ts_ns, || {
                    if fell_back {
                        format!(
                            "PSN {psn}: back behind PSNs the responder had acknowledged, a new life of the QP"
                        )
                    } else {
                        format!("PSN {psn}: a new PSN stream on the QP (a new connection on its number)")
                    }
                })
            }
            Verdict::InReadRange => f.note(EvidenceKind::PsnViolation, meta.number, meta.ts_ns, || {
                format!("request PSN {psn} reuses a PSN an earlier READ reserved for its responses")
            }),
            Verdict::Filler | Verdict::First | Verdict::InOrder => {}
        }
        if reissue {
            // The re-issued READ asks from `psn` to the end of the READ it continues.
            let reads = f.reads_mut();
            for r in reads.outstanding.iter_mut() {
                if psn_diff(psn, r.0) >= 0 && psn_diff(psn, r.1) <= 0 {
                    r.0 = psn;
                }
            }
            reads.resp_next = Some(psn);
            reads.gap = None;
            if !reads.outstanding.iter().any(|r| psn_diff(psn, r.0) >= 0 && psn_diff(psn, r.1) <= 0) {
                // The READ it continues had all its responses go by: wait for them again.
                let last = psn::psn_add(psn, span.max(1) - 1);
                // Capped as every other outstanding READ (re-issued READs were not: a QP that
                // kept re-issuing grew without bound).
                if reads.outstanding.len() == MAX_OUTSTANDING {
                    reads.outstanding.pop_front();
                }
                reads.outstanding.push_back((psn, last, meta.ts_ns));
            }
        }
        if v.ack_req {
            let q = &mut *f.outstanding_ackreq;
            if q.len() == MAX_OUTSTANDING {
                q.pop_front();
            }
            // A Last packet ends a message whose full-size packets passed once it is ACKed.
            let len = if matches!(op.0 & 0x1F, 2 | 3 | 8 | 9 | 22) { u32::MAX } else { meta.len };
            q.push_back((psn, len, meta.ts_ns, meta.number));
        }
        if v.info.read_request && !reissue {
            let reads = f.reads_mut();
            if reads.outstanding.len() == MAX_OUTSTANDING {
                reads.outstanding.pop_front();
            }
            reads.outstanding.push_back((psn, psn::psn_add(psn, span.max(1) - 1), meta.ts_ns));
            reads.resp_next.get_or_insert(psn);
        }
    }

    /// Evidence for a run of gap fillers once it is known what they were.
    pub(crate) fn note_resolution(f: &mut Flow, r: Resolution) {
        match r {
            Resolution::Late { frame, ts_ns, psn, packets, late_ns } => {
                f.note(EvidenceKind::OutOfOrder, frame, ts_ns, || {
                    let more =
                        if packets > 1 { format!(" (and {} after it)", packets - 1) } else { String::new() };
                    format!("PSN {psn}{more} arrived {} after later PSNs, not resent", us(late_ns))
                })
            }
            Resolution::Resent { frame, ts_ns, psn, cause } => {
                f.bins.mark_resent();
                if let (Cause::Nak | Cause::SpuriousNak, Some(t)) = (cause, f.take_nak_ts()) {
                    f.latency_mut().nak_to_retransmit.add(ts_ns - t);
                }
                f.note(evidence_of_cause(cause), frame, ts_ns, || resend_text(psn, cause, Opcode(0)))
            }
        }
    }

    pub(crate) fn on_response(&mut self, id: usize, meta: &FrameMeta, v: &frame::RoceFrame<'_>) {
        let psn = v.psn;
        let paired_before = self.flows.get(id).and_then(Flow::partner).is_some();
        let target = self.request_flow_for(id, Some(psn));
        if v.info.read_response {
            self.on_read_response(target, psn, meta, v.info.ends_message);
        }
        let Some(f) = self.flows.get_mut(id) else { return };
        f.add_count(count::RESPONSES, self.weight);
        let Some(aeth) = v.aeth else {
            return; // READ Response Middle
        };
        let mut nak = None;
        match aeth.kind() {
            AethKind::Ack => {
                if v.info.ack {
                    f.add_count(count::ACKS, self.weight);
                }
            }
            AethKind::Nak => {
                let code = aeth.nak_code().map_or(5, |c| usize::from(c.0.min(5)));
                if let Some(n) = f.naks_mut().by_code.get_mut(code) {
                    *n += 1;
                }
                let name = aeth.nak_code().map_or("reserved", NakCode::name);
                f.note(EvidenceKind::Nak, meta.number, meta.ts_ns, || format!("NAK {name}, PSN {psn}"));
                if aeth.nak_code() == Some(NakCode::PSN_SEQUENCE_ERROR) {
                    nak = Some(false);
                }
            }
            AethKind::RnrNak => {
                let us = aeth.rnr_timer_us().unwrap_or(0);
                let n = f.naks_mut();
                n.rnr += 1;
                n.rnr_timer_us = Some(n.rnr_timer_us.map_or((us, us), |(a, b)| (a.min(us), b.max(us))));
                f.note(EvidenceKind::Rnr, meta.number, meta.ts_ns, || {
                    format!("RNR NAK, PSN {psn}, timer {us} us")
                });
                nak = Some(true);
            }
            AethKind::Reserved => {}
        }
        let start = self.totals.start_ns.unwrap_or(meta.ts_ns);
        let Some(t) = target.and_then(|t| self.flows.get_mut(t)) else { return };
        // The ACK or NAK PSN against the request PSNs outstanding (READ responses reserve
        // theirs: only an ACK's or a NAK's is checked). A sequence-error NAK acknowledges
        // the PSN before the one it names.
        let acks = match (aeth.kind(), nak) {
            (AethKind::Ack, _) => Some((psn, v.info.ack)),
            (AethKind::Nak, Some(false)) => Some((psn::psn_add(psn, psn::PSN_MOD - 1), true)),
            _ => None,
        };
        if let Some((acked, check)) = acks {
            if let Some(out) = t.psn.touched_mut().and_then(|p| p.on_ack(acked, check)) {
                let what = match out {
                    psn::AckOutside::Ahead { highest } => {
                        format!("ACK/NAK PSN {psn} is ahead of every request PSN sent (highest {highest})")
                    }
                    psn::AckOutside::Behind { acked } => {
                        format!("ACK/NAK PSN {psn} is behind PSN {acked}, already acknowledged: outside the outstanding window")
                    }
                };
                t.note(EvidenceKind::PsnViolation, meta.number, meta.ts_ns, || what);
            }
        }
        if let Some(rnr) = nak {
            t.psn.on_nak_at(psn, rnr, Some(meta.ts_ns));
            t.naks_mut().last_nak_ts = Some(meta.ts_ns);
            return;
        }
        if aeth.kind() != AethKind::Ack {
            return;
        }
        // Everything up to `psn` is acknowledged. On the first response paired with the
        // requests (by port or PSN; until then responses could not be told apart, as when
        // parallel QPs all start at PSN 0), earlier requests may have been answered by those
        // unattributed responses: only the request the response names is timed.
        let fresh = !paired_before && t.pairing() != Some(Pairing::Cm);
        while let Some(&(q, len, ts, _)) = t.outstanding_ackreq.front() {
            if psn_diff(q, psn) > 0 {
                break;
            }
            t.outstanding_ackreq.pop_front();
            if !fresh || q == psn {
                t.ack_latency_mut().add(meta.ts_ns - ts);
                let (point, prio) = (t.key.point, t.priority);
                self.latency_samples.add(point, prio, Kind::Ack, meta.ts_ns, meta.ts_ns - ts, start);
            }
            if let Some(p) = t.psn.touched_mut() {
                p.acked_len_max = p.acked_len_max.max(len);
            }
        }
        if v.info.ends_message {
            while let Some(&(_, last, ts)) = t.reads().outstanding.front() {
                if psn_diff(last, psn) > 0 {
                    break;
                }
                t.reads_mut().outstanding.pop_front();
                if last == psn {
                    t.latency_mut().read.add(meta.ts_ns - ts);
                    let (point, prio) = (t.key.point, t.priority);
                    self.latency_samples.add(point, prio, Kind::Read, meta.ts_ns, meta.ts_ns - ts, start);
                }
            }
        }
    }

    /// A READ response with PSN `psn` for the requester flow `target`: note a gap in the
    /// responses of the READ under way (the evidence of an implied NAK to come).
    pub(crate) fn on_read_response(&mut self, target: Option<usize>, psn: u32, meta: &FrameMeta, ends: bool) {
        let Some(t) = target.and_then(|t| self.flows.get_mut(t)) else { return };
        if ends {
            // The READ's responses end here: its PSNs run through `psn`, whatever span was
            // reckoned when it went by (reference §1.10).
            if let Some(used) = t.psn.touched_mut().and_then(|p| p.reserve_through(psn)) {
                t.note(EvidenceKind::PsnViolation, meta.number, meta.ts_ns, || {
                    format!("READ responses run through PSN {psn}, but request PSN {used} was sent inside that range")
                });
            }
        }
        let Some(next) = t.reads().resp_next else { return };
        let d = psn_diff(psn, next);
        if d > 0 && d < 1 << 16 {
            let reads = t.reads_mut();
            reads.read_response_gaps += 1;
            // The requester drops the responses after the gap and will ask again from its
            // first missing PSN, even once the READ's last response has gone by.
            let last = reads
                .outstanding
                .iter()
                .find(|r| psn_diff(psn, r.0) >= 0 && psn_diff(psn, r.1) <= 0)
                .map_or(psn, |r| r.1);
            reads.gap = Some((next, last));
            t.note(EvidenceKind::ReadResponseGap, meta.number, meta.ts_ns, || {
                format!("READ response PSN {psn} arrived; {d} response(s) before it missing")
            });
        }
        if d >= 0 {
            // The READ this response ends is complete: the next one's first PSN is due.
            let reads = t.reads_mut();
            let ends = reads.outstanding.front().is_some_and(|&(_, last, _)| last == psn);
            reads.resp_next =
                if ends { reads.outstanding.get(1).map(|r| r.0) } else { Some(psn::psn_add(psn, 1)) };
        }
    }

    /// A CM DREQ sent on flow `id` to the side whose QP is `qpn`: the connection's two
    /// flows end their life at `ts_ns` (a QP silent after it is closed, not stuck).
    fn on_dreq(&mut self, id: usize, point: u16, qpn: u32, ts_ns: i64) {
        let Some(k) = self.flows.get(id).map(|f| f.key) else { return };
        let key = FlowKey { src: k.src, dst: k.dst, dest_qp: qpn, point };
        let Some(a) = self.flows.find(&key) else { return };
        let b = self.flows.get(a).and_then(|f| f.partner());
        for i in std::iter::once(a).chain(b) {
            if let Some(f) = self.flows.get_mut(i) {
                f.cold_mut().cm_closed_ns.get_or_insert(ts_ns);
            }
        }
    }

    pub(crate) fn on_cm(&mut self, id: usize, point: u16, mad: &[u8]) {
        let Some(m) = cm::parse(mad) else { return };
        let Some(sender) = self.flows.get(id).map(|f| f.key.src) else { return };
        match m.attribute {
            cm::ATTR_REQ => {
                self.cm_pending.insert(
                    (point, m.transaction_id),
                    (sender, m.local_qpn, m.starting_psn, m.local_ack_timeout),
                );
            }
            cm::ATTR_REP => {
                let Some((req_ip, req_qpn, req_psn, ack_timeout)) =
                    self.cm_pending.remove(&(point, m.transaction_id))
                else {
                    return;
                };
                // Flows: requester -> responder (dest QP = REP's local QPN) and back.
                let fwd = FlowKey { src: req_ip, dst: sender, dest_qp: m.local_qpn, point };
                let back = FlowKey { src: sender, dst: req_ip, dest_qp: req_qpn, point };
                // In the captures checked, each side sends from the PSN the other's CM
                // message gave (write.pcap), so record them crosswise.
                self.cm_partner.insert(fwd, (back, Some(m.starting_psn)));
                self.cm_partner.insert(back, (fwd, Some(req_psn)));
                if let (Some(a), Some(b)) = (self.flows.find(&fwd), self.flows.find(&back)) {
                    self.link(a, b, Pairing::Cm);
                }
                // A new connection: flows that already existed start a new PSN stream.
                for k in [fwd, back] {
                    if let Some(f) = self.flows.find(&k).and_then(|i| self.flows.get_mut(i)) {
                        if f.psn.requests > 0 {
                            f.psn.restart();
                        }
                        f.cold_mut().cm_start_psn = self.cm_partner.get(&k).and_then(|(_, p)| *p);
                    }
                }
                // The requester's ACK timeout (its REQ's local ACK timeout) bounds how soon
                // it resends; the responder's is derived from the same path, so both
                // directions use it.
                if let Some(t) = ack_timeout.filter(|t| *t > 0) {
                    let ns = psn::ack_timeout_ns(t);
                    for k in [fwd, back] {
                        self.cm_timeout.insert(k, ns);
                        if let Some(f) = self.flows.find(&k).and_then(|i| self.flows.get_mut(i)) {
                            f.cold_mut().cm_ack_timeout_ns = Some(ns);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The evidence kind of a resend by its cause.
fn evidence_of_cause(cause: Cause) -> EvidenceKind {
    match cause {
        Cause::Nak => EvidenceKind::RetransmitNak,
        Cause::SpuriousNak => EvidenceKind::RetransmitSpurious,
        Cause::ImpliedNak => EvidenceKind::RetransmitImplied,
        Cause::Timeout => EvidenceKind::RetransmitTimeout,
        Cause::Unknown => EvidenceKind::RetransmitUnknown,
    }
}

/// What a resend burst's first packet shows.
fn resend_text(psn: u32, cause: Cause, op: Opcode) -> String {
    match cause {
        Cause::ImpliedNak => format!("READ re-issued from PSN {psn} (implied NAK)"),
        _ if op.is_read_request() => format!("READ request PSN {psn} sent again"),
        _ => format!("PSN {psn} sent again"),
    }
}

/// A duration in µs (below 10 ms) or ms, for evidence text.
fn us(ns: i64) -> String {
    if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}
