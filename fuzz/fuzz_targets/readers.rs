//! Fuzz the capture file readers: pcap, pcapng and gzip-compressed captures read from
//! memory, and two captures merged by time. The first byte picks the mode; every record is
//! read until the end or an error. Any panic (or a hang, or memory out of proportion to
//! the input) is a bug: the readers promise an error, never a crash, on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_capture::merge::Merged;
use rocescope_capture::CaptureReader;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

/// Read every record of `bytes` as a capture; the error, if any, is formatted too.
fn read_all(bytes: Vec<u8>) {
    let mut r = match CaptureReader::from_read(Cursor::new(bytes), Path::new("fuzz")) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let _ = (r.format(), r.interfaces().len(), r.sections());
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                let _ = (rec.ts_ns, rec.caplen, rec.len, rec.data.len(), rec.link_type, rec.interface);
            }
            Ok(None) => break,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        }
    }
    let _ = r.records_read();
}

/// Gzip `bytes` (the reader detects the gzip magic and decompresses).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = z.write_all(bytes);
    z.finish().unwrap_or_default()
}

/// Two files in a directory of this process's own: the merge opens paths.
fn merge(a: &[u8], b: &[u8]) {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("rocescope-fuzz-readers-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    });
    let paths = [dir.join("a.pcap"), dir.join("b.pcap")];
    if std::fs::write(&paths[0], a).is_err() || std::fs::write(&paths[1], b).is_err() {
        return;
    }
    let mut m = match Merged::open(&paths) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let _ = (m.point_names(), m.interfaces().len());
    while let Some(rec) = m.next_record() {
        let _ = (rec.ts_ns, rec.point, rec.interface, rec.data.len());
    }
    let _ = m.out_of_order();
    for e in m.take_errors() {
        let _ = e.to_string();
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 4 {
        // The bytes as they are (a gzip magic among them is decompressed).
        0 | 1 => read_all(rest.to_vec()),
        // The bytes compressed: pcap/pcapng parsing behind the decompressor's short reads.
        2 => read_all(gzip(rest)),
        // Two captures merged: the split point from the next two bytes.
        _ => {
            let Some((split, rest)) = rest.split_first_chunk::<2>() else { return };
            let at = usize::from(u16::from_le_bytes(*split)) % (rest.len() + 1);
            let (a, b) = rest.split_at(at);
            merge(a, b);
        }
    }
});
