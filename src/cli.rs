//! The command line, as plain data (clap derive).

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

/// Packet capture and RoCEv2 protocol analyzer.
#[derive(Debug, Parser)]
#[command(
    name = "rocescope",
    version,
    // `--version` only: `-V` is verbose in `decode`, as in tshark (whose `-v` is the version).
    disable_version_flag = true,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true,
    after_help = "Without a command, `rocescope -r FILE` or `rocescope -i IFACE` opens the terminal UI \
                  (or prints the report when the output is not a terminal); `rocescope -D` lists the \
                  interfaces. `rocescope COMMAND --help` tells more."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Print version.
    #[arg(long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    /// List the interfaces libpcap can open, as tcpdump -D (`rocescope interfaces`).
    #[arg(short = 'D', long = "list-interfaces", exclusive = true)]
    pub list_interfaces: bool,
    /// Without a command: the terminal UI's options.
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode frames from a file or an interface, like `tshark` (-V every field, --json NDJSON).
    #[command(after_long_help = crate::exit::help_table())]
    Decode(DecodeArgs),
    /// Capture from an interface (or re-write a file) to pcapng/pcap, with ring buffers.
    #[command(after_long_help = crate::exit::help_table())]
    Capture(CaptureArgs),
    /// List the interfaces libpcap can open and whether they can show RoCE.
    #[command(after_long_help = crate::exit::help_table())]
    Interfaces(InterfacesArgs),
    /// Analyse a capture or an interface: findings, connections, PFC timelines, QoS audit.
    #[command(after_long_help = crate::exit::help_table())]
    Report(ReportArgs),
    /// Terminal UI over a file or an interface: QPs, packets, PFC, audit, findings.
    #[command(after_long_help = crate::exit::help_table())]
    Tui(TuiArgs),
    /// Serve the analysis as Prometheus metrics (/metrics, /healthz), or push NDJSON.
    #[command(after_long_help = crate::exit::help_table())]
    Export(ExportArgs),
    /// Compare two captures (before and after a change): figures side by side, verdicts, a gate.
    #[command(after_long_help = crate::exit::help_table())]
    Compare(CompareArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "bash:  rocescope completions bash > ~/.local/share/bash-completion/completions/rocescope\n\
                            zsh:   rocescope completions zsh > ~/.zfunc/_rocescope   (with fpath+=~/.zfunc)\n\
                            fish:  rocescope completions fish > ~/.config/fish/completions/rocescope.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory.
    #[command(after_help = "man -l <(rocescope man)    or    rocescope man --dir /usr/local/share/man/man1")]
    Man(ManArgs),
}

impl Command {
    /// The command's name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Decode(_) => "decode",
            Command::Capture(_) => "capture",
            Command::Interfaces(_) => "interfaces",
            Command::Report(_) => "report",
            Command::Tui(_) => "tui",
            Command::Export(_) => "export",
            Command::Compare(_) => "compare",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
        }
    }

    /// The packet source of a command that reads packets, to change.
    pub fn source_mut(&mut self) -> Option<&mut SourceArgs> {
        match self {
            Command::Decode(a) => Some(&mut a.source),
            Command::Capture(a) => Some(&mut a.source),
            Command::Report(a) => Some(&mut a.source),
            Command::Tui(a) => Some(&mut a.source),
            Command::Export(a) => Some(&mut a.source),
            Command::Interfaces(_) | Command::Completions(_) | Command::Man(_) | Command::Compare(_) => None,
        }
    }

    /// The packet source of a command that reads packets.
    pub fn source(&self) -> Option<&SourceArgs> {
        match self {
            Command::Decode(a) => Some(&a.source),
            Command::Capture(a) => Some(&a.source),
            Command::Report(a) => Some(&a.source),
            Command::Tui(a) => Some(&a.source),
            Command::Export(a) => Some(&a.source),
            Command::Interfaces(_) | Command::Completions(_) | Command::Man(_) | Command::Compare(_) => None,
        }
    }

    /// The files the command reads (`-r` captures, `--counters`, `--baseline`; not standard
    /// input) and the files it writes (`capture -w`, `export --push`, `report --parquet`'s
    /// directory; not standard output). A ring's files (`-w` with `-C`/`-G`) are created only
    /// where nothing is yet (the capture writer), and `man --dir` reads nothing.
    fn files(&self) -> (Vec<&Path>, Vec<(&'static str, &Path)>) {
        let mut inputs: Vec<&Path> = Vec::new();
        if let Some(src) = self.source() {
            inputs.extend(src.read.iter().map(PathBuf::as_path));
        }
        let mut outputs: Vec<(&'static str, &Path)> = Vec::new();
        match self {
            Command::Capture(a) => outputs.push(("-w", a.write.as_path())),
            Command::Decode(a) => outputs.extend(a.write.as_deref().map(|p| ("-w", p))),
            Command::Report(a) => {
                inputs.extend(a.counters.iter().map(PathBuf::as_path));
                inputs.extend(a.nccl.nccl_env.as_deref());
                inputs.extend(a.analysis.baseline.as_deref());
                // The directory itself: its table files never replace a file that is not
                // theirs (parquet_out's commit), so an input there is safe.
                outputs.extend(a.parquet.as_deref().map(|p| ("--parquet", p)));
                outputs.extend(a.html.as_deref().map(|p| ("--html", p)));
            }
            Command::Tui(a) => {
                inputs.extend(a.counters.iter().map(PathBuf::as_path));
                inputs.extend(a.analysis.baseline.as_deref());
            }
            Command::Export(a) => {
                inputs.extend(a.counters.iter().map(PathBuf::as_path));
                inputs.extend(a.analysis.baseline.as_deref());
                outputs.extend(a.push.as_deref().map(|p| ("--push", p)));
            }
            _ => {}
        }
        inputs.retain(|p| p.as_os_str() != "-");
        outputs.retain(|(_, p)| p.as_os_str() != "-");
        (inputs, outputs)
    }

    /// An output that is also an input, compared by file identity (device and inode, links
    /// followed: a symlink or a hard link to the input is the input): what to say, as a usage
    /// error, before anything is opened or written. `capture -r F -w F` truncated F; `export
    /// -r F --push F` appended NDJSON to the capture.
    pub fn output_is_input(&self) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let (inputs, outputs) = self.files();
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        for (opt, out) in outputs {
            // A file that does not exist yet cannot be an input.
            let Some(o) = id(out) else { continue };
            if let Some(input) = inputs.iter().find(|i| id(i) == Some(o)) {
                return Some(format!(
                    "{opt} {} is the input {} (the same file): rocescope never writes over what it reads; give another output",
                    rocescope_capture::text::path(out),
                    rocescope_capture::text::path(input)
                ));
            }
        }
        None
    }

    /// The command's decoder options, when it decodes.
    pub fn decoder(&self) -> Option<&DecoderOpts> {
        match self {
            Command::Decode(a) => Some(&a.decoder),
            Command::Capture(a) => Some(&a.decoder),
            Command::Report(a) => Some(&a.decoder),
            Command::Tui(a) => Some(&a.decoder),
            Command::Export(a) => Some(&a.decoder),
            Command::Compare(a) => Some(&a.decoder),
            Command::Interfaces(_) | Command::Completions(_) | Command::Man(_) => None,
        }
    }
}

