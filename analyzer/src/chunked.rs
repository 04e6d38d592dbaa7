//! A growable list kept in fixed chunks: growing it never copies more than one chunk, and
//! never leaves half of a doubled allocation empty. A `Vec` of a million 88-byte receivers
//! held room for 1,048,576 (and, while it grew, the old and the new buffer); here only the
//! last chunk has room to spare (issue 28). [`crate::store::FlowStore`] keeps its flows the
//! same way, with an index of its own.

/// Items per chunk (a power of two: the first chunk grows by doubling up to it).
const CHUNK: usize = 1024;

/// A list of `T` in chunks of [`CHUNK`], indexed from 0 in push order.
#[derive(Clone, Debug)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), len: 0 }
    }
}

impl<T> Chunked<T> {
    /// Items held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add one at the end (index [`Chunked::len`] before the call).
    pub(crate) fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(item),
            Some(_) => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(item);
                self.chunks.push(c);
            }
            // The first chunk grows as a `Vec` does (to `CHUNK`, a power of two): a small
            // capture keeps a few items, not room for a thousand.
            None => self.chunks.push(vec![item]),
        }
        self.len += 1;
    }

    /// Item `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK).and_then(|c| c.get(i % CHUNK))
    }

    /// Item `i`, to change.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK).and_then(|c| c.get_mut(i % CHUNK))
    }

    /// The items in index order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Keep the items `keep` says yes to, in order (indexes change; the last chunk is cut
    /// to its length).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let old = std::mem::take(&mut self.chunks);
        self.len = 0;
        for item in old.into_iter().flatten() {
            if keep(&item) {
                self.push(item);
            }
        }
        if let Some(c) = self.chunks.last_mut() {
            c.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_run_across_chunks_and_retain_keeps_the_order() {
        let mut c = Chunked::default();
        let n = 3 * CHUNK + 5;
        for i in 0..n {
            c.push(i);
        }
        assert_eq!(c.len(), n);
        assert_eq!(c.get(CHUNK), Some(&CHUNK));
        assert_eq!(c.get(n - 1), Some(&(n - 1)));
        assert_eq!(c.get(n), None);
        if let Some(x) = c.get_mut(CHUNK + 1) {
            *x = 7;
        }
        assert_eq!(c.get(CHUNK + 1), Some(&7));
        c.retain(|x| x % 2 == 0);
        let kept: Vec<usize> = c.iter().copied().collect();
        let want: Vec<usize> = (0..n).filter(|x| x % 2 == 0 && *x != CHUNK + 1).collect();
        assert_eq!(kept, want);
        assert_eq!(c.len(), want.len());
        assert_eq!(c.get(1), Some(&2));
        c.retain(|_| false);
        assert!(c.is_empty() && c.get(0).is_none());
    }
}
