//! QoS audit cases written to `samples/qos/` (not part of demo.pcap): a SONiC-style RoCE
//! profile (data on DSCP 3 and 4 mapped to lossless TC 3 and 4, ACK/NAK on DSCP 44, CNPs on
//! DSCP 46), untagged RoCE audited against a PCP, and a capture with no RoCE at all. Each
//! case's `.expected.json` carries, besides the usual expectations, an `audit` list: the
//! `rocescope report` options (or baseline file) of one run, the exit status it must give
//! and every audit violation it must list, worked out here by construction
//! (tests/qos.rs runs them).
//!
//! QoS facts used (shared/reference/roce-protocol.md): the DSCP is the IP header's upper six
//! TOS bits and the 802.1p PCP sits in the VLAN tag; which of the two a device classifies on
//! is its trust mode, and mlx5 maps every DSCP to priority 0 until configured (§1.9); CNPs
//! and ACK/NAKs use classes of their own, e.g. CNP DSCP 46 and ACK/NAK DSCP 44 in a SONiC
//! RoCEv2 test (§1.7); a PFC frame comes from the pausing MAC and each one restarts the
//! priority's timer, XON (quanta 0) ends it (§1.8).

use crate::fabric::{Conn, Frame, Gen, Host};
use rocescope_decoder::build::{ExtRepr, IcrcMode};
use rocescope_decoder::ext::AethRepr;
use rocescope_decoder::link::mac_string;
use rocescope_decoder::{BthRepr, Ecn, Opcode};
use serde_json::{json, Value};

/// The SONiC profile's ACK/NAK DSCP.
const ACK_DSCP: u8 = 44;
/// The SONiC profile's CNP DSCP.
const CNP_DSCP: u8 = 46;
/// How often a pausing MAC re-sends its pause: before 65535 quanta (335.5 µs at 100G) run
/// out (§1.8).
const REFRESH_NS: i64 = 300_000;

/// A case: file stem, one-line description, builder returning the `audit` runs.
type Case = (&'static str, &'static str, fn(&mut Gen) -> Value);

/// Every case, written as `qos/NAME.pcap` and `qos/NAME.expected.json`.
pub const CASES: &[Case] = &[
    (
        "sonic-profile",
        "SONiC-style RoCE profile: data on DSCP 3 (untagged) and DSCP 4 (VLAN 200, PCP 0: the hosts do not set PCP, the fabric trusts DSCP) mapped to lossless TC 3 and 4, ACK/NAK on DSCP 44, CNPs on DSCP 46; 10.0.0.62 pauses priority 3 for 6 ms and RoCE on DSCP 3 stops meanwhile",
        sonic_profile,
    ),
    (
        "untagged-pcp",
        "RoCE on DSCP 26 between 10.0.0.71 and 10.0.0.72 without a VLAN tag (no PCP to audit) beside a connection on VLAN 100 with PCP 3",
        untagged_pcp,
    ),
    (
        "no-roce",
        "ARP, LLDP, DNS and a TCP SYN: no RoCE frame, so an audit has nothing to check",
        no_roce,
    ),
];

/// The full-quanta pause vector for priority 3.
fn pause_prio3() -> [u16; 8] {
    let mut q = [0u16; 8];
    q[3] = 65535;
    q
}

/// The responder's ACK covering `psn`, on DSCP `dscp` (ECT(0), the connection's VLAN).
fn ack_on(g: &mut Gen, c: &Conn, psn: u32, dscp: u8) {
    let bth = BthRepr { opcode: Opcode::RC_ACKNOWLEDGE, dest_qp: c.a_qpn, psn, ..Default::default() };
    let ext = ExtRepr { aeth: Some(AethRepr::ack(c.msn)), ..Default::default() };
    g.roce(c.b, c.a, c.vlan, dscp, Ecn::Ect0, c.sport ^ 1, bth, ext, 0, IcrcMode::Correct, None);
    g.flow(c.b, c.a, c.a_qpn).acks += 1;
}

/// An RDMA WRITE of `len` bytes on `c`, acknowledged on the ACK class `ack_dscp`.
fn write_acked(g: &mut Gen, c: &mut Conn, len: usize, ack_dscp: u8) {
    let last = g.write(c, len, false);
    g.wait_us(3);
    ack_on(g, c, last, ack_dscp);
}

