//! The training iteration's rhythm (issue 29): a synchronised job whose every iteration
//! ends in a burst from every host at once, with one host that finishes last each time.

use crate::fabric::{Conn, Gen, Host, Req};
use rocescope_decoder::build::ExtRepr;
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::Opcode;

/// Hosts in the ring (each sends to the next).
const HOSTS: u8 = 6;
/// Iterations, one every [`PERIOD_NS`].
const ITERATIONS: i64 = 8;
/// The iteration time: 10 ms.
const PERIOD_NS: i64 = 10_000_000;
/// Packets a host sends per iteration (256-byte WRITE payloads: about 20 kB).
const PACKETS: i64 = 60;
/// Spacing of a host's packets: 30 µs (a 1.8 ms burst); the slow host's 80 µs (4.8 ms).
const SPACING_NS: i64 = 30_000;
const SLOW_SPACING_NS: i64 = 80_000;
/// The slow host (10.0.0.66): the last of the ring.
const SLOW: u8 = HOSTS - 1;

/// Six hosts in a ring AllReduce, an iteration every 10 ms with a little jitter: in each,
/// every host WRITEs 60 packets to the next and gets an ACK. Host 10.0.0.66 sends at less
/// than half the others' rate, so its data ends 3 ms after theirs in every iteration.
pub fn rhythm_straggler(g: &mut Gen) {
    let mut conns: Vec<Conn> = (0..HOSTS)
        .map(|i| {
            let next = (i + 1) % HOSTS;
            Conn::new(Host::v4(61 + i), Host::v4(61 + next), 0x500 + u32::from(i), 0x600 + u32::from(i), 1000)
        })
        .collect();
    // Every packet's time: (time, host, packet index; PACKETS is the ACK).
    let t0 = g.t;
    let mut events: Vec<(i64, u8, i64)> = Vec::new();
    for k in 0..ITERATIONS {
        let jitter = (k * 37 % 11 - 5) * 1000;
        for i in 0..HOSTS {
            let start = t0 + k * PERIOD_NS + jitter + i64::from(i) * 3_000;
            let spacing = if i == SLOW { SLOW_SPACING_NS } else { SPACING_NS };
            events.extend((0..PACKETS).map(|j| (start + j * spacing, i, j)));
            events.push((start + (PACKETS - 1) * spacing + 6_000, i, PACKETS));
        }
    }
    events.sort_unstable();
    let reth = RethRepr { va: 0x7f60_0000_0000, rkey: 0x99, dma_len: (PACKETS * 256) as u32 };
    for (t, i, j) in events {
        g.t = g.t.max(t);
        let Some(c) = conns.get_mut(usize::from(i)) else { continue };
        if j == PACKETS {
            let last = (c.psn + 0xFF_FFFF) & 0xFF_FFFF;
            c.msn += 1;
            g.ack(c, last);
            continue;
        }
        let (op, ext, ackreq) = match j {
            0 => (Opcode::RC_WRITE_FIRST, ExtRepr { reth: Some(reth), ..Default::default() }, false),
            j if j == PACKETS - 1 => (Opcode::RC_WRITE_LAST, ExtRepr::default(), true),
            _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default(), false),
        };
        g.request(c, op, ext, 256, ackreq, Req::New);
    }
    if let Some(slow) = conns.get(usize::from(SLOW)) {
        g.expect_finding("straggler", "warning", Some(slow.b_qpn));
    }
}
