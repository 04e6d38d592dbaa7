//! Parallel analysis (`report --threads N`): shards of host pairs, merged (analyzer
//! `parallel`), and the two stages of `--threads 2` (analyzer `pipeline`) give exactly the
//! single-threaded report, over every bundled sample and every real capture, in the library
//! and through the command.

mod common;

use rocescope_analyzer::{parallel, Analyzer};
use std::path::Path;
use std::process::Command;

/// Whether `path` gives the single-threaded report in every parallel form; true when its
/// two-stage analysis handed the mirror-copy checks over.
fn check(path: &Path) -> bool {
    let one = serde_json::to_value(common::analyse(path, 0, 1).report()).unwrap();
    // In two stages, the mirror-copy checks made ahead (src/pipelined.rs).
    let (a, handed) = analyse_pipelined(path);
    let two = serde_json::to_value(a.report()).unwrap();
    assert!(one == two, "{} in two stages differs from one analyzer", path.display());
    for count in [2, 3, 8] {
        let shards: Vec<Analyzer> = (0..count).map(|i| common::analyse(path, i, count)).collect();
        let merged = parallel::merge(shards).unwrap();
        let many = serde_json::to_value(merged.report()).unwrap();
        assert!(one == many, "{} with {count} shards differs from one analyzer", path.display());
        // As `report --threads` feeds them: common frames through the fast path, and the
        // shards but the first passing over other shards' pairs undecoded.
        let shards: Vec<Analyzer> = (0..count).map(|i| analyse_fast(path, i, count)).collect();
        let merged = parallel::merge(shards).unwrap();
        let many = serde_json::to_value(merged.report()).unwrap();
        assert!(one == many, "{} with {count} fast-path shards differs from one analyzer", path.display());
        // Read once, each shard handed the frames the router gives it (the command's
        // divided reading, src/divided.rs).
        let merged = parallel::merge(analyse_divided(path, count)).unwrap();
        let many = serde_json::to_value(merged.report()).unwrap();
        assert!(one == many, "{} read once for {count} shards differs from one analyzer", path.display());
    }
    handed
}

/// `path` analysed as `report --threads 2` does: each common frame checked for a mirror's
/// copy ahead, until a frame that only the full decoder reads hands the checks over; and
/// whether that happened.
fn analyse_pipelined(path: &Path) -> (Analyzer, bool) {
    use rocescope_analyzer::pipeline::CopyChecks;
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(rocescope_analyzer::Config::default());
    let mut checks = Some(CopyChecks::new(a.config()));
    let mut r = rocescope_capture::CaptureReader::open(path).unwrap();
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap() {
        n = rec.number_after(n);
        let Some(ch) = checks.as_mut() else {
            a.push_shard_record(n, &rec, &opts);
            continue;
        };
        match rocescope_decoder::fast::classify(rec.link_type, rec.data, &opts) {
            Some(c) => {
                let copy = ch.check_common(rec.point, rec.ts_ns, &c);
                a.push_common_checked(n, &rec, &c, copy);
            }
            None => {
                let p = rocescope_decoder::decode(rec.link_type, rec.data, &opts);
                if checks.as_ref().is_some_and(|c| c.hands_over(&p)) {
                    if let Some(handed) = checks.take() {
                        a.resume_copy_checks(handed);
                    }
                }
                a.push_shard_record(n, &rec, &opts);
            }
        }
    }
    a.finish();
    (a, checks.is_none())
}

