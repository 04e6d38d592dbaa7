//! # rocescope-analyzer
//!
//! Streaming analysis of decoded RoCE traffic, one pass, O(1) per packet, memory that grows
//! with the number of flows rather than packets: per-flow (one direction of a QP) transport
//! health (PSN gaps, retransmissions by cause, NAKs, RNR, ACK/READ latency), ECN and CNPs,
//! throughput over time, connection pairing (CM MADs, else PSN matching), PFC/PAUSE
//! timelines with storm and deadlock hints, and a QoS audit. [`Analyzer::report`] builds a
//! serialisable [`Report`] at any time (a live UI can take snapshots).
//!
//! Rules follow `shared/reference/roce-protocol.md` §1.7-1.11; PSN arithmetic is 24-bit
//! modular everywhere.
//!
//! The analysis takes decoded packets, not devices: decode each frame with
//! `rocescope-decoder` and push it with its capture facts ([`FrameMeta`]). Reading capture
//! files is `rocescope-capture`'s job; its records go straight in with the optional
//! **`capture` feature** (`features = ["capture"]`: [`FrameMeta::from_record`],
//! `Analyzer::push_record`, `Analyzer::push_frame`), which this first example does not need:
//!
//! ```
//! use rocescope_analyzer::{Analyzer, Config, FrameMeta};
//! use rocescope_decoder::{decode, DecodeOptions, LinkType};
//!
//! let mut analyzer = Analyzer::new(Config::default());
//! let opts = DecodeOptions::default();
//! let frames: Vec<(i64, Vec<u8>)> = Vec::new(); // (capture time in ns, frame bytes)
//! for (i, (ts_ns, bytes)) in frames.iter().enumerate() {
//!     let packet = decode(LinkType::ETHERNET, bytes, &opts);
//!     let meta = FrameMeta { number: i as u64 + 1, ts_ns: *ts_ns, len: bytes.len() as u32, link_bps: None, point: 0 };
//!     // push_packet also reads sFlow datagrams (UDP 6343) as the headers they sample.
//!     analyzer.push_packet(&meta, &packet, &opts);
//! }
//! analyzer.finish();
//! let report = analyzer.report();
//! // `flows`: one entry per direction (a QP's requests one way, its responses and ACKs the
//! // other); `connections`: one per QP pair, its two flows paired.
//! assert!(report.flows.is_empty() && report.connections.is_empty());
//! ```
//!
//! With the `capture` feature, a file's records feed it directly (the README's example):
//! `while let Some(rec) = reader.next_record()? { analyzer.push_record(&rec, &opts); }`.
#![forbid(unsafe_code)]

mod addr_hash;
pub mod audit;
mod capture_wide;
pub mod cc;
mod chunked;
pub mod cm;
pub mod compare;
mod congestion;
pub mod crosspoint;
pub mod dedup;
#[cfg(feature = "capture")]
pub mod divide;
pub mod ecmp;
pub mod fabric;
mod findings;
pub mod flow;
mod fold;
mod frame;
pub mod incast;
pub mod latency_samples;
pub mod link;
pub mod marks;
pub mod mirror;
pub mod nccl;
pub mod nic_counters;
pub mod overlay;
pub mod parallel;
mod pause_watch;
mod pauses;
pub mod pfc;
pub mod pipeline;
pub mod psn;
mod qos;
pub mod report;
pub mod rhythm;
pub mod runs;
pub mod sflow;
pub mod stats;
pub mod store;
mod transport;

/// The README's examples, compiled (and run, where they need no file) as doc tests.
#[cfg(all(doctest, feature = "capture"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use audit::AuditConfig;
pub use cc::CcConfig;
pub use flow::{Flow, FlowKey, Pairing};
/// The findings a NIC's counters add ([`nic_counters::findings`]), at the path they had.
pub use nic_counters::findings as nic_findings;
pub use pfc::{PauseKind, PfcConfig};
pub use report::Report;
pub use rocescope_model::summary::SamplingSource;

use flow::MAX_OUTSTANDING;
use pfc::Timeline;
use psn::PsnConfig;
use rocescope_decoder::{Ecn, IcrcStatus, Opcode, OpcodeOptions, Packet};
use rustc_hash::FxHashMap;
use std::net::IpAddr;

/// Analysis settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Link speed for pause-time conversion when the capture gives none (default 100G).
    pub link_speed_bps: u64,
    /// Path MTU for READ PSN reservations; inferred from full-size packets when `None`.
    pub pmtu: Option<u32>,
    /// Initial throughput bin width (widens as the capture grows).
    pub bin_ns: u64,
    /// How late a packet may arrive (after the gap it fills was seen) and count as
    /// ordinary reordering; later ones are reported as late, never as loss.
    pub reorder_ns: i64,
    /// The shortest ACK timeout requesters use (4.096 µs × 2^t): a resend with no NAK
    /// pending sooner than this after the original is not called a timeout. A CM REQ's
    /// local ACK timeout, when captured, replaces it for its connection.
    pub min_ack_timeout_ns: i64,
    /// PFC storm and deadlock settings.
    pub pfc: PfcConfig,
    /// QoS expectations.
    pub audit: AuditConfig,
    /// How opcodes are read.
    pub opcode: OpcodeOptions,
    /// How frames were decoded: frames held back while a switch clock is checked are
    /// decoded again with it ([`mirror`]).
    pub decode: rocescope_decoder::DecodeOptions,
    /// Names of the capture points when several captures are merged (`-r a -r b`): each
    /// point's view is analysed apart, and flows seen at two points are compared. Empty for
    /// a single source.
    pub points: Vec<String>,
    /// How long a packet seen at one capture point waits to be seen at the others before
    /// it counts as lost between them (ns): covers clock offsets between the hosts.
    pub match_window_ns: i64,
    /// Findings of one kind listed one by one, the most important first; the rest fold into
    /// one summary finding of that kind (0: no limit). A million QPs with a bad ICRC each
    /// would otherwise be a million findings.
    pub findings_per_kind: usize,
    /// The capture is sampled (one packet in N; docs/verdicts.md "Sampled captures"):
    /// packet and byte counters are scaled by the rate, and verdicts that need every packet
    /// (PSN loss, resend causes, reordering, pause storms...) are off. `None`: every packet
    /// was captured. sFlow sets it when its first sample arrives
    /// ([`Analyzer::mark_sampled`]), each sample carrying its own rate.
    pub sampling: Option<Sampling>,
    /// Read frames to UDP port 6343 that are sFlow v5 datagrams as sFlow: their sampled
    /// headers are analysed, not the datagrams (feature `capture`,
    /// [`Analyzer::push_frame`]). On by default.
    pub sflow: bool,
    /// Each mirror session (ERSPAN session, VXLAN/Geneve VNI) of a capture point is a capture
    /// point of its own ([`mirror`]; `--one-point-per-capture` turns it off).
    pub mirror_sessions: bool,
    /// Time frames by the switch's ERSPAN III timestamps where they are carried, anchored to
    /// the capture clock ([`mirror`]; `--capture-clock` turns it off).
    pub switch_clock: bool,
    /// An untagged frame's ERSPAN COS serves as its PCP where the ERSPAN header says a tag
    /// was stripped ([`mirror`]; `--no-erspan-cos` turns it off).
    pub erspan_cos: bool,
    /// Congestion-control settings: CNP pacing and the rate-reaction windows
    /// (docs/verdicts.md "Congestion control").
    pub cc: CcConfig,
    /// Analyse the second copies of packets a mirror put in the capture twice as packets of
    /// their own (`--keep-duplicates`); by default they are counted and dropped ([`dedup`]).
    pub keep_duplicates: bool,
    /// ECMP prediction and uplinks (`--ecmp-paths`, `--ecmp-hash`, `--uplinks`;
    /// docs/verdicts.md "ECMP"): read at report time only.
    pub ecmp: ecmp::EcmpConfig,
}

