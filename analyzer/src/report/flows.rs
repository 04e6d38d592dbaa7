//! The flows' section of the report: each flow's entry and the findings about one flow
//! (transport, congestion control, one-way traffic).

use super::*;

pub(super) fn flow_ref(f: &Flow) -> FlowRef {
    FlowRef { src: f.key.src.to_string(), dst: f.key.dst.to_string(), dest_qp: f.key.dest_qp }
}

/// An address as `Display` writes it (`10.0.0.1`), an IPv4 one without the formatting
/// machinery: a report of 100,000 QPs writes 200,000 flows' two addresses, and `Display`
/// cost 2,000 instructions an address (more than writing the rest of the flow's JSON).
fn address_text(ip: &std::net::IpAddr) -> String {
    let std::net::IpAddr::V4(v4) = ip else { return ip.to_string() };
    let mut s = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        if octet >= 100 {
            s.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            s.push(char::from(b'0' + octet / 10 % 10));
        }
        s.push(char::from(b'0' + octet % 10));
    }
    s
}

pub(crate) fn flow_report(id: usize, f: &Flow, a: &Analyzer, detail: bool) -> FlowReport {
    let opts = a.cfg.opcode;
    // The bytes and packets series once, for the rates and the entry (`Bins::rate` built
    // them again).
    let (bins, packets) = (f.bins.bins(), f.bins.packets());
    let rate = crate::stats::rates(
        &[crate::stats::Series { width_ns: f.bins.width_ns(), bytes: &bins, packets: &packets }],
        capture_ns(a),
    );
    FlowReport {
        point: f.key.point,
        id,
        src: address_text(&f.key.src),
        dst: address_text(&f.key.dst),
        dest_qp: f.key.dest_qp,
        first_frame: f.first_frame,
        first_ns: f.first_ts,
        last_ns: f.last_ts,
        priority: f.priority,
        packets: f.packets(),
        bytes: f.bytes(),
        payload_bytes: f.payload_bytes(),
        messages: f.messages(),
        requests: f.requests(),
        responses: f.responses(),
        opcodes: f
            .opcodes
            .iter()
            .map(|(o, n)| OpcodeCount { opcode: o.0, name: o.name(opts).into(), packets: n })
            .collect(),
        ecn: {
            let [not_ect, ect1, ect0, ce] = f.ecn();
            EcnCounts { not_ect, ect1, ect0, ce, ce_fraction: f.ce_fraction() }
        },
        psn: PsnReport {
            tracked: f.tracked(),
            gaps: f.psn.stats().gaps,
            missing: f.psn.stats().missing,
            retransmits: f.psn.stats().retransmits,
            retransmits_nak: f.psn.stats().retransmits_nak,
            retransmits_timeout: f.psn.stats().retransmits_timeout,
            retransmits_rnr: f.psn.stats().retransmits_rnr,
            retransmits_spurious: f.psn.stats().retransmits_spurious,
            retransmits_implied: f.psn.stats().retransmits_implied,
            retransmits_unknown: f.psn.stats().retransmits_unknown,
            duplicates: f.psn.stats().duplicates,
            out_of_order: f.psn.stats().out_of_order,
            late_beyond_window: f.psn.stats().late_beyond_window,
            max_late_ns: f.psn.stats().max_late_ns,
            spurious_naks: f.psn.stats().spurious_naks,
            read_response_gaps: f.reads().read_response_gaps,
            read_tail_timeouts: f.reads().tail_timeouts,
            timeout_stall_ns: f.psn.stats().timeout_stall_ns,
            network_loss_gaps: f.psn.stats().network_loss_gaps,
            capture_loss_gaps: f.psn.capture_loss_gaps(),
            resyncs: f.psn.stats().resyncs,
            network_loss_packets: f.psn.stats().lost_here + f.psn.stats().lost_beyond,
            lost_beyond_point: f.psn.stats().lost_beyond,
            resent_out_of_sequence: f.psn.stats().resent_out_of_sequence,
            timeout_events: f.psn.stats().timeout_bursts,
            implied_nak_events: f.psn.stats().implied_bursts,
            resend_gaps: f.psn.stats().resend_gaps,
            resend_gap_min_ns: f.psn.stats().resend_gap_min(),
            resend_gap_max_ns: f.psn.stats().resend_gap_min().map(|_| f.psn.stats().resend_gap_max_ns),
            resend_gap_max_frame: f.psn.stats().resend_gap_min().map(|_| f.psn.stats().resend_gap_max_frame),
            retries_max: f.psn.stats().retries_max,
            retries_span_ns: f.psn.stats().retries_max_span_ns,
            retries_frame: (f.psn.stats().retries_max > 0).then_some(f.psn.stats().retries_max_frame),
            lives: if f.tracked() && f.psn.requests > 0 {
                1 + f.psn.stats().resyncs + f.psn.stats().lives_fell_back
            } else {
                0
            },
            selective_resends: f.psn.stats().selective_resends,
            psn_violations: f.psn.stats().in_read_range + f.psn.stats().acks_outside,
            retries_exhausted: f.psn.retries_exhausted().is_some(),
            stall: super::qp_life::stall_of(f, a).map(|s| StallReport {
                psn: s.psn,
                frame: s.frame,
                request_ns: s.ts_ns,
                silent_ns: s.silent_ns,
                firm: s.firm,
                closed: s.closed,
            }),
        },
        naks: NakCounts {
            psn_seq_err: f.naks().by_code[0],
            invalid_request: f.naks().by_code[1],
            remote_access: f.naks().by_code[2],
            remote_operational: f.naks().by_code[3],
            invalid_rd: f.naks().by_code[4],
            other: f.naks().by_code[5],
            rnr: f.naks().rnr,
            rnr_timer_us_min: f.naks().rnr_timer_us.map(|t| t.0),
            rnr_timer_us_max: f.naks().rnr_timer_us.map(|t| t.1),
        },
        acks: f.acks(),
        cnps: f.cold().cnps,
        cnps_received: f.cold().cnps_received,
        icrc_bad: f.cold().icrc_bad,
        dscp: bits(f.dscp_seen()),
        pcp: bits(u64::from(f.pcp_seen)),
        throughput: Throughput {
            bin_ns: f.bins.width_ns(),
            bins: if detail { bins } else { Vec::new() },
            packets: if detail { packets } else { Vec::new() },
            ce: if detail { f.bins.ce() } else { Vec::new() },
            resent: if detail { f.bins.resent() } else { Vec::new() },
            cnps: if detail { f.bins.cnps() } else { Vec::new() },
            burst: f.bins.burst(),
            peak_gbps: rate.peak_gbps,
            mean_gbps: rate.mean_gbps,
        },
        latency: Latencies {
            ack: f.ack_latency().summary().map(Box::new),
            read: f.latency().read.summary().map(Box::new),
            nak_to_retransmit: f.latency().nak_to_retransmit.summary().map(Box::new),
            ce_to_cnp: f.latency().ce_to_cnp.summary().map(Box::new),
        },
        cc: f.cc().map(|c| {
            let mut r = cc_report(c, &a.cfg.cc);
            // Withheld whichever way the figures lean: past a marking queue a fall is the
            // queue's drain rate moving as much as the sender reacting (docs/verdicts.md), so
            // a flow with evaluated CNPs there says why, whether or not a verdict would fire.
            if c.evaluated > 0 {
                r.reaction.not_judged = cc_withheld(f, a).map(Into::into);
            }
            Box::new(r)
        }),
        partner: f.partner(),
        pairing: f.pairing().map(|p| p.name().into()),
        cm_start_psn: f.cold().cm_start_psn,
        ack_timeout_ns: f.cold().cm_ack_timeout_ns,
        pmtu: u32::from(f.pmtu),
        udp_src_port: f.udp_sport_last().map(|_| f.udp_sport),
        udp_src_port_changes: f.udp_sport_changes,
        udp_src_port_last: f.udp_sport_last().filter(|_| f.udp_sport_changes > 0),
        bursts: f.runs().count() as u64 + u64::from(f.runs_merged()),
        health: "ok".into(),
    }
}

