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
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::{ChunkReader, Length};
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

/// Rows decoded at a time: the tables are read batch by batch, so memory does not grow with
/// them (issue 40: a side of 500,000 packets took 176 MB read whole, 1 M took 352 MB).
const BATCH: usize = 8192;

/// The facts of the one run whose tables `dir` holds (`flows-STEM-TIME.parquet` and its
/// `packets-` twin). A directory with several runs is refused: which to compare is the
/// user's to say (one directory per side). A table that is not a regular file (a FIFO
/// named like one) is refused without being opened; a damaged one is an error naming it,
/// never a panic, even where the Parquet library panics on it (the panic is caught).
pub fn facts(dir: &Path, cfg: &Config) -> anyhow::Result<ReportFacts> {
    let (flows_path, packets_path) = run_files(dir)?;
    let open = |p: &Path| {
        rocescope_capture::small_file::open_regular(p, "Parquet table").map_err(anyhow::Error::from)
    };
    let packets = Table { name: text(&packets_path), open: || open(&packets_path) };
    let flows = Table { name: text(&flows_path), open: || open(&flows_path) };
    facts_of(&packets, &flows, cfg)
}

/// [`facts`] of a run's two tables held in memory (`flows` and `packets` as `report
/// --parquet` writes them): the fuzz target's way in.
pub fn facts_from_bytes(flows: Vec<u8>, packets: Vec<u8>, cfg: &Config) -> anyhow::Result<ReportFacts> {
    let (flows, packets) = (bytes::Bytes::from(flows), bytes::Bytes::from(packets));
    let packets = Table { name: "the packets table".into(), open: || Ok(packets.clone()) };
    let flows = Table { name: "the flows table".into(), open: || Ok(flows.clone()) };
    facts_of(&packets, &flows, cfg)
}

/// A table's bytes as the Parquet reader reads them, where a read past the end of the file
/// is an error rather than the end: a table's pages and its footer end before the end of
/// the file, so only damage makes the reader read there. (The library's Thrift reader skips
/// a field by copying its length's worth of bytes, and takes the end of the file for bytes
/// copied: a damaged page header holding a long list of doubles was skipped 8 bytes at a
/// time past the end, each skip an 8 KiB copy of nothing: minutes for one damaged byte
/// run. Found by the `parquet` fuzz target.)
struct Strict<R>(R);

impl<R: ChunkReader> Length for Strict<R> {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl<R: ChunkReader> ChunkReader for Strict<R> {
    type T = NoReadPastEnd<R::T>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.0.get_read(start).map(NoReadPastEnd)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        self.0.get_bytes(start, length)
    }
}

/// A reader for which the end of its bytes is an error ([`Strict`]).
struct NoReadPastEnd<R>(R);

impl<R: std::io::Read> std::io::Read for NoReadPastEnd<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf)? {
            0 if !buf.is_empty() => Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "a read past the end of the file (a damaged page header)",
            )),
            n => Ok(n),
        }
    }
}

/// A table to read (once or more), and its name for messages.
struct Table<F> {
    name: String,
    open: F,
}

impl<R: ChunkReader + 'static, F: Fn() -> anyhow::Result<R>> Table<F> {
    /// Its batches, of every column or of the `only` one.
    fn batches(&self, only: Option<&str>) -> anyhow::Result<Batches> {
        let source = Strict((self.open)()?);
        let not_parquet = || format!("{} is not a Parquet file", self.name);
        let builder = guarded(|| ParquetRecordBatchReaderBuilder::try_new(source))
            .with_context(|| self.name.clone())?
            .with_context(not_parquet)?
            .with_batch_size(BATCH);
        let builder = match only {
            Some(c) => {
                let mask = ProjectionMask::columns(builder.parquet_schema(), [c]);
                builder.with_projection(mask)
            }
            None => builder,
        };
        let reader =
            guarded(|| builder.build()).with_context(|| self.name.clone())?.with_context(not_parquet)?;
        Ok(Batches { reader: Some(reader) })
    }
}

/// A table's record batches, one at a time; the first error (or panic of the library) ends
/// them. Its errors do not name the table: the caller's context does.
struct Batches {
    reader: Option<ParquetRecordBatchReader>,
}

impl Iterator for Batches {
    type Item = anyhow::Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let reader = self.reader.as_mut()?;
        let got = match guarded(|| reader.next()) {
            Ok(Some(Ok(b))) => return Some(Ok(b)),
            Ok(None) => None,
            Ok(Some(Err(e))) => Some(Err(anyhow::Error::from(e).context("a damaged table"))),
            Err(e) => Some(Err(e)),
        };
        self.reader = None;
        got
    }
}

