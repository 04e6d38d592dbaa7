//! sFlow in the analysis: a frame that is an sFlow v5 datagram (UDP to
//! port 6343) is not analysed as a frame; each raw packet header it samples is, counted as
//! many times as its sampling rate, at the capture point of its agent and data source
//! (ifIndex). The first datagram makes the analysis a sampled one
//! ([`crate::Analyzer::mark_sampled`]).

use crate::{Analyzer, FrameMeta, SamplingSource};
use rocescope_decoder::sflow::{self, HEADER_ETHERNET};
use rocescope_decoder::{decode, DecodeOptions, LinkType, Packet};
use rocescope_model::summary::{SflowReport, SflowSource};
use rustc_hash::FxHashMap;
use std::net::IpAddr;

/// sFlow data sources given a capture point of their own; the rest share one.
pub const MAX_SFLOW_POINTS: usize = 1024;

/// A data source: (agent, sub-agent, source type, source index).
type SourceKey = (IpAddr, u32, u32, u32);

/// What became of one raw packet header of an sFlow datagram
/// ([`Analyzer::push_frame_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleSeen {
    /// Its place among the datagram's raw packet headers (0-based, datagram order).
    pub index: usize,
    /// The capture point of its agent and data source (index into
    /// [`crate::Config::points`]).
    pub point: u16,
    /// The flow it was counted in (index into [`crate::Analyzer::flows`]), if RoCE.
    pub flow: Option<usize>,
    /// Analysed (an Ethernet header); other header protocols are skipped.
    pub analysed: bool,
}

/// sFlow state of one analysis.
#[derive(Debug, Default)]
pub(crate) struct SflowState {
    report: SflowReport,
    points: FxHashMap<SourceKey, (u16, usize)>,
    last_seq: Vec<Option<u32>>,
}

impl SflowState {
    pub(crate) fn report(&self) -> Option<SflowReport> {
        (self.report.datagrams > 0 || self.report.bad_datagrams > 0).then(|| self.report.clone())
    }
}

impl Analyzer {
    /// Feed one decoded frame: an sFlow datagram (UDP to port 6343, unless
    /// [`crate::Config::sflow`] is off) gives its samples, each scaled by its sampling rate at
    /// its agent's capture point (`opts` decodes the sampled headers); any other frame is fed
    /// as [`Analyzer::push`] does.
    pub fn push_packet(&mut self, meta: &FrameMeta, p: &Packet<'_>, opts: &DecodeOptions) {
        self.push_packet_with(meta, p, opts, |_| {});
    }

    /// [`Analyzer::push_packet`], telling `each` what became of every raw packet header of an
    /// sFlow datagram, in datagram order (the TUI lists each sampled header with its capture
    /// point and flow).
    pub fn push_packet_with(
        &mut self,
        meta: &FrameMeta,
        p: &Packet<'_>,
        opts: &DecodeOptions,
        mut each: impl FnMut(SampleSeen),
    ) {
        // The decoder has read the frame down to its UDP header already: an sFlow datagram is
        // told by its port there, not by walking the frame again per packet.
        if reads_as_sflow(self.cfg.sflow, p) {
            match sflow::parse(p.udp_payload) {
                Ok(dg) => return self.push_sflow(meta.number, meta.ts_ns, &dg, opts, &mut each),
                Err(e) => {
                    let s = &mut self.sflow;
                    s.report.bad_datagrams += 1;
                    s.report.first_error.get_or_insert_with(|| format!("frame {}: {e}", meta.number));
                }
            }
        }
        self.push(meta, p);
    }

    /// [`Analyzer::push_packet`] for a record read with `rocescope-capture`, as frame
    /// `number`. Feature `capture`.
    #[cfg(feature = "capture")]
    pub fn push_frame(
        &mut self,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        p: &Packet<'_>,
        opts: &DecodeOptions,
    ) {
        self.push_packet(&FrameMeta::from_record(number, rec), p, opts);
    }

    /// [`Analyzer::push_common`] for a record read with `rocescope-capture` whose frame
    /// [`rocescope_decoder::fast::classify`] recognised, as frame `number`, at the configured
    /// sampling rate (the fast path: no full decode). Feature `capture`.
    ///
    /// A frame to the sFlow port when the RoCE port is set to it is not a common frame for
    /// an analysis that reads sFlow: classify only when [`Analyzer::takes_common`] says so.
    #[cfg(feature = "capture")]
    #[inline(always)]
    pub fn push_common_record(
        &mut self,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        c: &rocescope_decoder::fast::Common,
    ) {
        let rate = self.cfg.sampling.map_or(1, |s| s.rate);
        let meta = FrameMeta::from_record(number, rec);
        if self.mirror_checking() {
            // Held back, in its order, while a switch clock is checked (mirror module).
            let p = rocescope_decoder::decode(rec.link_type, rec.data, &self.cfg.decode);
            self.push_sampled(&meta, &p, rate);
            return;
        }
        self.push_common_unheld(&meta, c, rate, None);
    }

