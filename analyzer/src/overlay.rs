//! VXLAN and Geneve as the fabric's transport (an overlay between VTEPs) rather than a
//! mirror session delivering copies to a collector (crate::mirror).
//!
//! **How the two are told apart.** A mirror session sends copies from the switch to its
//! collector, which sends nothing back into the session: both directions of every mirrored
//! conversation travel the one outer direction, switch to collector. An overlay carries each
//! direction of a conversation in its own outer direction, VTEP to VTEP: a request from the
//! host behind VTEP X to one behind VTEP Y goes X → Y, its ACK Y → X. So a VXLAN or Geneve
//! layer is the fabric's transport once its **VTEP pair carried tunnelled frames both ways**
//! at the capture point; until then (and always for ERSPAN and GRE) it is a mirror session
//! as before. The decision is per (capture point, VTEP pair); the first frames of a pair,
//! before its reverse direction appears (microseconds, one round trip, on RoCE with ACKs),
//! are read as a mirror's.
//!
//! **What an overlay changes.** The underlay switches see only the outer headers, so for an
//! overlay frame (docs/verdicts.md "Overlays"):
//! - its **priority** is the one the underlay gives it: the outer DSCP (through the map) or
//!   the outer VLAN PCP, by the trust mode;
//! - a **CE mark** in the outer ECN field counts as CE (the underlay marks the outer header;
//!   RFC 6040 decapsulation copies it inwards only at the far VTEP, after the capture);
//! - **pause direction** compares the outer MACs, the link's;
//! - `--expect-outer-dscp` audits the outer DSCP of its data (`outer_dscp` violations);
//! - the report lists each VTEP pair (`overlay[]`);
//! - a new VNI on the pair makes no new capture point (a VNI of an overlay is a tenant
//!   network on the same link, not a mirror session).
//!
//! Cost: one set lookup per tunnelled frame; at most [`MAX_PAIRS`] directions are tracked
//! (a capture with more VTEP pairs reads the rest as mirrors, and says how many).

use crate::audit::{PcpTag, ReadPcp};
use rocescope_decoder::{Ecn, Encap, Link, Packet};
pub use rocescope_model::overlay::VtepPairReport;
use std::net::IpAddr;

/// Outer directions (capture point, VTEP, VTEP) remembered.
pub const MAX_PAIRS: usize = 4096;

/// What the underlay sees of an overlay frame: its outer headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outer {
    /// Outer Ethernet source (the link's).
    pub src_mac: [u8; 6],
    /// Outer Ethernet destination.
    pub dst_mac: [u8; 6],
    /// Outer DSCP.
    pub dscp: u8,
    /// Outer ECN.
    pub ecn: Ecn,
    /// Outer VLAN PCP (the tag `--pcp-tag` names), when tagged.
    pub pcp: Option<u8>,
}

/// One VTEP pair's traffic at one capture point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Pair {
    /// Frames from the lower VTEP address to the higher, and back.
    frames: [u64; 2],
    roce: u64,
    outer_dscp: u64,
    outer_ce: u64,
    inner_ce: u64,
    cnps: u64,
    overlay: bool,
    /// Its first frames, read as a mirror's before the pair was known as an overlay, went
    /// to the point the sessions beyond the cap share (crate::mirror): its later frames
    /// follow them there, not to the capture point's own (named after another session).
    overflow: bool,
}

/// VTEP pairs seen in VXLAN and Geneve layers, per capture point.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pairs: crate::addr_hash::AddrMap<(u16, IpAddr, IpAddr), Pair>,
    /// Frames in pairs beyond [`MAX_PAIRS`], read as mirrors.
    untracked: u64,
}

/// The outermost VXLAN or Geneve layer of `p` with an outer IP header: its (source,
/// destination) VTEPs and outer headers.
fn layer(p: &Packet<'_>, pcp_tag: PcpTag) -> Option<(IpAddr, IpAddr, Outer)> {
    let t = p.tunnels.iter().find(|t| matches!(t.encap, Encap::Vxlan(_) | Encap::Geneve(_)))?;
    let ip = t.ip.as_ref()?;
    let (src_mac, dst_mac) = match t.link {
        Link::Ethernet(e) => (e.src(), e.dst()),
        _ => return None,
    };
    let outer =
        Outer { src_mac, dst_mac, dscp: ip.dscp(), ecn: ip.ecn(), pcp: pcp_tag.pcp(t.vlans.as_slice()) };
    Some((ip.src(), ip.dst(), outer))
}

