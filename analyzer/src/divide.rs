//! Divided reading (issue 39): one walker reads the capture once and hands each shard of a
//! parallel analysis ([`crate::parallel`]) only the frames it must see, where each shard
//! used to read the whole file again and glance at every frame.
//!
//! The shards and their figures are those of [`crate::parallel`]: the first shard takes
//! every frame (it keeps the capture-wide figures); another takes the frames of its own host
//! pairs and every frame it could not pass over by [`Analyzer::is_others`]. The [`Router`]
//! decides that once per frame, for all the shards, from the same glance
//! ([`rocescope_decoder::peek`]). A frame a shard does not get is one it would have passed
//! over: what passing over kept (the frame's place, which orders flows at the merge, and the
//! capture's first time, which the flows' series start from) comes with the next frame it
//! gets ([`Analyzer::push_divided`]).
//!
//! The one figure that runs through the whole capture and that the shards read is the path
//! MTU READs are measured with: a shard must see every full-size packet that could raise its
//! own. The router keeps a value never above any shard's (raised only by frames it has seen
//! raise it, common frames read at fixed offsets) and hands a First or Middle packet that
//! could be above it to every shard; each shard then passes it over or not by its own value,
//! as it did when it read the file itself.

use crate::parallel::{shard_of, shard_of_v4};
use crate::{frame, mtu_class, Analyzer};
use rocescope_decoder::{fast, peek, DecodeOptions, LinkType, Opcode, Position};

/// [`peek::roce_v2`] at fixed offsets for the common frame (Ethernet, no tag or one 802.1Q
/// tag, IPv4 without options): the source and destination, the UDP length and the opcode
/// byte; `None` for any other frame (the glance then decides). Where it answers, it answers
/// as the glance does.
#[inline]
fn glance_v4(link_type: LinkType, data: &[u8], roce_port: u16) -> Option<(u32, u32, u16, Option<u8>)> {
    if link_type != LinkType::ETHERNET {
        return None;
    }
    let at = match data.get(12..14)? {
        [0x08, 0x00] => 14,
        [0x81, 0x00] if data.get(16..18)? == [0x08, 0x00] => 18,
        _ => return None,
    };
    let h: &[u8; 28] = data.get(at..)?.first_chunk()?;
    let [vihl, _, _, _, _, _, f0, f1, _, proto, _, _, s0, s1, s2, s3, d0, d1, d2, d3, _, _, p0, p1, l0, l1, _, _] =
        *h;
    if vihl != 0x45 || proto != 17 || u16::from_be_bytes([f0, f1]) & 0x3FFF != 0 {
        return None;
    }
    if u16::from_be_bytes([p0, p1]) != roce_port {
        return None;
    }
    let src = u32::from_be_bytes([s0, s1, s2, s3]);
    let dst = u32::from_be_bytes([d0, d1, d2, d3]);
    Some((src, dst, u16::from_be_bytes([l0, l1]), data.get(at + 28).copied()))
}

/// Where each frame of a parallel analysis goes (the module's documentation).
#[derive(Clone, Debug)]
pub struct Router {
    /// Shards.
    count: u32,
    /// The path MTU is configured: no frame is needed for it.
    fixed_pmtu: bool,
    /// The RoCE port is sFlow's and sFlow is read: every frame goes to every shard.
    sflow: bool,
    /// A path MTU no shard's is below (0 until a full-size packet is seen).
    pmtu_floor: u32,
    /// Per opcode byte: the bytes of its extended headers when it is a First or Middle
    /// packet (whose payload is the path MTU), else `None`.
    full_size: Box<[Option<u8>; 256]>,
    /// A tunnelled frame (an overlay, a mirror session) has been seen: from it on, every
    /// frame goes to every shard, as when each read the file (a mirror session's clock is
    /// checked on frames held back in order, the passed-over ones among them).
    every_frame: bool,
}

/// Which shards get a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The first shard, and shard `k` (which may be the first).
    Owner(u32),
    /// Every shard.
    All,
}

