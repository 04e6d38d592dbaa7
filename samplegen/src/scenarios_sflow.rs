//! sFlow and sampled captures of the demo (`samples/sflow/`).
//!
//! - `demo-sflow.pcap`: sFlow v5 datagrams (UDP to port 6343) carrying the first 128 bytes of
//!   demo frames, as two switch agents would sample them: agent 10.255.0.1 (ifIndex 3, flow
//!   samples of format 1, 1 in 4: frames 1, 5, 9, ... of the demo) over IPv4, and agent
//!   2001:db8::2 (ifIndex 7, expanded flow samples of format 3, 1 in 8: frames 4, 12, 20,
//!   ...) over IPv6. Each datagram holds up to four flow samples; agent 10.255.0.1's also
//!   carry a counter sample and every flow sample an extended switch record, which a
//!   collector skips.
//! - `demo-sampled.pcap`: every fourth demo frame (1, 5, 9, ...) as a plain capture, for
//!   `--sample-rate 4`.
//! - `bad-sflow.pcap`: one good datagram among damaged ones (cut off, version 4, a sample
//!   longer than its datagram): read what can be read, say what cannot, never crash.

use crate::fabric::{Frame, Gen};
use rocescope_capture::PcapWriter;
use rocescope_decoder::LinkType;

/// Bytes of each sampled frame an agent sends (SONiC's and most switches' default).
pub const HEADER_BYTES: usize = 128;

/// One agent: address, ifIndex, rate, which demo frames (0-based index) it samples, and
/// whether it sends expanded samples.
struct Agent {
    addr: [u8; 16],
    v6: bool,
    if_index: u32,
    rate: u32,
    picks: fn(usize) -> bool,
    expanded: bool,
}

const AGENTS: [Agent; 2] = [
    Agent {
        addr: [10, 255, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        v6: false,
        if_index: 3,
        rate: 4,
        picks: |i| i % 4 == 0,
        expanded: false,
    },
    Agent {
        addr: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        v6: true,
        if_index: 7,
        rate: 8,
        picks: |i| i % 8 == 3,
        expanded: true,
    },
];

fn w(out: &mut Vec<u8>, words: &[u32]) {
    for x in words {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

/// An XDR item: format, length, body.
fn item(out: &mut Vec<u8>, format: u32, body: &[u8]) {
    w(out, &[format, body.len() as u32]);
    out.extend_from_slice(body);
}

/// One flow sample of `f` (the `seq`th of its agent; `pool` packets seen so far).
fn flow_sample(a: &Agent, f: &Frame, seq: u32, pool: u32) -> Vec<u8> {
    let keep = f.snap.min(f.data.len()).min(HEADER_BYTES);
    let hdr = f.data.get(..keep).unwrap_or(&[]);
    let mut raw = Vec::new();
    // Ethernet; the wire length with its FCS, which the agent stripped.
    w(&mut raw, &[1, f.len + 4, 4, hdr.len() as u32]);
    raw.extend_from_slice(hdr);
    while raw.len() % 4 != 0 {
        raw.push(0);
    }
    let mut body = Vec::new();
    if a.expanded {
        w(&mut body, &[seq, 0, a.if_index, a.rate, pool, 0, 0, a.if_index, 0, 0x3FFF_FFFF]);
    } else {
        w(&mut body, &[seq, a.if_index, a.rate, pool, 0, a.if_index, 0x3FFF_FFFF]);
    }
    w(&mut body, &[2]); // two records
    let mut switch = Vec::new();
    w(&mut switch, &[100, 3, 100, 3]); // extended switch: VLANs and priorities
    item(&mut body, 1001, &switch);
    item(&mut body, 1, &raw);
    body
}

/// A datagram of agent `a` with these flow samples (and a counter sample for IPv4 agents).
fn datagram(a: &Agent, seq: u32, uptime_ms: u32, samples: &[Vec<u8>]) -> Vec<u8> {
    let mut d = Vec::new();
    if a.v6 {
        w(&mut d, &[5, 2]);
        d.extend_from_slice(&a.addr);
    } else {
        w(&mut d, &[5, 1]);
        d.extend_from_slice(a.addr.get(..4).unwrap_or(&[0; 4]));
    }
    let counters = usize::from(!a.v6);
    w(&mut d, &[0, seq, uptime_ms, (samples.len() + counters) as u32]);
    for s in samples {
        item(&mut d, if a.expanded { 3 } else { 1 }, s);
    }
    if counters == 1 {
        // A generic interface counter sample, skipped by its length.
        let mut c = Vec::new();
        w(&mut c, &[seq, a.if_index, 1, 1, 8, 100_000_000, 0, 0]);
        item(&mut d, 2, &c);
    }
    d
}

/// An Ethernet/IP/UDP frame from `a` to the collector 192.0.2.10 / 2001:db8::10, port 6343.
fn udp_frame(a: &Agent, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0, 0x20];
    let udp_len = (payload.len() + 8) as u16;
    let mut udp = Vec::new();
    udp.extend_from_slice(&50_000u16.to_be_bytes());
    udp.extend_from_slice(&6343u16.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(payload);
    if a.v6 {
        f.extend_from_slice(&[0x86, 0xDD, 0x60, 0, 0, 0]);
        f.extend_from_slice(&udp_len.to_be_bytes());
        f.extend_from_slice(&[17, 64]);
        f.extend_from_slice(&a.addr);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10]);
    } else {
        f.extend_from_slice(&[0x08, 0x00]);
        let total = (20 + udp.len()) as u16;
        let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0];
        h[2..4].copy_from_slice(&total.to_be_bytes());
        h.extend_from_slice(a.addr.get(..4).unwrap_or(&[0; 4]));
        h.extend_from_slice(&[192, 0, 2, 10]);
        let mut sum: u32 = h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        f.extend_from_slice(&h);
    }
    f.extend_from_slice(&udp);
    f
}

