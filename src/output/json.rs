//! NDJSON: one object per frame. The schema is documented in `docs/decode-json.md`; the
//! names here are that schema, so change both together.

use super::{mac, Frame};
use rocescope_decoder::tunnel::{Encap, MplsPayload};
use rocescope_decoder::{Ip, Link, MacControl, Tunnel};
use serde::{Serialize, Serializer};

/// The version of this document's schema: it changes only when a key is removed or renamed
/// or changes its type or meaning; keys are added without a change (docs/decode-json.md).
pub const SCHEMA_VERSION: u32 = 1;

/// A 64-bit value also written as a hex string (`"0x00007f0000001000"`): JSON tools that
/// hold numbers as doubles (jq 1.6, JavaScript) round integers above 2^53.
#[derive(Clone, Copy)]
struct Hex64(u64);

impl Serialize for Hex64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:#018x}", self.0))
    }
}

#[derive(Serialize)]
struct Obj {
    schema_version: u32,
    frame: u64,
    ts_ns: i64,
    caplen: u32,
    len: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tunnel: Vec<TunnelJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel_undecoded: Option<Undecoded>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eth: Option<Eth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sll: Option<Sll>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    vlan: Vec<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<IpJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udp: Option<Udp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grh: Option<Grh>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bth: Option<Bth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dceth: Option<DcEth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rdeth: Option<Rdeth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deth: Option<Deth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    xrceth: Option<XrcEth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    feth: Option<Feth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reth: Option<Reth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    atomiceth: Option<AtomicEth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aeth: Option<Aeth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    atomicacketh: Option<AtomicAckEth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    immdt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ieth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cnp: Option<Cnp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_len: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icrc: Option<Icrc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pfc: Option<Pfc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pause: Option<Pause>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// One tunnel layer: the outer headers that carried it, then its encapsulation.
#[derive(Serialize)]
struct TunnelJ {
    kind: &'static str,
    name: &'static str,
    offset: usize,
    inner_offset: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    eth: Option<Eth>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    vlan: Vec<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<IpJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udp: Option<Udp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gre: Option<GreJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    erspan: Option<ErspanJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vni: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    geneve: Option<GeneveJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mpls: Option<MplsJ>,
}
#[derive(Serialize)]
struct GreJ {
    flags: u16,
    protocol: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    checksum: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u32>,
}
#[derive(Serialize)]
struct ErspanJ {
    version: u8,
    session_id: u16,
    vlan: u16,
    cos: u8,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    en: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bso: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    granularity: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sgt: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ft: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hw_id: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    direction: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    platform: Option<PlatformJ>,
}
#[derive(Serialize)]
struct PlatformJ {
    id: u8,
    info: u64,
    info_hex: Hex64,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp_high: Option<u32>,
}
#[derive(Serialize)]
struct GeneveJ {
    version: u8,
    oam: bool,
    critical: bool,
    protocol: u16,
    options_len: usize,
}
#[derive(Serialize)]
struct MplsJ {
    labels: Vec<MplsLabelJ>,
    #[serde(skip_serializing_if = "Option::is_none")]
    control_word: Option<ControlWordJ>,
    payload: &'static str,
}
#[derive(Serialize)]
struct MplsLabelJ {
    label: u32,
    tc: u8,
    s: bool,
    ttl: u8,
}
#[derive(Serialize)]
struct ControlWordJ {
    flags: u8,
    frg: u8,
    length: u8,
    seq: u16,
}
#[derive(Serialize)]
struct Undecoded {
    reason: String,
    offset: usize,
}

fn ip_j(ip: &Ip<'_>, fragment: bool) -> IpJ {
    IpJ {
        version: ip.version(),
        src: ip.src().to_string(),
        dst: ip.dst().to_string(),
        dscp: ip.dscp(),
        ecn: ip.ecn() as u8,
        ttl: ip.ttl(),
        id: (ip.version() == 4).then(|| ip.ident()).and_then(|i| u16::try_from(i).ok()),
        len: ip.len_field(),
        fragment,
    }
}

fn tunnel_j(t: &Tunnel<'_>) -> TunnelJ {
    let kind = t.kind();
    let mut j = TunnelJ {
        kind: kind.key(),
        name: kind.name(),
        offset: t.offset,
        inner_offset: t.inner_offset,
        eth: match &t.link {
            Link::Ethernet(e) => {
                Some(Eth { src: mac(&e.src()), dst: mac(&e.dst()), ethertype: e.ethertype() })
            }
            _ => None,
        },
        vlan: t
            .vlans
            .as_slice()
            .iter()
            .map(|v| Vlan { id: v.vid, pcp: v.pcp, dei: v.dei, tpid: v.tpid })
            .collect(),
        ip: t.ip.as_ref().map(|ip| ip_j(ip, false)),
        udp: t.udp.as_ref().map(|u| Udp {
            sport: u.source_port(),
            dport: u.destination_port(),
            len: u.length(),
        }),
        gre: None,
        erspan: None,
        vni: t.vni(),
        geneve: None,
        mpls: None,
    };
    let gre_j = |g: &rocescope_decoder::tunnel::Gre<'_>| GreJ {
        flags: g.flags(),
        protocol: g.protocol().0,
        checksum: g.checksum(),
        key: g.key(),
        seq: g.seq(),
    };
    match t.encap {
        Encap::ErspanI { gre } | Encap::Gre { gre } => j.gre = Some(gre_j(&gre)),
        Encap::ErspanII { gre, erspan } => {
            j.gre = Some(gre_j(&gre));
            j.erspan = Some(ErspanJ {
                version: erspan.version(),
                session_id: erspan.session_id(),
                vlan: erspan.vlan(),
                cos: erspan.cos(),
                truncated: erspan.truncated(),
                en: Some(erspan.encap()),
                index: Some(erspan.index()),
                bso: None,
                timestamp: None,
                granularity: None,
                sgt: None,
                p: None,
                ft: None,
                hw_id: None,
                direction: None,
                platform: None,
            });
        }
        Encap::ErspanIII { gre, erspan, platform } => {
            j.gre = Some(gre_j(&gre));
            j.erspan = Some(ErspanJ {
                version: erspan.version(),
                session_id: erspan.session_id(),
                vlan: erspan.vlan(),
                cos: erspan.cos(),
                truncated: erspan.truncated(),
                en: None,
                index: None,
                bso: Some(erspan.bso()),
                timestamp: Some(erspan.timestamp()),
                granularity: Some(erspan.granularity().name()),
                sgt: Some(erspan.sgt()),
                p: Some(erspan.p()),
                ft: Some(erspan.frame_type()),
                hw_id: Some(erspan.hw_id()),
                direction: Some(if erspan.direction() { "egress" } else { "ingress" }),
                platform: platform.map(|p| PlatformJ {
                    id: p.platform_id(),
                    info: p.info(),
                    info_hex: Hex64(p.info()),
                    timestamp_high: p.timestamp_high(),
                }),
            });
        }
        Encap::Vxlan(_) => {}
        Encap::Geneve(g) => {
            j.geneve = Some(GeneveJ {
                version: g.version(),
                oam: g.oam(),
                critical: g.critical(),
                protocol: g.protocol().0,
                options_len: g.options().len(),
            })
        }
        Encap::Mpls { labels, control_word, payload } => {
            j.mpls = Some(MplsJ {
                labels: labels
                    .iter()
                    .map(|l| MplsLabelJ { label: l.label(), tc: l.tc(), s: l.bottom(), ttl: l.ttl() })
                    .collect(),
                control_word: control_word.map(|c| ControlWordJ {
                    flags: c.flags(),
                    frg: c.frg(),
                    length: c.length(),
                    seq: c.seq(),
                }),
                payload: match payload {
                    MplsPayload::Ipv4 => "ipv4",
                    MplsPayload::Ipv6 => "ipv6",
                    MplsPayload::Ethernet => "ethernet",
                },
            })
        }
    }
    j
}