/// A flow in a violation: source, destination, destination QP.
fn flow_ref(src: Host, dst: Host, qp: u32) -> Value {
    json!({ "src": src.ip.to_string(), "dst": dst.ip.to_string(), "dest_qp": qp })
}

/// One violation a run must list.
fn violation(what: &str, flow: Value, expected: Value, seen: Value, packets: u64) -> Value {
    json!({ "what": what, "flow": flow, "expected": expected, "seen": seen, "packets": packets })
}

/// Packets of a flow as the generator recorded them: (all, ACKs, CNPs).
fn packets(g: &Gen, src: Host, dst: Host, qp: u32) -> (u64, u64, u64) {
    let key = (src.ip.to_string(), dst.ip.to_string(), qp);
    g.flows.get(&key).map_or((0, 0, 0), |f| (f.packets, f.acks, f.cnps))
}

fn sonic_profile(g: &mut Gen) -> Value {
    let (h1, h2, h3, h4) = (Host::v4(61), Host::v4(62), Host::v4(63), Host::v4(64));
    // A: untagged, DSCP 3 (TC 3). B: VLAN 200 with PCP 0, DSCP 4 (TC 4).
    let mut a = Conn::new(h1, h2, 0x611, 0x612, 1000);
    a.dscp = 3;
    let mut b = Conn::new(h3, h4, 0x631, 0x632, 5000);
    b.dscp = 4;
    b.vlan = Some((200, 0));
    for i in 0..6 {
        if i == 2 {
            // The switch marks one WRITE; the receiver's NIC answers with a CNP on the CNP
            // class, to the sender's QP (§1.7).
            a.ecn = Ecn::Ce;
            g.event("ecn_ce", "CE-marked WRITE on DSCP 3".into());
        }
        write_acked(g, &mut a, 2048, ACK_DSCP);
        a.ecn = Ecn::Ect0;
        if i == 2 {
            g.wait_us(2);
            g.event("cnp", "CNP on DSCP 46 to QP 0x611".into());
            g.cnp(h2, h1, a.a_qpn, CNP_DSCP, None);
        }
        write_acked(g, &mut b, 2048, ACK_DSCP);
        g.wait_us(5);
    }
    // READ responses carry an AETH but also data: they travel on the data class.
    g.read(&mut a, 2048);
    g.wait_us(5);
    // 10.0.0.62 pauses priority 3 for 6 ms: RoCE on DSCP 3 stops, B on TC 4 goes on.
    g.event("pfc_pause", format!("{} pauses priority 3", mac_string(&h2.mac)));
    let start = g.t;
    let mut refresh = start;
    while g.t < start + 6_000_000 {
        if g.t >= refresh {
            g.pfc(h2.mac, 1 << 3, pause_prio3(), None);
            refresh += REFRESH_NS;
        }
        write_acked(g, &mut b, 1024, ACK_DSCP);
        g.wait_us(150);
    }
    g.event("pfc_xon", "XON on priority 3".into());
    g.pfc(h2.mac, 1 << 3, [0; 8], None);
    g.wait_us(5);
    for _ in 0..3 {
        write_acked(g, &mut a, 2048, ACK_DSCP);
        write_acked(g, &mut b, 2048, ACK_DSCP);
        g.wait_us(5);
    }

    // The answers, by construction.
    let (fa, _, _) = packets(g, h1, h2, 0x612);
    let (ra, ra_acks, ra_cnps) = packets(g, h2, h1, 0x611);
    let ra_data = ra - ra_acks - ra_cnps;
    let (fb, _, _) = packets(g, h3, h4, 0x632);
    let (_, rb_acks, _) = packets(g, h4, h3, 0x631);
    let pauses = g.pauses.get(&(mac_string(&h2.mac), "pfc", 3)).map_or(0, |p| p.0);
    let (a_fwd, a_back) = (flow_ref(h1, h2, 0x612), flow_ref(h2, h1, 0x611));
    let (b_fwd, b_back) = (flow_ref(h3, h4, 0x632), flow_ref(h4, h3, 0x631));
    let right = [
        "--trust",
        "dscp",
        "--dscp-map",
        "3:3,4:4",
        "--expect-dscp",
        "3,4",
        "--expect-ack-dscp",
        "44",
        "--expect-cnp-dscp",
        "46",
        "--lossless",
        "3,4",
        "--expect-ecn",
    ];
    // Without the map, DSCP 3 and 4 are priority 0 (DSCP >> 3), ACKs and CNPs (44, 46)
    // priority 5, and B's PCP 0 is priority 0 anyway: priority 3 carries no RoCE.
    let pause_unused = violation("pause_priority", Value::Null, json!([0, 5]), json!(3), pauses);
    json!([
        {
            "about": "the profile's own settings: clean",
            "args": right,
            "exit": 0,
            "violations": [],
        },
        {
            "about": "the same settings from a baseline file",
            "args": [],
            "baseline": "# SONiC-style RoCE profile\ntrust = \"dscp\"\ndscp_map = { 3 = 3, 4 = 4 }\nroce_dscp = [3, 4]\nack_dscp = 44\ncnp_dscp = [46]\nlossless_priorities = [3, 4]\necn_capable = true\n",
            "exit": 0,
            "violations": [],
        },
        {
            "about": "no DSCP map: DSCP 3 and 4 count as priority 0 (DSCP >> 3), not lossless; the pauses on priority 3 find no RoCE there",
            "args": ["--expect-dscp", "3,4", "--expect-ack-dscp", "44", "--expect-cnp-dscp", "46", "--lossless", "3,4"],
            "exit": 3,
            "violations": [
                violation("not_lossless", a_fwd.clone(), json!([3, 4]), json!(0), fa),
                violation("not_lossless", a_back.clone(), json!([3, 4]), json!(0), ra_data),
                violation("not_lossless", b_fwd.clone(), json!([3, 4]), json!(0), fb),
                pause_unused.clone(),
            ],
        },
        {
            "about": "the map but PCP trust: B's PCP 0 decides its priority",
            "args": ["--dscp-map", "3:3,4:4", "--expect-dscp", "3,4", "--expect-ack-dscp", "44", "--expect-cnp-dscp", "46", "--lossless", "3,4"],
            "exit": 3,
            "violations": [
                violation("not_lossless", b_fwd.clone(), json!([3, 4]), json!(0), fb),
            ],
        },
        {
            "about": "no ACK class: ACK/NAKs are held to the data DSCPs",
            "args": ["--trust", "dscp", "--dscp-map", "3:3,4:4", "--expect-dscp", "3,4", "--expect-cnp-dscp", "46", "--lossless", "3,4"],
            "exit": 3,
            "violations": [
                violation("dscp", a_back.clone(), json!([3, 4]), json!(ACK_DSCP), ra_acks),
                violation("dscp", b_back.clone(), json!([3, 4]), json!(ACK_DSCP), rb_acks),
            ],
        },
        {
            "about": "a DSCP 26 / CNP 48 profile applied to this fabric",
            "args": ["--expect-dscp", "26", "--expect-cnp-dscp", "48", "--lossless", "3"],
            "exit": 3,
            "violations": [
                violation("dscp", a_fwd, json!(26), json!(3), fa),
                violation("dscp", a_back.clone(), json!(26), json!(3), ra_data),
                violation("dscp", a_back.clone(), json!(26), json!(ACK_DSCP), ra_acks),
                violation("cnp_dscp", a_back, json!(48), json!(CNP_DSCP), ra_cnps),
                violation("dscp", b_fwd, json!(26), json!(4), fb),
                violation("dscp", b_back, json!(26), json!(ACK_DSCP), rb_acks),
                pause_unused,
            ],
        },
    ])
}

