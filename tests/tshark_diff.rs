//! Differential test against tshark (the reference decoder): over every real capture and
//! every sample, each field tshark decodes correctly must agree with rocescope, field by
//! field. Where tshark is wrong or blind, the rule below says so (docs/tshark-differences.md):
//!
//! * frames tshark does not dissect as InfiniBand (the low-source-port TFTP misreading in
//!   `roce.pcap`): its InfiniBand fields are absent, so nothing is compared there;
//! * CNP 0x81, XRC, FLUSH, ATOMIC WRITE and manufacturer opcodes: tshark stops after the
//!   BTH, so only the fields it prints are compared;
//! * Mellanox DC responses: tshark reads the RDETH of a DC ACK as its AETH; AETH skipped;
//! * FECN/BECN: tshark has no fields for them (byte 4 is "reserved"): not compared;
//! * ERF (native InfiniBand) captures are outside rocescope's scope and skipped.
//!
//! Skips with a message where tshark is not installed.

mod common;

use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions, Ip, MacControl, Packet, RoceVersion};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIELDS: &[&str] = &[
    "frame.number",
    "frame.protocols",
    "eth.src",
    "eth.dst",
    "eth.type",
    "vlan.id",
    "vlan.priority",
    "vlan.dei",
    "ieee8021ad.id",
    "ieee8021ad.priority",
    "ieee8021ad.dei",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.ttl",
    "ip.len",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "ipv6.hlim",
    "ipv6.plen",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "infiniband.grh.tclass",
    "infiniband.grh.flowlabel",
    "infiniband.grh.paylen",
    "infiniband.grh.nxthdr",
    "infiniband.grh.hoplmt",
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.reserved7",
    "infiniband.bth.psn",
    "infiniband.rdeth.eecnxt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.atomicacketh.origremdt",
    "infiniband.immdt",
    "infiniband.ieth",
    "infiniband.invariant.crc",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
    "macc.pause_time",
];

/// Fields that carry several values per frame (one per tag); the rest compare their first.
const LISTS: &[&str] =
    &["vlan.id", "vlan.priority", "vlan.dei", "ieee8021ad.id", "ieee8021ad.priority", "ieee8021ad.dei"];
/// Byte fields tshark prints as bare hex.
const HEX_BYTES: &[&str] = &["infiniband.immdt", "infiniband.ieth"];

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Val {
    N(u64),
    S(String),
}

fn parse(field: &str, s: &str) -> Val {
    let s = s.trim();
    if HEX_BYTES.contains(&field) {
        return u64::from_str_radix(s, 16).map(Val::N).unwrap_or_else(|_| Val::S(s.into()));
    }
    if let Some(h) = s.strip_prefix("0x") {
        if let Ok(n) = u64::from_str_radix(h, 16) {
            return Val::N(n);
        }
    }
    if let Ok(n) = s.parse::<u64>() {
        return Val::N(n);
    }
    match s {
        "True" => return Val::N(1),
        "False" => return Val::N(0),
        _ => {}
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Val::S(ip.to_string());
    }
    Val::S(s.to_ascii_lowercase())
}

type Fields = BTreeMap<&'static str, Vec<Val>>;