/// A flow's congestion-control figures.
pub(super) fn cc_report(c: &crate::cc::CcState, cfg: &crate::cc::CcConfig) -> CcReport {
    let (runs, worst) = c.unanswered(cfg.cnp_pacing_ns);
    CcReport {
        cnp_interval: c.intervals.summary(),
        cnp_pacing_ns: cfg.cnp_pacing_ns,
        cnp_too_fast: c.too_fast,
        ce_runs_without_cnp: runs,
        longest_ce_run_without_cnp: worst.map(|r| CeRunReport {
            first_frame: r.first_frame,
            first_ns: r.first_ns,
            last_ns: r.last_ns,
            packets: r.packets,
        }),
        reaction: CcReaction {
            window_ns: cfg.window_ns,
            delay_ns: cfg.delay_ns,
            evaluated: c.evaluated,
            fell: c.fell,
            not_evaluated: c.not_evaluated_total(),
            mean_ratio: c.mean_ratio(),
            not_judged: None,
        },
    }
}

/// Flow `f` sends to a receiver that took an incast seen past the queue its senders share
/// (or where the position could not be told): its rate there is its share of the drain rate,
/// so its reaction to CNPs is not judged from it (crate::incast).
pub(crate) fn cc_shares_bottleneck(f: &Flow, a: &Analyzer) -> bool {
    let overlay = a.fan_in_overlay();
    a.fan_in.shares_bottleneck_in(
        overlay.as_deref(),
        f.key.point,
        f.key.dst,
        a.cfg.bin_ns,
        a.cfg.link_speed_bps,
    )
}

