//! sFlow v5 datagrams in `decode` (and the TUI's frame list): a frame holding one (UDP to
//! port 6343, unless `--no-sflow`) is shown with the datagram's header and then every packet
//! header it samples, each decoded as a captured frame would be, as tshark does.

use super::{json, summary, verbose, Frame};
use rocescope_capture::Record;
use rocescope_decoder::sflow::{self, SflowError};
use rocescope_decoder::{decode, DecodeOptions, LinkType, Packet};
use serde::Serialize;
use std::fmt::Write;
use std::net::IpAddr;

/// An sFlow datagram read from a frame: its header and its sampled packet headers, or why
/// it could not be read.
pub struct Datagram<'a> {
    /// The datagram's header fields and sample counts, or the parse error.
    pub read: Result<Header, SflowError>,
    /// Every raw packet header record, in datagram order, decoded.
    pub samples: Vec<Sample<'a>>,
}

/// The datagram's own fields.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    /// Agent address.
    pub agent: IpAddr,
    /// Sub-agent id.
    pub sub_agent: u32,
    /// Datagram sequence number.
    pub sequence: u32,
    /// Agent uptime, ms.
    pub uptime_ms: u32,
    /// Flow samples (formats 1 and 3).
    pub flow_samples: usize,
    /// Counter samples, skipped.
    pub counter_samples: u32,
    /// Samples of other formats, skipped.
    pub other_samples: u32,
    /// Flow records other than raw packet headers, skipped.
    pub other_records: u32,
}

/// One sampled packet header with the flow sample it came in.
pub struct Sample<'a> {
    /// 1-based index of its flow sample in the datagram.
    pub flow_sample: usize,
    /// Its flow sample's own fields (sequence, source, rate, pool, drops, interfaces).
    pub info: sflow::FlowSampleInfo,
    /// Header protocol (1 Ethernet, 11 IPv4, 12 IPv6).
    pub protocol: u32,
    /// Length of the sampled packet (as the agent counts it).
    pub frame_length: u32,
    /// Bytes the agent removed before taking the header (the FCS).
    pub stripped: u32,
    /// The header as a capture record: the datagram's time, the header's bytes, the
    /// sampled packet's length (less what was stripped).
    pub record: Record<'a>,
    /// The header decoded; `None` for a header protocol rocescope does not decode.
    pub packet: Option<Packet<'a>>,
}

/// The link type a raw packet header of `protocol` is decoded as.
fn link_type(protocol: u32) -> Option<LinkType> {
    match protocol {
        sflow::HEADER_ETHERNET => Some(LinkType::ETHERNET),
        11 => Some(LinkType::IPV4),
        12 => Some(LinkType::IPV6),
        _ => None,
    }
}

/// The sFlow datagram in frame `rec` (decoded as `p`), if the frame is one: UDP to port
/// 6343 (when `enabled`, i.e. without `--no-sflow`).
pub fn read<'a>(
    rec: &Record<'a>,
    p: &Packet<'a>,
    opts: &DecodeOptions,
    enabled: bool,
) -> Option<Datagram<'a>> {
    if !enabled || p.udp.as_ref().is_none_or(|u| u.destination_port() != sflow::PORT) {
        return None;
    }
    let dg = match sflow::parse(p.udp_payload) {
        Ok(dg) => dg,
        Err(e) => return Some(Datagram { read: Err(e), samples: Vec::new() }),
    };
    let mut samples = Vec::new();
    for (i, s) in dg.samples.iter().enumerate() {
        for h in &s.headers {
            let len = h.frame_length.saturating_sub(h.stripped).max(h.header.len() as u32);
            let lt = link_type(h.protocol);
            let record = Record {
                ts_ns: rec.ts_ns,
                caplen: h.header.len() as u32,
                len,
                link_type: lt.unwrap_or(LinkType(0)),
                interface: rec.interface,
                link_bps: None,
                point: rec.point,
                data: h.header,
                empty_before: 0,
            };
            samples.push(Sample {
                flow_sample: i + 1,
                info: s.info,
                protocol: h.protocol,
                frame_length: h.frame_length,
                stripped: h.stripped,
                record,
                packet: lt.map(|lt| decode(lt, h.header, opts)),
            });
        }
    }
    let header = Header {
        agent: dg.agent,
        sub_agent: dg.sub_agent,
        sequence: dg.sequence,
        uptime_ms: dg.uptime_ms,
        flow_samples: dg.samples.len(),
        counter_samples: dg.counter_samples,
        other_samples: dg.other_samples,
        other_records: dg.samples.iter().map(|s| s.other_records).sum(),
    };
    Some(Datagram { read: Ok(header), samples })
}

