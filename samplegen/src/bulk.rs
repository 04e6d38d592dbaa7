//! `--bulk`: large synthetic captures for benchmarks: RDMA WRITEs (First/Middle/Last, ACKs
//! every message) round-robin over many RC connections, streamed to disk.

use crate::fabric::OPTS;
use rocescope_capture::PcapWriter;
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::{AethRepr, RethRepr};
use rocescope_decoder::{BthRepr, Ecn, LinkType, Opcode};
use std::io::{self, BufWriter};
use std::path::Path;

/// Settings for a bulk capture.
pub struct Bulk {
    pub packets: u64,
    pub qps: u32,
    pub payload: usize,
    pub snap: u32,
    /// Packets per WRITE message (1: WRITE Only).
    pub msg_pkts: u32,
    /// Corrupt every ICRC (the abuse case: one ICRC finding per QP).
    pub bad_icrc: bool,
    /// Leave out the ACKs (one packet per QP with `--msg-pkts 1`).
    pub no_acks: bool,
    /// Hosts that send PFC pauses (priority 3, the data's): every 1,000th frame is a pause
    /// ([`Bulk::pause_quanta`]) from the next of them in turn (0: none). The per-frame cost must not
    /// grow with their number (issue 28).
    pub pause_hosts: u32,
    /// Capture points: with N > 0, every frame is mirrored in VXLAN (one way, so each VNI is
    /// a mirror session, a capture point of its own), QP q and pausing host h in VNI q % N
    /// and h % N. 0: plain frames.
    pub points: u32,
    /// The mixed traffic of the fast-path benchmark (issue 28, reference perf-design.md):
    /// besides the WRITEs and their ACKs, every 50th frame a CNP to a data sender's QP and
    /// every 200th a READ (request and its one response) the other way.
    pub mixed: bool,
    /// Frames that break the conditions the analyzer's folds at bin close need (issue 39,
    /// analyzer/src/fold.rs), to check that it counts them as frame by frame: every 97th
    /// frame 10.5 ms older than the one before (a capture point's time going back past a
    /// bin), a QP's every 7th message on DSCP 10 and every 5th frame VLAN-tagged with PCP 5
    /// (marks and priority changing within a bin), every 13th frame CE-marked, after every
    /// 61st frame its mirror copy (TTL one less, CE-marked); with `--mixed`, the CNPs (DSCP
    /// 48) and READ responses on the QP of the ACKs (three classes on one flow).
    pub fold_breakers: bool,
    /// Quanta of each pause (`--pause-hosts`): 1,000 (5.12 µs at 100G); 65,535 keeps two or
    /// three pauses under way at every frame (335 µs).
    pub pause_quanta: u16,
    /// The pauses come from the data receivers' MACs (the WRITEs go to them: frames towards
    /// the pausing MAC, most beyond the allowance) instead of MACs that take no part in RoCE.
    pub pause_receivers: bool,
    /// Every QP's sending side has one MAC (one host with many QPs, on the captured link):
    /// that MAC is the point's station, and the pauses come from switch ports that send no
    /// RoCE, which judge the station's frames (the link peer's).
    pub one_sender: bool,
    /// Every Nth frame is stamped 3 µs before the frame ahead of it (0: none): time going
    /// back, as in merged captures.
    pub back_every: u64,
}

/// How `--fold-breakers` changes data frame `n` of message `msg`: its DSCP, ECN and PCP.
fn breaker_marks(b: &Bulk, n: u64, msg: u32) -> (u8, Ecn, Option<u8>) {
    if !b.fold_breakers {
        return (26, Ecn::Ect0, None);
    }
    let dscp = if msg % 7 == 3 { 10 } else { 26 };
    let ecn = if n % 13 == 5 { Ecn::Ce } else { Ecn::Ect0 };
    (dscp, ecn, (n % 5 == 2).then_some(5))
}

