//! Hex fixtures, one comment per field, including the reference's ICRC test vectors (§1.6).

use rocescope_decoder::ext::{AethKind, NakCode};
use rocescope_decoder::*;

fn frame(parts: &[&str]) -> Vec<u8> {
    hex::decode(parts.concat()).expect("fixture hex")
}

fn v2(data: &[u8]) -> Packet<'_> {
    decode(LinkType::ETHERNET, data, &DecodeOptions::default())
}

/// V1: the CNP captured on a ConnectX-4 Lx (scapy roce.uts).
fn cnp_vector() -> Vec<u8> {
    frame(&[
        "e41d2dab2bc2",
        "7cfe90643b32",
        "0800", // Ethernet: dst, src, IPv4
        "45c2003c718c400040119161",
        "0a001101",
        "0a001201",         // IPv4: TOS 0xC2 (DSCP 48, ECT0), len 60
        "000012b700280000", // UDP: sport 0, dport 4791, len 40, checksum 0
        "8100ffff40000118",
        "00000000",                         // BTH: CNP, P_Key ffff, BECN, DestQP 0x118, PSN 0
        "00000000000000000000000000000000", // CNP body: 16 reserved bytes
        "82fd002a",                         // ICRC, least-significant byte first
    ])
}

#[test]
fn icrc_vector_v1_cnp() {
    let data = cnp_vector();
    let p = v2(&data);
    assert_eq!(p.error, None);
    let ip = p.ip.as_ref().unwrap();
    assert_eq!((ip.dscp(), ip.ecn()), (48, Ecn::Ect0));
    let r = p.roce.unwrap();
    assert_eq!(r.bth.opcode(), Opcode::CNP);
    assert!(r.bth.becn());
    assert_eq!(r.bth.dest_qp(), 0x118);
    assert!(r.ext.cnp.unwrap().is_zero());
    assert_eq!(r.payload_len, 0);
    assert_eq!(r.icrc.value, Some(0x2A00_FD82));
    assert_eq!(r.icrc.computed, Some(0x2A00_FD82));
    assert_eq!(r.icrc.status, IcrcStatus::Valid);
}

#[test]
fn icrc_masks_the_whole_bth_byte_4() {
    // Masking only resv6 (|= 0x3f) gives e808b967 on this frame (reference §2 mistake 1).
    let data = cnp_vector();
    let r = v2(&data).roce.unwrap();
    assert_ne!(r.icrc.computed, Some(u32::from_le_bytes([0xe8, 0x08, 0xb9, 0x67])));
    // ECN re-marking and TTL changes keep the ICRC valid: they are masked.
    let mut remarked = data.clone();
    remarked[15] = 0xC3; // TOS: CE
    remarked[22] = 0x01; // TTL
    assert_eq!(v2(&remarked).roce.unwrap().icrc.status, IcrcStatus::Valid);
    // A flipped payload bit is not.
    let mut bad = data;
    bad[60] ^= 1;
    assert_eq!(v2(&bad).roce.unwrap().icrc.status, IcrcStatus::Invalid);
}

#[test]
fn icrc_vector_v2_uc_send_only() {
    let data = frame(&[
        "020000000001",
        "020000000002",
        "0800", // Ethernet (not covered by the ICRC)
        "4501",
        "0040",
        "0478",
        "4000",
        "40",
        "11",
        "b4d5", // IPv4: tos 1, len 64, id 1144, DF, ttl 64, UDP, csum
        "c0a80007",
        "c0a80007", // 192.168.0.7 -> 192.168.0.7
        "c000",
        "12b7",
        "002c",
        "aca2", // UDP 49152 -> 4791, len 44, checksum
        "24",
        "60",
        "ffff",
        "00",
        "0000d3",
        "00",
        "cf1710", // BTH: UC SEND Only, M=1, PadCnt 2, QP 0xd3, PSN 13571856
        "4630818be28935d90e9a95505401be885e50",
        "0000",     // 18 payload bytes + 2 pad bytes
        "78f353f3", // ICRC
    ]);
    let p = v2(&data);
    assert_eq!(p.error, None);
    let r = p.roce.unwrap();
    assert_eq!(r.bth.opcode(), Opcode::UC_SEND_ONLY);
    assert_eq!(r.pad, 2);
    assert_eq!(r.payload_len, 18);
    assert_eq!(r.bth.psn(), 13_571_856);
    assert_eq!(r.icrc.status, IcrcStatus::Valid);
}

