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
    /// Decode frames from a file or an interface, like `tshark` (-V every field, --json NDJSON).
    Decode(DecodeArgs),
    /// Capture from an interface (or re-write a file) to pcapng/pcap, with ring buffers.
    Capture(CaptureArgs),
    /// List the interfaces libpcap can open and whether they can show RoCE.
    Interfaces(InterfacesArgs),
}

/// Options shared by everything that decodes packets.
#[derive(Debug, Args, Clone)]
pub struct DecoderOpts {
    /// UDP destination port that marks RoCEv2 (also used by the default capture filter).
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

/// Where packets come from, and when to stop.
#[derive(Debug, Args, Clone)]
pub struct SourceArgs {
    /// Capture file to read (pcap, pcapng, optionally gzip-compressed); `-` for stdin.
    #[arg(
        short = 'r',
        long = "read",
        value_name = "FILE",
        required_unless_present = "interface",
        conflicts_with = "interface"
    )]
    pub read: Option<PathBuf>,
    /// Interface to capture on (`any` for all; `rocescope interfaces` lists them).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// Capture filter (BPF). Default: RoCEv2 (UDP dst port), RoCEv1 and MAC Control, tagged
    /// or not. `-f ''` captures everything.
    #[arg(short = 'f', long = "filter", value_name = "BPF")]
    pub filter: Option<String>,
    /// Snap length in bytes (default: whole frames; 128 keeps the headers only).
    #[arg(short = 's', long = "snaplen", value_name = "BYTES", default_value_t = 262_144)]
    pub snaplen: u32,
    /// Kernel capture buffer size in KiB (as tcpdump's -B).
    #[arg(short = 'B', long = "buffer-size", value_name = "KIB")]
    pub buffer_kib: Option<u32>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', long = "no-promiscuous-mode")]
    pub no_promisc: bool,
    /// After opening the interface, switch to this user (drop root), as tcpdump -Z.
    #[arg(short = 'Z', long = "relinquish-privileges", value_name = "USER")]
    pub user: Option<String>,
    /// Stop after N frames.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Seconds without any RoCE before a live capture explains why it may be blind.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, hide = true)]
    pub blind_after: f64,
}

/// `rocescope decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
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

/// `rocescope capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output file (pcapng unless --pcap); `-` writes to standard output.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: PathBuf,
    /// Write classic pcap (nanosecond) instead of pcapng.
    #[arg(long)]
    pub pcap: bool,
    /// Start a new file after this many megabytes (1,000,000 bytes), as tcpdump -C.
    #[arg(short = 'C', long = "file-size", value_name = "MB")]
    pub file_mb: Option<f64>,
    /// Start a new file every this many seconds, as tcpdump -G.
    #[arg(short = 'G', long = "rotate-seconds", value_name = "SECS")]
    pub rotate_secs: Option<f64>,
    /// Keep only the newest N files (a ring buffer), as dumpcap -b files:N.
    #[arg(short = 'W', long = "file-count", value_name = "N")]
    pub keep_files: Option<usize>,
    /// Do not print a line per second of progress (the summary is always printed).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Decoder options (the RoCE port for the default filter).
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// `rocescope interfaces`.
#[derive(Debug, Args)]
pub struct InterfacesArgs {
    /// Print JSON instead of a list.
    #[arg(long)]
    pub json: bool,
}
