//! The facts of a report a comparison rests on: a subset of `report --json`
//! (docs/report-json.md), read the same way whether the report was just built
//! ([`ReportFacts::from_report`]), read back from its JSON document
//! ([`ReportFacts::from_json`]) or rebuilt from the Parquet tables (rocescope-output). One
//! reader for every side, so two sides of the same capture give the same profile.

use serde::{Deserialize, Serialize};

/// What a comparison reads of a report. Unknown fields are ignored (the report adds fields
/// without changing its schema version); every field here is in schema version 1.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct ReportFacts {
    /// The report's `schema_version` (1).
    #[serde(default)]
    pub schema_version: u32,
    /// Whole-capture counters.
    pub summary: SummaryFacts,
    /// The capture points, by index.
    pub points: Vec<PointFacts>,
    /// Per-flow figures.
    pub flows: Vec<FlowFacts>,
    /// Connections (QP pairs).
    #[serde(default)]
    pub connections: Vec<ConnectionFacts>,
    /// Per capture point and priority series.
    pub timeline: TimelineFacts,
    /// Findings, worst first.
    #[serde(default)]
    pub findings: Vec<FindingFacts>,
    /// Present when the capture was sampled.
    #[serde(default)]
    pub sampled: Option<serde_json::Value>,
    /// Inputs that failed part-way.
    #[serde(default)]
    pub input_errors: Vec<String>,
    /// A signal cut the reading short.
    #[serde(default)]
    pub interrupted: bool,
    /// The NCCL settings checked against this side (`report --nccl-env`), when they were.
    #[serde(default)]
    pub nccl: Option<NcclFacts>,
    /// The audit's expectations the report was made with (`audit.expected`).
    #[serde(default)]
    pub audit: Option<AuditFacts>,
    /// The analysis settings the report was made with (`config`).
    #[serde(default)]
    pub config: Option<serde_json::Map<String, serde_json::Value>>,
    /// The NIC counters set beside the capture (`report --counters`), when they were.
    #[serde(default)]
    pub counters: Option<CountersFacts>,
    /// The ACK and READ latency samples per capture point and priority
    /// (`latency_samples`); `None` in a document made before them (and in a Parquet side),
    /// whose latency changes are then not judged.
    #[serde(default)]
    pub latency_samples: Option<Vec<crate::latency_samples::SampleSet>>,
}

/// `counters`: the NIC's figures (crate::nic_counters).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct CountersFacts {
    /// `delta` (two snapshots) or `absolute` (one).
    pub mode: String,
    /// Figures side by side.
    #[serde(default)]
    pub figures: Vec<CounterFigureFacts>,
}

/// `counters.figures[]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct CounterFigureFacts {
    /// The canonical figure (`cnp_sent`, `pause_rx`, ...).
    pub figure: String,
    /// The priority, for per-priority figures.
    #[serde(default)]
    pub priority: Option<u8>,
    /// The NIC's delta (null: no snapshot holds it, or it went backwards).
    #[serde(default)]
    pub nic: Option<u64>,
}

/// `audit`: what of it says how the report was made.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct AuditFacts {
    /// `audit.expected`: the expectations, trust mode, DSCP map and PCP tag.
    #[serde(default)]
    pub expected: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `nccl`: the report's check of an NCCL environment against the wire (crate::nccl).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct NcclFacts {
    /// The environment file.
    #[serde(default)]
    pub file: Option<String>,
    /// One entry per variable.
    #[serde(default)]
    pub variables: Vec<NcclVarFacts>,
}

/// `nccl.variables[]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct NcclVarFacts {
    /// The variable (`NCCL_IB_TC`).
    pub name: String,
    /// Its value in the file (null: NCCL's default).
    #[serde(default)]
    pub value: Option<String>,
    /// `match`, `mismatch` or `not_checked`.
    pub verdict: String,
    /// What the capture shows.
    #[serde(default)]
    pub wire: String,
    /// For a mismatch, the value that would match the wire.
    #[serde(default)]
    pub would_match: Option<String>,
}

/// `summary`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct SummaryFacts {
    /// Frames.
    pub packets: u64,
    /// RoCE frames.
    pub roce: u64,
    /// Of those, RoCEv1 (EtherType 0x8915) frames.
    #[serde(default)]
    pub roce_v1: u64,
    /// First frame time.
    pub start_ns: Option<i64>,
    /// Last frame time.
    pub end_ns: Option<i64>,
    /// Path MTU (configured or inferred; 0 unknown).
    #[serde(default)]
    pub pmtu: u32,
    /// The capture holds a low share of its request packets (absent when it holds most).
    #[serde(default)]
    pub capture_quality: Option<CaptureQualityFacts>,
    /// The time window the report was made over (`report --from/--to`), when it had one.
    #[serde(default)]
    pub window: Option<crate::report::Window>,
}

/// `summary.capture_quality` (crate::report::quality).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct CaptureQualityFacts {
    /// Request packets seen / (seen + missing).
    pub share: f64,
    /// The report's sentence.
    #[serde(default)]
    pub note: String,
}