#[test]
fn rocev1_vectors_from_scapy() {
    // scapy roce.uts RoCEv1 frames (ConnectX, 7c:fe:90): RDMA WRITE Only and its ACK. The
    // reference lists ICRCs 0xe3d856bb and 0x25f0c038 as not re-run; checked here.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/real-captures/scapy_roce_uts_hexdumps.pcap");
    let Ok(file) = std::fs::read(&path) else {
        eprintln!("skipping: {} not present", path.display());
        // Listed at the end of .ci/run with the other skips.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt"))
        {
            use std::io::Write;
            let _ = writeln!(f, "fixtures: {} not present", path.display());
        }
        return;
    };
    // Legacy pcap: 24-byte header, then records of 16-byte header + data.
    let mut off = 24;
    let mut frames = Vec::new();
    while off + 16 <= file.len() {
        let caplen = u32::from_le_bytes(file[off + 8..off + 12].try_into().unwrap()) as usize;
        frames.push(&file[off + 16..off + 16 + caplen]);
        off += 16 + caplen;
    }
    assert_eq!(frames.len(), 3);
    let mut icrcs = Vec::new();
    for f in &frames[1..] {
        let p = v2(f);
        let r = p.roce.expect("RoCEv1");
        assert_eq!(r.version, RoceVersion::V1);
        assert_eq!(r.icrc.status, IcrcStatus::Valid, "{:?}", r.icrc);
        icrcs.push(r.icrc.value.unwrap());
    }
    assert!(icrcs.contains(&0xe3d856bb) || icrcs.contains(&0xbb56d8e3), "{icrcs:x?}");
}

#[test]
fn aeth_nak_fixture() {
    let data = frame(&[
        "020000000002",
        "020000000001",
        "0800",
        "456a003000004000401100000a0000020a000001", // IPv4 DSCP 26 ECT0, len 48 (checksum not checked)
        "c0de12b7001c0000",                         // UDP len 28
        "11000000000000120000007b",                 // BTH: RC Acknowledge, QP 0x12, PSN 123
        "60000005",                                 // AETH: NAK PSN sequence error, MSN 5
        "00000000",                                 // ICRC (wrong on purpose)
    ]);
    let r = v2(&data).roce.unwrap();
    let a = r.ext.aeth.unwrap();
    assert_eq!(a.kind(), AethKind::Nak);
    assert_eq!(a.repr().nak_code(), Some(NakCode::PSN_SEQUENCE_ERROR));
    assert_eq!(a.msn(), 5);
    assert_eq!(r.bth.psn(), 123);
    assert_eq!(r.icrc.status, IcrcStatus::Invalid);
}

#[test]
fn truncation_comes_from_ip_and_udp_lengths() {
    // The record holds 82 bytes but the IP total length says 1084: truncated, not invalid.
    let mut data = frame(&[
        "020000000002",
        "020000000001",
        "0800",
        "4502043c00004000401100000a0000010a000002", // IPv4 len 1084
        "c0de12b704280000",                         // UDP len 1064
        "0a400000000000120000000a",                 // BTH: RC RDMA WRITE Only, M=1, QP 0x12, PSN 10
        "0000000000001000",
        "00000001",
        "00000400", // RETH: VA 0x1000, rkey 1, len 1024
    ]);
    data.extend_from_slice(&[0xAB; 12]);
    let p = v2(&data);
    assert_eq!(p.error, None);
    let r = p.roce.unwrap();
    assert_eq!(r.icrc.status, IcrcStatus::Truncated);
    assert_eq!(r.payload_len, 1024);
    assert_eq!(r.payload.len(), 12);
    assert_eq!(r.ext.reth.unwrap().dma_len(), 1024);
}

#[test]
fn decides_by_destination_port_only() {
    // Source port 4791, destination 5000: not RoCE (the roce.pcap trap, reversed).
    let data = frame(&[
        "020000000002",
        "020000000001",
        "0800",
        "4500002400004000401100000a0000010a000002",
        "12b7138800100000",
        "0102030405060708",
    ]);
    let p = v2(&data);
    assert!(p.udp.is_some() && p.roce.is_none() && p.error.is_none());
}

#[test]
fn errors_keep_the_layers_that_parsed() {
    let data = frame(&[
        "020000000002",
        "020000000001",
        "8100",
        "6064",
        "0800", // VLAN 100, PCP 3
        "4500002000004000401100000a0000010a000002",
        "c0de12b7000c0000",
        "0a40", // UDP len 12: too short for a BTH
    ]);
    let p = v2(&data);
    assert_eq!(p.vlans.as_slice()[0].vid, 100);
    assert_eq!(p.vlans.pcp(), Some(3));
    assert!(p.udp.is_some());
    let e = p.error.unwrap();
    assert_eq!(e.layer, Layer::Bth);
    assert_eq!(e.offset, 14 + 4 + 20 + 8);
    assert!(p.is_malformed_roce());
    assert!(e.to_string().contains("BTH at offset 46"), "{e}");
}

#[test]
fn partial_decode_keeps_the_bth() {
    // RDMA WRITE Only whose UDP length ends 8 bytes into the 16-byte RETH.
    let data = frame(&[
        "020000000002",
        "020000000001",
        "0800",
        "4568003000004000401100000a0000170a000018", // IPv4 len 48
        "c00012b7001c0000",                         // UDP len 28: 8 + 12 + 8
        "0a000000000001020000025c",                 // BTH: RC RDMA WRITE Only, QP 0x102, PSN 604
        "0000000000000000",                         // first half of a RETH
    ]);
    let p = v2(&data);
    let e = p.error.unwrap();
    assert_eq!(e.layer, Layer::Ext(ExtKind::Reth));
    assert_eq!(e.offset, 54);
    let r = p.roce.as_ref().expect("the BTH is kept");
    assert_eq!(r.bth.psn(), 604);
    assert!(r.ext.reth.is_none());
    assert!(p.is_malformed_roce());
    assert!(p.roce_ok().is_none());
}

