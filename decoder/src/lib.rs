//! # rocescope-decoder
//!
//! Pure, zero-copy decoding of the frames a RoCE fabric puts on the wire: Ethernet, 802.1Q
//! and QinQ tags, Linux cooked captures, IPv4/IPv6 (DSCP and ECN), UDP to the RoCEv2 port,
//! RoCEv1 (EtherType 0x8915 + GRH), the InfiniBand BTH and every extended header (RDETH,
//! DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, XRCETH, FETH), the RoCEv2 CNP,
//! the ICRC check, and PFC / 802.3x PAUSE frames.
//!
//! Bytes in, typed views out: no I/O, no allocation per packet, and no panic on any input.
//! Protocol facts follow `shared/reference/roce-protocol.md` (cited by section).
//!
//! ```
//! use rocescope_decoder::{decode, DecodeOptions, LinkType};
//! let frame = [0u8; 10];
//! let p = decode(LinkType::ETHERNET, &frame, &DecodeOptions::default());
//! assert!(p.error.is_some()); // too short for Ethernet, reported, not panicked
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

pub mod bth;
pub mod build;
pub mod error;
pub mod ext;
pub mod grh;
pub mod icrc;
pub mod ip;
pub mod link;
pub mod mac_control;
pub mod opcode;
pub mod packet;
mod wire;

pub use bth::{Bth, BthRepr};
pub use error::{DecodeError, ErrorKind, Layer};
pub use icrc::{Icrc, IcrcStatus};
pub use ip::{Ecn, Ip};
pub use link::{LinkType, VlanTag, Vlans};
pub use mac_control::MacControl;
pub use opcode::{ExtKind, Opcode, OpcodeOptions, Position, Transport};
pub use packet::{decode, DecodeOptions, ExtHeaders, Link, Packet, Roce, RoceVersion, ROCE_V2_PORT};