/// `rocescope completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `rocescope man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write rocescope.1 and rocescope-COMMAND.1 into this directory instead of printing
    /// rocescope.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Options shared by everything that decodes packets.
#[derive(Debug, Args, Clone)]
pub struct DecoderOpts {
    /// UDP destination port that marks RoCEv2 (also used by the default capture filter).
    #[arg(long, default_value_t = 4791, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_port: u16,
    /// Read opcodes 0x40-0x5F as IBTA Reliable Datagram instead of Mellanox DC.
    #[arg(long)]
    pub no_dc: bool,
    /// Do not compute or check the ICRC.
    #[arg(long)]
    pub no_icrc: bool,
    /// Also unwrap VXLAN on this UDP destination port (besides 4789; repeatable, up to 7);
    /// the default live capture filter lets it through too.
    #[arg(long, value_name = "PORT", action = clap::ArgAction::Append)]
    pub vxlan_port: Vec<u16>,
    /// Also unwrap Geneve on this UDP destination port (besides 6081; repeatable, up to 7);
    /// the default live capture filter lets it through too.
    #[arg(long, value_name = "PORT", action = clap::ArgAction::Append)]
    pub geneve_port: Vec<u16>,
}

impl DecoderOpts {
    /// Refuse what the decoder cannot take: more extra VXLAN or Geneve ports than its port
    /// sets hold (they would be dropped without a word).
    pub fn check(&self) -> Result<(), String> {
        let o = self.decode_options();
        for (flag, ports, set) in [
            ("--vxlan-port", &self.vxlan_port, o.vxlan_ports),
            ("--geneve-port", &self.geneve_port, o.geneve_ports),
        ] {
            if let Some(p) = ports.iter().find(|p| !set.contains(**p)) {
                return Err(format!("{flag} {p}: at most 7 extra ports can be given"));
            }
        }
        Ok(())
    }

    /// The decoder settings these options select.
    pub fn decode_options(&self) -> rocescope_decoder::DecodeOptions {
        let mut o = rocescope_decoder::DecodeOptions {
            roce_port: self.roce_port,
            opcode: rocescope_decoder::OpcodeOptions { dc: !self.no_dc },
            check_icrc: !self.no_icrc,
            ..Default::default()
        };
        // More ports than the sets hold are refused when the command line is read (`check`).
        for &port in &self.vxlan_port {
            o.vxlan_ports.add(port);
        }
        for &port in &self.geneve_port {
            o.geneve_ports.add(port);
        }
        o
    }
}

/// `--progress` (report, compare, decode, capture): a progress bar on standard error while
/// a capture is read (crate::progress, docs/progress.md).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct ProgressArgs {
    /// A progress bar on standard error while the capture is read: frames, bytes, the share
    /// of the file, the rate and the time left (a spinner for a pipe or a live capture),
    /// cleared at the end. `auto`: when standard error is a terminal, without -q; `always`;
    /// `never`. docs/progress.md.
    #[arg(long, value_name = "WHEN", value_enum, env = "ROCESCOPE_PROGRESS", default_value_t = crate::progress::When::Auto)]
    pub progress: crate::progress::When,
}

impl ProgressArgs {
    /// What `ROCESCOPE_PROGRESS` asks for (`auto` when unset or not a choice), for a command
    /// line clap did not read (`rocescope -r FILE | less`).
    pub fn from_env() -> Self {
        let when = std::env::var("ROCESCOPE_PROGRESS")
            .ok()
            .and_then(|v| <crate::progress::When as clap::ValueEnum>::from_str(v.trim(), true).ok())
            .unwrap_or_default();
        ProgressArgs { progress: when }
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
        conflicts_with_all = ["interface", "sflow"]
    )]
    pub read: Vec<PathBuf>,
    /// Capture files given without -r (`rocescope report roce.pcap`): read as -r reads them.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Listen for sFlow v5 datagrams on this UDP address (e.g. 0.0.0.0:6343) and analyse
    /// the packet headers the agents sample, each scaled by its sampling rate, with each
    /// agent's interface a capture point (docs/verdicts.md "Sampled captures").
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "interface")]
    pub sflow: Option<std::net::SocketAddr>,
    /// Interface to capture on (`any` for all; `rocescope interfaces` lists them).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// Capture filter (BPF). Default: RoCEv2 (UDP dst port), RoCEv1, MAC Control and the
    /// tunnels that carry them (GRE and ERSPAN, VXLAN and Geneve on their ports and any
    /// --vxlan-port/--geneve-port, MPLS), tagged or not. `-f ''` captures everything.
    #[arg(short = 'f', long = "filter", value_name = "BPF")]
    pub filter: Option<String>,
    /// Snap length in bytes: keep only the first BYTES of each frame (default: whole frames;
    /// 128 keeps the headers). Live, libpcap cuts the frames; from files, rocescope cuts them
    /// as it reads (as editcap -s), so a file can be analysed or written as a header-only
    /// capture would see it. `-s 0` is whole frames, as in tcpdump.
    #[arg(short = 's', long = "snaplen", value_name = "BYTES", value_parser = parse_snaplen)]
    pub snaplen: Option<u32>,
    /// Kernel capture buffer size in KiB (as tcpdump's -B).
    #[arg(short = 'B', long = "buffer-size", value_name = "KIB", value_parser = clap::value_parser!(u32).range(1..))]
    pub buffer_kib: Option<u32>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', long = "no-promiscuous-mode")]
    pub no_promisc: bool,
    /// After opening the interface, switch to this user (drop root), as tcpdump -Z.
    #[arg(short = 'Z', long = "relinquish-privileges", value_name = "USER")]
    pub user: Option<String>,
    /// Stop after N frames.
    #[arg(short = 'c', long = "count", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Stop after this many seconds (of a file: counted from the first frame in the window
    /// --from sets).
    #[arg(long, value_name = "SECS", value_parser = number_in(0.0, 1e9, "a duration in seconds"))]
    pub duration: Option<f64>,
    /// Take only the frames at or after TIME; the others are skipped before the analysis
    /// (counted: the report's `summary.window.frames_outside`). TIME is `+1.5s`, `+250ms`,
    /// `+90us`, `+2` (seconds) after the first frame of all the inputs, or absolute: RFC 3339
    /// with its zone (`2026-12-06T10:00:00.5Z`) or seconds since the epoch (`1733480000.25`).
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_time)]
    pub from: Option<crate::window::TimeArg>,
    /// Take only the frames before TIME (exclusive; TIME as for --from).
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_time)]
    pub to: Option<crate::window::TimeArg>,
    /// Seconds without any RoCE before a live capture explains why it may be blind.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, hide = true)]
    pub blind_after: f64,
}

/// How `decode` prints frames (`-T`, as tshark's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// One summary line per frame.
    Text,
    /// One JSON array of the frames' objects, as tshark -T json writes an array
    /// (docs/decode-json.md; the objects are ours, not tshark's layers).
    Json,
    /// One JSON object per frame, a line each (NDJSON; docs/decode-json.md): --json.
    Ndjson,
    /// The fields named by -e, separated by tabs (-E separator=, header=y).
    Fields,
}

/// `rocescope decode`.
#[derive(Debug, Args)]
#[command(after_help = "Display filter (-Y), the terminal UI's language applied to each frame: \
                        `qp=0x12 and psn>100`, `nak or rnr`, `ip=10.0.0.3 and ce`, `pfc`, `icrc`, \
                        `not roce`; an sFlow datagram is shown when it or one of its sampled headers matches. \
                        See docs/decode-json.md for the -e field names.")]
