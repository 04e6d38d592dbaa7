//! Errors from opening and reading capture files, phrased for the person at the terminal.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What went wrong with a capture source.
#[derive(Debug)]
pub enum CaptureError {
    /// The file could not be opened or read.
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
        /// The first bytes, to help recognise what it is.
        magic: [u8; 4],
    },
    /// The file ends in the middle of a record.
    Truncated {
        /// Byte offset of the incomplete record.
        offset: u64,
        /// Records read before it.
        records: u64,
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
    /// A record or block cannot be parsed.
    Corrupt {
        /// Byte offset of the bad record or block.
        offset: u64,
        /// Records read before it.
        records: u64,
        /// What is wrong.
        detail: String,
    },
    /// One of several merged files failed (`-r a -r b`).
    InFile {
        /// The file's capture-point name.
        name: String,
        /// What went wrong with it.
        error: Box<CaptureError>,
    },
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Io { source_name, error } => {
                write!(f, "cannot read {}: {}", source_name.display(), error)
            }
            CaptureError::Empty { source_name } => {
                write!(f, "{} is empty: not a pcap or pcapng capture", source_name.display())
            }
            CaptureError::NotACapture { source_name, magic } => write!(
                f,
                "{} is not a pcap or pcapng capture (starts with {:02x} {:02x} {:02x} {:02x})",
                source_name.display(),
                magic[0],
                magic[1],
                magic[2],
                magic[3]
            ),
            CaptureError::Live { interface, detail } => {
                write!(f, "cannot capture on {interface:?}: {detail}")
            }
            CaptureError::Privileges { detail } => write!(f, "cannot drop privileges: {detail}"),
            CaptureError::Truncated { offset, records } => write!(
                f,
                "capture is cut off: the record at byte {offset} is incomplete (after {})",
                plural(*records)
            ),
            CaptureError::Corrupt { offset, records, detail } => {
                write!(f, "capture is corrupt at byte {offset}: {detail} (after {})", plural(*records))
            }
            CaptureError::InFile { name, error } => write!(f, "{name}: {error}"),
        }
    }
}

/// Every message is complete on its own (the OS error is part of `Io`'s text), so no error
/// names a `source()`: a chain printer (`anyhow`'s `{:#}`) would say the OS error twice.
impl std::error::Error for CaptureError {}

fn plural(n: u64) -> String {
    if n == 1 {
        String::from("1 record")
    } else {
        format!("{n} records")
    }
}
