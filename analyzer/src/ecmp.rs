//! ECMP: how the capture's data flows spread over equal-cost paths (docs/verdicts.md "ECMP").
//!
//! RoCEv2 carries no flow entropy of its own but the UDP source port its NIC sets per QP
//! (field notes, "ECMP hash collisions"); a switch hashes the 5-tuple (or, with E-ECMP, the
//! 5-tuple and the RoCE destination QP through UDF fields) to pick one of its equal-cost
//! paths. Everything here is computed at the end of the capture from the flows (their
//! `key`, `bytes`, `payload_bytes` and `udp_sport*`), nothing per frame:
//!
//! - **Entropy** per host pair (point, source, destination) and per source host: the data
//!   QPs, their distinct source ports, and the Shannon entropy in bits of the **bytes** over
//!   the ports ([`entropy_bits`]). Bytes, not QPs, because ECMP balances bytes on links: a
//!   pair with eight QPs on eight ports whose bytes are all on one QP spreads no better than
//!   one port. Beside it `qp_entropy_bits`, the same over the QPs: the most the ports could
//!   give with these QPs (merging QPs onto a port can only lower it).
//! - **Elephants**: data flows ranked by bytes, the share of the top [`TOP_ELEPHANTS`] and
//!   how many flows carry [`ELEPHANT_SHARE`] of the bytes.
//! - **Where ECMP puts them** (`--ecmp-paths`, `--ecmp-hash`): a model of a switch hash
//!   ([`EcmpHash`]) assigns each data flow to a path; the report gives each path's bytes,
//!   the busiest over the mean, and the elephants that collide. With `--uplinks` the same
//!   figures are measured at the capture points that are a switch's uplinks.
//!
//! The capture sees ports, not the switch's hash: a prediction holds only when the switch
//! hashes the fields [`EcmpHash`] models, with the same function and seed, and the same
//! bits of the result pick the path; adaptive routing, packet spraying and flowlet switching
//! move flows whatever their ports.

pub use rocescope_model::ecmp::{
    Collision, EcmpReport, Elephant, ElephantsReport, HashFit, HostEntropy, PairEntropy, PathLoad,
    PathPrediction, UplinkLoad, UplinkReport,
};
use serde::Serialize;
use std::net::IpAddr;

/// A data QP is **busy** (an elephant) when it carried at least this many wire bytes in the
/// capture: 1 MiB, 84 µs of a 100 Gb/s link. Smaller QPs cannot hold a path for long, and
/// the real test captures' largest data QPs carry 200 kB (`rdma-nccl2.pcap`).
pub const BUSY_MIN_BYTES: u64 = 1 << 20;

/// Busy QPs of one host pair on one UDP source port that make `ecmp_low_entropy`: 4. Two
/// QPs on one port of 16,384 are already unlikely by chance, but cost little; four are what
/// a NIC that sets one port on every QP shows under NCCL's several QPs per peer, and as many
/// paths as a leaf commonly has to its spines.
pub const LOW_ENTROPY_MIN_QPS: u32 = 4;

/// The busiest path over the mean path that makes `ecmp_imbalance`: 1.5. Its flows then get
/// at most two thirds of what an even spread would give them when the paths are full.
pub const IMBALANCE_RATIO: f64 = 1.5;

/// Elephants listed in the report.
pub const TOP_ELEPHANTS: usize = 10;

/// The share of the data bytes whose flows are counted (`elephants.flows_for_share`).
pub const ELEPHANT_SHARE: f64 = 0.8;

/// Host pairs and hosts listed (the busiest first); the rest are counted.
pub const LISTED: usize = 32;

/// Elephants named per path or uplink.
pub const NAMED: usize = 8;

/// The UDP destination port of RoCEv2 in the modelled 5-tuple (IANA, reference §1.2).
pub const ROCE_PORT: u16 = 4791;

/// Most paths a prediction models.
pub const MAX_PATHS: u16 = 1024;

/// The ECMP settings of the analysis (`--ecmp-paths`, `--ecmp-hash`, `--uplinks`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EcmpConfig {
    /// Paths to predict over; `None`: no prediction (unless uplinks are given, then as many
    /// paths as uplinks).
    pub paths: Option<u16>,
    /// The hash the prediction models.
    pub hash: EcmpHash,
    /// Names of the capture points that are a switch's uplinks (a point's name, or its file
    /// name without the extension).
    pub uplinks: Vec<String>,
}

