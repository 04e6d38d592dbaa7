//! The capture-wide pass: what every RoCE frame adds to the figures of the whole capture
//! rather than of its flow: the use of its priority and MACs and the pauses under way
//! (pauses module), the fabric series per priority (fabric module) and the senders per
//! receiver (incast module). Of a parallel analysis, only the first shard runs it
//! ([`crate::parallel`]). A frame whose flow folds its shares at bin close (fold module)
//! leaves its marks, fabric series and fan-in to that.

use crate::{audit, fabric, frame::RoceFrame, incast, Analyzer, FrameMeta};
use rocescope_decoder::Ecn;

impl Analyzer {
    /// Frame `v` (`meta`; `start` is the capture's first time) for the capture-wide figures.
    /// `folded`: its flow adds its marks, fabric series and fan-in once per bin instead
    /// (crate::fold).
    pub(crate) fn capture_wide_pass(
        &mut self,
        meta: &FrameMeta,
        v: &RoceFrame<'_>,
        start: i64,
        folded: bool,
    ) {
        let x = crate::link::Exchange {
            ts: meta.ts_ns,
            psn: v.psn,
            ack_req: v.ack_req && v.info.request,
            ack: v.info.ack,
        };
        self.on_priority_traffic(meta, v.macs, v.prio, x);
        if !folded {
            self.capture_wide_counts(meta, v, start);
        }
    }

    /// The marks, fabric series and fan-in of frame `v`, one frame at a time.
    pub(crate) fn capture_wide_counts(&mut self, meta: &FrameMeta, v: &RoceFrame<'_>, start: i64) {
        let w = self.weight;
        let bytes = v.wire.saturating_mul(w);
        let ce = v.ecn == Ecn::Ce;
        self.marks.add(meta.point, v.info.class, v.dscp, v.pcp, w);
        self.fabric.add(fabric::Sample {
            point: meta.point,
            prio: v.prio,
            offset_ns: meta.ts_ns - start,
            bytes,
            packets: w,
            ce,
            cnp: v.info.cnp,
            data: v.info.class == audit::Class::Data,
        });
        if v.info.class == audit::Class::Data {
            let bin = (meta.ts_ns - start).max(0) / (self.cfg.bin_ns.max(1) as i64);
            self.fan_in.add(incast::DataPacket {
                point: meta.point,
                src: v.src,
                dst: v.dst,
                bin,
                frame: meta.number,
                bytes,
                packets: w,
                ce,
            });
        }
    }
}
