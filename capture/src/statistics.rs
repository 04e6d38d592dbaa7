//! The capture statistics a pcapng file records: its Interface Statistics Blocks (ISB,
//! pcapng §4.6), read as the capture's own drop counters, as a live capture's libpcap
//! counters are.
//!
//! Options read: `isb_ifrecv` (4, packets received from the interface), `isb_ifdrop` (5,
//! dropped by the interface for lack of resources) and `isb_osdrop` (7, dropped by the
//! operating system), each a 64-bit count in the section's byte order. Every option is
//! optional; one that is absent, not 8 bytes long, or all ones (dumpcap writes
//! `G_MAXUINT64` when `pcap_stats` failed) is unknown, never zero. dumpcap puts libpcap's
//! `ps_drop` (the kernel's buffer drops) and its own into `isb_ifdrop` and writes no
//! `isb_osdrop`; rocescope's writer puts `ps_ifdrop` in the first and `ps_drop` in the
//! second. So the two are told apart as the file tells them, and added up as drops.
//!
//! Several ISBs for one interface: the counters run from the start of the capture, so the
//! last one wins; one that counts less than an earlier one (a restarted capture, a damaged
//! block) is flagged. An ISB whose options do not fill it exactly (pcap-parser keeps the
//! options before a damaged one), or that names an interface not described, is not used
//! and is counted as damaged: its counters may be anyone's.

use crate::reader::Interface;
use pcap_parser::pcapng::{InterfaceStatisticsBlock, OptionCode};

/// One interface's capture counters, from the last usable ISB a pcapng file gave for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterfaceStats {
    /// pcapng section it belongs to (from 1; a new section numbers interfaces from 0).
    pub section: u32,
    /// Interface index within the section.
    pub interface: u32,
    /// The interface's `if_name`, when recorded.
    pub name: Option<String>,
    /// Time of the ISB that gave the counters (ns since the epoch).
    pub ts_ns: i64,
    /// `isb_ifrecv`: packets received from the interface.
    pub received: Option<u64>,
    /// `isb_ifdrop`: packets the interface (or, as dumpcap writes it, the capture) dropped.
    pub if_dropped: Option<u64>,
    /// `isb_osdrop`: packets the operating system dropped.
    pub os_dropped: Option<u64>,
    /// Usable ISBs read for it (the last one's counters are kept).
    pub blocks: u32,
    /// A later ISB counted less than an earlier one.
    pub went_backwards: bool,
}

impl InterfaceStats {
    /// The drops it knows of (`isb_ifdrop` + `isb_osdrop`); `None` when it gave neither.
    pub fn dropped(&self) -> Option<u64> {
        match (self.if_dropped, self.os_dropped) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        }
    }

    /// Take the counters of a later ISB for the same interface.
    pub(crate) fn update(&mut self, later: Counters, ts_ns: i64) {
        let less = |old: Option<u64>, new: Option<u64>| matches!((old, new), (Some(o), Some(n)) if n < o);
        self.went_backwards |= less(self.received, later.received)
            || less(self.if_dropped, later.if_dropped)
            || less(self.os_dropped, later.os_dropped);
        self.received = later.received;
        self.if_dropped = later.if_dropped;
        self.os_dropped = later.os_dropped;
        self.ts_ns = ts_ns;
        self.blocks = self.blocks.saturating_add(1);
    }
}

/// The capture counters one capture point's file recorded: its interfaces' last usable
/// ISBs, and how many ISBs could not be used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileStats {
    /// The capture point (the file's place among merged files; 0 for one file).
    pub point: u16,
    /// Per interface with a usable ISB.
    pub interfaces: Vec<InterfaceStats>,
    /// ISBs not used: damaged, or naming an interface not described.
    pub damaged: u32,
}

impl FileStats {
    /// Nothing recorded: no ISB at all.
    pub fn is_empty(&self) -> bool {
        self.interfaces.is_empty() && self.damaged == 0
    }
}

/// The counters of one ISB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub received: Option<u64>,
    pub if_dropped: Option<u64>,
    pub os_dropped: Option<u64>,
}

/// Length of an ISB without its options: type, length, interface, timestamp (2 words),
/// trailing length.
const ISB_FIXED: usize = 24;

/// The counters of an ISB read in the section's byte order; `None` when its options do not
/// fill the block exactly (a damaged option: pcap-parser keeps the ones before it).
pub(crate) fn counters(isb: &InterfaceStatisticsBlock<'_>, big_endian: bool) -> Option<Counters> {
    let used: usize = isb.options.iter().map(|o| 4 + o.value.len()).sum();
    if used != (isb.block_len1 as usize).saturating_sub(ISB_FIXED) {
        return None;
    }
    let count = |code: OptionCode| {
        let o = isb.options.iter().rev().find(|o| o.code == code && o.len == 8)?;
        let b: [u8; 8] = o.value.get(..8)?.try_into().ok()?;
        let v = if big_endian { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) };
        (v != u64::MAX).then_some(v)
    };
    Some(Counters {
        received: count(OptionCode::IsbIfRecv),
        if_dropped: count(OptionCode::IsbIfDrop),
        os_dropped: count(OptionCode::IsbOsDrop),
    })
}

/// Keep the counters of `isb`, an ISB of interface `ifc` in `section`, in `stats` (the last
/// per interface wins); false when it is damaged and was not used.
pub(crate) fn record(
    stats: &mut Vec<InterfaceStats>,
    (section, ifc): (u32, &Interface),
    isb: &InterfaceStatisticsBlock<'_>,
    big_endian: bool,
) -> bool {
    let Some(counted) = counters(isb, big_endian) else { return false };
    let ts = ifc.ts_ns((u64::from(isb.ts_high) << 32) | u64::from(isb.ts_low));
    let interface = isb.if_id;
    let i = match stats.iter().position(|s| (s.section, s.interface) == (section, interface)) {
        Some(i) => i,
        None => {
            stats.push(InterfaceStats {
                section,
                interface,
                name: ifc.name.clone(),
                ..InterfaceStats::default()
            });
            stats.len() - 1
        }
    };
    if let Some(slot) = stats.get_mut(i) {
        slot.update(counted, ts);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_adds_what_is_known() {
        let mut s = InterfaceStats::default();
        assert_eq!(s.dropped(), None);
        s.if_dropped = Some(3);
        assert_eq!(s.dropped(), Some(3));
        s.os_dropped = Some(u64::MAX);
        assert_eq!(s.dropped(), Some(u64::MAX));
    }

    #[test]
    fn a_later_block_wins_and_a_smaller_count_is_flagged() {
        let mut s = InterfaceStats::default();
        s.update(Counters { received: Some(10), if_dropped: Some(2), os_dropped: None }, 5);
        assert!(!s.went_backwards);
        s.update(Counters { received: Some(20), if_dropped: None, os_dropped: Some(1) }, 9);
        assert_eq!(
            (s.received, s.if_dropped, s.os_dropped, s.blocks, s.ts_ns),
            (Some(20), None, Some(1), 2, 9)
        );
        assert!(!s.went_backwards, "a counter the later block lacks is not a smaller one");
        s.update(Counters { received: Some(7), if_dropped: None, os_dropped: Some(1) }, 12);
        assert!(s.went_backwards);
        assert_eq!(s.received, Some(7), "the last block wins all the same");
    }
}
