//! The trace as Trace Event Format JSON (the JSON Object Format): metadata naming a process
//! per capture point and a thread per flow, the recorder's slices and instants sorted by
//! time, and each point's counters from the report's fabric timeline.

use super::event::{Cause, Event, Kind, Nak};
use super::{Recorder, TraceInfo, Written};
use rocescope_analyzer::report::Report;
use rocescope_analyzer::Analyzer;
use rocescope_decoder::{Opcode, OpcodeOptions, Transport};
use std::fmt::Write as _;
use std::io::{self, Write};

/// A time in ns as µs with three decimals, exactly (`1767225600069102.700`): the Trace
/// Event Format's unit, whatever a reader's doubles make of the last digits.
pub fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// A string as a JSON string, with the characters a terminal obeys escaped too.
fn text(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""));
    crate::json::json_safe(&quoted).into_owned()
}

/// A message's name on its slice: the operation (`SEND`, `WRITE`, `READ response`...), or
/// the opcode's name where there is no family to give.
fn operation(op: Opcode, opts: OpcodeOptions) -> &'static str {
    let connected = matches!(op.transport(), Transport::Rc | Transport::Uc | Transport::Ud | Transport::Xrc);
    if !connected {
        return op.name(opts);
    }
    match op.operation() {
        0x00..=0x05 | 0x16 | 0x17 => "SEND",
        0x06..=0x0B => "WRITE",
        0x0C => "READ request",
        0x0D..=0x10 => "READ response",
        0x12 => "Atomic ACK",
        0x13 => "Compare Swap",
        0x14 => "Fetch Add",
        0x1C => "FLUSH",
        0x1D => "Atomic Write",
        _ => op.name(opts),
    }
}

/// Counts bytes on their way to `W`.
struct Counted<W> {
    out: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes events one a line, commas between them.
struct Lines<W: Write> {
    out: Counted<io::BufWriter<W>>,
    first: bool,
}

impl<W: Write> Lines<W> {
    fn event(&mut self, line: &str) -> io::Result<()> {
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        self.out.write_all(sep)?;
        self.out.write_all(line.as_bytes())
    }
}

/// Write the trace of `a` (finished, its report `report`) and of what `rec` recorded.
pub(super) fn write<W: Write>(
    out: W,
    rec: &mut Recorder,
    a: &Analyzer,
    report: &Report,
    info: &TraceInfo<'_>,
) -> io::Result<Written> {
    let opts = a.config().opcode;
    let start_ns = report.summary.start_ns.unwrap_or(0);
    let t0 = micros(start_ns);
    let mut w = Written::default();
    rec.events.sort_by_key(|e| (e.ts_ns, std::cmp::Reverse(e.dur_ns)));
    for e in &rec.events {
        if let Some(n) = w.events.get_mut(e.kind as usize) {
            *n += 1;
        }
    }
    w.dropped = rec.dropped;
    let mut lines =
        Lines { out: Counted { out: io::BufWriter::with_capacity(1 << 16, out), bytes: 0 }, first: true };
    // The document's own facts first (`otherData`: chrome://tracing shows them under
    // "Metadata"), then the events.
    let mut other = String::new();
    let _ = write!(
        other,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"generator\":{},\"source\":{},\"time\":\"ts in microseconds since the Unix epoch (UTC)\",\"start_ns\":\"{}\",\"max_events\":{},\"events\":{{",
        text(concat!("rocescope ", env!("CARGO_PKG_VERSION"))),
        text(info.source),
        start_ns,
        info.max_events
    );
    let counts = |v: &[u64; Kind::COUNT]| {
        Kind::ALL
            .iter()
            .zip(v.iter())
            .map(|(k, n)| format!("\"{}\":{n}", k.key()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = write!(other, "{}}},\"dropped\":{{{}}}", counts(&w.events), counts(&w.dropped));
    let _ = write!(other, ",\"dropped_total\":{}}},\"traceEvents\":[", w.dropped.iter().sum::<u64>());
    lines.out.write_all(other.as_bytes())?;
    // A process per capture point, a thread per flow.
    for (i, p) in report.points.iter().enumerate() {
        let pid = i + 1;
        lines.event(&format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"ts\":{t0},\"args\":{{\"name\":{}}}}}",
            text(&p.name)
        ))?;
        lines.event(&format!(
            "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"ts\":{t0},\"args\":{{\"sort_index\":{i}}}}}"
        ))?;
        w.metadata += 2;
    }
    for (id, f) in a.flows().iter().enumerate() {
        let (pid, tid) = (usize::from(f.key.point) + 1, super::TID_BASE + id as u64);
        let name = format!("QP {:#x} {} \u{2192} {}", f.key.dest_qp, f.key.src, f.key.dst);
        lines.event(&format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"ts\":{t0},\"args\":{{\"name\":{}}}}}",
            text(&name)
        ))?;
        lines.event(&format!(
            "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"ts\":{t0},\"args\":{{\"sort_index\":{id}}}}}"
        ))?;
        w.metadata += 2;
    }
    // The counters and the recorded events, merged in time order.
    let counters = counter_events(report, start_ns);
    w.counters = counters.len() as u64;
    let mut cs = counters.iter().peekable();
    let flows = a.flows();
    for e in &rec.events {
        while let Some((ts, line)) = cs.peek() {
            if *ts > e.ts_ns {
                break;
            }
            lines.event(line)?;
            cs.next();
        }
        let pid = flows.get(e.flow as usize).map_or(1, |f| usize::from(f.key.point) + 1);
        lines.event(&event_line(e, pid, opts))?;
    }
    for (_, line) in cs {
        lines.event(line)?;
    }
    lines.out.write_all(b"\n]}\n")?;
    lines.out.flush()?;
    w.bytes = lines.out.bytes;
    Ok(w)
}

/// One recorded event as a line of the trace.
fn event_line(e: &Event, pid: usize, opts: OpcodeOptions) -> String {
    let tid = super::TID_BASE + u64::from(e.flow);
    let ts = micros(e.ts_ns);
    let weight = if e.weight > 1 { format!(",\"stands_for\":{}", e.weight) } else { String::new() };
    match e.kind {
        Kind::Message | Kind::Partial => {
            let (first, last) = (Opcode(e.first_opcode), Opcode(e.code));
            let incomplete = e.kind == Kind::Partial;
            let name = format!("{}{}", operation(first, opts), if incomplete { " (incomplete)" } else { "" });
            format!(
                "{{\"ph\":\"X\",\"cat\":\"message\",\"name\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"dur\":{},\"args\":{{\"opcode\":{},\"first_opcode\":{},\"psn_first\":{},\"psn_last\":{},\"packets\":{},\"bytes\":{},\"frame\":{},\"complete\":{}{weight}}}}}",
                text(&name),
                micros(e.dur_ns),
                text(last.name(opts)),
                text(first.name(opts)),
                e.psn,
                e.psn_last,
                e.packets,
                e.bytes,
                e.frame,
                !incomplete
            )
        }
        Kind::Resend => {
            let cause = Cause::ALL.get(usize::from(e.code)).map_or("unknown", |c| c.name());
            format!(
                "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"resend\",\"name\":\"resend\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"args\":{{\"cause\":\"{cause}\",\"psn\":{},\"frame\":{}}}}}",
                e.psn, e.frame
            )
        }
        Kind::Nak => {
            let syndrome = Nak::ALL.get(usize::from(e.code)).map_or("other", |n| n.name());
            let name = if syndrome == "rnr" { String::from("RNR NAK") } else { format!("NAK {syndrome}") };
            format!(
                "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nak\",\"name\":\"{name}\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"args\":{{\"syndrome\":\"{syndrome}\",\"psn\":{},\"frame\":{}}}}}",
                e.psn, e.frame
            )
        }
        Kind::AckTimeout => format!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"timeout\",\"name\":\"ACK timeout\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"args\":{{\"psn\":{},\"frame\":{}{weight}}}}}",
            e.psn, e.frame
        ),
        Kind::Cnp => format!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cnp\",\"name\":\"CNP\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"args\":{{\"frame\":{}{weight}}}}}",
            e.frame
        ),
    }
}