fn ours(p: &Packet<'_>, opts: &DecodeOptions) -> Fields {
    let mut f: Fields = BTreeMap::new();
    let mut put = |k: &'static str, v: Val| f.entry(k).or_default().push(v);
    let mac = |m: [u8; 6]| Val::S(rocescope_decoder::link::mac_string(&m));
    if let rocescope_decoder::Link::Ethernet(e) = p.link {
        put("eth.src", mac(e.src()));
        put("eth.dst", mac(e.dst()));
        put("eth.type", Val::N(u64::from(e.ethertype())));
    }
    for t in p.vlans.as_slice() {
        let pre = if t.tpid == 0x88A8 {
            ["ieee8021ad.id", "ieee8021ad.priority", "ieee8021ad.dei"]
        } else {
            ["vlan.id", "vlan.priority", "vlan.dei"]
        };
        put(pre[0], Val::N(u64::from(t.vid)));
        put(pre[1], Val::N(u64::from(t.pcp)));
        put(pre[2], Val::N(u64::from(t.dei)));
    }
    match &p.ip {
        Some(ip @ Ip::V4(_)) => {
            put("ip.src", Val::S(ip.src().to_string()));
            put("ip.dst", Val::S(ip.dst().to_string()));
            put("ip.dsfield.dscp", Val::N(u64::from(ip.dscp())));
            put("ip.dsfield.ecn", Val::N(ip.ecn() as u64));
            put("ip.ttl", Val::N(u64::from(ip.ttl())));
            put("ip.len", Val::N(u64::from(ip.len_field())));
        }
        Some(ip @ Ip::V6(_)) => {
            put("ipv6.src", Val::S(ip.src().to_string()));
            put("ipv6.dst", Val::S(ip.dst().to_string()));
            put("ipv6.tclass.dscp", Val::N(u64::from(ip.dscp())));
            put("ipv6.tclass.ecn", Val::N(ip.ecn() as u64));
            put("ipv6.hlim", Val::N(u64::from(ip.ttl())));
            put("ipv6.plen", Val::N(u64::from(ip.len_field())));
        }
        None => {}
    }
    if let Some(u) = &p.udp {
        put("udp.srcport", Val::N(u64::from(u.source_port())));
        put("udp.dstport", Val::N(u64::from(u.destination_port())));
        put("udp.length", Val::N(u64::from(u.length())));
    }
    if let Some(r) = &p.roce {
        if let Some(g) = r.grh {
            put("infiniband.grh.tclass", Val::N(u64::from(g.tclass())));
            put("infiniband.grh.flowlabel", Val::N(u64::from(g.flow_label())));
            put("infiniband.grh.paylen", Val::N(u64::from(g.paylen())));
            put("infiniband.grh.nxthdr", Val::N(u64::from(g.nxthdr())));
            put("infiniband.grh.hoplmt", Val::N(u64::from(g.hoplmt())));
            put("infiniband.grh.sgid", Val::S(g.sgid().to_string()));
            put("infiniband.grh.dgid", Val::S(g.dgid().to_string()));
        }
        let b = r.bth;
        put("infiniband.bth.opcode", Val::N(u64::from(b.opcode().0)));
        put("infiniband.bth.se", Val::N(u64::from(b.se())));
        put("infiniband.bth.m", Val::N(u64::from(b.migreq())));
        put("infiniband.bth.padcnt", Val::N(u64::from(b.pad_count())));
        put("infiniband.bth.tver", Val::N(u64::from(b.tver())));
        put("infiniband.bth.p_key", Val::N(u64::from(b.pkey())));
        put("infiniband.bth.destqp", Val::N(u64::from(b.dest_qp())));
        put("infiniband.bth.a", Val::N(u64::from(b.ack_req())));
        put("infiniband.bth.reserved7", Val::N(u64::from(b.resv7())));
        put("infiniband.bth.psn", Val::N(u64::from(b.psn())));
        let e = &r.ext;
        if let Some(h) = e.rdeth {
            put("infiniband.rdeth.eecnxt", Val::N(u64::from(h.eecn())));
        }
        if let Some(h) = e.deth {
            put("infiniband.deth.q_key", Val::N(u64::from(h.qkey())));
            put("infiniband.deth.srcqp", Val::N(u64::from(h.src_qp())));
        }
        if let Some(h) = e.reth {
            put("infiniband.reth.va", Val::N(h.va()));
            put("infiniband.reth.r_key", Val::N(u64::from(h.rkey())));
            put("infiniband.reth.dmalen", Val::N(u64::from(h.dma_len())));
        }
        if let Some(h) = e.atomiceth {
            // tshark shows the AtomicETH address and key under the RETH field names.
            put("infiniband.reth.va", Val::N(h.va()));
            put("infiniband.reth.r_key", Val::N(u64::from(h.rkey())));
            put("infiniband.atomiceth.swapdt", Val::N(h.swap()));
            put("infiniband.atomiceth.cmpdt", Val::N(h.compare()));
        }
        if let Some(h) = e.aeth {
            put("infiniband.aeth.syndrome", Val::N(u64::from(h.syndrome())));
            put("infiniband.aeth.msn", Val::N(u64::from(h.msn())));
        }
        if let Some(h) = e.atomicacketh {
            put("infiniband.atomicacketh.origremdt", Val::N(h.orig()));
        }
        if let Some(h) = e.immdt {
            put("infiniband.immdt", Val::N(u64::from(h.value())));
        }
        if let Some(h) = e.ieth {
            put("infiniband.ieth", Val::N(u64::from(h.rkey())));
        }
        if let Some(v) = r.icrc.value {
            // tshark reads the ICRC big-endian; rocescope keeps the wire's little-endian word.
            put("infiniband.invariant.crc", Val::N(u64::from(v.swap_bytes())));
        }
    }
    match &p.mac_control {
        Some(MacControl::Pfc(pfc)) => {
            put("macc.opcode", Val::N(0x0101));
            put("macc.cbfc.enbv", Val::N(u64::from(pfc.enable_vector)));
            let quanta_fields = FIELDS.iter().filter(|f| f.starts_with("macc.cbfc.pause_time."));
            for (k, q) in quanta_fields.zip(pfc.quanta) {
                put(k, Val::N(u64::from(q)));
            }
        }
        Some(MacControl::Pause(pause)) => {
            put("macc.opcode", Val::N(1));
            put("macc.pause_time", Val::N(u64::from(pause.quanta)));
        }
        Some(MacControl::Other { opcode }) => put("macc.opcode", Val::N(u64::from(*opcode))),
        None => {}
    }
    let _ = opts;
    f
}