fn untagged_pcp(g: &mut Gen) -> Value {
    let (h1, h2, h3, h4) = (Host::v4(71), Host::v4(72), Host::v4(73), Host::v4(74));
    let mut u = Conn::new(h1, h2, 0x711, 0x712, 100);
    let mut t = Conn::new(h3, h4, 0x731, 0x732, 200);
    t.vlan = Some((100, 3));
    g.event("untagged", "RoCE without a VLAN tag".into());
    for _ in 0..5 {
        g.write(&mut u, 2048, true);
        g.write(&mut t, 2048, true);
        g.wait_us(5);
    }
    let (fu, _, _) = packets(g, h1, h2, 0x712);
    let (ru, ru_acks, _) = packets(g, h2, h1, 0x711);
    json!([
        {
            "about": "a PCP expected: the untagged packets (data and ACKs) carry none",
            "args": ["--expect-pcp", "3"],
            "exit": 3,
            "violations": [violation("pcp_untagged", Value::Null, json!(3), json!("untagged"), fu + ru)],
        },
        {
            "about": "ACK/NAKs in a class of their own are not held to the data PCP",
            "args": ["--expect-pcp", "3", "--expect-ack-dscp", "26"],
            "exit": 3,
            "violations": [violation("pcp_untagged", Value::Null, json!(3), json!("untagged"), fu + ru - ru_acks)],
        },
        {
            "about": "no PCP expected: untagged RoCE on the expected DSCP is clean",
            "args": ["--expect-dscp", "26", "--lossless", "3"],
            "exit": 0,
            "violations": [],
        },
    ])
}