/// `count` shards of `path` fed as `report --threads` feeds them from one reading: the first
/// every frame, the others those the router hands them.
fn analyse_divided(path: &Path, count: u32) -> Vec<Analyzer> {
    use rocescope_analyzer::divide::{Route, Router};
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut shards: Vec<Analyzer> = (0..count)
        .map(|i| {
            let mut a = Analyzer::new(rocescope_analyzer::Config::default());
            assert!(a.set_shard(i, count));
            a
        })
        .collect();
    let mut router = Router::new(shards[0].config(), count, &opts);
    let mut r = rocescope_capture::CaptureReader::open(path).unwrap();
    let (mut n, mut seq, mut first_ts) = (0, 0, None);
    let mut handed = vec![0u64; count as usize];
    while let Some(rec) = r.next_record().unwrap() {
        n = rec.number_after(n);
        seq += 1;
        let first = *first_ts.get_or_insert(rec.ts_ns);
        let route = router.route(&rec, &opts);
        for (k, a) in shards.iter_mut().enumerate() {
            let take = k == 0 || route == Route::All || route == Route::Owner(k as u32);
            if take {
                handed[k] += 1;
                if k == 0 {
                    a.push_shard_record(n, &rec, &opts);
                } else {
                    a.push_divided(seq, first, n, &rec, &opts);
                }
            }
        }
    }
    // The first shard sees every frame; the others never more.
    assert_eq!(handed[0], seq);
    assert!(handed.iter().all(|&h| h <= seq));
    for a in &mut shards {
        a.finish();
    }
    shards
}

/// Shard `index` of `count` of `path`, fed as `report --threads` feeds it.
fn analyse_fast(path: &Path, index: u32, count: u32) -> Analyzer {
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(rocescope_analyzer::Config::default());
    assert!(a.set_shard(index, count));
    let mut r = rocescope_capture::CaptureReader::open(path).unwrap();
    let mut n = 0;
    while let Some(rec) = r.next_record().unwrap() {
        n = rec.number_after(n);
        a.push_shard_record(n, &rec, &opts);
    }
    a.finish();
    a
}

#[test]
fn every_sample_gives_the_single_threaded_report() {
    let files = common::pcaps_under(&common::root().join("samples"));
    assert!(files.len() > 40, "{}", files.len());
    let handed = files.iter().filter(|f| check(f)).count();
    // Some samples (mirror sessions, overlays, RoCEv1) hand the checks over part-way, most
    // never do: both ways are covered.
    assert!(handed > 0 && handed < files.len() / 2, "{handed} of {}", files.len());
}

#[test]
fn every_real_capture_gives_the_single_threaded_report() {
    let Some(dir) = common::real_captures() else { return };
    for f in &common::captures_in(&dir) {
        check(f);
    }
}

#[test]
fn both_directions_of_a_host_pair_share_a_shard() {
    use std::net::IpAddr;
    let a: IpAddr = "10.0.0.1".parse().unwrap();
    let b: IpAddr = "fe80::26".parse().unwrap();
    for n in 1..9 {
        assert_eq!(parallel::shard_of(a, b, n), parallel::shard_of(b, a, n));
        assert!(parallel::shard_of(a, b, n) < n);
    }
}

#[test]
fn the_first_shard_keeps_fewer_host_pairs_and_the_others_share_the_rest() {
    use std::net::{IpAddr, Ipv4Addr};
    // 20,000 host pairs: the first shard, which decodes every frame and runs the capture-wide
    // pass on it, keeps about a quarter of them with two shards and none with three or more
    // (parallel.rs first_fraction); the others equal parts.
    let pairs: Vec<(IpAddr, IpAddr)> = (0..20_000u32)
        .map(|i| {
            (IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)), IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i * 7)))
        })
        .collect();
    for (n, first) in [(2u32, 0.238), (3, 0.0), (4, 0.0), (8, 0.0)] {
        let mut count = vec![0usize; n as usize];
        for (a, b) in &pairs {
            count[parallel::shard_of(*a, *b, n) as usize] += 1;
        }
        let share = |c: usize| c as f64 / pairs.len() as f64;
        assert!((share(count[0]) - first).abs() < 0.02, "{n} shards: first keeps {count:?}");
        let rest = (1.0 - first) / f64::from(n - 1);
        for c in &count[1..] {
            assert!((share(*c) - rest).abs() < 0.02, "{n} shards: {count:?}");
        }
    }
}

