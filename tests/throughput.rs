//! Byte counts and rates: wire bytes come from the IP/UDP lengths when a capture device cut
//! frames and wrote the cut length as the original length too (reference §1.1 and §1.11:
//! "use the IP total length / UDP length, not the captured length"), and a peak is never
//! below the mean it is shown beside (both are figured over the same windows).

mod common;

use rocescope_analyzer::report::ReportTotals;
use rocescope_capture::CaptureReader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn report(path: &Path) -> Value {
    let o = run(&["report", "--json", "-r", path.to_str().unwrap()]);
    assert!(!o.stdout.is_empty(), "{}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn cases() -> PathBuf {
    common::root().join("samples/cases")
}

/// Wire bytes of the RoCEv2 frames in an Ethernet capture, read straight from the bytes:
/// L2 header (with VLAN tags) plus the IPv4 total length or 40 + the IPv6 payload length, or
/// the record's length when that is larger. Independent of the decoder and the analyzer.
fn wire_bytes(path: &Path) -> (u64, u64) {
    let mut r = CaptureReader::open(path).unwrap();
    let (mut frames, mut bytes) = (0, 0);
    while let Some(rec) = r.next_record().unwrap() {
        let d = rec.data;
        let be = |o: usize| u16::from_be_bytes([d[o], d[o + 1]]);
        let mut off = 14;
        let mut et = be(12);
        while et == 0x8100 || et == 0x88a8 {
            et = be(off + 2);
            off += 4;
        }
        let (ip_len, proto, l4) = match et {
            0x0800 => (usize::from(be(off + 2)), d[off + 9], off + usize::from(d[off] & 0x0f) * 4),
            0x86dd => (40 + usize::from(be(off + 4)), d[off + 6], off + 40),
            _ => continue,
        };
        if proto != 17 || be(l4 + 2) != 4791 {
            continue;
        }
        frames += 1;
        bytes += (off + ip_len).max(rec.len as usize) as u64;
    }
    (frames, bytes)
}

#[test]
fn bytes_come_from_the_ip_length_when_the_record_length_is_cut() {
    let path = cases().join("truncated-length.pcap");
    let e: Value =
        serde_json::from_slice(&std::fs::read(cases().join("truncated-length.expected.json")).unwrap())
            .unwrap();
    let a = &e["analysis"];
    let r = report(&path);
    assert_eq!(r["summary"]["roce_bytes"], a["roce_bytes"]);
    assert!(a["roce_bytes"].as_u64().unwrap() > 10 * a["record_bytes"].as_u64().unwrap());
    assert_eq!(wire_bytes(&path).1, a["roce_bytes"].as_u64().unwrap());
    for x in a["flows"].as_array().unwrap() {
        let f = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["src"] == x["src"] && f["dst"] == x["dst"] && f["dest_qp"] == x["dest_qp"])
            .unwrap_or_else(|| panic!("no flow {x}"));
        assert_eq!(f["bytes"], x["bytes"], "{x}");
        let bins: u64 = f["throughput"]["bins"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).sum();
        assert_eq!(bins, x["bytes"].as_u64().unwrap(), "the throughput bins hold the same bytes");
    }
    // Frames the capture kept whole are counted as recorded (no double counting).
    let r = report(&common::root().join("samples/rc-normal.pcap"));
    assert_eq!(
        r["summary"]["roce_bytes"].as_u64().unwrap(),
        wire_bytes(&common::root().join("samples/rc-normal.pcap")).1
    );
}

