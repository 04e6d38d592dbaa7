//! Single-issue cases written to `samples/cases/` beside the demo (they are not part of
//! demo.pcap): which way RoCE flows while a MAC pauses a priority, and byte counts of a
//! capture whose record lengths are wrong. Besides the usual expectations, each case's
//! `.expected.json` carries an `analysis` object with the answers it was built to have
//! (tests/pfc_direction.rs checks them against `rocescope report`).
//!
//! PFC facts used (shared/reference/roce-protocol.md §1.8): a PFC frame comes from the
//! pausing MAC (its source address) to 01-80-C2-00-00-01 and pauses the priorities enabled
//! in its vector for quanta × 512 bit times (65535 quanta = 335.5 µs at 100 Gb/s); each frame
//! restarts the timer and a zero-quanta frame (XON) ends it. So the pausing side is the
//! receiver whose buffer fills: RoCE frames *to* that MAC on that priority must stop.

use crate::fabric::{Conn, Event, Gen, Host, Req};
use rocescope_decoder::build::ExtRepr;
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::link::mac_string;
use rocescope_decoder::Opcode;
use serde_json::{json, Value};

/// The analyzer's default response allowance (`--pause-allowance-us 7`): a RoCE frame to a
/// pausing MAC counts as ignoring the pause only when it arrives more than this long after
/// the pause took effect.
pub const ALLOWANCE_NS: i64 = 7_000;

/// How often the pausing MAC re-sends its pause: before 65535 quanta (335.5 µs at 100G)
/// run out, so the priority stays paused (§1.8: "to block ... we need to generate a PFC pause
/// frame with 65535 quantas" before the previous one expires).
const REFRESH_NS: i64 = 300_000;

/// A case: directory-relative file stem, one-line description, builder returning the
/// analysis answers.
type Case = (&'static str, &'static str, fn(&mut Gen) -> Value);

/// Every case, written as `cases/NAME.pcap` and `cases/NAME.expected.json`.
pub const CASES: &[Case] = &[
    (
        "pfc-ignored",
        "The receiver 10.0.0.42 pauses priority 3 while its peer keeps sending RDMA WRITEs to it on priority 3: the peer ignores the pause",
        pfc_ignored,
    ),
    (
        "pfc-honoured",
        "The receiver pauses priority 3; its peer stops within the response allowance (one frame in flight) and resumes after XON; traffic to it on priority 0 and traffic on priority 3 to another host go on",
        pfc_honoured,
    ),
    (
        "pfc-deadlock-direction",
        "A host pauses priority 3 for 120 ms: RoCE to it stops while its own RoCE on priority 3 to its peer goes on (a deadlock hint despite traffic on the priority)",
        pfc_deadlock_direction,
    ),
    (
        "pfc-l2-ignored",
        "L2 fabric, capture on host 10.0.0.52's link: its ToR port (02:00:00:00:00:fe, which sends no RoCE) pauses priority 3 and the host keeps sending WRITEs to 10.0.0.53 and 10.0.0.54 through it: the host ignores its switch's pause",
        pfc_l2_ignored,
    ),
    (
        "pfc-l2-honoured",
        "L2 fabric, capture on host 10.0.0.52's link: its ToR port pauses priority 3, the host stops within the allowance while its peers' WRITEs to it keep coming (the other direction of the link, not paused)",
        pfc_l2_honoured,
    ),
    (
        "pfc-l2-one-conversation",
        "L2 fabric, capture on host 10.0.0.66's link, and 10.0.0.67 (beyond the fabric) the only other host: both MACs are in every frame. The host ACKs its peer's WRITEs in 1.5 us, the peer's ACKs come back 8 us after the host's WRITEs (a fabric round trip): the turnaround names the host on the link, and it ignores its ToR port's pause",
        pfc_l2_one_conversation,
    ),
    (
        "pfc-qinq-ignored",
        "QinQ trunk (S-tag PCP 3 outside the customer's C-tag PCP 0): the far switch port pauses priority 3 and the frames from 10.0.0.55 keep coming on S-tag priority 3; with --lossless 3 the traffic is lossless by its outer tag",
        pfc_qinq_ignored,
    ),
    (
        "truncated-length",
        "A capture device cut every frame to 128 bytes and wrote 128 as the original length too: wire bytes must come from the IP length",
        truncated_length,
    ),
];

