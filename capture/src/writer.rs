//! Writing captures: pcapng (default) or classic pcap, nanosecond timestamps, to a file or
//! standard output, with dumpcap-style ring buffers (rotate by size and/or time, keep the
//! newest N files).
//!
//! Records are buffered whole and written whole. If a write fails (a full disk), the file is
//! cut back to the last complete record, so every file stays valid; the records that could
//! not be written are counted, not silently lost.

use crate::counters::CaptureStats;
use crate::reader::{Interface, Record};
use crate::time::{now_ns, utc_compact};
use rocescope_decoder::LinkType;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Buffered bytes that trigger a write.
const FLUSH_AT: usize = 1 << 20;

/// Output container format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// pcapng with an interface description block per interface.
    PcapNg,
    /// Classic pcap, nanosecond magic.
    Pcap,
}

/// Where and how to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkOptions {
    /// Output path; `-` is standard output.
    pub path: PathBuf,
    /// Container format.
    pub format: FileFormat,
    /// Start a new file once this many bytes are written (`-C`).
    pub rotate_bytes: Option<u64>,
    /// Start a new file after this long (`-G`).
    pub rotate_every: Option<Duration>,
    /// Keep only the newest N files (`-W`).
    pub keep_files: Option<usize>,
    /// The snap length the frames were cut to (`-s`), declared in the file header and each
    /// interface where it is below what the input declared: a capture cut to 128 bytes says
    /// 128, not the input's snap length (capinfos reads it from there).
    pub snaplen: Option<u32>,
}

impl SinkOptions {
    /// The snap length to declare for an input that declared `snap` (0: not known).
    fn declared(&self, snap: u32) -> u32 {
        match self.snaplen {
            Some(s) if snap == 0 || s < snap => s,
            _ => snap,
        }
    }

    /// One file (or stdout) at `path` in `format`, no rotation.
    pub fn new(path: &Path, format: FileFormat) -> Self {
        SinkOptions {
            path: path.to_path_buf(),
            format,
            rotate_bytes: None,
            rotate_every: None,
            keep_files: None,
            snaplen: None,
        }
    }

    fn rotating(&self) -> bool {
        self.rotate_bytes.is_some() || self.rotate_every.is_some()
    }
}

enum Out {
    File(File),
    Stdout(io::Stdout),
}

/// What a sink wrote. With a ring buffer (`-W`), `written` is every record written, in the
/// files kept plus the files rotated away: `written == kept_records() + removed_records`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkSummary {
    /// Records written and flushed, to every file (also those `-W` deleted since).
    pub written: u64,
    /// Records that could not be written (the write failed).
    pub not_written: u64,
    /// Files created, oldest first (those deleted by `-W` excluded).
    pub files: Vec<PathBuf>,
    /// Records in each of `files`, in the same order.
    pub file_records: Vec<u64>,
    /// Files created and then deleted by `-W` to keep the newest N (the oldest ones).
    pub removed_files: u64,
    /// Records those files held.
    pub removed_records: u64,
    /// Files `-W` meant to delete but could not, with why (they are still on disk, and
    /// counted in `removed_files`).
    pub removal_errors: Vec<String>,
}

impl SinkSummary {
    /// Records in the files kept.
    pub fn kept_records(&self) -> u64 {
        self.file_records.iter().sum()
    }
}

/// A capture sink.
pub struct CaptureSink {
    opts: SinkOptions,
    interfaces: Vec<Interface>,
    out: Out,
    /// Bytes of whole records (and headers) known to be on disk in the current file.
    committed: u64,
    buf: Vec<u8>,
    /// Bytes at the start of `buf` that are a file header (not a record).
    header_len: usize,
    /// Interface blocks written to the current file (pcapng).
    idbs_in_file: usize,
    /// End offset in `buf` of each buffered record.
    bounds: Vec<usize>,
    written: u64,
    not_written: u64,
    file_no: u32,
    /// Files kept, oldest first, with the records written to each.
    files: VecDeque<(PathBuf, u64)>,
    /// Files deleted by `-W`, the records they held, and the deletions that failed.
    removed_files: u64,
    removed_records: u64,
    removal_errors: Vec<String>,
    opened_at: Instant,
    failed: Option<(io::ErrorKind, String)>,
    /// Classic pcap: the link type its header states, when the source named it.
    pcap_link: Option<LinkType>,
}

