//! Live capture through libpcap (the `pcap` crate): any interface libpcap can open, `any`
//! included, with the RoCE capture filter by default, nanosecond timestamps, immediate mode,
//! and kernel/interface drop counters. Errors say what to do about them.

pub use crate::counters::CaptureStats;
use crate::error::CaptureError;
use crate::reader::{Interface, Record};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use pcap::{Active, Capture, Precision};
use rocescope_decoder::LinkType;
use std::os::fd::AsFd;
use std::path::PathBuf;

/// How often a blocking read returns so the caller can check signals, deadlines and stats.
const POLL_MS: i32 = 100;

/// Settings for a live capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveOptions {
    /// Interface name (`any` for all).
    pub interface: String,
    /// BPF filter; `None` selects [`default_filter`], `Some("")` captures everything.
    pub filter: Option<String>,
    /// UDP destination port that marks RoCEv2 (used by the default filter).
    pub roce_port: u16,
    /// UDP destination ports of the VXLAN and Geneve tunnels the decoder unwraps (used by
    /// the default filter): 4789 and 6081, and any given with `--vxlan-port` /
    /// `--geneve-port` (the decoder's `vxlan_ports` and `geneve_ports`).
    pub tunnel_ports: Vec<u16>,
    /// Snap length in bytes (262144 = whole frames).
    pub snaplen: u32,
    /// Kernel buffer size in bytes (`-B`), or libpcap's default.
    pub buffer_bytes: Option<u32>,
    /// Promiscuous mode.
    pub promisc: bool,
    /// Deliver each packet as soon as it arrives (interactive use) rather than when a kernel
    /// block fills or the poll interval passes (bulk capture to a file: cheaper).
    pub immediate: bool,
}

impl LiveOptions {
    /// Defaults for `interface`: whole frames, promiscuous, the RoCE filter on port 4791.
    pub fn new(interface: &str) -> Self {
        LiveOptions {
            interface: interface.to_string(),
            filter: None,
            roce_port: rocescope_decoder::ROCE_V2_PORT,
            tunnel_ports: DEFAULT_TUNNEL_PORTS.to_vec(),
            snaplen: 262_144,
            buffer_bytes: None,
            promisc: true,
            immediate: true,
        }
    }

    /// The BPF filter that will be applied ("" for none).
    pub fn effective_filter(&self) -> String {
        self.filter.clone().unwrap_or_else(|| default_filter_with(self.roce_port, &self.tunnel_ports))
    }
}

/// The UDP destination ports of VXLAN (4789) and Geneve (6081), in the default filter.
pub const DEFAULT_TUNNEL_PORTS: [u16; 2] = [4789, 6081];

/// The default capture filter: RoCEv2 (by UDP destination port), RoCEv1 and MAC Control
/// (PFC, PAUSE), and the mirror and overlay tunnels that carry them (issue 12): GRE (IP
/// protocol 47: ERSPAN I/II/III, gretap, L3 GRE), VXLAN (UDP 4789), Geneve (UDP 6081) and
/// MPLS (EtherTypes 0x8847/0x8848), untagged, single-tagged or QinQ. Each `vlan` keyword
/// shifts the offsets of everything after it in the expression (pcap-filter(7)), so the QinQ
/// test is nested inside the single-tag one rather than written beside it; MPLS is matched by
/// EtherType, not by the `mpls` keyword, which shifts offsets too. [`default_filter_with`]
/// adds the extra VXLAN and Geneve ports (`--vxlan-port`, `--geneve-port`).
///
/// ```
/// let f = rocescope_capture::default_filter(4791);
/// assert!(f.starts_with("udp dst port 4791 or ether proto 0x8915"));
/// assert_eq!(f, rocescope_capture::live::default_filter_with(4791, &[4789, 6081]));
/// ```
pub fn default_filter(roce_port: u16) -> String {
    default_filter_with(roce_port, &DEFAULT_TUNNEL_PORTS)
}