/// Why the `cc_not_reacting` verdict of flow `f` is withheld, if it is (docs/verdicts.md
/// "Congestion control"): `incast` when it is one of an incast's senders seen past the queue
/// they share ([`cc_shares_bottleneck`]); `past_queue` when its data arrives CE-marked: the
/// packets crossed a marking queue before the capture point, so their rate here is that
/// queue's drain rate (or the flow's share of it), whatever the sender does, until the queue
/// empties. The sender's own rate shows only upstream of the queue, where no mark is seen.
///
/// `below_cut` when the sender's mean rate in the windows before its CNPs is under
/// [`BELOW_CUT_SHARE`] of the link speed (`--link-speed`): DCQCN's first cut takes the rate
/// limit from line rate to about half of it (reference: field-notes, DCQCN), which does not
/// bind a sender whose application sends less, so a rate that holds says nothing of whether
/// its congestion control is on. Said as an INFO, not a WARNING.
pub(crate) fn cc_withheld(f: &Flow, a: &Analyzer) -> Option<&'static str> {
    if cc_shares_bottleneck(f, a) {
        Some("incast")
    } else if f.ce() > 0 {
        Some("past_queue")
    } else if below_cut(f, a) {
        Some("below_cut")
    } else {
        None
    }
}

/// The share of the link speed under which a sender's rate before its CNPs is below what a
/// first DCQCN cut (to half the line rate) would bind.
pub(crate) const BELOW_CUT_SHARE: f64 = 0.5;

/// Flow `f`'s rate did not fall after its CNPs, and it sent, in the windows before them, at
/// under [`BELOW_CUT_SHARE`] of the link speed (a fall is evidence at any rate).
fn below_cut(f: &Flow, a: &Analyzer) -> bool {
    let link = a.cfg.link_speed_bps as f64;
    f.cc()
        .filter(|c| c.not_reacting())
        .and_then(|c| c.rate_before_bps(a.cfg.cc.window_ns))
        .is_some_and(|r| link > 0.0 && r < BELOW_CUT_SHARE * link)
}

pub(super) fn ev(f: &Flow, kinds: &[EvidenceKind]) -> Vec<EvidenceRef> {
    let mut v: Vec<EvidenceRef> = kinds
        .iter()
        .flat_map(|k| f.evidence_of(*k))
        .map(|e| EvidenceRef { frame: e.frame, ts_ns: e.ts_ns, what: e.what.clone() })
        .collect();
    v.sort_by_key(|e| e.frame);
    v.dedup_by_key(|e| e.frame);
    v
}

pub(super) fn qp_name(f: &Flow, a: &Analyzer) -> String {
    format!("QP 0x{:06x} {} → {}{}", f.key.dest_qp, f.key.src, f.key.dst, at_point(a, f.key.point))
}

/// An RC/XRC requester flow whose ACKs, NAKs and READ responses are nowhere in the capture
/// (neither its partner nor any flow back between the two hosts at its capture point carries
/// a response), though it asked for them at least 1 ms before the capture ended.
pub(crate) fn responses_missing(f: &Flow, a: &Analyzer) -> bool {
    if !f.tracked() || f.uc() || f.psn.requests == 0 {
        return false;
    }
    let end = a.totals().end_ns.unwrap_or(i64::MIN);
    let asked = f
        .outstanding_ackreq
        .front()
        .map(|x| x.2)
        .into_iter()
        .chain(f.reads().outstanding.front().map(|x| x.2));
    if !asked.into_iter().any(|t| t < end - 1_000_000) {
        return false;
    }
    !a.flows.pair_summary(f.key.point, f.key.dst, f.key.src).responses
}

