//! `rocescope report --parquet DIR`: the analysis as Apache Parquet files, so the captures of
//! a fleet can be queried together in DuckDB, DataFusion or Spark. Three tables per run:
//!
//! - `packets-STEM-TIME.parquet`: one row per RoCE packet (CNPs included) and per PFC or
//!   802.3x PAUSE frame, written while the capture is read, in row groups of
//!   [`BATCH_ROWS`] rows: memory does not grow with the capture;
//! - `flows-STEM-TIME.parquet`: one row per flow of the final report;
//! - `intervals-STEM-TIME.parquet`: one row per flow and time bin of its throughput series.
//!
//! STEM names the capture (the file name without `.pcap`/`.pcapng`/`.gz`, the interface),
//! TIME is its first frame's UTC time (`20261203T142922Z`). Each file is written under a
//! hidden temporary name and renamed when complete, so a glob never sees a partial file.
//! A file already there is replaced only when its `rocescope.capture_id` metadata says it
//! holds the same capture (a rerun); otherwise the run takes the next free suffix (`-2`, ...)
//! and says so. The columns: docs/parquet.md, which must change with this file.

use crate::tmpfile::Temp;
use anyhow::Context;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    TimestampNanosecondBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use rocescope_analyzer::report::{FlowReport, StreamedReport};
use rocescope_analyzer::stats::LatencySummary;
use rocescope_capture::{text, Record};
use rocescope_decoder::{DecodeOptions, MacControl, Packet};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::hash::Hash;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per record batch and per row group: what the writer holds in memory per table.
pub const BATCH_ROWS: usize = 64 * 1024;

/// Version of the tables' layout, in each file's metadata (`rocescope.parquet_schema`): it
/// changes only when a column is removed or renamed or changes its type or meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// Key of the metadata entry that tells one capture from another.
const ID_KEY: &str = "rocescope.capture_id";

/// Columns written without a dictionary (see [`Table::create`]).
const UNIQUE: [&str; 12] = [
    "frame",
    "ts_ns",
    "bth_psn",
    "aeth_msn",
    "reth_va",
    "icrc_value",
    "immdt",
    "atomiceth_va",
    "atomiceth_swap",
    "atomiceth_compare",
    "atomicacketh_orig",
    "start_ns",
];

/// The three tables, in the order they are written.
const TABLES: [&str; 3] = ["packets", "flows", "intervals"];

/// Append the column `name` (the builder's contents, which it then forgets) to `out`.
/// What the fabric's shape says of one flow: the training iterations its burst ended, its
/// rank among the elephants (1 the largest), the ECMP path the modelled hash puts it on.
#[derive(Clone, Copy, Default)]
struct FlowShape {
    iterations_last: u64,
    elephant_rank: Option<u32>,
    ecmp_path: Option<u16>,
}

/// [`FlowShape`] of every flow that has one, by flow index.
struct FlowShapes(std::collections::BTreeMap<usize, FlowShape>);

impl FlowShape {
    fn of(report: &rocescope_analyzer::report::Report) -> FlowShapes {
        let mut m: std::collections::BTreeMap<usize, FlowShape> = std::collections::BTreeMap::new();
        for l in report.rhythm.iter().flat_map(|r| &r.last_flows) {
            m.entry(l.flow).or_default().iterations_last += l.iterations;
        }
        for (rank, e) in (1u32..).zip(&report.elephants.top) {
            m.entry(e.flow).or_default().elephant_rank = Some(rank);
        }
        for (flow, path) in report.ecmp.prediction.iter().flat_map(|p| &p.placed) {
            m.entry(*flow).or_default().ecmp_path = Some(*path);
        }
        FlowShapes(m)
    }
}

impl FlowShapes {
    fn get(&self, flow: usize) -> FlowShape {
        self.0.get(&flow).copied().unwrap_or_default()
    }
}

fn col(out: &mut Vec<(Field, ArrayRef)>, name: &str, nullable: bool, b: &mut dyn ArrayBuilder) {
    let a = b.finish();
    out.push((Field::new(name, a.data_type().clone(), nullable), a));
}

fn timestamps() -> TimestampNanosecondBuilder {
    TimestampNanosecondBuilder::new().with_timezone("UTC")
}

/// Append `v`'s text to a string column without a temporary `String`.
fn display(b: &mut StringBuilder, v: impl std::fmt::Display) {
    // Writing into the builder's buffer cannot fail.
    let _ = write!(b, "{v}");
    b.append_value("");
}

/// Addresses as text, each formatted once: formatting every packet's four addresses took a
/// quarter of the time. Bounded: cleared when it holds 64k of them.
struct Names<K> {
    map: HashMap<K, Box<str>>,
}

impl<K: Hash + Eq + Copy> Names<K> {
    fn new() -> Self {
        Names { map: HashMap::new() }
    }
    fn append<D: std::fmt::Display>(&mut self, b: &mut StringBuilder, k: K, show: impl Fn(K) -> D) {
        if self.map.len() >= 1 << 16 {
            self.map.clear();
        }
        let s = self.map.entry(k).or_insert_with(|| show(k).to_string().into_boxed_str());
        b.append_value(s);
    }
}

/// The packet table's columns, as builders.
struct PacketCols {
    macs: Names<[u8; 6]>,
    ips: Names<IpAddr>,
    capture: StringBuilder,
    point: StringBuilder,
    frame: UInt64Builder,
    ts_ns: TimestampNanosecondBuilder,
    kind: StringBuilder,
    caplen: UInt32Builder,
    len: UInt32Builder,
    wire_len: UInt64Builder,
    tunnel: StringBuilder,
    eth_src: StringBuilder,
    eth_dst: StringBuilder,
    vlan_id: UInt16Builder,
    pcp: UInt8Builder,
    ip_version: UInt8Builder,
    ip_src: StringBuilder,
    ip_dst: StringBuilder,
    ip_dscp: UInt8Builder,
    ip_ecn: UInt8Builder,
    ip_ttl: UInt8Builder,
    grh_tclass: UInt8Builder,
    grh_sgid: StringBuilder,
    grh_dgid: StringBuilder,
    udp_sport: UInt16Builder,
    udp_dport: UInt16Builder,
    bth_opcode: UInt8Builder,
    bth_opcode_name: StringBuilder,
    bth_se: BooleanBuilder,
    bth_m: BooleanBuilder,
    bth_pad: UInt8Builder,
    bth_tver: UInt8Builder,
    bth_pkey: UInt16Builder,
    bth_fecn: BooleanBuilder,
    bth_becn: BooleanBuilder,
    bth_dqpn: UInt32Builder,
    bth_ackreq: BooleanBuilder,
    bth_psn: UInt32Builder,
    deth_qkey: UInt32Builder,
    deth_srcqp: UInt32Builder,
    xrceth_srqn: UInt32Builder,
    reth_va: UInt64Builder,
    reth_rkey: UInt32Builder,
    reth_dmalen: UInt32Builder,
    atomiceth_va: UInt64Builder,
    atomiceth_rkey: UInt32Builder,
    atomiceth_swap: UInt64Builder,
    atomiceth_compare: UInt64Builder,
    aeth_syndrome: UInt8Builder,
    aeth_kind: StringBuilder,
    aeth_msn: UInt32Builder,
    aeth_nak: StringBuilder,
    aeth_rnr_timer_us: UInt32Builder,
    atomicacketh_orig: UInt64Builder,
    immdt: UInt32Builder,
    ieth: UInt32Builder,
    cnp: BooleanBuilder,
    payload_len: UInt32Builder,
    icrc_value: UInt32Builder,
    icrc_status: StringBuilder,
    pfc_enable: UInt16Builder,
    pfc_quanta: ListBuilder<UInt16Builder>,
    pause_quanta: UInt16Builder,
    bad_dst: BooleanBuilder,
    error: StringBuilder,
}

