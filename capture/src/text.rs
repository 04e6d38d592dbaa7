//! Names from the outside world (file names, interface names) made safe to print.
//!
//! A file name may hold any byte but `/` and NUL, including ESC: printed raw, a name such as
//! `"\x1b]0;owned\x07.pcap"` sets the terminal's title, and one with `\r` hides text before
//! it. Every place that prints such a name (messages, report headers, the TUI) goes through
//! [`escape`] or [`path`], which write control characters as `\x1b`-style escapes (as
//! `ls --quoting-style=escape` and Rust's `{:?}` do) and leave every other character as is.

use std::fmt;
use std::path::Path;

/// `s` with its control characters (C0, DEL, C1) and the Unicode bidi overrides written as
/// escapes: `\t`, `\n`, `\r`, `\\x1b`, `\u{202e}`. A backslash stays a backslash, so an
/// ordinary Windows-style or odd name reads as typed.
pub fn escape(s: &str) -> Escaped<'_> {
    Escaped(s)
}

/// A path, lossily decoded (invalid UTF-8 as U+FFFD) and [`escape`]d.
pub fn path(p: &Path) -> String {
    escape(&p.to_string_lossy()).to_string()
}

/// Display adapter returned by [`escape`].
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(&'a str);

/// True for characters that change what a terminal shows rather than being shown.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(is_unsafe) {
            f.write_str(&rest[..i])?;
            let c = rest[i..].chars().next().unwrap_or(' ');
            match c {
                '\t' => f.write_str("\\t")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                c if (c as u32) < 0x100 => write!(f, "\\x{:02x}", c as u32)?,
                c => write!(f, "\\u{{{:x}}}", c as u32)?,
            }
            rest = &rest[i + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("a\x1b]0;x\x07b.pcap").to_string(), "a\\x1b]0;x\\x07b.pcap");
        assert_eq!(escape("tab\there\r\n").to_string(), "tab\\there\\r\\n");
        assert_eq!(escape("\u{9b}\u{202e}gpj.pcap").to_string(), "\\x9b\\u{202e}gpj.pcap");
        assert_eq!(escape("plain/ünïcode C:\\x.pcap").to_string(), "plain/ünïcode C:\\x.pcap");
        assert_eq!(path(Path::new("/tmp/\x1bx")), "/tmp/\\x1bx");
    }
}