/// How a capture is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Where the rate comes from.
    pub source: SamplingSource,
    /// One packet in this many was captured: the weight of a packet fed with
    /// [`Analyzer::push`] (sFlow samples bring their own, [`Analyzer::push_sampled`]).
    pub rate: u32,
}

/// The sampling rates actually met.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SamplingSeen {
    /// Packets fed (samples), unscaled.
    pub samples: u64,
    /// Smallest rate met (0: none yet).
    pub rate_min: u32,
    /// Largest rate met.
    pub rate_max: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            link_speed_bps: 100_000_000_000,
            pmtu: None,
            bin_ns: 10_000_000,
            reorder_ns: 100_000,
            min_ack_timeout_ns: psn::ack_timeout_ns(14),
            pfc: PfcConfig::default(),
            audit: AuditConfig::default(),
            opcode: OpcodeOptions::default(),
            decode: rocescope_decoder::DecodeOptions::default(),
            points: Vec::new(),
            match_window_ns: 500_000_000,
            findings_per_kind: 10,
            sampling: None,
            sflow: true,
            mirror_sessions: true,
            switch_clock: true,
            erspan_cos: true,
            cc: CcConfig::default(),
            keep_duplicates: false,
            ecmp: ecmp::EcmpConfig::default(),
        }
    }
}

/// Capture facts about a frame the decoder does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameMeta {
    /// 1-based frame number.
    pub number: u64,
    /// Capture time, ns since the epoch.
    pub ts_ns: i64,
    /// Wire length from the capture record.
    pub len: u32,
    /// Interface speed when the capture records it (pcapng `if_speed`).
    pub link_bps: Option<u64>,
    /// Capture point (index into [`Config::points`]; 0 for a single source).
    pub point: u16,
}

#[cfg(feature = "capture")]
impl FrameMeta {
    /// The capture facts of a record read with `rocescope-capture`, as frame `number`
    /// (1-based). Feature `capture`.
    ///
    /// ```
    /// use rocescope_analyzer::FrameMeta;
    /// use rocescope_capture::CaptureReader;
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let mut reader = CaptureReader::open(path)?;
    /// let rec = reader.next_record()?.expect("demo.pcap has frames");
    /// let meta = FrameMeta::from_record(1, &rec);
    /// assert_eq!((meta.number, meta.len, meta.point), (1, 1098, 0));
    /// assert_eq!(meta.ts_ns, rec.ts_ns);
    /// # Ok::<(), rocescope_capture::CaptureError>(())
    /// ```
    pub fn from_record(number: u64, rec: &rocescope_capture::Record<'_>) -> Self {
        FrameMeta { number, ts_ns: rec.ts_ns, len: rec.len, link_bps: rec.link_bps, point: rec.point }
    }
}

/// Whole-capture counters.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// Frames (in a sampled capture, the estimate: each sample times its rate).
    pub packets: u64,
    /// Frames fed, unscaled: the number the next frame gets ([`Analyzer::push_record`]).
    pub frames: u64,
    /// RoCE frames (v1 and v2) that decoded completely.
    pub roce: u64,
    /// Of those, RoCEv1.
    pub roce_v1: u64,
    /// Frames that are neither RoCE nor MAC Control (nor malformed RoCE).
    pub non_roce: u64,
    /// Frames to the RoCE port (or EtherType 0x8915) that did not decode as RoCE.
    pub malformed: u64,
    /// Frames in an encapsulation the decoder recognised but did not unwrap (also counted
    /// in `non_roce`): their RoCE, if any, was not seen.
    pub tunnel_undecoded: u64,
    /// Why, with how many frames each (at most 8 reasons kept), in order of appearance.
    pub tunnel_undecoded_reasons: Vec<(rocescope_decoder::UndecodedReason, u64)>,
    /// Invalid ICRCs.
    pub icrc_bad: u64,
    /// ICRCs not checkable because the capture cut the frame.
    pub icrc_truncated: u64,
    /// PFC frames.
    pub pfc_frames: u64,
    /// 802.3x PAUSE frames.
    pub pause_frames: u64,
    /// CNPs.
    pub cnps: u64,
    /// First and last frame times.
    pub start_ns: Option<i64>,
    /// Last frame time.
    pub end_ns: Option<i64>,
    /// Wire bytes of RoCE frames.
    pub roce_bytes: u64,
    /// RoCE frames that were a mirror's second copy of a packet ([`dedup`]): not in `roce`
    /// nor in any other RoCE figure, unless [`Config::keep_duplicates`].
    pub duplicates: u64,
    /// Flows no longer tracked: evicted when idle ([`Analyzer::evict_idle`]) or past the
    /// flow cap ([`Analyzer::evict_over`]), with their packets and wire bytes.
    pub flows_evicted: u64,
    /// See `flows_evicted`.
    pub evicted_packets: u64,
    /// See `flows_evicted`.
    pub evicted_bytes: u64,
    /// First malformed frames (evidence).
    pub malformed_frames: Vec<(u64, String)>,
}

impl Totals {
    /// The totals as one capture point's counters.
    fn as_point(&self) -> PointTotals {
        PointTotals {
            packets: self.packets,
            roce: self.roce,
            duplicates: self.duplicates,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
        }
    }
}

/// What one capture point saw.
#[derive(Clone, Copy, Debug, Default)]
pub struct PointTotals {
    /// Frames.
    pub packets: u64,
    /// RoCE frames.
    pub roce: u64,
    /// Mirror duplicates ([`Totals::duplicates`]).
    pub duplicates: u64,
    /// First frame time.
    pub start_ns: Option<i64>,
    /// Latest frame time.
    pub end_ns: Option<i64>,
}

/// RoCE activity per priority (for pauses on unused priorities and deadlock hints).
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityUse {
    /// RoCE packets.
    pub packets: u64,
    /// First RoCE packet time.
    pub first_ts: Option<i64>,
}

/// A pause timeline: (capture point, pausing MAC, kind, priority).
pub(crate) type TimelineKey = (u16, [u8; 6], PauseKind, u8);