impl PacketCols {
    fn new() -> Self {
        PacketCols {
            macs: Names::new(),
            ips: Names::new(),
            capture: StringBuilder::new(),
            point: StringBuilder::new(),
            frame: UInt64Builder::new(),
            ts_ns: timestamps(),
            kind: StringBuilder::new(),
            caplen: UInt32Builder::new(),
            len: UInt32Builder::new(),
            wire_len: UInt64Builder::new(),
            tunnel: StringBuilder::new(),
            eth_src: StringBuilder::new(),
            eth_dst: StringBuilder::new(),
            vlan_id: UInt16Builder::new(),
            pcp: UInt8Builder::new(),
            ip_version: UInt8Builder::new(),
            ip_src: StringBuilder::new(),
            ip_dst: StringBuilder::new(),
            ip_dscp: UInt8Builder::new(),
            ip_ecn: UInt8Builder::new(),
            ip_ttl: UInt8Builder::new(),
            grh_tclass: UInt8Builder::new(),
            grh_sgid: StringBuilder::new(),
            grh_dgid: StringBuilder::new(),
            udp_sport: UInt16Builder::new(),
            udp_dport: UInt16Builder::new(),
            bth_opcode: UInt8Builder::new(),
            bth_opcode_name: StringBuilder::new(),
            bth_se: BooleanBuilder::new(),
            bth_m: BooleanBuilder::new(),
            bth_pad: UInt8Builder::new(),
            bth_tver: UInt8Builder::new(),
            bth_pkey: UInt16Builder::new(),
            bth_fecn: BooleanBuilder::new(),
            bth_becn: BooleanBuilder::new(),
            bth_dqpn: UInt32Builder::new(),
            bth_ackreq: BooleanBuilder::new(),
            bth_psn: UInt32Builder::new(),
            deth_qkey: UInt32Builder::new(),
            deth_srcqp: UInt32Builder::new(),
            xrceth_srqn: UInt32Builder::new(),
            reth_va: UInt64Builder::new(),
            reth_rkey: UInt32Builder::new(),
            reth_dmalen: UInt32Builder::new(),
            atomiceth_va: UInt64Builder::new(),
            atomiceth_rkey: UInt32Builder::new(),
            atomiceth_swap: UInt64Builder::new(),
            atomiceth_compare: UInt64Builder::new(),
            aeth_syndrome: UInt8Builder::new(),
            aeth_kind: StringBuilder::new(),
            aeth_msn: UInt32Builder::new(),
            aeth_nak: StringBuilder::new(),
            aeth_rnr_timer_us: UInt32Builder::new(),
            atomicacketh_orig: UInt64Builder::new(),
            immdt: UInt32Builder::new(),
            ieth: UInt32Builder::new(),
            cnp: BooleanBuilder::new(),
            payload_len: UInt32Builder::new(),
            icrc_value: UInt32Builder::new(),
            icrc_status: StringBuilder::new(),
            pfc_enable: UInt16Builder::new(),
            pfc_quanta: ListBuilder::new(UInt16Builder::new()),
            pause_quanta: UInt16Builder::new(),
            bad_dst: BooleanBuilder::new(),
            error: StringBuilder::new(),
        }
    }

    fn len(&self) -> usize {
        self.frame.len()
    }

    /// The columns built so far, in table order, with their fields (the builders restart).
    fn finish(&mut self) -> Vec<(Field, ArrayRef)> {
        let mut c = Vec::with_capacity(64);
        col(&mut c, "capture", false, &mut self.capture);
        col(&mut c, "point", false, &mut self.point);
        col(&mut c, "frame", false, &mut self.frame);
        col(&mut c, "ts_ns", false, &mut self.ts_ns);
        col(&mut c, "kind", false, &mut self.kind);
        col(&mut c, "caplen", false, &mut self.caplen);
        col(&mut c, "len", false, &mut self.len);
        col(&mut c, "wire_len", false, &mut self.wire_len);
        col(&mut c, "tunnel", true, &mut self.tunnel);
        col(&mut c, "eth_src", true, &mut self.eth_src);
        col(&mut c, "eth_dst", true, &mut self.eth_dst);
        col(&mut c, "vlan_id", true, &mut self.vlan_id);
        col(&mut c, "pcp", true, &mut self.pcp);
        col(&mut c, "ip_version", true, &mut self.ip_version);
        col(&mut c, "ip_src", true, &mut self.ip_src);
        col(&mut c, "ip_dst", true, &mut self.ip_dst);
        col(&mut c, "ip_dscp", true, &mut self.ip_dscp);
        col(&mut c, "ip_ecn", true, &mut self.ip_ecn);
        col(&mut c, "ip_ttl", true, &mut self.ip_ttl);
        col(&mut c, "grh_tclass", true, &mut self.grh_tclass);
        col(&mut c, "grh_sgid", true, &mut self.grh_sgid);
        col(&mut c, "grh_dgid", true, &mut self.grh_dgid);
        col(&mut c, "udp_sport", true, &mut self.udp_sport);
        col(&mut c, "udp_dport", true, &mut self.udp_dport);
        col(&mut c, "bth_opcode", true, &mut self.bth_opcode);
        col(&mut c, "bth_opcode_name", true, &mut self.bth_opcode_name);
        col(&mut c, "bth_se", true, &mut self.bth_se);
        col(&mut c, "bth_m", true, &mut self.bth_m);
        col(&mut c, "bth_pad", true, &mut self.bth_pad);
        col(&mut c, "bth_tver", true, &mut self.bth_tver);
        col(&mut c, "bth_pkey", true, &mut self.bth_pkey);
        col(&mut c, "bth_fecn", true, &mut self.bth_fecn);
        col(&mut c, "bth_becn", true, &mut self.bth_becn);
        col(&mut c, "bth_dqpn", true, &mut self.bth_dqpn);
        col(&mut c, "bth_ackreq", true, &mut self.bth_ackreq);
        col(&mut c, "bth_psn", true, &mut self.bth_psn);
        col(&mut c, "deth_qkey", true, &mut self.deth_qkey);
        col(&mut c, "deth_srcqp", true, &mut self.deth_srcqp);
        col(&mut c, "xrceth_srqn", true, &mut self.xrceth_srqn);
        col(&mut c, "reth_va", true, &mut self.reth_va);
        col(&mut c, "reth_rkey", true, &mut self.reth_rkey);
        col(&mut c, "reth_dmalen", true, &mut self.reth_dmalen);
        col(&mut c, "atomiceth_va", true, &mut self.atomiceth_va);
        col(&mut c, "atomiceth_rkey", true, &mut self.atomiceth_rkey);
        col(&mut c, "atomiceth_swap", true, &mut self.atomiceth_swap);
        col(&mut c, "atomiceth_compare", true, &mut self.atomiceth_compare);
        col(&mut c, "aeth_syndrome", true, &mut self.aeth_syndrome);
        col(&mut c, "aeth_kind", true, &mut self.aeth_kind);
        col(&mut c, "aeth_msn", true, &mut self.aeth_msn);
        col(&mut c, "aeth_nak", true, &mut self.aeth_nak);
        col(&mut c, "aeth_rnr_timer_us", true, &mut self.aeth_rnr_timer_us);
        col(&mut c, "atomicacketh_orig", true, &mut self.atomicacketh_orig);
        col(&mut c, "immdt", true, &mut self.immdt);
        col(&mut c, "ieth", true, &mut self.ieth);
        col(&mut c, "cnp", true, &mut self.cnp);
        col(&mut c, "payload_len", true, &mut self.payload_len);
        col(&mut c, "icrc_value", true, &mut self.icrc_value);
        col(&mut c, "icrc_status", true, &mut self.icrc_status);
        col(&mut c, "pfc_enable", true, &mut self.pfc_enable);
        col(&mut c, "pfc_quanta", true, &mut self.pfc_quanta);
        col(&mut c, "pause_quanta", true, &mut self.pause_quanta);
        col(&mut c, "bad_dst", true, &mut self.bad_dst);
        col(&mut c, "error", true, &mut self.error);
        c
    }