fn report(args: &[&str]) -> (Vec<u8>, Option<i32>) {
    report_with(None, args)
}

/// `report` with `args`, and the variable `env` set (`ROCESCOPE_PIPELINE`, `ROCESCOPE_DIVIDED`).
fn report_with(env: Option<(&str, &str)>, args: &[&str]) -> (Vec<u8>, Option<i32>) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocescope"));
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let o = c.arg("report").args(args).output().unwrap();
    (o.stdout, o.status.code())
}

#[test]
fn the_command_gives_the_same_report_on_any_number_of_threads() {
    let mut files = common::pcaps_under(&common::root().join("samples"));
    if let Some(dir) = common::real_captures() {
        files.extend(common::captures_in(&dir));
    }
    for f in &files {
        let f = f.to_string_lossy();
        for extra in [&["--json"][..], &[], &["--json", "-c", "57"]] {
            let one = report(&[&["-r", &f, "--threads", "1"], extra].concat());
            for n in ["2", "3", "8"] {
                let many = report(&[&["-r", &f, "--threads", n], extra].concat());
                assert!(one == many, "{f} {extra:?}: --threads {n} differs from --threads 1");
            }
            // Two shards of host pairs rather than two stages (src/pipelined.rs).
            let two = report_with(
                Some(("ROCESCOPE_PIPELINE", "0")),
                &[&["-r", &f, "--threads", "2"], extra].concat(),
            );
            assert!(one == two, "{f} {extra:?}: two shards differ");
            // Read once and divided among the shards (src/divided.rs), whatever the cores.
            let three = report_with(
                Some(("ROCESCOPE_DIVIDED", "1")),
                &[&["-r", &f, "--threads", "3"], extra].concat(),
            );
            assert!(one == three, "{f} {extra:?}: read once for 3 threads differs");
        }
    }
}

