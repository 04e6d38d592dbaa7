//! # rocescope-model
//!
//! The data model of rocescope's report: every type the JSON of `rocescope report --json` is
//! made of, from [`Report`] down, with [`SCHEMA_VERSION`] and the JSON schema itself
//! ([`REPORT_SCHEMA`]). Each type serialises to its part of the document and reads back from
//! it (serde's `Serialize` and `Deserialize`): a program that reads rocescope's reports
//! depends on this crate alone, not on the analysis that makes them (`rocescope-analyzer`,
//! which builds a [`Report`] from packets and re-exports these types where they were).
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
pub mod latency_samples;
pub mod marks;
pub mod pauses;
pub mod points;
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
pub use latency_samples::SampleSet;
pub use marks::MarksReport;
pub use pauses::{Interval, PauseDirection, PauseKind, PauseReport, Storm};
pub use points::{PointLoss, PointReport};
pub use rhythm::RhythmReport;
pub use summary::{Summary, Window};

/// The version of the report's JSON schema ([`REPORT_SCHEMA`]). It changes only when a field
/// is removed or renamed or changes its type or meaning; fields are added without a change,
/// so consumers must ignore fields they do not know (docs/report-json.md).
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON schema of the report (`docs/report.schema.json`, draft 2020-12): what a
/// document of [`SCHEMA_VERSION`] holds, with the ranges of its values.
pub const REPORT_SCHEMA: &str = include_str!("../../docs/report.schema.json");