    /// Whether frames [`rocescope_decoder::fast::classify`] recognises with `opts` may go
    /// through [`Analyzer::push_common`]: always, except when sFlow datagrams are read and
    /// the RoCE port is sFlow's (such frames are datagrams to [`Analyzer::push_packet`]).
    pub fn takes_common(&self, opts: &DecodeOptions) -> bool {
        Self::takes_common_with(&self.cfg, opts)
    }

    /// [`Analyzer::takes_common`] of an analyzer made with `cfg`, before it is made.
    pub fn takes_common_with(cfg: &crate::Config, opts: &DecodeOptions) -> bool {
        !(cfg.sflow && opts.roce_port == sflow::PORT)
    }

    /// [`Analyzer::push_packet_with`] for a record read with `rocescope-capture`, as frame
    /// `number`. Feature `capture`.
    #[cfg(feature = "capture")]
    pub fn push_frame_with(
        &mut self,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        p: &Packet<'_>,
        opts: &DecodeOptions,
        each: impl FnMut(SampleSeen),
    ) {
        self.push_packet_with(&FrameMeta::from_record(number, rec), p, opts, each);
    }

    fn push_sflow(
        &mut self,
        number: u64,
        ts_ns: i64,
        dg: &sflow::Datagram<'_>,
        opts: &DecodeOptions,
        each: &mut dyn FnMut(SampleSeen),
    ) {
        let mut index = 0;
        self.mark_sampled(SamplingSource::Sflow);
        self.sflow.report.datagrams += 1;
        self.sflow.report.skipped_samples += u64::from(dg.counter_samples) + u64::from(dg.other_samples);
        for s in &dg.samples {
            self.sflow.report.flow_samples += 1;
            self.sflow.report.skipped_records += u64::from(s.other_records);
            let key = (dg.agent, dg.sub_agent, s.info.source_type, s.info.source_index);
            let (point, at) = self.sflow_point(key);
            let st = &mut self.sflow;
            if let Some(src) = st.report.sources.get_mut(at) {
                src.samples += 1;
                src.sampling_rate = s.info.sampling_rate;
                src.drops = s.info.drops;
            }
            if let Some(last) = st.last_seq.get_mut(at) {
                if let Some(prev) = *last {
                    let d = s.info.sequence.wrapping_sub(prev);
                    if d > 1 && d < 1 << 31 {
                        if let Some(src) = st.report.sources.get_mut(at) {
                            src.sequence_gaps += u64::from(d - 1);
                        }
                    }
                }
                *last = Some(s.info.sequence);
            }
            for h in &s.headers {
                let seen = SampleSeen { index, point, flow: None, analysed: false };
                index += 1;
                if h.protocol != HEADER_ETHERNET {
                    self.sflow.report.skipped_records += 1;
                    each(seen);
                    continue;
                }
                self.sflow.report.headers += 1;
                let p = decode(LinkType::ETHERNET, h.header, opts);
                let len = h.frame_length.saturating_sub(h.stripped).max(h.header.len() as u32);
                let meta = FrameMeta { number, ts_ns, len, link_bps: None, point };
                let roce_before = self.totals.roce;
                self.push_sampled(&meta, &p, s.info.sampling_rate);
                let flow = (self.totals.roce > roce_before).then(|| self.last_flow()).flatten();
                each(SampleSeen { flow, analysed: true, ..seen });
            }
        }
    }

    /// The capture point of an sFlow data source (and its entry in the report's sources).
    fn sflow_point(&mut self, key: SourceKey) -> (u16, usize) {
        if let Some(&v) = self.sflow.points.get(&key) {
            return v;
        }
        let (agent, sub, stype, index) = key;
        let n = self.sflow.report.sources.len();
        let name = if n >= MAX_SFLOW_POINTS {
            // Too many sources: the rest share the last point.
            let p = self.sflow.report.sources.last().map_or(0, |s| s.point);
            return (p, n.saturating_sub(1));
        } else if n + 1 == MAX_SFLOW_POINTS {
            String::from("sflow: other sources")
        } else {
            let sub = if sub != 0 { format!(" sub-agent {sub}") } else { String::new() };
            let what = if stype == 0 { "ifIndex" } else { "source" };
            format!("sflow {agent}{sub} {what} {index}")
        };
        // Before any frame, the single source's own name gives way to the first agent's.
        let point = if n == 0 && self.totals.frames == 0 && self.cfg.points.len() <= 1 {
            self.cfg.points = vec![name];
            0
        } else {
            self.add_point(name)
        };
        self.sflow.report.sources.push(SflowSource {
            agent: agent.to_string(),
            sub_agent: sub,
            source_type: stype,
            if_index: index,
            point,
            samples: 0,
            sampling_rate: 0,
            drops: 0,
            sequence_gaps: 0,
        });
        self.sflow.last_seq.push(None);
        self.sflow.points.insert(key, (point, n));
        (point, n)
    }
}

/// Whether an analysis that reads sFlow (`reads`, [`crate::Config::sflow`]) takes frame `p`
/// as an sFlow datagram (its samples analysed, not the datagram): one to sFlow's port. The
/// decoder has read the frame down to its UDP header already: told by its port there.
pub(crate) fn reads_as_sflow(reads: bool, p: &Packet<'_>) -> bool {
    reads && p.udp.as_ref().is_some_and(|u| u.destination_port() == sflow::PORT)
}
