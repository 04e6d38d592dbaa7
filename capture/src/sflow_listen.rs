//! A live sFlow collector: a UDP socket (std, no libpcap, no privileges for ports above
//! 1023) whose datagrams become frames like a capture's, so every command reads them as it
//! reads a file of sFlow datagrams.
//!
//! Each datagram is handed on as an Ethernet/IP/UDP frame from its sender (IPv4 or IPv6, as
//! it came) to UDP port [`crate::sflow::PORT`] (6343, whichever port the socket is bound
//! to: the port is what marks a frame as sFlow), timestamped when it was received.

use crate::error::CaptureError;
use crate::reader::{Interface, Record};
use rocescope_decoder::LinkType;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a read waits before the caller gets an idle tick.
const POLL: Duration = Duration::from_millis(100);
/// Largest UDP payload over IPv4 (the frame's lengths must fit 16 bits).
const MAX_V4: usize = 65_507;
/// Largest UDP payload over IPv6.
const MAX_V6: usize = 65_527;

/// A bound sFlow collector socket.
#[derive(Debug)]
pub struct SflowListener {
    sock: UdpSocket,
    local: SocketAddr,
    name: String,
    buf: Vec<u8>,
    frame: Vec<u8>,
    /// Datagram bytes received so far ([`SflowListener::bytes_read`]).
    bytes: u64,
}

/// What a read gave.
#[derive(Debug)]
pub enum ListenNext<'a> {
    /// A datagram, as a frame.
    Packet(Record<'a>),
    /// Nothing within the poll interval.
    Idle,
}

impl SflowListener {
    /// Bind `addr` (e.g. `0.0.0.0:6343`; port 0 picks a free one, see
    /// [`SflowListener::local_addr`]).
    pub fn bind(addr: SocketAddr) -> Result<Self, CaptureError> {
        let name = format!("sFlow listener {addr}");
        let fail = |e: std::io::Error| {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => " (another collector, hsflowd or sflowtool, holds the port)",
                std::io::ErrorKind::PermissionDenied => {
                    " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
                }
                _ => "",
            };
            CaptureError::Live {
                interface: name.clone(),
                detail: format!("cannot listen for sFlow: {e}{hint}"),
            }
        };
        let sock = UdpSocket::bind(addr).map_err(fail)?;
        sock.set_read_timeout(Some(POLL)).map_err(fail)?;
        let local = sock.local_addr().map_err(fail)?;
        Ok(SflowListener {
            sock,
            local,
            name,
            buf: vec![0; 65_536],
            frame: Vec::with_capacity(65_600),
            bytes: 0,
        })
    }

    /// The datagram bytes received so far (a progress display's count).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The interface a capture file written from this source describes.
    pub fn interface(&self) -> Interface {
        Interface::live(&self.name, LinkType::ETHERNET, 65_600, None)
    }

    /// The next datagram as a frame, waiting up to the poll interval (100 ms).
    pub fn next_frame(&mut self) -> Result<ListenNext<'_>, CaptureError> {
        match self.recv(true)? {
            true => Ok(ListenNext::Packet(self.record())),
            false => Ok(ListenNext::Idle),
        }
    }

    /// Hand the datagrams available (at most `max`, waiting up to the poll interval for the
    /// first) to `f` as frames; `f` returns false to stop. Returns how many were handed on.
    pub fn dispatch(
        &mut self,
        max: usize,
        f: &mut dyn FnMut(&Record<'_>) -> bool,
    ) -> Result<usize, CaptureError> {
        let mut n = 0;
        while n < max.max(1) {
            if !self.recv(n == 0)? {
                break;
            }
            n += 1;
            if !f(&self.record()) {
                break;
            }
        }
        Ok(n)
    }

    /// Receive one datagram into `frame` (waiting when `wait`); false when none came.
    fn recv(&mut self, wait: bool) -> Result<bool, CaptureError> {
        let fail = |e: std::io::Error| CaptureError::Live {
            interface: self.name.clone(),
            detail: format!("receiving sFlow failed: {e}"),
        };
        self.sock.set_nonblocking(!wait).map_err(fail)?;
        let (len, from) = match self.sock.recv_from(&mut self.buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                return Ok(false)
            }
            Err(e) => return Err(fail(e)),
        };
        self.bytes = self.bytes.saturating_add(len as u64);
        let payload = self.buf.get(..len).unwrap_or(&[]);
        frame_for(&mut self.frame, from, self.local, payload);
        Ok(true)
    }

    fn record(&self) -> Record<'_> {
        let ts_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Record::whole(LinkType::ETHERNET, ts_ns, &self.frame)
    }
}