    /// Add a row for `p` when it is RoCE, PFC or PAUSE; false when it is none of them.
    fn push(
        &mut self,
        ids: (&str, &str, u64),
        rec: &Record<'_>,
        p: &Packet<'_>,
        opts: &DecodeOptions,
    ) -> bool {
        let kind = match (&p.roce, &p.mac_control) {
            (Some(_), _) => "roce",
            (None, Some(MacControl::Pfc(_))) => "pfc",
            (None, Some(MacControl::Pause(_))) => "pause",
            _ => return false,
        };
        let (capture, point, number) = ids;
        self.capture.append_value(capture);
        self.point.append_value(point);
        self.frame.append_value(number);
        self.ts_ns.append_value(rec.ts_ns);
        self.kind.append_value(kind);
        self.caplen.append_value(rec.caplen);
        self.len.append_value(rec.len);
        self.wire_len.append_value(rocescope_analyzer::stats::wire_len(p, rec.len));
        if p.tunnels.iter().next().is_some() {
            let mut first = true;
            for t in p.tunnels.iter() {
                let sep = if first { "" } else { "," };
                first = false;
                let _ = write!(self.tunnel, "{sep}{}", t.kind().key());
            }
            self.tunnel.append_value("");
        } else {
            self.tunnel.append_null();
        }
        match &p.link {
            rocescope_decoder::Link::Ethernet(e) => {
                self.macs.append(&mut self.eth_src, e.src(), Mac);
                self.macs.append(&mut self.eth_dst, e.dst(), Mac);
            }
            _ => {
                self.eth_src.append_null();
                self.eth_dst.append_null();
            }
        }
        let inner = p.vlans.as_slice().last();
        self.vlan_id.append_option(inner.map(|t| t.vid));
        self.pcp.append_option(p.vlans.pcp());
        match &p.ip {
            Some(ip) => {
                self.ip_version.append_value(ip.version());
                self.ips.append(&mut self.ip_src, ip.src(), |a| a);
                self.ips.append(&mut self.ip_dst, ip.dst(), |a| a);
                self.ip_dscp.append_value(ip.dscp());
                self.ip_ecn.append_value(ip.ecn() as u8);
                self.ip_ttl.append_value(ip.ttl());
            }
            None => {
                self.ip_version.append_null();
                self.ip_src.append_null();
                self.ip_dst.append_null();
                self.ip_dscp.append_null();
                self.ip_ecn.append_null();
                self.ip_ttl.append_null();
            }
        }
        match p.roce.as_ref().and_then(|r| r.grh) {
            Some(g) => {
                self.grh_tclass.append_value(g.tclass());
                display(&mut self.grh_sgid, g.sgid());
                display(&mut self.grh_dgid, g.dgid());
            }
            None => {
                self.grh_tclass.append_null();
                self.grh_sgid.append_null();
                self.grh_dgid.append_null();
            }
        }
        self.udp_sport.append_option(p.udp.as_ref().map(|u| u.source_port()));
        self.udp_dport.append_option(p.udp.as_ref().map(|u| u.destination_port()));
        self.push_roce(p, opts);
        match &p.mac_control {
            Some(MacControl::Pfc(pfc)) => {
                self.pfc_enable.append_value(pfc.enable_vector);
                self.pfc_quanta.values().append_slice(&pfc.quanta);
                self.pfc_quanta.append(true);
                self.pause_quanta.append_null();
                self.bad_dst.append_value(pfc.bad_dst);
            }
            Some(MacControl::Pause(pause)) => {
                self.pfc_enable.append_null();
                self.pfc_quanta.append(false);
                self.pause_quanta.append_value(pause.quanta);
                self.bad_dst.append_value(pause.bad_dst);
            }
            _ => {
                self.pfc_enable.append_null();
                self.pfc_quanta.append(false);
                self.pause_quanta.append_null();
                self.bad_dst.append_null();
            }
        }
        match &p.error {
            Some(e) => display(&mut self.error, e),
            None => self.error.append_null(),
        }
        true
    }

