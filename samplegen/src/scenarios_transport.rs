//! Transport scenarios real fabrics produce and textbook traffic does not: reordering from
//! adaptive routing and packet spraying, NAKs that reordering provokes, READs re-issued after
//! a lost response (implied NAK), resends too soon to be timeouts, UC loss, a capture of one
//! direction only, and a CM-negotiated ACK timeout. Each states every finding the report
//! must give (`findings` in NAME.expected.json); they are not part of the demo capture.

use crate::fabric::{Conn, Gen, Host, Req};
use crate::scenarios::Scenario;
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::NakCode;
use rocescope_decoder::ext::*;
use rocescope_decoder::{BthRepr, Ecn, Opcode};
use std::net::IpAddr;

/// The transport scenarios.
pub const TRANSPORT: &[Scenario] = &[
    ("read-implied-nak", "A READ response lost in the network: the requester re-issues the READ from the missing PSN (implied NAK), 3 us later", read_implied_nak),
    ("spurious-nak", "A packet overtaken on the path: the responder NAKs it, it arrives late, and the requester's go-back-N resends packets that were never lost", spurious_nak),
    ("reorder-spray", "Per-packet spraying over paths 1-6 us apart (adaptive routing): 2,000 packets on 4 QPs, reordered, nothing lost, ACKed", reorder_spray),
    ("reorder-late", "One packet 150 us late with no NAK (a NIC that places out-of-order data): reordering beyond the window, not loss", reorder_late),
    ("one-direction", "Only the requests captured (a one-way mirror): a loss and its go-back-N, and a timeout, with no ACK or NAK in the capture", one_direction),
    ("uc-loss", "A UC WRITE stream that loses a packet: UC never resends, so the gap is lost data", uc_loss),
    ("early-resend", "A SEND resent 3 us after the original with no NAK in the capture: too soon for an ACK timeout", early_resend),
    ("cc-reaction", "Congestion control per QP: two senders captured at their own links, before the congested queue (no CE mark seen there), one halving its rate after each CNP and one keeping it; one gets CNPs 10 us apart (faster than a 50 us pacing), and one keeps getting CE marks after its CNPs stop", cc_reaction),
    ("cc-past-queue", "One sender captured past the congested queue: its data arrives CE-marked (every third packet), a CNP goes back every 60 us, and its rate there, the queue's drain rate, does not fall: no cc_not_reacting verdict (not judged: past the queue)", cc_past_queue),
    ("ce-idle-bursts", "Six bursts of 20 CE-marked packets 2 ms apart (idle between): the NP answers each burst's first mark 2 us later and paces the rest (50 us): every burst answered, no ce_without_cnp, CE to CNP 2 us", ce_idle_bursts),
    ("pfc-no-ecn", "Priority 3 paused 25% of a 20 ms capture by 40 pauses of 125 us while its ECT(0) RoCE carries no CE mark and draws no CNP (ECN off on the switch, or marking above XOFF): pfc_without_ecn; priority 4 paused alike carries Not-ECT RoCE, which cannot be marked: its pfc_without_ecn blames the senders' NICs, not the switch", pfc_no_ecn),
    ("microburst", "A steady 1 kB every 100 us for 20 ms with one 12-packet burst in 10 us (half CE-marked) at 10.02 ms, a CNP back, and a PFC pause on priority 3 at 20.5 ms: a 10.5 Gb/s burst that 10 ms bins average to 0.1 Gb/s", microburst),
    ("cm-timeout", "A CM REQ that sets a 4.2 ms local ACK timeout (t=10), then a resend 5 ms after the original: a timeout by that connection's own timer", cm_timeout),
    ("read-tail-timeout", "A READ whose Last response is lost in the network and no later response shows it: the requester re-issues the READ from that PSN only after its ACK timeout (67.2 ms): a timeout, not an implied NAK", read_tail_timeout),
    ("incast", "16 senders to one receiver at 10 Gb/s, captured on the receiver's link past the congested queue: CE marks and a CNP to each sender every 90 us; each sender's rate there is its share of the drain rate, whatever it does, so no per-flow cc_not_reacting verdict (analyse with --link-speed 10G --bin 10us)", incast),
    ("mirror-duplicates", "A SPAN of both ports of a routed path: every packet twice, 1.5 us apart, TTL one lower (two egress copies CE-marked); one packet lost beyond the switch, NAKed and resent by go-back-N with new IP identifications; a CNP: 1 loss and 2 resends, not 60", mirror_duplicates),
    ("constant-ip-id", "Senders that put one constant in every IP identification (RFC 6864): at the responder's link, five CE marks each answered by a byte-identical CNP, and one packet lost upstream, NAKed and resent by go-back-N with the four after it, every resend the same bytes as the packet it repeats: 5 CNPs and 5 resends, none a mirror copy", constant_ip_id),
    ("nak-beyond", "Captured at the requester's link: 5 packets lost beyond the capture point, each NAKed by the responder and resent by go-back-N with the 2 after it (5 packets lost, 10 reached the responder out of sequence), and a WRITE of 3 packets lost whole, resent after the ACK timeout (one timeout, 3 packets)", nak_beyond),
    ("sampled-capture", "A lossy mirror that keeps one request packet in eight on four busy QPs: PSN gaps never NAKed nor resent on every QP; the report says once that the capture holds about 13% of the traffic, with one capture-wide capture_loss finding", crate::scenarios_quality::sampled_capture),
    ("marking-ends", "Two hosts, three connections each way, no expectations given: 10.0.0.73 marks everything DSCP 26, its peer 10.0.0.74 DSCP 0 (data and ACKs): the two ends of 6 connections mark differently (not audited, not clean)", crate::scenarios_quality::marking_ends),
    ("qp-restart", "A job restarted on reused QP numbers: two QPs end a life at PSN ~5000, all acknowledged, and start again at PSN 0 (NCCL), one after a 2 s pause, one at once: new lives, no resends", qp_restart),
    ("selective-repeat", "Selective repeat (lossy RoCE): a loss seen at the responder's link (gap, NAK, one copy of the missing PSN a round trip later) and one at the requester's link (original passed, NAK, one resend while new PSNs go on): network loss repaired selectively", selective_repeat),
    ("mtu-blackhole", "A path-MTU black hole: small SENDs acknowledged, a 4 KiB WRITE resent 7 times after the ACK timeout and never acknowledged: the retry count is used up", mtu_blackhole),
    ("rhythm-straggler", "A ring AllReduce over six hosts, an iteration every 10 ms (a few µs of jitter): every host WRITEs 60 packets to the next in each; 10.0.0.66 sends at less than half the others' rate and finishes 3 ms after them every time: a straggler", crate::scenarios_rhythm::rhythm_straggler),
];

