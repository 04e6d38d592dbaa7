//! The packet context (`decode -Y`, `capture -Y`, the Packets screen's `/`): its terms, how
//! a name becomes one, and how one reads a decoded frame. Wireshark's names mean here what
//! they mean in Wireshark (the table in [`super::names`]); the short names are the TUI's.

use super::names::{self, Family, Key, Num, Side};
use super::value::{self, number, number_lit, Got, Item, Lit, Vals};
use super::{parse, Expr, Op, Vocab, PACKET_FIELDS, PACKET_WORDS};
use rocescope_decoder::ext::AethKind;
use rocescope_decoder::{IcrcStatus, Link, MacControl, Opcode, OpcodeOptions, Packet, RoceVersion};
use std::net::IpAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PacketWord {
    Roce,
    V1,
    V2,
    Nak,
    Rnr,
    Ack,
    Cnp,
    Ce,
    Fecn,
    Becn,
    AckReq,
    Icrc,
    Malformed,
    Pfc,
    Pause,
    /// Wireshark's `infiniband`: RoCE the dissector ran on, well-formed or not.
    Infiniband,
}

/// The opcodes whose names contain a pattern, as a 256-bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OpcodeSet([u64; 4]);

impl OpcodeSet {
    fn named(pattern: &str, opts: OpcodeOptions) -> OpcodeSet {
        let mut set = [0u64; 4];
        for b in 0..=255u8 {
            if Opcode(b).name(opts).to_ascii_lowercase().contains(pattern) {
                set[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        }
        OpcodeSet(set)
    }

    fn contains(self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    fn is_empty(self) -> bool {
        self.0 == [0; 4]
    }
}

#[derive(Clone, Debug, PartialEq)]
enum PacketTerm {
    /// A comparison: `!=` is "the frame has the field and no value equals", the other
    /// operators "some value compares true" (Wireshark's `==`/`!=`).
    Cmp(Key, Op, Lit),
    /// `field in {...}`: some value is a member.
    In(Key, Vec<Item>),
    /// A Wireshark field named alone: the frame has it.
    Has(Key),
    /// `opcode=NAME` (or `!=`): the pattern as typed (lower-case, spaces for `_`) and the
    /// opcodes it names.
    OpcodeName(String, Op, OpcodeSet),
    Word(PacketWord),
}

/// What a packet field reads, under a short name or a Wireshark one ([`names::FIELD_NAMES`]).
fn key_of(f: &str) -> Option<Key> {
    if let Some(e) = names::by_wireshark(f) {
        return Some(e.key);
    }
    let n = |n: Num| Some(Key::Num(n));
    match f {
        "ip" => Some(Key::Ip(Side::Either, Family::Any)),
        "src" => Some(Key::Ip(Side::Src, Family::Any)),
        "dst" => Some(Key::Ip(Side::Dst, Family::Any)),
        "qp" => n(Num::Qp),
        "psn" => n(Num::Psn),
        "opcode" => n(Num::Opcode),
        "dscp" => n(Num::Dscp),
        "ecn" => n(Num::Ecn),
        "dscp4" => n(Num::Dscp4),
        "ecn4" => n(Num::Ecn4),
        "dscp6" => n(Num::Dscp6),
        "ecn6" => n(Num::Ecn6),
        "pcp" => n(Num::Pcp),
        "vlan" => n(Num::Vlan),
        "len" => n(Num::Len),
        "sport" => n(Num::Sport),
        "dport" => n(Num::Dport),
        "syndrome" => n(Num::Syndrome),
        "frame" => n(Num::Frame),
        "time" => n(Num::Time),
        _ => None,
    }
}

/// The value typed for field `f` (which reads `key`).
fn literal(f: &str, key: Key, v: &str) -> Result<Lit, String> {
    match key {
        Key::Num(Num::Ecn | Num::Ecn4 | Num::Ecn6) => {
            let n = match v.to_ascii_lowercase().as_str() {
                "not-ect" | "notect" | "not_ect" => 0.0,
                "ect1" | "ect(1)" => 1.0,
                "ect0" | "ect(0)" => 2.0,
                "ce" => 3.0,
                _ => number(v)
                    .ok_or_else(|| format!("not an ECN value: {v:?} (0-3, or not-ect, ect1, ect0, ce)"))?,
            };
            Ok(Lit::num(n))
        }
        Key::Num(_) => number_lit(v).ok_or_else(|| format!("not a number: {v:?}")),
        Key::Mac(_) => value::mac(v)
            .map(Lit::Mac)
            .ok_or_else(|| format!("not a MAC address: {v:?} (as 01:80:c2:00:00:01)")),
        Key::Ip(_, family) => {
            let (a, len) = value::net(v)?;
            match (family, a) {
                (Family::V4, IpAddr::V6(_)) => {
                    Err(format!("{f} takes IPv4 addresses: {v:?} is IPv6 (ipv6.*)"))
                }
                (Family::V6, IpAddr::V4(_)) => Err(format!("{f} takes IPv6 addresses: {v:?} is IPv4 (ip.*)")),
                _ => Ok(Lit::Net(a, len)),
            }
        }
    }
}

/// Whether `lit` is a subnet (an address with a shorter prefix than its whole length).
fn is_subnet(lit: &Lit) -> bool {
    matches!(lit, Lit::Net(a, len) if *len < if a.is_ipv4() { 32 } else { 128 })
}

/// The term for `opcode=NAME` (or `!=`).
fn opcode_name(f: &str, op: Op, v: &str) -> Result<PacketTerm, String> {
    if !matches!(op, Op::Eq | Op::Ne) {
        return Err(format!("{f}{}{v} compares a name: use = or != (or a number)", op.text()));
    }
    let pattern = v.to_ascii_lowercase().replace(['_', '-'], " ");
    let set = OpcodeSet::named(&pattern, OpcodeOptions::default());
    // Named under either reading of 0x40-0x5F: `rd_ack` is fine for a decode that is told
    // `--no-dc` later (`with_opcode_options`).
    if set.is_empty() && OpcodeSet::named(&pattern, OpcodeOptions { dc: false }).is_empty() {
        return Err(format!(
            "no opcode name contains {v:?} (try a number such as 0x0a, or part of a name: send, write_only, read_request, acknowledge, cnp)"
        ));
    }
    Ok(PacketTerm::OpcodeName(pattern, op, set))
}

impl Vocab for PacketTerm {
    const WHAT: &'static str = "packet";
    const FIELDS: &'static [&'static str] = PACKET_FIELDS;
    const WORDS: &'static [&'static str] = PACKET_WORDS;
    const EXAMPLE: &'static str = "qp=0x12, ip=10.0.0.3, psn>100, opcode=read_request, nak, ce, pfc";

    fn canonical(name: &str) -> Option<&'static str> {
        names::packet_name(name)
    }