/// The time frame `n` is written at: `ts`, or with `--fold-breakers` 10.5 ms earlier for
/// every 97th.
fn breaker_time(b: &Bulk, n: u64, ts: i64) -> i64 {
    if b.fold_breakers && n % 97 == 50 {
        ts - 10_500_000
    } else {
        ts
    }
}

impl Bulk {
    /// The MAC of side `side` (0: the data's sender, 1: its receiver) of QP `q`.
    fn mac(&self, side: u8, q: u32) -> [u8; 6] {
        if self.one_sender && side == 0 {
            return [2, 0, 0, 0x0a, 0, 1];
        }
        [2, 0, 0, side, (q >> 8) as u8, q as u8]
    }

    /// The time frame `n` (counted from 0) is stamped with at `ts` ([`Bulk::back_every`]).
    fn stamp(&self, ts: i64, n: u64) -> i64 {
        if self.back_every > 0 && n % self.back_every == self.back_every - 1 {
            ts - 3_000
        } else {
            ts
        }
    }
}

/// `frame` as it goes on the wire: mirrored in VXLAN with VNI `vni % points` when `points`
/// asks for capture points.
fn mirrored(frame: Vec<u8>, points: u32, vni: u32) -> Vec<u8> {
    if points == 0 {
        return frame;
    }
    use rocescope_decoder::build::{Encapsulation, TunnelRepr};
    // The mirror's outer headers, as the tunnel samples have them.
    let outer = crate::tunnels::outer();
    let encap = Encapsulation::Vxlan { sport: 49152, dport: 4789, vni: 1 + vni % points };
    TunnelRepr { outer, encap }.wrap(&frame).unwrap_or(frame)
}