pub struct DecodeArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print every field of every header, tree-style.
    #[arg(short = 'V', long = "verbose", conflicts_with_all = ["json", "format"])]
    pub verbose: bool,
    /// Print one JSON object per frame (NDJSON; schema in docs/decode-json.md); as -T ndjson
    /// (-T json writes them as one array).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: text (summary lines), json (one array), ndjson (a line per frame, as
    /// --json) or fields (-e), as tshark -T.
    #[arg(short = 'T', long = "format", value_name = "FORMAT", value_enum)]
    pub format: Option<OutputFormat>,
    /// A field to print with -T fields: a key of the JSON output, dotted for nested ones
    /// (`frame`, `ts`, `ip.src`, `ip.dscp`, `bth.opcode_name`, `bth.dqpn`, `bth.psn`,
    /// `aeth.nak`, `vlan.pcp`, `icrc.status`); repeat for more.
    #[arg(short = 'e', long = "field", value_name = "FIELD", action = clap::ArgAction::Append)]
    pub fields: Vec<String>,
    /// Options for -T fields, as tshark -E: `header=y` prints the field names first,
    /// `separator=,` (or `/t`, `/s`) sets the separator, `occurrence=f|l|a` picks the first,
    /// last or all (joined by `aggregator=,`) values of a repeated field.
    #[arg(short = 'E', value_name = "OPT=VALUE", action = clap::ArgAction::Append)]
    pub field_opts: Vec<String>,
    /// Display filter: print only the frames that match (see below).
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,
    /// Write the frames shown (those -Y keeps; every frame without it) to FILE, pcapng
    /// unless --pcap, as `tshark -r in -Y ... -w out` does; nothing is printed for them.
    /// `-` writes to standard output.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// With -w: write classic pcap instead of pcapng.
    #[arg(long, requires = "write")]
    pub pcap: bool,
    /// Print no frames; at the end, say on standard error how many were read and matched.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Flush the output after every frame (for `| grep` and `tee` while capturing live).
    #[arg(short = 'l')]
    pub line_buffered: bool,
    /// Do not resolve names: accepted for tshark/tcpdump habits; rocescope never resolves
    /// addresses, ports or MACs.
    #[arg(short = 'n')]
    pub no_resolve: bool,
    /// Show frames to UDP port 6343 as ordinary UDP frames, not as sFlow datagrams with
    /// their sampled packet headers decoded.
    #[arg(long)]
    pub no_sflow: bool,
    /// The progress bar (shown with -w, or when the frames go to a file or pipe, not the
    /// terminal).
    #[command(flatten)]
    pub progress: ProgressArgs,
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
    /// Display filter (decode's -Y, the TUI's language): write only the frames it keeps, as
    /// `tshark -r in -Y ... -w out` does. Every frame is decoded then.
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,
    /// Write classic pcap (nanosecond) instead of pcapng.
    #[arg(long)]
    pub pcap: bool,
    /// Start a new file after this many megabytes (1,000,000 bytes), as tcpdump -C; at least
    /// 0.01, so that a file holds a jumbo frame (9,216 bytes) and its record header.
    #[arg(short = 'C', long = "file-size", value_name = "MB", value_parser = parse_file_mb)]
    pub file_mb: Option<f64>,
    /// Start a new file every this many seconds, as tcpdump -G.
    #[arg(short = 'G', long = "rotate-seconds", value_name = "SECS", value_parser = number_in(0.0, 1e9, "a time in seconds"))]
    pub rotate_secs: Option<f64>,
    /// Keep only the newest N files (a ring buffer), as dumpcap -b files:N.
    #[arg(short = 'W', long = "file-count", value_name = "N", value_parser = parse_file_count)]
    pub keep_files: Option<usize>,
    /// Do not print a line per second of progress (the summary is always printed).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The progress bar of a file's reading (-r; a live capture's progress is the line a
    /// second).
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Decoder options (the RoCE, VXLAN and Geneve ports for the default filter).
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
    /// Most flows tracked at once by the long-running modes (export, a live report, tui):
    /// past it the least recently seen are evicted (counted, their packets and bytes kept as
    /// totals), so memory stays bounded whoever sends. The default, 500,000, is a few hundred
    /// MB. A file's report tracks every flow.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FLOWS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_flows: u64,
    /// Path MTU for READ PSN reservations (default: inferred from full-size packets): an
    /// InfiniBand MTU, 256, 512, 1024, 2048 or 4096.
    #[arg(long, value_name = "BYTES", value_parser = parse_pmtu)]
    pub pmtu: Option<u32>,
    /// PFC storm detection window, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10.0, value_parser = number_in(0.0, 1e6, "a window in milliseconds"))]
    pub storm_window_ms: f64,
    /// Paused fraction of a window that makes it a storm.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5, value_parser = fraction)]
    pub storm_threshold: f64,
    /// A continuous pause this long while the priority's RoCE stops hints at deadlock (ms).
    #[arg(long, value_name = "MS", default_value_t = 100.0, value_parser = number_in(0.0, 1e9, "a time in milliseconds"))]
    pub deadlock_ms: f64,
    /// How long after a pause took effect RoCE to the pausing MAC may still arrive (frames
    /// in flight, the peer's response time) before it counts as ignoring the pause, in µs.
    /// 7 covers 25G to 400G links; use about 13 at 10G.
    #[arg(long, value_name = "US", default_value_t = 7.0, value_parser = |s: &str| match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a pause allowance in microseconds (0 or more, like 7)")),
    })]
    pub pause_allowance_us: f64,
    /// Analyse the second copies of packets that a mirror put in the capture twice (a SPAN of
    /// both ports of a path, two sessions covering it) as packets of their own. By default
    /// they are counted (`duplicates`) and left out: read as packets, every copy looks like a
    /// resend and every copied CNP like one sent too soon.
    #[arg(long)]
    pub keep_duplicates: bool,
    /// Expected DSCP of RoCE data, comma-separated when several are allowed (e.g. 26, or
    /// 3,4); ACK/NAKs are held to it too until --expect-ack-dscp gives them their own class.
    #[arg(long, value_name = "DSCP,DSCP", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_dscp: Option<Vec<u8>>,
    /// Expected DSCP of ACK/NAKs (Acknowledge and Atomic Acknowledge), comma-separated when
    /// several are allowed (e.g. 44): a class of their own, only their DSCP is checked.
    #[arg(long, value_name = "DSCP,DSCP", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_ack_dscp: Option<Vec<u8>>,
    /// Expected DSCP in the outer header of overlay RoCE data (VXLAN or Geneve between VTEPs
    /// as the fabric's transport), comma-separated when several are allowed: the underlay
    /// classifies on it. The inner DSCP is still checked against --expect-dscp.
    #[arg(long, value_name = "DSCP,DSCP", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_outer_dscp: Option<Vec<u8>>,
    /// Expected DSCP of CNPs, comma-separated when several are allowed (e.g. 48, or 46).
    #[arg(long, value_name = "DSCP,DSCP", value_delimiter = ',', value_parser = clap::value_parser!(u8).range(0..64))]
    pub expect_cnp_dscp: Option<Vec<u8>>,
    /// Where a frame's priority comes from, as the switches classify: `pcp` (the VLAN PCP
    /// when tagged, else the DSCP through --dscp-map; the default) or `dscp` (the DSCP
    /// through --dscp-map, tagged or not). The PFC, lossless and deadlock checks compare it.
    #[arg(long, value_name = "MODE", value_parser = parse_trust())]
    pub trust: Option<rocescope_analyzer::audit::Trust>,
    /// Which VLAN tag of a double-tagged (QinQ) frame gives its PCP: `outer` (the S-tag, what
    /// a switch on a QinQ trunk classifies on, IEEE 802.1ad; the default) or `inner` (the
    /// C-tag). Pause timelines, the lossless check and the PCP audit use it.
    #[arg(long, value_name = "TAG", value_parser = parse_pcp_tag())]
    pub pcp_tag: Option<rocescope_analyzer::audit::PcpTag>,
    /// DSCP to priority map of the fabric, e.g. 3:3,4:4,26:3 (SONiC's DSCP_TO_TC_MAP, mlx5's
    /// dscp2prio). DSCPs not listed map to priority 0, as on mlx5; without a map the priority
    /// of a DSCP is DSCP >> 3.
    #[arg(long, value_name = "DSCP:PRIO,...", value_parser = parse_dscp_map)]
    pub dscp_map: Option<rocescope_analyzer::audit::DscpMap>,
    /// Expected 802.1p PCP of RoCE data (e.g. 3); untagged RoCE carries none and is flagged.
    #[arg(long, value_name = "PCP", value_parser = clap::value_parser!(u8).range(0..8))]
    pub expect_pcp: Option<u8>,
    /// Lossless (PFC-enabled) priorities, comma-separated: RoCE data must map to one (see
    /// --trust, --dscp-map), and pauses on others are flagged.
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
    /// How late a packet may arrive (after a later PSN of its QP) and count as ordinary
    /// reordering, e.g. from adaptive routing or packet spraying; later ones are reported as
    /// late. Reordered packets are never called lost.
    #[arg(long, value_name = "US", default_value_t = 100.0, value_parser = parse_reorder_window)]
    pub reorder_window: f64,
    /// The notification point's CNP pacing, in microseconds: CNPs to one QP closer together
    /// than this are counted (`cnp_too_fast`), and CE marks over two of these with no CNP
    /// back are flagged. DCQCN sends at most one CNP per flow every 50 µs; set your NICs'
    /// value (mlx5 `min_time_between_cnps`).
    #[arg(long, value_name = "US", default_value_t = 50.0, value_parser = parse_cc_us)]
    pub cnp_pacing_us: f64,
    /// The window over which a sender's rate is measured before and after each CNP it
    /// receives, in microseconds (`cc_not_reacting`).
    #[arg(long, value_name = "US", default_value_t = 50.0, value_parser = parse_cc_us)]
    pub cc_window_us: f64,
    /// How long after a CNP the window after it starts, in microseconds: the packets already
    /// on their way to the capture point still show the old rate.
    #[arg(long, value_name = "US", default_value_t = 5.0, value_parser = parse_cc_delay_us)]
    pub cc_delay_us: f64,
    /// Time-series resolution: throughput, CE, CNP and pause series start at this bin width
    /// and their busiest bins (microbursts) are reported at it, however long the capture
    /// (series widen to keep memory bounded): 10us, 100us, 1ms or 10ms (any time from 1 µs
    /// to 1 s is taken).
    #[arg(long = "bin", value_name = "TIME", default_value = "10ms", value_parser = parse_bin)]
    pub bin_ns: u64,
    /// The shortest RC ACK timeout the requesters use: `t=14` (4.096 µs × 2^14 = 67 ms, the
    /// smallest common NCCL_IB_TIMEOUT), or a time like `4ms`. A resend with no NAK in the
    /// capture sooner than this after the original is not called a timeout. A CM REQ's local
    /// ACK timeout, when captured, replaces it for its connection.
    #[arg(long, value_name = "t=N|TIME", default_value = "t=14", value_parser = parse_ack_timeout)]
    pub min_ack_timeout: i64,
    /// Findings of one kind listed one by one, the most important first; the others of that
    /// kind fold into one summary finding that says how many there are (0: list them all).
    /// The severity counts and every connection's health still count each finding.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub findings_per_kind: usize,
    /// The capture holds one packet in N (a sampled mirror, `tcpdump` behind a sampler):
    /// packet and byte counters are scaled by N, and the verdicts that need every packet
    /// (PSN-gap loss, resend causes, reordering, PFC storms...) are off. sFlow datagrams
    /// bring their own rates.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub sample_rate: Option<u32>,
    /// Analyse frames to UDP port 6343 as ordinary frames, not as sFlow datagrams.
    #[arg(long)]
    pub no_sflow: bool,
    /// Keep each capture one capture point: do not split it by mirror session (ERSPAN
    /// session ID, VXLAN/Geneve VNI). By default two mirror sessions are two points.
    #[arg(long)]
    pub one_point_per_capture: bool,
    /// Time every frame by the capture clock, also where an ERSPAN III header carries the
    /// switch's timestamp (by default used within each session, anchored to the capture
    /// clock: docs/verdicts.md "Mirror sessions").
    #[arg(long)]
    pub capture_clock: bool,
    /// Never take an untagged mirrored frame's PCP from its ERSPAN header's COS (by default
    /// taken where the header says the mirror stripped an 802.1Q tag).
    #[arg(long)]
    pub no_erspan_cos: bool,
    /// Baseline file (TOML) with the expected values; flags override it.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Predict how a switch's ECMP spreads the RoCEv2 data flows over N equal-cost paths:
    /// each path's bytes, the busiest over the mean, the elephants that collide (an info
    /// finding `ecmp_imbalance` when they make the busiest path over 1.5x the mean). A
    /// prediction: it holds only if the switch hashes as --ecmp-hash does. With --uplinks it
    /// defaults to the number of uplinks. docs/verdicts.md "ECMP".
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(2..=1024))]
    pub ecmp_paths: Option<u16>,
    /// The switch hash the prediction models: crc16 (BISYNC), crc16-ccitt, crc32-lo,
    /// crc32-hi (CRC-32C halves), crc32-eth-lo, crc32-eth-hi, crc32-koopman-lo,
    /// crc32-koopman-hi, xor16, xor8, or eecmp (crc32-lo over the 5-tuple and the RoCE
    /// destination QP, as switches hash it through UDF fields); `,seed=S` sets the seed
    /// (decimal or 0x-hex), `,qp` adds the destination QP to any of them. Default crc32-lo;
    /// with --ecmp-paths or --uplinks only.
    #[arg(long, value_name = "NAME[,seed=S][,qp]", value_parser = parse_ecmp_hash)]
    pub ecmp_hash: Option<rocescope_analyzer::ecmp::EcmpHash>,
    /// The capture points that are one switch's ECMP uplinks, comma-separated (a point's
    /// name as the report shows it, e.g. up1.pcap for `-r up1.pcap`, or without the
    /// extension): the bytes each carried, over time and in all, beside the prediction;
    /// a warning `ecmp_imbalance` when the busiest carried over 1.5x the mean with two or
    /// more elephants (docs/verdicts.md "ECMP").
    #[arg(long, value_name = "POINT,POINT", value_delimiter = ',')]
    pub uplinks: Vec<String>,
}

