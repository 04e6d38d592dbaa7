//! Reading pcap and pcapng captures from files, standard input or gzip streams.
//!
//! Built on `pcap-parser`'s streaming readers: memory stays bounded by the largest record,
//! whatever the file size. Each record's bytes are copied into one reusable buffer, so
//! reading allocates nothing per packet.

use crate::classic::Classic;
use crate::error::CaptureError;
use crate::statistics::InterfaceStats;
use crate::time::{units_per_second, units_to_ns};
use pcap_parser::pcapng::{Block, InterfaceDescriptionBlock, OptionCode};
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};
use rocescope_decoder::LinkType;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Initial read buffer; grows up to `MAX_RECORD` for larger records. 256 KiB: as fast as
/// 1 MiB, and 0.75 MB less resident for each shard reading the file (issue 39).
const BUFFER: usize = 1 << 18;
/// Records larger than this are treated as corruption (libpcap's own limit is 256 KiB).
const MAX_RECORD: usize = 64 << 20;

/// The container format of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap with microsecond timestamps.
    Pcap,
    /// Classic pcap with nanosecond timestamps.
    PcapNanos,
    /// pcapng.
    PcapNg,
}

/// One capture interface (pcapng IDB, or the single link of a classic pcap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Link type of its packets.
    pub link_type: LinkType,
    /// Snap length.
    pub snaplen: u32,
    /// `if_name`, when recorded.
    pub name: Option<String>,
    /// `if_speed` in bits per second, when recorded.
    pub speed_bps: Option<u64>,
    /// Timestamp units per second.
    ts_units: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    ts_offset: i64,
}

impl Interface {
    /// A live interface: nanosecond timestamps, no offset.
    pub fn live(name: &str, link_type: LinkType, snaplen: u32, speed_bps: Option<u64>) -> Self {
        Interface {
            link_type,
            snaplen,
            name: Some(name.to_string()),
            speed_bps,
            ts_units: 1_000_000_000,
            ts_offset: 0,
        }
    }

    pub(crate) fn ts_ns(&self, units: u64) -> i64 {
        let ns = units_to_ns(units, self.ts_units) + i128::from(self.ts_offset) * 1_000_000_000;
        // See `MAX_TS_NS`: the range classic pcap can express, so every later difference
        // between two timestamps fits an i64.
        i64::try_from(ns.clamp(0, i128::from(MAX_TS_NS))).unwrap_or(MAX_TS_NS)
    }
}

/// Latest timestamp a record carries (year 2116). pcapng timestamps (64-bit, any
/// resolution, plus `if_tsoffset`) are clamped to `0..=MAX_TS_NS`, the range of classic pcap
/// and of live captures, so a damaged or hostile file cannot make `a - b` on two record
/// times overflow anywhere downstream.
pub const MAX_TS_NS: i64 = 1 << 62;

/// One captured frame. Borrows the reader's buffer until the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Capture time in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Bytes captured.
    pub caplen: u32,
    /// Length of the frame on the wire, as the capture record states it.
    pub len: u32,
    /// Link type of the frame.
    pub link_type: LinkType,
    /// Index of the interface it was captured on (0 for classic pcap).
    pub interface: u32,
    /// That interface's speed when the capture states it (pcapng `if_speed`, or the live
    /// interface's): the analyzer converts PFC quanta to time with it.
    pub link_bps: Option<u64>,
    /// Capture point: which of several merged sources (`-r a -r b`) the frame came from,
    /// 0 for a single source.
    pub point: u16,
    /// The captured bytes.
    pub data: &'a [u8],
    /// Records with no captured byte the reader passed over just before this one (0 but in
    /// files that hold such records; never for live captures). tshark numbers them as frames,
    /// so frame numbers count them too: [`Record::number_after`].
    pub empty_before: u64,
}

impl<'a> Record<'a> {
    /// A record of all of frame `data` (of link type `link_type`), captured at `ts_ns` on the
    /// first interface of a single source, no empty record passed over before it: what a
    /// listener hands out, and what tests build.
    pub fn whole(link_type: LinkType, ts_ns: i64, data: &'a [u8]) -> Self {
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        Record {
            ts_ns,
            caplen: len,
            len,
            link_type,
            interface: 0,
            link_bps: None,
            point: 0,
            data,
            empty_before: 0,
        }
    }

    /// This record's frame number, `previous` being the number of the record before it (0 at
    /// the start): one more, plus the empty records passed over between them, so the numbers
    /// are tshark's (which numbers a record with no captured byte as a frame of length 0).
    pub fn number_after(&self, previous: u64) -> u64 {
        previous.saturating_add(1).saturating_add(self.empty_before)
    }
}

