//! Capture inputs that are not regular files: standard input (`-`), a pipe, a FIFO, the
//! `/dev/fd/N` of a shell's `<(...)`, a character device. Such an input can be read once
//! only, and both its open(2) (a FIFO's waits for a writer) and its read(2) (a writer that
//! stalls) can wait for ever.
//!
//! A [`Stream`] reads one on a thread of its own, which alone waits in open(2) and read(2),
//! and hands the bytes over in chunks. The reader of the stream waits for the next chunk a
//! little at a time and looks at the stop flag a SIGINT or SIGTERM sets
//! ([`crate::signals::stop_flag`]) in between: once it is set, the stream ends there, so a
//! signal ends the run wherever it waits (the handlers restart the interrupted call,
//! `SA_RESTART`, and setting a flag alone would never be seen by a thread blocked in it).
//! The thread, still waiting, ends with the process.
//!
//! Who reads a stream reads it once: `compare` sniffs a side through the buffered reader the
//! capture reader then takes over (`BufReader::fill_buf`, which consumes nothing), and
//! `report --threads N` reads it with one walker ([`crate::divided`]) or one thread, never
//! reopening it per shard.

use rocescope_capture::merge::Merged;
use rocescope_capture::{CaptureError, CaptureReader, Source};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// Bytes the thread asks read(2) for at a time (a pipe gives at most 64 KiB a call).
const CHUNK: usize = 128 << 10;
/// Chunks the thread may read ahead of the reader.
const AHEAD: usize = 8;
/// How long the reader waits for a chunk before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// Whether `path` is read as a stream: `-` (standard input), or a path that exists and is
/// neither a regular file nor a directory (symbolic links followed: `/dev/stdin`, a shell's
/// `/dev/fd/63`).
pub fn is_stream(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A non-seekable input read on a thread of its own (see the module's documentation).
pub struct Stream {
    chunks: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
    stop: Option<Arc<AtomicBool>>,
}

impl Stream {
    /// Open `path` (`-`: standard input) on a thread of its own: this returns at once; an
    /// error opening it is the first read's.
    pub fn open(path: &Path) -> Stream {
        let (tx, chunks) = sync_channel(AHEAD);
        let path = path.to_path_buf();
        let spawned = std::thread::Builder::new().name("rocescope-input".into()).spawn(move || {
            let mut input: Box<dyn Read> = if path.as_os_str() == "-" {
                Box::new(io::stdin())
            } else {
                match std::fs::File::open(&path) {
                    Ok(f) => Box::new(f),
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            };
            loop {
                let mut buf = vec![0u8; CHUNK];
                match input.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => {
                        buf.truncate(n);
                        // The reader has gone (done, or stopped): nothing more to read for.
                        if tx.send(Ok(buf)).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let chunks = match spawned {
            Ok(_) => chunks,
            // No thread: the first read says why.
            Err(e) => {
                let (tx, rx) = sync_channel(1);
                let _ = tx.send(Err(e));
                rx
            }
        };
        Stream { chunks, chunk: Vec::new(), at: 0, ended: false, stop: crate::signals::stop_flag() }
    }

    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

impl Read for Stream {
    /// The next bytes; the end of the input, or of what was read before a signal asked to
    /// stop (the pump then says the run was interrupted, [`crate::driver::pump`]).
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(rest) = self.chunk.get(self.at..).filter(|r| !r.is_empty()) {
                let n = rest.len().min(out.len());
                if let (Some(dst), Some(src)) = (out.get_mut(..n), rest.get(..n)) {
                    dst.copy_from_slice(src);
                }
                self.at += n;
                return Ok(n);
            }
            if self.ended || self.stopped() {
                self.ended = true;
                return Ok(0);
            }
            match self.chunks.recv_timeout(POLL) {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
    }
}

/// Open `path` as a capture with a read buffer of `buffer` bytes to start with (as
/// [`CaptureReader::open_with_buffer`]): a stream through a [`Stream`], a file as it is.
pub fn open_capture(path: &Path, buffer: usize) -> Result<CaptureReader, CaptureError> {
    if is_stream(path) {
        CaptureReader::from_read_with_buffer(Stream::open(path), path, buffer)
    } else {
        CaptureReader::open_with_buffer(path, buffer)
    }
}

/// Open capture files as [`Source::files`] does, streams through a [`Stream`] each.
pub fn open_files(paths: &[PathBuf]) -> Result<Source, CaptureError> {
    match paths {
        [one] if is_stream(one) => CaptureReader::from_read(Stream::open(one), one).map(Source::File),
        [_] => Source::files(paths),
        _ => Merged::open_with(paths, open_capture).map(Source::Merged),
    }
}

/// One input opened once and buffered: what `compare` sniffs a side through
/// ([`Opened::looks_like_json`]) and then reads as a report document or a capture, the
/// sniffed bytes included.
pub struct Opened {
    /// The path given.
    pub path: PathBuf,
    /// Its bytes.
    pub reader: io::BufReader<Box<dyn Read + Send>>,
}

impl Opened {
    /// Open `path`: a stream through a [`Stream`], a file as it is.
    pub fn open(path: &Path) -> anyhow::Result<Opened> {
        let inner: Box<dyn Read + Send> =
            if is_stream(path) {
                Box::new(Stream::open(path))
            } else {
                Box::new(std::fs::File::open(path).map_err(|e| {
                    anyhow::anyhow!("cannot open {}: {e}", rocescope_capture::text::path(path))
                })?)
            };
        Ok(Opened { path: path.to_path_buf(), reader: io::BufReader::with_capacity(64 << 10, inner) })
    }

    /// Whether the first byte that is not white space is `{` (a `report --json` document),
    /// looked at without consuming anything but leading white space.
    pub fn looks_like_json(&mut self) -> io::Result<bool> {
        use std::io::BufRead;
        loop {
            let head = self.reader.fill_buf()?;
            if head.is_empty() {
                return Ok(false);
            }
            match head.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => return Ok(head.get(i) == Some(&b'{')),
                // All white space so far (a pipe's first read can be short): past it.
                None => {
                    let n = head.len();
                    self.reader.consume(n);
                }
            }
        }
    }
}
