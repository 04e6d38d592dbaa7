//! `samples/nccl/`: an NCCL job's traffic and the environment files it is checked against
//! (`rocescope report --nccl-env FILE`; docs/verdicts.md "NCCL settings against the wire").
//!
//! The job: three hosts in a ring (10.0.0.101 → .102 → .103 → .101), each connection on
//! two QPs (NCCL_IB_QPS_PER_CONNECTION=2, NVIDIA/nccl `connect.cc`: a connection's QPs are
//! created in pairs, sender and receiver). On each QP pair the sender RDMA-WRITEs the data
//! and the receiver RDMA-WRITEs small CTS ("FIFO") messages back (NVIDIA/nccl `p2p.cc`
//! `ncclIbPostFifo`), each side ACKing the other's writes; everything on DSCP 26 with ECT(0)
//! (NCCL_IB_TC=104 or 106: mlx5 writes traffic_class >> 2 as the DSCP, `mlx5_set_path()`),
//! untagged, RoCEv2 over IPv4 (the GID at index 3 of a typical mlx5 table). One receiver
//! answers a CE mark with a CNP on DSCP 48 (the NIC's CNP class, not NCCL's). One data
//! packet is lost beyond the capture point three times: the sender resends it after 75 ms
//! each time with no NAK (its ACK timeout: NCCL_IB_TIMEOUT=14 is 67.1 ms), three retries of
//! one PSN before it gets through.
//!
//! `.expected.json` carries an `nccl` list: per environment file, the options of a run,
//! its exit status and every variable's verdict and value that would match, worked out
//! here by construction (tests/nccl.rs runs them).

use crate::fabric::{Conn, Gen, Host, Req};
use rocescope_decoder::build::ExtRepr;
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::{Ecn, Opcode};
use serde_json::{json, Value};

/// The data's DSCP.
const DSCP: u8 = 26;
/// The CNP's DSCP (the NIC's own class).
const CNP_DSCP: u8 = 48;
/// QPs per connection.
const QPS: u32 = 2;
/// The time between the lost packet's transmissions.
const RESEND_GAP_US: i64 = 75_000;
/// The mismatching file's NCCL_IB_TC (DSCP 24).
const MISMATCH_TC: u32 = 96;
/// Times it is resent.
const RESENDS: u32 = 3;

/// A QP pair: the sender's data connection and the receiver's CTS connection on it.
struct Pair {
    data: Conn,
    cts: Conn,
}

/// The ring's QP pairs: connection `i` from host `i` to host `i + 1`, `QPS` pairs each.
fn pairs(hosts: &[Host; 3]) -> Vec<Pair> {
    let mut v = Vec::new();
    for (i, s) in hosts.iter().enumerate() {
        let r = hosts.get((i + 1) % 3).copied().unwrap_or(*s);
        for q in 0..QPS {
            let s_qpn = 0x1000 + (i as u32) * 0x10 + q * 2;
            let r_qpn = s_qpn + 1;
            let data = Conn::new(*s, r, s_qpn, r_qpn, 100 * s_qpn);
            let cts = Conn::new(r, *s, r_qpn, s_qpn, 100 * r_qpn);
            v.push(Pair { data, cts });
        }
    }
    v
}

/// One round of the job: every QP pair's CTS, then its data.
fn round(g: &mut Gen, pairs: &mut [Pair]) {
    for p in pairs.iter_mut() {
        g.write(&mut p.cts, 64, true);
        g.wait_us(2);
        g.write(&mut p.data, 4096, true);
        g.wait_us(5);
    }
}

/// Build the capture; the runs' expectations.
fn job(g: &mut Gen) -> Value {
    let hosts = [Host::v4(101), Host::v4(102), Host::v4(103)];
    let mut pairs = pairs(&hosts);
    for p in &pairs {
        debug_assert_eq!(p.data.dscp, DSCP);
    }
    round(g, &mut pairs);
    // A CE mark on the first pair's data, answered by a CNP on the CNP class.
    if let Some(p) = pairs.first_mut() {
        p.data.ecn = Ecn::Ce;
        g.event("ecn_ce", "CE-marked WRITE".into());
        g.write(&mut p.data, 1024, true);
        p.data.ecn = Ecn::Ect0;
        g.wait_us(2);
        g.event("cnp", format!("CNP on DSCP {CNP_DSCP}"));
        g.cnp(p.data.b, p.data.a, p.data.a_qpn, CNP_DSCP, None);
        g.wait_us(5);
    }
    round(g, &mut pairs);
    // The second pair's WRITE lost beyond the capture point, resent after each timeout.
    if let Some(p) = pairs.get_mut(1) {
        let c = &mut p.data;
        let reth = RethRepr { va: 0x7f00_0000_0000, rkey: 0x1234, dma_len: 1024 };
        let ext = ExtRepr { reth: Some(reth), ..Default::default() };
        let psn = g.request(c, Opcode::RC_WRITE_ONLY, ext, 1024, true, Req::New);
        for k in 1..=RESENDS {
            g.wait_us(RESEND_GAP_US);
            c.psn = psn;
            g.event("retransmit", format!("PSN {psn} resent ({k} of {RESENDS}) after 75 ms with no NAK"));
            g.request(c, Opcode::RC_WRITE_ONLY, ext, 1024, true, Req::RetransmitTimeout);
        }
        c.msn = (c.msn + 1) & 0xFF_FFFF;
        g.wait_us(3);
        g.ack(c, psn);
        g.wait_us(5);
    }
    round(g, &mut pairs);
    runs()
}

