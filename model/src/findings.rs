//! What is wrong: the report's `findings`, their kinds and severities, and the frames that
//! show them.

use serde::{Deserialize, Serialize};

/// Findings per severity.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct SeverityCounts {
    /// Critical.
    pub critical: u64,
    /// Warning.
    pub warning: u64,
    /// Info.
    pub info: u64,
}

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Hurts training now (loss, timeouts, storms, wrong class).
    Critical,
    /// Worth a look.
    Warning,
    /// Context.
    Info,
}

/// A frame that supports a finding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvidenceRef {
    /// Frame number.
    pub frame: u64,
    /// Its time.
    pub ts_ns: i64,
    /// What it shows.
    pub what: String,
}

/// What a finding is about: its machine-readable `kind` in the JSON report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Packets of a flow lost in the network: PSN gaps answered by NAK or resends.
    NetworkLoss,
    /// Resends with no NAK pending: the requester waited out its ACK timeout.
    TimeoutRetransmit,
    /// PSN gaps never NAKed or resent: probably lost by the capture, not the network.
    CaptureLoss,
    /// Packets that arrived late but within the reorder window.
    OutOfOrder,
    /// NAKs other than PSN sequence errors (access, operational, invalid request).
    NakError,
    /// Mellanox DC NAK-like syndromes (part of the DCT handshake).
    DcNak,
    /// Receiver-not-ready NAKs and the retries after them.
    Rnr,
    /// ECN-CE marked packets that no CNP answered.
    CeWithoutCnp,
    /// ECN-CE marks answered by CNPs: congestion control at work.
    Congestion,
    /// CNPs to one QP closer together than the configured NP pacing (`--cnp-pacing-us`).
    CnpTooFast,
    /// The sender's rate did not fall after most of the CNPs it received.
    CcNotReacting,
    /// A priority paused a large share of the capture while its ECN-capable RoCE carried no
    /// CE mark and drew no CNP: ECN off, or marking above the PFC threshold.
    PfcWithoutEcn,
    /// Many senders to one receiver at once (fan-in) with CE marks or pauses during it.
    Incast,
    /// One host finishes its data last in most training iterations (crate::rhythm).
    Straggler,
    /// Several busy QPs of one host pair share a UDP source port: ECMP cannot spread them
    /// (crate::ecmp).
    EcmpLowEntropy,
    /// The busiest ECMP path or uplink carries well over the mean, with elephants colliding
    /// on it: measured at the uplinks, or predicted by a modelled hash (crate::ecmp).
    EcmpImbalance,
    /// Frames whose ICRC does not match.
    IcrcBad,
    /// A MAC paused a priority for most of its storm windows.
    PfcStorm,
    /// A long continuous pause while the priority's RoCE towards the pausing side stopped.
    PfcDeadlock,
    /// RoCE kept arriving at a MAC on the priority it was pausing, beyond the response
    /// allowance: the peer ignores the pause (PFC off for that priority on the peer, or a
    /// priority mapping mismatch).
    PauseIgnored,
    /// 802.3x PAUSE frames (the whole link).
    LinkPause,
    /// Pauses on a priority no RoCE uses, or not a lossless one.
    PauseUnusedPriority,
    /// RoCE, CNPs or ACKs on a DSCP/PCP/ECN the expectations do not allow, or RoCE data on a
    /// priority that is not lossless.
    QosViolation,
    /// RoCE without a VLAN tag (so no PCP) while a PCP is expected.
    PcpUntagged,
    /// Audit expectations given, but no RoCE in the capture to check them on.
    AuditNoRoce,
    /// Frames to the RoCE port that did not decode as RoCE.
    Malformed,
    /// Frames the capture cut before their ICRC.
    Truncated,
    /// A capture with no RoCE in it.
    NoRoce,
    /// Capture points whose clocks never tied, or beyond the compared ones.
    PointsUnmatched,
    /// Packets one capture point saw and another, capturing the flow, never did.
    LostBetweenPoints,
    /// Resends with no NAK in the capture, sooner than an ACK timeout: cause not visible.
    ResendUnexplained,
    /// READs re-issued after their responses came out of sequence: READ responses lost.
    ImpliedNak,
    /// NAKs for packets that arrived late: go-back-N provoked by reordering.
    SpuriousNak,
    /// PSN gaps on UC QPs, which never resend: lost messages.
    UcLoss,
    /// Connections whose other direction (ACKs, NAKs, responses) is not in the capture.
    OneDirection,
    /// Frames in a tunnel the decoder recognised but did not unwrap: RoCE inside, if any,
    /// was not analysed.
    TunnelNotDecoded,
    /// The NIC's counters (`--counters`) and the capture disagree beyond what capture loss
    /// explains: the NIC counted pauses, CNPs or NAKs the capture never saw, or fewer than
    /// the capture shows for it.
    CountersDisagree,
    /// The NIC's PFC counters (`--counters`) moved on a priority no RoCE of the host travels
    /// on, and on none that it does: one side pauses one priority, RoCE travels on another.
    PfcPriorityMismatch,
    /// An `NCCL_IB_*` setting (`--nccl-env`) that the wire contradicts (crate::nccl).
    NcclEnvMismatch,
    /// With no DSCP/PCP expectation: the two ends of connections, or some hosts against
    /// the rest, mark their RoCE with values that have nothing in common (report::marking).
    MarkingInconsistent,
    /// The PSNs of a QP started over: a new life (a restarted job on reused QP numbers).
    QpRestart,
    /// A request on a PSN a READ reserved, or an ACK or NAK PSN outside the outstanding
    /// window: the requester's or the responder's PSN state is broken.
    PsnViolation,
    /// Requests outstanding, no ACK, no retry, and the QP silent for longer than its ACK
    /// timeout allows: a stuck QP (a hung job).
    QpStalled,
    /// One PSN retried as often as the retry count allows with no progress and no ACK: the
    /// QP goes to error (`IBV_WC_RETRY_EXC_ERR`).
    RetryExhausted,
}

