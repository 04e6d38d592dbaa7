//! The readers on damaged and unusual inputs (issue 15, "reliability under abuse"): a cut or
//! corrupt gzip stream yields every record decompressed before the damage, then an error that
//! says so; binary timestamp resolutions; damaged pcapng blocks told in plain words; merged
//! files damaged from their start named while the others are read whole; a full disk named.
//! Every damaged file is built here from `samples/demo.pcap`.

use rocescope_capture::{CaptureError, CaptureReader, CaptureSink, FileFormat, Merged, SinkOptions};
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/demo.pcap")
}

/// `samples/demo.pcap` (182 records) as pcapng bytes, written by the crate's own sink.
fn demo_pcapng() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.pcapng");
    let mut r = CaptureReader::open(&demo()).unwrap();
    let mut sink = CaptureSink::create(SinkOptions::new(&out, FileFormat::PcapNg), r.interfaces()).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        sink.write(&rec).unwrap();
    }
    sink.finish(None).1.unwrap();
    std::fs::read(out).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// What `zcat` gets out of a (possibly cut) gzip stream: the bytes before the error.
fn zcat(gz: &[u8]) -> Vec<u8> {
    let mut d = flate2::read::MultiGzDecoder::new(gz);
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = d.read(&mut chunk) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(chunk.get(..n).unwrap());
    }
    out
}

/// Records read (their timestamps), and the error that ended reading.
fn read(bytes: Vec<u8>, name: &str) -> (Vec<i64>, Option<CaptureError>) {
    let mut r = match CaptureReader::from_read(Cursor::new(bytes), Path::new(name)) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut ts = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => ts.push(rec.ts_ns),
            Ok(None) => return (ts, None),
            Err(e) => {
                assert_eq!(r.records_read(), ts.len() as u64);
                assert!(matches!(r.next_record(), Ok(None)), "after an error, the end");
                return (ts, Some(e));
            }
        }
    }
}

#[test]
fn a_cut_gzip_stream_yields_what_zcat_gets_then_says_it_is_cut_off() {
    let pcap = std::fs::read(demo()).unwrap();
    let pcapng = demo_pcapng();
    let (whole, _) = read(pcap.clone(), "demo.pcap");
    assert_eq!(whole.len(), 182);
    for (format, plain) in [("pcap", &pcap), ("pcapng", &pcapng)] {
        let gz = gzip(plain);
        // Both files are well under the reader's 256 KiB buffer: the whole stream is read at once.
        assert!(plain.len() < 1 << 18);
        for cut in [30, 500, gz.len() / 3, gz.len() / 2, gz.len() - 100, gz.len() - 9] {
            let name = format!("demo.{format}.gz");
            let (ts, err) = read(gz.get(..cut).unwrap().to_vec(), &name);
            // Exactly the records a reader of `zcat`'s output gets, with their times.
            let (ts_zcat, err_zcat) = read(zcat(gz.get(..cut).unwrap()), "-");
            assert_eq!(ts, ts_zcat, "{format} cut at {cut}");
            assert_eq!(ts, whole.get(..ts.len()).unwrap(), "{format} cut at {cut}");
            assert!(ts.len() < 182 || cut == gz.len() - 9, "{format} cut at {cut}: {} records", ts.len());
            let Some(CaptureError::GzipCutOff { source_name, offset, records }) = &err else {
                panic!("{format} cut at {cut}: {err:?}")
            };
            assert_eq!((source_name.to_str(), *records), (Some(name.as_str()), ts.len() as u64));
            // The byte offset is where the plain prefix stops being whole, as for the plain file.
            match err_zcat {
                Some(CaptureError::Truncated { offset: plain_at, .. }) => assert_eq!(*offset, plain_at),
                Some(CaptureError::Empty { .. }) => assert_eq!(*offset, 0),
                Some(e) => panic!("{e}"),
                None => assert!(ts.len() == 182 || *offset > 0),
            }
            let text = err.as_ref().unwrap().to_string();
            assert_eq!(
                text,
                format!(
                    "{name}: gzip stream is cut off {} (byte {offset} of the decompressed capture)",
                    match records {
                        0 => "before any record".to_string(),
                        1 => "after 1 record".to_string(),
                        n => format!("after {n} records"),
                    }
                )
            );
        }
    }
}