/// The default capture filter ([`default_filter`]) with every UDP destination port in
/// `tunnel_ports` (VXLAN and Geneve, the defaults 4789 and 6081 included) in place of the
/// two defaults, each written once, in the given order; the RoCE port is not repeated.
/// Untagged, single-tagged and QinQ frames on each of them pass, as for the defaults.
///
/// ```
/// use rocescope_capture::live::default_filter_with;
/// let f = default_filter_with(4791, &[4789, 6081, 8472]);
/// assert!(f.contains("udp dst port 6081 or udp dst port 8472 or ether proto 0x8847"));
/// ```
pub fn default_filter_with(roce_port: u16, tunnel_ports: &[u16]) -> String {
    let mut udp = String::new();
    let mut seen = vec![roce_port];
    for &p in tunnel_ports {
        if !seen.contains(&p) {
            seen.push(p);
            udp.push_str(&format!(" or udp dst port {p}"));
        }
    }
    let base = format!(
        "udp dst port {roce_port} or ether proto 0x8915 or ether proto 0x8808 \
         or ip proto 47 or ip6 proto 47{udp} \
         or ether proto 0x8847 or ether proto 0x8848"
    );
    format!("{base} or (vlan and ({base} or (vlan and ({base}))))")
}

/// An open live capture.
pub struct LiveCapture {
    cap: Capture<Active>,
    interface: Interface,
    /// libpcap counters wrap at 2^32; keep running totals.
    last_raw: (u32, u32, u32),
    totals: CaptureStats,
    buf: Vec<u8>,
    /// Captured bytes handed out so far ([`LiveCapture::bytes_read`]).
    bytes: u64,
}

impl std::fmt::Debug for LiveCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCapture").field("interface", &self.interface).finish()
    }
}

/// What a live read returned.
#[derive(Debug)]
pub enum LiveNext<'a> {
    /// A frame.
    Packet(Record<'a>),
    /// Nothing arrived within the poll interval.
    Idle,
}

fn live_err(interface: &str, detail: String) -> CaptureError {
    CaptureError::Live { interface: interface.to_string(), detail }
}

/// Names of the interfaces libpcap can open.
pub fn interface_names() -> Vec<String> {
    pcap::Device::list().map(|l| l.into_iter().map(|d| d.name).collect()).unwrap_or_default()
}

/// Whether `name` is administratively up, from sysfs (`None` when unknown).
fn is_up(name: &str) -> Option<bool> {
    let flags = crate::interfaces::sysfs(&PathBuf::from("/sys/class/net").join(name).join("flags"))?;
    let v = u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16).ok()?;
    Some(v & 1 != 0) // IFF_UP
}

fn explain_open_error(opts: &LiveOptions, msg: &str) -> CaptureError {
    let name = &opts.interface;
    let lower = msg.to_ascii_lowercase();
    let names = interface_names();
    let exists = names.iter().any(|n| n == name) || PathBuf::from("/sys/class/net").join(name).exists();
    let detail = if !exists || lower.contains("no such device") {
        format!(
            "no such interface. Interfaces that exist: {} (`rocescope interfaces` describes them)",
            if names.is_empty() { String::from("none visible") } else { names.join(", ") }
        )
    } else if lower.contains("permission") || lower.contains("not permitted") {
        format!(
            "permission denied ({msg}). Capturing needs CAP_NET_RAW and CAP_NET_ADMIN: run as root, or grant them once with `sudo setcap cap_net_raw,cap_net_admin=eip {}`",
            std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "rocescope".into())
        )
    } else if lower.contains("not up") || is_up(name) == Some(false) {
        format!("the interface is down: bring it up with `ip link set {name} up`")
    } else if msg.is_empty() {
        "libpcap could not open it and gave no reason".into()
    } else {
        format!("libpcap could not open it: {msg}")
    };
    live_err(name, detail)
}

impl LiveCapture {
    /// Open and activate the capture, apply the filter.
    pub fn open(opts: &LiveOptions) -> Result<Self, CaptureError> {
        let name = opts.interface.as_str();
        if name.is_empty() {
            return Err(live_err(name, "no interface name given".into()));
        }
        let mut inactive = Capture::from_device(name)
            .map_err(|e| explain_open_error(opts, &e.to_string()))?
            .promisc(opts.promisc)
            .snaplen(i32::try_from(opts.snaplen).unwrap_or(i32::MAX))
            .immediate_mode(opts.immediate)
            .timeout(POLL_MS)
            .precision(Precision::Nano);
        if let Some(b) = opts.buffer_bytes {
            inactive = inactive.buffer_size(i32::try_from(b).unwrap_or(i32::MAX));
        }
        let cap = inactive.open().map_err(|e| {
            let msg = match e {
                pcap::Error::PcapError(s) => s,
                other => other.to_string(),
            };
            explain_open_error(opts, &msg)
        })?;
        // Non-blocking reads plus our own poll(): libpcap's read timeout does not fire on
        // Linux TPACKET_V3 until a packet arrives, which would hang an idle capture.
        let mut cap =
            cap.setnonblock().map_err(|e| live_err(name, format!("cannot set non-blocking mode: {e}")))?;
        let filter = opts.effective_filter();
        if !filter.is_empty() {
            cap.filter(&filter, true)
                .map_err(|e| live_err(name, format!("bad capture filter {filter:?}: {e}")))?;
        }
        let link_type = LinkType(cap.get_datalink().0 as u32);
        let interface = Interface::live(name, link_type, opts.snaplen, link_speed_bps(name));
        Ok(LiveCapture {
            cap,
            interface,
            last_raw: (0, 0, 0),
            totals: CaptureStats::default(),
            buf: Vec::with_capacity(65536),
            bytes: 0,
        })
    }

