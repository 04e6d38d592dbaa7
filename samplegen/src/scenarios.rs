//! The sample scenarios. Each writes a small capture whose expected answers follow from
//! how it was built (see `fabric.rs`).

use crate::fabric::{Conn, Gen, Host, Req};
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, RoceV1Frame};
use rocescope_decoder::ext::*;
use rocescope_decoder::{BthRepr, Ecn, Opcode, VlanTag};

/// A scenario: file stem, one-line description, builder.
pub type Scenario = (&'static str, &'static str, fn(&mut Gen));

/// Every scenario, in the order the demo capture plays them.
pub const SCENARIOS: &[Scenario] = &[
    ("rc-normal", "Healthy RC traffic: RDMA WRITE, SEND and READ with ACKs", rc_normal),
    ("nak-gobackn", "A lost packet answered by a NAK and go-back-N; a gap the capture lost across the 24-bit PSN wrap; a timeout retransmission", nak_gobackn),
    ("rnr", "Receiver not ready: RNR NAK, the retry after the RNR timer, then the ACK", rnr),
    ("ecn-cnp", "ECN-CE marks on a data flow answered by CNPs (DSCP 48) to the sender's QP", ecn_cnp),
    ("pfc-storm", "A PFC storm on priority 3 that stalls VLAN 100 RoCE traffic, then XON; pauses on unused priority 5; 802.3x PAUSE", pfc_storm),
    ("qos-mismatch", "QoS violations: RoCE on DSCP 0, PCP 0 on VLAN 100, Not-ECT data, a CNP on DSCP 0", qos_mismatch),
    ("ipv6", "RoCEv2 over IPv6: WRITE, SEND, READ and a CNP", ipv6),
    ("atomics", "Atomic Compare-Swap and Fetch-Add with their Atomic ACKs", atomics),
    ("ud", "UD: CM-style MADs to QP1 (GSI Q_Key) and UD SEND with immediate data", ud),
    ("bad-icrc", "An RDMA WRITE whose middle packet has a corrupt ICRC", bad_icrc),
    ("truncated", "Header-only capture (128-byte snap) and two malformed frames to the RoCE port", truncated),
    ("all-headers", "Every extended header: XRCETH, ImmDt, IETH, FETH, ATOMIC WRITE, RoCEv1 with GRH, QinQ, opaque opcodes", all_headers),
];

fn rc_normal(g: &mut Gen) {
    let mut a = Conn::new(Host::v4(1), Host::v4(2), 0x11, 0x12, 1000);
    let mut b = Conn::new(Host::v4(3), Host::v4(4), 0x21, 0x22, 500_000);
    b.pmtu = 4096;
    g.write(&mut a, 4096, true);
    g.wait_us(10);
    g.send(&mut a, 300);
    g.wait_us(10);
    g.read(&mut a, 2500);
    g.wait_us(10);
    g.write(&mut b, 16384, true);
    g.wait_us(10);
    g.send(&mut b, 64);
    g.wait_us(10);
    g.write(&mut a, 64, true);
    g.read(&mut b, 8192);
    g.wait_us(10);
    g.send(&mut a, 2048);
}