#[test]
fn a_gzip_trailer_that_does_not_match_is_reported_after_every_record() {
    // A checksum byte flipped: every record decompresses, but the stream is not what was
    // compressed. (Read silently to the end before.)
    for plain in [std::fs::read(demo()).unwrap(), demo_pcapng()] {
        let mut gz = gzip(&plain);
        let crc = gz.len() - 8;
        gz[crc] ^= 0x40;
        let (ts, err) = read(gz, "x.gz");
        assert_eq!(ts.len(), 182);
        match err {
            Some(CaptureError::GzipCorrupt { records: 182, offset, detail, .. }) => {
                assert_eq!(offset, plain.len() as u64);
                assert!(detail.contains("CRC-32"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }
    // A damaged gzip header: not "cannot read: read failed", but what is wrong and where.
    let mut gz = gzip(&std::fs::read(demo()).unwrap());
    gz[2] = 7; // compression method: not deflate
    let (ts, err) = read(gz, "bad.gz");
    assert!(ts.is_empty());
    assert_eq!(
        err.unwrap().to_string(),
        "bad.gz: gzip stream is corrupt before any record (byte 0 of the decompressed capture): a gzip member header is invalid"
    );
}

/// A pcapng block (little-endian, or big-endian with `be`).
fn block(kind: u32, body: &[u8], be: bool) -> Vec<u8> {
    let mut body = body.to_vec();
    body.resize(body.len().div_ceil(4) * 4, 0);
    let len = (12 + body.len()) as u32;
    let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut b = u32b(kind).to_vec();
    b.extend_from_slice(&u32b(len));
    b.extend_from_slice(&body);
    b.extend_from_slice(&u32b(len));
    b
}

fn shb(be: bool) -> Vec<u8> {
    let mut body = if be { 0x1A2B_3C4Du32.to_be_bytes() } else { 0x1A2B_3C4Du32.to_le_bytes() }.to_vec();
    body.extend_from_slice(&if be { [0, 1, 0, 0] } else { [1, 0, 0, 0] });
    body.extend_from_slice(&[0xff; 8]);
    block(0x0A0D_0D0A, &body, be)
}

/// An interface description block with the given options (code, value).
fn idb(options: &[(u16, Vec<u8>)], be: bool) -> Vec<u8> {
    let u16b = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut body = u16b(1).to_vec();
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&if be { 65535u32.to_be_bytes() } else { 65535u32.to_le_bytes() });
    for (code, value) in options {
        body.extend_from_slice(&u16b(*code));
        body.extend_from_slice(&u16b(value.len() as u16));
        body.extend_from_slice(value);
        body.resize(body.len().div_ceil(4) * 4, 0);
    }
    body.extend_from_slice(&[0; 4]);
    block(1, &body, be)
}

fn epb(if_id: u32, ts: u64, data: &[u8], be: bool) -> Vec<u8> {
    let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut body = u32b(if_id).to_vec();
    body.extend_from_slice(&u32b((ts >> 32) as u32));
    body.extend_from_slice(&u32b(ts as u32));
    body.extend_from_slice(&u32b(data.len() as u32));
    body.extend_from_slice(&u32b(data.len() as u32));
    body.extend_from_slice(data);
    block(6, &body, be)
}

const FRAME: [u8; 42] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 8, 6, 0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
];

#[test]
fn binary_timestamp_resolutions_are_read_exactly() {
    // if_tsresol 0x94 (2^-20 s) refused as "invalid timestamp resolution 0x94" before;
    // 2^-30 s and 10^-12 s beside it. tshark's frame.time_epoch for these is the same
    // (checked by `tests/cli.rs`).
    let base = 1_750_000_000u64;
    let mut f = shb(false);
    f.extend(idb(&[(9, vec![0x94])], false));
    f.extend(idb(&[(9, vec![0x80 | 30])], false));
    f.extend(idb(&[(9, vec![12])], false));
    for (i, ts) in [
        (0, base << 20),
        (0, (base << 20) + 1),
        (0, (base << 20) + 3),
        (0, (base << 20) + (1 << 20) - 1),
        (1, (base << 30) + 5),
        (1, (base << 30) + (1 << 30) - 1),
        (2, 1_000_000 * 1_000_000_000_000 + 1999),
    ] {
        f.extend(epb(i, ts, &FRAME, false));
    }
    let (ts, err) = read(f, "tsresol.pcapng");
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        ts,
        [
            1_750_000_000_000_000_000,
            1_750_000_000_000_000_953,
            1_750_000_000_000_002_861,
            1_750_000_000_999_999_046,
            1_750_000_000_000_000_004,
            1_750_000_000_999_999_999,
            1_000_000_000_000_001,
        ]
    );
    // A resolution no 64-bit count can carry is refused, naming the interface and the code.
    let mut f = shb(false);
    f.extend(idb(&[(9, vec![0x80 | 64])], false));
    f.extend(epb(0, 1, &FRAME, false));
    let (ts, err) = read(f, "fine.pcapng");
    assert!(ts.is_empty());
    let text = err.unwrap().to_string();
    assert!(
        text.contains("interface 0 has a timestamp resolution (if_tsresol 0xc0) finer than 2^-63 s"),
        "{text}"
    );
}

#[test]
fn a_big_endian_section_reads_its_interface_options_in_its_byte_order() {
    // if_tsoffset (seconds) and if_speed were read little-endian whatever the section's order.
    let mut f = shb(true);
    f.extend(idb(
        &[(9, vec![9]), (14, 100i64.to_be_bytes().to_vec()), (8, 25_000_000_000u64.to_be_bytes().to_vec())],
        true,
    ));
    f.extend(epb(0, 5, &FRAME, true));
    let mut r = CaptureReader::from_read(Cursor::new(f), Path::new("be.pcapng")).unwrap();
    let rec = r.next_record().unwrap().unwrap();
    assert_eq!((rec.ts_ns, rec.link_bps, rec.data), (100_000_000_005, Some(25_000_000_000), &FRAME[..]));
}

#[test]
fn obsolete_packet_blocks_are_read_not_skipped() {
    // Type 2, written by early pcapng writers, and read by tshark: pcap-parser leaves it
    // unparsed, and its packets were dropped without a word.
    for be in [false, true] {
        let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = shb(be);
        f.extend(idb(&[(9, vec![9])], be));
        let mut body = if be { 0u16.to_be_bytes() } else { 0u16.to_le_bytes() }.to_vec();
        body.extend_from_slice(&[0, 0]); // drops
        body.extend_from_slice(&u32b(0));
        body.extend_from_slice(&u32b(1_000));
        body.extend_from_slice(&u32b(FRAME.len() as u32));
        body.extend_from_slice(&u32b(60));
        body.extend_from_slice(&FRAME);
        f.extend(block(2, &body, be));
        f.extend(epb(0, 2_000, &FRAME, be));
        let mut r = CaptureReader::from_read(Cursor::new(f), Path::new("old.pcapng")).unwrap();
        let first = r.next_record().unwrap().expect("the packet block's packet");
        assert_eq!((first.ts_ns, first.caplen, first.len, first.data), (1_000, 42, 60, &FRAME[..]));
        assert_eq!(r.next_record().unwrap().map(|r| r.ts_ns), Some(2_000));
        assert!(r.next_record().unwrap().is_none());
    }
}

#[test]
fn damaged_pcapng_blocks_are_told_in_plain_words() {
    let good = {
        let mut f = shb(false);
        f.extend(idb(&[(9, vec![9])], false));
        f.extend(epb(0, 7, &FRAME, false));
        f
    };
    let epb_at = good.len() - epb(0, 7, &FRAME, false).len();
    let epb_len = (good.len() - epb_at) as u32;
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "trailing length",
            Box::new(move |f| {
                let end = f.len() - 4;
                f[end] ^= 0x10;
            }),
            "an enhanced packet block's two length fields disagree (76 bytes at its start, 92 at its end)",
        ),
        (
            "captured length",
            Box::new(move |f| f[epb_at + 20..epb_at + 24].copy_from_slice(&4000u32.to_le_bytes())),
            "an enhanced packet block of 76 bytes claims 4000 captured bytes (room for 44)",
        ),
        (
            "option length",
            Box::new(|f| {
                // The IDB's if_tsresol option claims 200 bytes.
                f[28 + 16 + 2..28 + 16 + 4].copy_from_slice(&200u16.to_le_bytes());
            }),
            "an interface description block's options do not fit in it",
        ),
        (
            "section byte order",
            Box::new(|f| f[8] = 0x4c),
            "its section header's byte-order magic is 4c 3c 2b 1a (1a 2b 3c 4d in either order expected)",
        ),
        ("section length", Box::new(|f| f[4] = 0x1e), "its section header block claims a length of 30 bytes"),
        (
            "section trailing length",
            Box::new(|f| f[25] = 1),
            "its section header block's two length fields disagree (28 bytes at its start, 284 at its end)",
        ),
        (
            "block too short",
            Box::new(move |f| f[epb_at + 4..epb_at + 8].copy_from_slice(&16u32.to_le_bytes())),
            "an enhanced packet block of 16 bytes is shorter than its 32-byte header",
        ),
    ];
    assert_eq!(epb_len, 76);
    for (what, damage, want) in cases {
        let mut f = good.clone();
        damage(&mut f);
        let (_, err) = read(f, "d.pcapng");
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.starts_with("d.pcapng: capture is corrupt at byte "), "{what}: {text}");
        assert!(text.contains(want), "{what}: {text}");
        for leak in ["Verify", "Eof", "Tag", "nom", "(Many", "unrecognised", "read error"] {
            assert!(!text.contains(leak), "{what}: {text}");
        }
    }
    // Cut anywhere in the section header: cut off, not "not a capture".
    for cut in [6, 10, 20, 27] {
        let (_, err) = read(good.get(..cut).unwrap().to_vec(), "c.pcapng");
        assert_eq!(
            err.unwrap().to_string(),
            "c.pcapng: capture is cut off: its file header (at byte 0) is incomplete, no record could be read"
        );
    }
}