impl std::fmt::Debug for CaptureSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureSink").field("opts", &self.opts).field("written", &self.written).finish()
    }
}

fn is_stdout(p: &Path) -> bool {
    p == Path::new("-")
}

/// Most interfaces a written pcapng describes (a guard against a damaged interface id).
const MAX_INTERFACES: usize = 4096;

/// Append an Interface Description Block for `i` (nanosecond timestamps).
/// A little-endian section header block naming rocescope as the writer.
pub(crate) fn push_shb(buf: &mut Vec<u8>) {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    push_option(&mut shb, 4, concat!("rocescope ", env!("CARGO_PKG_VERSION")).as_bytes()); // shb_userappl
    end_options(&mut shb);
    push_block(buf, 0x0A0D_0D0A, &shb);
}

pub(crate) fn push_idb(buf: &mut Vec<u8>, i: &Interface) {
    let mut idb = Vec::new();
    idb.extend_from_slice(&(i.link_type.0 as u16).to_le_bytes());
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&i.snaplen.to_le_bytes());
    if let Some(n) = &i.name {
        push_option(&mut idb, 2, n.as_bytes()); // if_name
    }
    push_option(&mut idb, 9, &[9]); // if_tsresol: nanoseconds
    if let Some(s) = i.speed_bps {
        push_option(&mut idb, 8, &s.to_le_bytes()); // if_speed
    }
    end_options(&mut idb);
    push_block(buf, 1, &idb);
}