    fn is_field(f: &str) -> bool {
        key_of(f).is_some()
    }

    fn more_names() -> String {
        let ws: Vec<&str> = names::wireshark_names().collect();
        format!("; Wireshark's names: {}, infiniband", ws.join(", "))
    }

    fn word(w: &str) -> Option<Self> {
        Some(PacketTerm::Word(match w {
            "roce" => PacketWord::Roce,
            "v1" => PacketWord::V1,
            "v2" => PacketWord::V2,
            "nak" => PacketWord::Nak,
            "rnr" => PacketWord::Rnr,
            "ack" => PacketWord::Ack,
            "cnp" => PacketWord::Cnp,
            "ce" => PacketWord::Ce,
            "fecn" => PacketWord::Fecn,
            "becn" => PacketWord::Becn,
            "ackreq" => PacketWord::AckReq,
            "icrc" => PacketWord::Icrc,
            "malformed" => PacketWord::Malformed,
            "pfc" => PacketWord::Pfc,
            "pause" => PacketWord::Pause,
            "infiniband" => PacketWord::Infiniband,
            _ => return None,
        }))
    }

    fn field(f: &str, op: Op, v: &str) -> Result<Self, String> {
        let key = key_of(f).ok_or_else(|| format!("unknown field {f:?}"))?;
        if key == Key::Num(Num::Opcode) && number(v).is_none() {
            return opcode_name(f, op, v);
        }
        let lit = literal(f, key, v)?;
        if is_subnet(&lit) && !matches!(op, Op::Eq | Op::Ne) {
            return Err(format!("{f}{}{v}: a subnet takes == or != (or in {{...}})", op.text()));
        }
        Ok(PacketTerm::Cmp(key, op, lit))
    }

