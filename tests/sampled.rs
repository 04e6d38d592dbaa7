//! Sampled captures and sFlow (issue 12): `--sample-rate N` scales every packet and byte
//! counter exactly and turns the verdicts that need every packet off; sFlow datagrams (in a
//! capture, or received live) give per-QP figures scaled by each sample's own rate, which
//! this test computes on its own from the sample file's bytes; damaged datagrams are said,
//! never a crash.

mod common;

use proptest::prelude::*;
use rocescope_capture::CaptureReader;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(args)
        .current_dir(common::root())
        .output()
        .expect("run rocescope")
}

fn report(args: &[&str]) -> Value {
    let mut all = vec!["report", "--json", "--findings-per-kind", "0"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{all:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON report")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Finding kinds a sampled capture must not give (docs/verdicts.md "Sampled captures").
const OFF: &[&str] = &[
    "network_loss",
    "timeout_retransmit",
    "capture_loss",
    "out_of_order",
    "ce_without_cnp",
    "pfc_storm",
    "pfc_deadlock",
    "points_unmatched",
    "lost_between_points",
    "resend_unexplained",
    "implied_nak",
    "spurious_nak",
    "uc_loss",
    "one_direction",
];

fn kinds(r: &Value) -> Vec<String> {
    r["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sample_rate_scales_every_counter_exactly() {
    let full = report(&["-r", "samples/demo.pcap"]);
    let s4 = report(&["-r", "samples/demo.pcap", "--sample-rate", "4"]);
    assert!(full.get("sampled").is_none(), "an unsampled capture says nothing of sampling");
    for k in [
        "packets",
        "roce",
        "roce_v1",
        "pfc_frames",
        "pause_frames",
        "cnps",
        "roce_bytes",
        "malformed",
        "icrc_bad",
    ] {
        assert_eq!(u(&s4["summary"][k]), 4 * u(&full["summary"][k]), "summary.{k}");
    }
    let (ff, sf) = (full["flows"].as_array().unwrap(), s4["flows"].as_array().unwrap());
    assert_eq!(ff.len(), sf.len());
    for (a, b) in ff.iter().zip(sf) {
        for k in ["packets", "bytes", "payload_bytes", "messages", "requests", "responses", "acks", "cnps"] {
            assert_eq!(u(&b[k]), 4 * u(&a[k]), "flow {} {k}", a["id"]);
        }
        for k in ["not_ect", "ect0", "ect1", "ce"] {
            assert_eq!(u(&b["ecn"][k]), 4 * u(&a["ecn"][k]), "flow {} ecn.{k}", a["id"]);
        }
        // A fraction stays a fraction; PSN events are listed as seen.
        assert_eq!(b["ecn"]["ce_fraction"], a["ecn"]["ce_fraction"]);
        for k in ["gaps", "missing", "retransmits", "duplicates"] {
            assert_eq!(b["psn"][k], a["psn"][k], "flow {} psn.{k} as seen", a["id"]);
        }
        assert_eq!(b["naks"], a["naks"], "NAK counts as seen");
        for (x, y) in a["opcodes"].as_array().unwrap().iter().zip(b["opcodes"].as_array().unwrap()) {
            assert_eq!(u(&y["packets"]), 4 * u(&x["packets"]));
        }
        let sum = |v: &Value| v.as_array().unwrap().iter().map(u).sum::<u64>();
        assert_eq!(sum(&b["throughput"]["packets"]), 4 * sum(&a["throughput"]["packets"]));
        assert_eq!(sum(&b["throughput"]["bins"]), 4 * sum(&a["throughput"]["bins"]));
        let (ga, gb) =
            (a["throughput"]["mean_gbps"].as_f64().unwrap(), b["throughput"]["mean_gbps"].as_f64().unwrap());
        assert!((gb - 4.0 * ga).abs() <= 1e-9 * gb.max(1.0), "mean Gb/s scales: {ga} -> {gb}");
    }
    let sm = &s4["sampled"];
    assert_eq!(sm["source"], "flag");
    assert_eq!((u(&sm["rate"]), u(&sm["samples"])), (4, 182));
    assert_eq!(sm["loss_verdicts"], false);
    assert_eq!(sm["latency_upper_bound"], true);
}

#[test]
fn loss_verdicts_are_off_with_a_sample_rate() {
    let full = report(&["-r", "samples/demo.pcap"]);
    let s = report(&["-r", "samples/demo.pcap", "--sample-rate", "2"]);
    let before = kinds(&full);
    let off_before = before.iter().filter(|k| OFF.contains(&k.as_str())).count();
    assert!(off_before >= 4, "the demo has loss findings to switch off: {before:?}");
    let after = kinds(&s);
    assert!(after.iter().all(|k| !OFF.contains(&k.as_str())), "{after:?}");
    assert_eq!(u(&s["sampled"]["suppressed_findings"]), off_before as u64);
    // Findings about packets that were seen stand (bad ICRC, RNR, NAK codes, QoS).
    for k in ["icrc_bad", "rnr"] {
        assert!(after.contains(&k.to_string()), "{k} stays: {after:?}");
    }
    // The text report says so.
    let o = run(&["report", "-r", "samples/demo.pcap", "--sample-rate", "2"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("SAMPLED capture (1 in 2, --sample-rate)"), "{text}");
    assert!(text.contains("PSN-gap loss, resend-cause, reordering and PFC storm verdicts are off"), "{text}");
    assert!(!text.contains("CRITICAL"), "{text}");
    // Every report validates against the schema.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("docs/report.schema.json")).unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    for r in [&s, &report(&["-r", "samples/sflow/demo-sflow.pcap"])] {
        let errors: Vec<String> = v.iter_errors(r).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}

/// What the sFlow sample holds, read from its bytes here: per (agent, ifIndex, dst, QP):
/// (packets, CNPs, CE packets, per opcode), each sample counted its rate times; plus the
/// datagram count.
/// (agent, ifIndex, destination, QP) -> (packets, CNPs, CE packets, packets per opcode).
type Figures = BTreeMap<(String, u32, String, u32), (u64, u64, u64, BTreeMap<u8, u64>)>;

#[derive(Default, Debug)]
struct Expect {
    datagrams: u64,
    samples: u64,
    flows: Figures,
}

fn be(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// The UDP payload to port 6343 of an Ethernet frame (IPv4 or IPv6, no tags).
fn sflow_payload(f: &[u8]) -> Option<&[u8]> {
    let (udp, _) = match u16::from_be_bytes([f[12], f[13]]) {
        0x0800 => (14 + usize::from(f[14] & 15) * 4, ()),
        0x86DD => (14 + 40, ()),
        _ => return None,
    };
    (u16::from_be_bytes([f[udp + 2], f[udp + 3]]) == 6343).then(|| &f[udp + 8..])
}

fn expected_from_file() -> Expect {
    let mut e = Expect::default();
    let mut r = CaptureReader::open(&common::root().join("samples/sflow/demo-sflow.pcap")).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        let Some(d) = sflow_payload(rec.data) else { continue };
        e.datagrams += 1;
        assert_eq!(be(d, 0), 5);
        let (agent, mut at) = match be(d, 4) {
            1 => (std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&d[8..12]).unwrap()).to_string(), 12),
            2 => (std::net::Ipv6Addr::from(<[u8; 16]>::try_from(&d[8..24]).unwrap()).to_string(), 24),
            t => panic!("address type {t}"),
        };
        at += 12; // sub-agent, sequence, uptime
        let n = be(d, at);
        at += 4;
        for _ in 0..n {
            let (format, len) = (be(d, at), be(d, at + 4) as usize);
            let body = &d[at + 8..at + 8 + len];
            at += 8 + len;
            let (if_index, rate, mut p) = match format {
                1 => (be(body, 4) & 0xFF_FFFF, be(body, 8), 28),
                3 => (be(body, 8), be(body, 12), 40),
                _ => continue,
            };
            e.samples += 1;
            let records = be(body, p);
            p += 4;
            for _ in 0..records {
                let (rf, rl) = (be(body, p), be(body, p + 4) as usize);
                let rec = &body[p + 8..p + 8 + rl];
                p += 8 + rl;
                if rf != 1 || be(rec, 0) != 1 {
                    continue;
                }
                let hl = be(rec, 12) as usize;
                let h = &rec[16..16 + hl];
                // IPv4 RoCEv2 only (untagged or one tag), the BTH after the UDP header.
                let mut eth = 12;
                if h[eth..eth + 2] == [0x81, 0x00] {
                    eth += 4;
                }
                if h[eth..eth + 2] != [0x08, 0x00] || h[eth + 2 + 9] != 17 {
                    continue;
                }
                let ip = eth + 2;
                let udp = ip + usize::from(h[ip] & 15) * 4;
                if u16::from_be_bytes([h[udp + 2], h[udp + 3]]) != 4791 || h.len() < udp + 8 + 12 {
                    continue;
                }
                let bth = udp + 8;
                let dst =
                    std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&h[ip + 16..ip + 20]).unwrap()).to_string();
                let qp = u32::from_be_bytes([0, h[bth + 5], h[bth + 6], h[bth + 7]]);
                let op = h[bth];
                let w = u64::from(rate);
                let ent = e.flows.entry((agent.clone(), if_index, dst, qp)).or_default();
                ent.0 += w;
                ent.1 += if op == 0x81 { w } else { 0 };
                ent.2 += if h[ip + 1] & 3 == 3 { w } else { 0 };
                *ent.3.entry(op).or_default() += w;
            }
        }
    }
    e
}

/// The report's figures for the flows of `expect`'s kind, by the same key.
fn check_sflow_report(r: &Value, e: &Expect) {
    assert_eq!(r["sampled"]["source"], "sflow");
    assert_eq!((u(&r["sampled"]["rate_min"]), u(&r["sampled"]["rate_max"])), (4, 8));
    assert!(r["sampled"]["rate"].is_null(), "two rates: no single one");
    assert_eq!(u(&r["sflow"]["datagrams"]), e.datagrams);
    assert_eq!(u(&r["sflow"]["flow_samples"]), e.samples);
    let points: Vec<&str> =
        r["points"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(points, ["sflow 10.255.0.1 ifIndex 3", "sflow 2001:db8::2 ifIndex 7"]);
    let mut seen = 0;
    for f in r["flows"].as_array().unwrap() {
        let point = points[u(&f["point"]) as usize];
        let (agent, ifx) = point.trim_start_matches("sflow ").split_once(" ifIndex ").unwrap();
        let key = (
            agent.to_string(),
            ifx.parse().unwrap(),
            f["dst"].as_str().unwrap().to_string(),
            u(&f["dest_qp"]) as u32,
        );
        let Some((packets, cnps, ce, ops)) = e.flows.get(&key) else { continue };
        seen += 1;
        assert_eq!(u(&f["packets"]), *packets, "{key:?}");
        assert_eq!(u(&f["cnps"]), *cnps, "{key:?}");
        assert_eq!(u(&f["ecn"]["ce"]), *ce, "{key:?}");
        let got: BTreeMap<u8, u64> = f["opcodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (u(&o["opcode"]) as u8, u(&o["packets"])))
            .collect();
        assert_eq!(&got, ops, "{key:?}");
    }
    assert_eq!(seen, e.flows.len(), "every IPv4 RoCE flow of the sample is in the report");
    assert!(seen >= 20, "{seen}");
}

#[test]
fn sflow_capture_gives_per_qp_figures_scaled_by_each_samples_rate() {
    let e = expected_from_file();
    assert_eq!((e.datagrams, e.samples), (18, 69));
    let r = report(&["-r", "samples/sflow/demo-sflow.pcap"]);
    check_sflow_report(&r, &e);
    // Sampled points take no part in matching across points; loss verdicts are off.
    assert!(r["between"].as_array().unwrap().is_empty());
    assert!(kinds(&r).iter().all(|k| !OFF.contains(&k.as_str())), "{:?}", kinds(&r));
    // The sampled plain capture with --sample-rate 4: every fourth frame, four times.
    let full = report(&["-r", "samples/demo.pcap"]);
    let s = report(&["-r", "samples/sflow/demo-sampled.pcap", "--sample-rate", "4"]);
    assert_eq!(u(&s["sampled"]["samples"]), 46);
    assert_eq!(u(&s["summary"]["packets"]), 184);
    assert!(u(&s["summary"]["roce"]).abs_diff(u(&full["summary"]["roce"])) <= 50);
    // --no-sflow reads the datagrams as plain UDP frames.
    let plain = report(&["-r", "samples/sflow/demo-sflow.pcap", "--no-sflow"]);
    assert!(plain.get("sampled").is_none());
    assert_eq!((u(&plain["summary"]["packets"]), u(&plain["summary"]["roce"])), (18, 0));
}

#[test]
fn damaged_sflow_datagrams_are_said_not_crashed_on() {
    let o = run(&["report", "--json", "-r", "samples/sflow/bad-sflow.pcap"]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((u(&r["sflow"]["datagrams"]), u(&r["sflow"]["bad_datagrams"])), (1, 3));
    let first = r["sflow"]["first_error"].as_str().unwrap();
    assert!(first.starts_with("frame 1: sFlow datagram at byte 32: sample declares"), "{first}");
    let text =
        String::from_utf8_lossy(&run(&["report", "-r", "samples/sflow/bad-sflow.pcap"]).stdout).to_string();
    assert!(text.contains("3 datagrams unreadable (frame 1: sFlow datagram at byte"), "{text}");
}

#[test]
fn live_sflow_listener_reports_what_it_received() {
    // A free port: bind, read it, let it go.
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "--sflow", &addr, "--duration", "4"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut r = CaptureReader::open(&common::root().join("samples/sflow/demo-sflow.pcap")).unwrap();
    let mut sent = 0;
    while let Some(rec) = r.next_record().unwrap() {
        if let Some(d) = sflow_payload(rec.data) {
            sock.send_to(d, &addr).unwrap();
            sent += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    assert_eq!(sent, 18);
    let o = child.wait_with_output().unwrap();
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&o.stderr));
    let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Loopback loses nothing: the same figures as the file.
    check_sflow_report(&rep, &expected_from_file());
    assert_eq!(u(&rep["summary"]["packets"]), 368);
}

fn analyse(payload: &[u8]) {
    use rocescope_analyzer::{Analyzer, Config};
    let mut frame = Vec::new();
    rocescope_capture::sflow_listen::frame_for(
        &mut frame,
        "10.0.0.100:5000".parse().unwrap(),
        "10.0.0.1:6343".parse().unwrap(),
        payload,
    );
    let rec = rocescope_capture::Record::whole(rocescope_decoder::LinkType::ETHERNET, 1, &frame);
    let opts = rocescope_decoder::DecodeOptions::default();
    let mut a = Analyzer::new(Config::default());
    let p = rocescope_decoder::decode(rec.link_type, rec.data, &opts);
    a.push_frame(1, &rec, &p, &opts);
    let r = a.report();
    let _ = serde_json::to_string(&r).unwrap();
}

/// The sample's datagrams, as bytes.
fn datagrams() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut r = CaptureReader::open(&common::root().join("samples/sflow/demo-sflow.pcap")).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        if let Some(d) = sflow_payload(rec.data) {
            out.push(d.to_vec());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any damage to a real datagram (a word replaced, bytes cut) is analysed or refused,
    /// never a panic.
    #[test]
    fn damaged_datagrams_never_panic(which in 0usize..18, word in 0usize..200, value in any::<u32>(), cut in 0usize..2000) {
        let all = datagrams();
        let mut d = all[which % all.len()].clone();
        let at = (word * 4).min(d.len() - 4);
        d[at..at + 4].copy_from_slice(&value.to_be_bytes());
        analyse(&d);
        analyse(&d[..cut.min(d.len())]);
    }
}

fn stdout_of(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `rocescope decode` shows each datagram, then one indented line per sampled header: as
/// many as the datagram holds, read from its bytes here.
#[test]
fn decode_shows_every_sampled_header_of_a_datagram() {
    let e = expected_from_file();
    let text = stdout_of(&["decode", "-r", "samples/sflow/demo-sflow.pcap"]);
    let lines: Vec<&str> = text.lines().collect();
    let frames: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].starts_with("    sample ")).collect();
    assert_eq!(frames.len() as u64, e.datagrams, "{text}");
    let mut total = 0;
    for (k, &i) in frames.iter().enumerate() {
        let end = frames.get(k + 1).copied().unwrap_or(lines.len());
        let n = end - i - 1;
        assert!(lines[i].contains(" sFlow v5 agent "), "{}", lines[i]);
        let want = if n == 1 { "1 sampled header".to_string() } else { format!("{n} sampled headers") };
        assert!(lines[i].contains(&want), "{} has {n} sample lines", lines[i]);
        for (j, l) in lines[i + 1..end].iter().enumerate() {
            assert!(l.starts_with(&format!("    sample {}/{n} ifIndex ", j + 1)), "{l}");
            assert!(l.contains(" 1-in-4: ") || l.contains(" 1-in-8: "), "{l}");
        }
        total += n;
    }
    assert_eq!(total as u64, e.samples, "one line per sampled header");
    // -V: a tree per sampled header; --no-sflow: plain UDP frames.
    let v = stdout_of(&["decode", "-V", "-r", "samples/sflow/demo-sflow.pcap"]);
    assert_eq!(v.matches("\n    Sample ").count() as u64, e.samples);
    assert_eq!(v.matches("        Raw packet header: protocol 1 (Ethernet)").count() as u64, e.samples);
    assert_eq!(v.matches("sFlow v5, Agent: ").count() as u64, e.datagrams);
    let plain = stdout_of(&["decode", "--no-sflow", "-r", "samples/sflow/demo-sflow.pcap"]);
    assert_eq!(plain.lines().count() as u64, e.datagrams);
    assert!(!plain.contains("sFlow") && !plain.contains("sample"), "{plain}");
    // The display filter keeps a datagram when one of its samples matches, shown whole.
    let f = stdout_of(&[
        "decode",
        "-r",
        "samples/sflow/demo-sflow.pcap",
        "-Y",
        "qp=0x32 and opcode=write_middle",
    ]);
    let shown: Vec<&str> = f.lines().filter(|l| !l.starts_with("    sample ")).collect();
    assert!(!shown.is_empty() && (shown.len() as u64) < e.datagrams, "{f}");
    for block in f.split("\n     ").filter(|b| !b.is_empty()) {
        assert!(block.contains("RC RDMA Write Middle QP=0x000032"), "{block}");
    }
    let none = stdout_of(&["decode", "-r", "samples/sflow/demo-sflow.pcap", "-Y", "qp=0x999999"]);
    assert!(none.is_empty(), "{none}");
}

/// `decode --json`: the `sflow` object's samples, decoded, give the per-QP opcodes and
/// rates this test reads from the bytes; every line matches the schema.
#[test]
fn decode_json_has_the_sampled_headers_decoded() {
    let e = expected_from_file();
    let out = run(&["decode", "--json", "-r", "samples/sflow/demo-sflow.pcap"]);
    assert_eq!(out.status.code(), Some(0));
    let lines = common::decode_lines(&out.stdout);
    assert_eq!(lines.len() as u64, e.datagrams);
    let mut got: BTreeMap<(String, u32, String, u32), BTreeMap<u8, u64>> = BTreeMap::new();
    let mut samples = 0;
    for l in &lines {
        let s = &l["sflow"];
        assert_eq!(s["version"], 5);
        assert_eq!(l["ip"]["src"], s["agent"], "the agents send from their own addresses");
        let agent = s["agent"].as_str().unwrap().to_string();
        for x in s["samples"].as_array().unwrap() {
            samples += 1;
            assert_eq!(x["source_type"], 0);
            let h = &x["header"];
            assert_eq!(h["frame"], l["frame"]);
            assert_eq!(u(&h["len"]), u(&x["frame_length"]) - u(&x["stripped"]));
            assert!(u(&h["caplen"]) <= 128, "agents send 128 bytes of each packet");
            let (Some(bth), Some(4)) = (h.get("bth"), h["ip"]["version"].as_u64()) else { continue };
            let key = (
                agent.clone(),
                u(&x["source_index"]) as u32,
                h["ip"]["dst"].as_str().unwrap().to_string(),
                u(&bth["dqpn"]) as u32,
            );
            *got.entry(key).or_default().entry(u(&bth["opcode"]) as u8).or_default() +=
                u(&x["sampling_rate"]);
        }
    }
    assert_eq!(samples, e.samples);
    let want: BTreeMap<_, _> = e.flows.iter().map(|(k, v)| (k.clone(), v.3.clone())).collect();
    assert_eq!(got, want, "QPs and opcodes of the sampled headers, each by its rate");
    // -T fields reads the sFlow fields too.
    let f = stdout_of(&[
        "decode",
        "-r",
        "samples/sflow/demo-sflow.pcap",
        "-c",
        "2",
        "-T",
        "fields",
        "-e",
        "frame",
        "-e",
        "sflow.agent",
        "-e",
        "sflow.samples.sampling_rate",
    ]);
    assert_eq!(f, "1\t10.255.0.1\t4,4,4,4\n2\t2001:db8::2\t8,8,8,8\n");
}

/// A damaged datagram shows its parse error on its line (and in its JSON), never a panic.
#[test]
fn decode_says_why_a_datagram_is_damaged() {
    let text = stdout_of(&["decode", "-r", "samples/sflow/bad-sflow.pcap"]);
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with(
            "[malformed: sFlow datagram at byte 32: sample declares 208 bytes, 106 left in the datagram]"
        ),
        "{first}"
    );
    assert_eq!(text.matches("[malformed: sFlow datagram at byte").count(), 3, "{text}");
    assert_eq!(text.matches("\n    sample 1/1 ifIndex 3 1-in-4: ").count(), 1, "the good one: {text}");
    let out = run(&["decode", "--json", "-r", "samples/sflow/bad-sflow.pcap"]);
    let lines = common::decode_lines(&out.stdout);
    let errors: Vec<&str> = lines.iter().filter_map(|l| l["sflow"]["error"].as_str()).collect();
    assert_eq!(errors.len(), 3);
    assert!(errors[0].starts_with("sFlow datagram at byte 32: sample declares"), "{errors:?}");
    let v = stdout_of(&["decode", "-V", "-r", "samples/sflow/bad-sflow.pcap"]);
    assert_eq!(v.matches("sFlow v5 datagram: [malformed: ").count(), 3, "{v}");
}