/// `--ecmp-hash NAME[,seed=S][,qp]`.
fn parse_ecmp_hash(s: &str) -> Result<rocescope_analyzer::ecmp::EcmpHash, String> {
    s.parse()
}

/// `rocescope report`.
#[derive(Debug, Args)]
#[command(after_help = "The rule behind every finding: docs/verdicts.md. The exit statuses: --help.")]
pub struct ReportArgs {
    /// Source.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print one JSON document (schema in docs/report-json.md).
    #[arg(long)]
    pub json: bool,
    /// Print nothing: the exit status says how the run went (see --fail-on); errors still
    /// go to standard error.
    #[arg(short = 'q', long, conflicts_with = "json")]
    pub quiet: bool,
    /// What fails the run once the capture was analysed. `audit` (the default): status 3
    /// when the QoS audit found violations of the expectations given (--expect-*,
    /// --baseline; a pause on a priority no RoCE uses is reported but fails nothing without
    /// them). `critical`: also status 4 when there is a CRITICAL finding; `warning`: status 4
    /// for a WARNING or CRITICAL one. `never`: status 0 whatever was found. Could not read
    /// is 1 and usage 2 whatever this says; a run cut short by a signal is 128 + its number.
    #[arg(long, value_name = "LEVEL", value_enum, default_value_t = FailOn::Audit)]
    pub fail_on: FailOn,
    /// Connections listed in the text report (the worst first).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_connections: usize,
    /// Also write the packets, flows and per-flow time bins as Parquet files into DIR
    /// (created if missing): packets-*.parquet, flows-*.parquet, intervals-*.parquet,
    /// named by capture and start time so many runs can share DIR (docs/parquet.md).
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Also write a timeline trace to FILE (Trace Event Format JSON, for ui.perfetto.dev or
    /// chrome://tracing): a process per capture point, a thread per QP direction with its
    /// messages as slices and its resends, NAKs, ACK timeouts and CNPs as instants, and
    /// throughput and paused time per priority as counters; times in µs since the Unix
    /// epoch (docs/trace.md). The files are read a second time for it: not standard input,
    /// a pipe or an interface.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The most slices and instants --trace writes; past it they are counted (on standard
    /// error and in the trace's otherData), not written.
    #[arg(long, value_name = "N", default_value_t = rocescope_output::trace::DEFAULT_MAX_EVENTS)]
    pub trace_max_events: usize,
    /// Also write the report as one self-contained HTML page to FILE: the verdict and the
    /// findings with their evidence, charts of throughput, paused time, CE marks and CNPs,
    /// the iteration rhythm, the ECMP paths, the QoS audit and the top QPs; no script,
    /// nothing fetched, to open in any browser or attach to a ticket (docs/html-report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Analyse a capture file on N threads (default: 2 with two cores or more); the report
    /// is the single-threaded one. Two threads work in two stages: one reads the capture,
    /// classifies each frame and checks it for a mirror's copy, the other analyses it. More
    /// threads each keep the flows of their share of the host pairs: with a core to spare
    /// the file is read once and each thread handed its frames, else each reads it; the
    /// first decodes every frame for the capture-wide figures. The JSON's flow entries are
    /// written on N threads (default: the cores, up to 4).
    /// A pipe, FIFO or standard input is read once: by two stages, by that one reading where
    /// it is done, else on one thread. Merged captures (`-r a -r b`) are analysed on one.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// NIC counters to set beside the capture's figures (a COUNTERS section, and a
    /// `counters_disagree` warning where they disagree): `ethtool -S IFACE` output, `rdma
    /// statistic show` output (or `rdma -j statistic show`, JSON), or a dump of
    /// `grep -H . /sys/class/infiniband/*/ports/*/hw_counters/*`, in any mix. Twice: the
    /// snapshots before and after the capture (deltas); once: a file holding both (the
    /// second after a `# after` line, a second `NIC statistics:` header or a second JSON
    /// document), or a single snapshot (absolute values, shown but not compared).
    /// docs/counters.md.
    #[arg(long, value_name = "FILE")]
    pub counters: Vec<PathBuf>,
    /// The host whose NIC the counters are: its IP address(es) for CNPs, NAKs and resends,
    /// its MAC for pause frames (comma-separated, or the option repeated). Without it the
    /// capture's figures are the whole capture's, directions not told apart.
    #[arg(long, value_name = "ADDR,...", requires = "counters")]
    pub counters_host: Vec<String>,
    /// The job's NCCL settings.
    #[command(flatten)]
    pub nccl: NcclOpts,
    /// The progress bar.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Analysis settings.
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// `--nccl-env` and `--nccl-version` (`report`, `compare`).
#[derive(Debug, Default, Args)]
pub struct NcclOpts {
    /// The job's NCCL environment, checked against the wire (an NCCL section, and a
    /// `nccl_env_mismatch` finding per NCCL_IB_* variable the capture contradicts, with the
    /// value that would match): `env | grep NCCL`, `export -p` or shell lines
    /// (`export NCCL_IB_TC=106`), `/proc/PID/environ`, or an nccl.conf. A `# nccl 2.23`
    /// comment in it gives the NCCL version (for the defaults). docs/verdicts.md "NCCL
    /// settings against the wire".
    #[arg(long, value_name = "FILE")]
    pub nccl_env: Option<PathBuf>,
    /// The NCCL version the job ran (2.23, 2.23.4), for the defaults of the variables the
    /// environment leaves unset (NCCL_IB_TIMEOUT 14/18/20, NCCL_IB_GID_INDEX 0 or auto);
    /// overrides a version comment in the file.
    #[arg(long, value_name = "X.Y[.Z]", requires = "nccl_env", value_parser = parse_nccl_version)]
    pub nccl_version: Option<rocescope_analyzer::nccl::NcclVersion>,
}

/// `--nccl-version`: `2.23`, `2.23.4`.
fn parse_nccl_version(s: &str) -> Result<rocescope_analyzer::nccl::NcclVersion, String> {
    rocescope_analyzer::nccl::NcclVersion::parse(s)
        .ok_or_else(|| format!("`{s}` is not an NCCL version (MAJOR.MINOR[.PATCH], e.g. 2.23.4)"))
}

/// `rocescope compare`.
#[derive(Debug, Args)]
#[command(after_help = "Each side is a capture (pcap, pcapng; several files are merged, each a capture \
                        point, as `report -r a -r b`), a `report --json` document or a `report --parquet` \
                        directory. Capture points pair by name (one on each side pair whatever their \
                        names); what is on one side only is listed. Every rule, threshold and how noise \
                        is judged: docs/verdicts.md \"Change verdicts\"; the JSON: docs/compare-json.md.")]
