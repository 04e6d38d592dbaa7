//! ECMP samples (`samples/ecmp/`; docs/verdicts.md "ECMP"), outside the demo:
//!
//! - `low-entropy.pcap`: one host pair whose 8 busy QPs all send from UDP port 49152 (an
//!   mlx5 NIC whose QPs have flow label 0), beside a control pair whose 8 QPs have the
//!   ports the kernel derives from their QP numbers: `ecmp_low_entropy` on the first only.
//! - `uplink1.pcap` .. `uplink4.pcap`: a leaf's four uplinks captured as four points while
//!   four elephants cross it; ECMP put two on uplink 1, one each on uplinks 2 and 3, and only
//!   a mouse on uplink 4: `ecmp_imbalance` with `--uplinks uplink1,uplink2,uplink3,uplink4`.
//!
//! Fabric captures keep headers only: every frame is cut to 128 bytes (a `truncated` info
//! finding), which keeps a megabyte elephant to 40 kB of sample.

use crate::fabric::{Conn, Gen, Host, Req};
use rocescope_decoder::build::ExtRepr;
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::Opcode;
use serde_json::{json, Value};

/// The snap length of the samples' captures.
const SNAP: usize = 128;

/// Each elephant's WRITE: 1 MiB, 256 packets of 4096 bytes (busy: 1 MiB of wire bytes or
/// more).
const ELEPHANT: usize = 1 << 20;

/// The UDP source port the kernel gives a QP pair whose flow label is not set: the flow
/// label from both QP numbers (`rdma_calc_flow_label`), folded into the 14 bits above 0xC000
/// (`rdma_flow_label_to_udp_sport`; Linux include/rdma/ib_verbs.h).
pub fn kernel_sport(lqpn: u32, rqpn: u32) -> u16 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    let fl = (v & 0xF_FFFF) as u32;
    let low = (fl & 0x3FFF) ^ ((fl & 0xF_C000) >> 14);
    (low | 0xC000) as u16
}

/// A connection with a 4096-byte path MTU and the given source port.
fn conn(a: Host, b: Host, a_qpn: u32, b_qpn: u32, sport: u16) -> Conn {
    let mut c = Conn::new(a, b, a_qpn, b_qpn, 1000 + a_qpn * 7);
    c.pmtu = 4096;
    c.sport = sport;
    c
}

/// One `len`-byte WRITE on each of `conns` at once, their packets interleaved as one link
/// carries them, then each one's ACK.
fn writes_together(g: &mut Gen, conns: &mut [Conn], len: usize) {
    let n = len.div_ceil(4096);
    let mut last = vec![0u32; conns.len()];
    for i in 0..n {
        for (c, l) in conns.iter_mut().zip(last.iter_mut()) {
            let (op, ext) = match i {
                0 => {
                    let reth = RethRepr { va: 0x7f60_0000_0000, rkey: 0x6161, dma_len: len as u32 };
                    (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() })
                }
                i if i + 1 == n => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
                _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
            };
            *l = g.request(c, op, ext, 4096, i + 1 == n, Req::New);
        }
    }
    g.wait_us(3);
    for (c, l) in conns.iter_mut().zip(last) {
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        g.ack(c, l);
    }
}

/// Eight busy QPs from 10.0.0.61 to .62 on port 49152, eight from .63 to .64 on ports of
/// their own.
fn low_entropy(g: &mut Gen) -> Value {
    g.snap = Some(SNAP);
    let (a, b) = (Host::v4(61), Host::v4(62));
    let mut fixed: Vec<Conn> = (0..8).map(|i| conn(a, b, 0x500 + i, 0x600 + i, 0xC000)).collect();
    writes_together(g, &mut fixed, ELEPHANT);
    let (c, d) = (Host::v4(63), Host::v4(64));
    let mut hashed: Vec<Conn> =
        (0..8).map(|i| conn(c, d, 0x700 + i, 0x800 + i, kernel_sport(0x700 + i, 0x800 + i))).collect();
    writes_together(g, &mut hashed, ELEPHANT);
    g.expect_finding("ecmp_low_entropy", "warning", None);
    g.expect_finding("truncated", "info", None);
    let ports: Vec<u16> = hashed.iter().map(|c| c.sport).collect();
    json!({
        "host_pairs": [
            {"src": "10.0.0.61", "dst": "10.0.0.62", "qps": 8, "busy_qps": 8, "ports": 1,
             "top_port": 49152, "top_port_busy_qps": 8, "entropy_bits": 0.0, "qp_entropy_bits": 3.0},
            {"src": "10.0.0.63", "dst": "10.0.0.64", "qps": 8, "busy_qps": 8, "ports": 8,
             "entropy_bits": 3.0, "qp_entropy_bits": 3.0, "sports": ports},
        ],
        "low_entropy_pair": {"src": "10.0.0.61", "dst": "10.0.0.62", "port": 49152, "qps": 8},
    })
}

