//! The trace's slices and instants as the recorder keeps them: one small value each, so a
//! cap of millions stays within a few hundred megabytes.

/// What an [`Event`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// A message: its packets from the First to the Last (or an Only), a slice.
    #[default]
    Message = 0,
    /// A message whose Last never came (lost, or past the end of the capture), a slice.
    Partial = 1,
    /// A packet sent again, an instant.
    Resend = 2,
    /// A NAK or RNR NAK, an instant.
    Nak = 3,
    /// The ACK timer's expiry, seen as a pass of resends with no NAK before it, an instant.
    AckTimeout = 4,
    /// A CNP, an instant.
    Cnp = 5,
}

impl Kind {
    /// Kinds there are.
    pub const COUNT: usize = 6;
    /// Every kind, by index.
    pub const ALL: [Kind; Kind::COUNT] =
        [Kind::Message, Kind::Partial, Kind::Resend, Kind::Nak, Kind::AckTimeout, Kind::Cnp];

    /// Its key in the trace's counts (`otherData.rocescope.events`, `.dropped`).
    pub const fn key(self) -> &'static str {
        match self {
            Kind::Message => "messages",
            Kind::Partial => "incomplete_messages",
            Kind::Resend => "resends",
            Kind::Nak => "naks",
            Kind::AckTimeout => "ack_timeouts",
            Kind::Cnp => "cnps",
        }
    }

    /// Its `cat` in the trace (what the viewers filter on).
    pub const fn category(self) -> &'static str {
        match self {
            Kind::Message | Kind::Partial => "message",
            Kind::Resend => "resend",
            Kind::Nak => "nak",
            Kind::AckTimeout => "timeout",
            Kind::Cnp => "cnp",
        }
    }
}

/// Why a packet was sent again (the report's `psn.retransmits_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A NAK was pending (`retransmits_nak`, not RNR, not spurious).
    Nak = 0,
    /// An RNR NAK was pending (`retransmits_rnr`).
    Rnr = 1,
    /// A NAK for a packet that arrived late (`retransmits_spurious`).
    SpuriousNak = 2,
    /// A READ re-issued after out-of-sequence responses (`retransmits_implied`).
    ImpliedNak = 3,
    /// The ACK timeout (`retransmits_timeout`).
    Timeout = 4,
    /// No NAK in the capture, too soon for a timeout (`retransmits_unknown`).
    Unknown = 5,
}

impl Cause {
    /// Every cause, by its value.
    pub const ALL: [Cause; 6] =
        [Cause::Nak, Cause::Rnr, Cause::SpuriousNak, Cause::ImpliedNak, Cause::Timeout, Cause::Unknown];

    /// Its name in the trace (`args.cause`).
    pub const fn name(self) -> &'static str {
        match self {
            Cause::Nak => "nak",
            Cause::Rnr => "rnr_nak",
            Cause::SpuriousNak => "spurious_nak",
            Cause::ImpliedNak => "implied_nak",
            Cause::Timeout => "timeout",
            Cause::Unknown => "unknown",
        }
    }
}

/// A NAK's syndrome (the report's `naks` keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nak {
    /// PSN sequence error.
    PsnSeqErr = 0,
    /// Invalid request.
    InvalidRequest = 1,
    /// Remote access error.
    RemoteAccess = 2,
    /// Remote operational error.
    RemoteOperational = 3,
    /// Invalid RD request.
    InvalidRd = 4,
    /// Any other code.
    Other = 5,
    /// Receiver not ready.
    Rnr = 6,
}

impl Nak {
    /// Every syndrome, in the order of the analyzer's counts (`by_code`, then RNR).
    pub const ALL: [Nak; 7] = [
        Nak::PsnSeqErr,
        Nak::InvalidRequest,
        Nak::RemoteAccess,
        Nak::RemoteOperational,
        Nak::InvalidRd,
        Nak::Other,
        Nak::Rnr,
    ];

    /// Its name in the trace (`args.syndrome`, as the report's `naks` key).
    pub const fn name(self) -> &'static str {
        match self {
            Nak::PsnSeqErr => "psn_seq_err",
            Nak::InvalidRequest => "invalid_request",
            Nak::RemoteAccess => "remote_access",
            Nak::RemoteOperational => "remote_operational",
            Nak::InvalidRd => "invalid_rd",
            Nak::Other => "other",
            Nak::Rnr => "rnr",
        }
    }
}

/// One slice or instant on a QP's track.
#[derive(Clone, Copy, Debug, Default)]
pub struct Event {
    /// When (a slice: its first packet), ns since the epoch.
    pub ts_ns: i64,
    /// A slice's length (to its last packet), ns.
    pub dur_ns: i64,
    /// The frame (a slice: its first packet's; 0 for what changed after the last frame).
    pub frame: u64,
    /// A message's payload bytes.
    pub bytes: u64,
    /// The flow (index into the report's `flows`).
    pub flow: u32,
    /// The packet's PSN (a slice: its first packet's).
    pub psn: u32,
    /// A slice's last packet's PSN.
    pub psn_last: u32,
    /// A message's packets.
    pub packets: u32,
    /// Packets it stands for in a sampled capture (1 otherwise).
    pub weight: u32,
    /// What it is.
    pub kind: Kind,
    /// A slice's last opcode; a resend's [`Cause`]; a NAK's [`Nak`].
    pub code: u8,
    /// A slice's first opcode.
    pub first_opcode: u8,
}
