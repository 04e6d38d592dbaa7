//! The field names `decode -Y` and `decode -e` share: one table, [`FIELD_NAMES`], gives each
//! field its Wireshark name, its JSON path and the display filter's short name, and what the
//! display filter reads under the Wireshark name. `-e` finds its JSON path there and `-Y` its
//! meaning, so a name one of them takes the other takes too (the tests check every entry
//! both ways, and `tests/tshark_diff.rs` compares the Wireshark names with tshark).

/// Which end of a frame an address field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Either end (`ip.addr`, `eth.addr`, `ip`): Wireshark's two occurrences of one field.
    Either,
    /// The source.
    Src,
    /// The destination.
    Dst,
}

/// Which IP header an address field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// IPv4 or IPv6, and for RoCEv1 the GRH's GIDs (the short names `ip`, `src`, `dst`: the
    /// addresses the analyzer keys flows by).
    Any,
    /// The IPv4 header only (Wireshark's `ip.*`).
    V4,
    /// The IPv6 header only (Wireshark's `ipv6.*`: not a RoCEv1 GRH).
    V6,
}

/// A packet's numeric fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    Qp,
    Psn,
    Opcode,
    /// DSCP of IPv4, IPv6 or the GRH.
    Dscp,
    /// ECN of IPv4, IPv6 or the GRH.
    Ecn,
    Dscp4,
    Dscp6,
    Ecn4,
    Ecn6,
    /// IPv4 TTL.
    Ttl4,
    /// IPv6 hop limit.
    Hlim6,
    /// IPv4 identification.
    IpId,
    /// PCP of the innermost VLAN tag.
    Pcp,
    /// VLAN ID of every tag (several values).
    Vlan,
    /// Length on the wire.
    Len,
    /// Length as captured.
    CapLen,
    Sport,
    Dport,
    Syndrome,
    Msn,
    Pkey,
    /// BTH bits, 0 or 1.
    Fecn,
    Becn,
    AckReq,
    /// The RETH's (or, as tshark shows it, the AtomicETH's) address, key; the RETH's length.
    RethVa,
    RethRkey,
    RethDmaLen,
    /// The ICRC on the wire, read big-endian as tshark does.
    Icrc,
    /// Frame number and seconds since the first frame (given by the caller).
    Frame,
    Time,
}

/// What a packet field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A number.
    Num(Num),
    /// The Ethernet source, destination or either.
    Mac(Side),
    /// An IP address.
    Ip(Side, Family),
}

/// One field under its names: Wireshark's, the JSON output's (`decode -e`, docs/decode-json.md)
/// and the display filter's short one. `-Y` and `-e` take any of them (docs/decode.md has the
/// table); an empty name is one the field does not have there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldName {
    /// Wireshark's display filter name: in `-Y` it means what it means in Wireshark (`ip.src`
    /// reads IPv4 headers only, `ip.addr` either end).
    pub wireshark: &'static str,
    /// The dotted JSON path (`-e`); two, comma-separated, for a field of both ends
    /// (`eth.addr`, `ip.addr`), in the order tshark prints them.
    pub json: &'static str,
    /// The display filter's short name for the field (a field, or a word for a flag); it may
    /// read more than the Wireshark name (`src`: IPv4, IPv6 or a RoCEv1 GRH). Empty for none.
    pub short: &'static str,
    /// What `-Y` reads under the Wireshark name.
    pub(crate) key: Key,
}

const fn name(wireshark: &'static str, json: &'static str, short: &'static str, key: Key) -> FieldName {
    FieldName { wireshark, json, short, key }
}

use Family::{V4, V6};
use Key::{Ip, Mac};
use Side::{Dst, Either, Src};