pub struct CompareArgs {
    /// BEFORE and AFTER, one file or directory each (or use --before/--after); with
    /// --split-at, the capture's files.
    #[arg(value_name = "SIDE")]
    pub sides: Vec<PathBuf>,
    /// The side before the change, as one or several files (`--before a.pcap b.pcap`).
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append, requires = "after")]
    pub before: Vec<PathBuf>,
    /// The side after the change, as one or several files.
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append, requires = "before")]
    pub after: Vec<PathBuf>,
    /// A change made during one capture: compare its frames before TIME (BEFORE) with those
    /// at or after it (AFTER), the capture given as FILE... (several files are its capture
    /// points, merged by time). TIME as `report --from` takes it: `+30s` after the first frame
    /// of all the files, RFC 3339 (`2026-12-06T10:00:30Z`) or epoch seconds.
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_time, conflicts_with_all = ["before", "after"])]
    pub split_at: Option<crate::window::TimeArg>,
    /// Print one JSON document (schema in docs/compare-json.md).
    #[arg(long)]
    pub json: bool,
    /// Also write the gate as a JUnit XML report to FILE (each verdict a test case, failing
    /// when it fails the gate), for CI systems that show test reports.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print nothing: the exit status says whether the change passed the gate.
    #[arg(short = 'q', long, conflicts_with = "json")]
    pub quiet: bool,
    /// The change gate: `warning` (the default: status 4 for a WARNING or CRITICAL
    /// verdict), `critical` (a CRITICAL one), `info` (any), `never`; and the thresholds that make a
    /// change a verdict, NAME=VALUE: throughput-drop=20%, latency-rise=1.5, loss-ppm=10,
    /// resend-ppm=1000, congestion-rise=4, pause-min=1000 (µs/s), mark-share=1%.
    /// Comma-separated or repeated: `--fail-on critical,latency-rise=2`.
    #[arg(long, value_name = "LEVEL|NAME=VALUE", value_delimiter = ',', action = clap::ArgAction::Append)]
    pub fail_on: Vec<String>,
    /// NIC counter files for a BEFORE side that is a capture, as `report --counters` reads
    /// them (two snapshots, or one file holding both): their deltas are rows beside the
    /// AFTER side's (--counters-after). A report document carries the counters it was made
    /// with. docs/counters.md.
    #[arg(long, value_name = "FILE", requires = "counters_after")]
    pub counters_before: Vec<PathBuf>,
    /// NIC counter files for an AFTER side that is a capture (see --counters-before).
    #[arg(long, value_name = "FILE", requires = "counters_before")]
    pub counters_after: Vec<PathBuf>,
    /// The host whose NIC the counters are (IP and MAC addresses), as for `report`.
    #[arg(long, value_name = "ADDR,...")]
    pub counters_host: Vec<String>,
    /// The job's NCCL settings, checked against each side that is a capture (as `report
    /// --nccl-env` does): each NCCL_IB_* variable's verdict before and after, a WARNING when
    /// one that matched the wire before no longer does. A report document keeps the check
    /// it was made with.
    #[command(flatten)]
    pub nccl: NcclOpts,
    /// The progress bar of each side that is a capture.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Analysis settings (for the sides that are captures).
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options (for the sides that are captures).
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