#[test]
fn ud_deth_immdt_fixture() {
    let data = frame(&[
        "020000000014",
        "020000000013",
        "0800",
        "4568004000004000401100000a0000130a000014", // IPv4 DSCP 26 ECT0, len 64
        "c00112b7002c0000",                         // UDP len 44
        "6580ffff000000e200000002",                 // BTH: UD SEND Only w/ Imm, SE, QP 0xe2, PSN 2
        "00001111",
        "000000e1",         // DETH: Q_Key 0x1111, source QP 0xe1
        "cafe0002",         // ImmDt
        "0102030405060708", // 8 payload bytes
        "00000000",         // ICRC (not checked here)
    ]);
    let r = v2(&data).roce.unwrap();
    let d = r.ext.deth.unwrap();
    assert_eq!((d.qkey(), d.src_qp()), (0x1111, 0xe1));
    assert_eq!(r.ext.immdt.unwrap().value(), 0xcafe_0002);
    assert!(r.bth.se());
    assert_eq!(r.payload, &[1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn atomic_and_xrc_fixtures() {
    let cas = frame(&[
        "020000000012",
        "020000000011",
        "0800",
        "4568004c00004000401100000a0000110a000012", // IPv4 len 76
        "c0d112b700380000",                         // UDP len 56
        "1300ffff000000d280000005",                 // BTH: RC CmpSwap, QP 0xd2, A, PSN 5
        "00007f3000000000",
        "00000abc", // AtomicETH: VA, R_Key
        "0000000000000001",
        "0000000000000000", // swap, compare
        "00000000",         // ICRC
    ]);
    let a = v2(&cas).roce.unwrap().ext.atomiceth.unwrap();
    assert_eq!((a.va(), a.rkey(), a.swap(), a.compare()), (0x7f30_0000_0000, 0xabc, 1, 0));

    let xrc = frame(&[
        "02000000001a",
        "020000000019",
        "0800",
        "4568003800004000401100000a0000190a00001a", // IPv4 len 56
        "c10012b700240000",                         // UDP len 36
        "a400ffff0000011100000032",                 // BTH: XRC SEND Only, QP 0x111, PSN 50
        "000a0b0c",                                 // XRCETH: SRQ 0x0a0b0c
        "1111111122222222",                         // 8 payload bytes
        "00000000",                                 // ICRC
    ]);
    let r = v2(&xrc).roce.unwrap();
    assert_eq!(r.ext.xrceth.unwrap().srqn(), 0x0a0b0c);
    assert_eq!(r.payload_len, 8);
}

#[test]
fn pfc_behind_a_vlan_tag_and_pause_to_a_wrong_address() {
    let pfc = frame(&[
        "0180c2000001",
        "02000000ff01",
        "8100",
        "6064",
        "8808", // VLAN 100 PCP 3, MAC Control
        "0101",
        "0008",                                 // PFC, enable priority 3
        "00000000000000000000ffff000000000000", // quanta: p3 = 0xffff... (p0..p2 0)
        "0000",
    ]);
    let p = v2(&pfc);
    assert_eq!(p.vlans.as_slice()[0].vid, 100);
    let Some(MacControl::Pfc(f)) = p.mac_control else { panic!("{p:?}") };
    assert_eq!(f.quanta[3], 0);
    assert_eq!(f.quanta[5], 0xffff);
    let pause = frame(&["ffffffffffff", "020000000009", "8808", "0001", "01f4"]);
    let Some(MacControl::Pause(x)) = v2(&pause).mac_control else { panic!() };
    assert_eq!(x.quanta, 500);
    assert!(x.bad_dst);
}

#[test]
fn sll2_and_ipv6_fixture() {
    let data = frame(&[
        "86dd",
        "0000",
        "00000003",
        "0001",
        "00",
        "06",
        "020000000001",
        "0000", // SLL2: IPv6, ifindex 3
        "6ce00000",
        "001c",
        "11",
        "40", // IPv6: TC 0xce (DSCP 51, ECT0), plen 28, UDP, hop 64
        "fd000000000000000000000000000001",
        "fd000000000000000000000000000002",
        "c00012b7001c0000",         // UDP len 28
        "1100ffff000001c10000004d", // BTH: RC ACK, QP 0x1c1, PSN 77
        "1f000001",                 // AETH: ACK, MSN 1
        "00000000",                 // ICRC
    ]);
    let p = decode(LinkType::LINUX_SLL2, &data, &DecodeOptions::default());
    assert_eq!(p.error, None);
    let ip = p.ip.as_ref().unwrap();
    assert_eq!((ip.version(), ip.dscp(), ip.ecn(), ip.ttl()), (6, 51, Ecn::Ect0, 64));
    assert_eq!(p.roce.unwrap().ext.aeth.unwrap().msn(), 1);
}
