//! Output formats for decoded frames. Everything printed comes from numeric fields or
//! fixed strings: bytes from the wire are never written raw to the terminal.

/// The report's JSON writer (the output library's).
pub use rocescope_output::json as exact;
pub mod compare_text;
pub mod ecmp_text;
pub mod fields;
pub mod json;
pub mod junit;
pub mod report_text;
pub mod sflow;
pub mod summary;
pub mod verbose;

use rocescope_capture::Record;
use rocescope_decoder::{DecodeOptions, Packet};

/// A decoded frame with its capture record and position, as the printers see it.
pub struct Frame<'a> {
    /// 1-based frame number.
    pub number: u64,
    /// The capture record.
    pub record: &'a Record<'a>,
    /// The decoded packet.
    pub packet: &'a Packet<'a>,
    /// Nanoseconds since the first frame.
    pub rel_ns: i64,
    /// The decoder settings (for opcode names).
    pub opts: &'a DecodeOptions,
}

/// A tunnel layer in a summary line: `ERSPAN II s=7`, `VXLAN vni=10`, `MPLS 100/200 PW+CW`.
pub fn tunnel_tag(t: &rocescope_decoder::Tunnel<'_>) -> String {
    use rocescope_decoder::tunnel::{Encap, MplsPayload};
    let name = t.kind().name();
    match t.encap {
        Encap::ErspanII { erspan, .. } => format!("{name} s={}", erspan.session_id()),
        Encap::ErspanIII { erspan, .. } => format!("{name} s={}", erspan.session_id()),
        Encap::Vxlan(v) => format!("{name} vni={}", v.vni()),
        Encap::Geneve(g) => format!("{name} vni={}", g.vni()),
        Encap::Mpls { labels, control_word, payload } => {
            let l: Vec<String> = labels.iter().map(|l| l.label().to_string()).collect();
            let what = match (payload, control_word) {
                (MplsPayload::Ethernet, Some(_)) => " PW+CW",
                (MplsPayload::Ethernet, None) => " PW",
                _ => "",
            };
            format!("{name} {}{what}", l.join("/"))
        }
        _ => name.to_string(),
    }
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac(m: &[u8; 6]) -> String {
    rocescope_decoder::link::mac_string(m)
}

/// An RNR timer in microseconds as milliseconds with two decimals, e.g. `1.28ms`.
pub fn rnr_ms(us: u32) -> String {
    format!("{}.{:02}ms", us / 1000, (us % 1000) / 10)
}

/// `seconds.nanoseconds` relative time.
pub fn rel_time(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// UTC date and time with nanoseconds, e.g. `2025-06-25 03:40:07.234689000 UTC`.
pub use rocescope_capture::time::utc;

#[cfg(test)]
mod tests {
    #[test]
    fn relative_times() {
        assert_eq!(super::rel_time(1_500_000_001), "1.500000001");
    }
}
