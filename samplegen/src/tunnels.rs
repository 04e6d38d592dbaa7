//! `samples/tunnels/demo-<encap>.pcap`: every frame of `samples/demo.pcap` as a switch
//! mirror or an overlay would deliver it (issue 12): ERSPAN I/II/III, gretap, L3 GRE,
//! VXLAN, Geneve, MPLS (Ethernet pseudowire with and without control word, and IP).
//! `tests/tunnels.rs` checks that each gives the demo's flows, findings and audit.
//!
//! The L3 encapsulations (L3 GRE, MPLS with IP) cannot carry frames without IP (PFC, PAUSE,
//! RoCEv1): those stay unwrapped, as a capture at the tunnel endpoint's interface would see
//! them beside the tunnel. `unknown-gre.pcap` wraps the demo's frames in GRE with a protocol
//! rocescope does not unwrap (0x880b, PPP), for the "tunnel not decoded" note.
//!
//! Three more show what a mirror adds (analyzer `mirror` module): `two-sessions.pcap`, the
//! demo mirrored by two ERSPAN II sessions into one collector (two capture points);
//! `erspan3-batched.pcap`, ERSPAN III with 100 ns timestamps (no upper bits) whose
//! collector stamped frames in 50 µs batches (the switch clock gives the demo's timing back);
//! `erspan2-stripped-tag.pcap`, a mirror that strips the 802.1Q tag and reports its PCP as
//! the ERSPAN COS (En = 2); `erspan3-stepping.pcap`, ERSPAN III whose switch stamps come
//! from two clocks 350 ms apart (two line cards behind one session), 20 frames from each in
//! turn after its first 60 frames: the session's clock steps at every change and, at the
//! fourth, falls back to the capture clock (issue 25); `erspan3-wrong-clock.pcap`, ERSPAN
//! III whose switch clock reads 3 hours ahead and ticks every 100 µs under a header that
//! says 100 ns: distrusted on its first frames, before any is timed (issue 37).

use crate::fabric::Gen;
use rocescope_capture::PcapWriter;
use rocescope_decoder::build::{Encapsulation, IpRepr, MplsLabelRepr, Outer, TunnelRepr};
use rocescope_decoder::{Ecn, LinkType};
use std::net::Ipv4Addr;

/// The mirror session of the ERSPAN samples.
pub const SESSION: u16 = 7;
/// The VNI of the VXLAN and Geneve samples.
pub const VNI: u32 = 10_007;

/// The encapsulations, by file-name suffix.
pub const ENCAPS: [&str; 10] =
    ["erspan1", "erspan2", "erspan3", "gretap", "gre", "vxlan", "geneve", "mpls-pw", "mpls-pw-cw", "mpls-ip"];