impl Datagram<'_> {
    /// The frame or any sampled header satisfies `matches` (the display filter: a datagram
    /// is shown when it or one of its samples matches).
    pub fn any_sample(&self, mut matches: impl FnMut(&Packet<'_>, u64) -> bool) -> bool {
        self.samples.iter().any(|s| s.packet.as_ref().is_some_and(|p| matches(p, u64::from(s.record.len))))
    }

    /// What goes at the end of the frame's summary line: ` sFlow v5 agent ... seq N, 5
    /// samples` or the parse error.
    pub fn summary_tag(&self, out: &mut String) {
        match &self.read {
            Ok(h) => {
                let _ = write!(
                    out,
                    " sFlow v5 agent {} sub-agent {} seq {}, {} sampled header{}",
                    h.agent,
                    h.sub_agent,
                    h.sequence,
                    self.samples.len(),
                    if self.samples.len() == 1 { "" } else { "s" }
                );
                let skipped = h.counter_samples + h.other_samples;
                if skipped > 0 {
                    let _ = write!(out, " ({skipped} counter/other sample{} skipped)", plural(skipped));
                }
            }
            Err(e) => {
                let _ = write!(out, " [malformed: {e}]");
            }
        }
    }

    /// One indented line per sampled header (each preceded by a newline):
    /// `    sample 2/5 ifIndex 7 1-in-4096: 10.0.0.1 → 10.0.0.2 RoCEv2 ...`.
    pub fn summary_lines(&self, opts: &DecodeOptions, number: u64, out: &mut String) {
        let n = self.samples.len();
        for (i, s) in self.samples.iter().enumerate() {
            out.push('\n');
            let _ =
                write!(out, "    sample {}/{n} {} 1-in-{}: ", i + 1, s.info.source(), s.info.sampling_rate);
            sample_body(s, opts, number, out);
        }
    }

    /// The `-V` tree of the datagram and its samples, after the frame's own tree.
    pub fn verbose(&self, opts: &DecodeOptions, number: u64, out: &mut String) {
        let h = match &self.read {
            Ok(h) => h,
            Err(e) => {
                let _ = writeln!(out, "sFlow v5 datagram: [malformed: {e}]");
                return;
            }
        };
        let _ = writeln!(
            out,
            "sFlow v5, Agent: {}, Sub-agent: {}, Sequence: {}, Uptime: {} ms",
            h.agent, h.sub_agent, h.sequence, h.uptime_ms
        );
        let _ = writeln!(
            out,
            "    Flow samples: {}, sampled headers: {}, counter samples skipped: {}, other samples skipped: {}, other flow records skipped: {}",
            h.flow_samples,
            self.samples.len(),
            h.counter_samples,
            h.other_samples,
            h.other_records
        );
        let n = self.samples.len();
        for (i, s) in self.samples.iter().enumerate() {
            let _ = writeln!(
                out,
                "    Sample {}/{n} (flow sample {}{}), Sequence: {}, Source: {}, Sampling rate: 1 in {}, Sample pool: {}, Drops: {}, Input: {}, Output: {}",
                i + 1,
                s.flow_sample,
                if s.info.expanded { ", expanded" } else { "" },
                s.info.sequence,
                s.info.source(),
                s.info.sampling_rate,
                s.info.sample_pool,
                s.info.drops,
                s.info.input,
                s.info.output
            );
            let _ = writeln!(
                out,
                "        Raw packet header: protocol {} ({}), frame length {}, stripped {}, header {} bytes",
                s.protocol,
                protocol_name(s.protocol),
                s.frame_length,
                s.stripped,
                s.record.caplen
            );
            if let Some(p) = &s.packet {
                let mut tree = String::new();
                verbose::write(&Frame { number, record: &s.record, packet: p, rel_ns: 0, opts }, &mut tree);
                // The first line (`Frame N: ...`) is the record line above.
                for l in tree.lines().skip(1) {
                    let _ = writeln!(out, "        {l}");
                }
            }
        }
    }

    /// The `"sflow"` object of the frame's JSON (docs/decode-json.md, "sFlow").
    pub fn json(&self, opts: &DecodeOptions, number: u64, out: &mut String) {
        let h = match &self.read {
            Ok(h) => h,
            Err(e) => {
                let v = serde_json::json!({ "error": e.to_string() });
                out.push_str(&v.to_string());
                return;
            }
        };
        let head = HeaderJ {
            version: 5,
            agent: h.agent.to_string(),
            sub_agent: h.sub_agent,
            sequence: h.sequence,
            uptime_ms: h.uptime_ms,
            flow_samples: h.flow_samples,
            counter_samples: h.counter_samples,
            other_samples: h.other_samples,
            other_records: h.other_records,
        };
        let head = serde_json::to_string(&head).unwrap_or_else(|_| String::from("{}"));
        out.push_str(head.trim_end_matches('}'));
        out.push_str(",\"samples\":[");
        for (i, s) in self.samples.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let j = SampleJ {
                flow_sample: s.flow_sample,
                expanded: s.info.expanded,
                sequence: s.info.sequence,
                source_type: s.info.source_type,
                source_index: s.info.source_index,
                sampling_rate: s.info.sampling_rate,
                sample_pool: s.info.sample_pool,
                drops: s.info.drops,
                input: s.info.input,
                output: s.info.output,
                protocol: s.protocol,
                frame_length: s.frame_length,
                stripped: s.stripped,
            };
            let j = serde_json::to_string(&j).unwrap_or_else(|_| String::from("{}"));
            out.push_str(j.trim_end_matches('}'));
            if let Some(p) = &s.packet {
                out.push_str(",\"header\":");
                json::write(&Frame { number, record: &s.record, packet: p, rel_ns: 0, opts }, out);
            }
            out.push('}');
        }
        out.push_str("]}");
    }
}

