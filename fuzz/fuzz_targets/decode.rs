//! Fuzz the whole-frame decoder: the first byte picks the link type and options, the rest
//! is the frame. Any panic is a bug (the decoder promises none on any input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_decoder::{decode, DecodeOptions, LinkType, OpcodeOptions};

const LINK_TYPES: [u32; 8] = [1, 101, 113, 276, 228, 229, 12, 197];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else { return };
    let lt = LinkType(LINK_TYPES[usize::from(sel & 7)]);
    let opts = DecodeOptions {
        roce_port: if sel & 0x80 == 0 { 4791 } else { 4789 },
        opcode: OpcodeOptions { dc: sel & 0x40 != 0 },
        check_icrc: sel & 0x20 == 0,
        ..DecodeOptions::default()
    };
    let p = decode(lt, frame, &opts);
    let _ = format!("{p:?}");
    // The glance a parallel report sorts frames by agrees with the decode (peek module).
    if let (Some(g), Some(r), Some(ip)) =
        (rocescope_decoder::peek::roce_v2(lt, frame, opts.roce_port), &p.roce, &p.ip)
    {
        if p.tunnels.is_empty() {
            assert_eq!((ip.src(), ip.dst()), (g.src, g.dst));
            assert_eq!(g.opcode, Some(r.bth.opcode().0));
        }
    }
    // The fast path's classifier gives what the full decode does (fast module).
    assert_eq!(rocescope_decoder::fast::classify(lt, frame, &opts), rocescope_decoder::fast::Common::of(&p, &opts));
    if let Some(e) = p.error {
        let _ = e.to_string();
    }
});
