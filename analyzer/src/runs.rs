//! A flow's bursts of data: runs of data packets (requests and READ responses) with no gap
//! longer than [`RUN_GAP_NS`] between them, each with its start, its end, its last frame and
//! its bytes. A training job's collectives are bursts like these, one or more per iteration
//! (field notes, "Why the network matters"); the iteration's rhythm and its stragglers are
//! read from them at the end of the capture ([`crate::rhythm`]), so the per-frame cost is
//! one comparison and three stores on a data packet.
//!
//! A run of fewer than [`MIN_RUN_BYTES`] is not kept: the sparse packets of a QP that sends
//! now and then are not bursts, and a capture of 100,000 such QPs keeps nothing for them. A
//! flow keeps at most [`MAX_RUNS`]; past that, the two runs closest together merge (the
//! widest gaps, which part the iterations, stay), so a flow's memory is bounded whatever it
//! sends.

/// The longest pause inside one run: 1 ms. A collective's packets follow each other within
/// microseconds (a NIC at line rate; NCCL steps wait for the peer's chunk for tens of µs);
/// the compute between collectives takes milliseconds or more.
pub const RUN_GAP_NS: i64 = 1_000_000;

/// The fewest wire bytes a run must carry to be kept: 16 KiB (four full-size packets
/// are not a burst; a QP that sends one packet now and then keeps nothing).
pub const MIN_RUN_BYTES: u64 = 16 * 1024;

/// Runs kept per flow (24 kB at most).
pub const MAX_RUNS: usize = 512;

/// One burst of a flow's data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Its first data packet's time.
    pub start_ns: i64,
    /// Its last data packet's time.
    pub end_ns: i64,
    /// The frame number of that last packet (evidence).
    pub end_frame: u64,
    /// Wire bytes (scaled by the sampling rate).
    pub bytes: u64,
}

/// The run under way (inline in the flow: `bytes == 0` before the first data packet).
pub(crate) type RunState = Run;

impl Run {
    /// A data packet at `ts_ns`, frame `frame`, of `bytes`: extends the run under way, or
    /// closes it and starts the next after a gap longer than [`RUN_GAP_NS`]. Returns the
    /// closed run when it is worth keeping ([`MIN_RUN_BYTES`]).
    #[inline]
    pub(crate) fn extend(&mut self, ts_ns: i64, frame: u64, bytes: u64) -> Option<Run> {
        // The common case: the next packet of the run under way (or an older one, from
        // merged captures slightly out of order).
        if self.bytes != 0 && ts_ns.saturating_sub(self.end_ns) <= RUN_GAP_NS {
            if ts_ns >= self.end_ns {
                self.end_ns = ts_ns;
                self.end_frame = frame;
            }
            self.bytes = self.bytes.saturating_add(bytes);
            return None;
        }
        self.restart(ts_ns, frame, bytes)
    }

    /// Close the run under way (returned when worth keeping) and start one at this packet.
    #[cold]
    #[inline(never)]
    fn restart(&mut self, ts_ns: i64, frame: u64, bytes: u64) -> Option<Run> {
        let closed = self.kept().then_some(*self);
        *self = Run { start_ns: ts_ns, end_ns: ts_ns, end_frame: frame, bytes: bytes.max(1) };
        closed
    }

    /// Whether the run under way is worth keeping.
    pub fn kept(&self) -> bool {
        self.bytes >= MIN_RUN_BYTES
    }
}

/// A flow's closed runs, in time order (allocated with the first).
#[derive(Clone, Debug, Default)]
pub struct Runs {
    list: Vec<Run>,
    /// Times two runs merged because the flow had [`MAX_RUNS`].
    pub merged: u32,
}

impl Runs {
    /// Keep a closed run (later than every kept one).
    pub(crate) fn push(&mut self, r: Run) {
        if self.list.len() >= MAX_RUNS {
            self.merge_closest();
        }
        self.list.push(r);
    }

    /// Merge the two neighbouring runs with the shortest gap between them.
    fn merge_closest(&mut self) {
        let gap = |w: &[Run]| match w {
            [a, b] => b.start_ns.saturating_sub(a.end_ns),
            _ => i64::MAX,
        };
        let Some(i) = self.list.windows(2).enumerate().min_by_key(|(_, w)| gap(w)).map(|(i, _)| i) else {
            return;
        };
        if let Some(b) = self.list.get(i + 1).copied() {
            if let Some(a) = self.list.get_mut(i) {
                a.end_ns = a.end_ns.max(b.end_ns);
                a.end_frame = b.end_frame;
                a.bytes = a.bytes.saturating_add(b.bytes);
            }
            self.list.remove(i + 1);
            self.merged = self.merged.saturating_add(1);
        }
    }

    /// The closed runs, in time order.
    pub fn list(&self) -> &[Run] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 1024;

    #[test]
    fn a_gap_longer_than_a_millisecond_closes_a_run_and_small_runs_are_not_kept() {
        let mut r = Run::default();
        // Burst 1: 100 packets of 4 KB, 1 µs apart, from t = 0.
        let mut closed = Vec::new();
        for i in 0..100 {
            closed.extend(r.extend(i * 1000, i as u64 + 1, 4 * KB));
        }
        assert!(closed.is_empty());
        // 0.9 ms later: the same run.
        closed.extend(r.extend(99_000 + 900_000, 101, 4 * KB));
        assert!(closed.is_empty());
        // 5 ms later: the run closes; one packet starts the next.
        closed.extend(r.extend(6_000_000, 102, 4 * KB));
        assert_eq!(closed, [Run { start_ns: 0, end_ns: 999_000, end_frame: 101, bytes: 101 * 4 * KB }]);
        // That lone packet is too small a run to keep.
        assert_eq!(r.extend(20_000_000, 103, 4 * KB), None);
        assert!(!r.kept());
    }

    #[test]
    fn past_the_cap_the_closest_runs_merge_and_the_wide_gaps_stay() {
        let mut runs = Runs::default();
        // Iterations 100 ms apart; inside each, two collectives 3 ms apart: 20 more runs
        // than the cap.
        let iterations = MAX_RUNS / 2 + 10;
        for k in 0..iterations as i64 {
            let t = k * 100_000_000;
            runs.push(Run { start_ns: t, end_ns: t + 10_000_000, end_frame: 1, bytes: KB * KB });
            runs.push(Run { start_ns: t + 13_000_000, end_ns: t + 20_000_000, end_frame: 2, bytes: KB * KB });
        }
        assert_eq!(runs.list().len(), MAX_RUNS);
        assert_eq!(runs.merged, 20);
        // The first 20 iterations' collectives merged (the shortest gaps, earliest first);
        // no two iterations did.
        for (k, r) in runs.list().iter().take(20).enumerate() {
            assert_eq!(
                (r.start_ns, r.end_ns, r.end_frame),
                (k as i64 * 100_000_000, k as i64 * 100_000_000 + 20_000_000, 2)
            );
            assert_eq!(r.bytes, 2 * KB * KB);
        }
        assert_eq!(runs.list().get(20).map(|r| (r.start_ns, r.end_ns)), Some((2_000_000_000, 2_010_000_000)));
    }
}