/// Said once for the whole capture: connections whose other direction is absent, so their
/// resends cannot be tied to NAKs (reference §1.10 relies on seeing both directions).
pub(super) fn one_direction_finding(a: &Analyzer, out: &mut FindingSink) {
    let one_way: Vec<(usize, &Flow)> =
        a.flows.iter().enumerate().filter(|(_, f)| responses_missing(f, a)).collect();
    let Some(&(first, _)) = one_way.first() else { return };
    let tracked = a.flows.iter().filter(|f| f.tracked() && !f.uc() && f.psn.requests > 0).count();
    let names: Vec<String> = one_way.iter().take(3).map(|(_, f)| qp_name(f, a)).collect();
    let more = if one_way.len() > 3 { format!(" and {} more", one_way.len() - 3) } else { String::new() };
    out.push(Finding {
        severity: Severity::Warning,
        kind: FindingKind::OneDirection,
        title: format!(
            "only one direction captured for {} of {} requesting QPs ({}{more}): no ACK, NAK or READ response comes back (a one-way mirror, or a sniffer on one side); their resends cannot be tied to NAKs or timeouts, so no loss on them is blamed on a cause the capture does not show",
            one_way.len(),
            tracked,
            names.join(", ")
        ),
        flow: Some(first),
        src_mac: None,
        priority: None,
        evidence: one_way
            .iter()
            .take(5)
            .map(|(_, f)| EvidenceRef {
                frame: f.first_frame,
                ts_ns: f.first_ts,
                what: format!("first request of QP 0x{:06x}; nothing comes back", f.key.dest_qp),
            })
            .collect(),
        weight: u64::MAX / 2,
        folded: None,
    });
}

pub(super) fn flow_findings(id: usize, f: &Flow, a: &Analyzer, out: &mut FindingSink) {
    let partner = f.partner().and_then(|p| a.flows.get(p));
    let mut push = |severity, kind, title: String, evidence: Vec<EvidenceRef>, weight: u64| {
        out.push(Finding {
            severity,
            kind,
            title,
            flow: Some(id),
            src_mac: None,
            priority: None,
            evidence,
            weight,
            folded: None,
        });
    };
    loss_findings(f, partner, a, &mut push);
    super::qp_life::qp_life_findings(f, a, &mut push);
    nak_findings(f, partner, a, &mut push);
    ecn_findings(f, partner, a, &mut push);
    if let Some(cc) = f.cc() {
        cc_findings(f, cc, partner, a, &mut push);
    }
    if f.cold().icrc_bad > 0 {
        push(
            Severity::Warning,
            FindingKind::IcrcBad,
            format!(
                "{}: {} with an invalid ICRC (corruption, a rewriting middlebox, or a capture device writing into frames)",
                qp_name(f, a),
                plural(f.cold().icrc_bad, "packet", "packets")
            ),
            ev(f, &[EvidenceKind::IcrcBad]),
            f.cold().icrc_bad,
        );
    }
}

