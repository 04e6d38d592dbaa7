//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use rocescope_capture::CaptureReader;
use rocescope_decoder::ext::AethKind;
use rocescope_decoder::{decode, DecodeOptions, IcrcStatus, MacControl, RoceVersion};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/real-captures`, or `$ROCESCOPE_REAL_CAPTURES`, when present.
pub fn real_captures() -> Option<PathBuf> {
    let dir = std::env::var_os("ROCESCOPE_REAL_CAPTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/real-captures"));
    if dir.join("INDEX.md").is_file() {
        Some(dir)
    } else {
        eprintln!("skipping: no real captures at {} (set ROCESCOPE_REAL_CAPTURES)", dir.display());
        None
    }
}

/// Every capture file in `dir` (pcap, pcapng, dump).
pub fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("pcap" | "pcapng" | "dump")));
    v.sort();
    v
}

/// Decode-level counts over a capture, with the same meaning as the samples' expectations
/// and the real captures' INDEX.md columns.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub frames: u64,
    pub roce_v2: u64,
    pub roce_v1: u64,
    pub cnp: u64,
    pub pfc: u64,
    pub pause: u64,
    pub naks: u64,
    pub icrc_valid: u64,
    /// Of `icrc_valid`, the RoCEv1 frames.
    pub icrc_valid_v1: u64,
    pub icrc_invalid: u64,
    pub icrc_truncated: u64,
    pub malformed: u64,
    pub opcodes: BTreeMap<String, u64>,
}

/// Decode a whole file (panics on a read error: the inputs here are well-formed).
pub fn count(path: &Path) -> Counts {
    let opts = DecodeOptions::default();
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut c = Counts::default();
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        c.frames += 1;
        let p = decode(rec.link_type, rec.data, &opts);
        if let Some(roce) = p.roce_ok() {
            match roce.version {
                RoceVersion::V1 => c.roce_v1 += 1,
                RoceVersion::V2 => c.roce_v2 += 1,
            }
            if roce.bth.opcode().is_cnp() {
                c.cnp += 1;
            }
            if roce.ext.aeth.is_some_and(|a| matches!(a.kind(), AethKind::Nak | AethKind::RnrNak)) {
                c.naks += 1;
            }
            match roce.icrc.status {
                IcrcStatus::Valid => {
                    c.icrc_valid += 1;
                    if roce.version == RoceVersion::V1 {
                        c.icrc_valid_v1 += 1;
                    }
                }
                IcrcStatus::Invalid => c.icrc_invalid += 1,
                IcrcStatus::Truncated => c.icrc_truncated += 1,
                IcrcStatus::NotApplicable => {}
            }
            *c.opcodes.entry(roce.bth.opcode().name(opts.opcode).to_string()).or_default() += 1;
        }
        if p.is_malformed_roce() {
            c.malformed += 1;
        }
        match p.mac_control {
            Some(MacControl::Pfc(_)) => c.pfc += 1,
            Some(MacControl::Pause(_)) => c.pause += 1,
            _ => {}
        }
    }
    c
}

/// Every bundled sample, by file stem.
pub const SAMPLES: &[&str] = &[
    "rc-normal",
    "nak-gobackn",
    "rnr",
    "ecn-cnp",
    "pfc-storm",
    "qos-mismatch",
    "ipv6",
    "atomics",
    "ud",
    "bad-icrc",
    "truncated",
    "all-headers",
    "demo",
];