fn nak_gobackn(g: &mut Gen) {
    // Go-back-N: PSN 103 is lost in the network; the responder NAKs it when 104 arrives,
    // the requester resends 103, 104, 105 and carries on.
    let mut c = Conn::new(Host::v4(1), Host::v4(2), 0x31, 0x32, 100);
    let reth = RethRepr { va: 0x7f00_0000_0000, rkey: 0x99, dma_len: 8 * 1024 };
    let first = ExtRepr { reth: Some(reth), ..Default::default() };
    g.request(&mut c, Opcode::RC_WRITE_FIRST, first, 1024, false, Req::New);
    for _ in 0..2 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let lost = g.lose(&mut c);
    g.expect_gap(&c, 1, false);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.event("gap", format!("QP 0x32: PSN {lost} missing before this frame"));
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.wait_us(2);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.event("nak", format!("NAK PSN sequence error, PSN {lost} (the first missing PSN)"));
    g.wait_us(3);
    c.psn = lost;
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.event("retransmit", format!("go-back-N from PSN {lost}"));
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);

    // Capture loss across the PSN wrap: PSNs 0xFFFFFC..0x000003; the packet with PSN 0 is
    // missing from the capture but the responder ACKs everything: no NAK, no resend.
    let mut w = Conn::new(Host::v4(3), Host::v4(4), 0x41, 0x42, 0xFF_FFFC);
    let reth = RethRepr { va: 0x7f10_0000_0000, rkey: 0x77, dma_len: 8 * 1024 };
    g.request(
        &mut w,
        Opcode::RC_WRITE_FIRST,
        ExtRepr { reth: Some(reth), ..Default::default() },
        1024,
        false,
        Req::New,
    );
    for _ in 0..3 {
        g.request(&mut w, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    }
    let gone = g.lose(&mut w);
    g.expect_gap(&w, 1, true);
    g.request(&mut w, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.event("capture_loss", format!("QP 0x42: PSN {gone} absent from the capture; never NAKed or resent"));
    g.request(&mut w, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut w, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    let last = g.request(&mut w, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    w.msn += 1;
    g.wait_us(3);
    g.ack(&mut w, last);

    // Timeout: the ACK for a SEND is lost; the requester resends after its ACK timeout
    // (NCCL_IB_TIMEOUT 14: 4.096 us x 2^14 = 67 ms) and the responder ACKs the duplicate.
    let mut t = Conn::new(Host::v4(5), Host::v4(6), 0x51, 0x52, 7000);
    let psn = g.request(&mut t, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::New);
    g.wait_us(67_109);
    t.psn = psn;
    g.request(&mut t, Opcode::RC_SEND_ONLY, ExtRepr::default(), 512, true, Req::RetransmitTimeout);
    g.event("retransmit", format!("timeout retransmission of PSN {psn}: no NAK was pending"));
    t.msn += 1;
    g.wait_us(3);
    g.ack(&mut t, psn);
}

fn rnr(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(1), Host::v4(2), 0x61, 0x62, 9000);
    let psn = g.request(&mut c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 256, true, Req::New);
    g.wait_us(2);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, psn, Some(AethRepr::rnr_nak(14, msn)), 0);
    g.event("rnr_nak", format!("RNR NAK for PSN {psn}, timer code 14 = 1.28 ms"));
    g.wait_us(1_300);
    c.psn = psn;
    g.request(&mut c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 256, true, Req::RetransmitNak);
    g.event("retransmit", format!("retry of PSN {psn} after the RNR timer"));
    c.msn += 1;
    g.wait_us(2);
    g.ack(&mut c, psn);
    g.wait_us(20);
    g.send(&mut c, 256);
}

fn ecn_cnp(g: &mut Gen) {
    let sender = Host::v4(5);
    let receiver = Host::v4(6);
    let mut c = Conn::new(sender, receiver, 0x71, 0x72, 40_000);
    let reth = RethRepr { va: 0x7f20_0000_0000, rkey: 0x42, dma_len: 16 * 1024 };
    let ce_at = [4usize, 5, 6, 11];
    let mut last = 0;
    for i in 0..16 {
        c.ecn = if ce_at.contains(&i) { Ecn::Ce } else { Ecn::Ect0 };
        let (op, ext) = match i {
            0 => (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() }),
            15 => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
            _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
        };
        last = g.request(&mut c, op, ext, 1024, i == 15, Req::New);
        if ce_at.contains(&i) {
            g.event("ecn_ce", format!("CE-marked data, PSN {last}"));
        }
        if i == 4 || i == 11 {
            // The NP answers the first CE mark in each pacing window (50 us here).
            g.wait_us(2);
            g.cnp(receiver, sender, 0x71, 48, None);
            g.event("cnp", "CNP to the sender's QP 0x71 (DSCP 48, BECN)".into());
        }
        g.wait_us(1);
    }
    c.ecn = Ecn::Ect0;
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
}

