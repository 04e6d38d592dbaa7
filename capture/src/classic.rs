//! A zero-copy reader for classic pcap files: records are parsed in place in one large
//! buffer and handed out as slices of it, with no per-record copy. (pcapng goes through
//! `pcap-parser`.) This is the hot path of `report` on big files.

use crate::reader::Damage;
use std::io::{self, Read};

/// Records larger than this are treated as corruption.
const MAX_RECORD: usize = 64 << 20;
/// Read size.
const CHUNK: usize = 1 << 20;

/// Parsed file header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub link_type: u32,
    pub snaplen: u32,
    pub nanos: bool,
    pub big_endian: bool,
    /// 16, or 24 for the "modified" (Alexey Kuznetsov) format.
    pub record_header: usize,
}

impl Header {
    /// Nanoseconds in one unit of a record's fractional timestamp.
    fn frac_ns(&self) -> i64 {
        if self.nanos {
            1
        } else {
            1000
        }
    }
}

/// One record: timestamp, lengths, and where its bytes are in the buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordAt {
    pub ts_ns: i64,
    pub caplen: u32,
    pub len: u32,
    pub start: usize,
}

pub(crate) struct Classic {
    src: Box<dyn Read + Send>,
    pub(crate) buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
    pub(crate) header: Header,
    /// Records with no captured byte, skipped (not frames: nothing to decode).
    pub(crate) empty: u64,
    /// The most captured bytes a record may claim: the snap length, at least libpcap's
    /// 256 KiB, never past [`MAX_RECORD`] (more is corruption).
    limit: u32,
    /// Nanoseconds in one unit of a record's fractional timestamp ([`Header::frac_ns`]),
    /// worked out at open for the walk ([`Classic::next_whole`]).
    frac_ns: i64,
}

#[inline]
fn u32_at(b: &[u8], at: usize, be: bool) -> u32 {
    let w: [u8; 4] = b.get(at..at + 4).and_then(|s| s.try_into().ok()).unwrap_or([0; 4]);
    if be {
        u32::from_be_bytes(w)
    } else {
        u32::from_le_bytes(w)
    }
}

impl Classic {
    /// Read the 24-byte file header from `src`.
    pub(crate) fn open(src: Box<dyn Read + Send>, chunk: usize) -> Result<Classic, Damage> {
        let mut c = Classic {
            src,
            buf: vec![0; chunk.clamp(4096, CHUNK)],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            header: Header { link_type: 1, snaplen: 0, nanos: false, big_endian: false, record_header: 16 },
            empty: 0,
            limit: 0,
            frac_ns: 1000,
        };
        if !c.ensure(24) {
            return Err(Damage::CutOff(0));
        }
        let h = c.buf.get(..24).unwrap_or(&[]);
        let magic = u32_at(h, 0, false);
        let (nanos, be, modified) = match magic {
            0xA1B2_C3D4 => (false, false, false),
            0xD4C3_B2A1 => (false, true, false),
            0xA1B2_3C4D => (true, false, false),
            0x4D3C_B2A1 => (true, true, false),
            0xA1B2_CD34 => (false, false, true),
            _ => (false, true, true),
        };
        c.header = Header {
            link_type: u32_at(h, 20, be) & 0x0FFF_FFFF,
            snaplen: u32_at(h, 16, be),
            nanos,
            big_endian: be,
            record_header: if modified { 24 } else { 16 },
        };
        c.limit = c.header.snaplen.max(262_144).min(MAX_RECORD as u32);
        c.frac_ns = c.header.frac_ns();
        c.start = 24;
        c.offset = 24;
        Ok(c)
    }

    /// Make `n` bytes available from `start`; false when the input ends first. A read error
    /// ends the input too: the reader's stream keeps the error and reports it (see
    /// `reader::Tracked`), with the file's name and the records read.
    #[inline(never)]
    fn ensure(&mut self, n: usize) -> bool {
        while self.end - self.start < n {
            if self.eof {
                return false;
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() < n {
                self.buf.resize(n.max(self.buf.len() * 2), 0);
            }
            let space = self.buf.get_mut(self.end..).unwrap_or(&mut []);
            match self.src.read(space) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => self.eof = true,
            }
        }
        true
    }

