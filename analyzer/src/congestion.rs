//! The congestion pass: CE marks (and marks a mirror's second copy shows), the CE to CNP
//! delay and per-QP congestion-control state (cc module; reference §1.6).

use crate::addr_hash::AddrMap;
use crate::flow::{count, EvidenceKind, Flow, FlowKey};
use crate::{cc::CcConfig, Analyzer, FrameMeta};
use rocescope_decoder::Ecn;
use std::net::IpAddr;

impl Analyzer {
    /// A CE-marked packet of flow `f` (frame `meta`, PSN `psn`): the CE to CNP delay starts,
    /// the evidence and congestion-control state take it.
    pub(crate) fn on_ce(
        f: &mut Flow,
        cc_cfg: &CcConfig,
        cnp_hosts: &AddrMap<(u16, IpAddr, IpAddr), i64>,
        meta: &FrameMeta,
        psn: u32,
        w: u64,
    ) {
        let key = f.key;
        // The mark the next CNP answers: the first not yet answered, unless it is more than
        // a pacing interval older than this one (the NP's pacing window passed with no CNP:
        // the next CNP answers a mark of this later episode; docs/verdicts.md "Congestion
        // control", CE to CNP).
        // Nor, while marks keep coming, one from inside the pacing window of the last CNP:
        // the NP could not answer it, and answers the first mark after the window instead
        // (a mark 1.2 µs before each CNP read as 49 µs otherwise).
        let pacing = cc_cfg.cnp_pacing_ns;
        let window_end = f.cc().and_then(|c| c.last_cnp()).map(|c| c.saturating_add(pacing));
        let cold = f.cold_mut();
        cold.data_ce = cold.data_ce.saturating_add(w);
        let pending = &mut cold.ce_pending;
        let paced_out = |p: i64| window_end.is_some_and(|w| p < w && meta.ts_ns >= w);
        if pending.is_none_or(|p| meta.ts_ns - p > pacing || paced_out(p)) {
            *pending = Some(meta.ts_ns);
        }
        f.note(EvidenceKind::Ce, meta.number, meta.ts_ns, || format!("CE mark, PSN {psn}"));
        let cc = f.cc_mut(cc_cfg);
        cc.on_ce(meta.ts_ns, meta.number, pacing);
        // A CNP to this host from the NP's host since the run began: the NP answers (pacing
        // per host pair or port), this QP's marks are covered.
        if let (Some(start), false) = (cc.run_start(), cc.run_host_answered) {
            if cnp_hosts.get(&(key.point, key.src, key.dst)).is_some_and(|&t| t >= start) {
                cc.run_host_answered = true;
            }
        }
    }

    /// A mirror's second copy of a packet carries CE where its first copy did not: the
    /// switch marked it between the two mirror ports (dedup module). The packet, counted
    /// once already, counts as CE-marked: its flow's ECN counts move it to CE, and its bins,
    /// the fabric series and congestion control take the mark, with no packet added;
    /// `data`: the packet is of the data class.
    pub(crate) fn on_marked_copy(&mut self, meta: &FrameMeta, key: FlowKey, psn: u32, prio: u8, data: bool) {
        let w = self.weight;
        let start = self.totals.start_ns.unwrap_or(meta.ts_ns);
        if self.keeps_capture_state() {
            // The point's clock first: a mark in a later bin closes the bin being filled,
            // the flows' shares of it included (crate::fold).
            self.fold_clock(meta.point, meta.ts_ns - start);
            self.fabric.add_ce(meta.point, prio, meta.ts_ns - start, w, data);
        }
        if !self.owns(key.src, key.dst) {
            return;
        }
        let Some(id) = self.flows.find(&key) else { return };
        let Some(f) = self.flows.get_mut(id) else { return };
        // The first copy's codepoint (ECT(0) or ECT(1); Not-ECT cannot be marked) gives way.
        let ecn = f.ecn();
        if let Some(from) = [Ecn::Ect0 as usize, Ecn::Ect1 as usize].into_iter().find(|&i| ecn[i] >= w) {
            f.set_count(count::ECN + from, ecn[from] - w);
            f.add_count(count::ECN + Ecn::Ce as usize, w);
        }
        f.bins.add_ce(meta.ts_ns - start, w);
        if data {
            Self::on_ce(f, &self.cfg.cc, &self.cnp_hosts, meta, psn, w);
        }
    }
}

impl Analyzer {
    /// A CNP in flow `id` to QP `qp` (frame `meta`; `start` is the capture's first time):
    /// counted and noted on the flow, and on the data flow it answers (its CE to CNP delay,
    /// its congestion control, its bins), and remembered per host pair (an NP pacing CNPs
    /// per host pair answers one QP's marks with a CNP to another).
    pub(crate) fn on_cnp(&mut self, id: usize, meta: &FrameMeta, qp: u32, start: i64) {
        let w = self.weight;
        let Some(f) = self.flows.get_mut(id) else { return };
        f.cold_mut().cnps += w;
        f.note(EvidenceKind::Cnp, meta.number, meta.ts_ns, || format!("CNP to QP 0x{qp:06x}"));
        let Some(data) = self.request_flow_for(id, None) else { return };
        let Some(d) = self.flows.get_mut(data) else { return };
        d.cold_mut().cnps_received += w;
        if let Some(ce) = d.cold_mut().ce_pending.take() {
            d.latency_mut().ce_to_cnp.add(meta.ts_ns - ce);
        }
        d.cc_mut(&self.cfg.cc).on_cnp(meta.ts_ns, meta.number, &self.cfg.cc);
        d.bins.add_cnps(meta.ts_ns - start, w);
        let hosts = (d.key.point, d.key.src, d.key.dst);
        self.cnp_hosts.insert(hosts, meta.ts_ns);
    }
}
