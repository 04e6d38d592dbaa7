//! `report --threads 2` on a capture: the analysis in two stages (issue 39).
//!
//! This thread reads the capture (the pump, with every option it takes: windows, counts, snap
//! lengths, signals, damage), classifies each frame and makes its mirror-copy check
//! ([`rocescope_analyzer::pipeline`]); the other thread takes the frames in chunks, in order,
//! each common frame with its check's answer, and does the rest of the analysis. One
//! analysis, no merge: the report is the one-thread report, byte for byte.
//!
//! The split, on the mixed bench capture (one thread's work is 1): reading and classifying
//! about 0.3, the check about 0.2, the rest about 0.5. Where sharding by host pair left the
//! first shard the capture-wide work of every frame (1.14-1.21x on this project's 2 cores),
//! the two stages share one thread's work about evenly.

use crate::cli::SourceArgs;
use crate::divided::Divided;
use crate::driver::{self, Flow, Opened};
use crate::held::Held;
use rocescope_analyzer::dedup::Copy;
use rocescope_analyzer::pipeline::CopyChecks;
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::Record;
use rocescope_decoder::fast::{self, Common};
use rocescope_decoder::DecodeOptions;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};

/// Frames per chunk.
const CHUNK_FRAMES: usize = 1024;
/// Bytes of records copied per chunk (records the analysing thread decodes itself).
const CHUNK_BYTES: usize = 256 << 10;
/// Chunks the reading thread may be ahead of the analysing one.
const AHEAD: usize = 4;

/// What a chunk holds of one record.
enum What {
    /// A common frame, with its mirror-copy check.
    Checked(Common, Copy),
    /// Any other record, its bytes at this offset of the chunk's data: analysed as one
    /// thread does.
    Raw(usize),
    /// The checks, handed over before this record: the analysis checks from here on.
    HandOver(Box<CopyChecks>),
}

/// One record as the reader handed it out, and what the reading stage made of it.
struct Item {
    held: Held,
    what: What,
}

impl Item {
    fn new(rec: &Record<'_>, number: u64, what: What) -> Self {
        Item { held: Held::of(rec, number), what }
    }
}

/// Records in capture order, handed over together.
#[derive(Default)]
struct Chunk {
    items: Vec<Item>,
    data: Vec<u8>,
}

impl Chunk {
    fn new() -> Self {
        Chunk { items: Vec::with_capacity(CHUNK_FRAMES), data: Vec::with_capacity(CHUNK_BYTES) }
    }

    /// No room for a record of `bytes` more (a first record larger than a chunk goes in).
    fn full_for(&self, bytes: usize) -> bool {
        !self.items.is_empty()
            && (self.items.len() == CHUNK_FRAMES || self.data.len() + bytes > self.data.capacity())
    }

    fn raw(&mut self, rec: &Record<'_>, number: u64) {
        self.items.push(Item::new(rec, number, What::Raw(self.data.len())));
        self.data.extend_from_slice(rec.data);
    }
}

/// The analysing thread: every record of every chunk, in order; each chunk back, emptied.
fn analyse(cfg: Config, opts: &DecodeOptions, chunks: Receiver<Chunk>, back: Sender<Chunk>) -> Analyzer {
    let mut a = Analyzer::new(cfg);
    while let Ok(mut chunk) = chunks.recv() {
        for Item { held, what } in chunk.items.drain(..) {
            match what {
                // (A common frame's record carries no bytes: the analysis reads its
                // classification.)
                What::Checked(c, copy) => a.push_common_checked(held.number, &held.record(&[]), &c, copy),
                What::Raw(at) => {
                    // The bytes the reading stage put there (Held::caplen is their length).
                    let data = chunk.data.get(at..at + held.caplen as usize).unwrap_or(&[]);
                    a.push_shard_record(held.number, &held.record(data), opts);
                }
                What::HandOver(checks) => a.resume_copy_checks(*checks),
            }
        }
        chunk.data.clear();
        // The reader may have finished: then the chunk goes.
        let _ = back.send(chunk);
    }
    a
}

/// Read `opened` on this thread, checking copies ahead, and analyse it on another: what it
/// read and the one analysis it made (as the divided reading's only shard).
pub fn run(
    opened: &mut Opened,
    source: &SourceArgs,
    opts: &DecodeOptions,
    cfg: &Config,
    stop: &AtomicBool,
) -> Divided {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Chunk>(AHEAD);
        let (back_tx, back) = channel::<Chunk>();
        let analysing = {
            let cfg = cfg.clone();
            scope.spawn(move || analyse(cfg, opts, rx, back_tx))
        };
        // `None` once handed over.
        let mut checks = Some(CopyChecks::new(cfg));
        let mut chunk = Chunk::new();
        let (end, bytes_read) = driver::pump_numbered(opened, source, opts, stop, |rec, number| {
            if chunk.full_for(rec.data.len()) {
                let next = back.try_recv().unwrap_or_else(|_| Chunk::new());
                if tx.send(std::mem::replace(&mut chunk, next)).is_err() {
                    // The analysing thread has gone (it failed): said when it is joined.
                    return Ok(Flow::Stop);
                }
            }
            let Some(ch) = checks.as_mut() else {
                chunk.raw(rec, number);
                return Ok(Flow::Continue);
            };
            match fast::classify(rec.link_type, rec.data, opts) {
                Some(c) => {
                    let copy = ch.check_common(rec.point, rec.ts_ns, &c);
                    chunk.items.push(Item::new(rec, number, What::Checked(c, copy)));
                }
                None => {
                    let p = rocescope_decoder::decode(rec.link_type, rec.data, opts);
                    if ch.hands_over(&p) {
                        if let Some(handed) = checks.take() {
                            chunk.items.push(Item::new(rec, number, What::HandOver(Box::new(handed))));
                        }
                    }
                    chunk.raw(rec, number);
                }
            }
            Ok(Flow::Continue)
        });
        if !chunk.items.is_empty() {
            let _ = tx.send(chunk);
        }
        drop(tx);
        let analyzer = analysing.join().map_err(|_| anyhow::anyhow!("the analysing thread failed"));
        Divided { end, shards: vec![analyzer], bytes_read }
    })
}