/// A streaming reader over a pcap or pcapng capture.
pub struct CaptureReader {
    /// pcapng (and anything else) through pcap-parser; `None` for classic pcap.
    inner: Option<Box<dyn PcapReaderIterator + Send>>,
    /// Classic pcap, read in place.
    classic: Option<Classic>,
    format: Format,
    interfaces: Vec<Interface>,
    buf: Vec<u8>,
    records: u64,
    /// pcapng packet blocks with no captured byte, passed over (classic pcap's: `Classic`).
    empty: u64,
    /// [`CaptureReader::empty_records`] when the last record was handed out: the empty
    /// records since are the next record's [`Record::empty_before`].
    empty_seen: u64,
    capacity: usize,
    /// pcapng sections begun (each restarts interface numbering).
    sections: u32,
    last_ts: i64,
    done: bool,
    /// Byte order of the file (classic pcap) or of the current section (pcapng).
    big_endian: bool,
    /// The name errors give (a path, or "-").
    source_name: PathBuf,
    /// The input is gzip-compressed (offsets in errors are then in the decompressed bytes).
    gzip: bool,
    /// What the byte stream under the parser failed with, if it did.
    stream: StreamError,
    /// Capture counters from the Interface Statistics Blocks read so far, one per
    /// (section, interface) (crate::statistics).
    stats: Vec<InterfaceStats>,
    /// ISBs not used: damaged, or naming an interface not described.
    damaged_stats: u32,
    /// Bytes read from the input so far ([`CaptureReader::bytes_read`]).
    input_bytes: ByteCount,
}

/// Bytes taken from an input, counted per read(2)-sized call (64 KiB and more), never per
/// record: what a progress display measures a run by. Shared with the [`Counted`] stream
/// under the parsers; one writer, so a relaxed load and store (no locked instruction).
#[derive(Clone, Debug, Default)]
struct ByteCount(Arc<AtomicU64>);

impl ByteCount {
    fn add(&self, n: usize) {
        let c = &self.0;
        c.store(c.load(Ordering::Relaxed).saturating_add(n as u64), Ordering::Relaxed);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The input as given (the file, the pipe), its bytes counted as they are read: of a gzip
/// capture the compressed bytes, so that they compare with the file's size.
struct Counted<R> {
    inner: R,
    count: ByteCount,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.add(n);
        Ok(n)
    }
}

/// Why reading stopped before the end, found by a parser that knows neither the file's
/// name nor the records read: [`CaptureReader::fail`] turns it into a [`CaptureError`].
#[derive(Debug)]
pub(crate) enum Damage {
    /// The input ends inside the record (or, at 0, the file header) at this offset.
    CutOff(u64),
    /// The record or block at this offset is malformed: what is wrong.
    Corrupt(u64, String),
}

/// The error the stream under the parsers met, kept for the reader to report. The parsers
/// (pcap-parser's above all, which turns every read error into a bare `ReadError` and may
/// read again after it) see only the end of the stream.
#[derive(Clone, Debug, Default)]
struct StreamError(Arc<Mutex<Option<io::Error>>>);

impl StreamError {
    fn set(&self, e: io::Error) {
        let mut slot = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert(e);
    }

    fn take(&self) -> Option<io::Error> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

/// The byte stream under the parsers (the file, or what gzip decompressed from it). A read
/// error ends the stream: the parsers then see the bytes read before it, and its end, so
/// every record that arrived whole is still handed out; the error is kept in a
/// [`StreamError`] and reported after them, named and placed.
struct Tracked<R> {
    inner: R,
    error: StreamError,
    failed: bool,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while !self.failed {
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = true;
                    self.error.set(e);
                }
                ok => return ok,
            }
        }
        Ok(0)
    }
}

impl std::fmt::Debug for CaptureReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureReader")
            .field("format", &self.format)
            .field("interfaces", &self.interfaces)
            .field("records", &self.records)
            .finish()
    }
}

impl CaptureReader {
    /// Open a capture file; `-` reads standard input. Gzip-compressed input is detected by
    /// its magic bytes and decompressed on the fly. The format (pcap in either byte order and
    /// timestamp resolution, or pcapng) comes from the file, not its name.
    ///
    /// ```
    /// use rocescope_capture::{CaptureError, CaptureReader, Format};
    /// use rocescope_decoder::LinkType;
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let reader = CaptureReader::open(path)?;
    /// assert_eq!(reader.format(), Format::PcapNanos);
    /// assert_eq!(reader.interfaces()[0].link_type, LinkType::ETHERNET);
    ///
    /// // Anything else is refused with an error that says what it is.
    /// let not_a_capture = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
    /// let err = CaptureReader::open(not_a_capture).unwrap_err();
    /// assert!(matches!(err, CaptureError::NotACapture { .. }));
    /// assert!(err.to_string().ends_with("is not a pcap or pcapng capture (starts with 5b 70 61 63)"));
    /// # Ok::<(), CaptureError>(())
    /// ```
    pub fn open(path: &Path) -> Result<Self, CaptureError> {
        Self::open_with_buffer(path, BUFFER)
    }

    /// [`CaptureReader::open`] with a smaller read buffer to start with (it still grows to
    /// the largest record): many files read at once (a merge) need not take 256 KiB each.
    pub fn open_with_buffer(path: &Path, buffer: usize) -> Result<Self, CaptureError> {
        if path == Path::new("-") {
            return Self::from_read_with(io::stdin(), path, buffer);
        }
        let file =
            File::open(path).map_err(|error| CaptureError::Io { source_name: path.to_path_buf(), error })?;
        Self::from_read_with(file, path, buffer)
    }