/// A sampled header's summary line without number and time (the form it takes after
/// `sample 2/5 ifIndex 7 1-in-4096: ` in `decode`, and in the TUI's frame list).
pub fn sample_body(s: &Sample<'_>, opts: &DecodeOptions, number: u64, out: &mut String) {
    match &s.packet {
        Some(p) => summary::write_body(&Frame { number, record: &s.record, packet: p, rel_ns: 0, opts }, out),
        None => {
            let _ = write!(
                out,
                "header protocol {} ({}), {} bytes, not decoded",
                s.protocol,
                protocol_name(s.protocol),
                s.record.caplen
            );
        }
    }
}

/// The name of a raw packet header's protocol (sFlow v5 `header_protocol`).
fn protocol_name(p: u32) -> &'static str {
    match p {
        1 => "Ethernet",
        2 => "Token Bus",
        3 => "Token Ring",
        4 => "FDDI",
        5 => "Frame Relay",
        6 => "X.25",
        7 => "PPP",
        8 => "SMDS",
        9 => "AAL5",
        10 => "AAL5 IP",
        11 => "IPv4",
        12 => "IPv6",
        13 => "MPLS",
        14 => "POS",
        _ => "unknown",
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[derive(Serialize)]
struct HeaderJ {
    version: u32,
    agent: String,
    sub_agent: u32,
    sequence: u32,
    uptime_ms: u32,
    flow_samples: usize,
    counter_samples: u32,
    other_samples: u32,
    other_records: u32,
}

#[derive(Serialize)]
struct SampleJ {
    flow_sample: usize,
    expanded: bool,
    sequence: u32,
    source_type: u32,
    source_index: u32,
    sampling_rate: u32,
    sample_pool: u32,
    drops: u32,
    input: u32,
    output: u32,
    protocol: u32,
    frame_length: u32,
    stripped: u32,
}