/// A request with an explicit PSN, leaving the connection's next PSN as it was.
#[allow(clippy::too_many_arguments)]
fn request_at(
    g: &mut Gen,
    c: &mut Conn,
    psn: u32,
    op: Opcode,
    ext: ExtRepr,
    len: usize,
    ackreq: bool,
    kind: Req,
) {
    let next = c.psn;
    c.psn = psn;
    g.request(c, op, ext, len, ackreq, kind);
    c.psn = next;
}

fn write_ext(c: &Conn, len: usize) -> ExtRepr {
    let reth = RethRepr { va: 0x7f20_0000_0000 + u64::from(c.psn) * 4096, rkey: 0x4242, dma_len: len as u32 };
    ExtRepr { reth: Some(reth), ..Default::default() }
}

fn read_implied_nak(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(31), Host::v4(32), 0x81, 0x82, 3000);
    // A healthy READ first, so the PMTU is known.
    g.read(&mut c, 2048);
    g.wait_us(10);
    let psn = c.psn;
    g.read_request(&c, psn, RethRepr { va: 0x7e10_0000_0000, rkey: 0x5151, dma_len: 4096 });
    c.psn = (psn + 4) & 0xFF_FFFF;
    c.msn += 1;
    g.wait_us(4);
    let msn = c.msn;
    // Responses psn..psn+3; psn+1 is lost in the network.
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_FIRST, psn, Some(AethRepr::ack(msn)), 1024);
    g.wait_ns(300);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_MIDDLE, psn + 2, None, 1024);
    g.event("read_response_gap", format!("READ response PSN {} missing before this frame", psn + 1));
    g.wait_ns(300);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_LAST, psn + 3, Some(AethRepr::ack(msn)), 1024);
    // The requester saw psn+2 while expecting psn+1: it asks again from psn+1.
    g.wait_us(3);
    g.read_request(&c, psn + 1, RethRepr { va: 0x7e10_0000_0400, rkey: 0x5151, dma_len: 3072 });
    g.event("implied_nak", format!("READ re-issued from PSN {} (implied NAK)", psn + 1));
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.retransmits += 1;
    f.retransmits_implied += 1;
    g.wait_us(4);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_FIRST, psn + 1, Some(AethRepr::ack(msn)), 1024);
    g.wait_ns(300);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_MIDDLE, psn + 2, None, 1024);
    g.wait_ns(300);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_LAST, psn + 3, Some(AethRepr::ack(msn)), 1024);
    g.wait_us(10);
    g.send(&mut c, 256);
    g.expect_finding("implied_nak", "critical", Some(c.b_qpn));
}

fn spurious_nak(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(33), Host::v4(34), 0x91, 0x92, 500);
    c.pmtu = 256;
    let first = c.psn;
    let ext = write_ext(&c, 8 * 256);
    g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 256, false, Req::New);
    for _ in 0..2 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    }
    // PSN first+3 takes a slower path.
    let late = g.lose(&mut c);
    g.expect_gap(&c, 1, false);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    g.wait_us(1);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, late, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN {late}: the responder saw {} first", late + 1));
    request_at(g, &mut c, late, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    g.event("late", format!("PSN {late} arrives late: it was never lost"));
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.out_of_order += 1;
    f.spurious_naks += 1;
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    // The NAK reaches the requester: go-back-N from the NAKed PSN, needlessly.
    g.wait_us(3);
    let next = c.psn;
    c.psn = late;
    for _ in late..next {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::RetransmitNak);
    }
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.retransmits_spurious += u64::from(next - late);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 256, true, Req::New);
    assert_eq!(last, first + 7);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    g.expect_finding("spurious_nak", "warning", Some(c.b_qpn));
    g.expect_finding("out_of_order", "info", Some(c.b_qpn));
}

/// A deterministic generator (xorshift) for the path skews.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn reorder_spray(g: &mut Gen) {
    const QPS: u32 = 4;
    const PER_QP: u32 = 500;
    const MSG: u32 = 50;
    let mut conns: Vec<Conn> = (0..QPS)
        .map(|i| {
            let mut c = Conn::new(Host::v4(35), Host::v4(36), 0xA1 + 2 * i, 0xA2 + 2 * i, 10_000 * (i + 1));
            c.pmtu = 64;
            c
        })
        .collect();
    // Each QP sends a packet every 1 us (the four interleaved); each packet takes one of
    // several paths, 1 to 6 us long.
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let t0 = g.t;
    let mut arrivals: Vec<(i64, u32, u32)> = Vec::new(); // (time, qp index, packet index)
    for k in 0..PER_QP {
        for q in 0..QPS {
            let sent = t0 + i64::from(k) * 1000 + i64::from(q) * 250;
            let skew = 1000 + (rng.next() % 5001) as i64;
            arrivals.push((sent + skew, q, k));
        }
    }
    arrivals.sort();
    // What the analyzer must count, by construction: a packet is late when a later PSN of
    // its QP arrived before it; a gap opens when a PSN arrives with earlier ones missing.
    let mut highest: Vec<Option<u32>> = vec![None; QPS as usize];
    let mut done_at: Vec<Vec<i64>> = vec![vec![0; (PER_QP / MSG) as usize]; QPS as usize];
    let mut arrived: Vec<u32> = vec![0; (QPS * PER_QP / MSG) as usize];
    let mut acks: Vec<(i64, u32, u32)> = Vec::new();
    let base: Vec<u32> = conns.iter().map(|c| c.psn).collect();
    for &(t, q, k) in &arrivals {
        let (qi, c) = (q as usize, &mut conns[q as usize]);
        g.t = t;
        let pos = k % MSG;
        let (op, ext) = match pos {
            0 => (Opcode::RC_WRITE_FIRST, write_ext(c, (MSG * 64) as usize)),
            p if p == MSG - 1 => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
            _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
        };
        request_at(g, c, base[qi] + k, op, ext, 64, pos == MSG - 1, Req::New);
        let f = g.flow(c.a, c.b, c.b_qpn);
        match highest[qi] {
            Some(h) if k < h => f.out_of_order += 1,
            Some(h) if k > h + 1 => {
                f.gaps += 1;
                f.missing_psns += u64::from(k - h - 1);
            }
            _ => {}
        }
        highest[qi] = Some(highest[qi].map_or(k, |h| h.max(k)));
        let m = (k / MSG) as usize;
        done_at[qi][m] = done_at[qi][m].max(t);
        let slot = &mut arrived[qi * (PER_QP / MSG) as usize + m];
        *slot += 1;
        if *slot == MSG {
            // The NIC places out-of-order data and ACKs the message once it is whole.
            acks.push((t + 2000, q, base[qi] + k / MSG * MSG + MSG - 1));
        }
    }
    // ACKs after the data (their own frames, in time order).
    acks.sort();
    for (t, q, psn) in acks {
        g.t = g.t.max(t);
        let c = &mut conns[q as usize];
        c.msn += 1;
        g.ack(c, psn);
    }
    for c in &conns {
        g.expect_finding("out_of_order", "info", Some(c.b_qpn));
    }
}

