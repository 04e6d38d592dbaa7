//! Tunnel fixtures: each encapsulation as hex with a comment per field, around the
//! ConnectX-4 Lx CNP of `fixtures.rs` (reference §1.6 vector V1); the emitters' round trip;
//! the nesting bound; tunnels that are recognised but not unwrapped.

use rocescope_decoder::build::{Encapsulation, IpRepr, MplsLabelRepr, Outer, TunnelRepr};
use rocescope_decoder::tunnel::{Encap, Granularity, GreProto, MplsPayload, UndecodedReason};
use rocescope_decoder::*;
use std::net::Ipv4Addr;

fn frame(parts: &[&str]) -> Vec<u8> {
    let s: String = parts.concat().split_whitespace().collect();
    hex::decode(s).expect("fixture hex")
}

fn dec(data: &[u8]) -> Packet<'_> {
    decode(LinkType::ETHERNET, data, &DecodeOptions::default())
}

/// The inner frame: a RoCEv2 CNP, DSCP 48 ECT(0), DestQP 0x118, valid ICRC (74 bytes).
const CNP: &[&str] = &[
    "e41d2dab2bc2",
    "7cfe90643b32",
    "0800", // Ethernet: dst, src, IPv4
    "45c2003c718c400040119161",
    "0a001101",
    "0a001201",         // IPv4: TOS 0xC2 (DSCP 48, ECT0), len 60, 10.0.17.1 -> 10.0.18.1
    "000012b700280000", // UDP: sport 0, dport 4791, len 40
    "8100ffff40000118",
    "00000000",                         // BTH: CNP, BECN, DestQP 0x118, PSN 0
    "00000000000000000000000000000000", // CNP body
    "82fd002a",                         // ICRC
];

/// The CNP's IP packet alone (no Ethernet header).
fn cnp_ip() -> Vec<u8> {
    frame(&CNP[3..])
}

/// Outer Ethernet to 02:..:02 from 02:..:01, then `etype`.
const OUTER_ETH_V4: &str = "020000000002 020000000001 0800";

fn outer_ipv4(proto: &str, payload_len: usize) -> String {
    // IPv4: version 4, IHL 5, TOS 0, total length, id 0, DF, TTL 64, protocol, checksum 0
    // (not checked), 192.168.0.1 -> 192.168.0.2.
    format!("4500{:04x}00004000 40{proto}0000 c0a80001 c0a80002", 20 + payload_len)
}

fn assert_inner_cnp(p: &Packet<'_>) {
    assert_eq!(p.error, None, "{p:?}");
    assert_eq!(p.tunnel_undecoded, None);
    let ip = p.ip.as_ref().expect("inner IP");
    assert_eq!(ip.src(), Ipv4Addr::new(10, 0, 17, 1));
    assert_eq!((ip.dscp(), ip.ecn()), (48, Ecn::Ect0), "the inner DSCP/ECN, not the tunnel's");
    let r = p.roce_ok().expect("inner RoCE");
    assert_eq!((r.bth.opcode(), r.bth.dest_qp()), (Opcode::CNP, 0x118));
    assert_eq!(r.icrc.status, IcrcStatus::Valid);
}

fn strip(s: &str) -> String {
    s.split_whitespace().collect()
}

#[test]
fn erspan_type_i() {
    let inner = CNP.concat();
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 4 + 74)), // IPv4, protocol 47 (GRE)
        "0000",                            // GRE: no C/K/S, version 0
        "88be",                            // protocol ERSPAN (no sequence: type I)
        &inner,                            // the mirrored frame
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    assert_eq!(p.tunnels.len(), 1);
    let t = p.tunnels.outermost().unwrap();
    assert!(matches!(t.encap, Encap::ErspanI { .. }));
    assert_eq!(t.kind(), TunnelKind::ErspanI);
    assert_eq!(t.ip.as_ref().unwrap().protocol(), 47);
    assert_eq!((t.offset, t.inner_offset), (34, 38));
    assert_eq!(p.inner_offset(), 38);
    // The link is the inner frame's Ethernet.
    let Link::Ethernet(e) = p.link else { panic!() };
    assert_eq!(e.dst(), [0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]);
}