fn pcap(frames: &[(i64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Ok(mut wr) = PcapWriter::new(&mut out, LinkType::ETHERNET, 65535) {
        for (ts, data, len) in frames {
            if let Err(e) = wr.write(*ts, data, *len) {
                crate::unreachable_io(e);
            }
        }
    }
    out
}

/// The sFlow samples of the demo capture `demo`.
pub fn outputs(demo: &Gen) -> Vec<(String, Vec<u8>)> {
    // (time, frame) of every datagram, in time order.
    let mut datagrams: Vec<(i64, Vec<u8>)> = Vec::new();
    for a in &AGENTS {
        let (mut seq, mut dseq) = (0u32, 0u32);
        let mut pending: Vec<Vec<u8>> = Vec::new();
        let mut last_ts = 0;
        let t0 = demo.frames.first().map_or(0, |f| f.ts_ns);
        let n = demo.frames.len();
        for (i, f) in demo.frames.iter().enumerate() {
            if !(a.picks)(i) {
                continue;
            }
            seq += 1;
            pending.push(flow_sample(a, f, seq, (i + 1) as u32));
            last_ts = f.ts_ns;
            // Four samples a datagram, and whatever is left at the end.
            let more = (i + 1..n).any(|j| (a.picks)(j));
            if pending.len() == 4 || !more {
                dseq += 1;
                let uptime = ((last_ts - t0) / 1_000_000) as u32 + 1000;
                let d = datagram(a, dseq, uptime, &pending);
                // The agent sends a datagram a microsecond after its last sample.
                datagrams.push((last_ts + 1000, udp_frame(a, &d)));
                pending.clear();
            }
        }
        let _ = last_ts;
    }
    datagrams.sort_by_key(|(ts, _)| *ts);
    let sflow: Vec<(i64, Vec<u8>, u32)> =
        datagrams.into_iter().map(|(ts, f)| (ts, f.clone(), f.len() as u32)).collect();

    let sampled: Vec<(i64, Vec<u8>, u32)> = demo
        .frames
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 4 == 0)
        .map(|(_, f)| (f.ts_ns, f.data.get(..f.snap.min(f.data.len())).unwrap_or(&f.data).to_vec(), f.len))
        .collect();

    // Damaged datagrams around one good one.
    let a = &AGENTS[0];
    let good =
        demo.frames.first().map(|f| datagram(a, 1, 1000, &[flow_sample(a, f, 1, 1)])).unwrap_or_default();
    let mut v4 = good.clone();
    v4[..4].copy_from_slice(&4u32.to_be_bytes());
    let mut long = good.clone();
    // The first sample's length (after version, type, address, sub-agent, seq, uptime, count, format).
    long[32..36].copy_from_slice(&0x0001_0000u32.to_be_bytes());
    let cut = good.get(..good.len() / 2).unwrap_or(&[]).to_vec();
    let t = demo.frames.first().map_or(0, |f| f.ts_ns);
    let bad: Vec<(i64, Vec<u8>, u32)> = [cut, v4, good, long]
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let f = udp_frame(a, d);
            let len = f.len() as u32;
            (t + k as i64 * 1000, f, len)
        })
        .collect();

    vec![
        ("sflow/demo-sflow.pcap".into(), pcap(&sflow)),
        ("sflow/demo-sampled.pcap".into(), pcap(&sampled)),
        ("sflow/bad-sflow.pcap".into(), pcap(&bad)),
    ]
}