/// A switch hash function, as the switch SDKs name them (OpenBCM's RTAG7 functions,
/// FBOSS's `HashingAlgorithm`, SAI's `SAI_HASH_ALGORITHM_*`; docs/verdicts.md "ECMP").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashFn {
    /// CRC-16 with the BISYNC polynomial 0x8005, MSB first (CRC-16/UMTS).
    Crc16,
    /// CRC-16-CCITT, polynomial 0x1021, initial value 0xFFFF (CRC-16/IBM-3740).
    Crc16Ccitt,
    /// The low 16 bits of a CRC-32C (Castagnoli, as OpenBCM's RTAG7 model computes
    /// `CRC32_LO`).
    Crc32Lo,
    /// Its high 16 bits.
    Crc32Hi,
    /// The low 16 bits of the Ethernet CRC-32 (CRC-32/ISO-HDLC).
    Crc32EthLo,
    /// Its high 16 bits.
    Crc32EthHi,
    /// The low 16 bits of a CRC-32 with Koopman's polynomial 0x741B8CD7 (CRC-32/MEF).
    Crc32KoopmanLo,
    /// Its high 16 bits.
    Crc32KoopmanHi,
    /// The 16-bit words of the key XORed together.
    Xor16,
    /// That folded to 8 bits.
    Xor8,
}

impl HashFn {
    /// Every function, in the order `--ecmp-hash` lists them.
    pub const ALL: &'static [HashFn] = &[
        HashFn::Crc16,
        HashFn::Crc16Ccitt,
        HashFn::Crc32Lo,
        HashFn::Crc32Hi,
        HashFn::Crc32EthLo,
        HashFn::Crc32EthHi,
        HashFn::Crc32KoopmanLo,
        HashFn::Crc32KoopmanHi,
        HashFn::Xor16,
        HashFn::Xor8,
    ];

    /// Its name on the command line and in the report.
    pub const fn name(self) -> &'static str {
        match self {
            HashFn::Crc16 => "crc16",
            HashFn::Crc16Ccitt => "crc16-ccitt",
            HashFn::Crc32Lo => "crc32-lo",
            HashFn::Crc32Hi => "crc32-hi",
            HashFn::Crc32EthLo => "crc32-eth-lo",
            HashFn::Crc32EthHi => "crc32-eth-hi",
            HashFn::Crc32KoopmanLo => "crc32-koopman-lo",
            HashFn::Crc32KoopmanHi => "crc32-koopman-hi",
            HashFn::Xor16 => "xor16",
            HashFn::Xor8 => "xor8",
        }
    }

    /// The 16-bit hash of `bytes` (big-endian 16-bit words).
    pub fn hash16(self, bytes: &[u8]) -> u16 {
        const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_UMTS);
        const CCITT: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740);
        const C32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
        const ETH: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
        const KOOPMAN: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_MEF);
        let lo = |c: u32| (c & 0xFFFF) as u16;
        let hi = |c: u32| (c >> 16) as u16;
        match self {
            HashFn::Crc16 => CRC16.checksum(bytes),
            HashFn::Crc16Ccitt => CCITT.checksum(bytes),
            HashFn::Crc32Lo => lo(C32C.checksum(bytes)),
            HashFn::Crc32Hi => hi(C32C.checksum(bytes)),
            HashFn::Crc32EthLo => lo(ETH.checksum(bytes)),
            HashFn::Crc32EthHi => hi(ETH.checksum(bytes)),
            HashFn::Crc32KoopmanLo => lo(KOOPMAN.checksum(bytes)),
            HashFn::Crc32KoopmanHi => hi(KOOPMAN.checksum(bytes)),
            HashFn::Xor16 => xor16(bytes),
            HashFn::Xor8 => {
                let x = xor16(bytes);
                (x >> 8) ^ (x & 0xFF)
            }
        }
    }
}

/// The big-endian 16-bit words of `bytes` XORed together (an odd last byte is the high
/// half of a word).
fn xor16(bytes: &[u8]) -> u16 {
    bytes.chunks(2).fold(0, |x, w| {
        let hi = w.first().copied().unwrap_or(0);
        let lo = w.get(1).copied().unwrap_or(0);
        x ^ u16::from_be_bytes([hi, lo])
    })
}