/// A tiny deterministic generator for the damage sweep (no dependency for it).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn every_message_over_a_damage_sweep_names_the_file_once_and_counts_right() {
    // Cuts and bit flips over demo.pcap and its pcapng, plain and gzip: whatever the damage,
    // the records before it are handed out, the message names the file once, its record
    // count is the records handed out, and no parser-internal name leaks.
    let pcap = std::fs::read(demo()).unwrap();
    let pcapng = demo_pcapng();
    let inputs = [
        ("demo.pcap", pcap.clone()),
        ("demo.pcapng", pcapng.clone()),
        ("demo.pcap.gz", gzip(&pcap)),
        ("demo.pcapng.gz", gzip(&pcapng)),
    ];
    let mut rng = Lcg(15);
    let mut kinds = std::collections::BTreeSet::new();
    for (name, bytes) in &inputs {
        for i in 0..60 {
            let mut b = bytes.clone();
            if i % 3 == 0 {
                b.truncate(rng.below(bytes.len()));
            } else {
                let at = if i % 3 == 1 { rng.below(400) } else { rng.below(bytes.len()) };
                b[at] ^= 1 << rng.below(8);
            }
            let (ts, err) = read(b, name);
            let Some(err) = err else { continue };
            let text = err.to_string();
            kinds.insert(format!("{:?}", std::mem::discriminant(&err)));
            assert_eq!(text.matches(name).count(), 1, "{text}");
            for leak in ["Verify", "(Eof)", "Tag)", "read failed", "read error", "Internal parser"] {
                assert!(!text.contains(leak), "{text}");
            }
            let said =
                text.split("after ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok());
            match &err {
                CaptureError::Empty { .. } | CaptureError::NotACapture { .. } => assert!(ts.is_empty()),
                CaptureError::Truncated { records: 0, .. } => assert!(ts.is_empty()),
                // "before any record": never "after 0 records".
                _ if ts.is_empty() => assert!(text.contains("before any record"), "{text}"),
                _ => assert_eq!(said, Some(ts.len()), "{text}"),
            }
        }
    }
    assert!(kinds.len() >= 4, "the sweep met several kinds of damage: {kinds:?}");
}