#[test]
fn erspan_type_ii() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 8 + 8 + 74)),
        "1000",     // GRE: S (sequence number present), version 0
        "88be",     // protocol ERSPAN
        "0000002a", // sequence number 42
        "1064",     // ERSPAN: Ver 1, VLAN 100
        "6c07",     // COS 3, En 1 (ISL... here: 01), T 1, Session ID 7
        "000abcde", // Reserved 0, Index 0xabcde
        &CNP.concat(),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let t = p.tunnels.outermost().unwrap();
    let Encap::ErspanII { gre, erspan } = t.encap else { panic!("{t:?}") };
    assert_eq!((gre.seq(), gre.protocol()), (Some(42), GreProto::ERSPAN));
    assert_eq!((erspan.version(), erspan.vlan(), erspan.cos()), (1, 100, 3));
    assert_eq!(
        (erspan.encap(), erspan.truncated(), erspan.session_id(), erspan.index()),
        (1, true, 7, 0xabcde)
    );
    assert_eq!(
        (t.erspan_session(), t.erspan_cos(), t.erspan_vlan(), t.session()),
        (Some(7), Some(3), Some(100), Some(7))
    );
    assert_eq!(t.inner_offset, 34 + 8 + 8);
}

#[test]
fn erspan_type_iii_with_platform_subheader() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 8 + 12 + 8 + 74)),
        "1000",     // GRE: S, version 0
        "22eb",     // protocol ERSPAN III
        "00000005", // sequence number 5
        "2000",     // ERSPAN III: Ver 2, VLAN 0
        "a3ff",     // COS 5, BSO 0, T 0, Session ID 1023
        "3b9aca07", // timestamp 1_000_000_007
        "1234",     // SGT 0x1234
        "8053",     // P 1, FT 0 (Ethernet), HW ID 5, D 0, Gra 01 (100 ns), O 1
        "0c000000", // platform: Platf ID 3, reserved / port ID 0
        "00000002", // platform: upper 32 bits of the timestamp = 2
        &CNP.concat(),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let t = p.tunnels.outermost().unwrap();
    let Encap::ErspanIII { erspan, platform, .. } = t.encap else { panic!("{t:?}") };
    assert_eq!((erspan.version(), erspan.cos(), erspan.session_id(), erspan.sgt()), (2, 5, 1023, 0x1234));
    assert_eq!((erspan.p(), erspan.frame_type(), erspan.hw_id(), erspan.direction()), (true, 0, 5, false));
    assert!(erspan.optional());
    let pl = platform.expect("platform subheader");
    assert_eq!((pl.platform_id(), pl.timestamp_high()), (3, Some(2)));
    assert_eq!(t.erspan_timestamp(), Some((1_000_000_007, Granularity::NS_100, Some(2))));
    assert_eq!(t.inner_offset, 34 + 8 + 12 + 8);
}

#[test]
fn gretap_with_key() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 8 + 74)),
        "2000",     // GRE: K (key present), version 0
        "6558",     // protocol transparent Ethernet bridging
        "00000063", // key 99
        &CNP.concat(),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let t = p.tunnels.outermost().unwrap();
    assert_eq!(t.kind(), TunnelKind::Gretap);
    let Encap::Gre { gre } = t.encap else { panic!() };
    assert_eq!((gre.key(), gre.seq(), gre.len()), (Some(99), None, 8));
}

#[test]
fn l3_gre_ipv4_with_checksum() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 8 + 60)),
        "8000",     // GRE: C (checksum present), version 0
        "0800",     // protocol IPv4
        "00000000", // checksum 0, reserved1 0
        &hex::encode(cnp_ip()),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let t = p.tunnels.outermost().unwrap();
    assert_eq!(t.kind(), TunnelKind::Gre);
    let Encap::Gre { gre } = t.encap else { panic!() };
    assert_eq!((gre.checksum(), gre.protocol()), (Some(0), GreProto::IPV4));
    // No inner Ethernet: the link is the outer one, the inner frame has no VLAN tags.
    assert!(matches!(p.link, Link::Ethernet(_)));
    assert!(p.vlans.is_empty());
}