impl CompareArgs {
    /// The two sides' files, or what is wrong with how they were given (standard input
    /// can be one side's only file, once: it is read once).
    pub fn sides(&self) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
        let (before, after) = self.sides_given()?;
        // (--split-at reads its files once, for both sides, and refuses standard input.)
        let stdin = before.iter().chain(&after).filter(|p| p.as_os_str() == "-").count();
        if stdin > 1 && self.split_at.is_none() {
            return Err(
                "standard input (-) can be read once: give it as one side, the other as a file".into()
            );
        }
        Ok((before, after))
    }

    fn sides_given(&self) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
        if let Some(t) = &self.split_at {
            // --before/--after with it are refused by clap (conflicts_with_all).
            return match self.sides.as_slice() {
                [] => {
                    Err(format!("--split-at {}: give the capture to split (--split-at TIME FILE...)", t.text))
                }
                files => Ok((files.to_vec(), files.to_vec())),
            };
        }
        match (self.sides.as_slice(), self.before.is_empty()) {
            ([b, a], true) => Ok((vec![b.clone()], vec![a.clone()])),
            ([], false) => Ok((self.before.clone(), self.after.clone())),
            ([], true) => Err("give two sides: BEFORE AFTER, or --before FILE... --after FILE...".into()),
            (s, true) => Err(format!(
                "give two sides, BEFORE and AFTER ({} given); several files per side go after --before and --after",
                s.len()
            )),
            (_, false) => Err("give the sides either as BEFORE AFTER or with --before/--after, not both".into()),
        }
    }

    /// The gate level (`None`: never) and the thresholds `--fail-on` gives.
    pub fn gate(
        &self,
    ) -> Result<(Option<rocescope_analyzer::report::Severity>, rocescope_analyzer::compare::Limits), String>
    {
        use rocescope_analyzer::report::Severity;
        let mut level = Some(Severity::Warning);
        // The level given, to refuse a second one: `never,info` must not mean whichever
        // came last (issue 40).
        let mut given: Option<&str> = None;
        let mut limits = rocescope_analyzer::compare::Limits::default();
        for item in self.fail_on.iter().map(|s| s.trim()) {
            if item.is_empty() {
                return Err(
                    "--fail-on \"\": give a level (critical, warning, info, never) or NAME=VALUE".into()
                );
            }
            match item.split_once('=') {
                Some((name, value)) => limits.set(name.trim(), value)?,
                None => {
                    if let Some(first) = given.replace(item) {
                        return Err(format!(
                            "--fail-on gives two levels, {first:?} and {item:?}: give one (with any NAME=VALUE thresholds)"
                        ));
                    }
                    level = match item {
                        "critical" => Some(Severity::Critical),
                        "warning" => Some(Severity::Warning),
                        "info" => Some(Severity::Info),
                        "never" => None,
                        _ => {
                            return Err(format!(
                                "--fail-on {item:?}: a level (critical, warning, info, never) or NAME=VALUE"
                            ))
                        }
                    }
                }
            }
        }
        Ok((level, limits))
    }
}

impl SourceArgs {
    /// The time window `--from` and `--to` give.
    pub fn window(&self) -> crate::window::Window {
        crate::window::Window { from: self.from.clone(), to: self.to.clone() }
    }

    /// Take the files given without -r as inputs. With -i or --sflow they are an error
    /// that says what a word after the options means elsewhere (tcpdump's capture filter).
    /// At the top level (`top`), a word that is no file and looks like no path (no `.` or
    /// `/`) is a mistyped command, said as such.
    pub fn take_files(&mut self, top: bool) -> Result<(), String> {
        if self.files.is_empty() {
            return Ok(());
        }
        if top {
            let cli = <Cli as clap::CommandFactory>::command();
            let commands: Vec<&str> = cli.get_subcommands().map(clap::Command::get_name).collect();
            for f in &self.files {
                let word = f.to_string_lossy();
                if !f.exists() && !word.contains(['.', '/']) && word != "-" {
                    return Err(format!(
                        "unrecognized subcommand '{word}' (the commands: {}; a capture file goes after -r)",
                        commands.join(", ")
                    ));
                }
            }
        }
        if self.interface.is_some() || self.sflow.is_some() {
            let words: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
            return Err(format!(
                "unexpected `{}`: a word after the options is a capture file to read; a capture filter goes after -f (-f '{}')",
                words.join(" "),
                words.join(" ")
            ));
        }
        self.read.append(&mut self.files);
        Ok(())
    }
}

/// `-s`: bytes kept of each frame; 0 is whole frames (tcpdump's and tshark's meaning), the
/// default snap length.
fn parse_snaplen(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(0) => Ok(crate::driver::DEFAULT_SNAPLEN),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}: a number of bytes (0 for whole frames)")),
    }
}

