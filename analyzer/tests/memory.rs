//! Per-QP state is bounded: heap measured with dhat as this test binary's allocator.
//!
//! - A flow's state stops growing once its caps are reached (evidence per kind, open gaps,
//!   outstanding requests, throughput bins, latency histograms), whatever its packets do:
//!   PSN jumps back and forth, NAKs, RNR NAKs, CE marks, CNPs, bad ICRCs, READs.
//! - A quiet flow (one packet) costs a fixed amount, checked against the figure
//!   docs/reliability.md gives, so a change that makes every flow heavier is seen.

use rocescope_analyzer::{Analyzer, Config, FrameMeta};
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::{AethRepr, NakCode, RethRepr};
use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode, OpcodeOptions};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Bytes a quiet flow may cost (issue 13: 1 kB; measured 901 bytes with a receiver of its
/// own, issue 25: see
/// docs/reliability.md). Its event counters, latency figures and PSN event state are
/// allocated on its first event, and flows are stored in chunks that never double.
const QUIET_FLOW_MAX: usize = 1_024;

/// What a QP may grow by between 50,000 and 100,000 hostile packets (its caps are reached
/// by then): nothing.
const GROWTH_MAX: usize = 1_024;

/// What a QP (both directions) may hold at most, whatever its packets: the caps of
/// `analyzer/src/flow.rs` and `psn.rs` (measured 52 kB; 16 kB each are the outstanding
/// AckReq and READ requests kept for latency).
const HOSTILE_QP_MAX: usize = 64 * 1024;

/// The capture-wide fabric series of the priorities the hostile QP uses (its data, ACKs and
/// CNPs on two): fixed at [`rocescope_analyzer::fabric::MAX_BINS`] bins of 40 bytes each,
/// allocated whole when a priority is first seen.
const FABRIC_SERIES: usize = 2 * 40 * rocescope_analyzer::fabric::MAX_BINS;

/// The capture-wide latency sample pools of the priority the hostile QP uses (its ACK and
/// its READ latency): past their exact samples, fixed at
/// [`rocescope_analyzer::latency_samples::MAX_POOL_BYTES`] each, allocated whole.
const LATENCY_POOLS: usize = 2 * rocescope_analyzer::latency_samples::MAX_POOL_BYTES;

struct Gen {
    n: u64,
    ts: i64,
    seed: u64,
}

impl Gen {
    fn rand(&mut self) -> u64 {
        // xorshift64*: reproducible, no dependency.
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        a: &mut Analyzer,
        src: [u8; 4],
        dst: [u8; 4],
        opcode: Opcode,
        qp: u32,
        psn: u32,
        ext: ExtRepr,
        ecn: Ecn,
        icrc: IcrcMode,
    ) {
        let ip = IpRepr::V4 { src: src.into(), dst: dst.into(), dscp: 26, ecn, ttl: 64, id: 0 };
        let bth = BthRepr { opcode, dest_qp: qp, psn, ack_req: true, ..Default::default() };
        let f = RoceV2Frame::new(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            ip,
            IbRepr { bth, ext, payload: vec![0; 16], icrc },
        );
        let data = f.build(OpcodeOptions { dc: false });
        self.n += 1;
        self.ts += 1_000 + (self.rand() % 50_000) as i64;
        let p = decode(LinkType::ETHERNET, &data, &DecodeOptions::default());
        let meta =
            FrameMeta { number: self.n, ts_ns: self.ts, len: data.len() as u32, link_bps: None, point: 0 };
        a.push(&meta, &p);
    }

    /// One hostile packet on the QP between 10.0.0.1 and 10.0.0.2.
    fn hostile(&mut self, a: &mut Analyzer) {
        let (req, resp) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let r = self.rand();
        let psn = (r >> 8) as u32 & 0xFF_FFFF;
        let ecn = if r & 3 == 0 { Ecn::Ce } else { Ecn::Ect0 };
        let icrc = if r & 0x70 == 0 { IcrcMode::Corrupt } else { IcrcMode::Correct };
        let none = ExtRepr::default;
        match r % 9 {
            0 => {
                let aeth = AethRepr::nak(NakCode::PSN_SEQUENCE_ERROR, 0);
                let ext = ExtRepr { aeth: Some(aeth), ..none() };
                self.push(a, resp, req, Opcode::RC_ACKNOWLEDGE, 0x11, psn, ext, Ecn::Ect0, icrc);
            }
            1 => {
                let ext = ExtRepr { aeth: Some(AethRepr::rnr_nak(5, 0)), ..none() };
                self.push(a, resp, req, Opcode::RC_ACKNOWLEDGE, 0x11, psn, ext, Ecn::Ect0, icrc);
            }
            2 => {
                let ext = ExtRepr { aeth: Some(AethRepr::ack(0)), ..none() };
                self.push(a, resp, req, Opcode::RC_ACKNOWLEDGE, 0x11, psn, ext, Ecn::Ect0, icrc);
            }
            3 => self.push(a, resp, req, Opcode::CNP, 0x11, 0, none(), Ecn::Ect0, icrc),
            4 => {
                let reth = RethRepr { va: r, rkey: 1, dma_len: (r % 100_000) as u32 };
                let ext = ExtRepr { reth: Some(reth), ..none() };
                self.push(a, req, resp, Opcode::RC_READ_REQUEST, 0x22, psn, ext, ecn, icrc);
            }
            5 => {
                let ext = ExtRepr { aeth: Some(AethRepr::ack(0)), ..none() };
                self.push(a, resp, req, Opcode::RC_READ_RESPONSE_FIRST, 0x11, psn, ext, ecn, icrc);
            }
            _ => {
                // Mostly in order, sometimes far ahead or behind.
                let psn = if r & 0x300 == 0 { psn } else { (self.n as u32) & 0xFF_FFFF };
                self.push(a, req, resp, Opcode::RC_SEND_ONLY, 0x22, psn, none(), ecn, icrc);
            }
        }
    }
}

fn heap() -> usize {
    dhat::HeapStats::get().curr_bytes
}

#[test]
fn per_flow_state_is_bounded() {
    let _profiler = dhat::Profiler::builder().testing().build();

    // One QP under everything at once: its state reaches its caps, then stops growing.
    let mut g = Gen { n: 0, ts: 1_767_225_600_000_000_000, seed: 0x9E37_79B9_7F4A_7C15 };
    let base = heap();
    let mut a = Analyzer::new(Config::default());
    let mut at = Vec::new();
    for step in [50_000, 50_000] {
        for _ in 0..step {
            g.hostile(&mut a);
        }
        at.push(heap() - base);
    }
    let (at_50k, at_100k) = (at[0], at[1]);
    eprintln!("hostile QP: {at_50k} bytes after 50,000 packets, {at_100k} after 100,000");
    // The mirror-duplicate table and the set of RoCE senders are capture-wide and allocated
    // whole at the first RoCE frame.
    let dedup = rocescope_analyzer::dedup::TABLE_BYTES + rocescope_analyzer::link::SENT_BYTES;
    assert!(
        at_100k <= HOSTILE_QP_MAX + FABRIC_SERIES + LATENCY_POOLS + dedup,
        "a hostile QP holds {at_100k} bytes"
    );
    assert!(
        at_100k <= at_50k + GROWTH_MAX,
        "a hostile QP grew from {at_50k} to {at_100k} bytes between 50,000 and 100,000 packets"
    );
    assert!(a.flows().len() <= 4, "one QP, both directions, and its CNP flow: {}", a.flows().len());
    // Its report still works and is bounded too.
    let r = a.report();
    assert!(r.findings.len() < 40, "{}", r.findings.len());
    drop(r);
    drop(a);

    // Quiet flows: a fixed cost each.
    let mut a = Analyzer::new(Config::default());
    let before = heap();
    let flows = 10_000u32;
    for i in 0..flows {
        let src = [10, 1, (i >> 8) as u8, i as u8];
        let dst = [10, 2, (i >> 8) as u8, i as u8];
        let ext = ExtRepr { reth: Some(RethRepr { va: 0, rkey: 1, dma_len: 16 }), ..ExtRepr::default() };
        g.push(&mut a, src, dst, Opcode::RC_WRITE_ONLY, 0x100 + i, i, ext, Ecn::Ect0, IcrcMode::Correct);
    }
    let per_flow = (heap() - before) / flows as usize;
    eprintln!("quiet flow: {per_flow} bytes (analyzer state, index included)");
    assert_eq!(a.flows().len(), flows as usize);
    assert!(per_flow <= QUIET_FLOW_MAX, "a quiet flow costs {per_flow} bytes");
}
