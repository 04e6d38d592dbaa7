//! `report --parquet` tables read back as the facts of a report
//! ([`rocescope_analyzer::compare::ReportFacts`]), so that `rocescope compare` takes a
//! Parquet directory as a side. The `flows` table gives the per-flow facts as the report
//! had them; the per capture point and priority series (throughput, CE, paused time) are
//! rebuilt from the `packets` table with the analyzer's own series and PFC timelines
//! ([`rocescope_analyzer::fabric::Fabric`], [`rocescope_analyzer::pfc::Timeline`]), as the
//! report built them from the frames.
//!
//! What the tables cannot give, said in docs/compare-json.md: the findings (none are read),
//! whether the capture was sampled, frames that are neither RoCE nor PFC/PAUSE (a point's
//! span is its RoCE and PFC frames'), the pcapng interface speed (pauses are timed at
//! `--link-speed`) and an outer QinQ tag's PCP (the tables keep the innermost).

use anyhow::{anyhow, bail, Context};
use arrow_array::{
    Array, BooleanArray, ListArray, RecordBatch, StringArray, TimestampNanosecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rocescope_analyzer::audit::Class;
use rocescope_analyzer::compare::{
    ConnectionFacts, EcnFacts, FlowFacts, LatencyFacts, LatencyStat, NakFacts, PointFacts, PsnFacts,
    ReportFacts, SummaryFacts, TimelineFacts,
};
use rocescope_analyzer::fabric::{Fabric, Sample};
use rocescope_analyzer::marks::PointMarks;
use rocescope_analyzer::pfc::{SeenBefore, Timeline};
use rocescope_analyzer::Config;
use rocescope_decoder::Opcode;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The facts of the one run whose tables `dir` holds (`flows-STEM-TIME.parquet` and its
/// `packets-` twin). A directory with several runs is refused: which to compare is the
/// user's to say (one directory per side).
pub fn facts(dir: &Path, cfg: &Config) -> anyhow::Result<ReportFacts> {
    let (flows_path, packets_path) = run_files(dir)?;
    let packets = read(&packets_path)?;
    let flows = read(&flows_path)?;
    let mut facts =
        ReportFacts { schema_version: rocescope_analyzer::report::SCHEMA_VERSION, ..Default::default() };
    let mut points = Points::default();
    let timeline =
        packets_facts(&packets, cfg, &mut points, &mut facts).with_context(|| text(&packets_path))?;
    facts.timeline = timeline;
    flows_facts(&flows, &mut points, &mut facts).with_context(|| text(&flows_path))?;
    facts.points = points.list;
    Ok(facts)
}

fn text(p: &Path) -> String {
    rocescope_capture::text::path(p).to_string()
}

/// The flows table of the directory's one run, and its packets twin.
fn run_files(dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let mut runs: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the directory {}", text(dir)))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter_map(|n| n.strip_prefix("flows-").and_then(|r| r.strip_suffix(".parquet")).map(String::from))
        .collect();
    runs.sort();
    match runs.as_slice() {
        [] => bail!("no flows-*.parquet in {} (written by `rocescope report --parquet DIR`)", text(dir)),
        [one] => {
            let packets = dir.join(format!("packets-{one}.parquet"));
            if !packets.is_file() {
                bail!("{} has flows-{one}.parquet but not its packets-{one}.parquet", text(dir));
            }
            Ok((dir.join(format!("flows-{one}.parquet")), packets))
        }
        many => bail!(
            "{} holds the tables of {} runs ({}): give a directory holding one run's",
            text(dir),
            many.len(),
            many.join(", ")
        ),
    }
}

fn read(path: &Path) -> anyhow::Result<Vec<RecordBatch>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", text(path)))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .with_context(|| format!("{} is not a Parquet file", text(path)))?;
    reader.collect::<Result<Vec<_>, _>>().with_context(|| format!("reading {}", text(path)))
}

/// A column of a batch, of the type the tables write it with.
fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> anyhow::Result<&'a T> {
    b.column_by_name(name)
        .ok_or_else(|| anyhow!("no column {name} (a table from another or older rocescope?)"))?
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| anyhow!("column {name} is not of the type rocescope writes"))
}

