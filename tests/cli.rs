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
    assert!(err.contains("capture is cut off") && err.contains("stopped after"), "{err}");

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
