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
//! The twins are added while serialising, so the documents stream and the analyzer's types
//! stay as they are. Strings are made terminal-safe on the way ([`json_safe`]).
//!
//! Two writers give the same bytes:
//! - [`to_writer`] and [`to_vec`]: a serde [`Serializer`](serde::Serializer) of its own
//!   ([`Writer`]), written for speed: a struct's keys go out as one copy each after a
//!   word-at-a-time check that they need no escape, numbers through `itoa`, strings with
//!   nothing to escape copied whole, everything into one buffer flushed in large writes.
//!   A report of 100,000 QPs writes a gigabyte of keys and numbers: this is what made the
//!   end of `report --json` cost more than reading the capture.
//! - [`legacy`]: the same document through `serde_json` and a
//!   [`Formatter`](serde_json::ser::Formatter) that watches the keys go by
//!   ([`ExactFormatter`]). Slower (every key escaped byte by byte, then scanned again);
//!   kept as the reference the tests compare the fast writer with, byte for byte.

mod escape;
mod flows;
mod keys;
pub mod legacy;
mod parallel;
mod report;
mod writer;

pub use legacy::ExactFormatter;
pub use writer::Writer;

use rocescope_analyzer::report::StreamedReport;
use serde::Serialize;
use std::io::Write;

/// Keys holding an absolute time in ns since the epoch.
const TIME_KEYS: &[&[u8]] = &[b"ts_ns", b"start_ns", b"end_ns", b"first_ns", b"last_ns"];

/// `seconds.nanoseconds` since the epoch, exactly: `1767225600.069102700`, `-0.000000001`.
pub fn epoch_secs(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// Serialise `value` as compact JSON with time twins into `out` (buffered here: `out` gets
/// writes of 64 KiB or so, and needs no buffer of its own).
pub fn to_writer<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> serde_json::Result<()> {
    let mut w = Writer::new(out);
    value.serialize(&mut w)?;
    w.finish().map(|_| ()).map_err(serde_json::Error::io)
}

/// Serialise the report as `report --json` writes it into `out` (buffered here): the bytes
/// [`to_writer`] writes for it, its flows' entries written by hand as they are built (at
/// many QPs they are nine in ten of the bytes).
pub fn report_to_writer<W: Write>(out: W, report: &StreamedReport<'_>) -> serde_json::Result<()> {
    report_to_writer_threads(out, report, 1)
}

/// [`report_to_writer`] with the flows' entries built and formatted on `threads` threads
/// (the same bytes; issue 39): what `report --threads N --json` does after its shards merge.
pub fn report_to_writer_threads<W: Write>(
    out: W,
    report: &StreamedReport<'_>,
    threads: usize,
) -> serde_json::Result<()> {
    let mut w = Writer::new(out);
    report::write(&mut w, report, threads)?;
    w.finish().map(|_| ()).map_err(serde_json::Error::io)
}

/// Serialise `value` as compact JSON with time twins.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut w = Writer::in_memory();
    value.serialize(&mut w)?;
    Ok(w.into_buffer())
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
mod tests;