    /// The transport columns (all null for PFC and PAUSE rows).
    fn push_roce(&mut self, p: &Packet<'_>, opts: &DecodeOptions) {
        let r = p.roce.as_ref();
        let b = r.map(|r| r.bth);
        self.bth_opcode.append_option(b.map(|b| b.opcode().0));
        self.bth_opcode_name.append_option(b.map(|b| b.opcode().name(opts.opcode)));
        self.bth_se.append_option(b.map(|b| b.se()));
        self.bth_m.append_option(b.map(|b| b.migreq()));
        self.bth_pad.append_option(b.map(|b| b.pad_count()));
        self.bth_tver.append_option(b.map(|b| b.tver()));
        self.bth_pkey.append_option(b.map(|b| b.pkey()));
        self.bth_fecn.append_option(b.map(|b| b.fecn()));
        self.bth_becn.append_option(b.map(|b| b.becn()));
        self.bth_dqpn.append_option(b.map(|b| b.dest_qp()));
        self.bth_ackreq.append_option(b.map(|b| b.ack_req()));
        self.bth_psn.append_option(b.map(|b| b.psn()));
        let e = r.map(|r| r.ext).unwrap_or_default();
        self.deth_qkey.append_option(e.deth.map(|h| h.qkey()));
        self.deth_srcqp.append_option(e.deth.map(|h| h.src_qp()));
        self.xrceth_srqn.append_option(e.xrceth.map(|h| h.srqn()));
        self.reth_va.append_option(e.reth.map(|h| h.va()));
        self.reth_rkey.append_option(e.reth.map(|h| h.rkey()));
        self.reth_dmalen.append_option(e.reth.map(|h| h.dma_len()));
        self.atomiceth_va.append_option(e.atomiceth.map(|h| h.va()));
        self.atomiceth_rkey.append_option(e.atomiceth.map(|h| h.rkey()));
        self.atomiceth_swap.append_option(e.atomiceth.map(|h| h.swap()));
        self.atomiceth_compare.append_option(e.atomiceth.map(|h| h.compare()));
        let a = e.aeth.map(|h| h.repr());
        self.aeth_syndrome.append_option(a.map(|a| a.syndrome));
        self.aeth_kind.append_option(a.map(|a| a.kind().name()));
        self.aeth_msn.append_option(a.map(|a| a.msn));
        self.aeth_nak.append_option(a.and_then(|a| a.nak_code()).map(|c| c.name()));
        self.aeth_rnr_timer_us.append_option(a.and_then(|a| a.rnr_timer_us()));
        self.atomicacketh_orig.append_option(e.atomicacketh.map(|h| h.orig()));
        self.immdt.append_option(e.immdt.map(|h| h.value()));
        self.ieth.append_option(e.ieth.map(|h| h.rkey()));
        self.cnp.append_option(b.map(|b| b.opcode().is_cnp()));
        self.payload_len.append_option(r.map(|r| u32::try_from(r.payload_len).unwrap_or(u32::MAX)));
        self.icrc_value.append_option(r.and_then(|r| r.icrc.value));
        self.icrc_status.append_option(r.map(|r| r.icrc.status.name()));
    }
}

/// `aa:bb:cc:dd:ee:ff` without an allocation.
struct Mac([u8; 6]);

impl std::fmt::Display for Mac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

/// One latency summary as six nullable columns.
#[derive(Default)]
struct LatencyCols {
    count: UInt64Builder,
    min_ns: UInt64Builder,
    mean_ns: UInt64Builder,
    p50_ns: UInt64Builder,
    p99_ns: UInt64Builder,
    max_ns: UInt64Builder,
}

impl LatencyCols {
    fn push(&mut self, l: Option<&LatencySummary>) {
        self.count.append_option(l.map(|l| l.count));
        self.min_ns.append_option(l.map(|l| l.min_ns));
        self.mean_ns.append_option(l.map(|l| l.mean_ns));
        self.p50_ns.append_option(l.map(|l| l.p50_ns));
        self.p99_ns.append_option(l.map(|l| l.p99_ns));
        self.max_ns.append_option(l.map(|l| l.max_ns));
    }
    fn finish(&mut self, c: &mut Vec<(Field, ArrayRef)>, prefix: &str) {
        col(c, &format!("{prefix}_count"), true, &mut self.count);
        col(c, &format!("{prefix}_min_ns"), true, &mut self.min_ns);
        col(c, &format!("{prefix}_mean_ns"), true, &mut self.mean_ns);
        col(c, &format!("{prefix}_p50_ns"), true, &mut self.p50_ns);
        col(c, &format!("{prefix}_p99_ns"), true, &mut self.p99_ns);
        col(c, &format!("{prefix}_max_ns"), true, &mut self.max_ns);
    }
}

/// The flow table's columns: the JSON report's `flows[]` with nested keys joined by `_`.
struct FlowCols {
    capture: StringBuilder,
    point: StringBuilder,
    id: UInt64Builder,
    src: StringBuilder,
    dst: StringBuilder,
    dest_qp: UInt32Builder,
    first_frame: UInt64Builder,
    first_ns: TimestampNanosecondBuilder,
    last_ns: TimestampNanosecondBuilder,
    priority: UInt8Builder,
    packets: UInt64Builder,
    bytes: UInt64Builder,
    payload_bytes: UInt64Builder,
    messages: UInt64Builder,
    requests: UInt64Builder,
    responses: UInt64Builder,
    ecn: [UInt64Builder; 4],
    ecn_ce_fraction: Float64Builder,
    psn_tracked: BooleanBuilder,
    psn: [UInt64Builder; 19],
    psn_max_late_ns: Int64Builder,
    naks: [UInt64Builder; 7],
    naks_rnr_timer_us_min: UInt32Builder,
    naks_rnr_timer_us_max: UInt32Builder,
    acks: UInt64Builder,
    cnps: UInt64Builder,
    cnps_received: UInt64Builder,
    icrc_bad: UInt64Builder,
    dscp: ListBuilder<UInt8Builder>,
    pcp: ListBuilder<UInt8Builder>,
    throughput_bin_ns: UInt64Builder,
    throughput_peak_gbps: Float64Builder,
    throughput_mean_gbps: Float64Builder,
    burst_bin_ns: UInt64Builder,
    burst_gbps: Float64Builder,
    burst_offset_ns: UInt64Builder,
    burst_ce: UInt64Builder,
    latency: [LatencyCols; 4],
    partner: UInt64Builder,
    pairing: StringBuilder,
    cm_start_psn: UInt32Builder,
    ack_timeout_ns: Int64Builder,
    pmtu: UInt32Builder,
    udp_src_port: UInt16Builder,
    udp_src_port_changes: UInt16Builder,
    bursts: UInt64Builder,
    iterations_last: UInt64Builder,
    elephant_rank: UInt32Builder,
    ecmp_path: UInt16Builder,
    health: StringBuilder,
    /// `cc` (null for a flow that saw no CE mark and received no CNP).
    cc_cnp_interval_p50_ns: UInt64Builder,
    cc_cnp_too_fast: UInt64Builder,
    cc_ce_runs_without_cnp: UInt64Builder,
    cc_reaction_evaluated: UInt64Builder,
    cc_reaction_fell: UInt64Builder,
    cc_reaction_mean_ratio: Float64Builder,
}

const ECN_NAMES: [&str; 4] = ["ecn_not_ect", "ecn_ect0", "ecn_ect1", "ecn_ce"];
const PSN_NAMES: [&str; 19] = [
    "psn_gaps",
    "psn_missing",
    "psn_retransmits",
    "psn_retransmits_nak",
    "psn_retransmits_timeout",
    "psn_retransmits_rnr",
    "psn_retransmits_spurious",
    "psn_retransmits_implied",
    "psn_retransmits_unknown",
    "psn_duplicates",
    "psn_out_of_order",
    "psn_late_beyond_window",
    "psn_spurious_naks",
    "psn_read_response_gaps",
    "psn_network_loss_gaps",
    "psn_capture_loss_gaps",
    "psn_resyncs",
    "psn_network_loss_packets",
    "psn_timeout_events",
];
const NAK_NAMES: [&str; 7] = [
    "naks_psn_seq_err",
    "naks_invalid_request",
    "naks_remote_access",
    "naks_remote_operational",
    "naks_invalid_rd",
    "naks_other",
    "naks_rnr",
];
const LATENCY_NAMES: [&str; 4] =
    ["latency_ack", "latency_read", "latency_nak_to_retransmit", "latency_ce_to_cnp"];

