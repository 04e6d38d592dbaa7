//! Build a RoCEv2 frame in memory, decode it, and print its opcode, QP, PSN and ICRC
//! verdict; then flip a bit in the payload and show that the ICRC check catches it.
//! No capture file and no I/O: the decoder works on any byte slice.
//!
//! ```text
//! cargo run -p rocescope-decoder --example decode_frame
//! ```

use rocescope_decoder::build::{IbRepr, IpRepr, RoceV2Frame};
use rocescope_decoder::ext::RethRepr;
use rocescope_decoder::{decode, BthRepr, DecodeOptions, Ecn, LinkType, Opcode};
use std::net::Ipv4Addr;

/// An RDMA WRITE ONLY of 64 bytes from 10.0.0.1 to QP 0x12 on 10.0.0.2, PSN 1000.
pub fn write_only_frame(opts: &DecodeOptions) -> Vec<u8> {
    let ip = IpRepr::V4 {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        dscp: 26,
        ecn: Ecn::Ect0,
        ttl: 64,
        id: 1,
    };
    let mut ib = IbRepr {
        bth: BthRepr {
            opcode: Opcode::RC_WRITE_ONLY,
            dest_qp: 0x12,
            psn: 1000,
            ack_req: true,
            ..Default::default()
        },
        payload: vec![0xab; 64],
        ..Default::default()
    };
    ib.ext.reth = Some(RethRepr { va: 0x7f00_0000_1000, rkey: 0x1234, dma_len: 64 });
    RoceV2Frame::new([0x02, 0, 0, 0, 0, 0x01], [0x02, 0, 0, 0, 0, 0x02], ip, ib).build(opts.opcode)
}

/// One line describing `frame`: opcode, destination QP, PSN and ICRC verdict.
pub fn describe(frame: &[u8], opts: &DecodeOptions) -> String {
    let packet = decode(LinkType::ETHERNET, frame, opts);
    match (&packet.roce, &packet.error) {
        (Some(roce), None) => format!(
            "{} QP=0x{:06x} PSN={} ICRC {}",
            roce.bth.opcode().name(opts.opcode),
            roce.bth.dest_qp(),
            roce.bth.psn(),
            roce.icrc.status.name()
        ),
        (_, Some(error)) => format!("not decoded: {error}"),
        (None, None) => String::from("not RoCE"),
    }
}

fn main() {
    let opts = DecodeOptions::default();
    let mut frame = write_only_frame(&opts);
    println!("{} bytes: {}", frame.len(), describe(&frame, &opts));
    // Corrupt the last payload byte (just before the 4-byte ICRC).
    let at = frame.len() - 5;
    frame[at] ^= 0x01;
    println!("one bit flipped: {}", describe(&frame, &opts));
}
