//! `samples/tunnels/demo-<encap>.pcap`: every frame of `samples/demo.pcap` as a switch
//! mirror or an overlay would deliver it (issue 12): ERSPAN I/II/III, gretap, L3 GRE,
//! VXLAN, Geneve, MPLS (Ethernet pseudowire with and without control word, and IP).
//! `tests/tunnels.rs` checks that each gives the demo's flows, findings and audit.
//!
//! The L3 encapsulations (L3 GRE, MPLS with IP) cannot carry frames without IP (PFC, PAUSE,
//! RoCEv1): those stay unwrapped, as a capture at the tunnel endpoint's interface would see
//! them beside the tunnel. `unknown-gre.pcap` wraps the demo's frames in GRE with a protocol
//! rocescope does not unwrap (0x880b, PPP), for the "tunnel not decoded" note.

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

fn outer() -> Outer {
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
        "erspan3" => Encapsulation::ErspanIII {
            seq: i,
            vlan,
            cos,
            bso: 0,
            truncated: false,
            session_id: SESSION,
            timestamp: ticks as u32,
            sgt: 0,
            p: false,
            hw_id: 1,
            direction: false,
            granularity: 1,
            platform: Some((3, ticks >> 32)),
        },
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
fn pcap(demo: &Gen, mut wrap: impl FnMut(u32, i64, &[u8]) -> Option<Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    if write(demo, &mut wrap, &mut out).is_none() {
        return Vec::new();
    }
    out
}

fn write(
    demo: &Gen,
    wrap: &mut impl FnMut(u32, i64, &[u8]) -> Option<Vec<u8>>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut w = PcapWriter::new(out, LinkType::ETHERNET, 65535).ok()?;
    for (i, f) in demo.frames.iter().enumerate() {
        let keep = f.snap.min(f.data.len());
        let cut = f.data.len() - keep;
        let wrapped = wrap(i as u32, f.ts_ns, &f.data).unwrap_or_else(|| f.data.clone());
        // The mirror carries the whole frame; the capture's snap length cuts the same
        // number of bytes from its end as it cut from the demo's frame.
        let len = (i64::from(f.len) + wrapped.len() as i64 - f.data.len() as i64).max(0) as u32;
        let data = wrapped.get(..wrapped.len().saturating_sub(cut)).unwrap_or(&wrapped);
        w.write(f.ts_ns, data, len).ok()?;
    }
    Some(())
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
    files
}
