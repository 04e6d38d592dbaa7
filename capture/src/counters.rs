//! Capture counters, kept apart from live capture so that file-only builds (without the
//! `live` feature) can still write them to a pcapng file.

/// Capture counters from libpcap (a live capture's drops), written to pcapng as an
/// interface statistics block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Packets the filter accepted (libpcap `ps_recv`).
    pub received: u64,
    /// Dropped because the kernel buffer was full (`ps_drop`).
    pub kernel_dropped: u64,
    /// Dropped by the interface or driver (`ps_ifdrop`).
    pub if_dropped: u64,
}
