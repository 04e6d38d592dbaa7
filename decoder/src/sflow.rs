//! sFlow version 5 datagrams (sflow.org, `sflow_version_5.txt`): pure parsing of bytes, no
//! I/O, never panicking on any input.
//!
//! A switch's sFlow agent samples one packet in N on an interface and sends the first bytes
//! of each sampled packet (a *raw packet header* record) in UDP datagrams to a collector,
//! port 6343 by default, together with the sampling rate it used. rocescope reads those
//! headers as it reads captured frames, scaling each by its own sampling rate.
//!
//! The layout is XDR (RFC 4506): big-endian 32-bit words, opaque data padded to a multiple
//! of four bytes. This module reads the datagram header (version, agent address IPv4/IPv6,
//! sub-agent id, sequence number, uptime), flow samples (format 1) and expanded flow samples
//! (format 3) with their raw packet header records (record format 1). Counter samples, other
//! sample and record formats (and any enterprise's) are skipped by their length and
//! counted, as the specification asks of a collector.
//!
//! ```
//! use rocescope_decoder::sflow;
//!
//! // A datagram from agent 192.0.2.1 with no samples.
//! let mut d = Vec::new();
//! for w in [5u32, 1, 0xC000_0201, 0, 7, 1000, 0] {
//!     d.extend_from_slice(&w.to_be_bytes());
//! }
//! let dg = sflow::parse(&d)?;
//! assert_eq!(dg.agent.to_string(), "192.0.2.1");
//! assert_eq!((dg.sequence, dg.uptime_ms, dg.samples.len()), (7, 1000, 0));
//! assert!(sflow::parse(&d[..10]).is_err());
//! # Ok::<(), sflow::SflowError>(())
//! ```

use nom::bytes::complete::take;
use nom::number::complete::be_u32;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The sFlow collector's UDP port.
pub const PORT: u16 = 6343;

/// `header_protocol` of a raw packet header record: Ethernet (ISO 8802-3).
pub const HEADER_ETHERNET: u32 = 1;

/// Samples one datagram may declare before it is called malformed: a datagram fits in one
/// UDP packet (64 KiB), and every sample takes at least 8 bytes.
const MAX_ITEMS: u32 = 65_536 / 8;

/// Why a datagram could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SflowError {
    /// Byte offset in the datagram where reading stopped.
    pub offset: usize,
    /// What is wrong.
    pub kind: SflowErrorKind,
}

/// What is wrong with a datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SflowErrorKind {
    /// Not version 5 (sFlow v2/v4 datagrams, or not sFlow at all).
    Version(u32),
    /// The agent address type is neither 1 (IPv4) nor 2 (IPv6) nor 0 (unknown).
    AddressType(u32),
    /// The datagram ends inside a field (`what`).
    Truncated(&'static str),
    /// A sample or record declares a length beyond the datagram (or not a multiple of 4).
    BadLength {
        /// The sample or record.
        what: &'static str,
        /// Its declared length.
        declared: u32,
        /// Bytes left in the datagram.
        left: usize,
    },
    /// A count no datagram can hold.
    BadCount {
        /// What is counted.
        what: &'static str,
        /// The count.
        count: u32,
    },
}

impl fmt::Display for SflowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sFlow datagram at byte {}: ", self.offset)?;
        match &self.kind {
            SflowErrorKind::Version(v) => write!(f, "version {v}, not 5 (only sFlow v5 is read)"),
            SflowErrorKind::AddressType(t) => {
                write!(f, "agent address type {t} is neither IPv4 (1) nor IPv6 (2)")
            }
            SflowErrorKind::Truncated(what) => write!(f, "cut off inside the {what}"),
            SflowErrorKind::BadLength { what, declared, left } => {
                write!(f, "{what} declares {declared} bytes, {left} left in the datagram")
            }
            SflowErrorKind::BadCount { what, count } => write!(f, "{count} {what} cannot fit in a datagram"),
        }
    }
}

impl std::error::Error for SflowError {}