fn facts_of<P, F, RP, RF>(packets: &Table<P>, flows: &Table<F>, cfg: &Config) -> anyhow::Result<ReportFacts>
where
    RP: ChunkReader + 'static,
    RF: ChunkReader + 'static,
    P: Fn() -> anyhow::Result<RP>,
    F: Fn() -> anyhow::Result<RF>,
{
    let mut facts =
        ReportFacts { schema_version: rocescope_analyzer::report::SCHEMA_VERSION, ..Default::default() };
    let mut points = Points::default();
    // The analysis' origin, the first frame: a first pass over the times alone.
    let origin = first_time(packets.batches(Some("ts_ns"))?).with_context(|| packets.name.clone())?;
    let timeline = packets_facts(packets.batches(None)?, origin.unwrap_or(0), cfg, &mut points, &mut facts)
        .with_context(|| packets.name.clone())?;
    facts.timeline = timeline;
    flows_facts(flows.batches(None)?, &mut points, &mut facts).with_context(|| flows.name.clone())?;
    facts.points = points.list;
    Ok(facts)
}

/// The earliest `ts_ns` of the packets.
fn first_time(batches: Batches) -> anyhow::Result<Option<i64>> {
    let mut origin: Option<i64> = None;
    for b in batches {
        let b = b?;
        let ts = col::<TimestampNanosecondArray>(&b, "ts_ns")?;
        if let Some(t) = (0..ts.len()).filter(|i| ts.is_valid(*i)).map(|i| ts.value(i)).min() {
            origin = Some(origin.map_or(t, |o| o.min(t)));
        }
    }
    Ok(origin)
}

/// Run `f`, a call into the Parquet library, turning a panic of the library into an error
/// (the caller names the table). Some damaged files make it panic rather than
/// return an error (parquet 59: a corrupt run header of a level or dictionary-index
/// RLE/bit-packed run indexes past its buffer); the message the panic would have printed
/// is kept off the terminal and goes into the error ([`quiet_panics`]).
fn guarded<T>(f: impl FnOnce() -> T) -> anyhow::Result<T> {
    quiet_panics();
    QUIET.with(|q| q.set(true));
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    got.map_err(|payload| {
        let said = QUIET_MESSAGE.with(|m| m.take());
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        anyhow!("damaged: the Parquet reader gave up on it ({})", said.unwrap_or(what))
    })
}

std::thread_local! {
    /// Set while [`guarded`] runs on this thread: a panic then says nothing on the terminal.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// What the panic [`guarded`] caught said, and where.
    static QUIET_MESSAGE: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Install, once, a panic hook that keeps the message of a panic inside [`guarded`] (on
/// its thread) for the error, and hands every other panic to the hook that was there
/// before (the default, which prints it; a fuzzer's, which aborts).
fn quiet_panics() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) {
                let what = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", crate_path(l.file()), l.line()))
                    .unwrap_or_default();
                QUIET_MESSAGE.with(|m| m.set(Some(format!("{what}{at}"))));
            } else {
                before(info);
            }
        }));
    });
}

