//! A flow's closed series bins ([`super::Bins`]): five figures a bin (bytes, packets, CE,
//! resent, CNPs) as 32-bit counts, 20 bytes a bin where five `u64`s took 40 (issue 39: the
//! closed bins were 8 MB at 100,000 QPs). A figure that would pass `u32::MAX` (a flow's
//! bytes in one wide bin past 4 GB) widens the whole series to 64-bit figures, so every
//! figure reads, adds and saturates as a `u64`.

/// Figures per bin.
pub(super) const FIGURES: usize = 5;

/// See the module documentation. How many words are in use and whether the figures are
/// wide are kept by the owner ([`super::Bins`], in its padding: 2 + 1 bytes) and passed in:
/// so closing a bin reads no word of the buffer to learn where the series ends (at 10,000
/// QPs the series buffers are cold, and that read was a cache miss a bin, issue 39). The
/// buffer's length is its room: 16 bytes in the flow where a `Vec`'s header took 24.
#[derive(Clone, Debug, Default)]
pub(super) struct Closed {
    /// Per bin `FIGURES` words; wide, each figure is two words (low, high). Empty before the
    /// first bin; words past those in use are 0.
    buf: Box<[u32]>,
}

/// Words in use: at most [`super::MAX_BINS`] wide bins, far inside a `u16`.
pub(super) type Used = u16;

impl Closed {
    /// The words in use.
    fn words(&self, used: Used) -> &[u32] {
        self.buf.get(..usize::from(used)).unwrap_or(&[])
    }

    /// The words in use, to change.
    fn words_mut(&mut self, used: Used) -> &mut [u32] {
        self.buf.get_mut(..usize::from(used)).unwrap_or(&mut [])
    }

    /// Grow to `n` words in use (the new ones 0), in room for `room` words at least.
    fn grow(&mut self, used: &mut Used, n: usize, room: usize) {
        let old = usize::from(*used);
        let Ok(n16) = Used::try_from(n) else { return };
        if n <= old {
            return;
        }
        if n > self.buf.len() {
            let mut b = vec![0u32; room.max(n)];
            if let Some(to) = b.get_mut(..old) {
                to.copy_from_slice(self.words(*used));
            }
            self.buf = b.into_boxed_slice();
        }
        // Words past those in use are 0 already (a buffer is made of zeros, and what
        // shrinks it replaces it).
        *used = n16;
    }

    /// Set the words in use to `w`, in exactly that room.
    fn replace(&mut self, used: &mut Used, w: Vec<u32>) {
        *used = Used::try_from(w.len()).unwrap_or(Used::MAX);
        self.buf = w.into_boxed_slice();
    }

    /// Words a bin takes.
    fn stride(wide: bool) -> usize {
        if wide {
            2 * FIGURES
        } else {
            FIGURES
        }
    }

    /// Bins held.
    pub(super) fn len(used: Used, wide: bool) -> usize {
        usize::from(used) / Self::stride(wide)
    }

    /// Bin `i`'s figures (zeros past the end).
    pub(super) fn get(&self, used: Used, i: usize, wide: bool) -> [u64; FIGURES] {
        let s = Self::stride(wide);
        let w = self.words(used).get(i * s..(i + 1) * s).unwrap_or(&[]);
        std::array::from_fn(|k| {
            if wide {
                let lo = w.get(2 * k).map_or(0, |x| u64::from(*x));
                let hi = w.get(2 * k + 1).map_or(0, |x| u64::from(*x));
                lo | hi << 32
            } else {
                w.get(k).map_or(0, |x| u64::from(*x))
            }
        })
    }

