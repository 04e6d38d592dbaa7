//! # rocescope-capture
//!
//! Capture sources and sinks for rocescope: live interfaces through libpcap (with the RoCE
//! capture filter, drop counters and actionable errors), pcap and pcapng files (several
//! interfaces, each with its own link type and timestamp resolution; either byte order;
//! gzip-compressed; standard input), and writers for pcapng and classic pcap with
//! dumpcap-style ring buffers. Every source yields the same [`Record`], which the decoder,
//! the analyzer and the UI consume.
//!
//! A damaged file yields the records before the damage, then a [`CaptureError`] that says
//! where and what. A failed write (full disk) leaves every file valid.

mod classic;
pub mod error;
pub mod interfaces;
pub mod live;
pub mod merge;
pub mod privileges;
pub mod reader;
pub mod source;
pub mod time;
pub mod writer;

pub use error::CaptureError;
pub use live::{default_filter, CaptureStats, LiveCapture, LiveOptions};
pub use merge::Merged;
pub use reader::{CaptureReader, Format, Interface, Record};
pub use source::{Batch, Next, Source};
pub use writer::{CaptureSink, FileFormat, PcapWriter, SinkOptions, SinkSummary};