/// Interrupted (SIGINT) part-way, a parallel report still covers one range of frames in
/// every shard: its flows hold exactly the RoCE packets its summary counts.
#[test]
fn an_interrupted_parallel_report_covers_the_same_frames_in_every_shard() {
    use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::RethRepr;
    use rocescope_decoder::{BthRepr, Ecn, Opcode, OpcodeOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.pcap");
    let mut frames = Vec::new();
    for q in 0..256u32 {
        let ip = IpRepr::V4 {
            src: [10, 0, 0, q as u8].into(),
            dst: [10, 1, 0, q as u8].into(),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            id: 0,
        };
        let bth = BthRepr { opcode: Opcode::RC_WRITE_ONLY, dest_qp: 0x100 + q, psn: 0, ..Default::default() };
        let ext = ExtRepr { reth: Some(RethRepr { va: 0x1000, rkey: 7, dma_len: 64 }), ..Default::default() };
        let ib = IbRepr { bth, ext, payload: vec![0xab; 64], icrc: IcrcMode::Correct };
        frames.push(
            RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(OpcodeOptions::default()),
        );
    }
    // 3 M frames: more than a debug build reads in the time before the signal.
    common::repeated_capture(&path, &frames, 3_000_000);
    // Three shards, and two stages (src/pipelined.rs).
    for threads in ["3", "2"] {
        let child = Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .args(["report", "--json", "--threads", threads, "-r"])
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = common::interrupt_after(child, 700);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report after SIGINT");
        let roce = v["summary"]["roce"].as_u64().unwrap();
        let in_flows: u64 =
            v["flows"].as_array().unwrap().iter().map(|f| f["packets"].as_u64().unwrap()).sum();
        assert!(roce > 0 && roce < 3_000_000, "{threads} threads, interrupted part-way: {roce}");
        assert_eq!(in_flows, roce, "{threads} threads: every thread stopped at the same frame");
        // The report says it is partial, how far it read, and the status is 130 as tcpdump's.
        assert_eq!(out.status.code(), Some(130));
        assert_eq!(v["interrupted"], true);
        let at = &v["interrupted_at"];
        assert_eq!(
            (at["signal"].as_str(), at["frames_read"].as_u64()),
            (Some("SIGINT"), v["summary"]["packets"].as_u64())
        );
        let (read, total) = (at["bytes_read"].as_u64().unwrap(), at["bytes_total"].as_u64().unwrap());
        assert!(read > 0 && read < total, "{threads} threads: {read} of {total}");
    }
    // The text report's first line says so (one thread).
    let child = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--threads", "1", "-r"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::interrupt_after(child, 700);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("INTERRUPTED by SIGINT after "), "{}", text.lines().next().unwrap_or(""));
    assert!(text.lines().next().is_some_and(|l| l.contains("% of the input)") && l.contains("partial")));
    assert_eq!(out.status.code(), Some(130));
}

/// Past 4,096 ACK latency samples a priority's pool keeps time blocks of histograms
/// (analyzer `latency_samples`): the shards' pools merge into what one analyzer keeps. A
/// capture of 40 host pairs, one QP each, 150 WRITEs and ACKs a QP (6,000 samples on
/// priority 3), the latency climbing with time; and 2 QPs on priority 0 (few samples, kept
/// exactly).
#[test]
fn latency_samples_past_the_exact_cap_merge_across_shards() {
    use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::{AethRepr, RethRepr};
    use rocescope_decoder::{BthRepr, Ecn, LinkType, Opcode, OpcodeOptions};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("acks.pcap");
    let file = std::fs::File::create(&path).unwrap();
    let mut w =
        rocescope_capture::PcapWriter::new(std::io::BufWriter::new(file), LinkType::ETHERNET, 256).unwrap();
    let frame = |src: u8, dst: u8, dscp: u8, opcode: Opcode, qp: u32, psn: u32, ext: ExtRepr| {
        let ip = IpRepr::V4 {
            src: [10, 1, 0, src].into(),
            dst: [10, 1, 0, dst].into(),
            dscp,
            ecn: Ecn::Ect0,
            ttl: 64,
            id: 0,
        };
        let bth = BthRepr {
            opcode,
            dest_qp: qp,
            psn,
            ack_req: opcode != Opcode::RC_ACKNOWLEDGE,
            ..Default::default()
        };
        let ib = IbRepr {
            bth,
            ext,
            payload: vec![0; if opcode == Opcode::RC_ACKNOWLEDGE { 0 } else { 64 }],
            icrc: IcrcMode::Correct,
        };
        RoceV2Frame::new([2, 0, 0, 0, 0, src], [2, 0, 0, 0, 0, dst], ip, ib)
            .build(OpcodeOptions { dc: false })
    };
    let mut ts: i64 = 1_700_000_000_000_000_000;
    for round in 0..150u32 {
        for pair in 0..42u8 {
            // Pairs 40 and 41 on DSCP 0 (priority 0), every 10th round.
            let (dscp, on) = if pair < 40 { (26, true) } else { (0, round % 10 == 0) };
            if !on {
                continue;
            }
            let (a, b) = (1 + 2 * pair, 2 + 2 * pair);
            let reth = RethRepr { va: 0x7f00_0000_0000, rkey: 1, dma_len: 64 };
            let ext = ExtRepr { reth: Some(reth), ..Default::default() };
            let data = frame(a, b, dscp, Opcode::RC_WRITE_ONLY, 0x100 + u32::from(pair), round, ext);
            w.write(ts, &data, data.len() as u32).unwrap();
            let lat = 2_000 + i64::from(round) * 100 + i64::from(pair) * 37;
            let ext = ExtRepr { aeth: Some(AethRepr::ack(round)), ..Default::default() };
            let ack = frame(b, a, dscp, Opcode::RC_ACKNOWLEDGE, 0x200 + u32::from(pair), round, ext);
            w.write(ts + lat, &ack, ack.len() as u32).unwrap();
            ts += lat + 1_000;
        }
    }
    w.finish().unwrap();
    let r = common::analyse(&path, 0, 1).report();
    let p3 = r.latency_samples.iter().find(|s| s.priority == 3).unwrap();
    assert_eq!(p3.count, 6_000);
    assert!(p3.exact.is_none() && p3.blocks.as_ref().is_some_and(|b| b.counts.len() > 100));
    let p0 = r.latency_samples.iter().find(|s| s.priority == 0).unwrap();
    assert_eq!(p0.exact.as_ref().map(Vec::len), Some(30));
    check(&path);
}

/// The router of the divided reading: a plain RoCEv2 frame goes to its host pair's shard (and
/// the first), anything else to every shard, and a full-size packet that could raise the path
/// MTU to every shard until the shards' MTU is known to be at least its own.
#[test]
fn the_router_hands_each_shard_its_own_frames_and_every_shard_the_rest() {
    use rocescope_analyzer::divide::{Route, Router};
    use rocescope_analyzer::parallel::shard_of;
    use rocescope_decoder::build::{IbRepr, RoceV2Frame};
    use rocescope_decoder::{BthRepr, DecodeOptions, LinkType, Opcode};
    use std::net::Ipv4Addr;
    let opts = DecodeOptions::default();
    let a = Analyzer::new(rocescope_analyzer::Config::default());
    let mut router = Router::new(a.config(), 4, &opts);
    let frame = |src: u8, dst: u8, opcode: Opcode, payload: usize| {
        let ip = common::ipv4(src, dst);
        let ib = IbRepr {
            bth: BthRepr { opcode, dest_qp: 7, ..Default::default() },
            payload: vec![0; payload],
            ..Default::default()
        };
        RoceV2Frame::new([2, 0, 0, 0, 0, src], [2, 0, 0, 0, 0, dst], ip, ib).build(opts.opcode)
    };
    fn record(data: &[u8]) -> rocescope_capture::Record<'_> {
        rocescope_capture::Record::whole(LinkType::ETHERNET, 0, data)
    }
    let mut route = |data: &[u8]| router.route(&record(data), &opts);
    let ip = |x: u8| std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
    // SEND Only: its pair's shard, both directions alike.
    for (s, d) in [(1, 2), (2, 1), (3, 9), (9, 3), (5, 6)] {
        assert_eq!(route(&frame(s, d, Opcode::RC_SEND_ONLY, 64)), Route::Owner(shard_of(ip(s), ip(d), 4)));
    }
    // A SEND First of 1,024 bytes may raise the path MTU: every shard, once.
    assert_eq!(route(&frame(1, 2, Opcode::RC_SEND_FIRST, 1024)), Route::All);
    assert_eq!(route(&frame(3, 9, Opcode::RC_SEND_MIDDLE, 1024)), Route::Owner(shard_of(ip(3), ip(9), 4)));
    // A larger one raises it again.
    assert_eq!(route(&frame(3, 9, Opcode::RC_SEND_MIDDLE, 4096)), Route::All);
    assert_eq!(route(&frame(1, 2, Opcode::RC_SEND_FIRST, 4096)), Route::Owner(shard_of(ip(1), ip(2), 4)));
    // Not RoCEv2 at all (a PFC frame, an ARP, a cut frame): every shard.
    let mut pfc = vec![0x01, 0x80, 0xC2, 0, 0, 0x01, 2, 0, 0, 0, 0, 9, 0x88, 0x08, 0x01, 0x01, 0, 0x08];
    pfc.resize(60, 0);
    assert_eq!(route(&pfc), Route::All);
    assert_eq!(route(&frame(1, 2, Opcode::RC_SEND_ONLY, 64)[..30]), Route::All);
    // One shard: everything is the first's.
    let mut one = Router::new(a.config(), 1, &opts);
    assert_eq!(one.route(&record(&frame(1, 2, Opcode::RC_SEND_ONLY, 64)), &opts), Route::Owner(0));
}
