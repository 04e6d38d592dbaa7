//! JSON that common tools read exactly.
//!
//! Times are nanoseconds since the epoch, around 1.8e18: above 2^53, where tools that hold
//! every JSON number as an IEEE double (jq 1.6, JavaScript, many spreadsheets) round them
//! by up to 256 ns. Every absolute time key (`ts_ns`, `start_ns`, `end_ns`, `first_ns`,
//! `last_ns`) therefore gets a twin without the `_ns` suffix holding the same instant as a
//! decimal-seconds string (`"1767225600.069102700"`, as tshark's `frame.time_epoch`), written
//! right after it: `"ts_ns":1767225600069102700,"ts":"1767225600.069102700"`. A `null` time
//! has a `null` twin.
//!
//! The twins are added while serialising (a [`serde_json::ser::Formatter`] that watches the
//! keys go by), so the documents stream as before and the analyzer's types stay as they are.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::{self, Write};

/// Keys holding an absolute time in ns since the epoch.
const TIME_KEYS: &[&[u8]] = &[b"ts_ns", b"start_ns", b"end_ns", b"first_ns", b"last_ns"];

/// `seconds.nanoseconds` since the epoch, exactly: `1767225600.069102700`, `-0.000000001`.
pub fn epoch_secs(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

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

/// Serialise `value` as compact JSON with time twins into `out`.
pub fn to_writer<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, ExactFormatter::default());
    value.serialize(&mut ser)
}

/// Serialise `value` as compact JSON with time twins.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut v = Vec::with_capacity(256);
    to_writer(&mut v, value)?;
    Ok(v)
}

/// Serialised JSON with every character [`rocescope_capture::text::is_unsafe`] calls unsafe
/// written as a `\uXXXX` escape. serde escapes only U+0000..U+001F; DEL, the C1 controls
/// (U+0080..U+009F, which some terminals obey) and the bidi overrides would reach the
/// terminal raw. Such characters only occur inside strings (raw white space between tokens,
/// which serde escapes inside them, stays), so the document reads back the same.
pub fn json_safe(json: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_in_json = |c: char| rocescope_capture::text::is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t');
    if !json.contains(unsafe_in_json) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_in_json(c) {
            // Every such character is in the Basic Multilingual Plane: one escape.
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Inner {
        ts_ns: i64,
        what: &'static str,
        quanta: [u16; 2],
    }

    #[derive(Serialize)]
    struct Doc {
        start_ns: Option<i64>,
        end_ns: Option<i64>,
        paused_ns: i64,
        first_ns: u64,
        evidence: Vec<Inner>,
        last_ns: i64,
    }

    #[test]
    fn every_time_key_gets_an_exact_twin() {
        let d = Doc {
            start_ns: Some(1_767_225_600_069_102_700),
            end_ns: None,
            paused_ns: 9_024_000,
            first_ns: 5,
            evidence: vec![Inner { ts_ns: -1, what: "x", quanta: [1, 2] }],
            last_ns: 1_767_225_600_000_000_001,
        };
        let s = String::from_utf8(to_vec(&d).unwrap()).unwrap();
        assert_eq!(
            s,
            r#"{"start_ns":1767225600069102700,"start":"1767225600.069102700","end_ns":null,"end":null,"paused_ns":9024000,"first_ns":5,"first":"0.000000005","evidence":[{"ts_ns":-1,"ts":"-0.000000001","what":"x","quanta":[1,2]}],"last_ns":1767225600000000001,"last":"1767225600.000000001"}"#
        );
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["start"], "1767225600.069102700");
    }

    #[test]
    fn strings_are_made_terminal_safe_on_the_way() {
        let doc = serde_json::json!({"points": ["a\x1b\u{9b}b", "\u{202e}c\u{7f}", "é"], "n": 1});
        let text = String::from_utf8(to_vec(&doc).unwrap()).unwrap();
        assert_eq!(text, r#"{"n":1,"points":["a\u001b\u009bb","\u202ec\u007f","é"]}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), doc);
    }
}
