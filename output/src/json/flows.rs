//! The flows' entries of `report --json`, written by hand: at many QPs they are nine in ten
//! of the document's bytes, and a serde serializer pays for every field (a call, the key
//! looked up and copied, the time-key check). Here each key is a constant copied in place
//! (`,"packets":`), each number goes straight into the buffer.
//!
//! The fields are those of [`FlowReport`] and its parts, in their order, with the value
//! each serialises to; what is rare (the congestion-control summary, a stall) goes through
//! the serde writer. The entries must stay byte-identical to serde's: a field added to
//! these types and not here fails the comparison of the two over every sample and capture
//! (`tests/json_writer.rs`), and a field renamed or removed fails to compile here.

use super::writer::Writer;
use rocescope_analyzer::report::{
    EcnCounts, FlowReport, Latencies, NakCounts, OpcodeCount, PsnReport, Throughput,
};
use rocescope_analyzer::stats::{Burst, LatencySummary};
use serde::Serialize;
use std::io::Write;

type Result = std::result::Result<(), serde_json::Error>;

/// An unsigned field's value as the `u64` it is written as.
trait Unsigned: Copy {
    fn wide(self) -> u64;
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Unsigned for $t {
            #[inline(always)]
            fn wide(self) -> u64 {
                self as u64
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, usize);

/// An object of `$s`'s fields, in the order given: `key: kind`, the kind saying how the
/// value is written (`u` unsigned, `i` `i64`, `b` `bool`, `f` `f64`, `s` string, `ou` /
/// `oi` / `os` an `Option` of those (null when `None`), `(time twin)` an absolute time in ns
/// (a `_ns` key, [`super::TIME_KEYS`]) and its twin named `twin`, `serde` through the serde
/// writer, `(f)` by the function `f`).
macro_rules! object {
    ($w:ident, $s:expr, $first:ident : $fk:tt $(, $key:ident : $kind:tt)* $(,)?) => {{
        let s = $s;
        $w.raw(concat!("{\"", stringify!($first), "\":").as_bytes());
        value!($w, s, $first, $fk);
        $(
            $w.raw(concat!(",\"", stringify!($key), "\":").as_bytes());
            value!($w, s, $key, $kind);
        )*
        $w.raw(b"}");
    }};
}

macro_rules! value {
    ($w:ident, $s:ident, $key:ident, u) => {
        $w.uint(Unsigned::wide($s.$key))
    };
    ($w:ident, $s:ident, $key:ident, i) => {
        $w.int($s.$key)
    };
    ($w:ident, $s:ident, $key:ident, b) => {
        $w.boolean($s.$key)
    };
    ($w:ident, $s:ident, $key:ident, f) => {
        $w.float_or_null($s.$key)?
    };
    ($w:ident, $s:ident, $key:ident, s) => {
        $w.string(&$s.$key)
    };
    ($w:ident, $s:ident, $key:ident, ou) => {
        match $s.$key {
            Some(v) => $w.uint(Unsigned::wide(v)),
            None => $w.raw(b"null"),
        }
    };
    ($w:ident, $s:ident, $key:ident, oi) => {
        match $s.$key {
            Some(v) => $w.int(v),
            None => $w.raw(b"null"),
        }
    };
    ($w:ident, $s:ident, $key:ident, os) => {
        match &$s.$key {
            Some(v) => $w.string(v),
            None => $w.raw(b"null"),
        }
    };
    ($w:ident, $s:ident, $key:ident, (time $twin:ident)) => {{
        $w.int($s.$key);
        $w.raw(concat!(",\"", stringify!($twin), "\":\"").as_bytes());
        $w.epoch_secs($s.$key);
        $w.raw(b"\"");
    }};
    ($w:ident, $s:ident, $key:ident, serde) => {
        $s.$key.serialize(&mut *$w)?
    };
    ($w:ident, $s:ident, $key:ident, ($f:path)) => {
        $f($w, &$s.$key)?
    };
}

/// One flow's entry, as serde writes a [`FlowReport`].
pub(super) fn flow<W: Write>(w: &mut Writer<W>, f: &FlowReport) -> Result {
    object!(w, f,
        point: u,
        id: u,
        src: s,
        dst: s,
        dest_qp: u,
        first_frame: u,
        first_ns: (time first),
        last_ns: (time last),
        priority: ou,
        packets: u,
        bytes: u,
        payload_bytes: u,
        messages: u,
        requests: u,
        responses: u,
        opcodes: (opcodes),
        ecn: (ecn),
        psn: (psn),
        naks: (naks),
        acks: u,
        cnps: u,
        cnps_received: u,
        icrc_bad: u,
        dscp: (list),
        pcp: (list),
        throughput: (throughput),
        latency: (latencies),
        cc: serde,
        partner: ou,
        pairing: os,
        cm_start_psn: ou,
        ack_timeout_ns: oi,
        pmtu: u,
        udp_src_port: ou,
        udp_src_port_changes: u,
        udp_src_port_last: ou,
        bursts: u,
        health: s,
    );
    Ok(())
}

fn opcodes<W: Write>(w: &mut Writer<W>, v: &[OpcodeCount]) -> Result {
    w.raw(b"[");
    for (i, o) in v.iter().enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        object!(w, o, opcode: u, name: s, packets: u);
    }
    w.raw(b"]");
    Ok(())
}

fn ecn<W: Write>(w: &mut Writer<W>, e: &EcnCounts) -> Result {
    object!(w, e, not_ect: u, ect0: u, ect1: u, ce: u, ce_fraction: f);
    Ok(())
}

fn psn<W: Write>(w: &mut Writer<W>, p: &PsnReport) -> Result {
    object!(w, p,
        tracked: b,
        gaps: u,
        missing: u,
        retransmits: u,
        retransmits_nak: u,
        retransmits_timeout: u,
        retransmits_rnr: u,
        retransmits_spurious: u,
        retransmits_implied: u,
        retransmits_unknown: u,
        duplicates: u,
        out_of_order: u,
        late_beyond_window: u,
        max_late_ns: i,
        spurious_naks: u,
        read_response_gaps: u,
        read_tail_timeouts: u,
        timeout_stall_ns: i,
        network_loss_gaps: u,
        capture_loss_gaps: u,
        resyncs: u,
        network_loss_packets: u,
        lost_beyond_point: u,
        resent_out_of_sequence: u,
        timeout_events: u,
        implied_nak_events: u,
        resend_gaps: u,
        resend_gap_min_ns: oi,
        resend_gap_max_ns: oi,
        resend_gap_max_frame: ou,
        retries_max: u,
        retries_span_ns: i,
        retries_frame: ou,
        lives: u,
        selective_resends: u,
        psn_violations: u,
        retries_exhausted: b,
        stall: serde,
    );
    Ok(())
}

fn naks<W: Write>(w: &mut Writer<W>, n: &NakCounts) -> Result {
    object!(w, n, psn_seq_err: u, invalid_request: u, remote_access: u, remote_operational: u, invalid_rd: u, other: u, rnr: u);
    // The two timers are left out when absent: reopen the object for them.
    if n.rnr_timer_us_min.is_some() || n.rnr_timer_us_max.is_some() {
        w.unclose();
        if let Some(v) = n.rnr_timer_us_min {
            w.raw(b",\"rnr_timer_us_min\":");
            w.uint(u64::from(v));
        }
        if let Some(v) = n.rnr_timer_us_max {
            w.raw(b",\"rnr_timer_us_max\":");
            w.uint(u64::from(v));
        }
        w.raw(b"}");
    }
    Ok(())
}

fn throughput<W: Write>(w: &mut Writer<W>, t: &Throughput) -> Result {
    object!(w, t,
        bin_ns: u,
        bins: (list),
        packets: (list),
        ce: (list),
        resent: (list),
        cnps: (list),
        burst: (burst),
        peak_gbps: f,
        mean_gbps: f,
    );
    Ok(())
}

fn burst<W: Write>(w: &mut Writer<W>, b: &Burst) -> Result {
    object!(w, b, bin_ns: u, peak_gbps: f, peak_offset_ns: u, ce_peak: u, ce_peak_packets: u, ce_peak_offset_ns: u);
    Ok(())
}

fn latencies<W: Write>(w: &mut Writer<W>, l: &Latencies) -> Result {
    object!(w, l, ack: (latency), read: (latency), nak_to_retransmit: (latency), ce_to_cnp: (latency));
    Ok(())
}

fn latency<W: Write>(w: &mut Writer<W>, l: &Option<Box<LatencySummary>>) -> Result {
    match l.as_deref() {
        Some(s) => object!(w, s, count: u, min_ns: u, mean_ns: u, p50_ns: u, p99_ns: u, max_ns: u),
        None => w.raw(b"null"),
    }
    Ok(())
}

/// A list of unsigned numbers.
fn list<W: Write, T: Unsigned>(w: &mut Writer<W>, v: &[T]) -> Result {
    w.raw(b"[");
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        w.uint(x.wide());
    }
    w.raw(b"]");
    Ok(())
}
