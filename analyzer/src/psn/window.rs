//! The recent-PSN window of a request stream ([`super::PsnTracker`]): which of the
//! last [`WINDOW`] PSNs behind the expected one were seen, to tell a duplicate from a gap
//! filler.
//!
//! It reads exactly as the 512-bit ring it replaces (bit `psn % WINDOW` per PSN, cleared as
//! the stream advances), but holds it in two forms (issue 39: 64 bytes off every tracker):
//! - **a run**: the PSNs `[hi - len, hi)` were seen and no other. An in-order stream only
//!   ever extends its run, so it needs 8 bytes and no allocation;
//! - **the ring**, boxed, taken the first time the stream does something a run cannot say
//!   (a gap, a filler, the expected PSN moving back) and kept until the window is cleared.

use super::{psn_add, psn_diff, PSN_MOD};

/// PSNs remembered behind the expected one.
pub(crate) const WINDOW: u32 = 512;

/// Words of the ring.
const WORDS: usize = (WINDOW / 64) as usize;

/// See the module documentation.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeenWindow {
    /// The run form's end (one past its last PSN), when `ring` is none.
    hi: u32,
    /// The run form's length (0 for none seen), at most [`WINDOW`]; always within the window
    /// behind the expected PSN.
    len: u32,
    /// The ring form: bit `psn % WINDOW` per PSN.
    ring: Option<Box<[u64; WORDS]>>,
}

/// The PSN of the window behind `expected` that shares `psn`'s ring slot.
fn in_window(expected: u32, psn: u32) -> u32 {
    let oldest = psn_add(expected, PSN_MOD - WINDOW);
    psn_add(oldest, psn_add(psn, PSN_MOD - oldest) % WINDOW)
}

impl SeenWindow {
    /// Nothing seen (what [`Default`] makes, for statics).
    pub(crate) const EMPTY: SeenWindow = SeenWindow { hi: 0, len: 0, ring: None };