/// `points[]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct PointFacts {
    /// Its name (the capture file's name).
    pub name: String,
    /// Frames.
    pub packets: u64,
    /// RoCE frames.
    pub roce: u64,
    /// First frame time.
    pub start_ns: Option<i64>,
    /// Latest frame time.
    pub end_ns: Option<i64>,
    /// DSCP and PCP per class, packet by packet (reports since these counts; absent in
    /// older ones and in Parquet sides, which then fall back on the flows' sets).
    #[serde(default)]
    pub marks: Option<PointMarksFacts>,
}

/// `points[].marks`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct PointMarksFacts {
    /// Data.
    pub data: ClassMarksFacts,
    /// ACK/NAKs.
    pub ack: ClassMarksFacts,
    /// CNPs.
    pub cnp: ClassMarksFacts,
}

/// One class's values and their packets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct ClassMarksFacts {
    /// DSCP values.
    #[serde(default)]
    pub dscp: Vec<ValueCountFacts>,
    /// PCP values (null: untagged).
    #[serde(default)]
    pub pcp: Vec<ValueCountFacts>,
}

/// A value and its packets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct ValueCountFacts {
    /// The value (null: untagged).
    pub value: Option<u8>,
    /// Packets.
    pub packets: u64,
}

/// `flows[]`: one direction of a QP at one capture point.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct FlowFacts {
    /// Capture point (index into `points`).
    pub point: u16,
    /// Source address.
    pub src: String,
    /// Destination address.
    pub dst: String,
    /// Destination QP.
    pub dest_qp: u32,
    /// Priority its packets map to.
    pub priority: Option<u8>,
    /// Packets.
    pub packets: u64,
    /// Wire bytes.
    pub bytes: u64,
    /// Request packets.
    #[serde(default)]
    pub requests: u64,
    /// ECN codepoints.
    pub ecn: EcnFacts,
    /// PSN analysis.
    pub psn: PsnFacts,
    /// NAKs it carries.
    pub naks: NakFacts,
    /// Positive ACKs it carries.
    pub acks: u64,
    /// CNPs it carries.
    pub cnps: u64,
    /// CNPs answering its data.
    #[serde(default)]
    pub cnps_received: u64,
    /// DSCP values seen.
    pub dscp: Vec<u8>,
    /// PCP values seen on tagged packets.
    pub pcp: Vec<u8>,
    /// Latencies.
    pub latency: LatencyFacts,
    /// The other direction (index into `flows`).
    #[serde(default)]
    pub partner: Option<usize>,
    /// Path MTU its full-size packets imply (0 unknown).
    #[serde(default)]
    pub pmtu: u32,
}

impl FlowFacts {
    /// NAKs of every code, RNR included.
    pub fn nak_total(&self) -> u64 {
        let n = &self.naks;
        [
            n.psn_seq_err,
            n.invalid_request,
            n.remote_access,
            n.remote_operational,
            n.invalid_rd,
            n.other,
            n.rnr,
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// Packets that are neither ACK/NAKs nor CNPs: requests and READ/atomic responses.
    pub fn data_packets(&self) -> u64 {
        self.packets.saturating_sub(self.acks).saturating_sub(self.nak_total()).saturating_sub(self.cnps)
    }

    /// ACK/NAK packets.
    pub fn ack_packets(&self) -> u64 {
        self.acks.saturating_add(self.nak_total())
    }
}

/// `flows[].ecn`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct EcnFacts {
    /// Not-ECT.
    pub not_ect: u64,
    /// ECT(0).
    pub ect0: u64,
    /// ECT(1).
    pub ect1: u64,
    /// CE.
    pub ce: u64,
}

/// `flows[].psn`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct PsnFacts {
    /// The flow carries RC/UC/XRC requests.
    pub tracked: bool,
    /// Packets sent again.
    pub retransmits: u64,
    /// Packets lost in the network.
    #[serde(default)]
    pub network_loss_packets: u64,
    /// ACK timer expirations.
    #[serde(default)]
    pub timeout_events: u64,
}

/// `flows[].naks`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct NakFacts {
    /// PSN sequence error.
    pub psn_seq_err: u64,
    /// Invalid request.
    pub invalid_request: u64,
    /// Remote access error.
    pub remote_access: u64,
    /// Remote operational error.
    pub remote_operational: u64,
    /// Invalid RD request.
    pub invalid_rd: u64,
    /// Reserved codes.
    pub other: u64,
    /// RNR NAKs.
    pub rnr: u64,
}

/// `flows[].latency`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct LatencyFacts {
    /// AckReq request to the ACK covering it.
    pub ack: Option<LatencyStat>,
    /// READ request to its last response.
    pub read: Option<LatencyStat>,
}

/// A latency summary: samples and percentiles (ns).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct LatencyStat {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
}

/// `connections[]`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct ConnectionFacts {
    /// Capture point.
    pub point: u16,
}