/// One sFlow v5 datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// The agent's address (`0.0.0.0` when the agent sent type 0, unknown).
    pub agent: IpAddr,
    /// Sub-agent id (several sFlow processes on one device).
    pub sub_agent: u32,
    /// Datagram sequence number (per agent and sub-agent).
    pub sequence: u32,
    /// Agent uptime, ms.
    pub uptime_ms: u32,
    /// Flow samples, in datagram order.
    pub samples: Vec<FlowSample<'a>>,
    /// Counter samples (formats 2 and 4), skipped.
    pub counter_samples: u32,
    /// Samples of other formats or enterprises, skipped.
    pub other_samples: u32,
}

/// A flow sample's own fields (format 1, or 3: expanded), without its records: what a
/// sampled header is reported with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSampleInfo {
    /// From an expanded flow sample (format 3).
    pub expanded: bool,
    /// Sample sequence number (per data source).
    pub sequence: u32,
    /// Data source type (0 ifIndex, 1 smonVlanDataSource, 2 entPhysicalEntry).
    pub source_type: u32,
    /// Data source index (the ifIndex for type 0).
    pub source_index: u32,
    /// One packet in this many was sampled.
    pub sampling_rate: u32,
    /// Packets that could have been sampled so far.
    pub sample_pool: u32,
    /// Samples dropped for lack of resources.
    pub drops: u32,
    /// Input interface: ifIndex (format 0), else the raw 32-bit value of the compact form.
    pub input: u32,
    /// Output interface, as `input`.
    pub output: u32,
}

impl FlowSampleInfo {
    /// The data source in words: `ifIndex 7`, `VLAN 100`, `entPhysical 3`, `source 9:5`.
    pub fn source(&self) -> String {
        match self.source_type {
            0 => format!("ifIndex {}", self.source_index),
            1 => format!("VLAN {}", self.source_index),
            2 => format!("entPhysical {}", self.source_index),
            t => format!("source {t}:{}", self.source_index),
        }
    }
}

/// A flow sample (format 1) or expanded flow sample (format 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSample<'a> {
    /// Its own fields.
    pub info: FlowSampleInfo,
    /// Raw packet header records.
    pub headers: Vec<SampledHeader<'a>>,
    /// Records of other formats (extended switch, router, ...), skipped.
    pub other_records: u32,
}

/// A raw packet header record (flow record format 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampledHeader<'a> {
    /// Protocol of the header's first byte (1: Ethernet).
    pub protocol: u32,
    /// Length of the packet before sampling (on the wire, as the agent counts it).
    pub frame_length: u32,
    /// Bytes removed before the header was taken (e.g. the 4-byte FCS).
    pub stripped: u32,
    /// The header bytes.
    pub header: &'a [u8],
}

type Res<'a, T> = Result<(&'a [u8], T), SflowError>;

/// A reader over the datagram that knows where it is.
struct Cursor<'a> {
    whole: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn offset(&self, rest: &[u8]) -> usize {
        self.whole.len().saturating_sub(rest.len())
    }

    fn err(&self, rest: &[u8], kind: SflowErrorKind) -> SflowError {
        SflowError { offset: self.offset(rest), kind }
    }

    fn u32(&self, i: &'a [u8], what: &'static str) -> Res<'a, u32> {
        be_u32::<_, nom::error::Error<&[u8]>>(i).map_err(|_| self.err(i, SflowErrorKind::Truncated(what)))
    }

    fn bytes(&self, i: &'a [u8], n: usize, what: &'static str) -> Res<'a, &'a [u8]> {
        take::<_, _, nom::error::Error<&[u8]>>(n)(i).map_err(|_| self.err(i, SflowErrorKind::Truncated(what)))
    }

    /// A length-prefixed item: (format, body), the body exactly its declared length.
    fn item(&self, i: &'a [u8], what: &'static str) -> Res<'a, (u32, &'a [u8])> {
        let (i, format) = self.u32(i, what)?;
        let (rest, len) = self.u32(i, what)?;
        let left = rest.len();
        if len as usize > left || len % 4 != 0 {
            return Err(self.err(i, SflowErrorKind::BadLength { what, declared: len, left }));
        }
        let (rest, body) = self.bytes(rest, len as usize, what)?;
        Ok((rest, (format, body)))
    }

    fn count(&self, i: &'a [u8], what: &'static str) -> Res<'a, u32> {
        let (rest, n) = self.u32(i, what)?;
        if n > MAX_ITEMS || (n as usize).saturating_mul(8) > rest.len() {
            return Err(self.err(i, SflowErrorKind::BadCount { what, count: n }));
        }
        Ok((rest, n))
    }
}

