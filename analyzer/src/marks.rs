//! Per capture point, the DSCP and PCP of each class of RoCE packet (data, ACK/NAK, CNP)
//! counted packet by packet (`points[].marks`). A flow keeps the set of DSCPs its packets
//! carried, and an RC QP's ACKs and CNPs travel on one flow: its set cannot say which of them
//! carry which value. These counts can (compare's DSCP verdicts, docs/verdicts.md "Change
//! verdicts"). Counted in the capture-wide pass, one add per frame, or once per flow and bin
//! (crate::fold).

use crate::audit::Class;
pub use rocescope_model::marks::{ClassMarksReport, MarksReport, ValueCount};

/// Capture points counted: the first 256 (a point is a file or a mirror session; a capture
/// that makes more cannot make these counts grow without bound).
pub const MAX_POINTS: usize = 256;

/// The PCP slot of untagged packets.
const UNTAGGED: usize = 8;

/// Counts of one class at one point: 64 DSCPs, then PCP 0-7 and untagged.
const SLOTS: usize = 64 + 9;

/// The counts of every point, three classes each, in one flat table (one indexed add per
/// frame for the DSCP, one for the PCP: this runs for every RoCE frame). Public so that a
/// reader of the Parquet packets table counts as the analyzer does.
#[derive(Clone, Debug, Default)]
pub struct PointMarks {
    counts: Vec<u64>,
}

fn index(class: Class) -> usize {
    match class {
        Class::Data => 0,
        Class::Ack => 1,
        Class::Cnp => 2,
    }
}

impl PointMarks {
    /// `n` packets of `class` at `point`, with their DSCP and PCP (`None`: untagged).
    #[inline]
    pub fn add(&mut self, point: u16, class: Class, dscp: u8, pcp: Option<u8>, n: u64) {
        if let Some(mut at) = self.point_mut(point) {
            at.add(class, dscp, pcp, n);
        }
    }

    /// The counts of `point`, room made for them (`None` past [`MAX_POINTS`]): for adding
    /// many at one point (crate::fold folds a bin's flows at once).
    #[inline]
    pub(crate) fn point_mut(&mut self, point: u16) -> Option<PointCounts<'_>> {
        let p = usize::from(point);
        if p >= MAX_POINTS {
            return None;
        }
        if self.counts.len() < (p + 1) * 3 * SLOTS {
            self.counts.resize((p + 1) * 3 * SLOTS, 0);
        }
        self.counts.get_mut(p * 3 * SLOTS..(p + 1) * 3 * SLOTS).map(PointCounts)
    }

    /// The report of `point`, when it is counted.
    pub fn report(&self, point: u16) -> Option<MarksReport> {
        let p = usize::from(point);
        let class = |c: usize| {
            let base = (p * 3 + c) * SLOTS;
            self.counts.get(base..base + SLOTS).map(class_report)
        };
        Some(MarksReport { data: class(0)?, ack: class(1)?, cnp: class(2)? })
    }
}

/// One capture point's counts, three classes ([`PointMarks::point_mut`]).
pub(crate) struct PointCounts<'a>(&'a mut [u64]);

impl PointCounts<'_> {
    /// `n` packets of `class` with their DSCP and PCP (`None`: untagged).
    #[inline]
    pub(crate) fn add(&mut self, class: Class, dscp: u8, pcp: Option<u8>, n: u64) {
        let base = index(class) * SLOTS;
        if let Some(x) = self.0.get_mut(base + usize::from(dscp & 63)) {
            *x = x.wrapping_add(n);
        }
        let slot = 64 + pcp.map_or(UNTAGGED, |v| usize::from(v & 7));
        if let Some(x) = self.0.get_mut(base + slot) {
            *x = x.wrapping_add(n);
        }
    }
}

/// One class's slots as its report.
fn class_report(slots: &[u64]) -> ClassMarksReport {
    let list = |v: &[u64], untagged: bool| -> Vec<ValueCount> {
        v.iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| ValueCount {
                value: if untagged && i == UNTAGGED { None } else { u8::try_from(i).ok() },
                packets: *n,
            })
            .collect()
    };
    let (dscp, pcp) = slots.split_at(64.min(slots.len()));
    ClassMarksReport { dscp: list(dscp, false), pcp: list(pcp, true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_point_and_class_and_none_past_the_cap() {
        let mut m = PointMarks::default();
        m.add(1, Class::Cnp, 48, None, 3);
        m.add(1, Class::Ack, 26, Some(3), 2);
        m.add(1, Class::Ack, 26, Some(3), 1);
        m.add(u16::MAX, Class::Data, 26, None, 1);
        let r = m.report(1).expect("point 1");
        assert_eq!((r.cnp.dscp.len(), r.cnp.dscp[0].value, r.cnp.dscp[0].packets), (1, Some(48), 3));
        assert_eq!((r.cnp.pcp[0].value, r.cnp.pcp[0].packets), (None, 3));
        assert_eq!((r.ack.dscp[0].value, r.ack.dscp[0].packets, r.ack.pcp[0].value), (Some(26), 3, Some(3)));
        assert!(r.data.dscp.is_empty());
        assert!(m.report(0).is_some_and(|r| r.cnp.dscp.is_empty()));
        assert!(m.report(u16::MAX).is_none());
    }
}
