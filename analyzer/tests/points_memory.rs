//! Matching across capture points holds memory for the packets of one window, not for the
//! points: heap measured with dhat as this test binary's allocator (issue 13).

use rocescope_analyzer::crosspoint::{Matcher, MAX_POINTS};
use rocescope_analyzer::{FlowKey, FrameMeta};
use std::net::{IpAddr, Ipv4Addr};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn heap() -> usize {
    dhat::HeapStats::get().curr_bytes
}

/// `packets` packets, one every 100 ns, over pairs of points (2j sends to 2j + 1, 100 ns
/// later), `points` in all, numbered from `from`.
fn feed(m: &mut Matcher, points: usize, from: u64, packets: u64) {
    let pairs = (points / 2).max(1) as u64;
    for k in from..from + packets {
        let j = k % pairs;
        let key = FlowKey {
            src: IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + j as u32)),
            dst: IpAddr::V4(Ipv4Addr::from(0x0a01_0000 + j as u32)),
            dest_qp: 0x100,
            point: 0,
        };
        let psn = (k / pairs) as u32;
        let t = k as i64 * 100;
        for (p, d) in [(2 * j as u16, 0), (2 * j as u16 + 1, 100)] {
            let meta = FrameMeta {
                number: 2 * k + u64::from(d > 0),
                ts_ns: t + d,
                len: 100,
                link_bps: None,
                point: p,
            };
            m.advance(p, t + d);
            m.seen(key.at(p), psn, 0x04, &meta);
        }
    }
}

#[test]
fn matching_memory_follows_the_window_not_the_points() {
    let _profiler = dhat::Profiler::builder().testing().build();

    // Every packet pending (a window longer than the input): the cost per pending packet
    // is the same with 2 points as with 1024.
    let n = 50_000u64;
    let mut per_packet = Vec::new();
    for points in [2, MAX_POINTS] {
        let base = heap();
        let mut m = Matcher::new(points, i64::MAX / 2);
        feed(&mut m, points, 0, n);
        assert_eq!(m.pending() as u64, n);
        per_packet.push((heap() - base) as f64 / n as f64);
        m.finish();
        assert_eq!(m.matched(), n);
        assert!(m.losses().is_empty() && m.untied_pairs().is_empty());
    }
    eprintln!(
        "bytes per pending packet: {:.1} with 2 points, {:.1} with {MAX_POINTS}",
        per_packet[0], per_packet[1]
    );
    // Entry, key and queue slot: 80 bytes, the hash table's spare room on top.
    assert!(per_packet[0] <= 200.0, "{per_packet:?}");
    // 1024 points add their spans and waiting runs, 512 paths and their pairs (measured
    // 170 kB), not a byte per packet and point: that would be 50 MB here.
    let extra = (per_packet[1] - per_packet[0]) * n as f64;
    assert!(extra <= 256.0 * 1024.0, "{per_packet:?}: {extra} bytes more");

    // A 1 ms window (10,000 packets): what is held stops growing with the input.
    let base = heap();
    let mut m = Matcher::new(MAX_POINTS, 1_000_000);
    let mut at = Vec::new();
    for step in 0..3u64 {
        feed(&mut m, MAX_POINTS, step * 200_000, 200_000);
        at.push(heap() - base);
    }
    eprintln!("1 ms window, {MAX_POINTS} points: {at:?} bytes after 200k, 400k, 600k packets");
    assert!(m.pending() <= 10_100, "{}", m.pending());
    assert!(at[2] <= at[0] + 4_096, "{at:?}");
    assert!(at[2] <= 4 << 20, "{at:?}");
}