fn reorder_late(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(37), Host::v4(38), 0xB1, 0xB2, 77_000);
    c.pmtu = 256;
    let ext = write_ext(&c, 10 * 256);
    g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 256, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    let late = g.lose(&mut c);
    g.expect_gap(&c, 1, false);
    let gap_at = g.t;
    for _ in 0..6 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
        g.wait_us(1);
    }
    g.t = gap_at + 150_000;
    request_at(g, &mut c, late, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 256, false, Req::New);
    g.event("late", format!("PSN {late} arrives 150 us after PSN {}: late, never lost", late + 1));
    g.flow(c.a, c.b, c.b_qpn).out_of_order += 1;
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 256, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    g.expect_finding("out_of_order", "warning", Some(c.b_qpn));
}

fn one_direction(g: &mut Gen) {
    // nak-gobackn's loss and timeout, with nothing of the responders' in the capture.
    let mut c = Conn::new(Host::v4(39), Host::v4(40), 0xC1, 0xC2, 100);
    let ext = write_ext(&c, 8 * 1024);
    g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 1024, false, Req::New);
    for _ in 0..2 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let lost = g.lose(&mut c);
    g.expect_gap(&c, 1, false);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.wait_us(5);
    let next = c.psn;
    c.psn = lost;
    for _ in lost..next {
        // Asked for by a NAK the capture does not hold.
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    g.event("retransmit", format!("PSN {lost} sent again: its NAK is not in the capture"));
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.retransmits += u64::from(next - lost);
    f.retransmits_unknown += u64::from(next - lost);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    let mut t = Conn::new(Host::v4(41), Host::v4(42), 0xD1, 0xD2, 7000);
    let psn = g.request(&mut t, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    g.wait_us(67_109);
    t.psn = psn;
    g.request(&mut t, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::RetransmitTimeout);
    g.event("retransmit", format!("PSN {psn} sent again after the ACK timeout"));
    g.wait_us(5);
    g.request(&mut t, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    g.wait_us(2000);
    g.expect_finding("network_loss", "critical", Some(c.b_qpn));
    g.expect_finding("timeout_retransmit", "critical", Some(t.b_qpn));
    g.expect_finding("one_direction", "warning", Some(c.b_qpn));
}

fn uc_loss(g: &mut Gen) {
    let c = Conn::new(Host::v4(43), Host::v4(44), 0xE1, 0xE2, 900);
    let mut psn = c.psn;
    let emit = |g: &mut Gen, op: Opcode, ext: ExtRepr, psn: u32| {
        let bth = BthRepr { opcode: op, dest_qp: c.b_qpn, psn, ..Default::default() };
        g.roce(c.a, c.b, None, c.dscp, c.ecn, c.sport, bth, ext, 1024, IcrcMode::Correct, None);
    };
    let reth = RethRepr { va: 0x7f30_0000_0000, rkey: 0x9, dma_len: 6 * 1024 };
    emit(g, Opcode::UC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() }, psn);
    psn += 1;
    emit(g, Opcode::UC_WRITE_MIDDLE, ExtRepr::default(), psn);
    psn += 2; // psn - 1 is lost: UC will not send it again
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.gaps += 1;
    f.missing_psns += 1;
    f.capture_loss_gaps += 1;
    for _ in 0..3 {
        emit(g, Opcode::UC_WRITE_MIDDLE, ExtRepr::default(), psn);
        psn += 1;
    }
    g.event("uc_loss", format!("PSN {} missing: a UC packet lost, never resent", psn - 4));
    emit(g, Opcode::UC_WRITE_LAST, ExtRepr::default(), psn);
    g.expect_finding("uc_loss", "warning", Some(c.b_qpn));
}

fn early_resend(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(45), Host::v4(46), 0xF5, 0xF6, 4242);
    let psn = g.request(&mut c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    g.wait_us(3);
    request_at(g, &mut c, psn, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    g.event("retransmit", format!("PSN {psn} sent again 3 us later, with no NAK in the capture"));
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.retransmits += 1;
    f.retransmits_unknown += 1;
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, psn);
    g.wait_us(10);
    g.send(&mut c, 128);
    g.expect_finding("resend_unexplained", "warning", Some(c.b_qpn));
}

/// A CM MAD (management class 7) with `attribute` and the CM data bytes set by `fill`.
fn cm_mad(attribute: u16, tid: u64, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut mad = vec![0u8; 256];
    mad[0] = 1; // base version
    mad[1] = 0x07; // Communication Manager
    mad[2] = 2; // class version
    mad[3] = 0x03; // Send
    mad[8..16].copy_from_slice(&tid.to_be_bytes());
    mad[16..18].copy_from_slice(&attribute.to_be_bytes());
    fill(&mut mad[24..]);
    mad
}

fn be24(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

fn cm_timeout(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(47), Host::v4(48), 0x111, 0x112, 60_000);
    let b_start = 90_000;
    // REQ (requester -> responder): local QPN, starting PSN, local ACK timeout t=10.
    let req = cm_mad(0x0010, 0x77, |d| {
        be24(d, 32, c.a_qpn);
        be24(d, 44, b_start);
        d[95] = 10 << 3;
    });
    let rep = cm_mad(0x0013, 0x77, |d| {
        be24(d, 12, c.b_qpn);
        be24(d, 20, c.psn);
    });
    for (src, dst, mad, psn) in [(c.a, c.b, req, 0u32), (c.b, c.a, rep, 0)] {
        let (IpAddr::V4(s), IpAddr::V4(d)) = (src.ip, dst.ip) else { unreachable!("IPv4 hosts") };
        let ip = IpRepr::V4 { src: s, dst: d, dscp: 26, ecn: Ecn::Ect0, ttl: 64, id: 0 };
        let bth = BthRepr { opcode: Opcode::UD_SEND_ONLY, dest_qp: 1, psn, ..Default::default() };
        let ext = ExtRepr { deth: Some(DethRepr { qkey: 0x8001_0000, src_qp: 1 }), ..Default::default() };
        let mut f = RoceV2Frame::new(
            src.mac,
            dst.mac,
            ip,
            IbRepr { bth, ext, payload: mad, icrc: IcrcMode::Correct },
        );
        f.sport = 0xC100;
        g.roce_frame(&f, None);
        g.wait_us(20);
    }
    let psn = g.request(&mut c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    // The ACK is lost; 5 ms later (more than 4.096 us x 2^10 = 4.19 ms) the requester resends.
    g.wait_us(5000);
    request_at(g, &mut c, psn, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::RetransmitTimeout);
    g.event(
        "retransmit",
        format!("PSN {psn} sent again 5 ms later: this connection's ACK timeout is 4.19 ms"),
    );
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, psn);
    g.expect_finding("timeout_retransmit", "critical", Some(c.b_qpn));
}

/// Which packets of a [`cc_stream`] arrive CE-marked at the capture point: by packet index,
/// µs from the start, and whether a CNP follows the packet.
type Marks = fn(i64, i64, bool) -> bool;

/// Marks as a capture before the queue sees them: none.
fn unmarked(_: i64, _: i64, _: bool) -> bool {
    false
}

/// Marks past the queue: the first packet and the one each CNP answers.
fn answered(i: i64, _: i64, cnp: bool) -> bool {
    i == 0 || cnp
}

/// A stream of 1 kB WRITE packets on `c` for `us` µs, one every `gap_ns`; a CNP from the
/// receiver at each time in `cnps` (µs from the start); after each CNP the sender sends at
/// half its rate for 60 µs when `react`. `marks` says which packets arrive CE-marked. The
/// message ends with an ACK.
#[allow(clippy::too_many_arguments)]
fn cc_stream(g: &mut Gen, c: &mut Conn, us: i64, gap_ns: i64, cnps: &[i64], react: bool, marks: Marks) {
    let t0 = g.t;
    let reth = RethRepr { va: 0x7f40_0000_0000, rkey: 0x77, dma_len: 1 << 30 };
    let mut next = cnps.iter().copied().peekable();
    let mut slow_until = i64::MIN;
    let mut i = 0i64;
    let mut last = c.psn;
    loop {
        let now = g.t - t0;
        if now >= us * 1000 {
            break;
        }
        let cnp_due = next.peek().is_some_and(|&at| now >= at * 1000);
        c.ecn = if marks(i, now / 1000, cnp_due) { Ecn::Ce } else { Ecn::Ect0 };
        let (op, ext) = if i == 0 {
            (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() })
        } else {
            (Opcode::RC_WRITE_MIDDLE, ExtRepr::default())
        };
        last = g.request(c, op, ext, 1024, false, Req::New);
        if cnp_due {
            next.next();
            g.wait_ns(200);
            g.cnp(c.b, c.a, c.a_qpn, 48, None);
            let what =
                if react { "the sender halves its rate for 60 us" } else { "the sender keeps its rate" };
            g.event("cnp", format!("CNP to the sender's QP 0x{:x} at {} us: {what}", c.a_qpn, now / 1000));
            if react {
                slow_until = g.t - t0 + 60_000;
            }
        }
        i += 1;
        let gap = if g.t - t0 < slow_until { 2 * gap_ns } else { gap_ns };
        // The frame itself took 800 ns of the generator's clock (or its frame gap).
        g.wait_ns((gap - g.frame_gap_ns.unwrap_or(800)).max(0));
    }
    c.ecn = Ecn::Ect0;
    last = g.request(c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New).max(last);
    c.msn += 1;
    g.wait_us(3);
    g.ack(c, last);
}