/// Write the capture; returns the number of frames.
pub fn write(path: &Path, b: &Bulk) -> io::Result<u64> {
    let file = std::fs::File::create(path)?;
    let mut w = PcapWriter::new(BufWriter::with_capacity(1 << 20, file), LinkType::ETHERNET, b.snap)?;
    let qps = b.qps.max(1);
    let mut psn = vec![0u32; qps as usize];
    let mut ts: i64 = crate::fabric::EPOCH_NS;
    let mut n = 0u64;
    let msg_pkts = b.msg_pkts.max(1);
    let icrc = if b.bad_icrc { IcrcMode::Corrupt } else { IcrcMode::Correct };
    let (mut next_pause, mut pauses) = (999u64, 0u64);
    'outer: loop {
        for q in 0..qps {
            let host = |i: u32| [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
            let (src, dst) = (host(q), host(q + qps));
            let qpn = 0x1000 + q;
            for i in 0..msg_pkts {
                let p = psn.get(q as usize).copied().unwrap_or(0);
                if let Some(slot) = psn.get_mut(q as usize) {
                    *slot = (p + 1) & 0xFF_FFFF;
                }
                let (op, ext) = match i {
                    0 if msg_pkts == 1 => (
                        Opcode::RC_WRITE_ONLY,
                        ExtRepr {
                            reth: Some(RethRepr { va: 0x7f00_0000_0000, rkey: 7, dma_len: b.payload as u32 }),
                            ..Default::default()
                        },
                    ),
                    0 => (
                        Opcode::RC_WRITE_FIRST,
                        ExtRepr {
                            reth: Some(RethRepr {
                                va: 0x7f00_0000_0000,
                                rkey: 7,
                                dma_len: (b.payload as u32) * msg_pkts,
                            }),
                            ..Default::default()
                        },
                    ),
                    i if i + 1 == msg_pkts => (Opcode::RC_WRITE_LAST, ExtRepr::default()),
                    _ => (Opcode::RC_WRITE_MIDDLE, ExtRepr::default()),
                };
                let bth = BthRepr {
                    opcode: op,
                    dest_qp: qpn + 0x10_0000,
                    psn: p,
                    ack_req: i + 1 == msg_pkts,
                    ..Default::default()
                };
                let (dscp, ecn, pcp) = breaker_marks(b, n, p / msg_pkts);
                let ip = IpRepr::V4 { src: src.into(), dst: dst.into(), dscp, ecn, ttl: 64, id: 0 };
                let mut f = RoceV2Frame::new(
                    b.mac(0, q),
                    b.mac(1, q),
                    ip,
                    IbRepr { bth, ext, payload: vec![0xab; b.payload], icrc },
                );
                if let Some(pcp) = pcp {
                    f.vlans.push(rocescope_decoder::VlanTag { tpid: 0x8100, pcp, dei: false, vid: 10 });
                }
                let data = mirrored(f.build(OPTS), b.points, q);
                w.write(b.stamp(breaker_time(b, n, ts), n), &data, data.len() as u32)?;
                ts += 200;
                n += 1;
                if n >= b.packets {
                    break 'outer;
                }
                if b.fold_breakers && n % 61 == 7 {
                    // Its mirror copy, one router on and CE-marked there.
                    f.ip =
                        IpRepr::V4 { src: src.into(), dst: dst.into(), dscp, ecn: Ecn::Ce, ttl: 63, id: 0 };
                    let data = mirrored(f.build(OPTS), b.points, q);
                    w.write(ts, &data, data.len() as u32)?;
                    ts += 200;
                    n += 1;
                    if n >= b.packets {
                        break 'outer;
                    }
                }
                if b.mixed {
                    for data in mixed_frames(n, q, (src, dst), b) {
                        w.write(b.stamp(ts, n), &data, data.len() as u32)?;
                        ts += 200;
                        n += 1;
                        if n >= b.packets {
                            break 'outer;
                        }
                    }
                }
                if b.pause_hosts > 0 && n >= next_pause {
                    next_pause += 1000;
                    let h = (pauses % u64::from(b.pause_hosts)) as u32;
                    pauses += 1;
                    let pfc = rocescope_decoder::mac_control::Pfc {
                        enable_vector: 1 << 3,
                        quanta: [0, 0, 0, b.pause_quanta, 0, 0, 0, 0],
                        bad_dst: false,
                    };
                    let mac = if b.pause_receivers {
                        b.mac(1, h % qps)
                    } else if b.one_sender {
                        // Switch ports whose MACs end apart from the hosts' (below 256 QPs)
                        // in their last 9 bits, which is all the MAC table's set of senders
                        // tells MACs by (`rocescope_analyzer::link`): they read as sending
                        // no RoCE, so their pauses judge the station's frames.
                        [2, 0, 0, 3, 1 + (h >> 8) as u8, h as u8]
                    } else {
                        [2, 0, 0, 2, (h >> 8) as u8, h as u8]
                    };
                    let data =
                        mirrored(rocescope_decoder::build::pfc_frame(mac, None, &[], &pfc), b.points, h);
                    w.write(b.stamp(ts, n), &data, data.len() as u32)?;
                    ts += 200;
                    n += 1;
                    if n >= b.packets {
                        break 'outer;
                    }
                }
                if i + 1 == msg_pkts && !b.no_acks {
                    let bth = BthRepr {
                        opcode: Opcode::RC_ACKNOWLEDGE,
                        dest_qp: qpn,
                        psn: p,
                        ..Default::default()
                    };
                    let ip = IpRepr::V4 {
                        src: dst.into(),
                        dst: src.into(),
                        dscp: 26,
                        ecn: Ecn::Ect0,
                        ttl: 64,
                        id: 0,
                    };
                    let ext = ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() };
                    let f = RoceV2Frame::new(
                        b.mac(1, q),
                        b.mac(0, q),
                        ip,
                        IbRepr { bth, ext, payload: Vec::new(), icrc },
                    );
                    let data = mirrored(f.build(OPTS), b.points, q);
                    w.write(b.stamp(ts, n), &data, data.len() as u32)?;
                    ts += 200;
                    n += 1;
                    if n >= b.packets {
                        break 'outer;
                    }
                }
            }
        }
    }
    w.finish()?;
    Ok(n)
}

