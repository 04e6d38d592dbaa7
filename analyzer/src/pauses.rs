//! The pause pass: PFC and 802.3x PAUSE frames open and close pause timelines; a RoCE
//! frame is counted per priority and MAC, and given to the timelines with a pause under way
//! that it concerns, which the `pause_watch` module finds without walking them (issue 28: no
//! per-frame cost that grows with the pausing hosts; issue 39: none that grows with the
//! pauses under way).

use crate::pfc::{PauseKind, Timeline};
use crate::{pfc, Analyzer, FrameMeta, TimelineKey};
use rocescope_decoder::{MacControl, Packet};

impl Analyzer {
    /// A RoCE frame on priority `prio` between Ethernet `macs` (source, destination: the
    /// link's): count it for the priority and its point's station, and give it to the
    /// pauses under way at its capture point that it concerns. (Its destination's count in
    /// the MAC table comes with its flow: [`Analyzer::count_to_mac`].)
    pub(crate) fn on_priority_traffic(
        &mut self,
        meta: &FrameMeta,
        macs: Option<([u8; 6], [u8; 6])>,
        prio: u8,
        x: crate::link::Exchange,
    ) {
        let (point, ts) = (meta.point, meta.ts_ns);
        if let Some(u) = self.priorities.get_mut(usize::from(point) * 8 + usize::from(prio & 7)) {
            u.packets = u.packets.saturating_add(self.weight);
            u.first_ts.get_or_insert(ts);
        }
        let Some((src, dst)) = macs else { return };
        // A pause stops the pausing MAC's link peer (reference §1.8; `link` module): the
        // frames sent to the pausing MAC where it takes part in RoCE here, else those the
        // station at the other end of the link sends, to anyone. The pauses that ended by
        // this frame leave the watch before it is counted.
        self.pause_watch.before_frame(ts, &mut self.timelines, &self.macs);
        self.macs.add_link(point, src, dst, prio, x);
        if !self.pause_watch.is_empty() {
            let f = crate::pause_watch::Watched { point, prio, ts, number: meta.number, src, dst };
            self.pause_watch.on_frame(&f, &mut self.timelines, &self.macs, &self.cfg.pfc);
        }
    }

    /// The MAC table's count of a RoCE frame `v` to its destination (capture-wide state, of
    /// the shard that keeps it): through the slot its flow `flow` holds, or by probe for a
    /// frame of another shard's flow.
    #[inline]
    pub(crate) fn count_to_mac(&mut self, flow: Option<usize>, point: u16, v: &crate::frame::RoceFrame<'_>) {
        let Some(macs) = &v.macs else { return };
        match flow {
            Some(id) => self.macs.add_bound(id, point, macs, v.prio),
            None => self.macs.add_dst(point, macs.0, macs.1, v.prio),
        }
    }

    /// Timeline `key` (`tl`) as the report reads it: with the frames the pause under way
    /// has yet to take ([`crate::pause_watch`]), finished at `end` ([`Timeline::finish`]).
    pub(crate) fn finished_timeline(&self, key: TimelineKey, tl: &Timeline, end: i64) -> Timeline {
        match self.pause_watch.pending(key, &self.macs) {
            0 => tl.finish(end, &self.cfg.pfc),
            n => {
                let mut t = tl.clone();
                t.add_during(n);
                t.finish(end, &self.cfg.pfc)
            }
        }
    }

    pub(crate) fn on_mac_control(&mut self, meta: &FrameMeta, p: &Packet<'_>, mc: MacControl) {
        let src = match p.link {
            rocescope_decoder::Link::Ethernet(e) => e.src(),
            _ => [0; 6],
        };
        // One conversation on the link: its turnaround may name the station (link module).
        self.judge_turnaround(meta.point, meta.ts_ns);
        let link_bps = meta.link_bps.unwrap_or(self.cfg.link_speed_bps);
        // The point's first frame: the start of the timeline's per-second windows.
        let origin = match self.points.as_slice() {
            [_] => self.totals.start_ns,
            more => more.get(usize::from(meta.point)).and_then(|p| p.start_ns),
        }
        .unwrap_or(meta.ts_ns);
        let apply = |kind: PauseKind, prio: u8, quanta: u16, this: &mut Self| {
            // What the paused priority carried before this frame (802.3x PAUSE: every
            // priority), to anyone and to the pausing MAC itself.
            let at = usize::from(meta.point) * 8;
            // The traffic the pause stops: to the pausing MAC, or from its link peer when the
            // pausing MAC sends no RoCE here (`link` module).
            let sends = this.macs.sends(meta.point, src);
            let mut stopped = this.macs.to(meta.point, src);
            if !sends {
                if let Some(peer) = this.macs.station(meta.point, src) {
                    let sent = this.macs.station_sent(meta.point, peer);
                    for (p, n) in stopped.iter_mut().enumerate() {
                        *n += u64::from(sent >> p & 1);
                    }
                }
            }
            let used = this.priorities.get(at..at + 8).unwrap_or(&[]);
            let seen = match kind {
                PauseKind::Pfc => pfc::SeenBefore {
                    towards: stopped.get(usize::from(prio & 7)).is_some_and(|n| *n > 0),
                    any: used.get(usize::from(prio & 7)).is_some_and(|u| u.packets > 0),
                },
                PauseKind::Pause => pfc::SeenBefore {
                    towards: stopped.iter().any(|n| *n > 0),
                    any: used.iter().any(|u| u.packets > 0),
                },
            };
            let key = (meta.point, src, kind, prio);
            // The frames counted during its pause so far go into that pause first.
            this.pause_watch.settle(key, &mut this.timelines, &this.macs);
            let tl = this.timelines.entry(key).or_insert_with(|| {
                let mut t = Timeline::new(link_bps, meta.number, origin);
                t.pauser_sends = sends;
                t
            });
            let closed = tl.on_frame(meta.ts_ns, quanta, meta.number, &this.cfg.pfc, seen);
            this.pause_watch.join(key, tl, &this.macs);
            if let Some((s, e)) = closed {
                let start = this.totals.start_ns.unwrap_or(s);
                let prio = (kind == PauseKind::Pfc).then_some(prio);
                this.fabric.add_pause(meta.point, prio, s - start, e - start);
            }
        };
        match mc {
            MacControl::Pfc(pfc) => {
                self.totals.pfc_frames += self.weight;
                for prio in 0..8u8 {
                    if pfc.enabled(prio) {
                        let q = pfc.quanta.get(usize::from(prio)).copied().unwrap_or(0);
                        apply(PauseKind::Pfc, prio, q, self);
                    }
                }
            }
            MacControl::Pause(pause) => {
                self.totals.pause_frames += self.weight;
                apply(PauseKind::Pause, 0, pause.quanta, self);
            }
            MacControl::Other { .. } => self.totals.non_roce += self.weight,
        }
    }
}