fn cc_reaction(g: &mut Gen) {
    let cnps: Vec<i64> = (1..=7).map(|k| k * 100).collect();
    // The first two are captured at their senders' links, before the congested queue: the
    // marks the queue sets come later, only the CNPs come back. There the sender's own rate
    // shows (docs/verdicts.md "Congestion control").
    // Reacts: half the rate for 60 µs after each CNP (DCQCN cuts at once, recovers later).
    let mut a = Conn::new(Host::v4(51), Host::v4(52), 0x121, 0x122, 1000);
    cc_stream(g, &mut a, 800, 1000, &cnps, true, unmarked);
    g.wait_us(100);
    // Does not react: the same rate before and after every CNP, 56 Gb/s (1 kB every 150 ns
    // on a 100G link, kept to its headers): above half the link speed, where a DCQCN cut
    // from line rate binds, so a rate that holds is a WARNING (a sender under half of it is
    // an INFO: its application may pace it below the cut).
    let mut b = Conn::new(Host::v4(53), Host::v4(54), 0x131, 0x132, 2000);
    (g.frame_gap_ns, g.snap) = (Some(80), Some(128));
    cc_stream(g, &mut b, 800, 150, &cnps, false, unmarked);
    (g.frame_gap_ns, g.snap) = (None, None);
    g.expect_finding("cc_not_reacting", "warning", Some(b.b_qpn));
    g.expect_finding("truncated", "info", None);
    g.wait_us(100);
    // CNPs 10 µs apart, a sender too slow (one packet per 20 µs) for its rate to be judged.
    let mut c = Conn::new(Host::v4(55), Host::v4(56), 0x141, 0x142, 3000);
    let fast: Vec<i64> = (0..8).map(|k| 20 + k * 20).collect();
    cc_stream(g, &mut c, 200, 20_000, &fast, false, answered);
    g.expect_finding("cnp_too_fast", "warning", Some(c.b_qpn));
    g.wait_us(100);
    // Two CNPs, then CE marks for 300 µs with none.
    let mut d = Conn::new(Host::v4(57), Host::v4(58), 0x151, 0x152, 4000);
    cc_stream(g, &mut d, 500, 5000, &[50, 100], false, |i, us, cnp| answered(i, us, cnp) || us >= 150);
    g.expect_finding("ce_without_cnp", "warning", Some(d.b_qpn));
    for q in [c.b_qpn, d.b_qpn] {
        g.expect_finding("congestion", "info", Some(q));
    }
}

