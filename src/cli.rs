//! The command line, as plain data (clap derive).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Packet capture and RoCEv2 protocol analyzer.
#[derive(Debug, Parser)]
#[command(name = "rocescope", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode frames, like `tshark` (-V for every field, --json for NDJSON).
    Decode(DecodeArgs),
}

/// Options shared by everything that decodes packets.
#[derive(Debug, Args, Clone)]
pub struct DecoderOpts {
    /// UDP destination port that marks RoCEv2.
    #[arg(long, default_value_t = 4791, value_name = "PORT")]
    pub roce_port: u16,
    /// Read opcodes 0x40-0x5F as IBTA Reliable Datagram instead of Mellanox DC.
    #[arg(long)]
    pub no_dc: bool,
    /// Do not compute or check the ICRC.
    #[arg(long)]
    pub no_icrc: bool,
}

impl DecoderOpts {
    /// The decoder settings these options select.
    pub fn decode_options(&self) -> rocescope_decoder::DecodeOptions {
        rocescope_decoder::DecodeOptions {
            roce_port: self.roce_port,
            opcode: rocescope_decoder::OpcodeOptions { dc: !self.no_dc },
            check_icrc: !self.no_icrc,
        }
    }
}

/// `rocescope decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Capture file to read (pcap, pcapng, optionally gzip-compressed); `-` for stdin.
    #[arg(short = 'r', long = "read", value_name = "FILE")]
    pub read: PathBuf,
    /// Stop after N frames.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Print every field of every header, tree-style.
    #[arg(short = 'V', long = "verbose", conflicts_with = "json")]
    pub verbose: bool,
    /// Print one JSON object per frame (NDJSON; schema in docs/decode-json.md).
    #[arg(long)]
    pub json: bool,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}
