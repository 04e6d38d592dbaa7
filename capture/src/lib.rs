//! # rocescope-capture
//!
//! Capture sources and sinks for rocescope. Today: reading pcap (micro- and nanosecond,
//! either byte order) and pcapng (several interfaces, each with its own link type and
//! timestamp resolution) from files, standard input or gzip-compressed files; writing
//! classic pcap. Every source yields the same [`Record`]: timestamp, lengths, link type,
//! interface and bytes, which the decoder and analyzer consume.
//!
//! A damaged file yields the records before the damage, then a [`CaptureError`] that says
//! where and what.
#![forbid(unsafe_code)]

pub mod error;
pub mod reader;
pub mod writer;

pub use error::CaptureError;
pub use reader::{CaptureReader, Format, Interface, Record};
pub use writer::PcapWriter;