/// The hash a prediction models (`--ecmp-hash NAME[,seed=S][,qp]`): a function over the
/// RoCEv2 5-tuple, or with `qp` (E-ECMP) the 5-tuple and the destination QP, with a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcmpHash {
    /// The function.
    pub function: HashFn,
    /// The seed, first in the key as RTAG7's seed word is.
    pub seed: u32,
    /// The RoCE destination QP is part of the key (E-ECMP, switch UDF hashing).
    pub qp: bool,
}

impl Default for EcmpHash {
    fn default() -> Self {
        EcmpHash { function: HashFn::Crc32Lo, seed: 0, qp: false }
    }
}

/// What a hash reads of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashKey {
    /// Source IP.
    pub src: IpAddr,
    /// Destination IP.
    pub dst: IpAddr,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port ([`ROCE_PORT`]).
    pub dport: u16,
    /// RoCE destination QP (read with `qp` only).
    pub dest_qp: u32,
}

/// An IP address as the 32 bits a switch hashes: IPv4 as it is, IPv6 folded by XORing its
/// four 32-bit words (RTAG7's collapsed IPv6 address).
fn ip32(ip: IpAddr) -> u32 {
    match ip {
        IpAddr::V4(v) => u32::from(v),
        IpAddr::V6(v) => {
            let b = u128::from(v);
            (b as u32) ^ ((b >> 32) as u32) ^ ((b >> 64) as u32) ^ ((b >> 96) as u32)
        }
    }
}

impl EcmpHash {
    /// The name and options, as `--ecmp-hash` takes them (`crc32-lo`, `xor16,seed=0x5,qp`);
    /// E-ECMP's default reads `eecmp`.
    pub fn name(&self) -> String {
        if *self == EcmpHash::eecmp() {
            return "eecmp".into();
        }
        let mut s = self.function.name().to_string();
        if self.seed != 0 {
            s += &format!(",seed={:#x}", self.seed);
        }
        if self.qp {
            s += ",qp";
        }
        s
    }

    /// E-ECMP as `--ecmp-hash eecmp` means it: CRC32_LO over the 5-tuple and the QP.
    pub const fn eecmp() -> EcmpHash {
        EcmpHash { function: HashFn::Crc32Lo, seed: 0, qp: true }
    }

    /// The key's bytes: the seed, source IP, destination IP, protocol (UDP, 17), source
    /// port, destination port, then with `qp` the destination QP, each in big-endian 16-bit
    /// words as RTAG7 lays them out (the QP's 24 bits in two words).
    pub fn key_bytes(&self, k: &HashKey) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&self.seed.to_be_bytes());
        b.extend_from_slice(&ip32(k.src).to_be_bytes());
        b.extend_from_slice(&ip32(k.dst).to_be_bytes());
        b.extend_from_slice(&17u16.to_be_bytes());
        b.extend_from_slice(&k.sport.to_be_bytes());
        b.extend_from_slice(&k.dport.to_be_bytes());
        if self.qp {
            b.extend_from_slice(&(k.dest_qp & 0xFF_FFFF).to_be_bytes());
        }
        b
    }

    /// The 16-bit hash of a flow.
    pub fn hash16(&self, k: &HashKey) -> u16 {
        self.function.hash16(&self.key_bytes(k))
    }

    /// The path (0 to `paths` - 1) the hash picks: the 16-bit hash modulo the paths.
    pub fn path(&self, k: &HashKey, paths: u16) -> u16 {
        self.hash16(k) % paths.max(1)
    }
}

impl std::str::FromStr for EcmpHash {
    type Err = String;

    /// `NAME[,seed=S][,qp]`: NAME one of [`HashFn::ALL`]'s names or `eecmp` (CRC32_LO over
    /// the 5-tuple and the QP); S decimal or 0x-hex.
    fn from_str(s: &str) -> Result<Self, String> {
        let names = || {
            let mut v: Vec<&str> = HashFn::ALL.iter().map(|f| f.name()).collect();
            v.push("eecmp");
            v.join(", ")
        };
        let mut parts = s.split(',').map(str::trim);
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let mut h = if name == "eecmp" {
            EcmpHash::eecmp()
        } else {
            let f = HashFn::ALL
                .iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| format!("{name:?} is not a hash this models (one of {})", names()))?;
            EcmpHash { function: *f, ..EcmpHash::default() }
        };
        for opt in parts {
            if opt == "qp" {
                h.qp = true;
            } else if let Some(v) = opt.strip_prefix("seed=") {
                let n = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => u32::from_str_radix(hex, 16),
                    None => v.parse(),
                };
                h.seed = n.map_err(|_| format!("seed {v:?} is not a 32-bit number (decimal or 0x-hex)"))?;
            } else {
                return Err(format!("{opt:?} is not an option of --ecmp-hash (seed=S or qp)"));
            }
        }
        Ok(h)
    }
}