    /// The interface as it will be described in a pcapng file.
    pub fn interface(&self) -> &Interface {
        &self.interface
    }

    /// Wait up to the poll interval for the next frame.
    pub fn next_frame(&mut self) -> Result<LiveNext<'_>, CaptureError> {
        let mut polled = false;
        let meta = loop {
            match self.cap.next_packet() {
                Ok(p) => {
                    let h = p.header;
                    // Nanosecond precision: tv_usec holds nanoseconds. (time_t and suseconds_t
                    // are i64 here but not on every platform, hence the conversions.)
                    #[allow(clippy::useless_conversion)]
                    let ts = i64::from(h.ts.tv_sec) * 1_000_000_000 + i64::from(h.ts.tv_usec);
                    self.buf.clear();
                    self.buf.extend_from_slice(p.data);
                    break (ts, h.caplen, h.len);
                }
                Err(pcap::Error::TimeoutExpired) if !polled => {
                    polled = true;
                    let mut fds = [PollFd::new(self.cap.as_fd(), PollFlags::POLLIN)];
                    match poll(&mut fds, PollTimeout::from(POLL_MS as u16)) {
                        Ok(0) => return Ok(LiveNext::Idle),
                        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                        Err(e) => return Err(self.failed(format!("poll failed: {e}"))),
                    }
                }
                Err(pcap::Error::TimeoutExpired) => return Ok(LiveNext::Idle),
                Err(e) => return Err(self.failed(format!("capture failed: {e}"))),
            }
        };
        Ok(LiveNext::Packet(Record {
            ts_ns: meta.0,
            caplen: meta.1,
            len: meta.2,
            link_type: self.interface.link_type,
            interface: 0,
            link_bps: self.interface.speed_bps,
            point: 0,
            data: &self.buf,
            empty_before: 0,
        }))
    }

    /// Hand every frame the kernel has ready (up to `max`) to `f`, waiting up to the poll
    /// interval when none is. Frames go straight from libpcap's buffer to `f`, uncopied.
    /// `f` returns false to ignore the rest of the batch. Returns the frames handled.
    pub fn dispatch(
        &mut self,
        max: usize,
        f: &mut dyn FnMut(&Record<'_>) -> bool,
    ) -> Result<usize, CaptureError> {
        let link_type = self.interface.link_type;
        let link_bps = self.interface.speed_bps;
        let mut handled = 0;
        let mut bytes = 0u64;
        for attempt in 0..2 {
            let mut go = true;
            let n = self
                .cap
                .dispatch(Some(max.max(1)), |p| {
                    if !go {
                        return;
                    }
                    let h = p.header;
                    // Nanosecond precision: tv_usec holds nanoseconds.
                    #[allow(clippy::useless_conversion)]
                    let ts = i64::from(h.ts.tv_sec) * 1_000_000_000 + i64::from(h.ts.tv_usec);
                    let rec = Record {
                        ts_ns: ts,
                        caplen: h.caplen,
                        len: h.len,
                        link_type,
                        interface: 0,
                        link_bps,
                        point: 0,
                        data: p.data,
                        empty_before: 0,
                    };
                    handled += 1;
                    bytes += u64::from(h.caplen);
                    go = f(&rec);
                })
                .map_err(|e| self.failed(format!("capture failed: {e}")))?;
            self.bytes = self.bytes.saturating_add(bytes);
            bytes = 0;
            if n > 0 || attempt == 1 {
                break;
            }
            let mut fds = [PollFd::new(self.cap.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(POLL_MS as u16)) {
                Ok(0) => break,
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(self.failed(format!("poll failed: {e}"))),
            }
        }
        Ok(handled)
    }

    /// The captured bytes of the frames handed out so far (a progress display's count).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    fn failed(&self, detail: String) -> CaptureError {
        live_err(self.interface.name.as_deref().unwrap_or(""), detail)
    }

    /// Running totals of libpcap's counters (wrap-safe).
    pub fn stats(&mut self) -> CaptureStats {
        if let Ok(s) = self.cap.stats() {
            let (r, d, i) = self.last_raw;
            self.totals.received += u64::from(s.received.wrapping_sub(r));
            self.totals.kernel_dropped += u64::from(s.dropped.wrapping_sub(d));
            self.totals.if_dropped += u64::from(s.if_dropped.wrapping_sub(i));
            self.last_raw = (s.received, s.dropped, s.if_dropped);
        }
        self.totals
    }
}