impl CaptureSink {
    /// Create the sink and its first file. `interfaces` describe the capture (pcapng IDBs);
    /// classic pcap takes the first one's link type and snap length.
    pub fn create(opts: SinkOptions, interfaces: &[Interface]) -> io::Result<Self> {
        if is_stdout(&opts.path) && opts.rotating() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot rotate files when writing to standard output",
            ));
        }
        if opts.keep_files == Some(0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "-W needs at least 1 file"));
        }
        let interfaces = interfaces
            .iter()
            .map(|i| {
                let mut i = i.clone();
                i.snaplen = opts.declared(i.snaplen);
                i
            })
            .collect();
        let mut sink = CaptureSink {
            out: Out::Stdout(io::stdout()),
            opts,
            interfaces,
            committed: 0,
            buf: Vec::with_capacity(FLUSH_AT + 65536),
            header_len: 0,
            idbs_in_file: 0,
            bounds: Vec::with_capacity(4096),
            written: 0,
            not_written: 0,
            file_no: 0,
            files: VecDeque::new(),
            removed_files: 0,
            removed_records: 0,
            removal_errors: Vec::new(),
            opened_at: Instant::now(),
            failed: None,
            pcap_link: None,
        };
        sink.open_next()?;
        Ok(sink)
    }

    fn next_path(&self) -> PathBuf {
        if !self.opts.rotating() {
            return self.opts.path.clone();
        }
        // dumpcap style: STEM_NNNNN_YYYYmmddHHMMSS.EXT
        let p = &self.opts.path;
        let stem = p.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "capture".into());
        let ext = p.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let name = format!("{stem}_{:05}_{}{ext}", self.file_no, utc_compact(now_ns()));
        p.with_file_name(name)
    }

    fn open_next(&mut self) -> io::Result<()> {
        self.file_no += 1;
        if is_stdout(&self.opts.path) {
            self.out = Out::Stdout(io::stdout());
        } else {
            let path = self.next_path();
            let file = self.create_file(&path)?;
            self.out = Out::File(file);
            self.files.push_back((path, 0));
        }
        self.committed = 0;
        self.opened_at = Instant::now();
        self.write_file_header();
        self.header_len = self.buf.len();
        if let Err(e) = self.flush() {
            // Not even the file header fits (a full disk from the start): a 0-byte file would
            // pass for an empty capture, so it goes, and the message says nothing was written.
            let what = match (&self.out, self.files.back()) {
                (Out::File(_), Some((path, _))) if self.committed == 0 => {
                    let path = path.clone();
                    let plain = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
                    match plain.then(|| std::fs::remove_file(&path)) {
                        Some(Ok(())) => {
                            self.files.pop_back();
                            format!("; nothing was written, so {} was removed", crate::text::path(&path))
                        }
                        Some(Err(r)) => format!(
                            "; nothing was written: {} is empty (and cannot be removed: {r})",
                            crate::text::path(&path)
                        ),
                        None => String::from("; nothing was written"),
                    }
                }
                _ => String::from("; nothing was written"),
            };
            let e = io::Error::new(e.kind(), format!("{e}{what}"));
            self.failed = Some((e.kind(), e.to_string()));
            return Err(e);
        }
        // A ring (-W) lets its oldest file go only once the new one holds its header.
        if let Some(keep) = self.opts.keep_files {
            while self.files.len() > keep {
                if let Some((old, records)) = self.files.pop_front() {
                    self.removed_files += 1;
                    self.removed_records += records;
                    if let Err(e) = std::fs::remove_file(&old) {
                        self.removal_errors.push(format!("cannot delete {}: {e}", crate::text::path(&old)));
                    }
                }
            }
        }
        Ok(())
    }

    /// Create the next output file. `-w FILE` itself is opened as the user named it (a link
    /// followed, a file there truncated, as tcpdump does). A ring's files have names anyone
    /// can guess (`STEM_NNNNN_TIME.EXT`), so each is created only where nothing is yet
    /// (`O_EXCL`): a symlink planted at the name is not followed and a file there, another
    /// run's or an input's, is not overwritten (docs/reliability.md).
    fn create_file(&self, path: &Path) -> io::Result<File> {
        let name = crate::text::path(path);
        if !self.opts.rotating() {
            return File::create(path)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot create {name}: {e}")));
        }
        std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
            let why = if e.kind() == io::ErrorKind::AlreadyExists {
                "something is already there (a file or a link), and a ring file never replaces one"
                    .to_string()
            } else {
                e.to_string()
            };
            io::Error::new(e.kind(), format!("cannot create the ring file {name}: {why}"))
        })
    }

    /// The current output, as messages name it.
    fn current_name(&self) -> String {
        match (&self.out, self.files.back()) {
            (Out::File(_), Some((path, _))) => crate::text::path(path),
            _ => String::from("standard output"),
        }
    }

    fn write_file_header(&mut self) {
        match self.opts.format {
            FileFormat::Pcap => {
                let (lt, snap) = self
                    .interfaces
                    .first()
                    .map_or((LinkType::ETHERNET, self.opts.declared(262_144)), |i| (i.link_type, i.snaplen));
                self.pcap_link = self.interfaces.first().map(|i| i.link_type);
                self.buf.extend_from_slice(&0xA1B2_3C4Du32.to_le_bytes());
                self.buf.extend_from_slice(&2u16.to_le_bytes());
                self.buf.extend_from_slice(&4u16.to_le_bytes());
                self.buf.extend_from_slice(&[0; 8]);
                self.buf.extend_from_slice(&snap.to_le_bytes());
                self.buf.extend_from_slice(&lt.0.to_le_bytes());
            }
            FileFormat::PcapNg => {
                push_shb(&mut self.buf);
                // Interfaces not known yet (a pcapng being read describes them as it goes)
                // get their block before their first record: see `write`.
                for i in &self.interfaces {
                    push_idb(&mut self.buf, i);
                }
                self.idbs_in_file = self.interfaces.len();
            }
        }
    }

    /// Append one record; rotates first when the current file is full or old enough.
    pub fn write(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if let Some((kind, msg)) = &self.failed {
            self.not_written += 1;
            return Err(io::Error::new(*kind, msg.clone()));
        }
        if self.opts.rotating() && self.due_for_rotation() {
            self.flush()?;
            self.open_next()?;
        }
        let ts = u64::try_from(rec.ts_ns).unwrap_or(0);
        match self.opts.format {
            FileFormat::Pcap if self.pcap_link.is_some_and(|l| l != rec.link_type) => {
                self.not_written += 1;
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a frame of link type {} cannot go into a classic pcap of link type {} (one link type per file): write pcapng instead (without --pcap)",
                        rec.link_type.0,
                        self.pcap_link.map_or(0, |l| l.0)
                    ),
                ));
            }
            FileFormat::Pcap => {
                self.buf.extend_from_slice(&((ts / 1_000_000_000) as u32).to_le_bytes());
                self.buf.extend_from_slice(&((ts % 1_000_000_000) as u32).to_le_bytes());
                self.buf.extend_from_slice(&(rec.data.len() as u32).to_le_bytes());
                self.buf.extend_from_slice(&rec.len.to_le_bytes());
                self.buf.extend_from_slice(rec.data);
            }
            FileFormat::PcapNg => {
                let want = rec.interface as usize + 1;
                if want > MAX_INTERFACES {
                    self.not_written += 1;
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "interface {} is beyond the {MAX_INTERFACES} a file may describe",
                            rec.interface
                        ),
                    ));
                }
                // Describe each interface before its first record, from what the source said
                // or, failing that, from the record itself.
                while self.idbs_in_file < want {
                    let i = self.idbs_in_file;
                    if self.interfaces.len() <= i {
                        let mut ifc =
                            Interface::live("", rec.link_type, self.opts.declared(262_144), rec.link_bps);
                        ifc.name = None;
                        self.interfaces.push(ifc);
                    }
                    if let Some(ifc) = self.interfaces.get(i) {
                        push_idb(&mut self.buf, ifc);
                    }
                    self.idbs_in_file += 1;
                }
                let padded = rec.data.len().div_ceil(4) * 4;
                let total = (32 + padded) as u32;
                self.buf.extend_from_slice(&6u32.to_le_bytes());
                self.buf.extend_from_slice(&total.to_le_bytes());
                self.buf.extend_from_slice(&rec.interface.to_le_bytes());
                self.buf.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
                self.buf.extend_from_slice(&(ts as u32).to_le_bytes());
                self.buf.extend_from_slice(&(rec.data.len() as u32).to_le_bytes());
                self.buf.extend_from_slice(&rec.len.to_le_bytes());
                self.buf.extend_from_slice(rec.data);
                self.buf.resize(self.buf.len() + padded - rec.data.len(), 0);
                self.buf.extend_from_slice(&total.to_le_bytes());
            }
        }
        self.bounds.push(self.buf.len());
        if self.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }

    fn due_for_rotation(&self) -> bool {
        let size = self.committed + self.buf.len() as u64;
        let by_size = self.opts.rotate_bytes.is_some_and(|b| size >= b);
        let by_time = self.opts.rotate_every.is_some_and(|d| self.opened_at.elapsed() >= d);
        by_size || by_time
    }

    /// Write out buffered records. If that fails part-way (a full disk), the file is cut
    /// back to its last complete record, then the records are written one by one until the
    /// first that does not fit; the rest are counted as not written.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let res = match &mut self.out {
            Out::File(f) => f.write_all(&self.buf),
            Out::Stdout(s) => s.write_all(&self.buf).and_then(|()| s.flush()),
        };
        let outcome = match res {
            Ok(()) => {
                self.committed += self.buf.len() as u64;
                self.count_written(self.bounds.len() as u64);
                Ok(())
            }
            Err(e) => {
                let kept = match &mut self.out {
                    Out::File(f) => salvage(f, self.committed, &self.buf, self.header_len, &self.bounds),
                    // Bytes already in a pipe cannot be taken back.
                    Out::Stdout(_) => (self.committed, 0),
                };
                self.committed = kept.0;
                self.count_written(kept.1);
                self.not_written += self.bounds.len() as u64 - kept.1;
                let e = io::Error::new(e.kind(), format!("cannot write {}: {e}", self.current_name()));
                self.failed = Some((e.kind(), e.to_string()));
                Err(e)
            }
        };
        self.buf.clear();
        self.bounds.clear();
        self.header_len = 0;
        outcome
    }

    /// Count `n` records as written, to the current file.
    fn count_written(&mut self, n: u64) {
        self.written += n;
        if let Some((_, records)) = self.files.back_mut() {
            *records += n;
        }
    }

    /// The write error that stopped this sink, if any.
    pub fn failure(&self) -> Option<io::Error> {
        self.failed.as_ref().map(|(k, m)| io::Error::new(*k, m.clone()))
    }

    /// Flush, add the capture statistics (pcapng interface statistics block), and close.
    pub fn finish(mut self, stats: Option<CaptureStats>) -> (SinkSummary, io::Result<()>) {
        let mut res = self.flush();
        if res.is_ok() && self.failed.is_none() {
            if let (FileFormat::PcapNg, Some(s)) = (self.opts.format, stats) {
                let counts = [Some(s.received), Some(s.if_dropped), Some(s.kernel_dropped)];
                push_isb(&mut self.buf, 0, now_ns(), counts);
                // Not a record: with no bounds pushed, the counters stay as they are.
                res = self.flush();
            }
        }
        let summary = SinkSummary {
            written: self.written,
            not_written: self.not_written,
            files: self.files.iter().map(|(p, _)| p.clone()).collect(),
            file_records: self.files.iter().map(|(_, n)| *n).collect(),
            removed_files: self.removed_files,
            removed_records: self.removed_records,
            removal_errors: std::mem::take(&mut self.removal_errors),
        };
        (summary, res)
    }

    /// Records written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