/// What fails a `report` run (`--fail-on`): the exit status policy in README "Exit status".
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Any finding, INFO included (status 4), and audit violations (status 3).
    Info,
    /// A CRITICAL finding (status 4), and audit violations (status 3).
    Critical,
    /// A WARNING or CRITICAL finding (status 4), and audit violations (status 3).
    Warning,
    /// Audit violations of the expectations given (status 3).
    Audit,
    /// Nothing found fails the run.
    Never,
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
    /// NIC counter files, as `report --counters` reads them: shown beside the pause
    /// timelines, their disagreements among the findings (docs/counters.md).
    #[arg(long, value_name = "FILE")]
    pub counters: Vec<PathBuf>,
    /// The host whose NIC the counters are (IP and MAC addresses), as for `report`.
    #[arg(long, value_name = "ADDR,...", requires = "counters")]
    pub counters_host: Vec<String>,
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
    #[arg(long, value_name = "SECS", value_parser = parse_idle_timeout)]
    pub flow_idle_timeout: Option<f64>,
    /// Also write every series as one NDJSON line per interval to FILE (appended; `-` for
    /// standard output), for log pipelines.
    #[arg(long, value_name = "FILE")]
    pub push: Option<PathBuf>,
    /// Seconds between pushed lines.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse_interval)]
    pub interval: f64,
    /// HTTP connections open at once; more are answered 503 and closed. Default: 256, fewer
    /// when the open-file limit leaves less room (docs/reliability.md).
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub http_max_connections: Option<u32>,
    /// Seconds a client has to send a request's head, counted from its connection or its
    /// previous answer (so also how long a kept-alive connection may stay idle).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, hide = true,
          value_parser = number_in(0.0, 86_400.0, "a timeout in seconds"))]
    pub http_header_timeout: f64,
    /// Seconds an answer may wait for a client that reads nothing before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, hide = true,
          value_parser = number_in(0.0, 86_400.0, "a timeout in seconds"))]
    pub http_write_timeout: f64,
    /// NIC counter files, as `report --counters` reads them: their figures beside the
    /// capture's become `rocescope_nic_figure` and `rocescope_nic_figure_capture` series
    /// (docs/counters.md, docs/metrics.md).
    #[arg(long, value_name = "FILE")]
    pub counters: Vec<PathBuf>,
    /// The host whose NIC the counters are (IP and MAC addresses), as for `report`.
    #[arg(long, value_name = "ADDR,...", requires = "counters")]
    pub counters_host: Vec<String>,
    /// Analysis settings.
    #[command(flatten)]
    pub analysis: AnalysisOpts,
    /// Decoder options.
    #[command(flatten)]
    pub decoder: DecoderOpts,
}

/// The trust modes, `pcp` and `dscp` (listed in --help and the shell completions).
pub fn parse_trust() -> impl clap::builder::TypedValueParser<Value = rocescope_analyzer::audit::Trust> {
    use clap::builder::TypedValueParser;
    use rocescope_analyzer::audit::Trust;
    // Only the two names pass, and each parses.
    clap::builder::PossibleValuesParser::new([Trust::Pcp.as_str(), Trust::Dscp.as_str()])
        .map(|s| s.parse::<Trust>().unwrap_or_default())
}

/// The VLAN tags a QinQ frame's PCP can come from, `outer` and `inner`.
pub fn parse_pcp_tag() -> impl clap::builder::TypedValueParser<Value = rocescope_analyzer::audit::PcpTag> {
    use clap::builder::TypedValueParser;
    use rocescope_analyzer::audit::PcpTag;
    // Only the two names pass, and each parses.
    clap::builder::PossibleValuesParser::new([PcpTag::Outer.as_str(), PcpTag::Inner.as_str()])
        .map(|s| s.parse::<PcpTag>().unwrap_or_default())
}

/// Parse a DSCP to priority map: `DSCP:PRIORITY[,DSCP:PRIORITY...]`.
pub fn parse_dscp_map(s: &str) -> Result<rocescope_analyzer::audit::DscpMap, String> {
    s.parse()
}

/// Parse a match window: at least 0.001 ms (a zero window would call every packet lost).
pub fn parse_window(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.001 => Ok(v),
        _ => Err(format!("{s:?} is not a match window in milliseconds (a positive number, like 500)")),
    }
}

/// Parse a reorder window in µs: 0 to 10 s.
pub fn parse_reorder_window(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e7).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a reorder window in microseconds (0 to 10000000, like 100)")),
    }
}

/// Parse a congestion-control interval in µs: 1 µs to 1 s.
pub fn parse_cc_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=1e6).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an interval in microseconds (1 to 1000000, like 50)")),
    }
}

/// Parse the delay before a rate window in µs: 0 to 1 s.
pub fn parse_cc_delay_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e6).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a delay in microseconds (0 to 1000000, like 5)")),
    }
}

/// Parse an ACK timeout: `t=N` (4.096 µs × 2^N, N 1..=31, as NCCL_IB_TIMEOUT and the CM
/// REQ give it) or a time with a unit (`67ms`, `500us`, `1.5s`); nanoseconds.
pub fn parse_ack_timeout(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let bad = || format!("{s:?} is not an ACK timeout (t=14, or a time like 67ms, 500us, 1.5s)");
    if let Some(n) = t.strip_prefix("t=") {
        return match n.parse::<u8>() {
            Ok(n) if (1..=31).contains(&n) => Ok(rocescope_analyzer::psn::ack_timeout_ns(n)),
            _ => Err(bad()),
        };
    }
    match time_ns(t) {
        Some(ns) if ns > 0.0 && ns < 1e12 => Ok(ns as i64),
        _ => Err(bad()),
    }
}

/// A time with a unit (`ns`, `us`/`µs`, `ms`, `s`), as ns; `None` without a unit or a
/// finite number.
fn time_ns(t: &str) -> Option<f64> {
    let (num, unit) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else {
        (t.strip_suffix('s')?, 1e9)
    };
    num.trim().parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| v * unit)
}

/// Parse a `--bin` width: a time from 1 µs to 1 s (`10us`, `100us`, `1ms`, `10ms`; `ns`,
/// `us`/`µs`, `ms` and `s` units), as ns.
pub fn parse_bin(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || format!("{s:?} is not a bin width from 1us to 1s (like 10us, 100us, 1ms, 10ms)");
    match time_ns(t).map(f64::round) {
        Some(ns) if (1e3..=1e9).contains(&ns) => Ok(ns as u64),
        _ => Err(bad()),
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
    let bps = v * mult;
    // NaN and infinity parse as numbers: refuse them as clearly as a negative speed.
    if !(bps.is_finite() && bps >= 1.0) {
        return Err(format!("speed must be a positive number of bits per second: {s:?} (try 100G)"));
    }
    Ok(bps as u64)
}

/// A parser for a number above `lo` (exclusive) and at most `hi`: NaN, infinity, zero and
/// negatives are refused (they parse as floats and would silently change the analysis, or
/// rotate a file per packet).
pub fn number_in(lo: f64, hi: f64, what: &'static str) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > lo && v <= hi => Ok(v),
        _ => Err(format!("{s:?} is not {what} (a number above {lo} and at most {hi})")),
    }
}

/// `--max-flows`' default: 500,000 flows (a quiet flow's state is under 1 kB, a busy one's
/// a few: a few hundred MB in all; docs/reliability.md).
pub const DEFAULT_MAX_FLOWS: u64 = 500_000;