impl Router {
    /// The router of `count` shards of analyzers made with settings `cfg`.
    pub fn new(cfg: &crate::Config, count: u32, opts: &DecodeOptions) -> Self {
        Router {
            count: count.max(1),
            fixed_pmtu: cfg.pmtu.is_some(),
            sflow: cfg.sflow && opts.roce_port == rocescope_decoder::sflow::PORT,
            pmtu_floor: 0,
            every_frame: false,
            full_size: Box::new(std::array::from_fn(|op| {
                let op = Opcode(op as u8);
                matches!(op.position(), Some(Position::First | Position::Middle)).then(|| {
                    let n: usize = op.layout(opts.opcode).headers.iter().map(|k| k.size()).sum();
                    u8::try_from(n).unwrap_or(u8::MAX)
                })
            })),
        }
    }

    /// Where record `rec` goes.
    pub fn route(&mut self, rec: &rocescope_capture::Record<'_>, opts: &DecodeOptions) -> Route {
        if self.count <= 1 {
            return Route::Owner(0);
        }
        if self.sflow || self.every_frame {
            return Route::All;
        }
        let (owner, glance) = match glance_v4(rec.link_type, rec.data, opts.roce_port) {
            Some((src, dst, udp_len, opcode)) => (shard_of_v4(src, dst, self.count), Some((udp_len, opcode))),
            None => match peek::roce_v2(rec.link_type, rec.data, opts.roce_port) {
                Some(g) => (shard_of(g.src, g.dst, self.count), Some((g.udp_len, g.opcode))),
                None => (0, None),
            },
        };
        let Some((udp_len, opcode)) = glance else {
            // Not plain RoCEv2 (a pause, a tunnel, anything else): every shard decodes it.
            // (Decoded here too, but only to see a tunnel.)
            if !rocescope_decoder::decode(rec.link_type, rec.data, opts).tunnels.is_empty() {
                self.every_frame = true;
            }
            return Route::All;
        };
        let Some(op) = opcode else { return Route::All };
        let Some(headers) = self.full_size[usize::from(op)].filter(|_| !self.fixed_pmtu) else {
            return Route::Owner(owner);
        };
        // As `Analyzer::is_others`: the most payload this packet can carry.
        let most = usize::from(udp_len).saturating_sub(8 + 12 + 4 + usize::from(headers));
        if most == 0 || mtu_class(most) <= self.pmtu_floor {
            return Route::Owner(owner);
        }
        // It may raise some shard's MTU: every shard gets it. Read at fixed offsets, what it
        // raises every shard's to is known (a frame the fast path does not take raises the
        // floor by nothing: the floor stays below).
        if let Some(c) = fast::classify(rec.link_type, rec.data, opts) {
            if frame::op_info(c.opcode).full_size && c.payload_len > 0 {
                self.pmtu_floor = self.pmtu_floor.max(mtu_class(c.payload_len as usize));
            }
        }
        Route::All
    }
}

impl Analyzer {
    /// Feed a shard record `rec` (frame `number`), the `seq`-th record of the capture (from
    /// 1), whose first record was at `first_ts`: [`Analyzer::push_shard_record`] after the
    /// records before it that this shard did not get were passed over. Feature `capture`.
    pub fn push_divided(
        &mut self,
        seq: u64,
        first_ts: i64,
        number: u64,
        rec: &rocescope_capture::Record<'_>,
        opts: &DecodeOptions,
    ) {
        // Passed over, a record counted its place and the capture's first time; the frame
        // count and last time of a shard but the first are not read (the merge keeps the
        // first shard's). Frames held back for a mirror's clock check count their places
        // themselves, the passed-over ones among them (every frame comes then).
        if !self.mirror.checking() {
            self.pushed = seq.saturating_sub(1).max(self.pushed);
        }
        self.totals.start_ns.get_or_insert(first_ts);
        self.push_shard_record(number, rec, opts);
    }
}
