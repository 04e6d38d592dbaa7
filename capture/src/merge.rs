//! Several capture files read as one stream, merged by timestamp (as `mergecap`), each record
//! tagged with the capture point it came from ([`Record::point`]).
//!
//! Captures taken at both ends of a connection, or on many hosts during one incident, are
//! analysed together this way: the analyzer keeps each point's view apart and compares them.
//! Each file is read by its own streaming [`CaptureReader`]; the merge holds one pending
//! record per file (a copy of its bytes), so memory is one record per file whatever the sizes.

use crate::error::CaptureError;
use crate::reader::{CaptureReader, Interface, Record};
use crate::statistics::FileStats;
use rocescope_decoder::LinkType;
use std::path::{Path, PathBuf};

/// One file's pending record, owned.
#[derive(Debug)]
struct Pending {
    ts_ns: i64,
    caplen: u32,
    len: u32,
    link_type: LinkType,
    /// The file's own interface index.
    interface: u32,
    link_bps: Option<u64>,
    /// pcapng section it was read in.
    section: u32,
    /// Empty records its file passed over just before it ([`Record::empty_before`]).
    empty_before: u64,
    data: Vec<u8>,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            ts_ns: 0,
            caplen: 0,
            len: 0,
            link_type: LinkType::ETHERNET,
            interface: 0,
            link_bps: None,
            section: 0,
            empty_before: 0,
            data: Vec::new(),
        }
    }
}

/// One input file.
#[derive(Debug)]
struct Input {
    /// `None` for a file damaged before its first record (its error is in `failed`): it
    /// keeps its place as a capture point, with nothing in it.
    reader: Option<CaptureReader>,
    name: String,
    pending: Option<Pending>,
    done: bool,
    /// Global interface index of each of this file's interfaces, assigned on first sight.
    iface_map: Vec<Option<u32>>,
    /// The pcapng section `iface_map` is for.
    section: u32,
    /// Time of its previous record, and records earlier than the one before them.
    last_ts: i64,
    backwards: u64,
}

/// Capture files merged by timestamp.
#[derive(Debug)]
pub struct Merged {
    inputs: Vec<Input>,
    /// Interfaces of all files, numbered in the order their first records came.
    interfaces: Vec<Interface>,
    /// The record handed out last (the caller borrows it until the next call).
    current: Pending,
    /// Files that failed (at their start or part-way): the merge goes on with the others and
    /// reports them at the end.
    failed: Vec<CaptureError>,
    /// A record buffer to reuse (the one handed out before the current).
    spare: Vec<u8>,
}

/// The name a capture point gets from its path: the file name, or the whole path when two
/// inputs share a file name.
pub fn point_names(paths: &[PathBuf]) -> Vec<String> {
    let short = |p: &Path| {
        if p == Path::new("-") {
            return String::from("stdin");
        }
        p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
    };
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            let s = short(p);
            if paths.iter().filter(|q| short(q) == s).count() > 1 && p != Path::new("-") {
                p.display().to_string()
            } else {
                s
            }
        })
        .collect();
    // The same file given twice: number the repeats.
    names
        .iter()
        .enumerate()
        .map(|(i, n)| match names[..i].iter().filter(|m| *m == n).count() {
            0 => n.clone(),
            k => format!("{n} #{}", k + 1),
        })
        .collect()
}

impl Merged {
    /// Open every file (`-` for standard input, at most once). Fails on the first file that
    /// cannot be opened at all (no such file, no permission), naming it. A file that opens but
    /// is damaged from its start (empty, not a capture, its header cut off or corrupt, a bad
    /// gzip stream) does not stop the others: it keeps its place as a capture point with no
    /// records, and its error is reported with the others' ([`Merged::take_errors`]).
    pub fn open(paths: &[PathBuf]) -> Result<Self, CaptureError> {
        Self::open_with(paths, CaptureReader::open_with_buffer)
    }