/// After a failed write: cut `f` back to `committed`, then write the header (if buffered)
/// and the records one at a time until one fails. Returns the new committed length and the
/// number of records written.
fn salvage(f: &mut File, committed: u64, buf: &[u8], header_len: usize, bounds: &[usize]) -> (u64, u64) {
    let cut = |f: &mut File, len: u64| {
        let _ = f.set_len(len);
        let _ = f.seek(SeekFrom::Start(len));
    };
    cut(f, committed);
    let mut done = committed;
    let mut start = 0;
    if header_len > 0 {
        match buf.get(..header_len).map(|h| f.write_all(h)) {
            Some(Ok(())) => {
                done += header_len as u64;
                start = header_len;
            }
            _ => {
                cut(f, committed);
                return (committed, 0);
            }
        }
    }
    let mut records = 0;
    for &end in bounds {
        match buf.get(start..end).map(|r| f.write_all(r)) {
            Some(Ok(())) => {
                done += (end - start) as u64;
                records += 1;
                start = end;
            }
            _ => {
                cut(f, done);
                break;
            }
        }
    }
    (done, records)
}

/// An Interface Statistics Block for interface `if_id` at `ts_ns` (nanosecond resolution,
/// as every interface this crate describes): `[isb_ifrecv, isb_ifdrop, isb_osdrop]`, each
/// written when known (libpcap's `ps_recv`, `ps_ifdrop`, `ps_drop`).
pub(crate) fn push_isb(buf: &mut Vec<u8>, if_id: u32, ts_ns: i64, [recv, ifdrop, osdrop]: [Option<u64>; 3]) {
    let ts = u64::try_from(ts_ns).unwrap_or(0);
    let mut isb = Vec::new();
    isb.extend_from_slice(&if_id.to_le_bytes());
    isb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
    isb.extend_from_slice(&(ts as u32).to_le_bytes());
    for (code, v) in [(4, recv), (5, ifdrop), (7, osdrop)] {
        if let Some(v) = v {
            push_option(&mut isb, code, &v.to_le_bytes());
        }
    }
    end_options(&mut isb);
    push_block(buf, 5, &isb);
}

