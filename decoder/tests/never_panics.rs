//! Property tests: arbitrary and truncated bytes never panic the decoder, and every frame
//! the emitters build decodes back to the same fields with a valid ICRC.

use proptest::prelude::*;
use rocescope_decoder::build::{
    Encapsulation, ExtRepr, IbRepr, IcrcMode, IpRepr, MplsLabelRepr, Outer, RoceV2Frame, TunnelRepr,
};
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

fn labels() -> impl Strategy<Value = Vec<MplsLabelRepr>> {
    proptest::collection::vec(
        (16u32..0x10_0000, 0u8..8, any::<u8>()).prop_map(|(label, tc, ttl)| MplsLabelRepr { label, tc, ttl }),
        1..4,
    )
}

/// Every encapsulation the emitters know, with arbitrary header fields.
fn encap() -> impl Strategy<Value = Encapsulation> {
    prop_oneof![
        Just(Encapsulation::ErspanI),
        (any::<u32>(), 0u16..4096, 0u8..8, 0u8..4, any::<bool>(), 0u16..1024, 0u32..0x10_0000).prop_map(
            |(seq, vlan, cos, encap, truncated, session_id, index)| Encapsulation::ErspanII {
                seq,
                vlan,
                cos,
                encap,
                truncated,
                session_id,
                index
            }
        ),
        (
            any::<u32>(),
            0u16..4096,
            0u8..8,
            0u16..1024,
            any::<u32>(),
            any::<u16>(),
            0u8..64,
            0u8..4,
            proptest::option::of((0u8..64, any::<u64>()))
        )
            .prop_map(
                |(seq, vlan, cos, session_id, timestamp, sgt, hw_id, granularity, platform)| {
                    Encapsulation::ErspanIII {
                        seq,
                        vlan,
                        cos,
                        bso: 0,
                        truncated: false,
                        session_id,
                        timestamp,
                        sgt,
                        p: true,
                        hw_id,
                        direction: false,
                        granularity,
                        platform,
                    }
                }
            ),
        (proptest::option::of(any::<u32>()), proptest::option::of(any::<u32>()))
            .prop_map(|(key, seq)| Encapsulation::Gretap { key, seq }),
        (proptest::option::of(any::<u32>()), proptest::option::of(any::<u32>()))
            .prop_map(|(key, seq)| Encapsulation::Gre { key, seq }),
        (any::<u16>(), 0u32..0x100_0000).prop_map(|(sport, vni)| Encapsulation::Vxlan {
            sport,
            dport: 4789,
            vni
        }),
        (
            any::<u16>(),
            0u32..0x100_0000,
            proptest::collection::vec(any::<u8>(), 0..3).prop_map(|w| w.repeat(4))
        )
            .prop_map(|(sport, vni, options)| Encapsulation::Geneve {
                sport,
                dport: 6081,
                vni,
                options
            }),
        (labels(), any::<bool>())
            .prop_map(|(labels, control_word)| Encapsulation::MplsEthernet { labels, control_word }),
        labels().prop_map(|labels| Encapsulation::MplsIp { labels }),
    ]
}