/// The extra frames of `--mixed` after frame `n` (data of QP `q` between `hosts`): a CNP
/// from the receiver to the sender's QP after every 50th frame, and after every 200th a
/// one-packet READ from the receiver (its own QP, PSNs counted from `n`) and its response.
fn mixed_frames(n: u64, q: u32, hosts: ([u8; 4], [u8; 4]), b: &Bulk) -> Vec<Vec<u8>> {
    let (src, dst) = hosts;
    let qpn = 0x1000 + q;
    let mac = |side: u8| b.mac(side, q);
    let frame = |from: u8, ip_src: [u8; 4], ip_dst: [u8; 4], bth: BthRepr, ext: ExtRepr, payload: usize| {
        let ip =
            IpRepr::V4 { src: ip_src.into(), dst: ip_dst.into(), dscp: 26, ecn: Ecn::Ect0, ttl: 64, id: 0 };
        let ib = IbRepr { bth, ext, payload: vec![0xcd; payload], icrc: IcrcMode::Correct };
        let f = RoceV2Frame::new(mac(from), mac(1 - from), ip, ib);
        mirrored(f.build(OPTS), b.points, q)
    };
    let mut out = Vec::new();
    // `--fold-breakers`: CNPs and READ responses on the QP the ACKs go to.
    let ack_qp = |qp: u32| if b.fold_breakers { qpn } else { qp };
    if n % 50 == 0 {
        // A CNP carries no PSN; its destination QP is the data sender's (reference §1.6).
        let bth =
            BthRepr { opcode: Opcode::CNP, dest_qp: ack_qp(qpn + 0x10_0000), psn: 0, ..Default::default() };
        let mut cnp = frame(1, dst, src, bth, ExtRepr::default(), 16);
        if b.fold_breakers {
            // On a DSCP of its own (48), as NICs send CNPs: the marks of the flow change.
            let ip =
                IpRepr::V4 { src: dst.into(), dst: src.into(), dscp: 48, ecn: Ecn::Ect0, ttl: 64, id: 0 };
            let ib =
                IbRepr { bth, ext: ExtRepr::default(), payload: vec![0xcd; 16], icrc: IcrcMode::Correct };
            cnp = mirrored(RoceV2Frame::new(mac(1), mac(0), ip, ib).build(OPTS), b.points, q);
        }
        out.push(cnp);
    }
    if n % 200 == 0 {
        // The receiver reads back what it was written: its own QP toward the sender.
        let psn = ((n / 200) as u32) & 0xFF_FFFF;
        let len = b.payload as u32;
        let reth = Some(RethRepr { va: 0x7f00_0000_0000, rkey: 7, dma_len: len });
        let bth =
            BthRepr { opcode: Opcode::RC_READ_REQUEST, dest_qp: qpn + 0x20_0000, psn, ..Default::default() };
        let ext = ExtRepr { aeth: Some(AethRepr::ack(0)), ..Default::default() };
        if b.fold_breakers {
            // The sender reads: its request to the receiver, the response back on the ACKs' QP.
            out.push(frame(0, src, dst, bth, ExtRepr { reth, ..Default::default() }, 0));
            let bth =
                BthRepr { opcode: Opcode::RC_READ_RESPONSE_ONLY, dest_qp: qpn, psn, ..Default::default() };
            out.push(frame(1, dst, src, bth, ext, b.payload));
            return out;
        }
        out.push(frame(1, dst, src, bth, ExtRepr { reth, ..Default::default() }, 0));
        let bth = BthRepr {
            opcode: Opcode::RC_READ_RESPONSE_ONLY,
            dest_qp: qpn + 0x30_0000,
            psn,
            ..Default::default()
        };
        out.push(frame(0, src, dst, bth, ext, b.payload));
    }
    out
}