    /// Read a capture from any byte stream. `name` is used in error messages.
    pub fn from_read<R: Read + Send + 'static>(r: R, name: &Path) -> Result<Self, CaptureError> {
        Self::from_read_with(r, name, BUFFER)
    }

    /// [`CaptureReader::from_read`] with a smaller read buffer to start with, as
    /// [`CaptureReader::open_with_buffer`] (a merge's opener, [`crate::merge::Merged::open_with`]).
    pub fn from_read_with_buffer<R: Read + Send + 'static>(
        r: R,
        name: &Path,
        buffer: usize,
    ) -> Result<Self, CaptureError> {
        Self::from_read_with(r, name, buffer)
    }

    fn from_read_with<R: Read + Send + 'static>(
        r: R,
        name: &Path,
        buffer: usize,
    ) -> Result<Self, CaptureError> {
        let buffer = buffer.clamp(64 * 1024, BUFFER);
        let source_name: PathBuf = name.to_path_buf();
        let input_bytes = ByteCount::default();
        let mut br = BufReader::with_capacity(64 * 1024, Counted { inner: r, count: input_bytes.clone() });
        let head =
            br.fill_buf().map_err(|error| CaptureError::Io { source_name: source_name.clone(), error })?;
        let gzip = head.starts_with(&[0x1f, 0x8b]);
        let stream = StreamError::default();
        let source: Box<dyn Read + Send> = if gzip {
            Box::new(Tracked {
                inner: flate2::read::MultiGzDecoder::new(br),
                error: stream.clone(),
                failed: false,
            })
        } else {
            Box::new(Tracked { inner: br, error: stream.clone(), failed: false })
        };
        let mut reader = CaptureReader {
            inner: None,
            classic: None,
            format: Format::Pcap,
            interfaces: Vec::new(),
            buf: Vec::new(),
            records: 0,
            empty: 0,
            empty_seen: 0,
            capacity: buffer,
            sections: 0,
            last_ts: 0,
            done: false,
            big_endian: false,
            source_name,
            gzip,
            stream,
            stats: Vec::new(),
            damaged_stats: 0,
            input_bytes,
        };
        reader.start(source)?;
        Ok(reader)
    }

    /// Recognise the format from the first bytes and read the file header.
    fn start(&mut self, mut source: Box<dyn Read + Send>) -> Result<(), CaptureError> {
        // Peek the magic so the error for a non-capture can show it.
        let mut magic = [0u8; 4];
        let got = read_up_to(&mut source, &mut magic);
        let head = magic.get(..got).unwrap_or(&[]).to_vec();
        let format = match u32::from_le_bytes(magic) {
            0x0A0D_0D0A => Format::PcapNg,
            0xA1B2_3C4D | 0x4D3C_B2A1 => Format::PcapNanos,
            0xA1B2_C3D4 | 0xD4C3_B2A1 | 0xA1B2_CD34 | 0x34CD_B2A1 => Format::Pcap,
            // Too little, or not a capture: unless the stream under it failed (a gzip stream
            // cut off or corrupt in its first bytes), which is then the cause.
            _ => {
                return Err(self.stream_failure(0).unwrap_or_else(|| match got {
                    0 => CaptureError::Empty { source_name: self.source_name.clone() },
                    _ => CaptureError::NotACapture {
                        source_name: self.source_name.clone(),
                        magic,
                        compressed: self.gzip,
                    },
                }))
            }
        };
        self.format = format;
        if format != Format::PcapNg {
            let chained = io::Cursor::new(head).chain(source);
            let classic = Classic::open(Box::new(chained), self.capacity).map_err(|d| self.fail(d))?;
            let h = classic.header;
            self.interfaces.push(Interface {
                link_type: LinkType(h.link_type),
                snaplen: h.snaplen,
                name: None,
                speed_bps: None,
                ts_units: if h.nanos { 1_000_000_000 } else { 1_000_000 },
                ts_offset: 0,
            });
            self.big_endian = h.big_endian;
            self.classic = Some(classic);
            return Ok(());
        }
        // pcapng: check the section header block here, so its damage is told as such
        // (pcap-parser calls a damaged one "not a capture", and a cut one too).
        let shb = read_section_header(&mut source, head).map_err(|d| self.fail(d))?;
        self.big_endian = shb.big_endian;
        let capacity = self.capacity.max(shb.bytes.len() + 4096);
        let chained = io::Cursor::new(shb.bytes).chain(source);
        let inner = create_reader(capacity, FullRead(chained)).map_err(|e| {
            self.fail(match e {
                PcapError::Eof
                | PcapError::Incomplete(_)
                | PcapError::UnexpectedEof
                | PcapError::ReadError => Damage::CutOff(0),
                _ => Damage::Corrupt(0, "its section header block is malformed".into()),
            })
        })?;
        self.capacity = capacity;
        self.buf.reserve(65536);
        self.inner = Some(inner);
        Ok(())
    }

    /// The error to report when reading stops on `damage`: the failure of the stream under
    /// the parser comes first (a gzip stream cut off or corrupt, a read error), since it is
    /// why the data ended or went wrong; it is placed at the first record not read.
    fn fail(&self, damage: Damage) -> CaptureError {
        let offset = match &damage {
            Damage::CutOff(at) | Damage::Corrupt(at, _) => *at,
        };
        self.stream_failure(offset).unwrap_or_else(|| {
            let (source_name, records) = (self.source_name.clone(), self.records);
            match damage {
                Damage::CutOff(offset) => CaptureError::Truncated { source_name, offset, records },
                Damage::Corrupt(offset, detail) => {
                    CaptureError::Corrupt { source_name, offset, records, detail }
                }
            }
        })
    }

    /// The stream's failure, if it failed, as the error to report with `offset` the first
    /// record not read.
    fn stream_failure(&self, offset: u64) -> Option<CaptureError> {
        let error = self.stream.take()?;
        let (source_name, records) = (self.source_name.clone(), self.records);
        // flate2 says "unexpected end of file" or "incomplete deflate stream" for a cut
        // stream; an OS error under the decompressor is a read failure, not damage.
        Some(if !self.gzip || error.raw_os_error().is_some() {
            CaptureError::Read { source_name, offset, records, error }
        } else if error.kind() == io::ErrorKind::UnexpectedEof {
            CaptureError::GzipCutOff { source_name, offset, records }
        } else {
            let detail = match error.to_string().as_str() {
                "corrupt deflate stream" => String::from("its compressed data is invalid"),
                "invalid gzip header" => String::from("a gzip member header is invalid"),
                t if t.contains("checksum") => {
                    String::from("the CRC-32 or length in its trailer does not match the decompressed data")
                }
                other => other.to_string(),
            };
            CaptureError::GzipCorrupt { source_name, offset, records, detail }
        })
    }

    /// The container format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The interfaces described so far (pcapng), or the single link of a classic pcap.
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// pcapng sections begun so far (a new section numbers its interfaces from 0 again).
    pub fn sections(&self) -> u32 {
        self.sections
    }

    /// The capture counters the file's Interface Statistics Blocks gave so far, one per
    /// interface that had a usable one (the last per interface wins: crate::statistics).
    /// They are usually at the end of the file: read it to the end first.
    pub fn interface_stats(&self) -> &[InterfaceStats] {
        &self.stats
    }

    /// Interface Statistics Blocks not used (damaged, or naming an interface not described).
    pub fn damaged_stats(&self) -> u32 {
        self.damaged_stats
    }

    /// Records with no captured byte passed over so far: not frames, there is nothing in them
    /// to decode (a capture of millions of them reads at the speed of its decompression).
    pub fn empty_records(&self) -> u64 {
        self.empty.saturating_add(self.classic.as_ref().map_or(0, |c| c.empty))
    }

    /// Records returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// Bytes read from the input so far: of the file or stream as given (a gzip capture's
    /// compressed bytes), counted as the reader takes them in (up to its read-ahead, 256 KiB at
    /// most, past the last record handed out). What progress is measured by: at the end of
    /// a file it is the file's size.
    ///
    /// ```
    /// use rocescope_capture::CaptureReader;
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let mut reader = CaptureReader::open(path)?;
    /// while reader.next_record()?.is_some() {}
    /// assert_eq!(reader.bytes_read(), std::fs::metadata(path)?.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bytes_read(&self) -> u64 {
        self.input_bytes.get()
    }

    fn consumed(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.consumed() as u64)
    }

    /// The pending pcapng block is malformed: the error that says how.
    fn corrupt(&self) -> CaptureError {
        let data = self.inner.as_ref().map_or(&[][..], |i| i.data());
        self.fail(Damage::Corrupt(self.consumed(), describe_block(data, self.big_endian)))
    }

    /// When the pending pcapng block cannot be what it claims, say how: a length no block
    /// can have (a damaged length field, rather than a file that merely ends early), or a
    /// block whose bytes are all there and still do not parse (a field inside it runs past
    /// its end, which pcap-parser reports as needing more data: reading on would take in the
    /// rest of the file to end with "cut off").
    fn block_damage(&self) -> Option<String> {
        let data = self.inner.as_ref().map_or(&[][..], |i| i.data());
        let big_endian = block_order(data, self.big_endian)?;
        let len = word(data, 4, big_endian)?;
        if len as usize > MAX_RECORD || len < 12 || len % 4 != 0 {
            return Some(format!("a block claims a length of {len} bytes"));
        }
        (data.len() >= len as usize).then(|| describe_block(data, self.big_endian))
    }

    /// The next record, `Ok(None)` at the end, or the error that stopped reading. After an
    /// error the reader returns `Ok(None)`. The record borrows the reader's buffer until the
    /// next call (a lending iterator: use `while let`, not `for`).
    ///
    /// ```
    /// use rocescope_capture::CaptureReader;
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let mut reader = CaptureReader::open(path)?;
    /// let first = reader.next_record()?.expect("a first record");
    /// assert_eq!(first.ts_ns, 1_767_225_600_000_000_000); // 2026-01-01 00:00:00 UTC
    /// assert_eq!((first.caplen, first.len, first.data.len()), (1098, 1098, 1098));
    /// let mut frames = 1;
    /// while let Some(_rec) = reader.next_record()? {
    ///     frames += 1;
    /// }
    /// assert_eq!(frames, 182);
    /// assert_eq!(reader.records_read(), 182);
    /// # Ok::<(), rocescope_capture::CaptureError>(())
    /// ```
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        if self.classic.is_some() {
            return self.next_classic();
        }
        let r = self.advance();
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        let meta = r?;
        let empty_before = self.take_empty_before();
        // The interface blocks come in the stream: look the speed up per record, not at open.
        let speed = |i: u32| self.interfaces.get(i as usize).and_then(|ifc| ifc.speed_bps);
        Ok(meta.map(|(ts_ns, caplen, len, link_type, interface)| Record {
            ts_ns,
            caplen,
            len,
            link_type,
            interface,
            link_bps: speed(interface),
            point: 0,
            data: &self.buf,
            empty_before,
        }))
    }

    /// Up to `max` records to `f` in one loop (which returns false to stop early): what
    /// `while let Some(rec) = reader.next_record()?` hands out, the same records with the same
    /// numbers and errors. A classic pcap is walked in its read buffer with no per-record
    /// call out of the loop: the record walk of the engine (issue 39); pcapng goes record by
    /// record through [`CaptureReader::next_record`].
    #[inline]
    pub fn walk<F: FnMut(&Record<'_>) -> bool>(
        &mut self,
        max: usize,
        mut f: F,
    ) -> Result<crate::Batch, CaptureError> {
        if self.classic.is_none() {
            return crate::source::batch(self, max, f);
        }
        let mut n = 0;
        if self.done {
            return Ok(crate::Batch::End);
        }
        let CaptureReader { classic: Some(c), records, last_ts, empty, empty_seen, .. } = self else {
            return Ok(crate::Batch::End);
        };
        let link_type = LinkType(c.header.link_type);
        let ended = loop {
            if n >= max {
                break None;
            }
            match c.next() {
                Ok(Some(at)) => {
                    *records += 1;
                    *last_ts = at.ts_ns;
                    let total = empty.saturating_add(c.empty);
                    let empty_before = total.saturating_sub(*empty_seen);
                    *empty_seen = total;
                    let data = c.buf.get(at.start..at.start + at.caplen as usize).unwrap_or(&[]);
                    let rec = Record {
                        ts_ns: at.ts_ns,
                        caplen: at.caplen,
                        len: at.len,
                        link_type,
                        interface: 0,
                        link_bps: None,
                        point: 0,
                        data,
                        empty_before,
                    };
                    n += 1;
                    if !f(&rec) {
                        break None;
                    }
                }
                Ok(None) => break Some(Ok(())),
                Err(damage) => break Some(Err(damage)),
            }
        };
        match ended {
            None => Ok(crate::Batch::Frames(n)),
            Some(end) => {
                self.done = true;
                let failure = match end {
                    Ok(()) => {
                        let offset = self.classic.as_ref().map_or(0, Classic::offset);
                        self.stream_failure(offset)
                    }
                    Err(damage) => Some(self.fail(damage)),
                };
                match failure {
                    // As `next_record` (the records before it were handed out).
                    Some(e) => Err(e),
                    None if n == 0 => Ok(crate::Batch::End),
                    None => Ok(crate::Batch::Frames(n)),
                }
            }
        }
    }

    /// The empty records passed over since the last record handed out.
    fn take_empty_before(&mut self) -> u64 {
        let total = self.empty_records();
        let since = total.saturating_sub(self.empty_seen);
        self.empty_seen = total;
        since
    }

    /// The next record of a classic pcap, borrowed from the read buffer.
    #[inline]
    fn next_classic(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        let next = self.classic.as_mut().map_or(Ok(None), Classic::next);
        let at = match next {
            Ok(Some(at)) => at,
            Ok(None) => {
                self.done = true;
                let offset = self.classic.as_ref().map_or(0, Classic::offset);
                return self.stream_failure(offset).map_or(Ok(None), Err);
            }
            Err(damage) => {
                self.done = true;
                return Err(self.fail(damage));
            }
        };
        self.records += 1;
        self.last_ts = at.ts_ns;
        let empty_before = self.take_empty_before();
        let Some(c) = self.classic.as_ref() else { return Ok(None) };
        let data = c.buf.get(at.start..at.start + at.caplen as usize).unwrap_or(&[]);
        Ok(Some(Record {
            ts_ns: at.ts_ns,
            caplen: at.caplen,
            len: at.len,
            link_type: LinkType(c.header.link_type),
            interface: 0,
            link_bps: None,
            point: 0,
            data,
            empty_before,
        }))
    }

    /// Move to the next packet, copying its bytes into `self.buf`.
    #[allow(clippy::type_complexity)]
    fn advance(&mut self) -> Result<Option<(i64, u32, u32, LinkType, u32)>, CaptureError> {
        loop {
            let Some(inner) = self.inner.as_mut() else { return Ok(None) };
            let step = match inner.next() {
                Ok((offset, block)) => {
                    let out = match block {
                        // Only pcapng goes through pcap-parser (classic pcap through `Classic`).
                        PcapBlockOwned::LegacyHeader(_) | PcapBlockOwned::Legacy(_) => {
                            Step::Corrupt("a classic pcap record inside a pcapng file".into())
                        }
                        PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
                            // A new section starts a new set of interfaces.
                            self.interfaces.clear();
                            self.sections += 1;
                            self.big_endian = shb.big_endian();
                            Step::Skip
                        }
                        PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                            match interface_of(&idb, self.big_endian, self.interfaces.len()) {
                                Ok(ifc) => {
                                    self.interfaces.push(ifc);
                                    Step::Skip
                                }
                                Err(detail) => Step::Corrupt(detail),
                            }
                        }
                        PcapBlockOwned::NG(Block::InterfaceStatistics(isb)) => {
                            match self.interfaces.get(isb.if_id as usize) {
                                Some(ifc) => {
                                    let at = (self.sections, ifc);
                                    if !crate::statistics::record(&mut self.stats, at, &isb, self.big_endian)
                                    {
                                        self.damaged_stats = self.damaged_stats.saturating_add(1);
                                    }
                                }
                                None => self.damaged_stats = self.damaged_stats.saturating_add(1),
                            }
                            Step::Skip
                        }
                        PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                            match self.interfaces.get(epb.if_id as usize) {
                                Some(ifc) => {
                                    let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                                    let ts = ifc.ts_ns(units);
                                    let data = epb.packet_data();
                                    if data.is_empty() {
                                        // No captured byte: not a frame (counted, passed over).
                                        self.empty = self.empty.saturating_add(1);
                                        Step::Skip
                                    } else {
                                        self.buf.clear();
                                        self.buf.extend_from_slice(data);
                                        Step::Packet(
                                            ts,
                                            data.len() as u32,
                                            epb.origlen,
                                            ifc.link_type,
                                            epb.if_id,
                                        )
                                    }
                                }
                                None => Step::Corrupt(unknown_interface(epb.if_id, self.interfaces.len())),
                            }
                        }
                        PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                            match self.interfaces.first() {
                                Some(ifc) => {
                                    // Simple packet blocks carry no timestamp: keep the last one.
                                    let data = spb.packet_data();
                                    self.buf.clear();
                                    self.buf.extend_from_slice(data);
                                    Step::Packet(
                                        self.last_ts,
                                        data.len() as u32,
                                        spb.origlen,
                                        ifc.link_type,
                                        0,
                                    )
                                }
                                None => {
                                    Step::Corrupt("a simple packet block comes before any interface".into())
                                }
                            }
                        }
                        // The obsolete Packet Block (type 2) of early pcapng writers: packets
                        // all the same (tshark reads them), which pcap-parser leaves unparsed.
                        PcapBlockOwned::NG(Block::Unknown(b))
                            if block_type(b.block_type, self.big_endian) == 2 =>
                        {
                            match obsolete_packet(b.data, self.big_endian) {
                                Some(p) => match self.interfaces.get(usize::from(p.if_id)) {
                                    Some(ifc) => {
                                        let ts = ifc.ts_ns(p.ts);
                                        self.buf.clear();
                                        self.buf.extend_from_slice(p.data);
                                        Step::Packet(
                                            ts,
                                            p.data.len() as u32,
                                            p.origlen,
                                            ifc.link_type,
                                            u32::from(p.if_id),
                                        )
                                    }
                                    None => Step::Corrupt(unknown_interface(
                                        u32::from(p.if_id),
                                        self.interfaces.len(),
                                    )),
                                },
                                None => Step::Corrupt(describe_block(
                                    self.inner.as_ref().map_or(&[][..], |i| i.data()),
                                    self.big_endian,
                                )),
                            }
                        }
                        PcapBlockOwned::NG(_) => Step::Skip,
                    };
                    if !matches!(out, Step::Corrupt(_)) {
                        if let Some(inner) = self.inner.as_mut() {
                            inner.consume(offset);
                        }
                    }
                    out
                }
                // The end of the data: a clean end unless the stream under it failed.
                Err(PcapError::Eof) => return self.stream_failure(self.consumed()).map_or(Ok(None), Err),
                Err(PcapError::Incomplete(_)) => self.block_damage().map_or(Step::Refill, Step::Corrupt),
                Err(PcapError::UnexpectedEof | PcapError::ReadError) => match self.block_damage() {
                    Some(detail) => Step::Corrupt(detail),
                    None => return Err(self.fail(Damage::CutOff(self.consumed()))),
                },
                Err(PcapError::BufferTooSmall) => Step::Grow,
                // pcap-parser's own names for these (nom's `Verify`, ...) mean nothing to
                // the reader of the message: look at the block and say what is wrong.
                Err(
                    PcapError::HeaderNotRecognized | PcapError::NomError(..) | PcapError::OwnedNomError(..),
                ) => return Err(self.corrupt()),
            };
            match step {
                Step::Skip => {}
                Step::Packet(ts, caplen, len, lt, ifc) => {
                    self.records += 1;
                    self.last_ts = ts;
                    return Ok(Some((ts, caplen, len, lt, ifc)));
                }
                // Reads do not fail here (`Tracked` ends the stream instead, and the next parse
                // sees the end); were one to, the stream's error says what happened.
                Step::Refill => {
                    if self.inner.as_mut().is_none_or(|i| i.refill().is_err()) {
                        return Err(self.fail(Damage::CutOff(self.consumed())));
                    }
                }
                Step::Grow => {
                    let at = self.consumed();
                    if let Some(detail) = self.block_damage() {
                        return Err(self.fail(Damage::Corrupt(at, detail)));
                    }
                    let next = self.capacity * 2;
                    if next > MAX_RECORD || !self.inner.as_mut().is_some_and(|i| i.grow(next)) {
                        let detail = format!("a record is larger than {} MiB", MAX_RECORD >> 20);
                        return Err(self.fail(Damage::Corrupt(at, detail)));
                    }
                    self.capacity = next;
                    if self.inner.as_mut().is_none_or(|i| i.refill().is_err()) {
                        return Err(self.fail(Damage::CutOff(at)));
                    }
                }
                Step::Corrupt(detail) => return Err(self.fail(Damage::Corrupt(self.consumed(), detail))),
            }
        }
    }
}