/// rdma-nccl2.pcap (INDEX.md): frames cut to 243 bytes with orig_len == caplen, IP total
/// length 4156: the byte count is the IP's, about 17 times the records'.
#[test]
fn the_real_capture_with_cut_record_lengths_counts_wire_bytes() {
    let Some(dir) = common::real_captures() else { return };
    let path = dir.join("rdma-nccl2.pcap");
    let (frames, bytes) = wire_bytes(&path);
    let r = report(&path);
    assert_eq!(r["summary"]["roce"].as_u64().unwrap(), frames);
    assert_eq!(r["summary"]["roce_bytes"].as_u64().unwrap(), bytes);
    let mut rec = CaptureReader::open(&path).unwrap();
    let mut record = 0u64;
    while let Some(x) = rec.next_record().unwrap() {
        record += u64::from(x.len);
    }
    assert!(bytes > 16 * record, "{bytes} wire bytes vs {record} recorded");
    let flows: u64 = r["flows"].as_array().unwrap().iter().map(|f| f["bytes"].as_u64().unwrap()).sum();
    assert_eq!(flows, bytes);
}

fn approx_ge(peak: f64, mean: f64) -> bool {
    peak >= mean || (mean - peak) <= 1e-9 * mean.abs()
}

/// The report of `path`, analysed in this process (for the connection totals, which the
/// text report and the UI show but the JSON does not carry).
fn analyse(path: &Path) -> rocescope_analyzer::Report {
    let mut reader = CaptureReader::open(path).unwrap();
    let mut a = rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default());
    let opts = rocescope_decoder::DecodeOptions::default();
    while let Some(rec) = reader.next_record().unwrap() {
        a.push_record(&rec, &opts);
    }
    a.finish();
    a.report()
}

/// Every flow, connection and pause timeline in every sample and real capture: the peak is
/// at least the mean.
#[test]
fn peak_is_never_below_the_mean() {
    let mut files: Vec<PathBuf> = common::captures_in(&common::root().join("samples"));
    files.extend(common::captures_in(&cases()));
    if let Some(dir) = common::real_captures() {
        // Native InfiniBand (ERF) is not RoCE: no flows.
        files.extend(common::captures_in(&dir));
    }
    let (mut flows, mut conns, mut pauses) = (0, 0, 0);
    for path in &files {
        let r = analyse(path);
        let name = path.display();
        for f in &r.flows {
            let t = &f.throughput;
            assert!(
                approx_ge(t.peak_gbps, t.mean_gbps),
                "{name}: flow {}: mean {} > peak {}",
                f.id,
                t.mean_gbps,
                t.peak_gbps
            );
            assert!(
                f.bytes == 0 || t.mean_gbps > 0.0 || r.summary.start_ns == r.summary.end_ns,
                "{name}: flow {}",
                f.id
            );
            flows += 1;
        }
        for c in &r.connections {
            let t = r.connection_totals(c);
            assert!(
                approx_ge(t.peak_gbps, t.mean_gbps()),
                "{name}: {c:?}: mean {} > peak {}",
                t.mean_gbps(),
                t.peak_gbps
            );
            // Both directions together peak at least as high as either alone.
            for f in c.flows.iter().filter_map(|i| r.flows.get(*i)) {
                assert!(approx_ge(t.peak_gbps, f.throughput.peak_gbps), "{name}: {c:?}");
            }
            conns += 1;
        }
        for p in &r.pfc {
            assert!(approx_ge(p.max_pause_us_per_s, p.pause_us_per_s), "{name}: {p:?}");
            assert!(p.max_pause_us_per_s <= 1e6, "{name}: more than a second paused per second");
            pauses += 1;
        }
    }
    assert!(
        flows > 100 && conns > 50 && pauses >= 5,
        "{flows} flows, {conns} connections, {pauses} timelines"
    );
}

