//! The command line, as plain data (clap derive).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Packet capture and RoCEv2 protocol analyzer.
#[derive(Debug, Parser)]
#[command(
    name = "rocescope",
    version,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true,
    after_help = "Without a command, `rocescope -r FILE` or `rocescope -i IFACE` opens the terminal UI \
                  (or prints the report when the output is not a terminal)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Without a command: the terminal UI's options.
    #[command(flatten)]
    pub tui: TuiArgs,
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
    /// Analyse a capture or an interface: findings, connections, PFC timelines, QoS audit.
    Report(ReportArgs),
    /// Terminal UI over a file or an interface: QPs, packets, PFC, audit, findings.
    Tui(TuiArgs),
    /// Serve the analysis as Prometheus metrics (/metrics, /healthz), or push NDJSON.
    Export(ExportArgs),
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
    /// Several files (`-r a.pcap -r b.pcap`, or `-r a.pcap b.pcap`) are merged by time, each
    /// a capture point of its own: captures from both ends of a connection, or from many
    /// hosts during one incident.
    #[arg(
        short = 'r',
        long = "read",
        value_name = "FILE",
        num_args = 1..,
        action = clap::ArgAction::Append,
        required_unless_present = "interface",
        conflicts_with = "interface"
    )]
    pub read: Vec<PathBuf>,
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

/// Analysis settings shared by report, tui and export.
#[derive(Debug, Args, Clone)]
pub struct AnalysisOpts {
    /// Link speed for converting pause quanta (e.g. 100G, 25G, 400G, or bits/s); a pcapng
    /// interface speed takes precedence.
    #[arg(long, value_name = "SPEED", default_value = "100G", value_parser = parse_speed)]
    pub link_speed: u64,
    /// Path MTU for READ PSN reservations (default: inferred from full-size packets).
    #[arg(long, value_name = "BYTES")]
    pub pmtu: Option<u32>,
    /// PFC storm detection window, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    pub storm_window_ms: f64,
    /// Paused fraction of a window that makes it a storm.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5)]
    pub storm_threshold: f64,
    /// A continuous pause this long while the priority's RoCE stops hints at deadlock (ms).
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    pub deadlock_ms: f64,
    /// Expected DSCP of RoCE packets (e.g. 26).
    #[arg(long, value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_dscp: Option<u8>,
    /// Expected DSCP of CNPs (e.g. 48).
    #[arg(long, value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_cnp_dscp: Option<u8>,
    /// Expected 802.1p PCP of VLAN-tagged RoCE packets (e.g. 3).
    #[arg(long, value_name = "PCP", value_parser = clap::value_parser!(u8).range(0..8))]
    pub expect_pcp: Option<u8>,
    /// Lossless (PFC-enabled) priorities, comma-separated; pauses on others are flagged.
    #[arg(long, value_name = "P,P", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..8))]
    pub lossless: Option<Vec<u8>>,
    /// RoCE data must be ECN-capable (flag Not-ECT packets).
    #[arg(long)]
    pub expect_ecn: bool,
    /// With several -r captures: how long a packet seen at one capture point may take to
    /// show up at another (clock offset between the hosts plus path delay) before it counts
    /// as lost between them, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500.0, value_parser = parse_window)]
    pub match_window_ms: f64,
    /// Baseline file (TOML) with the expected values; flags override it.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// `rocescope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print one JSON document (schema in docs/report-json.md).
    #[arg(long)]
    pub json: bool,
    /// Connections listed in the text report (the worst first).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_connections: usize,
    /// Analysis settings.
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// `rocescope tui`.
#[derive(Debug, Args, Clone)]
pub struct TuiArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Play a file at capture speed times this (`1x`, `10x`, `0.5x`) to watch a problem
    /// unfold, instead of analysing it as fast as possible.
    #[arg(long, value_name = "SPEED", value_parser = parse_replay, requires = "read")]
    pub replay: Option<f64>,
    /// Analysis settings.
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// `rocescope export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Address to serve /metrics and /healthz on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9464")]
    pub listen: std::net::SocketAddr,
    /// Serve no HTTP (with --push only; with -r, exit after the final line).
    #[arg(long)]
    pub no_http: bool,
    /// Flows with series of their own (the busiest); the rest are summed into qp="other".
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub top_flows: usize,
    /// Stop tracking flows idle this long (capture time), so memory and report time stay
    /// bounded as QPs come and go; what they counted stays exported. Default: 600 live, off
    /// for files; 0: never.
    #[arg(long, value_name = "SECS")]
    pub flow_idle_timeout: Option<f64>,
    /// Also write every series as one NDJSON line per interval to FILE (appended; `-` for
    /// standard output), for log pipelines.
    #[arg(long, value_name = "FILE")]
    pub push: Option<PathBuf>,
    /// Seconds between pushed lines.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Analysis settings.
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// Parse a match window: at least 0.001 ms (a zero window would call every packet lost).
pub fn parse_window(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.001 => Ok(v),
        _ => Err(format!("{s:?} is not a match window in milliseconds (a positive number, like 500)")),
    }
}

/// Parse a push interval: 0.1 s to a day.
pub fn parse_interval(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.1..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an interval in seconds from 0.1 to 86400")),
    }
}

/// Parse a replay speed: `1x`, `10x`, `0.5` (a positive, finite factor).
pub fn parse_replay(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let n = t.strip_suffix(['x', 'X']).unwrap_or(t);
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a replay speed (like 1x, 10x or 0.5x)")),
    }
}

/// Parse `100G`, `25g`, `400G`, `10M` or a plain number of bits per second.
pub fn parse_speed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('G') => (&t[..t.len() - 1], 1_000_000_000f64),
        Some('M') => (&t[..t.len() - 1], 1_000_000f64),
        Some('T') => (&t[..t.len() - 1], 1_000_000_000_000f64),
        _ => (t, 1f64),
    };
    let v: f64 = num.parse().map_err(|_| format!("not a speed: {s:?} (try 100G)"))?;
    if v <= 0.0 {
        return Err(format!("speed must be positive: {s:?}"));
    }
    Ok((v * mult) as u64)
}