impl FlowCols {
    fn new() -> Self {
        FlowCols {
            capture: StringBuilder::new(),
            point: StringBuilder::new(),
            id: UInt64Builder::new(),
            src: StringBuilder::new(),
            dst: StringBuilder::new(),
            dest_qp: UInt32Builder::new(),
            first_frame: UInt64Builder::new(),
            first_ns: timestamps(),
            last_ns: timestamps(),
            priority: UInt8Builder::new(),
            packets: UInt64Builder::new(),
            bytes: UInt64Builder::new(),
            payload_bytes: UInt64Builder::new(),
            messages: UInt64Builder::new(),
            requests: UInt64Builder::new(),
            responses: UInt64Builder::new(),
            ecn: Default::default(),
            ecn_ce_fraction: Float64Builder::new(),
            psn_tracked: BooleanBuilder::new(),
            psn: Default::default(),
            psn_max_late_ns: Int64Builder::new(),
            naks: Default::default(),
            naks_rnr_timer_us_min: UInt32Builder::new(),
            naks_rnr_timer_us_max: UInt32Builder::new(),
            acks: UInt64Builder::new(),
            cnps: UInt64Builder::new(),
            cnps_received: UInt64Builder::new(),
            icrc_bad: UInt64Builder::new(),
            dscp: ListBuilder::new(UInt8Builder::new()),
            pcp: ListBuilder::new(UInt8Builder::new()),
            throughput_bin_ns: UInt64Builder::new(),
            throughput_peak_gbps: Float64Builder::new(),
            throughput_mean_gbps: Float64Builder::new(),
            burst_bin_ns: UInt64Builder::new(),
            burst_gbps: Float64Builder::new(),
            burst_offset_ns: UInt64Builder::new(),
            burst_ce: UInt64Builder::new(),
            latency: Default::default(),
            partner: UInt64Builder::new(),
            pairing: StringBuilder::new(),
            cm_start_psn: UInt32Builder::new(),
            ack_timeout_ns: Int64Builder::new(),
            pmtu: UInt32Builder::new(),
            udp_src_port: UInt16Builder::new(),
            udp_src_port_changes: UInt16Builder::new(),
            bursts: UInt64Builder::new(),
            iterations_last: UInt64Builder::new(),
            elephant_rank: UInt32Builder::new(),
            ecmp_path: UInt16Builder::new(),
            health: StringBuilder::new(),
            cc_cnp_interval_p50_ns: UInt64Builder::new(),
            cc_cnp_too_fast: UInt64Builder::new(),
            cc_ce_runs_without_cnp: UInt64Builder::new(),
            cc_reaction_evaluated: UInt64Builder::new(),
            cc_reaction_fell: UInt64Builder::new(),
            cc_reaction_mean_ratio: Float64Builder::new(),
        }
    }

    fn len(&self) -> usize {
        self.id.len()
    }

    fn finish(&mut self) -> Vec<(Field, ArrayRef)> {
        let mut c = Vec::with_capacity(96);
        col(&mut c, "capture", false, &mut self.capture);
        col(&mut c, "point", false, &mut self.point);
        col(&mut c, "id", false, &mut self.id);
        col(&mut c, "src", false, &mut self.src);
        col(&mut c, "dst", false, &mut self.dst);
        col(&mut c, "dest_qp", false, &mut self.dest_qp);
        col(&mut c, "first_frame", false, &mut self.first_frame);
        col(&mut c, "first_ns", false, &mut self.first_ns);
        col(&mut c, "last_ns", false, &mut self.last_ns);
        col(&mut c, "priority", true, &mut self.priority);
        col(&mut c, "packets", false, &mut self.packets);
        col(&mut c, "bytes", false, &mut self.bytes);
        col(&mut c, "payload_bytes", false, &mut self.payload_bytes);
        col(&mut c, "messages", false, &mut self.messages);
        col(&mut c, "requests", false, &mut self.requests);
        col(&mut c, "responses", false, &mut self.responses);
        for (name, b) in ECN_NAMES.iter().zip(&mut self.ecn) {
            col(&mut c, name, false, b);
        }
        col(&mut c, "ecn_ce_fraction", false, &mut self.ecn_ce_fraction);
        col(&mut c, "psn_tracked", false, &mut self.psn_tracked);
        for (name, b) in PSN_NAMES.iter().zip(&mut self.psn) {
            col(&mut c, name, false, b);
        }
        col(&mut c, "psn_max_late_ns", false, &mut self.psn_max_late_ns);
        for (name, b) in NAK_NAMES.iter().zip(&mut self.naks) {
            col(&mut c, name, false, b);
        }
        col(&mut c, "naks_rnr_timer_us_min", true, &mut self.naks_rnr_timer_us_min);
        col(&mut c, "naks_rnr_timer_us_max", true, &mut self.naks_rnr_timer_us_max);
        col(&mut c, "acks", false, &mut self.acks);
        col(&mut c, "cnps", false, &mut self.cnps);
        col(&mut c, "cnps_received", false, &mut self.cnps_received);
        col(&mut c, "icrc_bad", false, &mut self.icrc_bad);
        col(&mut c, "dscp", false, &mut self.dscp);
        col(&mut c, "pcp", false, &mut self.pcp);
        col(&mut c, "throughput_bin_ns", false, &mut self.throughput_bin_ns);
        col(&mut c, "throughput_peak_gbps", false, &mut self.throughput_peak_gbps);
        col(&mut c, "throughput_mean_gbps", false, &mut self.throughput_mean_gbps);
        col(&mut c, "burst_bin_ns", false, &mut self.burst_bin_ns);
        col(&mut c, "burst_gbps", false, &mut self.burst_gbps);
        col(&mut c, "burst_offset_ns", false, &mut self.burst_offset_ns);
        col(&mut c, "burst_ce", false, &mut self.burst_ce);
        for (name, l) in LATENCY_NAMES.iter().zip(&mut self.latency) {
            l.finish(&mut c, name);
        }
        col(&mut c, "partner", true, &mut self.partner);
        col(&mut c, "pairing", true, &mut self.pairing);
        col(&mut c, "cm_start_psn", true, &mut self.cm_start_psn);
        col(&mut c, "ack_timeout_ns", true, &mut self.ack_timeout_ns);
        col(&mut c, "pmtu", false, &mut self.pmtu);
        col(&mut c, "udp_src_port", true, &mut self.udp_src_port);
        col(&mut c, "udp_src_port_changes", false, &mut self.udp_src_port_changes);
        col(&mut c, "bursts", false, &mut self.bursts);
        col(&mut c, "iterations_last", false, &mut self.iterations_last);
        col(&mut c, "elephant_rank", true, &mut self.elephant_rank);
        col(&mut c, "ecmp_path", true, &mut self.ecmp_path);
        col(&mut c, "health", false, &mut self.health);
        col(&mut c, "cc_cnp_interval_p50_ns", true, &mut self.cc_cnp_interval_p50_ns);
        col(&mut c, "cc_cnp_too_fast", true, &mut self.cc_cnp_too_fast);
        col(&mut c, "cc_ce_runs_without_cnp", true, &mut self.cc_ce_runs_without_cnp);
        col(&mut c, "cc_reaction_evaluated", true, &mut self.cc_reaction_evaluated);
        col(&mut c, "cc_reaction_fell", true, &mut self.cc_reaction_fell);
        col(&mut c, "cc_reaction_mean_ratio", true, &mut self.cc_reaction_mean_ratio);
        c
    }