#[derive(Serialize)]
struct Eth {
    src: String,
    dst: String,
    ethertype: u16,
}
#[derive(Serialize)]
struct Sll {
    version: u8,
    protocol: u16,
    packet_type: u16,
}
#[derive(Serialize)]
struct Vlan {
    id: u16,
    pcp: u8,
    dei: bool,
    tpid: u16,
}
#[derive(Serialize)]
struct IpJ {
    version: u8,
    src: String,
    dst: String,
    dscp: u8,
    ecn: u8,
    ttl: u8,
    /// IPv4 identification (Wireshark's `ip.id`); none for IPv6.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u16>,
    len: u16,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    fragment: bool,
}
#[derive(Serialize)]
struct Udp {
    sport: u16,
    dport: u16,
    len: u16,
}
#[derive(Serialize)]
struct Grh {
    tclass: u8,
    flow_label: u32,
    paylen: u16,
    nxthdr: u8,
    hoplmt: u8,
    sgid: String,
    dgid: String,
}
#[derive(Serialize)]
struct Bth {
    opcode: u8,
    opcode_name: &'static str,
    se: bool,
    m: bool,
    pad: u8,
    tver: u8,
    pkey: u16,
    fecn: bool,
    becn: bool,
    resv6: u8,
    dqpn: u32,
    ackreq: bool,
    resv7: u8,
    psn: u32,
}
#[derive(Serialize)]
struct DcEth {
    value: u64,
    value_hex: Hex64,
}
#[derive(Serialize)]
struct Rdeth {
    eecn: u32,
}
#[derive(Serialize)]
struct Deth {
    qkey: u32,
    srcqp: u32,
}
#[derive(Serialize)]
struct XrcEth {
    srqn: u32,
}
#[derive(Serialize)]
struct Feth {
    sel: u8,
    plt: u8,
}
#[derive(Serialize)]
struct Reth {
    va: u64,
    va_hex: Hex64,
    rkey: u32,
    dmalen: u32,
}
#[derive(Serialize)]
struct AtomicEth {
    va: u64,
    va_hex: Hex64,
    rkey: u32,
    swap: u64,
    swap_hex: Hex64,
    compare: u64,
    compare_hex: Hex64,
}
#[derive(Serialize)]
struct Aeth {
    syndrome: u8,
    kind: &'static str,
    value: u8,
    msn: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    nak: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rnr_timer_us: Option<u32>,
}
#[derive(Serialize)]
struct AtomicAckEth {
    orig: u64,
    orig_hex: Hex64,
}
#[derive(Serialize)]
struct Cnp {}
#[derive(Serialize)]
struct Icrc {
    value: Option<u32>,
    status: &'static str,
}
#[derive(Serialize)]
struct Pfc {
    enable: u16,
    quanta: [u16; 8],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    bad_dst: bool,
}
#[derive(Serialize)]
struct Pause {
    quanta: u16,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    bad_dst: bool,
}

