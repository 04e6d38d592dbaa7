//! A pcapng writer for generated traffic (samples, tests): one interface, nanosecond
//! timestamps, and the capture's statistics as an Interface Statistics Block, the way a
//! capture tool records its drops (crate::statistics reads them back).

use crate::reader::Interface;
use crate::writer::{push_block, push_idb, push_isb, push_shb};
use std::io::{self, Write};

/// Writes a pcapng of one interface into any [`Write`].
///
/// ```
/// use rocescope_capture::{CaptureReader, PcapNgWriter, Interface};
/// use rocescope_decoder::LinkType;
///
/// let ifc = Interface::live("eth0", LinkType::ETHERNET, 65535, None);
/// let mut w = PcapNgWriter::new(Vec::new(), &ifc)?;
/// w.write(1_000, &[0u8; 60], 60)?;
/// w.statistics(2_000, [Some(3), Some(1), Some(1)])?; // received, interface and OS drops
/// let bytes = w.finish()?;
/// let mut r = CaptureReader::from_read(std::io::Cursor::new(bytes), "x.pcapng".as_ref())?;
/// while r.next_record()?.is_some() {}
/// let s = &r.interface_stats()[0];
/// assert_eq!((s.received, s.if_dropped, s.os_dropped, s.dropped()), (Some(3), Some(1), Some(1), Some(2)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PcapNgWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapNgWriter<W> {
    /// Write the section header and the interface's description.
    pub fn new(mut out: W, ifc: &Interface) -> io::Result<Self> {
        let mut h = Vec::new();
        push_shb(&mut h);
        push_idb(&mut h, ifc);
        out.write_all(&h)?;
        Ok(PcapNgWriter { out, snaplen: ifc.snaplen })
    }

    /// Write one frame captured at `ts_ns` whose wire length was `len` (at least its bytes),
    /// cut at the snap length as a capture would.
    pub fn write(&mut self, ts_ns: i64, data: &[u8], len: u32) -> io::Result<()> {
        let keep = data.len().min(self.snaplen as usize);
        let data = data.get(..keep).unwrap_or(data);
        let ts = u64::try_from(ts_ns).unwrap_or(0);
        let mut epb = Vec::with_capacity(20 + keep + 3);
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(keep as u32).to_le_bytes());
        epb.extend_from_slice(&len.max(keep as u32).to_le_bytes());
        epb.extend_from_slice(data);
        epb.resize(epb.len() + keep.div_ceil(4) * 4 - keep, 0);
        let mut block = Vec::with_capacity(epb.len() + 12);
        push_block(&mut block, 6, &epb);
        self.out.write_all(&block)
    }

    /// Write an Interface Statistics Block at `ts_ns`: `[isb_ifrecv, isb_ifdrop,
    /// isb_osdrop]`, each option written when given (they are all optional).
    pub fn statistics(&mut self, ts_ns: i64, counts: [Option<u64>; 3]) -> io::Result<()> {
        let mut block = Vec::new();
        push_isb(&mut block, 0, ts_ns, counts);
        self.out.write_all(&block)
    }

    /// Flush and return the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