pub(crate) fn outer() -> Outer {
    Outer {
        src_mac: [0x02, 0, 0, 0, 0xee, 0x01],
        dst_mac: [0x02, 0, 0, 0, 0xee, 0x02],
        vlans: Vec::new(),
        ip: IpRepr::V4 {
            src: Ipv4Addr::new(192, 168, 100, 1),
            dst: Ipv4Addr::new(192, 168, 100, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            id: 0,
        },
    }
}

/// An ERSPAN III header of this generator's session for frame `seq`, with the frame's COS and
/// VLAN (`tag`), 100 ns ticks `ticks` from hardware `hw_id`, and the ticks' upper bits in a
/// platform subheader when `upper_bits`.
fn erspan3(seq: u32, (cos, vlan): (u8, u16), ticks: u64, hw_id: u8, upper_bits: bool) -> Encapsulation {
    Encapsulation::ErspanIII {
        seq,
        vlan,
        cos,
        bso: 0,
        truncated: false,
        session_id: SESSION,
        timestamp: ticks as u32,
        sgt: 0,
        p: false,
        hw_id,
        direction: false,
        granularity: 1,
        platform: upper_bits.then_some((3, ticks >> 32)),
    }
}

/// The innermost 802.1Q tag's (PCP, VID) of an Ethernet frame: what a switch's ERSPAN
/// header reports as COS and VLAN.
fn tag(frame: &[u8]) -> (u8, u16) {
    match frame.get(12..16) {
        Some(&[0x81, 0x00, a, b]) => (a >> 5, u16::from_be_bytes([a & 0x0F, b])),
        _ => (0, 0),
    }
}

fn labels() -> Vec<MplsLabelRepr> {
    vec![MplsLabelRepr { label: 16_001, tc: 3, ttl: 64 }, MplsLabelRepr { label: 24_002, tc: 3, ttl: 64 }]
}

/// The encapsulation of frame `i` (sequence numbers and timestamps change per frame).
fn encap(name: &str, i: u32, ts_ns: i64, frame: &[u8]) -> Encapsulation {
    let (cos, vlan) = tag(frame);
    // ERSPAN III timestamps in 100 ns ticks; the platform subheader (ID 3) carries the
    // upper 32 bits.
    let ticks = (ts_ns / 100) as u64;
    match name {
        "erspan1" => Encapsulation::ErspanI,
        "erspan2" => Encapsulation::ErspanII {
            seq: i,
            vlan,
            cos,
            encap: if vlan != 0 { 3 } else { 0 },
            truncated: false,
            session_id: SESSION,
            index: 1,
        },
        "erspan3" => erspan3(i, (cos, vlan), ticks, 1, true),
        "gretap" => Encapsulation::Gretap { key: None, seq: None },
        "gre" => Encapsulation::Gre { key: None, seq: None },
        "vxlan" => Encapsulation::Vxlan { sport: 49152 + (i % 4096) as u16, dport: 4789, vni: VNI },
        "geneve" => Encapsulation::Geneve {
            sport: 49152 + (i % 4096) as u16,
            dport: 6081,
            vni: VNI,
            // One 4-byte option (class 0x0103, type 0x80, no data), skipped by length.
            options: vec![0x01, 0x03, 0x80, 0x00],
        },
        "mpls-pw" => Encapsulation::MplsEthernet { labels: labels(), control_word: false },
        "mpls-pw-cw" => Encapsulation::MplsEthernet { labels: labels(), control_word: true },
        _ => Encapsulation::MplsIp { labels: labels() },
    }
}

/// Wrap every frame of `demo` with `wrap` (None: the frame stays as it is) into a pcap.
fn pcap(demo: &Gen, wrap: impl FnMut(u32, i64, &[u8]) -> Option<Vec<u8>>) -> Vec<u8> {
    pcap_of(&wrapped(demo, wrap))
}

/// The tunnelled demo captures, as (path under `samples/`, bytes).
pub fn outputs(demo: &Gen) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for name in ENCAPS {
        let bytes = pcap(demo, |i, ts, frame| {
            TunnelRepr { outer: outer(), encap: encap(name, i, ts, frame) }.wrap(frame)
        });
        files.push((format!("tunnels/demo-{name}.pcap"), bytes));
    }
    // GRE carrying PPP (0x880b): recognised as a tunnel, not unwrapped.
    let bytes = pcap(demo, |_, _, frame| {
        let mut w = TunnelRepr { outer: outer(), encap: Encapsulation::Gretap { key: None, seq: None } }
            .wrap(frame)?;
        // The GRE protocol type sits after the outer Ethernet (14) and IPv4 (20) headers.
        if let Some(p) = w.get_mut(36..38) {
            p.copy_from_slice(&0x880Bu16.to_be_bytes());
        }
        Some(w)
    });
    files.push(("tunnels/unknown-gre.pcap".into(), bytes));
    files.push(("tunnels/two-sessions.pcap".into(), two_sessions(demo)));
    files.push(("tunnels/erspan3-batched.pcap".into(), batched(demo)));
    files.push(("tunnels/erspan3-stepping.pcap".into(), stepping(demo)));
    files.push(("tunnels/erspan3-wrong-clock.pcap".into(), wrong_clock(demo)));
    let bytes = pcap(demo, |i, _, frame| {
        let (cos, vlan) = tag(frame);
        let stripped: Vec<u8> = if vlan != 0 || frame.get(12..14) == Some(&[0x81, 0x00]) {
            frame.iter().take(12).chain(frame.iter().skip(16)).copied().collect()
        } else {
            frame.to_vec()
        };
        let tagged = stripped.len() != frame.len();
        let encap = Encapsulation::ErspanII {
            seq: i,
            vlan,
            cos: if tagged { cos } else { 0 },
            encap: if tagged { 2 } else { 0 },
            truncated: false,
            session_id: SESSION,
            index: 1,
        };
        TunnelRepr { outer: outer(), encap }.wrap(&stripped)
    });
    files.push(("tunnels/erspan2-stripped-tag.pcap".into(), bytes));
    files.extend(overlay());
    files
}