/// Append a raw frame that is not RoCE.
fn raw(g: &mut Gen, mut data: Vec<u8>) {
    if data.len() < 60 {
        data.resize(60, 0);
    }
    let len = data.len() as u32;
    g.frames.push(Frame { ts_ns: g.t, data, len, snap: usize::MAX });
    g.counts.frames += 1;
    g.wait_us(250);
}

/// An Ethernet header.
fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16) -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    v.extend_from_slice(&ethertype.to_be_bytes());
    v
}

/// An IPv4 header (no options, checksum filled in) for `payload_len` bytes of `proto`.
fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload_len: usize) -> Vec<u8> {
    let total = (20 + payload_len) as u16;
    let mut h = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, proto, 0, 0];
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let sum = h.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum::<u32>();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    let csum = !(((folded & 0xFFFF) + (folded >> 16)) as u16);
    h[10..12].copy_from_slice(&csum.to_be_bytes());
    h
}

fn no_roce(g: &mut Gen) -> Value {
    let (a, b) = (Host::v4(81), Host::v4(82));
    // ARP: who has 10.0.0.82?
    let mut f = eth([0xff; 6], a.mac, 0x0806);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&a.mac);
    f.extend_from_slice(&[10, 0, 0, 81]);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&[10, 0, 0, 82]);
    raw(g, f);
    // LLDP: chassis ID, port ID, TTL, end.
    let mut f = eth([0x01, 0x80, 0xc2, 0, 0, 0x0e], a.mac, 0x88cc);
    f.extend_from_slice(&[0x02, 0x07, 0x04]);
    f.extend_from_slice(&a.mac);
    f.extend_from_slice(&[0x04, 0x05, 0x05, b'e', b't', b'h', b'0']);
    f.extend_from_slice(&[0x06, 0x02, 0x00, 0x78, 0x00, 0x00]);
    raw(g, f);
    // DNS query over UDP.
    let dns: &[u8] = &[
        0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 4, b'h', b'o', b's', b't', 3, b'l', b'a', b'b', 0, 0,
        1, 0, 1,
    ];
    let mut f = eth(b.mac, a.mac, 0x0800);
    f.extend(ipv4([10, 0, 0, 81], [10, 0, 0, 82], 17, 8 + dns.len()));
    f.extend_from_slice(&40000u16.to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&((8 + dns.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(dns);
    raw(g, f);
    // TCP SYN to port 445.
    let mut f = eth(b.mac, a.mac, 0x0800);
    f.extend(ipv4([10, 0, 0, 81], [10, 0, 0, 82], 6, 20));
    f.extend_from_slice(&50000u16.to_be_bytes());
    f.extend_from_slice(&445u16.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    raw(g, f);
    let frames = g.counts.frames;
    let nothing = violation("no_roce", Value::Null, json!("RoCE"), json!(0), frames);
    json!([
        {
            "about": "expectations and no RoCE: the audit checked nothing, which is not a pass",
            "args": ["--expect-dscp", "26", "--expect-cnp-dscp", "48"],
            "exit": 3,
            "violations": [nothing.clone()],
        },
        {
            "about": "a lossless priority list alone is an expectation too",
            "args": ["--lossless", "3"],
            "exit": 3,
            "violations": [nothing],
        },
        {
            "about": "no expectations: no audit, exit 0",
            "args": [],
            "exit": 0,
            "violations": [],
        },
    ])
}

/// The cases' captures and expectations, as (path relative to the samples directory,
/// bytes).
pub fn outputs() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for (name, description, build) in CASES {
        let mut g = Gen::new();
        let audit = build(&mut g);
        let (pcap, json) = crate::render(name, description, &g);
        let mut doc: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
        if let Some(o) = doc.as_object_mut() {
            o.insert("audit".into(), audit);
        }
        let mut json = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        json.push(b'\n');
        files.push((format!("qos/{name}.pcap"), pcap));
        files.push((format!("qos/{name}.expected.json"), json));
    }
    files
}