/// Read until `buf` is full or the stream ends; how many bytes came.
fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match r.read(buf.get_mut(got..).unwrap_or(&mut [])) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // `Tracked` keeps the error for the reader; here it is the end.
            Err(_) => break,
        }
    }
    got
}

/// A 32-bit field of a pcapng block or a pcap record in the given byte order.
fn word(data: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
}

/// A pcapng block type as the spec numbers it (pcap-parser's `UnknownBlock` keeps it as
/// read little-endian).
fn block_type(raw: u32, big_endian: bool) -> u32 {
    if big_endian {
        raw.swap_bytes()
    } else {
        raw
    }
}

/// The byte order of the pcapng block at the start of `data`: a section header states its
/// own (`None` when its byte-order magic is neither), other blocks are in their section's.
fn block_order(data: &[u8], section_big_endian: bool) -> Option<bool> {
    if word(data, 0, false) != Some(0x0A0D_0D0A) {
        return Some(section_big_endian);
    }
    match word(data, 8, false)? {
        0x1A2B_3C4D => Some(false),
        0x4D3C_2B1A => Some(true),
        _ => None,
    }
}

/// "a packet refers to interface 3 but only 1 interface is described before it".
fn unknown_interface(id: u32, described: usize) -> String {
    let described = match described {
        0 => String::from("no interface is"),
        1 => String::from("only 1 interface is"),
        n => format!("only {n} interfaces are"),
    };
    format!("a packet refers to interface {id} but {described} described before it")
}