/// The leaf's and the spine's MACs on the tapped underlay link of the overlay sample.
const LEAF_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xf1, 0x01];
const SPINE_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xf0, 0x01];

/// `tunnels/overlay-vxlan.pcap` and its answers: VXLAN as the fabric's transport between
/// VTEP 10.1.0.1 (leaf 1, host 10.0.0.110 behind it) and VTEP 10.1.0.2 (host 10.0.0.111),
/// captured on leaf 1's link to the spine. The underlay classifies on the outer DSCP (the
/// VTEP copies the inner one) and marks the outer ECN; the spine pauses priority 3 and leaf 1
/// keeps sending through it; one frame leaves with outer DSCP 0.
fn overlay() -> Vec<(String, Vec<u8>)> {
    use crate::fabric::{Conn, Host, Req};
    use rocescope_decoder::Opcode;
    let mut g = Gen::new();
    let (a, b) = (Host::v4(110), Host::v4(111));
    let mut c = Conn::new(a, b, 0x501, 0x502, 30_000);
    // Both directions of the VTEP pair: WRITEs out, ACKs back.
    for _ in 0..3 {
        g.write(&mut c, 2048, true);
        g.wait_us(5);
    }
    // The underlay's queue marks the outer header of every third WRITE; the receiver's NIC
    // sees CE after decapsulation and answers with CNPs.
    let mut marked = Vec::new();
    for i in 0..30 {
        let ext = write_reth(c.psn, 512);
        let psn = g.request(&mut c, Opcode::RC_WRITE_ONLY, ext, 512, i % 10 == 9, Req::New);
        if i % 3 == 0 {
            marked.push(g.frames.len() - 1);
        }
        if i % 10 == 2 {
            g.wait_us(1);
            g.cnp(b, a, c.a_qpn, 48, None);
        }
        if i % 10 == 9 {
            g.wait_us(2);
            g.ack(&mut c, psn);
        }
        g.wait_us(1);
    }
    c.msn += 3;
    // The spine pauses priority 3 (outer DSCP 26 >> 3) and leaf 1 sends on.
    let pause_frame = g.frames.len() + 1;
    let t0 = g.t;
    let mut q = [0u16; 8];
    q[3] = 65535;
    g.pfc(SPINE_MAC, 1 << 3, q, None);
    let (mut ignored, mut max_delay) = (0u64, 0i64);
    let mut zero_dscp = 0;
    for i in 0..40 {
        let ts = g.t;
        let ext = write_reth(c.psn, 256);
        g.request(&mut c, Opcode::RC_WRITE_ONLY, ext, 256, false, Req::New);
        if i == 20 {
            zero_dscp = g.frames.len() - 1;
        }
        // The frame with outer DSCP 0 is on the underlay's priority 0: not paused.
        if ts - t0 > 7_000 && i != 20 {
            ignored += 1;
            max_delay = max_delay.max(ts - t0);
        }
        g.wait_ns(1_000);
    }
    g.pfc(SPINE_MAC, 1 << 3, [0; 8], None);
    let ext = write_reth(c.psn, 256);
    let last = g.request(&mut c, Opcode::RC_WRITE_ONLY, ext, 256, true, Req::New);
    g.wait_us(2);
    g.ack(&mut c, last);
    let vtep = |ip: std::net::IpAddr| if ip == a.ip { [10, 1, 0, 1] } else { [10, 1, 0, 2] };
    let mut frames = Vec::new();
    for (i, f) in g.frames.iter().enumerate() {
        let d = rocescope_decoder::decode(LinkType::ETHERNET, &f.data, &Default::default());
        let Some(ip) = d.ip.as_ref().filter(|_| d.mac_control.is_none()) else {
            frames.push((f.ts_ns, f.data.clone(), f.len));
            continue;
        };
        let out = ip.src() == a.ip;
        let (src_mac, dst_mac) = if out { (LEAF_MAC, SPINE_MAC) } else { (SPINE_MAC, LEAF_MAC) };
        let dscp = if i == zero_dscp { 0 } else { ip.dscp() };
        let ecn = if marked.contains(&i) { Ecn::Ce } else { Ecn::Ect0 };
        let outer = Outer {
            src_mac,
            dst_mac,
            vlans: Vec::new(),
            ip: IpRepr::V4 {
                src: vtep(ip.src()).into(),
                dst: vtep(ip.dst()).into(),
                dscp,
                ecn,
                ttl: 63,
                id: i as u16,
            },
        };
        let encap = Encapsulation::Vxlan { sport: 49152 + (i % 64) as u16, dport: 4789, vni: VNI };
        let w = TunnelRepr { outer, encap }.wrap(&f.data).unwrap_or_else(|| f.data.clone());
        let len = w.len() as u32;
        frames.push((f.ts_ns, w, len));
    }
    let analysis = serde_json::json!({
        "vteps": ["10.1.0.1", "10.1.0.2"],
        "pausing_mac": rocescope_decoder::link::mac_string(&SPINE_MAC),
        "pause_frame": pause_frame,
        "ignored": ignored,
        "max_delay_ns": max_delay,
        "outer_ce": marked.len(),
        "outer_dscp_zero_frames": 1,
        "cnps": 3,
    });
    let mut json = serde_json::to_vec_pretty(&analysis).unwrap_or_default();
    json.push(b'\n');
    vec![
        ("tunnels/overlay-vxlan.pcap".into(), pcap_of(&frames)),
        ("tunnels/overlay-vxlan.expected.json".into(), json),
    ]
}