/// Loss and resends of a flow's requests: gaps resent or NAKed, resends after a timeout or
/// of no known cause, implied NAKs (READs), spurious NAKs, gaps the capture itself lost, and
/// packets that came late (reference §1.10).
fn loss_findings(
    f: &Flow,
    partner: Option<&Flow>,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    let p = &f.psn;
    let st = p.stats();
    let one_way = responses_missing(f, a);
    let timeout_ms = ms(f.cold().cm_ack_timeout_ns.unwrap_or(a.cfg.min_ack_timeout_ns).max(0) as u64);
    let nak_resends = st.retransmits_nak - st.retransmits_rnr - st.retransmits_spurious;
    let loss_gaps = st.network_loss_gaps;
    let not_visible = if one_way {
        "the ACKs and NAKs are not in the capture"
    } else {
        "no NAK for them is in the capture, or the capture holds the same packet twice (a mirror of both link directions)"
    };
    // Loss: a gap here that was resent or NAKed (and not filled by a late packet), or a
    // go-back-N after a NAK that a late packet did not provoke (the loss then happened
    // beyond this capture point).
    if !f.uc() && (loss_gaps > 0 || nak_resends > 0) {
        let mut e = ev(
            f,
            &[
                EvidenceKind::Gap,
                EvidenceKind::RetransmitNak,
                EvidenceKind::RetransmitTimeout,
                EvidenceKind::RetransmitUnknown,
            ],
        );
        if let Some(pf) = partner {
            e.extend(ev(pf, &[EvidenceKind::Nak]));
            e.sort_by_key(|x| x.frame);
        }
        let lat = f
            .latency()
            .nak_to_retransmit
            .summary()
            .map(|l| format!("; NAK to resend {}", ms(l.p50_ns)))
            .unwrap_or_default();
        let mut how = Vec::new();
        // Selective repeat resends the NAKed PSN alone; go-back-N everything from it.
        let selective = st.selective_resends.min(nak_resends);
        if selective > 0 {
            how.push(format!(
                "{} after NAK (the NAKed PSN alone, new PSNs going on: selective repeat)",
                plural(selective, "selective resend", "selective resends")
            ));
        }
        if nak_resends > selective {
            how.push(format!(
                "{} after NAK",
                plural(nak_resends - selective, "go-back-N resend", "go-back-N resends")
            ));
        }
        if st.retransmits_timeout > 0 {
            how.push(format!(
                "{} after the ACK timeout",
                plural(st.retransmits_timeout, "resend", "resends")
            ));
        }
        if st.retransmits_unknown > 0 {
            how.push(format!(
                "{} whose cause is not visible ({not_visible})",
                plural(st.retransmits_unknown, "resend", "resends")
            ));
        }
        // Per packet: the PSNs missing in the gaps here, and one per NAK for a PSN seen here.
        let beyond = plural(st.lost_beyond, "NAKed PSN", "NAKed PSNs");
        let where_ = match (loss_gaps, st.lost_beyond) {
            (0, _) => format!("beyond this capture point: no gap here; {beyond} it saw pass"),
            (g, 0) => format!("{} at this capture point", plural(g, "gap", "gaps")),
            (g, _) => format!(
                "{} at this capture point; {beyond} it saw pass, lost beyond it",
                plural(g, "gap", "gaps")
            ),
        };
        let lost = (st.lost_here + st.lost_beyond).max(1);
        let what = format!(
            "{}: {} lost in the network ({where_}), recovered by {}{lat}",
            qp_name(f, a),
            plural(lost, "packet", "packets"),
            if how.is_empty() { "resends".to_string() } else { how.join(", ") },
        );
        push(
            Severity::Critical,
            FindingKind::NetworkLoss,
            what,
            e,
            nak_resends.max(st.missing).max(loss_gaps).max(lost),
        );
    }
    if st.retransmits_timeout > 0 && loss_gaps == 0 {
        // The CM REQ's timer when captured; else the shortest a requester may use, a bound
        // rather than this QP's timer (which may be far longer: 4.3 s at NCCL_IB_TIMEOUT=20).
        let timeout_what = if f.cold().cm_ack_timeout_ns.is_some() {
            format!("its ACK timeout ({timeout_ms}, from the CM REQ)")
        } else {
            format!("the shortest ACK timeout a requester uses ({timeout_ms}, --min-ack-timeout)")
        };
        let tails = f.reads().tail_timeouts;
        let why = if tails > 0 {
            format!(
                "the last response of {} was lost and no later response showed the gap, so only the ACK timer could: the requester stalled",
                plural(tails, "READ", "READs")
            )
        } else {
            "the requester waited out its ACK timeout (lost packets or ACKs), stalled".to_string()
        };
        push(
            Severity::Critical,
            FindingKind::TimeoutRetransmit,
            format!(
                "{}: {} with no NAK pending, at least {timeout_what} after the original: {why} {} (local_ack_timeout_err){}",
                qp_name(f, a),
                plural(st.retransmits_timeout, "timeout retransmission", "timeout retransmissions"),
                ms(st.timeout_stall_ns.max(0) as u64),
                if one_way { "; the ACKs are not in the capture" } else { "" }
            ),
            ev(f, &[EvidenceKind::RetransmitTimeout]),
            st.retransmits_timeout * 10,
        );
    }
    if st.retransmits_unknown > 0 && loss_gaps == 0 {
        let after = st
            .last_resend_after_ns
            .map(|n| format!(" {} after the flow's last new packet,", us(n)))
            .unwrap_or_default();
        push(
            Severity::Warning,
            FindingKind::ResendUnexplained,
            format!(
                "{}: {} with no NAK pending,{after} sooner than an ACK timeout ({timeout_ms}): cause not visible, {not_visible}",
                qp_name(f, a),
                plural(st.retransmits_unknown, "packet resent", "packets resent"),
            ),
            ev(f, &[EvidenceKind::RetransmitUnknown]),
            st.retransmits_unknown,
        );
    }
    if st.retransmits_implied > 0 {
        let gaps = if f.reads().read_response_gaps > 0 {
            format!(
                "; {} in its READ responses seen here",
                plural(f.reads().read_response_gaps, "gap", "gaps")
            )
        } else {
            "; the missing responses were lost beyond this capture point".to_string()
        };
        push(
            Severity::Critical,
            FindingKind::ImpliedNak,
            format!(
                "{}: {} after responses came out of sequence (implied NAK): READ responses lost in the network{gaps}",
                qp_name(f, a),
                plural(st.retransmits_implied, "READ re-issued", "READs re-issued"),
            ),
            ev(f, &[EvidenceKind::ReadResponseGap, EvidenceKind::RetransmitImplied]),
            st.retransmits_implied * 10,
        );
    }
    if st.spurious_naks > 0 {
        let mut e = ev(f, &[EvidenceKind::OutOfOrder, EvidenceKind::RetransmitSpurious]);
        if let Some(pf) = partner {
            e.extend(ev(pf, &[EvidenceKind::Nak]));
            e.sort_by_key(|x| x.frame);
        }
        push(
            Severity::Warning,
            FindingKind::SpuriousNak,
            format!(
                "{}: {} for packets that then arrived late (reordering, not loss): {} needlessly by go-back-N",
                qp_name(f, a),
                plural(st.spurious_naks, "NAK", "NAKs"),
                plural(st.retransmits_spurious, "packet resent", "packets resent"),
            ),
            e,
            st.retransmits_spurious.max(st.spurious_naks),
        );
    }
    let cl = p.capture_loss_gaps();
    if cl > 0 {
        let gaps: Vec<EvidenceRef> = p
            .unexplained_gaps()
            .take(5)
            .map(|g| EvidenceRef {
                frame: g.frame,
                ts_ns: g.ts_ns,
                what: format!(
                    "PSN {}..{} missing, never {}",
                    g.start,
                    crate::psn::psn_add(g.start, g.count - 1),
                    if f.uc() { "seen" } else { "NAKed or resent" }
                ),
            })
            .collect();
        if f.uc() {
            // UC never resends (reference §1.10): a gap is a lost message either way.
            push(
                Severity::Warning,
                FindingKind::UcLoss,
                format!(
                    "{}: {} missing on a UC QP ({}): UC does not resend, so these were lost, in the network or by the capture",
                    qp_name(f, a),
                    plural(st.missing, "PSN", "PSNs"),
                    plural(cl, "gap", "gaps")
                ),
                gaps,
                st.missing,
            );
        } else {
            push(
                Severity::Info,
                FindingKind::CaptureLoss,
                format!(
                    "{}: {} in the request PSNs never {}, nor filled by a late packet: probably lost by the capture, not the network",
                    qp_name(f, a),
                    plural(cl, "gap", "gaps"),
                    if one_way { "resent" } else { "NAKed or resent" }
                ),
                gaps,
                cl,
            );
        }
    }
    if st.out_of_order > 0 {
        let beyond = if st.late_beyond_window > 0 {
            format!(
                "; {} later than the reorder window ({})",
                plural(st.late_beyond_window, "was", "were"),
                us(a.cfg.reorder_ns)
            )
        } else {
            String::new()
        };
        push(
            if st.late_beyond_window > 0 { Severity::Warning } else { Severity::Info },
            FindingKind::OutOfOrder,
            format!(
                "{}: {} arrived after later PSNs, up to {} late, and {} not resent: reordering on the path (adaptive routing, packet spraying), not loss{beyond}",
                qp_name(f, a),
                plural(st.out_of_order, "packet", "packets"),
                us(st.max_late_ns),
                if st.out_of_order == 1 { "was" } else { "were" }
            ),
            ev(f, &[EvidenceKind::OutOfOrder]),
            st.out_of_order,
        );
    }
}