/// demo.pcap lasts 80 ms, shorter than a second and than a few 10 ms bins: the figures the
/// report printed as "5.22 mean / 0.01 peak" Gb/s and "113496 µs/s mean vs 9024 peak"
/// (later the peak equal to the mean: one one-second window).
#[test]
fn short_captures_give_one_basis_for_mean_and_peak() {
    let r = report(&common::root().join("samples/demo.pcap"));
    let p3 = r["pfc"].as_array().unwrap().iter().find(|p| p["priority"] == 3).unwrap();
    let secs =
        (r["summary"]["end_ns"].as_i64().unwrap() - r["summary"]["start_ns"].as_i64().unwrap()) as f64 / 1e9;
    let mean = p3["paused_ns"].as_f64().unwrap() / 1e3 / secs;
    assert!((p3["pause_us_per_s"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    // The peak is the busiest 10 ms storm window's: the storm's 81%, not the 80 ms mean.
    let busiest = p3["storms"][0]["max_fraction"].as_f64().unwrap() * 1e6;
    let peak = p3["max_pause_us_per_s"].as_f64().unwrap();
    assert!((peak - busiest).abs() < 1e-6 * busiest && peak > mean, "{p3:#}");
    let a = analyse(&common::root().join("samples/demo.pcap"));
    let c = a
        .connections
        .iter()
        .find(|c| c.a.to_string() == "10.0.0.1" && c.b.to_string() == "10.0.0.2" && c.b_qpn == 0x32)
        .unwrap();
    let t = a.connection_totals(c);
    assert!(t.mean_gbps() > 0.0 && approx_ge(t.peak_gbps, t.mean_gbps()), "{t:?}");
    // 12 packets within 0.3 ms of an 80 ms capture: one 10 ms window, mean = peak.
    assert!((t.peak_gbps - t.mean_gbps()).abs() < 1e-9, "{t:?}");
    assert!((t.mean_gbps() - t.bytes as f64 * 8.0 / 10e6).abs() < 1e-9, "{t:?}");
    // The text report prints the same figures: mean ≤ peak on every row.
    let o = run(&["report", "-r", common::root().join("samples/demo.pcap").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let mut rows = 0;
    for line in text.lines() {
        let Some(col) = line
            .split_whitespace()
            .find(|w| w.contains('/') && w.split('/').all(|x| x.parse::<f64>().is_ok()) && w.contains('.'))
        else {
            continue;
        };
        let (m, p) = col.split_once('/').unwrap();
        let (m, p): (f64, f64) = (m.parse().unwrap(), p.parse().unwrap());
        assert!(m <= p, "{line}");
        rows += 1;
    }
    assert_eq!(rows, r["connections"].as_array().unwrap().len(), "{text}");
}

/// `report` on samples/microburst.pcap with `--bin` (docs/verdicts.md "Microbursts").
fn microburst(bin: &str) -> Value {
    let path = common::root().join("samples/microburst.pcap");
    let o = run(&["report", "--json", "--bin", bin, "-r", path.to_str().unwrap()]);
    assert!(o.status.success() || o.status.code() == Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn priority(r: &Value, p: u64) -> &Value {
    r["timeline"]["points"][0]["priorities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["priority"] == p)
        .unwrap_or_else(|| panic!("priority {p} in {}", r["timeline"]))
}

fn flow(r: &Value, qp: u64) -> &Value {
    r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == qp).unwrap()
}

fn sum(v: &Value) -> u64 {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum()
}

#[test]
fn a_microburst_keeps_its_resolution_and_10ms_bins_hide_it() {
    // The sample's burst: 12 WRITE Only frames of 1,098 wire bytes (Ethernet 14, IPv4 20,
    // UDP 8, BTH 12, RETH 16, 1,024 payload, ICRC 4) 800 ns apart from 10.02 ms after the
    // capture start: one 10 µs bin, 13,176 bytes, 10.5408 Gb/s over it; 6 CE-marked.
    let fine = microburst("10us");
    assert_eq!(fine["timeline"]["base_ns"], 10_000);
    let burst_gbps = 12.0 * 1098.0 * 8.0 / 10_000.0;
    let p3 = priority(&fine, 3);
    let pk = &p3["peak"];
    assert!((pk["gbps"].as_f64().unwrap() - burst_gbps).abs() < 1e-9, "{pk}");
    assert_eq!(
        (pk["offset_ns"].as_u64(), pk["ce"].as_u64(), pk["ce_packets"].as_u64()),
        (Some(10_020_000), Some(6), Some(12))
    );
    assert_eq!(pk["ce_offset_ns"], 10_020_000);
    // The data flow's own burst figures agree; the series (wider bins) keep every byte.
    let data = flow(&fine, 0x162);
    let b = &data["throughput"]["burst"];
    assert_eq!(b["bin_ns"], 10_000);
    assert!((b["peak_gbps"].as_f64().unwrap() - burst_gbps).abs() < 1e-9, "{b}");
    assert_eq!(
        (b["peak_offset_ns"].as_u64(), b["ce_peak"].as_u64(), b["ce_peak_packets"].as_u64()),
        (Some(10_020_000), Some(6), Some(12))
    );
    assert_eq!(data["bytes"], 212 * 1098);
    assert_eq!(sum(&data["throughput"]["bins"]), 212 * 1098);
    // The CNP, at its own priority (DSCP 48: 6) in the fabric series, and received by the
    // data flow's sender in the flow's series.
    let p6 = priority(&fine, 6);
    assert_eq!(
        (sum(&p6["cnps"]), p6["peak"]["cnps"].as_u64(), p6["peak"]["cnps_offset_ns"].as_u64()),
        (1, Some(1), Some(10_030_000))
    );
    assert_eq!(sum(&data["throughput"]["cnps"]), 1);
    assert_eq!(
        data["throughput"]["cnps"].as_array().unwrap().len(),
        data["throughput"]["bins"].as_array().unwrap().len()
    );
    // Priority 3 carries the data and the ACKs (DSCP 26): every RoCE byte on it.
    let back = flow(&fine, 0x161);
    let acks = back["bytes"].as_u64().unwrap() - sum(&p6["bytes"]);
    assert_eq!(sum(&p3["bytes"]), 212 * 1098 + acks);
    assert_eq!(sum(&p3["ce"]), 6);
    // The pause: 65,535 quanta at 100G, expired before the capture's end, the same in the
    // fabric series as in its PFC timeline.
    let paused = fine["pfc"][0]["paused_ns"].as_u64().unwrap();
    assert_eq!(paused, 65_535 * 512 * 10 / 1_000); // 512 bit times of 10 ps
    assert_eq!(sum(&p3["pause_ns"]), paused);
    // Series stay bounded: 21 ms in at most 256 fabric bins (10 µs doubled to 160 µs) and
    // 64 flow bins.
    let pt = &fine["timeline"]["points"][0];
    assert_eq!(pt["bin_ns"], 160_000);
    assert!(p3["bytes"].as_array().unwrap().len() <= 256);
    assert!(data["throughput"]["bins"].as_array().unwrap().len() <= 64);

    // At 10 ms the burst is an average: under a hundredth of its rate.
    let coarse = microburst("10ms");
    let pk = &priority(&coarse, 3)["peak"];
    assert_eq!(coarse["timeline"]["base_ns"], 10_000_000);
    assert!(pk["gbps"].as_f64().unwrap() < burst_gbps / 50.0, "{pk}");
    assert_eq!(pk["offset_ns"], 10_000_000);
    assert_eq!(flow(&coarse, 0x162)["throughput"]["burst"]["bin_ns"], 10_000_000);
}

#[test]
fn the_microbursts_section_shows_at_a_fine_bin_only() {
    let path = common::root().join("samples/microburst.pcap");
    let text = |bin: &str| {
        let o = run(&["report", "--bin", bin, "-r", path.to_str().unwrap()]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let fine = text("10us");
    assert!(fine.contains("MICROBURSTS (the busiest 10 µs bins"), "{fine}");
    assert!(
        fine.contains("priority 3: 10.54 Gb/s at +10.020 ms")
            && fine.contains("most CE: 6 of 12 packets at +10.020 ms"),
        "{fine}"
    );
    assert!(fine.contains("10.0.0.61 → 10.0.0.62 QP 0x162: 10.54 Gb/s at +10.020 ms"), "{fine}");
    assert!(!text("10ms").contains("MICROBURSTS"));
    // A width out of range is refused, naming what is taken.
    let o = run(&["report", "--bin", "500ns", "-r", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a bin width from 1us to 1s"));
}
