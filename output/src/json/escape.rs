//! Strings as the document writes them: serde_json's escapes (`\"`, `\\`, `\n`, `\u001b`,
//! ...) and, inside the runs between them, the terminal-unsafe characters as `\uXXXX`
//! ([`super::json_safe`]). Most strings (every key of the report, addresses, names) need
//! none of it: [`plain`] says so eight bytes at a time, and they are copied whole.

use super::TIME_KEYS;

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The top bit of every byte.
const TOPS: u64 = 0x8080_8080_8080_8080;

/// Top bit set in some byte where `x` has a byte equal to `b` (exact as to whether any
/// byte is: the borrow can only mark bytes above a true one).
#[inline(always)]
fn has_byte(x: u64, b: u8) -> u64 {
    let y = x ^ (ONES * u64::from(b));
    y.wrapping_sub(ONES) & !y
}

/// Nonzero when one of the 8 bytes of `x` needs more than a copy: a control character
/// (below 0x20), `"`, `\`, DEL, or any byte of a non-ASCII character (which may be a C1
/// control or a bidi override: looked at one by one).
#[inline(always)]
fn special(x: u64) -> u64 {
    let below_space = x.wrapping_sub(ONES * 0x20) & !x;
    (below_space | has_byte(x, b'"') | has_byte(x, b'\\') | has_byte(x, 0x7f) | x) & TOPS
}

/// Whether `b` can be written between quotes as it is: printable ASCII but `"` and `\`.
#[inline]
pub(super) fn plain(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    let mut bad = 0;
    for c in &mut chunks {
        if let Ok(w) = <[u8; 8]>::try_from(c) {
            bad |= special(u64::from_le_bytes(w));
        }
    }
    bad == 0 && chunks.remainder().iter().all(|&c| PLAIN.get(usize::from(c)).copied().unwrap_or(false))
}

/// [`plain`] for one byte.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0x20;
    while c < 0x7f {
        t[c] = c != b'"' as usize && c != b'\\' as usize;
        c += 1;
    }
    t
};

/// The index in [`TIME_KEYS`] of a key written in one unescaped run, when it is one.
#[inline]
pub(super) fn time_key(b: &[u8]) -> Option<u8> {
    if b.len() < 5 || !b.ends_with(b"_ns") {
        return None;
    }
    TIME_KEYS.iter().position(|k| *k == b).and_then(|i| u8::try_from(i).ok())
}

/// Which time key a key is, followed as serde_json hands a key to a formatter: in runs of
/// characters with no escape between them (`write_string_fragment`). A key is a time key
/// when it came in exactly one run and that run is one (what the reference writer,
/// [`super::ExactFormatter`], checks: a key with escapes around a time key's name counts).
#[derive(Default)]
pub(super) struct KeyRuns {
    /// Runs so far.
    runs: u8,
    /// The time key the runs make, so far.
    pub(super) time: Option<u8>,
}

impl KeyRuns {
    fn run(&mut self, run: &[u8]) {
        self.runs = self.runs.saturating_add(1);
        self.time = if self.runs == 1 { time_key(run) } else { None };
    }
}

/// serde_json's short escapes, by byte (0: none); `u` for `\u00XX`.
fn short_escape(b: u8) -> u8 {
    match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        0x00..=0x1f => b'u',
        _ => 0,
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `\uXXXX` for a character of the Basic Multilingual Plane.
fn push_u_escape(out: &mut Vec<u8>, c: u32) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX.get(((c >> shift) & 0xf) as usize).copied().unwrap_or(b'0'));
    }
}

/// A run with no serde escape in it, its unsafe characters as `\uXXXX` (as
/// [`super::json_safe`] writes them).
fn push_run(out: &mut Vec<u8>, run: &str) {
    let b = run.as_bytes();
    // Only DEL and the lead bytes of U+0080..U+009F and U+2000..U+2FFF can start an unsafe
    // character.
    if !b.iter().any(|&c| c == 0x7f || c == 0xc2 || c == 0xe2) {
        out.extend_from_slice(b);
        return;
    }
    let mut buf = [0u8; 4];
    for c in run.chars() {
        if rocescope_capture::text::is_unsafe(c) {
            push_u_escape(out, u32::from(c));
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// `s`'s characters escaped (no quotes), as serde_json and the reference formatter write
/// them, following the runs for a key when `key` is given.
pub(super) fn push_escaped(out: &mut Vec<u8>, s: &str, mut key: Option<&mut KeyRuns>) {
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let e = short_escape(c);
        if e == 0 {
            continue;
        }
        // Escapes are ASCII: `start..i` falls on character boundaries.
        if let Some(run) = s.get(start..i).filter(|r| !r.is_empty()) {
            push_run(out, run);
            if let Some(k) = key.as_deref_mut() {
                k.run(run.as_bytes());
            }
        }
        if e == b'u' {
            push_u_escape(out, u32::from(c));
        } else {
            out.extend_from_slice(&[b'\\', e]);
        }
        start = i + 1;
    }
    if let Some(run) = s.get(start..).filter(|r| !r.is_empty()) {
        push_run(out, run);
        if let Some(k) = key {
            k.run(run.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain test against the byte-by-byte rule, on every byte in every position of
    /// strings of 1 to 17 bytes (the word-at-a-time arithmetic and the padded tail).
    #[test]
    fn plain_is_the_byte_rule() {
        let rule = |b: &[u8]| b.iter().all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\');
        for len in 1..=17usize {
            for pos in 0..len {
                for byte in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    if let Some(x) = s.get_mut(pos) {
                        *x = byte;
                    }
                    assert_eq!(plain(&s), rule(&s), "{s:?}");
                    // Next to a byte that borrows (0x00, 0x20).
                    if let Some(x) = s.get_mut(len - 1 - pos) {
                        *x = if byte % 2 == 0 { 0x20 } else { 0x21 };
                    }
                    assert_eq!(plain(&s), rule(&s), "{s:?}");
                }
            }
        }
        assert!(plain(b""));
    }

    #[test]
    fn keys_around_escapes_are_followed_as_runs() {
        let runs = |s: &str| {
            let mut k = KeyRuns::default();
            let mut out = Vec::new();
            push_escaped(&mut out, s, Some(&mut k));
            (k.time, String::from_utf8(out).unwrap())
        };
        assert_eq!(runs("ts_ns"), (Some(0), "ts_ns".into()));
        assert_eq!(runs("\"last_ns\n"), (Some(4), "\\\"last_ns\\n".into()));
        assert_eq!(runs("a\"ts_ns"), (None, "a\\\"ts_ns".into()));
        assert_eq!(runs("ts_ns\u{7f}"), (None, "ts_ns\\u007f".into()));
        assert_eq!(runs("\u{1}\u{9b}\u{202e}é"), (None, "\\u0001\\u009b\\u202eé".into()));
    }
}
