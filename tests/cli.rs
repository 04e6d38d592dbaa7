//! `rocescope decode` end to end: the binary on the samples, standard input, gzip, pcapng
//! with several interfaces and link types, and damaged or wrong inputs.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run rocescope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    common::decode_lines(&o.stdout)
}

fn expected_frames(name: &str) -> usize {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sample(&format!("{name}.expected.json"))).unwrap()).unwrap();
    v["counts"]["frames"].as_u64().unwrap() as usize
}

#[test]
fn summary_has_one_line_per_frame_with_the_flags() {
    let o = run(&["decode", "-r", sample("demo.pcap").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), expected_frames("demo"));
    for needle in [
        "NAK: PSN Sequence Error",
        "RNR-NAK timer=1.28ms",
        " CNP QP=0x000071 PSN=0 BECN",
        "[ECN-CE]",
        "PFC 60 enable=0x08 p3=65535",
        "p3=XON",
        "PAUSE 60 quanta=500",
        "[ICRC bad]",
        "[truncated]",
        "[malformed: BTH at offset 42",
        "RoCEv1",
        "XRC RDMA Write Only with Immediate",
        "[unknown opcode]",
    ] {
        assert!(out.contains(needle), "summary lacks {needle:?}");
    }
}

#[test]
fn json_has_the_documented_names_and_integer_numbers() {
    let o = run(&["decode", "--json", "-r", sample("demo.pcap").to_str().unwrap()]);
    assert!(o.status.success());
    let v = json_lines(&o);
    assert_eq!(v.len(), expected_frames("demo"));
    for (i, f) in v.iter().enumerate() {
        assert_eq!(f["frame"].as_u64(), Some(i as u64 + 1));
        for k in ["ts_ns", "caplen", "len"] {
            assert!(f[k].is_i64() || f[k].is_u64(), "frame {}: {k} is not an integer", i + 1);
        }
    }
    let find = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        v.iter().find(|f| pred(f)).cloned().expect("no such frame")
    };
    let cnp = find(&|f| f["bth"]["opcode"] == 0x81);
    assert_eq!(cnp["cnp"], serde_json::json!({}));
    assert_eq!(cnp["bth"]["becn"], true);
    assert_eq!(cnp["bth"]["opcode_name"], "CNP");
    assert_eq!(cnp["ip"]["dscp"], 48);
    assert_eq!(cnp["icrc"]["status"], "valid");
    let bth = cnp["bth"].as_object().unwrap();
    for k in
        ["opcode", "opcode_name", "se", "m", "pad", "tver", "pkey", "fecn", "becn", "dqpn", "ackreq", "psn"]
    {
        assert!(bth.contains_key(k), "bth.{k}");
    }
    let nak = find(&|f| f["aeth"]["kind"] == "nak");
    assert_eq!(nak["aeth"]["syndrome"], 0x60);
    assert_eq!(nak["aeth"]["value"], 0);
    let rnr = find(&|f| f["aeth"]["kind"] == "rnr_nak");
    assert_eq!(rnr["aeth"]["value"], 14);
    let pfc = find(&|f| f.get("pfc").is_some());
    assert_eq!(pfc["pfc"]["quanta"].as_array().unwrap().len(), 8);
    assert_eq!(pfc["eth"]["ethertype"], 0x8808);
    assert!(find(&|f| f.get("pause").is_some())["pause"]["quanta"].is_u64());
    let ce = find(&|f| f["ip"]["ecn"] == 3);
    assert!(ce.get("bth").is_some());
    let v6 = find(&|f| f["ip"]["version"] == 6);
    assert!(v6["ip"]["ttl"].is_u64() && v6["ip"]["len"].is_u64());
    let trunc = find(&|f| f["icrc"]["status"] == "truncated");
    assert!(trunc["icrc"]["value"].is_null());
    assert!(trunc["caplen"].as_u64() < trunc["len"].as_u64());
    let bad = find(&|f| f.get("error").is_some());
    assert!(bad["error"].as_str().unwrap().contains("offset"));
    let qinq = find(&|f| f["vlan"].as_array().is_some_and(|a| a.len() == 2));
    assert_eq!(qinq["vlan"][1], serde_json::json!({"id": 100, "pcp": 3, "dei": true, "tpid": 0x8100}));
    let v1 = find(&|f| f.get("grh").is_some());
    assert_eq!(v1["grh"]["nxthdr"], 0x1b);
    let x = find(&|f| f.get("xrceth").is_some());
    assert_eq!(x["xrceth"]["srqn"], 0x0A0B0C);
    let fl = find(&|f| f.get("feth").is_some());
    assert_eq!(fl["feth"], serde_json::json!({"sel": 1, "plt": 1}));
    assert!(find(&|f| f.get("ieth").is_some())["ieth"].is_u64());
    assert!(find(&|f| f.get("immdt").is_some())["immdt"].is_u64());
    let at = find(&|f| f.get("atomiceth").is_some());
    for k in ["va", "rkey", "swap", "compare"] {
        assert!(at["atomiceth"][k].is_u64());
    }
    assert_eq!(find(&|f| f.get("atomicacketh").is_some())["atomicacketh"]["orig"], 0);
    let ud = find(&|f| f.get("deth").is_some());
    assert_eq!(ud["deth"]["qkey"], 0x8001_0000u64);
    let reth = find(&|f| f.get("reth").is_some());
    for k in ["va", "rkey", "dmalen"] {
        assert!(reth["reth"][k].is_u64());
    }
}

