//! A capture as Parquet tables, as `rocescope report --parquet DIR` writes them: packets
//! (written while the capture is read), flows and per-flow time bins (docs/parquet.md).
//!
//! ```text
//! cargo run -p rocescope-output --example parquet_tables -- DIR [FILE]
//! ```
//!
//! Then, for instance: `duckdb -c "select src, dst, dest_qp, packets from 'DIR/flows-*.parquet'"`.

use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, DecodeOptions};
use rocescope_output::parquet::ParquetOut;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: parquet_tables DIR [FILE]")?);
    let path: PathBuf = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap").into())
        .into();
    let name = path.display().to_string();
    let mut reader = CaptureReader::open(&path)?;
    let mut analyzer = Analyzer::new(Config::default());
    let mut tables = ParquetOut::create(&dir, std::slice::from_ref(&name), vec![name.clone()])?;
    let opts = DecodeOptions::default();
    let mut number = 0;
    while let Some(rec) = reader.next_record()? {
        number = rec.number_after(number);
        let packet = decode(rec.link_type, rec.data, &opts);
        analyzer.push(&FrameMeta::from_record(number, &rec), &packet);
        tables.push(number, &rec, &packet, &opts);
    }
    analyzer.finish();
    let written = tables.finish(&analyzer.report_streamed())?;
    for (file, rows) in &written.files {
        println!("{} ({rows} rows)", file.display());
    }
    Ok(())
}
