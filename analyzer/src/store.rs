//! Flow storage in fixed chunks: a flow never moves once stored, and growing the store never
//! copies more than one chunk or leaves half of a doubled `Vec` empty. With a `Vec<Flow>` a
//! million flows spent up to a million flows' worth of unused capacity (and a copy of all of
//! them at each doubling); here only the last chunk has room to spare.

use crate::flow::Flow;

/// Flows per chunk.
const CHUNK: usize = 1024;

/// The analysis' flows, indexed by flow id (the order they were first seen).
#[derive(Debug, Default)]
pub struct FlowStore {
    chunks: Vec<Vec<Flow>>,
    len: usize,
}

impl FlowStore {
    /// Number of flows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Flow `id`.
    pub fn get(&self, id: usize) -> Option<&Flow> {
        self.chunks.get(id / CHUNK).and_then(|c| c.get(id % CHUNK))
    }

    /// Flow `id`, to change.
    pub fn get_mut(&mut self, id: usize) -> Option<&mut Flow> {
        self.chunks.get_mut(id / CHUNK).and_then(|c| c.get_mut(id % CHUNK))
    }

    /// Store a flow; its id is the previous [`FlowStore::len`].
    pub(crate) fn push(&mut self, f: Flow) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(f),
            // A chunk grows by doubling up to its full size (a small analysis holds small
            // chunks), then the next starts.
            _ => self.chunks.push(vec![f]),
        }
        self.len += 1;
    }

    /// The flows in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Flow> + Clone {
        self.chunks.iter().flatten()
    }

    /// The flows in id order, to change.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Flow> {
        self.chunks.iter_mut().flatten()
    }
}

impl IntoIterator for FlowStore {
    type Item = Flow;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<Flow>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

impl FromIterator<Flow> for FlowStore {
    fn from_iter<I: IntoIterator<Item = Flow>>(iter: I) -> Self {
        let mut s = FlowStore::default();
        for f in iter {
            s.push(f);
        }
        s
    }
}
