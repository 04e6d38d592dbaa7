//! Read a `rocescope report --json` document and say what it holds: the capture's worst
//! findings and its busiest connections.
//!
//! ```sh
//! rocescope report --json -r samples/demo.pcap > demo.json
//! cargo run -p rocescope-model --example read_report -- demo.json
//! ```

use rocescope_model::{Report, SCHEMA_VERSION};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: read_report REPORT.json")?;
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    if report.schema_version != SCHEMA_VERSION {
        return Err(
            format!("{path}: schema {}, this crate reads {SCHEMA_VERSION}", report.schema_version).into()
        );
    }
    let s = &report.summary;
    println!(
        "{path}: {} frames, {} RoCE, {} flows in {} connections; findings {} critical, {} warning, {} info",
        s.packets, s.roce, s.flows, s.connections, s.findings.critical, s.findings.warning, s.findings.info
    );
    for f in report.findings.iter().take(5) {
        println!("  {:?} {}: {}", f.severity, f.kind, f.title);
    }
    let mut busiest: Vec<_> = report.connections.iter().collect();
    busiest.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    for c in busiest.iter().take(3) {
        println!("  {} ↔ {} QP {:#08x}: {} bytes, {} ({})", c.a, c.b, c.b_qpn, c.bytes, c.health, c.pairing);
    }
    Ok(())
}
