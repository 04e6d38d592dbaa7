//! Where a report's time goes, stage by stage (issue 28; `bench/report.sh` runs it beside
//! the libpcap loop): the same records read and fed as `report --threads 1` feeds them, with
//! the analysis stopped after a stage.
//!
//! ```sh
//! cargo run --release -p rocescope-analyzer --features capture --example stages -- MODE FILE
//! ```
//!
//! - `classify`: read every record and classify it at fixed offsets (the full decode for
//!   the frames the classifier leaves).
//! - `capture-wide`: and feed an analyzer that keeps the capture-wide figures only (the
//!   first shard of a 64-way parallel analysis keeps no host pair): duplicates, totals,
//!   priorities, the MAC table, pauses, fabric series, fan-in.
//! - `all`: and keep the flows too (what `report --threads 1` does before its report).

use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, fast, DecodeOptions};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, path) = match args.as_slice() {
        [mode, path] if ["classify", "capture-wide", "all"].contains(&mode.as_str()) => (mode.as_str(), path),
        _ => {
            eprintln!("usage: stages classify|capture-wide|all FILE");
            std::process::exit(2);
        }
    };
    let mut reader = match CaptureReader::open(Path::new(path)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let opts = DecodeOptions::default();
    let mut analyzer = (mode != "classify").then(|| {
        let mut a = Analyzer::new(Config::default());
        if mode == "capture-wide" {
            // Shard 0 of 64 keeps the capture-wide figures and no host pair's flows.
            a.set_shard(0, 64);
        }
        a
    });
    let (mut number, mut common) = (0u64, 0u64);
    let start = std::time::Instant::now();
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        number = rec.number_after(number);
        match (fast::classify(rec.link_type, rec.data, &opts), &mut analyzer) {
            (Some(c), Some(a)) => {
                common += 1;
                a.push_common_record(number, &rec, &c);
            }
            (Some(c), None) => {
                common += 1;
                std::hint::black_box(c);
            }
            (None, a) => {
                let p = decode(rec.link_type, rec.data, &opts);
                match a {
                    Some(a) => a.push_frame(number, &rec, &p, &opts),
                    None => {
                        std::hint::black_box(&p);
                    }
                }
            }
        }
    }
    let s = start.elapsed().as_secs_f64();
    let flows = analyzer.as_ref().map_or(0, |a| a.flows().len());
    println!("{mode}: {number} frames ({common} common), {flows} flows in {s:.3} s");
}