/// The Shannon entropy, in bits, of the distribution the weights make (zero weights add
/// nothing; no weight at all is 0 bits).
pub fn entropy_bits(weights: impl IntoIterator<Item = u64> + Clone) -> f64 {
    let total: f64 = weights.clone().into_iter().map(|w| w as f64).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let h: f64 = weights
        .into_iter()
        .filter(|w| *w > 0)
        .map(|w| {
            let p = w as f64 / total;
            -p * p.log2()
        })
        .sum();
    // One weight gives -0.0 (and rounding may give a hair below 0): none of it is entropy.
    if h > 0.0 {
        h
    } else {
        0.0
    }
}

/// The fewest of `bytes` (sorted, largest first) that add up to `share` of their sum.
pub fn flows_for_share(sorted_desc: &[u64], share: f64) -> u64 {
    let total: u64 = sorted_desc.iter().sum();
    if total == 0 {
        return 0;
    }
    let want = total as f64 * share;
    let mut acc = 0u64;
    for (i, b) in sorted_desc.iter().enumerate() {
        acc += b;
        if acc as f64 >= want {
            return i as u64 + 1;
        }
    }
    sorted_desc.len() as u64
}

/// The busiest over the mean of `loads` (0 without any).
pub fn max_over_mean(loads: &[u64]) -> f64 {
    let total: u64 = loads.iter().sum();
    if total == 0 || loads.is_empty() {
        return 0.0;
    }
    let max = loads.iter().copied().max().unwrap_or(0);
    max as f64 * loads.len() as f64 / total as f64
}

/// A flow as the prediction places it.
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    /// Index into `flows`.
    pub flow: usize,
    /// What the hash reads.
    pub key: HashKey,
    /// Wire bytes.
    pub bytes: u64,
}

/// Place `flows` on `paths` paths with `hash`.
pub fn predict(flows: &[Placed], hash: &EcmpHash, paths: u16, points: Vec<u16>) -> PathPrediction {
    let n = paths.clamp(1, MAX_PATHS);
    let mut loads: Vec<PathLoad> =
        (0..n).map(|path| PathLoad { path, bytes: 0, flows: 0, busy_flows: 0, share: 0.0 }).collect();
    let mut busy: Vec<Vec<(u64, usize)>> = vec![Vec::new(); usize::from(n)];
    let mut placed = Vec::with_capacity(flows.len());
    for f in flows {
        let path = hash.path(&f.key, n);
        placed.push((f.flow, path));
        let p = usize::from(path);
        if let Some(l) = loads.get_mut(p) {
            l.bytes += f.bytes;
            l.flows += 1;
            if f.bytes >= BUSY_MIN_BYTES {
                l.busy_flows += 1;
                if let Some(b) = busy.get_mut(p) {
                    b.push((f.bytes, f.flow));
                }
            }
        }
    }
    let total: u64 = loads.iter().map(|l| l.bytes).sum();
    for l in &mut loads {
        l.share = if total == 0 { 0.0 } else { l.bytes as f64 / total as f64 };
    }
    let bytes: Vec<u64> = loads.iter().map(|l| l.bytes).collect();
    let busiest = loads.iter().max_by_key(|l| (l.bytes, std::cmp::Reverse(l.path))).map_or(0, |l| l.path);
    let mut collisions: Vec<Collision> = busy
        .into_iter()
        .zip(&loads)
        .filter(|(b, _)| b.len() >= 2)
        .map(|(mut b, l)| {
            b.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
            Collision {
                path: l.path,
                busy_flows: b.len() as u64,
                bytes: l.bytes,
                elephants: b.iter().take(NAMED).map(|(_, id)| *id).collect(),
            }
        })
        .collect();
    collisions.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.path.cmp(&b.path)));
    PathPrediction {
        paths: n,
        hash: hash.name(),
        key: (if hash.qp { "5-tuple+qp" } else { "5-tuple" }).into(),
        points,
        flows: flows.len() as u64,
        busy_flows: flows.iter().filter(|f| f.bytes >= BUSY_MIN_BYTES).count() as u64,
        bytes: total,
        idle_paths: loads.iter().filter(|l| l.flows == 0).count() as u32,
        max_over_mean: max_over_mean(&bytes),
        busiest,
        loads,
        collisions,
        placed: {
            placed.sort_unstable();
            placed
        },
    }
}

