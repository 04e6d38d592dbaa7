//! Files written under a temporary name and renamed into place when complete (`report
//! --parquet`, `man --dir`), so that no one sees a partial file and no planted link can
//! redirect the write (docs/reliability.md, issue 26 item 3).
//!
//! A temporary file is `.NAME.PID.RANDOM SUFFIX` in the destination's directory, created
//! exclusively (`O_EXCL`: a file or symlink already at the name makes the creation fail and
//! another random name is tried; nothing is followed), and locked (`flock`) for as long as
//! its writer lives. The rename replaces whatever is at the final name, a symlink included,
//! without writing through it. Leftovers of runs that died are removed by the next run:
//! those whose process no longer runs and whose lock nobody holds (a run in another PID
//! namespace sharing the directory still holds its lock).

use rustix::fs::{flock, FlockOperation, Mode, OFlags};
use std::fs::File;
use std::io;
use std::path::Path;

/// A temporary file being written: removed when dropped before [`Temp::persist`].
pub struct Temp {
    /// The file, open for writing.
    pub file: File,
    /// Its name; removes the file when dropped.
    pub path: tempfile::TempPath,
    /// Another handle on the same open file, holding the lock until the rename is done (the
    /// writer may close `file` first).
    lock: File,
}

impl Temp {
    /// Create `.NAME.PID.RANDOM SUFFIX` in `dir` exclusively, readable as `File::create`
    /// would make it (the umask decides), and lock it.
    pub fn create(dir: &Path, name: &str, suffix: &str) -> io::Result<Temp> {
        let (file, path) = tempfile::Builder::new()
            .prefix(&format!(".{name}.{}.", std::process::id()))
            .suffix(suffix)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir)?
            .into_parts();
        let lock = file.try_clone()?;
        // A file system without flock leaves the file unlocked: cleanup then keeps it.
        let _ = flock(&lock, FlockOperation::NonBlockingLockExclusive);
        Ok(Temp { file, path, lock })
    }

    /// Give the file its final name `to` (a rename: whatever is there, a symlink included, is
    /// replaced, never written through), then let the lock go.
    pub fn persist(self, to: &Path) -> io::Result<()> {
        let Temp { file, path, lock } = self;
        drop(file);
        path.persist(to).map_err(|e| e.error)?;
        drop(lock);
        Ok(())
    }
}

/// Remove from `dir` the temporary files `.NAME…PID.RANDOM SUFFIX` (`NAME` starting with
/// `start`) that runs which died left behind: their process no longer runs and no one holds
/// their lock. A running process's file is left alone; a symlink is removed as a link, never
/// followed. Errors are ignored: a leftover that stays is only clutter.
pub fn remove_dead_leftovers(dir: &Path, start: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let start = format!(".{start}");
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(body) = name.strip_prefix(&start).and_then(|n| n.strip_suffix(suffix)) else {
            continue;
        };
        // NAME.PID.RANDOM: the pid is the part before the random one.
        let mut parts = body.rsplitn(3, '.');
        let (Some(_random), Some(pid), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<i32>() else { continue };
        if !is_running(pid) && !in_use(&e.path()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether process `pid` runs (or may: only "no such process" says it does not).
fn is_running(pid: i32) -> bool {
    if u32::try_from(pid).is_ok_and(|p| p == std::process::id()) {
        return true;
    }
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => !matches!(rustix::process::test_kill_process(p), Err(rustix::io::Errno::SRCH)),
        None => true,
    }
}

/// Whether someone holds the lock of the file at `path` (opened without following a link
/// and without waiting: a symlink or a FIFO at the name is no writer's file).
fn in_use(path: &Path) -> bool {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd)
            if rustix::fs::fstat(&fd)
                .is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_file()) =>
        {
            flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err()
        }
        Ok(_) => false,
        Err(rustix::io::Errno::LOOP) => false,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leftover is removed only when its process is gone and its lock is free: a live
    /// writer's file (this process's, or one whose lock is held) stays.
    #[test]
    fn only_dead_unlocked_leftovers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let live = Temp::create(dir.path(), "t-live", ".x.tmp").unwrap();
        // A "dead" PID whose file is still locked (a run in another PID namespace).
        let foreign = dir.path().join(".t-foreign.2147483646.abc.x.tmp");
        let held = File::create(&foreign).unwrap();
        flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
        let dead = dir.path().join(".t-dead.2147483646.def.x.tmp");
        std::fs::write(&dead, b"partial").unwrap();
        let other = dir.path().join(".u-dead.2147483646.ghi.x.tmp");
        std::fs::write(&other, b"not ours").unwrap();
        remove_dead_leftovers(dir.path(), "t-", ".x.tmp");
        assert!(live.path.exists() && foreign.exists() && other.exists());
        assert!(!dead.exists());
        drop(held);
        remove_dead_leftovers(dir.path(), "t-", ".x.tmp");
        assert!(!foreign.exists() && live.path.exists());
        let to = dir.path().join("final");
        live.persist(&to).unwrap();
        assert!(to.exists());
    }
}
