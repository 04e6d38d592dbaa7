//! # rocescope-model
//!
//! The data model of rocescope's report: every type the JSON of `rocescope report --json` is
//! made of, from [`Report`] down, with [`SCHEMA_VERSION`] and the JSON schema itself
//! ([`REPORT_SCHEMA`]). Each type serialises to its part of the document and reads back from
//! it (serde's `Serialize` and `Deserialize`): a program that reads rocescope's reports
//! depends on this crate and a JSON reader, not on the analysis that makes them
//! (`rocescope-analyzer`, which builds a [`Report`] from packets and re-exports these types
//! where they were defined).
//!
//! ```
//! use rocescope_model::{FindingKind, Report, Severity};
//!
//! // What `rocescope report --json -r samples/ecn-cnp.pcap` wrote.
//! let text = include_str!("../tests/data/ecn-cnp.report.json");
//! let report: Report = serde_json::from_str(text)?;
//! assert_eq!(report.schema_version, rocescope_model::SCHEMA_VERSION);
//! // Findings come worst first; this capture has one, about congestion control at work.
//! let f = &report.findings[0];
//! assert_eq!((f.severity, f.kind), (Severity::Info, FindingKind::Congestion));
//! for flow in &report.flows {
//!     println!("{} → {} QP {:#08x}: {} packets, {} CE-marked, {}", flow.src, flow.dst,
//!         flow.dest_qp, flow.packets, flow.ecn.ce, flow.health);
//! }
//! // A connection pairs the two directions of a QP by their indices in `flows`.
//! let c = &report.connections[0];
//! assert_eq!(c.flows.len(), 2);
//! assert_eq!(report.flows[c.flows[0]].dst, c.b.to_string());
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! The JSON `report --json` writes adds a twin to every absolute time, a decimal-seconds
//! string after each `*_ns` key (`"ts_ns":1767225600069102700,"ts":"1767225600.069102700"`);
//! reading passes them over, as any key a later version adds. A finding kind, a pairing or
//! health word this version does not know is an error: read a later document with the crate
//! of its version. Fields the JSON does not carry (the analyzer's indices and flags marked
//! "not in the JSON") read back as their defaults.
//!
//! This crate is the bottom of the workspace: it depends on serde only, and computes
//! nothing from packets. docs/report-json.md in the repository says what every field means.
#![forbid(unsafe_code)]

pub mod audit;
pub mod connections;
pub mod counters;
pub mod ecmp;
pub mod fabric;
pub mod findings;
pub mod flows;
pub mod incast;
pub mod latency_samples;
pub mod marks;
pub mod nccl;
pub mod overlay;
pub mod pauses;
pub mod points;
pub mod report;
pub mod rhythm;
pub mod summary;

pub use audit::{AuditConfig, AuditReport, Violation};
pub use connections::{ConnFlows, Connection, Word};
pub use counters::CountersReport;
pub use ecmp::{EcmpReport, ElephantsReport};
pub use fabric::FabricReport;
pub use findings::{EvidenceRef, Finding, FindingKind, Severity, SeverityCounts};
pub use flows::{
    Burst, CcReaction, CcReport, CeRunReport, EcnCounts, FlowReport, Latencies, LatencySummary, NakCounts,
    OpcodeCount, PsnReport, StallReport, Throughput,
};
pub use incast::IncastReport;
pub use latency_samples::SampleSet;
pub use marks::MarksReport;
pub use nccl::NcclCheck;
pub use overlay::VtepPairReport;
pub use pauses::{Interval, PauseDirection, PauseKind, PauseReport, Storm};
pub use points::{PointLoss, PointReport};
pub use report::Report;
pub use rhythm::RhythmReport;
pub use summary::{CaptureCounters, Interruption, Summary, Window};

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The version of the report's JSON schema ([`REPORT_SCHEMA`]). It changes only when a field
/// is removed or renamed or changes its type or meaning; fields are added without a change,
/// so consumers must ignore fields they do not know (docs/report-json.md).
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON schema of the report (`docs/report.schema.json`, draft 2020-12): what a
/// document of [`SCHEMA_VERSION`] holds, with the ranges of its values.
pub const REPORT_SCHEMA: &str = include_str!("../../docs/report.schema.json");
