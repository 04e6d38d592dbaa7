//! Runs the logic of `examples/decode_frame.rs` (compiled in here as a module) and checks
//! what it prints.

#[path = "../examples/decode_frame.rs"]
#[allow(dead_code)] // its `main` is the example's, unused here
mod decode_frame;

use rocescope_decoder::{decode, DecodeOptions, IcrcStatus, LinkType};

#[test]
fn decode_frame_example_describes_the_frame_it_builds() {
    let opts = DecodeOptions::default();
    let mut frame = decode_frame::write_only_frame(&opts);
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload 64 + ICRC 4.
    assert_eq!(frame.len(), 138);
    assert_eq!(decode_frame::describe(&frame, &opts), "RC RDMA Write Only QP=0x000012 PSN=1000 ICRC valid");

    let p = decode(LinkType::ETHERNET, &frame, &opts);
    let roce = p.roce_ok().expect("decodes as RoCE");
    let reth = roce.ext.reth.expect("WRITE ONLY carries a RETH");
    assert_eq!((reth.rkey(), reth.dma_len()), (0x1234, 64));
    assert_eq!(roce.payload.len(), 64);

    let at = frame.len() - 5;
    frame[at] ^= 0x01;
    assert_eq!(decode_frame::describe(&frame, &opts), "RC RDMA Write Only QP=0x000012 PSN=1000 ICRC invalid");

    // Cut by a snap length: the headers still decode, the ICRC cannot be checked.
    let cut = &frame[..100];
    assert_eq!(
        decode(LinkType::ETHERNET, cut, &opts).roce_ok().map(|r| r.icrc.status),
        Some(IcrcStatus::Truncated)
    );
    assert_eq!(decode_frame::describe(cut, &opts), "RC RDMA Write Only QP=0x000012 PSN=1000 ICRC truncated");
}

#[test]
fn decode_frame_example_reports_what_is_not_roce() {
    let opts = DecodeOptions::default();
    assert_eq!(
        decode_frame::describe(&[0u8; 10], &opts),
        "not decoded: Ethernet at offset 0: truncated, needs 14 bytes but 10 remain"
    );
}
