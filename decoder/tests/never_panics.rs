//! Property tests: arbitrary and truncated bytes never panic the decoder, and every frame
//! the emitters build decodes back to the same fields with a valid ICRC.

use proptest::prelude::*;
use rocescope_decoder::build::{ExtRepr, IbRepr, IcrcMode, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::*;
use rocescope_decoder::*;

const LINK_TYPES: [u32; 9] = [1, 12, 101, 113, 197, 228, 229, 276, 0xdead];

fn ecn() -> impl Strategy<Value = Ecn> {
    prop_oneof![Just(Ecn::NotEct), Just(Ecn::Ect0), Just(Ecn::Ect1), Just(Ecn::Ce)]
}

fn ip() -> impl Strategy<Value = IpRepr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<[u8; 4]>(), 0u8..64, ecn(), any::<u8>(), any::<u16>()).prop_map(
            |(s, d, dscp, ecn, ttl, id)| IpRepr::V4 { src: s.into(), dst: d.into(), dscp, ecn, ttl, id }
        ),
        (any::<[u8; 16]>(), any::<[u8; 16]>(), 0u8..64, ecn(), any::<u8>(), 0u32..0x10_0000).prop_map(
            |(s, d, dscp, ecn, hop_limit, flow_label)| IpRepr::V6 {
                src: s.into(),
                dst: d.into(),
                dscp,
                ecn,
                hop_limit,
                flow_label
            }
        ),
    ]
}

prop_compose! {
    fn bth()(op in any::<u8>(), se in any::<bool>(), m in any::<bool>(), pkey in any::<u16>(),
             fecn in any::<bool>(), becn in any::<bool>(), qp in 0u32..0x100_0000,
             a in any::<bool>(), psn in 0u32..0x100_0000) -> BthRepr {
        BthRepr { opcode: Opcode(op), se, migreq: m, pkey, fecn, becn, dest_qp: qp, ack_req: a, psn, ..Default::default() }
    }
}

prop_compose! {
    fn ext()(va in any::<u64>(), rkey in any::<u32>(), len in any::<u32>(), syn in any::<u8>(),
             msn in 0u32..0x100_0000, x in any::<u64>(), y in any::<u64>(), q in any::<u32>()) -> ExtRepr {
        ExtRepr {
            dceth: Some(DcEthRepr { value: x }),
            rdeth: Some(RdethRepr { eecn: msn }),
            deth: Some(DethRepr { qkey: q, src_qp: msn }),
            xrceth: Some(XrcEthRepr { srqn: msn }),
            feth: Some(FethRepr { sel: (syn >> 4) & 3, plt: syn & 15 }),
            reth: Some(RethRepr { va, rkey, dma_len: len }),
            atomiceth: Some(AtomicEthRepr { va, rkey, swap: x, compare: y }),
            aeth: Some(AethRepr { syndrome: syn, msn }),
            atomicacketh: Some(AtomicAckEthRepr { orig: y }),
            immdt: Some(ImmDtRepr { value: q }),
            ieth: Some(IethRepr { rkey }),
            cnp: None,
        }
    }
}

fn vlans() -> impl Strategy<Value = Vec<VlanTag>> {
    proptest::collection::vec(
        (prop_oneof![Just(0x8100u16), Just(0x88A8)], 0u8..8, any::<bool>(), 0u16..4096)
            .prop_map(|(tpid, pcp, dei, vid)| VlanTag { tpid, pcp, dei, vid }),
        0..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(lt in proptest::sample::select(&LINK_TYPES[..]),
                                   data in proptest::collection::vec(any::<u8>(), 0..300),
                                   port in prop_oneof![Just(4791u16), any::<u16>()], dc in any::<bool>()) {
        let opts = DecodeOptions { roce_port: port, opcode: OpcodeOptions { dc }, check_icrc: true };
        let p = decode(LinkType(lt), &data, &opts);
        // Formatting every part must not panic either.
        let _ = format!("{:?} {:?}", p, p.error.map(|e| e.to_string()));
    }

    #[test]
    fn built_frames_round_trip(ip in ip(), bth in bth(), ext in ext(), vlans in vlans(),
                               payload in proptest::collection::vec(any::<u8>(), 0..200),
                               sport in any::<u16>(), dc in any::<bool>()) {
        let opts = OpcodeOptions { dc };
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, IbRepr { bth, ext, payload: payload.clone(), icrc: IcrcMode::Correct });
        f.vlans = vlans.clone();
        f.sport = sport;
        let bytes = f.build(opts);
        let dopts = DecodeOptions { opcode: opts, ..DecodeOptions::default() };
        let p = decode(LinkType::ETHERNET, &bytes, &dopts);
        prop_assert_eq!(p.error, None);
        prop_assert_eq!(p.vlans.as_slice(), &vlans[..]);
        let r = p.roce.unwrap();
        let mut want = bth;
        want.pad_count = ((4 - payload.len() % 4) % 4) as u8;
        let layout = bth.opcode.layout(opts);
        if !layout.known {
            // Opaque opcodes: the pad is part of the opaque body.
            want.pad_count = r.bth.pad_count();
        }
        prop_assert_eq!(r.bth.repr(), want);
        prop_assert_eq!(r.icrc.status, IcrcStatus::Valid);
        if layout.known {
            prop_assert_eq!(r.payload, &payload[..]);
            prop_assert_eq!(r.ext.reth.map(|h| h.repr()), layout.headers.contains(ExtKind::Reth).then(|| ext.reth.unwrap()));
            prop_assert_eq!(r.ext.aeth.map(|h| h.repr()), layout.headers.contains(ExtKind::Aeth).then(|| ext.aeth.unwrap()));
            prop_assert_eq!(r.ext.deth.map(|h| h.repr()), layout.headers.contains(ExtKind::Deth).then(|| ext.deth.unwrap()));
            prop_assert_eq!(r.ext.atomiceth.map(|h| h.repr()), layout.headers.contains(ExtKind::AtomicEth).then(|| ext.atomiceth.unwrap()));
        }
        // Every prefix decodes without panicking and never claims a valid ICRC.
        for cut in 0..bytes.len() {
            let q = decode(LinkType::ETHERNET, &bytes[..cut], &dopts);
            if let Some(r) = q.roce {
                prop_assert_ne!(r.icrc.status, IcrcStatus::Valid);
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic_and_break_the_icrc(ip in ip(), bth in bth(), ext in ext(),
                                payload in proptest::collection::vec(any::<u8>(), 1..100),
                                at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let f = RoceV2Frame::new([2; 6], [4; 6], ip, IbRepr { bth, ext, payload, icrc: IcrcMode::Correct });
        let mut bytes = f.build(OpcodeOptions::default());
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        let p = decode(LinkType::ETHERNET, &bytes, &DecodeOptions::default());
        let _ = format!("{p:?}");
    }
}
