//! One RoCE packet as the per-frame analysis takes it ([`RoceFrame`]), made either from the
//! fast path's fixed-offset classification ([`rocescope_decoder::fast::Common`]) or from a
//! full decode, so that both paths run the same analysis (issue 28;
//! `reference/perf-design.md`).

use crate::flow::EvidenceKind;
use crate::{audit, overlay, stats, Analyzer, FrameMeta};
use rocescope_decoder::ext::AethRepr;
use rocescope_decoder::fast::Common;
use rocescope_decoder::{Ecn, Icrc, IcrcStatus, Link, Opcode, Packet, Position, Transport};
use std::net::IpAddr;

/// What the duplicate probe needs of an IP header ([`crate::dedup`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IpSeen {
    /// IPv4 identification or IPv6 flow label.
    pub ident: u32,
    /// TTL or hop limit.
    pub ttl: u8,
    /// The IP length field.
    pub len_field: u16,
}

/// A RoCE packet, with what the capture and the analysis settings make of it (its
/// priority, its bytes on the wire).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoceFrame<'p> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dscp: u8,
    /// The ECN codepoint (an overlay frame's outer CE included).
    pub ecn: Ecn,
    /// The IP header's facts; `None` for RoCEv1.
    pub ip: Option<IpSeen>,
    /// The link's Ethernet source and destination (an overlay frame's outer ones).
    pub macs: Option<([u8; 6], [u8; 6])>,
    /// UDP source port (RoCEv2).
    pub sport: Option<u16>,
    /// The PCP of a tag a mirror stripped (ERSPAN COS).
    pub stripped_pcp: Option<u8>,
    /// The PCP the priority is read from, when tagged.
    pub pcp: Option<u8>,
    /// The priority a switch gives the frame.
    pub prio: u8,
    /// An overlay frame's outer DSCP.
    pub outer_dscp: Option<u8>,
    /// Bytes on the wire.
    pub wire: u64,
    pub op: Opcode,
    /// What the analysis asks of the opcode.
    pub info: OpInfo,
    pub dest_qp: u32,
    pub psn: u32,
    pub ack_req: bool,
    pub reth_dma_len: Option<u32>,
    pub aeth: Option<AethRepr>,
    /// The DETH's Q_Key (UD).
    pub deth_qkey: Option<u32>,
    /// The captured payload (what CM MADs are read from).
    pub payload: &'p [u8],
    /// Payload bytes by the headers' lengths.
    pub payload_len: usize,
    pub icrc: Icrc,
    /// The capture cut a header off (snap length).
    pub cut: bool,
    /// RoCEv1 (a GRH, no IP header).
    pub v1: bool,
}

/// What the per-frame analysis asks of an opcode, worked out once per opcode byte
/// ([`op_info`]): one table load per frame instead of the opcode predicates in turn
/// (issue 28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpInfo {
    pub transport: Transport,
    /// A request ([`Opcode::is_request`]).
    pub request: bool,
    /// A response ([`Opcode::is_response`]).
    pub response: bool,
    /// A READ request.
    pub read_request: bool,
    /// An Acknowledge.
    pub ack: bool,
    /// A CNP.
    pub cnp: bool,
    /// A READ response (First, Middle, Last or Only).
    pub read_response: bool,
    /// First or Middle: a full-size packet (its payload is the path MTU).
    pub full_size: bool,
    /// Ends a message (Last or Only, not an Acknowledge).
    pub ends_message: bool,
    /// Named by a PSN across capture points: an RC, UC or XRC request or READ response.
    pub named: bool,
    /// The audit's class.
    pub class: audit::Class,
}

/// [`OpInfo`] of `op`, from a 256-entry table built at first use.
#[inline]
pub(crate) fn op_info(op: Opcode) -> OpInfo {
    static TABLE: std::sync::OnceLock<[OpInfo; 256]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| std::array::from_fn(|i| OpInfo::compute(Opcode(i as u8))));
    t.get(usize::from(op.0)).copied().unwrap_or_else(|| OpInfo::compute(op))
}