    /// [`Merged::open`], each file opened by `open` (its path and the read buffer it may
    /// take, as [`CaptureReader::open_with_buffer`] takes them): a caller that reads a pipe or
    /// FIFO its own way ([`CaptureReader::from_read_with_buffer`]) opens those itself.
    pub fn open_with(
        paths: &[PathBuf],
        mut open: impl FnMut(&Path, usize) -> Result<CaptureReader, CaptureError>,
    ) -> Result<Self, CaptureError> {
        if paths.iter().filter(|p| p.as_path() == Path::new("-")).count() > 1 {
            return Err(CaptureError::Io {
                source_name: PathBuf::from("-"),
                error: std::io::Error::other("standard input can be read only once"),
            });
        }
        if paths.len() > usize::from(u16::MAX) + 1 {
            // A record names its point in 16 bits.
            return Err(CaptureError::Io {
                source_name: PathBuf::from(format!("{} files", paths.len())),
                error: std::io::Error::other("at most 65536 files can be merged"),
            });
        }
        let names = point_names(paths);
        let mut inputs = Vec::with_capacity(paths.len());
        let mut failed = Vec::new();
        // 4 MiB of read buffers in all, at least 64 KiB each (they grow for larger records).
        let buffer = (4 << 20) / paths.len().max(1);
        for (path, name) in paths.iter().zip(names) {
            let reader = match open(path, buffer) {
                Ok(reader) => Some(reader),
                Err(e) if e.is_damaged_input() && paths.len() > 1 => {
                    failed.push(e);
                    None
                }
                Err(e) => return Err(e),
            };
            inputs.push(Input {
                done: reader.is_none(),
                reader,
                name,
                pending: None,
                iface_map: Vec::new(),
                section: 0,
                last_ts: i64::MIN,
                backwards: 0,
            });
        }
        let mut m =
            Merged { inputs, interfaces: Vec::new(), current: Pending::default(), failed, spare: Vec::new() };
        // Read each file's first record now, so the interfaces its header or first blocks
        // describe are known (and numbered file by file) before anything is written.
        m.fill();
        for i in 0..m.inputs.len() {
            let Some(input) = m.inputs.get_mut(i) else { continue };
            // The interfaces numbered here are those of the section the first record is in
            // (pcapng counts sections from 1): that record must not number them again.
            input.section = input.reader.as_ref().map_or(0, CaptureReader::sections);
            let n = input.reader.as_ref().map_or(0, |r| r.interfaces().len());
            for local in 0..n {
                m.global_interface(i, local, LinkType::ETHERNET, None);
            }
        }
        Ok(m)
    }

    /// The merged index of input `i`'s interface `local`, numbering it on first sight.
    fn global_interface(
        &mut self,
        i: usize,
        local: usize,
        link_type: LinkType,
        link_bps: Option<u64>,
    ) -> u32 {
        let Some(input) = self.inputs.get_mut(i) else { return 0 };
        if input.iface_map.len() <= local {
            input.iface_map.resize(local + 1, None);
        }
        if let Some(g) = input.iface_map.get(local).copied().flatten() {
            return g;
        }
        let g = self.interfaces.len() as u32;
        let mut ifc = input
            .reader
            .as_ref()
            .and_then(|r| r.interfaces().get(local))
            .cloned()
            .unwrap_or_else(|| Interface::live(&input.name, link_type, 262_144, link_bps));
        ifc.name = Some(match ifc.name {
            Some(n) if !n.is_empty() && n != input.name => format!("{}:{n}", input.name),
            _ => input.name.clone(),
        });
        self.interfaces.push(ifc);
        if let Some(slot) = input.iface_map.get_mut(local) {
            *slot = Some(g);
        }
        g
    }

    /// The capture points' names, in the order given (a record's `point` indexes this).
    pub fn point_names(&self) -> Vec<String> {
        self.inputs.iter().map(|i| i.name.clone()).collect()
    }

    /// Interfaces seen so far, numbered as records' `interface`.
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// Records with no captured byte the files held, passed over (not frames).
    pub fn empty_records(&self) -> u64 {
        self.inputs.iter().filter_map(|i| i.reader.as_ref()).map(CaptureReader::empty_records).sum()
    }

    /// Bytes read from all the files so far ([`CaptureReader::bytes_read`]).
    pub fn bytes_read(&self) -> u64 {
        self.inputs.iter().filter_map(|i| i.reader.as_ref()).map(CaptureReader::bytes_read).sum()
    }

    /// The capture counters each file recorded (pcapng Interface Statistics Blocks read so
    /// far), by capture point; files without any are left out.
    pub fn file_stats(&self) -> Vec<FileStats> {
        let point = |i: usize| u16::try_from(i).unwrap_or(u16::MAX);
        self.inputs
            .iter()
            .enumerate()
            .filter_map(|(i, input)| input.reader.as_ref().map(|r| (point(i), r)))
            .map(|(point, r)| FileStats {
                point,
                interfaces: r.interface_stats().to_vec(),
                damaged: r.damaged_stats(),
            })
            .filter(|f| !f.is_empty())
            .collect()
    }

    /// Files whose records are not in time order, with how many records came earlier than
    /// the one before them: the merge (like mergecap) and the loss matching assume order.
    pub fn out_of_order(&self) -> Vec<(String, u64)> {
        self.inputs.iter().filter(|i| i.backwards > 0).map(|i| (i.name.clone(), i.backwards)).collect()
    }

    /// Errors of files that failed, at their start or part-way (each names its file), the
    /// rest having been merged on.
    pub fn take_errors(&mut self) -> Vec<CaptureError> {
        std::mem::take(&mut self.failed)
    }