    fn members(f: &str, items: &[(&str, Option<&str>)]) -> Result<Self, String> {
        let key = key_of(f).ok_or_else(|| format!("unknown field {f:?}"))?;
        let mut set = Vec::with_capacity(items.len());
        for (lo, hi) in items {
            let lo_lit = literal(f, key, lo)?;
            set.push(match hi {
                None => Item::One(lo_lit),
                Some(hi) => {
                    let hi_lit = literal(f, key, hi)?;
                    if is_subnet(&lo_lit) || is_subnet(&hi_lit) {
                        return Err(format!("{f} in {{{lo}..{hi}}}: a range is of addresses, not subnets"));
                    }
                    Item::Range(lo_lit, hi_lit)
                }
            });
        }
        Ok(PacketTerm::In(key, set))
    }

    fn present(f: &str) -> Option<Self> {
        names::by_wireshark(f).map(|e| PacketTerm::Has(e.key))
    }
}

/// Source and destination of `family`: for [`Family::Any`] the IP header's, or for RoCEv1
/// the GRH's GIDs (as the analyzer keys flows).
fn addresses(p: &Packet<'_>, family: Family) -> Option<(IpAddr, IpAddr)> {
    if let Some(ip) = &p.ip {
        let ok = match family {
            Family::Any => true,
            Family::V4 => ip.version() == 4,
            Family::V6 => ip.version() == 6,
        };
        return ok.then(|| (ip.src(), ip.dst()));
    }
    if family != Family::Any {
        return None;
    }
    let g = p.roce.as_ref()?.grh?;
    Some((IpAddr::V6(g.sgid()), IpAddr::V6(g.dgid())))
}

/// The TOS / traffic-class byte: the IP header's, or for RoCEv1 the GRH's.
fn traffic_class(p: &Packet<'_>) -> Option<u8> {
    match &p.ip {
        Some(ip) => Some(ip.tos()),
        None => p.roce.as_ref()?.grh.map(|g| g.tclass()),
    }
}

/// Where a frame sits in its capture, for `frame` and `time` terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePlace {
    /// 1-based frame number.
    pub number: u64,
    /// Time since the capture's first frame, ns.
    pub rel_ns: i64,
}

/// One end, or both, as values.
fn ends(side: Side, src: Got, dst: Got) -> Vals {
    let mut v = Vals::NONE;
    match side {
        Side::Src => v.extend([src]),
        Side::Dst => v.extend([dst]),
        Side::Either => v.extend([src, dst]),
    }
    v
}

