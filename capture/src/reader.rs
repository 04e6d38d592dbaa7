//! Reading pcap and pcapng captures from files, standard input or gzip streams.
//!
//! Built on `pcap-parser`'s streaming readers: memory stays bounded by the largest record,
//! whatever the file size. Each record's bytes are copied into one reusable buffer, so
//! reading allocates nothing per packet.

use crate::classic::Classic;
use crate::error::CaptureError;
use pcap_parser::pcapng::{Block, OptionCode};
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};
use rocescope_decoder::LinkType;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Initial read buffer; grows up to `MAX_RECORD` for larger records.
const BUFFER: usize = 1 << 20;
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

    fn ts_ns(&self, units: u64) -> i64 {
        // The two common resolutions without a 128-bit division per packet.
        let ns = match self.ts_units {
            1_000_000_000 => i128::from(units),
            1_000_000 => i128::from(units) * 1000,
            u => i128::from(units) * 1_000_000_000 / i128::from(u.max(1)),
        };
        let ns = ns + i128::from(self.ts_offset) * 1_000_000_000;
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
    capacity: usize,
    /// pcapng sections begun (each restarts interface numbering).
    sections: u32,
    last_ts: i64,
    done: bool,
    /// Byte order of the file (classic pcap) or of the current section (pcapng).
    big_endian: bool,
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
    /// the largest record): many files read at once (a merge) need not take 1 MiB each.
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

    fn from_read_with<R: Read + Send + 'static>(
        r: R,
        name: &Path,
        buffer: usize,
    ) -> Result<Self, CaptureError> {
        let buffer = buffer.clamp(64 * 1024, BUFFER);
        let source_name: PathBuf = name.to_path_buf();
        let mut br = BufReader::with_capacity(64 * 1024, r);
        let head =
            br.fill_buf().map_err(|error| CaptureError::Io { source_name: source_name.clone(), error })?;
        let gz = head.starts_with(&[0x1f, 0x8b]);
        let source: Box<dyn Read + Send> =
            if gz { Box::new(flate2::read::MultiGzDecoder::new(br)) } else { Box::new(br) };
        Self::from_boxed(source, source_name, buffer)
    }

    fn from_boxed(
        source: Box<dyn Read + Send>,
        source_name: PathBuf,
        buffer: usize,
    ) -> Result<Self, CaptureError> {
        // Peek the magic so the error for a non-capture can show it.
        let mut source = source;
        let mut magic = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let slot = magic.get_mut(got..).unwrap_or(&mut []);
            match source.read(slot) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(CaptureError::Io { source_name, error }),
            }
        }
        if got == 0 {
            return Err(CaptureError::Empty { source_name });
        }
        let chained = io::Cursor::new(magic.get(..got).unwrap_or(&[]).to_vec()).chain(source);
        let format = match u32::from_le_bytes(magic) {
            0x0A0D_0D0A => Format::PcapNg,
            0xA1B2_3C4D | 0x4D3C_B2A1 => Format::PcapNanos,
            0xA1B2_C3D4 | 0xD4C3_B2A1 | 0xA1B2_CD34 | 0x34CD_B2A1 => Format::Pcap,
            _ => return Err(CaptureError::NotACapture { source_name, magic }),
        };
        if format != Format::PcapNg {
            let classic = Classic::open(Box::new(chained), buffer)?;
            let h = classic.header;
            let interface = Interface {
                link_type: LinkType(h.link_type),
                snaplen: h.snaplen,
                name: None,
                speed_bps: None,
                ts_units: if h.nanos { 1_000_000_000 } else { 1_000_000 },
                ts_offset: 0,
            };
            return Ok(CaptureReader {
                inner: None,
                classic: Some(classic),
                format,
                interfaces: vec![interface],
                buf: Vec::new(),
                records: 0,
                capacity: buffer,
                sections: 0,
                last_ts: 0,
                done: false,
                big_endian: h.big_endian,
            });
        }
        let inner = create_reader(buffer, FullRead(chained)).map_err(|e| match e {
            PcapError::Eof | PcapError::Incomplete(_) | PcapError::UnexpectedEof => {
                CaptureError::Truncated { offset: 0, records: 0 }
            }
            PcapError::ReadError => {
                CaptureError::Io { source_name: source_name.clone(), error: io::Error::other("read failed") }
            }
            _ => CaptureError::NotACapture { source_name: source_name.clone(), magic },
        })?;
        Ok(CaptureReader {
            inner: Some(inner),
            classic: None,
            format,
            interfaces: Vec::new(),
            buf: Vec::with_capacity(65536),
            records: 0,
            capacity: buffer,
            sections: 0,
            last_ts: 0,
            done: false,
            big_endian: matches!(u32::from_le_bytes(magic), 0xD4C3_B2A1 | 0x4D3C_B2A1 | 0x34CD_B2A1),
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

    /// Records returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    fn consumed(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.consumed() as u64)
    }

    fn corrupt(&self, detail: String) -> CaptureError {
        CaptureError::Corrupt { offset: self.consumed(), records: self.records, detail }
    }

    /// When the pending record or block claims a length no capture can have, say so (a
    /// damaged length field, rather than a file that merely ends early).
    fn implausible_length(&self) -> Option<String> {
        let data = self.inner.as_ref().map_or(&[][..], |i| i.data());
        let word = |at: usize| {
            let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
            Some(if self.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
        };
        match self.format {
            Format::Pcap | Format::PcapNanos => {
                let caplen = word(8)?;
                let snaplen = self.interfaces.first().map_or(0, |i| i.snaplen);
                let limit = snaplen.max(262_144);
                (caplen > limit)
                    .then(|| format!("a record claims {caplen} captured bytes (snap length {snaplen})"))
            }
            Format::PcapNg => {
                let len = word(4)?;
                (len as usize > MAX_RECORD || len < 12 || len % 4 != 0)
                    .then(|| format!("a block claims a length of {len} bytes"))
            }
        }
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
        }))
    }

    /// The next record of a classic pcap, borrowed from the read buffer.
    fn next_classic(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        let Some(c) = self.classic.as_mut() else { return Ok(None) };
        let at = match c.next(self.records) {
            Ok(Some(at)) => at,
            other => {
                self.done = true;
                return other.map(|_| None);
            }
        };
        self.records += 1;
        self.last_ts = at.ts_ns;
        let link_type = LinkType(c.header.link_type);
        let data = c.buf.get(at.start..at.start + at.caplen as usize).unwrap_or(&[]);
        Ok(Some(Record {
            ts_ns: at.ts_ns,
            caplen: at.caplen,
            len: at.len,
            link_type,
            interface: 0,
            link_bps: None,
            point: 0,
            data,
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
                        PcapBlockOwned::LegacyHeader(h) => {
                            let nanos = h.is_nanosecond_precision();
                            self.interfaces.push(Interface {
                                link_type: LinkType(h.network.0 as u32),
                                snaplen: h.snaplen,
                                name: None,
                                speed_bps: None,
                                ts_units: if nanos { 1_000_000_000 } else { 1_000_000 },
                                ts_offset: 0,
                            });
                            Step::Skip
                        }
                        PcapBlockOwned::Legacy(b) => match self.interfaces.first() {
                            Some(ifc) => {
                                let units = u64::from(b.ts_sec) * ifc.ts_units + u64::from(b.ts_usec);
                                let ts = ifc.ts_ns(units);
                                self.buf.clear();
                                self.buf.extend_from_slice(b.data);
                                Step::Packet(ts, b.caplen, b.origlen, ifc.link_type, 0)
                            }
                            None => Step::Corrupt("record before the file header".into()),
                        },
                        PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
                            // A new section starts a new set of interfaces.
                            self.interfaces.clear();
                            self.sections += 1;
                            self.big_endian = shb.big_endian();
                            Step::Skip
                        }
                        PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => match idb.ts_resolution() {
                            Some(units) => {
                                let speed = idb
                                    .options
                                    .iter()
                                    .find(|o| o.code == OptionCode::IfSpeed)
                                    .and_then(|o| o.value.get(..8))
                                    .and_then(|v| v.try_into().ok())
                                    .map(u64::from_le_bytes);
                                self.interfaces.push(Interface {
                                    link_type: LinkType(idb.linktype.0 as u32),
                                    snaplen: idb.snaplen,
                                    name: idb.if_name().and_then(|r| r.ok()).map(str::to_owned),
                                    speed_bps: speed,
                                    ts_units: units,
                                    ts_offset: idb.ts_offset(),
                                });
                                Step::Skip
                            }
                            None => Step::Corrupt(format!(
                                "interface {} has an invalid timestamp resolution {:#x}",
                                self.interfaces.len(),
                                idb.if_tsresol
                            )),
                        },
                        PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                            match self.interfaces.get(epb.if_id as usize) {
                                Some(ifc) => {
                                    let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                                    let ts = ifc.ts_ns(units);
                                    let data = epb.packet_data();
                                    self.buf.clear();
                                    self.buf.extend_from_slice(data);
                                    Step::Packet(ts, data.len() as u32, epb.origlen, ifc.link_type, epb.if_id)
                                }
                                None => Step::Corrupt(format!(
                                    "packet refers to interface {} but {} interfaces are described",
                                    epb.if_id,
                                    self.interfaces.len()
                                )),
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
                                None => Step::Corrupt("simple packet block before any interface".into()),
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
                Err(PcapError::Eof) => return Ok(None),
                Err(PcapError::Incomplete(_)) => Step::Refill,
                Err(PcapError::UnexpectedEof) => match self.implausible_length() {
                    Some(detail) => Step::Corrupt(detail),
                    None => {
                        return Err(CaptureError::Truncated {
                            offset: self.consumed(),
                            records: self.records,
                        })
                    }
                },
                Err(PcapError::BufferTooSmall) => Step::Grow,
                Err(PcapError::ReadError) => Step::Corrupt("read error".into()),
                Err(PcapError::HeaderNotRecognized) => Step::Corrupt("unrecognised header".into()),
                Err(PcapError::NomError(_, kind)) | Err(PcapError::OwnedNomError(_, kind)) => {
                    Step::Corrupt(format!("malformed record or block ({kind:?})"))
                }
            };
            match step {
                Step::Skip => {}
                Step::Packet(ts, caplen, len, lt, ifc) => {
                    self.records += 1;
                    self.last_ts = ts;
                    return Ok(Some((ts, caplen, len, lt, ifc)));
                }
                Step::Refill => {
                    if self.inner.as_mut().is_none_or(|i| i.refill().is_err()) {
                        return Err(self.corrupt("read error".into()));
                    }
                }
                Step::Grow => {
                    if let Some(detail) = self.implausible_length() {
                        return Err(self.corrupt(detail));
                    }
                    let next = self.capacity * 2;
                    if next > MAX_RECORD || !self.inner.as_mut().is_some_and(|i| i.grow(next)) {
                        return Err(self.corrupt(format!("a record is larger than {} MiB", MAX_RECORD >> 20)));
                    }
                    self.capacity = next;
                    if self.inner.as_mut().is_none_or(|i| i.refill().is_err()) {
                        return Err(self.corrupt("read error".into()));
                    }
                }
                Step::Corrupt(detail) => return Err(self.corrupt(detail)),
            }
        }
    }
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
