//! A record as the reader handed it out, held apart from its bytes for another thread: the two
//! stages (crate::pipelined) and the divided reading (crate::divided) copy records into
//! chunks, and their analysing threads make the record again from this and the bytes.

use rocescope_capture::Record;
use rocescope_decoder::LinkType;

/// What a record said of itself, and the frame number it was given.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// Its frame number (what findings cite).
    pub number: u64,
    pub ts_ns: i64,
    /// Its bytes held (the record's data: the slice the record is made again with).
    pub caplen: u32,
    pub len: u32,
    pub link_type: LinkType,
    pub link_bps: Option<u64>,
    /// Its capture point (0: one input).
    pub point: u16,
}

impl Held {
    /// Record `rec`, frame `number`.
    pub fn of(rec: &Record<'_>, number: u64) -> Self {
        Held {
            number,
            ts_ns: rec.ts_ns,
            caplen: u32::try_from(rec.data.len()).unwrap_or(u32::MAX),
            len: rec.len,
            link_type: rec.link_type,
            link_bps: rec.link_bps,
            point: rec.point,
        }
    }

    /// The record again, with `data` for its bytes (none for a frame whose classification
    /// was handed on instead).
    pub fn record<'a>(&self, data: &'a [u8]) -> Record<'a> {
        Record {
            ts_ns: self.ts_ns,
            caplen: self.caplen,
            len: self.len,
            link_type: self.link_type,
            interface: 0,
            link_bps: self.link_bps,
            point: self.point,
            data,
            empty_before: 0,
        }
    }
}