/// A RETH for a WRITE of `len` bytes at PSN `psn`.
fn write_reth(psn: u32, len: u32) -> rocescope_decoder::build::ExtRepr {
    let reth = rocescope_decoder::ext::RethRepr {
        va: 0x7f60_0000_0000 + u64::from(psn) * 4096,
        rkey: 0x6262,
        dma_len: len,
    };
    rocescope_decoder::build::ExtRepr { reth: Some(reth), ..Default::default() }
}

/// Frames as (capture time, bytes, wire length), into a pcap.
fn pcap_of(frames: &[(i64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let ok = PcapWriter::new(&mut out, LinkType::ETHERNET, 65535)
        .and_then(|mut w| frames.iter().try_for_each(|(ts, d, len)| w.write(*ts, d, *len)));
    if ok.is_err() {
        return Vec::new();
    }
    out
}

/// Each wrapped frame with the wire length and snap cut of the demo's frame: the mirror
/// carries the whole frame; the capture's snap length cuts the same number of bytes from
/// its end as it cut from the demo's frame.
fn wrapped(demo: &Gen, mut wrap: impl FnMut(u32, i64, &[u8]) -> Option<Vec<u8>>) -> Vec<(i64, Vec<u8>, u32)> {
    let mut out = Vec::with_capacity(demo.frames.len());
    for (i, f) in demo.frames.iter().enumerate() {
        let cut = f.data.len() - f.snap.min(f.data.len());
        let w = wrap(i as u32, f.ts_ns, &f.data).unwrap_or_else(|| f.data.clone());
        let len = (i64::from(f.len) + w.len() as i64 - f.data.len() as i64).max(0) as u32;
        let data = w.get(..w.len().saturating_sub(cut)).unwrap_or(&w).to_vec();
        out.push((f.ts_ns, data, len));
    }
    out
}

/// The demo mirrored by ERSPAN II sessions 1 and 2 into one collector; session 2's copies
/// arrive 3 µs after session 1's.
fn two_sessions(demo: &Gen) -> Vec<u8> {
    let mut frames = Vec::new();
    for (session, delay) in [(1u16, 0i64), (2, 3_000)] {
        let copies = wrapped(demo, |i, _, frame| {
            let (cos, vlan) = tag(frame);
            let encap = Encapsulation::ErspanII {
                seq: i,
                vlan,
                cos,
                encap: if vlan != 0 { 3 } else { 0 },
                truncated: false,
                session_id: session,
                index: u32::from(session),
            };
            TunnelRepr { outer: outer(), encap }.wrap(frame)
        });
        frames.extend(copies.into_iter().map(|(ts, d, len)| (ts + delay, d, len)));
    }
    frames.sort_by_key(|f| f.0);
    pcap_of(&frames)
}

/// ERSPAN III, 100 ns ticks without the platform subheader (the field wraps every 429 s),
/// captured by a collector that stamps frames in 50 µs batches: each frame's capture time
/// is the end of the batch it arrived in, counted from the first frame.
fn batched(demo: &Gen) -> Vec<u8> {
    const BATCH: i64 = 50_000;
    let t0 = demo.frames.first().map_or(0, |f| f.ts_ns);
    let frames = wrapped(demo, |i, ts, frame| {
        let (cos, vlan) = tag(frame);
        let encap = erspan3(i, (cos, vlan), (ts / 100) as u64, 1, false);
        TunnelRepr { outer: outer(), encap }.wrap(frame)
    });
    let frames: Vec<_> =
        frames.into_iter().map(|(ts, d, len)| (t0 + (ts - t0 + BATCH - 1) / BATCH * BATCH, d, len)).collect();
    pcap_of(&frames)
}

/// How far apart the two clocks of `erspan3-stepping.pcap` are (ns): more than any
/// collector queue explains (100 ms), less than the old one-second step.
pub const STEPPING_OFFSET_NS: i64 = 350_000_000;
/// Frames stamped by one clock before the other takes over.
pub const STEPPING_RUN: usize = 20;

/// Frames stamped by the first clock alone before the two take turns: past the clock's
/// check (the demo's 60th frame is 68.9 ms in).
pub const STEPPING_FIRST: usize = 60;

/// ERSPAN III with 100 ns ticks and their upper bits, captured at the demo's own times, but
/// stamped, after the first [`STEPPING_FIRST`] frames, by two switch clocks (hardware IDs 1
/// and 2) [`STEPPING_OFFSET_NS`] apart, in turns of [`STEPPING_RUN`] frames: four steps by
/// frame 121, where the session falls back to the capture clock.
fn stepping(demo: &Gen) -> Vec<u8> {
    pcap(demo, |i, ts, frame| {
        let (cos, vlan) = tag(frame);
        let i_ = i as usize;
        let second = i_ >= STEPPING_FIRST && ((i_ - STEPPING_FIRST) / STEPPING_RUN) % 2 == 0;
        let ticks = ((ts + if second { STEPPING_OFFSET_NS } else { 0 }) / 100) as u64;
        let encap = erspan3(i, (cos, vlan), ticks, if second { 2 } else { 1 }, true);
        TunnelRepr { outer: outer(), encap }.wrap(frame)
    })
}

/// How far ahead of the capture clock the switch clock of `erspan3-wrong-clock.pcap` reads
/// at its first frame: 3 hours.
pub const WRONG_CLOCK_AHEAD_NS: i64 = 3 * 3_600_000_000_000;

/// ERSPAN III at the demo's own capture times, its header saying 100 ns ticks with their
/// upper bits, but stamped by a clock [`WRONG_CLOCK_AHEAD_NS`] ahead that ticks every 100 µs
/// (a switch whose granularity setting disagrees with its clock): timed by it, the demo's
/// 79.5 ms would shrink to 80 µs. Its check fails on its first frames, so the mirror reads
/// as the demo.
fn wrong_clock(demo: &Gen) -> Vec<u8> {
    let t0 = demo.frames.first().map_or(0, |f| f.ts_ns);
    pcap(demo, |i, ts, frame| {
        let (cos, vlan) = tag(frame);
        let ticks = ((t0 + WRONG_CLOCK_AHEAD_NS) / 100 + (ts - t0) / 100_000) as u64;
        let encap = erspan3(i, (cos, vlan), ticks, 1, true);
        TunnelRepr { outer: outer(), encap }.wrap(frame)
    })
}