/// Accumulated audit mismatches: (flow index or none, what, seen) -> (packets, first frame).
type AuditKey = (Option<usize>, &'static str, u8);

/// A CM REQ waiting for its REP: the requester's address, QPN, starting PSN and local ACK
/// timeout exponent.
type CmRequest = (IpAddr, u32, u32, Option<u8>);

/// The streaming analyzer.
#[derive(Debug)]
pub struct Analyzer {
    cfg: Config,
    /// The last flow looked up: packets of one flow tend to come in runs.
    last: Option<(FlowKey, usize)>,
    /// The flows, indexed by key and by host pair.
    flows: store::FlowStore,
    /// The last CNP to a data sender's host from its receiver's host, by (point, data
    /// source, data destination): an NP pacing CNPs per host pair or port answers CE marks
    /// on one QP with a CNP to another (cc module).
    cnp_hosts: addr_hash::AddrMap<(u16, IpAddr, IpAddr), i64>,
    cm_pending: FxHashMap<(u16, u64), CmRequest>,
    /// ACK timeouts CM REQs gave, by flow (both directions of the connection).
    cm_timeout: FxHashMap<FlowKey, i64>,
    cm_partner: FxHashMap<FlowKey, (FlowKey, Option<u32>)>,
    timelines: FxHashMap<TimelineKey, Timeline>,
    /// The timelines with a pause under way: the only ones a RoCE frame can change, followed
    /// without a walk per frame (pause_watch module; issues 28 and 39).
    pause_watch: pause_watch::PauseWatch,
    /// RoCE per (capture point, MAC), sent and received, per priority, and each point's
    /// station: which way traffic goes during pauses.
    macs: link::MacTraffic,
    /// Per capture point and priority: throughput, CE, CNPs and paused time over time at the
    /// `--bin` resolution (capture-wide state, like the pause timelines).
    fabric: fabric::Fabric,
    /// DSCP and PCP per point and class, packet by packet (crate::marks).
    marks: marks::PointMarks,
    /// The flows' shares of the fan-in, fabric series and marks, folded at bin close
    /// (crate::fold).
    folds: fold::Folds,
    /// ACK and READ latency samples per point and priority, pooled over the flows
    /// (crate::latency_samples): what `compare` tests a latency change on.
    latency_samples: latency_samples::Pools,
    /// The capture's share of its request packets as the report being built found it (f64
    /// bits; NaN before a report): set at the start of each report build, read by verdicts
    /// that a lossy capture weakens (report::quality, report::qp_life). Atomic so that a
    /// report streamed from another thread reads it.
    capture_share: std::sync::atomic::AtomicU64,
    /// RoCE per priority, per capture point.
    priorities: Vec<PriorityUse>,
    /// Per capture point.
    points: Vec<PointTotals>,
    /// Packets matched across capture points (several merged captures only).
    matcher: Option<crosspoint::Matcher>,
    totals: Totals,
    pmtu_seen: u32,
    audit: FxHashMap<AuditKey, (u64, u64)>,
    /// Any packet-level audit check configured.
    audit_active: bool,
    /// How many packets the one being fed stands for (its sampling rate; 1 unsampled).
    weight: u64,
    /// Rates met in a sampled capture.
    sampling_seen: SamplingSeen,
    /// sFlow datagrams and their data sources.
    sflow: sflow::SflowState,
    /// Mirror sessions and switch clocks.
    mirror: mirror::MirrorState,
    /// Recent packets, to drop a mirror's second copies.
    dedup: dedup::Dedup,
    /// Senders per receiver per `--bin` bin (capture-wide state).
    pub(crate) fan_in: incast::FanIn,
    /// VXLAN and Geneve VTEP pairs, and which carry the fabric's traffic (an overlay).
    pub(crate) overlay: overlay::Overlay,
    /// The analysis point of the last frame fed.
    last_point: u16,
    /// Packets fed so far (every [`Analyzer::push_sampled`] call): orders flows when the
    /// shards of a parallel analysis are merged ([`parallel`]).
    pushed: u64,
    /// This analyzer keeps the flows of shard `.0` of `.1` only ([`Analyzer::set_shard`]).
    shard: Option<(u32, u32)>,
}

fn ip_of(p: &Packet<'_>) -> Option<(IpAddr, IpAddr, u8, Ecn)> {
    if let Some(ip) = &p.ip {
        return Some((ip.src(), ip.dst(), ip.dscp(), ip.ecn()));
    }
    let g = p.roce.as_ref()?.grh?;
    // An IPv4-mapped GID (::ffff:a.b.c.d) is the IPv4 host: a RoCEv1 request and its RoCEv2
    // ACK (rocev1_test.pcap mixes both on one connection) belong to the same flows.
    let (s, d) = (IpAddr::V6(g.sgid()).to_canonical(), IpAddr::V6(g.dgid()).to_canonical());
    Some((s, d, g.tclass() >> 2, Ecn::from_bits(g.tclass())))
}

/// Round a payload size to the IB path MTU it implies.
fn mtu_class(len: usize) -> u32 {
    [256u32, 512, 1024, 2048, 4096].into_iter().find(|m| len <= *m as usize).unwrap_or(4096)
}

impl Analyzer {
    /// A new analyzer with the given settings ([`Config::default`] suits most captures).
    ///
    /// ```
    /// use rocescope_analyzer::{Analyzer, Config};
    ///
    /// let cfg = Config { link_speed_bps: 25_000_000_000, ..Config::default() };
    /// let analyzer = Analyzer::new(cfg);
    /// assert_eq!(analyzer.config().link_speed_bps, 25_000_000_000);
    /// let report = analyzer.report();
    /// assert_eq!(report.summary.packets, 0);
    /// assert!(report.findings.is_empty() && report.flows.is_empty());
    /// ```
    pub fn new(cfg: Config) -> Self {
        // Every expectation looks at packets (`lossless_priorities` too: data must map to one).
        let audit_active = cfg.audit.is_set();
        let npoints = cfg.points.len().max(1);
        let fabric = fabric::Fabric::new(cfg.bin_ns);
        let folds = fold::Folds::new(cfg.bin_ns);
        // Sampled points never take part in matching across points: a packet sampled at one
        // point is almost never the one sampled at the other.
        let matcher = (cfg.points.len() > 1 && cfg.sampling.is_none())
            .then(|| crosspoint::Matcher::new(cfg.points.len(), cfg.match_window_ns));
        Analyzer {
            cfg,
            last: None,
            flows: store::FlowStore::default(),
            cnp_hosts: addr_hash::AddrMap::default(),
            cm_pending: FxHashMap::default(),
            cm_partner: FxHashMap::default(),
            cm_timeout: FxHashMap::default(),
            timelines: FxHashMap::default(),
            pause_watch: pause_watch::PauseWatch::default(),
            macs: link::MacTraffic::default(),
            fabric,
            marks: marks::PointMarks::default(),
            folds,
            latency_samples: latency_samples::Pools::default(),
            capture_share: std::sync::atomic::AtomicU64::new(f64::NAN.to_bits()),
            priorities: vec![PriorityUse::default(); npoints * 8],
            points: vec![PointTotals::default(); npoints],
            matcher,
            totals: Totals::default(),
            pmtu_seen: 0,
            audit: FxHashMap::default(),
            audit_active,
            weight: 1,
            sampling_seen: SamplingSeen::default(),
            sflow: sflow::SflowState::default(),
            mirror: mirror::MirrorState::default(),
            dedup: dedup::Dedup::default(),
            fan_in: incast::FanIn::default(),
            overlay: overlay::Overlay::default(),
            last_point: 0,
            pushed: 0,
            shard: None,
        }
    }

    /// The capture turned out to be sampled (an sFlow datagram arrived): from now on the
    /// report says so, and matching across capture points stops. A sampling already
    /// configured is kept.
    pub fn mark_sampled(&mut self, source: SamplingSource) {
        if self.cfg.sampling.is_none() {
            self.cfg.sampling = Some(Sampling { source, rate: 1 });
        }
        self.matcher = None;
    }

    /// What the sFlow datagrams held so far (`None` when none was met).
    pub fn sflow_summary(&self) -> Option<report::SflowReport> {
        self.sflow.report()
    }

    /// Rates met so far in a sampled capture.
    pub fn sampling_seen(&self) -> SamplingSeen {
        self.sampling_seen
    }

    /// Add a capture point found while reading (an sFlow agent and interface) and return its
    /// index for [`FrameMeta::point`]. Points of a sampled capture take no part in matching
    /// across points. At most `u16::MAX` points: beyond, the last index is returned again.
    pub fn add_point(&mut self, name: String) -> u16 {
        if self.cfg.points.is_empty() {
            self.cfg.points.push(name);
            return 0;
        }
        if self.cfg.points.len() > usize::from(u16::MAX) {
            return u16::MAX;
        }
        self.cfg.points.push(name);
        let n = self.cfg.points.len();
        if self.points.len() < n {
            if let [only] = self.points.as_mut_slice() {
                *only = self.totals.as_point();
            }
            self.points.resize(n, PointTotals::default());
            self.priorities.resize(n * 8, PriorityUse::default());
        }
        u16::try_from(n - 1).unwrap_or(u16::MAX)
    }

    /// The capture point the last frame fed was counted at: its record's, or its mirror
    /// session's ([`mirror`]), or its sFlow source's. For a UI naming each frame's point.
    pub fn last_point(&self) -> u16 {
        self.last_point
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Flows seen so far.
    pub fn flows(&self) -> &store::FlowStore {
        &self.flows
    }

    /// Whole-capture counters.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The PMTU in use (configured, or inferred; 0 when unknown).
    pub fn pmtu(&self) -> u32 {
        self.cfg.pmtu.unwrap_or(self.pmtu_seen)
    }

    fn flow_id(&mut self, key: FlowKey, frame: u64, ts: i64) -> usize {
        if let Some((k, id)) = self.last {
            if k == key {
                return id;
            }
        }
        if let Some(id) = self.flows.find(&key) {
            self.last = Some((key, id));
            return id;
        }
        let id = self.flows.len();
        let mut f = Flow::new(key, frame, ts, self.cfg.bin_ns);
        if let Some(&t) = self.cm_timeout.get(&key) {
            f.cold_mut().cm_ack_timeout_ns = Some(t);
        }
        if let Some((partner_key, start_psn)) = self.cm_partner.get(&key).copied() {
            if start_psn.is_some() {
                f.cold_mut().cm_start_psn = start_psn;
            }
            if let Some(pid) = self.flows.find(&partner_key) {
                f.set_partner(Some(pid));
                f.set_pairing(Some(Pairing::Cm));
                if let Some(p) = self.flows.get_mut(pid) {
                    p.set_partner(Some(id));
                    p.set_pairing(Some(Pairing::Cm));
                }
            }
        }
        if self.shard.is_some() {
            // Orders the shards' flows at the merge (crate::parallel).
            self.flows.push_numbered(f, self.pushed);
        } else {
            self.flows.push(f);
        }
        self.last = Some((key, id));
        id
    }

    /// Feed one decoded frame. Frames go in capture order, numbered from 1 (the numbers
    /// are what findings cite as evidence).
    ///
    /// ```
    /// use rocescope_analyzer::{Analyzer, Config, FrameMeta};
    /// use rocescope_decoder::build::{IbRepr, IpRepr, RoceV2Frame};
    /// use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode};
    /// use std::net::Ipv4Addr;
    ///
    /// let mut analyzer = Analyzer::new(Config::default());
    /// let opts = DecodeOptions::default();
    /// let ip = IpRepr::V4 {
    ///     src: Ipv4Addr::new(10, 0, 0, 1),
    ///     dst: Ipv4Addr::new(10, 0, 0, 2),
    ///     dscp: 26,
    ///     ecn: Ecn::Ect0,
    ///     ttl: 64,
    ///     id: 0,
    /// };
    /// // Three SENDs on QP 0x12 with PSN 7 missing.
    /// for (number, psn) in [(1, 5), (2, 6), (3, 8)] {
    ///     let bth = BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x12, psn, ..Default::default() };
    ///     let ib = IbRepr { bth, payload: vec![0; 64], ..Default::default() };
    ///     let frame = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(opts.opcode);
    ///     let packet = decode(LinkType::ETHERNET, &frame, &opts);
    ///     let meta = FrameMeta {
    ///         number,
    ///         ts_ns: number as i64 * 1_000,
    ///         len: frame.len() as u32,
    ///         link_bps: None,
    ///         point: 0,
    ///     };
    ///     analyzer.push(&meta, &packet);
    /// }
    /// assert_eq!(analyzer.totals().roce, 3);
    /// let report = analyzer.report();
    /// assert_eq!(report.flows.len(), 1);
    /// assert_eq!(report.flows[0].dest_qp, 0x12);
    /// assert_eq!(report.flows[0].psn.gaps, 1);
    /// ```
    pub fn push(&mut self, meta: &FrameMeta, p: &Packet<'_>) {
        let rate = self.cfg.sampling.map_or(1, |s| s.rate);
        self.push_sampled(meta, p, rate);
    }

    /// Feed one sampled packet that stands for `rate` packets (one in `rate` was sampled):
    /// its packet and byte counters count `rate` times (docs/verdicts.md "Sampled
    /// captures"). [`Analyzer::push`] uses the configured rate; sFlow samples bring their
    /// own. A rate of 0 counts as 1.
    pub fn push_sampled(&mut self, meta: &FrameMeta, p: &Packet<'_>, rate: u32) {
        // Held back while a session's switch clock is checked (mirror module).
        if (!p.tunnels.is_empty() || self.mirror.checking()) && self.hold_for_clock_check(meta, p, rate) {
            return;
        }
        self.pushed += 1;
        // A VXLAN or Geneve overlay frame: what the underlay sees of it (overlay module).
        let outer = if p.tunnels.is_empty() {
            None
        } else {
            self.overlay.observe(meta.point, p, self.cfg.audit.pcp_tag)
        };
        // A mirrored frame counts at its session's point, at its switch's time.
        let mirrored;
        let meta = if p.tunnels.is_empty() {
            meta
        } else {
            mirrored = self.mirror_meta(meta, p, outer.is_some());
            &mirrored
        };
        let multi = self.begin_frame(meta, rate);
        let w = self.weight;
        let t = &mut self.totals;
        // A header the capture cut off (snap length: the record is shorter than the frame on
        // the wire) is not a malformed frame: what decoded before it is analysed.
        let cut = (meta.len as usize) > p.data.len()
            && p.error.is_some_and(|e| matches!(e.kind, rocescope_decoder::ErrorKind::Truncated { .. }));
        if cut && p.is_malformed_roce() && p.roce.is_none() {
            t.icrc_truncated += w;
            return;
        }
        if p.is_malformed_roce() && !cut {
            t.malformed += w;
            if t.malformed_frames.len() < 10 {
                let why = p.error.map(|e| e.to_string()).unwrap_or_default();
                t.malformed_frames.push((meta.number, why));
            }
            return;
        }
        if let Some(mc) = p.mac_control {
            // Pause timelines are capture-wide state: of a parallel analysis, the first
            // shard's are kept ([`parallel::merge`]); the others skip them.
            if self.keeps_capture_state() {
                self.on_mac_control(meta, p, mc);
            }
            return;
        }
        if p.roce.is_none() {
            t.non_roce += w;
            if let Some(u) = p.tunnel_undecoded {
                t.tunnel_undecoded += w;
                let reasons = &mut t.tunnel_undecoded_reasons;
                if let Some((_, n)) = reasons.iter_mut().find(|(r, _)| *r == u.reason) {
                    *n += w;
                } else if reasons.len() < 8 {
                    reasons.push((u.reason, w));
                }
            }
            return;
        }
        let Some(v) = self.frame_of_packet(meta, p, outer.as_ref(), cut) else {
            self.totals.non_roce += w;
            return;
        };
        self.on_roce(meta, &v, multi, None);
    }

    /// Feed one common RoCEv2 frame classified at fixed offsets
    /// ([`rocescope_decoder::fast::classify`]): what [`Analyzer::push_sampled`] does with
    /// the same frame decoded in full, with `rate` as there (the fast path, issue 28).
    pub fn push_common(&mut self, meta: &FrameMeta, c: &rocescope_decoder::fast::Common, rate: u32) {
        if self.mirror.checking() {
            // A frame the fast path read cannot be held: the checks end with what they saw.
            self.end_clock_checks();
        }
        self.push_common_unheld(meta, c, rate, None);
    }

    /// [`Analyzer::push_common`] once no switch clock's check holds frames back: what the
    /// record path calls, which has asked already (issue 39: no test twice per frame). Inlined
    /// in both, with [`Analyzer::begin_frame`]: no call per frame before the analysis.
    /// `checked`: whether the frame is a mirror's copy, when that was checked ahead of the
    /// analysis (crate::pipeline).
    #[inline(always)]
    pub(crate) fn push_common_unheld(
        &mut self,
        meta: &FrameMeta,
        c: &rocescope_decoder::fast::Common,
        rate: u32,
        checked: Option<dedup::Copy>,
    ) {
        self.pushed += 1;
        let multi = self.begin_frame(meta, rate);
        let v = self.frame_of_common(meta, c);
        self.on_roce(meta, &v, multi, checked);
    }

    /// The bookkeeping every frame gets first: its point, weight and the capture-wide
    /// counts. Returns whether several capture points are counted.
    #[inline(always)]
    fn begin_frame(&mut self, meta: &FrameMeta, rate: u32) -> bool {
        self.last_point = meta.point;
        let rate = rate.max(1);
        let w = u64::from(rate);
        self.weight = w;
        if self.cfg.sampling.is_some() {
            let s = &mut self.sampling_seen;
            s.samples += 1;
            s.rate_min = if s.rate_min == 0 { rate } else { s.rate_min.min(rate) };
            s.rate_max = s.rate_max.max(rate);
        }
        let point = usize::from(meta.point);
        // A single source's point counters are the totals (see `points`): the per-frame
        // bookkeeping is for merged captures only.
        let multi = point > 0 || self.points.len() > 1;
        if multi {
            if point >= self.points.len() {
                // More points than configured names: grow rather than mix them up. Until
                // now every frame was point 0's.
                if let [only] = self.points.as_mut_slice() {
                    *only = self.totals.as_point();
                }
                self.points.resize(point + 1, PointTotals::default());
                self.priorities.resize((point + 1) * 8, PriorityUse::default());
            }
            if let Some(pt) = self.points.get_mut(point) {
                pt.packets = pt.packets.saturating_add(w);
                pt.start_ns.get_or_insert(meta.ts_ns);
                pt.end_ns = Some(pt.end_ns.map_or(meta.ts_ns, |e| e.max(meta.ts_ns)));
            }
            if let Some(m) = &mut self.matcher {
                m.advance(meta.point, meta.ts_ns);
            }
        }
        let t = &mut self.totals;
        t.packets = t.packets.saturating_add(w);
        t.frames += 1;
        // The latest time, not the last frame's: merged captures are not always in order.
        // (The first frame sets both; then only a later time writes.)
        match t.end_ns {
            Some(e) if e >= meta.ts_ns => {}
            Some(_) => t.end_ns = Some(meta.ts_ns),
            None => {
                t.start_ns.get_or_insert(meta.ts_ns);
                t.end_ns = Some(meta.ts_ns);
            }
        }
        multi
    }

    /// The analysis of one RoCE packet `v`, however it was read; `checked`, whether it is a
    /// mirror's copy when that was checked ahead of the analysis (crate::pipeline).
    fn on_roce(
        &mut self,
        meta: &FrameMeta,
        v: &frame::RoceFrame<'_>,
        multi: bool,
        checked: Option<dedup::Copy>,
    ) {
        let w = self.weight;
        let point = usize::from(meta.point);
        let (src, dst, dscp, ecn, prio) = (v.src, v.dst, v.dscp, v.ecn, v.prio);
        let op = v.op;
        // A mirror's second copy of a packet (dedup module): counted, and left out of the
        // analysis unless kept.
        if self.mirror_copy(meta, v, multi, checked) {
            return;
        }
        let wire = v.wire;
        let t = &mut self.totals;
        t.roce += w;
        t.roce_bytes = t.roce_bytes.saturating_add(wire.saturating_mul(w));
        if multi {
            if let Some(pt) = self.points.get_mut(point) {
                pt.roce += w;
            }
        }
        let t = &mut self.totals;
        if v.v1 {
            t.roce_v1 += w;
        }
        match v.icrc.status {
            IcrcStatus::Invalid => t.icrc_bad += w,
            IcrcStatus::Truncated => t.icrc_truncated += w,
            _ if v.cut => t.icrc_truncated += w,
            _ => {}
        }
        let start = t.start_ns.unwrap_or(meta.ts_ns);
        let key = FlowKey { src, dst, dest_qp: v.dest_qp, point: meta.point };
        if v.stripped_pcp.is_some() {
            self.mirror.count_pcp(meta.point, w);
        }
        let is_cnp = v.info.cnp;
        if is_cnp {
            self.totals.cnps += w;
        }
        let owned = self.owns(src, dst);
        // Of a parallel analysis, whether this shard keeps the capture-wide figures: asked
        // once per frame.
        let keeps = self.keeps_capture_state();
        let mut folded = None;
        if keeps {
            // A frame of a flow kept here adds to its flow's share (crate::fold).
            folded = self.fold_clock(meta.point, meta.ts_ns - start).filter(|_| owned);
            self.capture_wide_pass(meta, v, start, folded.is_some());
        }
        if v.info.full_size && v.payload_len > 0 {
            // A First/Middle packet is full-size: its payload is the path MTU.
            self.pmtu_seen = self.pmtu_seen.max(mtu_class(v.payload_len));
        }
        // Everything above concerns the whole capture; what follows, the flows of this host
        // pair, which a shard of a parallel analysis keeps only when they are its own.
        if !owned {
            if keeps {
                self.count_to_mac(None, meta.point, v);
            }
            return;
        }
        let id = self.flow_id(key, meta.number, meta.ts_ns);
        if keeps {
            self.count_to_mac(Some(id), meta.point, v);
        }
        // Across capture points, only packets a PSN names: connected requests and READ
        // responses (ACKs repeat PSNs, CNPs carry none).
        if let Some(m) = &mut self.matcher {
            if v.info.named {
                m.seen(key, v.psn, op.0, meta);
            }
        }
        self.check_audit(id, meta.number, v.info.class, (dscp, v.pcp, prio), (!v.v1).then_some(ecn));
        if let Some(o) = v.outer_dscp {
            self.check_outer_dscp(id, meta.number, v.info.class, o);
        }
        self.count_in_flow(id, meta, v, start);
        if is_cnp {
            if let Some(bin_key) = folded {
                self.fold_frame(id, bin_key, meta, v);
            }
            self.on_cnp(id, meta, v.dest_qp, start);
            return;
        }
        let Some(f) = self.flows.get_mut(id) else { return };
        // The flow's share of its bin takes the frame, or a new share starts (below).
        let fold_start = folded
            .map(|k| fold::frame_key(k, v))
            .filter(|&k| !fold::add_frame(&mut self.folds, f, id, k, v, meta.number));
        // The notification point answers CE-marked data (reference §1.6): a marked ACK or
        // NAK (a flow carrying data one way holds the ACKs of the other) draws no CNP.
        if ecn == Ecn::Ce && v.info.class == audit::Class::Data {
            Self::on_ce(f, &self.cfg.cc, &self.cnp_hosts, meta, v.psn, w);
        }
        if let Some(cc) = f.cc_if_any() {
            cc.on_packet(meta.ts_ns, wire.saturating_mul(w));
        }
        if v.info.ends_message {
            f.add_count(flow::count::MESSAGES, w);
        }
        if v.info.full_size && v.payload_len > 0 {
            // A First/Middle packet is full-size: its payload is the path MTU.
            f.pmtu = f.pmtu.max(u16::try_from(mtu_class(v.payload_len)).unwrap_or(4096));
        }
        if let Some(k) = fold_start {
            self.fold_start(id, k, meta, v);
        }
        if v.info.request {
            self.on_request(id, meta, v);
        } else if v.info.response {
            self.on_response(id, meta, v);
        }
    }

    /// Decode a record read with `rocescope-capture` and feed it, numbered after the frames
    /// fed so far ([`Totals::frames`] + 1). Returns the decoded packet (it borrows the
    /// record's bytes) for callers that also list or count frames. Feature `capture`.
    ///
    /// ```
    /// use rocescope_analyzer::report::Severity;
    /// use rocescope_analyzer::{Analyzer, Config};
    /// use rocescope_capture::CaptureReader;
    /// use rocescope_decoder::DecodeOptions;
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let mut reader = CaptureReader::open(path)?;
    /// let mut analyzer = Analyzer::new(Config::default());
    /// let opts = DecodeOptions::default();
    /// while let Some(rec) = reader.next_record()? {
    ///     analyzer.push_record(&rec, &opts);
    /// }
    /// let report = analyzer.report();
    /// assert_eq!(report.summary.packets, 182);
    /// assert_eq!(report.summary.roce, 143);
    /// assert_eq!(report.connections.len(), 21);
    /// let critical = report.findings.iter().filter(|f| f.severity == Severity::Critical).count();
    /// assert_eq!(critical, 3);
    /// # Ok::<(), rocescope_capture::CaptureError>(())
    /// ```
    #[cfg(feature = "capture")]
    pub fn push_record<'a>(
        &mut self,
        rec: &rocescope_capture::Record<'a>,
        opts: &rocescope_decoder::DecodeOptions,
    ) -> Packet<'a> {
        let packet = rocescope_decoder::decode(rec.link_type, rec.data, opts);
        let meta = FrameMeta::from_record(self.totals.frames + 1, rec);
        self.push(&meta, &packet);
        packet
    }

    /// The fabric-wide series ([`fabric`]) with the pauses still open counted to where the
    /// report closes them (each timeline's capture point's latest frame, or the pause's
    /// expiry).
    fn fabric_report(&self) -> fabric::FabricReport {
        let mut fab = self.fabric.clone();
        self.fold_into_fabric(&mut fab);
        let start = self.totals.start_ns.unwrap_or(0);
        let end = self.totals.end_ns.unwrap_or(0);
        let points = self.points();
        // Paused time adds up: the timelines' order does not matter.
        for (&(point, _, kind, prio), t) in &self.timelines {
            let point_end = points.get(usize::from(point)).and_then(|p| p.end_ns).unwrap_or(end);
            if let Some((s, e)) = t.open_span(point_end) {
                fab.add_pause(point, (kind == PauseKind::Pfc).then_some(prio), s - start, e - start);
            }
        }
        fab.report()
    }

    /// The flow (index into [`Analyzer::flows`] and `Report::flows`) of the last RoCE
    /// frame pushed, so a caller listing frames can tie each to its connection. Meaningful
    /// right after a [`Analyzer::push`] that counted a RoCE frame (`totals().roce` grew):
    /// malformed and other frames leave it at the previous flow.
    pub fn last_flow(&self) -> Option<usize> {
        self.last.map(|(_, id)| id)
    }

    /// Stop tracking flows idle since `before_ns` (their last packet, and their partner's,
    /// earlier), so a long-running live analysis keeps memory and report time bounded as
    /// QPs come and go. Returns their final figures (without throughput series). Their audit
    /// hits stay counted, under no flow. Flow indices change: reports built before are stale.
    pub fn evict_idle(&mut self, before_ns: i64) -> Vec<report::FlowReport> {
        let idle = |f: &Flow| f.last_ts < before_ns;
        let gone: Vec<bool> = self
            .flows
            .iter()
            .map(|f| idle(f) && f.partner().and_then(|p| self.flows.get(p)).is_none_or(idle))
            .collect();
        self.evict(&gone)
    }

    /// Keep at most `max_flows` flows, whoever sends (a long-running analysis fed by anyone
    /// who can reach its port: `--max-flows`): past the cap, the least recently seen flows
    /// are evicted, down to nine tenths of it, so the work of a cut is spread over a tenth
    /// of the cap's new flows (amortised O(1) a flow). A flow and its partner go together,
    /// by the later of their last packets. Returns the evicted flows' final figures (as
    /// [`Analyzer::evict_idle`]); [`Totals::flows_evicted`] counts them, and their packets
    /// and bytes.
    pub fn evict_over(&mut self, max_flows: usize) -> Vec<report::FlowReport> {
        let n = self.flows.len();
        if n <= max_flows {
            return Vec::new();
        }
        // A connection is as recent as its most recent direction.
        let seen: Vec<i64> = self
            .flows
            .iter()
            .map(|f| {
                f.last_ts.max(f.partner().and_then(|p| self.flows.get(p)).map_or(i64::MIN, |p| p.last_ts))
            })
            .collect();
        let keep = max_flows - max_flows / 10;
        let mut order = seen.clone();
        let cut = n - keep;
        let (_, &mut threshold, _) = order.select_nth_unstable(cut.saturating_sub(1).min(n - 1));
        // The oldest `cut` (ties at the threshold broken by position, oldest first).
        let mut at_threshold = cut - seen.iter().filter(|&&t| t < threshold).count();
        let gone: Vec<bool> = seen
            .iter()
            .map(|&t| {
                if t < threshold {
                    true
                } else if t == threshold && at_threshold > 0 {
                    at_threshold -= 1;
                    true
                } else {
                    false
                }
            })
            .collect();
        // Partners go together: a flow kept keeps its partner.
        let gone: Vec<bool> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                gone.get(i).copied().unwrap_or(false)
                    && f.partner().is_none_or(|p| gone.get(p).copied().unwrap_or(true))
            })
            .collect();
        self.evict(&gone)
    }

    /// Stop tracking the flows `gone` marks: their final figures, and the flows left
    /// renumbered (partners and audit hits follow).
    fn evict(&mut self, gone: &[bool]) -> Vec<report::FlowReport> {
        if !gone.iter().any(|g| *g) {
            return Vec::new();
        }
        // Flows go and the rest are renumbered: their shares fold first (crate::fold).
        self.fold_all();
        let evicted: Vec<report::FlowReport> = self
            .flows
            .iter()
            .enumerate()
            .filter(|(i, _)| gone.get(*i).copied().unwrap_or(false))
            .map(|(i, f)| report::flow_report(i, f, self, false))
            .collect();
        // Old index -> new index.
        let mut map = vec![None; self.flows.len()];
        let mut next = 0;
        for (i, g) in gone.iter().enumerate() {
            if !g {
                if let Some(m) = map.get_mut(i) {
                    *m = Some(next);
                }
                next += 1;
            }
        }
        let remap = |id: usize| map.get(id).copied().flatten();
        // CM pairing for connections gone: a returning QP number sets up anew.
        let gone_keys: rustc_hash::FxHashSet<FlowKey> =
            self.flows.iter().zip(gone).filter(|(_, g)| **g).map(|(f, _)| f.key).collect();
        self.cm_partner.retain(|k, _| !gone_keys.contains(k));
        self.cm_timeout.retain(|k, _| !gone_keys.contains(k));
        let old = std::mem::take(&mut self.flows);
        self.flows = old
            .into_iter()
            .zip(gone.iter())
            .filter(|(_, g)| !**g)
            .map(|(mut f, _)| {
                f.set_partner(f.partner().and_then(remap));
                f
            })
            .collect();
        self.last = None;
        self.prune_host_state();
        let t = &mut self.totals;
        t.flows_evicted += evicted.len() as u64;
        t.evicted_packets += evicted.iter().map(|f| f.packets).sum::<u64>();
        t.evicted_bytes += evicted.iter().map(|f| f.bytes).sum::<u64>();
        let audit = std::mem::take(&mut self.audit);
        for ((id, what, seen), (n, first)) in audit {
            let key = (id.and_then(remap), what, seen);
            let e = self.audit.entry(key).or_insert((0, first));
            e.0 += n;
            e.1 = e.1.min(first);
        }
        evicted
    }

    /// After an eviction, the state kept per host or per connection set-up that no flow left
    /// needs: otherwise a sender naming new addresses (random receivers, CM requests never
    /// answered) grows it past `--max-flows`. Kept: the fan-in of receivers that still have
    /// a flow and of the most notable others ([`incast::FanIn::retain`]), the last CNP
    /// between two hosts that still have a flow, and CM state up to one entry per flow kept
    /// (beyond that, set-ups whose QPs never sent, oldest tracking lost: their QPs, if they
    /// come, are paired as any other).
    fn prune_host_state(&mut self) {
        let live: addr_hash::AddrSet<(u16, IpAddr, IpAddr)> =
            self.flows.iter().map(|f| (f.key.point, f.key.src, f.key.dst)).collect();
        let receivers: addr_hash::AddrSet<(u16, IpAddr)> = live.iter().map(|&(p, _, d)| (p, d)).collect();
        self.fan_in.retain(|point, addr| receivers.contains(&(point, addr)));
        self.fold_forget_receivers();
        self.cnp_hosts.retain(|k, _| live.contains(k));
        let room = self.flows.len().max(incast::MAX_ORPHANS);
        if self.cm_pending.len() > room {
            self.cm_pending.clear();
        }
        let flows = &self.flows;
        let orphan = |k: &FlowKey| flows.find(k).is_none();
        if self.cm_timeout.keys().filter(|k| orphan(k)).count() > room {
            self.cm_timeout.retain(|k, _| !orphan(k));
        }
        if self.cm_partner.keys().filter(|k| orphan(k)).count() > room {
            self.cm_partner.retain(|k, _| !orphan(k));
        }
        self.cnp_hosts.shrink_to_fit();
        self.cm_timeout.shrink_to_fit();
        self.cm_partner.shrink_to_fit();
    }

    /// The input has ended: settle packets still waiting to be matched across capture
    /// points (call before the final [`Analyzer::report`] of merged captures). Frames pushed
    /// after it are analysed as the start of more input would be: a mirror's copy of a
    /// frame before it is not recognised as one.
    pub fn finish(&mut self) {
        // Frames held back for a switch clock's check are analysed now (mirror module).
        if self.mirror.checking() {
            self.end_clock_checks();
        }
        if let Some(m) = &mut self.matcher {
            m.finish();
        }
        // Gap fillers still waiting for the packet after them arrived late: no resend
        // followed.
        let cfg =
            PsnConfig { reorder_ns: self.cfg.reorder_ns, min_ack_timeout_ns: self.cfg.min_ack_timeout_ns };
        for f in self.flows.iter_mut() {
            if let Some(r) = f.psn.touched_mut().and_then(|p| p.flush(&cfg)) {
                Self::note_resolution(f, r);
            }
        }
        // The flows' open shares (crate::fold): the report reads no copies.
        self.fold_all();
        self.macs.drop_bindings();
        // The mirror-copy table and what its senders showed are for frames still to come:
        // the report reads neither (2 MB at 100,000 QPs, freed before the report's own
        // memory is taken, issue 39).
        self.dedup = dedup::Dedup::default();
    }

    /// Build the report for everything seen so far (cheap enough to call once a second):
    /// findings worst first, per-flow figures, connections, PFC timelines and the audit.
    /// See [`Analyzer::push`] for an example. Frames held back while an ERSPAN III switch
    /// clock is checked are not in it until the check ends (`summary.frames_held` counts
    /// them): call [`Analyzer::finish`] before the final report.
    pub fn report(&self) -> Report {
        report::build(self, true)
    }

    /// The report with its per-flow entries built one at a time as they are written or
    /// asked for ([`report::StreamedReport`]): the same JSON as [`Analyzer::report`], in the
    /// memory of one flow's entry instead of all of them.
    ///
    /// ```
    /// use rocescope_analyzer::{Analyzer, Config};
    ///
    /// let a = Analyzer::new(Config::default());
    /// let streamed = a.report_streamed();
    /// assert_eq!(serde_json::to_value(&streamed).unwrap(), serde_json::to_value(a.report()).unwrap());
    /// ```
    pub fn report_streamed(&self) -> report::StreamedReport<'_> {
        report::StreamedReport::new(self)
    }

    /// The report without the per-flow throughput series (`Throughput::bins`, `packets`,
    /// `ce`, `resent` left empty): what an exporter needs, in less memory with many flows.
    pub fn report_counters(&self) -> Report {
        report::build(self, false)
    }

    pub(crate) fn timelines(&self) -> &FxHashMap<TimelineKey, Timeline> {
        &self.timelines
    }

    /// RoCE per priority at a capture point.
    pub(crate) fn priorities(&self, point: u16) -> [PriorityUse; 8] {
        let at = usize::from(point) * 8;
        self.priorities.get(at..at + 8).and_then(|p| <[PriorityUse; 8]>::try_from(p).ok()).unwrap_or_default()
    }

    /// Per capture point counters (a single source's are its totals).
    pub fn points(&self) -> Vec<PointTotals> {
        match self.points.as_slice() {
            [_] => vec![self.totals.as_point()],
            more => more.to_vec(),
        }
    }

    pub(crate) fn matcher(&self) -> Option<&crosspoint::Matcher> {
        self.matcher.as_ref()
    }

    pub(crate) fn audit_hits(&self) -> &FxHashMap<AuditKey, (u64, u64)> {
        &self.audit
    }
}

