//! Small input files read whole (`--baseline`, `--counters`): regular files only, and at most
//! [`SMALL_FILE_LIMIT`] bytes, so that `/dev/zero`, a FIFO or a huge file is refused with a
//! clear error instead of read until memory runs out (docs/reliability.md).

use anyhow::Context;
use std::io::Read;
use std::path::Path;

/// Most bytes a baseline or counters file may hold: 4 MiB. A baseline is a few lines; an
/// `ethtool -S` dump of a 400G NIC is under 100 kB, `rdma statistic` output a few more, so
/// this leaves room for many snapshots while no file can take the memory of the analysis.
pub const SMALL_FILE_LIMIT: u64 = 4 << 20;

/// The bytes of `path`, `what` naming it in errors (`baseline`, `counter file`): refused
/// when it is not a regular file or holds more than `limit` bytes, checked before reading and
/// while reading (a file that grows cannot pass the limit either).
pub fn read_small(path: &Path, what: &str, limit: u64) -> anyhow::Result<Vec<u8>> {
    let name = rocescope_capture::text::path(path);
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {what} {name}"))?;
    if !meta.is_file() {
        anyhow::bail!(
            "{what} {name} is not a regular file (a directory, device or FIFO): give the file itself"
        );
    }
    if meta.len() > limit {
        anyhow::bail!("{what} {name} holds {} bytes, more than the {} a {what} may have", meta.len(), limit);
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {what} {name}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).with_context(|| format!("cannot read {what} {name}"))?;
    if bytes.len() as u64 > limit {
        anyhow::bail!("{what} {name} grew past the {limit} bytes a {what} may have while it was read");
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let small = dir.path().join("small.txt");
        std::fs::write(&small, b"roce_dscp = 26\n").unwrap();
        assert_eq!(read_small(&small, "baseline", 1024).unwrap(), b"roce_dscp = 26\n");
        let e = read_small(&big, "baseline", 1024).unwrap_err().to_string();
        assert!(e.contains("2048 bytes, more than the 1024"), "{e}");
        let e = read_small(Path::new("/dev/zero"), "counter file", 1024).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_small(dir.path(), "counter file", 1024).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
