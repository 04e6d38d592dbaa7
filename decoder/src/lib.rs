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
//! use rocescope_decoder::build::{IbRepr, IpRepr, RoceV2Frame};
//! use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, IcrcStatus, LinkType, Opcode};
//! use std::net::Ipv4Addr;
//!
//! let opts = DecodeOptions::default();
//! // Emit a frame: a SEND ONLY to QP 0x12, PSN 1000, with its ICRC.
//! let ip = IpRepr::V4 {
//!     src: Ipv4Addr::new(10, 0, 0, 1),
//!     dst: Ipv4Addr::new(10, 0, 0, 2),
//!     dscp: 26,
//!     ecn: Ecn::Ect0,
//!     ttl: 64,
//!     id: 0,
//! };
//! let bth = BthRepr { opcode: Opcode::RC_SEND_ONLY, dest_qp: 0x12, psn: 1000, ..Default::default() };
//! let ib = IbRepr { bth, payload: b"hello".to_vec(), ..Default::default() };
//! let frame = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, ib).build(opts.opcode);
//!
//! // Decode it: every layer borrows from `frame`.
//! let p = decode(LinkType::ETHERNET, &frame, &opts);
//! let roce = p.roce_ok().expect("a complete RoCE packet");
//! assert_eq!(roce.bth.opcode().name(opts.opcode), "RC Send Only");
//! assert_eq!((roce.bth.dest_qp(), roce.bth.psn()), (0x12, 1000));
//! assert_eq!(roce.payload, b"hello");
//! assert_eq!(roce.icrc.status, IcrcStatus::Valid);
//!
//! // Bad input is reported, not panicked on.
//! let p = decode(LinkType::ETHERNET, &[0u8; 10], &opts);
//! assert!(p.error.is_some()); // too short for Ethernet
//! ```
//!
//! The crate has no features and no I/O; `rocescope-capture` reads the frames from pcap and
//! pcapng files, and `rocescope-analyzer` turns decoded packets into per-QP findings.
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

pub mod bth;
pub mod build;
pub mod error;
pub mod ext;
pub mod fast;
pub mod grh;
pub mod icrc;
pub mod ip;
pub mod link;
pub mod mac_control;
pub mod opcode;
pub mod packet;
pub mod peek;
pub mod sflow;
pub mod tunnel;
mod wire;

/// The README's examples, compiled (and run, where they need no file) as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use bth::{Bth, BthRepr};
pub use error::{DecodeError, ErrorKind, Layer};
pub use icrc::{Icrc, IcrcStatus};
pub use ip::{Ecn, Ip};
pub use link::{LinkType, VlanTag, Vlans};
pub use mac_control::MacControl;
pub use opcode::{ExtKind, Opcode, OpcodeOptions, Position, Transport};
pub use packet::{decode, DecodeOptions, ExtHeaders, Link, Packet, Ports, Roce, RoceVersion, ROCE_V2_PORT};
pub use tunnel::{Encap, Tunnel, TunnelKind, Tunnels, Undecoded, UndecodedReason};
