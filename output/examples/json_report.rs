//! The report of a capture as `rocescope report --json` writes it: read, analyse, and write
//! the JSON document (exact times, terminal-safe strings; docs/report-json.md) to standard
//! output, its flows built one at a time.
//!
//! ```text
//! cargo run -p rocescope-output --example json_report [-- FILE]
//! ```

use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::CaptureReader;
use rocescope_decoder::DecodeOptions;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap").into());
    let mut reader = CaptureReader::open(path.as_ref())?;
    let mut analyzer = Analyzer::new(Config::default());
    let opts = DecodeOptions::default();
    while let Some(rec) = reader.next_record()? {
        analyzer.push_record(&rec, &opts);
    }
    analyzer.finish();
    let mut out = std::io::stdout().lock();
    rocescope_output::json::report_to_writer(&mut out, &analyzer.report_streamed())?;
    writeln!(out)?;
    Ok(())
}