/// The IPv4 header checksum.
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 =
        h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Write into `frame` an Ethernet/IP/UDP frame carrying `payload` from `from` to `local`'s
/// address and port 6343 (IPv4-mapped IPv6 senders are IPv4).
pub fn frame_for(frame: &mut Vec<u8>, from: SocketAddr, local: SocketAddr, payload: &[u8]) {
    frame.clear();
    frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01]);
    let src_ip = from.ip().to_canonical();
    let udp = |frame: &mut Vec<u8>, payload: &[u8]| {
        frame.extend_from_slice(&from.port().to_be_bytes());
        frame.extend_from_slice(&crate::sflow::PORT.to_be_bytes());
        frame.extend_from_slice(&((payload.len() + 8) as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0]);
        frame.extend_from_slice(payload);
    };
    match src_ip {
        IpAddr::V4(s) => {
            let payload = payload.get(..MAX_V4.min(payload.len())).unwrap_or(&[]);
            let d = match local.ip().to_canonical() {
                IpAddr::V4(d) => d,
                IpAddr::V6(_) => std::net::Ipv4Addr::UNSPECIFIED,
            };
            frame.extend_from_slice(&[0x08, 0x00]);
            let total = (20 + 8 + payload.len()) as u16;
            let mut h = [0u8; 20];
            h[0] = 0x45;
            h[2..4].copy_from_slice(&total.to_be_bytes());
            h[6] = 0x40; // don't fragment
            h[8] = 64;
            h[9] = 17;
            h[12..16].copy_from_slice(&s.octets());
            h[16..20].copy_from_slice(&d.octets());
            let c = ipv4_checksum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            frame.extend_from_slice(&h);
            udp(frame, payload);
        }
        IpAddr::V6(s) => {
            let payload = payload.get(..MAX_V6.min(payload.len())).unwrap_or(&[]);
            let d = match local.ip() {
                IpAddr::V6(d) => d,
                IpAddr::V4(d) => d.to_ipv6_mapped(),
            };
            frame.extend_from_slice(&[0x86, 0xDD, 0x60, 0, 0, 0]);
            frame.extend_from_slice(&((payload.len() + 8) as u16).to_be_bytes());
            frame.extend_from_slice(&[17, 64]);
            frame.extend_from_slice(&s.octets());
            frame.extend_from_slice(&d.octets());
            udp(frame, payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_decoder::{decode, DecodeOptions, LinkType};
    use std::net::IpAddr;

    /// The frame's UDP source address, destination port and payload, as the decoder reads
    /// them (what the analyzer's sFlow detection uses).
    fn udp(frame: &[u8]) -> (IpAddr, u16, &[u8]) {
        let p = decode(LinkType::ETHERNET, frame, &DecodeOptions::default());
        let (ip, udp) = (p.ip.expect("an IP header"), p.udp.expect("a UDP header"));
        (ip.src(), udp.destination_port(), p.udp_payload)
    }

    #[test]
    fn datagrams_become_frames_to_the_sflow_port() {
        let mut l = SflowListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let to = l.local_addr();
        assert!(matches!(l.next_frame().unwrap(), ListenNext::Idle));
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.send_to(b"hello sflow", to).unwrap();
        let ListenNext::Packet(rec) = l.next_frame().unwrap() else { panic!("no datagram") };
        let (src, port, payload) = udp(rec.data);
        assert_eq!((src.to_string(), port, payload), ("127.0.0.1".into(), 6343, &b"hello sflow"[..]));
        assert_eq!(ipv4_checksum(&rec.data[14..34]), 0);
        let mut v6 = Vec::new();
        frame_for(&mut v6, "[2001:db8::5]:999".parse().unwrap(), to, b"x");
        let (src, _, payload) = udp(&v6);
        assert_eq!((src.to_string(), payload), ("2001:db8::5".into(), &b"x"[..]));
    }
}