    /// File offset of the next record (the first not read, after an error).
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record with captured bytes, `None` at the end of the input. Records of no
    /// byte are counted in `empty` and passed over here, in the reader's own loop: millions of
    /// them (a gzip of a few MB holds 134 million) cost the decompression and no more.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Result<Option<RecordAt>, Damage> {
        match self.next_whole() {
            Some(at) => Ok(Some(at)),
            None => self.next_slow(),
        }
    }

    /// The common record, read where it lies: a 16-byte header and captured bytes (at most
    /// the limit) that are whole in the buffer. The walk's step per frame (issue 39): one
    /// bounds check for the header, its four words in one load, the byte order and time unit
    /// worked out at open. `None` for anything else (the buffer's end, a record of no byte,
    /// one past the limit, the modified format), which [`Classic::next_slow`] reads as
    /// before: the same records, the same errors.
    #[inline(always)]
    fn next_whole(&mut self) -> Option<RecordAt> {
        if self.header.record_header != 16 {
            return None;
        }
        let rest = self.buf.get(self.start..self.end)?;
        let h = rest.first_chunk::<16>()?;
        let x = u128::from_le_bytes(*h);
        let word = |i: u32| {
            let w = (x >> (32 * i)) as u32;
            if self.header.big_endian {
                w.swap_bytes()
            } else {
                w
            }
        };
        let (ts_sec, ts_frac, caplen, len) = (word(0), word(1), word(2), word(3));
        let total = 16 + caplen as usize;
        if caplen == 0 || caplen > self.limit || rest.len() < total {
            return None;
        }
        let at = RecordAt {
            ts_ns: i64::from(ts_sec) * 1_000_000_000 + i64::from(ts_frac) * self.frac_ns,
            caplen,
            len,
            start: self.start + 16,
        };
        self.start += total;
        self.offset += total as u64;
        Some(at)
    }

    /// [`Classic::next`] past the common record: a read, an empty record, damage.
    #[cold]
    #[inline(never)]
    fn next_slow(&mut self) -> Result<Option<RecordAt>, Damage> {
        loop {
            match self.next_any()? {
                Some(at) if at.caplen == 0 => self.empty += 1,
                other => return Ok(other),
            }
        }
    }

    /// The next record, empty or not.
    #[inline(always)]
    fn next_any(&mut self) -> Result<Option<RecordAt>, Damage> {
        let hl = self.header.record_header;
        if self.end - self.start < hl && !self.ensure(hl) {
            if self.end == self.start {
                return Ok(None);
            }
            return Err(Damage::CutOff(self.offset));
        }
        let Some(h) = self.buf.get(self.start..).and_then(|b| b.first_chunk::<16>()) else {
            return Err(Damage::CutOff(self.offset));
        };
        let word = |at: usize| {
            let w = [h[at], h[at + 1], h[at + 2], h[at + 3]];
            if self.header.big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let (ts_sec, ts_frac, caplen, len) = (word(0), word(4), word(8), word(12));
        if caplen > self.limit {
            return Err(Damage::Corrupt(
                self.offset,
                format!("a record claims {caplen} captured bytes (snap length {})", self.header.snaplen),
            ));
        }
        let total = hl + caplen as usize;
        if self.end - self.start < total && !self.ensure(total) {
            return Err(Damage::CutOff(self.offset));
        }
        let frac_ns = if self.header.nanos { i64::from(ts_frac) } else { i64::from(ts_frac) * 1000 };
        let at = RecordAt {
            ts_ns: i64::from(ts_sec) * 1_000_000_000 + frac_ns,
            caplen,
            len,
            start: self.start + hl,
        };
        self.start += total;
        self.offset += total as u64;
        Ok(Some(at))
    }
}