/// A frame's values for a numeric field.
fn numbers(n: Num, p: &Packet<'_>, len: u64, place: Option<FramePlace>) -> Vals {
    let roce = p.roce.as_ref();
    let int = |v: Option<u64>| Vals::of(v.map(Got::Int));
    let ip_of = |version: u8| p.ip.as_ref().filter(|ip| ip.version() == version);
    match n {
        Num::Vlan => {
            let mut v = Vals::NONE;
            v.extend(p.vlans.as_slice().iter().map(|t| Got::Int(u64::from(t.vid))));
            v
        }
        Num::Qp => int(roce.map(|r| u64::from(r.bth.dest_qp()))),
        Num::Psn => int(roce.map(|r| u64::from(r.bth.psn()))),
        Num::Opcode => int(roce.map(|r| u64::from(r.bth.opcode().0))),
        Num::Pkey => int(roce.map(|r| u64::from(r.bth.pkey()))),
        Num::Fecn => int(roce.map(|r| u64::from(r.bth.fecn()))),
        Num::Becn => int(roce.map(|r| u64::from(r.bth.becn()))),
        Num::AckReq => int(roce.map(|r| u64::from(r.bth.ack_req()))),
        Num::Dscp => int(traffic_class(p).map(|t| u64::from(t >> 2))),
        Num::Ecn => int(traffic_class(p).map(|t| u64::from(t & 3))),
        Num::Dscp4 => int(ip_of(4).map(|ip| u64::from(ip.tos() >> 2))),
        Num::Ecn4 => int(ip_of(4).map(|ip| u64::from(ip.tos() & 3))),
        Num::Dscp6 => int(ip_of(6).map(|ip| u64::from(ip.tos() >> 2))),
        Num::Ecn6 => int(ip_of(6).map(|ip| u64::from(ip.tos() & 3))),
        Num::Ttl4 => int(ip_of(4).map(|ip| u64::from(ip.ttl()))),
        Num::Hlim6 => int(ip_of(6).map(|ip| u64::from(ip.ttl()))),
        Num::IpId => int(ip_of(4).map(|ip| u64::from(ip.ident()))),
        Num::Pcp => int(p.vlans.pcp().map(u64::from)),
        Num::Len => int(Some(len)),
        Num::CapLen => int(Some(p.data.len() as u64)),
        Num::Sport => int(p.udp.as_ref().map(|u| u64::from(u.source_port()))),
        Num::Dport => int(p.udp.as_ref().map(|u| u64::from(u.destination_port()))),
        Num::Syndrome => int(roce.and_then(|r| r.ext.aeth).map(|a| u64::from(a.syndrome()))),
        Num::Msn => int(roce.and_then(|r| r.ext.aeth).map(|a| u64::from(a.msn()))),
        // tshark shows an AtomicETH's address and key under the RETH's names.
        Num::RethVa => {
            int(roce.and_then(|r| r.ext.reth.map(|h| h.va()).or_else(|| r.ext.atomiceth.map(|h| h.va()))))
        }
        Num::RethRkey => int(roce.and_then(|r| {
            r.ext.reth.map(|h| u64::from(h.rkey())).or_else(|| r.ext.atomiceth.map(|h| u64::from(h.rkey())))
        })),
        Num::RethDmaLen => int(roce.and_then(|r| r.ext.reth).map(|h| u64::from(h.dma_len()))),
        // The wire's word, which tshark reads big-endian.
        Num::Icrc => int(roce.and_then(|r| r.icrc.value).map(|v| u64::from(v.swap_bytes()))),
        Num::Frame => int(place.map(|f| f.number)),
        Num::Time => Vals::of(place.map(|f| Got::Num(f.rel_ns as f64 / 1e9))),
    }
}

/// A frame's values for a field.
fn values(key: Key, p: &Packet<'_>, len: u64, place: Option<FramePlace>) -> Vals {
    match key {
        Key::Num(n) => numbers(n, p, len, place),
        Key::Mac(side) => match &p.link {
            Link::Ethernet(e) => ends(side, Got::Mac(e.src()), Got::Mac(e.dst())),
            _ => Vals::NONE,
        },
        Key::Ip(side, family) => match addresses(p, family) {
            Some((s, d)) => ends(side, Got::Ip(s), Got::Ip(d)),
            None => Vals::NONE,
        },
    }
}

fn packet_matches(t: &PacketTerm, p: &Packet<'_>, len: u64, place: Option<FramePlace>) -> bool {
    let roce = p.roce.as_ref();
    let aeth = || roce.and_then(|r| r.ext.aeth).map(|a| a.kind());
    match t {
        PacketTerm::Cmp(key, op, lit) => value::compare(&values(*key, p, len, place), *op, lit),
        PacketTerm::In(key, items) => value::member(&values(*key, p, len, place), items),
        PacketTerm::Has(key) => !values(*key, p, len, place).as_slice().is_empty(),
        PacketTerm::OpcodeName(_, op, set) => {
            roce.is_some_and(|r| set.contains(r.bth.opcode().0) == (*op == Op::Eq))
        }
        PacketTerm::Word(w) => match w {
            PacketWord::Roce => p.roce_ok().is_some(),
            PacketWord::V1 => roce.is_some_and(|r| r.version == RoceVersion::V1),
            PacketWord::V2 => roce.is_some_and(|r| r.version == RoceVersion::V2),
            PacketWord::Nak => aeth() == Some(AethKind::Nak),
            PacketWord::Rnr => aeth() == Some(AethKind::RnrNak),
            PacketWord::Ack => aeth() == Some(AethKind::Ack) && roce.is_some_and(|r| r.bth.opcode().is_ack()),
            PacketWord::Cnp => roce.is_some_and(|r| r.bth.opcode().is_cnp()),
            PacketWord::Ce => traffic_class(p).is_some_and(|t| t & 3 == 3),
            PacketWord::Fecn => roce.is_some_and(|r| r.bth.fecn()),
            PacketWord::Becn => roce.is_some_and(|r| r.bth.becn()),
            PacketWord::AckReq => roce.is_some_and(|r| r.bth.ack_req()),
            PacketWord::Icrc => roce.is_some_and(|r| r.icrc.status == IcrcStatus::Invalid),
            PacketWord::Malformed => p.is_malformed_roce(),
            PacketWord::Pfc => matches!(p.mac_control, Some(MacControl::Pfc(_))),
            PacketWord::Pause => matches!(p.mac_control, Some(MacControl::Pause(_))),
            PacketWord::Infiniband => roce.is_some() || p.is_malformed_roce(),
        },
    }
}