#[test]
fn vxlan_keeps_outer_and_inner_apart() {
    let data = frame(&[
        "020000000002 020000000001", // outer Ethernet: dst, src
        "8100 a064 0800",            // outer 802.1Q: PCP 5, VID 100; IPv4
        // outer IPv4 with TOS 0x00 (DSCP 0): the tunnel's QoS, not the traffic's
        &strip(&outer_ipv4("11", 8 + 8 + 74)),
        "c000 12b5 0066 0000", // UDP: sport 49152, dport 4789 (VXLAN), len 102, no checksum
        "08000000",            // VXLAN: I flag, reserved
        "00271000",            // VNI 10000, reserved
        &CNP.concat(),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    assert!(p.vlans.is_empty(), "the outer tag belongs to the tunnel layer");
    let t = p.tunnels.outermost().unwrap();
    assert_eq!(t.vlans.pcp(), Some(5));
    assert_eq!(t.udp.as_ref().unwrap().destination_port(), 4789);
    let Encap::Vxlan(v) = t.encap else { panic!() };
    assert!(v.vni_valid());
    assert_eq!((v.vni(), t.vni(), t.session()), (10000, Some(10000), Some(10000)));
}

#[test]
fn vxlan_on_an_extra_port() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("11", 16 + 74)),
        "c000 1f90 005a 0000", // UDP: dport 8080
        "08000000 00000100",   // VXLAN: I, VNI 1
        &CNP.concat(),
    ]);
    assert!(dec(&data).tunnels.is_empty(), "8080 is not a VXLAN port by default");
    let mut opts = DecodeOptions::default();
    assert!(opts.vxlan_ports.add(8080));
    let p = decode(LinkType::ETHERNET, &data, &opts);
    assert_inner_cnp(&p);
    assert_eq!(p.tunnels.outermost().unwrap().vni(), Some(1));
}

#[test]
fn geneve_options_are_skipped_by_length() {
    let data = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("11", 8 + 16 + 74)),
        "c000 17c1 0070 0000", // UDP: dport 6081 (Geneve), len 112
        "02",                  // Geneve: Ver 0, Opt Len 2 (8 bytes of options)
        "40",                  // O 0, C 1 (critical options)
        "6558",                // protocol type: Ethernet
        "00007b00",            // VNI 123, reserved
        "0104 0101 deadbeef",  // one option: class 0x0104, type 1, length 1 word, data
        &CNP.concat(),
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let Encap::Geneve(g) = p.tunnels.outermost().unwrap().encap else { panic!() };
    assert_eq!(
        (g.version(), g.critical(), g.oam(), g.vni(), g.options().len(), g.len()),
        (0, true, false, 123, 8, 16)
    );
}

#[test]
fn mpls_ip_by_first_nibble() {
    let data = frame(&[
        "020000000002 020000000001 8847", // Ethernet: MPLS unicast
        "003e 8a40",                      // label 1000, TC 5, S 0, TTL 64
        "007d 0140",                      // label 2000, TC 0, S 1, TTL 64
        &hex::encode(cnp_ip()),           // first nibble 4: IPv4
    ]);
    let p = dec(&data);
    assert_inner_cnp(&p);
    let t = p.tunnels.outermost().unwrap();
    assert!(t.ip.is_none());
    let Encap::Mpls { labels, control_word, payload } = t.encap else { panic!() };
    let l: Vec<_> = labels.iter().map(|l| l.repr()).collect();
    assert_eq!(l, vec![(1000, 5, false, 64), (2000, 0, true, 64)]);
    assert_eq!((control_word, payload), (None, MplsPayload::Ipv4));
}

#[test]
fn mpls_ethernet_pseudowire_with_and_without_control_word() {
    let with_cw = frame(&[
        "020000000002 020000000001 8847", // Ethernet: MPLS
        "00010 1 ff".replace(' ', "").as_str(),
        // ^ label 16, TC 0, S 1, TTL 255
        "00000007", // control word: 0000, flags 0, FRG 0, length 0, sequence 7
        &CNP.concat(),
    ]);
    let p = dec(&with_cw);
    assert_inner_cnp(&p);
    let Encap::Mpls { control_word, payload, .. } = p.tunnels.outermost().unwrap().encap else { panic!() };
    assert_eq!((control_word.map(|c| c.seq()), payload), (Some(7), MplsPayload::Ethernet));

    let without = frame(&[
        "020000000002 020000000001 8847".replace(' ', "").as_str(),
        "000101ff",    // label 16, S 1, TTL 255
        &CNP.concat(), // dst MAC e4:..: first nibble 0xe, so Ethernet without control word
    ]);
    let p = dec(&without);
    assert_inner_cnp(&p);
    let Encap::Mpls { control_word, payload, .. } = p.tunnels.outermost().unwrap().encap else { panic!() };
    assert_eq!((control_word, payload), (None, MplsPayload::Ethernet));
}

