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
