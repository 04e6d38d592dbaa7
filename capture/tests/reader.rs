//! The reader on classic pcap variants it must accept, and the writer round trip.

use rocescope_capture::{CaptureError, CaptureReader, Format, PcapWriter};
use rocescope_decoder::LinkType;
use std::io::Cursor;
use std::path::Path;

/// (timestamp, caplen, len, bytes) of each record.
type Recs = Vec<(i64, u32, u32, Vec<u8>)>;

fn read_all(bytes: Vec<u8>) -> (Format, Recs, Option<CaptureError>) {
    let mut r = CaptureReader::from_read(Cursor::new(bytes), Path::new("test")).expect("open");
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push((rec.ts_ns, rec.caplen, rec.len, rec.data.to_vec())),
            Ok(None) => return (r.format(), out, None),
            Err(e) => return (r.format(), out, Some(e)),
        }
    }
}

#[test]
fn writer_round_trip_with_nanoseconds_and_snap() {
    let mut buf = Vec::new();
    let mut w = PcapWriter::new(&mut buf, LinkType::ETHERNET, 64).unwrap();
    w.write(1_700_000_000_123_456_789, &[1u8; 100], 100).unwrap();
    w.write(1_700_000_001_000_000_001, &[2u8; 10], 1500).unwrap();
    w.finish().unwrap();
    let (format, recs, err) = read_all(buf);
    assert!(err.is_none());
    assert_eq!(format, Format::PcapNanos);
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].0, recs[0].1, recs[0].2), (1_700_000_000_123_456_789, 64, 100));
    assert_eq!(recs[0].3, vec![1u8; 64]);
    assert_eq!((recs[1].0, recs[1].1, recs[1].2), (1_700_000_001_000_000_001, 10, 1500));
}

#[test]
fn big_endian_microsecond_pcap() {
    let mut f = Vec::new();
    f.extend_from_slice(&0xA1B2_C3D4u32.to_be_bytes());
    f.extend_from_slice(&2u16.to_be_bytes());
    f.extend_from_slice(&4u16.to_be_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_be_bytes());
    f.extend_from_slice(&1u32.to_be_bytes());
    for (sec, usec) in [(10u32, 5u32), (11, 999_999)] {
        f.extend_from_slice(&sec.to_be_bytes());
        f.extend_from_slice(&usec.to_be_bytes());
        f.extend_from_slice(&4u32.to_be_bytes());
        f.extend_from_slice(&60u32.to_be_bytes());
        f.extend_from_slice(&[9, 8, 7, 6]);
    }
    let (format, recs, err) = read_all(f);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(format, Format::Pcap);
    assert_eq!(recs[0].0, 10_000_005_000);
    assert_eq!(recs[1].0, 11_999_999_000);
    assert_eq!((recs[1].1, recs[1].2), (4, 60));
}

#[test]
fn header_only_file_has_no_records_and_a_cut_header_is_an_error() {
    let mut buf = Vec::new();
    PcapWriter::new(&mut buf, LinkType::ETHERNET, 65535).unwrap().finish().unwrap();
    let (_, recs, err) = read_all(buf.clone());
    assert!(recs.is_empty() && err.is_none());
    let e = CaptureReader::from_read(Cursor::new(buf[..10].to_vec()), Path::new("cut.pcap")).unwrap_err();
    assert!(e.to_string().contains("cut off"), "{e}");
}

#[test]
fn sink_rotates_by_size_and_time_and_keeps_the_newest() {
    use rocescope_capture::{CaptureSink, FileFormat, Record, SinkOptions};
    let dir = tempfile::tempdir().unwrap();
    let ifc = rocescope_capture::Interface::live("veth0", LinkType::ETHERNET, 262_144, Some(100_000_000_000));
    let data = vec![0x5au8; 1000];
    let rec = |ts: i64| Record {
        ts_ns: ts,
        caplen: 1000,
        len: 1000,
        link_type: LinkType::ETHERNET,
        interface: 0,
        link_bps: None,
        point: 0,
        data: &data,
        empty_before: 0,
    };

    // By size: 5 kB files, keep 2.
    let mut opts = SinkOptions::new(&dir.path().join("size.pcapng"), FileFormat::PcapNg);
    opts.rotate_bytes = Some(5_000);
    opts.keep_files = Some(2);
    let mut sink = CaptureSink::create(opts, std::slice::from_ref(&ifc)).unwrap();
    for i in 0..30 {
        sink.write(&rec(i)).unwrap();
    }
    let (summary, res) = sink.finish(None);
    res.unwrap();
    assert_eq!(summary.written, 30);
    assert_eq!(summary.files.len(), 2);
    let mut left = 0;
    for f in &summary.files {
        let (format, recs, err) = read_all(std::fs::read(f).unwrap());
        assert!(err.is_none() && format == Format::PcapNg);
        left += recs.len();
    }
    assert!((4..30).contains(&left), "{left}");

    // By time: a new file after 200 ms.
    let mut opts = SinkOptions::new(&dir.path().join("time.pcap"), FileFormat::Pcap);
    opts.rotate_every = Some(std::time::Duration::from_millis(200));
    let mut sink = CaptureSink::create(opts, std::slice::from_ref(&ifc)).unwrap();
    sink.write(&rec(1)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(250));
    sink.write(&rec(2)).unwrap();
    let (summary, res) = sink.finish(None);
    res.unwrap();
    assert_eq!(summary.files.len(), 2);
    for f in &summary.files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with("time_0000") && name.ends_with(".pcap"), "{name}");
        assert_eq!(read_all(std::fs::read(f).unwrap()).1.len(), 1);
    }

    // Rotation to standard output is refused.
    let mut opts = SinkOptions::new(std::path::Path::new("-"), FileFormat::PcapNg);
    opts.rotate_bytes = Some(1);
    assert!(CaptureSink::create(opts, &[]).is_err());
}