fn outer(ip: IpRepr) -> Outer {
    Outer { src_mac: [2, 0, 0, 0, 0, 7], dst_mac: [2, 0, 0, 0, 0, 8], vlans: Vec::new(), ip }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Tunnelled frames: the inner RoCE decodes whatever the encapsulations (nested up to
    /// the bound), a fifth layer is an error, and no prefix or flipped byte panics.
    #[test]
    fn tunnelled_frames_round_trip_and_never_panic(ip in ip(), oip in ip(), bth in bth(), vlans in vlans(),
                               encaps in proptest::collection::vec(encap(), 1..6),
                               payload in proptest::collection::vec(any::<u8>(), 0..64),
                               at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, IbRepr { bth, ext: ExtRepr::default(), payload, icrc: IcrcMode::Correct });
        f.vlans = vlans.clone();
        let inner = f.build(OpcodeOptions::default());
        let mut bytes = inner.clone();
        // L3 encapsulations refuse frames that do not carry IP (an MPLS frame): skip them.
        let mut applied = Vec::new();
        for e in &encaps {
            if let Some(b) = (TunnelRepr { outer: outer(oip), encap: e.clone() }).wrap(&bytes) {
                bytes = b;
                applied.push(e.clone());
            }
        }
        let encaps = applied;
        let opts = DecodeOptions::default();
        let p = decode(LinkType::ETHERNET, &bytes, &opts);
        let plain = decode(LinkType::ETHERNET, &inner, &opts);
        if encaps.len() <= Tunnels::MAX {
            prop_assert_eq!(p.error, plain.error);
            prop_assert_eq!(p.tunnels.len(), encaps.len());
            prop_assert_eq!(p.roce.map(|r| (r.bth.repr(), r.icrc.status)), plain.roce.map(|r| (r.bth.repr(), r.icrc.status)));
            prop_assert_eq!(p.ip.map(|i| (i.src(), i.dscp(), i.ecn())), plain.ip.map(|i| (i.src(), i.dscp(), i.ecn())));
            // L3 encapsulations drop the inner Ethernet header and its tags.
            let l3 = encaps.iter().any(|e| matches!(e, Encapsulation::Gre { .. } | Encapsulation::MplsIp { .. }));
            if !l3 {
                prop_assert_eq!(p.vlans.as_slice(), &vlans[..]);
            }
        } else {
            prop_assert_eq!(p.error.map(|e| e.layer), Some(Layer::Tunnel));
        }
        for cut in 0..bytes.len() {
            let q = decode(LinkType::ETHERNET, &bytes[..cut], &opts);
            if let Some(r) = q.roce {
                prop_assert_ne!(r.icrc.status, IcrcStatus::Valid);
            }
            let _ = format!("{q:?}");
        }
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        let q = decode(LinkType::ETHERNET, &bytes, &opts);
        let _ = format!("{:?} {:?} {:?}", q, q.error.map(|e| e.to_string()), q.tunnel_undecoded.map(|u| u.to_string()));
    }

    /// Arbitrary bytes behind a valid tunnel header (any GRE protocol, UDP to the VXLAN or
    /// Geneve port, an MPLS EtherType) never panic.
    #[test]
    fn arbitrary_bytes_behind_tunnel_headers_never_panic(which in 0u8..5, proto in any::<u16>(), flags in any::<u16>(),
                               tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        let eth_ip = "02000000000202000000000108004500";
        let mut b = hex::decode(eth_ip).unwrap();
        let len = u16::try_from(20 + 8 + tail.len()).unwrap();
        b.extend_from_slice(&len.to_be_bytes());
        let p = match which { 0 | 1 => 47u8, _ => 17 };
        b.extend_from_slice(&[0, 0, 0x40, 0, 64, p, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        match which {
            0 => { b.extend_from_slice(&(flags & 0xB000).to_be_bytes()); b.extend_from_slice(&proto.to_be_bytes()); }
            1 => { b.extend_from_slice(&flags.to_be_bytes()); b.extend_from_slice(&[0x88, 0xBE]); }
            2 => b.extend_from_slice(&[0x12, 0x34, 0x12, 0xB5, 0, 0, 0, 0]),
            3 => b.extend_from_slice(&[0x12, 0x34, 0x17, 0xC1, 0, 0, 0, 0]),
            _ => { b.truncate(12); b.extend_from_slice(&[0x88, 0x47]); }
        }
        b.extend_from_slice(&tail);
        let q = decode(LinkType::ETHERNET, &b, &DecodeOptions::default());
        let _ = format!("{:?} {:?} {:?}", q, q.error.map(|e| e.to_string()), q.tunnel_undecoded.map(|u| u.to_string()));
    }

    #[test]
    fn arbitrary_bytes_never_panic(lt in proptest::sample::select(&LINK_TYPES[..]),
                                   data in proptest::collection::vec(any::<u8>(), 0..300),
                                   port in prop_oneof![Just(4791u16), any::<u16>()], dc in any::<bool>()) {
        let opts = DecodeOptions { roce_port: port, opcode: OpcodeOptions { dc }, ..DecodeOptions::default() };
        let p = decode(LinkType(lt), &data, &opts);
        // Formatting every part must not panic either.
        let _ = format!("{:?} {:?}", p, p.error.map(|e| e.to_string()));
        // Decoding in place gives the same packet.
        let mut q = rocescope_decoder::Packet::empty(&data, LinkType(lt));
        q.decode_from(&opts);
        prop_assert_eq!(q, p);
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

    /// The glance a parallel analysis sorts frames by (`peek`) agrees with the decoder:
    /// whenever it names a frame's addresses and the decoder finds RoCE in it with no
    /// tunnel, they are the decoder's IP source and destination, and its UDP length and
    /// opcode are the decoder's. Built frames, their prefixes, single flipped bytes and
    /// arbitrary bytes after an Ethernet header.
    #[test]
    fn the_glance_agrees_with_the_decoder(ip in ip(), bth in bth(), ext in ext(), vlans in vlans(),
                                          payload in proptest::collection::vec(any::<u8>(), 0..64),
                                          flip in any::<(usize, u8)>(), junk in proptest::collection::vec(any::<u8>(), 0..96)) {
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, IbRepr { bth, ext, payload, icrc: IcrcMode::Correct });
        f.vlans = vlans;
        let built = f.build(OpcodeOptions::default());
        let mut flipped = built.clone();
        let n = flipped.len();
        if let Some(b) = flipped.get_mut(flip.0 % n) {
            *b ^= flip.1 | 1;
        }
        let mut raw = built.get(..14).unwrap_or(&[]).to_vec();
        raw.extend_from_slice(&junk);
        let opts = DecodeOptions::default();
        let glance = rocescope_decoder::peek::roce_v2(LinkType::ETHERNET, &built, opts.roce_port);
        prop_assert!(glance.is_some(), "a plain built frame is glanced at");
        let cases = (0..=built.len()).map(|c| &built[..c]).chain([&flipped[..], &raw[..]]);
        for bytes in cases {
            let Some(g) = rocescope_decoder::peek::roce_v2(LinkType::ETHERNET, bytes, opts.roce_port) else { continue };
            let p = decode(LinkType::ETHERNET, bytes, &opts);
            if let (Some(r), true) = (&p.roce, p.tunnels.is_empty()) {
                let ip = p.ip.as_ref().unwrap();
                prop_assert_eq!((ip.src(), ip.dst()), (g.src, g.dst));
                prop_assert_eq!(p.udp.as_ref().map(|u| u.length()), Some(g.udp_len));
                prop_assert_eq!(g.opcode, Some(r.bth.opcode().0));
            }
        }
    }
    /// The fast path's classifier (`fast::classify`) gives exactly what `fast::Common::of`
    /// makes of the full decode, `None` included: built frames (opcodes biased to the
    /// common ones, with and without VLAN tags and ICRC checking), every prefix, a flipped
    /// byte, and arbitrary bytes after an Ethernet header.
    #[test]
    fn the_fast_classifier_agrees_with_the_decoder(ip in ip(), bth in bth(), ext in ext(), vlans in vlans(),
                                          common in proptest::sample::select(vec![0x00u8, 0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B,
                                              0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x16, 0x24, 0x27, 0x2A, 0x64, 0x81]),
                                          pick_common in any::<bool>(), check_icrc in any::<bool>(), dc in any::<bool>(),
                                          payload in proptest::collection::vec(any::<u8>(), 0..64),
                                          flip in any::<(usize, u8)>(), junk in proptest::collection::vec(any::<u8>(), 0..96)) {
        let mut bth = bth;
        if pick_common {
            bth.opcode = Opcode(common);
        }
        let mut ext = ext;
        if bth.opcode == Opcode::CNP {
            ext.cnp = Some(Default::default());
        }
        let oo = OpcodeOptions { dc };
        let mut f = RoceV2Frame::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], ip, IbRepr { bth, ext, payload, icrc: IcrcMode::Correct });
        f.vlans = vlans;
        let built = f.build(oo);
        let mut flipped = built.clone();
        let n = flipped.len();
        if let Some(b) = flipped.get_mut(flip.0 % n) {
            *b ^= flip.1 | 1;
        }
        let mut raw = built.get(..14).unwrap_or(&[]).to_vec();
        raw.extend_from_slice(&junk);
        let opts = DecodeOptions { opcode: oo, check_icrc, ..DecodeOptions::default() };
        let fast = rocescope_decoder::fast::classify(LinkType::ETHERNET, &built, &opts);
        if pick_common && f.vlans.len() <= 1 && ![0x12, 0x16, 0x64].contains(&common) {
            prop_assert!(fast.is_some(), "a built common frame is classified");
        }
        let cases = (0..=built.len()).map(|c| &built[..c]).chain([&flipped[..], &raw[..]]);
        for bytes in cases {
            let fast = rocescope_decoder::fast::classify(LinkType::ETHERNET, bytes, &opts);
            let p = decode(LinkType::ETHERNET, bytes, &opts);
            prop_assert_eq!(fast, rocescope_decoder::fast::Common::of(&p, &opts), "{}", hex::encode(bytes));
        }
    }
}