impl OpInfo {
    fn compute(op: Opcode) -> OpInfo {
        let position = op.position();
        let read_response = op.is_response() && (0x0D..=0x10).contains(&op.operation());
        OpInfo {
            transport: op.transport(),
            request: op.is_request(),
            response: op.is_response(),
            read_request: op.is_read_request(),
            ack: op.is_ack(),
            cnp: op.is_cnp(),
            read_response,
            full_size: matches!(position, Some(Position::First | Position::Middle)),
            ends_message: matches!(position, Some(Position::Last | Position::Only)) && op.operation() != 0x11,
            named: matches!(op.transport(), Transport::Rc | Transport::Uc | Transport::Xrc)
                && (op.is_request() || read_response),
            class: audit::Class::of(op),
        }
    }
}

impl Analyzer {
    /// A common frame classified at fixed offsets, meaning what the full decode would.
    /// Inlined: the frame is built where the record path holds it (issue 39).
    #[inline(always)]
    pub(crate) fn frame_of_common(&self, meta: &FrameMeta, c: &Common) -> RoceFrame<'static> {
        let dscp = c.dscp();
        RoceFrame {
            src: c.src,
            dst: c.dst,
            dscp,
            ecn: c.ecn(),
            ip: Some(IpSeen { ident: c.ident, ttl: c.ttl, len_field: c.ip_len_field }),
            macs: Some((c.src_mac, c.dst_mac)),
            sport: Some(c.sport),
            stripped_pcp: None,
            pcp: c.pcp,
            prio: self.cfg.audit.priority(dscp, c.pcp),
            outer_dscp: None,
            // Wire bytes from the IP length, not the record's (reference §1.1, §1.11).
            wire: u64::from(c.declared_len.max(meta.len)),
            op: c.opcode,
            info: op_info(c.opcode),
            dest_qp: c.dest_qp,
            psn: c.psn,
            ack_req: c.ack_req,
            reth_dma_len: c.reth_dma_len,
            aeth: c.aeth,
            deth_qkey: None,
            payload: &[],
            payload_len: c.payload_len as usize,
            icrc: c.icrc,
            cut: false,
            v1: false,
        }
    }

    /// A fully decoded RoCE packet `p` (with its overlay's `outer` headers, whether the
    /// capture `cut` a header off): `None` when it has no RoCE or no addresses.
    pub(crate) fn frame_of_packet<'p>(
        &self,
        meta: &FrameMeta,
        p: &Packet<'p>,
        outer: Option<&overlay::Outer>,
        cut: bool,
    ) -> Option<RoceFrame<'p>> {
        let r = p.roce.as_ref()?;
        let (src, dst, dscp, ecn) = crate::ip_of(p)?;
        // The underlay marks an overlay frame's outer header (overlay module).
        let ecn = if outer.is_some_and(|o| o.ecn == Ecn::Ce) { Ecn::Ce } else { ecn };
        let (stripped_pcp, pcp, prio) = self.frame_priority(p, dscp, outer);
        // Wire bytes from the IP length, not the record's (reference §1.1, §1.11), with the
        // 4 bytes of a tag the mirror stripped.
        let wire = stats::wire_len(p, meta.len) + if stripped_pcp.is_some() { 4 } else { 0 };
        // The link's MACs: an overlay frame's outer ones (of the inner frame otherwise).
        let macs = match (outer, p.link) {
            (Some(o), _) => Some((o.src_mac, o.dst_mac)),
            (None, Link::Ethernet(e)) => Some((e.src(), e.dst())),
            _ => None,
        };
        let bth = r.bth;
        Some(RoceFrame {
            src,
            dst,
            dscp,
            ecn,
            ip: p.ip.as_ref().map(|ip| IpSeen {
                ident: ip.ident(),
                ttl: ip.ttl(),
                len_field: ip.len_field(),
            }),
            macs,
            sport: p.udp.as_ref().map(|u| u.source_port()),
            stripped_pcp,
            pcp,
            prio,
            outer_dscp: outer.map(|o| o.dscp),
            wire,
            op: bth.opcode(),
            info: op_info(bth.opcode()),
            dest_qp: bth.dest_qp(),
            psn: bth.psn(),
            ack_req: bth.ack_req(),
            reth_dma_len: r.ext.reth.map(|h| h.dma_len()),
            aeth: r.ext.aeth.map(|a| a.repr()),
            deth_qkey: r.ext.deth.map(|d| d.qkey()),
            payload: r.payload,
            payload_len: r.payload_len,
            icrc: r.icrc,
            cut,
            v1: r.grh.is_some(),
        })
    }
}