/// Bytes as the ECMP sections write them: `1.06 MB`, `812 kB` (the text report and the
/// TUI's Fabric screen).
pub fn size_text(b: u64) -> String {
    if b >= 1_000_000 {
        format!("{:.2} MB", b as f64 / 1e6)
    } else {
        format!("{:.0} kB", b as f64 / 1e3)
    }
}

/// Flows beyond the number of uplinks a fit needs: 6. A wrong hash sends each further flow
/// to its uplink's path by chance one time in N (the uplinks), so with 6 more flows than
/// uplinks the 20 hashes tested over 4 uplinks fit by chance about 20 × 4^-6 = 0.5% of the
/// time (fewer with more uplinks).
pub const FIT_MIN_FLOWS_OVER_UPLINKS: usize = 6;

/// The modelled hashes (seed 0, with and without the QP) under which a one-to-one map of
/// the `n` paths to the uplinks reproduces where each flow was seen: `flows` holds each
/// flow's key and the index (0 to `n` - 1) of the uplink that carried it.
pub fn fitting_hashes(flows: &[(HashKey, usize)], n: u16) -> HashFit {
    let candidates: Vec<EcmpHash> = [false, true]
        .into_iter()
        .flat_map(|qp| HashFn::ALL.iter().map(move |f| EcmpHash { function: *f, seed: 0, qp }))
        .collect();
    let uplinks_seen = {
        let mut u: Vec<usize> = flows.iter().map(|f| f.1).collect();
        u.sort_unstable();
        u.dedup();
        u.len()
    };
    let decided = n >= 2 && uplinks_seen >= 2 && flows.len() >= usize::from(n) + FIT_MIN_FLOWS_OVER_UPLINKS;
    let fits = |h: &EcmpHash| {
        // path -> uplink, and uplink -> path: both must stay functions.
        let mut to_uplink: Vec<Option<usize>> = vec![None; usize::from(n)];
        let mut to_path: std::collections::HashMap<usize, u16> = std::collections::HashMap::new();
        flows.iter().all(|(k, up)| {
            let p = h.path(k, n);
            let slot = to_uplink.get_mut(usize::from(p));
            let path_ok = match slot {
                Some(Some(u)) => *u == *up,
                Some(s) => {
                    *s = Some(*up);
                    true
                }
                None => false,
            };
            path_ok && *to_path.entry(*up).or_insert(p) == p
        })
    };
    HashFit {
        flows: flows.len() as u64,
        tested: candidates.len() as u32,
        decided,
        fitting: if decided {
            candidates.iter().filter(|h| fits(h)).map(EcmpHash::name).collect()
        } else {
            Vec::new()
        },
    }
}

/// Whether a prediction makes `ecmp_imbalance`: the busiest path over [`IMBALANCE_RATIO`]
/// times the mean, with two or more busy flows on it (a collision, not one big flow).
pub fn predicted_imbalance(p: &PathPrediction) -> Option<&Collision> {
    if p.paths < 2 || p.max_over_mean <= IMBALANCE_RATIO {
        return None;
    }
    p.collisions.iter().find(|c| c.path == p.busiest)
}

/// Whether measured uplinks make `ecmp_imbalance`: two or more uplinks, the busiest over
/// [`IMBALANCE_RATIO`] times the mean, with two or more busy flows on it.
pub fn measured_imbalance(u: &UplinkReport) -> Option<&UplinkLoad> {
    if u.uplinks.len() < 2 || u.max_over_mean <= IMBALANCE_RATIO {
        return None;
    }
    u.uplinks.iter().find(|l| Some(l.point) == u.busiest && l.busy_flows >= 2)
}