/// The environment files, by construction.
pub const MATCH_ENV: &str = "# The job's environment (env | grep NCCL), NCCL 2.23.4\n# nccl 2.23.4\nNCCL_DEBUG=INFO\nexport NCCL_IB_TC=0x6a\nNCCL_IB_SL=3\nNCCL_IB_TIMEOUT=14\nNCCL_IB_RETRY_CNT=7\nNCCL_IB_GID_INDEX=3\nNCCL_IB_QPS_PER_CONNECTION=2\nNCCL_IB_HCA=mlx5_0:1\n";

/// Another site's settings, none of which the capture shows.
pub const MISMATCH_ENV: &str = "# Settings copied from another cluster\n# nccl 2.23.4\nexport NCCL_IB_TC=96\nexport NCCL_IB_TIMEOUT=12\nexport NCCL_IB_RETRY_CNT=2\nexport NCCL_IB_GID_INDEX=0\nexport NCCL_IB_QPS_PER_CONNECTION=\"4\"\n";

/// No NCCL_IB_* variable and no version: NCCL's defaults.
pub const DEFAULTS_ENV: &str = "NCCL_DEBUG=INFO\nNCCL_SOCKET_IFNAME=eth0\n";

/// One variable's expected verdict.
fn v(name: &str, verdict: &str, would: Option<String>) -> Value {
    json!({ "name": name, "verdict": verdict, "would_match": would })
}

/// The timeout exponent whose timeout (4.096 µs × 2^t) the gap just passes: the timer fired
/// after it.
fn fitting_timeout(gap_ns: i64) -> u32 {
    (gap_ns / 4096).max(1).ilog2()
}

fn runs() -> Value {
    // The TC that puts DSCP 26 on the wire, with the mismatching file's low bits (those of
    // MISMATCH_TC).
    let tc = (u32::from(DSCP) << 2) | (MISMATCH_TC & 3);
    let timeout = fitting_timeout(RESEND_GAP_US * 1000);
    json!([
        {
            "about": "the job's own settings: every checked variable matches, SL is not checked (untagged frames carry no PCP)",
            "env": "nccl-job.match.env",
            "args": [],
            "exit": 0,
            "findings": { "warning": 0, "info": 0 },
            "variables": [
                v("NCCL_IB_TC", "match", None),
                v("NCCL_IB_SL", "not_checked", None),
                v("NCCL_IB_TIMEOUT", "match", None),
                v("NCCL_IB_RETRY_CNT", "match", None),
                v("NCCL_IB_GID_INDEX", "match", None),
                v("NCCL_IB_QPS_PER_CONNECTION", "match", None),
                v("NCCL_IB_HCA", "not_checked", None),
            ],
        },
        {
            "about": "another cluster's settings: DSCP 24, a 16.8 ms timeout, 2 retries, GID index 0, 4 QPs per connection",
            "env": "nccl-job.mismatch.env",
            "args": ["--fail-on", "warning"],
            "exit": 4,
            "findings": { "warning": 4, "info": 1 },
            "variables": [
                v("NCCL_IB_TC", "mismatch", Some(tc.to_string())),
                v("NCCL_IB_TIMEOUT", "mismatch", Some(timeout.to_string())),
                v("NCCL_IB_RETRY_CNT", "mismatch", Some(format!("{RESENDS} or more (at least {RESENDS} retries seen; NCCL's default is 7)"))),
                v("NCCL_IB_GID_INDEX", "mismatch", Some("3 (on a typical table; show_gids names the index that gives RoCEv2 over IPv4)".into())),
                // Any divisor of the QP pairs per host pair fits: QPS, or 1.
                v("NCCL_IB_QPS_PER_CONNECTION", "mismatch", Some(format!("{QPS} (or 1)"))),
            ],
        },
        {
            "about": "no NCCL_IB_* variable and no version: the defaults; TC 0 is not what the wire shows (info: the host or the application may set the class)",
            "env": "nccl-job.defaults.env",
            "args": [],
            "exit": 0,
            "findings": { "warning": 0, "info": 1 },
            "variables": [
                v("NCCL_IB_TC", "mismatch", Some((u32::from(DSCP) << 2).to_string())),
                v("NCCL_IB_TIMEOUT", "match", None),
                v("NCCL_IB_RETRY_CNT", "match", None),
                v("NCCL_IB_GID_INDEX", "match", None),
                v("NCCL_IB_QPS_PER_CONNECTION", "match", None),
            ],
        },
    ])
}

/// The capture, its expectations and the environment files, as (path relative to the
/// samples directory, bytes).
pub fn outputs() -> Vec<(String, Vec<u8>)> {
    let mut g = Gen::new();
    let nccl = job(&mut g);
    let description = "An NCCL job: a ring of three hosts, two QPs per connection, data and CTS writes on DSCP 26 (RoCEv2, IPv4, untagged), a CNP on DSCP 48, one WRITE resent three times 75 ms apart with no NAK";
    let (pcap, json) = crate::render("nccl-job", description, &g);
    let mut doc: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
    if let Some(o) = doc.as_object_mut() {
        o.insert("nccl".into(), nccl);
    }
    let mut json = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    json.push(b'\n');
    vec![
        ("nccl/nccl-job.pcap".into(), pcap),
        ("nccl/nccl-job.expected.json".into(), json),
        ("nccl/nccl-job.match.env".into(), MATCH_ENV.as_bytes().to_vec()),
        ("nccl/nccl-job.mismatch.env".into(), MISMATCH_ENV.as_bytes().to_vec()),
        ("nccl/nccl-job.defaults.env".into(), DEFAULTS_ENV.as_bytes().to_vec()),
    ]
}