#[test]
fn merged_files_damaged_from_their_start_are_named_and_the_others_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let demo_bytes = std::fs::read(demo()).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let mut bad_gz = gzip(&demo_bytes);
    bad_gz[3] = 0xe0; // reserved flag bits: an invalid gzip header
    let paths = [
        demo(),
        write("cut10.pcap", demo_bytes.get(..10).unwrap()),
        write("notes.txt", b"not a capture at all\n"),
        write("bad.pcap.gz", &bad_gz),
        write("empty.pcap", b""),
        write("cut10.pcapng", demo_pcapng().get(..10).unwrap()),
        write("copy.pcapng", &demo_pcapng()),
    ];
    let mut m = Merged::open(&paths).expect("damaged files do not stop the merge");
    assert_eq!(m.point_names().len(), 7, "each keeps its place as a capture point");
    let mut per_point = [0u32; 7];
    let mut interfaces = std::collections::BTreeSet::new();
    while let Some(r) = m.next_record() {
        per_point[usize::from(r.point)] += 1;
        interfaces.insert((r.point, r.interface));
    }
    assert_eq!(per_point, [182, 0, 0, 0, 0, 0, 182]);
    // One interface per good file: a pcapng's first record did not number its interface
    // twice (its packets went to a second, unnamed interface before).
    assert_eq!(interfaces.into_iter().collect::<Vec<_>>(), [(0, 0), (6, 1)]);
    let errors: Vec<String> = m.take_errors().iter().map(ToString::to_string).collect();
    let want = [
        "cut10.pcap: capture is cut off: its file header (at byte 0) is incomplete",
        "notes.txt is not a pcap or pcapng capture (starts with 6e 6f 74 20)",
        "bad.pcap.gz: gzip stream is corrupt before any record (byte 0 of the decompressed capture): a gzip member header is invalid",
        "empty.pcap is empty",
        "cut10.pcapng: capture is cut off: its file header (at byte 0) is incomplete",
    ];
    assert_eq!(errors.len(), want.len(), "{errors:#?}");
    for (e, w) in errors.iter().zip(want) {
        assert!(e.contains(w), "{e}\nlacks {w}");
    }
    // Only the damaged files are named: the interfaces are the good files'.
    let names: Vec<_> = m.interfaces().iter().filter_map(|i| i.name.clone()).collect();
    assert_eq!(names, ["demo.pcap", "copy.pcapng"]);
    // A file that cannot be opened at all is still an error before anything is read.
    let e = Merged::open(&[demo(), dir.path().join("missing.pcap")]).unwrap_err();
    assert!(!e.is_damaged_input() && e.to_string().contains("missing.pcap"), "{e}");
}