pub(crate) fn push_option(buf: &mut Vec<u8>, code: u16, value: &[u8]) {
    buf.extend_from_slice(&code.to_le_bytes());
    buf.extend_from_slice(&(value.len() as u16).to_le_bytes());
    buf.extend_from_slice(value);
    buf.resize(buf.len() + value.len().div_ceil(4) * 4 - value.len(), 0);
}

pub(crate) fn end_options(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&[0, 0, 0, 0]);
}

pub(crate) fn push_block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let total = (12 + body.len()) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&total.to_le_bytes());
}

/// A classic pcap writer for generated traffic (samples, tests): nanosecond timestamps.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Write the file header and return the writer.
    pub fn new(mut out: W, link_type: LinkType, snaplen: u32) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xA1B2_3C4Du32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&link_type.0.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, snaplen })
    }

    /// Write one frame captured at `ts_ns` whose wire length was `len` (at least its bytes);
    /// bytes beyond the snap length are cut, as a capture would.
    pub fn write(&mut self, ts_ns: i64, data: &[u8], len: u32) -> io::Result<()> {
        let keep = data.len().min(self.snaplen as usize);
        let data = data.get(..keep).unwrap_or(data);
        let ts = u64::try_from(ts_ns).unwrap_or(0);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ts / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ts % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(keep as u32).to_le_bytes());
        h[12..16].copy_from_slice(&len.max(keep as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)
    }

    /// Flush and return the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::CaptureReader;

    fn records_in(path: &Path) -> u64 {
        let mut r = CaptureReader::open(path).expect("a written file opens");
        let mut n = 0;
        while r.next_record().expect("reads to the end").is_some() {
            n += 1;
        }
        n
    }

    #[test]
    fn the_ring_summary_counts_what_was_kept_and_what_was_rotated_away() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ifc = Interface::live("eth0", LinkType::ETHERNET, 262_144, None);
        let data = vec![0u8; 1000];
        let rec = |i: i64| Record {
            ts_ns: 1_000_000_000 + i,
            caplen: 1000,
            len: 1000,
            link_type: LinkType::ETHERNET,
            interface: 0,
            link_bps: None,
            point: 0,
            data: &data,
            empty_before: 0,
        };
        for format in [FileFormat::PcapNg, FileFormat::Pcap] {
            // 5 kB files, keep 3: 40 records of 1 kB make about 9 files.
            let mut opts = SinkOptions::new(&dir.path().join(format!("ring-{format:?}.cap")), format);
            opts.rotate_bytes = Some(5_000);
            opts.keep_files = Some(3);
            let mut sink = CaptureSink::create(opts, std::slice::from_ref(&ifc)).expect("sink");
            for i in 0..40 {
                sink.write(&rec(i)).expect("write");
            }
            let (s, res) = sink.finish(None);
            res.expect("finish");
            assert_eq!(s.written, 40);
            assert_eq!(s.files.len(), 3);
            assert_eq!(s.file_records.len(), 3);
            let on_disk: Vec<u64> = s.files.iter().map(|f| records_in(f)).collect();
            assert_eq!(s.file_records, on_disk, "{format:?}: the counts are what the files hold");
            assert_eq!(s.kept_records() + s.removed_records, s.written);
            assert!(s.removed_files >= 5, "{format:?}: {s:?}");
            assert!(s.removal_errors.is_empty(), "{:?}", s.removal_errors);
            // Every file made is either kept or counted as removed.
            let prefix = format!("ring-{format:?}_");
            let made = std::fs::read_dir(dir.path())
                .expect("dir")
                .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().starts_with(&prefix)))
                .count();
            assert_eq!(made, 3);
            let last =
                s.files.last().expect("a file").file_name().expect("name").to_string_lossy().to_string();
            let number: u64 = last[prefix.len()..][..5].parse().expect("numbered");
            assert_eq!(number, s.removed_files + 3, "{last}");
        }
    }

    #[test]
    fn without_a_ring_nothing_is_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = vec![0u8; 60];
        let rec = Record {
            ts_ns: 1,
            caplen: 60,
            len: 60,
            link_type: LinkType::ETHERNET,
            interface: 0,
            link_bps: None,
            point: 0,
            data: &data,
            empty_before: 0,
        };
        let path = dir.path().join("one.pcapng");
        let mut sink = CaptureSink::create(SinkOptions::new(&path, FileFormat::PcapNg), &[]).expect("sink");
        for _ in 0..7 {
            sink.write(&rec).expect("write");
        }
        let (s, res) = sink.finish(None);
        res.expect("finish");
        assert_eq!((s.written, s.removed_files, s.removed_records), (7, 0, 0));
        assert_eq!(s.files, std::slice::from_ref(&path));
        assert_eq!(s.file_records, [7]);
        assert_eq!(records_in(&path), 7);
    }
}