/// `findings[]`: kind, severity and title.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct FindingFacts {
    /// `critical`, `warning` or `info`.
    pub severity: String,
    /// The finding's kind.
    pub kind: String,
    /// Its title (a finding verdict quotes the worst one of its kind).
    #[serde(default)]
    pub title: String,
    /// Findings it stands for when folded.
    #[serde(default)]
    pub folded: Option<u64>,
}

/// `timeline`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct TimelineFacts {
    /// The `--bin` width.
    #[serde(default)]
    pub base_ns: u64,
    /// Per capture point.
    pub points: Vec<TimelinePoint>,
}

/// `timeline.points[]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct TimelinePoint {
    /// Index into `points`.
    pub point: u16,
    /// The series' bin width.
    pub bin_ns: u64,
    /// The priorities that carried RoCE or were paused.
    pub priorities: Vec<TimelinePriority>,
}

/// `timeline.points[].priorities[]`: bins from the capture start.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct TimelinePriority {
    /// The priority.
    pub priority: u8,
    /// Wire bytes per bin.
    pub bytes: Vec<u64>,
    /// Packets per bin.
    pub packets: Vec<u64>,
    /// CE-marked packets per bin.
    pub ce: Vec<u64>,
    /// CNPs per bin.
    pub cnps: Vec<u64>,
    /// PFC paused ns per bin.
    pub pause_ns: Vec<u64>,
    /// Data-class packets per bin (absent from documents made before them: the flows'
    /// ECN counts stand in).
    #[serde(default)]
    pub data_packets: Option<Vec<u64>>,
    /// Of those, CE-marked.
    #[serde(default)]
    pub data_ce: Option<Vec<u64>>,
}

impl ReportFacts {
    /// The facts of a report document (`report --json`). An error says what is missing or
    /// of the wrong type.
    pub fn from_json(doc: &serde_json::Value) -> Result<ReportFacts, String> {
        ReportFacts::deserialize(doc).map_err(|e| format!("not a rocescope report: {e}"))?.checked()
    }

    /// The facts of a report document read from `r` as it goes: the fields a comparison
    /// does not read are skipped, never held (a report of 100,000 QPs is 356 MB of JSON;
    /// as a `serde_json::Value` it would take several GB).
    pub fn from_reader(r: impl std::io::Read) -> Result<ReportFacts, String> {
        let facts: ReportFacts = serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, r))
            .map_err(|e| format!("not a rocescope report: {e}"))?;
        facts.checked()
    }

    /// The schema version this build reads, and every value a comparison reads within the
    /// schema's ranges (super::schema): an out-of-range value names its JSON path.
    fn checked(self) -> Result<ReportFacts, String> {
        if self.schema_version != crate::report::SCHEMA_VERSION {
            return Err(format!(
                "a report of schema version {} (this build reads version {})",
                self.schema_version,
                crate::report::SCHEMA_VERSION
            ));
        }
        super::schema::check(&self)
            .map_err(|e| format!("a value out of the report schema (docs/report.schema.json): {e}"))?;
        Ok(self)
    }

    /// The facts of a report just built: through its JSON form, so that a report and its
    /// document give the same facts.
    pub fn from_report(report: &crate::report::Report) -> Result<ReportFacts, String> {
        Self::from_serialize(report)
    }

    /// The facts of anything that serialises as a report document (a
    /// [`StreamedReport`](crate::report::StreamedReport), which writes one flow at a time):
    /// the document is written by this thread and read by another through a pipe of a few
    /// 64 KiB chunks, so it is never held whole.
    pub fn from_serialize(report: &impl serde::Serialize) -> Result<ReportFacts, String> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        std::thread::scope(|scope| {
            let reader = scope.spawn(move || Self::from_reader(ChunkReader { rx, chunk: Vec::new(), at: 0 }));
            let written = {
                // Dropped at the end of the block: the reader then sees the end of the file.
                let mut w = std::io::BufWriter::with_capacity(1 << 16, ChunkWriter(tx));
                serde_json::to_writer(&mut w, report)
                    .map_err(|e| format!("the report: {e}"))
                    .and_then(|()| std::io::Write::flush(&mut w).map_err(|e| format!("the report: {e}")))
            };
            // The reader stops early only on an error; the writer then saw a closed pipe.
            let facts = reader.join().unwrap_or_else(|_| Err("the report's reader failed".into()));
            match (facts, written) {
                (Ok(f), _) => Ok(f),
                (Err(e), Ok(())) => Err(e),
                (Err(_), Err(w)) => Err(w),
            }
        })
    }
}

/// The writing end of [`ReportFacts::from_report`]'s pipe: each write a chunk.
struct ChunkWriter(std::sync::mpsc::SyncSender<Vec<u8>>);

impl std::io::Write for ChunkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.send(buf.to_vec()).map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The reading end: the chunks in order, end of file when the writer is done.
struct ChunkReader {
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl std::io::Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at >= self.chunk.len() {
            match self.rx.recv() {
                Ok(c) => {
                    self.chunk = c;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let rest = self.chunk.get(self.at..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf.get_mut(..n).unwrap_or_default().copy_from_slice(rest.get(..n).unwrap_or_default());
        self.at += n;
        Ok(n)
    }
}
