//! One line per frame, like tshark's default output.

use super::{mac, rel_time, rnr_ms, Frame};
use rocescope_decoder::ext::AethKind;
use rocescope_decoder::link::ethertype;
use rocescope_decoder::{Ecn, IcrcStatus, Link, MacControl, RoceVersion};
use std::fmt::Write;

/// Append the summary line for `f` to `out`.
pub fn write(f: &Frame<'_>, out: &mut String) {
    let _ = write!(out, "{:>6} {:>14} ", f.number, rel_time(f.rel_ns));
    write_body(f, out);
}

/// The summary line without its frame number and time: addresses, protocol, length and
/// what the headers say (the form a sampled header inside an sFlow datagram is shown in).
pub fn write_body(f: &Frame<'_>, out: &mut String) {
    let p = f.packet;
    let (src, dst) = match (&p.ip, &p.link, &p.roce) {
        (Some(ip), _, _) => (ip.src().to_string(), ip.dst().to_string()),
        (None, _, Some(r)) if r.grh.is_some() => {
            let g = r.grh.map(|g| (g.sgid().to_string(), g.dgid().to_string()));
            g.unwrap_or_default()
        }
        (None, Link::Ethernet(e), _) => (mac(&e.src()), mac(&e.dst())),
        _ => (String::from("?"), String::from("?")),
    };
    let proto = match (&p.roce, &p.mac_control, &p.ip, &p.udp) {
        (Some(r), _, _, _) if r.version == RoceVersion::V1 => "RoCEv1",
        (Some(_), _, _, _) => "RoCEv2",
        (None, Some(MacControl::Pfc(_)), _, _) => "PFC",
        (None, Some(MacControl::Pause(_)), _, _) => "PAUSE",
        (None, Some(MacControl::Other { .. }), _, _) => "MACC",
        (None, None, _, _) if p.to_roce_port => "RoCEv2?",
        (None, None, Some(_), Some(_)) => "UDP",
        (None, None, Some(ip), None) => match ip.protocol() {
            6 => "TCP",
            47 => "GRE",
            1 | 58 => "ICMP",
            _ => "IP",
        },
        _ => match p.ethertype {
            Some(0x0806) => "ARP",
            Some(0x88CC) => "LLDP",
            Some(ethertype::ROCE_V1) => "RoCEv1?",
            _ => "ETH",
        },
    };
    // Tunnel layers first, outermost first: `ERSPAN II s=7 | 10.0.0.1 → ...`.
    for t in p.tunnels.iter() {
        let _ = write!(out, "{} | ", super::tunnel_tag(t));
    }
    let _ = write!(out, "{} → {} {} {} ", src, dst, proto, f.record.len);
    if let Some(r) = &p.roce {
        let b = r.bth;
        let _ = write!(out, "{} QP=0x{:06x} PSN={}", b.opcode().name(f.opts.opcode), b.dest_qp(), b.psn());
        if b.ack_req() {
            out.push_str(" A");
        }
        if b.fecn() {
            out.push_str(" FECN");
        }
        if b.becn() {
            out.push_str(" BECN");
        }
        if let Some(a) = r.ext.aeth {
            let a = a.repr();
            match a.kind() {
                AethKind::Ack => {
                    let _ = write!(out, " ACK MSN={}", a.msn);
                }
                AethKind::RnrNak => {
                    let timer = rnr_ms(a.rnr_timer_us().unwrap_or(0));
                    let _ = write!(out, " RNR-NAK timer={timer} MSN={}", a.msn);
                }
                AethKind::Nak => {
                    let code = a.nak_code().map(|c| c.name()).unwrap_or("?");
                    let _ = write!(out, " NAK: {code} MSN={}", a.msn);
                }
                AethKind::Reserved => {
                    let _ = write!(out, " AETH reserved syndrome 0x{:02x}", a.syndrome);
                }
            }
        }
        if let Some(reth) = r.ext.reth {
            let _ = write!(out, " len={}", reth.dma_len());
        }
        if r.payload_len > 0 {
            let _ = write!(out, " payload={}", r.payload_len);
        }
        if p.ip.as_ref().is_some_and(|ip| ip.ecn() == Ecn::Ce) {
            out.push_str(" [ECN-CE]");
        }
        match r.icrc.status {
            IcrcStatus::Invalid => out.push_str(" [ICRC bad]"),
            IcrcStatus::Truncated => out.push_str(" [truncated]"),
            _ => {}
        }
        if !r.known_opcode {
            out.push_str(" [unknown opcode]");
        }
    }
    match &p.mac_control {
        Some(MacControl::Pfc(pfc)) => {
            let _ = write!(out, "enable=0x{:02x}", pfc.enable());
            for prio in 0..8u8 {
                if pfc.enabled(prio) {
                    let q = pfc.quanta.get(usize::from(prio)).copied().unwrap_or(0);
                    if q == 0 {
                        let _ = write!(out, " p{prio}=XON");
                    } else {
                        let _ = write!(out, " p{prio}={q}");
                    }
                }
            }
            if pfc.bad_dst {
                out.push_str(" [bad dst MAC]");
            }
            if pfc.bad_enable_upper() {
                out.push_str(" [upper enable byte set]");
            }
        }
        Some(MacControl::Pause(pause)) => {
            let _ = write!(out, "quanta={}", pause.quanta);
            if pause.quanta == 0 {
                out.push_str(" (XON)");
            }
            if pause.bad_dst {
                out.push_str(" [bad dst MAC]");
            }
        }
        Some(MacControl::Other { opcode }) => {
            let _ = write!(out, "opcode=0x{opcode:04x}");
        }
        None => {}
    }
    if p.ip_fragment {
        out.push_str("[IP fragment]");
    }
    if let Some(u) = &p.tunnel_undecoded {
        let _ = write!(out, " [tunnel not decoded: {}]", u.reason);
    }
    if let Some(e) = &p.error {
        // The capture's snap length cut a header the frame carried: not malformed.
        let cut = f.record.caplen < f.record.len
            && matches!(e.kind, rocescope_decoder::ErrorKind::Truncated { .. });
        let what = if cut { "header cut by the capture" } else { "malformed" };
        let _ = write!(out, " [{what}: {e}]");
    }
    while out.ends_with(' ') {
        out.pop();
    }
}