fn pfc_storm(g: &mut Gen) {
    let switch = [0x02, 0, 0, 0, 0xff, 0x01];
    let mut c = Conn::new(Host::v4(7), Host::v4(8), 0x81, 0x82, 3000);
    c.vlan = Some((100, 3));
    c.pmtu = 4096;
    for _ in 0..3 {
        g.write(&mut c, 8192, true);
        g.wait_us(20);
    }
    // Storm: the switch holds priority 3 paused with full quanta every 300 us for 9 ms
    // (65535 quanta = 335.5 us at 100G): RoCE on priority 3 stops meanwhile.
    let mut q = [0u16; 8];
    q[3] = 65535;
    for i in 0..30 {
        g.pfc(switch, 1 << 3, q, None);
        if i == 0 {
            g.event("pfc_storm", "PFC storm on priority 3 starts".into());
        }
        g.wait_us(300);
    }
    g.pfc(switch, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    g.wait_us(10);
    for _ in 0..2 {
        g.write(&mut c, 8192, true);
        g.wait_us(20);
    }
    // Pauses on priority 5, which carries no RoCE traffic here.
    let mut q5 = [0u16; 8];
    q5[5] = 1000;
    for _ in 0..3 {
        g.pfc(switch, 1 << 5, q5, None);
        g.wait_us(50);
    }
    g.event("pfc_unused_priority", "PFC on priority 5, which no RoCE traffic uses".into());
    // A host sending link-level 802.3x PAUSE, then resuming.
    let host = [0x02, 0, 0, 0, 0, 0x09];
    g.pause(host, 500);
    g.wait_us(100);
    g.pause(host, 500);
    g.wait_us(100);
    g.pause(host, 0);
}

fn qos_mismatch(g: &mut Gen) {
    // Expected: RoCE DSCP 26 (ECN-capable), CNP DSCP 48, PCP 3 on VLANs.
    let mut d0 = Conn::new(Host::v4(9), Host::v4(10), 0x91, 0x92, 100);
    d0.dscp = 0;
    g.write(&mut d0, 2048, true);
    g.event("dscp_violation", "QP 0x92 data on DSCP 0 (expected 26)".into());
    let mut p0 = Conn::new(Host::v4(11), Host::v4(12), 0xA1, 0xA2, 200);
    p0.vlan = Some((100, 0));
    g.write(&mut p0, 2048, true);
    g.event("pcp_violation", "QP 0xa2 data on VLAN 100 with PCP 0 (expected 3)".into());
    let mut ne = Conn::new(Host::v4(13), Host::v4(14), 0xB1, 0xB2, 300);
    ne.ecn = Ecn::NotEct;
    g.write(&mut ne, 2048, true);
    g.event("ecn_violation", "QP 0xb2 data is Not-ECT (expected ECN-capable)".into());
    g.cnp(Host::v4(10), Host::v4(9), 0x91, 0, None);
    g.event("cnp_dscp_violation", "CNP to QP 0x91 on DSCP 0 (expected 48)".into());
    // A compliant connection on VLAN 100 PCP 3 for contrast.
    let mut ok = Conn::new(Host::v4(15), Host::v4(16), 0xC1, 0xC2, 400);
    ok.vlan = Some((100, 3));
    g.write(&mut ok, 2048, true);
}

fn ipv6(g: &mut Gen) {
    let mut c = Conn::new(Host::v6(1), Host::v6(2), 0x1C1, 0x1C2, 77);
    g.write(&mut c, 3000, true);
    g.wait_us(5);
    g.send(&mut c, 100);
    g.wait_us(5);
    g.read(&mut c, 1500);
    g.cnp(Host::v6(2), Host::v6(1), 0x1C1, 48, None);
}

fn atomics(g: &mut Gen) {
    let mut c = Conn::new(Host::v4(17), Host::v4(18), 0xD1, 0xD2, 5);
    let cas = AtomicEthRepr { va: 0x7f30_0000_0000, rkey: 0xabc, swap: 1, compare: 0 };
    let fa = AtomicEthRepr { va: 0x7f30_0000_0008, rkey: 0xabc, swap: 5, compare: 0 };
    for (op, atomic, orig) in [(Opcode::RC_COMPARE_SWAP, cas, 0), (Opcode::RC_FETCH_ADD, fa, 41)] {
        let ext = ExtRepr { atomiceth: Some(atomic), ..Default::default() };
        let psn = g.request(&mut c, op, ext, 0, true, Req::New);
        c.msn += 1;
        g.wait_us(2);
        let ext = ExtRepr {
            aeth: Some(AethRepr::ack(c.msn)),
            atomicacketh: Some(AtomicAckEthRepr { orig }),
            ..Default::default()
        };
        let bth =
            BthRepr { opcode: Opcode::RC_ATOMIC_ACKNOWLEDGE, dest_qp: c.a_qpn, psn, ..Default::default() };
        g.roce(c.b, c.a, None, 26, Ecn::Ect0, 4000, bth, ext, 0, IcrcMode::Correct, None);
    }
}

fn ud(g: &mut Gen) {
    let (a, b) = (Host::v4(19), Host::v4(20));
    for (src, dst, psn) in [(a, b, 0u32), (b, a, 0), (a, b, 1)] {
        let deth = DethRepr { qkey: 0x8001_0000, src_qp: 1 };
        let bth = BthRepr { opcode: Opcode::UD_SEND_ONLY, dest_qp: 1, psn, ..Default::default() };
        g.roce(
            src,
            dst,
            None,
            26,
            Ecn::Ect0,
            0xC000,
            bth,
            ExtRepr { deth: Some(deth), ..Default::default() },
            256,
            IcrcMode::Correct,
            None,
        );
        g.wait_us(50);
    }
    for psn in 0..3 {
        let deth = DethRepr { qkey: 0x1111, src_qp: 0xE1 };
        let bth =
            BthRepr { opcode: Opcode::UD_SEND_ONLY_IMM, dest_qp: 0xE2, psn, se: true, ..Default::default() };
        let ext = ExtRepr {
            deth: Some(deth),
            immdt: Some(ImmDtRepr { value: 0xCAFE_0000 + psn }),
            ..Default::default()
        };
        g.roce(a, b, None, 26, Ecn::Ect0, 0xC001, bth, ext, 1000, IcrcMode::Correct, None);
        g.wait_us(5);
    }
}

fn bad_icrc(g: &mut Gen) {
    let c = Conn::new(Host::v4(21), Host::v4(22), 0xF1, 0xF2, 10);
    let reth = RethRepr { va: 0x7f40_0000_0000, rkey: 0x1, dma_len: 3072 };
    for (i, op) in
        [Opcode::RC_WRITE_FIRST, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_LAST].into_iter().enumerate()
    {
        let ext =
            if i == 0 { ExtRepr { reth: Some(reth), ..Default::default() } } else { ExtRepr::default() };
        let bth = BthRepr {
            opcode: op,
            dest_qp: c.b_qpn,
            psn: 10 + i as u32,
            ack_req: i == 2,
            ..Default::default()
        };
        let icrc = if i == 1 { IcrcMode::Corrupt } else { IcrcMode::Correct };
        g.roce(c.a, c.b, None, 26, Ecn::Ect0, c.sport, bth, ext, 1024, icrc, None);
        if i == 1 {
            g.event("icrc_bad", "PSN 11 carries a corrupt ICRC".into());
        }
    }
    let mut c = c;
    c.psn = 13;
    c.msn = 1;
    g.wait_us(3);
    g.ack(&mut c, 12);
}

fn truncated(g: &mut Gen) {
    // Header-only capture, as Lumina and ibdump-style setups take: 128-byte snap length.
    let c = Conn::new(Host::v4(23), Host::v4(24), 0x101, 0x102, 600);
    let reth = RethRepr { va: 0x7f50_0000_0000, rkey: 0x2, dma_len: 4 * 4096 };
    for i in 0..4u32 {
        let op =
            [Opcode::RC_WRITE_FIRST, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_LAST]
                [i as usize];
        let ext =
            if i == 0 { ExtRepr { reth: Some(reth), ..Default::default() } } else { ExtRepr::default() };
        let bth =
            BthRepr { opcode: op, dest_qp: c.b_qpn, psn: 600 + i, ack_req: i == 3, ..Default::default() };
        g.roce(c.a, c.b, None, 26, Ecn::Ect0, c.sport, bth, ext, 4096, IcrcMode::Correct, Some(128));
    }
    g.event("truncated", "four 4 KiB WRITE packets captured with a 128-byte snap length".into());
    // Malformed: the UDP length leaves no room for a BTH.
    let mut f = udp_frame(Host::v4(23), Host::v4(24), 4791, &[0x0a, 0x40, 0xff, 0xff]);
    g.raw_malformed(std::mem::take(&mut f));
    g.event("malformed", "UDP to 4791 with 4 bytes: too short for a BTH".into());
    // Malformed: IP says 20 bytes of IB transport, but the RETH needs 16 after the BTH.
    let bth = BthRepr { opcode: Opcode::RC_WRITE_ONLY, dest_qp: 0x102, psn: 604, ..Default::default() };
    let mut ib = bth.emit().to_vec();
    ib.extend_from_slice(&[0u8; 8]);
    g.raw_malformed(udp_frame(Host::v4(23), Host::v4(24), 4791, &ib));
    g.event("malformed", "RDMA WRITE Only whose RETH does not fit the UDP length".into());
}

/// An Ethernet/IPv4/UDP frame with `payload`, outside the RoCE emitters (for malformed cases).
fn udp_frame(src: Host, dst: Host, dport: u16, payload: &[u8]) -> Vec<u8> {
    use std::net::IpAddr;
    let (IpAddr::V4(s), IpAddr::V4(d)) = (src.ip, dst.ip) else {
        return Vec::new();
    };
    let mut out = rocescope_decoder::link::EthernetRepr { dst: dst.mac, src: src.mac, ethertype: 0x0800 }
        .emit()
        .to_vec();
    let udp_len = 8 + payload.len();
    let total = 20 + udp_len;
    let mut ip = vec![0x45, 0x68, (total >> 8) as u8, total as u8, 0, 0, 0x40, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&s.octets());
    ip.extend_from_slice(&d.octets());
    out.extend_from_slice(&ip);
    out.extend_from_slice(&0xC000u16.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
    out
}

fn all_headers(g: &mut Gen) {
    let (a, b) = (Host::v4(25), Host::v4(26));
    let mut psn = 50u32;
    let mut emit = |g: &mut Gen, op: Opcode, ext: ExtRepr, len: usize, vlan: Option<(u16, u8)>| {
        let bth = BthRepr { opcode: op, dest_qp: 0x111, psn, ack_req: true, ..Default::default() };
        psn += 1;
        g.roce(a, b, vlan, 26, Ecn::Ect0, 0xC100, bth, ext, len, IcrcMode::Correct, None);
        g.wait_us(2);
    };
    let xrc = XrcEthRepr { srqn: 0x0A0B0C };
    emit(g, Opcode::XRC_SEND_ONLY, ExtRepr { xrceth: Some(xrc), ..Default::default() }, 64, None);
    let reth = RethRepr { va: 0x7f60_0000_0000, rkey: 0x3, dma_len: 128 };
    emit(
        g,
        Opcode::XRC_WRITE_ONLY_IMM,
        ExtRepr {
            xrceth: Some(xrc),
            reth: Some(reth),
            immdt: Some(ImmDtRepr { value: 0xdead_beef }),
            ..Default::default()
        },
        128,
        None,
    );
    emit(
        g,
        Opcode::RC_WRITE_ONLY_IMM,
        ExtRepr { reth: Some(reth), immdt: Some(ImmDtRepr { value: 7 }), ..Default::default() },
        128,
        None,
    );
    emit(
        g,
        Opcode::RC_SEND_ONLY_IMM,
        ExtRepr { immdt: Some(ImmDtRepr { value: 8 }), ..Default::default() },
        30,
        None,
    );
    emit(
        g,
        Opcode::RC_SEND_ONLY_INV,
        ExtRepr { ieth: Some(IethRepr { rkey: 0x5555 }), ..Default::default() },
        40,
        None,
    );
    emit(
        g,
        Opcode::RC_FLUSH,
        ExtRepr { feth: Some(FethRepr { sel: 1, plt: 1 }), reth: Some(reth), ..Default::default() },
        0,
        None,
    );
    emit(
        g,
        Opcode::RC_ATOMIC_WRITE,
        ExtRepr { reth: Some(RethRepr { dma_len: 8, ..reth }), ..Default::default() },
        8,
        None,
    );
    // QinQ: outer 802.1ad tag (VLAN 200) and inner 802.1Q tag (VLAN 100, PCP 3).
    let f = rocescope_decoder::build::RoceV2Frame {
        vlans: vec![
            VlanTag { tpid: 0x88A8, pcp: 0, dei: false, vid: 200 },
            VlanTag { tpid: 0x8100, pcp: 3, dei: true, vid: 100 },
        ],
        ..rocescope_decoder::build::RoceV2Frame::new(
            a.mac,
            b.mac,
            rocescope_decoder::build::IpRepr::V4 {
                src: [10, 0, 0, 25].into(),
                dst: [10, 0, 0, 26].into(),
                dscp: 26,
                ecn: Ecn::Ect0,
                ttl: 64,
                id: 0,
            },
            IbRepr {
                bth: BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x111, psn: 57, ..Default::default() },
                ext: ExtRepr::default(),
                payload: vec![1; 16],
                icrc: IcrcMode::Correct,
            },
        )
    };
    g.roce_frame(&f, None);
    g.event("qinq", "QinQ: 802.1ad VLAN 200 outside 802.1Q VLAN 100 PCP 3 DEI 1".into());
    // Opaque opcodes: manufacturer-specific 0xE0 and reserved 0x1A keep their body as payload.
    for (psn, op) in (60..).zip([Opcode(0xE0), Opcode(0x1A)]) {
        let bth = BthRepr { opcode: op, dest_qp: 0x111, psn, ..Default::default() };
        g.roce(a, b, None, 26, Ecn::Ect0, 0xC100, bth, ExtRepr::default(), 24, IcrcMode::Correct, None);
    }
    g.event("opaque_opcode", "manufacturer opcode 0xE0 and reserved 0x1A decode with an opaque body".into());
    // RoCEv1: RDMA WRITE Only and its ACK, GRH with GIDs.
    let sgid: std::net::Ipv6Addr = "fe80::25".parse().unwrap_or(std::net::Ipv6Addr::LOCALHOST);
    let dgid: std::net::Ipv6Addr = "fe80::26".parse().unwrap_or(std::net::Ipv6Addr::LOCALHOST);
    let w = RoceV1Frame {
        src_mac: a.mac,
        dst_mac: b.mac,
        vlans: Vec::new(),
        sgid,
        dgid,
        tclass: 0x68,
        hop_limit: 1,
        ib: IbRepr {
            bth: BthRepr {
                opcode: Opcode::RC_WRITE_ONLY,
                dest_qp: 0x222,
                psn: 900,
                ack_req: true,
                ..Default::default()
            },
            ext: ExtRepr {
                reth: Some(RethRepr { va: 0x1000, rkey: 0x9, dma_len: 33 }),
                ..Default::default()
            },
            payload: vec![0x5a; 33],
            icrc: IcrcMode::Correct,
        },
    };
    g.v1(&w);
    let ack = RoceV1Frame {
        src_mac: b.mac,
        dst_mac: a.mac,
        sgid: dgid,
        dgid: sgid,
        ib: IbRepr {
            bth: BthRepr { opcode: Opcode::RC_ACKNOWLEDGE, dest_qp: 0x221, psn: 900, ..Default::default() },
            ext: ExtRepr { aeth: Some(AethRepr::ack(1)), ..Default::default() },
            payload: Vec::new(),
            icrc: IcrcMode::Correct,
        },
        ..w.clone()
    };
    g.v1(&ack);
    g.event("rocev1", "RoCEv1 RDMA WRITE Only and ACK (EtherType 0x8915, GRH)".into());
}

/// The receiver's clock runs this far ahead of the sender's in the two-point capture (NTP-grade
/// sync between two hosts), plus the path delay below.
pub const RECEIVER_CLOCK_OFFSET_NS: i64 = 2_000_000;
/// Wire and switch delay from the sender's capture to the receiver's.
pub const PATH_DELAY_NS: i64 = 1_000;

/// One RDMA WRITE captured at both ends: the sender's NIC sees every packet; one is lost in
/// the fabric before the receiver's capture, which NAKs it, and the sender goes back N.
/// Returns the generator and the indices of the frames the receiver never sees.
pub fn two_points() -> (Gen, Vec<usize>) {
    let mut g = Gen::new();
    let mut c = Conn::new(Host::v4(1), Host::v4(2), 0x71, 0x72, 5000);
    let mut lost_frames = Vec::new();
    let reth = RethRepr { va: 0x7f20_0000_0000, rkey: 0x55, dma_len: 8 * 1024 };
    g.request(
        &mut c,
        Opcode::RC_WRITE_FIRST,
        ExtRepr { reth: Some(reth), ..Default::default() },
        1024,
        false,
        Req::New,
    );
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    lost_frames.push(g.frames.len());
    let lost = g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.wait_us(2);
    let msn = c.msn;
    g.respond(&mut c, Opcode::RC_ACKNOWLEDGE, lost, Some(AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, msn)), 0);
    g.wait_us(3);
    c.psn = lost;
    for _ in 0..3 {
        g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::RetransmitNak);
    }
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    g.request(&mut c, Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), 1024, false, Req::New);
    let last = g.request(&mut c, Opcode::RC_WRITE_LAST, ExtRepr::default(), 1024, true, Req::New);
    c.msn += 1;
    g.wait_us(3);
    g.ack(&mut c, last);
    (g, lost_frames)
}