    /// Figure `k` of every bin, in order.
    pub(super) fn figure(&self, used: Used, k: usize, wide: bool) -> impl Iterator<Item = u64> + '_ {
        self.words(used).chunks_exact(Self::stride(wide)).map(move |w| {
            if wide {
                let lo = w.get(2 * k).map_or(0, |x| u64::from(*x));
                lo | w.get(2 * k + 1).map_or(0, |x| u64::from(*x)) << 32
            } else {
                w.get(k).map_or(0, |x| u64::from(*x))
            }
        })
    }

    /// Bin `i`'s figures set to `v` (`i` below [`Closed::len`]), widening if one needs it.
    fn set(&mut self, used: &mut Used, i: usize, v: [u64; FIGURES], wide: &mut bool) {
        if !*wide && v.iter().any(|x| *x > u64::from(u32::MAX)) {
            let w = self.words(*used).iter().flat_map(|x| [*x, 0]).collect();
            self.replace(used, w);
            *wide = true;
        }
        let wide = *wide;
        let s = Self::stride(wide);
        if let Some(w) = self.words_mut(*used).get_mut(i * s..(i + 1) * s) {
            for (k, x) in v.iter().enumerate() {
                if wide {
                    if let Some(p) = w.get_mut(2 * k..2 * k + 2) {
                        p.copy_from_slice(&[*x as u32, (*x >> 32) as u32]);
                    }
                } else if let Some(p) = w.get_mut(k) {
                    *p = *x as u32;
                }
            }
        }
    }

    /// Add `v` to bin `i` (`i` below [`Closed::len`]), saturating.
    pub(super) fn add(&mut self, used: &mut Used, i: usize, v: [u64; FIGURES], wide: &mut bool) {
        if !*wide {
            // Narrow and no figure carrying past 32 bits: in place.
            if let Some(w) = self.words_mut(*used).get_mut(i * FIGURES..(i + 1) * FIGURES) {
                let mut sum = [0u32; FIGURES];
                let mut fits = true;
                for ((s, x), y) in sum.iter_mut().zip(w.iter()).zip(v) {
                    match u32::try_from(y).ok().and_then(|y| x.checked_add(y)) {
                        Some(n) => *s = n,
                        None => fits = false,
                    }
                }
                if fits {
                    w.copy_from_slice(&sum);
                    return;
                }
            }
        }
        let old = self.get(*used, i, *wide);
        self.set(used, i, std::array::from_fn(|k| old[k].saturating_add(v[k])), wide);
    }

    /// A bin of figures `v` after the `used` words (bin [`Closed::len`]), in room that
    /// doubles as a `Vec`'s does, or with `exact`, no more room than that: written, not
    /// added to a bin read first (the common close of a bin, a cache miss fewer).
    pub(super) fn push(&mut self, used: &mut Used, v: [u64; FIGURES], exact: bool, wide: &mut bool) {
        let i = Self::len(*used, *wide);
        self.grow_to(used, i + 1, exact, *wide);
        self.set(used, i, v, wide);
    }

    /// Hold `n` bins, the new ones empty; with `exact`, no more room than that (else room
    /// doubles, as a `Vec`'s does).
    pub(super) fn grow_to(&mut self, used: &mut Used, n: usize, exact: bool, wide: bool) {
        let (want, have) = (n * Self::stride(wide), usize::from(*used));
        if want > have {
            let room = if exact { want } else { want.max(2 * self.buf.len()) };
            self.grow(used, want, room);
        }
    }

    /// `n` empty bins before the first.
    pub(super) fn insert_front(&mut self, used: &mut Used, n: usize, wide: bool) {
        let mut w = vec![0; n * Self::stride(wide)];
        w.extend_from_slice(self.words(*used));
        self.replace(used, w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_widen_past_u32_and_saturate() {
        let (mut c, mut u, mut w) = (Closed::default(), 0, false);
        c.grow_to(&mut u, 2, true, w);
        c.add(&mut u, 0, [1, 2, 3, 4, 5], &mut w);
        c.add(&mut u, 1, [u64::from(u32::MAX), 0, 0, 0, 1], &mut w);
        assert!(!w);
        assert_eq!(c.words(u).len(), 10, "20 bytes a bin");
        c.add(&mut u, 1, [1, 0, 0, 0, 0], &mut w);
        assert!(w);
        assert_eq!(
            (c.get(u, 0, w), c.get(u, 1, w)),
            ([1, 2, 3, 4, 5], [u64::from(u32::MAX) + 1, 0, 0, 0, 1])
        );
        c.insert_front(&mut u, 1, w);
        c.grow_to(&mut u, 4, false, w);
        assert_eq!(Closed::len(u, w), 4);
        assert_eq!(c.figure(u, 0, w).collect::<Vec<_>>(), [0, 1, u64::from(u32::MAX) + 1, 0]);
        c.add(&mut u, 3, [u64::MAX, 0, 0, 0, 0], &mut w);
        c.add(&mut u, 3, [7, 0, 0, 0, 0], &mut w);
        assert_eq!(c.get(u, 3, w)[0], u64::MAX);
        assert_eq!(std::mem::size_of::<Closed>(), 16);
    }

    #[test]
    fn a_pushed_bin_reads_as_an_added_one() {
        // Pushing writes a new bin; adding to a grown one reads it first: the same series,
        // narrow and across the widening, in exact and doubling room.
        for exact in [true, false] {
            let (mut a, mut ua, mut wa) = (Closed::default(), 0, false);
            let (mut b, mut ub, mut wb) = (Closed::default(), 0, false);
            for (i, v) in
                [[1, 2, 0, 0, 1], [5, 1, 1, 0, 0], [u64::from(u32::MAX) + 9, 3, 0, 1, 0], [4, 4, 4, 4, 4]]
                    .into_iter()
                    .enumerate()
            {
                a.push(&mut ua, v, exact, &mut wa);
                b.grow_to(&mut ub, i + 1, exact, wb);
                b.add(&mut ub, i, v, &mut wb);
                assert_eq!((ua, wa), (ub, wb));
                let figures =
                    |c: &Closed, u, w| (0..Closed::len(u, w)).map(|j| c.get(u, j, w)).collect::<Vec<_>>();
                assert_eq!(figures(&a, ua, wa), figures(&b, ub, wb));
            }
            assert!(wa);
        }
    }
}