/// A pseudowire without control word carrying MPLS, whose destination MAC begins with the
/// nibble 0 (so a control word could be there) and whose first label's bytes read as the
/// IPv6 EtherType where the control-word reading looks for one (a proptest case): the MPLS
/// EtherType followed by a whole label stack is the better reading.
#[test]
fn a_pseudowire_carrying_mpls_is_not_taken_for_one_with_a_control_word() {
    let data = hex::decode(
        [
            "020000000008 020000000007 8847",           // Ethernet: MPLS
            "000101 00",                                // label 16, TC 0, S 1, TTL 0
            "020000000008 020000000007 8847",           // the pseudowire's Ethernet (dst 02: nibble 0): MPLS
            "68a686dd", // label 428648, TC 3, S 0, TTL 221: "86dd" at the CW reading's EtherType
            "00010100", // label 16, TC 0, S 1, TTL 0
            "4500002c0000400000117ac20000000000000000", // IPv4, UDP
            "c00012b700180000", // UDP to 4791
            "00000000ffff0000000000000000d72a78fe", // BTH (SEND First), ICRC
        ]
        .concat()
        .replace(' ', ""),
    )
    .unwrap();
    let p = dec(&data);
    assert_eq!(p.error, None, "{:?}", p.error);
    let outer = p.tunnels.outermost().unwrap();
    let Encap::Mpls { control_word, payload, .. } = outer.encap else { panic!() };
    assert_eq!((control_word, payload), (None, MplsPayload::Ethernet));
    assert_eq!(p.tunnels.len(), 2);
    assert!(p.roce.is_some());
}

fn outer() -> Outer {
    Outer {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        vlans: Vec::new(),
        ip: IpRepr::V4 {
            src: Ipv4Addr::new(192, 168, 0, 1),
            dst: Ipv4Addr::new(192, 168, 0, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            id: 0,
        },
    }
}

fn every_encapsulation() -> Vec<Encapsulation> {
    let l = vec![MplsLabelRepr { label: 100, tc: 3, ttl: 64 }, MplsLabelRepr { label: 200, tc: 3, ttl: 64 }];
    vec![
        Encapsulation::ErspanI,
        Encapsulation::ErspanII {
            seq: 1,
            vlan: 10,
            cos: 3,
            encap: 0,
            truncated: false,
            session_id: 7,
            index: 1,
        },
        Encapsulation::ErspanIII {
            seq: 1,
            vlan: 10,
            cos: 3,
            bso: 0,
            truncated: false,
            session_id: 9,
            timestamp: 77,
            sgt: 0,
            p: true,
            hw_id: 1,
            direction: false,
            granularity: 1,
            platform: Some((3, 5)),
        },
        Encapsulation::Gretap { key: Some(1), seq: Some(2) },
        Encapsulation::Gre { key: None, seq: None },
        Encapsulation::Vxlan { sport: 1234, dport: 4789, vni: 42 },
        Encapsulation::Geneve { sport: 1234, dport: 6081, vni: 43, options: vec![0, 1, 2, 1, 9, 9, 9, 9] },
        Encapsulation::MplsEthernet { labels: l.clone(), control_word: true },
        Encapsulation::MplsEthernet { labels: l.clone(), control_word: false },
        Encapsulation::MplsIp { labels: l },
    ]
}

#[test]
fn every_emitted_encapsulation_decodes_to_the_same_inner_frame() {
    let inner = frame(CNP);
    for encap in every_encapsulation() {
        let wrapped = TunnelRepr { outer: outer(), encap: encap.clone() }.wrap(&inner).unwrap();
        let p = dec(&wrapped);
        assert_inner_cnp(&p);
        assert_eq!(p.tunnels.len(), 1, "{encap:?}");
        // Nested in VXLAN: two layers, outermost first.
        let twice =
            TunnelRepr { outer: outer(), encap: Encapsulation::Vxlan { sport: 1, dport: 4789, vni: 5 } }
                .wrap(&wrapped)
                .unwrap();
        let p = dec(&twice);
        assert_inner_cnp(&p);
        let kinds: Vec<_> = p.tunnels.iter().map(|t| t.kind()).collect();
        assert_eq!(kinds.len(), 2);
        assert_eq!(kinds[0], TunnelKind::Vxlan);
    }
}

#[test]
fn l3_encapsulations_refuse_frames_without_ip() {
    let pfc = rocescope_decoder::build::pfc_frame(
        [2, 0, 0, 0, 0, 9],
        None,
        &[],
        &rocescope_decoder::mac_control::Pfc {
            enable_vector: 8,
            quanta: [0, 0, 0, 100, 0, 0, 0, 0],
            bad_dst: false,
        },
    );
    let t = |encap| TunnelRepr { outer: outer(), encap };
    assert_eq!(t(Encapsulation::Gre { key: None, seq: None }).wrap(&pfc), None);
    assert_eq!(t(Encapsulation::MplsIp { labels: vec![MplsLabelRepr::default()] }).wrap(&pfc), None);
    // Ethernet encapsulations carry it, and the PFC frame decodes inside.
    let w = t(Encapsulation::ErspanI).wrap(&pfc).unwrap();
    let p = dec(&w);
    assert!(matches!(p.mac_control, Some(MacControl::Pfc(ref f)) if !f.bad_dst), "{p:?}");
}

#[test]
fn nesting_is_bounded() {
    let mut f = frame(CNP);
    let vx = TunnelRepr { outer: outer(), encap: Encapsulation::Vxlan { sport: 1, dport: 4789, vni: 5 } };
    for _ in 0..Tunnels::MAX {
        f = vx.wrap(&f).unwrap();
    }
    let p = dec(&f);
    assert_inner_cnp(&p);
    assert_eq!(p.tunnels.len(), Tunnels::MAX);
    let f = vx.wrap(&f).unwrap();
    let p = dec(&f);
    let e = p.error.expect("a fifth layer is an error");
    assert_eq!(e.layer, Layer::Tunnel);
    assert_eq!(e.to_string(), format!("tunnel at offset {}: more than 4 tunnel layers", 4 * 50 + 42));
    assert!(!p.is_malformed_roce());
}

#[test]
fn unknown_encapsulations_are_noted_not_errors() {
    let gre_other = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 4 + 74)),
        "0000 880b", // GRE: version 0, protocol 0x880b (PPP)
        &CNP.concat(),
    ]);
    let p = dec(&gre_other);
    assert_eq!(p.error, None);
    assert!(p.tunnels.is_empty() && p.roce.is_none());
    let u = p.tunnel_undecoded.expect("noted");
    assert_eq!(u.reason, UndecodedReason::GreProtocol(0x880b));
    assert_eq!(u.to_string(), "tunnel not decoded (GRE proto 0x880b) at offset 34");
    assert_eq!(
        p.ip.as_ref().map(|i| i.protocol()),
        Some(47),
        "the fields describe the frame up to the tunnel"
    );

    let erspan_v9 = frame(&[
        &strip(OUTER_ETH_V4),
        &strip(&outer_ipv4("2f", 16 + 74)),
        "1000 88be 00000001", // GRE: S, ERSPAN, sequence 1
        "9000 0000 00000000", // ERSPAN: Ver 9 (unknown)
        &CNP.concat(),
    ]);
    let p = dec(&erspan_v9);
    assert_eq!(p.error, None);
    assert_eq!(p.tunnel_undecoded.map(|u| u.reason), Some(UndecodedReason::ErspanVersion(9)));

    let pptp = frame(&[&strip(OUTER_ETH_V4), &strip(&outer_ipv4("2f", 8)), "3001 880b 00000000"]);
    assert_eq!(dec(&pptp).tunnel_undecoded.map(|u| u.reason), Some(UndecodedReason::GreVersion(0x3001)));
}

