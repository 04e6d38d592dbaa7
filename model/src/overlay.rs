//! VXLAN/Geneve VTEP pairs carrying the fabric's traffic (the report's `overlay`).

use serde::{Deserialize, Serialize};

/// A VTEP pair of an overlay, as the report gives it (`overlay[]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VtepPairReport {
    /// Capture point.
    pub point: u16,
    /// The lower VTEP address.
    pub vtep_a: String,
    /// The higher one.
    pub vtep_b: String,
    /// Tunnelled frames from `vtep_a` to `vtep_b`.
    pub frames_ab: u64,
    /// And back.
    pub frames_ba: u64,
    /// Of all those, RoCE frames.
    pub roce: u64,
    /// Outer DSCPs of the RoCE frames.
    pub outer_dscp: Vec<u8>,
    /// RoCE frames CE-marked in the outer header (by the underlay).
    pub outer_ce: u64,
    /// RoCE frames CE-marked in the inner header (before the ingress VTEP, or copied in).
    pub inner_ce: u64,
    /// CNPs carried.
    pub cnps: u64,
}