    /// Whether `psn`'s slot is set, the stream expecting `expected` next.
    #[inline]
    pub(crate) fn bit(&self, expected: u32, psn: u32) -> bool {
        let i = (psn % WINDOW) as usize;
        match self.ring.as_deref() {
            Some(r) => r.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0),
            None => {
                let d = psn_diff(in_window(expected, psn), self.hi);
                self.len > 0 && d < 0 && -d <= self.len as i32
            }
        }
    }

    /// Nothing seen.
    pub(crate) fn clear(&mut self) {
        *self = SeenWindow::default();
    }

    /// The ring, made from the run (the stream expecting `expected`) if need be.
    fn ring(&mut self, expected: u32) -> &mut [u64; WORDS] {
        let (hi, len) = (self.hi, self.len);
        self.ring.get_or_insert_with(|| {
            let mut r = Box::new([0; WORDS]);
            for k in 1..=len {
                let i = (psn_add(hi, PSN_MOD - k) % WINDOW) as usize;
                if let Some(w) = r.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
            }
            // Only the window's PSNs have slots: a run lies in it (`expected` is the ring's
            // reference, not needed to place the bits, but a run past it would be a bug).
            debug_assert!(len == 0 || psn_diff(expected, hi) >= 0);
            r
        })
    }

    /// The expected PSN is about to be set to anything but by [`SeenWindow::advance`] (the
    /// stream restarts): the slots now stand for other PSNs, which only the ring can say.
    pub(crate) fn rebase(&mut self, expected: u32) {
        if self.ring.is_none() && self.len > 0 {
            self.ring(expected);
        }
    }

    /// The stream's expected PSN moves from `expected` to `new`: the slots of the PSNs in
    /// `[expected, new)` are cleared (all of them past a whole window). A move back clears
    /// nothing.
    #[inline(always)]
    pub(crate) fn advance(&mut self, expected: u32, new: u32) {
        if self.ring.is_none() {
            let d = psn_diff(new, expected);
            if (0..WINDOW as i32).contains(&d) {
                // Forward within a window (the in-order stream): the PSNs leaving the window
                // are those whose slots `[expected, new)` take.
                let keep = psn_diff(self.hi, psn_add(new, PSN_MOD - WINDOW));
                self.len = if keep <= 0 { 0 } else { self.len.min(keep as u32) };
                return;
            }
        }
        self.advance_slow(expected, new);
    }

    /// [`SeenWindow::advance`] but forward within a window on a run.
    #[inline(never)]
    fn advance_slow(&mut self, expected: u32, new: u32) {
        let back = psn_diff(new, expected) < 0;
        let d = psn_diff(new, expected).max(0) as u32;
        if d >= WINDOW {
            self.clear();
            return;
        }
        if let Some(r) = self.ring.as_deref_mut() {
            for k in 0..d {
                let i = (psn_add(expected, k) % WINDOW) as usize;
                if let Some(w) = r.get_mut(i / 64) {
                    *w &= !(1 << (i % 64));
                }
            }
            return;
        }
        if back {
            // The slots stay, standing for older PSNs: the ring's doing.
            self.rebase(expected);
            return;
        }
        // Forward: the PSNs leaving the window are those whose slots `[expected, new)` take.
        let oldest = psn_add(new, PSN_MOD - WINDOW);
        let keep = psn_diff(self.hi, oldest);
        self.len = if keep <= 0 { 0 } else { self.len.min(keep as u32) };
    }

    /// `psn` and the `span - 1` after it (at most a window's worth) were seen, the stream
    /// expecting `expected` next.
    #[inline(always)]
    pub(crate) fn mark(&mut self, expected: u32, psn: u32, span: u32) {
        // The in-order stream: the run extends to the expected PSN (it lies behind `psn`
        // within the window, so at most `WINDOW - span` long).
        if self.ring.is_none()
            && span < WINDOW
            && psn_add(psn, span) == expected
            && (psn == self.hi || self.len == 0)
        {
            self.len = if psn == self.hi { self.len + span } else { span };
            self.hi = expected;
            return;
        }
        self.mark_slow(expected, psn, span);
    }

    /// [`SeenWindow::mark`] but the in-order extension.
    #[inline(never)]
    fn mark_slow(&mut self, expected: u32, psn: u32, span: u32) {
        let n = span.min(WINDOW);
        if n == 0 {
            return;
        }
        let end = psn_add(psn, n);
        if n == WINDOW {
            // Every slot set (a READ reserving more PSNs than the window): the whole window.
            self.ring = None;
            (self.hi, self.len) = (expected, WINDOW);
            return;
        }
        if self.ring.is_none() {
            let oldest = psn_add(expected, PSN_MOD - WINDOW);
            let inside = psn_diff(psn, oldest) >= 0 && psn_diff(end, expected) <= 0;
            if inside && self.len == 0 {
                (self.hi, self.len) = (end, n);
                return;
            }
            let lo = psn_add(self.hi, PSN_MOD - self.len);
            if inside && psn_diff(psn, self.hi) <= 0 && psn_diff(end, lo) >= 0 {
                let lo = if psn_diff(psn, lo) < 0 { psn } else { lo };
                let hi = if psn_diff(end, self.hi) > 0 { end } else { self.hi };
                (self.hi, self.len) = (hi, psn_diff(hi, lo) as u32);
                return;
            }
        }
        let r = self.ring(expected);
        for k in 0..n {
            let i = (psn_add(psn, k) % WINDOW) as usize;
            if let Some(w) = r.get_mut(i / 64) {
                *w |= 1 << (i % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 512-bit ring as the tracker kept it inline before: the reference.
    #[derive(Default)]
    struct Ring([u64; WORDS]);

    impl Ring {
        fn set(&mut self, psn: u32, on: bool) {
            let i = (psn % WINDOW) as usize;
            if on {
                self.0[i / 64] |= 1 << (i % 64);
            } else {
                self.0[i / 64] &= !(1 << (i % 64));
            }
        }
        fn bit(&self, psn: u32) -> bool {
            let i = (psn % WINDOW) as usize;
            self.0[i / 64] & (1 << (i % 64)) != 0
        }
        fn advance(&mut self, expected: u32, new: u32) {
            let d = psn_diff(new, expected).max(0) as u32;
            if d >= WINDOW {
                self.0 = [0; WORDS];
            } else {
                for k in 0..d {
                    self.set(psn_add(expected, k), false);
                }
            }
        }
    }

    /// A small deterministic generator (xorshift).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn reads_as_the_ring_whatever_the_stream_does() {
        for seed in 1..400u64 {
            let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (mut ring, mut win) = (Ring::default(), SeenWindow::default());
            // Near the wrap for some seeds.
            let mut expected =
                if seed % 3 == 0 { PSN_MOD - 300 } else { (next(&mut s) % PSN_MOD as u64) as u32 };
            let in_order = seed % 4 == 0;
            for _ in 0..600 {
                let r = next(&mut s) % 100;
                let span = 1 + (next(&mut s) % 4) as u32 * if next(&mut s) % 50 == 0 { 200 } else { 1 };
                if in_order || r < 70 {
                    // In order: advance over it and mark it.
                    let new = psn_add(expected, span);
                    ring.advance(expected, new);
                    win.advance(expected, new);
                    ring_mark(&mut ring, expected, span);
                    win.mark(new, expected, span);
                    expected = new;
                } else if r < 80 {
                    // A gap.
                    let psn = psn_add(expected, 1 + (next(&mut s) % 700) as u32);
                    let new = psn_add(psn, span);
                    ring.advance(expected, new);
                    win.advance(expected, new);
                    ring_mark(&mut ring, psn, span);
                    win.mark(new, psn, span);
                    expected = new;
                } else if r < 92 {
                    // A filler or a resend behind.
                    let psn = psn_add(expected, PSN_MOD - 1 - (next(&mut s) % 600) as u32);
                    ring_mark(&mut ring, psn, 1);
                    win.mark(expected, psn, 1);
                } else if r < 96 {
                    // The expected PSN moves back.
                    let new = psn_add(expected, PSN_MOD - 1 - (next(&mut s) % 40) as u32);
                    ring.advance(expected, new);
                    win.advance(expected, new);
                    expected = new;
                } else if r < 98 {
                    // A restart: cleared, then a stream anywhere.
                    ring = Ring::default();
                    win.clear();
                    let psn = (next(&mut s) % PSN_MOD as u64) as u32;
                    win.rebase(expected);
                    expected = psn;
                } else {
                    // Set anywhere without clearing (a restart's stream placed directly).
                    win.rebase(expected);
                    expected = psn_add(expected, (next(&mut s) % 1000) as u32);
                }
                for back in 0..=WINDOW + 8 {
                    let psn = psn_add(expected, PSN_MOD - back);
                    assert_eq!(
                        win.bit(expected, psn),
                        ring.bit(psn),
                        "seed {seed} psn {psn} expected {expected}"
                    );
                }
                if in_order {
                    assert!(win.ring.is_none(), "an in-order stream keeps a run (seed {seed})");
                }
            }
        }
    }

    #[test]
    fn the_window_and_the_tracker_stay_small() {
        // 64 bytes inline before (issue 39); the tracker is boxed per requesting flow.
        assert_eq!(std::mem::size_of::<SeenWindow>(), 16);
        assert!(std::mem::size_of::<crate::psn::PsnTracker>() <= 88);
    }

    fn ring_mark(ring: &mut Ring, psn: u32, span: u32) {
        for k in 0..span.min(WINDOW) {
            ring.set(psn_add(psn, k), true);
        }
    }
}