    /// One flow's row, with what the fabric's shape says of it (`Report::rhythm`,
    /// `Report::elephants`, `Report::ecmp`).
    fn push(&mut self, capture: &str, point: &str, f: &FlowReport, shape: &FlowShape) {
        self.capture.append_value(capture);
        self.point.append_value(point);
        self.id.append_value(f.id as u64);
        self.src.append_value(&f.src);
        self.dst.append_value(&f.dst);
        self.dest_qp.append_value(f.dest_qp);
        self.first_frame.append_value(f.first_frame);
        self.first_ns.append_value(f.first_ns);
        self.last_ns.append_value(f.last_ns);
        self.priority.append_option(f.priority);
        self.packets.append_value(f.packets);
        self.bytes.append_value(f.bytes);
        self.payload_bytes.append_value(f.payload_bytes);
        self.messages.append_value(f.messages);
        self.requests.append_value(f.requests);
        self.responses.append_value(f.responses);
        let e = &f.ecn;
        for (b, v) in self.ecn.iter_mut().zip([e.not_ect, e.ect0, e.ect1, e.ce]) {
            b.append_value(v);
        }
        self.ecn_ce_fraction.append_value(e.ce_fraction);
        let s = &f.psn;
        self.psn_tracked.append_value(s.tracked);
        let psn = [
            s.gaps,
            s.missing,
            s.retransmits,
            s.retransmits_nak,
            s.retransmits_timeout,
            s.retransmits_rnr,
            s.retransmits_spurious,
            s.retransmits_implied,
            s.retransmits_unknown,
            s.duplicates,
            s.out_of_order,
            s.late_beyond_window,
            s.spurious_naks,
            s.read_response_gaps,
            s.network_loss_gaps,
            s.capture_loss_gaps,
            s.resyncs,
            s.network_loss_packets,
            s.timeout_events,
        ];
        for (b, v) in self.psn.iter_mut().zip(psn) {
            b.append_value(v);
        }
        self.psn_max_late_ns.append_value(s.max_late_ns);
        let n = &f.naks;
        let naks = [
            n.psn_seq_err,
            n.invalid_request,
            n.remote_access,
            n.remote_operational,
            n.invalid_rd,
            n.other,
            n.rnr,
        ];
        for (b, v) in self.naks.iter_mut().zip(naks) {
            b.append_value(v);
        }
        self.naks_rnr_timer_us_min.append_option(n.rnr_timer_us_min);
        self.naks_rnr_timer_us_max.append_option(n.rnr_timer_us_max);
        self.acks.append_value(f.acks);
        self.cnps.append_value(f.cnps);
        self.cnps_received.append_value(f.cnps_received);
        self.icrc_bad.append_value(f.icrc_bad);
        self.dscp.values().append_slice(&f.dscp);
        self.dscp.append(true);
        self.pcp.values().append_slice(&f.pcp);
        self.pcp.append(true);
        self.throughput_bin_ns.append_value(f.throughput.bin_ns);
        self.throughput_peak_gbps.append_value(f.throughput.peak_gbps);
        self.throughput_mean_gbps.append_value(f.throughput.mean_gbps);
        let b = &f.throughput.burst;
        self.burst_bin_ns.append_value(b.bin_ns);
        self.burst_gbps.append_value(b.peak_gbps);
        self.burst_offset_ns.append_value(b.peak_offset_ns);
        self.burst_ce.append_value(u64::from(b.ce_peak));
        let l = &f.latency;
        for (b, v) in self.latency.iter_mut().zip([&l.ack, &l.read, &l.nak_to_retransmit, &l.ce_to_cnp]) {
            b.push(v.as_deref());
        }
        self.partner.append_option(f.partner.map(|p| p as u64));
        self.pairing.append_option(f.pairing.as_deref());
        self.cm_start_psn.append_option(f.cm_start_psn);
        self.ack_timeout_ns.append_option(f.ack_timeout_ns);
        self.pmtu.append_value(f.pmtu);
        self.udp_src_port.append_option(f.udp_src_port);
        self.udp_src_port_changes.append_value(f.udp_src_port_changes);
        self.bursts.append_value(f.bursts);
        self.iterations_last.append_value(shape.iterations_last);
        self.elephant_rank.append_option(shape.elephant_rank);
        self.ecmp_path.append_option(shape.ecmp_path);
        self.health.append_value(&f.health);
        let cc = f.cc.as_ref();
        self.cc_cnp_interval_p50_ns.append_option(cc.and_then(|c| c.cnp_interval).map(|l| l.p50_ns));
        self.cc_cnp_too_fast.append_option(cc.map(|c| c.cnp_too_fast));
        self.cc_ce_runs_without_cnp.append_option(cc.map(|c| c.ce_runs_without_cnp));
        self.cc_reaction_evaluated.append_option(cc.map(|c| c.reaction.evaluated));
        self.cc_reaction_fell.append_option(cc.map(|c| c.reaction.fell));
        self.cc_reaction_mean_ratio.append_option(cc.and_then(|c| c.reaction.mean_ratio));
    }
}

/// The interval table's columns: one row per flow and time bin.
struct IntervalCols {
    capture: StringBuilder,
    point: StringBuilder,
    id: UInt64Builder,
    src: StringBuilder,
    dst: StringBuilder,
    dest_qp: UInt32Builder,
    bin: UInt32Builder,
    start_ns: TimestampNanosecondBuilder,
    bin_ns: UInt64Builder,
    bytes: UInt64Builder,
    packets: UInt64Builder,
    ce: UInt64Builder,
    resent: UInt64Builder,
    cnps: UInt64Builder,
    gbps: Float64Builder,
}

impl IntervalCols {
    fn new() -> Self {
        IntervalCols {
            capture: StringBuilder::new(),
            point: StringBuilder::new(),
            id: UInt64Builder::new(),
            src: StringBuilder::new(),
            dst: StringBuilder::new(),
            dest_qp: UInt32Builder::new(),
            bin: UInt32Builder::new(),
            start_ns: timestamps(),
            bin_ns: UInt64Builder::new(),
            bytes: UInt64Builder::new(),
            packets: UInt64Builder::new(),
            ce: UInt64Builder::new(),
            resent: UInt64Builder::new(),
            cnps: UInt64Builder::new(),
            gbps: Float64Builder::new(),
        }
    }

    fn len(&self) -> usize {
        self.id.len()
    }