/// Whether `name` (an `--uplinks` entry) names capture point `point_name`: the same name, or
/// the name without its extension (`up1` for `up1.pcap`).
pub fn names_point(name: &str, point_name: &str) -> bool {
    name == point_name
        || std::path::Path::new(point_name).file_stem().is_some_and(|s| s.to_string_lossy() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u16) -> HashKey {
        HashKey {
            src: IpAddr::from([10, 0, 0, 1 + (i % 7) as u8]),
            dst: IpAddr::from([10, 0, 1, 1 + (i % 5) as u8]),
            sport: 49152 + i.wrapping_mul(7919) % 16384,
            dport: ROCE_PORT,
            dest_qp: 0x100 + u32::from(i),
        }
    }

    /// A placement made by CRC16 over 4 uplinks (its paths wired to the uplinks in another
    /// order) is fitted by CRC16 and by few or no other hashes; a placement by no hash is
    /// fitted by none; with too few flows nothing is decided.
    #[test]
    fn the_hash_that_placed_the_flows_fits_their_uplinks() {
        let h = EcmpHash { function: HashFn::Crc16, seed: 0, qp: false };
        let wiring = [2usize, 0, 3, 1];
        let flows: Vec<(HashKey, usize)> =
            (0..24).map(|i| (key(i), wiring[usize::from(h.path(&key(i), 4))])).collect();
        let fit = fitting_hashes(&flows, 4);
        assert!(fit.decided);
        assert_eq!((fit.flows, fit.tested), (24, 20));
        assert!(fit.fitting.contains(&"crc16".to_string()), "{fit:?}");
        assert!(fit.fitting.len() <= 2, "a placement fits few hashes: {fit:?}");
        // Round robin is no hash's placement.
        let rr: Vec<(HashKey, usize)> = (0..24).map(|i| (key(i), usize::from(i % 4))).collect();
        let fit = fitting_hashes(&rr, 4);
        assert!(fit.decided && fit.fitting.is_empty(), "{fit:?}");
        // 9 flows over 4 uplinks: too few to tell.
        let fit = fitting_hashes(flows.get(..9).unwrap(), 4);
        assert!(!fit.decided && fit.fitting.is_empty(), "{fit:?}");
    }

    #[test]
    fn crcs_give_their_catalogue_check_values() {
        // The check value of each catalogue entry: the CRC of "123456789".
        let c32 = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
        assert_eq!(c32.checksum(b"123456789"), 0xCBF4_3926);
        let check = b"123456789";
        assert_eq!(HashFn::Crc16.hash16(check), 0xFEE8);
        assert_eq!(HashFn::Crc16Ccitt.hash16(check), 0x29B1);
        assert_eq!(HashFn::Crc32EthLo.hash16(check), 0x3926);
        assert_eq!(HashFn::Crc32EthHi.hash16(check), 0xCBF4);
        assert_eq!(HashFn::Crc32Lo.hash16(check), 0x9283); // CRC-32C 0xE3069283
        assert_eq!(HashFn::Crc32Hi.hash16(check), 0xE306);
        assert_eq!(HashFn::Crc32KoopmanLo.hash16(check), 0x2F51); // CRC-32/MEF 0xD2C22F51
        assert_eq!(HashFn::Crc32KoopmanHi.hash16(check), 0xD2C2);
    }

    #[test]
    fn xor_folds_the_key_words() {
        assert_eq!(HashFn::Xor16.hash16(&[0x12, 0x34, 0x56, 0x78]), 0x1234 ^ 0x5678);
        assert_eq!(HashFn::Xor16.hash16(&[0x12, 0x34, 0x56]), 0x1234 ^ 0x5600);
        assert_eq!(HashFn::Xor8.hash16(&[0x12, 0x34, 0x56, 0x78]), 0x44 ^ 0x4C);
        // Two flows whose ports differ in one bit land one bit apart.
        let h = EcmpHash { function: HashFn::Xor16, seed: 0, qp: false };
        let k = |sport| HashKey {
            src: IpAddr::from([10, 0, 0, 1]),
            dst: IpAddr::from([10, 0, 0, 2]),
            sport,
            dport: ROCE_PORT,
            dest_qp: 0x11,
        };
        assert_eq!(h.hash16(&k(49152)) ^ h.hash16(&k(49153)), 1);
    }

    #[test]
    fn the_key_is_the_seed_then_the_five_tuple_then_the_qp() {
        let k = HashKey {
            src: IpAddr::from([10, 0, 0, 1]),
            dst: IpAddr::from([10, 0, 0, 2]),
            sport: 0xC000,
            dport: ROCE_PORT,
            dest_qp: 0x0012_3456,
        };
        let h = EcmpHash { function: HashFn::Crc32Lo, seed: 0xA5A5_0001, qp: false };
        assert_eq!(h.key_bytes(&k), [0xA5, 0xA5, 0, 1, 10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0xC0, 0, 0x12, 0xB7]);
        let q = EcmpHash { qp: true, ..h };
        assert_eq!(q.key_bytes(&k).get(18..), Some(&[0, 0x12, 0x34, 0x56][..]));
        // IPv6 folds its four words into one.
        let v6 = HashKey { src: "::1:0:0:2".parse().unwrap(), ..k };
        assert_eq!(h.key_bytes(&v6).get(4..8), Some(&[0, 1, 0, 2][..]));
        // The seed changes the hash; the QP only with `qp`.
        assert_ne!(h.hash16(&k), EcmpHash { seed: 1, ..h }.hash16(&k));
        assert_eq!(h.hash16(&k), h.hash16(&HashKey { dest_qp: 7, ..k }));
        assert_ne!(q.hash16(&k), q.hash16(&HashKey { dest_qp: 7, ..k }));
    }

    #[test]
    fn hash_names_parse_and_print() {
        let h: EcmpHash = "crc16-ccitt,seed=0x10,qp".parse().unwrap();
        assert_eq!(h, EcmpHash { function: HashFn::Crc16Ccitt, seed: 16, qp: true });
        assert_eq!(h.name(), "crc16-ccitt,seed=0x10,qp");
        assert_eq!("eecmp".parse::<EcmpHash>().unwrap(), EcmpHash::eecmp());
        assert_eq!(EcmpHash::eecmp().name(), "eecmp");
        assert_eq!("XOR16, seed=7".parse::<EcmpHash>().unwrap().seed, 7);
        for f in HashFn::ALL {
            assert_eq!(f.name().parse::<EcmpHash>().unwrap().function, *f);
        }
        assert!("md5".parse::<EcmpHash>().unwrap_err().contains("crc16-ccitt"));
        assert!("crc16,seed=x".parse::<EcmpHash>().is_err());
        assert!("crc16,seed=0x1ffffffff".parse::<EcmpHash>().is_err());
        assert!("crc16,fast".parse::<EcmpHash>().is_err());
    }

    #[test]
    fn entropy_is_in_bits_of_the_weights() {
        assert_eq!(entropy_bits(Vec::<u64>::new()), 0.0);
        assert_eq!(entropy_bits([5u64]), 0.0);
        assert!(entropy_bits([5u64]).is_sign_positive(), "0, not -0, in the report");
        assert!((entropy_bits([1u64, 1]) - 1.0).abs() < 1e-12);
        assert!((entropy_bits([3u64; 8]) - 3.0).abs() < 1e-12);
        // Zero weights add nothing; unequal weights give less than log2(n).
        assert!((entropy_bits([4u64, 0, 4]) - 1.0).abs() < 1e-12);
        let skew = entropy_bits([90u64, 10]);
        assert!((skew - 0.468_995_593_589_281).abs() < 1e-9, "{skew}");
    }

    #[test]
    fn the_flows_for_a_share_count_the_largest_first() {
        assert_eq!(flows_for_share(&[], 0.8), 0);
        assert_eq!(flows_for_share(&[80, 10, 10], 0.8), 1);
        assert_eq!(flows_for_share(&[79, 11, 10], 0.8), 2);
        assert_eq!(flows_for_share(&[1; 10], 0.8), 8);
        assert_eq!(max_over_mean(&[2, 1, 1, 0]), 2.0);
        assert_eq!(max_over_mean(&[0, 0]), 0.0);
    }

    fn placed(flow: usize, sport: u16, bytes: u64) -> Placed {
        let key = HashKey {
            src: IpAddr::from([10, 0, 1, 1]),
            dst: IpAddr::from([10, 0, 2, 1]),
            sport,
            dport: ROCE_PORT,
            dest_qp: 0x100 + flow as u32,
        };
        Placed { flow, key, bytes }
    }

    #[test]
    fn one_port_puts_every_flow_on_one_path_and_the_qp_spreads_them() {
        let flows: Vec<Placed> = (0..8).map(|i| placed(i, 49152, 2 << 20)).collect();
        let p = predict(&flows, &EcmpHash::default(), 4, vec![0]);
        assert_eq!(p.loads.iter().filter(|l| l.flows > 0).count(), 1);
        assert_eq!(p.max_over_mean, 4.0);
        assert_eq!(p.idle_paths, 3);
        let c = predicted_imbalance(&p).expect("a collision on the busiest path");
        assert_eq!((c.busy_flows, c.elephants.len()), (8, NAMED));
        // E-ECMP hashes the QPs apart: eight QPs 0x100..0x107 over four paths.
        let e = predict(&flows, &EcmpHash::eecmp(), 4, vec![0]);
        assert!(e.loads.iter().filter(|l| l.flows > 0).count() > 1, "{:?}", e.loads);
        assert!(e.max_over_mean < p.max_over_mean);
    }

    #[test]
    fn imbalance_needs_a_collision_on_the_busiest_path() {
        // Two elephants on four paths, apart: the busiest is 2x the mean, but nothing
        // collides (fewer flows than paths leave some idle whatever the hash).
        let h = EcmpHash { function: HashFn::Xor16, seed: 0, qp: false };
        let a = placed(0, 49152, 4 << 20);
        let b = placed(1, 49153, 4 << 20);
        assert_ne!(h.path(&a.key, 4), h.path(&b.key, 4));
        let p = predict(&[a, b], &h, 4, vec![0]);
        assert_eq!(p.max_over_mean, 2.0);
        assert!(predicted_imbalance(&p).is_none());
        // The same two on one port: a collision, 4x the mean.
        let p = predict(&[a, placed(1, 49152, 4 << 20)], &h, 4, vec![0]);
        assert_eq!(p.max_over_mean, 4.0);
        assert!(predicted_imbalance(&p).is_some());
        // Mice colliding do not count: under 1 MiB each.
        let p = predict(&[placed(0, 49152, 1000), placed(1, 49152, 1000)], &h, 4, vec![0]);
        assert!(p.collisions.is_empty() && predicted_imbalance(&p).is_none());
        // One path: nothing to balance.
        let p = predict(&[a, placed(1, 49152, 4 << 20)], &h, 1, vec![0]);
        assert!(predicted_imbalance(&p).is_none());
    }

    #[test]
    fn the_threshold_is_strictly_above_one_and_a_half() {
        let u = |bytes: &[u64], busy: u64| UplinkReport {
            uplinks: bytes
                .iter()
                .enumerate()
                .map(|(i, b)| UplinkLoad {
                    point: i as u16,
                    name: format!("up{i}"),
                    bytes: *b,
                    share: 0.0,
                    busy_flows: if i == 0 { busy } else { 1 },
                    elephants: Vec::new(),
                    bins: Vec::new(),
                })
                .collect(),
            unmatched: Vec::new(),
            hash_fit: HashFit::default(),
            max_over_mean: max_over_mean(bytes),
            busiest: Some(0),
            bin_ns: 0,
            max_over_mean_bins: Vec::new(),
        };
        // 3, 2, 2, 1: 1.5x the mean, not more; 4, 2, 1, 1: 2x.
        assert_eq!(max_over_mean(&[3, 2, 2, 1]), 1.5);
        assert!(measured_imbalance(&u(&[3, 2, 2, 1], 3)).is_none());
        assert!(measured_imbalance(&u(&[4, 2, 1, 1], 3)).is_some());
        // One elephant alone on the busiest: its size, not a collision.
        assert!(measured_imbalance(&u(&[4, 2, 1, 1], 1)).is_none());
        assert!(measured_imbalance(&u(&[4], 3)).is_none(), "one uplink");
    }

    #[test]
    fn uplink_names_match_points_with_or_without_the_extension() {
        assert!(names_point("up1.pcap", "up1.pcap"));
        assert!(names_point("up1", "up1.pcap"));
        assert!(!names_point("up", "up1.pcap"));
        assert!(names_point("ERSPAN session 7", "ERSPAN session 7"));
    }
}