impl Analyzer {
    /// The per-flow counters RoCE frame `v` adds to its flow `id` (`start` is the capture's
    /// first time): packets, bytes, opcodes, ECN and marks seen, the UDP source port, the
    /// bins, a bad ICRC.
    pub(crate) fn count_in_flow(&mut self, id: usize, meta: &FrameMeta, v: &RoceFrame<'_>, start: i64) {
        let w = self.weight;
        let (wire, op, ecn, dscp, prio, is_cnp) = (v.wire, v.op, v.ecn, v.dscp, v.prio, v.info.cnp);
        let dc = self.cfg.opcode.dc;
        let Some(f) = self.flows.get_mut(id) else { return };
        f.last_ts = meta.ts_ns;
        f.count_frame(w, wire.saturating_mul(w), (v.payload_len as u64).saturating_mul(w), ecn as usize);
        f.opcodes.add_n(op, w);
        f.add_dscp(dscp);
        if let Some(pc) = v.pcp {
            f.pcp_seen |= 1 << (pc & 7);
        }
        // A CNP travels on a class of its own (DSCP 48, say) and shares its key with the
        // ACKs, and any data, to the QP it answers: it names the flow's priority only when
        // it is the flow's first packet, so a flow's data keeps its class.
        if !is_cnp || f.priority.is_none() {
            f.priority = Some(prio);
        }
        // The ECMP entropy: the UDP source port the NIC set for the QP, and any change of it
        // (CNPs, sent by the notification point to this QP, carry the NP's own port).
        if let Some(sport) = v.sport.filter(|_| !is_cnp) {
            match f.udp_sport_last() {
                None => f.udp_sport = sport,
                Some(last) if last != sport => f.udp_sport_changes = f.udp_sport_changes.saturating_add(1),
                Some(_) => {}
            }
            f.set_udp_sport_last(sport);
        }
        if op.0 & 0xE0 == 0x40 {
            f.mark_dc(dc);
        }
        f.bins.add_n(meta.ts_ns - start, wire.saturating_mul(w), w, ecn == Ecn::Ce);
        // A connected request's data counts towards its bursts once its PSN shows it is not
        // a resend (transport::on_request): a run of retries is no training rhythm.
        if v.info.class == audit::Class::Data && !(v.info.request && psn_tracked(v.info.transport)) {
            f.data_packet(meta.ts_ns, meta.number, wire.saturating_mul(w));
        }
        if v.icrc.status == IcrcStatus::Invalid {
            f.cold_mut().icrc_bad += w;
            let icrc = v.icrc;
            f.note(EvidenceKind::IcrcBad, meta.number, meta.ts_ns, || {
                format!(
                    "ICRC 0x{:08x}, computed 0x{:08x}",
                    icrc.value.unwrap_or(0),
                    icrc.computed.unwrap_or(0)
                )
            });
        }
    }
}

/// Whether requests of this transport carry a PSN stream the tracker follows (RC, UC, XRC).
#[inline]
pub(crate) fn psn_tracked(t: rocescope_decoder::Transport) -> bool {
    matches!(
        t,
        rocescope_decoder::Transport::Rc
            | rocescope_decoder::Transport::Uc
            | rocescope_decoder::Transport::Xrc
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opcode_table_says_what_the_opcode_predicates_say() {
        for b in 0..=255u8 {
            let op = Opcode(b);
            let i = op_info(op);
            assert_eq!(i, OpInfo::compute(op));
            assert_eq!((i.request, i.response, i.cnp), (op.is_request(), op.is_response(), op.is_cnp()));
            assert_eq!(i.class, audit::Class::of(op));
        }
        let w = op_info(Opcode::RC_WRITE_MIDDLE);
        assert!(w.full_size && !w.ends_message && w.named && w.request);
        let ack = op_info(Opcode::RC_ACKNOWLEDGE);
        assert!(ack.ack && ack.response && !ack.ends_message && !ack.named);
    }
}
