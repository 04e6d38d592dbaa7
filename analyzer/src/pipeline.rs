//! The analysis in two stages (`report --threads 2`, issue 39): the mirror-copy checks made
//! ahead of the rest of the analysis, by the thread that reads the capture.
//!
//! Every RoCE frame the analysis takes is first checked against the frames before it for a
//! mirror's second copy ([`crate::dedup`]). The check is the one piece of the per-frame work
//! that depends on nothing else the analysis keeps: its table sees each frame's fingerprint,
//! in capture order, and answers "a copy or not". So it can run a stage ahead: the reading
//! thread classifies each frame ([`rocescope_decoder::fast::classify`]) and checks it
//! ([`CopyChecks::check_common`]); the analysing thread takes the frame with the answer
//! ([`Analyzer::push_common_checked`]) and does everything else, in the same order. The
//! report is the one-thread report, byte for byte: the same checks, of the same frames, in
//! the same order, with the same answers.
//!
//! **The one rule.** The checks run ahead only while every frame that reaches the analysis
//! of RoCE packets is a common frame. The first frame that is not (a RoCE frame only the full
//! decoder reads, a frame in a tunnel: an ERSPAN session's clock check holds frames back,
//! [`crate::mirror`]; an sFlow datagram, whose samples are analysed) hands the checks over
//! ([`CopyChecks::hands_over`],
//! [`Analyzer::resume_copy_checks`]), in order, and the analysing thread checks every frame
//! from there on itself, as one thread does. Frames that never reach it (PFC and PAUSE
//! frames, other traffic) hand nothing over.

use crate::dedup::{Copy, Dedup};
use crate::{Analyzer, Config};
use rocescope_decoder::fast::Common;
use rocescope_decoder::Packet;

/// The mirror-copy checks of a capture's frames, made ahead of the analysis (module docs).
#[derive(Clone, Debug, Default)]
pub struct CopyChecks {
    dedup: Dedup,
    /// The analysis reads sFlow datagrams ([`Config::sflow`]).
    sflow: bool,
}

impl CopyChecks {
    /// No frame checked yet, for an analysis made with `cfg`.
    pub fn new(cfg: &Config) -> Self {
        CopyChecks { dedup: Dedup::default(), sflow: cfg.sflow }
    }

    /// Whether common frame `c` at capture point `point` and time `ts_ns` is a mirror's copy
    /// of a frame checked before it: the answer the analysis would find itself.
    #[inline]
    pub fn check_common(&mut self, point: u16, ts_ns: i64, c: &Common) -> Copy {
        self.dedup.check_common(point, ts_ns, c)
    }

    /// Whether frame `p` (one [`rocescope_decoder::fast::classify`] did not take, decoded in
    /// full) could bring a packet to the analysis of RoCE packets: RoCE, a tunnel, or an
    /// sFlow datagram the analysis reads. Then the checks go to the analysis before it
    /// ([`Analyzer::resume_copy_checks`]).
    pub fn hands_over(&self, p: &Packet<'_>) -> bool {
        let sflow = crate::sflow::reads_as_sflow(self.sflow, p);
        p.roce.is_some() || !p.tunnels.is_empty() || p.tunnel_undecoded.is_some() || sflow
    }
}

impl Analyzer {
    /// [`Analyzer::push_common_record`] for a common frame whose mirror-copy check `copy` was
    /// made ahead ([`CopyChecks::check_common`], every RoCE frame before it checked there
    /// too, in order). Feature `capture`.
    #[cfg(feature = "capture")]
    #[inline]
    pub fn push_common_checked(
        &mut self,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        c: &Common,
        copy: Copy,
    ) {
        let rate = self.cfg.sampling.map_or(1, |s| s.rate);
        let meta = crate::FrameMeta::from_record(number, rec);
        self.push_common_unheld(&meta, c, rate, Some(copy));
    }

    /// Take over the mirror-copy checks made ahead so far: from here on the analysis checks
    /// each frame itself.
    pub fn resume_copy_checks(&mut self, checks: CopyChecks) {
        self.dedup = checks.dedup;
    }
}

