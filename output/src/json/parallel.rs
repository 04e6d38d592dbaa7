//! The flows' entries of `report --json` formatted on several threads (issue 39: "the end of
//! the run in parallel"). At many QPs the entries are nine in ten of the document's bytes,
//! and building each one (its findings, series and figures) costs more than writing it.
//!
//! Worker `k` of `n` builds and formats the flows of chunks `k`, `k + n`, `k + 2n`, ... (a
//! chunk is [`CHUNK`] flows, in flow order) into a buffer of its own and hands it over on its
//! own channel, which holds at most [`AHEAD`] buffers. The calling thread takes the chunks in
//! order, worker by worker, and writes them. So the bytes are those of the one-thread
//! writer, and the memory in flight is bounded: `n × (AHEAD + 1)` chunks of entries.

use super::flows;
use super::writer::Writer;
use rocescope_analyzer::report::StreamedReport;
use std::io::Write;
use std::sync::mpsc;

type Result<T> = std::result::Result<T, serde_json::Error>;

/// Flows per chunk: about 0.25 MB of entries at 2 kB a flow.
const CHUNK: usize = 128;
/// Chunks a worker may have formatted before the writer takes them. With [`CHUNK`], a
/// worker holds at most 0.5 MB in flight (1.5 MB with 256 flows and two ahead: at 100,000
/// QPs the two-thread run's peak memory was in this phase, issue 39).
const AHEAD: usize = 1;
/// Below this many flows one thread writes them all: threads cost more than they save.
const MIN_FLOWS: usize = 1024;

/// The entries of flows `ids` into `w`, each after a comma (the caller takes off the first).
fn chunk(
    w: &mut Writer<std::io::Sink>,
    report: &StreamedReport<'_>,
    ids: std::ops::Range<usize>,
) -> Result<()> {
    for id in ids {
        let Some(f) = report.flow(id) else { continue };
        w.raw(b",");
        flows::flow(w, &f)?;
    }
    Ok(())
}

/// The flows' list (`[...]`) into `w` on `threads` threads: the bytes of the one-thread
/// writer. Returns `false`, writing nothing, when one thread should write it (few flows).
pub(super) fn write_flows<W: Write>(
    w: &mut Writer<W>,
    report: &StreamedReport<'_>,
    threads: usize,
) -> Result<bool> {
    let count = report.flow_count();
    let threads = threads.min(count.div_ceil(CHUNK));
    if threads <= 1 || count < MIN_FLOWS {
        return Ok(false);
    }
    let chunks = count.div_ceil(CHUNK);
    w.raw(b"[");
    let mut first = true;
    std::thread::scope(|scope| -> Result<()> {
        let mut from_worker = Vec::with_capacity(threads);
        for k in 0..threads {
            let (tx, rx) = mpsc::sync_channel::<Result<Vec<u8>>>(AHEAD);
            from_worker.push(rx);
            scope.spawn(move || {
                let mut cw = Writer::in_memory();
                for c in (k..chunks).step_by(threads) {
                    let ids = c * CHUNK..((c + 1) * CHUNK).min(count);
                    let done = chunk(&mut cw, report, ids).map(|()| cw.take_buffer());
                    let failed = done.is_err();
                    // The writer gone (it failed): stop.
                    if tx.send(done).is_err() || failed {
                        return;
                    }
                }
            });
        }
        for c in 0..chunks {
            let Some(rx) = from_worker.get(c % threads) else { break };
            // A worker that ended without its chunk panicked: say so rather than write less.
            let buf = rx
                .recv()
                .map_err(|_| serde_json::Error::io(std::io::Error::other("a JSON worker failed")))??;
            let body = if first { buf.get(1..).unwrap_or_default() } else { &buf[..] };
            if !body.is_empty() {
                first = false;
            }
            w.raw(body);
            w.maybe_flush()?;
        }
        Ok(())
    })?;
    w.raw(b"]");
    Ok(true)
}
