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
//!
//! ```
//! use rocescope_capture::CaptureReader;
//! use rocescope_decoder::{decode, DecodeOptions};
//! use std::path::Path;
//!
//! let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/demo.pcap"));
//! let mut reader = CaptureReader::open(path)?;
//! let opts = DecodeOptions::default();
//! let (mut frames, mut roce) = (0, 0);
//! while let Some(rec) = reader.next_record()? {
//!     frames += 1;
//!     let packet = decode(rec.link_type, rec.data, &opts);
//!     if let Some(r) = packet.roce_ok() {
//!         roce += 1;
//!         if frames == 1 {
//!             assert_eq!((r.bth.dest_qp(), r.bth.psn()), (0x12, 1000));
//!         }
//!     }
//! }
//! assert_eq!((frames, roce), (182, 143));
//! # Ok::<(), rocescope_capture::CaptureError>(())
//! ```
//!
//! The `list_frames` example does this for any file:
//! `cargo run -p rocescope-capture --example list_frames -- FILE`.
//!
//! # Features
//!
//! - `live` (default): live capture through libpcap (`LiveCapture`, `Source::live`, the
//!   `interfaces` listing and `privileges::drop_privileges`). It links libpcap (the `pcap`
//!   crate). Without it (`default-features = false`), the crate reads and writes capture
//!   files in pure Rust and needs no libpcap to build or run.

mod classic;
mod counters;
pub mod error;
#[cfg(feature = "live")]
pub mod interfaces;
#[cfg(feature = "live")]
pub mod live;
pub mod merge;
pub mod ngwriter;
#[cfg(feature = "live")]
pub mod privileges;
pub mod reader;
/// sFlow v5 datagrams: the parser lives with the decoder (pure bytes to typed samples).
pub use rocescope_decoder::sflow;
pub mod sflow_listen;
pub mod small_file;
pub mod source;
pub mod statistics;
pub mod text;
pub mod time;
pub mod writer;

/// The README's examples, compiled (and run, where they need no file) as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use counters::CaptureStats;
pub use error::CaptureError;
#[cfg(feature = "live")]
pub use live::{default_filter, default_filter_with, LiveCapture, LiveOptions};
pub use merge::Merged;
pub use ngwriter::PcapNgWriter;
pub use reader::{CaptureReader, Format, Interface, Record};
pub use source::{Batch, Next, Source};
pub use statistics::{FileStats, InterfaceStats};
pub use writer::{CaptureSink, FileFormat, PcapWriter, SinkOptions, SinkSummary};
