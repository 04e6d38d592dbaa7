//! A flow's closed series bins ([`super::Bins`]): five figures a bin (bytes, packets, CE,
//! resent, CNPs) as 32-bit counts, 20 bytes a bin where five `u64`s took 40 (issue 39: the
//! closed bins were 8 MB at 100,000 QPs). A figure that would pass `u32::MAX` (a flow's
//! bytes in one wide bin past 4 GB) widens the whole series to 64-bit figures, so every
//! figure reads, adds and saturates as a `u64`.

/// Figures per bin.
pub(super) const FIGURES: usize = 5;

/// See the module documentation. Whether the figures are wide is kept by the owner
/// ([`super::Bins`], in its padding) and passed in. The words are a boxed slice whose first
/// word counts the words in use and whose length is the room: 16 bytes in the flow where a
/// `Vec`'s header took 24 (issue 39).
#[derive(Clone, Debug, Default)]
pub(super) struct Closed {
    /// Words in use, then per bin `FIGURES` words; wide, each figure is two words (low,
    /// high). Empty before the first bin.
    buf: Box<[u32]>,
}

impl Closed {
    /// The words in use.
    fn words(&self) -> &[u32] {
        let n = self.buf.first().map_or(0, |n| *n as usize);
        self.buf.get(1..1 + n).unwrap_or(&[])
    }

    /// The words in use, to change.
    fn words_mut(&mut self) -> &mut [u32] {
        let n = self.buf.first().map_or(0, |n| *n as usize);
        self.buf.get_mut(1..1 + n).unwrap_or(&mut [])
    }

    /// Grow to `n` words in use (the new ones 0), in room for `room` words at least.
    fn grow(&mut self, n: usize, room: usize) {
        let old = self.words().len();
        let Ok(n32) = u32::try_from(n) else { return };
        if n <= old {
            return;
        }
        if n + 1 > self.buf.len() {
            let mut b = vec![0u32; room.max(n) + 1];
            if let Some(to) = b.get_mut(1..1 + old) {
                to.copy_from_slice(self.words());
            }
            self.buf = b.into_boxed_slice();
        } else if let Some(new) = self.buf.get_mut(1 + old..1 + n) {
            new.fill(0);
        }
        if let Some(len) = self.buf.first_mut() {
            *len = n32;
        }
    }

    /// Set the words in use to `w`, in exactly that room.
    fn replace(&mut self, w: Vec<u32>) {
        let mut b = Vec::with_capacity(w.len() + 1);
        b.push(u32::try_from(w.len()).unwrap_or(u32::MAX));
        b.extend(w);
        self.buf = b.into_boxed_slice();
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
    pub(super) fn len(&self, wide: bool) -> usize {
        self.words().len() / Self::stride(wide)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.words().is_empty()
    }

    /// Bin `i`'s figures (zeros past the end).
    pub(super) fn get(&self, i: usize, wide: bool) -> [u64; FIGURES] {
        let s = Self::stride(wide);
        let w = self.words().get(i * s..(i + 1) * s).unwrap_or(&[]);
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
    pub(super) fn figure(&self, k: usize, wide: bool) -> impl Iterator<Item = u64> + '_ {
        self.words().chunks_exact(Self::stride(wide)).map(move |w| {
            if wide {
                let lo = w.get(2 * k).map_or(0, |x| u64::from(*x));
                lo | w.get(2 * k + 1).map_or(0, |x| u64::from(*x)) << 32
            } else {
                w.get(k).map_or(0, |x| u64::from(*x))
            }
        })
    }

    /// Bin `i`'s figures set to `v` (`i` below [`Closed::len`]), widening if one needs it.
    fn set(&mut self, i: usize, v: [u64; FIGURES], wide: &mut bool) {
        if !*wide && v.iter().any(|x| *x > u64::from(u32::MAX)) {
            let w = self.words().iter().flat_map(|x| [*x, 0]).collect();
            self.replace(w);
            *wide = true;
        }
        let wide = *wide;
        let s = Self::stride(wide);
        if let Some(w) = self.words_mut().get_mut(i * s..(i + 1) * s) {
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
    pub(super) fn add(&mut self, i: usize, v: [u64; FIGURES], wide: &mut bool) {
        if !*wide {
            // Narrow and no figure carrying past 32 bits: in place.
            if let Some(w) = self.words_mut().get_mut(i * FIGURES..(i + 1) * FIGURES) {
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
        let old = self.get(i, *wide);
        self.set(i, std::array::from_fn(|k| old[k].saturating_add(v[k])), wide);
    }

    /// Hold `n` bins, the new ones empty; with `exact`, no more room than that (else room
    /// doubles, as a `Vec`'s does).
    pub(super) fn grow_to(&mut self, n: usize, exact: bool, wide: bool) {
        let (want, have) = (n * Self::stride(wide), self.words().len());
        if want > have {
            let room = if exact { want } else { want.max(2 * self.buf.len().saturating_sub(1)) };
            self.grow(want, room);
        }
    }

    /// `n` empty bins before the first.
    pub(super) fn insert_front(&mut self, n: usize, wide: bool) {
        let mut w = vec![0; n * Self::stride(wide)];
        w.extend_from_slice(self.words());
        self.replace(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_widen_past_u32_and_saturate() {
        let (mut c, mut w) = (Closed::default(), false);
        c.grow_to(2, true, w);
        c.add(0, [1, 2, 3, 4, 5], &mut w);
        c.add(1, [u64::from(u32::MAX), 0, 0, 0, 1], &mut w);
        assert!(!w);
        assert_eq!(c.words().len(), 10, "20 bytes a bin");
        c.add(1, [1, 0, 0, 0, 0], &mut w);
        assert!(w);
        assert_eq!((c.get(0, w), c.get(1, w)), ([1, 2, 3, 4, 5], [u64::from(u32::MAX) + 1, 0, 0, 0, 1]));
        c.insert_front(1, w);
        c.grow_to(4, false, w);
        assert_eq!(c.len(w), 4);
        assert_eq!(c.figure(0, w).collect::<Vec<_>>(), [0, 1, u64::from(u32::MAX) + 1, 0]);
        c.add(3, [u64::MAX, 0, 0, 0, 0], &mut w);
        c.add(3, [7, 0, 0, 0, 0], &mut w);
        assert_eq!(c.get(3, w)[0], u64::MAX);
        assert_eq!(std::mem::size_of::<Closed>(), 16);
    }
}