/// One sender seen past the congested queue (docs/verdicts.md "Congestion control"): every
/// third packet arrives CE-marked, a CNP goes back every 60 µs (a CE run between two CNPs
/// spans less than two 50 µs pacing intervals: all answered), and the rate at the capture
/// point, the queue's drain rate, stays the same. `cc_not_reacting` is withheld
/// (`not_judged: past_queue`).
fn cc_past_queue(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(59), Host::v4(60), 0x171, 0x172, 5000);
    let cnps: Vec<i64> = (1..=13).map(|k| k * 60).collect();
    cc_stream(g, &mut c, 800, 1000, &cnps, false, |i, _, cnp| i % 3 == 0 || cnp);
    g.expect_finding("congestion", "info", Some(c.b_qpn));
}

/// Bursts of CE marks with idle time between (docs/verdicts.md "Congestion control"): six
/// WRITEs of 20 × 1 kB packets, all CE-marked (the queue above its marking threshold), 2 ms
/// apart. The NP answers each burst's first mark with a CNP 2 µs later and paces the rest
/// (its 50 µs interval outlasts the burst). Every burst is answered; the unanswered marks at
/// a burst's end do not join the next burst's over the idle time.
fn ce_idle_bursts(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(63), Host::v4(64), 0x181, 0x182, 7000);
    c.ecn = Ecn::Ce;
    for b in 0..6 {
        let reth = RethRepr { va: 0x7f60_0000_0000 + b * 0x10_0000, rkey: 0x99, dma_len: 20 * 1024 };
        let mut last = 0;
        for i in 0..20 {
            let (op, ext) = match i {
                0 => (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() }),
                19 => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
                _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
            };
            last = g.request(&mut c, op, ext, 1024, i == 19, Req::New);
            if i == 0 {
                // The frame took 800 ns of the clock: the CNP 2 µs after the mark.
                g.wait_ns(1_200);
                g.cnp(c.b, c.a, c.a_qpn, 48, None);
                g.event("cnp", format!("burst {}: CNP 2 us after its first CE mark", b + 1));
            }
            g.wait_ns(200);
        }
        c.msn += 1;
        g.wait_us(3);
        c.ecn = Ecn::Ect0;
        g.ack(&mut c, last);
        c.ecn = Ecn::Ce;
        g.wait_us(2_000);
    }
    g.expect_finding("congestion", "info", Some(c.b_qpn));
}

/// Pauses without ECN (field notes, "ECN before PFC"; docs/verdicts.md "PFC and PAUSE"): a
/// 20 ms capture in 40 cycles of 500 µs. Each cycle the switch pauses priorities 3 and 4 for
/// 125 µs (24,414 quanta at 100G), then, once the pauses expired, two senders write 16 kB
/// each on them: ECT(0) RoCE on priority 3, Not-ECT on priority 4. No packet is CE-marked, no
/// CNP comes back. Priority 3 paused 25% of the capture by 40 pauses: `pfc_without_ecn`.
/// Priority 4's data could not be marked at all: its `pfc_without_ecn` names the senders'
/// NICs (ECN off at the reaction point), never the switch.
fn pfc_no_ecn(g: &mut Gen) {
    let switch = [0x02, 0, 0, 0, 0xff, 0x03];
    let mut ect = Conn::new(Host::v4(65), Host::v4(66), 0x191, 0x192, 8000);
    ect.vlan = Some((100, 3));
    ect.pmtu = 4096;
    let mut not_ect = Conn::new(Host::v4(67), Host::v4(68), 0x1a1, 0x1a2, 9000);
    not_ect.vlan = Some((101, 4));
    not_ect.pmtu = 4096;
    not_ect.ecn = Ecn::NotEct;
    let mut q = [0u16; 8];
    q[3] = 24_414;
    q[4] = 24_414;
    let t0 = g.t;
    for k in 0..40 {
        let cycle = t0 + k * 500_000;
        g.t = g.t.max(cycle);
        g.pfc(switch, (1 << 3) | (1 << 4), q, None);
        if k == 0 {
            g.event("pfc_pause", "priorities 3 and 4 paused for 125 us, every 500 us".into());
        }
        g.t = cycle + 130_000;
        g.write(&mut ect, 16 * 1024, true);
        g.write(&mut not_ect, 16 * 1024, true);
    }
    g.t = t0 + 20_000_000;
    g.write(&mut ect, 4096, true);
    g.expect_finding("pfc_without_ecn", "warning", None);
}

