//! The reference writer: the document through `serde_json`, with a
//! [`Formatter`] that adds the time twins and escapes unsafe
//! characters as the keys and strings go by ([`ExactFormatter`]). It is what
//! [`super::to_writer`] replaced (the same bytes at a fifth of the cost or less); it stays
//! as the reference the tests compare that writer with, byte for byte.

use super::{epoch_secs, json_safe, TIME_KEYS};
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::{self, Write};

/// A compact formatter that writes a decimal-seconds twin after every absolute time key.
#[derive(Default)]
pub struct ExactFormatter {
    /// The key being written, or the last one written, when it is a time key: its index in
    /// [`TIME_KEYS`] (keys are checked as they go by, not copied: a report with many flows
    /// writes millions of keys).
    key: Option<usize>,
    /// Fragments of the key being written so far (a time key is one fragment: no escapes).
    key_fragments: u8,
    /// Inside a key's string.
    in_key: bool,
    /// The current value belongs to a time key (a scalar directly under it).
    time_value: bool,
    /// The twin to write when the value ends: `Some(None)` for a null time.
    twin: Option<Option<i64>>,
}

impl ExactFormatter {
    fn scalar(&mut self, v: Option<i64>) {
        if self.time_value {
            self.twin = Some(v);
        }
    }
}

impl Formatter for ExactFormatter {
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.key = None;
        self.key_fragments = 0;
        self.in_key = true;
        CompactFormatter.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.in_key = false;
        self.time_value = self.key.is_some();
        CompactFormatter.end_object_key(w)
    }

    /// Strings are also made terminal-safe here ([`json_safe`]: DEL, C1 controls
    /// and bidi overrides as `\uXXXX`), fragment by fragment, so the document can go to a
    /// plain buffered writer: a writer filtering every write on its way out, as before, cost
    /// more than serialising (a 33 MB report: 1.9 G instructions, 1.2 G now).
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if self.in_key {
            // A time key ends in `_ns` and comes whole, in one fragment.
            self.key_fragments = self.key_fragments.saturating_add(1);
            let b = fragment.as_bytes();
            self.key = if self.key_fragments == 1 && b.ends_with(b"_ns") {
                TIME_KEYS.iter().position(|k| *k == b)
            } else {
                None
            };
        }
        // Only DEL and the lead bytes of U+0080..U+009F and U+2000..U+2FFF can start an
        // unsafe character: most fragments pass straight through.
        // Keys and most values are short: a plain scan beats memchr's set-up there.
        let b = fragment.as_bytes();
        let unsafe_start = if b.len() < 64 {
            b.iter().any(|&c| c == 0x7f || c == 0xc2 || c == 0xe2)
        } else {
            memchr::memchr3(0x7f, 0xc2, 0xe2, b).is_some()
        };
        if unsafe_start {
            w.write_all(json_safe(fragment).as_bytes())
        } else {
            w.write_all(fragment.as_bytes())
        }
    }

    fn write_i64<W: ?Sized + Write>(&mut self, w: &mut W, value: i64) -> io::Result<()> {
        self.scalar(Some(value));
        CompactFormatter.write_i64(w, value)
    }

    fn write_u64<W: ?Sized + Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        self.scalar(i64::try_from(value).ok());
        CompactFormatter.write_u64(w, value)
    }

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.scalar(None);
        CompactFormatter.write_null(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.time_value = false;
        CompactFormatter.begin_object(w)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.time_value = false;
        CompactFormatter.begin_array(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.time_value = false;
        CompactFormatter.end_object_value(w)?;
        if let Some(twin) = self.twin.take() {
            // The key is plain ASCII ending in `_ns`; the twin drops the suffix.
            let key = self.key.and_then(|i| TIME_KEYS.get(i)).copied().unwrap_or(b"_ns");
            let name = key.get(..key.len().saturating_sub(3)).unwrap_or_default();
            w.write_all(b",\"")?;
            w.write_all(name)?;
            w.write_all(b"\":")?;
            match twin {
                Some(ns) => write!(w, "\"{}\"", epoch_secs(ns))?,
                None => w.write_all(b"null")?,
            }
        }
        Ok(())
    }
}

/// Serialise `value` as compact JSON with time twins into `out`, through `serde_json`.
pub fn to_writer<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, ExactFormatter::default());
    value.serialize(&mut ser)
}

/// Serialise `value` as compact JSON with time twins, through `serde_json`.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut v = Vec::with_capacity(256);
    to_writer(&mut v, value)?;
    Ok(v)
}
