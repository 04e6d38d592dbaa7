//! Read a pcap or pcapng file (optionally gzip-compressed; `-` for standard input), decode
//! every record and print its frame number, opcode, destination QP and PSN, like the first
//! columns of `rocescope decode`. Frames that are not RoCE say what they are instead.
//!
//! ```text
//! cargo run -p rocescope-capture --example list_frames [-- FILE]
//! ```
//!
//! FILE defaults to the workspace's `samples/demo.pcap`. File reading needs no libpcap:
//! this example also builds with `--no-default-features`.

use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions, MacControl, Packet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The capture read when no file is given.
pub const DEFAULT_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap");

/// One line for frame `number`.
pub fn line(number: u64, p: &Packet<'_>, opts: &DecodeOptions) -> String {
    if let Some(roce) = p.roce_ok() {
        let bth = &roce.bth;
        return format!(
            "{number:>6}  {:<34} QP=0x{:06x}  PSN={}",
            bth.opcode().name(opts.opcode),
            bth.dest_qp(),
            bth.psn()
        );
    }
    let what = match (&p.mac_control, &p.error) {
        (_, Some(e)) if p.is_malformed_roce() => format!("malformed RoCE: {e}"),
        (Some(MacControl::Pfc(pfc)), _) => format!("PFC, priorities enabled 0x{:02x}", pfc.enable()),
        (Some(MacControl::Pause(pause)), _) => format!("802.3x PAUSE, {} quanta", pause.quanta),
        (Some(MacControl::Other { opcode, .. }), _) => format!("MAC Control opcode 0x{opcode:04x}"),
        _ => String::from("not RoCE"),
    };
    format!("{number:>6}  {what}")
}

/// Print a line per record of `path` to `out`; returns the number of records.
pub fn list(path: &Path, out: &mut impl Write) -> Result<u64, Box<dyn std::error::Error>> {
    let opts = DecodeOptions::default();
    let mut reader = CaptureReader::open(path)?;
    let mut number = 0;
    // `next_record` lends the record until the next call: no copy, no allocation per frame.
    while let Some(rec) = reader.next_record()? {
        number += 1;
        let packet = decode(rec.link_type, rec.data, &opts);
        writeln!(out, "{}", line(number, &packet, &opts))?;
    }
    Ok(number)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(|| PathBuf::from(DEFAULT_FILE), PathBuf::from);
    // A damaged file lists the frames before the damage, then the error says where it is.
    let n = list(&path, &mut io::stdout().lock())?;
    eprintln!("{n} frames");
    Ok(())
}