    fn finish(&mut self) -> Vec<(Field, ArrayRef)> {
        let mut c = Vec::with_capacity(16);
        col(&mut c, "capture", false, &mut self.capture);
        col(&mut c, "point", false, &mut self.point);
        col(&mut c, "id", false, &mut self.id);
        col(&mut c, "src", false, &mut self.src);
        col(&mut c, "dst", false, &mut self.dst);
        col(&mut c, "dest_qp", false, &mut self.dest_qp);
        col(&mut c, "bin", false, &mut self.bin);
        col(&mut c, "start_ns", false, &mut self.start_ns);
        col(&mut c, "bin_ns", false, &mut self.bin_ns);
        col(&mut c, "bytes", false, &mut self.bytes);
        col(&mut c, "packets", false, &mut self.packets);
        col(&mut c, "ce", false, &mut self.ce);
        col(&mut c, "resent", false, &mut self.resent);
        col(&mut c, "cnps", false, &mut self.cnps);
        col(&mut c, "gbps", false, &mut self.gbps);
        c
    }

    /// One row per bin of `f` from its first bin with packets (or CNPs received) to its last (empty bins
    /// between them included): bins count from `origin_ns`, the analysis' first frame.
    fn push(&mut self, capture: &str, point: &str, origin_ns: i64, f: &FlowReport) -> usize {
        let t = &f.throughput;
        // A CNP the sender received after its last packet has a bin of its own.
        let busy =
            |i: &usize| t.packets.get(*i).is_some_and(|&n| n > 0) || t.cnps.get(*i).is_some_and(|&n| n > 0);
        let Some(first) = (0..t.packets.len()).find(busy) else { return 0 };
        let last = (0..t.packets.len()).rev().find(busy).unwrap_or(first);
        let width = t.bin_ns.max(1);
        for i in first..=last {
            let at = |v: &Vec<u64>| v.get(i).copied().unwrap_or(0);
            self.capture.append_value(capture);
            self.point.append_value(point);
            self.id.append_value(f.id as u64);
            self.src.append_value(&f.src);
            self.dst.append_value(&f.dst);
            self.dest_qp.append_value(f.dest_qp);
            self.bin.append_value(u32::try_from(i).unwrap_or(u32::MAX));
            let off = i64::try_from((i as u64).saturating_mul(width)).unwrap_or(i64::MAX);
            self.start_ns.append_value(origin_ns.saturating_add(off));
            self.bin_ns.append_value(width);
            let bytes = at(&t.bins);
            self.bytes.append_value(bytes);
            self.packets.append_value(at(&t.packets));
            self.ce.append_value(at(&t.ce));
            self.resent.append_value(at(&t.resent));
            self.cnps.append_value(at(&t.cnps));
            self.gbps.append_value(bytes as f64 * 8.0 / width as f64);
        }
        last - first + 1
    }
}

/// A Parquet error as its cause: a full disk reads `No space left on device`, once.
fn io(e: parquet::errors::ParquetError) -> anyhow::Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
            Ok(io) => anyhow::Error::new(*io),
            Err(other) => anyhow::anyhow!("{other}"),
        },
        other => anyhow::Error::new(other),
    }
}

fn batch(cols: Vec<(Field, ArrayRef)>) -> (SchemaRef, Vec<ArrayRef>) {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().unzip();
    (Arc::new(Schema::new(fields)), arrays)
}

/// One table being written: a hidden temporary file until [`Table::commit`].
struct Table {
    name: &'static str,
    /// Created exclusively under a random name and locked; removed when dropped uncommitted,
    /// renamed by [`Temp::persist`] ([`crate::tmpfile`]).
    temp: Option<Temp>,
    /// Its name, for messages.
    tmp: PathBuf,
    schema: SchemaRef,
    writer: Option<ArrowWriter<File>>,
    rows: u64,
}

impl Table {
    fn create(dir: &Path, name: &'static str, stem: &str, schema: SchemaRef) -> anyhow::Result<Self> {
        crate::tmpfile::remove_dead_leftovers(dir, &format!("{name}-"), ".parquet.tmp");
        // `.TABLE-STEM.PID.RANDOM.parquet.tmp`: hidden from globs, its process named so a
        // later run can tell a dead one's leftover from a running one's file.
        let temp = Temp::create(dir, &format!("{name}-{stem}"), ".parquet.tmp")
            .with_context(|| format!("cannot create a temporary file in {}", text::path(dir)))?;
        let tmp = temp.path.to_path_buf();
        let file = temp.file.try_clone().with_context(|| format!("cannot write {}", text::path(&tmp)))?;
        let mut props = WriterProperties::builder();
        // Columns whose values rarely repeat: a dictionary only costs time (a fifth of it,
        // interning every frame number and time) before the writer gives it up.
        for c in UNIQUE {
            props = props.set_column_dictionary_enabled(ColumnPath::from(c), false);
        }
        let props = props
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH_ROWS))
            .set_created_by(format!("rocescope {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![
                KeyValue::new("rocescope.table".to_string(), name.to_string()),
                KeyValue::new("rocescope.parquet_schema".to_string(), SCHEMA_VERSION.to_string()),
            ]))
            .build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(io)
            .with_context(|| format!("cannot write {}", text::path(&tmp)))?;
        Ok(Table { name, temp: Some(temp), tmp, schema, writer: Some(writer), rows: 0 })
    }

    fn write(&mut self, arrays: Vec<ArrayRef>) -> anyhow::Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .with_context(|| format!("building the {} rows", self.name))?;
        let rows = batch.num_rows() as u64;
        if rows == 0 {
            return Ok(());
        }
        let w = self.writer.as_mut().context("the file is closed")?;
        w.write(&batch).map_err(io).with_context(|| format!("cannot write {}", text::path(&self.tmp)))?;
        self.rows += rows;
        Ok(())
    }

    /// Write the footer and flush the file to the disk (still under its temporary name).
    fn close(&mut self) -> anyhow::Result<()> {
        let w = self.writer.take().context("the file is closed")?;
        let file =
            w.into_inner().map_err(io).with_context(|| format!("cannot write {}", text::path(&self.tmp)))?;
        file.sync_all().with_context(|| format!("cannot write {}", text::path(&self.tmp)))?;
        Ok(())
    }
}

/// What the run wrote.
pub struct Written {
    /// The files, in `TABLES` order, with their row counts.
    pub files: Vec<(PathBuf, u64)>,
    /// Another capture's files had the name this run's would have had.
    pub renamed: bool,
}

/// The writer of one `report --parquet` run.
pub struct ParquetOut {
    dir: PathBuf,
    capture: String,
    stem: String,
    points: Vec<String>,
    packets: PacketCols,
    tables: Vec<Table>,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    frames: u64,
    error: Option<anyhow::Error>,
}

/// A file-name-safe stem for the source: the file name without its capture extensions, an
/// interface's name; characters other than letters, digits, `.`, `_` and `-` become `_`.
fn stem_of(source: &str) -> String {
    let base = Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |f| f.to_string_lossy().into_owned());
    let mut s = base.as_str();
    for ext in [".gz", ".pcapng", ".pcap", ".cap"] {
        if let Some(rest) = s.strip_suffix(ext) {
            s = rest;
        }
    }
    let s: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(80)
        .collect();
    match s.trim_start_matches('.') {
        "" => "capture".to_string(),
        t => t.to_string(),
    }
}