impl Overlay {
    /// A tunnelled frame at capture point `point`: its outer headers when its VXLAN or
    /// Geneve layer's VTEP pair is an overlay (both ways seen, this frame included), else
    /// `None` (a mirror session, or no such layer).
    pub fn observe(&mut self, point: u16, p: &Packet<'_>, pcp_tag: PcpTag) -> Option<Outer> {
        let (src, dst, outer) = layer(p, pcp_tag)?;
        let (a, b, dir) = if src <= dst { (src, dst, 0) } else { (dst, src, 1) };
        let key = (point, a, b);
        if !self.pairs.contains_key(&key) && self.pairs.len() >= MAX_PAIRS {
            self.untracked += 1;
            return None;
        }
        let pair = self.pairs.entry(key).or_default();
        if let Some(n) = pair.frames.get_mut(dir) {
            *n += 1;
        }
        pair.overlay |= pair.frames.iter().all(|n| *n > 0);
        if !pair.overlay {
            return None;
        }
        if let Some(r) = p.roce_ok() {
            pair.roce += 1;
            pair.outer_dscp |= 1 << (outer.dscp & 63);
            pair.outer_ce += u64::from(outer.ecn == Ecn::Ce);
            pair.inner_ce += u64::from(p.ip.as_ref().is_some_and(|ip| ip.ecn() == Ecn::Ce));
            pair.cnps += u64::from(r.bth.opcode().is_cnp());
        }
        Some(outer)
    }

    /// Whether the VTEP pair of `p`'s VXLAN or Geneve layer at `point` is known as an
    /// overlay (without counting the frame).
    pub fn is_overlay(&self, point: u16, p: &Packet<'_>) -> bool {
        let Some((src, dst, _)) = layer(p, PcpTag::Outer) else { return false };
        let (a, b) = if src <= dst { (src, dst) } else { (dst, src) };
        self.pairs.get(&(point, a, b)).is_some_and(|x| x.overlay)
    }

    /// The VTEP pair of `p` at `point` had frames read as a mirror's counted at the point
    /// of the sessions beyond the cap (crate::mirror).
    pub(crate) fn mark_overflow(&mut self, point: u16, p: &Packet<'_>) {
        let Some((src, dst, _)) = layer(p, PcpTag::Outer) else { return };
        let (a, b) = if src <= dst { (src, dst) } else { (dst, src) };
        if let Some(x) = self.pairs.get_mut(&(point, a, b)) {
            x.overflow = true;
        }
    }

    /// Whether [`Overlay::mark_overflow`] marked the VTEP pair of `p` at `point`.
    pub(crate) fn overflowed(&self, point: u16, p: &Packet<'_>) -> bool {
        let Some((src, dst, _)) = layer(p, PcpTag::Outer) else { return false };
        let (a, b) = if src <= dst { (src, dst) } else { (dst, src) };
        self.pairs.get(&(point, a, b)).is_some_and(|x| x.overflow)
    }

    /// The overlay's VTEP pairs, by point and address.
    pub fn report(&self) -> Vec<VtepPairReport> {
        let mut v: Vec<VtepPairReport> = self
            .pairs
            .iter()
            .filter(|(_, x)| x.overlay)
            .map(|(&(point, a, b), x)| VtepPairReport {
                point,
                vtep_a: a.to_string(),
                vtep_b: b.to_string(),
                frames_ab: x.frames[0],
                frames_ba: x.frames[1],
                roce: x.roce,
                outer_dscp: (0..64u8).filter(|d| x.outer_dscp & (1 << d) != 0).collect(),
                outer_ce: x.outer_ce,
                inner_ce: x.inner_ce,
                cnps: x.cnps,
            })
            .collect();
        v.sort_by(|x, y| (x.point, &x.vtep_a, &x.vtep_b).cmp(&(y.point, &y.vtep_a, &y.vtep_b)));
        v
    }

    /// Frames of VTEP pairs beyond [`MAX_PAIRS`], read as mirrors.
    pub fn untracked(&self) -> u64 {
        self.untracked
    }
}