/// What a progress display measures by (`bytes_read`): the bytes of the input as given, read
/// as the reader takes them in; at the end the input's size, a gzip capture's compressed
/// size, and for merged files their sizes summed.
#[test]
fn bytes_read_count_the_input_as_given() {
    use rocescope_capture::merge::Merged;
    use rocescope_capture::{Batch, Source};
    use std::io::Write;
    let demo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    let raw = std::fs::read(demo).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).unwrap();
    let gz = gz.finish().unwrap();
    assert!(gz.len() < raw.len());
    for input in [&raw, &gz] {
        let mut r = CaptureReader::from_read(Cursor::new(input.clone()), Path::new("mem")).unwrap();
        // The header and a first buffer read before any record is handed out.
        assert!(r.bytes_read() > 0);
        let mut frames = 0;
        while r.next_record().unwrap().is_some() {
            frames += 1;
        }
        assert_eq!(frames, 182);
        assert_eq!(r.bytes_read(), input.len() as u64);
    }
    let both = [demo.to_path_buf(), demo.to_path_buf()];
    let mut merged = Source::Merged(Merged::open(&both).unwrap());
    while merged.for_each_batch(64, |_| true).unwrap() != Batch::End {}
    assert_eq!(merged.bytes_read(), 2 * raw.len() as u64);
}

/// A classic pcap of `n` records (every 7th with no captured byte, sizes up to 1,500 bytes,
/// so that records straddle the reader's 256 KiB buffer), in either byte order and time unit,
/// the last record cut off when `cut`.
fn classic(big_endian: bool, nanos: bool, n: u32, cut: bool) -> Vec<u8> {
    let word = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let magic = if nanos { 0xA1B2_3C4Du32 } else { 0xA1B2_C3D4 };
    let mut f = Vec::new();
    f.extend_from_slice(&word(magic));
    f.extend_from_slice(&(if big_endian { 2u16.to_be_bytes() } else { 2u16.to_le_bytes() }));
    f.extend_from_slice(&(if big_endian { 4u16.to_be_bytes() } else { 4u16.to_le_bytes() }));
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&word(65535));
    f.extend_from_slice(&word(1));
    for i in 0..n {
        let caplen = if i % 7 == 3 { 0 } else { 60 + (i * 37) % 1441 };
        f.extend_from_slice(&word(1_700_000_000 + i / 3));
        f.extend_from_slice(&word((i * 1_234) % 999_999));
        f.extend_from_slice(&word(caplen));
        f.extend_from_slice(&word(caplen + 4));
        f.extend((0..caplen).map(|k| (k + i) as u8));
    }
    if cut {
        f.truncate(f.len() - 10);
    }
    f
}

/// (timestamp, caplen, len, bytes, empty records before) of each record.
type Walked = Vec<(i64, u32, u32, Vec<u8>, u64)>;

#[test]
fn the_record_walk_hands_out_what_next_record_does() {
    for (big_endian, nanos, cut) in
        [(false, false, false), (true, true, true), (false, true, true), (true, false, false)]
    {
        let bytes = classic(big_endian, nanos, 2_000, cut);
        let open = || CaptureReader::from_read(Cursor::new(bytes.clone()), Path::new("test")).expect("open");
        let mut one_by_one: Walked = Vec::new();
        let mut r = open();
        let first_err = loop {
            match r.next_record() {
                Ok(Some(rec)) => {
                    one_by_one.push((rec.ts_ns, rec.caplen, rec.len, rec.data.to_vec(), rec.empty_before))
                }
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        let mut walked: Walked = Vec::new();
        let mut r = open();
        let walk_err = loop {
            let batch = r.walk(100, |rec| {
                walked.push((rec.ts_ns, rec.caplen, rec.len, rec.data.to_vec(), rec.empty_before));
                true
            });
            match batch {
                Ok(rocescope_capture::Batch::End) => break None,
                Ok(_) => {}
                Err(e) => break Some(e.to_string()),
            }
        };
        assert_eq!(walked.len(), one_by_one.len(), "be {big_endian} nanos {nanos}");
        assert!(walked == one_by_one, "be {big_endian} nanos {nanos}");
        assert_eq!(walk_err, first_err);
        assert_eq!(first_err.is_some(), cut);
        // Every 7th record held no byte: passed over, and counted in the next one's number
        // (the last one's next record is the one cut off, when it is).
        assert_eq!(one_by_one.iter().map(|r| r.4).sum::<u64>(), 2_000 / 7 + 1 - u64::from(cut));
        assert_eq!(r.empty_records(), 2_000 / 7 + 1);
    }
}