/// A whole pcapng section header block, checked, with the byte order it states.
struct SectionHeader {
    bytes: Vec<u8>,
    big_endian: bool,
}

/// Read the first block of a pcapng stream, whose first bytes (`head`, the magic) are read
/// already, and check what pcap-parser would refuse without saying why.
fn read_section_header(r: &mut dyn Read, mut head: Vec<u8>) -> Result<SectionHeader, Damage> {
    let have = head.len();
    head.resize(12, 0);
    if have + read_up_to(r, head.get_mut(have..).unwrap_or(&mut [])) < 12 {
        return Err(Damage::CutOff(0));
    }
    let big_endian = match word(&head, 8, false) {
        Some(0x1A2B_3C4D) => false,
        Some(0x4D3C_2B1A) => true,
        _ => {
            let m = head.get(8..12).unwrap_or(&[]);
            return Err(Damage::Corrupt(
                0,
                format!(
                    "its section header's byte-order magic is {} (1a 2b 3c 4d in either order expected)",
                    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
                ),
            ));
        }
    };
    let len = word(&head, 4, big_endian).unwrap_or(0);
    if len < 28 || len % 4 != 0 || len as usize > MAX_RECORD {
        return Err(Damage::Corrupt(0, format!("its section header block claims a length of {len} bytes")));
    }
    let mut bytes = head;
    bytes.resize(len as usize, 0);
    if 12 + read_up_to(r, bytes.get_mut(12..).unwrap_or(&mut [])) < len as usize {
        return Err(Damage::CutOff(0));
    }
    match word(&bytes, len as usize - 4, big_endian) {
        Some(end) if end == len => Ok(SectionHeader { bytes, big_endian }),
        end => Err(Damage::Corrupt(
            0,
            format!(
                "its section header block's two length fields disagree ({len} bytes at its start, {} at its end)",
                end.unwrap_or(0)
            ),
        )),
    }
}