/// A source file's path from its crate's directory on (`parquet-59.3.2/src/...`), for a
/// panic's place: the registry's directory says nothing.
fn crate_path(file: &str) -> &str {
    match file.rfind("/registry/src/") {
        Some(i) => file
            .get(i + "/registry/src/".len()..)
            .and_then(|rest| rest.split_once('/'))
            .map_or(file, |(_, p)| p),
        None => file,
    }
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
            if !packets.exists() {
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
    batches: Batches,
    origin: i64,
    cfg: &Config,
    points: &mut Points,
    facts: &mut ReportFacts,
) -> anyhow::Result<TimelineFacts> {
    let mut fabric = Fabric::new(cfg.bin_ns);
    let mut timelines: HashMap<PauseKey, Timeline> = HashMap::new();
    let mut closed: Vec<(u16, u8, i64, i64)> = Vec::new();
    let (mut frames, mut roce, mut roce_v1) = (0u64, 0u64, 0u64);
    let mut marks = PointMarks::default();
    let (mut start, mut end): (Option<i64>, Option<i64>) = (None, None);
    for b in batches {
        let b = &b?;
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
                        offset_ns: t.saturating_sub(origin),
                        bytes: wire.value(i),
                        packets: 1,
                        ce: opt8(ecn, i) == Some(3),
                        cnp: cnp.is_valid(i) && cnp.value(i),
                        data: class == Class::Data,
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
        fabric.add_pause(p, Some(prio), s.saturating_sub(origin), e.saturating_sub(origin));
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
fn flows_facts(batches: Batches, points: &mut Points, facts: &mut ReportFacts) -> anyhow::Result<()> {
    let mut ids: HashMap<u64, usize> = HashMap::new();
    let mut partners: Vec<Option<u64>> = Vec::new();
    for b in batches {
        let b = &b?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_analyzer::{Analyzer, FrameMeta};
    use rocescope_capture::CaptureReader;
    use rocescope_decoder::{decode, DecodeOptions};

    /// The flows and packets tables of `samples/demo.pcap`, as `report --parquet` writes them.
    fn demo_tables() -> (Vec<u8>, Vec<u8>) {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
        let dir = tempfile::tempdir().unwrap();
        let mut reader = CaptureReader::open(path).unwrap();
        let mut analyzer = Analyzer::new(Config::default());
        let name = "demo.pcap".to_string();
        let mut tables =
            crate::parquet::ParquetOut::create(dir.path(), std::slice::from_ref(&name), vec![name.clone()])
                .unwrap();
        let opts = DecodeOptions::default();
        let mut number = 0;
        while let Some(rec) = reader.next_record().unwrap() {
            number = rec.number_after(number);
            let packet = decode(rec.link_type, rec.data, &opts);
            analyzer.push(&FrameMeta::from_record(number, &rec), &packet);
            tables.push(number, &rec, &packet, &opts);
        }
        analyzer.finish();
        let written = tables.finish(&analyzer.report_streamed()).unwrap();
        let file = |table: &str| {
            let (path, _) = written
                .files
                .iter()
                .find(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(table)))
                .unwrap();
            std::fs::read(path).unwrap()
        };
        (file("flows-"), file("packets-"))
    }

    /// Read from memory, the tables give what they give from their directory.
    #[test]
    fn tables_in_memory_read_as_from_their_directory() {
        let (flows, packets) = demo_tables();
        let cfg = Config::default();
        let facts = facts_from_bytes(flows.clone(), packets.clone(), &cfg).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("flows-demo-1.parquet"), &flows).unwrap();
        std::fs::write(dir.path().join("packets-demo-1.parquet"), &packets).unwrap();
        let from_dir = super::facts(dir.path(), &cfg).unwrap();
        assert_eq!(serde_json::to_value(&facts).unwrap(), serde_json::to_value(&from_dir).unwrap());
        assert!(facts.summary.packets > 100 && !facts.flows.is_empty());
    }

    /// A page header damaged into a long list of doubles: an error at once (the library
    /// skipped it past the end of the file 8 bytes at a time: 222 s in a debug build, over
    /// 100 s in the fuzzer's; the `parquet` fuzz target's first find: its mode 0, bytes
    /// written over the flows table).
    #[test]
    fn a_field_skipped_past_the_end_of_the_table_is_an_error_at_once() {
        let (mut flows, packets) = demo_tables();
        let at = 0xe301_e360usize % flows.len();
        let bytes = [0xfa, 0xfd, 0xff, 0xff, 0xff, 0xe3, 0x02, 0x00];
        if flows.len() < at + bytes.len() {
            flows.resize(at + bytes.len(), 0);
        }
        flows[at..at + bytes.len()].copy_from_slice(&bytes);
        let start = std::time::Instant::now();
        let e = facts_from_bytes(flows, packets, &Config::default()).unwrap_err();
        assert!(format!("{e:#}").contains("flows table"), "{e:#}");
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "{:?}", start.elapsed());
    }

    /// Where each column chunk's first data page starts, in a table's bytes.
    fn data_pages(table: &[u8]) -> Vec<usize> {
        use parquet::file::reader::FileReader;
        let r =
            parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(table.to_vec()))
                .unwrap();
        let md = r.metadata();
        (0..md.num_row_groups())
            .flat_map(|g| {
                let rg = md.row_group(g);
                (0..rg.num_columns()).map(|c| rg.column(c).data_page_offset() as usize).collect::<Vec<_>>()
            })
            .collect()
    }

    /// One byte of either table changed where a damage hurts most: just past each column
    /// chunk's first page header (its first level run header), and across the footer. An
    /// error naming the table, or facts, never a panic (one escaping fails this test). Many
    /// of these make the Parquet library panic (parquet 59: "offset + len out of bounds",
    /// "slice must not be empty", "num_bits <= T::BIT_CAPACITY", "column start and length
    /// should not be negative"): those are caught and said as damage, and the test checks
    /// that it met some.
    #[test]
    fn damaged_tables_are_errors_never_panics() {
        let (flows, packets) = demo_tables();
        let cfg = Config::default();
        let (mut caught, mut runs) = (0, 0);
        for which in 0..2 {
            let good = if which == 0 { &flows } else { &packets };
            let len = good.len();
            // The footer: its length is in the 4 bytes before the closing "PAR1".
            let footer = good
                .get(len - 8..len - 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize + 8);
            let pages = data_pages(good).into_iter().flat_map(|p| [p + 23, p + 27]);
            let footer = (len.saturating_sub(footer)..len).step_by(97);
            for at in pages.chain(footer).filter(|at| *at < len) {
                let mut bad = good.clone();
                bad[at] ^= 0xff;
                runs += 1;
                let got = if which == 0 {
                    facts_from_bytes(bad, packets.clone(), &cfg)
                } else {
                    facts_from_bytes(flows.clone(), bad, &cfg)
                };
                if let Err(e) = got {
                    let e = format!("{e:#}");
                    assert!(e.contains(if which == 0 { "flows table" } else { "packets table" }), "{e}");
                    caught += usize::from(e.contains("the Parquet reader gave up on it"));
                }
            }
        }
        assert!(
            caught > 0,
            "none of {runs} damages made the Parquet reader panic: the test misses its point"
        );
    }
}
