//! `report --threads N` on a capture file, read once (issue 39: divided reading).
//!
//! This thread walks the file (the pump, with every option it takes: windows, counts, snap
//! lengths, signals, damage) and copies the records into chunks of about [`CHUNK_BYTES`],
//! each record routed to the shards that must see it
//! ([`rocescope_analyzer::divide::Router`]). A worker per shard takes every chunk, in order,
//! and analyses its records: the first shard all of them, the others their own and those
//! routed to all. The shards are then merged as before
//! ([`rocescope_analyzer::parallel::merge`]): the report is the one-thread report.
//!
//! Each record is read once in the whole run, where every shard used to read and glance at
//! every record of the file.

use crate::cli::SourceArgs;
use crate::driver::{self, Flow, Opened, RunEnd};
use crate::held::Held;
use rocescope_analyzer::divide::{Route, Router};
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::Record;
use rocescope_decoder::DecodeOptions;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Bytes of records per chunk (more when one record is larger).
const CHUNK_BYTES: usize = 256 << 10;
/// Chunks a worker may have waiting: the walker stays at most this far ahead of the slowest.
const AHEAD: usize = 4;

/// Where a record sits in its chunk, and what the reader said of it.
struct Rec {
    /// Offset of its bytes in the chunk's data.
    at: usize,
    held: Held,
    /// Its place among the records read, from 1.
    seq: u64,
}

/// Records copied out of the reader, and which shard gets which.
struct Chunk {
    data: Vec<u8>,
    recs: Vec<Rec>,
    /// For shard `k` (from 1), the indexes of its records in `recs` (the first shard gets
    /// them all).
    own: Vec<Vec<u32>>,
    /// The time of the capture's first record.
    first_ts: i64,
}

impl Chunk {
    fn new(shards: u32, first_ts: i64) -> Self {
        Chunk {
            data: Vec::with_capacity(CHUNK_BYTES),
            recs: Vec::with_capacity(CHUNK_BYTES / 64),
            own: (1..shards).map(|_| Vec::with_capacity(CHUNK_BYTES / 64)).collect(),
            first_ts,
        }
    }

    fn push(&mut self, rec: &Record<'_>, number: u64, seq: u64, route: Route) {
        let i = u32::try_from(self.recs.len()).unwrap_or(u32::MAX);
        self.recs.push(Rec { at: self.data.len(), held: Held::of(rec, number), seq });
        self.data.extend_from_slice(rec.data);
        match route {
            Route::Owner(0) => {}
            Route::Owner(k) => {
                if let Some(list) = self.own.get_mut(k as usize - 1) {
                    list.push(i);
                }
            }
            Route::All => self.own.iter_mut().for_each(|list| list.push(i)),
        }
    }

    /// No room for `bytes` more without growing (a chunk's buffers are never copied to
    /// grow, but for a first record larger than a chunk).
    fn full_for(&self, bytes: usize) -> bool {
        !self.recs.is_empty()
            && (self.data.len() + bytes > self.data.capacity() || self.recs.len() == self.recs.capacity())
    }

    /// Record `i` as the reader handed it out.
    fn record(&self, i: usize) -> Option<(&Rec, Record<'_>)> {
        let r = self.recs.get(i)?;
        let data = self.data.get(r.at..r.at + r.held.caplen as usize)?;
        Some((r, r.held.record(data)))
    }
}

/// Shard `index` of `count`: analyse the records of every chunk it is sent that are its own.
fn worker(
    index: u32,
    count: u32,
    cfg: Config,
    opts: &DecodeOptions,
    chunks: Receiver<Arc<Chunk>>,
) -> Analyzer {
    let mut a = Analyzer::new(cfg);
    a.set_shard(index, count);
    while let Ok(chunk) = chunks.recv() {
        if index == 0 {
            for i in 0..chunk.recs.len() {
                if let Some((r, rec)) = chunk.record(i) {
                    a.push_shard_record(r.held.number, &rec, opts);
                }
            }
        } else if let Some(list) = chunk.own.get(index as usize - 1) {
            for &i in list {
                if let Some((r, rec)) = chunk.record(i as usize) {
                    a.push_divided(r.seq, chunk.first_ts, r.held.number, &rec, opts);
                }
            }
        }
    }
    a
}

/// Hand `chunk` to every worker; false when one has gone (it failed).
fn send(to: &[SyncSender<Arc<Chunk>>], chunk: Chunk) -> bool {
    let chunk = Arc::new(chunk);
    to.iter().all(|tx| tx.send(Arc::clone(&chunk)).is_ok())
}

/// What a divided run read and the shards it analysed (first shard first), for the merge; of
/// two stages (crate::pipelined), its one analysis.
pub struct Divided {
    pub end: anyhow::Result<RunEnd>,
    pub shards: Vec<anyhow::Result<Analyzer>>,
    /// The bytes the records take in the file, about (for an interrupted report).
    pub bytes_read: u64,
}

/// Read `opened` once and analyse it on `count` shards made with `cfg`.
pub fn run(
    opened: &mut Opened,
    source: &SourceArgs,
    opts: &DecodeOptions,
    cfg: &Config,
    count: u32,
    stop: &AtomicBool,
) -> Divided {
    let mut router = Router::new(cfg, count, opts);
    std::thread::scope(|scope| {
        let mut senders = Vec::new();
        let mut workers = Vec::new();
        for index in 0..count {
            let (tx, rx) = sync_channel(AHEAD);
            senders.push(tx);
            let cfg = cfg.clone();
            workers.push(scope.spawn(move || worker(index, count, cfg, opts, rx)));
        }
        let mut seq = 0u64;
        let mut chunk: Option<Chunk> = None;
        let (end, bytes_read) = driver::pump_numbered(opened, source, opts, stop, |rec, number| {
            seq += 1;
            let route = router.route(rec, opts);
            let c = chunk.get_or_insert_with(|| Chunk::new(count, rec.ts_ns));
            if c.full_for(rec.data.len()) {
                let first_ts = c.first_ts;
                let full = std::mem::replace(c, Chunk::new(count, first_ts));
                if !send(&senders, full) {
                    return Ok(Flow::Stop);
                }
            }
            c.push(rec, number, seq, route);
            Ok(Flow::Continue)
        });
        if let Some(c) = chunk.take().filter(|c| !c.recs.is_empty()) {
            send(&senders, c);
        }
        drop(senders);
        let shards =
            workers.into_iter().map(|h| h.join().map_err(|_| anyhow::anyhow!("a shard failed"))).collect();
        Divided { end, shards, bytes_read }
    })
}
