//! `samples/capture/demo-isb.pcapng`: every frame of `samples/demo.pcap` in a pcapng whose
//! Interface Statistics Block records that the capture received [`RECEIVED`] packets and
//! dropped [`IF_DROPPED`] at the interface and [`OS_DROPPED`] in the kernel, as
//! `dumpcap` or `rocescope capture -w` record a live capture's drops (issue 25).
//! `tests/report.rs` checks that the report gives them as the capture's drops.

use crate::fabric::Gen;
use rocescope_capture::{Interface, PcapNgWriter};
use rocescope_decoder::LinkType;

/// `isb_ifrecv`: the file's 182 frames and the 18 dropped.
pub const RECEIVED: u64 = 200;
/// `isb_ifdrop`.
pub const IF_DROPPED: u64 = 3;
/// `isb_osdrop`.
pub const OS_DROPPED: u64 = 15;

/// The sample, as (path under `samples/`, bytes).
pub fn outputs(demo: &Gen) -> Vec<(String, Vec<u8>)> {
    let ifc = Interface::live("enp65s0f0np0", LinkType::ETHERNET, 65535, None);
    let end = demo.frames.last().map_or(0, |f| f.ts_ns);
    let written = PcapNgWriter::new(Vec::new(), &ifc).and_then(|mut w| {
        for f in &demo.frames {
            let keep = f.snap.min(f.data.len());
            w.write(f.ts_ns, f.data.get(..keep).unwrap_or(&f.data), f.len)?;
        }
        w.statistics(end, [Some(RECEIVED), Some(IF_DROPPED), Some(OS_DROPPED)])?;
        w.finish()
    });
    match written {
        Ok(bytes) => vec![("capture/demo-isb.pcapng".into(), bytes)],
        Err(e) => crate::unreachable_io(e),
    }
}
