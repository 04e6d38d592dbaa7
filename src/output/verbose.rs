//! Every field of every header, tree-style (like `tshark -V`).

use super::{mac, rnr_ms, utc, Frame};
use rocescope_decoder::{Ip, Link, MacControl, RoceVersion};
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
    match &p.link {
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
    if let Some(e) = &p.error {
        let _ = writeln!(out, "[Malformed: {e}]");
    }
}
