//! Errors from opening and reading capture files, phrased for the person at the terminal.
//!
//! Every error about a file names it (through [`crate::text::path`], so control characters
//! in the name are escaped, never printed raw), says what is wrong, and for damage found
//! part-way says where: the byte offset (in the decompressed capture when it is gzip) and how
//! many records were read before it. Each message says all of that once: callers print it
//! as it is, without adding the name or the counts again.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What went wrong with a capture source.
#[derive(Debug)]
pub enum CaptureError {
    /// The file could not be opened or read at all (no such file, no permission, a
    /// directory), or the inputs cannot be read together. Not damage: nothing was read.
    Io {
        /// The source's name (a path, or "-" for standard input).
        source_name: PathBuf,
        /// The OS error.
        error: io::Error,
    },
    /// The input is empty.
    Empty {
        /// The source's name.
        source_name: PathBuf,
    },
    /// The input is neither pcap nor pcapng.
    NotACapture {
        /// The source's name.
        source_name: PathBuf,
        /// The first bytes (after gzip decompression when `compressed`), to help recognise
        /// what it is.
        magic: [u8; 4],
        /// The input was gzip, and what it decompressed to is not a capture.
        compressed: bool,
    },
    /// The file ends in the middle of a record (or of its file header, at offset 0).
    Truncated {
        /// The source's name.
        source_name: PathBuf,
        /// Byte offset of the incomplete record.
        offset: u64,
        /// Records read before it.
        records: u64,
    },
    /// A record or block cannot be parsed.
    Corrupt {
        /// The source's name.
        source_name: PathBuf,
        /// Byte offset of the bad record or block.
        offset: u64,
        /// Records read before it.
        records: u64,
        /// What is wrong.
        detail: String,
    },
    /// The gzip stream ends before its end: a file cut off while being written or copied.
    /// The records decompressed before the cut were read.
    GzipCutOff {
        /// The source's name.
        source_name: PathBuf,
        /// Where the decompressed capture stops being whole: the byte offset (in the
        /// decompressed capture) of the first record not read.
        offset: u64,
        /// Records read before it.
        records: u64,
    },
    /// The gzip stream is damaged (bad header, bad compressed data, checksum mismatch).
    /// The records decompressed before the damage was found were read.
    GzipCorrupt {
        /// The source's name.
        source_name: PathBuf,
        /// Byte offset in the decompressed capture of the first record not read.
        offset: u64,
        /// Records read before it.
        records: u64,
        /// What is wrong with the stream.
        detail: String,
    },
    /// Reading failed part-way (an I/O error from the disk or the pipe).
    Read {
        /// The source's name.
        source_name: PathBuf,
        /// Byte offset of the first record not read.
        offset: u64,
        /// Records read before it.
        records: u64,
        /// The OS error.
        error: io::Error,
    },
    /// A live capture could not be opened or failed.
    Live {
        /// The interface.
        interface: String,
        /// What happened and what to do about it.
        detail: String,
    },
    /// Dropping privileges (`-Z USER`) failed.
    Privileges {
        /// What happened.
        detail: String,
    },
}

impl CaptureError {
    /// True when the input could be opened but what it holds is damaged or not a capture
    /// (empty, not a capture, cut off, corrupt, a bad gzip stream, a read failing part-way):
    /// among several merged files, such a file is named and the others are read whole. False
    /// for a file that cannot be opened at all (a mistyped path is a mistake to fix before
    /// anything is read) and for live capture errors.
    pub fn is_damaged_input(&self) -> bool {
        !matches!(self, CaptureError::Io { .. } | CaptureError::Live { .. } | CaptureError::Privileges { .. })
    }
}