/// NAKs and RNR NAKs a flow's responder sent (reference §1.5): DC connection set-up
/// answers, error NAKs, receiver-not-ready waits.
fn nak_findings(
    f: &Flow,
    partner: Option<&Flow>,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    // On Mellanox DC, NAK code 4 ("invalid RD request" in IBTA RD terms) answers DC
    // connection setup (dc-small2.pcap frame 1 precedes the DC connect); report, not alarm.
    let dc_setup = if f.dc() { f.naks().by_code[4] } else { 0 };
    if dc_setup > 0 {
        push(
            Severity::Info,
            FindingKind::DcNak,
            format!(
                "{}: {} with code 4 on Mellanox DC (part of DC connection setup, not an RD error)",
                qp_name(f, a),
                plural(dc_setup, "NAK", "NAKs")
            ),
            ev(f, &[EvidenceKind::Nak]),
            dc_setup,
        );
    }
    let bad_naks: u64 = f.naks().by_code[1..].iter().sum::<u64>() - dc_setup;
    if bad_naks > 0 {
        let names = [
            "invalid request",
            "remote access error",
            "remote operational error",
            "invalid RD request",
            "reserved code",
        ];
        let list: Vec<String> = f.naks().by_code[1..]
            .iter()
            .zip(names)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| format!("{n} {name}"))
            .collect();
        push(
            Severity::Critical,
            FindingKind::NakError,
            format!("{}: NAKs that end the connection's work: {}", qp_name(f, a), list.join(", ")),
            ev(f, &[EvidenceKind::Nak]),
            bad_naks * 10,
        );
    }
    if f.naks().rnr > 0 {
        let (lo, hi) = f.naks().rnr_timer_us.unwrap_or((0, 0));
        let retries = partner.map_or(0, |pf| pf.psn.stats().retransmits_rnr);
        push(
            Severity::Warning,
            FindingKind::Rnr,
            format!(
                "{}: {} from {}, the receiver, not ready (no receive posted on its QP), timer {}-{} us, {} by the sender {}; not loss",
                qp_name(f, a),
                plural(f.naks().rnr, "RNR NAK", "RNR NAKs"),
                f.key.src,
                lo,
                hi,
                plural(retries, "retry", "retries"),
                f.key.dst
            ),
            {
                let mut e = ev(f, &[EvidenceKind::Rnr]);
                if let Some(pf) = partner {
                    e.extend(ev(pf, &[EvidenceKind::RetransmitNak]));
                    e.sort_by_key(|x| x.frame);
                }
                e
            },
            f.naks().rnr,
        );
    }
}

