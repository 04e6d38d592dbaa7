//! rocescope's outputs as a library: what `rocescope report --json`, `rocescope export` and
//! `rocescope report --parquet` write, for a tool that embeds the analyzer and publishes its
//! figures the same way.
//!
//! - [`json`]: the report (and any serialisable value) as JSON that common tools read
//!   exactly: every absolute time in ns gets a decimal-seconds twin (`"ts_ns":...,"ts":"..."`),
//!   and characters a terminal would obey are escaped. The schema is
//!   `docs/report.schema.json`. [`json::report_to_writer`] streams a report as
//!   `report --json` does (its own serializer, the flows' entries written by hand).
//! - [`metrics`]: the report as Prometheus metric families (`docs/metrics.md`), encoded as
//!   the Prometheus text format or OpenMetrics through `prometheus-client`, or as NDJSON lines.
//! - [`parquet`]: packets, flows and per-flow time bins as Apache Parquet tables
//!   (`docs/parquet.md`).
//! - [`html`]: the report as one self-contained HTML page with inline SVG charts
//!   (`docs/html-report.md`).
//! - [`tmpfile`]: files written under an exclusive temporary name and renamed into place.
//!
//! ```
//! use rocescope_analyzer::{Analyzer, Config};
//!
//! let analyzer = Analyzer::new(Config::default());
//! // ... analyzer.push(&meta, &packet) for each frame ...
//! // The report's JSON, as `report --json` writes it (flows built one at a time).
//! let mut json = Vec::new();
//! rocescope_output::json::report_to_writer(&mut json, &analyzer.report_streamed()).unwrap();
//! assert!(json.starts_with(b"{"));
//!
//! // Its metrics, as `export` serves them: the 100 busiest flows get series of their own.
//! let mut exposition = rocescope_output::metrics::Exposition::new(100);
//! exposition.update(&analyzer.report(), true);
//! let families = std::sync::Arc::new(exposition.families().to_vec());
//! let body = rocescope_output::metrics::exposition_text(families, false).unwrap();
//! assert!(body.contains("# TYPE rocescope_flow_packets_total counter"), "{body}");
//! ```
//!
//! `examples/` has one program per output: `json_report.rs`, `prometheus.rs`,
//! `parquet_tables.rs`.

#![forbid(unsafe_code)]

pub mod headline;
pub mod html;
pub mod json;
pub mod metrics;
pub mod parquet;
pub mod parquet_read;
pub mod tmpfile;
pub mod trace;
