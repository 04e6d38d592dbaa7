//! Small files read whole (a baseline, NIC counter files, sysfs attributes): regular files
//! only, and at most a given number of bytes, so that `/dev/zero`, a FIFO, a directory or a
//! huge file is refused with a clear error instead of read until memory runs out or waited
//! on forever (docs/reliability.md, issue 26 item 6).
//!
//! The file is checked from its metadata before it is opened (a FIFO is never opened, as
//! opening one for reading waits for a writer), opened without blocking, checked again on the
//! open handle (a path swapped for a FIFO or device in between is caught), and read through
//! `take(limit + 1)`, so a file that grows while it is read cannot pass the limit either.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// Most bytes a baseline or counter file may hold: 4 MiB. A baseline is a few lines; an
/// `ethtool -S` dump of a 400G NIC is under 100 kB, `rdma statistic` output a few more, so
/// this leaves room for many snapshots while no such file can take the memory of the
/// analysis (a 60 MB counter file took 1 GB).
pub const SMALL_FILE_LIMIT: u64 = 4 << 20;

/// Most bytes a sysfs attribute may hold (the kernel gives at most a page).
pub const SYSFS_LIMIT: u64 = 64 << 10;

/// The bytes of `path`, `what` naming it in errors (`baseline`, `counter file`): refused
/// when it is not a regular file or holds more than `limit` bytes. Every error names the
/// file (escaped, [`crate::text::path`]) and, for a size, the limit.
pub fn read_small(path: &Path, what: &str, limit: u64) -> io::Result<Vec<u8>> {
    let name = crate::text::path(path);
    let fail = |e: io::Error| io::Error::new(e.kind(), format!("cannot read {what} {name}: {e}"));
    check(&std::fs::metadata(path).map_err(fail)?, what, &name, limit)?;
    let file = open_nonblocking(path).map_err(fail)?;
    check(&file.metadata().map_err(fail)?, what, &name, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(fail)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} {name} grew past the {limit} bytes a {what} may have while it was read"),
        ));
    }
    Ok(bytes)
}

/// Open `path` for reading if it is a regular file, whatever its size, `what` naming it in
/// errors (`Parquet table`): checked as [`read_small`] checks, before opening (a FIFO is
/// never opened) and on the handle opened without blocking, so that a FIFO, device or
/// directory in a file's place is refused at once rather than waited on or read for ever.
/// For a file read in pieces by a library that wants the handle (the Parquet tables).
pub fn open_regular(path: &Path, what: &str) -> io::Result<File> {
    let name = crate::text::path(path);
    let fail = |e: io::Error| io::Error::new(e.kind(), format!("cannot read {what} {name}: {e}"));
    check(&std::fs::metadata(path).map_err(fail)?, what, &name, u64::MAX)?;
    let file = open_nonblocking(path).map_err(fail)?;
    check(&file.metadata().map_err(fail)?, what, &name, u64::MAX)?;
    Ok(file)
}

/// A regular file of at most `limit` bytes, or the error that says what it is instead.
fn check(meta: &Metadata, what: &str, name: &str, limit: u64) -> io::Result<()> {
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{what} {name} is not a regular file (a directory, device or FIFO): give the file itself"
            ),
        ));
    }
    if meta.len() > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} {name} holds {} bytes, more than the {limit} a {what} may have", meta.len()),
        ));
    }
    Ok(())
}

/// Open for reading without waiting: a FIFO put in the file's place after the first check
/// opens at once (and is then refused) rather than waiting for a writer. A regular file's
/// reads ignore the flag.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    opts.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_large_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let small = dir.path().join("small.txt");
        std::fs::write(&small, b"roce_dscp = 26\n").unwrap();
        assert_eq!(read_small(&small, "baseline", 1024).unwrap(), b"roce_dscp = 26\n");
        let exact = dir.path().join("exact.txt");
        std::fs::write(&exact, vec![b'y'; 1024]).unwrap();
        assert_eq!(read_small(&exact, "baseline", 1024).unwrap().len(), 1024);
        let e = read_small(&big, "baseline", 1024).unwrap_err().to_string();
        assert!(e.contains("big.txt holds 2048 bytes, more than the 1024 a baseline"), "{e}");
        let e = read_small(Path::new("/dev/zero"), "counter file", 1024).unwrap_err().to_string();
        assert!(e.contains("/dev/zero is not a regular file"), "{e}");
        let e = read_small(dir.path(), "counter file", 1024).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_small(&dir.path().join("missing"), "counter file", 1024).unwrap_err().to_string();
        assert!(e.starts_with("cannot read counter file ") && e.contains("missing"), "{e}");
    }

    /// A FIFO is refused without being opened: opening it for reading would wait for a
    /// writer, and reading it would go on as long as the writer writes.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let e = read_small(&fifo, "counter file", 1024).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = open_regular(&fifo, "Parquet table").unwrap_err().to_string();
        assert!(e.contains("Parquet table") && e.contains("not a regular file"), "{e}");
        // The handle check: a FIFO opened without blocking is refused on its own metadata.
        let f = open_nonblocking(&fifo).unwrap();
        assert!(check(&f.metadata().unwrap(), "counter file", "fifo", 1024).is_err());
    }
}
