//! One packet stream over every source: a capture file (or stdin), several merged files,
//! or (with the `live` feature) a live interface.

use crate::counters::CaptureStats;
use crate::error::CaptureError;
#[cfg(feature = "live")]
use crate::live::{LiveCapture, LiveNext, LiveOptions};
use crate::merge::Merged;
use crate::reader::{CaptureReader, Interface, Record};
use crate::sflow_listen::{ListenNext, SflowListener};
use crate::statistics::FileStats;
use std::path::Path;

/// A source of frames.
#[derive(Debug)]
pub enum Source {
    /// A pcap/pcapng file or stream.
    File(CaptureReader),
    /// A live interface (feature `live`).
    #[cfg(feature = "live")]
    Live(LiveCapture),
    /// Several files merged by timestamp, each record tagged with its capture point.
    Merged(Merged),
    /// A live sFlow collector socket: each datagram a frame to UDP port 6343.
    Sflow(SflowListener),
}

/// A file-like source read record by record.
pub(crate) trait Records {
    /// The next record, or `None` at the end.
    fn next_one(&mut self) -> Result<Option<Record<'_>>, CaptureError>;
}

impl Records for CaptureReader {
    #[inline]
    fn next_one(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        self.next_record()
    }
}

impl Records for Merged {
    fn next_one(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        Ok(self.next_record())
    }
}

/// Up to `max` records of `src` to `f` (which returns false to stop early). Generic over
/// `f`, so that the record walk and the caller's per-frame work compile into one loop (no
/// call through a pointer per frame: issue 39).
#[inline]
pub(crate) fn batch<F: FnMut(&Record<'_>) -> bool>(
    src: &mut impl Records,
    max: usize,
    mut f: F,
) -> Result<Batch, CaptureError> {
    let mut n = 0;
    while n < max {
        match src.next_one()? {
            Some(rec) => {
                n += 1;
                if !f(&rec) {
                    break;
                }
            }
            None if n == 0 => return Ok(Batch::End),
            None => break,
        }
    }
    Ok(Batch::Frames(n))
}

/// What a batch read gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// This many frames were handed over.
    Frames(usize),
    /// Nothing for now (live only).
    Idle,
    /// The end of a file.
    End,
}

/// What the source gave.
#[derive(Debug)]
pub enum Next<'a> {
    /// A frame.
    Packet(Record<'a>),
    /// Nothing for now (live only): a chance to check signals, deadlines and counters.
    Idle,
    /// The end of a file.
    End,
}

impl Source {
    /// Open a capture file (`-` for stdin): the same stream as [`CaptureReader::open`],
    /// behind the interface live captures share.
    ///
    /// ```
    /// use rocescope_capture::{Batch, Next, Record, Source};
    /// use std::path::Path;
    ///
    /// let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
    /// let mut source = Source::file(path)?;
    /// assert!(!source.is_live());
    /// // Frame by frame...
    /// let Next::Packet(first) = source.next_frame()? else { panic!("no first frame") };
    /// assert_eq!(first.len, 1098);
    /// // ...or in batches, for the rest.
    /// let mut bytes = 0u64;
    /// let mut batches = Vec::new();
    /// loop {
    ///     match source.for_each_batch(64, |rec: &Record<'_>| {
    ///         bytes += u64::from(rec.len);
    ///         true
    ///     })? {
    ///         Batch::Frames(n) => batches.push(n),
    ///         Batch::End => break,
    ///         Batch::Idle => {} // live captures only
    ///     }
    /// }
    /// assert_eq!(batches, [64, 64, 53]);
    /// assert_eq!(bytes, 159_450 - 1098); // wire bytes of all but the first frame
    /// assert!(source.stats().is_none()); // drop counters are for live captures
    /// # Ok::<(), rocescope_capture::CaptureError>(())
    /// ```
    pub fn file(path: &Path) -> Result<Self, CaptureError> {
        CaptureReader::open(path).map(Source::File)
    }

    /// Open a live capture (feature `live`).
    #[cfg(feature = "live")]
    pub fn live(opts: &LiveOptions) -> Result<Self, CaptureError> {
        LiveCapture::open(opts).map(Source::Live)
    }

    /// Listen for sFlow datagrams on `addr` (a std UDP socket; no libpcap).
    pub fn sflow(addr: std::net::SocketAddr) -> Result<Self, CaptureError> {
        SflowListener::bind(addr).map(Source::Sflow)
    }

    /// True for a live sFlow collector socket.
    pub fn is_sflow(&self) -> bool {
        matches!(self, Source::Sflow(_))
    }

    /// Open one file, or several merged by timestamp (each a capture point).
    pub fn files(paths: &[std::path::PathBuf]) -> Result<Self, CaptureError> {
        match paths {
            [one] => Self::file(one),
            _ => Merged::open(paths).map(Source::Merged),
        }
    }