/// Per-file outcome.
#[derive(Debug, Default)]
struct Outcome {
    compared: u64,
    mismatches: Vec<String>,
    tshark_missed_roce: u64,
}

fn tshark_rows(path: &Path) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(path).args([
        "-n",
        "-T",
        "fields",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
        "-E",
        "separator=/t",
    ]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split('\t').map(str::to_owned).collect()).collect()
}

fn compare_file(path: &Path) -> Outcome {
    let opts = DecodeOptions::default();
    let rows = tshark_rows(path);
    let mut reader = CaptureReader::open(path).unwrap();
    let mut out = Outcome::default();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let mut i = 0;
    while let Some(rec) = reader.next_record().unwrap() {
        let row = rows.get(i).unwrap_or_else(|| panic!("{name}: tshark printed fewer rows"));
        i += 1;
        let p = decode(rec.link_type, rec.data, &opts);
        let mine = ours(&p, &opts);
        let protocols = row.get(1).cloned().unwrap_or_default();
        let tshark_ib = protocols.split(':').any(|x| x == "infiniband");
        if p.roce.is_some() && !tshark_ib {
            out.tshark_missed_roce += 1;
        }
        let op = p.roce.as_ref().map(|r| r.bth.opcode().0).unwrap_or(0);
        let truncated =
            p.roce.as_ref().is_some_and(|r| r.icrc.status == rocescope_decoder::IcrcStatus::Truncated);
        let dc = p.roce.as_ref().is_some_and(|r| r.version == RoceVersion::V2 && (0x40..=0x5F).contains(&op));
        for (k, field) in FIELDS.iter().enumerate().skip(2) {
            let raw = row.get(k).map(String::as_str).unwrap_or("");
            if raw.is_empty() {
                continue; // tshark did not decode this field: nothing to compare
            }
            if field.starts_with("infiniband.") && !tshark_ib {
                continue;
            }
            if dc && field.starts_with("infiniband.aeth") {
                continue; // tshark reads a DC ACK's RDETH as its AETH
            }
            if *field == "infiniband.invariant.crc" && truncated {
                continue; // tshark takes the last 4 captured bytes, which are payload here
            }
            let theirs: Vec<Val> = raw.split(',').map(|s| parse(field, s)).collect();
            let mine_v = mine.get(field).cloned().unwrap_or_default();
            let (t, m) = if LISTS.contains(field) {
                (theirs, mine_v)
            } else {
                (theirs.into_iter().take(1).collect(), mine_v.into_iter().take(1).collect())
            };
            out.compared += 1;
            if t != m {
                out.mismatches.push(format!("{name} frame {i}: {field}: tshark {t:?}, rocescope {m:?}"));
            }
        }
    }
    assert_eq!(i, rows.len(), "{name}: tshark printed more rows than frames");
    out
}

fn tshark_available() -> bool {
    let ok = Command::new("tshark").arg("-v").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: tshark is not installed (apt-get install tshark)");
    }
    ok
}

fn inputs() -> Vec<PathBuf> {
    let mut files = common::captures_in(&common::root().join("samples"));
    if let Some(dir) = common::real_captures() {
        files.extend(common::captures_in(&dir).into_iter().filter(|p| {
            // ERF (native InfiniBand, link type 197) is not RoCE and not decoded by rocescope.
            CaptureReader::open(p).ok().and_then(|r| {
                let mut r = r;
                r.next_record().ok().flatten().map(|rec| rec.link_type.0 != 197)
            }) != Some(false)
        }));
    }
    files
}

#[test]
fn agrees_with_tshark_field_by_field() {
    if !tshark_available() {
        return;
    }
    let files = inputs();
    let half = files.len() / 2;
    let (a, b) = files.split_at(half);
    let results: Vec<(PathBuf, Outcome)> = std::thread::scope(|s| {
        let h = s.spawn(|| a.iter().map(|p| (p.clone(), compare_file(p))).collect::<Vec<_>>());
        let mut r: Vec<_> = b.iter().map(|p| (p.clone(), compare_file(p))).collect();
        r.extend(h.join().unwrap());
        r
    });
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for (path, o) in &results {
        compared += o.compared;
        mismatches.extend(o.mismatches.iter().cloned());
        let name = path.file_name().unwrap().to_string_lossy();
        // tshark's known blind spot: roce.pcap's low UDP source ports make it pick TFTP for
        // 37 RoCE frames (INDEX.md); rocescope decides by destination port only.
        let expected_missed = if name == "roce.pcap" { 37 } else { 0 };
        assert_eq!(
            o.tshark_missed_roce, expected_missed,
            "{name}: frames rocescope decodes as RoCE but tshark does not"
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first ones:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(400)].join("\n")
    );
    eprintln!("compared {compared} fields over {} captures", results.len());
    assert!(compared > 20_000, "only {compared} fields compared");
}