/// Each charted point's counters, from the report's timeline (bins from the capture start):
/// RoCE throughput (bytes/s) and paused time (µs per second) by priority, a sample at each
/// bin's start and a last one, at zero, at the capture's end (the last bin is a partial one:
/// the trace ends with the capture, not with it).
fn counter_events(report: &Report, start_ns: i64) -> Vec<(i64, String)> {
    let end_ns = report.summary.end_ns.unwrap_or(start_ns);
    let mut out = Vec::new();
    for series in &report.timeline.points {
        let pid = usize::from(series.point) + 1;
        let bin = i64::try_from(series.bin_ns.max(1)).unwrap_or(i64::MAX);
        let bins = series
            .priorities
            .iter()
            .map(|p| p.bytes.len().max(p.pause_ns.len()))
            .chain([series.link_pause_ns.len()])
            .max()
            .unwrap_or(0);
        let per_s = |v: u64| (v as f64 * 1e9 / bin as f64).round() as u64;
        let paused = series.priorities.iter().any(|p| p.pause_ns.iter().any(|&n| n > 0))
            || !series.link_pause_ns.is_empty();
        for i in 0..=bins {
            let mut ts = start_ns.saturating_add(bin.saturating_mul(i as i64));
            if i == bins {
                let last = start_ns.saturating_add(bin.saturating_mul(bins.saturating_sub(1) as i64));
                ts = ts.min(end_ns.max(last));
            }
            let get = |v: &[u64]| if i < bins { v.get(i).copied().unwrap_or(0) } else { 0 };
            let rate: Vec<String> = series
                .priorities
                .iter()
                .map(|p| format!("\"P{}\":{}", p.priority, per_s(get(&p.bytes))))
                .collect();
            if !rate.is_empty() {
                out.push((
                    ts,
                    format!(
                        "{{\"ph\":\"C\",\"name\":\"RoCE bytes/s\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"args\":{{{}}}}}",
                        micros(ts),
                        rate.join(",")
                    ),
                ));
            }
            if paused {
                let mut held: Vec<String> = series
                    .priorities
                    .iter()
                    .map(|p| format!("\"P{}\":{}", p.priority, per_s(get(&p.pause_ns)) / 1000))
                    .collect();
                if !series.link_pause_ns.is_empty() {
                    held.push(format!("\"PAUSE\":{}", per_s(get(&series.link_pause_ns)) / 1000));
                }
                out.push((
                    ts,
                    format!(
                        "{{\"ph\":\"C\",\"name\":\"paused us/s\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"args\":{{{}}}}}",
                        micros(ts),
                        held.join(",")
                    ),
                ));
            }
        }
    }
    out.sort_by_key(|(ts, _)| *ts);
    out
}