/// The path MTUs a RoCE QP can have (the InfiniBand MTUs): a value between them would make
/// every READ's PSN reservation wrong, and 0 would silently turn READ tracking off.
pub fn parse_pmtu(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(v) if [256, 512, 1024, 2048, 4096].contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an InfiniBand path MTU (256, 512, 1024, 2048 or 4096)")),
    }
}

/// The smallest `-C` in MB: 10,000 bytes, which hold a jumbo frame (9,216 bytes) and its
/// record header; below that, frames would get a file each.
pub const MIN_FILE_MB: f64 = 0.01;

/// Parse `-C`: megabytes, at least [`MIN_FILE_MB`].
pub fn parse_file_mb(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (MIN_FILE_MB..=1e9).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a file size in MB of at least {MIN_FILE_MB} (a file must hold a jumbo frame)"
        )),
    }
}

/// Parse `-W`: at least one file.
pub fn parse_file_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!("{s:?} is not a number of files (1 or more)")),
    }
}

/// Parse `--flow-idle-timeout`: seconds, 0 (never) or more.
pub fn parse_idle_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an idle time in seconds (0 for never, or more)")),
    }
}

/// Parse a fraction in (0, 1].
pub fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!("{s:?} is not a fraction above 0 and at most 1 (like 0.5)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_widths_parse() {
        for (s, ns) in [
            ("10us", 10_000),
            ("100us", 100_000),
            ("1ms", 1_000_000),
            ("10ms", 10_000_000),
            ("5µs", 5_000),
            ("1000ns", 1_000),
            ("1s", 1_000_000_000),
            ("0.5ms", 500_000),
        ] {
            assert_eq!(parse_bin(s), Ok(ns), "{s}");
        }
        for s in ["", "10", "999ns", "2s", "-1ms", "nanms", "1 parsec", "infms"] {
            let e = parse_bin(s).unwrap_err();
            assert!(e.contains("bin width from 1us to 1s"), "{s}: {e}");
        }
    }

    /// Shell words of one command, up to an unquoted `|`, `>`, `<`, `;`, `&` or `#` comment.
    fn words(line: &str) -> Vec<Vec<String>> {
        let mut cmds = vec![Vec::new()];
        let mut word: Option<String> = None;
        let mut chars = line.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, ' ' | '\t') => cmds.last_mut().unwrap().extend(word.take()),
                (None, '#') if word.is_none() => break,
                (None, '|' | ';' | '&') => {
                    cmds.last_mut().unwrap().extend(word.take());
                    cmds.push(Vec::new());
                }
                (None, '>' | '<') => {
                    // A redirection's target is not an argument.
                    cmds.last_mut().unwrap().extend(word.take());
                    while chars.peek() == Some(&' ') {
                        chars.next();
                    }
                    while chars.peek().is_some_and(|c| *c != ' ') {
                        chars.next();
                    }
                }
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        cmds.last_mut().unwrap().extend(word.take());
        cmds
    }

    /// README.md and every page in docs/, each with its name.
    fn documentation_pages() -> Vec<(String, String)> {
        let mut pages = vec![("README.md".to_string(), include_str!("../README.md").to_string())];
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let mut names: Vec<_> = std::fs::read_dir(&docs)
            .expect("docs/")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        names.sort();
        for path in names {
            let text = std::fs::read_to_string(&path).expect("a docs page");
            pages.push((format!("docs/{}", path.file_name().unwrap_or_default().to_string_lossy()), text));
        }
        pages
    }

    /// Every `rocescope` command in the `sh` blocks of README.md and of every page in docs/
    /// (also after `sudo`, in a pipeline, or after `cargo run ... --`) is accepted by today's
    /// command line.
    #[test]
    fn every_documented_command_line_parses() {
        let pages = documentation_pages();
        assert!(pages.len() > 10, "README.md and the pages in docs/");
        let mut checked = 0;
        let mut readme_checked = 0;
        for (page, text) in &pages {
            let before = checked;
            checked += command_lines_parse(page, text);
            if page == "README.md" {
                readme_checked = checked - before;
            }
        }
        assert!(readme_checked > 12, "{readme_checked} command lines checked in README.md");
        assert!(checked > 60, "{checked} command lines checked");
    }

    /// Parse every `rocescope` command line in `text`'s `sh` blocks; how many there were.
    fn command_lines_parse(page: &str, text: &str) -> usize {
        let mut in_sh = false;
        let mut checked = 0;
        for line in text.lines() {
            if line.starts_with("```") {
                in_sh = line == "```sh";
                continue;
            }
            if !in_sh {
                continue;
            }
            for cmd in words(line) {
                let mut w: Vec<&str> = cmd.iter().map(String::as_str).collect();
                if w.first() == Some(&"sudo") {
                    w.remove(0);
                }
                let args: Vec<&str> = if w.first() == Some(&"rocescope") {
                    w
                } else if w.starts_with(&["cargo", "run"]) && !w.contains(&"--example") {
                    match w.iter().position(|a| *a == "--") {
                        Some(i) => std::iter::once("rocescope").chain(w[i + 1..].iter().copied()).collect(),
                        None => continue,
                    }
                } else {
                    continue;
                };
                if let Err(e) = <Cli as clap::Parser>::try_parse_from(&args) {
                    panic!("{page}: `{line}` does not parse:\n{e}");
                }
                checked += 1;
            }
        }
        checked
    }

    #[test]
    fn numbers_that_would_change_the_analysis_silently_are_refused() {
        for bad in ["NaN", "inf", "-1", "0", "nan"] {
            assert!(number_in(0.0, 1e9, "x")(bad).is_err(), "{bad}");
            assert!(fraction(bad).is_err(), "{bad}");
            assert!(parse_speed(bad).is_err(), "{bad}");
            assert!(parse_speed(&format!("{bad}G")).is_err(), "{bad}G");
        }
        assert!(fraction("1.5").is_err());
        assert_eq!(fraction("0.5"), Ok(0.5));
        assert_eq!(number_in(0.0, 1e9, "x")("10"), Ok(10.0));
        assert_eq!(parse_speed("25G"), Ok(25_000_000_000));
    }

    #[test]
    fn ack_timeouts_and_reorder_windows() {
        assert_eq!(parse_ack_timeout("t=14"), Ok(67_108_864));
        assert_eq!(parse_ack_timeout("4ms"), Ok(4_000_000));
        assert_eq!(parse_ack_timeout("500us"), Ok(500_000));
        assert_eq!(parse_ack_timeout("1.5s"), Ok(1_500_000_000));
        for bad in ["t=0", "t=32", "14", "0ms", "NaNms", "-1s", "infs"] {
            assert!(parse_ack_timeout(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_reorder_window("250"), Ok(250.0));
        for bad in ["NaN", "-1", "inf", "1e8"] {
            assert!(parse_reorder_window(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shell_words() {
        assert_eq!(
            words("tcpdump -U -w - udp | rocescope decode -r - -Y 'qp=0x12 and nak' # x"),
            vec![
                vec!["tcpdump", "-U", "-w", "-", "udp"],
                vec!["rocescope", "decode", "-r", "-", "-Y", "qp=0x12 and nak"]
            ]
        );
        assert_eq!(
            words("rocescope completions bash > ~/x  # y"),
            vec![vec!["rocescope", "completions", "bash"]]
        );
    }
}