/// The full-quanta pause vector for priority 3.
fn pause_prio3() -> [u16; 8] {
    let mut q = [0u16; 8];
    q[3] = 65535;
    q
}

/// One RDMA WRITE Only of `len` bytes on `c` (requester to responder); AckReq when `ackreq`.
/// Returns (frame number, its time, PSN).
fn write_only(g: &mut Gen, c: &mut Conn, len: usize, ackreq: bool) -> (usize, i64, u32) {
    let frame = g.frames.len() + 1;
    let ts = g.t;
    let reth = RethRepr { va: 0x7f40_0000_0000 + u64::from(c.psn) * 4096, rkey: 0x4242, dma_len: len as u32 };
    let psn = g.request(
        c,
        Opcode::RC_WRITE_ONLY,
        ExtRepr { reth: Some(reth), ..Default::default() },
        len,
        ackreq,
        Req::New,
    );
    c.msn = (c.msn + 1) & 0xFF_FFFF;
    (frame, ts, psn)
}

fn pfc_ignored(g: &mut Gen) -> Value {
    let (a, b) = (Host::v4(41), Host::v4(42));
    let mut c = Conn::new(a, b, 0x141, 0x142, 10_000);
    c.vlan = Some((100, 3));
    for _ in 0..4 {
        g.write(&mut c, 2048, true);
        g.wait_us(5);
    }
    // The receiver's buffer fills: it pauses priority 3 and holds it paused.
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    g.pfc(b.mac, 1 << 3, pause_prio3(), None);
    g.event("pfc_pause", "10.0.0.42 (02:00:00:00:00:2a) pauses priority 3".into());
    let mut refresh = t0 + REFRESH_NS;
    // Its peer goes on sending to it on priority 3 as if no pause had come.
    let (mut ignored, mut towards, mut max_delay) = (0u64, 0u64, 0i64);
    let mut evidence = Vec::new();
    for i in 0..200 {
        if g.t >= refresh {
            g.pfc(b.mac, 1 << 3, pause_prio3(), None);
            refresh += REFRESH_NS;
        }
        let ackreq = i % 10 == 9;
        let (frame, ts, psn) = write_only(g, &mut c, 64, ackreq);
        towards += 1;
        if ts - t0 > ALLOWANCE_NS {
            ignored += 1;
            max_delay = max_delay.max(ts - t0);
            if evidence.len() < 3 {
                evidence.push(frame);
            }
            if ignored == 1 {
                g.event(
                    "pause_ignored",
                    format!("first WRITE to the pausing MAC {} ns after the pause", ts - t0),
                );
            }
        }
        if ackreq {
            g.wait_us(1);
            g.ack(&mut c, psn);
        }
        g.wait_ns(1000);
    }
    let xon_frame = g.frames.len() + 1;
    g.pfc(b.mac, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    json!({
        "allowance_ns": ALLOWANCE_NS,
        "pause_ignored": [{
            "src_mac": mac_string(&b.mac),
            "priority": 3,
            "severity": "critical",
            "pause_frame": pause_frame,
            "frames": ignored,
            "max_delay_ns": max_delay,
            "first_frames": evidence,
        }],
        "intervals": [{
            "src_mac": mac_string(&b.mac),
            "priority": 3,
            "first_frame": pause_frame,
            "xon_frame": xon_frame,
            "roce_towards": towards,
            "ignored": ignored,
        }],
        "pfc_deadlock": false,
    })
}

fn pfc_honoured(g: &mut Gen) -> Value {
    let (a, b, d) = (Host::v4(41), Host::v4(42), Host::v4(43));
    let mut c = Conn::new(a, b, 0x141, 0x142, 20_000);
    c.vlan = Some((100, 3));
    // Priority 0 (untagged, DSCP 0) from the same sender to the same receiver: not paused.
    let mut low = Conn::new(a, b, 0x151, 0x152, 30_000);
    low.dscp = 0;
    // Priority 3 from the same sender to another host: not paused by the receiver.
    let mut other = Conn::new(a, d, 0x161, 0x162, 40_000);
    other.vlan = Some((100, 3));
    for _ in 0..4 {
        g.write(&mut c, 2048, true);
        g.wait_us(5);
    }
    // One WRITE is under way when the pause comes: it arrives 0.8 µs after the pause frame,
    // within the allowance; then nothing to the receiver on priority 3 until XON.
    write_only(g, &mut c, 256, true);
    g.wait_ns(200);
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    g.pfc(b.mac, 1 << 3, pause_prio3(), None);
    g.event("pfc_pause", "10.0.0.42 pauses priority 3".into());
    let in_flight_ts = g.t;
    let (_, _, last) = write_only(g, &mut c, 256, true);
    g.wait_us(2);
    g.ack(&mut c, last);
    let mut refresh = t0 + REFRESH_NS;
    let mut unpaused = 0;
    while g.t < t0 + 4 * REFRESH_NS {
        if g.t >= refresh {
            g.pfc(b.mac, 1 << 3, pause_prio3(), None);
            refresh += REFRESH_NS;
        }
        write_only(g, &mut low, 64, false);
        write_only(g, &mut other, 64, false);
        unpaused += 2;
        g.wait_us(20);
    }
    let xon_frame = g.frames.len() + 1;
    g.pfc(b.mac, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    g.wait_us(2);
    for _ in 0..10 {
        g.write(&mut c, 2048, true);
        g.wait_us(5);
    }
    json!({
        "allowance_ns": ALLOWANCE_NS,
        "pause_ignored": [],
        "intervals": [{
            "src_mac": mac_string(&b.mac),
            "priority": 3,
            "first_frame": pause_frame,
            "xon_frame": xon_frame,
            "roce_towards": 1,
            "in_flight_delay_ns": in_flight_ts - t0,
            "ignored": 0,
            // On priority 3 while paused: the WRITE in flight, its ACK back to the sender,
            // and the WRITEs to the other host.
            "roce_during": 2 + unpaused / 2,
        }],
        "unpaused_frames_during_pause": unpaused,
        "pfc_deadlock": false,
    })
}

fn pfc_deadlock_direction(g: &mut Gen) -> Value {
    let (a, b) = (Host::v4(44), Host::v4(45));
    let mut ab = Conn::new(a, b, 0x171, 0x172, 50_000);
    ab.vlan = Some((100, 3));
    let mut ba = Conn::new(b, a, 0x181, 0x182, 60_000);
    ba.vlan = Some((100, 3));
    for _ in 0..5 {
        g.write(&mut ab, 2048, true);
        g.wait_us(10);
    }
    // 10.0.0.45 pauses priority 3 for 120 ms: nothing reaches it on priority 3 meanwhile,
    // while its own WRITEs to 10.0.0.44 (no ACK requested) keep leaving on priority 3.
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    g.pfc(b.mac, 1 << 3, pause_prio3(), None);
    g.event("pfc_pause", "10.0.0.45 pauses priority 3 and holds it for 120 ms".into());
    let mut refresh = t0 + REFRESH_NS;
    let mut next_write = t0 + 500_000;
    let mut reverse = 0;
    while g.t < t0 + 120_000_000 {
        if g.t >= next_write {
            write_only(g, &mut ba, 64, false);
            reverse += 1;
            next_write += 1_000_000;
        } else {
            g.t = g.t.max(refresh.min(next_write));
            if g.t >= refresh {
                g.pfc(b.mac, 1 << 3, pause_prio3(), None);
                refresh += REFRESH_NS;
            }
        }
    }
    let xon_frame = g.frames.len() + 1;
    let t_xon = g.t;
    g.pfc(b.mac, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    g.wait_us(5);
    g.write(&mut ab, 2048, true);
    json!({
        "pfc_deadlock": true,
        "deadlock": {
            "src_mac": mac_string(&b.mac),
            "priority": 3,
            "first_frame": pause_frame,
            "xon_frame": xon_frame,
            "paused_ns": t_xon - t0,
            "roce_during": reverse,
            "roce_towards": 0,
        },
        "pause_ignored": [],
    })
}

/// The switch port at the ToR end of a host's link in an L2 fabric: it pauses, it forwards
/// frames (with the hosts' MACs, not its own) and sends no RoCE of its own.
const TOR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xfe];

/// A host with two peers in an L2 fabric, all on VLAN 100 priority 3: the link's station is
/// the host (its MAC is in every frame; each peer's only in its own conversation).
fn l2_host_and_peers(first_psn: u32) -> (Conn, Conn, Conn) {
    let (a, b, c) = (Host::v4(52), Host::v4(53), Host::v4(54));
    let mut ab = Conn::new(a, b, 0x1c1, 0x1c2, first_psn);
    let mut ac = Conn::new(a, c, 0x1d1, 0x1d2, first_psn + 10_000);
    // The peer 10.0.0.53 writes to the host too: the link's other direction.
    let mut ba = Conn::new(b, a, 0x1e1, 0x1e2, first_psn + 20_000);
    for x in [&mut ab, &mut ac, &mut ba] {
        x.vlan = Some((100, 3));
    }
    (ab, ac, ba)
}

/// A switch port pauses priority 3 and the station at the other end of the link sends `n`
/// WRITEs through the pause anyway, alternately on `a` and `b` (each ACKed back
/// `ack_after_ns` later, which the pause does not stop), then XON. Returns the case's
/// answers (`pause_ignored`, the interval), naming `peer` as the link peer.
fn send_through_pause(
    g: &mut Gen,
    (a, b): (&mut Conn, &mut Conn),
    n: u64,
    peer: [u8; 6],
    why: &str,
    ack_after_ns: i64,
) -> Value {
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    g.pfc(TOR_MAC, 1 << 3, pause_prio3(), None);
    g.event("pfc_pause", why.to_string());
    let mut refresh = t0 + REFRESH_NS;
    let (mut ignored, mut max_delay) = (0u64, 0i64);
    let mut evidence = Vec::new();
    for i in 0..n {
        if g.t >= refresh {
            g.pfc(TOR_MAC, 1 << 3, pause_prio3(), None);
            refresh += REFRESH_NS;
        }
        let c = if i % 2 == 0 { &mut *a } else { &mut *b };
        let (frame, ts, psn) = write_only(g, c, 64, true);
        if ts - t0 > ALLOWANCE_NS {
            ignored += 1;
            max_delay = max_delay.max(ts - t0);
            if evidence.len() < 3 {
                evidence.push(frame);
            }
            if ignored == 1 {
                g.event("pause_ignored", format!("first WRITE through the pause {} ns after it", ts - t0));
            }
        }
        // The peer's ACK comes back through the switch (to the station: not paused).
        g.wait_ns(ack_after_ns);
        g.ack(c, psn);
        g.wait_ns(1000);
    }
    let xon_frame = g.frames.len() + 1;
    g.pfc(TOR_MAC, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    json!({
        "allowance_ns": ALLOWANCE_NS,
        "link_peer": mac_string(&peer),
        "pause_ignored": [{
            "src_mac": mac_string(&TOR_MAC),
            "priority": 3,
            "severity": "critical",
            "pause_frame": pause_frame,
            "frames": ignored,
            "max_delay_ns": max_delay,
            "first_frames": evidence,
        }],
        "intervals": [{
            "src_mac": mac_string(&TOR_MAC),
            "priority": 3,
            "first_frame": pause_frame,
            "xon_frame": xon_frame,
            "roce_towards": n,
            "ignored": ignored,
        }],
        "pfc_deadlock": false,
    })
}

fn pfc_l2_ignored(g: &mut Gen) -> Value {
    let (mut ab, mut ac, mut ba) = l2_host_and_peers(110_000);
    for _ in 0..4 {
        g.write(&mut ab, 2048, true);
        g.write(&mut ac, 2048, true);
        g.write(&mut ba, 1024, true);
        g.wait_us(5);
    }
    // The host sends on, alternately to its two peers, as if no pause had come.
    let host = ab.a.mac;
    send_through_pause(
        g,
        (&mut ab, &mut ac),
        100,
        host,
        "the ToR port 02:00:00:00:00:fe pauses priority 3 towards 10.0.0.52",
        1_000,
    )
}

fn pfc_l2_honoured(g: &mut Gen) -> Value {
    let (mut ab, mut ac, mut ba) = l2_host_and_peers(130_000);
    for _ in 0..4 {
        g.write(&mut ab, 2048, true);
        g.write(&mut ac, 2048, true);
        g.write(&mut ba, 1024, true);
        g.wait_us(5);
    }
    // One WRITE of the host's is under way when the pause comes: within the allowance.
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    g.pfc(TOR_MAC, 1 << 3, pause_prio3(), None);
    g.event("pfc_pause", "the ToR port pauses priority 3 towards 10.0.0.52".into());
    let (_, in_flight_ts, psn) = write_only(g, &mut ab, 256, true);
    g.wait_us(2);
    g.ack(&mut ab, psn);
    // The host holds everything it sends on priority 3, its ACKs included, until XON; its
    // peer's WRITEs to it keep coming through the ToR (that direction is not paused).
    let mut refresh = t0 + REFRESH_NS;
    let mut incoming = 0;
    let mut held = Vec::new();
    while g.t < t0 + 3 * REFRESH_NS {
        if g.t >= refresh {
            g.pfc(TOR_MAC, 1 << 3, pause_prio3(), None);
            refresh += REFRESH_NS;
        }
        let (_, _, p) = write_only(g, &mut ba, 512, true);
        held.push(p);
        incoming += 1;
        g.wait_us(20);
    }
    let xon_frame = g.frames.len() + 1;
    g.pfc(TOR_MAC, 1 << 3, [0; 8], None);
    g.event("pfc_xon", "XON: priority 3 resumes".into());
    g.wait_us(1);
    if let Some(&last) = held.last() {
        g.ack(&mut ba, last);
    }
    for _ in 0..4 {
        g.write(&mut ab, 2048, true);
        g.write(&mut ac, 2048, true);
        g.wait_us(5);
    }
    json!({
        "allowance_ns": ALLOWANCE_NS,
        "link_peer": mac_string(&ab.a.mac),
        "pause_ignored": [],
        "intervals": [{
            "src_mac": mac_string(&TOR_MAC),
            "priority": 3,
            "first_frame": pause_frame,
            "xon_frame": xon_frame,
            "roce_towards": 1,
            "in_flight_delay_ns": in_flight_ts - t0,
            "ignored": 0,
            // While paused: the host's WRITE in flight, its peer's ACK, the peer's WRITEs.
            "roce_during": 2 + incoming,
        }],
        "pfc_deadlock": false,
    })
}

/// The ACK of the far host of `pfc-l2-one-conversation`, as the captured link sees it:
/// its NIC's turnaround plus a fabric round trip (ns).
const FAR_ACK_NS: i64 = 8_000;

/// The ACK of the host on the captured link: its NIC's turnaround (ns).
const NEAR_ACK_NS: i64 = 1_500;

fn pfc_l2_one_conversation(g: &mut Gen) -> Value {
    let (a, b) = (Host::v4(66), Host::v4(67));
    // Two QPs each way between the same two hosts: one conversation of two MACs.
    let mut ab = Conn::new(a, b, 0x211, 0x212, 170_000);
    let mut ab2 = Conn::new(a, b, 0x213, 0x214, 175_000);
    let mut ba = Conn::new(b, a, 0x221, 0x222, 180_000);
    for x in [&mut ab, &mut ab2, &mut ba] {
        x.vlan = Some((100, 3));
    }
    for _ in 0..6 {
        for c in [&mut ab, &mut ab2] {
            let (_, _, psn) = write_only(g, c, 1024, true);
            g.wait_ns(FAR_ACK_NS);
            g.ack(c, psn);
        }
        let (_, _, psn) = write_only(g, &mut ba, 1024, true);
        g.wait_ns(NEAR_ACK_NS);
        g.ack(&mut ba, psn);
        g.wait_us(5);
    }
    let host = a.mac;
    send_through_pause(
        g,
        (&mut ab, &mut ab2),
        40,
        host,
        "the ToR port 02:00:00:00:00:fe pauses priority 3 towards 10.0.0.66",
        FAR_ACK_NS,
    )
}

fn pfc_qinq_ignored(g: &mut Gen) -> Value {
    // Every frame crosses a QinQ trunk: the provider's S-tag (VLAN 300, PCP 3) outside the
    // customer's C-tag (VLAN 100, PCP 0).
    g.s_tag = Some((300, 3));
    let (a, b, c) = (Host::v4(55), Host::v4(56), Host::v4(57));
    let mut ab = Conn::new(a, b, 0x1f1, 0x1f2, 150_000);
    let mut ac = Conn::new(a, c, 0x201, 0x202, 160_000);
    for x in [&mut ab, &mut ac] {
        x.vlan = Some((100, 0));
    }
    for _ in 0..4 {
        g.write(&mut ab, 2048, true);
        g.write(&mut ac, 2048, true);
        g.wait_us(5);
    }
    let mut answers = send_through_pause(
        g,
        (&mut ab, &mut ac),
        60,
        a.mac,
        "the far switch port pauses priority 3 on the trunk",
        1_000,
    );
    g.s_tag = None;
    // Read by the inner tag (--pcp-tag inner), the same frames are on priority 0.
    if let Some(o) = answers.as_object_mut() {
        o.insert("inner_priority".into(), json!(0));
    }
    answers
}

fn truncated_length(g: &mut Gen) -> Value {
    const SNAP: usize = 128;
    let mut w = Conn::new(Host::v4(46), Host::v4(47), 0x191, 0x192, 70_000);
    w.pmtu = 4096;
    g.write(&mut w, 16 * 1024, true);
    g.wait_us(5);
    let mut r = Conn::new(Host::v4(48), Host::v4(49), 0x1a1, 0x1a2, 80_000);
    r.pmtu = 4096;
    r.vlan = Some((100, 3));
    g.read(&mut r, 8192);
    g.wait_us(5);
    let mut s = Conn::new(Host::v6(50), Host::v6(51), 0x1b1, 0x1b2, 90_000);
    s.pmtu = 1024;
    g.send(&mut s, 4096);
    // The device keeps SNAP bytes and records SNAP as the original length as well.
    let (mut wire, mut record) = (0u64, 0u64);
    let mut per_flow: std::collections::BTreeMap<(String, String, u32), u64> = Default::default();
    let mut cut = 0u64;
    let mut first_cut = None;
    for (i, f) in g.frames.iter_mut().enumerate() {
        let full = f.data.len();
        if full > SNAP {
            f.snap = SNAP;
            cut += 1;
            first_cut.get_or_insert(i + 1);
        }
        f.len = f.snap.min(full) as u32;
        wire += full as u64;
        record += u64::from(f.len);
        let d = rocescope_decoder::decode(
            rocescope_decoder::LinkType::ETHERNET,
            &f.data,
            &rocescope_decoder::DecodeOptions::default(),
        );
        if let (Some(ip), Some(roce)) = (d.ip.as_ref(), d.roce_ok()) {
            let key = (ip.src().to_string(), ip.dst().to_string(), roce.bth.dest_qp());
            *per_flow.entry(key).or_default() += full as u64;
        }
    }
    // Every frame was built with a correct ICRC: the cut ones now have none to check.
    g.counts.icrc_valid -= cut;
    g.counts.icrc_truncated += cut;
    let detail = format!(
        "the first of {cut} frames (of {}) cut to {SNAP} bytes, record length {SNAP}",
        g.frames.len()
    );
    g.events.push(Event { frame: first_cut.unwrap_or(1), what: "truncated", detail });
    let flows: Vec<Value> = per_flow
        .into_iter()
        .map(|((src, dst, qp), bytes)| json!({ "src": src, "dst": dst, "dest_qp": qp, "bytes": bytes }))
        .collect();
    json!({
        "snap": SNAP,
        "roce_bytes": wire,
        "record_bytes": record,
        "cut_frames": cut,
        "flows": flows,
    })
}

/// The cases' captures and expectations, as (path relative to the samples directory,
/// bytes).
pub fn outputs() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for (name, description, build) in CASES {
        let mut g = Gen::new();
        let analysis = build(&mut g);
        let (pcap, json) = crate::render(name, description, &g);
        let mut doc: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
        if let Some(o) = doc.as_object_mut() {
            o.insert("analysis".into(), analysis);
        }
        let mut json = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        json.push(b'\n');
        files.push((format!("cases/{name}.pcap"), pcap));
        files.push((format!("cases/{name}.expected.json"), json));
    }
    files
}