/// Capture points by name, in the order first met.
#[derive(Default)]
struct Points {
    list: Vec<PointFacts>,
    index: HashMap<String, u16>,
}

impl Points {
    fn get(&mut self, name: &str) -> u16 {
        if let Some(i) = self.index.get(name) {
            return *i;
        }
        let i = u16::try_from(self.list.len()).unwrap_or(u16::MAX);
        self.list.push(PointFacts { name: name.to_string(), ..Default::default() });
        self.index.insert(name.to_string(), i);
        i
    }
}

/// One PFC timeline's key: point, pausing MAC, priority.
type PauseKey = (u16, String, u8);

/// The series per capture point and priority, rebuilt from the packets.
fn packets_facts(
    batches: &[RecordBatch],
    cfg: &Config,
    points: &mut Points,
    facts: &mut ReportFacts,
) -> anyhow::Result<TimelineFacts> {
    // The analysis' origin: the first frame.
    let mut origin: Option<i64> = None;
    for b in batches {
        let ts = col::<TimestampNanosecondArray>(b, "ts_ns")?;
        if let Some(t) = (0..ts.len()).filter(|i| ts.is_valid(*i)).map(|i| ts.value(i)).min() {
            origin = Some(origin.map_or(t, |o| o.min(t)));
        }
    }
    let origin = origin.unwrap_or(0);
    let mut fabric = Fabric::new(cfg.bin_ns);
    let mut timelines: HashMap<PauseKey, Timeline> = HashMap::new();
    let mut closed: Vec<(u16, u8, i64, i64)> = Vec::new();
    let (mut frames, mut roce, mut roce_v1) = (0u64, 0u64, 0u64);
    let mut marks = PointMarks::default();
    let (mut start, mut end): (Option<i64>, Option<i64>) = (None, None);
    for b in batches {
        let point = col::<StringArray>(b, "point")?;
        let ts = col::<TimestampNanosecondArray>(b, "ts_ns")?;
        let kind = col::<StringArray>(b, "kind")?;
        let frame = col::<UInt64Array>(b, "frame")?;
        let wire = col::<UInt64Array>(b, "wire_len")?;
        let (caplen, len) = (col::<UInt32Array>(b, "caplen")?, col::<UInt32Array>(b, "len")?);
        let pcp = col::<UInt8Array>(b, "pcp")?;
        let dscp = col::<UInt8Array>(b, "ip_dscp")?;
        let ecn = col::<UInt8Array>(b, "ip_ecn")?;
        let tclass = col::<UInt8Array>(b, "grh_tclass")?;
        let cnp = col::<BooleanArray>(b, "cnp")?;
        let opcode = col::<UInt8Array>(b, "bth_opcode")?;
        let error = col::<StringArray>(b, "error")?;
        let eth_src = col::<StringArray>(b, "eth_src")?;
        let enable = col::<UInt16Array>(b, "pfc_enable")?;
        let quanta = col::<ListArray>(b, "pfc_quanta")?;
        let opt8 = |a: &UInt8Array, i: usize| a.is_valid(i).then(|| a.value(i));
        for i in 0..b.num_rows() {
            let p = points.get(point.value(i));
            let t = ts.value(i);
            frames += 1;
            start = Some(start.map_or(t, |s| s.min(t)));
            end = Some(end.map_or(t, |e| e.max(t)));
            if let Some(pf) = points.list.get_mut(usize::from(p)) {
                pf.packets += 1;
                pf.start_ns = Some(pf.start_ns.map_or(t, |s| s.min(t)));
                pf.end_ns = Some(pf.end_ns.map_or(t, |e| e.max(t)));
            }
            match kind.value(i) {
                "roce" => {
                    // A packet the report counts: decoded whole, or cut by the snap length.
                    if error.is_valid(i) && caplen.value(i) >= len.value(i) {
                        continue;
                    }
                    roce += 1;
                    // RoCEv1: a GRH and no IP header.
                    if !dscp.is_valid(i) && tclass.is_valid(i) {
                        roce_v1 += 1;
                    }
                    if let Some(pf) = points.list.get_mut(usize::from(p)) {
                        pf.roce += 1;
                    }
                    let d = opt8(dscp, i).or_else(|| opt8(tclass, i).map(|t| t >> 2)).unwrap_or(0);
                    let class = opt8(opcode, i).map_or(Class::Data, |o| Class::of(Opcode(o)));
                    marks.add(p, class, d, opt8(pcp, i), 1);
                    fabric.add(Sample {
                        point: p,
                        prio: cfg.audit.priority(d, opt8(pcp, i)),
                        offset_ns: t - origin,
                        bytes: wire.value(i),
                        packets: 1,
                        ce: opt8(ecn, i) == Some(3),
                        cnp: cnp.is_valid(i) && cnp.value(i),
                    });
                }
                "pfc" => {
                    let src = if eth_src.is_valid(i) { eth_src.value(i).to_string() } else { String::new() };
                    let en = if enable.is_valid(i) { enable.value(i) } else { 0 };
                    let q = quanta.is_valid(i).then(|| quanta.value(i));
                    let q = q.as_ref().and_then(|a| a.as_any().downcast_ref::<UInt16Array>());
                    for prio in 0..8u8 {
                        if en >> prio & 1 == 0 {
                            continue;
                        }
                        let qv =
                            q.and_then(|a| (usize::from(prio) < a.len()).then(|| a.value(usize::from(prio))));
                        let tl = timelines
                            .entry((p, src.clone(), prio))
                            .or_insert_with(|| Timeline::new(cfg.link_speed_bps, frame.value(i), t));
                        if let Some((s, e)) =
                            tl.on_frame(t, qv.unwrap_or(0), frame.value(i), &cfg.pfc, SeenBefore::default())
                        {
                            closed.push((p, prio, s, e));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for ((p, _, prio), tl) in &timelines {
        let point_end = points.list.get(usize::from(*p)).and_then(|x| x.end_ns).unwrap_or(0);
        if let Some((s, e)) = tl.open_span(point_end) {
            closed.push((*p, *prio, s, e));
        }
    }
    for (p, prio, s, e) in closed {
        fabric.add_pause(p, Some(prio), s - origin, e - origin);
    }
    facts.summary = SummaryFacts {
        packets: frames,
        roce,
        roce_v1,
        start_ns: start,
        end_ns: end,
        pmtu: 0,
        capture_quality: None,
        window: None,
    };
    // Each point's DSCP and PCP per class, counted as the analyzer counts them, read back
    // as a report document's.
    for (i, pf) in points.list.iter_mut().enumerate() {
        let m = u16::try_from(i).ok().and_then(|i| marks.report(i));
        pf.marks = m.map(|m| serde_json::from_value(serde_json::to_value(m)?)).transpose()?;
    }
    let doc = serde_json::to_value(fabric.report())?;
    Ok(serde::Deserialize::deserialize(doc)?)
}

/// A latency's three columns (`latency_ack_count`, `_p50_ns`, `_p99_ns`) at row `i`.
fn latency(b: &RecordBatch, name: &str, i: usize) -> anyhow::Result<Option<LatencyStat>> {
    let count = col::<UInt64Array>(b, &format!("{name}_count"))?;
    let p50 = col::<UInt64Array>(b, &format!("{name}_p50_ns"))?;
    let p99 = col::<UInt64Array>(b, &format!("{name}_p99_ns"))?;
    Ok((count.is_valid(i) && p50.is_valid(i) && p99.is_valid(i)).then(|| LatencyStat {
        count: count.value(i),
        p50_ns: p50.value(i),
        p99_ns: p99.value(i),
    }))
}

/// A list column's values at row `i`.
fn list8(a: &ListArray, i: usize) -> Vec<u8> {
    if !a.is_valid(i) {
        return Vec::new();
    }
    let v = a.value(i);
    v.as_any().downcast_ref::<UInt8Array>().map_or_else(Vec::new, |x| x.values().to_vec())
}

/// The flows, their connections.
fn flows_facts(batches: &[RecordBatch], points: &mut Points, facts: &mut ReportFacts) -> anyhow::Result<()> {
    let mut ids: HashMap<u64, usize> = HashMap::new();
    let mut partners: Vec<Option<u64>> = Vec::new();
    for b in batches {
        let u64c = |name: &str| col::<UInt64Array>(b, name);
        let (point, src, dst) =
            (col::<StringArray>(b, "point")?, col::<StringArray>(b, "src")?, col::<StringArray>(b, "dst")?);
        let dest_qp = col::<UInt32Array>(b, "dest_qp")?;
        let priority = col::<UInt8Array>(b, "priority")?;
        let tracked = col::<BooleanArray>(b, "psn_tracked")?;
        let (dscp, pcp) = (col::<ListArray>(b, "dscp")?, col::<ListArray>(b, "pcp")?);
        let pmtu = col::<UInt32Array>(b, "pmtu")?;
        let (id, partner) = (u64c("id")?, u64c("partner")?);
        let names = [
            "packets",
            "bytes",
            "requests",
            "ecn_not_ect",
            "ecn_ect0",
            "ecn_ect1",
            "ecn_ce",
            "psn_retransmits",
            "psn_network_loss_packets",
            "psn_timeout_events",
            "naks_psn_seq_err",
            "naks_invalid_request",
            "naks_remote_access",
            "naks_remote_operational",
            "naks_invalid_rd",
            "naks_other",
            "naks_rnr",
            "acks",
            "cnps",
            "cnps_received",
        ];
        let cols = names.iter().map(|n| u64c(n)).collect::<anyhow::Result<Vec<_>>>()?;
        for i in 0..b.num_rows() {
            let v: Vec<u64> = cols.iter().map(|c| c.value(i)).collect();
            let g = |k: usize| v.get(k).copied().unwrap_or(0);
            ids.insert(id.value(i), facts.flows.len());
            partners.push(partner.is_valid(i).then(|| partner.value(i)));
            facts.flows.push(FlowFacts {
                point: points.get(point.value(i)),
                src: src.value(i).to_string(),
                dst: dst.value(i).to_string(),
                dest_qp: dest_qp.value(i),
                priority: priority.is_valid(i).then(|| priority.value(i)),
                packets: g(0),
                bytes: g(1),
                requests: g(2),
                ecn: EcnFacts { not_ect: g(3), ect0: g(4), ect1: g(5), ce: g(6) },
                psn: PsnFacts {
                    tracked: tracked.value(i),
                    retransmits: g(7),
                    network_loss_packets: g(8),
                    timeout_events: g(9),
                },
                naks: NakFacts {
                    psn_seq_err: g(10),
                    invalid_request: g(11),
                    remote_access: g(12),
                    remote_operational: g(13),
                    invalid_rd: g(14),
                    other: g(15),
                    rnr: g(16),
                },
                acks: g(17),
                cnps: g(18),
                cnps_received: g(19),
                dscp: list8(dscp, i),
                pcp: list8(pcp, i),
                latency: LatencyFacts {
                    ack: latency(b, "latency_ack", i)?,
                    read: latency(b, "latency_read", i)?,
                },
                partner: None,
                pmtu: pmtu.value(i),
            });
        }
    }
    for (k, p) in partners.iter().enumerate() {
        let partner = p.and_then(|id| ids.get(&id).copied());
        if let Some(f) = facts.flows.get_mut(k) {
            f.partner = partner;
        }
        // A connection per pair (counted at its first flow) and per flow alone.
        if partner.is_none_or(|q| q > k) {
            let point = facts.flows.get(k).map_or(0, |f| f.point);
            facts.connections.push(ConnectionFacts { point });
        }
    }
    Ok(())
}