#[test]
fn a_full_device_from_the_start_says_nothing_was_written_naming_the_file() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipping: no /dev/full");
        return;
    }
    let e = CaptureSink::create(SinkOptions::new(full, FileFormat::PcapNg), &[]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
    let text = e.to_string();
    assert!(text.starts_with("cannot write /dev/full: "), "{text}");
    assert!(text.ends_with("; nothing was written"), "{text}");
    assert!(full.exists(), "a device is never removed");
}

/// An interface statistics block with the given options (code, value), end of options added.
fn isb(if_id: u32, ts: u64, options: &[(u16, Vec<u8>)], be: bool) -> Vec<u8> {
    let u16b = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut body = u32b(if_id).to_vec();
    body.extend_from_slice(&u32b((ts >> 32) as u32));
    body.extend_from_slice(&u32b(ts as u32));
    for (code, value) in options {
        body.extend_from_slice(&u16b(*code));
        body.extend_from_slice(&u16b(value.len() as u16));
        body.extend_from_slice(value);
        body.resize(body.len().div_ceil(4) * 4, 0);
    }
    body.extend_from_slice(&[0; 4]);
    block(5, &body, be)
}

/// pcapng Interface Statistics Blocks (issue 25): the last per interface wins, a later one
/// counting less is flagged, an absent, short or all-ones option is unknown (never 0), and a
/// damaged block or one naming no described interface is set aside, counted, without
/// stopping the reading; a new section's interfaces are its own.
#[test]
fn interface_statistics_blocks_are_read_and_odd_ones_do_not_mislead() {
    use rocescope_capture::InterfaceStats;
    for be in [false, true] {
        let n = |v: u64| if be { v.to_be_bytes().to_vec() } else { v.to_le_bytes().to_vec() };
        let mut f = shb(be);
        f.extend(idb(&[(2, b"eth0".to_vec()), (9, vec![9])], be));
        f.extend(idb(&[(2, b"eth1".to_vec()), (9, vec![9])], be));
        f.extend(epb(0, 5, &FRAME, be));
        f.extend(isb(0, 10, &[(4, n(10)), (5, n(2)), (7, n(1))], be));
        f.extend(isb(1, 11, &[], be));
        // Later for eth0: fewer received (went backwards), no isb_osdrop: last one wins.
        f.extend(isb(0, 12, &[(4, n(7)), (5, n(2))], be));
        // No interface 7 is described: not used.
        f.extend(isb(7, 13, &[(5, n(1))], be));
        // All ones (dumpcap's "unknown"), and a 4-byte count: unknown both.
        f.extend(isb(1, 14, &[(4, n(u64::MAX)), (5, vec![4, 0, 0, 0])], be));
        // An option whose length runs past the block's end: the block is damaged.
        let mut bad = isb(0, 15, &[(5, n(99))], be);
        let at = 8 + 12 + 2; // block type and length, interface and timestamp, the option code
        bad.splice(at..at + 2, if be { 200u16.to_be_bytes() } else { 200u16.to_le_bytes() });
        f.extend(bad);
        f.extend(epb(0, 20, &FRAME, be));
        // A second section: its interface 0 is another.
        f.extend(shb(be));
        f.extend(idb(&[(2, b"eth9".to_vec()), (9, vec![9])], be));
        f.extend(isb(0, 30, &[(5, n(9))], be));
        let mut r = CaptureReader::from_read(Cursor::new(f), Path::new("isb.pcapng")).unwrap();
        let mut records = 0;
        while r.next_record().unwrap_or_else(|e| panic!("{be}: {e}")).is_some() {
            records += 1;
        }
        assert_eq!(records, 2);
        let named = |section, interface, name: &str| InterfaceStats {
            section,
            interface,
            name: Some(name.into()),
            ..InterfaceStats::default()
        };
        let want = [
            InterfaceStats {
                ts_ns: 12,
                received: Some(7),
                if_dropped: Some(2),
                blocks: 2,
                went_backwards: true,
                ..named(1, 0, "eth0")
            },
            InterfaceStats { ts_ns: 14, blocks: 2, ..named(1, 1, "eth1") },
            InterfaceStats { ts_ns: 30, if_dropped: Some(9), blocks: 1, ..named(2, 0, "eth9") },
        ];
        assert_eq!(r.interface_stats(), want, "big-endian {be}");
        assert_eq!(r.damaged_stats(), 2, "big-endian {be}");
        assert_eq!(r.interface_stats()[1].dropped(), None, "nothing known is not zero");
    }
}