#[test]
fn verbose_prints_every_header() {
    let o = run(&["decode", "-V", "-r", sample("all-headers.pcap").to_str().unwrap()]);
    assert!(o.status.success());
    let out = stdout(&o);
    for needle in [
        "Frame 1: ",
        "Ethernet II, Src: 02:00:00:00:00:19",
        "Internet Protocol Version 4",
        "    DSCP: 26",
        "    ECN: ECT(0) (2)",
        "User Datagram Protocol, Src Port: 49408, Dst Port: 4791",
        "Base Transport Header",
        "        FECN: 0",
        "        BECN: 0",
        "XRCETH\n        XRC SRQ: 0x0a0b0c",
        "ImmDt\n        Immediate data: 0xdeadbeef",
        "IETH\n        R_Key: 0x00005555",
        "FETH\n        Selectivity level: 1",
        "802.1Q Virtual LAN (TPID 0x88a8), PRI: 0, DEI: 0, ID: 200",
        "Global Route Header",
        "        Source GID: fe80::25",
        "ICRC: 0x",
        "[valid, computed 0x",
        "[opaque: unknown opcode]",
    ] {
        assert!(out.contains(needle), "-V output lacks {needle:?}");
    }
}

#[test]
fn count_stdin_and_gzip() {
    let path = sample("rc-normal.pcap");
    let o = run(&["decode", "-c", "3", "-r", path.to_str().unwrap()]);
    assert_eq!(stdout(&o).lines().count(), 3);

    let bytes = std::fs::read(&path).unwrap();
    let mut child = bin()
        .args(["decode", "--json", "-r", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&bytes));
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(o.status.success());
    assert_eq!(json_lines(&o).len(), expected_frames("rc-normal"));

    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("rc-normal.pcap.gz");
    let mut enc =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    enc.write_all(&std::fs::read(&path).unwrap()).unwrap();
    enc.finish().unwrap();
    let o = run(&["decode", "-r", gz.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).lines().count(), expected_frames("rc-normal"));
}