/// A parsed packet filter (`rocescope decode -Y`): the module documentation lists its terms.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketFilter(Expr<PacketTerm>);

impl PacketFilter {
    /// Parse `text`; an empty text is no filter. The error says what is wrong and, for an
    /// unknown name, what the packet context offers, Wireshark's names included (a
    /// connection-only name such as `gaps` or `loss` is named as such).
    pub fn parse(text: &str) -> Result<Option<PacketFilter>, String> {
        Ok(parse::<PacketTerm>(text)?.map(PacketFilter))
    }

    /// Read opcode names (`opcode=NAME`) as the decoder was told to: 0x40-0x5F are Mellanox
    /// DC by default, IBTA Reliable Datagram with `dc: false` (`--no-dc`).
    pub fn with_opcode_options(mut self, opts: OpcodeOptions) -> Self {
        self.0.for_each_term_mut(&mut |t| {
            if let PacketTerm::OpcodeName(pattern, _, set) = t {
                *set = OpcodeSet::named(pattern, opts);
            }
        });
        self
    }

    /// Whether `p` passes; `len` compares the captured length (`p.data`).
    pub fn matches(&self, p: &Packet<'_>) -> bool {
        self.matches_frame(p, p.data.len() as u64)
    }

    /// Whether `p` passes, `len` comparing `wire_len`: the frame's length on the wire (the
    /// capture record's original length), which a snap length may have cut `p.data` short of.
    pub fn matches_frame(&self, p: &Packet<'_>, wire_len: u64) -> bool {
        self.0.eval(&|t| packet_matches(t, p, wire_len, None))
    }

    /// As [`PacketFilter::matches_frame`], with the frame's number and time in its capture
    /// for `frame` and `time` terms (which match nothing without them).
    pub fn matches_at(&self, p: &Packet<'_>, wire_len: u64, place: FramePlace) -> bool {
        self.0.eval(&|t| packet_matches(t, p, wire_len, Some(place)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opcode_set(f: &PacketFilter) -> OpcodeSet {
        match &f.0 {
            Expr::Term(PacketTerm::OpcodeName(_, _, set)) => *set,
            other => panic!("not an opcode name: {other:?}"),
        }
    }

    #[test]
    fn opcode_names_follow_the_decoder_options() {
        // 0x51 is a DC Acknowledge by default and an RD one with --no-dc.
        let dc = PacketFilter::parse("opcode=dc_ack").unwrap().unwrap();
        assert!(
            opcode_set(&dc).contains(0x51) && !opcode_set(&dc).contains(0x52),
            "not DC Atomic Acknowledge"
        );
        assert!(!opcode_set(&dc).contains(0x11));
        assert!(opcode_set(&dc.with_opcode_options(OpcodeOptions { dc: false })).is_empty());
        let rd = PacketFilter::parse("opcode=rd_ack").unwrap().unwrap();
        assert!(opcode_set(&rd).is_empty(), "RD names are not the default");
        let rd = rd.with_opcode_options(OpcodeOptions { dc: false });
        assert!(opcode_set(&rd).contains(0x51) && !opcode_set(&rd).contains(0x11));
    }

    #[test]
    fn every_name_has_a_meaning() {
        for f in PACKET_FIELDS {
            assert!(key_of(f).is_some(), "{f}");
        }
        for f in names::FIELD_NAMES {
            for n in [f.wireshark, f.short] {
                assert!(n.is_empty() || key_of(n).is_some() || PACKET_WORDS.contains(&n), "{f:?}");
            }
            if !f.wireshark.is_empty() {
                assert!(
                    matches!(PacketFilter::parse(f.wireshark), Ok(Some(_))),
                    "{} alone (the frame has it)",
                    f.wireshark
                );
            }
        }
    }
}