/// The sink of `rocescope capture -w x.pcapng` records a live capture's libpcap counters in
/// an ISB, which reads back as the capture's drops.
#[test]
fn the_sink_writes_a_live_capture_counters_and_they_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.pcapng");
    let mut r = CaptureReader::open(&demo()).unwrap();
    let mut sink = CaptureSink::create(SinkOptions::new(&out, FileFormat::PcapNg), r.interfaces()).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        sink.write(&rec).unwrap();
    }
    let stats = rocescope_capture::CaptureStats { received: 200, kernel_dropped: 15, if_dropped: 3 };
    sink.finish(Some(stats)).1.unwrap();
    let mut back = CaptureReader::open(&out).unwrap();
    while back.next_record().unwrap().is_some() {}
    let s = back.interface_stats();
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].received, s[0].if_dropped, s[0].os_dropped), (Some(200), Some(3), Some(15)));
    assert_eq!(s[0].dropped(), Some(18));
}

/// Records with no captured byte are passed over in the reader's own loop and counted: a
/// gzip of millions of them (a few MB) reads at the speed of its decompression, and the
/// frames around them come out as they are.
#[test]
fn records_with_no_captured_byte_are_counted_and_passed_over() {
    let demo = std::fs::read(demo()).unwrap();
    let (head, first) = demo.split_at(24);
    let len = 16 + u32::from_le_bytes(first[8..12].try_into().unwrap()) as usize;
    let mut bytes = head.to_vec();
    bytes.extend_from_slice(&first[..len]);
    let empty = [&1_767_225_600u32.to_le_bytes()[..], &[0u8; 12]].concat();
    for _ in 0..2_000_000 {
        bytes.extend_from_slice(&empty);
    }
    bytes.extend_from_slice(&first[..len]);
    let gz = gzip(&bytes);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.pcap.gz");
    std::fs::write(&path, &gz).unwrap();
    let mut r = CaptureReader::open(&path).unwrap();
    let (mut frames, mut numbers) = (0, Vec::new());
    while let Some(rec) = r.next_record().unwrap() {
        assert!(rec.caplen > 0);
        frames += 1;
        numbers.push(rec.number_after(numbers.last().copied().unwrap_or(0)));
    }
    assert_eq!((frames, r.empty_records()), (2, 2_000_000));
    // Numbered as tshark numbers them: the empty records count.
    assert_eq!(numbers, [1, 2_000_002]);
    // Through a merge too, each file's empty records before its next record.
    let mut m = Merged::open(&[path.clone(), path]).unwrap();
    let mut before = Vec::new();
    while let Some(rec) = m.next_record() {
        before.push((rec.point, rec.empty_before));
    }
    assert_eq!(before, [(0, 0), (0, 2_000_000), (1, 0), (1, 2_000_000)]);
    assert_eq!(m.empty_records(), 4_000_000);
}