/// Every field known under more than one name.
pub const FIELD_NAMES: &[FieldName] = &[
    name("frame.number", "frame", "frame", Key::Num(Num::Frame)),
    name("frame.time_relative", "time_relative", "time", Key::Num(Num::Time)),
    name("frame.len", "len", "len", Key::Num(Num::Len)),
    name("frame.cap_len", "caplen", "", Key::Num(Num::CapLen)),
    name("eth.src", "eth.src", "", Mac(Src)),
    name("eth.dst", "eth.dst", "", Mac(Dst)),
    name("eth.addr", "eth.dst,eth.src", "", Mac(Either)),
    name("vlan.id", "vlan.id", "vlan", Key::Num(Num::Vlan)),
    name("vlan.priority", "vlan.pcp", "pcp", Key::Num(Num::Pcp)),
    name("ip.src", "ip.src", "src", Ip(Src, V4)),
    name("ip.dst", "ip.dst", "dst", Ip(Dst, V4)),
    name("ip.addr", "ip.src,ip.dst", "ip", Ip(Either, V4)),
    name("ipv6.src", "ip.src", "src", Ip(Src, V6)),
    name("ipv6.dst", "ip.dst", "dst", Ip(Dst, V6)),
    name("ipv6.addr", "ip.src,ip.dst", "ip", Ip(Either, V6)),
    name("", "ip.dscp", "dscp", Key::Num(Num::Dscp)),
    name("", "ip.ecn", "ecn", Key::Num(Num::Ecn)),
    name("ip.dsfield.dscp", "ip.dscp", "dscp4", Key::Num(Num::Dscp4)),
    name("ip.dsfield.ecn", "ip.ecn", "ecn4", Key::Num(Num::Ecn4)),
    name("ipv6.tclass.dscp", "ip.dscp", "dscp6", Key::Num(Num::Dscp6)),
    name("ipv6.tclass.ecn", "ip.ecn", "ecn6", Key::Num(Num::Ecn6)),
    name("ip.ttl", "ip.ttl", "", Key::Num(Num::Ttl4)),
    name("ipv6.hlim", "ip.ttl", "", Key::Num(Num::Hlim6)),
    name("ip.id", "ip.id", "", Key::Num(Num::IpId)),
    name("udp.srcport", "udp.sport", "sport", Key::Num(Num::Sport)),
    name("udp.dstport", "udp.dport", "dport", Key::Num(Num::Dport)),
    name("infiniband.bth.opcode", "bth.opcode", "opcode", Key::Num(Num::Opcode)),
    name("infiniband.bth.destqp", "bth.dqpn", "qp", Key::Num(Num::Qp)),
    name("infiniband.bth.psn", "bth.psn", "psn", Key::Num(Num::Psn)),
    name("infiniband.bth.p_key", "bth.pkey", "", Key::Num(Num::Pkey)),
    name("infiniband.bth.fecn", "bth.fecn", "fecn", Key::Num(Num::Fecn)),
    name("infiniband.bth.becn", "bth.becn", "becn", Key::Num(Num::Becn)),
    name("infiniband.bth.a", "bth.ackreq", "ackreq", Key::Num(Num::AckReq)),
    name("infiniband.aeth.syndrome", "aeth.syndrome", "syndrome", Key::Num(Num::Syndrome)),
    name("infiniband.aeth.msn", "aeth.msn", "", Key::Num(Num::Msn)),
    name("infiniband.reth.va", "reth.va", "", Key::Num(Num::RethVa)),
    name("infiniband.reth.r_key", "reth.rkey", "", Key::Num(Num::RethRkey)),
    name("infiniband.reth.dmalen", "reth.dmalen", "", Key::Num(Num::RethDmaLen)),
    name("infiniband.invariant.crc", "icrc.value", "", Key::Num(Num::Icrc)),
];

/// Wireshark's names `-Y` and `-e` take, in the table's order.
pub fn wireshark_names() -> impl Iterator<Item = &'static str> {
    FIELD_NAMES.iter().map(|f| f.wireshark).filter(|w| !w.is_empty())
}

/// The table's entry for a Wireshark name.
pub(crate) fn by_wireshark(name: &str) -> Option<&'static FieldName> {
    FIELD_NAMES.iter().find(|f| !f.wireshark.is_empty() && f.wireshark == name)
}

/// The display filter's name for `name` given under another (Wireshark's or the JSON's), if
/// it has one.
pub fn short_name(name: &str) -> Option<&'static str> {
    FIELD_NAMES
        .iter()
        .find(|f| !f.short.is_empty() && ((!f.wireshark.is_empty() && f.wireshark == name) || f.json == name))
        .map(|f| f.short)
}

/// The JSON path (`-e`) for `name` given under another (Wireshark's or the filter's), if it
/// has one: two comma-separated for a field of both ends (`ip.addr`, `ip`).
pub fn json_name(name: &str) -> Option<&'static str> {
    FIELD_NAMES
        .iter()
        .find(|f| !f.json.is_empty() && ((!f.wireshark.is_empty() && f.wireshark == name) || f.short == name))
        .map(|f| f.json)
}

/// The packet filter's name for a field named `name` (lower-case): a Wireshark name is
/// itself (it means what Wireshark means); a JSON path is the short name, or the Wireshark
/// one for a field without a short name (`bth.pkey` is `infiniband.bth.p_key`).
pub(crate) fn packet_name(name: &str) -> Option<&'static str> {
    if let Some(f) = by_wireshark(name) {
        return Some(f.wireshark);
    }
    let f = FIELD_NAMES.iter().find(|f| f.json == name)?;
    Some(if f.short.is_empty() { f.wireshark } else { f.short }).filter(|n| !n.is_empty())
}