    /// Make sure every unfinished input has a pending record.
    fn fill(&mut self) {
        for input in &mut self.inputs {
            let Some(reader) = input.reader.as_mut().filter(|_| !input.done && input.pending.is_none())
            else {
                continue;
            };
            let mut slot = Pending { data: std::mem::take(&mut self.spare), ..Pending::default() };
            slot.data.clear();
            match reader.next_record() {
                Ok(Some(rec)) => {
                    slot.ts_ns = rec.ts_ns;
                    slot.caplen = rec.caplen;
                    slot.len = rec.len;
                    slot.link_type = rec.link_type;
                    slot.interface = rec.interface;
                    slot.link_bps = rec.link_bps;
                    slot.empty_before = rec.empty_before;
                    slot.data.extend_from_slice(rec.data);
                    slot.section = reader.sections();
                    if slot.ts_ns < input.last_ts {
                        input.backwards += 1;
                    }
                    input.last_ts = slot.ts_ns;
                    input.pending = Some(slot);
                }
                Ok(None) => input.done = true,
                Err(e) => {
                    input.done = true;
                    self.failed.push(e);
                }
            }
        }
    }

    /// The next record in time order across all files, or `None` at the end of all.
    pub fn next_record(&mut self) -> Option<Record<'_>> {
        self.fill();
        // Linear scan: a handful of files; ties go to the earlier file, so the merge is stable.
        let (point, _) = self
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(i, inp)| inp.pending.as_ref().map(|p| (i, p.ts_ns)))
            .min_by_key(|&(i, ts)| (ts, i))?;
        let input = self.inputs.get_mut(point)?;
        let mut pending = input.pending.take()?;
        // Reuse the buffers: the record handed out before becomes the next slot's.
        std::mem::swap(&mut self.current, &mut pending);
        self.spare = pending.data;
        let (local, lt, bps) =
            (self.current.interface as usize, self.current.link_type, self.current.link_bps);
        // A new pcapng section numbers its interfaces afresh: they are new interfaces.
        if input.section != self.current.section {
            input.section = self.current.section;
            input.iface_map.clear();
        }
        let global = self.global_interface(point, local, lt, bps);
        let c = &self.current;
        Some(Record {
            ts_ns: c.ts_ns,
            caplen: c.caplen,
            len: c.len,
            link_type: c.link_type,
            interface: global,
            link_bps: c.link_bps,
            point: u16::try_from(point).unwrap_or(u16::MAX),
            data: &c.data,
            // A file's empty records are numbered just before its next record (mergecap places
            // each by its own time: the same unless another file's record falls between).
            empty_before: c.empty_before,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::PcapWriter;

    fn write(path: &Path, times: &[i64], tag: u8) {
        let f = std::fs::File::create(path).unwrap();
        let mut w = PcapWriter::new(std::io::BufWriter::new(f), LinkType::ETHERNET, 65535).unwrap();
        for (i, t) in times.iter().enumerate() {
            let data = [tag, i as u8, 0, 0];
            w.write(*t, &data, 60).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn merges_by_time_and_tags_points() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.pcap");
        let b = dir.path().join("b.pcap");
        write(&a, &[10, 30, 50], 0xA);
        write(&b, &[20, 30, 40, 60], 0xB);
        let mut m = Merged::open(&[a, b]).unwrap();
        assert_eq!(m.point_names(), ["a.pcap", "b.pcap"]);
        let mut got = Vec::new();
        while let Some(r) = m.next_record() {
            got.push((r.ts_ns, r.point, r.data[0], r.interface));
        }
        assert_eq!(
            got,
            [
                (10, 0, 0xA, 0),
                (20, 1, 0xB, 1),
                (30, 0, 0xA, 0),
                (30, 1, 0xB, 1),
                (40, 1, 0xB, 1),
                (50, 0, 0xA, 0),
                (60, 1, 0xB, 1)
            ]
        );
        let names: Vec<_> = m.interfaces().iter().map(|i| i.name.clone().unwrap()).collect();
        assert_eq!(names, ["a.pcap", "b.pcap"]);
        assert!(m.take_errors().is_empty());
    }

    #[test]
    fn a_damaged_file_is_named_and_the_others_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.pcap");
        let b = dir.path().join("b.pcap");
        write(&a, &[10, 20, 30], 1);
        write(&b, &[15, 25], 2);
        // Cut a's last record in half.
        let bytes = std::fs::read(&a).unwrap();
        std::fs::write(&a, &bytes[..bytes.len() - 2]).unwrap();
        let mut m = Merged::open(&[a, b]).unwrap();
        let mut n = 0;
        while m.next_record().is_some() {
            n += 1;
        }
        assert_eq!(n, 4);
        let errors = m.take_errors();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("a.pcap: capture is cut off"), "{}", errors[0]);
    }

    #[test]
    fn same_file_names_keep_their_paths_and_stdin_only_once() {
        let names = point_names(&[PathBuf::from("h1/roce.pcap"), PathBuf::from("h2/roce.pcap")]);
        assert_eq!(names, ["h1/roce.pcap", "h2/roce.pcap"]);
        let e = Merged::open(&[PathBuf::from("-"), PathBuf::from("-")]).unwrap_err();
        assert!(e.to_string().contains("only once"), "{e}");
    }
}