/// A source's name as messages print it: `-` is standard input; a path is
/// [`crate::text::path`]-escaped.
pub fn source_display(p: &Path) -> String {
    if p == Path::new("-") {
        String::from("standard input")
    } else {
        crate::text::path(p)
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Io { source_name, error } => {
                write!(f, "cannot read {}: {error}", source_display(source_name))
            }
            CaptureError::Empty { source_name } => {
                write!(f, "{} is empty: not a pcap or pcapng capture", source_display(source_name))
            }
            CaptureError::NotACapture { source_name, magic, compressed } => write!(
                f,
                "{} is not a pcap or pcapng capture ({}starts with {:02x} {:02x} {:02x} {:02x})",
                source_display(source_name),
                if *compressed { "gzip-compressed; decompressed, it " } else { "" },
                magic[0],
                magic[1],
                magic[2],
                magic[3]
            ),
            CaptureError::Live { interface, detail } => {
                write!(f, "cannot capture on {interface:?}: {detail}")
            }
            CaptureError::Privileges { detail } => write!(f, "cannot drop privileges: {detail}"),
            CaptureError::Truncated { source_name, offset: 0, records: 0 } => write!(
                f,
                "{}: capture is cut off: its file header (at byte 0) is incomplete, no record could be read",
                source_display(source_name)
            ),
            CaptureError::Truncated { source_name, offset, records: 0 } => write!(
                f,
                "{}: capture is cut off: its first record (at byte {offset}) is incomplete, no record could be read",
                source_display(source_name)
            ),
            CaptureError::Truncated { source_name, offset, records } => write!(
                f,
                "{}: capture is cut off: the record at byte {offset} is incomplete (after {})",
                source_display(source_name),
                plural(*records)
            ),
            CaptureError::Corrupt { source_name, offset, records, detail } => write!(
                f,
                "{}: capture is corrupt at byte {offset}: {detail} ({})",
                source_display(source_name),
                after(*records)
            ),
            CaptureError::GzipCutOff { source_name, offset, records } => write!(
                f,
                "{}: gzip stream is cut off {} (byte {offset} of the decompressed capture)",
                source_display(source_name),
                after(*records)
            ),
            CaptureError::GzipCorrupt { source_name, offset, records, detail } => write!(
                f,
                "{}: gzip stream is corrupt {} (byte {offset} of the decompressed capture): {detail}",
                source_display(source_name),
                after(*records)
            ),
            CaptureError::Read { source_name, offset, records, error } => write!(
                f,
                "{}: read failed {} (byte {offset}): {error}",
                source_display(source_name),
                after(*records)
            ),
        }
    }
}

/// Every message is complete on its own (the OS error is part of `Io`'s text), so no error
/// names a `source()`: a chain printer (`anyhow`'s `{:#}`) would say the OS error twice.
impl std::error::Error for CaptureError {}

/// "1 record", "2 records".
/// "after 3 records", or "before any record" for none (never "after 0 records").
pub(crate) fn after(n: u64) -> String {
    if n == 0 {
        String::from("before any record")
    } else {
        format!("after {}", plural(n))
    }
}

pub(crate) fn plural(n: u64) -> String {
    if n == 1 {
        String::from("1 record")
    } else {
        format!("{n} records")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_message_names_the_file_once_and_escapes_it() {
        let name = PathBuf::from("/tmp/\x1b]0;x\x07.pcap");
        let shown = "/tmp/\\x1b]0;x\\x07.pcap";
        let errors = [
            CaptureError::Io { source_name: name.clone(), error: io::Error::other("boom") },
            CaptureError::Empty { source_name: name.clone() },
            CaptureError::NotACapture { source_name: name.clone(), magic: *b"abcd", compressed: true },
            CaptureError::Truncated { source_name: name.clone(), offset: 0, records: 0 },
            CaptureError::Truncated { source_name: name.clone(), offset: 40, records: 1 },
            CaptureError::Corrupt { source_name: name.clone(), offset: 40, records: 2, detail: "x".into() },
            CaptureError::GzipCutOff { source_name: name.clone(), offset: 40, records: 2 },
            CaptureError::GzipCorrupt {
                source_name: name.clone(),
                offset: 0,
                records: 0,
                detail: "y".into(),
            },
            CaptureError::Read { source_name: name, offset: 9, records: 3, error: io::Error::other("eio") },
        ];
        for e in &errors {
            let text = e.to_string();
            assert_eq!(text.matches(shown).count(), 1, "{text}");
            assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
            assert!(e.is_damaged_input() != matches!(e, CaptureError::Io { .. }), "{text}");
        }
        assert_eq!(
            errors[6].to_string(),
            format!("{shown}: gzip stream is cut off after 2 records (byte 40 of the decompressed capture)")
        );
        assert_eq!(
            CaptureError::Empty { source_name: PathBuf::from("-") }.to_string(),
            "standard input is empty: not a pcap or pcapng capture"
        );
        let live = CaptureError::Live { interface: "e\x1bth0".into(), detail: "down".into() };
        assert_eq!(live.to_string(), "cannot capture on \"e\\u{1b}th0\": down");
        assert!(!live.is_damaged_input());
    }
}