/// Convenience: the opcode of a frame for callers that only want counts.
pub fn opcode_name(op: Opcode, opts: OpcodeOptions) -> &'static str {
    op.name(opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_decoder::{decode, DecodeOptions, LinkType};

    #[test]
    fn a_point_beyond_the_named_ones_keeps_point_zeros_counts() {
        let mut a = Analyzer::new(Config::default());
        let p = decode(LinkType::ETHERNET, &[0u8; 14], &DecodeOptions::default());
        for (n, point) in [(1, 0), (2, 0), (3, 0), (4, 1), (5, 0)] {
            a.push(&FrameMeta { number: n, ts_ns: n as i64 * 10, len: 60, link_bps: None, point }, &p);
        }
        let pts = a.points();
        assert_eq!(pts.len(), 2);
        assert_eq!((pts[0].packets, pts[0].start_ns, pts[0].end_ns), (4, Some(10), Some(50)));
        assert_eq!((pts[1].packets, pts[1].start_ns), (1, Some(40)));
        // A single source's point is its totals.
        let mut b = Analyzer::new(Config::default());
        b.push(&FrameMeta { number: 1, ts_ns: 7, len: 60, link_bps: None, point: 0 }, &p);
        assert_eq!(b.points()[0].packets, 1);
    }

    #[test]
    fn past_the_flow_cap_the_least_recently_seen_flows_go() {
        use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
        use rocescope_decoder::BthRepr;
        let mut a = Analyzer::new(Config::default());
        let send = |a: &mut Analyzer, n: u64, host: u8| {
            let ip = IpRepr::V4 {
                src: [10, 0, 0, host].into(),
                dst: [10, 0, 1, host].into(),
                dscp: 26,
                ecn: Ecn::Ect0,
                ttl: 64,
                id: 0,
            };
            let bth = BthRepr {
                opcode: Opcode::RC_SEND_ONLY,
                dest_qp: u32::from(host),
                psn: n as u32,
                ..Default::default()
            };
            let ib = IbRepr { bth, ext: ExtRepr::default(), payload: vec![0; 16], icrc: IcrcMode::Correct };
            let data = RoceV2Frame::new([2, 0, 0, 0, 0, host], [2, 0, 0, 1, 0, host], ip, ib)
                .build(OpcodeOptions::default());
            let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
            a.push(
                &FrameMeta {
                    number: n,
                    ts_ns: n as i64 * 1000,
                    len: data.len() as u32,
                    link_bps: None,
                    point: 0,
                },
                &p,
            );
        };
        // 100 flows, one packet each; then flow 0 again: it is the most recent.
        for h in 0..100u8 {
            send(&mut a, u64::from(h) + 1, h);
        }
        send(&mut a, 101, 0);
        assert!(a.evict_over(100).is_empty(), "at the cap: nothing goes");
        let gone = a.evict_over(50);
        // Down to nine tenths of the cap, the least recently seen first.
        assert_eq!((a.flows().len(), gone.len()), (45, 55));
        assert!(
            gone.iter().all(|f| f.dest_qp != 0 && f.dest_qp <= 55),
            "{:?}",
            gone.iter().map(|f| f.dest_qp).collect::<Vec<_>>()
        );
        assert!(a.flows().iter().any(|f| f.key.dest_qp == 0));
        // Each flow had its own receiver: the fan-in state of the 55 gone goes with them.
        assert_eq!(a.fan_in.len(), 45);
        let t = a.totals();
        assert_eq!((t.flows_evicted, t.evicted_packets), (55, 55));
        let r = a.report();
        assert_eq!((r.summary.flows_evicted, r.flows.len()), (55, 45));
    }

    /// An RC SEND Only from 10.0.0.1 to QP 0x12 of 10.0.0.2 (DSCP 26, ECT(0)) with PSN
    /// `psn` and `payload` bytes.
    fn send_only_frame(psn: u32, payload: usize) -> Vec<u8> {
        use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
        use rocescope_decoder::BthRepr;
        let ip = IpRepr::V4 {
            src: [10, 0, 0, 1].into(),
            dst: [10, 0, 0, 2].into(),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            id: 0,
        };
        let bth = BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x12, psn, ..Default::default() };
        let ib = IbRepr { bth, ext: ExtRepr::default(), payload: vec![0; payload], icrc: IcrcMode::Correct };
        RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(OpcodeOptions::default())
    }

    #[test]
    fn only_pauses_under_way_are_walked_per_frame() {
        use rocescope_decoder::build::pfc_frame;
        use rocescope_decoder::mac_control::Pfc;
        let mut a = Analyzer::new(Config::default());
        let push = |a: &mut Analyzer, n: u64, ts: i64, data: &[u8]| {
            let p = decode(LinkType::ETHERNET, data, &DecodeOptions::default());
            a.push(&FrameMeta { number: n, ts_ns: ts, len: data.len() as u32, link_bps: None, point: 0 }, &p);
        };
        let data = send_only_frame(0, 16);
        // 500 hosts pause priority 3 for 1,000 quanta (5.12 us at 100G), one after the other.
        let pfc = Pfc { enable_vector: 1 << 3, quanta: [0, 0, 0, 1000, 0, 0, 0, 0], bad_dst: false };
        let mut ts = 1_000_000_000;
        for h in 0..500u16 {
            let [hi, lo] = h.to_be_bytes();
            push(&mut a, u64::from(h) * 2 + 1, ts, &pfc_frame([2, 0, 0, 9, hi, lo], None, &[], &pfc));
            ts += 1_000;
            push(&mut a, u64::from(h) * 2 + 2, ts, &data);
            ts += 10_000;
            // The pause before has ended by now: at most the one just begun is watched.
            assert!(a.pause_watch.len() <= 1, "{} timelines watched", a.pause_watch.len());
        }
        assert_eq!(a.timelines.len(), 500);
        // Every RoCE frame sent during a pause still counts (the 500 pauses each saw one).
        let r = a.report();
        let during: u64 = r.pfc.iter().flat_map(|p| &p.intervals).map(|i| i.roce_during).sum();
        assert_eq!(during, 500);
    }

    #[test]
    fn a_flow_keeps_its_udp_source_port_and_counts_its_changes() {
        use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
        use rocescope_decoder::BthRepr;
        let mut a = Analyzer::new(Config::default());
        // Four SENDs of one QP; the NIC moves it to another path (port) and back.
        for (n, sport) in [(1u64, 49_200u16), (2, 49_200), (3, 51_000), (4, 49_200)] {
            let ip = IpRepr::V4 {
                src: [10, 0, 0, 1].into(),
                dst: [10, 0, 0, 2].into(),
                dscp: 26,
                ecn: Ecn::Ect0,
                ttl: 64,
                id: n as u16,
            };
            let bth =
                BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x12, psn: n as u32, ..Default::default() };
            let ib = IbRepr { bth, ext: ExtRepr::default(), payload: vec![0; 16], icrc: IcrcMode::Correct };
            let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib);
            f.sport = sport;
            let data = f.build(OpcodeOptions::default());
            let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
            a.push(
                &FrameMeta {
                    number: n,
                    ts_ns: n as i64 * 1000,
                    len: data.len() as u32,
                    link_bps: None,
                    point: 0,
                },
                &p,
            );
        }
        let r = a.report();
        let f = &r.flows[0];
        assert_eq!(
            (f.udp_src_port, f.udp_src_port_changes, f.udp_src_port_last),
            (Some(49_200), 2, Some(49_200))
        );
    }

    #[test]
    fn resends_make_no_burst_and_extend_none() {
        let mut a = Analyzer::new(Config::default());
        let mut n = 0u64;
        let mut send = |a: &mut Analyzer, psn: u32, ts_ns: i64| {
            n += 1;
            let data = send_only_frame(psn, 4096);
            let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
            a.push(&FrameMeta { number: n, ts_ns, len: data.len() as u32, link_bps: None, point: 0 }, &p);
        };
        // A burst of 8 x 4 KiB, then 8 passes of resends of all 8, 70 ms apart (each would
        // be a burst of its own), then nothing new: one burst, the first.
        for k in 0..8 {
            send(&mut a, 100 + k, i64::from(k) * 1_000);
        }
        for pass in 1..=8i64 {
            for k in 0..8 {
                send(&mut a, 100 + k, pass * 70_000_000 + i64::from(k) * 1_000);
            }
        }
        let f = a.flows().iter().next().expect("the flow");
        assert_eq!(f.psn.stats().retransmits, 64);
        let runs: Vec<_> = f.runs().collect();
        assert_eq!(runs.len(), 1, "the resends made no burst: {runs:?}");
        // Nor extended it: the 8 original frames of 4,154 bytes, ending with the 8th.
        assert_eq!((runs[0].end_ns, runs[0].bytes), (7_000, 8 * 4_154));
    }
}
