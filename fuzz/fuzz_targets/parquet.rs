//! Fuzz the Parquet side of `rocescope compare`: a `report --parquet` run's flows and
//! packets tables read back as the facts of a report
//! (`rocescope_output::parquet_read::facts_from_bytes`), then serialised as a report
//! document's facts would be. A table that cannot be read must be an error; any panic that
//! escapes is a bug (panics of the Parquet library itself are caught there and turned into
//! an error naming the table, so what this target finds is rocescope's).
//!
//! Raw bytes rarely make a Parquet file, so the target starts from valid tables (those of
//! `samples/demo.pcap`, written once per process by rocescope-output's own writer) and the
//! input says how to damage them. The first byte picks the mode:
//!
//! - 0, 1: `offset u32 LE | bytes`: the bytes written over the flows (0) or packets (1)
//!   table from `offset` (modulo its length), growing it if they run past its end;
//! - 2: `(offset u32 LE | xor u8)*`: bytes flipped, the offset's lowest bit picking the
//!   table (flows even, packets odd) and the rest the place (modulo the length);
//! - 3: `flows u32 LE | packets u32 LE`: both tables cut to those lengths (modulo theirs
//!   plus one).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions};
use rocescope_output::parquet::ParquetOut;
use rocescope_output::parquet_read::facts_from_bytes;
use std::path::Path;
use std::sync::OnceLock;

/// The flows and packets tables of `samples/demo.pcap`.
fn tables() -> &'static (Vec<u8>, Vec<u8>) {
    static TABLES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let sample = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
        let dir = std::env::temp_dir().join(format!("rocescope-fuzz-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let mut reader = CaptureReader::open(sample).expect("samples/demo.pcap");
        let mut analyzer = Analyzer::new(Config::default());
        let name = "demo.pcap".to_string();
        let mut out =
            ParquetOut::create(&dir, std::slice::from_ref(&name), vec![name.clone()]).expect("tables");
        let opts = DecodeOptions::default();
        let mut number = 0;
        while let Ok(Some(rec)) = reader.next_record() {
            number = rec.number_after(number);
            let packet = decode(rec.link_type, rec.data, &opts);
            let meta = FrameMeta {
                number,
                ts_ns: rec.ts_ns,
                len: rec.len,
                link_bps: rec.link_bps,
                point: rec.point,
            };
            analyzer.push(&meta, &packet);
            out.push(number, &rec, &packet, &opts);
        }
        analyzer.finish();
        let written = out.finish(&analyzer.report_streamed()).expect("tables written");
        let read = |table: &str| {
            written
                .files
                .iter()
                .find(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(table)))
                .and_then(|(p, _)| std::fs::read(p).ok())
                .expect("a table")
        };
        let tables = (read("flows-"), read("packets-"));
        let _ = std::fs::remove_dir_all(&dir);
        tables
    })
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (flows, packets) = tables();
    let (mut flows, mut packets) = (flows.clone(), packets.clone());
    match mode % 4 {
        0 | 1 => {
            let Some(offset) = u32_at(rest, 0) else { return };
            let table = if mode % 4 == 0 { &mut flows } else { &mut packets };
            let at = offset as usize % table.len().max(1);
            let bytes = rest.get(4..).unwrap_or(&[]);
            if table.len() < at + bytes.len() {
                table.resize(at + bytes.len(), 0);
            }
            table[at..at + bytes.len()].copy_from_slice(bytes);
        }
        2 => {
            for c in rest.chunks_exact(5) {
                let offset = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                let table = if offset & 1 == 0 { &mut flows } else { &mut packets };
                let len = table.len();
                if len > 0 {
                    table[(offset >> 1) as usize % len] ^= c[4];
                }
            }
        }
        _ => {
            let (Some(f), Some(p)) = (u32_at(rest, 0), u32_at(rest, 4)) else { return };
            flows.truncate(f as usize % (flows.len() + 1));
            packets.truncate(p as usize % (packets.len() + 1));
        }
    }
    match facts_from_bytes(flows, packets, &Config::default()) {
        Ok(facts) => {
            let _ = serde_json::to_string(&facts);
            let _ = rocescope_analyzer::compare::Profile::from_facts(&facts);
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
