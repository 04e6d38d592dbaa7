//! A struct's keys, encoded once: `"packets":` is looked up by the key's address and
//! copied whole. A report of 20,000 flows writes 2.5 million keys out of a few hundred
//! distinct ones; encoding each again (the escape check, the quotes, the time-key check) was
//! most of the writer's work.
//!
//! The keys serde hands a serializer for a struct's fields and variants are `&'static str`:
//! text that never changes, so its address and length name it. The table is open-addressed
//! (linear probing) and only filled to half: a program has a few hundred such keys; past
//! that, a key is encoded each time, nothing more. Tables are kept per thread between
//! documents (a `decode --json` writes one small document per frame).

use super::escape::{self, KeyRuns};
use std::cell::Cell;

/// Room for an encoded key (`"key":`); a longer key is encoded each time.
const ROOM: usize = 46;
/// Slots of the table (a power of two).
const SLOTS: usize = 1024;
/// Keys kept at most (half the slots: probes stay short).
const KEPT: usize = SLOTS / 2;
/// `time` of a key that is no time key.
const NOT_TIME: u8 = u8::MAX;

/// One key, encoded.
#[derive(Clone, Copy)]
struct Slot {
    /// The key's address (0: empty slot) and length.
    addr: usize,
    len: usize,
    /// `"key":`, then padding.
    text: [u8; ROOM],
    /// Bytes of `text` used.
    used: u8,
    /// Its index in the time keys, or [`NOT_TIME`].
    time: u8,
}

const EMPTY: Slot = Slot { addr: 0, len: 0, text: [0; ROOM], used: 0, time: NOT_TIME };

thread_local! {
    /// The table of the last writer on this thread, for the next.
    static SPARE: Cell<Option<(Vec<Slot>, usize)>> = const { Cell::new(None) };
}

/// The encoded keys of one writer.
pub(super) struct Keys {
    /// [`SLOTS`] slots once a key was written (empty until then).
    slots: Vec<Slot>,
    /// Keys kept.
    kept: usize,
}

impl Keys {
    pub(super) fn new() -> Keys {
        let (slots, kept) = SPARE.with(Cell::take).unwrap_or_default();
        Keys { slots, kept }
    }

    /// Write `"key":` into `buf`; the key's time key index, when it is one.
    #[inline]
    pub(super) fn write(&mut self, buf: &mut Vec<u8>, key: &'static str) -> Option<u8> {
        let addr = key.as_ptr() as usize;
        let mut i = slot_of(addr);
        while let Some(s) = self.slots.get(i) {
            if s.addr == addr && s.len == key.len() {
                let at = buf.len();
                // The whole slot (a fixed-size copy), then cut back to the key.
                buf.extend_from_slice(&s.text);
                buf.truncate(at + usize::from(s.used));
                return (s.time != NOT_TIME).then_some(s.time);
            }
            if s.addr == 0 {
                break;
            }
            i = (i + 1) % SLOTS;
        }
        self.miss(buf, key, i)
    }

    /// A key not in the table: encoded, written, and kept in slot `i` (the empty slot its
    /// probe ended on) when it fits and the table has room.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, buf: &mut Vec<u8>, key: &'static str, i: usize) -> Option<u8> {
        let at = buf.len();
        buf.push(b'"');
        let time = if escape::plain(key.as_bytes()) {
            buf.extend_from_slice(key.as_bytes());
            escape::time_key(key.as_bytes())
        } else {
            let mut runs = KeyRuns::default();
            escape::push_escaped(buf, key, Some(&mut runs));
            runs.time
        };
        buf.extend_from_slice(b"\":");
        let encoded = buf.get(at..).unwrap_or_default();
        if encoded.len() <= ROOM && !key.is_empty() && self.kept < KEPT {
            let i = if self.slots.is_empty() {
                self.slots = vec![EMPTY; SLOTS];
                slot_of(key.as_ptr() as usize)
            } else {
                i
            };
            if let Some(s) = self.slots.get_mut(i).filter(|s| s.addr == 0) {
                self.kept += 1;
                let mut text = [0; ROOM];
                if let Some(t) = text.get_mut(..encoded.len()) {
                    t.copy_from_slice(encoded);
                }
                *s = Slot {
                    addr: key.as_ptr() as usize,
                    len: key.len(),
                    text,
                    used: encoded.len() as u8,
                    time: time.unwrap_or(NOT_TIME),
                };
            }
        }
        time
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        if !slots.is_empty() {
            SPARE.with(|s| s.set(Some((slots, self.kept))));
        }
    }
}

/// The slot of a key's address (Fibonacci hashing: neighbouring addresses spread).
#[inline(always)]
fn slot_of(addr: usize) -> usize {
    let h = (addr as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_still_writes_every_key() {
        let mut k = Keys::new();
        let many: Vec<&'static str> = (0..KEPT + 50).map(|i| &*format!("k{i}_ns").leak()).collect();
        for _ in 0..2 {
            for key in &many {
                let mut buf = Vec::new();
                assert_eq!(k.write(&mut buf, key), None);
                assert_eq!(buf, format!("\"{key}\":").into_bytes());
            }
        }
        assert_eq!(k.kept, KEPT);
        assert_eq!(k.slots.iter().filter(|s| s.addr != 0).count(), KEPT);
    }

    #[test]
    fn keys_are_written_the_same_from_the_table() {
        let mut k = Keys::new();
        let long: &'static str = "a_key_longer_than_the_room_of_a_slot_in_the_table_ns";
        for _ in 0..3 {
            let mut buf = Vec::new();
            assert_eq!(k.write(&mut buf, "packets"), None);
            assert_eq!(k.write(&mut buf, "first_ns"), Some(3));
            assert_eq!(k.write(&mut buf, "a\"b\u{9b}"), None);
            assert_eq!(k.write(&mut buf, long), None);
            assert_eq!(k.write(&mut buf, ""), None);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                format!("\"packets\":\"first_ns\":\"a\\\"b\\u009b\":\"{long}\":\"\":")
            );
        }
    }
}