    /// Names of the capture points (one for a single source, which the caller names).
    pub fn point_names(&self) -> Option<Vec<String>> {
        match self {
            Source::Merged(m) => Some(m.point_names()),
            _ => None,
        }
    }

    /// Merged files not in time order (name, records earlier than the one before).
    pub fn out_of_order(&self) -> Vec<(String, u64)> {
        match self {
            Source::Merged(m) => m.out_of_order(),
            _ => Vec::new(),
        }
    }

    /// Errors of merged files that failed part-way while the others were read on.
    pub fn take_errors(&mut self) -> Vec<CaptureError> {
        match self {
            Source::Merged(m) => m.take_errors(),
            _ => Vec::new(),
        }
    }

    /// True for live captures (an sFlow socket included).
    pub fn is_live(&self) -> bool {
        if let Source::Sflow(_) = self {
            return true;
        }
        #[cfg(feature = "live")]
        if let Source::Live(_) = self {
            return true;
        }
        false
    }

    /// The next frame, an idle tick, or the end.
    pub fn next_frame(&mut self) -> Result<Next<'_>, CaptureError> {
        match self {
            Source::File(r) => Ok(r.next_record()?.map_or(Next::End, Next::Packet)),
            Source::Merged(m) => Ok(m.next_record().map_or(Next::End, Next::Packet)),
            Source::Sflow(l) => Ok(match l.next_frame()? {
                ListenNext::Packet(p) => Next::Packet(p),
                ListenNext::Idle => Next::Idle,
            }),
            #[cfg(feature = "live")]
            Source::Live(l) => Ok(match l.next_frame()? {
                LiveNext::Packet(p) => Next::Packet(p),
                LiveNext::Idle => Next::Idle,
            }),
        }
    }

    /// Hand the frames available now (at most `max`) to `f`; `f` returns false to stop
    /// early. Live captures pass libpcap's buffer straight through (no copy) and wait up to
    /// the poll interval when idle; files hand over up to `max` records.
    #[inline]
    pub fn for_each_batch<F: FnMut(&Record<'_>) -> bool>(
        &mut self,
        max: usize,
        mut f: F,
    ) -> Result<Batch, CaptureError> {
        match self {
            #[cfg(feature = "live")]
            Source::Live(l) => Ok(match l.dispatch(max, &mut f)? {
                0 => Batch::Idle,
                n => Batch::Frames(n),
            }),
            Source::File(r) => r.walk(max, f),
            Source::Merged(m) => batch(m, max, f),
            Source::Sflow(l) => Ok(match l.dispatch(max, &mut f)? {
                0 => Batch::Idle,
                n => Batch::Frames(n),
            }),
        }
    }

    /// Interfaces, as a pcapng writer should describe them.
    pub fn interfaces(&self) -> Vec<Interface> {
        match self {
            Source::File(r) => r.interfaces().to_vec(),
            Source::Merged(m) => m.interfaces().to_vec(),
            Source::Sflow(l) => vec![l.interface()],
            #[cfg(feature = "live")]
            Source::Live(l) => vec![l.interface().clone()],
        }
    }

    /// Records with no captured byte the files held, passed over (not frames): none for live
    /// sources.
    pub fn empty_records(&self) -> u64 {
        match self {
            Source::File(r) => r.empty_records(),
            Source::Merged(m) => m.empty_records(),
            _ => 0,
        }
    }

    /// The capture counters the files recorded (pcapng Interface Statistics Blocks read so
    /// far: read to the end first), by capture point; none for live sources.
    pub fn file_stats(&self) -> Vec<FileStats> {
        match self {
            Source::File(r) => {
                let f = FileStats {
                    point: 0,
                    interfaces: r.interface_stats().to_vec(),
                    damaged: r.damaged_stats(),
                };
                if f.is_empty() {
                    Vec::new()
                } else {
                    vec![f]
                }
            }
            Source::Merged(m) => m.file_stats(),
            _ => Vec::new(),
        }
    }

    /// Bytes read so far: of the files or stream as given ([`CaptureReader::bytes_read`],
    /// compressed bytes for gzip), or the captured bytes a live source handed out. Counted
    /// per read, not per record; a progress display reads it between batches.
    pub fn bytes_read(&self) -> u64 {
        match self {
            Source::File(r) => r.bytes_read(),
            Source::Merged(m) => m.bytes_read(),
            Source::Sflow(l) => l.bytes_read(),
            #[cfg(feature = "live")]
            Source::Live(l) => l.bytes_read(),
        }
    }

    /// libpcap's counters for live captures.
    pub fn stats(&mut self) -> Option<CaptureStats> {
        match self {
            Source::File(_) | Source::Merged(_) | Source::Sflow(_) => None,
            #[cfg(feature = "live")]
            Source::Live(l) => Some(l.stats()),
        }
    }
}
