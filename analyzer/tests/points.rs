//! Captures merged from many points (issue 13): every point up to
//! `crosspoint::MAX_POINTS` is matched, and a loss is placed between the right two.

use rocescope_analyzer::crosspoint::MAX_POINTS;
use rocescope_analyzer::report::FindingKind;
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions};

/// One RC SEND of `psn` from `src` to `dst`, captured at `point` at `ts`.
fn push(a: &mut Analyzer, number: u64, point: u16, ts: i64, src: [u8; 4], dst: [u8; 4], psn: u32) {
    let ip = IpRepr::V4 { src: src.into(), dst: dst.into(), dscp: 26, ecn: Ecn::Ect0, ttl: 64, id: 0 };
    let bth = BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x42, psn, ..Default::default() };
    let ib = IbRepr { bth, ext: ExtRepr::default(), payload: vec![0; 16], icrc: IcrcMode::Correct };
    let data =
        RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(OpcodeOptions { dc: false });
    let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
    a.push(&FrameMeta { number, ts_ns: ts, len: data.len() as u32, link_bps: None, point }, &p);
}

/// `points` hosts in pairs (2j sends to 2j + 1), each pair's packets captured at both ends,
/// the receiver's clock `skew` ns ahead; plus a flow from host 199 to host 201 through a
/// switch mirrored at point 200. `drop(point, src, psn)` removes a copy.
fn rack(points: usize, drop: impl Fn(u16, [u8; 4], u32) -> bool) -> Analyzer {
    let names = (0..points).map(|i| format!("host{i}.pcap")).collect();
    let mut a = Analyzer::new(Config { points: names, ..Config::default() });
    let host = |i: usize| [10, 0, (i >> 8) as u8, i as u8];
    let (skew, mut n) = (3_000_000i64, 0u64);
    let t0 = 1_767_225_600_000_000_000i64;
    for psn in 0..20u32 {
        let t = t0 + i64::from(psn) * 1_000_000;
        // Each point's frames in its own time order; the merge is by time.
        let mut frames = Vec::new();
        for j in 0..points / 2 {
            let (s, r) = (2 * j, 2 * j + 1);
            frames.push((t + j as i64, s, host(s), host(r), psn));
            frames.push((t + j as i64 + 5_000 + skew, r, host(s), host(r), psn));
        }
        if points > 201 {
            for (p, d) in [(199usize, 0i64), (200, 2_000), (201, 4_000 + skew)] {
                frames.push((t + 500_000 + d, p, [10, 9, 9, 1], [10, 9, 9, 2], psn));
            }
        }
        frames.sort_by_key(|f| f.0);
        for (ts, p, src, dst, psn) in frames {
            if !drop(p as u16, src, psn) {
                n += 1;
                push(&mut a, n, p as u16, ts, src, dst, psn);
            }
        }
    }
    a.finish();
    a
}

#[test]
fn with_256_points_a_packet_lost_between_200_and_201_is_placed_there() {
    // PSN 7 of the flow through the switch never reaches host 201.
    let a = rack(256, |p, src, psn| p == 201 && src == [10, 9, 9, 1] && psn == 7);
    let r = a.report();
    assert_eq!(r.points.len(), 256);
    assert!(r.points.iter().all(|p| p.matched), "every point is matched");
    let between: Vec<_> = r.between.iter().map(|b| (b.src.as_str(), b.from, b.to, b.packets)).collect();
    // Host 201 also receives pair 100's flow (from host 200): that one is whole.
    assert_eq!(between, [("10.9.9.1", 200, 201, 1)], "{:?}", r.between);
    let f = r.findings.iter().find(|f| f.kind == FindingKind::LostBetweenPoints).expect("a finding");
    assert!(f.title.contains("1 packet seen at host200.pcap never seen at host201.pcap"), "{}", f.title);
    assert!(!r
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::PointsUnmatched && f.title.contains("only the first")));

    // The same loss between two hosts of the pairs: charged to the sender.
    let a = rack(256, |p, _, psn| p == 231 && psn == 3);
    let r = a.report();
    let between: Vec<_> = r.between.iter().map(|b| (b.from, b.to, b.packets)).collect();
    assert_eq!(between, [(230, 231, 1)]);
}

#[test]
fn points_past_the_limit_are_named_and_the_rest_matched() {
    let points = MAX_POINTS + 4;
    let a = rack(points, |p, src, psn| {
        psn == 5 && (p == 201 && src[0] == 10 && src[1] == 9 || p == MAX_POINTS as u16 + 1)
    });
    let r = a.report();
    assert!(r.points[..MAX_POINTS].iter().all(|p| p.matched));
    assert!(r.points[MAX_POINTS..].iter().all(|p| !p.matched));
    // The loss at point 201 is found; the one past the limit is not looked for.
    let between: Vec<_> = r.between.iter().map(|b| (b.from, b.to)).collect();
    assert_eq!(between, [(200, 201)]);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::PointsUnmatched)
        .expect("the points past the limit are named");
    assert!(
        f.title.contains(&format!("{points} capture points: only the first {MAX_POINTS}")),
        "{}",
        f.title
    );
}
