//! A per-QP report of a capture file: read it, decode every frame, feed the analyzer, then
//! print each flow's figures (one direction of a QP) and the findings, worst first. A
//! small `rocescope report`.
//!
//! ```text
//! cargo run -p rocescope-analyzer --features capture --example qp_report [-- FILE]
//! ```
//!
//! FILE (pcap or pcapng, optionally gzip-compressed) defaults to the workspace's
//! `samples/demo.pcap`. The `capture` feature gives the analyzer `push_record`, which takes
//! the records `rocescope-capture` reads (without libpcap).

use rocescope_analyzer::report::{Report, Severity};
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::{CaptureError, CaptureReader};
use rocescope_decoder::DecodeOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The capture read when no file is given.
pub const DEFAULT_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap");

/// Read, decode and analyse every frame of `path`.
pub fn analyse(path: &Path) -> Result<Report, CaptureError> {
    let mut reader = CaptureReader::open(path)?;
    let mut analyzer = Analyzer::new(Config::default());
    let opts = DecodeOptions::default();
    while let Some(rec) = reader.next_record()? {
        // Decodes the frame and numbers it (1, 2, ...) as findings will cite it.
        analyzer.push_record(&rec, &opts);
    }
    analyzer.finish();
    Ok(analyzer.report())
}

/// Print the flows and findings of `report`.
pub fn print(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let s = &report.summary;
    writeln!(
        out,
        "{} frames, {} RoCE, {} flows, {} findings",
        s.packets,
        s.roce,
        s.flows,
        report.findings.len()
    )?;
    writeln!(
        out,
        "{:<24} {:>8} {:>8} {:>9} {:>5} {:>5} {:>5} {:>4} {:>6} {:>5} {:>7}",
        "flow", "QP", "packets", "bytes", "gaps", "retx", "NAKs", "RNR", "CE%", "CNPs", "badICRC"
    )?;
    for f in &report.flows {
        let n = &f.naks;
        let naks = n.psn_seq_err
            + n.invalid_request
            + n.remote_access
            + n.remote_operational
            + n.invalid_rd
            + n.other;
        writeln!(
            out,
            "{:<24} {:>8} {:>8} {:>9} {:>5} {:>5} {:>5} {:>4} {:>6.2} {:>5} {:>7}",
            format!("{} → {}", f.src, f.dst),
            format!("0x{:06x}", f.dest_qp),
            f.packets,
            f.bytes,
            f.psn.gaps,
            f.psn.retransmits,
            naks,
            n.rnr,
            f.ecn.ce_fraction * 100.0,
            f.cnps,
            f.icrc_bad
        )?;
    }
    for finding in &report.findings {
        let severity = match finding.severity {
            Severity::Critical => "CRITICAL",
            Severity::Warning => "WARNING",
            Severity::Info => "INFO",
        };
        writeln!(out, "{severity:<8}  {}", finding.title)?;
        if let Some(e) = finding.evidence.first() {
            writeln!(out, "          frame {}: {}", e.frame, e.what)?;
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(|| PathBuf::from(DEFAULT_FILE), PathBuf::from);
    let report = analyse(&path)?;
    print(&report, &mut io::stdout().lock())?;
    Ok(())
}
