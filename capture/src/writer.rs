//! Writing classic pcap files with nanosecond timestamps.

use pcap_parser::{LegacyPcapBlock, Linktype, PcapHeader, ToVec};
use rocescope_decoder::LinkType;
use std::io::{self, Write};

/// Magic for nanosecond-resolution classic pcap.
const MAGIC_NANOS: u32 = 0xA1B2_3C4D;

/// A classic pcap writer (nanosecond timestamps, little-endian).
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Write the file header and return the writer.
    pub fn new(mut out: W, link_type: LinkType, snaplen: u32) -> io::Result<Self> {
        let header = PcapHeader {
            magic_number: MAGIC_NANOS,
            version_major: 2,
            version_minor: 4,
            thiszone: 0,
            sigfigs: 0,
            snaplen,
            network: Linktype(link_type.0 as i32),
        };
        out.write_all(&header.to_vec_raw().map_err(|e| io::Error::other(format!("{e:?}")))?)?;
        Ok(PcapWriter { out, snaplen })
    }

    /// Write one frame captured at `ts_ns` whose wire length was `len` (at least its bytes);
    /// bytes beyond the snap length are cut, as a capture would.
    pub fn write(&mut self, ts_ns: i64, data: &[u8], len: u32) -> io::Result<()> {
        let keep = data.len().min(self.snaplen as usize);
        let data = data.get(..keep).unwrap_or(data);
        let ts = ts_ns.max(0) as u64;
        let block = LegacyPcapBlock {
            ts_sec: (ts / 1_000_000_000) as u32,
            ts_usec: (ts % 1_000_000_000) as u32,
            caplen: keep as u32,
            origlen: len.max(keep as u32),
            data,
        };
        let bytes = block.to_vec_raw().map_err(|e| io::Error::other(format!("{e:?}")))?;
        self.out.write_all(&bytes)
    }

    /// Flush and return the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