/// A microburst a 10 ms bin hides (docs/verdicts.md "Microbursts"). Times are set exactly,
/// from the first frame: 200 steady 1,098-byte WRITEs (1,024 bytes of payload) 100 µs apart,
/// a burst of 12 of them 800 ns apart from 10.02 ms (one 10 µs bin from the capture start:
/// 13,176 bytes, 10.54 Gb/s over the bin; the first 6 CE-marked), a CNP back at 10.035 ms,
/// the ACK at 20 ms, a PFC pause of 65,535 quanta on priority 3 from the responder at 20.5 ms
/// (335.5 µs at 100G, expiring before the capture's last frame), and an ACK at 21 ms.
fn microburst(g: &mut Gen) {
    let t0 = g.t;
    let mut c = Conn::new(Host::v4(61), Host::v4(62), 0x161, 0x162, 6000);
    let reth = RethRepr { va: 0x7f50_0000_0000, rkey: 0x88, dma_len: 1024 };
    let only = || ExtRepr { reth: Some(reth), ..Default::default() };
    let mut at: Vec<(i64, bool)> = (0..200).map(|k| (k * 100_000, false)).collect();
    at.extend((0..12).map(|k| (10_020_000 + k * 800, true)));
    at.sort_unstable();
    let mut last = c.psn;
    let mut burst = 0;
    for (off, in_burst) in at {
        g.t = t0 + off;
        c.ecn = if in_burst && burst < 6 { Ecn::Ce } else { Ecn::Ect0 };
        burst += usize::from(in_burst);
        last = g.request(&mut c, Opcode::RC_WRITE_ONLY, only(), 1024, off == 19_900_000, Req::New);
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        if in_burst && burst == 1 {
            g.event("ecn_ce", "the burst begins: 12 packets in 10 us, the first 6 CE-marked".into());
        }
        if in_burst && burst == 12 {
            g.t = t0 + 10_035_000;
            g.cnp(c.b, c.a, c.a_qpn, 48, None);
            g.event("cnp", "CNP for the burst's CE marks".into());
        }
    }
    c.ecn = Ecn::Ect0;
    g.t = t0 + 20_000_000;
    g.ack(&mut c, last);
    g.t = t0 + 20_500_000;
    g.pfc(c.b.mac, 1 << 3, [0, 0, 0, 65535, 0, 0, 0, 0], None);
    g.event("pfc_pause", "PFC pause on priority 3 from the responder, 335.5 us at 100G".into());
    g.t = t0 + 21_000_000;
    g.ack(&mut c, last);
    g.expect_finding("congestion", "info", Some(c.b_qpn));
}

fn mirror_duplicates(g: &mut Gen) {
    // The NICs number their packets (IP identification), as ConnectX and soft-RoCE do.
    g.ip_ids = Some(Default::default());
    let (a, b) = (Host::v4(58), Host::v4(59));
    let mut c = Conn::new(a, b, 0x211, 0x212, 5000);
    let mut sent = Vec::new();
    let ext = write_ext(&c, 12 * 1024);
    let first = g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 1024, false, Req::New);
    sent.push(g.frames.len() - 1);
    let mut lost = first;
    for i in 1..7 {
        let psn = g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
        sent.push(g.frames.len() - 1);
        if i == 5 {
            // Taken by both mirror ports, then lost beyond the switch.
            lost = psn;
        }
        if i == 3 {
            // The NP answers the CE marks the switch set on the egress copies of 2 and 3.
            g.wait_us(2);
            g.cnp(b, a, 0x211, 48, None);
            g.event("cnp", "CNP to the sender's QP 0x211".into());
        }
        g.wait_us(1);
    }
    g.wait_us(2);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN sequence error, PSN {lost}: lost beyond the mirrored switch"));
    g.wait_us(3);
    c.psn = lost;
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.event("retransmit", format!("go-back-N from PSN {lost}, a new IP identification"));
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    for _ in 0..4 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    // The switch marked the egress copies of the 3rd and 4th packets (PSN first+2, +3).
    let marked: Vec<usize> = sent.get(2..4).map(<[usize]>::to_vec).unwrap_or_default();
    let copies = g.mirror_both_ports(1_500, |i| marked.contains(&i));
    g.flow(a, b, c.b_qpn).ecn_ce += marked.len() as u64;
    g.event("mirror_copy", format!("{copies} frames seen twice: this is the first second copy"));
    g.expect_finding("network_loss", "critical", Some(c.b_qpn));
    g.expect_finding("congestion", "info", Some(c.b_qpn));
}

fn constant_ip_id(g: &mut Gen) {
    let (a, b) = (Host::v4(62), Host::v4(63));
    // The requester's NIC puts 0x2a2a in every packet, the responder's 0x0100 (the real
    // roce.pcap's Huawei NIC puts 0): an equal identification says nothing of a copy.
    g.ip_id_fixed.insert(a.ip, 0x2a2a);
    g.ip_id_fixed.insert(b.ip, 0x0100);
    let mut c = Conn::new(a, b, 0x231, 0x232, 9000);
    let ext = write_ext(&c, 20 * 1024);
    let mut lost = 0;
    for i in 0..20u32 {
        if i == 15 {
            lost = g.lose(&mut c);
            g.expect_gap(&c, 1, false);
            g.wait_us(20);
            continue;
        }
        // The switch marks every third packet from the first on while its queue is over the
        // threshold: five marks, 60 us apart, each answered by the NP 2 us later (ConnectX
        // paces CNPs per QP; 60 us is past its pacing).
        let marked = i % 3 == 0 && i < 15;
        c.ecn = if marked { Ecn::Ce } else { Ecn::Ect0 };
        let (op, e) = match i {
            0 => (Opcode::RC_WRITE_FIRST, ext),
            19 => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
            _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
        };
        g.request(&mut c, op, e, 1024, i == 19, Req::New);
        if marked {
            g.wait_us(2);
            g.cnp(b, a, 0x231, 48, None);
            g.event("cnp", "CNP for the CE mark 2 us before: byte-identical to the others".into());
        }
        g.wait_us(18);
    }
    c.ecn = Ecn::Ect0;
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN sequence error, PSN {lost}: lost before the capture point"));
    g.wait_us(3);
    c.psn = lost;
    for k in 0..5 {
        let op = if k == 4 { Opcode::RC_WRITE_LAST } else { Opcode::RC_WRITE_MIDDLE };
        let psn = g.request(&mut c, op, ExtRepr::default(), 1024, k == 4, Req::RetransmitNak);
        if k == 1 {
            g.event(
                "retransmit",
                format!("PSN {psn} again: the same bytes and IP identification as its original, 80 us ago"),
            );
        }
    }
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, (lost + 4) & 0xFF_FFFF);
    g.expect_finding("network_loss", "critical", Some(c.b_qpn));
    g.expect_finding("congestion", "info", Some(c.b_qpn));
}