#[cfg(all(test, feature = "capture"))]
mod tests {
    use super::*;
    use crate::Config;
    use rocescope_decoder::build::{pfc_frame, ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
    use rocescope_decoder::ext::AethRepr;
    use rocescope_decoder::mac_control::Pfc;
    use rocescope_decoder::{fast, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions, VlanTag};

    /// A frame from host `src` to `dst`, with IP identification (IPv6: flow label) `id`,
    /// TTL `ttl`, CE when `ce`; every third PSN's tagged.
    #[allow(clippy::too_many_arguments)]
    fn frame(src: u8, dst: u8, op: Opcode, psn: u32, id: u16, ttl: u8, ce: bool, v6: bool) -> Vec<u8> {
        let ip = if v6 {
            IpRepr::V6 {
                src: [0xfd00, 0, 0, 0, 0, 0, 0, u16::from(src)].into(),
                dst: [0xfd00, 0, 0, 0, 0, 0, 0, u16::from(dst)].into(),
                dscp: 26,
                ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
                hop_limit: ttl,
                flow_label: u32::from(id),
            }
        } else {
            IpRepr::V4 {
                src: [10, 0, 0, src].into(),
                dst: [10, 0, 0, dst].into(),
                dscp: 26,
                ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
                ttl,
                id,
            }
        };
        let ext = if op == Opcode::RC_ACKNOWLEDGE {
            ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() }
        } else {
            ExtRepr::default()
        };
        let bth = BthRepr { opcode: op, dest_qp: u32::from(dst), psn, ..Default::default() };
        let payload = if op == Opcode::RC_ACKNOWLEDGE { 0 } else { 64 };
        let ib = IbRepr { bth, ext, payload: vec![0; payload], icrc: IcrcMode::Correct };
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, src], [2, 0, 0, 0, 0, dst], ip, ib);
        if psn % 3 == 0 {
            f.vlans.push(VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 10 });
        }
        f.build(OpcodeOptions::default())
    }

    /// Frames with copies (same TTL and one lower), resends, CE on a copy, IPv6, ACKs and
    /// cut frames: each checked ahead gets the answer the analysis finds itself, and the two
    /// analyses report the same.
    #[test]
    fn checks_made_ahead_are_the_checks_the_analysis_makes() {
        let opts = DecodeOptions::default();
        let mut frames = Vec::new();
        for i in 0..400u32 {
            let (src, dst) = (1 + (i % 5) as u8, 10 + (i % 3) as u8);
            let op = if i % 4 == 3 { Opcode::RC_ACKNOWLEDGE } else { Opcode::RC_WRITE_ONLY };
            let f = frame(src, dst, op, i / 2, (i % 7) as u16 * (i % 2) as u16, 64, i % 11 == 0, i % 9 == 0);
            frames.push(f.clone());
            match i % 6 {
                // A copy a router later (TTL one lower), CE set on the way.
                0 => frames.push(frame(
                    src,
                    dst,
                    op,
                    i / 2,
                    (i % 7) as u16 * (i % 2) as u16,
                    63,
                    true,
                    i % 9 == 0,
                )),
                // A copy with the same TTL.
                1 => frames.push(f.clone()),
                // Cut by the snap length.
                2 => frames.push(f.get(..f.len().min(60)).unwrap_or(&f).to_vec()),
                _ => {}
            }
        }
        let mut one = Analyzer::new(Config::default());
        let mut two = Analyzer::new(Config::default());
        let mut checks = CopyChecks::new(&Config::default());
        let mut copies = 0;
        for (n, data) in frames.iter().enumerate() {
            let rec =
                rocescope_capture::Record::whole(LinkType::ETHERNET, 1_000_000_000 + n as i64 * 1_000, data);
            let number = n as u64 + 1;
            match fast::classify(rec.link_type, rec.data, &opts) {
                Some(c) => {
                    one.push_common_record(number, &rec, &c);
                    let copy = checks.check_common(rec.point, rec.ts_ns, &c);
                    copies += usize::from(copy != Copy::No);
                    two.push_common_checked(number, &rec, &c, copy);
                }
                None => {
                    let p = rocescope_decoder::decode(rec.link_type, rec.data, &opts);
                    one.push_frame(number, &rec, &p, &opts);
                    two.push_frame(number, &rec, &p, &opts);
                }
            }
        }
        assert!(copies > 50, "the frames hold copies: {copies}");
        assert_eq!(one.totals().duplicates, copies as u64);
        one.finish();
        two.finish();
        let json = |a: &Analyzer| serde_json::to_string(&a.report()).unwrap_or_default();
        assert_eq!(json(&one), json(&two));
    }

    #[test]
    fn frames_the_analysis_of_roce_never_sees_hand_nothing_over() {
        let opts = DecodeOptions::default();
        let pfc = Pfc { enable_vector: 1 << 3, quanta: [0xFFFF; 8], bad_dst: false };
        let pfc = pfc_frame([2, 0, 0, 0, 0, 1], None, &[], &pfc);
        let p = rocescope_decoder::decode(LinkType::ETHERNET, &pfc, &opts);
        let checks = CopyChecks::new(&Config::default());
        assert!(!checks.hands_over(&p));
        let roce = frame(1, 2, Opcode::RC_WRITE_ONLY, 7, 1, 64, false, false);
        let p = rocescope_decoder::decode(LinkType::ETHERNET, &roce, &opts);
        assert!(checks.hands_over(&p));
    }

    /// A datagram to the sFlow port brings its samples to the analysis when sFlow is read
    /// (the default), and nothing with `--no-sflow`.
    #[test]
    fn a_datagram_to_the_sflow_port_hands_over_when_sflow_is_read() {
        let opts = DecodeOptions::default();
        let mut f = frame(1, 2, Opcode::RC_WRITE_ONLY, 1, 1, 64, false, false);
        // The UDP destination port (Ethernet 14 + IPv4 20 + 2) set to sFlow's.
        f[36..38].copy_from_slice(&rocescope_decoder::sflow::PORT.to_be_bytes());
        assert!(fast::classify(LinkType::ETHERNET, &f, &opts).is_none());
        let p = rocescope_decoder::decode(LinkType::ETHERNET, &f, &opts);
        assert!(CopyChecks::new(&Config::default()).hands_over(&p));
        let no_sflow = Config { sflow: false, ..Config::default() };
        assert!(!CopyChecks::new(&no_sflow).hands_over(&p));
    }
}