/// Append the JSON object for `f` to `out` (no newline).
pub fn write(f: &Frame<'_>, out: &mut String) {
    let p = f.packet;
    let mut o = Obj {
        schema_version: SCHEMA_VERSION,
        frame: f.number,
        ts_ns: f.record.ts_ns,
        caplen: f.record.caplen,
        len: f.record.len,
        tunnel: p.tunnels.iter().map(tunnel_j).collect(),
        tunnel_undecoded: p
            .tunnel_undecoded
            .map(|u| Undecoded { reason: u.reason.to_string(), offset: u.offset }),
        eth: None,
        sll: None,
        vlan: p
            .vlans
            .as_slice()
            .iter()
            .map(|t| Vlan { id: t.vid, pcp: t.pcp, dei: t.dei, tpid: t.tpid })
            .collect(),
        ip: p.ip.as_ref().map(|ip| ip_j(ip, p.ip_fragment)),
        udp: p.udp.as_ref().map(|u| Udp {
            sport: u.source_port(),
            dport: u.destination_port(),
            len: u.length(),
        }),
        grh: None,
        bth: None,
        dceth: None,
        rdeth: None,
        deth: None,
        xrceth: None,
        feth: None,
        reth: None,
        atomiceth: None,
        aeth: None,
        atomicacketh: None,
        immdt: None,
        ieth: None,
        cnp: None,
        payload_len: None,
        icrc: None,
        pfc: None,
        pause: None,
        error: p.error.map(|e| e.to_string()),
    };
    match &p.link {
        rocescope_decoder::Link::Ethernet(e) => {
            o.eth = Some(Eth { src: mac(&e.src()), dst: mac(&e.dst()), ethertype: e.ethertype() })
        }
        rocescope_decoder::Link::Sll(s) => {
            o.sll = Some(Sll { version: 1, protocol: s.protocol(), packet_type: s.packet_type() })
        }
        rocescope_decoder::Link::Sll2(s) => {
            o.sll = Some(Sll { version: 2, protocol: s.protocol(), packet_type: u16::from(s.packet_type()) })
        }
        _ => {}
    }
    if let Some(r) = &p.roce {
        let b = r.bth;
        o.grh = r.grh.map(|g| Grh {
            tclass: g.tclass(),
            flow_label: g.flow_label(),
            paylen: g.paylen(),
            nxthdr: g.nxthdr(),
            hoplmt: g.hoplmt(),
            sgid: g.sgid().to_string(),
            dgid: g.dgid().to_string(),
        });
        o.bth = Some(Bth {
            opcode: b.opcode().0,
            opcode_name: b.opcode().name(f.opts.opcode),
            se: b.se(),
            m: b.migreq(),
            pad: b.pad_count(),
            tver: b.tver(),
            pkey: b.pkey(),
            fecn: b.fecn(),
            becn: b.becn(),
            resv6: b.resv6(),
            dqpn: b.dest_qp(),
            ackreq: b.ack_req(),
            resv7: b.resv7(),
            psn: b.psn(),
        });
        let e = &r.ext;
        o.dceth = e.dceth.map(|h| DcEth { value: h.value(), value_hex: Hex64(h.value()) });
        o.rdeth = e.rdeth.map(|h| Rdeth { eecn: h.eecn() });
        o.deth = e.deth.map(|h| Deth { qkey: h.qkey(), srcqp: h.src_qp() });
        o.xrceth = e.xrceth.map(|h| XrcEth { srqn: h.srqn() });
        o.feth = e.feth.map(|h| Feth { sel: h.sel(), plt: h.plt() });
        o.reth =
            e.reth.map(|h| Reth { va: h.va(), va_hex: Hex64(h.va()), rkey: h.rkey(), dmalen: h.dma_len() });
        o.atomiceth = e.atomiceth.map(|h| AtomicEth {
            va: h.va(),
            va_hex: Hex64(h.va()),
            rkey: h.rkey(),
            swap: h.swap(),
            swap_hex: Hex64(h.swap()),
            compare: h.compare(),
            compare_hex: Hex64(h.compare()),
        });
        o.aeth = e.aeth.map(|h| {
            let a = h.repr();
            Aeth {
                syndrome: a.syndrome,
                kind: a.kind().name(),
                value: a.value(),
                msn: a.msn,
                nak: a.nak_code().map(|c| c.name()),
                rnr_timer_us: a.rnr_timer_us(),
            }
        });
        o.atomicacketh = e.atomicacketh.map(|h| AtomicAckEth { orig: h.orig(), orig_hex: Hex64(h.orig()) });
        o.immdt = e.immdt.map(|h| h.value());
        o.ieth = e.ieth.map(|h| h.rkey());
        o.cnp = e.cnp.map(|_| Cnp {});
        o.payload_len = Some(r.payload_len);
        o.icrc = Some(Icrc { value: r.icrc.value, status: r.icrc.status.name() });
    }
    match &p.mac_control {
        Some(MacControl::Pfc(pfc)) => {
            o.pfc = Some(Pfc { enable: pfc.enable_vector, quanta: pfc.quanta, bad_dst: pfc.bad_dst })
        }
        Some(MacControl::Pause(pause)) => {
            o.pause = Some(Pause { quanta: pause.quanta, bad_dst: pause.bad_dst })
        }
        _ => {}
    }
    match super::exact::to_vec(&o) {
        Ok(s) => out.push_str(&String::from_utf8_lossy(&s)),
        Err(e) => out.push_str(&format!("{{\"frame\":{},\"error\":\"json: {e}\"}}", f.number)),
    }
}