impl FindingKind {
    /// Every kind, in the order the JSON schema lists them.
    pub const ALL: &'static [FindingKind] = &[
        FindingKind::NetworkLoss,
        FindingKind::TimeoutRetransmit,
        FindingKind::CaptureLoss,
        FindingKind::OutOfOrder,
        FindingKind::NakError,
        FindingKind::DcNak,
        FindingKind::Rnr,
        FindingKind::CeWithoutCnp,
        FindingKind::Congestion,
        FindingKind::IcrcBad,
        FindingKind::PfcStorm,
        FindingKind::PfcDeadlock,
        FindingKind::PauseIgnored,
        FindingKind::LinkPause,
        FindingKind::PauseUnusedPriority,
        FindingKind::QosViolation,
        FindingKind::PcpUntagged,
        FindingKind::AuditNoRoce,
        FindingKind::Malformed,
        FindingKind::Truncated,
        FindingKind::NoRoce,
        FindingKind::PointsUnmatched,
        FindingKind::LostBetweenPoints,
        FindingKind::ResendUnexplained,
        FindingKind::ImpliedNak,
        FindingKind::SpuriousNak,
        FindingKind::UcLoss,
        FindingKind::OneDirection,
        FindingKind::TunnelNotDecoded,
        FindingKind::CountersDisagree,
        FindingKind::PfcPriorityMismatch,
        FindingKind::CnpTooFast,
        FindingKind::CcNotReacting,
        FindingKind::PfcWithoutEcn,
        FindingKind::Incast,
        FindingKind::Straggler,
        FindingKind::EcmpLowEntropy,
        FindingKind::EcmpImbalance,
        FindingKind::NcclEnvMismatch,
        FindingKind::MarkingInconsistent,
        FindingKind::QpRestart,
        FindingKind::PsnViolation,
        FindingKind::QpStalled,
        FindingKind::RetryExhausted,
    ];

    /// The JSON name (`network_loss`, `pfc_storm`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::NetworkLoss => "network_loss",
            FindingKind::TimeoutRetransmit => "timeout_retransmit",
            FindingKind::CaptureLoss => "capture_loss",
            FindingKind::OutOfOrder => "out_of_order",
            FindingKind::NakError => "nak_error",
            FindingKind::DcNak => "dc_nak",
            FindingKind::Rnr => "rnr",
            FindingKind::CeWithoutCnp => "ce_without_cnp",
            FindingKind::Congestion => "congestion",
            FindingKind::IcrcBad => "icrc_bad",
            FindingKind::PfcStorm => "pfc_storm",
            FindingKind::PfcDeadlock => "pfc_deadlock",
            FindingKind::PauseIgnored => "pause_ignored",
            FindingKind::LinkPause => "link_pause",
            FindingKind::PauseUnusedPriority => "pause_unused_priority",
            FindingKind::QosViolation => "qos_violation",
            FindingKind::PcpUntagged => "pcp_untagged",
            FindingKind::AuditNoRoce => "audit_no_roce",
            FindingKind::Malformed => "malformed",
            FindingKind::Truncated => "truncated",
            FindingKind::NoRoce => "no_roce",
            FindingKind::PointsUnmatched => "points_unmatched",
            FindingKind::LostBetweenPoints => "lost_between_points",
            FindingKind::ResendUnexplained => "resend_unexplained",
            FindingKind::ImpliedNak => "implied_nak",
            FindingKind::SpuriousNak => "spurious_nak",
            FindingKind::UcLoss => "uc_loss",
            FindingKind::OneDirection => "one_direction",
            FindingKind::TunnelNotDecoded => "tunnel_not_decoded",
            FindingKind::CountersDisagree => "counters_disagree",
            FindingKind::PfcPriorityMismatch => "pfc_priority_mismatch",
            FindingKind::CnpTooFast => "cnp_too_fast",
            FindingKind::CcNotReacting => "cc_not_reacting",
            FindingKind::PfcWithoutEcn => "pfc_without_ecn",
            FindingKind::Incast => "incast",
            FindingKind::Straggler => "straggler",
            FindingKind::EcmpLowEntropy => "ecmp_low_entropy",
            FindingKind::EcmpImbalance => "ecmp_imbalance",
            FindingKind::NcclEnvMismatch => "nccl_env_mismatch",
            FindingKind::MarkingInconsistent => "marking_inconsistent",
            FindingKind::QpRestart => "qp_restart",
            FindingKind::PsnViolation => "psn_violation",
            FindingKind::QpStalled => "qp_stalled",
            FindingKind::RetryExhausted => "retry_exhausted",
        }
    }

    /// Whether the verdict needs every packet of the capture: it rests on a packet being
    /// absent (a PSN gap, no CNP, no reverse direction, no RoCE on a priority) or on the
    /// order of consecutive packets (resend causes, reordering, continuous pauses). Such
    /// findings are not made on a sampled capture (docs/verdicts.md "Sampled captures").
    pub fn needs_every_packet(self) -> bool {
        matches!(
            self,
            FindingKind::NetworkLoss
                | FindingKind::TimeoutRetransmit
                | FindingKind::CaptureLoss
                | FindingKind::OutOfOrder
                | FindingKind::CeWithoutCnp
                | FindingKind::PfcStorm
                | FindingKind::PfcDeadlock
                | FindingKind::PointsUnmatched
                | FindingKind::LostBetweenPoints
                | FindingKind::ResendUnexplained
                | FindingKind::ImpliedNak
                | FindingKind::SpuriousNak
                | FindingKind::UcLoss
                | FindingKind::OneDirection
                | FindingKind::CnpTooFast
                | FindingKind::CcNotReacting
                | FindingKind::PfcWithoutEcn
                | FindingKind::Straggler
                | FindingKind::QpRestart
                | FindingKind::QpStalled
                | FindingKind::RetryExhausted
        )
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for FindingKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// Machine-readable kind (e.g. `network_loss`, `pfc_storm`).
    pub kind: FindingKind,
    /// What is wrong and where, in a sentence.
    pub title: String,
    /// The flow (index into `flows`), when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<usize>,
    /// The source MAC and priority, for pause findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_mac: Option<String>,
    /// Priority, for pause findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// Frames that show it.
    pub evidence: Vec<EvidenceRef>,
    /// How much it weighs (packets or frames affected), for ordering.
    pub weight: u64,
    /// A summary of this many findings of its kind that are not listed one by one (more
    /// than `Config::findings_per_kind` of them): its weight is theirs summed, its severity
    /// the worst of theirs, its evidence the heaviest of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<u64>,
}

impl Finding {
    /// A finding about the capture as a whole (no flow, MAC or priority), not folded.
    pub fn about_capture(
        severity: Severity,
        kind: FindingKind,
        title: String,
        evidence: Vec<EvidenceRef>,
        weight: u64,
    ) -> Finding {
        Finding {
            severity,
            kind,
            title,
            flow: None,
            src_mac: None,
            priority: None,
            evidence,
            weight,
            folded: None,
        }
    }
}