/// One uplink's capture: `elephants` WRITEs of 1 MiB at once, and a 4 kB SEND (a mouse).
fn uplink(g: &mut Gen, elephants: &[HostPair], mouse: HostPair) {
    g.snap = Some(SNAP);
    let mut conns: Vec<Conn> = elephants
        .iter()
        .map(|&(s, d)| {
            let (qa, qb) = (0x900 + u32::from(s), 0xA00 + u32::from(d));
            conn(Host::v4(s), Host::v4(d), qa, qb, kernel_sport(qa, qb))
        })
        .collect();
    if !conns.is_empty() {
        writes_together(g, &mut conns, ELEPHANT);
    }
    let (qa, qb) = (0x900 + u32::from(mouse.0), 0xA00 + u32::from(mouse.1));
    let mut m = conn(Host::v4(mouse.0), Host::v4(mouse.1), qa, qb, kernel_sport(qa, qb));
    g.send(&mut m, 4096);
}

/// Traffic between two hosts (10.0.0.N numbers): a source and a destination.
type HostPair = (u8, u8);

/// The uplinks: (elephants, the mouse).
const UPLINKS: [(&[HostPair], HostPair); 4] =
    [(&[(11, 21), (12, 22)], (15, 25)), (&[(13, 23)], (16, 26)), (&[(14, 24)], (17, 27)), (&[], (18, 28))];

/// Every file of `samples/ecmp/`.
pub fn outputs() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut g = Gen::new();
    let analysis = low_entropy(&mut g);
    let description = "One host pair whose 8 busy QPs (1 MiB WRITEs) all send from UDP port 49152 (mlx5 with flow label 0), and a control pair whose 8 QPs have the ports the kernel derives from their QP numbers; frames cut to 128 bytes";
    files.extend(with_analysis("ecmp/low-entropy", description, &g, analysis));
    for (i, (elephants, mouse)) in UPLINKS.iter().enumerate() {
        let mut g = Gen::new();
        uplink(&mut g, elephants, *mouse);
        let description = format!(
            "Uplink {} of a leaf's four, captured at the same time as the others: {} elephant(s) of 1 MiB and one 4 kB SEND; frames cut to 128 bytes",
            i + 1,
            elephants.len()
        );
        let analysis = json!({
            "uplinks": "uplink1,uplink2,uplink3,uplink4",
            "elephants": elephants.iter().map(|(s, d)| format!("10.0.0.{s} → 10.0.0.{d}")).collect::<Vec<_>>(),
            "findings_together": if i == 0 {
                json!([{"kind": "ecmp_imbalance", "severity": "warning"}, {"kind": "truncated", "severity": "info"}])
            } else {
                Value::Null
            },
        });
        files.extend(with_analysis(&format!("ecmp/uplink{}", i + 1), &description, &g, analysis));
    }
    files
}

/// The capture and its answers, with `analysis` (what the report must find) added.
fn with_analysis(name: &str, description: &str, g: &Gen, analysis: Value) -> Vec<(String, Vec<u8>)> {
    let stem = name.rsplit('/').next().unwrap_or(name);
    let (pcap, json) = crate::render(stem, description, g);
    let mut doc: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
    if let Some(o) = doc.as_object_mut() {
        o.insert("analysis".into(), analysis);
    }
    let mut json = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    json.push(b'\n');
    vec![(format!("{name}.pcap"), pcap), (format!("{name}.expected.json"), json)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_ports_lie_above_0xc000_and_differ_per_qp() {
        let ports: Vec<u16> = (0..8).map(|i| kernel_sport(0x700 + i, 0x800 + i)).collect();
        assert!(ports.iter().all(|p| *p >= 0xC000));
        let mut d = ports.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 8, "{ports:?}");
        // A flow label of 0 is port 0xC000 itself.
        assert_eq!(kernel_sport(0, 5), 0xC000);
    }
}