/// CE marks on a flow, and whether CNPs came back for them (reference §1.6).
fn ecn_findings(
    f: &Flow,
    partner: Option<&Flow>,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    let ce = f.ce();
    if ce > 0 {
        let delay = f
            .latency()
            .ce_to_cnp
            .summary()
            .map(|l| format!(", CE to CNP {} median", ms(l.p50_ns)))
            .unwrap_or_default();
        // The notification point answers CE-marked data (reference §1.6: "the NP (receiver
        // of CE-marked data) sends the CNP"); a flow of ACKs, NAKs or CNPs only, marked on
        // the way, is congestion on the path back, never a silent NP.
        let data_ce = f.cold().data_ce;
        if data_ce == 0 {
            push(
                Severity::Info,
                FindingKind::Congestion,
                format!(
                    "{}: congestion on the way back: {} CE-marked ({:.1}%), none of them data (NICs answer CE-marked data with CNPs, not ACKs or CNPs)",
                    qp_name(f, a),
                    plural(ce, "packet", "packets"),
                    f.ce_fraction() * 100.0
                ),
                ev(f, &[EvidenceKind::Ce]),
                ce,
            );
        } else if f.cold().cnps_received == 0 {
            let data = f.data_packets();
            push(
                Severity::Warning,
                FindingKind::CeWithoutCnp,
                format!(
                    "{}: {} CE-marked ({:.1}%) but no CNP came back to the sender (notification point off, or CNPs not in the capture)",
                    qp_name(f, a),
                    plural(data_ce, "data packet", "data packets"),
                    data_ce as f64 / data.max(1) as f64 * 100.0
                ),
                ev(f, &[EvidenceKind::Ce]),
                data_ce,
            );
        } else {
            let mut e = ev(f, &[EvidenceKind::Ce]);
            if let Some(pf) = partner {
                e.extend(ev(pf, &[EvidenceKind::Cnp]));
                e.sort_by_key(|x| x.frame);
            }
            push(
                Severity::Info,
                FindingKind::Congestion,
                format!(
                    "{}: congestion: {} CE-marked ({:.1}%), {} back to the sender{delay}",
                    qp_name(f, a),
                    plural(ce, "packet", "packets"),
                    f.ce_fraction() * 100.0,
                    plural(f.cold().cnps_received, "CNP", "CNPs")
                ),
                e,
                ce,
            );
        }
    }
}