/// Say what is wrong with the pcapng block at the start of `data` that did not parse, in the
/// spec's terms (pcap-parser reports only nom's error kind).
fn describe_block(data: &[u8], section_big_endian: bool) -> String {
    const SHB: u32 = 0x0A0D_0D0A;
    let Some(raw) = word(data, 0, false) else { return String::from("a block is malformed") };
    let Some(big_endian) = block_order(data, section_big_endian) else {
        return String::from("a section header block has an invalid byte-order magic");
    };
    let kind = block_type(raw, big_endian);
    let (name, header) = match kind {
        SHB => ("a section header block", 28),
        1 => ("an interface description block", 20),
        2 => ("a packet block", 32),
        3 => ("a simple packet block", 16),
        4 => ("a name resolution block", 12),
        5 => ("an interface statistics block", 24),
        6 => ("an enhanced packet block", 32),
        9 => ("a systemd journal export block", 12),
        0x0A => ("a decryption secrets block", 20),
        0x0BAD | 0x4000_0BAD => ("a custom block", 16),
        _ => ("a block", 12),
    };
    let name = if name == "a block" { format!("a block of type {kind:#010x}") } else { name.to_string() };
    let Some(len) = word(data, 4, big_endian) else { return format!("{name} is malformed") };
    if len < header {
        return format!("{name} of {len} bytes is shorter than its {header}-byte header");
    }
    if let Some(end) = (len as usize).checked_sub(4).and_then(|at| word(data, at, big_endian)) {
        if end != len {
            return format!(
                "{name}'s two length fields disagree ({len} bytes at its start, {end} at its end)"
            );
        }
    }
    if kind == 6 || kind == 2 {
        let caplen = word(data, 20, big_endian).unwrap_or(0);
        let room = len - 32;
        if u64::from(caplen).div_ceil(4) * 4 > u64::from(room) {
            return format!("{name} of {len} bytes claims {caplen} captured bytes (room for {room})");
        }
    }
    format!("{name}'s options do not fit in it (an option's length runs past the block's end)")
}