/// Link speed from sysfs (Mb/s there), in bits per second, when the driver reports one.
pub fn link_speed_bps(interface: &str) -> Option<u64> {
    let p = PathBuf::from("/sys/class/net").join(interface).join("speed");
    let mbps: i64 = crate::interfaces::sysfs(&p)?.trim().parse().ok()?;
    (mbps > 0).then(|| mbps as u64 * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet frame with `tags` VLAN tags (802.1ad outer, 802.1Q inner), IPv4, UDP to
    /// `dport`, 8 bytes of payload.
    fn udp_frame(tags: usize, dport: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        for i in 0..tags {
            let tpid: u16 = if i + 1 < tags { 0x88A8 } else { 0x8100 };
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&[0x60, 10 + i as u8]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, 0, 36, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0xC0, 0x00]);
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&[0, 16, 0, 0]);
        f.extend_from_slice(&[0x08, 0, 0, 0, 0, 0, 1, 0]);
        f
    }

    fn passes(filter: &str, frame: &[u8]) -> bool {
        let dead = pcap::Capture::dead(pcap::Linktype::ETHERNET).expect("a dead capture");
        let prog = dead.compile(filter, true).unwrap_or_else(|e| panic!("{filter}: {e}"));
        prog.filter(frame)
    }

    #[test]
    fn the_default_filter_text_is_unchanged_for_the_default_ports() {
        let base = "udp dst port 4791 or ether proto 0x8915 or ether proto 0x8808 \
                    or ip proto 47 or ip6 proto 47 or udp dst port 4789 or udp dst port 6081 \
                    or ether proto 0x8847 or ether proto 0x8848";
        let want = format!("{base} or (vlan and ({base} or (vlan and ({base}))))");
        assert_eq!(default_filter(4791), want);
        assert_eq!(LiveOptions::new("eth0").effective_filter(), want);
        assert_eq!(default_filter_with(4791, &[4789, 6081, 4789, 4791]), want, "each port once");
    }

    #[test]
    fn extra_tunnel_ports_join_every_nesting_level() {
        let f = default_filter_with(4791, &[4789, 8472, 6081, 6082]);
        let base = "udp dst port 4791 or ether proto 0x8915 or ether proto 0x8808 \
                    or ip proto 47 or ip6 proto 47 or udp dst port 4789 or udp dst port 8472 \
                    or udp dst port 6081 or udp dst port 6082 \
                    or ether proto 0x8847 or ether proto 0x8848";
        // The QinQ test stays nested inside the single-tag one.
        assert_eq!(f, format!("{base} or (vlan and ({base} or (vlan and ({base}))))"));
        let mut o = LiveOptions::new("eth0");
        o.tunnel_ports.extend([8472, 6082]);
        assert!(o.effective_filter().contains("udp dst port 8472"));
        o.filter = Some(String::new());
        assert_eq!(o.effective_filter(), "", "-f '' still captures everything");
    }

    #[test]
    fn libpcap_lets_extra_ports_through_tagged_or_not() {
        let plain = default_filter(4791);
        let extra = default_filter_with(4791, &[4789, 6081, 8472, 6082]);
        for tags in 0..=2 {
            for port in [4791, 4789, 6081] {
                assert!(passes(&plain, &udp_frame(tags, port)), "{port} with {tags} tags");
                assert!(passes(&extra, &udp_frame(tags, port)), "{port} with {tags} tags");
            }
            for port in [8472, 6082] {
                assert!(!passes(&plain, &udp_frame(tags, port)), "{port} not in the plain filter");
                assert!(passes(&extra, &udp_frame(tags, port)), "{port} with {tags} tags");
            }
            assert!(!passes(&extra, &udp_frame(tags, 53)), "other UDP stays out ({tags} tags)");
        }
        // Sixteen ports (both decoder sets full) still compile.
        let many: Vec<u16> = (0..16).map(|i| 20_000 + i).collect();
        assert!(passes(&default_filter_with(4791, &many), &udp_frame(2, 20_015)));
    }
}