/// The congestion-control findings of a data sender's flow (docs/verdicts.md "Congestion
/// control"): CE marks that kept coming with no CNP back while CNPs came at other times,
/// CNPs faster than the NP's pacing, and a rate that did not fall after the CNPs.
pub(super) fn cc_findings(
    f: &Flow,
    cc: &crate::cc::CcState,
    partner: Option<&Flow>,
    a: &Analyzer,
    push: &mut impl FnMut(Severity, FindingKind, String, Vec<EvidenceRef>, u64),
) {
    let cfg = &a.cfg.cc;
    let pacing = us(cfg.cnp_pacing_ns);
    let cnp_ev = || partner.map(|pf| ev(pf, &[EvidenceKind::Cnp])).unwrap_or_default();
    let (runs, worst) = cc.unanswered(cfg.cnp_pacing_ns);
    // With no CNP at all the flow's `ce_without_cnp` is already said.
    if let (Some(w), true) = (worst, f.cold().cnps_received > 0) {
        let mut e = vec![EvidenceRef {
            frame: w.first_frame,
            ts_ns: w.first_ns,
            what: format!("first CE mark of {} with no CNP back", plural(w.packets, "packet", "packets")),
        }];
        e.extend(cnp_ev());
        e.sort_by_key(|x| x.frame);
        e.dedup_by_key(|x| x.frame);
        push(
            Severity::Warning,
            FindingKind::CeWithoutCnp,
            format!(
                "{}: CE marks kept coming with no CNP back: {} over {} from frame {} ({} of at least {} CE marks over 2 x the {pacing} CNP pacing), though {} came at other times (the NP stopped answering, or those CNPs are not in the capture)",
                qp_name(f, a),
                plural(w.packets, "CE-marked packet", "CE-marked packets"),
                us(w.last_ns - w.first_ns),
                w.first_frame,
                plural(runs, "run", "runs"),
                crate::cc::CE_RUN_MIN_PACKETS,
                plural(f.cold().cnps_received, "CNP", "CNPs"),
            ),
            e,
            w.packets,
        );
    }
    let intervals = cc.intervals.count();
    if cc.too_fast >= 3 {
        let most = cc.too_fast * 2 > intervals;
        let l = cc.intervals.summary();
        let mut e = cnp_ev();
        if let Some((frame, ts_ns, gap)) = cc.first_too_fast {
            e.push(EvidenceRef { frame, ts_ns, what: format!("CNP {} after the one before", us(gap)) });
            e.sort_by_key(|x| x.frame);
            e.dedup_by_key(|x| x.frame);
        }
        push(
            if most { Severity::Warning } else { Severity::Info },
            FindingKind::CnpTooFast,
            format!(
                "{}: CNPs closer together than the {pacing} pacing (--cnp-pacing-us): {} of {} intervals, shortest {}, median {} (the NP paces faster than that, or per port or priority rather than per QP)",
                qp_name(f, a),
                cc.too_fast,
                intervals,
                us(l.map_or(0, |l| l.min_ns) as i64),
                us(l.map_or(0, |l| l.p50_ns) as i64),
            ),
            e,
            cc.too_fast,
        );
    }
    // Past a marking queue (the incast's senders share one, or the flow's data arrives
    // CE-marked), a sender's rate is its share of the drain rate: withheld, and said in
    // `cc.reaction.not_judged` (and by the incast finding for an incast's senders). Under
    // half the link speed it is an INFO (`cc_withheld`).
    if !cc.not_reacting() {
        return;
    }
    let (severity, title) = match cc_withheld(f, a) {
        None => (
            Severity::Warning,
            format!(
                "{}: the sending rate did not fall after the CNPs: {} of {} evaluated CNPs followed by a fall, rate after/before {:.2} on average ({} windows, {} after the CNP); the sender's congestion control may be off, or its rate is set by its application or its ACKs, not by the CNPs",
                qp_name(f, a),
                cc.fell,
                cc.evaluated,
                cc.mean_ratio().unwrap_or(1.0),
                us(cfg.window_ns),
                us(cfg.delay_ns),
            ),
        ),
        // Under half the link speed, a cut from line rate does not bind: it cannot tell.
        Some("below_cut") => (
            Severity::Info,
            format!(
                "{}: the sending rate did not fall after the CNPs ({} of {} evaluated CNPs followed by a fall, rate after/before {:.2}), but it sent at {:.1} Gb/s before them, under half the link's {:.0} Gb/s (--link-speed, 100G unless set): a DCQCN cut from line rate does not bind a sender its application paces that low, so this cannot tell whether its congestion control is on (on a slower link than that, this rate may be its line rate: give --link-speed)",
                qp_name(f, a),
                cc.fell,
                cc.evaluated,
                cc.mean_ratio().unwrap_or(1.0),
                cc.rate_before_bps(cfg.window_ns).unwrap_or(0.0) / 1e9,
                a.cfg.link_speed_bps as f64 / 1e9,
            ),
        ),
        // Past a marking queue: withheld, said in `cc.reaction.not_judged`.
        Some(_) => return,
    };
    push(severity, FindingKind::CcNotReacting, title, cnp_ev(), cc.evaluated);
}

#[cfg(test)]
mod address_tests {
    #[test]
    fn addresses_read_as_display_writes_them() {
        use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
        for a in [0u8, 1, 9, 10, 99, 100, 109, 110, 199, 200, 255] {
            for b in [0u8, 7, 42, 255] {
                let ip = IpAddr::V4(Ipv4Addr::new(a, b, 10, a ^ b));
                assert_eq!(super::address_text(&ip), ip.to_string());
            }
        }
        let v6 = IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1));
        assert_eq!(super::address_text(&v6), "fe80::1");
    }
}