fn read_tail_timeout(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(60), Host::v4(61), 0x221, 0x222, 7000);
    // A healthy READ first, so the PMTU is known.
    g.read(&mut c, 2048);
    g.wait_us(10);
    let psn = c.psn;
    g.read_request(&c, psn, RethRepr { va: 0x7e20_0000_0000, rkey: 0x6161, dma_len: 4096 });
    c.psn = (psn + 4) & 0xFF_FFFF;
    c.msn += 1;
    g.wait_us(4);
    let msn = c.msn;
    // Responses psn..psn+2 arrive; the Last (psn+3) is lost in the network, and nothing
    // after it tells the requester: its ACK timeout must.
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_FIRST, psn, Some(AethRepr::ack(msn)), 1024);
    g.wait_ns(300);
    for k in 1..3 {
        g.respond(&mut c, Opcode::RC_READ_RESPONSE_MIDDLE, psn + k, None, 1024);
        g.wait_ns(300);
    }
    // 4.096 us x 2^14 = 67.1 ms (NCCL_IB_TIMEOUT 14): the requester asks again for the tail.
    g.wait_us(67_200);
    g.read_request(&c, psn + 3, RethRepr { va: 0x7e20_0000_0c00, rkey: 0x6161, dma_len: 1024 });
    g.event("retransmit", format!("READ re-issued from PSN {} after the ACK timeout", psn + 3));
    let f = g.flow(c.a, c.b, c.b_qpn);
    f.retransmits += 1;
    f.retransmits_timeout += 1;
    g.wait_us(4);
    g.respond(&mut c, Opcode::RC_READ_RESPONSE_ONLY, psn + 3, Some(AethRepr::ack(msn)), 1024);
    g.wait_us(10);
    g.send(&mut c, 256);
    g.expect_finding("timeout_retransmit", "critical", Some(c.b_qpn));
}

/// Senders of the incast sample, and its receiver.
const INCAST_SENDERS: u8 = 16;

fn incast(g: &mut Gen) {
    let rx = Host::v4(100);
    let mut conns: Vec<Conn> = (0..INCAST_SENDERS)
        .map(|i| Conn::new(Host::v4(70 + i), rx, 0x300 + u32::from(i), 0x400 + u32::from(i), 20_000))
        .collect();
    // The receiver's 10 Gb/s link drains the queue: one 314-byte frame every 250 ns, the
    // senders in turn, for 600 µs.
    g.frame_gap_ns = Some(250);
    let t0 = g.t;
    let reth = RethRepr { va: 0x7f50_0000_0000, rkey: 0x88, dma_len: 1 << 30 };
    let mut sent = 0u64;
    let mut next_cnp: Vec<i64> = (0..i64::from(INCAST_SENDERS)).map(|i| 60_000 + i * 5_000).collect();
    while g.t - t0 < 600_000 {
        for (i, c) in conns.iter_mut().enumerate() {
            let now = g.t - t0;
            // The queue is over its marking threshold from 40 µs on: every third packet.
            c.ecn = if now >= 40_000 && sent % 3 == 0 { Ecn::Ce } else { Ecn::Ect0 };
            let (op, ext) = if now < 4_000 {
                (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() })
            } else {
                (Opcode::RC_WRITE_MIDDLE, ExtRepr::default())
            };
            g.request(c, op, ext, 256, false, Req::New);
            sent += 1;
            if let Some(due) = next_cnp.get_mut(i) {
                if now >= *due {
                    // The NP answers with a CNP; the sender cuts its rate at once, but past
                    // the queue its packets keep their share of the drain rate.
                    g.cnp(rx, c.a, c.a_qpn, 48, None);
                    *due += 90_000;
                }
            }
        }
    }
    g.frame_gap_ns = None;
    for c in &mut conns {
        c.ecn = Ecn::Ect0;
        let last = g.request(c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 256, true, Req::New);
        c.msn += 1;
        g.ack(c, last);
    }
    g.event("incast", format!("{INCAST_SENDERS} senders to 10.0.0.100 at once"));
    g.expect_finding("incast", "warning", None);
    for c in &conns {
        g.expect_finding("congestion", "info", Some(c.b_qpn));
    }
}

/// Five packets lost beyond the capture point (at the requester's link), each NAKed and
/// resent by go-back-N with the two packets after it; then a 3-packet WRITE lost whole,
/// resent after the ACK timeout. `samples/counters/nak-beyond-*.txt` are the two hosts' NIC
/// counters around it (issue 25: losses counted per packet, timeouts per expiry, the
/// responder's receive drops).
fn nak_beyond(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(51), Host::v4(52), 0x131, 0x132, 20_000);
    let ext = write_ext(&c, 64 * 1024);
    g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 1024, false, Req::New);
    for k in 0..5 {
        g.wait_us(2);
        let lost = c.psn;
        for _ in 0..3 {
            g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
        }
        g.wait_us(2);
        let msn = c.msn;
        g.respond(
            &mut c,
            Opcode::RC_ACKNOWLEDGE,
            lost,
            Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)),
            0,
        );
        g.event("nak", format!("NAK PSN {lost}: lost beyond the capture point ({} of 5), seen here", k + 1));
        g.wait_us(3);
        c.psn = lost;
        for _ in 0..3 {
            g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
        }
        g.event("retransmit", format!("go-back-N from PSN {lost}"));
    }
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    g.expect_finding("network_loss", "critical", Some(c.b_qpn));

    // A WRITE whose 3 packets are all lost beyond the capture point: nothing reaches the
    // responder, nothing comes back, and the requester resends them after its ACK timeout
    // (NCCL_IB_TIMEOUT 14: 67 ms). One timer expiry, three packets.
    let mut t = Conn::new(Host::v4(51), Host::v4(52), 0x141, 0x142, 30_000);
    g.wait_us(10);
    let first = t.psn;
    let ext = write_ext(&t, 3 * 1024);
    let ops = [Opcode::RC_WRITE_FIRST, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_LAST];
    for (i, op) in ops.into_iter().enumerate() {
        let ext = if i == 0 { ext } else { ExtRepr::default() };
        g.request(&mut t, op, ext, 1024, i == 2, Req::New);
    }
    g.wait_us(67_109);
    t.psn = first;
    for (i, op) in ops.into_iter().enumerate() {
        let ext = if i == 0 { write_ext(&t, 3 * 1024) } else { ExtRepr::default() };
        g.request(&mut t, op, ext, 1024, i == 2, Req::RetransmitTimeout);
    }
    g.event("retransmit", format!("PSN {first}..{} sent again after the ACK timeout", first + 2));
    t.msn += 1;
    g.wait_us(3);
    g.ack(&mut t, first + 2);
    g.expect_finding("timeout_retransmit", "critical", Some(t.b_qpn));
}

