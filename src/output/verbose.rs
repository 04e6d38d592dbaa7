//! Every field of every header, tree-style (like `tshark -V`).

use super::{mac, rnr_ms, utc, Frame};
use rocescope_decoder::tunnel::{Encap, MplsPayload};
use rocescope_decoder::{Ip, Link, MacControl, RoceVersion, Tunnel};
use std::fmt::Write;

fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// Append the tree for `f` to `out`.
pub fn write(f: &Frame<'_>, out: &mut String) {
    let p = f.packet;
    let r = f.record;
    let _ = writeln!(
        out,
        "Frame {}: {} bytes on wire, {} bytes captured, {}, interface {}, link type {} ({})",
        f.number,
        r.len,
        r.caplen,
        utc(r.ts_ns),
        r.interface,
        r.link_type.0,
        r.link_type.name()
    );
    for (i, t) in p.tunnels.iter().enumerate() {
        tunnel(i + 1, t, out);
    }
    // A tunnel carrying IP leaves the outer link header as the packet's: shown above.
    let shown = p.tunnels.innermost().is_some_and(|t| t.link == p.link);
    match &p.link {
        _ if shown => {}
        Link::Ethernet(e) => {
            let _ = writeln!(
                out,
                "Ethernet II, Src: {}, Dst: {}, Type: 0x{:04x}",
                mac(&e.src()),
                mac(&e.dst()),
                e.ethertype()
            );
        }
        Link::Sll(s) => {
            let _ = writeln!(
                out,
                "Linux cooked capture v1, Packet type: {}, ARPHRD: {}, Protocol: 0x{:04x}",
                s.packet_type(),
                s.hatype(),
                s.protocol()
            );
        }
        Link::Sll2(s) => {
            let _ = writeln!(
                out,
                "Linux cooked capture v2, Protocol: 0x{:04x}, Interface index: {}, ARPHRD: {}, Packet type: {}",
                s.protocol(),
                s.ifindex(),
                s.hatype(),
                s.packet_type()
            );
        }
        Link::Raw => out.push_str("Raw IP\n"),
        Link::None => {}
    }
    for t in p.vlans.as_slice() {
        let _ = writeln!(
            out,
            "802.1Q Virtual LAN (TPID 0x{:04x}), PRI: {}, DEI: {}, ID: {}",
            t.tpid,
            t.pcp,
            flag(t.dei),
            t.vid
        );
    }
    if let Some(ip) = &p.ip {
        match ip {
            Ip::V4(h) => {
                let _ = writeln!(out, "Internet Protocol Version 4, Src: {}, Dst: {}", ip.src(), ip.dst());
                let _ = writeln!(out, "    Header length: {} bytes", h.slice().len());
                let _ = writeln!(out, "    DSCP: {}", ip.dscp());
                let _ = writeln!(out, "    ECN: {} ({})", ip.ecn().name(), ip.ecn() as u8);
                let _ = writeln!(out, "    Total length: {}", h.total_len());
                let _ = writeln!(out, "    Identification: 0x{:04x}", h.identification());
                let _ = writeln!(
                    out,
                    "    Flags: DF={} MF={}, Fragment offset: {}",
                    flag(h.dont_fragment()),
                    flag(h.more_fragments()),
                    h.fragments_offset().value()
                );
                let _ = writeln!(out, "    TTL: {}", h.ttl());
                let _ = writeln!(out, "    Protocol: {}", h.protocol().0);
                let _ = writeln!(out, "    Header checksum: 0x{:04x}", h.header_checksum());
            }
            Ip::V6(h) => {
                let _ = writeln!(out, "Internet Protocol Version 6, Src: {}, Dst: {}", ip.src(), ip.dst());
                let _ = writeln!(out, "    DSCP: {}", ip.dscp());
                let _ = writeln!(out, "    ECN: {} ({})", ip.ecn().name(), ip.ecn() as u8);
                let _ = writeln!(out, "    Flow label: 0x{:05x}", h.flow_label().value());
                let _ = writeln!(out, "    Payload length: {}", h.payload_length());
                let _ = writeln!(out, "    Next header: {}", h.next_header().0);
                let _ = writeln!(out, "    Hop limit: {}", h.hop_limit());
            }
        }
        if p.ip_fragment {
            out.push_str("    [Fragment: not decoded further]\n");
        }
    }
    if let Some(u) = &p.udp {
        let _ = writeln!(
            out,
            "User Datagram Protocol, Src Port: {}, Dst Port: {}, Length: {}, Checksum: 0x{:04x}",
            u.source_port(),
            u.destination_port(),
            u.length(),
            u.checksum()
        );
    }
    if let Some(roce) = &p.roce {
        let v = if roce.version == RoceVersion::V1 { "RoCEv1" } else { "RoCEv2" };
        let _ = writeln!(out, "InfiniBand ({v})");
        if let Some(g) = roce.grh {
            let _ = writeln!(out, "    Global Route Header");
            let _ = writeln!(out, "        IP version: {}", g.ipver());
            let _ = writeln!(out, "        Traffic class: 0x{:02x}", g.tclass());
            let _ = writeln!(out, "        Flow label: 0x{:05x}", g.flow_label());
            let _ = writeln!(out, "        Payload length: {}", g.paylen());
            let _ = writeln!(out, "        Next header: 0x{:02x}", g.nxthdr());
            let _ = writeln!(out, "        Hop limit: {}", g.hoplmt());
            let _ = writeln!(out, "        Source GID: {}", g.sgid());
            let _ = writeln!(out, "        Destination GID: {}", g.dgid());
        }
        let b = roce.bth;
        let _ = writeln!(out, "    Base Transport Header");
        let _ = writeln!(out, "        Opcode: 0x{:02x} ({})", b.opcode().0, b.opcode().name(f.opts.opcode));
        let _ = writeln!(out, "        Solicited event: {}", flag(b.se()));
        let _ = writeln!(out, "        MigReq: {}", flag(b.migreq()));
        let _ = writeln!(out, "        Pad count: {}", b.pad_count());
        let _ = writeln!(out, "        Header version: {}", b.tver());
        let _ = writeln!(out, "        Partition key: 0x{:04x}", b.pkey());
        let _ = writeln!(out, "        FECN: {}", flag(b.fecn()));
        let _ = writeln!(out, "        BECN: {}", flag(b.becn()));
        let _ = writeln!(out, "        Reserved (6 bits): {}", b.resv6());
        let _ = writeln!(out, "        Destination QP: 0x{:06x}", b.dest_qp());
        let _ = writeln!(out, "        Acknowledge request: {}", flag(b.ack_req()));
        let _ = writeln!(out, "        Reserved (7 bits): {}", b.resv7());
        let _ = writeln!(out, "        PSN: {}", b.psn());
        let e = &roce.ext;
        if let Some(h) = e.dceth {
            let _ = writeln!(out, "    DC extension (Mellanox)\n        Value: 0x{:016x}", h.value());
        }
        if let Some(h) = e.rdeth {
            let _ = writeln!(out, "    RDETH\n        EE context: {}", h.eecn());
        }
        if let Some(h) = e.deth {
            let _ = writeln!(
                out,
                "    DETH\n        Q_Key: 0x{:08x}\n        Source QP: 0x{:06x}",
                h.qkey(),
                h.src_qp()
            );
        }
        if let Some(h) = e.xrceth {
            let _ = writeln!(out, "    XRCETH\n        XRC SRQ: 0x{:06x}", h.srqn());
        }
        if let Some(h) = e.feth {
            let _ = writeln!(
                out,
                "    FETH\n        Selectivity level: {}\n        Placement type: {}",
                h.sel(),
                h.plt()
            );
        }
        if let Some(h) = e.reth {
            let _ = writeln!(
                out,
                "    RETH\n        Virtual address: 0x{:016x}\n        R_Key: 0x{:08x}\n        DMA length: {}",
                h.va(),
                h.rkey(),
                h.dma_len()
            );
        }
        if let Some(h) = e.atomiceth {
            let _ = writeln!(
                out,
                "    AtomicETH\n        Virtual address: 0x{:016x}\n        R_Key: 0x{:08x}\n        Swap/add data: 0x{:016x}\n        Compare data: 0x{:016x}",
                h.va(),
                h.rkey(),
                h.swap(),
                h.compare()
            );
        }
        if let Some(h) = e.aeth {
            let a = h.repr();
            let meaning = match a.kind() {
                rocescope_decoder::ext::AethKind::Ack => match a.credits() {
                    Some(c) => format!("ACK, {c} credits"),
                    None => String::from("ACK, credits not in use"),
                },
                rocescope_decoder::ext::AethKind::RnrNak => {
                    format!("RNR NAK, timer {}", rnr_ms(a.rnr_timer_us().unwrap_or(0)))
                }
                rocescope_decoder::ext::AethKind::Nak => {
                    format!("NAK, {}", a.nak_code().map(|c| c.name()).unwrap_or("?"))
                }
                rocescope_decoder::ext::AethKind::Reserved => String::from("reserved syndrome type"),
            };
            let _ = writeln!(
                out,
                "    AETH\n        Syndrome: 0x{:02x} ({meaning})\n        MSN: {}",
                a.syndrome, a.msn
            );
        }
        if let Some(h) = e.atomicacketh {
            let _ = writeln!(out, "    AtomicAckETH\n        Original remote data: 0x{:016x}", h.orig());
        }
        if let Some(h) = e.immdt {
            let _ = writeln!(out, "    ImmDt\n        Immediate data: 0x{:08x}", h.value());
        }
        if let Some(h) = e.ieth {
            let _ = writeln!(out, "    IETH\n        R_Key: 0x{:08x}", h.rkey());
        }
        if let Some(h) = e.cnp {
            let _ = writeln!(
                out,
                "    CNP\n        Reserved: 16 bytes{}",
                if h.is_zero() { "" } else { " [not zero]" }
            );
        }
        let _ = writeln!(
            out,
            "    Payload: {} bytes ({} captured){}",
            roce.payload_len,
            roce.payload.len(),
            if roce.known_opcode { "" } else { " [opaque: unknown opcode]" }
        );
        let _ = writeln!(out, "    Pad: {} bytes", roce.pad);
        match (roce.icrc.value, roce.icrc.computed) {
            (Some(v), Some(c)) => {
                let _ =
                    writeln!(out, "    ICRC: 0x{v:08x} [{}, computed 0x{c:08x}]", roce.icrc.status.name());
            }
            (Some(v), None) => {
                let _ = writeln!(out, "    ICRC: 0x{v:08x} [not checked]");
            }
            _ => {
                let _ = writeln!(out, "    ICRC: [{}]", roce.icrc.status.name());
            }
        }
    }
    match &p.mac_control {
        Some(MacControl::Pfc(pfc)) => {
            let _ = writeln!(out, "MAC Control: Priority-based Flow Control (opcode 0x0101)");
            let _ = writeln!(out, "    Class-enable vector: 0x{:04x}", pfc.enable_vector);
            for (prio, q) in pfc.quanta.iter().enumerate() {
                let en = if pfc.enabled(prio as u8) { "enabled" } else { "disabled" };
                let _ = writeln!(out, "    Priority {prio}: {q} quanta ({en})");
            }
            if pfc.bad_dst {
                out.push_str("    [Destination MAC is not 01:80:c2:00:00:01]\n");
            }
            if pfc.bad_enable_upper() {
                out.push_str("    [Upper byte of the enable vector is not zero]\n");
            }
        }
        Some(MacControl::Pause(pause)) => {
            let _ =
                writeln!(out, "MAC Control: PAUSE (opcode 0x0001)\n    Pause time: {} quanta", pause.quanta);
            if pause.bad_dst {
                out.push_str("    [Destination MAC is not 01:80:c2:00:00:01]\n");
            }
        }
        Some(MacControl::Other { opcode }) => {
            let _ = writeln!(out, "MAC Control: opcode 0x{opcode:04x}");
        }
        None => {}
    }
    if let Some(u) = &p.tunnel_undecoded {
        let _ = writeln!(out, "[Tunnel not decoded: {} at offset {}]", u.reason, u.offset);
    }
    if let Some(e) = &p.error {
        let _ = writeln!(out, "[Malformed: {e}]");
    }
}