impl ParquetOut {
    /// Create `dir` when missing and open the tables' temporary files in it: an unwritable
    /// directory fails here, before any frame is read. `sources` are the inputs as given
    /// (files, or the interface or sFlow address); `points` the capture points' names.
    pub fn create(dir: &Path, sources: &[String], points: Vec<String>) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the Parquet directory {}", text::path(dir)))?;
        let name = |s: &String| {
            Path::new(s).file_name().map_or_else(|| s.clone(), |f| f.to_string_lossy().into_owned())
        };
        let capture = sources.iter().map(name).collect::<Vec<_>>().join(" + ");
        let mut stem = stem_of(sources.first().map_or("capture", String::as_str));
        if sources.len() > 1 {
            stem = format!("{stem}+{}", sources.len() - 1);
        }
        let mut packets = PacketCols::new();
        let schemas = [
            batch(packets.finish()).0,
            batch(FlowCols::new().finish()).0,
            batch(IntervalCols::new().finish()).0,
        ];
        let mut tables = Vec::with_capacity(3);
        for (table, schema) in TABLES.into_iter().zip(schemas) {
            tables.push(Table::create(dir, table, &stem, schema)?);
        }
        Ok(ParquetOut {
            dir: dir.to_path_buf(),
            capture,
            stem,
            points,
            packets,
            tables,
            first_ns: None,
            last_ns: None,
            frames: 0,
            error: None,
        })
    }

    /// Add a frame: a row when it is RoCE, PFC or PAUSE. A write that fails (a full disk)
    /// stops the writing; [`ParquetOut::finish`] returns the error.
    pub fn push(&mut self, number: u64, rec: &Record<'_>, p: &Packet<'_>, opts: &DecodeOptions) {
        self.frames += 1;
        self.first_ns.get_or_insert(rec.ts_ns);
        self.last_ns = Some(self.last_ns.map_or(rec.ts_ns, |l| l.max(rec.ts_ns)));
        if self.error.is_some() {
            return;
        }
        let point = self.points.get(usize::from(rec.point)).map_or("", String::as_str);
        if self.packets.push((&self.capture, point, number), rec, p, opts) && self.packets.len() >= BATCH_ROWS
        {
            self.flush_packets();
        }
    }

    fn flush_packets(&mut self) {
        let (_, arrays) = batch(self.packets.finish());
        if let Some(t) = self.tables.first_mut() {
            if let Err(e) = t.write(arrays) {
                self.error = Some(e);
            }
        }
    }

    /// What tells this capture from another with the same file names: its name, frame count
    /// and first and last times.
    fn identity(&self) -> String {
        format!(
            "{} frames={} first_ns={} last_ns={}",
            self.capture,
            self.frames,
            self.first_ns.map_or_else(|| "-".to_string(), |t| t.to_string()),
            self.last_ns.map_or_else(|| "-".to_string(), |t| t.to_string()),
        )
    }

    /// Write the last packet rows, the flows and intervals of `report`, close the files and
    /// give them their names. The capture points' names are the report's (sFlow adds its
    /// agents as it meets them).
    pub fn finish(mut self, streamed: &StreamedReport<'_>) -> anyhow::Result<Written> {
        let report = &streamed.report;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.packets.len() > 0 {
            self.flush_packets();
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        let point = |i: u16| {
            report.points.get(usize::from(i)).map_or_else(
                || self.points.get(usize::from(i)).cloned().unwrap_or_default(),
                |p| p.name.clone(),
            )
        };
        let origin = report.summary.start_ns.unwrap_or(0);
        let mut flows = FlowCols::new();
        let mut intervals = IntervalCols::new();
        let shapes = FlowShape::of(report);
        // One flow's entry at a time, as the JSON report is written.
        for f in (0..streamed.flow_count()).filter_map(|i| streamed.flow(i)) {
            let f = &f;
            let pt = point(f.point);
            flows.push(&self.capture, &pt, f, &shapes.get(f.id));
            if flows.len() >= BATCH_ROWS {
                self.tables[1].write(batch(flows.finish()).1)?;
            }
            intervals.push(&self.capture, &pt, origin, f);
            if intervals.len() >= BATCH_ROWS {
                self.tables[2].write(batch(intervals.finish()).1)?;
            }
        }
        self.tables[1].write(batch(flows.finish()).1)?;
        self.tables[2].write(batch(intervals.finish()).1)?;
        let id = self.identity();
        for t in &mut self.tables {
            if let Some(w) = t.writer.as_mut() {
                w.append_key_value_metadata(KeyValue::new(ID_KEY.to_string(), id.clone()));
            }
            t.close()?;
        }
        self.commit(&id)
    }

    /// Move the temporary files to their names: `TABLE-STEM-TIME.parquet`, or with `-2`,
    /// `-3`, ... when another capture's file holds the name.
    fn commit(mut self, id: &str) -> anyhow::Result<Written> {
        let time = self.first_ns.map_or_else(|| "empty".to_string(), |t| format!("{}Z", utc_name(t)));
        let base = format!("{}-{time}", self.stem);
        let mut n = 1u32;
        let names = loop {
            let suffix = if n == 1 { String::new() } else { format!("-{n}") };
            let names: Vec<PathBuf> =
                TABLES.iter().map(|t| self.dir.join(format!("{t}-{base}{suffix}.parquet"))).collect();
            if names.iter().all(|p| !p.exists() || same_capture(p, id)) {
                break names;
            }
            n += 1;
            if n > 1000 {
                anyhow::bail!(
                    "{}: a thousand other captures already have files named {}-*.parquet",
                    text::path(&self.dir),
                    base
                );
            }
        };
        let mut files = Vec::with_capacity(3);
        for (t, name) in self.tables.iter_mut().zip(&names) {
            let renamed = t.temp.take().map_or(Ok(()), |temp| temp.persist(name));
            if let Err(e) = renamed {
                // All three or none: a set without its packets or flows would mislead a query.
                for (done, _) in &files {
                    let _ = std::fs::remove_file(done);
                }
                return Err(anyhow::Error::new(e).context(format!(
                    "cannot rename {} to {}",
                    text::path(&t.tmp),
                    text::path(name)
                )));
            }
            files.push((name.clone(), t.rows));
        }
        Ok(Written { files, renamed: n > 1 })
    }
}

/// `20261203T142922`: a UTC time for file names.
fn utc_name(ns: i64) -> String {
    let (y, m, d, hh, mm, ss, _) = rocescope_capture::time::civil(ns);
    format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}")
}

/// True when the Parquet file at `path` was written by rocescope for the capture `id`: a file
/// that cannot be read, or holds another capture, is never replaced.
fn same_capture(path: &Path, id: &str) -> bool {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let Ok(file) = File::open(path) else { return false };
    let Ok(reader) = SerializedFileReader::new(file) else { return false };
    let kv = reader.metadata().file_metadata().key_value_metadata();
    kv.is_some_and(|kv| kv.iter().any(|e| e.key == ID_KEY && e.value.as_deref() == Some(id)))
}