#[test]
fn cut_tunnel_headers_are_truncation_errors() {
    let full = TunnelRepr {
        outer: outer(),
        encap: Encapsulation::ErspanIII {
            seq: 1,
            vlan: 0,
            cos: 0,
            bso: 0,
            truncated: false,
            session_id: 1,
            timestamp: 0,
            sgt: 0,
            p: false,
            hw_id: 0,
            direction: false,
            granularity: 0,
            platform: Some((3, 0)),
        },
    }
    .wrap(&frame(CNP))
    .unwrap();
    let gre = decode(LinkType::ETHERNET, &full[..36], &DecodeOptions::default());
    assert_eq!(
        gre.error.map(|e| (e.layer, e.kind)),
        Some((Layer::Gre, ErrorKind::Truncated { needed: 4, available: 2 }))
    );
    // Its flags read, the GRE header's length (8 with the sequence number) is known.
    let gre = decode(LinkType::ETHERNET, &full[..38], &DecodeOptions::default());
    assert_eq!(
        gre.error.map(|e| (e.layer, e.kind)),
        Some((Layer::Gre, ErrorKind::Truncated { needed: 8, available: 4 }))
    );
    let er = decode(LinkType::ETHERNET, &full[..50], &DecodeOptions::default());
    assert_eq!(er.error.map(|e| e.layer), Some(Layer::Erspan));
    let plat = decode(LinkType::ETHERNET, &full[..58], &DecodeOptions::default());
    assert_eq!(plat.error.map(|e| (e.layer, e.offset)), Some((Layer::Erspan, 54)));
    // Cut before the inner ICRC (a mirror's truncate_size): headers decode, ICRC not.
    let cut = decode(LinkType::ETHERNET, &full[..full.len() - 4], &DecodeOptions::default());
    assert_eq!(cut.roce_ok().map(|r| r.icrc.status), Some(IcrcStatus::Truncated), "{:?}", cut.error);
    assert_eq!(cut.tunnels.len(), 1);
}