/// One tunnel layer: its outer headers, then the encapsulation's fields.
fn tunnel(n: usize, t: &Tunnel<'_>, out: &mut String) {
    let _ = writeln!(
        out,
        "Tunnel {n}: {} (header at offset {}, inner frame at {})",
        t.kind().name(),
        t.offset,
        t.inner_offset
    );
    if let Link::Ethernet(e) = &t.link {
        let _ = writeln!(
            out,
            "    Outer Ethernet II, Src: {}, Dst: {}, Type: 0x{:04x}",
            mac(&e.src()),
            mac(&e.dst()),
            e.ethertype()
        );
    }
    for v in t.vlans.as_slice() {
        let _ = writeln!(
            out,
            "    Outer 802.1Q Virtual LAN (TPID 0x{:04x}), PRI: {}, DEI: {}, ID: {}",
            v.tpid,
            v.pcp,
            flag(v.dei),
            v.vid
        );
    }
    if let Some(ip) = &t.ip {
        let _ = writeln!(
            out,
            "    Outer Internet Protocol Version {}, Src: {}, Dst: {}, DSCP: {}, ECN: {}, TTL: {}, Protocol: {}",
            ip.version(),
            ip.src(),
            ip.dst(),
            ip.dscp(),
            ip.ecn().name(),
            ip.ttl(),
            ip.protocol()
        );
    }
    if let Some(u) = &t.udp {
        let _ = writeln!(
            out,
            "    Outer User Datagram Protocol, Src Port: {}, Dst Port: {}, Length: {}",
            u.source_port(),
            u.destination_port(),
            u.length()
        );
    }
    let gre = |g: &rocescope_decoder::tunnel::Gre<'_>, out: &mut String| {
        let _ = write!(
            out,
            "    Generic Routing Encapsulation, Flags: 0x{:04x}, Protocol: 0x{:04x}",
            g.flags(),
            g.protocol().0
        );
        if let Some(c) = g.checksum() {
            let _ = write!(out, ", Checksum: 0x{c:04x}");
        }
        if let Some(k) = g.key() {
            let _ = write!(out, ", Key: {k}");
        }
        if let Some(s) = g.seq() {
            let _ = write!(out, ", Sequence: {s}");
        }
        out.push('\n');
    };
    match t.encap {
        Encap::ErspanI { gre: g } => {
            gre(&g, out);
            out.push_str("    ERSPAN Type I (no ERSPAN header)\n");
        }
        Encap::Gre { gre: g } => gre(&g, out),
        Encap::ErspanII { gre: g, erspan: e } => {
            gre(&g, out);
            let _ = writeln!(out, "    ERSPAN Type II");
            let _ = writeln!(out, "        Version: {}", e.version());
            let _ = writeln!(out, "        VLAN: {}", e.vlan());
            let _ = writeln!(out, "        COS: {}", e.cos());
            let _ = writeln!(out, "        Encap (En): {}", e.encap());
            let _ = writeln!(out, "        Truncated: {}", flag(e.truncated()));
            let _ = writeln!(out, "        Session ID: {}", e.session_id());
            let _ = writeln!(out, "        Index: {}", e.index());
        }
        Encap::ErspanIII { gre: g, erspan: e, platform } => {
            gre(&g, out);
            let _ = writeln!(out, "    ERSPAN Type III");
            let _ = writeln!(out, "        Version: {}", e.version());
            let _ = writeln!(out, "        VLAN: {}", e.vlan());
            let _ = writeln!(out, "        COS: {}", e.cos());
            let _ = writeln!(out, "        BSO: {}", e.bso());
            let _ = writeln!(out, "        Truncated: {}", flag(e.truncated()));
            let _ = writeln!(out, "        Session ID: {}", e.session_id());
            let _ = writeln!(out, "        Timestamp: {} ({})", e.timestamp(), e.granularity().name());
            let _ = writeln!(out, "        SGT: {}", e.sgt());
            let _ = writeln!(out, "        P: {}, FT: {}, HW ID: {}", flag(e.p()), e.frame_type(), e.hw_id());
            let _ = writeln!(out, "        Direction: {}", if e.direction() { "egress" } else { "ingress" });
            let _ = writeln!(out, "        Options (O): {}", flag(e.optional()));
            if let Some(pl) = platform {
                let _ = write!(out, "        Platform ID: {}, Info: 0x{:015x}", pl.platform_id(), pl.info());
                if let Some(h) = pl.timestamp_high() {
                    let _ = write!(out, ", Timestamp (high 32 bits): {h}");
                }
                out.push('\n');
            }
        }
        Encap::Vxlan(v) => {
            let _ = writeln!(
                out,
                "    Virtual eXtensible Local Area Network, Flags: 0x{:02x}, VNI: {}",
                v.flags(),
                v.vni()
            );
        }
        Encap::Geneve(g) => {
            let _ = writeln!(
                out,
                "    Generic Network Virtualization Encapsulation, Version: {}, OAM: {}, Critical: {}, Protocol: 0x{:04x}, VNI: {}, Options: {} bytes",
                g.version(),
                flag(g.oam()),
                flag(g.critical()),
                g.protocol().0,
                g.vni(),
                g.options().len()
            );
        }
        Encap::Mpls { labels, control_word, payload } => {
            for l in labels.iter() {
                let _ = writeln!(
                    out,
                    "    MultiProtocol Label Switching Header, Label: {}, TC: {}, S: {}, TTL: {}",
                    l.label(),
                    l.tc(),
                    flag(l.bottom()),
                    l.ttl()
                );
            }
            if let Some(c) = control_word {
                let _ = writeln!(
                    out,
                    "    PW Ethernet Control Word, Flags: {}, FRG: {}, Length: {}, Sequence: {}",
                    c.flags(),
                    c.frg(),
                    c.length(),
                    c.seq()
                );
            }
            let what = match payload {
                MplsPayload::Ipv4 => "IPv4",
                MplsPayload::Ipv6 => "IPv6",
                MplsPayload::Ethernet => "Ethernet pseudowire",
            };
            let _ = writeln!(out, "    [MPLS payload: {what}]");
        }
    }
}
