//! A capture's figures as Prometheus metrics, as `rocescope export` serves them on
//! `/metrics`: the Prometheus text format (or OpenMetrics with `--openmetrics`) on standard
//! output, the 20 busiest flows with series of their own (docs/metrics.md).
//!
//! ```text
//! cargo run -p rocescope-output --example prometheus [-- FILE] [--openmetrics]
//! ```
//!
//! A tool with a registry of its own registers
//! `rocescope_output::metrics::FamiliesCollector` in it instead.

use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::CaptureReader;
use rocescope_decoder::DecodeOptions;
use rocescope_output::metrics::{exposition_text, Exposition};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let openmetrics = args.iter().any(|a| a == "--openmetrics");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap").into());
    let mut reader = CaptureReader::open(path.as_ref())?;
    let mut analyzer = Analyzer::new(Config::default());
    let opts = DecodeOptions::default();
    while let Some(rec) = reader.next_record()? {
        analyzer.push_record(&rec, &opts);
    }
    analyzer.finish();
    let mut exposition = Exposition::new(20);
    exposition.update_streamed(&analyzer.report_streamed(), true);
    let body = exposition_text(Arc::new(exposition.families().to_vec()), openmetrics)?;
    std::io::Write::write_all(&mut std::io::stdout(), body.as_bytes())?;
    Ok(())
}
