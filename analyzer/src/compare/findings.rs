//! Findings as verdicts (docs/verdicts.md "Change verdicts", `finding_rose`): one rule over
//! the sides' per-kind finding counts, so that a finding kind added to the report joins the
//! gate without new code. A kind whose findings appear or grow beyond noise after the change
//! is a verdict as severe as its worst finding after, naming the kind and the counts.

use super::noise;
use super::profile::Profile;
use super::Verdict;
use crate::report::Severity;

/// Finding kinds a specific change verdict already says, with those verdicts: where one of
/// them was made, the generic verdict for the kind is dropped (the specific one wins).
const SAID_BY: &[(&str, &[&str])] = &[
    ("network_loss", &["loss_rose"]),
    ("timeout_retransmit", &["timeouts_rose"]),
    ("congestion", &["congestion_rose", "ecn_stopped"]),
    ("pfc_without_ecn", &["ecn_stopped"]),
    (
        "qos_violation",
        &["dscp_moved", "pcp_moved", "cnp_dscp_moved", "ack_dscp_moved", "class_left", "ecn_capable_stopped"],
    ),
    ("pcp_untagged", &["pcp_moved"]),
    ("marking_inconsistent", &["dscp_moved", "cnp_dscp_moved", "ack_dscp_moved"]),
    ("no_roce", &["roce_stopped"]),
    ("audit_no_roce", &["roce_stopped"]),
    ("capture_loss", &["side_capture_quality"]),
    ("points_unmatched", &["point_one_side"]),
    ("nccl_env_mismatch", &["nccl_now_mismatch"]),
];

/// Whether `after` findings in `after_traffic` RoCE packets are beyond the Poisson noise of
/// `before` findings in `before_traffic` (the counts normalised by the traffic when both
/// sides have some, so a longer capture with as many findings per packet is no rise).
pub fn grew(before: u64, before_traffic: u64, after: u64, after_traffic: u64) -> bool {
    let (tb, ta) = if before_traffic > 0 && after_traffic > 0 {
        (before_traffic as f64, after_traffic as f64)
    } else {
        (1.0, 1.0)
    };
    match (noise::poisson_rate(before, tb), noise::poisson_rate(after, ta)) {
        (Some(b), Some(a)) => a.lo > b.hi,
        _ => false,
    }
}

/// The verdicts on the sides' findings, after every other rule (whose verdicts in `out`
/// take precedence for the kinds they say). None when a side cannot say (a Parquet
/// directory holds no findings).
pub fn finding_verdicts(before: &Profile, after: &Profile, out: &mut Vec<Verdict>) {
    let (Some(fb), Some(fa)) = (&before.findings, &after.findings) else { return };
    let said = |kind: &str| {
        SAID_BY.iter().filter(|(k, _)| *k == kind).any(|(_, by)| out.iter().any(|v| by.contains(&v.kind)))
    };
    let mut made = Vec::new();
    for (kind, &na) in fa {
        let nb = fb.get(kind).copied().unwrap_or(0);
        let Some((sev, title)) = after.findings_worst.get(kind) else { continue };
        // Appearing is firm when the findings are (a WARNING or CRITICAL); otherwise, and
        // for a rise, only beyond noise.
        let firm = nb == 0 && *sev <= Severity::Warning;
        if na <= nb || !(firm || grew(nb, before.roce, na, after.roce)) || said(kind) {
            continue;
        }
        let per_million = |n: u64, t: u64| n as f64 * 1e6 / t as f64;
        let rate = if before.roce > 0 && after.roce > 0 && before.roce != after.roce && nb > 0 {
            format!(
                " ({:.1} → {:.1} per million RoCE packets)",
                per_million(nb, before.roce),
                per_million(na, after.roce)
            )
        } else {
            String::new()
        };
        let counts = if nb == 0 {
            format!("appeared: {na} after, none before")
        } else {
            format!("rose: {nb} → {na}{rate}")
        };
        let word = match sev {
            Severity::Critical => "CRITICAL",
            Severity::Warning => "WARNING",
            Severity::Info => "INFO",
        };
        made.push(Verdict {
            severity: *sev,
            kind: "finding_rose",
            // A report document made before findings' titles were read has none to quote.
            title: if title.is_empty() {
                format!("{kind} findings {counts} (worst {word})")
            } else {
                format!("{kind} findings {counts} (worst {word}: {title})")
            },
            point: None,
            priority: None,
            rests_on: vec!["findings"],
            weight: na,
            finding: Some(kind.clone()),
        });
    }
    out.extend(made);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_judged_per_packet() {
        assert!(grew(0, 1000, 10, 1000));
        assert!(!grew(0, 1000, 1, 1000), "one finding is within the noise of none");
        assert!(!grew(10, 1000, 20, 2000), "as many per packet in a capture twice as long");
        assert!(grew(10, 1000, 60, 1000));
    }
}