/// An interface description as the reader uses it, its options read in the section's byte
/// order; `Err` says what is wrong with it (`number` is its index, for the message).
fn interface_of(
    idb: &InterfaceDescriptionBlock<'_>,
    big_endian: bool,
    number: usize,
) -> Result<Interface, String> {
    // pcap-parser stops reading options at the first that runs past the block's end and
    // keeps the ones before it: a damaged option would silently take the timestamp
    // resolution (or offset) with it. The options must fill the block exactly.
    let used: usize = idb.options.iter().map(|o| 4 + o.value.len()).sum();
    if used != (idb.block_len1 as usize).saturating_sub(20) {
        return Err(String::from(
            "an interface description block's options do not fit in it (an option's length runs past the block's end)",
        ));
    }
    let option = |code: OptionCode| idb.options.iter().find(|o| o.code == code).map(|o| &o.value[..]);
    let u64_option = |code: OptionCode| {
        let b: [u8; 8] = option(code)?.get(..8)?.try_into().ok()?;
        Some(if big_endian { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) })
    };
    // pcap-parser 0.17 refuses every binary resolution (it compares the code with the top
    // bit still set): decode it here, the top bit choosing 2^-n over 10^-n.
    let tsresol = option(OptionCode::IfTsresol).and_then(|v| v.first().copied()).unwrap_or(6);
    let Some(ts_units) = units_per_second(tsresol) else {
        return Err(format!(
            "interface {number} has a timestamp resolution (if_tsresol {tsresol:#04x}) finer than {}: its times cannot be represented",
            if tsresol & 0x80 == 0 { "10^-19 s" } else { "2^-63 s" }
        ));
    };
    Ok(Interface {
        link_type: LinkType(idb.linktype.0 as u32),
        snaplen: idb.snaplen,
        name: idb.if_name().and_then(|r| r.ok()).map(str::to_owned),
        speed_bps: u64_option(OptionCode::IfSpeed),
        ts_units,
        ts_offset: u64_option(OptionCode::IfTsoffset).map_or(0, |v| v as i64),
    })
}