/// Parse one sFlow v5 datagram (a UDP payload).
///
/// Errors name the byte offset and what is wrong; a sample or record of a format rocescope
/// does not read is skipped by its length, not an error.
pub fn parse(data: &[u8]) -> Result<Datagram<'_>, SflowError> {
    let c = Cursor { whole: data };
    let (i, version) = c.u32(data, "version")?;
    if version != 5 {
        return Err(c.err(data, SflowErrorKind::Version(version)));
    }
    let (i, atype) = c.u32(i, "agent address type")?;
    let (i, agent) = match atype {
        0 => (i, IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        1 => {
            let (i, b) = c.bytes(i, 4, "agent address")?;
            let a: [u8; 4] = b.try_into().unwrap_or([0; 4]);
            (i, IpAddr::V4(Ipv4Addr::from(a)))
        }
        2 => {
            let (i, b) = c.bytes(i, 16, "agent address")?;
            let a: [u8; 16] = b.try_into().unwrap_or([0; 16]);
            (i, IpAddr::V6(Ipv6Addr::from(a)))
        }
        t => return Err(c.err(i, SflowErrorKind::AddressType(t))),
    };
    let (i, sub_agent) = c.u32(i, "sub-agent id")?;
    let (i, sequence) = c.u32(i, "sequence number")?;
    let (i, uptime_ms) = c.u32(i, "uptime")?;
    let (mut i, n) = c.count(i, "samples")?;
    let mut dg = Datagram {
        agent,
        sub_agent,
        sequence,
        uptime_ms,
        samples: Vec::new(),
        counter_samples: 0,
        other_samples: 0,
    };
    for _ in 0..n {
        let (rest, (format, body)) = c.item(i, "sample")?;
        match format {
            1 | 3 => dg.samples.push(flow_sample(&c, body, format == 3)?),
            2 | 4 => dg.counter_samples += 1,
            _ => dg.other_samples += 1,
        }
        i = rest;
    }
    Ok(dg)
}

/// A flow sample's body (`expanded`: format 3).
fn flow_sample<'a>(c: &Cursor<'a>, i: &'a [u8], expanded: bool) -> Result<FlowSample<'a>, SflowError> {
    let (i, sequence) = c.u32(i, "flow sample")?;
    let (i, source_type, source_index) = if expanded {
        let (i, t) = c.u32(i, "flow sample")?;
        let (i, x) = c.u32(i, "flow sample")?;
        (i, t, x)
    } else {
        let (i, id) = c.u32(i, "flow sample")?;
        (i, id >> 24, id & 0x00FF_FFFF)
    };
    let (i, sampling_rate) = c.u32(i, "flow sample")?;
    let (i, sample_pool) = c.u32(i, "flow sample")?;
    let (i, drops) = c.u32(i, "flow sample")?;
    let (i, input, output) = if expanded {
        // format, then value: a format-0 value is the ifIndex.
        let (i, _f) = c.u32(i, "flow sample")?;
        let (i, inp) = c.u32(i, "flow sample")?;
        let (i, _f) = c.u32(i, "flow sample")?;
        let (i, out) = c.u32(i, "flow sample")?;
        (i, inp, out)
    } else {
        let (i, inp) = c.u32(i, "flow sample")?;
        let (i, out) = c.u32(i, "flow sample")?;
        (i, inp, out)
    };
    let (mut i, n) = c.count(i, "flow records")?;
    let info = FlowSampleInfo {
        expanded,
        sequence,
        source_type,
        source_index,
        sampling_rate,
        sample_pool,
        drops,
        input,
        output,
    };
    let mut s = FlowSample { info, headers: Vec::new(), other_records: 0 };
    for _ in 0..n {
        let (rest, (format, body)) = c.item(i, "flow record")?;
        if format == 1 {
            s.headers.push(raw_header(c, body)?);
        } else {
            s.other_records += 1;
        }
        i = rest;
    }
    Ok(s)
}

