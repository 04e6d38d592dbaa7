//! The floors under `rocescope report` (bench/report.sh): how long rocescope's own reader
//! takes to hand over every record of a capture file (`read`), and to decode every one of
//! them as the report does, ICRC checked where the record holds it (`decode`). Whatever the
//! analysis costs comes on top of the second.
//!
//! `cargo run --release -p rocescope-capture --example read_floor -- read|decode FILE`

use rocescope_capture::CaptureReader;
use rocescope_decoder::{DecodeOptions, Packet};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (decoding, path) = match args.as_slice() {
        [mode, path] if mode == "read" => (false, path),
        [mode, path] if mode == "decode" => (true, path),
        _ => {
            eprintln!("usage: read_floor read|decode FILE");
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
    let (mut frames, mut bytes, mut roce) = (0u64, 0u64, 0u64);
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
        frames += 1;
        bytes += u64::from(rec.caplen);
        if decoding {
            // As the report's driver does: decoded in place, no copy of the packet.
            let mut p = Packet::empty(rec.data, rec.link_type);
            p.decode_from(&opts);
            roce += u64::from(p.roce.is_some());
        }
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "{frames} frames ({roce} RoCE decoded), {bytes} bytes in {s:.3} s: {:.2} M frames/s",
        frames as f64 / s / 1e6
    );
}