/// An obsolete Packet Block's fields (pcapng type 2).
struct ObsoletePacket<'a> {
    if_id: u16,
    ts: u64,
    origlen: u32,
    data: &'a [u8],
}

/// Parse the body of an obsolete Packet Block (interface u16, drops u16, timestamp high
/// and low, captured and original lengths, data); `None` when it does not fit.
fn obsolete_packet(body: &[u8], big_endian: bool) -> Option<ObsoletePacket<'_>> {
    let half: [u8; 2] = body.get(..2)?.try_into().ok()?;
    let if_id = if big_endian { u16::from_be_bytes(half) } else { u16::from_le_bytes(half) };
    let ts = (u64::from(word(body, 4, big_endian)?) << 32) | u64::from(word(body, 8, big_endian)?);
    let caplen = word(body, 12, big_endian)? as usize;
    let origlen = word(body, 16, big_endian)?;
    let data = body.get(20..20usize.checked_add(caplen)?)?;
    Some(ObsoletePacket { if_id, ts, origlen, data })
}

enum Step {
    Skip,
    Packet(i64, u32, u32, LinkType, u32),
    Refill,
    Grow,
    Corrupt(String),
}

/// A reader whose `read` fills the buffer unless the stream ends: `pcap-parser` reads the
/// file header with a single `read`, which pipes and chained readers may answer short.
struct FullRead<R>(R);

impl<R: Read> Read for FullRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            let slot = buf.get_mut(filled..).unwrap_or(&mut []);
            match self.0.read(slot) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if filled == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(filled)
    }
}