/// A job restarted on reused QP numbers (field notes "QP lives"): two QPs each finish a
/// life at PSN ~5000, fully acknowledged, then start again at PSN 0 (NCCL's sq_psn = 0),
/// one after a 2 s pause, one at once. New lives, not 5,000 resends.
fn qp_restart(g: &mut Gen) {
    let pairs = [(0x231, 0x232, 2_000_000), (0x241, 0x242, 100)];
    for (i, (qa, qb, pause_us)) in pairs.into_iter().enumerate() {
        let (a, b) = (Host::v4(62), Host::v4(63 + i as u8));
        let mut old = Conn::new(a, b, qa, qb, 4_900);
        for _ in 0..25 {
            g.write(&mut old, 4 * 1024, true);
            g.wait_us(5);
        }
        g.wait_us(pause_us);
        let mut new = Conn::new(a, b, qa, qb, 0);
        g.request(&mut new, Opcode::RC_SEND_ONLY, ExtRepr::default(), 256, true, Req::New);
        g.event("qp_restart", format!("QP 0x{qb:x} starts again at PSN 0: a new life, not a resend"));
        new.msn += 1;
        g.wait_us(3);
        g.ack(&mut new, 0);
        for _ in 0..25 {
            g.write(&mut new, 4 * 1024, true);
            g.wait_us(5);
        }
        g.expect_finding("qp_restart", "info", Some(qb));
    }
}

/// Selective repeat (lossy RoCE, ConnectX-6 Dx and later; field notes): the requester
/// resends only the NAKed PSN and goes on with new ones. QP 0x252 is seen at the
/// responder's link (a gap, a NAK, one copy of the missing PSN 6 µs after the NAK); QP
/// 0x262 at the requester's link (the original passes, a NAK, one resend while new PSNs
/// go on). Both are network loss, repaired selectively, no spurious NAK.
fn selective_repeat(g: &mut Gen) {
    // The responder's link.
    let mut c = Conn::new(Host::v4(64), Host::v4(65), 0x251, 0x252, 40_000);
    let ext = write_ext(&c, 10 * 1024);
    g.request(&mut c, Opcode::RC_WRITE_FIRST, ext, 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    let lost = g.lose(&mut c);
    g.expect_gap(&c, 1, false);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN {lost}: lost before the responder's link"));
    for _ in 0..3 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    g.wait_us(3);
    request_at(g, &mut c, lost, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.event("retransmit", format!("PSN {lost} alone, a round trip after the NAK: selective repeat"));
    for _ in 0..3 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    g.expect_finding("network_loss", "critical", Some(c.b_qpn));
    // The requester's link.
    g.wait_us(20);
    let mut r = Conn::new(Host::v4(66), Host::v4(67), 0x261, 0x262, 50_000);
    let ext = write_ext(&r, 10 * 1024);
    g.request(&mut r, Opcode::RC_WRITE_FIRST, ext, 1024, false, Req::New);
    let lost = g.request(&mut r, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    for _ in 0..3 {
        g.request(&mut r, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    g.wait_us(2);
    let msn = r.msn;
    g.respond(&mut r, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN {lost}: it passed here and was lost beyond"));
    g.wait_us(3);
    request_at(g, &mut r, lost, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.event("retransmit", format!("PSN {lost} alone, new PSNs going on: selective repeat"));
    for _ in 0..3 {
        g.request(&mut r, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let last = g.request(&mut r, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    r.msn += 1;
    g.wait_us(3);
    g.ack(&mut r, last);
    g.expect_finding("network_loss", "critical", Some(r.b_qpn));
}

/// A path-MTU black hole: small SENDs pass and are acknowledged, a 4 KiB WRITE (a 4,170-byte
/// frame) vanishes every time: the requester resends it after each ACK timeout (67.1 ms,
/// t=14), 7 times, never acknowledged, and its retry count is used up.
fn mtu_blackhole(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(68), Host::v4(69), 0x271, 0x272, 60_000);
    c.pmtu = 4096;
    for _ in 0..4 {
        g.send(&mut c, 256);
        g.wait_us(10);
    }
    let psn = c.psn;
    let ext = write_ext(&c, 4096);
    g.request(&mut c, Opcode::RC_WRITE_ONLY, ext, 4096, true, Req::New);
    g.event("lost", format!("PSN {psn}: a 4 KiB WRITE, lost beyond the capture point (a smaller link MTU)"));
    for k in 1..=7 {
        g.wait_us(67_200);
        request_at(g, &mut c, psn, Opcode::RC_WRITE_ONLY, ext, 4096, true, Req::RetransmitTimeout);
        g.event("retransmit", format!("PSN {psn} sent again after the ACK timeout ({k} of 7)"));
    }
    g.wait_us(1_000);
    g.expect_finding("timeout_retransmit", "critical", Some(c.b_qpn));
    g.expect_finding("retry_exhausted", "critical", Some(c.b_qpn));
}