/// A raw packet header record's body.
fn raw_header<'a>(c: &Cursor<'a>, i: &'a [u8]) -> Result<SampledHeader<'a>, SflowError> {
    let (i, protocol) = c.u32(i, "raw packet header")?;
    let (i, frame_length) = c.u32(i, "raw packet header")?;
    let (i, stripped) = c.u32(i, "raw packet header")?;
    let (rest, len) = c.u32(i, "raw packet header")?;
    if len as usize > rest.len() {
        return Err(
            c.err(i, SflowErrorKind::BadLength { what: "sampled header", declared: len, left: rest.len() })
        );
    }
    let (_, header) = c.bytes(rest, len as usize, "sampled header")?;
    Ok(SampledHeader { protocol, frame_length, stripped, header })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    /// A datagram from 10.0.0.100 with one flow sample (format 1, or 3 when `expanded`)
    /// holding one raw header record of `hdr`, then a counter sample.
    fn datagram(expanded: bool, hdr: &[u8]) -> Vec<u8> {
        let mut rec = words(&[1, 1500, 4, hdr.len() as u32]);
        rec.extend_from_slice(hdr);
        while rec.len() % 4 != 0 {
            rec.push(0);
        }
        let mut body =
            if expanded { words(&[9, 0, 3, 4, 400, 0, 0, 3, 0, 7]) } else { words(&[9, 3, 4, 400, 0, 3, 7]) };
        body.extend(words(&[2, 1001, 4, 0xAABB_CCDD])); // an extended record, skipped
        body.extend(words(&[1, rec.len() as u32]));
        body.extend(rec);
        let mut d = words(&[5, 1, 0x0A00_0064, 0, 42, 5000, 2]);
        d.extend(words(&[if expanded { 3 } else { 1 }, body.len() as u32]));
        d.extend(body);
        d.extend(words(&[2, 8, 1, 2]));
        d
    }

    #[test]
    fn flow_samples_of_both_formats() {
        for expanded in [false, true] {
            let d = datagram(expanded, b"abcdef");
            let dg = parse(&d).unwrap();
            assert_eq!(dg.agent, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 100)));
            assert_eq!((dg.sequence, dg.uptime_ms, dg.counter_samples, dg.other_samples), (42, 5000, 1, 0));
            let s = &dg.samples[0];
            let i = s.info;
            assert_eq!(i.expanded, expanded);
            assert_eq!((i.sequence, i.source_type, i.source_index), (9, 0, 3));
            assert_eq!((i.sampling_rate, i.sample_pool, i.drops, i.input, i.output), (4, 400, 0, 3, 7));
            assert_eq!(i.source(), "ifIndex 3");
            assert_eq!(s.other_records, 1);
            assert_eq!(
                s.headers,
                vec![SampledHeader { protocol: 1, frame_length: 1500, stripped: 4, header: b"abcdef" }]
            );
        }
    }

    #[test]
    fn ipv6_agents_and_damage() {
        let mut d = words(&[5, 2]);
        d.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        d.extend(words(&[1, 2, 3, 0]));
        let dg = parse(&d).unwrap();
        assert_eq!(dg.agent.to_string(), "2001:db8::1");
        assert_eq!(dg.sub_agent, 1);

        let e = parse(&words(&[4, 1, 0])).unwrap_err();
        assert_eq!(e.kind, SflowErrorKind::Version(4));
        assert!(e.to_string().contains("version 4, not 5"), "{e}");
        let e = parse(&words(&[5, 3, 0])).unwrap_err();
        assert_eq!(e.kind, SflowErrorKind::AddressType(3));

        let good = datagram(false, b"abcdefgh");
        // Every cut is an error, never a panic, and says where.
        for n in 0..good.len() {
            let e = parse(&good[..n]).unwrap_err();
            assert!(e.offset <= n, "{n}: {e}");
        }
        // A sample longer than the datagram.
        let mut bad = good.clone();
        bad[32..36].copy_from_slice(&0xFFFF_FF00u32.to_be_bytes());
        let e = parse(&bad).unwrap_err();
        assert!(matches!(e.kind, SflowErrorKind::BadLength { what: "sample", .. }), "{e}");
        assert!(e.to_string().contains("declares 4294967040 bytes"), "{e}");
        // A sample count no datagram can hold.
        let mut bad = good;
        bad[24..28].copy_from_slice(&1_000_000u32.to_be_bytes());
        assert!(matches!(parse(&bad).unwrap_err().kind, SflowErrorKind::BadCount { .. }));
    }
}