#[test]
fn closed_pipe_is_not_an_error() {
    let mut child = bin()
        .args(["decode", "-V", "-r", sample("demo.pcap").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn damaged_and_wrong_inputs_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(sample("rc-normal.pcap")).unwrap();

    // Cut in the middle of a record: the frames before it, then an error.
    let cut = write(dir.path(), "cut.pcap", &good[..good.len() - 30]);
    let o = run(&["decode", "-r", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).lines().count(), expected_frames("rc-normal") - 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.pcap: capture is cut off") && err.contains("(after 25 records)"), "{err}");

    // A record claiming an absurd length.
    let rec2 = 24 + 16 + u32::from_le_bytes(good[24 + 8..24 + 12].try_into().unwrap()) as usize;
    let mut bad = good[..rec2].to_vec();
    bad.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f]);
    bad.extend_from_slice(&[0u8; 64]);
    let p = write(dir.path(), "huge.pcap", &bad);
    let o = run(&["decode", "-r", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).lines().count(), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("corrupt at byte") && err.contains("claims 2147483647 captured bytes"), "{err}");

    let p = write(dir.path(), "notes.txt", b"hello, this is not a capture\n");
    let o = run(&["decode", "-r", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("is not a pcap or pcapng capture (starts with 68 65 6c 6c)"));

    let p = write(dir.path(), "empty.pcap", b"");
    let o = run(&["decode", "-r", p.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is empty"));

    let o = run(&["decode", "-r", "/nonexistent/x.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read /nonexistent/x.pcap: No such file"));

    let o = run(&["decode"]);
    assert_eq!(o.status.code(), Some(2), "usage errors exit 2");
}

/// pcapng block builders (little-endian).
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    while body.len() % 4 != 0 {
        body.push(0);
    }
    let len = (12 + body.len()) as u32;
    let mut b = kind.to_le_bytes().to_vec();
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(&body);
    b.extend_from_slice(&len.to_le_bytes());
    b
}

fn idb(linktype: u16, tsresol: Option<u8>) -> Vec<u8> {
    let mut body = linktype.to_le_bytes().to_vec();
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&65535u32.to_le_bytes());
    if let Some(r) = tsresol {
        body.extend_from_slice(&[9, 0, 1, 0, r, 0, 0, 0]);
    }
    body.extend_from_slice(&[0, 0, 0, 0]);
    block(1, &body)
}

fn epb(if_id: u32, ts: u64, data: &[u8]) -> Vec<u8> {
    let mut body = if_id.to_le_bytes().to_vec();
    body.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
    body.extend_from_slice(&(ts as u32).to_le_bytes());
    body.extend_from_slice(&(data.len() as u32).to_le_bytes());
    body.extend_from_slice(&(data.len() as u32).to_le_bytes());
    body.extend_from_slice(data);
    block(6, &body)
}

#[test]
fn pcapng_with_interfaces_of_different_link_types_and_resolutions() {
    // The CNP from the reference's ICRC vector V1, on Ethernet...
    let eth = hex(concat!(
        "e41d2dab2bc27cfe90643b320800",
        "45c2003c718c4000401191610a0011010a001201",
        "000012b700280000",
        "8100ffff4000011800000000",
        "00000000000000000000000000000000",
        "82fd002a"
    ));
    // ...as Linux cooked v2 (SLL2: protocol, reserved, ifindex, hatype, pkttype, halen, addr)...
    let mut sll2 = hex("0800000000000003000100067cfe90643b320000");
    sll2.extend_from_slice(&eth[14..]);
    // ...SLL v1 (pkttype, hatype, halen, addr[8], protocol)...
    let mut sll = hex("000000010006e41d2dab2bc200000800");
    sll.extend_from_slice(&eth[14..]);
    // ...and raw IPv4.
    let raw = eth[14..].to_vec();
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut file = block(0x0A0D_0D0A, &shb);
    file.extend(idb(1, Some(9))); // ns
    file.extend(idb(276, None)); // µs (default)
    file.extend(idb(113, Some(3))); // ms
    file.extend(idb(101, Some(9)));
    file.extend(epb(0, 1_700_000_000_123_456_789, &eth));
    file.extend(epb(1, 1_700_000_000_123_457, &sll2));
    file.extend(epb(2, 1_700_000_000_124, &sll));
    file.extend(epb(3, 1_700_000_000_125_000_000, &raw));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "multi.pcapng", &file);
    let o = run(&["decode", "--json", "-r", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_lines(&o);
    assert_eq!(v.len(), 4);
    let ts: Vec<i64> = v.iter().map(|f| f["ts_ns"].as_i64().unwrap()).collect();
    assert_eq!(
        ts,
        [
            1_700_000_000_123_456_789,
            1_700_000_000_123_457_000,
            1_700_000_000_124_000_000,
            1_700_000_000_125_000_000
        ]
    );
    for f in &v {
        assert_eq!(f["bth"]["opcode"], 0x81, "{f}");
        assert_eq!(f["icrc"]["status"], "valid", "{f}");
        assert_eq!(f["ip"]["dscp"], 48);
    }
    assert_eq!(v[1]["sll"]["version"], 2);
    assert_eq!(v[2]["sll"]["version"], 1);
    assert!(v[3].get("eth").is_none() && v[3].get("sll").is_none());

    // Re-written by `capture`: each interface gets its own block (the list is empty when the
    // file is opened), so the copy decodes the same frame for frame.
    let out = dir.path().join("copy.pcapng");
    let o = run(&["capture", "-q", "-r", p.to_str().unwrap(), "-w", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["decode", "--json", "-r", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_lines(&o), v, "the copy decodes as the original");
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn roce_port_is_configurable() {
    // With --roce-port 4792, nothing in the sample is RoCE any more.
    let o = run(&["decode", "--json", "--roce-port", "4792", "-r", sample("rnr.pcap").to_str().unwrap()]);
    assert!(json_lines(&o).iter().all(|f| f.get("bth").is_none()));
}

#[test]
fn pcapng_timestamps_far_apart_do_not_overflow() {
    // Two interfaces: one with if_tsoffset = -9e9 s (a timestamp near i64::MIN once added),
    // one ordinary. Differences between their record times would overflow an i64; the reader
    // clamps to 0..=MAX_TS_NS and every command carries on.
    let eth = hex(concat!(
        "e41d2dab2bc27cfe90643b320800",
        "45c2003c718c4000401191610a0011010a001201",
        "000012b700280000",
        "8100ffff4000011800000000",
        "00000000000000000000000000000000",
        "82fd002a"
    ));
    // if_tsoffset (option 14): -9,000,000,000 s.
    let mut file = section_with_interface(14, (-9_000_000_000i64).to_le_bytes());
    file.extend(idb(1, Some(9)));
    file.extend(epb(0, 1_000_000, &eth));
    file.extend(epb(1, u64::MAX, &eth));
    file.extend(epb(0, 2_000_000, &eth));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "far.pcapng", &file);
    let o = run(&["decode", "--json", "-r", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ts: Vec<i64> = json_lines(&o).iter().map(|f| f["ts_ns"].as_i64().unwrap()).collect();
    assert_eq!(ts, [0, rocescope_capture::reader::MAX_TS_NS, 0]);
    let o = run(&["report", "--json", "-r", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout);
}

/// A pcapng section header, then an Ethernet interface (snaplen 65535) with one 8-byte option.
fn section_with_interface(option: u16, value: [u8; 8]) -> Vec<u8> {
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]); // version 1.0
    shb.extend_from_slice(&(-1i64).to_le_bytes()); // section length unknown
    let mut file = block(0x0A0D_0D0A, &shb);
    let mut body = 1u16.to_le_bytes().to_vec(); // link type Ethernet
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&65535u32.to_le_bytes());
    body.extend_from_slice(&option.to_le_bytes());
    body.extend_from_slice(&8u16.to_le_bytes());
    body.extend_from_slice(&value);
    body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    file.extend(block(1, &body));
    file
}

#[test]
fn pcapng_if_speed_sets_the_pause_time() {
    // A PFC frame pausing priority 3 for 65535 quanta, captured on an interface whose IDB
    // says 25 Gb/s (if_speed): 65535 x 512 bit times = 1,342,156 ns at 25G (335,539 at the
    // 100G default). The interface block arrives after the file is opened.
    let mut pfc = hex("0180c200000102000000ff01880801010008");
    for q in [0u16, 0, 0, 0xffff, 0, 0, 0, 0] {
        pfc.extend_from_slice(&q.to_be_bytes());
    }
    pfc.resize(60, 0);
    // if_speed (option 8): 25 Gb/s.
    let mut file = section_with_interface(8, 25_000_000_000u64.to_le_bytes());
    file.extend(epb(0, 1_700_000_000_000_000, &pfc));
    // Any frame 10 ms later, so the pause runs its course inside the capture.
    let mut other = pfc.clone();
    other[12..14].copy_from_slice(&[0x88, 0xb5]);
    file.extend(epb(0, 1_700_000_000_010_000, &other));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "speed.pcapng", &file);
    let o = run(&["report", "--json", "-r", p.to_str().unwrap()]);
    let v = common::report_json(&o.stdout);
    let pfc = &v["pfc"][0];
    assert_eq!(pfc["priority"], 3, "{v}");
    assert_eq!(pfc["link_bps"], 25_000_000_000u64, "{pfc}");
    assert_eq!(pfc["paused_ns"], 1_342_156, "{pfc}");
}

/// `samples/demo.pcap` as pcapng, written by `rocescope capture`.
fn demo_pcapng(dir: &Path) -> Vec<u8> {
    let out = dir.join("demo-copy.pcapng");
    let o = run(&["capture", "-q", "-r", sample("demo.pcap").to_str().unwrap(), "-w", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `rocescope ARGS -r -` with `input` on standard input.
fn run_stdin(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = bin()
        .args(args)
        .args(["-r", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let o = child.wait_with_output().unwrap();
    let _ = feeder.join();
    o
}

/// tshark's frame count for a file (it reads gzip itself), when tshark is installed.
fn tshark_frames(path: &Path) -> Option<usize> {
    let o =
        Command::new("tshark").args(["-r"]).arg(path).args(["-T", "fields", "-e", "frame.number"]).output();
    match o {
        Ok(o) => Some(String::from_utf8_lossy(&o.stdout).lines().count()),
        Err(_) => {
            common::skip("tshark is not installed: no comparison with it");
            None
        }
    }
}

#[test]
fn a_cut_gzip_capture_gives_every_frame_before_the_cut() {
    // Issue 15: a .pcapng.gz cut short, under 1 MiB decompressed, gave 0 frames and "read
    // failed: read failed", where `zcat F | rocescope decode -r -` and tshark recover them.
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&demo_pcapng(dir.path()));
    let cut = write(dir.path(), "demo.pcapng.gz", &gz[..gz.len() * 2 / 3]);
    let o = run(&["decode", "-r", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let frames = stdout(&o).lines().count();
    let zcat: Vec<u8> = {
        let mut d = flate2::read::MultiGzDecoder::new(&gz[..gz.len() * 2 / 3]);
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut d, &mut out);
        out
    };
    let piped = run_stdin(&["decode"], zcat);
    assert_eq!(frames, stdout(&piped).lines().count(), "as many as zcat | rocescope decode -r -");
    assert!(frames > 100 && frames < 182, "{frames}");
    if let Some(t) = tshark_frames(&cut) {
        assert_eq!(frames, t, "as many as tshark");
    }
    let err = String::from_utf8_lossy(&o.stderr);
    let at = String::from_utf8_lossy(&piped.stderr)
        .split("byte ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .map(str::to_string)
        .expect("the piped read says where the capture is cut");
    assert_eq!(
        err,
        format!(
            "rocescope: {}: gzip stream is cut off after {frames} records (byte {at} of the decompressed capture)\n",
            cut.display()
        )
    );
    // The report says it too, in the document.
    let o = run(&["report", "--json", "-r", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v = common::report_json(&o.stdout);
    assert_eq!(v["summary"]["packets"], frames);
    let errors = v["input_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].as_str().unwrap().contains("demo.pcapng.gz: gzip stream is cut off"), "{errors:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.ends_with(&format!("(the report covered the {frames} frames before it)\n")), "{err}");
}

#[test]
fn a_binary_timestamp_resolution_reads_as_tshark_reads_it() {
    // if_tsresol 0x94 is 2^-20 s (the top bit means a power of two): refused before as
    // "invalid timestamp resolution 0x94". Here beside 2^-30 s and picoseconds.
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut file = block(0x0A0D_0D0A, &shb);
    file.extend(idb(1, Some(0x94)));
    file.extend(idb(1, Some(0x80 | 30)));
    file.extend(idb(1, Some(12)));
    let frame = hex("ffffffffffff020000000001080600010800060400010200000000010a0000010000000000000a000002");
    let base = 1_750_000_000u64;
    for (i, ts) in [
        (0, base << 20),
        (0, (base << 20) + 1),
        (0, (base << 20) + 3),
        (0, (base << 20) + (1 << 20) - 1),
        (1, (base << 30) + 5),
        (1, (base << 30) + (1 << 30) - 1),
        (2, 1_000_000 * 1_000_000_000_000 + 1999),
    ] {
        file.extend(epb(i, ts, &frame));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "tsresol.pcapng", &file);
    let o = run(&["decode", "--json", "-r", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ts: Vec<String> = json_lines(&o).iter().map(|l| l["ts"].as_str().unwrap().to_string()).collect();
    let want = [
        "1750000000.000000000",
        "1750000000.000000953",
        "1750000000.000002861",
        "1750000000.999999046",
        "1750000000.000000004",
        "1750000000.999999999",
        "1000000.000000001",
    ];
    assert_eq!(ts, want);
    // tshark's frame.time_epoch, digit for digit (Wireshark 4.0 here).
    match Command::new("tshark").arg("-r").arg(&p).args(["-T", "fields", "-e", "frame.time_epoch"]).output() {
        Ok(t) => {
            let theirs: Vec<String> =
                String::from_utf8_lossy(&t.stdout).lines().map(str::to_string).collect();
            assert_eq!(ts, theirs);
        }
        Err(_) => common::skip("tshark is not installed: the resolutions not compared with it"),
    }
}

#[test]
fn damage_messages_name_the_file_once_with_place_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let pcapng = demo_pcapng(dir.path());
    // An enhanced packet block whose trailing length disagrees: "malformed record or block
    // (Verify)" before (pcap-parser's nom error kind).
    let mut bad = pcapng.clone();
    let mut at = 0;
    let mut blocks = 0;
    while blocks < 10 {
        at += u32::from_le_bytes(bad[at + 4..at + 8].try_into().unwrap()) as usize;
        blocks += 1;
    }
    let len = u32::from_le_bytes(bad[at + 4..at + 8].try_into().unwrap()) as usize;
    bad[at + len - 4] ^= 0x40;
    // A classic pcap, gzip, cut: "stopped after 131 frames ... read error: incomplete
    // deflate stream (after 0 records)" before.
    let gz = gzip(&std::fs::read(sample("demo.pcap")).unwrap());
    // A name with an escape sequence and a carriage return in it (item 5: never raw).
    let odd = "odd\x1b]0;owned\x07\r.pcapng";
    let cases = [
        ("verify.pcapng", bad.clone(), "capture is corrupt at byte", "two length fields disagree"),
        (
            "cut.pcap.gz",
            gz[..gz.len() / 2].to_vec(),
            "gzip stream is cut off after",
            "of the decompressed capture",
        ),
        (odd, bad, "capture is corrupt at byte", "two length fields disagree"),
    ];
    for (name, bytes, what, detail) in cases {
        let p = write(dir.path(), name, &bytes);
        let o = run(&["decode", "-r", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let frames = stdout(&o).lines().count();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let shown = rocescope_capture::text::path(&p);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches(&shown).count(), 1, "{err}");
        assert!(err.starts_with(&format!("rocescope: {shown}: {what}")), "{err}");
        assert!(err.contains(detail), "{err}");
        let records = if frames == 1 { "1 record".to_string() } else { format!("{frames} records") };
        assert_eq!(err.matches(&records).count(), 1, "the count said once, and right: {err}");
        for wrong in ["Verify", "stopped after", "read error", "read failed", "\x1b", "\r", "\x07"] {
            assert!(!err.contains(wrong), "{wrong:?} in {err:?}");
        }
        // The same text in the report document, and once on stderr.
        let o = run(&["report", "--json", "-r", p.to_str().unwrap()]);
        let v = common::report_json(&o.stdout);
        let listed = v["input_errors"][0].as_str().unwrap().to_string();
        assert_eq!(format!("rocescope: {listed}\n"), err);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.matches(&shown).count(), 1, "{err}");
    }
    // Not a capture, with the odd name: escaped too.
    let p = write(dir.path(), "x\x1b[2Jy.pcap", b"garbage!");
    let err = String::from_utf8_lossy(&run(&["decode", "-r", p.to_str().unwrap()]).stderr).to_string();
    assert!(
        err.contains("x\\x1b[2Jy.pcap is not a pcap or pcapng capture") && !err.contains('\x1b'),
        "{err:?}"
    );
}

#[test]
fn a_full_disk_at_the_start_names_the_file_and_leaves_no_empty_file() {
    // Before: a 0-byte file and only "No space left on device". A file size limit of 0 makes
    // the first write fail as a full disk does (EFBIG; the signal it raises is ignored).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pcapng");
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 0 && exec "$0" capture -q -r "$1" -w "$2""#)
        .arg(env!("CARGO_BIN_EXE_rocescope"))
        .arg(sample("demo.pcap"))
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("rocescope: cannot write {}: File too large", out.display()))
            && err.trim_end().ends_with(&format!("nothing was written, so {} was removed", out.display())),
        "{err}"
    );
    assert!(!out.exists(), "no empty file left behind");
    // A device that is always full (ENOSPC): named, and not removed.
    if Path::new("/dev/full").exists() {
        let o = run(&["capture", "-q", "-r", sample("demo.pcap").to_str().unwrap(), "-w", "/dev/full"]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "rocescope: cannot write /dev/full: No space left on device (os error 28); nothing was written\n"
        );
    }
}

#[test]
fn more_tunnel_ports_than_the_decoder_holds_are_refused() {
    // Seven extra VXLAN ports fit; an eighth was dropped without a word.
    let demo = common::root().join("samples/demo.pcap");
    let mut args: Vec<String> = vec!["report".into(), "-q".into(), "-r".into(), demo.display().to_string()];
    for p in 1..=7 {
        args.extend(["--vxlan-port".into(), format!("{}", 10_000 + p)]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&refs);
    assert_ne!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    args.extend(["--geneve-port".into(), "7000".into(), "--vxlan-port".into(), "10008".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&refs);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--vxlan-port 10008: at most 7 extra ports"), "{err}");
}

/// Numbers that would silently change a verdict or make a run absurd are usage errors
/// (exit 2, naming the option): a path MTU that is not an InfiniBand MTU (`--pmtu 0` made
/// the implied-NAK CRITICAL disappear), RoCE port 0, a file size too small for one frame
/// (one file per packet), no frames, no files, no buffer, a negative idle time.
#[test]
fn numbers_that_would_change_verdicts_are_refused() {
    let s = sample("read-implied-nak.pcap");
    let file = s.to_str().unwrap();
    let out = std::env::temp_dir().join(format!("rocescope-numbers-{}.pcapng", std::process::id()));
    let w = out.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["report", "-r", file, "--pmtu", "0"], "--pmtu"),
        (&["report", "-r", file, "--pmtu", "1000"], "--pmtu"),
        (&["report", "-r", file, "--roce-port", "0"], "--roce-port"),
        (&["capture", "-r", file, "-w", w, "-C", "0.000001"], "--file-size"),
        (&["capture", "-r", file, "-w", w, "-c", "0"], "--count"),
        (&["capture", "-r", file, "-w", w, "-C", "1", "-W", "0"], "--file-count"),
        (&["capture", "-r", file, "-w", w, "-B", "0"], "--buffer-size"),
        (
            &["export", "-r", file, "--no-http", "--push", "-", "--flow-idle-timeout=-5"],
            "--flow-idle-timeout",
        ),
        (
            &["export", "-r", file, "--no-http", "--push", "-", "--flow-idle-timeout=nan"],
            "--flow-idle-timeout",
        ),
    ];
    for (args, opt) in cases {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(opt), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    // The values that are allowed still run: an IB MTU keeps the implied NAK.
    let o = run(&["report", "-r", file, "--pmtu", "1024", "--json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"implied_nak\""));
    let o = run(&["capture", "-r", file, "-w", w, "-C", "0.01", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Rotated files are named after the output (`NAME_00001_...`).
    let stem = format!("rocescope-numbers-{}", std::process::id());
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with(&stem) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Display filters nested thousands deep are refused with a usage error (they overflowed
/// the stack: status 134), named by their start, as a filter that does not parse is: 100,000
/// `(` or `!` (about the longest argument Linux passes, 128 KiB) included.
#[test]
fn a_filter_nested_thousands_deep_is_a_usage_error() {
    let s = sample("rc-normal.pcap");
    let o = run(&["decode", "-r", s.to_str().unwrap(), "-Y", "nak and"]);
    assert_eq!(o.status.code(), Some(2), "a filter that does not parse");
    // A long filter that parses (an `or` of 18,000 terms is a list, not 18,000 levels) is
    // named by its start in the closing line too.
    let long = vec!["nak"; 18_000].join(" or ");
    let o = run(&["decode", "-q", "-r", s.to_str().unwrap(), "-Y", &long]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("matched the display filter \"nak or nak") && err.len() < 2_000, "{err}");
    for filter in [
        format!("{}nak{}", "(".repeat(7_800), ")".repeat(7_800)),
        format!("{}nak", "!".repeat(15_000)),
        format!("{}nak", "(".repeat(100_000)),
        format!("{}nak", "!".repeat(100_000)),
        format!("{}nak", "not ".repeat(25_000)),
    ] {
        let o = run(&["decode", "-r", s.to_str().unwrap(), "-Y", &filter]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("nests deeper than 64") && err.contains("\"...: "), "{err}");
        assert!(err.len() < 2_000, "the message names the filter by its start: {} bytes", err.len());
    }
}
