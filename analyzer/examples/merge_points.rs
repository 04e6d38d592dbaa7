//! Merge benchmark (bench/merge.sh): RC SENDs between pairs of hosts, each packet captured at
//! its sender's and its receiver's point (one in 10,000 missing at the receiver), fed to the
//! analyzer as merged captures are. Prints the time per frame; run it under
//! `/usr/bin/time -f %M` for the peak memory.
//!
//!   cargo run --release -p rocescope-analyzer --example merge_points -- POINTS PACKETS [WINDOW_MS]
//!
//! One point: the senders' copies only (no cross-point matching). A packet every 100 ns;
//! `WINDOW_MS` is `--match-window-ms` (default 500: every packet of 2 M waits till the end).

use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions};
use std::time::Instant;

/// Offset of the BTH's PSN in an untagged IPv4 frame (14 + 20 + 8 + 9).
const PSN_AT: usize = 51;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("POINTS PACKETS")).collect();
    let (points, packets, window_ms) = match args.as_slice() {
        [p, n] => (*p as usize, *n, 500),
        [p, n, w] => (*p as usize, *n, *w),
        _ => (2, 1_000_000, 500),
    };
    let pairs = (points / 2).max(1);
    let templates: Vec<Vec<u8>> = (0..pairs)
        .map(|j| {
            let ip = IpRepr::V4 {
                src: [10, 0, (j >> 8) as u8, j as u8].into(),
                dst: [10, 1, (j >> 8) as u8, j as u8].into(),
                dscp: 26,
                ecn: Ecn::Ect0,
                ttl: 64,
                id: 0,
            };
            let bth =
                BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x100 + j as u32, ..Default::default() };
            let ib = IbRepr { bth, ext: ExtRepr::default(), payload: vec![0; 64], icrc: IcrcMode::Correct };
            RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib)
                .build(OpcodeOptions { dc: false })
        })
        .collect();
    let names = (0..points).map(|i| format!("host{i}.pcap")).collect();
    let mut a = Analyzer::new(Config {
        points: names,
        match_window_ns: window_ms as i64 * 1_000_000,
        ..Config::default()
    });
    let opts = DecodeOptions { check_icrc: false, ..DecodeOptions::default() };
    let mut psn = vec![0u32; pairs];
    let (mut frames, mut number) = (0u64, 0u64);
    let mut buf = Vec::new();
    let start = Instant::now();
    for k in 0..packets {
        let j = (k % pairs as u64) as usize;
        let p = psn[j];
        psn[j] = (p + 1) & 0xFF_FFFF;
        buf.clear();
        buf.extend_from_slice(&templates[j]);
        buf[PSN_AT..PSN_AT + 3].copy_from_slice(&p.to_be_bytes()[1..]);
        let t = 1_767_225_600_000_000_000 + k as i64 * 100;
        let copies: &[(usize, i64)] = if points < 2 {
            &[(0, 0)]
        } else if k % 10_000 == 9_999 {
            &[(2 * j, 0)]
        } else {
            &[(2 * j, 0), (2 * j + 1, 50)]
        };
        for &(point, d) in copies {
            number += 1;
            let pkt = decode(LinkType::ETHERNET, &buf, &opts);
            let meta = FrameMeta {
                number,
                ts_ns: t + d,
                len: buf.len() as u32,
                link_bps: None,
                point: point as u16,
            };
            a.push(&meta, &pkt);
            frames += 1;
        }
    }
    a.finish();
    let fed = start.elapsed();
    let r = a.report();
    let total = start.elapsed();
    println!(
        "{points} points, {packets} packets, {frames} frames: {:.1} ns/frame ({:.3} s), report {:.3} s; {} losses between points, {} findings",
        fed.as_nanos() as f64 / frames as f64,
        fed.as_secs_f64(),
        (total - fed).as_secs_f64(),
        r.between.iter().map(|b| b.packets).sum::<u64>(),
        r.findings.len(),
    );
}
