//! SIGINT and SIGTERM. The first asks the running command to stop: it finishes its files
//! and its output, and exits as it would at the end of its input. A second one ends the
//! process at once. So does one that arrives while the source is being opened: libpcap
//! compiles a capture filter on the calling thread and cannot be interrupted (a filter of
//! thousands of hosts takes many seconds), and there is nothing to finish yet. Ending at
//! once, the status is 128 + the signal's number, as a shell reports a process a signal
//! killed: 130 for SIGINT, 143 for SIGTERM.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

/// Set while [`opening`] runs: a signal then ends the process at once.
static OPENING: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Set by SIGINT and by SIGTERM (each its own): which signal asked to stop.
static GOT: LazyLock<[Arc<AtomicBool>; 2]> =
    LazyLock::new(|| [Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false))]);

/// The signal that asked the command to stop, if one did: its number (2 SIGINT, 15
/// SIGTERM; SIGINT when both came).
pub fn received() -> Option<i32> {
    [SIGINT, SIGTERM].into_iter().zip(GOT.iter()).find(|(_, f)| f.load(Ordering::SeqCst)).map(|(s, _)| s)
}

/// Install the handlers; the flag they set asks the command to stop.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for (sig, got) in [SIGINT, SIGTERM].into_iter().zip(GOT.iter()) {
        signal_hook::flag::register(sig, Arc::clone(got))?;
        let status = 128 + sig;
        // Handlers run in the order they were registered: the two checks see the state
        // from before this signal.
        signal_hook::flag::register_conditional_shutdown(sig, status, Arc::clone(&OPENING))?;
        signal_hook::flag::register_conditional_shutdown(sig, status, Arc::clone(&flag))?;
        signal_hook::flag::register(sig, Arc::clone(&flag))?;
    }
    let _ = INSTALLED.set(Arc::clone(&flag));
    Ok(flag)
}

/// The flag [`install`] made, for the parts of a command that read without being handed it.
static INSTALLED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

/// The flag a SIGINT or SIGTERM sets, once [`install`] has run.
pub fn stop_flag() -> Option<Arc<AtomicBool>> {
    INSTALLED.get().cloned()
}

/// Run `open` (opening the source) so that a SIGINT or SIGTERM meanwhile ends the process
/// at once rather than waiting for it.
pub fn opening<T>(open: impl FnOnce() -> T) -> T {
    OPENING.store(true, Ordering::SeqCst);
    let opened = open();
    OPENING.store(false, Ordering::SeqCst);
    opened
}

/// A run cut short by SIGINT or SIGTERM (its number) with nothing to show for it (compare:
/// no verdict from half a side): the command's error, mapped to 128 + the signal's number.
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.0 == SIGTERM { "SIGTERM" } else { "SIGINT" };
        write!(f, "interrupted by {name}: no verdict")
    }
}

impl std::error::Error for Interrupted {}
